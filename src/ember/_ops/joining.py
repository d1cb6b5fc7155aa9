"""Joining and rearranging ops: cat, stack (and the h/v/d/column stacks), repeat, tile, flip,
roll. All are linear, so their forward-mode rule is the op run on the tangents."""
from __future__ import annotations

import numbers

import numpy as np

from .. import _chalf
from .. import _dtype as D
from .. import _layout as _L
from .._tensor import Tensor, _wrap_dim
from ._out import with_out
from ._registry import Op, apply, method, ns_fn, wrap_outputs, wrap_two
from .views import _ABSENT, kw_form

__all__ = [
    "cat",
    "column_stack",
    "concat",
    "concatenate",
    "dstack",
    "flip",
    "fliplr",
    "flipud",
    "hstack",
    "repeat",
    "roll",
    "row_stack",
    "stack",
    "tile",
    "vstack",
]


# ---- cat -----------------------------------------------------------------------------------

def _cat_fwd(*args):
    *arrs, dim, _bounds, skip, npd = args
    parts = [a if a.dtype == npd else _cast(a, npd) for a, s in zip(arrs, skip) if not s]
    if not parts:
        return np.empty((0,), npd)
    return _L.concat(parts, dim)   # PyTorch's output layout, not NumPy's


# the profiler turns the fast paths below off while it records (they skip Op.fwd)
_FAST = True


def _cat_vjp(ns, g, need, dim, bounds, skip, npd):
    res = []
    for k, ((a, b), s) in enumerate(zip(bounds, skip)):
        if not need[k]:
            res.append(None)
        elif s:
            res.append(ns.zeros_of(g, (0,)))
        else:
            res.append(ns.basic_get(g, (slice(None),) * dim + (slice(a, b),)))
    return tuple(res)


_CAT_OPS: dict = {}


def _cat_op(name: str) -> Op:
    op = _CAT_OPS.get(name)
    if op is None:
        op = _CAT_OPS[name] = Op(name, _cat_fwd, _cat_vjp, linear=True)
    return op


def _tensor_seq(tensors, fname: str) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fname}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return list(tensors)


def _cat_out(rd, od) -> None:
    if not D.can_cast(rd, od):
        from ._dispatch import _type_name
        raise TypeError(f"ember.cat(): input types can't be cast to the desired output type "
                        f"{_type_name(od)}")


_LIST_TUPLE = (list, tuple)


def _cat_fast(tensors, dim: int):
    """``cat`` of plain tensors of one dtype and rank (at least one dim, none of them the
    skipped 1-D empty kind) whose sizes agree off ``dim``; None for anything else (the
    general path, which raises PyTorch's errors)."""
    t0 = tensors[0]
    if not _FAST or type(t0) is not Tensor:
        return None
    d0 = t0._data
    nd = d0.ndim
    if type(d0) is not np.ndarray or not nd or not -nd <= dim < nd:
        return None
    dt = d0.dtype
    d = dim % nd
    rs = d0.shape
    pre, post = rs[:d], rs[d + 1:]
    arrs = []
    bounds = []
    pos = 0
    for t in tensors:
        if type(t) is not Tensor:
            return None
        a = t._data
        if type(a) is not np.ndarray or a.dtype is not dt:
            return None
        sh = a.shape
        if len(sh) != nd or sh[:d] != pre or sh[d + 1:] != post or sh == (0,):
            return None
        n = sh[d]
        bounds.append((pos, pos + n))
        pos += n
        arrs.append(a)
    ts = tuple(tensors)
    params = (d, tuple(bounds), (False,) * len(ts), dt)
    if len(ts) == 2:
        return wrap_two(_CAT, ts[0], ts[1], params, _L.concat(arrs, d))
    return wrap_outputs(_CAT, ts, params, _L.concat(arrs, d))


_CAT = _cat_op("cat")


