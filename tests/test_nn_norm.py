"""ember.nn.functional normalisation layers against PyTorch."""
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

RNG = np.random.default_rng(4321)


def data(*shape, dtype=np.float64):
    return (RNG.standard_normal(shape) * 1.5 + 0.3).astype(dtype)


def pos(*shape):
    return np.abs(data(*shape)) + 0.5


def _both(fn, *arrays):
    raises_same(lambda: fn(EF, ember, *[ember.from_numpy(a.copy()) for a in arrays]),
                lambda: fn(TF, torch, *[torch.from_numpy(a.copy()) for a in arrays]))


# ---- OpInfo samples ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("name", ["nn.functional.batch_norm", "nn.functional.instance_norm",
                                  "nn.functional.group_norm", "nn.functional.rms_norm"])
def test_opinfo(name, dtype):
    assert check_opinfo(name, dtype) >= 6


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_opinfo_layer_norm(dtype):
    # a 1-element row: PyTorch's float32 backward leaves rounding noise where ember's is 0
    assert check_opinfo("nn.functional.layer_norm", dtype,
                        atol=None if dtype == torch.float64 else 2e-5) == 6


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_opinfo_normalize(dtype):
    # a 1-element norm: x / |x| has a zero gradient that float32 leaves as rounding noise
    assert check_opinfo("nn.functional.normalize", dtype,
                        atol=None if dtype == torch.float64 else 1e-5) == 8


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_opinfo_local_response_norm(dtype):
    n = 0
    for info in opinfos("nn.functional.local_response_norm"):
        for s in info.sample_inputs("cpu", dtype, requires_grad=True):
            if s.input.numel() == 0:
                # the input itself comes back (opinfo.py's grad_fn check needs a node)
                x = ember.zeros(0, 1, 2, requires_grad=True)
                assert EF.local_response_norm(x, *s.args, **s.kwargs) is x
            else:
                check_sample(info, s)
            n += 1
    assert n == 11


# ---- gradients of every order ------------------------------------------------------------------

def bn(F, lib, training, affine=True, running=True):
    def f(x, w, b):
        rm = lib.tensor(np.linspace(-0.5, 0.5, x.shape[1])) if running else None
        rv = lib.tensor(np.linspace(0.5, 2.0, x.shape[1])) if running else None
        return F.batch_norm(x, rm, rv, w if affine else None, b if affine else None, training,
                            0.2, 1e-3)
    return f


@pytest.mark.parametrize("training,affine,running", [(True, True, True), (True, False, False),
                                                     (False, True, True), (False, False, True)])
def test_batch_norm_double_backward(training, affine, running):
    for shape in [(6, 3), (4, 3, 5), (3, 2, 4, 3)]:
        c = shape[1]
        check_op(lambda x, w, b: bn(EF, ember, training, affine, running)(x, w, b),
                 lambda x, w, b: bn(TF, torch, training, affine, running)(x, w, b),
                 data(*shape), data(c), data(c))


@pytest.mark.parametrize("shape,ns", [((4, 6), (6,)), ((2, 3, 5), (5,)), ((2, 3, 5), (3, 5)),
                                      ((3, 4, 2, 2), (4, 2, 2))])
def test_layer_norm_double_backward(shape, ns):
    check_op(lambda x, w, b: EF.layer_norm(x, ns, w, b, 1e-4),
             lambda x, w, b: TF.layer_norm(x, ns, w, b, 1e-4), data(*shape), data(*ns), data(*ns))
    check_op(lambda x: EF.layer_norm(x, ns), lambda x: TF.layer_norm(x, ns), data(*shape))
    check_op(lambda x, w: EF.layer_norm(x, ns, w), lambda x, w: TF.layer_norm(x, ns, w),
             data(*shape), data(*ns))


@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 4), 2), ((2, 4, 3, 2), 1),
                                          ((2, 4, 3), 4)])
def test_group_norm_double_backward(shape, groups):
    c = shape[1]
    check_op(lambda x, w, b: EF.group_norm(x, groups, w, b, 1e-3),
             lambda x, w, b: TF.group_norm(x, groups, w, b, 1e-3), data(*shape), data(c),
             data(c))
    check_op(lambda x: EF.group_norm(x, groups), lambda x: TF.group_norm(x, groups),
             data(*shape))


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_double_backward(use_input_stats):
    def f(F, lib):
        def g(x, w, b):
            rm = lib.tensor(np.linspace(-0.5, 0.5, 3))
            rv = lib.tensor(np.linspace(0.5, 2.0, 3))
            return F.instance_norm(x, rm, rv, w, b, use_input_stats, 0.3, 1e-3)
        return g
    check_op(f(EF, ember), f(TF, torch), data(2, 3, 5), data(3), data(3))
    check_op(lambda x: EF.instance_norm(x), lambda x: TF.instance_norm(x), data(2, 3, 2, 3))


