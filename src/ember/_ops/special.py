"""special ops (being written)."""
from __future__ import annotations

__all__: list = []
