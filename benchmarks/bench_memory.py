"""Memory held after the forward of a 784-1024-1024-10 MLP at batch 2048, float32.

The forward (x @ W + b, relu between layers) runs once under no_grad and once in grad mode; with
the output still alive we measure what the forward left allocated. Parameters and the input
exist before the forward and are not counted. Methods:

  (1) malloc in use: glibc's mallinfo2() (bytes in heap chunks in use + mmapped chunks), taken
      after gc.collect() before the forward and again while its output is alive. NumPy's arrays
      and torch's CPU tensors are both allocated through malloc, so the same counter measures
      both libraries: the difference is everything the forward still holds (the output, the
      graph's saved activations, the nodes themselves).
  (2) saved tensors: a saved_tensors_hooks pack hook (torch's own mechanism, mirrored by ember)
      sees every tensor the graph saves for backward; we sum the bytes of distinct buffers
      (by data_ptr and size), apart from the parameters and the input. This is what the graph
      keeps reachable, by the library's own accounting, independent of the allocator.
  (3) ember only: tracemalloc, which NumPy reports its data allocations to, as a cross-check of
      (1) for ember (includes the Python objects too).

Expected: under no_grad only the 2048x10 output (0.08 MB); in grad mode also the two relu outputs
the backward needs (2 x 2048 x 1024 x 4 B = 16.8 MB).
"""
from __future__ import annotations

import gc
import tracemalloc

import numpy as np
from _common import (
    MISSING,
    ember,
    header,
    libraries,
    malloc_in_use,
    mlp_forward,
    mlp_params,
    skipped,
)

SIZES = (784, 1024, 1024, 10)
BATCH = 2048
MB = 1e6


def _hooks(T):
    graph = getattr(T.autograd, "graph", None)
    return getattr(graph, "saved_tensors_hooks", None)


def measure(T, x_np, grad_mode: bool):
    params = mlp_params(T, SIZES)
    x = T.from_numpy(x_np.copy())
    ctx = T.enable_grad() if grad_mode else T.no_grad()
    out = {}
    mlp_forward(params, x)  # warm-up: first-call allocations (BLAS buffers, caches) come first

    # (1) malloc bytes in use while the output lives
    before = malloc_in_use()
    with ctx:
        y = mlp_forward(params, x)
    after = malloc_in_use()
    out["malloc"] = None if before is None else (after - before) / MB
    del y
    gc.collect()

    # (2) distinct buffers saved for backward, apart from parameters and input
    hooks = _hooks(T)
    if hooks is not None:
        held = {(p.data_ptr(), p.nbytes) for p in params} | {(x.data_ptr(), x.nbytes)}
        saved = {}

        def pack(t):
            key = (t.data_ptr(), t.nbytes)
            if key not in held:
                saved[key] = t.nbytes
            return t

        with hooks(pack, lambda t: t), ctx:
            y = mlp_forward(params, x)
        out["saved"] = sum(saved.values()) / MB
        out["n_saved"] = len(saved)
        del y
        gc.collect()

    # (3) tracemalloc (NumPy reports to it; torch's allocator does not)
    if T is ember:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        with ctx:
            y = mlp_forward(params, x)
        gc.collect()
        out["tracemalloc"] = (tracemalloc.get_traced_memory()[0] - base) / MB
        tracemalloc.stop()
        del y
    return out


def fmt(v):
    return "     n/a" if v is None else f"{v:8.2f}"


def main():
    header(f"bench_memory: {'-'.join(map(str, SIZES))} MLP forward at batch {BATCH}, float32, "
           "MB held while the output is alive (params and input excluded)")
    x_np = np.random.RandomState(0).standard_normal((BATCH, SIZES[0])).astype(np.float32)
    res = {}
    for name, T in libraries():
        for mode in (False, True):
            try:
                res[name, mode] = measure(T, x_np, mode)
            except MISSING as e:
                skipped(f"{name} ({'grad mode' if mode else 'no_grad'})", e)
    print(f"  {'':<12}{'method':<40}{'ember MB':>10}{'torch MB':>10}")
    for mode in (False, True):
        label = "grad mode" if mode else "no_grad"
        e, t = res.get(("ember", mode), {}), res.get(("torch", mode), {})
        print(f"  {label:<12}{'(1) malloc in use (mallinfo2)':<40}{fmt(e.get('malloc')):>10}"
              f"{fmt(t.get('malloc')):>10}")
        print(f"  {'':<12}{'(2) saved for backward (saved hooks)':<40}{fmt(e.get('saved')):>10}"
              f"{fmt(t.get('saved')):>10}")
        print(f"  {'':<12}{'(3) tracemalloc (ember only)':<40}{fmt(e.get('tracemalloc')):>10}")


if __name__ == "__main__":
    main()
