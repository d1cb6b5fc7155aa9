"""The thread-local autograd state: grad mode, inference mode, dual level, anomaly mode and the
saved-tensor-hooks stack, all in one object (``STATE``) so each op reads it once."""
from __future__ import annotations

import threading


class _State(threading.local):
    # anomaly mode is process-wide in PyTorch (a static flag), so it lives on the class; the
    # rest is per thread. ``slow_record`` falls back to the class value (anomaly mode) unless
    # this thread has saved-tensor hooks.
    anomaly = False
    anomaly_nan = True
    slow_record = False

    def __init__(self) -> None:
        self.grad = True          # grad mode
        self.inference = False    # inference mode
        self.fw_level = -1        # innermost forward-AD dual level, -1 when none
        self.fw_tensors = []      # weak references to tensors given a tangent at that level
        self.saved_hooks = []     # stack of (pack, unpack) pairs
        self.saved_hooks_disabled = None  # error message while disabled
        self.callbacks = []       # one list of final callbacks per running backward pass
        self.mutation_ctx = None  # the active allow_mutation_on_saved_tensors context

    def refresh(self) -> None:
        """Recompute ``slow_record`` after anomaly mode or the hooks stack changed."""
        if self.saved_hooks:
            self.slow_record = True   # anomaly mode or saved-tensor hooks: recording does more
        else:
            self.__dict__.pop("slow_record", None)

    @classmethod
    def set_anomaly(cls, mode: bool, check_nan: bool) -> None:
        """Set anomaly mode for every thread, as PyTorch's process-wide flag."""
        cls.anomaly = bool(mode)
        cls.anomaly_nan = bool(check_nan)
        cls.slow_record = bool(mode)


STATE = _State()
