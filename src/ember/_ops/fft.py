"""Discrete Fourier transforms: the ``torch.fft`` namespace's operators.

As in PyTorch, every transform is built from three primitives, each one node with its own
normalization inside: ``_fft_c2c`` (FftC2CBackward0), ``_fft_r2c`` (FftR2CBackward0, optionally
onesided) and ``_fft_c2r`` (FftC2RBackward0). The public functions compose them with the same
casts (ToCopyBackward0), conjugations (ConjBackward0 / ConjPhysicalBackward0), slices
(SliceBackward0) and zero pads (ConstantPadNdBackward0) that PyTorch's SpectralOps.cpp records,
so that values, dtypes, node names and gradients agree. The forward runs on ``scipy.fft``
(pocketfft), which keeps float32 in complex64 as PyTorch does; each primitive's result is then
laid out as PyTorch's CPU kernels (MKL's ``_exec_fft``) lay it out (``_mkl_layout``).

The primitives' reverse rules are PyTorch's (derivatives.yaml): c2c's adjoint is c2c in the
other direction with the same normalization; r2c's is a zero-filled c2c inverse's real part;
c2r's is a onesided r2c with the bins that stand for two conjugate bins doubled (so the
imaginary parts of the DC and Nyquist bins, which c2r ignores, get a zero gradient). All are
linear, so their JVPs run the op on the tangents, and double backward goes through the same
primitives.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.fft as _sf

from .. import _dtype as D
from .. import _layout as _L
from .._tensor import Tensor, _wrap_dim
from ._dispatch import _type_name
from ._registry import Op, apply, ns_fn
from .conj import conj, conj_physical
from .creation import _new_tensor
from .nn_sampling import _constant_pad
from .views import narrow

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn",
    "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
    "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn",
    "fftshift", "ifftshift", "fftfreq", "rfftfreq",
]

# PyTorch's fft_norm_mode: none, by_root_n, by_n (applied whatever the direction)
_NONE, _ROOT, _BYN = 0, 1, 2


def _scipy_norm(normalization: int, forward: bool) -> str:
    """scipy.fft's ``norm`` argument that scales a transform in direction ``forward`` as
    PyTorch's normalization mode does."""
    if normalization == _ROOT:
        return "ortho"
    if forward:
        return "backward" if normalization == _NONE else "forward"
    return "forward" if normalization == _NONE else "backward"


# ---- result layout (PyTorch's MKL kernels) ---------------------------------------------------

def _batch_first(nd: int, dims) -> list:
    """libstdc++'s ``std::partition`` of 0..nd-1, untransformed dims first (not stable: it swaps
    from both ends, and the order it leaves decides ties between equal strides below)."""
    t = set(dims)
    a = list(range(nd))
    first, last = 0, nd
    while True:
        while first != last and a[first] not in t:
            first += 1
        if first == last:
            return a[:first]
        last -= 1
        while first != last and a[last] in t:
            last -= 1
        if first == last:
            return a[:first]
        a[first], a[last] = a[last], a[first]
        first += 1


def _by_stride(dims, strides) -> list:
    # std::sort by decreasing stride; on PyTorch's few dims that is a (stable) insertion sort
    return sorted(dims, key=lambda d: -strides[d])


def _exec_strides(strides, dims, out_shape) -> list:
    """The strides of ``_exec_fft``'s result: the batch (untransformed) dims outermost, in the
    input's stride order, then the transformed dims in the order ``dims`` lists them, dense;
    sizes multiply with a max of 1 inside the transformed block, without it over the batch."""
    batch = _by_stride(_batch_first(len(out_shape), dims), strides)
    out = [0] * len(out_shape)
    acc = 1
    for d in reversed(dims):
        out[d] = acc
        acc *= max(out_shape[d], 1)
    for d in reversed(batch):
        out[d] = acc
        acc *= out_shape[d]
    return out


