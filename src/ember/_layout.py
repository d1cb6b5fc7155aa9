"""Memory formats and PyTorch's output-layout rules, in one place.

PyTorch code can observe strides (``stride()``, ``is_contiguous()``, whether ``view`` works), so
every result's layout follows PyTorch's rule for its op family:

- ops that allocate a plain result (softmax, cumsum, cat of mixed layouts, masked_fill, gather,
  advanced indexing...) return a contiguous tensor: ``contiguous_result`` wraps their forward;
- ``clone`` / ``*_like`` / ``to`` with ``preserve_format`` keep a dense input's strides and
  otherwise lay the copy out in the input's stride order (``preserve_strides``), as
  ``empty_like`` does;
- ``memory_format=channels_last`` (4-D) / ``channels_last_3d`` (5-D) give NHWC / NDHWC strides.

Strides here are in elements, as ``Tensor.stride()`` reports them.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided


class memory_format:
    """``torch.memory_format``: one of four singletons, printed as PyTorch prints them."""

    __slots__ = ("_name",)
    __module__ = "ember"    # pickles as ``ember.channels_last``, printed as ``ember.memory_format``

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return "torch." + self._name

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

# PyTorch's NHWC order, innermost first: C, W, H, N (and C, W, H, D, N in 5-D)
_CL_ORDER = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}
_CL_RANK = {channels_last: 4, channels_last_3d: 5}


def check_format(memory_format, fn: str = "contiguous"):
    """The memory format an argument names (None means the op's default); PyTorch's TypeError
    for anything that is not a ``torch.memory_format``."""
    if memory_format is None or type(memory_format) is globals()["memory_format"]:
        return memory_format
    raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not "
                    f"{type(memory_format).__name__}")


def _rank_check(mf, ndim: int) -> None:
    want = _CL_RANK.get(mf)
    if want is not None and ndim != want:
        raise RuntimeError(f"required rank {want} tensor to use {mf._name} format")


def contiguous_strides(shape) -> tuple:
    """Row-major strides, a size-0 or size-1 dim counting as 1 (``c10::contiguous_strides``)."""
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def format_strides(shape, mf) -> tuple:
    """The strides ``empty(shape, memory_format=mf)`` gives (PyTorch's
    ``get_channels_last_strides_2d/3d``: sizes multiply without a max with 1)."""
    order = _CL_ORDER.get(len(shape)) if mf in _CL_RANK else None
    if order is None:
        _rank_check(mf, len(shape))
        return contiguous_strides(shape)
    _rank_check(mf, len(shape))
    strides = [0] * len(shape)
    acc = 1
    for d in order:
        strides[d] = acc
        acc *= shape[d]
    return tuple(strides)


def is_contiguous_as(shape, strides, mf) -> bool:
    """``is_contiguous(memory_format=mf)``: the strides of dims of size > 1 are ``mf``'s."""
    if mf in _CL_RANK:
        order = _CL_ORDER.get(len(shape))
        if order is None or len(shape) != _CL_RANK[mf]:
            return False
    else:
        order = range(len(shape) - 1, -1, -1)
        if 0 in shape:      # PyTorch: any empty tensor is contiguous (not so channels_last)
            return True
    expected = 1
    for d in order:
        n = shape[d]
        if n != 1:
            if strides[d] != expected:
                return False
            expected *= n
    return True


def _cl_like(shape, strides, order) -> bool:
    """PyTorch's ``is_channels_last_strides_2d/3d``: the strides run in NHWC order (with its
    tie-breaks for size-1 dims, which default to NCHW)."""
    lo = 0
    if strides[1] == 0:
        return False
    for d in order:
        if shape[d] == 0 or strides[d] < lo:
            return False
        if d == 0 and lo == strides[1]:
            return False
        lo = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def suggest_format(shape, strides):
    """``Tensor.suggest_memory_format()``: channels_last(_3d) when the strides look NHWC."""
    order = _CL_ORDER.get(len(shape))
    if order is not None and _cl_like(shape, strides, order):
        return channels_last if len(shape) == 4 else channels_last_3d
    return contiguous_format


def dense_strides(shape, strides) -> tuple:
    """PyTorch's ``infer_dense_strides``: a dense layout in the same stride order as
    ``strides`` (an insertion sort where a 0 stride is ambiguous, equal strides put the
    smaller dim inside)."""
    nd = len(shape)
    perm = list(range(nd - 1, -1, -1))
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            a, b = perm[d0], perm[d1]
            sa, sb = strides[a], strides[b]
            if sa == 0 or sb == 0:
                continue
            if sa > sb or (sa == sb and shape[a] > shape[b]):
                perm[d0], perm[d1] = b, a
                d1 = d0
            elif sa < sb:
                break
    out = [0] * nd
    acc = 1
    for d in perm:
        out[d] = acc
        acc *= max(shape[d], 1)
    return tuple(out)


def is_dense(shape, strides) -> bool:
    """``is_non_overlapping_and_dense``: sorted by stride (size-1 dims ignored) the strides are
    a contiguous layout's."""
    expected = 1
    for st, n in sorted((st, n) for st, n in zip(strides, shape) if n >= 2):
        if st != expected:
            return False
        expected *= n
    return True


def elem_strides(a: np.ndarray) -> tuple:
    isz = a.itemsize
    return tuple(s // isz for s in a.strides)


def empty_np(shape, strides, dtype) -> np.ndarray:
    """A zero-filled array with exactly these element strides (PyTorch's ``empty_strided``:
    the buffer holds ``1 + sum((n - 1) * stride)`` elements)."""
    shape = tuple(int(s) for s in shape)
    dt = np.dtype(dtype)
    if 0 in shape:
        n = 0
    else:
        n = 1 + sum((s - 1) * st for s, st in zip(shape, strides))
    buf = np.zeros(max(n, 1), dt)
    isz = dt.itemsize
    # the ndarray constructor over the buffer: NumPy's as_strided costs several microseconds
    return np.ndarray(shape, dt, buf, 0, tuple(int(st) * isz for st in strides))


def copy_to_strides(x: np.ndarray, strides, dtype=None) -> np.ndarray:
    """A copy of ``x`` laid out with ``strides`` (elements)."""
    out = empty_np(x.shape, strides, dtype if dtype is not None else x.dtype)
    np.copyto(out, x, casting="unsafe")
    return out


def preserve_strides(shape, strides) -> tuple:
    """``empty_like(x)``'s strides under ``preserve_format``: ``x``'s own when dense, else
    a dense layout in ``x``'s stride order."""
    if is_dense(shape, strides):
        return tuple(strides)
    return dense_strides(shape, strides)


def like_strides(shape, strides, mf) -> tuple:
    """The strides of a ``*_like`` / ``clone`` / ``to`` result for memory format ``mf``."""
    if mf is None or mf is preserve_format:
        return preserve_strides(shape, strides)
    return format_strides(shape, mf)


def copy_like(x: np.ndarray, mf=None, dtype=None) -> np.ndarray:
    """A copy of ``x`` in the layout PyTorch's ``clone(memory_format=mf)`` gives."""
    st = elem_strides(x)
    want = like_strides(x.shape, st, mf)
    if x.flags.c_contiguous and want == contiguous_strides(x.shape):
        return np.array(x, dtype=dtype, copy=True, order="C")
    return copy_to_strides(x, want, dtype)


_C_STRIDES: dict = {}


def contiguous_np(x):
    """``x`` as a row-major ndarray with PyTorch's strides for size-1 dims too (NumPy calls
    an array C-contiguous whatever those strides are); other array kinds pass through."""
    if type(x) is not np.ndarray:
        return x
    if not x.flags.c_contiguous:
        return np.ascontiguousarray(x)
    if x.ndim > 1 and 1 in x.shape:
        key = (x.shape, x.itemsize)
        want = _C_STRIDES.get(key)
        if want is None:   # (remembered per shape: computing them cost more than the check)
            if len(_C_STRIDES) > 4096:
                _C_STRIDES.clear()
            want = _C_STRIDES[key] = tuple(s * x.itemsize for s in contiguous_strides(x.shape))
        if x.strides != want:   # same memory, PyTorch's strides (cheaper than as_strided)
            return np.ndarray(x.shape, x.dtype, x, 0, want)
    return x


def contiguous_result(*ops) -> None:
    """Make each op's forward return row-major arrays, as PyTorch's kernels for these ops
    allocate a plain contiguous result whatever their inputs' strides."""
    for op in ops:
        fwd = op.fwd
        if op.n_out == 1:
            def wrapped(*args, _f=fwd):
                r = _f(*args)
                if type(r) is np.ndarray and (not r.flags.c_contiguous or 1 in r.shape):
                    return contiguous_np(r)
                return r
        else:
            def wrapped(*args, _f=fwd):
                return tuple(contiguous_np(r) for r in _f(*args))
        op.fwd = wrapped


def concat(parts, axis: int) -> np.ndarray:
    """``np.concatenate`` laid out as PyTorch's ``cat``: in the inputs' memory format when
    they all suggest the same one (channels_last...), else row-major."""
    p0 = parts[0]
    fmt = contiguous_format
    if p0.ndim not in _CL_ORDER or all(a.flags.c_contiguous and a.shape[1] != 1
                                       for a in parts):
        # row-major inputs (a size-1 channel dim aside) never suggest channels_last, and
        # other ranks have no other memory format: the result is row-major
        r = np.concatenate(parts, axis=axis)
        return r if r.flags.c_contiguous and 1 not in r.shape else contiguous_np(r)
    if p0.ndim in _CL_ORDER:
        fmts = {suggest_format(a.shape, elem_strides(a)) for a in parts}
        if len(fmts) == 1:
            fmt = fmts.pop()
    shape = list(p0.shape)
    shape[axis] = sum(a.shape[axis] for a in parts)
    out = empty_np(shape, format_strides(shape, fmt), p0.dtype)
    np.concatenate(parts, axis=axis, out=out)
    return out


def stack(parts, axis: int) -> np.ndarray:
    """``np.stack`` laid out as PyTorch's ``stack``: ``cat`` along ``axis`` then a view that
    splits it (so channels_last inputs give a channels_last-like result), or ``cat`` of the
    inputs unsqueezed when ``axis`` is past their last dim."""
    p0 = parts[0]
    if axis < p0.ndim:
        r = concat(parts, axis)
        return r.reshape(p0.shape[:axis] + (len(parts),) + p0.shape[axis:])
    if p0.ndim + 1 not in _CL_ORDER:
        return concat([np.expand_dims(a, axis) for a in parts], axis)
    return concat([_unsqueeze(a, axis) for a in parts], axis)


def _unsqueeze(a: np.ndarray, axis: int) -> np.ndarray:
    # PyTorch's unsqueeze stride (the next dim's extent), which its memory-format guess reads
    st = list(a.strides)
    st.insert(axis, st[axis] * a.shape[axis] if axis < a.ndim else a.itemsize)
    shape = a.shape[:axis] + (1,) + a.shape[axis:]
    return as_strided(a, shape, st)


def in_suggested_format(x, r):
    """``r`` (an array or a tuple of them) in the memory format ``x`` suggests, as PyTorch's
    convolution, pooling and batch_norm kernels allocate their outputs; only results shaped
    like ``x`` (N, C, ...) take it, not saved statistics."""
    if type(x) is not np.ndarray:
        return r
    fmt = suggest_format(x.shape, elem_strides(x))
    if isinstance(r, tuple):
        return tuple(_in_format(a, fmt, x.ndim) for a in r)
    return _in_format(r, fmt, x.ndim)


def _in_format(r, fmt, ndim: int):
    if type(r) is not np.ndarray or r.ndim != ndim:
        return r
    if fmt is contiguous_format:
        return contiguous_np(r)
    if elem_strides(r) == format_strides(r.shape, fmt):
        return r
    return copy_to_strides(r, format_strides(r.shape, fmt))


def like_input(x, r):
    """``r`` (an array or a tuple of them, shaped like ``x``) laid out as
    ``empty_like(x)``: a dense ``x``'s strides, else a dense layout in its stride order."""
    if type(x) is not np.ndarray or (x.flags.c_contiguous and (x.ndim < 2 or 1 not in x.shape)):
        return r
    st = preserve_strides(x.shape, elem_strides(x))
    if isinstance(r, tuple):
        return tuple(copy_to_strides(a, st) for a in r)
    return copy_to_strides(r, st)
