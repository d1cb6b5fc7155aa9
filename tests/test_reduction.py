"""Reductions, scans and softmax against PyTorch: values, dtypes, grad_fn names, reverse and
forward gradients, double backward, dims/keepdim, non-contiguous inputs and error messages."""
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))
import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, check_op, pair, raises_same

RNG = np.random.default_rng(7)
X34 = RNG.standard_normal((3, 4))
FLOATS = ["float64", "float32"]


def data(shape=(3, 4), dtype="float64", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


REDUCERS = {
    "sum": lambda L, x, d, k: L.sum(x, d, k) if d is not None or k else L.sum(x),
    "mean": lambda L, x, d, k: L.mean(x, d, k) if d is not None or k else x.mean(),
    "nansum": lambda L, x, d, k: L.nansum(x, d, k),
    "amax": lambda L, x, d, k: L.amax(x, () if d is None else d, k),
    "amin": lambda L, x, d, k: x.amin(() if d is None else d, k),
    "var": lambda L, x, d, k: L.var(x, d, keepdim=k),
    "std": lambda L, x, d, k: x.std(d, keepdim=k),
    "var_c0": lambda L, x, d, k: L.var(x, d, keepdim=k, correction=0),
    "std_unbiased_false": lambda L, x, d, k: L.std(x, d, False, k),
    "logsumexp": lambda L, x, d, k: L.logsumexp(x, d, k),
    "norm": lambda L, x, d, k: L.norm(x, dim=d, keepdim=k),
    "norm_fro": lambda L, x, d, k: x.norm("fro", d, k),
    "norm1": lambda L, x, d, k: L.norm(x, 1, d, k),
    "norm3": lambda L, x, d, k: L.norm(x, 3, d, k),
    "norm1.5": lambda L, x, d, k: L.norm(x, 1.5, d, k),
    "norm0.5": lambda L, x, d, k: L.norm(x, 0.5, d, k),
    "norm_inf": lambda L, x, d, k: L.norm(x, float("inf"), d, k),
    "norm_-inf": lambda L, x, d, k: L.norm(x, -float("inf"), d, k),
    "norm0": lambda L, x, d, k: L.norm(x, 0, d, k),
}


DIM_KEEP_DTYPE = [(None, False, "float64"), (None, True, "float32"), (0, True, "float64"),
                  (-1, False, "float32"), ((0, 2), False, "float64"), ((2, 0), True, "float32"),
                  ((), False, "float64")]


@pytest.mark.parametrize(("dim", "keepdim", "dtype"), DIM_KEEP_DTYPE)
@pytest.mark.parametrize("name", list(REDUCERS))
def test_reducers(name, dim, keepdim, dtype):
    if name == "logsumexp" and dim is None:   # a dim is required
        raises_same(lambda: REDUCERS[name](ember, ember.ones(2), dim, keepdim),
                    lambda: REDUCERS[name](torch, torch.ones(2), dim, keepdim))
        return
    if name == "logsumexp" and dim == () and not keepdim:
        raises_same(lambda: REDUCERS[name](ember, ember.ones(2, 3), dim, keepdim),
                    lambda: REDUCERS[name](torch, torch.ones(2, 3), dim, keepdim))
        return
    if name in ("sum", "mean") and dim == ():
        dim = None
    if name.startswith(("var", "std")) and dim == ():
        # values as torch; ember's gradient is the finite one of a full reduction where torch
        # 2.13's backward takes dim=() as a size-1 reduction and returns inf (README)
        check_op(lambda x: REDUCERS[name](ember, x, dim, keepdim),
                 lambda x: REDUCERS[name](torch, x, None, keepdim), data((2, 3, 4), dtype))
        return
    f = REDUCERS[name]
    check_op(lambda x: f(ember, x, dim, keepdim), lambda x: f(torch, x, dim, keepdim),
             data((2, 3, 4), dtype))


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "var", "std", "logsumexp", "norm",
                                  "norm_inf", "norm3", "nansum"])
