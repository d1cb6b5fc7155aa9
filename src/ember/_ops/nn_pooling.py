"""Pooling for ``nn.functional``: max / average / adaptive / fractional / power-average pooling
and max_unpool, in 1, 2 and 3 spatial dims.

A window sweep is a loop over the kernel's positions (a handful), each reading one strided
slice of the padded input: never a loop over output positions. Max-type pools (max, adaptive
max, fractional max) return the flat index of each maximum within its input plane, save those
indices (not the windows) and differentiate by scattering the gradient to them; the scatter and
the gather (its adjoint, also max_unpool's gradient and the forward-mode rule) are linear ops of
their own, so double backward goes through them. Average pools are linear: their VJP is the
adjoint sweep, whose VJP is the pool again. Adaptive average pooling is separable: one small
averaging matrix per spatial dim.

As in PyTorch, the 1-d functions run the 2-d op on an input with a unit height (so their nodes
are ``SqueezeBackward1`` over ``MaxPool2DWithIndicesBackward0`` ...), and an adaptive average
pool to size 1 is a mean (``MeanBackward1``).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .. import _dtype as D
from .. import _layout as _L
from .._settings import alert_not_deterministic
from .._tensor import Tensor
from ._registry import NP, Op, apply, ns_fn, wrap_outputs
from .nn_conv import _fmt, _int_list, col2im, meta_aware, pad_spatial
from .nn_conv import _type_name as _tname
from .reduction import save_indices

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]


# ---- index scatter / gather (the calculus of every max-type pool) -----------------------------

def _plane_flat(idx: np.ndarray, nd: int, in_shape) -> np.ndarray:
    """Flat positions in the whole input of per-plane indices ``idx`` (*lead, *L)."""
    planes = math.prod(in_shape[:-nd]) if len(in_shape) > nd else 1
    plane = math.prod(in_shape[-nd:])
    i2 = idx.reshape(planes, math.prod(idx.shape) // planes if planes else 0)
    return i2 + (np.arange(planes, like=idx) * plane)[:, None]


@meta_aware
def _gather_np(x, idx, nd, in_shape, unique=True):
    """``x`` (*lead, *S) read at the per-plane flat indices ``idx`` (*lead, *L)."""
    flat = _plane_flat(idx, nd, in_shape)
    return np.ascontiguousarray(x).reshape(-1)[flat].reshape(idx.shape)


@meta_aware
def _scatter_np(g, idx, nd, in_shape, unique=True):
    """Adjoint of ``_gather_np``: an ``in_shape`` array of zeros with ``g`` added at the
    indices (written directly when no two indices coincide)."""
    # row-major whatever g's layout (a transposed gradient): ``o`` must be a view of it
    out = np.zeros_like(g, order="C", shape=tuple(in_shape))
    flat = _plane_flat(idx, nd, in_shape).reshape(-1)
    o = out.reshape(-1)
    if unique:
        o[flat] = g.reshape(-1)
    else:
        np.add.at(o, flat, g.reshape(-1))
    return out


POOL_GATHER = Op("pool_gather", _gather_np,
                 lambda ns, g, need, *p: (ns.pool_scatter(g, *p),), linear=True,
                 node="IndexBackward0")
POOL_SCATTER = Op("pool_scatter", _scatter_np,
                  lambda ns, g, need, *p: (ns.pool_gather(g, *p),), linear=True,
                  node="MaxPoolBackwardBackward0")
ns_fn("pool_gather", _gather_np, lambda x, *p: apply(POOL_GATHER, (x,), p))
ns_fn("pool_scatter", _scatter_np, lambda g, *p: apply(POOL_SCATTER, (g,), p))


def _argmax_vjp(ns, g, need, x, idx, nd, in_shape, unique, *rest):
    return (_dep(ns, ns.pool_scatter(g[0], idx, nd, in_shape, unique), x),)


def _dep(ns, gx, x):
    """Under create_graph, make ``gx`` depend on ``x`` with zero derivative: PyTorch's double
    backward of a pool gives ``zeros_like(self)`` for the input, not None."""
    return gx if ns is NP else gx + ns.dep_zero(x)


def _argmax_jvp(ns, tangents, primals, outs, idx, nd, in_shape, unique, *rest):
    return (ns.pool_gather(tangents[0], idx, nd, in_shape, unique), None)


def _argmax_op(name: str, node: str) -> Op:
    """A pool returning (values, indices); params start (idx, nd, in_shape, unique). The input
    is saved as well (its formula needs only the indices), as PyTorch saves it: modifying it in
    place before backward is the same error, and so is modifying the indices."""
    op = Op(name, None, _argmax_vjp, _argmax_jvp, saves=(0,), n_out=2, diff_out=(0,),
            node=node)
    return save_indices(op, ("self", "result1"))


MAX_POOL2D = _argmax_op("max_pool2d", "MaxPool2DWithIndicesBackward0")
MAX_POOL3D = _argmax_op("max_pool3d", "MaxPool3DWithIndicesBackward0")
ADAPTIVE_MAX2D = _argmax_op("adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0")
ADAPTIVE_MAX3D = _argmax_op("adaptive_max_pool3d", "AdaptiveMaxPool3DBackward0")
FRACTIONAL2D = _argmax_op("fractional_max_pool2d", "FractionalMaxPool2DBackward0")
FRACTIONAL3D = _argmax_op("fractional_max_pool3d", "FractionalMaxPool3DBackward0")


def _run_argmax(op: Op, x: Tensor, nd: int, fwd, unique: bool, *args) -> tuple:
    """Compute (values, indices) with ``fwd`` on the data and record ``op``."""
    d = x._data
    vals, idx = fwd(d, *args)
    outs = _L.in_suggested_format(d, (vals, idx))   # PyTorch's output memory format
    params = (idx, nd, tuple(d.shape), unique)
    v, i = wrap_outputs(op, (x,), params, outs)
    return v, i


# ---- window sweeps ----------------------------------------------------------------------------

def _max_sweep(views, shape):
    """Maximum over the candidate value arrays ``views()`` and the number of the candidate
    each maximum came from, by PyTorch's rule ``val > max or isnan(val)``: the first maximum
    wins; a NaN wins over everything, the last NaN last. The numbers come from equality with
    the maximum, not from a masked write per candidate (several times slower in NumPy): the
    largest of (K - k) over the equal candidates k marks the first one."""
    vs = list(views())
    n = len(vs)
    if n > 1 and vs[0].shape == vs[1].shape == tuple(shape):
        best = np.maximum(vs[0], vs[1])   # NaN-propagating, so the values are right already
    else:
        best = np.array(np.broadcast_to(vs[0], shape))
        if n > 1:
            np.maximum(best, vs[1], out=best)
    for v in vs[2:]:
        np.maximum(best, v, out=best)
    if n < 256:
        # the first equal candidate's number = how many leading candidates differ: a running
        # product of the "differs" masks, summed (bytes throughout, no casts)
        lead = np.not_equal(vs[0], best).view(np.uint8)
        pos = lead.copy()
        ne = np.empty_like(lead)
        for v in vs[1:-1]:
            np.not_equal(v, best, out=ne.view(np.bool_))
            np.multiply(lead, ne, out=lead)
            np.add(pos, lead, out=pos)
    else:
        dt = np.int32
        eq = np.equal(vs[0], best)
        acc = np.multiply(eq, dt(n), dtype=dt)
        term = np.empty_like(acc)
        for k, v in enumerate(vs[1:], 1):
            np.equal(v, best, out=eq)
            np.multiply(eq, dt(n - k), out=term)
            np.maximum(acc, term, out=acc)
        pos = np.subtract(dt(n), acc, out=acc)
    if (best.dtype.kind == "f" or best.dtype.name == "bfloat16") and np.isnan(best).any():
        for k, v in enumerate(vs):
            np.copyto(pos, k, where=np.isnan(v))
    return best, pos


def _pick(pos, flats, shape):
    """Flat indices from candidate numbers ``pos`` and each candidate's index array."""
    table = np.stack([np.broadcast_to(f, shape) for f in flats])
    return np.take_along_axis(table, pos[None].astype(np.intp), 0)[0]


