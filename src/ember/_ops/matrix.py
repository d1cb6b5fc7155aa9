"""Matrix construction and manipulation: tril / triu, diag / diag_embed / diagflat, trace, cross,
kron, tensordot, rot90, block_diag, cartesian_prod, combinations, meshgrid, broadcast_tensors /
broadcast_shapes, atleast_{1,2,3}d, cdist, dist, vander and renorm.

Ops with their own PyTorch node (TrilBackward0, DiagEmbedBackward0, TraceBackward0,
LinalgCrossBackward0, Rot90Backward0, BlockDiagBackward0, CdistBackward0, DistBackward0,
RenormBackward0) are one ``Op`` each; the others are compositions of existing ops arranged as
PyTorch arranges them, so their nodes, gradients and tangents follow from those ops.
"""
from __future__ import annotations

import itertools
import math
import numbers
import warnings

import numpy as np

from .. import _dtype as D
from .. import _layout as _L
from .._size import Size
from .._tensor import Tensor, _wrap_dim
from ._dispatch import _type_name, check_broadcast, inplace, promoted
from ._out import with_out
from ._registry import Op, apply, method, ns_fn
from .reduction import NORM, _norm_fwd, _norm_vjp, _ones_em
from .views import _diag_back_np  # noqa: F401  (ns.diagonal_backward is registered there)

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_shapes",
    "broadcast_tensors",
    "cartesian_prod",
    "cdist",
    "combinations",
    "cross",
    "diag",
    "diag_embed",
    "diagflat",
    "dist",
    "kron",
    "meshgrid",
    "renorm",
    "rot90",
    "tensordot",
    "trace",
    "tril",
    "triu",
    "vander",
]

_INF = math.inf


def _is_float(t: Tensor) -> bool:
    return t._data.dtype.kind in "fc" or t.dtype is D.bfloat16


# ---- tril / triu ---------------------------------------------------------------------------

TRIL = Op("tril", lambda x, k: np.tril(x, k), lambda ns, g, need, k: (ns.tril(g, k),),
          linear=True)
TRIU = Op("triu", lambda x, k: np.triu(x, k), lambda ns, g, need, k: (ns.triu(g, k),),
          linear=True)
ns_fn("tril", np.tril, lambda g, k: apply(TRIL, (g,), (k,)))
ns_fn("triu", np.triu, lambda g, k: apply(TRIU, (g,), (k,)))


def _tri(name, op, input: Tensor, diagonal, in_place=False) -> Tensor:
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    if in_place:
        return inplace(op, input, (), (int(diagonal),))
    return apply(op, (input,), (int(diagonal),))


def _diag_out(input: Tensor):
    """diag's out= dtype check: a 1-D input's result may not be cast down with its own words."""
    def check(rd, od) -> None:
        from ._out import _CPP, EXACT
        if input._data.ndim == 1 and not D.can_cast(rd, od):
            raise RuntimeError(f"diag: result type {_type_name(rd)} can't be cast to the desired "
                               f"out= type {_type_name(od)}")
        raise RuntimeError(EXACT.format(rc=_CPP[rd.name], oc=_CPP[od.name]))
    return check


