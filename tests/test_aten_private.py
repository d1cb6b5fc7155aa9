"""The underscored / ``native_*`` ATen operators PyTorch exposes as ``torch.<name>`` and lists in
its OpInfo database (native_group_norm, _native_batch_norm_legit, _softmax_backward_data,
_safe_softmax, _unsafe_masked_index(_put_accumulate), _chunk_cat), ``Tensor.__rdiv__``, and the
OpInfo samples fixed with them (gather's empty index, sum_to_size to ``()``): values, gradients,
forward-AD tangents and grad_fn names against PyTorch."""
import numpy as np
import pytest
import torch

import ember
from helpers import assert_same
from opinfo import check_opinfo

ENTRIES = ["native_group_norm", "_native_batch_norm_legit", "_softmax_backward_data",
           "_unsafe_masked_index", "_unsafe_masked_index_put_accumulate", "_chunk_cat",
           "__rdiv__", "gather", "sum_to_size", "einsum", "_segment_reduce", "hash_tensor"]


@pytest.mark.parametrize("name", ENTRIES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_opinfo_samples(name, dtype):
    if name == "__rdiv__":
        from opinfo import _CALLS
        _CALLS.setdefault("__rdiv__", ember.Tensor.__rdiv__)
    tol = {} if dtype is torch.float64 else {"rtol": 1e-4, "atol": 1e-5}
    assert check_opinfo(name, dtype, **tol) > 0


def test_safe_softmax_samples_and_dead_rows():
    assert check_opinfo("torch.ops.aten._safe_softmax.default") > 0
    a = np.array([[0.5, -np.inf, 1.0], [-np.inf] * 3])
    t = torch._safe_softmax(torch.tensor(a), 1)
    e = ember._safe_softmax(ember.tensor(a), 1)
    assert_same(e, t)
    assert e[1].abs().sum().item() == 0.0
    assert_same(ember._safe_softmax(ember.tensor(a), -1, dtype=ember.float32),
                torch._safe_softmax(torch.tensor(a), -1, dtype=torch.float32))


def test_softmax_backward_data_double_backward():
    rng = np.random.default_rng(0)
    g = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    y = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True).softmax(1)
    y = y.detach().requires_grad_()
    f = lambda g, y: ember._softmax_backward_data(g, y, 1, ember.float64)  # noqa: E731
    assert ember.autograd.gradcheck(f, (g, y))
    assert ember.autograd.gradgradcheck(f, (g, y))
    r = f(g, y)
    assert r.grad_fn.name() == "SoftmaxBackwardDataBackward0"


def test_native_batch_norm_legit_overloads_and_running_stats():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 5))
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    for train in (True, False):
        rm_t, rv_t = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
        rm_e, rv_e = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
        rt = torch._native_batch_norm_legit(torch.tensor(x), torch.tensor(w), torch.tensor(b),
                                            rm_t, rv_t, train, 0.3, 1e-5)
        re = ember._native_batch_norm_legit(ember.tensor(x), ember.tensor(w), ember.tensor(b),
                                            rm_e, rv_e, train, 0.3, 1e-5)
        for a, c in zip(re, rt):
            assert_same(a, c)
        assert_same(rm_e, rm_t)
        assert_same(rv_e, rv_t)
    # the no_stats overload: (input, weight, bias, training, momentum, eps)
    rt = torch._native_batch_norm_legit(torch.tensor(x), torch.tensor(w), torch.tensor(b),
                                        True, 0.1, 1e-5)
    re = ember._native_batch_norm_legit(ember.tensor(x), ember.tensor(w), ember.tensor(b),
                                        True, 0.1, 1e-5)
    for a, c in zip(re, rt):
        assert_same(a, c)


def test_chunk_cat_shapes_and_out():
    a = np.arange(6.0).reshape(1, 2, 3)
    b = np.arange(10.0, 22.0).reshape(1, 2, 6)
    for dim, n in ((-1, 5), (1, 5), (0, 2), (2, 1)):
        assert_same(ember._chunk_cat([ember.tensor(a), ember.tensor(b)], dim, n),
                    torch._chunk_cat([torch.tensor(a), torch.tensor(b)], dim, n))
    out = ember.empty(0, dtype=ember.float64)
    r = ember._chunk_cat([ember.tensor(a), ember.tensor(b)], -1, 5, out=out)
    assert r is out and tuple(out.shape) == (1, 2, 5, 3)


def test_rdiv_and_gather_empty_and_sum_to_size():
    x = ember.tensor([1.0, 2.0, 4.0], requires_grad=True)
    r = x.__rdiv__(2)
    assert r.tolist() == [2.0, 1.0, 0.5] and r.grad_fn.name() == "MulBackward0"
    # an empty index of another rank than the input: an empty result, a zero gradient
    xe = ember.ones(5, dtype=ember.float64, requires_grad=True)
    g = ember.gather(xe, 0, ember.empty(2, 0, dtype=ember.long))
    assert tuple(g.shape) == (2, 0) and g.grad_fn.name() == "GatherBackward0"
    g.sum().backward()
    assert xe.grad.tolist() == [0.0] * 5
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        ember.gather(xe, 0, ember.zeros(2, 1, dtype=ember.long))
    # sum_to_size(()) sums (SumBackward0) even for a 0-dim tensor, as PyTorch's sum_to
    s = ember.tensor(3.0, requires_grad=True)
    assert s.sum_to_size(()).grad_fn.name() == "SumBackward0"
    assert s.sum_to_size(()) is not s
    m = ember.ones(2, 3, requires_grad=True)
    assert m.sum_to_size(2, 3) is m


@pytest.mark.parametrize("kw", [{}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"dim": (0, 1)}])
@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.bool_])
def test_hash_tensor(dt, kw):
    x = np.array([[1.5, 2.0, -3.0], [3.0, -1.0, 0.25]]).astype(dt)
    t = torch.hash_tensor(torch.tensor(x), **kw)
    e = ember.hash_tensor(ember.tensor(x), **kw)
    assert e.dtype is ember.uint64 and tuple(e.shape) == tuple(t.shape)
    assert e.tolist() == t.tolist()


def test_hash_tensor_errors():
    with pytest.raises(RuntimeError, match="Unknown hash_tensor mode: 1"):
        ember.hash_tensor(ember.ones(2), mode=1)
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        ember.hash_tensor(ember.empty(0, 3), 0)
    with pytest.raises(NotImplementedError, match="xor_sum_cpu"):
        ember.hash_tensor(ember.ones(2, dtype=ember.complex64))


@pytest.mark.parametrize("name", ["to_sparse", "to_sparse_csr", "to_sparse_coo"])
def test_sparse_conversions_refused(name):
    with pytest.raises(NotImplementedError, match="no sparse layouts"):
        getattr(ember.ones(2, 2), name)()


@pytest.mark.parametrize("kw", [
    {"reduce": "foo", "lengths": [5]}, {"reduce": "sum", "lengths": [2, 2]},
    {"reduce": "sum", "lengths": [-1, 6]}, {"reduce": "sum"},
    {"reduce": "sum", "indices": [1]}])
def test_segment_reduce_errors(kw):
    def call(lib):
        k = {n: (lib.tensor(v) if isinstance(v, list) else v) for n, v in kw.items()}
        return lib.segment_reduce(lib.ones(5), **k)
    with pytest.raises(RuntimeError) as et:
        call(torch)
    with pytest.raises(RuntimeError) as ee:
        call(ember)
    assert str(ee.value) == str(et.value)
