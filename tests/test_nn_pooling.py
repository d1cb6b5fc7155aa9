"""Pooling against PyTorch: max / average / adaptive / fractional / power-average pooling and
max_unpool in 1, 2 and 3 dims.

PyTorch's OpInfo samples (values, indices, reverse and forward-mode gradients, float64 and
float32; the largest sample sets are thinned to a fixed stride), double backward through the
index scatter/gather and the average-pool adjoint, NaN and tie rules of the max pools, node
names (1-d pools run as 2-d ones, a global average is a mean), and error messages for misuse.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import numpy as np
import pytest
import torch
from torch.testing._internal.opinfo.core import SampleInput

import ember
from helpers import assert_same, check_op, raises_same
from opinfo import check_sample, opinfos, to_ember

E, TF = ember.nn.functional, torch.nn.functional
F32 = {"rtol": 1e-4, "atol": 1e-4}


@pytest.fixture(autouse=True)
def _torch_one_thread():
    """torch's intra-op threads spin while they wait: on a loaded 2-core machine its tiny pools
    then cost far more than the work. One thread keeps this file fast."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _samples(name, dtype, variant=""):
    info = next(o for o in opinfos("nn.functional." + name) if o.variant_test_name == variant)
    return info, list(info.sample_inputs("cpu", dtype, requires_grad=True))


def _run(info, samples, dtype, fe=None, values=True):
    tol = {} if dtype == torch.float64 else F32
    for k, s in enumerate(samples):
        try:
            check_sample(info, s, fe=fe, values=values, **tol)
        except AssertionError as ex:
            raise AssertionError(f"{info.name} sample {k}: {s}\n{ex}") from None
    return len(samples)


# Every OpInfo entry of these ops; (name, stride): the max pools have 576-1440 samples that
# cycle through kernel/stride/padding/dilation/ceil_mode/return_indices, so a stride coprime
# with those cycles keeps every kind while running a fraction of them.
OPINFO = [
    ("max_pool1d", 29),
    ("max_pool2d", 37),
    ("max_pool3d", 23),
    ("avg_pool1d", 1),
    ("avg_pool2d", 1),
    ("avg_pool3d", 1),
    ("adaptive_avg_pool1d", 1),
    ("adaptive_avg_pool2d", 1),
    ("adaptive_avg_pool3d", 1),
    ("adaptive_max_pool1d", 1),
    ("adaptive_max_pool2d", 1),
    ("adaptive_max_pool3d", 1),
]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize(("name", "step"), OPINFO)
def test_opinfo(name, step, dtype):
    info, samples = _samples(name, dtype)
    assert _run(info, samples[::step], dtype) >= 5


def _unique_indices(s) -> bool:
    i = s.args[0]
    return i.unique().numel() == i.numel()


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_opinfo_max_unpool(d, dtype):
    """All 'grad' samples (unique indices) in full; the others (indices from overlapping pools,
    thinned) without forward mode: with a repeated index PyTorch's CPU kernel keeps whichever
    of the competing writes its threads make last, which tangents (unlike values) expose."""
    name = f"max_unpool{d}d"
    info, samples = _samples(name, dtype, "grad")
    _run(info, samples, dtype)
    info, samples = _samples(name, dtype)
    fwd_ok = info.supports_forward_ad
    try:
        for s in samples[::7]:
            info.supports_forward_ad = fwd_ok and _unique_indices(s)
            _run(info, [s], dtype)
    finally:
        info.supports_forward_ad = fwd_ok


def _with_samples(s, nd, dtype, rs):
    kw = dict(s.kwargs)
    if "_random_samples" not in kw:
        n = s.input.shape[0] if s.input.ndim == nd + 2 else 1
        kw["_random_samples"] = torch.from_numpy(rs.rand(n, s.input.shape[-nd - 1], nd)).to(dtype)
    return SampleInput(s.input, args=s.args, kwargs=kw)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("d", [2, 3])
def test_opinfo_fractional(d, dtype):
    """Every sample twice: with the same ``_random_samples`` given to both libraries (values,
    indices, gradients, tangents), and as is (each library draws its own: shapes and dtypes)."""
    name = f"fractional_max_pool{d}d"
    info, samples = _samples(name, dtype)
    fe = getattr(E, name)
    rs = np.random.RandomState(0)
    _run(info, [_with_samples(s, d, dtype, rs) for s in samples], dtype, fe=fe)
    _run(info, samples, dtype, fe=fe, values=False)


