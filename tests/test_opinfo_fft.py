"""torch.fft, torch.signal.windows, the window factories and stft / istft against PyTorch.

Every ``fft.*`` and ``signal.windows.*`` entry of PyTorch's OpInfo database runs on its own
sample inputs in float64, float32 and complex128 (where PyTorch supports the dtype): values,
reverse gradients, forward-mode tangents and grad_fn names. Then gradcheck / gradgradcheck,
double backward against PyTorch, error messages, and stft / istft (values and gradients with
respect to the signal and the window).
"""
import warnings

import numpy as np
import pytest
import torch

import ember
from helpers import check_op
from opinfo import _op_db, check_sample, ember_fn, opinfos

DTYPES = (torch.float64, torch.float32, torch.complex128)

# (name, dtype) pairs that still fail, with the reason
LEFT_OUT: dict = {}


def _entries():
    out = []
    for info in _op_db():
        if not info.name.startswith(("fft.", "signal.windows.")):
            continue
        for dt in DTYPES:
            if dt in info.supported_dtypes("cpu"):
                out.append(pytest.param(info, dt, id=f"{info.name}-{str(dt)[6:]}"))
    return out


def _tol(dt):
    # float32 transforms of a few hundred points: MKL and pocketfft round differently
    return (2e-5, 1e-5) if dt == torch.float32 else (None, None)


@pytest.mark.parametrize("info,dtype", _entries())
def test_opinfo(info, dtype):
    key = (info.name, str(dtype)[6:])
    if key in LEFT_OUT:
        pytest.skip(LEFT_OUT[key])
    fe = ember_fn(info.name)
    rtol, atol = _tol(dtype)
    n = 0
    for i, sample in enumerate(info.sample_inputs("cpu", dtype, requires_grad=True)):
        try:
            check_sample(info, sample, fe, rtol=rtol, atol=atol)
        except AssertionError as ex:
            raise AssertionError(f"sample {i}: {sample}\n{ex}") from None
        n += 1
    assert n


def test_every_entry_is_covered():
    names = {o.name for o in _op_db() if o.name.startswith(("fft.", "signal.windows."))}
    assert len(names) == 31, sorted(names)
    for name in names:
        ember_fn(name)
    assert not {k[0] for k in LEFT_OUT} - names


def _stft_samples(name, dtype):
    for sample in opinfos(name)[0].sample_inputs("cpu", dtype, requires_grad=True):
        w = sample.kwargs.get("window")
        if w is not None and w._base is not None:
            # PyTorch loses the gradient of a window that is a strided view made a leaf
            # (its OpInfo marks istft's window gradient as an expected failure); a contiguous
            # leaf of the same values is compared instead
            sample.kwargs["window"] = w.detach().clone().requires_grad_()
        yield sample


@pytest.mark.parametrize("name,dtype", [("stft", torch.float64), ("stft", torch.float32),
                                        ("stft", torch.complex128), ("istft", torch.complex128),
                                        ("istft", torch.complex64)])
def test_opinfo_stft(name, dtype):
    info = opinfos(name)[0]
    rtol, atol = (2e-5, 2e-5) if dtype in (torch.float32, torch.complex64) else (None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, sample in enumerate(_stft_samples(name, dtype)):
            try:
                check_sample(info, sample, ember_fn(name), rtol=rtol, atol=atol)
            except AssertionError as ex:
                raise AssertionError(f"sample {i}: {sample}\n{ex}") from None


# ---- gradcheck, gradgradcheck, double backward -----------------------------------------------

def _arrays():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 6))
    z = rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))
    return x, z


