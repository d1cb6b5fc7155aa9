"""``torch.utils``: the data-loading utilities (``ember.utils.data``)."""
from . import data

__all__ = ["data"]
