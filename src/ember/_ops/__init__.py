"""The operator namespace: every family module's public functions, re-exported."""
from __future__ import annotations

from . import (
    activation,
    conj,
    copy,
    creation,
    indexing,
    joining,
    linalg,
    linalg_decomp,
    linalg_solve,
    matrix,
    pointwise,
    pointwise_more,
    reduction,
    selection,
    special,
    views,
)

__all__: list = []
for _m in (creation, views, copy, conj, pointwise, pointwise_more, special, reduction, selection,
           activation, joining, indexing, linalg, matrix, linalg_decomp, linalg_solve):
    for _name in _m.__all__:
        globals()[_name] = getattr(_m, _name)
        __all__.append(_name)
from . import misc_ops, scatter_ops, stats_ops  # noqa: E402  (issue 11's missing torch.* ops)

for _m in (misc_ops, scatter_ops, stats_ops):
    globals().update({_name: getattr(_m, _name) for _name in _m.__all__})
    __all__ += _m.__all__
from . import special_more as _sm  # noqa: E402,I001  (torch.special's rest, issue 11)

globals().update({_name: getattr(_sm, _name) for _name in _sm.__all__})
__all__ += _sm.__all__
from . import spectral  # noqa: E402  (window functions, stft, istft)

globals().update({_name: getattr(spectral, _name) for _name in spectral.__all__})
__all__ += spectral.__all__
from . import random  # noqa: E402,I001  (generators, seeds and samplers)
from .random import default_generator  # noqa: E402,F401

globals().update({_name: getattr(random, _name) for _name in random.__all__})
__all__ += random.__all__
from ._uint import install as _install_uint  # noqa: E402  (shell uint kernel gaps)

_install_uint(globals())
from . import aten_private  # noqa: E402  (torch.native_group_norm, _chunk_cat, ...)

globals().update({_name: getattr(aten_private, _name) for _name in aten_private.__all__})
__all__ += aten_private.__all__
from . import aten_nn  # noqa: E402,I001  (torch.conv2d, torch.dropout, ...: ATen's signatures)

globals().update({_name: getattr(aten_nn, _name) for _name in aten_nn.__all__})
__all__ += aten_nn.__all__
from . import api_names  # noqa: E402,I001  (torch.exp_, torch.detach, frombuffer, ...)

globals().update({_name: getattr(api_names, _name) for _name in api_names.__all__})
__all__ += api_names.__all__
from . import (  # noqa: E402
    inference_rules,  # noqa: F401  (what PyTorch records on inference tensors)
    layout_rules,  # noqa: F401  (output layouts of op families, issue 7)
)
