"""Selection ops: sort / argsort / msort / topk, kthvalue / median / nanmedian / mode, the scans
cummax / cummin / logcumsumexp, and the non-differentiable unique / unique_consecutive /
bincount / histc / searchsorted / bucketize.

Every op that returns ``(values, indices)`` is one ``Op`` whose forward picks ``values`` out of
the input at an index array computed on the data (an op parameter). The VJP scatters the
gradient back into zeros at those indices (adding, so repeated indices of cummax accumulate) and
the JVP gathers the tangent, through the gather helpers of indexing.py, so double backward
records a graph. Ties are broken stably (first occurrence first).
"""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .. import _layout as _L
from .._tensor import Tensor, Version, _make, _wrap_dim
from ..autograd.grad_mode import STATE
from . import linalg as _linalg  # noqa: F401  (registers ns.squeeze / ns.unsqueeze)
from ._dispatch import _type_name
from ._out import with_out
from ._registry import Op, apply, method, wrap_outputs
from .indexing import _full_key
from .joining import flip as _flip  # noqa: F401  (registers ns.flip)
from .reduction import (
    _check_nonempty,
    _extreme_vjp,
    _reduce_jvp,
    _structseq,
    return_types,
    save_indices,
)

__all__ = [
    "argsort",
    "bincount",
    "bucketize",
    "cummax",
    "cummin",
    "histc",
    "kthvalue",
    "logcumsumexp",
    "median",
    "mode",
    "msort",
    "nanmedian",
    "searchsorted",
    "sort",
    "topk",
    "unique",
    "unique_consecutive",
]

for _n in ("sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin"):
    setattr(return_types, _n, _structseq(_n, ("values", "indices")))


def _plain(a) -> Tensor:
    t = _make(np.asarray(a), Version(), False, None)
    if STATE.inference:
        t._extra().inference = True
    return t


def _is_float(x: np.ndarray) -> bool:
    return x.dtype.kind in "fc" or x.dtype == D.bfloat16.np


# ---- the selecting ops ---------------------------------------------------------------------

def _sel_fwd(x, dim, idx, in_shape):
    """values at ``idx`` (same rank as ``x``) along ``dim``; indices as given."""
    return np.asarray(x[_full_key(idx, dim)]), idx


def _sel_vjp(ns, g, need, dim, idx, in_shape):
    return (ns.gather_backward(g[0], in_shape, dim, idx),)


def _sel_jvp(ns, tangents, primals, outs, dim, idx, in_shape):
    return (ns.gather_arr(tangents[0], dim, idx), None)


def _sel_op(name, node=None) -> Op:
    op = Op(name, _sel_fwd, _sel_vjp, _sel_jvp, n_out=2, diff_out=(0,), node=node)
    return save_indices(op, ("indices", "dim", None, "self_sym_sizes"))


def _cum_ext_vjp(ns, g, need, x, ind, *p):
    # PyTorch's cummaxmin_backward hands back the saved input itself when it is empty (with
    # create_graph the gradient is that tensor, requiring grad as it does)
    if (x.numel() if isinstance(x, Tensor) else x.size) == 0:
        return (x,)
    return _sel_vjp(ns, g, need, *p)


SORT = _sel_op("sort", "SortBackward0")
SORT_STABLE = _sel_op("sort_stable", "SortBackward1")
TOPK = _sel_op("topk")
CUMMAX = _sel_op("cummax")
CUMMIN = _sel_op("cummin")
for _op in (CUMMAX, CUMMIN):
    # PyTorch's cummax/cummin save self too (so changing it in place fails their backward)
    _op.saves = (0,)
    _op.vjp = _cum_ext_vjp
    _op.names = ("self", "indices", "dim", None, None)


def _red_fwd(x, dim, keepdim, idx, in_shape):
    """One value per slice along ``dim`` at ``idx`` (kept-dim shape)."""
    v = np.asarray(x[_full_key(idx, dim)])
    if not keepdim and x.ndim:
        return np.squeeze(v, dim), np.squeeze(idx, dim)
    return v, idx


def _red_vjp(ns, g, need, dim, keepdim, idx, in_shape):
    g = g[0]
    if not keepdim and len(in_shape):
        g = ns.unsqueeze(g, dim)
    return (ns.gather_backward(g, in_shape, dim, idx),)


