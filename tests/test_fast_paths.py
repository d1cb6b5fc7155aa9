"""The per-op fast paths of issue 10 against PyTorch: same-dtype same-shape binary ops, number
bounds for clamp, softmax, mean/amax over dims, gather, index bounds, expand and unsqueeze.
Each compares values, dtypes, strides, grad_fn names, gradients and errors."""
import numpy as np
import pytest
import torch

import ember

R = np.random.RandomState(0)


def _pair(a: np.ndarray, rg: bool = False, layout=None):
    """The same array as an ember and a torch tensor (``layout``: a function making a view)."""
    out = []
    for T in (ember, torch):
        t = T.from_numpy(a.copy())
        if rg:
            t.requires_grad_()
        out.append((t, t if layout is None else layout(t)))
    return out


def _same(e, t):
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert tuple(e.shape) == tuple(t.shape)
    assert e.stride() == t.stride()
    # (transcendental kernels may differ in the last place)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6)
    assert (e.grad_fn is None) == (t.grad_fn is None)
    if t.grad_fn is not None:
        assert e.grad_fn.name() == t.grad_fn.name()


LAYOUTS = {"contig": None, "transposed": lambda t: t.t(), "sliced": lambda t: t[:, ::2]}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "atan2"])
@pytest.mark.parametrize("rg", [(True, False), (False, True), (True, True), (False, False)])
def test_binary_same_shape(dtype, layout, name, rg):
    a, b = R.uniform(0.5, 2, (4, 6)).astype(dtype), R.uniform(0.5, 2, (4, 6)).astype(dtype)
    (ea, eav), (ta, tav) = _pair(a, rg[0], LAYOUTS[layout])
    (eb, ebv), (tb, tbv) = _pair(b, rg[1], LAYOUTS[layout])
    e, t = getattr(ember, name)(eav, ebv), getattr(torch, name)(tav, tbv)
    _same(e, t)
    if t.requires_grad:
        e.sum().backward()
        t.sum().backward()
        for x, y in ((ea, ta), (eb, tb)):
            assert (x.grad is None) == (y.grad is None)
            if y.grad is not None:
                np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_zero_dim_and_views(dtype):
    a = np.asarray(R.uniform(-1, 1)).astype(dtype)
    (ea, _), (ta, _) = _pair(a, True)
    e, t = ea * ea + ea, ta * ta + ta
    _same(e, t)
    e.backward()
    t.backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    # a view of a leaf that requires grad: the edge goes through the view's history
    m = R.uniform(-1, 1, (3, 4)).astype(dtype)
    (em, _), (tm, _) = _pair(m, True)
    e, t = em[1:] * em[:2], tm[1:] * tm[:2]
    _same(e, t)
    e.sum().backward()
    t.sum().backward()
    np.testing.assert_allclose(em.grad.numpy(), tm.grad.numpy(), rtol=1e-6)


def test_binary_inference_and_no_grad():
    a = R.uniform(-1, 1, 5).astype(np.float32)
    for T in (ember, torch):
        x = T.from_numpy(a.copy()).requires_grad_()
        with T.no_grad():
            assert (x * x).grad_fn is None
        with T.inference_mode():
            y = x * x
            assert y.is_inference() and y.grad_fn is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bounds", [(-0.5, 0.5), (1.0, -1.0), (-2.0, 2.0), (-1e39, 1e39),
                                    (float("nan"), 0.3), (-float("inf"), 0.2)])
