"""The backward engine: iterative, dependency-counted, ordered like PyTorch's CPU ready queue.

One call walks the graph reachable from its roots without recursion, counts each node's incoming
edges, and runs a node once all its gradients have arrived, most recently created node first.
Without ``create_graph`` gradients flow as bare ndarrays and the op VJPs run on NumPy directly;
with it they flow as Tensors through ember ops, so the result is itself differentiable.
All state of a call is local, so threads may run backward concurrently; accumulation into a
shared ``.grad`` holds a lock.
"""
from __future__ import annotations

import heapq
import sys

import numpy as np

from .. import _layout as _L
from .._batched import BatchedArray as _BA
from .._tensor import Tensor, Version, _make
from .grad_mode import STATE
from .graph import FREED, GRAD_LOCK, AccumulateGrad, saved_version_error

_NEED1 = (True,)
_NEVER = 1 << 62   # the dependency count of a node the pass will not run: it never gets ready
NS: list = [None, None]  # (NP, EM), filled in by _ops._registry (which imports this package)


def _as_tensor(g) -> Tensor:
    if isinstance(g, Tensor):
        return g
    if type(g) is not np.ndarray and type(g) is not _BA:
        g = np.asarray(g)   # NumPy hands back scalars for 0-dim arithmetic
    return _make(g, Version(), False, None)


def _free(node) -> None:
    """Drop what ``node`` saved once it ran. A node that saved no tensor keeps working, so a
    second backward through it is fine, as in PyTorch."""
    saved = node._saved
    if node.params_saved:
        node._saved = None
    elif saved:
        for e in saved:
            if type(e) is tuple or hasattr(e, "unpack"):
                node._saved = None
                return


def _checked_hook_result(fn, r, g):
    """A tensor hook's replacement gradient, refused as PyTorch refuses it when its type, dtype
    or shape differs from the gradient it replaces."""
    name = getattr(fn, "__name__", repr(fn))
    if not isinstance(r, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    if r._data.dtype != g._data.dtype:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was ember.{g.dtype._legacy} got "
            f"ember.{r.dtype._legacy})")
    if r._data.shape != g._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return r


def _raw(g):
    return g._data if isinstance(g, Tensor) else g


DETACHED = ("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
            "This is not supported, please use out-of-place `.detach()` instead")


def unpack_saved(node, graph: bool) -> list:
    """The node's saved values: arrays on the fast path, tensors (with their graph) otherwise."""
    saved = node._saved
    if saved is None:
        raise RuntimeError(FREED)
    out = []
    packed = {}
    if any(hasattr(e, "unpack") for e in saved):
        from .saved import hook_order
        for i in hook_order(node):   # unpack hooks run in PyTorch's order
            if hasattr(saved[i], "unpack"):
                packed[i] = saved[i].unpack(node, graph)
    for i, e in enumerate(saved):
        if type(e) is not tuple:
            out.append(packed[i] if i in packed else e)
        elif len(e) == 2:
            t, ver = e
            if t._x is not None and t._x.detached > node._seq and t._fn is None:
                raise RuntimeError(DETACHED)
            if t._vc.v != ver:
                raise saved_version_error(node)
            out.append(t if graph else t._data)
        else:
            data, vc, ver, k = e[:4]
            if vc.v != ver:
                raise saved_version_error(node)
            if graph:
                # (a saved output autograd does not track, a selecting op's indices, is a
                # plain tensor)
                t = _make(data, vc, True, node, k) if k in node.op.diff_out else \
                    _make(data, vc, False, None)
                if len(e) == 5 and STATE.fw_level >= 0:
                    t._fw = e[4]
                out.append(t)
            else:
                out.append(data)
    return out


