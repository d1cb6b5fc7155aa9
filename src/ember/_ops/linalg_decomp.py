"""Matrix decompositions: svd / svdvals, eigh / eigvalsh, eig / eigvals, qr, cholesky(_ex),
lu_factor(_ex), lu, lu_unpack and householder_product (plus torch.svd / qr / cholesky / geqrf /
orgqr).

Forwards run NumPy / LAPACK per batch; each decomposition is one Op named after PyTorch's node
(``LinalgSvdBackward0``, ``LinalgEighBackward0``, ...). The VJPs are PyTorch's formulas
(FunctionsManual's svd_backward, linalg_eig_backward, linalg_qr_backward, cholesky_backward,
linalg_lu_backward) written with ``ns`` helpers, so they run on arrays or, under create_graph,
on ember tensors; the forward rules are those VJPs transposed (``jvp_by_transpose``).
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._registry import Op, apply, method, wrap_outputs
from .linalg_base import (
    check_float,
    check_matrix,
    check_square,
    const,
    getrf,
    jvp_by_transpose,
    lapack,
    lapack_layout,
    lapack_outputs,
    pivots_to_perm,
    potrf,
    raise_info,
    rt,
)

__all__ = ["cholesky", "geqrf", "lu", "lu_unpack", "orgqr", "ormqr", "pca_lowrank", "qr", "svd",
           "svd_lowrank"]

_SVD_T = rt("linalg_svd", ("U", "S", "Vh"))
_SVD_OLD = rt("svd", ("U", "S", "V"))
_EIGH_T = rt("linalg_eigh", ("eigenvalues", "eigenvectors"))
_EIG_T = rt("linalg_eig", ("eigenvalues", "eigenvectors"))
_QR_T = rt("linalg_qr", ("Q", "R"))
_QR_OLD = rt("qr", ("Q", "R"))
_CHOL_EX_T = rt("linalg_cholesky_ex", ("L", "info"))
_LUF_T = rt("linalg_lu_factor", ("LU", "pivots"))
_LUF_EX_T = rt("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LU_T = rt("linalg_lu", ("P", "L", "U"))
_LU_UNPACK_T = rt("lu_unpack", ("P", "L", "U"))
_GEQRF_T = rt("geqrf", ("a", "tau"))


def _skew(ns, x):
    return x - ns.mH(x)


# ---- SVD -----------------------------------------------------------------------------------

def _svd_fwd(a, full):
    if a.dtype.names is not None:   # complex32 pairs (ember._chalf): only an empty input comes
        from .._chalf import from_values, to_c64
        u, s, vh = _svd_fwd(to_c64(a), full)
        return from_values(u), s.astype(np.float16), from_values(vh)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    rdt = np.empty((), a.dtype).real.dtype
    if a.size == 0:
        ur, vr = (m, n) if full else (k, k)
        u = np.broadcast_to(np.eye(m, ur, dtype=a.dtype), batch + (m, ur)).copy()
        vh = np.broadcast_to(np.eye(vr, n, dtype=a.dtype), batch + (vr, n)).copy()
        return u, np.zeros(batch + (k,), rdt), vh
    u, s, vh = np.linalg.svd(a, full_matrices=full)
    return u, s.astype(rdt), vh


def _svd_vjp(ns, g, need, U, S, Vh, full):
    gU, gS, gVh = g
    k = S.shape[-1]
    if full:
        U, Vh = U[..., :k], Vh[..., :k, :]
        gU = gU[..., :k] if gU is not None else None
        gVh = gVh[..., :k, :] if gVh is not None else None
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        if gS is None:
            return (None,)
        if m >= n:
            return (ns.matmul(U, ns.unsqueeze(gS, -1) * Vh),)
        return (ns.matmul(U * ns.unsqueeze(gS, -2), Vh),)
    cplx = U.dtype.kind == "c" if isinstance(U, np.ndarray) else U.is_complex()
    UhgU = _skew(ns, ns.matmul(ns.mH(U), gU)) if gU is not None else None
    VhgV = _skew(ns, ns.matmul(Vh, ns.mH(gVh))) if gVh is not None else None
    S2 = S * S
    E = ns.unsqueeze(S2, -2) - ns.unsqueeze(S2, -1) + ns.la_eye(k, S2)
    if UhgU is not None and VhgV is not None:
        ret = (UhgU * ns.unsqueeze(S, -2) + ns.unsqueeze(S, -1) * VhgV) / E
    elif UhgU is not None:
        ret = (UhgU / E) * ns.unsqueeze(S, -2)
    else:
        ret = ns.unsqueeze(S, -1) * (VhgV / E)
    if gS is not None:
        ret = ret + ns.la_diag_embed(gS)
    if cplx and UhgU is not None:
        ret = ret + ns.la_diag_embed(ns.la_diag(UhgU) / (2 * S))
    if m > k and gU is not None:
        gA = ns.matmul(U, ret)
        gUS = gU / ns.unsqueeze(S, -2)
        gA = gA + gUS - ns.matmul(U, ns.matmul(ns.mH(U), gUS))
        return (ns.matmul(gA, Vh),)
    if n > k and gVh is not None:
        gA = ns.matmul(ret, Vh)
        SgVh = gVh / ns.unsqueeze(S, -1)
        gA = gA + SgVh - ns.matmul(ns.matmul(SgVh, ns.mH(Vh)), Vh)
        return (ns.matmul(U, gA),)
    if m >= n:
        return (ns.matmul(U, ns.matmul(ret, Vh)),)
    return (ns.matmul(ns.matmul(U, ret), Vh),)


SVD = jvp_by_transpose(Op("linalg_svd", _svd_fwd, _svd_vjp, n_out=3, save_out=True,
                          names=("U", "S", "Vh", "full_matrices")))


def _svd_in(A: Tensor, fname: str) -> None:
    check_matrix(A, fname)
    if A._data.dtype.names is not None:   # complex32: PyTorch's check admits it, its kernel not
        if A._data.size:
            raise NotImplementedError("\"linalg_svd_cpu\" not implemented for 'ComplexHalf'")
        return
    check_float(A, fname)


def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver=None):
    """``torch.linalg.svd``: (U, S, Vh) with A = U diag(S) Vh."""
    _svd_in(A, "linalg.svd")
    if driver is not None:
        raise RuntimeError("ember.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    return _SVD_T(*apply(SVD, (A,), (bool(full_matrices),)))


def svdvals(A: Tensor, *, driver=None) -> Tensor:
    """``torch.linalg.svdvals``: the singular values, descending (node LinalgSvdBackward0)."""
    _svd_in(A, "linalg.svdvals")
    if driver is not None:
        raise RuntimeError("ember.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    return apply(SVD, (A,), (False,))[1]


def svd(input: Tensor, some: bool = True, compute_uv: bool = True):
    """``torch.svd``: (U, S, V) with V = Vh^H; without compute_uv, U and V are zero matrices."""
    _svd_in(input, "linalg.svd")
    if not compute_uv:
        S = svdvals(input)
        m, n = input._data.shape[-2:]
        batch = input._data.shape[:-2]
        z = input.new_zeros
        # (V as PyTorch makes it: the zero Vh's conjugate transpose, a view)
        return _SVD_OLD(z(batch + (m, m)), S, z(batch + (n, n)).mH)
    U, S, Vh = apply(SVD, (input,), (not some,))
    return _SVD_OLD(U, S, Vh.mH)


# ---- eigh / eig ----------------------------------------------------------------------------

def _eigh_fwd(a, uplo):
    rdt = np.empty((), a.dtype).real.dtype
    if a.size == 0:
        return np.zeros(a.shape[:-1], rdt), np.zeros_like(a)
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return w.astype(rdt), v.astype(a.dtype)


def _eig_vjp_core(ns, gL, gV, L, V, hermitian):
    if gV is None:
        if gL is None:
            return None
        if hermitian:
            return ns.matmul(V, ns.unsqueeze(gL, -1) * ns.mH(V))
        return ns.la_solve(ns.mH(V), ns.unsqueeze(gL, -1) * ns.mH(V))
    VhgV = ns.matmul(ns.mH(V), gV)
    if hermitian:
        VhgV = 0.5 * (VhgV - ns.mH(VhgV))
    else:
        VhgV = VhgV - ns.matmul(ns.mH(V), V * ns.unsqueeze(ns.real_of(ns.la_diag(VhgV)), -2))
    n = L.shape[-1]
    Lc = ns.conj(L)
    E = ns.unsqueeze(Lc, -2) - ns.unsqueeze(Lc, -1) + ns.la_eye(n, Lc)
    ret = VhgV / E
    if gL is not None:
        ret = ret - ns.la_diag_embed(ns.la_diag(ret)) + ns.la_diag_embed(gL)
    if hermitian:
        return ns.matmul(V, ns.matmul(ret, ns.mH(V)))
    return ns.la_solve(ns.mH(V), ns.matmul(ret, ns.mH(V)))


def _eigh_vjp(ns, g, need, L, V, uplo):
    return (_eig_vjp_core(ns, g[0], g[1], L, V, True),)


def _eigh_jvp(ns, tangents, primals, outs, uplo):
    # PyTorch's linalg_eig_jvp for Hermitian input: the whole tangent, not its Hermitian part
    dA = tangents[0]
    L, V = outs
    dP = ns.matmul(ns.matmul(ns.mH(V), dA), V)
    d = ns.la_diag(dP)
    dL = ns.real_of(d) if _is_c(dP) else d
    n = L.shape[-1]
    E = ns.unsqueeze(L, -2) - ns.unsqueeze(L, -1)
    eye = ns.la_eye(n, E)
    dX = dP / (E + eye) * (1 - eye)
    return dL, ns.matmul(V, dX)


EIGH = Op("linalg_eigh", _eigh_fwd, _eigh_vjp, _eigh_jvp, n_out=2, save_out=True,
          names=("eigenvalues", "eigenvectors", "UPLO"))


def _eig_fwd(a):
    cdt = np.result_type(a.dtype, np.complex64)
    if a.size == 0:
        return np.zeros(a.shape[:-1], cdt), np.zeros(a.shape, cdt)
    w, v = np.linalg.eig(a)
    return w.astype(cdt), v.astype(cdt)


def _eig_vjp(ns, g, need, L, V):
    return (_eig_vjp_core(ns, g[0], g[1], L, V, False),)


EIG = jvp_by_transpose(Op("linalg_eig", _eig_fwd, _eig_vjp, n_out=2, save_out=True,
                          names=("eigenvalues", "eigenvectors")))


def _uplo(UPLO: str) -> str:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


def _eigh_in(A: Tensor, fname: str) -> None:
    check_square(A, fname)
    if A._data.dtype.kind not in "fc":
        from ._dispatch import _type_name
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for "
                                  f"'{_type_name(A.dtype)}'")


def eigh(A: Tensor, UPLO: str = "L"):
    """``torch.linalg.eigh``: ascending eigenvalues and orthonormal eigenvectors of a Hermitian
    matrix (only the ``UPLO`` triangle is read)."""
    _eigh_in(A, "linalg.eigh")
    return _EIGH_T(*apply(EIGH, (A,), (_uplo(UPLO),)))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """``torch.linalg.eigvalsh``: the eigenvalues of ``eigh`` (node LinalgEighBackward0)."""
    _eigh_in(A, "linalg.eigvalsh")
    return apply(EIGH, (A,), (_uplo(UPLO),))[0]


def _eig_in(A: Tensor, fname: str) -> None:
    check_square(A, fname)
    if A._data.dtype.names is not None:   # complex32 pairs (ember._chalf)
        raise NotImplementedError("\"linalg_eig_out_cpu\" not implemented for 'ComplexHalf'")
    if A._data.dtype.kind not in "fc":
        from ._dispatch import _type_name
        raise RuntimeError(f"Unknown Complex ScalarType for {_type_name(A.dtype)}")
    if A._data.size and not np.isfinite(A._data).all():
        raise RuntimeError(f"{fname}: input tensor should not contain infs or NaNs.")


def eig(A: Tensor):
    """``torch.linalg.eig``: complex eigenvalues and unit-norm eigenvectors (LAPACK geev)."""
    _eig_in(A, "ember.linalg.eig")
    return _EIG_T(*apply(EIG, (A,), ()))


def eigvals(A: Tensor) -> Tensor:
    """``torch.linalg.eigvals``: the eigenvalues of ``eig`` (node LinalgEigBackward0)."""
    _eig_in(A, "ember.linalg.eigvals")
    return apply(EIG, (A,), ())[0]


# ---- QR ------------------------------------------------------------------------------------

def _qr_fwd(a, mode):
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    if a.size == 0:
        qc = m if mode == "complete" else k
        q = np.broadcast_to(np.eye(m, qc, dtype=a.dtype), batch + (m, qc)).copy()
        rr = m if mode == "complete" else k
        return (q if mode != "r" else np.zeros((0,), a.dtype)), np.zeros(batch + (rr, n), a.dtype)
    if mode == "r":
        r = np.linalg.qr(a, mode="r")
        return np.zeros((0,), a.dtype), r.astype(a.dtype)
    q, r = np.linalg.qr(a, mode=mode)
    return q.astype(a.dtype), r.astype(a.dtype)


def _qr_tall(ns, gQ, gR, Q, R):
    M = None
    if gR is not None:
        M = ns.matmul(R, ns.mH(gR))
    if gQ is not None:
        t = ns.matmul(ns.mH(gQ), Q)
        M = -t if M is None else M - t
    b = ns.tril(M, -1)
    d = ns.la_diag(M)
    cl = b + ns.mH(b) + ns.la_diag_embed(ns.real_of(d) if _is_c(d) else d)
    X = ns.matmul(Q, cl)
    if gQ is not None:
        X = X + gQ
    return ns.la_solve_tri(ns.mH(R), X, False, False, False)


def _is_c(x) -> bool:
    return (x.dtype.kind == "c") if isinstance(x, np.ndarray) else x.is_complex()


def _qr_vjp(ns, g, need, Q, R, mode):
    gQ, gR = g
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    if gQ is None and gR is None:
        return (None,)
    if m >= n:
        return (_qr_tall(ns, gQ, gR, Q, R),)
    # wide: A = [X | Y] with X = Q R1 square, Y = Q R2
    R1, R2 = R[..., :, :m], R[..., :, m:]
    Y = ns.matmul(Q, R2)
    gR1 = gR[..., :, :m] if gR is not None else None
    gQ2 = gQ
    if gR is not None:
        gR2 = gR[..., :, m:]
        t = ns.matmul(Y, ns.mH(gR2))
        gQ2 = t if gQ2 is None else gQ2 + t
        gY = ns.matmul(Q, gR2)
    else:
        gY = ns.la_zeros(Y.shape, Y)
    gX = _qr_tall(ns, gQ2, gR1, Q, R1)
    return (ns.la_cat([gX, gY], -1),)


QR = jvp_by_transpose(Op("linalg_qr", _qr_fwd, _qr_vjp, n_out=2, save_out=True,
                         names=("Q", "R", "mode")))


def linalg_qr(A: Tensor, mode: str = "reduced"):
    """``torch.linalg.qr``: Q with orthonormal columns and upper-triangular R (real diagonal
    signs as LAPACK's geqrf gives them)."""
    check_matrix(A, "linalg.qr")
    check_float(A, "linalg.qr")
    if mode not in ("reduced", "r", "complete"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    return _QR_T(*apply(QR, (A,), (mode,)))


def qr(input: Tensor, some: bool = True):
    """``torch.qr`` (deprecated in PyTorch): ``linalg.qr`` with mode reduced or complete."""
    check_matrix(input, "linalg.qr")
    check_float(input, "linalg.qr")
    return _QR_OLD(*apply(QR, (input,), ("reduced" if some else "complete",)))


# ---- Cholesky ------------------------------------------------------------------------------

def _chol_fwd(a, upper):
    return potrf(a, upper)


def _chol_vjp(ns, g, need, L, upper):
    # PyTorch's cholesky_backward: gA = L^{-H} pi*(tril(L^H gL)) L^{-1}, with
    # pi*(X) = (X + tril(X, -1)^H) / 2
    gL = g[0]
    if gL is None:
        return (None,)
    if upper:
        L, gL = ns.mH(L), ns.mH(gL)
    gA = ns.tril(ns.matmul(ns.mH(L), gL), 0)
    gA = 0.5 * (gA + ns.mH(ns.tril(gA, -1)))
    gA = ns.la_solve_tri(ns.mH(L), gA, True, True, False)
    return (ns.la_solve_tri(L, gA, False, False, False),)


def _chol_jvp(ns, tangents, primals, outs, upper):
    # PyTorch's cholesky_jvp reads the whole tangent (not only one triangle, unlike the VJP)
    dA, L = tangents[0], outs[0]
    if upper:
        L = ns.mH(L)
    dL = ns.la_solve_tri(L, dA, False, True, False)
    dL = ns.la_solve_tri(ns.mH(L), dL, True, False, False)
    dL = ns.tril(dL, 0) - 0.5 * ns.la_diag_embed(ns.la_diag(dL))
    dL = ns.matmul(L, dL)
    return (ns.mH(dL) if upper else dL), None


CHOLESKY = Op("linalg_cholesky_ex", _chol_fwd, _chol_vjp, _chol_jvp, n_out=2, diff_out=(0,),
              save_out=(0,), names=("L", "upper"))


def _chol_old_jvp(ns, tangents, primals, outs, upper):
    # derivatives.yaml gives the deprecated torch.cholesky no forward derivative
    raise NotImplementedError(
        "Trying to use forward AD with cholesky that does not support it because it has not "
        "been implemented yet.\nPlease file an issue to PyTorch at "
        "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
        "we can prioritize its implementation or submit a PR adding the implementation to "
        "derivatives.yaml")


CHOLESKY_OLD = Op("cholesky", _chol_fwd, _chol_vjp, _chol_old_jvp, n_out=2, diff_out=(0,),
                  save_out=(0,), names=("result", "upper"))


def _chol_msg(fname):
    return lambda pre, code: (
        f"{fname}: {pre}The factorization could not be completed because the input is not "
        f"positive-definite (the leading minor of order {code} is not positive-definite).")


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False):
    """``torch.linalg.cholesky_ex``: (L, info); info > 0 names the first leading minor that is
    not positive-definite, nothing is raised unless ``check_errors``."""
    check_square(A, "linalg.cholesky")
    check_float(A, "linalg.cholesky")
    L, info = apply(CHOLESKY, (A,), (bool(upper),))
    if check_errors:
        raise_info(info._data, _chol_msg("linalg.cholesky"))
    return _CHOL_EX_T(L, info)


def linalg_cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """``torch.linalg.cholesky``: raises LinAlgError for a matrix that is not positive-definite."""
    L, info = cholesky_ex(A, upper=upper)
    raise_info(info._data, _chol_msg("linalg.cholesky"))
    return L


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky`` (deprecated in PyTorch; node CholeskyBackward0)."""
    check_square(input, "cholesky")
    check_float(input, "cholesky")
    L, info = apply(CHOLESKY_OLD, (input,), (bool(upper),))
    raise_info(info._data, _chol_msg("linalg.cholesky"))
    return L


# ---- LU ------------------------------------------------------------------------------------

def _lu_parts(ns, LU, m, n):
    k = min(m, n)
    L = ns.tril(LU[..., :, :k], -1) + ns.la_eye(m, LU)[:, :k]
    U = ns.triu(LU[..., :k, :], 0)
    return L, U


def lu_backward(ns, gL, gU, P, L, U):
    """PyTorch's linalg_lu_backward: the gradient of A = P L U from those of L and U."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    # only the strictly lower part of L and the upper part of U vary
    gL = ns.tril(gL, -1) if gL is not None else None
    gU = ns.triu(gU, 0) if gU is not None else None
    if m == n:
        gA = None
        if gL is not None:
            gA = ns.tril(ns.matmul(ns.mH(L), gL), -1)
        if gU is not None:
            t = ns.triu(ns.matmul(gU, ns.mH(U)), 0)
            gA = t if gA is None else gA + t
        gA = ns.la_solve_tri(ns.mH(U), gA, False, False, False)
        gA = ns.la_solve_tri(ns.mH(L), gA, True, True, True)
        return ns.matmul(P, gA)
    if m < n:
        U1, U2 = U[..., :, :k], U[..., :, k:]
        gA = ns.matmul(ns.mH(L), gL) if gL is not None else None
        if gU is not None:
            t = ns.matmul(ns.triu(gU, 0), ns.mH(U))
            gA = -t if gA is None else gA - t
        gA = ns.la_solve_tri(ns.mH(U1), ns.tril(gA, -1), False, False, False)
        if gU is not None:
            gA = ns.la_cat([gA + ns.triu(gU[..., :, :k], 0), gU[..., :, k:]], -1)
        gA = ns.la_solve_tri(ns.mH(L), gA, True, True, True)
        if gU is None:
            gA = ns.la_cat([gA, ns.la_zeros(U2.shape, U2)], -1)
        return ns.matmul(P, gA)
    L1, L2 = L[..., :k, :], L[..., k:, :]
    gA = ns.matmul(gU, ns.mH(U)) if gU is not None else None
    if gL is not None:
        t = ns.matmul(ns.mH(L), gL)
        gA = -t if gA is None else gA - t
    gA = ns.la_solve_tri(ns.mH(L1), ns.triu(gA, 0), True, True, True)
    if gL is not None:
        gA = ns.la_cat([gA + ns.tril(gL[..., :k, :], -1), gL[..., k:, :]], -2)
    gA = ns.la_solve_tri(ns.mH(U), gA, False, False, False)
    if gL is None:
        gA = ns.la_cat([gA, ns.la_zeros(L2.shape, L2)], -2)
    return ns.matmul(P, gA)


def _luf_fwd(a, pivot):
    lu, piv, info = getrf(a)
    return lu, piv, info


def _luf_vjp(ns, g, need, LU, P):
    gLU = g[0]
    if gLU is None:
        return (None,)
    m, n = LU.shape[-2:]
    k = min(m, n)
    L, U = _lu_parts(ns, LU, m, n)
    gL = ns.tril(gLU, -1)[..., :, :k]
    gU = ns.triu(gLU, 0)[..., :k, :]
    return (lu_backward(ns, gL, gU, ns.const(P), L, U),)


def _luf_apply(A: Tensor, pivot: bool):
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    lu, piv, info = getrf(A._data)
    P = pivots_to_perm(piv, A._data.shape[-2]).astype(A._data.dtype)
    return wrap_outputs(LU_FACTOR, (A,), (P,), (lapack_layout(lu), piv, info))


LU_FACTOR = jvp_by_transpose(Op("linalg_lu_factor_ex", _luf_fwd, _luf_vjp, n_out=3,
                                diff_out=(0,), save_out=(0,), names=("LU", "P")))
LU_FACTOR.node.params_saved = True


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False):
    """``torch.linalg.lu_factor_ex``: (LU, pivots, info) from LAPACK's getrf."""
    check_matrix(A, "ember.linalg.lu_factor_ex")
    check_float(A, "linalg.lu_factor_ex")
    LU, piv, info = _luf_apply(A, pivot)
    if check_errors:
        raise_info(info._data, lambda pre, code: (
            f"ember.linalg.lu_factor_ex: {pre}U[{code},{code}] is zero and using it on lu_solve "
            "would result in a division by zero. If you still want to perform the factorization, "
            "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"),
            RuntimeError)
    return _LUF_EX_T(LU, piv, info)


