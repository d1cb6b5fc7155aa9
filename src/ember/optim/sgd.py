"""SGD (``torch.optim.SGD``) with momentum, dampening, Nesterov, weight decay and maximize."""
from __future__ import annotations

from .._tensor import Tensor, Version, _make
from .optimizer import (
    Optimizer,
    _check_fused,
    _check_lr,
    _check_not_differentiable,
    _closure,
    _decayed_grad,
    _value,
    _with_grad,
)

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent; the momentum buffer starts as a copy of the first gradient."""

    def __init__(self, params, lr: float | Tensor = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float | Tensor = 0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_not_differentiable(defaults)
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure=None):
        """One SGD step over every parameter that has a gradient."""
        loss = _closure(closure)
        for group in self.param_groups:
            params = _with_grad(group)
            if not params:
                continue
            if group["fused"]:
                _check_fused(params)
            lr, wd = _value(group["lr"]), _value(group["weight_decay"])
            momentum, dampening = group["momentum"], group["dampening"]
            nesterov, maximize = group["nesterov"], group["maximize"]
            for p in params:
                x, g = _decayed_grad(p, maximize, wd)
                if momentum != 0:
                    st = self.state[p]
                    buf_t = st.get("momentum_buffer")
                    if buf_t is None:
                        buf_t = _make(g.copy(), Version(), False, None)
                        st["momentum_buffer"] = buf_t
                    else:
                        buf = buf_t._data
                        buf *= momentum
                        buf += (1 - dampening) * g
                    g = g + momentum * buf_t._data if nesterov else buf_t._data
                x += -lr * g
                p._vc.v += 1
        return loss