def check_saved_versions(node) -> None:
    """The version checks of unpacking ``node``'s saved tensors, for a node that runs without
    any gradient: PyTorch's generated backward unpacks them before it looks at the gradients,
    so a tensor modified in place since is refused even then."""
    saved = node._saved
    if not saved or node.op is None:
        return
    for e in saved:
        if type(e) is tuple:
            if len(e) == 2:
                if e[0]._vc.v != e[1]:
                    raise saved_version_error(node)
            elif e[1].v != e[2]:
                raise saved_version_error(node)


def _zeros_for(edge_shape, dtype, graph: bool):
    z = np.zeros(edge_shape, dtype)
    return _make(z, Version(), False, None) if graph else z


def call_node(node, grads, graph: bool | None = None):
    """Run one node's backward on ``grads`` (one per output, None where absent)."""
    if graph is None:
        graph = STATE.grad
        grads = tuple(g if g is None or isinstance(g, Tensor) else _as_tensor(g)
                      for g in grads)
    op = node.op
    if op is None:
        return node._apply(grads, graph)
    vals = unpack_saved(node, graph)
    ns = NS[1] if graph else NS[0]
    need = tuple(e[0] is not None for e in node._next)
    if not graph:
        grads = [_raw(g) for g in grads]
    g = grads[0] if node.n_out == 1 else tuple(grads)
    try:
        res = op.vjp(ns, g, need, *vals, *node._params)
    except TypeError as ex:   # NumPy refused complex32 pairs (or a real type error)
        if graph:
            raise
        from .._chalf import vjp
        res = vjp(ex, op, g, need, vals, node._params)
    return res if isinstance(res, tuple) else (res,)


# PyTorch's engine checks each gradient against its input (validate_outputs): a complex
# gradient for a real input is refused. Most of its formulas never hand one on, as they take the
# real part for a real input (handle_r_to_c); ember's formulas are dtype-agnostic and leave that
# to _fix. These nodes' formulas in PyTorch do not, so the gradient reaches the check and fails.
_R2C_REFUSED = frozenset({
    "WhereBackward0", "MaskedFillBackward1", "IndexFillBackward1", "FillBackward3",
    "DistBackward0", "LogaddexpBackward0", "SumBackward0", "SumBackward1", "MeanBackward0",
    "MeanBackward1", "ProdBackward0", "ProdBackward1", "CumprodBackward0", "NansumBackward0",
})
R2C_ERROR = ("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex)"
             " to be true, but got false.  (Could this error message be improved?  If so, please "
             "report an enhancement request to PyTorch.)")


def _real_part_of(node) -> bool:
    """Whether ``node``'s formula takes the real part of a complex gradient for a real input
    (PyTorch's handle_r_to_c): built-in ops mostly do, custom Functions never (their backward
    must return a real gradient itself)."""
    if node is None:
        return True
    if node.op is None:
        from .._ops.views import CopySlices
        if type(node) is CopySlices:
            return _real_part_of(node._params[2])   # what the in-place op's formula does
        from .function import BackwardCFunction
        return not isinstance(node, BackwardCFunction)
    return type(node).__name__ not in _R2C_REFUSED


def _fix(g, e, graph: bool, node=None):
    """Reduce a broadcast gradient to its input's shape and cast it to the input's dtype, or
    refuse a complex one for a real input as PyTorch's engine does where ``node``'s formula
    hands it on."""
    shape, dt = e[2], e[3]
    if graph:
        if g._data.shape != shape:
            g = g.sum_to_size(shape)
        if g._data.dtype != dt:
            from .._dtype import _FROM_NP
            if g.is_complex() and dt.kind != "c":
                if not _real_part_of(node):
                    raise RuntimeError(R2C_ERROR)
                g = g.real          # a real input's gradient is the real part, as in PyTorch
            g = g.to(_FROM_NP[dt])
        return g
    if g.dtype.names is not None or dt.names is not None:   # complex32 pairs (ember._chalf)
        from .._chalf import fix_grad
        return fix_grad(g, shape, dt)
    if g.shape != shape:
        g = _sum_to(g, shape)
    if g.dtype != dt:
        if g.dtype.kind == "c" and dt.kind != "c":
            if not _real_part_of(node):
                raise RuntimeError(R2C_ERROR)
            g = g.real
        g = g.astype(dt)
    return g