@pytest.mark.parametrize("shape,ns", [((4, 6), (6,)), ((2, 3, 5), (3, 5))])
def test_rms_norm_double_backward(shape, ns):
    check_op(lambda x, w: EF.rms_norm(x, ns, w), lambda x, w: TF.rms_norm(x, ns, w),
             data(*shape), data(*ns))
    check_op(lambda x: EF.rms_norm(x, ns, eps=0.1), lambda x: TF.rms_norm(x, ns, eps=0.1),
             data(*shape))


def test_composite_norms_double_backward():
    check_op(lambda x: EF.local_response_norm(x, 3, 0.1, 0.6, 1.5),
             lambda x: TF.local_response_norm(x, 3, 0.1, 0.6, 1.5), data(2, 5, 4))
    check_op(lambda x: EF.local_response_norm(x, 2), lambda x: TF.local_response_norm(x, 2),
             data(2, 4, 3, 2))
    check_op(lambda x: EF.local_response_norm(x, 4, 0.2), lambda x: TF.local_response_norm(x, 4,
                                                                                          0.2),
             data(1, 6, 2, 2, 2))
    check_op(lambda x: EF.normalize(x), lambda x: TF.normalize(x), data(3, 4, 2))
    check_op(lambda x: EF.normalize(x, 1.0, -1, 1e-3), lambda x: TF.normalize(x, 1.0, -1, 1e-3),
             data(3, 4))


# ---- names, saved values, dtypes ----------------------------------------------------------------

def test_node_names():
    x, w = data(4, 6, 5), data(6)
    cases = [
        lambda F, lib, x, w: F.batch_norm(x, None, None, w, w, True),
        lambda F, lib, x, w: F.batch_norm(x, None, None, training=True),
        lambda F, lib, x, w: F.batch_norm(x, x[0, :, 0].detach(), x[0, :, 0].detach() ** 2, w),
        lambda F, lib, x, w: F.instance_norm(x, weight=w, bias=w),
        lambda F, lib, x, w: F.layer_norm(x, (5,)),
        lambda F, lib, x, w: F.layer_norm(x, (6, 5), x[0], x[1]),
        lambda F, lib, x, w: F.group_norm(x, 3, w, w),
        lambda F, lib, x, w: F.rms_norm(x, (5,)),
        lambda F, lib, x, w: F.rms_norm(x, (5,), w[:5]),
        lambda F, lib, x, w: F.rms_norm(x.float(), (5,), w[:5]),
        lambda F, lib, x, w: F.rms_norm(x.half(), (5,), w[:5].float()),
        lambda F, lib, x, w: F.local_response_norm(x, 2),
        lambda F, lib, x, w: F.normalize(x),
        lambda F, lib, x, w: F.batch_norm(x[:0], None, None, training=True),
    ]
    for case in cases:
        ye = case(EF, ember, ember.tensor(x, requires_grad=True), ember.tensor(w,
                                                                                requires_grad=True))
        with warnings.catch_warnings():   # torch: no fused rms_norm for mixed dtypes
            warnings.simplefilter("ignore")
            yt = case(TF, torch, torch.tensor(x, requires_grad=True),
                      torch.tensor(w, requires_grad=True))
        assert_same(ye, yt, rtol=1e-3, atol=1e-3)
        assert ye.grad_fn.name() == yt.grad_fn.name()


def test_saved_values():
    x = data(4, 6, 5)
    for lib, F in ((ember, EF), (torch, TF)):
        t = lib.tensor(x, requires_grad=True)
        y = F.batch_norm(t, None, None, training=True, eps=0.01)
        assert y.grad_fn._saved_eps == pytest.approx(0.01)
        assert y.grad_fn._saved_input.shape == (4, 6, 5)
        y = F.layer_norm(t, (5,), lib.ones(5, dtype=lib.float64, requires_grad=True))
        assert tuple(y.grad_fn._saved_weight.shape) == (5,)


