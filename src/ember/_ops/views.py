"""View ops: results share their input's buffer and version counter.

Each is an ``Op(is_view=True)`` whose forward returns a NumPy view. In-place ops on a view rebase
the base's history onto a ``CopySlices`` node (``rebase_view``), as PyTorch does, so gradients
through the base stay right.
"""
from __future__ import annotations

import itertools
import numbers
import operator
from math import prod as _prod
from weakref import WeakSet

import numpy as np

from .._tensor import (
    CONJ_BIT,
    NEG_BIT,
    Tensor,
    _is_contiguous,
    _root,
    _wrap_dim,
    lazy_bits,
    raw_data,
)
from ..autograd.graph import Node
from ._dispatch import SELF_OVERLAP, _dense, apply
from ._registry import EM, NP, Op, edge, method, next_seq, ns_fn, wrap_view

__all__ = [
    "adjoint",
    "as_strided",
    "broadcast_to",
    "chunk",
    "diagonal",
    "expand",
    "expand_as",
    "flatten",
    "hsplit",
    "imag",
    "moveaxis",
    "movedim",
    "narrow",
    "permute",
    "real",
    "reshape",
    "select",
    "split",
    "squeeze",
    "sum_to_size",
    "swapaxes",
    "swapdims",
    "t",
    "tensor_split",
    "transpose",
    "unbind",
    "unflatten",
    "unsqueeze",
    "view",
    "view_as_complex",
    "view_as_real",
    "vsplit",
]


# ---- reshaping ---------------------------------------------------------------------------