def tril(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """``torch.tril``: the lower triangle (of the last two dims), the rest zero."""
    if out is not None:
        return with_out(tril, out, (input, diagonal), dtype="exact")
    return _tri("tril", TRIL, input, diagonal)


def triu(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """``torch.triu``: the upper triangle."""
    if out is not None:
        return with_out(triu, out, (input, diagonal), dtype="exact")
    return _tri("triu", TRIU, input, diagonal)


# ---- diag / diag_embed / diagflat / trace --------------------------------------------------

def _diag_embed_np(x, offset, d1, d2):
    n = x.shape[-1] + abs(offset)
    shape = list(x.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    z = np.zeros(shape, x.dtype)
    zz = np.moveaxis(z, (d1, d2), (-2, -1))
    i = np.arange(x.shape[-1])
    zz[..., i + max(-offset, 0), i + max(offset, 0)] = x
    return z


def _diag_embed_vjp(ns, g, need, offset, d1, d2):
    return (ns.diagonal_of(g, offset, d1, d2),)


DIAG_EMBED = Op("diag_embed", _diag_embed_np, _diag_embed_vjp, linear=True)
ns_fn("diagonal_of", lambda g, offset, d1, d2: np.diagonal(g, offset, d1, d2),
      lambda g, offset, d1, d2: g.diagonal(offset, d1, d2))
DIAG_COPY = Op("diagonal_copy", lambda x, k, in_shape: np.diagonal(x, k).copy(),
               lambda ns, g, need, k, in_shape: (ns.diagonal_backward(g, in_shape, k, 0, 1),),
               linear=True, node="DiagonalBackward0_copy")


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``torch.diag_embed``: the last dim of ``input`` on a diagonal of new dims (dim1, dim2)."""
    n = input._data.ndim + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    x = input if input._data.ndim else input.reshape(1)
    return apply(DIAG_EMBED, (x,), (int(offset), d1, d2))


def diag(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """``torch.diag``: a 1-D input on a matrix diagonal, or a 2-D input's diagonal (a copy)."""
    if out is not None:
        return with_out(diag, out, (input, diagonal), dtype=_diag_out(input),
                        differentiable=False)
    nd = input._data.ndim
    if nd == 1:
        return apply(DIAG_EMBED, (input,), (int(diagonal), 0, 1))
    if nd == 2:
        return apply(DIAG_COPY, (input,), (int(diagonal), input._data.shape))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """``torch.diagflat``: the flattened input on a diagonal."""
    return apply(DIAG_EMBED, (input.reshape(-1),), (int(offset), 0, 1))


def _trace_fwd(x, npd):
    return np.asarray(np.trace(x, dtype=npd))


def _trace_vjp(ns, g, need, npd, in_shape):
    k = min(in_shape)
    return (ns.diagonal_backward(ns.expand_to(g, (k,)), in_shape, 0, 0, 1),)


TRACE = Op("trace", lambda x, npd, in_shape: _trace_fwd(x, npd), _trace_vjp, linear=True)


def trace(input: Tensor) -> Tensor:
    """``torch.trace``: the sum of a matrix's main diagonal (int64 for integer input)."""
    x = input._data
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    if x.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    npd = np.dtype(np.int64) if x.dtype.kind in "iu" else x.dtype
    return apply(TRACE, (input,), (npd, x.shape))


# ---- cross ---------------------------------------------------------------------------------

def _cross_np(a, b, dim):
    # (PyTorch's linalg_cross allocates a plain row-major result)
    return _L.contiguous_np(np.cross(a, b, axisa=dim, axisb=dim, axisc=dim))


def _cross_vjp(ns, g, need, a, b, dim):
    return (ns.cross(ns.conj(b), g, dim) if need[0] else None,
            ns.cross(g, ns.conj(a), dim) if need[1] else None)


def _cross_jvp(ns, tangents, primals, outs, dim):
    ta, tb = tangents
    a, b = primals
    r = None
    if ta is not None:
        r = ns.cross(ta, b, dim)
    if tb is not None:
        s = ns.cross(a, tb, dim)
        r = s if r is None else r + s
    return r


CROSS = Op("linalg_cross", _cross_np, _cross_vjp, _cross_jvp, saves=(0, 1))
ns_fn("cross", _cross_np, lambda a, b, dim: apply(CROSS, (a, b), (dim,)))


def cross(input: Tensor, other: Tensor, dim=None, *, out=None) -> Tensor:
    """``torch.cross``: the 3-vector cross product along ``dim`` (without ``dim``: the first dim
    of size 3, with PyTorch's deprecation warning), broadcasting the other dims."""
    if out is not None:
        return with_out(cross, out, (input, other, dim), dtype="exact", name="linalg_cross")
    shape = input._data.shape
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
            "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
            "change to agree with that of linalg.cross in a future release.", UserWarning,
            stacklevel=2)
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if input._data.ndim != other._data.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(int(dim), len(shape))
    sa, sb = shape[d], other._data.shape[d]
    if sa != 3 or sb != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {sa} "
                           f"and {sb}")
    check_broadcast(shape, other._data.shape)
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found "
                           f"{_type_name(other.dtype)}")
    return apply(CROSS, (input, other), (d,))


