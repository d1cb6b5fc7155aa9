"""Run every benchmark in sequence (``make bench``), each in its own process."""
from __future__ import annotations

import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHMARKS = ["bench_chain.py", "bench_mlp.py", "bench_long_chain.py", "bench_memory.py",
              "bench_functional.py", "bench_mixed.py", "bench_cnn.py", "bench_transformer.py",
              "bench_norm_act.py", "bench_training.py"]


def main() -> int:
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(HERE), "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    failed = []
    for name in BENCHMARKS:
        t0 = time.perf_counter()
        rc = subprocess.call([sys.executable, os.path.join(HERE, name)], env=env)
        print(f"   [{name} finished in {time.perf_counter() - t0:.1f} s"
              + (f", exit status {rc}]" if rc else "]") + "\n", flush=True)
        if rc:
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
