"""Convolutions against PyTorch: conv1d/2d/3d, conv_transpose1d/2d/3d, unfold and fold.

PyTorch's OpInfo samples (forward, reverse and forward-mode gradients, float64 and float32),
double backward (second derivatives with respect to inputs, weights, biases and cotangents),
padding modes, unbatched inputs and node names, dtypes, empty tensors, and error messages for
misuse (PyTorch's own error inputs plus the cases below), same type and text.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, check_op, raises_same
from opinfo import check_opinfo, opinfos, to_ember

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")
E, TF = ember.nn.functional, torch.nn.functional


@pytest.fixture(autouse=True)
def _torch_one_thread():
    """torch's intra-op threads spin while they wait: on a loaded 2-core machine its tiny
    convolutions then take ~100 ms each. One thread makes this file ~6x faster."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)

# float32 results of these products sum many terms of magnitude ~10-100 (OpInfo's inputs), so
# their absolute error is float32's epsilon times that magnitude
F32 = {"rtol": 1e-4, "atol": 5e-4}

CONV_OPS = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("name", CONV_OPS)
def test_opinfo_conv(name, dtype):
    n = check_opinfo("nn.functional." + name, dtype, **({} if dtype == torch.float64 else F32))
    assert n >= 10


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_opinfo_unfold(dtype):
    # 163 samples; every third keeps every kernel/dilation/padding/stride kind and the runtime low
    from opinfo import check_sample

    (info,) = opinfos("nn.functional.unfold")
    samples = list(info.sample_inputs("cpu", dtype, requires_grad=True))
    for s in samples[::3]:
        check_sample(info, s, **({} if dtype == torch.float64 else F32))


