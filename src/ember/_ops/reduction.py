"""Reductions: sum, mean, prod, max/min, amax/amin, arg-reductions, var/std, logsumexp, norm,
all/any, count_nonzero, nansum and the scans cumsum/cumprod.

Each op is one ``Op``: forward on arrays, a VJP written once for NP and EM, and a JVP. Most
reductions are ``out = R(x)`` over ``dims`` whose VJP is ``g * F(x, out)`` with ``g`` put back to
the input's shape; their forward rule is ``sum(F * t, dims)``, derived here by ``_reduce_jvp``
from the VJP itself, so the rule lives once. Masks (ties of a max, zeros of a product, NaNs of
nansum) are constants: ``ns.data_fn`` computes them on the data without recording anything.
"""
from __future__ import annotations

import builtins
import math
import sys
import types
import warnings
from collections import namedtuple

import numpy as np

from .. import _dtype as D
from .. import _layout as _L
from .._tensor import Tensor, Version, _make, _wrap_dim
from ..autograd.grad_mode import STATE
from . import _opmath as _OM
from ._dispatch import HALF_NP
from ._out import _CPP, EXACT, check_out_grad, with_out
from ._registry import NP, Op, apply, method, ns_fn, wrap_one, wrap_outputs

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "logsumexp",
    "max",
    "mean",
    "min",
    "nansum",
    "norm",
    "prod",
    "return_types",
    "std",
    "std_mean",
    "sum",
    "var",
    "var_mean",
]

_INF = math.inf


# ---- shared helpers ----------------------------------------------------------------------

def in_float32(fn):
    """A forward on arrays that computes half inputs in float32 and rounds each result once to
    the input's half type, as PyTorch's reduction and scan kernels accumulate half types in
    float32; an accumulation dtype parameter equal to the half type becomes float32 too."""
    def f(x, *params):
        if type(x) is not np.ndarray or x.dtype not in HALF_NP:
            return fn(x, *params)
        h = x.dtype
        params = tuple(np.dtype(np.float32) if isinstance(q, np.dtype) and q == h else q
                       for q in params)
        r = fn(x.astype(np.float32), *params)
        if type(r) is tuple:
            return tuple(np.asarray(o).astype(h) for o in r)
        return np.asarray(r).astype(h)
    f.__name__ = fn.__name__
    return f


# the profiler turns the fast paths below off while it records (they skip Op.fwd)
_FAST = True


def dims_arg(dim, ndim: int) -> tuple | None:
    """Normalise a ``dim`` argument (None, int, or a sequence) to sorted positive dims; None
    means every dim (also for an empty sequence and for 0-d inputs)."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        d = _wrap_dim(int(dim), ndim)
        return (d,) if ndim else None
    seen: list = []
    for d in dim:
        w = _wrap_dim(int(d), ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    if not seen or not ndim:
        return None
    return tuple(sorted(seen))


def expand_reduced(ns, g, in_shape, dims, keepdim):
    """Put back the reduced dims of ``g`` so that it broadcasts against the input."""
    if not keepdim and dims is not None and len(in_shape):
        g = ns.unsqueeze_dims(g, dims)
    return ns.expand_to(g, in_shape)


def _unsq_np(g, dims):
    if type(g) is np.ndarray and not g.size:   # PyTorch's unsqueeze strides (NumPy's reshape
        st, shape = list(_L.torch_strides(g)), list(g.shape)   # lays an empty array afresh)
        for d in dims:
            st.insert(d, st[d] * shape[d] if d < len(shape) else 1)
            shape.insert(d, 1)
        r = np.lib.stride_tricks.as_strided(g, shape, [s * g.itemsize for s in st],
                                            writeable=False)
        return _L.keep_zero_strides(r) if r.strides == (0,) * r.ndim else r
    if type(g) is np.ndarray:   # np.expand_dims without its argument handling
        shape = list(g.shape)
        for d in dims:   # (sorted, non-negative: dims_arg made them)
            shape.insert(d, 1)
        return g.reshape(shape)
    return np.expand_dims(g, dims)


def _expand_np(g, shape):
    """``np.broadcast_to(g, shape)`` (read-only), through the ndarray constructor for a
    row-major ``g`` of as many dims: NumPy's Python wrapper cost most of a small VJP."""
    gs = g.shape
    if type(g) is np.ndarray and gs != shape and len(gs) == len(shape) \
            and g.flags.c_contiguous and g.size and g.dtype.kind in "fciub":
        st = g.strides
        strides = []
        for n, m, k in zip(gs, shape, st):
            if n == 1:   # (NumPy's broadcast strides: zero for every size-1 dim)
                strides.append(0)
            elif n == m:
                strides.append(k)
            else:
                return np.broadcast_to(g, shape)   # (its error)
        r = np.ndarray(shape, g.dtype, g, 0, tuple(strides))
        r.setflags(write=False)
        if g.size == 1 and 0 in shape:   # (all zero strides, an expand's: kept)
            _L.keep_zero_strides(r)
        return r
    r = np.broadcast_to(g, shape)
    if not r.size and type(g) is np.ndarray and r.strides == (0,) * r.ndim:
        _L.keep_zero_strides(r)   # (an expand's zeros, as PyTorch's grad of sum keeps them)
    return r


def _unsq_em(g, dims):
    for d in dims:
        g = g.unsqueeze(d)
    return g


def _const_em(fn, *args):
    data = [a._data if isinstance(a, Tensor) else a for a in args]
    try:
        r = fn(*data)
    except TypeError:   # complex32 pairs: on their complex64 values (ember._chalf)
        from .._chalf import is_ch, to_c64
        if not builtins.any(is_ch(d) for d in data):
            raise
        r = fn(*[to_c64(d) if is_ch(d) else d for d in data])
    return _make(np.asarray(r), Version(), False, None)


ns_fn("unsqueeze_dims", _unsq_np, _unsq_em)
ns_fn("expand_to", _expand_np, lambda g, shape: g.expand(shape))
# a value computed on the data alone: a mask or weight that carries no gradient
ns_fn("data_fn", lambda fn, *args: fn(*args), _const_em)
ns_fn("sum_dims", lambda x, dims, keepdim: np.sum(x, axis=dims, keepdims=keepdim),
      lambda x, dims, keepdim: sum(x, dims, keepdim) if dims is not None else
      sum(x, None, keepdim))


def _n_reduced(shape, dims) -> int:
    n = 1
    for i, s in enumerate(shape):
        if dims is None or i in dims:
            n *= s
    return n


def _keep(a, dims, keepdim):
    """``a`` (a reduction result) with the reduced dims present as size 1."""
    if keepdim or dims is None:
        return a
    return _unsq_np(a, dims)


def _squeeze(a, dims, keepdim):
    if keepdim:
        return a
    return np.squeeze(a, dims) if dims is not None else a.reshape(())


def _plain(a: np.ndarray) -> Tensor:
    """A result that never carries gradient (indices, booleans, counts)."""
    return _make(np.asarray(a), Version(), False, None)


def _ones_em(t: Tensor) -> Tensor:
    return _make(np.ones(t._data.shape, t._data.dtype), Version(), False, None)


def _reduce_jvp(op: Op, vjp=None):
    """Forward rule ``sum(F * t, dims)`` of a reduction whose VJP (or the given ``vjp``) is
    ``expand(g) * F``; params start with (dims, keepdim)."""
    def jvp(ns, tangents, primals, outs, dims, keepdim, *rest):
        saved = [primals[i] for i in op.saves] + ([outs[0]] if op.save_out else [])
        f = (vjp or op.vjp)(ns, _ones_em(outs[0]), (True,), *saved, dims, keepdim, *rest)[0]
        if f is None:
            return ns.zeros_of(outs[0], outs[0].shape)
        # the VJP's factor is conj(d out / d x) (PyTorch's convention for complex inputs); a
        # real output (var, std) then keeps the real part, Re(conj(F) * t)
        return ns.sum_dims(ns.conj(f) * tangents[0], dims, keepdim)
    op.jvp = jvp
    return op


