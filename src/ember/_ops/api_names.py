"""``torch.*`` functions and ``Tensor`` methods that real programs call and that are thin forms
of what ember already has: the in-place function forms (``torch.exp_(x)`` is ``x.exp_()``),
``torch.detach``, the tensor predicates as functions, ``frombuffer``, the in-place GEMMs, the
CPU-only ``apply_``/``map_``/``map2_``, ``pin_memory`` as PyTorch's CPU build answers it, the
deprecated ``resize``/``resize_as``, and the removed linear-algebra functions, which raise
PyTorch's message pointing to their ``torch.linalg`` replacements."""
from __future__ import annotations

import enum
import warnings

import numpy as np

from .. import _dtype as D
from .._settings import warn_once
from .._tensor import Tensor, _root
from ._dispatch import inplace
from ._parser import must_be
from ._registry import method

__all__ = ["addmv_", "as_strided_", "detach", "detach_", "eig", "frombuffer", "get_device",
           "is_inference", "is_nonzero", "is_same_size", "is_signed", "is_storage", "lstsq",
           "matrix_rank", "solve", "symeig"]


def _tensor_arg(fn, name: str, value) -> None:
    if not isinstance(value, Tensor):
        raise must_be(fn, name, value)


# ---- in-place function forms: torch.<name>_(input, ...) is input.<name>_(...) -------------------

_UNARY_INPLACE = (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ "
    "atanh_ ceil_ cos_ cosh_ deg2rad_ erf_ erfc_ exp2_ exp_ expm1_ fix_ floor_ frac_ i0_ log10_ "
    "log1p_ log2_ log_ neg_ negative_ rad2deg_ reciprocal_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ "
    "sqrt_ square_ tan_ tanh_ trunc_ zero_").split()


def _unary_inplace(name: str):
    def fn(input: Tensor) -> Tensor:
        _tensor_arg(fn, "input", input)
        return getattr(Tensor, name)(input)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(input)``: ``input.{name}()``."
    return fn


for _name in _UNARY_INPLACE:
    globals()[_name] = _unary_inplace(_name)
__all__ += _UNARY_INPLACE


def clamp_(input: Tensor, min=None, max=None) -> Tensor:
    """``torch.clamp_``."""
    _tensor_arg(clamp_, "input", input)
    return Tensor.clamp_(input, min, max)


def clip_(input: Tensor, min=None, max=None) -> Tensor:
    """``torch.clip_``."""
    _tensor_arg(clip_, "input", input)
    return Tensor.clip_(input, min, max)


def clamp_max_(input: Tensor, max) -> Tensor:
    """``torch.clamp_max_``."""
    _tensor_arg(clamp_max_, "input", input)
    return Tensor.clamp_max_(input, max)


def clamp_min_(input: Tensor, min) -> Tensor:
    """``torch.clamp_min_``."""
    _tensor_arg(clamp_min_, "input", input)
    return Tensor.clamp_min_(input, min)


def fill_(input: Tensor, value) -> Tensor:
    """``torch.fill_``: a number or a 0-dim tensor."""
    _tensor_arg(fill_, "input", input)
    return Tensor.fill_(input, value)


def gcd_(input: Tensor, other: Tensor) -> Tensor:
    """``torch.gcd_``."""
    _tensor_arg(gcd_, "input", input)
    return Tensor.gcd_(input, other)


def lcm_(input: Tensor, other: Tensor) -> Tensor:
    """``torch.lcm_``."""
    _tensor_arg(lcm_, "input", input)
    return Tensor.lcm_(input, other)


def ldexp_(input: Tensor, other: Tensor) -> Tensor:
    """``torch.ldexp_``."""
    _tensor_arg(ldexp_, "input", input)
    return Tensor.ldexp_(input, other)


def xlogy_(input: Tensor, other) -> Tensor:
    """``torch.xlogy_``."""
    _tensor_arg(xlogy_, "input", input)
    return Tensor.xlogy_(input, other)


