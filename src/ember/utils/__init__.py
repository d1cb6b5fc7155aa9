"""``torch.utils``: the data-loading utilities (``ember.utils.data``)."""
from . import benchmark, data

__all__ = ["benchmark", "data"]
