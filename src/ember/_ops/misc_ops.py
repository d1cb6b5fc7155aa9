"""Assorted ops PyTorch programs use: positive, ravel, type_as, is_nonzero, bit shifts, gcd/lcm,
angle, polar, complex, aminmax, addr, addbmm, dsplit, split_with_sizes, the in-place view ops
(``squeeze_``, ``unsqueeze_``, ``t_``, ``transpose_``...), ``fill_diagonal_`` and the ``*_copy``
functions (a view op's result as a fresh tensor, with ``<View>Backward0_copy`` as grad_fn).
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _dtype as D
from .._device import check_factory_options
from .._settings import fill_uninitialized
from .._tensor import Tensor, _wrap_dim, set_history
from ._dispatch import check_inplace, inplace, promoted, to_operand
from ._parser import invalid_combination, tensor_args
from ._registry import Op, apply, method, ns_fn
from .pointwise import _not_impl
from .pointwise_more import _nodiff
from .reduction import _structseq, dims_arg, expand_reduced, return_types

__all__ = [
    "addbmm",
    "addr",
    "aminmax",
    "angle",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "complex",
    "dsplit",
    "gcd",
    "lcm",
    "polar",
    "positive",
    "ravel",
    "resize_as_",
    "split_with_sizes",
]


# ---- small methods -------------------------------------------------------------------------

def positive(input: Tensor) -> Tensor:
    """``torch.positive``: the input itself (refused for bool, as PyTorch's unary ``+``)."""
    if input.dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def ravel(input: Tensor) -> Tensor:
    """``torch.ravel``: ``contiguous().view(-1)`` (a view of the input when contiguous, else
    of a contiguous copy)."""
    return input.contiguous().view(-1)


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """``Tensor.type_as``: ``self`` cast to ``other``'s dtype (``self`` when equal)."""
    return self.to(other.dtype)


def is_nonzero(self: Tensor) -> bool:
    """``Tensor.is_nonzero``: the truth of a one-element tensor."""
    n = self._data.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self._data.reshape(-1)[0])


# ---- bit shifts, gcd, lcm -------------------------------------------------------------------

def _lshift_np(a, b):
    a, b = np.asarray(a), np.asarray(b)
    bits = a.dtype.itemsize * 8
    out = np.left_shift(a, np.clip(b, 0, bits - 1).astype(a.dtype))
    return np.where((b < 0) | (b >= bits), np.zeros((), a.dtype), out).astype(a.dtype)


def _rshift_np(a, b):
    a, b = np.asarray(a), np.asarray(b)
    bits = a.dtype.itemsize * 8
    out = np.right_shift(a, np.clip(b, 0, bits - 1).astype(a.dtype))
    # a shift by the width or more (or a negative one) leaves the sign bits only
    fill = np.where(a < 0, a.dtype.type(-1) if a.dtype.kind == "i" else 0, 0).astype(a.dtype)
    return np.where((b < 0) | (b >= bits), fill, out).astype(a.dtype)


def _int_only(kernel: str):
    def check(a, b):
        for x in (a, b):
            bad = (isinstance(x, Tensor) and x._data.dtype.kind not in "iu") or isinstance(
                x, (float, bool))
            if bad or (isinstance(x, Tensor) and x._data.dtype.kind == "b"):
                raise _not_impl(kernel, D.result_type_of((a, b)))
    return check


def _int_binary(name: str, kernel: str, fwd, numbers: bool = True):
    """``numbers``: either operand may be a Python number (the shifts); else both must be
    tensors (gcd, lcm), as PyTorch's signatures say."""
    op = Op(name, fwd, None)
    check = _int_only(kernel)

    def f(input, other) -> Tensor:
        if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
            if not numbers:
                tensor_args(f, input=input, other=other)
            elif not (isinstance(input, Tensor) or isinstance(other, Tensor)):
                raise invalid_combination(name, (input, other))
        input, other = to_operand(input), to_operand(other)
        check(input, other)
        da, db, _ = promoted(input, other)
        return _nodiff(fwd(da, db))

    def f_(self: Tensor, other) -> Tensor:
        check(self, to_operand(other))
        return inplace(op, self, (other,))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.{name}`` (integer tensors)."
    return f, f_


bitwise_left_shift, _lshift_ = _int_binary("bitwise_left_shift", "lshift_cpu", _lshift_np)
bitwise_right_shift, _rshift_ = _int_binary("bitwise_right_shift", "rshift_cpu", _rshift_np)
gcd, _gcd_ = _int_binary("gcd", "gcd_cpu", lambda a, b: np.gcd(a, b), numbers=False)
lcm, _lcm_ = _int_binary("lcm", "lcm_cpu", lambda a, b: np.lcm(a, b), numbers=False)

_OPERAND = (Tensor, int, bool, float, np.generic)


def _dunder(f, reflected=False):
    def d(self, other):
        if not isinstance(other, _OPERAND):
            return NotImplemented
        return f(other, self) if reflected else f(self, other)
    return d


# ---- angle, polar, complex ---------------------------------------------------------------

def _angle_np(x):
    if x.dtype.kind == "c":
        return np.angle(x)
    # real numbers: pi for negatives, 0 otherwise, NaN kept
    return np.where(x < 0, x.dtype.type(math.pi), np.where(np.isnan(x), x, 0)).astype(x.dtype)


def _angle_vjp(ns, g, need, x):
    if not _is_complex(x):
        return (ns.zeros_of(g, g.shape),)
    a2 = ns.abs(x) * ns.abs(x)
    return (ns.where(ns.data_fn(lambda v: v == 0, x), 0, g * x / a2 * 1j),)


