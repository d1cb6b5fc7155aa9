"""The rest of ``torch.nn.functional``: ``conv_tbc``, ``native_channel_shuffle`` and the
CUDA-only grouped/scaled matrix products.

conv_tbc has no forward-mode rule in PyTorch; its backward, a composite there, is built from
ember ops under ``create_graph`` (same values, other node names). native_channel_shuffle has no
derivative at all (a NotImplemented node), as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._registry import EM, Op, apply
from .indexing import _no_derivative
from .matrix import _no_fwd_ad

__all__ = ["conv_tbc", "grouped_mm", "native_channel_shuffle", "scaled_grouped_mm",
           "scaled_mm"]


# ---- conv_tbc -------------------------------------------------------------------------------

def _tbc_fwd(x, w, b, pad):
    k = w.shape[0]
    xp = np.pad(x, ((pad, pad), (0, 0), (0, 0))) if pad > 0 else x
    if pad < 0:
        xp = xp[-pad:xp.shape[0] + pad]
    t_out = xp.shape[0] - k + 1
    out = np.broadcast_to(b.astype(x.dtype, copy=False), (max(t_out, 0),) + x.shape[1:2]
                          + w.shape[2:]).copy()
    for j in range(k):
        out += xp[j:j + t_out] @ w[j]
    return out


def _tbc_vjp_em(g, need, x, w, pad):
    """The VJP in ember ops, so that it is differentiable under ``create_graph``."""
    from .joining import stack
    from .nn_sampling import pad as fpad
    from .reduction import sum as fsum
    k, t_out, t_in = w.shape[0], g.shape[0], x.shape[0]
    tp = t_in + 2 * pad
    gx = gw = gb = None
    if need[0]:
        gxp = None
        for j in range(k):
            term = fpad(g @ w[j].transpose(0, 1), (0, 0, 0, 0, j, tp - t_out - j))
            gxp = term if gxp is None else gxp + term
        gx = fpad(gxp, (0, 0, 0, 0, -pad, -pad))
    if need[1]:
        xp = fpad(x, (0, 0, 0, 0, pad, pad))
        gw = stack([xp[j:j + t_out].reshape(-1, x.shape[2]).transpose(0, 1)
                    @ g.reshape(-1, w.shape[2]) for j in range(k)])
    if need[2]:
        gb = fsum(g, (0, 1))
    return gx, gw, gb


def _tbc_vjp(ns, g, need, x, w, b, pad):
    if ns is EM:
        return _tbc_vjp_em(g, need, x, w, pad)
    gd, xd, wd = g, x, w
    k, t_out = wd.shape[0], gd.shape[0]
    xp = np.pad(xd, ((pad, pad), (0, 0), (0, 0))) if pad > 0 else xd
    if pad < 0:
        xp = xp[-pad:xp.shape[0] + pad]
    gx = gw = gb = None
    if need[0]:
        gxp = np.zeros(xp.shape, xd.dtype)
        for j in range(k):
            gxp[j:j + t_out] += gd @ wd[j].T
        gx = np.zeros(xd.shape, xd.dtype)
        if pad >= 0:
            gx[...] = gxp[pad:pad + xd.shape[0]]
        else:
            gx[-pad:xd.shape[0] + pad] = gxp
    if need[1]:
        gw = np.stack([np.einsum("tbc,tbo->co", xp[j:j + t_out], gd) for j in range(k)])
    if need[2]:
        gb = gd.sum((0, 1))
    return gx, gw, gb


CONV_TBC = Op("conv_tbc", _tbc_fwd, _tbc_vjp, _no_fwd_ad("conv_tbc"), saves=(0, 1, 2))


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """``F.conv_tbc``: a 1-D convolution over (time, batch, channels) input with a
    (kernel_width, in_channels, out_channels) weight, ``pad`` zeros at both ends of time."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    pad = int(pad)
    t_out = input.shape[0] + 2 * pad - weight.shape[0] + 1
    if t_out < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {t_out}: "
                           f"[{t_out}, {input.shape[1]}, {weight.shape[2]}]")
    return apply(CONV_TBC, (input, weight, bias), (pad,))


# ---- native_channel_shuffle -----------------------------------------------------------------

def _shuffle_fwd(x, g):
    n, c = x.shape[:2]
    return np.ascontiguousarray(
        x.reshape(n, g, c // g, *x.shape[2:]).swapaxes(1, 2).reshape(x.shape))


_NATIVE_SHUFFLE = _no_derivative("native_channel_shuffle", _shuffle_fwd,
                                 "native_channel_shuffle")


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``F.native_channel_shuffle``: channel_shuffle's kernel, without a derivative (backward
    and forward mode raise PyTorch's errors)."""
    shape = tuple(input.shape)
    if len(shape) <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes [{', '.join(map(str, shape))}]")
    g = int(groups)
    if g <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    if shape[1] % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {shape[1]} "
                           f"channels and {g} groups.")
    return apply(_NATIVE_SHUFFLE, (input,), (g,))


# ---- CUDA-only matrix products --------------------------------------------------------------

def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs: Tensor | None = None,
               bias: Tensor | None = None, out_dtype=None) -> Tensor:
    """``F.grouped_mm`` is not implemented: PyTorch's kernel needs 16-byte aligned strides and
    bfloat16/float16/float32 grouped-GEMM layouts that ember's NumPy storage does not model."""
    raise NotImplementedError("ember does not implement grouped_mm (PyTorch's grouped GEMM "
                              "kernel for mixture-of-experts layers).")


def scaled_mm(mat_a: Tensor, mat_b: Tensor, scale_a, scale_recipe_a, scale_b, scale_recipe_b,
              swizzle_a=None, swizzle_b=None, bias: Tensor | None = None, output_dtype=None,
              contraction_dim=(), use_fast_accum: bool = False) -> Tensor:
    """``F.scaled_mm`` is not implemented: it multiplies float8 matrices, a dtype ember lacks."""
    raise NotImplementedError("ember does not implement scaled_mm: it needs float8 dtypes, "
                              "which ember does not have.")


def scaled_grouped_mm(mat_a: Tensor, mat_b: Tensor, scale_a, scale_recipe_a, scale_b,
                      scale_recipe_b, swizzle_a=None, swizzle_b=None, bias: Tensor | None = None,
                      offs: Tensor | None = None, output_dtype=None, contraction_dim=(),
                      use_fast_accum: bool = False) -> Tensor:
    """``F.scaled_grouped_mm`` is not implemented: float8 grouped products (see scaled_mm)."""
    raise NotImplementedError("ember does not implement scaled_grouped_mm: it needs float8 "
                              "dtypes, which ember does not have.")
