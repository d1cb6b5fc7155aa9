"""Indexing: ``Tensor.__getitem__`` / ``__setitem__`` and the gather/scatter family.

Basic indexing (ints, slices, None, Ellipsis) makes views through ``views.getitem_basic``; advanced
indexing (index tensors, lists, masks) copies through the ``index`` op, whose VJP scatter-adds into
zeros. Index arrays travel as op parameters (ndarrays), never as inputs, so linear JVPs run the op
on the tangents alone. Every helper a VJP needs is registered in both namespaces (``ns_fn``), so
double backward records a graph.
"""
from __future__ import annotations

import functools
import numbers

import numpy as np

from .. import _scalar as S
from .._layout import contiguous_np as _contig_np
from .._layout import empty_np as _empty_np
from .._layout import iter_perm as _iter_perm
from .._layout import iter_strides as _iter_strides
from .._layout import torch_strides as _torch_strides
from .._tensor import Tensor, Version, _make, _wrap_dim
from ._dispatch import (
    _type_name,
    autograd_refusals,
    check_overlap,
    commit,
    inplace,
    records,
    refuse_inference,
)
from ._out import with_out
from ._registry import Op, apply, method, ns_fn, viewable, wrap_one, wrap_outputs, wrap_view
from .views import SELECT, SLICE, getitem_basic, select, slice_is_noop

__all__ = [
    "argwhere",
    "gather",
    "index_add",
    "index_copy",
    "index_fill",
    "index_put",
    "index_select",
    "masked_fill",
    "masked_select",
    "nonzero",
    "scatter",
    "scatter_add",
    "take",
    "take_along_dim",
]

_I32_64 = (np.dtype(np.int64), np.dtype(np.int32))
_INDEX_DTYPE_ERR = "tensors used as indices must be long, int, byte or bool tensors"


# the profiler turns the fast paths below off while it records (they skip Op.fwd)
_FAST = True


def _plain(a: np.ndarray) -> Tensor:
    return _make(a, Version(), False, None)


def _add_at(z: np.ndarray, key, v) -> None:
    if key == ():
        z[...] += v
    else:
        np.add.at(z, key, v)


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


# ---- advanced indexing ops ----------------------------------------------------------------

def _index_bwd_np(g, shape, key):
    z = np.zeros(shape, g.dtype)
    _add_at(z, key, g)
    return z


def _index_zero_np(g, key):
    r = np.array(g, copy=True)
    r[key] = 0
    return r


INDEX = Op("index", lambda x, key: x[key],
           lambda ns, g, need, in_shape, key: (ns.adv_backward(g, in_shape, key),),
           linear=True)


