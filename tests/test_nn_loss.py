"""The loss functions of ``nn.functional`` against PyTorch: PyTorch's OpInfo samples (values,
gradients, tangents), double backward, every reduction and the legacy flags with their
warnings, grad_fn names, and the errors of misuse."""
# Loops below build lambdas that check_op / raises_same call at once, in the same iteration.
# ruff: noqa: B023
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))
import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, check_op, raises_same
from opinfo import check_opinfo, check_sample, opinfos

EF = ember.nn.functional
TF = torch.nn.functional
RNG = np.random.default_rng(2024)
REDUCTIONS = ["none", "mean", "sum"]


def rand(shape, dtype="float64", low=-2.0, high=2.0):
    return RNG.uniform(low, high, shape).astype(dtype)


def T(lib, a):
    """An array as a tensor of ``lib`` (ember or torch), copied."""
    return lib.from_numpy(np.array(a, copy=True))


def both_libs(case, *arrays, **kw):
    """``check_op`` of ``case(lib, *tensors)`` written once for both libraries."""
    return check_op(lambda *a: case(ember, *a), lambda *a: case(torch, *a), *arrays, **kw)


def raises_both(case):
    return raises_same(lambda: case(ember), lambda: case(torch))


def warns_both(case) -> list:
    """Both libraries emit the same warnings (category and text) and equal results."""
    out = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            r = case(lib)
        out.append((r, [(w.category, str(w.message)) for w in rec]))
    (re, we), (rt, wt) = out
    assert we == [(c, m.replace("torch.", "ember.")) for c, m in wt], (we, wt)
    assert_same(re, rt)
    return we


# ---- PyTorch's OpInfo samples ---------------------------------------------------------------

OPINFO = ["cross_entropy", "nll_loss", "binary_cross_entropy",
          "binary_cross_entropy_with_logits", "mse_loss", "l1_loss", "smooth_l1_loss",
          "huber_loss", "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "ctc_loss",
          "margin_ranking_loss", "hinge_embedding_loss", "multilabel_margin_loss",
          "multilabel_soft_margin_loss", "multi_margin_loss", "soft_margin_loss",
          "cosine_embedding_loss", "triplet_margin_loss"]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("name", OPINFO)
def test_opinfo(name, dtype):
    tol = {}
    if name == "ctc_loss" and dtype == torch.float32:
        # 50 steps of a log-space recursion in float32: both libraries round differently
        tol = {"rtol": 1e-3, "atol": 1e-4}
    if name == "poisson_nll_loss" and dtype == torch.float32:
        # a tangent of 0.0546 summed from terms of size 4000: float32 keeps ~1e-4 of it (the
        # exact value is 0.054595; PyTorch gives 0.054677, ember 0.054626)
        tol = {"atol": 2e-4}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_opinfo("nn.functional." + name, dtype, **tol) > 0


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_opinfo_triplet_with_distance(dtype):
    """The samples pass torch's ``nn.PairwiseDistance`` module; ember gets its own pairwise
    distance in its place (the same formula)."""
    def dist(a, b):
        return (a - b + 1e-6).norm(2, -1)

    def fe(a, p, n, distance_function=None, **kw):
        return EF.triplet_margin_with_distance_loss(
            a, p, n, distance_function=None if distance_function is None else dist, **kw)

    n = 0
    for info in opinfos("nn.functional.triplet_margin_with_distance_loss"):
        for sample in info.sample_inputs("cpu", dtype, requires_grad=True):
            check_sample(info, sample, fe=fe)
            n += 1
    assert n


# ---- reductions, legacy flags, double backward ----------------------------------------------

def _regression_cases():
    x, y = rand((3, 4)), rand((3, 4))
    w = rand((3, 4), low=0.1, high=1.0)
    return {
        "mse_loss": (lambda lib, a, b, r: lib.nn.functional.mse_loss(a, b, reduction=r), x, y),
        "l1_loss": (lambda lib, a, b, r: lib.nn.functional.l1_loss(a, b, reduction=r), x, y),
        "smooth_l1_loss": (lambda lib, a, b, r: lib.nn.functional.smooth_l1_loss(
            a, b, reduction=r, beta=0.7), x, y),
        "huber_loss": (lambda lib, a, b, r: lib.nn.functional.huber_loss(
            a, b, reduction=r, delta=0.6), x, y),
        "mse_loss_w": (lambda lib, a, b, r: lib.nn.functional.mse_loss(
            a, b, reduction=r, weight=T(lib, w)), x, y),
        "l1_loss_w": (lambda lib, a, b, r: lib.nn.functional.l1_loss(
            a, b, reduction=r, weight=T(lib, w)), x, y),
        "huber_loss_w": (lambda lib, a, b, r: lib.nn.functional.huber_loss(
            a, b, reduction=r, weight=T(lib, w)), x, y),
        "kl_div": (lambda lib, a, b, r: lib.nn.functional.kl_div(a, b, reduction=r), x,
                   rand((3, 4), low=0.05, high=1.0)),
        "kl_div_log": (lambda lib, a, b, r: lib.nn.functional.kl_div(
            a, b, reduction=r, log_target=True), x, y),
        "poisson": (lambda lib, a, b, r: lib.nn.functional.poisson_nll_loss(
            a, b, reduction=r, full=True), x, rand((3, 4), low=0.0, high=4.0)),
        "poisson_lin": (lambda lib, a, b, r: lib.nn.functional.poisson_nll_loss(
            a, b, log_input=False, reduction=r), rand((3, 4), low=0.2, high=3.0), y),
        "bce": (lambda lib, a, b, r: lib.nn.functional.binary_cross_entropy(
            a, b, weight=T(lib, w), reduction=r), rand((3, 4), low=0.1, high=0.9),
                rand((3, 4), low=0.0, high=1.0)),
        "bce_logits": (lambda lib, a, b, r: lib.nn.functional.binary_cross_entropy_with_logits(
            a, b, weight=T(lib, w[0]), pos_weight=T(lib, w[1]), reduction=r), x,
                       rand((3, 4), low=0.0, high=1.0)),
        "msml": (lambda lib, a, b, r: lib.nn.functional.multilabel_soft_margin_loss(
            a, b, weight=T(lib, w), reduction=r), x, rand((3, 4), low=0.0, high=1.0)),
        "gaussian": (lambda lib, a, b, r: lib.nn.functional.gaussian_nll_loss(
            a, b, T(lib, w[:, :1]), full=True, reduction=r), x, y),
    }


