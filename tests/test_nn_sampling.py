"""nn.functional pad, interpolate/upsample, grid_sample, affine_grid and the pixel shuffles
against PyTorch: OpInfo samples (float64 and float32), random geometries for every
interpolation mode, double backward, and error messages."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from helpers import assert_same, both, check_op, raises_same
from opinfo import check_opinfo, check_sample, opinfos

DTYPES = [torch.float64, torch.float32]
RNG = np.random.default_rng(3)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


# ---- OpInfo ---------------------------------------------------------------------------------

# float32 gradients of interpolate sum many products: a few land 3e-6 from PyTorch's
_TOL = {"interpolate": (1e-4, 1e-5)}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["pad", "interpolate", "upsample_bilinear", "upsample_nearest",
                                  "grid_sample", "pixel_shuffle", "pixel_unshuffle",
                                  "channel_shuffle"])
def test_opinfo(name, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rtol, atol = _TOL.get(name, (None, None)) if dtype == torch.float32 else (None, None)
        assert check_opinfo(f"nn.functional.{name}", dtype, rtol=rtol, atol=atol) > 0


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_opinfo_grid_sampler_2d(dtype):
    """torch.grid_sampler_2d's samples (integer modes) through F.grid_sample."""
    modes = ["bilinear", "nearest", "bicubic"]
    pads = ["zeros", "border", "reflection"]

    def fe(x, grid, mode, padding, align):
        return EF.grid_sample(x, grid, modes[mode], pads[padding], align)
    info, = opinfos("grid_sampler_2d")
    n = 0
    tol = (1e-4, 5e-5) if dtype == torch.float32 else (None, None)
    for sample in info.sample_inputs("cpu", dtype, requires_grad=True):
        check_sample(info, sample, fe=fe, rtol=tol[0], atol=tol[1])
        n += 1
    assert n


# ---- pad ------------------------------------------------------------------------------------

PAD_CASES = [
    ("constant", (3, 4), (1, 2)), ("constant", (2, 3, 4), (1, -1, 2, 0)),
    ("constant", (2, 3, 4, 5), (-1, -2, 1, 1, 0, 2)), ("reflect", (2, 5), (2, 3)),
    ("reflect", (2, 3, 5), (-1, 2)), ("reflect", (2, 3, 4, 5), (1, 2, 3, 1)),
    ("reflect", (1, 2, 3, 4, 5), (1, 1, 2, 0, 1, 2)), ("replicate", (2, 3, 5), (3, 1)),
    ("replicate", (2, 3, 4, 5), (-1, -2, 2, 1)), ("replicate", (2, 3, 4, 5), (2, 2, 2, 2)),
    ("replicate", (1, 2, 3, 4, 5), (1, 2, 0, 2, 1, 1)), ("circular", (2, 3, 5), (2, 3)),
    ("circular", (2, 3, 4, 5), (1, 2, -1, 3)), ("circular", (3, 4, 5), (4, 1, 2, 2)),
    ("circular", (1, 2, 3, 4, 5), (1, 1, 2, 2, 1, 1)),
]


@pytest.mark.parametrize("mode,shape,pads", PAD_CASES)
def test_pad(mode, shape, pads):
    check_op(lambda x: EF.pad(x, pads, mode), lambda x: TF.pad(x, pads, mode), rand(*shape))


def test_pad_value_and_dtypes():
    check_op(lambda x: EF.pad(x, (1, 1), value=2.5), lambda x: TF.pad(x, (1, 1), value=2.5),
             rand(2, 3, dtype=np.float32))
    both(lambda T: T.nn.functional.pad(T.ones(2, 2, dtype=T.int64), (1, 1), value=1.7))
    both(lambda T: T.nn.functional.pad(T.ones(1, 2, 2, dtype=T.int64), (1, 1), mode="reflect"))
    both(lambda T: T.nn.functional.pad(T.ones(2, 2, dtype=T.bool), [1, 0, 0, 1]))
    both(lambda T: T.nn.functional.pad(T.tensor(1.0), ()))


