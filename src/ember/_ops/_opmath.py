"""PyTorch's vectorised float32 ("opmath") arithmetic for half-type kernels, bit for bit.

PyTorch computes float16/bfloat16 CPU kernels in float32 with its ``Vectorized<float>``
functions and rounds the result once. The float32 results of those functions differ from
NumPy's in the last float32 bit now and then, and that bit sometimes survives the rounding to
the half type. This module reproduces them on float32 NumPy arrays: SLEEF's ``expf`` and its
double-float ``tanhf``, the Abramowitz-Stegun ``erf``, the multiply-adds GCC contracts into
FMAs, lane-wise sums reduced by AVX512's shuffle tree, the summation orders of PyTorch's
reference BLAS for half types (and of oneDNN's AVX512-BF16 GEMM), oneDNN's bfloat16 gelu,
PyTorch's Welford row moments for layer_norm, and a few FunctionsManual backward formulas op
by op in the half type. It is used only on the half-type paths (float32 and float64 keep
NumPy's routines). Each kernel's vector width is the one PyTorch 2.13 actually runs on an
AVX512 CPU, measured bit for bit: most run their 512-bit build, but the float16 dot kernel
and layer_norm run their 256-bit one.

An FMA is computed as one float64 operation rounded to float32: the product of two float32
numbers is exact in float64, so only the float64 sum is rounded before the final rounding;
that double rounding changes the float32 result only when the float64 sum lands exactly on a
float32 rounding midpoint (about one case in 2^29).
"""
from __future__ import annotations

import numpy as np

from .. import _dtype as D

_F32 = np.float32
_F64 = np.float64


def fma(a, b, c) -> np.ndarray:
    """float32 ``a * b + c`` with one rounding (AVX512 ``vfmadd``)."""
    r = np.multiply(a, b, dtype=_F64)
    r += c
    return r.astype(_F32)


