"""Window functions (``torch.hann_window`` and family) and the short-time Fourier transform
(``torch.stft`` / ``torch.istft`` and their Tensor methods).

The windows follow PyTorch's TensorFactories.cpp step by step in the result's own precision
(half types through float32, as PyTorch's CPU kernels do), so that float32 windows round as
PyTorch's do. ``stft`` frames the signal (an unfold), multiplies by the window and runs one
``_fft_r2c`` / ``_fft_c2c`` over the frames, as SpectralOps.cpp does; ``istft`` inverts each
frame and overlap-adds them (PyTorch's ``unfold_backward``, here the op
UnfoldBackwardBackward0), divided by the overlap-added squared window. Gradients flow to the
signal and to the window through those ops.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.special as _sc

from .. import _dtype as D
from .. import _settings
from .._device import check_factory_options
from .._tensor import Tensor, _wrap_dim
from ._dispatch import _type_name
from ._registry import Op, apply, method, ns_fn
from .conj import resolve_conj
from .creation import _new_tensor, ones
from .fft import _BYN, _NONE, _ROOT, FFT_C2C, FFT_C2R, FFT_R2C
from .nn_sampling import _constant_pad, pad
from .views import narrow, view_as_real

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window", "istft",
           "kaiser_window", "stft"]


# ---- window functions --------------------------------------------------------------------------

_CPP_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def _window_dtype(fname: str, n: int, dtype, requires_grad: bool):
    """window_function_checks: a floating dtype and a non-negative length."""
    dt = dtype if dtype is not None else D.get_default_dtype()
    if not (dt.is_floating_point or dt.is_complex):
        # (PyTorch checks the options before requires_grad is set on them)
        raise RuntimeError(
            f"{fname} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_CPP_NAMES.get(dt.name, dt.name)}, device=cpu, layout=Strided (default), "
            "requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))")
    if n < 0:
        raise RuntimeError(f"{fname} requires non-negative window_length, got window_length={n}")
    return dt


class _Prec:
    """Arithmetic rounded to ``dt`` after every step, computed in PyTorch's opmath type
    (float32 for half types)."""

    def __init__(self, dt):
        self.np = np.dtype(dt.np)
        self.op = np.float32 if dt in (D.float16, D.bfloat16) else self.np.type

    def r(self, a):
        return np.asarray(a, self.op).astype(self.np)

    def s(self, v):
        # PyTorch's CPU kernels for half types take the scalar rounded to the tensor's type
        return self.op(np.asarray(v).astype(self.np))

    def mul(self, a, v):
        return self.r(a.astype(self.op) * self.s(v))

    def add(self, a, v):
        return self.r(a.astype(self.op) + self.s(v))

    def cos(self, a):
        return self.r(np.cos(a.astype(self.op)))


def _window_start(fname: str, n: int, periodic: bool, dtype, layout, pin_memory, device,
                  requires_grad: bool):
    """The prologue every window function shares, each check once: ``layout`` and
    ``pin_memory`` as PyTorch's CPU build takes them, ``window_function_checks`` (a floating
    dtype, a non-negative length). Returns (dtype, the length to compute: one more for a
    periodic window, whose last point is dropped, and the window itself when the length is
    0 or 1: empty, or [1])."""
    check_factory_options(layout, pin_memory)
    dt = _window_dtype(fname, n, dtype, requires_grad)
    if n <= 1:
        return dt, n, _new_tensor(np.ones(n, dt.np), device, requires_grad)
    if dt.is_complex:   # (the checks allow it; the arange the window is built from does not)
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_type_name(dt)}'")
    return dt, n + 1 if periodic else n, None


def _finish(w, periodic: bool, dt, device, requires_grad) -> Tensor:
    return _new_tensor(np.ascontiguousarray(w[:-1] if periodic else w), device, requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """``torch.hamming_window``: alpha - beta * cos(2 pi n / (N - 1)); periodic windows are
    the first N of a window one longer."""
    dt, n, short = _window_start("hamming_window", window_length, periodic, dtype, layout,
                                 pin_memory, device, requires_grad)
    if short is not None:
        return short
    return _hamming(n, periodic, alpha, beta, dt, device, requires_grad)


def _hamming(n, periodic, alpha, beta, dt, device, requires_grad):
    p = _Prec(dt)
    w = p.mul(np.arange(n, dtype=p.np), math.pi * 2.0 / (n - 1))
    w = p.add(p.mul(p.cos(w), -beta), alpha)
    return _finish(w, periodic, dt, device, requires_grad)


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """``torch.hann_window``: the Hamming window with alpha = beta = 0.5."""
    dt, n, short = _window_start("hann_window", window_length, periodic, dtype, layout,
                                 pin_memory, device, requires_grad)
    if short is not None:
        return short
    return _hamming(n, periodic, 0.5, 0.5, dt, device, requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, pin_memory: bool = False, requires_grad: bool = False
                    ) -> Tensor:
    """``torch.bartlett_window``: the triangular window 1 - |2n / (N - 1) - 1|."""
    dt, n, short = _window_start("bartlett_window", window_length, periodic, dtype, layout,
                                 pin_memory, device, requires_grad)
    if short is not None:
        return short
    p = _Prec(dt)
    w = p.mul(np.arange(n, dtype=p.np), 2.0 / (n - 1))
    half = ((n - 1) >> 1) + 1
    w[half:] = p.add(p.mul(w[half:], -1), 2)
    return _finish(w, periodic, dt, device, requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, pin_memory: bool = False, requires_grad: bool = False
                    ) -> Tensor:
    """``torch.blackman_window``: 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    dt, n, short = _window_start("blackman_window", window_length, periodic, dtype, layout,
                                 pin_memory, device, requires_grad)
    if short is not None:
        return short
    p = _Prec(dt)
    w = p.mul(np.arange(n, dtype=p.np), math.pi / (n - 1))
    a = p.mul(p.cos(p.mul(w, 4)), 0.08)
    b = p.mul(p.cos(p.mul(w, 2)), 0.5)
    w = p.add(p.r(a.astype(p.op) - b.astype(p.op)), 0.42)
    return _finish(w, periodic, dt, device, requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype=None, layout=None, device=None, pin_memory: bool = False,
                  requires_grad: bool = False) -> Tensor:
    """``torch.kaiser_window``: I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta)."""
    dt, n, short = _window_start("kaiser_window", window_length, periodic, dtype, layout,
                                 pin_memory, device, requires_grad)
    if short is not None:
        return short
    p = _Prec(dt)
    a = np.arange(n, dtype=p.np).astype(np.float64)
    alpha = (n - 1) / 2.0
    w = _sc.i0(beta * np.sqrt(1 - ((a - alpha) / alpha) ** 2)) / _sc.i0(beta)
    return _finish(p.r(w.astype(p.op)), periodic, dt, device, requires_grad)


