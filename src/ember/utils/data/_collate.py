"""``default_collate`` / ``default_convert`` (``torch.utils.data._utils.collate``).

A batch is a list of samples; collation recurses through mappings, namedtuples and sequences
and turns leaves into tensors: tensors are stacked, NumPy arrays and NumPy scalars keep their
dtype, Python floats become float64, Python ints int64 (bools bool), strings stay a list.
``collate_fn_map`` lets users extend it by type, as in PyTorch.
"""
from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable

import numpy as np

from ... import _dtype
from ..._ops import creation, joining
from ..._state import STATE
from ..._tensor import Tensor, Version, _make
from .dataset import TensorDataset

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# NumPy dtypes that have no tensor counterpart: bytes, str, unicode, object.
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}"
)


def _rebuild_like(data, values: dict | list, is_map: bool):
    """A container of ``data``'s type holding ``values`` (a plain dict/list when that fails)."""
    kind = type(data)
    try:
        if is_map:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)  # keeps extra state such as defaultdict's factory
                clone.update(values)
                return clone
            return kind(values)
        if isinstance(data, collections.abc.MutableSequence):
            clone = copy.copy(data)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return kind(values)
    except TypeError:
        return dict(values) if is_map else list(values)


def default_convert(data):
    """Turn NumPy arrays and scalars inside ``data`` into tensors, keeping the structure.

    Used when automatic batching is off (``batch_size=None``).
    """
    kind = type(data)
    if isinstance(data, Tensor):
        return data
    if kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_"):
        if kind.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_like(data, {k: default_convert(data[k]) for k in data}, True)
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return kind(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # a list, as PyTorch does
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_like(data, [default_convert(d) for d in data], False)
    return data


def collate(batch, *, collate_fn_map: dict | None = None):
    """Collate ``batch`` recursively, dispatching leaves through ``collate_fn_map`` by type."""
    elem = batch[0]
    kind = type(elem)
    if collate_fn_map is not None:
        if kind in collate_fn_map:
            return collate_fn_map[kind](batch, collate_fn_map=collate_fn_map)
        for key in collate_fn_map:
            if isinstance(elem, key):
                return collate_fn_map[key](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        values = {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem}
        return _rebuild_like(elem, values, True)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return kind(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # a list, as PyTorch does
        return _rebuild_like(elem, columns, False)
    raise TypeError(default_collate_err_msg_format.format(kind))


def collate_tensor_fn(batch, *, collate_fn_map: dict | None = None):
    # PyTorch stacks into shared memory inside workers; here the batch is pickled (as a NumPy
    # array) onto the result queue instead, so a plain stack serves both cases.
    return joining.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map: dict | None = None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([creation.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map: dict | None = None):
    return creation.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map: dict | None = None):
    return creation.tensor(batch, dtype=_dtype.float64)


def collate_int_fn(batch, *, collate_fn_map: dict | None = None):
    return creation.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map: dict | None = None):
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Stack a list of samples into a batch (``torch.utils.data.default_collate``)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)


_DEFAULT_MAP = dict(default_collate_fn_map)


def tensor_dataset_batch(dataset, indices, collate_fn):
    """``collate_fn([dataset[i] for i in indices])`` for a plain TensorDataset and the default
    collation, as one row gather per tensor; None when that shortcut would not give the very
    same result (the caller then fetches sample by sample).

    default_collate stacks the rows ``t[i]`` of each tensor into a list of batch tensors: fresh,
    contiguous, of the tensor's dtype, which is what ``take`` along the first axis gives, without
    one view tensor per sample and field.
    """
    if (collate_fn is not default_collate or type(dataset).__getitem__ is not
            TensorDataset.__getitem__ or default_collate_fn_map != _DEFAULT_MAP):
        return None
    tensors = dataset.tensors
    if not tensors or not isinstance(indices, list) or not indices or STATE.inference:
        return None
    for t in tensors:
        # a tensor with a history, a tangent or inference/extra metadata takes the general
        # path (its stack records or propagates those); so do subclasses
        if (type(t) is not Tensor or t._x is not None or t._fw is not None
                or t.requires_grad or t._data.ndim == 0):
            return None
    idx = np.array(indices)
    if idx.dtype.kind != "i" or idx.ndim != 1:
        return None
    n = tensors[0]._data.shape[0]
    if idx.min() < -n or idx.max() >= n or any(t._data.shape[0] != n for t in tensors):
        return None   # the per-sample path raises PyTorch's index error
    return [_make(np.take(t._data, idx, axis=0), Version(), False, None) for t in tensors]
