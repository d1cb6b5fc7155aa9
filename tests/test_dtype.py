"""dtypes: the table, type promotion, the default dtype and conversions (vs PyTorch)."""
import itertools

import numpy as np
import pytest
import torch

import ember
from helpers import both, raises_same

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64", "complex64", "complex128"]
ALIASES = ["half", "float", "double", "short", "int", "long", "cfloat", "cdouble"]


@pytest.fixture(autouse=True)
def _default_dtype_restored():
    yield
    ember.set_default_dtype(ember.float32)
    torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("name", NAMES + ALIASES)
def test_dtype_table(name):
    def f(M):
        d = getattr(M, name)
        return [repr(d).replace("torch.", "ember."), str(d).replace("torch.", "ember."),
                d.is_floating_point, d.is_complex, d.is_signed, d.itemsize,
                M.empty(2, dtype=d).element_size(), M.empty(1, dtype=d).dtype is d,
                isinstance(d, M.dtype)]
    both(f)


def test_aliases_are_identical():
    for a, b in [("half", "float16"), ("float", "float32"), ("double", "float64"),
                 ("short", "int16"), ("int", "int32"), ("long", "int64"),
                 ("cfloat", "complex64"), ("cdouble", "complex128")]:
        assert getattr(ember, a) is getattr(ember, b)


def test_promote_types_table():
    for a, b in itertools.product(NAMES, NAMES):
        e = ember.promote_types(getattr(ember, a), getattr(ember, b))
        t = torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert e.name == str(t).split(".")[-1], (a, b, e, t)


PROMOTION_CASES = {
    "int_times_float_scalar": lambda M: M.tensor([1, 2]) * 2.5,
    "int_plus_int_scalar": lambda M: M.tensor([1, 2], dtype=M.int32) + 5,
    "float32_plus_float64_0dim": lambda M: M.ones(2) + M.tensor(1.0, dtype=M.float64),
    "float32_0dim_plus_float64_0dim": lambda M: M.tensor(1.0) + M.tensor(1.0, dtype=M.float64),
    "uint8_plus_int8": lambda M: M.ones(2, dtype=M.uint8) + M.ones(2, dtype=M.int8),
    "bool_plus_int": lambda M: M.tensor([True, False]) + 1,
    "bool_plus_bool": lambda M: M.tensor([True, False]) + M.tensor([True, True]),
    "bool_plus_float": lambda M: M.tensor([True]) + 1.5,
    "bool_times_int_tensor": lambda M: M.tensor([True, False]) * M.tensor([3, 4]),
    "int32_plus_int64_0dim": lambda M: M.ones(2, dtype=M.int32) + M.tensor(1),
    "int8_plus_int64_tensor": lambda M: M.ones(2, dtype=M.int8) + M.ones(2, dtype=M.int64),
    "int_plus_float_0dim": lambda M: M.tensor([1, 2]) + M.tensor(1.5, dtype=M.float64),
    "half_plus_float_0dim": lambda M: M.ones(2, dtype=M.float16) + M.tensor(1.0),
    "half_plus_bfloat16": lambda M: M.ones(2, dtype=M.float16) + M.ones(2, dtype=M.bfloat16),
    "float_plus_complex_scalar": lambda M: M.ones(2) + 1j,
    "double_plus_cfloat": lambda M: M.ones(2, dtype=M.float64) + M.ones(2, dtype=M.complex64),
    "int_div_int": lambda M: M.tensor([1, 2]) / M.tensor([2, 4]),
    "int_div_scalar": lambda M: M.tensor([3]) / 2,
    "uint8_plus_neg_scalar": lambda M: M.tensor([1], dtype=M.uint8) + 300,
    "int_pow_float": lambda M: M.tensor([2, 3]) ** 0.5,
    "scalar_radd": lambda M: 2.5 + M.tensor([1], dtype=M.int16),
}


@pytest.mark.parametrize("name", list(PROMOTION_CASES))
def test_promotion(name):
    both(PROMOTION_CASES[name])


def test_result_type_and_can_cast():
    def f(M):
        return [M.result_type(M.tensor([1, 2]), 2.5), M.result_type(M.tensor([1.0]), 1),
                M.result_type(M.tensor(1, dtype=M.int8), M.tensor([1], dtype=M.uint8)),
                M.result_type(M.tensor([1], dtype=M.int8), M.tensor(1.0, dtype=M.float64)),
                M.result_type(M.tensor([True]), True), M.result_type(2, 3.0),
                M.can_cast(M.float64, M.float32), M.can_cast(M.float32, M.int32),
                M.can_cast(M.int64, M.float16), M.can_cast(M.bool, M.uint8),
                M.can_cast(M.complex64, M.float64), M.can_cast(M.int8, M.bool)]
    both(f)