@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(_regression_cases()))
def test_two_input_losses_double_backward(name, red):
    """Values, gradients in input and target, tangents and double backward (including the
    derivative of the first gradient with respect to the cotangent) against PyTorch."""
    f, x, y = _regression_cases()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both_libs(lambda lib, a, b: f(lib, a, b, red), x, y)


@pytest.mark.parametrize("red", REDUCTIONS)
def test_broadcasting_and_weights(red):
    """Targets broadcast against the input (after PyTorch's size warning), class weights
    broadcast in binary cross entropy, and weights of another float dtype."""
    x, y = rand((3, 4), low=0.1, high=0.9), rand((3, 4), low=0.0, high=1.0)
    w = rand((4,), low=0.5, high=1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("mse_loss", "smooth_l1_loss", "huber_loss", "l1_loss"):
            both_libs(lambda lib, a, b: getattr(lib.nn.functional, name)(a, b, reduction=red),
                      x, y[0])
            both_libs(lambda lib, a, b: getattr(lib.nn.functional, name)(a, b, reduction=red),
                      x[:, :1], y)
    for wd in ("float64", "float32"):
        both_libs(lambda lib, a, b: lib.nn.functional.binary_cross_entropy(
            a, b, weight=T(lib, w.astype(wd)), reduction=red), x, y)
        both_libs(lambda lib, a, b: lib.nn.functional.binary_cross_entropy_with_logits(
            a, b, weight=T(lib, w.astype(wd)), pos_weight=T(lib, w[::-1].astype(wd)),
            reduction=red), x, y)
    both_libs(lambda lib, a, b: lib.nn.functional.soft_margin_loss(a, b, reduction=red),
              x, np.sign(y[0] - 0.5), argnums=(0,))


@pytest.mark.parametrize("red", REDUCTIONS)
def test_soft_margin_double_backward(red):
    x, y = rand((3, 5)), np.sign(rand((3, 5)))
    both_libs(lambda lib, a, b: lib.nn.functional.soft_margin_loss(a, b, reduction=red), x, y,
              argnums=(0,))


@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 5, 3), (2, 5, 2, 3), (2, 5, 2, 1, 2)])
def test_nll_and_cross_entropy_shapes(shape, red):
    """Class dim 1 (0 unbatched), any number of extra dims: NllLoss, NllLoss2D, or a view of
    NllLoss2D as in PyTorch; weights and an ignored class; double backward."""
    x = rand(shape)
    t = RNG.integers(0, 5, (shape[0],) + shape[2:] if len(shape) > 1 else ())
    w = rand((5,), low=0.2, high=1.5)
    for ii in (-100, 2):
        def nll(lib, a):
            return lib.nn.functional.nll_loss(a, T(lib, t), weight=T(lib, w), ignore_index=ii,
                                              reduction=red)

        def ce(lib, a):
            return lib.nn.functional.cross_entropy(a, T(lib, t), weight=T(lib, w),
                                                   ignore_index=ii, reduction=red)
        both_libs(nll, x)
        both_libs(ce, x)


@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_label_smoothing(red, weighted):
    x = rand((4, 5))
    t = np.array([0, 3, -100, 4])
    w = rand((5,), low=0.2, high=1.5)

    def case(lib, a):
        return lib.nn.functional.cross_entropy(a, T(lib, t), weight=T(lib, w) if weighted
                                               else None, reduction=red, label_smoothing=0.15)
    both_libs(case, x)
    # unbatched
    both_libs(lambda lib, a: lib.nn.functional.cross_entropy(
        a, T(lib, np.array(2)), reduction=red, label_smoothing=0.3), rand((5,)))


@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 5, 3)])
def test_cross_entropy_probabilities(shape, red):
    """Targets shaped like the input: probabilities, differentiable too; weight and label
    smoothing; 'mean' divides by the number of samples (DivBackward1)."""
    x = rand(shape)
    p = rand(shape, low=0.0, high=1.0)
    w = rand((5,), low=0.2, high=1.5)
    for ls in (0.0, 0.2):
        both_libs(lambda lib, a, b: lib.nn.functional.cross_entropy(
            a, b, weight=T(lib, w), reduction=red, label_smoothing=ls), x, p)


@pytest.mark.parametrize("red", REDUCTIONS)
def test_margin_and_embedding_losses(red):
    x1, x2 = rand((4, 3)), rand((4, 3))
    y = np.array([1.0, -1.0, 1.0, -1.0])
    yy = np.sign(rand((4, 3)))
    both_libs(lambda lib, a, b, c: lib.nn.functional.margin_ranking_loss(
        a, b, c, margin=0.3, reduction=red), x1, x2, np.sign(rand((4, 3))), argnums=(0, 1))
    both_libs(lambda lib, a, b: lib.nn.functional.hinge_embedding_loss(
        a, b, margin=0.8, reduction=red), x1, yy, argnums=(0,))
    both_libs(lambda lib, a, b, c: lib.nn.functional.cosine_embedding_loss(
        a, b, c, margin=0.2, reduction=red), x1, x2, y, argnums=(0, 1))
    both_libs(lambda lib, a, b: lib.nn.functional.cosine_embedding_loss(
        a, b, T(lib, np.array(-1.0)), margin=-0.5, reduction=red), x1[0], x2[0])
    for p, swap in ((2, False), (1, True), (3.0, True)):
        both_libs(lambda lib, a, b, c: lib.nn.functional.triplet_margin_loss(
            a, b, c, margin=0.7, p=p, swap=swap, reduction=red), x1, x2, rand((4, 3)))
    both_libs(lambda lib, a, b, c: lib.nn.functional.triplet_margin_with_distance_loss(
        a, b, c, distance_function=lambda u, v: (u - v).abs().sum(-1), margin=2.0, swap=True,
        reduction=red), x1, x2, rand((4, 3)))
    both_libs(lambda lib, a, b, c: lib.nn.functional.triplet_margin_with_distance_loss(
        a, b, c, reduction=red), x1[0], x2[0], rand((3,)))


