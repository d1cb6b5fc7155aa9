"""Per-op overhead: a chain of 200 small elementwise ops on 16 float32 elements.

With arrays this small the arithmetic is negligible: the figures are the cost of dispatching
one op (and recording / running its backward node). Reported per op, for:
  * forward under no_grad (no graph),
  * forward recording the graph (input requires grad),
  * forward + backward (y.sum().backward(), 201 ops recorded).
"""
from __future__ import annotations

import numpy as np
from _common import MISSING, header, libraries, report, skipped, timeit

N_OPS = 200
N_ELEM = 16


def chain(y):
    # A repeating cycle of 5 ops that keeps values bounded (|y| <= e after exp).
    for i in range(N_OPS // 5):
        y = y * 0.5
        y = y + 0.1
        y = y.sin()
        y = y.tanh()
        y = y.exp()
    return y


def run(T, x_np):
    x = T.from_numpy(x_np.copy()).requires_grad_()
    x_ng = T.from_numpy(x_np.copy())

    def fwd_nograd():
        with T.no_grad():
            chain(x_ng)

    def fwd_graph():
        chain(x)

    def fwd_bwd():
        x.grad = None
        chain(x).sum().backward()

    out = {}
    out["forward, no_grad"] = timeit(fwd_nograd, number=50, repeat=7)[0] / N_OPS
    out["forward, recording graph"] = timeit(fwd_graph, number=50, repeat=7)[0] / N_OPS
    out["forward + backward"] = timeit(fwd_bwd, number=30, repeat=7)[0] / N_OPS
    fwd_bwd()
    return out, x.grad.numpy().copy()


def main():
    header(f"bench_chain: {N_OPS} elementwise ops on {N_ELEM} float32 elements, time per op "
           "(best of 7)")
    x_np = np.random.RandomState(0).uniform(-1, 1, N_ELEM).astype(np.float32)
    res, grads = {}, {}
    for name, T in libraries():
        try:
            res[name], grads[name] = run(T, x_np)
        except MISSING as e:
            skipped(name, e)
    for label in ("forward, no_grad", "forward, recording graph", "forward + backward"):
        report(label, res.get("ember", {}).get(label), res.get("torch", {}).get(label))
    if len(grads) == 2:
        ref = grads["torch"].astype(np.float64)
        err = np.max(np.abs(grads["ember"] - ref)) / np.max(np.abs(ref))
        print(f"  (gradients agree: max |ember - torch| / max |torch| = {err:.1e})")


if __name__ == "__main__":
    main()
