"""``ember.nn.utils``: gradient clipping and parameter/vector conversion."""
from __future__ import annotations

from . import rnn  # noqa: F401  (ember.nn.utils.rnn, as torch.nn.utils.rnn)
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters"]
