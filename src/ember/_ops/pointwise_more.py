"""More pointwise ops: rounded division and remainders, atan2, clamp, where, maximum/minimum,
lerp, addcmul/addcdiv, comparisons, closeness tests, logical and bitwise ops.

Comparisons, logical and bitwise ops are not differentiable: they return tensors without
history. Their in-place forms on floating tensors record a zero-gradient node, as PyTorch does
for ``lt_``/``eq_``..., except the logical ones, which leave the history alone.
"""
from __future__ import annotations

import numpy as np

from .. import _chalf
from .. import _dtype as D
from .. import _layout as _L
from .. import _scalar as S
from .._tensor import Tensor, Version, _make, _scalar_name, store
from ..autograd.grad_mode import STATE
from ._dispatch import (
    HALF_NP,
    _cast_result,
    _check_shape,
    binary,
    broadcast_failed,
    check_broadcast,
    check_inplace,
    check_overlap,
    commit,
    inplace,
    promoted,
    records,
    to_operand,
)
from ._out import FOUND, with_out
from ._parser import (
    NUMBERS,
    binary_dunder,
    check_operands,
    invalid_combination,
    must_be,
    tensor_args,
)
from ._registry import Op, method, ns_fn, wrap_one, wrap_outputs
from ._uint import check as uint_check
from .pointwise import _not_impl, _type_name, _zero_grad

__all__ = [
    "addcdiv",
    "addcmul",
    "allclose",
    "arctan2",
    "atan2",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "clamp",
    "clamp_max",
    "clamp_min",
    "clip",
    "eq",
    "equal",
    "floor_divide",
    "fmod",
    "ge",
    "greater",
    "greater_equal",
    "gt",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "le",
    "lerp",
    "less",
    "less_equal",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "lt",
    "maximum",
    "minimum",
    "ne",
    "not_equal",
    "remainder",
    "where",
]


# ---- shared helpers -----------------------------------------------------------------------

def _promote_all(operands, int_to_float: bool = False):
    """The operands' arrays cast to their common PyTorch result dtype (None stays None)."""
    rt = D.result_type_of([o for o in operands if o is not None])
    if int_to_float and not (rt.is_floating_point or rt.is_complex):
        rt = D.get_default_dtype()
    npt = rt.np
    out = []
    for o in operands:
        if o is None:
            out.append(None)
        elif isinstance(o, Tensor):
            d = o._data
            if d.dtype != npt:   # (NumPy cannot cast complex32 pairs: ember._chalf does)
                d = _chalf.cast(d, npt) if rt.is_complex and (
                    npt is _chalf.CH or d.dtype == _chalf.CH) else d.astype(npt)
            out.append(d)
        elif npt is _chalf.CH:
            out.append(_chalf.from_values(_chalf.number(o)))
        elif npt.kind in "iub" or rt is D.bfloat16:
            out.append(np.asarray(o).astype(npt))   # out-of-range ints wrap, as in PyTorch
        else:
            # a NumPy scalar is a Python number to PyTorch (NumPy would promote to its width)
            out.append(D.py_scalar(o) if isinstance(o, np.generic) else o)
    return out, rt


def nary(op: Op, operands, params=(), int_to_float: bool = False):
    """Call an op of several tensor/scalar operands with PyTorch's type promotion."""
    operands = tuple(o if o is None or isinstance(o, Tensor) else to_operand(o)
                     for o in operands)
    datas, _ = _promote_all(operands, int_to_float)
    try:
        out = op.fwd(*datas, *params)
    except ValueError:
        check_broadcast(*[np.shape(d) for d in datas if d is not None])
        raise
    except TypeError as e:   # NumPy refused complex32 pairs (or a real type error)
        out = _chalf.refused(e, op, datas, params)
    return wrap_outputs(op, operands, params, _layout(out, operands))


_BINARY_DUNDERS = frozenset((
    "__floordiv__", "__rfloordiv__", "__ifloordiv__", "__mod__", "__rmod__", "__imod__",
    "__and__", "__rand__", "__iand__", "__or__", "__ror__", "__ior__", "__xor__", "__rxor__",
    "__ixor__"))


def _layout(out, operands):
    """An elementwise result in TensorIterator's layout for ``operands`` (tensors, numbers;
    None for an absent one), unless all are row-major like the result (nothing to do)."""
    if type(out) is not np.ndarray or out.ndim < 2:
        return out
    if 1 not in out.shape and out.size:
        # row-major operands (broadcast or not; numbers aside) give a row-major result, which
        # NumPy's is: a size-1 dim of the result is the only place their strides could decide
        for o in operands:
            if (type(o) is Tensor or isinstance(o, Tensor)) and not o._data.flags.c_contiguous:
                break
        else:
            return out
    return _L.iter_result(out, [o._data if isinstance(o, Tensor) else o for o in operands
                                if o is not None])


def nary_(op: Op, self: Tensor, others, params=(), int_to_float: bool = False) -> Tensor:
    """The in-place form of ``nary``: result cast into ``self`` (never to a lower category)."""
    others = tuple(o if o is None or isinstance(o, Tensor) else to_operand(o) for o in others)
    check_inplace(self, others)
    check_overlap(self, others)
    inputs = (self,) + others
    datas, rt = _promote_all(inputs, int_to_float)
    try:
        out = np.asarray(op.fwd(*datas, *params))
    except ValueError as e:
        broadcast_failed(e, *[np.shape(d) for d in datas if d is not None])
        raise
    except TypeError as e:   # NumPy refused complex32 pairs (or a real type error)
        out = np.asarray(_chalf.refused(e, op, datas, params))
    _check_shape(self, out)
    out = _cast_result(self, out, rt.np)
    return commit(op, self, inputs, params, out, records(inputs))


def _call2(ufunc, a, b):
    """``ufunc(a, b)`` with PyTorch's error when the shapes do not broadcast."""
    try:
        return ufunc(a, b)
    except ValueError as e:
        broadcast_failed(e, np.shape(a), np.shape(b))
        raise
    except TypeError:   # NumPy refused complex32 pairs (or a real type error)
        if not (_chalf.is_ch(a) or _chalf.is_ch(b)):
            raise
        return _chalf.ufunc(ufunc, a, b)


