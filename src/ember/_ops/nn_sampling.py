"""nn.functional: padding, resampling and pixel rearrangement.

Every resampling PyTorch offers (nearest, nearest-exact, linear, bilinear, bicubic, trilinear,
area, the antialiased bilinear/bicubic/lanczos) and the reflect/replicate paddings are
separable linear maps: along each spatial axis, output ``i`` is a weighted sum of a few input
positions. One op (``_sep_op``) applies such per-axis tables (``_Axis``: taps of indices and
weights); its VJP applies the transposed tables (built once, lazily, by sorting the taps by
input position), so the VJP is the same op again and double backward comes for free. The
tables are computed with PyTorch's index arithmetic (its float32 or float64 ``opmath``), cached
per geometry, and each call records the node PyTorch's kernel would
(``UpsampleBilinear2DBackward0``, ``ReflectionPad2DBackward0``, ...).

Circular padding is PyTorch's composite (an empty tensor and slice copies, so CopySlices).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dtype as D
from .._meta import MetaArray, meta_like
from .._tensor import Tensor
from ._dispatch import _type_name
from ._registry import NP, Op, apply, ns_fn

__all__ = [
    "channel_shuffle",
    "interpolate",
    "pad",
    "pixel_shuffle",
    "pixel_unshuffle",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]


def on_meta(fn):
    """An array kernel that also takes meta arrays: it runs on zeros of their shapes (meta
    arrays are read-only views of one zero) and returns meta arrays of the results' shapes."""
    def run(*args):
        for a in args:
            if type(a) is MetaArray:
                break
        else:
            return fn(*args)
        out = fn(*[np.zeros(a.shape, a.dtype) if type(a) is MetaArray else a for a in args])
        if isinstance(out, tuple):
            return tuple(meta_like(o.shape, o.dtype) for o in out)
        return meta_like(np.shape(out), out.dtype)
    run.__name__, run.__doc__ = fn.__name__, fn.__doc__
    return run


def like(a, ref):
    """A table built on the host, as an array of ``ref``'s kind (the device's)."""
    return a if type(ref) is np.ndarray or type(a) is type(ref) else np.asarray(a, like=ref)


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _opmath(npd) -> np.dtype:
    return np.dtype(np.float64) if npd == np.float64 else np.dtype(np.float32)


# ---- the separable resampling op --------------------------------------------------------------

class _Axis:
    """One axis of a separable linear map: ``out[i] = sum_k w[k, i] * in[idx[k, i]]`` along
    ``ax`` (``w`` None: a plain gather, one tap)."""

    __slots__ = ("_t", "ax", "idx", "n_in", "n_out", "w")

    def __init__(self, ax, n_in, n_out, idx, w):
        self.ax, self.n_in, self.n_out, self.idx, self.w = ax, n_in, n_out, idx, w
        self._t = None

    def at(self, ax: int) -> _Axis:
        """The same table applied along ``ax``."""
        if ax == self.ax:
            return self
        a = _Axis(ax, self.n_in, self.n_out, self.idx, self.w)
        t = self._t
        if t is not None:
            a._t = _Axis(ax, t.n_in, t.n_out, t.idx, t.w)
            a._t._t = a
        return a

    def transposed(self) -> _Axis:
        """The adjoint map (n_out -> n_in): each input position's taps, found by sorting."""
        if self._t is None:
            k, n_out = self.idx.shape
            src = np.broadcast_to(np.arange(n_out, like=self.idx), (k, n_out)).reshape(-1)
            dst = self.idx.reshape(-1)
            order = np.argsort(dst, kind="stable")
            dst_s = dst[order]
            cnt = np.bincount(dst_s, minlength=self.n_in)
            kt = max(int(cnt.max()) if cnt.size else 0, 1)
            rank = np.arange(dst_s.shape[0], like=dst) - (np.cumsum(cnt) - cnt)[dst_s]
            idx = np.zeros_like(self.idx, shape=(kt, self.n_in))
            idx[rank, dst_s] = src[order]
            w = np.zeros_like(self.w if self.w is not None else idx, dtype=self._wdtype(),
                              shape=(kt, self.n_in))
            w[rank, dst_s] = 1 if self.w is None else self.w.reshape(-1)[order]
            self._t = _Axis(self.ax, self.n_out, self.n_in, idx, w)
            self._t._t = self
        return self._t

    def _wdtype(self):
        return self.w.dtype if self.w is not None else np.dtype(np.float64)