def data(shape, seed=0, dtype="float64"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ---- double backward --------------------------------------------------------------------------

DOUBLE = [
    ("max_pool2d", (2, 3, 7, 6), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", (3, 6, 6), dict(kernel_size=(2, 3), stride=1, dilation=(2, 1))),
    ("max_pool1d", (2, 3, 9), dict(kernel_size=3, stride=2, ceil_mode=True)),
    ("max_pool3d", (1, 2, 5, 4, 5), dict(kernel_size=2, stride=(1, 2, 2), padding=1)),
    (
        "avg_pool2d",
        (2, 2, 7, 6),
        dict(kernel_size=3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
    ),
    ("avg_pool2d", (2, 2, 6, 6), dict(kernel_size=2, divisor_override=3)),
    ("avg_pool1d", (2, 9), dict(kernel_size=4, stride=3, padding=2)),
    ("avg_pool3d", (1, 2, 5, 5, 4), dict(kernel_size=(2, 3, 2), stride=2, padding=1)),
    ("adaptive_avg_pool2d", (2, 3, 7, 5), dict(output_size=(3, 4))),
    ("adaptive_avg_pool1d", (2, 3, 7), dict(output_size=4)),
    ("adaptive_avg_pool3d", (2, 5, 4, 6), dict(output_size=(2, 3, 4))),
    ("adaptive_max_pool2d", (2, 3, 7, 5), dict(output_size=(3, 2))),
    ("adaptive_max_pool1d", (3, 7), dict(output_size=3)),
    ("adaptive_max_pool3d", (1, 2, 5, 4, 6), dict(output_size=(2, 2, 3))),
]


@pytest.mark.parametrize(
    ("name", "shape", "kw"), DOUBLE, ids=[f"{d[0]}-{i}" for i, d in enumerate(DOUBLE)]
)
def test_double_backward(name, shape, kw):
    check_op(
        lambda x: getattr(E, name)(x, **kw), lambda x: getattr(TF, name)(x, **kw), data(shape, 1)
    )


@pytest.mark.parametrize("name", ["max_pool2d", "adaptive_max_pool2d", "fractional_max_pool2d"])
def test_double_backward_with_indices(name):
    x = data((2, 2, 8, 8), 2)
    u = np.random.RandomState(3).rand(2, 2, 2)
    kw = {
        "max_pool2d": dict(kernel_size=3, stride=2, return_indices=True),
        "adaptive_max_pool2d": dict(output_size=3, return_indices=True),
        "fractional_max_pool2d": dict(kernel_size=3, output_size=4, return_indices=True),
    }[name]
    check_op(
        lambda a, s: getattr(E, name)(a, **kw, **_frac(name, s)),
        lambda a, s: getattr(TF, name)(a, **kw, **_frac(name, s)),
        x,
        u,
        argnums=(0,),
    )


def _frac(name, s):
    return {"_random_samples": s} if name.startswith("fractional") else {}


def test_double_backward_unpool():
    x = data((2, 3, 8, 8), 4)
    for L, F in ((ember, E), (torch, TF)):
        _, i = F.max_pool2d(L.from_numpy(x), 2, return_indices=True)
        if L is torch:
            it = i
        else:
            ie = i
    v = data((2, 3, 4, 4), 5)
    check_op(lambda a: E.max_unpool2d(a, ie, 2), lambda a: TF.max_unpool2d(a, it, 2), v)


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize(
    ("p", "kw"),
    [
        (2, {}),
        (1, dict(stride=1)),
        (3, dict(ceil_mode=True)),
        (1.5, dict(stride=2)),
        (float("inf"), {}),
        (-float("inf"), dict(stride=1)),
    ],
)
def test_lp_pool(d, p, kw):
    """lp_pool (not in op_db): composed as PyTorch composes it, so node, values and derivatives
    match; positive inputs for fractional powers."""
    shape = (2, 3) + (7, 6, 5)[:d]
    x = np.abs(data(shape, 6)) + 0.1
    fn = f"lp_pool{d}d"
    check_op(
        lambda a: getattr(E, fn)(a, p, 3 if d == 1 else (2, 3, 2)[:d], **kw),
        lambda a: getattr(TF, fn)(a, p, 3 if d == 1 else (2, 3, 2)[:d], **kw),
        x,
        double=not math.isinf(p),
    )


def test_lp_pool_signs_and_zeros():
    x = data((1, 2, 6, 6), 7)
    x[0, 0, :2, :2] = 0.0
    check_op(lambda a: E.lp_pool2d(a, 2, 2), lambda a: TF.lp_pool2d(a, 2, 2), x)
    check_op(lambda a: E.lp_pool2d(a, 3, 2), lambda a: TF.lp_pool2d(a, 3, 2), x, double=False)


# ---- max-pool rules ---------------------------------------------------------------------------


def test_nan_and_ties():
    """A NaN wins its window (the last NaN's index); among equal maxima the first wins."""
    nan = float("nan")
    x = np.array(
        [[[[nan, 1, nan, 2, 3, 3], [3, nan, 0, 0, 3, 1], [1, 1, 1, 1, 5, 5], [1, nan, 7, 7, 5, 5]]]]
    )
    for f in (
        lambda F, t: F.max_pool2d(t, 2, return_indices=True),
        lambda F, t: F.max_pool2d(t, 3, 1, 1, return_indices=True),
        lambda F, t: F.max_pool1d(t[0], 2, 1, return_indices=True),
        lambda F, t: F.adaptive_max_pool2d(t, (3, 4), return_indices=True),
        lambda F, t: F.fractional_max_pool2d(
            t,
            2,
            output_size=(3, 4),
            return_indices=True,
            _random_samples=t.new_full((1, 1, 2), 0.3),
        ),
    ):
        assert_same(list(f(E, ember.from_numpy(x))), list(f(TF, torch.from_numpy(x))))


def test_overlapping_windows_accumulate():
    x = data((2, 2, 9, 9), 8)
    check_op(lambda a: E.max_pool2d(a, 3, 1), lambda a: TF.max_pool2d(a, 3, 1), x)
    check_op(lambda a: E.adaptive_max_pool2d(a, 5), lambda a: TF.adaptive_max_pool2d(a, 5), x)
    check_op(lambda a: E.avg_pool2d(a, 4, 1), lambda a: TF.avg_pool2d(a, 4, 1), x)


def test_large_windows():
    x = data((2, 3, 12, 17), 9)
    check_op(
        lambda a: E.adaptive_max_pool2d(a, (1, 2)),
        lambda a: TF.adaptive_max_pool2d(a, (1, 2)),
        x,
        double=False,
    )
    check_op(
        lambda a: E.adaptive_max_pool2d(a, 1),
        lambda a: TF.adaptive_max_pool2d(a, 1),
        x,
        double=False,
    )


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("max_pool1d", (2,)),
        ("max_pool2d", (2,)),
        ("max_pool3d", (2,)),
        ("avg_pool1d", (2,)),
        ("avg_pool2d", (2,)),
        ("avg_pool3d", (2,)),
        ("adaptive_avg_pool1d", (3,)),
        ("adaptive_avg_pool2d", (3,)),
        ("adaptive_avg_pool3d", (3,)),
        ("adaptive_avg_pool1d", (1,)),
        ("adaptive_avg_pool2d", (1,)),
        ("adaptive_avg_pool3d", (1,)),
        ("adaptive_max_pool1d", (3,)),
        ("adaptive_max_pool2d", (3,)),
        ("adaptive_max_pool3d", (3,)),
        ("lp_pool1d", (2, 2)),
        ("lp_pool2d", (2, 2)),
        ("lp_pool3d", (2, 2)),
    ],
)
@pytest.mark.parametrize("batched", [True, False])
def test_graph_names(name, args, batched):
    """The chain of nodes from the output to the leaf, as PyTorch builds it (unsqueeze /
    2-d pool / squeeze for 1-d pools; mean for a global average pool)."""
    d = int(name[-2])
    shape = ((2,) if batched else ()) + (3,) + (6,) * d
    out = []
    for L, F in ((ember, E), (torch, TF)):
        x = L.from_numpy(data(shape, 1)).requires_grad_()
        y = getattr(F, name)(x, *args)
        fn, chain = y.grad_fn, []
        while fn is not None:
            chain.append(fn.name().replace("torch::", "ember::"))
            fn = fn.next_functions[0][0] if fn.next_functions else None
        out.append((chain, tuple(y.shape)))
    assert out[0] == out[1]


def test_saved_input_version_check():
    """Like PyTorch, the pools keep their input, so changing it before backward is an error."""
    for F in (E, TF):
        lib = ember if F is E else torch
        x = lib.ones(1, 1, 4, 4, requires_grad=True)
        for f in (
            lambda t: F.max_pool2d(t, 2),
            lambda t: F.avg_pool2d(t, 2),
            lambda t: F.adaptive_max_pool2d(t, 3),
        ):
            h = x * 1
            y = f(h)
            h.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()


def test_max_pool_integer_and_half():
    x = np.random.default_rng(0).integers(-50, 50, (2, 3, 6, 6))
    for dt in ("int64", "int32", "uint8", "float16", "bfloat16"):
        res = []
        for L, F in ((ember, E), (torch, TF)):
            t = L.from_numpy(np.abs(x) if dt == "uint8" else x).to(getattr(L, dt))
            res.append(list(F.max_pool2d(t, 3, 2, 1, return_indices=True)))
        assert_same(res[0], res[1])


def test_avg_pool_integer_truncates():
    x = np.random.default_rng(1).integers(-50, 50, (2, 3, 7, 7))
    for kw in (dict(), dict(divisor_override=-3), dict(padding=1, count_include_pad=False)):
        assert_same(
            E.avg_pool2d(ember.from_numpy(x), 3, 2, **kw),
            TF.avg_pool2d(torch.from_numpy(x), 3, 2, **kw),
        )


def test_fractional_random_draw():
    """Without ``_random_samples`` ember draws from its own generator (seeded: reproducible);
    indices always point at the values returned."""
    x = ember.from_numpy(data((2, 3, 9, 9), 1))
    ember.manual_seed(0)
    a, ia = E.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True)
    ember.manual_seed(0)
    b, ib = E.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True)
    assert np.array_equal(a.numpy(), b.numpy()) and np.array_equal(ia.numpy(), ib.numpy())
    picked = np.take_along_axis(x.numpy().reshape(2, 3, -1), ia.numpy().reshape(2, 3, -1), 2)
    assert np.array_equal(picked.reshape(a.shape), a.numpy())


