"""torch.* names real programs call, against PyTorch: global settings (determinism, matmul
precision, warn_always, flush_denormal, set_default_tensor_type, typename), the in-place
function forms, the ATen-level nn functions with ATen's signatures (values, gradients, grad_fn
names, errors), frombuffer, and the Tensor methods added with them."""
from __future__ import annotations

import array
import warnings

import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, check_op, raises_same, to_np

RNG = np.random.default_rng(11)


def _arr(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape)


def _warnings(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = f()
    return r, [str(x.message).replace("torch.", "ember.") for x in w]


# ---- global settings ----------------------------------------------------------------------

@pytest.fixture
def restore_settings():
    yield
    for lib in (ember, torch):
        lib.use_deterministic_algorithms(False)
        lib.set_float32_matmul_precision("highest")
        lib.set_warn_always(False)
        lib.utils.deterministic.fill_uninitialized_memory = True


def test_deterministic_flags(restore_settings):
    for lib in (ember, torch):
        assert lib.are_deterministic_algorithms_enabled() is False
        lib.use_deterministic_algorithms(True, warn_only=True)
        assert lib.is_deterministic_algorithms_warn_only_enabled() is True
        assert lib.get_deterministic_debug_mode() == 1
        lib.set_deterministic_debug_mode("error")
        assert (lib.get_deterministic_debug_mode(), lib.are_deterministic_algorithms_enabled(),
                lib.is_deterministic_algorithms_warn_only_enabled()) == (2, True, False)
        lib.set_deterministic_debug_mode(0)
        assert lib.get_deterministic_debug_mode() == 0
    for bad in ("x", 3, 1.0):
        raises_same(lambda: ember.set_deterministic_debug_mode(bad),
                    lambda: torch.set_deterministic_debug_mode(bad))
    raises_same(lambda: ember.use_deterministic_algorithms(1),
                lambda: torch.use_deterministic_algorithms(1))
    raises_same(lambda: ember.use_deterministic_algorithms(True, warn_only=1),
                lambda: torch.use_deterministic_algorithms(True, warn_only=1))


def test_deterministic_fills_and_alerts(restore_settings):
    for lib in (ember, torch):
        lib.use_deterministic_algorithms(True)
    for dt in ("float32", "float64", "int64", "int8", "uint8", "bool", "complex64"):
        e = ember.empty(3, dtype=getattr(ember, dt))
        t = torch.empty(3, dtype=getattr(torch, dt))
        np.testing.assert_array_equal(to_np(e), to_np(t))
    np.testing.assert_array_equal(to_np(ember.empty_like(ember.ones(2, 2))),
                                  to_np(torch.empty_like(torch.ones(2, 2))))
    np.testing.assert_array_equal(to_np(ember.empty_strided((2, 2), (1, 2))),
                                  to_np(torch.empty_strided((2, 2), (1, 2))))
    np.testing.assert_array_equal(to_np(ember.zeros(2).new_empty(3)),
                                  to_np(torch.zeros(2).new_empty(3)))
    np.testing.assert_array_equal(to_np(ember.zeros(3).resize_(5)),
                                  to_np(torch.zeros(3).resize_(5)))
    raises_same(lambda: ember.zeros(4).put_(ember.tensor([0, 0]), ember.tensor([1.0, 2.0])),
                lambda: torch.zeros(4).put_(torch.tensor([0, 0]), torch.tensor([1.0, 2.0])))
    raises_same(lambda: ember.put(ember.zeros(4), ember.tensor([0]), ember.tensor([1.0])),
                lambda: torch.put(torch.zeros(4), torch.tensor([0]), torch.tensor([1.0])))
    ember.zeros(4).put_(ember.tensor([0, 0]), ember.tensor([1.0, 2.0]), accumulate=True)
    raises_same(lambda: ember.nn.functional.max_unpool1d(ember.ones(1, 1, 2),
                                                         ember.tensor([[[0, 2]]]), 2),
                lambda: torch.nn.functional.max_unpool1d(torch.ones(1, 1, 2),
                                                         torch.tensor([[[0, 2]]]), 2))
    for lib in (ember, torch):
        lib.use_deterministic_algorithms(True, warn_only=True)
    we = _warnings(lambda: ember.zeros(4).put_(ember.tensor([0]), ember.tensor([1.0])))[1]
    wt = _warnings(lambda: torch.zeros(4).put_(torch.tensor([0]), torch.tensor([1.0])))[1]
    assert len(we) == 1 and wt[0].startswith(we[0])
    for lib in (ember, torch):
        lib.utils.deterministic.fill_uninitialized_memory = False
        assert lib.utils.deterministic.fill_uninitialized_memory is False
    assert not np.isnan(ember.empty(3).numpy()).any()   # (ember's empty is zero-filled)
    raises_same(lambda: setattr(ember.utils.deterministic, "fill_uninitialized_memory", 0),
                lambda: setattr(torch.utils.deterministic, "fill_uninitialized_memory", 0))


def test_matmul_precision_and_warn_always(restore_settings):
    for p in ("high", "medium", "highest"):
        ember.set_float32_matmul_precision(p)
        torch.set_float32_matmul_precision(p)
        assert ember.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == p
    we = _warnings(lambda: ember.set_float32_matmul_precision("foo"))[1]
    wt = _warnings(lambda: torch.set_float32_matmul_precision("foo"))[1]
    assert we == wt and ember.get_float32_matmul_precision() == "highest"
    raises_same(lambda: ember.set_float32_matmul_precision(1),
                lambda: torch.set_float32_matmul_precision(1))
    for lib in (ember, torch):
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled() is True
        lib.set_warn_always(False)
        assert lib.is_warn_always_enabled() is False
    raises_same(lambda: ember.set_warn_always(1), lambda: torch.set_warn_always(1))
    raises_same(lambda: ember.set_flush_denormal(1), lambda: torch.set_flush_denormal(1))
    assert ember.set_flush_denormal(False) is False   # no FTZ/DAZ control: "not supported"
    for lib in (ember, torch):   # warn-once warnings come every time
        lib.set_warn_always(True)

    def twice(L):
        L.zeros(2, dtype=L.complex32)
        L.zeros(2, dtype=L.complex32)
        x = L.zeros(3)
        x.index_reduce_(0, L.tensor([0]), L.ones(1), "prod")
        x.index_reduce_(0, L.tensor([0]), L.ones(1), "prod")
        L.frombuffer(b"ab", dtype=L.uint8)
        L.frombuffer(b"ab", dtype=L.uint8)
    we, wt = _warnings(lambda: twice(ember))[1], _warnings(lambda: twice(torch))[1]
    assert len(we) == len(wt) == 6
    assert [w[:40] for w in we] == [w[:40] for w in wt]


def test_set_default_tensor_type():
    try:
        ember.set_warn_always(True)   # (the deprecation warning is given once per process)
        torch.set_warn_always(True)
        _, we = _warnings(lambda: ember.set_default_tensor_type(ember.DoubleTensor))
        _, wt = _warnings(lambda: torch.set_default_tensor_type(torch.DoubleTensor))
        ember.set_warn_always(False)
        torch.set_warn_always(False)
        assert we == wt and len(we) == 1
        assert ember.get_default_dtype() is ember.float64
        assert ember.tensor([1.0]).dtype is ember.float64 and ember.Tensor([1.0]).dtype is \
            ember.float64
        ember.set_default_tensor_type("torch.HalfTensor")
        assert ember.get_default_dtype() is ember.float16
        for bad in (ember.IntTensor, ember.float64, 3, "torch.cuda.FloatTensor", "foo"):
            tb = {ember.IntTensor: torch.IntTensor, ember.float64: torch.float64}.get(bad, bad) \
                if not isinstance(bad, str) else bad
            raises_same(lambda: ember.set_default_tensor_type(bad),
                        lambda: torch.set_default_tensor_type(tb))
    finally:
        ember.set_default_tensor_type(ember.FloatTensor)
        torch.set_default_tensor_type(torch.FloatTensor)
    assert ember.get_default_dtype() is ember.float32


def test_typename_and_predicates():
    for dt in ("float32", "int32", "bfloat16", "complex64", "bool"):
        e = ember.ones(2, dtype=getattr(ember, dt))
        t = torch.ones(2, dtype=getattr(torch, dt))
        assert ember.typename(e) == torch.typename(t).replace("torch.", "ember.")
    assert ember.typename(3) == torch.typename(3) == "int"
    assert ember.typename(ember.nn.Linear(2, 2)) == "ember.nn.modules.linear.Linear"
    assert ember.typename(ember.nn.Parameter) == "ember.nn.parameter.Parameter"
    e, t = ember.ones(2), torch.ones(2)
    assert ember.is_storage(e.untyped_storage()) and not ember.is_storage(e)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ember.is_storage(e.storage()) is torch.is_storage(t.storage()) is True
    assert ember.get_device(e) == torch.get_device(t) == -1
    assert ember.is_signed(e) and not ember.is_signed(ember.ones(2, dtype=ember.uint8))
    assert ember.is_inference(e) is False
    with ember.inference_mode():
        assert ember.is_inference(ember.ones(1))
    assert ember.is_same_size(e, ember.zeros(2)) and not ember.is_same_size(e, ember.zeros(3))
    assert ember.is_nonzero(ember.ones(1, 1)) and not ember.is_nonzero(ember.zeros(1))
    for args in ((2,), (0,)):
        raises_same(lambda: ember.is_nonzero(ember.ones(*args)),
                    lambda: torch.is_nonzero(torch.ones(*args)))
    raises_same(lambda: ember.get_device(3), lambda: torch.get_device(3))
    raises_same(lambda: ember.is_same_size(e, 3), lambda: torch.is_same_size(t, 3))
    raises_same(lambda: e.is_same_size(3), lambda: t.is_same_size(3))


def test_frombuffer():
    for buf, kw in ((array.array("i", [1, 2, 3]), dict(dtype="int32", count=2, offset=4)),
                    (bytearray(b"\x00\x00\x80\x3f" * 3), dict(dtype="float32")),
                    (bytearray(8), dict(dtype="int32", count=-2))):
        dt = kw.pop("dtype")
        e = ember.frombuffer(buf, dtype=getattr(ember, dt), **kw)
        t = torch.frombuffer(buf, dtype=getattr(torch, dt), **kw)
        assert_same(e, t)
    b = bytearray(8)
    e = ember.frombuffer(b, dtype=ember.int32)
    b[0] = 5
    assert e.tolist() == [5, 0]   # shares the buffer's memory
    e.add_(1)
    assert b[4] == 1
    for kw in (dict(dtype="int32"), dict(dtype="int32", count=3), dict(dtype="int32", offset=9),
               dict(dtype="int32", offset=-1), dict(dtype="int32", count=0),
               dict(dtype="int32", requires_grad=True)):
        dt = kw.pop("dtype")
        n = 3 if not kw else 8
        raises_same(lambda: ember.frombuffer(bytearray(n), dtype=getattr(ember, dt), **kw),
                    lambda: torch.frombuffer(bytearray(n), dtype=getattr(torch, dt), **kw))
    raises_same(lambda: ember.frombuffer(bytearray(0), dtype=ember.int32),
                lambda: torch.frombuffer(bytearray(0), dtype=torch.int32))
    raises_same(lambda: ember.frombuffer([1, 2], dtype=ember.int8),
                lambda: torch.frombuffer([1, 2], dtype=torch.int8))
    assert ember.frombuffer(bytearray(8), dtype=ember.float32, requires_grad=True).requires_grad


# ---- in-place function forms and detach ------------------------------------------------------

INPLACE_UNARY = ["abs_", "ceil_", "cos_", "deg2rad_", "erf_", "exp_", "exp2_", "expm1_", "fix_",
                 "floor_", "frac_", "neg_", "negative_", "rad2deg_", "reciprocal_", "round_",
                 "sigmoid_", "sin_", "sinc_", "sinh_", "square_", "tan_", "tanh_", "trunc_",
                 "zero_", "i0_", "atan_", "asinh_", "arctan_"]
INPLACE_POS = ["sqrt_", "rsqrt_", "log_", "log10_", "log2_", "log1p_", "acosh_", "arccosh_"]
NO_INPLACE_GRAD = ("asinh", "acosh", "atanh")
INPLACE_UNIT = ["acos_", "asin_", "atanh_", "arccos_", "arcsin_", "arctanh_", "erfc_",
                "logit_"]


@pytest.mark.parametrize("name", INPLACE_UNARY + INPLACE_POS + INPLACE_UNIT)
def test_inplace_function_forms(name):
    lo, hi = (1.1, 3.0) if name in INPLACE_POS else (-0.9, 0.9) if name in INPLACE_UNIT \
        else (-2.0, 2.0)
    a = _arr(3, 4, lo=lo, hi=hi)

    def fe(x):
        y = x * 1
        r = getattr(ember, name)(y)
        assert r is y
        return r

    def ft(x):
        y = x * 1
        return getattr(torch, name)(y)
    if name.rstrip("_").replace("arc", "a") in NO_INPLACE_GRAD:
        # PyTorch has no derivative for these in-place forms: values without grad, its error
        # with it
        check_op(fe, ft, a, argnums=(), double=False, fwd=False)
        raises_same(lambda: fe(ember.tensor(a, requires_grad=True)).sum().backward(),
                    lambda: ft(torch.tensor(a, requires_grad=True)).sum().backward())
    else:
        check_op(fe, ft, a, double=False, fwd=False)
    raises_same(lambda: getattr(ember, name)(3), lambda: getattr(torch, name)(3))


@pytest.mark.parametrize("call", [
    lambda L, x: L.clamp_(x, min=-0.5), lambda L, x: L.clamp_(x, -0.5, 0.5),
    lambda L, x: L.clip_(x, max=0.3), lambda L, x: L.clamp_max_(x, 0.2),
    lambda L, x: L.clamp_min_(x, min=0.1), lambda L, x: L.fill_(x, 2.5),
    lambda L, x: L.fill_(x, L.tensor(3.0, dtype=x.dtype)), lambda L, x: L.xlogy_(x, 2),
    lambda L, x: L.nan_to_num_(x, posinf=3.0), lambda L, x: L.round_(x, decimals=1),
    lambda L, x: L.logit_(x, eps=0.1), lambda L, x: L.ldexp_(x, L.ones_like(x)),
    lambda L, x: L.index_put_(x, (L.tensor([0, 2]),), L.tensor(5.0, dtype=x.dtype),
                              accumulate=True),
    lambda L, x: L.relu_(x), lambda L, x: L.selu_(x), lambda L, x: L.celu_(x, 0.5),
    lambda L, x: L.threshold_(x, 0.1, 2.0),
])
def test_inplace_forms_with_arguments(call):
    check_op(lambda x: call(ember, x * 1), lambda x: call(torch, x * 1), _arr(3, 4),
             double=False, fwd=False)


def test_inplace_integer_forms_and_errors():
    for name in ("gcd_", "lcm_"):
        e = getattr(ember, name)(ember.tensor([4, 6]), ember.tensor([6, 9]))
        t = getattr(torch, name)(torch.tensor([4, 6]), torch.tensor([6, 9]))
        assert_same(e, t)
    raises_same(lambda: ember.clamp_(ember.ones(2)), lambda: torch.clamp_(torch.ones(2)))
    raises_same(lambda: ember.sigmoid_(ember.tensor([1, 2])),
                lambda: torch.sigmoid_(torch.tensor([1, 2])))
    raises_same(lambda: ember.exp_(ember.ones(2, requires_grad=True)),
                lambda: torch.exp_(torch.ones(2, requires_grad=True)))


def test_detach_functions():
    e, t = ember.ones(2, requires_grad=True) * 2, torch.ones(2, requires_grad=True) * 2
    de, dt = ember.detach(e), torch.detach(t)
    assert de.requires_grad is dt.requires_grad is False
    assert de.data_ptr() == e.data_ptr()
    assert ember.detach_(e) is e and e.grad_fn is None and not e.requires_grad
    raises_same(lambda: ember.detach(3), lambda: torch.detach(3))


# ---- ATen-level nn functions -----------------------------------------------------------------

X4 = _arr(2, 3, 6, 5)
X3 = _arr(2, 3, 7)


@pytest.mark.parametrize("name,make", [
    ("conv1d", lambda L, x, w: L.conv1d(x, w, None, [1], [1], [1], 1)),
    ("conv2d", lambda L, x, w: L.conv2d(x, w, padding="same")),
    ("conv_transpose2d", lambda L, x, w: L.conv_transpose2d(x, w.transpose(0, 1), stride=2)),
    ("convolution", lambda L, x, w: L.convolution(x, w, None, [1, 1], [1, 0], [1, 1], False,
                                                  [0, 0], 1)),
    ("convolution_t", lambda L, x, w: L.convolution(x, w.transpose(0, 1), None, [2, 1],
                                                    [0, 0], [1, 1], True, [1, 0], 1)),
])
def test_convolutions(name, make):
    x = X3 if name == "conv1d" else X4
    w = _arr(4, 3, 3) if name == "conv1d" else _arr(4, 3, 3, 3)
    check_op(lambda a, b: make(ember, a, b), lambda a, b: make(torch, a, b), x, w,
             fwd=False, double=False)


def test_convolution_errors():
    x = _arr(3, 4)
    for f in (lambda L, a: L.convolution(a, a, None, [1], [0], [1], False, [0], 1),
              lambda L, a: L.convolution(a[None], a[None, None], None, [1], [0], [1], False, [0],
                                         1),
              lambda L, a: L.kl_div(a, a, True), lambda L, a: L.kl_div(a, a, 1.0)):
        raises_same(lambda: f(ember, ember.tensor(x)), lambda: f(torch, torch.tensor(x)))


@pytest.mark.parametrize("name,make", [
    ("batch_norm_train", lambda L, x, w, b: L.batch_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                         True)),
    ("batch_norm_eval", lambda L, x, w, b: L.batch_norm(
        x, w, b, L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype), False, 0.1, 1e-5, False)),
    ("instance_norm", lambda L, x, w, b: L.instance_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                         False)),
    ("layer_norm", lambda L, x, w, b: L.layer_norm(x, [5], b[:1].expand(5) * 0 + 1, None)),
    ("group_norm", lambda L, x, w, b: L.group_norm(x, 3, w, b, 1e-5, True)),
    ("rms_norm", lambda L, x, w, b: L.rms_norm(x, [6, 5])),
])
def test_norms(name, make):
    check_op(lambda x, w, b: make(ember, x, w, b), lambda x, w, b: make(torch, x, w, b),
             X4, _arr(3), _arr(3), fwd=False, double=False)


