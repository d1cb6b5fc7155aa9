"""Which op families return a fresh row-major result, and which keep their input's layout.

NumPy lays out results by its own rules (``order="K"``, axis-moving kernels); PyTorch's kernels
for the ops below allocate either a plain contiguous result (reductions, scans, softmax, gather
and advanced indexing, masked_fill...) or ``empty_like(input)`` (sort, flip). One table here
decides it for every such op, by wrapping the op's forward once at import time
(``ember._layout`` holds the rules themselves). cat/stack apply PyTorch's memory-format rule in
their own forward (``_layout.concat``); clone/contiguous/to and the ``*_like`` factories in
copy.py / creation.py; elementwise ops TensorIterator's rule (``_layout.iter_result``) from
the shared calling conventions (``_dispatch.unary`` / ``binary``, ``pointwise_more.nary`` and
``_layout``); ``interpolate`` its upsample kernels' (``upsample`` below).
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
    # scatters whose structured kernels allocate a plain result (not a clone of self)
    "scatter", "scatter_value", "scatter_add", "scatter_reduce", "index_add", "index_copy",
    "masked_scatter",
))

# PyTorch allocates these with empty_like(self) (or clones self): a dense input's strides are
# kept, an empty input's whatever they are
PRESERVE = frozenset(("flip", "sort", "sort_stable", "nan_to_num", "hardtanh", "index_put",
                      "index_fill", "index_fill_tensor", "put"))

# PyTorch's view scatters copy self with clone_preserve_strides: its exact strides
STRIDED = frozenset(("SelectScatterBackward0", "SliceScatterBackward0",
                     "DiagonalScatterBackward0"))

# elementwise kernels of two operands, laid out by TensorIterator (``_layout.iter_result``)
ITER2 = frozenset(("complex", "polar"))

# PyTorch makes these in the input's suggested memory format (contiguous or channels_last)
SUGGEST = frozenset(("roll", "convolution", "max_pool2d", "max_pool3d", "avg_pool2d",
                     "avg_pool3d", "native_batch_norm", "native_group_norm", "constant_pad_nd",
                     "AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool3DBackward0"))

def _preserve(op) -> None:
    fwd = op.fwd

    def wrapped(*args, _f=fwd):
        return _L.like_input(args[0], _f(*args))
    op.fwd = wrapped


def _strided(op) -> None:
    fwd = op.fwd

    def wrapped(*args, _f=fwd):
        return _L.strided_like(args[0], _f(*args))
    op.fwd = wrapped


def _iter2(op) -> None:
    fwd = op.fwd

    def wrapped(*args, _f=fwd):
        return _L.iter_result(_f(*args), args[:2])
    op.fwd = wrapped


def _suggest(op) -> None:
    fwd = op.fwd
    if op.name == "roll":   # PyTorch's roll of an empty tensor is its clone (strides kept)
        def wrapped(*args, _f=fwd):
            x = args[0]
            if type(x) is np.ndarray and not x.size:
                return _L.like_input(x, _f(*args))
            return _L.in_suggested_format(x, _f(*args))
    elif op.name == "constant_pad_nd":
        # no positive pad: PyTorch returns a clone of the (narrowed) input, in its layout
        def wrapped(x, src, dst, out_shape, *rest, _f=fwd):
            r = _f(x, src, dst, out_shape, *rest)
            if type(x) is np.ndarray and x[tuple(src)].shape == tuple(out_shape):
                return _L.like_input(x[tuple(src)], r)
            return _L.in_suggested_format(x, r)
    else:
        def wrapped(*args, _f=fwd):
            return _L.in_suggested_format(args[0], _f(*args))
    op.fwd = wrapped


def upsample(fwd):
    """``interpolate``'s forward laid out as PyTorch's upsample and adaptive-pool kernels
    allocate: a 4-D / 5-D result in the input's suggested memory format (channels_last(_3d)
    in, channels_last(_3d) out, every mode); a 3-D ``area`` result as ``adaptive_avg_pool1d``
    makes it, a 2-D pool of the input unsqueezed at -2, then squeezed; other 3-D results and
    ``adaptive_avg_pool3d``'s (5-D area to a size other than 1) row-major."""
    def wrapped(x, axes, node):
        r = fwd(x, axes, node)
        if type(x) is not np.ndarray or type(r) is not np.ndarray or r.ndim != x.ndim:
            return r
        if node == "AdaptiveAvgPool3DBackward0" or x.ndim == 3 and node != "SqueezeBackward1":
            return _L.contiguous_np(r)
        if x.ndim != 3:
            return _L.in_suggested_format(x, r)
        x4 = _L._unsqueeze(x, 2)
        st = _L.format_strides(r.shape[:2] + (1,) + r.shape[2:],
                               _L.suggest_format(x4.shape, _L.elem_strides(x4)))
        return _L.restride(r, st[:2] + st[3:])
    return wrapped


def install() -> None:
    """Wrap the forwards of every op named above (once)."""
    from . import nn_activation, nn_conv, nn_norm, nn_pooling, special  # noqa: F401  (ops first)
    for op in ALL_OPS:
        if getattr(op.fwd, "_layout_rule", False):
            continue
        if op.name in CONTIGUOUS:
            _L.contiguous_result(op)
        elif op.name in PRESERVE:
            _preserve(op)
        elif op.name in SUGGEST:
            _suggest(op)
        elif op.name in ITER2:
            _iter2(op)
        elif op.name in STRIDED:
            _strided(op)
        else:
            continue
        op.fwd._layout_rule = True


install()
