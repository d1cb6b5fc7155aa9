"""Finished graphs are freed by reference counting: no cycles, no growth over many steps, and
no_grad saves nothing for backward."""
import gc
import tracemalloc
import weakref

import numpy as np

import ember


def _step(params, x, y):
    h = (x @ params[0] + params[1]).relu()
    out = (h @ params[2]).log_softmax(1)
    loss = -(out * y).sum() / x.shape[0]
    loss.backward()
    with ember.no_grad():
        for p in params:
            p -= 0.01 * p.grad
            p.grad = None
    return loss


def _mlp():
    rs = np.random.RandomState(0)
    params = [ember.tensor(rs.standard_normal((8, 16)) * 0.3, dtype=ember.float32,
                           requires_grad=True),
              ember.zeros(16, requires_grad=True),
              ember.tensor(rs.standard_normal((16, 3)) * 0.3, dtype=ember.float32,
                           requires_grad=True)]
    x = ember.tensor(rs.standard_normal((32, 8)), dtype=ember.float32)
    y = ember.tensor(np.eye(3)[rs.randint(0, 3, 32)], dtype=ember.float32)
    return params, x, y


def test_training_steps_leave_no_cycles_and_no_growth():
    params, x, y = _mlp()
    for _ in range(200):
        _step(params, x, y)
    gc.collect()
    gc.disable()
    try:
        tracemalloc.start()
        for _ in range(2000):   # Python's free lists and NumPy's caches fill up first
            _step(params, x, y)
        first, _ = tracemalloc.get_traced_memory()
        for _ in range(10_000):
            _step(params, x, y)
        second, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert gc.collect() == 0, "training steps left reference cycles behind"
    finally:
        gc.enable()
    assert second - first < 4096, f"memory grew by {second - first} bytes"


def test_graph_freed_without_the_collector():
    gc.disable()
    try:
        x = ember.randn(4, requires_grad=True)
        y = (x.exp() * x).sigmoid().tanh().sum()
        node = weakref.ref(y.grad_fn)
        y.backward()
        del y
        assert node() is None, "the graph outlived its output without the cycle collector"
    finally:
        gc.enable()


def test_saved_output_makes_no_cycle():
    gc.disable()
    try:
        x = ember.randn(4, requires_grad=True)
        y = x.exp()          # ExpBackward0 saves its own output
        node = weakref.ref(y.grad_fn)
        del y
        assert node() is None
    finally:
        gc.enable()


def test_no_grad_saves_nothing():
    w = ember.randn(64, 64, requires_grad=True)
    x = ember.randn(128, 64)
    with ember.no_grad():
        h = (x @ w).relu()
    assert h.grad_fn is None and not h.requires_grad
    h2 = (x @ w).relu()
    saved = h2.grad_fn._saved
    assert saved, "grad mode saves what backward needs"
