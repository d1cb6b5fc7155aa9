"""Batched arrays: the minimal batching machinery behind ``autograd.grad(is_grads_batched=True)``
and the vectorized ``jacobian`` / ``hessian`` / ``gradcheck(check_batched_grad=True)``.

A :class:`BatchedArray` wraps one ndarray whose leading axis is a batch of independent examples
and shows the VJP formulas the *logical* (per-example) array: ``.shape``, ``.ndim``, ``.size``,
axes, reductions, indexing and broadcasting all speak in per-example terms. NumPy's
``__array_ufunc__`` / ``__array_function__`` protocols route every ``np.*`` call of a formula to
one call on the whole batch with the axes shifted by one; operands without a batch axis (the
saved forward values) are aligned to the logical shape by right-aligned broadcasting (batched
operands of a lower logical rank get singleton axes after their batch axis).

So the engine's bare-array backward pass runs ONCE over a batch of cotangents: the same VJP
formulas, the same graph walk, each NumPy kernel called with one more (leading) axis.

What is not batched (each noted where it happens; :data:`FALLBACKS` counts them by name):

* NumPy functions without a batching rule here run once per example and are stacked
  (``_loop``): linear algebra (``np.linalg``), ``np.dot``/``tensordot``/``outer``, ``np.pad``,
  ``np.tile``/``np.repeat``, ...;
* a VJP formula that fails on a BatchedArray (one that reads the values as a plain array)
  runs once per example with plain ndarrays (``vjp_per_example``);
* nodes that are not built-in ops (custom ``Function``s, ``CopySlices``) and tensor / node
  hooks run once per example.
"""
from __future__ import annotations

import operator

import numpy as np

__all__ = ["FALLBACKS", "NPB", "BatchedArray", "batched_zeros", "unbatch"]

FALLBACKS: dict = {}   # name of what ran once per example -> how many times (diagnostics/tests)


def _note(name: str) -> None:
    FALLBACKS[name] = FALLBACKS.get(name, 0) + 1


def _is_b(x) -> bool:
    return type(x) is BatchedArray


def _lnd(x) -> int:
    """Logical number of dims of an operand."""
    if type(x) is BatchedArray:
        return x.data.ndim - 1
    if type(x) is np.ndarray:
        return x.ndim
    return np.ndim(x)


def _lift(x, nd: int):
    """The physical array of batched ``x`` with singleton axes inserted after the batch axis so
    that its logical rank is ``nd`` (right-aligned broadcasting against unbatched operands)."""
    d = x.data
    k = nd - (d.ndim - 1)
    if k > 0:
        d = d.reshape(d.shape[:1] + (1,) * k + d.shape[1:])
    return d


def _phys(x, nd: int):
    return _lift(x, nd) if type(x) is BatchedArray else x


def _ax1(a, nd: int) -> int:
    a = operator.index(a)
    if a < -nd or a >= nd:
        raise np.exceptions.AxisError(a, nd)
    return (a + nd if a < 0 else a) + 1


def _ax(axis, nd: int):
    """Logical axis (None, int or sequence) -> physical axis; None means every logical axis."""
    if axis is None:
        return tuple(range(1, nd + 1))
    if isinstance(axis, (tuple, list)):
        return tuple(_ax1(a, nd) for a in axis)
    return _ax1(axis, nd)


def _bsize(*objs) -> int | None:
    for o in objs:
        if type(o) is BatchedArray:
            return o.data.shape[0]
        if isinstance(o, (list, tuple)):
            b = _bsize(*o)
            if b is not None:
                return b
        elif isinstance(o, dict):
            b = _bsize(*o.values())
            if b is not None:
                return b
    return None


def _any_b(*objs) -> bool:
    return _bsize(*objs) is not None


def unbatch(x, b: int):
    """Example ``b`` of ``x`` (recursively in lists/tuples/dicts); unbatched values as they are."""
    if type(x) is BatchedArray:
        return x.data[b]
    if type(x) is tuple or type(x) is list:
        return type(x)(unbatch(v, b) for v in x)
    if type(x) is dict:
        return {k: unbatch(v, b) for k, v in x.items()}
    return x


def _stack(results: list):
    """Stack per-example results: arrays become one BatchedArray; tuples/lists recurse; values
    that are not arrays (shapes, flags, dtypes) must agree and are returned once."""
    first = results[0]
    if first is None:
        return None
    if isinstance(first, (tuple, list)) and not isinstance(first, np.ndarray):
        return type(first)(_stack([r[i] for r in results]) for i in range(len(first)))
    if isinstance(first, (np.ndarray, np.generic)):
        return BatchedArray(np.stack([np.asarray(r) for r in results]))
    if all(r == first for r in results[1:]):
        return first
    return BatchedArray(np.stack([np.asarray(r) for r in results]))