def _infer_shape(shape, numel: int) -> tuple:
    if -1 not in shape:
        n = 1
        for s in shape:
            n *= s
        if n == numel and min(shape, default=0) >= 0:
            return shape                       # the common case: nothing to infer or check
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for i, s in enumerate(shape):
        if s != -1:
            if s < 0:
                raise RuntimeError(
                    f"invalid shape dimension {s} at index {i} of shape {_fmt(shape)}")
            known *= s
    if neg:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {_fmt(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


# the profiler turns the fast paths below off while it records (they skip Op.fwd)
_FAST = True


def _fmt(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


_ABSENT = object()


def kw_form(args: tuple, kw, name: str, fn: str) -> tuple:
    """A method's varargs (``x.view(2, 3)``) or the same argument by PyTorch's keyword
    (``x.view(size=(2, 3))``), which must be a sequence."""
    if kw is _ABSENT:
        return args
    if args:
        raise TypeError(f"{fn}() got multiple values for argument '{name}'")
    if isinstance(kw, numbers.Integral) or not hasattr(kw, "__iter__"):
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not "
                        f"{type(kw).__name__}")
    return (kw,)


def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and type(shape[0]) is not int and not isinstance(shape[0],
                                                                       numbers.Integral):
        shape = tuple(shape[0])
    for s in shape:
        if type(s) is not int:
            return tuple(int(s) for s in shape)
    return shape


def _view_fwd(x, shape):
    v = x.view()
    try:
        v.shape = shape
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return v


VIEW = Op("view", _view_fwd, lambda ns, g, need, in_shape, shape: (g.reshape(in_shape),),
          linear=True, is_view=True)
RESHAPE_COPY = Op("reshape_copy", lambda x, in_shape, shape: x.reshape(shape),
                  lambda ns, g, need, in_shape, shape: (g.reshape(in_shape),),
                  linear=True, node="UnsafeViewBackward0")


VIEW.fwd = lambda x, in_shape, shape: _view_fwd(x, shape)


def view(self: Tensor, *shape, size=_ABSENT, dtype=_ABSENT) -> Tensor:
    """``Tensor.view``: a view with a new shape (``-1`` inferred); never copies. (Or a view
    of the same bytes as another dtype.)"""
    if dtype is not _ABSENT:
        if shape or size is not _ABSENT:
            raise TypeError("view() received an invalid combination of arguments: it takes "
                            "either a dtype or a size")
        shape = (dtype,)
    shape = kw_form(shape, size, "size", "view")
    if len(shape) == 1 and type(shape[0]) is not int and hasattr(shape[0], "is_floating_point"):
        from .copy import view_dtype
        return view_dtype(self, shape[0])
    shape = _infer_shape(_shape_arg(shape), self._data.size)
    return apply(VIEW, (self,), (self._data.shape, shape))


RESHAPE_ALIAS = Op("reshape_alias", VIEW.fwd, VIEW.vjp, linear=True, is_view=True,
                   node="ReshapeAliasBackward0")


def _reshape_strided(self: Tensor, shape) -> Tensor:
    """``reshape`` of a non-contiguous tensor, as PyTorch's: a ``_reshape_alias`` view when the
    strides allow one, else a contiguous clone (CloneBackward0) reshaped (UnsafeViewBackward0)."""
    d = self._data
    v = d.view()
    try:
        v.shape = shape
    except AttributeError:
        contig = _CONTIG_OP or _contig_op()
        return apply(RESHAPE_COPY, (apply(contig, (self,), (False,)),), (d.shape, shape))
    return apply(RESHAPE_ALIAS, (self,), (d.shape, shape))


_CONTIG_OP = None


def _contig_op() -> Op:
    """copy.CONTIG, imported once (an import statement per reshape cost a fifth of it)."""
    global _CONTIG_OP
    from .copy import CONTIG
    _CONTIG_OP = CONTIG
    return CONTIG


def reshape(self: Tensor, *args, shape=_ABSENT) -> Tensor:
    """A view when the strides allow, else a copy (``torch.reshape``)."""
    shape = kw_form(args, shape, "shape", "reshape")
    if not shape:
        raise TypeError('reshape() missing 1 required positional arguments: "shape"')
    shape = _infer_shape(_shape_arg(shape), self._data.size)
    d = self._data
    if type(d) is np.ndarray and not d.flags.c_contiguous and not _is_contiguous(d):
        return _reshape_strided(self, shape)
    v = d.view()
    try:
        v.shape = shape
    except AttributeError:
        return apply(RESHAPE_COPY, (self,), (d.shape, shape))
    if _FAST and type(self) is Tensor and type(d) is np.ndarray:   # (the view made above)
        return wrap_view(VIEW, self, (d.shape, shape), v)
    return apply(VIEW, (self,), (d.shape, shape))


def view_as(self: Tensor, other: Tensor) -> Tensor:
    return view(self, other._data.shape)


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return reshape(self, other._data.shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """``torch.flatten``."""
    shape = input._data.shape
    if not shape:
        return reshape(input, (1,))
    s = _wrap_dim(start_dim, len(shape))
    e = _wrap_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    n = 1
    for k in shape[s:e + 1]:
        n *= k
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """``torch.unflatten``."""
    shape = input._data.shape
    d = _wrap_dim(dim, len(shape))
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if -1 not in sizes:
        n = 1
        for s in sizes:
            n *= s
        if n != shape[d]:
            raise RuntimeError(f"unflatten: Provided sizes {_fmt(sizes)} don't multiply up to the "
                               f"size of dim {dim} ({shape[d]}) in the input tensor")
    sizes = _infer_shape(sizes, shape[d])
    return view(input, shape[:d] + sizes + shape[d + 1:])


# ---- squeeze / unsqueeze ------------------------------------------------------------------

SQUEEZE = Op("squeeze", lambda x, in_shape, dims: np.squeeze(x, dims),
             lambda ns, g, need, in_shape, dims: (g.reshape(in_shape),), linear=True,
             is_view=True)
SQUEEZE_DIM = Op("squeeze_dim", SQUEEZE.fwd, SQUEEZE.vjp, linear=True, is_view=True,
                 node="SqueezeBackward1")
SQUEEZE_DIMS = Op("squeeze_dims", SQUEEZE.fwd, SQUEEZE.vjp, linear=True, is_view=True,
                  node="SqueezeBackward2")
def _unsqueeze_np(x, dim):
    if type(x) is np.ndarray and not x.size:
        # PyTorch's new stride (the next dim's extent, 1 past the last) from the strides it
        # reports (NumPy's reshape would lay an empty array out afresh)
        from .. import _layout as _L
        st = list(_L.torch_strides(x))
        st.insert(dim, st[dim] * x.shape[dim] if dim < x.ndim else 1)
        return np.lib.stride_tricks.as_strided(
            x, x.shape[:dim] + (1,) + x.shape[dim:], tuple(s * x.itemsize for s in st),
            writeable=x.flags.writeable)
    if type(x) is np.ndarray:   # what np.expand_dims does, without its argument handling
        r = x.reshape(x.shape[:dim] + (1,) + x.shape[dim:])
        if dim == x.ndim and dim and r.strides[-1] != x.itemsize:
            # PyTorch gives a new last dim stride 1 (NumPy repeats the previous dim's)
            r = np.lib.stride_tricks.as_strided(x, r.shape, r.strides[:-1] + (x.itemsize,),
                                                writeable=x.flags.writeable)
        return r
    return np.expand_dims(x, dim)


UNSQUEEZE = Op("unsqueeze", _unsqueeze_np,
               lambda ns, g, need, dim: (g.squeeze(dim),), linear=True, is_view=True)


def squeeze(input: Tensor, dim=None) -> Tensor:
    """``torch.squeeze``: drop size-1 dims (all, one, or a tuple of them)."""
    shape = input._data.shape
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
        return apply(SQUEEZE, (input,), (shape, dims))
    if isinstance(dim, (tuple, list)):
        wrapped = [_wrap_dim(d, len(shape)) for d in dim]
        for i, d in enumerate(wrapped):
            if d in wrapped[:i]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        dims = tuple(sorted(set(wrapped)))
        op = SQUEEZE_DIMS
    else:
        dims = (_wrap_dim(dim, len(shape)),)
        op = SQUEEZE_DIM
    dims = tuple(d for d in dims if shape and shape[d] == 1)
    return apply(op, (input,), (shape, dims))


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """``torch.unsqueeze``."""
    d = _wrap_dim(dim, input._data.ndim + 1)
    return apply(UNSQUEEZE, (input,), (d,))


# ---- transposes ---------------------------------------------------------------------------

def _transpose_fwd(x, d0, d1):
    return np.swapaxes(x, d0, d1) if x.ndim else x.view()   # 0-dim: dims 0 and -1 are itself


TRANSPOSE = Op("transpose", _transpose_fwd,
               lambda ns, g, need, d0, d1: (g.swapaxes(d0, d1) if g.ndim else g,), linear=True,
               is_view=True)
T_OP = Op("t", lambda x: x.T, lambda ns, g, need: (g.T if g.ndim == 2 else g,), linear=True,
          is_view=True)
PERMUTE = Op("permute", lambda x, dims: np.transpose(x, dims),
             lambda ns, g, need, dims: (ns.permute(g, tuple(np.argsort(dims))),), linear=True,
             is_view=True)
ns_fn("permute", lambda g, dims: np.transpose(g, dims), lambda g, dims: g.permute(dims))


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """``torch.transpose``: swap two dims (a view)."""
    n = input._data.ndim
    return apply(TRANSPOSE, (input,), (_wrap_dim(dim0, n), _wrap_dim(dim1, n)))


swapaxes = swapdims = transpose


def t(input: Tensor) -> Tensor:
    """``torch.t``: transpose of a tensor with at most 2 dims."""
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input._data.ndim}D")
    return apply(T_OP, (input,))


def permute(input: Tensor, *args, dims=_ABSENT) -> Tensor:
    """``torch.permute``."""
    dims = kw_form(args, dims, "dims", "permute")
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _shape_arg(dims)
    n = input._data.ndim
    if len(dims) != n:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
            f"to len(dims) = {len(dims)}")
    wrapped = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(wrapped)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(PERMUTE, (input,), (wrapped,))


def movedim(input: Tensor, source, destination) -> Tensor:
    n = input._data.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
            f"the same number of dims as destination ({dst} dims)")
    given = src, dst
    src = [_wrap_dim(s, n) for s in src]
    dst = [_wrap_dim(d, n) for d in dst]
    for name, dims, shown in (("source", src, given[0]), ("destination", dst, given[1])):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({shown})")
    if n == 0:
        return apply(ALIAS, (input,), ((), ()))
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, tuple(order))


moveaxis = movedim


def adjoint(input: Tensor) -> Tensor:
    """``torch.adjoint``: the conjugate transpose of the last two dims (a number: itself)."""
    n = input._data.ndim
    if n == 0:
        import warnings
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj(). "
                      "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                      "TensorShape.cpp:4390.)", UserWarning, stacklevel=2)
        return input.conj()
    if n < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {n}-D tensor.")
    return transpose(input, -2, -1).conj()


def _T(self: Tensor) -> Tensor:
    n = self._data.ndim
    return permute(self, tuple(range(n - 1, -1, -1)))


def _mT(self: Tensor) -> Tensor:
    if self._data.ndim == 0:
        return self   # as PyTorch: a number is its own transpose
    if self._data.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


# ---- expand --------------------------------------------------------------------------------

