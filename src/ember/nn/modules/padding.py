"""Padding layers (``torch/nn/modules/padding.py``): Zero, Constant, Reflection, Replication
and Circular padding in 1, 2 and 3 dimensions."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d",
           "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
           "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
           "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]

_sextuple = _ntuple(6, "_sextuple")
_TUP = {1: _pair, 2: _quadruple, 3: _sextuple}


class _PadNd(Module):
    __constants__ = ["padding"]
    _mode = "constant"
    _nd = 1

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _TUP[self._nd](padding)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input: Tensor) -> None:
        n = self._nd + 1
        if input.dim() != n and input.dim() != n + 1:
            raise ValueError(f"expected {n}D or {n + 1}D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _make(base, name: str, nd: int, mode: str | None = None):
    attrs = {"_nd": nd, "__doc__": f"``nn.{name}``."}
    if mode is not None:
        attrs["_mode"] = mode
    cls = type(name, (base,), attrs)
    cls.__module__ = __name__
    return cls


CircularPad1d = _make(_CircularPadNd, "CircularPad1d", 1)
CircularPad2d = _make(_CircularPadNd, "CircularPad2d", 2)
CircularPad3d = _make(_CircularPadNd, "CircularPad3d", 3)
ConstantPad1d = _make(_ConstantPadNd, "ConstantPad1d", 1)
ConstantPad2d = _make(_ConstantPadNd, "ConstantPad2d", 2)
ConstantPad3d = _make(_ConstantPadNd, "ConstantPad3d", 3)
ReflectionPad1d = _make(_PadNd, "ReflectionPad1d", 1, "reflect")
ReflectionPad2d = _make(_PadNd, "ReflectionPad2d", 2, "reflect")
ReflectionPad3d = _make(_PadNd, "ReflectionPad3d", 3, "reflect")
ReplicationPad1d = _make(_PadNd, "ReplicationPad1d", 1, "replicate")
ReplicationPad2d = _make(_PadNd, "ReplicationPad2d", 2, "replicate")
ReplicationPad3d = _make(_PadNd, "ReplicationPad3d", 3, "replicate")
ZeroPad1d = _make(_ZeroPadNd, "ZeroPad1d", 1)
ZeroPad2d = _make(_ZeroPadNd, "ZeroPad2d", 2)
ZeroPad3d = _make(_ZeroPadNd, "ZeroPad3d", 3)
