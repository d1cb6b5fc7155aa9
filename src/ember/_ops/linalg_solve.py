"""Determinants, inverses and linear solves: det, slogdet, logdet, inv(_ex), solve(_ex),
solve_triangular, lu_solve, cholesky_solve, cholesky_inverse, lstsq, pinv, matrix_exp (plus
torch.inverse / triangular_solve / lu_solve / pinverse / ldl_factor / ldl_solve).

Each is one Op named after PyTorch's node; the VJPs are PyTorch's formulas written with ``ns``
helpers (so double backward runs the same text on tensors); forward rules transpose them.
Singular inputs raise ``LinAlgError`` with PyTorch's text (found from LAPACK's info codes).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as _sla

from .._tensor import Tensor
from ._registry import Op, apply, method
from .linalg_base import (
    check_float,
    check_matrix,
    check_same_dtype,
    check_square,
    const,
    getrf,
    jvp_by_transpose,
    lapack_layout,
    lapack_outputs,
    raise_info,
    real_dtype,
    rt,
)

__all__ = ["cholesky_inverse", "cholesky_solve", "det", "inverse", "logdet", "lu_solve",
           "matrix_exp", "matrix_power", "pinverse", "slogdet", "triangular_solve"]

_SLOGDET_T = rt("linalg_slogdet", ("sign", "logabsdet"))
_SLOGDET_OLD = rt("slogdet", ("sign", "logabsdet"))
_INV_EX_T = rt("linalg_inv_ex", ("inverse", "info"))
_SOLVE_EX_T = rt("linalg_solve_ex", ("result", "info"))
_LSTSQ_T = rt("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_TRI_T = rt("triangular_solve", ("solution", "cloned_coefficient"))
_LDL_T = rt("linalg_ldl_factor", ("LD", "pivots"))
_LDL_EX_T = rt("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


def _unsq2(ns, x):
    return ns.unsqueeze(ns.unsqueeze(x, -1), -1)


# ---- det / slogdet -------------------------------------------------------------------------

def _det_fwd(a):
    if a.shape[-1] == 0:
        return np.ones(a.shape[:-2], a.dtype)
    return np.linalg.det(a).astype(a.dtype)


def _adj_h(a):
    """adj(A)^H for each matrix, through the SVD (valid for singular matrices too)."""
    u, s, vh = np.linalg.svd(a)
    n = s.shape[-1]
    prods = np.empty_like(s)
    for i in range(n):
        prods[..., i] = np.prod(np.delete(s, i, axis=-1), axis=-1)
    ph = np.conj(np.linalg.det(u) * np.linalg.det(vh))
    return ph[..., None, None] * (u * prods[..., None, :]) @ vh


def _det_vjp(ns, g, need, A, d):
    gd = g * ns.conj(d)
    if isinstance(A, np.ndarray):
        if A.shape[-1] == 0:
            return (np.zeros_like(A),)
        with np.errstate(all="ignore"):
            sing = d == 0
            if np.any(sing):
                adj = _adj_h(A)
                eye = np.eye(A.shape[-1], dtype=A.dtype)
                safe = np.where(sing[..., None, None], eye, A)
                inv_h = np.conj(np.swapaxes(np.linalg.inv(safe), -1, -2)) * np.conj(
                    d)[..., None, None]
                full = np.where(sing[..., None, None], adj, inv_h)
                return (g[..., None, None] * full,)
    n = A.shape[-1]
    return (ns.la_solve(ns.mH(A), _unsq2(ns, gd) * ns.la_eye(n, A)),)


DET = jvp_by_transpose(Op("linalg_det", _det_fwd, _det_vjp, saves=(0,), save_out=True,
                          names=("A", "result")))


def det(A: Tensor) -> Tensor:
    """``torch.linalg.det`` / ``torch.det``."""
    check_square(A, "linalg.det")
    check_float(A, "linalg.det")
    return apply(DET, (A,), ())


def _slogdet_fwd(a):
    if a.shape[-1] == 0:
        return np.ones(a.shape[:-2], a.dtype), np.zeros(a.shape[:-2], real_dtype(a.dtype))
    s, ld = np.linalg.slogdet(a)
    return s.astype(a.dtype), ld.astype(real_dtype(a.dtype))


def _slogdet_vjp(ns, g, need, A, sign, logabs):
    gs, gl = g
    cplx = sign.dtype.kind == "c" if isinstance(sign, np.ndarray) else sign.is_complex()
    if gl is None and (gs is None or not cplx):
        return (None,)
    c = gl
    if cplx and gs is not None:
        im = ns.imag_of(ns.conj(gs) * sign)
        c = (-1j * im) if c is None else c - 1j * im
    n = A.shape[-1]
    return (ns.la_solve(ns.mH(A), _unsq2(ns, c) * ns.la_eye(n, A)),)


SLOGDET = jvp_by_transpose(Op("linalg_slogdet", _slogdet_fwd, _slogdet_vjp, n_out=2,
                              saves=(0,), save_out=True, names=("A", "sign", "logabsdet")))


def linalg_slogdet(A: Tensor):
    """``torch.linalg.slogdet``: (sign, log|det|)."""
    check_square(A, "linalg.slogdet")
    check_float(A, "linalg.slogdet")
    return _SLOGDET_T(*apply(SLOGDET, (A,), ()))


def slogdet(input: Tensor):
    """``torch.slogdet``."""
    check_square(input, "linalg.slogdet")
    check_float(input, "linalg.slogdet")
    return _SLOGDET_OLD(*apply(SLOGDET, (input,), ()))


def logdet(input: Tensor) -> Tensor:
    """``torch.logdet``: log det, nan for a negative determinant (PyTorch's composition)."""
    check_square(input, "logdet")
    check_float(input, "logdet")
    from .. import _ops as E
    sign, logabs = apply(SLOGDET, (input,), ())
    if input.is_complex():
        return sign.log() + logabs
    return E.where(sign == -1.0, float("nan"), logabs)


# ---- inverse -------------------------------------------------------------------------------

def _inv_fwd(a):
    if a.size == 0:
        return np.zeros_like(a), np.zeros(a.shape[:-2], np.int32)
    lu, piv, info = getrf(a)
    with np.errstate(all="ignore"):
        try:
            inv = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            eye = np.eye(a.shape[-1], dtype=a.dtype)
            bad = (info > 0)[..., None, None]
            inv = np.linalg.inv(np.where(bad, eye, a))
            inv = np.where(bad, lu, inv)
    return inv.astype(a.dtype), info


def _inv_vjp(ns, g, need, inv):
    gi = g[0]
    if gi is None:
        return (None,)
    ih = ns.mH(inv)
    return (-ns.matmul(ih, ns.matmul(gi, ih)),)


INV_EX = jvp_by_transpose(Op("linalg_inv_ex", _inv_fwd, _inv_vjp, n_out=2, diff_out=(0,),
                             save_out=(0,), names=("inverse",)))


def _inv_msg(pre, code):
    return (f"linalg.inv: {pre}The diagonal element {code} is zero, the inversion could not be "
            "completed because the input matrix is singular.")


def inv_ex(A: Tensor, *, check_errors: bool = False):
    """``torch.linalg.inv_ex``: (inverse, info); info > 0 marks a singular matrix."""
    check_square(A, "linalg.inv")
    check_float(A, "linalg.inv")
    inv, info = apply(INV_EX, (A,), ())
    if check_errors:
        raise_info(info._data, _inv_msg)
    return _INV_EX_T(inv, info)


def inv(A: Tensor) -> Tensor:
    """``torch.linalg.inv``: raises LinAlgError for a singular matrix."""
    r, info = inv_ex(A)
    raise_info(info._data, _inv_msg)
    return r


def inverse(input: Tensor) -> Tensor:
    """``torch.inverse``: ``linalg.inv``."""
    return inv(input)


# ---- solve ---------------------------------------------------------------------------------

def _solve_fwd(a, b, left, vec):
    if vec:
        b = b[..., None]
    if not left:
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    info = np.zeros(a.shape[:-2], np.int32)
    if a.size:
        info = getrf(a)[2]
    with np.errstate(all="ignore"):
        if a.size == 0 or b.size == 0:
            x = np.zeros(batch + b.shape[-2:], np.result_type(a, b))
        else:
            bad = (info > 0)[..., None, None]
            aa = np.where(bad, np.eye(a.shape[-1], dtype=a.dtype), a) if bad.any() else a
            x = np.linalg.solve(aa, np.broadcast_to(b, batch + b.shape[-2:]))
    if not left:
        x = np.swapaxes(x, -1, -2)
    if vec:
        x = x[..., 0]
    return x.astype(a.dtype), info   # (info: one per matrix of A, unbroadcast, as PyTorch's)


def _solve_vjp(ns, g, need, A, X, left, vec):
    gX = g[0]
    if gX is None:
        return None, None
    if vec:
        gX, X = ns.unsqueeze(gX, -1), ns.unsqueeze(X, -1)
    if left:
        gB = ns.la_solve(ns.mH(A), gX)
        gA = -ns.matmul(gB, ns.mH(X)) if need[0] else None
    else:
        gB = ns.mH(ns.la_solve(A, ns.mH(gX)))
        gA = -ns.matmul(ns.mH(X), gB) if need[0] else None
    if vec:
        gB = ns.squeeze(gB, -1)
    return gA, (gB if need[1] else None)


SOLVE_EX = jvp_by_transpose(Op("linalg_solve_ex", _solve_fwd, _solve_vjp, n_out=2,
                               diff_out=(0,), saves=(0,), save_out=(0,),
                               names=("A", "result", "left")))


def _solve_checks(A: Tensor, B: Tensor, left: bool) -> bool:
    check_square(A, "linalg.solve")
    check_float(A, "linalg.solve")
    check_same_dtype(A, B, "linalg.solve")
    sa, sb = A._data.shape, B._data.shape
    vec = left and (B._data.ndim == 1 or (B._data.ndim == A._data.ndim - 1
                                          and sb == sa[:-1]))
    if vec:
        if sb[-1] != sa[-1]:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                               f"AX = B ({sa[-2]}x{sa[-1]} and {sb[-1]}x1)")
    else:
        check_matrix(B, "linalg.solve", "B")
        if (sb[-2] if left else sb[-1]) != sa[-1]:
            eq = "AX = B" if left else "XA = B"
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                               f"{eq} ({sa[-2]}x{sa[-1]} and {sb[-2]}x{sb[-1]})")
    ba = sa[:-2]
    bb = sb[:-1] if vec else sb[:-2]
    _bcast(ba, bb)
    return vec


