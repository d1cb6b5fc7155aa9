"""NAdam (``torch.optim.NAdam``): Adam with Nesterov momentum and a momentum-decay schedule."""
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

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam; ``mu_product`` is kept as a 0-dim tensor in the state's scalar dtype, as PyTorch."""

    _tensor_step = True

    def __init__(self, params, lr: float | Tensor = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        _check_not_differentiable(defaults)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One NAdam step over every parameter that has a gradient."""
        loss = _closure(closure)
        for group in self.param_groups:
            params = _with_grad(group)
            if not params:
                continue
            _check_capturable(group)
            b1, b2 = group["betas"]
            lr, eps, wd = _value(group["lr"]), group["eps"], group["weight_decay"]
            md, maximize = group["momentum_decay"], group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            for p in params:
                st = self.state[p]
                if not st:
                    st["step"] = _scalar(0.0)
                    st["mu_product"] = _scalar(1.0)
                    st["exp_avg"] = _zeros(p)
                    st["exp_avg_sq"] = _zeros(p)
                step_a = st["step"]._data
                step_a += 1
                step = step_a.item()
                bc2 = 1 - b2 ** step
                x, g = _decayed_grad(p, maximize, wd, lr, decoupled)
                x, g = _real(x), _real(g)
                mu = b1 * (1.0 - 0.5 * (0.96 ** (step * md)))
                mu_next = b1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * md)))
                mp_a = st["mu_product"]._data
                mp_a *= mu
                mp = mp_a.item()
                m, v = _adam_moments(st, g, b1, b2)
                denom = np.sqrt(v / bc2)
                denom += eps
                x += (-lr * (1.0 - mu) / (1.0 - mp) * g) / denom
                x += ((-lr * mu_next) / (1.0 - mp * mu_next) * m) / denom
                p._vc.v += 1
        return loss