def _nodiff(out) -> Tensor:
    """A result outside autograd (comparisons, logical and bitwise ops)."""
    t = _make(np.asarray(out), Version(), False, None)
    if STATE.inference:
        t._extra().inference = True
    return t


def _write(self: Tensor, out) -> Tensor:
    """Write a non-differentiable result into ``self`` (history untouched), bump its version."""
    out = np.asarray(out)
    _check_shape(self, out)
    store(self, out)
    self._vc.v += 1
    return self


def _int_zero_check(a, b) -> None:
    for x in (a, b):
        if isinstance(x, np.ndarray) and x.dtype.kind not in "iub":
            return
        if isinstance(x, float):
            return
    if np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


# ---- rounded division, remainder, fmod ------------------------------------------------------

def _bool_gap(kernel: str, a, b) -> None:
    """PyTorch compiles these kernels for numbers, not Bool: its dispatch on the operands'
    common dtype raises NotImplementedError when both are bool."""
    if (type(a) is bool or getattr(a, "dtype", None) == np.bool_) and (
            type(b) is bool or getattr(b, "dtype", None) == np.bool_):
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _floor_div_np(a, b):
    _bool_gap("div_floor_cpu", a, b)
    _int_zero_check(a, b)
    return np.floor_divide(a, b)


def _trunc_div_np(a, b):
    _bool_gap("div_trunc_cpu", a, b)
    _int_zero_check(a, b)
    rt = np.result_type(a, b)
    if rt.kind in "fc":
        return np.trunc(np.true_divide(a, b)).astype(rt, copy=False)
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
    return np.where(fix, q + 1, q).astype(q.dtype, copy=False)


def _rdiv_fwd(a, b, mode):
    return _floor_div_np(a, b) if mode == "floor" else _trunc_div_np(a, b)


DIV_MODE = Op("div_mode", _rdiv_fwd, _zero_grad, elementwise=True, node="DivBackward2")


def _check_mode(mode) -> None:
    if mode not in ("floor", "trunc"):
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{mode}'")


def rounded_div(input, other, rounding_mode) -> Tensor:
    """``torch.div(..., rounding_mode='floor'|'trunc')``: zero gradient (DivBackward2)."""
    _check_mode(rounding_mode)
    return binary(DIV_MODE, input, other, (rounding_mode,))


def rounded_div_(self, other, rounding_mode) -> Tensor:
    _check_mode(rounding_mode)
    return inplace(DIV_MODE, self, (other,), (rounding_mode,))


def _not_implemented(aten: str):
    def vjp(ns, g, need, *a):
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")
    return vjp


_NOT_IMPL = "ember::autograd::NotImplemented"
FLOOR_DIV = Op("floor_divide", lambda a, b: _floor_div_np(a, b),
               _not_implemented("floor_divide"), node=_NOT_IMPL)
FLOOR_DIV_ = Op("floor_divide_", lambda a, b: _floor_div_np(a, b),
                _not_implemented("floor_divide_"), node=_NOT_IMPL)


def floor_divide(input, other, *, out=None) -> Tensor:
    """``torch.floor_divide``: rounds toward minus infinity; no derivative."""
    if out is not None:
        return with_out(floor_divide, out, (input, other), overlap=True,
                        differentiable=False)
    if any(isinstance(x, (Tensor, complex)) for x in (input, other)):
        rt = D.result_type_of([to_operand(x) for x in (input, other)])
        if rt.is_complex:
            raise _not_impl("div_floor_cpu", rt)
    return binary(FLOOR_DIV, input, other)


def _floor_divide_(self: Tensor, other) -> Tensor:
    rt = D.result_type_of((self, to_operand(other)))
    if rt.is_complex:
        raise _not_impl("div_floor_cpu", rt)
    return inplace(FLOOR_DIV_, self, (other,))


ns_fn("floor_div", np.floor_divide, lambda a, b: rounded_div(a, b, "floor"))
ns_fn("trunc_div", _trunc_div_np, lambda a, b: rounded_div(a, b, "trunc"))


def _remainder_np(a, b):
    _bool_gap("remainder_cpu", a, b)
    _int_zero_check(a, b)
    return np.remainder(a, b)


def _fmod_np(a, b):
    _bool_gap("fmod_cpu", a, b)
    _int_zero_check(a, b)
    return np.fmod(a, b)


def _remainder_vjp(ns, g, need, a, b):
    return (g if need[0] else None, -g * ns.floor_div(a, b) if need[1] else None)


def _fmod_vjp(ns, g, need, a, b):
    return (g if need[0] else None, -g * ns.trunc_div(a, b) if need[1] else None)


REMAINDER_S = Op("remainder", _remainder_np, _remainder_vjp, saves=(0, 1), elementwise=True)
REMAINDER = Op("remainder_t", _remainder_np, _remainder_vjp, saves=(0, 1), elementwise=True,
               node="RemainderBackward1")
REMAINDER_SB = Op("remainder_sb", _remainder_np, _not_implemented("remainder"), node=_NOT_IMPL)
FMOD_S = Op("fmod", _fmod_np, _fmod_vjp, saves=(0, 1), elementwise=True)
FMOD = Op("fmod_t", _fmod_np, _fmod_vjp, saves=(0, 1), elementwise=True, node="FmodBackward1")


def _check_real(name, *xs) -> None:
    for x in xs:
        if isinstance(x, Tensor) and x.is_complex():
            raise _not_impl(name, x.dtype)


