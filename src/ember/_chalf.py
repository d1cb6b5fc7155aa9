"""complex32 (PyTorch's ComplexHalf, ``torch.chalf``) on NumPy.

NumPy has no half-precision complex type. ember stores a complex32 tensor's elements as the
structured pair ``[("real", "<f2"), ("imag", "<f2")]``: 4 bytes an element, as PyTorch's, so
strides, views, storages, ``element_size()`` and ``data_ptr()`` arithmetic are PyTorch's, and
every data-movement op (views, indexing, copies, cat, where) works on the pairs unchanged.

Arithmetic follows PyTorch's CPU kernels: operands converted to complex64 (exact), the op
computed there, each result part rounded to float16 once (add/sub with ``alpha``: the product
``alpha * other`` is rounded first, as ``c10::complex<Half>`` arithmetic does); a Python number
operand is rounded to complex32 first; a float64 value reaches float16 through float32, as
``c10::Half`` is built from a float. Only what PyTorch's CPU build computes on ComplexHalf is
computed; every other op raises PyTorch's own error (``_chalf_table``), or, where PyTorch has a
kernel ember lacks, a NotImplementedError saying so. What PyTorch builds from several kernels
rounds after each, as there: addcmul's two products, dist's difference, var/std (the float16
variances of the two parts, added, then the square root), isclose (op by op); the float16
convolutions of a complex32 one are ``_chalf_conv``'s.

NumPy refuses its ufuncs on the pairs (a TypeError), so the op calling conventions of
``_ops/_dispatch.py`` and ``_ops/_registry.py`` send a complex32 call here only when NumPy has
refused it: other dtypes pay nothing.
"""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from . import _dtype as D
from . import _settings

CH = D.complex32.np
_C64 = np.dtype(np.complex64)
_F16 = np.dtype(np.float16)


def is_ch(a) -> bool:
    """Whether ``a`` is an array of complex32 pairs."""
    return isinstance(a, np.ndarray) and a.dtype == CH


_warned: list = []


def experimental_warning() -> None:
    """PyTorch's one-time warning when the first ComplexHalf tensor is made (every time under
    ``set_warn_always(True)``)."""
    if not _warned or _settings.is_warn_always_enabled():
        _warned.append(True)
        warnings.warn(
            "ComplexHalf support is experimental and many operators don't support it yet. "
            "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/EmptyTensor.cpp:54.)",
            UserWarning, stacklevel=3)


# ---- conversions ----------------------------------------------------------------------

def to_c64(a: np.ndarray) -> np.ndarray:
    """complex32 pairs as a complex64 array of the same shape and layout (exact)."""
    r = np.empty_like(a, dtype=_C64)
    r.real = a["real"]
    r.imag = a["imag"]
    return r


def _half_part(x: np.ndarray) -> np.ndarray:
    # c10::Half is built from a float: doubles (and bfloat16, which NumPy may not cast to
    # float16 directly) go through float32
    if x.dtype != _F16 and x.dtype != np.float32 and x.dtype.kind not in "iub":
        x = x.astype(np.float32)
    return x


def from_values(x) -> np.ndarray:
    """Any numeric array (or number) as complex32 pairs, same shape and layout: each part
    rounded to float16 as PyTorch converts (through float32)."""
    x = np.asarray(x)
    if x.dtype == CH:
        return x.copy(order="K")
    if not _warned or _settings.is_warn_always_enabled():
        experimental_warning()
    r = np.empty_like(x, dtype=CH)
    with np.errstate(over="ignore", invalid="ignore"):
        if x.dtype.kind == "c":
            r["real"] = _half_part(x.real)
            r["imag"] = _half_part(x.imag)
        else:
            r["real"] = _half_part(x)
            r["imag"] = 0
    return r


def cast(x: np.ndarray, npd) -> np.ndarray:
    """``x.astype(npd)`` where ``x`` or ``npd`` is complex32 (NumPy would fill both parts of a
    pair with the value, or refuse)."""
    if x.dtype == CH:
        if np.dtype(npd) == CH:
            return x.copy(order="K")
        return to_c64(x).astype(npd)   # (complex -> real drops the imaginary part, as NumPy)
    return from_values(x)


def round_c64(z):
    """complex64 values rounded to what complex32 holds (still complex64)."""
    return to_c64(from_values(z))


def number(v) -> np.complex64:
    """A Python number as complex32 holds it (as a complex64 scalar)."""
    c = builtins.complex(v)
    with np.errstate(over="ignore"):
        re = np.float16(np.float32(c.real))
        im = np.float16(np.float32(c.imag))
    return np.complex64(builtins.complex(builtins.float(re), builtins.float(im)))


