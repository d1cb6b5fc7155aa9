"""The window functions of ``torch.signal.windows``.

PyTorch writes these in Python from tensor ops (linspace, exp, cos, a weighted sum, i0); they
are composed here from the same ember ops in the same order, so values round as PyTorch's do
and ``requires_grad=True`` gives the same graph (the linspace leaf and what follows it).
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from ... import _dtype as D
from ..._ops import (
    abs as _abs,
)
from ..._ops import (
    arange,
    cos,
    empty,
    exp,
    i0,
    linspace,
    minimum,
    ones,
    sin,
    sqrt,
    tensor,
)
from ..._tensor import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name: str, M: int, dtype, layout) -> None:
    """PyTorch's ``_window_function_checks``."""
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout) not in ("strided", "torch.strided"):
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (D.float32, D.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _dtype(dtype):
    return dtype if dtype is not None else D.get_default_dtype()


def _trivial(M: int, dtype, device, requires_grad) -> Tensor | None:
    """Lengths 0 and 1 (an empty window, [1])."""
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """``torch.signal.windows.exponential``: exp(-|n - center| / tau)."""
    dtype = _dtype(dtype)
    _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / tau
    k = linspace(-center * c, (-center + (M - 1)) * c, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return exp(-_abs(k))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """``torch.signal.windows.cosine``: sin(pi (n + 0.5) / M) (SciPy's sine window)."""
    dtype = _dtype(dtype)
    _checks("cosine", M, dtype, layout)
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    c = math.pi / (M + 1 if not sym and M > 1 else M)
    k = linspace(0.5 * c, (0.5 + (M - 1)) * c, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return sin(k)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=None,
             device=None, requires_grad: bool = False) -> Tensor:
    """``torch.signal.windows.gaussian``: exp(-(n / (2 std))^2) about the centre."""
    dtype = _dtype(dtype)
    _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / (std * math.sqrt(2))
    k = linspace(start * c, (start + (M - 1)) * c, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return exp(-(k ** 2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=None,
           device=None, requires_grad: bool = False) -> Tensor:
    """``torch.signal.windows.kaiser``: I0(beta sqrt(1 - (n - N/2)^2 / (N/2)^2)) / I0(beta)."""
    dtype = _dtype(dtype)
    _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    t = _trivial(M, dtype, device, requires_grad)
    if t is not None:
        return t
    b = tensor(beta, dtype=dtype, device=device)
    start = -b
    c = 2.0 * b / (M if not sym else M - 1)
    end = minimum(b, start + (M - 1) * c)
    k = linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return i0(sqrt(b * b - k ** 2)) / i0(b)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """``torch.signal.windows.hamming``: general_hamming with alpha 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
         requires_grad: bool = False) -> Tensor:
    """``torch.signal.windows.hann``: general_hamming with alpha 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``torch.signal.windows.blackman``: general_cosine with [0.42, 0.5, 0.08]."""
    dtype = _dtype(dtype)
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``torch.signal.windows.bartlett``: the triangular window 1 - |2n / N - 1|."""
    dtype = _dtype(dtype)
    _checks("bartlett", M, dtype, layout)
    t = _trivial(M, dtype, device, requires_grad)
    if t is not None:
        return t
    c = 2 / (M if not sym else M - 1)
    k = linspace(-1, -1 + (M - 1) * c, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return 1 - _abs(k)


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=None, device=None,
                   requires_grad: bool = False) -> Tensor:
    """``torch.signal.windows.general_cosine``: sum_i (-1)^i a_i cos(2 pi i n / N)."""
    dtype = _dtype(dtype)
    _checks("general_cosine", M, dtype, layout)
    t = _trivial(M, dtype, device, requires_grad)
    if t is not None:
        return t
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    c = 2 * math.pi / (M if not sym else M - 1)
    k = linspace(0, (M - 1) * c, M, dtype=dtype, device=device, requires_grad=requires_grad)
    a_i = tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                 requires_grad=requires_grad)
    i = arange(a_i.shape[0], dtype=a_i.dtype, device=device, requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """``torch.signal.windows.general_hamming``: general_cosine with [alpha, 1 - alpha]."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """``torch.signal.windows.nuttall``: general_cosine with Nuttall's four coefficients."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
