"""Pointwise ops: arithmetic, powers, exponentials, logarithms, trigonometry, activations.

Each op: a forward on arrays, a VJP written once for both namespaces (``ns`` is NP on the fast
path, EM under create_graph), and a JVP derived from the VJP (``elementwise=True``), from the
forward (``linear=True``) or written out. Broadcast reduction and dtype casts of gradients are the
engine's. Complex gradients follow PyTorch's convention: ``grad * conj(f'(z))``.

Every op is attached as a function, a ``Tensor`` method and, where PyTorch has one, an in-place
``method_`` (see ``_unary``); comparisons, clamp, where and friends live in ``pointwise_more``.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype as D
from .. import _scalar as S
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from . import _opmath as _OM
from ._dispatch import HALF_NP, binary, check_inplace, fused_vjp, inplace, unary
from ._out import FOUND, with_out
from ._parser import NUMBERS, binary_dunder, check_operands, invalid_combination
from ._registry import Op, method, ns_fn

__all__ = [
    "abs",
    "absolute",
    "acos",
    "add",
    "arccos",
    "arcsin",
    "arcsinh",
    "arctan",
    "asin",
    "atan",
    "cos",
    "cosh",
    "div",
    "divide",
    "exp",
    "expm1",
    "float_power",
    "log",
    "log1p",
    "log2",
    "log10",
    "mul",
    "multiply",
    "neg",
    "negative",
    "pow",
    "reciprocal",
    "relu",
    "rsqrt",
    "rsub",
    "sgn",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "sub",
    "subtract",
    "tan",
    "tanh",
    "true_divide",
]


def conj_np(x):
    tx = type(x)
    if tx is np.ndarray:   # (np.iscomplexobj costs more than the rest of a small VJP)
        k = x.dtype.kind
        if k == "V" and x.dtype.names is not None:   # complex32 pairs (ember._chalf)
            from .._chalf import conj
            return conj(x)
        return np.conj(x) if k == "c" else x
    if tx is float or tx is int:
        return x
    return np.conj(x) if np.iscomplexobj(x) else x


def _conj_em(x):
    if isinstance(x, complex):
        return x.conjugate()
    return x.conj() if isinstance(x, Tensor) and x.is_complex() else x


ns_fn("conj", conj_np, _conj_em)
def _part_np(name: str):
    def part(x):
        if isinstance(x, np.ndarray) and x.dtype.names is not None:   # complex32 pairs
            return x[name]   # (a view, as np.real of a complex array)
        return getattr(np, name)(x)
    return part


ns_fn("real_of", _part_np("real"), lambda x: x.real)


def _is_cplx(x) -> bool:
    if isinstance(x, Tensor):
        return x.is_complex()
    # (complex32 pairs: a structured dtype, ember._chalf)
    return np.iscomplexobj(x) or isinstance(x, np.ndarray) and x.dtype.names is not None


def _type_name(d) -> str:
    from ._dispatch import _type_name as tn
    return tn(d)


def _not_impl(kernel: str, dtype):
    """PyTorch's error for a kernel without an implementation for ``dtype``."""
    if not isinstance(dtype, D.dtype):
        dtype = D._FROM_NP[np.dtype(dtype)]
    return NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(dtype)}\'')


# ---- arithmetic ----------------------------------------------------------------------------

def _add_fwd(a, b, alpha):
    if alpha == 1:
        return np.add(a, b)
    return _half_axpy(a, b, alpha, 1) if _half_in(a, b) else np.add(a, b * alpha)


def _half_in(a, b) -> bool:
    return any(type(x) is np.ndarray and x.dtype in HALF_NP for x in (a, b))


def _half_axpy(a, b, alpha, sign):
    """``a + sign * alpha * b`` as PyTorch's add kernel computes half types: operands and alpha
    rounded to the half type, one fused multiply-add in float32 (exact in float64: the product
    of two halves fits), rounded to float32 and then to the half type."""
    h = next(x.dtype for x in (a, b) if type(x) is np.ndarray and x.dtype in HALF_NP)
    a64, b64, al = (np.asarray(x, h).astype(np.float64) for x in (a, b, alpha))
    return (a64 + (sign * al) * b64).astype(np.float32).astype(h)


_BF16 = HALF_NP[1]


def _alpha_vjp(ns, g, alpha):
    """``g * alpha``; a half gradient array reads alpha in float32 (PyTorch's mul kernel)."""
    if type(g) is np.ndarray and g.dtype in HALF_NP:
        return _half_scalar_op(np.multiply, g, alpha)
    return g * ns.conj(alpha)