GRADCHECK = [
    ("rfft", lambda F, a: F.rfft(a, n=7, norm="ortho"), 0),
    ("rfft-even", lambda F, a: F.rfft(a, dim=0, norm="forward"), 0),
    ("irfft-odd", lambda F, a: F.irfft(a, n=9), 1),
    ("irfft-even", lambda F, a: F.irfft(a, norm="forward"), 1),
    ("irfft-trim", lambda F, a: F.irfft(a, n=4, dim=-1), 1),
    ("hfft", lambda F, a: F.hfft(a, n=6), 1),
    ("hfft-ortho", lambda F, a: F.hfft(a, norm="ortho"), 1),
    ("ihfft", lambda F, a: F.ihfft(a, n=5), 0),
    ("fftn", lambda F, a: F.fftn(a, s=(4, 5)), 1),
    ("fftn-real", lambda F, a: F.fftn(a, dim=(0, 1), norm="ortho"), 0),
    ("ifftn-real", lambda F, a: F.ifft2(a, s=(2, 8)), 0),
    ("hfftn", lambda F, a: F.hfftn(a, s=(3, 8)), 1),
    ("ihfftn", lambda F, a: F.ihfftn(a, s=(2, 7), norm="forward"), 0),
    ("irfftn", lambda F, a: F.irfftn(a, s=(4, 6)), 1),
]


@pytest.mark.parametrize("name,f,which", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck(name, f, which):
    a = ember.from_numpy(_arrays()[which]).requires_grad_()
    fn = lambda t: f(ember.fft, t)  # noqa: E731
    assert ember.autograd.gradcheck(fn, (a,), check_forward_ad=True)
    assert ember.autograd.gradgradcheck(fn, (a,))


@pytest.mark.parametrize("name,f,which", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_double_backward_matches_torch(name, f, which):
    """Values, gradients, tangents and the double backward through the first gradient (with
    respect to the input and the cotangent) equal PyTorch's."""
    check_op(lambda t: f(ember.fft, t), lambda t: f(torch.fft, t), _arrays()[which])


def test_irfft_ignores_imaginary_dc_and_nyquist():
    """irfft's gradient puts zero on the imaginary parts of the DC and Nyquist bins, which the
    transform ignores, and doubles the bins that stand for a conjugate pair (as PyTorch)."""
    z = _arrays()[1]
    e = ember.from_numpy(z).requires_grad_()
    t = torch.from_numpy(z).requires_grad_()
    g = np.random.default_rng(1).standard_normal((3, 8))
    ember.fft.irfft(e).backward(ember.from_numpy(g))
    torch.fft.irfft(t).backward(torch.from_numpy(g))
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-14)
    assert not e.grad.numpy()[:, [0, 4]].imag.any()


# ---- dtypes, names and errors ----------------------------------------------------------------

@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn",
                                  "rfftn", "irfftn", "hfftn", "ihfftn"])
@pytest.mark.parametrize("dt", ["int64", "bool", "float32"])
def test_promotion(name, dt):
    a = (np.arange(12).reshape(3, 4) % 3).astype(dt)
    e = getattr(ember.fft, name)(ember.from_numpy(a.copy()))
    t = getattr(torch.fft, name)(torch.from_numpy(a.copy()))
    assert str(e.dtype)[6:] == str(t.dtype)[6:]
    np.testing.assert_allclose(e.numpy(force=True), t.numpy(force=True), rtol=1e-5, atol=1e-5)


def _x():
    return np.random.default_rng(0).standard_normal((4, 6))


