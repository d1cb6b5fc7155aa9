"""The Optimizer base class, mirroring ``torch.optim.Optimizer``.

Parameter groups, defaults, ``state`` (a defaultdict keyed by parameter), ``state_dict`` /
``load_state_dict`` in PyTorch's structure (state keyed by integer index, groups holding index
lists and every hyperparameter), step and state-dict hooks, and PyTorch's error messages.

Subclasses update raw NumPy arrays in place (``p._data``) and bump each parameter's version
counter once per step: no graph is ever recorded, so ``step`` needs no ``no_grad`` block.
"""
from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain
from typing import Any, Callable

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, Version, _make
from ..autograd.graph import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook"]


class _RequiredParameter:
    """Singleton marking a hyperparameter a group must give (``torch.optim.optimizer.required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_global_pre_hooks: OrderedDict = OrderedDict()
_global_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """A pre hook ``hook(optimizer, args, kwargs)`` run before every optimizer's step."""
    handle = RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """A post hook ``hook(optimizer, args, kwargs)`` run after every optimizer's step."""
    handle = RemovableHandle(_global_post_hooks)
    _global_post_hooks[handle.id] = hook
    return handle


def _hooked_step(func: Callable) -> Callable:
    """Wrap a subclass's ``step`` with the step hooks (PyTorch's ``profile_hook_step``)."""

    @functools.wraps(func)
    def step(self, *args, **kwargs):
        if not (self._optimizer_step_pre_hooks or _global_pre_hooks
                or self._optimizer_step_post_hooks or _global_post_hooks):
            return func(self, *args, **kwargs)
        for pre in chain(_global_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = pre(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        f"{func} must return None or a tuple of (new_args, new_kwargs), but got "
                        f"{result}.")
        out = func(self, *args, **kwargs)
        for post in chain(self._optimizer_step_post_hooks.values(), _global_post_hooks.values()):
            post(self, args, kwargs)
        return out

    step.hooked = True
    return step


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        from .._ops._dispatch import _type_name
        return f"ember.{_type_name(obj.dtype)}Tensor"
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in (None, "builtins") else f"{module}.{name}"


# ---- helpers shared by the optimizers ---------------------------------------------------------

def _scalar_np():
    """NumPy dtype of 0-dim state scalars (``step``): float64 under a float64 default dtype."""
    return np.float64 if D.get_default_dtype() is D.float64 else np.float32


def _scalar(value: float, fused: bool = False) -> Tensor:
    """A 0-dim state tensor such as ``step`` (float32 for fused, as PyTorch)."""
    return _make(np.array(value, dtype=np.float32 if fused else _scalar_np()), Version(), False,
                 None)


def _zeros(p: Tensor) -> Tensor:
    return _make(np.zeros_like(p._data), Version(), False, None)


def _full(p: Tensor, value) -> Tensor:
    return _make(np.full_like(p._data, value), Version(), False, None)


def _value(x) -> float:
    """A hyperparameter as a Python number (a 1-element tensor lr gives its stored value)."""
    return x._data.item() if isinstance(x, Tensor) else x


def _real(a: np.ndarray) -> np.ndarray:
    """A complex array as its real view with a trailing pair axis (``torch.view_as_real``)."""
    if a.dtype.kind != "c":
        return a
    return a[..., None].view(a.real.dtype)


def _lerp_(a: np.ndarray, b: np.ndarray, w: float) -> None:
    """``a.lerp_(b, w)`` with PyTorch's two-sided formula (exact at both ends)."""
    if abs(w) < 0.5:
        a += w * (b - a)
    else:
        np.subtract(b, (b - a) * (1 - w), out=a)


def _check_not_differentiable(defaults: dict) -> None:
    if defaults.get("differentiable"):
        raise NotImplementedError(
            "ember optimizers do not support differentiable=True: steps update raw arrays and "
            "record no graph.")


def _check_capturable(group: dict) -> None:
    if group.get("capturable"):
        raise AssertionError(
            "If capturable=True, params and state_steps must be on supported devices: "
            "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla'].")


def _check_fused(params) -> None:
    for p in params:
        if not p.is_floating_point():
            raise RuntimeError(
                "`fused=True` requires all the params to be floating point Tensors of supported "
                "devices: ['mps', 'cuda', 'xpu', 'hpu', 'cpu', 'mtia', 'privateuseone'] but "
                f"{p.dtype} and {p.device.type}")


def _check_lr(lr) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_betas(betas) -> None:
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _with_grad(group: dict) -> list:
    """The group's parameters that have a gradient (the others are skipped, as in PyTorch)."""
    return [p for p in group["params"] if p._grad is not None]


def _adam_moments(st: dict, g, b1: float, b2: float):
    """The Adam family's running moments updated in place from gradient ``g``:
    ``exp_avg`` lerps towards ``g`` by ``1 - b1``, ``exp_avg_sq`` towards ``g * g`` by
    ``1 - b2`` (as PyTorch's ``lerp_`` and ``mul_().addcmul_()``); returns both arrays."""
    m = _real(st["exp_avg"]._data)
    v = _real(st["exp_avg_sq"]._data)
    _lerp_(m, g, 1 - b1)
    v *= b2
    v += (1 - b2) * g * g
    return m, v


def _decayed_grad(p, maximize: bool, wd: float, lr: float = 0.0, decoupled: bool = False):
    """``p``'s data and gradient arrays after ``maximize`` and weight decay, as PyTorch's
    optimizers apply them: L2 decay adds ``wd * p`` to the gradient (a new array); decoupled
    decay (AdamW's) shrinks the parameter in place by ``1 - lr * wd``."""
    x, g = p._data, p._grad._data
    if maximize:
        g = -g
    if wd != 0:
        if decoupled:
            x *= 1 - lr * wd
        else:
            g = g + wd * x
    return x, g


def _closure(closure: Callable | None):
    """Evaluate a step's closure with grad enabled, as PyTorch does."""
    if closure is None:
        return None
    from ..autograd.grad_mode import enable_grad
    with enable_grad():
        return closure()


class Optimizer:
    """Base class for all optimizers (``torch.optim.Optimizer``)."""

    # optimizers whose 'step' state is a 0-dim tensor (PyTorch converts old float steps)
    _tensor_step = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + _typename(params))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self.defaults.setdefault("differentiable", False)
        if self._tensor_step:
            for group in self.param_groups:
                fused = bool(group.get("fused"))
                for p in group["params"]:
                    st = self.state.get(p)
                    if st and "step" in st and not isinstance(st["step"], Tensor):
                        st["step"] = _scalar(float(st["step"]), fused)

    def __repr__(self) -> str:
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"

    # ---- hooks -------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` before ``step``; may return new (args, kwargs)."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` after ``step``."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    @staticmethod
    def _add_hook(hooks: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook: Callable,
                                     prepend: bool = False) -> RemovableHandle:
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable,
                                      prepend: bool = False) -> RemovableHandle:
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable,
                                          prepend: bool = False) -> RemovableHandle:
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable,
                                           prepend: bool = False) -> RemovableHandle:
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---- state dicts -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``: the
        tensors are the optimizer's own (not copies), as in PyTorch."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        sd = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, sd)
            if result is not None:
                sd = result
        return sd

    @staticmethod
    def _cast_state(param: Tensor, value, key, fused_or_capturable: bool):
        if isinstance(value, Tensor):
            if key == "step":
                if fused_or_capturable and value.dtype is not D.float32:
                    return _make(value._data.astype(np.float32), Version(), False, None)
                return value
            if param.is_floating_point() and value.dtype is not param.dtype:
                return value.to(dtype=param.dtype)
            return value
        if isinstance(value, dict):
            return {k: Optimizer._cast_state(param, v, k, fused_or_capturable)
                    for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast_state(param, v, None, fused_or_capturable)
                               for v in value)
        return value

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict`` from this library or from PyTorch (via ember tensors)."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        special = {}
        for g in state_dict["param_groups"]:
            flag = bool(g.get("fused", False) or g.get("capturable", False))
            for i in g["params"]:
                special.setdefault(i, flag)
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast_state(param, v, None, special.get(k, False))
            else:
                state[k] = v

        def update(group, new):
            new["params"] = group["params"]
            if "param_names" in group and "param_names" not in new:
                new["param_names"] = group["param_names"]
            return new

        self.__setstate__({"state": state,
                           "param_groups": [update(g, s) for g, s in zip(groups, saved_groups)]})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # ---- gradients and groups ----------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: drop them (default) or zero them in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g._fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g._data[...] = 0
                    g._vc.v += 1

    def step(self, closure: Callable | None = None):
        """Perform a single optimization step (subclasses implement it)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own hyperparameters (``add_param_group``)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list "
                "instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for item in param_group["params"]:
            if isinstance(item, tuple):
                names.append(item[0])
                tensors.append(item[1])
            else:
                tensors.append(item)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (
                    p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization parameter "
                    f"{name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this "
                "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information", stacklevel=3)
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. cannot add param "
                    f"group {txt} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
