"""``ember.nn``: modules, parameters, initialisers and the functional namespace
(``torch.nn``)."""
from __future__ import annotations

from .._ops.nn_linear_ce import LinearCrossEntropyOptions
from . import functional, init, modules, parameter, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parameter import (
    Buffer,
    Parameter,
    UninitializedBuffer,
    UninitializedParameter,
)

__all__ = ["Buffer", "LinearCrossEntropyOptions", "Parameter", "UninitializedBuffer",
           "UninitializedParameter", "functional", "init", "modules", "parameter", "utils",
           *_modules_all]