ERRORS = [
    ("half", lambda m, x, z: m.fft.fft(x.half())),
    ("bfloat16", lambda m, x, z: m.fft.rfft(x.bfloat16())),
    ("norm", lambda m, x, z: m.fft.fft(x, norm="foo")),
    ("norm ifftn", lambda m, x, z: m.fft.ifftn(z, norm="bar")),
    ("norm hfftn", lambda m, x, z: m.fft.hfftn(z, norm="bar")),
    ("n 0", lambda m, x, z: m.fft.fft(x, n=0)),
    ("n -1 rfft", lambda m, x, z: m.fft.rfft(x, n=-1)),
    ("irfft size 1", lambda m, x, z: m.fft.irfft(z[:, :1])),
    ("dim", lambda m, x, z: m.fft.fft(x, dim=2)),
    ("dim neg", lambda m, x, z: m.fft.ihfft(x, dim=-3)),
    ("0-dim", lambda m, x, z: m.fft.fft(x[0, 0])),
    ("0-dim dims", lambda m, x, z: m.fft.fftn(x[0, 0], dim=0)),
    ("unique", lambda m, x, z: m.fft.fftn(x, dim=(1, -1))),
    ("s and dim", lambda m, x, z: m.fft.fftn(x, s=(2,), dim=(0, 1))),
    ("s too long", lambda m, x, z: m.fft.rfftn(x, s=(2, 2, 2))),
    ("s 0", lambda m, x, z: m.fft.fftn(x, s=(0, 2))),
    ("no axis rfftn", lambda m, x, z: m.fft.rfftn(x, dim=())),
    ("no axis irfftn", lambda m, x, z: m.fft.irfftn(z, dim=())),
    ("no axis hfftn", lambda m, x, z: m.fft.hfftn(z, dim=())),
    ("no axis ihfftn", lambda m, x, z: m.fft.ihfftn(x, dim=())),
    ("rfft complex", lambda m, x, z: m.fft.rfft(z)),
    ("ihfft complex", lambda m, x, z: m.fft.ihfft(z)),
    ("rfftn complex", lambda m, x, z: m.fft.rfft2(z)),
    ("ihfftn complex", lambda m, x, z: m.fft.ihfft2(z)),
    ("fft2 1-d", lambda m, x, z: m.fft.fft2(x[0])),
    ("fftshift dim", lambda m, x, z: m.fft.fftshift(x, dim=5)),
    ("n float", lambda m, x, z: m.fft.fft(x, n=2.0)),
    ("fftfreq int", lambda m, x, z: m.fft.fftfreq(4, dtype=m.int64)),
    ("fftfreq negative", lambda m, x, z: m.fft.fftfreq(-1)),
]


@pytest.mark.parametrize("name,f", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name, f):
    x = _x()
    z = x[:, :5] + 1j * x[:, 1:]
    with pytest.raises(Exception) as te:
        f(torch, torch.from_numpy(x), torch.from_numpy(z))
    with pytest.raises(type(te.value)) as ee:
        f(ember, ember.from_numpy(x), ember.from_numpy(z))
    assert str(ee.value) == str(te.value)


def test_shapes_and_names():
    x = _x()
    e, t = ember.from_numpy(x).requires_grad_(), torch.from_numpy(x).requires_grad_()
    calls = [lambda m, a: m.fft.fftn(a, s=(-1, 8)), lambda m, a: m.fft.fftn(a, dim=()),
             lambda m, a: m.fft.fft(a, n=3), lambda m, a: m.fft.ihfft(a, n=9),
             lambda m, a: m.fft.fftn(a[0, 0]), lambda m, a: m.fft.fft(a[:0], dim=0, n=3)]
    for c in calls:
        re, rt = c(ember, e), c(torch, t)
        assert tuple(re.shape) == tuple(rt.shape)
        assert re.grad_fn.name() == rt.grad_fn.name()
        np.testing.assert_allclose(re.numpy(force=True), rt.numpy(force=True), atol=1e-12)


@pytest.mark.parametrize("fn", ["fftfreq", "rfftfreq"])
def test_freq(fn):
    for n, d, dt in [(5, 1.0, None), (8, 0.1, "float64"), (1, 2.0, "float32"), (0, 1.0, None),
                     (7, 0.3, "float32")]:
        kw = {} if dt is None else {"dtype": getattr(torch, dt)}
        t = getattr(torch.fft, fn)(n, d, **kw)
        kw = {} if dt is None else {"dtype": getattr(ember, dt)}
        e = getattr(ember.fft, fn)(n, d, **kw)
        assert str(e.dtype)[6:] == str(t.dtype)[6:]
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    e = getattr(ember.fft, fn)(4, requires_grad=True)
    assert e.requires_grad and e.is_leaf


# ---- window factories ------------------------------------------------------------------------

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
def test_window_factories(name, dt):
    for args in [(0,), (1,), (2,), (5,), (6, False), (17,), (64, False)]:
        e = getattr(ember, name)(*args, dtype=getattr(ember, dt))
        t = getattr(torch, name)(*args, dtype=getattr(torch, dt))
        assert str(e.dtype)[6:] == str(t.dtype)[6:]
        r = 1e-13 if dt == "float64" else 1e-6
        np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=r, atol=r)