@pytest.mark.parametrize("args", [
    ((2, 3, 4, 5), (1, 2), "reflect", None), ((2, 3, 4, 5), (1, 2), "foo", None),
    ((2, 3, 4, 5), (1,), "constant", None), ((2, 3, 4), (1,) * 8, "constant", None),
    ((2, 3, 4, 5), (5, 1, 1, 1), "reflect", None), ((2, 3, 4, 5), (1, 1, 4, 1), "reflect", None),
    ((1, 1, 2, 3, 4), (1, 1, 1, 1, 2, 2), "reflect", None),
    ((2, 3, 4, 5), (1, 1, 1, 1), "reflect", 1.0), ((2, 3, 4, 5), (6, 1, 1, 1), "circular", None),
    ((2, 3, 5), (-3, -3), "constant", None), ((4,), (1, 1), "replicate", None),
    ((2, 3, 5), (-3, -3), "replicate", None), ((2, 3, 4, 5), (1.5, 1), "constant", None),
])
def test_pad_errors(args):
    shape, pads, mode, value = args
    x = rand(*shape)
    raises_same(lambda: EF.pad(ember.from_numpy(x), pads, mode, value),
                lambda: TF.pad(torch.from_numpy(x), pads, mode, value))


# ---- interpolate ----------------------------------------------------------------------------

MODES = [("nearest", 3), ("nearest", 4), ("nearest", 5), ("nearest-exact", 3),
         ("nearest-exact", 4), ("nearest-exact", 5), ("linear", 3), ("bilinear", 4),
         ("trilinear", 5), ("bicubic", 4), ("area", 3), ("area", 4), ("area", 5),
         ("bilinear-aa", 4), ("bicubic-aa", 4), ("lanczos", 4)]


def _interp_args(rng, mode, nd, trial):
    kw = {}
    aa = mode.endswith("-aa") or mode == "lanczos"
    m = mode.replace("-aa", "")
    if trial % 3 == 0:
        kw["size"] = [int(v) for v in rng.integers(2, 10, nd - 2)]
    elif trial % 3 == 1:
        kw["scale_factor"] = float(rng.choice([0.5, 1.5, 2.0, 0.7, 1.7, 3.0, 2.5]))
        kw["recompute_scale_factor"] = bool(trial % 2)
    else:
        kw["scale_factor"] = [float(v) for v in rng.choice([0.5, 1.5, 2.0, 1.25, 3.0], nd - 2)]
    if m not in ("nearest", "nearest-exact", "area"):
        kw["align_corners"] = bool(rng.integers(0, 2)) and m != "lanczos"
    if aa:
        kw["antialias"] = True
    return m, kw


@pytest.mark.parametrize("mode,nd", MODES)
def test_interpolate_random(mode, nd):
    """Random sizes and scale factors: values, gradients and node names (forward AD and double
    backward are in test_interpolate_double)."""
    rng = np.random.default_rng(nd * 100 + len(mode))
    n = 0
    for trial in range(6):
        shape = (2, 2) + tuple(int(s) for s in rng.integers(2, 8, nd - 2))
        m, kw = _interp_args(rng, mode, nd, trial)
        x = rng.standard_normal(shape)
        t = torch.from_numpy(x.copy()).requires_grad_()
        yt = TF.interpolate(t, mode=m, **kw)
        if kw.get("antialias") and yt.shape[-1] == 1:
            continue    # PyTorch 2.13's antialiased kernel repeats row 0 when width_out is 1
        e = ember.from_numpy(x.copy()).requires_grad_()
        ye = EF.interpolate(e, mode=m, **kw)
        assert_same(ye, yt)
        assert ye.grad_fn.name() == yt.grad_fn.name()
        g = rng.standard_normal(tuple(yt.shape))
        assert_same(ember.autograd.grad(ye, e, ember.from_numpy(g))[0],
                    torch.autograd.grad(yt, t, torch.from_numpy(g))[0])
        n += 1
    assert n >= 4


