"""Statistics and numerical-calculus functions PyTorch composes from other ops: diff, gradient,
trapezoid / cumulative_trapezoid, cov, corrcoef, nanmean, quantile / nanquantile,
repeat_interleave, isin, histogram / histogramdd.

Like PyTorch's CompositeImplicitAutograd kernels they are written with other ember ops, in
PyTorch's order of operations, so their results carry the same grad_fn nodes and gradients
(VJP, JVP and double backward come from the ops used).
"""
from __future__ import annotations

import builtins
import numbers
import warnings

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _wrap_dim
from ._dispatch import _type_name
from ._registry import Op, apply, method
from .reduction import _structseq, dims_arg, return_types

__all__ = [
    "corrcoef",
    "cov",
    "cumulative_trapezoid",
    "diff",
    "gradient",
    "histogram",
    "histogramdd",
    "isin",
    "nanmean",
    "nanquantile",
    "quantile",
    "repeat_interleave",
    "trapezoid",
    "trapz",
]


def _E():
    from .. import _ops
    return _ops


# ---- diff ----------------------------------------------------------------------

def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """``torch.diff``: the ``n``-th forward difference along ``dim`` (``logical_xor`` for
    bool), after concatenating ``prepend`` and ``append``."""
    E = _E()
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input._data.ndim)
    x = input
    if prepend is not None or append is not None:
        parts = ([prepend] if prepend is not None else []) + [input] + (
            [append] if append is not None else [])
        parts = [_expand_scalar(p, input, d) for p in parts]
        x = E.cat(parts, d)
    if n == 0:
        return E.empty_like(x).copy_(x)   # as PyTorch's: a CopyBackwards node
    for _ in range(n):
        m = x._data.shape[d]
        if m == 0:
            break
        hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = E.logical_xor(hi, lo) if x.dtype is D.bool else hi - lo
    return x


def _expand_scalar(p: Tensor, like: Tensor, d: int) -> Tensor:
    if p._data.ndim:
        return p
    shape = list(like._data.shape)
    shape[d] = 1
    return p.expand(shape)


# ---- trapezoid / cumulative_trapezoid --------------------------------------------------------

def _x_diff(x: Tensor, y: Tensor, d: int, name: str) -> Tensor:
    if x._data.ndim == 1:
        if x._data.shape[0] != y._data.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y._data.ndim
        shape[d] = x._data.shape[0]
        xv = x.view(shape)
    elif x._data.ndim < y._data.ndim:
        xv = x.view((1,) * (y._data.ndim - x._data.ndim) + tuple(x._data.shape))
    else:
        xv = x
    n = xv._data.shape[d]
    return xv.narrow(d, 1, n - 1) - xv.narrow(d, 0, n - 1)


def _div_scalar(t: Tensor, c: float) -> Tensor:
    """``t / c`` through div.Scalar (DivBackward1), as PyTorch's C++ composites divide."""
    if not (t.is_floating_point() or t.is_complex()):
        return t / c
    from .nn_loss import _DIV_SCALAR
    return apply(_DIV_SCALAR, (t,), (c,))


_MUL_SCALAR = Op("mul_scalar", lambda x, c: np.multiply(x, c).astype(x.dtype, copy=False),
                 lambda ns, g, need, c: (g * c,), linear=True, node="MulBackward1",
                 names=("other",))


def _mul_scalar(t: Tensor, c: float) -> Tensor:
    """``t * c`` through mul.Scalar (MulBackward1)."""
    if not (t.is_floating_point() or t.is_complex()):
        return t * c
    return apply(_MUL_SCALAR, (t,), (c,))


def _zeros_except(y: Tensor, d: int) -> Tensor:
    shape = list(y._data.shape)
    del shape[d]
    return _E().zeros(shape, dtype=y.dtype)