def data(shape, seed=0, dtype="float64"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# (function, input shape, weight shape, with bias, keyword arguments)
DOUBLE = [
    ("conv1d", (2, 4, 9), (6, 2, 3), True, dict(stride=2, padding=1, dilation=2, groups=2)),
    ("conv2d", (2, 3, 7, 6), (4, 3, 3, 2), True, dict(stride=(2, 1), padding=(1, 2))),
    ("conv2d", (6, 6, 5), (4, 3, 2, 2), False, dict(dilation=2, groups=2)),
    ("conv2d", (1, 2, 5, 5), (2, 2, 2, 3), True, dict(padding="same", dilation=(1, 2))),
    ("conv2d", (1, 2, 6, 5), (3, 2, 3, 3), True, dict(padding="valid", stride=2)),
    ("conv3d", (1, 2, 4, 5, 4), (2, 1, 2, 3, 2), True, dict(stride=(1, 2, 1), groups=2)),
    (
        "conv_transpose1d",
        (2, 4, 5),
        (4, 3, 3),
        True,
        dict(stride=3, padding=1, output_padding=2, groups=2),
    ),
    (
        "conv_transpose2d",
        (2, 2, 3, 4),
        (2, 3, 3, 2),
        True,
        dict(stride=2, padding=(1, 0), output_padding=(1, 0), dilation=(1, 2)),
    ),
    ("conv_transpose2d", (2, 3, 3), (2, 2, 2, 2), False, dict(padding=1, output_padding=0)),
    (
        "conv_transpose3d",
        (1, 2, 3, 2, 3),
        (2, 2, 2, 2, 2),
        True,
        dict(stride=(2, 1, 2), output_padding=(1, 0, 0), dilation=(1, 2, 1)),
    ),
]


@pytest.mark.parametrize(
    ("name", "xs", "ws", "bias", "kw"), DOUBLE, ids=[f"{d[0]}-{i}" for i, d in enumerate(DOUBLE)]
)
def test_double_backward(name, xs, ws, bias, kw):
    """Values, gradients, tangents, and second derivatives (through the VJP's own transposed
    convolution and weight-gradient ops) equal PyTorch's."""
    arrays = [data(xs, 1), data(ws, 2)] + (
        [data((ws[1] * kw.get("groups", 1) if name.startswith("conv_t") else ws[0],), 3)]
        if bias
        else []
    )
    check_op(lambda *a: getattr(E, name)(*a, **kw), lambda *a: getattr(TF, name)(*a, **kw), *arrays)


def test_double_backward_only_input_or_weight():
    """One operand constant: only the needed operand is saved, gradients still right."""
    x, w = data((2, 3, 6, 6), 1), data((4, 3, 3, 3), 2)
    check_op(
        lambda a, b: E.conv2d(a, b, padding=1),
        lambda a, b: TF.conv2d(a, b, padding=1),
        x,
        w,
        argnums=(0,),
    )
    check_op(
        lambda a, b: E.conv2d(a, b, stride=2),
        lambda a, b: TF.conv2d(a, b, stride=2),
        x,
        w,
        argnums=(1,),
    )


def test_hessian_vector_products():
    """A second-order quantity taken the other way round: d/dw of <grad_x, v>."""
    res = []
    for L, F in ((ember, E), (torch, TF)):
        x = L.from_numpy(data((2, 2, 6, 6), 4)).requires_grad_()
        w = L.from_numpy(data((3, 2, 3, 3), 5)).requires_grad_()
        y = F.conv2d(x, w, stride=2, padding=1).tanh().sum()
        (gx,) = L.autograd.grad(y, x, create_graph=True)
        v = L.from_numpy(data((2, 2, 6, 6), 6))
        res.append(L.autograd.grad((gx * v).sum(), [x, w]))
    assert_same(list(res[0]), list(res[1]))


PADDINGS = [0, 1, (1, 2), "valid", "same"]


@pytest.mark.parametrize("padding", PADDINGS, ids=str)
@pytest.mark.parametrize("ks", [(3, 3), (2, 4), (1, 2)])
@pytest.mark.parametrize("dilation", [1, 2])
def test_padding_modes(padding, ks, dilation):
    x, w, b = data((2, 3, 7, 8), 1), data((2, 3) + ks, 2), data((2,), 3)
    kw = dict(padding=padding, dilation=dilation)
    check_op(lambda *a: E.conv2d(*a, **kw), lambda *a: TF.conv2d(*a, **kw), x, w, b, double=False)


@pytest.mark.parametrize("padding", ["same", "valid", 2])
def test_padding_modes_1d_3d(padding):
    kw = dict(padding=padding)
    check_op(
        lambda *a: E.conv1d(*a, **kw),
        lambda *a: TF.conv1d(*a, **kw),
        data((2, 2, 9), 1),
        data((3, 2, 4), 2),
        double=False,
    )
    check_op(
        lambda *a: E.conv3d(*a, **kw),
        lambda *a: TF.conv3d(*a, **kw),
        data((1, 2, 5, 4, 6), 1),
        data((2, 2, 2, 3, 2), 2),
        double=False,
    )


@pytest.mark.parametrize("name", CONV_OPS)
def test_unbatched_graph(name):
    """An unbatched input goes through unsqueeze / convolution / squeeze, as in PyTorch."""
    d = int(name[-2])
    ws = (2, 2) + (2,) * d
    out = []
    for L, F in ((ember, E), (torch, TF)):
        x = L.from_numpy(data((2,) + (5,) * d, 1)).requires_grad_()
        w = L.from_numpy(data(ws, 2)).requires_grad_()
        y = getattr(F, name)(x, w)
        fn = y.grad_fn
        chain = []
        while fn is not None:
            chain.append(fn.name().replace("torch::", "ember::"))
            fn = fn.next_functions[0][0] if fn.next_functions else None
        out.append((chain, tuple(y.shape)))
    assert out[0] == out[1]


def test_noncontiguous_inputs():
    x, w = data((2, 3, 6, 7), 1), data((4, 3, 3, 2), 2)
    check_op(
        lambda a, b: E.conv2d(a, b, stride=2),
        lambda a, b: TF.conv2d(a, b, stride=2),
        x,
        w,
        noncontig=True,
        double=False,
    )
    check_op(
        lambda a, b: E.conv_transpose2d(a, b.transpose(0, 1)),
        lambda a, b: TF.conv_transpose2d(a, b.transpose(0, 1)),
        data((2, 4, 3, 3), 3),
        data((2, 4, 2, 2), 4),
        noncontig=True,
        double=False,
    )


def test_large_batch_paths():
    """Both product layouts (batch folded into one GEMM, or one GEMM per example)."""
    for shape in [(9, 3, 6, 6), (2, 3, 30, 30)]:
        x, w = data(shape, 1, "float32"), data((5, 3, 3, 3), 2, "float32")
        check_op(
            lambda a, b: E.conv2d(a, b, padding=1),
            lambda a, b: TF.conv2d(a, b, padding=1),
            x,
            w,
            double=False,
            fwd=False,
            rtol=1e-4,
            atol=1e-4,
        )
        check_op(
            lambda a, b: E.conv_transpose2d(a, b, stride=2),
            lambda a, b: TF.conv_transpose2d(a, b, stride=2),
            x,
            data((3, 2, 3, 3), 3, "float32"),
            double=False,
            fwd=False,
            rtol=1e-4,
            atol=1e-4,
        )


# channels-last products (groups 1, at least 8 channels, batch folded): geometry variety
NHWC = [
    ("conv2d", (3, 8, 7, 6), (5, 8, 3, 3), dict()),
    ("conv2d", (3, 9, 8, 7), (4, 9, 3, 2), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))),
    ("conv1d", (4, 8, 11), (6, 8, 3), dict(stride=2, padding=1)),
    # at least 8 output channels: both gradients from one set of channels-last gradient rows
    ("conv2d", (3, 8, 7, 6), (9, 8, 3, 3), dict(padding=1)),
    ("conv2d", (3, 9, 8, 7), (10, 9, 3, 2), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))),
    ("conv1d", (4, 8, 11), (8, 8, 3), dict(stride=2, padding=1)),
    ("conv3d", (2, 8, 4, 5, 4), (3, 8, 2, 3, 2), dict(padding=1, dilation=(2, 1, 1))),
    ("conv_transpose2d", (3, 8, 5, 4), (8, 10, 3, 3), dict()),
    ("conv_transpose2d", (2, 8, 4, 5), (8, 9, 2, 3),
     dict(stride=2, padding=(1, 0), output_padding=(1, 0), dilation=(2, 1))),
]


