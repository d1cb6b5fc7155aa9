"""nn.functional: grid_sample and affine_grid.

``grid_sample`` is one op (``GridSampler2DBackward0`` / ``GridSampler3DBackward0``). Its output
is a sum over taps (the 2**k corners of bilinear/trilinear, the 16 of bicubic, the one of
nearest) of ``weight(t) * input[tap]``, where ``t`` is the fractional part of the source
coordinate. The source coordinate is PyTorch's unnormalised, clipped or reflected grid value:
a piecewise-linear function of the grid, represented by its value and slope computed on the
data (``ns.plin`` turns that into ``slope * grid + constant`` on ember tensors), so the VJP
and JVP below, written with ``ns`` helpers, are themselves differentiable.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np

from .._tensor import Tensor
from ._registry import EM, NP, Op, apply, ns_fn
from .nn_sampling import _shape_str, like, on_meta

__all__ = ["affine_grid", "grid_sample"]


# ---- gathering from and scattering into the flattened spatial dims -------------------------

def _gather_np(x, idx):
    n, c = x.shape[:2]
    return np.take_along_axis(x.reshape(n, c, -1), idx[:, None, :], axis=2)


def _scatter_np(v, idx, shape):
    n, c = shape[:2]
    size = int(np.prod(shape[2:]))
    tgt = (np.arange(n, like=idx)[:, None, None] * c + np.arange(c, like=idx)[None, :, None]) \
        * size + idx[:, None, :]
    out = np.zeros_like(v, shape=(n * c * size,))
    np.add.at(out, tgt.reshape(-1), np.ascontiguousarray(v).reshape(-1))
    return out.reshape(shape)


GS_GATHER = Op("gs_gather", lambda x, idx, shape: _gather_np(x, idx),
               lambda ns, g, need, idx, shape: (ns.gs_scatter(g, idx, shape),), linear=True,
               node="GatherBackward0")
GS_SCATTER = Op("gs_scatter", _scatter_np,
                lambda ns, g, need, idx, shape: (ns.gs_gather(g, idx),), linear=True,
                node="ScatterAddBackward0")
ns_fn("gs_gather", _gather_np, lambda x, idx: apply(GS_GATHER, (x,), (idx, x._data.shape)))
ns_fn("gs_scatter", _scatter_np,
      lambda v, idx, shape: apply(GS_SCATTER, (v,), (idx, tuple(shape))))


def _plin_em(c, a, r):
    from .reduction import _const_em
    return c * _const_em(lambda x: x, a) + _const_em(lambda x: r - a * x, c)


# a piecewise-linear function of the grid known by its value r and slope a: r itself on
# arrays, a * c + (r - a * c) on tensors (so that it carries the slope)
ns_fn("plin", lambda c, a, r: r, _plin_em)


# ---- source coordinates (PyTorch's grid_sampler_compute_source_index) -------------------------

def _unnormalize(g, size: int, align: bool):
    if align:
        return (g + 1) / 2 * (size - 1), np.full_like(g, (size - 1) / 2)
    return ((g + 1) * size - 1) / 2, np.full_like(g, size / 2)


def _clip(c, a, size: int):
    inside = (c > 0) & (c < size - 1)
    return np.minimum(size - 1, np.maximum(c, 0)).astype(c.dtype), np.where(inside, a, 0)


def _reflect(c, a, twice_low: int, twice_high: int):
    if twice_low == twice_high:
        return np.zeros_like(c), np.zeros_like(a)
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    u = c - lo
    sgn = np.where(u < 0, -1, 1)
    v = np.abs(u)
    extra = np.fmod(v, span)
    flips = np.floor(v / span)
    even = flips % 2 == 0
    r = np.where(even, extra + lo, span - extra + lo).astype(c.dtype)
    return r, a * sgn * np.where(even, 1, -1)


def _source(g, size: int, padding: int, align: bool, bicubic: bool):
    """(source coordinate, its slope in the grid value), both on the data."""
    c, a = _unnormalize(g, size, align)
    if bicubic or padding == 0:
        return c, a
    if padding == 2:
        c, a = _reflect(c, a, 0, 2 * (size - 1)) if align else _reflect(c, a, -1, 2 * size - 1)
    return _clip(c, a, size)


def _pad_index(i, size: int, padding: int, align: bool):
    """Bicubic taps at integer positions moved by the padding mode (PyTorch's
    compute_coordinates); zeros padding leaves them (out of range ones read as 0)."""
    if padding == 0:
        return i
    f = i.astype(np.float64)
    if padding == 2:
        f = _reflect(f, f, 0, 2 * (size - 1))[0] if align else \
            _reflect(f, f, -1, 2 * size - 1)[0]
    return np.minimum(size - 1, np.maximum(f, 0)).astype(np.int64)


# ---- taps ----------------------------------------------------------------------------------

_A = -0.75


def _cubic_w(ns, t, j):
    """The bicubic convolution weight of tap j (at offset j - 1) and its derivative in t."""
    if j == 0:
        x = t + 1
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A, (3 * _A * x - 10 * _A) * x + 8 * _A
    if j == 1:
        return ((_A + 2) * t - (_A + 3)) * t * t + 1, (3 * (_A + 2) * t - 2 * (_A + 3)) * t
    if j == 2:
        x = 1 - t
        return ((_A + 2) * x - (_A + 3)) * x * x + 1, -(3 * (_A + 2) * x - 2 * (_A + 3)) * x
    x = 2 - t
    return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A, -((3 * _A * x - 10 * _A) * x + 8 * _A)


class _Geo:
    """The sampling geometry of one call, computed on the grid's data: per spatial dim the
    source coordinate, its floor and slope; per tap the flat index and validity."""

    def __init__(self, sizes, gdata, mode, padding, align):
        k = len(sizes)
        self.k, self.sizes, self.mode = k, sizes, mode
        n = gdata.shape[0]
        g = gdata.reshape(n, -1, k)
        self.src, self.slope, self.floor = [], [], []
        for d in range(k):   # spatial dim d reads grid component k - 1 - d
            c, a = _source(g[..., k - 1 - d], sizes[d], padding, align, mode == 2)
            self.src.append(c)
            self.slope.append(a.astype(c.dtype))
            self.floor.append(np.rint(c).astype(np.int64) if mode == 1
                              else np.floor(c).astype(np.int64))
        offs = {0: (0, 1), 1: (0,), 2: (-1, 0, 1, 2)}[mode]
        self.taps = []
        strides = [int(np.prod(sizes[d + 1:])) for d in range(k)]
        for combo in itertools.product(range(len(offs)), repeat=k):
            flat = 0
            valid = True
            for d, j in enumerate(combo):
                i = self.floor[d] + offs[j]
                if mode == 2:
                    i = _pad_index(i, sizes[d], padding, align)
                valid = valid & (i >= 0) & (i < sizes[d])
                flat = flat + np.clip(i, 0, sizes[d] - 1) * strides[d]
            self.taps.append((combo, flat, valid))

    def factors(self, ns, grid):
        """Per spatial dim the fractional coordinate t as an ns expression of the grid."""
        if self.mode == 1 and ns is NP:
            return None
        n = self.src[0].shape[0]
        g = grid.reshape(n, -1, self.k)
        ts = []
        for d in range(self.k):
            c = ns.plin(g[..., self.k - 1 - d], self.slope[d], self.src[d])
            ts.append(c - self.floor[d].astype(self.src[d].dtype))
        return ts

    def weights(self, ns, ts, combo, want_grad: bool):
        """The tap's weight and (if asked) its derivative in each t_d."""
        if self.mode == 1:
            # constant weights; on tensors they stay connected to the grid (zero slope), as
            # PyTorch's gradients are
            return (None if ts is None else ns.dep_zero(ts[0]) + 1), None
        fs, dfs = [], []
        for d, j in enumerate(combo):
            if self.mode == 0:
                fs.append(ts[d] if j else 1 - ts[d])
                dfs.append(1 if j else -1)
            else:
                f, df = _cubic_w(ns, ts[d], j)
                fs.append(f)
                dfs.append(df)
        w = _product(fs)
        if not want_grad:
            return w, None
        return w, [_product(fs[:d] + [dfs[d]] + fs[d + 1:]) for d in range(self.k)]


