"""PyTorch's vectorised float32 ("opmath") arithmetic for half-type kernels, bit for bit.

PyTorch computes float16/bfloat16 CPU kernels in float32 with its ``Vectorized<float>``
functions and rounds the result once. The float32 results of those functions differ from
NumPy's in the last float32 bit now and then, and that bit sometimes survives the rounding to
the half type. This module reproduces them on float32 NumPy arrays: SLEEF's ``expf`` and its
double-float ``tanhf``, the Abramowitz-Stegun ``erf``, the multiply-adds GCC contracts into
FMAs, lane-wise sums reduced by AVX512's shuffle tree, the summation orders of PyTorch's
reference BLAS for float16, and a few FunctionsManual backward formulas op by op in the half
type. It is used only on the half-type paths (float32 and float64 keep NumPy's routines).

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
    if approximate != "tanh" and dt == _BF16:
        return None     # PyTorch runs oneDNN's float32 gelu for bfloat16: ember's float32 path
    if approximate == "tanh":
        inner = _TANH_BETA * (x + _TANH_KAPPA * (x * x * x))
        return _HALF * x * (_ONE + tanhf(inner))
    return (x * _HALF) * (_ONE + erf(x * _SQRT1_2))


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



def _lane_dot(a: np.ndarray, b, lanes: int, contract: bool) -> np.ndarray:
    """``sum(a * b)`` over the last axis in one ``lanes``-wide float accumulator (products
    FMA-accumulated when ``contract``), reduced by the shuffle tree, the tail added last."""
    a, b = np.broadcast_arrays(a, np.asarray(b, _F32))
    n = a.shape[-1]
    body = n - n % lanes
    if not body:
        s = np.zeros(a.shape[:-1] + (1,), _F32)
    else:
        acc = a[..., :lanes] * b[..., :lanes]
        for k in range(lanes, body, lanes):
            sl = slice(k, k + lanes)
            acc = fma(a[..., sl], b[..., sl], acc) if contract else acc + a[..., sl] * b[..., sl]
        s = _tree(acc)
    t = np.zeros_like(s)
    for k in range(body, n):     # the scalar tail, summed on its own
        t += a[..., k:k + 1] * b[..., k:k + 1]
    return s + t


def layer_norm_bwd_half(g: np.ndarray, x: np.ndarray, w, mean: np.ndarray, rstd: np.ndarray,
                        lanes: int = 16) -> np.ndarray:
    """The input's gradient of a layer norm over the rows of 2-D half arrays as PyTorch's CPU
    kernel computes it: the saved mean and rstd are half-typed, ``ds = sum(dy * w * x)`` and
    ``db = sum(dy * w)`` in one float accumulator, ``b = (db * mean - ds) * rstd^3 / N``,
    ``c = -b * mean - db * rstd / N``, ``dx = rstd * dy * w + b * x + c``, rounded once.
    Exact when the row length is a multiple of ``lanes``; a scalar tail is summed on its own
    (PyTorch's tail order is not reproduced: about one element in 10^4 differs)."""
    h = x.dtype
    dy = g.astype(_F32)
    xf = x.astype(_F32)
    a = rstd.astype(h).astype(_F32).reshape(-1, 1)
    m = mean.astype(h).astype(_F32).reshape(-1, 1)
    gw = _ONE if w is None else w.astype(_F32).reshape(-1)
    dyw = dy if w is None else dy * gw
    ds = _lane_dot(dyw, xf, lanes, True)
    db = _lane_dot(dy, gw, lanes, True)
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
    return s


def _gemm_seq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``gemm_transb_``: the products of one ``l`` added to a float32 result, ``l`` by ``l``."""
    s = a[..., :, 0:1] * b[..., 0:1, :]
    for l in range(1, a.shape[-1]):
        s = fma(a[..., :, l:l + 1], b[..., l:l + 1, :], s)
    return s


def _gemm_dot(a: np.ndarray, b: np.ndarray, lanes: int = 16) -> np.ndarray:
    """``gemm_transa_``'s ``fp16_dot_with_fp32_arith``: four float vectors FMA-accumulate 64
    elements a step and are added pairwise (0+2, 1+3, then 0+1), the remaining whole float
    vectors FMA-accumulate into that, the lanes reduce by the shuffle tree, a scalar tail adds
    last. Exact when k is a multiple of 64 (plus a scalar tail); with float vectors left over,
    about two dot products in 10^4 still differ by an ulp (PyTorch's tail order is not
    reproduced)."""
    k = a.shape[-1]
    x = a[..., :, None, :]
    y = np.swapaxes(b, -1, -2)[..., None, :, :]
    shape = np.broadcast_shapes(x.shape[:-1], y.shape[:-1]) + (lanes,)
    step = 4 * lanes
    main = k - k % step
    regs = [np.zeros(shape, _F32) for _ in range(4)]
    for j in range(0, main, step):
        for r in range(4):
            sl = slice(j + r * lanes, j + (r + 1) * lanes)
            regs[r] = fma(x[..., sl], y[..., sl], regs[r])
    acc = (regs[0] + regs[2]) + (regs[1] + regs[3])
    vec = k - k % lanes
    for j in range(main, vec, lanes):
        sl = slice(j, j + lanes)
        acc = fma(x[..., sl], y[..., sl], acc)
    s = _tree(acc)[..., 0]
    for j in range(vec, k):
        s = s + x[..., j] * y[..., j]
    return s


_GEMM_EXACT_MACS = 1 << 24   # beyond this, float32 BLAS (within an ulp; the replica is slow)


def _col_major(a: np.ndarray) -> bool:
    """Whether PyTorch's GEMM reads a 2-D operand transposed: column-major strides (a
    row-major operand, or one it copies, is read as is)."""
    r, c = a.shape
    s0, s1 = (s // a.itemsize for s in a.strides)
    if s1 == 1 and s0 >= max(1, c):
        return False
    return s0 == 1 and s1 >= max(1, r)


def half_gemm(a: np.ndarray, b: np.ndarray, c=None, beta: float = 0.0, alpha: float = 1.0):
    """float16 ``a @ b`` (2-D, or 3-D batches of equal size) as PyTorch's reference CPU BLAS
    sums its float32 products, chosen by the operands' layouts like its ``gemm``: both
    row-major or both column-major, four interleaved partial sums; a column-major ``b``, the
    vectorised dot kernel; a column-major ``a``, one running sum; ``bmm`` of fewer than 400
    multiply-adds per matrix, one running sum. None where this does not apply (other shapes,
    degenerate sizes, large products): the caller uses float32 BLAS. With ``c`` (addmm's
    input, broadcast to the result; only ``beta == alpha == 1``): ``c + dot`` in float32, or
    for the running-sum kernel the sum started from ``c``."""
    if a.dtype != np.float16 or b.dtype != np.float16 or a.ndim != b.ndim or a.ndim not in (2, 3):
        return None
    if c is not None and (beta != 1 or alpha != 1):
        return None     # scaled addmm: PyTorch's scalar handling is not reproduced yet
    m, k = a.shape[-2:]
    n = b.shape[-1]
    if min(m, n, k) < 2 or b.shape[-2] != k or m * n * k * (a.shape[0] if a.ndim == 3 else 1) \
            > _GEMM_EXACT_MACS:
        return None
    if a.ndim == 3:
        if a.shape[0] != b.shape[0]:
            return None
        if c is not None:
            return None
        if m * n * k < 400:
            return _gemm_seq(a.astype(_F32), b.astype(_F32)).astype(a.dtype)
        ta, tb = _col_major(a[0]), _col_major(b[0])
    else:
        ta, tb = _col_major(a), _col_major(b)
    af, bf = a.astype(_F32), b.astype(_F32)
    c32 = None
    if c is not None:
        c32 = np.broadcast_to(np.asarray(c, _F32), (m, n))
        if beta == 0:
            c32 = None
    if ta == tb:
        r = _gemm_ilp4(af, bf)
    elif tb:
        r = _gemm_dot(af, bf)
    elif c32 is not None:
        # gemm_transb_ scales its float32 copy of c by beta, then adds alpha * a @ b into it
        r = c32 * _F32(beta)
        bs = bf * _F32(alpha)
        for l in range(k):
            r = fma(af[:, l:l + 1], bs[l:l + 1, :], r)
        return r.astype(a.dtype)
    else:
        r = _gemm_seq(af, bf)
    if c is not None:
        r = fma(_F32(alpha), r, c32 * _F32(beta)) if c32 is not None else r * _F32(alpha)
    return r.astype(a.dtype)