def logit_(input: Tensor, eps=None) -> Tensor:
    """``torch.logit_``."""
    _tensor_arg(logit_, "input", input)
    return Tensor.logit_(input, eps)


def nan_to_num_(input: Tensor, nan=0.0, posinf=None, neginf=None) -> Tensor:
    """``torch.nan_to_num_``."""
    _tensor_arg(nan_to_num_, "input", input)
    return Tensor.nan_to_num_(input, nan, posinf, neginf)


def round_(input: Tensor, *, decimals=None) -> Tensor:
    """``torch.round_``."""
    _tensor_arg(round_, "input", input)
    return Tensor.round_(input) if decimals is None else Tensor.round_(input, decimals=decimals)


def index_put_(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """``torch.index_put_``."""
    _tensor_arg(index_put_, "input", input)
    return Tensor.index_put_(input, indices, values, accumulate)


def detach(input: Tensor) -> Tensor:
    """``torch.detach``: ``input.detach()``."""
    _tensor_arg(detach, "input", input)
    return Tensor.detach(input)


def detach_(input: Tensor) -> Tensor:
    """``torch.detach_``: ``input.detach_()``."""
    _tensor_arg(detach_, "input", input)
    return Tensor.detach_(input)


__all__ += ["clamp_", "clip_", "clamp_max_", "clamp_min_", "fill_", "gcd_", "lcm_", "ldexp_",
            "xlogy_", "logit_", "nan_to_num_", "round_", "index_put_"]


# ---- predicates as functions ----------------------------------------------------------------

def is_nonzero(input: Tensor) -> bool:
    """``torch.is_nonzero``: the truth of a one-element tensor."""
    _tensor_arg(is_nonzero, "input", input)
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """``torch.is_same_size``."""
    _tensor_arg(is_same_size, "input", input)
    _tensor_arg(is_same_size, "other", other)
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input: Tensor) -> bool:
    """``torch.is_signed``."""
    _tensor_arg(is_signed, "input", input)
    return input.is_signed()


def is_inference(input: Tensor) -> bool:
    """``torch.is_inference``."""
    _tensor_arg(is_inference, "input", input)
    return input.is_inference()


def get_device(input: Tensor) -> int:
    """``torch.get_device``: -1 for CPU (and meta) tensors."""
    _tensor_arg(get_device, "input", input)
    return input.get_device()


def is_storage(obj, /) -> bool:
    """``torch.is_storage``: an ``UntypedStorage`` or ``TypedStorage``."""
    from .._storage import TypedStorage, UntypedStorage
    return type(obj) in (UntypedStorage, TypedStorage)


# ---- frombuffer ----------------------------------------------------------------------------

def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """``torch.frombuffer``: a 1-D tensor over the memory of an object exposing the buffer
    protocol (shared: writes through either are seen by both). A read-only buffer is used as
    PyTorch does, writable, with its warning once per process."""
    from .creation import _new_tensor
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length = view.nbytes
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if not isinstance(dtype, D.dtype):
        raise must_be(frombuffer, "dtype", dtype, "ember.dtype")
    dt = dtype
    size = np.dtype(dt.np).itemsize
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly:
        # (PyTorch writes through a read-only buffer; NumPy keeps it read-only, so an in-place
        # op on the tensor raises instead of changing, say, an immutable bytes object)
        warn_once("frombuffer", "The given buffer is not writable, and PyTorch does not support "
                  "non-writable tensors. This means you can write to the underlying (supposedly "
                  "non-writable) buffer using the tensor. You may want to copy the buffer to "
                  "protect its data or make it writable before converting it to a tensor. This "
                  "type of warning will be suppressed for the rest of this program. (Triggered "
                  "internally at /__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:1581.)")
    flat = view.cast("B") if view.ndim != 1 or view.format != "B" else view
    arr = np.frombuffer(flat, np.uint8, count * size, offset).view(dt.np)
    if requires_grad and not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    t = _new_tensor(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


# ---- Tensor methods ------------------------------------------------------------------------

def _gemm_inplace(name: str):
    def fn(self: Tensor, a: Tensor, b: Tensor, *, beta=1, alpha=1) -> Tensor:
        from . import linalg as _la
        op = getattr(_la, name.upper())
        r = getattr(_la, name)(self, a, b, beta=beta, alpha=alpha)   # the checks, out of place
        if tuple(r.shape) != tuple(self.shape):
            if name == "addmv":
                raise RuntimeError(f"size mismatch, got input ({self.shape[0] if self.dim() else 1}"
                                   f"), mat ({a.shape[0]}x{a.shape[1]}), vec ({b.shape[0]})")
            raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and "
                               f"output tensor size {list(r.shape)} should match")
        return inplace(op, self, (a, b), (beta, alpha), overlap=2)
    fn.__name__ = fn.__qualname__ = name + "_"
    fn.__doc__ = f"``Tensor.{name}_``: ``{name}`` written into ``self`` (same shape)."
    return fn