def lu_factor(A: Tensor, *, pivot: bool = True):
    """``torch.linalg.lu_factor``: (LU, pivots); a zero pivot raises as in PyTorch."""
    check_matrix(A, "ember.linalg.lu_factor")
    check_float(A, "linalg.lu_factor")
    LU, piv, info = _luf_apply(A, pivot)
    raise_info(info._data, lambda pre, code: (
        f"ember.linalg.lu_factor: {pre}U[{code},{code}] is zero and using it on lu_solve would "
        "result in a division by zero. If you still want to perform the factorization, consider "
        "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"), RuntimeError)
    return _LUF_T(LU, piv)


def _lu_fwd(a, pivot):
    m, n = a.shape[-2:]
    lu, piv, _ = getrf(a)
    P = pivots_to_perm(piv, m).astype(a.dtype)
    k = min(m, n)
    L = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)
    U = np.triu(lu[..., :k, :])
    return P, L, U


def _lu_vjp(ns, g, need, P, L, U, pivot):
    _, gL, gU = g
    if gL is None and gU is None:
        return (None,)
    return (lu_backward(ns, gL, gU, P, L, U),)


LU = jvp_by_transpose(Op("linalg_lu", _lu_fwd, _lu_vjp, n_out=3, diff_out=(1, 2),
                         save_out=(0, 1, 2), names=("P", "L", "U", "pivot")))


