"""The autograd profiler (``torch.autograd.profiler``): time every ember operator, backward node
and ``record_function`` range run on the profiling thread.

It costs nothing while no profile is active: entering the first ``profile`` swaps each
operator's ``fwd`` and ``vjp`` (every ``Op`` in ``_registry.ALL_OPS``, and any ``Op`` created
while profiling) for timed wrappers, and leaving the last one puts the originals back, so the
operator attributes are then exactly what they were. The engine's hooks for custom ``Function``
nodes and leaf accumulation are swapped the same way.

Names follow PyTorch: forward operators as ``aten::<op>`` (``aten::mul``, ``aten::mm``...),
backward nodes by their ``grad_fn`` class name (``MulBackward0``) inside an
``autograd::engine::evaluate_function: MulBackward0`` range. Events are thread-local: only
operators run on the thread that entered the profile are recorded, as in PyTorch.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import warnings
import weakref
from time import perf_counter_ns

from .profiler_util import (
    DeviceType,
    EventList,
    FormattedTimesMixin,
    FunctionEvent,
    FunctionEventAvg,
    Interval,
    Kernel,
    StringTable,
)

__all__ = [
    "DeviceType",
    "EnforceUnique",
    "EventList",
    "FormattedTimesMixin",
    "FunctionEvent",
    "FunctionEventAvg",
    "Interval",
    "Kernel",
    "StringTable",
    "emit_itt",
    "emit_nvtx",
    "load_nvprof",
    "parse_nvprof_trace",
    "profile",
    "record_function",
]

_get_ident = threading.get_ident
_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_EVAL = "autograd::engine::evaluate_function: "

# ---------------------------------------------------------------------------------------------
# recording state

_STATES: dict = {}          # thread ident -> _ThreadState, for threads with an active profile
_LOCK = threading.RLock()
_ACTIVE = [0]               # number of profiles active in all threads
_SAVED: list = []           # (op, orig fwd, wrapped fwd, orig vjp, wrapped vjp)
_PATCHES: list = []         # (object, attribute, original) swapped while active
_ids = iter(range(1, 1 << 62))


class _Rec:
    """One range as recorded (turned into a ``FunctionEvent`` when results are read)."""

    __slots__ = (
        "args",
        "end",
        "flops",
        "id",
        "mem",
        "name",
        "parent",
        "scope",
        "seq",
        "shapes",
        "stack",
        "start",
        "user",
    )

    def __init__(self, name, scope, shapes, parent):
        self.id = next(_ids)
        self.name = name
        self.scope = scope
        self.shapes = shapes
        self.parent = parent
        self.end = None
        self.mem = 0
        self.flops = 0
        self.stack = None
        self.user = False
        self.args = None
        self.seq = -1


class _ThreadState:
    """The records of one thread while at least one profile is active on it."""

    def __init__(self):
        self.records: list = []
        self.stack: list = []
        self.depth = 0
        self.jvp = 0
        self.shapes = self.memory = self.with_stack = self.flops = False
        self.tid = threading.get_native_id()
        self.fins: list = []
        self.active = True

    def open(self, name, scope=0, shapes=None):
        st = self.stack
        r = _Rec(name, scope, shapes if shapes is not None else [], st[-1] if st else None)
        if self.with_stack:
            r.stack = _user_stack()
        self.records.append(r)
        st.append(r)
        r.start = perf_counter_ns()
        return r

    def close(self, r):
        r.end = perf_counter_ns()
        st = self.stack
        if st and st[-1] is r:
            st.pop()
        elif r in st:
            st.remove(r)

    def run_fwd(self, op, name, orig, args):
        r = self.open(name, 0, _shapes(args) if self.shapes else None)
        try:
            out = orig(*args)
        finally:
            self.close(r)
        if self.flops:
            r.flops = _flops(op.name, args, out)
        if self.memory and not op.is_view:
            r.mem += self.track(out, args)
        return out

    def run_node(self, name, fn, args, grads):
        outer = self.open(_EVAL + name)
        inner = self.open(name, 1, _grad_shapes(grads) if self.shapes else None)
        try:
            res = fn(*args)
        finally:
            self.close(inner)
            self.close(outer)
        if self.memory and isinstance(res, tuple):
            ins = list(args)
            for a in args:
                if isinstance(a, (tuple, list)):
                    ins.extend(a)
            inner.mem += self.track(res, ins)
        return res

    def track(self, out, inputs) -> int:
        """Bytes newly allocated by ``out`` (arrays sharing no memory with ``inputs``); their
        release is recorded when the buffer dies while this profile is active."""
        import numpy as np
        total = 0
        for a in (out if isinstance(out, (tuple, list)) else (out,)):
            if type(a) is not np.ndarray:
                if isinstance(a, np.generic):
                    total += a.nbytes   # a fresh scalar: counted, its release not seen
                continue
            if a.nbytes == 0:
                continue
            if a.base is not None and any(type(x) is np.ndarray and np.may_share_memory(a, x)
                                          for x in inputs):
                continue
            root = a
            while isinstance(root.base, np.ndarray):
                root = root.base
            n = root.nbytes
            total += n
            try:
                self.fins.append(weakref.finalize(root, _on_free, self, n))
            except TypeError:
                pass
        return total


def _on_free(ts, nbytes):
    if not ts.active or _STATES.get(_get_ident()) is not ts:
        return
    st = ts.stack
    if st:
        st[-1].mem -= nbytes
    else:
        r = _Rec("[memory]", 0, [], None)
        r.start = r.end = perf_counter_ns()
        r.mem = -nbytes
        ts.records.append(r)


def _user_stack() -> list:
    """``file(line): function`` for each frame outside ember, innermost first."""
    out = []
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_EMBER_DIR):
            out.append(f"{fn}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return out


def _shape_of(x):
    s = getattr(x, "shape", None)
    return list(s) if s is not None and not isinstance(x, (int, float, complex, bool)) else []


def _shapes(args) -> list:
    return [_shape_of(a) for a in args]


def _grad_shapes(grads) -> list:
    g = grads[1]
    if isinstance(g, (tuple, list)):
        return [_shape_of(x) for x in g]
    return [_shape_of(g)]


# ---------------------------------------------------------------------------------------------
# names and FLOPs

_ATEN = {
    "sum_dim": "sum", "mean_dim": "mean", "prod_dim": "prod", "max_dim": "max",
    "min_dim": "min", "squeeze_dims": "squeeze", "squeeze_dim": "squeeze",
    "reshape_copy": "_unsafe_view", "matmul_view": "_unsafe_view", "matmul_squeeze": "squeeze",
    "matmul_t": "transpose", "matmul_clone": "clone", "take_flat": "as_strided",
    "put_flat": "copy_", "index_backward": "_index_put_impl_", "gather_backward": "scatter_add",
    "scatter_value": "scatter", "scatter_value_reduce": "scatter", "index_add_zeros": "index_add",
    "masked_select_backward": "masked_scatter", "take_backward": "put", "to_copy": "_to_copy",
    "embed": "slice_backward", "floor_divide_": "floor_divide_",
}
_SUFFIX = re.compile(r"_(t|tt|st|s|sb|mode|tensor|dim|dims)$")


def _aten_name(name: str) -> str:
    """PyTorch's operator name for an ember ``Op`` name."""
    n = _ATEN.get(name)
    if n is None:
        n = _SUFFIX.sub("", name)
    return "aten::" + n