def _sum_to(g, shape):
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and g.shape[i + lead] != 1)
    if not axes:
        return g
    if type(g) is np.ndarray and g.dtype.kind in "fc":
        # summed straight into an array of the input's shape (a reshape afterwards would make
        # a view, which a leaf's accumulator could not adopt as its .grad); a C-ordered array
        # reshapes to the kept sizes as a view of itself
        out = np.empty(shape, g.dtype)
        # (the ufunc's reduce directly: ndarray.sum's Python wrapper cost as much again)
        np.add.reduce(g, axes, None, out.reshape(tuple(n for i, n in enumerate(g.shape)
                                                       if i not in axes)))
        return out
    g = g.sum(axis=axes, keepdims=True)
    if lead:
        g = g.reshape(shape)
    return g


def accumulate_into(t: Tensor, g, graph: bool, steal: bool = False) -> None:
    """Add gradient ``g`` into ``t.grad`` with PyTorch's default layout rules. With ``steal``
    the engine vouches that no one else holds ``g``, so a new ``.grad`` may adopt it."""
    with GRAD_LOCK:
        cur = t._grad
        if cur is None:
            if graph:
                t._grad = _as_tensor(g).clone() if isinstance(g, Tensor) else _as_tensor(g)
            else:
                g = _raw(g)
                d = t._data
                # (an array owning its memory: not a view, nor memory a library lent NumPy)
                if steal and type(g) is np.ndarray and g.base is None and g.flags.owndata \
                        and g.size and g.flags.writeable and g.dtype == d.dtype \
                        and g.shape == d.shape \
                        and (g.strides == d.strides or g.flags.c_contiguous and not _L.dense_np(d)):
                    new = g   # nobody else holds this fresh array: adopt it, as PyTorch does
                elif not d.size:   # PyTorch: an empty leaf's strides, whatever they are
                    from .._layout import empty_np, torch_strides
                    new = empty_np(d.shape, torch_strides(d), d.dtype)
                else:
                    new = np.empty_like(d) if _L.dense_np(d) else np.empty(d.shape, d.dtype)
                    np.copyto(new, g)
                t._grad = _make(new, Version(), False, None)
        elif graph:
            t._grad = cur + _as_tensor(g)
        else:
            g = _raw(g)
            cd = cur._data
            if cd.shape != g.shape:
                g = np.broadcast_to(g, cd.shape)
            try:
                np.add(cd, g, out=cd, casting="unsafe")
            except TypeError:   # complex32 pairs, which NumPy cannot add (ember._chalf)
                cd[...] = _chalf_add(cd, g)
            cur._vc.v += 1


def _run_tensor_hooks(node, grads: list, graph: bool, pre: bool = True) -> list:
    """The hooks that run before ``node``, in PyTorch's order: tensor hooks of its outputs
    (also on an output without gradient, which they see as None), ``retain_grad``, then (with
    ``pre``) the node's pre-hooks."""
    h = node._h
    for nr, hooks in h.tensor_pre.items():
        for fn in list(hooks.values()):
            if grads[nr] is None:
                if fn(None) is not None:
                    raise RuntimeError("can't replace a None gradient with a non-None value")
                continue
            g = _as_tensor(grads[nr])
            r = fn(g)
            if r is not None:
                r = _checked_hook_result(fn, r, g)
                grads[nr] = r if graph else _raw(r)
    for nr, fn in list(h.retains.items()):
        if grads[nr] is not None:
            fn(_as_tensor(grads[nr]).detach() if not graph else grads[nr])
    if pre and h.pre:
        grads = _run_pre_hooks(node, grads, graph)
    return grads


