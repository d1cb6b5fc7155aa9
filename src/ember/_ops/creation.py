"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty (and *_like, new_*),
arange, linspace, eye (random tensors live in random.py)."""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from .. import _chalf
from .. import _dtype as D
from .. import _layout as _L
from .. import _scalar as S
from .._device import as_device, check_factory_options
from .._meta import MetaArray, meta_like
from .._settings import fill_uninitialized_tensor as _det_fill
from .._tensor import Tensor, Version, _make
from ..autograd.grad_mode import STATE
from ._registry import method
from .views import _ABSENT, kw_form

__all__ = [
    "arange",
    "as_tensor",
    "asarray",
    "empty",
    "empty_like",
    "empty_strided",
    "eye",
    "from_numpy",
    "full",
    "full_like",
    "linspace",
    "logspace",
    "ones",
    "ones_like",
    "range",
    "scalar_tensor",
    "tensor",
    "zeros",
    "zeros_like",
]


def _new_tensor(data: np.ndarray, device=None, requires_grad: bool = False) -> Tensor:
    dev = as_device(device)
    if dev.type == "meta" and not isinstance(data, MetaArray):
        data = meta_like(data.shape, data.dtype)
    elif data.size == 0 and type(data) is np.ndarray:
        data = _L.fresh_empty(data)
    t = _make(data, Version(), False, None)
    if STATE.inference:
        t._extra().inference = True
    if requires_grad:
        if not (t.is_floating_point() or t.is_complex()):
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        t._rg = True
    return t


def _size(size, name: str = "zeros") -> tuple:
    """A size argument (ints, or one sequence of them) as a tuple, with PyTorch's errors."""
    if len(size) == 1 and not isinstance(size[0], numbers.Integral) or (
            len(size) == 1 and isinstance(size[0], builtins.bool)):
        if not isinstance(size[0], (list, tuple, Tensor)):
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(size[0]).__name__}")
        size = tuple(size[0])
    out = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, numbers.Integral):
            raise TypeError(
                f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with "
                f"error \"type must be tuple of ints,but got {type(s).__name__}\"")
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


_SEQS = (list, tuple, builtins.range)
_NEG_STRIDES = (
    "At least one stride in the given numpy array is negative, and tensors with negative strides "
    "are not currently supported. (You can probably work around this by making a copy of your "
    "array  with array.copy().) ")


def _check_strides(a: np.ndarray) -> None:
    if any(s < 0 for s in a.strides):
        raise ValueError(_NEG_STRIDES)


def _infer_dtype(data) -> D.dtype:
    """The dtype ``torch.tensor`` infers from nested Python data (PyTorch's ``infer_scalar_type``:
    a sequence's elements promoted together, an empty one the default dtype)."""
    kinds = set()
    stack = [data]
    while stack:
        x = stack.pop()
        tx = type(x)
        if tx is list or tx is tuple:
            types = set(map(type, x))   # a sequence of plain numbers is read at C speed
            if builtins.float in types:
                kinds.add(D.get_default_dtype())
            if builtins.int in types:
                kinds.add(D.int64)
            if builtins.bool in types:
                kinds.add(D.bool)
            if not types <= _PLAIN:
                stack.extend(y for y in x if type(y) not in _PLAIN)
        elif tx is builtins.float:
            kinds.add(D.get_default_dtype())
        elif tx is builtins.int:
            kinds.add(D.int64)
        elif isinstance(x, _SEQS):
            stack.extend(x)
        elif isinstance(x, Tensor):
            kinds.add(x.dtype)
        elif isinstance(x, np.ndarray):
            kinds.add(D.from_numpy_dtype(x.dtype))
        elif isinstance(x, np.generic):
            kinds.add(D.from_numpy_dtype(x.dtype))
        elif isinstance(x, builtins.bool):
            kinds.add(D.bool)
        elif isinstance(x, numbers.Integral):
            kinds.add(D.int64)
        elif isinstance(x, numbers.Real):
            kinds.add(D.get_default_dtype())
        elif isinstance(x, numbers.Complex):
            kinds.add(D.get_default_dtype().to_complex())
        elif isinstance(x, (str, bytes)):
            if x is data:
                raise TypeError(f"new(): invalid data type '{tx.__name__}'")
            raise ValueError(f"too many dimensions '{tx.__name__}'")
        else:
            raise RuntimeError(f"Could not infer dtype of {tx.__name__}")
    if not kinds:
        return D.get_default_dtype()
    best = None
    for k in kinds:
        best = k if best is None else D.promote_types(best, k)
    return best