_MM = {"mm", "bmm", "matmul", "mv", "dot", "vdot", "addmm", "addmv", "baddbmm", "addbmm",
       "inner", "outer", "ger", "linear"}


def _flops(name, args, out) -> int:
    """FLOPs as PyTorch estimates them: 2*M*N*K for the matrix products, 2 * output elements *
    (input channels / groups * kernel size) for convolutions, one per output element for
    ``mul``/``add``; 0 for other ops."""
    import numpy as np
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    o = out[0] if isinstance(out, tuple) else out
    size = getattr(o, "size", 1)
    try:
        if name in _MM:
            mats = [a for a in arrays if a.ndim >= 1]
            if name in ("addmm", "addmv", "baddbmm", "addbmm", "linear") and len(mats) >= 3:
                a = mats[1]
            elif name == "linear":
                a = mats[0]
            elif name in ("outer", "ger"):
                return int(size)
            else:
                a = mats[0]
            if name in ("addbmm",):
                return int(2 * size * a.shape[0] * a.shape[-1])
            return int(2 * size * a.shape[-1])
        if "conv" in name and len(arrays) >= 2:
            x, w = arrays[0], arrays[1]
            if "transpose" in name:
                return int(2 * x.size * (w.size // max(w.shape[0], 1)))
            return int(2 * size * (w.size // max(w.shape[0], 1)))
        if name in ("mul", "add"):
            return int(size)
    except (AttributeError, IndexError, TypeError):
        return 0
    return 0


# ---------------------------------------------------------------------------------------------
# instrumentation


def _wrap_fwd(op, orig):
    name = _aten_name(op.name)

    def fwd(*args):
        ts = _STATES.get(_get_ident())
        if ts is None:
            return orig(*args)
        return ts.run_fwd(op, name, orig, args)

    fwd.__wrapped__ = orig
    fwd._ember_profiler = True
    return fwd


def _wrap_vjp(op, orig):
    def vjp(*args):
        ts = _STATES.get(_get_ident())
        if ts is None or ts.jvp:
            return orig(*args)
        return ts.run_node(op.node.__name__, orig, args, args)

    vjp.__wrapped__ = orig
    vjp._ember_profiler = True
    return vjp


def _unwrap(f):
    while getattr(f, "_ember_profiler", False):
        f = f.__wrapped__
    return f


def _instrument(op):
    fwd, vjp = _unwrap(op.fwd), _unwrap(op.vjp)
    wf = _wrap_fwd(op, fwd) if fwd is not None else None
    wv = _wrap_vjp(op, vjp) if vjp is not None else None
    op.fwd = wf if wf is not None else fwd
    op.vjp = wv if wv is not None else vjp
    _SAVED.append((op, fwd, wf, vjp, wv))


def _patch(obj, attr, make):
    orig = getattr(obj, attr)
    _PATCHES.append((obj, attr, orig))
    setattr(obj, attr, make(orig))


def _install():
    from .._ops import _registry
    from . import engine, forward_ad
    for op in list(_registry.ALL_OPS):
        _instrument(op)

    def make_init(orig_init):
        def __init__(self, *args, **kwargs):
            orig_init(self, *args, **kwargs)
            with _LOCK:
                if _ACTIVE[0]:
                    _instrument(self)
        return __init__

    def make_call_node(orig):
        def call_node(node, grads, graph=None):
            ts = _STATES.get(_get_ident())
            if ts is None or node.op is not None or ts.jvp:
                return orig(node, grads, graph)
            return ts.run_node(node.name(), orig, (node, grads, graph), (None, grads))
        return call_node

    def make_leaf(orig):
        def _leaf_accumulate(node, grads, graph):
            ts = _STATES.get(_get_ident())
            if ts is None:
                return orig(node, grads, graph)
            g = grads[0]
            return ts.run_node(node.name(), orig, (node, grads, graph), (None, g))
        return _leaf_accumulate

    def make_jvp(orig):
        def apply_jvp(*args, **kwargs):
            ts = _STATES.get(_get_ident())
            if ts is None:
                return orig(*args, **kwargs)
            ts.jvp += 1
            try:
                return orig(*args, **kwargs)
            finally:
                ts.jvp -= 1
        return apply_jvp

    _patch(_registry.Op, "__init__", make_init)
    _patch(engine, "call_node", make_call_node)
    _patch(engine, "_leaf_accumulate", make_leaf)
    _patch(forward_ad, "apply_jvp", make_jvp)


def _uninstall():
    for op, fwd, wf, vjp, wv in _SAVED:
        if wf is not None and op.fwd is wf:
            op.fwd = fwd
        if wv is not None and op.vjp is wv:
            op.vjp = vjp
    _SAVED.clear()
    for obj, attr, orig in reversed(_PATCHES):
        setattr(obj, attr, orig)
    _PATCHES.clear()


# ---------------------------------------------------------------------------------------------
# public API


class profile:
    """Context manager that records ember operators and holds a summary of the results.

    Args:
        enabled (bool): ``False`` makes this context manager a no-op.
        use_cuda (bool): deprecated; ember has no CUDA, so this warns and is ignored.
        use_device (str, optional): ``'cuda'``, ``'xpu'``, ``'mtia'``, ``'hpu'``: ember has no
            such device, so device timing is disabled with a warning.
        record_shapes (bool): record the shapes of each operator's inputs (``[]`` for
            non-tensor arguments), for ``key_averages(group_by_input_shape=True)``.
        with_flops (bool): estimate FLOPs of matrix products and convolutions (implies
            ``record_shapes``).
        profile_memory (bool): record bytes allocated by each operator's outputs, and freed
            when they are released while profiling.
        with_stack (bool): record the Python source location (``file(line): function``) of the
            user code calling each operator.
        with_modules, use_kineto, use_cpu, experimental_config, acc_events,
            custom_trace_id_callback, post_processing_timeout_s, activity_filters: accepted for
            compatibility; ember records CPU events only.

    Only the entering thread's operators are recorded. The profile should not be nested on one
    thread; when it is, the inner one sees the events of its own span.

    Example::

        >>> x = ember.randn((1, 1), requires_grad=True)
        >>> with ember.autograd.profiler.profile() as prof:
        ...     y = x ** 2
        ...     y.backward()
        >>> print(prof.key_averages().table(sort_by="self_cpu_time_total"))
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        self._function_events = None
        self._old_function_events = None
        self._needs_processing = False
        self._records = None
        self.entered = False
        self.profiling_start_time_ns = 0
        self.profiling_end_time_ns = 0
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
            self.use_device = "cuda"
        else:
            self.use_device = use_device
        self.record_shapes = record_shapes or with_flops
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.experimental_config = experimental_config
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.activity_filters = activity_filters or {}
        self.trace_id = ""
        if not use_cpu and not use_kineto:
            raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
        if self.use_device is not None:
            if self.use_device not in ("cuda", "xpu", "mtia", "hpu"):
                warnings.warn(f"The {self.use_device} is not a valid device option.",
                              stacklevel=2)
            else:
                warnings.warn(f"{self.use_device.upper()} is not available, disabling "
                              f"{self.use_device.upper()} profiling", stacklevel=2)
            self.use_cuda = False
            self.use_device = None
        if post_processing_timeout_s is not None and post_processing_timeout_s < 0:
            raise ValueError("post_processing_timeout_s must be non-negative")

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        if self._function_events is not None and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = None
        ident = _get_ident()
        with _LOCK:
            ts = _STATES.get(ident)
            if ts is None:
                ts = _ThreadState()
            ts.depth += 1
            ts.shapes |= self.record_shapes
            ts.flops |= self.with_flops
            ts.memory |= self.profile_memory
            ts.with_stack |= self.with_stack
            self._ts = ts
            self._start = len(ts.records)
            if _ACTIVE[0] == 0:
                _install()
            _ACTIVE[0] += 1
            self.profiling_start_time_ns = perf_counter_ns()
            _STATES[ident] = ts
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        end = perf_counter_ns()
        self.profiling_end_time_ns = end
        ts = self._ts
        with _LOCK:
            ts.depth -= 1
            self._records = ts.records[self._start:]
            if ts.depth == 0:
                ts.active = False
                for ident, s in list(_STATES.items()):
                    if s is ts:
                        del _STATES[ident]
                for r in ts.records:
                    if r.end is None:
                        r.end = end
                for f in ts.fins:
                    f.detach()
                ts.fins.clear()
                ts.stack.clear()
            _ACTIVE[0] -= 1
            if _ACTIVE[0] == 0:
                _uninstall()
        self._tid = ts.tid
        self._needs_processing = True
        self.entered = False
        if self.acc_events:
            self._ensure_function_events()
        return False

    def __repr__(self):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished ember.autograd.profile>"
        return repr(self._function_events)

    def __str__(self):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished ember.autograd.profile>"
        return str(self._function_events)

    def _ensure_function_events(self):
        if self._function_events is not None and not self._needs_processing:
            return
        self._needs_processing = False
        recs = self._records or []
        t0 = self.profiling_start_time_ns
        use_device = getattr(self, "use_device", None)
        tid = getattr(self, "_tid", 0)
        events = EventList(use_device=use_device,
                           profile_memory=getattr(self, "profile_memory", False),
                           with_flops=getattr(self, "with_flops", False))
        by_rec = {}
        for r in recs:
            end = r.end if r.end is not None else r.start
            evt = FunctionEvent(
                id=r.id, name=r.name, thread=tid, start_us=(r.start - t0) / 1000.0,
                end_us=(end - t0) / 1000.0, input_shapes=r.shapes, stack=r.stack or [],
                scope=r.scope, use_device=use_device, cpu_memory_usage=r.mem,
                sequence_nr=r.seq, flops=r.flops, trace_name=r.name,
                is_user_annotation=r.user, args=r.args, overload_name="",
                fwd_thread=tid if r.scope == 1 else None)
            by_rec[r] = evt
            p = by_rec.get(r.parent) if r.parent is not None else None
            if p is not None:
                p.append_cpu_child(evt)
                evt.set_cpu_parent(p)
            events.append(evt)
        for evt in reversed(events):   # children follow parents: totals bottom-up
            if evt.cpu_children:
                evt.cpu_memory_usage += sum(c.cpu_memory_usage for c in evt.cpu_children)
        events._remove_dup_nodes()
        events._tree_built = True
        if self._old_function_events and self.acc_events:
            events.extend(self._old_function_events)
            self._old_function_events = None
        self._function_events = events

    @property
    def function_events(self):
        self._ensure_function_events()
        return self._function_events

    def events(self):
        """The recorded ``EventList``."""
        return self.function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        self._ensure_function_events()
        return self._function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path, metadata=None, use_python_export=False):
        """Write the trace as Chrome trace JSON (``{"traceEvents": [...]}``, ``ph: "X"``
        complete events with ``ts``/``dur`` in microseconds), for ``chrome://tracing`` or
        Perfetto."""
        self._ensure_function_events()
        return self._function_events.export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total"):
        self._ensure_function_events()
        if not getattr(self, "with_stack", False):
            raise AssertionError("export_stacks() requires with_stack=True")
        return self._function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        self._ensure_function_events()
        return self._function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                   group_by_overload_name)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self):
        self._ensure_function_events()
        return self._function_events.total_average()

    total_average.__doc__ = EventList.total_average.__doc__

    @property
    def self_cpu_time_total(self):
        """Total time spent on CPU: the sum of all events' self times."""
        self._ensure_function_events()
        return self._function_events.self_cpu_time_total


class record_function(contextlib.ContextDecorator):
    """Context manager / decorator adding a labelled range to the active profile of this thread
    (nothing happens when none is active).

    Example::

        >>> with ember.autograd.profiler.profile() as prof:
        ...     y = x ** 2
        ...     with ember.autograd.profiler.record_function("label-z"):
        ...         z = y ** 3
    """

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record = None
        self._open: list = []

    def __enter__(self):
        ts = _STATES.get(_get_ident())
        rec = None
        if ts is not None:
            rec = ts.open(self.name)
            rec.user = True
            rec.args = self.args
        self.record = rec
        self._open.append((ts, rec))
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self._open:
            return False
        ts, rec = self._open.pop()
        self.record = self._open[-1][1] if self._open else rec
        if not self.run_callbacks_on_exit:
            return False
        if ts is not None and rec is not None and ts.active and rec.end is None:
            ts.close(rec)
        return False

    def _call_end_callbacks_on_future(self, fut):
        """Close the range when ``fut`` completes instead of on exit; returns ``fut``."""
        if not self.run_callbacks_on_exit:
            raise RuntimeError("_call_end_callbacks_on_future can only be called once.")
        self.run_callbacks_on_exit = False
        ts, rec = self._open[-1] if self._open else (None, None)

        def done(*_):
            if ts is not None and rec is not None and ts.active and rec.end is None:
                ts.close(rec)

        if hasattr(fut, "add_done_callback"):
            fut.add_done_callback(done)
        elif hasattr(fut, "then"):
            fut.then(done)
        else:
            done()
        return fut


class _Annotator:
    """A range annotator for an external tool: ember has no binding for one, so entering and
    leaving only check reentrancy and nothing is annotated. The arguments are kept for
    compatibility."""

    _what = ""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError(f"{self._what} annotation context manager is not reentrant")
        self.entered = True
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.enabled:
            self.entered = False
        return False


class emit_itt(_Annotator):
    """Would make every autograd operation emit an ITT range for Intel VTune
    (``torch.autograd.profiler.emit_itt``); ember detects no ITT library, so it annotates
    nothing. ``enabled=False`` makes it a no-op; ``record_shapes`` would add input shapes."""

    _what = "ITT"


class emit_nvtx(_Annotator):
    """Would make every autograd operation emit an NVTX range for nvprof / Nsight
    (``torch.autograd.profiler.emit_nvtx``); ember runs on NumPy with no CUDA or NVTX binding,
    so it annotates nothing. Traces nvprof wrote for other programs can still be read with
    :func:`load_nvprof`."""

    _what = "NVTX"


def load_nvprof(path):
    """Open an nvprof trace file (SQLite) and parse its autograd annotations into an
    ``EventList`` (its parent/child tree built from the ranges' nesting).

    Args:
        path (str): path to the nvprof trace
    """
    events = EventList(parse_nvprof_trace(path), use_device="cuda")
    events._build_tree()
    return events


class EnforceUnique:
    """Raises an error if a key is seen more than once."""

    def __init__(self):
        self.seen = set()

    def see(self, *key):
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


def _has_table(conn, name) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                        (name,)).fetchone() is not None


def parse_nvprof_trace(path):
    """The ``FunctionEvent`` list of an nvprof SQLite trace: one event per NVTX range
    (``CUPTI_ACTIVITY_KIND_MARKER`` start/end pairs, names from ``StringTable``), with the
    kernels launched inside it (``CUPTI_ACTIVITY_KIND_RUNTIME`` calls correlated with
    ``CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL`` or ``CUPTI_ACTIVITY_KIND_KERNEL`` rows).
    nvprof timestamps are nanoseconds; events are in microseconds."""
    import sqlite3
    conn = sqlite3.connect(path)
    try:
        conn.row_factory = sqlite3.Row
        strings = {}
        for r in conn.execute("SELECT _id_ AS id, value FROM StringTable"):
            strings[r["id"]] = r["value"]
        marker_query = """
        SELECT start.id AS marker_id, start.name, start.timestamp AS start_time,
               end.timestamp AS end_time
        FROM CUPTI_ACTIVITY_KIND_MARKER AS start
             INNER JOIN CUPTI_ACTIVITY_KIND_MARKER AS end ON start.id = end.id
        WHERE start.name != 0 AND end.name = 0
        """
        functions = []
        by_id = {}
        unique = EnforceUnique()
        for row in conn.execute(marker_query):
            unique.see(row["marker_id"])
            evt = FunctionEvent(id=row["marker_id"], node_id=0,
                                name=strings.get(row["name"], str(row["name"])),
                                start_us=row["start_time"] / 1000.0,
                                end_us=row["end_time"] / 1000.0, thread=0, use_device="cuda",
                                is_legacy=True)
            evt.trace_name = evt.name
            functions.append(evt)
            by_id[evt.id] = evt
        kernel_table = next((t for t in ("CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
                                         "CUPTI_ACTIVITY_KIND_KERNEL") if _has_table(conn, t)),
                            None)
        if kernel_table is not None and _has_table(conn, "CUPTI_ACTIVITY_KIND_RUNTIME"):
            kernel_query = f"""
            SELECT start.id AS marker_id, start.name, start.timestamp, end.timestamp,
                   runtime._id_ AS runtime_id, runtime.cbid, runtime.start AS runtime_start,
                   runtime.end AS runtime_end, kernel.start AS kernel_start,
                   kernel.end AS kernel_end, kernel.name AS kernel_name
            FROM CUPTI_ACTIVITY_KIND_MARKER AS start
                 INNER JOIN CUPTI_ACTIVITY_KIND_MARKER AS end ON start.id = end.id
                 INNER JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS runtime
                     ON (start.timestamp < runtime.start AND runtime.end < end.timestamp)
                 INNER JOIN {kernel_table} AS kernel
                     ON kernel.correlationId = runtime.correlationId
            WHERE start.name != 0 AND end.name = 0
            """
            unique = EnforceUnique()
            for row in conn.execute(kernel_query):
                unique.see(row["marker_id"], row["runtime_id"])
                if row["cbid"] != 211:   # cudaLaunchKernel
                    raise AssertionError(f"Expected cbid to be 211, but got {row['cbid']}")
                kname = row["kernel_name"]
                kname = strings.get(kname, kname)
                by_id[row["marker_id"]].append_kernel(
                    kname, 0, (row["kernel_end"] - row["kernel_start"]) / 1000.0)
    finally:
        conn.close()
    functions.sort(key=lambda e: e.time_range.start)
    return functions
