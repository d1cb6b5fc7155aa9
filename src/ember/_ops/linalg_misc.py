"""The compositions of torch.linalg: vector_norm, matrix_norm, norm, cond, matrix_rank,
multi_dot, vecdot, vander, diagonal, cross, tensorinv and tensorsolve.

Each is arranged as PyTorch's C++ composition arranges it (vector_norm + amax for the 1/inf
matrix norms, svdvals + sum for the nuclear norm, mm chains for multi_dot, cumprod + cat for
vander, ...), so nodes, gradients and tangents follow from the ops they are made of.
"""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor, _wrap_dim
from ._dispatch import _type_name
from .linalg_base import check_float, check_matrix, check_square, const

_INF = math.inf


def _E():
    from .. import _ops
    return _ops


# ---- norms ---------------------------------------------------------------------------------

def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``torch.linalg.vector_norm``: the ord-norm of the entries over ``dim`` (all by
    default)."""
    from ._registry import apply
    from .reduction import NORM, check_empty_norm, dims_arg
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_type_name(x.dtype)}")
    if dtype is not None:
        from .. import _dtype as D
        if x.is_complex() != dtype.is_complex:
            kind = "complex" if x.is_complex() else "real"
            raise RuntimeError(f"linalg.vector_norm: dtype should be {kind} for {kind} inputs, "
                               f"but got {_type_name(dtype)}")
        if D.promote_types(x.dtype, dtype) is not dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input "
                               f"({_type_name(x.dtype)}) should be convertible without narrowing "
                               f"to the specified dtype ({_type_name(dtype)})")
        x = x.to(dtype)
    p = float(ord)
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    dims = dims_arg(dim, x._data.ndim)
    check_empty_norm(x, p, dim)
    if dims is None and x._data.ndim and not keepdim:
        return apply(NORM, (x,), (None, False, p))
    return apply(NORM, (x,), (dims, keepdim, p))


def _mat_dims(A: Tensor, dim, fname="linalg.matrix_norm"):
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"{fname}: dim must be a 2-tuple. Got {_fmt(dim)}")
    nd = A._data.ndim
    d0, d1 = _wrap_dim(int(dim[0]), nd), _wrap_dim(int(dim[1]), nd)
    if d0 == d1:
        raise RuntimeError(f"{fname}: dims must be different. Got ({d0}, {d1})")
    return d0, d1


def _fmt(dim):
    if isinstance(dim, (tuple, list)):
        return "[" + ", ".join(str(d) for d in dim) + "]"
    return str(dim)


def _backshift(A: Tensor, d0: int, d1: int):
    nd = A._data.ndim
    perm = [i for i in range(nd) if i not in (d0, d1)] + [d0, d1]
    return perm


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *,
                dtype=None) -> Tensor:
    """``torch.linalg.matrix_norm``: 'fro', 'nuc', ±1, ±2, ±inf over the two dims ``dim``."""
    check_matrix(A, "linalg.matrix_norm")
    chalf = A._data.dtype.names is not None   # complex32 pairs (ember._chalf)
    if A._data.dtype.kind not in "fc" and not chalf:
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_type_name(A.dtype)}")
    d0, d1 = _mat_dims(A, dim)
    E = _E()
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        if ord == "nuc" and chalf:
            _low_precision()
        if ord == "fro":
            return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
        A_ = A.to(dtype) if dtype is not None else A
        perm = _backshift(A_, d0, d1)
        from .linalg_decomp import svdvals
        r = svdvals(A_.permute(perm)).sum(-1, keepdim)
        if keepdim:
            r = r.unsqueeze(-1).permute(list(np.argsort(perm)))
        return r
    o = float(ord)
    ao = abs(o)
    if ao not in (1.0, 2.0, _INF):
        raise RuntimeError(f"linalg.matrix_norm: Order {_num(ord)} not supported.")
    if ao == 2.0 and chalf:
        _low_precision()
    def mm(t, d):
        return E.amax(t, d, keepdim) if o > 0 else E.amin(t, d, keepdim)
    if ao == 2.0:
        A_ = A.to(dtype) if dtype is not None else A
        perm = _backshift(A_, d0, d1)
        from .linalg_decomp import svdvals
        r = mm(svdvals(A_.permute(perm)), -1)
        if keepdim:
            r = r.unsqueeze(-1).permute(list(np.argsort(perm)))
        return r
    if ao == _INF:
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    return mm(vector_norm(A, 1.0, d0, keepdim, dtype=dtype), d1)


def _low_precision():
    # (PyTorch's SVD-based matrix norms refuse half precision; the others take complex32)
    raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. Got ComplexHalf")


def _num(o):
    return str(o) if isinstance(o, int) else f"{float(o):g}"


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``torch.linalg.norm``: a matrix norm for 2 dims (or a 2-D input with ``ord``), else a
    vector norm."""
    if dim is not None:
        if isinstance(dim, (int, np.integer)):
            dim = (int(dim),)
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {_fmt(dim)}")
    elif ord is not None and A._data.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A._data.ndim}D.")
    if ord is not None and ((dim is not None and len(dim) == 2) or
                            (dim is None and A._data.ndim == 2)):
        return matrix_norm(A, ord, tuple(dim) if dim is not None else (0, 1), keepdim,
                           dtype=dtype)
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        return matrix_norm(A, ord, tuple(dim) if dim is not None else (), keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cond(A: Tensor, p=None) -> Tensor:
    """``torch.linalg.cond``: the condition number in the p-norm (2 by default, through the
    singular values; otherwise ``norm(A) * norm(inv(A))``)."""
    if A._data.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    E = _E()
    o = 2 if p is None else p
    if isinstance(o, str):
        if o not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {o}")
    elif float(o) not in (1.0, -1.0, 2.0, -2.0, _INF, -_INF):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_num(o)}")
    if A._data.dtype.names is not None:
        return _cond_chalf(A, o)
    check_float(A, "linalg.cond")
    if A._data.size == 0:
        rdt = np.empty((), A._data.dtype).real.dtype
        return const(np.zeros(A._data.shape[:-2], rdt))
    if not isinstance(o, str) and abs(float(o)) == 2.0:
        from .linalg_decomp import svdvals
        s = svdvals(A)
        smax, smin = s.narrow(-1, 0, 1), s.narrow(-1, s._data.shape[-1] - 1, 1)
        r = E.div(smin, smax) if float(o) == -2.0 else E.div(smax, smin)
        return r.squeeze(-1)
    check_square(A, f"linalg.cond(ord={o if isinstance(o, str) else int(float(o))})")
    from .linalg_solve import inv_ex
    inverse, info = inv_ex(A)
    bad = info._data > 0
    if bad.any():
        inverse = E.where(const(bad[..., None, None]), _INF, inverse)
    r = matrix_norm(A, o) * matrix_norm(inverse, o)
    return E.nan_to_num(r, _INF, _INF, -_INF)


