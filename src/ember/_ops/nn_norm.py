"""``nn.functional`` normalisation: batch_norm, instance_norm, layer_norm, group_norm, rms_norm,
local_response_norm and normalize.

batch, layer and group norm are one computation on a *work* view of the input: statistics
(mean, inverse std) over some axes of it, an affine weight and bias broadcast over others. A
``_Layout`` says which; one forward, one VJP and one JVP serve the three ops, which differ only
in their node names (``NativeBatchNormBackward0``, ``NativeLayerNormBackward0``,
``NativeGroupNormBackward0``). The forward keeps only the statistics (PyTorch's saved mean and
rstd, in a ``_Stats`` the node holds), never a normalised copy; the VJP rebuilds ``xhat`` from
them and applies the closed form

    gx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)),   gh = g * weight

(``gx = rstd * gh`` with running statistics; for batch norm, whose weight is constant over the
statistic axes, the two sums are the bias' and weight's gradients, computed once). Under
``create_graph`` the statistics are recomputed from the input with ember ops
(``ns.norm_stats``), so double backward sees their dependence on the input. Half types compute
in float32, as PyTorch's CPU kernels. Running statistics are updated in place without a version
bump, as PyTorch's kernel writes them.

instance_norm is batch_norm over a ``(1, N*C, ...)`` view, local_response_norm and normalize are
composites of ember ops, as in PyTorch, so their graphs end in PyTorch's node names.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype as D
from .._layout import is_dense
from .._meta import MetaArray, meta_like
from .._tensor import Tensor, Version, _make
from ..autograd.grad_mode import STATE
from . import _opmath as _OM
from ._dispatch import _cast_result, _type_name
from ._registry import EM, NP, Op, apply, ns_fn

__all__ = [
    "batch_norm",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "local_response_norm",
    "normalize",
    "rms_norm",
]

_HALF = ("float16", "bfloat16")


# ---- the shared computation ------------------------------------------------------------------

class _Layout:
    """How a norm sees its input: the ``work`` shape it is viewed in, the statistic ``axes``
    (kept as size 1), the shape ``wshape`` weight and bias broadcast in, the axes ``waxes`` their
    gradients sum over, their own shape ``pshape``, and whether the statistics come from the
    input (``train``) or were given (running statistics)."""

    __slots__ = ("in_shape", "work", "axes", "wshape", "waxes", "pshape", "train", "n", "cdt",
                 "odt")

    def __init__(self, in_shape, work, axes, wshape, waxes, pshape, train, cdt):
        self.in_shape = tuple(in_shape)
        self.work = tuple(work)
        self.axes = tuple(axes)
        self.wshape = tuple(wshape)
        self.waxes = tuple(waxes)
        self.pshape = tuple(pshape)
        self.train = train
        self.n = math.prod(self.work[a] for a in self.axes)
        self.cdt = cdt     # the computation dtype: float32 for half types
        self.odt = cdt     # rms_norm's result dtype (the weight's may promote it)

    def __repr__(self) -> str:
        return f"_Layout(work={self.work}, axes={self.axes})"


class _Stats:
    """What the forward computed for the backward: mean and rstd in the work layout (and the
    biased variance, for running-statistic updates)."""

    __slots__ = ("mean", "rstd", "var")

    def __init__(self, mean=None, rstd=None):
        self.mean = mean
        self.rstd = rstd
        self.var = None


def _sum_prod_np(a, b, axes, keepdim):
    """``sum(a * b)`` over ``axes`` without the product temporary (one einsum)."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.shape != b.shape:
        return np.sum(a * b, axis=axes, keepdims=keepdim)
    letters = "abcdefgh"[:a.ndim]
    outs = "".join(c for i, c in enumerate(letters) if i not in axes)
    r = np.einsum(f"{letters},{letters}->{outs}", a, b)
    return np.expand_dims(r, axes) if keepdim else r


def _axis_sum_np(x, axes, keepdim):
    """``sum(x)`` over axis 1 or 0 of a 2-D float array as a product with ones (float
    accumulation, like PyTorch's kernels): NumPy reduces short rows one at a time, several
    times slower. Long sums keep NumPy's pairwise summation, which is more accurate."""
    if type(x) is np.ndarray and x.ndim == 2 and x.dtype.kind == "f" and x.itemsize >= 4 and (
            x.shape[0] <= 8192 and x.shape[1] <= 8192):
        if axes == (1,):
            r = np.matmul(x, np.ones_like(x, shape=(x.shape[1], 1)))
            return r if keepdim else r.reshape(x.shape[0])
        if axes == (0,):
            r = np.matmul(np.ones_like(x, shape=(1, x.shape[0])), x)
            return r if keepdim else r.reshape(x.shape[1])
    return np.sum(x, axis=axes, keepdims=keepdim)


