"""Rounding, error and gamma functions, inverse hyperbolics and other special pointwise ops.

One-input ops reuse ``pointwise._unary`` (function, method and in-place method from one table
row); those with parameters (``round(decimals=)``, ``logit(eps)``, ``nan_to_num``,
``polygamma(n, x)``) are written out. The numerics of erf, erfc, erfinv, lgamma, digamma,
polygamma and the Bessel functions come from ``scipy.special``; trigamma follows PyTorch's own
series so that values (and gradients built on them) agree with it to the last digits.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as _sc

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from . import _opmath as _OM
from ._dispatch import HALF_NP, binary, inplace, to_operand, unary
from ._out import FOUND, with_out
from ._parser import invalid_combination
from ._registry import NP, Op, method, ns_fn
from .pointwise import _cos_np, _is_cplx, _not_impl, _real_only, _unary, _zero_grad, arcsinh
from .pointwise_more import _NOT_IMPL, _nodiff, _not_implemented

__all__ = [
    "acosh",
    "arccosh",
    "arctanh",
    "asinh",
    "atanh",
    "ceil",
    "copysign",
    "deg2rad",
    "digamma",
    "erf",
    "erfc",
    "erfinv",
    "exp2",
    "fix",
    "floor",
    "fmax",
    "fmin",
    "frac",
    "heaviside",
    "hypot",
    "i0",
    "lgamma",
    "logaddexp",
    "logaddexp2",
    "logit",
    "nan_to_num",
    "polygamma",
    "rad2deg",
    "round",
    "signbit",
    "sinc",
    "trunc",
    "xlogy",
]

_SQRT_PI = math.sqrt(math.pi)
_LN2 = math.log(2.0)
_PI_180 = math.pi / 180.0
_180_PI = 180.0 / math.pi


def _npdt(x) -> np.dtype:
    """The NumPy dtype of an ndarray or a Tensor (formulas run on both)."""
    return x._data.dtype if isinstance(x, Tensor) else np.asarray(x).dtype


def _sp(fn):
    """A scipy ufunc applied in the input's precision (half types computed in float32)."""
    def f(x):
        dt = x.dtype
        if dt == np.float32 or dt == np.float64:
            return np.asarray(fn(x)).astype(dt, copy=False)
        return np.asarray(fn(x.astype(np.float32))).astype(dt)
    return f


# ---- rounding ---------------------------------------------------------------------------

def _rounding(np_fn):
    def f(x):
        if x.dtype.kind in "iu":
            return x.copy()
        return np_fn(x)
    return f


def _check_rounding(name, kernel):
    def check(t):
        if t.is_complex():
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        if t._data.dtype == np.bool_:
            raise _not_impl(kernel, t.dtype)
    return check


FLOOR, floor = _unary("floor", _rounding(np.floor), _zero_grad, saves=(), int_to_float=False,
                      check=_check_rounding("floor", "floor_vml_cpu"))
CEIL, ceil = _unary("ceil", _rounding(np.ceil), _zero_grad, saves=(), int_to_float=False,
                    check=_check_rounding("ceil", "ceil_vml_cpu"))
TRUNC, trunc = _unary("trunc", _rounding(np.trunc), _zero_grad, saves=(), int_to_float=False,
                      check=_check_rounding("trunc", "trunc_vml_cpu"), aliases=("fix",))
fix = trunc


def _round_d_np(x, decimals):
    ten = x.dtype.type(10.0 ** abs(decimals))
    if decimals < 0:
        return np.rint(x / ten) * ten
    return np.rint(x * ten) / ten


ROUND = Op("round", _rounding(np.rint), _zero_grad, elementwise=True)
ROUND_D = Op("round_d", _round_d_np, _zero_grad, elementwise=True, node="RoundBackward1")


