"""How an operator is defined once and recorded.

An ``Op`` holds a forward on arrays, one reverse rule (VJP) and one forward rule (JVP). The VJP
is written with Python operators and a namespace argument ``ns``: the engine calls it with
ndarrays and ``ns = NP`` when no graph is wanted (nothing is wrapped, nothing recorded), and with
Tensors and ``ns = EM`` under ``create_graph=True``, where the same text records a
differentiable graph. Signature::

    vjp(ns, grad, needs_input_grad, *saved, *params) -> one gradient (or None) per input

Broadcast gradients are reduced to each input's shape and cast to its dtype by the engine, not in
each formula. ``elementwise=True`` derives the JVP from the VJP (PyTorch's auto_element_wise);
``linear=True`` derives it by running the op on the tangents (auto_linear).
"""
from __future__ import annotations

from weakref import ref as _weakref

import numpy as np

from .._batched import BatchedArray as _BA
from .._tensor import Tensor, Version, _make, _refresh_view, _view_of
from ..autograd import engine as _engine
from ..autograd.forward_ad import fw_of
from ..autograd.grad_mode import STATE
from ..autograd.graph import AccumulateGrad, Node

_new = object.__new__
NO_EDGE = (None, 0, None, None)


ALL_OPS: list = []   # every Op ever defined (the profiler instruments them while active)


class Op:
    """One operator: forward, VJP and JVP together."""

    __slots__ = ("name", "fwd", "vjp", "jvp", "saves", "save_out", "node", "elementwise",
                 "linear", "n_out", "diff_out", "is_view", "ufunc", "names", "save_if",
                 "index_params", "inference_via", "saved_outs")

    def __init__(self, name, fwd, vjp=None, jvp=None, saves=(), save_out=False, node=None,
                 elementwise=False, linear=False, n_out=1, diff_out=None, is_view=False,
                 ufunc=None, names=None, save_if=None):
        self.name = name
        self.fwd = fwd
        self.vjp = vjp
        self.jvp = jvp
        self.saves = saves
        self.save_out = save_out
        self.elementwise = elementwise
        self.linear = linear
        self.n_out = n_out
        self.diff_out = diff_out if diff_out is not None else tuple(range(n_out))
        # save_out: True saves every differentiable output; a tuple of output indices saves only
        # those (PyTorch saves just what the backward formula reads, e.g. std_mean's result0)
        self.saved_outs = self.diff_out if save_out is True else tuple(save_out or ())
        self.is_view = is_view
        self.ufunc = ufunc
        # names of the saved values then the params, as nodes expose them (``_saved_<name>``);
        # by default inputs 0, 1, 2 are self, other, ... and a saved output is "result"
        self.names = names
        # save_if[j]: the input whose gradient needs saved input saves[j] (None: always). An
        # input no gradient needs is not saved, as in PyTorch, so modifying it in place later
        # is no error.
        self.save_if = save_if
        # PyTorch's call takes index or mask tensors that ember keeps as arrays in ``params``
        self.index_params = False
        # on an inference tensor outside inference mode, the op PyTorch's composite records
        # (clone and casts copy_ into a new tensor: CopyBackwards)
        self.inference_via = None
        ALL_OPS.append(self)
        cls_name = node or "".join(p.capitalize() for p in name.split("_")) + "Backward0"
        self.node = type(cls_name, (OpNode,), {"__slots__": (), "op": self, "n_out": n_out,
                                               "is_view": is_view})


class OpNode(Node):
    """A node made by an Op: its VJP is the op's."""

    __slots__ = ()
    is_view = False