def cat(tensors, dim: int = 0, *, out=None) -> Tensor:
    """``torch.cat``: join along an existing dim, promoting dtypes; 1-D empty tensors are
    skipped as in PyTorch."""
    if out is None and type(tensors) in _LIST_TUPLE and tensors and type(dim) is int:
        r = _cat_fast(tensors, dim)
        if r is not None:
            return r
    if out is not None:
        return with_out(cat, out, (tensors, dim), dtype=_cat_out, overlap="full",
                        resized=True)
    ts = _tensor_seq(tensors, "cat")
    if not ts:
        raise ValueError("ember.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(ts):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    skip = [t._data.shape == (0,) for t in ts]
    ref = next((t for t, s in zip(ts, skip) if not s), None)
    rt = ts[0].dtype if len(ts) == 1 else D.result_type_of(tuple(ts))
    if ref is None:
        d = _wrap_dim(dim, 1)
        bounds = [(0, 0)] * len(ts)
        return apply(_cat_op("cat"), tuple(ts), (d, tuple(bounds), tuple(skip), rt.np))
    rs = ref._data.shape
    d = _wrap_dim(dim, len(rs))
    bounds, pos = [], 0
    for i, (t, s) in enumerate(zip(ts, skip)):
        if s:
            bounds.append((pos, pos))
            continue
        sh = t._data.shape
        if len(sh) != len(rs):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(rs)} and "
                               f"{len(sh)}")
        for k, (x, y) in enumerate(zip(rs, sh)):
            if k != d and x != y:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {x} but "
                    f"got size {y} for tensor number {i} in the list.")
        bounds.append((pos, pos + sh[d]))
        pos += sh[d]
    return apply(_cat_op("cat"), tuple(ts), (d, tuple(bounds), tuple(skip), rt.np))


concat = concatenate = cat


# ---- stack ---------------------------------------------------------------------------------

def _stack_fwd(*args):
    *arrs, dim, npd = args
    return _L.stack([a if a.dtype == npd else a.astype(npd) for a in arrs], dim)


def _stack_vjp(ns, g, need, dim, npd):
    return tuple(ns.basic_get(g, (slice(None),) * dim + (k,)) if n else None
                 for k, n in enumerate(need))


STACK = Op("stack", _stack_fwd, _stack_vjp, linear=True)


def stack(tensors, dim: int = 0, *, out=None) -> Tensor:
    """``torch.stack``: join equal-shaped tensors along a new dim."""
    if out is not None:
        return with_out(stack, out, (tensors, dim), dtype=_cat_out)
    ts = _tensor_seq(tensors, "stack")
    if not ts:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = ts[0]._data.shape
    for i, t in enumerate(ts[1:], 1):
        if t._data.shape != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(s0)} at "
                               f"entry 0 and {list(t._data.shape)} at entry {i}")
    d = _wrap_dim(dim, len(s0) + 1)
    rt = ts[0].dtype if len(ts) == 1 else D.result_type_of(tuple(ts))
    return apply(STACK, tuple(ts), (d, rt.np))


def _atleast(t: Tensor, n: int) -> Tensor:
    nd = t._data.ndim
    if nd >= n:
        return t
    if n == 1:
        return t.reshape(1)
    if n == 2:
        return t.reshape(1, -1) if nd == 1 else t.reshape(1, 1)
    if nd == 0:
        return t.reshape(1, 1, 1)
    if nd == 1:
        return t.reshape(1, -1, 1)
    return t.unsqueeze(-1)


def _nonempty(tensors, name: str) -> list:
    ts = _tensor_seq(tensors, name)
    if not ts:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return ts


def hstack(tensors, *, out=None) -> Tensor:
    """``torch.hstack``: cat along dim 1 (dim 0 for 1-D inputs)."""
    if out is not None:
        return with_out(hstack, out, (tensors,), dtype=_cat_out, name="cat")
    ts = [_atleast(t, 1) for t in _nonempty(tensors, "hstack")]
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1)