def test_clamp_number_bounds(dtype, bounds):
    a = R.uniform(-1.5, 1.5, (3, 5)).astype(dtype)
    res = []
    for T in (ember, torch):
        x = T.from_numpy(a.copy()).requires_grad_()
        try:
            y = x.clamp(*bounds)
        except RuntimeError as e:
            res.append(str(e))
            continue
        y.sum().backward()
        res.append((y, x.grad))
    if isinstance(res[1], str):
        assert res[0] == res[1]
        return
    _same(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1].numpy(), res[1][1].numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_softmax(dtype, dim, layout):
    a = R.standard_normal((6, 8)).astype(dtype)
    a[2] = -np.inf
    a[4, 2] = np.nan   # (a +inf is left out: ember's general path differs from PyTorch there)
    (ex, e), (tx, t) = _pair(a, False, LAYOUTS[layout])
    er, tr = e.softmax(dim), t.softmax(dim)
    assert er.stride() == tr.stride()
    np.testing.assert_allclose(er.numpy(), tr.numpy(), rtol=1e-6, atol=1e-7)
    assert np.array_equal(np.isnan(er.numpy()), np.isnan(tr.numpy()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dims", [0, 1, (0, 1), None])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("fn", ["mean", "amax", "amin"])
def test_reductions_over_dims(dtype, dims, keepdim, fn):
    a = R.standard_normal((5, 7)).astype(dtype)
    (ex, _), (tx, _) = _pair(a, True)
    if dims is None:
        if fn == "mean":
            e, t = ex.mean(), tx.mean()
        else:
            e, t = getattr(ex, fn)(), getattr(tx, fn)()
    else:
        e, t = getattr(ex, fn)(dims, keepdim=keepdim), getattr(tx, fn)(dims, keepdim=keepdim)
    assert e.stride() == t.stride() and e.dtype.itemsize == t.dtype.itemsize
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5)
    assert e.grad_fn.name() == t.grad_fn.name()
    e.sum().backward()
    t.sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dim):
    a = R.standard_normal((4, 5)).astype(np.float32)
    idx = R.randint(0, 4, (3, 4)).astype(np.int64)
    (ex, _), (tx, _) = _pair(a, True)
    e, t = ex.gather(dim, ember.from_numpy(idx)), tx.gather(dim, torch.from_numpy(idx))
    _same(e, t)
    (e * e).sum().backward()
    (t * t).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("bad", [5, -1, 2 ** 62, -(2 ** 63)])
def test_gather_bounds(bad):
    idx = np.zeros((2, 2), np.int64)
    idx[1, 0] = bad
    msgs = []
    for T in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            T.zeros(2, 5).gather(1, T.from_numpy(idx.copy()))
        msgs.append(str(info.value).split("\n")[0])
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("idx", [[0, 9, -10, -1], [10], [-11], [2 ** 62], [-(2 ** 63)],
                                 [[1, 2], [3, -4]]])
def test_index_bounds(idx):
    a = np.arange(10.0)
    res = []
    for T in (ember, torch):
        try:
            res.append(T.from_numpy(a.copy())[T.tensor(idx)].numpy().tolist())
        except IndexError as e:
            res.append(str(e))
    assert res[0] == res[1]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.float16])
@pytest.mark.parametrize("shape,size", [((1, 4, 8), (2, 4, 8)), ((4, 1), (3, 4, 5)),
                                        ((3,), (2, 3)), ((1,), (1, 1, 5)),
                                        ((2, 1, 3), (2, 4, 3)), ((1, 1), (1, 1)),
                                        ((2, 3), (1, 2, 3))])
@pytest.mark.parametrize("transposed", [False, True])
def test_expand(dtype, shape, size, transposed):
    a = (R.standard_normal(shape) * 3).astype(dtype)
    views = []
    for T in (ember, torch):
        t = T.from_numpy(a.copy())
        if transposed and t.dim() > 1:
            t = t.transpose(0, -1).contiguous().transpose(0, -1)
        views.append(t.expand(*size))
    e, t = views
    assert e.stride() == t.stride() and tuple(e.shape) == tuple(t.shape)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    if e.numel() != a.size and dtype is not np.bool_:   # repeated elements: writes refused
        errs = []
        for v in views:
            with pytest.raises(RuntimeError) as info:
                v.add_(1)
            errs.append(str(info.value))
        assert errs[0] == errs[1]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_unsqueeze(layout):
    a = R.standard_normal((4, 6)).astype(np.float32)
    (ex, e), (tx, t) = _pair(a, True, LAYOUTS[layout])
    for d in range(-3, 3):
        _same(e.unsqueeze(d), t.unsqueeze(d))


# ---- the mixed-family fast paths (issue 10, second round) ------------------------------------
# Each test runs the fast path's calls and the general path's neighbours (other dtypes, 0-dim,
# non-contiguous, errors, out=) through check_op: values, dtypes, grad_fn names, reverse and
# double-backward gradients, forward-mode tangents; strides are compared where the fast path
# builds the layout itself.

from helpers import check_op, raises_same  # noqa: E402

ALL_DT = [np.float32, np.float64, np.float16, np.int64, np.bool_, np.complex64]


