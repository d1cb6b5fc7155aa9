"""Adam (``torch.optim.Adam``), with amsgrad, maximize and decoupled weight decay (AdamW)."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _adam_moments,
    _check_betas,
    _check_capturable,
    _check_fused,
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

__all__ = ["Adam"]


def _check_adam(lr, betas, eps, weight_decay, foreach, capturable) -> tuple:
    if isinstance(lr, Tensor):
        if foreach and not capturable:
            raise ValueError(
                "lr as a Tensor is not supported for capturable=False and foreach=True")
    _check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    _check_betas(betas)
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    b0, b1 = betas
    if not ((isinstance(b0, float) and isinstance(b1, float))
            or (isinstance(b0, Tensor) and isinstance(b1, Tensor))):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, b in enumerate(betas):
        if isinstance(b, Tensor):
            if not capturable and foreach:
                raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False "
                                 "and foreach=True")
            if b.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
    return tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() != 0 else b for b in betas)


class Adam(Optimizer):
    """Adam: bias-corrected moving averages of the gradient and its square."""

    _tensor_step = True

    def __init__(self, params, lr: float | Tensor = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        betas = _check_adam(lr, betas, eps, weight_decay, foreach, capturable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        _check_not_differentiable(defaults)
        super().__init__(params, defaults)
        if fused:
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)

    def step(self, closure=None):
        """One Adam step over every parameter that has a gradient."""
        loss = _closure(closure)
        for group in self.param_groups:
            params = _with_grad(group)
            if not params:
                continue
            _check_capturable(group)
            fused = group["fused"]
            if fused:
                _check_fused(params)
            b1, b2 = (_value(b) for b in group["betas"])
            lr, wd, eps = _value(group["lr"]), group["weight_decay"], group["eps"]
            amsgrad, maximize = group["amsgrad"], group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            state_of = self.state
            for p in params:
                st = state_of[p]
                if not st:
                    st["step"] = _scalar(0.0, bool(fused))
                    st["exp_avg"] = _zeros(p)
                    st["exp_avg_sq"] = _zeros(p)
                    if amsgrad:
                        st["max_exp_avg_sq"] = _zeros(p)
                step_a = st["step"]._data
                step_a += 1
                step = step_a.item()
                x, g = _decayed_grad(p, maximize, wd, lr, decoupled)
                x, g = _real(x), _real(g)
                m, v = _adam_moments(st, g, b1, b2)
                step_size = lr / (1 - b1 ** step)
                bc2_sqrt = (1 - b2 ** step) ** 0.5
                if amsgrad:
                    vmax = _real(st["max_exp_avg_sq"]._data)
                    np.maximum(vmax, v, out=vmax)
                    denom = np.sqrt(vmax)
                else:
                    denom = np.sqrt(v)
                denom /= bc2_sqrt
                denom += eps
                x += (-step_size * m) / denom
                p._vc.v += 1
        return loss