def remainder(input, other, *, out=None) -> Tensor:
    """``torch.remainder``: Python's modulus (sign of the divisor)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise invalid_combination("remainder", (input, other), {"out": out})
    if type(other) not in NUMBERS and not isinstance(other, Tensor) or \
            type(input) not in NUMBERS and not isinstance(input, Tensor):
        check_operands("remainder", (input, other), {"out": out})
    if out is not None:
        return with_out(remainder, out, (input, other), overlap=True)
    _check_real("remainder_cpu", input, other)
    if not isinstance(input, Tensor):
        return binary(REMAINDER_SB, input, other)
    return binary(REMAINDER if isinstance(other, Tensor) else REMAINDER_S, input, other)


def fmod(input, other, *, out=None) -> Tensor:
    """``torch.fmod``: C's fmod (sign of the dividend)."""
    if not isinstance(input, Tensor):
        raise invalid_combination("fmod", (input, other), {"out": out})
    if type(other) not in NUMBERS and not isinstance(other, Tensor):
        check_operands("fmod", (input, other), {"out": out})
    if out is not None:
        return with_out(fmod, out, (input, other), overlap=True)
    _check_real("fmod_cpu", input, other)
    return binary(FMOD if isinstance(other, Tensor) else FMOD_S, input, other)


# ---- atan2 --------------------------------------------------------------------------------

def _atan2_vjp(ns, g, need, a, b):
    rec = 1 / (a * a + b * b)
    rec = ns.where(ns.data_fn(np.isinf, rec), 0, rec)   # PyTorch's finite gradient at (0, 0)
    return (g * b * rec if need[0] else None, g * -a * rec if need[1] else None)


ATAN2 = Op("atan2", np.arctan2, _atan2_vjp, saves=(0, 1), elementwise=True)


