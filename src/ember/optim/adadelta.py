"""Adadelta (``torch.optim.Adadelta``)."""
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
    _real,
    _scalar,
    _value,
    _with_grad,
    _zeros,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta: steps scaled by the ratio of running RMS of updates and of gradients."""

    _tensor_step = True

    def __init__(self, params, lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        _check_not_differentiable(defaults)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adadelta step over every parameter that has a gradient."""
        loss = _closure(closure)
        for group in self.param_groups:
            params = _with_grad(group)
            if not params:
                continue
            _check_capturable(group)
            lr, rho, eps = _value(group["lr"]), group["rho"], group["eps"]
            wd, maximize = group["weight_decay"], group["maximize"]
            for p in params:
                st = self.state[p]
                if not st:
                    st["step"] = _scalar(0.0)
                    st["square_avg"] = _zeros(p)
                    st["acc_delta"] = _zeros(p)
                st["step"]._data += 1
                x, g = _decayed_grad(p, maximize, wd)
                sq = _real(st["square_avg"]._data)
                acc = _real(st["acc_delta"]._data)
                g = _real(g)
                sq *= rho
                sq += (1 - rho) * g * g
                std = np.sqrt(sq + eps)
                delta = np.sqrt(acc + eps)
                delta /= std
                delta *= g
                acc *= rho
                acc += (1 - rho) * delta * delta
                _real(x)[...] += -lr * delta
                p._vc.v += 1
        return loss