def _expand_np(x, shape):
    """NumPy's broadcast, read-only (in-place writes through it raise PyTorch's overlap error)
    only when it repeats elements: an expand adding size-1 dims is a plain writable view."""
    if type(x) is np.ndarray and x.ndim and x.dtype.fields is None:
        n = _prod(shape)   # (the shapes were checked by expand)
        if n == x.size and n:
            return x.reshape(shape)
        if n:
            return _strided_ro(x, shape, _expand_strides(x, shape))
    v = np.broadcast_to(x, shape)
    if v.size == x.size and v.size and type(x) is np.ndarray:
        if x.ndim == 0:   # PyTorch's strides from a number are all zero
            return np.lib.stride_tricks.as_strided(x, shape, v.strides,
                                                   writeable=x.flags.writeable)
        return x.reshape(shape)
    if type(x) is np.ndarray and x.ndim and v.size:
        # PyTorch's inferExpandGeometry: a dim that is not expanded keeps its stride (NumPy
        # zeroes every size-1 dim's), which later layouts (TensorIterator's order) look at
        return np.lib.stride_tricks.as_strided(x, shape, _expand_strides(x, shape),
                                               writeable=False)
    if type(x) is np.ndarray and not v.size:   # an empty result: PyTorch's strides too
        st = _expand_strides(x, shape)
        v = np.lib.stride_tricks.as_strided(x, shape, st, writeable=False)
        if not any(st):
            from .. import _layout as _L
            _L.keep_zero_strides(v)   # (expand's own zeros, not NumPy's fresh-array ones)
    return v


def _expand_strides(x: np.ndarray, shape) -> tuple:
    st = [0] * len(shape)
    off = len(shape) - x.ndim
    for i in range(len(shape) - 1, -1, -1):
        j = i - off
        if j >= 0:
            st[i] = x.strides[j] if x.shape[j] == shape[i] else 0
        elif shape[i] == 1:
            st[i] = shape[i + 1] * st[i + 1] if i + 1 < len(shape) else x.itemsize
    return tuple(st)


_Dummy = np.lib._stride_tricks_impl.DummyArray


def _strided_ro(x: np.ndarray, shape, strides) -> np.ndarray:
    """``as_strided(x, shape, strides, writeable=False)`` for a plain ndarray without a
    structured dtype, without its Python-level generality (a third of a small expand's cost)."""
    if x.flags.c_contiguous and x.dtype.kind != "V":
        # over a row-major array's own buffer: the ndarray constructor is ten times cheaper
        # than going through an array interface
        try:
            a = np.ndarray(shape, x.dtype, x, 0, strides)
        except (TypeError, ValueError, BufferError):   # a dtype the buffer protocol cannot spell
            pass
        else:
            a.setflags(write=False)
            return a
    i = x.__array_interface__
    i["shape"] = tuple(shape)
    i["strides"] = strides
    a = np.asarray(_Dummy(i, base=x))
    if a.dtype != x.dtype:   # a type the interface cannot spell (ml_dtypes' bfloat16)
        a = a.view(x.dtype)
    a.flags.writeable = False
    return a


EXPAND = Op("expand", _expand_np,
            lambda ns, g, need, shape: (g,), linear=True, is_view=True)


def _expand_fast(d: np.ndarray, sizes):
    """``_expand_np`` of row-major ``d`` to valid, nonempty ``sizes`` with the checks and
    PyTorch's strides (``_expand_strides``) in one pass; None where ``expand`` must check or
    raise (a mismatch, a negative size, an empty result)."""
    shape = d.shape
    nd = len(sizes)
    lead = nd - len(shape)
    if lead < 0:
        return None
    st = d.strides
    out = list(sizes)
    strides = [0] * nd
    n = 1
    for i in range(nd - 1, -1, -1):
        want = sizes[i]
        j = i - lead
        if j >= 0:
            s = shape[j]
            if want == s or want == -1:
                out[i] = s
                strides[i] = st[j]
            elif s != 1 or want < 0:
                return None
        elif want < 0:
            return None
        elif want == 1:
            strides[i] = out[i + 1] * strides[i + 1] if i + 1 < nd else d.itemsize
        n *= out[i]
    if not n:
        return None
    if n == d.size:   # nothing repeated: a plain (writable) view, as _expand_np
        return d.reshape(out)
    return _strided_ro(d, tuple(out), tuple(strides))


def expand(self: Tensor, *sizes, size=_ABSENT) -> Tensor:
    """``Tensor.expand``: broadcast size-1 dims without copying (``-1`` keeps a dim)."""
    sizes = kw_form(sizes, size, "size", "expand")
    if not sizes:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    sizes = _shape_arg(sizes)
    d = self._data
    if _FAST and type(self) is Tensor and type(d) is np.ndarray and d.flags.c_contiguous \
            and d.dtype.kind != "V" and d.ndim:
        r = _expand_fast(d, sizes)
        if r is not None:
            return wrap_view(EXPAND, self, (r.shape,), r)
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand(ember.{self.dtype._legacy}{{{list(shape)}}}, "
            f"size={list(sizes)}): the number of sizes provided ({len(sizes)}) must be greater "
            f"or equal to the number of dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    out = list(sizes)
    for i in range(lead):
        if sizes[i] < 0:
            raise RuntimeError(
                f"The expanded size of the tensor ({sizes[i]}) isn't allowed in a leading, "
                f"non-existing dimension {i}" if sizes[i] == -1 else
                "numel: integer multiplication overflow")
    for i in range(len(shape) - 1, -1, -1):   # PyTorch reports the last mismatching dim
        s = shape[i]
        want = sizes[lead + i]
        if want == -1:
            out[lead + i] = s
        elif s != want and s != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({s}) at "
                f"non-singleton dimension {lead + i}.  Target sizes: {list(sizes)}.  Tensor "
                f"sizes: {list(shape)}")
    return apply(EXPAND, (self,), (tuple(out),))


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return expand(self, other._data.shape)


def broadcast_to(input: Tensor, size) -> Tensor:
    """``torch.broadcast_to``."""
    return expand(input, tuple(size))


SUM_TO = Op("sum_to_size", lambda x, shape, in_shape: _np_sum_to(x, shape),
            lambda ns, g, need, shape, in_shape: (ns.expand_to(g, in_shape),), linear=True,
            node="SumBackward1")


def _np_sum_to(x, shape):
    from ..autograd.engine import _sum_to
    return _sum_to(x, tuple(shape))


