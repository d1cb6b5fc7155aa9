"""nn.functional family module (being built)."""
from __future__ import annotations

__all__: list = []