def _to_array(data, dt: D.dtype) -> np.ndarray:
    """``data`` (a tensor, an array, or nested sequences of numbers, arrays and one-element
    tensors) as an array of ``dt``, each Python number checked as PyTorch's ``store_scalar``
    checks it."""
    if isinstance(data, Tensor):
        if dt is D.complex32 or _chalf.is_ch(data._data):
            return _chalf.cast(data._data, dt.np)
        return D.astype(data._data, dt.np)
    if dt is D.complex32:   # read as complex64, then each part rounded to float16
        return _chalf.from_values(_to_array(data, D.complex64))
    if isinstance(data, np.ndarray):
        _check_strides(data)
        return D.astype(data, dt.np)   # an array is cast as a whole (C casts: no checks)
    if _has_tensor(data):
        data = _untensor(data, dt)
    try:
        arr = np.array(data)
    except ValueError:
        if isinstance(data, _SEQS):
            _check_nested(data, dt)
        raise
    if arr.dtype.kind in "OUSV":
        _check_nested(data, dt)
        return np.array(_convert(data, dt), dtype=dt.np)
    kind = arr.dtype.kind
    if dt.is_complex or dt is D.bool:
        pass
    elif kind == "c" or arr.dtype == np.uint64:
        # a complex number, or an int past int64, among the data: check each number
        return np.array(_convert(data, dt), dtype=dt.np)
    elif dt.is_floating_point:
        pass
    elif kind == "f":
        if arr.size and (dt is D.uint64 or not np.isfinite(arr).all()
                         or S.overflows(float(arr.min()), dt)
                         or S.overflows(float(arr.max()), dt)):
            return np.array(_convert(data, dt), dtype=dt.np)
        return arr.astype(dt.np)   # truncation toward zero, as a C cast
    elif kind in "iu" and arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        if S.overflows(lo, dt) or S.overflows(hi, dt) or lo < 0 and dt is D.uint64:
            _convert(data, dt)
        if not dt.is_signed and lo < 0:
            return arr.astype(dt.np)   # negative ints wrap (two's complement), as PyTorch
    if dt is D.bfloat16:
        return arr.astype(np.float32).astype(dt.np)
    return D.astype(arr, dt.np)


_PLAIN = frozenset((builtins.float, builtins.int, builtins.bool))


def _has_tensor(data) -> bool:
    if isinstance(data, Tensor):
        return True
    if isinstance(data, (list, tuple)):
        if set(map(type, data)) <= _PLAIN:
            return False
        return any(_has_tensor(x) for x in data if type(x) not in _PLAIN)
    return False


def _untensor(data, dt: D.dtype):
    """Nested data with each tensor replaced by its one number (PyTorch reads a tensor inside a
    sequence as a scalar)."""
    if isinstance(data, Tensor):
        if data._data.size != 1:
            if dt.is_floating_point or dt.is_complex:
                raise ValueError("only one element tensors can be converted to Python scalars")
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        d = data._data.reshape(())
        return d[()] if d.dtype.names is None else _chalf.item(d)   # (complex32 pairs)
    if isinstance(data, _SEQS):
        return [_untensor(x, dt) for x in data]
    return data


def _convert(data, dt: D.dtype):
    """Nested data with every number converted by ``_scalar.data_value``."""
    if isinstance(data, _SEQS):
        return [_convert(x, dt) for x in data]
    if isinstance(data, np.ndarray):
        return data.astype(dt.np)
    return S.data_value(data, dt)


