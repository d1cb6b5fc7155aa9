"""PyTorch-identical tensor repr (being written)."""
from __future__ import annotations

__all__: list = []


def tensor_repr(t) -> str:
    return f"tensor({t._data.tolist()})"
