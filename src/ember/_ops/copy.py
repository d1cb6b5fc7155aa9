"""Copies and conversions: clone, contiguous, copy_, to / type casts, fill_, zero_."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .. import _scalar as S
from .._batched import BatchedArray as _BA
from .._device import as_device
from .._meta import MetaArray, meta_like
from .._tensor import Tensor, Version, _make
from ._dispatch import _dense, check_inplace, check_overlap, commit, records, to_operand
from ._registry import Op, apply, method, ns_fn

__all__ = ["clone", "to", "view_dtype"]


def _dense_perm(shape, strides) -> list:
    """PyTorch's ``infer_dense_strides`` order (innermost dim first): an insertion sort by
    stride in which a 0 stride compares as ambiguous, so broadcast dims stay where they are."""
    perm = list(range(len(shape)))[::-1]
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            a, b = perm[d0], perm[d1]
            sa, sb = strides[a], strides[b]
            if sa == 0 or sb == 0:
                continue
            if sa > sb or (sa == sb and shape[a] > shape[b]):
                perm[d0], perm[d1] = b, a
                d1 = d0
            elif sa < sb:
                break
    return perm


def _clone_fwd(x, keep_layout):
    if type(x) is _BA:      # a batched forward-mode tangent
        return x.copy()
    if not keep_layout:
        return np.array(x, copy=True, order="C")
    if type(x) is not np.ndarray or _dense(x):
        return np.array(x, copy=True, order="K")
    # preserve_format on a tensor that is not dense (an expand, a strided slice) lays the copy
    # out as PyTorch's empty_like does, not as NumPy's order="K" (which puts 0 strides inside)
    outer = _dense_perm(x.shape, x.strides)[::-1]
    buf = np.empty([x.shape[d] for d in outer], x.dtype)
    out = buf.transpose(np.argsort(outer))
    out[...] = x
    return out


CLONE = Op("clone", _clone_fwd, lambda ns, g, need, keep: (g,), linear=True)
CONTIG = Op("contiguous", lambda x, keep: x.copy() if type(x) is _BA else np.ascontiguousarray(x),
            lambda ns, g, need, keep: (g,), linear=True, node="CloneBackward0")


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """``torch.clone``: a copy that stays in the graph; keeps dense strides like PyTorch."""
    return apply(CLONE, (input,), (memory_format is None,))


def contiguous(self: Tensor, memory_format=None) -> Tensor:
    """``Tensor.contiguous``: ``self`` when already row-major, else a row-major copy."""
    if self.is_contiguous():
        return self
    return apply(CONTIG, (self,), (False,))


def _cast_fwd(x, npd):
    return x.astype(npd)


def _cast_vjp(ns, g, need, npd):
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
    kwargs.pop("memory_format", None)
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
                return apply(TO_COPY, (self,), (dtype.np,))
        out = apply(TO_COPY, (self,), (dtype.np,))
    elif copy and out is self:
        out = apply(TO_COPY, (self,), (self._data.dtype,))
    return out


def _type_method(dt: D.dtype):
    def f(self, memory_format=None):
        return to(self, dt)
    f.__doc__ = f"``Tensor.{dt.name}()``: a copy as {dt} (``self`` when already {dt})."
    return f


for _name, _dt in [("float", D.float32), ("double", D.float64), ("half", D.float16),
                   ("bfloat16", D.bfloat16), ("long", D.int64), ("int", D.int32),
                   ("short", D.int16), ("char", D.int8), ("byte", D.uint8), ("bool", D.bool),
                   ("cfloat", D.complex64), ("cdouble", D.complex128)]:
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
    return np.broadcast_to(src, dst.shape).astype(dst.dtype, copy=True)


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
    check_inplace(self, (src,) if diff else ())
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
    # PyTorch's copy_ kernel returns at once for x.copy_(x) (even an expanded x); autograd
    # and the version counter still see the op
    return commit(COPY, self, inputs, (), out, diff and records(inputs), write=src is not self)


def _last(a, b):
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and y != 1:
            return x, y, max(len(a), len(b)) - i
    return a[-1] if a else 1, b[-1] if b else 1, 0


FILL = Op("fill_", lambda x, v: np.full_like(x, v), lambda ns, g, need, v: (ns.zeros_of(
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
        out = FILL_T.fwd(self._data, value._data.astype(self._data.dtype))
        return commit(FILL_T, self, (self, value), (), out, records((self, value)))
    if not isinstance(value, (int, float, complex, np.generic)):
        raise TypeError(_fill_arg_error(value))
    check_inplace(self)
    value = S.to_dtype(value, self.dtype, self._data.size == 1)
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
method("cpu", lambda self, memory_format=None: self if not self.is_meta else to(self, "cpu"))
method("cuda", lambda self, *a, **k: to(self, "cuda"))