def test_reducers_noncontig(name):
    f = REDUCERS[name]
    check_op(lambda x: f(ember, x, 0, False), lambda x: f(torch, x, 0, False), X34,
             noncontig=True)
    check_op(lambda x: f(ember, x, (0, 1), True), lambda x: f(torch, x, (0, 1), True), X34,
             noncontig=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_prod(dim, keepdim, dtype):
    def f(L, x):
        return L.prod(x) if dim is None else L.prod(x, dim, keepdim)
    check_op(lambda x: f(ember, x), lambda x: f(torch, x), data((3, 4), dtype))
    check_op(lambda x: f(ember, x), lambda x: f(torch, x), data((3, 4), dtype), noncontig=True)


@pytest.mark.parametrize("dim", [None, 0, 1])
@pytest.mark.parametrize("zeros", [[(0, 1)], [(0, 1), (2, 1)], [(0, 1), (0, 3)]])
def test_prod_with_zeros(dim, zeros):
    a = data((3, 4))
    for z in zeros:
        a[z] = 0.0
    double = dim is not None or len(zeros) == 1

    def f(L, x):
        return L.prod(x) if dim is None else L.prod(x, dim)
    check_op(lambda x: f(ember, x), lambda x: f(torch, x), a, double=double)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_all(name, dtype):
    check_op(lambda x: getattr(ember, name)(x), lambda x: getattr(torch, name)(x),
             data((3, 4), dtype))
    check_op(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), X34, noncontig=True)


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
def test_ties_split_grad(name):
    a = np.array([[1.0, 3.0, 3.0], [3.0, -2.0, 3.0]])
    if name.endswith("min"):
        a = -a
    check_op(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), a)
    if name.startswith("a"):
        check_op(lambda x: getattr(x, name)(1), lambda x: getattr(x, name)(1), a)
        check_op(lambda x: getattr(x, name)((0, 1), True), lambda x: getattr(x, name)((0, 1), True),
                 a)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim(name, dim, keepdim, dtype):
    a = data((2, 3, 4), dtype)
    oe, ot = check_op(lambda x: getattr(ember, name)(x, dim, keepdim),
                      lambda x: getattr(torch, name)(x, dim, keepdim), a)
    assert type(oe).__name__ == name and type(oe).__module__ == "ember.return_types"
    assert_same(oe.values, ot.values)
    assert_same(oe.indices, ot.indices)
    v, i = oe
    assert v is oe.values and i is oe.indices
    assert not oe.indices.requires_grad


def test_max_dim_noncontig_and_repr():
    check_op(lambda x: x.max(0), lambda x: x.max(0), X34, noncontig=True)
    check_op(lambda x: x.min(dim=1, keepdim=True), lambda x: x.min(dim=1, keepdim=True), X34,
             noncontig=True)
    a = np.array([[1.0, 5.0], [3.0, 2.0]])
    e, t = pair(a)
    assert repr(ember.max(e, 0)) == repr(torch.max(t, 0)).replace("torch.", "ember.")


def test_max_binary_is_maximum():
    if not hasattr(ember, "maximum"):
        pytest.skip("ember.maximum not built yet")
    check_op(lambda x, y: ember.max(x, y), lambda x, y: torch.max(x, y), X34, X34[::-1].copy())
    check_op(lambda x, y: x.min(y), lambda x, y: x.min(y), X34, X34[::-1].copy())


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool", "float32"])
@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
def test_max_min_int_dtypes(name, dtype):
    a = (np.random.default_rng(3).integers(0, 5, (3, 4))).astype(dtype)
    f = getattr(ember, name), getattr(torch, name)
    check_op(lambda x: f[0](x), lambda x: f[1](x), a)
    check_op(lambda x: f[0](x, 1), lambda x: f[1](x, 1), a)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8"])