def test_meta_device():
    x = ember.empty(2, 3, 8, 8, device="meta")
    for f, shape in (
        (lambda t: E.max_pool2d(t, 2), (2, 3, 4, 4)),
        (lambda t: E.avg_pool2d(t, 3, 2, 1), (2, 3, 4, 4)),
        (lambda t: E.adaptive_avg_pool2d(t, 3), (2, 3, 3, 3)),
        (lambda t: E.adaptive_max_pool2d(t, 3), (2, 3, 3, 3)),
    ):
        y = f(x)
        assert y.is_meta and tuple(y.shape) == shape


# ---- errors -----------------------------------------------------------------------------------

POOL_OPS = [
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]


def _error_cases():
    for name in POOL_OPS:
        for info in opinfos("nn.functional." + name):
            if info.error_inputs_func is None:
                continue
            for k, ei in enumerate(info.error_inputs("cpu")):
                yield pytest.param(info, ei, id=f"{name}-{info.variant_test_name}-{k}")


@pytest.mark.parametrize(("info", "ei"), list(_error_cases()))
def test_opinfo_error_inputs(info, ei):
    s = ei.sample_input
    leaves: dict = {}
    fe = getattr(E, info.name.split(".")[-1])
    raises_same(
        lambda: fe(
            to_ember(s.input, leaves), *to_ember(s.args, leaves), **to_ember(s.kwargs, leaves)
        ),
        lambda: info.op(s.input, *s.args, **s.kwargs),
    )


def _r(L):
    def r(*s, dt=None):
        a = np.random.RandomState(0).randn(*s)
        return L.from_numpy(a).to(dt or L.float64)

    def rg(*s, dt=None):
        return r(*s, dt=dt).requires_grad_()

    return r, rg