def item(a: np.ndarray) -> complex:
    """A one-element complex32 array as a Python complex."""
    a = a.reshape(())
    return builtins.complex(builtins.float(a["real"]), builtins.float(a["imag"]))


def conj(a: np.ndarray) -> np.ndarray:
    """The conjugate pairs (a new array)."""
    r = a.copy(order="K")
    r["imag"] = -a["imag"]
    return r


def negative(a: np.ndarray) -> np.ndarray:
    """The negated pairs (a new array): PyTorch's negative bit on a complex32 view."""
    r = np.empty_like(a)
    r["real"] = -a["real"]
    r["imag"] = -a["imag"]
    return r


def from_pairs(x: np.ndarray) -> np.ndarray:
    """float16 (..., 2) pairs read as complex32 (``view_as_complex``): a view."""
    return np.ascontiguousarray(x).view(CH)[..., 0]


# ---- kernels --------------------------------------------------------------------------

def _operand(x):
    if isinstance(x, np.ndarray):
        return to_c64(x) if x.dtype == CH else x
    if isinstance(x, (builtins.int, builtins.float, builtins.complex, np.generic)):
        return number(x)
    return x


def _axpy(a, b, alpha, sign):
    if alpha == 1:
        return a + sign * b
    return a + sign * round_c64(number(alpha) * b)


def _sgn(a):
    ab = np.hypot(a.real, a.imag)
    return np.where(ab == 0, 0, a / np.where(ab == 0, 1, ab)).astype(_C64)


def _accumulate(out: np.ndarray, pos: np.ndarray, vals: np.ndarray) -> None:
    """``out.flat[pos] += vals`` (complex64 holding complex32 values) one addition after the
    other, each rounded to complex32, in the order of ``pos``: PyTorch's CPU kernels add
    repeated indices in turn, in ComplexHalf."""
    flat = out.reshape(-1)
    pos = pos.reshape(-1)
    vals = np.broadcast_to(vals, pos.shape if vals.size != pos.size else vals.shape).reshape(-1)
    if not pos.size:
        return
    order = np.argsort(pos, kind="stable")
    sp = pos[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sp)) + 1]
    rank = np.empty(pos.size, np.int64)
    rank[order] = np.arange(pos.size) - np.repeat(starts, np.diff(np.r_[starts, pos.size]))
    for r in range(int(rank.max()) + 1):   # each round touches distinct positions
        m = rank == r
        flat[pos[m]] = round_c64(flat[pos[m]] + vals[m])


def _index_add(x, src, dim, idx, alpha):
    out = np.array(x, copy=True)
    s = src if alpha == 1 else round_c64(number(alpha) * src)
    if out.ndim == 0:
        _accumulate(out, np.zeros(s.size, np.int64), s.reshape(-1))
        return out
    pos = np.take(np.arange(out.size).reshape(out.shape), np.asarray(idx).reshape(-1), dim)
    _accumulate(out, pos, np.broadcast_to(s, pos.shape))
    return out


def _index_put(x, v, key, accumulate):
    out = np.array(x, copy=True)
    if not accumulate:
        out[key] = v
        return out
    pos = np.arange(out.size).reshape(out.shape)[key]
    _accumulate(out, pos, np.broadcast_to(v, pos.shape))
    return out


def _dist(a, b, p):
    # PyTorch's dist is norm(self - other, p): the difference in complex32 first
    from ._ops.reduction import _norm_fwd
    return _norm_fwd(round_c64(a - b), None, False, p)


def _var_like(take_sqrt: bool, with_mean: bool):
    """PyTorch's var/std (and var_mean/std_mean) of a complex tensor: those of the real and
    the imaginary parts (float16 reductions, each rounded), added in float16, then the square
    root in float16; the mean is the two parts' means as one complex number."""
    def f(a, dims, keepdim, correction):
        from ._ops.reduction import VAR_MEAN
        (vr, mr), (vi, mi) = [VAR_MEAN.fwd(np.ascontiguousarray(part).astype(_F16), dims,
                                           keepdim, correction) for part in (a.real, a.imag)]
        v = np.asarray(vr + vi)
        if take_sqrt:
            v = np.sqrt(v)
        if not with_mean:
            return v
        m = np.empty(np.shape(mr), _C64)
        m.real, m.imag = mr, mi
        return v, m
    return f