def _index_fwd(x, in_shape, key):
    """``x[key]`` laid out as PyTorch's index kernel lays its result out (its TensorIterator
    follows the source's strides, then the index tensors'), not NumPy's (indexed dims
    outermost): strides and as_strided views of the result then match."""
    out = x[key]
    if type(out) is not np.ndarray or out.ndim < 2 or type(x) is not np.ndarray:
        return out
    item = x.itemsize
    adv = [i for i, k in enumerate(key) if not isinstance(k, slice)]
    arrays = [np.asarray(key[i]) for i in adv]
    bshape = np.broadcast_shapes(*[a.shape for a in arrays])
    nb = len(bshape)
    xs = _torch_strides(x)   # (an empty source's as PyTorch reports them)
    rest = [d for d in range(x.ndim) if d not in adv]
    if adv == list(range(adv[0], adv[-1] + 1)):
        before = [d for d in rest if d < adv[0]]
        after = [d for d in rest if d > adv[-1]]
    else:   # indexed dims apart: PyTorch (like NumPy) moves the result's to the front
        before, after = [], rest
    src = [xs[d] for d in before] + [0] * nb + [xs[d] for d in after]
    # an index tensor is viewed with size-1 dims around its own (contiguous strides there):
    # broadcast, they count as zero, but where the result's size is 1 they stay
    nb_el = max(int(np.prod(bshape)), 1)
    if not out.size:
        # TensorIterator's layout, its fast setup included (every empty operand counts as
        # contiguous; for a non-empty result that setup agrees with the sorted order below)
        ishape = (1,) * len(before) + tuple(bshape) + (1,) * len(after)
        operands = [(out.shape, src)]
        for a in arrays:   # (an empty index: its PyTorch strides, broadcast dims 0)
            ta, off = _torch_strides(a), nb - a.ndim
            bst = [0] * off + [ta[i] if n == bshape[off + i] else 0
                               for i, n in enumerate(a.shape)]
            operands.append((ishape, [nb_el] * len(before) + bst + [1] * len(after)))
        strides = _iter_strides(out.shape, operands)
        nxt = 0
    else:
        operands = [src]
        pre = [nb_el if out.shape[i] == 1 else 0 for i in range(len(before))]
        post = [1 if out.shape[len(before) + nb + i] == 1 else 0 for i in range(len(after))]
        for a in arrays:
            b = np.broadcast_to(a, bshape)
            operands.append(pre + [st // max(b.itemsize, 1) for st in b.strides] + post)
        perm = _iter_perm(out.shape, operands)
        strides = [0] * out.ndim
        nxt = 1
        for d in perm:
            strides[d] = nxt
            nxt *= out.shape[d]
    bstrides = tuple(st * item for st in strides)
    if bstrides == out.strides:
        return out
    if all(n <= 1 or st == s for st, s, n in zip(bstrides, out.strides, out.shape)):
        # only size-1 dims differ: PyTorch's strides there, no copy
        return np.lib.stride_tricks.as_strided(out, out.shape, bstrides)
    buf = np.empty(max(nxt, 1), out.dtype)
    r = np.lib.stride_tricks.as_strided(buf, out.shape, bstrides)
    r[...] = out
    return r


INDEX.fwd = _index_fwd
INDEX_BACK = Op("index_backward", _index_bwd_np,
                lambda ns, g, need, shape, key: (ns.adv_get(g, key),), linear=True,
                node="IndexPutImplBackward0")


def _index_put_fwd(x, v, key, accumulate):
    out = np.array(x, copy=True)
    if accumulate:
        _add_at(out, key, v)
    else:
        out[key] = v
    return out


def _index_put_vjp(ns, g, need, key, accumulate):
    gs = None
    if need[0]:
        gs = g if accumulate else ns.adv_zero(g, key)
    return (gs, ns.adv_get(g, key) if need[1] else None)


INDEX_PUT = Op("index_put", _index_put_fwd, _index_put_vjp, linear=True)

ns_fn("adv_get", lambda x, key: x[key], lambda x, key: apply(INDEX, (x,), (x._data.shape, key)))
ns_fn("adv_backward", _index_bwd_np,
      lambda g, shape, key: apply(INDEX_BACK, (g,), (tuple(shape), key)))
ns_fn("adv_zero", _index_zero_np,
      lambda g, key: apply(INDEX_PUT, (g, _plain(np.zeros((), g._data.dtype))), (key, False)))


# ---- key parsing ---------------------------------------------------------------------------

_SEQ = (list, tuple)


def _treat_as_tuple(key) -> bool:
    """PyTorch's legacy rule: a short list holding sequences, slices, tensors, None or Ellipsis
    is a tuple of indices."""
    if isinstance(key, tuple):
        return True
    if not isinstance(key, list) or len(key) >= 32:
        return False
    for k in key:
        if isinstance(k, (Tensor, np.ndarray, list, tuple, slice)) or k is None or k is Ellipsis:
            return True
    return False


def _classify(k):
    """One index entry as (kind, value): kinds 'none', 'ellipsis', 'slice', 'int', 'bool' (a
    Python/0-dim bool), 'arr' (an integer array) or 'mask' (a bool array)."""
    if k is None:
        return "none", None
    if k is Ellipsis:
        return "ellipsis", None
    if isinstance(k, slice):
        return "slice", k
    if isinstance(k, (bool, np.bool_)):
        return "bool", bool(k)
    if isinstance(k, (numbers.Integral, np.integer)):
        return "int", int(k)
    if isinstance(k, Tensor):
        a = k._data
    elif isinstance(k, np.ndarray):
        a = k
    elif isinstance(k, (*_SEQ, range)):
        a = np.asarray(k)
        if a.size == 0 or a.dtype.kind == "f":
            a = a.astype(np.int64)
    elif isinstance(k, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(k).__name__}'")
    else:
        t = type(k)
        name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                         f"Variables are valid indices (got {name})")
    kind = a.dtype.kind
    if a.ndim == 0 and kind in "iu" and a.dtype != np.uint8:
        return "int", int(a)
    if kind == "b" or a.dtype == np.uint8:
        if a.ndim == 0:
            return "bool", bool(a)
        return "mask", a.astype(bool)
    if kind not in "iu" or a.dtype not in (np.dtype(np.int64), np.dtype(np.int32)):
        raise IndexError(_INDEX_DTYPE_ERR)
    return "arr", a


def _parse(self: Tensor, key):
    """Split ``key`` into a basic key (for getitem_basic) and the advanced entries, each with the
    dim it indexes in the basic view. Returns (items, basic_key, trivial, adv) where ``adv`` is a
    list of (dim_in_view, kind, array) and ``trivial`` says the basic key is the identity."""
    items = tuple(key) if _treat_as_tuple(key) else (key,)
    cls = [_classify(k) for k in items]
    ndim = self._data.ndim
    n_real = 0
    for kind, v in cls:
        if kind in ("int", "slice", "arr"):
            n_real += 1
        elif kind == "mask":
            n_real += v.ndim
    if n_real > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    shape = self._data.shape
    basic, adv = [], []
    trivial = True
    src = out = 0
    skip = ndim - n_real
    for kind, v in cls:
        if kind == "ellipsis":
            src += skip
            out += skip
            skip = 0   # as PyTorch: a second ellipsis stands for no dims
            basic.append(Ellipsis)
        elif kind == "none":
            basic.append(None)
            out += 1
            trivial = False
        elif kind == "bool":
            basic.append(None)
            adv.append((out, "arr", np.zeros(1 if v else 0, np.int64)))
            out += 1
            trivial = False
        elif kind == "int":
            basic.append(v)
            src += 1
            trivial = False
        elif kind == "slice":
            basic.append(v)
            v.indices(shape[src])   # (Python's errors for a slice of non-integers, step 0)
            if not slice_is_noop(v, shape[src]):
                trivial = False
            src += 1
            out += 1
        elif kind == "arr":
            basic.append(slice(None))
            adv.append((out, "arr", v))
            src += 1
            out += 1
        else:
            basic.extend([slice(None)] * v.ndim)
            adv.append((out, "mask", v))
            src += v.ndim
            out += v.ndim
    return tuple(basic), trivial, adv


def _adv_key(shape, adv) -> tuple:
    """The NumPy key (slices and int arrays) for advanced entries on a tensor of ``shape``,
    with PyTorch's checks: mask shapes, broadcastable indices, bounds."""
    key = [slice(None)] * len(shape)
    arrays = []
    last = 0
    for dim, kind, a in adv:
        if kind == "mask":
            want = shape[dim:dim + a.ndim]
            for j, s in enumerate(a.shape):
                if j >= len(want) or want[j] != s:
                    raise IndexError(
                        f"The shape of the mask {_shape_str(a.shape)} at index {j} does not "
                        f"match the shape of the indexed tensor {_shape_str(shape)} at index "
                        f"{dim + j}")
            for j, nz in enumerate(np.nonzero(a)):
                key[dim + j] = nz
                arrays.append(nz)
            last = dim + a.ndim
        else:
            size = shape[dim]
            if a.size and not (type(a) is np.ndarray and a.dtype == _I64
                               and _MAX((a + size).view(np.uint64), None) < 2 * size):
                # (the quick test: -size <= a < size is 0 <= a + size < 2 size, read unsigned)
                bad = a[(a < -size) | (a >= size)]
                if bad.size:
                    raise IndexError(
                        f"index {int(bad.flat[0])} is out of bounds for dimension {len(arrays)} "
                        f"with size {size}")
            key[dim] = a.astype(np.int64, copy=False)
            arrays.append(a)
            last = dim + 1
    try:
        if len(arrays) > 1:
            np.broadcast_shapes(*[a.shape for a in arrays])
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(_shape_str(a.shape) for a in arrays)) from None
    return tuple(key[:last])


_ZERO_DIM_INT = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                 "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")