def _cond_chalf(A: Tensor, o):
    """``linalg.cond`` of complex32 (ember._chalf), as far as PyTorch gets: an empty input's
    zeros (float16), else its refusal from the SVD or from ``linalg.inv``."""
    if isinstance(o, str):   # (a string order checks squareness before emptiness)
        check_square(A, f"linalg.cond(ord={o})")
    if A._data.size == 0:
        return const(np.zeros(A._data.shape[:-2], np.float16))
    if isinstance(o, str) and o == "nuc" or not isinstance(o, str) and abs(float(o)) == 2.0:
        raise NotImplementedError("\"linalg_svd_cpu\" not implemented for 'ComplexHalf'")
    if not isinstance(o, str):
        check_square(A, f"linalg.cond(ord={int(float(o)) if abs(float(o)) != _INF else o})")
    raise RuntimeError("linalg.inv: Low precision dtypes not supported. Got ComplexHalf")


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None,
                rtol=None) -> Tensor:
    """``torch.linalg.matrix_rank``: the number of singular values (eigenvalue moduli when
    ``hermitian``) above max(atol, rtol * largest)."""
    check_matrix(A, "ember.linalg.matrix_rank")
    check_float(A, "ember.linalg.matrix_rank")
    if isinstance(tol, bool):
        hermitian, tol = tol, None
    if tol is not None:
        atol, rtol = tol, 0.0
    a = A._data
    m, n = a.shape[-2:]
    if a.size == 0:
        return const(np.zeros(a.shape[:-2], np.int64))
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    rd = s.dtype
    at = 0.0 if atol is None else (atol._data if isinstance(atol, Tensor) else atol)
    if rtol is None:
        rt_ = np.finfo(rd).eps * max(m, n) if atol is None or (
            np.ndim(at) == 0 and at <= 0) else 0.0
    else:
        rt_ = rtol._data if isinstance(rtol, Tensor) else rtol
    smax = s.max(axis=-1)
    tolv = np.maximum(np.asarray(at, rd), np.asarray(rt_, rd) * smax)
    return const(np.sum(s > tolv[..., None], axis=-1).astype(np.int64))


# ---- products ------------------------------------------------------------------------------

