"""ember.nn.functional activations, softmax wrappers and dropout against PyTorch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from helpers import assert_same, check_op, raises_same
from opinfo import check_opinfo, check_sample, opinfos

RNG = np.random.default_rng(1234)


def data(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype) * 2


# ---- OpInfo samples ------------------------------------------------------------------------

DETERMINISTIC = [
    "nn.functional.relu", "nn.functional.relu6", "nn.functional.leaky_relu", "nn.functional.elu",
    "nn.functional.selu", "nn.functional.celu", "nn.functional.gelu", "nn.functional.silu",
    "nn.functional.mish", "nn.functional.softplus", "nn.functional.softsign",
    "nn.functional.softshrink", "nn.functional.hardshrink", "nn.functional.tanhshrink",
    "nn.functional.hardtanh", "nn.functional.hardsigmoid", "nn.functional.hardswish",
    "nn.functional.logsigmoid", "nn.functional.threshold", "nn.functional.glu",
    "nn.functional.prelu", "nn.functional.softmin",
]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("name", DETERMINISTIC)
def test_opinfo(name, dtype):
    assert check_opinfo(name, dtype) >= 3


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("name,fe", [("softmax", EF.softmax), ("log_softmax", EF.log_softmax),
                                     ("sigmoid", EF.sigmoid), ("tanh", EF.tanh)])
def test_opinfo_through_functional(name, fe, dtype):
    """torch.softmax's samples run through F.softmax (and friends): same results."""
    n = 0
    for info in opinfos(name):
        for s in info.sample_inputs("cpu", dtype, requires_grad=True):
            check_sample(info, s, fe=fe)
            n += 1
    assert n >= (7 if "softmax" in name else 1)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_opinfo_rrelu(dtype):
    """Evaluation samples compare values; training ones (random slopes) shapes and dtypes."""
    n = 0
    for info in opinfos("nn.functional.rrelu"):
        for s in info.sample_inputs("cpu", dtype, requires_grad=True):
            check_sample(info, s, values=not s.kwargs.get("training", False))
            n += 1
    assert n == 5


@pytest.mark.parametrize("name", ["nn.functional.dropout", "nn.functional.dropout2d",
                                  "nn.functional.dropout3d", "nn.functional.alpha_dropout",
                                  "nn.functional.feature_alpha_dropout"])
def test_opinfo_dropout_shapes(name):
    """Random samples: shapes and dtypes (values are checked statistically below)."""
    n = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in opinfos(name):
            for s in info.sample_inputs("cpu", torch.float32, requires_grad=True):
                check_sample(info, s, values=False)
                n += 1
    assert n >= 4


# ---- gradients of every order ------------------------------------------------------------

ACTS = [
    ("gelu", lambda F: lambda x: F.gelu(x)),
    ("gelu_tanh", lambda F: lambda x: F.gelu(x, approximate="tanh")),
    ("silu", lambda F: F.silu),
    ("mish", lambda F: F.mish),
    ("softplus", lambda F: lambda x: F.softplus(x, beta=1.5, threshold=2.0)),
    ("elu", lambda F: lambda x: F.elu(x, 0.7)),
    ("selu", lambda F: F.selu),
    ("celu", lambda F: lambda x: F.celu(x, 1.3)),
    ("leaky_relu", lambda F: lambda x: F.leaky_relu(x, 0.2)),
    ("hardtanh", lambda F: lambda x: F.hardtanh(x, -0.5, 1.5)),
    ("relu6", lambda F: F.relu6),
    ("logsigmoid", lambda F: F.logsigmoid),
    ("hardswish", lambda F: F.hardswish),
    ("softshrink", lambda F: lambda x: F.softshrink(x, 0.3)),
    ("hardshrink", lambda F: lambda x: F.hardshrink(x, 0.3)),
    ("threshold", lambda F: lambda x: F.threshold(x, 0.2, -3.0)),
    ("rrelu_eval", lambda F: lambda x: F.rrelu(x, 0.1, 0.3)),
    ("glu", lambda F: lambda x: F.glu(x, 1)),
    ("softsign", lambda F: F.softsign),
    ("tanhshrink", lambda F: F.tanhshrink),
]


