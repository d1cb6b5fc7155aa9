"""``torch.cuda``'s availability queries: ember has no CUDA backend yet, so these answer as
PyTorch's CPU build does and ``"cuda" if torch.cuda.is_available() else "cpu"`` picks the CPU."""
from __future__ import annotations

__all__ = ["device_count", "is_available"]


def is_available() -> bool:
    """False: ember has no CUDA backend."""
    return False


def device_count() -> int:
    """0: no CUDA devices."""
    return 0
