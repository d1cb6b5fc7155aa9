"""The operator namespace: every family module's public functions, re-exported."""
from __future__ import annotations

from . import (
    activation,
    copy,
    creation,
    indexing,
    joining,
    linalg,
    matrix,
    pointwise,
    pointwise_more,
    reduction,
    selection,
    special,
    views,
)

__all__: list = []
for _m in (creation, views, copy, pointwise, pointwise_more, special, reduction, selection,
           activation, joining, indexing, linalg, matrix):
    for _name in _m.__all__:
        globals()[_name] = getattr(_m, _name)
        __all__.append(_name)
from .creation import default_generator  # noqa: E402,F401