def _getitem(self: Tensor, key) -> Tensor:
    """``Tensor.__getitem__``: views for basic indices, a copy (IndexBackward0) otherwise."""
    if type(key) is int:   # x[i], the commonest index, skips the parsing
        if not self._data.ndim:
            raise IndexError(_ZERO_DIM_INT)
        size = self._data.shape[0]
        if not -size <= key < size:
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {size}")
        d = self._data
        if _FAST and type(self) is Tensor and type(d) is np.ndarray:   # select, inlined
            if not d.size:
                d = viewable(self)
            k = (key % size,)
            return wrap_view(SELECT, self, (d.shape, k), d[k + (Ellipsis,)])
        return select(self, 0, key)
    if type(key) is slice:
        d = self._data
        if not d.ndim:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        step = key.step
        if _FAST and type(self) is Tensor and type(d) is np.ndarray and (
                step is None or step > 0):
            # x[a:b]: one SliceBackward0 view (what getitem_basic makes of a lone slice)
            shape = d.shape
            start, stop, step = key.indices(shape[0])
            k = (slice(start, stop, step),)
            if start < stop and d.size:
                return wrap_view(SLICE, self, (shape, k), d[start:stop:step])
            # (an empty result: PyTorch's stride and offset, from a source with its strides)
            return wrap_view(SLICE, self, (shape, k), SLICE.fwd(viewable(self), shape, k))
        return getitem_basic(self, (key,), lone_slice=True)
    if type(key) is Tensor:
        a = key._data
        d = self._data
        if _FAST and type(a) is np.ndarray and a.dtype is _I64 and a.ndim \
                and type(d) is np.ndarray and d.ndim and type(self) is Tensor:
            # x[index_tensor]: one advanced index on dim 0 (what _parse makes of it); NumPy's
            # own bounds check is PyTorch's (-size <= i < size): on a failure the general path
            # raises PyTorch's message
            key = (a,)
            try:
                out = _index_fwd(d, d.shape, key)
            except IndexError:
                pass
            else:
                return wrap_one(INDEX, self, (d.shape, key), out)
    basic, trivial, adv = _parse(self, key)
    if not adv:
        return getitem_basic(self, basic)
    v = self if trivial else getitem_basic(self, basic)
    k = _adv_key(v._data.shape, adv)
    return apply(INDEX, (v,), (v._data.shape, k))


def _strip_leading_ones(value: Tensor, ndim: int) -> Tensor:
    shape = value._data.shape
    i = 0
    while len(shape) - i > ndim and shape[i] == 1:
        i += 1
    return value.reshape(shape[i:]) if i else value


def _setitem(self: Tensor, key, value) -> None:
    """``Tensor.__setitem__``: in-place write through a view (CopySlices) or index_put_."""
    if isinstance(value, (list, tuple, np.ndarray)) or not isinstance(
            value, (Tensor, numbers.Number, np.generic)):
        tn = "numpy.ndarray" if isinstance(value, np.ndarray) else type(value).__name__
        raise TypeError(f"can't assign a {tn} to a ember.{self.dtype._legacy}")
    if isinstance(value, np.generic) and not isinstance(value, (np.integer, float, complex)):
        # PyTorch takes only NumPy scalars that are Python numbers (float64, complex128) or ints
        raise TypeError(f"can't assign a numpy.{type(value).__name__} to a "
                        f"ember.{self.dtype._legacy}")
    if type(key) is int and not self._data.ndim:
        raise IndexError(_ZERO_DIM_INT)
    basic, trivial, adv = _parse(self, key)
    v = self if trivial else getitem_basic(self, basic)
    if not adv:
        # as PyTorch's copy_to: equal sizes copy (CopyBackwards: x[1] = t0 with 0-dim t0),
        # else a number or a 0-dim tensor fills (FillBackward3), anything else copies
        if not isinstance(value, Tensor):
            value = _make(_number_np(S.setitem_value(value, self.dtype), self._data.dtype),
                          Version(), False, None)
        if value._data.shape == v._data.shape:
            v.copy_(value)
        elif value._data.ndim == 0:
            v.fill_(value)
        else:
            # as PyTorch's copy_to: all leading ones dropped, then expanded (a size-1 value
            # becomes a number broadcast with zero strides: it partly overlaps its own view)
            value = _strip_leading_ones(value, 0)
            v.copy_(value.expand(v._data.shape))
        return
    k = _adv_key(v._data.shape, adv)
    if isinstance(value, Tensor):
        value = _strip_leading_ones(value, 0)   # as slicePrefix1sSize: every leading 1
    else:
        value = _plain(_number_np(S.setitem_value(value, self.dtype), self._data.dtype))
    _index_put_(v, k, value, False)


def _number_np(v, npd) -> np.ndarray:
    """A 0-dim array of ``npd`` holding number ``v`` (complex32 pairs through ember._chalf:
    NumPy would put the number into both parts)."""
    if npd.names is not None:
        from .._chalf import from_values
        return from_values(v)
    return np.full((), v, npd)


def _index_put_(self: Tensor, key, values: Tensor, accumulate: bool) -> Tensor:
    refused = autograd_refusals(self, (values,), INDEX_PUT)   # before the kernel's checks
    check_overlap(self, (values,), full=True)   # before the shape/dtype checks, as PyTorch
    _check_put(self, key, values)
    out = _index_put_fwd(self._data, values._data, key, accumulate)
    if refused:
        refuse_inference(self, (values,))
    return commit(INDEX_PUT, self, (self, values), (key, accumulate), out,
                  records((self, values)))


def _check_put(self: Tensor, key, values: Tensor) -> None:
    if values._data.dtype != self._data.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_type_name(self.dtype)} for the destination and {_type_name(values.dtype)} for "
            "the source.")
    res = np.empty(self._data.shape, np.bool_)[key].shape
    vs = values._data.shape
    try:
        ok = np.broadcast_shapes(vs, res) == res
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {_shape_str(vs)} cannot be broadcast to "
            f"indexing result of shape {_shape_str(res)}")


def _put_key(self: Tensor, indices) -> tuple:
    adv = []
    dim = 0
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        kind, a = _classify(t)
        if kind == "int":
            kind, a = "arr", t._data
        elif kind == "bool":
            kind, a = "mask", t._data.astype(bool)
        adv.append((dim, kind, a))
        dim += a.ndim if kind == "mask" else 1
    ndim = self._data.ndim
    if dim > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {dim})")
    return _adv_key(self._data.shape, adv)