@pytest.mark.parametrize(("name", "xs", "ws", "kw"), NHWC,
                         ids=[f"{d[0]}-{i}" for i, d in enumerate(NHWC)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_channels_last_paths(name, xs, ws, kw, dtype):
    """Values and the input, weight and bias gradients through the channels-last products
    (and the per-kernel-position transposed convolution), non-contiguous inputs included."""
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else {}
    b = data((ws[1] if name.startswith("conv_t") else ws[0],), 5, dtype)
    for noncontig in (False, True):
        check_op(lambda x, w, b_: getattr(E, name)(x, w, b_, **kw),
                 lambda x, w, b_: getattr(TF, name)(x, w, b_, **kw),
                 data(xs, 1, dtype), data(ws, 2, dtype), b, double=False,
                 noncontig=noncontig, **tol)


def test_complex():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 5, 5)) + 1j * rng.standard_normal((2, 2, 5, 5))
    w = rng.standard_normal((3, 2, 2, 2)) + 1j * rng.standard_normal((3, 2, 2, 2))
    check_op(
        lambda a, b: E.conv2d(a, b, padding=1),
        lambda a, b: TF.conv2d(a, b, padding=1),
        x,
        w,
        double=False,
    )


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_types(dt):
    out = []
    for L, F in ((ember, E), (torch, TF)):
        x = L.from_numpy(data((2, 3, 6, 6), 1, "float32")).to(getattr(L, dt))
        w = L.from_numpy(data((4, 3, 3, 3), 2, "float32")).to(getattr(L, dt))
        out.append((F.conv2d(x, w, padding=1), F.conv_transpose2d(x, w.transpose(0, 1))))
    assert_same(list(out[0]), list(out[1]), rtol=2e-2, atol=5e-2)


def test_meta_device():
    x = ember.empty(2, 3, 8, 8, device="meta")
    w = ember.empty(4, 3, 3, 3, device="meta")
    y = E.conv2d(x, w, stride=2, padding=1)
    assert y.is_meta and tuple(y.shape) == (2, 4, 4, 4)


# ---- fold (no OpInfo entry): comparisons of our own -----------------------------------------

FOLD = [
    ((2, 12, 12), (4, 5), 2, dict()),
    ((12, 12), (4, 5), (2, 2), dict()),
    ((1, 18, 9), (5, 6), (3, 2), dict(stride=(2, 3), padding=1)),
    ((2, 8, 18), (5, 5), 2, dict(dilation=(1, 2), padding=(1, 0))),
]


@pytest.mark.parametrize(("shape", "out", "k", "kw"), FOLD)
def test_fold(shape, out, k, kw):
    check_op(lambda a: E.fold(a, out, k, **kw), lambda a: TF.fold(a, out, k, **kw), data(shape, 1))


def test_fold_unfold_roundtrip_graph():
    for L, F in ((ember, E), (torch, TF)):
        x = L.from_numpy(data((3, 6, 6), 1)).requires_grad_()
        u = F.unfold(x, 3, padding=1)
        assert u.grad_fn.name() == "Im2ColBackward0"
        f = F.fold(u, (6, 6), 3, padding=1)
        assert f.grad_fn.name() == "Col2ImBackward0"
    check_op(
        lambda a: E.fold(E.unfold(a, 3, padding=1) * 2, (6, 6), 3, padding=1),
        lambda a: TF.fold(TF.unfold(a, 3, padding=1) * 2, (6, 6), 3, padding=1),
        data((2, 2, 6, 6), 1),
    )


# ---- errors -----------------------------------------------------------------------------------


def _error_cases():
    for name in CONV_OPS + ["unfold"]:
        for info in opinfos("nn.functional." + name):
            if info.error_inputs_func is None:
                continue
            for k, ei in enumerate(info.error_inputs("cpu")):
                yield pytest.param(info, ei, id=f"{name}-{k}")


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


