"""Pointwise operators against PyTorch: values, dtypes, grad_fn names, reverse / forward /
double-backward gradients, operator and in-place forms, type promotion and errors."""
# Loops below build lambdas that check_op / raises_same call at once, in the same iteration.
# ruff: noqa: B023
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, check_op, pair, raises_same

RNG = np.random.default_rng(1234)
FLOATS = ["float64", "float32"]


def rand(shape, dtype="float64", low=None, high=None):
    if low is not None:
        a = RNG.uniform(low, high, shape)
    else:
        a = RNG.standard_normal(shape)
    return a.astype(dtype)


def rand_c(shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex128)


def both(name):
    """``(ember.<name>, torch.<name>)`` resolved from a dotted name."""
    e, t = ember, torch
    for p in name.split("."):
        e, t = getattr(e, p), getattr(t, p)
    return e, t


# ---- unary ops ------------------------------------------------------------------------------

# name -> (low, high) of the input's domain
UNARY = {"neg": None, "abs": None, "sign": None, "reciprocal": (0.5, 2), "sqrt": (0.2, 3),
         "rsqrt": (0.2, 3), "exp": None, "expm1": None, "log": (0.2, 3), "log1p": (0.1, 3),
         "log2": (0.2, 3), "log10": (0.2, 3), "sin": None, "cos": None, "tan": (-1, 1),
         "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atan": None, "sinh": None, "cosh": None,
         "tanh": None, "sigmoid": None, "relu": None, "square": None,
         "arcsin": (-0.9, 0.9), "arccos": (-0.9, 0.9), "arctan": None, "negative": None,
         "absolute": None}


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_function_and_method(name, dt):
    dom = UNARY[name]
    a = rand((3, 4), dt, *(dom or (None, None)))
    fe, ft = both(name)
    check_op(fe, ft, a)
    check_op(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), a, noncontig=True)


@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos", "tan", "tanh", "sigmoid", "sqrt",
                                  "rsqrt", "reciprocal", "expm1", "log1p", "log2", "log10",
                                  "asin", "acos", "atan", "sinh", "cosh", "abs", "square",
                                  "neg", "conj"])
def test_unary_complex(name):
    a = rand_c((2, 3)) * 0.5 + 0.3
    fe, ft = both(name)
    check_op(fe, ft, a)


@pytest.mark.parametrize("name", ["sqrt", "exp", "sin", "sigmoid", "reciprocal", "log",
                                  "atan", "rsqrt", "tanh"])
@pytest.mark.parametrize("dt", ["int64", "int32", "bool", "uint8"])
def test_unary_int_to_float(name, dt):
    a = np.array([[1, 2, 3], [4, 1, 2]]).astype(dt)
    fe, ft = both(name)
    check_op(fe, ft, a)


@pytest.mark.parametrize("name", ["neg", "abs", "sign", "relu", "square"])
def test_unary_int_keeps_int(name):
    a = np.array([[-3, 0, 2], [5, -1, 7]], dtype=np.int64)
    fe, ft = both(name)
    check_op(fe, ft, a)


def test_special_values():
    a = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -2.0])
    for name in ["sign", "abs", "relu", "sigmoid", "exp", "tanh", "atan", "expm1"]:
        fe, ft = both(name)
        assert_same(fe(ember.from_numpy(a.copy())), ft(torch.from_numpy(a.copy())))
    b = np.array([True, False])
    assert_same(ember.sign(ember.from_numpy(b)), torch.sign(torch.from_numpy(b)))
    assert_same(ember.square(ember.from_numpy(b)), torch.square(torch.from_numpy(b)))


def test_abs_sign_relu_grad_at_zero():
    a = np.array([0.0, 1.0, -2.0, 0.0])
    for name in ["abs", "relu", "sign"]:
        fe, ft = both(name)
        check_op(fe, ft, a)


# ---- binary arithmetic ---------------------------------------------------------------------

SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3,)), ((3, 1), ())]
BINARY = {
    "add": (lambda m: m.add, None), "sub": (lambda m: m.sub, None),
    "mul": (lambda m: m.mul, None), "div": (lambda m: m.div, "b_nonzero"),
    "true_divide": (lambda m: m.true_divide, "b_nonzero"),
    "subtract": (lambda m: m.subtract, None), "multiply": (lambda m: m.multiply, None),
    "divide": (lambda m: m.divide, "b_nonzero"), "rsub": (lambda m: m.rsub, None),
    "atan2": (lambda m: m.atan2, None), "arctan2": (lambda m: m.arctan2, None),
    "maximum": (lambda m: m.maximum, None), "minimum": (lambda m: m.minimum, None),
    "pow": (lambda m: m.pow, "a_positive"), "remainder": (lambda m: m.remainder, "b_nonzero"),
    "fmod": (lambda m: m.fmod, "b_nonzero"),
    "add_alpha": (lambda m: lambda x, y: m.add(x, y, alpha=2.5), None),
    "sub_alpha": (lambda m: lambda x, y: m.sub(x, y, alpha=-1.5), None),
    "div_floor": (lambda m: lambda x, y: m.div(x, y, rounding_mode="floor"), "b_nonzero"),
    "div_trunc": (lambda m: lambda x, y: m.div(x, y, rounding_mode="trunc"), "b_nonzero"),
}


