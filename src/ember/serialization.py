"""``ember.save`` / ``ember.load``: PyTorch's checkpoint format, read and written without torch.

A checkpoint is the zip archive ``torch.save`` writes (PyTorch >= 1.6): ``<name>/data.pkl`` holds
the pickled object structure, in which every tensor is a call of ``torch._utils._rebuild_tensor_v2``
over a storage named by a *persistent id* ``("storage", torch.FloatStorage, key, "cpu", numel)``;
``<name>/data/<key>`` holds that storage's raw bytes, aligned to 64 bytes in the file as PyTorch's
writer aligns them; ``.format_version``, ``.storage_alignment``, ``byteorder``, ``version`` and
``.data/serialization_id`` complete it. ember writes the same names (``torch._utils...``,
``torch.FloatStorage``, ``torch.float32``) so that PyTorch reads ember's files, and maps those names
back onto ember's own objects when reading, so ember reads PyTorch's files; torch is never imported.

A storage here is the memory NumPy owns under a tensor (the root of its base chain): views saved
together are written once and come back as views of one buffer, with their offsets and strides.

Loading is safe by default (``weights_only=True``, PyTorch 2.6+'s default): the unpickler resolves
only an allowlist of globals (tensor rebuilders, storage types, dtypes, ``Size``, ``device``,
``OrderedDict``/``Counter``/``set``/``bytearray``/``complex``/bytes, and what the user allowlists
through ``add_safe_globals``). Anything else is refused at the ``GLOBAL`` opcode that names it,
before any call could use it, with PyTorch's ``pickle.UnpicklingError`` text.
"""
from __future__ import annotations

import _compat_pickle
import collections
import io
import math
import mmap as _mmap
import os
import pickle
import re
import struct
import sys
import warnings
import zlib
from typing import Any, Callable

import numpy as np

from . import _dtype as D
from ._device import device as _Device
from ._meta import MetaArray, meta_like
from ._size import Size
from ._tensor import Tensor, Version, _address, _contiguous_strides, _make, _root

__all__ = [
    "DEFAULT_PROTOCOL",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]

DEFAULT_PROTOCOL = 2
_ALIGN = 64
_U32 = 0xFFFFFFFF

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


# =========================================================================================
# user allowlist (torch.serialization.add_safe_globals & co)
# =========================================================================================

_marked_safe_globals: set = set()


def add_safe_globals(safe_globals: list) -> None:
    """Mark functions/classes (or ``(obj, "module.qualname")`` pairs) as safe for
    ``weights_only`` loading (``torch.serialization.add_safe_globals``)."""
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals | set(safe_globals)


def get_safe_globals() -> list:
    """The user-added globals that are safe for ``weights_only`` loading."""
    return list(_marked_safe_globals)


def clear_safe_globals() -> None:
    """Forget every user-added safe global."""
    global _marked_safe_globals
    _marked_safe_globals = set()


class safe_globals:
    """Context manager adding globals as safe for ``weights_only`` loading while it is active
    (``torch.serialization.safe_globals``)."""

    def __init__(self, safe_globals: list):
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc) -> None:
        global _marked_safe_globals
        _marked_safe_globals = _marked_safe_globals - set(self.safe_globals)