def _round_op(t: Tensor, decimals):
    kind = t._data.dtype.kind
    if decimals is None:
        if t.is_complex() or kind == "b":
            raise _not_impl("round_vml_cpu", t.dtype)
        return ROUND, ()
    if t.is_complex() or kind not in "f" and t.dtype is not D.bfloat16:
        raise _not_impl("round_vml_cpu" if decimals == 0 else "round_cpu", t.dtype)
    return ROUND_D, (int(decimals),)


def round(input: Tensor, *, decimals=None, out=None) -> Tensor:
    """``torch.round``: half to even; ``decimals`` rounds to that many decimal places
    (RoundBackward1). Integer tensors are returned as they are (without ``decimals``)."""
    if out is not None:
        return with_out(round, out, (input,), {"decimals": decimals}, overlap=True, dtype=FOUND)
    op, params = _round_op(input, decimals)
    return unary(op, input, params)


def _round_(self: Tensor, *, decimals=None) -> Tensor:
    op, params = _round_op(self, decimals)
    return inplace(op, self, (), params)


def _check_frac(t):
    if t._data.dtype.kind not in "f" and t.dtype is not D.bfloat16:
        raise _not_impl("frac_cpu", t.dtype)


FRAC, frac = _unary("frac", lambda x: x - np.trunc(x), lambda ns, g, need: (g,), saves=(),
                    int_to_float=False, check=_check_frac)


# ---- error functions ----------------------------------------------------------------------

_erf_sp = _sp(_sc.erf)


def _erf_fwd(x):
    if type(x) is np.ndarray and x.dtype in HALF_NP:
        # PyTorch's vectorised float32 erf (Abramowitz-Stegun with SLEEF's exp), rounded once
        return _OM.erf(x.astype(np.float32)).astype(x.dtype)
    return _erf_sp(x)


def _erf_vjp(ns, g, need, x):
    if ns is NP and type(x) is np.ndarray and x.dtype in HALF_NP and type(g) is np.ndarray \
            and g.dtype == x.dtype:
        # PyTorch's formula op by op in the half type; the constant is a float32 scalar
        h = x.dtype
        e = _OM.expf(-(x * x).astype(np.float32)).astype(h)
        s = (np.float32(2.0 / _SQRT_PI) * e.astype(np.float32)).astype(h)
        return ((s.astype(np.float32) * g.astype(np.float32)).astype(h),)
    return (2.0 / _SQRT_PI * ns.exp(-(x * x)) * g,)


ERF, erf = _unary("erf", _erf_fwd, _erf_vjp, check=_real_only("erf_vml_cpu"))
ERFC, erfc = _unary("erfc", _sp(_sc.erfc),
                    lambda ns, g, need, x: (-2.0 / _SQRT_PI * ns.exp(-(x * x)) * g,),
                    check=_real_only("erfc_vml_cpu"))
# as PyTorch: self is saved and the formula recomputes self.erfinv()
ERFINV, erfinv = _unary("erfinv", _sp(_sc.erfinv),
                        lambda ns, g, need, x: (0.5 * _SQRT_PI * ns.exp(ns.erfinv(x) ** 2) * g,),
                        check=_real_only("erfinv_vml_cpu"))
ns_fn("erfinv", _sp(_sc.erfinv), erfinv)


# ---- inverse hyperbolic functions, exp2, sinc, angle conversions --------------------------------

asinh = arcsinh   # defined (with its methods) in pointwise


def _acosh_vjp(ns, g, need, x):
    if _is_cplx(x):
        return (g * ns.conj(1 / ns.sqrt(x + 1) * (1 / ns.sqrt(x - 1))),)
    return (g / ns.sqrt(x * x - 1),)


ACOSH, acosh = _unary("acosh", np.arccosh, _acosh_vjp, aliases=("arccosh",))
ATANH, atanh = _unary("atanh", np.arctanh,
                      lambda ns, g, need, x: (g / ns.conj(-(x * x) + 1),), aliases=("arctanh",))
arccosh, arctanh = acosh, atanh
EXP2, exp2 = _unary("exp2", np.exp2, lambda ns, g, need, r: (g * ns.conj(r) * _LN2,),
                    save_out=True)


