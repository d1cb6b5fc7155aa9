"""Copies and conversions: clone, contiguous, copy_, to / type casts, fill_, zero_."""
from __future__ import annotations

import numpy as np

from .. import _chalf
from .. import _dtype as D
from .. import _layout as _L
from .. import _scalar as S
from .._batched import BatchedArray as _BA
from .._device import as_device
from .._meta import MetaArray, meta_like
from .._tensor import Tensor, Version, _make
from ..autograd.grad_mode import STATE
from ._dispatch import check_inplace, check_overlap, commit, records, to_operand
from ._registry import Op, apply, method, ns_fn

_CH = D.complex32.np
_C64 = np.dtype(np.complex64)

__all__ = ["clone", "to", "view_dtype"]


def _clone_fwd(x, mf):
    if type(x) is _BA:      # a batched forward-mode tangent
        return x.copy()
    if type(x) is not np.ndarray:
        return np.array(x, copy=True, order="K")
    if mf is None and x.flags.c_contiguous and (x.ndim < 2 or 1 not in x.shape) and x.size:
        return x.copy()   # (an empty array keeps its strides: copy_like)
    # PyTorch's empty_like rules: preserve_format keeps a dense input's strides and lays out
    # any other in its stride order; an explicit format gives that format's strides
    return _L.copy_like(x, mf)


CLONE = Op("clone", _clone_fwd, lambda ns, g, need, mf: (g,), linear=True)
CONTIG = Op("contiguous",
            lambda x, mf: x.copy() if type(x) is _BA else _L.contiguous_np(np.ascontiguousarray(x)),
            lambda ns, g, need, mf: (g,), linear=True, node="CloneBackward0")


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """``torch.clone``: a copy that stays in the graph, laid out as PyTorch's (``preserve_format``
    by default: a dense input's strides are kept)."""
    mf = _L.check_format(memory_format, "clone")
    if mf is _L.preserve_format:
        mf = None
    elif mf is not None:
        _L.format_strides(input.shape, mf)     # PyTorch's rank check before any copy
    return apply(CLONE, (input,), (mf,))


def contiguous(self: Tensor, memory_format=None) -> Tensor:
    """``Tensor.contiguous``: ``self`` when already laid out in ``memory_format`` (row-major
    by default), else a copy in that layout."""
    mf = _L.check_format(memory_format)
    if mf is None or mf is _L.contiguous_format or mf is _L.preserve_format:
        if self.is_contiguous():
            return self
        if mf is _L.preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        return apply(CONTIG, (self,), (None,))
    if self.is_contiguous(memory_format=mf):
        return self
    _L.format_strides(self.shape, mf)
    return apply(CLONE, (self,), (mf,))


def _cast_fwd(x, npd, mf=None):
    if npd is _CH and x.dtype != _CH:   # (NumPy would put each value into both parts)
        return _chalf.from_values(_cast_fwd(x, _C64, mf))
    try:
        if type(x) is np.ndarray and (mf is not None or not x.flags.c_contiguous
                                      or (x.ndim > 1 and 1 in x.shape) or not x.size):
            if npd == np.float16:   # (the layout is x's: a converted empty copy has lost it)
                return _L.copy_to_strides(D.astype(x, npd), _L.like_strides(
                    x.shape, _L.torch_strides(x), mf))
            return _L.copy_like(x, mf, npd)
        return D.astype(x, npd)   # (PyTorch's _to_copy layout, not NumPy's "K", above)
    except TypeError:   # NumPy refuses to cast complex32 pairs: through complex64
        if x.dtype != _CH:
            raise
        return _cast_fwd(_chalf.to_c64(x), npd, mf)


def _cast_vjp(ns, g, need, npd, mf=None):
    return (g,)


TO_COPY = Op("to_copy", _cast_fwd, _cast_vjp, linear=True, node="ToCopyBackward0")


def _cast_em(g, npd):
    return apply(TO_COPY, (g,), (npd,))


ns_fn("cast", lambda g, npd: g.astype(npd), _cast_em)


