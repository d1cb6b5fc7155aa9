"""The backward engine's execution order against PyTorch's.

On graphs whose order no chain forces (branches, diamonds, several roots, multi-output nodes,
``autograd.grad`` with ``inputs`` that prune branches, ``backward(inputs=...)``) every node
reachable from the roots gets a pre-hook and a post-hook, and chosen tensors get tensor hooks
(and leaves post-accumulate hooks). The sequence in which they fire in ember must equal
PyTorch's exactly, which also checks that hooks on pruned branches do not fire.
Nodes are labelled by their breadth-first position from the roots and their name, so the two
graphs must also have the same shape.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from helpers import assert_same

R = np.random.default_rng(11)
X = R.uniform(0.2, 0.9, (3, 4))
Z = R.uniform(0.2, 0.9, (3, 4))


def _name(node) -> str:
    return node.name().replace("torch::", "ember::")


class Hooks:
    """Registers logging hooks on one library's graph. With ``acc_nodes`` the leaves'
    AccumulateGrad nodes get node hooks too; with ``detail`` the log also says which gradients
    each node hook saw as None."""

    def __init__(self, M, acc_nodes: bool = False, detail: bool = False):
        self.M = M
        self.log: list = []
        self.labels: dict = {}
        self._keep: list = []
        self.acc_nodes = acc_nodes
        self.detail = detail

    def tensor(self, name: str, t) -> None:
        """A tensor hook (and, on a leaf, a post-accumulate-grad hook)."""
        t.register_hook(lambda g, n=name: self.log.append(("tensor", n)))
        if t.is_leaf:
            t.register_post_accumulate_grad_hook(lambda _, n=name: self.log.append(("acc", n)))

    def graph(self, *roots) -> None:
        """Pre- and post-hooks on every node reachable from ``roots``, labelled breadth first."""
        queue = [r.grad_fn for r in roots if r.grad_fn is not None]
        seen: dict = {}
        while queue:
            n = queue.pop(0)
            if id(n) in seen:
                continue
            label = f"{len(seen)}:{_name(n)}"
            seen[id(n)] = label
            self._keep.append(n)
            if self.acc_nodes or "AccumulateGrad" not in label:
                n.register_prehook(self._pre(label))
                n.register_hook(self._post(label))
            queue.extend(m for m, _ in n.next_functions if m is not None)
        self.labels = seen

    def _pre(self, label):
        def hook(grad_outputs):
            self.log.append(("pre", label) + (
                (tuple(g is None for g in grad_outputs),) if self.detail else ()))
        return hook

    def _post(self, label):
        def hook(grad_inputs, grad_outputs):
            self.log.append(("post", label) + (
                (tuple(g is None for g in grad_inputs),) if self.detail else ()))
        return hook


def leaf(M, a):
    return M.from_numpy(a.copy()).requires_grad_()


# each scenario: f(M, H) -> values to compare (gradients); it builds, hooks and runs backward

def branches(M, H):
    x = leaf(M, X)
    a, b = x.sin(), x.cos()
    c = a * b
    d = a + b.exp()
    loss = (c + d.tanh()).sum()
    for n, t in (("x", x), ("a", a), ("b", b), ("c", c), ("d", d)):
        H.tensor(n, t)
    H.graph(loss)
    loss.backward()
    return [x.grad]


def diamond(M, H):
    x = leaf(M, X)
    a = x * 2
    b, c = a.exp(), a.sin()
    d = b + c
    loss = d.sum()
    for n, t in (("x", x), ("a", a), ("b", b), ("c", c)):
        H.tensor(n, t)
    H.graph(loss)
    loss.backward()
    return [x.grad]


def nested_diamonds_two_leaves(M, H):
    x, z = leaf(M, X), leaf(M, Z)
    a = x * z.exp()          # (no node releases both leaves at once: no tie)
    b = a.exp() * x          # x feeds two nodes created far apart
    c = (a.sin() + z).cos()
    e = b * c + a
    loss = e.sum() + (z * 3).sum()
    for n, t in (("x", x), ("z", z), ("a", a), ("b", b), ("c", c), ("e", e)):
        H.tensor(n, t)
    H.graph(loss)
    loss.backward()
    return [x.grad, z.grad]


def interleaved_chains(M, H):
    """Two chains built in interleaved order, of different lengths, then merged."""
    x = leaf(M, X)
    p, q = x, x
    for i in range(4):
        p = p * 1.1
        if i % 2 == 0:
            q = q.exp() * 0.5
    loss = (p + q).sum()
    H.tensor("x", x)
    H.tensor("p", p)
    H.tensor("q", q)
    H.graph(loss)
    loss.backward()
    return [x.grad]


def several_roots(M, H):
    x, z = leaf(M, X), leaf(M, Z)
    y1 = (x.exp() * z).sin().sum()
    y2 = (x.exp() + z).sum()
    y3 = (z * 2).sum()
    for n, t in (("x", x), ("z", z), ("y1", y1), ("y2", y2), ("y3", y3)):
        H.tensor(n, t)
    H.graph(y1, y2, y3)
    M.autograd.backward([y1, y2, y3])
    return [x.grad, z.grad]


def several_roots_grad(M, H):
    x, z = leaf(M, X), leaf(M, Z)
    y1 = (x * z).sin()
    y2 = x.exp() + z
    H.tensor("y1", y1)
    H.tensor("y2", y2)
    H.graph(y1, y2)
    g = M.from_numpy(np.ones((3, 4)))
    return list(M.autograd.grad([y1, y2], [z, x], [g, g * 2]))


def multi_output_split(M, H):
    x = leaf(M, X)
    a = x * 3
    s0, s1, s2 = a.split([1, 1, 2], 1)
    y = (s0 * 2).sum() + s2.exp().sum() + (s0 * s2[:, :1]).sum()   # s1 unused
    for n, t in (("a", a), ("s0", s0), ("s2", s2)):
        H.tensor(n, t)
    H.graph(y)
    y.backward()
    return [x.grad]


def multi_output_unbind_partial(M, H):
    x = leaf(M, X)
    rows = (x.sin()).unbind(0)
    y = rows[2].sum() * 2 + rows[0].exp().sum()
    H.tensor("r0", rows[0])
    H.tensor("r2", rows[2])
    H.graph(y)
    y.backward()
    return [x.grad]


def multi_output_var_mean_sort(M, H):
    x = leaf(M, X)
    v, m = M.var_mean(x * 2, 1)
    vals, idx = (x + 1).sort(1)
    y = (v * m).sum() + vals[:, -1].sum() + m.sum()
    for n, t in (("v", v), ("m", m), ("vals", vals)):
        H.tensor(n, t)
    H.graph(y)
    y.backward()
    return [x.grad]


def grad_prunes_other_leaf(M, H):
    x, z = leaf(M, X), leaf(M, Z)
    bx = (x * 2).sin()
    bz = (z * 3).cos()
    y = (bx + bz).sum()
    for n, t in (("x", x), ("z", z), ("bx", bx), ("bz", bz)):
        H.tensor(n, t)
    H.graph(y)
    return list(M.autograd.grad(y, [x]))


def grad_wrt_intermediate(M, H):
    """Nothing below the requested intermediate runs."""
    x = leaf(M, X)
    a = x.exp()
    b = a * 2
    c = b.sin() + a
    y = c.sum()
    for n, t in (("x", x), ("a", a), ("b", b), ("c", c)):
        H.tensor(n, t)
    H.graph(y)
    return list(M.autograd.grad(y, [b]))


def grad_wrt_intermediate_and_leaf(M, H):
    x, z = leaf(M, X), leaf(M, Z)
    a = x * z
    b = a.exp()
    y = (b * z).sum() + a.sum()
    for n, t in (("x", x), ("z", z), ("a", a), ("b", b)):
        H.tensor(n, t)
    H.graph(y)
    return list(M.autograd.grad(y, [a, z]))


def backward_inputs_prunes(M, H):
    x, z = leaf(M, X), leaf(M, Z)
    a = x.sin()
    bz = (z * a).exp()
    y = (a * 2 + bz).sum() + z.sum()
    for n, t in (("x", x), ("z", z), ("a", a), ("bz", bz)):
        H.tensor(n, t)
    H.graph(y)
    y.backward(inputs=[z])
    return [x.grad, z.grad]


def backward_inputs_intermediate(M, H):
    x = leaf(M, X)
    a = x.sin()
    a.retain_grad()
    b = a.exp()
    y = (b * a).sum()
    for n, t in (("x", x), ("a", a), ("b", b)):
        H.tensor(n, t)
    H.graph(y)
    y.backward(inputs=[a, x])
    return [x.grad, a.grad]


def retain_grad_and_shared_leaf(M, H):
    x = leaf(M, X)
    a = x * x
    a.retain_grad()
    b = (a + x).exp()
    b.retain_grad()
    y = (b.sum() + a.mean()) * 2
    for n, t in (("x", x), ("a", a), ("b", b), ("y", y)):
        H.tensor(n, t)
    H.graph(y)
    y.backward()
    return [x.grad, a.grad, b.grad]


def leaves_released_together(M, H):
    """One node makes several AccumulateGrad nodes ready at once: equal priorities, so the
    order is the ready queue's tie-break (PyTorch's: its binary heap's, from push order)."""
    xs = [leaf(M, X[i % 3]) for i in range(8)]
    for i, x in enumerate(xs):
        H.tensor(f"x{i}", x)
    y = M.stack(xs) * 2
    H.graph(y)
    y.sum().backward()
    return [x.grad for x in xs]