def test_window_parameters_and_errors():
    pairs = [(lambda m: m.hamming_window(7, True, 0.6, 0.3)),
             (lambda m: m.hamming_window(7, alpha=0.5, beta=0.4, periodic=False)),
             (lambda m: m.kaiser_window(9, False, 5.0)), (lambda m: m.kaiser_window(8, True, 0.5))]
    for f in pairs:
        np.testing.assert_allclose(f(ember).numpy(), f(torch).numpy(), rtol=1e-6)
    w = ember.hann_window(4, requires_grad=True, dtype=ember.float64)
    assert w.is_leaf and w.requires_grad and w.dtype is ember.float64
    for name in WINDOWS:
        for bad in [lambda m: getattr(m, name)(-1), lambda m: getattr(m, name)(3, dtype=m.int64),
                    lambda m: getattr(m, name)(3, dtype=m.complex64)]:
            with pytest.raises(Exception) as te:
                bad(torch)
            with pytest.raises(type(te.value)) as ee:
                bad(ember)
            assert str(ee.value) == str(te.value)


def test_signal_windows_graph_and_errors():
    e = ember.signal.windows.gaussian(6, requires_grad=True)
    t = torch.signal.windows.gaussian(6, requires_grad=True)
    assert e.grad_fn.name() == t.grad_fn.name()
    for bad in [lambda m: m.signal.windows.hann(-1), lambda m: m.signal.windows.kaiser(4, beta=-1),
                lambda m: m.signal.windows.exponential(4, center=1.0),
                lambda m: m.signal.windows.general_cosine(4, a=[]),
                lambda m: m.signal.windows.gaussian(4, std=0)]:
        with pytest.raises(Exception) as te:
            bad(torch)
        with pytest.raises(type(te.value)) as ee:
            bad(ember)
        assert str(ee.value) == str(te.value)


# ---- stft / istft ----------------------------------------------------------------------------

STFT = [
    ("hann", lambda m, x, w: m.stft(x, 8, hop_length=2, window=w, return_complex=True)),
    ("1-d normalized", lambda m, x, w: m.stft(x[0], 8, window=w, normalized=True,
                                               return_complex=True)),
    ("constant pad", lambda m, x, w: m.stft(x, 8, hop_length=3, window=w, pad_mode="constant",
                                             return_complex=True)),
    ("short window", lambda m, x, w: m.stft(x, 10, hop_length=3, win_length=8, window=w,
                                             center=False, return_complex=True)),
    ("two-sided", lambda m, x, w: m.stft(x, 8, window=w, onesided=False, return_complex=True)),
    ("method", lambda m, x, w: x.stft(8, 4, window=w, center=False, return_complex=True)),
    ("roundtrip", lambda m, x, w: m.istft(m.stft(x, 8, hop_length=2, window=w,
                                                  return_complex=True),
                                          8, hop_length=2, window=w)),
    ("roundtrip length", lambda m, x, w: m.istft(m.stft(x, 8, hop_length=2, window=w,
                                                         return_complex=True),
                                                 8, hop_length=2, window=w, length=44)),
    ("roundtrip two-sided", lambda m, x, w: m.istft(
        m.stft(x, 8, hop_length=2, window=w, onesided=False, return_complex=True),
        8, hop_length=2, window=w, onesided=False, center=True, length=30)),
    ("istft complex", lambda m, x, w: m.stft(x, 8, window=w, onesided=False,
                                             return_complex=True).istft(
        8, window=w, return_complex=True, onesided=False)),
]