def _sinc_np(x):
    if x.dtype.kind == "c":
        return np.sinc(x)
    if x.dtype != np.float32 and x.dtype != np.float64:
        return _OM.sincf(x.astype(np.float32)).astype(x.dtype)   # half types (_opmath)
    y = x * x.dtype.type(math.pi)
    r = np.sin(y) / y
    return np.where(x == 0, x.dtype.type(1), r).astype(x.dtype, copy=False)


def _sinc_vjp(ns, g, need, x):
    # PyTorch's sinc_backward
    if ns is NP and type(x) is np.ndarray and x.dtype in HALF_NP:
        # op by op in the half type, each result rounded; ``* pi`` reads pi in float32
        h = x.dtype
        pi = np.float32(math.pi)
        xp = (x.astype(np.float32) * pi).astype(h)
        sq = ((x * x).astype(np.float32) * pi).astype(h)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = g * ((xp * _cos_np(xp) - np.sin(xp)) / sq)
        return (np.where(sq == 0, np.zeros((), h), out),)
    xp = x * math.pi
    sq = x * x * math.pi
    out = g * ns.conj((xp * ns.cos(xp) - ns.sin(xp)) / sq)
    return (ns.where(sq == 0, 0, out),)


SINC, sinc = _unary("sinc", _sinc_np, _sinc_vjp)


def _no_complex_rt(name):
    def check(t):
        if t.is_complex():
            raise RuntimeError(f"{name} is not supported for complex tensors.")
    return check


def _scale(c):
    def f(x):
        return x * x.dtype.type(c)
    return f


DEG2RAD, deg2rad = _unary("deg2rad", _scale(_PI_180), lambda ns, g, need: (g * _PI_180,),
                          saves=(), check=_no_complex_rt("deg2rad"), node="Deg2RadBackward0")
RAD2DEG, rad2deg = _unary("rad2deg", _scale(_180_PI), lambda ns, g, need: (g * _180_PI,),
                          saves=(), check=_no_complex_rt("rad2deg"), node="Rad2DegBackward0")


# ---- gamma family and Bessel I0 ---------------------------------------------------------------

def _lgamma_np(x):
    r = _sp(_sc.gammaln)(x)
    return np.where(x == -np.inf, r.dtype.type(np.inf), r).astype(r.dtype, copy=False)


def _trigamma_np(x):
    """PyTorch's calc_trigamma (CPU), vectorized."""
    dt = x.dtype
    x = x.astype(np.float64 if dt == np.float64 else np.float32)
    pi = x.dtype.type(math.pi)
    neg = x < 0.5
    s = np.sin(pi * np.where(neg, x, 0))
    result = np.where(neg, -(pi * pi) / (s * s), 0).astype(x.dtype)
    x = np.where(neg, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (1. / 6 - ixx * (1. / 30 - ixx * (1. / 42)))) / x
    return np.where(neg, -result, result).astype(dt)


def _polygamma_np(x, n):
    if n == 0:
        return _sp(_sc.psi)(x)
    if n == 1:
        return _trigamma_np(x)
    r = _sp(lambda v: _sc.polygamma(n, v))(x)
    return np.where(x == np.inf, r.dtype.type(np.nan), r).astype(r.dtype, copy=False)


def _i1_np(x):
    return _sp(_sc.i1)(x)


ns_fn("special_digamma", _sp(_sc.psi), lambda x: digamma(x))
ns_fn("special_polygamma", lambda n, x: _polygamma_np(x, n), lambda n, x: polygamma(n, x))
ns_fn("special_i0", _sp(_sc.i0), lambda x: i0(x))
ns_fn("special_i1", _i1_np, lambda x: _special_i1(x))

LGAMMA, lgamma = _unary("lgamma", _lgamma_np,
                        lambda ns, g, need, x: (g * ns.special_digamma(x),),
                        check=_real_only("lgamma_vml_cpu"))