def _check_dx(dx) -> None:
    if isinstance(dx, (builtins.complex, bool)) or (
            isinstance(dx, Tensor) and (dx.is_complex() or dx.dtype is D.bool)):
        raise RuntimeError(
            "trapezoid: Currently, we only support dx as a real number.")


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """``torch.trapezoid``: the trapezoidal rule along ``dim`` with sample points ``x`` or a
    constant spacing ``dx`` (1 by default)."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: "
                        "x and dx cannot both be given")
    d = _wrap_dim(dim, y._data.ndim)
    n = y._data.shape[d] if y._data.ndim else 1
    if n == 0:
        return _zeros_except(y, d)
    if y.dtype is D.bool or (isinstance(x, Tensor) and x.dtype is D.bool):
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    ys = y.narrow(d, 0, n - 1) + y.narrow(d, 1, n - 1)
    if isinstance(x, Tensor):
        dxs = _x_diff(x, y, d, "trapezoid")
        return _div_scalar((ys * dxs).sum(d), 2.0)
    dx = 1 if dx is None else dx
    _check_dx(dx)
    return _mul_scalar(y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5, float(dx))


def trapz(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """``torch.trapz``: an alias of ``trapezoid``."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None,
                         dim: int = -1) -> Tensor:
    """``torch.cumulative_trapezoid``: the running trapezoidal integral along ``dim``."""
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments: "
                        "x and dx cannot both be given")
    d = _wrap_dim(dim, y._data.ndim)
    n = y._data.shape[d] if y._data.ndim else 1
    if y.dtype is D.bool or (isinstance(x, Tensor) and x.dtype is D.bool):
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is "
                           "not supported")
    if n == 0:
        return y.clone()
    ys = y.narrow(d, 0, n - 1) + y.narrow(d, 1, n - 1)
    if isinstance(x, Tensor):
        dxs = _x_diff(x, y, d, "cumulative_trapezoid")
        return _div_scalar((dxs * ys).cumsum(d), 2.0)
    dx = 1 if dx is None else dx
    _check_dx(dx)
    return (float(dx) / 2.0 * ys).cumsum(d)


# ---- gradient ----------------------------------------------------------------------

def _sl(t: Tensor, d: int, start, stop=None) -> Tensor:
    n = t._data.shape[d]
    s, e, _ = slice(start, stop).indices(n)
    return t.narrow(d, s, max(e - s, 0))


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """``torch.gradient``: second-order central differences inside, first- or second-order
    one-sided ones at the edges, along each of ``dim`` (all dims by default); ``spacing`` is a
    number, a list of numbers, or a list of coordinate tensors."""
    E = _E()
    nd = input._data.ndim
    if isinstance(dim, numbers.Integral):
        dims = [int(dim)]
    elif dim is None:
        dims = list(range(nd))
    else:
        dims = list(dim)
    if edge_order not in (1, 2):
        raise RuntimeError("ember.gradient only supports edge_order=1 and edge_order=2.")
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        sp = list(spacing)
        if len(sp) != len(dims):
            raise RuntimeError(
                f"ember.gradient expected spacing to be unspecified, a scalar or it's spacing "
                f"and dim arguments to have the same length, but got a spacing argument of "
                f"length {len(sp)} and a dim argument of length {len(dims)}.")
    else:
        sp = [spacing] * len(dims)
    if dim is not None:
        dims_arg(dims, nd)   # (a repeated dim is refused)
    for d in dims:
        if input._data.shape[_wrap_dim(d, nd)] < edge_order + 1:
            raise RuntimeError("ember.gradient expected each dimension size to be at least "
                               "edge_order+1")
    for s in sp:
        if isinstance(s, Tensor) and s.device != input.device:
            raise RuntimeError(f"ember.gradient expected each tensor to be on the same device, "
                               f"but got devices {input.device} and {s.device}!")
    out = []
    for d, s in zip(dims, sp):
        d = _wrap_dim(d, nd)
        if isinstance(s, Tensor) and s._data.ndim:
            out.append(_gradient_coords(input, s, d, edge_order))
            continue
        h = s.item() if isinstance(s, Tensor) else s
        center = (_sl(input, d, 2) - _sl(input, d, 0, -2)) / h
        if edge_order == 1:
            pre = (_sl(input, d, 1, 2) - _sl(input, d, 0, 1)) / h
            app = (_sl(input, d, -1) - _sl(input, d, -2, -1)) / h
        else:
            pre = (-1.5 * _sl(input, d, 0, 1) + 2 * _sl(input, d, 1, 2)
                   - 0.5 * _sl(input, d, 2, 3)) / h
            app = (0.5 * _sl(input, d, -3, -2) - 2 * _sl(input, d, -2, -1)
                   + 1.5 * _sl(input, d, -1)) / h
        out.append(E.cat([pre, center / 2, app], d))
    return tuple(out)