def _legacy_cases():
    x, y = rand((3, 4)), rand((3, 4))
    p = rand((3, 4), low=0.1, high=0.9)
    t = np.array([0, 3, 1])
    return [
        lambda lib, **k: lib.nn.functional.mse_loss(T(lib, x), T(lib, y), **k),
        lambda lib, **k: lib.nn.functional.l1_loss(T(lib, x), T(lib, y), **k),
        lambda lib, **k: lib.nn.functional.smooth_l1_loss(T(lib, x), T(lib, y), **k),
        lambda lib, **k: lib.nn.functional.soft_margin_loss(T(lib, x), T(lib, y), **k),
        lambda lib, **k: lib.nn.functional.nll_loss(T(lib, x), T(lib, t), **k),
        lambda lib, **k: lib.nn.functional.cross_entropy(T(lib, x), T(lib, t), **k),
        lambda lib, **k: lib.nn.functional.binary_cross_entropy(T(lib, p), T(lib, p), **k),
        lambda lib, **k: lib.nn.functional.binary_cross_entropy_with_logits(
            T(lib, x), T(lib, p), **k),
        lambda lib, **k: lib.nn.functional.kl_div(T(lib, x), T(lib, p), **k),
        lambda lib, **k: lib.nn.functional.poisson_nll_loss(T(lib, x), T(lib, p), **k),
        lambda lib, **k: lib.nn.functional.margin_ranking_loss(T(lib, x), T(lib, y),
                                                               T(lib, np.sign(y)), **k),
        lambda lib, **k: lib.nn.functional.hinge_embedding_loss(T(lib, x), T(lib, np.sign(y)),
                                                                **k),
        lambda lib, **k: lib.nn.functional.multilabel_soft_margin_loss(T(lib, x), T(lib, p),
                                                                       **k),
        lambda lib, **k: lib.nn.functional.multi_margin_loss(T(lib, x), T(lib, t), **k),
        lambda lib, **k: lib.nn.functional.multilabel_margin_loss(
            T(lib, x), T(lib, np.array([[0, 2, -1, 1]] * 3)), **k),
        lambda lib, **k: lib.nn.functional.cosine_embedding_loss(
            T(lib, x), T(lib, y), T(lib, np.array([1.0, -1.0, 1.0])), **k),
        lambda lib, **k: lib.nn.functional.triplet_margin_loss(T(lib, x), T(lib, y),
                                                               T(lib, p), **k),
    ]


@pytest.mark.parametrize("flags", [dict(size_average=False), dict(reduce=False),
                                   dict(size_average=True, reduce=True),
                                   dict(reduction="elementwise_mean")])
def test_legacy_reduction_flags(flags):
    """``size_average`` / ``reduce`` override ``reduction`` with PyTorch's deprecation
    warning; 'elementwise_mean' is still 'mean', with its warning."""
    for case in _legacy_cases():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                case(torch, **flags)
        except ValueError:   # poisson_nll_loss takes no 'elementwise_mean'
            raises_both(lambda lib: case(lib, **flags))
        else:
            warns_both(lambda lib: case(lib, **flags))


def test_warnings():
    x, y = rand((3, 4)), rand((4,))
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
        w = warns_both(lambda lib: getattr(lib.nn.functional, name)(T(lib, x), T(lib, y)))
        assert len(w) == 1 and "different to the input size" in w[0][1]
    w = warns_both(lambda lib: lib.nn.functional.kl_div(T(lib, x), T(lib, x)))
    assert len(w) == 1 and "batchmean" in w[0][1]
    assert not warns_both(lambda lib: lib.nn.functional.kl_div(T(lib, x), T(lib, x),
                                                               reduction="batchmean"))
    # batchmean of a 0-d input is the plain sum
    warns_both(lambda lib: lib.nn.functional.kl_div(T(lib, x[0, 0]), T(lib, x[0, 1]),
                                                    reduction="batchmean"))


# ---- dtypes and special values --------------------------------------------------------------

def test_dtype_rules():
    x32, x64 = rand((3, 4), "float32"), rand((3, 4))
    p32 = rand((3, 4), "float32", 0.0, 1.0)
    ti = RNG.integers(0, 3, (3, 4))
    cases = [
        lambda lib: lib.nn.functional.mse_loss(T(lib, x32), T(lib, x64)),
        lambda lib: lib.nn.functional.mse_loss(T(lib, x32), T(lib, ti)),
        lambda lib: lib.nn.functional.huber_loss(T(lib, x32), T(lib, x64), reduction="none"),
        lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(T(lib, x64),
                                                                       T(lib, p32)),
        lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(T(lib, x32),
                                                                       T(lib, p32 * 1.0)),
        lambda lib: lib.nn.functional.soft_margin_loss(T(lib, x32), T(lib, np.sign(ti - 1))),
        lambda lib: lib.nn.functional.nll_loss(T(lib, x32), T(lib, ti[:, 0].astype(np.uint8))),
        lambda lib: lib.nn.functional.cross_entropy(T(lib, x64), T(lib, p32)),
        lambda lib: lib.nn.functional.l1_loss(T(lib, ti), T(lib, ti), reduction="sum"),
        lambda lib: lib.nn.functional.nll_loss(T(lib, x32).half(), T(lib, ti[:, 0])),
        lambda lib: lib.nn.functional.mse_loss(T(lib, x32).bfloat16(), T(lib, x32).bfloat16()),
    ]
    for case in cases:
        assert_same(case(ember), case(torch), 2e-3, 2e-3)


def test_special_values():
    """PyTorch's clamp of log at -100 in binary_cross_entropy; all-ignored targets give NaN
    with 'mean'; impossible CTC alignments are inf (or zero with zero_infinity)."""
    def bce(lib, a):
        return lib.nn.functional.binary_cross_entropy(
            a, T(lib, np.array([1.0, 0.0, 1.0, 0.0])), reduction="none")
    both_libs(bce, np.array([0.0, 1.0, 1.0, 0.0]), fwd=False, double=False)
    for red in REDUCTIONS:
        # (PyTorch's derivative of this gradient with respect to its cotangent is 0/0 = NaN;
        # ember's is 0)
        both_libs(lambda lib, a: lib.nn.functional.nll_loss(
            a, T(lib, np.array([1, 1])), ignore_index=1, reduction=red), rand((2, 3)),
            double=False)
    big = np.array([-80.0, 80.0, 0.0])
    both_libs(lambda lib, a: lib.nn.functional.binary_cross_entropy_with_logits(
        a, T(lib, np.array([1.0, 0.0, 0.5])), reduction="none"), big)