def _run_pre_hooks(node, grads: list, graph: bool) -> list:
    """The node's pre-hooks: they see (and may replace) the gradients of its differentiable
    outputs."""
    outs = _diff_outputs(node)
    for fn in list(node._h.pre.values()):
        sel = grads if outs is None else [grads[k] for k in outs]
        r = fn(tuple(_as_tensor(g) if g is not None else None for g in sel))
        if r is not None:
            r = [None if x is None else (x if graph else _raw(x)) for x in r]
            if outs is None:
                grads = r
            else:
                grads = list(grads)
                for k, x in zip(outs, r):
                    grads[k] = x
    return grads


def _tensor_hooks_only(node, grads: list, graph: bool, batched: bool) -> list:
    """Tensor hooks and ``retain_grad`` of a node that does not run (PyTorch calls them on an
    input of ``grad()`` whose gradient it captures)."""
    if batched:
        from .._batched import _per_example_list
        return _per_example_list(lambda gs: _run_tensor_hooks(node, gs, False, False), grads)
    return _run_tensor_hooks(node, grads, graph, False)


def _diff_outputs(node):
    """The outputs of a built-in node that are differentiable, where some are not (sort's
    indices): PyTorch's node has inputs only for those, so its hooks see only their gradients.
    None where every output is."""
    op = node.op
    if op is None or len(op.diff_out) == node.n_out:
        return None
    return op.diff_out


def _run_post_hooks(node, grads_in, grads_out, graph: bool):
    outs = _diff_outputs(node)
    if outs is not None:
        grads_out = [grads_out[k] for k in outs]
    for fn in list(node._h.post.values()):
        r = fn(tuple(None if x is None else _as_tensor(x) for x in grads_in),
               tuple(None if x is None else _as_tensor(x) for x in grads_out))
        if r is not None:
            grads_in = tuple(None if x is None else (x if graph else _raw(x)) for x in r)
    return grads_in


def _run_leaf_hooks(node: AccumulateGrad, grads: list, graph: bool) -> None:
    """Hooks registered on a leaf tensor: they see (and may replace) its gradient, also when
    ``autograd.grad`` captures it instead of accumulating."""
    x = node.variable._x
    if x is not None and x.hooks:
        g = grads[0]
        for fn in list(x.hooks.values()):
            if g is None:
                if fn(None) is not None:
                    raise RuntimeError("can't replace a None gradient with a non-None value")
                continue
            gt = _as_tensor(g)
            r = fn(gt)
            if r is not None:
                r = _checked_hook_result(fn, r, gt)
                g = r if graph else _raw(r)
        grads[0] = g


def _whole_base(g: np.ndarray) -> np.ndarray:
    """The array owning ``g``'s memory when ``g`` is a view of all of it in its own layout
    (``w.t()``'s gradient transposed back) and nothing but ``g`` refers to it, else ``g``:
    such a base can be adopted as a ``.grad`` where the view could not."""
    b = g.base
    # references to b: g.base, the name b and getrefcount's argument; to g: the caller's name,
    # the parameter and getrefcount's argument. One more is a holder (a hook, a retained grad)
    if (type(b) is np.ndarray and b.shape == g.shape and b.strides == g.strides
            and b.dtype == g.dtype and sys.getrefcount(b) <= 3 and sys.getrefcount(g) <= 3):
        return b
    return g


def _leaf_accumulate(node: AccumulateGrad, grads: list, graph: bool) -> None:
    t = node.variable
    if not t._rg:
        return   # requires_grad_(False) after the forward: nothing is accumulated
    if t._fn is not None:
        # it stopped requiring grad, then an in-place op with a tensor that does gave it history
        raise RuntimeError("leaf variable has been moved into the graph interior")
    x = t._x
    g = grads[0]
    if g is not None:
        grads[0] = None
        # references now: `g` here and getrefcount's argument; anything more is another holder
        # (another input's buffer, a retained grad, a view, the caller's `gradient=`, a tensor a
        # hook kept). The engine drops its own before running the accumulator. A leaf with
        # hooks never adopts: its hooks saw this array.
        if not graph and type(g) is np.ndarray and g.base is not None:
            g = _whole_base(g)
        steal = not graph and (x is None or not x.hooks) and sys.getrefcount(g) <= 2
        accumulate_into(t, g, graph, steal)
    # (with no gradient too: PyTorch calls these hooks whenever the accumulator runs)
    if x is not None and x.post_acc:
        for fn in list(x.post_acc.values()):
            fn(t)