def _binary_inputs(kind, sa, sb, dt):
    a, b = rand(sa, dt), rand(sb, dt)
    if kind == "b_nonzero":
        b = (np.sign(b) + (b == 0)) * (np.abs(b) + 0.5)
    if kind == "a_positive":
        a = np.abs(a) + 0.3
    return np.asarray(a).astype(dt), np.asarray(b).astype(dt)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_tensor_tensor(name, shapes, dt):
    mk, kind = BINARY[name]
    a, b = _binary_inputs(kind, *shapes, dt)
    check_op(mk(ember), mk(torch), a, b)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_noncontig(name):
    mk, kind = BINARY[name]
    a, b = _binary_inputs(kind, (3, 4), (3, 4), "float64")
    check_op(mk(ember), mk(torch), a, b, noncontig=True)


OPERATORS = {
    "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
    "/": lambda x, y: x / y, "**": lambda x, y: x ** y, "%": lambda x, y: x % y,
}


@pytest.mark.parametrize("sym", sorted(OPERATORS))
@pytest.mark.parametrize("scalar", [2, 2.5, -1.5])
def test_operators_with_scalars(sym, scalar):
    f = OPERATORS[sym]
    a = np.abs(rand((3, 4))) + 0.5
    check_op(lambda x: f(x, scalar), lambda x: f(x, scalar), a)    # x op s
    # s op x (reflected); PyTorch has no derivative for a scalar % tensor
    check_op(lambda x: f(scalar, x), lambda x: f(scalar, x), a, grad=sym != "%")
    check_op(lambda x, y: f(x, y), lambda x, y: f(x, y), a, a[0] + 1.0)