def _gradient_coords(input: Tensor, c: Tensor, d: int, edge_order: int) -> Tensor:
    E = _E()
    if c._data.ndim != 1:
        raise RuntimeError("ember.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {c._data.ndim} dimensions!")
    shape = [1] * input._data.ndim
    shape[d] = -1
    ax = diff(c, 1, 0)
    dx1, dx2 = _sl(ax, 0, 0, -1), _sl(ax, 0, 1)
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    cc = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _sl(input, d, 0, -2) + b * _sl(input, d, 1, -1) + cc * _sl(input, d, 2)
    if edge_order == 1:
        pre = (_sl(input, d, 1, 2) - _sl(input, d, 0, 1)) / ax[0]
        app = (_sl(input, d, -1) - _sl(input, d, -2, -1)) / ax[-1]
    else:
        a = -(2.0 * ax[0] + ax[1]) / (ax[0] * (ax[0] + ax[1]))
        b = (ax[0] + ax[1]) / (ax[0] * ax[1])
        cc = (-ax[0]) / (ax[1] * (ax[0] + ax[1]))
        pre = a * _sl(input, d, 0, 1) + b * _sl(input, d, 1, 2) + cc * _sl(input, d, 2, 3)
        a = ax[-1] / (ax[-2] * (ax[-1] + ax[-2]))
        b = -(ax[-1] + ax[-2]) / (ax[-1] * ax[-2])
        cc = (2 * ax[-1] + ax[-2]) / (ax[-1] * (ax[-1] + ax[-2]))
        app = a * _sl(input, d, -3, -2) + b * _sl(input, d, -2, -1) + cc * _sl(input, d, -1)
    return E.cat([pre, center, app], d)


# ---- cov / corrcoef ----------------------------------------------------------------------

def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """``torch.cov``: the covariance of the rows (variables) of ``input`` over its columns
    (observations), with frequency and observation weights."""
    E = _E()
    nd = input._data.ndim
    if nd > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {nd} dimensions")
    if input.dtype is D.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if nd < 2 else input
    nobs = x._data.shape[1]
    w = None
    if fweights is not None:
        w = fweights
        if w._data.ndim > 1:
            raise RuntimeError("cov(): expected fweights to have one or fewer dimensions but got "
                               f"fweights with {w._data.ndim} dimensions")
        if w._data.dtype.kind not in "iu":
            raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights "
                               f"with {_type_name(w.dtype)} dtype")
        if w._data.size != nobs:
            raise RuntimeError("cov(): expected fweights to have the same numel as there are "
                               "observations in the input but got "
                               f"{w._data.size} != {nobs}")
        if nobs and w._data.min() < 0:
            raise RuntimeError("cov(): fweights cannot be negative")
    if aweights is not None:
        aw = aweights
        if aw._data.ndim > 1:
            raise RuntimeError("cov(): expected aweights to have one or fewer dimensions but got "
                               f"aweights with {aw._data.ndim} dimensions")
        if aw._data.dtype.kind != "f":
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {_type_name(aw.dtype)} dtype")
        if aw._data.size != nobs:
            raise RuntimeError("cov(): expected aweights to have the same numel as there are "
                               "observations in the input but got "
                               f"{aw._data.size} != {nobs}")
        if nobs and aw._data.min() < 0:
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aw if w is None else w * aw
    if w is not None:
        w_sum = w.sum()
        if not w_sum._data.item():
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    else:
        w_sum = E.scalar_tensor(nobs, dtype=D.int64)
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and correction != 0:
        if aweights is not None:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
        else:
            norm = w_sum - correction
    else:
        norm = w_sum - correction
    if norm._data.item() <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = E.zeros_like(norm)
    xc = x - avg.unsqueeze(1)
    c = E.mm(xc, (xc * w if w is not None else xc).t().conj())
    return E.true_divide(c, norm).squeeze()


