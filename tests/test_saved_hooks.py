"""Saved-tensor hooks (ember.autograd.graph), compared with PyTorch."""
import gc

import numpy as np
import pytest
import torch

import ember
from helpers import both, raises_same


@pytest.fixture(autouse=True)
def _collect():
    yield
    gc.collect()   # keep each test's torch graphs (with Python hooks) from mixing in the GC


R = np.random.default_rng(3)
A = R.standard_normal((2, 3))
SQ = R.standard_normal((3, 3))


def _h(M):
    return M.autograd.graph


def test_pack_sees_every_saved_tensor():
    def f(M):
        log = []

        def pack(t):
            log.append(("p", tuple(t.shape), t.requires_grad, t.grad_fn is not None,
                        M.is_grad_enabled()))
            return t

        def unpack(t):
            log.append(("u", tuple(t.shape), M.is_grad_enabled()))
            return t
        x = M.tensor(A, requires_grad=True)
        w = M.tensor(SQ, requires_grad=True)
        with _h(M).saved_tensors_hooks(pack, unpack):
            y = (x * x).exp()
            z = (y @ w).sum() + x.sin().sum()
        n = len(log)
        z.backward()
        # (the order of the packs within one op may differ: torch packs mm's mat2 first)
        return [sorted(log[:n]), sorted(log[n:]), x.grad, w.grad]
    both(f)


def test_hooks_change_saved_values_and_nest():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        with _h(M).saved_tensors_hooks(lambda t: t * 10, lambda t: t):
            y = x.pow(2)
        y.sum().backward()
        return [x.grad]
    both(f)

    def nest(M):
        log = []
        H = _h(M).saved_tensors_hooks
        x = M.tensor(A, requires_grad=True)
        with H(lambda t: (log.append("p1"), t)[1], lambda t: (log.append("u1"), t)[1]):
            with H(lambda t: (log.append("p2"), t)[1], lambda t: (log.append("u2"), t)[1]):
                y = x.exp()
            z = y.sin()
        z.sum().backward()
        return log
    both(nest)


def test_pack_runs_without_grad_and_unpack_with_graph_mode():
    def f(M):
        log = []
        H = _h(M).saved_tensors_hooks

        def pack(t):
            with H(lambda a: (log.append("inner"), a)[1], lambda a: a):
                t.exp()
            return t.exp()
        x = M.tensor(A, requires_grad=True)
        with H(pack, lambda t: (log.append(M.is_grad_enabled()), t.log())[1]):
            y = x.sin()
        (g,) = M.autograd.grad(y.sum(), x, create_graph=True)
        return [log, g]
    both(f)


def test_custom_function_saved_tensors_use_hooks():
    def f(M):
        log = []

        class F(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * 2 + x * 0 + y * 0
        x = M.tensor(A, requires_grad=True)
        with _h(M).saved_tensors_hooks(
                lambda t: (log.append(("p", t.grad_fn is not None, t.requires_grad)), t * 1)[1],
                lambda t: (log.append("u"), t)[1]):
            y = F.apply(x)
        y.sum().backward()
        return [log, x.grad]
    both(f)


def test_double_backward_under_hooks():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        with _h(M).saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x * x * x
            (g,) = M.autograd.grad(y.sum(), x, create_graph=True)
        (g2,) = M.autograd.grad(g.sum(), x)
        return [g, g2]
    both(f)


def test_save_on_cpu():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        with _h(M).save_on_cpu():
            y = (x * x).exp()
        r = y.grad_fn._saved_result
        y.sum().backward()
        return [x.grad, r]
    both(f)


def test_bad_unpack_result():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        with _h(M).saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = x.exp()
        y.sum().backward()
    raises_same(lambda: f(ember), lambda: f(torch))


def test_disable_saved_tensors_hooks():
    def enter_inside(M):
        with _h(M).disable_saved_tensors_hooks("no hooks here"):
            with _h(M).saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    def disable_inside_hooks(M):
        with _h(M).saved_tensors_hooks(lambda t: t, lambda t: t):
            with _h(M).disable_saved_tensors_hooks("no hooks here"):
                pass

    def nested_message(M):
        with _h(M).disable_saved_tensors_hooks("outer"):
            with _h(M).disable_saved_tensors_hooks("inner"):
                pass
            with _h(M).saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    for c in (enter_inside, disable_inside_hooks, nested_message):
        raises_same(lambda c=c: c(ember), lambda c=c: c(torch))

    def after(M):   # restored on exit: hooks work again
        with _h(M).disable_saved_tensors_hooks("x"):
            pass
        with _h(M).saved_tensors_hooks(lambda t: t, lambda t: t):
            x = M.tensor(A, requires_grad=True)
            y = x.exp()
        y.sum().backward()
        return x.grad
    both(after)


def test_allow_mutation_on_saved_tensors():
    def f(M):
        with _h(M).allow_mutation_on_saved_tensors():
            x = M.tensor(A, requires_grad=True)
            a = x.clone()
            y = a.sin()
            z = a.exp()
            a.mul_(10)
            (y.sum() + z.sum()).backward()
            return [x.grad, a]
    both(f)

    def outside(M):
        with _h(M).allow_mutation_on_saved_tensors():
            x = M.tensor(A, requires_grad=True)
            y = x.clone().sin()
        y.sum().backward()

    def nested(M):
        with _h(M).allow_mutation_on_saved_tensors():
            with _h(M).allow_mutation_on_saved_tensors():
                pass

    def without(M):   # the same mutation without the context: the version error
        x = M.tensor(A, requires_grad=True)
        a = x.clone()
        y = a.sin()
        a.mul_(10)
        y.sum().backward()
    for c in (outside, nested, without):
        raises_same(lambda c=c: c(ember), lambda c=c: c(torch))


def test_hooks_are_thread_local():
    import threading

    def f(M):
        log = []
        res = []

        def work():
            x = M.tensor(A, requires_grad=True)
            res.append(x.exp())
        with _h(M).saved_tensors_hooks(lambda t: (log.append("p"), t)[1], lambda t: t):
            th = threading.Thread(target=work)
            th.start()
            th.join()
        return [log, len(res)]
    both(f)