def _graph_nodes(roots, want_parents: bool):
    """Dependency counts over the nodes reachable from ``roots``, found without recursion, and
    (when asked) each node's parents, for finding what leads to the requested inputs."""
    deps = {}
    parents = {} if want_parents else None
    stack = list(dict.fromkeys(r for r in roots if r is not None))
    roots = set(stack)
    pop, push = stack.pop, stack.append
    while stack:
        n = pop()
        for e in n._next:
            m = e[0]
            if m is None:
                continue
            if m in deps:
                deps[m] += 1
            else:
                deps[m] = 1
                if m not in roots:
                    push(m)
            if want_parents:
                parents.setdefault(m, []).append(n)
    return deps, parents


def _leads_to(targets, parents) -> set:
    """Nodes with a target strictly downstream: the ones that must execute."""
    out = set()
    stack = list(targets)
    while stack:
        m = stack.pop()
        for n in parents.get(m, ()):
            if n not in out:
                out.add(n)
                stack.append(n)
    return out


def run_backward(roots, grads, keep_graph: bool, create_graph: bool, inputs=None,
                 accumulate: bool = True, batched: bool = False):
    """Propagate ``grads`` from ``roots``, a list of (node, output_nr) pairs.

    With ``inputs``, a list of (node, output_nr, tensor), only the parts of the graph leading to
    them run; gradients arriving there are accumulated into the tensors' ``.grad``
    (``backward(inputs=...)``) or, with ``accumulate=False``, returned (``autograd.grad``).
    With ``batched`` (no create_graph), ``grads`` are ``_batched.BatchedArray``s: a batch of
    cotangents that the bare-array pass carries through every VJP at once.
    """
    graph = create_graph
    # -- batched cotangents: the same loop with other helpers, chosen once per call
    if batched:
        from .._batched import engine_variants
        ns0, call, t_hooks, l_hooks, p_hooks = engine_variants()
    else:
        ns0, call, t_hooks, l_hooks, p_hooks = (NS[0], call_node, _run_tensor_hooks,
                                                _run_leaf_hooks, _run_post_hooks)
    deps, parents = _graph_nodes([r[0] for r in roots], inputs is not None)
    targets = needed = captured = execs = None
    if inputs is not None:
        targets = {}
        for i, (n, nr, _) in enumerate(inputs):
            targets.setdefault(n, []).append((nr, i))
        needed = _leads_to(targets, parents)
        captured = [None] * len(inputs)
        # what the pass runs, as PyTorch's exec_info: the nodes leading to an input, and the
        # inputs (an input of grad() that leads to no other only has its gradient captured).
        # Nothing else is ever queued, and no gradient is computed for it.
        execs = needed.union(targets)
        for m in deps:
            if m not in execs:
                deps[m] = _NEVER
    buffers = {}
    for (n, nr), g in zip(roots, grads):
        buf = buffers.get(n)
        if buf is None:
            buf = buffers[n] = [None] * n.n_out
        try:
            buf[nr] = g if buf[nr] is None else buf[nr] + g
        except TypeError:   # complex32 pairs, which NumPy cannot add (ember._chalf)
            buf[nr] = _chalf_add(buf[nr], g)
    # the ready queue holds (-sequence_nr, node), pushed in PyTorch's order: heapq sifts as its
    # binary heap does, so equal priorities (accumulators) come out in the same order
    if len(roots) == 1:
        heap = [(-roots[0][0]._seq, roots[0][0])]   # a lone root is run first, whatever it is
    else:
        # PyTorch's GraphRoot hands the roots on in order, each at its last edge, and only those
        # no other root leads to and that the pass runs
        heap = []
        last = {n: i for i, (n, _) in enumerate(roots)}
        for i, (n, _) in enumerate(roots):
            if last[n] == i and deps.get(n, 0) == 0 and (execs is None or n in execs):
                heapq.heappush(heap, (-n._seq, n))
    st = STATE
    anomaly = st.anomaly and not batched   # (a batched pass skips the anomaly checks)
    prev_grad = st.grad
    st.grad = create_graph
    callbacks = _Pass(deps, roots, needed, targets)
    st.callbacks.append(callbacks)
    heappop, heappush = heapq.heappop, heapq.heappush
    try:
        # a ready node kept out of the heap, with its gradients kept out of `buffers`: a chain
        # of single-consumer nodes never touches either
        pending = pending_grads = None
        while True:
            if pending is not None:
                # skipping the push and pop of the pending node leaves the heap as PyTorch's
                # only when it outranks every queued node (a tie goes to the queued one)
                if heap and heap[0][0] <= -pending._seq:
                    buffers[pending] = pending_grads
                    heappush(heap, (-pending._seq, pending))
                    node = heappop(heap)[1]
                    grads = buffers.pop(node, None)
                else:
                    node, grads = pending, pending_grads
                pending = None
            elif heap:
                node = heappop(heap)[1]
                grads = buffers.pop(node, None)
            else:
                break
            is_leaf = type(node) is AccumulateGrad
            hooked = False
            if targets is not None:
                tg = targets.get(node)
                if not (node in needed or (accumulate and tg is not None)):
                    # an input of grad() leading to no other one (or a lone root leading to
                    # none): as in PyTorch only its tensor hooks run, then it is captured
                    if grads is None:
                        grads = [None] * node.n_out
                    if is_leaf:
                        l_hooks(node, grads, graph)
                    if node._h is not None:
                        grads = _tensor_hooks_only(node, grads, graph, batched)
                    if tg is not None:
                        for nr, i in tg:
                            captured[i] = grads[nr]
                    continue
                if tg is not None:
                    if grads is None:
                        grads = [None] * node.n_out
                    if not accumulate:
                        for nr, i in tg:   # captured as it arrives, before any hook
                            captured[i] = grads[nr]
                    elif not is_leaf:
                        # backward(inputs=[intermediate]) retains its grad, after its tensor
                        # hooks and before the node's pre-hooks, as PyTorch's retain_grad
                        hooked = True
                        h = node._h
                        if h is not None:
                            grads = _run_tensor_hooks(node, grads, graph, False)
                        seen = []   # a tensor named twice in inputs retains its grad once
                        for nr, i in tg:
                            t = inputs[i][2]
                            if grads[nr] is not None and not t.retains_grad and not any(
                                    t is u for u in seen):
                                seen.append(t)
                                accumulate_into(t, grads[nr], graph)
                        if h is not None and h.pre:
                            grads = _run_pre_hooks(node, grads, graph)
                        if node not in needed and node.op is not None and node.op.folded:
                            # PyTorch's graph has the fold's outer view node here and the
                            # product below it, which the pass does not need: only the view
                            # runs (reading no saved tensor)
                            continue
            if is_leaf:
                if grads is None:
                    grads = [None]
                # the leaf's own hooks first: PyTorch keeps them as the accumulator's tensor
                # pre-hooks, which run before its node pre-hooks
                l_hooks(node, grads, graph)
                h = node._h
                if h is not None:
                    grads = t_hooks(node, grads, graph)
                post = h is not None and h.post
                g_in = (grads[0],) if post else None
                _leaf_accumulate(node, grads, graph)
                if post:
                    p_hooks(node, (), g_in, graph)
                continue
            if not hooked and node._h is not None:
                # (also with no gradient at all: PyTorch runs the node and its hooks see None)
                grads = t_hooks(node, [None] * node.n_out if grads is None else grads, graph)
            elif grads is None:
                grads = [None] * node.n_out
            op = node.op
            if not graph and op is not None and node._h is None and node.n_out == 1 \
                    and not anomaly:
                # the fast path: a built-in op's VJP on bare arrays, no hooks
                g = grads[0]
                nxt = node._next
                if g is None:
                    check_saved_versions(node)
                    out = (None,) * len(nxt)
                else:
                    saved = node._saved
                    if saved is None:
                        raise RuntimeError(FREED)
                    vals = []
                    held = False   # a saved tensor, so the node is freed after it ran
                    for e in saved:
                        if type(e) is tuple:
                            held = True
                            if len(e) == 2:
                                t = e[0]
                                x = t._x
                                if x is not None and x.detached > node._seq and t._fn is None:
                                    raise RuntimeError(DETACHED)
                                if t._vc.v != e[1]:
                                    raise saved_version_error(node)
                                vals.append(t._data)
                            else:
                                if e[1].v != e[2]:
                                    raise saved_version_error(node)
                                vals.append(e[0])
                        elif hasattr(e, "unpack"):
                            vals = unpack_saved(node, False)
                            held = True
                            break
                        else:
                            vals.append(e)
                    # (with `execs`: no gradient is asked for an input the pass does not run,
                    # and the node that would receive it never gets ready)
                    n_in = len(nxt)
                    if n_in == 1:
                        need = _NEED1
                        if execs is not None and nxt[0][0] not in execs:
                            need = None
                    elif n_in == 2:
                        m0, m1 = nxt[0][0], nxt[1][0]
                        if execs is None:
                            need = (m0 is not None, m1 is not None)
                        else:
                            need = (m0 is not None and m0 in execs,
                                    m1 is not None and m1 in execs)
                            if not (need[0] or need[1]):
                                need = None
                    else:
                        need = tuple([e[0] is not None and (execs is None or e[0] in execs)
                                      for e in nxt])
                        if execs is not None and not any(need):
                            need = None
                    if need is None:
                        out = (None,) * n_in
                    else:
                        try:
                            out = op.vjp(ns0, g, need, *vals, *node._params)
                        except Exception as ex:
                            if not batched:
                                if not isinstance(ex, TypeError) or ns0 is not NS[0]:
                                    raise
                                # NumPy refused complex32 pairs (or a real type error)
                                from .._chalf import vjp as _chalf_vjp
                                out = _chalf_vjp(ex, op, g, need, vals, node._params)
                            else:
                                # batched: a formula that reads plain values runs once per
                                # example
                                from .._batched import vjp_per_example
                                out = vjp_per_example(op, g, need, vals, node._params)
                    if held and not keep_graph:
                        node._saved = None
                if len(out) != len(nxt):
                    _count_error(node, out)
                for e, g in zip(nxt, out):
                    m = e[0]
                    if m is None:
                        continue
                    if g is not None:
                        if type(g) is not np.ndarray and type(g) is not _BA:
                            g = _raw(g) if isinstance(g, Tensor) else np.asarray(g, e[3])
                        if g.shape != e[2] or (g.dtype is not e[3] and g.dtype != e[3]):
                            g = _fix(g, e, False, node)
                        d = deps[m] - 1
                        deps[m] = d
                        buf = buffers.get(m)
                        if buf is None:
                            if d == 0 and m.n_out == 1:
                                if pending is not None:   # queued before m, as in PyTorch
                                    buffers[pending] = pending_grads
                                    heappush(heap, (-pending._seq, pending))
                                pending, pending_grads = m, [g]   # the chain's hand-off
                                continue
                            buf = buffers[m] = [None] * m.n_out
                        k = e[1]
                        try:
                            buf[k] = g if buf[k] is None else buf[k] + g
                        except TypeError:   # complex32 pairs, which NumPy cannot add (ember._chalf)
                            buf[k] = _chalf_add(buf[k], g)
                    else:
                        d = deps[m] - 1
                        deps[m] = d
                    if d == 0:
                        if pending is not None:   # queued before m, as in PyTorch
                            buffers[pending] = pending_grads
                            heappush(heap, (-pending._seq, pending))
                        pending, pending_grads = m, buffers.pop(m, None)
                # drop this frame's references to the gradients handed on, so that a leaf's
                # accumulator finds a fresh one unshared and may adopt it
                out = g = None
                continue
            nxt = node._next
            if all(g is None for g in grads):
                check_saved_versions(node)
                out = (None,) * len(nxt)
            else:
                if anomaly:
                    from .anomaly_mode import run_checked
                    out = run_checked(node, grads, graph)
                else:
                    out = call(node, grads, graph)
                if execs is not None and op is not None and len(out) == len(nxt):
                    # a built-in node computes nothing for an input the pass does not run
                    out = tuple(None if e[0] is None or e[0] not in execs else g
                                for e, g in zip(nxt, out))
            if node._h is not None and node._h.post:
                out = p_hooks(node, out, grads, graph)
            if not keep_graph:
                _free(node)
            _propagate(node, out, graph, deps, buffers, heap)
            out = None   # (as above: the buffers hold the gradients now, nothing else)
        for cb in callbacks:
            cb()
    finally:
        st.grad = prev_grad
        st.callbacks.pop()
    return captured


