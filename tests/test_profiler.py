"""ember.autograd.profiler: recorded events, the table, traces, and zero cost when inactive."""
from __future__ import annotations

import json
import sqlite3
import threading
import warnings

import numpy as np
import pytest

import ember
from ember._ops._registry import ALL_OPS, Op
from ember.autograd import profiler
from ember.autograd.profiler_util import EventList, FunctionEvent, FunctionEventAvg

EVAL = "autograd::engine::evaluate_function: "


def _names(prof):
    return [e.name for e in prof.function_events]


def _run_mm(**kw):
    x = ember.randn(3, 4, requires_grad=True)
    w = ember.randn(4, 5, requires_grad=True)
    with profiler.profile(**kw) as prof:
        y = x.mm(w)
        with profiler.record_function("label-z"):
            z = (y * 2).sum()
        z.backward()
    return prof


def test_ops_and_backward_nodes_recorded():
    prof = _run_mm()
    names = _names(prof)
    assert names[:4] == ["aten::mm", "label-z", "aten::mul", "aten::sum"]
    for node in ("SumBackward0", "MulBackward0", "MmBackward0"):
        assert node in names
        assert EVAL + node in names
    assert names.count(EVAL + "ember::autograd::AccumulateGrad") == 2
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::mm"].count == 1
    assert avg["ember::autograd::AccumulateGrad"].count == 2
    assert isinstance(avg["aten::mm"], FunctionEventAvg)
    assert all(isinstance(e, FunctionEvent) for e in prof.events())
    # the backward node is the only child of its evaluate_function wrapper, with scope 1
    for e in prof.function_events:
        if e.name == EVAL + "MmBackward0":
            assert [c.name for c in e.cpu_children] == ["MmBackward0"]
            assert e.cpu_children[0].scope == 1


def test_counts_repeated():
    a = ember.randn(2, 2)
    with profiler.profile() as prof:
        for _ in range(5):
            a + a
        a * a
    avg = {e.key: e.count for e in prof.key_averages()}
    assert avg == {"aten::add": 5, "aten::mul": 1}
    assert prof.total_average().count == 6
    assert prof.total_average().key == "Total"


def test_self_vs_total_time():
    prof = _run_mm()
    evs = prof.function_events
    for e in evs:
        assert e.cpu_time_total >= 0
        assert e.self_cpu_time_total <= e.cpu_time_total + 1e-9
        kids = sum(c.cpu_time_total for c in e.cpu_children)
        assert abs(e.self_cpu_time_total - (e.cpu_time_total - kids)) < 1e-6
        for c in e.cpu_children:
            assert c.cpu_parent is e
            assert e.time_range.start <= c.time_range.start <= c.time_range.end \
                <= e.time_range.end
    label = next(e for e in evs if e.name == "label-z")
    assert [c.name for c in label.cpu_children] == ["aten::mul", "aten::sum"]
    assert label.is_user_annotation
    assert abs(prof.self_cpu_time_total - sum(e.cpu_time_total for e in evs
                                              if e.cpu_parent is None)) < 1e-6
    assert abs(prof.self_cpu_time_total - prof.total_average().self_cpu_time_total) < 1e-6


def test_record_shapes():
    prof = _run_mm(record_shapes=True)
    evs = prof.function_events
    mm = next(e for e in evs if e.name == "aten::mm")
    assert mm.input_shapes == [[3, 4], [4, 5]]
    mul = next(e for e in evs if e.name == "aten::mul")
    assert mul.input_shapes == [[3, 5], []]
    node = next(e for e in evs if e.name == "MulBackward0")
    assert node.input_shapes == [[3, 5]]
    grouped = prof.key_averages(group_by_input_shape=True)
    assert any(e.key == "aten::mm" and e.input_shapes == [[3, 4], [4, 5]] for e in grouped)
    assert "Input Shapes" in grouped.table()
    assert all(e.input_shapes == "" for e in prof.key_averages())
    plain = _run_mm()
    assert next(e for e in plain.function_events if e.name == "aten::mm").input_shapes == []