def _loop(func, args, kwargs):
    """Fallback: run ``func`` once per example and stack the results."""
    _note(getattr(func, "__name__", repr(func)))
    n = _bsize(args, kwargs)
    return _stack([func(*unbatch(args, b), **unbatch(kwargs, b)) for b in range(n)])


def _wrap(r):
    if isinstance(r, tuple):
        return tuple(BatchedArray(x) for x in r)
    return BatchedArray(r)


# ---- indexing keys --------------------------------------------------------------------------

def _is_arr_key(k) -> bool:
    return (isinstance(k, np.ndarray) and k.ndim > 0) or isinstance(k, list)


def _bkey(key):
    """(physical key, batch axis position in the raw result or None when first, n adv dims).

    NumPy puts the dims of non-adjacent advanced indices first, ahead of the batch axis; the
    caller moves the batch axis back to the front."""
    if type(key) is not tuple:
        key = (key,)
    if any(type(k) is BatchedArray for k in key):
        raise TypeError("indexing with a batched index is not supported")
    arrs = [i for i, k in enumerate(key) if _is_arr_key(k)]
    if not arrs:
        return (slice(None),) + key, 0
    pos = [i for i, k in enumerate(key)
           if _is_arr_key(k) or isinstance(k, (int, np.integer)) and not isinstance(k, bool)
           or isinstance(k, np.ndarray) and k.ndim == 0]
    if pos[-1] - pos[0] + 1 == len(pos):
        return (slice(None),) + key, 0
    shapes = []
    for i in pos:
        k = np.asarray(key[i])
        shapes.append((int(np.count_nonzero(k)),) if k.dtype == np.bool_ else k.shape)
    return (slice(None),) + key, len(np.broadcast_shapes(*shapes))


def _result_shape(shape, key) -> tuple:
    """Logical shape of ``x[key]`` for an array of ``shape`` (indexing a stride-0 dummy)."""
    return np.broadcast_to(np.empty((), np.int8), shape)[key].shape


def _value_for(shape, key, nadv: int, value):
    """``value`` laid out for assignment into ``data[physical key]``: aligned to the logical
    result, with its batch axis where NumPy put it (after non-adjacent advanced dims)."""
    rshape = _result_shape(shape, key)
    if type(value) is BatchedArray:
        v = _lift(value, len(rshape))
        return np.moveaxis(v, 0, nadv) if nadv else v
    if not nadv:
        return value
    return np.expand_dims(np.broadcast_to(value, rshape), nadv)


# ---- the array -------------------------------------------------------------------------------

