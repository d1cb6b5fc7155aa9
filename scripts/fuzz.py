"""Long-mode autograd fuzzing: ember against PyTorch over many random programs.

    python scripts/fuzz.py --n 5000 --start 0 --jobs 2

Seeds run in worker subprocesses (so a crash inside ember, such as heap corruption from an
unchecked as_strided, is recorded instead of ending the run). Disagreements are grouped by kind
(phase, what differed, the statement's operation; the grad modes seen around it are listed);
for the largest ``--repros`` groups one program is minimised and printed as a runnable repro as
soon as it is ready. Exit status 1 when there is any disagreement.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(os.path.dirname(HERE), "tests")


def _worker(start: int, stop: int) -> None:
    """Check seeds [start, stop): one JSON line per seed on stdout."""
    sys.path.insert(0, TESTS)
    import fuzzer
    for s in range(start, stop):
        try:
            found = [[p.mode, list(f.key), f.describe(), fuzzer.known(f)]
                     for p, f in fuzzer.check_seed(s)]
        except Exception as ex:  # noqa: BLE001 - a fuzzer fault is a finding too
            found = [["rev", ["fuzzer", type(ex).__name__, "-"], repr(ex), None]]
        print(json.dumps({"seed": s, "found": found}), flush=True)


def _minimise(seed: int, mode: str, key: list, seconds: float) -> None:
    """Print the minimal repro of ``key`` in program ``seed`` (run in a subprocess)."""
    sys.path.insert(0, TESTS)
    import fuzzer
    prog = fuzzer.generate(seed)
    prog = prog if mode == "rev" else fuzzer.fwd_variant(prog)
    for f in fuzzer.check(prog):
        if list(f.key) == key:
            small, sf = fuzzer.minimize(prog, f, seconds=seconds)
            print(fuzzer.report(small, sf))
            return
    print(f"(seed {seed}: the disagreement did not reproduce)")


def _spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ranges(start: int, n: int, jobs: int) -> list:
    step = max(1, -(-n // (jobs * 4)))
    return [(a, min(a + step, start + n)) for a in range(start, start + n, step)]


def run_seeds(start: int, n: int, jobs: int) -> dict:
    """{seed: [(mode, key, description)]}; a worker that dies marks its current seed as a
    crash and the rest of its range is run again."""
    todo = _ranges(start, n, jobs)
    results: dict = {}
    running: list = []
    while todo or running:
        while todo and len(running) < jobs:
            a, b = todo.pop(0)
            running.append((a, b, _spawn("--worker", str(a), str(b))))
        a, b, p = running.pop(0)
        out, err = p.communicate()
        done = set()
        for line in out.splitlines():
            r = json.loads(line)
            results[r["seed"]] = [(m, tuple(k), d, n) for m, k, d, n in r["found"]]
            done.add(r["seed"])
        left = [s for s in range(a, b) if s not in done]
        if p.returncode != 0 and left:
            crash = left[0]
            tail = (err.strip().splitlines() or ["(no output)"])[-1]
            results[crash] = [("rev", ("crash", f"exit {p.returncode}", "-"), tail, None)]
            if crash + 1 < b:
                todo.insert(0, (crash + 1, b))
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--minimize-seconds", type=float, default=20.0)
    ap.add_argument("--repros", type=int, default=60, help="groups to minimise (largest first)")
    ap.add_argument("--worker", nargs=2, type=int, help=argparse.SUPPRESS)
    ap.add_argument("--minimise", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(*args.worker)
        return 0
    if args.minimise:
        seed, mode, key = args.minimise
        _minimise(int(seed), mode, json.loads(key), args.minimize_seconds)
        return 0
    t0 = time.monotonic()
    results = run_seeds(args.start, args.n, args.jobs)
    groups: dict = defaultdict(list)
    for seed in sorted(results):
        for mode, key, desc, note in results[seed]:
            op = key[2].split("|")[-1]
            groups[key[:2] + (op,)].append((seed, mode, desc, note, key))
    bad = sum(1 for v in results.values() if v)
    print(f"{args.n} seeds from {args.start} in {time.monotonic() - t0:.0f} s: "
          f"{bad} with disagreements, {len(groups)} kinds\n", flush=True)
    order = sorted(groups, key=lambda k: -len(groups[k]))
    for k in order:
        seeds = sorted({g[0] for g in groups[k]})
        ctxs = sorted({g[4][2].rpartition("|")[0] for g in groups[k]} - {""})
        note = groups[k][0][3]
        print(f"{len(groups[k]):5d}  {' / '.join(k)}   seeds {seeds[:8]}"
              f"{' ...' if len(seeds) > 8 else ''}{'   (known)' if note else ''}"
              + (f"\n         also under: {', '.join(ctxs)}" if ctxs else ""), flush=True)
    minimise_all(groups, order[:args.repros], args.jobs, args.minimize_seconds)
    return 1 if groups else 0


def minimise_all(groups: dict, order: list, jobs: int, seconds: float) -> None:
    """Print one minimal repro per group (in ``order``, each as soon as it is ready), ``jobs``
    minimisations at a time."""
    todo = list(order)
    running: list = []
    while todo or running:
        while todo and len(running) < jobs:
            k = todo.pop(0)
            seed, mode, desc, _, key = groups[k][0]
            p = None if k[0] in ("crash", "fuzzer") else _spawn(
                "--minimise", str(seed), mode, json.dumps(list(key)),
                "--minimize-seconds", str(seconds))
            running.append((k, seed, desc, p))
        k, seed, desc, p = running.pop(0)
        if p is None:
            text = f"seed {seed}: {desc}"
        else:
            so, se = p.communicate()
            text = so.rstrip() if p.returncode == 0 else (
                f"{desc}\n(minimiser failed: {(se.strip().splitlines() or ['?'])[-1]})")
        print("\n" + "=" * 100 + f"\n{len(groups[k])} x {' / '.join(k)}\n{text}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