def index_put(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """``torch.index_put``: a copy of ``input`` with ``values`` written at ``indices``."""
    key = _put_key(input, indices)
    _check_put(input, key, values)
    return apply(INDEX_PUT, (input, values), (key, bool(accumulate)))


def index_put_(self: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """``Tensor.index_put_``."""
    return _index_put_(self, _put_key(self, indices), values, bool(accumulate))


# ---- dim-wise index helpers --------------------------------------------------------------

def _full_key(idx: np.ndarray, dim: int) -> tuple:
    """The NumPy key that reads ``a[i][j][idx[i][j]]`` style (gather/scatter) along ``dim``."""
    if idx.ndim == 0:
        return ()
    grids = list(_grids(idx.shape))
    grids[dim] = idx
    return tuple(grids)


@functools.lru_cache(maxsize=256)
def _grids(shape: tuple) -> tuple:
    """``np.ogrid`` over ``shape`` (read-only, cached: rebuilding it cost most of a small
    gather's time)."""
    out = []
    for k, n in enumerate(shape):
        g = np.arange(n).reshape((1,) * k + (n,) + (1,) * (len(shape) - k - 1))
        g.flags.writeable = False
        out.append(g)
    return tuple(out)


def _sub(a: np.ndarray, shape) -> np.ndarray:
    if a.ndim == 0:
        return a
    return a[tuple(slice(0, s) for s in shape)]


_I64 = np.dtype(np.int64)
_MAX = np.maximum.reduce


def _check_bounds(idx: np.ndarray, size: int, dim: int, prefix: str = "",
                  exc=RuntimeError) -> None:
    if idx.size:
        if type(idx) is np.ndarray and idx.dtype == _I64 and _MAX(idx.view(np.uint64), None) < size:
            return   # (negative indices read as unsigned are huge: one reduction checks both)
        bad = idx[(idx < 0) | (idx >= size)]
        if bad.size:
            raise exc(f"{prefix}index {int(bad.flat[0])} is out of bounds for dimension {dim} "
                      f"with size {size}")


def _dim_of(shape, dim: int) -> int:
    return _wrap_dim(dim, len(shape))


def _size(shape, d: int) -> int:
    return shape[d] if shape else 1


# ---- gather ------------------------------------------------------------------------------

def _gather_bwd_np(g, shape, dim, idx):
    z = np.zeros(shape, g.dtype)
    if not idx.size:   # an empty index may have another rank than the input (PyTorch allows it)
        return z
    if z.ndim != idx.ndim:   # a 0-dim input or index: one element either way
        np.add.at(z.reshape(-1), idx.reshape(-1), np.reshape(g, -1))
        return z
    _add_at(z, _full_key(idx, dim), g)
    return z


def _gather_np(x, dim, idx):
    if not idx.size:
        return np.zeros(idx.shape, x.dtype)
    if x.ndim != idx.ndim:   # a 0-dim input or index: the output has the index's shape
        return x.reshape(-1)[idx.reshape(-1)].reshape(idx.shape)
    return x[_full_key(idx, dim)]


def _gather_jvp(ns, tangents, primals, outs, dim, idx, in_shape):
    return ns.gather_arr(tangents[0], dim, idx)


# inputs (self, index): both saved, as PyTorch saves them, so changing either in place before
# backward raises its version error; the formulas use the int64 key array ``idx`` (a param)
GATHER = Op("gather", lambda x, index, dim, idx, in_shape: _gather_np(x, dim, idx),
            lambda ns, g, need, x, index, dim, idx, in_shape:
            (ns.gather_backward(g, in_shape, dim, idx), None),
            _gather_jvp, saves=(0, 1), names=("self", "index"))
GATHER_BACK = Op("gather_backward", _gather_bwd_np,
                 lambda ns, g, need, shape, dim, idx: (ns.gather_arr(g, dim, idx),), linear=True,
                 node="ScatterAddBackward0")
ns_fn("gather_arr", _gather_np,
      lambda x, dim, idx: apply(GATHER, (x, None), (dim, idx, x._data.shape)))
ns_fn("gather_backward", _gather_bwd_np,
      lambda g, shape, dim, idx: apply(GATHER_BACK, (g,), (tuple(shape), dim, idx)))


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out=None) -> Tensor:
    """``torch.gather``: ``out[i][j] = input[i][index[i][j]]`` (for dim=1)."""
    if out is None and type(input) is Tensor and type(index) is Tensor and type(dim) is int:
        d = input._data
        idx = index._data
        nd = d.ndim
        if type(d) is np.ndarray and type(idx) is np.ndarray and idx.dtype is _I64 \
                and idx.ndim == nd and nd and idx.size and -nd <= dim < nd:
            # the common call: an int64 index of the input's rank, the ogrid key read directly
            dd = dim % nd
            shape = d.shape
            ishape = idx.shape
            for k in range(nd):
                if k != dd and ishape[k] > shape[k]:
                    break
            else:
                if d.dtype.names is not None:
                    _no_chalf_kernel("gather")
                _check_bounds(idx, shape[dd], dd)
                r = d[_full_key(idx, dd)]
                if not r.flags.c_contiguous or 1 in r.shape:   # (GATHER's layout rule)
                    r = _contig_np(r)
                return wrap_outputs(GATHER, (input, index), (dd, idx.copy(), shape), r)
    if out is not None:
        return with_out(gather, out, (input, dim, index), {"sparse_grad": sparse_grad},
                        dtype="exact", overlap=("full", "partial"), inputs=(input, index),
                        resized=True)
    shape = input._data.shape
    idx = index._data
    d = _dim_of(shape, dim)
    if idx.dtype not in _I32_64 and idx.size:   # PyTorch checks non-empty indices only
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if max(idx.ndim, 1) != max(len(shape), 1) and idx.size:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(idx.ndim if idx.size else 0):
        if k != d and idx.shape[k] > _size(shape, k):
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {_shape_str(idx.shape)} "
                f"to be no larger than self {_shape_str(shape)} apart from dimension {d}")
    if idx.size and input._data.dtype.names is not None:
        _no_chalf_kernel("gather")
    _check_bounds(idx, _size(shape, d), d)
    return apply(GATHER, (input, index), (d, idx.astype(np.int64), shape))


def _no_chalf_kernel(name: str):
    """PyTorch's error for a complex32 tensor reaching its scatter/gather kernels (which have
    no ComplexHalf type; they run, and refuse, before checking the indices' bounds, and not at
    all for an empty index)."""
    from .._chalf import refuse
    refuse(name)


# ---- scatter -----------------------------------------------------------------------------

def _scatter_fwd(x, src, dim, idx, reduce):
    out = np.array(x, copy=True)
    key = _full_key(idx, dim)
    s = _sub(np.asarray(src), idx.shape) if np.ndim(src) else src
    if reduce is None:
        out[key] = s
    elif reduce == "add":
        _add_at(out, key, s)
    else:
        if key == ():
            out[...] *= s
        else:
            np.multiply.at(out, key, s)
    return out


def _scatter_zero_np(g, dim, idx):
    r = np.array(g, copy=True)
    r[_full_key(idx, dim)] = 0
    return r


def _scatter_vjp(ns, g, need, dim, idx, reduce, src_shape):
    if need[1] and idx.shape != tuple(src_shape):
        raise RuntimeError(
            "Function ScatterBackward0 returned an invalid gradient at index 1 - got "
            f"{_shape_str(idx.shape)} but expected shape compatible with {_shape_str(src_shape)}")
    return (ns.scatter_zero(g, dim, idx) if need[0] else None,
            ns.gather_arr(g, dim, idx) if need[1] else None)


def _scatter_value_vjp(ns, g, need, dim, idx, value, reduce):
    return (ns.scatter_zero(g, dim, idx),)


def _scatter_value_jvp(ns, tangents, primals, outs, dim, idx, value, reduce):
    return apply(SCATTER_VALUE, (tangents[0],), (dim, idx, 0, None))


SCATTER = Op("scatter", lambda x, src, dim, idx, reduce, src_shape:
             _scatter_fwd(x, src, dim, idx, reduce), _scatter_vjp, linear=True,
             node="ScatterBackward0")
SCATTER_VALUE = Op("scatter_value", lambda x, dim, idx, value, reduce:
                   _scatter_fwd(x, value, dim, idx, reduce), _scatter_value_vjp,
                   _scatter_value_jvp, node="ScatterBackward1")