def sum_to_size(self: Tensor, *args, size=_ABSENT) -> Tensor:
    """Sum ``self`` down to ``size`` (the adjoint of expand)."""
    size = _shape_arg(kw_form(args, size, "size", "sum_to_size"))
    if not size:   # PyTorch's sum_to sums everything for an empty size, even a 0-dim self
        return self.sum()
    if self._data.shape == size:
        return self
    shape = self._data.shape
    if len(size) > len(shape) or any(
            s != n and s != 1 for s, n in zip(size[::-1], shape[::-1])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    return apply(SUM_TO, (self,), (size, self._data.shape))


# ---- selecting ----------------------------------------------------------------------------

def _get_fwd(x, key):
    return x[key]


def _embed(g, shape, key):
    z = np.zeros(shape, g.dtype)
    z[key] = g
    return z


def _embed_em(g, shape, key):
    return apply(EMBED, (g,), (shape, key))


def _get_vjp(ns, g, need, in_shape, key):
    return (ns.embed(g, in_shape, key),)


def _vget(x, in_shape, key):
    return x[key + (Ellipsis,)]  # an ndarray view even when every dim is selected


def slice_np(x, in_shape, key):
    """``x[key]`` for a slice key (``slice(None)``s, then the one slice). An empty slice keeps
    PyTorch's stride (the dim's times the step) and storage offset (the clamped start's):
    NumPy drops both there."""
    r = x[key + (Ellipsis,)]
    if not r.size and type(r) is np.ndarray and key:
        k, d = key[-1], len(key) - 1
        if isinstance(k, slice) and not r.shape[d] and all(j == slice(None) for j in key[:-1]):
            start, _, step = k.indices(x.shape[d])
            st = list(r.strides)
            st[d] = x.strides[d] * step
            r = shifted_view(x, r.shape, st, start * x.strides[d])
    return r


def shifted_view(x: np.ndarray, shape, strides, offset: int) -> np.ndarray:
    """A view of ``x``'s memory ``offset`` bytes past its start with these byte strides (an
    empty one may start at the buffer's end, as PyTorch's storage offsets allow)."""
    iface = dict(x.__array_interface__)
    iface["data"] = (iface["data"][0] + offset, not x.flags.writeable)
    iface["shape"], iface["strides"] = tuple(shape), tuple(strides)
    return np.asarray(_Window(iface, x))


class _Window:
    """Memory of ``base`` described by an array interface (what NumPy's as_strided wraps;
    ``_root`` follows ``base`` through it)."""
    __slots__ = ("__array_interface__", "base")

    def __init__(self, iface: dict, base: np.ndarray) -> None:
        self.__array_interface__ = iface
        self.base = base


SELECT = Op("select", _vget, _get_vjp, linear=True, is_view=True)
SLICE = Op("slice", slice_np, _get_vjp, linear=True, is_view=True)
ALIAS = Op("alias", _vget, _get_vjp, linear=True, is_view=True)
EMBED = Op("embed", _embed, lambda ns, g, need, shape, key: (ns.basic_get(g, key),),
           linear=True, node="SliceBackwardBackward0")
ns_fn("embed", _embed, lambda g, shape, key: apply(EMBED, (g,), (shape, key)))
ns_fn("basic_get", lambda x, key: x[key],
      lambda x, key: apply(SLICE, (x,), (x._data.shape, key)))


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """``torch.select``: the slice at ``index`` along ``dim``, without that dim."""
    shape = input._data.shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, len(shape))
    size = shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(shape)} at dimension {d}")
    key = (slice(None),) * d + (index % size,)
    return apply(SELECT, (input,), (shape, key))


def slice_dim(input: Tensor, dim: int, start, stop, step: int = 1) -> Tensor:
    """Basic slicing along one dim (the SliceBackward0 op)."""
    shape = input._data.shape
    if step <= 0:
        raise ValueError("step must be greater than zero")
    key = (slice(None),) * dim + (slice(start, stop, step),)
    return apply(SLICE, (input,), (shape, key))


def narrow_start(input: Tensor, start):
    """narrow's checks of ``input`` and ``start`` (an int or a 0-dim integer tensor)."""
    if not input._data.ndim:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor):
        if start.dim() or start._data.dtype.kind not in "iu":   # (bool is not integral here)
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start)
    return start


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``torch.narrow``."""
    start = narrow_start(input, start)
    shape = input._data.shape
    d = _wrap_dim(dim, len(shape))
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -shape[d] <= start <= shape[d]:
        raise IndexError(f"start out of range (expected to be in range of [{-shape[d]}, "
                         f"{shape[d]}], but got {start})")
    if start < 0:
        start += shape[d]
    if start < 0 or start + length > shape[d] or length < 0:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({shape[d]}).")
    return slice_dim(input, d, start, start + length)


def slice_is_noop(k: slice, size: int) -> bool:
    """Whether PyTorch's indexing skips slice ``k`` on a dim of ``size``: it compares the slice
    as written, before wrapping (start 0, step 1, stop at or past the end), so ``-n:`` taking
    everything still records, and so does ``:-1`` on an empty dim (which takes everything).
    ``k`` has been checked by ``k.indices``."""
    return (k.start is None or operator.index(k.start) == 0) \
        and (k.step is None or operator.index(k.step) == 1) \
        and (k.stop is None or operator.index(k.stop) >= size)


def getitem_basic(self: Tensor, key: tuple, lone_slice: bool = False) -> Tensor:
    """Basic indexing (ints, slices, None, Ellipsis) as a chain of select/slice/unsqueeze views,
    like PyTorch's: a slice taking a whole dim is skipped (an index doing nothing makes an
    alias), except for a lone slice key (``lone_slice``, ``x[:]``), always a SliceBackward0."""
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    ndim = self._data.ndim
    if n_real > ndim:
        raise IndexError(
            f"too many indices for tensor of dimension {ndim}")
    out = self
    dim = 0
    ellipsis = ndim - n_real   # as PyTorch: a second ellipsis stands for no dims
    for pos, k in enumerate(key):
        if k is Ellipsis:
            dim += ellipsis
            ellipsis = 0
        elif k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, slice):
            size = out._data.shape[dim]
            start, stop, step = k.indices(size)
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            if lone_slice or not slice_is_noop(k, size):
                out = slice_dim(out, dim, start, stop, step)
            dim += 1
        else:
            i = int(k)
            size = out._data.shape[dim]
            if not -size <= i < size:   # PyTorch names the index's position in the key
                raise IndexError(
                    f"index {i} is out of bounds for dimension {pos} with size {size}")
            out = select(out, dim, i)
    if out is self:
        out = apply(ALIAS, (self,), (self._data.shape, ()))
    return out


def _diag_back_np(g, in_shape, offset, d1, d2):
    z = np.zeros(in_shape, g.dtype)
    zz = np.moveaxis(z, (d1, d2), (-2, -1))
    i = np.arange(g.shape[-1])
    zz[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return z


DIAG_BACK = Op("diagonal_backward", _diag_back_np,
               lambda ns, g, need, in_shape, offset, d1, d2: (g.diagonal(offset, d1, d2),),
               linear=True, node="DiagonalBackwardBackward0")
ns_fn("diagonal_backward", _diag_back_np,
      lambda g, in_shape, offset, d1, d2: apply(DIAG_BACK, (g,), (in_shape, offset, d1, d2)))
def _diagonal_np(x, offset, d1, d2, in_shape):
    d = np.diagonal(x, offset, d1, d2)
    if x.flags.writeable:
        d.flags.writeable = True  # NumPy hands back a read-only view; PyTorch's is writable
    return d


DIAGONAL = Op("diagonal", _diagonal_np,
              lambda ns, g, need, offset, d1, d2, in_shape:
              (ns.diagonal_backward(g, in_shape, offset, d1, d2),),
              linear=True, is_view=True)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``torch.diagonal`` (a view)."""
    n = input._data.ndim
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(DIAGONAL, (input,), (offset, d1, d2, input._data.shape))


