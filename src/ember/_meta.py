"""The 'meta' device: arrays that carry shape and dtype but no data.

A meta tensor's ``_data`` is a ``MetaArray``: a zero-strided view of one zero, so it costs no
memory whatever its shape. NumPy functions and ufuncs on it run on those zeros and hand back
another MetaArray, so every op works on meta tensors and yields meta tensors with the right shape
and dtype. (The intermediate result is materialised once per op, so very large meta shapes still
allocate while an op runs.)
"""
from __future__ import annotations

import numpy as np

__all__ = ["MetaArray", "meta_like"]


class MetaArray(np.ndarray):
    """An ndarray subclass marking data that does not exist."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            kwargs["out"] = tuple(_plain(o) for o in kwargs["out"])
        r = getattr(ufunc, method)(*(_plain(i) for i in inputs), **kwargs)
        return _rewrap(r)

    def __array_function__(self, func, types, args, kwargs):
        r = func(*_plain_tree(args), **{k: _plain_tree(v) for k, v in kwargs.items()})
        return _rewrap(r)


def meta_like(shape, dtype) -> MetaArray:
    """A MetaArray of this shape and NumPy dtype."""
    return np.broadcast_to(np.zeros((), dtype), shape).view(MetaArray)


def _plain(a):
    return a.view(np.ndarray) if isinstance(a, MetaArray) else a


def _plain_tree(x):
    if isinstance(x, MetaArray):
        return x.view(np.ndarray)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain_tree(i) for i in x)
    return x


def _rewrap(r):
    if isinstance(r, tuple):
        return tuple(_rewrap(x) for x in r)
    if isinstance(r, (np.ndarray, np.generic)):
        return meta_like(np.shape(r), r.dtype)
    return r