def _no_derivative(name: str, fwd, aten: str) -> Op:
    """scatter with ``reduce``: PyTorch has no derivative, either way; a NotImplemented node
    that raises when reached, naming the aten op (``scatter`` or the in-place ``scatter_``)."""
    def vjp(ns, g, need, *a):
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")

    def jvp(ns, tangents, primals, outs, *a):
        raise NotImplementedError(
            f"Trying to use forward AD with aten::{aten} that does not support it.")
    op = Op(name, fwd, vjp, jvp, node="NotImplemented")
    op.node.name = lambda self: "ember::autograd::NotImplemented"
    return op


SCATTER_REDUCE = _no_derivative("scatter_reduce", SCATTER.fwd, "scatter")
SCATTER_REDUCE_ = _no_derivative("scatter_reduce_", SCATTER.fwd, "scatter_")
SCATTER_VALUE_REDUCE = _no_derivative("scatter_value_reduce", SCATTER_VALUE.fwd, "scatter")
SCATTER_VALUE_REDUCE_ = _no_derivative("scatter_value_reduce_", SCATTER_VALUE.fwd, "scatter_")
SCATTER_ADD = Op("scatter_add", lambda x, src, dim, idx: _scatter_fwd(x, src, dim, idx, "add"),
                 lambda ns, g, need, dim, idx: (g if need[0] else None,
                                                ns.gather_arr(g, dim, idx) if need[1] else None),
                 linear=True)
ns_fn("scatter_zero", _scatter_zero_np,
      lambda g, dim, idx: apply(SCATTER_VALUE, (g,), (dim, idx, 0, None)))