def run_all(F, t, w, rm, rv, ln_w):
    return [F.batch_norm(t, rm, rv, w, w, True), F.batch_norm(t, rm, rv, w, w, False),
            F.layer_norm(t, (5,), ln_w, ln_w), F.group_norm(t, 2, w, w),
            F.instance_norm(t, weight=w), F.rms_norm(t, (5,), ln_w), F.rms_norm(t, (5,))]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision(dtype):
    """Half inputs compute in float32 (parameters in float32 or the input's dtype) and return
    the input's dtype; gradients reach each tensor in its own dtype."""
    x, wa, lwa = data(6, 4, 5), data(4), data(5)
    for pdt in (dtype, "float32"):
        def run(lib, F):
            t = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
            w = lib.tensor(wa).to(getattr(lib, pdt)).requires_grad_()
            rm = lib.zeros(4, dtype=getattr(lib, pdt))
            rv = lib.ones(4, dtype=getattr(lib, pdt))
            ln_w = lib.tensor(lwa).to(getattr(lib, pdt)).requires_grad_()
            with warnings.catch_warnings():   # torch: no fused rms_norm for mixed dtypes
                warnings.simplefilter("ignore")
                outs = run_all(F, t, w, rm, rv, ln_w)
            grads = lib.autograd.grad(sum(o.float().sum() * (i + 1) for i, o in
                                          enumerate(outs)), [t, w, ln_w])
            return outs + [rm, rv] + list(grads)
        for e, t in zip(run(ember, EF), run(torch, TF)):
            # summed gradients carry the dtype's rounding, relative to their largest entry
            scale = float(t.detach().float().abs().max())
            assert_same(e, t, rtol=2e-2, atol=3e-2 + 8e-3 * scale)


# ---- running statistics --------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5), (2, 3, 4, 2)])
def test_batch_norm_running_stats(shape):
    """Training moves the running stats by momentum towards the batch mean and the unbiased
    batch variance, in place (as PyTorch's kernel: no version bump, nothing recorded);
    evaluation uses them."""
    x = data(*shape)
    res = []
    for lib, F in ((ember, EF), (torch, TF)):
        rm = lib.tensor(np.linspace(-1, 1, 3))
        rv = lib.tensor(np.linspace(0.5, 1.5, 3))
        t = lib.tensor(x, requires_grad=True)
        y = F.batch_norm(t, rm, rv, None, None, True, 0.3)
        assert rm._version == 0 and rv._version == 0
        assert not rm.requires_grad and rm.grad_fn is None
        y2 = F.batch_norm(t, rm, rv, None, None, True, 0.3)
        y3 = F.batch_norm(t, rm, rv, None, None, False, 0.3)
        res.append([y, y2, y3, rm, rv])
    assert_same(res[0], res[1])
    dims = (0,) + tuple(range(2, len(shape)))
    want_m = np.linspace(-1, 1, 3) * 0.7 + x.mean(dims) * 0.3
    np.testing.assert_allclose(res[0][3].numpy(), want_m * 0.7 + x.mean(dims) * 0.3)
    var = x.var(dims, ddof=1)
    np.testing.assert_allclose(res[0][4].numpy(),
                               (np.linspace(0.5, 1.5, 3) * 0.7 + var * 0.3) * 0.7 + var * 0.3)


def test_batch_norm_momentum_edges():
    x = data(5, 2, 3)
    for m in [0.0, 1.0, -1.0]:
        outs = []
        for lib, F in ((ember, EF), (torch, TF)):
            rm, rv = lib.zeros(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64)
            outs.append([F.batch_norm(lib.tensor(x), rm, rv, training=True, momentum=m), rm, rv])
        assert_same(outs[0], outs[1])


def test_instance_norm_running_stats():
    """Per-instance statistics update the running ones averaged over the batch (a copy: one
    version bump); with use_input_stats=False the running ones normalise, unchanged."""
    x = data(4, 3, 6)
    outs = []
    for lib, F in ((ember, EF), (torch, TF)):
        rm = lib.tensor(np.linspace(-1, 1, 3))
        rv = lib.tensor(np.linspace(0.5, 1.5, 3))
        y = F.instance_norm(lib.tensor(x, requires_grad=True), rm, rv, momentum=0.4)
        v1 = rm._version
        y2 = F.instance_norm(lib.tensor(x), rm, rv, use_input_stats=False)
        outs.append([y, y2, rm, rv, lib.tensor(float(v1)), lib.tensor(float(rm._version))])
    assert_same(outs[0], outs[1])


def test_running_stats_errors():
    x = data(4, 3, 2)
    z, o = np.zeros(3), np.ones(3)
    _both(lambda F, lib, t, m: F.batch_norm(t, m, None, training=True), x, z)
    _both(lambda F, lib, t: F.batch_norm(t, None, None, training=False), x)
    _both(lambda F, lib, t, m, v: F.batch_norm(t, m[:2], v, training=True), x, z, o)
    _both(lambda F, lib, t, m, v: F.batch_norm(t, m, v[:2], training=True), x, z, o)
    _both(lambda F, lib, t, m, v: F.batch_norm(t, m.requires_grad_(), v), x, z, o)
    _both(lambda F, lib, t, m, v: F.batch_norm(t, m, v, training=True, momentum=None), x, z, o)
    _both(lambda F, lib, t: F.instance_norm(t, use_input_stats=False), x)
    _both(lambda F, lib, t, m, v: F.instance_norm(t, m[:2], v[:2]), x, z, o)