def _apply_axis(x, a: _Axis):
    idx = like(a.idx, x)
    if a.w is None and idx.shape[0] == 1:
        return np.take(x, idx[0], axis=a.ax)
    shape = [1] * x.ndim
    shape[a.ax] = a.n_out
    w = like(a.w if a.w.dtype == x.dtype else a.w.astype(x.dtype), x)
    acc = None
    for k in range(a.idx.shape[0]):   # a handful of taps
        t = np.take(x, idx[k], axis=a.ax)
        t *= w[k].reshape(shape)
        if acc is None:
            acc = t
        else:
            acc += t
    if acc is None:
        return np.zeros_like(x, shape=tuple(x.shape[:a.ax]) + (a.n_out,) + x.shape[a.ax + 1:])
    return acc


def _sep_np(x, axes, node=None):
    """Apply the per-axis tables in turn; half types compute in float32 (PyTorch's opmath)."""
    half = x.dtype.itemsize == 2 and x.dtype.kind == "f" or x.dtype == D.bfloat16.np
    y = x.astype(np.float32) if half else x
    for a in axes:
        y = _apply_axis(y, a)
    return y.astype(x.dtype) if half else y


def _sep_vjp(ns, g, need, axes, node):
    back = tuple(a.transposed() for a in reversed(axes))
    return (ns.sep(g, back, _back_name(node)),)


def _sep_vjp_keep(ns, g, need, x, axes, node):
    r = _sep_vjp(ns, g, need, axes, node)[0]
    # PyTorch's backward of this op takes the input itself, so on ember tensors the gradient
    # stays connected to it (zero slope), as PyTorch's does
    return (r if ns is NP else r + ns.dep_zero(x),)


def _back_name(node: str) -> str:
    return node.replace("Backward0", "BackwardBackward0") if "BackwardBackward" not in node \
        else node.replace("BackwardBackward0", "Backward0")


_SEP_OPS: dict = {}


def _sep_op(node: str, keep_input: bool = False, layout: bool = False) -> Op:
    """The separable op recorded under PyTorch's node name ``node``; ``keep_input`` for the
    nodes whose PyTorch backward reads the input (reflection/replication pads, adaptive
    average pooling): they save it, with its version check. ``layout``: interpolate's result
    layout (``layout_rules.upsample``)."""
    op = _SEP_OPS.get((node, keep_input, layout))
    if op is None:
        from . import layout_rules
        fwd = on_meta(_sep_np)
        op = _SEP_OPS[(node, keep_input, layout)] = Op(
            "resample", layout_rules.upsample(fwd) if layout else fwd,
            _sep_vjp_keep if keep_input else _sep_vjp, linear=True,
            node=node, saves=(0,) if keep_input else ())
    return op


ns_fn("sep", _sep_np, lambda g, axes, node: apply(_sep_op(node), (g,), (axes, node)))


def _resample(x: Tensor, axes, node: str, keep_input: bool = False,
              layout: bool = False) -> Tensor:
    return apply(_sep_op(node, keep_input, layout), (x,), (tuple(axes), node))


_CACHE: dict = {}


def _cached(key, build):
    a = _CACHE.get(key)
    if a is None:
        if len(_CACHE) > 512:
            _CACHE.clear()
        a = _CACHE[key] = build()
    return a


# ---- tables: interpolation --------------------------------------------------------------------

def _scale_value(scale, n_in, n_out, dt):
    """PyTorch's compute_scales_value: 1/scale_factor when one was given, else in/out."""
    if scale is not None and scale > 0:
        return dt.type(1.0 / scale)
    return dt.type(n_in) / dt.type(n_out)


def _area_scale(n_in, n_out, align, scale, dt):
    """PyTorch's area_pixel_compute_scale."""
    if align:
        return dt.type(n_in - 1) / dt.type(n_out - 1) if n_out > 1 else dt.type(0)
    return _scale_value(scale, n_in, n_out, dt)