def _scatter_checks(self: Tensor, dim: int, index: Tensor, src, name="scatter", kernel=None):
    shape = self._data.shape
    idx = index._data
    d = _dim_of(shape, dim)
    if idx.dtype not in _I32_64:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor) and src._data.dtype != self._data.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if max(idx.ndim, 1) != max(len(shape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if isinstance(src, Tensor) and max(src._data.ndim, 1) != max(len(shape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    bad_self = any(k != d and idx.shape[k] > _size(shape, k) for k in range(idx.ndim))
    if isinstance(src, Tensor):
        ss = src._data.shape
        bad_src = any(idx.shape[k] > _size(ss, k) for k in range(idx.ndim))
        if bad_self or bad_src:
            raise RuntimeError(
                f"Expected index {_shape_str(idx.shape)} to be no larger than self "
                f"{_shape_str(shape)} apart from dimension {d} and to be no larger size than src "
                f"{_shape_str(ss)}")
    elif bad_self:
        raise RuntimeError(
            f"Expected index {_shape_str(idx.shape)} to be no larger than self "
            f"{_shape_str(shape)} apart from dimension {d}")
    if idx.size and self._data.dtype.names is not None:   # (complex32: ``kernel`` names it)
        _no_chalf_kernel(kernel or ("scatter" if isinstance(src, Tensor) else "scatter_value"))
    _check_bounds(idx, _size(shape, d), d)
    if len(shape) != idx.ndim:
        idx = idx.reshape(shape)
    return d, idx.astype(np.int64)


def _check_reduce(reduce):
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")


def _scatter(self: Tensor, dim, index, src=None, value=None, reduce=None, in_place=False):
    if src is None:
        src = value
    if in_place:   # PyTorch's autograd kernel refuses before the kernel checks its arguments
        autograd_refusals(self, (src,) if isinstance(src, Tensor) else (), SCATTER)
    _check_reduce(reduce)
    d, idx = _scatter_checks(self, dim, index, src)
    if isinstance(src, Tensor):
        if src._data.ndim != self._data.ndim:
            src = src.reshape(self._data.shape if not src._data.ndim else src._data.shape)
        params = (d, idx, reduce, src._data.shape)
        if in_place:
            return inplace(SCATTER if reduce is None else SCATTER_REDUCE_, self, (src,), params,
                           overlap=2)
        return apply(SCATTER if reduce is None else SCATTER_REDUCE, (self, src), params)
    if in_place:
        op = SCATTER_VALUE if reduce is None else SCATTER_VALUE_REDUCE_
        return inplace(op, self, (), (d, idx, src, reduce))
    op = SCATTER_VALUE if reduce is None else SCATTER_VALUE_REDUCE
    return apply(op, (self,), (d, idx, src, reduce))


def scatter(input: Tensor, dim: int, index: Tensor, src=None, value=None, *, reduce=None,
            out=None) -> Tensor:
    """``torch.scatter``: a copy of ``input`` with ``src`` (or a scalar) written at ``index``."""
    if out is not None:
        return with_out(scatter, out, (input, dim, index, src, value), {"reduce": reduce},
                        dtype="exact")
    return _scatter(input, dim, index, src, value, reduce)


def scatter_(self: Tensor, dim: int, index: Tensor, src=None, value=None, *,
             reduce=None) -> Tensor:
    return _scatter(self, dim, index, src, value, reduce, in_place=True)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor, *, out=None) -> Tensor:
    """``torch.scatter_add``: a copy of ``input`` with ``src`` summed in at ``index``."""
    if out is not None:
        return with_out(scatter_add, out, (input, dim, index, src), dtype="exact")
    d, idx = _scatter_checks(input, dim, index, src)
    return apply(SCATTER_ADD, (input, src), (d, idx))


def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    autograd_refusals(self, (src,), SCATTER_ADD)   # autograd's refusal first, as in PyTorch
    d, idx = _scatter_checks(self, dim, index, src)
    return inplace(SCATTER_ADD, self, (src,), (d, idx), overlap=2)


# ---- index_select / index_add / index_copy / index_fill ------------------------------------

def _dkey(dim, idx):
    return (slice(None),) * dim + (idx,)


def _index_add_np(x, src, dim, idx, alpha):
    out = np.array(x, copy=True)
    s = src if alpha == 1 else src * alpha
    if out.ndim == 0:
        out[...] += np.sum(s)
    else:
        np.add.at(out, _dkey(dim, idx), s)
    return out


def _index_add_zeros_np(g, shape, dim, idx):
    return _index_add_np(np.zeros(shape, g.dtype), g, dim, idx, 1)


def _index_select_np(x, dim, idx):
    if x.ndim == 0:   # a 0-dim input gives a 0-dim result, as in PyTorch
        return x.reshape(1)[idx].reshape(()) if idx.size == 1 else x.reshape(1)[idx]
    return np.take(x, idx, axis=dim)


def _index_fill_np(x, dim, idx, value):
    """A copy of ``x`` with the ``idx`` slices along ``dim`` set to ``value`` (a number or an
    array shaped like those slices): index_fill and index_copy alike."""
    out = np.array(x, copy=True)
    if out.ndim == 0:
        out[...] = value
    else:
        out[_dkey(dim, idx)] = value
    return out


INDEX_SELECT = Op("index_select", lambda x, dim, idx, in_shape: _index_select_np(x, dim, idx),
                  lambda ns, g, need, dim, idx, in_shape:
                  (ns.index_add_zeros(g, in_shape, dim, idx),), linear=True)
INDEX_ADD_ZEROS = Op("index_add_zeros", _index_add_zeros_np,
                     lambda ns, g, need, shape, dim, idx: (ns.index_select(g, dim, idx),),
                     linear=True, node="IndexAddBackward0")
# as PyTorch, index_add and index_copy save ``source`` when its gradient is needed (the formula
# expands to its shape), so changing it in place before backward is refused
INDEX_ADD = Op("index_add", _index_add_np,
               lambda ns, g, need, src, dim, idx, alpha:
               (g if need[0] else None,
                (ns.index_select(g, dim, idx) * alpha if alpha != 1
                 else ns.index_select(g, dim, idx)) if need[1] else None),
               saves=(1,), save_if=(1,), linear=True, names=("source",))


INDEX_COPY = Op("index_copy", lambda x, src, dim, idx: _index_fill_np(x, dim, idx, src),
                lambda ns, g, need, src, dim, idx:
                (ns.index_zero(g, dim, idx) if need[0] else None,
                 ns.index_select(g, dim, idx) if need[1] else None),
                saves=(1,), save_if=(1,), linear=True, names=("source",))
INDEX_FILL = Op("index_fill", _index_fill_np,
                lambda ns, g, need, dim, idx, value: (ns.index_zero(g, dim, idx),),
                lambda ns, tangents, primals, outs, dim, idx, value:
                apply(INDEX_FILL, (tangents[0],), (dim, idx, 0)),
                node="IndexFillBackward0")
INDEX_FILL_T = Op("index_fill_tensor",
                  lambda x, v, dim, idx: _index_fill_np(x, dim, idx, v),
                  lambda ns, g, need, dim, idx:
                  (ns.index_zero(g, dim, idx) if need[0] else None,
                   # each filled slice once, as PyTorch (which takes the unique indices)
                   ns.index_select(g, dim, np.unique(idx)) if need[1] else None),
                  linear=True, node="IndexFillBackward1")
ns_fn("index_select", _index_select_np,
      lambda g, dim, idx: apply(INDEX_SELECT, (g,), (dim, idx, g._data.shape)))
ns_fn("index_add_zeros", _index_add_zeros_np,
      lambda g, shape, dim, idx: apply(INDEX_ADD_ZEROS, (g,), (tuple(shape), dim, idx)))
ns_fn("index_zero", lambda g, dim, idx: _index_fill_np(g, dim, idx, 0),
      lambda g, dim, idx: apply(INDEX_FILL, (g,), (dim, idx, 0)))


def index_select(input: Tensor, dim: int, index: Tensor, *, out=None) -> Tensor:
    """``torch.index_select``: the slices at ``index`` (a vector) along ``dim``."""
    if out is not None:
        return with_out(index_select, out, (input, dim, index),
                        dtype="index_select(): self and result must have the same scalar type",
                        overlap="full", inputs=(input, index))
    shape = input._data.shape
    d = _dim_of(shape, dim)
    idx = index._data
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype not in (np.dtype(np.int64), np.dtype(np.int32)):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    size = _size(shape, d)
    if idx.size and ((idx < 0) | (idx >= size)).any():
        raise IndexError("index out of range in self")
    idx = idx.reshape(-1).astype(np.int64)
    return apply(INDEX_SELECT, (input,), (d, idx, shape))


def _vec_index(index: Tensor, name: str) -> np.ndarray:
    idx = index._data
    if idx.ndim > 1:
        raise IndexError(
            f"{name}(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
            f"{_type_name(index.dtype)} and size: {_shape_str(idx.shape)}")
    return idx.reshape(-1)


def _index_add_checks(self: Tensor, dim: int, index: Tensor, source: Tensor):
    shape = self._data.shape
    d = _dim_of(shape, dim)
    idx = _vec_index(index, "index_add_")
    if idx.dtype.kind not in "iu" or idx.dtype not in (np.dtype(np.int64), np.dtype(np.int32)):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{_type_name(index.dtype)}")
    ss = source._data.shape
    n = _size(ss, d) if ss else 1
    if idx.size != n:
        raise RuntimeError(
            f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
            f"({n}), for dim: {d}")
    if source._data.dtype != self._data.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_type_name(self.dtype)}) and source "
            f"({_type_name(source.dtype)}) must have the same scalar type")
    if shape and (len(ss) != len(shape) or any(
            a != b for k, (a, b) in enumerate(zip(shape, ss)) if k != d)):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(shape)} source.shape = {list(ss)}")
    if len(shape) <= 1:   # PyTorch's one-dim kernel checks as index_select does
        size = _size(shape, d)
        if idx.size and ((idx < -size) | (idx >= size)).any():
            raise IndexError("index out of range in self")
    _check_bounds(idx, _size(shape, d), d)
    return d, idx.astype(np.int64)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1,
              out=None) -> Tensor:
    """``torch.index_add``: ``input`` with ``alpha * source`` summed into the slices at
    ``index``."""
    if out is not None:
        return with_out(index_add, out, (input, dim, index, source), {"alpha": alpha},
                        dtype="exact")
    d, idx = _index_add_checks(input, dim, index, source)
    # alpha is converted to the tensor's type (an int tensor truncates 0.5 to 0), as PyTorch's
    return apply(INDEX_ADD, (input, source), (d, idx, S.to_dtype(alpha, input.dtype)))


def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    autograd_refusals(self, (source,), INDEX_ADD)   # autograd's refusal first, as in PyTorch
    d, idx = _index_add_checks(self, dim, index, source)
    return inplace(INDEX_ADD, self, (source,), (d, idx, S.to_dtype(alpha, self.dtype)), overlap=2)


def _index_copy_checks(self: Tensor, dim: int, index: Tensor, source: Tensor):
    shape = self._data.shape
    d = _dim_of(shape, dim)
    if index._data.ndim > 1:
        raise IndexError("index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index._data.ndim})")
    idx = index._data.reshape(-1)
    if idx.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_type_name(index.dtype)}")
    if source._data.dtype != self._data.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{_type_name(self.dtype)} and (source) {_type_name(source.dtype)}")
    ss = source._data.shape
    n = _size(ss, d) if ss else 1
    if idx.size != n:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to "
                         f"source.size(dim) ({n})")
    _check_bounds(idx, _size(shape, d), d, "index_copy_(): ", IndexError)
    return d, idx.copy()


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor, *, out=None) -> Tensor:
    """``torch.index_copy``: ``input`` with the slices at ``index`` replaced by ``source``."""
    if out is not None:
        return with_out(index_copy, out, (input, dim, index, source), dtype="exact")
    d, idx = _index_copy_checks(input, dim, index, source)
    return apply(INDEX_COPY, (input, source), (d, idx))