def _fill_min(dt):
    if dt.kind in "iu":
        return np.iinfo(dt).min
    return -np.inf


def _window_views(xp, ks, stride, dil, outs):
    """The slice of padded ``xp`` under every kernel position, in row-major kernel order."""
    for kk in itertools.product(*(range(k) for k in ks)):
        yield xp[(Ellipsis,) + tuple(slice(k * d, k * d + (o - 1) * s + 1, s)
                                     for k, d, o, s in zip(kk, dil, outs, stride))]


def _tiles_fit(x, ks, stride, pad, dil, outs) -> bool:
    """Whether a 2-d max pool is a tiling: windows side by side (stride == kernel, no padding
    or dilation), all inside a nonempty input."""
    return (len(ks) == 2 and tuple(stride) == tuple(ks) and not any(pad)
            and all(d == 1 for d in dil) and math.prod(ks) > 1 and x.size > 0
            and math.prod(outs) > 0
            and all(o * k <= n for o, k, n in zip(outs, ks, x.shape[-2:])))


def _tile_views(x, ks, outs):
    """The candidates of a tiling (``_tiles_fit``) in row-major kernel order, each copied out
    contiguous by one transposing copy: NumPy compares and maximises contiguous arrays several
    times faster than the strided slices of the input."""
    (k0, k1), (o0, o1) = ks, outs
    lead = x.shape[:-2]
    t = x[..., :o0 * k0, :o1 * k1].reshape(lead + (o0, k0, o1, k1))
    nl = len(lead)
    perm = (nl + 1, nl + 3) + tuple(range(nl)) + (nl, nl + 2)
    c = np.empty_like(x, shape=(k0, k1) + lead + (o0, o1))
    np.copyto(c, t.transpose(perm))
    return c.reshape((k0 * k1,) + lead + (o0, o1))


@meta_aware
def _maxpool_np(x, ks, stride, pad, dil, outs):
    """Max pooling of x (*lead, *S): values and per-plane flat indices (the window's start plus
    the winning kernel position's offset, from a small table)."""
    nd = len(ks)
    sp = x.shape[-nd:]
    lead = x.shape[:-nd]
    ps = tuple(math.prod(sp[i + 1:]) for i in range(nd))
    shape = lead + tuple(outs)
    if _tiles_fit(x, ks, stride, pad, dil, outs):
        best, pos = _max_sweep(lambda: iter(_tile_views(x, ks, outs)), shape)
    else:
        pads = tuple((p, (o - 1) * s + (k - 1) * d + 1 - n - p)
                     for n, k, s, p, d, o in zip(sp, ks, stride, pad, dil, outs))
        xp = pad_spatial(x.reshape((math.prod(lead), 1) + sp), pads, _fill_min(x.dtype)).reshape(
            lead + tuple(n + lo + hi for n, (lo, hi) in zip(sp, pads)))
        best, pos = _max_sweep(lambda: _window_views(xp, ks, stride, dil, outs), shape)
    offs = np.asarray([sum(k * d * p for k, d, p in zip(kk, dil, ps))
                       for kk in itertools.product(*(range(k) for k in ks))], dtype=np.int64)
    # the windows' starts as one small table over the output positions, added in one pass
    base = 0
    for i in range(nd):
        start = np.arange(outs[i], like=x) * stride[i] - pad[i]
        base = base + (start * ps[i]).reshape((-1,) + (1,) * (nd - 1 - i))
    idx = np.asarray(offs, like=x).take(pos)
    idx += base
    return best, idx


def _sum_sweep(xp, ks, stride, outs, dtype):
    acc = None
    for kk in itertools.product(*(range(k) for k in ks)):
        v = xp[(Ellipsis,) + tuple(slice(k, k + (o - 1) * s + 1, s)
                                   for k, o, s in zip(kk, outs, stride))]
        if acc is None:
            acc = v.astype(dtype, copy=True)
        else:
            acc += v
    return acc


def _trunc_div(a, b):
    """C's integer division (towards zero), as PyTorch's integer average pools divide."""
    q = a // b
    return q + ((q < 0) & (q * b != a))