class BatchedArray:
    """An ndarray with a leading batch axis that presents its per-example (logical) shape."""

    __slots__ = ("data",)
    __hash__ = None
    __array_priority__ = 100

    def __init__(self, data):
        self.data = data

    # -- what a formula sees
    @property
    def shape(self):
        return self.data.shape[1:]

    @shape.setter
    def shape(self, shape):     # in place, as ndarray's (AttributeError when it would copy)
        self.data.shape = self.data.shape[:1] + tuple(shape)

    ndim = property(lambda self: self.data.ndim - 1)
    dtype = property(lambda self: self.data.dtype)
    itemsize = property(lambda self: self.data.itemsize)
    strides = property(lambda self: self.data.strides[1:])
    flags = property(lambda self: self.data.flags)
    bsize = property(lambda self: self.data.shape[0])

    @property
    def size(self) -> int:
        n = 1
        for s in self.data.shape[1:]:
            n *= s
        return n

    @property
    def T(self):
        nd = self.data.ndim
        return BatchedArray(self.data.transpose((0,) + tuple(range(nd - 1, 0, -1))))

    @property
    def mT(self):
        return BatchedArray(np.swapaxes(self.data, -1, -2))

    @property
    def real(self):
        return BatchedArray(self.data.real)

    @property
    def imag(self):
        return BatchedArray(self.data.imag)

    def __repr__(self) -> str:
        return f"BatchedArray(batch={self.bsize}, shape={self.shape}, dtype={self.dtype})"

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a BatchedArray holds one array per example and has no single ndarray "
                        "value")

    def __bool__(self):
        raise ValueError("the truth value of a BatchedArray is ambiguous")

    def __len__(self) -> int:
        if self.data.ndim < 2:
            raise TypeError("len() of unsized object")
        return self.data.shape[1]

    def __float__(self):
        raise TypeError("a BatchedArray has no single scalar value")

    __int__ = __index__ = __complex__ = __float__

    # -- methods with ndarray's meaning, on the logical array
    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        return BatchedArray(self.data.reshape(self.data.shape[:1] + tuple(shape), order=order))

    def ravel(self, order="C"):
        return self.reshape(-1, order=order)

    flatten = ravel

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return BatchedArray(self.data.astype(dtype, order=order, casting=casting, copy=copy))

    def copy(self, order="C"):
        return BatchedArray(self.data.copy(order=order))

    def view(self, dtype=None):
        return BatchedArray(self.data.view() if dtype is None else self.data.view(dtype))

    def conj(self):
        return BatchedArray(np.conj(self.data))

    conjugate = conj

    def swapaxes(self, a, b):
        nd = self.ndim
        return BatchedArray(self.data.swapaxes(_ax1(a, nd), _ax1(b, nd)))

    def transpose(self, *axes):
        if not axes or axes == (None,):
            return self.T
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0])
        nd = self.ndim
        return BatchedArray(self.data.transpose((0,) + tuple(_ax1(a, nd) for a in axes)))

    def squeeze(self, axis=None):
        return np.squeeze(self, axis)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset, axis1, axis2)

    def sum(self, *args, **kwargs):
        return np.sum(self, *args, **kwargs)

    def mean(self, *args, **kwargs):
        return np.mean(self, *args, **kwargs)

    def prod(self, *args, **kwargs):
        return np.prod(self, *args, **kwargs)

    def max(self, *args, **kwargs):
        return np.max(self, *args, **kwargs)

    def min(self, *args, **kwargs):
        return np.min(self, *args, **kwargs)

    def any(self, *args, **kwargs):
        return np.any(self, *args, **kwargs)

    def all(self, *args, **kwargs):
        return np.all(self, *args, **kwargs)

    def cumsum(self, *args, **kwargs):
        return np.cumsum(self, *args, **kwargs)

    def cumprod(self, *args, **kwargs):
        return np.cumprod(self, *args, **kwargs)

    def argmax(self, *args, **kwargs):
        return np.argmax(self, *args, **kwargs)

    def argmin(self, *args, **kwargs):
        return np.argmin(self, *args, **kwargs)

    def clip(self, *args, **kwargs):
        return np.clip(self, *args, **kwargs)

    def round(self, decimals=0):
        return BatchedArray(np.round(self.data, decimals))

    def nonzero(self):
        raise TypeError("nonzero() of a BatchedArray has a different size per example")

    # -- indexing
    def __getitem__(self, key):
        bk, nadv = _bkey(key)
        r = self.data[bk]
        if nadv:
            r = np.moveaxis(r, nadv, 0)
        return BatchedArray(r)

    def __setitem__(self, key, value):
        bk, nadv = _bkey(key)
        if nadv or type(value) is BatchedArray:
            value = _value_for(self.shape, key, nadv, value)
        self.data[bk] = value

    # -- NumPy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__":
            if ufunc.signature is not None:
                if ufunc is np.matmul and not kwargs:
                    return matmul(*inputs)
                return _loop(ufunc, inputs, kwargs)
            out = kwargs.get("out")
            ops = inputs + (out if out else ())
            nd = max(_lnd(x) for x in ops)
            args = [_phys(x, nd) for x in inputs]
            if out:
                kwargs["out"] = tuple(_phys(o, nd) for o in out)
            w = kwargs.get("where")
            if type(w) is BatchedArray:
                kwargs["where"] = _lift(w, nd)
            r = ufunc(*args, **kwargs)
            if out:
                return out[0] if len(out) == 1 else out
            return _wrap(r)
        if method in ("reduce", "accumulate") and type(inputs[0]) is BatchedArray \
                and len(inputs) == 1 and not _any_b(kwargs):
            a = inputs[0]
            axis = kwargs.pop("axis", 0)
            if axis is None and method == "reduce":
                pax = _ax(None, a.ndim)
            elif axis is None:
                return getattr(ufunc, method)(a.reshape(-1), axis=0, **kwargs)
            else:
                pax = _ax(axis, a.ndim)
            return _wrap(getattr(ufunc, method)(a.data, axis=pax, **kwargs))
        if method == "at":
            return _ufunc_at(ufunc, *inputs)
        return _loop(getattr(ufunc, method), inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        h = _HANDLED.get(func)
        if h is not None:
            return h(*args, **kwargs)
        return _loop(func, args, kwargs)


def _binop(uf):
    def f(self, other):
        return uf(self, other)

    def r(self, other):
        return uf(other, self)
    return f, r


for _n, _uf in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                ("truediv", np.true_divide), ("floordiv", np.floor_divide), ("mod", np.remainder),
                ("pow", np.power), ("and", np.bitwise_and), ("or", np.bitwise_or),
                ("xor", np.bitwise_xor), ("lshift", np.left_shift),
                ("rshift", np.right_shift)]:
    _f, _r = _binop(_uf)
    setattr(BatchedArray, f"__{_n}__", _f)
    setattr(BatchedArray, f"__r{_n}__", _r)