def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    autograd_refusals(self, (source,), INDEX_COPY)   # before the argument checks, as PyTorch
    d, idx = _index_copy_checks(self, dim, index, source)
    return inplace(INDEX_COPY, self, (source,), (d, idx), overlap=2)


def _index_fill_checks(self: Tensor, dim: int, index: Tensor, value):
    shape = self._data.shape
    d = _dim_of(shape, dim)
    if index._data.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    idx = index._data.reshape(-1)
    if idx.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value._data.ndim} dimension(s).")
    size = _size(shape, d)
    if idx.size:
        bad = idx[(idx < -size) | (idx >= size)]
        if bad.size:
            raise IndexError(f"index {int(bad[0])} is out of bounds for dimension {d} with size "
                             f"{size}")
    return d, idx % max(size, 1)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """``torch.index_fill``: ``input`` with the slices at ``index`` set to ``value``."""
    d, idx = _index_fill_checks(input, dim, index, value)
    if isinstance(value, Tensor):
        value = _value_as(value, input)
        return apply(INDEX_FILL_T, (input, value), (d, idx))
    return apply(INDEX_FILL, (input,), (d, idx, S.index_fill_value(value, input.dtype)))


def index_fill_(self: Tensor, dim: int, index: Tensor, value) -> Tensor:
    autograd_refusals(self, (value,) if isinstance(value, Tensor) else (),
                      INDEX_FILL_T if isinstance(value, Tensor) else INDEX_FILL)
    d, idx = _index_fill_checks(self, dim, index, value)
    if isinstance(value, Tensor):
        value = _value_as(value, self)
        return inplace(INDEX_FILL_T, self, (value,), (d, idx), overlap=0)
    return inplace(INDEX_FILL, self, (), (d, idx, S.index_fill_value(value, self.dtype)))


def _value_as(value: Tensor, like: Tensor) -> Tensor:
    return value if value._data.dtype == like._data.dtype else value.to(like.dtype)


# ---- masks -------------------------------------------------------------------------------

def _mf_fwd(x, mask, value):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    v = np.asarray(value)
    v = v.astype(x.dtype) if x.dtype.names is None else _chalf_cast(v, x.dtype)
    return np.where(mask, v, x).reshape(shape)


def _chalf_cast(v, npd):
    """``v.astype(npd)`` into complex32 pairs, which NumPy cannot cast to."""
    from .._chalf import cast
    return cast(v, npd)


def _masked_zero_np(g, mask):
    return np.where(mask, np.zeros((), g.dtype), g)


def _masked_keep_np(g, mask):
    return np.where(mask, g, np.zeros((), g.dtype))


MASKED_FILL = Op("masked_fill", _mf_fwd,
                 lambda ns, g, need, mask, value: (ns.masked_zero(g, mask),),
                 lambda ns, tangents, primals, outs, mask, value:
                 apply(MASKED_FILL, (tangents[0],), (mask, 0)))
MASKED_FILL_T = Op("masked_fill_tensor", lambda x, v, mask: _mf_fwd(x, mask, v),
                   lambda ns, g, need, mask:
                   (ns.masked_zero(g, mask) if need[0] else None,
                    ns.masked_keep(g, mask) if need[1] else None),
                   linear=True, node="MaskedFillBackward1")
ns_fn("masked_zero", _masked_zero_np, lambda g, mask: apply(MASKED_FILL, (g,), (mask, 0)))
ns_fn("masked_keep", _masked_keep_np,
      lambda g, mask: apply(MASKED_FILL, (g,), (~mask, 0)))


def _bool_mask(mask: Tensor, name: str) -> np.ndarray:
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{_c_type(mask.dtype)}")
    return m


def _c_type(d) -> str:
    from .._tensor import _scalar_name
    return _scalar_name(d)


def _broadcast_err(a, b) -> RuntimeError:
    n = max(len(a), len(b))
    for i in range(1, n + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            return RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                                f"({y}) at non-singleton dimension {n - i}")
    return RuntimeError("shape mismatch")


def _bshape(a, b):
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        raise _broadcast_err(a, b) from None


def _mf_value(value, self: Tensor):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s).")
        if value.is_complex() and not self.is_complex():
            S.to_dtype(value.item(), self.dtype)   # read as a Scalar: a nonzero imaginary part
        return _value_as(value, self)             # cannot become a real type
    return S.to_dtype(value, self.dtype)


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """``torch.masked_fill``: ``value`` where ``mask`` is True (both broadcast)."""
    m = _bool_mask(mask, "masked_fill_")
    value = _mf_value(value, input)
    _bshape(m.shape, input._data.shape)
    if isinstance(value, Tensor):
        return apply(MASKED_FILL_T, (input, value), (m,))
    return apply(MASKED_FILL, (input,), (m, value))


ns_fn("masked_fill", lambda x, mask, value: np.where(mask, value, x), masked_fill)


def masked_fill_(self: Tensor, mask: Tensor, value) -> Tensor:
    autograd_refusals(self, (value,) if isinstance(value, Tensor) else (),
                      MASKED_FILL_T if isinstance(value, Tensor) else MASKED_FILL)
    m = _bool_mask(mask, "masked_fill_")
    _bshape(self._data.shape, m.shape)
    value = _mf_value(value, self)
    if isinstance(value, Tensor):
        return inplace(MASKED_FILL_T, self, (value,), (m,), overlap=0)
    return inplace(MASKED_FILL, self, (), (m, value))


def _ms_bwd_np(g, shape, mask):
    z = np.zeros(shape, g.dtype)
    z[np.broadcast_to(mask, shape)] = g
    return z


# PyTorch's masked_select_backward takes ``self``, so it is saved (changing it in place before
# backward is refused) though only its shape is read
MASKED_SELECT = Op("masked_select",
                   lambda x, mask, shape: np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)],
                   lambda ns, g, need, x, mask, shape:
                   (ns.masked_select_backward(g, shape, mask),),
                   saves=(0,), linear=True, names=("self",))
MASKED_SELECT_BACK = Op("masked_select_backward", _ms_bwd_np,
                        lambda ns, g, need, shape, mask: (ns.masked_select_arr(g, mask),),
                        linear=True, node="MaskedScatterBackward0")
ns_fn("masked_select_arr", lambda g, mask: g[np.broadcast_to(mask, g.shape)],
      lambda g, mask: apply(MASKED_SELECT, (g,), (mask, g._data.shape)))
ns_fn("masked_select_backward", _ms_bwd_np,
      lambda g, shape, mask: apply(MASKED_SELECT_BACK, (g,), (tuple(shape), mask)))


