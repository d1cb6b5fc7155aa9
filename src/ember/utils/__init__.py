"""``torch.utils``: the data-loading utilities (``ember.utils.data``)."""
from . import benchmark, data, deterministic, dlpack

__all__ = ["benchmark", "data", "deterministic", "dlpack"]