def test_norm_errors():
    x4 = X4
    raises_same(lambda: ember.batch_norm(ember.tensor(x4), None, None, None, None, False, 0.1,
                                         1e-5, True),
                lambda: torch.batch_norm(torch.tensor(x4), None, None, None, None, False, 0.1,
                                         1e-5, True))
    raises_same(lambda: ember.layer_norm(ember.tensor(x4), 5),
                lambda: torch.layer_norm(torch.tensor(x4), 5))


@pytest.mark.parametrize("make", [
    lambda L, x: L.max_pool1d(x, 2), lambda L, x: L.max_pool1d(x, 3, 2, 1, 1, True),
    lambda L, x: L.max_pool1d_with_indices(x, 2)[0], lambda L, x: L.adaptive_max_pool1d(x, 3)[0],
    lambda L, x: L.avg_pool1d(x, 2), lambda L, x: L.adaptive_avg_pool1d(x, 4),
])
def test_pool1d(make):
    check_op(lambda x: make(ember, x), lambda x: make(torch, x), X3, fwd=False, double=False)


@pytest.mark.parametrize("make", [
    lambda L, x: L.max_pool2d(x, 2), lambda L, x: L.max_pool2d(x, [3, 2], [], 1),
    lambda L, x: L.max_pool3d(x.unsqueeze(0), 2),
    lambda L, x: L.pixel_shuffle(x[:, :1].expand(2, 4, 6, 5), 2),
    lambda L, x: L.pixel_unshuffle(x, 1), lambda L, x: L.channel_shuffle(x, 3),
])
def test_pool2d_and_shuffles(make):
    check_op(lambda x: make(ember, x), lambda x: make(torch, x), X4, fwd=False, double=False)