def test_floor_divide_values_and_not_implemented_grad():
    a, b = rand((3, 4)) * 5, rand((4,)) + 3
    for f in (lambda m, x, y: m.floor_divide(x, y), lambda m, x, y: x // y,
              lambda m, x, y: x // 2, lambda m, x, y: 7 // y):
        check_op(lambda x, y: f(ember, x, y), lambda x, y: f(torch, x, y), a, b, grad=False)
    ea, ta = pair(a, True)
    eb, tb = pair(b)
    oe, ot = ember.floor_divide(ea, eb), torch.floor_divide(ta, tb)
    assert oe.grad_fn.name() == ot.grad_fn.name().replace("torch::", "ember::")
    raises_same(lambda: oe.sum().backward(), lambda: ot.sum().backward())
    ie, it = pair(np.array([-7, 7, -8, 9]))
    je, jt = pair(np.array([2, -2, 3, 4]))
    for mode in ("floor", "trunc"):
        assert_same(ember.div(ie, je, rounding_mode=mode), torch.div(it, jt, rounding_mode=mode))
    assert_same(ie // je, it // jt)
    assert_same(ie % je, it % jt)
    assert_same(ember.fmod(ie, je), torch.fmod(it, jt))
    assert_same(ember.remainder(-7, je), torch.remainder(-7, jt))


def test_complex_binary():
    a, b = rand_c((2, 3)), rand_c((3,))
    for name in ["add", "sub", "mul", "div"]:
        fe, ft = both(name)
        check_op(fe, ft, a, b)
    check_op(lambda x, y: ember.add(x, y, alpha=2j), lambda x, y: torch.add(x, y, alpha=2j), a, b)
    check_op(lambda x, y: x ** y, lambda x, y: x ** y, a, b)
    check_op(lambda x: x ** 2, lambda x: x ** 2, a)
    check_op(lambda x: x ** 1.5, lambda x: x ** 1.5, a)
    check_op(lambda x: 2 ** x, lambda x: 2 ** x, a)
    check_op(lambda x, y: ember.lerp(x, y, 0.3), lambda x, y: torch.lerp(x, y, 0.3), a, b)
    check_op(lambda x, y: ember.addcmul(x, y, y, value=0.5),
             lambda x, y: torch.addcmul(x, y, y, value=0.5), a, b)
    check_op(lambda x, y: ember.where(ember.from_numpy(a.real > 0), x, y),
             lambda x, y: torch.where(torch.from_numpy(a.real > 0), x, y), a, b)
    check_op(lambda x: x.abs() * x.sgn(), lambda x: x.abs() * x.sgn(), a)
    check_op(lambda x, y: (x == y, x != y), lambda x, y: (x == y, x != y), a, b)


# ---- pow -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 0.5, -1, -2.5, 2.5])
def test_pow_scalar_exponent(exponent, dt):
    a = np.abs(rand((3, 4), dt)) + 0.2
    check_op(lambda x: ember.pow(x, exponent), lambda x: torch.pow(x, exponent), a)
    check_op(lambda x: x.pow(exponent), lambda x: x.pow(exponent), a, noncontig=True)


@pytest.mark.parametrize("base", [2, 0.5, 0, -1.5])
def test_pow_scalar_base(base):
    a = rand((3, 4))
    check_op(lambda x: ember.pow(base, x), lambda x: torch.pow(base, x), a)
    check_op(lambda x: base ** x, lambda x: base ** x, a)


def test_pow_zero_base_and_exponent():
    a = np.array([0.0, 0.0, 2.0, 0.0])
    b = np.array([0.0, 2.0, 0.0, -1.0])
    check_op(ember.pow, torch.pow, a, b)
    check_op(lambda x: x ** 0, lambda x: x ** 0, a)


def test_pow_integers():
    ie, it = pair(np.array([-3, -1, 0, 1, 2, 5]))
    ee, et = pair(np.array([2, -1, 3, -2, 0, 2]))
    assert_same(ie ** 2, it ** 2)
    assert_same(ie ** ee.abs(), it ** et.abs())
    assert_same(ie ** ee, it ** et)
    assert_same(ie ** 2.5, it ** 2.5)
    assert_same(2 ** ie.abs(), 2 ** it.abs())
    assert_same(-2 ** ie.abs(), -2 ** it.abs())
    assert_same(1.5 ** ie, 1.5 ** it)
    assert_same(ember.pow(2, ee.abs()), torch.pow(2, et.abs()))
    raises_same(lambda: ie ** -1, lambda: it ** -1)
    raises_same(lambda: ember.pow(ie, -2), lambda: torch.pow(it, -2))
    raises_same(lambda: ie.clone().pow_(-1), lambda: it.clone().pow_(-1))


# ---- clamp ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", FLOATS)
def test_clamp_scalars(dt):
    a = rand((3, 4), dt)
    a[0, 0], a[0, 1] = -0.5, 0.5     # values at the bounds
    for lo, hi in [(-0.5, 0.5), (None, 0.5), (-0.5, None), (0.3, -0.3)]:
        check_op(lambda x: ember.clamp(x, lo, hi), lambda x: torch.clamp(x, lo, hi), a)
        check_op(lambda x: x.clip(min=lo, max=hi), lambda x: x.clip(min=lo, max=hi), a,
                 noncontig=True)
    check_op(lambda x: x.clamp_min(0.1), lambda x: x.clamp_min(0.1), a)
    check_op(lambda x: ember.clamp_max(x, 0.1), lambda x: torch.clamp_max(x, 0.1), a)


@pytest.mark.parametrize("dt", FLOATS)
def test_clamp_tensors(dt):
    a, lo, hi = rand((3, 4), dt), rand((4,), dt) - 0.5, rand((3, 1), dt) + 0.5
    check_op(lambda x, y, z: ember.clamp(x, y, z), lambda x, y, z: torch.clamp(x, y, z),
             a, lo, hi)
    check_op(lambda x, y: ember.clamp(x, min=y), lambda x, y: torch.clamp(x, min=y), a, lo)
    check_op(lambda x, z: x.clamp(max=z), lambda x, z: x.clamp(max=z), a, hi)
    check_op(lambda x, y: x.clamp_min(y), lambda x, y: x.clamp_min(y), a, lo)
    check_op(lambda x, y: ember.clamp_max(x, y), lambda x, y: torch.clamp_max(x, y), a, lo)


def test_clamp_dtypes_and_errors():
    ie, it = pair(np.array([-3, 0, 2, 5]))
    be, bt = pair(np.array([True, False]))
    assert_same(ie.clamp(0, 2), it.clamp(0, 2))
    assert_same(ie.clamp(0.5, 2), it.clamp(0.5, 2))
    assert_same(be.clamp(0, 1), bt.clamp(0, 1))
    raises_same(lambda: ember.clamp(ie), lambda: torch.clamp(it))
    ce, ct = pair(rand_c((3,)))
    raises_same(lambda: ce.clamp(0, 1), lambda: ct.clamp(0, 1))
    raises_same(lambda: ce.relu(), lambda: ct.relu())
    raises_same(lambda: be.relu(), lambda: bt.relu())
    raises_same(lambda: ie.clone().clamp_(0.5, 1), lambda: it.clone().clamp_(0.5, 1))


# ---- where, lerp, addcmul, addcdiv --------------------------------------------------------

@pytest.mark.parametrize("dt", FLOATS)
def test_where(dt):
    a, b = rand((3, 4), dt), rand((4,), dt)
    c = rand((3, 1)) > 0
    ce, ct = pair(c)
    check_op(lambda x, y: ember.where(ce, x, y), lambda x, y: torch.where(ct, x, y), a, b)
    check_op(lambda x, y: x.where(ce, y), lambda x, y: x.where(ct, y), a, b, noncontig=True)
    check_op(lambda x: ember.where(ce, x, 2.0), lambda x: torch.where(ct, x, 2.0), a)
    check_op(lambda y: ember.where(ce, 0, y), lambda y: torch.where(ct, 0, y), b)
    assert_same(ember.where(ce, 1.0, 0.0), torch.where(ct, 1.0, 0.0))
    assert_same(ember.where(ce, 1, 0), torch.where(ct, 1, 0))
    ie, it = pair(np.array([1, 2, 3, 4]))
    raises_same(lambda: ember.where(ie, ie, ie), lambda: torch.where(it, it, it))


@pytest.mark.parametrize("dt", FLOATS)
def test_lerp(dt):
    a, b, w = rand((3, 4), dt), rand((4,), dt), rand((3, 1), dt, 0, 1)
    for s in (0.3, 0.7, 1.5):
        check_op(lambda x, y: ember.lerp(x, y, s), lambda x, y: torch.lerp(x, y, s), a, b)
    check_op(ember.lerp, torch.lerp, a, b, w)
    check_op(lambda x, y, z: x.lerp(y, z), lambda x, y, z: x.lerp(y, z), a, a * 2, a,
             noncontig=True)
    ee, te = pair(a)
    raises_same(lambda: ember.lerp(ee, ee.float() if dt == "float64" else ee.double(), 0.5),
                lambda: torch.lerp(te, te.float() if dt == "float64" else te.double(), 0.5))
    ie, it = pair(np.array([1, 2]))
    raises_same(lambda: ember.lerp(ie, ie, 0.5), lambda: torch.lerp(it, it, 0.5))


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("value", [1, 0.5, -2])
def test_addcmul_addcdiv(dt, value):
    a, b, c = rand((3, 4), dt), rand((4,), dt), np.abs(rand((3, 1), dt)) + 0.5
    for name in ("addcmul", "addcdiv"):
        fe, ft = both(name)
        check_op(lambda x, y, z: fe(x, y, z, value=value),
                 lambda x, y, z: ft(x, y, z, value=value), a, b, c)
        check_op(lambda x, y, z: getattr(x, name)(y, z, value=value),
                 lambda x, y, z: getattr(x, name)(y, z, value=value), a, a, a + 3,
                 noncontig=True)


def test_addcmul_addcdiv_ints():
    ie, it = pair(np.array([1, 2, 3]))
    assert_same(ember.addcmul(ie, ie, ie), torch.addcmul(it, it, it))
    assert_same(ember.addcmul(ie, ie, ie, value=2), torch.addcmul(it, it, it, value=2))
    raises_same(lambda: ember.addcdiv(ie, ie, ie), lambda: torch.addcdiv(it, it, it))
    fe, ft = pair(np.array([1.0, 2.0, 3.0], np.float32))
    assert_same(ember.addcdiv(fe, ie, fe), torch.addcdiv(ft, it, ft))


# ---- type promotion --------------------------------------------------------------------------

def _promotion_cases():
    i = np.array([1, 2, 3])
    f32 = np.array([1.5, 2.5, -3.5], np.float32)
    f64_0 = np.array(2.0)
    b = np.array([True, False, True])
    u8 = np.array([1, 200, 3], np.uint8)
    i8 = np.array([-1, 2, 3], np.int8)
    return [
        ("int*2.5", lambda x, y: x * 2.5, i, i),
        ("int+2", lambda x, y: x + 2, i, i),
        ("f32+f64_0dim", lambda x, y: x + y, f32, f64_0),
        ("f64_0dim*f32", lambda x, y: x * y, f64_0, f32),
        ("int/int", lambda x, y: x / y, i, i),
        ("int/int_true_divide", lambda x, y: x.true_divide(y), i, i),
        ("bool+bool", lambda x, y: x + y, b, b),
        ("bool*bool", lambda x, y: x * y, b, b),
        ("bool+1", lambda x, y: x + 1, b, b),
        ("bool+1.5", lambda x, y: x + 1.5, b, b),
        ("u8+i8", lambda x, y: x + y, u8, i8),
        ("u8*int", lambda x, y: x * 300, u8, u8),
        ("int+f32", lambda x, y: x + y, i, f32),
        ("int-f64_0dim", lambda x, y: x - y, i, f64_0),
        ("2.5-int", lambda x, y: 2.5 - x, i, i),
        ("2/int", lambda x, y: 2 / x, i, i),
        ("int**f32", lambda x, y: x ** y, i, f32),
        ("int%1.5", lambda x, y: x % 1.5, i, i),
        ("int.fmod(2.5)", lambda x, y: x.fmod(2.5), i, i),
        ("int.atan2(int)", lambda x, y: x.atan2(y), i, i),
        ("maximum(int,f32)", lambda x, y: x.maximum(y), i, f32),
        ("f32+complex", lambda x, y: x + 1j, f32, f32),
        ("int*True", lambda x, y: x * True, i, i),
        ("int.div_floor(2.5)", lambda x, y: x.div(2.5, rounding_mode="floor"), i, i),
        ("u8.sub(int, alpha)", lambda x, y: x.sub(y, alpha=2), u8, i8),
    ]


@pytest.mark.parametrize("case", _promotion_cases(), ids=lambda c: c[0])
def test_type_promotion(case):
    _, f, a, b = case
    check_op(f, f, a, b, argnums=())


def test_promotion_with_grad():
    a, b = rand((3,), "float32"), np.array(2.0)
    check_op(lambda x, y: x + y, lambda x, y: x + y, a, b)
    check_op(lambda x, y: x * y, lambda x, y: x * y, a, rand((3,), "float64"))
    ie, it = pair(np.array([1, 2, 3]))
    check_op(lambda x: x * ie, lambda x: x * it, a)


# ---- comparisons, logical, bitwise ----------------------------------------------------------

CMP = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
       "not_equal"]


@pytest.mark.parametrize("name", CMP)
def test_comparisons(name):
    a = np.round(rand((3, 4)), 0)
    b = np.round(rand((4,)), 0)
    fe, ft = both(name)
    oe, _ = check_op(fe, ft, a, b)
    assert oe.grad_fn is None and not oe.requires_grad
    check_op(lambda x: fe(x, 0.0), lambda x: ft(x, 0.0), a)
    check_op(lambda x, y: getattr(x, name)(y), lambda x, y: getattr(x, name)(y), a, b,
             noncontig=True)
    ie, it = pair(np.array([1, 2, 3]))
    assert_same(fe(ie, 2.5), ft(it, 2.5))
    assert_same(fe(ie, 2), ft(it, 2))


def test_comparison_operators():
    a, b = np.round(rand((3, 4)), 0), np.round(rand((3, 4)), 0)
    for f in (lambda x, y: x == y, lambda x, y: x != y, lambda x, y: x < y,
              lambda x, y: x <= y, lambda x, y: x > y, lambda x, y: x >= y,
              lambda x, y: 0 < x, lambda x, y: 1.0 == x, lambda x, y: x >= 0):
        check_op(f, f, a, b)
    ee, te = pair(a)
    assert (ee == None) is (te == None)  # noqa: E711
    assert (ee != "a") is (te != "a")
    raises_same(lambda: ee < "a", lambda: te < "a")
    (ce, ct), (de, dt) = pair(rand_c((3,))), pair(rand_c((3,)))
    raises_same(lambda: ce < de, lambda: ct < dt)


def test_comparison_inplace_records_zero_grad():
    a, b = rand((3, 4)), rand((4,))
    for name in ("lt_", "eq_", "ge_"):
        for other in (b, 0.0):
            xe, xt = pair(a, True)
            ye, yt = pair(b, True)
            oe = xe * 1
            ot = xt * 1
            re = getattr(oe, name)(ye if other is b else other)
            rt = getattr(ot, name)(yt if other is b else other)
            assert_same(re, rt)
            assert re.grad_fn.name() == rt.grad_fn.name()
            re.sum().backward()
            rt.sum().backward()
            assert_same(xe.grad, xt.grad)


def test_isclose_allclose_equal():
    a = rand((3, 4))
    b = a + np.array([0, 1e-9, 1e-3, 1.0])
    a[0, 0] = b[0, 0] = np.nan
    a[1, 0] = b[1, 0] = np.inf
    a[2, 0], b[2, 0] = np.inf, -np.inf
    (ae, at), (be, bt) = pair(a), pair(b)
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.1}, {"atol": 1e-2, "rtol": 0}):
        assert_same(ember.isclose(ae, be, **kw), torch.isclose(at, bt, **kw))
        assert ember.allclose(ae, be, **kw) == torch.allclose(at, bt, **kw)
        assert ae.isclose(be, **kw).tolist() == at.isclose(bt, **kw).tolist()
    assert ember.allclose(ae[1:], ae[1:]) and ae.allclose(ae, equal_nan=True)
    raises_same(lambda: ember.isclose(ae, be.float()), lambda: torch.isclose(at, bt.float()))
    raises_same(lambda: ember.isclose(ae, be, rtol=-1), lambda: torch.isclose(at, bt, rtol=-1))
    ie, it = pair(np.array([100, 101, 3]))
    je, jt = pair(np.array([101, 101, 4]))
    assert_same(ember.isclose(ie, je, rtol=0.1), torch.isclose(it, jt, rtol=0.1))
    assert_same(ember.isclose(ie, je), torch.isclose(it, jt))
    for x, y in [(a, a), (a, b), (a[1:], a[1:]), (a[1:], a[1:2])]:
        (xe, xt), (ye, yt) = pair(x), pair(y)
        assert ember.equal(xe, ye) == torch.equal(xt, yt)
        assert xe.equal(ye) == xt.equal(yt)
    assert ember.equal(ie, ie.double()) == torch.equal(it, it.double())