def _nearest_table(n_in, n_out, scale, exact, shortcut):
    """PyTorch's nearest source index, in float32. Its kernels copy rows when the size is
    unchanged or doubled, whatever the scale factor: the 2-D forward does, the 1-D and 3-D
    forwards do not, and all the backwards do; so a 1-D/3-D table may get a different adjoint."""
    f32 = np.dtype(np.float32)
    i = np.arange(n_out)
    if exact:
        s = _scale_value(scale, n_in, n_out, f32)
        idx = np.minimum(np.floor((i.astype(f32) + f32.type(0.5)) * s).astype(np.int64),
                         n_in - 1)
        return _Axis(0, n_in, n_out, idx[None, :], None)
    s = _scale_value(scale, n_in, n_out, f32)
    plain = np.minimum(np.floor(i.astype(f32) * s).astype(np.int64), n_in - 1)
    short = i if n_out == n_in else i >> 1 if n_out == 2 * n_in else plain
    if shortcut:
        return _Axis(0, n_in, n_out, short[None, :], None)
    fwd = _Axis(0, n_in, n_out, plain[None, :], None)
    if not np.array_equal(short, plain):
        bwd = _Axis(0, n_in, n_out, short[None, :], None).transposed()
        fwd._t, bwd._t = bwd, fwd
    return fwd


def _linear_table(n_in, n_out, align, scale, dt):
    i = np.arange(n_out)
    if n_out == n_in:
        return _Axis(0, n_in, n_out, i[None, :], None)
    s = _area_scale(n_in, n_out, align, scale, dt)
    fi = i.astype(dt)
    real = s * fi if align else np.maximum(s * (fi + dt.type(0.5)) - dt.type(0.5), dt.type(0))
    i0 = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    lam1 = np.clip(real - i0.astype(dt), 0, 1).astype(dt)
    i1 = i0 + (i0 < n_in - 1)
    return _Axis(0, n_in, n_out, np.stack([i0, i1]), np.stack([1 - lam1, lam1]).astype(dt))


def _cubic1(x, a):
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic2(x, a):
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _cubic_table(n_in, n_out, align, scale, dt):
    s = _area_scale(n_in, n_out, align, scale, dt)
    fi = np.arange(n_out).astype(dt)
    real = s * fi if align else s * (fi + dt.type(0.5)) - dt.type(0.5)
    i0 = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    t = np.clip(real - i0.astype(dt), 0, 1).astype(dt)
    a = dt.type(-0.75)
    one = dt.type(1)
    w = np.stack([_cubic2(t + one, a), _cubic1(t, a), _cubic1(one - t, a),
                  _cubic2(one - t + one, a)]).astype(dt)
    idx = np.clip(i0[None, :] + np.arange(-1, 3)[:, None], 0, n_in - 1)
    return _Axis(0, n_in, n_out, idx, w)


def _aa_linear(x):
    x = np.abs(x)
    return np.where(x < 1, 1 - x, 0)


def _aa_cubic(x):
    x = np.abs(x)
    a = -0.5
    return np.where(x < 1, _cubic1(x, a), np.where(x < 2, _cubic2(x, a), 0))


def _aa_lanczos(x):
    with np.errstate(invalid="ignore", divide="ignore"):
        px = np.pi * x
        v = np.where(x == 0, 1, np.sin(px) * np.sin(px / 3) * 3 / (px * px))
    return np.where(np.abs(x) < 3, v, 0)


_AA = {"bilinear": (_aa_linear, 2), "bicubic": (_aa_cubic, 4), "lanczos": (_aa_lanczos, 6)}


def _aa_table(n_in, n_out, align, scale, dt, mode):
    """PyTorch's antialiased (PIL-style) weights: the filter widened by the downscale factor,
    each output's weights normalised to sum to one."""
    if n_in == n_out:
        # PyTorch's separable forward skips a dim whose size is unchanged, its backward does
        # not (a scale factor other than 1 still filters there)
        same = _Axis(0, n_in, n_out, np.arange(n_out)[None, :], None)
        real = _aa_weights(n_in, n_out, align, scale, dt, mode)
        if not np.allclose(_dense(real), np.eye(n_in)):
            bwd = real.transposed()
            same._t, bwd._t = bwd, same
        return same
    return _aa_weights(n_in, n_out, align, scale, dt, mode)


