"""The rest of ``torch.special`` and its top-level relatives (igamma, mvlgamma, frexp, ldexp,
nextafter, isposinf/isneginf/isreal).

Differentiable ops carry PyTorch's derivative formulas (``derivatives.yaml``) written once for
both namespaces, so double backward runs through them; where PyTorch has no derivative
(zeta and igamma with respect to their first input) the same NotImplementedError is raised.
The Bessel functions of the first and second kind, Airy Ai and the orthogonal polynomials are
non-differentiable in PyTorch (their results never require grad); their numerics follow
PyTorch's own kernels (``ATen/native/Math.h``), whose truncated rational approximations differ
from SciPy's in the 7th digit, so values match PyTorch rather than the exact function (the
kernels are in ``special_kernels``).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as _sc

from .. import _dtype as D
from .._tensor import Tensor
from . import special_kernels as _k
from ._dispatch import binary, inplace, promoted, to_operand, unary
from ._parser import invalid_combination, tensor_args
from ._registry import Op, method, ns_fn
from .pointwise import _not_impl, sigmoid
from .pointwise_more import _nodiff
from .reduction import _structseq, return_types
from .special import _lgamma_np, _npdt, _sp, _special_i1, erf, lgamma

__all__ = [
    "frexp",
    "igamma",
    "igammac",
    "isneginf",
    "isposinf",
    "isreal",
    "ldexp",
    "mvlgamma",
    "nextafter",
]

_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT1_2 = math.sqrt(0.5)
_LN2 = math.log(2.0)
_PI = math.pi


# ---- shared pieces ------------------------------------------------------------------------

def _no_derivative(label: str):
    """A VJP for an input PyTorch cannot differentiate (``not_implemented(label)``)."""
    def raise_(ns, g, need, *a):
        raise NotImplementedError(f"the derivative for '{label}' is not implemented.")
    return raise_


def _no_forward_ad(aten: str):
    def jvp(ns, tangents, primals, outs, *params):
        raise NotImplementedError(
            f"Trying to use forward AD with {aten} that does not support it because it has not "
            "been implemented yet.\nPlease file an issue to PyTorch at "
            "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
            "we can prioritize its implementation or submit a PR adding the implementation to "
            "derivatives.yaml")
    return jvp


def _real_float(kernel: str, t: Tensor):
    """PyTorch's kernels of this family have float32/float64 loops (integers promote first)."""
    if t.is_complex() or t.dtype in (D.float16, D.bfloat16):
        raise _not_impl(kernel, t.dtype)


def _as_float(t: Tensor) -> np.ndarray:
    """The input's array in the precision PyTorch computes in: integers and bool become the
    default float dtype."""
    d = t._data
    if d.dtype.kind not in "fc":
        d = d.astype(D.get_default_dtype().np)
    return d


# ---- non-differentiable functions ---------------------------------------------------------

def _nd_unary(name: str, fwd):
    """``torch.special.<name>``: a float result that never requires grad."""
    kernel = f"{name}_cpu"

    def f(input: Tensor) -> Tensor:
        _real_float(kernel, input)
        d = _as_float(input)
        with np.errstate(all="ignore"):
            out = np.asarray(fwd(d)).astype(d.dtype, copy=False)
        return _nodiff(out)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.special.{name}`` (not differentiable in PyTorch)."
    return f


def _nd_binary(name: str, fwd):
    """``torch.special.<name>(input, n)``: either may be a Python number; no gradient."""
    kernel = f"{name}_cpu"

    def f(input, n) -> Tensor:
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise invalid_combination(f"special_{name}", (input, n))
        input, n = to_operand(input), to_operand(n)
        rt = D.result_type_of((input, n))
        if rt.is_complex or rt in (D.float16, D.bfloat16):
            raise _not_impl(kernel, rt)
        a, b, dt = promoted(input, n, int_to_float=True)
        a, b = np.broadcast_arrays(np.asarray(a, dtype=dt), np.asarray(b, dtype=dt))
        with np.errstate(all="ignore"):
            out = fwd(a, b).astype(dt, copy=False)
        return _nodiff(out)
    f.__name__ = f.__qualname__ = f"special_{name}"
    f.__doc__ = f"``torch.special.{name}`` (not differentiable in PyTorch)."
    return f


