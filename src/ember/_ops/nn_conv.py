"""Convolutions for ``nn.functional``: conv1d/2d/3d, conv_transpose1d/2d/3d, unfold and fold.

Everything is one geometry: a "big" array (a convolution's input side, spatial sizes ``S``)
and a "small" one (its output side, ``L``), related by ``stride``, ``dilation``, the kernel
size ``K`` and per-dim padding pairs ``(lo, hi)`` on the big side. ``hi`` is kept *exact*
(trailing input rows that no window reaches count as negative padding), so that
``S + lo + hi == (L - 1) * stride + dilation * (K - 1) + 1`` and the three products below are
exact adjoints of one another:

* ``_conv_core``  big -> small: im2col (a strided view, copied once) then one BLAS product
  (ungrouped stride-1 sweeps: a few examples at a time, so the columns stay in cache);
* ``_convT_core`` small -> big: one BLAS product then col2im (a loop over kernel positions
  adding shifted slices, never over output positions; ungrouped: one product per kernel
  position, its block added while still in cache);
* ``_wgrad_core`` (big, small) -> weight: im2col then one BLAS product (ungrouped: one product
  per kernel position, on that position's block of the columns).

Small outputs fold the batch into the product's columns (one large GEMM, 2-d ``np.dot``);
ungrouped ones with at least 8 channels go through channels-last columns (``_nhwc_*``: exact
products, chunked in cache, the forward's bias added on the way out), other stride-1 sweeps work
on flattened planes (``_Flat``) so that copies and adds run over long contiguous runs. Large
per-example outputs with few input rows carry the bias as a row of ones in the product.

A convolution's input gradient is a transposed convolution, a transposed convolution's is a
convolution, and both weight gradients are ``_wgrad_core``; so the op ``CONVOLUTION`` (PyTorch's
``aten::convolution``, node ``ConvolutionBackward0``) and ``CONV_WGRAD`` differentiate into each
other and double backward runs through the same code. The weight layout is the same in both
directions: (small channels, big channels / groups, *K).

Every buffer is allocated row-major (``order="C"``): ``np.empty_like(ref, shape=...)`` with a
shape of ``ref``'s rank would copy the layout of a non-contiguous ``ref`` (a permuted conv1d
input, a transposed gradient), and the strided views and reshapes here assume row-major
buffers.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .. import _dtype as D
from .._meta import MetaArray, meta_like
from .._tensor import Tensor
from ._registry import NP, Op, apply, ns_fn

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "fold",
    "unfold",
]

# Folding the batch into the product's columns (one large GEMM) pays when each example's
# spatial output is small; with large outputs one GEMM per example is as fast and needs no
# transposed copy of the result.
_FOLD_MAX_L = 512
# Bytes of columns produced and consumed per chunk: about the L2 cache of the cores BLAS runs on
# (larger chunks fall out of cache; smaller ones make products too small for BLAS's threads).
_CHUNK_BYTES = 1 << 21


# ---- array kernels ----------------------------------------------------------------------------

def meta_aware(fn):
    """Run an array kernel for meta arrays (read-only views of one zero) on real zeros of their
    shapes and hand back meta arrays of the results' shapes."""
    def run(*args):
        if not any(type(a) is MetaArray for a in args):
            return fn(*args)
        out = fn(*[np.zeros(a.shape, a.dtype) if type(a) is MetaArray else a for a in args])
        if isinstance(out, tuple):
            return tuple(meta_like(o.shape, o.dtype) for o in out)
        return meta_like(out.shape, out.dtype)
    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


def _strided(a: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """A read-only strided view (the one place that would pick ``cupy``'s as_strided)."""
    return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=False)


def pad_spatial(x: np.ndarray, pads, value=0) -> np.ndarray:
    """``x`` (N, C, *S) with ``pads[i] = (lo, hi)`` added around spatial dim i; a negative
    ``hi`` drops trailing elements."""
    if all(lo == 0 and hi == 0 for lo, hi in pads):
        return x
    crop = tuple(slice(0, s + hi if hi < 0 else s) for s, (_, hi) in zip(x.shape[2:], pads))
    x = x[(slice(None), slice(None)) + crop]
    if all(lo == 0 and hi <= 0 for lo, hi in pads):
        return x
    shape = x.shape[:2] + tuple(s + lo + max(hi, 0) for s, (lo, hi) in zip(x.shape[2:], pads))
    out = (np.zeros_like(x, order="C", shape=shape) if value == 0 else
           np.full_like(x, value, order="C", shape=shape))
    out[(slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                           zip(x.shape[2:], pads))] = x
    return out


def windows(xp: np.ndarray, ks, stride, dil, out) -> np.ndarray:
    """The view (N, C, *K, *L) of padded ``xp``: element [n, c, k.., l..] is
    ``xp[n, c, l * stride + k * dil]`` per spatial dim."""
    st = xp.strides
    nd = len(ks)
    shape = xp.shape[:2] + tuple(ks) + tuple(out)
    strides = st[:2] + tuple(st[2 + i] * dil[i] for i in range(nd)) + tuple(
        st[2 + i] * stride[i] for i in range(nd))
    return _strided(xp, shape, strides)


def small_size(big, ks, stride, dil, pads) -> tuple:
    """Spatial output size of a convolution / pooling window sweep over ``big``."""
    return tuple((b + lo + hi - d * (k - 1) - 1) // s + 1
                 for b, k, s, d, (lo, hi) in zip(big, ks, stride, dil, pads))


def exact_pads(big, ks, stride, dil, pads) -> tuple:
    """``pads`` with each ``hi`` lowered by the trailing elements no window reaches."""
    res = []
    for b, k, s, d, (lo, hi) in zip(big, ks, stride, dil, pads):
        r = (b + lo + hi - d * (k - 1) - 1) % s
        res.append((lo, hi - r))
    return tuple(res)


def col2im(cols: np.ndarray, big, stride, dil, pads) -> np.ndarray:
    """Adjoint of ``windows`` after padding: sum the (N, C, *K, *L) columns ``cols`` into an
    (N, C, *big) array (``pads`` exact), one shifted slice per kernel position."""
    nd = len(big)
    ks = cols.shape[2:2 + nd]
    ls = cols.shape[2 + nd:]
    full = tuple((l_ - 1) * s + d * (k - 1) + 1 for l_, s, d, k in zip(ls, stride, dil, ks))
    ext = tuple(f + max(0, -hi) for f, (_, hi) in zip(full, pads))
    out = np.zeros_like(cols, order="C", shape=cols.shape[:2] + ext)
    lead = (slice(None), slice(None))
    for kk in itertools.product(*(range(k) for k in ks)):
        sl = tuple(slice(k * d, k * d + (l_ - 1) * s + 1, s)
                   for k, d, l_, s in zip(kk, dil, ls, stride))
        out[lead + sl] += cols[lead + kk]
    crop = tuple(slice(lo, lo + b) for (lo, _), b in zip(pads, big))
    if all(c.start == 0 and c.stop == e for c, e in zip(crop, ext)):
        return out
    return np.ascontiguousarray(out[lead + crop])


# ---- stride-1 convolutions over flattened planes ----------------------------------------------
# With stride 1, the window of one kernel position over a padded plane flattened to 1-d is a
# single contiguous run shifted by that position's offset, provided each output row is taken
# as wide as a padded row: the extra columns wrap into the next row and are dropped on the way
# out (or are zeros on the way back). im2col copies and col2im adds then run over long
# contiguous runs instead of one short output row at a time (several times faster in NumPy),
# for a few percent more product work.

_FLAT_MAX_JUNK = 1.5


