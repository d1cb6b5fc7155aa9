"""RMSprop (``torch.optim.RMSprop``) with centering and momentum."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_lr,
    _check_not_differentiable,
    _closure,
    _decayed_grad,
    _lerp_,
    _real,
    _scalar,
    _value,
    _with_grad,
    _zeros,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop: steps divided by a running RMS of the gradient (centered: its std)."""

    _tensor_step = True

    def __init__(self, params, lr: float | Tensor = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay, "capturable": capturable,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable}
        _check_not_differentiable(defaults)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One RMSprop step over every parameter that has a gradient."""
        loss = _closure(closure)
        for group in self.param_groups:
            params = _with_grad(group)
            if not params:
                continue
            _check_capturable(group)
            lr, alpha, eps = _value(group["lr"]), group["alpha"], group["eps"]
            wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
            maximize = group["maximize"]
            for p in params:
                st = self.state[p]
                if not st:
                    st["step"] = _scalar(0.0)
                    st["square_avg"] = _zeros(p)
                    if momentum > 0:
                        st["momentum_buffer"] = _zeros(p)
                    if centered:
                        st["grad_avg"] = _zeros(p)
                st["step"]._data += 1
                x, g = _decayed_grad(p, maximize, wd)
                x, g = _real(x), _real(g)
                sq = _real(st["square_avg"]._data)
                sq *= alpha
                sq += (1 - alpha) * g * g
                if centered:
                    ga = _real(st["grad_avg"]._data)
                    _lerp_(ga, g, 1 - alpha)
                    avg = np.sqrt(sq + (-1 * ga) * ga)
                else:
                    avg = np.sqrt(sq)
                avg += eps
                if momentum > 0:
                    buf = _real(st["momentum_buffer"]._data)
                    buf *= momentum
                    buf += g / avg
                    x += -lr * buf
                else:
                    x += (-lr * g) / avg
                p._vc.v += 1
        return loss
