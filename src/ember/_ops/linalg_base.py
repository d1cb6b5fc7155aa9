"""Shared pieces of the linear-algebra operators: input checks with PyTorch's messages, the
``LinAlgError`` class, LAPACK calls per batch element (for the ``info`` codes PyTorch reports),
the ``ns`` helpers the VJP formulas use, named result types, and a forward rule derived from a
VJP.

The derived forward rule (``jvp_by_transpose``) uses that a VJP is the adjoint of the JVP under
PyTorch's real inner product ``Re <u, v>``: running the VJP (written with ember ops) on a zero
cotangent that requires grad, pairing the result with the input tangents and differentiating
that scalar with respect to the cotangent gives the output tangents. Every formula is then
written once (the VJP) and still serves forward mode.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as _sla

from .. import _dtype as D
from .. import _layout as _L
from .._tensor import Tensor, Version, _make
from ._dispatch import _type_name
from ._registry import EM, apply, ns_fn
from .reduction import _structseq, return_types


class _LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError`` (``torch._C._LinAlgError``): a linear-algebra routine failed
    on its input (a singular or non positive-definite matrix); a RuntimeError as in PyTorch."""


LinAlgError = _LinAlgError


# ---- checks --------------------------------------------------------------------------------

# the functions whose complex32 input reaches a kernel without ComplexHalf (PyTorch 2.13)
_CHALF_KERNEL = {
    "cholesky": "cholesky_cpu", "linalg.cholesky": "cholesky_cpu",
    "cholesky_inverse": "cholesky_inverse_out_cpu", "cholesky_solve": "cholesky_solve_cpu",
    "ember.linalg.ldl_factor_ex": "ldl_factor_kernel_cpu", "geqrf": "geqrf_cpu",
    "linalg.qr": "geqrf_cpu", "linalg.lu": "lu_cpu", "linalg.lu_factor": "lu_cpu",
    "linalg.lu_factor_ex": "lu_cpu", "linalg.det": "lu_cpu", "linalg.solve": "lu_cpu",
    "linalg.solve_triangular": "triangular_solve_cpu", "triangular_solve": "triangular_solve_cpu",
    "linalg.vecdot": "sum_cpu", "linalg.matrix_exp": "bmm",
}


def check_float(t: Tensor, fname: str) -> None:
    """Integer (and bool) inputs are refused, as PyTorch's linalg functions do."""
    if t._data.dtype.kind not in "fc" and t.dtype is not D.bfloat16:
        if t.dtype is D.complex32:   # (PyTorch's linalg refuses half precision so)
            k = _CHALF_KERNEL.get(fname)
            if k is not None:   # (or its kernel has no ComplexHalf)
                raise NotImplementedError(f"\"{k}\" not implemented for 'ComplexHalf'")
            if fname in ("linalg.lstsq", "ember.linalg.matrix_rank"):
                raise RuntimeError("This function doesn't handle types other than float and "
                                   "double")
            raise RuntimeError(f"{fname}: Low precision dtypes not supported. Got ComplexHalf")
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(t.dtype)}")


def check_matrix(t: Tensor, fname: str, name: str = "A") -> None:
    if t._data.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor {name} must have at least 2 dimensions.")


def check_square(t: Tensor, fname: str, name: str = "A") -> None:
    check_matrix(t, fname, name)
    s = t._data.shape
    if s[-1] != s[-2]:
        raise RuntimeError(f"{fname}: {name} must be batches of square matrices, but they are "
                           f"{s[-2]} by {s[-1]} matrices")


def check_same_dtype(a: Tensor, b: Tensor, fname: str, na: str = "A", nb: str = "B") -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{fname}: Expected {na} and {nb} to have the same dtype, but found "
                           f"{na} of type {_type_name(a.dtype)} and {nb} of type "
                           f"{_type_name(b.dtype)} instead")


def batch_prefix(info: np.ndarray) -> tuple:
    """(flat index of the first failing batch element, its info, the message prefix)."""
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    i = int(bad[0])
    pre = f"(Batch element {i}): " if info.ndim else ""
    return i, int(flat[i]), pre


def raise_info(info: np.ndarray, make_msg, cls=None) -> None:
    """Raise LinAlgError (or ``cls``) for the first non-zero ``info``
    (``make_msg(prefix, code)``)."""
    if info.size and info.any():
        _, code, pre = batch_prefix(info)
        raise (cls or LinAlgError)(make_msg(pre, code))


# ---- LAPACK per batch element --------------------------------------------------------------

def lapack(name: str, a: np.ndarray):
    return _sla.get_lapack_funcs((name,), (a,))[0]