def _add_vjp(ns, g, need, alpha):
    if alpha != 1 and need[1] and type(g) is np.ndarray and g.dtype in HALF_NP:
        return (g if need[0] else None, _alpha_vjp(ns, g, alpha))
    return (g if need[0] else None,
            (g if alpha == 1 else g * ns.conj(alpha)) if need[1] else None)


ADD = Op("add", _add_fwd, _add_vjp, elementwise=True, ufunc=np.add, names=("alpha",))


def _sub_fwd(a, b, alpha):
    if alpha == 1:
        return np.subtract(a, b)
    return _half_axpy(a, b, alpha, -1) if _half_in(a, b) else np.subtract(a, b * alpha)


def _sub_vjp(ns, g, need, alpha):
    if alpha != 1 and need[1] and type(g) is np.ndarray and g.dtype in HALF_NP:
        return (g if need[0] else None, _alpha_vjp(ns, -g, alpha))
    return (g if need[0] else None,
            (-g if alpha == 1 else g * -ns.conj(alpha)) if need[1] else None)


SUB = Op("sub", _sub_fwd, _sub_vjp, elementwise=True, ufunc=np.subtract, names=("alpha",))


def _rsub_fwd(a, b, alpha):
    return _sub_fwd(b, a, alpha)


def _rsub_vjp(ns, g, need, alpha):
    gb, ga = _sub_vjp(ns, g, (need[1], need[0]), alpha)
    return ga, gb


RSUB = Op("rsub", _rsub_fwd, _rsub_vjp, elementwise=True, node="RsubBackward0")
RSUB_S = Op("rsub_s", _rsub_fwd, _rsub_vjp, elementwise=True, node="RsubBackward1")


def _mul_vjp(ns, g, need, a, b):
    if type(g) is np.ndarray and g.dtype.itemsize == 2 and g.dtype in HALF_NP:
        # grad * scalar runs PyTorch's mul kernel, which reads the scalar in float32
        return (_half_scalar_op(np.multiply, g, b) if need[0] else None,
                _half_scalar_op(np.multiply, g, a) if need[1] else None)
    return (g * ns.conj(b) if need[0] else None, g * ns.conj(a) if need[1] else None)


def _half_scalar_op(f, g, s):
    """``f(g, s)`` for a half gradient array: a scalar ``s`` (Python number or 0-dim array) is
    applied in float32 and the result rounded once, as PyTorch's mul and div kernels do."""
    if isinstance(s, (int, float)) or (type(s) is np.ndarray and not s.ndim
                                       and s.dtype.kind in "biuf"):
        return f(g.astype(np.float32), np.float32(s)).astype(g.dtype)
    return f(g, np.conj(s) if np.iscomplexobj(s) else s)


MUL = Op("mul", np.multiply, _mul_vjp, saves=(0, 1), elementwise=True, ufunc=np.multiply,
         save_if=(1, 0))


def _div_vjp(ns, g, need, a, b):
    if type(g) is np.ndarray and g.dtype in HALF_NP:
        if not need[1]:
            return (_half_scalar_op(np.true_divide, g, b), None)
        if not _is_cplx(a) and not _is_cplx(b):
            # PyTorch's div backward, op by op in the half type: grad / other and
            # -grad * ((self / other) / other)
            return (g / b if need[0] else None, -g * ((a / b) / b))
    gb = g / ns.conj(b)
    return (gb if need[0] else None, -gb * ns.conj(a / b) if need[1] else None)


DIV = Op("div", np.true_divide, _div_vjp, saves=(0, 1), elementwise=True, ufunc=np.true_divide,
         save_if=(1, None))


def _check_alpha(a, b, alpha) -> None:
    if alpha != 1 and isinstance(alpha, float):
        for x in (a, b):
            if isinstance(x, Tensor) and not (x.is_floating_point() or x.is_complex()):
                raise RuntimeError(
                    "For integral input tensors, argument alpha must not be a floating point "
                    "number.")
    if isinstance(alpha, (int, float, complex)):
        # PyTorch converts alpha to the common dtype with its overflow check
        rt = D.result_type_of([x for x in (a, b) if isinstance(x, (Tensor, int, float, complex))])
        if isinstance(alpha, complex) and not rt.is_complex:
            raise RuntimeError(
                "For non-complex input tensors, argument alpha must not be a complex number.")
        S.to_dtype(alpha, rt)


