#!/usr/bin/env python
"""Mutation check: does the test suite notice small deliberate bugs in ember?

Copies ``src/`` to a temporary directory, applies one mutation at a time (a table of
(file, exact old text, new text, test files)), runs the relevant test files against the mutated
copy (``PYTHONPATH=<tmp>/src`` ahead of the editable install; the script checks that the mutated
copy is what gets imported), and prints killed / survived per mutation and a total.

Tests that already fail on the unmutated source are found first (one baseline run over every
test file the table names) and deselected, so a mutation counts as killed only when a test that
passed before fails. A mutation whose old text is no longer in the source (``src/`` changes
under active development) is reported as ``stale``; one whose old text occurs more than once, as
``ambiguous``; neither is applied.

    .venv/bin/python scripts/mutation_check.py              # the working tree's src/
    .venv/bin/python scripts/mutation_check.py --ref HEAD   # src/ as committed (git archive)
    .venv/bin/python scripts/mutation_check.py --only grad_lock --only split
    .venv/bin/python scripts/mutation_check.py --list
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable


@dataclass(frozen=True)
class Mutation:
    """One small bug: replace ``old`` (which must occur exactly once) by ``new`` in ``file``
    (relative to ``src/ember``), then run ``tests`` (files under ``tests/``)."""

    name: str
    file: str
    old: str
    new: str
    tests: tuple


def M(name, file, old, new, *tests) -> Mutation:
    return Mutation(name, file, old, new, tuple(tests))


ENGINE = "autograd/engine.py"
MULTI = "test_multi_output.py"
INPLACE = "test_inplace_versions.py"
ORDER = "test_engine_order.py"
VIEWS = "test_views_inplace.py"

MUTATIONS = [
    # ---- the engine ----------------------------------------------------------------------
    M("grad_lock_removed", ENGINE,
      "    with GRAD_LOCK:\n        cur = t._grad",
      "    if True:\n        cur = t._grad",
      "test_threads.py"),
    M("ready_queue_oldest_first", ENGINE,
      "            heapq.heappush(heap, (-m._seq, m))",
      "            heapq.heappush(heap, (m._seq, m))",
      ORDER, "test_graph_hooks.py"),
    M("ready_queue_fast_path_oldest_first", ENGINE,
      "                                if pending is not None:   # queued before m, as in PyTorch\n"
      "                                    buffers[pending] = pending_grads\n"
      "                                    heappush(heap, (-pending._seq, pending))",
      "                                if pending is not None:   # queued before m, as in PyTorch\n"
      "                                    buffers[pending] = pending_grads\n"
      "                                    heappush(heap, (pending._seq, pending))",
      ORDER, "test_graph_hooks.py"),
    M("ready_queue_chain_handoff_ignores_priority", ENGINE,
      "if heap and heap[0][0] <= -pending._seq:",
      "if False:",
      ORDER, "test_graph_hooks.py"),
    M("ready_queue_initial_heap_reversed", ENGINE,
      "                heapq.heappush(heap, (-n._seq, n))",
      "                heapq.heappush(heap, (n._seq, n))",
      ORDER, "test_graph_hooks.py"),
    M("accumulate_grad_normal_priority", "autograd/graph.py",
      "        self._seq = _ACC_SEQ\n",
      "        self._seq = next(_seq)\n",
      ORDER, "test_graph_hooks.py"),
    M("multi_output_node_gets_first_grad_only", ENGINE,
      "    g = grads[0] if node.n_out == 1 else tuple(grads)",
      "    g = grads[0] if node.n_out == 1 else (grads[0],) + (None,) * (len(grads) - 1)",
      MULTI),
    M("saved_version_check_skipped_fast_path", ENGINE,
      "                                if t._vc.v != e[1]:",
      "                                if False:",
      INPLACE, VIEWS),
    M("saved_version_check_skipped_slow_path", ENGINE,
      "            if t._vc.v != ver:\n                raise saved_version_error(node)",
      "            if False:\n                raise saved_version_error(node)",
      INPLACE, VIEWS, "test_saved_hooks.py"),
    M("saved_output_version_check_skipped", ENGINE,
      "                                if e[1].v != e[2]:",
      "                                if False:",
      INPLACE, VIEWS),
    M("saved_tensors_not_freed", ENGINE,
      "            if type(e) is tuple or hasattr(e, \"unpack\"):\n"
      "                node._saved = None",
      "            if False:\n                node._saved = None",
      "test_autograd_core.py", "test_memory.py", MULTI, ORDER),
    M("saved_tensors_not_freed_fast_path", ENGINE,
      "                    if held and not keep_graph:\n                        node._saved = None",
      "                    if False:\n                        node._saved = None",
      "test_autograd_core.py", "test_memory.py"),
    M("no_pruning_for_inputs", ENGINE,
      "        needed = _leads_to(targets, parents)",
      "        needed = set(deps) | {r[0] for r in roots}",
      ORDER, "test_autograd_core.py"),
    M("broadcast_grad_not_reduced", ENGINE,
      "    if g.shape != shape:\n        g = _sum_to(g, shape)",
      "    if False:\n        g = _sum_to(g, shape)",
      "test_pointwise.py"),
    M("grad_accumulation_no_version_bump", ENGINE,
      "            np.add(cd, g, out=cd, casting=\"unsafe\")\n            cur._vc.v += 1",
      "            np.add(cd, g, out=cd, casting=\"unsafe\")",
      INPLACE, "test_autograd_core.py"),
    M("steal_gradient_still_referenced", ENGINE,
      "steal = not graph and (x is None or not x.hooks) and sys.getrefcount(g) <= 2",
      "steal = not graph and (x is None or not x.hooks)",
      "test_autograd_core.py", "test_tensor_basics.py", INPLACE),
    M("post_accumulate_hooks_not_called", ENGINE,
      "        for fn in list(x.post_acc.values()):\n            fn(t)",
      "        for fn in list(x.post_acc.values()):\n            pass",
      "test_graph_hooks.py", "test_threads.py"),
    M("retain_grad_not_fed", ENGINE,
      "            fn(_as_tensor(grads[nr]).detach() if not graph else grads[nr])",
      "            pass",
      "test_autograd_core.py", ORDER),
    M("grad_not_cast_to_input_dtype", ENGINE,
      "    if g.dtype != dt:\n        if g.dtype.kind == \"c\" and dt.kind != \"c\":",
      "    if False:\n        if g.dtype.kind == \"c\" and dt.kind != \"c\":",
      "test_pointwise.py", "test_dtype.py"),
    M("prehook_return_ignored", ENGINE,
      "            r = [None if x is None else (x if graph else _raw(x)) for x in r]\n"
      "            if outs is None:\n                grads = r",
      "            r = [None if x is None else (x if graph else _raw(x)) for x in r]\n"
      "            if outs is None:\n                pass",
      "test_graph_hooks.py"),
    M("posthook_return_ignored", ENGINE,
      "            grads_in = tuple(None if x is None else (x if graph else _raw(x)) for x in r)",
      "            pass",
      "test_graph_hooks.py"),
    # ---- the registry --------------------------------------------------------------------
    M("only_first_output_gets_grad_fn", "_ops/_registry.py",
      "            for k in op.diff_out:\n                r = res[k]",
      "            for k in op.diff_out[:1]:\n                r = res[k]",
      MULTI),
    M("view_refresh_skipped_general", "_ops/_registry.py",
      "            if grad_on and (t._rg if t._base is None else _refresh_view(t)):",
      "            if grad_on and t._rg:",
      VIEWS, INPLACE),
    M("view_refresh_skipped_unary", "_ops/_registry.py",
      "        if (x._rg if x._base is None else _refresh_view(x)) and (",
      "        if x._rg and (",
      VIEWS, INPLACE),
    M("unneeded_inputs_saved", "_ops/_registry.py",
      "        if save_if is not None and save_if[j] is not None and edges[save_if[j]][0] is None:",
      "        if False:",
      INPLACE, VIEWS, "test_autograd_core.py"),
    M("refresh_view_never_rebases", "_tensor.py",
      "    if t._av == t._vc.v:\n        return t._rg or base._rg",
      "    if True:\n        return t._rg or base._rg",
      VIEWS, INPLACE),
    # ---- dispatch: in-place --------------------------------------------------------------
    M("inplace_direct_path_no_version_bump", "_ops/_dispatch.py",
      "            else:\n                self._vc.v += 1\n                return self",
      "            else:\n                return self",
      INPLACE),
    M("inplace_commit_no_version_bump", "_ops/_dispatch.py",
      "    self._vc.v += 1\n    if node is not None:",
      "    if node is not None:",
      INPLACE),
    M("inplace_on_leaf_allowed", "_ops/_dispatch.py",
      "    if self._rg and self._fn is None:\n        raise RuntimeError(\"a leaf Variable",
      "    if False:\n        raise RuntimeError(\"a leaf Variable",
      INPLACE, VIEWS),
    M("inplace_on_view_of_leaf_allowed", "_ops/_dispatch.py",
      "        if base._rg and base._fn is None:\n            raise RuntimeError(",
      "        if False:\n            raise RuntimeError(",
      INPLACE, VIEWS),
    M("inplace_saved_output_keeps_old_version", "_ops/_dispatch.py",
      "            s[-1] = (data, vc, vc.v, k)",
      "            pass",
      INPLACE, VIEWS),
    M("multi_output_view_inplace_allowed", "_ops/_dispatch.py",
      "        if self._cm:\n            raise view_rebase_error(self, direct=True)",
      "        if False:\n            raise view_rebase_error(self, direct=True)",
      MULTI, VIEWS),
    M("copyslices_not_rebased", "_ops/views.py",
      "    set_history(base, cs, 0)",
      "    pass",
      VIEWS, INPLACE),
    # ---- single in-place ops without their version bump -----------------------------------
    *[M(f"{name}_no_version_bump", "_ops/indexing.py", f"{ind}return {call}\n",
        f"{ind}v = self._vc.v\n{ind}{call}\n{ind}self._vc.v = v\n{ind}return self\n", INPLACE)
      for name, ind, call in [
          ("masked_fill_", " " * 4, "inplace(MASKED_FILL, self, (), (m, value))"),
          ("index_add_", " " * 4,
           "inplace(INDEX_ADD, self, (source,), (d, idx, alpha), overlap=2)"),
          ("scatter_add_", " " * 4, "inplace(SCATTER_ADD, self, (src,), (d, idx), overlap=2)"),
          ("scatter_value", " " * 8, "inplace(op, self, (), (d, idx, src, reduce))")]],
    # ---- op formulas ---------------------------------------------------------------------
    M("sin_vjp_sign", "_ops/pointwise.py",
      "(g * ns.conj(ns.cos(x)),)",
      "(-g * ns.conj(ns.cos(x)),)",
      "test_pointwise.py"),
    M("matmul_vjp_sign_a", "_ops/linalg.py",
      "            ga = ns.matmul(g, ns.mH(b))",
      "            ga = -ns.matmul(g, ns.mH(b))",
      "test_linalg.py"),
    M("var_vjp_sign", "_ops/reduction.py",
      "    return expand_reduced(ns, g, x.shape, dims, keepdim) * (x - mu) * scale",
      "    return expand_reduced(ns, g, x.shape, dims, keepdim) * (mu - x) * scale",
      "test_reduction.py", MULTI),
    M("split_vjp_first_output_only", "_ops/views.py",
      "    for (a, b), g in zip(bounds, grads):",
      "    for (a, b), g in zip(bounds, (grads[0],) + (None,) * (len(grads) - 1)):",
      MULTI, "test_joining.py"),
    M("unbind_vjp_first_output_only", "_ops/views.py",
      "    parts = [g if g is not None else ns.zeros_of(grads[i0], grads[i0].shape) "
      "for g in grads]",
      "    parts = [ns.zeros_of(grads[i0], grads[i0].shape) if k else grads[0] "
      "for k, _ in enumerate(grads)]",
      MULTI, "test_joining.py"),
    M("var_mean_vjp_drops_mean", "_ops/reduction.py",
      "        if gm is not None:\n            m = _mean_part(ns, gm, x, dims, keepdim)",
      "        if False:\n            m = _mean_part(ns, gm, x, dims, keepdim)",
      MULTI, "test_reduction.py"),
    # (dropping a view op's JVP, e.g. split's, is an equivalent mutant: a view's tangent is
    # derived from its base's tangent on first use)
    M("var_mean_jvp_drops_mean", "_ops/reduction.py",
      "                ns.sum_dims(t, dims, keepdim) / _n_reduced(x.shape, dims))",
      "                None)",
      MULTI, "test_reduction.py"),
    M("max_pool_vjp_sign", "_ops/nn_pooling.py",
      "    return (_dep(ns, ns.pool_scatter(g[0], idx, nd, in_shape, unique), x),)",
      "    return (_dep(ns, ns.pool_scatter(-g[0], idx, nd, in_shape, unique), x),)",
      MULTI),
    M("selection_vjp_sign", "_ops/selection.py",
      "    return (ns.gather_backward(g[0], in_shape, dim, idx),)",
      "    return (ns.gather_backward(-g[0], in_shape, dim, idx),)",
      "test_selection.py", MULTI),
    M("jvp_of_later_outputs_dropped", "autograd/forward_ad.py",
      "    for k in op.diff_out:\n        o, tg = outs[k], rs[k]",
      "    for k in op.diff_out[:1]:\n        o, tg = outs[k], rs[k]",
      MULTI),
    # ---- lazy conj (the conj and neg bits) -------------------------------------------------
    M("conj_view_write_not_conjugated", "_ops/_dispatch.py",
      "            out = type(self)._fn_np(np.asarray(out))",
      "            out = np.asarray(out)", "test_conj.py"),
    M("conj_view_gradient_not_conjugated", "_ops/views.py",
      "    if mode & CONJ_BIT:\n        g = ns.conj(g)",
      "    if mode & CONJ_BIT:\n        g = g", "test_conj.py"),
    M("conj_view_tangent_without_bit", "autograd/forward_ad.py",
      "        set_lazy_bits(fw, bits)", "        pass", "test_conj.py"),
    M("conj_flag_not_propagated_to_views", "_tensor.py",
      "        t.__class__ = type(src)   # a view of a conj (neg) view has the bit too",
      "        pass", "test_conj.py"),
    M("inference_rule_ignored", "_ops/_registry.py",
      "            via = via(inputs, params)", "            via = None", "test_grad_mode.py"),
]


# ---- running -------------------------------------------------------------------------------

def _pristine(args, work: str) -> str:
    """A private copy of the source to mutate: the working tree's, or ``--ref``'s."""
    dst = os.path.join(work, "pristine")
    os.makedirs(dst)
    if args.ref:
        arch = subprocess.run(["git", "-C", ROOT, "archive", args.ref, "src"],
                              capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", dst], input=arch, check=True)
    else:
        shutil.copytree(os.path.join(args.src), os.path.join(dst, "src"),
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    return os.path.join(dst, "src")


def _env(src: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _imports_from(src: str) -> str:
    r = subprocess.run([PY, "-c", "import ember; print(ember.__file__)"], env=_env(src),
                       capture_output=True, text=True, cwd=ROOT)
    return r.stdout.strip() or r.stderr.strip().splitlines()[-1]


def _pytest(src: str, tests, extra=(), timeout=None):
    cmd = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore",
           *[os.path.join("tests", t) for t in tests], *extra]
    return subprocess.run(cmd, env=_env(src), capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)


_FAILED = re.compile(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", re.M)   # test ids may hold spaces


def baseline(src: str, tests, timeout) -> set:
    """Test ids that fail on the unmutated source (deselected from every mutant's run)."""
    r = _pytest(src, sorted(tests), ("-rfE",), timeout)
    if r.returncode not in (0, 1):
        sys.exit(f"baseline run failed (rc {r.returncode}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return set(_FAILED.findall(r.stdout))


def run_one(m: Mutation, pristine: str, work: str, known_bad: set, timeout) -> tuple:
    """(status, detail) for one mutation."""
    path = os.path.join(pristine, "ember", m.file)
    if not os.path.exists(path):
        return "stale", f"no file {m.file}"
    text = open(path).read()
    n = text.count(m.old)
    if n == 0:
        return "stale", "old text not found"
    if n > 1:
        return "ambiguous", f"old text found {n} times"
    src = os.path.join(work, m.name, "src")
    shutil.copytree(pristine, src)
    with open(os.path.join(src, "ember", m.file), "w") as f:
        f.write(text.replace(m.old, m.new))
    got = _imports_from(src)
    if not got.startswith(src):
        return "error", f"imported {got}, not the mutated copy"
    files = {os.path.join("tests", x.split("::")[0]) for x in m.tests}
    deselect = [a for t in sorted(known_bad) if t.split("::")[0] in files
                for a in ("--deselect", t)]
    try:
        for _ in range(4):
            try:
                r = _pytest(src, m.tests, ("-x", "-rfE", *deselect), timeout)
            except subprocess.TimeoutExpired:
                return "killed", "timeout"
            if r.returncode != 1:
                break
            failed = _FAILED.findall(r.stdout)
            if not failed or not _flaky(pristine, failed[0], timeout):
                return "killed", failed[0] if failed else "(failed)"
            # the killing test also fails (sometimes) without the mutation: not a kill
            known_bad.add(failed[0])
            deselect += ["--deselect", failed[0]]
    finally:
        shutil.rmtree(os.path.join(work, m.name), ignore_errors=True)
    if r.returncode == 0:
        return "survived", ""
    return "error", f"pytest rc {r.returncode}: {(r.stdout + r.stderr).strip()[-300:]}"


def _flaky(pristine: str, test_id: str, timeout, runs: int = 3) -> bool:
    """Whether ``test_id`` fails on the unmutated source in any of ``runs`` runs."""
    for _ in range(runs):
        r = _pytest(pristine, [test_id.removeprefix("tests/")], (), timeout)
        if r.returncode == 1:
            return True
    return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=os.path.join(ROOT, "src"), help="source tree to mutate")
    ap.add_argument("--ref", help="mutate src/ of this git ref instead (git archive)")
    ap.add_argument("--only", action="append", help="run mutations whose name contains this")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--check", action="store_true",
                    help="only report which mutations apply (stale / ambiguous / ok)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per pytest run")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the baseline run (every failure then counts as a kill)")
    args = ap.parse_args(argv)
    muts = [m for m in MUTATIONS if not args.only or any(o in m.name for o in args.only)]
    if args.list:
        for m in muts:
            print(f"{m.name:45} {m.file:28} {' '.join(m.tests)}")
        return 0
    work = tempfile.mkdtemp(prefix="ember_mutation_")
    try:
        pristine = _pristine(args, work)
        if args.check:
            for m in muts:
                path = os.path.join(pristine, "ember", m.file)
                n = open(path).read().count(m.old) if os.path.exists(path) else 0
                print(f"{ {0: 'stale', 1: 'ok'}.get(n, 'ambiguous'):9} {m.name}")
            return 0
        got = _imports_from(pristine)
        if not got.startswith(pristine):
            sys.exit(f"PYTHONPATH does not win over the installed ember: imported {got}")
        tests = {t.split("::")[0] for m in muts for t in m.tests}
        t0 = time.time()
        known_bad = set() if args.no_baseline else baseline(pristine, tests, args.timeout)
        print(f"baseline: {len(known_bad)} tests already failing in {len(tests)} files "
              f"({time.time() - t0:.0f}s); deselected from the mutant runs", flush=True)
        counts: dict = {}
        survivors = []
        for m in muts:
            t0 = time.time()
            status, detail = run_one(m, pristine, work, known_bad, args.timeout)
            counts[status] = counts.get(status, 0) + 1
            if status == "survived":
                survivors.append(m.name)
            print(f"{status:9} {m.name:45} {time.time() - t0:5.0f}s  {detail}", flush=True)
        applied = counts.get("killed", 0) + counts.get("survived", 0)
        print(f"\ntotal {len(muts)}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
              + (f"; kill rate {counts.get('killed', 0)}/{applied}" if applied else ""))
        if survivors:
            print("survivors: " + ", ".join(survivors))
        return 1 if survivors or counts.get("error") else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