def _mkl_strides(kind: str, shape, strides, dims, out_shape) -> list:
    """Where PyTorch's ``_fft_{c2c,r2c,c2r}_mkl`` put their result: c2c sorts the transformed
    dims by the input's strides, r2c all but the last; c2r over several dims first runs a c2c
    over all but the last (whose result's strides order the batch of the final 1-D c2r)."""
    if kind == "c2c":
        return _exec_strides(strides, _by_stride(dims, strides), out_shape)
    if kind == "r2c":
        return _exec_strides(strides, _by_stride(dims[:-1], strides) + [dims[-1]], out_shape)
    if len(dims) > 1:
        strides = _exec_strides(strides, _by_stride(dims[:-1], strides), shape)
    return _exec_strides(strides, [dims[-1]], out_shape)


def _mkl_layout(kind: str, x: np.ndarray, dims, r: np.ndarray) -> np.ndarray:
    """``r`` (the transform of ``x`` over ``dims``) laid out as PyTorch's kernel lays it out."""
    if type(x) is not np.ndarray or type(r) is not np.ndarray:
        return r   # (meta and batched arrays: no memory to lay out)
    st = _mkl_strides(kind, x.shape, _L.torch_strides(x), list(dims), r.shape)
    return _L.restride(r, st)


# ---- the three primitives --------------------------------------------------------------------

def _c2c_fwd(x, dims, normalization, forward):
    if not dims:   # (PyTorch clones: the input's layout is kept)
        return _L.copy_like(x)
    if x.size == 0:
        return np.zeros_like(x)
    f = _sf.fftn if forward else _sf.ifftn
    return _mkl_layout("c2c", x, dims, f(x, axes=dims, norm=_scipy_norm(normalization, forward)))


def _r2c_fwd(x, dims, normalization, onesided):
    if x.size == 0:
        shape = list(x.shape)
        if onesided:
            shape[dims[-1]] = shape[dims[-1]] // 2 + 1
        return np.zeros(shape, np.result_type(x.dtype, np.complex64))
    f = _sf.rfftn if onesided else _sf.fftn
    return _mkl_layout("r2c", x, dims, f(x, axes=dims, norm=_scipy_norm(normalization, True)))


def _c2r_fwd(x, dims, normalization, last_dim_size):
    shape = [x.shape[d] for d in dims[:-1]] + [last_dim_size]
    if x.size == 0:
        out = list(x.shape)
        out[dims[-1]] = last_dim_size
        return np.zeros(out, x.real.dtype)
    r = _sf.irfftn(x, s=shape, axes=dims, norm=_scipy_norm(normalization, False))
    return _mkl_layout("c2r", x, dims, r)


def _c2c_vjp(ns, g, need, dims, normalization, forward):
    return (ns.fft_c2c(g, dims, normalization, not forward),)


def _r2c_vjp(ns, g, need, x, dims, normalization, onesided):
    # onesided: the discarded half of the full spectrum has a zero gradient (PyTorch saves the
    # input for its length, so modifying it in place before backward is an error there too)
    last_size = x.shape[dims[-1]]
    if onesided and g.shape[dims[-1]] < last_size:
        g = ns.fft_zpad(g, dims[-1], last_size)
    return (ns.real_of(ns.fft_c2c(g, dims, normalization, False)),)


def _doubled(n_full: int, dim: int, ndim: int, dtype) -> np.ndarray | None:
    """Weights 2 for the onesided bins 1 .. n_full - (n_full // 2 + 1), each of which stands for
    itself and its conjugate mirror; 1 elsewhere (None when nothing is doubled)."""
    half = n_full // 2 + 1
    k = n_full - half
    if k <= 0:
        return None
    w = np.ones(half, dtype)
    w[1:1 + k] = 2
    return w.reshape((half,) + (1,) * (ndim - dim - 1))


def _c2r_vjp(ns, g, need, dims, normalization, last_dim_size):
    gi = ns.fft_r2c(g, dims, normalization, True)
    w = _doubled(g.shape[dims[-1]], dims[-1], len(g.shape), _real_dtype(g))
    return (gi if w is None else gi * ns.fft_const(w),)


def _real_dtype(x):
    d = x._data.dtype if isinstance(x, Tensor) else x.dtype
    return np.float32 if d in (np.float32, np.complex64) else np.float64


FFT_C2C = Op("fft_c2c", _c2c_fwd, _c2c_vjp, linear=True, node="FftC2CBackward0",
             names=("dim", "normalization", "forward"))