def test_argmax(name, dim, keepdim, dtype):
    a = np.random.default_rng(4).integers(0, 4, (3, 4)).astype(dtype)  # with ties
    check_op(lambda x: getattr(ember, name)(x, dim, keepdim),
             lambda x: getattr(torch, name)(x, dim, keepdim), a)
    check_op(lambda x: getattr(x, name)(dim, keepdim), lambda x: getattr(x, name)(dim, keepdim),
             a, noncontig=True)


# ---- var_mean / std_mean ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": (0, 1), "keepdim": True},
                                {"dim": 0, "correction": 0}, {"dim": -1, "unbiased": False}])
@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_mean(name, kw, dtype):
    a = data((3, 4), dtype)
    fe, ft = getattr(ember, name), getattr(torch, name)
    oe, _ = check_op(lambda x: fe(x, **kw), lambda x: ft(x, **kw), a)
    assert type(oe) is tuple
    # gradients through the mean output alone, and through both
    check_op(lambda x: fe(x, **kw)[1] * 1.0, lambda x: ft(x, **kw)[1] * 1.0, a)
    check_op(lambda x: fe(x, **kw)[0] * fe(x, **kw)[1], lambda x: ft(x, **kw)[0] * ft(x, **kw)[1],
             a)


def test_var_legacy_unbiased_positional():
    check_op(lambda x: x.var(False), lambda x: x.var(False), X34)
    check_op(lambda x: ember.std(x, True), lambda x: torch.std(x, True), X34)


def test_var_dof_warning():
    e, t = pair(np.array([1.5]))
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        re = e.var()
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        rt = t.var()
    assert_same(re, rt)
    assert [str(w.message) for w in we] == [str(w.message).split(" (Triggered")[0] for w in wt]


# ---- integer and bool dtypes ---------------------------------------------------------------

INT_DTYPES = ["int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", ["sum", "prod", "all", "any", "nansum", "count_nonzero"])
def test_int_bool(name, dtype):
    a = np.random.default_rng(5).integers(0, 3, (3, 4)).astype(dtype)
    fe, ft = getattr(ember, name), getattr(torch, name)
    check_op(lambda x: fe(x), lambda x: ft(x), a)
    check_op(lambda x: fe(x, 1), lambda x: ft(x, 1), a)
    if name != "count_nonzero":
        check_op(lambda x: fe(x, 0, True), lambda x: ft(x, 0, True), a, noncontig=True)
    if name in ("sum", "prod"):
        check_op(lambda x: fe(x, dtype=ember.float64), lambda x: ft(x, dtype=torch.float64), a)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), ()])
@pytest.mark.parametrize("name", ["all", "any", "count_nonzero"])
def test_logical_dims(name, dim, dtype):
    a = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]]).astype(dtype)
    fe, ft = getattr(ember, name), getattr(torch, name)
    if dim == () and name == "count_nonzero":
        return
    check_op(lambda x: fe(x, dim), lambda x: ft(x, dim), a)
    check_op(lambda x: fe(x, dim), lambda x: ft(x, dim), a, noncontig=True)


def test_float_input_all_any_no_grad():
    e, _ = pair(X34, requires_grad=True)
    for f in ("all", "any"):
        r = getattr(e, f)()
        assert r.dtype is ember.bool and not r.requires_grad and r.grad_fn is None


def test_logsumexp_int_and_inf():
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    check_op(lambda x: ember.logsumexp(x, 1), lambda x: torch.logsumexp(x, 1), a)
    b = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [0.0, 1.0]])
    check_op(lambda x: x.logsumexp(1), lambda x: x.logsumexp(1), b, grad=False)


def test_nansum_with_nans():
    a = X34.copy()
    a[0, 1] = np.nan
    a[2, 3] = np.nan
    check_op(lambda x: x.nansum(), lambda x: x.nansum(), a)
    check_op(lambda x: ember.nansum(x, 1, True), lambda x: torch.nansum(x, 1, True), a)


def test_max_with_nan():
    a = X34.copy()
    a[1, 2] = np.nan
    check_op(lambda x: x.max(), lambda x: x.max(), a)
    check_op(lambda x: x.max(1), lambda x: x.max(1), a)
    check_op(lambda x: x.argmin(1), lambda x: x.argmin(1), a)


