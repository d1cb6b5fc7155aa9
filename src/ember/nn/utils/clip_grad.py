"""Gradient clipping (``torch/nn/utils/clip_grad.py``). ``foreach`` is accepted as PyTorch's
speed hint; the result is the same either way."""
from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _as_list(parameters) -> list:
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The ``norm_type`` norm of the norms of ``tensors`` (as if concatenated)."""
    from ... import stack, tensor
    from ..._ops.reduction import norm as vector_norm
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return tensor(0.0)
    with no_grad():
        norms = [vector_norm(t, norm_type) for t in tensors]
        dt = norms[0].dtype
        total = vector_norm(stack([n.to(dt) for n in norms]), norm_type)
    if error_if_nonfinite and (total.isnan() or total.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor,
                          foreach=None) -> None:
    """Scale the gradients by ``min(1, max_norm / (total_norm + 1e-6))``."""
    from ..._ops.pointwise_more import clamp
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coef = clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Clip the gradients' total norm to ``max_norm`` in place; returns the total norm."""
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient to ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