def _avg_pads(sp, ks, stride, pad, outs):
    return tuple((p, (o - 1) * s + k - n - p) for n, k, s, p, o in zip(sp, ks, stride, pad, outs))


@meta_aware
def _avgpool_np(x, ks, stride, pad, outs, div, in_shape=None):
    """Average pooling of x (*lead, *S); ``div``: the divisor (a number or an array over the
    output positions)."""
    nd = len(ks)
    sp = x.shape[-nd:]
    lead = x.shape[:-nd]
    pads = _avg_pads(sp, ks, stride, pad, outs)
    xp = pad_spatial(x.reshape((math.prod(lead), 1) + sp), pads).reshape(
        lead + tuple(n + lo + hi for n, (lo, hi) in zip(sp, pads)))
    if x.dtype.kind in "iu":
        return _trunc_div(_sum_sweep(xp, ks, stride, outs, np.int64), div).astype(x.dtype)
    ct = np.float32 if x.dtype.itemsize == 2 else x.dtype
    s = _sum_sweep(xp, ks, stride, outs, ct)
    s /= div
    return s.astype(x.dtype, copy=False)


@meta_aware
def _avgpool_bwd_np(g, ks, stride, pad, outs, div, in_shape):
    """Adjoint of ``_avgpool_np``: each output's share spread back over its window."""
    nd = len(ks)
    sp = tuple(in_shape[-nd:])
    ct = np.float32 if g.dtype.itemsize == 2 else g.dtype
    gd = (g.astype(ct) / div).reshape((math.prod(in_shape[:-nd]), 1) + tuple(outs))
    cols = np.broadcast_to(gd.reshape(gd.shape[:2] + (1,) * nd + tuple(outs)),
                           gd.shape[:2] + tuple(ks) + tuple(outs))
    out = col2im(cols, sp, stride, (1,) * nd, _avg_pads(sp, ks, stride, pad, outs))
    return out.reshape(tuple(in_shape)).astype(g.dtype, copy=False)


def _avg_vjp(ns, g, need, x, *p):
    return (_dep(ns, ns.avg_pool_backward(g, *p), x),)


_AVG_NAMES = ("self", "kernel_size", "stride", "padding")
# the input is saved only for PyTorch's in-place check (the formula needs its shape alone)
AVG_POOL2D = Op("avg_pool2d", _avgpool_np, _avg_vjp, linear=True, node="AvgPool2DBackward0",
                saves=(0,), names=_AVG_NAMES)
AVG_POOL3D = Op("avg_pool3d", _avgpool_np, _avg_vjp, linear=True, node="AvgPool3DBackward0",
                saves=(0,), names=_AVG_NAMES)
AVG_POOL_BWD = Op("avg_pool_backward", _avgpool_bwd_np,
                  lambda ns, g, need, *p: (ns.avg_pool(g, *p),), linear=True,
                  node="AvgPoolBackwardBackward0")
ns_fn("avg_pool", _avgpool_np, lambda x, *p: apply(AVG_POOL2D, (x,), p))
ns_fn("avg_pool_backward", _avgpool_bwd_np, lambda g, *p: apply(AVG_POOL_BWD, (g,), p))


# ---- adaptive pools ---------------------------------------------------------------------------

def _adaptive_bounds(n: int, o: int, like):
    """PyTorch's adaptive windows: [floor(i * n / o), ceil((i + 1) * n / o))."""
    i = np.arange(o, like=like)
    return (i * n) // o, -((-(i + 1) * n) // o)


def _avg_matrix(n: int, o: int, like) -> np.ndarray:
    start, end = _adaptive_bounds(n, o, like)
    j = np.arange(n, like=like)
    m = (j >= start[:, None]) & (j < end[:, None])
    return m / (end - start)[:, None]


@meta_aware
def _apply_mats(x, mats, transpose: bool):
    """Multiply each of the last len(mats) axes of x by its matrix (or its transpose)."""
    nd = len(mats)
    ct = np.float32 if x.dtype.itemsize == 2 else x.dtype
    y = x.astype(ct, copy=False)
    for i, m in enumerate(mats):
        m = (m.T if transpose else m).astype(ct, copy=False)
        ax = y.ndim - nd + i
        if ax == y.ndim - 1:
            y = np.matmul(y, m.T)
        else:
            y = np.moveaxis(np.matmul(m, np.moveaxis(y, ax, -2)), -2, ax)
    return np.ascontiguousarray(y).astype(x.dtype, copy=False)


ADAPTIVE_AVG_T = Op("adaptive_avg_pool_backward",
                    lambda g, mats: _apply_mats(g, mats, True),
                    lambda ns, g, need, mats: (ns.adaptive_avg(g, mats),), linear=True,
                    node="AdaptiveAvgPoolBackwardBackward0")
ns_fn("adaptive_avg", lambda x, mats: _apply_mats(x, mats, False),
      lambda x, mats: apply(ADAPTIVE_AVG2D, (x,), (mats,)))
ns_fn("adaptive_avg_t", lambda g, mats: _apply_mats(g, mats, True),
      lambda g, mats: apply(ADAPTIVE_AVG_T, (g,), (mats,)))


def _adaptive_avg_op(node: str) -> Op:
    return Op(node, lambda x, mats: _apply_mats(x, mats, False),
              lambda ns, g, need, x, mats: (_dep(ns, ns.adaptive_avg_t(g, mats), x),),
              linear=True,
              node=node, saves=(0,), names=("self",))


ADAPTIVE_AVG2D = _adaptive_avg_op("AdaptiveAvgPool2DBackward0")
ADAPTIVE_AVG3D = _adaptive_avg_op("AdaptiveAvgPool3DBackward0")