def _sum_prod_em(a, b, axes, keepdim):
    return (a * b).sum(axes, keepdim)


def _xhat_np(x, mean, rstd):
    t = x - mean
    t *= rstd
    return t


def _combine_np(gh, a, xhat, c, rstd):
    """``(gh - a - xhat * c) * rstd`` with one temporary (``a`` may be None)."""
    out = xhat * c
    if type(out) is not np.ndarray or out.shape != np.shape(gh):
        out = gh - out
    else:
        np.subtract(gh, out, out=out)
    if a is not None:
        out -= a
    out *= rstd
    return out


def _combine_em(gh, a, xhat, c, rstd):
    d = gh - xhat * c
    return (d if a is None else d - a) * rstd


def _stats_np(xw, lay, eps, st):
    return st.mean, st.rstd


def _stats_em(xw, lay, eps, st):
    if not lay.train:
        return _const(st.mean), _const(st.rstd)
    mean = xw.mean(lay.axes, True)
    var = ((xw - mean) * (xw - mean)).mean(lay.axes, True)
    return mean, (var + eps).rsqrt()


def _const(a) -> Tensor:
    return _make(a, Version(), False, None)


def _cast_np(x, dt):
    return x if x.dtype == dt else x.astype(dt)


def _cast_em(x, dt):
    return x if x._data.dtype == dt else x.to(D._FROM_NP[np.dtype(dt)])


ns_fn("norm_sum_prod", _sum_prod_np, _sum_prod_em)
ns_fn("norm_sum", _axis_sum_np, lambda x, axes, keepdim: EM.sum_dims(x, axes, keepdim))
ns_fn("norm_xhat", _xhat_np, lambda x, mean, rstd: (x - mean) * rstd)
ns_fn("norm_combine", _combine_np, _combine_em)
ns_fn("norm_stats", _stats_np, _stats_em)
ns_fn("norm_cast", _cast_np, _cast_em)


_ONES: dict = {}


def _ones_col(d: int, dt) -> np.ndarray:
    """A cached read-only ``(d, 1)`` column of ones: row sums as one BLAS product."""
    key = (d, dt)
    o = _ONES.get(key)
    if o is None:
        o = np.ones((d, 1), dt)
        o.flags.writeable = False
        if len(_ONES) < 64:
            _ONES[key] = o
    return o


def _rows_fast(lay, *arrays) -> bool:
    """Whether the fused row-statistics path applies: a float32/float64 layer norm over the
    rows of a 2-D work view, on plain arrays of the computation dtype."""
    if not (lay.train and lay.axes == (1,) and lay.waxes == (0,) and len(lay.work) == 2
            and lay.work[1] > 0 and lay.cdt.kind == "f" and lay.cdt.itemsize >= 4):
        return False
    return all(a is None or (type(a) is np.ndarray and a.dtype == lay.cdt) for a in arrays)


def _ln_fwd_rows(x, w, b, lay, eps, st):
    """layer_norm's forward over rows in six passes: the row mean and centred second moment
    as BLAS products, then one scale and shift (PyTorch's two-pass CPU statistics)."""
    m, d = lay.work
    xw = x.reshape(m, d)
    mean = np.matmul(xw, _ones_col(d, lay.cdt))
    mean *= 1.0 / d
    y = np.subtract(xw, mean)
    var = np.matmul(y[:, None, :], y[:, :, None]).reshape(m, 1)
    var *= 1.0 / d
    rstd = var + eps
    np.sqrt(rstd, out=rstd)
    np.divide(1.0, rstd, out=rstd)
    st.mean, st.rstd, st.var = mean, rstd, var
    y *= rstd
    if w is not None:
        y *= w.reshape(d)
    if b is not None:
        y += b.reshape(d)
    return y.reshape(lay.in_shape)