def _red_jvp(ns, tangents, primals, outs, dim, keepdim, idx, in_shape):
    t = ns.gather_arr(tangents[0], dim, idx)
    if not keepdim and len(in_shape):
        t = ns.squeeze(t, dim)
    return (t, None)


def _red_op(name, node=None) -> Op:
    op = Op(name, _red_fwd, _red_vjp, _red_jvp, n_out=2, diff_out=(0,), node=node)
    return save_indices(op, ("indices", "dim", "keepdim", None, "self_sym_sizes"))


KTHVALUE = _red_op("kthvalue")
MEDIAN_DIM = _red_op("median_dim", "MedianBackward1")
NANMEDIAN_DIM = _red_op("nanmedian_dim", "NanmedianBackward1")
MODE = _red_op("mode")


def _run(op, input: Tensor, params: tuple, rt):
    out = op.fwd(input._data, *params)
    return rt(*wrap_outputs(op, (input,), params, out))


# ---- sort / argsort / msort / topk ---------------------------------------------------------

def _check_sortable(x: Tensor, kernel: str = "") -> None:
    """PyTorch's refusal of complex inputs: sort's (and topk's) sentence, or the kernel's
    missing dtype for the other selections."""
    if x.is_complex():
        if kernel == "topk":
            raise RuntimeError(" topk does not support complex dtypes on CPU")
        if kernel:
            from ._dispatch import _type_name
            raise NotImplementedError(
                f"\"{kernel}\" not implemented for '{_type_name(x.dtype)}'")
        raise RuntimeError(" Sort does not support complex dtypes on CPU")


def _no_bool(kernel: str, x: Tensor) -> None:
    if x._data.dtype == np.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _sort_idx(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Stable sorting indices along ``dim``; NaN is the largest value (last ascending, first
    descending), equal elements keep their order in both directions."""
    if x.ndim == 0:
        return np.zeros((), np.int64)
    if descending:
        n = x.shape[dim]
        i = np.argsort(np.flip(x, dim), axis=dim, kind="stable")
        return (n - 1 - np.flip(i, dim)).astype(np.int64)
    return np.argsort(x, axis=dim, kind="stable").astype(np.int64)


def _dim(input: Tensor, dim) -> int:
    return _wrap_dim(int(dim), input._data.ndim)


# PyTorch's messages for an out= of the wrong dtype (values, indices), in its checking order
_KTH_OUT = ("output values must be of same type as input",
            "output indices must be of scalar type Long")


def _tensor_type(d) -> str:
    """The type name PyTorch's checkScalarType prints (legacy names for the old dtypes)."""
    if d.name in ("bool", "bfloat16", "complex64", "complex128"):
        from ._dispatch import _type_name
        return f"CPU{_type_name(d)}Type"
    return "ember." + d._legacy


def _median_values_out(rd, od) -> None:
    raise RuntimeError(
        "Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; but "
        f"type {_tensor_type(od)} does not equal {_tensor_type(rd)} (while checking arguments "
        "for median)")


def _median_indices_out(rd, od) -> None:
    raise RuntimeError(
        "Expected tensor for argument #1 'indices' to have scalar type Long; but got "
        f"{_tensor_type(od)} instead (while checking arguments for median)")


_MEDIAN_OUT = {1: _median_indices_out, 0: _median_values_out}
_MODE_OUT = ("expected scalar type '{r}' but got '{o}' for values output",
             "expected scalar type '{r}' but got '{o}' for indices output")
_CUM_OUT = "expected scalar_type {r} but found {o}"
_HISTC_OUT = ("ember.histogram: input tensor and hist tensor should have the same dtype, but got "
              "input {rc} and hist {oc}")


def _searchsorted_out(out_int32: bool) -> str:
    return ("ember.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
            "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's "
            "dtype {o} and out_int32 flag is " + str(bool(out_int32)))


def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable=None, out=None):
    """``torch.sort``: ``(values, indices)``; ``stable=True`` gives SortBackward1 as in
    PyTorch (ties are always broken stably here)."""
    if out is not None:
        return with_out(sort, out, (input, dim, descending), {"stable": stable}, dtype="exact")
    if isinstance(dim, bool) and stable is None and not isinstance(descending, bool):
        stable, dim = dim, -1
    _check_sortable(input)
    d = _dim(input, dim)
    idx = _sort_idx(input._data, d, bool(descending))
    op = SORT if stable is None else SORT_STABLE
    return _run(op, input, (d, idx, input._data.shape), return_types.sort)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False, *,
            out=None):
    """``torch.argsort``: int64 indices that sort ``input`` along ``dim``."""
    if out is not None:
        return with_out(argsort, out, (input, dim, descending, stable), dtype="exact",
                        name="sort")
    _check_sortable(input)
    d = input._data
    return _plain(_L.like_input(d, _sort_idx(d, _dim(input, dim), bool(descending))))