DIGAMMA, digamma = _unary("digamma", _sp(_sc.psi),
                          lambda ns, g, need, x: (g * ns.special_polygamma(1, x),),
                          check=_real_only("digamma"))
I0, i0 = _unary("i0", _sp(_sc.i0), lambda ns, g, need, x: (g * ns.special_i1(x),),
                check=_real_only("i0_vml_cpu"))


def _i1_vjp(ns, g, need, x, r):
    # PyTorch's i1_backward: the limit 0.5 at (nearly) zero
    eps = float(np.finfo(_npdt(x)).eps)
    not_tiny = ns.abs(x) > eps
    safe = ns.where(not_tiny, x, eps)
    gradx = ns.special_i0(safe) - r * (1 / safe)
    return (g * ns.where(not_tiny, gradx, 0.5),)


SPECIAL_I1 = Op("special_i1", _i1_np, _i1_vjp, saves=(0,), save_out=True, elementwise=True)


def _special_i1(x: Tensor) -> Tensor:
    """``torch.special.i1`` (used by the derivative of i0)."""
    return unary(SPECIAL_I1, x, (), True)


def _polygamma_check(n, t: Tensor):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if t.is_complex():
        raise _not_impl({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), t.dtype)


def _polygamma_vjp(ns, g, need, x, n):
    return (g * ns.special_polygamma(n + 1, x),)


POLYGAMMA = Op("polygamma", _polygamma_np, _polygamma_vjp, saves=(0,), elementwise=True)
POLYGAMMA_ = Op("polygamma_", _polygamma_np, _polygamma_vjp, saves=(0,), elementwise=True,
                node="PolygammaBackward1")


def polygamma(n: int, input: Tensor, *, out=None) -> Tensor:
    """``torch.polygamma``: the n-th derivative of digamma (integers become the default
    float)."""
    if out is not None:
        return with_out(polygamma, out, (n, input), overlap=True)
    _polygamma_check(n, input)
    return unary(POLYGAMMA, input, (int(n),), True)


def _polygamma_(self: Tensor, n: int) -> Tensor:
    _polygamma_check(n, self)
    return inplace(POLYGAMMA_, self, (), (int(n),), True)


# ---- logit, nan_to_num, signbit ---------------------------------------------------------------

def _logit_np(x, eps):
    if eps is not None and eps >= 0:
        x = np.clip(x, x.dtype.type(eps), x.dtype.type(1 - eps))
    return np.log(x / (1 - x))


def _logit_vjp(ns, g, need, x, eps):
    d = g / (x * (-x + 1))
    if eps is None or eps < 0:
        return (ns.where((x >= 0) & (x <= 1), d, math.nan),)
    return (ns.where((x >= eps) & (x <= 1 - eps), d, 0),)


LOGIT = Op("logit", _logit_np, _logit_vjp, saves=(0,), elementwise=True)


def logit(input: Tensor, eps=None, *, out=None) -> Tensor:
    """``torch.logit``: log(p / (1 - p)), ``p`` clamped to [eps, 1 - eps] when eps is given."""
    if out is not None:
        return with_out(logit, out, (input, eps), overlap=True)
    _real_only("logit_cpu")(input)
    return unary(LOGIT, input, (eps,), True)


def _logit_(self: Tensor, eps=None) -> Tensor:
    _real_only("logit_cpu")(self)
    return inplace(LOGIT, self, (), (eps,), True)


def _finfo(dt):
    import ml_dtypes
    return ml_dtypes.finfo(dt) if dt == D.bfloat16.np else np.finfo(dt)


def _nan_to_num_np(x, nan, posinf, neginf):
    if x.dtype.kind == "c":
        return (_nan_to_num_np(x.real.copy(), nan, posinf, neginf)
                + 1j * _nan_to_num_np(x.imag.copy(), nan, posinf, neginf)).astype(x.dtype)
    if x.dtype.kind in "iub":
        return x.copy()
    fi = _finfo(x.dtype)
    t = x.dtype.type
    hi = t(fi.max) if posinf is None else t(posinf)
    lo = t(fi.min) if neginf is None else t(neginf)
    r = np.where(np.isnan(x), t(nan), x)
    r = np.where(r == np.inf, hi, r)
    return np.where(r == -np.inf, lo, r).astype(x.dtype, copy=False)