def leaves_released_together_by_add(M, H):
    ys = [leaf(M, Z[i % 3]) for i in range(5)]
    for i, x in enumerate(ys):
        H.tensor(f"y{i}", x)
    s = ys[0] + ys[1]
    t = ys[2] * ys[3] * ys[4]
    y = (s * t).sum()
    H.graph(y)
    y.backward()
    return [x.grad for x in ys]


# graphs whose order is fixed by priorities alone (no two ready nodes share one)
SCENARIOS = [branches, diamond, nested_diamonds_two_leaves, interleaved_chains, several_roots,
             several_roots_grad, multi_output_split,
             multi_output_unbind_partial, multi_output_var_mean_sort, grad_prunes_other_leaf,
             grad_wrt_intermediate, grad_wrt_intermediate_and_leaf, backward_inputs_prunes,
             backward_inputs_intermediate, retain_grad_and_shared_leaf]
# graphs where several leaves become ready at the same moment: the tie-break decides
TIES = [leaves_released_together, leaves_released_together_by_add]


def _run(M, f, **kw):
    H = Hooks(M, **kw)
    vals = f(M, H)
    return H, vals


def _compare(f, **kw):
    he, ve = _run(ember, f, **kw)
    ht, vt = _run(torch, f, **kw)
    assert sorted(he.labels.values()) == sorted(ht.labels.values()), "graphs differ"
    assert len(ht.log) > 3
    if he.log != ht.log:
        lines = [f"{i:3} {str(a):60} {b}" for i, (a, b) in
                 enumerate(zip(he.log + [None] * len(ht.log), ht.log + [None] * len(he.log)))
                 if a is not None or b is not None]
        raise AssertionError("hook order differs (ember | torch):\n" + "\n".join(lines))
    assert_same(ve, vt)


