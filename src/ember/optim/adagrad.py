"""Adagrad (``torch.optim.Adagrad``): per-coordinate steps scaled by the summed squared grads."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _check_fused,
    _check_lr,
    _check_not_differentiable,
    _closure,
    _decayed_grad,
    _full,
    _real,
    _scalar,
    _value,
    _with_grad,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad; like PyTorch, state ('step', 'sum') is created for every parameter at once."""

    _tensor_step = True

    def __init__(self, params, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        _check_not_differentiable(defaults)
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group) -> None:
        st = self.state[p]
        st["step"] = _scalar(0.0, bool(group["fused"]))
        init = self.defaults["initial_accumulator_value"]
        st["sum"] = _full(p, complex(init, init) if p.is_complex() else init)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)

    def step(self, closure=None):
        """One Adagrad step over every parameter that has a gradient."""
        loss = _closure(closure)
        for group in self.param_groups:
            params = _with_grad(group)
            if not params:
                continue
            if group["fused"]:
                _check_fused(params)
            lr, wd, lr_decay = _value(group["lr"]), group["weight_decay"], group["lr_decay"]
            eps, maximize = group["eps"], group["maximize"]
            for p in params:
                st = self.state[p]
                if not st:
                    self._init_state(p, group)
                step_a = st["step"]._data
                step_a += 1
                step = step_a.item()
                x, g = _decayed_grad(p, maximize, wd)
                x, g = _real(x), _real(g)
                clr = lr / (1 + (step - 1) * lr_decay)
                s = _real(st["sum"]._data)
                s += g * g
                std = np.sqrt(s)
                std += eps
                x += (-clr * g) / std
                p._vc.v += 1
        return loss
