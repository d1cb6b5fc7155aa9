"""The float16 convolutions inside a complex32 one, as PyTorch 2.13's CPU kernels compute them.

PyTorch convolves complex tensors with three real convolutions (Gauss's trick, composed in
``_ops/nn_conv._complex_conv``); for complex32 those are float16 convolutions, which its CPU
build runs through its slow (im2col + gemm) kernels when the CPU has no float16 oneDNN support
(x86 without AVX512-FP16 / AMX-FP16). Their rounding is reproduced here, bit for bit:

- a convolution (``slow_conv2d`` / ``slow_conv3d`` / the dilated variants; 1-d runs as 2-d)
  is, per output element, the dot product of the weight row and the input's column (rows in
  (channel, kernel position) order) in float32 with PyTorch's ``cpublas`` reduction: four
  interleaved partial sums (element ``k`` into sum ``k % 4``, a tail into the first), then
  added up in order; the bias, as a float, is added to that sum; one rounding to float16;
- a transposed convolution (``slow_conv_transpose2d/3d``) first makes its columns (each a
  float32 sum over the input channels, in order, rounded to float16), then adds them into the
  zeroed output one kernel position after the other in float16 (``col2im``), then the bias
  (a float16 addition);
- groups run one after the other on their slices, as PyTorch's ``_convolution_nogroup``.

The input's gradient is PyTorch's too (its backward is a transposed convolution of the
gradient, made as above; a transposed convolution's is a convolution), and so is the forward-AD
tangent (the same convolutions of the tangents, added in complex32). The weight's and the
bias's gradients are ember's float16 ones (a float32 product, rounded once): PyTorch reduces
them with vectorised dot products whose order depends on the CPU, so they can differ in the
last bits. These run for the float16 parts of complex32 convolutions only (their cost is a
Python loop over a quarter of the reduction length); ember's float16 convolutions themselves
round once from a float32 BLAS product.
"""
from __future__ import annotations

import math

import numpy as np

from ._ops import nn_conv as C
from ._ops._registry import Op

_F32 = np.float32


def _dot4(wm: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """(N, O, L) float32 products of the (O, K) weight rows with the (N, K, L) columns, summed
    as PyTorch's reduced-precision gemm sums (four interleaved partial sums)."""
    n, k, nl = cols.shape
    o = wm.shape[0]
    part = np.zeros((4, n, o, nl), _F32)
    k4 = k - k % 4
    for i in range(0, k4, 4):
        part += wm[:, i:i + 4].T[:, None, :, None] * cols[:, i:i + 4].transpose(1, 0, 2)[:, :, None]
    for i in range(k4, k):
        part[0] += wm[:, i][None, :, None] * cols[:, None, i]
    s = part[0]
    for j in (1, 2, 3):
        s = s + part[j]
    return s


def _conv(x, w, b, stride, pads, dil, groups):
    n, c = x.shape[:2]
    o = w.shape[0]
    ks = w.shape[2:]
    ls = C.small_size(x.shape[2:], ks, stride, dil, pads)
    v = C.windows(C.pad_spatial(x, pads), ks, stride, dil, ls)   # (N, C, *K, *L)
    cg, og = c // groups, o // groups
    nk, nl = math.prod(ks), math.prod(ls)
    out = np.empty((n, o, nl), np.float16)
    for g in range(groups):
        cols = v[:, g * cg:(g + 1) * cg].astype(_F32).reshape(n, cg * nk, nl)
        wm = w[g * og:(g + 1) * og].astype(_F32).reshape(og, cg * nk)
        s = _dot4(wm, cols)
        if b is not None:
            s = b[g * og:(g + 1) * og].astype(_F32)[None, :, None] + s
        out[:, g * og:(g + 1) * og] = s.astype(np.float16)
    return out.reshape((n, o) + tuple(ls))


def _conv_transpose(x, w, b, stride, pads, dil, groups):
    n, ci = x.shape[:2]
    ls = x.shape[2:]
    ks = w.shape[2:]
    cig, cog = ci // groups, w.shape[1]
    big = tuple((l_ - 1) * s + d * (k - 1) + 1 - lo - hi
                for l_, s, d, k, (lo, hi) in zip(ls, stride, dil, ks, pads))
    nk, nl = math.prod(ks), math.prod(ls)
    parts = []
    for g in range(groups):
        xs = x[:, g * cig:(g + 1) * cig].astype(_F32).reshape(n, cig, nl)
        wg = w[g * cig:(g + 1) * cig].astype(_F32).reshape(cig, cog * nk)
        acc = np.zeros((n, cog * nk, nl), _F32)
        for i in range(cig):   # (the columns' gemm adds the input channels in order)
            acc += wg[i][None, :, None] * xs[:, i][:, None]
        cols = acc.astype(np.float16).reshape((n, cog) + tuple(ks) + tuple(ls))
        parts.append(C.col2im(cols, big, stride, dil, pads))   # (float16 additions in turn)
    out = parts[0] if groups == 1 else np.concatenate(parts, 1)
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * len(ks))
    return out


def _fwd(x, w, b, stride, pads, dil, transposed, groups):
    if not (type(x) is np.ndarray and x.dtype == np.float16 and w.dtype == np.float16):
        return C._conv_fwd(x, w, b, stride, pads, dil, transposed, groups)
    with np.errstate(over="ignore", invalid="ignore"):
        if transposed:
            return _conv_transpose(x, w, b, stride, pads, dil, groups)
        return _conv(x, w, b, stride, pads, dil, groups)


def _vjp(ns, g, need, x, w, stride, pads, dil, transposed, groups):
    exact = (need[0] and type(g) is np.ndarray and g.dtype == np.float16
             and type(w) is np.ndarray and w.dtype == np.float16)
    gx = None
    if exact:
        # the input's gradient as PyTorch's slow kernels make it: a transposed convolution of
        # the gradient (its columns, then col2im in float16), or, for a transposed one, a
        # convolution
        with np.errstate(over="ignore", invalid="ignore"):
            gx = (_conv(g, w, None, stride, pads, dil, groups) if transposed else
                  _conv_transpose(g, w, None, stride, pads, dil, groups))
        need = (False,) + tuple(need[1:])
    r = _CV.vjp(ns, g, need, x, w, stride, pads, dil, transposed, groups)
    return (gx,) + tuple(r[1:]) if exact else r


def _jvp(ns, tangents, primals, outs, stride, pads, dil, transposed, groups):
    # PyTorch's convolution_jvp: the same (float16) convolutions of the tangents, summed
    return C.conv_tangent(HALF_CONVOLUTION, tangents, primals,
                          (stride, pads, dil, transposed, groups))


_CV = C.CONVOLUTION
# PyTorch's ConvolutionBackward0 node, ember's convolution calculus but for the input's
# gradient and the tangent (above), the forward above
HALF_CONVOLUTION = Op("convolution", _fwd, _vjp, _jvp, saves=(0, 1), save_if=(1, 0),
                      node="ConvolutionBackward0",
                      names=("input", "weight", "stride", None, "dilation", "transposed",
                             "groups"))
