"""Pointwise ops: arithmetic, powers, exponentials, trigonometry, activations.

Each op: a forward on arrays, a VJP written once for both namespaces (``ns`` is NP on the fast
path, EM under create_graph), and a JVP derived from the VJP (``elementwise=True``) or the
forward (``linear=True``). Broadcast reduction and dtype casts of gradients are the engine's.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._dispatch import binary, inplace, unary
from ._registry import Op, method, ns_fn

__all__ = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "neg",
           "negative", "exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "sqrt", "pow",
           "conj", "square", "rsub"]


def conj_np(x):
    dt = getattr(x, "dtype", None)
    if dt is not None:
        return np.conj(x) if dt.kind == "c" else x
    return x.conjugate() if type(x) is complex else x


def _conj_em(x):
    return x.conj() if isinstance(x, Tensor) and x.is_complex() else x


ns_fn("conj", conj_np, _conj_em)


# ---- arithmetic ----------------------------------------------------------------------------

def _add_fwd(a, b, alpha):
    return np.add(a, b) if alpha == 1 else np.add(a, b * alpha)


def _add_vjp(ns, g, need, alpha):
    return (g if need[0] else None,
            (g if alpha == 1 else g * ns.conj(alpha)) if need[1] else None)


ADD = Op("add", _add_fwd, _add_vjp, linear=True, ufunc=np.add)


def _sub_fwd(a, b, alpha):
    return np.subtract(a, b) if alpha == 1 else np.subtract(a, b * alpha)


def _sub_vjp(ns, g, need, alpha):
    return (g if need[0] else None,
            (-g if alpha == 1 else g * -ns.conj(alpha)) if need[1] else None)


SUB = Op("sub", _sub_fwd, _sub_vjp, linear=True, ufunc=np.subtract)


def _mul_vjp(ns, g, need, a, b):
    return (g * ns.conj(b) if need[0] else None, g * ns.conj(a) if need[1] else None)


MUL = Op("mul", np.multiply, _mul_vjp, saves=(0, 1), elementwise=True, ufunc=np.multiply)


def _div_vjp(ns, g, need, a, b):
    gb = g / ns.conj(b)
    return (gb if need[0] else None, -gb * ns.conj(a / b) if need[1] else None)


DIV = Op("div", np.true_divide, _div_vjp, saves=(0, 1), elementwise=True, ufunc=np.true_divide)


def _check_alpha(a, b, alpha) -> None:
    if alpha != 1 and isinstance(alpha, float):
        for x in (a, b):
            if isinstance(x, Tensor) and not (x.is_floating_point() or x.is_complex()):
                raise RuntimeError(
                    "For integral input tensors, argument alpha must not be a floating point "
                    "number.")


def add(input, other, *, alpha=1, out=None) -> Tensor:
    """``torch.add``: input + alpha * other, with PyTorch's type promotion."""
    if alpha != 1:
        _check_alpha(input, other, alpha)
    return binary(ADD, input, other, (alpha,))


def sub(input, other, *, alpha=1, out=None) -> Tensor:
    """``torch.sub``: input - alpha * other."""
    _check_bool_sub(input, other)
    return binary(SUB, input, other, (alpha,))


def _check_bool_sub(a, b) -> None:
    if isinstance(a, Tensor) and a._data.dtype == np.bool_ and (
            not isinstance(b, Tensor) or b._data.dtype == np.bool_):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead.")


def rsub(input, other, *, alpha=1) -> Tensor:
    return binary(SUB, other, input, (alpha,))


def mul(input, other, *, out=None) -> Tensor:
    """``torch.mul``."""
    return binary(MUL, input, other)


def div(input, other, *, rounding_mode=None, out=None) -> Tensor:
    """``torch.div``: true division (ints become the default float) or rounded division."""
    if rounding_mode is None:
        return binary(DIV, input, other, int_to_float=True)
    from .pointwise_more import floor_divide, trunc_divide
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        return trunc_divide(input, other)
    raise RuntimeError(
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"'{rounding_mode}'")


subtract, multiply, divide, true_divide = sub, mul, div, div