def atan2(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``torch.atan2``: the angle of (other, input); integers become the default float."""
    if out is not None:
        return with_out(atan2, out, (input, other), overlap=True)
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        tensor_args(atan2, input=input, other=other)
    _check_real("atan2_cpu", input, other)
    return binary(ATAN2, input, other, int_to_float=True)


arctan2 = atan2


# ---- maximum / minimum ----------------------------------------------------------------------

def _max_vjp(ns, g, need, a, b):
    half = ns.where(a == b, g / 2, g)
    return (ns.where(a < b, 0, half) if need[0] else None,
            ns.where(a > b, 0, half) if need[1] else None)


def _min_vjp(ns, g, need, a, b):
    half = ns.where(a == b, g / 2, g)
    return (ns.where(a > b, 0, half) if need[0] else None,
            ns.where(a < b, 0, half) if need[1] else None)


MAXIMUM = Op("maximum", np.maximum, _max_vjp, saves=(0, 1), elementwise=True)
MINIMUM = Op("minimum", np.minimum, _min_vjp, saves=(0, 1), elementwise=True)


def maximum(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``torch.maximum``: elementwise max, NaN-propagating; ties split the gradient."""
    if out is not None:
        return with_out(maximum, out, (input, other), overlap=True)
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        tensor_args(maximum, input=input, other=other)
    if input.is_complex() or other.is_complex():
        raise RuntimeError("maximum not implemented for complex tensors.")
    return binary(MAXIMUM, input, other)


def minimum(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``torch.minimum``."""
    if out is not None:
        return with_out(minimum, out, (input, other), overlap=True)
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        tensor_args(minimum, input=input, other=other)
    if input.is_complex() or other.is_complex():
        raise RuntimeError("minimum not implemented for complex tensors.")
    return binary(MINIMUM, input, other)


# ---- clamp ----------------------------------------------------------------------------------

def _clamp_fwd(x, lo, hi):
    if lo is not None:
        x = np.maximum(x, lo)
    if hi is not None:
        x = np.minimum(x, hi)
    return np.asarray(x)


def _clamp_s_fwd(x, lo, hi):
    return _clamp_fwd(x, lo, hi)


def _clamp_s_vjp(ns, g, need, x, lo, hi):
    if lo is not None and hi is not None:
        return (ns.where((x >= lo) & (x <= hi), g, 0),)
    return (ns.where(x >= lo, g, 0) if lo is not None else ns.where(x <= hi, g, 0),)


def _clamp_t_vjp(ns, g, need, x, lo, hi):
    gx = glo = ghi = None
    if lo is not None and hi is not None:
        if need[0]:
            gx = ns.where((x >= lo) & (x <= hi), g, 0)
        if need[1]:
            glo = ns.where((x < lo) & (lo < hi), g, 0)
        if need[2]:
            ghi = ns.where((x > hi) | (hi < lo), g, 0)
    elif lo is not None:
        gx = ns.where(x >= lo, g, 0) if need[0] else None
        glo = ns.where(x < lo, g, 0) if need[1] else None
    else:
        gx = ns.where(x <= hi, g, 0) if need[0] else None
        ghi = ns.where(x > hi, g, 0) if need[2] else None
    return gx, glo, ghi


CLAMP_S = Op("clamp", _clamp_s_fwd, _clamp_s_vjp, saves=(0,), elementwise=True,
             node="ClampBackward1")
CLAMP_T = Op("clamp_t", _clamp_fwd, _clamp_t_vjp, saves=(0, 1, 2), elementwise=True,
             node="ClampBackward0")


def _min_fwd(x, lo):
    return np.maximum(x, lo)


def _max_fwd(x, hi):
    return np.minimum(x, hi)


def _cmin_vjp(ns, g, need, x, lo):
    return (ns.where(x >= lo, g, 0) if need[0] else None,
            ns.where(x < lo, g, 0) if len(need) > 1 and need[1] else None)


def _cmax_vjp(ns, g, need, x, hi):
    return (ns.where(x <= hi, g, 0) if need[0] else None,
            ns.where(x > hi, g, 0) if len(need) > 1 and need[1] else None)


def _s_vjp(vjp):
    return lambda ns, g, need, x, b: vjp(ns, g, need, x, b)[:1]


CLAMP_MIN_S = Op("clamp_min", _min_fwd, _s_vjp(_cmin_vjp), saves=(0,), elementwise=True,
                 node="ClampMinBackward0")
CLAMP_MIN_T = Op("clamp_min_t", _min_fwd, _cmin_vjp, saves=(0, 1), elementwise=True,
                 node="ClampMinBackward1")
CLAMP_MAX_S = Op("clamp_max", _max_fwd, _s_vjp(_cmax_vjp), saves=(0,), elementwise=True,
                 node="ClampMaxBackward0")
CLAMP_MAX_T = Op("clamp_max_t", _max_fwd, _cmax_vjp, saves=(0, 1), elementwise=True,
                 node="ClampMaxBackward1")


def _clamp_args(input, min, max):
    if input.is_complex():
        raise NotImplementedError("clamp is not supported for complex types")
    if min is None and max is None:
        raise RuntimeError("ember.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        _check_tensor_bounds(input, (min, max))
        return True
    _check_scalar_bounds(input, (min, max), "clamp")
    return False


def _check_tensor_bounds(input, bounds) -> None:
    """A complex tensor bound: PyTorch's kernel (max only is a minimum, min only a maximum) has
    no complex implementation."""
    if any(isinstance(b, Tensor) and b.is_complex() for b in bounds):
        kernel = ("minimum_cpu" if bounds[0] is None else "maximum_cpu" if bounds[1] is None
                  else "clamp_cpu")
        raise _not_impl(kernel, D.result_type_of([input] + [b for b in bounds if b is not None]))


def _check_scalar_bounds(input, bounds, kernel) -> None:
    """PyTorch's refusals of number bounds: a complex one (NumPy's complex128 included; a float
    tensor's kernel fails converting it to double) and bool bounds on a bool tensor."""
    bounds = tuple(D.py_scalar(b) if isinstance(b, np.generic) else b for b in bounds)
    if any(isinstance(b, complex) for b in bounds):
        if input.is_floating_point() and kernel == "clamp":
            raise RuntimeError("value cannot be converted to type double without overflow")
        raise NotImplementedError("clamp is not supported for complex types")
    if input._data.dtype == np.bool_ and all(
            b is None or isinstance(b, bool) for b in bounds):
        if kernel == "clamp":
            kernel = ("clamp_max" if bounds[0] is None else
                      "clamp_min" if bounds[1] is None else "clamp")
        raise _not_impl(f"{kernel}_scalar_cpu", D.bool)
    # each bound is converted to the result dtype with PyTorch's overflow check
    rt = D.result_type_of([input] + [b for b in bounds if b is not None])
    for b in bounds:
        if b is not None:
            S.to_dtype(b, rt)


def clamp(input: Tensor, min=None, max=None, *, out=None) -> Tensor:
    """``torch.clamp``: scalar bounds (ClampBackward1) or tensor bounds (ClampBackward0)."""
    if out is not None:
        return with_out(clamp, out, (input, min, max), overlap=True,
                        dtype="cast" if _clamp_args(input, min, max) else FOUND)
    if type(min) is float and type(max) is float:
        d = input._data
        if type(d) is np.ndarray and ((dt := d.dtype) is _F64 or dt is _F32 and (
                _F32_LO <= min <= _F32_HI and _F32_LO <= max <= _F32_HI)):
            # the commonest call: float tensor, two finite number bounds that fit its dtype
            r = CLAMP_S.fwd(d, min, max)
            if r.strides != d.strides:   # (the input's strides, kept: nothing to lay out)
                r = _layout(r, (input,))
            return wrap_one(CLAMP_S, input, (min, max), r)
    if _clamp_args(input, min, max):
        return nary(CLAMP_T, (input, min, max))
    return _clamp_scalar(input, min, max)


_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_F32_HI = float(np.finfo(np.float32).max)
_F32_LO = -_F32_HI


def _clamp_scalar(input, lo, hi):
    (x, lo2, hi2), _ = _promote_all((input, lo, hi))
    return wrap_outputs(CLAMP_S, (input,), (lo2, hi2), _layout(CLAMP_S.fwd(x, lo2, hi2),
                                                               (input,)))


def _clamp_(self: Tensor, min=None, max=None) -> Tensor:
    if _clamp_args(self, min, max):
        return nary_(CLAMP_T, self, (min, max))
    check_inplace(self)
    (x, lo2, hi2), rt = _promote_all((self, min, max))
    if rt._cat > self.dtype._cat:
        raise RuntimeError(f"result type {_type_name(rt)} can't be cast to the desired output "
                           f"type {_scalar_name(self.dtype)}")
    out = _cast_result(self, CLAMP_S.fwd(x, lo2, hi2), rt.np)
    return commit(CLAMP_S, self, (self,), (lo2, hi2), out, records((self,)))


clip = clamp


def _bound_op(op_s, op_t, name):
    def f(input: Tensor, bound, *, out=None) -> Tensor:
        if not isinstance(input, Tensor):
            raise invalid_combination(name, (input, bound), {"out": out})
        if type(bound) not in NUMBERS and not isinstance(bound, Tensor):
            check_operands(name, (input, bound), {"out": out})
        if out is not None:
            return with_out(f, out, (input, bound), overlap=True,
                            dtype="cast" if isinstance(bound, Tensor) else FOUND)
        if input.is_complex():
            raise NotImplementedError("clamp is not supported for complex types")
        if isinstance(bound, Tensor):
            _check_tensor_bounds(input, (None, bound) if name == "clamp_max" else (bound, None))
            return nary(op_t, (input, bound))
        _check_scalar_bounds(input, (bound,), name)
        (x, b), _ = _promote_all((input, bound))
        return wrap_outputs(op_s, (input,), (b,), _layout(op_s.fwd(x, b), (input,)))

    def f_(self: Tensor, bound) -> Tensor:
        if isinstance(bound, Tensor):
            return nary_(op_t, self, (bound,))
        _check_scalar_bounds(self, (bound,), name)
        check_inplace(self)
        (x, b), rt = _promote_all((self, bound))
        out = _cast_result(self, op_s.fwd(x, b), rt.np)
        return commit(op_s, self, (self,), (b,), out, records((self,)))
    f.__name__ = f.__qualname__ = name   # (out='s messages name it)
    return f, f_


_cmin, _cmin_ = _bound_op(CLAMP_MIN_S, CLAMP_MIN_T, "clamp_min")
_cmax, _cmax_ = _bound_op(CLAMP_MAX_S, CLAMP_MAX_T, "clamp_max")


# (PyTorch's parameter names, by which they may be passed)
def clamp_min(input: Tensor, min, *, out=None) -> Tensor:  # noqa: A002
    """``torch.clamp_min``."""
    return _cmin(input, min, out=out)


def clamp_max(input: Tensor, max, *, out=None) -> Tensor:  # noqa: A002
    """``torch.clamp_max``."""
    return _cmax(input, max, out=out)


def _clamp_min_(self: Tensor, min) -> Tensor:  # noqa: A002
    return _cmin_(self, min)


def _clamp_max_(self: Tensor, max) -> Tensor:  # noqa: A002
    return _cmax_(self, max)


# ---- where ----------------------------------------------------------------------------------

def _where_vjp(ns, g, need, c):
    return (None, ns.where(c, g, 0) if need[1] else None, ns.where(c, 0, g) if need[2] else None)


def _where_jvp(ns, tangents, primals, outs):
    ta = tangents[1] if tangents[1] is not None else 0
    tb = tangents[2] if tangents[2] is not None else 0
    return where(primals[0], ta, tb)


WHERE = Op("where", np.where, _where_vjp, _where_jvp, saves=(0,))


_WHERE_OUT = "Expected out type to be {r} but got {o}"


def where(condition: Tensor, input=None, other=None, *, out=None):
    """``torch.where(condition, input, other)`` with type promotion of the two branches;
    ``torch.where(condition)`` is ``condition.nonzero(as_tuple=True)``."""
    if out is None and type(condition) is Tensor and type(input) is Tensor \
            and type(other) is Tensor:
        c = condition._data
        da = input._data
        db = other._data
        if type(c) is np.ndarray and c.dtype == np.bool_ and type(da) is np.ndarray \
                and type(db) is np.ndarray and ((dt := da.dtype) is _F32 or dt is _F64) \
                and db.dtype is dt and c.flags.c_contiguous and da.flags.c_contiguous \
                and db.flags.c_contiguous:
            # the commonest call: a mask and two float tensors of one dtype, row-major; a
            # result without size-1 dims is then row-major in TensorIterator's order too
            try:
                r = np.where(c, da, db)
            except ValueError:
                r = None
            if r is not None:
                if r.ndim > 1 and not (r.flags.c_contiguous and 1 not in r.shape and r.size):
                    r = _layout(r, (condition, input, other))
                return wrap_outputs(WHERE, (condition, input, other), (), r)
    if out is not None:
        if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
            # (only the overload of two tensors takes out=)
            tensor_args(where, input=input, other=other)
        return with_out(where, out, (condition, input, other), overlap=True, dtype=_WHERE_OUT)
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if condition._data.dtype != np.bool_:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{_type_name(condition.dtype)}")
    a, b = to_operand(input), to_operand(other)
    (da, db), rt = _promote_all((a, b))
    for x in (a, b):
        if not isinstance(x, Tensor):
            S.to_dtype(x, rt)   # a number branch is converted with PyTorch's overflow check
    # with a number on one side PyTorch's composite casts the tensor to the result type first:
    # a ToCopyBackward0 that gives a real input the real part of a complex gradient
    if isinstance(a, Tensor) and a.requires_grad and a.dtype is not rt \
            and not isinstance(b, Tensor):
        a = a.to(rt)
    elif isinstance(b, Tensor) and b.requires_grad and b.dtype is not rt \
            and not isinstance(a, Tensor):
        b = b.to(rt)
    try:
        out = np.where(condition._data, da, db).astype(rt.np, copy=False)
    except ValueError as e:
        broadcast_failed(e, condition._data.shape, np.shape(da), np.shape(db))
        raise
    return wrap_outputs(WHERE, (condition, a, b), (), _layout(out, (condition, a, b)))


# ---- lerp, addcmul, addcdiv ------------------------------------------------------------------

def _half_of(*xs):
    """The half dtype among the arrays ``xs``, or None."""
    return next((x.dtype for x in xs if type(x) is np.ndarray and x.dtype in HALF_NP), None)


def _f32(x):
    return x.astype(np.float32) if type(x) is np.ndarray else np.float32(x)


def _lerp_np(a, b, w):
    h = _half_of(a, b, w)
    if h is not None:
        # PyTorch's lerp kernel for half types: float32 fused multiply-adds (exact products in
        # float64), rounded to float32, then once to the half type
        a32, b32, w32 = _f32(a), _f32(b), _f32(w)
        d = (b32 - a32).astype(np.float64)
        w64 = np.float64(w32) if type(w32) is not np.ndarray else w32.astype(np.float64)
        one_m = (np.float32(1) - w32).astype(np.float64)
        r = np.where(np.abs(w32) < 0.5, a32.astype(np.float64) + w64 * d,
                     b32.astype(np.float64) - d * one_m)
        return r.astype(np.float32).astype(h)
    small = np.abs(w) < 0.5
    r = np.where(small, a + w * (b - a), b - (b - a) * (1 - w))
    return np.asarray(r).astype(np.result_type(a, b), copy=False)


def _lerp_s_vjp(ns, g, need, w):
    if type(g) is np.ndarray and g.dtype in HALF_NP:
        # grad * (1 - weight) and grad * weight: PyTorch's mul kernel reads the scalars in
        # float32, rounding once
        g32 = g.astype(np.float32)
        return ((g32 * np.float32(1 - w)).astype(g.dtype) if need[0] else None,
                (g32 * np.float32(w)).astype(g.dtype) if need[1] else None)
    return (g * ns.conj(1 - w) if need[0] else None, g * ns.conj(w) if need[1] else None)


def _lerp_t_vjp(ns, g, need, a, b, w):
    return (g * ns.conj(-w + 1) if need[0] else None, g * ns.conj(w) if need[1] else None,
            g * ns.conj(b - a) if need[2] else None)


LERP_S = Op("lerp", _lerp_np, _lerp_s_vjp, linear=False, elementwise=True, node="LerpBackward0")
LERP_T = Op("lerp_t", _lerp_np, _lerp_t_vjp, saves=(0, 1, 2), elementwise=True,
            node="LerpBackward1")


def _lerp_check(input, end, weight):
    for what, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype is not input.dtype:
            raise RuntimeError(
                f"expected dtype {_scalar_name(input.dtype)} for `{what}` but got dtype "
                f"{_scalar_name(t.dtype)}")
    if not (input.is_floating_point() or input.is_complex()):
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise _not_impl(kernel, input.dtype)


def lerp(input: Tensor, end: Tensor, weight, *, out=None) -> Tensor:
    """``torch.lerp``: input + weight * (end - input)."""
    if out is not None:
        return with_out(lerp, out, (input, end, weight), overlap=True,
                        dtype=FOUND if isinstance(weight, Tensor) else "cast")
    _lerp_check(input, end, weight)
    if isinstance(weight, Tensor):
        return nary(LERP_T, (input, end, weight))
    try:
        out = _lerp_np(input._data, end._data, weight)
    except ValueError as e:
        broadcast_failed(e, input._data.shape, end._data.shape)
        raise
    except TypeError as e:   # NumPy refused complex32 pairs (or a real type error)
        out = _chalf.refused(e, LERP_S, (input._data, end._data))
    return wrap_outputs(LERP_S, (input, end), (weight,), _layout(out, (input, end)))


def _lerp_(self: Tensor, end: Tensor, weight) -> Tensor:
    _lerp_check(self, end, weight)
    if isinstance(weight, Tensor):
        return nary_(LERP_T, self, (end, weight))
    return nary_(LERP_S, self, (end,), (weight,))


def _addcmul_fwd(x, t1, t2, value):
    h = _half_of(x, t1, t2)
    if h is not None:
        # PyTorch's kernel for half types: value * t1 in float32, then a fused multiply-add
        # with t2 and x (exact in float64), rounded to float32 and once to the half type
        p = (np.float32(value) * _f32(t1)).astype(np.float64)
        return (p * _f32(t2).astype(np.float64) + _f32(x)).astype(np.float32).astype(h)
    return np.asarray(x + value * t1 * t2 if value != 1 else x + t1 * t2)


def _addcmul_vjp(ns, g, need, t1, t2, value):
    return (g if need[0] else None, g * ns.conj(t2 * value) if need[1] else None,
            g * ns.conj(t1 * value) if need[2] else None)


def _addcdiv_fwd(x, t1, t2, value):
    h = _half_of(x, t1, t2)
    if h is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (_f32(x) + np.float32(value) * _f32(t1) / _f32(t2)).astype(h)
    return np.asarray(x + value * t1 / t2 if value != 1 else x + t1 / t2)


def _addcdiv_vjp(ns, g, need, t1, t2, value):
    return (g if need[0] else None, g * ns.conj(value / t2) if need[1] else None,
            -g * ns.conj(value * t1 / (t2 * t2)) if need[2] else None)


ADDCMUL = Op("addcmul", _addcmul_fwd, _addcmul_vjp, saves=(1, 2), elementwise=True,
             save_if=(2, 1))
ADDCDIV = Op("addcdiv", _addcdiv_fwd, _addcdiv_vjp, saves=(1, 2), elementwise=True,
             save_if=(2, None))


def _value_for(operands, value):
    rt = D.result_type_of([o for o in operands])
    if not (rt.is_floating_point or rt.is_complex) and isinstance(value, float):
        return int(value)
    return value


def _check_addcdiv(t1, t2) -> None:
    if all(isinstance(t, Tensor) and t._data.dtype.kind in "iub" for t in (t1, t2)):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * ember.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1, out=None) -> Tensor:
    """``torch.addcmul``: input + value * tensor1 * tensor2."""
    if out is not None:
        return with_out(addcmul, out, (input, tensor1, tensor2), {"value": value}, overlap=True)
    ops = (input, tensor1, tensor2)
    return nary(ADDCMUL, ops, (_value_for(ops, value),))


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1, out=None) -> Tensor:
    """``torch.addcdiv``: input + value * tensor1 / tensor2 (floating tensors only)."""
    if out is not None:
        return with_out(addcdiv, out, (input, tensor1, tensor2), {"value": value}, overlap=True)
    _check_addcdiv(tensor1, tensor2)
    return nary(ADDCDIV, (input, tensor1, tensor2), (value,))