method("addmm_", _gemm_inplace("addmm"))
method("addmv_", _gemm_inplace("addmv"))
method("baddbmm_", _gemm_inplace("baddbmm"))


def addmv_(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``torch.addmv_``."""
    _tensor_arg(addmv_, "input", input)
    return Tensor.addmv_(input, mat, vec, beta=beta, alpha=alpha)


_AS_STRIDED_: list = []


def as_strided_(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """``torch.as_strided_`` / ``Tensor.as_strided_``: ``input`` itself restrided over its
    storage, a metadata change that bumps the version (``AsStridedBackward1`` when it has
    history, as the other in-place view ops: ``t_``, ``squeeze_``)."""
    from .._tensor import raw_data
    from .misc_ops import _inplace_view, _view_op_variant
    from .views import AS_STRIDED, _as_strided_np, _check_as_strided, view_index
    _tensor_arg(as_strided_, "input", input)
    if not _AS_STRIDED_:
        _AS_STRIDED_.append(_view_op_variant(AS_STRIDED, "AsStridedBackward1"))
    off = input.storage_offset() if storage_offset is None else storage_offset
    d = raw_data(input)
    size, stride = tuple(size), tuple(stride)
    _check_as_strided(d, size, stride, off, input.is_meta)
    out = _as_strided_np(d, size, stride, off)
    return _inplace_view(input, _AS_STRIDED_[0], (size, stride, off, d.shape,
                                                  view_index(d, out)))


method("as_strided_", as_strided_)


def _narrow_copy(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``Tensor.narrow_copy``."""
    from . import narrow_copy as _nc
    return _nc(self, dim, start, length)


method("narrow_copy", _narrow_copy)


def _is_same_size(self: Tensor, other: Tensor) -> bool:
    """``Tensor.is_same_size``."""
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    return tuple(self.shape) == tuple(other.shape)


def _is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """``Tensor.is_set_to``: the same storage, offset, sizes and strides."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    a, b = self._data, tensor._data
    if self.is_meta or tensor.is_meta:
        return False
    return (_root(a) is _root(b) or np.shares_memory(_root(a), _root(b))) and \
        self.storage_offset() == tensor.storage_offset() and a.shape == b.shape and \
        self.stride() == tensor.stride() and a.dtype == b.dtype


method("is_same_size", _is_same_size)
method("is_set_to", _is_set_to)


def _no_grad_check(name: str, *ts: Tensor) -> None:
    if any(t.requires_grad for t in ts):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")


def _python_values(t: Tensor) -> list:
    return t._data.reshape(-1).tolist() if t._data.flags.c_contiguous else \
        np.ascontiguousarray(t._data).reshape(-1).tolist()


def _write_values(self: Tensor, values: list) -> Tensor:
    if not (self.is_floating_point() or self.is_complex()):
        # (PyTorch converts each result to the element type: integers truncate)
        values = [v if isinstance(v, bool) else int(v) for v in values]
    arr = np.array(values, dtype=object).reshape(self._data.shape).astype(self._data.dtype)
    self._data[...] = arr   # (PyTorch's CPU loop writes without bumping the version)
    return self


def _check_number(values: list) -> None:
    for v in values:
        if not isinstance(v, (int, float, complex, bool, np.number, np.bool_)):
            raise TypeError(f"must be real number, not {type(v).__name__}")


def _apply_(self: Tensor, callable) -> Tensor:
    """``Tensor.apply_``: ``callable`` applied to every element, in place (CPU only, slow, as
    in PyTorch)."""
    _no_grad_check("apply_", self)
    out = [callable(v) for v in _python_values(self)]
    _check_number(out)
    return _write_values(self, out)


def _operand(self: Tensor, other, fn: str, param: str, label: str) -> list:
    """``other``'s values broadcast to ``self``'s shape, with PyTorch's type checks."""
    if not isinstance(other, Tensor):
        raise TypeError(f"{fn}(): argument '{param}' (position {1 if param != 'y' else 2}) "
                        f"must be Tensor, not {type(other).__name__}")
    if other.dtype is not self.dtype:
        raise TypeError(f"{fn}: expected {self.type()} for {label} (got {other.type()})")
    return _python_values(other.expand(self.shape))


def _map_(self: Tensor, tensor: Tensor, callable) -> Tensor:
    """``Tensor.map_``: ``callable(self[i], tensor[i])`` in place, ``tensor`` broadcast."""
    other = _operand(self, tensor, "map_", "other", "'other'")
    _no_grad_check("map_", self, tensor)
    out = [callable(a, b) for a, b in zip(_python_values(self), other)]
    _check_number(out)
    return _write_values(self, out)


def _map2_(self: Tensor, x: Tensor, y: Tensor, callable) -> Tensor:
    """``Tensor.map2_``: ``callable(self[i], x[i], y[i])`` in place."""
    xs = _operand(self, x, "map2_", "x", "argument 'x'")
    ys = _operand(self, y, "map2_", "y", "argument 'y'")
    _no_grad_check("map2_", self, x, y)
    out = [callable(a, b, c) for a, b, c in zip(_python_values(self), xs, ys)]
    _check_number(out)
    return _write_values(self, out)


method("apply_", _apply_)
method("map_", _map_)
method("map2_", _map2_)


def _is_pinned(self: Tensor, device=None) -> bool:
    """``Tensor.is_pinned``: False (no accelerator: no page-locked memory)."""
    if device is not None:
        warn_once("is_pinned_device", "The argument 'device' of Tensor.is_pinned() is "
                  "deprecated. Please do not pass this argument. (Triggered internally at "
                  "/__w/pytorch/pytorch/aten/src/ATen/native/Memory.cpp:31.)")
    return False


def _pin_memory(self: Tensor, device=None) -> Tensor:
    """``Tensor.pin_memory``: refused as by PyTorch's CPU build (pinning needs an
    accelerator)."""
    if device is not None:
        from .._device import as_device
        if as_device(device).type == "cpu":
            raise RuntimeError("CPU device type not an accelerator.")
    raise RuntimeError("Cannot access accelerator device when none is available.")


method("is_pinned", _is_pinned)
method("pin_memory", _pin_memory)


def _order_cmp(strides, shape, a: int, b: int) -> int:
    """PyTorch's ``should_swap`` of two dims (1: swap, -1: keep, 0: undecided)."""
    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0

    def ge(x, y):
        return y == 0 or (x != 0 and (x >= y or x % y == 0))
    if sa == sb:
        return 0 if ge(shape[b], shape[a]) else 1
    if ge(sb, sa):
        return -1
    return 1 if ge(sa, sb) else 0


def _contiguous_as(t: Tensor, fmt) -> bool:
    """``is_contiguous(memory_format=fmt)``, False where the format does not fit the rank."""
    try:
        return t.is_contiguous(memory_format=fmt)
    except RuntimeError:
        return False


def _dim_order(self: Tensor, *, ambiguity_check=False):
    """``Tensor.dim_order``: the dims from outermost to innermost in memory, by PyTorch's
    ``compute_elementwise_output_logical_to_physical_perm`` (an insertion sort of the strides),
    with its ambiguity checks."""
    from .. import _layout as _L
    bad = "The ambiguity_check argument must be a bool or a list of memory formats."
    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list) or not all(
                isinstance(f, _L.memory_format) for f in ambiguity_check):
            raise TypeError(bad)
    strides, shape, nd = self.stride(), tuple(self.shape), self.dim()
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    if ambiguity_check is not False and (
            any(x == y for x, y in zip(strides, strides[1:])) or 1 in shape) and \
            sum(_contiguous_as(self, f) for f in formats) != 1:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact "
                           "one of the given memory formats.")
    if nd <= 1:
        return tuple(range(nd))
    contiguous = self.is_contiguous()
    last = nd == 4 and _contiguous_as(self, _L.channels_last)
    if contiguous and not last:
        return tuple(range(nd))
    if last and not contiguous:
        return (0, *range(2, nd), 1)
    perm = list(reversed(range(nd)))
    for i in range(1, nd):
        d1 = i
        for d0 in reversed(range(i)):
            c = _order_cmp(strides, shape, perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if ambiguity_check is not False and any(
            _order_cmp(strides, shape, perm[i], perm[i + 1]) != -1 for i in range(nd - 1)):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))