# ---- errors -----------------------------------------------------------------------------------

def test_batch_norm_errors():
    x = data(4, 6, 5)
    c6, c5 = np.ones(6), np.ones(5)
    _both(lambda F, lib, t, w: F.batch_norm(t, None, None, w, training=True), x, c5)
    _both(lambda F, lib, t, b: F.batch_norm(t, None, None, None, b, training=True), x, c5)
    _both(lambda F, lib, t: F.batch_norm(t[0, :, 0], None, None, training=True), x)
    _both(lambda F, lib, t: F.batch_norm(t[:1, :, :1], None, None, training=True), x)
    _both(lambda F, lib, t: F.batch_norm(t, None, None, training=True, eps=0.0), x)
    _both(lambda F, lib, t: F.batch_norm(t, None, None, training=False, eps=-1.0), x)
    _both(lambda F, lib, t: F.batch_norm(t.long(), None, None, training=True), x)
    _both(lambda F, lib, t, w: F.batch_norm(t, None, None, w.float(), training=True), x, c6)
    _both(lambda F, lib, t, w: F.batch_norm(t.float(), None, None, w, training=True), x, c6)
    _both(lambda F, lib, t, w: F.batch_norm(t, None, None, w, w.float(), training=True), x, c6)
    _both(lambda F, lib, t, w: F.batch_norm(t.half(), w.half(), w.float(), training=True), x,
          c6)


def test_layer_and_rms_norm_errors():
    x = data(4, 6, 5)
    for fn in ("layer_norm", "rms_norm"):
        _both(lambda F, lib, t: getattr(F, fn)(t, (4,)), x)
        _both(lambda F, lib, t: getattr(F, fn)(t, (6, 4)), x)
        _both(lambda F, lib, t: getattr(F, fn)(t, (3, 4, 6, 5)), x)
        _both(lambda F, lib, t: getattr(F, fn)(t, 5), x)
        _both(lambda F, lib, t: getattr(F, fn)(t, (5,), t[0, 0, :4]), x)
        _both(lambda F, lib, t: getattr(F, fn)(t.long(), (5,)), x)
    _both(lambda F, lib, t: F.layer_norm(t, ()), x)
    _both(lambda F, lib, t: F.layer_norm(t, (5,), None, t[0, 0, :4]), x)
    _both(lambda F, lib, t: F.layer_norm(t, (5,), t[0, 0].float()), x)
    _both(lambda F, lib, t: F.layer_norm(t.float(), (5,), t[0, 0]), x)
    _both(lambda F, lib, t: F.layer_norm(t, (5,), t[0, 0], t[0, 0].float()), x)


def test_group_instance_lrn_normalize_errors():
    x = data(4, 6, 5)
    _both(lambda F, lib, t: F.group_norm(t, 4), x)
    _both(lambda F, lib, t: F.group_norm(t, 0), x)
    _both(lambda F, lib, t: F.group_norm(t[0, :, 0], 3), x)
    _both(lambda F, lib, t: F.group_norm(t[:1, :, 0], 6), x)
    _both(lambda F, lib, t: F.group_norm(t, 3, t[0, 0]), x)
    _both(lambda F, lib, t: F.group_norm(t, 3, t[0, :, 0], t[0, 0]), x)
    _both(lambda F, lib, t: F.group_norm(t, 3, None, t[0, 0]), x)
    _both(lambda F, lib, t: F.group_norm(t.long(), 3), x)
    _both(lambda F, lib, t: F.group_norm(t.float(), 3, t[0, :, 0]), x)
    _both(lambda F, lib, t: F.instance_norm(t[:, :, :1]), x)
    _both(lambda F, lib, t: F.instance_norm(t[:, :, 0]), x)
    _both(lambda F, lib, t: F.instance_norm(t, weight=t[0, 0]), x)
    _both(lambda F, lib, t: F.instance_norm(t.long()), x)
    _both(lambda F, lib, t: F.local_response_norm(t[0], 2), x)
    _both(lambda F, lib, t: F.normalize(t, dim=3), x)
    _both(lambda F, lib, t: F.normalize(t.long()), x)


# ---- edge cases -------------------------------------------------------------------------------