def _check_nested(data, dt: D.dtype) -> None:
    """PyTorch's errors for ragged nested sequences: the shape is read off the first elements."""
    shape = []
    x = data
    while isinstance(x, _SEQS):
        shape.append(len(x))
        if not x:
            break
        x = x[0]
    stack = [(data, 0)]
    while stack:
        x, dim = stack.pop()
        if dim == len(shape):
            if isinstance(x, _SEQS):
                if dt.is_floating_point or dt.is_complex:
                    raise TypeError(f"must be real number, not {type(x).__name__}")
                raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an "
                                "integer")
            continue
        if not isinstance(x, _SEQS):
            raise TypeError("not a sequence")
        if len(x) != shape[dim]:
            raise ValueError(
                f"expected sequence of length {shape[dim]} at dim {dim} (got {len(x)})")
        stack.extend((y, dim + 1) for y in reversed(x))


def tensor(data, *, dtype: D.dtype | None = None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor copying ``data`` (``torch.tensor``); dtype inferred as PyTorch does."""
    check_factory_options(None, pin_memory)
    if isinstance(data, Tensor):
        import warnings
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    dt = dtype or _infer_dtype(data)
    a = _to_array(data, dt)
    src = data._data if isinstance(data, Tensor) else data
    if type(src) is np.ndarray and (src.ndim > 1 and 1 in src.shape or not src.size
                                    or not src.flags.c_contiguous):
        # PyTorch copies an array or tensor as ``clone`` does (an array with from_numpy's
        # strides, zeros included): a dense one's strides kept, others dense in their order
        want = _L.preserve_strides(src.shape, data.stride() if src is not data
                                   else _L.elem_strides(data))
        if _L.elem_strides(a) != want or not a.size:
            a = _L.copy_to_strides(a, want)
    return _new_tensor(a, device, requires_grad)


def as_tensor(data, dtype: D.dtype | None = None, device=None) -> Tensor:
    """Share memory with ``data`` when it is already a tensor/array of the right dtype."""
    if isinstance(data, Tensor):
        return data if dtype is None or dtype is data.dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad: bool = False) -> Tensor:
    t = as_tensor(obj, dtype, device)
    if copy:
        t = t.clone()
    if requires_grad:
        t.requires_grad_()
    return t


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with the NumPy array (``torch.from_numpy``)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    D.from_numpy_dtype(ndarray.dtype)
    _check_strides(ndarray)
    if not ndarray.size and not any(ndarray.strides):
        # NumPy's zero strides are kept (an empty array shares no memory to keep)
        ndarray = _L.zero_strided_empty(ndarray.shape, ndarray.dtype)
    return _new_tensor(ndarray)


def _dt(dtype) -> D.dtype:
    return dtype if dtype is not None else D.get_default_dtype()


def _filled(size, fill, dtype, device, requires_grad, fn, name: str = "zeros") -> Tensor:
    shape = _size(size, name)
    dt = _dt(dtype)
    if as_device(device).type == "meta":
        return _new_tensor(meta_like(shape, dt.np), device, requires_grad)
    if dt is D.complex32:   # NumPy would put the value into both parts of each pair
        c = fn(shape, np.complex64) if fill is None else np.full(shape, fill, np.complex64)
        return _new_tensor(_chalf.from_values(c), device, requires_grad)
    return _new_tensor(fn(shape, dt.np) if fill is None else np.full(shape, fill, dt.np),
                       device, requires_grad)


def _out(fn, out, args, dtype, device, requires_grad, warn=False, name=None) -> Tensor:
    """A creation function's ``out=`` (``_out.with_out``): made in ``out``'s dtype unless one
    is given; ``out`` requiring grad is refused in grad mode, under the aten:: name as PyTorch
    does; a wrongly shaped ``out`` is resized without a warning (except by arange)."""
    from ._out import check_factory_out, with_out
    check_factory_out(out, dtype, device)
    return with_out(fn, out, args, {"dtype": dtype, "device": device,
                                    "requires_grad": requires_grad},
                    name="aten::" + (name or fn.__name__), dtype="as_out", warn=warn)


_ARANGE_RESIZE = (
    "The number of elements in the out tensor of shape {have} is {n} which does not match the "
    "computed number of elements {want[0]}. Note that this may occur as a result of rounding "
    "error. The out tensor will be resized to a tensor of shape {want}. (Triggered internally "
    "at /__w/pytorch/pytorch/aten/src/ATen/native/RangeFactories.cpp:199.)")


def _empty_out(out: Tensor, size, dtype=None, device=None) -> Tensor:
    """``empty(..., out=)``: ``out`` resized (bumping its version) and otherwise untouched."""
    from ._out import check_factory_out, resize_data
    check_factory_out(out, dtype, device)
    if out.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = _size(size, "empty")
    if tuple(out._data.shape) != shape:
        resize_data(out, shape)
        out._vc.v += 1
    return _det_fill(out)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """``torch.zeros``."""
    check_factory_options(layout)
    if out is not None:
        return _out(zeros, out, size, dtype, device, requires_grad)
    if any(type(s) is builtins.int and s < 0 for s in (size[0] if len(size) == 1 and
                                                       isinstance(size[0], (list, tuple))
                                                       else size)):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _filled(size, None, dtype, device, requires_grad, np.zeros)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """``torch.ones``."""
    check_factory_options(layout)
    if out is not None:
        return _out(ones, out, size, dtype, device, requires_grad)
    return _filled(size, None, dtype, device, requires_grad, np.ones, "ones")


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None) -> Tensor:
    """``torch.empty`` (zero-filled here, so results are reproducible)."""
    check_factory_options(layout, pin_memory)
    if out is not None:
        return _empty_out(out, size, dtype, device)
    mf = _L.check_format(memory_format, "empty")
    if mf is not None and mf is not _L.contiguous_format:
        if mf is _L.preserve_format:
            raise RuntimeError("unsupported memory format Preserve")
        shape = _size(size, "empty")
        return empty_strided(shape, _L.format_strides(shape, mf), dtype=dtype, device=device,
                             requires_grad=requires_grad)
    return _det_fill(_filled(size, None, dtype, device, requires_grad, np.zeros, "empty"))


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False) -> Tensor:
    """``torch.empty_strided``: exactly these strides over a buffer of PyTorch's size
    (zero-filled here, so results are reproducible)."""
    check_factory_options(layout, pin_memory)
    shape, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(shape) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"{list(shape)}")
    dt = _dt(dtype)
    if as_device(device).type == "meta":
        return _new_tensor(meta_like(shape, dt.np), device, requires_grad)
    return _det_fill(_new_tensor(_L.empty_np(shape, stride, dt.np), device, requires_grad))


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False) -> Tensor:
    """``torch.full``: dtype inferred from the fill value when not given."""
    check_factory_options(layout)
    if out is not None:
        return _out(full, out, (size, fill_value), dtype, device, requires_grad)
    if dtype is None:
        dtype = D.scalar_dtype(fill_value) if not isinstance(fill_value, Tensor) \
            else fill_value.dtype
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    fill_value = S.to_dtype(fill_value, dtype, _numel(size) == 1)
    return _filled((tuple(size),), fill_value, dtype, device, requires_grad, None)


def _numel(size) -> int:
    n = 1
    for s in size:
        n *= s
    return n


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full((), s, dtype=_dt(dtype), device=device, requires_grad=requires_grad)


def _like(t: Tensor, dtype, device, requires_grad, fill, memory_format=None) -> Tensor:
    dt = dtype or t.dtype
    dev = device if device is not None else t.device
    if as_device(dev).type == "meta":
        return _new_tensor(meta_like(t._data.shape, dt.np), dev, requires_grad)
    if dt is D.complex32:   # made as complex64, then converted (NumPy fills pairs wrongly)
        r = _like(t, D.complex64, dev, requires_grad, fill, memory_format)
        r._data = _chalf.from_values(r._data)
        return r
    d = t._data
    mf = memory_format
    if mf is not None:
        _L.check_format(mf, "empty_like")
    if type(d) is np.ndarray and (mf is not None or not d.flags.c_contiguous
                                  or (d.ndim > 1 and 1 in d.shape) or not d.size):
        # PyTorch's empty_like layout (NumPy's *_like would follow order="K")
        a = _L.empty_np(d.shape, _L.like_strides(d.shape, t.stride(), mf), dt.np)
        if fill is not None:
            a.fill(fill)
        return _new_tensor(a, dev, requires_grad)
    if fill is None:
        a = np.zeros_like(d, dtype=dt.np) if not isinstance(d, MetaArray) \
            else np.zeros(d.shape, dt.np)
    else:
        a = np.full_like(d.view(np.ndarray), fill, dtype=dt.np)
    return _new_tensor(np.asarray(a), dev, requires_grad)


def zeros_like(input: Tensor, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None) -> Tensor:
    """``torch.zeros_like``."""
    check_factory_options(layout)
    return _like(input, dtype, device, requires_grad, None, memory_format)


def ones_like(input: Tensor, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None) -> Tensor:
    """``torch.ones_like``."""
    check_factory_options(layout)
    return _like(input, dtype, device, requires_grad, 1, memory_format)


def empty_like(input: Tensor, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None) -> Tensor:
    """``torch.empty_like`` (zero-filled)."""
    check_factory_options(layout)
    return _det_fill(_like(input, dtype, device, requires_grad, None, memory_format))


def full_like(input: Tensor, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None) -> Tensor:
    """``torch.full_like``."""
    check_factory_options(layout)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _like(input, dtype, device, requires_grad,
                 S.to_dtype(fill_value, dtype or input.dtype, input._data.size == 1), memory_format)


def _no_kernel(kernel: str, dtype, *missing) -> None:
    """PyTorch's error for a factory kernel without an implementation for ``dtype``."""
    if dtype in missing:
        from ._dispatch import _type_name
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(dtype)}\'')


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False) -> Tensor:
    """``torch.arange``: int64 for integer arguments, the default dtype otherwise."""
    check_factory_options(layout)
    if out is not None:
        return _out(arange, out, (start, end, step), dtype, device, requires_grad,
                    warn=_ARANGE_RESIZE)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if not all(isinstance(v, numbers.Integral) or np.isfinite(v) for v in vals[:2]):
        shown = [v if isinstance(v, numbers.Integral) else "%g" % v for v in vals[:2]]
        raise RuntimeError(f"unsupported range: {shown[0]} -> {shown[1]}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        dtype = D.int64 if all(isinstance(v, numbers.Integral) for v in vals) \
            else D.get_default_dtype()
    _no_kernel("arange_cpu", dtype, D.bool, D.complex64, D.complex128)
    if dtype is D.int64 and builtins.int(vals[2]) == 0:
        raise ValueError("step must be nonzero")   # int64 steps in int64 (smaller ints don't)
    s, e, st = vals
    if (e - s) * st < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = max(int(np.ceil((e - s) / st)), 0)
    a = (s + st * np.arange(n, dtype=np.float64)) if dtype.is_floating_point \
        else np.arange(s, e, st)
    return _new_tensor(np.asarray(a).astype(dtype.np), device, requires_grad)


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False) -> Tensor:
    """The deprecated inclusive ``torch.range`` (with PyTorch's warning at each call)."""
    import warnings
    check_factory_options(layout)
    if out is not None:
        from ._out import check_factory_out
        check_factory_out(out, dtype, device)
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if out is not None:
        return _out(_range, out, (start, end, step), dtype, device, requires_grad,
                    name="range")
    return _range(start, end, step, dtype=dtype, device=device, requires_grad=requires_grad)