@pytest.mark.parametrize("name,f", STFT, ids=[s[0] for s in STFT])
def test_stft(name, f):
    """Values, gradients for the signal and the window, tangents, double backward."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 40))
    w = 0.6 + rng.random(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(lambda a, b: f(ember, a, b), lambda a, b: f(torch, a, b), x, w)


def test_stft_return_complex_false():
    x = np.random.default_rng(0).standard_normal(30)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        import ember._ops.spectral as sp
        sp._WARNED.discard("stft_real")
        e = ember.stft(ember.from_numpy(x), 8, window=ember.ones(8, dtype=ember.float64),
                       return_complex=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.stft(torch.from_numpy(x), 8, window=torch.ones(8, dtype=torch.float64),
                       return_complex=False)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-12)


STFT_ERRORS = [
    ("no return_complex", lambda m, x, z: m.stft(x, 8, window=m.ones(8, dtype=m.float64))),
    ("int", lambda m, x, z: m.stft(m.arange(30), 8, return_complex=True)),
    ("3-d", lambda m, x, z: m.stft(x[None], 8, center=False, return_complex=True)),
    ("n_fft", lambda m, x, z: m.stft(x, 50, center=False, return_complex=True)),
    ("hop", lambda m, x, z: m.stft(x, 8, hop_length=0, return_complex=True)),
    ("win_length", lambda m, x, z: m.stft(x, 8, win_length=9, return_complex=True)),
    ("window size", lambda m, x, z: m.stft(x, 8, window=m.ones(5, dtype=m.float64),
                                           return_complex=True)),
    ("onesided complex", lambda m, x, z: m.stft(z[0], 4, onesided=True, return_complex=True)),
    ("align centre", lambda m, x, z: m.stft(x, 8, align_to_window=True, return_complex=True)),
    ("istft real", lambda m, x, z: m.istft(x, 8)),
    ("istft freq", lambda m, x, z: m.istft(z[:, :4], 8)),
    ("istft freq two-sided", lambda m, x, z: m.istft(z, 8, onesided=False)),
    ("istft hop", lambda m, x, z: m.istft(z, 8, hop_length=9)),
    ("istft win", lambda m, x, z: m.istft(z, 8, win_length=9)),
    ("istft window", lambda m, x, z: m.istft(z, 8, window=m.ones(5, dtype=m.float64))),
    ("istft empty", lambda m, x, z: m.istft(z[:, :, :0], 8)),
    ("istft 5-d", lambda m, x, z: m.istft(z[None, None], 8)),
    ("istft overlap", lambda m, x, z: m.istft(z, 8, hop_length=2,
                                              window=m.zeros(8, dtype=m.float64))),
    ("istft onesided complex", lambda m, x, z: m.istft(z, 8, return_complex=True)),
]


@pytest.mark.parametrize("name,f", STFT_ERRORS, ids=[e[0] for e in STFT_ERRORS])
def test_stft_errors(name, f):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 30))
    z = rng.standard_normal((2, 5, 16)) + 1j * rng.standard_normal((2, 5, 16))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as te:
            f(torch, torch.from_numpy(x), torch.from_numpy(z))
        with pytest.raises(type(te.value)) as ee:
            f(ember, ember.from_numpy(x), ember.from_numpy(z))
    assert str(ee.value) == str(te.value)


def test_stft_align_to_window():
    x = np.random.default_rng(0).standard_normal(30)
    w = np.hanning(4)
    kw = dict(hop_length=3, win_length=4, center=False, align_to_window=True,
              return_complex=True)
    e = ember.stft(ember.from_numpy(x), 8, window=ember.from_numpy(w), **kw)
    t = torch.stft(torch.from_numpy(x), 8, window=torch.from_numpy(w), **kw)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-12)
    kw["hop_length"] = 2
    with pytest.raises(RuntimeError) as te:
        torch.stft(torch.from_numpy(x), 9, window=torch.from_numpy(w), **kw)
    with pytest.raises(RuntimeError) as ee:
        ember.stft(ember.from_numpy(x), 9, window=ember.from_numpy(w), **kw)
    assert str(ee.value) == str(te.value)


def test_r2c_saves_its_input():
    """FftR2CBackward0 saves ``self`` (as PyTorch does): modifying it in place before backward
    is an error; the c2c and c2r nodes save nothing."""
    x = _x()
    for m, a in [(torch, torch.from_numpy(x)), (ember, ember.from_numpy(x))]:
        a.requires_grad_()
        y = a * 1
        r = m.fft.rfft(y)
        assert r.grad_fn._saved_onesided is True and r.grad_fn._saved_dim == (1,)
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            r.abs().sum().backward()
        c = m.fft.fft(a.to(m.complex128) * 1)
        c.abs().sum().backward()