def msort(input: Tensor, *, out=None) -> Tensor:
    """``torch.msort``: the values of ``sort`` along dim 0."""
    if out is not None:
        return with_out(msort, out, (input,), dtype="exact", name="sort")
    return sort(input, 0).values


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *,
         out=None):
    """``torch.topk``: the ``k`` largest (or smallest) along ``dim``, always in sorted order."""
    if out is not None:
        return with_out(topk, out, (input, k, dim, largest, sorted), dtype="exact")
    x = input._data
    d = _dim(input, dim)
    size = x.shape[d] if x.ndim else 1
    k = int(k)
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    _check_sortable(input, "topk")
    if x.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    idx = _sort_idx(x, d, bool(largest))
    if x.ndim:   # a 0-dim input gives itself for k 0 or 1, as PyTorch's kernel does
        idx = _topk_order(x, d, idx, k, bool(largest), bool(sorted))
    return _run(TOPK, input, (d, idx, x.shape), return_types.topk)


def _topk_order(x: np.ndarray, d: int, idx: np.ndarray, k: int, largest: bool,
                sorted_: bool) -> np.ndarray:
    """The first ``k`` of the sorting indices ``idx``, except where PyTorch's kernel leaves
    another order: rows with equal values among the chosen (which of them comes first), and
    unsorted results of its nth_element path; those rows replay its STL algorithms."""
    from ._stl_select import topk_row
    n = x.shape[d]
    first = np.ascontiguousarray(np.take(idx, np.arange(k), axis=d))
    if k == 0 or x.size == 0:
        return first
    if sorted_ or k * 64 <= n:
        s = np.take_along_axis(x, np.take(idx, np.arange(min(k + 1, n)), axis=d), axis=d)
        a, b = np.take(s, np.arange(1, s.shape[d]), axis=d), np.take(s, np.arange(
            s.shape[d] - 1), axis=d)
        tie = a == b
        if s.dtype.kind in "fc" or s.dtype == D.bfloat16.np:
            tie |= np.isnan(a) & np.isnan(b)
        rows = np.moveaxis(tie, d, -1).any(axis=-1).reshape(-1)
        if not rows.any():
            return first
    else:
        rows = np.ones(x.size // n, bool)
    xs = np.moveaxis(x, d, -1).reshape(-1, n)
    out = np.moveaxis(first, d, -1).reshape(-1, k).copy()
    vals = xs if xs.dtype.kind in "iub" else xs.astype(np.float64)
    for r in np.flatnonzero(rows):
        out[r] = topk_row(vals[r].tolist(), k, largest, sorted_)
    shape = list(np.moveaxis(first, d, -1).shape)
    return np.ascontiguousarray(np.moveaxis(out.reshape(shape), -1, d))


# ---- kthvalue / median / nanmedian / mode --------------------------------------------------

def _pick(sorted_idx: np.ndarray, dim: int, pos) -> np.ndarray:
    """``sorted_idx`` at position(s) ``pos`` along ``dim`` (kept as a size-1 dim)."""
    pos = np.asarray(pos, np.int64)
    if pos.ndim == 0:
        return np.take(sorted_idx, [int(pos)], axis=dim)
    return np.take_along_axis(sorted_idx, pos, axis=dim)


def _reduced(name, op, rt, input: Tensor, dim, keepdim, pick):
    x = input._data
    d = _dim(input, dim)
    if x.ndim == 0:
        return _run(op, input, (0, keepdim, np.zeros((), np.int64), ()), rt)
    _check_nonempty(name, input, (d,))
    idx = pick(x, d)
    return _run(op, input, (d, bool(keepdim), idx, x.shape), rt)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *, out=None):
    """``torch.kthvalue``: the k-th smallest element along ``dim`` (1-based)."""
    if out is not None:
        return with_out(kthvalue, out, (input, k, dim, keepdim), dtype=_KTH_OUT,
                        reduced_dim=None if keepdim else dim, overlap="full", inputs=(input,))
    x = input._data
    d = _dim(input, dim)
    if x.ndim and x.shape[d]:
        if not 1 <= k <= x.shape[d]:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    elif x.ndim == 0 and k != 1:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    _check_sortable(input, "kthvalue_cpu")
    _no_bool("kthvalue_cpu", input)
    return _reduced("kthvalue", KTHVALUE, return_types.kthvalue, input, dim, keepdim,
                    lambda a, d: _kth_ties(a, d, k, _pick(_sort_idx(a, d, False), d, k - 1)))


