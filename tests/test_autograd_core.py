"""Reverse-mode autograd core (and forward-mode basics), compared with PyTorch."""
import gc
import sys
import threading
import time

import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, both, check_op, raises_same

R = np.random.default_rng(0)
A = R.standard_normal((3, 4))
B = R.standard_normal((3, 4))


# ---- requires_grad, leaves, grad_fn ----------------------------------------------------------

def test_requires_grad_propagation_and_leaves():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        c = M.tensor(B)
        y = x * c
        z = c * 2
        w = y + z
        return [x.requires_grad, x.is_leaf, x.grad_fn, c.is_leaf, y.requires_grad, y.is_leaf,
                z.requires_grad, z.is_leaf, z.grad_fn, w.grad_fn, w.grad_fn.next_functions,
                y.grad_fn.next_functions, y.grad_fn.next_functions[0][0].variable is x,
                y.output_nr, w.detach().is_leaf]
    both(f)


def test_requires_grad_errors():
    cases = [
        lambda M: M.ones(2, dtype=M.int64, requires_grad=True),
        lambda M: M.ones(2, dtype=M.int64).requires_grad_(),
        lambda M: M.tensor([1, 2], requires_grad=True),
        lambda M: (M.ones(2, requires_grad=True) * 2).requires_grad_(False),
        lambda M: setattr(M.ones(2, requires_grad=True) * 2, "requires_grad", False),
        lambda M: M.ones(2).retain_grad(),
        lambda M: M.ones(2).register_hook(lambda g: g),
    ]
    for c in cases:
        raises_same(lambda c=c: c(ember), lambda c=c: c(torch))


def test_requires_grad_setters():
    def f(M):
        a = M.ones(2)
        r = [a.requires_grad_() is a, a.requires_grad]
        a.requires_grad = False
        r.append(a.requires_grad)
        a.requires_grad_(True)
        b = a * 2
        r += [b.requires_grad_() is b, b.requires_grad, M.ones(2, dtype=M.int64).requires_grad_(
            False).requires_grad, M.zeros(2, dtype=M.complex64, requires_grad=True).requires_grad]
        return r
    both(f)


def test_grad_fn_names_and_graph_walk():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        y = M.tensor(B, requires_grad=True)
        out = ((x * y).exp() - y / 2).sum()
        names, stack, seen = [], [out.grad_fn], set()
        while stack:
            n = stack.pop()
            if n is None or id(n) in seen:
                continue
            seen.add(id(n))
            names.append(n.name().replace("torch::", "ember::"))
            stack.extend(m for m, _ in n.next_functions)
        return sorted(names)
    e, _ = both(f)
    assert "ember::autograd::AccumulateGrad" in e


# ---- backward ------------------------------------------------------------------------------

def test_backward_with_gradient_and_accumulation():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        y = (x * x).sin()
        y.backward(M.tensor(B))
        g1 = x.grad.clone()
        y2 = (x * 3).sum()
        y2.backward()
        return [g1, x.grad]
    both(f)


