"""``ember.nn.functional``: PyTorch's functional namespace.

Every function here is an operator defined in ``ember._ops`` (forward, VJP and JVP together);
this module only gathers them, one family module at a time, as ``torch.nn.functional`` does.
"""
from __future__ import annotations

from .._ops import (
    nn_activation,
    nn_attention,
    nn_conv,
    nn_grid,
    nn_linear_ce,
    nn_loss,
    nn_misc,
    nn_more,
    nn_norm,
    nn_pooling,
    nn_sampling,
)

__all__: list = []
for _m in (nn_activation, nn_conv, nn_pooling, nn_norm, nn_loss, nn_misc, nn_sampling, nn_grid,
           nn_attention, nn_linear_ce, nn_more):
    for _name in _m.__all__:
        globals()[_name] = getattr(_m, _name)
        __all__.append(_name)