def _as_strided_np(x, size, stride, offset):
    item = x.itemsize
    # the storage: through as_strided's wrapper objects too (a view made by as_strided counts
    # its offset from the same storage start as PyTorch's)
    root = _root(x)
    # the storage in memory order: an owner laid out in any dense order (a result adopting its
    # input's permuted strides) starts at its lowest address
    if _dense(root):
        flat = np.lib.stride_tricks.as_strided(root, (root.size,), (root.itemsize,))
        if root.dtype != x.dtype and type(root) is np.ndarray:   # (.real of a complex storage)
            flat = flat.view(x.dtype)
    else:
        flat = root.reshape(-1)
    r = np.lib.stride_tricks.as_strided(flat[offset:], tuple(size),
                                        tuple(s * item for s in stride))
    if not r.size and not any(stride):
        from .. import _layout as _L
        _L.keep_zero_strides(r)   # (asked-for zero strides: reported as they are)
    return r


def _as_strided_vjp(ns, g, need, size, stride, offset, in_shape, idx):
    # elements of the input seen several times (overlapping strides) sum their gradients;
    # elements read from storage outside the input (position -1) give it none, as in PyTorch
    outside = idx < 0
    if outside.size and outside.all():   # (an empty view still links the grad to the graph)
        return (ns.zeros_of(g, in_shape),)
    if outside.any():
        g = ns.where(ns.const(outside), 0, g)
        idx = np.where(outside, 0, idx)
    return (ns.scatter_add_flat(g, idx, in_shape),)


def _scatter_add_flat_np(g, idx, shape):
    z = np.zeros(int(np.prod(shape)), g.dtype)
    np.add.at(z, idx.reshape(-1), np.ascontiguousarray(g).reshape(-1))
    return z.reshape(shape)


SCATTER_ADD_FLAT = Op("scatter_add_flat", lambda g, idx, shape: _scatter_add_flat_np(g, idx, shape),
                      lambda ns, g, need, idx, shape: (ns.take_flat(g, idx),), linear=True,
                      node="AsStridedBackwardBackward0")
ns_fn("scatter_add_flat", _scatter_add_flat_np,
      lambda g, idx, shape: apply(SCATTER_ADD_FLAT, (g,), (idx, tuple(shape))))


AS_STRIDED = Op("as_strided", lambda x, size, stride, offset, in_shape, idx:
                _as_strided_np(x, size, stride, offset),
                _as_strided_vjp, linear=True, is_view=True)


