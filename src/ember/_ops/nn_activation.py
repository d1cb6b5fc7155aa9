"""``nn.functional`` activations, softmax wrappers and the dropout family.

Each activation is one elementwise ``Op`` named as PyTorch's node (``GeluBackward0``...): a
forward on arrays (half types computed in float32 and rounded once, as PyTorch's CPU kernels),
and a VJP ``g * f'(x)`` whose derivative lives in one ``ns`` helper with two spellings: a NumPy
kernel for the fast path (in-place temporaries, masks turned into factors by arithmetic, since
``np.where`` costs ~10 passes over the data), and the same formula in ember ops under
``create_graph`` (so double backward differentiates the same rule). JVPs are derived from the
VJP (``elementwise=True``). Where PyTorch's double backward yields zeros for the input, the
ember spelling keeps a zero-derivative link to it (``ns.act_link``). In-place variants whose
PyTorch node saves the result (``EluBackward1``, ``LeakyReluBackward1``...) are separate ops
whose VJP reads the result. NaN inputs get the gradients of PyTorch's vectorized kernels (its
scalar loop, run on tiny tensors, differs at some kinks).

Composite functionals (softsign, tanhshrink, softmin, gumbel_softmax, the dropouts) are written
with ember ops, as PyTorch's are, so their graphs and node names are PyTorch's. Random masks and
slopes come from ember's default generator (``ember.manual_seed`` makes them reproducible; the
streams differ from PyTorch's).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype as D
from .._meta import MetaArray, meta_like
from .._tensor import Tensor, Version, _make, _wrap_dim
from ..autograd.grad_mode import STATE
from . import _opmath as _OM
from ._dispatch import _type_name, inplace, unary
from ._registry import NP, Op, apply, method, ns_fn
from .pointwise import _sigmoid_np, exp, sigmoid, tanh
from .random import _rng
from .special import _sc, erf

__all__ = [
    "alpha_dropout",
    "celu",
    "celu_",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "elu",
    "elu_",
    "feature_alpha_dropout",
    "gelu",
    "glu",
    "gumbel_softmax",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "log_softmax",
    "logsigmoid",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]

_FLOATS = ("float16", "bfloat16", "float32", "float64")


# ---- shared machinery -----------------------------------------------------------------------

def _is_half(a) -> bool:
    return a.dtype.itemsize == 2 and a.dtype.kind in "fV"


def _opmath(fn):
    """Run an array kernel in float32 for half types and round once (PyTorch's opmath); 0-d
    inputs run as 1-element arrays so kernels may work in place on their temporaries; meta
    arrays (whose temporaries are read-only) give a meta result of the input's shape."""
    def run(x, *p):
        if type(x) is MetaArray:
            return meta_like(x.shape, x.dtype)
        if x.ndim == 0:
            return run(x.reshape(1), *p).reshape(())
        if _is_half(x):
            # PyTorch's vectorised float32 arithmetic where ember has it (_opmath.py)
            k = _OM.HALF_FWD.get(fn.__name__)
            r = None if k is None else k(x.astype(np.float32), x.dtype, *p)
            return (fn(x.astype(np.float32), *p) if r is None else r).astype(x.dtype)
        return fn(x, *p)
    run.__name__ = fn.__name__
    return run


def _grad_helper(name: str, np_deriv, em_deriv, select: bool = False) -> None:
    """Register ``ns.<name>(g, x, *p) = g * f'(x)``: NumPy's scales the derivative (a fresh
    temporary) by ``g`` in place when it can; ember's composes ember ops."""
    deriv = _opmath(np_deriv)

    def np_impl(g, x, *p):
        if type(g) is np.ndarray and g.shape == x.shape and g.ndim and not _is_half(x):
            d = np_deriv(x, *p)
            np.multiply(d, g, out=d)
            return d
        if type(x) is np.ndarray and x.ndim and _is_half(x):
            # the fused backward kernels compute g * f'(x) in float32 and round once; a
            # piecewise kernel (``select``) writes a literal +0 where the derivative is 0
            k = _OM.HALF_GRAD.get(name)
            r = None if k is None else k(np.asarray(g).astype(np.float32),
                                         x.astype(np.float32), x.dtype, *p)
            if r is None:
                r = np.asarray(g).astype(np.float32) * np_deriv(x.astype(np.float32), *p)
            if select:
                r += 0
            return r.astype(x.dtype)
        return g * deriv(x, *p)

    def em_impl(g, x, *p):
        return g * em_deriv(x, *p)
    ns_fn(name, np_impl, em_impl)


def _act(name, fwd, vjp, node=None, saves=(0,), save_out=False, names=None) -> Op:
    return Op(name, fwd, vjp, saves=() if save_out else saves, save_out=save_out, node=node,
              elementwise=True, names=names)


def _in_dtype(t: Tensor, v: float) -> float:
    """A limit as hardshrink's kernel sees it: rounded to a half input's dtype (PyTorch's
    other kernels compare in float32)."""
    d = t._data.dtype
    return float(np.asarray(v, np.float32).astype(d)) if _is_half(t._data) else float(v)


def _not_impl(kernel: str, dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(dtype)}\'')


def _need_float(t: Tensor, kernel: str, complex_ok: bool = False) -> None:
    """PyTorch's error for a kernel dispatched on a dtype it has no implementation for."""
    dt = t.dtype
    if dt.name in _FLOATS or complex_ok and dt.is_complex:
        return
    raise _not_impl(kernel, dt)