def _dense(a: _Axis):
    m = np.zeros((a.n_out, a.n_in))
    for k in range(a.idx.shape[0]):
        np.add.at(m, (np.arange(a.n_out), a.idx[k]), 1 if a.w is None else a.w[k])
    return m


def _aa_weights(n_in, n_out, align, scale, dt, mode):
    filt, size = _AA[mode]
    s = _area_scale(n_in, n_out, align, scale, dt)
    support = dt.type(size * 0.5) * s if s >= 1 else dt.type(size * 0.5)
    kmax = int(math.ceil(support)) * 2 + 1
    invscale = dt.type(1) / s if s >= 1 else dt.type(1)
    center = s * (np.arange(n_out).astype(dt) + dt.type(0.5))
    xmin = np.maximum((center - support + dt.type(0.5)).astype(np.int64), 0)
    xmax = np.minimum((center + support + dt.type(0.5)).astype(np.int64), n_in)
    xsize = np.clip(xmax - xmin, 0, kmax)
    j = np.arange(kmax)[:, None]
    w = filt(((j + xmin).astype(dt) - center + dt.type(0.5)) * invscale).astype(dt)
    w = np.where(j < xsize, w, 0).astype(dt)
    tot = w.sum(axis=0)
    w = np.where(tot != 0, w / np.where(tot != 0, tot, 1), w).astype(dt)
    idx = np.minimum(j + xmin, n_in - 1)
    return _Axis(0, n_in, n_out, idx, w)


def _area_table(n_in, n_out, dt):
    """Adaptive average pooling's windows [floor(i*in/out), ceil((i+1)*in/out))."""
    if n_out == 0:
        return _Axis(0, n_in, 0, np.zeros((1, 0), np.int64), np.zeros((1, 0), dt))
    i = np.arange(n_out)
    start = (i * n_in) // n_out
    end = ((i + 1) * n_in + n_out - 1) // n_out
    ln = end - start
    k = np.arange(int(ln.max()))[:, None]
    idx = np.minimum(start + k, end - 1)
    w = np.where(k < ln, 1 / ln, 0).astype(dt)
    return _Axis(0, n_in, n_out, idx, w)


# ---- interpolate -----------------------------------------------------------------------------

_MODES_MSG = ("nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
              "nearest-exact")
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5}
_LINEAR_NAME = {3: "linear", 4: "bilinear", 5: "trilinear"}


def _is_integer(x) -> bool:
    if isinstance(x, numbers.Integral):
        return True
    return isinstance(x, Tensor) and not x.is_floating_point()


def _sizes(input: Tensor, size, scale_factor, mode, recompute):
    """PyTorch's interpolate argument handling: (output size, scale factors to pass on)."""
    dim = input._data.ndim - 2
    spatial = list(input._data.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    "Tuple[int, int, int], but got size with types "
                    f"{[type(x) for x in size]}")
            out, scales = [int(s) for s in size], None
        else:
            out, scales = [int(size)] * dim, None
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {spatial} and scale_factor of shape "
                    f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    "format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        out = None
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out is None:
        recompute = True
    if recompute:
        out = [int(math.floor(s * f)) for s, f in zip(spatial, scales)]
        scales = None
    if out is None:
        out = [s * int(f) if int(f) == f else int(s * f) for s, f in zip(spatial, scales)]
    return out, scales


def _check_sizes(input: Tensor, out) -> None:
    spatial = input._data.shape[2:]
    if all(s > 0 for s in spatial) and all(o > 0 for o in out):
        return
    names = ("D", "H", "W")[3 - len(spatial):]
    i = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial))
    o = ", ".join(f"{n}: {s}" for n, s in zip(names, out))
    sep = " and " if len(spatial) == 1 else " "   # (PyTorch's 1-d message has the "and")
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({i})"
                       f"{sep}output ({o})")


