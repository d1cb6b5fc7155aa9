"""``torch.masked``'s reductions and normalizations on strided tensors with a boolean ``mask``.

As in PyTorch (``torch/masked/_ops.py``), masked-out elements are replaced with the operation's
identity (0 for sum, 1 for prod, -inf for amax/logsumexp/softmax, +inf for amin/softmin, NaN for
median) by ``where`` and the ordinary op runs on the result, so values, dtypes, gradients and
node names are those of the ops PyTorch composes; a fully masked row gives PyTorch's value
(NaN for mean/var/std/median, the identity elsewhere). ``MaskedTensor`` and sparse layouts are not
provided.
"""
from __future__ import annotations

import builtins

from . import _dtype as D
from ._ops.creation import ones, tensor
from ._ops.pointwise import sqrt
from ._ops.pointwise_more import maximum, where
from ._ops.reduction import amax as _amax
from ._ops.reduction import amin as _amin
from ._ops.reduction import argmax as _argmax
from ._ops.reduction import argmin as _argmin
from ._ops.reduction import cumprod as _cumprod
from ._ops.reduction import cumsum as _cumsum
from ._ops.reduction import logsumexp as _logsumexp
from ._ops.reduction import sum as _sum
from ._ops.selection import nanmedian
from ._ops.special import logaddexp as _logaddexp
from ._ops.views import broadcast_to
from ._tensor import Tensor

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
           "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]

_SMALL_INTS = (D.uint8, D.bool, D.int8, D.int16, D.int32)


def _canonical_dim(dim, ndim: int) -> tuple:
    """``dim`` as a sorted tuple of non-negative dims (None and () mean all)."""
    if dim == ():
        dim = None
    if dim is None:
        return tuple(range(ndim))
    ndim = builtins.max(ndim, 1)
    dims: list = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input: Tensor, mask: Tensor) -> Tensor:
    """The mask broadcast to the input's shape, as bool."""
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = broadcast_to(mask.clone(), input.shape).to(dtype=D.bool)
    return mask.to(dtype=D.bool)


def _identity(op: str, input: Tensor, *args):
    """The value a masked-out element takes for reduction ``op`` (PyTorch's
    ``_reduction_identity``); None where it is undefined."""
    dt = input.dtype
    flt, cplx = dt.is_floating_point, dt.is_complex
    signed = (dt.is_signed and not cplx and not flt) or dt is D.uint8
    if op in ("sum", "cumsum"):
        return tensor(0, dtype=dt)
    if op in ("prod", "cumprod"):
        return tensor(1, dtype=dt)
    if op in ("amax", "argmax", "logaddexp", "logsumexp"):
        if flt:
            return tensor(-float("inf"), dtype=dt)
        if cplx and op == "logsumexp":
            return tensor(complex(-float("inf"), 0), dtype=dt)
        if signed:
            return tensor(D.iinfo(dt).min, dtype=dt)
    elif op in ("amin", "argmin"):
        if flt:
            return tensor(float("inf"), dtype=dt)
        if signed:
            return tensor(D.iinfo(dt).max, dtype=dt)
    elif op == "mean" or op in ("var", "std"):
        return None
    elif op == "norm":
        ord = args[0] if args else 2
        if ord == float("-inf"):
            if not flt:
                raise AssertionError(f"input must be floating point, got {dt}")
            return tensor(float("inf"), dtype=dt)
        return tensor(0, dtype=dt)
    elif op == "median":
        return tensor(float("nan"), dtype=dt if flt else D.float32)
    raise NotImplementedError(f"identity of {op} on {dt} input")


def _combine(op: str, input: Tensor, mask, *args) -> Tensor:
    """``input`` with masked-out elements replaced by ``op``'s identity."""
    if mask is None:
        return input
    return where(_input_mask(input, mask), input, _identity(op, input, *args))


def _int_sum_dtype(input: Tensor, dtype):
    if dtype is None:
        dtype = D.int64 if input.dtype in _SMALL_INTS else input.dtype
    return dtype


