"""PyTorch's OpInfo database run through ember and PyTorch: the summary the README quotes.

For every entry of ``op_db`` (all namespaces) and for float64, float32 and complex128, where
PyTorch itself supports the dtype for the entry on CPU, the first samples go through
tests/opinfo.py's ``check_sample`` as three separate checks:

- forward: output values, dtypes and shapes (counted for every supported dtype);
- backward: reverse gradients of every output and grad_fn names (entries with
  ``supports_autograd`` and the dtype among their backward dtypes);
- forward AD: forward-mode tangents (``supports_forward_ad`` and a backward dtype).

An entry passes a check when all its (capped) samples pass. Entries ember does not have fail
every check. Not counted: CUDA-only entries (``onlyCUDA``: the jiterator ones) and samples
PyTorch itself rejects on CPU. Random or uninitialised results (``RANDOM``) are compared on
shapes and dtypes only, and not counted for backward and forward AD. Complex inputs get complex
forward-AD tangents. Usage: ``.venv/bin/python scripts/opinfo_summary.py [--samples 8] [--workers 2]
[--timeout 30] [--only NAME_PREFIX] [--failures]``.
"""
from __future__ import annotations

import argparse
import collections
import multiprocessing as mp
import os
import signal
import sys
import types
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "src"), os.path.join(ROOT, "tests")]

DTYPES = ("float64", "float32", "complex128")
CHECKS = ("forward", "backward", "fwd_ad")
# per-dtype tolerances (rtol, atol); None: tests/helpers.py's defaults
TOLS = {"float64": (1e-7, 1e-9), "float32": (1e-4, 1e-5), "complex128": (1e-7, 1e-9),
        "complex32": (1e-3, 1e-3)}   # (``--dtypes complex32``: ComplexHalf, ember._chalf)


# random or uninitialised results: compared on shapes and dtypes only (values, and so gradients,
# cannot match; test_random checks the distributions); not counted for backward / forward AD
RANDOM = {"normal", "randn", "randn_like", "rand_like", "randint", "randint_like", "empty",
          "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided",
          "bernoulli", "multinomial", "uniform", "cauchy", "exponential", "geometric",
          "log_normal", "nn.functional.dropout", "nn.functional.dropout2d",
          "nn.functional.dropout3d", "nn.functional.alpha_dropout",
          "nn.functional.feature_alpha_dropout", "nn.functional.rrelu",
          "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d"}


def namespace(name: str) -> str:
    if name.startswith("nn.functional."):
        return "nn.functional"
    if name.startswith("signal.windows."):
        return "signal.windows"
    head = name.split(".")[0]
    return head if "." in name else "torch"


def _calls() -> dict:
    """Entries whose ``op`` wraps the function: the per-namespace test files' ``CALLS``."""
    from opinfo import VARIANT_CALLS
    out: dict = dict(VARIANT_CALLS)
    for mod in ("test_opinfo_linalg", "test_opinfo_special", "test_opinfo_fft",
                "test_opinfo_masked"):
        try:
            m = __import__(mod)
        except Exception:   # a file being edited: its overrides are simply not used
            continue
        for k, v in getattr(m, "CALLS", {}).items():
            out[k if isinstance(k, tuple) else (k, None)] = v
    return out


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _first_line(ex: BaseException) -> str:
    text = f"{type(ex).__name__}: {ex}".strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    # check_sample's assertion messages put the useful line last (after the arrays)
    for ln in lines:
        if ln.startswith(("AssertionError: shape", "AssertionError: dtype",
                          "AssertionError: output", "AssertionError: missing",
                          "AssertionError: unexpected")):
            return ln[:160]
    for ln in lines:
        if "Mismatched elements" in ln or "Max absolute" in ln:
            return ("values: " + ln.strip())[:160]
    return lines[0][:160] if lines else type(ex).__name__


def _dunder(name: str):
    """Entries named after Tensor dunder methods (``__radd__``, ``__getitem__``)."""
    import ember
    if name.startswith("__") and name.endswith("__") and hasattr(ember.Tensor, name):
        return getattr(ember.Tensor, name)
    return None


