"""One SGD training step of a 784-1024-1024-10 MLP at batch 256, float32.

The step is forward (x @ W + b, relu), cross-entropy (log-softmax times one-hot targets),
backward, and the update ``p -= lr * p.grad`` under no_grad. Both libraries run the very same
code with the same initial weights and data; here the time is mostly the matrix products
(NumPy's BLAS for ember, oneDNN/MKL for torch), so the ratio measures ember's overhead on top.
"""
from __future__ import annotations

import numpy as np
from _common import (
    MISSING,
    cross_entropy,
    header,
    libraries,
    mlp_forward,
    mlp_params,
    report,
    skipped,
    timeit,
)

SIZES = (784, 1024, 1024, 10)
BATCH = 256
LR = 0.01


def run(T, x_np, onehot_np):
    params = mlp_params(T, SIZES)
    x = T.from_numpy(x_np)
    onehot = T.from_numpy(onehot_np)
    losses = []

    def step():
        loss = cross_entropy(T, mlp_forward(params, x), onehot)
        loss.backward()
        with T.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        return loss

    def fwd():
        with T.no_grad():
            cross_entropy(T, mlp_forward(params, x), onehot)

    for _ in range(3):
        losses.append(step().item())
    t_step = timeit(step, number=3, repeat=5)
    t_fwd = timeit(fwd, number=3, repeat=5)
    return {"training step (fwd+CE+bwd+SGD)": t_step[0],
            "  same, median": t_step[1],
            "forward + loss only, no_grad": t_fwd[0]}, losses


def main():
    header(f"bench_mlp: {'-'.join(map(str, SIZES))} MLP, batch {BATCH}, float32, time per step "
           "(best of 5 x 3 steps)")
    rs = np.random.RandomState(1)
    x_np = rs.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    onehot_np = np.eye(SIZES[-1], dtype=np.float32)[rs.randint(0, SIZES[-1], BATCH)]
    res, losses = {}, {}
    for name, T in libraries():
        try:
            res[name], losses[name] = run(T, x_np, onehot_np)
        except MISSING as e:
            skipped(name, e)
    labels = next(iter(res.values())).keys() if res else ()
    for label in labels:
        report(label, res.get("ember", {}).get(label), res.get("torch", {}).get(label))
    for name, ls in losses.items():
        print(f"  {name} losses of the first 3 steps: " + ", ".join(f"{v:.6f}" for v in ls))


if __name__ == "__main__":
    main()
