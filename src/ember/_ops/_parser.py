"""PyTorch's argument-parser TypeErrors, derived from ember's own signatures.

PyTorch's generated bindings check every argument's type before the kernel runs and word a
mismatch as ``add(): argument 'other' (position 2) must be Tensor, not list``. ember's
functions are plain Python, so the checks happen where a value is used; this module builds the
same message from the signature of the public function being called: its name, the
parameter's name and position (keyword-only parameters have none). Nothing here runs unless an
argument is wrong.

Binary operators follow PyTorch's ``TypeError_to_NotImplemented_``: ``t + "a"`` answers
``NotImplemented`` so that Python raises its own "unsupported operand type(s)" error.
"""
from __future__ import annotations

import inspect
import sys


def type_name(value) -> str:
    """The type name PyTorch's parser prints for ``value``."""
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        return "Tensor"
    return type(value).__name__


def must_be(fn, param: str, value, expected: str = "Tensor") -> TypeError:
    """``fn(): argument 'param' (position n) must be <expected>, not <type>``, with ``fn``'s
    public name and the parameter's place in its signature."""
    name = getattr(fn, "__name__", str(fn))
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    where = ""
    for i, p in enumerate(params):
        if p.name == param:
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                where = f" (position {i + 1})"
            break
    return TypeError(f"{name}(): argument '{param}'{where} must be {expected}, not "
                     f"{type_name(value)}")


def _public(code):
    """The public function (``ember.<name>``, ``ember.Tensor.<name>``, ``F.<name>``) whose
    code is ``code``, or None."""
    import ember
    name = code.co_name
    for ns in (ember, ember.Tensor, ember.nn.functional, ember.special, ember.linalg):
        f = getattr(ns, name, None)
        if getattr(f, "__code__", None) is code:
            return f
    return None


def bad_operand(value, expected: str = "Tensor") -> TypeError:
    """The TypeError for an operand that is neither a tensor nor a number: PyTorch's parser
    message for the outermost public ember function on the call stack that received
    ``value`` as an argument (found by identity), else a plain one."""
    found = None
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if f.f_globals.get("__name__", "").startswith("ember"):
            n = code.co_argcount + code.co_kwonlyargcount
            for pname in code.co_varnames[:n]:
                if f.f_locals.get(pname) is value:
                    fn = _public(code)
                    if fn is not None:
                        found = (fn, pname)
                    break
        elif found is not None:
            break    # left ember: the user's call was the last public function seen
        f = f.f_back
    if found is None:
        return TypeError(f"unsupported operand type: '{type(value).__name__}'")
    return must_be(found[0], found[1], value, expected)


def binary_dunder(fn):
    """``fn`` as a binary operator method: a TypeError (an operand of no supported type)
    becomes ``NotImplemented``, so Python tries the reflected method and then raises its own
    error, as PyTorch's ``TypeError_to_NotImplemented_`` does."""
    def dunder(self, other):
        try:
            return fn(self, other)
        except TypeError:
            return NotImplemented
    dunder.__name__ = getattr(fn, "__name__", "dunder")
    dunder.__doc__ = getattr(fn, "__doc__", None)
    return dunder


def tensor_args(fn, **values) -> None:
    """PyTorch's parser TypeError for the first of ``values`` (parameter name=value, in
    signature order) that is not a Tensor; callers test ``isinstance`` first, so this runs
    only for a wrong call."""
    from .._tensor import Tensor
    for name, v in values.items():
        if not isinstance(v, Tensor):
            raise must_be(fn, name, v)