for _n, _uf in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                ("gt", np.greater), ("ge", np.greater_equal)]:
    setattr(BatchedArray, f"__{_n}__", _binop(_uf)[0])
BatchedArray.__neg__ = lambda self: BatchedArray(np.negative(self.data))
BatchedArray.__pos__ = lambda self: self
BatchedArray.__abs__ = lambda self: BatchedArray(np.abs(self.data))
BatchedArray.__invert__ = lambda self: BatchedArray(np.invert(self.data))
BatchedArray.__matmul__ = lambda self, other: matmul(self, other)
BatchedArray.__rmatmul__ = lambda self, other: matmul(other, self)


def batched_zeros(n: int, shape, dtype) -> BatchedArray:
    return BatchedArray(np.zeros((n,) + tuple(shape), dtype))


# ---- batching rules for NumPy functions ----------------------------------------------------

_HANDLED: dict = {}


def _rule(*funcs):
    def deco(h):
        for f in funcs:
            _HANDLED[f] = h
        return h
    return deco


def _reduction(func, flat_none=False):
    """``func(a, axis=None, ...)`` over logical axes (``flat_none``: axis None flattens)."""
    def h(a, axis=None, *args, **kwargs):
        if type(a) is not BatchedArray or _any_b(args, kwargs) or kwargs.get("out") is not None:
            return _loop(func, (a, axis) + args, kwargs)
        if axis is None and flat_none:
            return _wrap(func(a.data.reshape(a.data.shape[0], -1), 1, *args, **kwargs))
        return _wrap(func(a.data, _ax(axis, a.ndim), *args, **kwargs))
    return h


for _f in (np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.any, np.all,
           np.nansum, np.nanmean, np.nanprod, np.nanmax, np.nanmin, np.std, np.var,
           np.count_nonzero, np.ptp):
    _HANDLED[_f] = _reduction(_f)
for _f in (np.cumsum, np.cumprod, np.nancumsum, np.nancumprod, np.argmax, np.argmin, np.sort,
           np.argsort, np.flip):
    _HANDLED[_f] = _reduction(_f, flat_none=_f is not np.flip)


@_rule(np.where)
def _where(c, *xy):
    if len(xy) != 2:
        return _loop(np.where, (c,) + xy, {})
    nd = max(_lnd(c), _lnd(xy[0]), _lnd(xy[1]))
    return BatchedArray(np.where(_phys(c, nd), _phys(xy[0], nd), _phys(xy[1], nd)))


@_rule(np.clip)
def _clip(a, a_min=None, a_max=None, **kwargs):
    nd = max(_lnd(a), _lnd(a_min), _lnd(a_max))
    return BatchedArray(np.clip(_phys(a, nd), _phys(a_min, nd), _phys(a_max, nd), **kwargs))


@_rule(np.expand_dims)
def _expand_dims(a, axis):
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    return BatchedArray(np.expand_dims(a.data, tuple(_ax1(x, a.ndim + len(axes)) for x in axes)))


@_rule(np.squeeze)
def _squeeze(a, axis=None):
    if axis is None:
        axis = tuple(i for i, s in enumerate(a.shape) if s == 1)
    return BatchedArray(np.squeeze(a.data, _ax(axis, a.ndim)))


@_rule(np.broadcast_to)
def _broadcast_to(array, shape, subok=False):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    d = _lift(array, len(shape))
    return BatchedArray(np.broadcast_to(d, d.shape[:1] + shape))


@_rule(np.swapaxes)
def _swapaxes(a, axis1, axis2):
    return a.swapaxes(axis1, axis2)


@_rule(np.transpose)
def _transpose(a, axes=None):
    return a.transpose(axes) if axes is not None else a.T


@_rule(np.moveaxis)
def _moveaxis(a, source, destination):
    return BatchedArray(np.moveaxis(a.data, _ax(source, a.ndim), _ax(destination, a.ndim)))


@_rule(np.diagonal)
def _diagonal(a, offset=0, axis1=0, axis2=1):
    return BatchedArray(np.diagonal(a.data, offset, _ax1(axis1, a.ndim), _ax1(axis2, a.ndim)))


@_rule(np.reshape)
def _reshape(a, *args, **kwargs):
    shape = args[0] if args else kwargs.pop("shape", kwargs.pop("newshape", None))
    order = args[1] if len(args) > 1 else kwargs.get("order", "C")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return a.reshape(shape, order=order)