FFT_R2C = Op("fft_r2c", _r2c_fwd, _r2c_vjp, saves=(0,), linear=True, node="FftR2CBackward0",
             names=("self", "dim", "normalization", "onesided"))
FFT_C2R = Op("fft_c2r", _c2r_fwd, _c2r_vjp, linear=True, node="FftC2RBackward0",
             names=("dim", "normalization", "last_dim_size"))


def _zpad_np(g, dim, n):
    widths = [(0, 0)] * g.ndim
    widths[dim] = (0, n - g.shape[dim])
    return np.pad(g, widths)


def _pad_list(ndim: int, dim: int, amount: int) -> list:
    """constant_pad_nd's pad list (last dim first) adding ``amount`` at the end of ``dim``."""
    pads = [0] * (2 * (ndim - dim))
    pads[-1] = amount
    return pads


def _const_em(a):
    from .creation import from_numpy
    return from_numpy(a)


ns_fn("fft_c2c", _c2c_fwd, lambda g, *p: apply(FFT_C2C, (g,), p))
ns_fn("fft_r2c", _r2c_fwd, lambda g, *p: apply(FFT_R2C, (g,), p))
ns_fn("fft_c2r", _c2r_fwd, lambda g, *p: apply(FFT_C2R, (g,), p))
ns_fn("fft_zpad", _zpad_np, lambda g, dim, n: _constant_pad(g, _pad_list(g.dim(), dim,
                                                                          n - g.shape[dim]), 0))
ns_fn("fft_const", lambda a: a, _const_em)


# ---- argument handling (SpectralOps.cpp) -------------------------------------------------------