def _addcmul_(self, tensor1, tensor2, *, value=1):
    ops = (self, tensor1, tensor2)
    return nary_(ADDCMUL, self, (tensor1, tensor2), (_value_for(ops, value),))


def _addcdiv_(self, tensor1, tensor2, *, value=1):
    _check_addcdiv(tensor1, tensor2)
    return nary_(ADDCDIV, self, (tensor1, tensor2), (value,))


# ---- comparisons ----------------------------------------------------------------------------

def _cmp_ops(name, ufunc):
    """The scalar-operand and tensor-operand Ops of a comparison (used by the in-place form,
    which records a zero-gradient node) and the comparison functions."""
    op_s = Op(name, ufunc, _zero_grad, elementwise=True)
    op_t = Op(name + "_t", ufunc, _zero_grad, elementwise=True,
              node=name.capitalize() + "Backward1")
    ordered = name not in ("eq", "ne")

    def f(input, other, *, out=None) -> Tensor:
        if out is not None:
            if not isinstance(input, Tensor):
                raise invalid_combination(name, (input, other), {"out": out})
            return with_out(f, out, (input, other), overlap=True, differentiable=False)
        t = type(other)
        if (t is float or t is int) and type(input) is Tensor:
            d = input._data
            if type(d) is np.ndarray and ((dt := d.dtype) is _F32 or dt is _F64):
                # the commonest call, a float tensor against a number: the general path's
                # ufunc call (promotion leaves both as they are); a row-major input without
                # size-1 dims has a row-major result
                r = _call2(ufunc, d, other)
                if r.ndim > 1 and not (d.flags.c_contiguous and 1 not in d.shape and d.size):
                    r = _layout(r, (input, other))
                return _nodiff(r)
        if not isinstance(input, Tensor):
            raise invalid_combination(name, (input, other))
        if not isinstance(other, Tensor):
            if type(other) not in NUMBERS:
                check_operands(name, (input, other))
            other = to_operand(other)
        da, db, npt = promoted(input, other)
        uint_check(name, npt)
        if ordered and (np.dtype(npt).kind == "c" or npt is _chalf.CH):
            raise _not_impl(f"{name}_cpu", npt)
        return _nodiff(_layout(_call2(ufunc, da, db), (input, other)))

    def f_(self, other) -> Tensor:
        if ordered:
            rt = D.result_type_of((self, to_operand(other)))
            if rt.is_complex:
                raise _not_impl(f"{name}_cpu", rt)
        return inplace(op_t if isinstance(other, Tensor) else op_s, self, (other,))

    def dunder(self, other):
        if not isinstance(other, (Tensor, int, float, complex, bool, np.generic, np.ndarray)):
            return NotImplemented
        return f(self, other)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.{name}``: elementwise comparison, a bool tensor."
    return f, f_, dunder


