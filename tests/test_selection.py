"""Selection ops against PyTorch: sort/argsort/msort/topk, kthvalue/median/nanmedian/mode,
cummax/cummin/logcumsumexp (values, index dtypes, return types, grad_fn names, reverse/forward
gradients, double backward) and the non-differentiable unique/bincount/histc/searchsorted/
bucketize, with PyTorch's error messages."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, check_op, pair, raises_same

FLOATS = ["float64", "float32"]
NAN = float("nan")


def data(shape=(3, 5), dtype="float64", seed=0):
    # distinct values: PyTorch's tie-breaking is unspecified for most of these ops
    return np.random.default_rng(seed).permutation(np.arange(int(np.prod(shape)))).reshape(
        shape).astype(dtype) * 0.37 - 2.0


SEL = {
    "sort": lambda L, x: L.sort(x),
    "sort_dim0_desc": lambda L, x: L.sort(x, 0, True),
    "sort_stable": lambda L, x: x.sort(dim=1, descending=True, stable=True),
    "msort": lambda L, x: L.msort(x),
    "topk": lambda L, x: L.topk(x, 2),
    "topk_small_dim0": lambda L, x: x.topk(2, 0, False),
    "kthvalue": lambda L, x: L.kthvalue(x, 2),
    "kthvalue_keep": lambda L, x: x.kthvalue(3, 0, True),
    "median": lambda L, x: L.median(x),
    "median_dim": lambda L, x: L.median(x, 1),
    "median_keep": lambda L, x: x.median(0, True),
    "nanmedian": lambda L, x: L.nanmedian(x),
    "nanmedian_dim": lambda L, x: x.nanmedian(-1, True),
    "cummax": lambda L, x: L.cummax(x, 1),
    "cummin": lambda L, x: x.cummin(0),
    "logcumsumexp": lambda L, x: L.logcumsumexp(x, 1),
    "logcumsumexp0": lambda L, x: x.logcumsumexp(0),
}


@pytest.mark.parametrize("noncontig", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(SEL))
def test_selection_grads(name, dtype, noncontig):
    f = SEL[name]
    oe, ot = check_op(lambda x: f(ember, x), lambda x: f(torch, x), data(dtype=dtype),
                      noncontig=noncontig)
    if isinstance(ot, tuple):
        assert type(oe).__name__ == type(ot).__name__
        assert oe._fields == ("values", "indices")
        assert ot.values is ot[0] and oe.values is oe[0]
        assert oe.indices.dtype is ember.int64


def test_return_type_repr():
    e, t = pair(data())
    assert repr(ember.sort(e)).startswith("ember.return_types.sort(\nvalues=")
    assert isinstance(ember.topk(e, 1), ember.return_types.topk)
    assert type(torch.topk(t, 1)).__name__ == "topk"


def test_mode_and_ties():
    a = np.array([[1., 2., 2., 1., 3.], [3., 3., 1., 1., 2.], [4., 5., 6., 7., 8.]])
    check_op(lambda x: ember.mode(x, 1), lambda x: torch.mode(x, 1), a)
    check_op(lambda x: x.mode(0, True), lambda x: x.mode(0, True), a)
    # median/max-like ties split the gradient for the full median
    b = np.array([[1., 2.], [2., 3.]])
    check_op(lambda x: ember.median(x), lambda x: torch.median(x), b)
    # cummax/cummin: repeated indices accumulate the gradient; ties take the last index
    c = np.array([[1., 3., 3., 2., 5., 5.], [0., -1., -1., 4., -2., -2.]])
    check_op(lambda x: ember.cummax(x, 1), lambda x: torch.cummax(x, 1), c)
    check_op(lambda x: ember.cummin(x, 1), lambda x: torch.cummin(x, 1), c)
    # sort with ties: stable order
    d = np.array([2., 1., 2., 1., 3.])
    check_op(lambda x: ember.sort(x, stable=True), lambda x: torch.sort(x, stable=True), d)
    check_op(lambda x: ember.sort(x, descending=True, stable=True),
             lambda x: torch.sort(x, descending=True, stable=True), d)


def test_nan_handling():
    a = np.array([[1., NAN, 3., 2.], [NAN, NAN, 1., 0.], [5., 4., 3., 2.]])
    for f in [lambda L, x: L.median(x, 1), lambda L, x: L.nanmedian(x, 1),
              lambda L, x: L.median(x), lambda L, x: L.nanmedian(x),
              lambda L, x: L.sort(x, dim=1, descending=True, stable=True),
              lambda L, x: L.sort(x, 1),
              lambda L, x: L.cummax(x, 1), lambda L, x: L.cummin(x, 1),
              lambda L, x: L.nanmedian(x[1:2, :2], 1)]:
        check_op(lambda x: f(ember, x), lambda x: f(torch, x), a, fwd=False)
    for f in [lambda L, x: L.median(x), lambda L, x: L.nanmedian(x)]:
        assert_same(f(ember, ember.tensor([NAN, NAN])), f(torch, torch.tensor([NAN, NAN])))
        assert_same(f(ember, ember.empty(0)), f(torch, torch.empty(0)))


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_integer_inputs(dtype):
    a = np.random.default_rng(1).permutation(12).reshape(3, 4).astype(dtype)
    if dtype == "bool":
        a = np.array([True, False, False, True, True])
    for f in [lambda L, x: L.sort(x, stable=True), lambda L, x: L.argsort(x, stable=True),
              lambda L, x: L.cummax(x, -1), lambda L, x: L.cummin(x, 0),
              lambda L, x: L.msort(x), lambda L, x: L.mode(x)]:
        assert_same(f(ember, ember.from_numpy(a.copy())), f(torch, torch.from_numpy(a.copy())))
    fs = [lambda L, x: L.topk(x, 2), lambda L, x: L.kthvalue(x, 2),
          lambda L, x: L.median(x, -1), lambda L, x: L.median(x), lambda L, x: L.nanmedian(x)]
    if dtype == "bool":
        for f in fs:
            raises_same(lambda: f(ember, ember.from_numpy(a.copy())),
                        lambda: f(torch, torch.from_numpy(a.copy())))
    else:
        for f in fs:
            assert_same(f(ember, ember.from_numpy(a.copy())),
                        f(torch, torch.from_numpy(a.copy())))


def test_argsort_and_zero_dim():
    a = data()
    e, t = pair(a)
    assert_same(ember.argsort(e, 0, True), torch.argsort(t, 0, True))
    assert_same(e.argsort(), t.argsort())
    for f in [lambda L, x: L.sort(x), lambda L, x: L.topk(x, 1), lambda L, x: L.kthvalue(x, 1),
              lambda L, x: L.median(x, 0), lambda L, x: L.mode(x), lambda L, x: L.cummax(x, 0),
              lambda L, x: L.msort(x), lambda L, x: L.logcumsumexp(x, 0)]:
        check_op(lambda x: f(ember, x), lambda x: f(torch, x), np.array(1.5))
    check_op(lambda x: ember.topk(x, 0, 1), lambda x: torch.topk(x, 0, 1), a)


def test_logcumsumexp_extremes():
    a = np.array([[-np.inf, -np.inf, 0.0, 1000.0], [1e3, -1e3, 5.0, -np.inf]])
    e, t = pair(a)
    assert_same(ember.logcumsumexp(e, 1), torch.logcumsumexp(t, 1))
    b = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -2.0]])
    check_op(lambda x: ember.logcumsumexp(x, 1), lambda x: torch.logcumsumexp(x, 1), b)


def test_unique():
    a = np.array([3, 1, 2, 1, 3, 3])
    e, t = pair(a)
    for kw in [{}, {"return_inverse": True}, {"return_counts": True},
               {"return_inverse": True, "return_counts": True, "sorted": False}]:
        assert_same(ember.unique(e, **kw), torch.unique(t, **kw))
        assert_same(e.unique(**kw), t.unique(**kw))
    m = np.array([[3, 1], [1, 3], [3, 1], [0, 0]])
    e, t = pair(m)
    for d in (0, 1):
        assert_same(ember.unique(e, return_inverse=True, return_counts=True, dim=d),
                    torch.unique(t, return_inverse=True, return_counts=True, dim=d))
    c = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    e, t = pair(c)
    for kw in [{}, {"return_inverse": True, "return_counts": True}]:
        assert_same(ember.unique_consecutive(e, **kw), torch.unique_consecutive(t, **kw))
    e, t = pair(np.array([[1, 2], [1, 2], [3, 4], [1, 2]]))
    assert_same(ember.unique_consecutive(e, True, True, dim=0),
                torch.unique_consecutive(t, True, True, dim=0))
    # float input that requires grad: values carry a node whose backward is not implemented
    e, t = pair(np.array([2.0, 1.0, 2.0]), requires_grad=True)
    ue, ut = ember.unique(e), torch.unique(t)
    assert_same(ue, ut)
    assert ue.grad_fn.name() == ut.grad_fn.name()
    raises_same(lambda: ue.sum().backward(), lambda: ut.sum().backward())
    assert ember.unique(e, dim=0).grad_fn.name() == torch.unique(t, dim=0).grad_fn.name()
    uce, uct = ember.unique_consecutive(e), torch.unique_consecutive(t)
    assert uce.grad_fn.name() == uct.grad_fn.name()
    raises_same(lambda: uce.sum().backward(), lambda: uct.sum().backward())


def test_bincount_histc():
    i = np.array([1, 1, 3, 0, 7])
    w = np.array([0.5, 1.0, 2.0, -1.0, 3.0])
    ie, it = pair(i)
    assert_same(ember.bincount(ie), torch.bincount(it))
    assert_same(ie.bincount(minlength=10), it.bincount(minlength=10))
    for dt in ("float32", "float64", "int32"):
        we, wt = pair(w.astype(dt))
        assert_same(ember.bincount(ie, we), torch.bincount(it, wt))
    i32e, i32t = pair(i.astype("int32"))
    assert_same(ember.bincount(i32e), torch.bincount(i32t))
    raises_same(lambda: ember.bincount(ember.tensor([-1, 2])),
                lambda: torch.bincount(torch.tensor([-1, 2])))
    raises_same(lambda: ember.bincount(ember.tensor([[1, 2]])),
                lambda: torch.bincount(torch.tensor([[1, 2]])))
    raises_same(lambda: ember.bincount(ember.tensor([1.0])),
                lambda: torch.bincount(torch.tensor([1.0])))
    for dt in FLOATS:
        x = np.random.default_rng(3).standard_normal(50).astype(dt)
        e, t = pair(x)
        assert_same(ember.histc(e), torch.histc(t))
        assert_same(e.histc(7, -1, 1), t.histc(7, -1, 1))
        assert_same(ember.histc(e, bins=4, min=0, max=3), torch.histc(t, bins=4, min=0, max=3))
    e, t = pair(np.array([1.0, 1.0]))
    assert_same(ember.histc(e, 4), torch.histc(t, 4))
    raises_same(lambda: ember.histc(ember.tensor([1, 2])),
                lambda: torch.histc(torch.tensor([1, 2])))
    raises_same(lambda: ember.histc(ember.tensor([1.0]), bins=-1),
                lambda: torch.histc(torch.tensor([1.0]), bins=-1))
    raises_same(lambda: ember.histc(ember.tensor([1.0]), min=3, max=1),
                lambda: torch.histc(torch.tensor([1.0]), min=3, max=1))


def test_searchsorted_bucketize():
    seq = np.array([1, 3, 5, 7, 9])
    vals = np.array([[3, 6, 9], [0, 10, 5]])
    se, st = pair(seq)
    ve, vt = pair(vals)
    for kw in [{}, {"right": True}, {"side": "right"}, {"side": "left", "out_int32": True}]:
        assert_same(ember.searchsorted(se, ve, **kw), torch.searchsorted(st, vt, **kw))
    assert_same(ember.searchsorted(se, 5), torch.searchsorted(st, 5))
    s2 = np.array([[1., 3., 5.], [2., 4., 6.]])
    v2 = np.array([[3.5, 0.0], [6.0, 4.0]])
    assert_same(ember.searchsorted(*pair(s2)[:1], pair(v2)[0], right=True),
                torch.searchsorted(pair(s2)[1], pair(v2)[1], right=True))
    unsorted = np.array([1, 9, 5, 7, 3])
    sorter = np.array([0, 4, 2, 3, 1])
    assert_same(ember.searchsorted(pair(unsorted)[0], ve, sorter=pair(sorter)[0]),
                torch.searchsorted(pair(unsorted)[1], vt, sorter=pair(sorter)[1]))
    for kw in [{}, {"right": True}, {"out_int32": True}]:
        assert_same(ember.bucketize(ve, se, **kw), torch.bucketize(vt, st, **kw))
    assert_same(ember.bucketize(3, se, right=True), torch.bucketize(3, st, right=True))
    raises_same(lambda: ember.searchsorted(se, ve, side="left", right=True),
                lambda: torch.searchsorted(st, vt, side="left", right=True))
    raises_same(lambda: ember.searchsorted(ember.tensor([[1, 3, 5, 7, 9]]), ve),
                lambda: torch.searchsorted(torch.tensor([[1, 3, 5, 7, 9]]), vt))
    raises_same(lambda: ember.bucketize(ve, ember.tensor([[1, 3]])),
                lambda: torch.bucketize(vt, torch.tensor([[1, 3]])))


def test_errors():
    a = data()
    e, t = pair(a)
    raises_same(lambda: ember.kthvalue(e, 6, 1), lambda: torch.kthvalue(t, 6, 1))
    raises_same(lambda: ember.kthvalue(e, 0), lambda: torch.kthvalue(t, 0))
    raises_same(lambda: ember.topk(e, 6), lambda: torch.topk(t, 6))
    raises_same(lambda: ember.topk(e, -1), lambda: torch.topk(t, -1))
    raises_same(lambda: ember.sort(e, 2), lambda: torch.sort(t, 2))
    raises_same(lambda: ember.cummax(e, -3), lambda: torch.cummax(t, -3))
    z = np.zeros((2, 0))
    ze, zt = pair(z)
    for f in [lambda L, x: L.median(x, 1), lambda L, x: L.mode(x, 1),
              lambda L, x: L.kthvalue(x, 1, 1), lambda L, x: L.nanmedian(x, 1)]:
        raises_same(lambda: f(ember, ze), lambda: f(torch, zt))
    ce, ct = pair(np.array([1 + 1j, 2j]))
    raises_same(lambda: ember.sort(ce), lambda: torch.sort(ct))
    ie, it = pair(np.array([1, 2, 3]))
    raises_same(lambda: ember.logcumsumexp(ie, 0), lambda: torch.logcumsumexp(it, 0))