@pytest.mark.parametrize("mode,kw", [
    ("bilinear", {"size": (5, 7), "align_corners": False}),
    ("bicubic", {"scale_factor": 1.5, "align_corners": True}),
    ("nearest", {"scale_factor": (2.0, 0.5)}), ("area", {"size": (3, 2)}),
    ("bilinear", {"size": (3, 4), "antialias": True, "align_corners": False}),
])
def test_interpolate_double(mode, kw):
    check_op(lambda x: EF.interpolate(x, mode=mode, **kw),
             lambda x: TF.interpolate(x, mode=mode, **kw), rand(2, 3, 4, 6))


def test_interpolate_float32_and_uint8():
    check_op(lambda x: EF.interpolate(x, scale_factor=2, mode="bilinear"),
             lambda x: TF.interpolate(x, scale_factor=2, mode="bilinear"),
             rand(1, 2, 3, 3, dtype=np.float32))
    img = RNG.integers(0, 255, (1, 1, 3, 4)).astype(np.uint8)
    both(lambda T: T.nn.functional.interpolate(T.from_numpy(img.copy()), scale_factor=2))


def test_nearest_scale_factor_quirks():
    """PyTorch's 2-D nearest forward (and every nearest backward) copies rows when the output
    size is the input's or twice it, whatever the scale factor; its 1-D and 3-D forwards use
    the scale factor."""
    for shape, sf in (((1, 1, 3), [2.2]), ((1, 1, 3, 2), [2.2, 1.0]), ((1, 1, 2), [1.25]),
                      ((1, 1, 3, 1, 2), [2.2, 1.0, 1.0])):
        x = rand(*shape)
        check_op(lambda t, sf=sf: EF.interpolate(t, scale_factor=sf),
                 lambda t, sf=sf: TF.interpolate(t, scale_factor=sf), x)