def _angle_jvp(ns, tangents, primals, outs):
    x, t = primals[0], tangents[0]
    if not x.is_complex():
        return ns.zeros_of(outs[0], outs[0].shape)
    # d angle = Im(conj(z) dz) / |z|^2
    a2 = ns.abs(x) * ns.abs(x)
    r = ns.imag_of(ns.conj(x) * t) / a2
    return ns.where(ns.data_fn(lambda v: v == 0, x), 0, r)


def _is_complex(x) -> bool:
    if isinstance(x, Tensor):
        return x.is_complex()
    # (complex32 pairs: a structured dtype, ember._chalf)
    return np.iscomplexobj(x) or isinstance(x, np.ndarray) and x.dtype.names is not None


ANGLE = Op("angle", _angle_np, _angle_vjp, _angle_jvp, saves=(0,))


def angle(input: Tensor) -> Tensor:
    """``torch.angle``: the argument of each element (pi or 0 for real numbers); integer
    inputs give the default float dtype."""
    d = input._data
    if d.dtype.kind in "iub":
        d = d.astype(D.get_default_dtype().np)
    return _apply_data(ANGLE, input, d)


def _apply_data(op: Op, input: Tensor, d) -> Tensor:
    from ._registry import wrap_outputs
    try:
        out = op.fwd(d)
    except TypeError as e:   # NumPy refused complex32 pairs (or a real type error)
        from .._chalf import refused
        out = refused(e, op, (d,))
    return wrap_outputs(op, (input,), (), out)


def _polar_vjp(ns, g, need, out):
    gc = ns.conj(g)
    return (ns.real_of(gc * ns.sgn(out)) if need[0] else None,
            ns.real_of(gc * out * 1j) if need[1] else None)


def _polar_jvp(ns, tangents, primals, outs):
    r, th = primals
    tr, tt = tangents
    res = None
    if tr is not None:
        res = ns.complex_of(tr * ns.cos(th), tr * ns.sin(th))
    if tt is not None:
        d = outs[0] * 1j * tt
        res = d if res is None else res + d
    return res


def _complex_np(re, im):
    if re.dtype == np.float16:   # complex32 (ember._chalf): the pairs, exactly
        out = np.empty(np.broadcast_shapes(re.shape, im.shape), D.complex32.np)
        out["real"] = re
        out["imag"] = im
        return out
    npd = np.complex128 if re.dtype == np.float64 else (
        np.complex64 if re.dtype == np.float32 else np.complex64)
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), npd)
    out.real = re
    out.imag = im
    return out


def _polar_np(r, th):
    return _complex_np(r * np.cos(th), r * np.sin(th))


POLAR = Op("polar", _polar_np, _polar_vjp, _polar_jvp, save_out=True, names=("result",))
COMPLEX = Op("complex", _complex_np,
             lambda ns, g, need: (ns.real_of(g) if need[0] else None,
                                  ns.imag_of(g) if need[1] else None),
             lambda ns, tangents, primals, outs: ns.complex_of(
                 tangents[0] if tangents[0] is not None else ns.zeros_of(
                     primals[0], primals[0].shape),
                 tangents[1] if tangents[1] is not None else ns.zeros_of(
                     primals[1], primals[1].shape)))
ns_fn("complex_of", _complex_np, lambda a, b: complex(a, b))


def _check_pair(a: Tensor, b: Tensor) -> None:
    da, db = a.dtype, b.dtype
    if da not in (D.float16, D.float32, D.float64) or db not in (D.float16, D.float32,
                                                                     D.float64):
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{_tn(da)} and {_tn(db)}")
    if da is not db:
        raise RuntimeError(f"Expected object of scalar type {_tn(da)} but got scalar type "
                           f"{_tn(db)} for second argument")


def _tn(d) -> str:
    from ._dispatch import _type_name
    return _type_name(d)


# PyTorch's complex/polar out= dtype check (the result's dtype first)
_COMPLEX_OUT = "Expected object of scalar type {r} but got scalar type {o} for argument 'out'"


def complex(real: Tensor, imag: Tensor, *, out=None) -> Tensor:
    """``torch.complex``: ``real + 1j * imag`` from two float tensors of one dtype."""
    if not (isinstance(real, Tensor) and isinstance(imag, Tensor)):
        tensor_args(complex, real=real, imag=imag)
    if out is not None:
        from ._out import with_out
        return with_out(complex, out, (real, imag), dtype=_COMPLEX_OUT)
    _check_pair(real, imag)
    return apply(COMPLEX, (real, imag))


def polar(abs: Tensor, angle: Tensor, *, out=None) -> Tensor:
    """``torch.polar``: ``abs * exp(1j * angle)``."""
    if not (isinstance(abs, Tensor) and isinstance(angle, Tensor)):
        tensor_args(polar, abs=abs, angle=angle)
    if out is not None:
        from ._out import with_out
        return with_out(polar, out, (abs, angle), dtype=_COMPLEX_OUT)
    _check_pair(abs, angle)
    if abs.dtype is D.float16:
        raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
    return apply(POLAR, (abs, angle))


# ---- aminmax ---------------------------------------------------------------------------------

return_types.aminmax = _structseq("aminmax", ("min", "max"))


def _aminmax_fwd(x, dims, keepdim):
    return (np.min(x, axis=dims, keepdims=keepdim), np.max(x, axis=dims, keepdims=keepdim))


