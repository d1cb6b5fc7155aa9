"""``torch.linalg``: decompositions, solvers, inverses, determinants and norms (re-exports of
src/ember/_ops/linalg_*.py)."""
from __future__ import annotations

from ._ops.linalg import matmul
from ._ops.linalg_base import LinAlgError, _LinAlgError  # noqa: F401
from ._ops.linalg_decomp import (
    cholesky_ex,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    householder_product,
    lu_factor,
    lu_factor_ex,
    svdvals,
)
from ._ops.linalg_decomp import linalg_cholesky as cholesky
from ._ops.linalg_decomp import linalg_lu as lu
from ._ops.linalg_decomp import linalg_qr as qr
from ._ops.linalg_decomp import linalg_svd as svd
from ._ops.linalg_misc import (
    cond,
    cross,
    diagonal,
    matrix_norm,
    matrix_rank,
    multi_dot,
    norm,
    tensorinv,
    tensorsolve,
    vander,
    vecdot,
    vector_norm,
)
from ._ops.linalg_solve import (
    det,
    inv,
    inv_ex,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lstsq,
    matrix_exp,
    matrix_power,
    pinv,
    solve,
    solve_ex,
    solve_triangular,
)
from ._ops.linalg_solve import linalg_slogdet as slogdet
from ._ops.linalg_solve import lu_solve_linalg as lu_solve

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh",
    "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex",
    "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp",
    "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet",
    "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve",
    "vander", "vecdot", "vector_norm",
]