def run_entry(task):
    """(index, dtype) -> (index, dtype, {check: None | 'pass' | error line})."""
    idx, dt, samples, timeout = task
    import torch

    import ember  # noqa: F401
    from opinfo import _op_db, check_sample, ember_fn
    warnings.simplefilter("ignore")
    info = _op_db()[idx]
    tdt = getattr(torch, dt)
    res: dict = {c: None for c in CHECKS}
    cuda_only = any(getattr(d, "__name__", "") == "onlyCUDA" for d in info.decorators)
    if cuda_only or tdt not in info.supported_dtypes("cpu"):
        return idx, dt, res
    back = info.supports_autograd and tdt in info.supported_backward_dtypes("cpu")
    random = info.name in RANDOM
    res["forward"] = "pass"
    back = back and not random
    if back:
        res["backward"] = "pass"
        if info.supports_forward_ad:
            res["fwd_ad"] = "pass"
    calls = _calls()
    fe = calls.get((info.name, info.variant_test_name)) or calls.get((info.name, None))
    if fe is None:
        try:
            fe = ember_fn(info.name)
        except AttributeError:
            fe = _dunder(info.name)
        if fe is None:
            return idx, dt, {c: (v and "missing in ember") for c, v in res.items()}
    rtol, atol = TOLS[dt]
    parts = {"forward": "f", "backward": "b", "fwd_ad": "j"}
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        try:
            gen = info.sample_inputs("cpu", tdt, requires_grad=back)
            ran = 0
            for i, sample in enumerate(gen):
                if i == samples:
                    break
                try:   # a sample PyTorch itself rejects on CPU (a CUDA-only entry...)
                    info.op(sample.input, *sample.args, **sample.kwargs)
                except Exception:  # noqa: BLE001
                    continue
                ran += 1
                proc = sample.output_process_fn_grad
                shim = types.SimpleNamespace(
                    name=info.name, op=lambda *a, _f=info.op, _p=proc, **k: _p(_f(*a, **k)),
                    supports_autograd=back, supports_forward_ad=info.supports_forward_ad)
                fe_p = (lambda *a, _f=fe, _p=proc, **k: _p(_f(*a, **k)))
                # a sample with dropout (scaled_dot_product_attention's dropout_p,
                # multi_head_attention_forward's in training): random, compared on shapes only
                # (tests/test_nn_attention.py checks them with the same keep mask on both sides)
                drop = bool(sample.kwargs.get("dropout_p")) or (
                    info.name == "nn.functional.multi_head_attention_forward"
                    and sample.args[9] > 0 and sample.kwargs.get("training", True))
                for c in CHECKS:
                    if res[c] != "pass" or (drop and c != "forward"):
                        continue
                    try:
                        check_sample(shim, sample, fe_p, values=not (random or drop), rtol=rtol,
                                     atol=atol, parts=parts[c])
                    except _Timeout:
                        raise
                    except BaseException as ex:  # noqa: BLE001 - every failure is reported
                        res[c] = f"sample {i}: {_first_line(ex)}"
            if not ran:   # PyTorch runs none of the samples: not supported on CPU
                res = dict.fromkeys(CHECKS)
        except _Timeout:
            raise
        except BaseException as ex:  # noqa: BLE001 - PyTorch's own sample generation
            msg = f"sample generation: {_first_line(ex)}"
            res = {c: (v if v != "pass" else msg) for c, v in res.items()}
    except _Timeout:
        res = {c: (v if v != "pass" else f"timeout after {timeout}s") for c, v in res.items()}
    finally:
        signal.alarm(0)
    return idx, dt, res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=30)
    ap.add_argument("--only", default="", help="entry-name prefix")
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--failures", action="store_true", help="list every failing entry")
    args = ap.parse_args(argv)
    dts = tuple(args.dtypes.split(","))
    from opinfo import _op_db
    db = _op_db()
    tasks = [(i, dt, args.samples, args.timeout) for i, o in enumerate(db)
             if o.name.startswith(args.only) for dt in dts]
    if args.workers > 1:
        with mp.get_context("fork").Pool(args.workers, maxtasksperchild=50) as pool:
            results = list(pool.imap_unordered(run_entry, tasks, chunksize=4))
    else:
        results = [run_entry(t) for t in tasks]
    table: dict = collections.defaultdict(lambda: [0, 0])
    fails = []
    for idx, dt, res in sorted(results, key=lambda r: (r[0], dts.index(r[1]))):
        info = db[idx]
        key = f"{info.name}.{info.variant_test_name}".rstrip(".")
        ns = namespace(info.name)
        for c, v in res.items():
            if v is None:
                continue
            for n in (ns, "all"):
                table[n, dt, c][1] += 1
                table[n, dt, c][0] += v == "pass"
            if v != "pass":
                fails.append((ns, key, dt, c, v))
    spaces = sorted({k[0] for k in table} - {"all"}) + ["all"]
    print(f"OpInfo entries passing all of their first {args.samples} samples / entries "
          "PyTorch supports on CPU for the dtype")
    print("| namespace | " + " | ".join(f"{dt} {c}" for dt in dts for c in CHECKS) + " |")
    print("|---" * (1 + len(dts) * len(CHECKS)) + "|")
    for ns in spaces:
        cells = []
        for dt in dts:
            for c in CHECKS:
                p, n = table[ns, dt, c]
                cells.append(f"{p}/{n}" if n else "-")
        print(f"| {ns} | " + " | ".join(cells) + " |")
    for dt in dts:
        p = sum(table["all", dt, c][0] for c in CHECKS)
        n = sum(table["all", dt, c][1] for c in CHECKS)
        print(f"{dt}: {p}/{n} checks pass ({100 * p / max(n, 1):.1f}%)")
    print("random or uninitialised results (compared on shapes and dtypes only): "
          + ", ".join(sorted(RANDOM)))
    if args.failures:
        print("\nfailing entries (namespace, entry, dtype, check: first error line)")
        for ns, key, dt, c, v in fails:
            print(f"{ns:<14} {key:<40} {dt:<10} {c:<8} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