method("dim_order", _dim_order)


def _resize_fn():
    from ..autograd.function import Function

    class Resize(Function):
        """PyTorch's ``torch.autograd._functions.Resize`` (node ``ResizeBackward``)."""

        @staticmethod
        def forward(ctx, tensor, sizes):
            ctx.numel = 1
            for s in sizes:
                ctx.numel = ctx.numel * s
            if tensor.numel() != ctx.numel:
                raise RuntimeError(
                    f"requested resize to {'x'.join(map(str, sizes))} ({ctx.numel} elements in "
                    f"total), but the given tensor has a size of "
                    f"{'x'.join(map(str, tensor.size()))} ({tensor.numel()} elements). autograd's "
                    "resize can only change the shape of a given tensor, while preserving the "
                    "number of elements. ")
            ctx.input_sizes = tensor.size()
            return tensor.contiguous().view(*sizes)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.contiguous().view(ctx.input_sizes), None
    return Resize


_RESIZE: list = []


def _resize(self: Tensor, *sizes) -> Tensor:
    """``Tensor.resize`` (deprecated, warning): a reshape keeping the number of elements."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    if not _RESIZE:
        _RESIZE.append(_resize_fn())
    return _RESIZE[0].apply(self, sizes)


def _resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """``Tensor.resize_as`` (deprecated, warning)."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    if not _RESIZE:
        _RESIZE.append(_resize_fn())
    return _RESIZE[0].apply(self, tensor.size())


