"""Storages: ``Tensor.untyped_storage()``, ``Tensor.storage()``, ``Tensor.set_`` and
``copy.deepcopy`` of tensors that share memory, as PyTorch's.

A tensor's storage is the NumPy array owning its memory (``_tensor._root``); a storage object
is a byte view of it. ``data_ptr()`` relations are PyTorch's: a storage's pointer is where its
memory starts, a tensor's pointer is that plus ``storage_offset() * element_size()``.
"""
from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import _dtype as D
from . import _layout as _L
from ._tensor import Tensor, Version, _address, _make, _root, _scalar_name, raw_data

__all__ = ["TypedStorage", "UntypedStorage"]


def _bytes_of(root: np.ndarray) -> np.ndarray:
    """The 1-D uint8 view of a buffer-owning array (its memory is one block)."""
    flat = root.ravel(order="K")
    if flat.size and not np.shares_memory(flat, root):  # pragma: no cover - never for a root
        raise RuntimeError("ember: a tensor's memory is not one block")
    return flat.view(np.uint8)


class UntypedStorage:
    """``torch.UntypedStorage``: the bytes under one or more tensors."""

    __slots__ = ("__weakref__", "_bytes", "_root")

    def __init__(self, root: np.ndarray):
        self._root = root
        self._bytes = _bytes_of(root)

    @property
    def device(self):
        from ._device import CPU
        return CPU

    @property
    def is_cuda(self) -> bool:
        return False

    def data_ptr(self) -> int:
        return _address(self._root) if self._bytes.size else 0

    def nbytes(self) -> int:
        return self._bytes.size

    def size(self) -> int:
        return self._bytes.size

    __len__ = size

    def element_size(self) -> int:
        return 1

    def is_shared(self) -> bool:
        return False

    filename = None

    def __getitem__(self, i):
        if isinstance(i, slice):
            return UntypedStorage(self._bytes[i].copy())
        return int(self._bytes[i])

    def __setitem__(self, i, v) -> None:
        self._bytes[i] = v

    def tolist(self) -> list:
        return self._bytes.tolist()

    def cpu(self) -> UntypedStorage:
        return self

    def clone(self) -> UntypedStorage:
        return UntypedStorage(self._bytes.copy())

    def fill_(self, value: int) -> UntypedStorage:
        self._bytes[...] = value
        return self

    def __copy__(self) -> UntypedStorage:
        return UntypedStorage(self._root)

    def __deepcopy__(self, memo) -> UntypedStorage:
        return self.clone()

    def __repr__(self) -> str:
        body = "\n".join(f" {b}" for b in self._bytes.tolist())
        head = body + "\n" if body else ""
        return f"{head}[ember.storage.UntypedStorage(device=cpu) of size {self._bytes.size}]"


class TypedStorage:
    """``torch.TypedStorage`` (deprecated in PyTorch, which warns on ``Tensor.storage()``):
    the storage's bytes read as elements of ``dtype``."""

    __slots__ = ("_untyped_storage", "dtype")

    def __init__(self, untyped: UntypedStorage, dtype: D.dtype):
        self._untyped_storage = untyped
        self.dtype = dtype

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def _elems(self) -> np.ndarray:
        b = self._untyped_storage._bytes
        n = b.size // self.dtype.itemsize
        return b[:n * self.dtype.itemsize].view(self.dtype.np)

    @property
    def device(self):
        return self._untyped_storage.device

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    __len__ = size

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def __getitem__(self, i):
        v = self._elems()[i]
        return v.item() if isinstance(i, int) else TypedStorage(UntypedStorage(v.copy()),
                                                                self.dtype)

    def __setitem__(self, i, v) -> None:
        self._elems()[i] = v

    def tolist(self) -> list:
        return self._elems().tolist()

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        head = body + "\n" if body else ""
        return (f"{head}[ember.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size "
                f"{self.size()}]")


_CACHE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def untyped_storage(self: Tensor) -> UntypedStorage:
    """``Tensor.untyped_storage()``: the same object while it is alive, as in PyTorch."""
    if self.is_meta:
        raise NotImplementedError("ember's meta tensors have no storage to return")
    root = _root(raw_data(self))
    s = _CACHE.get(id(root))
    if s is None or s._root is not root:
        s = _CACHE[id(root)] = UntypedStorage(root)
    return s


def storage(self: Tensor) -> TypedStorage:
    """``Tensor.storage()``, with PyTorch's deprecation warning."""
    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
        "the only storage class. This should only matter to you if you are using storages "
        "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
        "tensor.storage()", UserWarning, stacklevel=2)
    return TypedStorage(untyped_storage(self), self.dtype)


def _contig(size) -> tuple:
    out, acc = [], 1
    for s in reversed(size):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))