def test_edge_cases():
    x = rand((3, 4), low=0.1, high=0.9)
    cases = [
        lambda lib: lib.nn.functional.binary_cross_entropy(T(lib, x).half(), T(lib, x).half()),
        lambda lib: lib.nn.functional.cross_entropy(T(lib, np.ones((2, 3, 0))),
                                                    T(lib, np.ones((2, 3, 0)))),
        lambda lib: lib.nn.functional.cross_entropy(T(lib, np.ones((0, 3))),
                                                    T(lib, np.ones((0,), np.int64))),
        lambda lib: lib.nn.functional.cross_entropy(
            T(lib, np.ones((0, 3))), T(lib, np.ones((0,), np.int64)), reduction="none"),
        lambda lib: lib.nn.functional.cross_entropy(
            T(lib, x).half(), T(lib, np.array([0, 1, 1])), weight=T(lib, np.ones(4)).half()),
        lambda lib: lib.nn.functional.cosine_embedding_loss(T(lib, x), T(lib, x[::-1]),
                                                            T(lib, np.array([1, 0, -1]))),
        lambda lib: lib.nn.functional.triplet_margin_loss(T(lib, x), T(lib, x * 2),
                                                          T(lib, x * 3), p=float("inf")),
        lambda lib: lib.nn.functional.gaussian_nll_loss(T(lib, x), T(lib, x[::-1]),
                                                        T(lib, np.ones((1, 4)))),
        lambda lib: lib.nn.functional.poisson_nll_loss(T(lib, x), T(lib, x * 3), full=True,
                                                       log_input=False, reduction="none"),
        lambda lib: lib.nn.functional.ctc_loss(  # a label equal to the blank, repeats
            T(lib, np.log(np.full((6, 2, 3), 1 / 3))), T(lib, np.array([[0, 2], [1, 1]])),
            [6, 2], [2, 2], reduction="none"),
        lambda lib: lib.nn.functional.multi_margin_loss(T(lib, x[0]), T(lib, np.array([2])),
                                                        reduction="none"),
        lambda lib: lib.nn.functional.multi_margin_loss(T(lib, x[0, 0]), T(lib, np.array(0)),
                                                        reduction="none"),
        lambda lib: lib.nn.functional.multilabel_margin_loss(
            T(lib, x[0]), T(lib, np.array([1, 1, -1, 2])), reduction="none"),
        lambda lib: lib.nn.functional.nll_loss(T(lib, x[0]), T(lib, np.array([2])),
                                               reduction="none"),
    ]
    for case in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert_same(case(ember), case(torch), 2e-3, 2e-3)


# ---- ctc_loss ------------------------------------------------------------------------------

def _ctc_data(t_len=12, n=3, c=5, s=4):
    lp = rand((t_len, n, c), low=-3, high=1)
    tgt = RNG.integers(1, c, (n, s))
    tgt[0, 1] = tgt[0, 0]     # a repeated label needs a blank between
    il = np.array([t_len, t_len - 3, 7][:n])
    tl = np.array([s, 2, 0][:n])
    return lp, tgt, il, tl


@pytest.mark.parametrize("red", REDUCTIONS)
def test_ctc_layouts_and_reductions(red):
    lp, tgt, il, tl = _ctc_data()
    cat = np.concatenate([tgt[i, :tl[i]] for i in range(len(tl))])
    for targets, blank in ((tgt, 0), (cat, 0), (tgt - 1, 4)):
        def case(lib, a):
            return lib.nn.functional.ctc_loss(
                a.log_softmax(2), T(lib, targets), T(lib, il), T(lib, tl), blank=blank,
                reduction=red)
        both_libs(case, lp, fwd=False, double=False)
    # lengths as lists of ints; the raw (unnormalised) log-probabilities
    both_libs(lambda lib, a: lib.nn.functional.ctc_loss(a, T(lib, tgt), il.tolist(),
                                                        tl.tolist(), reduction=red),
              lp, fwd=False, double=False)
    # unbatched
    both_libs(lambda lib, a: lib.nn.functional.ctc_loss(
        a.log_softmax(1), T(lib, tgt[0]), T(lib, il[0]), T(lib, tl[0]), reduction=red),
        lp[:, 0], fwd=False, double=False)


@pytest.mark.parametrize("red", REDUCTIONS)
def test_ctc_zero_infinity(red):
    lp, tgt, il, tl = _ctc_data()
    il = np.array([3, 12, 1])       # the first item cannot fit its 4 labels in 3 frames
    for zi in (False, True):
        both_libs(lambda lib, a: lib.nn.functional.ctc_loss(
            a.log_softmax(2), T(lib, tgt), T(lib, il), T(lib, tl), reduction=red,
            zero_infinity=zi), lp, fwd=False, double=False)


def test_ctc_double_backward_and_forward_mode():
    """PyTorch has no derivative of the CTC gradient: ember records a node that raises the same
    error. Forward mode (absent in PyTorch) is the transpose of the reverse rule, so through a
    log_softmax it gives the true directional derivative."""
    lp, tgt, il, tl = _ctc_data()

    def grad(lib):
        x = T(lib, lp).requires_grad_()
        loss = lib.nn.functional.ctc_loss(x, T(lib, tgt), T(lib, il), T(lib, tl))
        g, = lib.autograd.grad(loss, x, create_graph=True)
        assert g.requires_grad
        return g, x
    (ge, xe), (gt, xt) = grad(ember), grad(torch)
    assert_same(ge, gt)
    assert ge.grad_fn.name() == gt.grad_fn.name().replace("torch::", "ember::")
    raises_same(lambda: ember.autograd.grad(ge.sum(), xe),
                lambda: torch.autograd.grad(gt.sum(), xt))
    v = rand(lp.shape)
    xt = T(torch, lp).requires_grad_()
    loss = TF.ctc_loss(xt.log_softmax(2), T(torch, tgt), T(torch, il), T(torch, tl))
    gt, = torch.autograd.grad(loss, xt)
    fw = ember.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(T(ember, lp), T(ember, v))
        out = EF.ctc_loss(d.log_softmax(2), T(ember, tgt), T(ember, il), T(ember, tl))
        tangent = fw.unpack_dual(out).tangent
    np.testing.assert_allclose(tangent.item(), float((gt * T(torch, v)).sum()), rtol=1e-9)