method("resize", _resize)
method("resize_as", _resize_as)


# ---- removed linear algebra: PyTorch's messages naming the replacements -------------------------
# (they take PyTorch's signatures, out= included, only so that every call raises the same removal
# message; none returns or writes anything)

def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """``torch.matrix_rank``: removed in PyTorch 1.9; raises pointing to
    ``linalg.matrix_rank``."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed.\n"
        "Please use the `ember.linalg.matrix_rank` function instead. The parameter 'symmetric' "
        "was renamed in `ember.linalg.matrix_rank()` to 'hermitian'.")


def solve(input: Tensor, A: Tensor, *, out=None):
    """``torch.solve``: removed in PyTorch 1.9; raises pointing to ``linalg.solve``."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. `ember.solve` is "
        "deprecated in favor of `ember.linalg.solve`. `ember.linalg.solve` has its arguments "
        "reversed and does not return the LU factorization.\n\nTo get the LU factorization see "
        "`ember.lu`, which can be used with `ember.lu_solve` or `ember.lu_unpack`.\n"
        "X = ember.solve(B, A).solution should be replaced with:\nX = ember.linalg.solve(A, B)")


def lstsq(input: Tensor, A: Tensor, *, out=None):
    """``torch.lstsq``: removed in PyTorch 1.9; raises pointing to ``linalg.lstsq``."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. `ember.lstsq` is "
        "deprecated in favor of `ember.linalg.lstsq`.\n`ember.linalg.lstsq` has reversed "
        "arguments and does not return the QR decomposition in the returned tuple (although it "
        "returns other information about the problem).\n\nTo get the QR decomposition consider "
        "using `ember.linalg.qr`.\n\nThe returned solution in `ember.lstsq` stored the "
        "residuals of the solution in the last m - n columns of the returned value whenever "
        "m > n. In ember.linalg.lstsq, the residuals are in the field 'residuals' of the "
        "returned named tuple.\n\nThe unpacking of the solution, as in\n"
        "X, _ = ember.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\n"
        "X = ember.linalg.lstsq(A, B).solution")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """``torch.symeig``: removed in PyTorch 1.9; raises pointing to ``linalg.eigh``."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. The default "
        "behavior has changed from using the upper triangular portion of the matrix by default "
        "to using the lower triangular portion.\n\nL, _ = ember.symeig(A, upper=upper) should "
        "be replaced with:\nL = ember.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
        "L, V = ember.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = ember.linalg.eigh(A, UPLO='U' if upper else 'L')")