def _product(fs):
    r = fs[0]
    for f in fs[1:]:
        r = r * f
    return r


def _mask(ns, valid, like_dtype):
    return ns.const(valid.astype(like_dtype))


def _gs_forward(ns, x, grid, geo: _Geo):
    ts = geo.factors(ns, grid)
    out = None
    dt = x.dtype if isinstance(x, np.ndarray) else x._data.dtype
    for combo, flat, valid in geo.taps:
        w, _ = geo.weights(ns, ts, combo, False)
        wv = _mask(ns, valid, dt) if w is None else w * _mask(ns, valid, dt)
        term = ns.gs_gather(x, flat) * wv[:, None, :]
        out = term if out is None else out + term
    return out


def _gs_fwd(x, grid, mode, padding, align):
    geo = _Geo(x.shape[2:], grid, mode, padding, align)
    out = _gs_forward(NP, x, grid, geo)
    return out.reshape(x.shape[:2] + grid.shape[1:-1])


def _gs_vjp(ns, g, need, x, grid, mode, padding, align):
    sizes = x.shape[2:]
    geo = _Geo(tuple(sizes), grid if isinstance(grid, np.ndarray) else grid._data, mode,
               padding, align)
    n, c = x.shape[:2]
    g2 = g.reshape(n, c, -1)
    dt = g2.dtype if isinstance(g2, np.ndarray) else g2._data.dtype
    ts = geo.factors(ns, grid)
    gx = None
    parts, idxs = [], []
    ggrid = [None] * geo.k
    for combo, flat, valid in geo.taps:
        w, dws = geo.weights(ns, ts, combo, need[1] and mode != 1)
        m = _mask(ns, valid, dt)
        if need[0]:
            parts.append(g2 * (m if w is None else w * m)[:, None, :])
            idxs.append(flat)
        if need[1] and mode != 1:
            s = ns.sum_dims(g2 * ns.gs_gather(x, flat), (1,), False) * m
            for d in range(geo.k):
                term = s * dws[d]
                ggrid[d] = term if ggrid[d] is None else ggrid[d] + term
    if need[0]:
        gx = ns.gs_scatter(ns.cat(parts, 2), np.concatenate(idxs, axis=1), tuple(x.shape))
    gg = None
    if need[1]:
        if mode == 1:
            gg = ns.zeros_of(grid, tuple(grid.shape)) + ns.dep_zero(grid)
        else:
            comps = [ggrid[d] * ns.const(geo.slope[d].astype(dt)) for d in range(geo.k)]
            gg = ns.stack(comps[::-1], -1).reshape(tuple(grid.shape))
    return gx, gg