def _user_allowed_globals() -> dict:
    rc = {}
    for f in _marked_safe_globals:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full path), "
                                 f"but got tuple of length: {len(f)}")
            if type(f[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full path, "
                                f"but got: {type(f[1])}")
            rc[f[1]] = f[0]
        else:
            rc[f"{f.__module__}.{f.__qualname__}"] = f
    return rc


# =========================================================================================
# storages
# =========================================================================================

_STORAGE_NAME = {d: d._legacy.replace("Tensor", "Storage") for d in D.ALL}


class _StorageType:
    """What a storage class name (``torch.FloatStorage``, ``torch.UntypedStorage``) unpickles to:
    the dtype of the storage's elements."""

    __slots__ = ("dtype", "name")

    def __init__(self, name: str, dtype: D.dtype):
        self.name = name
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


class _Storage:
    """A loaded storage: a 1-D array of its elements (``None`` on the meta device) and the version
    counter every tensor over it shares. Enough of ``torch.UntypedStorage``'s surface for a
    ``map_location`` callable to hand it back (``storage.cpu()``)."""

    __slots__ = ("array", "dtype", "numel", "vc")

    def __init__(self, array, dtype: D.dtype, numel: int):
        self.array = array
        self.dtype = dtype
        self.numel = numel
        self.vc = Version()

    @property
    def device(self) -> _Device:
        return _Device("meta" if self.array is None else "cpu")

    @property
    def is_meta(self) -> bool:
        return self.array is None

    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize

    def size(self) -> int:
        return self.numel

    __len__ = size

    def cpu(self) -> _Storage:
        if self.array is None:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self

    def to(self, device=None) -> _Storage:
        d = _Device(device) if device is not None else _Device("cpu")
        if d.type == "meta":
            return _Storage(None, self.dtype, self.numel)
        if d.type != "cpu":
            raise RuntimeError(f"ember has no {d.type} device: only 'cpu' and 'meta'")
        return self.cpu()

    def __repr__(self) -> str:
        return f"ember storage of {self.numel} {self.dtype.name} on {self.device}"


# =========================================================================================
# rebuild functions: what torch's global names resolve to when ember reads a checkpoint
# =========================================================================================

def _tensor_over(storage: _Storage, offset, size, stride) -> Tensor:
    """A tensor over ``storage`` (PyTorch's ``Tensor.set_``), bounds-checked: a crafted file
    must not make NumPy read outside the storage."""
    if type(storage) is not _Storage:
        raise TypeError("expected a storage to rebuild a tensor from, got "
                        f"{type(storage).__name__}")
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    offset = int(offset)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides for "
                           f"{len(size)} dimensions")
    if any(s < 0 for s in size) or offset < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension or offset: {size}")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    n = math.prod(size)
    need = 0 if n == 0 else offset + sum((a - 1) * s for a, s in zip(size, stride)) + 1
    item = storage.dtype.itemsize
    if need > storage.numel:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
            f"itemsize {item} requiring a storage size of {need * item} are out of bounds for "
            f"storage of size {storage.numel * item}")
    if storage.array is None:
        data = meta_like(size, storage.dtype.np)
    elif n == 0:
        data = storage.array[:0].reshape(size)
    elif _contiguous(size, stride):
        data = storage.array[offset:offset + n].reshape(size)
    else:
        data = np.lib.stride_tricks.as_strided(storage.array[offset:], size,
                                               tuple(s * item for s in stride))
    from ._ops.creation import _new_tensor
    t = _new_tensor(data)
    t._vc = storage.vc
    return t


def _contiguous(size, stride) -> bool:
    acc = 1
    for a, s in zip(reversed(size), reversed(stride)):
        if a != 1 and s != acc:
            return False
        acc *= a
    return True