def _link(y, x):
    return y


# zeros shaped like x, with a (zero) derivative: under create_graph, ``ns.act_link(y, x)``
# keeps ``y`` connected to ``x`` where PyTorch's double backward gives zeros, not no gradient
# (``x * 0`` would turn infinite inputs into NaN)
ZERO_LINK = Op("zeros_like", lambda x: np.zeros_like(x), lambda ns, g, need: (g * 0,),
               linear=True, node="ZerosLikeBackward0")


def _em_link(y: Tensor, x: Tensor) -> Tensor:
    return y + apply(ZERO_LINK, (x,))


ns_fn("act_link", _link, _em_link)


def _factor(m, a: float, b: float, dtype):
    """``where(m, a, b)`` for scalars ``a``, ``b`` as an array of ``dtype``, by arithmetic on
    the mask (several times faster than NumPy's where)."""
    f = m.astype(dtype)
    if a - b != 1:
        f *= a - b
    if b != 0:
        f += b
    return f


def _mask_deriv(name: str, cond, a=1.0, b=0.0) -> None:
    """A piecewise-constant derivative ``where(cond(x, *p), a, b)`` (``a``, ``b`` scalars or
    functions of the params), registered as ``ns.<name>(g, x, *p)``."""
    def val(v, p):
        return v(*p) if callable(v) else v

    def np_deriv(x, *p):
        return _factor(cond(x, *p), val(a, p), val(b, p), x.dtype)

    def em_deriv(x, *p):
        # (a where cond, else b) in x's dtype: a where of two Python floats would be float32
        lo, hi = val(b, p), val(a, p)
        return _em_link(cond(x, *p).to(x.dtype) * (hi - lo) + lo, x)
    _grad_helper(name, np_deriv, em_deriv, select=True)

ns_fn("act_sigmoid", _opmath(_sigmoid_np), lambda x: sigmoid(x))


def _run(op: Op, input: Tensor, params: tuple, inplace_: bool) -> Tensor:
    return inplace(op, input, (), params) if inplace_ else unary(op, input, params)


# ---- relu, hardtanh, relu6, threshold ---------------------------------------------------------