def test_upsample_aliases():
    x = rand(1, 2, 3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(lambda t: EF.upsample(t, scale_factor=2, mode="bilinear"),
                 lambda t: TF.upsample(t, scale_factor=2, mode="bilinear"), x)
    with pytest.warns(UserWarning, match="upsample_nearest` is deprecated"):
        EF.upsample_nearest(ember.from_numpy(x), scale_factor=2)


@pytest.mark.parametrize("args", [
    ((2, 3, 4, 5), {"size": (3, 3), "mode": "foo"}),
    ((2, 3, 4, 5), {"size": (3, 3), "scale_factor": 2}), ((2, 3, 4, 5), {}),
    ((2, 3, 4, 5), {"size": (3, 3), "align_corners": True}),
    ((2, 3, 4, 5), {"size": (3, 3, 3)}), ((2, 3, 4, 5), {"scale_factor": (2, 2, 2)}),
    ((2, 3, 4, 5), {"size": (3.0, 3)}), ((2, 3, 4, 5), {"size": 3, "recompute_scale_factor": True}),
    ((2, 3, 6), {"size": (3,), "mode": "bilinear"}), ((2, 3, 4, 5), {"size": 3, "mode": "linear"}),
    ((2, 3, 4, 5), {"size": 3, "mode": "nearest", "antialias": True}),
    ((2, 3, 4, 5), {"size": (0, 3)}), ((2, 3, 4, 5), {"scale_factor": 0.1}),
    ((2, 3, 0, 5), {"size": (3, 3), "mode": "bilinear"}), ((3, 2), {"size": (3,)}),
    ((2, 3, 4, 5), {"size": 3, "mode": "lanczos"}),
    ((2, 3, 0, 5), {"size": (3, 3), "mode": "area"}),
])
def test_interpolate_errors(args):
    shape, kw = args
    x = rand(*shape)
    raises_same(lambda: EF.interpolate(ember.from_numpy(x), **kw),
                lambda: TF.interpolate(torch.from_numpy(x), **kw))


def test_interpolate_integer_errors():
    for mode, shape in (("nearest", (1, 1, 2, 2)), ("bilinear", (1, 1, 2, 2)),
                        ("linear", (1, 1, 2)), ("area", (1, 1, 2, 2))):
        raises_same(lambda m=mode, s=shape: EF.interpolate(ember.ones(*s, dtype=ember.int64),
                                                           scale_factor=2, mode=m),
                    lambda m=mode, s=shape: TF.interpolate(torch.ones(*s, dtype=torch.int64),
                                                           scale_factor=2, mode=m))


# ---- pixel shuffles -------------------------------------------------------------------------

def test_pixel_shuffles_double():
    check_op(lambda x: EF.pixel_shuffle(x, 2), lambda x: TF.pixel_shuffle(x, 2),
             rand(2, 2, 8, 3, 3))
    check_op(lambda x: EF.pixel_unshuffle(x, 3), lambda x: TF.pixel_unshuffle(x, 3),
             rand(2, 6, 6))
    check_op(lambda x: EF.channel_shuffle(x, 3), lambda x: TF.channel_shuffle(x, 3),
             rand(2, 6, 2, 2))


@pytest.mark.parametrize("call", [
    ("pixel_shuffle", (2, 7, 3, 3), 2), ("pixel_shuffle", (8, 3), 2),
    ("pixel_shuffle", (2, 8, 3, 3), 0), ("pixel_unshuffle", (2, 2, 3, 4), 2),
    ("pixel_unshuffle", (2, 2, 4, 3), 2), ("pixel_unshuffle", (4, 4), 2),
    ("pixel_unshuffle", (2, 2, 4, 4), -1), ("channel_shuffle", (2, 5, 3), 2),
    ("channel_shuffle", (2, 4), 2), ("channel_shuffle", (2, 4, 3), 0),
])
def test_pixel_shuffle_errors(call):
    name, shape, r = call
    x = rand(*shape)
    raises_same(lambda: getattr(EF, name)(ember.from_numpy(x), r),
                lambda: getattr(TF, name)(torch.from_numpy(x), r))


# ---- grid_sample / affine_grid ---------------------------------------------------------------

@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_double(mode, padding, align):
    """Double backward against PyTorch's; forward AD (PyTorch has none) numerically."""
    x = rand(2, 2, 4, 5)
    grid = RNG.uniform(-1.3, 1.3, (2, 3, 2, 2))

    def f(F):
        return lambda a, g: F.grid_sample(a, g, mode, padding, align)
    check_op(f(EF), f(TF), x, grid, fwd=False)
    if mode != "nearest" and padding == "zeros":
        xs = [ember.from_numpy(a).requires_grad_() for a in (rand(1, 1, 3, 3),
                                                             RNG.uniform(-1, 1, (1, 2, 1, 2)))]
        assert ember.autograd.gradcheck(f(EF), xs, check_forward_ad=True, atol=1e-4,
                                        fast_mode=True)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_3d(mode):
    x, grid = rand(1, 2, 3, 4, 5), RNG.uniform(-1.2, 1.2, (1, 2, 3, 2, 3))
    check_op(lambda a, g: EF.grid_sample(a, g, mode, "reflection", False),
             lambda a, g: TF.grid_sample(a, g, mode, "reflection", False), x, grid, fwd=False)


def test_grid_sample_align_warning():
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        EF.grid_sample(ember.ones(1, 1, 2, 2), ember.zeros(1, 1, 1, 2))


@pytest.mark.parametrize("case", [
    ((1, 1, 3, 3), (1, 2, 2, 2), {"mode": "foo"}),
    ((1, 1, 3, 3), (1, 2, 2, 2), {"padding_mode": "foo"}),
    ((1, 1, 3, 3), (2, 2, 2, 2), {}), ((1, 1, 3, 3), (1, 2, 2, 3), {}),
    ((1, 1, 3, 3), (1, 2, 2), {}), ((1, 1, 3), (1, 2, 2), {}),
    ((1, 1, 0, 3), (1, 2, 2, 2), {}), ((1, 1, 2, 3, 3), (1, 2, 2, 2, 3), {"mode": "bicubic"}),
])
def test_grid_sample_errors(case):
    xs, gs, kw = case
    x, g = rand(*xs), rand(*gs)
    raises_same(lambda: EF.grid_sample(ember.from_numpy(x), ember.from_numpy(g),
                                       align_corners=False, **kw),
                lambda: TF.grid_sample(torch.from_numpy(x), torch.from_numpy(g),
                                       align_corners=False, **kw))
    raises_same(lambda: EF.grid_sample(ember.ones(1, 1, 2, 2),
                                       ember.ones(1, 1, 1, 2, dtype=ember.float64),
                                       align_corners=False),
                lambda: TF.grid_sample(torch.ones(1, 1, 2, 2),
                                       torch.ones(1, 1, 1, 2, dtype=torch.float64),
                                       align_corners=False))


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 3, 1, 5), (2, 1, 3, 4, 2)])
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(size, align):
    theta = rand(2, len(size) - 2, len(size) - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(lambda t: EF.affine_grid(t, size, align), lambda t: TF.affine_grid(t, size, align),
                 theta)
        check_op(lambda t: EF.affine_grid(t, size, align), lambda t: TF.affine_grid(t, size, align),
                 theta.astype(np.float32))


@pytest.mark.parametrize("case", [((2, 2, 3), (2, 3, 4)), ((2, 3, 3), (2, 1, 4, 4)),
                                  ((2, 3, 4), (2, 1, 4, 4, 4, 4)), ((2, 2, 3), (2, 1, 0, 4)),
                                  ((2, 3, 3), (2, 1, 3, 4, 4))])
def test_affine_grid_errors(case):
    ts, size = case
    th = rand(*ts)
    raises_same(lambda: EF.affine_grid(ember.from_numpy(th), size, False),
                lambda: TF.affine_grid(torch.from_numpy(th), size, False))
    raises_same(lambda: EF.affine_grid(ember.ones(2, 2, 3, dtype=ember.int64), (2, 1, 3, 3),
                                       False),
                lambda: TF.affine_grid(torch.ones(2, 2, 3, dtype=torch.int64), (2, 1, 3, 3),
                                       False))


# ---- native_channel_shuffle -------------------------------------------------------------------

def test_native_channel_shuffle():
    """channel_shuffle's values; no derivative in either mode, with PyTorch's errors."""
    a = RNG.standard_normal((2, 6, 3, 2))
    e, t = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
    assert_same(EF.native_channel_shuffle(e, 3), TF.native_channel_shuffle(t, 3))
    assert_same(EF.native_channel_shuffle(e, 3), TF.channel_shuffle(t, 3))
    re_ = EF.native_channel_shuffle(e.requires_grad_(), 2)
    rt = TF.native_channel_shuffle(t.requires_grad_(), 2)
    assert re_.grad_fn.name() == rt.grad_fn.name().replace("torch::", "ember::")
    raises_same(lambda: re_.sum().backward(), lambda: rt.sum().backward())

    def dual(lib, F, x):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            return F.native_channel_shuffle(fw.make_dual(x.detach(), x.detach()), 2)
    raises_same(lambda: dual(ember, EF, e), lambda: dual(torch, TF, t))
    for shape, g in [((2, 6), 2), ((2, 6, 1), 0), ((2, 6, 1), -1), ((2, 6, 1), 4)]:
        b = np.zeros(shape)
        raises_same(lambda: EF.native_channel_shuffle(ember.from_numpy(b), g),
                    lambda: TF.native_channel_shuffle(torch.from_numpy(b), g))