def _apply_metadata(t: Tensor, metadata) -> Tensor:
    # ember has no lazy conj/neg bits: materialise what the bits mean
    if not metadata:
        return t
    if metadata.get("conj"):
        t = _make(np.conj(t._data), Version(), False, None)
    if metadata.get("neg"):
        t = _make(np.negative(t._data), Version(), False, None)
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _tensor_over(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    t = _apply_metadata(_tensor_over(storage, storage_offset, size, stride), metadata)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    if type(storage) is not _Storage or not isinstance(dtype, D.dtype):
        raise TypeError("_rebuild_tensor_v3 expects a storage and a dtype")
    if storage.dtype is not dtype:
        nbytes = storage.nbytes()
        if nbytes % dtype.itemsize:
            raise RuntimeError(f"storage of {nbytes} bytes cannot hold {dtype} elements")
        arr = None if storage.array is None else storage.array.view(dtype.np)
        view = _Storage(arr, dtype, nbytes // dtype.itemsize)
        view.vc = storage.vc
        storage = view
    return _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
                              backward_hooks, metadata)


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    from ._ops.creation import empty
    return empty(tuple(size), dtype=dtype, device="meta", requires_grad=bool(requires_grad))


def _nn_class(name: str):
    """ember's ``nn.parameter.<name>`` if that module exists (imported lazily: ember.nn imports
    much, and checkpoints of plain tensors should not need it)."""
    mod = sys.modules.get("ember.nn.parameter")
    if mod is None:
        import importlib.util
        try:
            if importlib.util.find_spec("ember.nn.parameter") is None:
                return None
        except ModuleNotFoundError:
            return None
        from importlib import import_module
        mod = import_module("ember.nn.parameter")
    return getattr(mod, name, None)


def _parameter_class():
    return _nn_class("Parameter")


def _rebuild_parameter(data, requires_grad, backward_hooks):
    if not isinstance(data, Tensor):
        raise TypeError(f"expected a tensor to rebuild a Parameter from, got {type(data).__name__}")
    cls = _parameter_class()
    if cls is None:
        return data.requires_grad_(bool(requires_grad))
    return cls(data, bool(requires_grad))


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _set_obj_state(obj, state):
    """Restore Python attributes saved with a tensor (``torch._utils._set_obj_state``)."""
    if isinstance(state, tuple) and len(state) != 2:
        raise RuntimeError(f"Invalid serialized state: {state}")
    dict_state, slots_state = state if isinstance(state, tuple) else (state, None)
    items = [*(dict_state or {}).items(), *(slots_state or {}).items()]
    if any(not isinstance(k, str) or k.startswith("__") for k, _ in items):
        raise RuntimeError(f"Invalid serialized state: {state}")
    if items and isinstance(obj, Tensor) and not hasattr(obj, "__dict__"):
        # a plain ember Tensor has slots only; losing the attributes beats refusing the file
        warnings.warn(f"ember tensors hold no Python attributes: dropped {[k for k, _ in items]} "
                      "saved on a tensor", UserWarning, stacklevel=2)
        return obj
    for k, v in items:
        setattr(obj, k, v)
    return obj


def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    if new_type is Tensor and isinstance(state, dict) and state.get("_is_buffer") is True:
        # torch.nn.Buffer instances are plain tensors marked by these two attributes
        buffer = _nn_class("Buffer")
        if buffer is not None and isinstance(ret, Tensor):
            return buffer(ret, persistent=bool(state.get("persistent", True)))
        state = {k: v for k, v in state.items() if k not in ("_is_buffer", "persistent")}
    if type(ret) is not new_type:
        ret = _as_subclass(ret, new_type)
    return _set_obj_state(ret, state)


def _as_subclass(t, new_type):
    if not (isinstance(t, Tensor) and isinstance(new_type, type) and issubclass(new_type, Tensor)):
        raise TypeError(f"cannot rebuild a {getattr(new_type, '__name__', new_type)} from "
                        f"{type(t).__name__}")
    if new_type is _parameter_class():
        return new_type(t, t.requires_grad)
    out = object.__new__(new_type)
    for s in Tensor.__slots__:
        if s != "__weakref__" and hasattr(t, s):
            setattr(out, s, getattr(t, s))
    return out


def _get_layout(name):
    from . import strided
    if name != "torch.strided":
        raise NotImplementedError(f"ember has only strided tensors, not {name}")
    return strided


def _unsupported(what: str) -> Callable:
    def refuse(*args, **kwargs):
        raise NotImplementedError(f"ember cannot load {what}: ember has no such tensors yet.")
    refuse.__name__ = f"unsupported_{what.replace(' ', '_')}"
    return refuse


def _parameter_global():
    cls = _parameter_class()
    return cls if cls is not None else _rebuild_parameter_plain


def _rebuild_parameter_plain(data=None, requires_grad=True):
    from ._ops.creation import empty
    return _rebuild_parameter(empty(0) if data is None else data, requires_grad, None)


def _torch_dtype_names() -> dict:
    return {f"torch.{d.name}": d for d in D.ALL}


def _allowed_globals() -> dict:
    """torch's weights-only allowlist, mapped onto ember objects (torch/_weights_only_unpickler)."""
    import _codecs
    rc: dict[str, Any] = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": _parameter_global(),
        "torch.serialization._get_layout": _get_layout,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": _Device,
        "_codecs.encode": _codecs.encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._utils._rebuild_meta_tensor_no_storage": _rebuild_meta_tensor_no_storage,
        "torch._utils._rebuild_qtensor": _unsupported("quantized tensors"),
        "torch._utils._rebuild_sparse_tensor": _unsupported("sparse tensors"),
        "torch._utils._rebuild_nested_tensor": _unsupported("nested tensors"),
        "torch._utils._rebuild_wrapper_subclass": _unsupported("wrapper-subclass tensors"),
        "torch._utils._rebuild_device_tensor_from_numpy": _unsupported("device tensors"),
        "torch._utils._rebuild_device_tensor_from_cpu_tensor": _unsupported("device tensors"),
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.storage.UntypedStorage": _StorageType("UntypedStorage", D.uint8),
        "torch.UntypedStorage": _StorageType("UntypedStorage", D.uint8),
    }
    rc.update(_torch_dtype_names())
    for d, name in _STORAGE_NAME.items():
        rc[f"torch.{name}"] = _StorageType(name, d)
    return rc


_TORCH_ONLY = re.compile(r"torch\.(u?int\d+|float8_\w+|complex32|chalf|qu?int\w+|bits\w+|"
                         r"\w+Storage|per_\w+)$")


def _fix_names(module: str, name: str) -> tuple[str, str]:
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    module = _compat_pickle.IMPORT_MAPPING.get(module, module)
    if module == "torch.tensor":   # renamed in PyTorch 1.8 (torch/serialization.py does the same)
        module = "torch._tensor"
    return module, name