def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.relu``: ``max(x, 0)`` (``ReluBackward0``), in place when asked."""
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    """``F.relu_``."""
    return input.relu_()


def _hardtanh_fwd(x, lo, hi):
    return np.clip(x, lo, hi).astype(x.dtype, copy=False)


# NaN inputs get no gradient, as in PyTorch's vectorized kernels
_mask_deriv("act_hardtanh_bwd", lambda x, lo, hi: (x > lo) & (x < hi))


def _hardtanh_vjp(ns, g, need, x, lo, hi):
    return (ns.act_hardtanh_bwd(g, x, lo, hi),)


HARDTANH = _act("hardtanh", _hardtanh_fwd, _hardtanh_vjp,
                names=("self", "min_val", "max_val"))


def _hardtanh_args(t: Tensor, lo, hi) -> tuple:
    dt = t.dtype
    if dt is D.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if dt.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if dt.is_floating_point:
        return float(lo), float(hi)
    if dt is D.uint8 and (lo < 0 or hi < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return int(lo), int(hi)     # PyTorch converts the limits to the integer type


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``F.hardtanh``: clamp to ``[min_val, max_val]`` (``HardtanhBackward0``)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _run(HARDTANH, input, _hardtanh_args(input, min_val, max_val), inplace)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``F.hardtanh_``."""
    return hardtanh(input, min_val, max_val, True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.relu6``: ``hardtanh(x, 0, 6)``, as PyTorch (``HardtanhBackward0``)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _threshold_fwd(x, th, value):
    return np.where(x <= th, value, x).astype(x.dtype, copy=False)


# NaN inputs pass the gradient (x <= threshold fails), as PyTorch
_mask_deriv("act_threshold_bwd", lambda x, th, value: x <= th, 0.0, 1.0)


def _threshold_vjp(ns, g, need, x, th, value):
    return (ns.act_threshold_bwd(g, x, th, value),)


THRESHOLD = _act("threshold", _threshold_fwd, _threshold_vjp,
                 names=("self", "threshold", None))
# in place, PyTorch's node is another one, with the same formula on the original input
THRESHOLD_ = _act("threshold_", _threshold_fwd, _threshold_vjp, node="ThresholdBackward1",
                  names=("self", "threshold", None))


def _threshold_args(t: Tensor, th, value) -> tuple:
    dt = t.dtype
    if dt is D.bool or dt.is_complex:
        raise _not_impl("threshold_cpu", dt)
    if dt.is_floating_point:
        return float(th), float(value)
    return int(th), int(value)


def _threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``F.threshold``: ``x if x > threshold else value``."""
    params = _threshold_args(input, threshold, value)
    return _run(THRESHOLD_ if inplace else THRESHOLD, input, params, inplace)


threshold = _threshold   # (the parameter named threshold would shadow the function)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """``F.threshold_``."""
    return _threshold(input, threshold, value, True)


# ---- leaky_relu, rrelu ----------------------------------------------------------------------

def _leaky_fwd(x, slope):
    if 0 <= slope <= 1:
        y = x * slope
        return np.maximum(x, y, out=y)
    return x * _factor(x > 0, 1.0, slope, x.dtype)


_mask_deriv("act_leaky_bwd", lambda x, slope: x > 0, 1.0, lambda slope: slope)


def _leaky_vjp(ns, g, need, x, slope):
    return (ns.act_leaky_bwd(g, x, slope),)


_NEG_LEAKY = ("In-place leakyReLu backward calculation is triggered with a negative slope which is "
              "not supported. This is caused by calling in-place forward function with a negative "
              "slope, please call out-of-place version instead. File an issue at "
              "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
              "backward calculation with negative slope")


def _leaky_result_vjp(ns, g, need, r, slope):
    if slope < 0:
        raise RuntimeError(_NEG_LEAKY)
    return _leaky_vjp(ns, g, need, r, slope)


LEAKY_RELU = _act("leaky_relu", _opmath(_leaky_fwd), _leaky_vjp,
                  names=("self", "negative_slope"))
LEAKY_RELU_ = _act("leaky_relu_", _opmath(_leaky_fwd), _leaky_result_vjp,
                   node="LeakyReluBackward1", save_out=True, names=("result", "negative_slope"))


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``F.leaky_relu``: ``x if x > 0 else negative_slope * x``."""
    _need_float(input, "leaky_relu_cpu")
    op = LEAKY_RELU_ if inplace else LEAKY_RELU
    return _run(op, input, (float(negative_slope),), inplace)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``F.leaky_relu_``."""
    return leaky_relu(input, negative_slope, True)


def _rrelu_fwd(x, noise, lower, upper, training):
    if noise is None:
        return _leaky_fwd(x, (lower + upper) / 2)
    return (x * noise).astype(x.dtype, copy=False)


def _rrelu_vjp(ns, g, need, x, noise, lower, upper, training):
    if noise is not None and upper - lower > 1e-6:
        return (ns.act_link(g * ns.const(noise), x),)
    return _leaky_vjp(ns, g, need, x, (lower + upper) / 2)


def _rrelu_result_vjp(ns, g, need, r, noise, lower, upper, training):
    if noise is not None and upper - lower > 1e-6:
        return (ns.act_link(g * ns.const(noise), r),)
    return _leaky_result_vjp(ns, g, need, r, (lower + upper) / 2)


RRELU = _act("rrelu", _opmath(_rrelu_fwd), _rrelu_vjp, node="RreluWithNoiseBackward0",
             names=("self", "noise", "lower", "upper", "training"))
RRELU_ = _act("rrelu_", _opmath(_rrelu_fwd), _rrelu_result_vjp, node="RreluWithNoiseBackward1",
              save_out=True, names=("result", "noise", "lower", "upper", "training"))


def _rrelu_noise(x: Tensor, lower: float, upper: float):
    """Slopes drawn uniformly from ``[lower, upper]`` where ``x <= 0``, 1 elsewhere (PyTorch's
    noise tensor), from ember's generator."""
    d = x._data
    wdt = np.float32 if _is_half(d) else d.dtype
    r = _rng(None).uniform(lower, upper, d.shape).astype(wdt)
    pos = d > 0
    r[pos] = 1
    return r


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """``F.rrelu``: random negative slopes in training, their mean in evaluation
    (``RreluWithNoiseBackward0``)."""
    _need_float(input, "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    noise = _rrelu_noise(input, lower, upper) if training else None
    params = (noise, float(lower), float(upper), bool(training))
    return _run(RRELU_ if inplace else RRELU, input, params, inplace)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """``F.rrelu_``."""
    return rrelu(input, lower, upper, training, True)


# ---- elu, selu, celu ------------------------------------------------------------------------

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _expm1_fast(u):
    """expm1 in place: NumPy's (exact, but ~8x slower than exp) for float64; ``exp(u) - 1``
    for float32, absolute error within an ulp of 1."""
    if u.dtype == np.float64:
        return np.expm1(u, out=u)
    np.exp(u, out=u)
    u -= 1
    return u


@_opmath
def _elu_fwd(x, alpha, scale, input_scale):
    # scale * max(x, 0) + alpha * scale * expm1(min(x, 0) * input_scale): NaN stays NaN
    neg = np.minimum(x, 0)
    neg *= input_scale
    _expm1_fast(neg)
    neg *= alpha * scale
    y = np.maximum(x, 0)
    if scale != 1:
        y *= scale
    y += neg
    return y


def _elu_d_np(x, alpha, scale, input_scale):
    # scale for x > 0, else c exp(x input_scale) with c = input_scale alpha scale; NaN gives
    # NaN (the exponential branch), as PyTorch's vectorized kernel
    c = input_scale * alpha * scale
    e = np.minimum(x, 0)
    e *= input_scale
    np.exp(e, out=e)
    e *= c
    e += _factor(x > 0, scale - c, 0.0, x.dtype)
    return e


def _elu_d_em(x, alpha, scale, input_scale):
    from .pointwise_more import where
    return where(x > 0, scale, exp(x * input_scale) * (input_scale * alpha * scale))


def _elu_result_d_np(r, alpha, scale, input_scale):
    # from the result: input_scale (r + alpha scale) where r <= 0
    c = input_scale * alpha * scale
    d = np.minimum(r, 0)
    d *= input_scale
    d += c
    d += _factor(r > 0, scale - c, 0.0, r.dtype)
    return d


def _elu_result_d_em(r, alpha, scale, input_scale):
    from .pointwise_more import where
    return where(r > 0, scale, (r + alpha * scale) * input_scale)


_grad_helper("act_elu_bwd", _elu_d_np, _elu_d_em)
_grad_helper("act_elu_result_bwd", _elu_result_d_np, _elu_result_d_em)


def _elu_vjp(ns, g, need, x, alpha, scale, input_scale):
    return (ns.act_elu_bwd(g, x, alpha, scale, input_scale),)


_NEG_ELU = ("In-place elu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead.")


def _elu_result_vjp(ns, g, need, r, alpha, scale, input_scale):
    if alpha < 0:
        raise RuntimeError(_NEG_ELU)
    return (ns.act_elu_result_bwd(g, r, alpha, scale, input_scale),)


ELU = _act("elu", _elu_fwd, _elu_vjp, names=("self", "alpha", "scale", "input_scale"))
ELU_ = _act("elu_", _elu_fwd, _elu_result_vjp, node="EluBackward1", save_out=True,
            names=("result", "alpha", "scale", "input_scale"))


def _celu_fwd(x, alpha):
    return _elu_fwd(x, alpha, 1.0, 1.0 / alpha)


def _celu_grad_scale(alpha: float) -> float:
    # PyTorch's celu backward takes 1 / alpha with alpha rounded to float32
    return 1.0 / float(np.float32(alpha))


def _celu_vjp(ns, g, need, x, alpha):
    return _elu_vjp(ns, g, need, x, alpha, 1.0, _celu_grad_scale(alpha))


def _celu_result_vjp(ns, g, need, r, alpha):
    return _elu_result_vjp(ns, g, need, r, alpha, 1.0, _celu_grad_scale(alpha))


CELU = _act("celu", _celu_fwd, _celu_vjp, names=("self", "alpha"))
CELU_ = _act("celu_", _celu_fwd, _celu_result_vjp, node="CeluBackward1", save_out=True,
             names=("result", "alpha"))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``F.elu``: ``x if x > 0 else alpha * (exp(x) - 1)`` (``EluBackward0``/``EluBackward1``)."""
    _need_float(input, "elu_cpu")
    params = (float(alpha), 1.0, 1.0)
    return _run(ELU_ if inplace else ELU, input, params, inplace)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``F.elu_``."""
    return elu(input, alpha, True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.selu``: PyTorch's elu with SELU's alpha and scale (``EluBackward0``)."""
    _need_float(input, "elu_cpu")
    params = (_SELU_ALPHA, _SELU_SCALE, 1.0)
    return _run(ELU_ if inplace else ELU, input, params, inplace)


def selu_(input: Tensor) -> Tensor:
    """``F.selu_``."""
    return selu(input, True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``F.celu``: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``CeluBackward0``)."""
    _need_float(input, "elu_cpu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    params = (float(alpha),)
    return _run(CELU_ if inplace else CELU, input, params, inplace)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``F.celu_``."""
    return celu(input, alpha, True)


# ---- gelu, silu, mish, softplus, logsigmoid ---------------------------------------------------

_SQRT1_2 = 0.7071067811865476       # 1 / sqrt(2)
_INV_SQRT_2PI = 0.3989422804014327  # 1 / sqrt(2 pi)
_K_BETA = 0.7978845608028654        # sqrt(2 / pi)
_K_KAPPA = 0.044715


# Abramowitz & Stegun 7.1.26: erfc(z) ~ t (a1 + a2 t + ... + a5 t^4) exp(-z^2), t = 1/(1 + p z)
# for z >= 0, absolute error below 1.5e-7: the float32 formula of PyTorch's vectorized erf
_AS_P = 0.3275911
_AS_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


# Q(|x|) = erfc(|x| / sqrt 2) / 2 = t P(t) phi(x) with the series' coefficients scaled by
# 1 / (2 phi's constant), so that the one exp gives phi(x) itself
_AS_P2 = _AS_P * _SQRT1_2
_AS_C = tuple(a * 0.5 / _INV_SQRT_2PI for a in _AS_A)
_LOG_INV_SQRT_2PI = math.log(_INV_SQRT_2PI)


_F32_0, _F32_INF = np.float32(0), np.float32(np.inf)


def _gelu_cdf_pdf32(x):
    """Phi(x) and phi(x) = exp(-x^2 / 2) / sqrt(2 pi) for a float32 ``x``, from one exp, in
    22 passes over three fresh arrays: ``Phi = 1/2 + sign(x) (1/2 - Q(|x|))``."""
    t = np.abs(x)
    t *= _AS_P2
    t += 1
    np.divide(1, t, out=t)      # np.reciprocal is twice as slow on float32 (same values)
    e = np.square(x)
    e *= -0.5
    e += _LOG_INV_SQRT_2PI
    np.exp(e, out=e)            # phi(x)
    r = t * _AS_C[0]
    for c in _AS_C[1:]:
        r += c
        r *= t
    r *= e                      # Q(|x|), the upper tail
    np.subtract(0.5, r, out=r)
    # Q(0) may round above 1/2; x's sign bit is or-ed in below. (clip with bounds of r's own
    # type is several times faster than a maximum with 0, the same values)
    np.clip(r, _F32_0, _F32_INF, out=r)
    if type(x) is np.ndarray and type(r) is np.ndarray:
        sign = np.bitwise_and(x.view(np.uint32), np.uint32(0x80000000),
                              out=t.view(np.uint32))
        np.bitwise_or(r.view(np.uint32), sign, out=r.view(np.uint32))
    else:
        np.copysign(r, x, out=r)
    r += 0.5
    return r, e


def _erf_cdf(x):
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2 in float64 (SciPy's erf: PyTorch's double kernel is
    exact to an ulp too)."""
    t = x * _SQRT1_2
    _sc.erf(t, out=t)
    t += 1
    t *= 0.5
    return t


class _GeluGrad:
    """gelu's derivative, computed by a recording float32 forward from the Phi and exp it
    already has, for the backward on arrays (which would otherwise compute them again)."""

    __slots__ = ("d",)

    def __init__(self):
        self.d = None


@_opmath
def _gelu_fwd(x, approximate, keep=None):
    if keep is not None and approximate != "tanh" and x.dtype == np.float32:
        cdf, pdf = _gelu_cdf_pdf32(x)
        y = cdf * x
        pdf *= x                # Phi(x) + x phi(x), as _gelu_d_np
        pdf += cdf
        keep.d = pdf
        return y
    if approximate == "tanh":
        t = x * x
        t *= _K_KAPPA
        t += 1
        t *= x
        t *= _K_BETA
        np.tanh(t, out=t)
        t += 1
        t *= 0.5
    elif x.dtype == np.float32:
        t = _gelu_cdf_pdf32(x)[0]
    else:
        t = _erf_cdf(x)
    t *= x
    return t


def _gelu_d_np(x, approximate):
    if approximate == "tanh":
        x2 = x * x
        inner = x2 * _K_KAPPA
        inner += 1
        inner *= x
        inner *= _K_BETA
        t = np.tanh(inner, out=inner)
        # 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 kappa x^2)
        right = t * t
        np.subtract(1, right, out=right)
        right *= x
        x2 *= 3 * _K_KAPPA
        x2 += 1
        right *= x2
        right *= 0.5 * _K_BETA
        t += 1
        t *= 0.5
        t += right
        return t
    # Phi(x) + x phi(x)
    if x.dtype == np.float32:
        cdf, pdf = _gelu_cdf_pdf32(x)
    else:
        cdf = _erf_cdf(x)
        pdf = x * x
        pdf *= -0.5
        np.exp(pdf, out=pdf)
        pdf *= _INV_SQRT_2PI
    pdf *= x
    cdf += pdf
    return cdf


def _gelu_d_em(x, approximate):
    if approximate == "tanh":
        x2 = x * x
        t = tanh(x * (x2 * _K_KAPPA + 1) * _K_BETA)
        return (t + 1) * 0.5 + x * (1 - t * t) * (x2 * (3 * _K_KAPPA) + 1) * (0.5 * _K_BETA)
    return (erf(x * _SQRT1_2) + 1) * 0.5 + x * exp(x * x * -0.5) * _INV_SQRT_2PI


_grad_helper("act_gelu_bwd", _gelu_d_np, _gelu_d_em)


def _gelu_vjp(ns, g, need, x, approximate, keep=None):
    if ns is NP and keep is not None and keep.d is not None and type(g) is np.ndarray and (
            g.shape == keep.d.shape and g.dtype == keep.d.dtype):
        return (g * keep.d,)
    if keep is _OM.DNNL_GELU and ns is NP and type(g) is np.ndarray and \
            type(x) is np.ndarray and g.dtype == x.dtype:
        # PyTorch's oneDNN gelu backward for a contiguous bfloat16 input (_opmath)
        gx = _OM.gelu_erf_bwd_dnnl(g.astype(np.float32), x.astype(np.float32))
        return (np.broadcast_to(gx, np.broadcast_shapes(g.shape, x.shape)).astype(x.dtype),)
    return (ns.act_gelu_bwd(g, x, approximate),)


GELU = _act("gelu", _gelu_fwd, _gelu_vjp, names=("self", "approximate", None))


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``F.gelu``: ``x * Phi(x)``, or its tanh approximation (``GeluBackward0``)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _need_float(input, "GeluKernelImpl")
    d = input._data
    keep = _GeluGrad() if STATE.grad and d.dtype == np.float32 and d.ndim and \
        input.requires_grad else None
    if approximate == "none" and d.dtype == D.bfloat16.np and input.is_contiguous():
        keep = _OM.DNNL_GELU    # PyTorch runs oneDNN's gelu here (_opmath)
    return unary(GELU, input, (approximate, keep))


@_opmath
def _silu_fwd(x):
    if np.iscomplexobj(x):
        return x / (1 + np.exp(-x))
    s = _sigmoid_np(x)
    s *= x
    return s


def _silu_d_np(x):
    # s (1 + x (1 - s))
    s = _sigmoid_np(x)
    d = 1 - s
    d *= x
    d += 1
    d *= s
    return d


def _silu_d_em(x):
    s = sigmoid(x)
    return s * (1 + x * (1 - s))


_grad_helper("act_silu_bwd", _silu_d_np, _silu_d_em)
SILU = _act("silu", _silu_fwd, lambda ns, g, need, x: (ns.act_silu_bwd(g, ns.conj(x)),))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.silu``: ``x * sigmoid(x)`` (``SiluBackward0``)."""
    _need_float(input, "silu_cpu", complex_ok=True)
    if input.is_complex() and input.requires_grad and STATE.grad:
        raise RuntimeError("silu does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return _run(SILU, input, (), inplace)


def _softplus1_np(x):
    """log(1 + exp(x)), without overflow."""
    return np.logaddexp(x, 0)


def _mish_parts(x):
    """n = exp(min(x, 20)), N = n (n + 2), D = N + 2: tanh(softplus(x)) = N / D without a
    logarithm (exp(x) beyond 20 changes nothing in double precision)."""
    n = np.minimum(x, 20)
    np.exp(n, out=n)
    big = n + 2
    big *= n
    d = big + 2
    return n, big, d


@_opmath
def _mish_fwd(x):
    n, big, d = _mish_parts(x)
    big /= d
    big *= x
    return big


def _mish_d_np(x):
    # tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2), with tanh(sp) = N / D, sigmoid(x) = n / (n + 1)
    n, tsp, d = _mish_parts(x)
    tsp /= d
    d = n + 1
    np.divide(n, d, out=n)
    np.multiply(tsp, tsp, out=d)
    np.subtract(1, d, out=d)
    d *= n
    d *= x
    d += tsp
    return d


def _mish_d_em(x):
    from .pointwise import log1p
    t = tanh(log1p(exp(-abs(x))) + x.clamp_min(0))
    return t + x * sigmoid(x) * (1 - t * t)


_grad_helper("act_mish_bwd", _mish_d_np, _mish_d_em)
MISH = _act("mish", _mish_fwd, lambda ns, g, need, x: (ns.act_mish_bwd(g, x),))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.mish``: ``x * tanh(softplus(x))`` (``MishBackward0``)."""
    _need_float(input, "mish_cpu")
    return _run(MISH, input, (), inplace)


@_opmath
def _softplus_fwd(x, beta, threshold):
    bx = x * beta
    soft = _softplus1_np(bx)
    soft /= beta
    return np.where(bx > threshold, x, soft).astype(x.dtype, copy=False)


def _softplus_d_np(x, beta, threshold):
    bx = x * beta
    s = _sigmoid_np(bx)
    d = 1 - s
    d *= bx > threshold
    d += s
    return d


def _softplus_d_em(x, beta, threshold):
    from .pointwise_more import where
    bx = x * beta
    return where(bx > threshold, 1.0, sigmoid(bx))


_grad_helper("act_softplus_bwd", _softplus_d_np, _softplus_d_em)
SOFTPLUS = _act("softplus", _softplus_fwd,
                lambda ns, g, need, x, b, t: (ns.act_softplus_bwd(g, x, b, t),),
                names=("self", "beta", "threshold"))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``F.softplus``: ``log(1 + exp(beta x)) / beta``, linear above ``threshold``."""
    _need_float(input, "softplus_cpu")
    return unary(SOFTPLUS, input, (float(beta), float(threshold)))


@_opmath
def _logsigmoid_fwd(x):
    r = _softplus1_np(-x)
    np.negative(r, out=r)
    return r


def _logsigmoid_d_np(x):
    return _sigmoid_np(-x)


_grad_helper("act_logsigmoid_bwd", _logsigmoid_d_np, lambda x: sigmoid(-x))
LOGSIGMOID = _act("log_sigmoid", _logsigmoid_fwd,
                  lambda ns, g, need, x: (ns.act_logsigmoid_bwd(g, x),),
                  node="LogSigmoidBackward0")


def logsigmoid(input: Tensor) -> Tensor:
    """``F.logsigmoid``: ``log(sigmoid(x))`` computed as ``-softplus(-x)``."""
    _need_float(input, "log_sigmoid_cpu")
    return unary(LOGSIGMOID, input)


# ---- hardsigmoid, hardswish --------------------------------------------------------------------

_SIXTH32 = float(np.float32(1.0) / np.float32(6.0))   # PyTorch's kernel uses a float 1/6
_HSIG_BWD_MSG = "derivative for aten::hardsigmoid_backward is not implemented"


@_opmath
def _hardsigmoid_fwd(x):
    t = x + 3
    np.clip(t, 0, 6, out=t)
    t /= 6
    return t


def _hsig_bwd_np(g, x):
    f = _factor((x > -3) & (x < 3), _SIXTH32, 0.0, np.float32 if _is_half(x) else x.dtype)
    if _is_half(x):   # half types: one rounding, and a literal +0 outside (-3, 3)
        return (g * f + 0).astype(g.dtype)
    return (g * f).astype(g.dtype, copy=False)


def _not_differentiable(*args):
    raise RuntimeError(_HSIG_BWD_MSG)


# PyTorch's hardsigmoid_backward has no derivative: a graph built under create_graph ends in
# a NotImplemented node that raises when reached
HSIG_BWD = Op("hardsigmoid_backward", _hsig_bwd_np, _not_differentiable, jvp=_not_differentiable,
              saves=(1,), node="NotImplemented")
HSIG_BWD.node.name = lambda self: "ember::autograd::NotImplemented"
ns_fn("act_hardsigmoid_bwd", _hsig_bwd_np, lambda g, x: apply(HSIG_BWD, (g, x)))
HARDSIGMOID = _act("hardsigmoid", _hardsigmoid_fwd,
                   lambda ns, g, need, x: (ns.act_hardsigmoid_bwd(g, x),))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.hardsigmoid``: ``relu6(x + 3) / 6``; its backward has no derivative, as PyTorch."""
    _need_float(input, "hardsigmoid_cpu")
    return _run(HARDSIGMOID, input, (), inplace)


@_opmath
def _hardswish_fwd(x):
    t = x + 3
    np.clip(t, 0, 6, out=t)
    t *= x
    t /= 6
    return t


def _hardswish_d_np(x):
    # x / 3 + 1/2 inside (-3, 3), 0 below, 1 above; NaN stays NaN, as PyTorch's vectorized
    # kernel (the clip keeps infinities out of the masked product)
    d = x / 3
    d += 0.5
    np.clip(d, -0.5, 1.5, out=d)
    d *= (x > -3) & (x < 3)
    d += x >= 3
    return d


def _hardswish_d_em(x):
    from .pointwise_more import where
    return where(x <= -3, 0.0, where(x >= 3, 1.0, x / 3 + 0.5))


_grad_helper("act_hardswish_bwd", _hardswish_d_np, _hardswish_d_em, select=True)
HARDSWISH = _act("hardswish", _hardswish_fwd,
                 lambda ns, g, need, x: (ns.act_hardswish_bwd(g, x),))


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``F.hardswish``: ``x * relu6(x + 3) / 6`` (``HardswishBackward0``)."""
    _need_float(input, "hardswish_cpu")
    return _run(HARDSWISH, input, (), inplace)


# ---- shrinkage ------------------------------------------------------------------------------

def _softshrink_fwd(x, lambd):
    # x - clip(x): 0 inside the band, shifted by lambd outside; NaN stays NaN, as PyTorch
    return x - np.clip(x, -lambd, lambd)


# NaN inputs get no gradient, as in PyTorch's vectorized kernels
_mask_deriv("act_shrink_bwd", lambda x, lambd: (x < -lambd) | (x > lambd))


def _shrink_vjp(ns, g, need, x, lambd):
    return (ns.act_shrink_bwd(g, x, lambd),)


def _hardshrink_fwd(x, lambd):
    return x * ((x < -lambd) | (x > lambd))


SOFTSHRINK = _act("softshrink", _opmath(_softshrink_fwd), _shrink_vjp, names=("self", "lambd"))
HARDSHRINK = _act("hardshrink", _opmath(_hardshrink_fwd), _shrink_vjp, names=("self", "lambd"))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``F.softshrink``: shrink towards 0 by ``lambd`` (``SoftshrinkBackward0``)."""
    _need_float(input, "softshrink_check")
    if not lambd >= 0:
        hi = float(D.finfo(input.dtype).max)
        raise RuntimeError(f"lambda must be in range [0, {hi:g}] for input dtype "
                           f"{_type_name(input.dtype)}, but found {lambd:g}")
    return unary(SOFTSHRINK, input, (float(lambd),))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``F.hardshrink``: zero inside ``[-lambd, lambd]`` (``HardshrinkBackward0``)."""
    _need_float(input, "hardshrink_cpu")
    return unary(HARDSHRINK, input, (_in_dtype(input, lambd),))


def softsign(input: Tensor) -> Tensor:
    """``F.softsign``: ``x / (|x| + 1)``, composed as PyTorch's (``DivBackward0``)."""
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """``F.tanhshrink``: ``x - tanh(x)``, composed as PyTorch's (``SubBackward0``)."""
    return input - input.tanh()


# ---- glu, prelu --------------------------------------------------------------------------------

def _halves(x, dim: int):
    h = x.shape[dim] // 2
    lead = (slice(None),) * dim
    return x[lead + (slice(0, h),)], x[lead + (slice(h, None),)]


def _glu_fwd(x, dim):
    a, b = _halves(x, dim)
    return a * _opmath(_sigmoid_np)(b)


def _glu_vjp(ns, g, need, x, dim):
    a, b = _halves(x, dim)
    s = ns.act_sigmoid(b)
    ga = g * s
    return (ns.cat([ga, ga * a * (1 - s)], dim),)


def _glu_jvp(ns, tangents, primals, outs, dim):
    a, b = _halves(primals[0], dim)
    ta, tb = _halves(tangents[0], dim)
    s = ns.act_sigmoid(b)
    return s * (ta + a * (1 - s) * tb)


GLU = Op("glu", _glu_fwd, _glu_vjp, _glu_jvp, saves=(0,), names=("self", "dim"))


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``F.glu``: ``a * sigmoid(b)`` for the two halves of ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    _need_float(input, "glu_cpu")
    d = _wrap_dim(int(dim), input.dim())
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    return apply(GLU, (input,), (d,))


def _prelu_fwd(x, w):
    # max(x, 0) + w min(x, 0): NaN and infinities come through as PyTorch's
    y = np.minimum(x, 0)
    y *= w
    y += np.maximum(x, 0)
    return y


def _prelu_dx_np(g, x, w):
    f = (x > 0).astype(np.result_type(x, w))
    f *= 1 - w
    f += w
    if type(g) is np.ndarray and g.shape == f.shape:
        f *= g
        return f
    return g * f


def _prelu_dx_em(g, x, w):
    from .pointwise_more import where
    return where(x > 0, g, g * w)


ns_fn("act_prelu_dx", _prelu_dx_np, _prelu_dx_em)
ns_fn("act_neg_part", lambda x: np.minimum(x, 0), lambda x: x.clamp_max(0))


def _prelu_vjp(ns, g, need, x, w):
    gx = ns.act_prelu_dx(g, x, w) if need[0] else None
    gw = g * ns.act_neg_part(x) if need[1] else None
    return gx, gw


PRELU = Op("prelu", _opmath(_prelu_fwd), _prelu_vjp, saves=(0, 1), elementwise=True,
           node="PreluKernelBackward0", names=("self", "weight"))


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``F.prelu``: ``max(0, x) + weight * min(0, x)``, one weight per channel (dim 1) or a
    single one; the weight is reshaped to broadcast, as PyTorch's (``PreluKernelBackward0``)."""
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{_type_name(input.dtype)} and {_type_name(weight.dtype)}")
    nd, nw = input.dim(), weight.numel()
    if nw != 1:
        if nd == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        ch = input.shape[1] if nd > 1 else 1
        if ch != nw:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {nw} and channel size = {ch}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    _need_float(input, "prelu_cpu")
    if nd != weight.dim():
        shape = [1] * nd
        if nd > 1:
            shape[1] = nw
        weight = weight.reshape(shape)
    return apply(PRELU, (input, weight))


# ---- softmax family ---------------------------------------------------------------------------

def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """``F.softmax``: ``dim=None`` picks PyTorch's implicit dim (with its warning)."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim, dtype=dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """``F.softmin``: ``softmax(-input)``."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return (-input).softmax(dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype=None) -> Tensor:
    """``F.log_softmax``."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim, dtype=dtype)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """``F.gumbel_softmax``: softmax of ``(logits + Gumbel noise) / tau``; ``hard`` returns
    one-hot samples with the soft sample's gradient (straight-through), as PyTorch's."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    if not logits.is_floating_point():
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be "
            f"a floating point but you specified {_type_name(logits.dtype)}")
    d = logits._data
    e = _rng(None).exponential(1.0, d.shape)
    gumbels = _const(-np.log(e).astype(d.dtype))
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    from .creation import zeros_like
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def _const(a: np.ndarray) -> Tensor:
    return _make(a, Version(), False, None)


# ---- dropout family -----------------------------------------------------------------------------

_ALPHA = 1.7580993408473766   # SELU's -scale * alpha, the value alpha dropout saturates to


def _check_p(p) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _bernoulli(input: Tensor, keep: float, feature: bool) -> np.ndarray:
    """A 0/1 mask in ``input``'s dtype, one draw per element or per (sample, channel)."""
    d = input._data
    if feature:
        if d.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = d.shape[:2] + (1,) * (d.ndim - 2)
    else:
        shape = d.shape
    if not input.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_type_name(input.dtype)}")
    return (_rng(None).random(shape, dtype=np.float32) < keep).astype(d.dtype)


def _dropout_impl(input: Tensor, p: float, training: bool, inplace: bool, feature: bool,
                  alpha: bool) -> Tensor:
    """PyTorch's ``_dropout_impl``: the input itself when nothing is dropped, ``input * 0``
    for ``p = 1``, else ``input * noise`` (plus the alpha shift), in place when asked."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = _const(np.zeros_like(input._data, shape=()))
        return input.mul_(zero) if inplace else input * zero
    if input.dtype is D.complex32:   # (ember._chalf: PyTorch's noise, drawn in complex32)
        raise NotImplementedError("\"bernoulli_scalar_cpu_\" not implemented for 'ComplexHalf'")
    noise = _bernoulli(input, 1 - p, feature)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = noise - 1
        b *= _ALPHA * a
        b += _ALPHA * a * p
        noise *= a
        nz, bt = _const(noise), _const(b.astype(noise.dtype, copy=False))
        return input.mul_(nz).add_(bt) if inplace else input * nz + bt
    noise /= 1 - p
    nz = _const(noise)
    return input.mul_(nz) if inplace else input * nz


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """``F.dropout``: zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)`` (``MulBackward0``)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, False)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """``F.alpha_dropout``: dropped elements take SELU's saturation value, then an affine map
    keeps mean and variance (``AddBackward0``)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """``F.feature_alpha_dropout``: alpha dropout of whole channels."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, True, True)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                     batched: bool) -> Tensor:
    """Channel dropout; an unbatched input gets a batch dim for the call, as PyTorch's: in
    place, ``input`` itself is unsqueezed and squeezed back (two version bumps, the node
    ``SqueezeBackward4``, whatever the dropout did)."""
    if batched:
        return _dropout_impl(input, p, training, inplace, True, False)
    if not inplace:
        out = _dropout_impl(input.unsqueeze(0), p, training, False, True, False)
        return out.squeeze(0) if out is not input else input
    input.unsqueeze_(0)
    return _dropout_impl(input, p, training, True, True, False).squeeze_(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """``F.dropout1d``: zero whole channels of ``(N, C, L)`` or ``(C, L)`` inputs."""
    _check_p(p)
    nd = input.dim()
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    return _feature_dropout(input, p, training, inplace, nd == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """``F.dropout2d``: zero whole channels; a 3-D input is taken as ``(N, C, L)``, with
    PyTorch's warnings."""
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if nd == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """``F.dropout3d``: zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    _check_p(p)
    nd = input.dim()
    if nd not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, nd == 5)


# ---- Tensor methods PyTorch has for these ----------------------------------------------------

method("hardshrink", hardshrink)
method("prelu", prelu)