# ---- kron / tensordot ----------------------------------------------------------------------

UNSAFE_VIEW = Op("unsafe_view", lambda x, in_shape, shape: x.reshape(shape),
                 lambda ns, g, need, in_shape, shape: (g.reshape(in_shape),), linear=True)


def kron(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``torch.kron``: the Kronecker product (an UnsafeViewBackward0 over a product, as in
    PyTorch)."""
    if out is not None:
        return with_out(kron, out, (input, other))
    n = max(input._data.ndim, other._data.ndim)
    sa = (1,) * (n - input._data.ndim) + input._data.shape
    sb = (1,) * (n - other._data.ndim) + other._data.shape
    a = input.reshape(tuple(v for s in sa for v in (s, 1)))
    b = other.reshape(tuple(v for s in sb for v in (1, s)))
    p = a * b
    shape = tuple(x * y for x, y in zip(sa, sb))
    return apply(UNSAFE_VIEW, (p,), (p._data.shape, shape))


def _dims_list(d) -> list:
    if isinstance(d, Tensor):
        d = d._data.tolist()
    if isinstance(d, numbers.Integral):
        return [int(d)]
    return [int(v) for v in d]


def tensordot(a: Tensor, b: Tensor, dims=2, out=None) -> Tensor:
    """``torch.tensordot``: contract ``dims`` (the last/first ``dims`` dims, or two lists)."""
    if out is not None:
        return with_out(tensordot, out, (a, b, dims), differentiable=False, dtype=(
            "tensordot: Expected the output tensor to have dtype {r}, but got an output tensor "
            "with dtype {o}"))
    na, nb = a._data.ndim, b._data.ndim
    if isinstance(dims, Tensor) and dims._data.ndim == 0:
        dims = int(dims._data)
    if isinstance(dims, numbers.Integral):
        dims = int(dims)
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(na, nb):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        d1, d2 = list(range(na - dims, na)), list(range(dims))
    else:
        if isinstance(dims, Tensor):
            dims = dims._data.tolist()
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be a pair of lists")
        d1, d2 = _dims_list(dims[0]), _dims_list(dims[1])
    if len(d1) != len(d2):
        raise RuntimeError("both dimension lists should have same length")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    d1 = [_wrap_dim(d, na) for d in d1]
    d2 = [_wrap_dim(d, nb) for d in d2]
    t1, t2 = a, b
    csize = 1
    for x, y in zip(d1, d2):
        s1, s2 = a._data.shape[x], b._data.shape[y]
        if s2 == 1:
            t1 = t1.sum(x, True)
        elif s1 == 1:
            t2 = t2.sum(y, True)
        else:
            if s1 != s2:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} "
                                   f"in dim {x} and second has size {s2} in dim {y}")
            csize *= s1
    keep1 = [i for i in range(na) if i not in d1]
    keep2 = [i for i in range(nb) if i not in d2]
    rsizes = [a._data.shape[i] for i in keep1] + [b._data.shape[i] for i in keep2]
    size1 = math.prod(a._data.shape[i] for i in keep1)
    size2 = math.prod(b._data.shape[i] for i in keep2)
    t1 = t1.permute(keep1 + d1).reshape(size1, csize)
    t2 = t2.permute(d2 + keep2).reshape(csize, size2)
    return (t1 @ t2).reshape(rsizes)


# ---- rot90 ---------------------------------------------------------------------------------

def _rot90_fwd(x, k, dims):
    """PyTorch's composition's layout: k = 0 a contiguous clone; otherwise a flip (laid out as
    empty_like(input)), transposed in place for odd k."""
    r = np.rot90(x, k, dims)
    if k == 0 or type(x) is not np.ndarray:
        return _L.contiguous_np(r.copy())
    st = list(_L.preserve_strides(x.shape, _L.torch_strides(x)))
    if k % 2:
        st[dims[0]], st[dims[1]] = st[dims[1]], st[dims[0]]
    return _L.copy_to_strides(r, st)


ROT90 = Op("rot90", _rot90_fwd,
           lambda ns, g, need, k, dims: (ns.rot90(g, -k, dims),), linear=True)
ns_fn("rot90", lambda g, k, dims: np.rot90(g, k, dims),
      lambda g, k, dims: apply(ROT90, (g,), (k, dims)))


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """``torch.rot90``: rotate by 90 degrees ``k`` times in the plane ``dims``."""
    dims = [int(d) for d in dims]
    n = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == n:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    ds = (_wrap_dim(dims[0], n), _wrap_dim(dims[1], n))
    if input._data.dtype.names is not None and input._data.size:
        # complex32 (ember._chalf): PyTorch's rot90 flips (dims[1], both, dims[0]), and its
        # kernel flipping the innermost dim has no ComplexHalf
        if n - 1 in {1: ds[1:], 2: ds, 3: ds[:1]}.get(int(k) % 4, ()):
            from .._chalf import refuse
            refuse("flip")
    return apply(ROT90, (input,), (int(k) % 4, ds))


# ---- block_diag ----------------------------------------------------------------------------

def _block_fwd(*args):
    *arrs, boxes, npd = args
    rows = sum(b[1] - b[0] for b in boxes)
    cols = sum(b[3] - b[2] for b in boxes)
    out = np.zeros((rows, cols), npd)
    for a, (r0, r1, c0, c1) in zip(arrs, boxes):
        out[r0:r1, c0:c1] = a.reshape(r1 - r0, c1 - c0)
    return out


def _block_vjp(ns, g, need, boxes, npd, shapes):
    return tuple(ns.basic_get(g, (slice(r0, r1), slice(c0, c1))).reshape(s) if n else None
                 for n, (r0, r1, c0, c1), s in zip(need, boxes, shapes))


BLOCK_DIAG = Op("block_diag", lambda *a: _block_fwd(*a[:-1]), _block_vjp, linear=True)


def block_diag(*tensors) -> Tensor:
    """``torch.block_diag``: the inputs (0-, 1- or 2-D) as blocks on a diagonal."""
    for i, t in enumerate(tensors):
        if t._data.ndim > 2:
            raise RuntimeError(f"ember.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t._data.ndim} dimensions")
    rt = (D.result_type_of(tuple(tensors)) if len(tensors) > 1 else
          tensors[0].dtype if tensors else D.get_default_dtype())
    boxes, r, c = [], 0, 0
    for t in tensors:
        s = t._data.shape
        h, w = (1, 1) if len(s) == 0 else (1, s[0]) if len(s) == 1 else s
        boxes.append((r, r + h, c, c + w))
        r += h
        c += w
    if not tensors:
        from .creation import empty
        return empty(1, 0)
    return apply(BLOCK_DIAG, tuple(tensors),
                 (tuple(boxes), rt.np, tuple(t._data.shape for t in tensors)))


# ---- meshgrid / cartesian_prod / combinations ----------------------------------------------

def _tensor_args(tensors) -> list:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """``torch.meshgrid``: coordinate grids from 0-/1-D tensors (views made by expand)."""
    ts = _tensor_args(tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in ts[1:]:
        if t._data.dtype != ts[0]._data.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    for t in ts:
        if t._data.ndim > 1:
            raise RuntimeError("ember.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f'ember.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t._data.size for t in ts)
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        grids.append(t.reshape(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _check_1d(t: Tensor) -> None:
    if t._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")


def cartesian_prod(*tensors) -> Tensor:
    """``torch.cartesian_prod``: all combinations of the inputs' elements, one per row."""
    ts = _tensor_args(tensors)
    for t in ts:
        _check_1d(t)
    if len(ts) == 1:
        return ts[0]
    from .joining import stack
    return stack([g.flatten() for g in meshgrid(*ts, indexing="ij")], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """``torch.combinations``: the length-``r`` subsequences of a 1-D tensor, one per row."""
    _check_1d(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        from .creation import empty
        return empty(0, dtype=input.dtype)
    n = input._data.shape[0]
    gen = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = np.array(list(gen(range(n), r)), np.int64).reshape(-1, r)
    from .joining import stack
    return stack([input[idx[:, j]] for j in range(r)], 1)


# ---- broadcasting --------------------------------------------------------------------------

def broadcast_shapes(*shapes) -> Size:
    """``torch.broadcast_shapes``: the shape all ``shapes`` broadcast to."""
    shapes = tuple((s,) if isinstance(s, numbers.Integral) else s for s in shapes
                   if s is not None)
    if not shapes:
        return Size(())
    for s in shapes:
        if not isinstance(s, (tuple, list)):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {s}")
    common = [1] * max(len(s) for s in shapes)
    for k, s in enumerate(shapes):
        for i in range(-1, -1 - len(s), -1):
            if s[i] == common[i]:
                continue
            if common[i] == 1:
                if s[i] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[i] = s[i]
            if s[i] == 1:
                continue
            if common[i] != s[i]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {s[i]} at {i}! Mismatching "
                    f"argument at index {k} had {s}; but expected shape should be broadcastable "
                    f"to {common}")
    return Size(tuple(common))


def broadcast_tensors(*tensors) -> tuple:
    """``torch.broadcast_tensors``: each input expanded to the common shape (itself when it
    already has it)."""
    ts = _tensor_args(tensors)
    check_broadcast(*[t._data.shape for t in ts])
    shape = np.broadcast_shapes(*[t._data.shape for t in ts])
    return tuple(t if t._data.shape == shape else t.expand(shape) for t in ts)


def _atleast(n, tensors):
    ts = _tensor_args(tensors)
    one = len(tensors) == 1 and isinstance(tensors[0], Tensor)

    def f(t):
        nd = t._data.ndim
        if nd >= n:
            return t
        if nd == 0:
            return t.reshape((1,) * n)
        if n == 2:
            return t.unsqueeze(0)
        return t.unsqueeze(0).unsqueeze(-1) if nd == 1 else t.unsqueeze(-1)

    res = tuple(f(t) for t in ts)
    return res[0] if one else res


def atleast_1d(*tensors):
    """``torch.atleast_1d``: the input itself if already >= 1-D, else a 1-element view."""
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    """``torch.atleast_2d``."""
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    """``torch.atleast_3d``: 1-D inputs become (1, n, 1), 2-D ones (m, n, 1)."""
    return _atleast(3, tensors)


# ---- cdist / dist --------------------------------------------------------------------------

def _pdiff(x1, x2):
    return x1[..., :, None, :] - x2[..., None, :, :]


def _cdist_np(x1, x2, p):
    d = np.abs(_pdiff(x1, x2))
    if p == 0:
        return np.sum(d != 0, axis=-1).astype(d.dtype)
    if p == 1:
        return np.sum(d, axis=-1)
    if p == 2:
        return np.sqrt(np.sum(d * d, axis=-1))
    if p == _INF:
        return np.max(d, axis=-1, initial=0)
    return np.sum(d ** p, axis=-1) ** (1.0 / p)


def _cdist_grad_np(g, x1, x2, out, p):
    """PyTorch's _cdist_backward for both inputs: the per-pair gradient summed over the other
    set of rows."""
    if p == 0 or x1.size == 0 or x2.size == 0:
        return np.zeros_like(x1), np.zeros_like(x2)
    diff = _pdiff(x1, x2)
    dist = out[..., None]
    gg = g[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 1:
            r = gg * np.sign(diff)
        elif p == 2:
            r = np.where(dist == 0, 0, gg * diff / dist)
        elif p == _INF:
            r = gg * np.sign(diff) * (np.abs(diff) == dist)
        elif p < 1:
            r = np.where((diff == 0) | (dist == 0), 0,
                         np.sign(diff) * np.abs(diff) ** (p - 1) * gg / dist ** (p - 1))
        else:
            r = np.where(dist == 0, 0, diff * np.abs(diff) ** (p - 2) * gg / dist ** (p - 1))
    return r.sum(-2).astype(x1.dtype), (-r.sum(-3)).astype(x2.dtype)


def _cdist_back_vjp(ns, g, need, *rest):
    raise NotImplementedError("the derivative for '_cdist_backward' is not implemented.")


CDIST_BACK = Op("cdist_backward", _cdist_grad_np, _cdist_back_vjp, n_out=2,
                node="NotImplemented")
ns_fn("cdist_grad", _cdist_grad_np,
      lambda g, x1, x2, out, p: apply(CDIST_BACK, (g, x1, x2, out), (p,)))


def _cdist_vjp(ns, g, need, x1, x2, out, p):
    return ns.cdist_grad(g, x1, x2, out, p)


def _no_fwd_ad(name):
    def jvp(ns, tangents, primals, outs, *params):
        raise NotImplementedError(
            f"Trying to use forward AD with {name} that does not support it because it has not "
            "been implemented yet.\nPlease file an issue to PyTorch at "
            "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
            "we can prioritize its implementation or submit a PR adding the implementation to "
            "derivatives.yaml")
    return jvp


CDIST = Op("cdist", _cdist_np, _cdist_vjp, _no_fwd_ad("_cdist_forward"), saves=(0, 1),
           save_out=True)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode=None) -> Tensor:
    """``torch.cdist``: p-norm distances between the rows of ``x1`` and ``x2`` (batched).
    Always the direct (CdistBackward0) computation, never PyTorch's matmul route."""
    if x1._data.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1._data.ndim}D")
    if x2._data.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2._data.ndim}D")
    c1, c2 = x1._data.shape[-1], x2._data.shape[-1]
    if c1 != c2:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {c1} X2: {c2}")
    for name, t in (("X1", x1), ("X2", x2)):
        if t._data.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_type_name(t.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1._data.dtype != x2._data.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(x1.dtype)} but found "
                           f"{_type_name(x2.dtype)}")
    check_broadcast(x1._data.shape[:-2], x2._data.shape[:-2])
    return apply(CDIST, (x1, x2), (float(p),))


