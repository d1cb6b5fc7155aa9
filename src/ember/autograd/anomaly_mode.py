"""Anomaly detection: forward tracebacks on nodes, and NaN checks on backward outputs."""
from __future__ import annotations

import os
import traceback
import warnings

import numpy as np

from .grad_mode import STATE

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]

# As in PyTorch, anomaly mode is one process-wide flag (not per thread): STATE keeps it on its
# class, shared by every thread.


def is_anomaly_enabled() -> bool:
    return STATE.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    return STATE.anomaly_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """``torch.set_anomaly_enabled``."""
    STATE.set_anomaly(enabled, check_nan)


class detect_anomaly:
    """Context manager (and decorator) turning anomaly mode on for this thread."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self.prev = (False, True)
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self.prev = (STATE.anomaly, STATE.anomaly_nan)
        STATE.set_anomaly(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        STATE.set_anomaly(*self.prev)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with detect_anomaly(self.check_nan):
                return fn(*a, **k)
        return wrapper


class set_detect_anomaly:
    """Set anomaly mode on or off: at once as a call, restored on exit as a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (STATE.anomaly, STATE.anomaly_nan)
        STATE.set_anomaly(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        STATE.set_anomaly(*self.prev)


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def record_trace(node) -> None:
    """Remember where in the forward pass ``node`` was created (up to the caller's frame: the
    frames inside ember itself are left out)."""
    frames = traceback.extract_stack()
    while frames and os.path.abspath(frames[-1].filename).startswith(_PKG):
        frames.pop()
    node._hooks().trace = "".join(traceback.format_list(frames))


def run_checked(node, grads, graph: bool):
    """Run a node's backward; on failure (NaN outputs included when checking), first warn with
    the traceback of the forward call that created the node."""
    from .engine import call_node
    try:
        out = call_node(node, grads, graph)
        if STATE.anomaly_nan:
            for i, g in enumerate(out):
                if g is None:
                    continue
                a = np.asarray(g._data if hasattr(g, "_data") else g)
                if a.dtype.kind in "fc" and np.isnan(a).any():
                    raise RuntimeError(
                        f"Function '{node.name()}' returned nan values in its {i}th output.")
    except Exception:
        h = node._h
        trace = h.trace if h is not None else None
        if trace:
            warnings.warn(
                f"Error detected in {node.name()}. Traceback of forward call that caused the "
                f"error:\n{trace}", UserWarning, stacklevel=2)
        raise
    return out