def _norm_mode(norm, forward: bool) -> int:
    if norm is None or norm == "backward":
        return _NONE if forward else _BYN
    if norm == "forward":
        return _BYN if forward else _NONE
    if norm == "ortho":
        return _ROOT
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _wrap(dim: int, ndim: int) -> int:
    """maybe_wrap_dim with wrap_scalar=False: a 0-dim tensor has no dim to transform."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(int(dim), ndim)


def _promote(t: Tensor, require_complex: bool = False) -> Tensor:
    """promote_tensor_fft: integers to the default float type, float32/float64 only (half
    precision is refused on the CPU), complex when required."""
    dt = t.dtype
    if dt.is_complex:
        return t
    if not dt.is_floating_point:
        dt = D.get_default_dtype()
    if dt not in (D.float32, D.float64):
        raise RuntimeError(f"Unsupported dtype {_type_name(dt)}")
    if require_complex:
        dt = D.complex64 if dt is D.float32 else D.complex128
    return t if dt is t.dtype else t.to(dt)


def _check_n(n) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x: Tensor, dims, sizes) -> Tensor:
    """resize_fft_input: slice (SliceBackward0) or zero-pad (ConstantPadNdBackward0) each dim in
    ``dims`` to its size in ``sizes`` (-1: leave it)."""
    shape = x.shape
    nd = len(shape)
    pads = [0] * (2 * nd)
    grow = False
    for d, s in zip(dims, sizes):
        if s == -1:
            continue
        if shape[d] < s:
            grow = True
            pads[2 * (nd - 1 - d) + 1] = s - shape[d]
        if shape[d] > s:
            x = narrow(x, d, 0, s)
    return _constant_pad(x, pads, 0) if grow else x


def _int_arg(name: str, fname: str, v):
    if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral)):
        raise TypeError(f"fft_{fname}(): argument '{name}' must be int, not {type(v).__name__}")
    return None if v is None else int(v)


def _c2c_call(x, dims, norm, forward):
    return apply(FFT_C2C, (x,), (tuple(dims), _norm_mode(norm, forward), forward))


def _r2c_call(x, dims, normalization, onesided):
    return apply(FFT_R2C, (x,), (tuple(dims), normalization, onesided))


def _c2r_call(x, dims, normalization, last_dim_size):
    return apply(FFT_C2R, (x,), (tuple(dims), normalization, int(last_dim_size)))


# ---- one-dimensional transforms --------------------------------------------------------------

def _fft_c2c_1d(name, input, n, dim, norm, forward):
    d = _wrap(dim, input.dim())
    size = input.shape[d] if n is None else n
    _check_n(size)
    if n is not None:
        input = _resize(input, (d,), (n,))
    return _c2c_call(input, (d,), norm, forward)


def _fft_r2c_1d(name, input, n, dim, norm, forward, onesided):
    if input.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got "
                           f"{_type_name(input.dtype)}")
    input = _promote(input)
    d = _wrap(dim, input.dim())
    size = input.shape[d] if n is None else n
    _check_n(size)
    if n is not None:
        input = _resize(input, (d,), (n,))
    r = _r2c_call(input, (d,), _norm_mode(norm, forward), onesided)
    return r if forward else conj(r)


def _fft_c2r_1d(name, input, n, dim, norm, forward):
    input = _promote(input, True)
    d = _wrap(dim, input.dim())
    size = 2 * (input.shape[d] - 1) if n is None else n
    _check_n(size)
    if n is not None:
        input = _resize(input, (d,), (n // 2 + 1,))
    normalization = _norm_mode(norm, forward)
    if forward:
        input = conj(input)
    return _c2r_call(input, (d,), normalization, size)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """``torch.fft.fft``: a real input goes through a full (not onesided) r2c transform."""
    n = _int_arg("n", "fft", n)
    if input.is_complex():
        return _fft_c2c_1d("fft", input, n, dim, norm, True)
    return _fft_r2c_1d("fft", input, n, dim, norm, True, False)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """``torch.fft.ifft``: a real input is the conjugate of its r2c transform."""
    n = _int_arg("n", "ifft", n)
    if input.is_complex():
        return _fft_c2c_1d("ifft", input, n, dim, norm, False)
    return _fft_r2c_1d("ifft", input, n, dim, norm, False, False)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """``torch.fft.rfft``: the onesided transform of a real signal."""
    return _fft_r2c_1d("rfft", input, _int_arg("n", "rfft", n), dim, norm, True, True)


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """``torch.fft.irfft``: ``n`` real outputs (default 2 * (size - 1)) from a onesided
    spectrum; the imaginary parts of its DC and Nyquist bins are ignored."""
    return _fft_c2r_1d("irfft", input, _int_arg("n", "irfft", n), dim, norm, False)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """``torch.fft.hfft``: c2r of the conjugated onesided Hermitian signal."""
    return _fft_c2r_1d("hfft", input, _int_arg("n", "hfft", n), dim, norm, True)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """``torch.fft.ihfft``: the conjugate of a onesided r2c transform, inverse-normalized."""
    return _fft_r2c_1d("ihfft", input, _int_arg("n", "ihfft", n), dim, norm, False, True)


# ---- n-dimensional transforms ----------------------------------------------------------------

def _seq(v):
    if v is None:
        return None
    if isinstance(v, numbers.Integral):
        return (int(v),)
    return tuple(int(i) for i in v)


def _shape_and_dims(input: Tensor, s, dim):
    """canonicalize_fft_shape_and_dim_args: wrapped, unique dims and the signal size for each
    (``s`` defaults the dims to the last len(s); -1 in ``s`` keeps the input's size)."""
    nd = input.dim()
    sizes = input.shape
    s, dim = _seq(s), _seq(dim)
    dims = None
    if dim is not None:
        dims = tuple(_wrap(d, nd) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} "
                               "dimensions.")
        if dims is None:
            dims = tuple(range(nd - len(s), nd))
        shape = tuple(sizes[d] if n == -1 else n for n, d in zip(s, dims))
    elif dims is None:
        dims = tuple(range(nd))
        shape = tuple(sizes)
    else:
        shape = tuple(sizes[d] for d in dims)
    for n in shape:
        _check_n(n)
    return list(shape), dims


def _fftn_c2c(input, s, dim, norm, forward):
    shape, dims = _shape_and_dims(input, s, dim)
    x = _promote(input, True)
    x = _resize(x, dims, shape)
    return _c2c_call(x, dims, norm, forward)


def fftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """``torch.fft.fftn`` (all dims by default; a real input is cast to complex first)."""
    return _fftn_c2c(input, s, dim, norm, True)


