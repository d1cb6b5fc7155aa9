"""What PyTorch records for an op whose inputs are all inference tensors, one requiring grad,
called outside inference mode. Its autograd kernel is skipped (inference tensors carry no
autograd key), but some kernels write their result through another op that does record: sort
copies its values (CopyBackwards), reductions of a 0-dim tensor fill theirs (FillBackward3),
and kernels built on an ``out=`` call refuse (their error names that call: ``mean`` is built on
``sum``'s). Each rule maps the inputs to the recorded op, the refusing call's name, or None.
"""
from __future__ import annotations

from .._tensor import Tensor
from .copy import COPY, FILL_T
from .joining import FLIP
from .pointwise import ABS, POW_ST
from .reduction import (
    CUMPROD,
    CUMSUM,
    LOGSUMEXP,
    MAX_DIM,
    MEAN,
    MEAN_DIM,
    MIN_DIM,
    STD,
    VAR,
)
from .selection import (
    CUMMAX,
    CUMMIN,
    KTHVALUE,
    LOGCUMSUMEXP,
    MEDIAN_DIM,
    MODE,
    NANMEDIAN_DIM,
    SORT,
    SORT_STABLE,
    TOPK,
)
from .special import DEG2RAD, NAN_TO_NUM, RAD2DEG
from .special_more import FREXP


def _always(result):
    return lambda inputs, params: result


def _on_0dim(result):
    return lambda inputs, params: result if inputs[0]._data.ndim == 0 else None


def _full_reduction(inputs, params):
    """std / var: the kernel reducing every element goes through ``sum(out=)``."""
    dims = params[0]
    ndim = inputs[0]._data.ndim
    return "sum" if ndim <= 1 or dims is None or len(set(dims)) == ndim else None


def _flip_nothing(inputs, params):
    """flip over dims of size 1 (or of a 0-dim tensor) is a copy."""
    shape = inputs[0]._data.shape
    return COPY if not shape or all(shape[d] <= 1 for d in params[0]) else None


def _scalar_base_pow(inputs, params):
    """pow(Scalar, Tensor) is built on its out= call, except with a base of 1 (ones)."""
    base = inputs[0]
    if isinstance(base, Tensor):
        base = base.item() if base._data.ndim == 0 else None
    return None if base == 1 else "pow"


for _op, _rule in [
    (MEAN, _always("sum")), (MEAN_DIM, _always("sum")),
    (VAR, _full_reduction), (STD, _full_reduction),
    (LOGSUMEXP, _always("logsumexp")), (KTHVALUE, _always("kthvalue")),
    (CUMMAX, _always("cummax")), (CUMMIN, _always("cummin")),
    (MEDIAN_DIM, _always("median")), (NANMEDIAN_DIM, _always("nanmedian")),
    *[(o, _on_0dim(FILL_T)) for o in (MAX_DIM, MIN_DIM, MODE, CUMSUM, CUMPROD, LOGCUMSUMEXP)],
    (SORT, _always(COPY)), (SORT_STABLE, _always(COPY)), (TOPK, _on_0dim(COPY)),
    (FLIP, _flip_nothing), (POW_ST, _scalar_base_pow),
    # elementwise kernels written as their own out= call on an empty result
    *[(o, _always(o.name)) for o in (ABS, DEG2RAD, RAD2DEG, NAN_TO_NUM, FREXP)],
]:
    _op.inference_via = _rule
