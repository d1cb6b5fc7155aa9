"""Normalising activations: softmax and log_softmax over one dim.

Both save their output: softmax's VJP is ``y * (g - sum(g * y))`` and log_softmax's is
``g - exp(y) * sum(g)``, sums taken over ``dim`` (kept), written once for NP and EM.
"""
from __future__ import annotations

import numpy as np

from .._layout import contiguous_np as _contig
from .._tensor import Tensor, _wrap_dim
from . import _opmath as _OM
from ._dispatch import HALF_NP, cpu_lanes
from ._registry import NP, Op, apply, method, wrap_one
from .reduction import _type_name

__all__ = ["log_softmax", "softmax"]


# the profiler turns the fast paths below off while it records (they skip Op.fwd)
_FAST = True


def _shifted(x, dims):
    m = np.max(x, axis=dims, keepdims=True, initial=-np.inf)
    return x - np.where(np.isinf(m), 0, m).astype(x.dtype)


def _half(x) -> bool:
    return type(x) is np.ndarray and x.dtype in HALF_NP


_MAXR = np.maximum.reduce
_ADDR = np.add.reduce


def _softmax_float(x, dims):
    """PyTorch's arithmetic on a float32/float64 array with dims, through the ufuncs' reduce
    (np.max and np.sum are Python wrappers around it); a row whose maximum is infinite or NaN
    comes out all NaN, as PyTorch's (inf - inf)."""
    e = np.exp(x - _MAXR(x, dims, None, None, True, -np.inf))
    return np.divide(e, _ADDR(e, dims, None, None, True), out=e)


def _softmax_fwd(x, dims):
    if _half(x):
        # PyTorch's kernels for half types: float32 throughout; over the last dim the
        # exponentials are scaled by 1 / sum, over another dim they are first stored in the
        # half-typed output and then divided by the float32 sum
        d = _shifted(x.astype(np.float32), dims)
        if dims is None:
            e = np.exp(d)
            return (e / e).astype(x.dtype)
        if dims[0] == x.ndim - 1:
            # SLEEF's exp over whole float vectors, the C library's over the tail; the sum
            # accumulated lane-wise (_opmath)
            lanes = cpu_lanes()[0] // 2
            body = d.shape[-1] - d.shape[-1] % lanes
            e = np.concatenate([_OM.expf(d[..., :body]), _OM.exp_libm(d[..., body:])], -1)
            return (e * (np.float32(1) / _OM.lane_sum(e, lanes))).astype(x.dtype)
        vec = _vectorised(x.shape, dims[0])
        e = np.where(vec, _OM.expf(d), _OM.exp_libm(d))
        s = np.sum(e, axis=dims, keepdims=True)
        rounded = e.astype(x.dtype).astype(np.float32)
        return np.where(vec, e, rounded).__truediv__(s).astype(x.dtype)
    if type(x) is np.ndarray and x.ndim and x.dtype.kind == "f" and x.dtype.itemsize >= 4:
        return _softmax_float(x, dims)
    e = np.exp(_shifted(x, dims))
    return e / np.sum(e, axis=dims, keepdims=True)