airy_ai = _nd_unary("airy_ai", _k.airy_ai_np)
bessel_j0 = _nd_unary("bessel_j0", _k.bessel_j0_np)
bessel_j1 = _nd_unary("bessel_j1", _k.bessel_j1_np)
bessel_y0 = _nd_unary("bessel_y0", _k.bessel_y0_np)
bessel_y1 = _nd_unary("bessel_y1", _k.bessel_y1_np)
modified_bessel_i0 = _nd_unary("modified_bessel_i0", _sc.i0)
modified_bessel_i1 = _nd_unary("modified_bessel_i1", _sc.i1)
modified_bessel_k0 = _nd_unary("modified_bessel_k0", _sc.k0)
modified_bessel_k1 = _nd_unary("modified_bessel_k1", _sc.k1)
scaled_modified_bessel_k0 = _nd_unary("scaled_modified_bessel_k0", _sc.k0e)
scaled_modified_bessel_k1 = _nd_unary("scaled_modified_bessel_k1", _sc.k1e)
spherical_bessel_j0 = _nd_unary("spherical_bessel_j0", _k.spherical_j0_np)


chebyshev_polynomial_t = _nd_binary("chebyshev_polynomial_t", _k.cheb_t)
chebyshev_polynomial_u = _nd_binary("chebyshev_polynomial_u", _k.cheb_u)
chebyshev_polynomial_v = _nd_binary("chebyshev_polynomial_v", _k.cheb_v)
chebyshev_polynomial_w = _nd_binary("chebyshev_polynomial_w", _k.cheb_w)
shifted_chebyshev_polynomial_t = _nd_binary("shifted_chebyshev_polynomial_t", _k.shifted("t", 6))
shifted_chebyshev_polynomial_u = _nd_binary("shifted_chebyshev_polynomial_u", _k.shifted("u", 6))
shifted_chebyshev_polynomial_v = _nd_binary("shifted_chebyshev_polynomial_v", _k.shifted("v", 6))
shifted_chebyshev_polynomial_w = _nd_binary("shifted_chebyshev_polynomial_w", _k.shifted("w", 4))
hermite_polynomial_h = _nd_binary("hermite_polynomial_h", _k.hermite_h)
hermite_polynomial_he = _nd_binary("hermite_polynomial_he", _k.hermite_he)
laguerre_polynomial_l = _nd_binary("laguerre_polynomial_l", _k.laguerre_l)
legendre_polynomial_p = _nd_binary("legendre_polynomial_p", _k.legendre_p)


# ---- differentiable one-input functions ---------------------------------------------------------

def _i1e_np(x):
    return _sp(_sc.i1e)(x)


def _i0e_vjp(ns, g, need, x, r):
    return (g * (ns.special_i1e(x) - ns.sgn(x) * r),)


def _i1e_vjp(ns, g, need, x, r):
    # PyTorch's i1e_backward: the limit 0.5 at (nearly) zero
    eps = float(np.finfo(_npdt(x)).eps)
    not_tiny = ns.abs(x) > eps
    safe = ns.where(not_tiny, x, eps)
    gradx = ns.special_i0e(safe) - r * (ns.sgn(safe) + 1 / safe)
    return (g * ns.where(not_tiny, gradx, 0.5),)


def _entr_np(x):
    t = x.dtype.type
    r = -x * np.log(np.where(x > 0, x, t(1)))
    r = np.where(x < 0, t(-np.inf), r)
    return np.where(np.isnan(x), x, r).astype(x.dtype, copy=False)


SPECIAL_I0E = Op("special_i0e", _sp(_sc.i0e), _i0e_vjp, saves=(0,), save_out=True,
                 elementwise=True, node="SpecialI0EBackward0")
SPECIAL_I1E = Op("special_i1e", _i1e_np, _i1e_vjp, saves=(0,), save_out=True,
                 elementwise=True, node="SpecialI1EBackward0")
SPECIAL_NDTRI = Op("special_ndtri", _sp(_sc.ndtri),
                   lambda ns, g, need, r: (g * _SQRT_2PI * ns.exp(r * r / 2),),
                   save_out=True, elementwise=True, node="SpecialNdtriBackward0")
SPECIAL_LOG_NDTR = Op("special_log_ndtr", _sp(_sc.log_ndtr),
                      lambda ns, g, need, x, r: (g / _SQRT_2PI * ns.exp(-(r + x * x / 2)),),
                      saves=(0,), save_out=True, elementwise=True,
                      node="SpecialLogNdtrBackward0")