def _type_name(dt: D.dtype) -> str:
    from ._dispatch import _type_name as tn
    return tn(dt)


_cap = _type_name


def _is_float(t: Tensor) -> bool:
    return t._data.dtype.kind in "fc" or t.dtype in (D.bfloat16, D.complex32)


def _to_default_float(t: Tensor) -> Tensor:
    return t if _is_float(t) else t.to(D.get_default_dtype())


# ---- return types ------------------------------------------------------------------------

def _structseq(name: str, fields):
    """A namedtuple printed like PyTorch's ``torch.return_types.<name>``."""
    base = namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"ember.return_types.{name}(\n{body})"

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                               "__module__": "ember.return_types"})
    return cls


return_types = types.ModuleType("ember.return_types",
                                "Named tuple results of ops (``torch.return_types``).")
return_types.max = _structseq("max", ("values", "indices"))
return_types.min = _structseq("min", ("values", "indices"))
sys.modules["ember.return_types"] = return_types


# ---- sum / mean / nansum ------------------------------------------------------------------

def _sum_fwd(x, dims, keepdim, npd, in_shape):
    if npd.itemsize == 2 and npd.kind != "i":
        # half types accumulate in float32 and round once, as in PyTorch
        return _sum_fwd(x, dims, keepdim, np.dtype(np.float32), in_shape).astype(npd)
    if type(x) is np.ndarray:   # the ufunc directly: np.sum's wrapper costs as much again
        return np.add.reduce(x, axis=dims, dtype=npd, keepdims=keepdim)
    return np.sum(x, axis=dims, keepdims=keepdim, dtype=npd)


def _sum_vjp(ns, g, need, dims, keepdim, npd, in_shape):
    return (expand_reduced(ns, g, in_shape, dims, keepdim),)


SUM = Op("sum", _sum_fwd, _sum_vjp, linear=True, names=(None, None, None, "self_sym_sizes"))
SUM_DIM = Op("sum_dim", _sum_fwd, _sum_vjp, linear=True, node="SumBackward1",
             names=("dim", "keepdim", None, "self_sym_sizes"))


def _acc_dtype(x: Tensor, dtype) -> np.dtype:
    if dtype is not None:
        if not (dtype.is_floating_point or dtype.is_complex) and STATE.grad and x.requires_grad:
            from ._dispatch import _type_name
            raise RuntimeError(f"Autograd not support dtype: {_type_name(dtype)}")
        return dtype.np
    k = x._data.dtype.kind
    return np.dtype(np.int64) if k in "iub" else x._data.dtype


# PyTorch's checks of an out= of another dtype, for reductions that do not cast
_AMAX_OUT = ("Expected the dtype for input and out to match, but got {r} for input's dtype and "
             "{o} for out's dtype.")


def _out_kernel_missing(kernel: str, out) -> None:
    from ._dispatch import _type_name
    raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(out.dtype)}\'')


def _var_out(rd, od) -> None:
    if od.is_complex:
        from ._dispatch import _type_name
        raise NotImplementedError(f'"std_cpu" not implemented for \'{_type_name(od)}\'')
    from ._out import _check_dtype_rule
    _check_dtype_rule(rd, od, "cast")


def _logsumexp_out(rd, od) -> None:
    if not (od.is_floating_point or od.is_complex):
        from ._dispatch import _type_name
        raise RuntimeError("logsumexp(): Expected floating point type for result tensor, but "
                           f"got: {_type_name(od)}")


def _logical_out(name: str):
    def check(rd, od) -> None:
        if od is not D.bool and od is not D.uint8:
            from ._dispatch import _type_name
            raise RuntimeError(f"{name} only supports bool tensor for result, got: "
                               f"{_type_name(od)}")
    return check


_F32_64 = (np.dtype(np.float32), np.dtype(np.float64))
_contig = _L.contiguous_np


def _fast_dims(d, dim):
    """The reduced dims of the reduction fast paths (a float32/float64 ndarray of at least one
    dim, ``dim`` None or one int, as ``dims_arg`` makes them), or False for the general path."""
    if type(d) is not np.ndarray or d.dtype not in _F32_64 or not d.ndim:
        return False
    if dim is None:
        return None
    if type(dim) is int:
        n = d.ndim
        if -n <= dim < n:
            return (dim % n,)
    return False


def _fast_result(r):
    """A reduction result as PyTorch lays it out (what ``contiguous_result`` does for these
    ops' forwards)."""
    if type(r) is np.ndarray and (not r.flags.c_contiguous or 1 in r.shape):
        return _contig(r)
    return r


