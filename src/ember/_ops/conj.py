"""PyTorch's lazy conjugation: ``conj()`` of a complex tensor is a view with the conjugate bit
set (it shares memory; reads see conjugated values; writes store the conjugate), and ``.imag``
of such a view is a view with the negative bit. ``resolve_conj`` / ``resolve_neg`` materialise;
``conj_physical`` always computes. The tensors themselves are in ``_tensor`` (``_Lazy``).
"""
from __future__ import annotations

import numpy as np

from .. import _layout as _L
from .._tensor import CONJ_BIT, NEG_BIT, Tensor, lazy_bits, raw_data
from ._dispatch import inplace, unary
from ._registry import Op, apply, method

__all__ = ["conj", "conj_physical", "conj_physical_", "is_conj", "is_neg", "resolve_conj",
           "resolve_neg"]


CONJ = Op("conj", lambda x: x.view(), lambda ns, g, need: (ns.conj(g),), linear=True,
          is_view=True, node="ConjBackward0")
CONJ.flips = CONJ_BIT
CONJ.replays = True
NEG_VIEW = Op("neg_view", lambda x: x.view(), lambda ns, g, need: (-g,), linear=True,
              is_view=True, node="NegViewBackward0")
NEG_VIEW.flips = NEG_BIT
NEG_VIEW.replays = True
# (PyTorch's _conj_physical writes into empty_like(self): a dense input's strides are kept)
CONJ_PHYSICAL = Op("conj_physical", lambda x: _L.like_input(x, np.conj(x)),
                   lambda ns, g, need: (ns.conj(g),), linear=True)
# the in-place form records its own node, also on real tensors (where the values stay)
CONJ_PHYSICAL_ = Op("conj_physical_", np.conj, lambda ns, g, need: (ns.conj(g),), linear=True,
                    node="ConjPhysicalBackward1")


def conj(input: Tensor) -> Tensor:
    """``torch.conj``: a real tensor itself; a complex one's view with the conjugate bit
    flipped (``conj().conj()`` is a plain view of the same memory)."""
    if not input.is_complex():
        return input
    if type(raw_data(input)) is not np.ndarray:   # meta and batched arrays: no memory to share
        return unary(CONJ_PHYSICAL, input)
    return apply(CONJ, (input,))


def neg_view(input: Tensor) -> Tensor:
    """``Tensor._neg_view``: a view with the negative bit flipped."""
    return apply(NEG_VIEW, (input,))


def conj_physical(input: Tensor) -> Tensor:
    """``torch.conj_physical``: the conjugated values in new memory (a real tensor itself)."""
    if not input.is_complex():
        return input
    return unary(CONJ_PHYSICAL, input)


def conj_physical_(input: Tensor) -> Tensor:
    """``Tensor.conj_physical_``: conjugate the values in place (on a real tensor too: the
    version bumps and the op is recorded, as in PyTorch)."""
    return inplace(CONJ_PHYSICAL_, input)


def is_conj(input: Tensor) -> bool:
    """``torch.is_conj``: whether the conjugate bit is set."""
    return bool(lazy_bits(input) & CONJ_BIT)


def is_neg(input: Tensor) -> bool:
    """``torch.is_neg``: whether the negative bit is set."""
    return bool(lazy_bits(input) & NEG_BIT)


def resolve_conj(input: Tensor) -> Tensor:
    """``torch.resolve_conj``: ``input`` itself, or a copy of its values without the bit
    (recorded as a clone, as PyTorch does)."""
    return input.clone() if is_conj(input) else input


def resolve_neg(input: Tensor) -> Tensor:
    """``torch.resolve_neg``: as ``resolve_conj``, for the negative bit."""
    return input.clone() if is_neg(input) else input


for _name, _fn in [("conj", conj), ("conj_physical", conj_physical),
                   ("conj_physical_", conj_physical_), ("is_conj", is_conj), ("is_neg", is_neg),
                   ("resolve_conj", resolve_conj), ("resolve_neg", resolve_neg),
                   ("_neg_view", neg_view)]:
    method(_name, _fn)