def _bcast(a, b):
    n = max(len(a), len(b))
    a2, b2 = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for i, (x, y) in enumerate(zip(a2, b2)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y})"
                               f" at non-singleton dimension {i}")


def _solve_msg(pre, code):
    return f"ember.linalg.solve: {pre}The solver failed because the input matrix is singular."


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False):
    """``torch.linalg.solve_ex``: (X, info) solving AX = B (XA = B when not ``left``)."""
    vec = _solve_checks(A, B, left)
    x, info = apply(SOLVE_EX, (A, B), (bool(left), vec))
    if check_errors:
        raise_info(info._data, _solve_msg)
    return _SOLVE_EX_T(x, info)


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """``torch.linalg.solve``: raises LinAlgError for a singular A."""
    x, info = solve_ex(A, B, left=left)
    raise_info(info._data, _solve_msg)
    return x


def _solve_left(A: Tensor, B: Tensor) -> Tensor:
    """AX = B with B a matrix (the ``ns.la_solve`` of the formulas)."""
    return apply(SOLVE_EX, (A, B), (True, False))[0]


# ---- triangular solves ---------------------------------------------------------------------

def _tri_fwd(a, b, upper, left, unit):
    if not left:
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
        upper = not upper
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    x = np.zeros(b.shape, np.result_type(a, b))
    if b.size:
        with np.errstate(all="ignore"):
            for idx in np.ndindex(*batch):
                try:
                    x[idx] = _sla.solve_triangular(a[idx], b[idx], lower=not upper,
                                                   unit_diagonal=unit, check_finite=False)
                except np.linalg.LinAlgError:
                    x[idx] = np.nan
    if not left:
        x = np.swapaxes(x, -1, -2)
    return x


