import gc
import time

import numpy as np


def mn(fn, n=300, inner=1):
    fn()
    gc.disable()
    b = 1e9
    for _ in range(n):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        b = min(b, (time.perf_counter() - t0) / inner)
    gc.enable()
    return b


r = np.random.RandomState(0)
x = r.uniform(-1, 1, 16).astype(np.float32)
w = r.uniform(0.1, 0.5, 16).astype(np.float32)


def sig(y):
    e = np.exp(-y)
    e += 1
    return np.reciprocal(e, out=e)


def chain_np():
    y = x
    for _ in range(40):
        y = np.tanh(y)
        y = y * w
        y = np.exp(y)
        y = sig(y)
        y = y + x
    return y


print("elementwise numpy forward per op (us):", mn(chain_np, 200) / 200 * 1e6)


# its backward in NumPy (the VJPs autograd runs, saved values kept)
def chain_np_fb():
    y = x
    saved = []
    for _ in range(40):
        y = np.tanh(y)
        saved.append(("tanh", y))
        y2 = y * w
        saved.append(("mul", y))
        y = y2
        y = np.exp(y)
        saved.append(("exp", y))
        y = sig(y)
        saved.append(("sig", y))
        y = y + x
    g = np.ones_like(y)
    gx = np.zeros_like(x)
    for kind, v in reversed(saved):
        if kind == "sig":
            g = g * (1 - v) * v
        elif kind == "exp":
            g = g * v
        elif kind == "mul":
            g = g * w
        elif kind == "tanh":
            g = g * (1 - v * v)
        if kind == "sig":
            gx = gx + g  # (the residual's branch, once per round)
    return g


print("elementwise numpy fwd+bwd per op (us):", mn(chain_np_fb, 200) / 200 * 1e6)
a = np.array(0.3)


def deep_np():
    y = a
    for _ in range(4000):
        y = y * 0.999
        y = y + 0.001
        y = np.sin(y)
        y = y * 1.001
        y = y - 0.0005
    return y


print("deep numpy forward (ms, 0-dim arrays):", mn(deep_np, 10) * 1e3)


def deep_np_fb():
    y = a
    saved = []
    for _ in range(4000):
        y = y * 0.999
        y = y + 0.001
        saved.append(y)
        y = np.sin(y)
        y = y * 1.001
        y = y - 0.0005
    g = np.ones(())
    for v in reversed(saved):
        g = g * 1.001
        g = g * np.cos(v)
        g = g * 0.999
    return g


print("deep numpy fwd+bwd (ms):", mn(deep_np_fb, 10) * 1e3)
r = np.random.RandomState(3)
A = r.standard_normal((100, 100)) / 10
xv = r.standard_normal(100)


def hess_np():
    z = A @ xv
    t = np.tanh(z)
    s = t.sum()
    gs = 2 * s
    gt = np.broadcast_to(gs, t.shape)
    d = 1 - t * t
    gz = gt * d
    gx = A.T @ gz  # noqa: F841 - timed as part of the floor (the gradient itself)
    H = np.empty((100, 100))
    for i in range(100):
        v = np.zeros(100)
        v[i] = 1.0
        ggz = A @ v  # through gx = A.T @ gz
        ggt = (ggz * d).sum()  # through gz = gt * d, to gt (expand of gs)
        gd = ggz * gt  # ... and to d = 1 - t*t
        gtt = -(gd * t) * 2  # through t*t
        ggs = ggt * 2  # gs = 2 s
        gt2 = gtt + np.broadcast_to(ggs, t.shape)  # s = t.sum()
        gzz = gt2 * (1 - t * t)  # t = tanh(z)
        H[i] = A.T @ gzz  # z = A @ x
    return H


print("hessian numpy (ms):", mn(hess_np, 50) * 1e3)
aa = np.asarray


def deep_np0():
    y = a
    for _ in range(4000):
        y = aa(np.multiply(y, 0.999))
        y = aa(np.add(y, 0.001))
        y = aa(np.sin(y))
        y = aa(np.multiply(y, 1.001))
        y = aa(np.subtract(y, 0.0005))
    return y


print("deep numpy forward with 0-dim arrays kept (ms):", mn(deep_np0, 10) * 1e3)


def deep_np0_fb():
    y = a
    saved = []
    for _ in range(4000):
        y = aa(np.multiply(y, 0.999))
        y = aa(np.add(y, 0.001))
        saved.append(y)
        y = aa(np.sin(y))
        y = aa(np.multiply(y, 1.001))
        y = aa(np.subtract(y, 0.0005))
    g = np.ones(())
    for v in reversed(saved):
        g = aa(np.multiply(g, 1.001))
        g = aa(np.multiply(g, np.cos(v)))
        g = aa(np.multiply(g, 0.999))
    return g


print("deep numpy fwd+bwd with 0-dim arrays kept (ms):", mn(deep_np0_fb, 10) * 1e3)
