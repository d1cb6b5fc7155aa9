import gc
import os
import sys
import time

src = sys.argv[1]
sys.path.insert(0, src)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ember

assert ember.__file__.startswith(src)
import bench_mixed as B
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


S = {"elementwise": B.elementwise_case, "mixed": B.mixed_case}
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