class _Flat:
    """The flattened geometry of a stride-1 window sweep over padded planes ``P``."""

    __slots__ = ("big", "dil", "ls", "nd", "nw", "offs", "pads", "plane", "pp", "slack", "wide")

    def __init__(self, big, ks, dil, pads):
        self.big = tuple(big)
        self.dil = tuple(dil)
        self.pads = pads
        self.pp = tuple(b + lo + hi for b, (lo, hi) in zip(big, pads))
        self.nd = nd = len(ks)
        self.ls = tuple(p - d * (k - 1) for p, k, d in zip(self.pp, ks, dil))
        self.wide = (self.ls[0],) + self.pp[1:]
        self.nw = math.prod(self.wide)
        self.plane = math.prod(self.pp)
        pst = tuple(math.prod(self.pp[i + 1:]) for i in range(nd))
        self.slack = sum((k - 1) * d * p for k, d, p in zip(ks[1:], dil[1:], pst[1:]))
        self.offs = [sum(k * d * p for k, d, p in zip(kk, dil, pst))
                     for kk in itertools.product(*(range(k) for k in ks))]

    @staticmethod
    def fits(big, ks, stride, dil, pads) -> bool:
        if any(s != 1 for s in stride) or any(lo < 0 or hi < 0 for lo, hi in pads):
            return False
        pp = [b + lo + hi for b, (lo, hi) in zip(big, pads)]
        ls = [p - d * (k - 1) for p, k, d in zip(pp, ks, dil)]
        if min(ls, default=1) < 1:
            return False
        return math.prod(pp[1:]) <= _FLAT_MAX_JUNK * math.prod(ls[1:])

    def inner(self):
        """The slices of a padded plane (shape ``pp``) holding the unpadded data."""
        return tuple(slice(lo, lo + b) for b, (lo, _) in zip(self.big, self.pads))

    def padded(self, x):
        """x (N, C, *big) copied into zero planes of ``plane + slack`` elements."""
        n, c = x.shape[:2]
        buf = np.zeros_like(x, order="C", shape=(n, c, self.plane + self.slack))
        buf[:, :, :self.plane].reshape((n, c) + self.pp)[(Ellipsis,) + self.inner()] = x
        return buf

    def _col_view(self, buf, ks):
        """The columns as a view (C, *K, N, nw) of padded planes ``buf`` (N, C, plane+slack)."""
        n, c = buf.shape[:2]
        it = buf.itemsize
        pst = [math.prod(self.pp[i + 1:]) for i in range(self.nd)]
        kst = tuple(d * p * it for d, p in zip(self.dil, pst))
        return _strided(buf, (c,) + tuple(ks) + (n, self.nw),
                        (buf.strides[1],) + kst + (buf.strides[0], it))

    def cols(self, x, ks, groups):
        """im2col into (G, C/G * K, N * nw), the kernel positions' runs copied whole."""
        n, c = x.shape[:2]
        v = self._col_view(self.padded(x), ks)
        return v.reshape(groups, c // groups * math.prod(ks), n * self.nw)

    def conv(self, x, wm, ks):
        """Ungrouped convolution (N, O, *L) of x (N, C, *big) with ``wm`` (O, C * K), a few
        examples at a time: each chunk's columns are copied into one buffer sized to stay in
        the core's cache and consumed there by the product at once (writing all the columns
        and reading them back from memory costs about a fifth of the product's time)."""
        n, c = x.shape[:2]
        o = wm.shape[0]
        nw = self.nw
        v = self._col_view(self.padded(x), ks)
        ck = c * math.prod(ks)
        nc = max(1, min(n, _CHUNK_BYTES // max(1, ck * nw * x.itemsize)))
        cbuf = np.empty_like(x, order="C", shape=(ck * nc * nw,))
        rbuf = np.empty_like(x, order="C", shape=(o * nc * nw,))
        out = np.empty_like(x, order="C", shape=(n, o) + self.ls)
        keep = (Ellipsis,) + tuple(slice(0, v_) for v_ in self.ls)
        for i in range(0, n, nc):
            m = min(nc, n - i)
            cols = cbuf[:ck * m * nw].reshape(v.shape[:-2] + (m, nw))
            np.copyto(cols, v[..., i:i + m, :])
            res = rbuf[:o * m * nw].reshape(o, m * nw)
            np.dot(wm, cols.reshape(ck, m * nw), out=res)
            out[i:i + m] = res.reshape((o, m) + self.wide)[keep].swapaxes(0, 1)
        return out

    def widen(self, s, groups, batch_major: bool):
        """Small-side (N, O, *L) -> (G, O/G, N * nw) (or (N, G, O/G, nw)) with zero columns."""
        n, o = s.shape[:2]
        if batch_major:
            out = np.zeros_like(s, order="C", shape=(n, o) + self.wide)
            out[(Ellipsis,) + tuple(slice(0, v) for v in self.ls)] = s
            return out.reshape(n, groups, o // groups, self.nw)
        out = np.zeros_like(s, order="C", shape=(o, n) + self.wide)
        out[(Ellipsis,) + tuple(slice(0, v) for v in self.ls)] = s.swapaxes(0, 1)
        return out.reshape(groups, o // groups, n * self.nw)

    def narrow(self, y, n, o):
        """Product result (O, N * nw) -> (N, O, *L) without the wrapped columns."""
        y = y.reshape((o, n) + self.wide)[(Ellipsis,) + tuple(slice(0, v) for v in self.ls)]
        return np.ascontiguousarray(y.swapaxes(0, 1))

    def col2im_kc(self, cols, groups):
        """Sum product rows ordered (kernel position, channel), columns (N, nw) - shaped
        (G, K, C/G, N, nw) - back into (N, C, *big). Kernel position k's block is one
        contiguous (C, N, nw) run, added into channel-major planes (C, N, plane + slack) whose
        rows line up with it; the first position (offset 0) assigns instead of adding."""
        g, nk, cg, n = cols.shape[:4]
        c = g * cg
        out = np.empty_like(cols, order="C", shape=(g, cg, n, self.plane + self.slack))
        nw = self.nw
        out[..., nw:] = 0
        out[..., :nw] = cols[:, 0]
        for k in range(1, nk):
            off = self.offs[k]
            out[..., off:off + nw] += cols[:, k]
        return self._planes(out, c, n)

    def gemm_col2im(self, wk, sw, n):
        """``col2im_kc`` of the product ``wk @ sw`` for one group: ``wk`` (K, C, O) the weight
        by kernel position, ``sw`` (O, N * nw) the widened small side. One product per kernel
        position, its (C, N, nw) block added at once while still in cache, instead of one
        product whose K times larger result is read back from memory."""
        nk, c = wk.shape[:2]
        nw = self.nw
        out = np.empty_like(sw, order="C", shape=(c, n, self.plane + self.slack))
        out[..., nw:] = 0
        tmp = np.empty_like(sw, order="C", shape=(c, n * nw))
        blk = tmp.reshape(c, n, nw)
        for k in range(nk):
            np.dot(wk[k], sw, out=tmp)
            if k == 0:
                out[..., :nw] = blk   # offset 0: the first position assigns
            else:
                out[..., self.offs[k]:self.offs[k] + nw] += blk
        return self._planes(out, c, n)

    def _planes(self, out, c, n):
        """Channel-major sums (C, N, plane + slack) -> (N, C, *big), contiguous."""
        out = out.reshape(c, n, self.plane + self.slack)[:, :, :self.plane]
        out = out.reshape((c, n) + self.pp)
        if any(lo or hi for lo, hi in self.pads):
            out = out[(Ellipsis,) + self.inner()]
        return np.ascontiguousarray(out.swapaxes(0, 1))

    def col2im(self, cols, n, c):
        """Sum columns (N, C, K, nw) (any strides) back into (N, C, *big)."""
        out = np.zeros_like(cols, order="C", shape=(n, c, self.plane + self.slack))
        for k, off in enumerate(self.offs):
            out[:, :, off:off + self.nw] += cols[:, :, k]
        out = out[:, :, :self.plane].reshape((n, c) + self.pp)
        if all(lo == 0 and hi == 0 for lo, hi in self.pads):
            return out
        return np.ascontiguousarray(out[(Ellipsis,) + self.inner()])


# ---- channels-last columns (groups 1, batch folded, at least 8 channels) ----------------------
# With the input copied once to channels-last (N, *S, C), the columns of a chunk of examples are
# one strided view (n, *L, *K, C) whose innermost runs are whole channel vectors (K_last * C
# contiguous elements at stride 1), copied as (n * L, K * C) rows with no wrapped junk (the
# flat-plane sweeps above multiply about a fifth more columns). Per chunk, while it is in cache:
# the forward's product (O, n * L) goes back to (n, O, L) with the bias added in the same pass;
# the weight gradient sums (K * C, n * L) @ (n * L, O) over chunks; the transposed convolution
# (the input gradient) multiplies the chunk's gradient rows (n * L, O) by each kernel
# position's (O, C) slice of the weight and adds that block into a channels-last result.

_NHWC_MIN_C = 8


def _nhwc_fits(x, w, groups, n, ls) -> bool:
    return (groups == 1 and x.shape[1] >= _NHWC_MIN_C and _fold_batch(n, ls)
            and x.dtype.kind == "f" and x.dtype.itemsize >= 4 and w.dtype == x.dtype
            and x.size > 0 and w.size > 0 and math.prod(ls) > 0)


def _nhwc_windows(x, ks, stride, pads, dil, ls):
    """The window view (N, *L, *K, C) of x (N, C, *S) copied once to channels-last with its
    padding (exact ``pads``: a negative ``hi`` crops)."""
    n, c = x.shape[:2]
    x = pad_spatial(x, tuple((0, min(hi, 0)) for _, hi in pads))
    pp = tuple(b + lo + max(hi, 0) for b, (lo, hi) in zip(x.shape[2:], pads))
    nd = len(ks)
    perm = (0,) + tuple(range(2, 2 + nd)) + (1,)
    if any(lo or hi > 0 for lo, hi in pads):
        xt = np.zeros_like(x, order="C", shape=(n,) + pp + (c,))
        inner = tuple(slice(lo, lo + b) for b, (lo, _) in zip(x.shape[2:], pads))
        xt[(slice(None),) + inner] = x.transpose(perm)
    else:
        xt = np.empty_like(x, order="C", shape=(n,) + pp + (c,))
        np.copyto(xt, x.transpose(perm))
    st = xt.strides
    shape = (n,) + tuple(ls) + tuple(ks) + (c,)
    strides = ((st[0],) + tuple(st[1 + i] * stride[i] for i in range(nd))
               + tuple(st[1 + i] * dil[i] for i in range(nd)) + (st[-1],))
    return _strided(xt, shape, strides)


def _nhwc_chunk(v, n: int, size: int = _CHUNK_BYTES) -> int:
    row = math.prod(v.shape[1:]) * v.itemsize
    return max(1, min(n, size // max(1, row)))


def _nhwc_conv(x, w, b, stride, pads, dil):
    """Convolution (groups 1) through channels-last columns, bias added on the way out."""
    n, c = x.shape[:2]
    o = w.shape[0]
    ks = w.shape[2:]
    nd = len(ks)
    ls = small_size(x.shape[2:], ks, stride, dil, pads)
    v = _nhwc_windows(x, ks, stride, pads, dil, ls)
    nl = math.prod(ls)
    kc = c * math.prod(ks)
    # (n * L, K * C) @ (K * C, O), the weight as a transposed view: with OpenBLAS's AVX-512
    # kernels this orientation is a third faster than (O, K * C) @ (n * L, K * C).T (with
    # its AVX2 kernels a few percent)
    wm = np.ascontiguousarray(w.transpose((0,) + tuple(range(2, 2 + nd)) + (1,))).reshape(o, kc)
    out = np.empty_like(x, order="C", shape=(n, o, nl))
    nc = _nhwc_chunk(v, n)
    cbuf = np.empty_like(x, order="C", shape=(nc,) + v.shape[1:])
    ybuf = np.empty_like(x, order="C", shape=(o * nc * nl,))
    bb = None if b is None else b.astype(x.dtype, copy=False).reshape(o, 1)
    for i in range(0, n, nc):
        m = min(nc, n - i)
        cols = cbuf[:m]
        np.copyto(cols, v[i:i + m])
        y = ybuf[:o * m * nl].reshape(m * nl, o)
        np.dot(cols.reshape(m * nl, kc), wm.T, out=y)
        yt = y.reshape(m, nl, o).transpose(0, 2, 1)
        if bb is None:
            np.copyto(out[i:i + m], yt)
        else:
            np.add(yt, bb, out=out[i:i + m])
    return out.reshape((n, o) + tuple(ls))


def _nhwc_rows(s: np.ndarray) -> np.ndarray:
    """The small side (N, O, *L) as channels-last rows (N, L, O), contiguous."""
    n, o = s.shape[:2]
    rows = np.empty_like(s, order="C", shape=(n, math.prod(s.shape[2:]), o))
    np.copyto(rows, s.reshape(n, o, -1).transpose(0, 2, 1))
    return rows


def _nhwc_wgrad(big, small, ks, stride, pads, dil, rows=None):
    """Weight gradient (groups 1) through channels-last columns, summed chunk by chunk.
    ``rows``: the small side already as ``_nhwc_rows``."""
    n, c = big.shape[:2]
    o = small.shape[1]
    ls = tuple(small.shape[2:])
    nd = len(ks)
    v = _nhwc_windows(big, ks, stride, pads, dil, ls)
    nl = math.prod(ls)
    kc = c * math.prod(ks)
    s3 = small.reshape(n, o, nl)
    nc = _nhwc_chunk(v, n)
    cbuf = np.empty_like(big, order="C", shape=(nc,) + v.shape[1:])
    gbuf = np.empty_like(big, order="C", shape=(nc, nl, o)) if rows is None else None
    acc = tmp = None
    for i in range(0, n, nc):
        m = min(nc, n - i)
        cols = cbuf[:m]
        np.copyto(cols, v[i:i + m])
        if rows is None:
            gm = gbuf[:m]
            np.copyto(gm, s3[i:i + m].transpose(0, 2, 1))
        else:
            gm = rows[i:i + m]
        if acc is None:
            acc = np.dot(cols.reshape(m * nl, kc).T, gm.reshape(m * nl, o))
        else:
            if tmp is None:
                tmp = np.empty_like(acc)
            np.dot(cols.reshape(m * nl, kc).T, gm.reshape(m * nl, o), out=tmp)
            acc += tmp
    # acc is (*K, C, O): back to the weight's (O, C, *K)
    perm = (nd + 1, nd) + tuple(range(nd))
    return np.ascontiguousarray(acc.reshape(tuple(ks) + (c, o)).transpose(perm))


def _nhwc_convT(s, w, stride, pads, dil, rows=None):
    """Transposed convolution (groups 1, exact ``pads``) through channels-last blocks: per
    chunk of examples and per kernel position, the gradient rows (n * L, O) times that
    position's weight (O, C) give one contiguous (n, *L, C) block, added into a channels-last
    chunk of the result while still in cache. (One product against the whole (O, K * C) weight
    leaves each position's block strided by K * C in its result, and adding strided blocks
    costs more than the products lose by being K times narrower.)"""
    n, o = s.shape[:2]
    ls = tuple(s.shape[2:])
    c = w.shape[1]
    ks = tuple(w.shape[2:])
    nd = len(ks)
    nl = math.prod(ls)
    nk = math.prod(ks)
    # (*K, O, C): position k's (O, C) matrix contiguous
    wk = np.ascontiguousarray(w.transpose(tuple(range(2, 2 + nd)) + (0, 1))).reshape(nk, o, c)
    full = tuple((l_ - 1) * st + d * (k - 1) + 1 for l_, st, d, k in zip(ls, stride, dil, ks))
    ext = tuple(f + max(0, -hi) for f, (_, hi) in zip(full, pads))
    out = np.zeros_like(s, order="C", shape=(n,) + ext + (c,))
    s3 = s.reshape(n, o, nl)
    nc = max(1, min(n, _CHUNK_BYTES * 2 // max(1, nl * max(o, c) * s.itemsize)))
    gbuf = np.empty_like(s, order="C", shape=(nc, nl, o)) if rows is None else None
    tbuf = np.empty_like(s, order="C", shape=(nc * nl, c))
    # per kernel position: where its block lands in the result
    places = [(slice(None),) + tuple(slice(k * d, k * d + (l_ - 1) * st + 1, st)
                                     for k, d, l_, st in zip(kk, dil, ls, stride))
              for kk in itertools.product(*(range(k) for k in ks))]
    for i in range(0, n, nc):
        m = min(nc, n - i)
        if rows is None:
            gm = gbuf[:m]
            np.copyto(gm, s3[i:i + m].transpose(0, 2, 1))
        else:
            gm = rows[i:i + m]
        g2 = gm.reshape(m * nl, o)
        tm = tbuf[:m * nl]
        blk = tm.reshape((m,) + ls + (c,))
        oc = out[i:i + m]
        for k, dst in enumerate(places):
            np.dot(g2, wk[k], out=tm)
            oc[dst] += blk
    crop = tuple(slice(lo, f - hi) for (lo, hi), f in zip(pads, full))
    out = out[(slice(None),) + crop]
    return np.ascontiguousarray(out.transpose((0, nd + 1) + tuple(range(1, nd + 1))))


def _fold_batch(n: int, ls) -> bool:
    return n > 1 and math.prod(ls) <= _FOLD_MAX_L


def _compute_dtype(a: np.ndarray):
    """Half types are computed in float32 (as PyTorch's CPU kernels accumulate)."""
    return np.float32 if a.dtype.itemsize == 2 and a.dtype.kind != "i" else None


def _cols_folded(v: np.ndarray, groups: int) -> np.ndarray:
    """Columns (G, C/G * K, N * L) copied from the window view (N, C, *K, *L)."""
    nd = (v.ndim - 2) // 2
    perm = (1,) + tuple(range(2, 2 + nd)) + (0,) + tuple(range(2 + nd, 2 + 2 * nd))
    n, c = v.shape[:2]
    ck = c // groups * math.prod(v.shape[2:2 + nd])
    return v.transpose(perm).reshape(groups, ck, n * math.prod(v.shape[2 + nd:]))


def _to_folded(s: np.ndarray, groups: int) -> np.ndarray:
    """(N, O, *L) -> (G, O/G, N * L)."""
    n, o = s.shape[:2]
    nl = math.prod(s.shape[2:])
    return s.reshape(n, groups, o // groups, nl).transpose(1, 2, 0, 3).reshape(
        groups, o // groups, n * nl)


def _dot_groups(a, b, ta: bool, tb: bool):
    """Per group g: op(a[g]) @ op(b[g]) with op a transpose where asked, as 2-d BLAS calls
    (``np.dot`` on 2-d operands; NumPy's stacked matmul can pick far slower BLAS layouts)."""
    out = [np.dot(a[g].T if ta else a[g], b[g].T if tb else b[g]) for g in range(a.shape[0])]
    return out[0][None] if len(out) == 1 else np.stack(out)


def _conv_core(x, w, stride, pads, dil, groups):
    """Convolution big -> small, no bias (the weight's layout: (O, C/G, *K))."""
    ct = _compute_dtype(x)
    if ct is not None:
        return _conv_core(x.astype(ct), w.astype(ct), stride, pads, dil, groups).astype(x.dtype)
    n, c = x.shape[:2]
    o = w.shape[0]
    ks = w.shape[2:]
    wm = w.reshape(groups, o // groups, c // groups * math.prod(ks))
    ls = small_size(x.shape[2:], ks, stride, dil, pads)
    if _nhwc_fits(x, w, groups, n, ls):
        return _nhwc_conv(x, w, None, stride, pads, dil)
    if _fold_batch(n, ls) and _Flat.fits(x.shape[2:], ks, stride, dil, pads):
        fl = _Flat(x.shape[2:], ks, dil, pads)
        if groups == 1 and x.size and w.size:
            return fl.conv(x, wm[0], ks)
        y = _dot_groups(wm, fl.cols(x, ks, groups), False, False)       # (G, O/G, N*nw)
        return fl.narrow(y, n, o)
    xp = pad_spatial(x, pads)
    v = windows(xp, ks, stride, dil, ls)
    nl = math.prod(ls)
    if _fold_batch(n, ls):
        y = _dot_groups(wm, _cols_folded(v, groups), False, False)       # (G, O/G, N*L)
        y = np.ascontiguousarray(y.reshape(o, n, nl).transpose(1, 0, 2))
    else:
        y = np.matmul(wm, v.reshape(n, groups, wm.shape[2], nl))   # (N, G, O/G, L)
    return y.reshape((n, o) + ls)


def _convT_core(s, w, stride, pads, dil, groups):
    """Transposed convolution small -> big (exact ``pads``), no bias."""
    ct = _compute_dtype(s)
    if ct is not None:
        return _convT_core(s.astype(ct), w.astype(ct), stride, pads, dil,
                           groups).astype(s.dtype)
    n, o = s.shape[:2]
    ls = s.shape[2:]
    cg = w.shape[1]
    ks = w.shape[2:]
    c = cg * groups
    big = tuple((l_ - 1) * st + d * (k - 1) + 1 - lo - hi
                for l_, st, d, k, (lo, hi) in zip(ls, stride, dil, ks, pads))
    wm = w.reshape(groups, o // groups, cg * math.prod(ks))
    nd = len(ks)
    fold = _fold_batch(n, ls)
    if fold and _nhwc_fits(s, w, groups, n, ls) and cg >= _NHWC_MIN_C:
        return _nhwc_convT(s, w, stride, pads, dil)
    if _Flat.fits(big, ks, stride, dil, pads):
        fl = _Flat(big, ks, dil, pads)
        nk = math.prod(ks)
        if fold:
            # rows ordered (k, c) so that each kernel position's block is contiguous
            wk = w.reshape(groups, o // groups, cg, nk).transpose(0, 3, 2, 1).reshape(
                groups, nk * cg, o // groups)
            sw = fl.widen(s, groups, False)                                 # (G, O/G, N*nw)
            if groups == 1 and s.size and w.size:
                return fl.gemm_col2im(wk.reshape(nk, cg, o), sw[0], n)
            cols = _dot_groups(wk, sw, False, False)                        # (G, KC, N*nw)
            return fl.col2im_kc(cols.reshape(groups, nk, cg, n, fl.nw), groups)
        cols = np.matmul(wm.transpose(0, 2, 1), fl.widen(s, groups, True))
        return fl.col2im(cols.reshape(n, c, nk, fl.nw), n, c)
    if fold:
        cols = _dot_groups(wm, _to_folded(s, groups), True, False)     # (G, C/G*K, N*L)
        cols = cols.reshape((c,) + ks + (n,) + ls)
        perm = (1 + nd, 0) + tuple(range(1, 1 + nd)) + tuple(range(2 + nd, 2 + 2 * nd))
        cols = cols.transpose(perm)
    else:
        cols = np.matmul(wm.transpose(0, 2, 1),
                         s.reshape(n, groups, o // groups, math.prod(ls)))  # (N, G, CK, L)
        cols = cols.reshape((n, c) + ks + ls)
    return col2im(cols, big, stride, dil, pads)


def _wgrad_kpos(big, small, ks, stride, pads, dil):
    """Weight gradient of an ungrouped convolution with the batch folded into the product:
    per kernel position, that position's (C, N * L) block of the columns is copied into one
    buffer (still in cache) and multiplied at once by the small side (O, N * L), instead of
    writing and re-reading all K blocks of the columns."""
    n, c = big.shape[:2]
    o = small.shape[1]
    ls = tuple(small.shape[2:])
    sm = np.ascontiguousarray(small.swapaxes(0, 1)).reshape(o, n * math.prod(ls))
    v = windows(pad_spatial(big, pads), ks, stride, dil, ls).swapaxes(0, 1)   # (C, N, *K, *L)
    gw = np.empty_like(sm, order="C", shape=(math.prod(ks), o, c))
    tmp = np.empty_like(sm, order="C", shape=(c, n) + ls)
    rows = tmp.reshape(c, n * math.prod(ls))
    lead = (slice(None), slice(None))
    for k, kk in enumerate(itertools.product(*(range(k) for k in ks))):
        np.copyto(tmp, v[lead + kk])
        np.dot(sm, rows.T, out=gw[k])
    return np.ascontiguousarray(gw.transpose(1, 2, 0)).reshape((o, c) + ks)


@meta_aware
def _wgrad_core(big, small, stride, pads, dil, groups):
    """Weight gradient sum over n, l of small[n, o, l] * windows(big)[n, c, k, l], shaped
    (O, C/G, *K); the kernel size follows from the exact geometry."""
    ct = _compute_dtype(big)
    if ct is not None:
        return _wgrad_core(big.astype(ct), small.astype(ct), stride, pads, dil,
                           groups).astype(big.dtype)
    n, c = big.shape[:2]
    o = small.shape[1]
    ls = small.shape[2:]
    ks = tuple((b + lo + hi - (l_ - 1) * st - 1) // d + 1
               for b, (lo, hi), l_, st, d in zip(big.shape[2:], pads, ls, stride, dil))
    if _nhwc_fits(big, small, groups, n, ls):
        return _nhwc_wgrad(big, small, ks, stride, pads, dil)
    if _fold_batch(n, ls) and groups == 1 and big.size and small.size:
        return _wgrad_kpos(big, small, ks, stride, pads, dil)
    if _fold_batch(n, ls) and _Flat.fits(big.shape[2:], ks, stride, dil, pads):
        fl = _Flat(big.shape[2:], ks, dil, pads)
        gw = _dot_groups(fl.cols(big, ks, groups), fl.widen(small, groups, False), False, True)
        return np.ascontiguousarray(gw.transpose(0, 2, 1)).reshape((o, c // groups) + ks)
    xp = pad_spatial(big, pads)
    v = windows(xp, ks, stride, dil, ls)
    if _fold_batch(n, ls):
        # (C/G*K, N*L) @ (N*L, O/G): the long dim as BLAS's rows, transposed once after
        gw = _dot_groups(_cols_folded(v, groups), _to_folded(small, groups), False, True)
        gw = gw.transpose(0, 2, 1)
    else:
        nl = math.prod(ls)
        cm = v.reshape(n, groups, c // groups * math.prod(ks), nl)
        gw = np.matmul(small.reshape(n, groups, o // groups, nl), cm.transpose(0, 1, 3, 2))
        gw = gw.sum(0)
    return np.ascontiguousarray(gw).reshape((o, c // groups) + ks)


def _add_bias(y: np.ndarray, b) -> np.ndarray:
    if b is None:
        return y
    y += b.reshape((1, -1) + (1,) * (y.ndim - 2)).astype(y.dtype, copy=False)
    return y


@meta_aware
def _conv_fwd(x, w, b, stride, pads, dil, transposed, groups):
    if transposed:
        y = _convT_core(x, w, stride, pads, dil, groups)
    else:
        ls = small_size(x.shape[2:], w.shape[2:], stride, dil, pads)
        if _nhwc_fits(x, w, groups, x.shape[0], ls):
            return _nhwc_conv(x, w, b, stride, pads, dil)
        if _bias_row_fits(x, w, b, groups, ls):
            return _conv_bias_row(x, w, b, stride, pads, dil, ls)
        y = _conv_core(x, w, stride, pads, dil, groups)
    return _add_bias(y, b)


def _bias_row_fits(x, w, b, groups, ls) -> bool:
    """Per-example products (large outputs) with few input rows: the bias rides in the product
    as one more row of ones, instead of a second pass over the whole output."""
    return (b is not None and groups == 1 and not _fold_batch(x.shape[0], ls)
            and x.dtype.kind == "f" and x.dtype.itemsize >= 4 and w.dtype == x.dtype
            and b.dtype == x.dtype and x.size > 0 and w.size > 0 and math.prod(ls) > 0
            and w[0].size <= 64)


def _conv_bias_row(x, w, b, stride, pads, dil, ls):
    """Convolution plus bias as per-example products (O, C*K + 1) @ (C*K + 1, L), the last
    column row of ones."""
    n, o = x.shape[0], w.shape[0]
    ck = w[0].size
    nl = math.prod(ls)
    v = windows(pad_spatial(x, pads), w.shape[2:], stride, dil, ls)
    cols = np.empty_like(x, order="C", shape=(n, ck + 1, nl))
    np.copyto(cols[:, :ck].reshape(v.shape), v)
    cols[:, ck] = 1
    wa = np.empty_like(w, order="C", shape=(o, ck + 1))
    wa[:, :ck] = w.reshape(o, ck)
    wa[:, ck] = b
    return np.matmul(wa, cols).reshape((n, o) + tuple(ls))


# ---- ops --------------------------------------------------------------------------------------

def _nhwc_backward(g, x, w, stride, pads, dil, groups):
    """A convolution's input and weight gradients through channels-last columns, the
    gradient's channels-last rows made once for both; None where that path does not apply."""
    n, ls = g.shape[0], g.shape[2:]
    if not (type(g) is np.ndarray and type(x) is np.ndarray and type(w) is np.ndarray
            and _nhwc_fits(x, g, groups, n, ls) and _nhwc_fits(g, w, groups, n, ls)
            and w.shape[1] >= _NHWC_MIN_C):
        return None
    rows = _nhwc_rows(g)
    return (_nhwc_convT(g, w, stride, pads, dil, rows),
            _nhwc_wgrad(x, g, w.shape[2:], stride, pads, dil, rows))


def _conv_vjp(ns, g, need, x, w, stride, pads, dil, transposed, groups):
    gb = None
    if need[2]:
        gb = _bias_grad(g) if ns is NP else None
        if gb is None:
            gb = ns.sum_dims(g, (0,) + tuple(range(2, len(stride) + 2)), False)
    if ns is NP and need[0] and need[1] and not transposed:
        both = _nhwc_backward(g, x, w, stride, pads, dil, groups)
        if both is not None:
            return both + (gb,)
    gx = gw = None
    if need[0]:
        gx = ns.conv(g, ns.conj(w), stride, pads, dil, not transposed, groups)
    if need[1]:
        xc = ns.conj(x)
        gw = (ns.conv_wgrad(g, xc, stride, pads, dil, groups) if transposed else
              ns.conv_wgrad(xc, g, stride, pads, dil, groups))
    return gx, gw, gb


def _bias_grad(g):
    """The bias gradient (sum over the batch and the spatial dims) as a product with a ones
    vector: BLAS reads ``g`` once, several times faster than NumPy's multi-axis reduction.
    None where that does not apply (half types, non-ndarrays)."""
    if type(g) is not np.ndarray or g.dtype.kind != "f" or g.dtype.itemsize < 4 or g.ndim < 3:
        return None
    n, o = g.shape[:2]
    nl = math.prod(g.shape[2:])
    if n * o * nl == 0:
        return None
    s = np.dot(g.reshape(n * o, nl), np.ones_like(g, order="C", shape=(nl,)))
    return s.reshape(n, o).sum(0)


def conv_tangent(op: Op, tangents, primals, params):
    """PyTorch's convolution_jvp: ``op`` (a convolution) of each tangent with the other
    primal, plus the bias tangent, summed."""
    tx, tw, tb = tangents
    x, w, _ = primals
    r = None
    if tx is not None:
        r = apply(op, (tx, w, None), params)
    if tw is not None:
        t = apply(op, (x, tw, None), params)
        r = t if r is None else r + t
    if tb is not None:
        t = tb.reshape((1, -1) + (1,) * len(params[0]))
        r = t if r is None else r + t
    return r


def _conv_jvp(ns, tangents, primals, outs, stride, pads, dil, transposed, groups):
    return conv_tangent(CONVOLUTION, tangents, primals, (stride, pads, dil, transposed, groups))


# input and weight saved whenever a node is made (PyTorch's ConvolutionBackward0 saves both,
# whichever gradients are needed): changing either in place before backward is its error
CONVOLUTION = Op("convolution", _conv_fwd, _conv_vjp, _conv_jvp, saves=(0, 1),
                 node="ConvolutionBackward0",
                 names=("input", "weight", "stride", None, "dilation", "transposed",
                        "groups"))


def _wgrad_vjp(ns, g, need, big, small, stride, pads, dil, groups):
    gbig = ns.conv(ns.conj(small), g, stride, pads, dil, True, groups) if need[0] else None
    gsmall = ns.conv(ns.conj(big), g, stride, pads, dil, False, groups) if need[1] else None
    return gbig, gsmall


def _wgrad_jvp(ns, tangents, primals, outs, stride, pads, dil, groups):
    tb, ts = tangents
    big, small = primals
    params = (stride, pads, dil, groups)
    r = None
    if tb is not None:
        r = apply(CONV_WGRAD, (tb, small), params)
    if ts is not None:
        t = apply(CONV_WGRAD, (big, ts), params)
        r = t if r is None else r + t
    return r


CONV_WGRAD = Op("convolution_weight_grad", _wgrad_core, _wgrad_vjp, _wgrad_jvp, saves=(0, 1),
                save_if=(1, 0), node="ConvolutionBackwardBackward0")

ns_fn("conv", lambda x, w, stride, pads, dil, transposed, groups:
      _conv_fwd(x, w, None, stride, pads, dil, transposed, groups),
      lambda x, w, stride, pads, dil, transposed, groups:
      apply(CONVOLUTION, (x, w, None), (stride, pads, dil, transposed, groups)))
ns_fn("conv_wgrad", _wgrad_core,
      lambda big, small, stride, pads, dil, groups:
      apply(CONV_WGRAD, (big, small), (stride, pads, dil, groups)))


# ---- argument checks (PyTorch's messages, in PyTorch's order) ---------------------------------

_C10_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
              "float64": "double", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>", "int8": "signed char",
              "uint8": "unsigned char", "int16": "short int", "int32": "int",
              "int64": "long int", "bool": "bool"}
_HWD = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}


def _type_name(dt) -> str:
    from ._dispatch import _type_name as tn
    return tn(dt)


def _fmt(v) -> str:
    return "[" + ", ".join(str(int(i)) for i in v) + "]"


def _int_list(v, d: int, fn: str, name: str) -> tuple:
    """An int or a sequence of ints, as PyTorch's argument parser takes ``int[d]``."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer, tuple, list)):
        if isinstance(v, Tensor) and v.ndim == 0 and not v.is_floating_point():
            return (int(v.item()),) * d
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not "
                        f"{type(v).__name__}")
    if isinstance(v, (int, np.integer)):
        return (int(v),) * d
    out = []
    for i in v:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, but found "
                            f"element of type {type(i).__name__} at pos {len(out)}")
        out.append(int(i))
    return tuple(out)


def _expand_param(v: tuple, name: str, n: int) -> tuple:
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {n} values to match the "
            f"convolution dimensions, but got {name}={_fmt(v)}")
    return v


def _batchify(x: Tensor, d: int, fn: str) -> tuple[Tensor, bool]:
    """PyTorch's batchify: accept (C, *S) or (N, C, *S); the unbatched form gets a batch dim
    (recorded as UnsqueezeBackward0, as in PyTorch)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    if x.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to {fn}, "
                           f"but got input of size: {_fmt(x.shape)}")
    return (x, True) if x.ndim == d + 2 else (x.unsqueeze(0), False)


def _same_pads(x: Tensor, w: Tensor, stride, dil) -> tuple:
    """Padding pairs for padding='same' (the extra element of an odd total goes after)."""
    n = x.ndim - 2
    if w.ndim != x.ndim:
        raise RuntimeError(
            f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight"
            f"{_fmt(w.shape)}, but got {x.ndim}-dimensional input of size {_fmt(x.shape)} "
            "instead")
    for name, v in (("stride", stride), ("dilation", dil)):
        if len(v) not in (1, n):
            raise RuntimeError(f"{name} cannot broadcast to {n} dimensions")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dil = dil * n if len(dil) == 1 else dil
    pads = []
    for i in range(n):
        total = dil[i] * (w.shape[i + 2] - 1)
        pads.append((total // 2, total - total // 2))
    if any(lo != hi for lo, hi in pads):
        import warnings
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require "
                      "a zero-padded copy of the input be created", UserWarning, stacklevel=4)
    return tuple(pads)


def _check_geometry(x: Tensor, w: Tensor, b, stride, padding, dil, out_pad, groups,
                    transposed: bool, pairs) -> None:
    """``check_shape_forward`` of PyTorch's convolution (``pairs``: the padding on each side,
    uneven for padding='same' with an even kernel)."""
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in out_pad):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d < 0 for d in dil):
        raise RuntimeError("dilation should be greater than zero")
    ws = tuple(w.shape)
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {_fmt(ws)} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{_fmt(ws)}] instead")
    if transposed:
        _check_transposed_channels(x, ws, b, groups)
        return
    if x.shape[1] != ws[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_fmt(ws)}, expected input"
                           f"{_fmt(x.shape)} to have {ws[1] * groups} channels, but got "
                           f"{x.shape[1]} channels instead")
    if b is not None and (b.ndim != 1 or b.shape[0] != ws[0]):
        raise RuntimeError(f"Given weight of size {_fmt(ws)}, expected bias to be 1-dimensional "
                           f"with {ws[0]} elements, but got bias of size {_fmt(b.shape)} instead")
    padded = [x.shape[2 + i] + lo + hi for i, (lo, hi) in enumerate(pairs)]
    kern = [dil[i] * (ws[2 + i] - 1) + 1 for i in range(len(padding))]
    if any(p < k for p, k in zip(padded, kern)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, kern))}). Kernel size can't be greater than "
            "actual input size")


def _check_transposed_channels(x: Tensor, ws, b, groups) -> None:
    if x.shape[1] != ws[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {_fmt(ws)}, expected input"
                           f"{_fmt(x.shape)} to have {ws[0]} channels, but got {x.shape[1]} "
                           "channels instead")
    if b is not None and (b.ndim != 1 or b.shape[0] != ws[1] * groups):
        raise RuntimeError(f"Given transposed=1, weight of size {_fmt(ws)}, expected bias to be "
                           f"1-dimensional with {ws[1] * groups} elements, but got bias of size "
                           f"{_fmt(b.shape)} instead")


def _as_2d(v: tuple, fill: int, d: int) -> tuple:
    """A 1-d convolution's parameters as PyTorch's 2-d kernel reports them."""
    return (fill,) + v if d == 1 else v


def _check_kernel(x: Tensor, w: Tensor, stride, dil, out_pad, transposed: bool, d: int) -> None:
    """The checks PyTorch's CPU kernels make after the generic ones (1-d convolutions report
    them in the 2-d form they run as; dilated convolutions run a kernel of their own)."""
    if x.shape[0] and x.shape[1] and any(s == 0 for s in x.shape[2:]):
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input "
                           f"shape: {_fmt(_as_2d_shape(tuple(x.shape), d))}")
    ks = tuple(w.shape[2:])
    names = _HWD[max(d, 2)]
    if transposed:
        _check_kernel_transposed(w, ks, stride, dil, out_pad, d, names)
    elif any(v != 1 for v in dil):
        if any(k <= 0 for k in ks):
            raise RuntimeError(f"kernel size should be greater than zero, but got "
                               f"{_fmt(_as_2d(ks, 1, d))}")
        if any(v <= 0 for v in dil):
            raise RuntimeError(f"dilation should be greater than zero, but got "
                               f"{_fmt(_as_2d(dil, 1, d))}")
    elif any(k <= 0 for k in ks):
        if d == 3:
            raise RuntimeError(f"kernel size should be greater than zero, but got: "
                               f"{' x '.join(map(str, ks))} (TxHxW)")
        raise RuntimeError("kernel size should be greater than zero, but got " + " ".join(
            f"kernel_{n}: {v}" for n, v in zip(names, _as_2d(ks, 1, d))))


def _as_2d_shape(shape: tuple, d: int) -> tuple:
    return shape[:2] + (1,) + shape[2:] if d == 1 else shape


def _check_kernel_transposed(w: Tensor, ks, stride, dil, out_pad, d: int, names) -> None:
    empty = any(v == 0 for v in w.shape)
    if d == 3 and empty:
        raise RuntimeError("non-empty 5D (n_output_plane x n_input_plane x kernel_depth x "
                           "kernel_height x kernel_width) tensor expected for weight, but got: "
                           f"{_fmt(w.shape)}")
    if any(k <= 0 for k in ks):
        raise RuntimeError("kernel size should be greater than zero, but got " + " ".join(
            f"kernel_{n}: {v}" for n, v in zip(names, _as_2d(ks, 1, d))))
    if any(v <= 0 for v in dil):
        raise RuntimeError("dilation should be greater than zero, but got " + ", ".join(
            f"dilation_{n}: {v}" for n, v in zip(names, _as_2d(dil, 1, d))))
    if any(op >= s and op >= dd for op, s, dd in zip(out_pad, stride, dil)):
        vals = [(f"output_padding_{n}", v) for n, v in zip(names, _as_2d(out_pad, 0, d))]
        vals += [(f"stride_{n}", v) for n, v in zip(names, _as_2d(stride, 1, d))]
        vals += [(f"dilation_{n}", v) for n, v in zip(names, _as_2d(dil, 1, d))]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           "got " + " ".join(f"{k}: {v}" for k, v in vals))
    if empty:
        raise RuntimeError(f"non-empty 2D or 4D weight tensor expected, but got: "
                           f"{_fmt(_as_2d_shape(tuple(w.shape), d))}")


def _check_dtypes(x: Tensor, w: Tensor, transposed: bool, d: int) -> None:
    xd, wd = x.dtype, w.dtype
    if xd is not wd:
        if xd.is_complex:
            wn = (f"CPU{_type_name(wd)}Type" if wd.is_complex else
                  f"ember.{_type_name(wd)}Tensor")
            raise RuntimeError(f"Input type (CPU{_type_name(xd)}Type) and weight type ({wn}) "
                               "should be the same")
        raise RuntimeError(f"expected scalar type {_type_name(xd)} but found {_type_name(wd)}")
    ok = xd.is_floating_point or xd.is_complex or (
        xd is D.int64 if transposed else xd is not D.bool)
    if not ok:
        kernel = ("slow_conv_transpose3d_out_cpu" if d == 3 else "slow_conv_transpose2d_out_cpu"
                  ) if transposed else ("compute_columns3d" if d == 3 else "slow_conv2d_cpu")
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(xd)}\'')


def _output_size_check(x: Tensor, w: Tensor, stride, padding, dil, out_pad, d: int) -> None:
    ins = tuple(x.shape[2:])
    outs = tuple((i - 1) * s - 2 * p + dd * (k - 1) + op + 1 for i, s, p, dd, k, op in
                 zip(ins, stride, padding, dil, w.shape[2:], out_pad))
    if any(o < 1 for o in outs):
        ins2, outs2 = (_as_2d(ins, 1, d), _as_2d(outs, 1, d))
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, ins2))}). Calculated output "
            f"size per channel: ({' x '.join(map(str, outs2))}). Output size is too small")


# ---- public functions -------------------------------------------------------------------------

def _convolution(fn: str, d: int, input, weight, bias, stride, padding, dilation, groups,
                 transposed: bool = False, output_padding=0) -> Tensor:
    """PyTorch's conv{d}d / conv_transpose{d}d: argument checks, unbatched inputs, then the
    CONVOLUTION op."""
    if not isinstance(weight, Tensor):
        raise TypeError(f"{fn}(): argument 'weight' (position 2) must be Tensor, not "
                        f"{type(weight).__name__}")
    if bias is not None and not transposed and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_C10_NAMES[input.dtype.name]}) and bias type "
                           f"({_C10_NAMES[bias.dtype.name]}) should be the same")
    x, batched = _batchify(input, d, fn)
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    stride = _int_list(stride, d, fn, "stride")
    dilation = _int_list(dilation, d, fn, "dilation")
    same = None
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{fn}(): argument 'padding' must be tuple of ints, not str")
        if padding == "same":
            same = _same_pads(x, weight, stride, dilation)
            padding = (0,)
        elif padding == "valid":
            padding = (0,)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _int_list(padding, d, fn, "padding")
    out_pad = _int_list(output_padding, d, fn, "output_padding")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    n = weight.ndim - 2
    stride = _expand_param(stride, "stride", n)
    padding = _expand_param(padding, "padding", n)
    dilation = _expand_param(dilation, "dilation", n)
    out_pad = _expand_param(out_pad, "output_padding", n)
    pads = same if same is not None else tuple((p, p) for p in padding)
    _check_geometry(x, weight, bias, stride, padding, dilation, out_pad, groups, transposed, pads)
    _check_kernel(x, weight, stride, dilation, out_pad, transposed, d)
    _check_dtypes(x, weight, transposed, d)
    if transposed:
        _output_size_check(x, weight, stride, padding, dilation, out_pad, d)
        pads = tuple((p, p - op) for p, op in zip(padding, out_pad))
    else:
        pads = exact_pads(tuple(x.shape[2:]), tuple(weight.shape[2:]), stride, dilation, pads)
    params = (stride, pads, dilation, transposed, groups)
    if x.dtype.is_complex:
        out = _complex_conv(x, weight, bias, params)
    else:
        out = apply(CONVOLUTION, (x, weight, bias), params)
    if not transposed and x.shape[1] == 0:
        out = out[:, :0]   # PyTorch's result for an input without channels has none either
    return out if batched else out.squeeze(0)