@pytest.mark.parametrize("f", SCENARIOS, ids=[f.__name__ for f in SCENARIOS])
def test_hook_order_matches_torch(f):
    """Tensor hooks, and pre/post hooks of every node but the leaves' AccumulateGrad."""
    _compare(f)


@pytest.mark.parametrize("f", TIES, ids=[f.__name__ for f in TIES])
def test_ties_between_leaves(f):
    """Equal priorities (AccumulateGrad nodes) are broken as PyTorch's heap breaks them, not by
    memory address: the same program must give the same order every time."""
    for _ in range(3):
        _compare(f)


@pytest.mark.parametrize("f", [branches, several_roots, backward_inputs_intermediate],
                         ids=lambda f: f.__name__)
def test_accumulate_grad_node_hooks(f):
    """AccumulateGrad's own pre/post hooks, relative to the leaf's tensor hooks (PyTorch runs
    the tensor hooks first, and calls the post-hooks with no grad_inputs)."""
    _compare(f, acc_nodes=True)


@pytest.mark.parametrize("f", SCENARIOS, ids=[f.__name__ for f in SCENARIOS])
def test_node_hooks_see_the_same_none_gradients(f):
    """Which grad_outputs a pre-hook and which grad_inputs a post-hook get as None (outputs
    without gradient; inputs on pruned branches)."""
    _compare(f, detail=True)


def test_pruned_branches_do_not_fire():
    """The scenarios above are meaningful: PyTorch really prunes these hooks."""
    ht, _ = _run(torch, grad_prunes_other_leaf)
    fired = {e[1] for e in ht.log}
    assert "bz" not in fired and "z" not in fired and "bx" in fired
    assert not any("CosBackward0" in str(e[1]) for e in ht.log)
    he, _ = _run(ember, grad_prunes_other_leaf)
    assert {e[1] for e in he.log} == fired
    ht, _ = _run(torch, grad_wrt_intermediate)
    fired = {e[1] for e in ht.log}
    assert "x" not in fired and "a" not in fired and "b" in fired
    assert not any("ExpBackward0" in str(e[1]) for e in ht.log)
    he, _ = _run(ember, grad_wrt_intermediate)
    assert {e[1] for e in he.log} == fired


