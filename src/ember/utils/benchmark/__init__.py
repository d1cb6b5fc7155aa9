"""``torch.utils.benchmark``: wall-clock timing of statements (``Timer``, ``Measurement``).

Compare, the fuzzers and Callgrind collection are not built."""
from .utils.common import (
    Measurement,
    TaskSpec,
    ordered_unique,
    select_unit,
    trim_sigfig,
    unit_to_english,
)
from .utils.timer import Language, Timer, timer

__all__ = ["Language", "Measurement", "TaskSpec", "Timer", "ordered_unique", "select_unit",
           "timer", "trim_sigfig", "unit_to_english"]
