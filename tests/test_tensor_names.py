"""Issue 7 item 10: names PyTorch programs use, checked against torch (values, dtypes, reprs,
storage pointer relations, errors)."""
from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember

LIBS = (torch, ember)


def _same(fn):
    """Run ``fn(lib)`` in both libraries; return both results (or both exceptions)."""
    out = []
    for M in LIBS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(("ok", fn(M)))
        except Exception as e:  # noqa: BLE001 - compared below
            out.append((type(e).__name__, str(e)))
    return out


def _norm(x):
    if isinstance(x, (torch.Tensor, ember.Tensor)):
        return (str(x.dtype).split(".")[-1], tuple(x.shape), x.detach().numpy().tolist())
    if isinstance(x, (tuple, list)):
        return type(x).__name__, [_norm(v) for v in x]
    if isinstance(x, (torch.dtype, ember.dtype)):
        return repr(x).split(".")[-1]
    return x


def check(fn):
    (kt, vt), (ke, ve) = _same(fn)
    assert ke == kt, (ve, vt)
    if kt == "ok":
        assert _norm(ve) == _norm(vt)
    else:
        assert ve == vt


X = [[0., 1., 2.], [3., 4., 5.]]

CASES = {
    "new": lambda M: M.tensor(X).new([1, 2]),
    "new_sizes": lambda M: M.tensor(X).new(2, 3).shape,
    "type_as": lambda M: M.tensor(X).type_as(M.zeros(1, dtype=M.int32)),
    "ravel": lambda M: M.tensor(X).t().ravel(),
    "is_nonzero": lambda M: M.tensor([1.]).is_nonzero(),
    "is_nonzero_many": lambda M: M.tensor([1., 2.]).is_nonzero(),
    "resize_": lambda M: M.zeros(2).resize_(3, 2).shape,
    "put": lambda M: M.tensor(X).put(M.tensor([0, 5]), M.tensor([9., 9.])),
    "positive": lambda M: M.positive(M.tensor(X)),
    "is_conj": lambda M: (M.tensor([1j]).is_conj(), M.tensor([1j]).conj().is_conj()),
    "conj_physical": lambda M: M.conj_physical(M.tensor([1 + 2j])),
    "masked_scatter": lambda M: M.tensor(X).masked_scatter(M.tensor(X) > 2, M.arange(6.)),
    "fill_diagonal_": lambda M: M.zeros(3, 4).fill_diagonal_(2),
    "squeeze_": lambda M: M.zeros(1, 3).squeeze_().shape,
    "unsqueeze_": lambda M: M.zeros(3).unsqueeze_(0).shape,
    "t_": lambda M: M.zeros(2, 3).t_().stride(),
    "transpose_": lambda M: M.zeros(2, 3, 4).transpose_(0, 2).stride(),
    "shifts": lambda M: (M.tensor([8, -8]) >> 1, M.tensor([8]) << 2, 1 << M.tensor([3])),
    "angle": lambda M: M.angle(M.tensor([-1., 2., 1j])),
    "complex": lambda M: M.complex(M.tensor([1.]), M.tensor([2.])),
    "polar": lambda M: M.polar(M.tensor([1.], dtype=M.float64), M.tensor([2.], dtype=M.float64)),
    "nanmean": lambda M: M.nanmean(M.tensor([1., float("nan"), 2.])),
    "aminmax": lambda M: tuple(M.aminmax(M.tensor(X), dim=1)),
    "diff": lambda M: M.diff(M.tensor(X), n=2, dim=1),
    "repeat_interleave": lambda M: M.repeat_interleave(M.tensor(X), M.tensor([1, 2]), dim=0),
    "quantile": lambda M: M.quantile(M.tensor(X), M.tensor([0.3, 0.9]), dim=1),
    "kthvalue_ties": lambda M: tuple(M.kthvalue(M.tensor([1., 1., 1., 0.]), 2)),
    "cuda": lambda M: (M.cuda.is_available(), M.cuda.device_count(),
                       M.accelerator.is_available()),
    "device_cuda": lambda M: repr(M.device("cuda")),
    "to_cuda": lambda M: M.ones(2).to("cuda"),
    "cuda_method": lambda M: M.ones(2).cuda(),
    "zeros_cuda": lambda M: M.zeros(2, device=M.device("cuda")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_name(name):
    check(CASES[name])


DTYPES = ["complex32", "chalf", "uint16", "uint32", "uint64", "quint8", "qint8", "qint32",
          "quint4x2", "quint2x4"]


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_objects(name):
    dt, de = getattr(torch, name), getattr(ember, name)
    assert repr(de) == repr(dt).replace("torch", "ember") and str(de) == repr(de)
    assert (de.itemsize, de.is_complex, de.is_floating_point) == \
        (dt.itemsize, dt.is_complex, dt.is_floating_point)
    assert pickle.loads(pickle.dumps(de)) is de
    check(lambda M: getattr(M, name).is_signed)
    for other in ["bool", "uint8", "int64", "float16", "bfloat16", "float32", "float64",
                  "complex64", "complex128", name]:
        check(lambda M: M.promote_types(getattr(M, name), getattr(M, other)))
        check(lambda M: M.promote_types(getattr(M, other), getattr(M, name)))


@pytest.mark.parametrize("name", ["qint8", "quint8"])
def test_name_only_dtypes_refuse_tensors(name):
    # PyTorch can store these; ember names them but refuses to make a tensor, saying why
    # (complex32 tensors exist: tests/test_complex32.py)
    for f in (lambda: ember.zeros(2, dtype=getattr(ember, name)),
              lambda: ember.ones(2).to(getattr(ember, name)),
              lambda: ember.tensor([1.], dtype=getattr(ember, name))):
        with pytest.raises(NotImplementedError, match=f"ember cannot make tensors of dtype "
                           f"ember.{getattr(ember, name).name}"):
            f()


def test_set_default_device():
    try:
        for M in LIBS:
            M.set_default_device("cpu")
            assert str(M.get_default_device()) == "cpu"
            assert M.zeros(2).device.type == "cpu"
            M.set_default_device("cuda")
        check(lambda M: M.zeros(2))
        check(lambda M: M.tensor([1.]))
    finally:
        for M in LIBS:
            M.set_default_device(None)
    assert ember.zeros(1).device.type == "cpu"


# ---- storages ----------------------------------------------------------------------------------

def _ptrs(M):
    x = M.arange(12.).reshape(3, 4)
    v = x[1:, 1:]
    us, uv = x.untyped_storage(), v.untyped_storage()
    return (us.data_ptr() == x.data_ptr(), uv.data_ptr() == x.data_ptr(),
            v.data_ptr() - x.data_ptr(), us.nbytes(), len(uv), uv.element_size(),
            x.untyped_storage() is x.untyped_storage(), M.zeros(0).untyped_storage().nbytes(),
            x.t().contiguous().untyped_storage().data_ptr() == x.data_ptr(),
            us[4], us.tolist()[:8], str(us.device))


def test_untyped_storage_pointers():
    check(_ptrs)


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_typed_storage():
    def f(M):
        x = M.arange(6, dtype=M.int32).reshape(2, 3)[1]
        s = x.storage()
        return (s.size(), len(s), s.dtype, s.data_ptr() == x.data_ptr() - 12, s[4],
                s.tolist(), s.nbytes(), s.element_size())
    check(f)
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        ember.ones(1).storage()
    r = repr(ember.arange(2.).storage())
    assert r == repr(torch.arange(2.).storage()).replace("torch", "ember")


def _set_shares(M):
    a = M.arange(4.)
    y = M.zeros(1).set_(a[1:])
    y[0] = 9
    return a, y._base is None, y.storage_offset(), y.data_ptr() == a.data_ptr() + 4


SET_CASES = {
    "tensor": lambda M: M.zeros(1).set_(M.arange(6.).reshape(2, 3)[:, 1:]),
    "shares": _set_shares,
    "storage": lambda M: M.zeros(1).set_(M.arange(6.).untyped_storage(), 2, (2, 2), (1, 2)),
    "typed_storage": lambda M: M.zeros(1).set_(M.arange(6.).storage(), 1, (2,)),
    "whole_storage": lambda M: M.zeros(1).set_(M.arange(6.).untyped_storage()),
    "empty": lambda M: M.zeros(3).set_(),
    "dtype": lambda M: M.zeros(2).set_(M.ones(3, dtype=M.long)),
    "typed_dtype": lambda M: M.zeros(1, dtype=M.long).set_(M.arange(3.).storage()),
    "leaf": lambda M: M.zeros(2, requires_grad=True).set_(M.ones(3)),
    "version": lambda M: (lambda x: (x._version, x.set_(M.ones(2))._version))(M.zeros(2)),
}


@pytest.mark.parametrize("name", sorted(SET_CASES))
def test_set_(name):
    check(SET_CASES[name])


def test_set_refuses_growing_storage():
    # PyTorch grows the storage in place; NumPy memory cannot grow, so ember says so
    with pytest.raises(NotImplementedError, match="cannot grow a storage"):
        ember.zeros(1).set_(ember.arange(6.).untyped_storage(), 5, (2, 2), (1, 2))


# ---- deepcopy ------------------------------------------------------------------------------

def test_deepcopy_keeps_sharing():
    def f(M):
        a = M.arange(12.).reshape(3, 4)
        v, w = a[1:, ::2], a.t()
        a2, v2, w2, other = copy.deepcopy((a, v, w, M.ones(2)))
        a2[1, 2] = 100.
        return (v2, w2, v2.stride(), w2.stride(), v2.storage_offset(), v2._base is None,
                v2.is_leaf, a, v2.data_ptr() - a2.data_ptr(), other.data_ptr() != a2.data_ptr(),
                a2._version, v2._version)
    check(f)


def test_deepcopy_dict_and_grad():
    def f(M):
        a = M.ones(3, requires_grad=True)
        (a * 2).sum().backward()
        d = copy.deepcopy({"a": a, "b": a[1:].detach()})
        d["a"].data[1] = 5
        return d["a"], d["b"], d["a"].grad, d["a"].requires_grad
    check(f)
    check(lambda M: copy.deepcopy(M.ones(2, requires_grad=True) * 2))


# ---- topk / kthvalue ties ---------------------------------------------------------------------

def _tie_cases():
    rng = np.random.default_rng(7)
    out = []
    for n in (1, 3, 5, 8, 17, 20, 33, 130, 300):
        for kind in ("few", "nan", "int", "distinct"):
            if kind == "int":
                a = rng.integers(-2, 2, (2, n))
            elif kind == "distinct":
                a = rng.standard_normal((2, n))
            else:
                a = rng.integers(0, 3, (2, n)).astype(np.float32)
                if kind == "nan":
                    a[rng.random((2, n)) < 0.3] = np.nan
            for k in sorted({0, 1, min(n, 2), min(n, 4), n // 2, n}):
                out.append((a, k))
    return out


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("sorted_", [True, False])
def test_topk_ties_and_unsorted_order(largest, sorted_):
    # PyTorch's kernel runs libstdc++'s nth_element/sort or partial_sort: equal values and
    # unsorted results come out in the order those leave, which ember replays
    for a, k in _tie_cases():
        for dim in (0, 1) if k <= 2 else (1,):
            rt = torch.topk(torch.from_numpy(a), k, dim=dim, largest=largest, sorted=sorted_)
            re = ember.topk(ember.from_numpy(a), k, dim=dim, largest=largest, sorted=sorted_)
            assert re.indices.tolist() == rt.indices.tolist(), (a, k, dim)
            np.testing.assert_array_equal(re.values.numpy(), rt.values.numpy())


def test_kthvalue_ties():
    for a, k in _tie_cases():
        if k:
            rt, re = torch.kthvalue(torch.from_numpy(a), k), ember.kthvalue(ember.from_numpy(a), k)
            assert re.indices.tolist() == rt.indices.tolist(), (a, k)
