"""``ember.autograd``: reverse-mode differentiation (backward, grad) and the grad modes."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, Version, _make
from . import forward_ad, functional, graph, profiler  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .engine import _as_tensor, run_backward
from .function import Function, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = [
    "Function",
    "GradcheckError",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
]


def _tensors(x, what: str) -> tuple:
    if isinstance(x, Tensor):
        return (x,)
    if x is None:
        return ()
    return tuple(x)


def _root_edge(t: Tensor, i: int):
    if t._fn is not None:
        return (t._fn, t._onr)
    if t._rg:
        from .._ops._registry import acc_node
        return (acc_node(t), 0)
    raise RuntimeError(
        f"element {i} of tensors does not require grad and does not have a grad_fn")


def _input_edge(t: Tensor) -> tuple:
    """(node, output_nr, tensor) for a tensor gradients are asked for. A view made in no_grad
    mode of a tensor that requires grad requires grad too but has neither history nor a grad
    accumulator: as in PyTorch, no gradient ever reaches it (None, or "not used")."""
    if not t.requires_grad:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._onr, t)
    if t._rg:
        from .._ops._registry import acc_node
        return (acc_node(t), 0, t)
    return (None, 0, t)


def _root_grads(outputs, grad_outputs, create_graph: bool, is_grad: bool) -> list:
    from .._size import Size
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out._rg:
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.is_floating_point():
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{out.dtype}")
            g = _make(np.ones_like(out._data), Version(), False, None)
        elif not isinstance(g, Tensor):
            raise TypeError(
                "gradients can be either Tensors or None, but got " + type(g).__name__)
        elif g._data.shape != out._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)!r} and "
                f"output[{i}] has a shape of {Size(out._data.shape)!r}.")
        elif g.is_complex() != out.is_complex():
            raise RuntimeError(
                "For complex Tensors, both grad_output and output are required to have the same "
                f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output"
                f"[{i}] has a dtype of {out.dtype}.")
        grads.append(g if create_graph else g._data)
    return grads


def _grad_list(outputs, grad_tensors) -> list:
    if grad_tensors is None:
        return [None] * len(outputs)
    return list(_tensors(grad_tensors, "grad_tensors"))


def _check_count(outputs, grads) -> None:
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables=None, inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the leaves' ``.grad`` (``torch.autograd.backward``).
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _tensors(tensors, "tensors")
    if inputs is not None:
        inputs = _tensors(inputs, "inputs")
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    gts = _grad_list(outputs, grad_tensors)
    grads = _root_grads(outputs, gts, create_graph, False)
    _check_count(outputs, gts)
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    in_edges = None
    if inputs is not None:
        in_edges = []
        for t in inputs:
            in_edges.append(_input_edge(t))
    run_backward(roots, grads, retain_graph, create_graph, in_edges, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs`` (``torch.autograd.grad``).

    With ``is_grads_batched=True`` the first dim of every ``grad_outputs`` entry is a batch of
    cotangents, and each result gets the same leading batch dim: one backward pass carries the
    whole batch through the VJPs (see ``ember._batched``)."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _tensors(outputs, "outputs")
    ins = _tensors(inputs, "inputs")
    if len(ins) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    gos = _grad_list(outs, grad_outputs)
    if is_grads_batched:
        grads, n_batch = _batched_root_grads(outs, gos)
    else:
        grads = _root_grads(outs, gos, create_graph, True)
    _check_count(outs, gos)
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(outs):
        if not t._rg:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn")
    in_edges = []
    for t in ins:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): argument 'inputs' must be tuple of Tensors, not "
                            f"{type(t).__name__}")
        in_edges.append(_input_edge(t))
    roots = [_root_edge(t, i) for i, t in enumerate(outs)]
    if is_grads_batched:
        res = _batched_grad(roots, grads, n_batch, ins, in_edges, retain_graph, create_graph)
    else:
        res = run_backward(roots, grads, retain_graph, create_graph, in_edges, accumulate=False)
    out = []
    for i, (g, t) in enumerate(zip(res, ins)):
        if g is None:
            if materialize_grads:
                from .._ops.creation import zeros_like
                out.append(zeros_like(t))
                continue
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior.")
            out.append(None)
        else:
            out.append(_as_tensor(g))
    return tuple(out)


def _batched_root_grads(outputs, grad_outputs) -> tuple:
    """The checks of ``grad(is_grads_batched=True)``, PyTorch's messages; (grads, batch size)."""
    from .._size import Size
    n_batch = None
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            _root_grads((out,), (None,), False, True)   # PyTorch's implicit-grad errors first
            raise ValueError(
                "vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that "
                "input is a Tensor of dimensionality 0 so expected in_dim to satisfy 0 <= in_dim "
                "< 0.")
        if not isinstance(g, Tensor):
            raise TypeError(
                "gradients can be either Tensors or None, but got " + type(g).__name__)
        if g._data.shape[1:] != out._data.shape:
            # (PyTorch prints the shape of grad_output[i][0] without its first dim)
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {Size(g._data.shape[2:])!r} and "
                f"output[{i}] has a shape of {Size(out._data.shape)!r}. If you only want some "
                "tensors in `grad_output` to be considered batched, consider using vmap.")
        if g.is_complex() != out.is_complex():
            raise RuntimeError(
                "For complex Tensors, both grad_output and output are required to have the same "
                f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output"
                f"[{i}] has a dtype of {out.dtype}.")
    sizes = [g._data.shape[0] for g in grad_outputs]
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    n_batch = sizes[0] if sizes else 0
    return list(grad_outputs), n_batch


def _batched_grad(roots, gos, n_batch, ins, in_edges, retain_graph, create_graph) -> list:
    """One batched backward pass; results with the batch dim first (None where unused)."""
    from .._batched import BatchedArray, to_result
    if create_graph:
        # differentiable results need the Tensor path, which has no batched form: one backward
        # per batch element (the graph kept between them), stacked by a differentiable stack
        from .._ops.joining import stack
        per = []
        for b in range(n_batch):
            keep = True if b < n_batch - 1 else retain_graph
            per.append(run_backward(roots, [g[b] for g in gos], keep, True, in_edges,
                                    accumulate=False))
        res = []
        for i in range(len(ins)):
            col = [r[i] for r in per]
            if n_batch == 0 or all(c is None for c in col):
                res.append(None if n_batch else _empty_batch(ins[i]))
                continue
            col = [c if c is not None else _as_t(np.zeros_like(ins[i]._data)) for c in col]
            res.append(stack([_as_t(c) for c in col]))
        return res
    grads = [BatchedArray(g._data) for g in gos]
    res = run_backward(roots, grads, retain_graph, False, in_edges, accumulate=False,
                       batched=True)
    return [None if g is None else to_result(g, n_batch, t._data.shape, t._data.dtype)
            for g, t in zip(res, ins)]


def _as_t(x) -> Tensor:
    return x if isinstance(x, Tensor) else _make(np.asarray(x), Version(), False, None)


def _empty_batch(t: Tensor) -> Tensor:
    return _make(np.zeros((0,) + t._data.shape, t._data.dtype), Version(), False, None)


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """The deprecated wrapper (``torch.autograd.Variable``): every tensor is a Variable, and
    ``Variable(t, requires_grad=...)`` is a new leaf sharing ``t``'s data."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = _make(data._data, Version(), False, None)
        if requires_grad:
            t.requires_grad_(True)
        return t
