"""Multithreaded autograd (PyTorch's autograd mechanics notes), compared with PyTorch."""
import threading

import numpy as np

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
