"""PyTorch-identical tensor repr (``torch._tensor_str``), computed on the NumPy data.

``tensor_repr`` builds the string ``Tensor.__repr__`` (and so ``str``) returns; the rules for the
number format (integer-valued floats printed as ``1.``, fixed or scientific notation, the common
column width), line wrapping at ``linewidth``, summarisation with ``...`` above ``threshold`` and
the suffixes (``dtype=``, ``device='meta'``, ``size=``, ``grad_fn=``, ``requires_grad=``,
``tangent=``) follow PyTorch's printer. This module imports nothing from the rest of ember at
import time (it is loaded before the tensor class).
"""
from __future__ import annotations

import contextlib
import math

import numpy as np

__all__ = ["get_printoptions", "set_printoptions"]


_NAMES = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")


class _Options:
    __slots__ = _NAMES

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


PRINT_OPTS = _Options()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """Set the options for printing tensors (``torch.set_printoptions``).

    ``profile`` is one of ``"default"``, ``"short"`` or ``"full"``; the other arguments override
    it. ``sci_mode`` is always set: ``None`` lets the printer choose scientific notation itself.
    """
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, 1000
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
        elif profile == "short":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 2, 1000
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 80
        elif profile == "full":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, math.inf
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options as a dict that ``set_printoptions(**d)`` accepts."""
    return {name: getattr(PRINT_OPTS, name) for name in _NAMES}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change the print options (``torch._tensor_str.printoptions``)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ---- number formatting ------------------------------------------------------------------------

class _Formatter:
    """The common format of every number in one (real) array: its mode and column width."""

    def __init__(self, arr: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        absv = np.abs(vals)
        lo, hi = float(absv.min()), float(absv.max())
        values = vals.tolist()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        p = PRINT_OPTS.precision
        if self.sci_mode:
            width = max(len(f"{v:.{p}e}") for v in values)
        elif self.int_mode:
            width = max(len(f"{v:.0f}") for v in values) + 1
        else:
            width = max(len(f"{v:.{p}f}") for v in values)
        self.max_width = max(self.max_width, width)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating:
            p = PRINT_OPTS.precision
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _complex_str(value, f1: _Formatter, f2: _Formatter) -> str:
    real_str = f1.format(value.real)
    imag_str = (f2.format(value.imag) + "j").lstrip()
    if imag_str[0] in "+-":
        return real_str + imag_str
    return real_str + "+" + imag_str


# ---- layout -------------------------------------------------------------------------------------

def _vector_str(a: np.ndarray, indent: int, summarize: bool, f1, f2) -> str:
    element_length = f1.width() + 2
    if f2 is not None:
        element_length += f2.width() + 1
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))

    def fmt(v):
        return f1.format(v) if f2 is None else _complex_str(v, f1, f2)

    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        data = ([fmt(v) for v in _as_printable(a[:edge]).tolist()] + [" ..."]
                + [fmt(v) for v in _as_printable(a[-edge:]).tolist()])
    else:
        data = [fmt(v) for v in _as_printable(a).tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(a: np.ndarray, indent: int, summarize: bool, f1, f2) -> str:
    dim = a.ndim
    if dim == 0:
        v = _as_printable(a).item()
        return f1.format(v) if f2 is None else _complex_str(v, f1, f2)
    if dim == 1:
        return _vector_str(a, indent, summarize, f1, f2)
    edge = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * edge:
        slices = ([_nested_str(a[i], indent + 1, summarize, f1, f2) for i in range(edge)]
                  + ["..."]
                  + [_nested_str(a[i], indent + 1, summarize, f1, f2)
                     for i in range(n - edge, n)])
    else:
        slices = [_nested_str(a[i], indent + 1, summarize, f1, f2) for i in range(n)]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows (they alone decide the number format)."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        if a.shape[0] > 2 * edge:
            return np.concatenate((a[:edge], a[-edge:]))
        return a
    if not edge:
        return np.empty((0,) * a.ndim, a.dtype)
    if a.shape[0] > 2 * edge:
        rows = [a[i] for i in range(edge)] + [a[i] for i in range(a.shape[0] - edge, a.shape[0])]
    else:
        rows = list(a)
    return np.stack([_summarized(r) for r in rows])


def _as_printable(a: np.ndarray) -> np.ndarray:
    """Exact float64/complex128 (or integer/bool) values of the data."""
    k = a.dtype.kind
    if k == "c":
        return a.astype(np.complex128)
    if k == "f":
        return a.astype(np.float64)
    if a.dtype.name == "bfloat16":
        return a.astype(np.float32).astype(np.float64)
    return a


def _tensor_str(a: np.ndarray, indent: int) -> str:
    if a.size == 0:
        return "[]"
    if a.dtype.kind == "V" and a.dtype.names:   # complex32 pairs: printed as complex64
        from ._chalf import to_c64  # (PyTorch prints cfloat())
        a = to_c64(a)
    summarize = a.size > PRINT_OPTS.threshold
    shown = _as_printable(_summarized(a) if summarize else a)
    if shown.dtype.kind == "c":
        f1 = _Formatter(shown.real, True)
        f2 = _Formatter(shown.imag, True)
        return _nested_str(a, indent, summarize, f1, f2)
    f = _Formatter(shown, shown.dtype.kind == "f")
    return _nested_str(a, indent, summarize, f, None)


def _add_suffixes(tensor_str: str, suffixes: list, indent: int) -> str:
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t, tensor_contents: str | None = None) -> str:
    """The string PyTorch prints for this tensor, with ``ember.`` for ``torch.``.

    ``tensor_contents`` replaces the printed values (``Tensor.__repr__(tensor_contents=)``).
    """
    from . import _dtype as D
    from ._tensor import Tensor

    cls = type(t)
    plain = cls is Tensor or cls.__name__ == "Parameter" or getattr(cls, "bits", 0)
    prefix = "tensor(" if plain else f"{cls.__name__}("
    indent = len(prefix)
    suffixes = []
    data = t._data
    dtype = D._FROM_NP[data.dtype]
    default = D.get_default_dtype()
    default_complex = D.complex128 if default is D.float64 else D.complex64
    has_default_dtype = dtype in (default, default_complex, D.int64, D.bool)
    shape = tuple(data.shape)

    if t.is_meta:
        suffixes.append("device='meta'")
        suffixes.append("size=" + str(shape))
        if dtype is not default:
            suffixes.append("dtype=" + str(dtype))
        body = "..." if tensor_contents is None else tensor_contents
    elif data.size == 0:
        if data.ndim != 1:
            suffixes.append("size=" + str(shape))
        if dtype is not default:
            suffixes.append("dtype=" + str(dtype))
        body = "[]" if tensor_contents is None else tensor_contents
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(shape))
        if not has_default_dtype:
            suffixes.append("dtype=" + str(dtype))
        body = _tensor_str(data, indent) if tensor_contents is None else tensor_contents

    grad_fn_name = None
    try:
        fn = t.grad_fn
    except RuntimeError:
        grad_fn_name = "Invalid"
        fn = None
    if fn is not None:
        name = getattr(fn, "name", None)
        grad_fn_name = name() if callable(name) else type(fn).__name__
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")

    from .autograd.forward_ad import fw_of
    tangent = fw_of(t)
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")

    return _add_suffixes(prefix + body, suffixes, indent)