def test_flops_mm_and_bmm():
    a, b = ember.randn(3, 4), ember.randn(4, 5)
    p, q = ember.randn(2, 3, 4), ember.randn(2, 4, 6)
    with profiler.profile(with_flops=True) as prof:
        ember.mm(a, b)
        ember.bmm(p, q)
        ember.addmm(ember.randn(3, 5), a, b)
        ember.dot(ember.randn(7), ember.randn(7))
    fl = {e.name: e.flops for e in prof.function_events}
    assert fl["aten::mm"] == 2 * 3 * 5 * 4
    assert fl["aten::bmm"] == 2 * 2 * 3 * 6 * 4
    assert fl["aten::addmm"] == 2 * 3 * 5 * 4
    assert fl["aten::dot"] == 2 * 7
    assert prof.function_events[0].input_shapes == [[3, 4], [4, 5]]   # implies record_shapes
    t = prof.key_averages().table()
    assert "Total FLOPs" in t
    assert " 120.000" in t
    off = profiler.profile()
    with off:
        ember.mm(a, b)
    assert off.function_events[0].flops == 0
    assert "FLOPs" not in off.key_averages().table()


def test_memory_columns():
    x = ember.randn(100, 10)
    with profiler.profile(profile_memory=True) as prof:
        y = x * 2          # 4000 bytes (float32) kept alive
        z = x + 1
        del z              # freed while profiling: a [memory] event
        x.view(10, 100)    # a view allocates nothing
    evs = prof.function_events
    mul = next(e for e in evs if e.name == "aten::mul")
    assert mul.cpu_memory_usage == 4000 and mul.self_cpu_memory_usage == 4000
    view = next(e for e in evs if e.name == "aten::view")
    assert view.cpu_memory_usage == 0
    freed = [e for e in evs if e.name == "[memory]"]
    assert sum(e.cpu_memory_usage for e in freed) == -4000
    t = prof.key_averages().table(sort_by="self_cpu_memory_usage")
    assert "CPU Mem" in t and "Self CPU Mem" in t and "3.91 KB" in t
    assert y.shape == (100, 10)
    plain = _run_mm()
    assert "CPU Mem" not in plain.key_averages().table()


def test_memory_nested_in_record_function():
    x = ember.randn(10, 10)
    with profiler.profile(profile_memory=True) as prof, profiler.record_function("outer"):
        a = x * 2
        b = a + 1
    outer = next(e for e in prof.function_events if e.name == "outer")
    assert outer.cpu_memory_usage == 800
    assert outer.self_cpu_memory_usage == 0
    assert b.shape == (10, 10)


def test_with_stack():
    x = ember.randn(3, 3)
    with profiler.profile(with_stack=True) as prof:
        x.exp()
    e = prof.function_events[0]
    assert e.stack and "test_profiler.py(" in e.stack[0] and "test_with_stack" in e.stack[0]
    t = prof.table()
    assert "Source Location" in t and "test_profiler.py(" in t
    g = prof.key_averages(group_by_stack_n=1)
    assert g[0].stack == e.stack[:1]