def test_isnan_isinf_isfinite():
    a = np.array([0.0, np.nan, np.inf, -np.inf, 1.0])
    for name in ("isnan", "isinf", "isfinite"):
        fe, ft = both(name)
        for arr in (a, a.astype(np.float32), np.array([1, 2]), np.array([True])):
            (e, t) = pair(arr)
            assert_same(fe(e), ft(t))
            assert_same(getattr(e, name)(), getattr(t, name)())
    ce, ct = pair(np.array([1 + 1j, np.nan + 0j, 1j * np.inf]))
    assert_same(ember.isnan(ce), torch.isnan(ct))
    assert_same(ember.isinf(ce), torch.isinf(ct))


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical(name):
    a = np.array([[0.0, 1.0, -2.0], [0.0, 0.0, 3.0]])
    b = np.array([1, 0, 5])
    fe, ft = both(name)
    for x, y in [(a, b), (a > 0, b > 0), (b, a)]:
        (xe, xt), (ye, yt) = pair(x), pair(y)
        assert_same(fe(xe, ye), ft(xt, yt))
        assert_same(getattr(xe, name)(ye), getattr(xt, name)(yt))
        xe2, xt2 = xe.clone(), xt.clone()
        if x.shape == np.broadcast_shapes(x.shape, y.shape):
            v = xe2._version
            assert_same(getattr(xe2, name + "_")(ye), getattr(xt2, name + "_")(yt))
            assert xe2._version == v + 1
    ee, te = pair(a, True)
    oe, ot = ee * 1, te * 1
    getattr(oe, name + "_")(ee)
    getattr(ot, name + "_")(te)
    assert oe.grad_fn.name() == ot.grad_fn.name()
    for arr in (a, b, a > 0):
        (e, t) = pair(arr)
        assert_same(ember.logical_not(e), torch.logical_not(t))
        assert_same(e.clone().logical_not_(), t.clone().logical_not_())