def _check_bool_sub(a, b) -> None:
    if all(isinstance(x, bool) or isinstance(x, Tensor) and x._data.dtype == np.bool_
           for x in (a, b)):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead.")
    if any(isinstance(x, bool) or isinstance(x, Tensor) and x._data.dtype == np.bool_
           for x in (a, b)):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def add(input, other, *, alpha=1, out=None) -> Tensor:
    """``torch.add``: input + alpha * other, with PyTorch's type promotion."""
    if out is not None:
        return with_out(add, out, (input, other), {"alpha": alpha}, overlap=True)
    if alpha != 1:
        _check_alpha(input, other, alpha)
    return binary(ADD, input, other, (alpha,))


def sub(input, other, *, alpha=1, out=None) -> Tensor:
    """``torch.sub``: input - alpha * other."""
    if out is not None:
        return with_out(sub, out, (input, other), {"alpha": alpha}, overlap=True)
    _check_bool_sub(input, other)
    if alpha != 1:
        _check_alpha(input, other, alpha)
    return binary(SUB, input, other, (alpha,))


def rsub(input, other, *, alpha=1) -> Tensor:
    """``torch.rsub``: other - alpha * input."""
    if not isinstance(input, Tensor):
        raise invalid_combination("rsub", (input, other), {"alpha": alpha if alpha != 1 else None})
    _check_bool_sub(other, input)
    if not isinstance(other, Tensor):
        x = input._x
        if x is not None and x.inference and not STATE.inference:
            # PyTorch's dispatch skips autograd for an inference tensor: rsub.Scalar's kernel
            # then calls sub on the wrapped number, a normal tensor, which records SubBackward0
            return sub(other, input, alpha=alpha)
        return binary(RSUB_S, input, other, (alpha,))
    return binary(RSUB, input, other, (alpha,))


def mul(input, other, *, out=None) -> Tensor:
    """``torch.mul``."""
    if out is not None:
        return with_out(mul, out, (input, other), overlap=True)
    return binary(MUL, input, other)


def div(input, other, *, rounding_mode=None, out=None) -> Tensor:
    """``torch.div``: true division (ints become the default float) or rounded division."""
    if out is not None:
        return with_out(div, out, (input, other), {"rounding_mode": rounding_mode},
                        overlap=True)
    if rounding_mode is None:
        return binary(DIV, input, other, int_to_float=True)
    from .pointwise_more import rounded_div
    return rounded_div(input, other, rounding_mode)


def true_divide(input, other, *, out=None) -> Tensor:
    """``torch.true_divide``."""
    if out is not None:
        return with_out(true_divide, out, (input, other), name="div", overlap=True)
    return binary(DIV, input, other, int_to_float=True)


subtract, multiply, divide = sub, mul, div

NEG = Op("neg", np.negative, lambda ns, g, need: (-g,), linear=True)


def neg(input: Tensor, *, out=None) -> Tensor:
    """``torch.neg``."""
    if out is not None:
        return with_out(neg, out, (input,), overlap=True, dtype=FOUND)
    _check_neg(input)
    return unary(NEG, input)


def _check_neg(input):
    if input._data.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.")


negative = neg


# ---- one-input ops: a table-driven definition -------------------------------------------

# one-input ops whose out= must have the result's dtype (PyTorch checks it, not can_cast)
_FOUND_OUT = frozenset({"abs", "ceil", "floor", "frac", "sgn", "sign", "trunc"})


def _abs_complex_out(rd, od) -> None:
    """abs of a complex tensor with out=: PyTorch computes the real result and copies it out
    (any dtype it can be cast to), except that a complex out must be the input's own dtype."""
    if od.is_complex and od is not rd.to_complex():
        raise RuntimeError(FOUND.format(o=_type_name(od), r=_type_name(rd.to_complex())))
    if not D.can_cast(rd, od):
        raise RuntimeError(f"result type {_type_name(rd)} can't be cast to the desired output "
                           f"type {_type_name(od)}")