def _torch_global(module: str, name: str, allowed: dict):
    """What a ``torch...`` global means in ember; a clear error for what ember lacks."""
    full = f"{module}.{name}"
    obj = allowed.get(full)
    if obj is not None:
        return obj
    if _TORCH_ONLY.match(full):
        raise RuntimeError(f"ember cannot load {full}: ember has no such dtype or storage")
    return None


_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


class _SafeFinder:
    """``find_class`` of the weights-only unpickler: allowlisted names or UnpicklingError."""

    def __init__(self):
        self.allowed = _allowed_globals()
        self.user = _user_allowed_globals()

    def __call__(self, module: str, name: str, fallback: Callable | None = None):
        module, name = _fix_names(module, name)
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        obj = _torch_global(module, name, self.allowed)
        if obj is not None:
            return obj
        if full in self.user:
            return self.user[full]
        shown = full
        if full.startswith("builtins"):
            shown = full[len("builtins"):]
            shown = shown[1:] if shown.startswith(".") else "builtins" + shown
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{shown}])` or the "
            f"`torch.serialization.safe_globals([{shown}])` context manager to allowlist this "
            "global if you trust this class/function.")


class _FullFinder:
    """``find_class`` for ``weights_only=False``: any global, with torch's names resolved in
    ember (torch itself is never imported)."""

    def __init__(self):
        self.allowed = _allowed_globals()

    def __call__(self, module: str, name: str, fallback: Callable):
        fixed_module, fixed_name = _fix_names(module, name)
        if fixed_module == "torch" or fixed_module.startswith("torch."):
            obj = _torch_global(fixed_module, fixed_name, self.allowed)
            if obj is not None:
                return obj
            raise RuntimeError(
                f"ember cannot load the PyTorch object {fixed_module}.{fixed_name}: only tensors, "
                "parameters, storages, dtypes, devices and sizes have ember equivalents; save a "
                "state_dict in PyTorch instead of the whole object.")
        return fallback(module, name)


# =========================================================================================
# saving
# =========================================================================================

class _TorchGlobal:
    """A stand-in pickled as ``GLOBAL module name`` (a torch name ember has no object for)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module = module
        self.name = name

    def __reduce__(self):
        return self.name

    def __call__(self, *args, **kwargs):
        # only a name to write: pickle requires the function of a reduce tuple to be callable
        raise TypeError(f"{self.module}.{self.name} exists in PyTorch only")


_G_REBUILD_V2 = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_G_REBUILD_V3 = _TorchGlobal("torch._utils", "_rebuild_tensor_v3")
# the dtypes PyTorch has no typed storage class for (its shell uints, ComplexHalf)
_AS_BYTES = (*D.SHELL_UINTS, D.complex32)
_G_UNTYPED = _TorchGlobal("torch.storage", "UntypedStorage")
_G_REBUILD_PARAM = _TorchGlobal("torch._utils", "_rebuild_parameter")
_G_REBUILD_PARAM_STATE = _TorchGlobal("torch._utils", "_rebuild_parameter_with_state")
_G_REBUILD_META = _TorchGlobal("torch._utils", "_rebuild_meta_tensor_no_storage")
_G_FROM_TYPE = _TorchGlobal("torch._tensor", "_rebuild_from_type_v2")
_G_SIZE = _TorchGlobal("torch", "Size")
_G_DEVICE = _TorchGlobal("torch", "device")
_G_STORAGE = {d: _TorchGlobal("torch", n) for d, n in _STORAGE_NAME.items()}


class _StorageRef:
    """A storage being saved: its key in the archive and the bytes to write."""

    __slots__ = ("dtype", "key", "numel", "owner", "raw")

    def __init__(self, key: str, dtype: D.dtype, raw: np.ndarray, owner):
        self.key = key
        self.dtype = dtype
        self.raw = raw          # uint8 view of the whole storage
        self.owner = owner      # keeps the root alive so its id stays unique while saving
        self.numel = raw.nbytes // dtype.itemsize


class _Storages:
    """The storages of the tensors being saved, one per NumPy root buffer."""

    def __init__(self):
        self.by_root: dict[int, _StorageRef] = {}
        self.ordered: list[_StorageRef] = []

    def _new(self, dtype, raw, owner, key_id) -> _StorageRef:
        ref = _StorageRef(str(len(self.ordered)), dtype, raw, owner)
        self.by_root[key_id] = ref
        self.ordered.append(ref)
        return ref

    def locate(self, t: Tensor) -> tuple[_StorageRef, int, tuple]:
        """(storage, storage_offset, stride) of ``t``; a standalone copy when NumPy's layout has
        no PyTorch equivalent (negative strides, misaligned views)."""
        a = t._data
        dt = D._FROM_NP[a.dtype]
        item = a.itemsize
        root = _root(a)
        raw = _raw_bytes(root)
        if raw is not None and raw.nbytes % item == 0:
            off = _address(a) - _address(root)
            strides = a.strides
            if (0 <= off <= raw.nbytes and off % item == 0
                    and all(s >= 0 and s % item == 0 for s in strides)):
                ref = self.by_root.get(id(root))
                if ref is None:
                    ref = self._new(dt, raw, root, id(root))
                elif ref.dtype is not dt:
                    raise RuntimeError("Cannot save multiple tensors or storages that view the "
                                       "same data as different types")
                stride = tuple(s // item for s in strides) if a.size else t.stride()
                return ref, off // item, stride
        copy = np.ascontiguousarray(a)
        ref = self._new(dt, _raw_bytes(copy), copy, id(copy))
        return ref, 0, _contiguous_strides(a.shape)


def _raw_bytes(root: np.ndarray):
    """The root's memory as a flat uint8 array (``None`` unless one contiguous block)."""
    if isinstance(root, MetaArray):
        return None
    if root.flags.c_contiguous:
        return root.reshape(-1).view(np.uint8)
    if root.flags.f_contiguous:
        return root.T.reshape(-1).view(np.uint8)
    return None


class _Pickler(pickle._Pickler):
    """The pure-Python pickler (its ``save_global`` can be taught torch's names), writing
    ember tensors, dtypes, devices and sizes as PyTorch pickles its own."""

    def __init__(self, file, protocol: int):
        super().__init__(file, protocol)
        self.storages = _Storages()

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            if obj.dtype in _AS_BYTES:   # no typed storage class: bytes, as PyTorch
                return ("storage", _G_UNTYPED, obj.key, "cpu", obj.numel * obj.dtype.itemsize)
            return ("storage", _G_STORAGE[obj.dtype], obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        t = type(obj)
        if t is Size:
            return (_G_SIZE, (tuple(obj),))
        if t is _Device:
            return (_G_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
        return NotImplemented

    def _reduce_tensor(self, t: Tensor):
        cls = type(t)
        param = _parameter_class_if_loaded()
        if param is not None and isinstance(t, param):
            data = _make(t._data, t._vc, False, None)
            state = _python_state(t)
            if state:
                return (_G_REBUILD_PARAM_STATE,
                        (data, t.requires_grad, collections.OrderedDict(), state))
            return (_G_REBUILD_PARAM, (data, t.requires_grad, collections.OrderedDict()))
        if t.is_meta:
            func, args = _G_REBUILD_META, (t.dtype, tuple(t.shape), t.stride(), t.requires_grad)
        else:
            ref, offset, stride = self.storages.locate(t)
            func = _G_REBUILD_V2
            args = (ref, offset, tuple(t.shape), tuple(stride), t.requires_grad,
                    collections.OrderedDict())
            if t.dtype in _AS_BYTES:   # PyTorch saves these as bytes plus their dtype
                func, args = _G_REBUILD_V3, args + (t.dtype,)
        if cls is Tensor:
            return (func, args)
        state = _python_state(t) or {}
        buffer = _nn_class("Buffer") if cls.__module__ == "ember.nn.parameter" else None
        if buffer is not None and isinstance(t, buffer):
            # as torch.nn.Buffer: a plain tensor carrying the buffer markers
            return (_G_FROM_TYPE, (func, Tensor, args, {**state, "_is_buffer": True}))
        return (_G_FROM_TYPE, (func, cls, args, state))

    def save_global(self, obj, name=None):
        if type(obj) is _TorchGlobal:
            module, name = obj.module, obj.name
        elif type(obj) is D.dtype:
            module, name = "torch", obj.name
        elif obj is Tensor:
            module, name = "torch", "Tensor"
        else:
            return super().save_global(obj, name)
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8")
                       + b"\n")
        self.memoize(obj)


def _parameter_class_if_loaded():
    mod = sys.modules.get("ember.nn.parameter")
    return getattr(mod, "Parameter", None) if mod is not None else None


def _python_state(t: Tensor):
    d = getattr(t, "__dict__", None)
    return dict(d) if d else None


class _ZipWriter:
    """A zip writer laid out as PyTorch's (miniz in caffe2's inline_container): stored records
    whose data start on 64-byte boundaries (padding in an ``FB`` extra field), data descriptors
    after each non-empty record, zip64 end records. Writes sequentially: any writable stream."""

    def __init__(self, f, archive: str):
        self.f = f
        self.archive = archive
        self.pos = 0
        self.entries: list[tuple] = []

    def _write(self, b) -> None:
        self.f.write(b)
        self.pos += len(b) if isinstance(b, bytes) else memoryview(b).nbytes

    def write_record(self, name: str, data) -> None:
        fname = f"{self.archive}/{name}".encode("utf-8")
        mv = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        size = len(mv)
        offset = self.pos
        big = size >= _U32 or offset >= _U32
        z64 = b""
        if big:
            fields = (struct.pack("<QQ", size, size) if size >= _U32 else b"") + \
                (struct.pack("<Q", offset) if offset >= _U32 else b"")
            z64 = struct.pack("<HH", 1, len(fields)) + fields
        start = offset + 30 + len(fname) + len(z64) + 4
        pad = (-start) % _ALIGN
        extra = z64 + b"FB" + struct.pack("<H", pad) + b"Z" * pad
        flags = 0x0808 if size else 0x0800
        version = 45 if big else 0
        self._write(struct.pack("<IHHHHHIIIHH", 0x04034B50, version, flags, 0, 0, 0, 0,
                                _U32 if big else 0, _U32 if big else 0, len(fname), len(extra)))
        self._write(fname + extra)
        crc = 0
        if size:
            crc = zlib.crc32(mv)
            self._write(mv)
            if big:
                self._write(struct.pack("<IIQQ", 0x08074B50, crc, size, size))
            else:
                self._write(struct.pack("<IIII", 0x08074B50, crc, size, size))
        self.entries.append((fname, crc, size, offset, flags))

    def close(self) -> None:
        cd_start = self.pos
        for fname, crc, size, offset, flags in self.entries:
            big_size, big_off = size >= _U32, offset >= _U32
            fields = (struct.pack("<QQ", size, size) if big_size else b"") + \
                (struct.pack("<Q", offset) if big_off else b"")
            extra = struct.pack("<HH", 1, len(fields)) + fields if fields else b""
            s32 = _U32 if big_size else size
            self._write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0, 45 if fields else 0,
                                    flags, 0, 0, 0, crc, s32, s32, len(fname), len(extra), 0, 0,
                                    0, 0, _U32 if big_off else offset))
            self._write(fname + extra)
        cd_size = self.pos - cd_start
        n = len(self.entries)
        z64_start = self.pos
        self._write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 45, 0, 0, n, n, cd_size,
                                cd_start))
        self._write(struct.pack("<IIQI", 0x07064B50, 0, z64_start, 1))
        self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                                min(cd_size, _U32), min(cd_start, _U32), 0))


def _archive_name(f) -> str:
    if isinstance(f, (str, os.PathLike)):
        base = os.path.basename(os.fspath(f))
        stem = base.rsplit(".", 1)[0] if "." in base else base
        if stem and stem.isascii():
            return stem
    return "archive"


def _serialization_id() -> str:
    a, b = struct.unpack("<QQ", os.urandom(16))
    return f"{a:020d}{b:020d}"


def save(obj: object, f, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """``torch.save``: write ``obj`` as PyTorch's zip checkpoint to a path or writable file."""
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError(
            "expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError(
            "ember.save writes only the zip-based format (torch.save's default since PyTorch "
            "1.6); _use_new_zipfile_serialization=False (the legacy format) is not supported.")
    if pickle_module is not pickle:
        raise NotImplementedError(
            "ember.save pickles with the standard pickle module only; pickle_module="
            f"{getattr(pickle_module, '__name__', pickle_module)!r} is not supported.")
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol)
    pickler.dump(obj)
    if isinstance(f, (str, os.PathLike)):
        with open(os.fspath(f), "wb") as fh:
            _write_archive(fh, _archive_name(f), buf, pickler.storages, _disable_byteorder_record)
    else:
        _write_archive(f, "archive", buf, pickler.storages, _disable_byteorder_record)
        if hasattr(f, "flush"):
            f.flush()


def _write_archive(fh, archive, buf, storages: _Storages, no_byteorder: bool) -> None:
    z = _ZipWriter(fh, archive)
    z.write_record("data.pkl", buf.getbuffer())
    z.write_record(".format_version", b"1")
    z.write_record(".storage_alignment", str(_ALIGN).encode())
    if not no_byteorder:
        z.write_record("byteorder", sys.byteorder.encode())
    for ref in storages.ordered:
        z.write_record(f"data/{ref.key}", ref.raw)
    z.write_record("version", b"3\n")
    z.write_record(".data/serialization_id", _serialization_id().encode())
    z.close()


# =========================================================================================
# loading
# =========================================================================================

def _wo_message(message: str) -> str:
    """torch.load's wrapping of a weights-only refusal (torch/serialization.py)."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two "
            "options, \033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
            f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` "
            "please check the recommended steps in the following error message.\n\tWeightsUnpickler"
            " error: " + message + _DOCS_MESSAGE)
    if re.search(r"(\S+) must be (\S+) to load", message):
        return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n"
    out = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        out += ("Please file an issue with the following so that we can make `weights_only=True` "
                "compatible with your use case: WeightsUnpickler error: ")
    return out + "\n\n" + message + _DOCS_MESSAGE