def _aminmax_weights(x, out, dims, keepdim):
    o = out if keepdim or dims is None else np.expand_dims(out, dims)
    m = x == o
    cnt = np.sum(m, axis=dims, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (m / cnt).astype(x.dtype)


def _aminmax_vjp(ns, grads, need, x, mn, mx, dims, keepdim):
    res = None
    for g, o in zip(grads, (mn, mx)):
        if g is None:
            continue
        w = ns.data_fn(_aminmax_weights, x, o, dims, keepdim)
        part = expand_reduced(ns, g, x.shape, dims, keepdim) * w
        res = part if res is None else res + part
    return (res,)


def _aminmax_jvp(ns, tangents, primals, outs, dims, keepdim):
    x, t = primals[0], tangents[0]
    r = []
    for o in outs:
        w = ns.data_fn(_aminmax_weights, x, o, dims, keepdim)
        r.append(ns.sum_dims(w * t, dims, keepdim))
    return tuple(r)


AMINMAX = Op("aminmax", _aminmax_fwd, _aminmax_vjp, _aminmax_jvp, saves=(0,), save_out=True,
             n_out=2)


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False, out=None):
    """``torch.aminmax``: ``(amin, amax)`` over one dim or all; ties share the gradient."""
    if out is not None:
        from ._out import with_out
        return with_out(aminmax, out, (input,), {"dim": dim, "keepdim": keepdim}, dtype="exact")
    if input.is_complex():
        raise RuntimeError("aminmax(): does not support complex input")
    n = input._data.ndim
    if dim is None:
        dims = None
        if input._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
    else:
        dims = dims_arg(dim, n)
        if dims is not None and input._data.shape[dims[0]] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims[0]} to have non-zero "
                             "size.")
    if dims is None and keepdim and n:
        dims = tuple(range(n))
    r = apply(AMINMAX, (input,), (dims, keepdim))
    return return_types.aminmax(*r)



# ---- addr / addbmm --------------------------------------------------------------------------

def _addr_fwd(s, v1, v2, beta, alpha):
    o = np.multiply.outer(v1, v2)
    if alpha != 1:
        o = o * alpha
    if beta == 0:
        return np.broadcast_to(o, np.broadcast_shapes(np.shape(s), o.shape)).copy()
    return o + (s if beta == 1 else s * beta)


def _addr_vjp(ns, g, need, v1, v2, beta, alpha):
    ca = ns.conj(alpha)
    return (
        (g * ns.conj(beta) if beta != 1 else g) if need[0] and beta != 0 else (
            ns.zeros_of(g, g.shape) if need[0] else None),
        ns.matmul(g, ns.conj(v2)) * ca if need[1] else None,
        ns.matmul(ns.conj(v1), g) * ca if need[2] else None,
    )


def _addr_jvp(ns, tangents, primals, outs, beta, alpha):
    s, v1, v2 = primals
    ts, t1, t2 = tangents
    r = ns.zeros_of(outs[0], outs[0].shape)
    if ts is not None and beta != 0:
        r = r + ts * beta
    if t1 is not None:
        r = r + ns.outer(t1, v2) * alpha
    if t2 is not None:
        r = r + ns.outer(v1, t2) * alpha
    return r


ns_fn("outer", np.multiply.outer, lambda a, b: a.unsqueeze(-1) * b)
ADDR = Op("addr", _addr_fwd, _addr_vjp, _addr_jvp, saves=(1, 2), save_if=(2, 1),
          names=("vec1", "vec2", "beta", "alpha"))


def _scalar_ok(x, what: str, is_float: bool) -> None:
    if not is_float and isinstance(x, float) and not float(x).is_integer():
        raise RuntimeError(f"For integral input tensors, argument {what} must not be a floating "
                           "point number.")


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``torch.addr``: ``beta * input + alpha * outer(vec1, vec2)``."""
    if vec1._data.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1._data.ndim}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    ops = [to_operand(t) for t in (input, vec1, vec2)]
    rt = D.result_type_of(ops)
    if rt is D.bool:
        if not isinstance(beta, bool) and beta not in (0, 1) or not isinstance(
                alpha, bool) and alpha not in (0, 1):
            raise RuntimeError("Boolean beta only supported for Boolean results.")
        return ((input & bool(beta)) | (vec1.unsqueeze(-1) & vec2 & bool(alpha))) if beta \
            else vec1.unsqueeze(-1) & vec2 & bool(alpha)
    _scalar_ok(beta, "beta", rt.is_floating_point or rt.is_complex)
    _scalar_ok(alpha, "alpha", rt.is_floating_point or rt.is_complex)
    n, m = vec1._data.shape[0], vec2._data.shape[0]
    s = input._data.shape
    try:
        np.broadcast_shapes(s, (n, m))
        if len(s) > 2:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({n if len(s) < 2 else m}) must "
                           f"match the existing size ({s[-1] if s else 1}) at non-singleton "
                           f"dimension {max(len(s) - 1, 0)}.  Target sizes: [{n}, {m}].  Tensor "
                           f"sizes: [{', '.join(map(str, s))}]") from None
    from .copy import to as _to
    ins = tuple(t if t.dtype is rt else _to(t, rt) for t in (input, vec1, vec2))
    return apply(ADDR, ins, (beta, alpha))


def _addbmm_fwd(s, b1, b2, beta, alpha):
    # PyTorch's loop: one addmm per batch into the result (float32 rounds as it does)
    shape = np.broadcast_shapes(np.shape(s), (b1.shape[1], b2.shape[2]))
    dt = np.result_type(s, b1, b2)
    out = np.zeros(shape, dt) if beta == 0 else np.broadcast_to(
        s if beta == 1 else s * beta, shape).astype(dt)
    if dt.itemsize <= 4 and dt.kind == "f" and b1.shape[0] * b1.shape[2] <= 4096:
        # single precision: PyTorch's small gemm adds rank-1 updates into the result one at a
        # time; doing the same gives its rounding exactly
        for b in range(b1.shape[0]):
            for k in range(b1.shape[2]):
                m = b1[b][:, k, None] * b2[b][k, None, :]
                out = out + (m if alpha == 1 else m * dt.type(alpha))
        return out.astype(dt, copy=False)
    for b in range(b1.shape[0]):
        m = np.matmul(b1[b], b2[b])
        out = out + (m if alpha == 1 else m * alpha)
    return out.astype(dt, copy=False)


def _addbmm_vjp(ns, g, need, b1, b2, beta, alpha):
    ca = ns.conj(alpha)
    gb = ns.unsqueeze(g, 0)
    return (
        (g * ns.conj(beta) if beta != 1 else g) if need[0] and beta != 0 else (
            ns.zeros_of(g, g.shape) if need[0] else None),
        ns.matmul(gb, ns.mH(b2)) * ca if need[1] else None,
        ns.matmul(ns.mH(b1), gb) * ca if need[2] else None,
    )


def _addbmm_jvp(ns, tangents, primals, outs, beta, alpha):
    s, b1, b2 = primals
    ts, t1, t2 = tangents
    r = ns.zeros_of(outs[0], outs[0].shape)
    if ts is not None and beta != 0:
        r = r + ts * beta
    if t1 is not None:
        r = r + ns.matmul(t1, b2).sum(0) * alpha
    if t2 is not None:
        r = r + ns.matmul(b1, t2).sum(0) * alpha
    return r


ADDBMM = Op("addbmm", _addbmm_fwd, _addbmm_vjp, _addbmm_jvp, saves=(1, 2), save_if=(2, 1),
            names=("batch1", "batch2", "beta", "alpha"))


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``torch.addbmm``: ``beta * input + alpha * sum_b batch1[b] @ batch2[b]``."""
    if batch1._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    s1, s2 = batch1._data.shape, batch2._data.shape
    if s1[0] != s2[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {s1[0]} and "
                           f"{s2[0]}")
    if s1[2] != s2[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({s1[1]}x{s1[2]} and "
                           f"{s2[1]}x{s2[2]})")
    if batch1.dtype is not batch2.dtype or input.dtype is not batch1.dtype:
        bad = batch1.dtype if batch1.dtype is not input.dtype else batch2.dtype
        raise RuntimeError(f"expected scalar type {_tn(input.dtype)} but found {_tn(bad)}")
    try:
        np.broadcast_shapes(input._data.shape, (s1[1], s2[2]))
        if input._data.ndim > 2:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({s2[2]}) must match the existing "
                           f"size ({input._data.shape[-1]}) at non-singleton dimension "
                           f"{input._data.ndim - 1}.  Target sizes: [{s1[1]}, {s2[2]}].  Tensor "
                           f"sizes: {list(input._data.shape)}") from None
    return apply(ADDBMM, (input, batch1, batch2), (beta, alpha))


