"""``torch.signal``: signal-processing helpers (the window functions of ``signal.windows``)."""
from __future__ import annotations

from . import windows  # noqa: F401

__all__ = ["windows"]
