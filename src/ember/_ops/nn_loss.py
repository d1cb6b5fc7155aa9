"""The loss functions of ``torch.nn.functional``.

Losses that PyTorch differentiates by hand (nll_loss, binary_cross_entropy and its logits form,
mse, smooth_l1, huber, soft_margin, multi_margin, multilabel_margin, ctc) are single Ops: a
forward on arrays, one VJP written with ``ns`` helpers (so the same text runs on the fast path
and, under ``create_graph``, records a differentiable graph), and a JVP. The losses PyTorch builds
from other operators (cross_entropy, kl_div, l1, poisson/gaussian nll, the margin and embedding
losses, triplet losses) are built here from ember ops in PyTorch's order, so the ``grad_fn`` a
user sees is PyTorch's and every derivative comes from those ops.

PyTorch has no derivative of ctc's backward: ember records a node that raises PyTorch's error
for it. Where PyTorch has no forward-mode rule (ctc, multi_margin, multilabel_margin) ember has
one, and multi_margin and multilabel_margin also have double backward, which PyTorch lacks.
"""
from __future__ import annotations

import math
import sys
import warnings

import numpy as np

from .. import _dtype as D
from .._meta import MetaArray
from .._tensor import Tensor
from ..autograd.grad_mode import STATE, no_grad
from ._dispatch import _type_name, broadcast_failed, check_broadcast
from ._registry import EM, Op, apply, ns_fn
from .activation import log_softmax
from .creation import ones_like, tensor, zeros, zeros_like
from .matrix import broadcast_shapes, broadcast_tensors
from .pointwise import _sigmoid_np, log1p, sigmoid
from .pointwise_more import minimum, where
from .reduction import SCATTER, norm
from .special import xlogy

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "cross_entropy",
    "ctc_loss",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "margin_ranking_loss",
    "mse_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "nll_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]

_NEG_INF = -math.inf
# PyTorch's Loss.cpp constant is a C float: 1e-12 rounded to single precision
_EPSILON = float(np.float32(1e-12))


# ---- arguments: reduction, legacy flags, warnings ---------------------------------------

def _stacklevel() -> int:
    """The stacklevel that points a warning at the first frame outside ember."""
    level, f = 1, sys._getframe(1)
    while f is not None and f.f_globals.get("__name__", "").split(".")[0] == "ember":
        level += 1
        f = f.f_back
    return level


def _warn(msg: str) -> None:
    warnings.warn(msg, UserWarning, stacklevel=_stacklevel())


def _get_reduction(reduction: str) -> str:
    """``torch.nn._reduction.get_enum``: validate a reduction name."""
    if reduction == "elementwise_mean":
        _warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.")
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _legacy(size_average, reduce) -> str:
    """``legacy_get_string``: the reduction the deprecated flags ask for, with the warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    _warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' "
          "instead.")
    return ret


def _reduction_arg(size_average, reduce, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _legacy(size_average, reduce)
    return _get_reduction(reduction)


def _reduce(loss: Tensor, red: str) -> Tensor:
    """``apply_loss_reduction`` of ATen's composite losses."""
    if red == "mean":
        return loss.mean()
    if red == "sum":
        return loss.sum()
    return loss


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _check_nondiff(fname: str, arg: str, t) -> None:
    """PyTorch refuses, when recording, an input its formula has no derivative for."""
    if STATE.grad and isinstance(t, Tensor) and t.requires_grad:
        raise RuntimeError(
            f"The function '{fname}' is not differentiable with respect to argument '{arg}'. "
            "This input cannot have requires_grad True.")


def _not_impl(kernel: str, t: Tensor) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(t.dtype)}\'')


def _is_float(t: Tensor) -> bool:
    return t.is_floating_point()


def _check_dtype(expected: D.dtype, found: Tensor, fmt: str) -> None:
    if found.dtype is not expected:
        raise RuntimeError(fmt.format(exp=_type_name(expected), found=_type_name(found.dtype)))


_SCALAR_TYPE = "expected scalar type {exp} but found {found}"


def _size_warning(input: Tensor, target: Tensor) -> None:
    if target.shape != input.shape:
        _warn(f"Using a target size ({target.size()}) that is different to the input size "
              f"({input.size()}). This will likely lead to incorrect results due to "
              "broadcasting. Please ensure they have the same size.")


# ---- formula helpers shared by the VJPs ---------------------------------------------------

def _sigmoid_arr(x):
    # pointwise's kernel writes in place, which a 0-d input (a NumPy scalar) cannot take
    return _sigmoid_np(x) if np.ndim(x) else _sigmoid_np(np.reshape(x, 1)).reshape(())


def _sigmoid_em(x):
    return sigmoid(x) if x.dim() else sigmoid(x.reshape(1)).reshape(())


def _log_sigmoid_np(x):
    if _half(x.dtype):   # PyTorch computes half types in float32 and rounds once
        return _log_sigmoid_np(x.astype(np.float32)).astype(x.dtype)
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def _log_sigmoid_em(x):
    return x.clamp_max(0) - log1p((-x.abs()).exp())


ns_fn("loss_sigmoid", _sigmoid_arr, _sigmoid_em)
ns_fn("loss_clamp_min", np.maximum, lambda x, v: x.clamp_min(v))
ns_fn("loss_log_sigmoid", _log_sigmoid_np, _log_sigmoid_em)
# ``y`` kept connected to ``x`` with a zero derivative under create_graph, where PyTorch's
# double backward gives zeros rather than no gradient
ns_fn("loss_link", lambda y, x: y, lambda y, x: y + x * 0)


def _sum_np(a, axis=None):
    """A sum that accumulates half types in float32, as PyTorch's reductions do."""
    if _half(a.dtype):
        return np.sum(a, axis=axis, dtype=np.float32).astype(a.dtype)
    return np.sum(a, axis=axis)


def _half(dt) -> bool:
    return dt.itemsize == 2 and dt.kind == "f" or dt == D.bfloat16.np


def _sum_mean(v, red: str, n):
    """The sum, or the sum divided by ``n`` (an array: a total weight), accumulated in float32
    for half types and rounded once, as PyTorch's reductions do."""
    acc = v.sum(dtype=np.float32) if _half(v.dtype) else v.sum()
    if red == "mean":
        acc = acc / n if (not isinstance(n, int) or n) else acc * np.nan
    return np.asanyarray(acc).astype(v.dtype, copy=False)


def _reduce_np(loss, red: str, n: int):
    return loss if red == "none" else _sum_mean(loss, red, n)


def _scale(g, red: str, n):
    return g / n if red == "mean" else g


# ---- elementwise losses with their own derivatives ------------------------------------------