def test_norm_at_zero():
    z = np.zeros((2, 3))
    for p in (2, 1, 3, 1.5):
        check_op(lambda x, p=p: x.norm(p), lambda x, p=p: x.norm(p), z, double=False)
    check_op(lambda x: x.norm(dim=1), lambda x: x.norm(dim=1), np.array([[0.0, 0.0], [1, 2]]))


def test_norm_dtype():
    a = X34.astype(np.float32)
    # torch leaves the forward tangent in the input's dtype here; ember's is the output's
    check_op(lambda x: x.norm(dtype=ember.float64), lambda x: x.norm(dtype=torch.float64), a,
             fwd=False)


def test_sum_mean_dtype_and_dim_none_keepdim():
    check_op(lambda x: x.sum(dtype=ember.float32), lambda x: x.sum(dtype=torch.float32), X34)
    check_op(lambda x: ember.sum(x, None, True), lambda x: torch.sum(x, None, True), X34)
    check_op(lambda x: ember.mean(x, None, True), lambda x: torch.mean(x, None, True), X34)
    check_op(lambda x: x.sum([]), lambda x: x.sum([]), X34)
    a = np.arange(6).reshape(2, 3).astype(np.int32)
    check_op(lambda x: x.mean(dtype=ember.float64), lambda x: x.mean(dtype=torch.float64), a)


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "var", "logsumexp", "prod", "nansum"])
def test_zero_dim_input(name):
    a = np.array(1.5)
    f = getattr(ember, name), getattr(torch, name)
    check_op(lambda x: f[0](x, 0), lambda x: f[1](x, 0), a, double=name != "var")
    check_op(lambda x: f[0](x, -1, True), lambda x: f[1](x, -1, True), a, double=name != "var")


def test_zero_dim_max_and_scans():
    a = np.array(1.5)
    check_op(lambda x: x.max(0), lambda x: x.max(0), a)
    check_op(lambda x: x.argmax(0), lambda x: x.argmax(0), a)
    check_op(lambda x: x.cumsum(0), lambda x: x.cumsum(0), a)
    check_op(lambda x: x.cumprod(-1), lambda x: x.cumprod(-1), a)
    check_op(lambda x: x.softmax(0), lambda x: x.softmax(0), a)
    check_op(lambda x: x.norm(dim=0), lambda x: x.norm(dim=0), a)
    check_op(lambda x: x.norm(3, -1, True), lambda x: x.norm(3, -1, True), a)


def test_empty_inputs():
    e = np.zeros((0, 3))
    for f in (lambda L, x: L.sum(x, 0), lambda L, x: L.prod(x), lambda L, x: L.amax(x, 1),
              lambda L, x: L.logsumexp(x, 0), lambda L, x: L.norm(x), lambda L, x: L.max(x, 1),
              lambda L, x: L.all(x), lambda L, x: L.any(x, 0), lambda L, x: L.cumsum(x, 0)):
        check_op(lambda x, f=f: f(ember, x), lambda x, f=f: f(torch, x), e)


# ---- scans ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans(name, dim, dtype):
    a = data((2, 3, 4), dtype)
    fe, ft = getattr(ember, name), getattr(torch, name)
    check_op(lambda x: fe(x, dim), lambda x: ft(x, dim), a)
    check_op(lambda x: getattr(x, name)(dim=dim % 2), lambda x: getattr(x, name)(dim=dim % 2),
             data((3, 4), dtype), noncontig=True)


@pytest.mark.parametrize("zeros", [[(0, 1)], [(0, 1), (0, 3)], [(1, 0)], [(2, 3), (1, 1)]])
@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_with_zeros(dim, zeros):
    a = data((3, 4))
    for z in zeros:
        a[z] = 0.0
    check_op(lambda x: x.cumprod(dim), lambda x: x.cumprod(dim), a, double=False)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans_int(name, dtype):
    a = np.random.default_rng(6).integers(0, 3, (3, 4)).astype(dtype)
    check_op(lambda x: getattr(x, name)(1), lambda x: getattr(x, name)(1), a)
    check_op(lambda x: getattr(ember, name)(x, 0, dtype=ember.float32),
             lambda x: getattr(torch, name)(x, 0, dtype=torch.float32), a)


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_scans_inplace(name):
    def f(x):
        y = x * 1.0
        getattr(y, name)(1)
        return y
    check_op(f, f, X34)


