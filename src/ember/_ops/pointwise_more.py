"""More pointwise ops: where, rounding division (to be extended)."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ._dispatch import binary, to_operand
from ._registry import Op, apply, method

__all__ = ["where", "floor_divide", "trunc_divide"]


def _where_vjp(ns, g, need, cond):
    return (None, ns.where(cond, g, 0) if need[1] else None,
            ns.where(cond, 0, g) if need[2] else None)


WHERE = Op("where", lambda c, a, b: np.where(c, a, b), lambda ns, g, need, c, a, b: None,
           saves=(0,), elementwise=False, node="WhereBackward0")


def _where_vjp2(ns, g, need, c):
    return (None, ns.where(c, g, 0) if need[1] else None, ns.where(c, 0, g) if need[2] else None)


def _where_jvp(ns, tangents, primals, outs):
    c = primals[0]
    ta = tangents[1] if tangents[1] is not None else 0
    tb = tangents[2] if tangents[2] is not None else 0
    return where(c, ta, tb)


WHERE.vjp = _where_vjp2
WHERE.jvp = _where_jvp


def where(condition: Tensor, input=None, other=None) -> Tensor:
    """``torch.where(condition, input, other)`` with type promotion of the two branches."""
    if input is None and other is None:
        return tuple(Tensor.__new__(Tensor) for _ in ()) or condition.nonzero(as_tuple=True)
    if condition._data.dtype != np.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{_name(condition.dtype)}")
    a, b = to_operand(input), to_operand(other)
    rt = D.result_type_of((a, b)).np
    da = a._data if isinstance(a, Tensor) else a
    db = b._data if isinstance(b, Tensor) else b
    out = np.where(condition._data, da, db).astype(rt, copy=False)
    from ._registry import wrap_outputs
    return wrap_outputs(WHERE, (condition, a, b), (), out)


def _name(dt):
    from ._dispatch import _type_name
    return _type_name(dt)


FLOOR_DIV = Op("floor_divide", np.floor_divide, lambda ns, g, need, *a: (None, None),
               node="FloorDivideBackward0")
TRUNC_DIV = Op("trunc_divide", lambda a, b: np.trunc(np.true_divide(a, b)).astype(
    np.result_type(a, b)) if np.result_type(a, b).kind == "f" else _int_trunc_div(a, b),
    lambda ns, g, need, *a: (ns.zeros_of(g, g.shape) if need[0] else None,
                             ns.zeros_of(g, g.shape) if need[1] else None),
    node="DivBackward1")


def _int_trunc_div(a, b):
    q = np.floor_divide(a, b)
    r = np.remainder(a, b)
    return np.where((r != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0)), q + 1, q)


def floor_divide(input, other) -> Tensor:
    """``torch.floor_divide``."""
    return binary(FLOOR_DIV, input, other)


def trunc_divide(input, other) -> Tensor:
    return binary(TRUNC_DIV, input, other)


method("where", lambda self, condition, other: where(condition, self, other))
method("floor_divide", floor_divide)
method("__floordiv__", floor_divide)
method("__rfloordiv__", lambda self, other: floor_divide(other, self))
_ = apply