CONV_ERRORS = {
    "conv2d 2d input": lambda T, F, r, rg: F.conv2d(r(4, 4), r(1, 1, 2, 2)),
    "conv2d 5d input": lambda T, F, r, rg: F.conv2d(r(1, 1, 1, 4, 4), r(1, 1, 2, 2)),
    "conv1d 4d": lambda T, F, r, rg: F.conv1d(r(1, 1, 4, 4), r(1, 1, 2)),
    "conv2d weight 3d": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(1, 1, 2)),
    "conv2d weight 5d": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(1, 1, 2, 2, 2)),
    "conv2d channel mismatch": lambda T, F, r, rg: F.conv2d(r(1, 3, 4, 4), r(2, 2, 2, 2)),
    "conv2d ch mismatch unbatched": lambda T, F, r, rg: F.conv2d(r(3, 4, 4), r(2, 2, 2, 2)),
    "conv2d groups not divisible": lambda T, F, r, rg: F.conv2d(
        r(1, 4, 4, 4), r(3, 2, 2, 2), groups=2
    ),
    "conv2d bias wrong": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(2, 1, 2, 2), r(3)),
    "conv2d bias 2d": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(2, 1, 2, 2), r(2, 1)),
    "conv2d kernel too big": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(2, 1, 5, 5)),
    "conv2d kernel too big pad": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(2, 1, 7, 5), padding=1
    ),
    "conv2d float/double": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4, dt=T.float32), r(2, 1, 2, 2)),
    "conv2d double/float w": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(2, 1, 2, 2, dt=T.float32)
    ),
    "conv2d bias float": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(2, 1, 2, 2), r(2, dt=T.float32)
    ),
    "conv2d bool": lambda T, F, r, rg: F.conv2d(
        T.ones(1, 1, 4, 4, dtype=T.bool), T.ones(2, 1, 2, 2, dtype=T.bool)
    ),
    "conv2d stride 0": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(2, 1, 2, 2), stride=0),
    "conv2d stride 3-tuple": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(2, 1, 2, 2), stride=(1, 1, 1)
    ),
    "conv2d padding 3-tuple": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(2, 1, 2, 2), padding=(1, 1, 1)
    ),
    "conv2d dilation 0": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(2, 1, 2, 2), dilation=0),
    "conv2d dilation 3-tuple": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(2, 1, 2, 2), dilation=(1, 1, 1)
    ),
    "conv2d pad str bad": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(2, 1, 2, 2), padding="foo"),
    "conv2d pad same stride": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(2, 1, 2, 2), padding="same", stride=2
    ),
    "conv2d groups 0": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(2, 1, 2, 2), groups=0),
    "conv2d zero out ch": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(0, 1, 2, 2)),
    "convT2d ch mismatch": lambda T, F, r, rg: F.conv_transpose2d(r(1, 3, 4, 4), r(2, 2, 2, 2)),
    "convT2d bias wrong": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 2, 2, 2), r(3)
    ),
    "convT2d outpad big": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 2, 2, 2), output_padding=1
    ),
    "convT2d outpad big2": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 2, 2, 2), stride=2, output_padding=(1, 2)
    ),
    "convT2d outpad neg": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 2, 2, 2), stride=2, output_padding=-1
    ),
    "convT2d pad same": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 2, 2, 2), padding="same"
    ),
    "convT2d neg out": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 1, 1), r(2, 2, 1, 1), padding=2
    ),
    "convT2d groups": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 3, 4, 4), r(3, 2, 2, 2), groups=2
    ),
    "convT2d 2d input": lambda T, F, r, rg: F.conv_transpose2d(r(4, 4), r(2, 2, 2, 2)),
    "convT2d weight3": lambda T, F, r, rg: F.conv_transpose2d(r(1, 2, 4, 4), r(2, 2, 2)),
    "convT1d float/double": lambda T, F, r, rg: F.conv_transpose1d(
        r(1, 2, 4, dt=T.float32), r(2, 2, 2)
    ),
    "conv3d weight 4d": lambda T, F, r, rg: F.conv3d(r(1, 1, 4, 4, 4), r(1, 1, 2, 2)),
    "conv1d w2d": lambda T, F, r, rg: F.conv1d(r(1, 1, 4), r(1, 1)),
    "conv2d w2d": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(1, 1)),
    "conv2d w1d": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(1)),
    "conv2d w2d same": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(1, 1), padding="same"),
    "conv2d w3d valid": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(1, 1, 2), padding="valid"),
    "conv2d w3d same stride2": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2), padding="same", stride=2
    ),
    "conv2d same stride (1,2)": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), padding="same", stride=(1, 2)
    ),
    "conv2d same stride 3tuple": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), padding="same", stride=(1, 1, 1)
    ),
    "conv2d same dil 3tuple": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), padding="same", dilation=(1, 1, 1)
    ),
    "conv2d same groups0": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), padding="same", groups=0
    ),
    "conv2d same dil0": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), padding="same", dilation=0
    ),
    "conv2d dil -1": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(1, 1, 2, 2), dilation=-1),
    "conv2d dil (1,0)": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(1, 1, 2, 2), dilation=(1, 0)),
    "conv2d stride -1 pad -1": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), stride=-1, padding=-1
    ),
    "conv2d stride 0 dil 0": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), stride=0, dilation=0
    ),
    "conv2d stride 3t pad 3t": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), stride=(1, 1, 1), padding=(1, 1, 1)
    ),
    "conv2d pad 3t dil 3t": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), dilation=(1, 1, 1), padding=(1, 1, 1)
    ),
    "conv2d groups0 pad-1": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), groups=0, padding=-1
    ),
    "conv2d groups0 stride3t": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), groups=0, stride=(1, 1, 1)
    ),
    "conv2d w5d groups0": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4),
        r(1, 1, 2, 2, 2),
        groups=0,
        stride=(1, 1, 1),
        padding=(0, 0, 0),
        dilation=(1, 1, 1),
    ),
    "conv2d w5d ok params": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2, 2), stride=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1)
    ),
    "conv2d bias dt + dim": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4), r(1, 1, 2, 2), r(1, dt=T.float32)
    ),
    "conv2d ch + bias": lambda T, F, r, rg: F.conv2d(r(1, 2, 4, 4), r(1, 1, 2, 2), r(3)),
    "conv2d ch + groups": lambda T, F, r, rg: F.conv2d(r(1, 2, 4, 4), r(3, 1, 2, 2), groups=2),
    "conv2d dtype + ch": lambda T, F, r, rg: F.conv2d(r(1, 2, 4, 4, dt=T.float32), r(3, 1, 2, 2)),
    "conv2d dtype + kernel": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4, dt=T.float32), r(3, 1, 5, 5)
    ),
    "conv2d long/double": lambda T, F, r, rg: F.conv2d(
        T.ones(1, 1, 4, 4, dtype=T.long), r(3, 1, 2, 2)
    ),
    "conv2d double/long": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), T.ones(3, 1, 2, 2, dtype=T.long)
    ),
    "conv2d cfloat/cdouble": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4).to(T.complex64), r(3, 1, 2, 2).to(T.complex128)
    ),
    "conv2d double/cdouble": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(3, 1, 2, 2).to(T.complex128)
    ),
    "conv2d bool bias": lambda T, F, r, rg: F.conv2d(
        T.ones(1, 1, 4, 4, dtype=T.bool), T.ones(1, 1, 2, 2, dtype=T.bool), T.ones(1, dtype=T.bool)
    ),
    "conv1d bool": lambda T, F, r, rg: F.conv1d(
        T.ones(1, 1, 4, dtype=T.bool), T.ones(1, 1, 2, dtype=T.bool)
    ),
    "conv3d bool": lambda T, F, r, rg: F.conv3d(
        T.ones(1, 1, 4, 4, 4, dtype=T.bool), T.ones(1, 1, 2, 2, 2, dtype=T.bool)
    ),
    "convT1d int": lambda T, F, r, rg: F.conv_transpose1d(
        T.ones(1, 1, 4, dtype=T.int32), T.ones(1, 1, 2, dtype=T.int32)
    ),
    "convT3d int": lambda T, F, r, rg: F.conv_transpose3d(
        T.ones(1, 1, 4, 4, 4, dtype=T.int32), T.ones(1, 1, 2, 2, 2, dtype=T.int32)
    ),
    "convT3d bool": lambda T, F, r, rg: F.conv_transpose3d(
        T.ones(1, 1, 4, 4, 4, dtype=T.bool), T.ones(1, 1, 2, 2, 2, dtype=T.bool)
    ),
    "convT1d bool": lambda T, F, r, rg: F.conv_transpose1d(
        T.ones(1, 1, 4, dtype=T.bool), T.ones(1, 1, 2, dtype=T.bool)
    ),
    "convT1d outpad": lambda T, F, r, rg: F.conv_transpose1d(
        r(1, 2, 4), r(2, 2, 2), output_padding=1
    ),
    "convT3d outpad": lambda T, F, r, rg: F.conv_transpose3d(
        r(1, 2, 4, 4, 4), r(2, 2, 2, 2, 2), output_padding=1
    ),
    "convT1d small": lambda T, F, r, rg: F.conv_transpose1d(r(1, 2, 1), r(2, 2, 1), padding=2),
    "convT3d small": lambda T, F, r, rg: F.conv_transpose3d(
        r(1, 2, 1, 1, 1), r(2, 2, 1, 1, 1), padding=2
    ),
    "convT2d small0": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 1, 1), r(2, 2, 1, 1), padding=(0, 1)
    ),
    "convT2d dtype": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 2, 2, 2, dt=T.float32)
    ),
    "convT2d outpad 3t": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 2, 2, 2), output_padding=(0, 0, 0)
    ),
    "convT2d groups0": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 2, 2, 2), groups=0
    ),
    "convT2d w ch 0": lambda T, F, r, rg: F.conv_transpose2d(r(1, 2, 4, 4), r(2, 0, 2, 2)),
    "conv2d in 0 spatial": lambda T, F, r, rg: F.conv2d(r(1, 1, 0, 4), r(1, 1, 1, 1)),
    "conv2d in 0 spatial pad": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 0, 4), r(1, 1, 1, 1), padding=1
    ),
    "dil0 + ch": lambda T, F, r, rg: F.conv2d(r(1, 2, 4, 4), r(1, 1, 2, 2), dilation=0),
    "dil0 + groups": lambda T, F, r, rg: F.conv2d(
        r(1, 2, 4, 4), r(3, 1, 2, 2), dilation=0, groups=2
    ),
    "dil0 + kernel": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(1, 1, 5, 5), dilation=0),
    "dil0 + dtype": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4, dt=T.float32), r(1, 1, 2, 2), dilation=0
    ),
    "dil0 + stride0": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), dilation=0, stride=0
    ),
    "dil0 + pad3t": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), dilation=0, padding=(1, 1, 1)
    ),
    "dil -1 + pad-1": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), dilation=-1, padding=-1
    ),
    "dil-1 + stride0": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 2, 2), dilation=-1, stride=0
    ),
    "convT dil0": lambda T, F, r, rg: F.conv_transpose2d(r(1, 1, 4, 4), r(1, 1, 2, 2), dilation=0),
    "convT outpad + small": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 1, 1), r(2, 2, 1, 1), padding=2, output_padding=1
    ),
    "convT wempty + outpad": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 0, 2, 2), output_padding=1
    ),
    "convT ch + outpad": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 3, 4, 4), r(2, 2, 2, 2), output_padding=1
    ),
    "convT dtype + outpad": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 2, 2, 2, dt=T.float32), output_padding=1
    ),
    "convT int + outpad": lambda T, F, r, rg: F.conv_transpose2d(
        T.ones(1, 2, 4, 4, dtype=T.int32), T.ones(2, 2, 2, 2, dtype=T.int32), output_padding=1
    ),
    "convT bias wrong + outpad": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 2, 2, 2), r(5), output_padding=1
    ),
    "convT 0-spatial": lambda T, F, r, rg: F.conv_transpose2d(r(1, 2, 0, 4), r(2, 2, 2, 2)),
    "convT 0-channels": lambda T, F, r, rg: F.conv_transpose2d(r(1, 0, 4, 4), r(0, 2, 2, 2)),
    "conv2d 0-in with kernel 0": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4), r(1, 1, 0, 2)),
    "conv1d ch": lambda T, F, r, rg: F.conv1d(r(1, 2, 4), r(1, 1, 2)),
    "conv1d kernel": lambda T, F, r, rg: F.conv1d(r(1, 1, 4), r(1, 1, 6)),
    "conv3d kernel": lambda T, F, r, rg: F.conv3d(r(1, 1, 4, 4, 4), r(1, 1, 6, 2, 2)),
    "conv3d 0 spatial": lambda T, F, r, rg: F.conv3d(r(1, 1, 0, 4, 4), r(1, 1, 1, 1, 1), padding=1),
    "conv1d 0 spatial": lambda T, F, r, rg: F.conv1d(r(1, 1, 0), r(1, 1, 1), padding=1),
    "conv1d stride 0": lambda T, F, r, rg: F.conv1d(r(1, 1, 4), r(1, 1, 1), stride=0),
    "conv1d dil 0": lambda T, F, r, rg: F.conv1d(r(1, 1, 4), r(1, 1, 1), dilation=0),
    "conv3d dil 0": lambda T, F, r, rg: F.conv3d(r(1, 1, 4, 4, 4), r(1, 1, 1, 1, 1), dilation=0),
    "unfold pad -1": lambda T, F, r, rg: F.unfold(r(1, 1, 4, 4), 2, padding=-1),
    "unfold 2d": lambda T, F, r, rg: F.unfold(r(4, 4), 2),
    "unfold 5d": lambda T, F, r, rg: F.unfold(r(1, 1, 1, 4, 4), 2),
    "unfold k0": lambda T, F, r, rg: F.unfold(r(1, 1, 4, 4), 0),
    "unfold k3t": lambda T, F, r, rg: F.unfold(r(1, 1, 4, 4), (1, 1, 1)),
    "unfold dil0": lambda T, F, r, rg: F.unfold(r(1, 1, 4, 4), 2, dilation=0),
    "unfold stride0": lambda T, F, r, rg: F.unfold(r(1, 1, 4, 4), 2, stride=0),
    "unfold pad-1": lambda T, F, r, rg: F.unfold(r(1, 1, 4, 4), 2, padding=(0, -1)),
    "unfold too big": lambda T, F, r, rg: F.unfold(r(1, 1, 4, 4), 5),
    "unfold too big2": lambda T, F, r, rg: F.unfold(
        r(1, 1, 4, 4), (2, 3), stride=(5, 1), dilation=(1, 3)
    ),
    "unfold 0 ch": lambda T, F, r, rg: F.unfold(r(1, 0, 4, 4), 2),
    "unfold 0 spatial": lambda T, F, r, rg: F.unfold(r(1, 1, 0, 4), 2, padding=1),
    "unfold 3d 0 ch": lambda T, F, r, rg: F.unfold(r(0, 4, 4), 2),
    "unfold long": lambda T, F, r, rg: F.unfold(T.ones(1, 1, 4, 4, dtype=T.long), 2),
    "unfold int8": lambda T, F, r, rg: F.unfold(T.ones(1, 1, 4, 4, dtype=T.int8), 2),
    "fold 1d": lambda T, F, r, rg: F.fold(r(4), (3, 3), 2),
    "fold 4d": lambda T, F, r, rg: F.fold(r(1, 4, 4, 1), (3, 3), 2),
    "fold bad ch": lambda T, F, r, rg: F.fold(r(1, 5, 4), (3, 3), 2),
    "fold bad L": lambda T, F, r, rg: F.fold(r(1, 4, 5), (3, 3), 2),
    "fold bad L2": lambda T, F, r, rg: F.fold(r(1, 4, 5), (3, 4), 2, stride=(1, 2)),
    "fold k0": lambda T, F, r, rg: F.fold(r(1, 4, 4), (3, 3), 0),
    "fold out 3t": lambda T, F, r, rg: F.fold(r(1, 4, 4), (3, 3, 3), 2),
    "fold k 3t": lambda T, F, r, rg: F.fold(r(1, 4, 4), (3, 3), (2, 2, 2)),
    "fold dil0": lambda T, F, r, rg: F.fold(r(1, 4, 4), (3, 3), 2, dilation=0),
    "fold stride0": lambda T, F, r, rg: F.fold(r(1, 4, 4), (3, 3), 2, stride=0),
    "fold pad-1": lambda T, F, r, rg: F.fold(r(1, 4, 4), (3, 3), 2, padding=-1),
    "fold out0": lambda T, F, r, rg: F.fold(r(1, 4, 4), (0, 3), 2),
    "fold out small": lambda T, F, r, rg: F.fold(r(1, 4, 1), (1, 1), 2),
    "fold 0 ch": lambda T, F, r, rg: F.fold(r(1, 0, 4), (3, 3), 2),
    "fold 0 L": lambda T, F, r, rg: F.fold(r(1, 4, 0), (3, 3), 2),
    "fold long": lambda T, F, r, rg: F.fold(T.ones(1, 4, 4, dtype=T.long), (3, 3), 2),
    "fold int8": lambda T, F, r, rg: F.fold(T.ones(1, 4, 4, dtype=T.int8), (3, 3), 2),
    "fold int": lambda T, F, r, rg: F.fold(T.ones(1, 4, 4, dtype=T.int32), (3, 3), 2),
}
CONV_ERRORS.update(
    {
        "conv1d kernel 0": lambda T, F, r, rg: F.conv1d(r(1, 1, 4), r(1, 1, 0)),
        "conv3d kernel 0": lambda T, F, r, rg: F.conv3d(r(1, 1, 4, 4, 4), r(1, 1, 0, 2, 2)),
        "convT2d kernel 0": lambda T, F, r, rg: F.conv_transpose2d(r(1, 1, 4, 4), r(1, 1, 0, 2)),
        "convT1d kernel 0": lambda T, F, r, rg: F.conv_transpose1d(r(1, 1, 4), r(1, 1, 0)),
        "convT3d kernel 0": lambda T, F, r, rg: F.conv_transpose3d(
            r(1, 1, 4, 4, 4), r(1, 1, 0, 2, 2)
        ),
        "convT1d weight empty": lambda T, F, r, rg: F.conv_transpose1d(r(1, 2, 4), r(2, 0, 2)),
        "convT3d weight empty": lambda T, F, r, rg: F.conv_transpose3d(
            r(1, 2, 4, 4, 4), r(2, 0, 2, 2, 2)
        ),
        "convT3d dil 0": lambda T, F, r, rg: F.conv_transpose3d(
            r(1, 2, 4, 4, 4), r(2, 2, 2, 2, 2), dilation=0
        ),
        "convT3d small": lambda T, F, r, rg: F.conv_transpose3d(
            r(1, 2, 1, 1, 1), r(2, 2, 1, 1, 1), padding=1
        ),
        "conv2d kernel 0 dil 0": lambda T, F, r, rg: F.conv2d(
            r(1, 1, 4, 4), r(1, 1, 0, 2), dilation=0
        ),
        "conv2d 0-spatial kernel 0": lambda T, F, r, rg: F.conv2d(
            r(1, 1, 0, 4), r(1, 1, 0, 2), padding=1
        ),
        "convT2d kernel 0 dil 0": lambda T, F, r, rg: F.conv_transpose2d(
            r(1, 1, 4, 4), r(1, 1, 0, 2), dilation=0
        ),
        "convT2d weight empty dil 0": lambda T, F, r, rg: F.conv_transpose2d(
            r(1, 1, 4, 4), r(1, 0, 2, 2), dilation=0
        ),
        "fold unbatched bad ch": lambda T, F, r, rg: F.fold(r(5, 4), (3, 3), 2),
        "fold unbatched bad L": lambda T, F, r, rg: F.fold(r(4, 5), (3, 3), 2),
        "fold k0 s0": lambda T, F, r, rg: F.fold(r(4, 4), (3, 3), 0, stride=0),
        "fold s0 d0 p-1": lambda T, F, r, rg: F.fold(
            r(4, 4), (3, 3), 2, stride=0, dilation=0, padding=-1
        ),
        "fold d0 p-1": lambda T, F, r, rg: F.fold(r(4, 4), (3, 3), 2, dilation=0, padding=-1),
        "unfold s0 d0 p-1": lambda T, F, r, rg: F.unfold(
            r(1, 4, 4), 2, stride=0, dilation=0, padding=-1
        ),
        "unfold s0 p-1": lambda T, F, r, rg: F.unfold(r(1, 4, 4), 2, stride=0, padding=-1),
        "unfold 1d": lambda T, F, r, rg: F.unfold(r(4), 2),
        "unfold 0d": lambda T, F, r, rg: F.unfold(r(), 2),
        "fold blocks": lambda T, F, r, rg: F.fold(
            r(4, 4), (3, 3), 2, padding=(1, 2), stride=(2, 1)
        ),
    }
)


