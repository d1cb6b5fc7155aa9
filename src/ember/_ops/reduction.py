"""Reductions: sum and mean (more in later families)."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _wrap_dim
from ._registry import Op, apply, method, ns_fn

__all__ = ["sum", "mean"]


def dims_arg(dim, ndim: int) -> tuple | None:
    """Normalise a ``dim`` argument (None, int, or a sequence) to sorted positive dims."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (_wrap_dim(dim, ndim),)
    dims = tuple(sorted({_wrap_dim(d, ndim) for d in dim}))
    if len(dims) != len(tuple(dim)):
        raise RuntimeError("dim appears multiple times in the list of dims")
    return dims if dims else None


def expand_reduced(ns, g, in_shape, dims, keepdim):
    """Put back the reduced dims of ``g`` so that it broadcasts against the input."""
    if not keepdim and dims is not None and len(in_shape):
        g = ns.unsqueeze_dims(g, dims)
    return ns.expand_to(g, in_shape)


def _unsq_np(g, dims):
    return np.expand_dims(g, dims)


def _unsq_em(g, dims):
    for d in dims:
        g = g.unsqueeze(d)
    return g


ns_fn("unsqueeze_dims", _unsq_np, _unsq_em)
ns_fn("expand_to", lambda g, shape: np.broadcast_to(g, shape), lambda g, shape: g.expand(shape))


def _sum_fwd(x, dims, keepdim, npd, in_shape):
    return np.sum(x, axis=dims, keepdims=keepdim, dtype=npd)


def _sum_vjp(ns, g, need, dims, keepdim, npd, in_shape):
    return (expand_reduced(ns, g, in_shape, dims, keepdim),)


SUM = Op("sum", _sum_fwd, _sum_vjp, linear=True)
SUM_DIM = Op("sum_dim", _sum_fwd, _sum_vjp, linear=True, node="SumBackward1")


def _acc_dtype(x: Tensor, dtype) -> np.dtype:
    if dtype is not None:
        return dtype.np
    k = x._data.dtype.kind
    return np.dtype(np.int64) if k in "iub" else x._data.dtype


def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A001
    """``torch.sum``: integers and bools sum to int64."""
    nd = input._data.ndim
    dims = dims_arg(dim, nd)
    npd = _acc_dtype(input, dtype)
    op = SUM if dim is None else SUM_DIM
    return apply(op, (input,), (dims, keepdim, npd, input._data.shape))


def _mean_fwd(x, dims, keepdim, npd, in_shape):
    return np.mean(x, axis=dims, keepdims=keepdim, dtype=npd)


def _mean_vjp(ns, g, need, dims, keepdim, npd, in_shape):
    n = 1
    for i, s in enumerate(in_shape):
        if dims is None or i in dims:
            n *= s
    return (expand_reduced(ns, g / n, in_shape, dims, keepdim),)


MEAN = Op("mean", _mean_fwd, _mean_vjp, linear=True)
MEAN_DIM = Op("mean_dim", _mean_fwd, _mean_vjp, linear=True, node="MeanBackward1")


def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``torch.mean``: floating and complex inputs only (or a floating ``dtype``)."""
    dt = dtype or input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_cap(input.dtype)}")
    dims = dims_arg(dim, input._data.ndim)
    op = MEAN if dim is None else MEAN_DIM
    return apply(op, (input,), (dims, keepdim, dt.np, input._data.shape))


def _cap(dt: D.dtype) -> str:
    from ._dispatch import _type_name
    return _type_name(dt)


method("sum", sum)
method("mean", mean)