def test_chrome_trace(tmp_path):
    prof = _run_mm(record_shapes=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    evs = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert len(evs) == len(prof.function_events)
    names = {e["name"] for e in evs}
    assert {"aten::mm", "label-z", "MmBackward0"} <= names
    for e in evs:
        assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert isinstance(e["args"], dict)
    mm = next(e for e in evs if e["name"] == "aten::mm")
    assert mm["args"]["Input Dims"] == [[3, 4], [4, 5]] and mm["cat"] == "cpu_op"
    assert next(e for e in evs if e["name"] == "label-z")["cat"] == "user_annotation"


def test_record_function_nesting_and_decorator():
    x = ember.randn(2, 2)

    @profiler.record_function("deco")
    def f(a):
        return a * 2

    with profiler.profile() as prof:
        f(x)
        with profiler.record_function("o", "myargs") as rf:
            assert rf.record is not None
            with profiler.record_function("i"):
                x.sum()
    evs = {e.name: e for e in prof.function_events}
    assert evs["aten::mul"].cpu_parent is evs["deco"]
    assert evs["i"].cpu_parent is evs["o"]
    assert evs["aten::sum"].cpu_parent is evs["i"]
    assert evs["o"].cpu_parent is None and evs["o"].args == "myargs"
    top = prof.key_averages().table(top_level_events_only=True)
    assert "This report only display top-level ops statistics" in top
    rows = [ln.split()[0] for ln in top.splitlines()[4:] if ln and not ln.startswith(("-", "S"))]
    assert rows == ["deco", "o"]
    with profiler.record_function("outside") as r:   # no profile active: nothing recorded
        assert r.record is None


def test_table_format():
    prof = _run_mm()
    t = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5, header="HDR")
    lines = t.splitlines()
    assert lines[0].startswith("=") and lines[1] == "HDR"
    assert lines[2].startswith("-") and lines[4].startswith("-")
    hdr = lines[3].split("  ")
    hdr = [h.strip() for h in hdr if h.strip()]
    assert hdr == ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                   "# of Calls"]
    body = lines[5:-2]
    assert len(body) == 5
    assert lines[-1].startswith("Self CPU time total: ")

    def us(v):
        for suf, k in (("us", 1.0), ("ms", 1e3), ("s", 1e6)):
            if v.endswith(suf):
                return float(v[:-len(suf)]) * k

    totals = [us(ln.split()[-3]) for ln in body]
    assert totals == sorted(totals, reverse=True)
    best = max(prof.key_averages(), key=lambda e: e.cpu_time_total)
    assert best.key[:20] in body[0]
    assert "%" in body[0]
    assert str(prof.function_events) == prof.function_events.table()
    assert prof.table() == prof.function_events.table()
    assert EventList().table() == ""


def test_time_unit_and_formats():
    from ember.autograd.profiler_util import _format_memory, _format_time
    assert _format_time(12.5) == "12.500us"
    assert _format_time(2500.0) == "2.500ms"
    assert _format_time(3.2e6) == "3.200s"
    assert _format_memory(512) == "512 B"
    assert _format_memory(-2048) == "-2.00 KB"
    prof = _run_mm()
    assert "ms  " in prof.key_averages().table(time_unit="ms")


def test_disabled_profile_records_nothing():
    before = [(o.fwd, o.vjp) for o in ALL_OPS]
    p = profiler.profile(enabled=False)
    with p as got:
        assert got is None
        assert all(o.fwd is f for o, (f, _) in zip(ALL_OPS, before))
        ember.randn(2, 2) * 2
    assert len(p.function_events) == 0


def test_zero_overhead_when_inactive():
    before = [(o, o.fwd, o.vjp) for o in ALL_OPS]
    init = Op.__dict__["__init__"]
    from ember.autograd import engine, forward_ad
    hooks = (engine.call_node, engine._leaf_accumulate, forward_ad.apply_jvp)
    x = ember.randn(3, 3, requires_grad=True)
    with profiler.profile():
        assert any(o.fwd is not f for o, f, _ in before)   # swapped while active
        mul = next(o for o in ALL_OPS if o.name == "mul")
        assert getattr(mul.fwd, "_ember_profiler", False)
        (x * x).sum().backward()
    for o, f, v in before:
        assert o.fwd is f and o.vjp is v
    assert Op.__dict__["__init__"] is init
    assert (engine.call_node, engine._leaf_accumulate, forward_ad.apply_jvp) == hooks
    # an exception inside the block restores too
    with pytest.raises(ValueError), profiler.profile():
        raise ValueError("boom")
    assert all(o.fwd is f and o.vjp is v for o, f, v in before)


def test_ops_created_while_active():
    with profiler.profile() as prof:
        op = Op("made_here", lambda a: a + 1, None)
        out = op.fwd(np.ones(3))
    assert "aten::made_here" in _names(prof)
    assert not getattr(op.fwd, "_ember_profiler", False)
    np.testing.assert_array_equal(out, np.full(3, 2.0))
    ALL_OPS.remove(op)