@meta_aware
def _adaptive_max_np(x, outs):
    nd = len(outs)
    sp = x.shape[-nd:]
    lead = x.shape[:-nd]
    shape = lead + tuple(outs)
    if all(o and n % o == 0 for n, o in zip(sp, outs)):
        ks = tuple(n // o for n, o in zip(sp, outs))
        return _maxpool_np(x, ks, ks, (0,) * nd, (1,) * nd, tuple(outs))
    bounds = [_adaptive_bounds(n, o, x) for n, o in zip(sp, outs)]
    longest = [int((e - s).max()) if len(s) else 0 for s, e in bounds]
    ps = tuple(math.prod(sp[i + 1:]) for i in range(nd))

    keys = []
    for js in itertools.product(*(range(m) for m in longest)):
        pos = [np.minimum(s + j, e - 1) for (s, e), j in zip(bounds, js)]
        keys.append(tuple(p.reshape((-1,) + (1,) * (nd - 1 - i)) for i, p in enumerate(pos)))
    if 0 in shape:
        return np.zeros_like(x, shape=shape), np.zeros_like(x, dtype=np.int64, shape=shape)
    best, pos = _max_sweep(lambda: (x[(Ellipsis,) + key] for key in keys), shape)
    flats = [sum(k * s for k, s in zip(key, ps)) for key in keys]
    return best, _pick(pos, flats, shape)


# ---- fractional max pool ----------------------------------------------------------------------

def _intervals(u, n: int, o: int, k: int):
    """PyTorch's pseudo-random window starts for one dim: ``u`` (planes,) samples in [0, 1),
    computed in the samples' precision."""
    dt = u.dtype
    starts = np.empty_like(u, dtype=np.int64, shape=u.shape + (o,))
    if o > 1:
        alpha = dt.type(n - k) / dt.type(o - 1)
        i = np.arange(o - 1, like=u).astype(dt)
        a = ((i + u[:, None]) * alpha).astype(np.int64)
        starts[:, :-1] = a - (u * alpha).astype(np.int64)[:, None]
    if o > 0:
        starts[:, -1] = n - k
    return starts


@meta_aware
def _fractional_np(x, ks, outs, samples):
    """Fractional max pooling of x (N, C, *S) with samples (N', C, nd)."""
    nd = len(ks)
    n, c = x.shape[:2]
    sp = x.shape[2:]
    u = samples[:n].reshape(n * c, nd)
    # PyTorch's sample order: (W, H) for 2-d pools, (T, H, W) for 3-d ones
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_intervals(u[:, order[i]], sp[i], outs[i], ks[i]) for i in range(nd)]
    ps = tuple(math.prod(sp[i + 1:]) for i in range(nd))
    shape = (n * c,) + tuple(outs)
    planes = x.reshape(n * c, math.prod(sp))

    def expand(a, i):
        return a.reshape((n * c,) + (1,) * i + (outs[i],) + (1,) * (nd - 1 - i))

    base = sum(expand(s, i) * ps[i] for i, s in enumerate(starts))

    flats = [np.broadcast_to(base + sum(k * s for k, s in zip(kk, ps)), shape)
             for kk in itertools.product(*(range(k) for k in ks))]

    def views():
        for f in flats:
            yield np.take_along_axis(planes, f.reshape(n * c, math.prod(outs)),
                                     axis=1).reshape(shape)

    if math.prod(ks) == 0 or 0 in shape:
        best = np.full_like(x, -np.inf, shape=shape)
        idx = np.array(np.broadcast_to(base, shape))
    else:
        best, pos = _max_sweep(views, shape)
        idx = _pick(pos, flats, shape)
    return best.reshape((n, c) + tuple(outs)), idx.reshape((n, c) + tuple(outs))


# ---- argument helpers -------------------------------------------------------------------------

def _c_div(a: int, b: int) -> int:
    """C's integer division (towards zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _pool_out(n, k, pad, s, d, ceil) -> int:
    """PyTorch's pooling_output_shape (with its checks)."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > _c_div((k - 1) * d + 1, 2):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={k} and dilation={d}")
    o = (n + 2 * pad - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= n + pad:
        o -= 1
    return o


def _seq(v, n: int, fn: str, name: str, msg: str, allow_none: bool = False) -> tuple | None:
    """A pooling size argument: an int or a tuple of 1 or ``n`` ints (``msg`` otherwise)."""
    if v is None and allow_none:
        return None
    t = _int_list(v, 1, fn, name)
    if len(t) == 1:
        return t * n
    if allow_none and not t:
        return None
    if len(t) != n:
        raise RuntimeError(msg)
    return t


_DIMNAMES = {2: ("H", "W"), 3: ("T", "H", "W")}


def _named(prefix: str, vals, nd: int) -> str:
    return " ".join(f"{prefix}{n}: {v}" for n, v in zip(_DIMNAMES[nd], vals))


def _shape_check(x: Tensor, ks, stride, pad, dil, outs, fn3d: str | None,
                 avg3d: bool = False) -> None:
    """PyTorch's pool2d_shape_check / pool3d_shape_check."""
    nd = len(ks)
    if any(k <= 0 for k in ks):
        raise RuntimeError("kernel size should be greater than zero, but got " +
                           _named("k", ks, nd))
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should be greater than zero, but got " +
                           _named("d", stride, nd))
    if any(d <= 0 for d in dil):
        raise RuntimeError("dilation should be greater than zero, but got " +
                           _named("dilation", dil, nd))
    s = tuple(x.shape)
    if nd == 2:
        ok = (x.ndim == 3 and s[0] and s[1] and s[2]) or (x.ndim == 4 and s[1] and s[2] and s[3])
        if not ok:
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                               f"size for input, but got:{_fmt(s)}")
        if any(k // 2 < p for k, p in zip(ks, pad)):
            raise RuntimeError(
                "pad should be smaller than or equal to half of kernel size, but got "
                f"padW = {pad[1]}, padH = {pad[0]}, kW = {ks[1]}, kH = {ks[0]}")
    else:
        for v in s[x.ndim - 4:]:
            if v == 0:
                raise RuntimeError(
                    f"{fn3d}(): Expected input's non-batch dimensions to have positive length, "
                    f"but input has a shape of {_fmt(s)} and non-batch dimension 0 has length "
                    "zero!")
        if any(k // 2 < p for k, p in zip(ks, pad)):
            raise RuntimeError(
                f"pad should be smaller than or equal to half of kernel size, but got kT: "
                f"{ks[0]} kW: {ks[2]} kH: {ks[1]} padT: {pad[0]} padW: {pad[2]} padH: {pad[1]}")
        if avg3d and any(n < k for n, k in zip(s[-3:], ks)):
            raise RuntimeError(f"input image (T: {s[-3]} H: {s[-2]} W: {s[-1]}) smaller than "
                               f"kernel size (kT: {ks[0]} kH: {ks[1]} kW: {ks[2]})")
    if any(o < 1 for o in outs):
        c = s[-nd - 1]
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, (c,) + s[-nd:]))}). Calculated output size: "
            f"({'x'.join(map(str, (c,) + tuple(outs)))}). Output size is too small")