def _data(shape, dtype, lo=-2, hi=2):
    a = R.uniform(lo, hi, shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * R.uniform(lo, hi, shape)
    return np.asarray(a).astype(dtype)


def _strides_same(fe, ft, *arrays, noncontig=False):
    from helpers import pair
    es, ts = zip(*[pair(a, False, noncontig) for a in arrays])
    e, t = fe(*es), ft(*ts)
    assert e.stride() == t.stride(), (e.stride(), t.stride())
    assert tuple(e.shape) == tuple(t.shape)


@pytest.mark.parametrize("dtype", ALL_DT)
@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), (-1, False),
                                         (-2, True), ((0, 1), False)])
@pytest.mark.parametrize("noncontig", [False, True])
def test_sum_mean_dims(dtype, dim, keepdim, noncontig):
    a = _data((3, 4), dtype)

    def call(T, fn):
        def f(x):
            if dim is None:
                return getattr(x, fn)()
            return getattr(x, fn)(dim, keepdim=keepdim)
        return f
    check_op(call(ember, "sum"), call(torch, "sum"), a, noncontig=noncontig)
    _strides_same(call(ember, "sum"), call(torch, "sum"), a, noncontig=noncontig)
    if a.dtype.kind in "fc":
        check_op(call(ember, "mean"), call(torch, "mean"), a, noncontig=noncontig)
        _strides_same(call(ember, "mean"), call(torch, "mean"), a, noncontig=noncontig)
    else:
        raises_same(lambda: ember.from_numpy(a.copy()).mean(0),
                    lambda: torch.from_numpy(a.copy()).mean(0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reduction_fast_path_edges(dtype):
    x0 = np.asarray(1.5).astype(dtype)
    for fn in ("sum", "mean", "amax"):   # 0-dim: dim 0 and -1 are the tensor itself
        check_op(lambda x, f=fn: getattr(x, f)(0), lambda x, f=fn: getattr(x, f)(0), x0)
        check_op(lambda x, f=fn: getattr(x, f)(-1, True), lambda x, f=fn: getattr(x, f)(-1, True),
                 x0)
    a = _data((2, 3), dtype)
    for fn in ("sum", "mean", "amax"):
        raises_same(lambda f=fn: getattr(ember.from_numpy(a.copy()), f)(2),
                    lambda f=fn: getattr(torch.from_numpy(a.copy()), f)(2))
        raises_same(lambda f=fn: getattr(ember.from_numpy(a.copy()), f)(-3),
                    lambda f=fn: getattr(torch.from_numpy(a.copy()), f)(-3))
    # empty: mean over an empty dim is NaN, amax refuses
    z = np.zeros((0, 3), dtype)
    check_op(lambda x: x.mean(0), lambda x: x.mean(0), z)
    check_op(lambda x: x.sum(0), lambda x: x.sum(0), z)
    raises_same(lambda: ember.from_numpy(z.copy()).amax(0),
                lambda: torch.from_numpy(z.copy()).amax(0))
    # dtype= and out= take the general path
    check_op(lambda x: x.sum(1, dtype=ember.float64), lambda x: x.sum(1, dtype=torch.float64), a)
    for T in (ember, torch):
        o = T.empty(2, dtype=getattr(T, np.dtype(dtype).name))
        T.sum(T.from_numpy(a.copy()), 1, out=o)
        T.amax(T.from_numpy(a.copy()), 1, out=o)
    # ties and NaN in amax's gradient (the tie weights' quick path and its 0/0 fallback)
    t = np.array([[1.0, 3.0, 3.0], [np.nan, 0.0, 1.0], [2.0, 2.0, 2.0]], dtype)
    check_op(lambda x: x.amax(1), lambda x: x.amax(1), t, fwd=False)
    check_op(lambda x: x.amax(-1, keepdim=True), lambda x: x.amax(-1, keepdim=True), t,
             fwd=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.float16])
@pytest.mark.parametrize("sa,sb", [((8, 1), (8,)), ((1, 8), (8, 1)), ((2, 1, 3), (3,)),
                                   ((1, 8), (8,)), ((4, 1), (1, 1)), ((), (3, 2)),
                                   ((2, 3, 1), (1, 3, 4)), ((5,), (1,))])
@pytest.mark.parametrize("op", ["add", "mul", "sub", "div"])
def test_binary_broadcast(dtype, sa, sb, op):
    a, b = _data(sa, dtype, 0.5, 2), _data(sb, dtype, 0.5, 2)
    f_e, f_t = getattr(ember, op), getattr(torch, op)
    check_op(f_e, f_t, a, b, double=dtype is np.float64)
    _strides_same(f_e, f_t, a, b)
    _strides_same(f_e, f_t, b, a)


def test_binary_broadcast_layouts_and_errors():
    # non-row-major operands (general path) and results with size-1 dims (iter_layout)
    for sa, sb in [((3, 4), (4,)), ((4, 3), (4, 1)), ((1, 3, 4), (2, 1, 1))]:
        a, b = _data(sa, np.float32), _data(sb, np.float32)
        _strides_same(ember.add, torch.add, a, b, noncontig=True)
        check_op(ember.mul, torch.mul, a, b, noncontig=True)
    raises_same(lambda: ember.ones(3, 2) + ember.ones(3),
                lambda: torch.ones(3, 2) + torch.ones(3))
    raises_same(lambda: ember.ones(2, 3, 1) * ember.ones(4, 5),
                lambda: torch.ones(2, 3, 1) * torch.ones(4, 5))


@pytest.mark.parametrize("key", [slice(1, 5), slice(-3, None), slice(None, None, 2),
                                 slice(5, 1), slice(None), slice(0, 100), slice(-100, 2, 3),
                                 0, -1, 3])
@pytest.mark.parametrize("noncontig", [False, True])
def test_getitem_slice_and_int(key, noncontig):
    a = _data((6, 4), np.float32)
    check_op(lambda x: x[key], lambda x: x[key], a, noncontig=noncontig)
    if key != slice(5, 1):   # (an empty result's strides: Tensor.stride() reports row-major)
        _strides_same(lambda x: x[key], lambda x: x[key], a, noncontig=noncontig)
    # a view of a view, then an in-place write through it: versions and the base's history
    res = []
    for T in (ember, torch):
        x = T.from_numpy(a.copy()).requires_grad_()
        y = x * 1
        v = y[1:][key] if isinstance(key, int) else y[key][:1]
        v.mul_(2)
        (y * y).sum().backward()
        res.append((v.grad_fn.name().split("::")[-1], y.grad_fn.name().split("::")[-1],
                    v._version, x.grad.numpy().tolist()))
    assert res[0] == res[1]
    check_op(lambda x: x[1:][key], lambda x: x[1:][key], a)


def test_getitem_fast_path_errors():
    a = _data((4,), np.float64)
    for key in (slice(None, None, -1), slice(None, None, 0), 4, -5):
        raises_same(lambda k=key: ember.from_numpy(a.copy())[k],
                    lambda k=key: torch.from_numpy(a.copy())[k])
    raises_same(lambda: ember.tensor(1.0)[0:1], lambda: torch.tensor(1.0)[0:1])
    raises_same(lambda: ember.tensor(1.0)[0], lambda: torch.tensor(1.0)[0])
    # in no_grad and inference mode: views of the fast path keep PyTorch's creation meta
    for T in (ember, torch):
        x = T.ones(4, requires_grad=True)
        with T.no_grad():
            v = x[1:3]
        assert v.requires_grad and v._is_view()
        with T.inference_mode():
            w = T.ones(4)[1:]
        assert w.is_inference()
    msgs = []
    for T in (ember, torch):
        x = T.ones(4, requires_grad=True) * 1
        with T.no_grad():
            v = x[1:3]
        try:
            v.mul_(2)
        except RuntimeError as e:
            msgs.append(str(e).replace("torch", "ember"))
    assert len(msgs) == 2 and msgs[0] == msgs[1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_, np.complex128])