def _range(start, end, step, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if end is None:
        start, end = 0, start
    n = int(np.floor((end - start) / step)) + 1
    a = start + step * np.arange(n, dtype=np.float64)
    return _new_tensor(a.astype(_dt(dtype).np), device, requires_grad)


def _space_args(name: str, start, end, steps, out, dtype) -> None:
    """PyTorch's parser error for lin/logspace (Tensor or Number ends, an int count) and its
    refusal of ends that are not 0-dim tensors."""
    if not (isinstance(steps, (numbers.Integral, Tensor)) and not isinstance(steps, bool)
            and all(isinstance(x, (numbers.Number, Tensor)) for x in (start, end))):
        from ._parser import invalid_combination
        raise invalid_combination(name, (start, end, steps), {"out": out, "dtype": dtype})
    bad = [f"{w} with {x.dim()} dimension(s)" for w, x in (("start", start), ("end", end))
           if isinstance(x, Tensor) and x.dim()]
    if bad:
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got "
                           f"{' and '.join(bad)}.")


def linspace(start, end, steps: int, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False) -> Tensor:
    """``torch.linspace``."""
    _space_args("linspace", start, end, steps, out, dtype)
    check_factory_options(layout)
    if out is not None:
        return _out(linspace, out, (start, end, steps), dtype, device, requires_grad)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dt(dtype)
    _no_kernel("linspace_cpu", dt, D.bool)
    s = float(start) if not isinstance(start, Tensor) else start.item()
    e = float(end) if not isinstance(end, Tensor) else end.item()
    if steps == 1:
        a = np.array([s])
    else:
        # PyTorch fills the first half from the start and the second half from the end.
        step = (e - s) / (steps - 1)
        i = np.arange(steps, dtype=np.float64)
        half = steps // 2
        a = np.where(i < half, s + step * i, e - step * (steps - 1 - i))
    if not dt.is_floating_point and not dt.is_complex:
        a = np.trunc(a)
    return _new_tensor(a.astype(dt.np), device, requires_grad)