def _check_area(input: Tensor) -> None:
    shape = input._data.shape
    nd = len(shape)
    if nd == 3:
        shape = shape[:2] + (1,) + shape[2:]
    for d in range(1, len(shape)):
        if shape[d] == 0:
            raise RuntimeError(
                f"adaptive_avg_pool{3 if nd == 5 else 2}d(): Expected input to have "
                f"non-zero size for non-batch dimensions, but input has sizes "
                f"{_shape_str(shape)} with dimension {d} being empty")


_KERNEL = {("nearest", 3): "upsample_nearest1d", ("nearest", 4): "upsample_nearest2d_channels_last",
           ("nearest", 5): "upsample_nearest3d", ("nearest-exact", 3): "_upsample_nearest_exact1d",
           ("nearest-exact", 4): "upsample_nearest2d_channels_last",
           ("nearest-exact", 5): "_upsample_nearest_exact3d",
           ("linear", 3): "compute_indices_weights_linear",
           ("bilinear", 4): "upsample_bilinear2d_channels_last",
           ("trilinear", 5): "compute_indices_weights_linear",
           ("bicubic", 4): "compute_indices_weights_cubic", ("area", 3): "adaptive_avg_pool2d",
           ("area", 4): "adaptive_avg_pool2d", ("area", 5): "adaptive_avg_pool3d"}


def _check_dtype(input: Tensor, mode: str) -> None:
    k = input._data.dtype.kind
    if k == "f" or input.dtype is D.bfloat16:
        return
    if k == "u" and input._data.dtype.itemsize == 1 and mode in ("nearest", "nearest-exact"):
        return
    if k == "u" and input._data.dtype.itemsize == 1 and mode in ("bilinear", "bicubic"):
        raise NotImplementedError(f"interpolate(mode='{mode}') on uint8 images is not built in "
                                  "ember yet; convert to float first")
    kernel = _KERNEL.get((mode, input._data.ndim), "upsample")
    if input.dtype is D.complex32 and kernel.startswith(("upsample_nearest", "_upsample")):
        if input._data.ndim != 4:   # (its 1-d and 3-d index computation refuses first)
            kernel = "compute_indices_weights_nearest"
    raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(input.dtype)}\'')


def _node(mode: str, nd: int, antialias: bool, out) -> str:
    k = nd - 2
    if mode == "nearest":
        return f"UpsampleNearest{k}DBackward0"
    if mode == "nearest-exact":
        return f"UpsampleNearestExact{k}DBackward0"
    if mode == "area":
        if k == 1:
            return "SqueezeBackward1"
        return "MeanBackward1" if all(o == 1 for o in out) else f"AdaptiveAvgPool{k}DBackward0"
    if antialias:
        return {"bilinear": "UpsampleBilinear2DAaBackward0",
                "bicubic": "UpsampleBicubic2DAaBackward0",
                "lanczos": "UpsampleLanczos2DAaBackward0"}[mode]
    return {"linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
            "trilinear": "UpsampleTrilinear3DBackward0",
            "bicubic": "UpsampleBicubic2DBackward0"}[mode]


def _table(mode, n_in, n_out, align, scale, dt, antialias, nd):
    if mode in ("nearest", "nearest-exact"):
        return _nearest_table(n_in, n_out, scale, mode == "nearest-exact", nd == 4)
    if mode == "area":
        return _area_table(n_in, n_out, dt)
    if antialias:
        return _aa_table(n_in, n_out, align, scale, dt, mode)
    if mode == "bicubic":
        return _cubic_table(n_in, n_out, align, scale, dt)
    return _linear_table(n_in, n_out, align, scale, dt)


