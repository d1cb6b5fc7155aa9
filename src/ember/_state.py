"""The thread-local autograd state: grad mode, inference mode, dual level, anomaly mode and the
saved-tensor-hooks stack, all in one object (``STATE``) so each op reads it once."""
from __future__ import annotations

import threading


class _State(threading.local):
    def __init__(self) -> None:
        self.grad = True          # grad mode: operations are recorded
        self.grad_asked = False   # grad mode asked for inside inference mode (which still wins)
        self.inference = False    # inference mode
        self.fw_level = -1        # innermost forward-AD dual level, -1 when none
        self.fw_tensors = []      # weak references to tensors given a tangent at that level
        self.anomaly = False      # anomaly mode (per thread, as DESIGN.md and the issue ask;
        self.anomaly_nan = True   # PyTorch 2.13 itself keeps one process-wide flag)
        self.saved_hooks = []     # stack of (pack, unpack) pairs
        self.saved_hooks_disabled = None  # error message while disabled
        self.callbacks = []       # one list of final callbacks per running backward pass
        self.mutation_ctx = None  # the active allow_mutation_on_saved_tensors context
        self.slow_record = False  # anomaly mode or saved-tensor hooks: recording does more

    def refresh(self) -> None:
        """Recompute ``slow_record`` after anomaly mode or the hooks stack changed."""
        self.slow_record = bool(self.anomaly or self.saved_hooks)

    def set_anomaly(self, mode: bool, check_nan: bool) -> None:
        """Set this thread's anomaly mode."""
        self.anomaly = bool(mode)
        self.anomaly_nan = bool(check_nan)
        self.refresh()


STATE = _State()
