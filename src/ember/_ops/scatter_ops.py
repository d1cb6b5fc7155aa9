"""Scatter-style ops: the functional view scatters (``select_scatter``, ``slice_scatter``,
``diagonal_scatter``, ``as_strided_scatter``), ``masked_scatter``, ``put``, ``scatter_reduce``
and ``index_reduce`` with PyTorch's reductions, ``include_self`` and derivative formulas.

The view scatters all write ``src`` at row-major positions ``idx`` of a copy of the input: one
forward, VJP (``grad`` with those positions zeroed; ``grad`` taken there) and linear JVP.
"""
from __future__ import annotations

import warnings

import numpy as np

from .._settings import alert_not_deterministic, is_warn_always_enabled
from .._tensor import Tensor, _wrap_dim
from ._dispatch import _type_name, autograd_refusals, inplace
from ._registry import Op, apply, method, ns_fn
from .indexing import _full_key, _no_chalf_kernel, _scatter_checks

__all__ = [
    "as_strided_scatter",
    "diagonal_scatter",
    "index_reduce",
    "masked_scatter",
    "put",
    "scatter_reduce",
    "select_scatter",
    "slice_scatter",
]


# ---- view scatters --------------------------------------------------------------------------

def _flat_put_np(x, src, idx):
    out = np.array(x, order="C", copy=True)
    out.reshape(-1)[idx] = src
    return out


def _flat_put_vjp(ns, g, need, idx):
    return (ns.put_flat(g, idx, ns.zeros_of(g, idx.shape)) if need[0] else None,
            ns.take_flat(g, idx) if need[1] else None)


def _scatter_op(node: str) -> Op:
    return Op(node, _flat_put_np, _flat_put_vjp, linear=True, node=node)


SELECT_SCATTER = _scatter_op("SelectScatterBackward0")
SLICE_SCATTER = _scatter_op("SliceScatterBackward0")
DIAGONAL_SCATTER = _scatter_op("DiagonalScatterBackward0")
AS_STRIDED_SCATTER = _scatter_op("AsStridedScatterBackward0")


def _positions(shape) -> np.ndarray:
    return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)


def _view_scatter(op: Op, input: Tensor, src: Tensor, idx: np.ndarray) -> Tensor:
    if tuple(src._data.shape) != idx.shape:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src._data.shape)}, slice size = {list(idx.shape)}")
    if src.dtype is not input.dtype:
        src = src.to(input.dtype)
    return apply(op, (input, src), (idx,))


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """``torch.select_scatter``: ``input`` with ``src`` embedded at ``index`` along ``dim``."""
    shape = input._data.shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, len(shape))
    if not -shape[d] <= index < shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(shape)} at dimension {d}")
    idx = np.take(_positions(shape), index, axis=d)
    return _view_scatter(SELECT_SCATTER, input, src, idx)


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None,
                  step: int = 1) -> Tensor:
    """``torch.slice_scatter``: ``input`` with ``src`` embedded at a slice along ``dim``."""
    shape = input._data.shape
    d = _wrap_dim(dim, len(shape))
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    pos = _positions(shape)
    idx = pos[(slice(None),) * d + (slice(start, end, step),)] if shape else pos
    return _view_scatter(SLICE_SCATTER, input, src, idx)


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """``torch.diagonal_scatter``: ``input`` with ``src`` embedded along a diagonal."""
    shape = input._data.shape
    n = len(shape)
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    idx = np.diagonal(_positions(shape), offset, d1, d2)
    return _view_scatter(DIAGONAL_SCATTER, input, src, idx)


def as_strided_scatter(input: Tensor, src: Tensor, size, stride,
                       storage_offset: int | None = None) -> Tensor:
    """``torch.as_strided_scatter``: a contiguous copy of ``input`` with ``src`` written at
    ``as_strided(size, stride, storage_offset)`` of it."""
    size, stride = tuple(size), tuple(stride)
    off = 0 if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    idx = np.full(size, off, np.int64)
    for k, (n, st) in enumerate(zip(size, stride)):
        idx = idx + (np.arange(n, dtype=np.int64) * st).reshape((-1,) + (1,) * (len(size) - k - 1))
    if idx.size and (idx.max() >= input._data.size or off < 0):
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and "
            f"itemsize {input._data.itemsize} requiring a storage size of "
            f"{(int(idx.max()) + 1) * input._data.itemsize} are out of bounds for storage of "
            f"size {input._data.nbytes}")
    return _view_scatter(AS_STRIDED_SCATTER, input, src, idx.reshape(size))