def _check_mode(input: Tensor, mode: str, antialias: bool, align_corners) -> None:
    nd = input._data.ndim
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and nd == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    if mode == "lanczos" and nd == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    ok = mode in ("nearest", "nearest-exact", "area") and nd in (3, 4, 5) or (
        mode in ("bicubic", "lanczos") and nd == 4) or _NEEDS.get(mode) == nd
    if ok:
        return
    if mode in _NEEDS and nd in (3, 4, 5):
        raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs {_NEEDS[mode]}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{nd}D) for the modes: {_MODES_MSG} (got {mode})")


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """``torch.nn.functional.interpolate``: every mode as one separable op, with PyTorch's
    source-index arithmetic, output sizes, node names and errors."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    out, scales = _sizes(input, size, scale_factor, mode, recompute_scale_factor)
    _check_mode(input, mode, antialias, align_corners)
    _check_dtype(input, mode)
    if mode == "area":
        _check_area(input)
    else:
        _check_sizes(input, out)
    nd = input._data.ndim
    dt = _opmath(input._data.dtype)
    axes = []
    for k, (n_in, n_out) in enumerate(zip(input._data.shape[2:], out)):
        sc = scales[k] if scales is not None else None
        key = (mode, n_in, n_out, bool(align_corners), sc, dt, antialias, nd, k)
        axes.append(_cached(key, lambda: _table(mode, n_in, n_out, align_corners, sc, dt,
                                                antialias, nd).at(2 + k)))
    node = _node(mode, nd, antialias, out)
    return _resample(input, axes, node, mode == "area" and node != "MeanBackward1", True)


def _deprecated(name: str) -> None:
    import warnings
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=3)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """``torch.nn.functional.upsample`` (deprecated): ``interpolate``."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """``torch.nn.functional.upsample_nearest`` (deprecated): nearest ``interpolate``."""
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """``torch.nn.functional.upsample_bilinear`` (deprecated): bilinear, align_corners=True."""
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- pad --------------------------------------------------------------------------------------

def _const_pad_fwd(x, src, dst, out_shape, value):
    if x.dtype.names is not None:   # complex32 pairs (ember._chalf): NumPy would fill both parts
        from .._chalf import from_values, number
        value = from_values(number(value))
    out = np.full_like(x, value, shape=out_shape)
    out[dst] = x[src]
    return out


def _const_pad_vjp(ns, g, need, src, dst, out_shape, value, in_shape, cropped):
    part = ns.basic_get(g, dst)
    return (ns.embed(part, in_shape, src) if cropped else part,)


CONSTANT_PAD = Op("constant_pad_nd", on_meta(lambda x, src, dst, out_shape, value, in_shape,
                                              cropped: _const_pad_fwd(x, src, dst, out_shape,
                                                                      value)), _const_pad_vjp,
                  lambda ns, tangents, primals, outs, src, dst, out_shape, value, *rest:
                  apply(CONSTANT_PAD, (tangents[0],), (src, dst, out_shape, 0, *rest)),
                  node="ConstantPadNdBackward0")


def _constant_pad(input: Tensor, pad, value) -> Tensor:
    shape = input._data.shape
    nd = len(shape)
    src = [slice(None)] * nd
    dst = [slice(None)] * nd
    out = list(shape)
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = shape[d]
        for p in (lo, hi):
            if p < 0:
                n += p
                if n < 0:
                    raise RuntimeError("narrow(): length must be non-negative.")
        src[d] = slice(max(-lo, 0), max(-lo, 0) + n)
        dst[d] = slice(max(lo, 0), max(lo, 0) + n)
        out[d] = n + max(lo, 0) + max(hi, 0)
    v = 0 if value is None else value
    if input._data.dtype.kind in "iub" and isinstance(v, float):
        v = int(v)
    cropped = any(p < 0 for p in pad)
    return apply(CONSTANT_PAD, (input,), (tuple(src), tuple(dst), tuple(out), v, shape, cropped))


def _pad_index(n: int, lo: int, hi: int, reflect: bool):
    j = np.arange(-lo, n + hi)
    if reflect:
        j = np.abs(j)
        return np.where(j > n - 1, 2 * (n - 1) - j, j)
    return np.clip(j, 0, n - 1)


_PAD_MSG = ("Padding size {n} is not supported for {nd}D input tensor.\nSupported combinations "
            "for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last "
            "dimension)\n  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n  - 4D "
            "or 5D input: padding size = 6 (pads last 3 dimensions)")


def _index_pad(input: Tensor, pad, reflect: bool) -> Tensor:
    shape = input._data.shape
    nd, k = len(shape), len(pad) // 2
    if reflect:
        for i in range(k):
            d = nd - 1 - i
            lo, hi = pad[2 * i], pad[2 * i + 1]
            if not (lo < shape[d] and hi < shape[d]):
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                    f"{_shape_str(shape)}")
    outs = [shape[nd - 1 - i] + pad[2 * i] + pad[2 * i + 1] for i in range(k)]
    if all(o < 1 for o in outs):
        names = ("W", "H", "D")[:k]
        i_s = " ".join(f"{n}: {shape[nd - 1 - i]}" for i, n in reversed(list(enumerate(names))))
        o_s = " ".join(f"{n}: {outs[i]}" for i, n in reversed(list(enumerate(names))))
        raise RuntimeError(f"input ({i_s}) is too small. Calculated output {o_s}")
    if input.dtype is D.complex32:   # (PyTorch's reflection/replication kernels lack it)
        raise NotImplementedError(f"\"{'reflection' if reflect else 'replication'}_pad{k}d\" "
                                  "not implemented for 'ComplexHalf'")
    axes = []
    for i in range(k):
        d = nd - 1 - i
        n, lo, hi = shape[d], pad[2 * i], pad[2 * i + 1]
        key = ("pad", reflect, n, lo, hi, d)
        axes.append(_cached(key, lambda: _Axis(d, n, n + lo + hi,
                                               _pad_index(n, lo, hi, reflect)[None, :], None)))
    node = f"{'Reflection' if reflect else 'Replication'}Pad{k}DBackward0"
    return _resample(input, axes, node, True)


def _circular_pad(input: Tensor, pad) -> Tensor:
    """PyTorch's _pad_circular: the input copied into an empty tensor, then each padded dim's
    ends copied from the opposite side (last dim first), so the result's node is CopySlices."""
    shape = input._data.shape
    nd, k = len(shape), len(pad) // 2
    if nd - k not in (1, 2):
        raise RuntimeError(
            "Invalid padding size, expected 1 or 2 non-padded dimensions, which would be "
            f"equivalent to padding of length {(nd - 1) * 2} or {(nd - 2) * 2} respectively but "
            f"got {len(pad)}")
    out_shape = list(shape)
    for i in range(k):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > shape[d] or hi > shape[d]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out_shape[d] = shape[d] + lo + hi
        if out_shape[d] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = input.new_empty(out_shape)
    # narrowed views even where a dim is not padded (PyTorch's slice() is a view whatever its
    # range): the copy is CopySlices also for all-zero pads
    o_view, i_view = out, input
    for i in range(k):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        o_view = o_view.narrow(d, max(lo, 0), out_shape[d] - max(lo, 0) - max(hi, 0))
        i_view = i_view.narrow(d, max(-lo, 0), shape[d] - max(-lo, 0) - max(-hi, 0))
    o_view.copy_(i_view)
    for i in range(k):
        d = nd - 1 - i
        lo, hi, n = pad[2 * i], pad[2 * i + 1], out_shape[d]
        if lo > 0:
            out.narrow(d, 0, lo).copy_(out.narrow(d, n - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(d, n - hi, hi).copy_(out.narrow(d, max(lo, 0), hi))
    return out


def _pad_ints(pad) -> tuple:
    out = []
    for i, p in enumerate(pad):
        if not isinstance(p, numbers.Integral) and not (isinstance(p, Tensor) and p.ndim == 0):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found "
                            f"element of type {type(p).__name__} at pos {i}")
        out.append(int(p))
    return tuple(out)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """``torch.nn.functional.pad``: constant (negative pads crop), reflect, replicate and
    circular padding of the last ``len(pad) // 2`` dims, with PyTorch's checks and nodes."""
    if isinstance(value, (complex, np.complexfloating)):   # (its parser's ``float? value``,
        _pad_ints(pad)                                      # read after ``pad``)
        raise TypeError("pad(): argument 'value' (position 4) must be float, not "
                        f"{type(value).__name__}")
    return pad_impl(input, pad, mode, value)


def pad_impl(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """``pad`` with any number as ``value`` (``torch.constant_pad_nd`` takes complex ones)."""
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pad = _pad_ints(pad)
    if value is not None and mode != "constant" and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    nd = input._data.ndim
    if len(pad) > 2 * nd:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {nd}")
    if mode == "constant":
        return _constant_pad(input, pad, value)
    n = len(pad)
    if not (n == 2 and nd in (2, 3) or n == 4 and nd in (3, 4) or n == 6 and nd in (4, 5)):
        raise NotImplementedError(_PAD_MSG.format(n=n, nd=nd))
    if mode == "circular":
        return _circular_pad(input, pad)
    return _index_pad(input, pad, mode == "reflect")


# ---- pixel_shuffle / pixel_unshuffle / channel_shuffle ----------------------------------------

def _rearrange_np(x, mid, perm, out):
    return np.transpose(x.reshape(mid), perm).reshape(out)


def _rearrange_vjp(ns, g, need, mid, perm, out, node, back_node, in_shape):
    inv = tuple(int(i) for i in np.argsort(perm))
    mid_p = tuple(mid[p] for p in perm)
    return (ns.rearrange(g, mid_p, inv, in_shape, back_node, node, out),)


_REARR_OPS: dict = {}


def _rearrange_op(node: str) -> Op:
    op = _REARR_OPS.get(node)
    if op is None:
        op = _REARR_OPS[node] = Op(
            "rearrange", on_meta(lambda x, mid, perm, out, *rest: _rearrange_np(x, mid, perm,
                                                                                out)),
            _rearrange_vjp, linear=True, node=node)
    return op


_REARR_KERNELS = {"PixelShuffleBackward0": "pixel_shuffle",
                  "PixelUnshuffleBackward0": "pixel_unshuffle",
                  "ChannelShuffleBackward0": "channel_shuffle"}


def _rearrange_em(g, mid, perm, out, node, back_node, in_shape):
    if g._data.dtype.names is not None and g._data.size:   # (complex32: PyTorch's kernels lack it)
        raise NotImplementedError(f"\"{_REARR_KERNELS.get(node, node)}\" not implemented for "
                                  "'ComplexHalf'")
    return apply(_rearrange_op(node), (g,), (mid, perm, out, node, back_node, in_shape))


ns_fn("rearrange", lambda g, mid, perm, out, *rest: _rearrange_np(g, mid, perm, out),
      _rearrange_em)


def _check_rank(name: str, x: Tensor) -> None:
    if x._data.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {x._data.ndim} dimension(s)")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``torch.nn.functional.pixel_shuffle``: (*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    _check_rank("pixel_shuffle", input)
    r = int(upscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input._data.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
            f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    mid = (*lead, c // (r * r), r, r, h, w)
    perm = (*range(n), n, n + 3, n + 1, n + 4, n + 2)
    out = (*lead, c // (r * r), h * r, w * r)
    return _rearrange_em(input, mid, perm, out, "PixelShuffleBackward0",
                         "PixelUnshuffleBackward0", input._data.shape)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``torch.nn.functional.pixel_unshuffle``: (*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    _check_rank("pixel_unshuffle", input)
    r = int(downscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input._data.shape
    for name, s, k in (("height", h, -2), ("width", w, -1)):
        if s % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({k})={s} is not divisible by {r}")
    n = len(lead)
    mid = (*lead, c, h // r, r, w // r, r)
    perm = (*range(n), n, n + 2, n + 4, n + 1, n + 3)
    out = (*lead, c * r * r, h // r, w // r)
    return _rearrange_em(input, mid, perm, out, "PixelUnshuffleBackward0",
                         "PixelShuffleBackward0", input._data.shape)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``torch.nn.functional.channel_shuffle``: (N, g*k, *) -> channels interleaved by group."""
    shape = input._data.shape
    if len(shape) <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {_shape_str(shape)}")
    g = int(groups)
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    c = shape[1]
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {g} groups.")
    mid = (shape[0], g, c // g, *shape[2:])
    perm = (0, 2, 1, *range(3, len(mid)))
    return _rearrange_em(input, mid, perm, shape, "ChannelShuffleBackward0",
                         "ChannelShuffleBackward0", shape)