def _is_path(f) -> bool:
    return isinstance(f, (str, os.PathLike))


def _env_flag(name: str) -> bool:
    return os.getenv(name, "0").lower() in ("1", "y", "yes", "true")


def load(f, map_location=None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """``torch.load``: read a PyTorch zip checkpoint (written by PyTorch or ember).

    ``weights_only`` (default True) rebuilds only tensors, containers and plain values;
    ``map_location`` is a device, a device string, a dict remapping location tags or a callable
    ``(storage, location) -> storage | None``; ``mmap=True`` maps the file's storages
    copy-on-write instead of reading them.
    """
    weights_only_not_set = weights_only is None
    if weights_only_not_set:
        weights_only = pickle_module is None
    force_wo = _env_flag("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    force_no_wo = _env_flag("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    if force_wo and force_no_wo:
        raise RuntimeError(
            "Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
            "should be set, but both were set.")
    if force_wo:
        weights_only = True
    elif force_no_wo and weights_only_not_set:
        warnings.warn(
            "Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the"
            "`weights_only` argument was not explicitly passed to `torch.load`, forcing "
            "weights_only=False.", UserWarning, stacklevel=2)
        weights_only = False
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError(
                "Can not safely load weights when explicit pickle_module is specified")
    elif pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if _is_path(f) and os.fspath(f).endswith(".safetensors"):
        raise NotImplementedError("ember.load does not read .safetensors files yet.")

    fh = open(os.fspath(f), "rb") if _is_path(f) else f
    try:
        if not _is_zipfile(fh):
            if mmap:
                name = "" if not isinstance(f, str) else f"{f}, "
                raise RuntimeError(
                    "mmap can only be used with files saved with "
                    f"`torch.save({name}_use_new_zipfile_serialization=True), "
                    "please torch.save your checkpoint with this option in order to use mmap.")
            raise RuntimeError(
                "ember.load reads only the zip-based checkpoint format (torch.save's default "
                "since PyTorch 1.6); this file is in PyTorch's legacy format or is not a "
                "PyTorch checkpoint. Load it in PyTorch and torch.save it again.")
        reader = _ZipReader(fh)
        if reader.has("constants.pkl"):
            if weights_only:
                raise RuntimeError(
                    "Cannot use ``weights_only=True`` with TorchScript archives passed to "
                    "``torch.load``. " + UNSAFE_MESSAGE)
            raise NotImplementedError("ember cannot load TorchScript archives.")
        if mmap:
            if not _is_path(f):
                raise ValueError("f must be a file path in order to use the mmap argument")
            reader.map_file(fh)
        if weights_only:
            try:
                return _load(reader, map_location, None, {"encoding":
                                                          pickle_load_args["encoding"]})
            except pickle.UnpicklingError as e:
                raise pickle.UnpicklingError(_wo_message(str(e))) from None
        return _load(reader, map_location, pickle_module, pickle_load_args)
    finally:
        if fh is not f:
            fh.close()


def _is_zipfile(fh) -> bool:
    start = fh.tell()
    magic = fh.read(4)
    fh.seek(start)
    return magic == b"PK\x03\x04"


class _ZipReader:
    """Records of a checkpoint archive; storages are read straight into their arrays."""

    def __init__(self, fh):
        import zipfile
        self.fh = fh
        self.zf = zipfile.ZipFile(fh)
        names = self.zf.namelist()
        if not names:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: archive is empty")
        self.prefix = names[0].split("/", 1)[0]
        self.infos = {i.filename: i for i in self.zf.infolist()}
        self.mapped = None

    def has(self, name: str) -> bool:
        return f"{self.prefix}/{name}" in self.infos

    def _info(self, name: str):
        info = self.infos.get(f"{self.prefix}/{name}")
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        return info

    def get(self, name: str) -> bytes:
        return self.zf.read(self._info(name))

    def map_file(self, fh) -> None:
        # MAP_PRIVATE, as torch.load(mmap=True): writes to the tensors never reach the file
        self.mapped = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY)

    def _data_start(self, info) -> int:
        self.fh.seek(info.header_offset)
        header = self.fh.read(30)
        if header[:4] != b"PK\x03\x04":
            raise RuntimeError(f"PytorchStreamReader failed reading file {info.filename}: "
                               "invalid header or archive is corrupted")
        nlen, xlen = struct.unpack("<HH", header[26:30])
        return info.header_offset + 30 + nlen + xlen

    def storage_array(self, name: str, dtype: D.dtype, numel: int) -> np.ndarray:
        info = self._info(name)
        nbytes = numel * dtype.itemsize
        if info.file_size < nbytes:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: record holds "
                               f"{info.file_size} bytes, the storage needs {nbytes}")
        if nbytes == 0:
            return np.empty(0, dtype.np)
        import zipfile
        stored = info.compress_type == zipfile.ZIP_STORED
        if stored and self.mapped is not None:
            return np.frombuffer(self.mapped, dtype.np, numel, self._data_start(info))
        arr = np.empty(numel, dtype.np)
        if stored and hasattr(self.fh, "readinto"):
            self.fh.seek(self._data_start(info))
            got = self.fh.readinto(memoryview(arr.view(np.uint8)))
            if got != nbytes:
                raise RuntimeError(f"PytorchStreamReader failed reading file {name}: file read "
                                   "failed")
        else:
            arr.view(np.uint8)[:] = np.frombuffer(self.zf.read(info), np.uint8, nbytes)
        return arr


