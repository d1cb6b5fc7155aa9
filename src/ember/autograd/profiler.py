"""The autograd profiler (``torch.autograd.profiler``): time every ember operator, backward node
and ``record_function`` range run on the profiling thread.

It costs nothing while no profile is active: entering the first ``profile`` swaps each
operator's ``fwd`` and ``vjp`` (every ``Op`` in ``_registry.ALL_OPS``, and any ``Op`` created
while profiling) for timed wrappers, and leaving the last one puts the originals back, so the
operator attributes are then exactly what they were. The other places PyTorch records are
swapped the same way, and only while active: the engine's node calls, hooks, propagation and
leaf accumulation, ``backward()``'s implicit ``ones_like`` gradient, ``Function.apply``, and
the factory functions (``ember.zeros``, ``Tensor.new_zeros``...).

Names follow PyTorch: forward operators as ``aten::<op>`` (``aten::mul``, ``aten::mm``...),
backward nodes by their ``grad_fn`` class name (``MulBackward0``, scope 1) inside an
``autograd::engine::evaluate_function: MulBackward0`` range, custom Functions by their class
name, ``record_function`` ranges with the user scope. While profiling, built-in VJPs run on
Tensors (grad mode off) instead of bare arrays, so the ops a backward node is made of are
recorded as its children, as PyTorch records the ATen calls of its nodes. Events are
thread-local: only operators run on the thread that entered the profile are recorded, as in
PyTorch.
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import threading
import warnings
import weakref
from time import perf_counter_ns

import numpy as np

from .._tensor import Tensor, Version, _make
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
_USER_SCOPE = 7   # at::RecordScope::USER_SCOPE, the scope of record_function ranges

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


class _Pass:
    """One backward pass run on the profiling thread: the record stack's depth when it began
    and the ``evaluate_function`` range open in it. PyTorch's engine passes a node's outputs on
    (summing gradients that meet) inside that range, so on the engine's Tensor path the range
    stays open after the node ran until its outputs are propagated."""

    __slots__ = ("depth", "node", "rec", "roots")

    def __init__(self, depth, roots):
        self.depth = depth
        self.rec = None
        self.node = None
        self.roots = roots   # ids of the arrays given as root gradients (the caller's own)


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
        self.passes: list = []    # _Pass per backward pass running on this thread
        self.calling = None       # the node whose backward is running (set by call_node)

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

    def discard(self, r):
        """Forget a range that turned out not to happen (its call raised before doing it)."""
        self.close(r)
        if r in self.records:
            self.records.remove(r)

    def run_fwd(self, op, name, orig, args, arity):
        shapes = None
        if self.shapes:
            shapes = _shapes(args)
            if arity is not None:
                shapes = shapes[:arity] + [[] for _ in range(arity - len(shapes))]
        r = self.open(name, 0, shapes)
        try:
            out = orig(*args)
        finally:
            self.close(r)
        if self.flops:
            r.flops = _flops(name, op, args, out)
        if self.memory and not op.is_view:
            r.mem += self.track(out, args)
        return out

    def begin_eval(self, node, name):
        """Open, or keep open, the ``autograd::engine::evaluate_function: <name>`` range of
        ``node`` (None: unknown, the engine's bare-array path) when the engine itself runs it.
        Returns None outside a backward pass and for a node run from inside another one
        (CopySlices running its inner node, ``grad_fn(...)`` called in a hook): PyTorch records
        only the node's own range then."""
        if not self.passes:
            return None
        p = self.passes[-1]
        st = self.stack
        if p.rec is not None:
            if not st or st[-1] is not p.rec:
                return None
            if node is not None and p.node is node:
                return p.rec
            self.end_eval(p)
        if len(st) != p.depth:
            return None
        p.rec = self.open(_EVAL + name)
        p.node = node
        return p.rec

    def end_eval(self, p):
        if p.rec is not None:
            self.close(p.rec)
            p.rec = p.node = None

    def run_node(self, node, name, fn, args, shapes, eager):
        """Run a backward node as PyTorch's engine does: its ``evaluate_function`` range (closed
        now when ``eager``, else once its outputs are passed on) around its own range, named
        after the node, scope 1 (BACKWARD_FUNCTION)."""
        ev = self.begin_eval(node, name)
        inner = self.open(name, 1, shapes)
        prev = self.calling
        self.calling = node if node is not None else inner
        try:
            return fn(*args)
        finally:
            self.calling = prev
            self.close(inner)
            if eager and ev is not None and self.passes and self.passes[-1].rec is ev:
                self.end_eval(self.passes[-1])

    def run_vjp(self, op, orig, args):
        """Run a built-in VJP. On the engine's bare-array path (``ns`` is NumPy) the formula runs
        on Tensors instead, grad mode being off there, so the ops it is made of are recorded as
        the node's children, as PyTorch records the ATen calls a backward node makes; the
        results go back as arrays. Anything else (batched cotangents, a formula that fails on
        Tensors) runs as is."""
        np_ns, em_ns = _ENGINE_NS
        if args[0] is not np_ns:
            return orig(*args)
        n_saved = len(op.saves) + len(op.saved_outs)
        try:
            g = args[1]
            g = tuple(_as_tensor(x) for x in g) if isinstance(g, (tuple, list)) \
                else _as_tensor(g)
            vals = [_as_tensor(v) if isinstance(v, np.ndarray) else v
                    for v in args[3:3 + n_saved]]
        except TypeError:
            return self._track_node(orig(*args), args)
        n = len(self.records)
        try:
            res = orig(em_ns, g, args[2], *vals, *args[3 + n_saved:])
        except Exception:
            del self.records[n:]
            return self._track_node(orig(*args), args)
        if isinstance(res, tuple):
            return tuple(_raw(r) for r in res)
        return _raw(res)

    def _track_node(self, res, args):
        if self.memory and self.stack and isinstance(res, tuple):
            ins = list(args)
            for a in args:
                if isinstance(a, (tuple, list)):
                    ins.extend(a)
            self.stack[-1].mem += self.track(res, ins)
        return res

    def track(self, out, inputs) -> int:
        """Bytes newly allocated by ``out`` (arrays sharing no memory with ``inputs``); their
        release is recorded when the buffer dies while this profile is active."""
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


def _as_tensor(x):
    """A bare array as a Tensor outside the graph; TypeError for anything else."""
    if x is None:
        return None
    if type(x) is not np.ndarray:
        if not isinstance(x, np.generic):
            raise TypeError(type(x).__name__)
        x = np.asarray(x)
    return _make(x, Version(), False, None)


def _raw(x):
    return x._data if isinstance(x, Tensor) else x


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


def _grad_shapes(g) -> list:
    if isinstance(g, (tuple, list)):
        return [_shape_of(x) for x in g]
    return [_shape_of(g)]


# ---------------------------------------------------------------------------------------------
# names, input shapes and FLOPs

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

# How many arguments the schema of the overload PyTorch records has, for ops whose ember
# forward takes other parameters than that schema (``aten::sum(self, *, dtype)`` against
# ember's ``(x, dims, keepdim, dtype, input shape)``): recorded input shapes are cut or padded
# with ``[]`` (a non-tensor argument) to that many.
_ARITY = {
    "sum": 2, "sum_dim": 4, "mean": 2, "mean_dim": 4, "prod": 2, "prod_dim": 4, "view": 2,
    "softmax": 3, "log_softmax": 3, "expand": 3, "linalg_vector_norm": 5,
}


def _aten_name(name: str) -> str:
    """PyTorch's operator name for an ember ``Op`` name."""
    n = _ATEN.get(name)
    if n is None:
        n = _SUFFIX.sub("", name)
    return "aten::" + n


def _flops(aten: str, op, args, out) -> int:
    """FLOPs as PyTorch's profiler estimates them (``computeFlops``): 2*M*N*K for ``mm``,
    ``addmm``, ``bmm`` and ``baddbmm``; 2 * output elements * input channels * kernel size for
    a 2-D convolution (``aten::conv2d``, groups not divided out, as there); one per element of
    the first operand for ``mul`` and ``add``; 0 for every other op (``dot``, ``mv``, ...)."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    o = out[0] if isinstance(out, tuple) else out
    size = int(np.size(o))
    try:
        if aten in ("aten::mm", "aten::bmm"):
            return 2 * size * int(arrays[0].shape[-1])
        if aten in ("aten::addmm", "aten::baddbmm"):
            return 2 * size * int(arrays[1].shape[-1])
        if aten in ("aten::mul", "aten::add"):
            return int(np.size(args[0]))
        if aten == "aten::convolution":
            x, w = arrays[0], arrays[1]
            # (x, w, bias, stride, padding, dilation, transposed, groups)
            transposed = args[6] if len(args) > 6 else False
            if x.ndim == 4 and not transposed:
                return 2 * size * int(x.shape[1]) * int(np.prod(w.shape[2:]))
    except (AttributeError, IndexError, TypeError):
        return 0
    return 0


# Factory functions PyTorch records as one ATen call: the number of arguments of the overload
# it records (all non-tensor, so each shape is ``[]``; ``*_like`` and ``Tensor.new_*`` have the
# tensor's shape first). The overload of the variadic ones depends on how many of the named
# arguments are given: (arguments besides them, their names).
_FACTORIES = {
    "zeros": 5, "ones": 5, "empty": 6, "full": 6, "empty_strided": 6, "scalar_tensor": 5,
    "rand": 5, "randn": 5, "randperm": 5, "linspace": 7, "logspace": 8, "zeros_like": 6,
    "ones_like": 6, "empty_like": 6, "full_like": 7, "rand_like": 6, "randn_like": 6,
}
_FACTORIES_VAR = {
    "arange": (4, ("start", "end", "step")), "eye": (4, ("n", "m")),
    "randint": (4, ("low", "high", "size")), "randint_like": (5, ("low", "high")),
}
_NEW = {"new_zeros": 6, "new_ones": 6, "new_empty": 6, "new_full": 7}


def _factory_shapes(name, args, kwargs) -> list:
    n = _FACTORIES.get(name) or _NEW.get(name)
    if n is None:
        base, names = _FACTORIES_VAR[name]
        n = base + len(args) + sum(k in kwargs for k in names)
    first = args[0] if args else kwargs.get("input")
    if (name.endswith("_like") or name in _NEW) and isinstance(first, Tensor):
        return [_shape_of(first)] + [[] for _ in range(n - 1)]
    return [[] for _ in range(n)]


# ---------------------------------------------------------------------------------------------
# instrumentation

_ENGINE_NS: list = [None, None]   # the engine's (NumPy, ember) formula namespaces


def _wrap_fwd(op, orig):
    name = _aten_name(op.name)
    arity = _ARITY.get(op.name)

    def fwd(*args):
        ts = _STATES.get(_get_ident())
        if ts is None:
            return orig(*args)
        return ts.run_fwd(op, name, orig, args, arity)

    fwd.__wrapped__ = orig
    fwd._ember_profiler = True
    return fwd


def _wrap_vjp(op, orig):
    name = op.node.__name__

    def vjp(*args):
        ts = _STATES.get(_get_ident())
        if ts is None or ts.jvp:
            return orig(*args)
        if ts.calling is not None:     # run by call_node, which recorded the node
            return ts.run_vjp(op, orig, args)
        # the engine's fast path: no call_node, so the node is recorded here
        shapes = _grad_shapes(args[1]) if ts.shapes else None
        return ts.run_node(None, name, ts.run_vjp, (op, orig, args), shapes, True)

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
    new = make(orig)
    functools.update_wrapper(new, orig)
    setattr(obj, attr, new)


def _wrap_factory(name, orig):
    """A factory function recorded as PyTorch records it: one ``aten::<name>`` range."""
    aten = "aten::" + name

    def factory(*args, **kwargs):
        ts = _STATES.get(_get_ident())
        if ts is None:
            return orig(*args, **kwargs)
        r = ts.open(aten, 0, _factory_shapes(name, args, kwargs) if ts.shapes else None)
        try:
            out = orig(*args, **kwargs)
        finally:
            ts.close(r)
        if ts.memory and isinstance(out, Tensor):
            r.mem += ts.track(out._data, ())
        return out

    return factory


def _make_call_node(orig):
    def call_node(node, grads, *args, **kwargs):
        ts = _STATES.get(_get_ident())
        if ts is None or ts.jvp:
            return orig(node, grads, *args, **kwargs)
        shapes = _grad_shapes(grads) if ts.shapes else None
        return ts.run_node(node, node.name(), functools.partial(orig, **kwargs),
                           (node, grads, *args), shapes, False)
    return call_node


def _make_leaf(orig):
    def _leaf_accumulate(node, grads, *args):
        ts = _STATES.get(_get_ident())
        if ts is None:
            return orig(node, grads, *args)
        # (no reference to the gradient is kept here: the engine adopts it when it is the
        # only holder, and counts references to know)
        shapes = [_shape_of(grads[0])] if ts.shapes else None
        return ts.run_node(node, node.name(), orig, (node, grads, *args), shapes, True)
    return _leaf_accumulate


def _obeys_contract(t, g) -> bool:
    """Whether ``g`` is a fresh array laid out as ``t`` (the layout contract of PyTorch's
    AccumulateGrad), so that PyTorch would adopt it as ``t.grad`` when nothing else holds it."""
    d = t._data
    return (type(g) is np.ndarray and g.base is None and g.flags.writeable
            and g.dtype == d.dtype and g.shape == d.shape and g.strides == d.strides)


def _make_accumulate(orig):
    """Accumulation into ``.grad`` without a graph, recorded under the name of the call
    PyTorch's AccumulateGrad makes in the same case: ``aten::detach`` when it adopts a new
    gradient (one made by the backward pass, obeying the layout contract; ember may still copy
    it when Python references it elsewhere), ``aten::copy_`` when it must copy it (the
    caller's own gradient, another layout), ``aten::add_`` into an existing ``.grad``."""
    def accumulate_into(t, g, graph, *args, **kwargs):
        ts = _STATES.get(_get_ident())
        if ts is None or graph:
            # with a graph, the ops that accumulate (clone, add) are recorded themselves
            return orig(t, g, graph, *args, **kwargs)
        first = t._grad is None
        if first:
            raw = _raw(g)
            roots = ts.passes[-1].roots if ts.passes else ()
            name = "aten::detach" if _obeys_contract(t, raw) and id(raw) not in roots \
                else "aten::copy_"
        else:
            name = "aten::add_"
        shapes = None
        if ts.shapes:
            s = _shape_of(t)
            shapes = [s] if name == "aten::detach" else [s, _shape_of(g), []]
        r = ts.open(name, 0, shapes)
        try:
            return orig(t, g, graph, *args, **kwargs)
        finally:
            ts.close(r)
    return accumulate_into


def _make_eval_hooks(orig):
    """Tensor and leaf hooks run first in a node's ``evaluate_function``: its range opens
    here."""
    def hooks(node, *args, **kwargs):
        ts = _STATES.get(_get_ident())
        if ts is not None:
            ts.begin_eval(node, node.name())
        return orig(node, *args, **kwargs)
    return hooks


def _make_propagate(orig):
    def _propagate(node, *args, **kwargs):
        ts = _STATES.get(_get_ident())
        if ts is None or not ts.passes:
            return orig(node, *args, **kwargs)
        p = ts.passes[-1]
        try:
            return orig(node, *args, **kwargs)
        finally:
            if p.node is node and p.rec is not None and ts.stack and ts.stack[-1] is p.rec:
                ts.end_eval(p)
    return _propagate


def _make_run_backward(orig):
    def run_backward(*args, **kwargs):
        ts = _STATES.get(_get_ident())
        if ts is None:
            return orig(*args, **kwargs)
        grads = args[1] if len(args) > 1 else kwargs.get("grads", ())
        p = _Pass(len(ts.stack), {id(_raw(g)) for g in grads})
        ts.passes.append(p)
        prev, ts.calling = ts.calling, None
        try:
            return orig(*args, **kwargs)
        finally:
            if ts.active:
                ts.end_eval(p)
            ts.calling = prev
            if p in ts.passes:
                ts.passes.remove(p)
    return run_backward


def _make_root_grads(orig):
    """``backward()``/``grad()`` make an implicit gradient with ``aten::ones_like``, recorded
    as in PyTorch (its checks come first and record nothing)."""
    def _root_grads(outputs, grad_outputs, create_graph, is_grad):
        ts = _STATES.get(_get_ident())
        if ts is None or all(g is not None for g in grad_outputs):
            return orig(outputs, grad_outputs, create_graph, is_grad)
        res = []
        for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
            if g is not None:
                # checked with its own index in the messages: the outputs before it stand in
                # as their own (valid) gradients
                stand_in = list(outputs[:i]) + [g]
                res.append(orig(outputs[:i + 1], stand_in, create_graph, is_grad)[i])
                continue
            shapes = [_shape_of(o)] + [[] for _ in range(5)] if ts.shapes else None
            r = ts.open("aten::ones_like", 0, shapes)
            try:
                g = orig((o,), (None,), create_graph, is_grad)[0]
            except BaseException:
                ts.discard(r)
                raise
            ts.close(r)
            if ts.memory:
                r.mem += ts.track(_raw(g), ())
            res.append(g)
        return res
    return _root_grads


def _make_fn_apply(orig):
    """``Function.apply`` is recorded as a range named after the Function class, around its
    forward (PyTorch's ``THPFunction_apply``)."""
    def _apply(cls, args, kwargs):
        ts = _STATES.get(_get_ident())
        if ts is None:
            return orig(cls, args, kwargs)
        shapes = [_shape_of(a) for a in args if isinstance(a, Tensor)] if ts.shapes else None
        r = ts.open(cls.__name__, 0, shapes)
        try:
            return orig(cls, args, kwargs)
        finally:
            ts.close(r)
    return _apply


def _install():
    import ember

    from .. import autograd
    from .._ops import _registry
    from . import engine, forward_ad, function
    _ENGINE_NS[:] = engine.NS
    for op in list(_registry.ALL_OPS):
        _instrument(op)

    def make_init(orig_init):
        def __init__(self, *args, **kwargs):
            orig_init(self, *args, **kwargs)
            with _LOCK:
                if _ACTIVE[0]:
                    _instrument(self)
        return __init__

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
    _patch(engine, "call_node", _make_call_node)
    _patch(engine, "_leaf_accumulate", _make_leaf)
    _patch(engine, "accumulate_into", _make_accumulate)
    _patch(engine, "_run_tensor_hooks", _make_eval_hooks)
    _patch(engine, "_run_leaf_hooks", _make_eval_hooks)
    _patch(engine, "_propagate", _make_propagate)
    _patch(autograd, "run_backward", _make_run_backward)
    _patch(autograd, "_root_grads", _make_root_grads)
    _patch(function, "_apply", _make_fn_apply)
    _patch(forward_ad, "apply_jvp", make_jvp)
    from .._ops import activation, indexing, joining, reduction, views
    for mod in (activation, indexing, joining, reduction, views):
        _PATCHES.append((mod, "_FAST", True))   # their fast paths skip Op.fwd
        mod._FAST = False
    for name in (*_FACTORIES, *_FACTORIES_VAR):
        if callable(getattr(ember, name, None)):
            _patch(ember, name, lambda f, n=name: _wrap_factory(n, f))
    for name in _NEW:
        if name in Tensor.__dict__:
            _patch(Tensor, name, lambda f, n=name: _wrap_factory(n, f))


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
            rec = ts.open(self.name, _USER_SCOPE)
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