def test_pool_return_types():
    e, t = ember.tensor(X3), torch.tensor(X3)
    for f in (lambda L, x: L.max_pool1d_with_indices(x, 2), lambda L, x:
              L.adaptive_max_pool1d(x, 2)):
        re, rt = f(ember, e), f(torch, t)
        assert type(re) is type(rt) is tuple
        assert_same(re[1], rt[1])
    assert isinstance(ember.max_pool2d(ember.tensor(X4), 2), ember.Tensor)


@pytest.mark.parametrize("make", [
    lambda L, x: L.celu(x, 0.5), lambda L, x: L.selu(x), lambda L, x: L.threshold(x, 0.1, 2.0),
    lambda L, x: L.hardshrink(x, 0.3), lambda L, x: L.rrelu(x, 0.1, 0.3),
    lambda L, x: L.prelu(x, L.ones(3, dtype=x.dtype) * 0.2),
    lambda L, x: L.dropout(x, 0.5, False), lambda L, x: L.alpha_dropout(x, 0.3, False),
    lambda L, x: L.feature_dropout(x, 0.0, True), lambda L, x: L.dropout(x, 1.0, True),
    lambda L, x: L.alpha_dropout(x, 1.0, True), lambda L, x: L.feature_alpha_dropout(x, 1.0, True),
    lambda L, x: L.native_dropout(x, 0.3, False),
])
def test_activations_and_deterministic_dropouts(make):
    check_op(lambda x: make(ember, x), lambda x: make(torch, x), X4, fwd=False, double=False)