def _restore_location(map_location) -> Callable:
    if map_location is None:
        return _default_restore_location
    if isinstance(map_location, dict):
        return lambda s, loc: _default_restore_location(s, map_location.get(loc, loc))
    if isinstance(map_location, (str, bytes)):
        target = map_location.decode() if isinstance(map_location, bytes) else map_location
        return lambda s, loc: _default_restore_location(s, target)
    if isinstance(map_location, _Device):
        return lambda s, loc: _default_restore_location(s, str(map_location))
    if not callable(map_location):
        raise TypeError(f"map_location must be a device, a string, a dict or a callable, not "
                        f"{type(map_location).__name__}")

    def restore(s, loc):
        result = map_location(s, loc)
        if result is None:
            return _default_restore_location(s, loc)
        if type(result) is not _Storage:
            raise TypeError("map_location must return a storage or None, not "
                            f"{type(result).__name__}")
        return result
    return restore


def _default_restore_location(storage: _Storage, location: str) -> _Storage:
    if location == "cpu":
        return storage
    if location == "meta":
        return storage.to("meta")
    if location == "cuda" or re.match("cuda(:|[0-9]+)", location):
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
            "False. If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.")
    raise RuntimeError("don't know how to restore data location of torch.storage.UntypedStorage"
                       f" (tagged with {location})")