def _check_as_strided(x: np.ndarray, size, stride, off: int, meta: bool) -> None:
    """PyTorch's setStrided checks: a view reaching outside the storage is refused (NumPy
    would read past the buffer)."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(st < 0 for st in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: [{', '.join(str(st) for st in stride)}]")
    if off < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {off}")
    if any(n == 0 for n in size) or meta:   # a meta tensor holds no storage to check
        return
    item = x.itemsize
    need = (1 + sum((n - 1) * st for n, st in zip(size, stride)) + off) * item
    have = _root(x).nbytes
    if need > have:
        def fmt(t):
            return f"[{', '.join(str(v) for v in t)}]"
        raise RuntimeError(
            f"setStorage: sizes {fmt(size)}, strides {fmt(stride)}, storage offset {off}, and "
            f"itemsize {item} requiring a storage size of {need} are out of bounds for storage "
            f"of size {have}")


def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """``torch.as_strided`` over the input's storage (elements counted from its start)."""
    off = input.storage_offset() if storage_offset is None else storage_offset
    d = raw_data(input)   # (the memory itself: a conj view's _data is a transformed copy)
    _check_as_strided(d, tuple(size), tuple(stride), off, input.is_meta)
    out = _as_strided_np(d, tuple(size), tuple(stride), off)
    return apply(AS_STRIDED, (input,), (tuple(size), tuple(stride), off, d.shape,
                                        view_index(d, out)))


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``Tensor.unfold``: sliding windows along a dim, as a view."""
    shape = self._data.shape
    d = _wrap_dim(dimension, len(shape))
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    n = (shape[d] - size) // step + 1 if shape else 1
    if shape and size > shape[d]:
        raise RuntimeError(
            f"maximum size for tensor at dimension {d} is {shape[d]} but size is {size}")
    if shape:
        st = self.stride()
        new_shape = shape[:d] + (n,) + shape[d + 1:] + (size,)
        new_stride = st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],)
    else:   # a 0-dim tensor is one window of itself
        new_shape, new_stride = (size,), (1,)
    off = self.storage_offset()
    d = raw_data(self)   # (the memory itself: a conj view's _data is a transformed copy)
    out = _as_strided_np(d, new_shape, new_stride, off)
    return apply(UNFOLD, (self,), (new_shape, new_stride, off, shape, view_index(d, out)))


UNFOLD = Op("unfold", AS_STRIDED.fwd, _as_strided_vjp, linear=True, is_view=True)


# ---- multi-output views -----------------------------------------------------------------

def _split_fwd(x, dim, bounds, in_shape=None):
    return tuple(x[(slice(None),) * dim + (slice(a, b),)] for a, b in bounds)


def _split_vjp(ns, grads, need, dim, bounds, in_shape):
    if type(grads) is not tuple:   # a split into one piece
        grads = (grads,)
    parts = []
    for (a, b), g in zip(bounds, grads):
        if g is None:
            shape = list(in_shape)
            shape[dim] = b - a
            g = ns.zeros_of(grads[_first(grads)], tuple(shape))
        parts.append(g)
    return (ns.cat(parts, dim),)


def _first(gs):
    for i, g in enumerate(gs):
        if g is not None:
            return i
    return 0


_MULTI: dict = {}


def _multi_view_op(name: str, n: int, fwd, vjp, jvp) -> Op:
    """The op for a view function with ``n`` outputs (one Op per output count, cached)."""
    op = _MULTI.get((name, n))
    if op is None:
        node = "".join(p.capitalize() for p in name.split("_")) + "Backward0"
        op = _MULTI[(name, n)] = Op(name, fwd, vjp, jvp, is_view=True, n_out=n, node=node)
    return op


def _split_jvp(ns, tangents, primals, outs, dim, bounds, in_shape):
    r = tuple(slice_dim(tangents[0], dim, a, b) for a, b in bounds)
    return r if len(r) > 1 else r[0]


def _split(input: Tensor, dim: int, bounds, name: str) -> tuple:
    op = _multi_view_op(name, len(bounds), _split_fwd, _split_vjp, _split_jvp)
    r = apply(op, (input,), (dim, tuple(bounds), input._data.shape))
    return r if type(r) is tuple else (r,)


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """``torch.split``: chunks of a given size, or of the listed sizes, along ``dim``."""
    shape = tensor._data.shape
    d = _wrap_dim(dim, len(shape))
    size = shape[d]
    if isinstance(split_size_or_sections, numbers.Integral):
        s = int(split_size_or_sections)
        if s < 0:
            raise RuntimeError(
                f"split expects split_size be non-negative, but got split_size={s}")
        if s <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        # as PyTorch: at least one chunk, so an empty dim gives one empty piece
        bounds = [(a, min(a + s, size)) for a in range(0, size, s)] if size else [(0, 0)]
        return _split(tensor, d, bounds, "split")
    sizes = list(split_size_or_sections)
    if sum(sizes) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
            f"at dimension {d}), but got split_sizes={sizes}")
    bounds, a = [], 0
    for s in sizes:
        bounds.append((a, a + s))
        a += s
    return _split(tensor, d, bounds, "split_with_sizes")


def _split_method(self: Tensor, split_size, dim: int = 0) -> tuple:
    """``Tensor.split`` (its argument is called ``split_size``)."""
    return split(self, split_size, dim)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """``torch.chunk``."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    if not input._data.ndim:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    s = -(-size // chunks) if size else 0
    if s == 0:
        return split(input, [0] * chunks if size == 0 else 1, d)
    return split(input, s, d)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """``torch.tensor_split``: a number of sections or the split indices (a list or tensor)."""
    if isinstance(indices_or_sections, Tensor):
        t = indices_or_sections
        indices_or_sections = int(t.item()) if t._data.ndim == 0 else t.tolist()
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    if isinstance(indices_or_sections, numbers.Integral):
        n = int(indices_or_sections)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        sizes = [q + 1] * r + [q] * (n - r)
    else:
        idx = [0] + [min(max(int(i), 0), size) for i in indices_or_sections] + [size]
        sizes = [max(b - a, 0) for a, b in itertools.pairwise(idx)]
    # independent slices (SliceBackward0 each, modifiable in place), as PyTorch's
    out, a = [], 0
    for s in sizes:
        out.append(slice_dim(input, d, a, a + s))
        a += s
    return tuple(out)


def _xsplit(name: str, input: Tensor, sections, min_dims: int, dim: int) -> tuple:
    """``torch.hsplit`` / ``vsplit`` / ``dsplit``: tensor_split along ``dim`` after PyTorch's
    checks (enough dims; a number of sections must divide the dim evenly)."""
    n = input._data.ndim
    if n < min_dims:
        raise RuntimeError(f"ember.{name} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {n} dimensions!")
    if isinstance(sections, numbers.Integral):
        size = input._data.shape[dim]
        if sections == 0 or size % abs(sections):
            raise RuntimeError(
                f"ember.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


def split_args(name: str, input, sections) -> None:
    """PyTorch's parser error for h/v/dsplit's overloads (a tensor and an int or a sequence)."""
    if not (isinstance(input, Tensor) and isinstance(
            sections, (numbers.Integral, Tensor, tuple, list))):
        from ._parser import invalid_combination
        raise invalid_combination(name, (input, sections))


def hsplit(input: Tensor, sections) -> tuple:
    split_args("hsplit", input, sections)
    return _xsplit("hsplit", input, sections, 1, 1 if input._data.ndim > 1 else 0)


def vsplit(input: Tensor, sections) -> tuple:
    split_args("vsplit", input, sections)
    return _xsplit("vsplit", input, sections, 2, 0)


def _unbind_vjp(ns, grads, need, dim, n, in_shape):
    if type(grads) is not tuple:   # a size-1 dim
        grads = (grads,)
    i0 = _first(grads)
    parts = [g if g is not None else ns.zeros_of(grads[i0], grads[i0].shape) for g in grads]
    return (ns.stack(parts, dim),)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    """``torch.unbind``: the slices along ``dim``, as views."""
    shape = input._data.shape
    if not shape and dim in (0, -1):
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, len(shape))
    n = shape[d]
    if n == 0:
        return ()
    op = _multi_view_op("unbind", n, _unbind_fwd, _unbind_vjp, _unbind_jvp)
    r = apply(op, (input,), (d, n, shape))
    return r if type(r) is tuple else (r,)


def _unbind_fwd(x, dim, n, in_shape):
    m = np.moveaxis(x, dim, 0)
    return tuple(m[i, ...] for i in range(n))   # 0-dim results stay views, not NumPy scalars


def _unbind_jvp(ns, tangents, primals, outs, dim, n, in_shape):
    r = unbind(tangents[0], dim)
    return r if len(r) > 1 else r[0]


# ---- complex views -----------------------------------------------------------------------

def real(input: Tensor) -> Tensor:
    """``torch.real``: a view of the real parts (the tensor itself for real dtypes). As in
    PyTorch, it is ``select(view_as_real(input), -1, 0)`` (SelectBackward0 over
    ViewAsRealBackward0)."""
    if not input.is_complex():
        return input
    if lazy_bits(input) & CONJ_BIT:   # the real parts of the memory under the conj bit
        return select(view_as_real(input.conj()), -1, 0)
    return select(view_as_real(input), -1, 0)


def imag(input: Tensor) -> Tensor:
    """``torch.imag``: a view of the imaginary parts, ``select(view_as_real(input), -1, 1)``;
    complex tensors only."""
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if lazy_bits(input) & CONJ_BIT:   # the memory's imaginary parts, read negated
        return select(view_as_real(input.conj())._neg_view(), -1, 1)
    return select(view_as_real(input), -1, 1)