@_rule(np.ravel)
def _ravel(a, order="C"):
    return a.reshape(-1, order=order)


@_rule(np.roll)
def _roll(a, shift, axis=None):
    if axis is None:
        return BatchedArray(np.roll(a.data.reshape(a.data.shape[0], -1), shift, 1)
                            .reshape(a.data.shape))
    return BatchedArray(np.roll(a.data, shift, _ax(axis, a.ndim)))


@_rule(np.take)
def _take(a, indices, axis=None, out=None, mode="raise"):
    if type(a) is not BatchedArray or _any_b(indices) or out is not None:
        return _loop(np.take, (a, indices, axis), {"mode": mode})
    if axis is None:
        return BatchedArray(np.take(a.data.reshape(a.data.shape[0], -1), indices, 1, mode=mode))
    return BatchedArray(np.take(a.data, indices, _ax1(axis, a.ndim), mode=mode))


@_rule(np.take_along_axis)
def _take_along_axis(arr, indices, axis=None):
    if type(arr) is not BatchedArray or _any_b(indices) or axis is None:
        return _loop(np.take_along_axis, (arr, indices, axis), {})
    idx = np.broadcast_to(indices, arr.data.shape[:1] + indices.shape)
    return BatchedArray(np.take_along_axis(arr.data, idx, _ax1(axis, arr.ndim)))


@_rule(np.put_along_axis)
def _put_along_axis(arr, indices, values, axis):
    if type(arr) is not BatchedArray or _any_b(indices) or axis is None:
        raise TypeError("put_along_axis: only into a batched array, along an axis")
    idx = np.broadcast_to(indices, arr.data.shape[:1] + indices.shape)
    np.put_along_axis(arr.data, idx, _phys(values, arr.ndim), _ax1(axis, arr.ndim))


def _full(parts):
    """Batched physical arrays for a list of operands (unbatched ones broadcast over the batch)."""
    n = _bsize(parts)
    return [p.data if type(p) is BatchedArray else
            np.broadcast_to(p, (n,) + np.shape(p)) for p in parts]


@_rule(np.concatenate)
def _concatenate(arrays, axis=0, out=None, **kwargs):
    arrays = list(arrays)
    if out is not None or axis is None:
        return _loop(np.concatenate, (arrays, axis), kwargs)
    nd = _lnd(arrays[0])
    return BatchedArray(np.concatenate(_full(arrays), _ax1(axis, nd), **kwargs))


@_rule(np.stack)
def _stack_rule(arrays, axis=0, out=None, **kwargs):
    arrays = list(arrays)
    if out is not None:
        return _loop(np.stack, (arrays, axis), kwargs)
    nd = _lnd(arrays[0]) + 1
    return BatchedArray(np.stack(_full(arrays), _ax1(axis, nd), **kwargs))


