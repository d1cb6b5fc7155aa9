"""Saved tensors: pack/unpack hooks, the ``_saved_*`` attributes of nodes, and the contexts of
``ember.autograd.graph`` that act on saved tensors."""
from __future__ import annotations

import contextlib

from .grad_mode import STATE


class _Packed:
    """A saved tensor that went through a pack hook; unpacked through the matching hook."""

    __slots__ = ("obj", "unpack_hook", "is_output", "k", "orig")

    def __init__(self, obj, unpack_hook, is_output, k, orig=None):
        self.obj = obj
        self.unpack_hook = unpack_hook
        self.is_output = is_output
        self.k = k
        self.orig = orig   # a saved input: its autograd identity is given to the unpacked value

    def unpack(self, node, graph: bool):
        from .._tensor import Tensor
        t = self.unpack_hook(self.obj)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(t).__name__}")
        if not graph:
            return t._data
        from .._tensor import _make
        if self.is_output:
            if t._fn is not node:
                t = _make(t._data, t._vc, True, node, self.k)
        elif self.orig is not None and t is not self.orig:
            # as PyTorch: the unpacked data stands for the saved input in the graph
            o = self.orig
            r = _make(t._data, o._vc, o._rg, o._fn, o._onr)
            if o._rg and o._fn is None:
                from .._ops._registry import acc_node
                acc_node(o)
                r._acc = o._acc
            t = r
        return t


def pack_with(pack_hook, unpack_hook, t, is_output: bool = False, k: int = 0) -> _Packed:
    """Run a pack hook as PyTorch does: in no-grad mode (so it records nothing and no hooks
    apply to what it computes)."""
    prev = STATE.grad
    STATE.grad = False
    try:
        obj = pack_hook(t)
    finally:
        STATE.grad = prev
    return _Packed(obj, unpack_hook, is_output, k, None if is_output else t)


def on_record(node, st) -> None:
    """Slow-path work when recording a node: anomaly traceback, saved-tensor pack hooks."""
    if st.anomaly:
        from .anomaly_mode import record_trace
        record_trace(node)
    if st.saved_hooks:
        from .._tensor import _make
        pack, unpack = st.saved_hooks[-1]
        new = list(node._saved)
        for i in hook_order(node):
            e = new[i]
            if type(e) is tuple and len(e) == 2:
                new[i] = pack_with(pack, unpack, e[0])
            elif type(e) is tuple:
                data, vc, ver, k = e[:4]
                if k not in node.op.diff_out:   # indices: a plain tensor, as PyTorch's
                    new[i] = pack_with(pack, unpack, _make(data, vc, False, None))
                    continue
                # the hook sees the output itself: requires_grad, with this node as grad_fn
                new[i] = pack_with(pack, unpack, _make(data, vc, True, node, k), True, k)
        node._saved = new


def hook_order(node) -> list:
    """The order PyTorch packs and unpacks a node's saved tensors in: saved inputs by name
    (``other`` before ``self``), then saved outputs."""
    n = len(node._saved)
    if node.op is None or n < 2:
        return list(range(n))
    names = _saved_names(node)[:n]
    n_in = len(node.op.saves)
    return sorted(range(n_in), key=lambda i: str(names[i])) + list(range(n_in, n))


_DEFAULT_INPUT_NAMES = ("self", "other", "third", "fourth")


def _saved_names(node) -> list:
    op = node.op
    if op is None:
        return []
    if op.names is not None:
        return list(op.names)
    names = [_DEFAULT_INPUT_NAMES[i] if i < 4 else f"input{i}" for i in op.saves]
    if op.save_out:
        names += (["result"] if op.save_out is True and len(op.diff_out) == 1 else
                  [f"result{k}" for k in op.saved_outs])
    return names


def saved_attribute(node, name: str):
    """``node._saved_<name>`` (the value) and ``node._raw_saved_<name>`` (a SavedTensor with
    ``register_hooks``) for a built-in node, as PyTorch exposes them. ``<x>_sym_sizes``,
    ``<x>_sym_strides`` and ``<x>_sym_numel`` of a saved tensor ``x`` are derived from it."""
    raw = name.startswith("_raw_saved_")
    key = name[len("_raw_saved_"):] if raw else name[len("_saved_"):]
    names = _saved_names(node)
    if key not in names:
        if not raw:
            for suffix in ("_sym_sizes", "_sym_strides", "_sym_numel"):
                base = key[:-len(suffix)]
                if key.endswith(suffix) and base in names and not base.endswith("_sym"):
                    return _derived(node, base, suffix, names)
            if key.endswith("_sym_numel") and key[:-5] + "sizes" in names:
                n = 1
                for s in saved_attribute(node, "_saved_" + key[:-5] + "sizes"):
                    n *= s
                return n
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
    i = names.index(key)
    n_saved = len(node.op.saves) + len(node.op.saved_outs)
    if i >= n_saved:
        v = node._params[i - n_saved]
        return tuple(int(s) for s in v) if key.endswith("_sym_sizes") else v
    if node._saved is None:
        from .graph import FREED
        raise RuntimeError(FREED)
    if raw:
        return SavedTensor(node, i)
    from .engine import unpack_saved
    v = unpack_saved(node, True)[i]
    if isinstance(v, (int, float, complex)) and not isinstance(v, bool) \
            and not type(node).__name__.startswith("Pow"):
        from .. import _dtype as D
        from .._ops.creation import tensor
        # PyTorch saves a Python number operand as a wrapped 0-d tensor
        v = tensor(v, dtype=D.complex128 if isinstance(v, complex) else
                   D.float64 if isinstance(v, float) else None)
    return v


