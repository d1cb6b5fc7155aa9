"""Memory formats and PyTorch's output-layout rules, in one place.

PyTorch code can observe strides (``stride()``, ``is_contiguous()``, whether ``view`` works), so
every result's layout follows PyTorch's rule for its op family:

- ops that allocate a plain result (softmax, cumsum, cat of mixed layouts, masked_fill, gather,
  advanced indexing...) return a contiguous tensor: ``contiguous_result`` wraps their forward;
- ``clone`` / ``*_like`` / ``to`` with ``preserve_format`` keep a dense input's strides and
  otherwise lay the copy out in the input's stride order (``preserve_strides``), as
  ``empty_like`` does;
- ``memory_format=channels_last`` (4-D) / ``channels_last_3d`` (5-D) give NHWC / NDHWC strides;
- elementwise results follow TensorIterator (``iter_strides``): operands of the result's shape
  laid out alike give that layout (size-1 dims' strides included), anything else is sorted by
  the operands' strides (a Python number counts as a 0-dim operand, which only rules out the
  first case).

Strides here are in elements, as ``Tensor.stride()`` reports them. Empty tensors: NumPy gives a
fresh empty array zero strides, which ``stride()`` reports as row-major (PyTorch's for a new
empty tensor); any other strides of an empty array are PyTorch's and reported as they are
(views, ``empty_like`` of an empty tensor, results laid out here). PyTorch's own all-zero
strides of an empty tensor (``from_numpy`` of a fresh empty NumPy array, ``empty_strided``
with zero strides, and clones / views of those) are told apart by the array's memory: it views
a buffer registered in ``_ZERO_ROOTS`` (``zero_strided_empty``), and NumPy's views keep that
buffer as their base. So a shortcut "row-major input, nothing to lay out" must also require a
non-empty array: NumPy calls every empty array C-contiguous.
"""
from __future__ import annotations

import weakref

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
    a contiguous layout's; an empty tensor counts as contiguous, so dense."""
    if 0 in shape:
        return True
    expected = 1
    for st, n in sorted((st, n) for st, n in zip(strides, shape) if n >= 2):
        if st != expected:
            return False
        expected *= n
    return True


def dense_np(a: np.ndarray) -> bool:
    """``is_dense`` of an array's own (byte) strides, NumPy's contiguity flags first."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    expected = a.itemsize
    for st, n in sorted((st, n) for st, n in zip(a.strides, a.shape) if n != 1):
        if st != expected:
            return False
        expected *= n
    return True


def elem_strides(a: np.ndarray) -> tuple:
    isz = a.itemsize
    return tuple(s // isz for s in a.strides)


def torch_strides(a: np.ndarray) -> tuple:
    """The strides ``Tensor.stride()`` reports for an array: its own, but row-major for a
    fresh empty array (NumPy gives those zero strides) unless they are PyTorch's zeros."""
    st = elem_strides(a)
    if a.size == 0 and not any(st) and not zero_strided(a):
        return contiguous_strides(a.shape)
    return st


# the buffers under empty arrays whose all-zero strides are PyTorch's, by id (weak: an entry
# goes with the last array over it)
_ZERO_ROOTS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def zero_strided_empty(shape, dtype) -> np.ndarray:
    """An empty array of ``shape`` whose zero strides ``Tensor.stride()`` reports as they are:
    what PyTorch gives for ``from_numpy`` of a fresh empty NumPy array (NumPy's zero strides
    kept) or ``empty_strided(shape, (0, ...))``."""
    return keep_zero_strides(np.ndarray(tuple(shape), dtype, np.empty(0, np.uint8), 0,
                                        (0,) * len(shape)))


def keep_zero_strides(a: np.ndarray) -> np.ndarray:
    """``a`` (an empty array with all-zero strides, as PyTorch's ``set_`` / ``as_strided``
    asked for them) with its memory registered, so ``stride()`` reports those zeros."""
    root = owner(a)
    _ZERO_ROOTS[id(root)] = root
    return a


def owner(a: np.ndarray) -> np.ndarray:
    """The array owning ``a``'s memory, through NumPy views and as_strided's wrappers."""
    while True:
        b = a.base
        if isinstance(b, np.ndarray):
            a = b
        elif b is not None and isinstance(getattr(b, "base", None), np.ndarray):
            a = b.base
        else:
            return a


def zero_strided(a) -> bool:
    """Whether ``a`` (an empty array with all-zero strides) views a ``zero_strided_empty``
    buffer, directly or through NumPy views and ``as_strided``'s wrappers."""
    root = owner(a)
    return _ZERO_ROOTS.get(id(root)) is root


def empty_np(shape, strides, dtype) -> np.ndarray:
    """A zero-filled array with exactly these element strides (PyTorch's ``empty_strided``:
    the buffer holds ``1 + sum((n - 1) * stride)`` elements); an empty one with all-zero
    strides keeps them (``zero_strided_empty``)."""
    shape = tuple(int(s) for s in shape)
    dt = np.dtype(dtype)
    if 0 in shape:
        if not any(strides):
            return zero_strided_empty(shape, dt)
        n = 0   # (no memory, as PyTorch allocates none: data_ptr() 0)
    else:
        n = max(1 + sum((s - 1) * st for s, st in zip(shape, strides)), 1)
    buf = np.zeros(n, dt)
    isz = dt.itemsize
    # the ndarray constructor over the buffer: NumPy's as_strided costs several microseconds
    return np.ndarray(shape, dt, buf, 0, tuple(int(st) * isz for st in strides))


