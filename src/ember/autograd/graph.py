"""The backward graph: nodes, leaf accumulators and saved tensors.

A node links to the nodes of its inputs (``_next``), never to tensors, and holds what its
operator saved for backward. Saving an op's own output keeps only the array and the version
counter, and re-attaches ``grad_fn`` on unpack, so no tensor -> node -> tensor cycle forms and a
finished graph is freed by reference counting alone.
"""
from __future__ import annotations

import itertools
import re
import threading

from .grad_mode import STATE

__all__ = ["Node", "increment_version", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "register_multi_grad_hook",
           "allow_mutation_on_saved_tensors"]

_seq = itertools.count()
_ACC_SEQ = 2 ** 62
GRAD_LOCK = threading.Lock()

FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
         "after they have already been freed). Saved intermediate values of the graph are freed "
         "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
         "backward through the graph a second time or if you need to access saved tensors after "
         "calling backward.")


class _Hooks:
    """A node's rarely used parts, allocated on first use."""

    __slots__ = ("pre", "post", "tensor_pre", "retains", "metadata", "trace", "name_override")

    def __init__(self):
        self.pre = {}          # handle id -> fn(grad_outputs)
        self.post = {}         # handle id -> fn(grad_inputs, grad_outputs)
        self.tensor_pre = {}   # output_nr -> {handle id: fn(grad)}
        self.retains = {}      # output_nr -> fn(grad), run after the tensor hooks
        self.metadata = None
        self.trace = None      # anomaly mode: the forward traceback