def _vectorised(shape, dim: int) -> np.ndarray:
    """Which (outer, inner) positions PyTorch's half softmax over a non-last dim computes in its
    vectorised body (exponentials kept in float32) rather than its scalar tail (exponentials
    stored in the half-typed output first): runs of ``lanes`` positions inside one thread's
    share of ``outer * inner`` that do not cross the end of an inner row. Shaped to broadcast
    against the input."""
    lanes, threads = cpu_lanes()
    outer = int(np.prod(shape[:dim], dtype=np.int64))
    inner = int(np.prod(shape[dim + 1:], dtype=np.int64))
    total = outer * inner
    mask = np.zeros(total, bool)
    chunk = -(-total // threads) if total else 0
    for b in range(0, total, max(chunk, 1)):
        e = min(total, b + chunk)
        i = b
        while i < e:
            j = i % inner
            if j + lanes <= inner and i + lanes <= e:
                mask[i:i + lanes] = True
                i += lanes
            else:
                i += (e - i) if i + lanes > e else (inner - j)
    return mask.reshape(shape[:dim] + (1,) + shape[dim + 1:])


def _last(x, dims) -> bool:
    """Whether PyTorch runs its last-dim kernel (``dim == ndim - 1``, or a 0-dim input)."""
    return dims is None or dims[0] == x.ndim - 1


def _log_softmax_fwd(x, dims):
    if _half(x):
        h = x.dtype
        if not _last(x, dims):   # float32 throughout, one rounding
            return _log_softmax_fwd(x.astype(np.float32), dims).astype(h)
        # the last-dim kernel keeps the sum, then its log, in half-typed buffers
        d = _shifted(x.astype(np.float32), dims)
        if dims is None:
            s = np.exp(d)
        else:
            s = _OM.half_sum(_OM.expf(d), cpu_lanes()[0] // 2)
        s = s.astype(h).astype(np.float32)
        with np.errstate(divide="ignore"):
            ls = np.log(s).astype(h).astype(np.float32)
        return (d - ls).astype(h)
    s = _shifted(x, dims)
    with np.errstate(divide="ignore"):
        return s - np.log(np.sum(np.exp(s), axis=dims, keepdims=True))


def _softmax_vjp(ns, g, need, y, dims):
    if ns is NP and _half(g):
        return (_half_bwd(g, y, dims, False),)
    return (y * (g - ns.sum_dims(g * y, dims, True)),)


def _half_bwd(g, y, dims, log: bool):
    """softmax / log_softmax backward of half arrays as PyTorch's kernels compute it: float32
    arithmetic (sums included), rounded once."""
    h = g.dtype
    g32, y32 = g.astype(np.float32), y.astype(np.float32)
    v = g32 if log else g32 * y32
    if _last(g, dims) and g.ndim:
        s = _OM.half_sum(v, cpu_lanes()[0] // 2)    # the last-dim kernel's lane order
    else:
        s = np.sum(v, axis=dims, keepdims=True)
    if log:     # grad - exp(out) * sum, contracted to an FMA
        return _OM.fma(-_OM.expf(y32), s, g32).astype(h)
    return ((g32 - s) * y32).astype(h)


def _softmax_jvp(ns, tangents, primals, outs, dims):
    y, t = outs[0], tangents[0]
    return y * (t - ns.sum_dims(y * t, dims, True))


def _log_softmax_vjp(ns, g, need, y, dims):
    if ns is NP and _half(g):
        return (_half_bwd(g, y, dims, True),)
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


_F32_64 = (np.dtype(np.float32), np.dtype(np.float64))


def softmax(input: Tensor, dim=None, dtype=None) -> Tensor:
    """``torch.softmax``: exp(x) / sum(exp(x)) over ``dim``, computed in ``dtype`` if given."""
    if _FAST and dtype is None and type(dim) is int and type(input) is Tensor:
        x = input._data
        nd = x.ndim
        if type(x) is np.ndarray and x.dtype in _F32_64 and nd and -nd <= dim < nd:
            dims = (dim % nd,)
            r = _softmax_float(x, dims)
            if not r.flags.c_contiguous or 1 in r.shape:   # (SOFTMAX's layout rule)
                r = _contig(r)
            return wrap_one(SOFTMAX, input, (dims,), r)
    return _run(SOFTMAX, "softmax", input, dim, dtype)


def log_softmax(input: Tensor, dim=None, dtype=None) -> Tensor:
    """``torch.log_softmax``: x - logsumexp(x) over ``dim``."""
    return _run(LOG_SOFTMAX, "log_softmax", input, dim, dtype)


method("softmax", softmax)
method("log_softmax", log_softmax)