# ---- multi_margin and multilabel_margin: beyond PyTorch --------------------------------------

def test_margin_losses_second_order_and_forward_mode():
    """PyTorch has neither double backward nor forward mode for these two; ember has both,
    checked numerically (first-order results are compared with PyTorch by the OpInfo test)."""
    x = ember.from_numpy(rand((3, 5))).requires_grad_()
    t = ember.tensor([0, 4, 2])
    w = ember.from_numpy(rand((5,), low=0.5, high=1.5))
    lab = ember.tensor([[1, 3, -1, 0, 0], [4, -1, 2, 2, 2], [0, 1, 2, 3, 4]])
    for red in REDUCTIONS:
        for p in (1, 2):
            fn = (lambda a: EF.multi_margin_loss(a, t, p=p, margin=0.9, weight=w, reduction=red))
            assert ember.autograd.gradcheck(fn, (x,), check_forward_ad=True)
            assert ember.autograd.gradgradcheck(fn, (x,))
        fn = (lambda a: EF.multilabel_margin_loss(a, lab, reduction=red))
        assert ember.autograd.gradcheck(fn, (x,), check_forward_ad=True)
        assert ember.autograd.gradgradcheck(fn, (x,))
    xt = torch.from_numpy(rand((3, 5))).requires_grad_()
    g, = torch.autograd.grad(TF.multi_margin_loss(xt, torch.tensor([0, 4, 2]), p=2), xt,
                             create_graph=True)
    with pytest.raises(RuntimeError, match="not implemented"):
        g.sum().backward()


# ---- misuse ----------------------------------------------------------------------------------

