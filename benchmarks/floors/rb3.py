import gc
import os
import sys
import time

src = sys.argv[1]
sys.path.insert(0, src)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.setrecursionlimit(100000)
import ember

assert ember.__file__.startswith(src)
import bench_mixed as B
import torch

torch.set_num_threads(int(os.environ.get("TT", "1")))


def mn(fn, n):
    fn()
    gc.disable()
    b = 1e9
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        b = min(b, time.perf_counter() - t0)
    gc.enable()
    return b


def deep(T):
    graph, bwd = B.deep_case(T)
    with T.no_grad():
        ng = mn(graph, 8)
    return ng, mn(graph, 8), mn(bwd, 8)


def hess(T):
    return mn(B.hessian_case(T), 20)


res = {}
for _ in range(2):
    for name, M in (("ember", ember), ("torch", torch)):
        d = deep(M)
        h = hess(M)
        for k, v in zip(("deep no_grad", "deep recording", "deep fwd+bwd", "hessian"), d + (h,)):
            res[(name, k)] = min(res.get((name, k), 1e9), v)
for k in ("deep no_grad", "deep recording", "deep fwd+bwd", "hessian"):
    e, t = res[("ember", k)], res[("torch", k)]
    print(f"{k:16s} ember {e * 1e3:8.2f} ms torch {t * 1e3:8.2f} ms {e / t:5.2f}x", flush=True)
