"""The seed documents' worked examples, run in ember and in PyTorch side by side."""
import threading
import warnings

import numpy as np
import pytest
import torch

import ember
from helpers import both, raises_same


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    yield
    ember.set_grad_enabled(True)
    torch.set_grad_enabled(True)


# ---- seed 001: requires_grad, detach(), no_grad(), .data ------------------------------------

def test_requires_grad_false_example():
    def f(M):
        x = M.tensor([1.0, 2.0])
        y1 = x ** 2
        y2 = y1 * 2
        y3 = y1 + y2
        return [y1, y2, y3, y3.grad_fn]
    both(f)

    def back(M):
        x = M.tensor([1.0, 2.0])
        y1 = x ** 2
        y3 = y1 + y1 * 2
        y3.backward(M.ones(y3.shape))
    err = raises_same(lambda: back(ember), lambda: back(torch))
    assert str(err) == "element 0 of tensors does not require grad and does not have a grad_fn"


def test_requires_grad_true_example():
    def f(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        y1 = x ** 2
        y2 = y1 * 2
        y3 = y1 + y2
        y3.backward(M.ones(y3.shape))
        return [y1, y2, y3, y1.grad_fn, y2.grad_fn, y3.grad_fn, y3.grad_fn.next_functions,
                x.grad, x.is_leaf, y3.is_leaf]
    e, _ = both(f)
    assert e[7].tolist() == [6.0, 12.0]
    assert e[3].name() == "PowBackward0"


def test_detach_example():
    def f(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        y1 = x ** 2
        y2 = y1.detach() * 2
        y3 = y1 + y2
        y3.backward(M.ones(y3.shape))
        return [y1, y2, y3, y2.grad_fn, y3.grad_fn, x.grad]
    e, _ = both(f)
    assert e[-1].tolist() == [2.0, 4.0]
    assert e[3] is None


def test_no_grad_example():
    def f(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        y1 = x ** 2
        with M.no_grad():
            y2 = y1 * 2
        y3 = y1 + y2
        y3.backward(M.ones(y3.shape))
        return [y1, y2, y3, y2.grad_fn, y2.is_leaf, x.grad]
    e, _ = both(f)
    assert e[-1].tolist() == [2.0, 4.0]
    assert e[1].requires_grad is False


def test_data_and_detach_share_storage():
    def f(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        y1 = x ** 2
        d, dt = y1.data, y1.detach()
        return [d, dt, d.data_ptr() == y1.data_ptr() == dt.data_ptr(), d is y1, dt is y1,
                d.requires_grad, dt.requires_grad, d.is_leaf, dt.is_leaf, d.grad_fn]
    both(f)


def test_data_zero_silently_corrupts_grad():
    def f(M):
        a = M.tensor([1, 2, 3.], requires_grad=True)
        out = a.sigmoid()
        c = out.data
        c.zero_()
        v = [out.clone(), out._version, c._version]
        out.sum().backward()
        return v + [a.grad]
    e, _ = both(f)
    assert e[-1].tolist() == [0.0, 0.0, 0.0]
    assert e[0].tolist() == [0.0, 0.0, 0.0]


def test_detach_zero_is_caught_at_backward():
    def f(M):
        a = M.tensor([1, 2, 3.], requires_grad=True)
        out = a.sigmoid()
        c = out.detach()
        c.zero_()
        assert out._version == 1 and c._version == 1
        assert out.detach().tolist() == [0.0, 0.0, 0.0]
        out.sum().backward()
    err = raises_same(lambda: f(ember), lambda: f(torch))
    assert str(err).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [ember.FloatTensor [3]], which is output 0 of Sigmoid, is at version 1; "
        "expected version 0 instead. Hint: ")


# ---- seed 003: no_grad / enable_grad / set_grad_enabled ------------------------------------

def test_no_grad_context_and_decorator():
    def f(M):
        x = M.tensor([1.0], requires_grad=True)
        with M.no_grad():
            y = x * 2

        @M.no_grad()
        def doubler(x):
            return x * 2
        z = doubler(x)
        return [y, z, y.requires_grad, z.requires_grad, M.is_grad_enabled()]
    e, _ = both(f)
    assert e[2] is False and e[3] is False and e[4] is True


def test_enable_grad_inside_no_grad():
    def f(M):
        x = M.tensor([1.0], requires_grad=True)
        with M.no_grad(), M.enable_grad():
            y = x * 2
        r = [y.requires_grad]
        y.backward()
        r.append(x.grad)

        @M.enable_grad()
        def doubler(x):
            return x * 2
        with M.no_grad():
            z = doubler(x)
            r.append(M.is_grad_enabled())
        r.append(z.requires_grad)
        return r
    e, _ = both(f)
    assert e[0] is True and e[1].tolist() == [2.0] and e[2] is False and e[3] is True


def test_set_grad_enabled_context_and_function():
    def f(M):
        x = M.tensor([1.0], requires_grad=True)
        is_train = False
        with M.set_grad_enabled(is_train):
            y = x * 2
        r = [y.requires_grad, M.is_grad_enabled()]
        M.set_grad_enabled(True)
        y = x * 2
        r.append(y.requires_grad)
        M.set_grad_enabled(False)
        y = x * 2
        r += [y.requires_grad, M.is_grad_enabled()]
        M.set_grad_enabled(True)
        return r
    e, _ = both(f)
    assert e == [False, True, True, False, False]


def test_nesting_nearest_wins():
    def f(M):
        x = M.tensor([1.0], requires_grad=True)
        r = []
        with M.enable_grad():
            M.set_grad_enabled(False)
            y = x * 2
            r.append(y.requires_grad)
        r.append(M.is_grad_enabled())
        M.set_grad_enabled(True)
        with M.no_grad():
            z = x * 2
        r.append(z.requires_grad)
        return r
    e, _ = both(f)
    assert e == [False, True, False]


def test_seed_003_set_grad_enabled_examples():
    def f(M):
        M.manual_seed(20200910)
        a = M.randn(3, 4, requires_grad=True)
        with M.set_grad_enabled(False):
            b = a * 2
        with M.set_grad_enabled(True):
            c = a * 3
        d = a * 4
        M.set_grad_enabled(True)
        e = a * 5
        M.set_grad_enabled(False)
        f_ = a * 6
        M.set_grad_enabled(True)
        return [t.requires_grad for t in (b, c, d, e, f_)] + [c.grad_fn, e.grad_fn, f_.grad_fn]
    e, _ = both(f)
    assert e[:5] == [False, True, True, True, False]


def test_grad_modes_are_thread_local():
    def f(M):
        seen = []

        def worker():
            seen.append(M.is_grad_enabled())
            x = M.ones(2, requires_grad=True)
            seen.append((x * 2).requires_grad)
        with M.no_grad():
            th = threading.Thread(target=worker)
            th.start()
            th.join()
            seen.append(M.is_grad_enabled())
        return seen
    e, _ = both(f)
    assert e == [True, True, False]


# ---- seed 000: a = randn(3, 4) walk-through, the non-leaf .grad warning ---------------------

def _grad_warnings(M, t):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = t.grad
    return g, [(x.category.__name__, str(x.message)) for x in w]


def test_seed_000_walkthrough():
    data = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)

    def f(M):
        a = M.tensor(data, requires_grad=True)
        b = a * 2
        r = [b.requires_grad, b.grad_fn, a.requires_grad, a.grad]
        with M.no_grad():
            c = a * 2
        r += [c, c.requires_grad, c.grad, a.grad, c.sum()]
        b.sum().backward()
        r += [a.grad, a.requires_grad, b.sum()]
        return r
    e, _ = both(f)
    assert e[-3].tolist() == [[2.0] * 4] * 3
    raises_same(lambda: (ember.tensor(data, requires_grad=True) * 1).detach().sum().backward(),
                lambda: (torch.tensor(data, requires_grad=True) * 1).detach().sum().backward())


def test_non_leaf_grad_warning():
    ge, we = _grad_warnings(ember, ember.ones(2, requires_grad=True) * 2)
    gt, wt = _grad_warnings(torch, torch.ones(2, requires_grad=True) * 2)
    assert ge is None and gt is None
    assert len(we) == 1 and len(wt) == 1
    assert we[0][0] == wt[0][0] == "UserWarning"
    # the text up to torch's C++ source location must be identical
    cut = "(Triggered internally"
    assert we[0][1].split(cut)[0] == wt[0][1].split(cut)[0]
    # no warning for leaves, for retained non-leaves, or for detached results
    for M in (ember, torch):
        x = M.ones(2, requires_grad=True)
        y = x * 2
        y.retain_grad()
        assert _grad_warnings(M, x)[1] == []
        assert _grad_warnings(M, y)[1] == []
        assert _grad_warnings(M, y.detach())[1] == []


# ---- seed 004: multithreaded autograd ------------------------------------------------------

def test_multithreaded_train_fn():
    def run(M):
        grads, errors = [], []

        def train_fn():
            try:
                x = M.ones(5, 5, requires_grad=True)
                y = (x + 3) * (x + 4) * 0.5
                y.sum().backward()
                grads.append(x.grad.clone())
            except Exception as ex:  # noqa: BLE001
                errors.append(ex)
        threads = []
        for _ in range(10):
            p = threading.Thread(target=train_fn, args=())
            p.start()
            threads.append(p)
        for p in threads:
            p.join()
        assert errors == []
        return grads
    e, _ = both(run)
    assert len(e) == 10 and e[0].tolist() == [[4.5] * 5] * 5


def test_shared_graph_across_threads_needs_retain_graph():
    def run(M):
        x = M.ones(3, requires_grad=True)
        h = (x * x).exp()          # first part of the graph, built once, shared
        results = []

        def part2(k):
            try:
                M.autograd.grad((h * k).sum(), x, retain_graph=True)
                results.append("ok")
            except RuntimeError as ex:
                results.append(str(ex))
        th = [threading.Thread(target=part2, args=(k,)) for k in range(4)]
        for t in th:
            t.start()
        for t in th:
            t.join()
        (h * 2).sum().backward()
        return sorted(results)
    both(run)
    # once freed, backward through the shared part fails with torch's message
    raises_same(lambda: _twice(ember), lambda: _twice(torch))


def _twice(M):
    x = M.ones(3, requires_grad=True)
    h = (x * x).exp()
    h.sum().backward()
    (h * 2).sum().backward()


# ---- seed 002: Variable (deprecated) --------------------------------------------------------

def test_variable_returns_tensors():
    def f(M):
        v = M.autograd.Variable(M.tensor([1.0, 2.0]), requires_grad=True)
        w = M.autograd.Variable(M.tensor([3.0]))
        (v * v).sum().backward()
        return [isinstance(v, M.Tensor), v.requires_grad, w.requires_grad, v.grad, v.is_leaf,
                v.data]
    both(f)
