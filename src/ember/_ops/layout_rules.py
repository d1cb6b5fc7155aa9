"""Which op families return a fresh row-major result, and which keep their input's layout.

NumPy lays out results by its own rules (``order="K"``, axis-moving kernels); PyTorch's kernels
for the ops below allocate either a plain contiguous result (reductions, scans, softmax, gather
and advanced indexing, masked_fill...) or ``empty_like(input)`` (sort, flip). One table here
decides it for every such op, by wrapping the op's forward once at import time
(``ember._layout`` holds the rules themselves). cat/stack apply PyTorch's memory-format rule in
their own forward (``_layout.concat``); clone/contiguous/to and the ``*_like`` factories in
copy.py / creation.py.
"""
from __future__ import annotations

import numpy as np

from .. import _layout as _L
from ._registry import ALL_OPS

# PyTorch allocates these results with at::empty(sizes) (or resize_ of an empty tensor)
CONTIGUOUS = frozenset((
    # reductions (TensorIterator reductions allocate the result contiguous, keepdim or not)
    "sum", "sum_dim", "mean", "mean_dim", "prod", "prod_dim", "amax", "amin", "aminmax",
    "max_dim", "min_dim", "var", "std", "var_mean", "std_mean", "logsumexp", "nansum",
    "median_dim", "nanmedian_dim", "mode", "linalg_vector_norm", "kthvalue", "topk",
    # scans and the softmax family
    "cumsum", "cumprod", "logcumsumexp", "cummax", "cummin", "softmax", "log_softmax",
    # indexing and masking that builds a new tensor
    "index_select", "gather", "masked_fill", "masked_fill_tensor", "masked_select",
    "take", "tril", "triu", "repeat",
    # normalization over the last dims
    "native_layer_norm", "rms_norm",
))

# PyTorch allocates these with empty_like(self): a dense input's strides are kept
PRESERVE = frozenset(("flip", "sort", "sort_stable"))

# PyTorch makes these in the input's suggested memory format (contiguous or channels_last)
SUGGEST = frozenset(("roll", "convolution", "max_pool2d", "max_pool3d", "avg_pool2d",
                     "avg_pool3d", "native_batch_norm", "native_group_norm", "constant_pad_nd",
                     "AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool3DBackward0"))

# elementwise ops of several operands that NumPy evaluates in more than one step
ELEMENTWISE = frozenset(("addcdiv", "lerp", "lerp_t", "clamp_t", "where"))


def _preserve(op) -> None:
    fwd = op.fwd

    def wrapped(*args, _f=fwd):
        return _L.like_input(args[0], _f(*args))
    op.fwd = wrapped


def _elementwise(op) -> None:
    """TensorIterator's layout for ops NumPy computes in steps (a row-major temporary can
    lose the inputs' order): the result follows the operands' strides."""
    fwd = op.fwd

    def wrapped(*args, _f=fwd):
        r = _f(*args)
        if type(r) is not np.ndarray or r.ndim < 2:
            return r
        if r.flags.c_contiguous:
            shape = r.shape
            for a in args:
                if type(a) is np.ndarray and a.ndim and (a.shape != shape
                                                         or not a.flags.c_contiguous):
                    break
            else:
                return r     # row-major operands of the result's shape: row-major result
        from ._dispatch import iter_layout
        return iter_layout(r, [a for a in args if type(a) is np.ndarray and a.ndim])
    op.fwd = wrapped


def _suggest(op) -> None:
    fwd = op.fwd

    def wrapped(*args, _f=fwd):
        return _L.in_suggested_format(args[0], _f(*args))
    op.fwd = wrapped


def install() -> None:
    """Wrap the forwards of every op named above (once)."""
    from . import nn_conv, nn_norm, nn_pooling  # noqa: F401  (define their ops first)
    for op in ALL_OPS:
        if getattr(op.fwd, "_layout_rule", False):
            continue
        if op.name in CONTIGUOUS:
            _L.contiguous_result(op)
        elif op.name in PRESERVE:
            _preserve(op)
        elif op.name in SUGGEST:
            _suggest(op)
        elif op.name in ELEMENTWISE:
            _elementwise(op)
        else:
            continue
        op.fwd._layout_rule = True


install()