def linalg_lu(A: Tensor, *, pivot: bool = True):
    """``torch.linalg.lu``: (P, L, U) with A = P L U."""
    check_matrix(A, "linalg.lu")
    check_float(A, "linalg.lu")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    return _LU_T(*apply(LU, (A,), (True,)))


_LU_INFO_T = rt("_lu_with_info", ("LU", "pivots", "info"))


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False):
    """``torch.lu`` (deprecated in PyTorch): (LU, pivots) or, with ``get_infos``, also info;
    a zero pivot raises unless ``get_infos``."""
    import warnings
    warnings.warn("ember.lu is deprecated in favor of ember.linalg.lu_factor / "
                  "ember.linalg.lu_factor_ex and will be removed in a future PyTorch release.",
                  UserWarning, stacklevel=2)
    r = lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    if get_infos:
        return _LU_INFO_T(*r)
    return r[0], r[1]


def _unpack_fwd(LU, piv, unpack_data, unpack_pivots, shape):
    m, n = LU.shape[-2:]
    k = min(m, n)
    if unpack_pivots:
        P = pivots_to_perm(np.asarray(piv), m).astype(LU.dtype)
    else:
        P = np.zeros((0,), LU.dtype)
    if unpack_data:
        L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype)
        U = np.triu(LU[..., :k, :])
    else:
        L = U = np.zeros((0,), LU.dtype)
    return P, L, U