def _elementwise_op(name: str, node: str, elem, deriv, inputs: tuple, extra: tuple = (),
                    cast: bool = True, half_vjp=None) -> Op:
    """An Op computing ``reduce(elem(*inputs))``.

    ``deriv(ns, need, *inputs, *extra)`` gives each input's elementwise partial derivative
    (None where not needed); the VJP scales them by the cotangent and the JVP contracts them
    with the tangents, so the calculus of each loss is written once. Params are
    ``(reduction, numel, (compute dtype, result dtype), *extra)``: PyTorch computes in the
    promoted type and writes some losses into a tensor of the input's (or target's) type.
    ``inputs`` and ``extra`` name the saved inputs and the extra params (``_saved_<name>``).
    ``cast=False``: ``elem`` gets the inputs in their own dtypes and does its own promotion.
    ``half_vjp(g, need, red, n, *inputs)``: the backward kernel's own arithmetic for half
    arrays (PyTorch's fused loss backward kernels round as they go, not as the formula).
    """
    n_in = len(inputs)

    def fwd(*args):
        ins, (red, n, (npd, outd), *extra) = args[:n_in], args[n_in:]
        if cast:
            ins = [a.astype(npd, copy=False) if isinstance(a, np.ndarray) else a for a in ins]
        loss = np.asanyarray(elem(*ins, *extra)).astype(npd, copy=False)
        return _reduce_np(loss, red, n).astype(outd, copy=False)

    def vjp(ns, g, need, *args):
        ins, (red, n, _, *extra) = args[:n_in], args[n_in:]
        if half_vjp is not None and type(g) is np.ndarray and _half(g.dtype) and all(
                type(a) is np.ndarray and a.dtype == g.dtype for a in ins):
            return half_vjp(g, need, red, n, *ins)
        g = _scale(g, red, n)
        return tuple(None if d is None else g * d for d in deriv(ns, need, *ins, *extra))

    def jvp(ns, tangents, primals, outs, red, n, dts, *extra):
        need = tuple(t is not None for t in tangents)
        r = None
        for d, t in zip(deriv(ns, need, *primals, *extra), tangents):
            if d is not None and t is not None:
                r = d * t if r is None else r + d * t
        if red == "none" or r is None:   # None: only non-differentiable inputs had tangents
            return r
        s = ns.sum_dims(r, None, False)
        return s / n if red == "mean" else s

    return Op(name, fwd, vjp, jvp, saves=tuple(range(n_in)), node=node,
              names=inputs + ("reduction", None, None) + extra)


def _run_elementwise(op: Op, inputs, red: str, npd, *extra, out=None) -> Tensor:
    shapes = [t.shape for t in inputs if isinstance(t, Tensor)]
    try:
        n = int(np.prod(np.broadcast_shapes(*shapes)))
    except ValueError as ex:
        broadcast_failed(ex, *shapes)
        raise
    dts = (np.dtype(npd), np.dtype(npd if out is None else out))
    return apply(op, tuple(inputs), (red, n, dts, *extra))


def _mse_elem(x, t):
    d = x - t
    return d * d


def _mse_deriv(ns, need, x, t):
    d = (x - t) * 2
    return (d if need[0] else None, -d if need[1] else None)


def _mse_half_vjp(g, need, red, n, x, t):
    """mse_loss_backward's kernel on half arrays: ``alpha * (x - t) * grad`` in the half type,
    each product rounded, with alpha = 2 (or 2 / numel for a mean) rounded to it."""
    alpha = x.dtype.type(2.0 / n if red == "mean" else 2.0)
    # the target's gradient is the same kernel with the operands swapped
    return (alpha * (x - t) * g if need[0] else None,
            alpha * (t - x) * g if need[1] else None)


def _smooth_l1_elem(x, t, beta):
    z = np.abs(x - t)
    return np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)


def _smooth_l1_deriv(ns, need, x, t, beta):
    d = x - t
    dx = ns.where(ns.abs(d) < beta, d / beta, ns.sgn(d))
    return (dx if need[0] else None, -dx if need[1] else None)


def _huber_elem(x, t, delta):
    z = np.abs(x - t)
    return np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))


def _huber_deriv(ns, need, x, t, delta):
    d = x - t
    dx = ns.where(ns.abs(d) < delta, d, ns.sgn(d) * delta)
    return (dx if need[0] else None, -dx if need[1] else None)


def _soft_margin_elem(x, t):
    return np.log(1 + np.exp(-t * x))


def _soft_margin_deriv(ns, need, x, t):
    z = ns.exp(-t * x)
    return (-t * z / (z + 1) if need[0] else None, None)


def _bce_elem(x, t, w):
    if not isinstance(x, MetaArray) and not ((x >= 0) & (x <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = ((t - 1) * np.maximum(np.log(1 - x), -100) - t * np.maximum(np.log(x), -100))
    return loss if w is None else loss * w


def _bce_deriv(ns, need, x, t, w):
    dx = dt = None
    if need[0]:
        dx = (x - t) / ns.loss_clamp_min((1 - x) * x, _EPSILON)
        dx = dx if w is None else dx * w
    if need[1]:
        # PyTorch's binary_cross_entropy_target_backward: -logit(x)
        dt = -ns.log(x / (1 - x))
        dt = dt if w is None else dt * w
    return (dx, dt, None)


def _bce_logits_elem(x, t, w, pw):
    # PyTorch's in-place steps round to the input's dtype (log_sigmoid and its pos_weight
    # factor) and to the target's (everything after ``1 - target``)
    ls = _log_sigmoid_np(x)
    if pw is not None:
        ls = (ls * ((pw - 1) * t + 1)).astype(x.dtype, copy=False)
    loss = ((1 - t) * x).astype(t.dtype, copy=False) - ls
    return loss.astype(t.dtype, copy=False) if w is None else loss * w


def _bce_logits_deriv(ns, need, x, t, w, pw):
    dx = dt = None
    if need[0]:
        if pw is None:
            dx = ns.loss_sigmoid(x) - t
        else:
            pt = t * pw
            dx = (pt + 1 - t) * ns.loss_sigmoid(x) - pt
        dx = dx if w is None else dx * w
    if need[1]:
        if pw is None:
            dt = -x
        else:
            dt = ns.loss_log_sigmoid(-x) - ns.loss_log_sigmoid(x) * pw
        dt = dt if w is None else dt * w
    return (dx, dt, None, None)


_XT = ("self", "target")
MSE_LOSS = _elementwise_op("mse_loss", "MseLossBackward0", _mse_elem, _mse_deriv, _XT,
                           half_vjp=_mse_half_vjp)
SMOOTH_L1_LOSS = _elementwise_op("smooth_l1_loss", "SmoothL1LossBackward0", _smooth_l1_elem,
                                 _smooth_l1_deriv, _XT, ("beta",))
HUBER_LOSS = _elementwise_op("huber_loss", "HuberLossBackward0", _huber_elem, _huber_deriv, _XT,
                             ("delta",))
SOFT_MARGIN_LOSS = _elementwise_op("soft_margin_loss", "SoftMarginLossBackward0",
                                   _soft_margin_elem, _soft_margin_deriv, _XT)
BCE = _elementwise_op("binary_cross_entropy", "BinaryCrossEntropyBackward0", _bce_elem,
                      _bce_deriv, _XT + ("weight",))
BCE_LOGITS = _elementwise_op("binary_cross_entropy_with_logits",
                             "BinaryCrossEntropyWithLogitsBackward0", _bce_logits_elem,
                             _bce_logits_deriv, _XT + ("weight", "pos_weight"), cast=False)


def _cast_error(rt: D.dtype, out: D.dtype) -> RuntimeError:
    return RuntimeError(f"result type {_type_name(rt)} can't be cast to the desired output "
                        f"type {_type_name(out)}")


def _regression(op: Op, kernel: str, input: Tensor, target: Tensor, red: str, *extra,
                into_input: bool = False) -> Tensor:
    """mse / smooth_l1 / huber on operands PyTorch has already broadcast; ``into_input``: the
    result has the input's dtype (PyTorch's huber writes into ``empty_like(input)``)."""
    rt = D.result_type_of((input, target))
    if not rt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(rt)}\'')
    out = None
    if into_input:
        if not _is_float(input):
            raise _cast_error(rt, input.dtype)
        out = input._data.dtype
    return _run_elementwise(op, (input, target), red, rt.np, *extra, out=out)