@pytest.mark.parametrize("name,make", ACTS, ids=[a[0] for a in ACTS])
def test_double_backward(name, make):
    """Values, gradients, forward-mode tangents and double backward against torch."""
    check_op(make(EF), make(TF), data(4, 6, 5))


def test_prelu_double_backward():
    check_op(EF.prelu, TF.prelu, data(3, 4, 5), np.abs(data(4)) * 0.2)
    check_op(EF.prelu, TF.prelu, data(3, 4), np.array([0.25]))
    check_op(EF.prelu, TF.prelu, data(5), np.array(0.25))


def test_hardsigmoid_has_no_second_derivative():
    def run(lib, F):
        x = lib.tensor([-4.0, -1.0, 0.5, 3.5], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(F.hardsigmoid(x).sum(), x, create_graph=True)
        assert g.grad_fn.name() == f"{lib.__name__}::autograd::NotImplemented"
        return g, x
    (ge, xe), (gt, xt) = run(ember, EF), run(torch, TF)
    assert_same(ge, gt)
    raises_same(lambda: ember.autograd.grad(ge.sum(), xe),
                lambda: torch.autograd.grad(gt.sum(), xt))


def test_special_values():
    """NaN, infinities and the kinks: PyTorch's choices for values and gradients (those of its
    vectorized kernels, which run on all but the smallest tensors)."""
    a = np.array([np.nan, -np.inf, np.inf, -3.0, 3.0, 0.0, 0.5, -0.5, 20.0, 25.0, -1.5, 0.3,
                  6.0, 1.0, -1.0, 0.2])
    for name, make in ACTS[:17]:
        check_op(make(EF), make(TF), a, double=False, fwd=False)
    check_op(EF.hardsigmoid, TF.hardsigmoid, a, double=False)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision(dtype):
    """Half types are computed in float32 and rounded once, as PyTorch's kernels."""
    a = data(8, 64)
    for name, make in ACTS:
        e = make(EF)(ember.from_numpy(a.copy()).to(getattr(ember, dtype)))
        t = make(TF)(torch.from_numpy(a.copy()).to(getattr(torch, dtype)))
        assert_same(e, t)


def test_gelu_approximate_error():
    x = data(3)
    raises_same(lambda: EF.gelu(ember.tensor(x), approximate="foo"),
                lambda: TF.gelu(torch.tensor(x), approximate="foo"))


def test_saved_attributes():
    x = data(3, 4)
    for lib, F in ((ember, EF), (torch, TF)):
        t = lib.tensor(x, requires_grad=True)
        y = F.elu(t, 0.5)
        assert float(y.grad_fn._saved_alpha) == 0.5
        assert y.grad_fn._saved_self.shape == (3, 4)
        assert F.gelu(t, approximate="tanh").grad_fn._saved_approximate == "tanh"
        assert F.leaky_relu(t, 0.3).grad_fn._saved_negative_slope == pytest.approx(0.3)


# ---- in place ---------------------------------------------------------------------------------

INPLACE = [
    ("relu", lambda F: lambda x: F.relu(x, inplace=True)),
    ("relu_", lambda F: F.relu_),
    ("relu6", lambda F: lambda x: F.relu6(x, inplace=True)),
    ("leaky_relu", lambda F: lambda x: F.leaky_relu(x, 0.2, inplace=True)),
    ("leaky_relu_", lambda F: lambda x: F.leaky_relu_(x, 0.2)),
    ("elu", lambda F: lambda x: F.elu(x, 0.7, inplace=True)),
    ("elu_", lambda F: F.elu_),
    ("selu", lambda F: lambda x: F.selu(x, inplace=True)),
    ("selu_", lambda F: F.selu_),
    ("celu", lambda F: lambda x: F.celu(x, 1.3, inplace=True)),
    ("celu_", lambda F: lambda x: F.celu_(x, 1.3)),
    ("hardtanh", lambda F: lambda x: F.hardtanh(x, -0.5, 1.5, inplace=True)),
    ("hardtanh_", lambda F: lambda x: F.hardtanh_(x, -0.5, 1.5)),
    ("threshold", lambda F: lambda x: F.threshold(x, 0.2, -3.0, inplace=True)),
    ("threshold_", lambda F: lambda x: F.threshold_(x, 0.2, 3.0)),
    ("silu", lambda F: lambda x: F.silu(x, inplace=True)),
    ("mish", lambda F: lambda x: F.mish(x, inplace=True)),
    ("hardsigmoid", lambda F: lambda x: F.hardsigmoid(x, inplace=True)),
    ("hardswish", lambda F: lambda x: F.hardswish(x, inplace=True)),
    ("rrelu_eval", lambda F: lambda x: F.rrelu(x, 0.1, 0.3, inplace=True)),
    ("rrelu_", lambda F: lambda x: F.rrelu_(x, 0.1, 0.3)),
]


@pytest.mark.parametrize("name,make", INPLACE, ids=[a[0] for a in INPLACE])
def test_inplace(name, make):
    """The input itself comes back, written, one version later, with PyTorch's node (those
    saving the result are ``...Backward1``); gradients flow through it, also in forward mode
    and double backward."""
    a = data(4, 5)

    def run(lib, F):
        x = lib.tensor(a, requires_grad=True)
        h = x * 1.0
        v = h._version
        y = make(F)(h)
        assert y is h and h._version == v + 1
        return y, x

    (ye, xe), (yt, xt) = run(ember, EF), run(torch, TF)
    assert_same(ye, yt)
    assert ye.grad_fn.name() == yt.grad_fn.name()
    ge, = ember.autograd.grad(ye.sum(), xe)
    gt, = torch.autograd.grad(yt.sum(), xt)
    assert_same(ge, gt)
    # PyTorch has no forward AD for rrelu_ and no second derivative for hardsigmoid
    check_op(lambda x: make(EF)(x * 1.0), lambda x: make(TF)(x * 1.0), a,
             fwd="rrelu" not in name, double=name != "hardsigmoid")


def test_inplace_without_grad_and_on_views():
    a = data(4, 5)
    for lib, F in ((ember, EF), (torch, TF)):
        x = lib.tensor(a)
        assert F.elu_(x) is x and x._version == 1
    # a view of a non-leaf: the base's history is rebased (CopySlices)
    for fn in [lambda F, v: F.elu_(v), lambda F, v: F.leaky_relu(v, 0.1, inplace=True),
               lambda F, v: F.hardtanh_(v, -0.5, 0.5), lambda F, v: F.gelu(v)]:
        def f(F, fn=fn):
            def g(x):
                h = x * 2
                fn(F, h[1:3, ::2])
                return h
            return g
        check_op(f(EF), f(TF), a, double=False)


def test_inplace_errors():
    a = data(4, 5)
    raises_same(lambda: EF.elu_(ember.tensor(a, requires_grad=True)),
                lambda: TF.elu_(torch.tensor(a, requires_grad=True)))
    raises_same(lambda: EF.relu(ember.tensor(a, requires_grad=True), inplace=True),
                lambda: TF.relu(torch.tensor(a, requires_grad=True), inplace=True))
    # PyTorch refuses the backward of in-place ops with a negative slope (they save the result)
    for name, fn in [("leaky", lambda F, x: F.leaky_relu_(x, -0.1)),
                     ("elu", lambda F, x: F.elu_(x, -0.5)),
                     ("celu", lambda F, x: F.celu_(x, -0.5)),
                     ("rrelu", lambda F, x: F.rrelu_(x, -0.3, -0.1))]:
        xe = ember.tensor(a, requires_grad=True)
        xt = torch.tensor(a, requires_grad=True)
        ye, yt = fn(EF, xe * 1), fn(TF, xt * 1)
        assert_same(ye, yt)
        raises_same(lambda: ye.sum().backward(), lambda: yt.sum().backward())


# ---- errors and dtypes ---------------------------------------------------------------------------

def _both(fn, *arrays):
    raises_same(lambda: fn(EF, *[ember.from_numpy(a.copy()) for a in arrays]),
                lambda: fn(TF, *[torch.from_numpy(a.copy()) for a in arrays]))


def test_dtype_errors():
    ints = np.array([-2, -1, 0, 3])
    bools = np.array([True, False])
    for name in ["leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus",
                 "softshrink", "hardshrink", "hardsigmoid", "hardswish", "logsigmoid", "rrelu"]:
        _both(lambda F, x: getattr(F, name)(x), ints)
        _both(lambda F, x: getattr(F, name)(x), bools)
    _both(lambda F, x: F.relu(x), bools)
    _both(lambda F, x: F.relu6(x), bools)
    _both(lambda F, x: F.hardtanh(x), bools)
    _both(lambda F, x: F.threshold(x, 0, 1), bools)
    _both(lambda F, x: F.rrelu(x, training=True), ints)
    _both(lambda F, x: F.glu(x), ints.astype(np.float64)[:3])
    _both(lambda F, x: F.hardtanh(x.to(torch.uint8 if F is TF else ember.uint8)), ints[2:])
    for name in ["relu", "relu6", "hardtanh", "elu", "gelu", "softplus"]:
        _both(lambda F, x: getattr(F, name)(x), np.ones(3, np.complex64))


def test_integer_inputs():
    """relu, relu6, hardtanh and threshold keep integer dtypes (limits truncated to ints)."""
    ints = np.array([-3, -2, -1, 0, 1, 3, 7])
    for fn in [lambda F, x: F.relu(x), lambda F, x: F.relu6(x),
               lambda F, x: F.hardtanh(x, -1.5, 2.5), lambda F, x: F.threshold(x, 0.5, 5.5),
               lambda F, x: F.threshold(x, -1.5, 5.5), lambda F, x: F.softsign(x),
               lambda F, x: F.tanhshrink(x)]:
        assert_same(fn(EF, ember.tensor(ints)), fn(TF, torch.tensor(ints)))
    u = np.array([0, 1, 7], np.uint8)
    assert_same(EF.relu6(ember.tensor(u)), TF.relu6(torch.tensor(u)))


def test_argument_errors():
    x = data(4, 6, 5)
    _both(lambda F, t: F.glu(t, 2), x)
    _both(lambda F, t: F.glu(t, 3), x)
    _both(lambda F, t: F.glu(t[0, 0, 0]), x)
    _both(lambda F, t: F.hardtanh(t, 2.0, 1.0), x)
    _both(lambda F, t: F.rrelu(t, 0.5, 0.1, training=True), x)
    _both(lambda F, t: F.celu(t, 0.0), x)
    _both(lambda F, t: F.softshrink(t, -1.0), x)
    _both(lambda F, t: F.softshrink(t.float(), -1.0), x)
    _both(lambda F, t: F.softshrink(t.half(), -1.0), x)
    _both(lambda F, t: F.prelu(t, t[0, :5, 0]), x)
    _both(lambda F, t: F.prelu(t, t[:, :, 0]), x)
    _both(lambda F, t: F.prelu(t, t[0, :, 0].float()), x)
    _both(lambda F, t: F.prelu(t[0, 0, 0], t[0, :, 0]), x)
    _both(lambda F, t: F.prelu(t.long(), t[0, :, 0].long()), x)
    assert_same(EF.hardshrink(ember.tensor(x), -1.0), TF.hardshrink(torch.tensor(x), -1.0))


def test_tensor_methods():
    x, w = data(3, 4), np.array([0.25])
    assert_same(ember.tensor(x).hardshrink(0.3), torch.tensor(x).hardshrink(0.3))
    assert_same(ember.tensor(x).prelu(ember.tensor(w)), torch.tensor(x).prelu(torch.tensor(w)))


# ---- softmax family -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["softmax", "softmin", "log_softmax"])
def test_softmax_implicit_dim(name):
    """dim=None: PyTorch's implicit dim (0 for 0-, 1- and 3-d inputs, else 1) and its
    deprecation warning, attributed to the caller (``_stacklevel``)."""
    for shape in [(), (5,), (3, 4), (2, 3, 4), (2, 3, 4, 5)]:
        a = data(*shape)
        with warnings.catch_warnings(record=True) as we:
            warnings.simplefilter("always")
            e = getattr(EF, name)(ember.tensor(a))
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            t = getattr(TF, name)(torch.tensor(a))
        assert_same(e, t)
        assert [str(w.message) for w in we] == [str(w.message) for w in wt]
        assert [w.category for w in we] == [w.category for w in wt] == [UserWarning]
        assert we[0].filename == __file__
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        getattr(EF, name)(ember.tensor(data(3, 4)), _stacklevel=1)
    assert we[0].filename != __file__


@pytest.mark.parametrize("name", ["softmax", "softmin", "log_softmax"])
def test_softmax_dtype_and_errors(name):
    a = data(3, 4)
    check_op(lambda x: getattr(EF, name)(x, 1, dtype=ember.float32),
             lambda x: getattr(TF, name)(x, 1, dtype=torch.float32), a, double=False,
             rtol=1e-5, atol=1e-6)
    check_op(lambda x: getattr(EF, name)(x, 0, 3, ember.float64),
             lambda x: getattr(TF, name)(x, 0, 3, torch.float64), a.astype(np.float32))
    ints = np.array([1, 2, 3])
    _both(lambda F, x: getattr(F, name)(x, 0), ints)
    _both(lambda F, x: getattr(F, name)(x, 2), a)
    e = getattr(EF, name)(ember.tensor(ints), 0, dtype=ember.float32)
    assert_same(e, getattr(TF, name)(torch.tensor(ints), 0, dtype=torch.float32))
    if name == "softmin":
        _both(lambda F, x: F.softmin(x, 0), np.array([True, False]))


def test_gumbel_softmax():
    ember.manual_seed(0)
    logits = ember.tensor(data(6, 5), requires_grad=True)
    y = EF.gumbel_softmax(logits, tau=0.5)
    assert y.grad_fn.name() == "SoftmaxBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "DivBackward0"
    np.testing.assert_allclose(y.sum(-1).detach().numpy(), 1.0, rtol=1e-12)
    ember.manual_seed(0)
    y2 = EF.gumbel_softmax(logits, tau=0.5)
    assert np.array_equal(y.detach().numpy(), y2.detach().numpy())
    # hard: one-hot values, the soft sample's gradient (straight through)
    ember.manual_seed(3)
    h = EF.gumbel_softmax(logits, tau=0.5, hard=True, dim=0)
    ember.manual_seed(3)
    s = EF.gumbel_softmax(logits, tau=0.5, dim=0)
    assert h.grad_fn.name() == "AddBackward0"
    hv = h.detach().numpy()
    assert set(np.unique(hv)) <= {0.0, 1.0} and np.array_equal(hv.sum(0), np.ones(5))
    assert np.array_equal(hv.argmax(0), s.detach().numpy().argmax(0))
    w = ember.tensor(data(6, 5))
    gh, = ember.autograd.grad((h * w).sum(), logits)
    gs, = ember.autograd.grad((s * w).sum(), logits)
    np.testing.assert_allclose(gh.numpy(), gs.numpy(), rtol=1e-10)
    # the noise is Gumbel(0, 1): with zero logits and tau=1 argmax is uniform over classes
    ember.manual_seed(1)
    counts = np.bincount(EF.gumbel_softmax(ember.zeros(4000, 4), hard=True).numpy().argmax(1),
                         minlength=4)
    assert np.all(np.abs(counts / 4000 - 0.25) < 0.03)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        EF.gumbel_softmax(logits, eps=1e-5)
    _both(lambda F, x: F.gumbel_softmax(x), np.array([1, 2, 3]))


# ---- randomness: rrelu and dropout ----------------------------------------------------------

def test_rrelu_training():
    """Slopes drawn from [lower, upper] where x <= 0 (1 elsewhere), reproducible under
    manual_seed; the gradient is the slope used; in place it is RreluWithNoiseBackward1."""
    a = data(20000)
    ember.manual_seed(5)
    x = ember.tensor(a, requires_grad=True)
    y = EF.rrelu(x, 0.1, 0.4, training=True)
    assert y.grad_fn.name() == "RreluWithNoiseBackward0"
    slope = y.detach().numpy() / a
    neg = a <= 0
    assert np.all(slope[~neg] == 1) and np.all((slope[neg] >= 0.1) & (slope[neg] <= 0.4))
    assert abs(slope[neg].mean() - 0.25) < 0.01 and abs(slope[neg].std() - 0.3 / 12 ** 0.5) < 0.01
    g, = ember.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(g.numpy(), slope, rtol=1e-12)
    ember.manual_seed(5)
    assert np.array_equal(EF.rrelu(ember.tensor(a), 0.1, 0.4, training=True).numpy(),
                          y.detach().numpy())
    h = x * 1
    ember.manual_seed(5)
    assert EF.rrelu_(h, 0.1, 0.4, training=True) is h and h._version == 1
    assert h.grad_fn.name() == "RreluWithNoiseBackward1"
    assert np.array_equal(h.detach().numpy(), y.detach().numpy())
    g2, = ember.autograd.grad(h.sum(), x)
    assert np.array_equal(g2.numpy(), g.numpy())
    # forward mode: the tangent is scaled by the same slopes
    with ember.autograd.forward_ad.dual_level():
        ember.manual_seed(5)
        d = ember.autograd.forward_ad.make_dual(ember.tensor(a), ember.ones(20000,
                                                                          dtype=ember.float64))
        t = ember.autograd.forward_ad.unpack_dual(EF.rrelu(d, 0.1, 0.4, True)).tangent
    np.testing.assert_allclose(t.numpy(), slope, rtol=1e-12)


DROPOUTS = {
    "dropout": (EF.dropout, TF.dropout, (50, 400), False),
    "dropout1d": (EF.dropout1d, TF.dropout1d, (40, 50, 8), True),
    "dropout2d": (EF.dropout2d, TF.dropout2d, (40, 50, 2, 4), True),
    "dropout3d": (EF.dropout3d, TF.dropout3d, (40, 50, 2, 2, 2), True),
}


@pytest.mark.parametrize("name", list(DROPOUTS))
def test_dropout_statistics(name):
    """The dropped fraction is p (per element, or per channel for the feature versions),
    survivors are scaled by 1/(1-p), the gradient is the same mask and scale, the draw is
    reproducible under manual_seed, and the graph is PyTorch's (MulBackward0)."""
    fe, ft, shape, feature = DROPOUTS[name]
    a = np.abs(data(*shape)) + 0.5
    p = 0.3
    ember.manual_seed(7)
    x = ember.tensor(a, requires_grad=True)
    y = fe(x, p)
    assert y.grad_fn.name() == ft(torch.tensor(a, requires_grad=True), p).grad_fn.name()
    ratio = y.detach().numpy() / a
    kept = ratio != 0
    np.testing.assert_allclose(ratio[kept], 1 / (1 - p), rtol=1e-12)
    if feature:
        per_channel = kept.reshape(shape[0], shape[1], -1)
        assert np.all(per_channel.all(-1) | ~per_channel.any(-1))
        kept = per_channel[..., 0]
    assert abs(1 - kept.mean() - p) < 0.02
    g, = ember.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(g.numpy(), ratio, rtol=1e-12)
    ember.manual_seed(7)
    assert np.array_equal(fe(ember.tensor(a), p).numpy(), y.detach().numpy())
    assert not np.array_equal(fe(ember.tensor(a), p).numpy(), y.detach().numpy())


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropout_statistics(name):
    """Alpha dropout keeps zero mean and unit variance of a standard normal input; dropped
    elements all take one value; the gradient is the kept scale (AddBackward0)."""
    fe, ft = getattr(EF, name), getattr(TF, name)
    a = RNG.standard_normal((200, 100, 10))
    p = 0.2
    ember.manual_seed(11)
    x = ember.tensor(a, requires_grad=True)
    y = fe(x, p, training=True)
    assert y.grad_fn.name() == ft(torch.tensor(a, requires_grad=True), p, True).grad_fn.name()
    yv = y.detach().numpy()
    assert abs(yv.mean()) < 0.02 and abs(yv.std() - 1) < 0.02
    alpha = 1.7580993408473766
    scale = 1 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    dropped_value = scale * (alpha * p - alpha)
    dropped = np.isclose(yv, dropped_value, rtol=1e-12, atol=0)
    assert abs(dropped.mean() - p) < 0.02
    g, = ember.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(g.numpy(), np.where(dropped, 0, scale), rtol=1e-12)
    if name == "feature_alpha_dropout":
        gv = g.numpy()
        assert np.all((gv == gv[..., :1]))


def test_dropout_identity_and_edges():
    """Evaluation, p=0 and empty inputs return the input itself (as PyTorch); p=1 multiplies
    by zero; the alpha variants default to training=False."""
    a = data(4, 5)
    for lib, F in ((ember, EF), (torch, TF)):
        x = lib.tensor(a, requires_grad=True)
        for y in [F.dropout(x, training=False), F.dropout(x, 0.0), F.alpha_dropout(x),
                  F.feature_alpha_dropout(x), F.dropout(x, 0.5, False, inplace=True)]:
            assert y is x
        v = x[None, None]
        assert F.dropout2d(v, training=False) is v
        e = lib.zeros(0, 3, requires_grad=True)
        assert F.dropout(e, 0.5) is e
    for f in [lambda F, x: F.dropout(x, 1.0), lambda F, x: F.alpha_dropout(x, 1.0, True),
              lambda F, x: F.dropout2d(x[None, None], 1.0), lambda F, x: F.dropout1d(x, 1.0)]:
        check_op(lambda x: f(EF, x), lambda x: f(TF, x), a, double=False)
    ints = np.array([1, 2, 3])
    assert_same(EF.dropout(ember.tensor(ints), training=False),
                TF.dropout(torch.tensor(ints), training=False))
    _both(lambda F, x: F.dropout(x, 0.5), ints)
    _both(lambda F, x: F.dropout(x, 1.5), a)
    _both(lambda F, x: F.dropout(x, -0.5), a)
    _both(lambda F, x: F.alpha_dropout(x, 1.5), a)
    _both(lambda F, x: F.feature_alpha_dropout(x[0], 0.5, True), a)
    _both(lambda F, x: F.dropout1d(x[0], 0.5), a)
    _both(lambda F, x: F.dropout1d(x[None, None], 0.5), a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _both(lambda F, x: F.dropout2d(x[0], 0.5), a)


def test_dropout_warnings():
    a = data(2, 3, 4)
    for fn in [lambda F, x: F.dropout2d(x, 0.5), lambda F, x: F.dropout2d(x[None, None], 0.5),
               lambda F, x: F.dropout3d(x, 0.5)]:
        with warnings.catch_warnings(record=True) as we:
            warnings.simplefilter("always")
            fn(EF, ember.tensor(a))
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            fn(TF, torch.tensor(a))
        assert [str(w.message) for w in we] == [str(w.message) for w in wt]
        assert all(w.filename == __file__ for w in we)


def test_dropout_unbatched_shapes():
    """dropout1d/3d on unbatched inputs add and remove a batch dim (SqueezeBackward1)."""
    for fe, ft, shape in [(EF.dropout1d, TF.dropout1d, (6, 5)),
                          (EF.dropout3d, TF.dropout3d, (6, 2, 2, 3))]:
        a = np.abs(data(*shape)) + 1
        ember.manual_seed(2)
        y = fe(ember.tensor(a, requires_grad=True), 0.5)
        t = ft(torch.tensor(a, requires_grad=True), 0.5)
        assert y.shape == t.shape and y.grad_fn.name() == t.grad_fn.name()
        r = (y.detach().numpy() / a).reshape(shape[0], -1)
        assert np.all((r == 0).all(1) | (r == 2).all(1))


@pytest.mark.parametrize("kind", ["dropout", "dropout1d", "dropout2d", "dropout3d",
                                  "alpha_dropout", "feature_alpha_dropout"])
def test_dropout_inplace(kind):
    """inplace=True writes the input (version bump per PyTorch op), with PyTorch's node
    (except unbatched dropout1d/3d: see nn_activation), and gradients through the mask."""
    shapes = {"dropout": (8, 10), "dropout1d": (8, 10, 3), "dropout2d": (8, 10, 3, 2),
              "dropout3d": (8, 10, 2, 2, 2), "alpha_dropout": (8, 10),
              "feature_alpha_dropout": (8, 10, 3)}
    a = np.abs(data(*shapes[kind])) + 0.5
    fe, ft = getattr(EF, kind), getattr(TF, kind)
    ember.manual_seed(4)
    x = ember.tensor(a, requires_grad=True)
    h = x * 1
    y = fe(h, 0.4, True, inplace=True)
    xt = torch.tensor(a, requires_grad=True)
    ht = xt * 1
    yt = ft(ht, 0.4, True, inplace=True)
    assert y is h and yt is ht
    assert h._version == ht._version
    assert y.grad_fn.name() == yt.grad_fn.name()
    ember.manual_seed(4)
    ref = fe(ember.tensor(a), 0.4, True)
    assert np.array_equal(h.detach().numpy(), ref.numpy())
    g, = ember.autograd.grad(y.sum(), x)
    ember.manual_seed(4)
    xr = ember.tensor(a, requires_grad=True)
    gr, = ember.autograd.grad(fe(xr, 0.4, True).sum(), xr)
    assert np.array_equal(g.numpy(), gr.numpy())


def test_meta_device():
    """Meta inputs give meta results of PyTorch's shapes and dtypes."""
    cases = [lambda F, lib, x: F.gelu(x), lambda F, lib, x: F.elu(x, inplace=True),
             lambda F, lib, x: F.glu(x, 1), lambda F, lib, x: F.leaky_relu(x),
             lambda F, lib, x: F.prelu(x, lib.ones(4, device="meta")),
             lambda F, lib, x: F.rrelu(x, training=True), lambda F, lib, x: F.dropout(x),
             lambda F, lib, x: F.gumbel_softmax(x), lambda F, lib, x: F.softmin(x, 1),
             lambda F, lib, x: F.hardswish(x), lambda F, lib, x: F.mish(x)]
    for case in cases:
        e = case(EF, ember, ember.empty(2, 4, 3, device="meta"))
        t = case(TF, torch, torch.empty(2, 4, 3, device="meta"))
        assert e.is_meta and tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(
            t.dtype).replace("torch", "ember")


def test_complex_silu():
    z = (data(5) + 1j * data(5)).astype(np.complex128)
    assert_same(EF.silu(ember.tensor(z)), TF.silu(torch.tensor(z)))
    _both(lambda F, x: F.silu(x.requires_grad_()), z)