def _error_cases():
    x = rand((3, 4), low=0.1, high=0.9)
    x4 = rand((2, 3, 2, 2))
    t = np.array([0, 1, 1])
    F = "nn.functional"

    def f(lib, name):
        m = lib
        for part in (F + "." + name).split("."):
            m = getattr(m, part)
        return m

    lp = rand((6, 2, 4), low=-3, high=0)
    tg = np.array([[1, 2, 1], [3, 3, 0]])
    il, tl = np.array([6, 5]), np.array([3, 2])

    def ctc(lib, lp=lp, tg=tg, il=il, tl=tl, **k):
        return f(lib, "ctc_loss")(T(lib, lp), T(lib, tg),
                                  il if isinstance(il, (list, tuple)) else T(lib, il),
                                  tl if isinstance(tl, (list, tuple)) else T(lib, tl), **k)
    return [
        # nll_loss / cross_entropy
        lambda lib: f(lib, "nll_loss")(T(lib, x), T(lib, np.array([0, 4, 1]))),
        lambda lib: f(lib, "nll_loss")(T(lib, x), T(lib, np.array([0, -1, 1]))),
        lambda lib: f(lib, "nll_loss")(T(lib, x), T(lib, t * 1.0)),
        lambda lib: f(lib, "nll_loss")(T(lib, x), T(lib, t.astype(np.int32))),
        lambda lib: f(lib, "nll_loss")(T(lib, x), T(lib, t[:2])),
        lambda lib: f(lib, "nll_loss")(T(lib, x), T(lib, t[None])),
        lambda lib: f(lib, "nll_loss")(T(lib, x), T(lib, t), weight=T(lib, np.ones(3))),
        lambda lib: f(lib, "nll_loss")(T(lib, x), T(lib, t),
                                       weight=T(lib, np.ones(4, np.float32))),
        lambda lib: f(lib, "nll_loss")(T(lib, x4), T(lib, np.full((2, 2, 2), 3))),
        lambda lib: f(lib, "nll_loss")(T(lib, x4), T(lib, np.full((2, 2, 3), 1))),
        lambda lib: f(lib, "nll_loss")(T(lib, x4), T(lib, np.zeros((2, 2, 2), np.int64)),
                                       weight=T(lib, np.ones(2))),
        lambda lib: f(lib, "nll_loss")(T(lib, x4[..., 0]), T(lib, np.full((2, 3), 1))),
        lambda lib: f(lib, "nll_loss")(T(lib, x4[:, :, None]), T(lib, np.full((2, 2, 3, 2), 1))),
        lambda lib: f(lib, "nll_loss")(T(lib, np.array(1.0)), T(lib, np.array(0))),
        lambda lib: f(lib, "nll_loss")(T(lib, t[None].repeat(3, 0)), T(lib, t)),
        lambda lib: f(lib, "nll_loss")(T(lib, x), T(lib, t), reduction="foo"),
        lambda lib: f(lib, "nll_loss")(T(lib, x[0]), T(lib, t[:2])),
        lambda lib: f(lib, "nll_loss")(T(lib, x), T(lib, t), weight=T(lib, np.ones(4))
                                       .requires_grad_()),
        lambda lib: f(lib, "cross_entropy")(T(lib, x), T(lib, np.array([0, 4, 1]))),
        lambda lib: f(lib, "cross_entropy")(T(lib, x), T(lib, np.ones((3, 4), np.int64))),
        lambda lib: f(lib, "cross_entropy")(T(lib, x), T(lib, x), ignore_index=1),
        lambda lib: f(lib, "cross_entropy")(T(lib, x), T(lib, t), label_smoothing=1.5),
        lambda lib: f(lib, "cross_entropy")(T(lib, x), T(lib, x), label_smoothing=1.5),
        lambda lib: f(lib, "cross_entropy")(T(lib, x), T(lib, x), weight=T(lib, np.ones(3))),
        lambda lib: f(lib, "cross_entropy")(T(lib, x), T(lib, x[:, 0])),
        lambda lib: f(lib, "cross_entropy")(T(lib, t[None].repeat(3, 0)), T(lib, t)),
        lambda lib: f(lib, "cross_entropy")(T(lib, np.array(1.0)), T(lib, np.array(0))),
        lambda lib: f(lib, "cross_entropy")(T(lib, x), T(lib, np.array([0, 7, 1])),
                                            label_smoothing=0.2),
        # binary cross entropy
        lambda lib: f(lib, "binary_cross_entropy")(T(lib, x), T(lib, x[0])),
        lambda lib: f(lib, "binary_cross_entropy")(T(lib, x * 3), T(lib, x)),
        lambda lib: f(lib, "binary_cross_entropy")(T(lib, x * np.nan), T(lib, x)),
        lambda lib: f(lib, "binary_cross_entropy")(T(lib, x), T(lib, x.astype(np.float32))),
        lambda lib: f(lib, "binary_cross_entropy")(T(lib, x), T(lib, x),
                                                   weight=T(lib, np.ones(3))),
        lambda lib: f(lib, "binary_cross_entropy")(T(lib, x), T(lib, x),
                                                   weight=T(lib, np.ones(4)).requires_grad_()),
        lambda lib: f(lib, "binary_cross_entropy_with_logits")(T(lib, x), T(lib, x[0])),
        lambda lib: f(lib, "binary_cross_entropy_with_logits")(T(lib, x), T(lib, t[:, None]
                                                                            .repeat(4, 1))),
        lambda lib: f(lib, "binary_cross_entropy_with_logits")(
            T(lib, x), T(lib, x), pos_weight=T(lib, np.ones(3))),
        lambda lib: f(lib, "binary_cross_entropy_with_logits")(
            T(lib, x), T(lib, x), weight=T(lib, np.ones(3))),
        lambda lib: f(lib, "binary_cross_entropy_with_logits")(
            T(lib, x), T(lib, x), pos_weight=T(lib, np.ones(4)).requires_grad_()),
        # regression losses
        lambda lib: f(lib, "mse_loss")(T(lib, x), T(lib, np.ones(3))),
        lambda lib: f(lib, "mse_loss")(T(lib, t), T(lib, t)),
        lambda lib: f(lib, "mse_loss")(T(lib, x), T(lib, x), weight=T(lib, np.ones(4))),
        lambda lib: f(lib, "mse_loss")(T(lib, x), T(lib, x), weight=T(lib, x), reduction="foo"),
        lambda lib: f(lib, "mse_loss")(T(lib, x), T(lib, x), reduction="foo"),
        lambda lib: f(lib, "l1_loss")(T(lib, t), T(lib, t)),
        lambda lib: f(lib, "smooth_l1_loss")(T(lib, x), T(lib, x), beta=-1.0),
        lambda lib: f(lib, "smooth_l1_loss")(T(lib, t), T(lib, t)),
        lambda lib: f(lib, "huber_loss")(T(lib, x), T(lib, x), delta=0.0),
        lambda lib: f(lib, "huber_loss")(T(lib, x), T(lib, x), weight=T(lib, np.ones(4))),
        lambda lib: f(lib, "huber_loss")(T(lib, x), T(lib, x), reduction="foo"),
        lambda lib: f(lib, "huber_loss")(T(lib, x), T(lib, x), weight=T(lib, x),
                                         reduction="foo"),
        lambda lib: f(lib, "huber_loss")(T(lib, t), T(lib, t)),
        lambda lib: f(lib, "soft_margin_loss")(T(lib, x), T(lib, x).requires_grad_()),
        lambda lib: f(lib, "soft_margin_loss")(T(lib, x), T(lib, x), reduction="foo"),
        # kl / poisson / gaussian
        lambda lib: f(lib, "kl_div")(T(lib, x), T(lib, x), reduction="foo"),
        lambda lib: f(lib, "poisson_nll_loss")(T(lib, x), T(lib, x), reduction="foo"),
        lambda lib: f(lib, "gaussian_nll_loss")(T(lib, x), T(lib, x), T(lib, -x)),
        lambda lib: f(lib, "gaussian_nll_loss")(T(lib, x), T(lib, x), -1.0),
        lambda lib: f(lib, "gaussian_nll_loss")(T(lib, x), T(lib, x), T(lib, np.ones(2))),
        lambda lib: f(lib, "gaussian_nll_loss")(T(lib, x), T(lib, x), T(lib, np.ones((3, 1))),
                                                reduction="foo"),
        # margin / embedding / triplet
        lambda lib: f(lib, "margin_ranking_loss")(T(lib, x), T(lib, x), T(lib, x[0])),
        lambda lib: f(lib, "margin_ranking_loss")(T(lib, x), T(lib, x), T(lib, x[:2])),
        lambda lib: f(lib, "hinge_embedding_loss")(T(lib, x), T(lib, x), reduction="foo"),
        lambda lib: f(lib, "cosine_embedding_loss")(T(lib, x), T(lib, x), T(lib, x)),
        lambda lib: f(lib, "cosine_embedding_loss")(T(lib, x[0]), T(lib, x[0]), T(lib, x[0])),
        lambda lib: f(lib, "cosine_embedding_loss")(T(lib, x), T(lib, x), T(lib, x[0, 0])),
        lambda lib: f(lib, "triplet_margin_loss")(T(lib, x), T(lib, x), T(lib, x[0])),
        lambda lib: f(lib, "triplet_margin_loss")(T(lib, x), T(lib, x), T(lib, x), margin=0),
        lambda lib: f(lib, "triplet_margin_with_distance_loss")(T(lib, x), T(lib, x),
                                                                T(lib, x), margin=-1.0),
        lambda lib: f(lib, "triplet_margin_with_distance_loss")(T(lib, x), T(lib, x),
                                                                T(lib, x[0])),
        lambda lib: f(lib, "triplet_margin_with_distance_loss")(T(lib, x), T(lib, x),
                                                                T(lib, x), reduction="foo"),
        lambda lib: f(lib, "multilabel_soft_margin_loss")(T(lib, x), T(lib, x),
                                                          reduction="foo"),
        # multi_margin / multilabel_margin
        lambda lib: f(lib, "multi_margin_loss")(T(lib, x), T(lib, t), p=3),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, x), T(lib, np.array([0, 1, 4]))),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, x), T(lib, np.array([0, 1, -1]))),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, x), T(lib, t[:2])),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, x), T(lib, t[None])),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, x), T(lib, t * 1.0)),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, x), T(lib, t),
                                                weight=T(lib, np.ones((1, 4)))),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, x), T(lib, t), weight=T(lib, np.ones(3))),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, x), T(lib, t),
                                                weight=T(lib, np.ones(4, np.float32))),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, rand((2, 3, 4))), T(lib, t[:2])),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, t[None].repeat(3, 0)), T(lib, t)),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, x[0]), T(lib, t[:2])),
        lambda lib: f(lib, "multilabel_margin_loss")(T(lib, x),
                                                     T(lib, np.array([[0, 1, 4, -1]] * 3))),
        lambda lib: f(lib, "multilabel_margin_loss")(T(lib, x),
                                                     T(lib, np.array([[0, -1, 7, 9]] * 3))),
        lambda lib: f(lib, "multilabel_margin_loss")(T(lib, x),
                                                     T(lib, np.array([[0, 1, -1]] * 3))),
        lambda lib: f(lib, "multilabel_margin_loss")(T(lib, x),
                                                     T(lib, np.array([[0., 1, -1, 0]] * 3))),
        lambda lib: f(lib, "multilabel_margin_loss")(T(lib, rand((2, 3, 4))),
                                                     T(lib, np.zeros((2, 3, 4), np.int64))),
        lambda lib: f(lib, "multilabel_margin_loss")(T(lib, t[None].repeat(3, 0)),
                                                     T(lib, np.zeros((3, 3), np.int64))),
        # ctc
        lambda lib: ctc(lib, il=np.array([7, 5])),
        lambda lib: ctc(lib, tl=np.array([4, 2])),
        lambda lib: ctc(lib, blank=4),
        lambda lib: ctc(lib, blank=-1),
        lambda lib: ctc(lib, il=np.array([6])),
        lambda lib: ctc(lib, tl=np.array([3])),
        lambda lib: ctc(lib, il=[6], tl=[3]),
        lambda lib: ctc(lib, il=np.array([-1, 5])),
        lambda lib: ctc(lib, tl=np.array([-1, 2])),
        lambda lib: ctc(lib, il=il * 1.0),
        lambda lib: ctc(lib, tl=tl * 1.0),
        lambda lib: ctc(lib, tg=np.array([1, 2, 1, 3])),
        lambda lib: ctc(lib, tg=tg[None]),
        lambda lib: ctc(lib, lp=lp[None]),
        lambda lib: ctc(lib, lp=lp[0, 0]),
        lambda lib: ctc(lib, lp=np.ones((6, 2, 4), np.int64)),
        lambda lib: ctc(lib, reduction="foo"),
        lambda lib: ctc(lib, il=[6, 5]),
        lambda lib: ctc(lib, tl=(3, 2)),
        lambda lib: ctc(lib, il=[6, 5], tl=[3, 2], blank=1.0),
        lambda lib: ctc(lib, zero_infinity=1),
        lambda lib: ctc(lib, lp=np.zeros((0, 2, 4)), il=[0, 0], tl=[0, 0]),
        lambda lib: ctc(lib, lp=lp.astype(np.float16)),
        # more orderings of the checks
        lambda lib: f(lib, "nll_loss")(T(lib, x), T(lib, np.array(1))),
        lambda lib: f(lib, "nll_loss")(T(lib, x), T(lib, t * 1.0), weight=T(lib, np.ones(3))),
        lambda lib: f(lib, "nll_loss")(T(lib, t[None].repeat(3, 0)), T(lib, t),
                                       weight=T(lib, np.ones(3))),
        lambda lib: f(lib, "nll_loss")(T(lib, x4), T(lib, np.ones((2, 2, 3)))),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, x), T(lib, t * 1.0),
                                                weight=T(lib, np.ones(4, np.float32))),
        lambda lib: f(lib, "multi_margin_loss")(T(lib, np.ones((3, 0))), T(lib, t)),
        lambda lib: f(lib, "multilabel_margin_loss")(T(lib, t[None].repeat(3, 0)),
                                                     T(lib, np.array([[0., 1, -1]] * 3))),
        lambda lib: f(lib, "binary_cross_entropy")(T(lib, t[None].repeat(3, 0)),
                                                   T(lib, t[None].repeat(3, 0))),
        lambda lib: f(lib, "binary_cross_entropy_with_logits")(T(lib, x), T(lib, x > 0.5)),
        lambda lib: f(lib, "binary_cross_entropy_with_logits")(
            T(lib, x), T(lib, x), weight=T(lib, np.ones((2, 3, 4)))),
        lambda lib: f(lib, "huber_loss")(T(lib, t[None].repeat(4, 0).T), T(lib, x)),
        lambda lib: f(lib, "soft_margin_loss")(T(lib, t[None].repeat(4, 0).T), T(lib, x)),
        lambda lib: f(lib, "kl_div")(T(lib, x), T(lib, t[None].repeat(4, 0).T)),
        lambda lib: f(lib, "margin_ranking_loss")(T(lib, x + 0j), T(lib, x + 0j), T(lib, x)),
        lambda lib: f(lib, "triplet_margin_loss")(T(lib, x), T(lib, x[1]), T(lib, x[2])),
    ]