POOL_ERRORS = {
    "mp2 k0": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), 0),
    "mp2 k3t": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), (1, 1, 1)),
    "mp2 s3t": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), 2, (1, 1, 1)),
    "mp2 p3t": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), 2, 1, (1, 1, 1)),
    "mp2 d3t": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), 2, 1, 0, (1, 1, 1)),
    "mp2 s0": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), 2, 0),
    "mp2 s-1": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), 2, -1),
    "mp2 d0": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), 2, dilation=0),
    "mp2 k-1": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), -1),
    "mp2 p big": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), 2, padding=2),
    "mp2 2d in": lambda T, F, r, rg: F.max_pool2d(r(4, 4), 2),
    "mp2 5d in": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 1, 4, 4), 2),
    "mp2 0 ch": lambda T, F, r, rg: F.max_pool2d(r(1, 0, 4, 4), 2),
    "mp2 too small": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 1, 4), 2),
    "mp2 bool": lambda T, F, r, rg: F.max_pool2d(T.ones(1, 1, 4, 4, dtype=T.bool), 2),
    "mp2 cplx": lambda T, F, r, rg: F.max_pool2d(T.ones(1, 1, 4, 4, dtype=T.complex64), 2),
    "mp1 k0": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 0),
    "mp1 k0 rg": lambda T, F, r, rg: F.max_pool1d(rg(1, 1, 4), 0),
    "mp1 k0 idx": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 0, return_indices=True),
    "mp1 s0 rg": lambda T, F, r, rg: F.max_pool1d(rg(1, 1, 4), 2, 0),
    "mp1 p big": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 2, padding=2),
    "mp1 p big rg": lambda T, F, r, rg: F.max_pool1d(rg(1, 1, 4), 2, padding=2),
    "mp1 p -1": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 2, padding=-1),
    "mp1 too small": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 1), 2),
    "mp1 too small rg": lambda T, F, r, rg: F.max_pool1d(rg(1, 1, 1), 2),
    "mp1 1d": lambda T, F, r, rg: F.max_pool1d(r(4), 2),
    "mp1 1d rg": lambda T, F, r, rg: F.max_pool1d(rg(4), 2),
    "mp1 4d rg": lambda T, F, r, rg: F.max_pool1d(rg(1, 1, 1, 4), 2),
    "mp1 4d": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 1, 4), 2),
    "mp1 k2t": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), (2, 2)),
    "mp1 k2t rg": lambda T, F, r, rg: F.max_pool1d(rg(1, 1, 4), (2, 2)),
    "mp1 long": lambda T, F, r, rg: F.max_pool1d(T.ones(1, 1, 4, dtype=T.long), 2),
    "mp1 bool": lambda T, F, r, rg: F.max_pool1d(T.ones(1, 1, 4, dtype=T.bool), 2),
    "mp3 k0": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 4, 4, 4), 0),
    "mp3 s0": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 4, 4, 4), 2, 0),
    "mp3 d0": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 4, 4, 4), 2, dilation=0),
    "mp3 3d": lambda T, F, r, rg: F.max_pool3d(r(1, 4, 4), 2),
    "mp3 too small": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 1, 4, 4), 2),
    "mp3 k2t": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 4, 4, 4), (2, 2)),
    "ap2 k0": lambda T, F, r, rg: F.avg_pool2d(r(1, 1, 4, 4), 0),
    "ap2 s0": lambda T, F, r, rg: F.avg_pool2d(r(1, 1, 4, 4), 2, 0),
    "ap2 k3t": lambda T, F, r, rg: F.avg_pool2d(r(1, 1, 4, 4), (1, 1, 1)),
    "ap2 2d": lambda T, F, r, rg: F.avg_pool2d(r(4, 4), 2),
    "ap2 0ch": lambda T, F, r, rg: F.avg_pool2d(r(1, 0, 4, 4), 2),
    "ap2 too small": lambda T, F, r, rg: F.avg_pool2d(r(1, 1, 1, 4), 2),
    "ap2 bool": lambda T, F, r, rg: F.avg_pool2d(T.ones(1, 1, 4, 4, dtype=T.bool), 2),
    "ap2 int8": lambda T, F, r, rg: F.avg_pool2d(T.ones(1, 1, 4, 4, dtype=T.int8) * 3, 2),
    "ap2 cplx": lambda T, F, r, rg: F.avg_pool2d(T.ones(1, 1, 4, 4, dtype=T.complex64), 2),
    "ap2 div0": lambda T, F, r, rg: F.avg_pool2d(r(1, 1, 4, 4), 2, divisor_override=0),
    "ap1 k0": lambda T, F, r, rg: F.avg_pool1d(r(1, 1, 4), 0),
    "ap1 s0": lambda T, F, r, rg: F.avg_pool1d(r(1, 1, 4), 2, 0),
    "ap1 1d": lambda T, F, r, rg: F.avg_pool1d(r(4), 2),
    "ap1 4d": lambda T, F, r, rg: F.avg_pool1d(r(1, 1, 1, 4), 2),
    "ap1 too small": lambda T, F, r, rg: F.avg_pool1d(r(1, 1, 1), 2),
    "ap1 p big": lambda T, F, r, rg: F.avg_pool1d(r(1, 1, 4), 2, padding=2),
    "ap1 k2t": lambda T, F, r, rg: F.avg_pool1d(r(1, 1, 4), (2, 2)),
    "ap3 k0": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 4, 4, 4), 0),
    "ap3 s0": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 4, 4, 4), 2, 0),
    "ap3 3d": lambda T, F, r, rg: F.avg_pool3d(r(1, 4, 4), 2),
    "ap3 too small": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 1, 4, 4), 2),
    "ap3 div0": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 4, 4, 4), 2, divisor_override=0),
    "aap2 long": lambda T, F, r, rg: F.adaptive_avg_pool2d(T.ones(1, 1, 4, 4, dtype=T.long), 2),
    "aap2 0 spatial": lambda T, F, r, rg: F.adaptive_avg_pool2d(r(1, 1, 0, 4), 2),
    "aap2 5d": lambda T, F, r, rg: F.adaptive_avg_pool2d(r(1, 1, 1, 4, 4), 2),
    "aap2 out 3t": lambda T, F, r, rg: F.adaptive_avg_pool2d(r(1, 1, 4, 4), (2, 2, 2)),
    "aap1 2t": lambda T, F, r, rg: F.adaptive_avg_pool1d(r(1, 1, 4), (2, 2)),
    "aap1 1d": lambda T, F, r, rg: F.adaptive_avg_pool1d(r(4), 2),
    "aap1 4d": lambda T, F, r, rg: F.adaptive_avg_pool1d(r(1, 1, 1, 4), 2),
    "aap3 6d": lambda T, F, r, rg: F.adaptive_avg_pool3d(r(1, 1, 1, 4, 4, 4), 2),
    "aap3 long": lambda T, F, r, rg: F.adaptive_avg_pool3d(T.ones(1, 1, 4, 4, 4, dtype=T.long), 2),
    "amp2 long": lambda T, F, r, rg: F.adaptive_max_pool2d(T.ones(1, 1, 4, 4, dtype=T.long), 2),
    "amp2 0ch": lambda T, F, r, rg: F.adaptive_max_pool2d(r(1, 0, 4, 4), 2),
    "amp2 0sp": lambda T, F, r, rg: F.adaptive_max_pool2d(r(1, 1, 0, 4), 2),
    "amp2 5d": lambda T, F, r, rg: F.adaptive_max_pool2d(r(1, 1, 1, 4, 4), 2),
    "amp1 1d": lambda T, F, r, rg: F.adaptive_max_pool1d(r(4), 2),
    "amp1 4d": lambda T, F, r, rg: F.adaptive_max_pool1d(r(1, 1, 1, 4), 2),
    "amp1 2t": lambda T, F, r, rg: F.adaptive_max_pool1d(r(1, 1, 4), (2, 2)),
    "amp3 long": lambda T, F, r, rg: F.adaptive_max_pool3d(T.ones(1, 1, 4, 4, 4, dtype=T.long), 2),
    "amp3 6d": lambda T, F, r, rg: F.adaptive_max_pool3d(r(1, 1, 1, 4, 4, 4), 2),
    "mu2 bad idx dtype": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.int32), 2
    ),
    "mu2 idx out of range": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 2, 2), T.full((1, 1, 2, 2), 16, dtype=T.long), 2
    ),
    "mu2 idx neg": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 2, 2), T.full((1, 1, 2, 2), -1, dtype=T.long), 2
    ),
    "mu2 2d": lambda T, F, r, rg: F.max_unpool2d(r(2, 2), T.zeros(2, 2, dtype=T.long), 2),
    "mu2 out size bad": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.long), 2, output_size=(9, 9)
    ),
    "mu2 out size len": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.long), 2, output_size=(9, 9, 9)
    ),
    "mu2 long": lambda T, F, r, rg: F.max_unpool2d(
        T.ones(1, 1, 2, 2, dtype=T.long), T.zeros(1, 1, 2, 2, dtype=T.long), 2
    ),
    "mu1 bad idx": lambda T, F, r, rg: F.max_unpool1d(
        r(1, 1, 2), T.full((1, 1, 2), 9, dtype=T.long), 2
    ),
    "mu3 bad idx": lambda T, F, r, rg: F.max_unpool3d(
        r(1, 1, 2, 2, 2), T.full((1, 1, 2, 2, 2), 99, dtype=T.long), 2
    ),
    "mu3 3d": lambda T, F, r, rg: F.max_unpool3d(r(1, 2, 2), T.zeros(1, 2, 2, dtype=T.long), 2),
    "mu3 stride0": lambda T, F, r, rg: F.max_unpool3d(
        r(1, 1, 2, 2, 2), T.zeros(1, 1, 2, 2, 2, dtype=T.long), 2, 0
    ),
    "mu2 neg out": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.long), 1, padding=2
    ),
    "mp1 s2t": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 2, (1, 1)),
    "mp1 p2t": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 2, 1, (1, 1)),
    "mp1 d2t": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 2, 1, 0, (1, 1)),
    "mp1 k0 s0": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 0, 0),
    "mp1 s0 p-1": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 2, 0, -1),
    "mp1 p-1 d0": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 2, 1, -1, 0),
    "mp1 pbig d0": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 2, 1, 3, 0),
    "mp1 d0 small": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 1), 2, 1, 0, 0),
    "mp1 1d k0": lambda T, F, r, rg: F.max_pool1d(r(4), 0),
    "mp1 k2t 1d": lambda T, F, r, rg: F.max_pool1d(r(4), (2, 2)),
    "mp1 small dil": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 3), 2, 1, 0, 3),
    "mp1i 1d": lambda T, F, r, rg: F.max_pool1d(r(4), 2, return_indices=True),
    "mp1i 4d": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 1, 4), 2, return_indices=True),
    "mp1i 0ch": lambda T, F, r, rg: F.max_pool1d(r(1, 0, 4), 2, return_indices=True),
    "mp1i k0": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 0, return_indices=True),
    "mp1i kneg": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), -1, return_indices=True),
    "mp1i s-1": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 2, -1, return_indices=True),
    "mp1i d0": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), 2, 1, 0, 0, return_indices=True),
    "mp1i small": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 1), 2, return_indices=True),
    "mp1i k2t": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 4), (2, 2), return_indices=True),
    "mp2 pad k-half dil": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 9, 9), 2, 1, 2, 3),
    "mp2 k-1 s0": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), -1, 0),
    "mp2 s-1 d0": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), 2, -1, 0, 0),
    "mp2 s-1 in2d": lambda T, F, r, rg: F.max_pool2d(r(4, 4), 2, -1),
    "mp2 p-1 in2d": lambda T, F, r, rg: F.max_pool2d(r(4, 4), 2, 1, -1),
    "mp2 d0 0ch": lambda T, F, r, rg: F.max_pool2d(r(1, 0, 4, 4), 2, 1, 0, 0),
    "mp2 0ch small": lambda T, F, r, rg: F.max_pool2d(r(1, 0, 1, 1), 2),
    "mp2 3d 0c": lambda T, F, r, rg: F.max_pool2d(r(0, 4, 4), 2),
    "mp2 k (2,0)": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 4, 4), (2, 0), 1),
    "mp3 k-1": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 4, 4, 4), -1, 1),
    "mp3 s-1": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 4, 4, 4), 2, -1),
    "mp3 0ch": lambda T, F, r, rg: F.max_pool3d(r(1, 0, 4, 4, 4), 2),
    "mp3 pad dil": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 9, 9, 9), 2, 1, 2, 3),
    "mp3 s2t": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 4, 4, 4), 2, (1, 1)),
    "mp3 p2t": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 4, 4, 4), 2, 1, (1, 1)),
    "mp3 d2t": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 4, 4, 4), 2, 1, 0, (1, 1)),
    "ap2 s3t": lambda T, F, r, rg: F.avg_pool2d(r(1, 1, 4, 4), 2, (1, 1, 1)),
    "ap2 p3t": lambda T, F, r, rg: F.avg_pool2d(r(1, 1, 4, 4), 2, 1, (1, 1, 1)),
    "ap2 k-1": lambda T, F, r, rg: F.avg_pool2d(r(1, 1, 4, 4), -1, 1),
    "ap2 s-1": lambda T, F, r, rg: F.avg_pool2d(r(1, 1, 4, 4), 2, -1),
    "ap2 5d": lambda T, F, r, rg: F.avg_pool2d(r(1, 1, 1, 4, 4), 2),
    "ap2 1d": lambda T, F, r, rg: F.avg_pool2d(r(4), 2),
    "ap2 0ch 3d": lambda T, F, r, rg: F.avg_pool2d(r(0, 4, 4), 2),
    "ap2 div0 + 0ch": lambda T, F, r, rg: F.avg_pool2d(r(1, 0, 4, 4), 2, divisor_override=0),
    "ap2 div0 + small": lambda T, F, r, rg: F.avg_pool2d(r(1, 1, 1, 1), 2, divisor_override=0),
    "ap2 pad big dil": lambda T, F, r, rg: F.avg_pool2d(r(1, 1, 4, 4), 2, 1, 2),
    "ap1 s2t": lambda T, F, r, rg: F.avg_pool1d(r(1, 1, 4), 2, (1, 1)),
    "ap1 p2t": lambda T, F, r, rg: F.avg_pool1d(r(1, 1, 4), 2, 1, (1, 1)),
    "ap1 k-1": lambda T, F, r, rg: F.avg_pool1d(r(1, 1, 4), -1, 1),
    "ap1 s-1": lambda T, F, r, rg: F.avg_pool1d(r(1, 1, 4), 2, -1),
    "ap1 0ch": lambda T, F, r, rg: F.avg_pool1d(r(1, 0, 4), 2),
    "ap1 2d 0": lambda T, F, r, rg: F.avg_pool1d(r(0, 4), 2),
    "ap3 k-1": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 4, 4, 4), -1, 1),
    "ap3 s-1": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 4, 4, 4), 2, -1),
    "ap3 0ch": lambda T, F, r, rg: F.avg_pool3d(r(1, 0, 4, 4, 4), 2),
    "ap3 k3t": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 4, 4, 4), (2, 2)),
    "ap3 s2t": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 4, 4, 4), 2, (1, 1)),
    "ap3 small2": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 2, 4, 4), 3, 1, 1),
    "ap3 small3": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 1, 4, 4), 3, 1, 1),
    "ap3 6d": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 1, 4, 4, 4), 2),
    "mp3 0 dim3": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 4, 0, 4), 2),
    "mp3 0 dim4": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 4, 4, 0), 2),
    "mp3 unb 0 dim": lambda T, F, r, rg: F.max_pool3d(r(1, 4, 0, 4), 2),
    "ap3 0 dim4": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 4, 4, 0), 2),
    "ap3 p3": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 4, 4, 4), 2, 1, (1, 1)),
    "ap3 pbig": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 9, 9, 9), 2, 1, 2),
    "mp3 small out": lambda T, F, r, rg: F.max_pool3d(r(1, 1, 4, 4, 1), 2),
    "aap2 out -1": lambda T, F, r, rg: F.adaptive_avg_pool2d(r(1, 1, 4, 4), -1),
    "aap2 out (None,2) 2d": lambda T, F, r, rg: F.adaptive_avg_pool2d(r(4, 4), (None, 2)),
    "aap2 1d": lambda T, F, r, rg: F.adaptive_avg_pool2d(r(4), 2),
    "aap2 2d": lambda T, F, r, rg: F.adaptive_avg_pool2d(r(4, 4), 2),
    "aap3 0sp": lambda T, F, r, rg: F.adaptive_avg_pool3d(r(1, 1, 4, 0, 4), 2),
    "aap3 2t": lambda T, F, r, rg: F.adaptive_avg_pool3d(r(1, 1, 4, 4, 4), (2, 2)),
    "aap3 3d": lambda T, F, r, rg: F.adaptive_avg_pool3d(r(1, 4, 4), 2),
    "aap1 -1": lambda T, F, r, rg: F.adaptive_avg_pool1d(r(1, 1, 4), -1),
    "aap1 0sp": lambda T, F, r, rg: F.adaptive_avg_pool1d(r(1, 1, 0), 2),
    "amp2 out -1": lambda T, F, r, rg: F.adaptive_max_pool2d(r(1, 1, 4, 4), -1),
    "amp2 3t": lambda T, F, r, rg: F.adaptive_max_pool2d(r(1, 1, 4, 4), (2, 2, 2)),
    "amp2 2d": lambda T, F, r, rg: F.adaptive_max_pool2d(r(4, 4), 2),
    "amp3 0sp": lambda T, F, r, rg: F.adaptive_max_pool3d(r(1, 1, 4, 0, 4), 2),
    "amp3 3d": lambda T, F, r, rg: F.adaptive_max_pool3d(r(1, 4, 4), 2),
    "amp1 -1": lambda T, F, r, rg: F.adaptive_max_pool1d(r(1, 1, 4), -1),
    "amp1 0sp": lambda T, F, r, rg: F.adaptive_max_pool1d(r(1, 1, 0), 2),
    "fmp2 no out": lambda T, F, r, rg: F.fractional_max_pool2d(r(1, 1, 8, 8), 2),
    "fmp2 ratio 3": lambda T, F, r, rg: F.fractional_max_pool2d(
        r(1, 1, 8, 8), 2, output_ratio=(0.5, 0.5, 0.5)
    ),
    "fmp2 ratio 1.5": lambda T, F, r, rg: F.fractional_max_pool2d(
        r(1, 1, 8, 8), 2, output_ratio=1.5
    ),
    "fmp2 out too big": lambda T, F, r, rg: F.fractional_max_pool2d(
        r(1, 1, 8, 8), 2, output_size=8
    ),
    "fmp2 out too big2": lambda T, F, r, rg: F.fractional_max_pool2d(
        r(1, 1, 8, 8), 3, output_size=7
    ),
    "fmp2 2d": lambda T, F, r, rg: F.fractional_max_pool2d(r(8, 8), 2, output_size=4),
    "fmp2 5d": lambda T, F, r, rg: F.fractional_max_pool2d(r(1, 1, 1, 8, 8), 2, output_size=4),
    "fmp2 0ch": lambda T, F, r, rg: F.fractional_max_pool2d(r(1, 0, 8, 8), 2, output_size=4),
    "fmp2 samples shape": lambda T, F, r, rg: F.fractional_max_pool2d(
        r(1, 2, 8, 8), 2, output_size=4, _random_samples=T.rand(1, 1, 2, dtype=T.float64)
    ),
    "fmp2 samples shape2": lambda T, F, r, rg: F.fractional_max_pool2d(
        r(2, 2, 8, 8), 2, output_size=4, _random_samples=T.rand(1, 2, 2, dtype=T.float64)
    ),
    "fmp2 samples dtype": lambda T, F, r, rg: F.fractional_max_pool2d(
        r(1, 2, 8, 8), 2, output_size=4, _random_samples=T.rand(1, 2, 2)
    ),
    "fmp2 samples 3": lambda T, F, r, rg: F.fractional_max_pool2d(
        r(1, 2, 8, 8), 2, output_size=4, _random_samples=T.rand(1, 2, 3, dtype=T.float64)
    ),
    "fmp2 samples 2d": lambda T, F, r, rg: F.fractional_max_pool2d(
        r(1, 2, 8, 8), 2, output_size=4, _random_samples=T.rand(2, 2, dtype=T.float64)
    ),
    "fmp2 k3t": lambda T, F, r, rg: F.fractional_max_pool2d(
        r(1, 1, 8, 8), (2, 2, 2), output_size=4
    ),
    "fmp2 out3t": lambda T, F, r, rg: F.fractional_max_pool2d(
        r(1, 1, 8, 8), 2, output_size=(4, 4, 4)
    ),
    "fmp3 no out": lambda T, F, r, rg: F.fractional_max_pool3d(r(1, 1, 8, 8, 8), 2),
    "fmp3 out too big": lambda T, F, r, rg: F.fractional_max_pool3d(
        r(1, 1, 8, 8, 8), 2, output_size=8
    ),
    "fmp3 3d": lambda T, F, r, rg: F.fractional_max_pool3d(r(1, 8, 8), 2, output_size=4),
    "fmp3 0ch": lambda T, F, r, rg: F.fractional_max_pool3d(r(1, 0, 8, 8, 8), 2, output_size=4),
    "fmp3 samples shape": lambda T, F, r, rg: F.fractional_max_pool3d(
        r(1, 2, 8, 8, 8), 2, output_size=4, _random_samples=T.rand(1, 1, 3, dtype=T.float64)
    ),
    "mu2 idx shape": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 2, 2), T.zeros(1, 1, 2, 1, dtype=T.long), 2
    ),
    "mu2 idx shape+dtype": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 2, 2), T.zeros(1, 1, 2, 1, dtype=T.int32), 2
    ),
    "mu2 0ch": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 0, 2, 2), T.zeros(1, 0, 2, 2, dtype=T.long), 2
    ),
    "mu2 0sp": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 0, 2), T.zeros(1, 1, 0, 2, dtype=T.long), 2
    ),
    "mu2 5d": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 1, 2, 2), T.zeros(1, 1, 1, 2, 2, dtype=T.long), 2
    ),
    "mu1 1d": lambda T, F, r, rg: F.max_unpool1d(r(2), T.zeros(2, dtype=T.long), 2),
    "mu1 4d": lambda T, F, r, rg: F.max_unpool1d(
        r(1, 1, 1, 2), T.zeros(1, 1, 1, 2, dtype=T.long), 2
    ),
    "mu1 idx dtype": lambda T, F, r, rg: F.max_unpool1d(
        r(1, 1, 2), T.zeros(1, 1, 2, dtype=T.int32), 2
    ),
    "mu3 idx dtype": lambda T, F, r, rg: F.max_unpool3d(
        r(1, 1, 2, 2, 2), T.zeros(1, 1, 2, 2, 2, dtype=T.int32), 2
    ),
    "mu3 idx shape": lambda T, F, r, rg: F.max_unpool3d(
        r(1, 1, 2, 2, 2), T.zeros(1, 1, 2, 2, 1, dtype=T.long), 2
    ),
    "mu3 out size bad": lambda T, F, r, rg: F.max_unpool3d(
        r(1, 1, 2, 2, 2), T.zeros(1, 1, 2, 2, 2, dtype=T.long), 2, output_size=(9, 9, 9)
    ),
    "mu3 0sp": lambda T, F, r, rg: F.max_unpool3d(
        r(1, 1, 2, 0, 2), T.zeros(1, 1, 2, 0, 2, dtype=T.long), 2
    ),
    "mu2 out neg": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.long), 2, output_size=(-1, 4)
    ),
    "mu2 idx val out": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 2, 2), T.tensor([[[[0, 1], [2, 99]]]]), 2
    ),
    "lp1 k2t": lambda T, F, r, rg: F.lp_pool1d(r(1, 1, 4), 2, (2, 2)),
}


