"""One training step of a small CNN at batch 64 of 1x28x28 float32 images, and the memory its
forward holds for backward.

The network: conv 1->32 3x3, relu, max_pool 2, conv 32->64 3x3, relu, max_pool 2, flatten,
linear 1600->10, cross-entropy. The step is forward, loss, backward and an SGD update under
no_grad; both libraries run the very same code with the same initial weights and data. The
time is mostly the convolutions: im2col + one BLAS product each way for ember (NumPy's
OpenBLAS), oneDNN for torch.

Memory (as bench_memory measures it): malloc bytes in use while the loss is alive after a
forward in grad mode, minus what was in use before (parameters and input excluded), and the
distinct buffers the graph saves for backward (seen by a saved_tensors_hooks pack hook).

``--layers`` adds each layer's forward and backward time, ember against torch, at the shapes
the step runs them.
"""
from __future__ import annotations

import gc

import numpy as np
from _common import (
    MISSING,
    header,
    libraries,
    malloc_in_use,
    report,
    skipped,
    timeit,
)
from _common import (
    breakdown as _breakdown,
)

BATCH = 64
LR = 0.01
MB = 1e6


def cnn_params(T, seed: int = 0):
    """Weights and biases (He-scaled), identical for both libraries."""
    rs = np.random.RandomState(seed)

    def he(shape, fan_in):
        return (rs.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    arrays = [he((32, 1, 3, 3), 9), np.zeros(32, np.float32),
              he((64, 32, 3, 3), 288), np.zeros(64, np.float32),
              he((10, 1600), 1600), np.zeros(10, np.float32)]
    return [T.from_numpy(a).requires_grad_() for a in arrays]


def cnn_loss(T, params, x, y):
    """Forward and mean cross-entropy (linear / cross_entropy spelled out where missing)."""
    F = T.nn.functional
    w1, b1, w2, b2, w3, b3 = params
    h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2)), 2)
    h = h.flatten(1)
    linear = getattr(F, "linear", None)
    z = linear(h, w3, b3) if linear is not None else h @ w3.t() + b3
    ce = getattr(F, "cross_entropy", None)
    if ce is not None:
        return ce(z, y)
    return -z.log_softmax(1).gather(1, y[:, None]).mean()


def run(T, x_np, y_np):
    params = cnn_params(T)
    x = T.from_numpy(x_np)
    y = T.from_numpy(y_np)
    losses = []

    def step():
        loss = cnn_loss(T, params, x, y)
        loss.backward()
        with T.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        return loss

    def fwd():
        with T.no_grad():
            cnn_loss(T, params, x, y)

    def fwd_grad():
        cnn_loss(T, params, x, y)

    for _ in range(3):
        losses.append(step().item())
    t_step = timeit(step, number=3, repeat=7)
    t_fwd = timeit(fwd_grad, number=3, repeat=5)
    t_ng = timeit(fwd, number=3, repeat=5)
    return {"training step (fwd+CE+bwd+SGD)": t_step[0],
            "  same, median": t_step[1],
            "forward + loss, recording the graph": t_fwd[0],
            "forward + loss, no_grad": t_ng[0]}, losses


def memory(T, x_np, y_np):
    """(malloc MB held while the loss lives, MB of distinct buffers saved for backward)."""
    params = cnn_params(T)
    x, y = T.from_numpy(x_np.copy()), T.from_numpy(y_np.copy())
    cnn_loss(T, params, x, y)   # warm-up: first-call allocations come first
    before = malloc_in_use()
    loss = cnn_loss(T, params, x, y)
    after = malloc_in_use()
    held = None if before is None else (after - before) / MB
    del loss
    gc.collect()
    skip = {(p.data_ptr(), p.nbytes) for p in params} | {(x.data_ptr(), x.nbytes)}
    saved = {}

    def pack(t):
        key = (t.data_ptr(), t.nbytes)
        if key not in skip:
            saved[key] = t.nbytes
        return t

    with T.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = cnn_loss(T, params, x, y)
    del loss
    return held, sum(saved.values()) / MB


def main():
    header(f"bench_cnn: conv-relu-pool x2 + linear CNN, batch {BATCH} of 1x28x28 float32, time "
           "per step (best of 7 x 3 steps)")
    rs = np.random.RandomState(1)
    x_np = rs.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)
    y_np = rs.randint(0, 10, BATCH).astype(np.int64)
    res, losses, mem = {}, {}, {}
    for name, T in libraries():
        try:
            res[name], losses[name] = run(T, x_np, y_np)
            mem[name] = memory(T, x_np, y_np)
        except MISSING as e:
            skipped(name, e)
    labels = next(iter(res.values())).keys() if res else ()
    for label in labels:
        report(label, res.get("ember", {}).get(label), res.get("torch", {}).get(label))
    for name, ls in losses.items():
        print(f"  {name} losses of the first 3 steps: " + ", ".join(f"{v:.6f}" for v in ls))
    fmt = lambda v: "     n/a" if v is None else f"{v:8.2f}"  # noqa: E731
    e, t = mem.get("ember", (None, None)), mem.get("torch", (None, None))
    print(f"  memory after the forward, grad mode     {'ember MB':>10}{'torch MB':>10}")
    print(f"    (1) malloc in use (mallinfo2)         {fmt(e[0]):>10}{fmt(t[0]):>10}")
    print(f"    (2) saved for backward (saved hooks)  {fmt(e[1]):>10}{fmt(t[1]):>10}")


def layer_cases(T, rs):
    """(label, forward on tensors, input arrays, which need grad) per layer of the network, at
    the shapes the training step runs them."""
    F = T.nn.functional

    def a(*shape):
        return rs.standard_normal(shape).astype(np.float32)

    return [
        ("conv 1->32", lambda t: F.conv2d(*t), [a(BATCH, 1, 28, 28), a(32, 1, 3, 3), a(32)],
         [False, True, True]),
        ("relu 32x26x26", lambda t: F.relu(t[0]), [a(BATCH, 32, 26, 26)], [True]),
        ("max_pool 32x26x26", lambda t: F.max_pool2d(t[0], 2), [a(BATCH, 32, 26, 26)], [True]),
        ("conv 32->64", lambda t: F.conv2d(*t), [a(BATCH, 32, 13, 13), a(64, 32, 3, 3), a(64)],
         [True, True, True]),
        ("relu 64x11x11", lambda t: F.relu(t[0]), [a(BATCH, 64, 11, 11)], [True]),
        ("max_pool 64x11x11", lambda t: F.max_pool2d(t[0], 2), [a(BATCH, 64, 11, 11)], [True]),
        ("linear 1600->10", lambda t: F.linear(*t), [a(BATCH, 1600), a(10, 1600), a(10)],
         [True, True, True]),
        ("cross_entropy", lambda t: F.cross_entropy(*t),
         [a(BATCH, 10), rs.randint(0, 10, BATCH).astype(np.int64)], [True, False]),
    ]


def breakdown():
    _breakdown("layer", layer_cases, 5, "ms")


if __name__ == "__main__":
    import sys
    main()
    if "--layers" in sys.argv[1:]:
        breakdown()
