"""RAdam (``torch.optim.RAdam``): Adam with a rectified adaptive learning rate."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _adam_moments,
    _check_betas,
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

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam: plain momentum SGD until the variance estimate is trustworthy (rho_t > 5)."""

    _tensor_step = True

    def __init__(self, params, lr: float | Tensor = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        _check_not_differentiable(defaults)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One RAdam step over every parameter that has a gradient."""
        loss = _closure(closure)
        for group in self.param_groups:
            params = _with_grad(group)
            if not params:
                continue
            _check_capturable(group)
            b1, b2 = group["betas"]
            lr, eps, wd = _value(group["lr"]), group["eps"], group["weight_decay"]
            maximize, decoupled = group["maximize"], group["decoupled_weight_decay"]
            for p in params:
                st = self.state[p]
                if not st:
                    st["step"] = _scalar(0.0)
                    st["exp_avg"] = _zeros(p)
                    st["exp_avg_sq"] = _zeros(p)
                step_a = st["step"]._data
                step_a += 1
                step = step_a.item()
                x, g = _decayed_grad(p, maximize, wd, lr, decoupled)
                x, g = _real(x), _real(g)
                m, v = _adam_moments(st, g, b1, b2)
                bc1 = 1 - b1 ** step
                bc2 = 1 - b2 ** step
                upd = m / bc1 * lr
                rho_inf = 2 / (1 - b2) - 1
                rho_t = rho_inf - 2 * step * (b2 ** step) / bc2
                if rho_t > 5.0:
                    # PyTorch's `float / tensor` is reciprocal() * float
                    adaptive = np.reciprocal(np.sqrt(v) + eps) * bc2 ** 0.5
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    upd = upd * adaptive * rect
                x -= upd
                p._vc.v += 1
        return loss
