"""``F.linear_cross_entropy`` and ``nn.LinearCrossEntropyOptions``.

With ``options=None`` PyTorch runs its reference path, ``linear`` then ``cross_entropy``, built
here from the same ember ops so every node and derivative (forward mode included) is theirs.
With options PyTorch runs a chunked custom op over the batch rows: for 'mean'/'sum' the forward
computes the loss and every gradient at once and the backward only scales them (a second
backward raises unless ``allow_retain_graph``); for 'none' the backward recomputes them. Neither
has a forward-mode rule (a dual input gives a loss without tangent) nor a differentiable
backward, and ember mirrors that. Configurations the chunked op does not handle (K-dimensional
weights, probability targets, label smoothing) fall back to the reference path with PyTorch's
warning.
"""
from __future__ import annotations

import dataclasses
import math
import sys
import warnings

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ._registry import EM, Op, apply

__all__ = ["linear_cross_entropy"]

_AUTO = {"float16": ("accurate", "aspect_ratio"), "bfloat16": ("accurate", "aspect_ratio")}
_AUTO_FALLBACK = ("compact", "aspect_ratio:2")
_ACC_DTYPES = ("float16", "bfloat16", "float32", "float64")


def _dtype_name(dt) -> str:
    return str(dt).split(".")[-1]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """``torch.nn.LinearCrossEntropyOptions``: how the chunked path splits the batch rows
    (``batch_chunk_size`` or the ``chunking_method`` heuristic), its accumulation dtype and
    whether its backward may run twice. Validated as in PyTorch."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (
                isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError("batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None and _dtype_name(self.acc_dtype) not in _ACC_DTYPES:
            raise ValueError(
                "acc_dtype must be one of {None, ember.float16, ember.bfloat16, ember.float32, "
                f"ember.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op "
                "pick automatically.")


def _chunk_size(method: str, n: int, in_features: int, n_classes: int) -> int:
    """The ``aspect_ratio[:k]`` heuristic: a logits chunk about the size of the input."""
    factor = int(method.split(":", 1)[1]) if ":" in method else 1
    inc = -(-n_classes // in_features)
    target = -(-n // inc)
    return min((1 << (target - 1).bit_length()) // factor, n)


def _resolve(opts, n: int, in_features: int, n_classes: int, dtype: str):
    """PyTorch's ``_adjust``: (batch_chunk_size, acc dtype name) for one call on the CPU."""
    method = opts.chunking_method
    if method == "auto" and opts.batch_chunk_size is not None:
        method = None
    if method == "auto":
        method = _AUTO.get(dtype, _AUTO_FALLBACK)[1]
    size = n if opts.batch_chunk_size is None else min(opts.batch_chunk_size, n)
    if method is not None:
        size = _chunk_size(method, n, in_features, n_classes)
        if opts.batch_chunk_size is not None and opts.batch_chunk_size != size:
            raise ValueError(f"batch_chunk_size (={opts.batch_chunk_size}) and chunking_method "
                             f"('{method}') give different chunk sizes ({opts.batch_chunk_size}"
                             f" vs {size}); pass only one.")
    if opts.acc_dtype is None:
        auto = opts.acc_policy == "auto" and dtype in ("float16", "bfloat16")
        acc = "float32" if auto else dtype
    else:
        acc = _dtype_name(opts.acc_dtype)
    if acc != dtype and not (dtype in ("float16", "bfloat16") and acc == "float32"):
        raise RuntimeError("linear_cross_entropy supports float32 acc_dtype with float16/bfloat16"
                           f" inputs, but got ember.{acc} acc_dtype and ember.{dtype} inputs.")
    return max(1, size), acc


# ---- the chunked kernel on arrays ---------------------------------------------------------