def logspace(start, end, steps: int, base: float = 10.0, *, out=None, dtype=None, device=None,
             requires_grad=False) -> Tensor:
    """``torch.logspace``: ``base ** linspace(start, end, steps)``."""
    _space_args("logspace", start, end, steps, out, dtype)
    if out is not None:
        return _out(logspace, out, (start, end, steps, base), dtype, device, requires_grad)
    _no_kernel("logspace_cpu", _dt(dtype), D.bool)
    a = np.power(base, linspace(start, end, steps, dtype=D.float64)._data)
    return _new_tensor(a.astype(_dt(dtype).np), device, requires_grad)


def eye(n: int, m: int | None = None, *, out=None, dtype=None, layout=None, device=None,
        requires_grad=False) -> Tensor:
    """``torch.eye``."""
    check_factory_options(layout)
    if out is not None:
        return _out(eye, out, (n, m), dtype, device, requires_grad)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    if _dt(dtype) is D.complex32:   # (PyTorch's eye kernel has no ComplexHalf)
        raise NotImplementedError("\"eye\" not implemented for 'ComplexHalf'")
    return _new_tensor(np.eye(n, m, dtype=_dt(dtype).np), device, requires_grad)


# ---- Tensor.new_* -----------------------------------------------------------------------

@method("new_tensor")
def _new_tensor_m(self, data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return tensor(data.detach() if isinstance(data, Tensor) else data,
                  dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)


def _new_filled(fn):
    def new(self, *args, size=_ABSENT, dtype=None, device=None, requires_grad=False,
            layout=None, pin_memory=False):
        check_factory_options(layout, pin_memory)
        name = "new_" + fn.__name__
        args = kw_form(args, size, "size", name)
        if not args:
            raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
        return fn(*args, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)
    return new


method("new_zeros", _new_filled(zeros))
method("new_ones", _new_filled(ones))
method("new_empty", _new_filled(empty))


@method("new_full")
def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                requires_grad=requires_grad)


