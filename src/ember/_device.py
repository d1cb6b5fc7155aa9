"""Devices: 'cpu' (NumPy arrays) and 'meta' (shape and dtype only, no data)."""
from __future__ import annotations

__all__ = ["device", "get_default_device", "set_default_device"]


class device:
    """``torch.device``: a device type and an optional index."""

    __slots__ = ("type", "index")

    def __new__(cls, type, index: int | None = None):  # noqa: A002
        if isinstance(type, device):
            return type
        if isinstance(type, int):
            raise RuntimeError("CUDA is not available in ember yet: only 'cpu' and 'meta'")
        if ":" in type:
            type, _, idx = type.partition(":")
            index = int(idx)
        if type not in ("cpu", "meta", "cuda"):
            raise RuntimeError(
                "Expected one of cpu, cuda, meta device type at start of device string: " + type)
        if index is None and type == "cpu":
            cached = _CACHE.get(type)
            if cached is not None:
                return cached
        self = object.__new__(cls)
        self.type = type
        self.index = index
        return self

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


_CACHE: dict = {}
CPU = device("cpu")
_CACHE["cpu"] = CPU
META = device("meta")


_DEFAULT: list = [None]     # set_default_device's device; None is the CPU


def set_default_device(device_) -> None:
    """``torch.set_default_device``: factory functions called without ``device=`` allocate
    there. Naming 'cuda' is allowed (as in PyTorch); the factories then raise PyTorch's
    "not compiled with CUDA" error. ``None`` restores the CPU."""
    _DEFAULT[0] = None if device_ is None else device(device_)


def get_default_device() -> device:
    """``torch.get_default_device``."""
    return CPU if _DEFAULT[0] is None else _DEFAULT[0]


def as_device(d) -> device:
    """Parse a device argument; CUDA is named in the API but has no backend yet."""
    if d is None:
        d = _DEFAULT[0]
        if d is None:
            return CPU
    d = device(d)
    if d.type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    return d


def check_factory_options(layout=None, pin_memory: bool = False) -> None:
    """A factory's ``layout`` and ``pin_memory``, as PyTorch's CPU build takes them: only the
    strided layout exists in ember, and pinned memory needs an accelerator."""
    if pin_memory:
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no "
                           "pinned memory allocator is available on this system.")
    if layout is not None and str(layout) not in ("strided", "torch.strided", "ember.strided"):
        raise NotImplementedError(f"ember has only the strided layout, not {layout}")