def _chunks(x, w, b, t, wc, ignore_index: int, size: int, acc):
    """For each chunk of rows: (rows, per-row loss, d loss_row / d logits per unit weight)."""
    wa, ba = w.astype(acc, copy=False), None if b is None else b.astype(acc, copy=False)
    n, c = x.shape[0], w.shape[0]
    for s in range(0, n, size):
        rows = slice(s, min(s + size, n))
        logits = x[rows].astype(acc, copy=False) @ wa.T
        if ba is not None:
            logits = logits + ba
        tr = t[rows]
        keep = tr != ignore_index
        bad = keep & ((tr < 0) | (tr >= c))
        if bad.any():
            raise RuntimeError(f"index {int(tr[bad][0])} is out of bounds for dimension 1 with "
                               f"size {c}")
        ts = np.where(keep, tr, 0)
        m = logits.max(1, keepdims=True)
        e = np.exp(logits - m)
        se = e.sum(1, keepdims=True)
        lse = (np.log(se) + m)[:, 0]
        wt = keep.astype(acc) if wc is None else np.where(keep, wc.astype(acc)[ts], 0)
        loss = wt * (lse - logits[np.arange(len(ts)), ts])
        dl = e / se
        dl[np.arange(len(ts)), ts] -= 1
        yield rows, loss, wt, dl


def _grads(x, w, b, t, wc, ignore_index, size, acc, scale, need):
    """The gradients of sum(scale_row * loss_row) with respect to (x, w, b) that ``need``
    asks for (``scale``: a number, or one per row); also the per-row losses."""
    gi = np.zeros(x.shape, acc) if need[0] else None
    gw = np.zeros(w.shape, acc) if need[1] else None
    gb = np.zeros(w.shape[:1], acc) if need[2] else None
    losses = np.empty(x.shape[0], acc)
    wa = w.astype(acc, copy=False)
    for rows, loss, wt, dl in _chunks(x, w, b, t, wc, ignore_index, size, acc):
        losses[rows] = loss
        if not any(need):
            continue
        sc = wt * (scale if np.ndim(scale) == 0 else scale[rows].astype(acc, copy=False))
        dl = dl * sc[:, None]
        if gi is not None:
            gi[rows] = dl @ wa
        if gw is not None:
            gw += dl.T @ x[rows].astype(acc, copy=False)
        if gb is not None:
            gb += dl.sum(0)
    return losses, gi, gw, gb


def _as_grad(a, like, ns):
    if a is None:
        return None
    a = a.astype(like.dtype, copy=False)
    if ns is EM:
        # PyTorch's chunked backward is not differentiable: a plain tensor under create_graph
        from .creation import tensor as _tensor
        return _tensor(a)
    return a


def _data(g):
    return g._data if isinstance(g, Tensor) else g


def _reduced_fwd(x, w, b, loss, bufs):
    return loss


def _reduced_vjp(ns, g, need, loss, bufs):
    """Scale the gradients the forward computed by the incoming gradient (a number)."""
    retain = bufs["retain"]
    out = []
    for i, key in ((0, "gi"), (1, "gw"), (2, "gb")):
        if not need[i]:
            out.append(None)
            continue
        a = bufs.get(key)
        if a is None:
            raise RuntimeError("linear_cross_entropy chunked backward called twice; "
                               "retain_graph=True / double backward are not supported.")
        if not retain:
            bufs[key] = None
        out.append(_as_grad(a * _data(g), bufs["like"][i], ns))
    return tuple(out)


def _none_fwd(x, w, b, loss, args):
    return loss


def _none_vjp(ns, g, need, x, w, b, loss, args):
    """Recompute the gradients from the saved inputs with the per-row gradient folded in."""
    need = (need[0], need[1], b is not None and need[2])
    if not any(need):
        return None, None, None
    _, gi, gw, gb = _grads(_data(x), _data(w), None if b is None else _data(b),
                           *args, _data(g), need)
    return tuple(_as_grad(a, _data(v), ns) if a is not None else None
                 for a, v in zip((gi, gw, gb), (x, w, b)))