def _unary(name, fwd, vjp, *, saves=None, save_out=False, int_to_float=True, node=None,
           jvp=None, elementwise=True, check=None, aliases=()):
    """Define a one-input op: its Op, the function, the method and the in-place method."""
    if saves is None:
        saves = () if save_out else (0,)
    op = Op(name, fwd, vjp, jvp=jvp, saves=saves, save_out=save_out, node=node,
            elementwise=elementwise and jvp is None)
    out_rule = FOUND if name in _FOUND_OUT else "cast"

    def f(input: Tensor, *, out=None) -> Tensor:
        if out is not None:
            rule = _abs_complex_out if name == "abs" and input.is_complex() else out_rule
            return with_out(f, out, (input,), overlap=True, name=name, dtype=rule)
        if check is not None:
            check(input)
        return unary(op, input, (), int_to_float)

    def f_(self: Tensor) -> Tensor:
        if check is not None:
            check(self)
        return inplace(op, self, (), (), int_to_float)

    def m(self: Tensor) -> Tensor:
        # the method: PyTorch's Tensor.<name>() takes no out=, and skipping its test keeps the
        # per-op cost down
        if check is not None:
            check(self)
        return unary(op, self, (), int_to_float)

    f.__name__ = f.__qualname__ = m.__name__ = m.__qualname__ = name
    f.__doc__ = m.__doc__ = f"``torch.{name}``."
    for n in (name,) + aliases:
        method(n, m)
        method(n + "_", f_)
    return op, f


def _real_only(kernel):
    def check(t):
        if t.is_complex():
            raise _not_impl(kernel, t.dtype)
    return check


def _no_bool(kernel):
    def check(t):
        if t._data.dtype == np.bool_:
            raise _not_impl(kernel, t.dtype)
    return check


EXP, exp = _unary("exp", np.exp, lambda ns, g, need, r: (g * ns.conj(r),), save_out=True)
EXPM1, expm1 = _unary("expm1", np.expm1, lambda ns, g, need, r: (g * ns.conj(r + 1),),
                      save_out=True)
LOG, log = _unary("log", np.log, lambda ns, g, need, x: (g / ns.conj(x),))
LOG1P, log1p = _unary("log1p", np.log1p, lambda ns, g, need, x: (g / ns.conj(x + 1),),
                      node="Log1PBackward0")
_LN2, _LN10 = math.log(2.0), math.log(10.0)
LOG2, log2 = _unary("log2", np.log2, lambda ns, g, need, x: (g / ns.conj(x * _LN2),))
LOG10, log10 = _unary("log10", np.log10, lambda ns, g, need, x: (g / ns.conj(x * _LN10),))
SIN, sin = _unary("sin", np.sin, lambda ns, g, need, x: (g * ns.conj(ns.cos(x)),))


def _cos_np(x):
    if x.dtype == np.float16:
        # NumPy's float16 cos loop misses PyTorch's value (float32 cos, rounded) at 2 inputs
        return np.cos(x.astype(np.float32)).astype(np.float16)
    return np.cos(x)


COS, cos = _unary("cos", _cos_np, lambda ns, g, need, x: (g * -ns.conj(ns.sin(x)),))
TAN, tan = _unary("tan", np.tan, lambda ns, g, need, r: (g * ns.conj(r * r + 1),),
                  save_out=True)
ASIN, asin = _unary("asin", np.arcsin,
                    lambda ns, g, need, x: (g / ns.conj(ns.sqrt(-x * x + 1)),),
                    aliases=("arcsin",))
ACOS, acos = _unary("acos", np.arccos,
                    lambda ns, g, need, x: (-g / ns.conj(ns.sqrt(-x * x + 1)),),
                    aliases=("arccos",))
ATAN, atan = _unary("atan", np.arctan, lambda ns, g, need, x: (g / ns.conj(x * x + 1),),
                    aliases=("arctan",))
arcsin, arccos, arctan = asin, acos, atan
SINH, sinh = _unary("sinh", np.sinh, lambda ns, g, need, x: (g * ns.conj(ns.cosh(x)),))
COSH, cosh = _unary("cosh", np.cosh, lambda ns, g, need, x: (g * ns.conj(ns.sinh(x)),))
ASINH, arcsinh = _unary("asinh", np.arcsinh,
                        lambda ns, g, need, x: (g / ns.conj(ns.sqrt(x * x + 1)),),
                        aliases=("arcsinh",))
TANH, tanh = _unary("tanh", np.tanh,
                    fused_vjp(lambda ns, g, need, r: (g * ns.conj(1 - r * r),)), save_out=True)
SQRT, sqrt = _unary("sqrt", np.sqrt, lambda ns, g, need, r: (g / ns.conj(2 * r),),
                    save_out=True)


def _rsqrt_np(x):
    if type(x) is np.ndarray and x.dtype in HALF_NP:   # 1 / sqrt(x) in float32, one rounding
        with np.errstate(divide="ignore", invalid="ignore"):
            return _rsqrt_np(x.astype(np.float32)).astype(x.dtype)
    return np.reciprocal(np.sqrt(x))


