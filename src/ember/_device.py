"""Devices: 'cpu' (NumPy arrays) and 'meta' (shape and dtype only, no data)."""
from __future__ import annotations

__all__ = ["device", "get_default_device", "set_default_device"]


class device:
    """``torch.device``: a device type and an optional index."""

    __slots__ = ("type", "index")

    def __new__(cls, type, index: int | None = None):  # noqa: A002
        if isinstance(type, device):
            return type
        if isinstance(type, int) and not isinstance(type, bool):
            # a bare index names the current accelerator, which a CPU build lacks
            if type < 0:
                raise RuntimeError("Device index must not be negative")
            raise RuntimeError("Cannot access accelerator device when none is available.")
        type, idx = _parse(type)
        if idx is not None:
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was "
                                   f"passed explicitly: {type}:{idx}")
            index = idx
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
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


# the device types c10 knows, in its error message's order
_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
          "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


def _parse(s: str):
    """c10's device-string grammar: a name of letters and underscores, then optionally ':' and
    an index without a leading zero; PyTorch's messages for what does not parse."""
    if not s:
        raise RuntimeError("Device string must not be empty")
    name, sep, idx = s.partition(":")
    ok = name and all(c.isalpha() and c.isascii() or c == "_" for c in name) and (
        not sep or idx.isdigit() and idx.isascii() and (idx == "0" or idx[0] != "0"))
    if not ok:
        raise RuntimeError(f"Invalid device string: '{s}'")
    if name not in _TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of device "
                           f"string: {name}")
    return name, int(idx) if sep else None


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
    if d.type == "cpu":
        return CPU    # (PyTorch's CPU tensors report no index: 'cpu:0' is 'cpu')
    if d.type not in ("cpu", "meta"):
        raise NotImplementedError(f"ember has no '{d.type}' backend: tensors live on the CPU "
                                  "or the meta device")
    return d


def check_factory_options(layout=None, pin_memory: bool = False) -> None:
    """A factory's ``layout`` and ``pin_memory``, as PyTorch's CPU build takes them: only the
    strided layout exists in ember, and pinned memory needs an accelerator."""
    if pin_memory:
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no "
                           "pinned memory allocator is available on this system.")
    if layout is not None and str(layout) not in ("strided", "torch.strided", "ember.strided"):
        raise NotImplementedError(f"ember has only the strided layout, not {layout}")