_REDUCED = Op("linear_cross_entropy_batch_chunked", _reduced_fwd, _reduced_vjp,
              jvp=lambda *a: None,
              node="GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_"
                   "defaultBackward")
_NO_REDUCTION = Op("linear_cross_entropy_batch_chunked_no_reduction", _none_fwd, _none_vjp,
                   jvp=lambda *a: None, saves=(0, 1, 2),
                   node="GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_"
                        "no_reduction_defaultBackward")


def _chunked(input: Tensor, weight: Tensor, target: Tensor, bias, cw, reduction: str,
             ignore_index: int, opts) -> Tensor:
    unbatched = input.dim() == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    x, w = input._data, weight._data
    b = None if bias is None else bias._data
    wc = None if cw is None else cw._data
    t = target._data.astype(np.int64, copy=False)
    dtype = _dtype_name(input.dtype)
    size, acc = _resolve(opts, x.shape[0], x.shape[1], w.shape[0], dtype)
    acc = np.dtype(np.float32) if acc in ("float16", "bfloat16", "float32") else np.dtype(acc)
    args = (t, wc, ignore_index, size, acc)
    if reduction == "none":
        losses, *_ = _grads(x, w, b, *args, 1.0, (False, False, False))
        loss = losses.astype(x.dtype)
        out = apply(_NO_REDUCTION, (input, weight, bias), (loss, args))
    else:
        grad_on = STATE.grad
        need = tuple(grad_on and v is not None and v.requires_grad
                     for v in (input, weight, bias))
        keep = t != ignore_index
        denom = 1.0
        if reduction == "mean":
            denom = float(keep.sum() if wc is None else
                          np.where(keep, wc.astype(acc)[np.where(keep, t, 0)], 0).sum())
        scale = 1.0 / denom if denom else math.nan
        with np.errstate(invalid="ignore", divide="ignore"):
            losses, gi, gw, gb = _grads(x, w, b, *args, scale, need)
            loss = np.asarray(losses.sum() / denom if reduction == "mean" else losses.sum())
        bufs = {"gi": gi, "gw": gw, "gb": gb, "retain": bool(opts.allow_retain_graph),
                "like": (x, w, b)}
        out = apply(_REDUCED, (input, weight, bias), (loss.astype(x.dtype), bufs))
    return out.squeeze(0) if unbatched else out


# ---- the public function ------------------------------------------------------------------

def _stacklevel() -> int:
    level, f = 1, sys._getframe(1)
    while f is not None and f.f_globals.get("__name__", "").split(".")[0] == "ember":
        level += 1
        f = f.f_back
    return level


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options=None) -> Tensor:
    """``F.linear_cross_entropy``: ``cross_entropy(linear(input, linear_weight, linear_bias),
    target, ...)``; a ``linear_weight`` of shape (C, d1, ..., dK, in_features) gives a
    K-dimensional loss. ``options`` (a ``LinearCrossEntropyOptions``) selects the chunked path."""
    from .nn_loss import cross_entropy
    from .nn_misc import linear
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features),"
                           f" got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    n_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (n_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(n_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    logits_shape = (*batches, n_classes, *out_features)
    probabilities = tuple(target.shape) == logits_shape
    if probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    if options is not None:
        ok = (not out_features and reduction in {"mean", "sum", "none"}
              and label_smoothing == 0.0 and target.dtype == D.int64)
        if ok:
            return _chunked(input, linear_weight, target, linear_bias, weight, reduction,
                            ignore_index, options)
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features "
            f"== (). Got reduction={reduction!r}, label_smoothing={label_smoothing}, "
            f"target.dtype={target.dtype}, out_features={out_features}, tracing=False, "
            "linear_bias.shape="
            f"{tuple(linear_bias.shape) if linear_bias is not None else None}.",
            stacklevel=_stacklevel())
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=n_classes),
                                               in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=n_classes))
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)