class _Pass(list):
    """One backward pass's final callbacks, plus what it will execute (for multi-grad hooks)."""

    _ids = __import__("itertools").count()

    def __init__(self, deps, roots, needed, targets):
        super().__init__()
        self.deps, self.roots, self.needed, self.targets = deps, roots, needed, targets
        self.id = next(_Pass._ids)   # unique, unlike id() of a freed list


def will_execute(node) -> bool:
    """Whether the backward pass running on this thread will run ``node``
    (``torch._C._will_engine_execute_node``)."""
    if not STATE.callbacks:
        raise RuntimeError(
            "_will_engine_execute_node should only be called during the backward pass")
    p = STATE.callbacks[-1]
    if node not in p.deps and all(r[0] is not node for r in p.roots):
        return False
    return p.needed is None or node in p.needed or node in p.targets


def queue_callback(fn) -> None:
    """Run ``fn()`` when the current backward pass finishes (PyTorch's final callbacks)."""
    if not STATE.callbacks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    STATE.callbacks[-1].append(fn)


def current_backward_id():
    """An identity for the backward pass running on this thread (None outside one)."""
    return STATE.callbacks[-1].id if STATE.callbacks else None


def _count_error(node, out):
    raise RuntimeError(
        f"function {node.name()} returned an incorrect number of gradients (expected "
        f"{len(node._next)}, got {len(out)})")