def _tri_mask(ns, gA, upper, unit):
    if upper:
        return ns.triu(gA, 1 if unit else 0)
    return ns.tril(gA, -1 if unit else 0)


def _tri_vjp(ns, g, need, A, X, upper, left, unit):
    if g is None:
        return None, None
    if left:
        gB = ns.la_solve_tri(ns.mH(A), g, not upper, True, unit)
        gA = -ns.matmul(gB, ns.mH(X)) if need[0] else None
    else:
        gB = ns.la_solve_tri(ns.mH(A), g, not upper, False, unit)
        gA = -ns.matmul(ns.mH(X), gB) if need[0] else None
    if gA is not None:
        gA = _tri_mask(ns, gA, upper, unit)
    return gA, (gB if need[1] else None)


SOLVE_TRI = jvp_by_transpose(Op("linalg_solve_triangular", _tri_fwd, _tri_vjp, saves=(0,),
                                save_out=True, names=("self", "result")))


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """``torch.linalg.solve_triangular``: AX = B (XA = B) with A triangular."""
    check_square(A, "linalg.solve_triangular")
    check_matrix(B, "linalg.solve_triangular", "B")
    check_float(A, "linalg.solve_triangular")
    check_same_dtype(A, B, "linalg.solve_triangular")
    sa, sb = A._data.shape, B._data.shape
    if (sb[-2] if left else sb[-1]) != sa[-1]:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {eq} ({sa[-2]}x{sa[-1]} and {sb[-2]}x{sb[-1]})")
    _bcast(sa[:-2], sb[:-2])
    return apply(SOLVE_TRI, (A, B), (bool(upper), bool(left), bool(unitriangular)))