def _unpack_vjp(ns, g, need, piv, unpack_data, unpack_pivots, shape):
    _, gL, gU = g
    m, n = shape[-2:]
    k = min(m, n)
    gA = None
    if gL is not None:
        t = ns.tril(gL, -1)
        if n > k:      # wide: L is square, its columns are the first k of LU
            t = ns.la_cat([t, ns.la_zeros(t.shape[:-1] + (n - k,), t)], -1)
        gA = t
    if gU is not None:
        t = ns.triu(gU, 0)
        if m > k:      # tall: U is square, its rows are the first k of LU
            t = ns.la_cat([t, ns.la_zeros(t.shape[:-2] + (m - k, n), t)], -2)
        gA = t if gA is None else gA + t
    return (gA, None)


LU_UNPACK = jvp_by_transpose(Op("lu_unpack", _unpack_fwd, _unpack_vjp, n_out=3,
                                diff_out=(1, 2), saves=(1,), names=("LU_pivots",)))


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True):
    """``torch.lu_unpack``: (P, L, U) from lu_factor's packed result."""
    check_matrix(LU_data, "ember.lu_unpack")
    if LU_pivots._data.dtype != np.int32:
        raise RuntimeError("ember.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "ember.int32 dtype. Note: this function is intended to be used with "
                           "the output produced by ember.linalg.lu_factor")
    r = apply(LU_UNPACK, (LU_data, LU_pivots), (bool(unpack_data), bool(unpack_pivots),
                                                 LU_data._data.shape))
    return _LU_UNPACK_T(*r)