def _kth_ties(a, d, k, idx):
    # PyTorch's quickselect decides which of several equal values kthvalue returns
    from .misc_ops import kthvalue_indices
    return kthvalue_indices(a, d, k, idx)


def _median_pick(a, d):
    si = _sort_idx(a, d, False)
    idx = _pick(si, d, (a.shape[d] - 1) // 2)
    if _is_float(a):
        nan = np.isnan(a)
        has = nan.any(axis=d, keepdims=True)
        if has.any():
            idx = np.where(has, np.argmax(nan, axis=d, keepdims=True), idx)
    return idx


def _nanmedian_pick(a, d):
    si = _sort_idx(a, d, False)
    if not _is_float(a):
        return _pick(si, d, (a.shape[d] - 1) // 2)
    cnt = np.sum(~np.isnan(a), axis=d, keepdims=True)
    return _pick(si, d, np.maximum((cnt - 1) // 2, 0))


def _median_all(x, dims, keepdim):
    a = x.reshape(-1)
    if a.size == 0:
        return np.asarray(np.nan, x.dtype)
    if _is_float(a) and np.isnan(a).any():
        return np.asarray(np.nan, x.dtype)
    return np.asarray(np.sort(a)[(a.size - 1) // 2])


def _nanmedian_all(x, dims, keepdim):
    a = x.reshape(-1)
    if _is_float(a):
        a = a[~np.isnan(a)]
    if a.size == 0:
        return np.asarray(np.nan, x.dtype)
    return np.asarray(np.sort(a)[(a.size - 1) // 2])


# evenly_distribute_backward / evenly_read_jvp, as for the full max
MEDIAN = _reduce_jvp(Op("median", _median_all, _extreme_vjp(True), saves=(0,), save_out=True),
                     _extreme_vjp(False))
NANMEDIAN = _reduce_jvp(Op("nanmedian", _nanmedian_all, _extreme_vjp(True), saves=(0,),
                           save_out=True), _extreme_vjp(False))


def median(input: Tensor, dim=None, keepdim: bool = False, *, out=None):
    """``torch.median``: the lower median (NaN if the slice holds one); with ``dim`` a
    ``(values, indices)`` pair."""
    if out is not None:
        return with_out(median, out, (input, dim, keepdim), dtype=_MEDIAN_OUT)
    _check_sortable(input, "median_cpu")
    _no_bool("median_cpu" if dim is None else "median_out", input)
    if dim is None:
        return apply(MEDIAN, (input,), (None, False))
    return _reduced("median", MEDIAN_DIM, return_types.median, input, dim, keepdim,
                    _median_pick)


def nanmedian(input: Tensor, dim=None, keepdim: bool = False, *, out=None):
    """``torch.nanmedian``: the lower median of the non-NaN elements."""
    if out is not None:
        return with_out(nanmedian, out, (input, dim, keepdim), dtype=_MEDIAN_OUT)
    _check_sortable(input, "median_cpu")
    _no_bool("median_cpu" if dim is None else "median_out", input)
    if dim is None:
        return apply(NANMEDIAN, (input,), (None, False))
    return _reduced("median", NANMEDIAN_DIM, return_types.nanmedian, input, dim, keepdim,
                    _nanmedian_pick)


def _mode_pick(a, d):
    m = np.moveaxis(a, d, -1)
    rows = m.reshape(-1, m.shape[-1])
    out = np.empty(rows.shape[0], np.int64)
    for r, row in enumerate(rows):
        vals, counts = np.unique(row, return_counts=True)
        v = vals[int(np.argmax(counts))]
        out[r] = np.flatnonzero(row == v)[-1] if v == v else np.flatnonzero(row != row)[-1]
    return np.expand_dims(out.reshape(m.shape[:-1]), d)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out=None):
    """``torch.mode``: the most frequent value along ``dim`` (the smallest on ties) and the index
    of its last occurrence."""
    if out is not None:
        return with_out(mode, out, (input, dim, keepdim), dtype=_MODE_OUT,
                        reduced_dim=None if keepdim else dim)
    _check_sortable(input, "mode_cpu")
    return _reduced("mode", MODE, return_types.mode, input, dim, keepdim, _mode_pick)


# ---- cummax / cummin / logcumsumexp --------------------------------------------------------

def _cum_ext_idx(x: np.ndarray, dim: int, is_max: bool) -> np.ndarray:
    """PyTorch's scan: an element replaces the running extreme when it is NaN or, while the
    running value is not NaN, when it is >= (<=) it; the index is the latest such element."""
    xm = np.moveaxis(x, dim, 0)
    n = xm.shape[0]
    idx = np.empty(xm.shape, np.int64)
    if n == 0:
        return np.moveaxis(idx, 0, dim)
    cur = xm[0]
    ci = np.zeros(xm.shape[1:], np.int64)
    fl = _is_float(x)
    for i in range(n):
        xi = xm[i]
        upd = (xi >= cur) if is_max else (xi <= cur)
        if fl:
            upd = np.isnan(xi) | (~np.isnan(cur) & upd)
        cur = np.where(upd, xi, cur)
        ci = np.where(upd, i, ci)
        idx[i] = ci
    return np.moveaxis(idx, 0, dim)


def _cum_ext(name, op, rt, input: Tensor, dim):
    x = input._data
    d = _dim(input, dim)
    if x.dtype.kind == "c":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_type_name(input.dtype)}\'')
    idx = np.zeros((), np.int64) if x.ndim == 0 else _cum_ext_idx(x, d, name == "cummax")
    return _run(op, input, (d, idx, x.shape), rt)


def cummax(input: Tensor, dim: int, *, out=None):
    """``torch.cummax``: running maximum and the index where it was (last) attained."""
    if out is not None:
        return with_out(cummax, out, (input, dim), dtype=_CUM_OUT)
    return _cum_ext("cummax", CUMMAX, return_types.cummax, input, dim)


def cummin(input: Tensor, dim: int, *, out=None):
    """``torch.cummin``."""
    if out is not None:
        return with_out(cummin, out, (input, dim), dtype=_CUM_OUT)
    return _cum_ext("cummin", CUMMIN, return_types.cummin, input, dim)


def _lcse_np(x, dim):
    if x.ndim == 0:
        return x.copy()
    if x.dtype.kind == "c":
        return _lcse_complex(x, dim)
    return np.logaddexp.accumulate(x, axis=dim)


def _log_add_exp_complex(x, acc):
    # PyTorch's complex _log_add_exp_helper(x, acc): the operand with the larger real part
    # leads (acc on ties); NaN is infectious; equal infinite real parts are special-cased
    lead = x.real < acc.real
    mn, mx = np.where(lead, x, acc), np.where(lead, acc, x)
    out = np.log1p(np.exp(mn - mx)) + mx
    inf = ~np.isfinite(mn.real) & (mn.real == mx.real)
    out = np.where(inf, np.where(mn.real < 0, mn, np.log(np.exp(mn) + np.exp(mx))), out)
    nan = np.isnan(x) | np.isnan(acc)
    return np.where(nan, complex(np.nan, np.nan), out).astype(x.dtype)


def _lcse_complex(x, dim):
    # PyTorch's sequential scan from -inf (so the first element is kept as it is, its imaginary
    # part not wrapped)
    xs = np.moveaxis(x, dim, 0)
    out = np.empty_like(xs)
    acc = np.full(xs.shape[1:], -np.inf, x.dtype)
    with np.errstate(all="ignore"):
        for i in range(xs.shape[0]):
            acc = _log_add_exp_complex(xs[i], acc)
            out[i] = acc
    return np.moveaxis(out, 0, dim)


def _rev_lcse(ns, x, dim):
    return ns.flip(ns.logcumsumexp(ns.flip(x, (dim,)), dim), (dim,))


def _lcse_vjp(ns, g, need, x, out, dim):
    # PyTorch's logcumsumexp_backward: positive and negative parts of g in log space; a 0-dim
    # or empty g is handed back as it is (with create_graph: no history added)
    if x.ndim == 0 or not (g.numel() if isinstance(g, Tensor) else g.size):
        return (g,)
    if g.is_complex() if isinstance(g, Tensor) else g.dtype.kind == "c":
        # no sign split needed: the complex logarithm takes any grad
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            return (ns.conj(ns.exp(_rev_lcse(ns, ns.log(ns.conj(g)) - out, dim) + x)),)
    lo = float(np.finfo(x._data.dtype if isinstance(x, Tensor) else x.dtype).min)
    la = ns.log(ns.abs(g))
    pos = ns.where(ns.data_fn(np.greater, g, 0), la, lo)
    neg = ns.where(ns.data_fn(np.less, g, 0), la, lo)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return (ns.exp(_rev_lcse(ns, pos - out, dim) + x)
                - ns.exp(_rev_lcse(ns, neg - out, dim) + x),)


def _lcse_jvp(ns, tangents, primals, outs, dim):
    x, t = primals[0], tangents[0]
    if x.ndim == 0 or not (x.numel() if isinstance(x, Tensor) else x.size):
        # empty: the tangent is empty too (PyTorch's formula fails here, taking a max over
        # the empty dim)
        return t
    if x.is_complex() if isinstance(x, Tensor) else x.dtype.kind == "c":
        e = ns.exp(x)   # as PyTorch: no shift (there is no complex max)
        return ns.cumsum_dim(e * t, dim) / ns.cumsum_dim(e, dim)
    e = ns.exp(x - ns.data_fn(lambda a: np.max(a, axis=dim, keepdims=True), x))
    c = ns.cumsum_dim(e, dim)
    r = ns.where(ns.data_fn(lambda a: a < 1e-13, c), 0, ns.cumsum_dim(e * t, dim))
    return r / c


LOGCUMSUMEXP = Op("logcumsumexp", _lcse_np, _lcse_vjp, _lcse_jvp, saves=(0,), save_out=True)


def _ns_lcse(x, dim):
    return apply(LOGCUMSUMEXP, (x,), (dim,))


def logcumsumexp(input: Tensor, dim: int, *, out=None) -> Tensor:
    """``torch.logcumsumexp``: ``log(cumsum(exp(x)))`` computed stably."""
    if out is not None:
        return with_out(logcumsumexp, out, (input, dim), dtype=_CUM_OUT)
    if not _is_float(input._data):
        raise NotImplementedError(
            f'"logcumsumexp_out_cpu" not implemented for \'{_type_name(input.dtype)}\'')
    with np.errstate(invalid="ignore"):
        return apply(LOGCUMSUMEXP, (input,), (_dim(input, dim),))


def _register_ns():
    from ._registry import ns_fn
    ns_fn("logcumsumexp", _lcse_np, _ns_lcse)


_register_ns()


# ---- unique / unique_consecutive -----------------------------------------------------------

def _not_impl_vjp(aten):
    def vjp(ns, g, need, *params):
        raise NotImplementedError(f"the derivative for '{aten}' is not implemented.")
    return vjp


UNIQUE = Op("unique2", lambda x, *p: p[0], _not_impl_vjp("_unique2"), n_out=1)
UNIQUE_DIM = Op("unique_dim", lambda x, *p: p[0], _not_impl_vjp("unique_dim"), n_out=1)
UNIQUE_CONSEC = Op("unique_consecutive", lambda x, *p: p[0],
                   _not_impl_vjp("unique_consecutive"), n_out=1)


def _nondiff(op, input: Tensor, values: np.ndarray) -> Tensor:
    return wrap_outputs(op, (input,), (values,), np.ascontiguousarray(values))


def _result(values, inverse, counts, return_inverse, return_counts):
    res = (values,) + ((_plain(inverse),) if return_inverse else ()) + (
        (_plain(counts),) if return_counts else ())
    return res[0] if len(res) == 1 else res


def _no_chalf_unique(x, dim) -> None:
    if x.dtype.names is not None:   # complex32 pairs (ember._chalf): PyTorch has no kernel
        raise NotImplementedError(f"\"{'unique' if dim is None else 'unique_dim'}\" not "
                                  "implemented for 'ComplexHalf'")


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim=None):
    """``torch.unique``: always sorted (as PyTorch on CPU); a tuple when ``return_inverse`` or
    ``return_counts``."""
    x = input._data
    _no_chalf_unique(x, dim)
    if dim is None:
        v, inv, cnt = np.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        values = _nondiff(UNIQUE, input, v)
        return _result(values, inv.reshape(x.shape).astype(np.int64), cnt.astype(np.int64),
                       return_inverse, return_counts)
    d = _dim(input, dim)
    v, inv, cnt = np.unique(x, return_inverse=True, return_counts=True, axis=d)
    values = _nondiff(UNIQUE_DIM, input, v)
    return _result(values, inv.reshape(-1).astype(np.int64), cnt.astype(np.int64),
                   return_inverse, return_counts)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim=None):
    """``torch.unique_consecutive``: collapse runs of equal elements (or slices along ``dim``)."""
    x = input._data
    _no_chalf_unique(x, dim)
    if dim is None:
        a = x.reshape(-1)
        n = a.shape[0]
        change = a[1:] != a[:-1]
        shape_inv = x.shape
        d = 0
    else:
        d = _dim(input, dim)
        a = x
        n = a.shape[d]
        m = np.moveaxis(a, d, 0).reshape(n, -1)
        change = np.any(m[1:] != m[:-1], axis=1)
        shape_inv = (n,)
    if n == 0:
        starts = np.zeros(0, np.int64)
    else:
        starts = np.concatenate([[0], np.flatnonzero(change) + 1]).astype(np.int64)
    v = np.take(a, starts, axis=d)
    inv = (np.cumsum(np.concatenate([[0], change.astype(np.int64)])) if n
           else np.zeros(0, np.int64))
    cnt = np.diff(np.concatenate([starts, [n]])).astype(np.int64)
    values = _nondiff(UNIQUE_CONSEC, input, v)
    return _result(values, inv.reshape(shape_inv).astype(np.int64), cnt, return_inverse,
                   return_counts)


# ---- bincount / histc ----------------------------------------------------------------------

def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """``torch.bincount``: counts (int64), or sums of ``weights`` (float64 unless the weights
    are float32/float64)."""
    x = input._data
    if x.dtype.kind not in "iub" or x.dtype == np.bool_:
        raise NotImplementedError(
            f'"bincount_cpu" not implemented for \'{_type_name(input.dtype)}\'')
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _plain(np.bincount(x, minlength=minlength).astype(np.int64))
    w = weights._data
    if w.ndim != 1 or w.shape[0] != x.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    npd = w.dtype if w.dtype in (np.dtype(np.float32), np.dtype(np.float64)) else np.float64
    return _plain(np.bincount(x, w.astype(np.float64), minlength=minlength).astype(npd))


def histc(input: Tensor, bins: int = 100, min=0, max=0, *, out=None) -> Tensor:
    """``torch.histc``: ``bins`` equal-width bins over [min, max] (the data's range when both
    are equal); elements outside are ignored."""
    if out is not None:
        return with_out(histc, out, (input, bins, min, max), differentiable=False,
                        dtype=_HISTC_OUT)
    x = input._data
    if not _is_float(x) or x.dtype.kind == "c":
        raise NotImplementedError(
            f'"histogram_cpu" not implemented for \'{_type_name(input.dtype)}\'')
    if bins <= 0:
        raise RuntimeError(f"ember.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("ember.histc: max must be larger than min")
    if lo == hi and x.size:
        fin = x[np.isfinite(x)]
        if fin.size:
            lo, hi = float(fin.min()), float(fin.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    a = x.reshape(-1)
    a = a[(a >= lo) & (a <= hi)]
    edges = np.linspace(lo, hi, bins + 1).astype(x.dtype)
    pos = np.searchsorted(edges, a, side="right") - 1
    pos = np.clip(pos, 0, bins - 1)
    return _plain(np.bincount(pos, minlength=bins).astype(x.dtype))


# ---- searchsorted / bucketize --------------------------------------------------------------

def _as_values(v):
    if isinstance(v, Tensor):
        return v._data, False
    return np.asarray(v), True


def _no_complex_kernel(boundaries: Tensor, input, vals) -> None:
    """PyTorch's searchsorted kernel has no complex types: the common type of the boundaries
    and the values (a Python number counting as a wrapped scalar) refuses, once there are
    values to place."""
    if not vals.size:
        return
    ct = (D.promote_types(boundaries.dtype, input.dtype) if isinstance(input, Tensor)
          else D.result_type(boundaries, input))
    if ct.is_complex:
        raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for "
                                  f"'{_type_name(ct)}'")


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False,
                 side=None, sorter=None, out=None) -> Tensor:
    """``torch.searchsorted``: insertion points of ``input`` into the innermost dim of
    ``sorted_sequence`` (1-D, or matching ``input``'s leading dims)."""
    if out is not None:
        return with_out(searchsorted, out, (sorted_sequence, input), {"out_int32": out_int32,
                        "right": right, "side": side, "sorter": sorter},
                        differentiable=False,
                        dtype=_searchsorted_out(out_int32))
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError("ember.searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if side == "left" and right:
            raise RuntimeError("ember.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    vals, scalar = _as_values(input)
    if sorter is not None:
        s = sorter._data
        if s.shape != seq.shape:
            raise RuntimeError("ember.searchsorted(): boundary and sorter must have the same size, "
                               f"but got boundary tensor {list(seq.shape)}and got sorter tensor "
                               f"{list(s.shape)}")
        seq = np.take_along_axis(seq, s, axis=-1)
    if seq.ndim == 0:
        raise RuntimeError("ember.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    sd = "right" if right else "left"
    npd = np.int32 if out_int32 else np.int64
    if seq.ndim == 1:
        _no_complex_kernel(sorted_sequence, input, vals)
        return _plain(np.asarray(np.searchsorted(seq, vals, side=sd), npd))
    if scalar or vals.shape[:-1] != seq.shape[:-1]:
        raise RuntimeError(
            "ember.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(vals.shape)}")
    _no_complex_kernel(sorted_sequence, input, vals)
    s2 = seq.reshape(-1, seq.shape[-1])
    v2 = vals.reshape(-1, vals.shape[-1])
    r = np.stack([np.searchsorted(a, b, side=sd) for a, b in zip(s2, v2)]) if len(s2) else v2
    return _plain(np.asarray(r, npd).reshape(vals.shape))


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False,
              out=None) -> Tensor:
    """``torch.bucketize``: the bucket of each element among 1-D ``boundaries``."""
    if out is not None:
        return with_out(bucketize, out, (input, boundaries), {"out_int32": out_int32,
                        "right": right},
                        differentiable=False,
                        dtype=_searchsorted_out(out_int32))
    b = boundaries._data
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    vals, _ = _as_values(input)
    npd = np.int32 if out_int32 else np.int64
    _no_complex_kernel(boundaries, input, vals)
    return _plain(np.asarray(np.searchsorted(b, vals, side="right" if right else "left"), npd))


# ---- Tensor methods ------------------------------------------------------------------------

def _unique_method(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return unique(self, sorted, return_inverse, return_counts, dim)


for _name, _fn in [("sort", sort), ("argsort", argsort), ("msort", msort), ("topk", topk),
                   ("kthvalue", kthvalue), ("median", median), ("nanmedian", nanmedian),
                   ("mode", mode), ("cummax", cummax), ("cummin", cummin),
                   ("logcumsumexp", logcumsumexp), ("unique", _unique_method),
                   ("unique_consecutive", unique_consecutive), ("bincount", bincount),
                   ("histc", histc)]:
    method(_name, _fn)