def _addcmul(x, t1, t2, value=1):
    # PyTorch's kernel: self + value * t1 * t2 in c10::complex<Half>, each product rounded
    # (value 1 too: its 0 imaginary part times an infinite one gives NaN there as well)
    return x + round_c64(round_c64(number(value) * t1) * t2)


def _scatter_reduce(x, src, dim, idx, reduce, include_self):
    if idx.size:
        refuse("scatter_reduce" if not include_self else "scatter")
    return x   # (an empty index runs no kernel: the input's copy)


def _index_reduce(x, src, dim, idx, reduce, include_self):
    # PyTorch's index_reduce_func_impl: only prod has ComplexHalf, onto the input's values, one
    # source slice after the other, each product rounded
    if not include_self:
        raise NotImplementedError("\"index_reduce_func_exclude_input_init\" not implemented "
                                  "for 'ComplexHalf'")
    if x.ndim <= 1:   # (its path for vectors dispatches over no complex type)
        refuse("index_reduce")
    out = np.array(x, copy=True)
    if not idx.size:
        return out
    if reduce != "prod":
        k = {"mean": "div_cpu", "amax": "maximum_cpu", "amin": "minimum_cpu"}[reduce]
        raise NotImplementedError(f"\"{k}\" not implemented for 'ComplexHalf'")
    for i in range(src.shape[dim]):
        key = (slice(None),) * dim + (int(np.take(idx, i, axis=dim).flat[0]),)
        out[key] = round_c64(out[key] * np.take(src, i, axis=dim))
    return out


_COMPUTE = {
    "index_add": _index_add, "index_put": _index_put, "dist": _dist, "addcmul": _addcmul,
    "index_reduce": _index_reduce,
    "scatter_reduce": _scatter_reduce,
    "var": _var_like(False, False), "std": _var_like(True, False),
    "var_mean": _var_like(False, True), "std_mean": _var_like(True, True),
    "add": lambda a, b, alpha=1: _axpy(a, b, alpha, 1),
    "sub": lambda a, b, alpha=1: _axpy(a, b, alpha, -1),
    "rsub": lambda a, b, alpha=1: _axpy(b, a, alpha, -1),
    "rsub_s": lambda a, b, alpha=1: _axpy(b, a, alpha, -1),
    "mul": np.multiply,
    "neg": np.negative,
    "abs": lambda a: np.hypot(a.real, a.imag),
    "sgn": _sgn,
    "eq": np.equal, "eq_t": np.equal, "ne": np.not_equal, "ne_t": np.not_equal,
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "conj_physical": np.conj, "conj_physical_": np.conj,
    "scatter_add": lambda x, src, dim, idx: x if not idx.size else refuse("scatter_add"),
}
# ops PyTorch's CPU build runs on ComplexHalf whose ember forward runs unchanged on complex64
# operands, the result rounded once (data movement with a fill or a sum, and reductions to a
# real result)
_UPCAST = frozenset({
    "index_fill", "index_fill_tensor", "index_copy", "block_diag",
    "masked_fill", "masked_fill_tensor", "linalg_vector_norm", "norm",
})
# NumPy ufuncs as ember op names (comparisons and logical ops call their ufuncs directly)
_UFUNC_OPS = {"equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
              "greater": "gt", "greater_equal": "ge"}


def compute(name: str, arrays, params=(), op=None):
    """Op ``name`` on operands of which some are complex32, as PyTorch's CPU kernel computes
    it; PyTorch's error where it has none. ``op``: the Op, whose own forward runs in complex64
    for the ops PyTorch supports that need no rule of their own (``_UPCAST``)."""
    f = _COMPUTE.get(name)
    if f is None:
        if op is None or name not in _UPCAST:
            refuse(name)
        f = op.fwd
    args = [_operand(x) for x in arrays]
    with np.errstate(all="ignore"):
        try:
            out = f(*args, *params)
        except ValueError as e:
            from ._ops._dispatch import broadcast_failed
            broadcast_failed(e, *[np.shape(x) for x in arrays])
            raise
    if f is not _COMPUTE.get(name) and _natural(arrays) is not D.complex32:
        return out   # (promoted to a wider complex type: nothing to round)
    if isinstance(out, tuple):
        return tuple(_rounded(o) for o in out)
    return _rounded(out)


def _natural(arrays):
    """The type the floating and complex operands promote to (index arrays aside)."""
    r = None
    for x in arrays:
        if isinstance(x, np.ndarray) and (x.dtype.kind in "fc" or x.dtype == CH):
            d = D._FROM_NP.get(x.dtype)
            if d is not None:
                r = d if r is None else D.promote_types(r, d)
    return r


