"""Normalising activations: softmax and log_softmax over one dim.

Both save their output: softmax's VJP is ``y * (g - sum(g * y))`` and log_softmax's is
``g - exp(y) * sum(g)``, sums taken over ``dim`` (kept), written once for NP and EM.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _wrap_dim
from ._registry import Op, apply, method
from .reduction import _type_name

__all__ = ["log_softmax", "softmax"]


def _shifted(x, dims):
    m = np.max(x, axis=dims, keepdims=True, initial=-np.inf)
    return x - np.where(np.isinf(m), 0, m).astype(x.dtype)


def _softmax_fwd(x, dims):
    e = np.exp(_shifted(x, dims))
    return e / np.sum(e, axis=dims, keepdims=True)


def _log_softmax_fwd(x, dims):
    s = _shifted(x, dims)
    with np.errstate(divide="ignore"):
        return s - np.log(np.sum(np.exp(s), axis=dims, keepdims=True))


def _softmax_vjp(ns, g, need, y, dims):
    return (y * (g - ns.sum_dims(g * y, dims, True)),)


def _softmax_jvp(ns, tangents, primals, outs, dims):
    y, t = outs[0], tangents[0]
    return y * (t - ns.sum_dims(y * t, dims, True))


def _log_softmax_vjp(ns, g, need, y, dims):
    return (g - ns.exp(y) * ns.sum_dims(g, dims, True),)


def _log_softmax_jvp(ns, tangents, primals, outs, dims):
    t = tangents[0]
    return t - ns.sum_dims(ns.exp(outs[0]) * t, dims, True)


SOFTMAX = Op("softmax", _softmax_fwd, _softmax_vjp, _softmax_jvp, save_out=True,
             node="SoftmaxBackward0")
LOG_SOFTMAX = Op("log_softmax", _log_softmax_fwd, _log_softmax_vjp, _log_softmax_jvp,
                 save_out=True, node="LogSoftmaxBackward0")


def _run(op: Op, kernel: str, input: Tensor, dim, dtype) -> Tensor:
    if dim is None:
        raise TypeError(f'{kernel}() missing 1 required positional arguments: "dim"')
    nd = input._data.ndim
    d = _wrap_dim(int(dim), nd)
    if dtype is not None:
        input = input.to(dtype)
    if not (input.is_floating_point() or input.is_complex()):
        last = "lastdim_" if d == max(nd - 1, 0) else ""
        raise NotImplementedError(
            f'"{kernel}_{last}kernel_impl" not implemented for \'{_type_name(input.dtype)}\'')
    return apply(op, (input,), ((d,) if nd else None,))


def softmax(input: Tensor, dim=None, dtype=None) -> Tensor:
    """``torch.softmax``: exp(x) / sum(exp(x)) over ``dim``, computed in ``dtype`` if given."""
    return _run(SOFTMAX, "softmax", input, dim, dtype)


def log_softmax(input: Tensor, dim=None, dtype=None) -> Tensor:
    """``torch.log_softmax``: x - logsumexp(x) over ``dim``."""
    return _run(LOG_SOFTMAX, "log_softmax", input, dim, dtype)


method("softmax", softmax)
method("log_softmax", log_softmax)