def _gs_jvp(ns, tangents, primals, outs, mode, padding, align):
    x, grid = primals
    tx, tg = tangents
    geo = _Geo(tuple(x.shape[2:]), grid._data, mode, padding, align)
    shape = tuple(outs[0].shape)
    r = None
    if tx is not None:
        r = _gs_forward(EM, tx, grid.detach(), geo).reshape(shape)
    if tg is not None and mode != 1:
        n = x.shape[0]
        ts = geo.factors(EM, grid)
        tgr = tg.reshape(n, -1, geo.k)
        dt = x._data.dtype
        acc = None
        for combo, flat, valid in geo.taps:
            _, dws = geo.weights(EM, ts, combo, True)
            dir_ = None
            for d in range(geo.k):
                a = EM.const(geo.slope[d].astype(dt))
                term = dws[d] * a * tgr[..., geo.k - 1 - d]
                dir_ = term if dir_ is None else dir_ + term
            term = EM.gs_gather(x, flat) * (dir_ * _mask(EM, valid, dt))[:, None, :]
            acc = term if acc is None else acc + term
        acc = acc.reshape(shape)
        r = acc if r is None else r + acc
    return r


GRID_SAMPLER_2D = Op("grid_sampler_2d", on_meta(_gs_fwd), _gs_vjp, _gs_jvp, saves=(0, 1),
                     node="GridSampler2DBackward0")
GRID_SAMPLER_3D = Op("grid_sampler_3d", on_meta(_gs_fwd), _gs_vjp, _gs_jvp, saves=(0, 1),
                     node="GridSampler3DBackward0")