def _rounded(out):
    out = np.asarray(out)
    if out.dtype.kind == "c":
        return from_values(out)
    if out.dtype == np.float32:   # a real result (abs, norms): the float16 parts' type
        return out.astype(_F16)
    return out


def _abs16(z: np.ndarray) -> np.ndarray:
    return np.hypot(z.real, z.imag).astype(_F16)


def isclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, equal_nan: bool):
    """PyTorch's isclose on complex32 pairs, op by op as its composite runs them:
    ``self == other``; then ``atol + (rtol * other).abs()`` (the product in complex32, its abs
    in float16, atol rounded to float16 and added in float) against ``(self - other).abs()``."""
    za, zb = to_c64(a), to_c64(b)
    close = za == zb
    if equal_nan:
        close |= np.isnan(za) & np.isnan(zb)
    if rtol == 0 and atol == 0:
        return close
    with np.errstate(all="ignore"):
        at = np.float32(np.float16(np.float32(atol)))
        allowed = (at + _abs16(round_c64(number(rtol) * zb)).astype(np.float32)).astype(_F16)
        actual = _abs16(round_c64(za - zb))
    return close | (np.isfinite(actual) & (actual <= allowed))


def ufunc(uf, *arrays):
    """A NumPy ufunc (a comparison, a logical op) that refused complex32 operands."""
    return compute(_UFUNC_OPS.get(uf.__name__, uf.__name__), arrays)


# ember op names whose PyTorch kernel is named otherwise (besides _chalf_table's)
_MORE_KERNELS = {"mm": "addmm_impl_cpu_", "addmm": "addmm_impl_cpu_", "cumsum": "cumsum_out_cpu",
                 "flip": "flip_cpu", "equal": "equal_cpu", "cummax": "cummax_cpu",
                 "cummin": "cummin_cpu", "bernoulli": "bernoulli_scalar_cpu_",
                 "pixel_shuffle": "pixel_shuffle", "pixel_unshuffle": "pixel_unshuffle",
                 "scatter_value": "scatter_gather_scalar_cpu", "lerp_t": "lerp_kernel_tensor",
                 "linalg_cross": "cross", "linear": "addmm_impl_cpu_", "einsum": "bmm",
                 "linalg_householder_product": "orgqr_cpu",
                 "linalg_lu_solve": "linalg.lu_solve_cpu"}


def refuse(name: str):
    """Raise PyTorch's error for op ``name`` on a ComplexHalf tensor."""
    from ._chalf_table import KERNELS, OTHER
    if name.startswith("fft_"):
        raise RuntimeError("MKL FFT doesn't support tensors of type: Half")
    k = _MORE_KERNELS.get(name)
    if k is not None:
        raise NotImplementedError(f"\"{k}\" not implemented for 'ComplexHalf'")
    for n in (name, name.rsplit("_", 1)[0], name.rstrip("_")):
        k = KERNELS.get(n)
        if k is not None:
            raise NotImplementedError(f"\"{k}\" not implemented for 'ComplexHalf'")
        o = OTHER.get(n)
        if o is not None:
            raise getattr(builtins, o[0])(o[1])
    raise NotImplementedError(
        f"{name} of complex32 (ComplexHalf) tensors is not implemented in ember: only the "
        "data-movement ops, conversions, add, sub, mul, addcmul, neg, abs, sgn, conj, "
        "comparisons for equality, isclose, norms, dist, var/std and convolutions are; convert "
        "with .cfloat() first")


def refused(exc: TypeError, op, arrays, params=()):
    """Re-raise NumPy's TypeError ``exc`` unless a complex32 operand caused it; then compute
    ``op`` (an Op) or raise PyTorch's error."""
    if not any(isinstance(x, np.ndarray) and x.dtype == CH for x in arrays):
        raise exc
    return compute(op.name, arrays, params, op)


def promoted(da, db, npt):
    """``_dispatch.promoted``'s casts when complex32 is involved: arrays to ``npt`` through
    ``cast``; Python numbers stay (``compute`` rounds them)."""
    out = []
    for x in (da, db):
        if isinstance(x, np.ndarray) and x.dtype != npt:
            x = cast(x, npt) if (x.dtype == CH or npt == CH) else x.astype(npt)
        out.append(x)
    return out[0], out[1], npt


# ---- autograd -------------------------------------------------------------------------

def add(a, b):
    """Two gradients summed (the engine's accumulation), as PyTorch's add kernel."""
    return compute("add", (a, b))