# ---- Householder products ------------------------------------------------------------------

def _hh_np(a, tau):
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    out = np.empty_like(a)
    if a.size == 0:
        return np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape).copy()
    f = lapack("orgqr" if a.dtype.kind != "c" else "ungqr", a)
    batch = a.shape[:-2]
    for idx in np.ndindex(*batch):
        ai = a[idx]
        if k == 0:
            out[idx] = np.eye(m, n, dtype=a.dtype)
            continue
        q, _, info = f(ai, tau[idx])
        out[idx] = q
    return out


def _hh_composite(A, tau):
    """The Householder product with ember ops: prod_i (I - tau_i v_i v_i^H), first n columns."""
    from .. import _ops as E
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    eye = E.eye(m, dtype=A.dtype)
    Q = eye.expand(A.shape[:-2] + (m, m))
    for i in range(k):
        v = A[..., :, i]
        mask = np.zeros(m, bool)
        mask[i + 1:] = True
        unit = np.zeros(m)
        unit[i] = 1
        v = v * E.tensor(mask.astype(A._data.dtype)) + E.tensor(unit.astype(A._data.dtype))
        H = eye - tau[..., i].unsqueeze(-1).unsqueeze(-1) * (v.unsqueeze(-1) * v.conj()
                                                             .unsqueeze(-2))
        Q = Q @ H
    return Q[..., :, :n]