def masked_select(input: Tensor, mask: Tensor, *, out=None) -> Tensor:
    """``torch.masked_select``: the elements where ``mask`` (broadcast) is True, as 1-D."""
    if out is not None:
        return with_out(masked_select, out, (input, mask),
                        dtype="masked_select(): self and result must have the same scalar type",
                        overlap="full")
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _bshape(m.shape, input._data.shape)
    return apply(MASKED_SELECT, (input,), (m, shape))


# ---- take / take_along_dim ---------------------------------------------------------------

def _take_bwd_np(g, shape, idx):
    z = np.zeros(int(np.prod(shape)), g.dtype)
    np.add.at(z, idx, g)
    return z.reshape(shape)


TAKE = Op("take", lambda x, idx: np.ascontiguousarray(x).reshape(-1)[idx],
          lambda ns, g, need, idx: (None,), linear=True)
TAKE_BACK = Op("take_backward", _take_bwd_np,
               lambda ns, g, need, shape, idx: (ns.take_arr(g, idx),), linear=True,
               node="PutBackward0")
# PyTorch's take_backward takes ``self``: it is saved (changed in place, backward refuses)
TAKE.vjp = lambda ns, g, need, x, idx, in_shape: (ns.take_backward(g, in_shape, idx),)
TAKE.saves, TAKE.names = (0,), ("self",)
TAKE.fwd = lambda x, idx, in_shape: np.ascontiguousarray(x).reshape(-1)[idx]
ns_fn("take_arr", lambda g, idx: np.ascontiguousarray(g).reshape(-1)[idx],
      lambda g, idx: apply(TAKE, (g,), (idx, g._data.shape)))
ns_fn("take_backward", _take_bwd_np,
      lambda g, shape, idx: apply(TAKE_BACK, (g,), (tuple(shape), idx)))


def take(input: Tensor, index: Tensor, *, out=None) -> Tensor:
    """``torch.take``: elements of the flattened input at ``index`` (shaped like index)."""
    if out is not None:
        return with_out(take, out, (input, index), dtype=(
            "take(): self and out expected to have the same dtype, but got self.dtype = {r} and "
            "out.dtype = {o}"), overlap="full")
    idx = index._data
    if idx.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_type_name(index.dtype)}")
    n = input._data.size
    if idx.size:
        if input._data.dtype.names is not None:
            _no_chalf_kernel("take")
        bad = idx[(idx < -n) | (idx >= n)]
        if bad.size:
            raise IndexError(f"out of range: tried to access index {int(bad.flat[0])} on a "
                             f"tensor of {n} elements.")
    return apply(TAKE, (input,), (idx % max(n, 1), input._data.shape))


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None, *,
                   out=None) -> Tensor:
    """``torch.take_along_dim``: gather with broadcasting (or on the flattened input)."""
    if out is not None:
        return with_out(take_along_dim, out, (input, indices, dim), dtype="exact",
                        name="gather")
    if indices._data.dtype != np.int64:
        raise RuntimeError(f"ember.take_along_dim(): dtype of indices should be Long but got "
                           f"{_type_name(indices.dtype)}")
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    shape = input._data.shape
    ishape = indices._data.shape
    if len(shape) != len(ishape):
        raise RuntimeError(
            "ember.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {len(shape)} dimensions for input, and {len(ishape)} "
            "dimensions for indices")
    d = _dim_of(shape, dim)
    if shape and type(indices._data) is np.ndarray and (indices._data < 0).any():
        # PyTorch's take_along_dim (unlike gather) takes negative indices along ``dim``
        indices = indices + (indices < 0) * shape[d]
    ss = list(shape)
    if ss:
        ss[d] = ishape[d]
    b = list(_bshape(tuple(ss), ishape))
    ind = indices.broadcast_to(tuple(b)) if tuple(b) != ishape else indices
    if b:
        b[d] = shape[d]
    # always through expand, as PyTorch's helper (ExpandBackward0 under the gather; a view of an
    # inference tensor made outside inference mode does not require grad, so nothing records)
    return gather(input.expand(tuple(b)), d, ind)


# ---- nonzero -----------------------------------------------------------------------------

def nonzero(input: Tensor, *, out=None, as_tuple: bool = False):
    """``torch.nonzero``: the indices of non-zero elements, as rows or (as_tuple) columns."""
    if out is not None:
        return with_out(nonzero, out, (input,), {"as_tuple": as_tuple}, differentiable=False,
                        dtype="nonzero: Expected out tensor to have scalar type Long but got "
                              "scalar type{o}")
    d = input._data
    if as_tuple:
        a = d.reshape(1) if d.ndim == 0 else d
        return tuple(_plain(np.ascontiguousarray(i, np.int64)) for i in np.nonzero(a))
    # PyTorch fills a (ndim, n) row-major buffer and returns its transpose: strides (1, n)
    if d.ndim == 0:
        n = 1 if np.count_nonzero(d) else 0
        return _plain(_empty_np((n, 0), (1, n), np.int64))
    nz = np.nonzero(d)
    r = _empty_np((d.ndim, nz[0].size), (nz[0].size, 1), np.int64)
    for i, c in enumerate(nz):
        r[i] = c
    return _plain(r.T)


def argwhere(input: Tensor) -> Tensor:
    """``torch.argwhere``."""
    return nonzero(input)


# ---- method registration -----------------------------------------------------------------

# ops whose index or mask tensors are params here but tensor arguments in PyTorch: a call on an
# inference tensor outside inference mode still records there (see _registry._skips_autograd)
for _op in (INDEX, INDEX_PUT, INDEX_SELECT, INDEX_ADD, INDEX_COPY, INDEX_FILL, INDEX_FILL_T,
            MASKED_FILL, MASKED_FILL_T, MASKED_SELECT, TAKE, SCATTER, SCATTER_VALUE, SCATTER_ADD,
            SCATTER_REDUCE_):
    _op.index_params = True


def _method_scatter(self, dim, index, src=None, value=None, *, reduce=None):
    return _scatter(self, dim, index, src, value, reduce)


for _name, _fn in [("__getitem__", _getitem), ("__setitem__", _setitem), ("gather", gather),
                   ("scatter", _method_scatter), ("scatter_", scatter_),
                   ("scatter_add", scatter_add), ("scatter_add_", scatter_add_),
                   ("index_select", index_select), ("masked_fill", masked_fill),
                   ("masked_fill_", masked_fill_), ("masked_select", masked_select),
                   ("take_along_dim", take_along_dim), ("take", take),
                   ("index_add", index_add), ("index_add_", index_add_),
                   ("index_copy", index_copy), ("index_copy_", index_copy_),
                   ("index_fill", index_fill), ("index_fill_", index_fill_),
                   ("index_put", index_put), ("index_put_", index_put_),
                   ("nonzero", nonzero), ("argwhere", argwhere)]:
    method(_name, _fn)