ns_fn("special_isfinite", np.isfinite, lambda x: x.isfinite())
NAN_TO_NUM = Op("nan_to_num", _nan_to_num_np,
                lambda ns, g, need, x, *p: (ns.where(ns.special_isfinite(x), g, 0),),
                saves=(0,), elementwise=True)


def _check_nan_to_num(t: Tensor):
    if t._data.dtype.names is not None:   # complex32 pairs (ember._chalf): no PyTorch kernel
        from .._chalf import refuse
        refuse("nan_to_num")
    if t.is_complex() and t.requires_grad and STATE.grad:
        raise RuntimeError("nan_to_num does not support automatic differentiation for outputs "
                           "with complex dtype.")


def nan_to_num(input: Tensor, nan=0.0, posinf=None, neginf=None, *, out=None) -> Tensor:
    """``torch.nan_to_num``: NaN, +inf and -inf replaced (by default with 0 and the dtype's
    largest and lowest finite values)."""
    if out is not None:
        return with_out(nan_to_num, out, (input, nan, posinf, neginf),
                        overlap=True,
                        dtype="nan_to_num: dtype of out: {o} should be same as input: {r}")
    _check_nan_to_num(input)
    return unary(NAN_TO_NUM, input, (nan, posinf, neginf))


def _nan_to_num_(self: Tensor, nan=0.0, posinf=None, neginf=None) -> Tensor:
    _check_nan_to_num(self)
    return inplace(NAN_TO_NUM, self, (), (nan, posinf, neginf))


def signbit(input: Tensor, *, out=None) -> Tensor:
    """``torch.signbit``: a bool tensor, True where the sign bit is set (-0.0 included)."""
    if out is not None:
        return with_out(signbit, out, (input,), overlap=True,
                        differentiable=False,
                        dtype="signbit does not support non-boolean outputs.")
    if input.is_complex():
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    d = input._data
    if d.dtype.kind in "iub":
        return _nodiff(d < 0)
    if d.dtype.kind != "f":
        d = d.astype(np.float32)
    return _nodiff(np.signbit(d))


# ---- two-input ops ----------------------------------------------------------------------------

def _tensor_args(name, *args):
    """PyTorch's TypeError for a non-Tensor argument: ``args`` are (name, position, value)."""
    for arg, pos, v in args:
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(v).__name__}")


def _float_only(kernel, a, b):
    rt = D.result_type_of((a, b))
    if not rt.is_floating_point:
        raise _not_impl(kernel, rt)


def _logaddexp_np(a, b):
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        a, b = np.broadcast_arrays(a, b)
        swap = np.real(a) < np.real(b)
        hi, lo = np.where(swap, b, a), np.where(swap, a, b)
        r = hi + np.log1p(np.exp(lo - hi))
        return np.where(np.isinf(np.real(hi)) & (hi == lo), hi, r)
    return np.logaddexp(a, b)


def _logaddexp_vjp(ns, g, need, a, b):
    return (g / ns.conj(ns.exp(b - a) + 1) if need[0] else None,
            g / ns.conj(ns.exp(a - b) + 1) if need[1] else None)


def _logaddexp2_vjp(ns, g, need, a, b):
    return (g / (2 ** (b - a) + 1) if need[0] else None,
            g / (2 ** (a - b) + 1) if need[1] else None)


LOGADDEXP = Op("logaddexp", _logaddexp_np, _logaddexp_vjp, saves=(0, 1), elementwise=True)
LOGADDEXP2 = Op("logaddexp2", np.logaddexp2, _logaddexp2_vjp, saves=(0, 1), elementwise=True)