def _dist_fwd(a, b, p):
    return np.asarray(_norm_fwd(a - b, None, False, p))


def _dist_vjp(ns, g, need, a, b, out, p):
    gd = _norm_vjp(ns, g, (True,), a - b, out, None, False, p)[0]
    if gd is None:
        if need[1]:   # (PyTorch's formula for other negates p=0's undefined gradient)
            raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor "
                               "in C++) for argument #0 'self'")
        return (None, None)
    return (gd if need[0] else None, -gd if need[1] else None)


def _dist_jvp(ns, tangents, primals, outs, p):
    ta, tb = tangents
    a, b = primals
    t = ta if tb is None else (-tb if ta is None else ta - tb)
    f = _norm_vjp(ns, _ones_em(outs[0]), (True,), a - b, outs[0], None, False, p)[0]
    if f is None:
        return ns.zeros_of(outs[0], ())
    return ns.real_of(ns.conj(f) * t).sum()   # the norm's (real) tangent


DIST = Op("dist", _dist_fwd, _dist_vjp, _dist_jvp, saves=(0, 1), save_out=True)


def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    """``torch.dist``: the p-norm of ``input - other`` (broadcast)."""
    from ._dispatch import to_operand
    other = to_operand(other)
    a, b, rt = promoted(input, other)
    if np.dtype(rt).kind not in "fc" and rt is not D.complex32.np:   # (complex32: ember._chalf)
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_type_name(D._FROM_NP[np.dtype(rt)])} instead.")
    check_broadcast(np.shape(a), np.shape(b))
    ia = input if input._data.dtype == rt else input.to(D._FROM_NP[np.dtype(rt)])
    ib = other if other._data.dtype == rt else other.to(D._FROM_NP[np.dtype(rt)])
    return apply(DIST, (ia, ib), (float(p),))


