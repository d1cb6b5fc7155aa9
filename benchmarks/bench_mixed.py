"""Per-op overhead on the workloads of issue 10, each written once against the torch API:

  * elementwise chain: 200 ops on 16 float32 elements (tanh, multiply by a tensor, exp, sigmoid,
    residual add), per op;
  * mixed families: 200 small ops of many families on 8x8 float32 tensors (sum and mean with
    dim, transpose + reshape, advanced indexing, slicing + unsqueeze + expand, amax with dim,
    softmax, cat, small matmul, compare + where, clamp, gather, full sum), per op;
  * deep scalar chain: 20,000 ops on a 0-dim float64 tensor, forward + backward;
  * large chain: ``(x*x+1).log().sum()`` on 10M float32 elements, forward + backward;
  * hessian of ``sum(tanh(A@x))**2`` for x in R^100 (``autograd.functional.hessian``).

Each reports forward under no_grad, forward recording the graph, and forward + backward where
the issue names them; ember's time beside torch's from the same run.
"""
from __future__ import annotations

import sys

import numpy as np
from _common import MISSING, header, libraries, report, skipped, timeit

sys.setrecursionlimit(100_000)


def elementwise(T, x, w):
    y = x
    for _ in range(40):
        y = y.tanh()
        y = y * w
        y = y.exp()
        y = y.sigmoid()
        y = y + x
    return y


def mixed(T, x, w, idx, gidx):
    """20 rounds of 10 ops of different families (200 ops)."""
    y = x
    for _ in range(20):
        a = y.sum(1, keepdim=True) + y.mean(0)             # 3: sum dim, mean dim, add
        b = a.t().reshape(64)[idx].reshape(8, 8)           # 4: transpose, reshape, index, reshape
        c = b[1:5].unsqueeze(0).expand(2, 4, 8)[0]         # (slice, unsqueeze, expand, select)
        d = T.cat([c, y[4:]], 0).softmax(-1)               # cat, softmax (and a slice)
        e = (d @ w).amax(1, keepdim=True)                  # matmul, amax
        f = T.where(d > 0.1, d, e).clamp(-2.0, 2.0)        # compare, where, clamp
        y = f.gather(1, gidx) + y * 0.5                    # gather, mul, add
    return y.sum()


def _three(fn_nograd, fn_graph, fn_bwd, n_ops, number, repeat=5) -> dict:
    return {"forward, no_grad": timeit(fn_nograd, number, repeat)[0] / n_ops,
            "forward, recording graph": timeit(fn_graph, number, repeat)[0] / n_ops,
            "forward + backward": timeit(fn_bwd, number, repeat)[0] / n_ops}


def elementwise_case(T):
    """The elementwise chain's (forward under no_grad, forward recording, forward + backward)."""
    r = np.random.RandomState(0)
    x = T.from_numpy(r.uniform(-1, 1, 16).astype(np.float32)).requires_grad_()
    w = T.from_numpy(r.uniform(0.1, 0.5, 16).astype(np.float32))
    xn = x.detach()

    def nograd():
        with T.no_grad():
            elementwise(T, xn, w)

    def bwd():
        x.grad = None
        elementwise(T, x, w).sum().backward()
    return nograd, lambda: elementwise(T, x, w), bwd


def mixed_case(T):
    """The mixed families' (forward under no_grad, forward recording, forward + backward)."""
    r = np.random.RandomState(1)
    x = T.from_numpy(r.uniform(-1, 1, (8, 8)).astype(np.float32)).requires_grad_()
    w = T.from_numpy(r.uniform(-0.3, 0.3, (8, 8)).astype(np.float32))
    idx = T.from_numpy(r.permutation(64).astype(np.int64))
    gidx = T.from_numpy(r.randint(0, 8, (8, 8)).astype(np.int64))
    xn = x.detach()

    def nograd():
        with T.no_grad():
            mixed(T, xn, w, idx, gidx)

    def bwd():
        x.grad = None
        mixed(T, x, w, idx, gidx).backward()
    return nograd, lambda: mixed(T, x, w, idx, gidx), bwd


def deep_case(T):
    """The deep scalar chain's (forward, forward + backward)."""
    x = T.tensor(0.3, dtype=T.float64, requires_grad=True)

    def graph():
        y = x
        for _ in range(4000):
            y = y * 0.999
            y = y + 0.001
            y = y.sin()
            y = y * 1.001
            y = y - 0.0005
        return y

    def bwd():
        x.grad = None
        graph().backward()
    return graph, bwd


def hessian_case(T):
    """``autograd.functional.hessian`` of sum(tanh(A@x))**2, x in R^100."""
    r = np.random.RandomState(3)
    A = T.from_numpy(r.standard_normal((100, 100)) / 10)
    x = T.from_numpy(r.standard_normal(100))

    def f(v):
        return T.tanh(A @ v).sum() ** 2
    return lambda: T.autograd.functional.hessian(f, x)


def run_elementwise(T):
    return _three(*elementwise_case(T), 200, number=20)


def run_mixed(T):
    return _three(*mixed_case(T), 200, number=10)


def run_deep(T):
    graph, bwd = deep_case(T)
    return {"forward, recording graph": timeit(graph, 1, 3)[0],
            "forward + backward": timeit(bwd, 1, 3)[0]}


def run_large(T):
    x = T.from_numpy(np.random.RandomState(2).uniform(0.1, 1, 10_000_000)
                     .astype(np.float32)).requires_grad_()

    def bwd():
        x.grad = None
        (x * x + 1).log().sum().backward()
    return {"forward + backward": timeit(bwd, 1, 5)[0]}


def run_hessian(T):
    return {"hessian": timeit(hessian_case(T), 1, 5)[0]}


WORKLOADS = [("elementwise chain, 200 ops on 16 floats, per op", run_elementwise),
             ("mixed families, 200 ops on 8x8, per op", run_mixed),
             ("deep scalar chain, 20,000 ops, whole", run_deep),
             ("(x*x+1).log().sum() on 10M float32, whole", run_large),
             ("hessian of sum(tanh(A@x))**2, x in R^100", run_hessian)]


def main():
    header("bench_mixed: issue 10's workloads (best of 3-5)")
    for title, fn in WORKLOADS:
        print(f" {title}", flush=True)
        res = {}
        for name, T in libraries():
            try:
                res[name] = fn(T)
            except MISSING as e:
                skipped(name, e)
        for label in res.get("ember", res.get("torch", {})):
            report(label, res.get("ember", {}).get(label), res.get("torch", {}).get(label))


if __name__ == "__main__":
    main()