def _complex_of_pairs(x):
    if x.dtype == np.float16:   # complex32 (ember._chalf)
        from .._chalf import from_pairs
        return from_pairs(x)
    return np.ascontiguousarray(x).view(np.complex128 if x.dtype == np.float64
                                        else np.complex64)[..., 0]


def _real_pairs(x):
    return _pairs(x) if type(x) is np.ndarray else x.view(x.real.dtype).reshape(x.shape + (2,))


VIEW_AS_REAL = Op("view_as_real", _real_pairs, lambda ns, g, need: (ns.view_as_complex(g),),
                  linear=True, is_view=True)
VIEW_AS_COMPLEX = Op("view_as_complex", _complex_of_pairs,
                     lambda ns, g, need: (ns.view_as_real(g),), linear=True, is_view=True)
VIEW_AS_REAL.replays = VIEW_AS_COMPLEX.replays = True


def view_as_real(input: Tensor) -> Tensor:
    """``torch.view_as_real``: a complex tensor's memory as (..., 2) real pairs (a view)."""
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if lazy_bits(input) & CONJ_BIT:
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
            "conjugate tensor so you can view it as real, use self.resolve_conj(); however, be "
            "warned that the resulting tensor will NOT alias the original.")
    return apply(VIEW_AS_REAL, (input,))


def view_as_complex(input: Tensor) -> Tensor:
    """``torch.view_as_complex``: (..., 2) real pairs read as complex numbers (a view)."""
    d = input._data
    if d.dtype.kind != "f" or d.dtype.itemsize < 4 and d.dtype != np.float16:
        from ._dispatch import _type_name
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {_type_name(input.dtype)}")
    if d.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if d.shape[-1:] != (2,):
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return apply(VIEW_AS_COMPLEX, (input,))


ns_fn("view_as_complex", _complex_of_pairs, view_as_complex)
ns_fn("view_as_real", _real_pairs, view_as_real)


# ---- in-place on views: CopySlices -------------------------------------------------------