# ---- softmax / log_softmax -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax(name, dim, dtype):
    a = data((2, 3, 4), dtype) * 3
    check_op(lambda x: getattr(ember, name)(x, dim), lambda x: getattr(torch, name)(x, dim), a)
    check_op(lambda x: getattr(x, name)(dim % 2), lambda x: getattr(x, name)(dim % 2),
             data((3, 4), dtype), noncontig=True)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_dtype_and_extremes(name):
    a = data((3, 4), "float32")
    check_op(lambda x: getattr(x, name)(1, dtype=ember.float64),
             lambda x: getattr(x, name)(1, dtype=torch.float64), a)
    b = np.array([[1000.0, 0.0, -1000.0], [-np.inf, 0.0, 1.0]])
    check_op(lambda x: getattr(x, name)(1), lambda x: getattr(x, name)(1), b, grad=False)
    i = np.array([[1, 2], [3, 4]])
    check_op(lambda x: getattr(ember, name)(x, 0, ember.float64),
             lambda x: getattr(torch, name)(x, 0, torch.float64), i)


# ---- errors --------------------------------------------------------------------------------

def _e(a):
    return pair(np.asarray(a))


ERRORS = [
    ("sum_dim_oob", lambda L, x: L.sum(x, 2)),
    ("max_dim_oob", lambda L, x: L.max(x, -3)),
    ("amax_dup", lambda L, x: L.amax(x, (1, 1))),
    ("sum_dup", lambda L, x: x.sum((0, -2))),
    ("cnz_dup", lambda L, x: L.count_nonzero(x, (0, 0))),
    ("softmax_oob", lambda L, x: x.softmax(2)),
    ("cumsum_oob", lambda L, x: x.cumsum(-3)),
    ("var_oob", lambda L, x: x.var(5)),
    ("norm_bad_p", lambda L, x: x.norm("abc")),
    ("max_complex", lambda L, x: x.to(L.complex64).max()),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_float(case):
    e, t = _e(X34)
    raises_same(lambda: case[1](ember, e), lambda: case[1](torch, t))


INT_ERRORS = [
    ("mean_int", lambda L, x: x.mean()),
    ("var_int", lambda L, x: x.var()),
    ("std_int", lambda L, x: L.std(x, 0)),
    ("norm_int", lambda L, x: x.norm()),
    ("softmax_int", lambda L, x: x.softmax(0)),
    ("softmax_int_last", lambda L, x: x.softmax(1)),
    ("log_softmax_int", lambda L, x: L.log_softmax(x, -1)),
    ("log_softmax_int0", lambda L, x: L.log_softmax(x, 0)),
]


@pytest.mark.parametrize("case", INT_ERRORS, ids=[c[0] for c in INT_ERRORS])
def test_errors_int(case):
    e, t = _e(np.arange(6, dtype=np.int32).reshape(2, 3))
    raises_same(lambda: case[1](ember, e), lambda: case[1](torch, t))


EMPTY_ERRORS = [
    ("max", lambda L, x: x.max()), ("min", lambda L, x: L.min(x)), ("amax", lambda L, x: x.amax()),
    ("amin", lambda L, x: x.amin()), ("max0", lambda L, x: x.max(0)),
    ("amax0", lambda L, x: x.amax(0)), ("argmax", lambda L, x: x.argmax()),
    ("argmin", lambda L, x: L.argmin(x)), ("argmax0", lambda L, x: x.argmax(0)),
    ("norm_inf", lambda L, x: x.norm(float("inf"))),
]


@pytest.mark.parametrize("case", EMPTY_ERRORS, ids=[c[0] for c in EMPTY_ERRORS])
def test_errors_empty(case):
    e, t = _e(np.zeros((0, 3)))
    raises_same(lambda: case[1](ember, e), lambda: case[1](torch, t))


def test_errors_misc():
    e, t = _e(np.array([True, False]))
    raises_same(lambda: e.argmax(), lambda: t.argmax())
    e, t = _e(np.array(1.0))
    raises_same(lambda: e.max(1), lambda: t.max(1))
    raises_same(lambda: e.sum(1), lambda: t.sum(1))
    e, t = _e(X34)
    raises_same(lambda: ember.softmax(e), lambda: torch.softmax(t))


def test_return_types_module():
    import ember.return_types as rt
    assert rt.max is ember.return_types.max and rt.min._fields == ("values", "indices")
    r = ember.tensor([[1.0, 4.0], [3.0, 2.0]]).min(1)
    assert isinstance(r, tuple) and r.values.tolist() == [1.0, 2.0]
    assert r.indices.tolist() == [0, 1]


def test_half_sums_accumulate_in_float32():
    a = (np.random.default_rng(3).standard_normal((400, 50)) * 3).astype(np.float16)
    for f in (lambda m, x: x.sum(0), lambda m, x: x.mean(0), lambda m, x: x.sum(),
              lambda m, x: x.to(m.bfloat16).sum(1)):
        e = f(ember, ember.from_numpy(a.copy()))
        t = f(torch, torch.from_numpy(a.copy()))
        np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


# maxima tied 3 and 5 times, minima tied down the columns, NaN rows
_TIES = np.array([[1., 3., 3., 2., 3., 0.5, 1.], [0., 0., 0., -1., 0., -2., 0.],
                  [np.nan, 1., 0., np.nan, 0., -2., 0.], [1., 0., 0., 2., 1., -2., 5.]])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", ["amax1", "amin0k", "max_all", "min_all", "norm_inf",
                                  "norm_ninf", "vnorm_inf"])