def _weighted(loss: Tensor, weight: Tensor, reduction: str, mean_by_weight: bool) -> Tensor:
    """The weighted branch PyTorch's Python code runs for mse / l1 / huber ``weight=``."""
    w = loss * weight
    if reduction == "none":
        return w
    if reduction == "sum":
        return w.sum()
    if reduction == "mean":
        return w.sum() / weight.sum() if mean_by_weight else w.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def _check_weight_size(weight: Tensor, input: Tensor) -> None:
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """``F.mse_loss``: mean squared error (MseLossBackward0); ``weight`` weighs each element
    and then 'mean' divides by the sum of the weights, as in PyTorch."""
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    x, t = broadcast_tensors(input, target)
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted((x - t) ** 2, weight, reduction, True)
    return _regression(MSE_LOSS, "mse_cpu", x, t, _get_reduction(reduction))


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """``F.l1_loss``: mean absolute error, built as PyTorch builds it (``|x - y|`` reduced)."""
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    x, t = broadcast_tensors(input, target)
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted((x - t).abs(), weight, reduction, True)
    return _reduce((x - t).abs(), _get_reduction(reduction))


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``F.smooth_l1_loss``: squared below ``beta``, absolute above (SmoothL1LossBackward0);
    ``beta=0`` is l1_loss, as in PyTorch."""
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    x, t = broadcast_tensors(input, target)
    red = _get_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return _reduce((x - t).abs(), red)
    return _regression(SMOOTH_L1_LOSS, "smooth_l1_cpu", x, t, red, float(beta))


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``F.huber_loss``: squared below ``delta``, ``delta``-scaled absolute above
    (HuberLossBackward0); ``weight`` multiplies the unreduced loss."""
    _size_warning(input, target)
    x, t = broadcast_tensors(input, target)
    if weight is not None:
        _check_weight_size(weight, input)
    red = _get_reduction("none" if weight is not None else reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    loss = _regression(HUBER_LOSS, "huber_cpu", x, t, red, float(delta), into_input=True)
    return loss if weight is None else _weighted(loss, weight, reduction, False)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """``F.soft_margin_loss``: ``log(1 + exp(-y x))`` (SoftMarginLossBackward0)."""
    red = _reduction_arg(size_average, reduce, reduction)
    _check_nondiff("soft_margin_loss", "target", target)
    rt = D.result_type_of((input, target))
    if not _is_float(input):
        raise _cast_error(rt if rt.is_floating_point else D.get_default_dtype(), input.dtype)
    # computed in the promoted type, written into a tensor of the input's type
    return _run_elementwise(SOFT_MARGIN_LOSS, (input, target), red, rt.np,
                            out=input._data.dtype)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``F.binary_cross_entropy`` on probabilities, each log clamped at -100 as in PyTorch
    (BinaryCrossEntropyBackward0); differentiable in input and target."""
    red = _reduction_arg(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(broadcast_shapes(target.shape, weight.shape))
        _check_nondiff("binary_cross_entropy", "weight", weight)
    _check_dtype(input.dtype, target, "Found dtype {found} but expected {exp}")
    if not _is_float(input):
        raise _not_impl("binary_cross_entropy", input)
    return _run_elementwise(BCE, (input, target, weight), red, input._data.dtype)


def _check_into(out: Tensor, other: Tensor) -> None:
    """PyTorch's refusal of an in-place op whose operand would broadcast ``out`` larger."""
    shape = tuple(np.broadcast_shapes(out._data.shape, other._data.shape))
    if shape != out._data.shape:
        raise RuntimeError(f"output with shape {_shape_str(out._data.shape)} doesn't match the "
                           f"broadcast shape {_shape_str(shape)}")


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average=None,
                                     reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """``F.binary_cross_entropy_with_logits``: a sigmoid and binary cross entropy in one stable
    formula, ``pos_weight`` weighing the positive term (BinaryCrossEntropyWithLogitsBackward0).
    The result has the target's dtype, as PyTorch computes in place into ``1 - target``."""
    red = _reduction_arg(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    _check_nondiff("binary_cross_entropy_with_logits", "weight", weight)
    _check_nondiff("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    if target.dtype is D.bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead.")
    rt = D.result_type_of((input, target))
    if not _is_float(target):
        raise RuntimeError(f"result type {_type_name(rt)} can't be cast to the desired output "
                           f"type {_type_name(target.dtype)}")
    if pos_weight is not None:
        check_broadcast(pos_weight.shape, target.shape)
        _check_into(target, pos_weight)
    if weight is not None:
        check_broadcast(target.shape, weight.shape)
        _check_into(target, weight)
    return _run_elementwise(BCE_LOGITS, (input, target, weight, pos_weight), red, rt.np,
                            out=target._data.dtype)


# ---- nll_loss and cross_entropy ---------------------------------------------------------

def _pick(x, idx, axis, out_shape):
    """Each position's entry at its target class (the 2-D case by plain fancy indexing)."""
    if x.ndim == 2:
        return x[np.arange(x.shape[0], like=x), idx[:, 0]]
    return np.take_along_axis(x, idx, axis).reshape(out_shape)


def _put_np(v, like, idx, axis, out_shape):
    """Zeros like ``like`` holding ``v`` (broadcast to ``out_shape``) at the target classes."""
    z = np.zeros_like(like, dtype=np.result_type(v, like))
    if z.ndim == 2:
        z[np.arange(z.shape[0], like=z), idx[:, 0]] = v
    else:
        np.put_along_axis(z, idx, np.broadcast_to(v, out_shape).reshape(idx.shape), axis)
    return z


def _put_em(v, like, idx, axis, out_shape):
    if tuple(v.shape) != tuple(out_shape):
        v = v.expand(out_shape)
    if len(out_shape) < idx.ndim:
        v = v.unsqueeze(axis)
    return apply(SCATTER, (v,), (axis, idx, True, tuple(like.shape)))


ns_fn("loss_put", _put_np, _put_em)


def _nll_fwd(x, idx, wt, mask, red, axis, out_shape, tw, cw):
    v = _pick(x, idx, axis, out_shape)
    v = -v if wt is None else -v * wt
    if mask is not None:
        v = np.where(mask, v, 0)
    return v if red == "none" else _sum_mean(v, red, tw)


def _nll_vjp(ns, g, need, x, idx, wt, mask, red, axis, out_shape, tw, cw):
    return (ns.loss_link(ns.loss_put(g * cw, x, idx, axis, out_shape), x),)


def _nll_op(node: str) -> Op:
    op = Op("nll_loss", _nll_fwd, _nll_vjp, node=node, saves=(0,),
            names=("self", None, None, None, "reduction", None, None, "total_weight", None))
    # linear in the input: the tangent goes through the same op
    op.jvp = lambda ns, tangents, primals, outs, *p: apply(op, (tangents[0],), p)
    return op


NLL_LOSS = _nll_op("NllLossBackward0")
NLL_LOSS2D = _nll_op("NllLoss2DBackward0")


def _nll_targets(x, t, w, ignore_index: int, n_classes: int):
    """Safe gather indices, per-target weights (None: all ones; zero where ignored) and the
    ignore mask (None: nothing ignored). The common case costs a min and a max."""
    t = t.astype(np.int64, copy=False)
    if isinstance(t, MetaArray):   # no values to check on the meta device
        return t, (None if w is None else w[t].astype(x.dtype, copy=False)), None
    lo, hi = (int(t.min()), int(t.max())) if t.size else (0, -1)
    mask = t != ignore_index if lo <= ignore_index <= hi else None
    if lo < 0 or hi >= n_classes:
        bad = (t < 0) | (t >= n_classes)
        if mask is not None:
            bad &= mask
        if bad.any():
            raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    tsafe = t if mask is None else np.where(mask, t, 0)
    wt = None if w is None else w[tsafe].astype(x.dtype, copy=False)
    if mask is not None:
        wt = mask.astype(x.dtype) if wt is None else wt * mask
    return tsafe, wt, mask


def _check_nll_common(input: Tensor, target: Tensor, weight, kernel: str, n_classes: int,
                      weight_msg: str) -> None:
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{_type_name(target.dtype)}")
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(weight_msg)
    if not _is_float(input):
        raise _not_impl(kernel, input)
    if weight is not None:
        _check_dtype(input.dtype, weight, _SCALAR_TYPE)
        _check_nondiff("nll_loss_forward", "weight", weight)


def _nll(input: Tensor, target: Tensor, weight, red: str, ignore_index: int) -> Tensor:
    """``at::nll_loss`` on a 1-D or 2-D input (NllLossBackward0)."""
    nd = input.dim()
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if not (nd == 1 and target.dim() == 0) and input._data.shape[0] != target._data.shape[0]:
        raise RuntimeError(f"size mismatch (got input: {_shape_str(input._data.shape)}, target: "
                           f"{_shape_str(target._data.shape)})")
    c = input._data.shape[-1]
    _check_nll_common(input, target, weight, "nll_loss_out_frame", c,
                      f"weight tensor should be defined either for all {c} classes or no "
                      f"classes but got weight tensor of shape: {_shape_str(weight._data.shape)}"
                      if weight is not None else "")
    return _nll_apply(NLL_LOSS, input, target, weight, red, ignore_index, c)


def _nll2d(input: Tensor, target: Tensor, weight, red: str, ignore_index: int) -> Tensor:
    """``at::nll_loss2d`` on an (N, C, H, W) input (NllLoss2DBackward0)."""
    if target.dim() != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.dim()}")
    si, st = input._data.shape, target._data.shape
    c = si[1]
    _check_nll_common(input, target, weight, "nll_loss2d_forward_out_frame", c,
                      "weight tensor should be defined either for all or no classes")
    if (si[0], si[2], si[3]) != tuple(st):
        raise RuntimeError(f"size mismatch (got input: {_shape_str(si)} , target: "
                           f"{_shape_str(st)}")
    return _nll_apply(NLL_LOSS2D, input, target, weight, red, ignore_index, c)


def _nll_apply(op: Op, input, target, weight, red, ignore_index, c) -> Tensor:
    x = input._data
    w = None if weight is None else weight._data
    tsafe, wt, mask = _nll_targets(x, target._data, w, ignore_index, c)
    if x.ndim == 1:
        axis, idx, out_shape = 0, tsafe.reshape(1), ()
        wt = None if wt is None else wt.reshape(())
        mask = None if mask is None else mask.reshape(())
    else:
        axis, idx, out_shape = 1, tsafe[:, None], tsafe.shape
    return apply(op, (input,), (idx, wt, mask, red, axis, out_shape)
                 + _nll_coef(wt, mask, red, tsafe.size))


def _nll_coef(wt, mask, red, count: int) -> tuple:
    """The total weight ('mean') and each target's gradient coefficient. Ignored targets get
    exactly 0, even when all are ignored and 'mean' divides by a total weight of 0."""
    if red != "mean":
        return None, (-1 if wt is None else -wt)
    if wt is None:
        # no weights and nothing ignored: the total weight is the number of targets
        return count, (-1.0 / count if count else 0.0)
    tw = np.asanyarray(_sum_np(wt))
    cw = -wt / tw
    return tw, (cw if mask is None else np.where(mask, cw, 0))


def _nll_nd(input: Tensor, target: Tensor, weight, red: str, ignore_index: int) -> Tensor:
    """``at::nll_loss_nd``: 1-D/2-D inputs to nll_loss, 4-D to nll_loss2d, other ranks folded
    into 4-D (and the unreduced loss viewed back), as in PyTorch."""
    nd = input.dim()
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1 and input._data.shape[0] != (target._data.shape[0] if target.dim() else 0):
        raise ValueError(f"Expected input batch_size ({input._data.shape[0]}) to match target "
                         f"batch_size ({target._data.shape[0] if target.dim() else 0}).")
    if nd == 1 and target.dim() == 1 and target._data.shape[0] != 1:
        raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                         f"{target._data.shape[0]}")
    if nd == 1 and target.dim() == 1:
        target = target.reshape(())
    if nd <= 2:
        return _nll(input, target, weight, red, ignore_index)
    if nd == 4:
        return _nll2d(input, target, weight, red, ignore_index)
    n, c = input._data.shape[:2]
    out_size = (n,) + tuple(input._data.shape[2:])
    if tuple(target._data.shape[1:]) != tuple(input._data.shape[2:]):
        raise RuntimeError(f"Expected target size {_shape_str(out_size)}, got "
                           f"{_shape_str(target._data.shape)}")
    empty_in, empty_t = input.numel() == 0, target.numel() == 0
    x4 = input.reshape(n, c, 0, 0) if empty_in else input.reshape(n, c, 1, -1)
    t3 = target.reshape(n, 0, 0) if empty_t else target.reshape(n, 1, -1)
    out = _nll2d(x4, t3, weight, red, ignore_index)
    return out if red != "none" else out.view(out_size)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """``F.nll_loss``: the negative log-likelihood of class-index targets, inputs (C), (N, C)
    or (N, C, d1, ...), with class ``weight`` and ``ignore_index``; 'mean' divides by the
    total weight of the targets kept."""
    red = _reduction_arg(size_average, reduce, reduction)
    return _nll_nd(input, target, weight, red, ignore_index)