def _hh_vjp(ns, g, need, A, tau):
    return _vjp_by_retrace(ns, _hh_composite, g, need, (A, tau))


def _vjp_by_retrace(ns, fn, g, need, inputs):
    """The VJP of ``fn`` (written with ember ops) by running it again under autograd: the
    rule of ops whose formula is their own composition (a product of reflections)."""
    from ..autograd import grad as _grad
    from ..autograd.grad_mode import enable_grad
    graph = ns is not _np_ns()
    with enable_grad():
        xs = []
        for x, nd in zip(inputs, need):
            if isinstance(x, np.ndarray):
                x = const(x.copy())
            if not graph or not x.requires_grad:
                x = x.detach().requires_grad_(bool(nd))
            xs.append(x)
        out = fn(*xs)
        gg = g if isinstance(g, Tensor) else const(np.ascontiguousarray(g))
        want = [x for x, nd in zip(xs, need) if nd]
        if out.requires_grad:
            res = _grad(out, want, gg, allow_unused=True, create_graph=graph)
        else:      # nothing depends on the inputs (no reflections): no gradient, as in PyTorch
            return tuple(None for _ in xs)
    it = iter(res)
    outs = []
    for x, nd in zip(xs, need):
        r = next(it) if nd else None
        outs.append(r if graph or r is None else r._data)
    return tuple(outs)