NEG = Op("neg", np.negative, lambda ns, g, need: (-g,), linear=True)


def neg(input: Tensor) -> Tensor:
    """``torch.neg``."""
    if input._data.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.")
    return unary(NEG, input)


negative = neg


# ---- exponentials and trigonometry ---------------------------------------------------------

EXP = Op("exp", np.exp, lambda ns, g, need, r: (g * ns.conj(r),), save_out=True,
         elementwise=True)
LOG = Op("log", np.log, lambda ns, g, need, x: (g / ns.conj(x),), saves=(0,), elementwise=True)
SIN = Op("sin", np.sin, lambda ns, g, need, x: (g * ns.conj(ns.cos(x)),), saves=(0,),
         elementwise=True)
COS = Op("cos", np.cos, lambda ns, g, need, x: (g * -ns.conj(ns.sin(x)),), saves=(0,),
         elementwise=True)
TANH = Op("tanh", np.tanh, lambda ns, g, need, r: (g * ns.conj(1 - r * r),), save_out=True,
          elementwise=True)
SQRT = Op("sqrt", np.sqrt, lambda ns, g, need, r: (g / ns.conj(2 * r),), save_out=True,
          elementwise=True)


def _sigmoid_np(x):
    # exp(-|x|) never overflows; both branches share it
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


SIGMOID = Op("sigmoid", _sigmoid_np, lambda ns, g, need, r: (g * ns.conj(r * (1 - r)),),
             save_out=True, elementwise=True)


def _relu_vjp(ns, g, need, r):
    return (ns.where(r > 0, g, 0),)


RELU = Op("relu", lambda x: np.maximum(x, 0), _relu_vjp, save_out=True, elementwise=True)


def exp(input: Tensor) -> Tensor:
    """``torch.exp``."""
    return unary(EXP, input, int_to_float=True)


def log(input: Tensor) -> Tensor:
    """``torch.log``."""
    return unary(LOG, input, int_to_float=True)


def sin(input: Tensor) -> Tensor:
    """``torch.sin``."""
    return unary(SIN, input, int_to_float=True)


def cos(input: Tensor) -> Tensor:
    """``torch.cos``."""
    return unary(COS, input, int_to_float=True)


def tanh(input: Tensor) -> Tensor:
    """``torch.tanh``."""
    return unary(TANH, input, int_to_float=True)


def sigmoid(input: Tensor) -> Tensor:
    """``torch.sigmoid``."""
    return unary(SIGMOID, input, int_to_float=True)


def sqrt(input: Tensor) -> Tensor:
    """``torch.sqrt``."""
    return unary(SQRT, input, int_to_float=True)


def relu(input: Tensor) -> Tensor:
    """``torch.relu``."""
    if input._data.dtype == np.bool_:
        raise RuntimeError('"clamp_min_cpu" not implemented for \'Bool\'')
    return unary(RELU, input)


# ---- powers -------------------------------------------------------------------------------

def _pow_fwd(a, b):
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        if b == 2:
            return np.multiply(a, a)
        if b == 0.5:
            return np.sqrt(a)
    return np.power(a, b)


def _pow_vjp(ns, g, need, a, b):
    ga = gb = None
    if need[0]:
        if isinstance(b, (int, float)):
            ga = g * 0 if b == 0 else g * ns.conj(b * a ** (b - 1))
        else:
            ga = ns.where(b == 0, 0, g * ns.conj(b * a ** (b - 1)))
    if need[1]:
        r = a ** b
        gb = ns.where((a == 0) & (ns.real_of(b) >= 0), 0, g * ns.conj(r * ns.log(a)))
    return ga, gb


POW = Op("pow", _pow_fwd, _pow_vjp, saves=(0, 1), elementwise=True, node="PowBackward0")
POW_TT = Op("pow_tt", _pow_fwd, _pow_vjp, saves=(0, 1), elementwise=True, node="PowBackward1")
POW_ST = Op("pow_st", _pow_fwd, _pow_vjp, saves=(0, 1), elementwise=True, node="PowBackward2")
ns_fn("real_of", lambda x: np.real(x), lambda x: x.real if isinstance(x, Tensor) else x.real)