# ---- masked_scatter -------------------------------------------------------------------------

def _ms_fwd(x, src, mask):
    out = np.array(np.broadcast_to(x, mask.shape), copy=True)
    n = int(mask.sum())
    out[mask] = np.ascontiguousarray(src).reshape(-1)[:n]
    return out


def _ms_src_grad_np(g, mask, src_shape):
    vals = g[mask]
    z = np.zeros(int(np.prod(src_shape, dtype=np.int64)), g.dtype)
    z[:vals.size] = vals
    return z.reshape(src_shape)


MASKED_SCATTER_BACK = Op("masked_scatter_backward", lambda g, mask, shape:
                         _ms_src_grad_np(g, mask, shape),
                         lambda ns, g, need, mask, shape: (ns.ms_fill(g, mask),),
                         linear=True, node="MaskedScatterBackwardBackward0")


def _ms_fill_np(g, mask):
    """``g`` flattened into the first ``mask.sum()`` slots of a mask-shaped zero array (the
    adjoint of the source gradient)."""
    z = np.zeros(mask.shape, g.dtype)
    n = int(mask.sum())
    z[mask] = np.ascontiguousarray(g).reshape(-1)[:n]
    return z


MS_FILL = Op("ms_fill", lambda g, mask, shape: _ms_fill_np(g, mask),
             lambda ns, g, need, mask, shape: (ns.ms_src_grad(g, mask, shape),), linear=True,
             node="MaskedScatterBackward0")
ns_fn("ms_src_grad", _ms_src_grad_np,
      lambda g, mask, shape: apply(MASKED_SCATTER_BACK, (g,), (mask, shape)))
ns_fn("ms_fill", _ms_fill_np, lambda g, mask: apply(MS_FILL, (g,), (mask, g._data.shape)))


def _ms_vjp(ns, g, need, mask, src_shape):
    return (ns.masked_zero(g, mask) if need[0] else None,
            ns.ms_src_grad(g, mask, src_shape) if need[1] else None)


MASKED_SCATTER = Op("masked_scatter", lambda x, src, mask, src_shape: _ms_fwd(x, src, mask),
                    _ms_vjp, linear=True)


def _ms_checks(self: Tensor, mask: Tensor, source: Tensor, shape) -> np.ndarray:
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_type_name(mask.dtype)}")
    if self.dtype is not source.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{_type_name(self.dtype)} and {_type_name(source.dtype)}")
    mb = np.broadcast_to(m, shape)
    if int(mb.sum()) > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return mb


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``torch.masked_scatter``: ``input`` with the positions where ``mask`` is True filled by
    consecutive elements of ``source``."""
    from .pointwise_more import check_broadcast
    try:
        shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
    except ValueError:
        check_broadcast(input._data.shape, mask._data.shape)
        raise
    mb = _ms_checks(input, mask, source, shape)
    if input._data.dtype.names is not None:   # (complex32: ember._chalf)
        _no_chalf_kernel("masked_scatter")
    return apply(MASKED_SCATTER, (input, source), (mb, source._data.shape))


def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    autograd_refusals(self, (source,), MASKED_SCATTER)  # autograd first, as PyTorch
    try:
        np.broadcast_to(mask._data, self._data.shape)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({self._data.shape[-1]}) must match the size "
                           f"of tensor b ({mask._data.shape[-1]}) at non-singleton dimension "
                           f"{self._data.ndim - 1}") from None
    mb = _ms_checks(self, mask, source, self._data.shape)
    if self._data.dtype.names is not None:   # (complex32: ember._chalf)
        _no_chalf_kernel("masked_scatter")
    return inplace(MASKED_SCATTER, self, (source,), (mb, source._data.shape), overlap=2)


# ---- put ------------------------------------------------------------------------------------

def _put_np(x, src, idx, accumulate):
    out = np.array(x, order="C", copy=True)
    flat = out.reshape(-1)
    s = np.ascontiguousarray(src).reshape(-1)
    if accumulate:
        np.add.at(flat, idx, s)
    else:
        flat[idx] = s
    return out


def _put_vjp(ns, g, need, idx, accumulate):
    gs = None
    if need[0]:
        gs = g if accumulate else ns.put_flat(g, idx, ns.zeros_of(g, idx.shape))
    # (take_arr: its adjoint sums repeated indices, for double backward)
    return (gs, ns.take_arr(g, idx) if need[1] else None)


PUT = Op("put", _put_np, _put_vjp, linear=True)


def _put_idx(self: Tensor, index: Tensor, source: Tensor) -> np.ndarray:
    idx = index._data
    if idx.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{_type_name(index.dtype)}")
    if self.dtype is not source.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_type_name(self.dtype)} and source.dtype = "
                           f"{_type_name(source.dtype)}")
    if idx.size != source._data.size:
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source._data.size}, "
                         f"index.numel() = {idx.size}")
    n = self._data.size
    flat = idx.reshape(-1)
    if flat.size and self._data.dtype.names is not None:   # (complex32: ember._chalf)
        _no_chalf_kernel("put")
    bad = flat[(flat < -n) | (flat >= n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of {n} "
                         "elements.")
    return np.where(flat < 0, flat + n, flat)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``torch.put``: ``input`` (read flat) with ``source`` written (or added) at ``index``."""
    if not accumulate:
        alert_not_deterministic("put_")
    idx = _put_idx(input, index, source)
    return apply(PUT, (input, source.reshape(-1)), (idx, bool(accumulate)))