# ---- stft / istft ------------------------------------------------------------------------------

_WARNED: set = set()


def _warn_once(key: str, msg: str) -> None:
    """TORCH_WARN_ONCE: a UserWarning the first time in the process (every time under
    ``set_warn_always(True)``)."""
    if key not in _WARNED or _settings.is_warn_always_enabled():
        _WARNED.add(key)
        warnings.warn(msg, UserWarning, stacklevel=3)


def _tensor_str(t: Tensor) -> str:
    """c10's ``Tensor::toString`` as SpectralOps' messages print it."""
    if t.is_complex():
        return f"CPU{_type_name(t.dtype)}Type"
    return f"torch.{t.dtype._legacy}"


def _opt(v) -> str:
    return "None" if v is None else str(int(v))


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _window_str(w) -> str:
    return "None" if w is None else f"{_tensor_str(w)}{{{_sizes(w)}}}"


TRANSPOSE_ = Op("transpose_", lambda x: np.swapaxes(x, -1, -2),
                lambda ns, g, need: (ns.swap(g),), linear=True, node="TransposeBackward1")
SQUEEZE0_ = Op("squeeze_", lambda x: x[0], lambda ns, g, need: (ns.unsqueeze(g, 0),),
               linear=True, node="SqueezeBackward4")


def _ola_np(frames, hop, length):
    """Overlap-add (C, F, n) frames hop apart into (C, length)."""
    c, f, n = frames.shape
    out = np.zeros_like(frames, shape=(c, length))
    if f <= n:
        for t in range(f):
            out[:, t * hop:t * hop + n] += frames[:, t]
    else:
        for k in range(n):
            out[:, k:k + hop * (f - 1) + 1:hop] += frames[:, :, k]
    return out