def _tri_old_fwd(b, a, upper, transpose, unit):
    at = np.swapaxes(a, -1, -2) if transpose else a
    x = _tri_fwd(at, b, upper != transpose, True, unit)
    batch = x.shape[:-2]
    return x, np.broadcast_to(a, batch + a.shape[-2:]).copy()


def _tri_old_vjp(ns, g, need, b, a, X, upper, transpose, unit):
    gX, gM = g
    gb = ga = None
    if gX is not None:
        at = ns.swap(a) if transpose else a
        up = upper != transpose
        gb = ns.la_solve_tri(ns.mH(at), gX, not up, True, unit)
        if need[1]:
            ga = -ns.matmul(gb, ns.mH(X))
            if transpose:
                ga = ns.swap(ga)
            ga = _tri_mask(ns, ga, upper, unit)
    if gM is not None:
        if gb is None:      # PyTorch returns zeros for B when only the coefficient's grad came
            gb = ns.zeros_of(gM, b.shape)
        if need[1]:
            ga = gM if ga is None else ga + gM
    return (gb if need[0] else None), ga


def _tri_old_jvp(ns, tangents, primals, outs, upper, transpose, unit):
    # The solve reads only A's triangle (without the diagonal when ``unit``), and with
    # ``transpose`` the system is A^T X = B: the tangent is -solve(tri(dA)^T X). PyTorch 2.13's
    # generic_solve_jvp uses the whole dA, untransposed, which finite differences refute (README,
    # "Where ember differs on purpose"); the cloned coefficient's tangent is dA itself.
    db, da = tangents
    a = primals[1]
    X = outs[0]
    rhs = db
    if da is not None:
        dt = _tri_mask(ns, da, upper, unit)
        t = ns.matmul(ns.swap(dt) if transpose else dt, X)
        rhs = -t if rhs is None else rhs - t
    dX = triangular_solve(rhs, a, upper, transpose, unit)[0]
    dM = None
    if da is not None:
        dM = da.expand(X.shape[:-2] + tuple(da.shape[-2:]))
    return dX, dM


TRI_OLD = Op("triangular_solve", _tri_old_fwd, _tri_old_vjp, _tri_old_jvp, n_out=2,
             saves=(0, 1), save_out=(0,), names=("self", "A", "solution"))


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False):
    """``torch.triangular_solve`` (deprecated in PyTorch): (solution, cloned_coefficient)."""
    check_square(A, "triangular_solve")
    check_matrix(b, "triangular_solve", "B")
    check_float(A, "triangular_solve")
    check_same_dtype(A, b, "triangular_solve", "A", "B")
    if b._data.shape[-2] != A._data.shape[-1]:
        raise RuntimeError(f"triangular_solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({A._data.shape[-2]}x{A._data.shape[-1]} and "
                           f"{b._data.shape[-2]}x{b._data.shape[-1]})")
    return _TRI_T(*apply(TRI_OLD, (b, A), (bool(upper), bool(transpose),
                                          bool(unitriangular))))


# ---- lu_solve ------------------------------------------------------------------------------

def _lu_solve_np(lu, piv, b, left, adjoint):
    if left:
        return _lu_solve_core(lu, piv, b, 2 if adjoint else 0)
    bt = np.swapaxes(b, -1, -2)
    if adjoint:     # X A^H = B  <=>  A X^H = B^H
        return np.conj(np.swapaxes(_lu_solve_core(lu, piv, np.conj(bt), 0), -1, -2))
    return np.swapaxes(_lu_solve_core(lu, piv, bt, 1), -1, -2)   # X A = B <=> A^T X^T = B^T