# ---- splits ----------------------------------------------------------------------------------

def dsplit(input: Tensor, indices_or_sections) -> tuple:
    """``torch.dsplit``: ``tensor_split`` along dim 2 (tensors of 3 or more dims)."""
    from .views import split_args, tensor_split
    split_args("dsplit", input, indices_or_sections)
    n = input._data.ndim
    if n < 3:
        raise RuntimeError("ember.dsplit requires a tensor with at least 3 dimension, but got a "
                           f"tensor with {n} dimensions!")
    if isinstance(indices_or_sections, int) and (
            indices_or_sections == 0 or input._data.shape[2] % indices_or_sections):
        raise RuntimeError(
            "ember.dsplit attempted to split along dimension 2, but the size of the dimension "
            f"{input._data.shape[2]} is not divisible by the split_size {indices_or_sections}!")
    return tensor_split(input, indices_or_sections, 2)


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """``torch.split_with_sizes``: views of the listed sizes along ``dim``."""
    from .views import split
    return split(input, list(split_sizes), dim)


# ---- in-place view ops --------------------------------------------------------------------

def _view_op_variant(op: Op, node: str) -> Op:
    return Op(op.name + "_", op.fwd, op.vjp, op.jvp, linear=op.linear, is_view=True, node=node)


def _inplace_view(self: Tensor, op: Op, params: tuple) -> Tensor:
    """Apply view op ``op`` to ``self`` and make ``self`` take the result's shape, strides and
    history (PyTorch's ``squeeze_``, ``t_``...: metadata changes that bump the version)."""
    check_inplace(self)
    r = apply(op, (self,), params)
    self._data = r._data
    self._vc.v += 1
    if r._fn is not None:
        set_history(self, r._fn, r._onr)
    if self._base is not None:
        self._av = self._vc.v
    if r._fw is not None:
        self._fw = r._fw
    return self


def _inplace_views():
    from . import views as V
    ops = {k: _view_op_variant(o, n) for k, o, n in [
        ("squeeze", V.SQUEEZE, "SqueezeBackward3"), ("squeeze_dim", V.SQUEEZE, "SqueezeBackward4"),
        ("squeeze_dims", V.SQUEEZE, "SqueezeBackward5"),
        ("unsqueeze", V.UNSQUEEZE, "UnsqueezeBackward1"),
        ("transpose", V.TRANSPOSE, "TransposeBackward1"), ("t", V.T_OP, "TBackward1")]}

    def squeeze_(self: Tensor, dim=None) -> Tensor:
        shape = self._data.shape
        if dim is None:
            return _inplace_view(self, ops["squeeze"],
                                 (shape, tuple(i for i, s in enumerate(shape) if s == 1)))
        if isinstance(dim, (tuple, list)):
            dims = tuple(sorted({_wrap_dim(d, len(shape)) for d in dim}))
            op = ops["squeeze_dims"]
        else:
            dims = (_wrap_dim(dim, len(shape)),)
            op = ops["squeeze_dim"]
        return _inplace_view(self, op, (shape, tuple(d for d in dims if shape and
                                                     shape[d] == 1)))

    def unsqueeze_(self: Tensor, dim: int) -> Tensor:
        return _inplace_view(self, ops["unsqueeze"], (_wrap_dim(dim, self._data.ndim + 1),))

    def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
        n = self._data.ndim
        return _inplace_view(self, ops["transpose"], (_wrap_dim(dim0, n), _wrap_dim(dim1, n)))

    def t_(self: Tensor) -> Tensor:
        if self._data.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                               f"{self._data.ndim}D")
        return _inplace_view(self, ops["t"], ())

    return squeeze_, unsqueeze_, transpose_, t_


