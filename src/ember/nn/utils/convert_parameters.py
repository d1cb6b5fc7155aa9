"""Parameters to one flat vector and back (``torch/nn/utils/convert_parameters.py``)."""
from __future__ import annotations

from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters) -> Tensor:
    """Concatenate the flattened parameters (differentiable)."""
    from ... import cat
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Set each parameter's data from consecutive slices of ``vec``."""
    if not isinstance(vec, Tensor):
        from ..modules.module import typename
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