def _lu_solve_core(lu, piv, b, trans):
    if trans == 2 and lu.dtype.kind != "c":
        trans = 1
    batch = np.broadcast_shapes(lu.shape[:-2], piv.shape[:-1], b.shape[:-2])
    lu = np.broadcast_to(lu, batch + lu.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    x = np.zeros(b.shape, np.result_type(lu, b))
    if b.size and lu.shape[-1]:
        with np.errstate(all="ignore"):
            for idx in np.ndindex(*batch):
                x[idx] = _sla.lu_solve((lu[idx], piv[idx] - 1), b[idx], trans=trans,
                                       check_finite=False)
    return x


def _lu_solve_fwd(lu, piv, b, left, adjoint, P):
    return _lu_solve_np(lu, piv, b, left, adjoint)


def _lu_solve_vjp(ns, g, need, LU, piv, X, left, adjoint, P):
    if g is None:
        return None, None, None
    gB = _ns_lu_solve(ns, LU, piv, g, left, not adjoint)
    if not need[0]:
        return None, None, gB
    if left:
        gA = -ns.matmul(gB, ns.mH(X)) if not adjoint else -ns.matmul(X, ns.mH(gB))
    else:
        gA = -ns.matmul(ns.mH(X), gB) if not adjoint else -ns.matmul(ns.mH(gB), X)
    n = LU.shape[-1]
    L = ns.tril(LU, -1) + ns.la_eye(n, LU)
    U = ns.triu(LU, 0)
    Pc = ns.const(P)
    PgA = ns.matmul(ns.mH(Pc), gA)
    gLU = ns.tril(ns.matmul(PgA, ns.mH(U)), -1) + ns.triu(ns.matmul(ns.mH(L), PgA), 0)
    return gLU, None, (gB if need[2] else None)


def _ns_lu_solve(ns, LU, piv, B, left, adjoint):
    if isinstance(B, np.ndarray):
        return _lu_solve_np(LU, piv, B, left, adjoint)
    return lu_solve_linalg(LU, piv if isinstance(piv, Tensor) else const(piv), B, left=left,
                           adjoint=adjoint)


LU_SOLVE = jvp_by_transpose(Op("linalg_lu_solve", _lu_solve_fwd, _lu_solve_vjp,
                               saves=(0, 1), save_out=True, names=("LU", "pivots", "result")))


def lu_solve_linalg(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
                    adjoint: bool = False) -> Tensor:
    """``torch.linalg.lu_solve``: solves with lu_factor's (LU, pivots)."""
    check_square(LU, "linalg.lu_solve", "LU")
    check_matrix(B, "linalg.lu_solve", "B")
    check_same_dtype(LU, B, "linalg.lu_solve", "LU", "B")
    n = LU._data.shape[-1]
    if (B._data.shape[-2] if left else B._data.shape[-1]) != n:
        which = "rows" if left else "columns"
        raise RuntimeError(f"linalg.lu_solve: Number of {which} of B must match the number of "
                           "rows of LU")
    if pivots._data.shape[-1] != n:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    piv = pivots._data
    batch = np.broadcast_shapes(LU._data.shape[:-2], piv.shape[:-1])
    P = _perm(np.broadcast_to(piv, batch + piv.shape[-1:]), n, LU._data.dtype)
    return apply(LU_SOLVE, (LU, pivots, B), (bool(left), bool(adjoint), P))


def _perm(piv, n, dt):
    from .linalg_base import pivots_to_perm
    return pivots_to_perm(np.asarray(piv), n).astype(dt)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``torch.lu_solve`` (deprecated in PyTorch): ``linalg.lu_solve(LU, pivots, b)``."""
    return lu_solve_linalg(LU_data, LU_pivots, b)


# ---- cholesky_solve / cholesky_inverse -----------------------------------------------------

def _chol_solve_np(b, L, upper):
    Lm = np.swapaxes(L, -1, -2).conj() if upper else L
    y = _tri_fwd(Lm, b, False, True, False)
    return _tri_fwd(np.swapaxes(Lm, -1, -2).conj(), y, True, True, False)


def _chol_solve_vjp(ns, g, need, b, L, X, upper):
    if g is None:
        return None, None
    gB = _ns_chol_solve(ns, g, L, upper)
    gL = None
    if need[1]:
        c = ns.matmul(gB, ns.mH(X))
        c = c + ns.mH(c)
        gL = -ns.matmul(L, c) if upper else -ns.matmul(c, L)
    return (gB if need[0] else None), gL


def _ns_chol_solve(ns, g, L, upper):
    if isinstance(g, np.ndarray):
        return _chol_solve_np(g, L, upper)
    return cholesky_solve(g, L, upper)


CHOL_SOLVE = jvp_by_transpose(Op("cholesky_solve", _chol_solve_np, _chol_solve_vjp,
                                 saves=(0, 1), save_out=True, names=("self", "input2", "result")))


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky_solve``: solves (L L^H) X = B from the Cholesky factor."""
    check_matrix(B, "cholesky_solve", "B")
    check_square(L, "cholesky_solve", "A")
    check_same_dtype(B, L, "cholesky_solve", "B", "A")
    check_float(L, "cholesky_solve")
    if B._data.shape[-2] != L._data.shape[-1]:
        raise RuntimeError(f"cholesky_solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({L._data.shape[-2]}x{L._data.shape[-1]} and "
                           f"{B._data.shape[-2]}x{B._data.shape[-1]})")
    return apply(CHOL_SOLVE, (B, L), (bool(upper),))


def _chol_inv_fwd(L, upper):
    n = L.shape[-1]
    eye = np.broadcast_to(np.eye(n, dtype=L.dtype), L.shape)
    return _chol_solve_np(eye, L, upper)


def _chol_inv_vjp(ns, g, need, L, out, upper):
    c = g + ns.mH(g)
    c = ns.matmul(out, ns.matmul(c, out))
    return (-ns.matmul(L, c) if upper else -ns.matmul(c, L),)


CHOL_INV = jvp_by_transpose(Op("cholesky_inverse", _chol_inv_fwd, _chol_inv_vjp, saves=(0,),
                               save_out=True, names=("self", "result")))


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky_inverse``: (L L^H)^{-1} from the Cholesky factor."""
    check_square(L, "cholesky_inverse", "input")
    check_float(L, "cholesky_inverse")
    return apply(CHOL_INV, (L,), (bool(upper),))


# ---- pinv / lstsq --------------------------------------------------------------------------

def _pinv_fwd(a, atol, rtol, hermitian):
    m, n = a.shape[-2:]
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (n, m), a.dtype)
    if hermitian:
        w, v = np.linalg.eigh(a)
        s = np.abs(w)
        smax = s.max(axis=-1, keepdims=True)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        smax = s[..., :1]
    tol = np.maximum(atol, rtol * smax)
    with np.errstate(all="ignore"):
        keep = s > tol
        if hermitian:
            winv = np.where(keep, 1 / np.where(keep, w, 1), 0)
            r = (v * winv[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2))
        else:
            sinv = np.where(keep, 1 / np.where(keep, s, 1), 0)
            r = np.conj(np.swapaxes(vh, -1, -2)) * sinv[..., None, :] @ np.conj(
                np.swapaxes(u, -1, -2))
    return r.astype(a.dtype)


def pinv_backward(ns, g, P, A):
    m, n = A.shape[-2:]
    Ph = ns.mH(P)
    gh = ns.mH(g)
    if m <= n:
        K = ns.matmul(gh, P)
        KPh = ns.matmul(K, Ph)
        return (-ns.mH(ns.matmul(P, K)) + KPh - ns.matmul(ns.matmul(A, P), KPh)
                + ns.matmul(ns.matmul(Ph, P), gh - ns.matmul(K, A)))
    K = ns.matmul(P, gh)
    PhK = ns.matmul(Ph, K)
    return (-ns.mH(ns.matmul(K, P)) + ns.matmul(ns.matmul(gh - ns.matmul(A, K), P), Ph) + PhK
            - ns.matmul(ns.matmul(PhK, P), A))


def _pinv_vjp(ns, g, need, A, P, atol, rtol, hermitian):
    return (pinv_backward(ns, g, P, A),)


PINV = jvp_by_transpose(Op("linalg_pinv", _pinv_fwd, _pinv_vjp, saves=(0,), save_out=True,
                           names=("self", "result")))


def _tol_value(t, name):
    if t is None:
        return None
    if isinstance(t, Tensor):
        return t._data
    return float(t)


def pinv(A: Tensor, rcond=None, hermitian: bool = False, *, atol=None, rtol=None) -> Tensor:
    """``torch.linalg.pinv``: the pseudo-inverse, singular values below
    max(atol, rtol * s_max) dropped (rtol defaults to eps * max(m, n) when atol is not given)."""
    if A._data.ndim < 2 or A._data.dtype.kind not in "fc":
        from ._dispatch import _type_name
        raise RuntimeError(f"linalg.pinv({_type_name(A.dtype)}{{{list(A._data.shape)}}}): "
                           "expected a tensor with 2 or more dimensions of float, double, cfloat "
                           "or cdouble types")
    if rcond is not None:
        rtol = rcond
        atol = 0.0 if atol is None else atol
    m, n = A._data.shape[-2:]
    eps = np.finfo(A._data.dtype).eps
    a = _tol_value(atol, "atol")
    r = _tol_value(rtol, "rtol")
    if r is None:
        r = eps * max(m, n) if a is None or (np.ndim(a) == 0 and a <= 0) else 0.0
    if a is None:
        a = 0.0
    a = np.asarray(a, real_dtype(A._data.dtype))[..., None]
    r = np.asarray(r, real_dtype(A._data.dtype))[..., None]
    return apply(PINV, (A,), (a, r, bool(hermitian)))


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: ``linalg.pinv(input, rtol=rcond)``."""
    return pinv(input, rtol=rcond)


def _lstsq_fwd(a, b, vec, rcond, driver):
    bb = b[..., None] if vec else b
    m, n = a.shape[-2:]
    batch = np.broadcast_shapes(a.shape[:-2], bb.shape[:-2])
    a_ = np.broadcast_to(a, batch + a.shape[-2:])
    b_ = np.broadcast_to(bb, batch + bb.shape[-2:])
    k = bb.shape[-1]
    x = np.zeros(batch + (n, k), np.result_type(a, b))
    rank = np.zeros(batch, np.int64)
    sv = np.zeros(batch + (min(m, n),), real_dtype(a.dtype))
    for idx in np.ndindex(*batch):
        if a_[idx].size == 0:
            continue
        r = _sla.lstsq(a_[idx], b_[idx], cond=rcond, check_finite=False,
                       lapack_driver="gelsd" if driver == "gels" else driver)
        x[idx] = r[0]
        rank[idx] = r[2]
        if r[3] is not None:
            sv[idx] = r[3]
    res = np.zeros((0,), real_dtype(a.dtype))
    if m > n and driver != "gelsy" and (rank == n).all():
        d = a_ @ x - b_
        res = np.sum(np.abs(d) ** 2, axis=-2)   # (a vector B keeps its column: (..., 1))
    if driver in ("gelsy", "gels"):
        sv = np.zeros((0,), real_dtype(a.dtype))
    if driver == "gels":
        rank = np.zeros((0,), np.int64)
    if vec:
        x = x[..., 0]
    return x.astype(a.dtype), res.astype(real_dtype(a.dtype)), rank, sv


def _lstsq_vjp(ns, g, need, A, B, vec, rcond, driver):
    gX, gR = g[0], g[1]
    P = _ns_pinv(ns, A)
    Bm = ns.unsqueeze(B, -1) if vec else B
    gA = gB = None
    if gX is not None:
        gXm = ns.unsqueeze(gX, -1) if vec else gX
        if need[0]:
            gA = pinv_backward(ns, ns.matmul(gXm, ns.mH(Bm)), P, A)
        if need[1]:
            gB = ns.matmul(ns.mH(P), gXm)
    if gR is not None and gR.shape[-1:] != (0,) and len(gR.shape):
        X = ns.matmul(P, Bm)
        D = ns.matmul(A, X) - Bm
        w = 2 * ns.unsqueeze(gR, -2)
        if need[0]:
            t = ns.matmul(D * w, ns.mH(X))
            gA = t if gA is None else gA + t
        if need[1]:
            t = -(D * w)
            gB = t if gB is None else gB + t
    if vec and gB is not None:
        gB = ns.squeeze(gB, -1)
    return gA, gB


def _ns_pinv(ns, A):
    if isinstance(A, np.ndarray):
        eps = np.finfo(A.dtype).eps
        return _pinv_fwd(A, 0.0, eps * max(A.shape[-2:]), False)
    return pinv(A)


LSTSQ = jvp_by_transpose(Op("linalg_lstsq", _lstsq_fwd, _lstsq_vjp, n_out=4, diff_out=(0, 1),
                            saves=(0, 1), names=("self", "b")))


def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """``torch.linalg.lstsq``: (solution, residuals, rank, singular_values), CPU drivers gelsy
    (default), gelsd, gelss, gels."""
    if A._data.ndim < 2:
        raise RuntimeError("ember.linalg.lstsq: input must have at least 2 dimensions.")
    if B._data.ndim < 1:
        raise RuntimeError("ember.linalg.lstsq: other must have at least 1 dimension.")
    check_float(A, "linalg.lstsq")
    check_same_dtype(A, B, "ember.linalg.lstsq", "input", "other")
    vec = B._data.ndim == A._data.ndim - 1
    if not (vec or B._data.ndim == A._data.ndim):
        raise RuntimeError("ember.linalg.lstsq: input.dim() must be greater or equal to "
                           "other.dim() and (input.dim() - other.dim()) <= 1")
    if B._data.shape[-1 if vec else -2] != A._data.shape[-2]:
        raise RuntimeError(f"ember.linalg.lstsq: input.size(-2) should match other.size("
                           f"{-1 if vec else -2})")
    drv = driver or "gelsy"
    if drv not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if rcond is None:
        rcond = float(np.finfo(A._data.dtype).eps * max(A._data.shape[-2:]))
    r = apply(LSTSQ, (A, B), (vec, rcond, drv))
    return _LSTSQ_T(*r)


# ---- matrix_exp / matrix_power -------------------------------------------------------------

def _expm_fwd(a):
    if a.size == 0:
        return a.copy()
    return _sla.expm(a).astype(a.dtype)


def _expm_vjp(ns, g, need, A):
    # the adjoint of the Frechet derivative L(A, .) is L(A^H, .): read off exp([[A^H, G], [0,
    # A^H]])'s upper-right block
    n = A.shape[-1]
    Ah = ns.mH(A)
    z = ns.la_zeros(tuple(np.broadcast_shapes(A.shape, g.shape)), g)
    Ah = Ah + z
    top = ns.la_cat([Ah, g + z], -1)
    bot = ns.la_cat([z, Ah], -1)
    big = ns.la_cat([top, bot], -2)
    e = _ns_expm(ns, big)
    return (e[..., :n, n:],)


def _ns_expm(ns, x):
    if isinstance(x, np.ndarray):
        return _expm_fwd(x)
    return apply(MATRIX_EXP, (x,), ())


MATRIX_EXP = jvp_by_transpose(Op("linalg_matrix_exp", _expm_fwd, _expm_vjp, saves=(0,),
                                 names=("self",)))


def matrix_exp(A: Tensor) -> Tensor:
    """``torch.linalg.matrix_exp`` / ``torch.matrix_exp``."""
    check_square(A, "linalg.matrix_exp")
    check_float(A, "linalg.matrix_exp")
    return apply(MATRIX_EXP, (A,), ())


def matrix_power(A: Tensor, n: int) -> Tensor:
    """``torch.linalg.matrix_power``: PyTorch's sequence of clones, inverses and matmuls."""
    check_square(A, "linalg.matrix_power")
    from .. import _ops as E
    n = int(n)
    if n == 0:
        out = A.clone()
        return out.copy_(E.eye(A._data.shape[-1], dtype=A.dtype).expand(A._data.shape))
    if n == 1:
        return A.clone()
    if n == -1:
        return inv(A)
    a = inv(A) if n < 0 else A
    n = abs(n)
    if n == 2:
        return E.matmul(a, a)
    if n == 3:
        return E.matmul(E.matmul(a, a), a)
    z = result = None
    while n > 0:
        bit = n % 2
        n //= 2
        z = a if z is None else E.matmul(z, z)
        if bit:
            result = z if result is None else E.matmul(result, z)
    return result


# ---- LDL -----------------------------------------------------------------------------------

def _ldl_np(a, hermitian):
    batch = a.shape[:-2]
    n = a.shape[-1]
    ld = np.zeros_like(a)
    piv = np.zeros(batch + (n,), np.int32)
    info = np.zeros(batch, np.int32)
    if a.size == 0:
        return ld, piv, info
    from .linalg_base import lapack
    name = "hetrf" if (hermitian and a.dtype.kind == "c") else "sytrf"
    f = lapack(name, a)
    for idx in np.ndindex(*batch):
        r = f(a[idx], lower=1)
        ld[idx] = np.tril(r[0])
        piv[idx] = r[1]
        info[idx] = r[-1]
    return ld, piv, info


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False):
    """``torch.linalg.ldl_factor_ex``: LAPACK's sytrf / hetrf (not differentiable)."""
    check_square(A, "ember.linalg.ldl_factor_ex")
    check_float(A, "ember.linalg.ldl_factor_ex")
    ld, piv, info = _ldl_np(A._data, hermitian)
    if check_errors:
        raise_info(info, lambda pre, c: f"ember.linalg.ldl_factor_ex: {pre}The factorization "
                   "could not be completed because the input is not positive-definite")
    return _LDL_EX_T(const(lapack_layout(ld)), const(piv), const(info))