def corrcoef(input: Tensor) -> Tensor:
    """``torch.corrcoef``: Pearson correlation coefficients of the rows, clipped to [-1, 1]."""
    from .misc_ops import complex as _complex
    E = _E()
    if input._data.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input._data.ndim} dimensions")
    c = cov(input)
    if c._data.ndim == 0:
        return c / c
    d = c.diagonal()
    sd = E.sqrt(d.real if d.is_complex() else d)
    c = c / sd.view(-1, 1)
    c = c / sd.view(1, -1)
    if c.is_complex():
        return _complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# ---- nanmean ----------------------------------------------------------------------

def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None,
            out=None) -> Tensor:
    """``torch.nanmean``: the mean of the non-NaN elements (``nansum / count``); with ``out``
    as PyTorch's nanmean.out: ``nansum(..., out=out)`` (its checks and messages), then
    ``out.div_(count)``."""
    E = _E()
    if out is not None and not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError("nanmean(): integral types and 'Bool' are not supported for nanmean, "
                           "even for empty tensors.")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_type_name(input.dtype)}")
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: {_type_name(dtype)}")
    kw = {} if dim is None else {"dim": dim}
    factor = E.logical_not(E.isnan(input)).sum(keepdim=keepdim, **kw)
    if out is not None:
        return E.nansum(input, keepdim=keepdim, dtype=dtype, out=out, **kw).div_(factor)
    return E.nansum(input, keepdim=keepdim, dtype=dtype, **kw).div(factor)