eq, _eq_, _eq_d = _cmp_ops("eq", np.equal)
ne, _ne_, _ne_d = _cmp_ops("ne", np.not_equal)
lt, _lt_, _lt_d = _cmp_ops("lt", np.less)
le, _le_, _le_d = _cmp_ops("le", np.less_equal)
gt, _gt_, _gt_d = _cmp_ops("gt", np.greater)
ge, _ge_, _ge_d = _cmp_ops("ge", np.greater_equal)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _same_dtype(a: Tensor, b: Tensor) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{_type_name(a.dtype)} did not match {_type_name(b.dtype)}")


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """``torch.isclose``: |input - other| <= atol + rtol * |other| (same dtypes only)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        tensor_args(isclose, input=input, other=other)
    _same_dtype(input, other)
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    a, b = input._data, other._data
    if a.dtype == _chalf.CH:
        check_broadcast(a.shape, b.shape)
        return _nodiff(_chalf.isclose(a, b, rtol, atol, equal_nan))
    close = a == b
    if a.dtype == np.bool_ or (a.dtype.kind in "iu" and rtol == 0 and atol == 0):
        return _nodiff(close)
    if a.dtype.kind in "iu":
        a, b = a.astype(D.get_default_dtype().np), b.astype(D.get_default_dtype().np)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - b)
        allowed = atol + np.abs(rtol * b)
        fin = np.isfinite(diff)
        close = close | (fin & (diff <= allowed))
    if equal_nan:
        close = close | (np.isnan(a) & np.isnan(b))
    return _nodiff(close)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """``torch.allclose``: a Python bool."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input: Tensor, other: Tensor) -> bool:
    """``torch.equal``: same shape and same values (after type promotion)."""
    if input._data.shape != other._data.shape:
        return False
    if D.promote_types(input.dtype, other.dtype) is D.complex32:   # (ember._chalf)
        # PyTorch's kernels lack ComplexHalf: the one for a tensor compared with its own view
        # (which only looks for NaNs), or the comparison's
        a, b = input._data, other._data
        alias = (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
                 and a.strides == b.strides and input.dtype is other.dtype
                 and input.is_conj() == other.is_conj() and input.is_neg() == other.is_neg())
        raise NotImplementedError(f"\"{'equal_notnan_cpu' if alias else 'equal_cpu'}\" not "
                                  "implemented for 'ComplexHalf'")
    da, db, _ = promoted(input, other)
    return bool(np.array_equal(da, db))