def view_index(base: np.ndarray, view: np.ndarray) -> np.ndarray:
    """For each element of ``view`` (a view into ``base``'s memory), its row-major position in
    ``base``: the view's geometry in terms any gradient of base's shape can use."""
    item = base.itemsize
    # the buffer spans both arrays' memory: a view (as_strided's) may reach storage outside the
    # base, whose elements get position -1 (no gradient flows to them)
    lo = min(_lowest(base), _lowest(view) if view.size else _addr(base))
    hi = max(_lowest(base) + _extent(base), _lowest(view) + _extent(view))
    buf = np.full((hi - lo) // item + 1, -1, np.int64)
    boff = (_addr(base) - lo) // item
    bview = np.lib.stride_tricks.as_strided(buf[boff:], base.shape,
                                            tuple(s // item * 8 for s in base.strides))
    bview[...] = np.arange(base.size).reshape(base.shape)
    voff = (_addr(view) - lo) // item
    return np.lib.stride_tricks.as_strided(buf[voff:], view.shape,
                                           tuple(s // item * 8 for s in view.strides)).copy()


def _addr(a) -> int:
    return a.__array_interface__["data"][0]


def _lowest(a) -> int:
    """The lowest address ``a`` reads (below its data pointer for negative strides)."""
    return _addr(a) + sum(s * (n - 1) for s, n in zip(a.strides, a.shape) if s < 0 and n > 0)


def _extent(a) -> int:
    if a.size == 0:
        return 0
    return sum((n - 1) * abs(s) for n, s in zip(a.shape, a.strides)) + a.itemsize


def _take_flat_np(g, idx):
    return np.ascontiguousarray(g).reshape(-1)[idx]


def _put_flat_np(g, idx, v):
    r = np.array(g, order="C", copy=True)
    r.reshape(-1)[idx] = v
    return r


TAKE_FLAT = Op("take_flat", _take_flat_np,
               lambda ns, g, need, idx, shape: (ns.put_flat(ns.zeros_of(g, shape), idx, g),),
               linear=True, node="AsStridedBackward0")
PUT_FLAT = Op("put_flat", lambda g, v, idx: _put_flat_np(g, idx, v),
              lambda ns, g, need, idx: (ns.put_flat(g, idx, ns.zeros_of(g, idx.shape))
                                        if need[0] else None,
                                        ns.take_flat(g, idx) if need[1] else None),
              linear=True, node="CopySlices")
TAKE_FLAT.fwd = lambda g, idx, shape: _take_flat_np(g, idx)
ns_fn("take_flat", _take_flat_np,
      lambda g, idx: apply(TAKE_FLAT, (g,), (idx, g._data.shape)))
ns_fn("put_flat", _put_flat_np, lambda g, idx, v: apply(PUT_FLAT, (g, v), (idx,)))


# A view's place in its base, for gradients of the base's shape: row-major positions
# (``view_index``) plus a mode for views whose dtype differs from the base's. Mode 1: a real
# view (``.real``, ``.imag``, ``view_as_real``) of a complex base, positions counted in the base's
# (real, imag) pairs; mode 2: a complex view (``view_as_complex``) of a real base, the view's
# pairs counted in the base.

def _pairs(a: np.ndarray) -> np.ndarray:
    """A complex array's memory as (..., 2) real pairs, for any strides."""
    r = a.real if a.dtype.kind == "c" else a["real"]   # (complex32's pairs: ember._chalf)
    return np.lib.stride_tricks.as_strided(r, a.shape + (2,), a.strides + (r.itemsize,))


def view_geometry(base: np.ndarray, view: np.ndarray) -> tuple:
    """(positions, mode) of ``view`` inside ``base``."""
    # (complex32's pairs: a structured dtype, ember._chalf)
    bc = base.dtype.kind == "c" or base.dtype.names is not None
    vc = view.dtype.kind == "c" or view.dtype.names is not None
    if bc == vc:
        return view_index(base, view), 0
    if bc:
        return view_index(_pairs(base), view), 1
    return view_index(base, _pairs(view)), 2


def tensor_geometry(base: Tensor, view: Tensor) -> tuple:
    """(positions, mode) of view tensor ``view`` inside ``base``, through their memory; the
    mode also carries the conj/neg bits the view reads its region through (``_lazy``)."""
    idx, mode = view_geometry(raw_data(base), raw_data(view))
    return idx, mode | (lazy_bits(view) ^ lazy_bits(base))


def _lazy(ns, g, mode):
    """A gradient passed between a view and its base region through the view's bits (conj and
    negation are their own adjoints in PyTorch's convention)."""
    if mode & CONJ_BIT:
        g = ns.conj(g)
    if mode & NEG_BIT:
        g = -g
    return g


def geo_take(ns, G, idx, mode):
    """The view's region of a base-shaped gradient ``G``."""
    kind = mode & 3
    if kind == 0:
        r = ns.take_flat(G, idx)
    elif kind == 1:
        r = ns.take_flat(ns.view_as_real(G), idx)
    else:
        r = ns.view_as_complex(ns.take_flat(G, idx))
    return _lazy(ns, r, mode) if mode > 3 else r


def geo_put(ns, G, idx, v, mode):
    """``G`` with the view's region replaced by ``v``."""
    if mode > 3:
        v = _lazy(ns, v, mode)
    kind = mode & 3
    if kind == 0:
        return ns.put_flat(G, idx, v)
    if kind == 1:
        return ns.view_as_complex(ns.put_flat(ns.view_as_real(G), idx, v))
    return ns.put_flat(G, idx, ns.view_as_real(v))


def geo_scatter(ns, g, idx, base_shape, mode):
    """A base-shaped gradient from the view's gradient ``g`` (overlapping positions sum)."""
    if mode > 3:
        g = _lazy(ns, g, mode)
    kind = mode & 3
    if kind == 0:
        return ns.scatter_add_flat(g, idx, base_shape)
    if kind == 1:
        return ns.view_as_complex(ns.scatter_add_flat(g, idx, tuple(base_shape) + (2,)))
    return ns.scatter_add_flat(ns.view_as_real(g), idx, base_shape)


# CopySlices nodes over views whose elements share memory
_OVERLAPPING: WeakSet = WeakSet()


class CopySlices(Node):
    """The base's new history after an in-place op on one of its views: the gradient for the
    view's region goes through the in-place op's node, the rest flows to the old history."""

    __slots__ = ()
    op = None

    def name(self) -> str:
        return "ember::autograd::CopySlices"

    def _apply(self, grads, graph: bool):
        from ..autograd.engine import call_node
        idx, mode, inner = self._params
        G = grads[0]
        ns = EM if graph else NP
        region = geo_take(ns, G, idx, mode)
        res = call_node(inner, [region], graph)
        if res[0] is not None and self in _OVERLAPPING:
            # PyTorch copies the gradient into an as_strided slice of the base's: refused where
            # the view's elements share memory (an expand written by masked_fill_ and the like)
            raise RuntimeError(SELF_OVERLAP)
        g_self = res[0] if res[0] is not None else ns.zeros_of(region, region.shape)
        out = geo_put(ns, G, idx, g_self, mode)
        return (out,) + tuple(res[1:])


def _view_history_vjp(ns, g, need, size, stride, offset, in_shape, idx, mode):
    return (geo_scatter(ns, g, idx, in_shape, mode),)


VIEW_HISTORY = Op("view_history", None, _view_history_vjp, node="AsStridedBackward0",
                  names=("size", "stride", "storage_offset", "self_sym_sizes"))
# PyTorch regenerates the history of a view whose chain holds a view op that as_strided cannot
# express (a dtype change, the conj or neg bit) by replaying the chain: the regenerated grad_fn
# keeps the last op's name
_REPLAY_HISTORY: dict = {}


def _replay_history(op: Op) -> Op:
    h = _REPLAY_HISTORY.get(op)
    if h is None:
        h = _REPLAY_HISTORY[op] = Op(op.name + "_history", None, _view_history_vjp,
                                     node=op.node.__name__, names=())
    return h


def as_strided_node(view: Tensor, base: Tensor):
    """An AsStridedBackward0 node taking ``view``'s region out of ``base``'s history: a view's
    grad_fn once its buffer was changed in place behind its back."""
    idx, mode = tensor_geometry(base, view)
    op = view._x.view_op if view._x is not None else None
    vn = object.__new__(VIEW_HISTORY.node if op is None else _replay_history(op).node)
    vn._seq = next_seq()
    vn._h = None
    vn._saved = ()
    vn._params = (view._data.shape, view.stride(), view.storage_offset(), base._data.shape, idx,
                  mode)
    vn._next = (edge(base),)
    return vn


def rebase_view(view: Tensor, node) -> None:
    """Make ``view``'s base take a CopySlices node over ``node`` as history, and ``view`` a view
    of that new history."""
    from .._tensor import set_history
    base = view._base
    idx, mode = tensor_geometry(base, view)
    cs = object.__new__(CopySlices)
    cs._seq = next_seq()
    cs._h = None
    cs._saved = ()
    cs._params = (idx, mode, node)
    cs._next = (edge(base),) + node._next[1:]
    d = view._data
    if d.size and any(st == 0 and n > 1 for st, n in zip(d.strides, d.shape)):
        _OVERLAPPING.add(cs)
    set_history(base, cs, 0)
    set_history(view, as_strided_node(view, base), 0)
    view._av = view._vc.v


# ---- method registration -----------------------------------------------------------------

for _name, _fn in [("view", view), ("reshape", reshape), ("view_as", view_as),
                   ("reshape_as", reshape_as), ("flatten", flatten), ("unflatten", unflatten),
                   ("squeeze", squeeze), ("unsqueeze", unsqueeze), ("transpose", transpose),
                   ("swapaxes", swapaxes), ("swapdims", swapdims), ("permute", permute),
                   ("t", t), ("expand", expand), ("expand_as", expand_as),
                   ("broadcast_to", broadcast_to), ("select", select), ("narrow", narrow),
                   ("diagonal", diagonal), ("as_strided", as_strided), ("unfold", unfold),
                   ("unbind", unbind), ("split", _split_method), ("chunk", chunk),
                   ("tensor_split", tensor_split), ("movedim", movedim), ("moveaxis", moveaxis),
                   ("adjoint", adjoint), ("sum_to_size", sum_to_size), ("hsplit", hsplit),
                   ("vsplit", vsplit)]:
    method(_name, _fn)
Tensor.T = property(_T)
Tensor.mT = property(_mT)
def _H(self: Tensor) -> Tensor:
    n = self._data.ndim
    if n == 0:
        return self.conj()   # as PyTorch (deprecated there): a number's adjoint is its conjugate
    if n != 2:
        extra = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{extra}")
    return transpose(self, 0, 1).conj()


def _mH(self: Tensor) -> Tensor:
    n = self._data.ndim
    if n == 0:
        return self.conj()
    if n < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. Got "
                           f"{n}-D tensor.")
    return transpose(self, -2, -1).conj()


Tensor.H = property(_H)
Tensor.mH = property(_mH)
Tensor.real = property(real)
Tensor.imag = property(imag)
ns_fn("zeros_of", lambda g, shape: np.zeros(shape, g.dtype),
      lambda g, shape: g.new_zeros(tuple(shape)))