def test_random_dropouts():
    ember.manual_seed(0)
    x = ember.tensor(X4, requires_grad=True)
    for f, node in ((lambda: ember.dropout(x, 0.5, True), "MulBackward0"),
                    (lambda: ember.feature_dropout(x, 0.5, True), "MulBackward0"),
                    (lambda: ember.alpha_dropout(x, 0.5, True), "AddBackward0"),
                    (lambda: ember.feature_alpha_dropout(x, 0.5, True), "AddBackward0")):
        y = f()
        assert y.grad_fn.name() == node
    y = ember.dropout(x, 0.5, True).detach().numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 2 * X4[kept])
    y = ember.feature_dropout(x, 0.5, True).detach().numpy()
    per_channel = (y != 0).reshape(6, -1)
    assert (per_channel.all(1) | ~per_channel.any(1)).all()
    out, mask = ember.native_dropout(x, 0.4, True)
    assert out.grad_fn.name() == "NativeDropoutBackward0" and mask.dtype is ember.bool
    np.testing.assert_allclose(out.detach().numpy(), X4 * mask.numpy() / 0.6)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), mask.numpy() / 0.6)
    y = ember.tensor(X4.copy())
    assert ember.dropout_(y, 0.5, True) is y
    g = ember.Generator().manual_seed(3)
    r1 = ember.rrelu(ember.tensor(X4), training=True, generator=g)
    r2 = ember.rrelu(ember.tensor(X4), training=True, generator=ember.Generator().manual_seed(3))
    np.testing.assert_array_equal(r1.numpy(), r2.numpy())
    assert not np.array_equal(r1.numpy(), ember.rrelu(ember.tensor(X4), training=True).numpy())
    for f in (lambda L: L.dropout(L.ones(2), 1.5, True),
              lambda L: L.alpha_dropout(L.ones(2), -0.1, False),
              lambda L: L.feature_dropout(L.ones(3), 0.5, True),
              lambda L: L.native_dropout(L.ones(2), 1.5, True),
              lambda L: L.dropout(L.ones(3, dtype=L.int64), 0.5, True),
              lambda L: L.rrelu(L.ones(2), 0.3, 0.1)):
        raises_same(lambda: f(ember), lambda: f(torch))