def getrf(a: np.ndarray):
    """Batched LU with partial pivoting: (LU, 1-based int32 pivots, int32 info per matrix)."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    lu = np.empty_like(a)
    piv = np.empty(batch + (min(m, n),), np.int32)
    info = np.zeros(batch, np.int32)
    if a.size == 0:
        piv[...] = np.arange(1, min(m, n) + 1, dtype=np.int32)
        return lu, piv, info
    f = lapack("getrf", a)
    for idx in np.ndindex(*batch):
        r, p, inf = f(a[idx])
        lu[idx] = r
        piv[idx] = p + 1
        info[idx] = inf
    return lu, piv, info


def potrf(a: np.ndarray, upper: bool = False):
    """Batched Cholesky: (factor with the other triangle zeroed, int32 info per matrix)."""
    batch = a.shape[:-2]
    out = np.zeros_like(a)
    info = np.zeros(batch, np.int32)
    if a.size == 0:
        return out, info
    f = lapack("potrf", a)
    for idx in np.ndindex(*batch):
        c, inf = f(a[idx], lower=not upper, clean=True)
        out[idx] = c
        info[idx] = inf
    return out, info


def pivots_to_perm(piv: np.ndarray, m: int) -> np.ndarray:
    """LAPACK's 1-based row swaps as a permutation matrix P with A = P L U."""
    batch = piv.shape[:-1]
    perm = np.broadcast_to(np.arange(m), batch + (m,)).copy()
    for idx in np.ndindex(*batch):
        p = perm[idx]
        for i, j in enumerate(piv[idx] - 1):
            if 0 <= j < m and i != j:
                p[i], p[j] = p[j], p[i]
    eye = np.eye(m)
    # (row-major, as PyTorch's lu_unpack builds P)
    return np.ascontiguousarray(np.swapaxes(eye[perm], -1, -2))


# ---- result layouts ------------------------------------------------------------------------
# PyTorch's LAPACK-backed kernels hand back what LAPACK wrote: each matrix column-major, batches
# outermost (``cloneBatchedColumnMajor`` / ``batched_matrix_contiguous_strides(f_contig=True)``
# in LinearAlgebraUtils.h). ``LAYOUT`` names, per op, the outputs laid out so (others stay as
# their forward made them: row-major); ``lapack_outputs`` applies it to each op's forward once.

def colmajor_strides(shape) -> tuple:
    """The strides of a batch of column-major matrices: row-major strides of ``shape`` with
    its last two dims swapped, swapped back (a size-0 dim counts as 1, as in PyTorch)."""
    if len(shape) < 2:
        return _L.contiguous_strides(shape)
    st = list(_L.contiguous_strides(tuple(shape[:-2]) + (shape[-1], shape[-2])))
    st[-1], st[-2] = st[-2], st[-1]
    return tuple(st)


def lapack_layout(a):
    """``a`` in LAPACK's batched column-major layout (other array kinds pass through)."""
    if type(a) is not np.ndarray:
        return a
    return _L.restride(a, colmajor_strides(a.shape))


def _left_only(i: int):
    # linalg.solve / lu_solve: left=False solves the transposed system and transposes back
    return lambda r, args: lapack_layout(r) if args[i] else _L.contiguous_np(r)


def _unless_empty(r, args):
    # the deprecated torch.cholesky returns an empty input's row-major clone
    return lapack_layout(r) if args[0].size else r


def _lstsq_solution(x, args):
    """gels*'s solution: the first n rows of the (max(m, n), k) column-major right-hand side
    LAPACK overwrote (its leading dimension shows in the strides)."""
    if type(x) is not np.ndarray:
        return x
    a, vec = args[0], args[2]
    m, n = a.shape[-2:]
    xm = x[..., None] if vec else x
    shape = xm.shape[:-2] + (max(m, n), xm.shape[-1])
    buf = _L.empty_np(shape, colmajor_strides(shape), x.dtype)
    view = buf[..., :n, :]
    view[...] = xm
    return view[..., 0] if vec else view


def _F(r, args):
    return lapack_layout(r)


LAYOUT = {
    # op name: a rule per output (None: the forward's own layout); rules see the forward's args
    "linalg_svd": (_F, None, _F), "linalg_eigh": (None, _F), "linalg_eig": (None, _F),
    "linalg_qr": (_F, _F), "linalg_cholesky_ex": (_F, None), "cholesky": (_unless_empty, None),
    "linalg_lu_factor_ex": (_F, None, None), "linalg_householder_product": (_F,),
    "orgqr": (_F,), "ormqr": (_F,), "linalg_inv_ex": (_F, None),
    "linalg_solve_ex": (_left_only(2), None), "linalg_solve_triangular": (_F,),
    "triangular_solve": (_F, _F), "linalg_lu_solve": (_left_only(3),), "cholesky_solve": (_F,),
    "cholesky_inverse": (_F,), "linalg_lstsq": (_lstsq_solution, None, None, None),
}


def lapack_outputs(*ops) -> None:
    """Wrap each op's forward so its outputs are laid out by the op's ``LAYOUT`` rules."""
    for op in ops:
        rules = LAYOUT[op.name]
        fwd = op.fwd
        if op.n_out == 1:
            def wrapped(*args, _f=fwd, _r=rules[0]):
                return _r(_f(*args), args)
        else:
            def wrapped(*args, _f=fwd, _rs=rules):
                return tuple(r if rule is None else rule(r, args)
                             for r, rule in zip(_f(*args), _rs))
        op.fwd = wrapped


