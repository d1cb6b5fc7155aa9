"""ember.utils.benchmark: Timer and Measurement against torch.utils.benchmark (formats,
statistics, errors; measured times differ, so they are normalised away)."""
import re

import pytest
import torch
import torch.utils.benchmark as TB

import ember
import ember.utils.benchmark as EB


def _norm(s: str) -> str:
    s = re.sub(r"0x[0-9a-f]+", "ADDR", s)
    s = re.sub(r"\d+\.\d+", "N", s)
    return s.replace("torch.", "ember.")


def _measurements(B):
    spec = B.TaskSpec
    return [
        B.Measurement(10, [1e-5, 2e-5, 3e-5, 1.5e-5, 9e-5], spec("a", "pass")),
        B.Measurement(1, [2.5], spec("a\nb", "s", sub_label="q", description="d\ne")),
        B.Measurement(100, [1.02e-3, 1.0e-3, 1.01e-3, 1.0e-3, 1.03e-3, 0.99e-3],
                      spec("f(x)", "x = 1\ny = 2", label="lbl", sub_label="sub", num_threads=4)),
        B.Measurement(1000, [5e-4, 6e-4, 7e-4], spec("g()", "pass", description="n=3")),
        B.Measurement(1, [1e-4, 1.4e-4, 1.1e-4, 1.2e-4], spec("h()", "pass", env="e")),
    ]


def test_measurement_repr_and_statistics_match_torch():
    for me, mt in zip(_measurements(EB), _measurements(TB)):
        assert repr(me).replace("ember.", "torch.") == repr(mt).replace(
            hex(id(mt)), hex(id(me)))
        for name in ("mean", "median", "iqr", "times", "number_per_run", "raw_times",
                     "significant_figures", "has_warnings", "title", "env", "as_row_name",
                     "stmt", "setup", "label", "sub_label", "description", "num_threads"):
            assert getattr(me, name) == pytest.approx(getattr(mt, name)), name
        assert me.meets_confidence(0.5) == mt.meets_confidence(0.5)
    (me,), (mt,) = (EB.Measurement.merge(_measurements(EB)[:1] * 2),
                    TB.Measurement.merge(_measurements(TB)[:1] * 2))
    assert (me.number_per_run, me.raw_times) == (mt.number_per_run, mt.raw_times)


def test_unit_helpers_match_torch():
    for v in (1e-9, 5e-7, 1e-6, 1e-3, 0.999e-3, 2.0, 3e-8):
        assert EB.select_unit(v) == TB.select_unit(v), v
    for v in (3.14159, 0.0012345, 123456.0, 9.99e-6):
        for n in (1, 2, 3):
            assert EB.trim_sigfig(v, n) == TB.trim_sigfig(v, n)
    assert [EB.unit_to_english(u) for u in ("ns", "us", "ms", "s")] == \
        [TB.unit_to_english(u) for u in ("ns", "us", "ms", "s")]
    assert EB.ordered_unique([3, 1, 3, 2, 1]) == TB.ordered_unique([3, 1, 3, 2, 1])


def test_timeit_runs_the_statement_and_prints_like_torch():
    def run(B, M):
        calls = []
        t = B.Timer("f(x)", setup="x = torch.ones(3)", globals={"f": calls.append},
                    label="append", sub_label="list", description="n=3")
        m = t.timeit(200)
        # warm-up of max(number // 100, 2) runs, then the measured ones; torch is in globals
        assert len(calls) == 202 and isinstance(calls[0], M.Tensor)
        assert m.number_per_run == 200 and len(m.raw_times) == 1 and m.raw_times[0] > 0
        return _norm(repr(m))
    assert run(EB, ember) == run(TB, torch)


def test_blocked_and_adaptive_autorange():
    for B in (EB, TB):
        seen = []
        m = B.Timer("y = x * 2", "x = 3.0", num_threads=2).blocked_autorange(
            callback=lambda n, s: seen.append((n, s)), min_run_time=0.01)
        assert sum(m.raw_times) >= 0.01 and len(m.raw_times) == len(seen) >= 1
        assert all(n == m.number_per_run for n, _ in seen)
        assert str(m.number_per_run).strip("0") == "1"   # block sizes are powers of ten
        assert "2 threads" in repr(m) and "setup: x = 3.0" in repr(m)
        m = B.Timer("pass").adaptive_autorange(min_run_time=0.001, max_run_time=0.02)
        assert len(m.raw_times) >= 1 and m.median > 0


@pytest.mark.parametrize("kw", [dict(stmt=1), dict(global_setup="x"), dict(language="go")])
def test_timer_errors_match_torch(kw):
    def err(B):
        with pytest.raises(Exception) as e:
            B.Timer(**kw)
        return type(e.value), str(e.value)
    assert err(EB) == err(TB)
    with pytest.raises(NotImplementedError):
        EB.Timer().repeat()
    with pytest.raises(NotImplementedError, match="C\\+\\+"):
        EB.Timer(language="cpp")