# ---- vander --------------------------------------------------------------------------------

def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """``torch.vander``: powers of ``x`` as columns (decreasing unless ``increasing``), built
    as PyTorch builds it (slice copies of x and of its cumprod; like PyTorch's, its backward
    then fails: the cumprod's saved input was overwritten)."""
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    from .creation import empty
    k = x._data.dtype.kind
    dt = x.dtype if k in "fc" or x.dtype is D.bfloat16 else D.int64
    result = empty(x._data.shape[0], n, dtype=dt)
    if n > 0:
        result.fill_(1)
    if n > 1:
        result[:, 1:] = x.unsqueeze(1)
        s = result[:, 1:]
        s.copy_(s.cumprod(1))
    if not increasing:
        from .joining import flip
        return flip(result, (1,))
    return result


# ---- renorm --------------------------------------------------------------------------------

def _renorm_dims(shape, dim):
    return tuple(i for i in range(len(shape)) if i != dim)


def _renorm_fwd(x, p, dim, maxnorm):
    dims = _renorm_dims(x.shape, dim)
    nrm = _norm_fwd(x, dims, True, p)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(nrm > maxnorm, maxnorm / (nrm + 1e-7), 1).astype(x.dtype)
    return x * factor


ns_fn("vnorm", lambda x, dims, p: _norm_fwd(x, dims, True, p),
      lambda x, dims, p: apply(NORM, (x,), (dims, True, p)))