@pytest.mark.parametrize("ishape", [(5,), (2, 3), (0,)])
@pytest.mark.parametrize("xshape", [(7,), (7, 3)])
def test_getitem_index_tensor(dtype, ishape, xshape):
    a = _data(xshape, dtype)
    idx = R.randint(-7, 7, ishape).astype(np.int64)
    check_op(lambda x: x[ember.from_numpy(idx.copy())], lambda x: x[torch.from_numpy(idx.copy())],
             a)
    _strides_same(lambda x: x[ember.from_numpy(idx.copy())],
                  lambda x: x[torch.from_numpy(idx.copy())], a, noncontig=True)
    # int32 and bool indices go the general way
    check_op(lambda x: x[ember.from_numpy(idx.astype(np.int32))],
             lambda x: x[torch.from_numpy(idx.astype(np.int32))], a)
    mask = np.arange(xshape[0]) % 2 == 0
    check_op(lambda x: x[ember.from_numpy(mask.copy())], lambda x: x[torch.from_numpy(mask.copy())],
             a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.float16])
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
@pytest.mark.parametrize("noncontig", [False, True])
def test_cat_fast(dtype, dim, noncontig):
    a, b = _data((3, 4), dtype), _data((3, 4), dtype)
    check_op(lambda x, y: ember.cat([x, y], dim), lambda x, y: torch.cat([x, y], dim), a, b,
             noncontig=noncontig)
    check_op(lambda x, y: ember.cat((x, y, x), dim), lambda x, y: torch.cat((x, y, x), dim),
             a, b)
    _strides_same(lambda x, y: ember.cat([x, y], dim), lambda x, y: torch.cat([x, y], dim), a, b,
                  noncontig=noncontig)