def test_bitwise():
    i = np.array([[5, -3, 0], [12, 7, 1]])
    j = np.array([3, 6, -1])
    b = np.array([True, False, True])
    (ie, it), (je, jt), (be, bt) = pair(i), pair(j), pair(b)
    for f in (lambda x, y: x & y, lambda x, y: x | y, lambda x, y: x ^ y):
        assert_same(f(ie, je), f(it, jt))
        assert_same(f(be, be), f(bt, bt))
        assert_same(f(ie, be), f(it, bt))
        assert_same(f(ie, 6), f(it, 6))
        assert_same(f(6, ie), f(6, it))
        assert_same(f(be, True), f(bt, True))
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        fe, ft = both(name)
        assert_same(fe(ie, je), ft(it, jt))
        assert_same(getattr(ie.clone(), name + "_")(je), getattr(it.clone(), name + "_")(jt))
        fa, fb = pair(np.array([1.0, 2.0]))
        raises_same(lambda: fe(fa, fa), lambda: ft(fb, fb))
    assert_same(~ie, ~it)
    assert_same(~be, ~bt)
    assert_same(ember.bitwise_not(ie), torch.bitwise_not(it))
    assert_same(ie.bitwise_not(), it.bitwise_not())
    x = ie.clone()
    x &= je
    y = it.clone()
    y &= jt
    assert_same(x, y)
    x |= 8
    y |= 8
    assert_same(x, y)
    x ^= 3
    y ^= 3
    assert_same(x, y)
    fe, ft = pair(np.array([1.0]))
    raises_same(lambda: ~fe, lambda: ~ft)
    raises_same(lambda: ember.bitwise_not(fe), lambda: torch.bitwise_not(ft))