def _frames_np(g, n, hop):
    return np.lib.stride_tricks.sliding_window_view(g, n, axis=-1)[..., ::hop, :]


def _ola_vjp(ns, g, need, hop, length, n):
    return (ns.stft_frames(g, n, hop),)


OLA = Op("unfold_backward", lambda x, hop, length, n: _ola_np(x, hop, length), _ola_vjp,
         linear=True, node="UnfoldBackwardBackward0")
ns_fn("stft_frames", _frames_np, lambda g, n, hop: g.unfold(-1, n, hop))


def _ola(frames: Tensor, hop: int, length: int) -> Tensor:
    return apply(OLA, (frames,), (hop, length, frames.shape[-1]))


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect",
         normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """``torch.stft``: frames ``hop_length`` apart (the signal padded by n_fft // 2 with
    ``pad_mode`` when ``center``), windowed, transformed; (batch?, freq, frames) complex, or
    PyTorch's deprecated real pairs with ``return_complex=False``."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        nd = input.dim()
        ext = [1] * (3 - nd) + list(input.shape)
        p = int(n_fft // 2)
        input = pad(input.view(ext), [p, p], pad_mode)
        input = input.view(input.shape[-nd:] if nd else ())
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(msg):
        raise RuntimeError(
            f"stft({_tensor_str(input)}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_str(window)}, normalized={int(normalized)}, "
            f"onesided={_opt(onesided)}, return_complex={_opt(return_complex)}, "
            f"align_to_window={_opt(align_to_window)}) : {msg}")

    if window is None:
        _warn_once("stft_window", (
            "A window was not provided. A rectangular window will be applied,which is known to "
            "cause spectral leakage. Other windows such as torch.hann_window or "
            "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
            "warning and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`."))
    rc = return_complex if return_complex is not None else (
        input.is_complex() or (window is not None and window.is_complex()))
    if not rc:
        if return_complex is None:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release.")
        _warn_once("stft_real", (
            "stft with return_complex=False is deprecated. In a future pytorch release, stft "
            "will return complex tensors for all inputs, and return_complex=False will raise "
            "an error.\nNote: you can still call torch.view_as_real on the complex output to "
            "recover the old return format."))
    if not (input.is_floating_point() or input.is_complex()):
        fail("expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        fail("expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window "
             f"with size {_sizes(window)}")
    w = window
    left = (n_fft - win) // 2
    if win < n_fft:
        if window is not None:
            w = _constant_pad(window, [left, n_fft - win - left], 0)
        else:
            a = np.zeros(n_fft, x._data.dtype)
            a[left:left + win] = 1
            w = _new_tensor(a)
    if align_to_window:
        n_frames = 1 + (length - win) // hop
        if left:
            x = _constant_pad(x, [left, left], 0)
        need = (x.shape[0] - 1) * x.shape[1] + (n_frames - 1) * hop + n_fft
        if need > x.numel():
            item = x._data.dtype.itemsize
            raise RuntimeError(
                f"setStorage: sizes [{x.shape[0]}, {n_frames}, {n_fft}], strides [{x.shape[1]}, "
                f"{hop}, 1], storage offset 0, and itemsize {item} requiring a storage size of "
                f"{need * item} are out of bounds for storage of size {x.numel() * item}")
    else:
        n_frames = 1 + (length - n_fft) // hop
    frames = x.unfold(-1, n_fft, hop)
    if frames.shape[1] != n_frames:
        frames = narrow(frames, 1, 0, n_frames)
    if w is not None:
        frames = frames * w
    cplx = frames.is_complex()
    sided = onesided if onesided is not None else not cplx
    norm = _ROOT if normalized else _NONE
    if cplx:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = apply(FFT_C2C, (frames,), ((2,), norm, True))
    else:
        out = apply(FFT_R2C, (frames,), ((2,), norm, bool(sided)))
    out = apply(TRANSPOSE_, (out,))
    if input.dim() == 1:
        out = apply(SQUEEZE0_, (out,))
    return out if rc else view_as_real(out)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """``torch.istft``: each frame inverted (onesided by default when the frequency size is not
    n_fft), windowed, overlap-added and divided by the overlap-added squared window; the
    centre padding trimmed and the result cut or zero-padded to ``length``."""
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")

    def fail(msg, sep=" : "):
        raise RuntimeError(
            f"istft({_tensor_str(input)}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_str(window)}, center={int(center)}, "
            f"normalized={int(normalized)}, onesided={_opt(onesided)}, length={_opt(length)}, "
            f"return_complex={int(return_complex)}){sep}{msg}")

    if window is None:
        _warn_once("istft_window", (
            "A window was not provided. A rectangular window will be applied.Please provide the "
            "same window used by stft to make the inversion lossless.To suppress this warning "
            "and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`."))
    x = resolve_conj(input)
    nd = x.dim() + 1   # PyTorch counts the dims of view_as_real(input)
    n_frames = x.shape[_wrap_dim(-1, nd - 1)]
    fft_size = x.shape[_wrap_dim(-2, nd - 1)]
    expected = n_fft + hop * (n_frames - 1)
    if x.numel() == 0:
        fail("input tensor cannot be empty.")
    if nd not in (3, 4):
        fail(f"expected a tensor with 3 or 4 dimensions, but got {nd}")
    sided = onesided if onesided is not None else fft_size != n_fft
    if sided and n_fft // 2 + 1 != fft_size:
        fail("expected the frequency dimension (3rd to the last) of the input tensor to match "
             f"n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not sided and n_fft != fft_size:
        fail("expected the frequency dimension (3rd to the last) of the input tensor to match "
             f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        fail("expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        fail("expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail("Invalid window shape. window has to be 1D and length of `win_length`")
    real_dt = D.float32 if x.dtype is D.complex64 else D.float64
    w = window if window is not None else ones(win, dtype=real_dt)
    if win != n_fft:
        left = (n_fft - win) // 2
        w = _constant_pad(w, [left, n_fft - win - left], 0)
    if nd == 3:
        x = x.unsqueeze(0)
    x = x.transpose(1, 2)
    norm = _ROOT if normalized else _BYN
    if return_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = apply(FFT_C2C, (x,), ((2,), norm, False))
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not sided:
            x = narrow(x, -1, 0, n_fft // 2 + 1)
        x = apply(FFT_C2R, (x,), ((2,), norm, n_fft))
    y = _ola(x * w.view(1, 1, n_fft), hop, expected)
    env = _ola(w.pow(2).expand(1, n_frames, n_fft), hop, expected)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else expected
    y = y[:, start:end]
    env = env[:, start:end]
    if bool((env.abs().min() < 1e-11).item()):
        fail("window overlap add min: 1\n[ CPUBoolType{} ]", sep=" ")
    y = y / env
    if nd == 3:
        y = y.squeeze(0)
    if end > expected:
        _warn_once("istft_length", (
            "The length of signal is shorter than the length parameter. Result is being padded "
            "with zeros in the tail. Please check your center and hop_length settings."))
        y = _constant_pad(y, [0, end - expected], 0)
    return y


method("stft", stft)
method("istft", istft)