def test_cat_general_cases():
    a, b = _data((2, 3), np.float32), _data((4, 3), np.float64)
    check_op(lambda x, y: ember.cat([x, y]), lambda x, y: torch.cat([x, y]), a, b)   # promotes
    e1 = np.zeros((0,), np.float32)
    check_op(lambda x, y: ember.cat([x, y]), lambda x, y: torch.cat([x, y]), a, e1)   # skipped
    check_op(lambda x: ember.cat([x]), lambda x: torch.cat([x]), a)
    for bad in ([ember.ones(2, 3), ember.ones(2, 4)], [ember.ones(2, 3), ember.ones(3)],
                [ember.tensor(1.0), ember.tensor(2.0)], [ember.ones(2), 3]):
        tb = [torch.from_numpy(t.numpy()) if isinstance(t, ember.Tensor) else t for t in bad]
        raises_same(lambda b=bad: ember.cat(b, 0), lambda b=tb: torch.cat(b, 0))
    raises_same(lambda: ember.cat([ember.ones(2)], 1), lambda: torch.cat([torch.ones(2)], 1))
    for T in (ember, torch):
        o = T.empty(4, 3)
        r = T.cat([T.ones(2, 3), T.zeros(2, 3)], out=o)
        assert r is o and o.sum().item() == 6


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((7,), 0),
                                       ((10, 10), 1), ((1, 4), -1)])
@pytest.mark.parametrize("noncontig", [False, True])
def test_softmax_fast(dtype, shape, dim, noncontig):
    a = _data(shape, dtype, -5, 5)
    check_op(lambda x: x.softmax(dim), lambda x: x.softmax(dim), a, noncontig=noncontig)
    _strides_same(lambda x: x.softmax(dim), lambda x: x.softmax(dim), a, noncontig=noncontig)


@pytest.mark.parametrize("size", [4, 100])
@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_infinities(size, dim):
    # PyTorch subtracts the maximum whatever it is: a row holding +inf (or NaN, or only -inf)
    # comes out all NaN
    a = np.zeros((3, size), np.float32)
    a[0, 1] = np.inf
    a[1, :] = -np.inf
    a[2, 0] = np.nan
    a[:, 2] = -np.inf
    for fe, ft in ((lambda x: x.softmax(dim), lambda x: x.softmax(dim)),
                   (lambda x: ember.nn.functional.softmax(x, dim),
                    lambda x: torch.nn.functional.softmax(x, dim))):
        e = fe(ember.from_numpy(a.copy()))
        t = ft(torch.from_numpy(a.copy()))
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    raises_same(lambda: ember.ones(2, 2, dtype=ember.int64).softmax(0),
                lambda: torch.ones(2, 2, dtype=torch.int64).softmax(0))
    check_op(lambda x: x.softmax(1, dtype=ember.float64),
             lambda x: x.softmax(1, dtype=torch.float64), a[:1, :3].copy() + 1)
    check_op(lambda x: x.softmax(0), lambda x: x.softmax(0), np.asarray(2.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.float16])
@pytest.mark.parametrize("sc,sa,sb", [((3, 4), (3, 4), (3, 1)), ((3, 4), (4,), (3, 4)),
                                      ((1, 4), (3, 1), (4,)), ((3, 1), (3, 1), (1, 1)),
                                      ((), (), ())])
@pytest.mark.parametrize("noncontig", [False, True])
def test_where_fast(dtype, sc, sa, sb, noncontig):
    c = R.uniform(size=sc) > 0.5
    a, b = _data(sa, dtype), _data(sb, dtype)
    check_op(lambda m, x, y: ember.where(m, x, y), lambda m, x, y: torch.where(m, x, y),
             np.asarray(c), a, b, noncontig=noncontig)
    _strides_same(lambda m, x, y: ember.where(m, x, y), lambda m, x, y: torch.where(m, x, y),
                  np.asarray(c), a, b, noncontig=noncontig)