RSQRT, rsqrt = _unary("rsqrt", _rsqrt_np,
                      lambda ns, g, need, r: (g * ns.conj(-0.5 * r * r * r),), save_out=True)
RECIPROCAL, reciprocal = _unary("reciprocal", np.reciprocal,
                                lambda ns, g, need, r: (g * -ns.conj(r * r),), save_out=True)


def _sigmoid_np(x):
    if x.dtype.itemsize == 2 and x.dtype.kind != "i":
        # half types: SLEEF's expf in float32, rounded once, as PyTorch does (_opmath)
        return _OM.sigmoidf(x.astype(np.float32)).astype(x.dtype)
    # exp(-x) overflows to inf for very negative x, where 1 / (1 + inf) is the exact 0
    e = np.asarray(np.exp(-x))   # (NumPy returns a scalar for a 0-dim input)
    e += 1
    return np.reciprocal(e, out=e)


SIGMOID, sigmoid = _unary("sigmoid", _sigmoid_np,
                          fused_vjp(lambda ns, g, need, r: (g * ns.conj(1 - r) * ns.conj(r),),
                                    HALF_NP[1:]),
                          save_out=True)


def _check_relu(t):
    if t._data.dtype == np.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    if t.is_complex():
        raise NotImplementedError("clamp is not supported for complex types")


def _relu_vjp(ns, g, need, r):
    # PyTorch's threshold_backward(grad, result, 0): NaN results pass the gradient, and under
    # create_graph the gradient stays connected to the result (with zero derivative)
    return (ns.relu_grad(g, r),)


def _relu_grad_np(g, r):
    """``where(r <= 0, 0, g)``, as a multiplication by the mask: NumPy's ``where`` on a random
    mask is about ten times slower. Non-finite gradients (inf * 0) take the exact route."""
    m = r <= 0
    if type(g) is np.ndarray and type(m) is np.ndarray:
        out = np.multiply(g, ~m)
        if np.isfinite(out).all():
            if out.dtype in HALF_NP:
                out += 0   # the masked zeros are +0 (PyTorch selects a literal 0), not g * 0
            return out
    return np.where(m, 0, g)


ns_fn("dep_zero", lambda x: 0, lambda x: x * 0)
ns_fn("relu_grad", _relu_grad_np, lambda g, r: _where_em(r <= 0, r * 0, g))
def _relu_np(x):
    """``max(x, 0)``; floats through ``clip`` with bounds of their own type, several times
    faster than ``maximum`` against a scalar and, like PyTorch, keeping -0.0 and NaN."""
    if x.dtype.kind == "f":
        t = x.dtype.type
        return np.clip(x, t(0), t(np.inf))
    if x.dtype == _BF16:   # (ml_dtypes' maximum turns -0.0 into 0.0)
        return np.where(x < 0, _BF16.type(0), x)
    return np.maximum(x, 0)


RELU, relu = _unary("relu", _relu_np, fused_vjp(_relu_vjp, upcast=False), save_out=True,
                    int_to_float=False, check=_check_relu)


# sign and sgn: piecewise constant, zero gradient
def _zero_grad(ns, g, need, *saved):
    return tuple(ns.zeros_of(g, g.shape) if n else None for n in need)


def _check_sign(t):
    if t.is_complex():
        raise NotImplementedError(
            "Unlike NumPy, ember.sign is not intended to support complex numbers. Please use "
            "ember.sgn instead.")


def _sign_np(x):
    """PyTorch's sign of a real tensor: a bool is itself, NaN's sign is 0, and zeros give +0
    (ml_dtypes' bfloat16 sign keeps NaN and -0.0)."""
    if x.dtype == np.bool_:
        return x.copy()
    r = np.sign(x)
    if x.dtype.kind == "f" or x.dtype == _BF16:
        r = np.where(np.isnan(x), 0, r).astype(r.dtype, copy=False)
        if x.dtype == _BF16:
            r += _BF16.type(0)
    return r


SIGN, sign = _unary("sign", _sign_np, _zero_grad, saves=(), int_to_float=False, check=_check_sign)


