"""``ember.nn.modules``: every layer family, re-exported (``torch.nn.modules``)."""
from __future__ import annotations

import importlib

from .module import Module

_FAMILIES = [
    "container", "linear", "lazy", "activation", "conv", "pooling", "batchnorm", "instancenorm",
    "normalization", "dropout", "sparse", "flatten", "padding", "pixelshuffle", "upsampling",
    "distance", "channelshuffle", "fold", "loss", "rnn", "activation_mha", "transformer",
]
__all__ = ["Module"]
for _fam in _FAMILIES:
    _m = importlib.import_module(f".{_fam}", __name__)
    for _name in _m.__all__:
        globals()[_name] = getattr(_m, _name)
        if _name not in __all__:
            __all__.append(_name)