def test_inplace_promotion_errors():
    raises_same(lambda: ember.ones(2, dtype=ember.int64).add_(1.5),
                lambda: torch.ones(2, dtype=torch.int64).add_(1.5))
    raises_same(lambda: ember.tensor([3]) - ember.tensor([True]),
                lambda: torch.tensor([3]) - torch.tensor([True]))
    raises_same(lambda: ember.ones(2).add_(ember.ones(2, dtype=ember.complex64)),
                lambda: torch.ones(2).add_(torch.ones(2, dtype=torch.complex64)))

    def f(M):
        x = M.ones(2)
        x.add_(M.ones(2, dtype=M.float64))   # float64 into float32: allowed
        i = M.ones(2, dtype=M.int32)
        i.mul_(M.tensor(3))
        return [x, i]
    both(f)


# ---- default dtype ----------------------------------------------------------------------------

def test_default_dtype_switch():
    def f(M):
        r = [M.get_default_dtype()]
        M.set_default_dtype(M.float64)
        r += [M.get_default_dtype(), M.tensor(1.5).dtype, M.tensor([1, 2]).dtype, M.ones(2).dtype,
              M.arange(0.0, 1.0, 0.5).dtype, M.tensor(1j).dtype, (M.tensor([1]) * 1.5).dtype,
              M.zeros(2).float().dtype, M.linspace(0, 1, 3).dtype, M.rand(2).dtype,
              M.full((1,), 2.0).dtype, M.Tensor(2).dtype]
        M.set_default_dtype(M.float32)
        r += [M.get_default_dtype(), M.tensor(1.5).dtype, M.tensor(1j).dtype]
        return r
    both(f)
    raises_same(lambda: ember.set_default_dtype(ember.int64),
                lambda: torch.set_default_dtype(torch.int64))


# ---- conversions --------------------------------------------------------------------------

def test_conversion_methods():
    data = np.array([[-1.7, 0.0], [2.5, 300.25]])

    def f(M):
        x = M.tensor(data, dtype=M.float32)
        r = [x.float() is x, x.double(), x.half(), x.bfloat16(), x.long(), x.int(), x.short(),
             x.bool(), x.byte().dtype, x.char(), x.to(M.float64), x.to(M.float32) is x,
             x.to(dtype=M.int64), x.to(M.ones(1, dtype=M.float64)), x.to("cpu", M.float16),
             x.to(M.float32, copy=True) is x, x.to(M.float32, copy=True), x.type(M.float64),
             x.cfloat(), x.double().float().dtype]
        i = M.tensor([1, 2])
        r += [i.long() is i, i.float(), i.bool()]
        return r
    both(f)


def test_conversion_is_differentiable():
    def f(M):
        x = M.tensor([1.5, 2.5], requires_grad=True)
        y = x.double()
        z = (y * y).sum()
        z.backward()
        h = x.half()
        return [y.grad_fn, y.dtype, x.grad, x.grad.dtype, h.grad_fn, h.requires_grad,
                x.long().requires_grad, x.long().grad_fn]
    both(f)


def test_legacy_types_and_type_strings():
    def f(M):
        x = M.ones(2)
        return [x.type(), x.double().type(), x.long().type(), x.bool().type(),
                x.half().type(), M.ones(1, dtype=M.uint8).type(),
                M.FloatTensor.dtype if hasattr(M.FloatTensor, "dtype") else M.float32,
                isinstance(x, M.FloatTensor), isinstance(x.long(), M.LongTensor),
                isinstance(x, M.LongTensor), M.LongTensor([1.7]), M.DoubleTensor(2).shape,
                M.FloatTensor([[1, 2]]).dtype, M.BoolTensor([0, 2])]
    both(f)


def test_finfo_iinfo():
    for name in ["float16", "bfloat16", "float32", "float64"]:
        e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
        for attr in ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"]:
            assert getattr(e, attr) == getattr(t, attr), (name, attr)
    for name in ["uint8", "int8", "int16", "int32", "int64"]:
        e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
        assert (e.bits, e.min, e.max) == (t.bits, t.min, t.max)
    assert ember.finfo().bits == torch.finfo().bits


def test_numpy_dtype_round_trip():
    def f(M):
        out = []
        for npd in [np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64,
                    np.uint8, np.bool_, np.complex64, np.complex128]:
            t = M.from_numpy(np.zeros(2, npd))
            out += [t.dtype, t.numpy().dtype.name]
        return out
    both(f)