_hook_ids = itertools.count()


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters (``torch.utils.hooks``)."""

    __slots__ = ("_dicts", "id")

    def __init__(self, *dicts):
        self.id = next(_hook_ids)
        self._dicts = dicts

    def remove(self) -> None:
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class Node:
    """A function in the backward graph (``torch.autograd.graph.Node``).

    Slots: ``_next`` holds one edge per differentiable input, ``(node, input_nr, shape, dtype)``
    with ``node`` None where the input needs no gradient; ``_saved`` what the forward saved (None
    once freed); ``_params`` the op's non-tensor arguments; ``_seq`` the creation order that
    decides the engine's ready order.
    """

    __slots__ = ("_next", "_saved", "_params", "_seq", "_h", "__weakref__")
    op = None
    n_out = 1
    # True where ``_params`` hold what PyTorch saves as tensors (a selecting op's indices): the
    # node is released after it ran like one that saved tensors, so a second backward raises
    params_saved = False

    def __init__(self):
        self._seq = next(_seq)
        self._h = None
        if STATE.anomaly:
            from .anomaly_mode import record_trace
            record_trace(self)

    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        return tuple((e[0], e[1]) for e in self._next)

    @property
    def metadata(self) -> dict:
        h = self._hooks()
        if h.metadata is None:
            h.metadata = {}
        return h.metadata

    def _hooks(self) -> _Hooks:
        h = self._h
        if h is None:
            h = self._h = _Hooks()
        return h

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` after the node ran; may return new grad_inputs."""
        h = self._hooks()
        handle = RemovableHandle(h.post)
        h.post[handle.id] = fn
        return handle

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` before the node runs; may return new grad_outputs."""
        h = self._hooks()
        handle = RemovableHandle(h.pre)
        h.pre[handle.id] = fn
        return handle

    def _register_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        d = self._hooks().tensor_pre.setdefault(output_nr, {})
        handle = RemovableHandle(d)
        d[handle.id] = fn
        return handle

    def _sequence_nr(self) -> int:
        return self._seq

    def __call__(self, *grads):
        from .engine import call_node
        return call_node(self, grads)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def __dir__(self):
        from .saved import saved_names
        return sorted(set(object.__dir__(self)) | set(saved_names(self)))

    def __getattr__(self, name: str):
        if name.startswith("_saved_") or name.startswith("_raw_saved_"):
            from .saved import saved_attribute
            return saved_attribute(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


class AccumulateGrad(Node):
    """The sink for a leaf tensor's gradient; the leaf keeps only a weak reference to it."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        # the highest priority in the ready queue, as in PyTorch: gradients reach .grad (and
        # the leaf's hooks) as soon as they are complete
        self._seq = _ACC_SEQ
        self._h = None
        self.variable = variable
        self._next = ()
        self._saved = ()
        self._params = ()

    def name(self) -> str:
        return "ember::autograd::AccumulateGrad"

    def __lt__(self, other) -> bool:
        # the engine's ready queue holds (-sequence_nr, node): accumulators share one priority,
        # and a tie must compare equal so that heapq breaks it exactly as PyTorch's binary heap
        # does (the same sift algorithm), by push order rather than by memory address
        return False


def _short_name(node) -> str:
    """A node's name as PyTorch's messages print it: ``MulBackward0`` -> ``Mul``,
    ``AcoshBackward1`` -> ``Acosh1``."""
    return re.sub(r"Backward(\d*)$", lambda m: m.group(1).lstrip("0"), node.name())


def version_error(t, saved_version: int, node) -> RuntimeError:
    """PyTorch's message for a saved tensor modified in place after it was saved."""
    shape = ", ".join(str(s) for s in t._data.shape)
    legacy = t.dtype._legacy
    if t.dtype.is_complex or legacy == "BFloat16Tensor":   # no legacy class: the CPU type name
        legacy = "CPU" + legacy[:-6] + "Type"
    else:
        legacy = "ember." + legacy
    what = f"[{legacy} [{shape}]]"
    if node is not None:
        what += f", which is output {t._onr if node is t._fn else 0} of {_short_name(node)},"
    if STATE.anomaly:
        hint = ("Hint: the backtrace further above shows the operation that failed to compute "
                "its gradient. The variable in question was changed in there or anywhere later. "
                "Good luck!")
    else:
        hint = ("Hint: enable anomaly detection to find the operation that failed to compute its "
                "gradient, with ember.autograd.set_detect_anomaly(True, check_nan=False).")
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {what} is at version {t._vc.v}; expected version {saved_version} instead. "
        + hint)


def saved_version_error(node) -> RuntimeError:
    """The error for the modified saved tensor PyTorch's unpacking meets first: a node's saved
    inputs in the alphabetical order of their names, then its saved outputs."""
    from .._tensor import _make
    from .saved import _saved_names
    names = _saved_names(node) if getattr(node, "op", None) is not None else []
    bad = []
    for i, e in enumerate(node._saved or ()):
        if type(e) is not tuple:
            continue
        name = names[i] if i < len(names) and isinstance(names[i], str) else ""
        if len(e) == 2:
            if e[0]._vc.v != e[1]:
                bad.append((0, name, i, e[0], e[1], None))
        elif e[1].v != e[2]:
            if node.op is None or e[3] in node.op.diff_out:
                bad.append((1, name, i, _make(e[0], e[1], True, node, e[3]), e[2], node))
            else:   # an output autograd does not track (indices): no "output k of" part
                bad.append((1, name, i, _make(e[0], e[1], False, None), e[2], None))
    kind, _, _, t, ver, fn = min(bad, key=lambda b: b[:3])
    # only the tensor met first is asked for its grad_fn: asking another (a multi-output view
    # whose base changed) could raise instead
    return version_error(t, ver, t.grad_fn if kind == 0 else fn)


def increment_version(tensor) -> None:
    """Bump a tensor's version counter, as an in-place op would."""
    for t in tensor if isinstance(tensor, (list, tuple)) else (tensor,):
        t._vc.v += 1


from .saved import (  # noqa: E402
    allow_mutation_on_saved_tensors,
    disable_saved_tensors_hooks,
    register_multi_grad_hook,
    save_on_cpu,
    saved_tensors_hooks,
)
