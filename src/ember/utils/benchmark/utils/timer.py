"""``torch.utils.benchmark.utils.timer``: ``Timer``, built on ``timeit.Timer`` as PyTorch's is.

ember computes on NumPy, with no intra-op thread pool of its own to resize: ``num_threads`` is
recorded and printed (as PyTorch prints it) but changes nothing. There is no accelerator to
synchronise, so the default timer is ``timeit.default_timer``."""
from __future__ import annotations

import enum
import textwrap
import timeit
from typing import Any, Callable

import numpy as np

from . import common

__all__ = ["Timer", "timer", "Language"]


def timer() -> float:
    """The default clock (PyTorch's synchronises an accelerator first; ember has none)."""
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Times a Python statement (``stmt``) after ``setup``, in ``globals`` (``torch`` names
    ember there unless given), with PyTorch's replicate-based methods: ``timeit``,
    ``blocked_autorange``, ``adaptive_autorange``."""

    _timer_cls = timeit.Timer

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict | None = None,
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None,
                 num_threads: int = 1, language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            import ember
            self._globals.setdefault("torch", ember)
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                                 "this code can simply be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("ember has no C++ API: Timer measures Python statements "
                                      "only.")
        else:
            raise ValueError(f"Invalid language `{language}`.")

        def clean(code: str) -> str:
            code = textwrap.dedent(code)
            return (code[1:] if code and code[0] == "\n" else code).rstrip()
        stmt, setup = clean(stmt), clean(setup)
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer,
                                      globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """``timeit.Timer.timeit``: ``stmt`` run ``number`` times (after a warm-up of
        ``number // 100`` runs, at least 2), one measurement."""
        self._timeit(number=max(int(number // 100), 2))
        return common.Measurement(number_per_run=number, raw_times=[self._timeit(number)],
                                  task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(self, number: int, stop_hook, min_run_time: float,
                          max_run_time: float | None = None, callback=None) -> list:
        total, can_stop, times = 0.0, False, []
        while total < min_run_time or not can_stop:
            spent = self._timeit(number)
            times.append(spent)
            total += spent
            if callback:
                callback(number, spent)
            can_stop = stop_hook(times)
            if max_run_time and total > max_run_time:
                break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        # blocks grow tenfold until the timer's overhead is under 0.01% of a block
        overhead = float(np.median([self._timeit(0) for _ in range(5)]))
        number = 1
        while True:
            taken = self._timeit(number)
            if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                break
            if taken > min_run_time or number * 10 > 2147483647:
                break
            number *= 10
        return number

    def blocked_autorange(self, callback: Callable[[int, float], Any] | None = None,
                          min_run_time: float = 0.2) -> common.Measurement:
        """Blocks of ``stmt`` (a block size amortising the timer's cost) timed until
        ``min_run_time`` seconds are spent; ``callback(number, seconds)`` after each block."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time,
                                       callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], Any] | None = None
                           ) -> common.Measurement:
        """Like ``blocked_autorange``, but runs until iqr/median < ``threshold`` (with more than
        3 blocks and ``min_run_time`` spent) or ``max_run_time`` is reached."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times: list) -> bool:
            if len(times) > 3:
                return common.Measurement(number_per_run=number, raw_times=times,
                                          task_spec=self._task_spec
                                          ).meets_confidence(threshold=threshold)
            return False
        times = self._measurement_loop(number, stop_hook, min_run_time, max_run_time,
                                       callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("Timer.collect_callgrind is not built in ember (it needs "
                                  "Valgrind and a C++ toolchain).")