def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    autograd_refusals(self, (source,), PUT)  # autograd first, as PyTorch
    if not accumulate:
        alert_not_deterministic("put_")   # (duplicate indices: the last write wins by chance)
    idx = _put_idx(self, index, source)
    return inplace(PUT, self, (source.reshape(-1),), (idx, bool(accumulate)), overlap=2)


# ---- scatter_reduce / index_reduce ---------------------------------------------------------

_REDUCES = ("sum", "prod", "mean", "amax", "amin")
_LEGACY = {"max": "amax", "min": "amin"}   # accepted silently by PyTorch's kernel


def _identity(dtype: np.dtype, reduce: str):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _sr_fwd(x, src, dim, idx, reduce, include_self):
    out = np.array(x, copy=True)
    key = _full_key(idx, dim) if out.ndim else ()
    s = src[tuple(slice(0, n) for n in idx.shape)] if src.ndim else src
    if not include_self:
        out[key] = _identity(out.dtype, reduce)
    if reduce in ("sum", "mean"):
        np.add.at(out, key, s)
    elif reduce == "prod":
        np.multiply.at(out, key, s)
    elif reduce == "amax":
        np.maximum.at(out, key, s)
    else:
        np.minimum.at(out, key, s)
    if reduce == "mean":
        cnt = _counts(out.shape, key, include_self, out.dtype)
        if out.dtype.kind in "fc":
            out = out / cnt
        else:
            out = np.floor_divide(out, cnt.astype(out.dtype))
    return out.astype(x.dtype, copy=False)


def _counts(shape, key, include_self, dtype):
    """How many values each position reduced (1 for a position nothing was scattered to)."""
    n = np.ones(shape, np.int64) if include_self else np.zeros(shape, np.int64)
    np.add.at(n, key, 1)
    n[n == 0] = 1
    return n.astype(dtype if dtype.kind in "fc" else np.int64)


def _sr_gather(g, dim, idx):
    return g[_full_key(idx, dim)] if g.ndim else g