def to(self: Tensor, *args, **kwargs) -> Tensor:
    """``Tensor.to(dtype)``, ``.to(device)``, ``.to(other)``; returns ``self`` when nothing
    changes unless ``copy=True``."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)   # a CPU copy is always synchronous
    mf = kwargs.pop("memory_format", None)
    if mf is not None:
        mf = _L.check_format(mf, "to")
        if mf is _L.preserve_format:
            mf = None
    flags = []
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, bool):
            flags.append(a)   # positional (non_blocking, copy), as PyTorch's signature
        elif a is not None:
            device = a
    if len(flags) > 1:
        copy = flags[1]
    dev = as_device(device) if device is not None else self.device
    out = self
    if dev != self.device:
        if dev.type == "meta":
            out = _make(meta_like(self._data.shape, self._data.dtype), Version(), False, None)
        else:
            raise NotImplementedError(
                "Cannot copy out of meta tensor; no data! (meta tensors have no values to move)")
    if dtype is not None and dtype is not self.dtype:
        if self._rg and not (dtype.is_floating_point or dtype.is_complex):
            from ..autograd.grad_mode import no_grad
            with no_grad():  # integer and bool results are not differentiable
                return apply(TO_COPY, (self,), (dtype.np,) if mf is None else (dtype.np, mf))
        out = apply(TO_COPY, (self,), (dtype.np,) if mf is None else (dtype.np, mf))
    elif out is self and (copy or mf is not None and mf is not _suggest(self)):
        # PyTorch aliases when the suggested memory format already is the one asked for
        if mf is not None:
            _L.format_strides(self.shape, mf)
        out = apply(TO_COPY, (self,), (self._data.dtype,) if mf is None else
                    (self._data.dtype, mf))
    return out


def _suggest(t: Tensor):
    return _L.suggest_format(t.shape, t.stride())


def _type_method(dt: D.dtype):
    def f(self, memory_format=None):
        return to(self, dt) if memory_format is None else to(self, dt, memory_format=memory_format)
    f.__doc__ = f"``Tensor.{dt.name}()``: a copy as {dt} (``self`` when already {dt})."
    return f


for _name, _dt in [("float", D.float32), ("double", D.float64), ("half", D.float16),
                   ("bfloat16", D.bfloat16), ("long", D.int64), ("int", D.int32),
                   ("short", D.int16), ("char", D.int8), ("byte", D.uint8), ("bool", D.bool),
                   ("cfloat", D.complex64), ("cdouble", D.complex128), ("chalf", D.complex32)]:
    method(_name, _type_method(_dt))


def type_(self: Tensor, dtype=None, non_blocking=False, **kw):
    """``Tensor.type()``: the legacy type name, or a cast to the given dtype or type name."""
    if dtype is None:
        return "ember." + self.dtype._legacy
    if isinstance(dtype, str):
        name = dtype.split(".")[-1]
        for dt in D.ALL:
            if dt._legacy == name:
                return to(self, dt)
        raise ValueError(f"invalid type: '{dtype}'")
    if isinstance(dtype, D.dtype):
        return to(self, dtype)
    return to(self, dtype.dtype)


def view_dtype(self: Tensor, dtype: D.dtype) -> Tensor:
    """``Tensor.view(dtype)``: reinterpret the bytes (not differentiable), with PyTorch's
    conditions when the element sizes differ."""
    old, new = self._data.dtype.itemsize, dtype.itemsize
    if old != new:
        from ._dispatch import _type_name
        what = (f"to view {_type_name(self.dtype)} as {_type_name(dtype)} (different element "
                "sizes)")
        if not self._data.ndim:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if self.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {self.stride(-1)}")
        if new > old:
            ratio = new // old
            if self._data.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                                   f"{self._data.shape[-1]}")
            if self.storage_offset() % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, "
                                   f"but got {self.storage_offset()}")
    return _make(self._data.view(dtype.np), self._vc, False, None)


# ---- copy_, fill_, zero_ -------------------------------------------------------------------

def _copy_fwd(dst, src):
    if dst.dtype is _CH or type(src) is np.ndarray and src.dtype is _CH:
        return _chalf.cast(np.asarray(np.broadcast_to(src, dst.shape)), dst.dtype)
    return D.astype(np.broadcast_to(src, dst.shape), dst.dtype)


def _copy_vjp(ns, g, need):
    return (ns.zeros_of(g, g.shape) if need[0] else None, g if need[1] else None)


COPY = Op("copy_", _copy_fwd, _copy_vjp, linear=True, node="CopyBackwards")
COPY.node.name = lambda self: "ember::autograd::CopyBackwards"
CLONE.inference_via = CONTIG.inference_via = TO_COPY.inference_via = COPY


def copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    """``Tensor.copy_``: write ``src`` (broadcast, cast) into ``self`` in place."""
    src = to_operand(src)
    # PyTorch's copy_ records nothing (and checks nothing) when self's dtype cannot carry a
    # gradient: an integer tensor written from one that requires grad stays a leaf
    diff = self.is_floating_point() or self.is_complex()
    check_inplace(self, (src,) if diff else (), COPY)
    check_overlap(self, (src,))
    if isinstance(src, Tensor):
        try:
            np.broadcast_shapes(src._data.shape, self._data.shape)
            if len(src._data.shape) > len(self._data.shape) or np.broadcast_shapes(
                    src._data.shape, self._data.shape) != self._data.shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(
                f"The size of tensor a ({_last(self._data.shape, src._data.shape)[0]}) must "
                f"match the size of tensor b ({_last(self._data.shape, src._data.shape)[1]}) at "
                f"non-singleton dimension {_last(self._data.shape, src._data.shape)[2]}"
            ) from None
        if isinstance(src._data, MetaArray) and not self.is_meta:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    out = _copy_fwd(self._data, src._data if isinstance(src, Tensor) else src)
    inputs = (self, src)
    alias = _aliased_tangent(self, src) if STATE.fw_level >= 0 and diff else None
    # PyTorch's copy_ kernel returns at once for x.copy_(x) (even an expanded x); autograd
    # and the version counter still see the op
    r = commit(COPY, self, inputs, (), out, diff and records(inputs),
               write=not _same_data(self, src))
    if alias is not None:
        from ..autograd.forward_ad import _remember
        self._fw = _make(alias, Version(), False, None)
        _remember(self)
    return r


def _aliased_tangent(self: Tensor, src) -> np.ndarray | None:
    """PyTorch's copy_ into a tensor without tangent from one with a tangent of another size
    gives ``self`` the tangent ``src_tangent.broadcast_to(self.shape)``, kept as it is (not
    copied) when that view has ``self``'s sizes, strides, offset and storage size: ``self``'s
    tangent then shares memory with ``src``'s, and later in-place changes of one show in the
    other. A view ``self`` (whose tangent lives in its base's) never takes one."""
    from .._tensor import _root, lazy_bits
    from ..autograd.forward_ad import fw_of
    if not isinstance(src, Tensor) or self._base is not None or fw_of(self) is not None:
        return None
    t = fw_of(src)
    if t is None or t._rg or lazy_bits(t) or lazy_bits(self) or t.dtype is not self.dtype:
        return None
    T, d = t._data, self._data
    if type(T) is not np.ndarray or type(d) is not np.ndarray or T.shape == d.shape:
        return None
    strides = []   # expand's strides (in elements): a new dim gets size * stride of the next
    for i in range(d.ndim - 1, -1, -1):
        k = i - (d.ndim - T.ndim)
        if k >= 0:
            st = T.strides[k] // T.itemsize if T.shape[k] == d.shape[i] else 0
        else:
            st = d.shape[i + 1] * strides[0] if i < d.ndim - 1 else 1
        strides.insert(0, st)
    rt, rd = _root(T), _root(d)
    if tuple(strides) != self.stride() or rt.nbytes != rd.nbytes or (
            T.__array_interface__["data"][0] - rt.__array_interface__["data"][0]
            != d.__array_interface__["data"][0] - rd.__array_interface__["data"][0]):
        return None
    return np.lib.stride_tricks.as_strided(T, d.shape, d.strides)


def _same_data(a: Tensor, b) -> bool:
    """PyTorch's copy_ early exit: ``b`` views exactly ``a``'s elements (same memory, sizes,
    strides, dtype and conj/neg bits), e.g. ``x[:] = x`` on an expanded ``x``."""
    if b is a:
        return True
    if not isinstance(b, Tensor) or a.is_meta or b.is_meta:
        return False
    from .._tensor import lazy_bits, raw_data
    x, y = raw_data(a), raw_data(b)
    return (x.__array_interface__["data"][0] == y.__array_interface__["data"][0]
            and x.shape == y.shape and x.strides == y.strides and x.dtype == y.dtype
            and lazy_bits(a) == lazy_bits(b))


def _last(a, b):
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and y != 1:
            return x, y, max(len(a), len(b)) - i
    return a[-1] if a else 1, b[-1] if b else 1, 0


def _fill_fwd(x, v):
    if x.dtype is _CH:   # (NumPy would put the value into both parts of the pairs)
        return _chalf.from_values(np.full_like(x, v, dtype=_C64))
    return np.full_like(x, v)


FILL = Op("fill_", _fill_fwd, lambda ns, g, need, v: (ns.zeros_of(
    g, g.shape),), linear=False, node="FillBackward2")
ZERO = Op("zero_", FILL.fwd, FILL.vjp, node="ZeroBackward0")
# fill_ with a 0-dim tensor: the value is an input (its gradient is the sum, by the engine)
FILL_T = Op("fill_tensor", lambda x, v: np.array(np.broadcast_to(v, x.shape)),
            lambda ns, g, need: (ns.zeros_of(g, g.shape) if need[0] else None,
                                 g if need[1] else None), linear=True, node="FillBackward3")


def _fill_jvp(ns, tangents, primals, outs, v):
    return outs[0].new_zeros(outs[0]._data.shape)


FILL.jvp = ZERO.jvp = _fill_jvp


def fill_(self: Tensor, value, _op: Op = FILL) -> Tensor:
    """``Tensor.fill_``: every element set to ``value`` (a number or a 0-dim tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions.")
        check_inplace(self, (value,))
        out = FILL_T.fwd(self._data, _copy_fwd(np.empty((), self._data.dtype), value._data))
        return commit(FILL_T, self, (self, value), (), out, records((self, value)))
    if not isinstance(value, (int, float, complex, np.generic)):
        raise TypeError(_fill_arg_error(value))
    check_inplace(self)
    value = S.to_dtype(value, self.dtype, self._data.size == 1)
    if self._data.dtype is _CH:
        out = _chalf.from_values(np.full(self._data.shape, value, _C64))
    else:
        out = np.full(self._data.shape, value, self._data.dtype)
    return commit(_op, self, (self,), (value,), out, records((self,)))


def _fill_arg_error(value) -> str:
    n = type(value).__name__
    return ("fill_() received an invalid combination of arguments - got (" + n + "), but "
            "expected one of:\n * (Tensor value)\n      didn't match because some of the "
            "arguments have invalid types: (!" + n + "!)\n * (Number value)\n      didn't match "
            "because some of the arguments have invalid types: (!" + n + "!)\n")


def zero_(self: Tensor) -> Tensor:
    """``Tensor.zero_``."""
    return fill_(self, 0, ZERO)


for _name, _fn in [("clone", clone), ("contiguous", contiguous), ("to", to), ("type", type_),
                   ("copy_", copy_), ("fill_", fill_), ("zero_", zero_)]:
    method(_name, _fn)
method("cpu", lambda self, memory_format=None: self if memory_format is None and not self.is_meta
       else to(self, "cpu", memory_format=memory_format or _L.preserve_format))
method("cuda", lambda self, *a, **k: to(self, "cuda"))