def _div_scalar_vjp(ns, g, need, c):
    return (g / c,)


# PyTorch's C++ losses divide by a number through div.Scalar, whose node is DivBackward1
_DIV_SCALAR = Op("div_scalar", lambda x, c: np.true_divide(x, c).astype(x.dtype, copy=False),
                 _div_scalar_vjp, linear=True, node="DivBackward1", names=("other",))


def _class_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight._data.shape[0]
    return weight.view(shape)


def _ce_prob(input: Tensor, target: Tensor, weight, red: str, ls: float) -> Tensor:
    """Cross entropy against class probabilities (``cross_entropy_loss_prob_target``)."""
    class_dim = 0 if input.dim() == 1 else 1
    c = input._data.shape[class_dim]
    if weight is not None and not (weight.dim() == 1 and weight.numel() == c):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {c} classes or no "
            f"classes but got weight tensor of shape: {_shape_str(weight._data.shape)}")
    logp = log_softmax(input, class_dim)
    if ls > 0.0:
        if ls > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {ls}")
        target = target * (1 - ls) + ls / c
    prod = logp * target
    if weight is not None:
        prod = prod * _class_view(weight, input.dim(), class_dim)
    if red == "none":
        return -prod.sum(class_dim)
    s = -prod.sum()
    if red == "sum":
        return s
    numel = input.numel()
    return apply(_DIV_SCALAR, (s,), (numel // c if numel else 0,))


def _ce_smoothed(input: Tensor, target: Tensor, weight, red: str, ignore_index: int,
                 ls: float) -> Tensor:
    """Class-index cross entropy with label smoothing (``cross_entropy_loss_label_smoothing``):
    the nll term plus ``ls / C`` times the (weighted) sum of all log-probabilities."""
    class_dim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, class_dim)
    nll = _nll_nd(logp, target, weight, red, ignore_index)
    c = logp.shape[class_dim]
    ignore = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_view(weight, logp.dim(), class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignore, 0.0)
    if red == "mean":
        if weight is not None:
            ret = smooth.sum() / weight.gather(0, target.masked_select(~ignore).flatten()).sum()
        else:
            ret = smooth.sum() / (~ignore).sum()
    else:
        ret = _reduce(smooth, red)
    return nll * (1 - ls) + ret * (ls / c)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """``F.cross_entropy``: log_softmax over the class dim then nll_loss, for class-index
    targets; for a target shaped like the input, cross entropy against class probabilities.
    ``label_smoothing`` mixes the targets with the uniform distribution."""
    red = _reduction_arg(size_average, reduce, reduction)
    if input._data.shape == target._data.shape:
        if not _is_float(target):
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {_type_name(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _ce_prob(input, target, weight, red, label_smoothing)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError("label_smoothing must be between 0.0 and 1.0. Got: "
                               f"{label_smoothing}")
        return _ce_smoothed(input, target, weight, red, ignore_index, label_smoothing)
    logp = log_softmax(input, 0 if input.dim() == 1 else 1)
    return _nll_nd(logp, target, weight, red, ignore_index)


# ---- multi_margin_loss and multilabel_margin_loss ---------------------------------------

def _mm_grad(ns, x, idx, wy, p: int, margin: float):
    """d loss_i / d x (per sample, before the cotangent) of the multi-class hinge loss: the
    active margins (a constant of the data) times 1 or 2 h, minus their sum at the target."""
    c = x.shape[-1]
    h = x - ns.gather_dim(x, -1, idx, True, x.shape) + margin

    def active_scale(hd):
        active = (hd > 0) & ~_is_target(hd, idx)
        return (active * ((1.0 if wy is None else wy) / c)).astype(hd.dtype)

    m = ns.data_fn(active_scale, h)
    d = h * m * 2 if p == 2 else m
    onehot = ns.data_fn(lambda hd: _is_target(hd, idx).astype(hd.dtype), h)
    return d - onehot * ns.sum_dims(d, (len(x.shape) - 1,), True)


def _is_target(like, idx):
    """Where the class (last axis) is each row's target ``idx`` (shaped (..., 1))."""
    return np.arange(like.shape[-1], like=like) == idx


def _mm_fwd(x, idx, wy, p, margin, red, n, out_shape):
    xy = np.take_along_axis(x, idx, -1)
    h = margin - xy + x
    active = (h > 0) & ~_is_target(x, idx)
    z = np.where(active, h if p == 1 else h * h, 0)
    if wy is not None:
        z = z * wy
    per = (_sum_np(z, -1) / x.shape[-1]).astype(x.dtype).reshape(out_shape)
    return _reduce_np(per, red, n)


def _mm_vjp(ns, g, need, x, idx, wy, p, margin, red, n, out_shape):
    g = _scale(g, red, n)
    if red == "none" and len(out_shape) < len(x.shape):
        g = ns.unsqueeze(g, -1)
    return (g * _mm_grad(ns, x, idx, wy, p, margin),)


def _mm_jvp(ns, tangents, primals, outs, idx, wy, p, margin, red, n, out_shape):
    x = primals[0]
    per = ns.sum_dims(_mm_grad(ns, x, idx, wy, p, margin) * tangents[0],
                      (len(x.shape) - 1,), False)
    per = per.reshape(out_shape)
    return per if red == "none" else _scale(ns.sum_dims(per, None, False), red, n)


MULTI_MARGIN_LOSS = Op("multi_margin_loss", _mm_fwd, _mm_vjp, _mm_jvp, saves=(0,),
                       node="MultiMarginLossBackward0",
                       names=("self", None, None, "p", "margin", "reduction", None, None))


def _check_mm(input: Tensor, target: Tensor, weight) -> int:
    nd = input.dim()
    _check_vector_or_matrix(input)
    nframe = 1 if nd <= 1 else input.shape[0]
    c = 1 if nd == 0 else input.shape[-1]
    if not (target.dim() <= 1 and target.numel() == nframe):
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{nframe}], but got "
            f"{_shape_str(target.shape)}. Input has shape {_shape_str(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{_shape_str(weight.shape)}")
    if not _is_float(input):
        raise _not_impl("multi_margin_loss_cpu_kernel", input)
    _check_dtype(D.int64, target, _SCALAR_TYPE)
    if weight is not None:
        _check_dtype(input.dtype, weight, _SCALAR_TYPE)
        _check_nondiff("multi_margin_loss", "weight", weight)
    return c


def _check_vector_or_matrix(input: Tensor) -> None:
    nd = input.dim()
    if nd > 2 or (nd == 1 and input.numel() == 0) or (nd == 2 and input.shape[1] == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {_shape_str(input.shape)}")


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """``F.multi_margin_loss``: the multi-class hinge loss
    ``sum_j max(0, margin - x[y] + x[j])^p / C`` (MultiMarginLossBackward0), ``weight`` per
    class of the target."""
    red = _reduction_arg(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    c = _check_mm(input, target, weight)
    x = input.reshape(1) if input.dim() == 0 else input
    t = target._data.astype(np.int64, copy=False)
    if ((t < 0) | (t >= c)).any():
        raise RuntimeError("target out of range")
    idx = t.reshape(x.shape[:-1] + (1,))
    wy = None if weight is None else weight._data[idx]
    n = 1 if input.dim() <= 1 else input.shape[0]
    return apply(MULTI_MARGIN_LOSS, (x,), (idx, wy, int(p), float(margin), red, n,
                                           tuple(target.shape)))


def _mlm_parts(t):
    """Target slots in use (each row up to its first -1), their safe class indices, and the
    one-hot map slot -> class of the used slots. Slots past the longest row are dropped, so the
    work is (rows, labels used, classes)."""
    valid = np.logical_and.accumulate(t >= 0, axis=-1)
    k = int(valid.sum(-1).max()) if valid.size else 0
    valid = valid[..., :k]
    tsafe = np.where(valid, t[..., :k], 0)
    hot = (tsafe[..., :, None] == np.arange(t.shape[-1], like=t)) & valid[..., :, None]
    return valid, tsafe, hot


def _mlm_fwd(x, t, red, n, out_shape):
    valid, tsafe, hot = _mlm_parts(t)
    is_target = hot.any(-2)
    xy = np.take_along_axis(x, tsafe, -1)
    h = 1 - xy[..., :, None] + x[..., None, :]
    act = (h > 0) & valid[..., :, None] & ~is_target[..., None, :]
    per = (_sum_np(np.where(act, h, 0), (-2, -1)) / x.shape[-1]).astype(x.dtype)
    return _reduce_np(per.reshape(out_shape), red, n)


def _mlm_grad_np(x, t):
    valid, tsafe, hot = _mlm_parts(t)
    is_target = hot.any(-2)
    xy = np.take_along_axis(x, tsafe, -1)
    act = ((1 - xy[..., :, None] + x[..., None, :] > 0) & valid[..., :, None]
           & ~is_target[..., None, :]).astype(x.dtype)
    g = act.sum(-2) - np.einsum("...jc,...j->...c", hot.astype(x.dtype), act.sum(-1))
    return g / x.shape[-1]


def _mlm_vjp(ns, g, need, x, t, red, n, out_shape):
    # piecewise linear: the gradient is the cotangent times a constant of the data
    g = _scale(g, red, n)
    if red == "none":
        g = ns.unsqueeze(g, -1)
    return (g * ns.data_fn(_mlm_grad_np, x, t), None)


def _mlm_jvp(ns, tangents, primals, outs, red, n, out_shape):
    x, t = primals
    per = ns.sum_dims(ns.data_fn(_mlm_grad_np, x, t) * tangents[0], (len(x.shape) - 1,),
                      False)
    return per if red == "none" else _scale(ns.sum_dims(per, None, False), red, n)


MULTILABEL_MARGIN_LOSS = Op("multilabel_margin_loss", _mlm_fwd, _mlm_vjp, _mlm_jvp,
                            saves=(0, 1), node="MultilabelMarginLossBackward0",
                            names=("self", "target", "reduction", None, None))


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """``F.multilabel_margin_loss``: hinge loss between every target class (the target row up
    to its first -1) and every other class (MultilabelMarginLossBackward0)."""
    red = _reduction_arg(size_average, reduce, reduction)
    nd = input.dim()
    _check_vector_or_matrix(input)
    if nd <= 1:
        ok = target.dim() <= 1 and target.numel() == max(input.numel(), 1)
    else:
        ok = target.dim() == 2 and tuple(target.shape) == tuple(input.shape)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {_shape_str(target.shape)} for input of "
                           f"size: {_shape_str(input.shape)}")
    if not _is_float(input):
        raise _not_impl("multilabel_margin_loss_forward_out_frame", input)
    _check_dtype(D.int64, target, _SCALAR_TYPE)
    c = 1 if nd == 0 else input.shape[-1]
    t = target._data
    if ((t < -1) | (t >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    x = input.reshape(1) if nd == 0 else input
    t = t.reshape(x.shape)
    n = 1 if nd <= 1 else input.shape[0]
    return apply(MULTILABEL_MARGIN_LOSS, (x, t), (red, n, tuple(input.shape[:-1])))


# ---- compositions of ember ops ----------------------------------------------------------

def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """``F.kl_div``: ``target * (log(target) - input)`` (or its log-target form), built as
    PyTorch builds it; 'batchmean' divides the sum by the batch size, and 'mean' warns that it
    divides by every element."""
    if size_average is not None or reduce is not None:
        red = _legacy(size_average, reduce)
    else:
        if reduction == "mean":
            _warn("reduction: 'mean' divides the total loss by both the batch size and the "
                  "support size.'batchmean' divides only by the batch size, and aligns with the "
                  "KL div math definition.'mean' will be changed to behave the same as "
                  "'batchmean' in the next major release.")
        red = "sum" if reduction == "batchmean" else _get_reduction(reduction)
    if not (_is_float(input) or input.is_complex()) or not (_is_float(target)
                                                          or target.is_complex()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = xlogy(target, target) - target * input
    out = _reduce(loss, red)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.shape[0]
    return out


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """``F.poisson_nll_loss``: ``exp(x) - y x`` (or ``x - y log(x + eps)``), plus Stirling's
    term for targets above 1 when ``full``."""
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def _gaussian_var(input: Tensor, var) -> Tensor:
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and
                  sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    return var


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """``F.gaussian_nll_loss``: ``0.5 (log var + (x - y)^2 / var)``; ``var`` is clamped at
    ``eps`` without gradient effect, and may miss the last dim or have one dim of size 1."""
    var = _gaussian_var(input, var)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``F.margin_ranking_loss``: ``max(0, -y (x1 - x2) + margin)``."""
    red = _reduction_arg(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), red)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``F.hinge_embedding_loss``: ``x`` where ``y == 1``, ``max(0, margin - x)`` where
    ``y == -1``."""
    red = _reduction_arg(size_average, reduce, reduction)
    zeros = zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    out = where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros)
    return _reduce(out, red)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """``F.multilabel_soft_margin_loss``: per-class logistic loss averaged over the classes.
    ``-(y logsigmoid(x) + (1 - y) logsigmoid(-x))`` is the logits binary cross entropy, so
    that op computes it."""
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    x, t = broadcast_tensors(input, target)
    rt = D.result_type_of((x, t))
    x, t = (v if v.dtype is rt else v.to(rt) for v in (x, t))
    loss = _run_elementwise(BCE_LOGITS, (x, t, None, None), "none", rt.np)
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``F.cosine_embedding_loss``: ``1 - cos`` where ``y == 1``, ``max(0, cos - margin)``
    where ``y == -1``, cosines over the last dim of 1-D or 2-D inputs."""
    red = _reduction_arg(size_average, reduce, reduction)
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    need = 2 if td == 1 else 1
    if input1.dim() != need:
        raise RuntimeError(
            f"{td}D target tensor expects {need}D input tensors, but found inputs with sizes "
            f"{_shape_str(input1.shape)} and {_shape_str(input2.shape)}.")
    prod_sum = (input1 * input2).sum(td)
    mag1 = (input1 * input1).sum(td) + _EPSILON
    mag2 = (input2 * input2).sum(td) + _EPSILON
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    out = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return _reduce(out, red)


def _pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6) -> Tensor:
    """``torch.pairwise_distance``: ``||x1 - x2 + eps||_p`` over the last dim."""
    return norm(x1 - x2 + eps, p, max(x1.dim(), x2.dim()) - 1)


def _check_triplet_dims(a: Tensor, p: Tensor, n: Tensor) -> None:
    if not (a.dim() == p.dim() == n.dim()):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a.dim()}D, positive {p.dim()}D, and negative "
            f"{n.dim()}D inputs")


def _triplet(anchor, positive, negative, dist, margin: float, swap: bool, red: str) -> Tensor:
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, dist(positive, negative))
    return _reduce((d_pos + margin - d_neg).clamp_min(0), red)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """``F.triplet_margin_loss``: ``max(0, d(a, p) - d(a, n) + margin)`` with the pairwise
    p-norm distance; ``swap`` uses ``min(d(a, n), d(p, n))``."""
    red = _reduction_arg(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(anchor, positive, negative,
                    lambda a, b: _pairwise_distance(a, b, p, eps), margin, swap, red)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """``F.triplet_margin_with_distance_loss``: the triplet loss with any distance function
    (pairwise Euclidean distance by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist = distance_function if distance_function is not None else _pairwise_distance
    return _triplet(anchor, positive, negative, dist, margin, swap, reduction)


# ---- ctc_loss ----------------------------------------------------------------------------

def _lse3(a, b, c):
    """log(exp(a) + exp(b) + exp(c)), -inf when all are -inf (PyTorch's kernel's way)."""
    m = np.maximum(np.maximum(a, b), c)
    m = np.where(m == _NEG_INF, 0, m)
    return np.log(np.exp(a - m) + np.exp(b - m) + np.exp(c - m)) + m


def _shift(a, k: int):
    """``a`` moved ``k`` states along the last axis (right for k > 0), -inf filled."""
    out = np.full_like(a, _NEG_INF)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


def _ctc_alpha(lpe, skip, tl):
    """Log forward variables (T, N, S) over the extended label sequences, all batch items at
    once; each time step is one vectorised update."""
    alpha = np.full_like(lpe, _NEG_INF)
    alpha[0, :, 0] = lpe[0, :, 0]
    if lpe.shape[2] > 1:
        alpha[0, :, 1] = np.where(tl > 0, lpe[0, :, 1], _NEG_INF)
    for t in range(1, lpe.shape[0]):
        a = alpha[t - 1]
        alpha[t] = _lse3(a, _shift(a, 1), np.where(skip, _shift(a, 2), _NEG_INF)) + lpe[t]
    return alpha


def _ctc_beta(lpe, skip, il, tl):
    """Log backward variables (T, N, S): each item starts at its own last frame."""
    T, _, S = lpe.shape
    beta = np.full_like(lpe, _NEG_INF)
    s = np.arange(S, like=lpe)
    end = (2 * tl)[:, None]
    start = (s == end) | ((s == end - 1) & (tl > 0)[:, None])
    skip_from = np.zeros_like(skip)
    skip_from[:, :-2] = skip[:, 2:]
    for t in range(T - 1, -1, -1):
        init = np.where(start, lpe[t], _NEG_INF)
        if t + 1 < T:
            b = beta[t + 1]
            rec = _lse3(b, _shift(b, -1), np.where(skip_from, _shift(b, -2), _NEG_INF)) + lpe[t]
        else:
            rec = np.full_like(init, _NEG_INF)
        beta[t] = np.where((t == il - 1)[:, None], init,
                           np.where((t < il - 1)[:, None], rec, _NEG_INF))
    return beta


def _ctc_setup(lp, ext, tl):
    """Log-probabilities of each extended label (T, N, S) and where a label may skip the blank
    before it (it differs from the label two states back)."""
    lpe = np.take_along_axis(lp, np.broadcast_to(ext[None], (lp.shape[0],) + ext.shape), 2)
    skip = np.zeros_like(ext, dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != ext[:, :-2])
    skip[:, 0::2] = False
    return lpe, skip


def _ctc_fwd(lp, ext, il, tl, blank, zero_infinity, cache):
    n = lp.shape[1]
    if isinstance(lp, MetaArray):
        return lp[0, :, 0]
    lpe, skip = _ctc_setup(lp, ext, tl)
    alpha = _ctc_alpha(lpe, skip, tl)
    rows = np.arange(n, like=lp)
    last = alpha[np.maximum(il - 1, 0), rows]
    l1 = last[rows, 2 * tl]
    l2 = np.where(tl > 0, last[rows, np.maximum(2 * tl - 1, 0)], _NEG_INF)
    m = np.maximum(l1, l2)
    m = np.where(m == _NEG_INF, 0, m)
    nll = -(np.log(np.exp(l1 - m) + np.exp(l2 - m)) + m)
    nll = np.where(il == 0, np.where(tl == 0, 0.0, np.inf), nll).astype(lp.dtype)
    cache["alpha"], cache["lpe"], cache["skip"], cache["nll"] = alpha, lpe, skip, nll
    return nll


def _ctc_grad_np(lp, ext, il, tl, zero_infinity, cache):
    """PyTorch's CTC gradient per unit cotangent: ``exp(lp) - posterior``, which is the
    gradient through a log_softmax producing ``lp`` (PyTorch's convention, kept as is)."""
    if "alpha" not in cache:
        return np.zeros_like(lp)
    nll = cache["nll"]
    beta = _ctc_beta(cache["lpe"], cache["skip"], il, tl)
    ab = cache["alpha"] + beta
    m = ab.max(axis=2, keepdims=True)
    m = np.where(m == _NEG_INF, 0, m)
    onehot = (ext[:, :, None] == np.arange(lp.shape[2], like=lp)).astype(lp.dtype)
    lcab = np.log(np.einsum("tns,nsc->tnc", np.exp(ab - m), onehot)) + m
    grad = np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)
    live = np.arange(lp.shape[0], like=lp)[:, None] < il[None, :]
    if zero_infinity:
        live = live & ~np.isinf(nll)[None, :]
    return np.where(live[:, :, None], grad, 0).astype(lp.dtype)


def _ctc_vjp(ns, g, need, lp, ext, il, tl, blank, zero_infinity, cache):
    if ns is EM:
        # PyTorch has no derivative of this gradient: record a node that says so
        return (apply(_CTC_GRAD, (g, lp), (ext, il, tl, zero_infinity, cache)),)
    return (_ctc_grad_np(lp, ext, il, tl, zero_infinity, cache) * g[None, :, None],)


def _ctc_jvp(ns, tangents, primals, outs, ext, il, tl, blank, zero_infinity, cache):
    # the forward rule consistent with the reverse one above (exact after a log_softmax)
    lp = primals[0]
    grad = ns.const(_ctc_grad_np(lp._data, ext, il, tl, zero_infinity, cache))
    return ns.sum_dims(grad * tangents[0], (0, 2), False)


def _ctc_grad_fwd(g, lp, ext, il, tl, zero_infinity, cache):
    return _ctc_grad_np(lp, ext, il, tl, zero_infinity, cache) * g[None, :, None]


def _ctc_grad_vjp(ns, g, need, *params):
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


CTC_LOSS = Op("ctc_loss", _ctc_fwd, _ctc_vjp, _ctc_jvp, saves=(0,), node="CtcLossBackward0",
              names=("log_probs", None, "input_lengths", "target_lengths", "blank",
                     "zero_infinity", None))
_CTC_GRAD = Op("ctc_loss_backward", _ctc_grad_fwd, _ctc_grad_vjp, node="NotImplemented")
_CTC_GRAD.node.name = lambda self: "ember::autograd::NotImplemented"


def _lengths(name: str, v) -> np.ndarray:
    if isinstance(v, Tensor):
        if v.is_floating_point() or v.is_complex() or v.dtype is D.bool:
            raise RuntimeError(f"{name} must be integral")
        return v._data.astype(np.int64).reshape(-1)
    return np.asarray([int(i) for i in v], np.int64).reshape(-1)


_CTC_WHERE = " (while checking arguments for ctc_loss_allocate_outputs)"
_CTC_OVERLOADS = (
    "(Tensor log_probs, Tensor targets, {t} input_lengths, {t} target_lengths, int blank = 0, "
    "int reduction = at::Reduction::Mean, bool zero_infinity = False)")


def _arg_type(v, detail: bool) -> str:
    name = "Tensor" if isinstance(v, Tensor) else type(v).__name__
    if detail and isinstance(v, (list, tuple)):
        inner = ", ".join(_arg_type(i, False) for i in v)
        return f"list of [{inner}]" if isinstance(v, list) else f"tuple of ({inner})"
    return name


def _is_int_seq(v) -> bool:
    return isinstance(v, (list, tuple)) and all(isinstance(i, int) for i in v)


def _ctc_signature(*args) -> None:
    """``torch.ctc_loss`` takes the lengths as two tensors or two sequences of ints, ``blank``
    as an int and ``zero_infinity`` as a bool; anything else fails PyTorch's argument parser
    with this message."""
    lp, tg, il, tl, blank, zi = args
    both_t = isinstance(il, Tensor) and isinstance(tl, Tensor)
    if ((both_t or _is_int_seq(il) and _is_int_seq(tl)) and isinstance(blank, int)
            and isinstance(zi, bool)):
        return
    full = (lp, tg, il, tl, blank, 1, zi)
    got = ", ".join(_arg_type(v, False) for v in full)
    lines = [f"ctc_loss() received an invalid combination of arguments - got ({got}), but "
             "expected one of:"]
    for kind in ("tuple of ints", "Tensor"):
        marks = []
        for i, v in enumerate(full):
            bad = i >= 4 or (i >= 2 and (kind != "Tensor" or not isinstance(v, Tensor)))
            t = _arg_type(v, True)
            marks.append(f"!{t}!" if bad else t)
        lines.append(" * " + _CTC_OVERLOADS.format(t=kind))
        lines.append("      didn't match because some of the arguments have invalid types: ("
                     + ", ".join(marks) + ")")
    raise TypeError("\n".join(lines) + "\n")


def _check_lengths(name: str, lengths: np.ndarray, most) -> None:
    """PyTorch's range check of the lengths, reporting the first offending item."""
    bad = (lengths < 0) | (False if most is None else lengths > most)
    if bad.any():
        v = int(lengths[bad][0])
        what = f"at least 0, but got value {v}" if v < 0 else f"at most {most}, but got value {v}"
        raise RuntimeError(f"Expected {name} to have value {what}{_CTC_WHERE}")


def _ctc_targets(targets: np.ndarray, tl: np.ndarray, n: int) -> np.ndarray:
    """The padded (N, max target length) targets from either layout, with PyTorch's checks."""
    if targets.ndim not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional "
                           f"tensor for argument #2 'targets'{_CTC_WHERE}")
    _check_lengths("target_lengths", tl, None)
    smax = int(tl.max()) if n else 0
    if targets.ndim == 1:
        total = int(tl.sum())
        if targets.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {targets.shape[0]} for argument #2 'targets'{_CTC_WHERE}")
        offsets = np.cumsum(tl) - tl
        pos = offsets[:, None] + np.arange(smax, like=targets)
        return targets[np.minimum(pos, max(total - 1, 0))] if total else \
            np.zeros((n, smax), np.int64, like=targets)
    if targets.shape[0] != n:
        raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size "
                           f"{targets.shape[0]} for argument #2 'targets'{_CTC_WHERE}")
    if targets.shape[1] < smax:
        raise RuntimeError(f"Expected tensor to have size at least {smax} at dimension 1, but "
                           f"got size {targets.shape[1]} for argument #2 'targets'{_CTC_WHERE}")
    return targets[:, :smax]


def _ctc_extended(padded: np.ndarray, tl: np.ndarray, blank: int, c: int) -> np.ndarray:
    """Blank-interleaved label sequences (N, 2 S + 1); states past an item's end are blank."""
    n, smax = padded.shape
    used = np.arange(smax, like=padded) < tl[:, None]
    bad = used & ((padded < 0) | (padded >= c))
    if bad.any():
        raise IndexError(f"Target {int(padded[bad][0])} is out of bounds.")
    ext = np.full((n, 2 * smax + 1), blank, np.int64, like=padded)
    ext[:, 1::2] = np.where(used, padded, blank)
    return ext


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """``F.ctc_loss``: the connectionist temporal classification loss of (T, N, C) or (T, C)
    log-probabilities, targets padded (N, S) or concatenated, by the forward-backward
    algorithm in log space (CtcLossBackward0). 'mean' divides each loss by its target length
    first; ``zero_infinity`` zeroes impossible alignments and their gradients."""
    red = _get_reduction(reduction)
    _ctc_signature(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)
    il = _lengths("input_lengths", input_lengths)
    tl = _lengths("target_lengths", target_lengths)
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if lp.dtype not in (D.float32, D.float64):
        raise _not_impl("ctc_loss_cpu", lp)
    if lp.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.dim()}-dimensional "
                           f"tensor for argument #1 'log_probs'{_CTC_WHERE}")
    t_len, n, c = lp.shape
    if lp.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if il.shape[0] != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.shape[0] != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    padded = _ctc_targets(targets._data.astype(np.int64), tl, n)
    _check_lengths("input_lengths", il, t_len)
    ext = _ctc_extended(padded, tl, blank, c)
    res = apply(CTC_LOSS, (lp,), (ext, il, tl, blank, bool(zero_infinity), {}))
    return _ctc_reduce(res, tl, red, zero_infinity, batched)


def _ctc_reduce(res: Tensor, tl: np.ndarray, red: str, zero_infinity: bool,
                batched: bool) -> Tensor:
    if zero_infinity:
        res = where(res == math.inf, zeros((), dtype=res.dtype), res)
    if red == "mean":
        lengths = tensor(tl.tolist(), dtype=res.dtype).clamp_min(1)
        return (res / lengths).mean()
    if red == "sum":
        return res.sum()
    return res if batched else res.squeeze(0)