def vstack(tensors, *, out=None) -> Tensor:
    """``torch.vstack``: cat along dim 0 after making inputs at least 2-D."""
    if out is not None:
        return with_out(vstack, out, (tensors,), dtype=_cat_out, name="cat")
    return cat([_atleast(t, 2) for t in _nonempty(tensors, "vstack")], 0)


row_stack = vstack


def dstack(tensors, *, out=None) -> Tensor:
    """``torch.dstack``: cat along dim 2 after making inputs at least 3-D."""
    if out is not None:
        return with_out(dstack, out, (tensors,), dtype=_cat_out, name="cat")
    return cat([_atleast(t, 3) for t in _nonempty(tensors, "dstack")], 2)


def column_stack(tensors, *, out=None) -> Tensor:
    """``torch.column_stack``: 0-/1-D inputs become columns, then hstack."""
    if out is not None:
        return with_out(column_stack, out, (tensors,), dtype=_cat_out, name="cat")
    ts = _nonempty(tensors, "column_stack")
    return hstack([t.reshape(-1, 1) if t._data.ndim <= 1 else t for t in ts])


ns_fn("cat", lambda parts, dim: np.concatenate(parts, axis=dim), lambda parts, dim: cat(parts, dim))
ns_fn("stack", lambda parts, dim: np.stack(parts, axis=dim), lambda parts, dim: stack(parts, dim))


# ---- repeat / tile -------------------------------------------------------------------------

def _repeat_fwd(x, reps, in_shape):
    pad = (1,) * (len(reps) - x.ndim) + x.shape
    return np.tile(x.reshape(pad), reps)


def _sum_axes_np(g, axes):
    return g.sum(axis=axes)


def _sum_axes_em(g, axes):
    return g.sum(dim=axes)


ns_fn("sum_axes", _sum_axes_np, _sum_axes_em)


def _repeat_vjp(ns, g, need, reps, in_shape):
    if 0 in reps:   # as PyTorch's repeat_backward: fresh zeros, no graph through them
        return (ns.zeros_of(g, tuple(in_shape)),)
    pad = (1,) * (len(reps) - len(in_shape)) + tuple(in_shape)
    inter, axes = [], []
    for k, (r, s) in enumerate(zip(reps, pad)):
        if r != 1:
            axes.append(len(inter))
            inter.append(r)
        inter.append(s)
    if axes:
        g = ns.sum_axes(g.reshape(tuple(inter)), tuple(axes))
    return (g.reshape(tuple(in_shape)),)


REPEAT = Op("repeat", _repeat_fwd, _repeat_vjp, linear=True)


def _ints(args) -> tuple:
    if len(args) == 1 and not isinstance(args[0], numbers.Integral):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


def repeat(self: Tensor, *sizes, repeats=_ABSENT) -> Tensor:
    """``Tensor.repeat``: tile the tensor ``sizes`` times along each dim (leading dims added)."""
    sizes = kw_form(sizes, repeats, "repeats", "repeat")
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    reps = _ints(sizes)
    shape = self._data.shape
    if len(reps) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    pad = (1,) * (len(reps) - len(shape)) + shape
    out = [r * s for r, s in zip(reps, pad)]
    for o in out:
        if o < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {o}: {out}")
    return apply(REPEAT, (self,), (reps, shape))


def tile(input: Tensor, dims) -> Tensor:
    """``torch.tile``: repeat with ``dims`` padded by leading ones to the input's rank."""
    reps = _ints((dims,)) if not isinstance(dims, numbers.Integral) else (int(dims),)
    nd = input._data.ndim
    if len(reps) < nd:
        reps = (1,) * (nd - len(reps)) + reps
    return repeat(input, reps)


# ---- flip / roll ---------------------------------------------------------------------------

def _flip_fwd(x, dims):
    return np.flip(x, dims).copy() if dims and x.ndim else x.copy()