def fresh_empty(a: np.ndarray) -> np.ndarray:
    """An empty array as PyTorch allocates it: NumPy gives a fresh empty array zero strides
    (reported as row-major), which views would carry on; this one has row-major strides, so
    ``permute`` / ``transpose`` / ``expand`` of it have PyTorch's. (Factories make theirs so;
    a view op first gives an empty source such strides: ``_registry.viewable``.)"""
    if not a.ndim or any(a.strides) or zero_strided(a):
        return a
    return empty_np(a.shape, contiguous_strides(a.shape), a.dtype)


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
    st = torch_strides(x)
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
    if not x.size:   # (an empty view of a larger buffer: a fresh empty array instead)
        return x if not any(x.strides) and not zero_strided(x) else np.empty(x.shape, x.dtype)
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
                if type(r) is np.ndarray and (not r.flags.c_contiguous or 1 in r.shape
                                              or not r.size):
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


def strided_like(x, r):
    """``r`` (shaped like ``x``) laid out as PyTorch's ``clone_preserve_strides(x)`` (the
    view scatters' result): exactly ``x``'s strides, dense or not, unless they overlap (an
    expanded ``x``: then as ``clone``)."""
    if type(x) is not np.ndarray or type(r) is not np.ndarray:
        return r
    st = torch_strides(x)
    if any(s == 0 and n > 1 for s, n in zip(st, x.shape)):
        return like_input(x, r)
    return r if elem_strides(r) == st and r.size else copy_to_strides(r, st)


def like_input(x, r):
    """``r`` (an array or a tuple of them, shaped like ``x``) laid out as
    ``empty_like(x)``: a dense ``x``'s strides, else a dense layout in its stride order."""
    if type(x) is not np.ndarray or (x.flags.c_contiguous and (x.ndim < 2 or 1 not in x.shape)
                                     and x.size):
        return r
    st = preserve_strides(x.shape, torch_strides(x))
    if isinstance(r, tuple):
        return tuple(copy_to_strides(a, st) for a in r)
    return copy_to_strides(r, st)


# ---- TensorIterator's output layout (elementwise ops) --------------------------------------

def iter_perm(shape, operands) -> list:
    """TensorIterator's ``reorder_dimensions``: the dims of ``shape`` from fastest to slowest,
    by an insertion sort comparing the operands' strides in turn (a zero stride, a broadcast
    dim, says nothing; equal strides put the smaller dim first)."""
    perm = list(range(len(shape)))[::-1]

    def should_swap(d0, d1):
        for st in operands:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, len(shape)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def iter_strides(shape, operands) -> tuple:
    """The element strides TensorIterator gives an elementwise result of ``shape``.

    ``operands``: (shape, element strides) of every tensor operand in PyTorch's argument
    order, a Python number as ``((), ())`` (PyTorch wraps it into a 0-dim tensor).
    ``fast_set_up``: operands all of the result's shape are laid out alike -- all contiguous
    (row-major result), all channels_last (4-D; NHWC result), or all non-overlapping and dense
    with one set of strides (the result copies them, size-1 dims included). Otherwise the
    dims are sorted by the operands' strides (a broadcast dim's counting as 0) and the result
    is dense in that order, row-major when the order is the natural one; sizes multiply
    without a max with 1, so the dims outside a size-0 dim get stride 0."""
    nd = len(shape)
    if all(s == shape for s, _ in operands):
        if all(is_contiguous_as(s, st, contiguous_format) for s, st in operands):
            return contiguous_strides(shape)
        if nd == 4 and all(is_contiguous_as(s, st, channels_last) for s, st in operands):
            return format_strides(shape, channels_last)
        st0 = operands[0][1]
        if all(st == st0 for _, st in operands) and is_dense(shape, st0):
            return tuple(st0)
    bcast = []
    for s, st in operands:
        off = nd - len(s)
        bcast.append([0] * off + [0 if n == 1 and shape[off + i] != 1 else st[i]
                                  for i, n in enumerate(s)])
    perm = iter_perm(shape, bcast) if nd > 1 else [0]
    if perm == list(range(nd - 1, -1, -1)):
        return contiguous_strides(shape)
    out = [0] * nd
    acc = 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


_ITER: dict = {}


def iter_result(out, operands):
    """``out`` (an elementwise result computed by NumPy) laid out as PyTorch's TensorIterator
    lays it out for ``operands`` (the op's operands before type promotion, in PyTorch's
    order: ndarrays, or Python numbers / NumPy scalars)."""
    if type(out) is not np.ndarray or not out.ndim:
        return out
    shape = out.shape
    if not out.size:   # (not cached: NumPy's zero strides and PyTorch's look alike)
        ops = [(x.shape, torch_strides(x)) if type(x) is np.ndarray else ((), ())
               for x in operands if x is not None]
        return restride(out, iter_strides(shape, ops) if ops else contiguous_strides(shape))
    key = (shape,) + tuple((x.shape, x.strides, x.itemsize) if type(x) is np.ndarray else ()
                           for x in operands)
    want = _ITER.get(key)
    if want is None:   # (remembered: the layout depends on shapes and strides only)
        if len(_ITER) > 4096:
            _ITER.clear()
        ops = [(x.shape, torch_strides(x)) if type(x) is np.ndarray else ((), ())
               for x in operands if x is not None]
        want = _ITER[key] = iter_strides(shape, ops) if ops else contiguous_strides(shape)
    return restride(out, want)


def restride(out: np.ndarray, strides) -> np.ndarray:
    """``out`` with exactly these element strides (a copy unless it has them already)."""
    if elem_strides(out) == tuple(strides):
        return out
    if (out.size == 0 and strides == contiguous_strides(out.shape) and not any(out.strides)
            and not zero_strided(out)):
        return out    # NumPy's fresh empty array, reported with row-major strides
    return copy_to_strides(out, strides)