def test_thread_local():
    x = ember.randn(2, 2)
    with profiler.profile() as prof:
        t = threading.Thread(target=lambda: x * x)
        t.start()
        t.join()
        x + x
    assert _names(prof) == ["aten::add"]


def test_custom_function_backward_and_create_graph():
    class F(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = ember.randn(3, requires_grad=True)
    with profiler.profile() as prof:
        F.apply(x).sum().backward()
    evs = {e.name: e for e in prof.function_events}
    assert [c.name for c in evs["FBackward"].cpu_children] == ["aten::mul"]
    with profiler.profile() as prof:
        (g,) = ember.autograd.grad((x * x).sum(), x, create_graph=True)
    node = next(e for e in prof.function_events if e.name == "MulBackward0")
    assert [c.name for c in node.cpu_children] == ["aten::mul", "aten::mul"]
    assert g.requires_grad


def test_constructor_checks():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        p = profiler.profile(use_cuda=True)
        profiler.profile(use_device="foo")
    assert [x.category for x in w] == [FutureWarning, UserWarning, UserWarning]
    assert p.use_device is None
    with pytest.raises(AssertionError, match="Device-only events supported only with Kineto"):
        profiler.profile(use_cpu=False)
    p = profiler.profile()
    with p, pytest.raises(RuntimeError, match="not reentrant"):
        p.__enter__()


def test_emit_nvtx_itt_noop():
    x = ember.randn(2)
    for cls, msg in ((profiler.emit_nvtx, "NVTX"), (profiler.emit_itt, "ITT")):
        cm = cls(record_shapes=True)
        with cm as got:
            assert got is cm
            x * 2
            with pytest.raises(RuntimeError, match=msg + " annotation context manager is not"):
                cm.__enter__()
        with cls(enabled=False) as got:
            assert got is None


def _nvprof_db(path):
    conn = sqlite3.connect(path)
    c = conn.cursor()
    c.execute("CREATE TABLE StringTable (_id_ INTEGER PRIMARY KEY, value TEXT)")
    c.executemany("INSERT INTO StringTable VALUES (?, ?)",
                  [(1, "outer"), (2, "aten::mm"), (3, "gemm_kernel")])
    c.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER (_id_ INTEGER PRIMARY KEY, flags INT, "
              "timestamp INT, id INT, objectKind INT, objectId BLOB, name INT, domain INT)")
    c.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MARKER (timestamp, id, name) VALUES (?,?,?)",
                  [(1000, 1, 1), (2000, 2, 2), (6000, 2, 0), (10000, 1, 0)])
    c.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (_id_ INTEGER PRIMARY KEY, cbid INT, "
              "start INT, end INT, processId INT, threadId INT, correlationId INT, "
              "returnValue INT)")
    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (cbid, start, end, correlationId) "
              "VALUES (211, 2500, 2600, 7)")
    c.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (_id_ INTEGER PRIMARY KEY, "
              "start INT, end INT, correlationId INT, name INT)")
    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (start, end, correlationId, "
              "name) VALUES (3000, 5000, 7, 3)")
    conn.commit()
    conn.close()


def test_load_nvprof(tmp_path):
    path = str(tmp_path / "trace.nvvp")
    _nvprof_db(path)
    evs = profiler.load_nvprof(path)
    assert isinstance(evs, EventList)
    assert [e.name for e in evs] == ["outer", "aten::mm"]
    outer, mm = evs
    assert (outer.time_range.start, outer.time_range.end) == (1.0, 10.0)
    assert (mm.time_range.start, mm.time_range.end) == (2.0, 6.0)
    assert mm.cpu_parent is outer and outer.cpu_children == [mm]
    assert mm.kernels[0].name == "gemm_kernel" and mm.kernels[0].duration == 2.0
    assert mm.device_time_total == 2.0
    assert abs(outer.self_cpu_time_total - 5.0) < 1e-9
    avg = {e.key: e for e in evs.key_averages()}
    assert avg["aten::mm"].count == 1
    assert "aten::mm" in evs.table()
