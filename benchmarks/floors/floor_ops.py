"""Per-op forward times of the mixed workload's families: ember (from SRC), torch, NumPy floor.
usage: floor_ops.py SRC [np]   -> prints name mode ember torch (us)"""

import gc
import json
import sys
import time

src = sys.argv[1]
sys.path.insert(0, src)
import numpy as np

import ember

assert ember.__file__.startswith(src)
import torch

torch.set_num_threads(1)


def best(fn, inner=200, rounds=25):
    for _ in range(50):
        fn()
    gc.disable()
    b = 1e9
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        b = min(b, (time.perf_counter() - t0) / inner)
    gc.enable()
    return b * 1e6


exec(
    "r = np.random.RandomState(1)"
    + open("" + __import__("os").path.join(__import__("os").path.dirname(__file__), "fam.py") + "")
    .read()
    .split("sel = sys.argv")[0]
    .split("r = np.random.RandomState(1)")[1]
)
# numpy floors: the bare calls each op needs (inputs as arrays)
r = np.random.RandomState(1)
y = r.uniform(-1, 1, (8, 8)).astype(np.float32)
w = r.uniform(-0.3, 0.3, (8, 8)).astype(np.float32)
idx = r.permutation(64).astype(np.int64)
gidx = r.randint(0, 8, (8, 8)).astype(np.int64)
a = np.add.reduce(y, 1, keepdims=True)
m = np.add.reduce(y, 0) / 8
am = a + m
at = am.T
b64 = np.ascontiguousarray(at).reshape(64)
b = b64[idx].reshape(8, 8)
b14 = b[1:5]
u = b14[None]
ex = np.ndarray((2, 4, 8), u.dtype, u, 0, (0, 32, 4))
c = ex[0]
y4 = y[4:]
cc = np.concatenate([c, y4])
d = cc
e = np.maximum.reduce(d @ w, 1, None, None, True)
cond = d > 0.1
f = np.where(cond, d, e)
dw = d @ w
F32 = np.dtype(np.float32)
from ember._ops.indexing import _full_key

NPF = {
    "sum(1,keepdim)": lambda: np.add.reduce(y, (1,), F32, None, True),
    "mean(0)": lambda: np.true_divide(np.add.reduce(y, (0,), F32, None, False), 8),
    "add bcast": lambda: np.add(a, m),
    "t()": lambda: am.T,
    "reshape(64) noncontig": lambda: np.ascontiguousarray(at).reshape(64),
    "[idx]": lambda: b64[idx],
    "reshape(8,8)": lambda: b64.reshape(8, 8),
    "[1:5]": lambda: b[1:5],
    "unsqueeze(0)": lambda: b14[None],
    "expand": lambda: np.ndarray((2, 4, 8), u.dtype, u, 0, (0, 32, 4)),
    "[0]": lambda: ex[0],
    "cat": lambda: np.concatenate([c, y4], 0),
    "softmax(-1)": lambda: (
        lambda e_: np.divide(e_, np.add.reduce(e_, (1,), None, None, True), out=e_)
    )(np.exp(cc - np.maximum.reduce(cc, (1,), None, None, True))),
    "matmul": lambda: np.matmul(d, w),
    "amax(1,keepdim)": lambda: np.maximum.reduce(dw, (1,), None, None, True),
    "gt scalar": lambda: np.greater(d, 0.1),
    "where": lambda: np.where(cond, d, e),
    "clamp": lambda: np.minimum(np.maximum(f, -2.0), 2.0),
    "gather": lambda: (np.maximum.reduce(gidx.view(np.uint64), None) < 8, f[_full_key(gidx, 1)]),
    "mul scalar": lambda: np.multiply(y, 0.5),
    "add same": lambda: np.add(f, y),
    "sum()": lambda: np.add.reduce(y, None),
}
out = {}
for grad in (False, True):
    ve = mk(ember, grad)
    vt = mk(torch, grad)
    for name, (fn, _) in ops.items():
        out[f"{name}|{'grad' if grad else 'nograd'}"] = (
            best(lambda: fn(ember, ve)),
            best(lambda: fn(torch, vt)),
        )
for name, fn in NPF.items():
    out[f"{name}|np"] = best(fn)
from ember._tensor import Version, _make

out["tensor|np"] = best(lambda: _make(y, Version(), False, None))
print(json.dumps(out))