@pytest.mark.parametrize("name", list(CONV_ERRORS))
def test_errors(name):
    f = CONV_ERRORS[name]
    raises_same(lambda: f(ember, E, *_r(ember)), lambda: f(torch, TF, *_r(torch)))


def test_argument_type_errors():
    """Wrong argument types raise TypeError (PyTorch's text lists its overloads; ours names the
    argument)."""
    x, w = ember.ones(1, 1, 4, 4), ember.ones(1, 1, 2, 2)
    for kw in (dict(padding=1.5), dict(stride=1.5)):
        with pytest.raises(TypeError):
            E.conv2d(x, w, **kw)
    with pytest.raises(TypeError):
        E.conv2d([1.0], w)
    with pytest.raises(TypeError, match="must be tuple of ints, not str"):
        E.conv_transpose2d(x, w, padding="same")


CONV_EDGES = {
    "conv2d long": lambda T, F, r, rg: F.conv2d(
        T.ones(1, 1, 4, 4, dtype=T.long), T.ones(2, 1, 2, 2, dtype=T.long)
    ),
    "conv2d int": lambda T, F, r, rg: F.conv2d(
        T.ones(1, 1, 4, 4, dtype=T.int32), T.ones(2, 1, 2, 2, dtype=T.int32)
    ),
    "conv2d zero batch": lambda T, F, r, rg: F.conv2d(r(0, 1, 4, 4), r(2, 1, 2, 2)),
    "conv2d zero channels": lambda T, F, r, rg: F.conv2d(r(1, 0, 4, 4), r(2, 0, 2, 2)),
    "conv2d half": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4).half(), r(2, 1, 2, 2).half()),
    "conv2d bf16": lambda T, F, r, rg: F.conv2d(r(1, 1, 4, 4).bfloat16(), r(2, 1, 2, 2).bfloat16()),
    "conv2d complex": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4).to(T.complex128), r(2, 1, 2, 2).to(T.complex128)
    ),
    "conv3d int": lambda T, F, r, rg: F.conv3d(
        T.ones(1, 1, 4, 4, 4, dtype=T.int32), T.ones(1, 1, 2, 2, 2, dtype=T.int32)
    ),
    "convT2d bias dtype": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 2, 2, 2), r(2, dt=T.float32)
    ),
    "convT2d outpad dil": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 4, 4), r(2, 2, 2, 2), output_padding=1, dilation=2
    ),
    "convT2d zero-size out": lambda T, F, r, rg: F.conv_transpose2d(
        r(1, 2, 1, 1), r(2, 2, 1, 1), padding=(0, 0)
    ),
    "convT2d kernel big": lambda T, F, r, rg: F.conv_transpose2d(r(1, 2, 1, 1), r(2, 2, 5, 5)),
    "conv2d out size 0 stride": lambda T, F, r, rg: F.conv2d(
        r(1, 1, 4, 4), r(1, 1, 4, 4), stride=3
    ),
    "convT 0-batch": lambda T, F, r, rg: F.conv_transpose2d(r(0, 2, 4, 4), r(2, 2, 2, 2)),
    "conv 0-channels pad": lambda T, F, r, rg: F.conv2d(r(1, 0, 4, 4), r(2, 0, 2, 2), padding=1),
    "conv2d int + bias long": lambda T, F, r, rg: F.conv2d(
        T.ones(1, 1, 4, 4, dtype=T.int32),
        T.ones(1, 1, 2, 2, dtype=T.int32),
        T.ones(1, dtype=T.int32),
    ),
    "unfold 0 batch": lambda T, F, r, rg: F.unfold(r(0, 1, 4, 4), 2),
    "unfold bool": lambda T, F, r, rg: F.unfold(T.ones(1, 1, 4, 4, dtype=T.bool), 2),
    "unfold half": lambda T, F, r, rg: F.unfold(T.ones(1, 1, 4, 4, dtype=T.half), 2),
    "unfold cplx": lambda T, F, r, rg: F.unfold(T.ones(1, 1, 4, 4, dtype=T.complex64), 2),
    "fold 0 batch": lambda T, F, r, rg: F.fold(r(0, 4, 4), (3, 3), 2),
    "fold bool": lambda T, F, r, rg: F.fold(T.ones(1, 4, 4, dtype=T.bool), (3, 3), 2),
    "fold half": lambda T, F, r, rg: F.fold(T.ones(1, 4, 4, dtype=T.half), (3, 3), 2),
}