def test_where_general_cases():
    c = np.array([True, False, True])
    a32, b64 = _data((3,), np.float32), _data((3,), np.float64)
    check_op(lambda m, x, y: ember.where(m, x, y), lambda m, x, y: torch.where(m, x, y),
             c, a32, b64)   # promotes
    check_op(lambda m, x: ember.where(m, x, 0.5), lambda m, x: torch.where(m, x, 0.5), c, a32)
    raises_same(lambda: ember.where(ember.ones(3), ember.ones(3), ember.zeros(3)),
                lambda: torch.where(torch.ones(3), torch.ones(3), torch.zeros(3)))
    raises_same(lambda: ember.where(ember.ones(3) > 0, ember.ones(2), ember.zeros(3)),
                lambda: torch.where(torch.ones(3) > 0, torch.ones(2), torch.zeros(3)))
    for T in (ember, torch):
        o = T.empty(3)
        r = T.where(T.tensor([True, False, True]), T.ones(3), T.zeros(3), out=o)
        assert r is o and o.tolist() == [1.0, 0.0, 1.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.float16])
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
@pytest.mark.parametrize("ishape", [(3, 4), (2, 2), (1, 4)])
def test_gather_fast(dtype, dim, ishape):
    a = _data((3, 4), dtype)
    n = a.shape[dim]
    idx = R.randint(0, n, ishape).astype(np.int64)
    check_op(lambda x: x.gather(dim, ember.from_numpy(idx.copy())),
             lambda x: x.gather(dim, torch.from_numpy(idx.copy())), a, noncontig=True)
    _strides_same(lambda x: x.gather(dim, ember.from_numpy(idx.copy())),
                  lambda x: x.gather(dim, torch.from_numpy(idx.copy())), a)
    check_op(lambda x: x.gather(dim, ember.from_numpy(idx.astype(np.int32))),
             lambda x: x.gather(dim, torch.from_numpy(idx.astype(np.int32))), a)


def test_gather_fast_errors():
    x = np.ones((3, 4), np.float32)
    for idx in (np.zeros((4, 4), np.int64), np.zeros((3,), np.int64),
                np.zeros((3, 4), np.float32), np.full((3, 4), -1, np.int64)):
        raises_same(lambda i=idx: ember.from_numpy(x.copy()).gather(1, ember.from_numpy(i)),
                    lambda i=idx: torch.from_numpy(x.copy()).gather(1, torch.from_numpy(i)))
    raises_same(lambda: ember.from_numpy(x.copy()).gather(2, ember.zeros(3, 4, dtype=ember.int64)),
                lambda: torch.from_numpy(x.copy()).gather(2, torch.zeros(3, 4, dtype=torch.int64)))
    # the saved index is checked for in-place changes, as in PyTorch
    msgs = []
    for T in (ember, torch):
        v = T.ones(3, 4, requires_grad=True)
        i = T.zeros(3, 4, dtype=T.int64)
        r = v.gather(1, i)
        i.add_(1)
        with pytest.raises(RuntimeError) as info:
            r.sum().backward()
        msgs.append(str(info.value).split(";")[0].replace("torch", "ember"))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("shape,new", [((4, 6), (24,)), ((4, 6), (6, -1)), ((2, 3, 4), (6, 4)),
                                       ((2, 3, 4), (-1,))])
def test_reshape_noncontig(shape, new):
    a = _data(shape, np.float64)
    check_op(lambda x: x.reshape(new), lambda x: x.reshape(new), a, noncontig=True)
    _strides_same(lambda x: x.reshape(new), lambda x: x.reshape(new), a, noncontig=True)
    # the copy is recorded as PyTorch's: UnsafeViewBackward0 over CloneBackward0
    from helpers import pair
    e, t = pair(a, True, True)
    re, rt = e.reshape(new), t.reshape(new)
    chain_e = [re.grad_fn.name(), re.grad_fn.next_functions[0][0].name()]
    chain_t = [rt.grad_fn.name(), rt.grad_fn.next_functions[0][0].name()]
    assert chain_e == [n.replace("torch::", "ember::") for n in chain_t]