def _ln_vjp_rows(g, need, x, w, lay, st):
    """layer_norm's VJP over rows: ``xhat`` rebuilt once, the two row sums as BLAS products,
    the input's gradient in one buffer."""
    m, d = lay.work
    xw = x.reshape(m, d)
    gw = g.reshape(m, d)
    mean, rstd = st.mean, st.rstd
    xhat = np.subtract(xw, mean)
    xhat *= rstd
    gx = g_w = g_b = None
    if need[0]:
        gh = gw * w.reshape(d) if w is not None else gw.copy()
        a = np.matmul(gh, _ones_col(d, lay.cdt))
        c = np.matmul(gh[:, None, :], xhat[:, :, None]).reshape(m, 1)
        a *= 1.0 / d
        c *= 1.0 / d
        # gx = rstd * (gh - a - xhat * c), with gh's buffer as the result
        gh -= a
        c = xhat * c
        gh -= c
        gh *= rstd
        gx = gh.reshape(lay.in_shape)
    if need[1]:
        ones = _ones_col(m, lay.cdt).reshape(1, m)
        xhat *= gw
        g_w = np.matmul(ones, xhat).reshape(lay.pshape)
    if need[2]:
        g_b = np.matmul(_ones_col(m, lay.cdt).reshape(1, m), gw).reshape(lay.pshape)
    return gx, g_w, g_b


def _norm_fwd(x, w, b, lay, eps, st):
    if type(x) is MetaArray:   # shape only (meta temporaries are read-only)
        return meta_like(lay.in_shape, x.dtype)
    if _rows_fast(lay, x, w, b) and x.flags.c_contiguous:
        return _ln_fwd_rows(x, w, b, lay, eps, st)
    if x.dtype.name in _HALF and lay.train and lay.axes == (1,) and lay.waxes == (0,) and \
            len(lay.work) == 2 and min(lay.work) > 0 and type(x) is np.ndarray and all(
                a is None or (type(a) is np.ndarray and a.dtype in (x.dtype, np.float32))
                for a in (w, b)):
        # a half-type layer norm: PyTorch's Welford moments and fused scale-shift (_opmath)
        y, st.mean, st.rstd = _OM.layer_norm_fwd_half(x.reshape(lay.work), w, b, eps)
        st.var = None
        return y.reshape(lay.in_shape)
    xw = x.reshape(lay.work)
    if xw.dtype != lay.cdt:
        xw = xw.astype(lay.cdt)
    if lay.train:
        mean = _axis_sum_np(xw, lay.axes, True)
        mean *= 1.0 / lay.n if lay.n else math.nan
        y = xw - mean
        var = _sum_prod_np(y, y, lay.axes, True)
        var *= 1.0 / lay.n if lay.n else math.nan
        rstd = 1.0 / np.sqrt(var + eps)
        st.mean, st.rstd, st.var = mean, rstd, var
        y *= rstd
        if w is not None:
            y *= _cast_np(w, lay.cdt).reshape(lay.wshape)
        if b is not None:
            y += _cast_np(b, lay.cdt).reshape(lay.wshape)
    else:
        # running statistics: one scale and one shift per channel
        scale = st.rstd if w is None else st.rstd * _cast_np(w, lay.cdt).reshape(lay.wshape)
        shift = -st.mean * scale
        if b is not None:
            shift += _cast_np(b, lay.cdt).reshape(lay.wshape)
        y = xw * scale
        y += shift
    return y.reshape(lay.in_shape).astype(x.dtype, copy=False)