def _isx(name, fn, ints):
    def f(input: Tensor) -> Tensor:
        if not isinstance(input, Tensor):
            raise must_be(f, "input", input)
        d = input._data
        if d.dtype.kind in "iub":
            return _nodiff(_layout(np.full(d.shape, ints), (input,)))
        if d.dtype is _chalf.CH:
            return _nodiff(_layout(_chalf.compute(name, (d,)), (input,)))
        if name != "isnan" and input._rg and input.is_inference():
            from .pointwise import abs
            abs(input)   # PyTorch's kernel compares abs(x) with inf: its refusal, if any
        return _nodiff(_layout(fn(d), (input,)))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.{name}``: a bool tensor."
    return f


isnan = _isx("isnan", np.isnan, False)
isinf = _isx("isinf", np.isinf, False)
isfinite = _isx("isfinite", np.isfinite, True)


# ---- logical and bitwise ops -------------------------------------------------------------

def _logical(name, ufunc):
    def f(input: Tensor, other: Tensor, *, out=None) -> Tensor:
        if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
            tensor_args(f, input=input, other=other)
        if out is not None:
            return with_out(f, out, (input, other), overlap=True, differentiable=False)
        a = input._data
        b = other._data if isinstance(other, Tensor) else other
        uint_check(name, a.dtype)
        return _nodiff(_call2(ufunc, a, b))

    def f_(self: Tensor, other) -> Tensor:
        return _write(self, f(self, other)._data)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.{name}``: a bool tensor."
    return f, f_


logical_and, _logical_and_ = _logical("logical_and", np.logical_and)
logical_or, _logical_or_ = _logical("logical_or", np.logical_or)
logical_xor, _logical_xor_ = _logical("logical_xor", np.logical_xor)


def logical_not(input: Tensor, *, out=None) -> Tensor:
    """``torch.logical_not``: a bool tensor."""
    if out is not None:
        return with_out(logical_not, out, (input,), overlap=True, differentiable=False)
    uint_check("logical_not", input._data.dtype)
    if input._data.dtype is _chalf.CH:
        _chalf.refuse("logical_not")
    return _nodiff(_layout(np.logical_not(input._data), (input,)))