def test_tied_extremes_split_like_pytorch(case, dtype):
    """Ties of max/min/amax/amin/inf-norms get grad / count at each tie, PyTorch's order (not
    grad * (1 / count)), bit for bit in every float type, NaN rows and create_graph included
    (the inf norms count NaNs as maxima, and sgn(NaN) is 0)."""
    f = {"amax1": lambda L, t: t.amax(1) * 0.3, "amin0k": lambda L, t: t.amin(0, True) * 0.3,
         "max_all": lambda L, t: t.max() * 0.3, "min_all": lambda L, t: t.min() * 0.3,
         "norm_inf": lambda L, t: t.norm(float("inf"), dim=1) * 0.7,
         "norm_ninf": lambda L, t: t.norm(float("-inf"), dim=0) * 0.3,
         "vnorm_inf": lambda L, t: L.linalg.vector_norm(t, float("inf")) * 0.7}[case]
    res = []
    for L in (ember, torch):
        t = L.tensor(_TIES, dtype=getattr(L, dtype), requires_grad=True)
        g, = L.autograd.grad(f(L, t).sum(), t, create_graph=True)
        res.append(g)
    assert_same(res[0], res[1])
    e, t = (np.asarray(r.detach().double().tolist()) for r in res)
    np.testing.assert_array_equal(e, t)    # bit for bit


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_sign_and_sgn_of_nan_and_zeros(dtype):
    """A real tensor's sign and sgn: NaN gives 0, -0.0 gives +0 (bfloat16 included)."""
    vals = [float("nan"), -0.0, 0.0, -2.0, 3.0, float("-inf")]
    for fn in ("sign", "sgn"):
        e = getattr(ember, fn)(ember.tensor(vals, dtype=getattr(ember, dtype)))
        t = getattr(torch, fn)(torch.tensor(vals, dtype=getattr(torch, dtype)))
        assert_same(e, t)
        assert ember.signbit(e).tolist() == torch.signbit(t).tolist()
