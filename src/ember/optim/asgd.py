"""ASGD (``torch.optim.ASGD``): averaged SGD; 'eta' and 'mu' are 0-dim state tensors."""
from __future__ import annotations

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
    _scalar_np,
    _value,
    _with_grad,
    _zeros,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD: the running average of the iterates is kept in state['ax']."""

    _tensor_step = True

    def __init__(self, params, lr: float | Tensor = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        _check_not_differentiable(defaults)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One ASGD step over every parameter that has a gradient."""
        loss = _closure(closure)
        for group in self.param_groups:
            params = _with_grad(group)
            if not params:
                continue
            _check_capturable(group)
            lr, lambd, alpha = _value(group["lr"]), group["lambd"], group["alpha"]
            t0, wd, maximize = group["t0"], group["weight_decay"], group["maximize"]
            to_default = _scalar_np()
            for p in params:
                st = self.state[p]
                if not st:
                    st["step"] = _scalar(0.0)
                    st["eta"] = _scalar(lr)
                    st["mu"] = _scalar(1.0)
                    st["ax"] = _zeros(p)
                step_a = st["step"]._data
                step_a += 1
                x, g = _decayed_grad(p, maximize, wd)
                x, g = _real(x), _real(g)
                ax = _real(st["ax"]._data)
                eta_a, mu_a = st["eta"]._data, st["mu"]._data
                eta = eta_a.item()
                x *= 1 - lambd * eta
                x += -eta * g
                if mu_a.item() != 1:
                    ax += (x - ax) * mu_a
                else:
                    ax[...] = x
                step = step_a.item()
                # PyTorch goes through torch.as_tensor(float): rounded to the default dtype
                eta_a[...] = to_default(lr / ((1 + lambd * lr * step) ** alpha))
                mu_a[...] = to_default(1 / max(1, step - t0))
                p._vc.v += 1
        return loss