def sum(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """``torch.masked.sum``: the sum of the masked-in elements (small integers sum in int64)."""
    dtype = _int_sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return _sum(_combine("sum", input, mask), dims, bool(keepdim), dtype=dtype)


def prod(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """``torch.masked.prod``: the product of the masked-in elements, one dim at a time."""
    dtype = _int_sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    r = _combine("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):
        r = r.prod(dim=d, keepdim=bool(keepdim))
    return r


def cumsum(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """``torch.masked.cumsum``: masked-out elements add 0."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _cumsum(_combine("sum", input, mask), d, dtype=dtype).to(dtype=dtype)


def cumprod(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """``torch.masked.cumprod``: masked-out elements multiply by 1."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _cumprod(_combine("prod", input, mask), d, dtype=dtype).to(dtype=dtype)


def amax(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """``torch.masked.amax``: masked-out elements count as -inf (the type's lowest integer)."""
    dtype = input.dtype if dtype is None else dtype
    x = _combine("amax", input, mask)
    return _amax(x, _canonical_dim(dim, x.ndim), bool(keepdim)).to(dtype=dtype)


def amin(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """``torch.masked.amin``: masked-out elements count as +inf (the type's highest integer)."""
    dtype = input.dtype if dtype is None else dtype
    x = _combine("amin", input, mask)
    return _amin(x, _canonical_dim(dim, x.ndim), bool(keepdim)).to(dtype=dtype)


def argmax(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """``torch.masked.argmax``: the index, returned in ``dtype`` (the input's by default, as
    PyTorch does)."""
    dtype = input.dtype if dtype is None else dtype
    return _argmax(_combine("argmax", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def argmin(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """``torch.masked.argmin``: the index, returned in ``dtype`` (the input's by default)."""
    dtype = input.dtype if dtype is None else dtype
    return _argmin(_combine("argmin", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def mean(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """``torch.masked.mean``: sum / count of the masked-in elements (NaN for none)."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    if mask is None:
        count = sum(ones(tuple(input.shape), dtype=D.int64), dim, keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(dim=dim, keepdim=bool(keepdim))
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def median(input: Tensor, dim: int = -1, *, keepdim: bool = False, dtype=None,
           mask=None) -> Tensor:
    """``torch.masked.median``: nanmedian with masked-out elements as NaN."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.is_floating_point()
    if not is_float:
        input = input.to(dtype=D.float32)
    out = nanmedian(_combine("median", input, mask), d, keepdim).values
    if is_float:
        return out
    if not out.isnan().any():
        return out.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating "
                     "point")


def logsumexp(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None,
              mask=None) -> Tensor:
    """``torch.masked.logsumexp``: masked-out elements count as -inf."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    return _logsumexp(_combine("logsumexp", input, mask), dims, keepdim=keepdim).to(dtype=dtype)


def logaddexp(input: Tensor, other: Tensor, *, dtype=None, input_mask=None,
              other_mask=None) -> Tensor:
    """``torch.masked.logaddexp``: each operand's masked-out elements count as -inf."""
    dtype = input.dtype if dtype is None else dtype
    return _logaddexp(_combine("logaddexp", input, input_mask),
                      _combine("logaddexp", other, other_mask)).to(dtype=dtype)


def norm(input: Tensor, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """``torch.masked.norm``: ``linalg.vector_norm`` with masked-out elements as 0 (+inf for
    ord=-inf)."""
    from ._ops.linalg_misc import vector_norm
    dtype = input.dtype if dtype is None else dtype
    x = _combine("norm", input, mask, ord)
    return vector_norm(x, ord, _canonical_dim(dim, input.ndim), bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction_opt, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = D.float32
    compute = dtype if dtype.is_floating_point or dtype.is_complex else D.float32
    if mask is None:
        count = sum(ones(tuple(input.shape), dtype=D.int64), dim, keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype)
        inmask = None
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(dim=dim, keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype, mask=inmask)
    x = input - sample_total / count
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        real = D.float32 if compute is D.complex64 else (
            D.float64 if compute is D.complex128 else compute)
        count = count.to(real)
        count = count - correction
        count = maximum(count, count.new_zeros([]))
    out = (total / count).to(dtype=dtype)
    return sqrt(out) if take_sqrt else out


def var(input: Tensor, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None) -> Tensor:
    """``torch.masked.var``: the variance of the masked-in elements (NaN for none)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input: Tensor, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None) -> Tensor:
    """``torch.masked.std``: the standard deviation of the masked-in elements."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """``torch.masked.softmax``: masked-out elements count as -inf (weight 0)."""
    from .nn.functional import softmax as _softmax
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _softmax(_combine("amax", input, mask), d, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """``torch.masked.log_softmax``: masked-out elements count as -inf."""
    from .nn.functional import log_softmax as _log_softmax
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _log_softmax(_combine("amax", input, mask), d, dtype=dtype)


def softmin(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """``torch.masked.softmin``: masked-out elements count as +inf (weight 0)."""
    from .nn.functional import softmin as _softmin
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _softmin(_combine("amin", input, mask), d, dtype=dtype)


def normalize(input: Tensor, ord, dim: int, *, eps: float = 1e-12, dtype=None,
              mask=None) -> Tensor:
    """``torch.masked.normalize``: input / max(masked norm, eps), masked-out elements 0."""
    dtype = input.dtype if dtype is None else dtype
    x = _combine("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return x / maximum(nrm, nrm.new_full([], eps))