def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """``torch.fft.ifftn``."""
    return _fftn_c2c(input, s, dim, norm, False)


def fft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``torch.fft.fft2``: fftn over the last two dims."""
    return fftn(input, s, dim, norm)


def ifft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``torch.fft.ifft2``."""
    return ifftn(input, s, dim, norm)


def rfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """``torch.fft.rfftn``: onesided along the last transformed dim."""
    if input.is_complex():
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got "
                           f"{_type_name(input.dtype)}")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    return _r2c_call(x, dims, _norm_mode(norm, True), True)


def rfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``torch.fft.rfft2``."""
    return rfftn(input, s, dim, norm)


def _c2r_shape_and_dims(fname, input, s, dim):
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    s = _seq(s)
    last = 2 * (input.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else shape[-1]
    _check_n(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """``torch.fft.irfftn``: the last transformed dim holds a onesided spectrum."""
    shape, dims, last = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    return _c2r_call(x, dims, _norm_mode(norm, False), last)


def irfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``torch.fft.irfft2``."""
    return irfftn(input, s, dim, norm)


def hfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """``torch.fft.hfftn``: c2c over all but the last dim, conjugate, then c2r over the last."""
    shape, dims, last = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    normalization = _norm_mode(norm, True)
    if len(dims) > 1:
        x = apply(FFT_C2C, (x,), (tuple(dims[:-1]), normalization, True))
    return _c2r_call(conj(x), dims[-1:], normalization, last)


def hfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``torch.fft.hfft2``."""
    return hfftn(input, s, dim, norm)


def ihfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """``torch.fft.ihfftn``: onesided r2c over the last dim, then (conjugated) c2c inverse over
    the others."""
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    normalization = _norm_mode(norm, False)
    if x.is_complex():   # ihfftn has no check of its own: _fft_r2c refuses complex input
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{_type_name(x.dtype)}")
    tmp = _r2c_call(x, dims[-1:], normalization, True)
    if len(dims) == 1:
        return conj(tmp)
    tmp = conj_physical(tmp)
    return apply(FFT_C2C, (tmp,), (tuple(dims[:-1]), normalization, False))


def ihfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``torch.fft.ihfft2``."""
    return ihfftn(input, s, dim, norm)


# ---- helpers ---------------------------------------------------------------------------------

def _alldims(input: Tensor, dim):
    if dim is None:
        return list(range(input.dim()))
    return [_wrap(d, input.dim()) for d in _seq(dim)]


def fftshift(input: Tensor, dim=None) -> Tensor:
    """``torch.fft.fftshift``: roll the zero frequency to the middle (RollBackward0)."""
    from .joining import roll
    dims = _alldims(input, dim)
    return roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """``torch.fft.ifftshift``: the inverse of fftshift."""
    from .joining import roll
    dims = _alldims(input, dim)
    return roll(input, [(input.shape[d] + 1) // 2 for d in dims], dims)


def _freq_dtype(fname: str, dtype):
    dt = dtype if dtype is not None else D.get_default_dtype()
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    if dt.is_complex:
        raise NotImplementedError(f"{fname} with a complex dtype: PyTorch's arange has no "
                                  "complex kernel either")
    return dt


def _freq(k: np.ndarray, n: int, d: float, dt, device, requires_grad) -> Tensor:
    # PyTorch multiplies by 1 / (n * d) in the result's own precision (inf when n is 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.float64(1.0) / np.float64(n * d)
        a = k.astype(dt.np) * np.dtype(dt.np).type(s)
    return _new_tensor(np.asarray(a, dt.np), device, requires_grad)


def fftfreq(n: int, d: float = 1.0, *, dtype=None, layout=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """``torch.fft.fftfreq``: [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)."""
    dt = _freq_dtype("fftfreq", dtype)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    k = np.arange(n, dtype=np.int64)
    k[(n + 1) // 2:] -= n
    return _freq(k, n, d, dt, device, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``torch.fft.rfftfreq``: [0, 1, ..., n // 2] / (d * n)."""
    dt = _freq_dtype("rfftfreq", dtype)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return _freq(np.arange(n // 2 + 1, dtype=np.int64), n, d, dt, device, requires_grad)
