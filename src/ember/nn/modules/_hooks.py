"""Full backward hooks for modules (``torch.utils.hooks.BackwardHook``).

The module's tensor inputs and outputs pass through an identity autograd Function; a hook on
the outputs' node captures ``grad_output`` (and runs the backward pre-hooks), a hook on the
inputs' node then calls the user hooks with ``(module, grad_input, grad_output)``.
"""
from __future__ import annotations

import warnings

from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled


class BackwardHookFunction(Function):
    """Identity on its tensor arguments; only there to own a node hooks can attach to."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _pack_with_none(indices, values, size: int) -> tuple:
    res = [None] * size
    for idx, val in zip(indices, values):
        res[idx] = val
    return tuple(res)


class BackwardHook:
    """One forward call's backward hooks: inputs and outputs wrapped, hooks wired together."""

    def __init__(self, module, user_hooks: list, user_pre_hooks: list) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    def _set_user_hook(self, grad_fn) -> None:
        def hook(grad_input, _):
            if self.grad_outputs is None:
                return None
            res = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for h in self.user_hooks:
                out = h(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return tuple(res[i] for i in self.input_tensors_index)
        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args: tuple):
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in idx]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        if not isinstance(new, tuple):
            new = (new,)
        if len(new) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input "
                               "Tensors.")
        grad_fns = [t.grad_fn for t in new if t.grad_fn is not None
                    and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        if not grad_fns:
            raise RuntimeError("Error while setting up backward hooks. Please open an issue with "
                               "a code sample to reproduce this.")
        fn(grad_fns[0])
        arg_list = list(args)
        for i, v in zip(idx, new):
            arg_list[i] = v
        out = tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)
        return out, idx

    def setup_input_hook(self, args: tuple):
        res, idx = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = idx
        return res

    def setup_output_hook(self, args):
        def fn(grad_fn) -> None:
            def hook(_, grad_output):
                self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output,
                                                    self.n_outputs)
                if self.user_pre_hooks:
                    expected = len(self.grad_outputs)
                    for h in self.user_pre_hooks:
                        new = h(self.module, self.grad_outputs)
                        if new is None:
                            continue
                        if len(new) != expected:
                            raise RuntimeError(
                                "Backward pre hook returned an invalid number of grad_output, "
                                f"got {len(new)}, but expected {expected}")
                        self.grad_outputs = new
                local = self.grad_outputs
                if self.input_tensors_index is None:
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with respect "
                        "to module outputs since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html#torch."
                        "nn.Module.register_full_backward_hook for more details.", stacklevel=5)
                    grad_inputs = _pack_with_none([], [], self.n_inputs)
                    for h in self.user_hooks:
                        res = h(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple)
                                                    and all(e is None for e in res)):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient "
                                "should always return None or None for all gradients.")
                    self.grad_outputs = None
                if local is not None:
                    return tuple(local[i] for i in self.output_tensors_index)
                return None
            grad_fn.register_hook(hook)

        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = idx
        return res if is_tuple else res[0]