def _derived(node, base: str, suffix: str, names):
    from .._tensor import Tensor
    t = saved_attribute(node, "_saved_" + base)
    if not isinstance(t, Tensor):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                             f"'_saved_{base}{suffix}'")
    if suffix == "_sym_sizes":
        return tuple(t.shape)
    if suffix == "_sym_strides":
        return t.stride()
    return t.numel()


def saved_names(node) -> list:
    """The ``_saved_*`` and ``_raw_saved_*`` attributes a node offers (for ``dir``)."""
    names = [n for n in _saved_names(node) if isinstance(n, str)]
    op = node.op
    n_saved = 0 if op is None else len(op.saves) + len(op.saved_outs)
    out = ["_saved_" + n for n in names]
    out += ["_raw_saved_" + n for n in names[:n_saved]]
    return out


class SavedTensor:
    """One saved value of a node; ``register_hooks`` packs it now and unpacks it when used."""

    def __init__(self, node, index: int):
        self._node = node
        self._index = index

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        node, i = self._node, self._index
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments: pack_hook and "
                            "unpack_hook must be callables")
        if node._saved is None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved variables after calling "
                "backward.")
        e = node._saved[i]
        if isinstance(e, _Packed):
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been set. "
                "Hint: only one pair of hooks is allowed at a time.")
        from .._tensor import _make
        if type(e) is tuple and len(e) == 2:
            packed = pack_with(pack_hook, unpack_hook, e[0])
        elif type(e) is tuple:
            packed = pack_with(pack_hook, unpack_hook, _make(e[0], e[1], False, None), True, e[3])
        else:
            raise TypeError(f"saved value {e!r} is not a tensor")
        saved = list(node._saved)
        saved[i] = packed
        node._saved = saved


class saved_tensors_hooks:
    """Pack every tensor saved for backward with ``pack_hook``; unpack with ``unpack_hook``."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if STATE.saved_hooks_disabled is not None:
            raise RuntimeError(STATE.saved_hooks_disabled)
        STATE.saved_hooks.append((self.pack_hook, self.unpack_hook))
        STATE.refresh()
        return self

    def __exit__(self, *exc):
        STATE.saved_hooks.pop()
        STATE.refresh()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors on the CPU (a plain copy here: ember has only the CPU)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        super().__init__(lambda t: (t.device, t.clone() if t.is_meta is False else t),
                         lambda p: p[1])


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Refuse saved-tensor hooks in this block: entering ``saved_tensors_hooks`` raises
    ``error_message`` (and so does entering this while hooks are active)."""
    if STATE.saved_hooks:
        raise RuntimeError(error_message)
    prev = STATE.saved_hooks_disabled
    STATE.saved_hooks_disabled = error_message
    try:
        yield
    finally:
        STATE.saved_hooks_disabled = prev


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    """Call ``fn`` once per backward pass over several tensors' gradients.

    mode "all": ``fn(grads)`` after the pass, with None for tensors whose gradient was not
    computed in it; mode "any": ``fn(grad)`` with the first of them to be computed.
    """
    import threading

    from .engine import current_backward_id, will_execute
    from .graph import RemovableHandle
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()

    if mode == "all":
        count, buffer, nb = {}, {}, [0]

        def grad_node(t):
            if t._fn is not None:
                return t.grad_fn
            from .._ops._registry import acc_node
            return acc_node(t)
        nodes = [grad_node(t) if t.requires_grad else None for t in tensors]

        def make_hook(i):
            def hook(grad):
                bid = current_backward_id()
                with lock:
                    cur = count.get(bid, 0)
                    count[bid] = cur + 1
                    buf = buffer.setdefault(bid, [None] * len(tensors))
                    if cur == 0:
                        nb[0] = sum(n is not None and will_execute(n) for n in nodes)
                buf[i] = grad
                if cur == nb[0] - 1:
                    del count[bid], buffer[bid]
                    fn(buf)
            return hook
        handles = [t.register_hook(make_hook(i)) for i, t in enumerate(tensors)]
    else:
        ran = {}

        def any_hook(grad):
            bid = current_backward_id()
            with lock:
                prev, ran[bid] = ran.get(bid, False), True
            if not prev:
                fn(grad)
        handles = [t.register_hook(any_hook) for t in tensors if t.requires_grad]

    class _Multi(RemovableHandle):
        def remove(self) -> None:
            for h in handles:
                h.remove()
    return _Multi()


class allow_mutation_on_saved_tensors:
    """Inside this context, an in-place change to a tensor saved for backward first copies the
    original, so backward still sees the saved value instead of raising the version error."""

    def __enter__(self):
        if STATE.mutation_ctx is not None:
            raise RuntimeError(
                "allow_mutation_on_saved_tensors contexts cannot be nested")
        self._records = {}
        self._closed = False
        self._hooks = saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        STATE.mutation_ctx = self
        return self

    def __exit__(self, *exc):
        self._hooks.__exit__(*exc)
        STATE.mutation_ctx = None
        self._closed = True
        self._records = {}

    def _pack(self, t):
        rec = [t, None]
        self._records.setdefault(id(t._vc), []).append(rec)
        return rec

    def _unpack(self, rec):
        if self._closed:
            raise AssertionError(
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin "
                "which the graph was originally recorded.")   # sic: PyTorch's message
        return rec[1] if rec[1] is not None else rec[0]

    def before_write(self, t) -> None:
        """Called by every in-place op before it writes into ``t``."""
        from .._tensor import Version, _make
        for rec in self._records.get(id(t._vc), ()):
            if rec[1] is None:
                s = rec[0]
                rec[1] = _make(s._data.copy(), Version(), s._rg, s._fn, s._onr)
