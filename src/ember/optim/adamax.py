"""Adamax (``torch.optim.Adamax``): Adam with an infinity-norm second moment."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _check_betas,
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

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax: the second moment is a decayed running maximum of |grad|."""

    _tensor_step = True

    def __init__(self, params, lr: float | Tensor = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        _check_not_differentiable(defaults)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adamax step over every parameter that has a gradient."""
        loss = _closure(closure)
        for group in self.param_groups:
            params = _with_grad(group)
            if not params:
                continue
            _check_capturable(group)
            b1, b2 = group["betas"]
            lr, eps, wd = _value(group["lr"]), group["eps"], group["weight_decay"]
            maximize = group["maximize"]
            for p in params:
                st = self.state[p]
                if not st:
                    st["step"] = _scalar(0.0)
                    st["exp_avg"] = _zeros(p)
                    st["exp_inf"] = _zeros(p)
                step_a = st["step"]._data
                step_a += 1
                x, g = _decayed_grad(p, maximize, wd)
                x, g = _real(x), _real(g)
                m = _real(st["exp_avg"]._data)
                u = _real(st["exp_inf"]._data)
                _lerp_(m, g, 1 - b1)
                u *= b2
                np.maximum(u, np.abs(g) + eps, out=u)
                clr = lr / (1 - b1 ** step_a.item())
                x += (-clr * m) / u
                p._vc.v += 1
        return loss