def test_embedding_aten_order():
    w = _arr(6, 3)
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    for kw in ({}, {"padding_idx": 2}, {"padding_idx": -3}, {"padding_idx": 9},
               {"scale_grad_by_freq": True}):
        check_op(lambda W: ember.embedding(W, ember.tensor(idx), **kw),
                 lambda W: torch.embedding(W, torch.tensor(idx), **kw), w, fwd=False,
                 double=False)
    raises_same(lambda: ember.embedding(ember.tensor([0, 4]), ember.tensor(w)),
                lambda: torch.embedding(torch.tensor([0, 4]), torch.tensor(w)))


Y = np.array([1.0, -1.0, 1.0, -1.0])


@pytest.mark.parametrize("red", [0, 1, 2, 5])
@pytest.mark.parametrize("make", [
    lambda L, a, b, r: L.kl_div(a, b.abs(), r),
    lambda L, a, b, r: L.kl_div(a, b, r, log_target=True),
    lambda L, a, b, r: L.binary_cross_entropy_with_logits(a, b.sigmoid(), None, None, r),
    lambda L, a, b, r: L.binary_cross_entropy_with_logits(a, b.sigmoid(), reduction=r,
                                                          pos_weight=L.ones(3, dtype=a.dtype)),
    lambda L, a, b, r: L.margin_ranking_loss(a[:, 0], b[:, 0], L.tensor(Y), 0.1, r),
    lambda L, a, b, r: L.hinge_embedding_loss(a, L.tensor(Y).unsqueeze(1).expand(4, 3), 1.0, r),
    lambda L, a, b, r: L.cosine_embedding_loss(a, b, L.tensor(Y), 0.2, r),
    lambda L, a, b, r: L.poisson_nll_loss(a, b.abs(), True, True, 1e-8, r),
    lambda L, a, b, r: L.triplet_margin_loss(a, b, a + 1, 1.0, 2.0, 1e-6, True, r),
])
def test_losses_int_reduction(make, red):
    check_op(lambda a, b: make(ember, a, b, red), lambda a, b: make(torch, a, b, red),
             _arr(4, 3), _arr(4, 3), fwd=False, double=False)


def test_loss_defaults_unreduced_and_errors():
    a, b = _arr(4, 3), _arr(4, 3)
    assert ember.kl_div(ember.tensor(a), ember.tensor(b)).shape == \
        torch.kl_div(torch.tensor(a), torch.tensor(b)).shape == (4, 3)
    raises_same(lambda: ember.kl_div(ember.tensor(a), ember.tensor(b), "mean"),
                lambda: torch.kl_div(torch.tensor(a), torch.tensor(b), "mean"))
    # an input broadcast to the target's shape (PyTorch's backward then fails: forward only)
    check_op(lambda x, y: ember.binary_cross_entropy_with_logits(x[0], y, reduction=1),
             lambda x, y: torch.binary_cross_entropy_with_logits(x[0], y, reduction=1),
             a, np.abs(b) / 2, argnums=())
    raises_same(lambda: ember.binary_cross_entropy_with_logits(ember.tensor(a),
                                                               ember.tensor(b[0])),
                lambda: torch.binary_cross_entropy_with_logits(torch.tensor(a),
                                                               torch.tensor(b[0])))


@pytest.mark.parametrize("red", [0, 1, 2])
def test_ctc_loss(red):
    lp = np.log(RNG.dirichlet(np.ones(4), size=(6, 2)))
    tg = np.array([[1, 2], [1, 1]])
    for lens in (([6, 5], [2, 1]), None):
        if lens is None:
            fe = lambda x: ember.ctc_loss(x, ember.tensor(tg), ember.tensor([6, 6]),  # noqa: E731
                                          ember.tensor([2, 2]), 0, red)
            ft = lambda x: torch.ctc_loss(x, torch.tensor(tg), torch.tensor([6, 6]),  # noqa: E731
                                          torch.tensor([2, 2]), 0, red)
        else:
            fe = lambda x: ember.ctc_loss(x, ember.tensor(tg), *lens, 0, red)  # noqa: E731
            ft = lambda x: torch.ctc_loss(x, torch.tensor(tg), *lens, 0, red)  # noqa: E731
        check_op(fe, ft, lp, fwd=False, double=False)