squeeze_, unsqueeze_, transpose_, t_ = _inplace_views()


# ---- fill_diagonal_ -------------------------------------------------------------------------

def fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """``Tensor.fill_diagonal_``: the main diagonal (all indices equal) set to ``fill_value``;
    ``wrap`` restarts it every ``ncols + 1`` rows of a tall matrix."""
    shape = self._data.shape
    n = len(shape)
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    if n > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    # as PyTorch: fill an as_strided view along the diagonal (CopySlices history), and for
    # ``wrap`` a second one continuing ``ncols + 1`` rows further down
    from .copy import fill_
    from .views import as_strided
    off = self.storage_offset()
    size = min(shape[0], shape[1])
    step = builtins.sum(self.stride())
    fill_(as_strided(self, (size,), (step,), off), fill_value)
    if wrap and n == 2 and shape[0] > shape[1] + 1:
        w = shape[1] + 1
        extra = (self._data.size + w - 1) // w - size
        fill_(as_strided(self, (extra,), (step,), off + size * step), fill_value)
    return self


# ---- *_copy: a view op's result as a new tensor ------------------------------------------

def _copy_fwd(x, idx, mode, in_shape, data):
    return data


def _copy_vjp(ns, g, need, idx, mode, in_shape, data):
    from .views import geo_scatter
    return (geo_scatter(ns, g, idx, in_shape, mode),)


def _copy_jvp(ns, tangents, primals, outs, idx, mode, in_shape, data):
    from .views import geo_take
    return geo_take(ns, tangents[0], idx, mode)


def _copy_multi_vjp(ns, grads, need, parts, in_shape):
    from .views import geo_scatter
    if type(grads) is not tuple:
        grads = (grads,)
    res = None
    for g, (idx, mode, _) in zip(grads, parts):
        if g is None:
            continue
        p = geo_scatter(ns, g, idx, in_shape, mode)
        res = p if res is None else res + p
    return (res,)


def _copy_multi_jvp(ns, tangents, primals, outs, parts, in_shape):
    from .views import geo_take
    r = tuple(geo_take(ns, tangents[0], idx, mode) for idx, mode, _ in parts)
    return r if len(r) > 1 else r[0]


_COPY_OPS: dict = {}


def _copy_op(node: str, n: int | None) -> Op:
    op = _COPY_OPS.get((node, n))
    if op is None:
        if n is None:
            op = Op(node, _copy_fwd, _copy_vjp, _copy_jvp, node=node, names=())
        else:
            op = Op(node, lambda x, parts, in_shape: tuple(p[2] for p in parts) if len(
                parts) > 1 else parts[0][2],
                    _copy_multi_vjp, _copy_multi_jvp, n_out=n, node=node, names=())
        _COPY_OPS[(node, n)] = op
    return op


def _geometry(x: Tensor, v: Tensor) -> tuple:
    from .views import view_geometry
    idx, mode = view_geometry(x._data, v._data)
    return idx, mode, np.array(v._data, order="C")


def _make_copy(name: str, view_fn, node: str):
    def f(input: Tensor, *args, **kwargs):
        v = view_fn(input.detach(), *args, **kwargs)
        if isinstance(v, (tuple, list)):
            parts = tuple(_geometry(input, p) for p in v)
            if not parts:
                return ()
            r = apply(_copy_op(node, len(parts)), (input,), (parts, input._data.shape))
            return list(r) if isinstance(r, tuple) else [r]
        idx, mode, data = _geometry(input, v)
        name = node(*args, **kwargs) if callable(node) else node
        return apply(_copy_op(name, None), (input,), (idx, mode, input._data.shape, data))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.{name}``: ``{name[:-5]}``'s result as a new tensor."
    return f


