"""Allocator tuning: keep freed large buffers in the process heap (glibc only).

A training step frees and re-allocates the same multi-megabyte arrays every iteration. By
default glibc hands such blocks back to the OS and the next step pays page faults to get them
again, which costs more than the arithmetic for an MLP step. Raising the mmap and trim
thresholds keeps them for reuse (PyTorch gets the same effect from its own allocator). Set
``EMBER_MALLOC_TUNING=0`` in the environment to leave the allocator alone.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def tune_malloc() -> bool:
    """Apply the tuning once; True when it took effect."""
    if os.environ.get("EMBER_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    ok = mallopt(_M_MMAP_THRESHOLD, 32 * 1024 * 1024)
    ok &= mallopt(_M_TRIM_THRESHOLD, 512 * 1024 * 1024)
    return bool(ok)