def test_backward_retain_graph():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad
    both(f)

    def g(M):
        x = M.tensor(A, requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward()
        y.backward()
    err = raises_same(lambda: g(ember), lambda: g(torch))
    assert str(err).startswith("Trying to backward through the graph a second time")


def test_backward_create_graph_double_backward():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        y = (x ** 3).sum()
        y.backward(create_graph=True)
        g = x.grad
        r = [g, g.requires_grad, g.grad_fn is not None]
        x.grad = None
        g.sum().backward()
        return r + [x.grad]
    both(f)


def test_backward_inputs():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        y = M.tensor(B, requires_grad=True)
        z = (x * y).sum()
        z.backward(inputs=[x], retain_graph=True)
        r = [x.grad, y.grad]
        z.backward(inputs=y)
        r += [x.grad, y.grad]
        h = x * 2
        w = (h * y).sum()
        h.retain_grad()
        w.backward(inputs=[h])
        return r + [h.grad, x.grad]
    both(f)
    raises_same(lambda: ember.ones(2, requires_grad=True).sum().backward(inputs=[]),
                lambda: torch.ones(2, requires_grad=True).sum().backward(inputs=[]))


def test_autograd_backward_several_roots():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        y1 = x * 2
        y2 = (x * x).sum()
        M.autograd.backward([y1, y2], [M.tensor(B), None])
        return x.grad
    both(f)

    def g(M):
        x = M.tensor(A, requires_grad=True)
        M.autograd.backward((x * 2).sum(), grad_tensors=M.tensor(3.0))
        M.autograd.backward([x.sum()], [M.tensor(2.0)])
        return x.grad
    both(g)


def test_backward_errors():
    cases = [
        lambda M: (M.ones(2, 2, requires_grad=True) * 2).backward(),   # non-scalar
        lambda M: M.ones(2, 2).sum().backward(),
        lambda M: (M.ones(2, requires_grad=True) * 2).backward(M.ones(3)),
        lambda M: M.autograd.backward([M.ones(2, requires_grad=True).sum()], [M.ones(1),
                                                                         M.ones(1)]),
        lambda M: M.autograd.grad((M.ones(2, requires_grad=True) * 2).sum(),
                                  M.ones(2, requires_grad=True)),
        lambda M: M.autograd.grad(M.ones(2, requires_grad=True).sum(), M.ones(2)),
        lambda M: M.autograd.grad(M.ones(2, requires_grad=True).sum(), []),
    ]
    for c in cases:
        raises_same(lambda c=c: c(ember), lambda c=c: c(torch))


# ---- autograd.grad -------------------------------------------------------------------------

def test_grad_basic_and_grad_outputs():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        y = M.tensor(B, requires_grad=True)
        z = x.sin() * y
        gx, gy = M.autograd.grad(z, (x, y), grad_outputs=M.ones(3, 4) * 2, retain_graph=True)
        (gs,) = M.autograd.grad(z.sum(), [x])
        return [gx, gy, gs, x.grad, y.grad, gx.requires_grad]
    both(f)


def test_grad_retain_and_create_graph():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        y = (x.exp() * x).sum()
        (g,) = M.autograd.grad(y, x, create_graph=True)
        (g2,) = M.autograd.grad(g.sum(), x, retain_graph=True)
        (g3,) = M.autograd.grad(g.sum(), x)
        return [g, g.requires_grad, g.grad_fn is not None, g2, g3]
    both(f)


def test_grad_allow_unused_and_materialize():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        u = M.tensor(B, requires_grad=True)
        y = (x * 2).sum()
        r = list(M.autograd.grad(y, [x, u], allow_unused=True, retain_graph=True))
        r += list(M.autograd.grad(y, [x, u], materialize_grads=True))
        return r
    both(f)
    err = raises_same(
        lambda: ember.autograd.grad((ember.ones(2, requires_grad=True) * 2).sum(),
                                    [ember.ones(2, requires_grad=True)]),
        lambda: torch.autograd.grad((torch.ones(2, requires_grad=True) * 2).sum(),
                                    [torch.ones(2, requires_grad=True)]))
    assert "allow_unused=True" in str(err)
    raises_same(
        lambda: ember.autograd.grad(ember.ones(2, requires_grad=True).sum(),
                                    [ember.ones(2, requires_grad=True)], allow_unused=False,
                                    materialize_grads=True),
        lambda: torch.autograd.grad(torch.ones(2, requires_grad=True).sum(),
                                    [torch.ones(2, requires_grad=True)], allow_unused=False,
                                    materialize_grads=True))


def test_grad_wrt_intermediate_and_non_leaf_output():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        h = x.exp()
        y = (h * h).sum()
        (gh,) = M.autograd.grad(y, h, retain_graph=True)
        (gx,) = M.autograd.grad(y, x)
        return [gh, gx, x.grad]
    both(f)


# ---- retain_grad, hooks ---------------------------------------------------------------------

def test_retain_grad():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        h = x * 2
        h.retain_grad()
        h.retain_grad()
        y = (h * h).sum()
        y.backward(retain_graph=True)
        r = [h.retains_grad, x.retains_grad, h.grad, x.grad]
        y.backward()
        return r + [h.grad, x.grad]
    both(f)


def test_register_hook_replaces_gradient():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        seen = []
        hx = x.register_hook(lambda g: seen.append(("leaf", g.clone())))
        h = x * 2
        h.register_hook(lambda g: g * 10)
        h.register_hook(lambda g: seen.append(("h", g.clone())))
        (h * h).sum().backward()
        r = [x.grad, seen]
        hx.remove()
        x.grad = None
        (x * 1).sum().backward()
        r += [x.grad, len(seen)]
        x.grad = None
        x.register_hook(lambda g: g + 1)
        (x * 3).sum().backward()
        return r + [x.grad]
    both(f)


def test_hook_with_retain_grad_order():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        h = x * 2
        h.retain_grad()
        h.register_hook(lambda g: g * 3)
        h.sum().backward()
        return [h.grad, x.grad]
    both(f)


# ---- detach_, .data, in-place on leaves -----------------------------------------------------

def test_detach_inplace():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        h = x * 2
        r = [h.detach_() is h, h.requires_grad, h.grad_fn, h.is_leaf]
        y = (h * x).sum()
        y.backward()
        return r + [x.grad]
    both(f)
    raises_same(lambda: (ember.ones(3, requires_grad=True) * 1)[1:].detach_(),
                lambda: (torch.ones(3, requires_grad=True) * 1)[1:].detach_())


def test_data_assignment_keeps_leaf():
    def f(M):
        w = M.tensor(A, requires_grad=True)
        w.data = M.tensor(B)
        (w * w).sum().backward()
        w.data.mul_(0)      # not tracked
        return [w, w.grad, w.requires_grad, w.is_leaf, w._version]
    both(f)


def test_inplace_on_leaf_error():
    err = raises_same(lambda: ember.ones(2, requires_grad=True).mul_(2),
                      lambda: torch.ones(2, requires_grad=True).mul_(2))
    assert "leaf Variable that requires grad" in str(err)
    raises_same(lambda: ember.ones(2, requires_grad=True).__iadd__(1),
                lambda: torch.ones(2, requires_grad=True).__iadd__(1))


def test_inplace_on_non_leaf_records():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        h = x * 1
        h.mul_(3).add_(x)
        h.exp_()
        r = [h.grad_fn, h._version, h.grad_fn.next_functions]
        h.sum().backward()
        return r + [x.grad]
    both(f)


# ---- gradient layouts ----------------------------------------------------------------------

def test_grad_layout_follows_dense_param():
    def f(M):
        x = M.tensor(A).t().requires_grad_()           # a transposed (dense) leaf
        (x * 2).sum().backward()
        y = M.tensor(np.ones((4, 6)))[:, ::2].requires_grad_()  # non-dense leaf
        (y * 2).sum().backward()
        z = M.tensor(np.ones((2, 3, 4))).permute(2, 0, 1).requires_grad_()
        (z * 1).sum().backward()
        return [x.stride(), x.grad.stride(), x.grad, y.stride(), y.grad.stride(),
                z.grad.stride(), x.grad.is_contiguous()]
    both(f)


def test_grad_accumulates_in_place_without_create_graph():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        (x * 2).sum().backward()
        g0 = x.grad
        p0 = g0.data_ptr()
        (x * 3).sum().backward()
        r = [x.grad is g0, x.grad.data_ptr() == p0, g0]
        (x * 4).sum().backward(create_graph=True)
        r += [x.grad is g0, g0, x.grad]
        return r
    e, _ = both(f)
    assert e[0] is True and e[3] is False


def _leaf_stories(M):
    """Gradients the engine must not adopt as ``.grad``: each story mutates every tensor the user
    can see afterwards, so a ``.grad`` sharing memory with another one shows in the values."""
    C = M.tensor(B)
    out = []
    # one gradient routed to two (three) inputs: x + y hands the same array to both leaves
    x, y, w = (M.tensor(A, requires_grad=True) for _ in range(3))
    ((x + y + w) * C).sum().backward()
    x.grad.add_(1)
    y.grad.mul_(3)
    out += [x.grad, y.grad, w.grad]
    # a gradient that is a view of another one's (a leaf seen through a view)
    x, y = M.tensor(A, requires_grad=True), M.tensor(A.ravel(), requires_grad=True)
    ((x + y.view(3, 4)) * C).sum().backward()
    x.grad.add_(1)
    out += [x.grad, y.grad]
    # views of one array: cat's backward slices its gradient
    x, y = M.tensor(A, requires_grad=True), M.tensor(B, requires_grad=True)
    (M.cat([x, y]) * M.cat([C, C])).sum().backward()
    x.grad.add_(1)
    out += [x.grad, y.grad]
    # a hook's argument, on the leaf and on an intermediate that passes its gradient on
    kept = []
    x = M.tensor(A, requires_grad=True)
    x.register_hook(kept.append)
    (x * C).sum().backward()
    x2 = M.tensor(A, requires_grad=True)
    h = x2 + C
    h.register_hook(kept.append)
    (h * C).sum().backward()
    for k in kept:
        k.mul_(7)
    out += [x.grad, x2.grad] + kept
    # the accumulator's own pre- and post-hooks see it too
    kept = []
    x = M.tensor(A, requires_grad=True)
    h = (x + C) * C
    acc = h.grad_fn.next_functions[0][0].next_functions[0][0]
    acc.register_prehook(lambda go: kept.append(go[0]))
    acc.register_hook(lambda gi, go: kept.append(go[0]))
    h.sum().backward()
    for k in kept:
        k.mul_(7)
    out += [x.grad] + kept
    # a retained grad, and backward(inputs=) on an intermediate
    x = M.tensor(A, requires_grad=True)
    h = x + C
    h.retain_grad()
    (h * C).sum().backward()
    h.grad.mul_(5)
    out += [x.grad, h.grad]
    x = M.tensor(A, requires_grad=True)
    h = x + C
    (h * C).sum().backward(inputs=[h, x])
    h.grad.mul_(5)
    out += [x.grad, h.grad]
    # the caller's gradient=, passed on unchanged by add
    x = M.tensor(A, requires_grad=True)
    gv = M.tensor(B) * 1.0
    (x + C).backward(gv)
    gv.mul_(5)
    out += [x.grad]
    # retain_graph: the graph still holds what it saved, and the second pass accumulates
    x = M.tensor(A, requires_grad=True)
    h = (x * C).exp()
    h.sum().backward(retain_graph=True)
    g0 = x.grad.clone()
    h.sum().backward()
    out += [x.grad, g0]
    return out


def test_adopted_grads_alias_nothing_the_user_sees():
    assert_same(_leaf_stories(ember), _leaf_stories(torch))


def test_fresh_leaf_gradient_is_adopted(monkeypatch):
    """A gradient made by the backward pass that nothing else holds becomes ``.grad`` without a
    copy (PyTorch's AccumulateGrad steals it), also after a broadcast reduction (a bias)."""
    import ember.autograd.engine as eng
    seen = []
    orig = eng.accumulate_into

    def spy(t, g, graph, steal=False):
        seen.append(steal)
        orig(t, g, graph, steal)
        if steal:
            seen.append(t.grad._data is g)
    monkeypatch.setattr(eng, "accumulate_into", spy)
    x = ember.tensor(A, requires_grad=True)
    w = ember.tensor(B, requires_grad=True)
    b = ember.tensor(B[0], requires_grad=True)
    (x * w + b).sum().backward()
    assert seen == [True, True] * 3
    seen.clear()
    x.grad = w.grad = None
    ((x + w) * 2).sum().backward()     # one array for both: the first copies, the last adopts
    assert sorted(seen) == [False, True, True]
    assert not np.shares_memory(x.grad.numpy(), w.grad.numpy())


# ---- a complex gradient for a real input ----------------------------------------------------

def _r2c_function(M):
    class ToComplexGrad(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).to(M.complex128)    # not real: PyTorch's engine refuses it
    return ToComplexGrad


R2C_CASES = {
    # PyTorch's formula hands the complex gradient on: its engine raises
    "where": lambda M, x, c, m: M.where(m, x, c),
    "where_rev": lambda M, x, c, m: M.where(m, c, x),
    "where_0d": lambda M, x, c, m: M.where(m, x, c[0]),
    "sum_dtype": lambda M, x, c, m: x.sum(dtype=M.complex128) * c,
    "sum_dim_dtype": lambda M, x, c, m: x[None].sum(0, dtype=M.complex128),
    "mean_dtype": lambda M, x, c, m: x.mean(dtype=M.complex128) * c,
    "prod_dim_dtype": lambda M, x, c, m: x[None].prod(0, dtype=M.complex128),
    "cumprod_dtype": lambda M, x, c, m: x.cumprod(0, dtype=M.complex128),
    "logaddexp": lambda M, x, c, m: M.logaddexp(x, c),
    "fill_": lambda M, x, c, m: (c * 1).fill_(x[0]),
    "function": lambda M, x, c, m: _r2c_function(M).apply(x) * c,
    # its formula takes the real part (or the VJP is real itself): fine
    "where_number": lambda M, x, c, m: M.where(m, x, 1j),
    "where_number_rev": lambda M, x, c, m: M.where(m, 2j, x),
    "mul_1j": lambda M, x, c, m: x * 1j,
    "add_mul": lambda M, x, c, m: (x + c) * (c - x),
    "div": lambda M, x, c, m: c / x + x / c,
    "to": lambda M, x, c, m: x.to(M.complex128) * c,
    "view_as_complex": lambda M, x, c, m: M.view_as_complex(M.stack([x, x * x], -1)),
    "cat": lambda M, x, c, m: M.cat([x, c])[1:4],
    "cumsum_dtype": lambda M, x, c, m: x.cumsum(0, dtype=M.complex128),
    "copy_": lambda M, x, c, m: (c * 1).copy_(x),
    "setitem": lambda M, x, c, m: _set_slice(c * 1, x),
    "where_view_inplace": lambda M, x, c, m: _where_inplace(c * 1, x * 1),
}


def _set_slice(a, x):
    a[1:] = x[1:]
    return a


def _where_inplace(a, x):
    a[1:].mul_(x[1:])     # CopySlices over a mul: its formula takes the real part
    return a


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", list(R2C_CASES))
def test_complex_gradient_for_real_input(name, create_graph):
    """PyTorch's engine validates each gradient against its input: where the op's formula does
    not take the real part itself, a complex gradient for a real input raises."""
    def f(M):
        x = M.tensor([0.5, -1.2, 2.0], dtype=M.float64, requires_grad=True)
        c = M.tensor([0.3 + 1j, -1 + 0.5j, 2 - 1j], dtype=M.complex128, requires_grad=True)
        m = M.tensor([True, False, True])
        w = M.tensor([1 + 2j, 3 - 1j, 0.5 + 0.5j], dtype=M.complex128)
        loss = (R2C_CASES[name](M, x, c, m) * w).real.sum()
        try:
            gx, = M.autograd.grad(loss, [x], create_graph=create_graph)
        except RuntimeError as e:
            return ("raised", str(e))
        return ("ok", gx.detach().numpy().round(10).tolist(), str(gx.dtype)[6:])
    both(f)


def test_manual_grad_layout_preserved():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        x.grad = M.zeros(4, 3, dtype=M.float64).t()
        g0 = x.grad
        (x * 2).sum().backward()
        return [x.grad is g0, x.grad.stride(), x.grad]
    both(f)
    raises_same(lambda: setattr(ember.ones(2, requires_grad=True), "grad", ember.ones(3)),
                lambda: setattr(torch.ones(2, requires_grad=True), "grad", torch.ones(3)))
    raises_same(lambda: setattr(ember.ones(2, requires_grad=True), "grad",
                                ember.ones(2, dtype=ember.float64)),
                lambda: setattr(torch.ones(2, requires_grad=True), "grad",
                                torch.ones(2, dtype=torch.float64)))


# ---- Variable --------------------------------------------------------------------------------

def test_variable():
    def f(M):
        t = M.tensor(A)
        v = M.autograd.Variable(t, requires_grad=True)
        w = M.autograd.Variable(M.tensor(B))
        (v * w).sum().backward()
        return [type(v).__name__, v.requires_grad, w.requires_grad, v.grad, v.is_leaf]
    both(f)


# ---- scale and threads -----------------------------------------------------------------------

def test_million_op_chain_backward():
    limit = sys.getrecursionlimit()
    x = ember.ones(1, requires_grad=True)
    start = time.time()
    gc.disable()
    try:
        y = x
        for _ in range(1_000_000):
            y = -y
        y.sum().backward()
        del y
    finally:
        gc.enable()
    assert x.grad.tolist() == [1.0]
    assert sys.getrecursionlimit() == limit
    assert time.time() - start < 60


def test_threads_backward_on_independent_graphs():
    results, errors = {}, []

    def work(k):
        try:
            x = ember.tensor(A * (k + 1), requires_grad=True)
            for _ in range(20):
                x.grad = None
                ((x * x).sin() * k).sum().backward()
            (g,) = ember.autograd.grad((x.exp() * k).sum(), x)
            results[k] = (x.grad.numpy().copy(), g.numpy().copy())
        except Exception as ex:  # noqa: BLE001
            errors.append(ex)
    th = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    assert errors == []
    for k in range(8):
        xt = torch.tensor(A * (k + 1), requires_grad=True)
        ((xt * xt).sin() * k).sum().backward()
        (gt,) = torch.autograd.grad((xt.exp() * k).sum(), xt)
        np.testing.assert_allclose(results[k][0], xt.grad.numpy(), rtol=1e-10)
        np.testing.assert_allclose(results[k][1], gt.numpy(), rtol=1e-10)


def test_threads_accumulate_into_shared_leaf():
    w = ember.zeros(3, requires_grad=True)
    n_threads, n_iter = 8, 200
    errors = []
    barrier = threading.Barrier(n_threads)

    def work():
        try:
            barrier.wait()
            for _ in range(n_iter):
                (w * 1.0 + 0.0).sum().backward()
        except Exception as ex:  # noqa: BLE001
            errors.append(ex)
    th = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    assert errors == []
    assert w.grad.tolist() == [float(n_threads * n_iter)] * 3


# ---- forward-mode AD -------------------------------------------------------------------------

def test_dual_level_make_unpack():
    def f(M):
        fwAD = M.autograd.forward_ad
        p = M.tensor(A)
        t = M.tensor(B)
        with fwAD.dual_level() as lvl:
            d = fwAD.make_dual(p, t)
            u = fwAD.unpack_dual(d)
            r = [lvl, type(u).__name__, u._fields, u.primal, u.tangent, u[0], u[1],
                 fwAD.unpack_dual(p).tangent, u.primal.data_ptr() == p.data_ptr(),
                 u.tangent is t]
            y = (d * d).sin()
            r.append(fwAD.unpack_dual(y).tangent)
        r.append(fwAD.unpack_dual(y).tangent)
        return r
    both(f)


def test_enter_exit_dual_level():
    def f(M):
        fwAD = M.autograd.forward_ad
        lvl = fwAD.enter_dual_level()
        d = fwAD.make_dual(M.tensor(A), M.tensor(B))
        y = d.exp()
        r = [lvl, fwAD.unpack_dual(y).tangent]
        fwAD.exit_dual_level()
        r.append(fwAD.unpack_dual(y).tangent)
        return r
    both(f)
    raises_same(lambda: ember.autograd.forward_ad.make_dual(ember.ones(2), ember.ones(2)),
                lambda: torch.autograd.forward_ad.make_dual(torch.ones(2), torch.ones(2)))

    def g(M):
        with M.autograd.forward_ad.dual_level():
            M.autograd.forward_ad.make_dual(M.ones(2), M.ones(3))
    raises_same(lambda: g(ember), lambda: g(torch))


@pytest.mark.parametrize("name", ["mul", "div", "exp_sin", "sum", "view_t", "pow", "tanh",
                                  "sub_bcast"])
def test_forward_ad_tangents(name):
    fns = {
        "mul": lambda x, y: x * y,
        "div": lambda x, y: x / (y * y + 1),
        "exp_sin": lambda x, y: x.exp().sin() + y,
        "sum": lambda x, y: (x * y).sum(1),
        "view_t": lambda x, y: x.t().reshape(2, 6) * 2 + y.view(2, 6),
        "pow": lambda x, y: (x * x + 1) ** y,
        "tanh": lambda x, y: x.tanh() - y.sigmoid(),
        "sub_bcast": lambda x, y: x - y[0],
    }
    f = fns[name]
    check_op(f, f, A, B)


def test_forward_ad_with_backward_together():
    def f(M):
        fwAD = M.autograd.forward_ad
        x = M.tensor(A, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, M.tensor(B))
            y = (d * d).exp().sum()
            tg = fwAD.unpack_dual(y).tangent
            y.backward()
        return [tg, x.grad]
    both(f)
