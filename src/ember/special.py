"""``torch.special``: special functions, re-exported from the op families in ``_ops``.

Names that PyTorch makes aliases of top-level functions (``expit`` = sigmoid, ``gammaln`` =
lgamma, ``psi`` = digamma, ``gammainc`` = igamma, ``multigammaln`` = mvlgamma, ...) are the same
ops here, so they record the same nodes (``SigmoidBackward0``, ``LgammaBackward0``, ...).
"""
from __future__ import annotations

from ._ops.activation import log_softmax as _log_softmax
from ._ops.activation import softmax as _softmax
from ._ops.pointwise import expm1, log1p
from ._ops.reduction import logsumexp
from ._ops.special import (
    digamma,
    erf,
    erfc,
    erfinv,
    exp2,
    i0,
    logit,
    polygamma,
    sinc,
    xlogy,
)
from ._ops.special import lgamma as gammaln
from ._ops.special import round as _round
from ._ops.special_more import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    entr,
    erfcx,
    expit,
    gammainc,
    gammaincc,
    hermite_polynomial_h,
    hermite_polynomial_he,
    i0e,
    i1,
    i1e,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    log_ndtr,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    multigammaln,
    ndtr,
    ndtri,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
    spherical_bessel_j0,
    xlog1py,
    zeta,
)

psi = digamma

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]


def softmax(input, dim: int, *, dtype=None):
    """``torch.special.softmax``: ``torch.softmax`` (``dtype`` casts the input first)."""
    return _softmax(input, dim, dtype)


def log_softmax(input, dim: int, *, dtype=None):
    """``torch.special.log_softmax``: ``torch.log_softmax``."""
    return _log_softmax(input, dim, dtype)


def round(input, *, decimals: int = 0):
    """``torch.special.round``: ``torch.round`` with ``decimals=0`` by default, so integer
    tensors are refused and float results record RoundBackward1, as in PyTorch."""
    return _round(input, decimals=decimals)