def pow(input, exponent, *, out=None) -> Tensor:  # noqa: A001
    """``torch.pow``: tensor or scalar base and exponent."""
    if not isinstance(input, Tensor):
        return binary(POW_ST, input, exponent)
    if isinstance(exponent, Tensor):
        return binary(POW_TT, input, exponent)
    if isinstance(exponent, int) and exponent < 0 and input._data.dtype.kind in "iub":
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return binary(POW, input, exponent)


def square(input: Tensor) -> Tensor:
    return pow(input, 2)


CONJ = Op("conj", np.conj, lambda ns, g, need: (ns.conj(g),), linear=True,
          node="ConjBackward0")


def conj(input: Tensor) -> Tensor:
    """``torch.conj``: the tensor itself for real dtypes."""
    return unary(CONJ, input) if input.is_complex() else input


ns_fn("where", lambda c, a, b: np.where(c, a, b), lambda c, a, b: _where_em(c, a, b))
ns_fn("cos", np.cos, cos)
ns_fn("sin", np.sin, sin)
ns_fn("log", np.log, log)
ns_fn("exp", np.exp, exp)
ns_fn("sqrt", np.sqrt, sqrt)


def _where_em(c, a, b):
    from .pointwise_more import where
    return where(c, a, b)


# ---- Tensor methods and operators ---------------------------------------------------------

def _inplace_binary(op, int_to_float=False, params=()):
    def f(self, other, *, alpha=1):
        p = (alpha,) if op in (ADD, SUB) else params
        return inplace(op, self, (other,), p, int_to_float)
    return f


def _inplace_unary(op, int_to_float=True):
    def f(self):
        return inplace(op, self, (), (), int_to_float)
    return f


for _name, _fn in [("add", add), ("sub", sub), ("subtract", sub), ("mul", mul),
                   ("multiply", mul), ("div", div), ("divide", div), ("true_divide", div),
                   ("neg", neg), ("negative", neg), ("exp", exp), ("log", log), ("sin", sin),
                   ("cos", cos), ("tanh", tanh), ("sigmoid", sigmoid), ("relu", relu),
                   ("sqrt", sqrt), ("pow", pow), ("conj", conj), ("square", square)]:
    method(_name, _fn)

for _name, _op in [("add_", ADD), ("sub_", SUB), ("subtract_", SUB), ("mul_", MUL),
                   ("multiply_", MUL)]:
    method(_name, _inplace_binary(_op))
method("div_", lambda self, other, *, rounding_mode=None: inplace(DIV, self, (other,), (), True)
       if rounding_mode is None else self.copy_(div(self, other, rounding_mode=rounding_mode)))
method("true_divide_", _inplace_binary(DIV, True))
method("divide_", Tensor.div_)
method("pow_", lambda self, e: inplace(POW_TT if isinstance(e, Tensor) else POW, self, (e,)))
method("neg_", lambda self: inplace(NEG, self, (), (), False))
method("negative_", Tensor.neg_)
for _name, _op in [("exp_", EXP), ("log_", LOG), ("sin_", SIN), ("cos_", COS), ("tanh_", TANH),
                   ("sigmoid_", SIGMOID), ("sqrt_", SQRT)]:
    method(_name, _inplace_unary(_op))
method("relu_", _inplace_unary(RELU, False))
method("square_", lambda self: self.pow_(2))

method("__add__", add)
method("__radd__", lambda self, other: add(other, self))
method("__iadd__", lambda self, other: self.add_(other))
method("__sub__", sub)
method("__rsub__", lambda self, other: sub(other, self))
method("__isub__", lambda self, other: self.sub_(other))
method("__mul__", mul)
method("__rmul__", lambda self, other: mul(other, self))
method("__imul__", lambda self, other: self.mul_(other))
method("__truediv__", div)
method("__rtruediv__", lambda self, other: div(other, self))
method("__itruediv__", lambda self, other: self.div_(other))
method("__neg__", neg)
method("__pos__", lambda self: self)
method("__pow__", pow)
method("__rpow__", lambda self, other: pow(other, self))
method("__ipow__", lambda self, other: self.pow_(other))