def multi_dot(tensors) -> Tensor:
    """``torch.linalg.multi_dot``: the chain product in the cheapest order (PyTorch's order
    search), 1-D ends as row / column vectors."""
    E = _E()
    ts = list(tensors)
    n = len(ts)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = ts[0]._data.ndim, ts[-1]._data.ndim
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i in range(1, n - 1):
        if ts[i]._data.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got "
                               f"{ts[i]._data.ndim}D")
    dt = ts[0].dtype
    for i, t in enumerate(ts[1:], 1):
        if t.dtype is not dt:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {_type_name(dt)} and tensor {i} {_type_name(t.dtype)}")
    if first == 1:
        ts[0] = ts[0].unsqueeze(0)
    if last == 1:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i in range(n - 1):
        a, b = ts[i]._data.shape, ts[i + 1]._data.shape
        if a[1] != b[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"[{a[0]}, {a[1]}] and [{b[0]}, {b[1]}] cannot be multiplied")
    if n == 2:
        r = E.mm(ts[0], ts[1])
    elif n == 3:
        a, b = ts[0]._data.shape[0], ts[1]._data.shape[0]
        c, d = ts[2]._data.shape
        cost1 = (a * c) * (b + d)
        cost2 = (b * d) * (a + c)
        r = E.mm(ts[0], E.mm(ts[1], ts[2])) if cost1 > cost2 else \
            E.mm(E.mm(ts[0], ts[1]), ts[2])
    else:
        r = _chain(ts, E)
    if first == 1 and last == 1:
        return r.view(())
    if first == 1 or last == 1:
        return r.view(-1)
    return r.view(tuple(r._data.shape))   # PyTorch ends every chain with a view


def _chain(ts, E):
    n = len(ts)
    p = [ts[0]._data.shape[0]] + [t._data.shape[1] for t in ts]
    cost = [[0] * n for _ in range(n)]
    order = [[0] * n for _ in range(n)]
    for ln in range(1, n):
        for i in range(n - ln):
            j = i + ln
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j] = q
                    order[i][j] = k

    def go(i, j):
        if i == j:
            return ts[i]
        k = order[i][j]
        return E.mm(go(i, k), go(k + 1, j))
    return go(0, n - 1)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """``torch.linalg.vecdot``: sum(conj(x) * y) over ``dim`` (vdot for two vectors)."""
    check_float(x, "linalg.vecdot")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {_type_name(x.dtype)} and y of type "
                           f"{_type_name(y.dtype)} instead")
    E = _E()
    if x._data.ndim == 1 and y._data.ndim == 1:
        return E.vdot(x, y)
    return (x.conj() * y).sum(dim)


def vander(x: Tensor, *, N=None) -> Tensor:
    """``torch.linalg.vander``: columns x^0, x^1, ..., x^(N-1) (ones, then a cumprod)."""
    E = _E()
    if x._data.dtype.kind not in "fciu":
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {_type_name(x.dtype)}")
    x_ = x.unsqueeze(-1) if x._data.ndim == 0 else x
    shape = list(x_._data.shape)
    n = shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    shape.append(n - 1)
    r = E.cumprod(x_.unsqueeze(-1).expand(tuple(shape)), -1)
    shape[-1] = 1
    ones = r.new_ones(tuple(shape))
    return E.cat([ones, r], -1)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``torch.linalg.diagonal``: ``torch.diagonal`` over the last two dims by default."""
    return _E().diagonal(A, offset, dim1, dim2)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """``torch.linalg.cross``: the cross product along ``dim`` (default -1)."""
    return _E().cross(input, other, dim)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """``torch.linalg.tensorinv``: the inverse of A seen as a map from its first ``ind`` dims
    to the rest."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = A._data.shape
    end, start = shape[ind:], shape[:ind]
    pe, ps = int(np.prod(end)), int(np.prod(start))
    if pe != ps:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {pe} != {ps}")
    from ._registry import apply
    from .linalg_base import raise_info
    from .linalg_solve import _inv_msg, inv_ex
    from .views import RESHAPE_ALIAS
    r, info = inv_ex(A.reshape(pe, pe))
    raise_info(info._data, _inv_msg)
    return apply(RESHAPE_ALIAS, (r,), (r._data.shape, tuple(end) + tuple(start)))


def tensorsolve(A: Tensor, B: Tensor, dims=None) -> Tensor:
    """``torch.linalg.tensorsolve``: X with tensordot(A, X, X.ndim) = B."""
    nd = A._data.ndim
    A_ = A
    if dims is not None:
        src = [_wrap_dim(int(d), nd) for d in dims]
        A_ = A.movedim(src, list(range(nd - len(src), nd)))
    rshape = A_._data.shape[B._data.ndim:]
    rp = int(np.prod(rshape))
    op = int(np.prod(B._data.shape))
    if rp != op:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           f"]) == prod(self.shape[:other.ndim]), but got {rp} != {op}")
    from .linalg_solve import solve
    r = solve(A_.reshape(rp, rp), B.flatten())
    return r.view(tuple(rshape))