def test_inference_tensor_through_fast_paths():
    # an inference tensor used outside inference mode takes the general path's rules
    for fn in (lambda t: t.clone(), lambda t: t.sum(1), lambda t: t[1:], lambda t: t.t(),
               lambda t: t.softmax(0), lambda t: t[0]):
        res = []
        for T in (ember, torch):
            with T.inference_mode():
                x = T.ones(2, 3, requires_grad=True)
            r = fn(x)
            res.append((r.requires_grad, r.is_inference(), r.grad_fn is None))
        assert res[0] == res[1]


def test_mixed_workload_matches_torch():
    """The benchmark's mixed program (bench_mixed.mixed) end to end: value and gradient."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    threads = torch.get_num_threads()
    try:
        from bench_mixed import mixed
    finally:   # (the benchmarks' common module sets torch's thread count on import)
        torch.set_num_threads(threads)
    r = np.random.RandomState(1)
    x = r.uniform(-1, 1, (8, 8)).astype(np.float32)
    w = r.uniform(-0.3, 0.3, (8, 8)).astype(np.float32)
    idx = r.permutation(64).astype(np.int64)
    gidx = r.randint(0, 8, (8, 8)).astype(np.int64)
    out = []
    for T in (ember, torch):
        xt = T.from_numpy(x.copy()).requires_grad_()
        y = mixed(T, xt, T.from_numpy(w), T.from_numpy(idx), T.from_numpy(gidx))
        y.backward()
        out.append((y.item(), xt.grad.numpy().copy(), y.grad_fn.name()))
    assert out[0][2] == out[1][2].replace("torch", "ember")
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-5)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-4, atol=1e-6)


def test_sub_operator_checks():
    """``a - b``: the bool check is skipped only where no operand can be bool."""
    def vals(T):
        return [T.tensor([True, False]), T.tensor([1.0, 2.0]), T.tensor([1, 2]), 1, 1.5, True,
                T.tensor(2.0), T.tensor(False)]
    for i in range(3):
        for j in range(8):
            res = []
            for T in (ember, torch):
                a, b = vals(T)[i], vals(T)[j]
                try:
                    r = a - b
                    res.append((str(r.dtype).split(".")[1], r.tolist(), r.grad_fn))
                except RuntimeError as e:
                    res.append(("error", str(e)))
            assert res[0] == res[1], (i, j, res)
    check_op(lambda x, y: x - y, lambda x, y: x - y, _data((3, 2), np.float32),
             _data((2,), np.float32))
    check_op(lambda x: x - 0.5, lambda x: x - 0.5, _data((3, 2), np.float64), noncontig=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 1), (1, 4), (2, 3), (2, 1, 3)])
@pytest.mark.parametrize("op", ["gt", "mul", "add", "pow"])
def test_scalar_operand_layouts(dtype, shape, op):
    """A float tensor with a Python number: results of another itemsize (comparisons) and
    inputs with size-1 dims keep PyTorch's strides."""
    a = _data(shape, dtype, 0.5, 2)
    _strides_same(lambda x: getattr(x, op)(0.7), lambda x: getattr(x, op)(0.7), a)
    _strides_same(lambda x: getattr(x, op)(0.7), lambda x: getattr(x, op)(0.7), a,
                  noncontig=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64])
@pytest.mark.parametrize("op", ["gt", "lt", "eq", "ge", "ne", "le"])
@pytest.mark.parametrize("other", [0.1, 1, -2, 3.4028235e38, float("nan"), 2 ** 40, True])
def test_compare_with_number(dtype, op, other):
    """The comparison fast path (a float tensor against a Python number) against PyTorch:
    the number is read at the tensor's precision (0.1 in float32 equals float32(0.1))."""
    a = np.array([[0.1, 1.0, -2.0], [np.nan, 3.4028235e38, 2.0 ** 40]]).astype(dtype)
    for x in (a, a[:, :1], a[0, 0]):
        e = getattr(ember.from_numpy(np.array(x)), op)(other)
        t = getattr(torch.from_numpy(np.array(x)), op)(other)
        assert e.dtype is ember.bool and e.shape == t.shape and e.stride() == t.stride()
        assert e.tolist() == t.tolist()
        assert not e.requires_grad
    for T in (ember, torch):   # a tensor requiring grad: the result is outside autograd
        r = getattr(T.ones(2, requires_grad=True), op)(0.5)
        assert not r.requires_grad and r.grad_fn is None