def acc_node(t: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, created on first use and kept alive by the graph only."""
    r = t._acc
    n = r() if r is not None else None
    if n is None:
        n = AccumulateGrad(t)
        t._acc = _weakref(n)
    return n


def edge(t) -> tuple:
    """The edge a node keeps for input ``t``: (node, input_nr, shape, ndarray dtype)."""
    if type(t) is not Tensor and not isinstance(t, Tensor):
        return NO_EDGE
    if not (t._rg if t._base is None else _refresh_view(t)):
        return NO_EDGE
    return _edge_of(t)


def _edge_of(t) -> tuple:
    """``t``'s edge once it is known to require grad (a view's history already refreshed). A
    view without history (made in no_grad mode, or before its base required grad) requires grad
    but leads nowhere, as in PyTorch."""
    fn = t._fn
    d = t._data
    if fn is None:
        if t._base is not None and not t._rg:
            return NO_EDGE
        return (acc_node(t), 0, d.shape, d.dtype)   # a leaf (a view made one by requires_grad_)
    return (fn, t._onr, d.shape, d.dtype)


def _save(t):
    """Refuse to save an inference tensor for backward."""
    if isinstance(t, Tensor):
        x = t._x
        if x is not None and x.inference:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors "
                "created in inference mode in computation tracked by autograd. To work around "
                "this, you can make a clone to get a normal tensor and use it in autograd, or use "
                "`ember.no_grad()` instead of `ember.inference_mode()`.")


def make_node(op: Op, inputs, params, outs, edges=None) -> Node:
    """Create the backward node for one recorded call of ``op`` (``edges``: the inputs' edges
    when the caller already built them)."""
    node = _new(op.node)
    node._seq = next_seq()
    node._h = None
    if edges is None:
        edges = [_edge_rec(t) for t in inputs]
    node._next = tuple(edges)
    node._params = params
    saved = []
    save_if = op.save_if
    j = 0
    for i in op.saves:
        t = inputs[i]
        if save_if is not None and save_if[j] is not None and edges[save_if[j]][0] is None:
            saved.append(None)
        elif isinstance(t, Tensor):
            if t._x is not None:
                _save(t)
            saved.append((t, t._vc.v))
        else:
            saved.append(t)
        j += 1
    if op.save_out:
        for k in op.saved_outs:
            o = outs[k]
            vc = o._vc
            saved.append((o._data, vc, vc.v, k))
    node._saved = saved
    st = STATE
    if st.slow_record:
        from ..autograd.saved import on_record
        on_record(node, st)
    return node


def _edge_rec(t) -> tuple:
    if isinstance(t, Tensor) and (t._rg if t._base is None else _refresh_view(t)):
        return _edge_of(t)
    return NO_EDGE


from ..autograd.graph import _seq as _seq_counter  # noqa: E402

next_seq = _seq_counter.__next__


def apply(op: Op, inputs: tuple, params: tuple = ()):
    """Run ``op`` on ``inputs`` (tensors or Python scalars) and record it if needed."""
    datas = [t._data if isinstance(t, Tensor) else t for t in inputs]
    out = op.fwd(*datas, *params)
    return wrap_outputs(op, inputs, params, out)


def wrap_outputs(op: Op, inputs, params, out):
    """Wrap forward results into tensors, recording a node when grad mode and inputs call for
    it, and computing forward-mode tangents when an input carries one."""
    st = STATE
    grad_on = st.grad
    fwd = st.fw_level >= 0
    edges = None
    tangent = False
    inf = False
    i = 0
    for t in inputs:
        if isinstance(t, Tensor):
            if fwd and (t._fw is not None or t._base is not None and fw_of(t) is not None):
                tangent = True
            if grad_on and (t._rg if t._base is None else _refresh_view(t)):
                if edges is None:
                    edges = [NO_EDGE] * len(inputs)
                edges[i] = _edge_of(t)
                if t._x is not None:
                    inf = inf or t._x.inference
        i += 1
    if inf and _skips_autograd(op, inputs):
        if op.inference_via is None:
            edges = None
        else:
            return _copy_from_inference(op.inference_via, inputs[0], edges[0], out)
    rec = edges is not None
    if op.n_out == 1:
        if op.is_view:
            if type(out) is tuple:   # a multi-output view op that made one output (split)
                r = _view_of(inputs[0], out[0], multi=True)
            else:
                r = _view_of(inputs[0], out)
        else:
            r = _make(out if isinstance(out, np.ndarray) or type(out) is _BA else np.asarray(out),
                      Version(), False, None)
        res = (r,)
    elif op.is_view:
        res = [_view_of(inputs[0], o, multi=True) for o in out]
    else:
        res = [_make(o if isinstance(o, np.ndarray) or type(o) is _BA else np.asarray(o),
                     Version(), False, None) for o in out]
    if grad_on:
        if rec:
            node = make_node(op, inputs, params, res, edges)
            for k in op.diff_out:
                r = res[k]
                r._rg = True
                r._fn = node
                r._onr = k
    elif st.inference and not (op.is_view and not inputs[0].is_inference()):
        # a view of a normal tensor made in inference mode is a normal tensor, as in PyTorch
        for r in res:
            r._extra().inference = True
    if tangent:
        from ..autograd.forward_ad import apply_jvp
        apply_jvp(op, inputs, params, res)
        if rec and op.save_out and st.grad:
            # a saved output keeps its tangent too, for forward-over-reverse
            node._saved = [e + (res[e[3]]._fw,) if type(e) is tuple and len(e) == 4 else e
                           for e in node._saved]
    return res[0] if op.n_out == 1 else tuple(res)


def wrap_one(op: Op, x: Tensor, params, out, scalar=None):
    """``wrap_outputs`` for the commonest calls: one tensor input (and maybe a Python number
    as second operand), one plain output, no tangent. Anything else goes the general way."""
    inputs = (x,) if scalar is None else (x, scalar)
    if op.n_out != 1 or op.is_view or STATE.fw_level >= 0 or not isinstance(out, np.ndarray):
        return wrap_outputs(op, inputs, params, out)
    r = _make(out, Version(), False, None)
    st = STATE
    if st.grad:
        if (x._rg if x._base is None else _refresh_view(x)) and (
                x._x is None or not x._x.inference or not _skips_autograd(op, inputs)):
            e = _edge_of(x)
            r._fn = make_node(op, inputs, params, (r,), (e,) if scalar is None else (e, NO_EDGE))
            r._rg = True
    elif st.inference:
        r._extra().inference = True
    return r


# ops whose Python-number operands PyTorch wraps into (normal) tensors: its argument parser's
# ``should_allow_numbers_as_tensors`` list; elsewhere a number is a Scalar, not a tensor
_WRAPS_NUMBERS = frozenset({"add", "sub", "rsub", "rsub_s", "mul", "div", "div_mode",
                            "floor_divide"})


def _skips_autograd(op: Op, inputs) -> bool:
    """Whether PyTorch's autograd kernel is skipped for a call outside inference mode: all its
    tensor inputs are inference tensors (which carry no Autograd dispatch key), so nothing is
    recorded even when one requires grad. A Python number wrapped into a tensor and index or
    mask arguments are normal tensors: then the call records."""
    if op.index_params:
        return False
    wraps = op.name in _WRAPS_NUMBERS
    for t in inputs:
        if isinstance(t, Tensor):
            x = t._x
            if x is None or not x.inference:
                return False
        elif wraps and t is not None and not isinstance(t, (list, tuple)):
            return False
    return True


def _copy_from_inference(via: Op, src: Tensor, e: tuple, out) -> Tensor:
    """A copy of inference tensor ``src`` (requiring grad) made outside inference mode: the
    result is a new normal tensor written by ``copy_``, whose node ``via`` is recorded."""
    r = _make(out if isinstance(out, np.ndarray) else np.asarray(out), Version(), True, None)
    r._fn = make_node(via, (None, src), (), (r,), (NO_EDGE, e))
    return r


def method(name: str, fn=None):
    """Attach ``fn`` as ``Tensor.<name>``; usable as a decorator."""
    def deco(f):
        setattr(Tensor, name, f)
        return f
    return deco(fn) if fn is not None else deco


class _Namespace:
    """The functions VJP/JVP formulas call through ``ns``."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"<namespace {self._name}>"


NP = _Namespace("numpy")   # formulas on ndarrays: the fast path
EM = _Namespace("ember")   # formulas on Tensors: differentiable, for create_graph
_engine.NS[:] = [NP, EM]


def ns_fn(name: str, np_impl, em_impl) -> None:
    """Register one formula helper under the same name in both namespaces."""
    setattr(NP, name, staticmethod(np_impl))
    setattr(EM, name, staticmethod(em_impl))