def _norm_vjp(ns, g, need, x, w, lay, eps, st):
    if ns is NP and lay.cdt is not x.dtype and type(x) is np.ndarray and \
            x.dtype.name in _HALF and need[0] and st.rstd is not None and lay.train and \
            lay.axes == (1,) and lay.waxes == (0,) and len(lay.work) == 2 and \
            type(g) is np.ndarray and g.dtype == x.dtype and g.shape == x.shape and \
            (w is None or (type(w) is np.ndarray and w.dtype == x.dtype)):
        # a half-type layer norm: PyTorch's kernel with its half-typed mean and rstd (_opmath)
        gx = _OM.layer_norm_bwd_half(g.reshape(lay.work), x.reshape(lay.work), w, st.mean,
                                     st.rstd)
        rest = _norm_vjp(ns, g, (False,) + tuple(need[1:]), x, w, lay, eps, st)
        return (gx.reshape(lay.in_shape),) + tuple(rest[1:])
    if ns is NP and st.rstd is not None and _rows_fast(lay, g, x, w) and g.shape == x.shape:
        return _ln_vjp_rows(g, need, x, w, lay, st)
    xw = ns.norm_cast(x.reshape(lay.work), lay.cdt)
    gw = ns.norm_cast(g.reshape(lay.work), lay.cdt)
    mean, rstd = ns.norm_stats(xw, lay, eps, st)
    wr = None if w is None else ns.norm_cast(w, lay.cdt).reshape(lay.wshape)
    if not lay.train:
        # running statistics: xhat only for the weight's gradient, one scale for the input's
        xhat = ns.norm_xhat(xw, mean, rstd) if need[1] else None
        gx = gw * (rstd if wr is None else rstd * wr) if need[0] else None
        return _param_grads(ns, gx, gw, xhat, need, lay)
    xhat = ns.norm_xhat(xw, mean, rstd)
    if lay.axes == lay.waxes:
        # batch norm: the weight is constant over the statistic axes, so the sums the input's
        # gradient needs are the bias' and the weight's gradients
        sg = ns.sum_dims(gw, lay.axes, True)
        sgx = ns.norm_sum_prod(gw, xhat, lay.axes, True)
        gx = None
        if need[0]:
            k = 1.0 / lay.n if lay.n else math.nan
            gx = ns.norm_combine(gw, sg * k, xhat, sgx * k,
                                 rstd if wr is None else rstd * wr).reshape(lay.in_shape)
        return (gx, sgx.reshape(lay.pshape) if need[1] else None,
                sg.reshape(lay.pshape) if need[2] else None)
    gx = None
    if need[0]:
        gh = gw if wr is None else gw * wr
        k = 1.0 / lay.n if lay.n else math.nan
        a = ns.norm_sum(gh, lay.axes, True) * k
        c = ns.norm_sum_prod(gh, xhat, lay.axes, True) * k
        gx = ns.norm_combine(gh, a, xhat, c, rstd)
    return _param_grads(ns, gx, gw, xhat, need, lay)


def _inv(n: int) -> float:
    """1 / n, NaN for an empty normalised shape (its results are empty anyway)."""
    return 1.0 / n if n else math.nan


def _param_grads(ns, gx, gw, xhat, need, lay):
    """The input's gradient back in the input's shape, the weight's and bias' summed over the
    axes they broadcast along."""
    g_w = ns.norm_sum_prod(gw, xhat, lay.waxes, False).reshape(lay.pshape) if need[1] else None
    g_b = ns.norm_sum(gw, lay.waxes, False).reshape(lay.pshape) if need[2] else None
    return (None if gx is None else gx.reshape(lay.in_shape)), g_w, g_b


def _norm_jvp(ns, tangents, primals, outs, lay, eps, st):
    x, w = primals[0], primals[1]
    tx, tw, tb = tangents
    xw = ns.norm_cast(x.reshape(lay.work), lay.cdt)
    mean, rstd = ns.norm_stats(xw, lay, eps, st)
    xhat = ns.norm_xhat(xw, mean, rstd)
    r = xhat * 0
    if tx is not None:
        t = ns.norm_cast(tx.reshape(lay.work), lay.cdt)
        if lay.train:
            a = ns.norm_sum(t, lay.axes, True) * _inv(lay.n)
            c = ns.norm_sum_prod(t, xhat, lay.axes, True) * _inv(lay.n)
            t = ns.norm_combine(t, a, xhat, c, rstd)
        else:
            t = t * rstd
        r = t if w is None else t * ns.norm_cast(w, lay.cdt).reshape(lay.wshape)
    if tw is not None:
        r = r + xhat * ns.norm_cast(tw, lay.cdt).reshape(lay.wshape)
    if tb is not None:
        r = r + ns.norm_cast(tb, lay.cdt).reshape(lay.wshape)
    return r.reshape(lay.in_shape)


def _norm_op(name: str, node: str, names) -> Op:
    return Op(name, _norm_fwd, _norm_vjp, _norm_jvp, saves=(0, 1), node=node, names=names)


def _bn_fwd(x, w, b, rm, rv, lay, eps, st):
    return _norm_fwd(x, w, b, lay, eps, st)


def _bn_vjp(ns, g, need, x, w, rm, rv, lay, eps, st):
    return _norm_vjp(ns, g, need[:3], x, w, lay, eps, st) + (None, None)


def _bn_jvp(ns, tangents, primals, outs, lay, eps, st):
    if all(t is None for t in tangents[:3]):   # only running statistics are dual
        return None
    return _norm_jvp(ns, tangents[:3], primals[:3], outs, lay, eps, st)


# The running statistics are inputs (never differentiated) only to be saved, as PyTorch's node
# saves them in both modes: changing one in place before backward is its version error.
BATCH_NORM = Op("native_batch_norm", _bn_fwd, _bn_vjp, _bn_jvp, saves=(0, 1, 3, 4),
                node="NativeBatchNormBackward0",
                names=("input", "weight", "running_mean", "running_var", None, "eps", None))