def _sgn_np(x):
    if not np.iscomplexobj(x):
        return _sign_np(x)   # (a real tensor's sgn is its sign)
    a = np.abs(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(a == 0, 0, x / np.where(a == 0, 1, a)).astype(x.dtype, copy=False)


def _sgn_vjp(ns, g, need, x, r):
    if not _is_cplx(x):
        return (ns.zeros_of(g, g.shape),)
    # PyTorch's form (g - r^2 conj(g)) / 2|x|: the same first derivative as
    # g - r Re(g conj(r)) / |x|, but a double backward differentiates the saved result r
    # through this expression (at x = 0 that second derivative is NaN, as PyTorch's)
    a = ns.abs(x)
    return (ns.masked_fill((g - r * r * ns.conj(g)) / (2 * a), a == 0, 0),)


def _sgn_jvp(ns, tangents, primals, outs):
    # PyTorch: sgn_backward(self_p, self_t, result), the same map applied to the tangent
    return _sgn_vjp(ns, tangents[0], (True,), primals[0], outs[0])[0]


SGN, sgn = _unary("sgn", _sgn_np, _sgn_vjp, saves=(0,), save_out=True, int_to_float=False,
                  jvp=_sgn_jvp)


def _abs_vjp(ns, g, need, x):
    return (g * ns.sgn(x),)


def _abs_jvp(ns, tangents, primals, outs):
    x, t = primals[0], tangents[0]
    if x.is_complex():
        return (ns.conj(ns.sgn(x)) * t).real
    return t * ns.sgn(x)


ABS, abs = _unary("abs", np.abs, _abs_vjp, jvp=_abs_jvp, int_to_float=False,
                  check=_no_bool("abs_cpu"), aliases=("absolute",))
absolute = abs


def _abs_(self: Tensor) -> Tensor:
    # PyTorch refuses in place: |z| is real and cannot be stored back into a complex tensor
    # (its kernel's check, after autograd's in-place checks)
    check_inplace(self)
    if self.is_complex():
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    _no_bool("abs_cpu")(self)
    return inplace(ABS, self, (), (), False)


method("abs_", _abs_)
method("absolute_", _abs_)

ns_fn("cos", _cos_np, cos)
ns_fn("sin", np.sin, sin)
ns_fn("cosh", np.cosh, cosh)
ns_fn("sinh", np.sinh, sinh)
ns_fn("log", np.log, log)
ns_fn("exp", np.exp, exp)
ns_fn("sqrt", np.sqrt, sqrt)
ns_fn("abs", np.abs, abs)
ns_fn("sgn", _sgn_np, sgn)


# ---- powers -------------------------------------------------------------------------------

def _int_pow(a, b):
    """Integer power with PyTorch's results for negative exponents (1, +-1 or 0)."""
    neg_b = np.asarray(b) < 0
    if not neg_b.any():
        return np.power(a, b)
    r = np.power(a, np.where(neg_b, 0, b))
    one = np.ones_like(r)
    odd = (np.asarray(b) % 2) != 0
    special = np.where(a == 1, one, np.where(a == -1, np.where(odd, -one, one), 0 * one))
    return np.where(neg_b, special, r).astype(r.dtype, copy=False)


def _pow_fwd(a, b):
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        if b == 2:
            if np.iscomplexobj(a):
                # PyTorch squares a complex number from its parts, without NumPy's fused
                # multiply-add (the low bits differ otherwise)
                re, im = a.real, a.imag
                return np.asarray(re * re - im * im + 1j * (2 * re * im), a.dtype)
            return np.multiply(a, a)
        if b == 0.5 and np.asarray(a).dtype.kind == "f":
            return np.sqrt(a)
    ka = np.asarray(a).dtype.kind
    kb = np.asarray(b).dtype.kind
    if ka == "b" and kb == "b":
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if ka in "iub" and kb in "iub":
        r = _int_pow(a, b)
        return r.astype(np.int64) if ka == "b" and r.dtype == np.bool_ else r
    return np.power(a, b)


def _exp_nonneg(ns, b):
    """``b >= 0`` for real exponents; real and non-negative for complex ones."""
    if _is_cplx(b):
        return (ns.real_of(b) >= 0) & (ns.imag_of(b) == 0)
    return b >= 0


def _pow_vjp(ns, g, need, a, b, r=None):
    # PyTorch's pow_backward / pow_backward_self / pow_backward_exponent; the exponent's
    # gradient uses the saved result where there is one (as PyTorch: a change to it through
    # ``.data`` shows, and double backward differentiates through it)
    ga = gb = None
    if need[0]:
        if isinstance(b, (int, float)) and type(a) is np.ndarray and a.dtype in HALF_NP \
                and b != 0:
            # half types, op by op as PyTorch's pow_backward: the scalar exponent multiplies
            # at float32 precision
            ga = g * _half_scalar_op(np.multiply, a ** a.dtype.type(b - 1), b)
        elif isinstance(b, (int, float, complex)):
            ga = ns.zeros_of(g, g.shape) if b == 0 else g * ns.conj(b * a ** (b - 1))
        else:
            ga = ns.where(b == 0, 0, g * ns.conj(b * a ** (b - 1)))
    if need[1]:
        if r is None:
            r = a ** b
        if isinstance(a, (int, float, complex)):
            base = complex(a) if _is_cplx(b) else a
            with np.errstate(divide="ignore", invalid="ignore"):
                la = np.log(base)
            d = ns.conj(r * (complex(la) if isinstance(base, complex) else float(la)))
            gb = g * (ns.where(_exp_nonneg(ns, b), 0, d) if a == 0 else d)
        else:
            gb = g * ns.where((a == 0) & _exp_nonneg(ns, b), 0, ns.conj(r * ns.log(a)))
    return ga, gb


ns_fn("imag_of", _part_np("imag"), lambda x: x.imag)
def _pow_s_fwd(a, b):
    """pow(Tensor, Scalar): PyTorch answers the exponents 0 and 1 (ones, a copy) before its
    dtype dispatch, so a bool base with a bool exponent works there (and nowhere else)."""
    if getattr(a, "dtype", None) == np.bool_ and np.asarray(b).dtype == np.bool_:
        return a.copy() if b else np.ones_like(a)
    return _pow_fwd(a, b)


POW = Op("pow", _pow_s_fwd, _pow_vjp, saves=(0, 1), elementwise=True, node="PowBackward0",
         names=("self", "exponent"))
# as PyTorch, a tensor exponent's forms save the result, which the exponent's gradient uses
POW_TT = Op("pow_tt", _pow_fwd, _pow_vjp,
            saves=(0, 1), save_out=True, elementwise=True, node="PowBackward1",
            names=("self", "exponent", "result"))
POW_ST = Op("pow_st", _pow_fwd, _pow_vjp,
            saves=(0, 1), save_out=True, elementwise=True, node="PowBackward2",
            names=("self", "exponent", "result"))


def _check_int_neg_pow(base, exponent) -> None:
    if (isinstance(exponent, int) and not isinstance(exponent, bool) and exponent < 0
            and isinstance(base, Tensor) and base._data.dtype.kind in "iub"):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def pow(input, exponent, *, out=None) -> Tensor:
    """``torch.pow``: tensor or scalar base and exponent."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise invalid_combination("pow", (input, exponent), {"out": out})
    if type(exponent) not in NUMBERS and not isinstance(exponent, Tensor) or \
            type(input) not in NUMBERS and not isinstance(input, Tensor):
        check_operands("pow", (input, exponent), {"out": out})
    if out is not None:
        return with_out(pow, out, (input, exponent), overlap=True)
    if not isinstance(input, Tensor):
        return binary(POW_ST, input, exponent)
    if isinstance(exponent, Tensor):
        return binary(POW_TT, input, exponent)
    if isinstance(exponent, np.generic):
        exponent = D.py_scalar(exponent)
    _check_int_neg_pow(input, exponent)
    return binary(POW, input, exponent)


def _pow_(self, exponent):
    if isinstance(exponent, Tensor):
        return inplace(POW_TT, self, (exponent,))
    _check_int_neg_pow(self, exponent)
    return inplace(POW, self, (exponent,))


def float_power(input, exponent, *, out=None) -> Tensor:
    """``torch.float_power``: pow in double (complex double) precision."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise invalid_combination("float_power", (input, exponent), {"out": out})
    if type(exponent) not in NUMBERS and not isinstance(exponent, Tensor) or \
            type(input) not in NUMBERS and not isinstance(input, Tensor):
        check_operands("float_power", (input, exponent), {"out": out})
    if out is not None:
        return with_out(float_power, out, (input, exponent), overlap=True, name="pow", dtype=(
            "the output given to float_power has dtype {o} but the operation's result "
            "requires dtype {r}"))
    def up(x):
        if isinstance(x, Tensor):
            return x.to(D.complex128 if x.is_complex() else D.float64)
        return x
    cplx = any(isinstance(x, complex) or isinstance(x, Tensor) and x.is_complex()
               for x in (input, exponent))
    r = pow(up(input), up(exponent))
    return r.to(D.complex128) if cplx and not r.is_complex() else r


def _float_power_(self: Tensor, exponent) -> Tensor:
    """``Tensor.float_power_``: as PyTorch, ``pow_`` with the exponent in double (complex
    double) precision, on a base that already has that dtype."""
    cplx = self.is_complex() or (exponent.is_complex() if isinstance(exponent, Tensor)
                                 else isinstance(exponent, complex))
    want = D.complex128 if cplx else D.float64
    if self.dtype is not want:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {_type_name(self.dtype)} but the "
            f"operation's result requires dtype {_type_name(want)}")
    if isinstance(exponent, Tensor):
        return _pow_(self, exponent.to(want))
    return _pow_(self, complex(exponent) if cplx else float(exponent))