# ---- in-place forms ----------------------------------------------------------------------

def _unary_inplace(n):
    return lambda x, y: getattr(x, n + "_")()


INPLACE = {
    "add_": lambda x, y: x.add_(y), "add_alpha_": lambda x, y: x.add_(y, alpha=0.5),
    "sub_": lambda x, y: x.sub_(y), "mul_": lambda x, y: x.mul_(y),
    "div_": lambda x, y: x.div_(y), "true_divide_": lambda x, y: x.true_divide_(y),
    "pow_": lambda x, y: x.pow_(y), "pow_scalar_": lambda x, y: x.pow_(2),
    "atan2_": lambda x, y: x.atan2_(y), "arctan2_": lambda x, y: x.arctan2_(y),
    "remainder_": lambda x, y: x.remainder_(y), "fmod_": lambda x, y: x.fmod_(2.0),
    "lerp_": lambda x, y: x.lerp_(y, 0.3), "lerp_t_": lambda x, y: x.lerp_(y, y),
    "addcmul_": lambda x, y: x.addcmul_(y, y, value=2),
    "addcdiv_": lambda x, y: x.addcdiv_(y, y * y + 1), "clamp_": lambda x, y: x.clamp_(0, 1),
    "clamp_t_": lambda x, y: x.clamp_(y - 1, y), "clip_": lambda x, y: x.clip_(max=1),
    "clamp_min_": lambda x, y: x.clamp_min_(y), "clamp_max_": lambda x, y: x.clamp_max_(1.0),
    "iadd": lambda x, y: x.__iadd__(y), "isub": lambda x, y: x.__isub__(y),
    "imul": lambda x, y: x.__imul__(y), "itruediv": lambda x, y: x.__itruediv__(y),
    "ipow": lambda x, y: x.__ipow__(y), "imod": lambda x, y: x.__imod__(y),
    "div_floor_": lambda x, y: x.div_(y, rounding_mode="floor"),
    "square_": lambda x, y: x.square_(), "neg_": lambda x, y: x.neg_(),
    "negative_": lambda x, y: x.negative_(),
}
for _n in ["abs", "sign", "reciprocal", "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "log2",
           "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
           "sigmoid", "relu", "arcsin", "arccos", "arctan", "absolute"]:
    INPLACE[_n + "_"] = _unary_inplace(_n)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace(name, dt):
    f = INPLACE[name]
    a = rand((3, 4), dt, 0.2, 0.9)
    b = rand((4,), dt, 0.5, 1.5)

    def run(m, x, y):
        z = x * 1             # a non-leaf: in-place is allowed and rebases its history
        v = z._version
        r = f(z, y)
        assert r is z and z._version > v
        return z
    check_op(lambda x, y: run(ember, x, y), lambda x, y: run(torch, x, y), a, b)
    # values without autograd
    (xe, xt), (ye, yt) = pair(a), pair(b)
    assert_same(f(xe, ye), f(xt, yt))
    assert xe._version == xt._version