FLIP = Op("flip", _flip_fwd, lambda ns, g, need, dims: (ns.flip(g, dims) if g.ndim else g,),
          linear=True)


def _flip_dims(dims, nd) -> tuple:
    ds = [_wrap_dim(d, nd) for d in dims]
    seen = set()
    for d in ds:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return tuple(ds)


def flip(input: Tensor, dims) -> Tensor:
    """``torch.flip``: reverse the order along ``dims`` (a copy)."""
    if isinstance(dims, numbers.Integral):
        raise TypeError("flip(): argument 'dims' (position 2) must be tuple of ints, not int")
    dims = _flip_dims(tuple(dims), input._data.ndim)
    if input._data.dtype is _chalf.CH and input._data.size and input._data.ndim - 1 in dims:
        _chalf.refuse("flip")   # PyTorch's kernel flipping the innermost dim lacks ComplexHalf
    return apply(FLIP, (input,), (dims,))


def _flip_method(self: Tensor, *args, dims=_ABSENT) -> Tensor:
    dims = kw_form(args, dims, "dims", "flip")
    if not dims:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    return flip(self, _ints(dims))


def _tile_method(self: Tensor, *args, dims=_ABSENT) -> Tensor:
    return tile(self, _ints(kw_form(args, dims, "dims", "tile")))


def fliplr(input: Tensor) -> Tensor:
    """``torch.fliplr``: flip dim 1."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return apply(FLIP, (input,), ((1,),))


def flipud(input: Tensor) -> Tensor:
    """``torch.flipud``: flip dim 0."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return apply(FLIP, (input,), ((0,),))


ns_fn("flip", lambda g, dims: np.flip(g, dims) if dims else g,
      lambda g, dims: apply(FLIP, (g,), (dims,)))


def _roll_fwd(x, shifts, dims):
    if x.size == 0:
        return x.copy()
    return np.roll(x, shifts, axis=dims)


def _neg(shifts):
    return tuple(-s for s in shifts)


ROLL = Op("roll", _roll_fwd,
          lambda ns, g, need, shifts, dims: (ns.roll(g, _neg(shifts), dims),), linear=True)
ns_fn("roll", lambda g, shifts, dims: _roll_fwd(g, shifts, dims),
      lambda g, shifts, dims: apply(ROLL, (g,), (shifts, dims)))


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """``torch.roll``: rotate elements along ``dims`` (the flattened tensor when None)."""
    sh = (int(shifts),) if isinstance(shifts, numbers.Integral) else tuple(int(s) for s in shifts)
    if dims is None:
        ds = ()
    elif isinstance(dims, numbers.Integral):
        ds = (int(dims),)
    else:
        ds = tuple(int(d) for d in dims)
    if not sh:
        raise RuntimeError("`shifts` required")
    if not ds and len(sh) == 1:
        return apply(ROLL, (input,), (sh, None))
    if len(sh) != len(ds):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
    nd = input._data.ndim
    if nd == 0:   # PyTorch wraps roll's dims without treating a 0-dim tensor as 1-dim
        raise IndexError(f"Dimension specified as {ds[0]} but tensor has no dimensions")
    ds = tuple(_wrap_dim(d, nd) for d in ds)
    return apply(ROLL, (input,), (sh, ds))


# ---- methods -------------------------------------------------------------------------------

method("repeat", repeat)
method("tile", _tile_method)
method("flip", _flip_method)
method("fliplr", fliplr)
method("flipud", flipud)
method("roll", lambda self, shifts, dims=None: roll(self, shifts, dims))


def _cast(a: np.ndarray, npd) -> np.ndarray:
    """``a.astype(npd)``; complex32 pairs through ember._chalf (NumPy cannot cast them)."""
    if a.dtype == _chalf.CH or npd == _chalf.CH:
        return _chalf.cast(a, npd)
    return a.astype(npd)