def square(input: Tensor, *, out=None) -> Tensor:
    """``torch.square``: ``pow(input, 2)`` (bool becomes int64)."""
    if out is not None:
        return with_out(square, out, (input,), overlap=True, name="pow")
    return pow(input, 2)


ns_fn("where", lambda c, a, b: np.where(c, a, b), lambda c, a, b: _where_em(c, a, b))


def _where_em(c, a, b):
    from .pointwise_more import where
    return where(c, a, b)


# ---- Tensor methods and operators ---------------------------------------------------------

def _add_(self, other, *, alpha=1):
    if alpha != 1:
        _check_alpha(self, other, alpha)
    return inplace(ADD, self, (other,), (alpha,))


def _sub_(self, other, *, alpha=1):
    _check_bool_sub(self, other)
    if alpha != 1:
        _check_alpha(self, other, alpha)
    return inplace(SUB, self, (other,), (alpha,))


def _div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return inplace(DIV, self, (other,), (), True)
    from .pointwise_more import rounded_div_
    return rounded_div_(self, other, rounding_mode)


def _neg_(self):
    _check_neg(self)
    return inplace(NEG, self, (), (), False)


def _rtruediv(self, other):
    # PyTorch computes ``other / self`` as ``self.reciprocal() * other``
    return mul(reciprocal(self), other)