@pytest.mark.parametrize("name", list(CONV_EDGES))
def test_edge_cases(name):
    """Integer, half, complex and empty inputs: same results (or same errors) as PyTorch."""
    f = CONV_EDGES[name]
    assert_same(f(ember, E, *_r(ember)), f(torch, TF, *_r(torch)), rtol=1e-2, atol=1e-2)


def test_padding_same_warns():
    with pytest.warns(UserWarning, match="padding='same' with even kernel"):
        E.conv2d(ember.ones(1, 1, 4, 4), ember.ones(1, 1, 2, 2), padding="same")


# ---- conv_tbc -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc(pad, dtype):
    """Values, gradients, second derivatives (PyTorch's composite backward: same values) and
    the node against PyTorch; forward mode raises PyTorch's error."""
    rng = np.random.default_rng(pad + 10)
    arrays = [rng.standard_normal(s).astype(dtype) for s in ((6, 2, 3), (3, 3, 4), (4,))]
    out = {}
    for lib in (ember, torch):
        xs = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
        o = lib.nn.functional.conv_tbc(*xs, pad)
        g = lib.from_numpy(np.linspace(-1, 1, o.numel()).reshape(tuple(o.shape)).astype(dtype))
        g.requires_grad_()
        gr = lib.autograd.grad(o, xs, g, create_graph=True)
        gg = lib.autograd.grad((gr[0] * gr[0]).sum() + (gr[1] * gr[1]).sum(), xs[:2] + [g])
        out[lib] = (o, gr, gg, o.grad_fn.name(), [t.requires_grad for t in gr])
    (oe, ge, gge, ne, re_), (ot, gt, ggt, nt, rt) = out[ember], out[torch]
    tol = {} if dtype == "float64" else {"rtol": 1e-5, "atol": 1e-5}
    assert_same(oe, ot, **tol)
    assert_same(list(ge), list(gt), **tol)
    assert_same(list(gge), list(ggt), **tol)
    assert ne == nt and re_ == rt
    fw_e, fw_t = ember.autograd.forward_ad, torch.autograd.forward_ad

    def dual(lib, fw):
        xs = [lib.from_numpy(a.copy()) for a in arrays]
        with fw.dual_level():
            return lib.nn.functional.conv_tbc(fw.make_dual(xs[0], xs[0] * 0 + 1), *xs[1:], pad)
    raises_same(lambda: dual(ember, fw_e), lambda: dual(torch, fw_t))


def test_conv_tbc_errors():
    rng = np.random.default_rng(5)
    x, w, b = rng.standard_normal((5, 2, 3)), rng.standard_normal((3, 3, 4)), np.zeros(4)

    def call(lib, x, w, b, pad=0):
        return lib.nn.functional.conv_tbc(*(lib.from_numpy(a.copy()) for a in (x, w, b)), pad)
    for args in [(x[0], w, b), (x, w[0], b), (x, w, b[:2]), (x, w[:, :2], b), (x[:1], w, b),
                 (x, w, b, -3)]:
        raises_same(lambda: call(ember, *args), lambda: call(torch, *args))
