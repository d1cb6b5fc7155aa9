"""``torch.utils.deterministic``: ``fill_uninitialized_memory``, whether deterministic mode
fills fresh ``empty``-style memory (NaN, or an integer type's maximum)."""
from __future__ import annotations

import sys
import types

from .._settings import DET


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self) -> bool:
        """Whether to fill uninitialized memory with a known value when
        ``use_deterministic_algorithms(True)`` is set (default True)."""
        return DET.fill

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode: bool) -> None:
        if type(mode) is not bool:
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        DET.fill = mode


sys.modules[__name__].__class__ = _Deterministic
