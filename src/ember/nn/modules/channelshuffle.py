"""ChannelShuffle (``torch/nn/modules/channelshuffle.py``)."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    __constants__ = ["groups"]

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