def test_inplace_on_view_of_nonleaf():
    a, b = rand((3, 4)), rand((4,))

    def f(x, y):
        z = x * 1
        z[1].mul_(y)
        z.t()[2].add_(y[:3], alpha=2)
        z[:, 1].sin_()
        z[:, 0].exp_()
        return z
    check_op(f, f, a, b)

    def g(m, x):
        z = x * 1
        z[:, 0].exp_()        # saves its result, which the next write changes
        z.t()[2].add_(1)
        z.sum().backward()
    (xe, xt) = pair(a, True)
    raises_same(lambda: g(ember, xe), lambda: g(torch, xt))


def test_inplace_errors():
    for f in (lambda m, x: x.add_(1), lambda m, x: x.exp_(), lambda m, x: x.clamp_(0, 1),
              lambda m, x: x.mul_(2), lambda m, x: x.addcmul_(x, x), lambda m, x: x[0].sub_(1),
              lambda m, x: x.lt_(0), lambda m, x: x.pow_(2), lambda m, x: x.lerp_(x, 0.5)):
        (ee, te) = pair(rand((3,)), True)
        raises_same(lambda: f(ember, ee), lambda: f(torch, te))
    (ie, it), (fe, ft) = pair(np.array([1, 2, 3])), pair(np.array([1.5, 2.0, 3.0]))
    for f in (lambda x, y: x.add_(1.5), lambda x, y: x.add_(y), lambda x, y: x.mul_(0.5),
              lambda x, y: x.div_(2), lambda x, y: x.sqrt_(), lambda x, y: x.exp_(),
              lambda x, y: x.pow_(0.5), lambda x, y: x.__iadd__(y), lambda x, y: x.atan2_(x),
              lambda x, y: x.sub_(1, alpha=0.5), lambda x, y: x.clamp_(0.5, 2)):
        raises_same(lambda: f(ie.clone(), fe), lambda: f(it.clone(), ft))
    (be, bt) = pair(np.array([True, False]))
    raises_same(lambda: be.add_(2), lambda: bt.add_(2))
    (se, st) = pair(rand((1, 3)))
    raises_same(lambda: se.add_(rand((2, 3)).tolist() and ember.from_numpy(rand((2, 3)))),
                lambda: st.add_(torch.from_numpy(rand((2, 3)))))
    # int keeps its dtype when the result fits
    assert_same(ie.clone().add_(2), it.clone().add_(2))
    assert_same(ie.clone().mul_(ie), it.clone().mul_(it))
    assert_same(fe.clone().add_(ie), ft.clone().add_(it))
    assert_same(ie.clone().div_(2, rounding_mode="floor"),
                it.clone().div_(2, rounding_mode="floor"))