def _np_ns():
    from ._registry import NP
    return NP


HOUSEHOLDER = jvp_by_transpose(Op("linalg_householder_product", _hh_np, _hh_vjp, saves=(0, 1),
                                  names=("input", "tau")))
ORGQR = jvp_by_transpose(Op("orgqr", _hh_np, _hh_vjp, saves=(0, 1), names=("self", "input2")))


def _hh_check(A: Tensor, tau: Tensor, fname: str) -> None:
    check_matrix(A, fname, "input")
    m, n = A._data.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fname}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau._data.shape[-1] > n:
        raise RuntimeError(f"{fname}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tau._data.ndim != A._data.ndim - 1:
        raise RuntimeError(f"{fname}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau._data.ndim} and input.ndim is equal to "
                           f"{A._data.ndim}")
    if A.dtype is not tau.dtype:
        from ._dispatch import _type_name
        raise RuntimeError(f"{fname}: tau dtype {_type_name(tau.dtype)} does not match input "
                           f"dtype {_type_name(A.dtype)}")


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """``torch.linalg.householder_product``: the first n columns of H_1 ... H_k."""
    _hh_check(A, tau, "ember.linalg.householder_product")
    return apply(HOUSEHOLDER, (A, tau), ())


def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    """``torch.orgqr``: ``householder_product`` (node OrgqrBackward0)."""
    _hh_check(input, tau, "ember.linalg.householder_product")
    return apply(ORGQR, (input, tau), ())


def _full_q_np(a, tau):
    m = a.shape[-2]
    k = tau.shape[-1]
    ap = np.zeros(a.shape[:-2] + (m, m), a.dtype)
    ap[..., :, :min(k, a.shape[-1])] = a[..., :, :min(k, a.shape[-1])]
    return _hh_np(ap, tau)


def _apply_q(q, c, left, transpose):
    if transpose:
        q = np.conj(np.swapaxes(q, -1, -2))
    return q @ c if left else c @ q


def _ormqr_fwd(a, tau, c, left, transpose):
    return _apply_q(_full_q_np(a, tau), c, left, transpose)


def _ormqr_composite(left, transpose):
    def f(A, tau, C):
        from .. import _ops as E
        m = A.shape[-2]
        k = tau.shape[-1]
        pad = E.zeros(A.shape[:-2] + (m, m - k), dtype=A.dtype)
        Q = _hh_composite(E.cat([A[..., :, :k], pad], -1), tau)
        if transpose:
            Q = Q.mH
        return Q @ C if left else C @ Q
    return f


def _ormqr_vjp(ns, g, need, A, tau, C, left, transpose):
    return _vjp_by_retrace(ns, _ormqr_composite(left, transpose), g, need, (A, tau, C))


ORMQR = Op("ormqr", _ormqr_fwd, _ormqr_vjp, saves=(0, 1, 2), names=("self", "input2",
                                                                     "input3"))


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True,
          transpose: bool = False) -> Tensor:
    """``torch.ormqr``: Q C (or C Q, with Q^H when ``transpose``) for the Q that geqrf's
    reflectors define (no forward-mode rule, as in PyTorch)."""
    for name, x in (("input", input), ("other", other)):
        if x._data.ndim < 2:
            raise RuntimeError(f"ember.ormqr: {name} must have at least 2 dimensions.")
    side = -2 if left else -1
    m = other._data.shape[side]
    if input._data.shape[-2] != m:
        raise RuntimeError(f"ember.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    if tau._data.ndim == 0 or tau._data.shape[-1] != min(m, input._data.shape[-1]):
        raise RuntimeError(f"ember.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    if tau._data.ndim != input._data.ndim - 1:
        raise RuntimeError("ember.ormqr: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau._data.ndim} and input.ndim is equal to "
                           f"{input._data.ndim}")
    return apply(ORMQR, (input, tau, other), (bool(left), bool(transpose)))


def geqrf(input: Tensor):
    """``torch.geqrf``: LAPACK's packed QR (a, tau); not differentiable, as in PyTorch."""
    check_matrix(input, "geqrf")
    check_float(input, "geqrf")
    a = input._data
    m, n = a.shape[-2:]
    k = min(m, n)
    out = np.empty_like(a)
    tau = np.zeros(a.shape[:-2] + (k,), a.dtype)
    if a.size:
        f = lapack("geqrf", a)
        for idx in np.ndindex(*a.shape[:-2]):
            qr_, t, _, _ = f(a[idx])
            out[idx] = qr_
            tau[idx] = t
    return _GEQRF_T(const(lapack_layout(out)), const(tau))


# ---- randomized low-rank SVD / PCA (PyTorch's torch/_lowrank.py algorithm) ---------------

def _approx_basis(A, q, niter, M):
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M (Halko et al.,
    algorithm 4.4)."""
    from .. import _ops as E
    dt = A.dtype if A.is_complex() or A.is_floating_point() else E.float32
    R = E.randn(A.shape[-1], q, dtype=dt)
    X = E.matmul(A, R)
    if M is not None:
        X = X - E.matmul(M, R)
    Q = linalg_qr(X).Q
    for _ in range(niter):
        X = E.matmul(A.mH, Q)
        if M is not None:
            X = X - E.matmul(M.mH, Q)
        Q = linalg_qr(X).Q
        X = E.matmul(A, Q)
        if M is not None:
            X = X - E.matmul(M, Q)
        Q = linalg_qr(X).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    from .. import _ops as E
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:
        A = A.mH
        if M is not None:
            M = M.mH
    Q = _approx_basis(A, q, niter, M)
    B = E.matmul(Q.mH, A)
    if M is not None:
        B = B - E.matmul(Q.mH, M)
    U, S, Vh = linalg_svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A: Tensor, q=6, niter=2, M=None):
    """``torch.svd_lowrank``: a randomized SVD (U, S, V) of A - M of rank ``q`` (random
    projections from ember's generator, so values match PyTorch's up to the bases' signs)."""
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A: Tensor, q=None, center: bool = True, niter: int = 2):
    """``torch.pca_lowrank``: ``svd_lowrank`` of the column-centred matrix."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter, None)


lapack_outputs(SVD, EIGH, EIG, QR, CHOLESKY, CHOLESKY_OLD, LU_FACTOR, HOUSEHOLDER, ORGQR, ORMQR)

for _n, _f in [("svd", svd), ("qr", qr), ("cholesky", cholesky), ("geqrf", geqrf),
               ("orgqr", orgqr), ("ormqr", ormqr), ("lu", lu)]:
    method(_n, _f)
del _n, _f
