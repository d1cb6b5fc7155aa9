"""Type promotion against PyTorch: every ember dtype against Python numbers, NumPy scalars of each
kind (which PyTorch treats as Python numbers of their kind: np.float64 and np.float16 are floats,
NumPy integers are ints, np.complex128 is a complex, while np.bool_ and np.complex64 go through
``float()``), 0-dim tensors and tensors, through add/mul/div/pow/where/clamp/comparisons and the
in-place and fill forms. Result dtypes, values and errors are compared."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]

SCALARS = [("int", 3), ("float", 1.5), ("complex", 1.5 + 2j), ("bool", True),
           ("np.int64", np.int64(3)), ("np.int8", np.int8(-2)), ("np.uint8", np.uint8(3)),
           ("np.float64", np.float64(1.5)), ("np.float32", np.float32(1.5)),
           ("np.float16", np.float16(1.5)), ("np.complex128", np.complex128(1.5 + 2j)),
           ("np.complex64", np.complex64(1.5 + 2j)), ("np.bool_", np.bool_(True))]

_DATA = np.array([1.0, 2.0, 0.5])


def _tensor(L, dtype, shape=(3,)):
    d = _DATA if shape == (3,) else np.array(_DATA[1])
    return L.tensor(d.astype(np.float64)).to(getattr(L, dtype))


def _ops(L):
    def cond(x):
        return L.tensor([True, False, True])
    return {
        "add": lambda x, s: x + s,
        "radd": lambda x, s: s + x,
        "mul": lambda x, s: L.mul(x, s),
        "rmul": lambda x, s: s * x,
        "sub": lambda x, s: x - s,
        "div": lambda x, s: x / s,
        "rdiv": lambda x, s: s / x,
        "pow": lambda x, s: L.pow(x, s),
        "where": lambda x, s: L.where(cond(x), x, s),
        "where_r": lambda x, s: L.where(cond(x), s, x),
        "clamp_max": lambda x, s: L.clamp(x, max=s),
        "clamp_min": lambda x, s: L.clamp(x, min=s),
        "lt": lambda x, s: x < s,
        "eq": lambda x, s: L.eq(x, s),
        "ge": lambda x, s: L.ge(x, s),
        "add_": lambda x, s: x.clone().add_(s),
        "mul_": lambda x, s: x.clone().mul_(s),
        "fill_": lambda x, s: x.clone().fill_(s),
        "full": lambda x, s: L.full((2,), s),
    }


def _run(L, op, x, s):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = _ops(L)[op](x, s)
        except Exception as e:   # noqa: BLE001 -- the exception itself is compared
            return ("error", type(e).__name__, str(e).replace("torch.", "ember."))
    dt = str(r.dtype).split(".")[-1]
    v = r.detach()
    if dt in ("bfloat16", "complex32"):
        v = v.to(getattr(L, "complex64" if dt == "complex32" else "float32"))
    return (dt, v.numpy().astype(np.complex128))


def _compare(dtype, other_t, other_e, skip=()):
    bad = []
    for op in _ops(torch):
        if op in skip:
            continue
        t = _run(torch, op, _tensor(torch, dtype), other_t)
        e = _run(ember, op, _tensor(ember, dtype), other_e)
        if t[0] != e[0] or (t[0] == "error" and t[1:] != e[1:]):
            bad.append((op, t, e))
        elif t[0] != "error":
            tol = 1e-2 if t[0] in ("float16", "bfloat16", "complex32") else 1e-6
            if not np.allclose(e[1], t[1], rtol=tol, atol=tol, equal_nan=True):
                bad.append((op, "values", t[1], e[1]))
    assert not bad, bad


@pytest.mark.parametrize("scalar", SCALARS, ids=[s[0] for s in SCALARS])
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_with_scalar(dtype, scalar):
    name, s = scalar
    _compare(dtype, s, s)


@pytest.mark.parametrize("zero_dim", [True, False], ids=["0dim", "tensor"])
@pytest.mark.parametrize("other", DTYPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_with_tensor(dtype, other, zero_dim):
    shape = () if zero_dim else (3,)
    _compare(dtype, _tensor(torch, other, shape), _tensor(ember, other, shape), ("full",))


@pytest.mark.parametrize("scalar", SCALARS, ids=[s[0] for s in SCALARS])
def test_numpy_scalar_result_dtype_examples(scalar):
    """The issue's examples: a NumPy scalar's kind decides, never its width."""
    name, s = scalar
    for dtype in ("float32", "float16", "int64"):
        t = (_tensor(torch, dtype) * s).dtype
        e = (_tensor(ember, dtype) * s).dtype
        assert str(e).split(".")[-1] == str(t).split(".")[-1]


def test_setitem_refuses_numpy_scalars_pytorch_refuses():
    for v in (np.float32(1.5), np.float16(1.5), np.bool_(True), np.complex64(1), np.float64(2.5),
              np.int8(3), np.uint64(5), np.complex128(2)):
        res = []
        for L in (torch, ember):
            x = L.zeros(3)
            try:
                x[0] = v
                x[[1, 2]] = v
                res.append(x.tolist())
            except TypeError as e:
                res.append(str(e).replace("torch.", "ember."))
        assert res[1] == res[0]


# ---- bool arithmetic: PyTorch's kernels for pow, floor/trunc division, remainder and fmod
# have no Bool version (a bool ** bool-number exponent is answered before dispatch); true
# division and float_power go to float; in-place forms refuse an uncastable result first

_BOOL_OPS = {
    "pow": lambda L, a, b: L.pow(a, b), "**": lambda L, a, b: a ** b,
    "float_power": lambda L, a, b: L.float_power(a, b),
    "true_divide": lambda L, a, b: L.true_divide(a, b), "/": lambda L, a, b: a / b,
    "floor_divide": lambda L, a, b: L.floor_divide(a, b), "//": lambda L, a, b: a // b,
    "remainder": lambda L, a, b: L.remainder(a, b), "%": lambda L, a, b: a % b,
    "fmod": lambda L, a, b: L.fmod(a, b), "add": lambda L, a, b: a + b,
    "sub": lambda L, a, b: a - b, "mul": lambda L, a, b: a * b,
    "div_floor": lambda L, a, b: L.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda L, a, b: L.div(a, b, rounding_mode="trunc"),
}
_BOOL_INPLACE = {
    "pow_": lambda a, b: a.pow_(b), "div_": lambda a, b: a.div_(b),
    "floor_divide_": lambda a, b: a.floor_divide_(b), "remainder_": lambda a, b: a.remainder_(b),
    "mul_": lambda a, b: a.mul_(b), "add_": lambda a, b: a.add_(b), "sub_": lambda a, b: a.sub_(b),
    "float_power_": lambda a, b: a.float_power_(b), "ipow": lambda a, b: a.__ipow__(b),
    "fmod_": lambda a, b: a.fmod_(b),
}


def _bool_operands(L):
    return {"bt": lambda: L.tensor([True, False, True]),
            "bt2": lambda: L.tensor([True, True, False]), "b0": lambda: L.tensor(True),
            "T": lambda: True, "F": lambda: False, "i": lambda: 2, "f": lambda: 2.5,
            "it": lambda: L.tensor([1, 2, 0]), "ft": lambda: L.tensor([1., 0., 2.])}


def _bool_result(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = f()
        except Exception as e:   # noqa: BLE001 -- the exception itself is compared
            return type(e).__name__, str(e).replace("ember", "torch")
    return str(r.dtype).split(".")[-1], repr(r.tolist())


@pytest.mark.parametrize("op", list(_BOOL_OPS))
def test_bool_arithmetic(op):
    f = _BOOL_OPS[op]
    bad = []
    for a in ("bt", "b0", "T", "F", "it", "ft"):
        for b in ("bt", "bt2", "b0", "T", "F", "i", "f", "it", "ft"):
            if a in "TF" and (b in "TFif" or op == "fmod"):
                continue   # two numbers; fmod(number, tensor): PyTorch's overload message
            if "b" not in a + b and a not in "TF" and b not in "TF":
                continue
            r = [_bool_result(lambda L=L: f(L, _bool_operands(L)[a](), _bool_operands(L)[b]()))
                 for L in (torch, ember)]
            if r[0] != r[1]:
                bad.append((a, b, *r))
    assert not bad, bad


@pytest.mark.parametrize("op", list(_BOOL_INPLACE))
def test_bool_inplace(op):
    bad = []
    for b in ("bt", "b0", "T", "F", "i", "f", "it", "ft"):
        r = []
        for L in (torch, ember):
            x = _bool_operands(L)["bt"]()
            r.append((_bool_result(lambda L=L, x=x: _BOOL_INPLACE[op](x, _bool_operands(L)[b]())),
                      x.tolist()))
        if r[0] != r[1]:
            bad.append((b, *r))
    assert not bad, bad