@pytest.mark.parametrize("name", list(POOL_ERRORS))
def test_errors(name):
    f = POOL_ERRORS[name]
    raises_same(lambda: f(ember, E, *_r(ember)), lambda: f(torch, TF, *_r(torch)))


POOL_EDGES = {
    "mp2 0 batch": lambda T, F, r, rg: F.max_pool2d(r(0, 1, 4, 4), 2),
    "mp2 long": lambda T, F, r, rg: F.max_pool2d(T.ones(1, 1, 4, 4, dtype=T.long), 2),
    "mp2 int": lambda T, F, r, rg: F.max_pool2d(T.ones(1, 1, 4, 4, dtype=T.int32), 2),
    "mp2 uint8": lambda T, F, r, rg: F.max_pool2d(T.ones(1, 1, 4, 4, dtype=T.uint8), 2),
    "mp2 half": lambda T, F, r, rg: F.max_pool2d(T.ones(1, 1, 4, 4, dtype=T.half), 2),
    "mp2 ceil": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 5, 5), 2, ceil_mode=True),
    "mp2 ceil pad": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 5, 5), 3, 2, 1, ceil_mode=True),
    "mp1 0batch": lambda T, F, r, rg: F.max_pool1d(r(0, 1, 4), 2),
    "mp3 long": lambda T, F, r, rg: F.max_pool3d(T.ones(1, 1, 4, 4, 4, dtype=T.long), 2),
    "ap2 long": lambda T, F, r, rg: F.avg_pool2d(T.ones(1, 1, 4, 4, dtype=T.long), 2),
    "ap2 half": lambda T, F, r, rg: F.avg_pool2d(T.ones(1, 1, 4, 4, dtype=T.half), 2),
    "ap1 long": lambda T, F, r, rg: F.avg_pool1d(T.ones(1, 1, 4, dtype=T.long) * 3, 2),
    "ap3 long": lambda T, F, r, rg: F.avg_pool3d(T.ones(1, 1, 4, 4, 4, dtype=T.long) * 3, 2),
    "aap2 0ch": lambda T, F, r, rg: F.adaptive_avg_pool2d(r(1, 0, 4, 4), 2),
    "aap2 0 batch": lambda T, F, r, rg: F.adaptive_avg_pool2d(r(0, 1, 4, 4), 2),
    "aap2 out bigger": lambda T, F, r, rg: F.adaptive_avg_pool2d(r(1, 1, 4, 4), 7),
    "aap3 4d out0": lambda T, F, r, rg: F.adaptive_avg_pool3d(r(1, 4, 4, 4), 0),
    "amp2 out0": lambda T, F, r, rg: F.adaptive_max_pool2d(r(1, 1, 4, 4), 0),
    "mu2 out size 4": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.long), 2, output_size=(1, 1, 4, 5)
    ),
    "lp2 long": lambda T, F, r, rg: F.lp_pool2d(T.ones(1, 1, 4, 4, dtype=T.long), 2, 2),
    "mp1 dilated pad": lambda T, F, r, rg: F.max_pool1d(r(1, 1, 9), 2, 1, 1, 3),
    "mp1i long": lambda T, F, r, rg: F.max_pool1d(
        T.ones(1, 1, 4, dtype=T.long), 2, return_indices=True
    )[1],
    "mp2 pad k-half dil ok": lambda T, F, r, rg: F.max_pool2d(r(1, 1, 9, 9), 3, 1, 1, 3),
    "ap3 small ceil": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 3, 4, 4), 2, 2, ceil_mode=True),
    "ap3 0-size out": lambda T, F, r, rg: F.avg_pool3d(r(1, 1, 2, 4, 4), 2, 3),
    "aap2 out (None,2)": lambda T, F, r, rg: F.adaptive_avg_pool2d(r(1, 4, 4), (None, 2)),
    "aap2 3d 0ch": lambda T, F, r, rg: F.adaptive_avg_pool2d(r(0, 4, 4), 2),
    "aap1 0ch": lambda T, F, r, rg: F.adaptive_avg_pool1d(r(1, 0, 4), 2),
    "aap1 out0": lambda T, F, r, rg: F.adaptive_avg_pool1d(r(1, 1, 4), 0),
    "amp2 0batch": lambda T, F, r, rg: (
        F.adaptive_max_pool2d(r(0, 1, 4, 4), 2)[0]
        if False
        else F.adaptive_max_pool2d(r(0, 1, 4, 4), 2)
    ),
    "fmp2 k0": lambda T, F, r, rg: F.fractional_max_pool2d(r(1, 1, 8, 8), 0, output_size=4),
    "fmp2 out0": lambda T, F, r, rg: F.fractional_max_pool2d(r(1, 1, 8, 8), 2, output_size=0),
    "fmp2 out1": lambda T, F, r, rg: F.fractional_max_pool2d(
        r(1, 1, 8, 8),
        2,
        output_size=1,
        _random_samples=T.full((1, 1, 2), 0.5, dtype=T.float64),
        return_indices=True,
    ),
    "fmp3 k0": lambda T, F, r, rg: F.fractional_max_pool3d(r(1, 1, 8, 8, 8), 0, output_size=4),
    "mu2 unb": lambda T, F, r, rg: F.max_unpool2d(r(1, 2, 2), T.zeros(1, 2, 2, dtype=T.long), 2),
    "mu1 2d": lambda T, F, r, rg: F.max_unpool1d(r(1, 2), T.zeros(1, 2, dtype=T.long), 2),
    "mu3 pad-1": lambda T, F, r, rg: F.max_unpool3d(
        r(1, 1, 2, 2, 2), T.zeros(1, 1, 2, 2, 2, dtype=T.long), 2, 2, -1
    ),
    "mu2 stride0": lambda T, F, r, rg: F.max_unpool2d(
        r(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.long), 2, 0
    ),
    "lp2 inf": lambda T, F, r, rg: F.lp_pool2d(r(1, 1, 4, 4), float("inf"), 2),
}


@pytest.mark.parametrize("name", list(POOL_EDGES))
def test_edge_cases(name):
    """Integer and half inputs, empty and degenerate sizes: same results as PyTorch."""
    f = POOL_EDGES[name]
    assert_same(f(ember, E, *_r(ember)), f(torch, TF, *_r(torch)))