def _complex_conv(x: Tensor, w: Tensor, b, params) -> Tensor:
    """A complex convolution from three real ones (Gauss's trick), composed as PyTorch composes
    it: a - b + i (c - a - b), so the graph and its gradients are PyTorch's."""
    xr, xi, wr, wi = x.real, x.imag, w.real, w.imag
    br = bi = None
    if b is not None:
        br, bi = b.real, b.imag
    cv = CONVOLUTION
    if x.dtype is D.complex32:   # float16 parts: PyTorch's kernels' rounding (ember._chalf_conv)
        from .._chalf_conv import HALF_CONVOLUTION as cv
    a = apply(cv, (xr, wr, br), params)
    bb = apply(cv, (xi, wi, None), params)
    c = apply(cv, (xr + xi, wr + wi, None if b is None else br + bi), params)
    return a - bb + (c - a - bb) * 1j


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """``torch.nn.functional.conv1d``: input (N, C, L) or (C, L); padding an int, a tuple,
    'valid' or 'same'."""
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """``torch.nn.functional.conv2d``: input (N, C, H, W) or (C, H, W)."""
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """``torch.nn.functional.conv3d``: input (N, C, D, H, W) or (C, D, H, W)."""
    return _convolution("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """``torch.nn.functional.conv_transpose1d`` (the gradient of conv1d with respect to its
    input); weight (C_in, C_out / groups, K)."""
    return _convolution("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation,
                        groups, True, output_padding)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """``torch.nn.functional.conv_transpose2d``."""
    return _convolution("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation,
                        groups, True, output_padding)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """``torch.nn.functional.conv_transpose3d``."""
    return _convolution("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation,
                        groups, True, output_padding)


# ---- unfold (im2col) and fold (col2im) --------------------------------------------------------

@meta_aware
def _im2col_fwd(x, ks, dil, pads, stride, big):
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    xp = pad_spatial(x, pads)
    ls = small_size(xp.shape[2:], ks, stride, dil, ((0, 0),) * len(ks))
    n, c = x.shape[:2]
    out = windows(xp, ks, stride, dil, ls).reshape(n, c * math.prod(ks), math.prod(ls))
    return out[0] if unbatched else out


@meta_aware
def _col2im_fwd(cols, ks, dil, pads, stride, big):
    unbatched = cols.ndim == 2
    if unbatched:
        cols = cols[None]
    ls = small_size(big, ks, stride, dil, pads)
    n, ck = cols.shape[:2]
    out = col2im(cols.reshape((n, ck // math.prod(ks)) + tuple(ks) + ls), big, stride, dil,
                 pads)
    return out[0] if unbatched else out


IM2COL = Op("im2col", _im2col_fwd,
            lambda ns, g, need, *p: (ns.col2im(g, *p),), linear=True, node="Im2ColBackward0")
COL2IM = Op("col2im", _col2im_fwd,
            lambda ns, g, need, *p: (ns.im2col(g, *p),), linear=True, node="Col2ImBackward0")
ns_fn("im2col", _im2col_fwd, lambda g, *p: apply(IM2COL, (g,), p))
ns_fn("col2im", _col2im_fwd, lambda g, *p: apply(COL2IM, (g,), p))


def _pair_arg(v, name: str, fn: str) -> tuple:
    v = _int_list(v, 2, fn, name)
    if len(v) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
    return v


def _hw(label: str, v) -> str:
    return f"{label}_height: {v[0]} {label}_width: {v[1]}"


def _positive(label: str, v, what: str = "should be greater than zero") -> None:
    if any(i <= 0 for i in v):
        raise RuntimeError(f"{label.split('_')[0] if label != 'kernel' else 'kernel size'} "
                           f"{what}, but got {_hw(label, v)}")


def _check_im2col_params(ks, dil, pad, stride, col2im_order: bool) -> None:
    """im2col's / col2im's parameter checks (the two check in different orders)."""
    checks = {"k": lambda: _positive("kernel", ks),
              "d": lambda: _positive("dilation", dil),
              "p": lambda: _nonneg_pad(pad),
              "s": lambda: _positive("stride", stride)}
    for c in ("ksdp" if col2im_order else "kdps"):
        checks[c]()


def _nonneg_pad(pad) -> None:
    if any(p < 0 for p in pad):
        raise RuntimeError(f"padding should be non-negative, but got {_hw('pad', pad)}")


def _dim_error(x: Tensor, dim: int):
    if x.ndim == 0:
        return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    n = x.ndim
    return IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but "
                      f"got {n})")


def _check_im_dtype(x: Tensor, kernel: str) -> None:
    dt = x.dtype
    if not (dt.is_floating_point or dt.is_complex and dt is not D.complex32 or dt is D.bool):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(dt)}\'')


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """``torch.nn.functional.unfold`` (im2col): (N, C, H, W) or (C, H, W) -> sliding blocks
    (N, C * kh * kw, L), node ``Im2ColBackward0``."""
    fn = "im2col"
    ks = _pair_arg(kernel_size, "kernel_size", fn)
    dil = _pair_arg(dilation, "dilation", fn)
    pad = _pair_arg(padding, "padding", fn)
    stride = _pair_arg(stride, "stride", fn)
    _check_im2col_params(ks, dil, pad, stride, False)
    x = input
    if x.ndim < 3:
        raise _dim_error(x, 1 if x.ndim == 0 else x.ndim)
    s = tuple(x.shape)
    if x.ndim not in (3, 4) or any(v == 0 for v in s[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {_fmt(s)}")
    big = s[-2:]
    pads = tuple((p, p) for p in pad)
    ls = small_size(big, ks, stride, dil, pads)
    if any(v < 1 for v in ls):
        raise RuntimeError(
            f"Given input with spatial size {big}, kernel_size={ks}, dilation={dil}, "
            f"padding={pad}, calculated shape of the array of sliding blocks as {ls}, but its "
            "components must be at least one.")
    _check_im_dtype(x, "im2col_out_cpu")
    return apply(IM2COL, (x,), (ks, dil, exact_pads(big, ks, stride, dil, pads), stride, big))


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """``torch.nn.functional.fold`` (col2im): sums sliding blocks (N, C * kh * kw, L) or
    (C * kh * kw, L) back into (N, C, *output_size), node ``Col2ImBackward0``."""
    fn = "col2im"
    out = _pair_arg(output_size, "output_size", fn)
    ks = _pair_arg(kernel_size, "kernel_size", fn)
    dil = _pair_arg(dilation, "dilation", fn)
    pad = _pair_arg(padding, "padding", fn)
    stride = _pair_arg(stride, "stride", fn)
    _check_im2col_params(ks, dil, pad, stride, True)
    x = input
    s = tuple(x.shape)
    if x.ndim not in (2, 3) or s[-1] == 0 or s[-2] == 0:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: {_fmt(s)}")
    nk = ks[0] * ks[1]
    if s[-2] % nk:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
            f"but got input.size(1)={s[-2]} and kernel_size={ks}.")
    pads = tuple((p, p) for p in pad)
    ls = small_size(out, ks, stride, dil, pads)
    if ls[0] * ls[1] != s[-1]:
        raise RuntimeError(
            f"Given output_size={out}, kernel_size={ks}, dilation={dil}, padding={pad}, "
            f"stride={stride}, expected size of input's dimension 2 to match the calculated "
            f"number of sliding blocks {ls[0]} * {ls[1]} = {ls[0] * ls[1]}, but got "
            f"input.size(2)={s[-1]}.")
    _check_im_dtype(x, "col2im_out_cpu")
    return apply(COL2IM, (x,), (ks, dil, exact_pads(out, ks, stride, dil, pads), stride, out))