def _check_grid(input: Tensor, grid: Tensor, mode: int) -> None:
    """PyTorch's grid_sampler checks, in its order."""
    xs, gs = input._data.shape, grid._data.shape
    sizes = f"input with sizes {_shape_str(xs)} and grid with sizes {_shape_str(gs)}"
    if xs[:1] != gs[:1]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {sizes}")
    if gs[-1:] != (len(xs) - 2,):
        raise RuntimeError(f"grid_sampler(): expected grid to have size {len(xs) - 2} in last "
                           f"dimension, but got grid with sizes {_shape_str(gs)}")
    for d in range(2, len(xs)):
        if xs[d] == 0:
            raise RuntimeError(
                f"grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {_shape_str(xs)} with dimension {d} being empty")
    want = 4 if len(xs) == 4 else 5
    if len(xs) != want or len(gs) != want:
        raise RuntimeError(f"grid_sampler(): expected {want}D input and grid with same number "
                           f"of dimensions, but got {sizes}")
    if mode == 2 and want == 5:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input._data.dtype != grid._data.dtype:
        from ._dispatch import _type_name
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found "
                           f"{_type_name(grid.dtype)}")


_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details.")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """``torch.nn.functional.grid_sample``: bilinear/nearest/bicubic sampling of ``input`` at
    the normalised ``grid`` locations, zeros/border/reflection padding, one op."""
    modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
    pads = {"zeros": 0, "border": 1, "reflection": 2}
    if mode not in modes:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in pads:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    _check_grid(input, grid, modes[mode])
    op = GRID_SAMPLER_2D if input._data.ndim == 4 else GRID_SAMPLER_3D
    return apply(op, (input, grid), (modes[mode], pads[padding_mode], bool(align_corners)))


# ---- affine_grid -----------------------------------------------------------------------------

def _linspace(n: int, align: bool, dt):
    """PyTorch's linspace_from_neg_one: -1..1 in n steps (computed from both ends, as
    torch.linspace), scaled by (n - 1) / n unless align_corners; 0 for a single step."""
    if n <= 1:
        return np.zeros(1, dt)
    step = dt.type(2) / dt.type(n - 1)
    i = np.arange(n)
    r = np.where(i < n // 2, dt.type(-1) + step * i.astype(dt),
                 dt.type(1) - step * (n - 1 - i).astype(dt)).astype(dt)
    if not align:
        r = (r * dt.type(n - 1) / dt.type(n)).astype(dt)
    return r


def _base_grid(spatial, align: bool, dt):
    """Homogeneous coordinates (x, y[, z], 1) of every output location, (L, k + 1)."""
    axes = [_linspace(n, align, dt) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    cols = [m.reshape(-1) for m in mesh[::-1]]   # x varies along the last dim
    cols.append(np.ones_like(cols[0]))
    return np.stack(cols, axis=1)


def _affine_fwd(theta, base, out_shape):
    return np.matmul(base, np.swapaxes(theta, 1, 2)).reshape(out_shape)


def _affine_vjp(ns, g, need, base, out_shape):
    n, k = out_shape[0], out_shape[-1]
    g2 = g.reshape(n, -1, k)
    return (ns.matmul(ns.permute(g2, (0, 2, 1)), ns.const(base)),)


AFFINE_GRID = Op("affine_grid_generator", on_meta(_affine_fwd), _affine_vjp, linear=True,
                 node="AffineGridGeneratorBackward0")


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """``torch.nn.functional.affine_grid``: the sampling grid of a batch of affine maps."""
    given = size
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    ts = theta._data.shape
    shown = "ember.Size([" + ", ".join(str(s) for s in ts) + "])"
    if len(size) == 4:
        if len(ts) != 3 or ts[-2] != 2 or ts[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{given}. Got {shown}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if len(ts) != 3 or ts[-2] != 3 or ts[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{given}. Got {shown}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {given}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    if size[0] != ts[0]:
        raise RuntimeError(f"affine_grid_generator(): expected theta's batch size {ts[0]} to "
                           f"match size[0] {size[0]}")
    base = like(_base_grid(spatial, bool(align_corners), theta._data.dtype), theta._data)
    out_shape = (size[0], *spatial, len(spatial))
    return apply(AFFINE_GRID, (theta,), (base, out_shape))
