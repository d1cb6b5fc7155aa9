"""``ember.nn``: for now the functional namespace (``ember.nn.functional``)."""
from __future__ import annotations

from . import functional

__all__ = ["functional"]