SPECIAL_ERFCX = Op("special_erfcx", _sp(_sc.erfcx),
                   lambda ns, g, need, x, r: ((2.0 * x * r - 2.0 / math.sqrt(_PI)) * g,),
                   saves=(0,), save_out=True, elementwise=True, node="SpecialErfcxBackward0")
SPECIAL_ENTR = Op("special_entr", _entr_np, lambda ns, g, need, x: (g * -(ns.log(x) + 1),),
                  saves=(0,), elementwise=True, node="SpecialEntrBackward0")

ns_fn("special_i0e", _sp(_sc.i0e), lambda x: i0e(x))
ns_fn("special_i1e", _i1e_np, lambda x: i1e(x))
ns_fn("special_lgamma", _lgamma_np, lambda x: lgamma(x))


def _unary_fn(name: str, op: Op, kernel: str, half: bool = True):
    """``half``: PyTorch's kernel has float16/bfloat16 loops (computed here in float32)."""
    def f(input: Tensor) -> Tensor:
        if input.is_complex() or not half and input.dtype in (D.float16, D.bfloat16):
            raise _not_impl(kernel, input.dtype)
        return unary(op, input, (), True)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.special.{name}`` (integers become the default float dtype)."
    return f


i0e = _unary_fn("i0e", SPECIAL_I0E, "i0e_cpu")
i1e = _unary_fn("i1e", SPECIAL_I1E, "i1e_cpu")
ndtri = _unary_fn("ndtri", SPECIAL_NDTRI, "ndtri_cpu", False)
log_ndtr = _unary_fn("log_ndtr", SPECIAL_LOG_NDTR, "log_ndtr_cpu", False)
erfcx = _unary_fn("erfcx", SPECIAL_ERFCX, "erfcx_cpu", False)
entr = _unary_fn("entr", SPECIAL_ENTR, "entr_cpu")


def i1(input: Tensor) -> Tensor:
    """``torch.special.i1``: the modified Bessel function of the first kind, order 1."""
    if input.is_complex():
        raise _not_impl("i1_cpu", input.dtype)
    return _special_i1(input)


# PyTorch's composite: (1 + erf(x * sqrt(1/2))) * 0.5, recorded as its scalar-overload nodes
_MUL_S = Op("mul_scalar", lambda a, s: np.multiply(a, s), lambda ns, g, need, s: (g * s, None),
            saves=(1,), elementwise=True, node="MulBackward1")
_ADD_S = Op("add_scalar", lambda a, s: np.add(a, s), lambda ns, g, need: (g, None),
            elementwise=True, node="AddBackward1")


def ndtr(input: Tensor) -> Tensor:
    """``torch.special.ndtr``: the standard normal CDF, computed as PyTorch does
    (``(1 + erf(x / sqrt(2))) / 2``, so far tails round to PyTorch's values)."""
    if input.is_complex():
        raise _not_impl("erf_vml_cpu", input.dtype)
    return binary(_MUL_S, binary(_ADD_S, erf(binary(_MUL_S, input, _SQRT1_2)), 1), 0.5)


def expit(input: Tensor) -> Tensor:
    """``torch.special.expit``: the logistic sigmoid."""
    return sigmoid(input)


# ---- two-input functions ------------------------------------------------------------------------

def _xlog1py_np(x, y):
    dt = np.result_type(x, y)
    x, y = np.asarray(x, dtype=dt), np.asarray(y, dtype=dt)
    r = x * np.log1p(y)
    return np.where((x == 0) & ~np.isnan(y), dt.type(0), r)


def _xlog1py_vjp(ns, g, need, a, b):
    ga = None
    if need[0]:
        ga = ns.special_xlog1py(g, b)
        ga = ns.where((a == 0) & (b <= -1), 0, ga) if not isinstance(b, (int, float)) else (
            ga if b > -1 else ns.where(a == 0, 0, ga))
    return (ga, g * a / (b + 1) if need[1] else None)


XLOG1PY = Op("special_xlog1py", _xlog1py_np, _xlog1py_vjp, saves=(0, 1), elementwise=True,
             node="SpecialXlog1PyBackward0")
XLOG1PY_S1 = Op("special_xlog1py_s1", _xlog1py_np, _xlog1py_vjp, saves=(0, 1), elementwise=True,
                node="SpecialXlog1PyBackward1")
XLOG1PY_S2 = Op("special_xlog1py_s2", _xlog1py_np, _xlog1py_vjp, saves=(0, 1), elementwise=True,
                node="SpecialXlog1PyBackward2")