def _is_meta_location(map_location) -> bool:
    if isinstance(map_location, str):
        return map_location == "meta"
    return isinstance(map_location, _Device) and map_location.type == "meta"


def _load(reader: _ZipReader, map_location, pickle_module, load_args: dict):
    restore = _restore_location(map_location)
    meta = _is_meta_location(map_location)
    # a file without a byteorder record is little-endian (PyTorch's default since 2.1)
    order = reader.get("byteorder") if reader.has("byteorder") else b"little"
    if order not in (b"little", b"big"):
        raise ValueError("Unknown endianness type: " + order.decode())
    swap = order.decode() != sys.byteorder
    loaded: dict[str, _Storage] = {}

    def persistent_load(saved_id):
        if type(saved_id) is not tuple or len(saved_id) != 5:
            raise pickle.UnpicklingError(
                f"persistent_load id must be a storage tuple, but got {type(saved_id)}")
        typename = saved_id[0].decode("ascii") if isinstance(saved_id[0], bytes) else saved_id[0]
        if typename != "storage":
            raise pickle.UnpicklingError(
                f"Only persistent_load of storage is allowed, but got {type(saved_id[0])}")
        storage_type, key, location, numel = saved_id[1:]
        if isinstance(location, bytes):
            location = location.decode("ascii")
        if (type(storage_type) is not _StorageType or type(key) is not str
                or type(location) is not str or type(numel) is not int or numel < 0):
            raise pickle.UnpicklingError(f"malformed storage id {saved_id!r}")
        if key in loaded:
            return loaded[key]
        dt = storage_type.dtype
        if meta:
            storage = _Storage(None, dt, numel)
        else:
            arr = reader.storage_array(f"data/{key}", dt, numel)
            if swap:
                arr.byteswap(inplace=True)
            storage = restore(_Storage(arr, dt, numel), location)
        loaded[key] = storage
        return storage

    base = pickle.Unpickler if pickle_module is None else pickle_module.Unpickler
    finder = _SafeFinder() if pickle_module is None else _FullFinder()

    class _Unpickler(base):
        def find_class(self, module, name):
            return finder(module, name, super().find_class)

        def persistent_load(self, saved_id):
            return persistent_load(saved_id)

    unpickler = _Unpickler(io.BytesIO(reader.get("data.pkl")), **load_args)
    return unpickler.load()