def logaddexp(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``torch.logaddexp``: log(exp(input) + exp(other)), computed stably."""
    if out is not None:
        return with_out(logaddexp, out, (input, other), overlap=True)
    _tensor_args("logaddexp", ("input", 1, input), ("other", 2, other))
    if not (input.is_complex() or other.is_complex()):
        _float_only("logaddexp_cpu", input, other)
    return binary(LOGADDEXP, input, other)


def logaddexp2(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``torch.logaddexp2``: log2(2**input + 2**other)."""
    if out is not None:
        return with_out(logaddexp2, out, (input, other), overlap=True)
    _tensor_args("logaddexp2", ("input", 1, input), ("other", 2, other))
    _float_only("logaddexp2_cpu", input, other)
    return binary(LOGADDEXP2, input, other)


def _hypot_vjp(ns, g, need, a, b, r):
    return (g * a / r if need[0] else None, g * b / r if need[1] else None)


HYPOT = Op("hypot", np.hypot, _hypot_vjp, saves=(0, 1), save_out=True, elementwise=True,
           save_if=(0, 1))


def hypot(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``torch.hypot``: sqrt(input**2 + other**2) (floating tensors)."""
    if out is not None:
        return with_out(hypot, out, (input, other), overlap=True)
    _tensor_args("hypot", ("input", 1, input), ("other", 2, other))
    _float_only("hypot_cpu", input, other)
    return binary(HYPOT, input, other)


def _hypot_(self: Tensor, other: Tensor) -> Tensor:
    _tensor_args("hypot_", ("other", 1, other))
    _float_only("hypot_cpu", self, other)
    return inplace(HYPOT, self, (other,))


def _fmax_vjp(ns, g, need, a, b):
    keep = (a >= b) | ns.special_isnan(b)
    return (ns.where(keep, g, 0) if need[0] else None, ns.where(keep, 0, g) if need[1] else None)


def _fmin_vjp(ns, g, need, a, b):
    keep = (a <= b) | ns.special_isnan(b)
    return (ns.where(keep, g, 0) if need[0] else None, ns.where(keep, 0, g) if need[1] else None)


def _fmax_jvp(ns, tangents, primals, outs):
    a, b = primals
    return _select_jvp(ns, tangents, (a > b) | ns.special_isnan(b))


def _fmin_jvp(ns, tangents, primals, outs):
    a, b = primals
    return _select_jvp(ns, tangents, (a <= b) | ns.special_isnan(b))


def _select_jvp(ns, tangents, take_self):
    ta = tangents[0] if tangents[0] is not None else 0
    tb = tangents[1] if tangents[1] is not None else 0
    return ns.where(take_self, ta, tb)


ns_fn("special_isnan", np.isnan, lambda x: x.isnan())
FMAX = Op("fmax", np.fmax, _fmax_vjp, _fmax_jvp, saves=(0, 1))
FMIN = Op("fmin", np.fmin, _fmin_vjp, _fmin_jvp, saves=(0, 1))


def _fminmax(name, op):
    def f(input: Tensor, other: Tensor, *, out=None) -> Tensor:
        if out is not None:
            return with_out(f, out, (input, other), overlap=True)
        _tensor_args(name, ("input", 1, input), ("other", 2, other))
        if input.is_complex() or other.is_complex():
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return binary(op, input, other)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.{name}``: elementwise {name[1:]}imum ignoring NaN (NaN only when both " \
                "are NaN); the gradient goes to the selected input."
    return f


fmax = _fminmax("fmax", FMAX)
fmin = _fminmax("fmin", FMIN)


def _copysign_vjp(ns, g, need, x, r):
    ratio = ns.where(x == 0, 0, r / x)
    return (g * ratio if need[0] else None,
            ns.zeros_of(g, g.shape) if len(need) > 1 and need[1] else None)


def _copysign_jvp(ns, tangents, primals, outs):
    # only self's tangent flows (PyTorch: copysign_tensor_self_backward(self_t, self_p, result))
    if tangents[0] is None:
        return None
    return _copysign_vjp(ns, tangents[0], (True,), primals[0], outs[0])[0]


COPYSIGN = Op("copysign", np.copysign, _copysign_vjp, _copysign_jvp, saves=(0,), save_out=True)
COPYSIGN_S = Op("copysign_s", np.copysign, _copysign_vjp, _copysign_jvp, saves=(0,),
                save_out=True, node="CopysignBackward1")


def _copysign_args(input, other):
    if not isinstance(input, Tensor):
        raise invalid_combination("copysign", (input, other))
    other = to_operand(other)
    rt = D.result_type_of((input, other))
    if rt.is_complex:
        raise _not_impl("copysign_cpu", rt)
    return COPYSIGN if isinstance(other, Tensor) else COPYSIGN_S, other


def copysign(input: Tensor, other, *, out=None) -> Tensor:
    """``torch.copysign``: |input| with the sign of other (integers become the default
    float); no gradient flows to ``other``."""
    if out is not None:
        return with_out(copysign, out, (input, other), overlap=True)
    op, other = _copysign_args(input, other)
    return binary(op, input, other, int_to_float=True)


def _copysign_(self: Tensor, other) -> Tensor:
    op, other = _copysign_args(self, other)
    return inplace(op, self, (other,), (), True)


def _heaviside_np(x, v):
    return np.where(x == 0, v, x > 0).astype(np.result_type(x, v), copy=False)


def _heaviside_jvp(aten: str):
    def jvp(ns, tangents, primals, outs):
        raise NotImplementedError(
            f"Trying to use forward AD with aten::{aten} that does not support it.")
    return jvp


# no derivative in PyTorch; the in-place op's node names aten::heaviside_ when reached
HEAVISIDE = Op("heaviside", _heaviside_np, _not_implemented("heaviside"),
               _heaviside_jvp("heaviside"), node=_NOT_IMPL)
HEAVISIDE_ = Op("heaviside_", _heaviside_np, _not_implemented("heaviside_"),
                _heaviside_jvp("heaviside_"), node=_NOT_IMPL)


def _heaviside_check(input, values, pos, name="heaviside"):
    _tensor_args(name, ("values", pos, values))
    if input.is_complex() or values.is_complex():
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


def _heaviside_out(rd, od) -> None:
    what = "complex tensors" if od.is_complex else "tensors with different dtypes"
    raise RuntimeError(f"heaviside is not yet implemented for {what}.")


def heaviside(input: Tensor, values: Tensor, *, out=None) -> Tensor:
    """``torch.heaviside``: 0 below zero, 1 above, ``values`` at zero; not differentiable."""
    if out is not None:
        return with_out(heaviside, out, (input, values), overlap=True,
                        differentiable=False,
                        dtype=_heaviside_out)
    _tensor_args("heaviside", ("input", 1, input))
    _heaviside_check(input, values, 2)
    return binary(HEAVISIDE, input, values)


def _heaviside_(self: Tensor, values: Tensor) -> Tensor:
    _heaviside_check(self, values, 1, "heaviside_")
    return inplace(HEAVISIDE_, self, (values,))


def _xlogy_np(x, y):
    dt = np.result_type(x, y)   # Python scalars are weak: they keep the tensor's precision
    x, y = np.asarray(x, dtype=dt), np.asarray(y, dtype=dt)
    r = x * np.log(y)
    return np.where((x == 0) & ~np.isnan(y), dt.type(0), r)


def _xlogy_em(x, y):
    return xlogy(x, y)


ns_fn("special_xlogy", _xlogy_np, _xlogy_em)


def _xlogy_vjp(ns, g, need, a, b):
    return (ns.where((a == 0) & (b <= 0), 0, ns.special_xlogy(g, b)) if need[0] else None,
            g * a / b if need[1] else None)


def _xlogy_s2_vjp(ns, g, need, a, b):
    gx = ns.special_xlogy(g, b)
    return (gx if b > 0 else ns.where(a == 0, 0, gx), None)


XLOGY = Op("xlogy", _xlogy_np, _xlogy_vjp, saves=(0, 1), elementwise=True)
XLOGY_S1 = Op("xlogy_s1", _xlogy_np, _xlogy_vjp, saves=(0, 1), elementwise=True,
              node="XlogyBackward1")
XLOGY_S2 = Op("xlogy_s2", _xlogy_np, _xlogy_s2_vjp, saves=(0, 1), elementwise=True,
              node="XlogyBackward2")


def _xlogy_op(input, other):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise invalid_combination("xlogy", (input, other))
    input, other = to_operand(input), to_operand(other)
    rt = D.result_type_of((input, other))
    if rt.is_complex:
        raise _not_impl("xlogy_cpu", rt)
    if not isinstance(input, Tensor):
        return XLOGY_S1, input, other
    return (XLOGY if isinstance(other, Tensor) else XLOGY_S2), input, other


def xlogy(input, other, *, out=None) -> Tensor:
    """``torch.xlogy``: input * log(other), 0 where input == 0 (unless other is NaN)."""
    if out is not None:
        return with_out(xlogy, out, (input, other), overlap=True)
    op, input, other = _xlogy_op(input, other)
    return binary(op, input, other, int_to_float=True)


def _xlogy_(self: Tensor, other) -> Tensor:
    op, self, other = _xlogy_op(self, other)
    return inplace(op, self, (other,), (), True)


# ---- in-place inverse hyperbolics: PyTorch records a node without a derivative -----------------

def _inplace_not_impl(name, fwd):
    def vjp(ns, g, need, *a):
        raise NotImplementedError(
            f"the derivative for 'inplace version of {name}' is not implemented.")

    def jvp(ns, tangents, primals, outs):
        raise NotImplementedError(
            f"Trying to use forward AD with {name}_ that does not support it because it has not "
            "been implemented yet.\nPlease file an issue to PyTorch at "
            "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
            "we can prioritize its implementation.")
    iop = Op(name + "_", fwd, vjp, jvp, node=name.capitalize() + "Backward1")

    def f_(self: Tensor) -> Tensor:
        return inplace(iop, self, (), (), True)
    f_.__name__ = f_.__qualname__ = name + "_"
    return f_


for _name, _alias, _fwd in [("asinh", "arcsinh", np.arcsinh), ("acosh", "arccosh", np.arccosh),
                            ("atanh", "arctanh", np.arctanh)]:
    _f_ = _inplace_not_impl(_name, _fwd)
    method(_name + "_", _f_)
    method(_alias + "_", _f_)


# ---- Tensor methods -----------------------------------------------------------------------------

def _meth(name, fn, arg="other"):
    """The method form: a non-Tensor argument is reported at position 1."""
    def m(self, other):
        _tensor_args(name, (arg, 1, other))
        return fn(self, other)
    m.__name__ = m.__qualname__ = name
    return m


for _name, _fn in [("round", round), ("round_", _round_), ("polygamma", lambda self, n:
                                                           polygamma(n, self)),
                   ("polygamma_", _polygamma_), ("logit", logit), ("logit_", _logit_),
                   ("nan_to_num", nan_to_num), ("nan_to_num_", _nan_to_num_),
                   ("signbit", signbit), ("logaddexp", _meth("logaddexp", logaddexp)),
                   ("logaddexp2", _meth("logaddexp2", logaddexp2)),
                   ("hypot", _meth("hypot", hypot)), ("hypot_", _hypot_),
                   ("fmax", _meth("fmax", fmax)), ("fmin", _meth("fmin", fmin)),
                   ("copysign", copysign), ("copysign_", _copysign_),
                   ("heaviside", _meth("heaviside", heaviside, "values")),
                   ("heaviside_", _heaviside_), ("xlogy", xlogy),
                   ("xlogy_", _xlogy_)]:
    method(_name, _fn)