# SLEEF's single-precision constants (sleefsimdsp.c / misc.h)
_R_LN2 = _F32(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U = _F64(_F32(0.693145751953125))
_L2L = _F64(_F32(1.428606765330187045e-06))
_EXP_C = tuple(_F32(c) for c in (0.000198527617612853646278381, 0.00139304355252534151077271,
                                 0.00833336077630519866943359, 0.0416664853692054748535156,
                                 0.166666671633720397949219, 0.5))


def _pow2i(q: np.ndarray) -> np.ndarray:
    return ((q + 127).astype(np.int32) << 23).view(_F32)


def expf(d: np.ndarray) -> np.ndarray:
    """SLEEF's ``xexpf`` (``Sleef_expf16_u10``, ``Vectorized<float>::exp``) on float32."""
    d = np.asarray(d, _F32)
    with np.errstate(invalid="ignore", over="ignore"):
        qf = np.rint(d * _R_LN2)
        qf = np.where(np.isfinite(qf), qf, 0).astype(_F32)
        q = np.clip(qf, -200, 200).astype(np.int32)
        qd = qf.astype(_F64)
        s = (qd * -_L2U + d).astype(_F32)
        s = (qd * -_L2L + s).astype(_F32)
        u = fma(_EXP_C[0], s, _EXP_C[1])
        for c in _EXP_C[2:]:
            u = fma(u, s, c)
        u = fma(s * s, u, s)
        u += _F32(1)
        h = q >> 1
        u *= _pow2i(h)
        u *= _pow2i(q - h)
        u[d < -104] = 0
        u[d > 100] = np.inf
        nan = np.isnan(d)
        if nan.any():
            u[nan] = d[nan]
    return u


_ERF_P = _F32(0.3275911)
_ERF_A = tuple(_F32(c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736,
                                 0.254829592))


def erf(x: np.ndarray) -> np.ndarray:
    """``Vectorized<float>::erf``: Abramowitz-Stegun 7.1.26 with SLEEF's exp, FMA-evaluated."""
    x = np.asarray(x, _F32)
    t = _F32(1) / fma(_ERF_P, np.abs(x), _F32(1))
    r = fma(_ERF_A[0], t, _ERF_A[1])
    for c in _ERF_A[2:]:
        r = fma(r, t, c)
    e = -expf(-(x * x))
    r = fma(e * t, r, _F32(1))
    return np.copysign(r, x)


def lane_sum(a: np.ndarray, lanes: int = 16) -> np.ndarray:
    """Sum over the last axis as ``Vectorized<float>`` accumulation computes it: ``lanes``
    running sums over whole vectors, reduced by AVX512's shuffle tree (halves, then quarters,
    ...), then the leftover tail added one by one. float32 in, float32 out (keeps dims)."""
    n = a.shape[-1]
    body = n - n % lanes
    if body:
        acc = a[..., :body].reshape(a.shape[:-1] + (body // lanes, lanes))
        v = acc[..., 0, :].copy()
        for k in range(1, body // lanes):
            v += acc[..., k, :]
        w = lanes
        while w > 1:
            w //= 2
            v = v[..., :w] + v[..., w:2 * w]
        s = v
    else:
        s = np.zeros(a.shape[:-1] + (1,), _F32)
    for k in range(body, n):
        s = s + a[..., k:k + 1]
    return s


def _via64(fn, x: np.ndarray) -> np.ndarray:
    """A SLEEF ``_u10`` function that works in double-float arithmetic (expm1, log1p):
    within one float32 ulp, almost always the correctly rounded value, which float64
    evaluation rounded to float32 gives."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return fn(np.asarray(x, _F64)).astype(_F32)


def expm1f(x):
    return _via64(np.expm1, x)


def log1pf(x):
    return _via64(np.log1p, x)


# SLEEF's double-float ("df") arithmetic with FMA (df.h): a value is a pair (hi, lo)

def _fms(a, b, c):
    """``a * b - c`` with one rounding (vfmapn)."""
    r = np.multiply(a, b, dtype=_F64)
    r -= c
    return r.astype(_F32)


def _df_add2_ff(xh, xl, y):
    rx = xh + y
    v = rx - xh
    ry = (xh - (rx - v)) + (y - v)
    return rx, ry + xl


def _df_add2_df_df(xh, xl, yh, yl):
    rx = xh + yh
    v = rx - xh
    ry = (xh - (rx - v)) + (yh - v)
    return rx, ry + (xl + yl)


def _df_add_df_df(xh, xl, yh, yl):
    rx = xh + yh
    return rx, (((xh - rx) + yh) + xl) + yl


def _df_add_f_df(x, yh, yl):
    rx = x + yh
    return rx, ((x - rx) + yh) + yl


def _df_mul_df_f(xh, xl, y):
    rx = xh * y
    return rx, fma(xl, y, _fms(xh, y, rx))


def _df_mul_df_df(xh, xl, yh, yl):
    rx = xh * yh
    return rx, fma(xh, yl, fma(xl, yh, _fms(xh, yh, rx)))


def _df_squ(xh, xl):
    rx = xh * xh
    return rx, fma(xh + xh, xl, _fms(xh, xh, rx))


def _df_rec(dh, dl):
    qx = _F32(1) / dh
    return qx, qx * _fnma(dl, qx, _fnma(dh, qx, _F32(1)))


def _fnma(a, b, c):
    """``c - a * b`` with one rounding (vfmanp)."""
    r = np.multiply(a, b, dtype=_F64)
    np.subtract(c, r, out=r)
    return r.astype(_F32)


def _df_div(nh, nl, dh, dl):
    t = _F32(1) / dh
    qx = nh * t
    u = _fms(t, nh, qx)
    qy = _fnma(dl, t, _fnma(dh, t, _F32(1)))
    return qx, fma(qx, qy, fma(nl, t, u))


_EXPK2_C = tuple(_F32(c) for c in (0.1980960224e-3, 0.1394256484e-2, 0.8333456703e-2,
                                   0.4166637361e-1))


def _expk2f(dh, dl):
    """SLEEF's ``expk2f``: exp of a double-float, as a double-float."""
    u = (dh + dl) * _R_LN2
    q = np.rint(u)
    q = np.where(np.isfinite(q), q, 0).astype(_F32)
    sh, sl = _df_add2_ff(dh, dl, q * _F32(-_L2U))
    sh, sl = _df_add2_ff(sh, sl, q * _F32(-_L2L))
    u = fma(_EXPK2_C[0], sh, _EXPK2_C[1])
    u = fma(u, sh, _EXPK2_C[2])
    u = fma(u, sh, _EXPK2_C[3])
    th, tl = _df_add2_ff(*_df_mul_df_f(sh, sl, u), _F32(0.166666659414234244790680580464))
    th, tl = _df_add2_ff(*_df_mul_df_df(sh, sl, th, tl), _F32(0.5))
    th, tl = _df_add2_df_df(sh, sl, *_df_mul_df_df(*_df_squ(sh, sl), th, tl))
    th, tl = _df_add_f_df(_F32(1), th, tl)
    qi = np.clip(q, -300, 300).astype(np.int32)
    h = qi >> 1
    p1, p2 = _pow2i(h), _pow2i(qi - h)
    th = th * p1 * p2
    tl = tl * p1 * p2
    low = dh < -104
    th[low] = 0
    tl[low] = 0
    return th, tl


def tanhf(x):
    """SLEEF's ``xtanhf`` (``Sleef_tanhf16_u10``, ``Vectorized<float>::tanh``) on float32."""
    x = np.asarray(x, _F32)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        y = np.abs(x)
        dh, dl = _expk2f(y, np.zeros_like(y))
        eh, el = _df_rec(dh, dl)
        nh, nl = _df_add_df_df(dh, dl, -eh, -el)
        mh, ml = _df_add_df_df(dh, dl, eh, el)
        qh, ql = _df_div(nh, nl, mh, ml)
        r = qh + ql
        r = np.where((y > _F32(8.664339742)) | np.isnan(r), _F32(1), r)
        r = np.copysign(r, x)
        return np.where(np.isnan(x), x, r).astype(_F32)


def sigmoidf(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-x))`` as PyTorch's vectorised sigmoid and silu kernels compute it."""
    return _F32(1) / (_F32(1) + expf(-x))


_ONE = _F32(1)
_BF16 = D.bfloat16.np
_HALF = _F32(0.5)
_SQRT1_2 = _F32(0.7071067811865476)            # M_SQRT1_2
_GELU_BETA = _F32(0.3989422804014327)          # M_2_SQRTPI * M_SQRT1_2 * 0.5
_TANH_BETA = _F32(0.7978845608028654)          # M_SQRT2 * M_2_SQRTPI * 0.5
_TANH_KAPPA = _F32(0.044715)


# ---- half-type activation kernels -----------------------------------------------------------
# Each computes, on float32 arrays upcast from float16/bfloat16, the float32 value PyTorch's
# vectorised kernel rounds to the half type; the operation order (and where GCC contracts a
# multiply and an add into an FMA) is the kernel's, checked bit for bit against PyTorch.

def gelu_fwd(x, dt, approximate, keep=None):
    if keep is DNNL_GELU:
        return gelu_erf_dnnl(x)
    if approximate != "tanh" and dt == _BF16:
        return None     # PyTorch's own kernel on a non-contiguous input: ember's float32 path
    if approximate == "tanh":
        inner = _TANH_BETA * (x + _TANH_KAPPA * (x * x * x))
        return _HALF * x * (_ONE + tanhf(inner))
    return (x * _HALF) * (_ONE + erf(x * _SQRT1_2))


class _DnnlMark:
    """Marks a gelu whose forward PyTorch hands to oneDNN (a contiguous bfloat16 input with the
    exact erf); ``d`` mirrors the float32 path's saved-derivative slot (unused)."""
    d = None


DNNL_GELU = _DnnlMark()

# oneDNN's AVX512 gelu_erf: erf(x / sqrt 2) by 25 degree-5 minimax polynomials in |x|, picked
# by |x|'s exponent and top two mantissa bits (jit_uni_eltwise_injector, gelu_erf_minimax_pol;
# rows are degrees 0..5, columns the polynomials)
_GELU_MM = np.array([[int(h, 16) for h in row.split()] for row in (
    "a6f2cb94 32827792 3381cc0c 34523d4a 351ac44d 35f36d88 36ee8229 37b8a3bb 3867a213 3940033b "
    "3a2a5a1d 3ae35863 3b7828f2 3c08b14b 3c515ed3 bb503236 bd8d8e5e be8abcd9 bf0c19a2 beccb328 "
    "3e176ced 3f470d99 3f7abb28 3f800000 00000000",
    "3f4c422a 3f4c421f 3f4c4207 3f4c41cb 3f4c413b 3f4c3fad 3f4c3a2f 3f4c2d40 3f4c146a 3f4bc341 "
    "3f4ad08c 3f48f8cf 3f45fac7 3f404e07 3f3b980f 3f48dff3 3f78b21b 3fbb0704 40019c32 3fe536d6 "
    "3f81331e 3e6c8684 3c98f936 00000000 3f800000",
    "b62173f4 3735e4cf 37f2ff89 388c23be 3917535c 39ab2ab0 3a60fadb 3af9b960 3b6e5491 3c0a4ec5 "
    "3ca5aa8c 3d2138d9 3d8737d4 3ddfb660 3e0f27ab 3d94004b be0efdeb bf1d96c3 bf89db58 bf6d9897 "
    "bef69fb8 bdc4f8a8 bbde6422 00000000 00000000",
    "be081a19 be084570 be08639b be089837 be08f409 be09ab95 be0b66d0 be0e400a be124df8 be1bde02 "
    "be2f19c9 be4931bf be685fbc be89c95f be96cbca be8044aa be0550f2 3dcfd6a1 3e94c826 3e79345f "
    "3decec91 3ca46568 3aa1e00a 00000000 00000000",
    "ba3d61db 39f097a3 3a5845dc 3ab1fa35 3b0cefb8 3b653ab6 3bcae527 3c221712 3c6c5840 3cc0a703 "
    "3d1dcc19 3d63656d 3d955907 3dbf9910 3dd53f69 3db7dcef 3d639ebe ba6ede48 bd22be69 bd041cf1 "
    "bc64f5ab bb097a32 b8ebf380 00000000 00000000",
    "3cb7d80c 3c9b6050 3c978d11 3c92e850 3c8d058b 3c848454 3c6cd623 3c4c824b 3c2a7935 3be0b390 "
    "3b0651ac bb232f53 bbd42fa0 bc2c5366 bc492c9e bc2a7aa6 bbd55d04 ba823a76 3b102aa8 3ae25a7e "
    "3a31f792 38b84375 3689bb5a 00000000 00000000")], np.uint32).view(_F32)
_GELU_RBOUND = np.uint32(0x40b15cee).view(_F32)     # beyond it erf is 1 (polynomial 23)


def gelu_erf_dnnl(x: np.ndarray) -> np.ndarray:
    """oneDNN's AVX512 ``gelu_erf`` forward on float32: the minimax polynomial of ``|x|`` (FMA
    steps) gives erf(x / sqrt 2), signed, plus 1, times x, times 0.5; denormal inputs and
    results flushed to zero (as oneDNN runs)."""
    x = _ftz(np.asarray(x, _F32))
    xp = np.abs(x)
    idx = (xp.view(np.int32).astype(np.int64) - 0x3de00001) >> 21
    idx = np.where(_GELU_RBOUND < xp, 23, np.clip(idx, 1, 24))
    pol = _GELU_MM[5][idx]
    for d in range(4, -1, -1):
        pol = fma(pol, xp, _GELU_MM[d][idx])
    pol = np.where(np.signbit(x), -pol, pol) + _ONE
    return _ftz(_ftz(x * pol) * _HALF)


def _u32(bits: int) -> np.float32:
    return np.uint32(bits).view(_F32)


# oneDNN's exp (exp_compute_vector_fwd) and Abramowitz-Stegun erf constants (its table)
_DN_LOG2E, _DN_LNMAX, _DN_LNMIN, _DN_LN2 = (_u32(b) for b in (0x3fb8aa3b, 0x42b17218,
                                                               0xc2aeac50, 0x3f317218))
_DN_EXP = tuple(_u32(b) for b in (0x3f7ffffb, 0x3efffee3, 0x3e2aad40, 0x3d2b9d0d, 0x3c07cfce))
_DN_AS_P, _DN_RSQRT2, _DN_RSQRTPI = _u32(0x3ea7ba05), _u32(0x3f3504f3), _u32(0x3f106eba)
_DN_AS = tuple(_u32(b) for b in (0x3e827906, 0xbe91a98e, 0x3fb5f0e3, 0xbfba00e3, 0x3f87dc22))


def _dnnl_exp(x: np.ndarray) -> np.ndarray:
    """oneDNN's JIT ``exp``: clamp, ``n = floor(x log2 e + 1/2)``, ``r = x - n ln 2`` (one
    FMA), a degree-5 polynomial by FMAs, times ``2^(n-1)`` and 2; 0 below ln(FLT_MIN)."""
    low = x < _DN_LNMIN
    x = np.maximum(np.minimum(x, _DN_LNMAX), _DN_LNMIN)
    n = np.floor(x * _DN_LOG2E + _HALF)
    r = _fnma(n, _DN_LN2, x)
    p2 = np.where(low, _F32(0), _pow2i(n - _ONE))
    p = _DN_EXP[4]
    for c in _DN_EXP[3::-1] + (_ONE,):
        p = fma(p, r, c)
    return (p * p2) * _F32(2)


def gelu_erf_bwd_dnnl(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """oneDNN's ``gelu_erf`` backward on float32 (PyTorch's contiguous bfloat16 gelu):
    ``Phi(x) + x phi(x)`` with the Abramowitz-Stegun erf and oneDNN's exp, op by op as its
    JIT kernel, times the incoming gradient; denormals flushed."""
    x, g = _ftz(x), _ftz(g)
    with np.errstate(over="ignore", invalid="ignore"):
        r = x * _DN_RSQRT2
        q = _dnnl_exp(-(r * r))
        t = (r * _DN_RSQRTPI) * q
        w = _ONE / fma(_DN_AS_P, np.abs(r), _ONE)
        pol = _DN_AS[4]
        for c in _DN_AS[3::-1]:
            pol = fma(pol, w, c)
        erf = fma(-q * w, pol, _ONE)
        erf = np.where(np.signbit(r), -erf, erf)
        return _ftz(fma(erf, _HALF, t + _HALF) * g)


def gelu_bwd(g, x, dt, approximate):
    if approximate != "tanh" and dt == _BF16:
        return None
    if approximate == "tanh":
        x2 = x * x
        t = tanhf(_TANH_BETA * fma(_TANH_KAPPA, x * x2, x))
        left = _HALF * x
        d_inner = _TANH_BETA * fma(_F32(3) * _TANH_KAPPA, x2, _ONE)
        d_right = left * _fnma(t, t, _ONE) * d_inner
        return g * (_HALF * (_ONE + t) + d_right)
    cdf = _HALF * (_ONE + erf(x * _SQRT1_2))
    pdf = _GELU_BETA * expf(x * x * _F32(-0.5))
    return g * (cdf + x * pdf)


def silu_fwd(x, dt):
    return x / (_ONE + expf(-x))


def silu_bwd(g, x, dt):
    s = sigmoidf(x)
    return (g * s) * fma(x, _ONE - s, _ONE)


def elu_fwd(x, dt, alpha, scale, input_scale):
    neg = expm1f(x * _F32(input_scale)) * (_F32(alpha) * _F32(scale))
    return np.where(x >= 0, x * _F32(scale), neg)


def elu_bwd(g, x, dt, alpha, scale, input_scale):
    ni = _F32(input_scale)
    neg = g * ni * (_F32(alpha) * _F32(scale)) * expf(x * ni)
    return np.where(x > 0, g * _F32(scale), neg)


def mish_fwd(x, dt):
    return x * tanhf(log1pf(expf(x)))


def mish_bwd(g, x, dt):
    s = sigmoidf(x)
    t = tanhf(log1pf(expf(x)))
    return g * fma(x * s, fma(-t, t, _ONE), t)


def softplus_fwd(x, dt, beta, threshold):
    b = _F32(beta)
    bx = x * b
    return np.where(bx > _F32(threshold), x, log1pf(expf(bx)) / b)


def softplus_bwd(g, x, dt, beta, threshold):
    bx = x * _F32(beta)
    z = expf(bx)
    return np.where(bx > _F32(threshold), g, g * z / (z + _ONE))


def logsigmoid_fwd(x, dt):
    return np.minimum(x, _F32(0)) - log1pf(expf(-np.abs(x)))


def logsigmoid_bwd(g, x, dt):
    # the forward's buffer exp(-|x|) is a tensor of the input's (half) type
    z = expf(-np.abs(x)).astype(dt).astype(_F32)
    neg = x < 0
    return (neg.astype(_F32) - np.where(neg, _ONE, -_ONE) * (z / (_ONE + z))) * g


# kernel name (nn_activation's forward function) -> half-type float32 kernel
HALF_FWD = {
    "_gelu_fwd": gelu_fwd, "_silu_fwd": silu_fwd, "_elu_fwd": elu_fwd, "_mish_fwd": mish_fwd,
    "_softplus_fwd": softplus_fwd, "_logsigmoid_fwd": logsigmoid_fwd,
    "_sigmoid_np": lambda x, dt: sigmoidf(x),
}
# gradient helper name -> (g, x, half dtype, *params) kernel
HALF_GRAD = {
    "act_gelu_bwd": gelu_bwd, "act_silu_bwd": silu_bwd, "act_elu_bwd": elu_bwd,
    "act_mish_bwd": mish_bwd, "act_softplus_bwd": softplus_bwd,
    "act_logsigmoid_bwd": logsigmoid_bwd,
}


def _tree(v: np.ndarray) -> np.ndarray:
    """AVX512's ``vec_reduce_all`` of 16 float lanes: halves added, then quarters, ..."""
    w = v.shape[-1]
    while w > 1:
        w //= 2
        v = v[..., :w] + v[..., w:2 * w]
    return v


def _seq(v: np.ndarray, n: int) -> np.ndarray:
    s = v[..., 0:1].copy()
    for k in range(1, n):
        s += v[..., k:k + 1]
    return s


def half_sum(a: np.ndarray, lanes: int = 16) -> np.ndarray:
    """Sum over the last axis of float32 values mapped from a half-typed row, as PyTorch's
    ``map_reduce_all`` family for reduced floating types adds them: each vector of
    ``2 * lanes`` half elements gives two float vectors with separate accumulators, the tail
    fills the leading lanes, the two accumulators are added and reduced by the shuffle tree;
    a row shorter than one half vector is added lane by lane (keeps dims)."""
    n = a.shape[-1]
    w = 2 * lanes
    if n < w:
        if n > lanes:
            v = a[..., :lanes].copy()
            v[..., :n - lanes] += a[..., lanes:n]
            return _seq(v, lanes)
        return _seq(a, n)
    body = n - n % w
    ch = a[..., :body].reshape(a.shape[:-1] + (body // w, w))
    acc = ch[..., 0, :].copy()
    for k in range(1, body // w):
        acc += ch[..., k, :]
    r = n - body
    if r > lanes:
        acc[..., :r] += a[..., body:]
    elif r:
        acc[..., :r] += a[..., body:]
    acc = acc[..., :lanes] + acc[..., lanes:]
    return _tree(acc)


def exp_libm(x: np.ndarray) -> np.ndarray:
    """``std::exp`` on float32 (a kernel's scalar tail): glibc's expf, correctly rounded."""
    return _via64(np.exp, x)


# ---- gradients of scans and products (PyTorch's FunctionsManual formulas, op by op) --------

def _rev_cumsum_half(w: np.ndarray, dim: int, h) -> np.ndarray:
    """``w.flip(dim).cumsum(dim).flip(dim)`` of a half array: float32 running sums, each
    rounded to the half type."""
    c = np.cumsum(np.flip(w, dim), axis=dim, dtype=_F32)
    c += 0      # PyTorch's running sum starts from +0: a run of -0 sums to +0
    return np.flip(c, dim).astype(h)


def cumprod_bwd_half(g: np.ndarray, x: np.ndarray, dim: int) -> np.ndarray:
    """PyTorch's ``cumprod_backward`` (without a graph to record) on half arrays: with no zero
    along ``dim``, ``reversed_cumsum(output * grad) / input``; with zeros, that formula before
    the first zero, at the first zero the sum over [z1, z2) of grad times the product of the
    other inputs up to it, and 0 after it; every tensor op rounded to the half type."""
    h = x.dtype
    out = np.cumprod(x, axis=dim, dtype=_F32).astype(h)
    w = (out.astype(_F32) * g.astype(_F32)).astype(h)
    z = x == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if not z.any():
            return (_rev_cumsum_half(w, dim, h).astype(_F32) / x.astype(_F32)).astype(h)
        nz = np.cumsum(z, axis=dim)
        before = nz == 0
        rc = _rev_cumsum_half(np.where(before, w, h.type(0)), dim, h)
        res = np.where(before, (rc.astype(_F32) / x.astype(_F32)).astype(h), h.type(0))
        one = nz == 1
        first = one & z
        between = one & ~z
        cp = np.cumprod(np.where(between, x, h.type(1)), axis=dim, dtype=_F32).astype(h)
        # the output just before the first zero (1 where the zero comes first)
        idx = np.argmax(one, axis=dim)
        has = one.any(axis=dim)
        prev = np.take_along_axis(out, np.expand_dims(np.maximum(idx - 1, 0), dim), dim)
        prev = np.where(np.expand_dims((idx == 0) | ~has, dim), h.type(1), prev)
        t = (cp.astype(_F32) * g.astype(_F32)).astype(h)
        t = np.where(one, t, h.type(0))
        s = np.sum(t.astype(_F32), axis=dim, keepdims=True).astype(h)
        s = (s.astype(_F32) * prev.astype(_F32)).astype(h)
        return np.where(first, s, res)


def prod_zeros_bwd_half(g: np.ndarray, x: np.ndarray, dims, keepdim: bool) -> np.ndarray:
    """PyTorch's ``prod_backward`` for a half input holding zeros (without a graph to record):
    ``grad * (exclusive cumprod * reversed exclusive cumprod)`` along the dim (the whole
    flattened input for a full prod; zeros there when two or more inputs are zero), each
    tensor op rounded to the half type."""
    h = x.dtype
    if dims is None:
        if np.count_nonzero(x == 0) > 1:
            return np.zeros_like(x)
        return prod_zeros_bwd_half(np.reshape(g, (1,)), x.reshape(-1), (0,), True) \
            .reshape(x.shape)
    d = dims[0] % x.ndim
    if not keepdim:
        g = np.expand_dims(g, d)
    ones = np.ones_like(np.take(x, [0], axis=d))
    n = x.shape[d]
    fwd = np.concatenate([ones, np.take(x, range(n - 1), axis=d)], d)
    fwd = np.cumprod(fwd, axis=d, dtype=_F32).astype(h)
    rev = np.concatenate([ones, np.flip(np.take(x, range(1, n), axis=d), d)], d)
    rev = np.flip(np.cumprod(rev, axis=d, dtype=_F32).astype(h), d)
    both = (fwd.astype(_F32) * rev.astype(_F32)).astype(h)
    return (g.astype(_F32) * both.astype(_F32)).astype(h)



def reduced_map_sum(pre: np.ndarray, last, lanes: int = 16) -> np.ndarray:
    """``sum(pre * last)`` over the last axis as PyTorch's ``map{2,3}_reduce_all`` /
    ``reduce_all`` for reduced floating types add it (functional_bfloat16.h): each half vector
    gives two ``lanes``-wide float vectors; the first vector's products start the two
    accumulators, later ones are FMA-accumulated (GCC contracts the map's last multiply into
    the reduction's add), a partial tail updates only its leading lanes (``Vectorized::set``),
    the accumulators are added and reduced by the shuffle tree. Rows shorter than one half
    vector reduce their lanes one by one. ``pre`` is the exact product of the other factors
    (``last`` 1 for a plain sum); float32 in, float32 (keepdims) out."""
    pre, last = np.broadcast_arrays(pre, np.asarray(last, _F32))
    n = pre.shape[-1]
    w = 2 * lanes

    def prod(lo, hi):
        return pre[..., lo:hi] * last[..., lo:hi]

    def acc(lo, hi, a):
        return fma(pre[..., lo:hi], last[..., lo:hi], a)

    if n < w:
        if n <= lanes:
            return _seq(prod(0, n), n)
        a0 = prod(0, lanes)
        a0[..., :n - lanes] = acc(lanes, n, a0[..., :n - lanes])
        return _seq(a0, lanes)
    a0, a1 = prod(0, lanes), prod(lanes, w)
    full = n - n % w
    for d in range(w, full, w):
        a0, a1 = acc(d, d + lanes, a0), acc(d + lanes, d + w, a1)
    r = n - full
    if r > lanes:
        a0 = acc(full, full + lanes, a0)
        a1[..., :r - lanes] = acc(full + lanes, n, a1[..., :r - lanes])
    elif r:
        a0[..., :r] = acc(full, n, a0[..., :r])
    return _tree(a0 + a1)


def layer_norm_bwd_half(g: np.ndarray, x: np.ndarray, w, mean: np.ndarray, rstd: np.ndarray,
                        lanes: int = 8) -> np.ndarray:
    """The input's gradient of a layer norm over the rows of 2-D half arrays as PyTorch 2.13's
    CPU kernel computes it (its 256-bit build, 8 float lanes, whatever the CPU; measured bit
    for bit): the saved mean and rstd are half-typed, ``ds = sum(dy * x * w)`` and
    ``db = sum(dy * w)`` by its reduced-type ``map_reduce_all`` (``reduced_map_sum``),
    ``b = (db * mean - ds) * rstd^3 / N``, ``c = -b * mean - db * rstd / N``,
    ``dx = rstd * dy * w + b * x + c``, rounded once."""
    h = x.dtype
    dy = g.astype(_F32)
    xf = x.astype(_F32)
    a = rstd.astype(h).astype(_F32).reshape(-1, 1)
    m = mean.astype(h).astype(_F32).reshape(-1, 1)
    gw = _ONE if w is None else w.astype(_F32).reshape(-1)
    if w is None:
        ds = reduced_map_sum(dy, xf, lanes)
        db = reduced_map_sum(dy, _ONE, lanes)
    else:
        ds = reduced_map_sum(dy * xf, gw, lanes)
        db = reduced_map_sum(dy, gw, lanes)
    sc = _F32(1.0 / x.shape[-1])
    b = fma(db, m, -ds) * a * a * a * sc
    c = fma(-b, m, -(db * a * sc))
    return (fma(b, xf, a * dy * gw) + c).astype(h)


# ---- float16 GEMM (PyTorch's reference CPU BLAS for half types without hardware fp16) -------

def _gemm_ilp4(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``gemm_notrans_``/``gemm_transab_``: every dot product summed in four interleaved float32
    partial sums (element l goes to sum l % 4, the last k % 4 elements to sum 0), added in
    order at the end."""
    k = a.shape[-1]
    parts = [None] * 4
    for l in range(k):
        p = a[..., :, l:l + 1] * b[..., l:l + 1, :]
        j = l % 4 if l < k - k % 4 else 0
        parts[j] = p if parts[j] is None else parts[j] + p
    s = parts[0]
    for q in parts[1:]:
        if q is not None:
            s = s + q
    return s + _F32(0)      # the partial sums start from +0: an all -0 sum is +0


def _gemm_seq(a: np.ndarray, b: np.ndarray, s=None) -> np.ndarray:
    """``gemm_transb_``: the products of one ``l`` added to a float32 result (``s``, or
    zeros), ``l`` by ``l``."""
    if s is None:
        s = np.zeros(a.shape[:-1] + b.shape[-1:], _F32)
    for l in range(a.shape[-1]):
        s = fma(a[..., :, l:l + 1], b[..., l:l + 1, :], s)
    return s


def _gemm_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``gemm_transa_``'s ``fp16_dot_with_fp32_arith`` as PyTorch 2.13 runs it on x86 (its
    256-bit build, whatever the CPU: 8-lane float vectors). Each 64-element block adds into
    eight 8-lane accumulators (element ``e`` of a block to register ``e // 8``); the registers
    fold pairwise (r + r+4, r + r+2, r + r+1) and the lanes by the shuffle tree. The remaining
    whole 16-element chunks accumulate into one fresh 8-lane vector (low half, then high
    half), reduced by the tree and added; the scalar tail adds last, one by one. A product of
    two half values is exact in float32, so the kernel's FMAs round like a multiply and an
    add."""
    k = a.shape[-1]
    x = a[..., :, None, :]
    y = np.swapaxes(b, -1, -2)[..., None, :, :]
    shape = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
    main = k - k % 64
    acc = np.zeros(shape + (64,), _F32)
    for j in range(0, main, 64):
        acc += x[..., j:j + 64] * y[..., j:j + 64]
    s = _tree(_tree8(acc))
    vec = k - k % 16
    t = np.zeros(shape + (8,), _F32)
    for j in range(main, vec, 8):
        t += x[..., j:j + 8] * y[..., j:j + 8]
    s = s + _tree(t)
    for j in range(vec, k):
        s = s + x[..., j:j + 1] * y[..., j:j + 1]
    return s[..., 0]


def _tree8(acc: np.ndarray) -> np.ndarray:
    """Eight 8-lane registers laid side by side folded to one: r + r+4, r + r+2, r + r+1."""
    acc = acc[..., :32] + acc[..., 32:]
    acc = acc[..., :16] + acc[..., 16:]
    return acc[..., :8] + acc[..., 8:]


_GEMM_EXACT_MACS = 1 << 24   # beyond this, float32 BLAS (within an ulp; the replica is slow)


def _col_major(a: np.ndarray) -> bool:
    """Whether PyTorch's GEMM reads a 2-D operand transposed: column-major strides (a
    row-major operand, or one it copies, is read as is)."""
    r, c = a.shape
    s0, s1 = (s // a.itemsize for s in a.strides)
    if s1 == 1 and s0 >= max(1, c):
        return False
    return s0 == 1 and s1 >= max(1, r)


def _kernel(a: np.ndarray, b: np.ndarray) -> str:
    """Which reference-BLAS kernel PyTorch's ``addmm_impl_cpu_`` picks for 2-D float16
    operands. Its result is row-major, so it computes ``(a @ b)^T = b^T a^T`` column-major;
    a result with one column (strides (1, 1)) is used as is instead, ``a @ b`` with ``a``
    first, each operand tested for column-major strides first."""
    m, k = a.shape
    if b.shape[1] != 1:
        ta, tb = _col_major(a), _col_major(b)
        return "ilp4" if ta == tb else "dot" if tb else "seq_a"
    s0, s1 = (s // a.itemsize for s in a.strides)
    trans_a = not (s0 == 1 and s1 >= max(1, m))
    s0, s1 = (s // b.itemsize for s in b.strides)
    trans_b = not (s0 == 1 and s1 >= max(1, k))
    return "ilp4" if trans_a == trans_b else "dot" if trans_a else "seq_b"


_TINY = _F32(2.0 ** -126)


def _ftz(x: np.ndarray) -> np.ndarray:
    """Denormals to (signed) zero, as AVX512-BF16's ``vdpbf16ps`` treats its inputs and
    results (DAZ/FTZ whatever MXCSR says)."""
    return np.where(np.abs(x) < _TINY, x * _F32(0), x)


def _dnnl_kblock(a: np.ndarray, m: int, n: int, k: int) -> int:
    """oneDNN's reduction block for a bfloat16 matmul, as measured on PyTorch 2.13: the whole
    reduction up to 512, then 512-long blocks, or 1024-long ones beyond 1024 unless the
    result is a row or a column or the first operand is column-major."""
    if k <= 512:
        return k
    if k <= 1024 or m == 1 or n == 1 or _col_major(a):
        return 512
    return 1024


def _dnnl_bf16(a: np.ndarray, b: np.ndarray, kb: int) -> np.ndarray:
    """A bfloat16 GEMM as oneDNN's AVX512-BF16 brgemm kernel sums it (PyTorch's
    ``mkldnn_bf16_gemm``, used beyond 16^3 multiply-adds): ``vdpbf16ps`` adds each pair of
    products to a float32 accumulator, the odd element first, one rounding each, with
    denormals flushed; the reduction runs in ``kb``-long blocks whose sums are added in order.
    The products of bfloat16 values are exact in float32."""
    k = a.shape[-1]
    a, b = _ftz(a), _ftz(b)
    r = None
    for s in range(0, k, kb):
        e = min(k, s + kb)
        acc = np.zeros(a.shape[:-1] + b.shape[-1:], _F32)
        for j in range(s, e, 2):
            for l in ((j + 1, j) if j + 1 < e else (j,)):
                acc += _ftz(a[..., :, l:l + 1] * b[..., l:l + 1, :])
                acc = _ftz(acc)
        r = acc if r is None else _ftz(r + acc)
    return r


def half_gemm(a: np.ndarray, b: np.ndarray, c=None, beta: float = 0.0, alpha: float = 1.0):
    """Half-type ``a @ b`` (2-D, or 3-D batches of equal size) as PyTorch sums its float32
    products. Its reference CPU BLAS (float16, and bfloat16 up to 16^3 multiply-adds), chosen
    by the operands' layouts like its ``gemm`` (``_kernel``): four interleaved partial sums
    (``gemm_notrans_``/``gemm_transab_``), the vectorised dot kernel (``gemm_transa_``), or
    one running sum per output (``gemm_transb_``, alpha folded into one operand); ``bmm`` of
    fewer than 400 multiply-adds per matrix, one running sum; bfloat16 beyond 16^3
    multiply-adds, oneDNN's kernel (``_dnnl_bf16``). With ``c`` (addmm's input, broadcast to
    the result): ``beta * c + alpha * dot`` in float32 (an FMA), or for the running-sum
    kernel the sum started from ``beta * c``. None where this does not apply (other shapes,
    empty sizes, large products): the caller uses float32 BLAS."""
    if a.dtype not in (np.float16, _BF16) or b.dtype != a.dtype or a.ndim != b.ndim or \
            a.ndim not in (2, 3):
        return None
    m, k = a.shape[-2:]
    n = b.shape[-1]
    if min(m, n, k) < 1 or b.shape[-2] != k or m * n * k * (a.shape[0] if a.ndim == 3 else 1) \
            > _GEMM_EXACT_MACS:
        return None
    dnnl = a.dtype == _BF16 and m * n * k > 4096
    if a.ndim == 3:
        if a.shape[0] != b.shape[0] or c is not None:
            return None
        # bmm: bfloat16 goes to oneDNN's batched matmul beyond 16^3 multiply-adds in all
        # (its reduction blocks as for mm, measured: 512 for single rows or a column-major
        # first operand, else 1024 beyond 1024)
        dnnl = a.dtype == _BF16 and a.shape[0] * m * n * k > 4096
        if not dnnl and m * n * k < 400:
            return _gemm_seq(a.astype(_F32), b.astype(_F32)).astype(a.dtype)
        kind = "dnnl" if dnnl else _kernel(a[0], b[0])
        kb = k if k <= 512 else 512 if k <= 1024 or m == 1 or _col_major(a[0]) else 1024
    else:
        kind = "dnnl" if dnnl else _kernel(a, b)
        kb = _dnnl_kblock(a, m, n, k) if dnnl else k
    af, bf = a.astype(_F32), b.astype(_F32)
    c32 = None
    if c is not None and beta != 0:
        c32 = np.broadcast_to(np.asarray(c, _F32), (m, n))
    if kind == "dnnl":
        r = _dnnl_bf16(af, bf, kb)
    elif kind == "ilp4":
        r = _gemm_ilp4(af, bf)
    elif kind == "dot":
        r = _gemm_dot(af, bf)
    else:
        # gemm_transb_: a float32 copy of c (times beta; zeros when beta is 0) gets the
        # products added l by l, alpha folded into BLAS's second operand (a here, or b for a
        # one-column result)
        r = np.zeros(af.shape[:-1] + (n,), _F32) if c32 is None else c32 * _F32(beta)
        if alpha != 1:
            if kind == "seq_a":
                af = af * _F32(alpha)
            else:
                bf = bf * _F32(alpha)
        return _gemm_seq(af, bf, r).astype(a.dtype)
    if c32 is not None:
        # ``beta * c + alpha * dot`` in float32, GCC contracting the beta product into an FMA
        r = fma(_F32(beta), c32, r * _F32(alpha))
    elif alpha != 1:
        r = r * _F32(alpha)
    return r.astype(a.dtype)


def half_linear(x: np.ndarray, w: np.ndarray, b=None, addmm: bool = True):
    """float16 ``linear(x, w, b)`` as PyTorch routes it: ``x`` folded to 2-D, one ``addmm``
    (the bias added to the float32 dot products, rounded once) when ``addmm`` (a 2-D input,
    or a contiguous one with a 1-D bias), else ``mm`` and a separate float16 add. None where
    ``half_gemm`` does not apply."""
    if x.ndim < 2 or w.ndim != 2 or (b is not None and type(b) is not np.ndarray):
        return None
    x2 = x.reshape(-1, x.shape[-1]) if x.ndim > 2 else x
    if b is not None and addmm:
        r = half_gemm(x2, w.T, b, 1.0, 1.0)
    else:
        r = half_gemm(x2, w.T)
        if r is not None and b is not None:
            r = (r.astype(_F32) + b.astype(_F32)).astype(r.dtype)
    return None if r is None else r.reshape(x.shape[:-1] + w.shape[:1])


def sincf(x: np.ndarray) -> np.ndarray:
    """PyTorch's scalar ``sinc`` kernel on float32 values of a half type: ``product = pi * x``
    in float32, ``std::sin(product) / product`` (glibc's ``sinf``: float64 ``sin`` rounded to
    float32 gives its value for every half input), 1 at 0."""
    p = x * _F32(np.pi)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.sin(p.astype(_F64)).astype(_F32) / p
    return np.where(x == 0, _F32(1), s)


# ---- layer_norm's forward for half types (PyTorch's RowwiseMoments, moments_utils.h) --------

def _add_moments_vec(m0_add: int, m1a, m2a, m0: int, m1, m2):
    """``AddMomentsVec``: merge (m0_add, m1a, m2a) into (m0, m1, m2), lane-wise."""
    n = m0 + m0_add
    c = _F32(0) if n == 0 else _F32(m0_add) / _F32(n)
    delta = m1a - m1
    m2t = m2 + m2a
    cd = c * delta
    return n, m1 + cd, fma(delta * _F32(m0), cd, m2t)


def half_row_moments(x: np.ndarray, lanes: int = 16):
    """Mean and biased variance of each row of a 2-D float32 array of half values as
    PyTorch's ``RowwiseMoments`` computes them: Welford over 2 ``lanes``-wide float vectors
    per half vector, in chunks of 16 vectors merged by a cascade (pairwise) stack, a scalar
    Welford over the tail, then the lanes merged into the tail's moments one by one."""
    rows, n_all = x.shape
    vec = 2 * lanes
    n = n_all // vec
    m = -(-n // 16)
    depth = 1 if m <= 2 else int(m - 1).bit_length()
    zero = np.zeros((rows, lanes), _F32)
    stk = [[0, zero, zero] for _ in range(depth)]
    for i in range(m):
        base = i * 16 * vec
        m0 = min(16, n - i * 16)
        m1a = m1b = m2a = m2b = zero
        for j in range(m0):
            c = _F32(1) / _F32(j + 1)
            x0 = x[:, base + j * vec: base + j * vec + lanes]
            x1 = x[:, base + j * vec + lanes: base + (j + 1) * vec]
            d0, d1 = x0 - m1a, x1 - m1b
            m1a, m1b = fma(d0, c, m1a), fma(d1, c, m1b)
            m2a, m2b = fma(d0, x0 - m1a, m2a), fma(d1, x1 - m1b, m2b)
        stk[0] = list(_add_moments_vec(m0, m1a, m2a, *stk[0]))
        stk[0] = list(_add_moments_vec(m0, m1b, m2b, *stk[0]))
        mask, j = i + 1, 1
        while j < depth and mask & 1 == 0:
            stk[j] = list(_add_moments_vec(*stk[j - 1], *stk[j]))
            stk[j - 1] = [0, zero, zero]
            mask >>= 1
            j += 1
    for i in range(1, depth):
        stk[0] = list(_add_moments_vec(*stk[i], *stk[0]))
    m1v, m2v = stk[0][1], stk[0][2]
    m0 = 0
    m1 = m2 = np.zeros(rows, _F32)
    for i in range(n * vec, n_all):
        xi = x[:, i]
        delta = xi - m1
        m0 += 1
        m1 = m1 + delta / _F32(m0)
        m2 = fma(delta, xi - m1, m2)
    add = n * vec // lanes
    for lane in range(lanes):
        tot = m0 + add
        c = _F32(0) if tot == 0 else _F32(add) / _F32(tot)
        delta = m1v[:, lane] - m1
        m1 = fma(c, delta, m1)
        m2 = m2 + fma(delta * delta * c, _F32(m0), m2v[:, lane])
        m0 = tot
    return m1, m2 / _F32(n_all)


def layer_norm_fwd_half(x: np.ndarray, w, b, eps: float):
    """A half-type layer norm over the rows of 2-D ``x`` as PyTorch 2.13's CPU kernel runs it
    (its 256-bit build: 16 half lanes, 8 float lanes): ``RowwiseMoments`` for the mean and
    biased variance, ``rstd = 1 / sqrt(var + eps)``, then ``(x * rstd + (-rstd * mean)) *
    gamma + beta`` in float32 with both multiply-adds fused (gamma 1 and beta 0 when absent),
    rounded once. Returns the result and the float32 mean and rstd, (rows, 1) each."""
    x32 = x.astype(_F32)
    mean, var = half_row_moments(x32, 8)
    rstd = _ONE / np.sqrt(var + _F32(eps))
    y = fma(x32, rstd[:, None], (-rstd * mean)[:, None])
    g = _ONE if w is None else w.reshape(-1).astype(_F32)
    sh = _F32(0) if b is None else b.reshape(-1).astype(_F32)
    y = fma(y, g, sh)
    return y.astype(x.dtype), mean[:, None], rstd[:, None]


def half_einsum2(eq: str, a: np.ndarray, b: np.ndarray):
    """A two-operand half-type einsum as PyTorch's ``sumproduct_pair`` runs it: labels
    ordered output first, then the contracted ones (upper case before lower case), each
    operand permuted to (batch, own, summed) / (batch, summed, own) and reshaped (a view
    where one exists, else a row-major copy), one ``bmm`` (``half_gemm``), the result
    unpermuted. None where this does not apply (ellipses, repeated labels, size-1 or
    broadcast dims, labels summed in one operand only, large products)."""
    if "..." in eq or "->" not in eq:
        return None
    lhs, out = eq.split("->")
    parts = lhs.split(",")
    if len(parts) != 2:
        return None
    la, lb = parts
    if len(set(la)) != len(la) or len(set(lb)) != len(lb) or len(set(out)) != len(out) or \
            len(la) != a.ndim or len(lb) != b.ndim or not set(out) <= set(la + lb):
        return None
    if any(n == 1 for n in a.shape + b.shape) or 0 in a.strides + b.strides or not a.size:
        return None
    size = dict(zip(la, a.shape))
    if any(size.setdefault(c, n) != n for c, n in zip(lb, b.shape)):
        return None
    summed = sorted(set(la + lb) - set(out), key=lambda c: (c.islower(), c))
    if any(c not in la or c not in lb for c in summed):
        return None
    lro = [c for c in out if c in la and c in lb]
    lo = [c for c in out if c in la and c not in lb]
    ro = [c for c in out if c in lb and c not in la]

    def prod(labels):
        n = 1
        for c in labels:
            n *= size[c]
        return n

    left = a.transpose([la.index(c) for c in lro + lo + summed])
    right = b.transpose([lb.index(c) for c in lro + summed + ro])
    r = half_gemm(left.reshape(prod(lro), prod(lo), prod(summed)),
                  right.reshape(prod(lro), prod(summed), prod(ro)))
    if r is None:
        return None
    labels = lro + lo + ro
    r = r.reshape([size[c] for c in labels])
    return r.transpose([labels.index(c) for c in out])