ns_fn("special_xlog1py", _xlog1py_np, lambda x, y: xlog1py(x, y))


def _two(name: str, input, other, ops, real_kernel: str, half: bool = True):
    """Pick the tensor-tensor or scalar op (PyTorch's .self_scalar / .other_scalar)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise invalid_combination(name, (input, other))
    input, other = to_operand(input), to_operand(other)
    rt = D.result_type_of((input, other))
    if rt.is_complex or not half and rt in (D.float16, D.bfloat16):
        raise _not_impl(real_kernel, rt)
    if not isinstance(input, Tensor):
        return ops[1], input, other
    return (ops[0] if isinstance(other, Tensor) else ops[2]), input, other


def xlog1py(input, other) -> Tensor:
    """``torch.special.xlog1py``: input * log1p(other), 0 where input == 0 (unless other is
    NaN)."""
    op, input, other = _two("special_xlog1py", input, other, (XLOG1PY, XLOG1PY_S1, XLOG1PY_S2),
                            "xlog1py_cpu")
    return binary(op, input, other, int_to_float=True)


def _zeta_np(x, q):
    dt = np.result_type(x, q)
    x, q = np.asarray(x, dtype=dt), np.asarray(q, dtype=dt)
    r = np.asarray(_sc.zeta(x, q)).astype(dt, copy=False)
    # PyTorch's series meets 0 * inf at q = +inf
    return np.where((q == np.inf) & (x > 1), dt.type(np.nan), r)


ns_fn("special_zeta", _zeta_np, lambda x, q: zeta(x, q))


def _zeta_vjp(ns, g, need, x, q):
    if need[0]:
        _no_derivative("zeta")(ns, g, need)
    return (None, g * -x * ns.special_zeta(x + 1.0, q) if need[1] else None)


ZETA = Op("special_zeta", _zeta_np, _zeta_vjp, _no_forward_ad("special_zeta"), saves=(0, 1),
          node="SpecialZetaBackward0")
ZETA_S1 = Op("special_zeta_s1", _zeta_np, _zeta_vjp, _no_forward_ad("special_zeta"),
             saves=(0, 1), node="SpecialZetaBackward1")
ZETA_S2 = Op("special_zeta_s2", _zeta_np, _zeta_vjp, _no_forward_ad("special_zeta"),
             saves=(0, 1), node="SpecialZetaBackward2")


def zeta(input, other) -> Tensor:
    """``torch.special.zeta``: the Hurwitz zeta function; differentiable in ``other`` only
    (as in PyTorch)."""
    op, input, other = _two("special_zeta", input, other, (ZETA, ZETA_S1, ZETA_S2), "zeta_cpu",
                            False)
    return binary(op, input, other, int_to_float=True)


def _igamma_np(fn, lower):
    """SciPy's values under PyTorch's own edge rules (checked in this order: a negative
    argument, a == 0, x == 0, infinite a, infinite x), which also decide some NaN inputs."""
    def f(a, x):
        dt = np.result_type(a, x)
        a, x = np.asarray(a, dtype=dt), np.asarray(x, dtype=dt)
        t = dt.type
        lo, hi = (t(0), t(1)) if lower else (t(1), t(0))
        r = np.asarray(fn(a, x)).astype(dt)
        r = np.where(np.isinf(x), hi, r)
        r = np.where(np.isinf(a), np.where(np.isinf(x), t(np.nan), lo), r)
        r = np.where(x == 0, lo, r)
        r = np.where(a == 0, np.where(x > 0, hi, t(np.nan)), r)
        return np.where((x < 0) | (a < 0), t(np.nan), r)
    return f


def _igamma_vjp(sign, label):
    def vjp(ns, g, need, a, x):
        if need[0]:
            _no_derivative(label)(ns, g, need)
        d = ns.exp((a - 1) * ns.log(x) - x - ns.special_lgamma(a))
        return (None, (g * d if sign > 0 else -g * d) if need[1] else None)
    return vjp


IGAMMA = Op("igamma", _igamma_np(_sc.gammainc, True), _igamma_vjp(1, "igamma: input"),
            _no_forward_ad("igamma"), saves=(0, 1))
IGAMMAC = Op("igammac", _igamma_np(_sc.gammaincc, False), _igamma_vjp(-1, "igammac: input"),
             _no_forward_ad("igammac"), saves=(0, 1))


def _igamma_args(name, input, other, kernel, method_=False):
    for arg, pos, v in (("input", 1, input), ("other", 2, other))[1 if method_ else 0:]:
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos - method_}) must be "
                            f"Tensor, not {type(v).__name__}")
    rt = D.result_type_of((input, other))
    if not rt.is_floating_point:
        raise _not_impl(kernel, rt)


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """``torch.igamma`` (``torch.special.gammainc``): the regularized lower incomplete gamma
    function; differentiable in ``other`` only, as in PyTorch."""
    _igamma_args("igamma", input, other, "igamma_cpu")
    return binary(IGAMMA, input, other)


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """``torch.igammac`` (``torch.special.gammaincc``): the regularized upper incomplete gamma
    function."""
    _igamma_args("igammac", input, other, "igammac_cpu")
    return binary(IGAMMAC, input, other)


def gammainc(input: Tensor, other: Tensor) -> Tensor:
    """``torch.special.gammainc``: ``torch.igamma``."""
    _igamma_args("special_gammainc", input, other, "igamma_cpu")
    return binary(IGAMMA, input, other)


def gammaincc(input: Tensor, other: Tensor) -> Tensor:
    """``torch.special.gammaincc``: ``torch.igammac``."""
    _igamma_args("special_gammaincc", input, other, "igammac_cpu")
    return binary(IGAMMAC, input, other)


def _igamma_(self: Tensor, other: Tensor) -> Tensor:
    _igamma_args("igamma_", self, other, "igamma_cpu", True)
    return inplace(IGAMMA, self, (other,))


def _igammac_(self: Tensor, other: Tensor) -> Tensor:
    _igamma_args("igammac_", self, other, "igammac_cpu", True)
    return inplace(IGAMMAC, self, (other,))


# ---- mvlgamma, frexp, ldexp, nextafter ----------------------------------------------------------

def _mvlgamma_np(x, p):
    t = x.dtype.type
    shifts = np.arange(p, dtype=x.dtype) * t(-0.5)
    terms = _lgamma_np(x[..., None] + shifts[::-1])
    return (terms.sum(-1) + t(p * (p - 1) * math.log(_PI) / 4)).astype(x.dtype, copy=False)


def _mvlgamma_vjp(ns, g, need, x, p):
    acc = None
    for j in range(p):
        d = ns.special_digamma(x - 0.5 * (p - 1 - j))
        acc = d if acc is None else acc + d
    return (g * acc,)


MVLGAMMA = Op("mvlgamma", _mvlgamma_np, _mvlgamma_vjp, saves=(0,), elementwise=True)


def _mvlgamma_check(input: Tensor, p) -> None:
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input.is_complex():
        raise _not_impl("mvlgamma", input.dtype)


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """``torch.mvlgamma`` (``torch.special.multigammaln``): the multivariate log-gamma of
    dimension ``p``."""
    _mvlgamma_check(input, p)
    return unary(MVLGAMMA, input, (int(p),), True)


def multigammaln(input: Tensor, p: int) -> Tensor:
    """``torch.special.multigammaln``: ``torch.mvlgamma``."""
    return mvlgamma(input, p)


def _mvlgamma_(self: Tensor, p: int) -> Tensor:
    _mvlgamma_check(self, p)
    return inplace(MVLGAMMA, self, (), (int(p),), True)


def _frexp_np(x):
    m, e = np.frexp(x)
    return m.astype(x.dtype, copy=False), e.astype(np.int32, copy=False)


def _exp2_of(e, like):
    return np.exp2(e.astype(like.dtype))


ns_fn("special_exp2_of", _exp2_of, lambda e, like: (e.to(like.dtype)).exp2())


def _frexp_vjp(ns, g, need, e):
    gm = g[0]   # one gradient per output; the exponent's is never used
    return (None if gm is None else gm / ns.special_exp2_of(e, gm),)


def _frexp_jvp(ns, tangents, primals, outs):
    return (tangents[0] / ns.special_exp2_of(outs[1], tangents[0]), None)


_FREXP_T = _structseq("frexp", ("mantissa", "exponent"))
return_types.frexp = _FREXP_T
FREXP = Op("frexp", _frexp_np, _frexp_vjp, _frexp_jvp, save_out=(1,), n_out=2, diff_out=(0,),
           names=("exponent",))


def frexp(input: Tensor):
    """``torch.frexp``: (mantissa, exponent) with input = mantissa * 2**exponent; the exponent
    is int32."""
    if not input.is_floating_point():
        raise RuntimeError("ember.frexp() only supports floating-point dtypes")
    m, e = unary(FREXP, input)
    return _FREXP_T(m, e)


def _ldexp_np(x, e):
    return np.multiply(x, np.power(x.dtype.type(2), e)).astype(x.dtype, copy=False)


def _ldexp_vjp(ns, g, need, x, e, r):
    # complex: PyTorch's convention, grad * conj(derivative)
    return (g * ns.conj(2.0 ** e) if need[0] else None,
            g * ns.conj(r * _LN2) if need[1] else None)


LDEXP = Op("ldexp", _ldexp_np, _ldexp_vjp, saves=(0, 1), save_out=True, elementwise=True)


def _ldexp_check(name, input, other, pos):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position {pos}) must be Tensor, not "
                        f"{type(other).__name__}")


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``torch.ldexp``: input * 2**other (integers become the default float)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        tensor_args(ldexp, input=input, other=other)
    return binary(LDEXP, input, other, int_to_float=True)


def _ldexp_(self: Tensor, other: Tensor) -> Tensor:
    _ldexp_check("ldexp_", self, other, 1)
    return inplace(LDEXP, self, (other,), (), True)


def _nextafter_vjp(ns, g, need, a, b):
    return (ns.where(a != b, g, 0) if need[0] else None,
            ns.zeros_of(g, g.shape) if need[1] else None)


NEXTAFTER = Op("nextafter", np.nextafter, _nextafter_vjp, saves=(0, 1), elementwise=True)


def _nextafter_check(name, input, other, pos):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position {pos}) must be Tensor, not "
                        f"{type(other).__name__}")
    rt = D.result_type_of((input, other))
    if not rt.is_floating_point or rt in (D.float16,):
        raise _not_impl("nextafter_cpu", rt)


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """``torch.nextafter``: the next representable value after input towards other."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        tensor_args(nextafter, input=input, other=other)
    _nextafter_check("nextafter", input, other, 2)
    return binary(NEXTAFTER, input, other)