def eig(self: Tensor, eigenvectors: bool = False, *, e=None, v=None):
    """``torch.eig``: removed in PyTorch 1.9; raises pointing to ``linalg.eig``."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. `ember.linalg.eig` "
        "returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
        "mimicking complex tensors.\n\nL, _ = ember.eig(A) should be replaced with:\n"
        "L_complex = ember.linalg.eigvals(A)\n\nand\n\nL, V = ember.eig(A, eigenvectors=True) "
        "should be replaced with:\nL_complex, V_complex = ember.linalg.eig(A)")


method("solve", lambda self, other: solve(self, other))
method("lstsq", lambda self, other: lstsq(self, other))
method("eig", lambda self, eigenvectors=False: eig(self, eigenvectors))
method("symeig", lambda self, eigenvectors=False: symeig(self, eigenvectors))


# ---- small remaining names -----------------------------------------------------------------

def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> Tensor:
    """``torch.embedding_renorm_``: the rows of ``input`` named in ``indices`` whose
    ``norm_type``-norm exceeds ``max_norm`` scaled down to it, in place (what ``F.embedding``'s
    ``max_norm`` does)."""
    from ._dispatch import check_inplace
    from .nn_misc import _index_type_error, _renorm_rows
    _tensor_arg(embedding_renorm_, "input", input)
    check_inplace(input)
    if input.requires_grad:
        raise NotImplementedError(
            "embedding_renorm_() on a tensor with autograd history is not built in ember "
            "(PyTorch records a node whose backward is not implemented); call it under no_grad()")
    if input.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "embedding_renorm_)")
    _index_type_error(indices, "embedding_renorm_", 2)
    v = input._vc.v
    _renorm_rows(input, indices._data, float(max_norm), float(norm_type))
    if input._vc.v == v:   # (it bumps only when a row changed; the in-place op always does)
        input._vc.v += 1
    return input


__all__ += ["embedding_renorm_"]


def _to_dense(self: Tensor, dtype=None, *, masked_grad=None) -> Tensor:
    """``Tensor.to_dense``: a strided tensor is already dense (itself, or cast to ``dtype``)."""
    return self if dtype is None or dtype is self.dtype else self.to(dtype)


def _no_device(message: str, exc=AssertionError):
    def move(self: Tensor, *args, **kwargs):
        raise exc(message)
    return move


_REINFORCE = (
    "reinforce() was removed.\nUse torch.distributions instead.\nSee "
    "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\n"
    "probs = policy_network(state)\naction = probs.multinomial()\n"
    "next_state, reward = env.step(action)\naction.reinforce(reward)\naction.backward()\n\n"
    "Use:\n\nprobs = policy_network(state)\n"
    "# NOTE: categorical is equivalent to what used to be called multinomial\n"
    "m = torch.distributions.Categorical(probs)\naction = m.sample()\n"
    "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
    "loss.backward()\n")


def _reinforce(self: Tensor, reward) -> None:
    """``Tensor.reinforce``: removed from PyTorch; raises its message verbatim (it points to
    ``torch.distributions``, which ember does not have)."""
    raise RuntimeError(_REINFORCE)


method("to_dense", _to_dense)
method("const_data_ptr", lambda self: self.data_ptr())
method("is_shared", lambda self: False)   # (no shared-memory storages: share_memory_ is absent)
method("reinforce", _reinforce)
method("xpu", _no_device("Torch not compiled with XPU enabled"))
method("ipu", _no_device("PyTorch is not linked with support for ipu devices", RuntimeError))
method("mtia", _no_device(
    "Torch not compiled with MTIA enabled. Ensure you have `import "
    "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
    "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!"))


# ---- DLPack: zero-copy exchange with NumPy, PyTorch, JAX, CuPy, ... -----------------------------

class DLDeviceType(enum.IntEnum):
    """``torch.utils.dlpack.DLDeviceType``: the DLPack device codes."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def _dlpack(self: Tensor, *, stream=None, max_version=None, dl_device=None, copy=None):
    """``Tensor.__dlpack__``: the tensor's memory as a DLPack capsule (NumPy's exporter), with
    PyTorch's refusals."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if self.is_conj():
        raise BufferError("Can't export tensors with the conjugate bit set")
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    return self._data.__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy)


method("__dlpack__", _dlpack)
method("__dlpack_device__", lambda self: (DLDeviceType.kDLCPU, 0))


class _Capsule:
    """A bare DLPack capsule given the protocol NumPy's importer asks for."""

    def __init__(self, capsule) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (DLDeviceType.kDLCPU, 0)