def _bitwise(name, ufunc):
    op = Op(name, ufunc, None)

    def check(a, b):
        for x in (a, b):
            if isinstance(x, Tensor) and x._data.dtype.kind not in "iub":
                raise _not_impl(f"{name}_cpu", D.result_type_of((a, b)))
            if isinstance(x, float):
                raise _not_impl(f"{name}_cpu", D.result_type_of((a, b)))

    def f(input, other, *, out=None) -> Tensor:
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise invalid_combination(name, (input, other), {"out": out})
        if type(other) not in NUMBERS and not isinstance(other, Tensor) or \
                type(input) not in NUMBERS and not isinstance(input, Tensor):
            check_operands(name, (input, other), {"out": out})
        if out is not None:
            return with_out(f, out, (input, other), overlap=True, differentiable=False)
        input, other = to_operand(input), to_operand(other)
        check(input, other)
        da, db, _ = promoted(input, other)
        return _nodiff(_layout(_call2(ufunc, da, db), (input, other)))

    def f_(self, other) -> Tensor:
        check(self, to_operand(other))
        return inplace(op, self, (other,))

    def dunder(self, other):
        if not isinstance(other, (Tensor, int, bool, float, np.generic)):
            return NotImplemented
        return f(self, other)

    def rdunder(self, other):
        if not isinstance(other, (Tensor, int, bool, float, np.generic)):
            return NotImplemented
        return f(other, self)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.{name}`` (integer and bool tensors)."
    return f, f_, dunder, rdunder


bitwise_and, _bitwise_and_, _and_d, _rand_d = _bitwise("bitwise_and", np.bitwise_and)
bitwise_or, _bitwise_or_, _or_d, _ror_d = _bitwise("bitwise_or", np.bitwise_or)
bitwise_xor, _bitwise_xor_, _xor_d, _rxor_d = _bitwise("bitwise_xor", np.bitwise_xor)


def bitwise_not(input: Tensor, *, out=None) -> Tensor:
    """``torch.bitwise_not`` (integer and bool tensors)."""
    if out is not None:
        return with_out(bitwise_not, out, (input,), overlap=True, differentiable=False, dtype=FOUND)
    if input._data.dtype.kind not in "iub":
        raise _not_impl("bitwise_not_cpu", input.dtype)
    return _nodiff(np.invert(input._data))


def _invert(self: Tensor) -> Tensor:
    if self._data.dtype.kind not in "iub":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


# ---- Tensor methods and operators ---------------------------------------------------------

for _name, _fn in [("where", lambda self, condition, other: where(condition, self, other)),
                   ("floor_divide", floor_divide), ("remainder", remainder), ("fmod", fmod),
                   ("atan2", atan2), ("arctan2", arctan2), ("clamp", clamp), ("clip", clamp),
                   ("clamp_min", clamp_min), ("clamp_max", clamp_max), ("maximum", maximum),
                   ("minimum", minimum), ("lerp", lerp), ("addcmul", addcmul),
                   ("addcdiv", addcdiv), ("eq", eq), ("ne", ne), ("lt", lt), ("le", le),
                   ("gt", gt), ("ge", ge), ("greater", gt), ("greater_equal", ge),
                   ("less", lt), ("less_equal", le), ("not_equal", ne), ("isclose", isclose),
                   ("allclose", allclose), ("equal", equal), ("isnan", isnan),
                   ("isinf", isinf), ("isfinite", isfinite), ("logical_and", logical_and),
                   ("logical_or", logical_or), ("logical_xor", logical_xor),
                   ("logical_not", logical_not), ("bitwise_and", bitwise_and),
                   ("bitwise_or", bitwise_or), ("bitwise_xor", bitwise_xor),
                   ("bitwise_not", bitwise_not),
                   ("floor_divide_", _floor_divide_),
                   ("remainder_", lambda self, other: inplace(
                       REMAINDER if isinstance(other, Tensor) else REMAINDER_S, self, (other,))),
                   ("fmod_", lambda self, other: inplace(
                       FMOD if isinstance(other, Tensor) else FMOD_S, self, (other,))),
                   ("atan2_", lambda self, other: inplace(ATAN2, self, (other,), (), True)),
                   ("arctan2_", lambda self, other: inplace(ATAN2, self, (other,), (), True)),
                   ("clamp_", _clamp_), ("clip_", _clamp_), ("clamp_min_", _clamp_min_),
                   ("clamp_max_", _clamp_max_), ("lerp_", _lerp_), ("addcmul_", _addcmul_),
                   ("addcdiv_", _addcdiv_), ("eq_", _eq_), ("ne_", _ne_), ("lt_", _lt_),
                   ("le_", _le_), ("gt_", _gt_), ("ge_", _ge_), ("greater_", _gt_),
                   ("greater_equal_", _ge_), ("less_", _lt_), ("less_equal_", _le_),
                   ("not_equal_", _ne_), ("logical_and_", _logical_and_),
                   ("logical_or_", _logical_or_), ("logical_xor_", _logical_xor_),
                   ("logical_not_", lambda self: _write(self, np.logical_not(self._data))),
                   ("bitwise_and_", _bitwise_and_), ("bitwise_or_", _bitwise_or_),
                   ("bitwise_xor_", _bitwise_xor_),
                   ("bitwise_not_", lambda self: _write(self, bitwise_not(self)._data)),
                   ("__floordiv__", floor_divide),
                   ("__rfloordiv__", lambda self, other: floor_divide(other, self)),
                   ("__ifloordiv__", lambda self, other: inplace(FLOOR_DIV_, self, (other,))),
                   ("__mod__", remainder), ("__rmod__", lambda self, other: remainder(other, self)),
                   ("__imod__", lambda self, other: self.remainder_(other)),
                   ("__eq__", _eq_d), ("__ne__", _ne_d), ("__lt__", _lt_d), ("__le__", _le_d),
                   ("__gt__", _gt_d), ("__ge__", _ge_d), ("__and__", _and_d),
                   ("__rand__", _rand_d), ("__iand__", _bitwise_and_), ("__or__", _or_d),
                   ("__ror__", _ror_d), ("__ior__", _bitwise_or_), ("__xor__", _xor_d),
                   ("__rxor__", _rxor_d), ("__ixor__", _bitwise_xor_), ("__invert__", _invert)]:
    method(_name, binary_dunder(_fn) if _name in _BINARY_DUNDERS else _fn)
