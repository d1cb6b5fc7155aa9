import gc
import sys
import time

sys.path.insert(0, "benchmarks")
import numpy as np
import torch

import ember


def best(fn, n=2000, rep=7):
    fn()
    gc.disable()
    ts = []
    for _ in range(rep):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        ts.append((time.perf_counter() - t0) / n)
    gc.enable()
    return min(ts) * 1e6


r = np.random.RandomState(1)
xn = r.uniform(-1, 1, (8, 8)).astype(np.float32)
wn = r.uniform(-0.3, 0.3, (8, 8)).astype(np.float32)
idxn = r.permutation(64).astype(np.int64)
gidxn = r.randint(0, 8, (8, 8)).astype(np.int64)


def mk(T, grad):
    x = T.from_numpy(xn.copy())
    if grad:
        x.requires_grad_()
    y = x * 1.0 if grad else x
    w = T.from_numpy(wn)
    idx = T.from_numpy(idxn)
    gidx = T.from_numpy(gidxn)
    a = y.sum(1, keepdim=True)
    m = y.mean(0)
    at = (a + m).t()
    b = (a + m).t().reshape(64)[idx].reshape(8, 8)
    c = b[1:5].unsqueeze(0).expand(2, 4, 8)[0]
    cc = T.cat([c, y[4:]], 0)
    d = cc.softmax(-1)
    e = (d @ w).amax(1, keepdim=True)
    cond = d > 0.1
    f = T.where(cond, d, e)
    return dict(
        x=y,
        w=w,
        idx=idx,
        gidx=gidx,
        a=a,
        m=m,
        am=a + m,
        at=at,
        b=b,
        b64=at.reshape(64),
        c=c,
        cc=cc,
        d=d,
        e=e,
        cond=cond,
        f=f,
        b14=b[1:5],
        u=b[1:5].unsqueeze(0),
        ex=b[1:5].unsqueeze(0).expand(2, 4, 8),
        y4=y[4:],
        dw=d @ w,
    )


ops = {
    "sum(1,keepdim)": (lambda T, v: v["x"].sum(1, keepdim=True), lambda v: v.sum(1, keepdims=True)),
    "mean(0)": (lambda T, v: v["x"].mean(0), lambda v: v.mean(0)),
    "add bcast": (lambda T, v: v["a"] + v["m"], None),
    "t()": (lambda T, v: v["am"].t(), None),
    "reshape(64) noncontig": (lambda T, v: v["at"].reshape(64), None),
    "[idx]": (lambda T, v: v["b64"][v["idx"]], None),
    "reshape(8,8)": (lambda T, v: v["b64"].reshape(8, 8), None),
    "[1:5]": (lambda T, v: v["b"][1:5], None),
    "unsqueeze(0)": (lambda T, v: v["b14"].unsqueeze(0), None),
    "expand": (lambda T, v: v["u"].expand(2, 4, 8), None),
    "[0]": (lambda T, v: v["ex"][0], None),
    "cat": (lambda T, v: T.cat([v["c"], v["y4"]], 0), None),
    "softmax(-1)": (lambda T, v: v["cc"].softmax(-1), None),
    "matmul": (lambda T, v: v["d"] @ v["w"], None),
    "amax(1,keepdim)": (lambda T, v: v["dw"].amax(1, keepdim=True), None),
    "gt scalar": (lambda T, v: v["d"] > 0.1, None),
    "where": (lambda T, v: T.where(v["cond"], v["d"], v["e"]), None),
    "clamp": (lambda T, v: v["f"].clamp(-2.0, 2.0), None),
    "gather": (lambda T, v: v["f"].gather(1, v["gidx"]), None),
    "mul scalar": (lambda T, v: v["x"] * 0.5, None),
    "add same": (lambda T, v: v["f"] + v["x"], None),
    "sum()": (lambda T, v: v["x"].sum(), None),
}
sel = sys.argv[1:]
for grad in (False, True):
    print("--- grad" if grad else "--- no_grad")
    ve = mk(ember, grad)
    vt = mk(torch, grad)
    for name, (f, _) in ops.items():
        if sel and name not in sel:
            continue
        te = best(lambda: f(ember, ve))
        tt = best(lambda: f(torch, vt))
        print(f"{name:24s} ember {te:6.2f} torch {tt:6.2f}  {te / tt:5.2f}x")