def _over(st: UntypedStorage, dtype: D.dtype, offset: int, size, stride) -> np.ndarray:
    """An array of ``dtype`` over storage ``st`` (PyTorch's setStorage). A storage too small is
    refused: PyTorch grows it in place, which NumPy memory cannot do."""
    item = dtype.itemsize
    size = tuple(int(s) for s in size)
    stride = _contig(size) if stride is None else tuple(int(s) for s in stride)
    if len(stride) != len(size):
        raise RuntimeError("mismatch in length of strides and shape")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need * item > st.nbytes():
        raise NotImplementedError(
            f"ember cannot grow a storage in place: sizes {list(size)}, strides {list(stride)}, "
            f"storage offset {offset} and itemsize {item} need {need * item} bytes, the storage "
            f"has {st.nbytes()}")
    b = st._bytes
    n = (b.size // item) * item
    base = b[:n].view(dtype.np) if n else np.empty(0, dtype.np)
    r = np.lib.stride_tricks.as_strided(base[offset:] if base.size else base, size,
                                        tuple(s * item for s in stride))
    if need == 0 and not any(stride):
        _L.keep_zero_strides(r)   # (PyTorch's zero strides, not NumPy's fresh empty array's)
    return r


def set_(self: Tensor, source=None, storage_offset: int = 0, size=None, stride=None) -> Tensor:
    """``Tensor.set_``: make this tensor look at another tensor's memory, at a storage, or at a
    fresh empty storage (no arguments). It is an in-place change (version bump, autograd's
    refusals); the result is no view of anything."""
    from ._ops._dispatch import check_inplace
    from ._ops.views import _shape_arg
    if type(self) is not Tensor:
        raise NotImplementedError("ember's set_ works on plain tensors, not on conj/neg views")
    check_inplace(self)
    dt = self.dtype
    if source is None:
        new = np.empty((0,), dt.np)
    elif isinstance(source, Tensor):
        if source.dtype is not dt:
            raise RuntimeError(f"Could not set tensor of type {_scalar_name(source.dtype)} to a "
                               f"tensor of type {_scalar_name(dt)}")
        if type(source) is not Tensor:
            raise NotImplementedError("ember's set_ cannot take a conj/neg view as its source")
        if size is None:
            if storage_offset or stride is not None:
                raise TypeError("set_(): with a Tensor source, storage_offset and stride are "
                                "taken only together with size")
            new = raw_data(source)
        else:   # PyTorch counts the offset from the source's own storage offset
            new = _over(untyped_storage(source), dt, source.storage_offset() + int(
                storage_offset), _shape_arg((size,)), stride)
    else:
        if isinstance(source, TypedStorage):
            if source.dtype is not dt:
                raise RuntimeError(
                    f"Expected a Storage of type {_scalar_name(dt)} or an UntypedStorage, but "
                    f"got type {D.type_name(source.dtype)} for argument 1 'storage'")
            source = source._untyped_storage
        if not isinstance(source, UntypedStorage):
            raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not "
                            f"{type(source).__name__}")
        if size is None:
            size = (source.nbytes() // dt.itemsize - storage_offset,)
        new = _over(source, dt, int(storage_offset), _shape_arg((size,)), stride)
    self._data = new
    _set_history(self, (source,) if isinstance(source, Tensor) else ())
    return self


_SET_OP = None


def _set_history(self: Tensor, others: tuple) -> None:
    """Bump the version; when recording, the history PyTorch gives ``set_``, which has no
    derivative: a NotImplemented node (edges to self and a Tensor source; through CopySlices
    for a view) that raises when backward reaches it."""
    global _SET_OP
    from ._ops._dispatch import commit, records
    from ._ops._registry import Op
    if not records((self,) + others):
        self._vc.v += 1
        return
    if _SET_OP is None:
        def vjp(ns, g, need, *a):
            raise RuntimeError("derivative for set_ is not implemented")
        _SET_OP = Op("set_", lambda *a: None, vjp, node="NotImplemented")
        _SET_OP.node.name = lambda node: "ember::autograd::NotImplemented"
    commit(_SET_OP, self, (self,) + others, (), None, True, write=False)


def tensor_deepcopy(self: Tensor, memo: dict) -> Tensor:
    """``copy.deepcopy`` of a tensor as PyTorch's: the storage is copied once per deepcopy call
    (memo), so tensors that shared memory share the copied memory, at the same offsets and
    strides; each copy is a fresh leaf with its own version counter."""
    d = self._data
    root = _root(d)
    key = ("ember.storage", id(root))
    new_st = memo.get(key)
    if new_st is None:
        new_st = memo[key] = UntypedStorage(root).clone()
        memo.setdefault(id(memo), []).append(root)   # keep the id meaningful (copy's keep-alive)
    data = _over(new_st, self.dtype, self.storage_offset(), d.shape, self.stride())
    vc = Version()
    vc.v = 1    # PyTorch builds the copy with set_, an in-place change
    return _make(data, vc, self._rg, None)


def install() -> None:
    Tensor.untyped_storage = untyped_storage
    Tensor.storage = storage
    Tensor.set_ = set_