for _name, _fn in [("add", add), ("sub", sub), ("subtract", sub), ("mul", mul),
                   ("multiply", mul), ("div", div), ("divide", div), ("true_divide", true_divide),
                   ("neg", neg), ("negative", neg), ("pow", pow), ("float_power", float_power),
                   ("square", square), ("rsub", rsub)]:
    method(_name, _fn)

method("add_", _add_)
method("sub_", _sub_)
method("subtract_", _sub_)
method("mul_", lambda self, other: inplace(MUL, self, (other,)))
method("multiply_", Tensor.mul_)
method("div_", _div_)
method("divide_", _div_)
method("true_divide_", lambda self, other: inplace(DIV, self, (other,), (), True))
method("pow_", _pow_)
method("float_power_", _float_power_)
method("neg_", _neg_)
method("negative_", _neg_)
method("square_", lambda self: _pow_(self, 2))

# the operators are out-less (and skip the out= test, the commonest calls' per-op cost)
# (a TypeError, an operand of no supported type, answers NotImplemented: _parser.binary_dunder;
# the two commonest spell it out, saving a call)
@method("__add__")
def _add_op(self, other):
    try:
        return binary(ADD, self, other, (1,))
    except TypeError:
        return NotImplemented


@method("__mul__")
def _mul_op(self, other):
    try:
        return binary(MUL, self, other)
    except TypeError:
        return NotImplemented


method("__radd__", binary_dunder(lambda self, other: add(other, self)))
method("__iadd__", binary_dunder(_add_))


@method("__sub__")
def _sub_op(self, other):
    try:
        t = type(other)
        if self._data.dtype.kind == "b" or not (t is float or t is int or isinstance(
                other, Tensor) and other._data.dtype.kind != "b"):
            _check_bool_sub(self, other)   # (only a bool operand can fail it)
        return binary(SUB, self, other, (1,))
    except TypeError:
        return NotImplemented


method("__rsub__", binary_dunder(lambda self, other: rsub(self, other)))
method("__isub__", binary_dunder(_sub_))
method("__rmul__", binary_dunder(lambda self, other: mul(other, self)))
method("__imul__", binary_dunder(Tensor.mul_))
method("__truediv__", binary_dunder(true_divide))
method("__rtruediv__", binary_dunder(_rtruediv))
method("__itruediv__", binary_dunder(Tensor.true_divide_))
method("__neg__", neg)
method("__pos__", lambda self: self)
method("__abs__", abs)
method("__pow__", binary_dunder(pow))
method("__rpow__", binary_dunder(lambda self, other: pow(other, self)))
method("__ipow__", binary_dunder(_pow_))
