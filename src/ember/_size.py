"""``ember.Size``: the tuple subclass that ``Tensor.shape`` returns."""
from __future__ import annotations

__all__ = ["Size"]


class Size(tuple):
    """A tensor shape, mirroring ``torch.Size``."""

    def __repr__(self) -> str:
        return f"ember.Size([{', '.join(str(s) for s in self)}])"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, other))