def _mk_like(func):
    def h(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
        if type(a) is not BatchedArray:
            return _loop(func, (a,), {"dtype": dtype, "shape": shape})
        if shape is not None:   # a constant of another shape: the same for every example
            shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
            return func(np.empty(shape, dtype or a.dtype), dtype=dtype)
        return BatchedArray(func(a.data, dtype=dtype))
    return h


for _f in (np.zeros_like, np.ones_like, np.empty_like):
    _HANDLED[_f] = _mk_like(_f)


@_rule(np.full_like)
def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    if type(a) is not BatchedArray or shape is not None:
        return _loop(np.full_like, (a, fill_value), {"dtype": dtype, "shape": shape})
    nd = a.ndim
    r = np.empty_like(a.data, dtype=dtype)
    r[...] = _phys(fill_value, nd)
    return BatchedArray(r)


@_rule(np.copy)
def _copy(a, order="K", subok=False):
    return a.copy()


@_rule(np.iscomplexobj)
def _iscomplexobj(x):
    return x.dtype.kind == "c"


@_rule(np.isrealobj)
def _isrealobj(x):
    return x.dtype.kind != "c"


@_rule(np.real)
def _real(val):
    return val.real


@_rule(np.imag)
def _imag(val):
    return val.imag


@_rule(np.shape)
def _shape(a):
    return a.shape


@_rule(np.ndim)
def _ndim(a):
    return a.ndim


@_rule(np.size)
def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


@_rule(np.result_type)
def _result_type(*args):
    return np.result_type(*(a.dtype if type(a) is BatchedArray else a for a in args))


@_rule(np.may_share_memory, np.shares_memory)
def _shares(a, b, max_work=None):
    return np.may_share_memory(a.data if _is_b(a) else a, b.data if _is_b(b) else b)


@_rule(np.nan_to_num)
def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    return BatchedArray(np.nan_to_num(x.data, copy=copy, nan=nan, posinf=posinf, neginf=neginf))


def _mk_tri(func):
    def h(m, k=0):
        if m.ndim < 2:
            return _loop(func, (m,), {"k": k})
        return BatchedArray(func(m.data, k))
    return h


_HANDLED[np.tril] = _mk_tri(np.tril)
_HANDLED[np.triu] = _mk_tri(np.triu)


@_rule(np.copyto)
def _copyto(dst, src, casting="same_kind", where=True):
    if type(dst) is not BatchedArray:
        raise TypeError("copyto: cannot copy batched values into an unbatched array")
    nd = dst.ndim
    np.copyto(dst.data, _phys(src, nd), casting=casting, where=_phys(where, nd))


@_rule(np.einsum)
def _einsum_rule(*operands, **kwargs):
    return einsum(*operands, **kwargs)


# ---- matmul / einsum / ufunc.at --------------------------------------------------------------

def _contig(d):
    f = d.flags
    if f.c_contiguous or f.f_contiguous or 0 not in d.strides:
        return d
    return np.ascontiguousarray(d)


def matmul(a, b):
    """``np.matmul`` with either operand batched: one call on the whole batch."""
    if not (_is_b(a) or _is_b(b)):
        return np.matmul(a, b)
    na, nb = _lnd(a), _lnd(b)
    if na == 0 or nb == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    da = a.data if _is_b(a) else a
    db = b.data if _is_b(b) else b
    sq_a = na == 1
    sq_b = nb == 1
    if sq_a:            # a 1-D operand is a row (a) / column (b) vector, dropped afterwards
        da = np.expand_dims(da, -2)
        na = 2
    if sq_b:
        db = np.expand_dims(db, -1)
        nb = 2
    nd = max(na, nb)
    if _is_b(a) and na < nd:
        da = da.reshape(da.shape[:1] + (1,) * (nd - na) + da.shape[1:])
    if _is_b(b) and nb < nd:
        db = db.reshape(db.shape[:1] + (1,) * (nd - nb) + db.shape[1:])
    if not _is_b(a):    # an unbatched operand of the full rank gets a unit batch axis
        da = da.reshape((1,) * (nd + 1 - da.ndim) + da.shape)
    if not _is_b(b):
        db = db.reshape((1,) * (nd + 1 - db.ndim) + db.shape)
    r = np.matmul(_contig(da), _contig(db))
    if sq_a and sq_b:
        r = r[..., 0, 0]
    elif sq_a:
        r = r[..., 0, :]
    elif sq_b:
        r = r[..., 0]
    return BatchedArray(r)


_EIN_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def einsum(eq, *ops, **kwargs):
    """``np.einsum`` with batched operands: one more label for the batch axis."""
    if not isinstance(eq, str) or not any(_is_b(o) for o in ops):
        return np.einsum(eq, *ops, **kwargs)
    eq = eq.replace(" ", "")
    if "..." in eq or "->" not in eq:
        return _loop(np.einsum, (eq,) + ops, kwargs)
    lhs, rhs = eq.split("->")
    z = next(c for c in _EIN_LETTERS if c not in eq)
    terms = lhs.split(",")
    terms = [z + t if _is_b(o) else t for t, o in zip(terms, ops)]
    datas = [o.data if _is_b(o) else o for o in ops]
    neq = ",".join(terms) + "->" + z + rhs
    opt = "greedy" if len(ops) > 1 else False
    return BatchedArray(np.einsum(neq, *datas, optimize=opt))


def _ufunc_at(ufunc, a, indices, b=None):
    if type(a) is not BatchedArray:
        raise TypeError(f"{ufunc.__name__}.at: cannot update an unbatched array with batched "
                        "values in place")
    bk, nadv = _bkey(indices)
    if b is None:
        ufunc.at(a.data, bk)
    else:
        if nadv or type(b) is BatchedArray:
            b = _value_for(a.shape, indices, nadv, b)
        ufunc.at(a.data, bk, b)
    return None


# ---- the formula namespace for batched cotangents -------------------------------------------

class _BatchedNS:
    """NP (the fast path's formula helpers) with batching rules for the helpers that build an
    unbatched array and write a gradient into it; every other helper is NP's own (its NumPy
    calls batch through the protocols above)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        from .autograd.engine import NS
        v = getattr(NS[0], name)
        setattr(self, name, v)   # helpers are all registered at import: cache the lookup
        return v

    def __repr__(self):
        return "<namespace numpy-batched>"


NPB = _BatchedNS()


def _batched_or_np(name):
    """Decorator: register a batched rule for helper ``name``; unbatched calls use NP's."""
    def deco(fn):
        def h(*args):
            if not _any_b(args):
                from .autograd.engine import NS
                return getattr(NS[0], name)(*args)
            return fn(*args)
        h.__name__ = name
        setattr(NPB, name, h)
        return fn
    return deco


def _zeros_b(g, shape):
    return batched_zeros(g.data.shape[0], shape, g.dtype)


@_batched_or_np("matmul")
def _ns_matmul(a, b):
    return matmul(a, b)


@_batched_or_np("einsum")
def _ns_einsum(eq, *ops):
    return einsum(eq, *ops)


@_batched_or_np("embed")
def _ns_embed(g, shape, key):
    z = _zeros_b(g, shape)
    z[key] = g
    return z


@_batched_or_np("adv_backward")
def _ns_adv_backward(g, shape, key):
    z = _zeros_b(g, shape)
    if key == ():
        z.data += _lift(g, len(shape))
    else:
        np.add.at(z, key, g)
    return z


@_batched_or_np("adv_zero")
def _ns_adv_zero(g, key):
    r = g.copy()
    r[key] = 0
    return r


@_batched_or_np("gather_backward")
def _ns_gather_backward(g, shape, dim, idx):
    from ._ops.indexing import _full_key
    z = _zeros_b(g, shape)
    key = _full_key(idx, dim)
    if key == ():
        z.data += _lift(g, len(shape))
    else:
        np.add.at(z, key, g)
    return z


@_batched_or_np("scatter_zero")
def _ns_scatter_zero(g, dim, idx):
    from ._ops.indexing import _full_key
    r = g.copy()
    key = _full_key(idx, dim)
    if key == ():
        r.data[...] = 0
    else:
        r[key] = 0
    return r


@_batched_or_np("scatter_dim")
def _ns_scatter_dim(g, dim, idx, keepdim, in_shape):
    z = _zeros_b(g, in_shape)
    np.put_along_axis(z, idx, g if keepdim else np.expand_dims(g, dim), axis=dim)
    return z


@_batched_or_np("index_add_zeros")
def _ns_index_add_zeros(g, shape, dim, idx):
    z = _zeros_b(g, shape)
    if len(shape) == 0:
        z.data += np.sum(g.data.reshape(g.data.shape[0], -1), axis=1)
    else:
        np.add.at(z, (slice(None),) * dim + (idx,), g)
    return z


@_batched_or_np("index_zero")
def _ns_index_zero(g, dim, idx):
    r = g.copy()
    if r.ndim == 0:
        r.data[...] = 0
    else:
        r[(slice(None),) * dim + (idx,)] = 0
    return r


@_batched_or_np("diagonal_backward")
def _ns_diagonal_backward(g, in_shape, offset, d1, d2):
    z = _zeros_b(g, in_shape)
    zz = np.moveaxis(z.data, (d1 + 1, d2 + 1), (-2, -1))
    i = np.arange(g.shape[-1])
    zz[..., i + max(-offset, 0), i + max(offset, 0)] = _lift(g, len(in_shape) - 1)
    return z


@_batched_or_np("masked_select_backward")
def _ns_masked_select_backward(g, shape, mask):
    z = _zeros_b(g, shape)
    z[np.broadcast_to(mask, tuple(shape))] = g
    return z


def _flat(g):
    d = g.data
    return np.ascontiguousarray(d).reshape(d.shape[0], -1)


@_batched_or_np("take_arr")
def _ns_take_arr(g, idx):
    return BatchedArray(_flat(g)[:, idx])


@_batched_or_np("take_flat")
def _ns_take_flat(g, idx):
    return BatchedArray(_flat(g)[:, idx])


@_batched_or_np("take_backward")
def _ns_take_backward(g, shape, idx):
    n = _bsize(g)
    z = np.zeros((n, int(np.prod(shape))), g.dtype)
    np.add.at(z, (slice(None), idx), _full([g])[0])
    return BatchedArray(z.reshape((n,) + tuple(shape)))


@_batched_or_np("scatter_add_flat")
def _ns_scatter_add_flat(g, idx, shape):
    n = _bsize(g)
    z = np.zeros((n, int(np.prod(shape))), g.dtype)
    np.add.at(z, (slice(None), idx.reshape(-1)), _flat(g))
    return BatchedArray(z.reshape((n,) + tuple(shape)))


@_batched_or_np("put_flat")
def _ns_put_flat(g, idx, v):
    n = _bsize(g, v)
    gd = _full([g])[0] if _is_b(g) else np.broadcast_to(g, (n,) + np.shape(g))
    r = np.array(gd, order="C", copy=True)
    vd = v.data if _is_b(v) else v
    r.reshape(n, -1)[:, idx] = vd
    return BatchedArray(r)


@_batched_or_np("view_as_complex")
def _ns_view_as_complex(g):
    d = np.ascontiguousarray(g.data)
    return BatchedArray(d.view(np.complex128 if d.dtype == np.float64 else np.complex64)[..., 0])


@_batched_or_np("view_as_real")
def _ns_view_as_real(g):
    d = np.ascontiguousarray(g.data)
    return BatchedArray(d.view(d.real.dtype).reshape(d.shape + (2,)))


# ---- the engine's batched variants (selected once per backward call) ------------------------

def _to_array(x):
    if x is None:
        return None
    return x._data if hasattr(x, "_data") else np.asarray(x)


def _stack_grads(per_example: list, n: int):
    """One tuple of gradients from a list of per-example tuples (None where all are None)."""
    out = []
    for i in range(n):
        items = [_to_array(r[i]) for r in per_example]
        ref = next((x for x in items if x is not None), None)
        if ref is None:
            out.append(None)
            continue
        items = [np.zeros_like(ref) if x is None else x for x in items]
        out.append(BatchedArray(np.stack(items)))
    return tuple(out)


def vjp_per_example(op, g, need, vals, params) -> tuple:
    """Fallback for a VJP formula that cannot take batched gradients: once per example."""
    from .autograd.engine import NS
    _note(op.name)
    n = _bsize(g)
    res = []
    for b in range(n):
        r = op.vjp(NS[0], unbatch(g, b), need, *vals, *params)
        res.append(r if isinstance(r, tuple) else (r,))
    return _stack_grads(res, len(res[0]))


def call_node_batched(node, grads, graph):
    """The engine's slow path (multi-output ops, custom Functions, nodes with hooks) with
    batched gradients: built-in ops still run their VJP once on the batch."""
    from .autograd.engine import call_node, unpack_saved
    op = node.op
    if op is not None:
        vals = unpack_saved(node, False)
        need = tuple(e[0] is not None for e in node._next)
        g = grads[0] if node.n_out == 1 else tuple(grads)
        try:
            res = op.vjp(NPB, g, need, *vals, *node._params)
        except Exception:   # noqa: BLE001 - a formula reading plain values: per example
            return vjp_per_example(op, g, need, vals, node._params)
        return res if isinstance(res, tuple) else (res,)
    # custom Functions and other hand-written nodes: their backward runs once per example
    _note(type(node).__name__)
    n = _bsize(grads)
    res = [call_node(node, [unbatch(g, b) for g in grads], False) for b in range(n)]
    return _stack_grads(res, len(node._next))


def _per_example_list(fn, grads: list) -> list:
    n = _bsize(grads)
    if n is None:
        return fn(list(grads))
    res = [fn([unbatch(g, b) for g in grads]) for b in range(n)]
    return list(_stack_grads(res, len(grads)))


def run_tensor_hooks_batched(node, grads, graph):
    from .autograd.engine import _run_tensor_hooks
    _note("tensor hooks")
    return _per_example_list(lambda gs: _run_tensor_hooks(node, gs, False), grads)


def run_leaf_hooks_batched(node, grads, graph):
    from .autograd.engine import _run_leaf_hooks
    x = node.variable._x
    if x is None or not x.hooks:
        return

    def one(gs):
        _run_leaf_hooks(node, gs, False)
        return gs
    _note("leaf hooks")
    grads[:] = _per_example_list(one, grads)


def run_post_hooks_batched(node, grads_in, grads_out, graph):
    from .autograd.engine import _run_post_hooks
    _note("post hooks")
    n = _bsize(grads_in, grads_out)
    res = [_run_post_hooks(node, unbatch(tuple(grads_in), b), unbatch(tuple(grads_out), b),
                           False) for b in range(n)]
    return _stack_grads(res, len(grads_in))


def engine_variants():
    """(namespace, call_node, tensor hooks, leaf hooks, post hooks) for a batched pass."""
    return (NPB, call_node_batched, run_tensor_hooks_batched, run_leaf_hooks_batched,
            run_post_hooks_batched)


def to_result(g, n: int, shape, dtype) -> np.ndarray:
    """A gradient captured by a batched pass as a fresh ndarray with the batch axis first."""
    if type(g) is BatchedArray:
        d = g.data
        if d.base is not None or not d.flags.writeable or not d.flags.c_contiguous:
            d = np.array(d, order="C", copy=True)
        return d
    return np.array(np.broadcast_to(g, (n,) + tuple(shape)), dtype=np.asarray(g).dtype)
