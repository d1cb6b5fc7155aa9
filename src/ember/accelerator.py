"""``torch.accelerator``: ember runs on the CPU only, so there is no accelerator (what PyTorch's
CPU build answers), and device-picking code such as the tutorials'
``torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"``
runs unchanged."""
from __future__ import annotations

__all__ = ["current_accelerator", "device_count", "is_available"]


def is_available() -> bool:
    """False: no accelerator backend is built into ember."""
    return False


def device_count() -> int:
    """0: no accelerator devices."""
    return 0


def current_accelerator(check_available: bool = False):
    """None, as PyTorch's CPU build returns: there is no accelerator."""
    return None