def cast(a: np.ndarray, like: np.ndarray) -> np.ndarray:
    return a.astype(like.dtype, copy=False)


def real_dtype(dt: np.dtype) -> np.dtype:
    return np.empty((), dt).real.dtype


# ---- ns helpers (arrays on the fast path, ember tensors under create_graph) ----------------

def _em():
    from .. import _ops
    return _ops


def _np_diag_embed(v):
    n = v.shape[-1]
    out = np.zeros(v.shape + (n,), v.dtype)
    np.einsum("...ii->...i", out)[...] = v
    return out


def _np_solve(a, b):
    if a.size == 0 or b.size == 0:
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:]
        return np.zeros(shape, np.result_type(a, b))
    return np.linalg.solve(a, b)


def _np_solve_tri(a, b, upper, left, unit):
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        t = t.copy()
        np.einsum("...ii->...i", t)[...] = 1
    if left:
        return _np_solve(t, b)
    return np.swapaxes(_np_solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _em_solve(a, b):
    from .linalg_solve import _solve_left
    return _solve_left(a, b)


def _em_solve_tri(a, b, upper, left, unit):
    from .linalg_solve import solve_triangular
    return solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)


ns_fn("la_diag", lambda x: np.diagonal(x, 0, -2, -1), lambda x: x.diagonal(0, -2, -1))
ns_fn("la_diag_embed", _np_diag_embed, lambda v: _em().diag_embed(v))
ns_fn("la_eye", lambda n, like: np.eye(n, dtype=like.dtype),
      lambda n, like: _make(np.eye(n, dtype=like._data.dtype), Version(), False, None))
ns_fn("la_solve", _np_solve, _em_solve)
ns_fn("la_solve_tri", _np_solve_tri, _em_solve_tri)
ns_fn("la_sum_last", lambda x, keep: np.sum(x, axis=-1, keepdims=keep),
      lambda x, keep: x.sum(-1, keepdim=keep))
ns_fn("la_narrow", lambda x, dim, start, length: np.take(x, np.arange(start, start + length),
                                                         axis=dim),
      lambda x, dim, start, length: x.narrow(dim, start, length))
ns_fn("la_zeros", lambda shape, like: np.zeros(shape, like.dtype),
      lambda shape, like: like.new_zeros(tuple(shape)))
ns_fn("la_cat", lambda xs, dim: np.concatenate(xs, axis=dim), lambda xs, dim: _em().cat(xs, dim))


def is_complex_arr(x) -> bool:
    d = x._data if isinstance(x, Tensor) else x
    return d.dtype.kind == "c"


# ---- forward rule from the VJP -------------------------------------------------------------

def jvp_by_transpose(op):
    """Give ``op`` the forward rule that transposes its VJP (see the module docstring)."""
    def jvp(ns, tangents, primals, outs, *params):
        from ..autograd import grad as _grad
        from ..autograd.grad_mode import enable_grad
        from .creation import zeros_like
        with enable_grad():
            us = {}
            for k in op.diff_out:
                o = outs[k]
                if o.is_floating_point() or o.is_complex():
                    us[k] = zeros_like(o.detach()).requires_grad_()
            saved = [primals[i].detach() if isinstance(primals[i], Tensor) else primals[i]
                     for i in op.saves]
            if op.save_out:
                saved += [outs[k].detach() for k in op.saved_outs]
            g = us.get(0) if op.n_out == 1 else tuple(us.get(k) for k in range(op.n_out))
            need = tuple(t is not None for t in tangents)
            vs = op.vjp(EM, g, need, *saved, *params)
            vs = vs if isinstance(vs, tuple) else (vs,)
            s = None
            for v, t in zip(vs, tangents):
                if v is None or t is None:
                    continue
                p = v.conj() * t if v.is_complex() else v * t
                p = p.real if p.is_complex() else p
                p = p.sum()
                s = p if s is None else s + p
            keys = list(us)
            grads = [None] * len(keys)
            if s is not None and keys:
                grads = _grad(s, [us[k] for k in keys], allow_unused=True)
        res = [None] * op.n_out
        for k, gk in zip(keys, grads):
            res[k] = gk.detach() if gk is not None else zeros_like(outs[k].detach())
        return res[0] if op.n_out == 1 else tuple(res)
    op.jvp = jvp
    return op


def const(a: np.ndarray) -> Tensor:
    """A result tensor that carries no gradient (info codes, pivots)."""
    return _make(a, Version(), False, None)


def run(op, inputs, params=()):
    return apply(op, inputs, params)


def rt(name: str, fields):
    """The named result type ``return_types.<name>``, created once."""
    cls = getattr(return_types, name, None)
    if cls is None:
        cls = _structseq(name, fields)
        setattr(return_types, name, cls)
    return cls