def test_inplace_forward_ad():
    a, b = rand((3, 4)), rand((4,))
    for f in (lambda x, y: (x * 1).mul_(y), lambda x, y: (x * 1).exp_(),
              lambda x, y: (x * 1).log_().add_(y), lambda x, y: (x * 1).sin_(),
              lambda x, y: (x * 1).div_(y), lambda x, y: (x * 1).pow_(2)):
        check_op(f, f, np.abs(a) + 0.5, b)


# ---- errors ------------------------------------------------------------------------------------

def test_errors():
    (be, bt), (ie, it), (fe, ft) = (pair(np.array([True, False])), pair(np.array([1, 2])),
                                    pair(np.array([1.0, 2.0])))
    (ce, ct) = pair(rand_c((2,)))
    cases = [
        (lambda m, b, i, f, c: b - b), (lambda m, b, i, f, c: m.sub(b, True)),
        (lambda m, b, i, f, c: -b), (lambda m, b, i, f, c: b.neg()),
        (lambda m, b, i, f, c: m.abs(b)), (lambda m, b, i, f, c: i.add(2, alpha=1.5)),
        (lambda m, b, i, f, c: m.sign(c)), (lambda m, b, i, f, c: m.atan2(c, c)),
        (lambda m, b, i, f, c: m.maximum(c, c)), (lambda m, b, i, f, c: m.minimum(c, c)),
        (lambda m, b, i, f, c: c % c), (lambda m, b, i, f, c: m.fmod(c, c)),
        (lambda m, b, i, f, c: m.div(f, f, rounding_mode="round")),
        (lambda m, b, i, f, c: i // 0), (lambda m, b, i, f, c: i % 0),
        (lambda m, b, i, f, c: m.clamp(c, 0)), (lambda m, b, i, f, c: f + m.ones(3)),
        (lambda m, b, i, f, c: m.lerp(f, f, c)),
    ]
    for f in cases:
        raises_same(lambda: f(ember, be, ie, fe, ce), lambda: f(torch, bt, it, ft, ct))


def test_grad_flows_through_composite():
    a, b = rand((3, 4)), rand((4,))

    def f(m):
        return lambda x, y: (m.sigmoid(x) * y.exp() - x.tanh() / (y * y + 1)).clamp(-1, 1) \
            .pow(2).sqrt().log1p()
    check_op(f(ember), f(torch), a, b)


def test_clamp_min_max_take_their_keywords():
    """clamp_min/clamp_max (function, method, in-place) name their bound min/max, as PyTorch."""
    for L in (ember, torch):
        x = L.tensor([-1., 0.2, 3.])
        got = [x.clamp_min(min=0.5), L.clamp_max(x, max=0.1), x.clone().clamp_min_(min=0.2),
               x.clone().clamp_max_(max=0.0), L.clamp_min(x, min=L.tensor(0.))]
        if L is ember:
            e = got
        else:
            for a, b in zip(e, got):
                assert_same(a, b)
