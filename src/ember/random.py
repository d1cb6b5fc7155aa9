"""``ember.random`` (``torch.random``): the default generator's seed and state, and
``fork_rng``."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ._ops.random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = [
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
    "thread_safe_generator",
]


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type=None) -> Iterator[None]:
    """``torch.random.fork_rng``: the default generator's state is restored on exit (ember has
    only the CPU generator, so ``devices`` and ``device_type`` select nothing more)."""
    if device_type == "meta" or not enabled:
        yield
        return
    if devices is not None:
        devices = list(devices)   # a generator argument is consumed, as PyTorch does
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def thread_safe_generator():
    """``torch.random.thread_safe_generator``: a DataLoader thread worker's own generator, or
    None (the default generator) in the main process and in process workers."""
    from .utils.data import get_worker_info
    info = get_worker_info()
    if info is not None and getattr(info, "worker_method", None) == "thread" and getattr(
            info, "rng", None) is not None:
        return info.rng.torch_generator
    return None