def _propagate(node, out, graph, deps, buffers, heap):
    nxt = node._next
    if len(out) != len(nxt):
        _count_error(node, out)
    for e, g in zip(nxt, out):
        m = e[0]
        if m is None:
            continue
        if g is not None:
            if graph:
                if not isinstance(g, Tensor):
                    g = _as_tensor(np.asarray(g, e[3]))
                if g._data.shape != e[2] or g._data.dtype != e[3]:
                    g = _fix(g, e, graph, node)
            else:
                if not isinstance(g, np.ndarray) and type(g) is not _BA:
                    g = _raw(g) if isinstance(g, Tensor) else np.asarray(g, e[3])
                if g.shape != e[2] or g.dtype != e[3]:
                    g = _fix(g, e, graph, node)
            buf = buffers.get(m)
            if buf is None:
                buf = buffers[m] = [None] * m.n_out
            k = e[1]
            try:
                buf[k] = g if buf[k] is None else buf[k] + g
            except TypeError:   # complex32 pairs, which NumPy cannot add (ember._chalf)
                buf[k] = _chalf_add(buf[k], g)
        d = deps[m] - 1
        deps[m] = d
        if d == 0:
            heapq.heappush(heap, (-m._seq, m))


def _chalf_add(a, b):
    from .._chalf import add
    return add(a, b)
