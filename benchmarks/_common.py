"""Shared helpers for the benchmarks: imports, thread limits, timing, reporting, malloc accounting.

Every benchmark runs the same code against ember and PyTorch (both used as ``torch``) in the
same process, on two threads each, and prints ember's time, torch's time and their ratio.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import itertools
import os
import statistics
import sys
import time

# Two threads for everything (BLAS under NumPy and torch's intra-op pool), set before NumPy loads.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

THREADS = 2
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import ember
except ImportError:  # run from a checkout without installing: use src/
    sys.path.insert(0, os.path.join(ROOT, "src"))
    import ember

try:
    import torch
    torch.set_num_threads(THREADS)
except ImportError:  # the oracle is optional: ember's figures are printed alone
    torch = None

MISSING = (AttributeError, TypeError, NotImplementedError)


def libraries():
    """(name, module) pairs to benchmark: ember, then torch when installed."""
    libs = [("ember", ember)]
    if torch is not None:
        libs.append(("torch", torch))
    return libs


def timeit(fn, number: int, repeat: int, warmup: int = 1) -> tuple[float, float]:
    """Seconds per call of ``fn``: (best, median) over ``repeat`` runs of ``number`` calls."""
    for _ in range(warmup):
        fn()
    times = []
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            times.append((time.perf_counter() - t0) / number)
    finally:
        if gc_was:
            gc.enable()
    return min(times), statistics.median(times)


def breakdown(what: str, cases, number: int, unit: str) -> None:
    """Per case (label, fn, arrays, requires_grad flags): the forward (no_grad) and the backward
    (forward + backward minus forward) of ember and torch, each on its own with a fixed
    cotangent, printed in ``unit`` ("ms" or "us")."""
    import numpy as np
    print(f"  per {what} (best of 10 x {number})".ljust(40) + "forward: ember / torch       "
          "backward: ember / torch")
    rows: dict = {}
    for _, T in libraries():
        for label, fn, arrays, grads in cases(T, np.random.RandomState(2)):
            ts = [T.from_numpy(a).requires_grad_(g) for a, g in zip(arrays, grads)]
            out = fn(ts)
            cot = T.from_numpy(np.full(tuple(out.shape), 0.1, np.float32))

            def fwd():
                with T.no_grad():
                    fn(ts)

            def both():
                fn(ts).backward(cot)
                for t in ts:
                    t.grad = None

            tf = timeit(fwd, number=number, repeat=10)[0]
            tb = timeit(both, number=number, repeat=10)[0]
            rows.setdefault(label, []).append((tf, max(tb - tf, 0.0)))
    scale, width = (1e3, "8.3f") if unit == "ms" else (1e6, "8.1f")
    for label, r in rows.items():
        cells = "".join(f"{v * scale:{width}}" for pair in zip(*r) for v in pair)
        print(f"    {label:<22}{cells}  ({unit})")


def fmt_time(s: float | None) -> str:
    if s is None:
        return "n/a"
    if s < 1e-3:
        return f"{s * 1e6:9.2f} us"
    if s < 1:
        return f"{s * 1e3:9.2f} ms"
    return f"{s:9.3f} s "


def report(label: str, t_ember: float | None, t_torch: float | None) -> None:
    """One line: ember's time, torch's time, ratio ember/torch."""
    ratio = f"{t_ember / t_torch:7.2f}x" if t_ember and t_torch else "    n/a"
    print(f"  {label:<38} ember {fmt_time(t_ember)}   torch {fmt_time(t_torch)}   "
          f"ember/torch {ratio}", flush=True)


def header(title: str) -> None:
    tv = torch.__version__ if torch is not None else "not installed"
    import numpy as np
    print(f"== {title}  (ember {ember.__version__} on NumPy {np.__version__}; torch {tv}; "
          f"{THREADS} threads)", flush=True)


def skipped(name: str, exc: BaseException) -> None:
    print(f"  {name}: SKIPPED, missing op or feature: {type(exc).__name__}: {exc}", flush=True)


# ---- memory in use by malloc (both NumPy and torch's CPU allocator allocate through it) ------

class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


_libc = None
try:
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    _libc.mallinfo2.restype = _Mallinfo2
except (OSError, AttributeError):  # not glibc >= 2.33
    _libc = None


def malloc_in_use() -> int | None:
    """Bytes currently allocated through glibc malloc (heap chunks in use + mmapped chunks),
    after a full garbage collection; None where mallinfo2 is unavailable."""
    if _libc is None:
        return None
    gc.collect()
    info = _libc.mallinfo2()
    return info.uordblks + info.hblkhd


# ---- the MLP used by bench_mlp and bench_memory, written once against the torch API --------

def mlp_params(T, sizes, seed: int = 0):
    """Weights (fan_in x fan_out, He-scaled) and biases, identical for both libraries."""
    import numpy as np
    rs = np.random.RandomState(seed)
    params = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        w = (rs.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        b = np.zeros(fan_out, np.float32)
        params += [T.from_numpy(w).requires_grad_(), T.from_numpy(b).requires_grad_()]
    return params


def mlp_forward(params, x):
    """Logits of the MLP: (x @ W + b) with relu between layers."""
    h = x
    n = len(params) // 2
    for i in range(n):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < n - 1:
            h = h.relu()
    return h


def log_softmax(T, z):
    """Row-wise log-softmax; a hand-written stable form if the library lacks the method."""
    if hasattr(z, "log_softmax"):
        return z.log_softmax(dim=1)
    m = T.from_numpy(z.detach().numpy().max(axis=1, keepdims=True))
    s = z - m
    return s - s.exp().sum(dim=1, keepdim=True).log()


def cross_entropy(T, logits, onehot):
    """Mean negative log-likelihood of the one-hot targets."""
    return -(log_softmax(T, logits) * onehot).sum() / logits.shape[0]