def _sr_vjp(ns, g, need, x, src, out, dim, idx, reduce, include_self):
    key_dim = (dim, idx)
    gs = gsrc = None
    if reduce == "sum":
        gs = g
        gsrc = ns.gather_arr(g, *key_dim)
    elif reduce == "mean":
        n = ns.data_fn(lambda o: _counts(o.shape, _full_key(idx, dim) if o.ndim else (),
                                         include_self, o.dtype), out)
        gs = g / n
        gsrc = ns.gather_arr(g, *key_dim) / ns.gather_arr(n, *key_dim)
    elif reduce in ("amax", "amin"):
        value = ns.gather_arr(out, *key_dim)
        self_is = ns.data_fn(lambda a, b: (a == b).astype(a.dtype), x, out)
        src_is = ns.data_fn(lambda a, b: (a == b).astype(a.dtype), src, value)
        cnt = ns.data_fn(lambda a, b: _scatter_add_np(a, dim, idx, b), self_is, src_is)
        dist = g / cnt
        gs = self_is * dist
        gsrc = src_is * ns.gather_arr(dist, *key_dim)
    else:
        ms = ns.where(ns.data_fn(lambda a: a == 0, x), 1, x)
        gs = g * ns.sr(ms, src, dim, idx, reduce, include_self) / ms
        src_zero = ns.data_fn(lambda a: a == 0, src)
        nz = ns.data_fn(lambda z: _sr_gather(_scatter_add_np(np.zeros(out.shape, np.int64),
                                                             dim, idx, z.astype(np.int64)),
                                             dim, idx), src_zero)
        single = ns.data_fn(lambda z, k: z & (k == 1), src_zero, nz)
        msrc = ns.where(single, 1, src)
        msrc_res = ns.sr(x, msrc, dim, idx, reduce, include_self)
        gsrc = ns.where(single, ns.gather_arr(g * msrc_res, *key_dim),
                        ns.gather_arr(g * out, *key_dim) / ns.where(src_zero, 1, src))
    if not include_self and need[0]:
        gs = ns.scatter_zero(gs, dim, idx)
    return (gs if need[0] else None, gsrc if need[1] else None)


def _scatter_add_np(a, dim, idx, b):
    out = np.array(a, copy=True)
    np.add.at(out, _full_key(idx, dim) if out.ndim else (), b)
    return out


def _sr_jvp(ns, tangents, primals, outs, dim, idx, reduce, include_self):
    x, src = primals
    tx, ts = tangents
    if tx is None:
        tx = ns.zeros_of(x, x.shape)
    if ts is None:
        ts = ns.zeros_of(src, src.shape)
    out = outs[0]
    if reduce in ("sum", "mean"):
        return ns.sr(tx, ts, dim, idx, reduce, include_self)
    if reduce in ("amax", "amin"):
        value = ns.gather_arr(out, dim, idx)
        self_is = ns.data_fn(lambda a, b: (a == b).astype(a.dtype), x, out)
        src_is = ns.data_fn(lambda a, b: (a == b).astype(a.dtype), src, value)
        cnt = ns.data_fn(lambda a, b: _scatter_add_np(a, dim, idx, b), self_is, src_is)
        return ns.sr(tx * self_is, ts * src_is, dim, idx, "sum", include_self) / cnt
    # prod: the product rule over the scattered factors (no zeros among them)
    t = ns.sr(tx / x, ts / src, dim, idx, "sum", include_self)
    return out * t


SCATTER_REDUCE = Op("scatter_reduce", lambda x, src, dim, idx, reduce, include_self:
                    _sr_fwd(x, src, dim, idx, reduce, include_self), _sr_vjp, _sr_jvp,
                    saves=(0, 1), save_out=True, node="ScatterReduceBackward0",
                    names=("self", "src", "result", "dim", "index", "reduce", "include_self"))
INDEX_REDUCE = Op("index_reduce", SCATTER_REDUCE.fwd, _sr_vjp, _sr_jvp, saves=(0, 1),
                  save_out=True, names=("self", "source", "result", "dim", "index", "reduce",
                                        "include_self"))
ns_fn("sr", _sr_fwd, lambda x, src, dim, idx, reduce, include_self:
      apply(SCATTER_REDUCE, (x, src), (dim, idx, reduce, include_self)))


def _sr_prepare(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                name: str = "scatter_reduce", include_self: bool = True):
    if reduce not in _REDUCES and reduce not in ("max", "min"):
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if not isinstance(src, Tensor):
        raise TypeError(f"{name}(): argument 'src' must be Tensor, not {type(src).__name__}")
    # (complex32: PyTorch's refusal comes from the init step that include_self=False runs)
    d, idx = _scatter_checks(self, dim, index, src,
                             kernel=None if include_self else "scatter_reduce")
    return d, idx


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """``torch.scatter_reduce``: ``src`` reduced into a copy of ``input`` at ``index`` along
    ``dim`` with ``reduce`` (sum, prod, mean, amax, amin), ``input``'s own values included or
    not (``include_self``)."""
    d, idx = _sr_prepare(input, dim, index, src, reduce, include_self=include_self)
    reduce = _LEGACY.get(reduce, reduce)
    return apply(SCATTER_REDUCE, (input, src), (d, idx, reduce, bool(include_self)))


def scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    autograd_refusals(self, (src,), SCATTER_REDUCE)  # autograd first, as PyTorch
    d, idx = _sr_prepare(self, dim, index, src, reduce, "scatter_reduce_", include_self)
    reduce = _LEGACY.get(reduce, reduce)
    return inplace(SCATTER_REDUCE, self, (src,), (d, idx, reduce, bool(include_self)),
                   overlap=2)


_warned = [False]


def _ir_prepare(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str):
    if not _warned[0] or is_warn_always_enabled():   # (TORCH_WARN_ONCE)
        _warned[0] = True
        warnings.warn("index_reduce() is in beta and the API may change at any time.",
                      UserWarning, stacklevel=3)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    shape = self._data.shape
    n = len(shape)
    d = _wrap_dim(dim, n)
    ix = index._data
    if ix.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if ix.dtype not in (np.int64, np.int32):
        raise TypeError("index_reduce_(): Expected dtype int32/int64 for index but got: "
                        f"{index.dtype}")
    if self.dtype is not source.dtype:
        raise RuntimeError("index_reduce_(): self (" + _type_name(self.dtype) + ") and source ("
                           + _type_name(source.dtype) + ") must have the same scalar type")
    ss = source._data.shape
    if max(len(ss), 1) != max(n, 1):
        raise IndexError("index_reduce_(): Source/destination tensor must have same "
                         "dimensionality")
    ix = ix.reshape(-1).astype(np.int64)
    nsrc = ss[d] if ss else 1
    if ix.size != nsrc:
        raise RuntimeError(f"index_reduce_(): Number of indices ({ix.size}) should be equal to "
                           f"source.size(dim): ({nsrc}), for dim: {d}")
    size = shape[d] if shape else 1
    bad = ix[(ix < 0) | (ix >= size)]
    if bad.size:
        raise IndexError(f"index_reduce(): index contains {int(bad[0])} that is out of range "
                         f"for tensor of size {size} at dimension {d}")
    for k in range(len(ss)):
        if k != d and ss[k] != shape[k]:
            raise RuntimeError(f"index_reduce_(): self and source must have the same size in "
                               f"every dimension except dim {d}")
    if not ss:
        return d, ix.reshape(())
    full = np.broadcast_to(ix.reshape((-1,) + (1,) * (n - 1 - d)), ss)
    return d, np.ascontiguousarray(full)


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """``torch.index_reduce``: slices of ``source`` reduced into a copy of ``input`` at the
    positions ``index`` along ``dim`` (prod, mean, amax, amin)."""
    d, idx = _ir_prepare(input, dim, index, source, reduce)
    out = apply(INDEX_REDUCE, (input, source), (d, idx, reduce, bool(include_self)))
    if out.requires_grad and out.is_complex():   # (PyTorch's autograd refuses, after the op)
        raise RuntimeError("index_reduce does not support automatic differentiation for "
                           "outputs with complex dtype.")
    return out


def index_reduce_(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    autograd_refusals(self, (source,), INDEX_REDUCE)  # autograd first, as PyTorch
    d, idx = _ir_prepare(self, dim, index, source, reduce)
    return inplace(INDEX_REDUCE, self, (source,), (d, idx, reduce, bool(include_self)),
                   overlap=2)


for _name, _fn in [("select_scatter", select_scatter), ("slice_scatter", slice_scatter),
                   ("diagonal_scatter", diagonal_scatter),
                   ("as_strided_scatter", as_strided_scatter),
                   ("masked_scatter", masked_scatter), ("masked_scatter_", masked_scatter_),
                   ("put", put), ("put_", put_), ("scatter_reduce", scatter_reduce),
                   ("scatter_reduce_", scatter_reduce_), ("index_reduce", index_reduce),
                   ("index_reduce_", index_reduce_)]:
    method(_name, _fn)

# their index or mask tensors are params here, tensor arguments in PyTorch (_skips_autograd)
for _op in (MASKED_SCATTER, PUT, SCATTER_REDUCE, INDEX_REDUCE):
    _op.index_params = True
