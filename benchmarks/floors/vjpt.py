import collections
import gc
import sys
import time

sys.path.insert(0, "benchmarks")
import bench_mixed as B
import numpy as np

import ember as T
from ember._ops._registry import ALL_OPS

tot = collections.Counter()
cnt = collections.Counter()
for op in ALL_OPS:
    if op.vjp is None:
        continue

    def w(*a, _f=op.vjp, _n=op.name):
        t0 = time.perf_counter()
        r = _f(*a)
        dt = time.perf_counter() - t0
        tot[_n] = min(tot.get(_n, 1), dt)
        cnt[_n] += 1
        return r

    op.vjp = w
r = np.random.RandomState(1)
x = T.from_numpy(r.uniform(-1, 1, (8, 8)).astype(np.float32)).requires_grad_()
w_ = T.from_numpy(r.uniform(-0.3, 0.3, (8, 8)).astype(np.float32))
idx = T.from_numpy(r.permutation(64).astype(np.int64))
gidx = T.from_numpy(r.randint(0, 8, (8, 8)).astype(np.int64))
gc.disable()
best = 1e9
for _ in range(30):
    o = B.mixed(T, x, w_, idx, gidx)
    t0 = time.perf_counter()
    o.backward()
    best = min(best, time.perf_counter() - t0)
print("backward per op (incl. timers):", best / 200 * 1e6)
n = 30
for k, v in sorted(tot.items(), key=lambda kv: -kv[1]):
    print(f"{k:16s} {v * 1e6:6.2f} us(min) x {cnt[k] // n}/run")