def test_empty_inputs():
    """Empty batch_norm inputs come back as clones (CloneBackward0), untouched stats."""
    for shape in [(0, 3), (2, 3, 0), (0,)]:
        outs = []
        for lib, F in ((ember, EF), (torch, TF)):
            c = shape[1] if len(shape) > 1 else 0
            rm, rv = lib.zeros(c, dtype=lib.float64), lib.ones(c, dtype=lib.float64)
            t = lib.zeros(*shape, dtype=lib.float64, requires_grad=True)
            y = F.batch_norm(t, rm, rv, training=True)
            assert y.grad_fn.name() == "CloneBackward0"
            outs.append([y, rm, rv, lib.tensor(float(rm._version))])
        assert_same(outs[0], outs[1])
    assert_same(EF.layer_norm(ember.zeros(0, 3), (3,)), TF.layer_norm(torch.zeros(0, 3), (3,)))
    assert_same(EF.group_norm(ember.zeros(0, 4, 2), 2), TF.group_norm(torch.zeros(0, 4, 2), 2))


def test_rms_norm_eps_default():
    """eps=None is the computation dtype's machine epsilon (float32's for half types)."""
    x = np.full((2, 3), 1e-4)
    for dt in ["float64", "float32", "float16"]:
        e = EF.rms_norm(ember.tensor(x).to(getattr(ember, dt)), (3,))
        t = TF.rms_norm(torch.tensor(x).to(getattr(torch, dt)), (3,))
        assert_same(e, t, rtol=1e-3)
    check_op(lambda z: EF.rms_norm(z, (3,)), lambda z: TF.rms_norm(z, (3,)),
             (data(4, 3) + 1j * data(4, 3)).astype(np.complex128), double=False)


def test_normalize_out():
    x = data(4, 6, 5)
    for shape, dt in [((4, 6, 5), "float64"), ((4, 6, 5), "float32"), ((4, 6), "float64"),
                      ((0,), "float64")]:
        res = []
        for lib, F in ((ember, EF), (torch, TF)):
            out = lib.zeros(*shape, dtype=getattr(lib, dt))
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                r = F.normalize(lib.tensor(x), 1.5, 2, out=out)
            assert r is out
            res.append([out, lib.tensor(float(out._version)), lib.tensor(float(len(w)))])
        assert_same(res[0], res[1], rtol=1e-6)
    _both(lambda F, lib, t: F.normalize(t.requires_grad_(), out=lib.zeros(4, 6, 5,
                                                                           dtype=lib.float64)),
          x)
    _both(lambda F, lib, t: F.normalize(t, out=lib.zeros(4, 6, 5, dtype=lib.int64)), x)


def test_lrn_window_sizes():
    """The channel window runs from c - size//2 to c + (size-1)//2, zero padded."""
    for size in [1, 2, 3, 5, 8]:
        check_op(lambda x: EF.local_response_norm(x, size, 0.5, 0.7, 0.9),
                 lambda x: TF.local_response_norm(x, size, 0.5, 0.7, 0.9), pos(2, 6, 3),
                 double=False)


def test_batched_gradients():
    """is_grads_batched (vectorized jacobians) through the norms' VJPs."""
    x = data(3, 4)
    for fe, ft in [(lambda t: EF.layer_norm(t, (4,)), lambda t: TF.layer_norm(t, (4,))),
                   (lambda t: EF.batch_norm(t, None, None, training=True),
                    lambda t: TF.batch_norm(t, None, None, training=True)),
                   (lambda t: EF.rms_norm(t, (4,)), lambda t: TF.rms_norm(t, (4,)))]:
        je = ember.autograd.functional.jacobian(fe, ember.tensor(x), vectorize=True)
        jt = torch.autograd.functional.jacobian(ft, torch.tensor(x), vectorize=True)
        assert_same(je, jt)


def test_meta_device():
    """Meta inputs give meta results (and leave meta running stats alone)."""
    cases = [lambda F, lib, x: F.batch_norm(x, lib.zeros(4, device="meta"),
                                            lib.ones(4, device="meta"), training=True),
             lambda F, lib, x: F.instance_norm(x), lambda F, lib, x: F.layer_norm(x, (3,)),
             lambda F, lib, x: F.group_norm(x, 2), lambda F, lib, x: F.rms_norm(x, (4, 3)),
             lambda F, lib, x: F.local_response_norm(x, 2), lambda F, lib, x: F.normalize(x)]
    for case in cases:
        e = case(EF, ember, ember.empty(2, 4, 3, device="meta"))
        t = case(TF, torch, torch.empty(2, 4, 3, device="meta"))
        assert e.is_meta and tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(
            t.dtype).replace("torch", "ember")