def _ln_vjp(ns, g, need, x, w, b, lay, eps, st):
    return _norm_vjp(ns, g, need, x, w, lay, eps, st)


# the bias saved only for its version (PyTorch's NativeLayerNormBackward0 saves it: changing it
# in place before backward is the version error)
LAYER_NORM = Op("native_layer_norm", _norm_fwd, _ln_vjp, _norm_jvp, saves=(0, 1, 2),
                node="NativeLayerNormBackward0",
                names=("input", "weight", "bias", None, "eps", None))
GROUP_NORM = _norm_op("native_group_norm", "NativeGroupNormBackward0",
                      ("input", "weight", None, "eps", None))


# ---- checks shared by the norms ------------------------------------------------------------------

def _compute_dtype(t: Tensor):
    return np.dtype(np.float32) if t.dtype.name in _HALF else t._data.dtype


def _check_float(t: Tensor, kernel: str) -> None:
    if not t.is_floating_point():
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(t.dtype)}\'')


def _check_mixed(input: Tensor, *params) -> None:
    """PyTorch's CPU rule for parameter dtypes: the input's own dtype, or float32 parameters
    for a half-type input."""
    ps = [p for p in params if p is not None]
    if not ps:
        return
    if ps[0].dtype is not input.dtype:
        if any(p.dtype is not D.float32 for p in ps):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if input.dtype.name not in _HALF:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for p in ps:
        if p.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found "
                               f"{_type_name(p.dtype)}")


def _verify_batch_size(size) -> None:
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}")


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


# ---- batch_norm and instance_norm ----------------------------------------------------------

def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """``F.batch_norm``: normalise each channel (dim 1) over the batch and spatial dims. In
    training the batch statistics are used and the running ones (if given) move towards them
    with ``momentum`` (the variance unbiased), in place; in evaluation the running ones are used
    (``NativeBatchNormBackward0``)."""
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if not isinstance(momentum, (int, float)):
        raise TypeError(f"batch_norm(): argument 'momentum' (position 7) must be float, not "
                        f"{type(momentum).__name__}")
    if input.numel() == 0:
        # PyTorch's early return, before any check: a copy, times the weight's first element
        # and plus the bias' (so the graph reaches them; an IndexError when they are empty)
        out = input.clone()
        if weight is not None:
            out = out * weight.select(0, 0)
        if bias is not None:
            out = out + bias.select(0, 0)
        return out
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                       eps)


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    c = input.size(1)
    # PyTorch's order: the running statistics (required in evaluation), then weight and bias
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is None:
            if not training:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        elif t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    _check_running_no_grad(running_mean, running_var)   # (autograd's, before the kernel's)
    _check_float(input, "batch_norm")
    _check_mixed(input, weight, bias, running_mean, running_var)
    if not training:
        _check_running_no_tangent((input, weight, bias), (running_mean, running_var))
    shape = input.shape
    lay = _Layout(shape, (shape[0], c, math.prod(shape[2:])), (0, 2), (1, c, 1), (0, 2), (c,),
                  bool(training), _compute_dtype(input))
    st = _Stats()
    if not training:
        rm = running_mean._data.reshape(lay.wshape).astype(lay.cdt)
        rv = running_var._data.reshape(lay.wshape).astype(lay.cdt)
        st.mean, st.rstd = rm, 1.0 / np.sqrt(rv + eps)
    out = apply(BATCH_NORM, (input, weight, bias, running_mean, running_var),
                (lay, float(eps), st))
    if training and running_mean is not None and not input.is_meta:
        _update_running(running_mean, running_var, st, lay, momentum)
    return out


def _check_running_no_grad(*stats) -> None:
    if STATE.grad:
        for name, t in zip(("running_mean", "running_var"), stats):
            if t is not None and t.requires_grad:
                raise RuntimeError(
                    f"The function 'native_batch_norm' is not differentiable with respect to "
                    f"argument '{name}'. This input cannot have requires_grad True.")


def _check_running_no_tangent(ins, stats) -> None:
    """PyTorch's batch_norm JVP in evaluation mode (it runs when the input, weight or bias has
    a tangent) refuses running statistics that have one."""
    if STATE.fw_level < 0:
        return
    from ..autograd.forward_ad import fw_of
    if any(t is not None and fw_of(t) is not None for t in ins) and any(
            fw_of(t) is not None for t in stats):
        raise RuntimeError("batch_norm is not differentiable wrt running_mean and running_var, "
                           "they cannot have forward grad defined")