# ---- quantile / nanquantile ------------------------------------------------------------------

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input: Tensor, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool,
              name: str) -> Tensor:
    E = _E()
    from .misc_ops import squeeze_, transpose_, unsqueeze_
    if input._data.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q._data.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q._data.size and not ((q._data >= 0) & (q._data <= 1)).all():
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        q = E.scalar_tensor(q, dtype=input.dtype)
    if interpolation not in _MODES:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    nd = input._data.ndim
    if dim is None:
        out_shape = [1] * nd if keepdim else []
        srt = E.sort(input.flatten())[0]
    else:
        d = _wrap_dim(dim, nd)
        out_shape = list(input._data.shape)
        if keepdim and nd:
            out_shape[d] = 1
        elif nd:
            del out_shape[d]
        if nd == 0 or d == nd - 1:
            srt = E.sort(input)[0]
        else:
            srt = E.sort(input.unsqueeze(-1).transpose(d, -1))[0]
    shape = list(out_shape)
    if q._data.ndim:
        shape.insert(0, q._data.size)
    in_shape = shape[1:] if q._data.ndim else list(shape)
    in_shape.append(srt._data.shape[-1] if srt._data.ndim else 1)
    srt = srt.view(*in_shape)
    qq = q if q._data.ndim else q.view(1)
    if ignore_nan:
        ranks = qq * (E.logical_not(E.isnan(srt)).sum(-1, keepdim=True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        last = srt._data.shape[-1] - 1
        a, m = E.broadcast_tensors(qq * last, E.isnan(srt).any(-1, keepdim=True))
        ranks = E.masked_fill(a, m, last)
    if interpolation == "lower":
        ranks = E.floor(ranks)
    elif interpolation == "higher":
        ranks = E.ceil(ranks)
    elif interpolation == "nearest":
        ranks = E.round(ranks)
    below = ranks.to(D.int64)
    vals = srt.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        wts = E.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        above = E.ceil(ranks).to(D.int64)
        vals = vals.lerp(srt.gather(-1, above), wts)
    if not q._data.ndim:
        return squeeze_(vals, -1)
    return squeeze_(transpose_(unsqueeze_(vals, 0), 0, -1), -1)


def quantile(input: Tensor, q, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """``torch.quantile``: the ``q``-th quantiles along ``dim`` (all elements by default),
    interpolated between neighbouring order statistics; a NaN makes the result NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input: Tensor, q, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """``torch.nanquantile``: ``quantile`` ignoring NaNs."""
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


# ---- repeat_interleave ----------------------------------------------------------------------

def repeat_interleave(input: Tensor, repeats=None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """``torch.repeat_interleave``: each element (or slice along ``dim``) repeated; with only a
    tensor of counts, the indices ``0..n-1`` repeated that often."""
    E = _E()
    if repeats is None:
        r = input._data
        if r.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if r.dtype not in (np.int64, np.int32):
            raise RuntimeError("repeats has to be Long or Int tensor")
        if r.size and r.min() < 0:
            raise RuntimeError("repeats can not be negative")
        out = np.repeat(np.arange(r.size, dtype=r.dtype), r.reshape(-1))
        if output_size is not None and out.size != output_size:
            raise RuntimeError("allocated size does not match required size")
        return E.from_numpy(out)
    x = input if dim is not None else input.flatten()
    d = _wrap_dim(dim if dim is not None else 0, input._data.ndim if dim is not None else 1)
    if isinstance(repeats, Tensor) and repeats._data.size != 1 or isinstance(
            repeats, Tensor) and repeats._data.ndim == 1 and x._data.shape[d] == 1:
        if repeats._data.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if repeats._data.size != x._data.shape[d]:
            raise RuntimeError(
                "repeats must have the same size as input along dim, but got repeats.size(0) = "
                f"{repeats._data.size} and input.size({d}) = {x._data.shape[d]}")
        idx = repeat_interleave(repeats, output_size=output_size)
        return x.index_select(d, idx)
    n = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    if n < 0:
        raise RuntimeError("Repeats can not be negative")
    shape = list(x._data.shape)
    exp = shape[:d + 1] + [n] + shape[d + 1:]
    shape[d] *= n
    if output_size is not None and shape[d] != output_size:
        raise RuntimeError("allocated size does not match required size")
    return x.unsqueeze(d + 1).expand(exp).contiguous().view(shape)


# ---- isin ----------------------------------------------------------------------

def isin(elements, test_elements, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """``torch.isin``: whether each element of ``elements`` occurs in ``test_elements``."""
    E = _E()
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: at least one of "
                        "elements and test_elements must be a Tensor")
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        raise NotImplementedError("isin is not implemented for complex tensors (as in PyTorch)")
    return E.from_numpy(np.asarray(np.isin(a, b, invert=invert)))


# ---- histogram / histogramdd -----------------------------------------------------------------

return_types.histogram = _structseq("histogram", ("hist", "bin_edges"))
return_types.histogramdd = _structseq("histogramdd", ("hist", "bin_edges"))


def _hist_checks(input: Tensor, weight, name: str = "histogram") -> None:
    if input._data.dtype.kind != "f":
        raise RuntimeError(f'"{name}_cpu" not implemented for \'{_type_name(input.dtype)}\'')
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"ember.{name}: if weight tensor is provided, it should have the same "
                           f"dtype as the input tensor, but got weight {weight.dtype} and input "
                           f"{input.dtype}")


def _hist_counts(pts: np.ndarray, edges: list, w, density: bool, npd) -> np.ndarray:
    """PyTorch's histogramdd kernel: an element outside ``[edges[0], edges[-1]]`` (in any
    coordinate) is dropped; otherwise its bin is the last edge not above it, the rightmost
    edge counting into the last bin. Decreasing edges keep nothing, as in PyTorch."""
    nb = [len(e) - 1 for e in edges]
    keep = np.ones(pts.shape[0], bool)
    flat = np.zeros(pts.shape[0], np.int64)
    for k, e in enumerate(edges):
        x = pts[:, k]
        keep &= (x >= e[0]) & (x <= e[-1])
        pos = np.clip(np.searchsorted(e, x, side="right") - 1, 0, max(nb[k] - 1, 0))
        flat = flat * nb[k] + pos
    total = int(np.prod(nb))
    vals = np.ones(pts.shape[0]) if w is None else w.astype(np.float64)
    hist = np.bincount(flat[keep], vals[keep], minlength=total)[:total].reshape(nb)
    if density:
        vol = np.ones(nb)
        for k, e in enumerate(edges):
            shape = [1] * len(nb)
            shape[k] = nb[k]
            vol = vol * np.diff(e).reshape(shape)
        hist = hist / (hist.sum() * vol)
    return hist.astype(npd)


def histogram(input: Tensor, bins=100, *, range=None, weight: Tensor | None = None,
              density: bool = False):
    """``torch.histogram``: counts (or weighted sums, or a density) of ``input``'s values in
    ``bins`` equal bins over ``range`` (the data's by default) or in the given bin edges."""
    E = _E()
    _hist_checks(input, weight)
    x = input._data.reshape(-1)
    npd = x.dtype
    w = None if weight is None else weight._data.reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins._data.astype(npd)
    else:
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.size:
            lo, hi = float(x.min()), float(x.max())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError(f"ember.histogram: min should not exceed max, but got min {lo} "
                               f"max {hi}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5   # as PyTorch (and NumPy): a unit-width range
        edges = np.linspace(lo, hi, int(bins) + 1).astype(npd)
    hist = _hist_counts(x.astype(np.float64).reshape(-1, 1), [edges.astype(np.float64)], w,
                        density, npd)
    return return_types.histogram(E.from_numpy(hist),
                                  E.from_numpy(np.ascontiguousarray(edges)))


def histogramdd(input: Tensor, bins=10, *, range=None, weight: Tensor | None = None,
                density: bool = False):
    """``torch.histogramdd``: the multi-dimensional histogram of the rows of ``input``
    (last dim: the coordinates)."""
    E = _E()
    _hist_checks(input, weight, "histogramdd")
    d = input._data
    if d.ndim < 2:
        raise RuntimeError("ember.histogramdd: input tensor should have at least 2 dimensions, "
                           f"but got {d.ndim}")
    n = d.shape[-1]
    pts = d.reshape(-1, n)
    npd = d.dtype
    w = None if weight is None else weight._data.reshape(-1)
    if isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor):
        if len(bins) != n:
            raise RuntimeError(f"ember.histogramdd: expected {n} sequences of bin edges for a "
                               f"{n}-dimensional histogram but got {len(bins)}")
        edges = [b._data.astype(np.float64) for b in bins]
    else:
        counts = [int(bins)] * n if isinstance(bins, numbers.Integral) else [int(b)
                                                                              for b in bins]
        if len(counts) != n:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                               "dimension of the input.")
        if range is not None and len(range) != 2 * n:
            raise RuntimeError(f"ember.histogramdd: for a {n}-dimensional histogram range "
                               f"should have {2 * n} elements, but got {len(range)}")
        for k, c in enumerate(counts):
            if c <= 0:
                raise RuntimeError(f"ember.histogram(): bins must be > 0, but got {c} for "
                                   f"dimension {k}")
        edges = []
        for k in builtins.range(n):
            if range is not None:
                lo, hi = float(range[2 * k]), float(range[2 * k + 1])
            elif pts.shape[0]:
                lo, hi = float(pts[:, k].min()), float(pts[:, k].max())
            else:
                lo, hi = 0.0, 0.0
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            edges.append(np.linspace(lo, hi, counts[k] + 1).astype(npd).astype(np.float64))
    hist = _hist_counts(pts.astype(np.float64), edges, w, density, npd)
    return return_types.histogramdd(
        E.from_numpy(hist),
        tuple(E.from_numpy(np.ascontiguousarray(e.astype(npd))) for e in edges))


for _name, _fn in [("diff", diff), ("cov", cov), ("corrcoef", corrcoef), ("nanmean", nanmean),
                   ("quantile", quantile), ("nanquantile", nanquantile),
                   ("repeat_interleave", repeat_interleave), ("histogram", histogram)]:
    method(_name, _fn)
