"""Multithreaded autograd (PyTorch's autograd mechanics notes), compared with PyTorch."""
import threading

import numpy as np
import torch

import ember
from helpers import both

N_THREADS = 8
R = np.random.default_rng(4)
DATA = [R.standard_normal((5, 5)) for _ in range(N_THREADS)]


def _in_threads(fn, n=N_THREADS):
    out = [None] * n
    errs = []
    barrier = threading.Barrier(n)

    def run(i):
        try:
            barrier.wait()
            out[i] = fn(i)
        except Exception as e:  # noqa: BLE001
            errs.append((type(e).__name__, str(e).replace("torch.", "ember.")))
    ths = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    return out, sorted(errs)


def test_concurrent_backward_on_independent_graphs():
    def f(M):
        def train(i):
            x = M.tensor(DATA[i], requires_grad=True)
            for _ in range(20):
                y = (x + 3) * (x + 4) * 0.5
                y.sum().backward()
            return x.grad
        return _in_threads(train)
    both(f)


def test_autograd_grad_from_threads():
    def f(M):
        w = M.tensor(DATA[0], requires_grad=True)

        def work(i):
            x = M.tensor(DATA[i])
            loss = ((x @ w).tanh() ** 2).sum()
            (g,) = M.autograd.grad(loss, w)
            (g2,) = M.autograd.grad((x * w).exp().sum(), w, create_graph=True)
            (h,) = M.autograd.grad(g2.sum(), w)
            return [g, h]
        out, errs = _in_threads(work)
        return [out, errs, w.grad]
    both(f)


def test_shared_graph_freed_by_one_thread():
    def f(M):
        x = M.tensor(DATA[0], requires_grad=True)
        shared = (x * x).exp()          # the shared first part of the graph
        first = threading.Event()
        order = []

        def work(i):
            y = (shared * (i + 1)).sum()
            if i == 1:
                first.wait()
            y.backward()                # no retain_graph: frees the shared part
            order.append(i)
            if i == 0:
                first.set()
            return i
        out, errs = _in_threads(work, 2)
        return [out, errs, order, x.grad]
    both(f)

    def retained(M):
        x = M.tensor(DATA[0], requires_grad=True)
        shared = (x * x).exp()

        def work(i):
            (shared * (i + 1)).sum().backward(retain_graph=True)
        out, errs = _in_threads(work, 4)
        return [errs, x.grad]
    both(retained)


def test_accumulation_into_shared_leaf_loses_no_update():
    def f(M):
        w = M.tensor(DATA[0], requires_grad=True)

        def work(i):
            for _ in range(25):
                (w * M.tensor(DATA[i])).sum().backward()
        _, errs = _in_threads(work)
        return [errs, w.grad]
    both(f)

    def with_hooks(M):   # post-accumulate hooks run once per accumulation
        w = M.tensor(DATA[0], requires_grad=True)
        calls = []
        lock = threading.Lock()

        def hook(t):
            with lock:
                calls.append(1)
        w.register_post_accumulate_grad_hook(hook)

        def work(i):
            for _ in range(10):
                (w * 2).sum().backward()
        _in_threads(work)
        return [len(calls), w.grad]
    both(with_hooks)


def test_grad_mode_is_thread_local():
    def f(M):
        seen = []
        x = M.tensor(DATA[0], requires_grad=True)

        def work():
            y = x * 2
            seen.append((M.is_grad_enabled(), y.requires_grad, M.is_inference_mode_enabled()))
            with M.no_grad():
                seen.append(M.is_grad_enabled())
        with M.no_grad():
            t = threading.Thread(target=work)
            t.start()
            t.join()
            seen.append((M.is_grad_enabled(), (x * 2).requires_grad))
        with M.inference_mode():
            t = threading.Thread(target=work)
            t.start()
            t.join()
        M.set_grad_enabled(False)
        try:
            t = threading.Thread(target=work)
            t.start()
            t.join()
        finally:
            M.set_grad_enabled(True)
        seen.append(M.is_grad_enabled())
        return seen
    both(f)


def test_hooks_and_retain_grad_in_threads():
    def f(M):
        def work(i):
            log = []
            x = M.tensor(DATA[i], requires_grad=True)
            a = x.sin()
            a.retain_grad()
            a.register_hook(lambda g: log.append("tensor"))
            a.grad_fn.register_prehook(lambda go: log.append("pre"))
            a.grad_fn.register_hook(lambda gi, go: log.append("post"))
            a.exp().sum().backward()
            return [log, a.grad, x.grad]
        return _in_threads(work)
    both(f)


# ---- big arrays: NumPy releases the GIL inside each add, so threads really overlap ----------

BIG = 200_000          # elements: far above NumPy's threshold for releasing the GIL


def _big_accumulate(M, n_threads, iters, body):
    """``n_threads`` threads each run ``body(M, w)`` ``iters`` times on one shared leaf; returns
    its ``.grad`` as an array (every contribution is an exact small integer)."""
    w = M.zeros(BIG, dtype=M.float64, requires_grad=True)

    def work(i):
        for _ in range(iters):
            body(M, w)
    _, errs = _in_threads(work, n_threads)
    assert not errs, errs
    return w.grad.detach().numpy().copy()


def _check_big(body, n_threads=8, iters=40, per_call=1.0):
    ge = _big_accumulate(ember, n_threads, iters, body)
    gt = _big_accumulate(torch, n_threads, iters, body)
    want = n_threads * iters * per_call
    assert (gt == want).all()
    lost = int((ge != want).sum())
    assert lost == 0, f"{lost} of {BIG} elements lost updates (min {ge.min()}, want {want})"


def test_big_accumulation_in_place_add_loses_nothing():
    """Concurrent ``backward()`` into one existing ``.grad``: the in-place add must be locked."""
    _check_big(lambda M, w: (w * 1.0).sum().backward())


def test_big_accumulation_first_grad_created_once():
    """Many threads racing to create ``.grad`` for a fresh leaf: only one may create it."""
    for _ in range(6):
        ge = _big_accumulate(ember, 8, 1, lambda M, w: (w * 2.0).sum().backward())
        gt = _big_accumulate(torch, 8, 1, lambda M, w: (w * 2.0).sum().backward())
        assert (gt == 16).all()
        assert (ge == 16).all(), f"{int((ge != 16).sum())} elements lost an update"


def test_big_accumulation_create_graph():
    """``create_graph=True`` accumulates by ``.grad = .grad + g``: read-modify-write, locked."""
    _check_big(lambda M, w: (w * 1.0).sum().backward(create_graph=True), iters=25)


def test_big_accumulation_backward_inputs_and_broadcast():
    """``backward(inputs=[w])`` and a gradient reduced from a broadcast: the same lock."""
    def body(M, w):
        other = M.ones(BIG, dtype=M.float64, requires_grad=True)
        (w.view(1, BIG).expand(2, BIG) * 0.5 + other).sum().backward(inputs=[w])
    _check_big(body, iters=30)
