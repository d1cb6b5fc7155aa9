"""A 1,000,000-op chain: y = y * 1.0000001 on a 1-element float32 tensor, then backward.

Checks that backward through a very deep graph completes (no recursion limit, no stack overflow
while running or freeing the graph) and times forward, backward and freeing the graph. One run
each: a single pass already takes seconds.
"""
from __future__ import annotations

import gc
import time

from _common import MISSING, fmt_time, header, libraries, report, skipped

N_OPS = 1_000_000
FACTOR = 1.0000001


def run(T):
    x = T.ones(1, requires_grad=True)
    # The cyclic garbage collector stays on, as in a user's program: ember's million graph nodes
    # are Python objects it scans now and then; torch's nodes are C++ objects it never sees.
    t0 = time.perf_counter()
    y = x
    for _ in range(N_OPS):
        y = y * FACTOR
    t1 = time.perf_counter()
    y.backward()
    t2 = time.perf_counter()
    del y
    gc.collect()
    t3 = time.perf_counter()
    return {"forward (1M muls, recording)": t1 - t0, "backward": t2 - t1,
            "freeing the graph (+ gc.collect)": t3 - t2, "total": t3 - t0}, x.grad.item()


def main():
    header(f"bench_long_chain: {N_OPS:,}-op chain y = y * {FACTOR} on 1 element, one run")
    res, grads = {}, {}
    for name, T in libraries():
        try:
            res[name], grads[name] = run(T)
        except MISSING as e:
            skipped(name, e)
        except RecursionError as e:
            print(f"  {name}: FAILED with RecursionError: {e}")
    labels = ("forward (1M muls, recording)", "backward", "freeing the graph (+ gc.collect)",
              "total")
    for label in labels:
        report(label, res.get("ember", {}).get(label), res.get("torch", {}).get(label))
    for name, g in grads.items():
        per = res[name]["backward"] / N_OPS
        print(f"  {name}: backward completed, x.grad = {g:.7f} ({fmt_time(per).strip()} per node)")


if __name__ == "__main__":
    main()
