"""``torch.get_num_threads`` / ``set_num_threads`` and the inter-op pair.

ember's intra-op threads are those of the BLAS library NumPy and SciPy load (OpenBLAS): its own
kernels run on the calling thread. ``set_num_threads`` sets the thread count of every OpenBLAS
loaded in the process, found through the process's memory map as threadpoolctl does. ember runs
no inter-op parallel work, so the inter-op count is recorded and reported, as PyTorch's is before
its pool starts.
"""
from __future__ import annotations

import ctypes
import os

__all__ = ["get_num_interop_threads", "get_num_threads", "set_num_interop_threads",
           "set_num_threads"]

# (set, get) entry points of the OpenBLAS builds NumPy/SciPy ship (symbol names by build)
_SYMBOLS = [("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
            ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
            ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
            ("openblas_set_num_threads", "openblas_get_num_threads")]
_STATE: dict = {}


def _blas_libraries() -> list:
    """(set, get) function pairs of every OpenBLAS mapped into this process."""
    import numpy  # noqa: F401  (NumPy's BLAS is loaded by then)
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({ln.split()[-1] for ln in f if "openblas" in ln and "/" in ln})
    except OSError:
        return []
    out = []
    for p in paths:
        try:
            lib = ctypes.CDLL(p)
        except OSError:
            continue
        for s, g in _SYMBOLS:
            if hasattr(lib, s) and hasattr(lib, g):
                out.append((getattr(lib, s), getattr(lib, g)))
                break
    return out


def _check(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def get_num_threads() -> int:
    """``torch.get_num_threads``: the intra-op (BLAS) thread count."""
    if "intra" not in _STATE:
        libs = _blas_libraries()
        _STATE["intra"] = libs[0][1]() if libs else (os.cpu_count() or 1)
    return _STATE["intra"]


def set_num_threads(n: int) -> None:
    """``torch.set_num_threads``: the thread count of NumPy's (and SciPy's) BLAS."""
    n = _check("set_num_threads", n)
    for set_fn, _ in _blas_libraries():
        set_fn(n)
    _STATE["intra"] = n


def get_num_interop_threads() -> int:
    """``torch.get_num_interop_threads`` (ember runs no inter-op parallel work)."""
    return _STATE.get("interop", os.cpu_count() or 1)


def set_num_interop_threads(n: int) -> None:
    """``torch.set_num_interop_threads``: recorded; ember has no inter-op pool to size."""
    _STATE["interop"] = _check("set_num_interop_threads", n)