def test_errors():
    for k, case in enumerate(_error_cases()):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                raises_both(case)
        except AssertionError as ex:
            raise AssertionError(f"error case {k}: {ex}") from None


# ---- linear_cross_entropy -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_opinfo_linear_cross_entropy(dtype):
    """The reference path (options=None) and the chunked one ('mean'/'sum', 'none'): every
    second sample of each variant (values, gradients, node names; tangents where PyTorch has
    them, i.e. on the reference path only)."""
    n = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in opinfos("nn.functional.linear_cross_entropy"):
            for k, s in enumerate(info.sample_inputs("cpu", dtype, requires_grad=True)):
                if k % 2 == 0:
                    check_sample(info, s)
                    n += 1
    assert n > 150


def _lce_inputs(lib, n=6, c=5, f=3, dtype="float64"):
    rng = np.random.default_rng(7)
    x = T(lib, rng.standard_normal((n, f)).astype(dtype)).requires_grad_()
    w = T(lib, rng.standard_normal((c, f)).astype(dtype)).requires_grad_()
    b = T(lib, rng.standard_normal(c).astype(dtype)).requires_grad_()
    t = T(lib, np.array([0, 4, 1, -100, 2, 3][:n]))
    return x, w, b, t


@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("opts", [dict(), dict(batch_chunk_size=4, chunking_method=None),
                                  dict(chunking_method="aspect_ratio:2"),
                                  dict(allow_retain_graph=True, acc_policy="accurate")])