def vjp(exc: Exception, op, g, need, vals, params):
    """Run ``op``'s VJP where NumPy refused complex32 pairs (``exc``), as PyTorch's chalf
    backward computes it. Most VJPs move or add the gradient (views, copies, indexing, add):
    run on complex64 values (a number parameter, add's alpha, rounded to complex32 first),
    each result rounded once. The arithmetic ones (``_STEPWISE_VJP``) run on tensors through
    ember's ops (grad mode off), so that each step rounds to complex32 as PyTorch's kernels
    do, and a step PyTorch has no ComplexHalf kernel for (a division) raises its error."""
    gs = g if isinstance(g, tuple) else (g,)
    if not any(is_ch(x) for x in gs + tuple(vals)):
        raise exc
    if op.name in _VAR_NAMES:
        # PyTorch's var_backward takes self.mean() (a sum); mean_backward divides the gradient
        refuse("sum" if gs[0] is not None else "div")
    if op.name not in _STEPWISE_VJP:
        return _vjp_upcast(op, g, need, vals, params)
    from ._ops._registry import EM
    from ._tensor import Tensor, Version, _make
    from .autograd.grad_mode import no_grad

    def wrap(x):
        return _make(x, Version(), False, None) if isinstance(x, np.ndarray) else x
    gg = tuple(wrap(x) for x in g) if isinstance(g, tuple) else wrap(g)
    with no_grad():
        res = op.vjp(EM, gg, need, *[wrap(v) for v in vals], *params)
    res = res if isinstance(res, tuple) else (res,)
    return tuple(r._data if isinstance(r, Tensor) else r for r in res)


# the ops computed on complex32 whose VJP takes more than one arithmetic step (the others
# move or add gradients: data movement, add, sub, neg)
_VAR_NAMES = frozenset({"var", "std", "var_mean", "std_mean"})
_STEPWISE_VJP = frozenset({"mul", "abs", "sgn", "linalg_vector_norm", "norm", "dist",
                           "addcmul"})


def _vjp_upcast(op, g, need, vals, params):
    from ._ops._registry import NP

    def up(x):
        return to_c64(x) if is_ch(x) else x
    params = tuple(number(p) if type(p) in (builtins.float, builtins.complex) else p
                   for p in params)
    gg = tuple(up(x) for x in g) if isinstance(g, tuple) else up(g)
    with np.errstate(all="ignore"):
        res = op.vjp(NP, gg, need, *[up(v) for v in vals], *params)
    res = res if isinstance(res, tuple) else (res,)
    # (a 0-dim result may be a NumPy scalar)
    return tuple(from_values(r) if isinstance(r, (np.ndarray, np.complexfloating))
                 and r.dtype.kind == "c" else r for r in res)


def jvp_upcast(exc: Exception, op, tangents, primals, outs, params):
    """``op``'s JVP (a reduction's, whose formula ember writes with a sum or a division where
    PyTorch's needs no ComplexHalf kernel) on complex64 and float32 copies of complex32 and
    float16 operands; the caller casts the tangent to the output's dtype, rounding once."""
    from ._tensor import Tensor
    if not any(isinstance(t, Tensor) and t.dtype is D.complex32
               for t in (*tangents, *primals)):
        raise exc
    if op.name in _VAR_NAMES:
        refuse("sum")   # (PyTorch's var_jvp takes self.mean())
    from ._ops._registry import EM

    def up(t):
        if isinstance(t, Tensor):
            if t.dtype is D.complex32:
                return t.cfloat()
            if t.dtype is D.float16:
                return t.float()
        return t
    # (the outputs stay: a max-type formula finds its ties by comparing with them)
    return op.jvp(EM, [up(t) for t in tangents], [up(t) for t in primals], list(outs), *params)


def fix_grad(g: np.ndarray, shape, dt) -> np.ndarray:
    """The engine's ``_fix`` where complex32 is involved: a broadcast gradient would need
    PyTorch's sum, which has no ComplexHalf kernel; a dtype change casts through complex64
    (a real input takes the real part)."""
    if g.shape != shape:
        if g.size:
            refuse("sum")
        g = np.zeros(shape, g.dtype)   # (PyTorch's sum of nothing runs no kernel)
    if g.dtype == dt:
        return g
    if is_ch(g) and dt.kind != "c" and dt.names is None:
        return to_c64(g).real.astype(dt)
    if g.dtype.kind == "c" and dt != CH:
        return g.real.astype(dt)   # (a real input's gradient is the real part)
    return cast(g, dt)
