"""PyTorch's argument-parser TypeErrors, derived from ember's own signatures.

PyTorch's generated bindings check every argument's type before the kernel runs and word a
mismatch as ``add(): argument 'other' (position 2) must be Tensor, not list``. ember's
functions are plain Python, so the checks happen where a value is used; this module builds the
same message from the signature of the public function being called: its name, the
parameter's name and position (keyword-only parameters have none). Nothing here runs unless an
argument is wrong.

Functions with several overloads (a tensor or a number, ...) get PyTorch's "received an
invalid combination of arguments" message instead, built from their PyTorch signatures
(``OVERLOADS``) by ``invalid_combination``.

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
    t = type(value)
    if t.__name__ in _C_TYPES and t.__module__.startswith("ember"):
        return f"ember.{t.__name__}"
    return t.__name__


# the classes PyTorch defines in C, whose type names print with their module (torch.dtype)
_C_TYPES = frozenset({"dtype", "device", "layout", "memory_format", "Size", "Generator",
                      "finfo", "iinfo"})


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


# PyTorch's overloads (its generated signatures, ``torch.`` read ``ember.``) of the functions
# whose misuse ember reports with the parser's "invalid combination" message
_OUT = "*, Tensor out = None"
_BINARY = (f"Tensor input, Tensor other, {_OUT}", f"Tensor input, Number other, {_OUT}")
_BINARY_SELF = (_BINARY[0], "Number self, Tensor other", _BINARY[1])
_BINARY_SELF_OUT = (_BINARY[0], f"Number self, Tensor other, {_OUT}", _BINARY[1])
_POLY = tuple(f"{x} x, {n} n, {_OUT}" for x, n in (("Tensor", "Tensor"), ("Number", "Tensor"),
                                                   ("Tensor", "Number")))
_SPLIT = ("Tensor input, int sections", "Tensor input, tuple of ints indices")
_FACTORY = ("ember.dtype dtype = None, ember.layout layout = None, ember.device device = None, "
            "bool pin_memory = False, bool requires_grad = False")
_SPACE = tuple(f"{a} start, {b} end, int steps, {{base}}*, Tensor out = None, {_FACTORY}"
               for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"),
                            ("Number", "Number")))
_MINMAX = (f"Tensor input, {_OUT}", f"Tensor input, Tensor other, {_OUT}",
           "Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None")
OVERLOADS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(["eq", "ne", "ge", "gt", "le", "lt", "greater", "greater_equal", "less",
                     "less_equal", "not_equal", "fmod", "copysign"], _BINARY),
    **dict.fromkeys(["remainder", "bitwise_and", "bitwise_or", "bitwise_xor",
                     "bitwise_left_shift", "bitwise_right_shift"], _BINARY_SELF),
    **dict.fromkeys(["xlogy", "special_xlogy", "special_xlog1py", "special_zeta"],
                    _BINARY_SELF_OUT),
    **dict.fromkeys(["pow", "float_power"], tuple(
        o.replace("other", "exponent") for o in _BINARY_SELF_OUT)),
    "clamp_max": tuple(o.replace("other", "max") for o in _BINARY),
    "clamp_min": tuple(o.replace("other", "min") for o in _BINARY),
    "max": _MINMAX, "min": _MINMAX,
    "rsub": ("Tensor input, Tensor other, *, Number alpha = 1",
             "Tensor input, Number other, Number alpha = 1"),
    **dict.fromkeys(["hsplit", "vsplit", "dsplit"], _SPLIT),
    "linspace": tuple(o.format(base="") for o in _SPACE),
    "logspace": tuple(o.format(base="float base = 10.0, ") for o in _SPACE),
    **{f"special_{n}": _POLY for n in (
        "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
        "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
        "laguerre_polynomial_l", "legendre_polynomial_p")},
}


def _fits(kind: str, value) -> bool:
    """Whether PyTorch's invalid-arguments formatter counts ``value`` as of type ``kind``: it
    compares type names, so nothing is a ``Number`` there."""
    if kind.startswith("tuple of "):
        return isinstance(value, (tuple, list)) and all(_fits(kind[9:-1], v) for v in value)
    return type_name(value) == kind


def _why(sig: str, args: tuple, kwargs: dict) -> str:
    """The "didn't match because ..." line PyTorch adds under an overload with as many
    parameters (``*`` counted) as the call has arguments, or ''."""
    params = sig.split(", ")
    if len(params) != len(args) + len(kwargs):
        return ""
    kinds = [p.split(" = ")[0].rsplit(" ", 1) for p in params]   # [type, name] ("*": ["*"])
    # PyTorch matches keywords against the last parameters' last words: a parameter with a
    # default (``Tensor out = None``) never matches
    last = [p.rsplit(" ", 1)[-1] for p in params][len(params) - len(kwargs):]
    named = {k[-1]: k[0] for k in kinds if len(k) == 2}
    wrong = [k for k in kwargs if k not in last]
    if wrong:
        return ("      didn't match because some of the keywords were incorrect: "
                + ", ".join(wrong) + "\n")
    star = params.index("*") if "*" in params else len(params)
    marks = []
    for i, v in enumerate(args):
        ok = i < star and _fits(kinds[i][0], v)
        marks.append(type_name(v) if ok else f"!{type_name(v)}!")
    for k, v in kwargs.items():
        t = f"{k}={type_name(v)}"
        marks.append(t if _fits(named.get(k, ""), v) else f"!{t}!")
    return ("      didn't match because some of the arguments have invalid types: ("
            + ", ".join(marks) + ")\n")


def invalid_combination(name: str, args: tuple, kwargs: dict | None = None) -> TypeError:
    """PyTorch's parser TypeError for a call of ``name`` (a key of ``OVERLOADS``) matching none
    of its overloads: the argument types given, then each overload (with the reason it did not
    match where it takes as many arguments). ``kwargs`` left None are not shown."""
    kwargs = {k: v for k, v in (kwargs or {}).items() if v is not None}
    got = ", ".join([type_name(a) for a in args] + [f"{k}={type_name(v)}"
                                                    for k, v in kwargs.items()])
    lines = "".join(f" * ({sig})\n" + _why(sig, args, kwargs) for sig in OVERLOADS[name])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{lines}")


# Python numbers by exact type: callers test ``type(x) in NUMBERS`` (cheap) before
# ``check_operands``
NUMBERS = frozenset({bool, int, float, complex})


def check_operands(name: str, args: tuple, kwargs: dict | None = None) -> None:
    """``invalid_combination`` unless each of ``args`` is a tensor or a number (or what ember
    converts to one: a NumPy scalar or array), for functions whose overloads take either."""
    import numpy as np

    from .._tensor import Tensor
    for a in args:
        if not isinstance(a, (Tensor, bool, int, float, complex, np.generic, np.ndarray)):
            raise invalid_combination(name, args, kwargs)


def tensor_args(fn, **values) -> None:
    """PyTorch's parser TypeError for the first of ``values`` (parameter name=value, in
    signature order) that is not a Tensor; callers test ``isinstance`` first, so this runs
    only for a wrong call."""
    from .._tensor import Tensor
    for name, v in values.items():
        if not isinstance(v, Tensor):
            raise must_be(fn, name, v)