@pytest.mark.parametrize("make", [
    lambda L, a, b: L.bilinear(a, b, L.ones(2, 3, 3, dtype=a.dtype)),
    lambda L, a, b: L.cosine_similarity(a, b), lambda L, a, b: L.pairwise_distance(a, b),
    lambda L, a, b: L.pdist(a), lambda L, a, b: L.chain_matmul(a, b.T, a),
    lambda L, a, b: L.nuclear_norm(a), lambda L, a, b: L.nuclear_norm(a, True),
    lambda L, a, b: L.nuclear_norm(a.reshape(2, 2, 3)),
    lambda L, a, b: L.nuclear_norm(a.reshape(2, 2, 3), (0, 2), True),
    lambda L, a, b: L.frobenius_norm(a, (0, 1)), lambda L, a, b: L.frobenius_norm(a, 1, True),
    lambda L, a, b: L.norm_except_dim(a, 2, 0), lambda L, a, b: L.norm_except_dim(a, 3, 1),
    lambda L, a, b: L.norm_except_dim(a, 2, -1),
    lambda L, a, b: L.addmv_(a[:, 0] * 1, a, b[0], beta=2, alpha=0.5),
])
def test_matrix_helpers(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(lambda a, b: make(ember, a, b), lambda a, b: make(torch, a, b), _arr(4, 3),
                 _arr(4, 3), fwd=False, double=False)


def test_deprecation_warnings_and_matrix_errors():
    a = _arr(3, 3)
    we = _warnings(lambda: ember.chain_matmul(ember.tensor(a), ember.tensor(a)))[1]
    wt = _warnings(lambda: torch.chain_matmul(torch.tensor(a), torch.tensor(a)))[1]
    assert we == wt
    raises_same(lambda: ember.chain_matmul(), lambda: torch.chain_matmul())
    raises_same(lambda: ember.chain_matmul([ember.tensor(a)]),
                lambda: torch.chain_matmul([torch.tensor(a)]))
    raises_same(lambda: ember.nuclear_norm(ember.ones(2)),
                lambda: torch.nuclear_norm(torch.ones(2)))


@pytest.mark.parametrize("modes", [(0, 0), (1, 1), (2, 2), (0, 2)])
def test_grid_sampler_and_affine_grid(modes):
    x = _arr(2, 3, 4, 5)
    grid = _arr(2, 3, 3, 2, lo=-1.2, hi=1.2)
    check_op(lambda a, g: ember.grid_sampler(a, g, modes[0], modes[1], False),
             lambda a, g: torch.grid_sampler(a, g, modes[0], modes[1], False), x, grid,
             fwd=False, double=False)
    check_op(lambda th: ember.affine_grid_generator(th, [2, 3, 4, 5], True),
             lambda th: torch.affine_grid_generator(th, [2, 3, 4, 5], True), _arr(2, 2, 3),
             fwd=False, double=False)


def test_same_objects_as_functional():
    import ember.nn.functional as F
    for name in ("conv2d", "conv_tbc", "pixel_shuffle", "bilinear", "pdist", "prelu", "relu_"):
        assert getattr(ember, name) is getattr(F, name)


# ---- Tensor methods -------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda L, s, a, b: (s * 1).addmm_(a, b.T, beta=0.5, alpha=2),
    lambda L, s, a, b: (s[:, 0] * 1).addmv_(a, b[0]),
    lambda L, s, a, b: (s.expand(2, 4, 4) * 1).baddbmm_(a.expand(2, 4, 3),
                                                         b.T.expand(2, 3, 4), alpha=2),
    lambda L, s, a, b: a.narrow_copy(1, 1, 2), lambda L, s, a, b: L.narrow_copy(a, 0, 0, 1),
    lambda L, s, a, b: (s * 1).as_strided_((3, 2), (1, 4), 2),
    lambda L, s, a, b: L.as_strided_(s.t() * 1, (4,), (5,)),
])
def test_inplace_gemms_and_narrow_copy(make):
    check_op(lambda s, a, b: make(ember, s, a, b), lambda s, a, b: make(torch, s, a, b),
             _arr(4, 4), _arr(4, 3), _arr(4, 3), fwd=False, double=False)