def test_linear_cross_entropy_chunked(red, opts):
    """Chunked results equal the reference path's, with PyTorch's nodes; the precomputed
    gradients are consumed by the first backward unless ``allow_retain_graph``; a dual input
    gives no tangent; the backward is not differentiable."""
    res = {}
    for lib in (ember, torch):
        x, w, b, t = _lce_inputs(lib)
        o = lib.nn.LinearCrossEntropyOptions(**opts)
        loss = lib.nn.functional.linear_cross_entropy(x, w, t, linear_bias=b, reduction=red,
                                                      options=o)
        g = T(lib, np.linspace(0.5, 2.0, loss.numel()).reshape(tuple(loss.shape)))
        grads = lib.autograd.grad(loss, (x, w, b), g, retain_graph=True)
        again = None
        try:
            again = lib.autograd.grad(loss, (x, w, b), g)
        except RuntimeError as ex:
            again = str(ex)
        ref = lib.nn.functional.linear_cross_entropy(x, w, t, linear_bias=b, reduction=red)
        refg = lib.autograd.grad(ref, (x, w, b), g)
        loss2 = lib.nn.functional.linear_cross_entropy(x, w, t, linear_bias=b, reduction=red,
                                                       options=o)
        g2 = lib.autograd.grad(loss2, x, g, create_graph=True)[0]
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            xd = fw.make_dual(x.detach(), x.detach() * 0 + 1)
            tan = fw.unpack_dual(lib.nn.functional.linear_cross_entropy(
                xd, w.detach(), t, reduction=red, options=o)).tangent
        res[lib] = (loss, grads, again, ref, refg, loss2.grad_fn.name(), g2.requires_grad, tan)
    (le, ge, ae, re_, rge, ne, dge, te), (lt, gt, at, rt, rgt, nt, dgt, tt) = res[ember], \
        res[torch]
    assert_same(le, lt)
    assert_same(list(ge), list(gt))
    assert_same(re_, rt)
    assert_same(list(rge), list(rgt))
    assert_same(le, rt)
    assert_same(list(ge), list(rgt))
    if isinstance(at, str):
        assert ae == at
    else:
        assert_same(list(ae), list(at))
    assert ne == nt.replace("torch::", "ember::")
    assert dge == dgt and te is None and tt is None


def test_linear_cross_entropy_unbatched_and_fallback():
    """A 1-D input through the chunked path (SqueezeBackward1 on top); K-dimensional weights
    and label smoothing fall back to the reference path with PyTorch's warning."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal(3), rng.standard_normal((4, 3))
    w3, t3 = rng.standard_normal((4, 2, 3)), np.array([[0, 3], [1, 2]])
    for case in [
        lambda lib: lib.nn.functional.linear_cross_entropy(
            T(lib, x).requires_grad_(), T(lib, w), T(lib, np.array(2)),
            options=lib.nn.LinearCrossEntropyOptions()),
        lambda lib: lib.nn.functional.linear_cross_entropy(
            T(lib, x[None].repeat(2, 0)).requires_grad_(), T(lib, w3), T(lib, t3),
            options=lib.nn.LinearCrossEntropyOptions()),
        lambda lib: lib.nn.functional.linear_cross_entropy(
            T(lib, x[None].repeat(2, 0)).requires_grad_(), T(lib, w), T(lib, np.array([1, 2])),
            label_smoothing=0.1, options=lib.nn.LinearCrossEntropyOptions()),
    ]:
        re_, we, rt, wt = [], [], [], []
        for lib, store in ((ember, (re_, we)), (torch, (rt, wt))):
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                r = case(lib)
            store[0].append(r)
            store[1].extend(str(m.message).replace("torch.", "ember.") for m in rec)
        assert_same(re_[0], rt[0])
        assert we == wt
        assert re_[0].grad_fn.name() == rt[0].grad_fn.name().replace("torch::", "ember::")


def test_linear_cross_entropy_errors():
    rng = np.random.default_rng(4)
    x, w, t = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), np.array([0, 1, 2])
    f = "linear_cross_entropy"

    def call(lib, *a, **kw):
        return getattr(lib.nn.functional, f)(*a, **kw)
    for k, case in enumerate([
        lambda lib: call(lib, T(lib, x[None]), T(lib, w), T(lib, t)),
        lambda lib: call(lib, T(lib, x), T(lib, w[0]), T(lib, t)),
        lambda lib: call(lib, T(lib, x), T(lib, w[:, :3]), T(lib, t)),
        lambda lib: call(lib, T(lib, x), T(lib, w), T(lib, t), linear_bias=T(lib, w[0])),
        lambda lib: call(lib, T(lib, x[0]), T(lib, w[:, None]), T(lib, t[0])),
        lambda lib: call(lib, T(lib, x), T(lib, w), T(lib, rng.random((3, 5))), ignore_index=1),
        lambda lib: call(lib, T(lib, x), T(lib, w), T(lib, np.array([0, 7, 1]))),
        lambda lib: call(lib, T(lib, x), T(lib, w), T(lib, np.array([0, 7, 1])),
                         options=lib.nn.LinearCrossEntropyOptions()),
        lambda lib: call(lib, T(lib, x), T(lib, w), T(lib, np.array([0, -3, 1])),
                         options=lib.nn.LinearCrossEntropyOptions(), reduction="none"),
        lambda lib: call(lib, T(lib, x), T(lib, w), T(lib, t),
                         options=lib.nn.LinearCrossEntropyOptions(batch_chunk_size=3,
                                                                  chunking_method="aspect_ratio")),
        lambda lib: call(lib, T(lib, x), T(lib, w), T(lib, t),
                         options=lib.nn.LinearCrossEntropyOptions(acc_dtype=lib.float32)),
        lambda lib: lib.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
        lambda lib: lib.nn.LinearCrossEntropyOptions(acc_policy="fast"),
        lambda lib: lib.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:0"),
        lambda lib: lib.nn.LinearCrossEntropyOptions(acc_dtype=lib.int64),
    ]):
        try:
            raises_both(case)
        except AssertionError as ex:
            raise AssertionError(f"case {k}: {ex}") from None