def ldl_factor(A: Tensor, *, hermitian: bool = False):
    """``torch.linalg.ldl_factor``."""
    ld, piv, info = ldl_factor_ex(A, hermitian=hermitian)
    return _LDL_T(ld, piv)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """``torch.linalg.ldl_solve``: solves with ldl_factor's result (not differentiable)."""
    check_square(LD, "ember.linalg.ldl_solve", "LD")
    check_matrix(B, "ember.linalg.ldl_solve", "B")
    from .linalg_base import lapack
    ld, piv, b = LD._data, pivots._data, B._data
    batch = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    ld = np.broadcast_to(ld, batch + ld.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    x = np.zeros(b.shape, np.result_type(ld, b))
    if b.size and ld.size:
        name = "hetrs" if (hermitian and ld.dtype.kind == "c") else "sytrs"
        f = lapack(name, ld)
        for idx in np.ndindex(*batch):
            x[idx] = f(ld[idx], piv[idx], b[idx], lower=1)[0]
    return const(lapack_layout(x.astype(ld.dtype)))


lapack_outputs(INV_EX, SOLVE_EX, SOLVE_TRI, TRI_OLD, LU_SOLVE, CHOL_SOLVE, CHOL_INV, LSTSQ)

for _n, _f in [("det", det), ("logdet", logdet), ("slogdet", slogdet), ("inverse", inverse),
               ("cholesky_solve", cholesky_solve), ("cholesky_inverse", cholesky_inverse),
               ("lu_solve", lu_solve), ("pinverse", pinverse), ("matrix_exp", matrix_exp),
               ("matrix_power", matrix_power), ("triangular_solve", triangular_solve)]:
    method(_n, _f)
del _n, _f
