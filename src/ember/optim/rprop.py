"""Rprop (``torch.optim.Rprop``): sign-based steps with per-coordinate adaptive sizes."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_lr,
    _check_not_differentiable,
    _closure,
    _full,
    _real,
    _scalar,
    _value,
    _with_grad,
    _zeros,
)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop: grow a coordinate's step while its gradient keeps its sign, shrink it on a flip."""

    _tensor_step = True

    def __init__(self, params, lr: float | Tensor = 1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50),
                 *, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        _check_not_differentiable(defaults)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Rprop step over every parameter that has a gradient."""
        loss = _closure(closure)
        for group in self.param_groups:
            params = _with_grad(group)
            if not params:
                continue
            _check_capturable(group)
            etaminus, etaplus = group["etas"]
            smin, smax = group["step_sizes"]
            maximize = group["maximize"]
            for p in params:
                st = self.state[p]
                if not st:
                    st["step"] = _scalar(0.0)
                    st["prev"] = _zeros(p)
                    lr = _value(group["lr"])
                    st["step_size"] = _full(p._grad, complex(lr, lr) if p.is_complex() else lr)
                st["step"]._data += 1
                g = _real(p._grad._data)
                if maximize:
                    g = -g
                prev = _real(st["prev"]._data)
                size = _real(st["step_size"]._data)
                sign = np.sign(g * prev)
                sign[sign > 0] = etaplus
                sign[sign < 0] = etaminus
                sign[sign == 0] = 1
                size *= sign
                np.clip(size, smin, smax, out=size)
                g = g.copy()
                g[sign == etaminus] = 0
                x = _real(p._data)
                x += (-1 * np.sign(g)) * size
                prev[...] = g
                p._vc.v += 1
        return loss