def _nextafter_(self: Tensor, other: Tensor) -> Tensor:
    _nextafter_check("nextafter_", self, other, 1)
    return inplace(NEXTAFTER, self, (other,))


# ---- isposinf, isneginf, isreal ---------------------------------------------------------------

def _inf_test(name: str, sign: float):
    def f(input: Tensor) -> Tensor:
        if input.is_complex():
            raise RuntimeError(f"{name} does not support complex inputs.")
        d = input._data
        if d.dtype.kind not in "f" and input.dtype is not D.bfloat16:
            return _nodiff(np.zeros(d.shape, dtype=np.bool_))
        return _nodiff(d.astype(np.float32) == sign if d.dtype.kind != "f" else d == sign)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.{name}``: a bool tensor, True where input is {'+' if sign > 0 else '-'}" \
                "inf."
    return f


isposinf = _inf_test("isposinf", np.inf)
isneginf = _inf_test("isneginf", -np.inf)


def isreal(input: Tensor) -> Tensor:
    """``torch.isreal``: True where the imaginary part is zero (always, for real dtypes)."""
    d = input._data
    if d.dtype.kind == "c":
        return _nodiff(d.imag == 0)
    if d.dtype.names is not None:   # complex32 pairs (ember._chalf)
        return _nodiff(d["imag"] == 0)
    return _nodiff(np.ones(d.shape, dtype=np.bool_))


for _name, _fn in [("igamma", lambda self, other: _meth_tensor("igamma", other) or
                    igamma(self, other)),
                   ("igammac", lambda self, other: _meth_tensor("igammac", other) or
                    igammac(self, other)),
                   ("igamma_", _igamma_), ("igammac_", _igammac_),
                   ("mvlgamma", mvlgamma), ("mvlgamma_", _mvlgamma_), ("frexp", frexp),
                   ("ldexp", lambda self, other: _ldexp_check("ldexp", self, other, 1) or
                    ldexp(self, other)),
                   ("ldexp_", _ldexp_), ("nextafter", lambda self, other: _nextafter_check(
                       "nextafter", self, other, 1) or nextafter(self, other)),
                   ("nextafter_", _nextafter_), ("isposinf", isposinf),
                   ("isneginf", isneginf), ("isreal", isreal)]:
    method(_name, _fn)


def _meth_tensor(name, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