def _renorm_vjp(ns, g, need, x, p, dim, maxnorm):
    # PyTorch's renorm_backward
    dims = _renorm_dims(x.shape, dim)
    nrm = ns.vnorm(x, dims, p)
    # the norm is real: only the real part of conj(x) * g reaches it (complex inputs)
    go = ns.sum_dims(ns.real_of(ns.conj(x) * g), dims, True)
    nb = _norm_vjp(ns, go, (True,), x, nrm, dims, True, p)[0]
    inv = 1 / (nrm + 1e-7)
    factor = inv * maxnorm
    big = ns.data_fn(np.greater, nrm, maxnorm)
    return (ns.where(big, factor * g - factor * inv * nb, g),)


def _renorm_jvp(ns, tangents, primals, outs, p, dim, maxnorm):
    x, t = primals[0], tangents[0]
    dims = _renorm_dims(x.shape, dim)
    nrm = ns.vnorm(x, dims, p)
    f = _norm_vjp(ns, _ones_em(nrm), (True,), x, nrm, dims, True, p)[0]
    nj = ns.sum_dims(ns.real_of(ns.conj(f) * t), dims, True)   # the norm's (real) tangent
    inv = 1 / (nrm + 1e-7)
    factor = inv * maxnorm
    big = ns.data_fn(np.greater, nrm, maxnorm)
    return ns.where(big, factor * (t - x * inv * nj), t)