def _dim_error(x: Tensor, dim: int) -> IndexError:
    """PyTorch's error for reading size(dim) of a tensor with too few dims."""
    if x.ndim == 0:
        return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    n = x.ndim
    return IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but "
                      f"got {dim})")


def _not_impl(kernel: str, x: Tensor):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_tname(x.dtype)}\'')


def _is_float(x: Tensor) -> bool:
    return x.dtype.is_floating_point


# ---- max pooling ------------------------------------------------------------------------------

def _max_pool_nd(nd: int, input: Tensor, kernel_size, stride, padding, dilation,
                 ceil_mode: bool) -> tuple:
    """max_pool{2,3}d_with_indices: checks in PyTorch's order, then the op."""
    fn = f"max_pool{nd}d"
    word = "two" if nd == 2 else "three"
    ks = _seq(kernel_size, nd, fn, "kernel_size",
              f"{fn}: kernel_size must either be a single int, or a tuple of {word} ints")
    st = _seq(stride, nd, fn, "stride",
              f"{fn}: stride must either be omitted, a single int, or a tuple of {word} ints",
              allow_none=True)
    if st is None:
        st = ks
    pad = _seq(padding, nd, fn, "padding",
               f"{fn}: padding must either be a single int, or a tuple of {word} ints")
    dil = _seq(dilation, nd, fn, "dilation",
               f"{fn}: dilation must be either a single int, or a tuple of {word} ints")
    x = input
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           "input")
    sp = tuple(x.shape[-nd:])
    outs = tuple(_pool_out(sp[i], ks[i], pad[i], st[i], dil[i], ceil_mode) for i in range(nd))
    _shape_check(x, ks, st, pad, dil, outs, "max_pool3d_with_indices_out_cpu_template")
    if x.dtype is D.bool or x.dtype.is_complex:
        raise _not_impl(fn, x)
    unique = all(s >= (k - 1) * d + 1 for k, s, d in zip(ks, st, dil))
    return _run_argmax(MAX_POOL2D if nd == 2 else MAX_POOL3D, x, nd, _maxpool_np, unique, ks,
                       st, pad, dil, outs)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple:
    """``F.max_pool2d_with_indices``: (values, flat index of each maximum in its plane)."""
    return _max_pool_nd(2, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple:
    """``F.max_pool3d_with_indices``."""
    return _max_pool_nd(3, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """``F.max_pool2d``: NaN wins a window, ties go to the first; node
    ``MaxPool2DWithIndicesBackward0``; ``return_indices`` adds the indices."""
    r = _max_pool_nd(2, input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """``F.max_pool3d``."""
    r = _max_pool_nd(3, input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def _one(v, fn: str, name: str) -> tuple:
    """An ``int[1]`` argument of a 1-d pool, checked as PyTorch's parser does."""
    t = _int_list(v, 1, fn, name)
    if len(t) != 1:
        raise RuntimeError(f"{fn}() argument '{name}' should contain one int (got {len(t)})")
    return t


def _check_2_to_3(x: Tensor, fn: str) -> None:
    if x.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {fn})")


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple:
    """``F.max_pool1d_with_indices``: the 2-d pool over a unit height, as PyTorch runs it."""
    fn = "max_pool1d"
    ks = _one(kernel_size, fn, "kernel_size")
    st = ks if stride is None or (isinstance(stride, (tuple, list)) and not stride) else \
        _one(stride, fn, "stride")
    pad = _one(padding, fn, "padding")
    dil = _one(dilation, fn, "dilation")
    _check_2_to_3(input, fn)
    v, i = _max_pool_nd(2, input.unsqueeze(-2), (1,) + ks, (1,) + st, (0,) + pad,
                        (1,) + dil, ceil_mode)
    return v.squeeze(-2), i.squeeze(-2)


def _check_max_pool1d(x: Tensor, ks, st, pad, dil, ceil_mode: bool) -> None:
    """The checks of PyTorch's own max_pool1d (the path without indices)."""
    fn = "max_pool1d()"
    s = tuple(x.shape)
    if not ((x.ndim == 2 and s[0] and s[1]) or (x.ndim == 3 and s[1] and s[2])):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got:{_fmt(s)}")
    for name, v, what in (("kernel_size", ks, "an int, list of ints or tuple of ints"),
                          ("stride", st, "None, an int, list of ints, or tuple of ints"),
                          ("padding", pad, "an int, list of ints, or tuple of ints"),
                          ("dilation", dil, "an int, list of ints or tuple of ints")):
        if len(v) != 1:
            raise RuntimeError(f"{fn} {name} must be {what} of size 1 but got size {len(v)}")
    k, s_, p, d = ks[0], st[0], pad[0], dil[0]
    if k <= 0:
        raise RuntimeError(f"{fn} kernel_size must be greater than zero, but got {k}")
    if s_ <= 0:
        raise RuntimeError(f"{fn} stride must be greater than zero, but got {s_}")
    if p < 0:
        raise RuntimeError(f"{fn} padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"{fn} padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"{fn} dilation must be greater than zero, but got {d}")
    o = (x.shape[-1] + 2 * p - d * (k - 1) - 1 + (s_ - 1 if ceil_mode else 0)) // s_ + 1
    if ceil_mode and (o - 1) * s_ >= x.shape[-1] + p:
        o -= 1
    if o <= 0:
        raise RuntimeError(f"{fn} Invalid computed output size: {o}")
    if not _is_float(x):
        raise _not_impl("max_pool1d_impl", x)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """``F.max_pool1d`` (with ``return_indices``: ``max_pool1d_with_indices``)."""
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    seq = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,)  # noqa: E731
    ks = seq(kernel_size)
    st = ks if stride is None or (isinstance(stride, (tuple, list)) and not stride) else \
        seq(stride)
    _check_max_pool1d(input, ks, st, seq(padding), seq(dilation), ceil_mode)
    return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


# ---- average pooling --------------------------------------------------------------------------

def _divisor(sp, ks, stride, pad, outs, count_include_pad, override, like):
    """Per-output divisors: the override, or the window's size within the padded input
    (count_include_pad) or within the input; separable, so an outer product of per-dim counts."""
    if override is not None:
        return override
    div = 1
    nd = len(ks)
    for i in range(nd):
        start = np.arange(outs[i], like=like) * stride[i] - pad[i]
        end = np.minimum(start + ks[i], sp[i] + pad[i])
        cnt = end - start if count_include_pad else (
            np.minimum(end, sp[i]) - np.maximum(start, 0))
        div = div * cnt.reshape((-1,) + (1,) * (nd - 1 - i))
    return div


def _avg_pool_nd(nd: int, input: Tensor, kernel_size, stride, padding, ceil_mode: bool,
                 count_include_pad: bool, divisor_override) -> Tensor:
    fn = f"avg_pool{nd}d"
    if nd == 2:
        msgs = (f"{fn}: kernel_size must either be a single int, or a tuple of two ints",
                f"{fn}: stride must either be omitted, a single int, or a tuple of two ints",
                f"{fn}: padding must either be a single int, or a tuple of two ints")
    else:
        msgs = (f"{fn}: kernel_size must be a single int, or a tuple of three ints",
                f"{fn}: stride must be omitted, a single int, or a tuple of three ints",
                f"{fn}: padding must be a single int, or a tuple of three ints")
    ks = _seq(kernel_size, nd, fn, "kernel_size", msgs[0])
    st = _seq(stride, nd, fn, "stride", msgs[1], allow_none=True)
    if st is None:
        st = ks
    pad = _seq(padding, nd, fn, "padding", msgs[2])
    if divisor_override is not None and int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")
    x = input
    if nd == 3 and x.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if x.ndim < nd + 1:
        raise _dim_error(x, -nd - 1)
    sp = tuple(x.shape[-nd:])
    outs = tuple(_pool_out(sp[i], ks[i], pad[i], st[i], 1, ceil_mode) for i in range(nd))
    _shape_check(x, ks, st, pad, (1,) * nd, outs, "avg_pool3d", avg3d=True)
    ok = x.dtype in (D.float32, D.float64, D.bfloat16, D.int64) or (
        nd == 2 and x.dtype is D.float16)
    if not ok:
        raise _not_impl("avg_pool2d" if nd == 2 else "avg_pool3d_out_frame", x)
    div = _divisor(sp, ks, st, pad, outs, count_include_pad, divisor_override, x._data)
    return apply(AVG_POOL2D if nd == 2 else AVG_POOL3D, (x,),
                 (ks, st, pad, outs, div, tuple(x.shape)))


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """``F.avg_pool2d``: node ``AvgPool2DBackward0``."""
    return _avg_pool_nd(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """``F.avg_pool3d``: node ``AvgPool3DBackward0``."""
    return _avg_pool_nd(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """``F.avg_pool1d``: the 2-d pool over a unit height."""
    fn = "avg_pool1d"
    ks = _one(kernel_size, fn, "kernel_size")
    st = ks if stride is None or (isinstance(stride, (tuple, list)) and not stride) else \
        _one(stride, fn, "stride")
    pad = _one(padding, fn, "padding")
    _check_2_to_3(input, fn)
    out = _avg_pool_nd(2, input.unsqueeze(-2), (1,) + ks, (1,) + st, (0,) + pad, ceil_mode,
                       count_include_pad, None)
    return out.squeeze(-2)


# ---- adaptive pooling -------------------------------------------------------------------------

def _adaptive_size(output_size, x: Tensor, nd: int):
    """``_list_with_default``: None entries take the input's size (an int passes through)."""
    if isinstance(output_size, (int, np.integer)) and not isinstance(output_size, bool):
        return int(output_size)
    out = list(output_size)
    if x.ndim <= len(out):
        raise ValueError(f"Input dimension should be at least {len(out) + 1}")
    return [x.shape[x.ndim - len(out) + i] if v is None else v for i, v in enumerate(out)]


def _sizes(output_size, nd: int, fn: str, msg: str) -> tuple:
    t = _int_list(output_size, nd, fn, "output_size")
    if len(t) != nd:
        raise RuntimeError(msg)
    return t


def _brace(t, nd: int) -> str:
    """PyTorch's rendering of an output size in this message ({a, b} and {a, b,c})."""
    return "{" + ", ".join(map(str, t[:2])) + "".join(f",{v}" for v in t[2:]) + "}"


def _adaptive_avg_nd(nd: int, x: Tensor, outs: tuple) -> Tensor:
    fn = f"adaptive_avg_pool{nd}d"
    if any(o < 0 for o in outs):
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 but "
                           f"received {_brace(outs, nd)}")
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{_fmt(x.shape)}")
    first = 1 if nd == 3 else x.ndim - nd
    for i in range(first, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {_fmt(x.shape)} with dimension {i} being empty")
    if not _is_float(x) or x.dtype is D.float16 and nd == 3:
        raise _not_impl(fn if nd == 2 else f"{fn}_cpu", x)
    if all(o == 1 for o in outs):
        # PyTorch computes a global average pool as a mean
        return x.mean(tuple(range(-nd, 0)), keepdim=True)
    mats = tuple(_avg_matrix(n, o, x._data) for n, o in zip(x.shape[-nd:], outs))
    return apply(ADAPTIVE_AVG2D if nd == 2 else ADAPTIVE_AVG3D, (x,), (mats,))


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """``F.adaptive_avg_pool2d``: windows [floor(i*n/o), ceil((i+1)*n/o)); None keeps a size."""
    outs = _adaptive_size(output_size, input, 2)
    return _adaptive_avg_nd(2, input, _sizes(outs, 2, "adaptive_avg_pool2d",
                                             "adaptive_avg_pool2d: output_size must be 2"))


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """``F.adaptive_avg_pool3d``."""
    outs = _adaptive_size(output_size, input, 3)
    return _adaptive_avg_nd(3, input, _sizes(outs, 3, "adaptive_avg_pool3d",
                                             "adaptive_avg_pool3d: output_size must be 3"))


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """``F.adaptive_avg_pool1d``: the 2-d pool over a unit height."""
    fn = "adaptive_avg_pool1d"
    outs = _one(output_size, fn, "output_size")
    _check_2_to_3(input, fn)
    return _adaptive_avg_nd(2, input.unsqueeze(-2), (1,) + outs).squeeze(-2)


def _adaptive_max_nd(nd: int, x: Tensor, outs: tuple, fn: str | None = None) -> tuple:
    fn = fn or f"adaptive_max_pool{nd}d"
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{_fmt(x.shape)}")
    for i in range(1, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {_fmt(x.shape)} with dimension {i} being empty")
    if any(o < 0 for o in outs):
        shape = tuple(x.shape[:-nd]) + tuple(outs)
        neg = next(o for o in outs if o < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {neg}: "
                           f"{_fmt(shape)}")
    if not _is_float(x):
        raise _not_impl(f"adaptive_max_pool{nd}d" + ("_cpu" if nd == 3 else ""), x)
    sp = tuple(x.shape[-nd:])
    unique = all(o and n % o == 0 for n, o in zip(sp, outs))
    return _run_argmax(ADAPTIVE_MAX2D if nd == 2 else ADAPTIVE_MAX3D, x, nd, _adaptive_max_np,
                       unique, tuple(outs))


def adaptive_max_pool2d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple:
    """``F.adaptive_max_pool2d_with_indices``: (values, flat indices in each plane)."""
    outs = _adaptive_size(output_size, input, 2)
    outs = _sizes(outs, 2, "adaptive_max_pool2d",
                  "adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    return _adaptive_max_nd(2, input, outs)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple:
    """``F.adaptive_max_pool3d_with_indices``."""
    outs = _adaptive_size(output_size, input, 3)
    outs = _sizes(outs, 3, "adaptive_max_pool3d",
                  "adaptive_max_pool3d(): internal error: output_size.size() must be 3")
    return _adaptive_max_nd(3, input, outs)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple:
    """``F.adaptive_max_pool1d_with_indices``: the 2-d pool over a unit height."""
    fn = "adaptive_max_pool1d"
    outs = _one(output_size, fn, "output_size")
    _check_2_to_3(input, fn)
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {_fmt(input.shape)} with dimension {i} being empty")
    v, i = _adaptive_max_nd(2, input.unsqueeze(-2), (1,) + outs)
    return v.squeeze(-2), i.squeeze(-2)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """``F.adaptive_max_pool1d``."""
    r = adaptive_max_pool1d_with_indices(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """``F.adaptive_max_pool2d``: node ``AdaptiveMaxPool2DBackward0``."""
    r = adaptive_max_pool2d_with_indices(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """``F.adaptive_max_pool3d``."""
    r = adaptive_max_pool3d_with_indices(input, output_size)
    return r if return_indices else r[0]


# ---- fractional max pooling -------------------------------------------------------------------

_FRAC_DIMS = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional(nd: int, input: Tensor, kernel_size, output_size, output_ratio,
                _random_samples) -> tuple:
    fn = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(f"{fn} requires output_ratio to either be a single Int or tuple of "
                             "Ints.")
        r = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else \
            (output_ratio,) * nd
        output_size = [int(input.shape[i - nd] * r[i]) for i in range(nd)]
    x = input
    if _random_samples is None:
        from .random import rand
        if x.ndim < nd + 1:
            raise _dim_error(x, -nd - 1)
        n = 1 if x.ndim == nd + 1 else x.shape[0]
        _random_samples = rand(n, x.shape[-nd - 1], nd, dtype=x.dtype)
    msg_k = f"{fn}: kernel_size must either be a single Int or tuple of Ints"
    msg_o = f"{fn}: output_size must either be a single Int or tuple of Ints"
    ks = _seq(kernel_size, nd, fn, "kernel_size", msg_k)
    outs = _seq(output_size, nd, fn, "output_size", msg_o)
    return _fractional_checked(nd, x, ks, outs, _random_samples)


def _fractional_checked(nd, x: Tensor, ks, outs, samples: Tensor) -> tuple:
    fn = f"fractional_max_pool{nd}d"
    where = f"{fn}()" if nd == 2 else f"{fn}_out()"
    if x.ndim < nd + 1:
        raise _dim_error(x, -nd - 1)
    if samples.dtype is not x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    batched = x.ndim == nd + 2
    n = x.shape[0] if batched else 1
    c = x.shape[-nd - 1]
    if samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{_fmt(x.shape)}")
    for i in range(1, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(
                f"{where}: Expected input to have non-zero size for non-batch dimensions, but "
                f"got{_fmt(x.shape)} with dimension {i} being empty.")
    sp = tuple(x.shape[-nd:])
    for name, k, o, s in zip(_FRAC_DIMS[nd], ks, outs, sp):
        if o + k - 1 > s:
            raise RuntimeError(f"{where}: pool {name} {k} too large relative to input {name} "
                               f"{s}")
    if not _is_float(x):
        raise _not_impl("check_uniform_bounds", x)
    xb = x if batched else x.unsqueeze(0)
    sd = samples._data
    v, i = _run_argmax(FRACTIONAL2D if nd == 2 else FRACTIONAL3D, xb, nd,
                       lambda d, *a: _fractional_np(d, *a), False, ks, outs, sd)
    if not batched:
        v, i = _unbatch(v, FRACTIONAL2D if nd == 2 else FRACTIONAL3D), i.squeeze(0)
    return v, i


def _unbatch(v: Tensor, op: Op) -> Tensor:
    """Drop the batch axis a pool added for an unbatched input, keeping the pool's own node (as
    PyTorch's kernels handle unbatched inputs themselves)."""
    return v.squeeze(0)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    """``F.fractional_max_pool2d_with_indices``: windows at pseudo-random starts drawn from
    ``_random_samples`` (N, C, 2) in [0, 1) (drawn with ``rand`` when not given)."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    """``F.fractional_max_pool3d_with_indices`` (samples (N, C, 3))."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """``F.fractional_max_pool2d``: node ``FractionalMaxPool2DBackward0``."""
    r = _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return r if return_indices else r[0]


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """``F.fractional_max_pool3d``."""
    r = _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return r if return_indices else r[0]


# ---- max_unpool -------------------------------------------------------------------------------

def _unpool_vjp(ns, g, need, idx, nd, out_shape, unique):
    return (ns.pool_gather(g, idx, nd, out_shape, unique),)


MAX_UNPOOL2D = Op("max_unpool2d",   # (PyTorch's 2-D kernel keeps channels_last; 3-D does not)
                  lambda g, *rest: _L.in_suggested_format(g, _scatter_np(g, *rest)), _unpool_vjp,
                  linear=True,
                  node="MaxUnpool2DBackward0", names=("indices",))
MAX_UNPOOL3D = Op("max_unpool3d", _scatter_np, _unpool_vjp, linear=True,
                  node="MaxUnpool3DBackward0", names=("indices",))


def _unpool_output_size(x: Tensor, ks, stride, pad, output_size) -> list:
    """PyTorch's ``_unpool_output_size`` (the default size, or a checked ``output_size``)."""
    nd = len(ks)
    default = [(x.shape[x.ndim - nd + d] - 1) * stride[d] + ks[d] - 2 * pad[d]
               for d in range(nd)]
    if output_size is None:
        ret = default
    else:
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                                 f"{lo} and {hi})")
        ret = output_size
    for d in range(nd):
        if ret[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={ret[d]}")
    return list(ret)


def _max_unpool_nd(nd: int, x: Tensor, indices: Tensor, outs, stride, pad,
                   label: str) -> Tensor:
    """max_unpool{2,3}d: ``x`` written at ``indices`` of zero planes of size ``outs``."""
    fn = f"max_unpooling{nd}d"
    alert_not_deterministic(f"{fn}_forward_out")   # (first in PyTorch's kernel)
    if indices.dtype is not D.int64:
        raise RuntimeError("elements in indices should be type int64" +
                           (f" but got: {_tname(indices.dtype)}" if nd == 2 else ""))
    if tuple(indices.shape) != tuple(x.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_fmt(x.shape)}) but got indices tensor with shape: "
                           f"{_fmt(indices.shape)}")
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to {fn} should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
                           f"tensor with {x.ndim} dimensions.")
    for i in range(1, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(
                f"{fn}_forward_out_cpu(): Expected input to have non-zero size for non-batch "
                f"dimensions, but got {_fmt(x.shape)} with dimension {i} being empty.")
    if nd == 3 and any(s <= 0 for s in stride):
        raise RuntimeError(f"strides should be greater than zero, but got stride: {_fmt(stride)}")
    if not _is_float(x):
        raise _not_impl(f"max_unpool{nd}d", x)
    idx = indices._data
    size = math.prod(outs)
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx[(idx < 0) | (idx >= size)].reshape(-1)[0]
        raise RuntimeError(f"Found an invalid max index: {int(bad)} (output volumes are of size "
                           f"{label})")
    out_shape = tuple(x.shape[:-nd]) + tuple(outs)
    return apply(MAX_UNPOOL2D if nd == 2 else MAX_UNPOOL3D, (x,), (idx, nd, out_shape, True))


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """``F.max_unpool2d``: the partial inverse of max_pool2d (zeros but at ``indices``)."""
    ks = _int_list(kernel_size, 2, "max_unpool2d", "kernel_size")
    st = ks if stride is None else _int_list(stride, 2, "max_unpool2d", "stride")
    pad = _int_list(padding, 2, "max_unpool2d", "padding")
    outs = _unpool_output_size(input, ks, st, pad, output_size)
    return _max_unpool_nd(2, input, indices, outs, st, pad, "x".join(map(str, outs)))


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """``F.max_unpool3d``."""
    ks = _int_list(kernel_size, 3, "max_unpool3d", "kernel_size")
    st = ks if stride is None else _int_list(stride, 3, "max_unpool3d", "stride")
    pad = _int_list(padding, 3, "max_unpool3d", "padding")
    outs = _unpool_output_size(input, ks, st, pad, output_size)
    return _max_unpool_nd(3, input, indices, outs, st, pad, "x".join(map(str, outs)))


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """``F.max_unpool1d``: max_unpool2d over a unit width, as PyTorch runs it."""
    ks = _int_list(kernel_size, 1, "max_unpool1d", "kernel_size")
    st = ks if stride is None else _int_list(stride, 1, "max_unpool1d", "stride")
    pad = _int_list(padding, 1, "max_unpool1d", "padding")
    outs = _unpool_output_size(input, ks, st, pad, output_size) + [1]
    out = _max_unpool_nd(2, input.unsqueeze(-1), indices.unsqueeze(-1), outs, st + (1,),
                         pad + (0,), "x".join(map(str, outs)))
    return out.squeeze(-1)


# ---- power-average pooling --------------------------------------------------------------------

def _lp_pool(nd: int, input: Tensor, norm_type, kernel_size, stride, ceil_mode) -> Tensor:
    """``F.lp_pool{nd}d``, composed as PyTorch composes it: (sum of x**p over each window)
    ** (1/p), through avg_pool times the window size (max_pool for p = +-inf)."""
    from .pointwise import abs as _abs
    from .pointwise import relu, sign
    pools = {1: (max_pool1d, avg_pool1d), 2: (max_pool2d, avg_pool2d),
             3: (max_pool3d, avg_pool3d)}
    mp, ap = pools[nd]
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        if norm_type > 0:
            return mp(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -mp(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if nd == 1:
        size = kernel_size
    else:
        ks = _int_list(kernel_size, nd, f"lp_pool{nd}d", "kernel_size")
        size = math.prod(ks)
    if stride is not None:
        out = ap(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = ap(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (sign(out) * relu(_abs(out))).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type, kernel_size: int, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """``F.lp_pool1d``."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """``F.lp_pool2d``."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """``F.lp_pool3d``."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)