def test_tensor_method_errors():
    for f in (lambda L: L.ones(4).addmm_(L.ones(4, 4), L.ones(4, 4)),
              lambda L: L.ones(1, 4).addmm_(L.ones(4, 4), L.ones(4, 4)),
              lambda L: L.ones(4, 4, requires_grad=True).addmm_(L.ones(4, 4), L.ones(4, 4)),
              lambda L: L.ones(2).addmv_(L.ones(3, 4), L.ones(4)),
              lambda L: L.ones(3).narrow_copy(0, 5, 1),
              lambda L: L.arange(6.0).as_strided_((2,), (5,), 2),
              lambda L: L.arange(6.0, requires_grad=True).as_strided_((2,), (2,)),
              lambda L: L.as_strided_(3, (2,), (2,)),
              lambda L: L.ones(2).is_set_to(3),
              lambda L: L.ones(2).pin_memory(),
              lambda L: L.ones(2, requires_grad=True).apply_(lambda v: v),
              lambda L: L.ones(2).map_(L.ones(1, requires_grad=True), lambda a, b: a),
              lambda L: L.ones(2).map_(L.ones(3), lambda a, b: a),
              lambda L: L.ones(2).map_(3, lambda a, b: a),
              lambda L: L.ones(2).map_(L.ones(2, dtype=L.int64), lambda a, b: a),
              lambda L: L.ones(2).map2_(L.ones(2, dtype=L.int64), L.ones(2), lambda a, b, c: a),
              lambda L: L.ones(2).map2_(L.ones(2), L.ones(2, dtype=L.int64), lambda a, b, c: a),
              lambda L: L.ones(2).map2_(L.ones(3), L.ones(2), lambda a, b, c: a),
              lambda L: L.ones(2).apply_(lambda v: "a"),
              lambda L: L.ones(2).resize(3),
              lambda L: L.ones(1, 3).dim_order(ambiguity_check=True),
              lambda L: L.ones(2).dim_order(ambiguity_check=3)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raises_same(lambda: f(ember), lambda: f(torch))


def test_tensor_methods():
    e, t = ember.tensor(_arr(3, 4)), None
    t = torch.tensor(e.numpy())
    assert_same(ember.arange(6.0).as_strided_((2, 2), (1, 2)),
                torch.arange(6.0).as_strided_((2, 2), (1, 2)))
    assert_same(ember.as_strided_(ember.arange(6.0), (2,), (2,), 1),
                torch.as_strided_(torch.arange(6.0), (2,), (2,), 1))
    assert e.is_set_to(e) and e.is_set_to(e.detach()) and not e.is_set_to(e.view(12))
    assert e.is_pinned() is t.is_pinned() is False
    for f in (lambda x: x.clone().apply_(lambda v: v * 2 + 1),
              lambda x: x.clone().map_(x[0], lambda a, b: a - b),
              lambda x: x.clone().map2_(x, x[:, :1], lambda a, b, c: a * b + c),
              lambda x: x.long().apply_(lambda v: v * 2.5),
              lambda x: x.bool().apply_(lambda v: 2), lambda x: x.cfloat().apply_(lambda v: v * 1j),
              lambda x: x.bfloat16().apply_(lambda v: v * 1.01)):
        assert_same(f(e), f(t))
    for shape, perm in (((2, 3), None), ((2, 3, 4, 5), (0, 2, 3, 1)), ((2, 3, 4), (2, 0, 1)),
                        ((3, 1, 4), (1, 0, 2))):
        a, b = ember.zeros(*shape), torch.zeros(*shape)
        if perm is not None:
            a, b = a.permute(*perm), b.permute(*perm)
        assert a.dim_order() == b.dim_order()
    for make in (lambda L: L.zeros(2, 3, 4), lambda L: L.zeros(2, 1, 3),
                 lambda L: L.zeros(3, 4).t(), lambda L: L.zeros(2, 3, 4, 5).permute(0, 2, 3, 1),
                 lambda L: L.zeros(2, 3, 4, 5).to(memory_format=L.channels_last)):
        for amb in (lambda L: False, lambda L: True, lambda L: [L.contiguous_format],
                    lambda L: [L.channels_last, L.contiguous_format]):
            res = []
            for L in (ember, torch):
                try:
                    res.append(make(L).dim_order(ambiguity_check=amb(L)))
                except RuntimeError as e:
                    res.append(str(e))
            assert res[0] == res[1]
    x = ember.ones(2, 6, requires_grad=True)
    r, w = _warnings(lambda: x.resize(3, 4))
    assert w == ["non-inplace resize is deprecated"] and r.grad_fn.name() == "ResizeBackward"
    r.sum().backward()
    assert x.grad.shape == (2, 6)
    assert _warnings(lambda: x.resize_as(ember.ones(12)))[1] == \
        ["non-inplace resize_as is deprecated"]


@pytest.mark.parametrize("call", [
    lambda L, x: L.solve(x, x), lambda L, x: L.lstsq(x, x), lambda L, x: L.eig(x),
    lambda L, x: L.symeig(x), lambda L, x: L.matrix_rank(x), lambda L, x: x.solve(x),
    lambda L, x: x.lstsq(x), lambda L, x: x.eig(), lambda L, x: x.symeig(),
])
def test_removed_linalg(call):
    raises_same(lambda: call(ember, ember.eye(2)), lambda: call(torch, torch.eye(2)))


# ---- compile: eager, with PyTorch's wrapper shapes and refusals ---------------------------------
# (torch.compile itself is not called: importing its compiler takes longer than this whole file;
# the messages below are PyTorch 2.13's)

def test_compile_module_and_function():
    m = ember.nn.Linear(3, 2)
    c = ember.compile(m)
    assert type(c).__name__ == "OptimizedModule" and c._orig_mod is m
    assert list(c.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert c.weight is m.weight and c.in_features == 3
    assert repr(c) == ("OptimizedModule(\n  (_orig_mod): Linear(in_features=3, out_features=2, "
                       "bias=True)\n)")
    x = ember.ones(4, 3)
    np.testing.assert_array_equal(c(x).detach().numpy(), m(x).detach().numpy())
    c.eval()
    assert m.training is False
    c(x).sum().backward()
    assert m.weight.grad is not None

    def f(x, k=1):
        return x * k + 1
    cf = ember.compile(f, fullgraph=True, dynamic=False, backend="eager", mode="default")
    assert cf.__wrapped__ is f and cf.__name__ == "f" and cf(x, k=2).tolist()[0] == [3.0] * 3
    assert ember.compile(backend="inductor")(f)(x).tolist()[0] == [2.0] * 3
    assert ember.compile(f, disable=True) is f and ember.compile(m, disable=True) is m


@pytest.mark.parametrize("kwargs,exc,msg", [
    (dict(backend="foo"), "InvalidBackend",
     "Invalid backend: 'foo', see `torch._dynamo.list_backends()` for available backends."),
    (dict(mode="foo"), "RuntimeError", "Unrecognized mode=foo, should be one of: default, lite, "
     "reduce-overhead, max-autotune-no-cudagraphs, max-autotune"),
    (dict(mode="max-autotune", options={"a": 1}), "RuntimeError",
     "Either mode or options can be specified, but both can't be specified at the same time."),
    (dict(mode="max-autotune"), "NotImplementedError", None),
    (dict(options={"max_autotune": True}), "NotImplementedError", None),
    (dict(backend=lambda gm, example_inputs: gm), "NotImplementedError", None),
])
def test_compile_refusals(kwargs, exc, msg):
    with pytest.raises(Exception) as info:
        ember.compile(lambda x: x, **kwargs)
    assert type(info.value).__name__ == exc
    if msg is not None:
        assert str(info.value) == msg
    with pytest.raises(AssertionError, match="A callable function is expected, but <class 'int'>"):
        ember.compile(3)


def test_small_remaining_names():
    w = _arr(4, 3)
    w[0] *= 3   # (a row above max_norm, and rows below it)
    for idx in ([0, 0, 2], [1], []):
        e, t = ember.tensor(w), torch.tensor(w)
        ie, it = ember.tensor(idx, dtype=ember.int64), torch.tensor(idx, dtype=torch.int64)
        re_, rt = ember.embedding_renorm_(e, ie, 1.0, 2.0), torch.embedding_renorm_(t, it, 1.0,
                                                                                     2.0)
        assert re_ is e and rt is t
        assert_same(e, t)
        assert e._version == t._version
    for f in (lambda L: L.embedding_renorm_(L.ones(3), L.tensor([0.0]), 1.0, 2.0),
              lambda L: L.embedding_renorm_(L.ones(3, 2), L.tensor([0.0]), 1.0, 2.0),
              lambda L: L.embedding_renorm_(L.ones(3, 2, requires_grad=True), L.tensor([0]),
                                            1.0, 2.0),
              lambda L: L.ones(2).xpu(),
              lambda L: L.ones(2).ipu(), lambda L: L.ones(2).mtia()):
        raises_same(lambda: f(ember), lambda: f(torch))
    msgs = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            lib.ones(2).reinforce(1)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]   # (verbatim: it names PyTorch's docs)
    e, t = ember.tensor(w), torch.tensor(w)
    assert e.to_dense() is e and t.to_dense() is t
    assert_same(e.to_dense(ember.float32), t.to_dense(torch.float32))
    assert e.const_data_ptr() == e.data_ptr() and e.is_shared() is t.is_shared() is False
    assert_same(e.hash_tensor(), t.hash_tensor())
    assert_same(e.hash_tensor(1, keepdim=True), t.hash_tensor(1, keepdim=True))


def test_dlpack_exchange():
    x = np.arange(6.0).reshape(2, 3)
    e = ember.from_dlpack(x)
    e[0, 0] = 7.0
    assert x[0, 0] == 7.0   # shares NumPy's memory
    t = torch.arange(4.0)
    e = ember.from_dlpack(t)
    e.add_(1)
    assert t.tolist() == [1.0, 2.0, 3.0, 4.0]   # shares PyTorch's memory
    back = torch.from_dlpack(e)
    back.mul_(2)
    assert e.tolist() == [2.0, 4.0, 6.0, 8.0]
    assert_same(ember.from_dlpack(ember.to_dlpack(e)), torch.from_dlpack(torch.to_dlpack(t)))
    assert ember.utils.dlpack.from_dlpack is ember.from_dlpack
    assert e.__dlpack_device__() == t.__dlpack_device__() == (1, 0)
    m = ember.arange(6.0).reshape(2, 3).T   # a non-contiguous tensor keeps its strides
    assert ember.from_dlpack(m).stride() == torch.from_dlpack(
        torch.arange(6.0).reshape(2, 3).T).stride()
    for f in (lambda L: L.from_dlpack(3), lambda L: L.ones(2, requires_grad=True).__dlpack__(),
              lambda L: L.ones(2).__dlpack__(stream=1)):
        raises_same(lambda: f(ember), lambda: f(torch))


@pytest.mark.parametrize("cell,gates", [("lstm_cell", 4), ("gru_cell", 3), ("rnn_tanh_cell", 1),
                                        ("rnn_relu_cell", 1)])
@pytest.mark.parametrize("bias", [True, False])
def test_rnn_cells(cell, gates, bias):
    arrays = [_arr(2, 3), _arr(2, 4), _arr(4 * gates, 3), _arr(4 * gates, 4)]
    arrays += [_arr(4 * gates), _arr(4 * gates)] if bias else []
    if cell == "lstm_cell":
        arrays.insert(2, _arr(2, 4))

        def call(L, x, h, c, *w):
            return getattr(L, cell)(x, (h, c), *w)
    else:
        def call(L, x, h, *w):
            return getattr(L, cell)(x, h, *w)
    check_op(lambda *a: call(ember, *a), lambda *a: call(torch, *a), *arrays, fwd=False,
             double=False)


def test_lstm_cell_error():
    a = _arr(2, 3)
    raises_same(lambda: ember.lstm_cell(ember.tensor(a), (ember.zeros(2, 4),),
                                        ember.zeros(16, 3), ember.zeros(16, 4)),
                lambda: torch.lstm_cell(torch.tensor(a), (torch.zeros(2, 4),),
                                        torch.zeros(16, 3), torch.zeros(16, 4)))