# PyTorch's C++ scalar type names, as its TensorOptions mismatch error prints them
_CPP_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}
_NEW_SIGNATURES = (" * (*, ember.device device = None)\n * (ember.Storage storage)\n"
                   " * (Tensor other)\n * (tuple of ints size, *, ember.device device = None)\n"
                   " * (object data, *, ember.device device = None)\n")


def _is_size_int(v) -> bool:
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))


def _new_bad_call(args, kwargs) -> TypeError:
    def tname(v):
        return "Tensor" if isinstance(v, Tensor) else (
            "ember.dtype" if isinstance(v, D.dtype) else type(v).__name__)
    got = ", ".join([tname(a) for a in args] + [f"{k}={tname(v)}" for k, v in kwargs.items()])
    if kwargs and not args:
        got += ", "
    # PyTorch's parser explains the mismatch under some overloads (as observed in 2.x): bad
    # keywords under the keyword-only one (or, with no positional args, the one-arg ones),
    # bad positional types under the keyword-only one
    sigs = _NEW_SIGNATURES.splitlines(keepends=True)
    bad = [k for k in kwargs if k != "device"]
    if bad:
        why = f"      didn't match because some of the keywords were incorrect: {', '.join(bad)}\n"
        for i in ((2, 1) if not args else (0,)):
            sigs.insert(i + 1, why)
    else:
        def shown(v):
            if isinstance(v, list):
                return f"list of [{', '.join(tname(x) for x in v)}]"
            return tname(v)
        types = ", ".join(f"!{shown(a)}!" for a in args)
        sigs.insert(1, f"      didn't match because some of the arguments have invalid types: "
                       f"({types})\n")
    return TypeError(f"new() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:\n{''.join(sigs)}")