def _write(t: Tensor, value: np.ndarray, bump: bool) -> None:
    """Write statistics into a buffer in place, unrecorded; PyTorch's batch_norm kernel writes
    running statistics without a version bump, instance_norm copies them back with one."""
    np.copyto(t._data, value.reshape(t._data.shape), casting="unsafe")
    if bump:
        t._vc.v += 1


def _update_running(rm: Tensor, rv: Tensor, st: _Stats, lay: _Layout, momentum) -> None:
    n = lay.n
    unbiased = st.var * (n / (n - 1)) if n > 1 else st.var * math.inf
    m = float(momentum)
    _write(rm, rm._data * (1 - m) + st.mean.reshape(-1) * m, False)
    _write(rv, rv._data * (1 - m) + unbiased.reshape(-1) * m, False)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """``F.instance_norm``: batch_norm of each (sample, channel) over its spatial dims, run as
    PyTorch's: batch_norm on a ``(1, N*C, ...)`` view with repeated parameters, running
    statistics averaged over the batch (the result's node is ``ViewBackward0``)."""
    if use_input_stats:
        size = input.size()
        if math.prod(size[2:]) == 1:
            raise ValueError(
                f"Expected more than 1 spatial element when training, got input size {size}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    shape = tuple(input.shape)
    b, c = shape[0], shape[1]
    w = weight.repeat(b) if weight is not None else None
    bi = bias.repeat(b) if bias is not None else None
    rm = _const(np.tile(running_mean._data, b)) if running_mean is not None else None
    rv = _const(np.tile(running_var._data, b)) if running_var is not None else None
    x = input.contiguous().view((1, b * c) + shape[2:])
    if x.numel() == 0:
        out = x.clone()
    else:
        out = _batch_norm(x, rm, rv, w, bi, use_input_stats, momentum, eps)
    if running_mean is not None and use_input_stats and not input.is_meta:
        _write(running_mean, rm._data.reshape(b, c).mean(0), True)
        _write(running_var, rv._data.reshape(b, c).mean(0), True)
    return out.view(shape)


# ---- layer_norm and group_norm ------------------------------------------------------------------

def _check_normalized_shape(input: Tensor, normalized_shape, weight, bias, fn: str) -> tuple:
    if isinstance(normalized_shape, (int, np.integer)) or not all(
            isinstance(s, (int, np.integer)) for s in normalized_shape):
        raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    ns = tuple(int(s) for s in normalized_shape)
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {_shape_str(t.shape)} and normalized_shape"
                               f" = {_shape_str(ns)}")
    shape = tuple(input.shape)
    if len(shape) < len(ns) or shape[len(shape) - len(ns):] != ns:
        sep = ", " if fn == "layer_norm" else ""
        raise RuntimeError(f"Given normalized_shape={_shape_str(ns)}, expected input with shape "
                           f"[*{sep}{_shape_str(ns)[1:-1]}], but got input of size"
                           f"{_shape_str(shape)}")
    return ns


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """``F.layer_norm``: normalise over the trailing ``normalized_shape`` dims, then scale and
    shift elementwise (``NativeLayerNormBackward0``)."""
    ns = _check_normalized_shape(input, normalized_shape, weight, bias, "layer_norm")
    _check_float(input, "LayerNormKernelImpl")
    _check_mixed(input, weight, bias)
    shape = tuple(input.shape)
    d = math.prod(ns)
    m = math.prod(shape[:len(shape) - len(ns)])
    lay = _Layout(shape, (m, d), (1,), (1, d), (0,), ns, True, _compute_dtype(input))
    return apply(LAYER_NORM, (input, weight, bias), (lay, float(eps), _Stats()))


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """``F.group_norm``: normalise each sample over groups of channels and the spatial dims,
    then scale and shift per channel (``NativeGroupNormBackward0``)."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    shape = tuple(input.shape)
    n, c = shape[0], shape[1]
    _verify_batch_size([n * c // num_groups, num_groups] + list(shape[2:]))
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {_shape_str(shape)} and "
                           f"num_groups={num_groups}")
    if weight is not None and (weight.dim() != 1 or weight.numel() != c):
        raise RuntimeError(f"Expected weight to be a vector of size equal to the number of "
                           f"channels in input, but got weight of shape "
                           f"{_shape_str(weight.shape)} and input of shape {_shape_str(shape)}")
    if bias is not None and (bias.dim() != 1 or bias.numel() != c):
        # PyTorch's message shows the weight's shape here ([0] without a weight)
        ws = _shape_str(weight.shape) if weight is not None else "[0]"
        raise RuntimeError(f"Expected bias to be a vector of size equal to the number of "
                           f"channels in input, but got bias of shape {ws} and input of shape "
                           f"{_shape_str(shape)}")
    _check_float(input, "GroupNormKernelImpl")
    _check_mixed(input, weight, bias)
    g = num_groups
    s = math.prod(shape[2:])
    lay = _Layout(shape, (n, g, c // g, s), (2, 3), (1, g, c // g, 1), (0, 3), (c,), True,
                  _compute_dtype(input))
    # PyTorch's group_norm hands native_group_norm contiguous copies (CloneBackward0 nodes; the
    # copies, not the caller's tensors, are saved: later in-place ops on those are no error)
    from .._layout import suggest_format
    input = input.contiguous(memory_format=suggest_format(shape, input.stride()))
    weight = weight.contiguous() if weight is not None else None
    bias = bias.contiguous() if bias is not None else None
    return apply(GROUP_NORM, (input, weight, bias), (lay, float(eps), _Stats()))


# ---- rms_norm ------------------------------------------------------------------------------------

def _rms_fwd(x, w, lay, eps, st):
    if type(x) is MetaArray:
        return meta_like(lay.in_shape, lay.cdt if w is None else lay.odt)
    xw = x.reshape(lay.work)
    if xw.dtype != lay.cdt:
        xw = xw.astype(lay.cdt)
    ms = _sum_prod_np(xw, xw, lay.axes, True)
    ms *= 1.0 / lay.n if lay.n else math.nan
    ms += eps
    rstd = st.rstd = 1.0 / np.sqrt(ms)
    y = xw * rstd
    if w is not None:
        y = y.astype(lay.odt, copy=False)
        y *= w.astype(lay.odt, copy=False).reshape(lay.wshape)
    return y.reshape(lay.in_shape)


def _rms_stats_np(xw, lay, eps, st):
    return st.rstd


def _rms_stats_em(xw, lay, eps, st):
    return ((xw * xw).mean(lay.axes, True) + eps).rsqrt()


ns_fn("norm_rms_stats", _rms_stats_np, _rms_stats_em)


def _rms_vjp(ns, g, need, x, w, lay, eps, st):
    # y = x r w with r = (mean(x^2) + eps)^-1/2:  gx = r (gh - x r^2 mean(gh x)),  gh = g w
    xw = ns.norm_cast(x.reshape(lay.work), lay.cdt)
    gw = g.reshape(lay.work)
    rstd = ns.norm_rms_stats(xw, lay, eps, st)
    gx = g_w = None
    if need[1]:
        xhat = ns.norm_xhat(xw, 0, rstd)
        g_w = ns.norm_sum_prod(gw, xhat, lay.waxes, False).reshape(lay.pshape)
    if need[0]:
        gh = gw if w is None else gw * w.reshape(lay.wshape)
        c = ns.norm_sum_prod(gh, xw, lay.axes, True) * (rstd * rstd * _inv(lay.n))
        gx = ns.norm_combine(gh, None, xw, c, rstd).reshape(lay.in_shape)
    return gx, g_w


def _rms_jvp(ns, tangents, primals, outs, lay, eps, st):
    x, w = primals
    tx, tw = tangents
    xw = ns.norm_cast(x.reshape(lay.work), lay.cdt)
    rstd = ns.norm_rms_stats(xw, lay, eps, st)
    r = xw * 0
    if tx is not None:
        t = ns.norm_cast(tx.reshape(lay.work), lay.cdt)
        c = ns.norm_sum_prod(t, xw, lay.axes, True) * (rstd * rstd * _inv(lay.n))
        r = ns.norm_combine(t, None, xw, c, rstd)
        if w is not None:
            r = r * w.reshape(lay.wshape)
    if tw is not None:
        r = r + xw * rstd * tw.reshape(lay.wshape)
    return r.reshape(lay.in_shape)


# PyTorch's rms_norm is a composite ending in a multiplication
RMS_NORM = Op("rms_norm", _rms_fwd, _rms_vjp, _rms_jvp, saves=(0, 1), node="MulBackward0",
              names=("self", "other", None, "eps", None))


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """``F.rms_norm``: ``x / sqrt(mean(x^2) + eps) * weight`` over the trailing dims, computed
    in float32 for half types and cast back; ``eps=None`` is the computation dtype's machine
    epsilon, as PyTorch."""
    if not isinstance(normalized_shape, (int, np.integer)) and \
            input.dim() < len(normalized_shape):
        raise ValueError(f"Input tensor must have at least {len(normalized_shape)} dimensions, "
                         f"but got {input.dim()}")
    ns = _check_normalized_shape(input, normalized_shape, weight, None, "rms_norm")
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f'"rms_norm" not implemented for '
                                  f"'{_type_name(input.dtype)}'")
    cdt = _compute_dtype(input)
    if eps is None:
        eps = float(np.finfo(np.float64 if cdt in (np.float64, np.complex128)
                             else np.float32).eps)
    if input.is_complex():
        return _made_contiguous(input, _rms_norm_composite(input, ns, weight, eps))
    shape = tuple(input.shape)
    d = math.prod(ns)
    lay = _Layout(shape, (math.prod(shape[:len(shape) - len(ns)]), d), (1,), (1, d), (0,), ns,
                  True, cdt)
    if weight is not None:
        lay.odt = D.promote_types(D._FROM_NP[cdt], weight.dtype).np
    out = _made_contiguous(input, apply(RMS_NORM, (input, weight), (lay, float(eps), _Stats())))
    return out if out.dtype is input.dtype else out.to(input.dtype)


def _made_contiguous(input: Tensor, out: Tensor) -> Tensor:
    """PyTorch's rms_norm ends with ``.contiguous()`` on a result laid out like its input when
    that is dense but not contiguous (a permutation; a strided slice gives a row-major result):
    a copy whose node is CloneBackward0 (ember's result is already row-major, so the clone is
    only made where a graph can see it)."""
    if input.is_contiguous() or not out.requires_grad:
        return out
    d = input._data
    if not is_dense(d.shape, tuple(st // d.itemsize for st in d.strides)):
        return out
    return out.clone() if out.is_contiguous() else out.contiguous()


def _rms_norm_composite(input, ns, weight, eps):
    dims = tuple(range(input.dim() - len(ns), input.dim()))
    r = input.mul(input.pow(2).mean(dims, keepdim=True).add(eps).rsqrt())
    return r if weight is None else r.mul(weight)


# ---- local_response_norm -------------------------------------------------------------------

def _window_fwd(x, size, before, after):
    """Sum over channels ``c - before .. c + after`` (zero padded) divided by ``size``."""
    if type(x) is MetaArray:
        return meta_like(x.shape, x.dtype)
    c = x.shape[1]
    out = np.zeros_like(x)
    for j in range(-before, after + 1):
        lo, hi = max(0, -j), min(c, c - j)
        if lo < hi:
            out[:, lo:hi] += x[:, lo + j:hi + j]
    out /= size
    return out


def _window_vjp(ns, g, need, size, before, after):
    return (ns.norm_window(g, size, after, before),)


WINDOW = Op("channel_window_mean", _window_fwd, _window_vjp, linear=True,
            node="AvgPool3DBackward0")
ns_fn("norm_window", _window_fwd, lambda g, *p: apply(WINDOW, (g,), p))


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """``F.local_response_norm``: ``x / (k + alpha * mean of x^2 over size channels) ** beta``,
    composed as PyTorch's (``DivBackward0``)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = apply(WINDOW, (input.mul(input),), (size, size // 2, (size - 1) // 2))
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


# ---- normalize ----------------------------------------------------------------------------------

def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """``F.normalize``: ``input / max(||input||_p, eps)`` along ``dim``; ``out=`` is written
    (and not differentiable), as PyTorch's."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    if STATE.grad and (input.requires_grad or out.requires_grad):
        raise RuntimeError("div(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    return _write_out(out, input / denom)


def _write_out(out: Tensor, r: Tensor) -> Tensor:
    """PyTorch's ``out=`` semantics: cast to ``out``'s dtype (refusing a lossy category), and
    resize an ``out`` of another shape (warning when it had elements)."""
    data = _cast_result(out, r._data, r._data.dtype)
    if tuple(out.shape) != tuple(r.shape):
        if out.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{_shape_str(out.shape)}, which does not match the required output shape "
                f"{_shape_str(r.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).", stacklevel=3)
        out._data = data.copy()
    else:
        np.copyto(out._data, data, casting="unsafe")
    out._vc.v += 1
    return out