def from_dlpack(ext_tensor, *, device=None, copy: bool | None = None) -> Tensor:
    """``torch.from_dlpack``: a tensor sharing the memory of any object with ``__dlpack__``
    (a NumPy array, a PyTorch or JAX CPU tensor, ...) or of a DLPack capsule (which can be
    consumed once). CPU memory only. A capsule without DLPack 1.0 flags comes in read-only (NumPy
    marks it so): in-place ops on the tensor then raise."""
    from .creation import from_numpy
    if device is not None:
        from .._device import as_device
        if as_device(device).type != "cpu":
            raise RuntimeError(f"from_dlpack: ember has no {as_device(device).type} device")
    src = ext_tensor
    if not hasattr(ext_tensor, "__dlpack__"):
        if type(ext_tensor).__name__ != "PyCapsule":
            raise RuntimeError(
                "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                "consumed only once, so you might have already constructed a tensor from it "
                "once.")
        src = _Capsule(ext_tensor)
    try:
        arr = np.from_dlpack(src, copy=copy)
    except BufferError as e:   # (a device other than the CPU, an unknown dtype, ...)
        raise RuntimeError(f"from_dlpack: {e}") from None
    return from_numpy(arr)


def to_dlpack(tensor: Tensor):
    """``torch.to_dlpack``: a DLPack capsule of the tensor's memory (one consumer)."""
    _tensor_arg(to_dlpack, "tensor", tensor)
    return tensor._data.__dlpack__()


__all__ += ["from_dlpack", "to_dlpack"]


def _hash_tensor(self: Tensor, dim=None, *, keepdim: bool = False, mode: int = 0) -> Tensor:
    """``Tensor.hash_tensor``: ``torch.hash_tensor(self, ...)``."""
    from .aten_private import hash_tensor
    return hash_tensor(self, dim, keepdim=keepdim, mode=mode)


method("hash_tensor", _hash_tensor)
