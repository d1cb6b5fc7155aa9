"""Indexing against PyTorch: __getitem__/__setitem__ (views, copies, CopySlices), the
gather/scatter/index_*/masked_* family, nonzero, and their errors."""
import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, check_op, raises_same

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4, 5))
B = RNG.standard_normal((4, 5))


def both(build):
    """A key builder ``build(module)`` evaluated for ember and for torch."""
    return build(ember), build(torch)


# ---- __getitem__ -------------------------------------------------------------------------

BASIC_KEYS = [
    lambda m: 0,
    lambda m: -1,
    lambda m: slice(1, None),
    lambda m: (slice(None), 1),
    lambda m: (None, 0),
    lambda m: (Ellipsis, 1),
    lambda m: (0, Ellipsis, None),
    lambda m: (slice(None, None, 2), slice(1, 3), -2),
    lambda m: (1, 2, 3),
    lambda m: (),
    lambda m: Ellipsis,
    lambda m: m.tensor(1),
    lambda m: (np.int64(2), slice(0, 2)),
    lambda m: slice(10, 20),
]


@pytest.mark.parametrize("build", BASIC_KEYS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_getitem_basic(build, dtype):
    ke, kt = both(build)
    oe, ot = check_op(lambda x: x[ke], lambda x: x[kt], A.astype(dtype))
    assert (oe._base is not None) == (ot._base is not None)


ADV_KEYS = [
    lambda m: [0, 2],
    lambda m: m.tensor([[0, 1], [2, 0]]),
    lambda m: (0, slice(None), [0, 1]),
    lambda m: ([0, 1], slice(None), 0),
    lambda m: (slice(None), [1, 3]),
    lambda m: (slice(1, None), [0]),
    lambda m: ([0, 1], [1, 2]),
    lambda m: (m.tensor([[0], [2]]), m.tensor([1, 3])),
    lambda m: ([-1, 0, -3],),
    lambda m: (None, [0, 1], None, [0]),
    lambda m: ([0, 1], None, [0]),
    lambda m: (Ellipsis, [0, 4]),
    lambda m: (Ellipsis, [0, 1], slice(None)),
    lambda m: m.from_numpy(A[:, 0, 0] > 0),
    lambda m: m.from_numpy(A[:, :, 0] > 0),
    lambda m: (slice(None), m.from_numpy(B > 0)),
    lambda m: [True, False, True],
    lambda m: True,
    lambda m: False,
    lambda m: m.tensor(True),
    lambda m: np.array([2, 0]),
    lambda m: (m.tensor(1), [0]),
    lambda m: m.tensor([1, 0], dtype=m.int32),
    lambda m: [],
    lambda m: ([0, 2], [1, 1], [4, 0]),
]


@pytest.mark.parametrize("build", ADV_KEYS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_getitem_advanced(build, dtype):
    ke, kt = both(build)
    oe, ot = check_op(lambda x: x[ke], lambda x: x[kt], A.astype(dtype))
    assert oe._base is None and ot._base is None


def test_getitem_duplicates_accumulate():
    check_op(lambda x: x[[0, 0, 2, 0]], lambda x: x[[0, 0, 2, 0]], B)
    check_op(lambda x: x[[1, 1], [2, 2]], lambda x: x[[1, 1], [2, 2]], B)


def test_getitem_noncontig_and_ints():
    check_op(lambda x: x[[0, 2], 1:], lambda x: x[[0, 2], 1:], B, noncontig=True)
    e = ember.arange(12).reshape(3, 4)
    t = torch.arange(12).reshape(3, 4)
    assert_same(e[[0, 2]], t[[0, 2]])
    assert_same(e[e > 5], t[t > 5])
    assert_same(e[1, [0, 3]], t[1, [0, 3]])


def test_getitem_view_semantics():
    x = ember.zeros(3, 4)
    v = x[0]
    v[1] = 5.0
    assert x[0, 1].item() == 5.0
    assert x._version == v._version == 1
    c = x[[0]]
    c[0, 0] = 7.0
    assert x[0, 0].item() == 0.0
    assert x._version == 1
    s = x[:, 1:3]
    s.fill_(2.0)
    assert x.numpy()[:, 1:3].tolist() == [[2.0, 2.0]] * 3
    assert x[...].data_ptr() == x.data_ptr()


def test_getitem_grad_fn_chain():
    xe, xt = ember.randn(2, 3, 4, requires_grad=True), torch.randn(2, 3, 4, requires_grad=True)
    for k in [(0, slice(None), [0, 1]), (slice(1, None), [0]), (None, [0])]:
        fe, ft = xe[k].grad_fn, xt[k].grad_fn
        assert fe.name() == ft.name()
        assert type(fe.next_functions[0][0]).__name__ == type(ft.next_functions[0][0]).__name__


# ---- __setitem__ -------------------------------------------------------------------------

SET_CASES = [
    (lambda m: 0, lambda m: 1.5),
    (lambda m: (slice(None), 1), lambda m: m.ones(3, 5)),
    (lambda m: slice(1, None), lambda m: m.ones(1, 1, 5) * 2),
    (lambda m: (0, Ellipsis), lambda m: m.ones(1, 4, 5)),
    (lambda m: [0, 2], lambda m: -1.0),
    (lambda m: ([0, 2], slice(None), 1), lambda m: m.arange(8.0).reshape(2, 4)),
    (lambda m: (slice(1, None), [0, 3]), lambda m: 3.0),
    (lambda m: (0, slice(None), [4]), lambda m: m.ones(4, 1)),
    (lambda m: m.from_numpy(A > 0), lambda m: 0.0),
    (lambda m: m.from_numpy(A[:, :, 0] > 0), lambda m: m.arange(5.0)),
    (lambda m: Ellipsis, lambda m: 2.0),
    (lambda m: (), lambda m: m.zeros(4, 5)),
    (lambda m: None, lambda m: 2.0),
    (lambda m: True, lambda m: 4.0),
    (lambda m: m.tensor(2), lambda m: m.ones(5)),
]


@pytest.mark.parametrize("case", SET_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_setitem_values_and_grads(case, dtype):
    key, val = case
    (ke, kt), (ve, vt) = both(key), both(val)
    if isinstance(ve, ember.Tensor):
        ve, vt = ve.to(getattr(ember, dtype)), vt.to(getattr(torch, dtype))

    def run(m, k, v):
        def f(x):
            y = x.clone()
            y[k] = v
            return y * 1
        return f
    check_op(run(ember, ke, ve), run(torch, kt, vt), A.astype(dtype))


def _base_grad_fn(key, val):
    out = []
    for m, k, v in [(ember, *both(key)[:1], both(val)[0]), (torch, both(key)[1],
                                                               both(val)[1])]:
        x = m.randn(3, 4, 5, requires_grad=True)
        y = x.clone()
        y[k] = v
        out.append((y.grad_fn.name(), y._version))
    return out


@pytest.mark.parametrize("case", SET_CASES)
def test_setitem_grad_fn_and_version(case):
    (ne, ve), (nt, vt) = _base_grad_fn(*case)
    assert ve == vt == 1
    # copy_/fill_ node naming (CopyBackwards prefix, FillBackward overload) belongs to copy.py
    strip = ("torch::autograd::", "ember::autograd::")
    for p in strip:
        ne, nt = ne.replace(p, ""), nt.replace(p, "")
    assert ne == nt or (ne.startswith("Fill") and nt.startswith("Fill"))


def test_setitem_value_grad_pattern():
    """out = zeros(n); out[i] = f(w): gradient flows to w through the rebased history."""
    w = RNG.standard_normal((3, 5))
    grads = []
    for m in (ember, torch):
        wt = m.from_numpy(w.copy()).requires_grad_()
        out = m.zeros(4, 5, dtype=m.float64)
        out[1] = (wt[0] * 2).sin()
        out[[0, 3]] = wt[1:] ** 2
        out[2, 1:] = wt[0, :4] * wt[2, 1:]
        (out * m.arange(20.0).reshape(4, 5)).sum().backward()
        grads.append(wt.grad)
        assert out._version == 3
    assert_same(*grads)


def test_setitem_inplace_on_slice_clone():
    x = RNG.standard_normal((4, 3))

    def f(m):
        def g(t):
            y = t.clone()
            y[1:] *= 2
            y[:, 0] += y[:, 1]
            y[[0, 2]] = y[[2, 0]] * 3
            return y
        return g
    check_op(f(ember), f(torch), x)
    check_op(f(ember), f(torch), x.astype(np.float32), fwd=False)


def test_setitem_shares_and_bumps():
    x = ember.zeros(3)
    v0 = x._version
    x[0] = 1
    x[[1]] = 2
    x[x == 0] = 3
    assert x.tolist() == [1.0, 2.0, 3.0]
    assert x._version == v0 + 3
    li = ember.zeros(3, dtype=ember.int64)
    li[[0]] = 2.7
    li[1] = 3.9
    assert li.tolist() == [2, 3, 0]


def test_setitem_leaf_errors():
    raises_same(lambda: ember.zeros(3, requires_grad=True).__setitem__(0, 1.0),
                lambda: torch.zeros(3, requires_grad=True).__setitem__(0, 1.0))
    raises_same(lambda: ember.zeros(3, requires_grad=True).__setitem__([0], 1.0),
                lambda: torch.zeros(3, requires_grad=True).__setitem__([0], 1.0))


def test_setitem_errors():
    def s(m, k, v):
        return lambda: m.zeros(3, 4).__setitem__(k(m), v(m))
    cases = [
        (lambda m: [0, 1], lambda m: m.ones(3, 4)),
        (lambda m: [5], lambda m: 1.0),
        (lambda m: [0], lambda m: m.ones(4, dtype=m.float64)),
        (lambda m: 0, lambda m: [1.0, 2.0]),
        (lambda m: m.ones(3, dtype=m.bool), lambda m: m.ones(2)),
    ]
    for k, v in cases:
        raises_same(s(ember, k, v), s(torch, k, v))


# ---- functions ---------------------------------------------------------------------------

IDX = np.array([[0, 1, 4], [2, 0, 0], [3, 3, 1]])
IDX_E, IDX_T = ember.from_numpy(IDX), torch.from_numpy(IDX)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gather(dtype):
    x = B.astype(dtype)
    check_op(lambda a: a.gather(1, IDX_E), lambda a: a.gather(1, IDX_T), x)
    check_op(lambda a: ember.gather(a, 0, IDX_E % 4), lambda a: torch.gather(a, 0, IDX_T % 4),
             x, noncontig=True)
    check_op(lambda a: a.gather(0, ember.tensor(0)), lambda a: a.gather(0, torch.tensor(0)),
             np.array(2.5, dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_scatter(dtype):
    x, s = B.astype(dtype), RNG.standard_normal((3, 3)).astype(dtype)
    ie = ember.tensor([[0, 1, 4], [2, 0, 3], [3, 2, 1]])
    it = torch.tensor([[0, 1, 4], [2, 0, 3], [3, 2, 1]])
    check_op(lambda a, b: a.scatter(1, ie, b), lambda a, b: a.scatter(1, it, b), x, s)
    check_op(lambda a: ember.scatter(a, 1, ie, 2.5), lambda a: torch.scatter(a, 1, it, 2.5), x)
    check_op(lambda a: a.scatter(1, ie, value=-1.0), lambda a: a.scatter(1, it, value=-1.0), x)
    check_op(lambda a, b: a.scatter_add(1, IDX_E, b), lambda a, b: a.scatter_add(1, IDX_T, b),
             x, s)
    check_op(lambda a, b: ember.scatter_add(a, 0, IDX_E % 4, b),
             lambda a, b: torch.scatter_add(a, 0, IDX_T % 4, b), x, s)
    check_op(lambda a, b: a.scatter(1, IDX_E, b, reduce="add"),
             lambda a, b: a.scatter(1, IDX_T, b, reduce="add"), x, s, grad=False)
    check_op(lambda a: a.scatter(1, IDX_E, 3.0, reduce="multiply"),
             lambda a: a.scatter(1, IDX_T, 3.0, reduce="multiply"), x, grad=False)


def test_scatter_src_larger_than_index_backward():
    def f(m):
        s = m.ones(3, 4, requires_grad=True)
        m.zeros(3, 4).scatter(1, m.tensor([[0, 1], [2, 0]]), s).sum().backward()
    raises_same(lambda: f(ember), lambda: f(torch))


def test_scatter_reduce_no_derivative():
    def f(m):
        x = m.randn(3, 4, requires_grad=True)
        m.zeros(3, 4).scatter(1, m.tensor([[0]]), x, reduce="add").sum().backward()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_same(lambda: f(ember), lambda: f(torch))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_index_select(dtype):
    x = A.astype(dtype)
    for d, ix in [(0, [2, 0, 2]), (1, [3]), (-1, [4, 0, 1, 1]), (2, [])]:
        ie, it = ember.tensor(ix, dtype=ember.int64), torch.tensor(ix, dtype=torch.int64)
        check_op(lambda a, d=d, ie=ie: a.index_select(d, ie),
                 lambda a, d=d, it=it: a.index_select(d, it), x)
    check_op(lambda a: ember.index_select(a, 1, ember.tensor(2)),
             lambda a: torch.index_select(a, 1, torch.tensor(2)), x)
    check_op(lambda a: a.index_select(1, ember.tensor([1, 0], dtype=ember.int32)),
             lambda a: a.index_select(1, torch.tensor([1, 0], dtype=torch.int32)), x,
             noncontig=True)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_masked_fill(dtype):
    x = B.astype(dtype)
    m = B[0] > 0
    me, mt = ember.from_numpy(m), torch.from_numpy(m)
    check_op(lambda a: a.masked_fill(me, 2.0), lambda a: a.masked_fill(mt, 2.0), x)
    check_op(lambda a, v: a.masked_fill(me, v), lambda a, v: a.masked_fill(mt, v), x,
             np.array(3.0, dtype))
    m2 = RNG.standard_normal((3, 4, 5)) > 0
    check_op(lambda a: ember.masked_fill(a, ember.from_numpy(m2), -1.0),
             lambda a: torch.masked_fill(a, torch.from_numpy(m2), -1.0), x)
    check_op(lambda a: a.masked_select(me), lambda a: a.masked_select(mt), x)
    check_op(lambda a: ember.masked_select(a, ember.from_numpy(m2)),
             lambda a: torch.masked_select(a, torch.from_numpy(m2)), x)

    def inpl(m, mask, v):
        def f(a):
            y = a.clone()
            y.masked_fill_(mask, v)
            return y
        return f
    check_op(inpl(ember, me, 0.5), inpl(torch, mt, 0.5), x)
    i = ember.zeros(3, dtype=ember.int64).masked_fill(ember.tensor([True, False, True]), 2.7)
    assert i.tolist() == [2, 0, 2]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_take(dtype):
    x = B.astype(dtype)
    ix = np.array([[0, 19, -1], [5, 5, 0]])
    check_op(lambda a: ember.take(a, ember.from_numpy(ix)),
             lambda a: torch.take(a, torch.from_numpy(ix)), x, noncontig=True)
    ie, it = ember.tensor([[0, 1, 4]]), torch.tensor([[0, 1, 4]])
    check_op(lambda a: a.take_along_dim(ie, 1), lambda a: a.take_along_dim(it, 1), x)
    check_op(lambda a: ember.take_along_dim(a, IDX_E), lambda a: torch.take_along_dim(a, IDX_T),
             x)
    ie, it = ember.tensor([[0], [1], [4], [2]]), torch.tensor([[0], [1], [4], [2]])
    check_op(lambda a: ember.take_along_dim(a, ie, -1), lambda a: torch.take_along_dim(a, it, -1),
             x)
    ie, it = ember.tensor([[1, 0, 3, 2, 2]]), torch.tensor([[1, 0, 3, 2, 2]])
    check_op(lambda a: ember.take_along_dim(a, ie, 0), lambda a: torch.take_along_dim(a, it, 0),
             x)
    ie, it = ember.tensor([[1], [0]]), torch.tensor([[1], [0]])
    check_op(lambda a: ember.take_along_dim(a, ie, 1), lambda a: torch.take_along_dim(a, it, 1),
             B[:1].astype(dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_index_add_copy_fill(dtype):
    x, s = B.astype(dtype), RNG.standard_normal((4, 3)).astype(dtype)
    ie, it = ember.tensor([4, 0, 4]), torch.tensor([4, 0, 4])
    check_op(lambda a, b: a.index_add(1, ie, b), lambda a, b: a.index_add(1, it, b), x, s)
    check_op(lambda a, b: ember.index_add(a, 1, ie, b, alpha=-2.0),
             lambda a, b: torch.index_add(a, 1, it, b, alpha=-2.0), x, s)
    ie, it = ember.tensor([4, 0, 2]), torch.tensor([4, 0, 2])
    check_op(lambda a, b: a.index_copy(1, ie, b), lambda a, b: a.index_copy(1, it, b), x, s)
    check_op(lambda a: a.index_fill(1, ie, 1.5), lambda a: a.index_fill(1, it, 1.5), x)
    check_op(lambda a: a.index_fill(0, ember.tensor([-1, 0]), 1.5),
             lambda a: a.index_fill(0, torch.tensor([-1, 0]), 1.5), x)
    check_op(lambda a, v: ember.index_fill(a, 1, ie, v), lambda a, v: torch.index_fill(a, 1, it, v),
             x, np.array(0.5, dtype))

    def inpl(name, *args):
        def f(a, b=None):
            y = a.clone()
            getattr(y, name)(*[b if x is None else x for x in args])
            return y
        return f
    for name in ["index_add_", "index_copy_"]:
        check_op(inpl(name, 1, ie, None), inpl(name, 1, it, None), x, s)
    check_op(inpl("index_fill_", 1, ie, -3.0), inpl("index_fill_", 1, it, -3.0), x)
    check_op(inpl("scatter_", 1, IDX_E[:, :1], None), inpl("scatter_", 1, IDX_T[:, :1], None),
             x[:3], s[:3, :1])
    check_op(inpl("scatter_add_", 1, IDX_E, None), inpl("scatter_add_", 1, IDX_T, None), x[:3],
             s[:3])
    check_op(inpl("scatter_", 1, IDX_E, 9.0), inpl("scatter_", 1, IDX_T, 9.0), x[:3])


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(accumulate):
    x = B
    v = RNG.standard_normal((2,))
    ie = (ember.tensor([0, 2]), ember.tensor([1, 4]))
    it = (torch.tensor([0, 2]), torch.tensor([1, 4]))
    check_op(lambda a, b: a.index_put(ie, b, accumulate),
             lambda a, b: a.index_put(it, b, accumulate), x, v)
    check_op(lambda a, b: ember.index_put(a, ie[:1], b, accumulate=accumulate),
             lambda a, b: torch.index_put(a, it[:1], b, accumulate=accumulate), x, v[:1])

    def inpl(idx):
        def f(a, b):
            y = a.clone()
            y.index_put_(idx, b, accumulate=accumulate)
            return y
        return f
    dup_e, dup_t = (ember.tensor([1, 1, 3]),), (torch.tensor([1, 1, 3]),)
    if accumulate:
        check_op(inpl(dup_e), inpl(dup_t), x, v[:1])
    check_op(inpl(ie), inpl(it), x, v)


def test_nonzero_argwhere():
    for a in [B > 0, np.array(3.0), np.array(0.0), np.zeros((2, 0)), A[0] > 0.5]:
        e, t = ember.from_numpy(a), torch.from_numpy(a)
        assert_same(ember.nonzero(e), torch.nonzero(t))
        assert_same(e.nonzero(as_tuple=True), t.nonzero(as_tuple=True))
        assert_same(ember.argwhere(e), torch.argwhere(t))


def test_integer_and_bool_dtypes():
    e = ember.arange(12).reshape(3, 4)
    t = torch.arange(12).reshape(3, 4)
    assert_same(e.gather(1, IDX_E[:, :2] % 4), t.gather(1, IDX_T[:, :2] % 4))
    assert_same(e.masked_fill(e > 4, -1), t.masked_fill(t > 4, -1))
    assert_same(e.index_fill(0, ember.tensor([1]), 7), t.index_fill(0, torch.tensor([1]), 7))
    assert_same((e > 3)[[0, 2]], (t > 3)[[0, 2]])
    assert_same(e.take(ember.tensor([0, 11])), t.take(torch.tensor([0, 11])))


# ---- errors -----------------------------------------------------------------------------

def _err(build):
    return lambda: build(ember), lambda: build(torch)


ERRORS = [
    lambda m: m.zeros(3)[5],
    lambda m: m.zeros(3)[[5]],
    lambda m: m.zeros(3)[0, 0],
    lambda m: m.zeros(3)[[0], [0]],
    lambda m: m.zeros(2, 3, 4)[0, :, [7]],
    lambda m: m.zeros(2, 3)[[0, 1], [0, 1, 2]],
    lambda m: m.zeros(2, 3)[m.ones(3, dtype=m.bool)],
    lambda m: m.zeros(2, 3)[0, m.ones(5, dtype=m.bool)],
    lambda m: m.zeros(2, 3)[m.tensor([0.5])],
    lambda m: m.zeros(2, 3)[m.tensor(1.0)],
    lambda m: m.zeros(2, 3)[::-1],
    lambda m: m.zeros(3, 4).gather(1, m.tensor([0, 1])),
    lambda m: m.zeros(3, 4).gather(1, m.tensor([[0, 5]])),
    lambda m: m.zeros(3, 4).gather(1, m.tensor([[0]], dtype=m.int16)),
    lambda m: m.zeros(3, 4).scatter(1, m.tensor([[0]], dtype=m.int16), 1.0),
    lambda m: m.zeros(2, 3, 4)[[0], :, [9]],
    lambda m: m.zeros(2, 3, 4)[:, m.ones(3, dtype=m.bool), [9]],
    lambda m: m.zeros(3, 4).index_put_((m.tensor([0]), m.tensor([9])), m.tensor(1.0)),
    lambda m: m.zeros(3, 4).gather(0, m.zeros(4, 5, dtype=m.int64)),
    lambda m: m.zeros(3, 4).gather(2, m.zeros(3, 4, dtype=m.int64)),
    lambda m: m.zeros(3, 4).gather(0, m.tensor([[-1]])),
    lambda m: m.zeros(3, 4).scatter(1, m.tensor([[0, 9]]), 1.0),
    lambda m: m.zeros(3, 4).scatter(1, m.zeros(3, dtype=m.int64), 1.0),
    lambda m: m.zeros(3, 4).scatter(1, m.zeros(4, 4, dtype=m.int64), 1.0),
    lambda m: m.zeros(3, 4).scatter(1, m.zeros(2, 2, dtype=m.int64), m.zeros(1, 1)),
    lambda m: m.zeros(3, 4).scatter(1, m.zeros(2, 2, dtype=m.int64), m.zeros(2, 2).double()),
    lambda m: m.zeros(3, 4).scatter(1, m.zeros(2, 2, dtype=m.int64), m.zeros(2, 2), reduce="x"),
    lambda m: m.zeros(3, 4).index_select(0, m.tensor([[0]])),
    lambda m: m.zeros(3, 4).index_select(0, m.tensor([0, 5])),
    lambda m: m.zeros(3, 4).index_select(0, m.tensor([0.0])),
    lambda m: m.zeros(3, 4).masked_fill(m.ones(4), 1.0),
    lambda m: m.zeros(3, 4).masked_fill(m.ones(4, dtype=m.int64), 1.0),
    lambda m: m.zeros(3, 4).masked_fill(m.ones(4, dtype=m.bool), m.ones(1)),
    lambda m: m.zeros(3, 4).masked_fill(m.ones(3, dtype=m.bool), 1.0),
    lambda m: m.zeros(4).masked_fill_(m.ones(3, 4, dtype=m.bool), 1.0),
    lambda m: m.zeros(3, 4).masked_select(m.ones(4)),
    lambda m: m.zeros(3, 4).masked_select(m.ones(3, dtype=m.bool)),
    lambda m: m.zeros(3, 4).take(m.tensor([12])),
    lambda m: m.zeros(3, 4).take(m.tensor([-13])),
    lambda m: m.zeros(3, 4).take(m.tensor([0], dtype=m.int32)),
    lambda m: m.zeros(3, 4).take_along_dim(m.tensor([0, 1]), 0),
    lambda m: m.zeros(3, 4).take_along_dim(m.tensor([[0, 1], [1, 0]]), 1),
    lambda m: m.zeros(3, 4).take_along_dim(m.tensor([[0]], dtype=m.int32), 1),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([0, 5]), m.zeros(2, 4)),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([0, 1]), m.zeros(3, 4)),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([0, 1]), m.zeros(2, 4).double()),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([[0]]), m.zeros(1, 4)),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([0.0]), m.zeros(1, 4)),
    lambda m: m.zeros(3, 4).index_copy(0, m.tensor([0, 5]), m.zeros(2, 4)),
    lambda m: m.zeros(3, 4).index_copy(0, m.tensor([0, 1]), m.zeros(3, 4)),
    lambda m: m.zeros(3, 4).index_copy(0, m.tensor([0, 1]), m.zeros(2, 4).double()),
    lambda m: m.zeros(3, 4).index_copy(0, m.tensor([0.0]), m.zeros(1, 4)),
    lambda m: m.zeros(3, 4).index_fill(0, m.tensor([0, 5]), 1.0),
    lambda m: m.zeros(3, 4).index_fill(0, m.tensor([[0]]), 1.0),
    lambda m: m.zeros(3, 4).index_fill(0, m.tensor([0.0]), 1.0),
    lambda m: m.zeros(3, 4).index_fill(0, m.tensor([0]), m.ones(1)),
    lambda m: m.zeros(3, 4).index_put((m.tensor([0, 1]),), m.tensor(1.0, dtype=m.float64)),
    lambda m: m.zeros(3, 4).index_put((m.tensor([0, 1]),), m.ones(3)),
    lambda m: m.zeros(3, 4).index_put_((m.tensor([0]),) * 3, m.tensor(1.0)),
    lambda m: m.zeros(3, 4).index_put_((m.tensor([0.0]),), m.tensor(1.0)),
]


@pytest.mark.parametrize("build", ERRORS)
def test_errors(build):
    raises_same(*_err(build))


def test_zero_dim_index_errors():
    raises_same(lambda: ember.tensor(1.)[0], lambda: torch.tensor(1.)[0])
    raises_same(lambda: ember.tensor(1.)[1:], lambda: torch.tensor(1.)[1:])
    raises_same(lambda: ember.tensor(1.)[0, 0], lambda: torch.tensor(1.)[0, 0])
