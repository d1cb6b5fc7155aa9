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