class _Omitted:
    """The default of an argument whose absence PyTorch's parser tells from an explicit None
    (it picks another overload), printed as None."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "None"


_NO_DIM = _Omitted()


def _no_dim_out(name: str, dtype, keepdim) -> TypeError:
    """PyTorch's parser error for ``<name>(input, ..., out=)`` without ``dim``: only the
    overload with a dim list takes ``out``."""
    if dtype is not None or keepdim:
        return TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    return TypeError(
        f"{name}() received an invalid combination of arguments - got (Tensor, out=Tensor), but "
        f"expected one of:\n * (Tensor input, *, ember.dtype dtype = None)\n * (Tensor input, "
        f"tuple of ints dim, bool keepdim = False, *, ember.dtype dtype = None, Tensor out = "
        f"None)\n")


def sum(input: Tensor, dim=_NO_DIM, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """``torch.sum``: integers and bools sum to int64 (``out`` only with a ``dim``, which may
    be None, as PyTorch's overloads)."""
    if dim is _NO_DIM:
        if out is not None:
            raise _no_dim_out("sum", dtype, keepdim)
        dim = None
    if _FAST and out is None and dtype is None and type(input) is Tensor:
        d = input._data
        dims = _fast_dims(d, dim)
        if dims is not False:   # a float tensor over all dims or one: the ufunc directly
            r = np.add.reduce(d, dims, d.dtype, None, keepdim)
            return wrap_one(SUM if dim is None and not keepdim else SUM_DIM, input,
                            (dims, keepdim, d.dtype, d.shape), _fast_result(r))
    if out is not None:
        return with_out(sum, out, (input, dim, keepdim), {"dtype": dtype}, dtype="as_out")
    dims = dims_arg(dim, input._data.ndim)
    npd = _acc_dtype(input, dtype)
    op = SUM if dim is None and not keepdim else SUM_DIM
    return apply(op, (input,), (dims, keepdim, npd, input._data.shape))


def _mean_fwd(x, dims, keepdim, npd, in_shape):
    if npd.itemsize == 2:   # half types: float32 accumulation, one rounding (as PyTorch)
        return np.mean(x, axis=dims, keepdims=keepdim, dtype=np.float32).astype(npd)
    if type(x) is np.ndarray and npd.kind == "f" and x.dtype is npd:
        # np.mean's own arithmetic (one add.reduce, then a division in place) without its
        # Python wrappers, which cost twice the reduction on a small array
        n = x.size if dims is None else math.prod([x.shape[d] for d in dims])
        if n:
            r = np.add.reduce(x, dims, npd, None, keepdim)
            if type(r) is np.ndarray:
                return np.true_divide(r, n, out=r, casting="unsafe")
            return npd.type(r / n)
    return np.mean(x, axis=dims, keepdims=keepdim, dtype=npd)


def _mean_vjp(ns, g, need, dims, keepdim, npd, in_shape):
    # divided after the expansion, as PyTorch: a gradient of its own, not a broadcast view
    return (expand_reduced(ns, g, in_shape, dims, keepdim) / _n_reduced(in_shape, dims),)


MEAN = Op("mean", _mean_fwd, _mean_vjp, linear=True, names=(None, None, None, "self_sym_sizes"))
MEAN_DIM = Op("mean_dim", _mean_fwd, _mean_vjp, linear=True, node="MeanBackward1",
              names=("dim", "keepdim", None, "self_sym_sizes"))


def mean(input: Tensor, dim=_NO_DIM, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """``torch.mean``: floating and complex inputs only (or a floating ``dtype``). With ``out``
    and no ``dim`` PyTorch picks the ``mean.dtype_out`` overload (its own cast check); an
    explicit ``dim=None`` is ``mean.out``'s, as a dim list."""
    omitted = dim is _NO_DIM
    if omitted:
        if out is not None and keepdim:   # (only mean.out takes keepdim)
            if dtype is not None:
                raise TypeError('mean() missing 1 required positional arguments: "dim"')
            raise TypeError(
                "mean() received an invalid combination of arguments - got (Tensor, out=Tensor, "
                "keepdim=bool), but expected one of:\n * (Tensor input, *, ember.dtype dtype = "
                "None, Tensor out = None)\n * (Tensor input, tuple of ints dim, bool keepdim = "
                "False, *, ember.dtype dtype = None, Tensor out = None)\n")
        dim = None
    if _FAST and out is None and dtype is None and type(input) is Tensor:
        d = input._data
        dims = _fast_dims(d, dim)
        if dims is not False and d.size:   # as _mean_fwd: one add.reduce, one division
            npd = d.dtype
            r = np.add.reduce(d, dims, npd, None, keepdim)
            n = d.size if dims is None else d.shape[dims[0]]
            r = np.true_divide(r, n, out=r, casting="unsafe") if type(r) is np.ndarray \
                else npd.type(r / n)
            return wrap_one(MEAN if dim is None and not keepdim else MEAN_DIM, input,
                            (dims, keepdim, npd, d.shape), _fast_result(r))
    if out is not None:   # (the autograd refusal comes before the dtype checks)
        check_out_grad("mean", out, (input,))
        if omitted and isinstance(out, Tensor) and not D.can_cast(input.dtype, out.dtype):
            # the overload without dim (mean.dtype_out) checks the input's type first
            raise RuntimeError("mean.dtype_out(): input types can't be cast to the desired "
                               f"output type {_cap(out.dtype)}")
    dt = dtype or input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(
            f"mean(): could not infer output dtype. {'Optional' if dtype else 'Input'} dtype "
            f"must be either a floating point or complex dtype. Got: {_cap(dt)}")
    if out is not None:
        return _mean_out(input, dim, keepdim, dtype, out)
    dims = dims_arg(dim, input._data.ndim)
    op = MEAN if dim is None and not keepdim else MEAN_DIM
    with np.errstate(invalid="ignore", divide="ignore"):
        return apply(op, (input,), (dims, keepdim, dt.np, input._data.shape))


def _mean_out(input: Tensor, dim, keepdim: bool, dtype, out) -> Tensor:
    """PyTorch's mean.out: a given ``dtype`` must be ``out``'s; without one the mean is computed
    in ``out``'s dtype as ``sum_out(out, ..., dtype=out.dtype).div_(n)``, so an integer or bool
    ``out`` receives the sum and then the division refuses (a default-dtype result)."""
    if isinstance(out, Tensor) and dtype is not None and dtype is not out.dtype:
        raise RuntimeError(EXACT.format(rc=_CPP[dtype.name], oc=_CPP[out.dtype.name]))
    if not isinstance(out, Tensor) or out.is_floating_point() or out.is_complex():
        return with_out(mean, out, (input, dim, keepdim), {"dtype": dtype}, dtype="as_out")
    with_out(sum, out, (input, dim, keepdim), {"dtype": out.dtype}, name="mean",
             below_autograd=True)
    raise RuntimeError(f"result type {_cap(D.get_default_dtype())} can't be cast to the "
                       f"desired output type {_cap(out.dtype)}")


def _nansum_fwd(x, dims, keepdim, npd):
    return np.nansum(x, axis=dims, keepdims=keepdim, dtype=npd)


def _nansum_vjp(ns, g, need, x, dims, keepdim, npd):
    ge = expand_reduced(ns, g, x.shape, dims, keepdim)
    return (ns.where(ns.data_fn(np.isnan, x), 0, ge),)


NANSUM = _reduce_jvp(Op("nansum", _nansum_fwd, _nansum_vjp, saves=(0,)))


def nansum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """``torch.nansum``: the sum treating NaN as zero."""
    if out is not None:
        check_out_grad("nansum", out, (input,))
        if input.is_complex():
            raise RuntimeError("nansum on CPU does not support complex inputs")
        if isinstance(out, Tensor) and input.is_floating_point() and (
                dtype is None or dtype.is_floating_point or dtype.is_complex):
            # (an integral dtype sums as sum.out does: no NaN to skip)
            if dtype is not None and dtype is not out.dtype:
                raise RuntimeError("nansum: provided dtype must match dtype of result. Got "
                                   f"{_cap(out.dtype)} and {_cap(dtype)}.")
            if not out.is_floating_point():
                # the NaN-skipping kernel runs in out's dtype, which needs to be a floating one
                _out_kernel_missing("nansum_cpu", out)
        return with_out(nansum, out, (input, dim, keepdim), {"dtype": dtype}, dtype="as_out")
    if input.is_complex():
        raise RuntimeError("nansum on CPU does not support complex inputs")
    dims = dims_arg(dim, input._data.ndim)
    return apply(NANSUM, (input,), (dims, keepdim, _acc_dtype(input, dtype)))


# ---- prod ---------------------------------------------------------------------------------

def _prod_fwd(x, dims, keepdim, npd):
    if type(x) is np.ndarray and x.dtype in HALF_NP and npd == x.dtype:
        return _half_prod(x, dims, keepdim)
    return np.prod(x, axis=dims, keepdims=keepdim, dtype=npd)


# PyTorch's reduction128: an inner (contiguous) reduction runs 4 accumulators of 16 lanes (its
# 256-bit build's Vectorized<Half>) over blocks of 64 elements; a full reduction of at least
# _GRAIN elements is split between the intra-op threads (two-pass: one partial per thread)
_LANES, _GRAIN = 16, 32768


def _half_prod(x, dims, keepdim):
    """PyTorch's CPU prod of a half type, every product rounded to the half type (its
    accumulator is the half type; NumPy's accumulates in float32): over a contiguous run of the
    reduced elements, as its vectorised inner reduction; otherwise one product after
    another."""
    red = tuple(range(x.ndim)) if dims is None else tuple(d % x.ndim for d in dims)
    keep = [d for d in range(x.ndim) if d not in red]
    kshape = tuple(x.shape[d] for d in keep)
    n = math.prod(x.shape[d] for d in red)

    def rnd(v):
        return v.astype(x.dtype).astype(np.float32)

    if not keep and _L.dense_np(x):
        y = np.ravel(x, order="K").astype(np.float32)   # TensorIterator's memory order
        from .._threads import get_num_threads
        parts = builtins.min(get_num_threads(), -(-n // _GRAIN)) if n >= _GRAIN else 1
        step = -(-n // parts)
        acc = np.float32(1)
        for k, a in enumerate(range(0, n, step)):
            b = _half_prod_run(y[a:a + step], True, rnd)
            acc = b if k == 0 else rnd(acc * b)
    else:
        y = np.transpose(x, keep + list(red)).reshape(kshape + (n,)).astype(np.float32)
        inner = x.flags.c_contiguous and red == tuple(range(len(keep), x.ndim))
        acc = _half_prod_run(y, inner, rnd)
    out = acc.astype(x.dtype)
    if keepdim:
        out = out.reshape(tuple(1 if d in red else m for d, m in enumerate(x.shape)))
    return out


def _half_prod_run(y, inner: bool, rnd):
    """Products along ``y``'s last axis (float32 values of halves), each rounded by ``rnd``;
    ``inner``: as PyTorch's vectorised inner reduction (``_LANES`` lanes x 4 accumulators over
    64-element blocks, combined pairwise, then the lanes and the tail one after another)."""
    n = y.shape[-1]
    blk = 4 * _LANES
    count = n // blk if inner else 0
    acc = np.ones(y.shape[:-1], np.float32)
    if count:
        shape = y.shape[:-1] + (4, _LANES)
        v = y[..., :blk].reshape(shape)
        for i in range(1, count):
            v = rnd(v * y[..., i * blk:(i + 1) * blk].reshape(shape))
        v = rnd(rnd(v[..., 0, :] * v[..., 1, :]) * rnd(v[..., 2, :] * v[..., 3, :]))
        acc = v[..., 0]
        for j in range(1, _LANES):
            acc = rnd(acc * v[..., j])
    for j in range(count * blk, n):
        acc = rnd(acc * y[..., j])
    return acc


def _prod_masks(x, dims):
    """(zero mask, slice has no zero besides this one, slice has exactly one other zero)."""
    z = x == 0
    cnt = np.sum(z, axis=dims, keepdims=True)
    others = cnt - z
    m1 = others == 1
    if dims is None and cnt.sum() >= 2:
        m1 = np.zeros_like(m1)   # PyTorch's full prod returns constant zeros here
    return z, others == 0, m1


def _prod_vjp(ns, g, need, x, dims, keepdim, npd):
    # d prod / d x_i = (product of the non-zero others) * (product of the zero others); the
    # second factor is 1, the single other zero itself (value 0, slope 1), or 0.
    if not x.ndim:
        return (g,)   # the product of one number is itself (as PyTorch, no second derivative)
    z, m0, m1 = (ns.data_fn(lambda a, k=k: _prod_masks(a, dims)[k], x) for k in range(3))
    x1 = ns.where(z, 1, x)
    p1 = ns.prod_dims(x1, dims, True)
    zx = ns.where(z, x, 0)
    zsum = ns.sum_dims(zx, dims, True)
    zf = ns.where(m0, 1, 0) + ns.where(m1, zsum - zx, 0)
    ge = expand_reduced(ns, g, x.shape, dims, keepdim)
    return (ge * ns.conj(p1 / x1 * zf),)


def _prod_vjp_result(ns, g, need, x, r, dims, keepdim, npd):
    """prod's VJP as PyTorch's prod_backward: where the input has no zero, ``grad * conj(result
    / input)``, reading the saved result (so a double backward reaches the result too, and a
    half type rounds op by op); with zeros, the zero-safe formula."""
    xa = x._data if isinstance(x, Tensor) else x
    if x.ndim and type(xa) is np.ndarray and not (xa == 0).any():
        with np.errstate(divide="ignore", invalid="ignore"):
            q = expand_reduced(ns, r, x.shape, dims, keepdim) / x
        return (expand_reduced(ns, g, x.shape, dims, keepdim) * ns.conj(q),)
    if ns is NP and x.ndim and type(xa) is np.ndarray and xa.dtype in HALF_NP and \
            type(g) is np.ndarray and g.dtype == xa.dtype and xa.size:
        # PyTorch's prod_safe_zeros_backward op by op, rounded to the half type (_opmath)
        return (_OM.prod_zeros_bwd_half(g, xa, dims, keepdim),)
    return _prod_vjp(ns, g, need, x, dims, keepdim, npd)


PROD = _reduce_jvp(Op("prod", _prod_fwd, _prod_vjp_result, saves=(0,),
                      save_out=True))
PROD_DIM = _reduce_jvp(Op("prod_dim", _prod_fwd, _prod_vjp_result,
                          saves=(0,),
                          save_out=True, node="ProdBackward1"))
ns_fn("prod_dims", lambda x, dims, keepdim: np.prod(x, axis=dims, keepdims=keepdim),
      lambda x, dims, keepdim: apply(PROD_DIM, (x,), (dims, keepdim, x._data.dtype)))


def prod(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """``torch.prod``: over everything, or over one ``dim``; integers and bools give int64."""
    if out is not None:
        return with_out(prod, out, (input, dim, keepdim), {"dtype": dtype}, dtype="as_out")
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError("prod(): argument 'dim' must be int, not " + type(dim).__name__)
    npd = _acc_dtype(input, dtype)
    if dim is None:
        return apply(PROD, (input,), (None, False, npd))
    return apply(PROD_DIM, (input,), (dims_arg(dim, input._data.ndim), keepdim, npd))


# ---- max / min / amax / amin / argmax / argmin --------------------------------------------

def _extreme_mask(x, out, dims, keepdim, nan_ties):
    """Where ``x`` holds its slice's extreme ``out`` (with ``nan_ties``, NaNs too)."""
    o = _keep(out, dims, keepdim)
    m = x == o
    if nan_ties and (x.dtype.kind in "fc" or x.dtype == D.bfloat16.np):
        m |= np.isnan(x) & np.isnan(o)
    return m


def _count_np(m, dims):
    return np.add.reduce(m, dims, np.int64, None, True)


def _scale_by_count(ns, g, m, shape, dims, keepdim):
    """PyTorch's ``scale_grad_by_count(restore_reduced_dims(grad), mask, dims)``: the gradient
    divided by the number of tied extremes, then put where ``m`` is (ties split it evenly; a
    slice without its extreme, NaN's, gives 0/0 = NaN)."""
    if not keepdim and dims is not None and len(shape):
        g = ns.unsqueeze_dims(g, dims)
    cnt = ns.data_fn(_count_np, m, dims)
    if ns is NP and type(g) is np.ndarray:
        # (NumPy would promote by the count's int64; PyTorch divides in the gradient's type,
        # half types in float32 with one rounding)
        dt = g.dtype
        if dt.itemsize == 2 and dt.kind != "i":
            q = np.divide(g, cnt, dtype=np.float32).astype(dt)
        else:
            q = np.divide(g, cnt, dtype=dt)
        return np.multiply(q, m, dtype=dt)
    return (g / cnt) * m


def _extreme_vjp(nan_ties):
    def vjp(ns, g, need, x, out, dims, keepdim):
        m = ns.data_fn(_extreme_mask, x, out, dims, keepdim, nan_ties)
        return (_scale_by_count(ns, g, m, x.shape, dims, keepdim),)
    return vjp


def _amax_fwd(x, dims, keepdim):
    if type(x) is np.ndarray:   # the ufunc directly: np.max is a Python wrapper around it
        return np.maximum.reduce(x, dims, None, None, keepdim)
    return np.max(x, axis=dims, keepdims=keepdim)


def _amin_fwd(x, dims, keepdim):
    if type(x) is np.ndarray:
        return np.minimum.reduce(x, dims, None, None, keepdim)
    return np.min(x, axis=dims, keepdims=keepdim)


AMAX = _reduce_jvp(Op("amax", _amax_fwd, _extreme_vjp(False), saves=(0,), save_out=True))
AMIN = _reduce_jvp(Op("amin", _amin_fwd, _extreme_vjp(False), saves=(0,), save_out=True))
# the full max/min share their gradient among NaNs too; their forward rule (like PyTorch's
# evenly_read_jvp) does not, and gives NaN there
MAX_ALL = _reduce_jvp(Op("max", _amax_fwd, _extreme_vjp(True), saves=(0,), save_out=True,
                         node="MaxBackward1"), _extreme_vjp(False))
MIN_ALL = _reduce_jvp(Op("min", _amin_fwd, _extreme_vjp(True), saves=(0,), save_out=True,
                         node="MinBackward1"), _extreme_vjp(False))


def _check_nonempty(name: str, x: Tensor, dims, *, index_error=False) -> None:
    shape = x._data.shape
    if dims is None:
        if x._data.size == 0:
            msg = f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            if index_error:
                raise IndexError(msg)
            raise RuntimeError(msg + " Specify the reduction dim with the 'dim' argument.")
        return
    for d in dims:
        if shape and shape[d] == 0:   # (a 0-dim tensor holds one element)
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _as_given(dim, dims):
    """The reduced dims as the user wrote them (amax/amin's messages name -1 as -1)."""
    if isinstance(dim, int):
        return (dim,)
    return tuple(dim) if dim is not None and len(dim) else dims


def _check_not_complex(kernel: str, x: Tensor) -> None:
    if x.is_complex():
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{_type_name(x.dtype)}\'')


def amax(input: Tensor, dim=(), keepdim: bool = False, *, out=None) -> Tensor:
    """``torch.amax``: the maximum over ``dim`` (all dims by default); ties share the grad."""
    if _FAST and out is None and type(input) is Tensor:
        d = input._data
        dims = _fast_dims(d, dim) if type(dim) is int else False
        if dims and d.shape[dims[0]]:   # one nonempty dim of a float tensor
            r = np.maximum.reduce(d, dims, None, None, keepdim)
            return wrap_one(AMAX, input, (dims, keepdim), _fast_result(r))
    if out is not None:
        return with_out(amax, out, (input, dim, keepdim), dtype=_AMAX_OUT)
    dims = dims_arg(dim, input._data.ndim)
    _check_nonempty("amax", input, _as_given(dim, dims))
    return apply(AMAX, (input,), (dims, keepdim))


def amin(input: Tensor, dim=(), keepdim: bool = False, *, out=None) -> Tensor:
    """``torch.amin``."""
    if out is not None:
        return with_out(amin, out, (input, dim, keepdim), dtype=_AMAX_OUT)
    dims = dims_arg(dim, input._data.ndim)
    _check_nonempty("amin", input, _as_given(dim, dims))
    return apply(AMIN, (input,), (dims, keepdim))


def _gather_np(x, dim, idx, keepdim, in_shape):
    r = np.take_along_axis(x, idx, axis=dim)
    return r if keepdim else np.squeeze(r, dim)


def _scatter_np(g, dim, idx, keepdim, in_shape):
    out = np.zeros(in_shape, g.dtype)
    np.put_along_axis(out, idx, g if keepdim else np.expand_dims(g, dim), axis=dim)
    return out


GATHER = Op("gather", _gather_np, lambda ns, g, need, *p: (ns.scatter_dim(g, *p),),
            linear=True)
SCATTER = Op("scatter", _scatter_np, lambda ns, g, need, *p: (ns.gather_dim(g, *p),),
             linear=True)
ns_fn("gather_dim", _gather_np, lambda x, *p: apply(GATHER, (x,), p))
ns_fn("scatter_dim", _scatter_np, lambda g, *p: apply(SCATTER, (g,), p))


def _select_fwd(x, dim, keepdim, idx, in_shape):
    if not in_shape:   # a 0-dim input: the value itself, index 0
        return x.copy(), np.zeros((), np.int64)
    return _gather_np(x, dim, idx, keepdim, in_shape), _squeeze(idx, (dim,), keepdim)


def _select_vjp(ns, g, need, dim, keepdim, idx, in_shape):
    if not in_shape:
        return (g[0],)
    return (ns.scatter_dim(g[0], dim, idx, keepdim, in_shape),)


def _select_jvp(ns, tangents, primals, outs, dim, keepdim, idx, in_shape):
    if not in_shape:
        return (tangents[0], None)
    return (ns.gather_dim(tangents[0], dim, idx, keepdim, in_shape), None)


MAX_DIM = Op("max_dim", _select_fwd, _select_vjp, _select_jvp, n_out=2, diff_out=(0,),
             node="MaxBackward0")
MIN_DIM = Op("min_dim", _select_fwd, _select_vjp, _select_jvp, n_out=2, diff_out=(0,),
             node="MinBackward0")


def save_indices(op: Op, names: tuple) -> Op:
    """Save output 1 (the indices of a selecting op) as PyTorch saves it: changing it in place
    fails the backward with the version error instead of feeding it wrong positions. The formula
    keeps reading the indices from the params (the same array); ``names`` are the node's
    ``_saved_*`` names (saved inputs, ``indices``, then the params)."""
    op.node.params_saved = True   # released after it ran, as PyTorch frees the saved indices
    op.save_out = op.saved_outs = (1,)
    op.names = names
    n = len(op.saves)
    vjp = op.vjp
    op.vjp = lambda ns, g, need, *a: vjp(ns, g, need, *a[:n], *a[n + 1:])
    return op


for _op in (MAX_DIM, MIN_DIM):
    save_indices(_op, ("indices", "dim", "keepdim", None, "self_sym_sizes"))


def _minmax(name, input, dim, keepdim, other, all_op, dim_op, argf, binary_name):
    if isinstance(dim, Tensor) or isinstance(other, Tensor):
        fn = getattr(_ops_namespace(), binary_name, None)
        if fn is None:
            raise NotImplementedError(f"{name}(input, other) needs ember.{binary_name}, which is "
                                      "not built yet")
        return fn(input, dim if other is None else other)
    _check_not_complex(f"{name}_all" if dim is None else name, input)
    if dim is None:
        _check_nonempty(name, input, None)
        return apply(all_op, (input,), (None, False))
    x = input._data
    d = _wrap_dim(int(dim), x.ndim)
    rt = getattr(return_types, name)
    if x.ndim == 0:
        return rt(*apply(dim_op, (input,), (0, keepdim, None, ())))
    _check_nonempty(name, input, (d,))
    idx = argf(x, axis=d, keepdims=True)
    out = _select_fwd(x, d, keepdim, idx, x.shape)
    v, i = wrap_outputs(dim_op, (input,), (d, keepdim, idx, x.shape), out)
    return rt(v, i)


def _ops_namespace():
    from .. import _ops
    return _ops


def _bad_minmax(name, input, dim, keepdim, other, out) -> TypeError:
    """PyTorch's parser error for max/min of a non-tensor (the arguments a caller gave)."""
    from ._parser import invalid_combination
    args = (input,) + ((dim,) if dim is not None else ()) + ((keepdim,) if keepdim else ())
    return invalid_combination(name, args, {"other": other, "out": out})


def max(input: Tensor, dim=None, keepdim: bool = False, *, other=None, out=None):
    """``torch.max``: the maximum (no dim), ``(values, indices)`` over ``dim``, or the
    elementwise ``maximum`` of two tensors."""
    if not isinstance(input, Tensor):
        raise _bad_minmax("max", input, dim, keepdim, other, out)
    if out is not None:
        binary = isinstance(dim, Tensor) or isinstance(other, Tensor)
        return with_out(max, out, (input, dim, keepdim), {"other": other},
                        dtype="cast" if binary else "exact", name="maximum" if binary else "max")
    return _minmax("max", input, dim, keepdim, other, MAX_ALL, MAX_DIM, np.argmax, "maximum")


def min(input: Tensor, dim=None, keepdim: bool = False, *, other=None, out=None):
    """``torch.min``: like ``max``."""
    if not isinstance(input, Tensor):
        raise _bad_minmax("min", input, dim, keepdim, other, out)
    if out is not None:
        binary = isinstance(dim, Tensor) or isinstance(other, Tensor)
        return with_out(min, out, (input, dim, keepdim), {"other": other},
                        dtype="cast" if binary else "exact", name="minimum" if binary else "min")
    return _minmax("min", input, dim, keepdim, other, MIN_ALL, MIN_DIM, np.argmin, "minimum")


def _arg(name, argf, input, dim, keepdim):
    if input._data.dtype == np.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    if input.is_complex():
        raise RuntimeError(f"{name}(): does not support complex input")
    x = input._data
    if dim is None:
        _check_nonempty(name, input, None, index_error=True)
        r = argf(x.reshape(-1))
        if keepdim:
            r = np.reshape(r, (1,) * x.ndim)
        return _plain(np.asarray(r, np.int64))
    d = _wrap_dim(int(dim), x.ndim)
    if x.ndim == 0:
        return _plain(np.zeros((), np.int64))
    _check_nonempty(name, input, (d,))
    return _plain(argf(x, axis=d, keepdims=keepdim).astype(np.int64))


def argmax(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    """``torch.argmax``: index of the first maximum (of the flattened input when no dim)."""
    if out is not None:
        return with_out(argmax, out, (input, dim, keepdim), dtype="exact", differentiable=False)
    return _arg("argmax", np.argmax, input, dim, keepdim)


def argmin(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    """``torch.argmin``."""
    if out is not None:
        return with_out(argmin, out, (input, dim, keepdim), dtype="exact", differentiable=False)
    return _arg("argmin", np.argmin, input, dim, keepdim)


# ---- var / std and their mean pairs --------------------------------------------------------

@in_float32
def _var_np(x, dims, keepdim, correction):
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        red = range(x.ndim) if dims is None else [d % x.ndim for d in dims]
        kept = [n for i, n in enumerate(x.shape) if i not in red]
        if type(x) is np.ndarray and x.size and builtins.max(kept, default=1) > 1:
            # several slices: PyTorch runs Welford, under which a constant slice has exactly
            # zero variance; shifting each slice by its first element gives that here
            # (np.var's mean sum/n can round off, and std's zero-masked derivative would then
            # see a tiny nonzero std). One output element: PyTorch's two passes (mean = sum/n,
            # then squared deviations) are np.var's own.
            x = x - x[tuple(slice(0, 1) if i in red else slice(None) for i in range(x.ndim))]
        return np.var(x, axis=dims, ddof=correction, keepdims=keepdim)


def _var_part(ns, g, x, dims, keepdim, correction):
    n = _n_reduced(x.shape, dims)
    dof = n - correction
    scale = 2.0 / dof if dof != 0 else _INF
    if ns is NP and type(x) is np.ndarray and x.dtype in HALF_NP and dof > 0:
        # PyTorch's var_backward on half tensors, op by op: (2 / dof) * grad (float32 scalar,
        # rounded), times (self - self.mean(dim, keepdim=True)) (mean accumulated in float32)
        h = x.dtype
        with np.errstate(over="ignore"):
            mu = np.mean(x, axis=dims, keepdims=True, dtype=np.float32).astype(h)
            sg = (np.float32(scale) * np.asarray(g).astype(np.float32)).astype(h)
        return expand_reduced(ns, sg, x.shape, dims, keepdim) * (x - mu)
    mu = ns.sum_dims(x, dims, True) / n
    return expand_reduced(ns, g, x.shape, dims, keepdim) * (x - mu) * scale


def _mean_part(ns, g, x, dims, keepdim):
    return expand_reduced(ns, g / _n_reduced(x.shape, dims), x.shape, dims, keepdim)


def _std_grad(ns, g, out):
    with np.errstate(invalid="ignore", divide="ignore"):
        return ns.where(ns.data_fn(np.equal, out, 0), 0, g / (out * 2))


def _var_vjp(ns, g, need, x, dims, keepdim, correction):
    return (_var_part(ns, g, x, dims, keepdim, correction),)


def _std_vjp(ns, g, need, x, out, dims, keepdim, correction):
    return (_var_part(ns, _std_grad(ns, g, out), x, dims, keepdim, correction),)


def _pair_vjp(is_std):
    def vjp(ns, g, need, x, *rest):
        if is_std:
            out, dims, keepdim, correction = rest
        else:
            dims, keepdim, correction = rest
        gv, gm = g
        r = None
        if gv is not None:
            gv = _std_grad(ns, gv, out) if is_std else gv
            r = _var_part(ns, gv, x, dims, keepdim, correction)
        if gm is not None:
            m = _mean_part(ns, gm, x, dims, keepdim)
            r = m if r is None else r + m
        return (r,)
    return vjp


def _pair_jvp(is_std):
    def jvp(ns, tangents, primals, outs, dims, keepdim, correction):
        x, t = primals[0], tangents[0]
        one = _ones_em(outs[0])
        f = _var_part(ns, _std_grad(ns, one, outs[0]) if is_std else one, x, dims, keepdim,
                      correction)
        return (ns.sum_dims(ns.conj(f) * t, dims, keepdim),
                ns.sum_dims(t, dims, keepdim) / _n_reduced(x.shape, dims))
    return jvp


VAR = _reduce_jvp(Op("var", _var_np, _var_vjp, saves=(0,)))
STD = _reduce_jvp(Op("std", in_float32(lambda x, *p: np.sqrt(_var_np(x, *p))), _std_vjp,
                     saves=(0,), save_out=True))
VAR_MEAN = Op("var_mean", in_float32(lambda x, d, k, c: (_var_np(x, d, k, c),
                                                         np.mean(x, d, keepdims=k))),
              _pair_vjp(False), _pair_jvp(False), saves=(0,), n_out=2)
STD_MEAN = Op("std_mean", in_float32(lambda x, d, k, c: (np.sqrt(_var_np(x, d, k, c)),
                                                         np.mean(x, d, keepdims=k))),
              _pair_vjp(True), _pair_jvp(True), saves=(0,), save_out=(0,), n_out=2)


def _var_args(name, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, builtins.bool):   # var(True): the legacy ``unbiased`` positional
        dim, unbiased = None, dim
    if not _is_float(input):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = dims_arg(dim, input._data.ndim)
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    n = _n_reduced(input._data.shape, dims)
    if n - correction <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    return dims, correction


def var(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *,
        correction=None, out=None) -> Tensor:
    """``torch.var``: ``correction`` (default 1; ``unbiased=False`` means 0)."""
    if out is not None:
        return with_out(var, out, (input, dim, unbiased, keepdim), {"correction": correction},
                        dtype=_var_out)
    dims, c = _var_args("var", input, dim, unbiased, keepdim, correction)
    return apply(VAR, (input,), (dims, keepdim, c))


def std(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *,
        correction=None, out=None) -> Tensor:
    """``torch.std``."""
    if out is not None:
        return with_out(std, out, (input, dim, unbiased, keepdim), {"correction": correction},
                        dtype=_var_out)
    dims, c = _var_args("std", input, dim, unbiased, keepdim, correction)
    return apply(STD, (input,), (dims, keepdim, c))


def var_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *,
             correction=None) -> tuple:
    """``torch.var_mean``: ``(var, mean)`` as a plain tuple, one node for both."""
    dims, c = _var_args("var_mean", input, dim, unbiased, keepdim, correction)
    return apply(VAR_MEAN, (input,), (dims, keepdim, c))


def std_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *,
             correction=None) -> tuple:
    """``torch.std_mean``."""
    dims, c = _var_args("std_mean", input, dim, unbiased, keepdim, correction)
    return apply(STD_MEAN, (input,), (dims, keepdim, c))


# ---- logsumexp / norm ---------------------------------------------------------------------

def _lse_fwd(x, dims, keepdim):
    if type(x) is np.ndarray and x.dtype in HALF_NP:
        return _half_lse(x, dims, keepdim)
    # complex: PyTorch shifts by the real parts' maximum, so the result's imaginary part is the
    # principal one (logsumexp(z) of one element is log(exp(z)), not z)
    r = np.real(x)
    m = np.max(r, axis=dims, keepdims=True, initial=-_INF)
    m = np.where(np.isinf(m), 0, m).astype(r.dtype)
    with np.errstate(divide="ignore"):
        s = np.log(np.sum(np.exp(x - m), axis=dims, keepdims=True)) + m
    return _squeeze(s, dims, keepdim)


def _half_lse(x, dims, keepdim):
    """PyTorch's logsumexp of a half tensor, op by op in the half type (its composite: amax,
    ``(self - maxes).exp_()``, a float32-accumulated sum, ``log_``, ``add_``), each rounded."""
    h = x.dtype
    m = np.max(x, axis=dims, keepdims=True, initial=-_INF)
    m = np.where(np.isinf(m), 0, m).astype(h)
    with np.errstate(divide="ignore", over="ignore"):
        s = np.sum(np.exp(x - m), axis=dims, keepdims=True, dtype=np.float32).astype(h)
        r = np.log(s) + m
    return _squeeze(r, dims, keepdim)


def _lse_vjp(ns, g, need, x, out, dims, keepdim):
    if ns is NP and type(x) is np.ndarray and x.dtype in HALF_NP:
        # logsumexp_backward, op by op in the half type: grad * (self - result).exp()
        oe = expand_reduced(ns, out, x.shape, dims, keepdim)
        return (expand_reduced(ns, g, x.shape, dims, keepdim) * np.exp(x - oe),)
    oe = expand_reduced(ns, out, x.shape, dims, keepdim)
    return (expand_reduced(ns, g, x.shape, dims, keepdim) * ns.conj(ns.exp(x - oe)),)


def _lse_jvp(ns, tangents, primals, outs, dims, keepdim):
    x = primals[0]
    e = ns.exp(x - ns.data_fn(lambda a: np.max(a, axis=dims, keepdims=True, initial=-_INF)
                              if a.size else np.zeros((), a.dtype), x))
    return ns.sum_dims(e * tangents[0], dims, keepdim) / ns.sum_dims(e, dims, keepdim)


LOGSUMEXP = Op("logsumexp", _lse_fwd, _lse_vjp, _lse_jvp, saves=(0,), save_out=True)


def logsumexp(input: Tensor, dim, keepdim: bool = False, *, out=None) -> Tensor:
    """``torch.logsumexp``: stable log(sum(exp(x))) over ``dim``; integers become float."""
    if out is not None:
        return with_out(logsumexp, out, (input, dim, keepdim), dtype=_logsumexp_out)
    if dim is None:
        raise TypeError(
            "logsumexp(): argument 'dim' (position 2) must be tuple of ints, not NoneType")
    x = _to_default_float(input)
    if isinstance(dim, (tuple, list)) and not dim and not keepdim and x._data.ndim:
        # PyTorch reduces everything but writes into a result of the empty dim list's shape
        ones = ", ".join("1" for _ in x._data.shape)
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape [{ones}]")
    return apply(LOGSUMEXP, (x,), (dims_arg(dim, x._data.ndim), keepdim))


@in_float32
def _norm_fwd(x, dims, keepdim, p):
    a = np.abs(x)
    if p == _INF:
        return np.max(a, axis=dims, keepdims=keepdim)
    if p == -_INF:
        return np.min(a, axis=dims, keepdims=keepdim)
    if p == 0:
        return np.sum(a != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
    if p == 1:
        return np.sum(a, axis=dims, keepdims=keepdim)
    if p == 2:
        return np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
    with np.errstate(divide="ignore"):
        return np.sum(a ** p, axis=dims, keepdims=keepdim) ** (1.0 / p)


def _norm_vjp(ns, g, need, x, out, dims, keepdim, p):
    # PyTorch's linalg_vector_norm_backward, term for term (sgn/abs stay differentiable so the
    # gradient's own graph matches)
    if p == 0:
        return (None,)
    ge = expand_reduced(ns, g, x.shape, dims, keepdim)
    sgn = ns.sgn(x)
    if p == 1:
        return (sgn * ge,)
    if p in (_INF, -_INF):
        # (|x| in the result's precision: a complex32 input's float16, as PyTorch's kernel)
        # the maximum of |x|, NaNs counted as maxima (PyTorch's mask: |x| == norm or NaN)
        m = ns.data_fn(lambda a, o: _extreme_mask(np.abs(a).astype(o.dtype, copy=False), o,
                                                  dims, keepdim, True), x, out)
        return (sgn * _scale_by_count(ns, g, m, x.shape, dims, keepdim),)
    ne = expand_reduced(ns, out, x.shape, dims, keepdim)
    n0 = ns.data_fn(np.equal, ne, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if p == 2:
            return (ge * ns.where(n0, 0, x / ne),)
        if p < 1:
            scaled = sgn * ns.where(ns.data_fn(np.equal, x, 0), 0, ns.abs(x) ** (p - 1))
            return (scaled * ge * ne ** (1 - p),)
        scaled = sgn * ns.abs(x) ** (p - 1) if p < 2 else x * ns.abs(x) ** (p - 2)
        return (scaled * ns.where(n0, 0, ge / ne ** (p - 1)),)


NORM = _reduce_jvp(Op("linalg_vector_norm", _norm_fwd, _norm_vjp, saves=(0,), save_out=True))


def _norm_p(p):
    if p is None or p == "fro":
        return 2.0
    if isinstance(p, str):
        if p == "nuc":
            raise NotImplementedError("norm(p='nuc') needs the nuclear norm (an SVD), which "
                                      "ember does not have yet")
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")  # noqa: TRY004
    return float(p)


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, out=None,
         dtype=None) -> Tensor:
    """``torch.norm``: the vector p-norm over ``dim`` (all elements by default); ``'fro'`` is
    the 2-norm."""
    if out is not None:
        return with_out(norm, out, (input, p, dim, keepdim), {"dtype": dtype}, dtype="exact",
                        name="linalg_vector_norm")
    if isinstance(p, str) and p == "nuc":
        # PyTorch hands the nuclear norm to linalg.matrix_norm over ``dim`` (all dims if None)
        from .linalg_misc import matrix_norm
        d = list(range(input._data.ndim)) if dim is None else dim
        return matrix_norm(input, "nuc", d, keepdim, dtype=dtype)
    pv = _norm_p(p)
    if dtype is not None:
        input = input.to(dtype)
    if not _is_float(input):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_type_name(input.dtype)}")
    if isinstance(dim, (int, np.integer)):
        dim = (dim,)
    dims = dims_arg(dim, input._data.ndim)
    check_empty_norm(input, pv, dim)
    return apply(NORM, (input,), (dims, keepdim, pv))


def check_empty_norm(x: Tensor, p: float, dim) -> None:
    """PyTorch's refusal of a negative or infinite norm over an empty tensor or an empty reduced
    dim (named as given): those reductions have no identity."""
    if not (p < 0 or p == _INF) or x._data.size:
        return
    if dim is None or not isinstance(dim, int) and not len(dim):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on an empty tensor "
                           "because the operation does not have an identity")
    for d in (dim,) if isinstance(dim, int) else dim:
        if x._data.shape[d] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on the "
                               f"dimension {d}because this dimension is empty and the operation "
                               "does not have an identity")


# ---- all / any / count_nonzero ------------------------------------------------------------

def _logical(npf, input: Tensor, dim, keepdim: bool) -> Tensor:
    x = input._data
    if x.dtype.names is not None:   # complex32 pairs (ember._chalf): nonzero where a part is
        x = (x["real"] != 0) | (x["imag"] != 0)
    dims = dims_arg(dim, x.ndim)
    if dim is not None and not isinstance(dim, (int, np.integer)) and not len(dim):
        dims = ()   # PyTorch reduces nothing for an empty dim list here (unlike sum)
    r = npf(x, axis=dims, keepdims=keepdim)
    # a reduction's result is row-major in PyTorch (NumPy's keepdims follows the input)
    return _plain(_L.contiguous_np(np.asarray(r, np.uint8 if x.dtype == np.uint8 else np.bool_)))


def all(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    """``torch.all``: bool result (uint8 for uint8 input), never differentiable."""
    if out is not None:
        return with_out(all, out, (input, dim, keepdim), dtype=_logical_out("all"),
                        differentiable=False)
    return _logical(np.all, input, dim, keepdim)


def any(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    """``torch.any``."""
    if out is not None:
        return with_out(any, out, (input, dim, keepdim), dtype=_logical_out("any"),
                        differentiable=False)
    return _logical(np.any, input, dim, keepdim)


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """``torch.count_nonzero``: int64 counts over ``dim`` (int or tuple)."""
    dims = dims_arg(dim, input._data.ndim)
    return _plain(np.asarray(np.count_nonzero(input._data, axis=dims), np.int64))


# ---- cumsum / cumprod ---------------------------------------------------------------------

def _cum_axis(x, dim):
    return x.reshape(1) if x.ndim == 0 else x, (0 if x.ndim == 0 else dim)


@in_float32
def _cumsum_fwd(x, dim, npd):
    a, d = _cum_axis(x, dim)
    return np.cumsum(a, axis=d, dtype=npd).reshape(x.shape)


def _rev_cumsum(ns, g, dim):
    """sum_{k >= i} g_k along ``dim``, written with the forward scan so it differentiates."""
    return ns.sum_dims(g, (dim,), True) - ns.cumsum_dim(g, dim) + g


def _cumsum_vjp(ns, g, need, dim, npd):
    if g.ndim == 0:
        return (g,)
    if ns is NP and type(g) is np.ndarray and g.dtype in HALF_NP:
        # PyTorch's reversed cumsum, grad.flip(dim).cumsum(dim).flip(dim): float32 sums rounded
        # once each (the subtraction form below rounds differently in a half type)
        r = np.cumsum(np.flip(g, dim), axis=dim, dtype=np.float32)
        return (np.flip(r, dim).astype(g.dtype),)
    return (_rev_cumsum(ns, g, dim),)


CUMSUM = Op("cumsum", _cumsum_fwd, _cumsum_vjp, linear=True)
ns_fn("cumsum_dim", lambda g, dim: np.cumsum(g, axis=dim),
      lambda g, dim: apply(CUMSUM, (g,), (dim, g._data.dtype)))


@in_float32
def _cumprod_fwd(x, dim, npd):
    a, d = _cum_axis(x, dim)
    return np.cumprod(a, axis=d, dtype=npd).reshape(x.shape)


def _zero_masks(x, dim):
    """Positions before the first zero along ``dim``, and the first zero itself."""
    z = x == 0
    first = np.where(z.any(axis=dim, keepdims=True), np.argmax(z, axis=dim, keepdims=True),
                     x.shape[dim])
    pos = np.arange(x.shape[dim]).reshape((-1,) + (1,) * (x.ndim - dim - 1))
    return pos < first, pos == first


def _cumprod_vjp(ns, g, need, x, dim, npd):
    # before the first zero z: sum_{i<=k<z} g_k out_k / x_i; at z: sum_{k>=z} g_k prod_{j<=k,
    # j != z} x_j; after it: 0 (every product then holds x_z = 0 and another factor is gone).
    if x.ndim == 0 or not (x.numel() if isinstance(x, Tensor) else x.size):
        return (g,)   # (x is a tensor when the VJP is itself differentiated)
    if ns is NP and type(g) is np.ndarray and g.dtype in HALF_NP and g.dtype == x.dtype:
        # PyTorch's formula op by op, each op rounded to the half type (_opmath)
        return (g if x.shape[dim] == 1 else _OM.cumprod_bwd_half(g, x, dim),)
    before = ns.data_fn(lambda a: _zero_masks(a, dim)[0], x)
    at = ns.data_fn(lambda a: _zero_masks(a, dim)[1], x)
    c1 = ns.cumprod_dim(ns.where(at, 1, x), dim)
    gc = g * ns.conj(c1)
    a = _rev_cumsum(ns, ns.where(before, gc, 0), dim) / ns.conj(ns.where(before, x, 1))
    b = ns.sum_dims(ns.where(before, 0, gc), (dim,), True)
    return (ns.where(before, a, 0) + ns.where(at, b, 0),)


def _cumprod_vjp_result(ns, g, need, x, r, dim, npd):
    """cumprod's VJP as PyTorch's cumprod_backward: ``grad`` itself for at most one element
    along ``dim``; where the input has no zero, ``reversed_cumsum(grad * conj(result)) /
    conj(input)``, reading the saved result (so a double backward reaches the result too); with
    zeros, the zero-safe formula (which, like PyTorch's, does not read it)."""
    xa = x._data if isinstance(x, Tensor) else x
    if xa.size <= 1 or xa.shape[dim] == 1:
        return (g,)
    if ns is NP and type(g) is np.ndarray and g.dtype in HALF_NP:
        return _cumprod_vjp(ns, g, need, x, dim, npd)   # (PyTorch's half arithmetic, op by op)
    if type(xa) is np.ndarray and not (xa == 0).any():
        # (cumsum's VJP is the reversed cumsum, in float32 for half types as PyTorch's)
        return (_cumsum_vjp(ns, g * ns.conj(r), need, dim, None)[0] / ns.conj(x),)
    if ns is not NP and isinstance(x, Tensor):
        return (_cumprod_vjp_twice(g, x, dim),)
    return _cumprod_vjp(ns, g, need, x, dim, npd)


def _cumprod_vjp_twice(g: Tensor, x: Tensor, dim: int) -> Tensor:
    """PyTorch's O(n^2) cumprod_backward for a recorded (create_graph) backward with zeros in
    the input: ``grad_k = sum_{m >= k} g_m conj(prod_{j <= m, j != k} x_j)`` from products of
    slices, copied into a zero tensor slice by slice (CopySlices, as there), so that its
    derivative is the second derivative of cumprod (the masked O(n) formula drops the terms that
    are zero only through x_z = 0, and their derivatives)."""
    from .joining import cat
    n = x.shape[dim]
    shape = list(x.shape)
    shape[dim] = 1
    ones = _make(np.ones(shape, x._data.dtype), Version(), False, None)
    out = _make(np.zeros(x.shape, g._data.dtype), Version(), False, None)
    for k in range(n):
        before = x.narrow(dim, 0, k).prod(dim, keepdim=True) if k else ones
        if k == n - 1:
            omitted = before
        else:
            after = x.narrow(dim, k + 1, n - k - 1).cumprod(dim)
            omitted = cat([before, before * after], dim)
        out.select(dim, k).copy_((g.narrow(dim, k, n - k) * omitted.conj()).sum(dim))
    return out


def _cumprod_jvp(ns, tangents, primals, outs, dim, npd):
    x, t = primals[0], tangents[0]
    if x.ndim == 0 or not x._data.size:
        return t
    before = ns.data_fn(lambda a: _zero_masks(a, dim)[0], x)
    at = ns.data_fn(lambda a: _zero_masks(a, dim)[1], x)
    c1 = ns.cumprod_dim(ns.where(at, 1, x), dim)
    a = c1 * ns.cumsum_dim(ns.where(before, t / ns.where(before, x, 1), 0), dim)
    tz = ns.sum_dims(ns.where(at, t, 0), (dim,), True)
    return ns.where(before, a, tz * c1)


CUMPROD = Op("cumprod", _cumprod_fwd, _cumprod_vjp_result, _cumprod_jvp, saves=(0,),
             save_out=True)
ns_fn("cumprod_dim", lambda x, dim: np.cumprod(x, axis=dim),
      lambda x, dim: apply(CUMPROD, (x,), (dim, x._data.dtype)))


def _scan(op, input: Tensor, dim, dtype) -> Tensor:
    d = _wrap_dim(int(dim), input._data.ndim)
    return apply(op, (input,), (d, _acc_dtype(input, dtype)))


def cumsum(input: Tensor, dim: int, *, dtype=None, out=None) -> Tensor:
    """``torch.cumsum``: integers and bools accumulate in int64."""
    if out is not None:
        if out.dtype is D.bool and dtype in (None, D.bool):   # (else: the dtype check)
            _out_kernel_missing("cumsum_out_cpu", out)
        return with_out(cumsum, out, (input, dim), {"dtype": dtype}, dtype="as_out")
    return _scan(CUMSUM, input, dim, dtype)


def cumprod(input: Tensor, dim: int, *, dtype=None, out=None) -> Tensor:
    """``torch.cumprod``; zeros in the input get PyTorch's exact gradient."""
    if out is not None:
        if out.dtype is D.bool and dtype in (None, D.bool):   # (else: the dtype check)
            _out_kernel_missing("cumprod_out_cpu", out)
        return with_out(cumprod, out, (input, dim), {"dtype": dtype}, dtype="as_out")
    return _scan(CUMPROD, input, dim, dtype)


# ---- Tensor methods -----------------------------------------------------------------------

for _name, _fn in [("sum", sum), ("mean", mean), ("nansum", nansum), ("prod", prod),
                   ("max", max), ("min", min), ("amax", amax), ("amin", amin),
                   ("argmax", argmax), ("argmin", argmin), ("var", var), ("std", std),
                   ("logsumexp", logsumexp), ("norm", norm), ("all", all), ("any", any),
                   ("count_nonzero", count_nonzero), ("cumsum", cumsum), ("cumprod", cumprod)]:
    method(_name, _fn)


def _scan_(op):
    def f(self: Tensor, dim: int, *, dtype=None) -> Tensor:
        from ._dispatch import inplace
        d = _wrap_dim(int(dim), self._data.ndim)
        return inplace(op, self, (), (d, (dtype.np if dtype is not None else self._data.dtype)))
    return f


method("cumsum_", _scan_(CUMSUM))
method("cumprod_", _scan_(CUMPROD))
