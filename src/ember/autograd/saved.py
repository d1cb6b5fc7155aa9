"""Saved tensors: pack/unpack hooks, the ``_saved_*`` attributes of nodes, and the contexts of
``ember.autograd.graph`` that act on saved tensors."""
from __future__ import annotations

import contextlib

from .grad_mode import STATE


class _Packed:
    """A saved tensor that went through a pack hook; unpacked through the matching hook."""

    __slots__ = ("obj", "unpack_hook", "is_output", "k")

    def __init__(self, obj, unpack_hook, is_output, k):
        self.obj = obj
        self.unpack_hook = unpack_hook
        self.is_output = is_output
        self.k = k

    def unpack(self, node, graph: bool):
        t = self.unpack_hook(self.obj)
        if self.is_output and graph and t._fn is None:
            from .._tensor import _make
            t = _make(t._data, t._vc, True, node, self.k)
        return t if graph else t._data


def on_record(node, st) -> None:
    """Slow-path work when recording a node: anomaly traceback, saved-tensor pack hooks."""
    if st.anomaly:
        from .anomaly_mode import record_trace
        record_trace(node)
    if st.saved_hooks:
        from .._tensor import _make
        pack, unpack = st.saved_hooks[-1]
        new = []
        for e in node._saved:
            if type(e) is tuple and len(e) == 2:
                new.append(_Packed(pack(e[0]), unpack, False, 0))
            elif type(e) is tuple:
                data, vc, ver, k = e
                new.append(_Packed(pack(_make(data, vc, False, None)), unpack, True, k))
            else:
                new.append(e)
        node._saved = new


def saved_attribute(node, name: str):
    """``node._saved_<name>`` / ``node._raw_saved_<name>`` for a built-in node."""
    raise AttributeError(
        f"'{type(node).__name__}' object has no attribute '{name}'")


class saved_tensors_hooks:
    """Pack every tensor saved for backward with ``pack_hook``; unpack with ``unpack_hook``."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if STATE.saved_hooks_disabled is not None:
            raise RuntimeError(STATE.saved_hooks_disabled)
        STATE.saved_hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        STATE.saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors on the CPU (a plain copy here: ember has only the CPU)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        super().__init__(lambda t: (t.device, t.clone() if t.is_meta is False else t),
                         lambda p: p[1])


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    prev = STATE.saved_hooks_disabled
    STATE.saved_hooks_disabled = error_message
    try:
        yield
    finally:
        STATE.saved_hooks_disabled = prev


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    raise NotImplementedError(
        "register_multi_grad_hook is not built yet in ember (issue 3)")


def allow_mutation_on_saved_tensors():
    raise NotImplementedError(
        "allow_mutation_on_saved_tensors is not built yet in ember (issue 3)")