RENORM = Op("renorm", _renorm_fwd, _renorm_vjp, _renorm_jvp, saves=(0,))


def _renorm_args(input: Tensor, p, dim, maxnorm):
    if float(p) <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if float(maxnorm) < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    nd = input._data.ndim
    if nd <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {nd} dimensions")
    if not _is_float(input):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_type_name(input.dtype)}")
    return (float(p), _wrap_dim(int(dim), nd), float(maxnorm))


def renorm(input: Tensor, p, dim: int, maxnorm, *, out=None) -> Tensor:
    """``torch.renorm``: each slice along ``dim`` whose p-norm exceeds ``maxnorm`` is scaled
    down to norm ``maxnorm``."""
    if out is not None:
        return with_out(renorm, out, (input, p, dim, maxnorm), dtype="exact")
    return apply(RENORM, (input,), _renorm_args(input, p, dim, maxnorm))


def _renorm_(self: Tensor, p, dim: int, maxnorm) -> Tensor:
    return inplace(RENORM, self, (), _renorm_args(self, p, dim, maxnorm))


# ---- Tensor methods ------------------------------------------------------------------------

for _name, _fn in [("tril", tril), ("triu", triu), ("diag", diag), ("diag_embed", diag_embed),
                   ("diagflat", diagflat), ("trace", trace), ("cross", cross), ("kron", kron),
                   ("rot90", rot90), ("dist", dist), ("renorm", renorm), ("renorm_", _renorm_)]:
    method(_name, _fn)
method("tril_", lambda self, diagonal=0: _tri("tril", TRIL, self, diagonal, True))
method("triu_", lambda self, diagonal=0: _tri("triu", TRIU, self, diagonal, True))