def test_order_is_not_forced():
    """The graphs above do admit other orders: a reversed-priority engine would differ. Here the
    two branches of ``branches`` run in creation order reversed (most recent first)."""
    ht, _ = _run(torch, branches)
    seq = [e[1] for e in ht.log if e[0] == "tensor"]
    assert seq.index("d") < seq.index("c") and seq.index("b") < seq.index("a")


# ---- the order without hooks ----------------------------------------------------------------
# Hooks on a node make the engine take its general path. To see the order of the fast path (a
# built-in node's VJP on bare arrays, handing its single ready successor straight on), the
# probes here are custom Functions that log when their backward runs; the nodes between them
# carry no hooks.

def _probe(M, log):
    class Probe(M.autograd.Function):
        @staticmethod
        def forward(ctx, x, label):
            ctx.label = label
            return x * 1

        @staticmethod
        def backward(ctx, g):
            log.append(ctx.label)
            return g, None
    return lambda label, t: Probe.apply(t, label)


def two_chains(M, P):
    x = leaf(M, X)
    a = P("a1", P("a0", x).sin().exp())
    b = P("b1", P("b0", x).cos())
    return (a * b).sum(), [x]


def diamond_arms(M, P):
    x = leaf(M, X)
    a = x * 2
    b = P("b", a).exp().tanh()
    c = P("c", a).sin()
    return (P("d", b + c) * 3).sum(), [x]


def fan_of_chains(M, P):
    x = leaf(M, X)
    outs = []
    for i in range(5):
        t = P(f"s{i}", x)
        for _ in range(i):
            t = (t * 1.01).exp().log()
        outs.append(P(f"e{i}", t))
    total = outs[2] * outs[0] + outs[4] - outs[1] * outs[3]
    return total.sum(), [x]


def interleaved_probes(M, P):
    x, z = leaf(M, X), leaf(M, Z)
    p, q = P("p", x), P("q", z)
    for i in range(4):
        p = P(f"p{i}", p.sin() * 1.5)
        if i % 2:
            q = P(f"q{i}", q.exp() * 0.5)
    return (p * q + p.exp()).sum(), [x, z]


def grad_with_probes(M, P):
    x, z = leaf(M, X), leaf(M, Z)
    a = P("a", x.sin())
    b = P("b", (a * z).exp())
    c = P("c", z.cos())
    return (b + c * a).sum(), [z, x]


HOOKLESS = [two_chains, diamond_arms, fan_of_chains, interleaved_probes, grad_with_probes]


@pytest.mark.parametrize("f", HOOKLESS, ids=[f.__name__ for f in HOOKLESS])
@pytest.mark.parametrize("how", ["backward", "grad", "create_graph"])
def test_order_without_hooks(f, how):
    logs, vals = [], []
    for M in (ember, torch):
        log: list = []
        loss, leaves = f(M, _probe(M, log))
        if how == "backward":
            loss.backward()
            vals.append([t.grad for t in leaves])
        else:
            vals.append(list(M.autograd.grad(loss, leaves, create_graph=how == "create_graph")))
        logs.append(log)
    assert logs[0] == logs[1], f"\nember: {logs[0]}\ntorch: {logs[1]}"
    assert_same(vals[0], vals[1])


def test_hooked_nodes_are_freed_too():
    """A node with hooks runs on the engine's general path; its saved tensors are freed after
    backward all the same (second backward: PyTorch's error)."""
    from helpers import raises_same

    def run(M, hook_kind):
        x = leaf(M, X)
        y = x.exp()
        if hook_kind == "tensor":
            y.register_hook(lambda g: g * 2)
        elif hook_kind == "pre":
            y.grad_fn.register_prehook(lambda go: None)
        else:
            y.grad_fn.register_hook(lambda gi, go: None)
        loss = y.sum()          # only the hooked node saved a tensor
        loss.backward()
        loss.backward()
    for kind in ("tensor", "pre", "post"):
        raises_same(lambda k=kind: run(ember, k), lambda k=kind: run(torch, k))