@method("new")
def _legacy_new_m(self, *args, **kwargs) -> Tensor:
    """``Tensor.new`` (legacy): ``new()`` an empty 1-d tensor, ``new(*sizes)`` an uninitialised
    one, ``new(data)`` a copy of data, ``new(tensor)`` an alias of a tensor of the same dtype;
    always of ``self``'s dtype and device. Storages are not supported."""
    if any(k != "device" for k in kwargs):
        raise _new_bad_call(args, kwargs)
    device = kwargs.get("device")
    dt = self.dtype
    if len(args) == 1 and not _is_size_int(args[0]):
        data = args[0]
        if isinstance(data, Tensor):
            if device is not None:
                raise RuntimeError("Legacy tensor new of the form tensor.new(tensor, "
                                   "device=device) is not supported.  Use ember.as_tensor(...) "
                                   "instead.")
            if data.dtype is not dt:
                def opts(d):
                    return (f"TensorOptions(dtype={_CPP_NAMES[d.name]}, device=cpu, "
                            "layout=Strided, requires_grad=false (default), pinned_memory=false "
                            "(default), memory_format=(nullopt))")
                raise TypeError(f"expected {opts(dt)} (got {opts(data.dtype)})")
            from ._dispatch import apply
            from .views import ALIAS
            return apply(ALIAS, (data,), (data._data.shape, ()))
        if type(data).__name__ == "Size":
            return empty(*data, dtype=dt, device=device or self.device)
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        if data is None or isinstance(data, (numbers.Number, np.generic)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return tensor(data, dtype=dt, device=device or self.device)
    if args and _is_size_int(args[0]):
        for i, a in enumerate(args[1:], 2):
            if isinstance(a, (list, tuple)):
                raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {i} "
                                f"with error \"type must be tuple of ints,but got "
                                f"{type(a).__name__}\"")
            if not _is_size_int(a):
                raise _new_bad_call(args, kwargs)
    elif args:
        raise _new_bad_call(args, kwargs)
    return empty(*(args or (0,)), dtype=dt, device=device or self.device)


def legacy_new(default: D.dtype, args, kwargs) -> Tensor:
    """``torch.Tensor(...)`` / ``torch.FloatTensor(...)``: sizes or data, legacy style."""
    device = kwargs.get("device")
    if len(args) == 1 and not isinstance(args[0], numbers.Integral):
        data = args[0]
        if isinstance(data, Tensor):
            return data
        return tensor(data, dtype=default, device=device)
    return empty(*args, dtype=default, device=device)


def _legacy_type(dt: D.dtype):
    class _Meta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, Tensor) and obj.dtype is dt

    def __new__(cls, *args, **kwargs):
        return legacy_new(dt, args, kwargs)
    return _Meta(dt._legacy, (), {"__new__": __new__, "dtype": dt,
                                  "__doc__": f"Legacy constructor for {dt} tensors."})


LEGACY = {dt._legacy: _legacy_type(dt) for dt in D.ALL}
