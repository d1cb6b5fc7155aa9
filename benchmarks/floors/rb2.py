import gc
import os
import sys
import time

src = sys.argv[1]
sys.path.insert(0, src)
sys.path.insert(0, "/work/main/benchmarks")
import ember

assert ember.__file__.startswith(src)
import bench_mixed as B
import numpy as np
import torch

torch.set_num_threads(int(os.environ.get("TT", "1")))
N = int(os.environ.get("N", "300"))


def mn(fn, n=N):
    fn()
    fn()
    gc.disable()
    best = 1e9
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    gc.enable()
    return best


def setup_el(T):
    r = np.random.RandomState(0)
    x = T.from_numpy(r.uniform(-1, 1, 16).astype(np.float32)).requires_grad_()
    w = T.from_numpy(r.uniform(0.1, 0.5, 16).astype(np.float32))
    xn = x.detach()

    def nograd():
        with T.no_grad():
            B.elementwise(T, xn, w)

    def bwd():
        x.grad = None
        B.elementwise(T, x, w).sum().backward()

    return nograd, (lambda: B.elementwise(T, x, w)), bwd


def setup_mixed(T):
    r = np.random.RandomState(1)
    x = T.from_numpy(r.uniform(-1, 1, (8, 8)).astype(np.float32)).requires_grad_()
    w = T.from_numpy(r.uniform(-0.3, 0.3, (8, 8)).astype(np.float32))
    idx = T.from_numpy(r.permutation(64).astype(np.int64))
    gidx = T.from_numpy(r.randint(0, 8, (8, 8)).astype(np.int64))
    xn = x.detach()

    def nograd():
        with T.no_grad():
            B.mixed(T, xn, w, idx, gidx)

    def bwd():
        x.grad = None
        B.mixed(T, x, w, idx, gidx).backward()

    return nograd, (lambda: B.mixed(T, x, w, idx, gidx)), bwd


S = {"elementwise": setup_el, "mixed": setup_mixed}
labels = ("no_grad", "recording", "fwd+bwd")
for w in sys.argv[2:]:
    fe = S[w](ember)
    ft = S[w](torch)
    res = {}
    for _ in range(3):
        for lab, a, b in zip(labels, fe, ft):
            res.setdefault(("e", lab), []).append(mn(a))
            res.setdefault(("t", lab), []).append(mn(b))
    for lab in labels:
        e = min(res[("e", lab)]) / 200 * 1e6
        t = min(res[("t", lab)]) / 200 * 1e6
        print(f"{w:12s} {lab:10s} ember {e:7.2f} us torch {t:7.2f} us  {e / t:5.2f}x", flush=True)