def narrow_copy_checked(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow`` after ``narrow_copy``'s own checks (its kernel words them differently)."""
    from . import views as V
    start = V.narrow_start(x, start)
    n = x._data.ndim
    if dim >= n:   # (a negative dim is wrapped, with the usual IndexError)
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    size = x._data.shape[_wrap_dim(dim, n)]
    if length < 0 and -size <= start <= size:
        raise RuntimeError(f"start ({start % size if size else start}) + length ({length}) "
                           f"exceeds dimension size ({size}).")
    return V.narrow(x, dim, start, length)


def _copy_functions() -> dict:
    from . import views as V
    from .copy import view_dtype

    def alias(x):
        return apply(V.ALIAS, (x,), (x._data.shape, ()))

    def slice_(x, dim=0, start=None, end=None, step=1):
        n = x._data.shape[_wrap_dim(dim, x._data.ndim)]
        s, e, st = slice(start, end, step).indices(n)
        return V.slice_dim(x, _wrap_dim(dim, x._data.ndim), s, e, st)

    specs = [
        ("alias_copy", alias, "AliasBackward0_copy"),
        ("as_strided_copy", V.as_strided, "AsStridedBackward0_copy"),
        ("diagonal_copy", V.diagonal, "DiagonalBackward0_copy"),
        ("expand_copy", lambda x, size, implicit=False: V.expand(x, size),
         "ExpandBackward0_copy"),
        ("narrow_copy", narrow_copy_checked, "NarrowCopyBackward0"),
        ("permute_copy", V.permute, "PermuteBackward0_copy"),
        ("select_copy", V.select, "SelectBackward0_copy"),
        ("slice_copy", slice_, "SliceBackward0_copy"),
        ("split_copy", V.split, "SplitBackward0_copy"),
        ("split_with_sizes_copy", split_with_sizes, "SplitWithSizesBackward0_copy"),
        ("squeeze_copy", V.squeeze, lambda dim=None: "SqueezeBackward%d_copy" % (
            0 if dim is None else 2 if isinstance(dim, (tuple, list)) else 1)),
        ("t_copy", V.t, "TBackward0_copy"),
        ("transpose_copy", V.transpose, "TransposeBackward0_copy"),
        ("unbind_copy", V.unbind, "UnbindBackward0_copy"),
        ("unfold_copy", V.unfold, "UnfoldBackward0_copy"),
        ("unsqueeze_copy", V.unsqueeze, "UnsqueezeBackward0_copy"),
        ("view_as_complex_copy", V.view_as_complex, "ViewAsComplexBackward0_copy"),
        ("view_as_real_copy", V.view_as_real, "ViewAsRealBackward0_copy"),
        ("view_copy", lambda x, *s: (view_dtype(x, s[0]) if len(s) == 1 and isinstance(
            s[0], D.dtype) else V.view(x, *s)), "ViewBackward0_copy"),
    ]
    return {name: _make_copy(name, fn, node) for name, fn, node in specs}


_COPIES = _copy_functions()
globals().update(_COPIES)
__all__ += sorted(_COPIES)


# ---- methods ------------------------------------------------------------------------------

for _name, _fn in [("positive", positive), ("ravel", ravel), ("type_as", type_as),
                   ("is_nonzero", is_nonzero), ("bitwise_left_shift", bitwise_left_shift),
                   ("bitwise_right_shift", bitwise_right_shift),
                   ("bitwise_left_shift_", _lshift_), ("bitwise_right_shift_", _rshift_),
                   ("__lshift__", _dunder(bitwise_left_shift)),
                   ("__rshift__", _dunder(bitwise_right_shift)),
                   ("__rlshift__", _dunder(bitwise_left_shift, True)),
                   ("__rrshift__", _dunder(bitwise_right_shift, True)),
                   ("__ilshift__", _lshift_), ("__irshift__", _rshift_),
                   ("gcd", gcd), ("gcd_", _gcd_), ("lcm", lcm), ("lcm_", _lcm_),
                   ("angle", angle), ("aminmax", aminmax), ("addr", addr),
                   ("addbmm", addbmm), ("dsplit", dsplit),
                   ("split_with_sizes", split_with_sizes),
                   ("squeeze_", squeeze_), ("unsqueeze_", unsqueeze_), ("transpose_", transpose_),
                   ("swapdims_", transpose_), ("swapaxes_", transpose_), ("t_", t_),
                   ("fill_diagonal_", fill_diagonal_)]:
    method(_name, _fn)


@method("addr_")
def _addr_(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    addr(self, vec1, vec2, beta=beta, alpha=alpha)   # the checks, on the out-of-place form
    return inplace(ADDR, self, (vec1, vec2), (beta, alpha), overlap=2)


@method("addbmm_")
def _addbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    return inplace(ADDBMM, self, (batch1, batch2), (beta, alpha), overlap=2)


# ---- kthvalue's tie-breaking ------------------------------------------------------------------

def _gt_or_nan(x, y) -> bool:
    return (x != x and y == y) or x > y


def _quick_select(v: list, ix: list, k: int) -> None:
    """PyTorch's ``quick_select_template`` (median-of-three pivot, NaN largest), run on the
    values ``v`` and their indices ``ix`` together: which of several equal values it leaves
    at position ``k`` decides kthvalue's index."""
    def swap(a, b):
        v[a], v[b] = v[b], v[a]
        ix[a], ix[b] = ix[b], ix[a]
    lo, hi = 0, len(v) - 1
    while True:
        if hi <= lo:
            return
        if hi == lo + 1:
            if _gt_or_nan(v[lo], v[hi]):
                swap(lo, hi)
            return
        swap(lo + (hi - lo) // 2, lo + 1)
        if _gt_or_nan(v[lo + 1], v[hi]):
            swap(lo + 1, hi)
        if _gt_or_nan(v[lo], v[hi]):
            swap(lo, hi)
        if _gt_or_nan(v[lo + 1], v[lo]):
            swap(lo + 1, lo)
        i, j = lo + 1, hi
        piv = v[lo]
        while True:
            i += 1
            while _gt_or_nan(piv, v[i]):
                i += 1
            j -= 1
            while _gt_or_nan(v[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


def kthvalue_indices(a: np.ndarray, d: int, k: int, stable_idx: np.ndarray) -> np.ndarray:
    """kthvalue's indices (``k`` 1-based, a size-1 ``d`` kept) as PyTorch picks them: rows whose
    k-th value is unique take it from ``stable_idx`` (a stable sort's pick); rows with ties
    run PyTorch's quickselect."""
    m = np.moveaxis(a, d, -1)
    rows = m.reshape(-1, m.shape[-1])
    picked = np.moveaxis(stable_idx, d, -1).reshape(-1).copy()
    kv = rows[np.arange(rows.shape[0]), picked]
    eq = (rows == kv[:, None]) | (np.isnan(rows) & np.isnan(kv)[:, None]) if rows.dtype.kind in \
        "fc" else rows == kv[:, None]
    for r in np.nonzero(eq.sum(axis=1) > 1)[0]:
        v = rows[r].tolist()
        ix = list(range(len(v)))
        _quick_select(v, ix, k - 1)
        picked[r] = ix[k - 1]
    out = picked.reshape(m.shape[:-1] + (1,))
    return np.moveaxis(out, -1, d)


# ---- resize_ ----------------------------------------------------------------------------------

def resize_(self: Tensor, *sizes, memory_format=None) -> Tensor:
    """``Tensor.resize_``: new sizes with contiguous strides (or ``memory_format``'s) over the
    same storage from the tensor's storage offset; storage that is too small grows (the old
    contents kept, the new elements uninitialised), and, unlike PyTorch's, the grown storage is
    this tensor's alone."""
    from .. import _layout as _L
    from .._tensor import _root
    from .views import _as_strided_np, _shape_arg
    mf = _L.check_format(memory_format, "resize_")
    size = _shape_arg(sizes)
    if any(s < 0 for s in size):
        raise RuntimeError("numel: integer multiplication overflow")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if mf is _L.preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    # (PyTorch resizes, then restrides to the format: its rank check comes after the resize)
    d = self._data
    if tuple(size) != d.shape:
        n = int(np.prod(size, dtype=np.int64))
        off = self.storage_offset()
        root = _root(d)
        if off + n <= root.size:
            new = _as_strided_np(d, size, _L.contiguous_strides(size), off)
        else:
            flat = (root.reshape(-1) if root.flags.c_contiguous else
                    np.lib.stride_tricks.as_strided(root, (root.size,), (root.itemsize,))
                    if root.flags.f_contiguous else root.reshape(-1))
            buf = np.empty(off + n, d.dtype)
            fill_uninitialized(buf)   # (deterministic mode: NaN past the old storage)
            buf[:flat.size] = flat
            new = buf[off:].reshape(size)
        self._data = new
    if mf is not None:
        # the same elements of storage, laid out in the format
        self._data = _as_strided_np(self._data, size, _L.format_strides(size, mf),
                                    self.storage_offset())
    if tuple(size) != d.shape:
        # (after the format's checks, as PyTorch bumps on success only; equal sizes: none)
        self._vc.v += 1
    return self


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:
    """``Tensor.resize_as_``: ``resize_`` to another tensor's sizes; ``preserve_format`` takes
    the template's suggested format (channels-last strides stay channels-last)."""
    from .. import _layout as _L
    mf = _L.check_format(memory_format, "resize_as_")
    shape = tuple(the_template._data.shape)
    if mf is _L.preserve_format:
        mf = _L.suggest_format(shape, the_template.stride())
    return resize_(self, shape, memory_format=mf)


method("resize_", resize_)
method("resize_as_", resize_as_)


# ---- more torch.* functions: unsafe splits, fill, index helpers, aten-level aliases -------------

def _unsafe(name: str, view_fn, node: str):
    def g(input: Tensor, *args, **kwargs):
        from .views import view_geometry
        # PyTorch's pieces are split's views of the input's memory (its strides) given fresh
        # version counters and no view history
        vs = view_fn(input.detach(), *args, **kwargs)
        parts = tuple(view_geometry(input._data, v._data) + (v._data,) for v in vs)
        if not parts:
            return ()
        r = apply(_copy_op(node, len(parts)), (input,), (parts, input._data.shape))
        return r if isinstance(r, tuple) else (r,)
    g.__name__ = g.__qualname__ = name
    g.__doc__ = (f"``torch.{name}``: like ``{name[7:]}`` but the pieces are not views to "
                 "autograd (they share the input's memory, not its version counter).")
    return g


def _unsafe_functions() -> dict:
    from . import views as V
    return {"unsafe_split": _unsafe("unsafe_split", V.split, "UnsafeSplitBackward0"),
            "unsafe_chunk": _unsafe("unsafe_chunk", V.chunk, "UnsafeSplitBackward0"),
            "unsafe_split_with_sizes": _unsafe("unsafe_split_with_sizes", split_with_sizes,
                                               "UnsafeSplitWithSizesBackward0")}


_UNSAFE = _unsafe_functions()
globals().update(_UNSAFE)
__all__ += sorted(_UNSAFE)
for _name, _fn in _UNSAFE.items():
    method(_name, _fn)


def _fill_ops():
    from .copy import FILL, FILL_T
    return (Op("fill", FILL.fwd, FILL.vjp, FILL.jvp, node="FillBackward0"),
            Op("fill_t", FILL_T.fwd, FILL_T.vjp, linear=True, node="FillBackward1"))


_FILL, _FILL_T = _fill_ops()


def fill(input: Tensor, value) -> Tensor:
    """``torch.fill``: a new tensor shaped like ``input`` filled with ``value`` (a number or a
    0-dim tensor, whose gradient is the sum of the output's)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("fill only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        v = value if value.dtype is input.dtype else value.to(input.dtype)
        return apply(_FILL_T, (input, v))
    return apply(_FILL, (input,), (value,))


def unravel_index(indices, shape) -> tuple:
    """``torch.unravel_index``: flat indices as a tuple of coordinate tensors for ``shape``."""
    from .creation import tensor
    idx = indices if isinstance(indices, Tensor) else tensor(indices)
    d = idx._data
    if d.dtype.kind not in "iu" or d.dtype == np.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {idx.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    # as PyTorch: floor division and modulo from the last dim, no range check (out-of-range
    # and negative indices wrap)
    rest = d.astype(np.int64)
    out = []
    for s_ in reversed(shape):
        out.append(np.mod(rest, s_) if s_ else rest * 0)
        rest = np.floor_divide(rest, s_) if s_ else rest * 0
    out.reverse()
    return tuple(_plain(np.asarray(o, np.int64)) for o in out)


def _plain(a: np.ndarray) -> Tensor:
    from .._tensor import Version, _make
    return _make(np.ascontiguousarray(a), Version(), False, None)


def _tri_indices(row: int, col: int, offset: int, upper: bool, dtype, device) -> Tensor:
    from .creation import tensor
    r, c = np.triu_indices(row, offset, col) if upper else np.tril_indices(row, offset, col)
    return tensor(np.stack([r, c]).astype(np.int64).reshape(2, -1), dtype=dtype, device=device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None, pin_memory=False) -> Tensor:
    """``torch.tril_indices``: the (2, N) coordinates of a row x col lower triangle."""
    check_factory_options(layout, pin_memory)
    return _tri_indices(row, col, offset, False, dtype or D.int64, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None, pin_memory=False) -> Tensor:
    """``torch.triu_indices``: the (2, N) coordinates of a row x col upper triangle."""
    check_factory_options(layout, pin_memory)
    return _tri_indices(row, col, offset, True, dtype or D.int64, device)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``torch.nonzero_static``: ``nonzero`` cut or padded (with ``fill_value``) to ``size``
    rows."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got "
                           f"{size}")
    d = input._data
    nz = np.argwhere(d) if d.ndim else np.argwhere(d.reshape(1))[:, :0]
    out = np.full((size, d.ndim), fill_value, np.int64)
    m = min(size, nz.shape[0])
    out[:m] = nz[:m]
    return _plain(out)


def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:
    """``torch.constant_pad_nd``: ``F.pad(input, pad, 'constant', value)``."""
    from .nn_sampling import pad_impl
    return pad_impl(input, list(pad), "constant", value)


def _grid_sampler(n: int):
    def f(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
          align_corners: bool) -> Tensor:
        from .nn_grid import grid_sample
        mode = ("bilinear", "nearest", "bicubic")[interpolation_mode]
        pad = ("zeros", "border", "reflection")[padding_mode]
        if input._data.ndim != n + 2:
            raise RuntimeError(f"grid_sampler(): expected {n + 2}D input and grid with same "
                               f"number of dimensions, but got input with sizes "
                               f"{list(input._data.shape)} and grid with sizes "
                               f"{list(grid._data.shape)}")
        return grid_sample(input, grid, mode, pad, align_corners)
    f.__name__ = f.__qualname__ = f"grid_sampler_{n}d"
    f.__doc__ = (f"``torch.grid_sampler_{n}d``: ``F.grid_sample`` with the modes given as "
                 "numbers (0 bilinear/zeros, 1 nearest/border, 2 bicubic/reflection).")
    return f


grid_sampler_2d = _grid_sampler(2)
grid_sampler_3d = _grid_sampler(3)
__all__ += ["constant_pad_nd", "fill", "grid_sampler_2d", "grid_sampler_3d", "nonzero_static",
            "tril_indices", "triu_indices", "unravel_index"]
method("nonzero_static", nonzero_static)


# ---- strided allocations ---------------------------------------------------------------------

def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """``torch.empty_permuted``: a tensor of ``size`` whose memory holds the dims in the order
    ``physical_layout`` (outermost first); zero-filled here."""
    check_factory_options(layout, pin_memory)
    size = tuple(size)
    perm = tuple(physical_layout)
    n = len(size)
    if len(perm) != n:
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {n} is not equal to "
                           f"len(physical_layout) = {len(perm)}")
    for i, p in enumerate(perm):
        if not 0 <= p < n:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {n - 1}, "
                               f"but got {p} at index {i}).  NB: negative dims not currently "
                               "supported; file an issue if you want it.")
    if len(set(perm)) != n:
        raise RuntimeError("Duplicate dim not allowed")
    strides = [0] * len(size)
    acc = 1
    for p in reversed(perm):
        strides[p] = acc
        acc *= max(size[p], 1)
    from .creation import empty_strided
    return empty_strided(size, strides, dtype=dtype, device=device, requires_grad=requires_grad)


def new_empty_strided(self: Tensor, size, stride, *, dtype=None, device=None,
                      requires_grad: bool = False, layout=None, pin_memory=False) -> Tensor:
    """``Tensor.new_empty_strided``: a tensor with the given sizes and strides (zero-filled
    here), of ``self``'s dtype unless given."""
    from .creation import empty_strided
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device,
                         requires_grad=requires_grad, layout=layout, pin_memory=pin_memory)


__all__ += ["empty_permuted"]
method("new_empty_strided", new_empty_strided)


# ---- native_* norms: the nn.functional norms with their statistics ---------------------------

def _stats(x: Tensor, axes: tuple, keep_shape, eps: float) -> tuple:
    """mean and 1/sqrt(biased var + eps) of ``x`` over ``axes`` (computed in float32 for half
    types, returned in ``x``'s dtype), outside autograd as PyTorch's."""
    d = x._data
    cd = np.float32 if d.dtype.itemsize < 4 else d.dtype
    w = d.astype(cd)
    mean = w.mean(axis=axes, keepdims=True)
    var = ((w - mean) ** 2).mean(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    return (_plain(mean.reshape(keep_shape).astype(d.dtype)),
            _plain(rstd.reshape(keep_shape).astype(d.dtype)))


def native_layer_norm(input: Tensor, normalized_shape, weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple:
    """``torch.native_layer_norm``: ``(F.layer_norm(...), mean, rstd)``; the statistics keep
    the normalised dims as size 1 and carry no gradient."""
    from .nn_norm import layer_norm
    out = layer_norm(input, normalized_shape, weight, bias, eps)
    k = len(tuple(normalized_shape))
    n = input._data.ndim
    shape = input._data.shape[:n - k] + (1,) * k
    return (out,) + _stats(input, tuple(range(n - k, n)), shape, eps)


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                      momentum: float, eps: float) -> tuple:
    """``torch.native_batch_norm``: ``(F.batch_norm(...), save_mean, save_invstd)``: the batch
    statistics per channel in training, empty tensors in evaluation."""
    from .nn_norm import batch_norm
    if training:
        axes = (0,) + tuple(range(2, input._data.ndim))
        stats = _stats(input, axes, (input._data.shape[1],), eps)
    else:
        e = np.zeros((0,), input._data.dtype)
        stats = (_plain(e), _plain(e.copy()))
    out = batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    return (out,) + stats


__all__ += ["native_batch_norm", "native_layer_norm"]
