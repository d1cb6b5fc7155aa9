"""A differential fuzzer for autograd: random straight-line programs run in ember and PyTorch.

PyTorch promises that "if you're using in-place functions and not seeing any errors, you can be
sure that the computed gradients are correct". This module checks that ember keeps the same
promise, and more: a program is data (a list of ``Stmt`` records), interpreted against a module
``M`` (``ember`` or ``torch``), so the very same program runs in both, and everything observable
is compared statement by statement: values, dtypes, shapes, ``requires_grad``, ``is_leaf``,
``grad_fn`` names, ``_version``, strides of view results, exceptions (type and message), the
leaves' ``.grad``, retained grads, hook calls, double-backward gradients and forward-mode
tangents.

Programs are generated against PyTorch (each candidate statement is run in torch before it is
kept), so they are valid in PyTorch most of the time; statement guards keep the data away from
non-differentiable points (relu at 0, ties of max/sort, clamp bounds, branch cuts) so that a
gradient disagreement means a bug, not float noise. Besides tensor ops, programs call
torch.nn.functional (``p_nn``: layers, activations in place, norms with running statistics,
pooling, padding, losses) on the same tensors. ``minimize`` drops statements and shrinks
data while the same kind of disagreement persists, and ``to_source`` prints a program as a
Python snippet runnable against torch (or ember, with ``import ember as torch``).

Entry points: ``generate(seed)``, ``check(program)``, ``check_seed(seed)``, ``minimize``,
``to_source``, ``report``.
"""
from __future__ import annotations

import contextlib
import operator
import re
import time
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import torch

import ember

# --------------------------------------------------------------------------------------------
# the program as data


@dataclass(frozen=True)
class V:
    """A reference to a program variable."""

    name: str


class D:
    """A constant tensor written inline (indices, masks, operands without grad)."""

    __slots__ = ("a",)

    def __init__(self, a):
        self.a = np.asarray(a)

    def __repr__(self) -> str:
        return f"D({self.a.dtype}{list(self.a.shape)})"


@dataclass(frozen=True)
class Dt:
    """A dtype by name (``float64``...)."""

    name: str


@dataclass(frozen=True)
class Hk:
    """A tensor hook: records that it ran (and the gradient it saw), optionally scales it."""

    name: str
    scale: float | None = None


@dataclass
class Stmt:
    """One statement. ``kind`` is one of: leaf, method, func, attr, binop, iop, getitem,
    setitem, block, loss, backward, grad. ``out`` names the variables it binds; for a block,
    ``fn`` is the grad-mode context and ``body`` its statements."""

    kind: str
    out: tuple = ()
    fn: str = ""
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    body: list | None = None
    guards: tuple = ()
    view: bool = False      # the result's layout is PyTorch's to guarantee (a view op)
    seq: bool = False       # the call returns a sequence, unpacked into ``out``
    extra: dict = field(default_factory=dict)


@dataclass
class Program:
    """A generated program; ``mode`` 'rev' runs it plainly, 'fwd' under a forward-AD level
    with dual leaves."""

    seed: int
    stmts: list
    mode: str = "rev"


TAIL = ("loss", "backward", "grad")
# torch lacking forward AD; the last: torch's formula reads a non-differentiable input's primal
# without unpacking it (binary_cross_entropy_with_logits with a dual pos_weight and input), so
# the tangent it sets is itself dual; ember ignores that input's tangent, as torch's
# derivatives do where it does not fail
FWD_UNSUPPORTED = ("Trying to use forward AD with", "does not support forward AD",
                   "not implemented for forward AD",
                   "Setting a forward grad that itself has a forward gradient")
MUTATING_METHODS = ("retain_grad", "register_hook", "requires_grad_", "detach_")
BINOPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "**": operator.pow, "@": operator.matmul, ">": operator.gt, "<": operator.lt,
          "//": operator.floordiv, "%": operator.mod, "&": operator.and_, "|": operator.or_,
          "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift}
# a Python number or NumPy scalar operand (PyTorch treats NumPy scalars as Python numbers)
NUM = (int, float, complex, np.generic)
NN = "nn.functional."     # the prefix of a func statement calling torch.nn.functional
IOPS = {"+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv}


def is_mutating(s: Stmt) -> bool:
    """Whether the statement writes into its first argument (an in-place method, ``x += y``,
    ``x[i] = y``, or an nn.functional call with ``inplace=True`` or named ``relu_``...)."""
    return s.kind in ("iop", "setitem") or s.kind == "method" and (
        s.fn.endswith("_") or s.fn in MUTATING_METHODS) or s.kind == "func" and (
        s.kwargs.get("inplace") is True or s.fn.startswith(NN) and s.fn.endswith("_"))


def written(s: Stmt) -> list:
    """The variables a statement writes into: its in-place target, and the arguments named in
    ``extra['writes']`` (batch_norm's running statistics, embedding's renormed weight)."""
    out = [s.args[0].name] if is_mutating(s) else []
    for k in s.extra.get("writes", ()):
        a = s.args[k] if isinstance(k, int) else s.kwargs.get(k)
        if isinstance(a, V) and a.name not in out:
            out.append(a.name)
    return out


def is_advanced(idx) -> bool:
    items = idx if isinstance(idx, tuple) else (idx,)
    return any(isinstance(i, (D, list, V)) for i in items)


def label(s: Stmt) -> str:
    """A short name for what a statement does (used to group disagreements)."""
    k = s.kind
    if k in ("method", "func"):
        return s.fn
    if k == "attr":
        return "." + s.fn
    if k == "binop":
        return s.fn
    if k == "iop":
        return s.fn + "="
    if k == "getitem":
        return "[adv]" if is_advanced(s.args[1]) else "[]"
    if k == "setitem":
        return "[adv]=" if is_advanced(s.args[1]) else "[]="
    if k == "grad":
        return s.fn
    if k == "backward":
        return "backward(inputs)" if "inputs" in s.kwargs else "backward"
    return k


def walk(stmts, path=()):
    """Every statement with its path (indices through blocks), in program order."""
    for i, s in enumerate(stmts):
        yield path + (i,), s
        if s.kind == "block":
            yield from walk(s.body, path + (i,))


def names_in(a) -> set:
    if isinstance(a, V):
        return {a.name}
    if isinstance(a, (tuple, list)):
        r = set()
        for x in a:
            r |= names_in(x)
        return r
    return set()


def uses(s: Stmt) -> set:
    return names_in(s.args) | names_in(tuple(s.kwargs.values()))


# --------------------------------------------------------------------------------------------
# printing a program as Python


def dtype_name(t) -> str:
    return str(t.dtype).split(".")[-1]


def _const_src(a: np.ndarray) -> str:
    dt = a.dtype.name
    if a.size == 0:
        return f"torch.empty({tuple(a.shape)}, dtype=torch.{dt})"
    return f"torch.tensor({a.tolist()!r}, dtype=torch.{dt})"


def src(a, index: bool = False) -> str:
    """Python source for one argument."""
    if isinstance(a, V):
        return a.name
    if isinstance(a, D):
        return _const_src(a.a)
    if isinstance(a, Dt):
        return f"torch.{a.name}"
    if isinstance(a, Hk):
        return f"hook_{a.name}"
    if isinstance(a, slice):
        parts = ["" if p is None else repr(p) for p in (a.start, a.stop, a.step)]
        if index:
            return ":".join(parts[:2]) + (f":{parts[2]}" if a.step is not None else "")
        return f"slice({a.start!r}, {a.stop!r}, {a.step!r})"
    if a is Ellipsis:
        return "..."
    if isinstance(a, tuple):
        inner = ", ".join(src(x, index) for x in a)
        if index:
            return inner if len(a) != 1 else inner + ","
        return f"({inner}{',' if len(a) == 1 else ''})"
    if isinstance(a, list):
        return "[" + ", ".join(src(x) for x in a) + "]"
    return repr(a)


def _call_src(s: Stmt) -> str:
    args = [src(a) for a in s.args]
    kws = [f"{k}={src(v)}" for k, v in s.kwargs.items()]
    if s.kind == "method":
        return f"{args[0]}.{s.fn}({', '.join(args[1:] + kws)})"
    fn = "torch.autograd.grad" if s.kind == "grad" else f"torch.{s.fn}"
    return f"{fn}({', '.join(args + kws)})"


def _lhs(s: Stmt) -> str:
    if not s.out:
        return ""
    if s.seq and len(s.out) == 1:
        return f"{s.out[0]}, = "
    return ", ".join(s.out) + " = "


SEGFAULT_NOTE = ("torch 2.13 segfaults in register_hook on a view whose base was modified "
                 "in place unless grad_fn was read first")


def stmt_src(s: Stmt, mode: str) -> str:
    """One statement (not a block) as a line of Python."""
    k = s.kind
    if k == "method" and s.fn == "register_hook":
        return f"{src(s.args[0])}.grad_fn  # {SEGFAULT_NOTE}\n" + _call_src(s)
    if k == "leaf":
        a = s.args[0].a
        dt = s.kwargs["dtype"].name
        if mode == "fwd":
            p = _const_src(a)
            return (f"{s.out[0]} = fwAD.make_dual({p}, {_const_src(s.extra['tan'])})"
                    if s.extra.get("dual") else f"{s.out[0]} = {p}")
        rg = s.kwargs.get("requires_grad", False)
        if a.size == 0:
            return f"{s.out[0]} = torch.empty({tuple(a.shape)}, dtype=torch.{dt}, " \
                   f"requires_grad={rg})"
        return f"{s.out[0]} = torch.tensor({a.tolist()!r}, dtype=torch.{dt}, requires_grad={rg})"
    if k in ("method", "func", "grad"):
        return _lhs(s) + _call_src(s)
    if k == "attr":
        return f"{s.out[0]} = {src(s.args[0])}.{s.fn}"
    if k == "binop":
        return f"{s.out[0]} = {src(s.args[0])} {s.fn} {src(s.args[1])}"
    if k == "iop":
        return f"{src(s.args[0])} {s.fn}= {src(s.args[1])}"
    if k == "getitem":
        return f"{s.out[0]} = {src(s.args[0])}[{src(s.args[1], True)}]"
    if k == "setitem":
        return f"{src(s.args[0])}[{src(s.args[1], True)}] = {src(s.args[2])}"
    if k == "loss":
        return f"{s.out[0]} = " + " + ".join(f"term({a.name})" for a in s.args)
    if k == "backward":
        kws = ", ".join(f"{k}={src(v)}" for k, v in s.kwargs.items())
        return f"{src(s.args[0])}.backward({kws})"
    raise ValueError(k)


def _ctx_src(s: Stmt) -> str:
    args = ", ".join(repr(a) for a in s.args)
    return f"with torch.{s.fn}({args}):"


HEADER = '''import numpy as np
import torch
from torch.autograd import forward_ad as fwAD


def w(t):  # fixed weights reducing an output to the loss
    a = (np.arange(t.numel()) % 5 - 2.3).reshape(tuple(t.shape))
    if t.is_complex():
        a = a * (1 + 0.5j)
    return torch.tensor(a, dtype=t.dtype)


def term(t):  # one output's part of the loss (a complex output's real part)
    return (t * w(t)).real.sum() if t.is_complex() else (t * w(t)).sum()


log = []
'''


def _hooks(stmts) -> list:
    out = []
    for _, s in walk(stmts):
        for a in s.args:
            if isinstance(a, Hk):
                out.append(a)
    return out


def to_source(prog: Program, probe: tuple | None = None) -> str:
    """The program as a Python snippet runnable against torch (or ember, renamed). ``probe``:
    (path, expression) printed right after the statement at ``path`` (None: at the end)."""
    lines = [HEADER]
    for h in _hooks(prog.stmts):
        ret = f"g * {h.scale!r}" if h.scale is not None else "None"
        lines.append(f"def hook_{h.name}(g):\n    log.append(('{h.name}', g))\n"
                     f"    return {ret}\n\n")
    body: list = []
    ind = "    " if prog.mode == "fwd" else ""
    if prog.mode == "fwd":
        body.append("with fwAD.dual_level():")

    def emit(stmts, path, depth):
        for i, s in enumerate(stmts):
            p = path + (i,)
            pad = ind + "    " * depth
            if s.kind == "block":
                body.append(pad + _ctx_src(s))
                if not s.body:
                    body.append(pad + "    pass")
                emit(s.body, p, depth + 1)
            else:
                body.extend(pad + line for line in stmt_src(s, prog.mode).split("\n"))
            if probe is not None and probe[0] == p:
                body.append(pad + f"print({probe[1]})")

    emit(prog.stmts, (), 0)
    if probe is not None and probe[0] is None:
        body.append(ind + f"print({probe[1]})")
    return "".join(lines) + "\n".join(body) + "\n"


# --------------------------------------------------------------------------------------------
# the interpreter


class _Stop(Exception):
    """ember reached the statement where torch raised: the program ends there."""


AS_STRIDED_OOB = "fuzzer: ember's as_strided would view memory outside its storage"


def _ember_as_strided_bounds(s: Stmt, run: "Run") -> None:
    """NumPy does not bounds-check as_strided, so an out-of-bounds request in ember reads and
    later writes outside its buffer (heap corruption that kills the fuzzer). Refuse it here
    with a marked message, so the disagreement is reported instead."""
    from ember._tensor import _root
    t = run.val(s.args[0])
    size, stride = s.args[1], s.args[2]
    off = s.args[3] if len(s.args) > 3 else t.storage_offset()
    if any(n == 0 for n in size):
        return
    need = off + sum((n - 1) * st for n, st in zip(size, stride)) + 1
    # (the storage counted in t's elements: a real/imag/view_as_real view of a complex buffer
    # has twice as many as its root array)
    if need > _root(t._data).nbytes // t._data.itemsize:
        raise RuntimeError(AS_STRIDED_OOB)


class Invalid(Exception):
    """The program left PyTorch's comfortable region (a guard failed, a value blew up): not a
    meaningful test, so it is dropped (generation) or rejected (minimisation)."""


def weights(shape: tuple, dt: str) -> np.ndarray:
    """The loss weights ``w(t)`` of the printed header, as NumPy data."""
    n = int(np.prod(shape)) if shape else 1
    a = (np.arange(n) % 5 - 2.3).reshape(shape)
    if dt.startswith("complex"):
        a = a * (1 + 0.5j)
    return a.astype(dt)


def to_np(t):
    """A tensor's values as a NumPy copy (either library)."""
    # force: ZeroTensors, conj/neg views, grads
    if isinstance(t, torch.Tensor):
        # through a clone: numpy() on the tensor itself would mark its storage not resizable
        # (torch then refuses to resize it as an out= argument)
        with torch.no_grad():
            return t.detach().clone().numpy(force=True).copy()
    return np.array(t.numpy(force=True), copy=True)


def _norm_msg(msg: str) -> str:
    return msg.replace("torch.", "ember.").replace("torch::", "ember::")


def _raised(ex: BaseException) -> tuple:
    return ("raise", type(ex).__name__, _norm_msg(str(ex)))


def _try(f):
    try:
        return f()
    except Exception as ex:  # noqa: BLE001 - any exception is an observation
        return _raised(ex)


def _stride_obs(t) -> tuple:
    if t.numel() == 0:
        return ()
    st = tuple(s if n > 1 else None for s, n in zip(t.stride(), t.shape))
    return st, t.storage_offset()


class Run:
    """One execution of a program against module ``M``. ``check`` (torch only) evaluates the
    statements' guards and sanity of results; ``observe`` records events to compare."""

    def __init__(self, M, mode: str = "rev", check: bool = False, observe: bool = True,
                 stop: tuple | None = None):
        self.M = M
        self.stop = stop   # the path of the statement where torch raised: go no further
        self.mode = mode
        self.check = check
        self.observe = observe
        self.env: dict = {}
        self.order: list = []
        self.layout: dict = {}
        self.viewop: dict = {}
        self.log: list = []
        self.events: list = []
        self.raised = None
        self.ctx: list = []
        self.tail_names: set = set()
        self.cur_path, self.cur_where = (), ""
        self.fw = M.autograd.forward_ad

    # ---- values
    def const(self, a: np.ndarray, dt: str | None = None):
        return self.M.tensor(a, dtype=getattr(self.M, dt or a.dtype.name))

    def val(self, a):
        if isinstance(a, V):
            return self.env[a.name]
        if isinstance(a, D):
            return self.const(a.a)
        if isinstance(a, Dt):
            return getattr(self.M, a.name)
        if isinstance(a, Hk):
            return self.hook(a)
        if isinstance(a, tuple):
            return tuple(self.val(x) for x in a)
        if isinstance(a, list):
            return [self.val(x) for x in a]
        return a

    def hook(self, hk: Hk):
        log, gobs = self.log, self.gobs

        def h(g):
            log.append((hk.name, _try(lambda: gobs(g))))
            return g * hk.scale if hk.scale is not None else None
        return h

    # ---- observations
    def obs(self, name: str) -> dict:
        t = self.env[name]
        if not isinstance(t, self.M.Tensor):
            return {"py": repr(t)}
        o = {"shape": tuple(t.shape), "dtype": dtype_name(t),
             "rg": _try(lambda: t.requires_grad), "leaf": _try(lambda: t.is_leaf),
             "fn": SKIP if self.internal_view(name, t) else _try(
                 lambda: None if t.grad_fn is None
                 else t.grad_fn.name().replace("torch::", "ember::")),
             "inf": _try(t.is_inference), "val": _try(lambda: to_np(t))}
        if self.layout.get(name):
            o["stride"] = _try(lambda: _stride_obs(t))
        if self.mode == "fwd":
            o["tan"] = _try(lambda: self.gobs(self.fw.unpack_dual(t).tangent))
        return o

    def internal_view(self, name: str, t) -> bool:
        """A torch result that is a view though no view op made it (matmul returns one): its
        grad_fn after an in-place op is an implementation detail (AsStridedBackward0)."""
        return self.M is torch and not self.viewop.get(name, True) and _try(t._is_view) is True

    def regenerated(self, name: str, t) -> bool:
        """A torch result that is internally a view and was changed in place: its grad_fn was
        regenerated (AsStridedBackward0), and a retain_grad hook on it stays with the old one
        (its .grad stays None), an implementation detail of torch's view machinery."""
        return self.internal_view(name, t) and "AsStrided" in str(_try(
            lambda: t.grad_fn.name()))

    def gobs(self, g):
        """A gradient or tangent: None, or (shape, dtype, values)."""
        if g is None:
            return None
        if not isinstance(g, self.M.Tensor):
            return ("py", repr(g))
        return (tuple(g.shape), dtype_name(g), to_np(g))

    def emit(self, kind: str, path, s: Stmt, name, o) -> None:
        if self.observe:
            self.events.append((kind, path, self.where(s), name, o))

    def where(self, s: Stmt) -> str:
        return "|".join(self.ctx + [label(s)])

    # ---- execution
    def run(self, stmts) -> "Run":
        M = self.M
        M.set_grad_enabled(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lvl = self.fw.dual_level() if self.mode == "fwd" else contextlib.nullcontext()
            with lvl:
                self._run_all(stmts)
        return self

    def _run_all(self, stmts) -> None:
        try:
            for i, s in enumerate(stmts):
                self.exec(s, (i,))
        except _Stop:
            return
        except Invalid:
            raise
        except Exception as ex:  # noqa: BLE001 - the program stops where torch/ember raised
            self.raised = ex
            if self.observe:
                self.events.append(("raise",) + (self.cur_path, self.cur_where, None,
                                                  _raised(ex)))
            return
        if self.observe:
            self.final()

    def final(self) -> None:
        for name in self.order:
            if name not in self.tail_names:
                self.emit("final", None, Stmt("final"), name, self.obs(name))
        self.emit("hooks", None, Stmt("hooks"), None, list(self.log))

    def exec(self, s: Stmt, path: tuple) -> None:
        self.cur_path, self.cur_where = path, self.where(s)
        if s.kind == "block":
            self.ctx.append(s.fn + (f"({s.args[0]})" if s.args else ""))
            try:
                with self.make_ctx(s):
                    for i, b in enumerate(s.body):
                        self.exec(b, path + (i,))
            finally:
                self.ctx.pop()
            return
        if self.check:
            check_guards(s, self)
        elif s.fn == "as_strided" and self.M is ember:
            _ember_as_strided_bounds(s, self)
        v0 = self.version(s)
        res = self.call(s)
        self.bind(s, res)
        if s.kind in TAIL:
            self.tail_names.update(s.out)
        if self.check and s.kind not in TAIL:
            self.sane(s)
        if self.observe:
            self.observe_stmt(s, path, v0)
        if path == self.stop:
            raise _Stop

    def version(self, s: Stmt):
        """The in-place targets' versions before the statement: only how much an in-place
        statement bumps it is compared (a fresh result's version is torch's internal affair:
        matmul, for one, squeezes its result in place)."""
        return {n: _try(lambda n=n: self.env.get(n)._version) for n in written(s)}

    def make_ctx(self, s: Stmt):
        M = self.M
        if s.fn == "set_grad_enabled":
            return M.set_grad_enabled(*s.args)
        return getattr(M, s.fn)(*s.args)

    def bind(self, s: Stmt, res) -> None:
        if not s.out:
            return
        if s.seq:
            vals = list(res)
            if len(vals) != len(s.out):
                raise ValueError(f"expected {len(s.out)} values to unpack, got {len(vals)}")
        else:
            vals = [res]
        for n, v in zip(s.out, vals):
            if n not in self.env:
                self.order.append(n)
            self.env[n] = v
            self.layout[n] = self.layout_of(s)
            self.viewop[n] = s.view or s.kind == "leaf"
            if s.args and isinstance(s.args[0], V) and (
                    s.fn == "contiguous" or s.view and v is self.env.get(s.args[0].name)):
                # contiguous() may return its input itself, and so does a view op that has
                # nothing to do (torch's flatten(d, d)): a view exactly when that was one
                self.viewop[n] = self.viewop.get(s.args[0].name, True)

    def layout_of(self, s: Stmt) -> bool:
        if s.kind == "leaf":
            return True
        if not s.view:
            return False
        return all(self.layout.get(n, False) for n in uses(s))

    def call(self, s: Stmt):
        k = s.kind
        if k == "leaf":
            return self.leaf(s)
        args = [self.val(a) for a in s.args]
        kw = {n: self.val(v) for n, v in s.kwargs.items()}
        if k == "method":
            if s.fn == "register_hook":
                _try(lambda: args[0].grad_fn)   # see SEGFAULT_NOTE
            return getattr(args[0], s.fn)(*args[1:], **kw)
        if k == "func":
            f = self.M
            for part in s.fn.split("."):
                f = getattr(f, part)
            return f(*args, **kw)
        if k == "attr":
            return getattr(args[0], s.fn)
        if k == "binop":
            return BINOPS[s.fn](args[0], args[1])
        if k == "iop":
            self.env[s.args[0].name] = IOPS[s.fn](args[0], args[1])
            return None
        if k == "getitem":
            return args[0][args[1]]
        if k == "setitem":
            args[0][args[1]] = args[2]
            return None
        if k == "loss":
            return self.loss(args)
        if k == "backward":
            args[0].backward(**kw)
            return None
        if k == "grad":
            return self.M.autograd.grad(args[0], args[1], **kw)
        raise ValueError(k)

    def leaf(self, s: Stmt):
        dt = s.kwargs["dtype"].name
        p = self.const(s.args[0].a, dt)
        if self.mode == "fwd":
            if s.extra.get("dual"):
                return self.fw.make_dual(p, self.const(s.extra["tan"], dt))
            return p
        if s.kwargs.get("requires_grad"):
            p.requires_grad_()
        return p

    def loss(self, roots):
        total = None
        for t in roots:
            w = self.const(weights(tuple(t.shape), dtype_name(t)))
            term = (t * w).real.sum() if t.is_complex() else (t * w).sum()
            total = term if total is None else total + term
        return total

    def observe_stmt(self, s: Stmt, path, v0=None) -> None:
        if s.kind == "backward":
            for n in self.order:
                t = self.env[n]
                if isinstance(t, self.M.Tensor):
                    self.emit("grad", path, s, n, SKIP if self.regenerated(n, t)
                              else _try(lambda: self.gobs(t.grad)))
            return
        if s.kind in ("grad", "loss"):
            for n in s.out:
                self.emit("gout", path, s, n, _try(lambda: self.gobs(self.env[n])))
            return
        for n in s.out:
            self.emit("out", path, s, n, self.obs(n))
        for n in written(s):
            o = self.obs(n)
            v1, v = _try(lambda: self.env[n]._version), (v0 or {}).get(n)
            o["ver"] = v1 - v if isinstance(v, int) and isinstance(v1, int) else (v, v1)
            self.emit("target", path, s, n, o)

    def sane(self, s: Stmt) -> None:
        names = list(s.out) + written(s)
        for n in names:
            t = self.env[n]
            if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()):
                a = to_np(t)
                if a.size and not (np.isfinite(a).all() and np.abs(a).max() <= 1e4):
                    raise Invalid(f"{n} not finite or too large")
                if self.mode == "fwd":
                    tan = self.fw.unpack_dual(t).tangent
                    if tan is not None and tan.dtype != t.dtype:
                        # torch's quirk: an in-place op from a dual of another dtype into a
                        # tensor without a tangent leaves the tangent uncast (float64 or complex
                        # on a float32 tensor; ember's has the primal's dtype): later values and
                        # errors would echo it
                        raise Invalid(f"{n}: torch's tangent dtype is not its primal's")


# --------------------------------------------------------------------------------------------
# guards: data away from non-differentiable points (checked on torch's values)

EPS = 0.05


def _arg(s: Stmt, run: Run, ref):
    x = run.val(s.args[ref] if isinstance(ref, int) else s.kwargs[ref])
    if isinstance(x, torch.Tensor):
        return to_np(x)
    return np.asarray(x)


def _distinct(a: np.ndarray, dim) -> bool:
    if a.dtype.kind == "c":
        return False
    if a.size == 0:
        return True
    if dim is None:
        a = a.reshape(-1)
        dim = 0
    if a.ndim == 0:
        return True
    s = np.sort(a, axis=dim)
    return bool((np.diff(s, axis=dim) > 1e-3).all())


def guard_ok(g: tuple, s: Stmt, run: Run) -> bool:
    kind = g[0]
    a = _arg(s, run, g[1])
    if kind == "pos":
        return a.dtype.kind != "c" and bool((a > g[2]).all())
    if kind == "nz":
        return bool((np.abs(a) > g[2]).all())
    if kind == "away":
        return a.dtype.kind != "c" and all(bool((np.abs(a - p) > EPS).all()) for p in g[2])
    if kind == "range":
        return a.dtype.kind != "c" and bool(((a > g[2]) & (a < g[3])).all())
    if kind == "distinct":
        return _distinct(a, g[2])
    if kind == "apart":
        b = _arg(s, run, g[2])
        return bool((np.abs(a - b) > EPS).all())
    if kind == "cut":   # principal branch cut of log/sqrt/pow: the non-positive real axis
        if a.dtype.kind != "c":
            return bool((a > 0.1).all())
        return bool(((np.abs(a) > 0.1) & ((a.real > 0.05) | (np.abs(a.imag) > 0.05))).all())
    if kind in NN_GUARDS:
        if a.dtype.kind not in "fc":
            return True
        try:
            return bool(NN_GUARDS[kind](a, g, s, run))
        except (ValueError, IndexError, np.exceptions.AxisError):
            return True   # arguments torch will refuse: its error is the observation
    raise ValueError(kind)


# ---- guards of the nn.functional family


def _g_diffaway(a, g, s, run) -> bool:
    """``a - b`` away from the points in g[3] (l1 at 0, smooth_l1 at +-beta)."""
    d = a - _arg(s, run, g[2])
    return all(bool((np.abs(d - p) > EPS).all()) for p in g[3])


def _g_spread(a, g, s, run) -> bool:
    """The groups a normalisation divides by their spread are not (nearly) constant: a tiny
    variance multiplies rounding differences by 1/sqrt(var + eps). Modes: ('last', k) the last
    k dims (layer_norm), ('group', G) per sample and group, ('channel',) per channel over the
    batch (batch_norm in training), ('rms', k) the root mean square of the last k dims."""
    mode, k = g[2], g[3]
    if mode in ("last", "rms"):
        rows = a.reshape((-1, int(np.prod(a.shape[a.ndim - k:])))) if k else a.reshape(-1, 1)
    elif mode == "group":
        rows = a.reshape((a.shape[0] * k, -1))
    else:
        rows = np.moveaxis(a, 1, 0).reshape((a.shape[1], -1))
    if rows.size == 0:
        return True
    if mode == "rms":
        return bool((np.mean(np.abs(rows) ** 2, axis=1) > 0.01).all())
    if rows.shape[1] < 2:
        # one value per group: its output is 0 (plus bias) up to rounding that 1/sqrt(eps)
        # magnifies; batch_norm in training refuses it (an error worth comparing)
        return mode == "channel"
    return bool((np.var(rows, axis=1) > 0.01).all())


def _g_norm(a, g, s, run) -> bool:
    """The 2-norm along dim g[2] is not small (normalize, cosine_similarity)."""
    return bool((np.sqrt(np.sum(np.abs(a) ** 2, axis=g[2])) > 0.1).all()) if a.ndim \
        else abs(float(a)) > 0.1


def _g_pool(a, g, s, run) -> bool:
    """max pooling: in every window the largest element leads the runner-up by more than
    1e-3 (a tie would leave the gradient's routing to the kernel's loop order). g[2:] =
    kernel, stride, padding, dilation (tuples over the spatial dims), ceil_mode."""
    k, st, pad, dil, ceil = g[2:7]
    nsp = len(k)
    sp = a.shape[a.ndim - nsp:]
    outs = []
    for n, kk, ss, pp, dd in zip(sp, k, st, pad, dil):
        span = n + 2 * pp - dd * (kk - 1) - 1
        o = (-(-span // ss) if ceil else span // ss) + 1
        if ceil and (o - 1) * ss >= n + pp:
            o -= 1
        outs.append(o)
    if min(outs, default=1) < 1 or a.size == 0:
        return True
    flat = a.reshape((-1,) + tuple(sp))
    for idx in np.ndindex(*outs):
        coords = []
        for j in range(nsp):
            c = idx[j] * st[j] - pad[j] + np.arange(k[j]) * dil[j]
            coords.append(c[(c >= 0) & (c < sp[j])])
        win = flat[(slice(None),) + np.ix_(*coords)].reshape(flat.shape[0], -1)
        if win.shape[1] >= 2:
            top = np.sort(win, axis=1)
            if not (top[:, -1] - top[:, -2] > 1e-3).all():
                return False
    return True


def _g_bn_layout(a, g, s, run) -> bool:
    """torch 2.13's CPU batch_norm backward, with one value per sample and channel (a 2-D
    input, or spatial size 1), reads the weight and the running statistics as if contiguous:
    a strided or expanded one gives wrong input and weight gradients (ember's are right;
    torch's forward and its backward for larger spatial sizes agree with them)."""
    stats = [run.val(r) for r in s.args[1:3] if r is not None]
    others = [run.val(r) for r in (s.args[0], s.kwargs.get("weight"), s.kwargs.get("bias"))
              if r is not None]
    if s.kwargs.get("training") and any(_shares(a_, b_) for a_ in stats for b_ in others):
        # running statistics sharing memory with the input or the affine parameters: torch's
        # kernel updates them before it reads those (ember after): no contract
        return False
    if a.ndim > 2 and int(np.prod(a.shape[2:])) != 1:
        return True
    vals = stats + others[1:]
    return all(not isinstance(t, torch.Tensor) or t.is_contiguous() for t in vals)


NN_GUARDS = {"diffaway": _g_diffaway, "spread": _g_spread, "norm": _g_norm, "pool": _g_pool,
             "bn_layout": _g_bn_layout}


def check_guards(s: Stmt, run: Run) -> None:
    for g in s.guards:
        if not guard_ok(g, s, run):
            raise Invalid(f"guard {g} failed")
    if is_mutating(s) and _self_overlapping(run.env.get(s.args[0].name)):
        # PyTorch: writing in place into a tensor whose elements overlap in memory (an
        # as_strided view) is undefined; its kernels' loop order decides values and tangents
        raise Invalid("in-place write into a self-overlapping view")
    if _undetected_overlap(s, run):
        raise Invalid("partial overlap PyTorch does not detect: undefined result")
    if s.fn in OUT_REDUCE and "out" in s.kwargs and _shares(run.val(s.kwargs["out"]),
                                                            run.val(s.args[0])):
        # torch's reductions do not check out= against their input: they resize and fill out
        # first, then read it as input (pytorch/pytorch#1930, #5260): garbage, no contract
        raise Invalid("reduction out= aliasing its input")
    if is_mutating(s) and torch.is_inference_mode_enabled() and _real_view_of_complex(
            run.env.get(s.args[0].name)):
        # torch fails its own internal assert (new_fn, variable.cpp) reading the grad_fn of a
        # .real/.imag view written in inference mode, and its graph through that view is
        # broken afterwards (gradients None); no issue found upstream. ember keeps the view's
        # history as for any other view written in inference mode (AsStridedBackward0).
        raise Invalid("in-place on a real/imag view in inference mode")
    if run.mode == "fwd" and s.fn == "logcumsumexp" and _empty_arg(s, run):
        # torch's forward AD of logcumsumexp takes a max over the scanned dim and raises
        # IndexError on an empty input (no upstream issue found); ember's tangent is empty
        raise Invalid("torch's logcumsumexp tangent of an empty input")
    if run.mode == "fwd" and _pow_real_to_complex(s, run):
        # torch's forward AD of pow reuses the reverse formula, whose projection onto a real
        # input drops the imaginary part of the tangent of a complex result from a real
        # operand (pytorch/pytorch#185639; ember's tangent is the true derivative)
        raise Invalid("torch's pow tangent from a real operand to a complex result")
    if run.mode == "fwd" and is_mutating(s) and _aliases_target(s, run):
        # torch's forward AD of an in-place op reads the operand after the write when the
        # operand is (a view of) the target: x.mul_(x) gets tangent x_t*x_new + x_t*x_old
        raise Invalid("in-place operand aliases its target")


def _dense(t) -> bool:
    """PyTorch's is_non_overlapping_and_dense: contiguous in some order of the dims."""
    dims = sorted((st, n) for n, st in zip(t.shape, t.stride()) if n != 1)
    expected = 1
    for st, n in dims:
        if st != expected:
            return False
        expected *= n
    return True


def _addresses(t) -> np.ndarray:
    offs = np.full((), t.storage_offset(), np.int64)
    for n, st in zip(t.shape, t.stride()):
        offs = np.add.outer(offs, np.arange(n) * st)
    return np.unique(offs) * t.element_size()


def _written_and_read(s: Stmt, run: Run):
    """The tensor a statement writes into (in place or out=) and the tensors it reads."""
    if s.kind in ("func", "method") and "out" in s.kwargs:
        tgt = run.val(s.kwargs["out"])
        srcs = list(s.args) + [v for k, v in s.kwargs.items() if k != "out"]
    elif is_mutating(s) and s.kind in ("iop", "setitem", "method"):
        tgt = run.env.get(s.args[0].name)
        srcs = list(s.args[2:] if s.kind == "setitem" else s.args[1:]) + list(s.kwargs.values())
    else:
        return None, []
    vals = [run.val(a) for a in srcs if isinstance(a, V)]
    return tgt, [v for v in vals if isinstance(v, torch.Tensor)]


def _undetected_overlap(s: Stmt, run: Run) -> bool:
    """A write whose source partly overlaps its destination where PyTorch's overlap check
    gives up (either is not dense: get_overlap_status says TOO_HARD): PyTorch neither raises
    nor defines the result (its loop order decides), so there is nothing to compare."""
    tgt, srcs = _written_and_read(s, run)
    if not isinstance(tgt, torch.Tensor) or tgt.numel() == 0:
        return False
    ptr = tgt.untyped_storage().data_ptr()
    for x in srcs:
        if x is tgt or x.numel() == 0 or x.untyped_storage().data_ptr() != ptr:
            continue
        same = (x.data_ptr(), tuple(x.shape), x.stride()) == (
            tgt.data_ptr(), tuple(tgt.shape), tgt.stride())
        if same or (_dense(tgt) and _dense(x)):
            continue
        if np.intersect1d(_addresses(tgt), _addresses(x)).size:
            return True
    return False


def _empty_arg(s: Stmt, run: Run) -> bool:
    x = run.val(s.args[0])
    return isinstance(x, torch.Tensor) and x.numel() == 0


def _shares(a, b) -> bool:
    return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
            and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())


def _real_view_of_complex(t) -> bool:
    return (isinstance(t, torch.Tensor) and t._is_view() and not t.is_complex()
            and t._base.is_complex() and t.requires_grad)


def _pow_real_to_complex(s: Stmt, run: Run) -> bool:
    """pow with a complex operand and a real tensor operand (a complex result)."""
    if not (s.fn in ("**", "pow", "pow_") and s.kind in ("binop", "method", "func")):
        return False
    vals = [run.val(a) for a in s.args[:2]]
    cplx = any(isinstance(v, complex) or isinstance(v, torch.Tensor) and v.is_complex()
               for v in vals)
    real = any(isinstance(v, torch.Tensor) and v.is_floating_point() for v in vals)
    return cplx and real


def _self_overlapping(t) -> bool:
    """Whether two elements of tensor ``t`` share a memory location (stride-0 expands are
    not counted: PyTorch detects and refuses or handles those itself)."""
    if not isinstance(t, torch.Tensor) or t.numel() < 2 or 0 in t.stride():
        return False
    offs = np.zeros((), np.int64)
    for n, st in zip(t.shape, t.stride()):
        offs = np.add.outer(offs, np.arange(n) * st)
    return len(np.unique(offs)) < t.numel()


def _aliases_target(s: Stmt, run: Run) -> bool:
    tgt = run.env.get(s.args[0].name)
    if not isinstance(tgt, torch.Tensor):
        return False
    ptr = tgt.untyped_storage().data_ptr()
    for a in list(s.args[1:]) + list(s.kwargs.values()):
        x = run.val(a) if isinstance(a, V) else None
        if isinstance(x, torch.Tensor) and x.untyped_storage().data_ptr() == ptr:
            return True
    return False


# --------------------------------------------------------------------------------------------
# comparing two runs


@dataclass
class Finding:
    """One disagreement: ``kind`` says what differed, ``where`` the statement (with its enclosing
    grad modes) or phase, ``name`` the variable."""

    phase: str
    kind: str
    where: str
    name: str | None
    path: tuple | None
    torch: object
    ember: object

    @property
    def key(self) -> tuple:
        return (self.phase, self.kind, self.where)

    def describe(self) -> str:
        note = known(self)
        return (f"[{self.phase}] {self.kind} at {self.where}"
                + (f" -- known, {note}" if note else "")
                + (f" ({self.name})" if self.name else "")
                + f"\n  torch: {_short(self.torch)}\n  ember: {_short(self.ember)}")


def known(f: Finding) -> str | None:
    """A note when a disagreement is one that ember's README already lists."""
    return None


def _short(x, n: int = 600) -> str:
    with np.printoptions(precision=6, threshold=40):
        s = repr(x)
    return s if len(s) <= n else s[:n] + "..."


LOOSE = 2e-4   # float32 (and any float64 result computed from float32 data)
TIGHT = 1e-9


def _tol(a: np.ndarray, floor: float) -> float:
    return max(floor, TIGHT if a.dtype in (np.float64, np.complex128) else LOOSE)


def close(a, b, floor: float = TIGHT) -> bool:
    """Equal as observations: arrays within dtype tolerance, anything else exactly."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
            return False
        if a.dtype.kind not in "fc":
            return bool(np.array_equal(a, b))
        if a.size == 0:
            return True
        fin = np.abs(a[np.isfinite(a)])
        scale = max(1.0, float(fin.max()) if fin.size else 1.0)
        r = _tol(a, floor)
        with np.errstate(all="ignore"):
            return bool(np.allclose(b.astype(a.dtype), a, rtol=r, atol=r * scale,
                                    equal_nan=True))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(close(x, y, floor) for x, y in zip(a, b))
    return a == b


def _zeros_like_none(a, b) -> bool:
    """Double-backward results: None and an all-zero gradient say the same thing."""
    if a is None and b is None:
        return True
    x = b if a is None else a
    return isinstance(x, tuple) and len(x) == 3 and isinstance(x[2], np.ndarray) and \
        not np.any(x[2])


ORDER = ("py", "shape", "dtype", "rg", "leaf", "fn", "inf", "val", "ver", "stride", "tan")
# differences that cannot change any later value: comparison goes on past them
SOFT = ("leaf", "fn", "inf", "ver", "stride")
SKIP = "<not compared>"


def compare_obs(a, b, kind: str, where: str, floor: float = TIGHT) -> list:
    """The differing fields of two observations (torch's ``a``, ember's ``b``):
    [(field, torch's, ember's)]."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [(k, a[k], b.get(k)) for k in ORDER
                if k in a and not (isinstance(a[k], str) and a[k] == SKIP)
                and not _internal_assert(a[k]) and not close(a[k], b.get(k), floor)]
    if kind == "gout" and where.endswith("grad2") and _zeros_like_none(a, b):
        return []
    if isinstance(a, str) and a == SKIP:
        return []
    if not close(a, b, floor):
        return [("val", a, b)]
    return []


# torch failing where its contract says it should not: its own internal asserts, and in-place
# writes into the immutable ZeroTensor its sgn formulas return as a gradient or tangent (a
# second backward accumulating into it, an in-place op on a dual whose tangent it is:
# pytorch/pytorch#69855). ember has no ZeroTensor: its zeros are ordinary tensors.
# An undefined tensor reaching an op is torch's own bug too: layer_norm's double backward with
# weight=None and a bias (the gap noted in pytorch/pytorch#63276's OpInfo review).
INTERNAL = ("INTERNAL ASSERT", "Could this error message be improved", "ZeroTensors are immutable",
            "Expected a proper Tensor but got None (or an undefined Tensor")


def _internal_assert(x) -> bool:
    """Whether observation ``x`` is torch failing its own internal assert (a torch bug, e.g.
    reading ``is_leaf`` of a conj view changed in place in inference mode): no contract."""
    return (isinstance(x, tuple) and len(x) == 3 and x[0] == "raise"
            and any(m in str(x[2]) for m in INTERNAL))


def compare(te: list, ee: list, phase: str, floor: float = TIGHT) -> list:
    """The disagreements between torch's events ``te`` and ember's ``ee``, in program order:
    every metadata-only difference (grad_fn names, strides...) up to the first one that can
    change later values (then the rest would only echo it). One finding per key."""
    out: dict = {}
    for i in range(max(len(te), len(ee))):
        if i >= len(te) or i >= len(ee):
            x = te[i] if i < len(te) else ee[i]
            out.setdefault(("n",), Finding(phase, "event_count", x[2], x[3], x[1], len(te),
                                           len(ee)))
            break
        a, b = te[i], ee[i]
        if a[0] == "raise" or b[0] == "raise":
            f = _compare_raise(a, b, phase)
            if f is not None:
                out.setdefault(f.key, f)
            break
        if a[0] == "hooks":
            h = _compare_hooks(a[4], b[4], floor)
            if h:
                out.setdefault(h, Finding(phase, h, "hooks", None, None, a[4], b[4]))
            continue
        diffs = compare_obs(a[4], b[4], a[0], a[2], floor)
        for fld, x, y in diffs:
            f = Finding(phase, f"{a[0]}.{fld}", a[2], a[3], a[1], x, y)
            out.setdefault(f.key, f)
        if any(fld not in SOFT for fld, _, _ in diffs):
            break
        if isinstance(a[4], dict) and any(_internal_assert(v) for v in a[4].values()):
            break   # torch failed its own assert while observing: its state after is undefined
    return list(out.values())


_VERSION_NODE = re.compile(r"which is output (\d+) of AsStrided,")


_VERSIONS = re.compile(r"is at version (\d+); expected version (\d+) instead")


def _version_delta(msg: str) -> str:
    return _VERSIONS.sub(lambda m: f"is {int(m[1]) - int(m[2])} versions ahead", msg)


# (the type name has a dot: "ember.DoubleTensor"; only complex types' "CPUComplexFloatType" do not)
_SAVED_SHAPE = re.compile(r"\[([\w.]+) \[([\d, ]*)\]\]")


def _squeeze_shapes(msg: str) -> str:
    """The version error's saved-tensor shape without its size-1 dims: torch's einsum saves its
    operands as internally unsqueezed/permuted views (``[1, 3, 1]`` for a ``[1, 3]`` operand),
    an implementation detail."""
    return _SAVED_SHAPE.sub(lambda m: "[%s [%s]]" % (m.group(1), ", ".join(
        d for d in m.group(2).split(", ") if d and d != "1")), msg)


def _sorted_shapes(msg: str) -> str:
    """The version error's saved-tensor shape reduced to its number of elements: ember's linear
    is one node saving the weight and the input themselves where torch's addmm/mm save
    ``weight.t()`` and a folded 2-D view of an N-D input (their shapes in the message), a
    difference of node granularity."""
    return _SAVED_SHAPE.sub(lambda m: "[%s [%d]]" % (m.group(1), int(np.prod(
        [int(d) for d in m.group(2).split(", ") if d]))), msg)


def _same_error(a: tuple, b: tuple) -> bool:
    """Same exception type and message; in the version-counter error, torch's node name
    'AsStrided' for a tensor that is internally a view (a matmul result) is not compared, nor
    are the absolute versions, only how far the tensor moved: torch's reductions of an
    inference tensor return results already at version 1 or 2 (internal in-place steps)."""
    if a == b:
        return True
    if _VERSIONS.search(a[2]):
        a = a[:2] + (_squeeze_shapes(_version_delta(a[2])),) + a[3:]
        b = b[:2] + (_squeeze_shapes(_version_delta(b[2])),) + b[3:]
        if a == b or a[:2] == b[:2] and _sorted_shapes(a[2]) == _sorted_shapes(b[2]):
            return True
    if a[1] != b[1] or not _VERSION_NODE.search(a[2]):
        return False
    return _sorted_shapes(_VERSION_NODE.sub("", a[2])) == _sorted_shapes(
        re.sub(r"which is output (\d+) of [\w:]+,", "", b[2]))


def _compare_raise(a, b, phase: str) -> Finding | None:
    if a[0] == "raise" and any(m in a[4][2] for m in INTERNAL):
        return None   # torch's internal assert or ZeroTensor bug: no contract to copy
    if a[0] == "raise" and b[0] == "raise":
        if _same_error(a[4], b[4]):
            return None
        return Finding(phase, "error_mismatch", a[2], None, a[1], a[4][1:], b[4][1:])
    if a[0] == "raise":
        if phase == "fwd" and any(m in a[4][2] for m in FWD_UNSUPPORTED):
            return None   # ember supporting forward AD where torch lacks it is no bug
        return Finding(phase, "missing_error", a[2], None, a[1], a[4][1:], b[4])
    return Finding(phase, "ember_raised:" + b[4][1], b[2], None, b[1], a[4], b[4][1:])


def _compare_hooks(a: list, b: list, floor: float) -> str | None:
    # torch calls a hook with None where a fused double-backward node (group_norm's) passes an
    # undefined gradient for the tensor; ember's graph has no such edge: calls with None are
    # not compared (on either side, so that both calling with None is no disagreement)
    a = [x for x in a if x[1] is not None]
    b = [x for x in b if x[1] is not None]
    na, nb = [x[0] for x in a], [x[0] for x in b]
    if na != nb:
        return "hook_order" if sorted(na) == sorted(nb) else "hook_calls"
    for (_, ga), (_, gb) in zip(a, b):
        if not close(ga, gb, floor):
            return "hook_grad"
    return None


# --------------------------------------------------------------------------------------------
# running a program in both libraries

def run_torch(prog: Program, observe: bool = True) -> Run:
    """Run in torch with guards; raises Invalid when the program is not a meaningful test."""
    return Run(torch, prog.mode, check=True, observe=observe).run(prog.stmts)


def run_ember(prog: Program, stop: tuple | None = None) -> Run:
    r = Run(ember, prog.mode, check=False, observe=True, stop=stop)
    try:
        return r.run(prog.stmts)
    finally:
        with contextlib.suppress(Exception):
            ember.set_grad_enabled(True)


def check(prog: Program) -> list:
    """Run ``prog`` in both libraries: its disagreements (empty when none, or when the program
    is not a meaningful test in torch)."""
    try:
        rt = run_torch(prog)
    except Invalid:
        return []
    re_ = run_ember(prog, rt.cur_path if rt.raised is not None else None)
    return compare(rt.events, re_.events, prog.mode, tolerance(prog, rt.events))


def _has_f32(a) -> bool:
    if isinstance(a, D):
        return a.a.dtype in (np.float32, np.complex64)
    if isinstance(a, Dt):
        return a.name in ("float32", "complex64")
    if isinstance(a, (tuple, list)):
        return any(_has_f32(x) for x in a)
    return False


def tolerance(prog: Program, events: list = ()) -> float:
    """The relative tolerance floor: float32 data anywhere limits every result's precision,
    also where promotion made it (an integer tensor with a Python or NumPy float), so the torch
    run's observed dtypes count too."""
    for _, s in walk(prog.stmts):
        if _has_f32(s.args) or _has_f32(tuple(s.kwargs.values())) or s.fn == "float":
            return LOOSE
    for e in events:
        o = e[-1]
        if isinstance(o, dict) and o.get("dtype") in ("float32", "complex64"):
            return LOOSE
    return TIGHT


def fwd_variant(prog: Program) -> Program:
    """The same program for forward AD: leaves are dual (some of them) and do not require grad;
    backward, hooks, retain_grad and requires_grad_ are dropped."""
    drop = ("retain_grad", "register_hook", "requires_grad_")

    def tr(stmts):
        out = []
        for s in stmts:
            if s.kind in TAIL or s.kind == "method" and s.fn in drop:
                continue
            if s.kind == "block":
                s = replace(s, body=tr(s.body))
            elif s.kind == "leaf":
                s = replace(s, kwargs={**s.kwargs, "requires_grad": False})
            out.append(s)
        return out
    return Program(prog.seed, tr(prog.stmts), "fwd")


def check_seed(seed: int) -> list:
    """Generate program ``seed`` and check its reverse-mode and forward-mode runs:
    [(program, finding)]."""
    prog = generate(seed)
    return [(p, f) for p in (prog, fwd_variant(prog)) for f in check(p)]


# --------------------------------------------------------------------------------------------
# the generator

FLOAT = ("float32", "float64")


def _dt(t) -> str:
    return dtype_name(t)


class Gen:
    """Builds a program statement by statement, running each candidate in torch first."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.stmts: list = []
        self.open: list = []           # open grad-mode blocks, [block, statements left]
        self.block_left = 0
        self.env: dict = {}
        self.order: list = []
        self.n = 0
        self.nh = 0
        self.done = False

    # ---- randomness helpers
    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick_of(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def weighted(self, items: dict):
        keys = list(items)
        p = np.array([items[k] for k in keys], dtype=float)
        return keys[int(self.rng.choice(len(keys), p=p / p.sum()))]

    def fresh(self) -> str:
        self.n += 1
        return f"t{self.n - 1}"

    # ---- the environment
    def tensors(self, pred=None) -> list:
        out = []
        for n in self.order:
            t = self.env.get(n)
            if isinstance(t, torch.Tensor) and (pred is None or _safe(pred, t)):
                out.append(n)
        return out

    def pick(self, pred=None) -> str | None:
        c = self.tensors(pred)
        if not c:
            return None
        w = np.arange(1, len(c) + 1, dtype=float) ** 1.5
        return c[int(self.rng.choice(len(c), p=w / w.sum()))]

    def t(self, name: str):
        return self.env[name]

    def shape(self, name: str) -> tuple:
        return tuple(self.env[name].shape)

    # ---- data
    def rand_shape(self) -> tuple:
        for _ in range(20):
            nd = int(self.rng.choice(5, p=[0.1, 0.28, 0.35, 0.22, 0.05]))
            sh = tuple(int(self.rng.choice(5, p=[0.03, 0.2, 0.3, 0.3, 0.17])) for _ in range(nd))
            if int(np.prod(sh)) <= 48:
                return sh
        return (3,)

    def related_shape(self) -> tuple:
        n = self.pick()
        if n is None or self.chance(0.4):
            return self.rand_shape()
        sh = list(self.shape(n))
        r = self.rng.random()
        if r < 0.3 and sh:
            sh = sh[int(self.rng.integers(len(sh) + 1)):]
        elif r < 0.55:
            sh = [1 if self.chance(0.4) else d for d in sh]
        elif r < 0.75 and len(sh) >= 1:
            sh = sh[:-1] + [sh[-1]] if len(sh) == 1 else sh[:-2] + [sh[-1], sh[-2]]
        return tuple(sh)

    def rand_dtype(self) -> str:
        return self.weighted({"float64": 0.65, "float32": 0.15, "complex128": 0.12,
                              "complex64": 0.08})

    def scalar(self, c=None):
        """A Python number from SCALARS (or ``c``), sometimes as a NumPy scalar of some width:
        PyTorch gives NumPy scalars a Python number's (weak) place in type promotion."""
        c = self.pick_of(SCALARS) if c is None else c
        if not self.chance(0.25):
            return c
        if isinstance(c, complex):
            return np.complex128(c)
        if isinstance(c, float):
            return self.pick_of([np.float64, np.float32, np.float16])(c)
        return self.pick_of([np.int64, np.int32, np.int8])(c)

    def rand_data(self, shape: tuple, dt: str) -> np.ndarray:
        r = self.rng
        if dt.startswith("int"):
            return r.integers(-4, 5, size=shape).astype(dt)
        if dt.startswith("complex"):
            re = r.choice([-1, 1], size=shape) * r.uniform(0.2, 1.2, size=shape)
            im = r.choice([-1, 1], size=shape) * r.uniform(0.2, 1.2, size=shape)
            return (re + 1j * im).astype(dt)
        if self.chance(0.5):
            return r.uniform(0.3, 1.7, size=shape).astype(dt)
        return (r.choice([-1, 1], size=shape) * r.uniform(0.2, 1.5, size=shape)).astype(dt)

    def leaf(self, shape=None, dt=None, rg=None) -> Stmt:
        shape = self.related_shape() if shape is None else tuple(shape)
        dt = dt or self.rand_dtype()
        rg = self.chance(0.75) if rg is None else rg
        integral = dt.startswith("int")
        return Stmt("leaf", (self.fresh(),), args=(D(self.rand_data(shape, dt)),),
                    kwargs={"dtype": Dt(dt), "requires_grad": rg and not integral},
                    extra={"tan": self.rand_data(shape, dt),
                           "dual": self.chance(0.8) and not integral})

    def rdim(self, nd: int) -> int:
        if nd == 0:
            return int(self.pick_of([0, -1]))
        d = int(self.rng.integers(nd))
        return d - nd if self.chance(0.3) else d

    # ---- building
    def target_body(self) -> list:
        return self.open[-1][0].body if self.open else self.stmts

    def try_add(self, new) -> str:
        """Append ``new`` (a statement or a list) and run the program in torch: 'ok', 'invalid'
        (dropped), 'raised-kept' or 'raised-dropped'."""
        new = new if isinstance(new, list) else [new]
        body = self.target_body()
        n0 = len(body)
        body.extend(new)
        prog = Program(self.seed, self.stmts)
        try:
            r = Run(torch, "rev", check=True, observe=False).run(prog.stmts)
        except Invalid:
            del body[n0:]
            return "invalid"
        if r.raised is not None:
            if self.keep_error(r.raised):
                self.done = True
                return "raised-kept"
            del body[n0:]
            return "raised-dropped"
        self.env, self.order = r.env, r.order
        return "ok"

    def keep_error(self, ex: BaseException) -> bool:
        """Whether a statement torch rejects ends the program (ember must raise the same).
        Shape errors are common and dull; autograd's own errors (in-place on a leaf, on a
        multi-output view, on an inference tensor...) are worth one program in seven."""
        msg = str(ex)
        if any(w in msg for w in ("shape", "size", "dimension", "Dimension", "range")):
            return self.chance(0.04)
        return self.chance(0.15)


def prune_empty(stmts: list) -> list:
    out = []
    for s in stmts:
        if s.kind == "block":
            body = prune_empty(s.body)
            if not body:
                continue
            s = replace(s, body=body)
        out.append(s)
    return out


# ---- proposals: each returns a statement, a list (auxiliary leaves first) or None


def _safe(pred, t) -> bool:
    try:
        return bool(pred(t))
    except RuntimeError:   # e.g. metadata of a multi-output view whose base was modified
        return False


def _fp(t) -> bool:
    return t.is_floating_point() or t.is_complex()


def _real(t) -> bool:
    return t.is_floating_point()


def _bcast(*shapes):
    try:
        return tuple(torch.broadcast_shapes(*shapes))
    except RuntimeError:
        return None


def _bcast_to(s: tuple, target: tuple) -> bool:
    return _bcast(s, target) == tuple(target)


def _guards(spec, i=0) -> tuple:
    if spec is None:
        return ()
    if spec == "cut":
        return (("cut", i),)
    if spec == "away0":
        return (("away", i, (0.0,)),)
    if spec == "nz":
        return (("nz", i, 0.1),)
    if spec == "pos":
        return (("pos", i, 0.1),)
    return (("range", i) + tuple(spec),)


# name: (real only, guard)
UNARY = {"neg": (False, None), "exp": (False, None), "log": (False, "cut"),
         "sin": (False, None), "cos": (False, None), "tanh": (False, None),
         "sigmoid": (False, None), "relu": (True, "away0"), "abs": (False, "nz"),
         "sqrt": (False, "cut"), "square": (False, None), "reciprocal": (False, "nz"),
         "rsqrt": (False, "cut"), "sinh": (False, None), "cosh": (False, None),
         "atan": (True, None), "asin": (True, (-0.9, 0.9)), "acos": (True, (-0.9, 0.9)),
         "log1p": (True, (-0.5, 1e9)), "expm1": (False, None), "erf": (True, None),
         "sgn": (False, "nz"), "conj": (False, None), "exp2": (True, None),
         "tan": (True, (-1.2, 1.2)), "sign": (True, "away0"), "clone": (False, None),
         "sinc": (True, "nz"), "lgamma": (True, "pos"), "atanh": (True, (-0.8, 0.8)),
         "asinh": (True, None), "log2": (False, "cut"), "log10": (True, "pos"),
         "erfinv": (True, (-0.8, 0.8)), "digamma": (True, "pos")}


def p_leaf(g: Gen):
    return g.leaf()


def p_unary(g: Gen):
    name = g.pick_of(list(UNARY))
    real_only, spec = UNARY[name]
    x = g.pick(_real if real_only else _fp)
    if x is None:
        return None
    kind = "method" if g.chance(0.6) else "func"
    return Stmt(kind, (g.fresh(),), name, (V(x),), guards=_guards(spec))


SCALARS = (2.0, -1.5, 0.5, 3, 2, 1.25, -0.75)


def p_scalar(g: Gen):
    """Tensor with a Python number: arithmetic both ways, pow, comparisons, clamp."""
    x = g.pick(_fp)
    if x is None:
        return None
    t = g.t(x)
    c = g.pick_of(SCALARS)
    if t.is_complex() and g.chance(0.15):
        c = 0.5 + 1j
    c = g.scalar(c)
    r = g.rng.random()
    out = (g.fresh(),)
    if r < 0.35:
        op = g.pick_of(["+", "-", "*", "/"])
        if g.chance(0.35):
            return Stmt("binop", out, op, (c, V(x)), guards=_guards("nz", 1) if op == "/"
                        else ())
        return Stmt("binop", out, op, (V(x), c))
    if r < 0.55:
        p = g.pick_of([2, 3, 0.5, -1, 2.5, -0.5, 2.0])
        spec = "nz" if p == -1 else "cut" if p in (0.5, 2.5, -0.5) else None
        if g.chance(0.5):
            return Stmt("binop", out, "**", (V(x), p), guards=_guards(spec))
        return Stmt("method", out, "pow", (V(x), p), guards=_guards(spec))
    if r < 0.6:
        return Stmt("binop", out, "**", (1.5, V(x)))
    if r < 0.7 and _real(t) and t.numel():
        a = to_np(t)
        c = float(np.round(np.quantile(a, g.rng.uniform(0.2, 0.8)) + 0.013, 3))
        return Stmt("binop", out, g.pick_of([">", "<"]), (V(x), c),
                    guards=(("away", 0, (c,)),))
    if _real(t) and t.numel():
        return _clamp(g, x, out, inplace=False)
    return Stmt("method", out, g.pick_of(["mul", "add", "sub", "div"]), (V(x), c))


def _clamp(g: Gen, x: str, out, inplace: bool):
    a = to_np(g.t(x))
    q = np.sort(g.rng.uniform(0.1, 0.9, 2))
    lo, hi = (float(np.round(np.quantile(a, qq) + 0.011, 3)) for qq in q)
    if hi - lo < 0.12:
        hi = lo + 0.15
    fn = "clamp_" if inplace else "clamp"
    r = g.rng.random()
    if r < 0.3:
        args, kw, pts = (V(x),), {"min": lo}, (lo,)
    elif r < 0.5:
        args, kw, pts = (V(x),), {"max": hi}, (hi,)
    elif r < 0.6 and not inplace:
        return Stmt("method", out, "clamp_min", (V(x), lo), guards=(("away", 0, (lo,)),))
    else:
        args, kw, pts = (V(x), lo, hi), {}, (lo, hi)
    kind = "method" if inplace or g.chance(0.6) else "func"
    return Stmt(kind, out, fn, args, kw, guards=(("away", 0, pts),))


def _sub_shape(g: Gen, shape: tuple) -> tuple:
    """A shape that broadcasts to ``shape``."""
    sh = list(shape)
    if sh and g.chance(0.3):
        sh = sh[int(g.rng.integers(len(sh) + 1)):]
    if g.chance(0.4):
        sh = [1 if g.chance(0.4) else d for d in sh]
    return tuple(sh)


def _operand(g: Gen, shape: tuple, dt=None, exact=False, scalar=True, grow=False):
    """Something to combine with a tensor of ``shape``: a Python number, a variable or a new
    leaf (or constant) whose shape broadcasts to it. Returns (arg, auxiliary statements)."""
    r = g.rng.random()
    if scalar and r < 0.25:
        return g.scalar(), []
    if r < 0.6:
        n = g.pick(lambda t: _fp(t) and (tuple(t.shape) == shape if exact else (
            _bcast(tuple(t.shape), shape) is not None if grow
            else _bcast_to(tuple(t.shape), shape))))
        if n is not None:
            return V(n), []
    bs = shape if exact else _sub_shape(g, shape)
    if grow and not exact and g.chance(0.2):
        bs = (int(g.rng.integers(1, 3)),) + tuple(shape)
    if g.chance(0.2):
        return D(g.rand_data(bs, dt or g.rand_dtype())), []
    s = g.leaf(bs, dt)
    return V(s.out[0]), [s]


BIN = {"+": 4, "-": 3, "*": 4, "/": 2, "add": 1.5, "sub": 1, "mul": 1.5, "div": 1,
       "maximum": 0.8, "minimum": 0.6, "atan2": 0.4, "pow": 0.7, "hypot": 0.3,
       "logaddexp": 0.4, "xlogy": 0.3, "lerp": 0.5, "addcmul": 0.4, "addcdiv": 0.3}
REAL_BIN = ("maximum", "minimum", "atan2", "hypot", "logaddexp", "xlogy")


def p_binary(g: Gen):
    a = g.pick(_fp)
    if a is None:
        return None
    ta = g.t(a)
    op = g.weighted(BIN)
    real = op in REAL_BIN
    if real and not _real(ta):
        return None
    dt = _dt(ta) if op in ("lerp", "pow") or real and g.chance(0.7) else None
    if real and dt is None:
        dt = g.pick_of(FLOAT)
    b, aux = _operand(g, tuple(ta.shape), dt, scalar=op not in REAL_BIN + ("lerp",),
                      grow=op != "lerp")
    out = (g.fresh(),)
    guards: tuple = ()
    if op in ("/", "div", "addcdiv"):
        guards = (("nz", 1, 0.1),)
    if op in ("maximum", "minimum"):
        guards = (("apart", 0, 1),)
    if op in ("atan2", "hypot"):
        guards = (("nz", 0, 0.1), ("nz", 1, 0.1))
    if op == "xlogy":
        guards = (("pos", 1, 0.1),)
    if op == "pow":
        guards = (("cut", 0), ("range", 1, -2.0, 3.0)) if not isinstance(b, NUM) \
            else (("cut", 0),)
    if op in "+-*/":
        s = Stmt("binop", out, op, (V(a), b), guards=guards)
    elif op in ("add", "sub") and g.chance(0.3):
        s = Stmt("method", out, op, (V(a), b), {"alpha": g.pick_of([2, -0.5, 1.5])})
    elif op == "lerp":
        s = Stmt("method", out, "lerp", (V(a), b, g.pick_of([0.3, 0.75, -0.5])))
    elif op in ("addcmul", "addcdiv"):
        if isinstance(b, NUM):
            return None
        c, aux2 = _operand(g, tuple(ta.shape), scalar=False)
        aux += aux2
        s = Stmt("func", out, op, (V(a), c, b), {"value": g.pick_of([0.5, -2.0, 1])},
                 guards=(("nz", 2, 0.1),) if op == "addcdiv" else ())
    else:
        kind = "method" if g.chance(0.5) else "func"
        s = Stmt(kind, out, op, (V(a), b), guards=guards)
    return aux + [s]


def p_reduce(g: Gen):
    x = g.pick(_fp)
    if x is None:
        return None
    t = g.t(x)
    nd, real = t.dim(), _real(t)
    op = g.weighted({"sum": 3, "mean": 2, "prod": 1, "amax": 1, "amin": 0.5, "max": 0.5,
                     "std": 0.6, "var": 0.5, "logsumexp": 0.6, "norm": 0.6, "cumsum": 1,
                     "cumprod": 0.6, "softmax": 1, "log_softmax": 1, "logcumsumexp": 0.3,
                     "flip": 0.5, "roll": 0.5, "trace": 0.2, "tril": 0.3, "triu": 0.3,
                     "nansum": 0.2})
    out = (g.fresh(),)
    d = g.rdim(nd)
    kind = "method" if g.chance(0.6) else "func"
    if op in ("amax", "amin", "max", "logsumexp", "softmax", "log_softmax", "logcumsumexp",
              "trace", "tril", "triu") and not real:
        return None
    if op in ("sum", "mean", "nansum", "prod", "std", "var", "norm"):
        r = g.rng.random()
        kw = {}
        if r < 0.3 and op not in ("std", "var"):
            args = (V(x),)
        elif r < 0.45 and nd >= 2 and op not in ("prod",):
            dims = tuple(sorted(set(g.rng.choice(nd, 2, replace=False).tolist())))
            args, kw = (V(x),), {"dim": dims}
        else:
            args, kw = (V(x), d), {}
        if len(args) == 2 or "dim" in kw:
            if g.chance(0.4):
                kw["keepdim"] = True
        if op in ("std", "var") and g.chance(0.5):
            kw["correction"] = g.pick_of([0, 1, 2])
        guards = (("nz", 0, 0.05),) if op == "norm" else ()
        return Stmt(kind, out, op, args, kw, guards=guards)
    if op in ("amax", "amin"):
        kw = {"keepdim": True} if g.chance(0.4) else {}
        return Stmt(kind, out, op, (V(x), d), kw, guards=(("distinct", 0, d),))
    if op == "max":
        return Stmt("method", out, g.pick_of(["max", "min"]), (V(x),),
                    guards=(("distinct", 0, None),))
    if op == "logsumexp":
        return Stmt(kind, out, op, (V(x), d), {"keepdim": True} if g.chance(0.3) else {})
    if op in ("cumsum", "cumprod", "softmax", "log_softmax", "logcumsumexp"):
        return Stmt(kind, out, op, (V(x),), {"dim": d})
    if op == "flip":
        return Stmt(kind, out, op, (V(x), (d,)))
    if op == "roll":
        return Stmt(kind, out, op, (V(x), int(g.rng.integers(-3, 4)), d))
    if op == "trace" and nd == 2:
        return Stmt(kind, out, op, (V(x),))
    if op in ("tril", "triu") and nd >= 2:
        return Stmt(kind, out, op, (V(x), int(g.rng.integers(-2, 3))))
    return None


def p_multi(g: Gen):
    """Multi-output ops: sort/topk/max/min/median/kthvalue/cummax (values, indices)."""
    x = g.pick(_fp)
    if x is None:
        return None
    t = g.t(x)
    nd = t.dim()
    d = g.rdim(nd)
    size = t.shape[d] if nd else 1
    op = g.weighted({"sort": 2, "topk": 1.5, "max": 1.5, "min": 1, "median": 0.6,
                     "kthvalue": 0.5, "cummax": 0.5, "cummin": 0.3, "std_mean": 0.4,
                     "var_mean": 0.3, "argsort": 0.3})
    out = (g.fresh(), g.fresh())
    if op in ("std_mean", "var_mean"):
        return Stmt("func", out, op, (V(x), d), seq=True)
    if not _real(t):
        return None
    guards = (("distinct", 0, d),)
    kind = "method" if g.chance(0.6) else "func"
    if op == "sort":
        kw = {"descending": True} if g.chance(0.4) else {}
        return Stmt(kind, out, op, (V(x), d), kw, guards=guards, seq=True)
    if op == "argsort":
        return Stmt(kind, out[:1], op, (V(x), d), guards=guards)
    if op == "topk":
        k = int(g.rng.integers(0, size + 1)) if size else 0
        kw = {"largest": False} if g.chance(0.3) else {}
        return Stmt(kind, out, op, (V(x), k, d), kw, guards=guards, seq=True)
    if op == "kthvalue":
        if size < 1:
            return None
        return Stmt(kind, out, op, (V(x), int(g.rng.integers(1, size + 1)), d),
                    guards=guards, seq=True)
    kw = {"keepdim": True} if g.chance(0.4) and op in ("max", "min", "median") else {}
    return Stmt(kind, out, op, (V(x), d), kw, guards=guards, seq=True)


def p_split(g: Gen):
    x = g.pick(lambda t: _fp(t) and t.dim() >= 1)
    if x is None:
        return None
    t = g.t(x)
    d = g.rdim(t.dim())
    n = t.shape[d]
    op = g.weighted({"split": 2, "split_sizes": 1, "chunk": 1.5, "unbind": 1.5,
                     "tensor_split": 0.5})
    if op == "split":
        args = (V(x), int(g.rng.integers(1, 4)), d)
    elif op == "split_sizes":
        cuts = np.sort(g.rng.integers(0, n + 1, size=int(g.rng.integers(1, 3))))
        sizes = np.diff(np.concatenate([[0], cuts, [n]])).tolist()
        args, op = (V(x), [int(v) for v in sizes], d), "split"
    elif op in ("chunk", "tensor_split"):
        args = (V(x), int(g.rng.integers(1, 4)), d)
    else:
        args = (V(x), d)
    try:
        k = len(getattr(t, op)(*[a if not isinstance(a, V) else t for a in args][1:]))
    except Exception:  # noqa: BLE001
        k = 1
    if k > 5:
        return None
    return Stmt("method", tuple(g.fresh() for _ in range(k)), op, args, seq=True, view=True)


def _index_tensor(g: Gen, n: int, k: int, unique=False, neg=False, shape=None) -> D:
    if unique:
        vals = g.rng.permutation(n)[:k]
    else:
        vals = g.rng.integers(0, n, size=k if shape is None else shape)
    if neg:
        vals = np.where(g.rng.random(vals.shape) < 0.3, vals - n, vals)
    return D(np.asarray(vals, dtype=np.int64))


def p_index(g: Gen):
    """Indexing that copies: gather, index_select, advanced indexing, masked_select."""
    x = g.pick(lambda t: _fp(t) and t.dim() >= 1 and t.numel() > 0)
    if x is None:
        return None
    t = g.t(x)
    sh, nd = tuple(t.shape), t.dim()
    d = g.rdim(nd)
    out = (g.fresh(),)
    op = g.weighted({"gather": 1.5, "take_along_dim": 0.4, "index_select": 1.5, "idx0": 2,
                     "idx1": 1, "list": 0.7, "mask": 1, "pair": 0.7, "masked_select": 0.4})
    if op in ("gather", "take_along_dim"):
        ish = tuple(int(g.rng.integers(1, 4)) if i == d % nd else
                    (int(g.rng.integers(1, s + 1)) if op == "gather" else s)
                    for i, s in enumerate(sh))
        idx = _index_tensor(g, sh[d], 0, shape=ish)
        if op == "gather":
            return Stmt("method" if g.chance(0.6) else "func", out, "gather", (V(x), d, idx))
        return Stmt("method", out, op, (V(x), idx), {"dim": d})
    if op == "index_select":
        return Stmt("method", out, op, (V(x), d, _index_tensor(g, sh[d], int(
            g.rng.integers(1, 5)))))
    if op == "idx0":
        return Stmt("getitem", out, args=(V(x), _index_tensor(g, sh[0], int(
            g.rng.integers(1, 5)), neg=True)))
    if op == "idx1" and nd >= 2:
        return Stmt("getitem", out, args=(V(x), (slice(None), _index_tensor(
            g, sh[1], int(g.rng.integers(1, 4)), neg=True))))
    if op == "list":
        return Stmt("getitem", out, args=(V(x), [int(v) for v in g.rng.integers(
            -sh[0], sh[0], size=2)]))
    if op in ("mask", "masked_select"):
        msh = sh[:int(g.rng.integers(1, nd + 1))] if op == "mask" else _sub_shape(g, sh)
        m = D(g.rng.random(msh) < 0.5)
        if op == "mask":
            return Stmt("getitem", out, args=(V(x), m))
        return Stmt("method", out, op, (V(x), m))
    if op == "pair" and nd >= 2:
        k = int(g.rng.integers(1, 4))
        return Stmt("getitem", out, args=(V(x), (_index_tensor(g, sh[0], k, neg=True),
                                                _index_tensor(g, sh[1], k))))
    return None


def _factor_shape(g: Gen, n: int) -> tuple:
    if n == 0:
        return g.pick_of([(0,), (0, 2), (3, 0), (0, 1, 2)])
    fs, m, p = [], n, 2
    while m > 1:
        while m % p == 0:
            fs.append(p)
            m //= p
        p += 1
    g.rng.shuffle(fs)
    k = int(g.rng.integers(1, 4))
    dims = [1] * k
    for f in fs:
        dims[int(g.rng.integers(k))] *= f
    if g.chance(0.2):
        dims.insert(int(g.rng.integers(len(dims) + 1)), 1)
    if g.chance(0.3):
        dims[int(g.rng.integers(len(dims)))] = -1
    return tuple(dims)


def _basic_index(g: Gen, sh: tuple):
    nd = len(sh)
    k = int(g.rng.integers(1, nd + 1)) if nd else 0
    ell = nd and k < nd and g.chance(0.3)
    dims = sh[nd - k:] if ell else sh[:k]
    items: list = []
    for n in dims:
        r = g.rng.random()
        if r < 0.2 and n > 0:
            items.append(int(g.rng.integers(-n, n)))
        elif r < 0.4:
            items.append(slice(None))
        else:
            a = g.pick_of([None, 0, 1, -1, -2, int(n // 2)])
            b = g.pick_of([None, n, -1, 2, 3])
            items.append(slice(a, b, g.pick_of([None, 1, 2, 3])))
        if g.chance(0.1):
            items.append(None)
    if ell:
        items.insert(0, Ellipsis)
    if not items or g.chance(0.1):
        items.insert(0, None)
    return items[0] if len(items) == 1 and g.chance(0.5) else tuple(items)


def p_view(g: Gen):
    x = g.pick(lambda t: _fp(t) or g.chance(0.1))
    if x is None:
        return None
    t = g.t(x)
    sh, nd, cx = tuple(t.shape), t.dim(), t.is_complex()
    out = (g.fresh(),)
    op = g.weighted({
        "view": 2, "reshape": 1.5, "flatten": 0.7, "unflatten": 0.5, "transpose": 1.5,
        "permute": 1, "movedim": 0.4, "t": 0.6, "T": 0.4, "mT": 0.6, "mH": 0.3, "H": 0.2,
        "select": 1, "int": 0.7, "narrow": 0.8, "basic": 3, "expand": 1.2, "expand_as": 0.3,
        "squeeze": 0.8, "unsqueeze": 1, "diagonal": 0.6, "unfold": 0.6, "as_strided": 0.8,
        "detach": 0.8, "data": 0.2, "view_as_real": 0.5 if cx else 0, "real": 0.5 if cx
        else 0.1, "imag": 0.4 if cx else 0.05, "view_as_complex": 0.3, "contiguous": 0.4,
        "swapaxes": 0.3, "view_flat": 0.5})
    s = _view_stmt(g, op, x, t, sh, nd, out)
    if s is not None:
        s.view = True
    return s


def _two_dims(g: Gen, nd: int):
    if nd < 1:
        return 0, -1
    a, b = g.rng.integers(nd), g.rng.integers(nd)
    return int(a), int(b) - (nd if g.chance(0.3) else 0)


def _view_stmt(g: Gen, op, x, t, sh, nd, out):
    m = "method"
    if op in ("view", "reshape"):
        return Stmt(m, out, op, (V(x),) + _factor_shape(g, t.numel()))
    if op == "view_flat":
        return Stmt(m, out, "view", (V(x), -1))
    if op == "flatten":
        return Stmt(m, out, op, (V(x),) + (tuple(sorted(_two_dims(g, nd))) if nd >= 2 and
                                           g.chance(0.5) else ()))
    if op == "unflatten" and nd >= 1:
        d = g.rdim(nd)
        return Stmt(m, out, op, (V(x), d, _factor_shape(g, sh[d])))
    if op in ("transpose", "swapaxes"):
        return Stmt(m if g.chance(0.7) else "func", out, op, (V(x),) + _two_dims(g, nd))
    if op == "permute":
        return Stmt(m, out, op, (V(x),) + tuple(int(v) for v in g.rng.permutation(nd)))
    if op == "movedim":
        return Stmt(m, out, op, (V(x),) + _two_dims(g, nd))
    if op == "t" and nd <= 2:
        return Stmt(m, out, op, (V(x),))
    if op in ("T", "mT", "mH", "H", "real", "imag", "data"):
        return Stmt("attr", out, op, (V(x),))
    if op in ("select", "int", "narrow") and nd >= 1:
        d = g.rdim(nd)
        n = sh[d]
        if n == 0:
            return None
        if op == "select":
            return Stmt(m, out, op, (V(x), d, int(g.rng.integers(-n, n))))
        if op == "int":
            return Stmt("getitem", out, args=(V(x), int(g.rng.integers(-sh[0], sh[0])))) \
                if sh[0] else None
        st = int(g.rng.integers(0, n))
        return Stmt(m, out, op, (V(x), d, st, int(g.rng.integers(0, n - st + 1))))
    if op == "basic":
        return Stmt("getitem", out, args=(V(x), _basic_index(g, sh)))
    if op == "expand":
        new = [int(g.rng.integers(1, 4)) if s == 1 else (-1 if g.chance(0.5) else s)
               for s in sh]
        lead = [int(g.rng.integers(1, 3)) for _ in range(int(g.rng.integers(0, 2)))]
        return Stmt(m, out, op, (V(x),) + tuple(lead + new))
    if op == "expand_as":
        y = g.pick(lambda u: _bcast_to(sh, tuple(u.shape)))
        return Stmt(m, out, op, (V(x), V(y))) if y else None
    if op == "squeeze":
        return Stmt(m, out, op, (V(x),) + ((g.rdim(nd),) if g.chance(0.6) else ()))
    if op == "unsqueeze":
        return Stmt(m, out, op, (V(x), int(g.rng.integers(-nd - 1, nd + 1))))
    if op == "diagonal" and nd >= 2:
        d1, d2 = _two_dims(g, nd)
        return Stmt(m, out, op, (V(x),), {"offset": int(g.rng.integers(-1, 2)), "dim1": d1,
                                          "dim2": d2})
    if op == "unfold" and nd >= 1:
        d = g.rdim(nd)
        return Stmt(m, out, op, (V(x), d, int(g.rng.integers(0, sh[d] + 1)),
                                 int(g.rng.integers(1, 3))))
    if op == "as_strided":
        return _as_strided(g, x, t, out)
    if op == "detach":
        return Stmt(m, out, op, (V(x),))
    if op == "view_as_real" or op == "view_as_complex":
        return Stmt("func", out, op, (V(x),))
    if op == "contiguous":
        return Stmt(m, out, op, (V(x),))
    return None


def _as_strided(g: Gen, x, t, out):
    n = t.untyped_storage().nbytes() // t.element_size()
    if not t._is_view():
        # a result's storage beyond its elements is torch's allocation detail (a reduction
        # such as mse_loss keeps its elementwise buffer): ember's holds just the elements
        n = min(n, t.storage_offset() + t.numel())
    if n == 0:
        return None
    k = int(g.rng.integers(1, 3))
    size = [int(g.rng.integers(1, 4)) for _ in range(k)]
    stride = [int(g.pick_of([1, 1, 2, 3, 0] if g.chance(0.2) else [1, 2, 3])) for _ in range(k)]
    span = sum((s - 1) * st for s, st in zip(size, stride))
    if span >= n:
        size, stride, span = [1] * k, [1] * k, 0
    off = int(g.rng.integers(0, n - span))
    return Stmt("method", out, "as_strided", (V(x), tuple(size), tuple(stride), off))


INPLACE = {"arith": 5, "iop": 3, "unary": 2.5, "clamp_": 0.7, "copy_": 1.5, "fill_": 0.8,
           "zero_": 0.6, "index_add_": 0.6, "index_copy_": 0.4, "index_fill_": 0.4,
           "masked_fill_": 0.8, "scatter_": 0.6, "scatter_add_": 0.4, "set_basic": 2.5,
           "set_adv": 0.8, "set_mask": 0.5, "detach_": 0.2, "requires_grad_": 0.6}
INPLACE_UNARY = {"exp_": None, "tanh_": None, "sigmoid_": None, "neg_": None,
                 "sqrt_": "cut", "relu_": "away0", "abs_": "nz", "square_": None,
                 "sin_": None, "cos_": None, "reciprocal_": "nz", "mul_": None}


def p_inplace(g: Gen):
    x = g.pick(lambda t: _fp(t) or g.chance(0.05))
    if x is None:
        return None
    t = g.t(x)
    sh, nd, dt = tuple(t.shape), t.dim(), _dt(t)
    op = g.weighted(INPLACE)
    return _inplace_stmt(g, op, x, t, sh, nd, dt)


def _inplace_stmt(g: Gen, op, x, t, sh, nd, dt):
    if op in ("arith", "iop"):
        b, aux = _operand(g, sh)
        sym = g.pick_of(["+", "-", "*", "/"])
        guards = (("nz", 1, 0.1),) if sym == "/" else ()
        if op == "iop":
            return aux + [Stmt("iop", (), sym, (V(x), b), guards=guards)]
        fn = {"+": "add_", "-": "sub_", "*": "mul_", "/": "div_"}[sym]
        kw = {"alpha": 2} if fn in ("add_", "sub_") and g.chance(0.2) else {}
        return aux + [Stmt("method", (), fn, (V(x), b), kw, guards=guards)]
    if op == "unary":
        fn = g.pick_of(list(INPLACE_UNARY))
        args = (V(x), g.pick_of([2.0, -0.5])) if fn == "mul_" else (V(x),)
        if fn == "relu_" and not _real(t):
            return None
        return Stmt("method", (), fn, args, guards=_guards(INPLACE_UNARY[fn]))
    if op == "clamp_":
        return _clamp(g, x, (), inplace=True) if _real(t) and t.numel() else None
    if op == "copy_":
        b, aux = _operand(g, sh, scalar=False)
        if isinstance(b, NUM):
            return None
        return aux + [Stmt("method", (), op, (V(x), b))]
    if op == "fill_":
        y = g.pick(lambda u: u.dim() == 0 and _fp(u)) if g.chance(0.4) else None
        return Stmt("method", (), op, (V(x), V(y) if y else g.pick_of(SCALARS)))
    if op in ("zero_", "detach_"):
        return Stmt("method", (), op, (V(x),))
    if op == "requires_grad_":
        return Stmt("method", (), op, (V(x),) + ((False,) if g.chance(0.3) else ()))
    if nd == 0 or t.numel() == 0:
        return None
    d = g.rdim(nd)
    n = sh[d]
    if op in ("index_add_", "index_copy_", "index_fill_") and n:
        k = int(g.rng.integers(1, n + 1))
        idx = _index_tensor(g, n, k, unique=op == "index_copy_")
        if op == "index_fill_":
            return Stmt("method", (), op, (V(x), d, idx, g.pick_of(SCALARS)))
        ssh = tuple(k if i == d % nd else s for i, s in enumerate(sh))
        b, aux = _operand(g, ssh, dt, exact=True, scalar=False)
        kw = {"alpha": 0.5} if op == "index_add_" and g.chance(0.3) else {}
        return aux + [Stmt("method", (), op, (V(x), d, idx, b), kw)]
    if op == "masked_fill_":
        m = g.pick(lambda u: u.dtype == torch.bool and _bcast_to(tuple(u.shape), sh))
        mask = V(m) if m and g.chance(0.6) else D(g.rng.random(_sub_shape(g, sh)) < 0.5)
        y = g.pick(lambda u: u.dim() == 0 and _fp(u)) if g.chance(0.3) else None
        return Stmt("method", (), op, (V(x), mask, V(y) if y else g.pick_of(SCALARS)))
    if op in ("scatter_", "scatter_add_") and n:
        return _scatter(g, op, x, sh, nd, d, dt)
    if op == "set_basic":
        return _setitem(g, x, sh, _basic_index(g, sh), dt)
    if op == "set_adv" and n:
        k = int(g.rng.integers(1, sh[0] + 1))
        return _setitem(g, x, sh, _index_tensor(g, sh[0], k, unique=True, neg=True), dt)
    if op == "set_mask":
        return Stmt("setitem", (), args=(V(x), D(g.rng.random(sh) < 0.5), g.pick_of(SCALARS)))
    return None


def _scatter(g: Gen, op, x, sh, nd, d, dt):
    k = int(g.rng.integers(1, sh[d] + 1))
    ish = [k if i == d % nd else int(g.rng.integers(1, s + 1)) for i, s in enumerate(sh)]
    if op == "scatter_":   # distinct targets along d: the result does not depend on order
        r = g.rng.random(tuple(sh[i] if i == d % nd else ish[i] for i in range(nd)))
        idx = np.argsort(r, axis=d)
        idx = np.take(idx, np.arange(k), axis=d)
    else:
        idx = g.rng.integers(0, sh[d], size=ish)
    idx = D(idx.astype(np.int64))
    if op == "scatter_" and g.chance(0.3):
        return Stmt("method", (), op, (V(x), d, idx), {"value": g.pick_of(SCALARS)})
    b, aux = _operand(g, tuple(ish), dt, exact=True, scalar=False)
    return aux + [Stmt("method", (), op, (V(x), d, idx, b))]


def _setitem(g: Gen, x, sh, idx, dt):
    try:
        ev = idx.a if isinstance(idx, D) else idx
        ish = tuple(g.t(x)[torch.as_tensor(ev) if isinstance(idx, D) else ev].shape)
    except Exception:  # noqa: BLE001
        return None
    if g.chance(0.35):
        return Stmt("setitem", (), args=(V(x), idx, g.pick_of(SCALARS)))
    b, aux = _operand(g, ish, dt, scalar=False)
    return aux + [Stmt("setitem", (), args=(V(x), idx, b))]


def p_matmul(g: Gen):
    a = g.pick(lambda t: _fp(t) and 1 <= t.dim() <= 3)
    if a is None:
        return None
    t = g.t(a)
    sh, nd, dt = tuple(t.shape), t.dim(), _dt(t)
    n = sh[-1]
    p = int(g.rng.integers(1, 4))
    opts = {1: [(n,), (n, p), (2, n, p)], 2: [(n,), (n, p), (2, n, p)],
            3: [(n, p), (sh[0], n, p), (n,)]}[nd]
    bsh = opts[int(g.rng.integers(len(opts)))]
    out = (g.fresh(),)
    if nd == 1 and g.chance(0.15):
        bsh, fn = (p,), "outer"
    else:
        fn = {(1, 1): "dot", (2, 1): "mv", (2, 2): "mm", (3, 3): "bmm"}.get((nd, len(bsh)))
    y = g.pick(lambda u: tuple(u.shape) == bsh and _dt(u) == dt)
    aux = []
    if y is None:
        s = g.leaf(bsh, dt)
        y, aux = s.out[0], [s]
    r = g.rng.random()
    if fn and r < 0.35:
        return aux + [Stmt("method" if g.chance(0.5) else "func", out, fn, (V(a), V(y)))]
    if fn == "mm" and r < 0.45:
        return aux + [Stmt("func", out, "einsum", ("ij,jk->ik", V(a), V(y)))]
    if fn == "outer":
        return None
    if r < 0.8:
        return aux + [Stmt("binop", out, "@", (V(a), V(y)))]
    return aux + [Stmt("func", out, "matmul", (V(a), V(y)))]


def p_cat(g: Gen):
    a = g.pick(_fp)
    if a is None:
        return None
    t = g.t(a)
    sh, nd = tuple(t.shape), t.dim()
    stack = nd == 0 or g.chance(0.35)
    d = int(g.rng.integers(-nd - 1, nd + 1)) if stack else g.rdim(nd)
    parts, aux = [V(a)], []
    for _ in range(int(g.rng.integers(1, 3))):
        want = sh if stack else tuple(int(g.rng.integers(0, 3)) if i == d % nd else s
                                      for i, s in enumerate(sh))
        y = g.pick(lambda u, w=want: tuple(u.shape) == w and _fp(u))
        if y is None or g.chance(0.3):
            s = g.leaf(want)
            y, aux = s.out[0], aux + [s]
        parts.append(V(y))
    g.rng.shuffle(parts)
    kw = {"dim": d} if g.chance(0.6) else {}
    args = (parts,) if kw else (parts, d)
    return aux + [Stmt("func", (g.fresh(),), "stack" if stack else "cat", args, kw)]


def p_where(g: Gen):
    a = g.pick(_fp)
    if a is None:
        return None
    sh = tuple(g.t(a).shape)
    m = g.pick(lambda u: u.dtype == torch.bool and _bcast(tuple(u.shape), sh) is not None)
    cond = V(m) if m and g.chance(0.6) else D(g.rng.random(_sub_shape(g, sh)) < 0.5)
    b, aux = _operand(g, sh, grow=True)
    out = (g.fresh(),)
    if g.chance(0.3) and not isinstance(b, NUM):
        return aux + [Stmt("method", out, "where", (V(a), cond, b))]
    return aux + [Stmt("func", out, "where", (cond, V(a), b))]


def p_misc(g: Gen):
    x = g.pick()
    if x is None:
        return None
    t = g.t(x)
    op = g.weighted({"retain_grad": 2, "hook": 2.5, "to": 1.2, "clone": 0.5, "detach": 0.3,
                     "requires_grad_": 0.6})
    if op == "retain_grad":
        return Stmt("method", (), op, (V(x),))
    if op == "hook":
        g.nh += 1
        return Stmt("method", (), "register_hook", (V(x), Hk(
            f"h{g.nh}", g.pick_of([None, None, 2.0, -0.5]))))
    if op == "requires_grad_":
        return Stmt("method", (), op, (V(x),))
    out = (g.fresh(),)
    if op == "to":
        if not _fp(t):
            return None
        choice = g.pick_of(["double", "float", "to64", "to32", "tocx", "same"])
        if choice in ("double", "float"):
            return Stmt("method", out, choice, (V(x),))
        target = {"to64": "float64", "to32": "float32", "tocx": "complex128",
                  "same": _dt(t)}[choice]
        return Stmt("method", out, "to", (V(x), Dt(target)))
    return Stmt("method", out, op, (V(x),))


BLOCKS = {("no_grad", ()): 0.35, ("enable_grad", ()): 0.12,
          ("set_grad_enabled", (False,)): 0.2, ("set_grad_enabled", (True,)): 0.05,
          ("inference_mode", ()): 0.2, ("inference_mode", (False,)): 0.05}


def p_block(g: Gen):
    if len(g.open) >= 2:
        return None
    fn, args = g.weighted(BLOCKS)
    blk = Stmt("block", fn=fn, args=args, body=[])
    g.target_body().append(blk)
    g.open.append([blk, int(g.rng.integers(1, 5))])
    return None


# ---- dtypes beyond the differentiable ones, out= arguments, overlapping writes (issue 7)

INT_DT = ("int64", "int32")
INT_BIN = {"+": 2, "-": 1, "*": 2, "//": 1, "%": 1, "&": 0.5, "|": 0.5, "^": 0.5, "<<": 0.4,
           ">>": 0.4, "/": 1, "div_floor": 0.5, "div_trunc": 0.5, "<": 0.5}


def _is_int(t) -> bool:
    return not (t.is_floating_point() or t.is_complex()) and t.dtype != torch.bool


def p_int(g: Gen):
    """Integer tensors on the non-differentiable paths: integer arithmetic and bit operations,
    division with rounding modes, and mixed integer/float/NumPy-scalar promotion."""
    x = g.pick(_is_int) if g.chance(0.6) else None
    aux: list = []
    if x is None:
        s = g.leaf(dt=g.pick_of(INT_DT), rg=False)
        aux, x = [s], s.out[0]
        sh = tuple(s.args[0].a.shape)
    else:
        sh = g.shape(x)
    op = g.weighted(INT_BIN)
    out = (g.fresh(),)
    r = g.rng.random()
    if op in ("<<", ">>"):
        b = D(g.rng.integers(0, 4, size=_sub_shape(g, sh)).astype(g.pick_of(INT_DT))) \
            if g.chance(0.6) else g.scalar(int(g.rng.integers(0, 4)))
    elif r < 0.35:
        b = g.scalar(g.pick_of([2, 3, -2, 1.5, -0.75]))
    elif r < 0.55 and op in ("+", "-", "*", "/", "<"):
        # a float operand: integer data promoted into a differentiable computation
        n = g.pick(lambda t: _fp(t) and _bcast(tuple(t.shape), sh) is not None)
        if n is None:
            return None
        b = V(n)
    else:
        dt = g.pick_of(INT_DT)
        b = D(g.rand_data(_sub_shape(g, sh), dt))
    guards = (("nz", 1, 0.5),) if op in ("//", "%", "/", "div_floor", "div_trunc") else ()
    if op.startswith("div_"):
        s = Stmt("func", out, "div", (V(x), b), {"rounding_mode": op[4:]}, guards=guards)
    elif isinstance(b, NUM) and g.chance(0.3) and op in ("+", "-", "*", "/"):
        s = Stmt("binop", out, op, (b, V(x)), guards=_guards("nz") if op == "/" else ())
    else:
        s = Stmt("binop", out, op, (V(x), b), guards=guards)
    return aux + [s]


OUT_UNARY = ("exp", "tanh", "sin", "neg", "abs", "sqrt")
OUT_BIN = ("add", "sub", "mul", "div", "maximum", "atan2")
OUT_REDUCE = ("sum", "mean", "amax", "cumsum", "prod")


def _out_tensor(g: Gen, shape: tuple, dt: str):
    """The ``out=`` tensor: the right shape and dtype mostly, else an empty one (resized
    silently), a wrong shape (resized, with PyTorch's warning), a wider or a wrong dtype (an
    integer one: a float result cannot be cast into it), or one that requires grad."""
    r = g.rng.random()
    if r < 0.12:
        shape = (0,)
    elif r < 0.22:
        shape = g.rand_shape()
    if g.chance(0.15):
        dt = g.pick_of(["float64", "complex128", "int64", "float32"])
    s = g.leaf(shape, dt, rg=g.chance(0.1))
    # never a dual tensor: torch cannot resize make_dual's result ("Trying to resize storage
    # that is not resizable") before its own forward-AD refusal of out= functions
    s.extra["dual"] = False
    return s


def p_out(g: Gen):
    """A function called with ``out=``: PyTorch writes into it (resizing it, casting into its
    dtype or refusing to) and returns it; with inputs that require grad it refuses."""
    ok = (lambda t: _fp(t) and not t.requires_grad) if g.chance(0.7) else _fp
    x = g.pick(ok)
    if x is None:
        return None
    t = g.t(x)
    sh = tuple(t.shape)
    kind = g.weighted({"unary": 1, "binary": 1.5, "reduce": 1})
    args: tuple
    kw: dict = {}
    aux: list = []
    guards: tuple = ()
    if kind == "unary":
        fn = g.pick_of(OUT_UNARY)
        if fn == "sqrt":
            guards = (("cut", 0),)
        if fn == "abs":
            guards = (("nz", 0, 0.1),)
        args, osh = (V(x),), sh
    elif kind == "binary":
        fn = g.pick_of(OUT_BIN)
        if fn in ("maximum", "atan2") and not _real(t):
            return None
        b, aux = _operand(g, sh, _dt(t) if fn in ("maximum", "atan2") else None,
                          scalar=fn not in ("maximum", "atan2"))
        bt = g.t(b.name) if isinstance(b, V) and b.name in g.env else None
        args = (V(x), b)
        osh = _bcast(sh, tuple(bt.shape)) if bt is not None else (
            _bcast(sh, tuple(b.a.shape)) if isinstance(b, D) else sh)
        if osh is None:
            return None
        if fn == "div":
            guards = (("nz", 1, 0.1),)
        if fn == "maximum":
            guards = (("apart", 0, 1),)
        if fn == "atan2":
            guards = (("nz", 0, 0.1), ("nz", 1, 0.1))
    else:
        fn = g.pick_of(OUT_REDUCE)
        if fn == "amax" and not _real(t):
            return None
        if t.dim() == 0 and fn == "cumsum":
            return None
        d = g.rdim(t.dim())
        if fn == "cumsum":
            args, osh = (V(x), d), sh
        else:
            keep = g.chance(0.3)
            args, kw = (V(x), d), ({"keepdim": True} if keep else {})
            if t.dim() == 0:
                osh = ()
            else:
                osh = tuple(1 if i == d % t.dim() else n for i, n in enumerate(sh)) if keep \
                    else tuple(n for i, n in enumerate(sh) if i != d % t.dim())
        if fn == "amax":
            guards = (("distinct", 0, d),)
        if fn == "prod":
            guards = (("nz", 0, 0.1),)
    dt = _dt(t)
    o = g.pick(lambda u: tuple(u.shape) == tuple(osh) and not u.requires_grad
               and u.dtype == t.dtype) if g.chance(0.25) else None
    if o is None:
        ls = _out_tensor(g, tuple(osh), dt)
        aux.append(ls)
        o = ls.out[0]
    return aux + [Stmt("func", (g.fresh(),), fn, args, {**kw, "out": V(o)}, guards=guards)]


def p_overlap(g: Gen):
    """Writes whose source and destination share memory: PyTorch allows full overlap
    (``x.add_(x)``, ``out=`` an input) and refuses partial overlap (``x[1:].copy_(x[:-1])``,
    ``x[1:] = x[:-1]``, ``out=`` shifted over an input) with its overlap error."""
    x = g.pick(lambda t: _fp(t) and t.dim() >= 1 and t.shape[0] >= 2)
    if x is None:
        return None
    t = g.t(x)
    n = t.shape[0]
    k = int(g.rng.integers(1, n))
    dst, srcv = (g.fresh(), g.fresh())
    views = [Stmt("getitem", (dst,), args=(V(x), slice(k, None)), view=True),
             Stmt("getitem", (srcv,), args=(V(x), slice(None, n - k)), view=True)]
    r = g.rng.random()
    if r < 0.25:
        return views + [Stmt("method", (), "copy_", (V(dst), V(srcv)))]
    if r < 0.45:
        return views + [Stmt("setitem", (), args=(V(x), slice(k, None), V(srcv)))]
    if r < 0.6:
        return views + [Stmt("method", (), g.pick_of(["add_", "mul_"]), (V(dst), V(srcv)))]
    if r < 0.75:
        return views + [Stmt("func", (g.fresh(),), g.pick_of(["add", "mul"]),
                             (V(srcv), g.scalar()), {"out": V(dst)})]
    if r < 0.88:   # full overlap: allowed
        return [Stmt("func", (g.fresh(),), g.pick_of(["add", "mul", "sub"]),
                     (V(x), V(x) if g.chance(0.5) else g.scalar()), {"out": V(x)})]
    return [Stmt("method", (), g.pick_of(["add_", "mul_", "copy_"]), (V(x), V(x)))]


# ---- torch.nn.functional (issue 8): layers' arithmetic in the same interactions as the rest


NN_DT = {"float64": 0.7, "float32": 0.3}


def _nn_dt(g: Gen, like: str | None = None) -> str:
    """A weight's dtype: the input's (now and then another, for PyTorch's dtype errors)."""
    if like in FLOAT and not g.chance(0.04):
        return like
    return g.weighted(NN_DT)


def _f(out, name: str, args, kw=None, guards=(), seq=False, writes=()) -> Stmt:
    return Stmt("func", tuple(out), NN + name, tuple(args), dict(kw or {}), guards=guards,
                seq=seq, extra={"writes": tuple(writes)} if writes else {})


def _distinct_data(g: Gen, shape: tuple, dt: str) -> np.ndarray:
    """Values at least 0.01 apart and 0.05 away from 0: max pooling without ties, piecewise
    activations away from their kinks."""
    n = int(np.prod(shape)) if shape else 1
    step = 2.6 / max(n, 2)
    vals = (np.arange(n) - n / 2 + 0.37) * max(step, 0.011)
    vals = np.where(np.abs(vals) < 0.05, vals + 0.1, vals)
    return g.rng.permutation(vals).reshape(shape).astype(dt)


def _nn_fresh(g: Gen, shape: tuple, dt: str, rg=None, data=None) -> tuple:
    """A new real tensor of ``shape``: a leaf, sometimes handed over through a view that makes
    it non-contiguous (a permutation, a step-2 slice) or stride-0 (an expand)."""
    shape = tuple(shape)
    r = g.rng.random()
    mode = "leaf" if r < 0.6 or not shape else "perm" if r < 0.8 and len(shape) >= 2 else \
        "step" if r < 0.93 else "expand"
    if mode == "perm":
        perm = [int(v) for v in g.rng.permutation(len(shape))]
        base = tuple(shape[p] for p in perm)
        inv = tuple(int(v) for v in np.argsort(perm))
    elif mode == "step":
        d = int(g.rng.integers(len(shape)))
        base = tuple(2 * n if i == d else n for i, n in enumerate(shape))
    elif mode == "expand":
        base = tuple(1 if g.chance(0.5) else n for n in shape)
    else:
        base = shape
    s = g.leaf(base, dt, rg)
    if data is not None:
        s.args = (D(data(g, base, dt)),)
    if mode == "leaf":
        return V(s.out[0]), [s]
    out = (g.fresh(),)
    if mode == "perm":
        v = Stmt("method", out, "permute", (V(s.out[0]),) + inv, view=True)
    elif mode == "step":
        idx = tuple([slice(None)] * d + [slice(None, None, 2)])
        v = Stmt("getitem", out, args=(V(s.out[0]), idx), view=True)
    else:
        v = Stmt("method", out, "expand", (V(s.out[0]),) + shape, view=True)
    return V(out[0]), [s, v]


def _nn_tensor(g: Gen, shape: tuple, dt: str | None, exist: float = 0.4, rg=None,
               data=None) -> tuple:
    """A real tensor of ``shape``: an existing variable (whatever its history: a view, a result
    made under no_grad or inference mode, a tensor modified in place), else a fresh one."""
    shape = tuple(shape)
    if g.chance(exist):
        n = g.pick(lambda t: _real(t) and tuple(t.shape) == shape
                   and (dt is None or _dt(t) == dt))
        if n is not None:
            return V(n), []
    return _nn_fresh(g, shape, dt or g.weighted(NN_DT), rg, data)


def _nn_input(g: Gen, pred, shape_fn, dt=None, exist: float = 0.55, data=None) -> tuple:
    """The op's main input: an existing real tensor that ``pred`` accepts, else a new one of
    shape ``shape_fn()``. Returns (name, tensor or None, auxiliary statements)."""
    if g.chance(exist):
        n = g.pick(lambda t: _real(t) and pred(t) and (dt is None or _dt(t) == dt))
        if n is not None:
            return n, g.t(n), []
    v, aux = _nn_fresh(g, shape_fn(), dt or g.weighted(NN_DT), data=data)
    return v.name, None, aux


def _shape_of(g: Gen, name: str, t, aux: list) -> tuple:
    """The shape of an input that is a variable or was just made by ``aux``."""
    if t is not None:
        return tuple(t.shape)
    for s in aux:
        if s.out and s.out[0] == name:
            if s.kind == "leaf":
                return tuple(s.args[0].a.shape)
            if s.fn == "expand":
                return tuple(s.args[1:])
    base = aux[0].args[0].a
    v = aux[1]
    if v.fn == "permute":
        return tuple(base.shape[i] for i in v.args[1:])
    return tuple(np.empty(base.shape)[v.args[1]].shape)


def _dtype_of(name: str, t, aux: list) -> str:
    if t is not None:
        return _dt(t)
    return aux[0].kwargs["dtype"].name


def _spatial(g: Gen, nsp: int, lo: int = 2, hi: int = 6) -> tuple:
    return tuple(int(g.rng.integers(lo, hi + 1)) for _ in range(nsp))


def _tup(g: Gen, v: int, nsp: int):
    """A size argument as PyTorch accepts it: an int, or a tuple over the spatial dims."""
    return v if nsp == 1 or g.chance(0.5) else tuple(v for _ in range(nsp))


# name: (guard points (None: smooth), in-place spellings ("kw": inplace=True, "_": name_),
# keyword options)
NN_ACT = {
    "relu": ((0.0,), ("kw", "_"), {}), "relu6": ((0.0, 6.0), ("kw",), {}),
    "leaky_relu": ((0.0,), ("kw", "_"), {"negative_slope": (0.01, 0.2, -0.5)}),
    "elu": ((0.0,), ("kw", "_"), {"alpha": (1.0, 0.5)}), "celu": ((0.0,), ("kw", "_"),
                                                             {"alpha": (1.0, 2.0)}),
    "selu": ((0.0,), ("kw", "_"), {}), "gelu": (None, (), {"approximate": ("none", "tanh")}),
    "silu": (None, ("kw",), {}), "mish": (None, ("kw",), {}),
    "softplus": (None, (), {"beta": (1.0, 2.0), "threshold": (20.0, 1.0)}),
    "hardtanh": (None, ("kw", "_"), {}), "hardsigmoid": ((-3.0, 3.0), ("kw",), {}),
    "hardswish": ((-3.0, 3.0), ("kw",), {}), "sigmoid": (None, (), {}), "tanh": (None, (), {}),
    "logsigmoid": (None, (), {}), "softsign": ((0.0,), (), {}), "tanhshrink": (None, (), {}),
    "softshrink": ((-0.5, 0.5), (), {}), "hardshrink": ((-0.5, 0.5), (), {}),
    "threshold": (None, ("kw", "_"), {}), "rrelu": ((0.0,), ("kw", "_"), {}),
}
NN_ACT_W = {"relu": 3, "leaky_relu": 1.5, "elu": 1, "gelu": 1.2, "silu": 1, "softplus": 1,
            "hardtanh": 1.2, "sigmoid": 0.8, "tanh": 0.8, "relu6": 0.4, "celu": 0.4,
            "selu": 0.4, "mish": 0.5, "hardsigmoid": 0.4, "hardswish": 0.4, "logsigmoid": 0.4,
            "softsign": 0.3, "tanhshrink": 0.3, "softshrink": 0.3, "hardshrink": 0.3,
            "threshold": 0.5, "rrelu": 0.4}


def _nn_act(g: Gen):
    """Activations, often in place (``inplace=True`` or the ``relu_`` spelling) on whatever
    the program has: a leaf (PyTorch refuses), a view, a tensor saved by an earlier op."""
    name = g.weighted(NN_ACT_W)
    pts, inplace, opts = NN_ACT[name]
    x, t, aux = _nn_input(g, lambda u: True, g.rand_shape, exist=0.75)
    kw = {k: g.pick_of(v) for k, v in opts.items() if g.chance(0.5)}
    args: tuple = (V(x),)
    if name == "softplus":
        beta, th = kw.get("beta", 1.0), kw.get("threshold", 20.0)
        pts = (th / beta,)
    if name in ("hardtanh", "threshold"):
        a = to_np(t) if t is not None and t.numel() else np.array([-1.0, 1.0])
        lo, hi = (float(np.round(np.quantile(a, q) + 0.011, 3)) for q in sorted(
            g.rng.uniform(0.1, 0.9, 2)))
        hi = max(hi, lo + 0.15)
        if name == "hardtanh":
            if g.chance(0.7):
                kw.update(min_val=lo, max_val=hi)
            pts = (kw.get("min_val", -1.0), kw.get("max_val", 1.0))
        else:
            args, pts = (V(x), lo, g.pick_of([0.0, -2.0, 0.5])), (lo,)
    if name == "rrelu":
        kw["training"] = False
    if name == "softshrink" or name == "hardshrink":
        if g.chance(0.5):
            kw["lambd"] = 0.25
            pts = (-0.25, 0.25)
    fn = name
    ip = g.pick_of(list(inplace)) if inplace and g.chance(0.5) else None
    if ip == "kw":
        kw["inplace"] = True
    elif ip == "_":
        fn = name + "_"
        kw.pop("inplace", None)
    guards = (("away", 0, pts),) if pts else ()
    return aux + [_f((g.fresh(),), fn, args, kw, guards=guards)]


def _nn_softmax(g: Gen):
    x, t, aux = _nn_input(g, lambda u: True, g.rand_shape, exist=0.75)
    nd = len(_shape_of(g, x, t, aux))
    fn = g.weighted({"softmax": 2, "log_softmax": 2, "softmin": 0.5, "glu": 0.6})
    d = g.rdim(nd)
    if fn == "glu":
        return aux + [_f((g.fresh(),), fn, (V(x),), {"dim": d} if g.chance(0.7) else {})]
    kw = {"dim": d}
    if g.chance(0.2):
        kw["dtype"] = Dt(g.pick_of(FLOAT))
    return aux + [_f((g.fresh(),), fn, (V(x),), kw)]


def _nn_dropout(g: Gen):
    """Dropout where it is deterministic: p=0 or training=False (the input itself, or a
    copy), p=1 in training (zeros), in place or not."""
    fn = g.weighted({"dropout": 3, "dropout1d": 0.4, "dropout2d": 0.6, "alpha_dropout": 0.4,
                     "feature_alpha_dropout": 0.3})
    pred = (lambda u: u.dim() in (2, 3)) if fn == "dropout1d" else \
        (lambda u: u.dim() in (3, 4)) if fn == "dropout2d" else (lambda u: True)
    shape = (lambda: (2, 3, 4)) if fn in ("dropout1d", "dropout2d") else g.rand_shape
    x, t, aux = _nn_input(g, pred, shape, exist=0.8)
    r = g.rng.random()
    if r < 0.45:
        p, training = g.pick_of([0.5, 0.2, 0.0]), False
    elif r < 0.8:
        p, training = 0.0, True
    else:
        p, training = 1.0, True
    kw = {"p": p, "training": training}
    if g.chance(0.4):
        kw["inplace"] = True
    return aux + [_f((g.fresh(),), fn, (V(x),), kw)]


def _nn_linear(g: Gen):
    x, t, aux = _nn_input(g, lambda u: 1 <= u.dim() <= 3 and u.shape[-1] >= 1,
                          lambda: g.pick_of([(3,), (2, 3), (4, 2), (2, 2, 3)]))
    sh = _shape_of(g, x, t, aux)
    dt = _dtype_of(x, t, aux)
    fout = int(g.rng.integers(1, 5))
    w, a2 = _nn_tensor(g, (fout, sh[-1]), _nn_dt(g, dt))
    args = [V(x), w]
    if g.chance(0.6):
        b, a3 = _nn_tensor(g, g.pick_of([(fout,), (fout,), ()]), _nn_dt(g, dt))
        a2 += a3
        args.append(b)
    if g.chance(0.1):
        fn = "bilinear"
        w3, a4 = _nn_tensor(g, (fout, sh[-1], sh[-1]), _nn_dt(g, dt))
        return aux + a2 + a4 + [_f((g.fresh(),), fn, (V(x), V(x), w3))]
    return aux + a2 + [_f((g.fresh(),), "linear", args)]


def _nn_conv(g: Gen):
    """conv1d / conv2d over small shapes: stride, padding (ints, tuples, 'same', 'valid'),
    dilation, groups; batched or not; weights that are views."""
    nsp = 1 if g.chance(0.4) else 2
    fn = f"conv{nsp}d"
    groups = g.pick_of([1, 1, 1, 2, 3])
    x, t, aux = _nn_input(g, lambda u: u.dim() in (nsp + 1, nsp + 2) and u.numel() > 0, lambda: (
        (int(g.rng.integers(1, 3)),) if g.chance(0.7) else ()) + (groups * int(
            g.rng.integers(1, 3)),) + _spatial(g, nsp, 3, 6), exist=0.35)
    sh = _shape_of(g, x, t, aux)
    dt = _dtype_of(x, t, aux)
    cin = sh[-nsp - 1]
    if cin % groups:
        groups = 1
    cout = groups * int(g.rng.integers(1, 3))
    k = tuple(int(g.rng.integers(1, 4)) for _ in range(nsp))
    # weight and bias of the input's dtype: with another, torch's error (or its silence: a
    # float64 bias with padding='same' on the slow path) depends on the backend it picks
    # (mkldnn for float32 by size, stride and thread count), which ember does not model
    w, a2 = _nn_tensor(g, (cout, cin // groups) + k, dt)
    kw: dict = {}
    stride = int(g.pick_of([1, 1, 2]))
    if stride != 1:
        kw["stride"] = _tup(g, stride, nsp)
    r = g.rng.random()
    if r < 0.3:
        kw["padding"] = _tup(g, int(g.rng.integers(1, 3)), nsp)
    elif r < 0.4:
        kw["padding"] = g.pick_of(["same", "valid"])
    if g.chance(0.25):
        kw["dilation"] = _tup(g, 2, nsp)
    if groups != 1:
        kw["groups"] = groups
    args = [V(x), w]
    if g.chance(0.6):
        b, a3 = _nn_tensor(g, (cout,), dt)
        a2 += a3
        args.append(b)
    return aux + a2 + [_f((g.fresh(),), fn, args, kw)]


def _pool_params(g: Gen, nsp: int, sp: tuple) -> tuple:
    k = tuple(int(g.rng.integers(1, min(3, max(n, 1)) + 1)) for n in sp)
    st = tuple(int(g.rng.integers(1, 3)) for _ in sp) if g.chance(0.6) else k
    pad = tuple(int(g.rng.integers(0, kk // 2 + 1)) for kk in k) if g.chance(0.4) else \
        (0,) * nsp
    dil = (1,) * nsp
    return k, st, pad, dil


def _nn_pool(g: Gen):
    """max_pool1d/2d (with and without indices), avg_pool1d/2d, adaptive pools."""
    fn = g.weighted({"max_pool2d": 2, "max_pool1d": 0.6, "avg_pool2d": 1.5, "avg_pool1d": 0.5,
                     "adaptive_avg_pool2d": 1, "adaptive_avg_pool1d": 0.4,
                     "adaptive_max_pool2d": 0.4})
    nsp = 1 if "1d" in fn else 2
    x, t, aux = _nn_input(g, lambda u: u.dim() in (nsp + 1, nsp + 2) and u.numel() > 0, lambda: (
        (int(g.rng.integers(1, 3)),) if g.chance(0.6) else ()) + (int(
            g.rng.integers(1, 4)),) + _spatial(g, nsp, 2, 6), exist=0.5, data=_distinct_data)
    sh = _shape_of(g, x, t, aux)
    sp = sh[-nsp:]
    out = (g.fresh(),)
    if fn.startswith("adaptive"):
        osz = tuple(int(g.rng.integers(1, max(n, 1) + 2)) for n in sp)
        arg = osz[0] if nsp == 1 or g.chance(0.3) and len(set(osz)) == 1 else \
            (None, osz[1]) if g.chance(0.2) else osz
        if fn == "adaptive_max_pool2d":
            idx = g.chance(0.4)
            return aux + [_f(out + ((g.fresh(),) if idx else ()), fn, (V(x), arg),
                             {"return_indices": True} if idx else {},
                             guards=(("distinct", 0, None),), seq=idx)]
        return aux + [_f(out, fn, (V(x), arg))]
    k, st, pad, dil = _pool_params(g, nsp, sp)
    kw: dict = {}
    if st != k or g.chance(0.3):
        kw["stride"] = st if nsp == 2 else st[0]
    if any(pad):
        kw["padding"] = pad if nsp == 2 else pad[0]
    ceil = g.chance(0.25)
    if ceil:
        kw["ceil_mode"] = True
    karg = k if nsp == 2 and (len(set(k)) > 1 or g.chance(0.5)) else k[0]
    if fn.startswith("avg"):
        if g.chance(0.3):
            kw["count_include_pad"] = False
        if nsp == 2 and g.chance(0.15):
            kw["divisor_override"] = 3
        return aux + [_f(out, fn, (V(x), karg), kw)]
    if g.chance(0.2):
        dil = tuple(int(g.rng.integers(1, 3)) for _ in range(nsp))
        kw["dilation"] = dil if nsp == 2 else dil[0]
    idx = g.chance(0.4)
    if idx:
        kw["return_indices"] = True
        out = out + (g.fresh(),)
    guard = ("pool", 0, k, st if "stride" in kw else k, pad, dil, ceil)
    return aux + [_f(out, fn, (V(x), karg), kw, guards=(guard,), seq=idx)]


def _affine(g: Gen, shape: tuple, dt: str, p: float = 0.6) -> tuple:
    """An optional affine parameter (weight or bias) of ``shape``: (arg or None, aux)."""
    if not g.chance(p):
        return None, []
    return _nn_tensor(g, shape, _nn_dt(g, dt))


def _nn_norm(g: Gen):
    fn = g.weighted({"layer_norm": 2, "group_norm": 1.2, "batch_norm": 2.5, "normalize": 1,
                     "rms_norm": 0.6, "instance_norm": 0.4})
    out = (g.fresh(),)
    if fn in ("layer_norm", "rms_norm"):
        x, t, aux = _nn_input(g, lambda u: u.dim() >= 1, lambda: g.pick_of([(2, 3), (3, 4), (
            2, 2, 3), (4,)]))
        sh, dt = _shape_of(g, x, t, aux), _dtype_of(x, t, aux)
        k = int(g.rng.integers(1, min(len(sh), 2) + 1))
        ns = sh[len(sh) - k:]
        b, a3 = _affine(g, ns, dt) if fn == "layer_norm" else (None, [])
        # a bias without a weight sometimes: torch's double backward of it fails (INTERNAL)
        w, a2 = _affine(g, ns, dt, 0.9 if b is not None else 0.6)
        a2 += a3
        kw: dict = {}
        if w is not None:
            kw["weight"] = w
        if b is not None:
            kw["bias"] = b
        if g.chance(0.2):
            kw["eps"] = 1e-3
        nsa = list(ns) if g.chance(0.5) else tuple(ns)
        guard = ("spread", 0, "rms" if fn == "rms_norm" else "last", k)
        return aux + a2 + [_f(out, fn, (V(x), nsa), kw, guards=(guard,))]
    if fn == "normalize":
        x, t, aux = _nn_input(g, lambda u: u.dim() >= 1, g.rand_shape)
        nd = len(_shape_of(g, x, t, aux))
        d = g.rdim(max(nd, 1))
        p = g.pick_of([2.0, 2.0, 1.0, 3.0])
        guards: tuple = (("norm", 0, d),)
        if p == 1.0:
            guards += (("nz", 0, 0.05),)
        return aux + [_f(out, fn, (V(x),), {"p": p, "dim": d}, guards=guards)]
    x, t, aux = _nn_input(g, lambda u: u.dim() >= 2 and u.shape[0] >= 1, lambda: (
        int(g.rng.integers(1, 4)), int(g.rng.integers(1, 4))) + _spatial(
            g, int(g.rng.integers(0, 3)), 2, 3))
    sh, dt = _shape_of(g, x, t, aux), _dtype_of(x, t, aux)
    c = sh[1]
    if fn == "group_norm":
        gs = [d for d in range(1, c + 1) if c % d == 0]
        ng = g.pick_of(gs)
        b, a3 = _affine(g, (c,), dt)
        # never a bias without a weight: torch 2.13's group_norm backward then fails when the
        # bias requires grad ("shape '[0]' is invalid for input of size 3", "tensor does not
        # have a device"); ember's gradients are right
        w, a2 = _affine(g, (c,), dt, 1.0 if b is not None else 0.6)
        kw = {k: v for k, v in (("weight", w), ("bias", b)) if v is not None}
        return aux + a2 + a3 + [_f(out, fn, (V(x), ng), kw, guards=(
            ("spread", 0, "group", ng),))]
    if fn == "instance_norm":
        return aux + [_f(out, fn, (V(x),), {}, guards=(("spread", 0, "last", len(sh) - 2),))] \
            if len(sh) >= 3 else None
    return _batch_norm(g, x, sh, dt, aux, out)


def _running(g: Gen, c: int, dt: str, var: bool) -> tuple:
    """A running statistic: an existing tensor of shape (C,) that does not overlap itself
    (a view, a result of earlier statements) or a new leaf, sometimes a view of a bigger
    buffer. Its update by batch_norm in training is observed like any in-place write."""
    if g.chance(0.35):
        n = g.pick(lambda t: _real(t) and tuple(t.shape) == (c,) and _dt(t) == dt
                   and 0 not in t.stride() and not t.requires_grad
                   and (not var or bool((to_np(t) > 0.1).all())))
        if n is not None:
            return V(n), []
    rg = g.chance(0.05)
    if g.chance(0.3):
        s = g.leaf((2 * c,), dt, rg=rg)
        s.args = (D(g.rng.uniform(0.3, 1.7, 2 * c).astype(dt) if var else
                    g.rand_data((2 * c,), dt)),)
        s.extra["dual"] = False
        v = Stmt("getitem", (g.fresh(),), args=(V(s.out[0]), slice(
            int(g.rng.integers(0, 2)), None, 2)), view=True)
        return V(v.out[0]), [s, v]
    s = g.leaf((c,), dt, rg=rg)
    if var:
        s.args = (D(g.rng.uniform(0.3, 1.7, c).astype(dt)),)
    s.extra["dual"] = g.chance(0.1)
    return V(s.out[0]), [s]


def _batch_norm(g: Gen, x: str, sh: tuple, dt: str, aux: list, out: tuple):
    """batch_norm in eval mode (given running statistics) and in training (batch statistics;
    running statistics, when given, updated in place)."""
    c = sh[1]
    training = g.chance(0.55)
    rm = rv = None
    a2: list = []
    if not training or g.chance(0.75):
        rm, a2 = _running(g, c, _nn_dt(g, dt), var=False)
        rv, a3 = _running(g, c, _nn_dt(g, dt), var=True)
        a2 += a3
    w, a4 = _affine(g, (c,), dt)
    b, a5 = _affine(g, (c,), dt)
    kw: dict = {k: v for k, v in (("weight", w), ("bias", b)) if v is not None}
    if training:
        kw["training"] = True
        if g.chance(0.3):
            kw["momentum"] = g.pick_of([0.5, 1.0, 0.0])
    elif g.chance(0.2):
        kw["training"] = False
    if g.chance(0.2):
        kw["eps"] = 1e-3
    guards = (("bn_layout", 0),) + ((("spread", 0, "channel", None),) if training else ())
    writes = (1, 2) if training and rm is not None else ()
    return aux + a2 + a4 + a5 + [_f(out, "batch_norm", (V(x), rm, rv), kw, guards=guards,
                                    writes=writes)]


def _nn_pad(g: Gen):
    """pad: constant (negative pads crop), reflect, replicate, circular."""
    mode = g.weighted({"constant": 2, "reflect": 1, "replicate": 1, "circular": 0.7})
    x, t, aux = _nn_input(g, lambda u: u.dim() >= 2 and u.numel() > 0, lambda: (
        int(g.rng.integers(1, 3)),) + _spatial(g, int(g.rng.integers(1, 3)), 2, 4))
    sh = _shape_of(g, x, t, aux)
    k = int(g.rng.integers(1, min(3, len(sh) - 1) + 1)) if mode != "constant" else \
        int(g.rng.integers(1, len(sh) + 1))
    pads = []
    for n in reversed(sh[len(sh) - k:]):
        for _ in range(2):
            hi = n - 1 if mode == "reflect" else n if mode == "circular" else 2
            v = int(g.rng.integers(0, max(0, min(hi, 2)) + 1))
            if mode == "constant" and g.chance(0.15):
                v = -int(g.rng.integers(1, max(1, n // 2) + 1))
            pads.append(v)
    kw: dict = {}
    if mode != "constant":
        kw["mode"] = mode
    elif g.chance(0.5):
        kw["value"] = g.pick_of([0.5, -1.0, 2.0])
    return aux + [_f((g.fresh(),), "pad", (V(x), tuple(pads)), kw)]


def _nn_interp(g: Gen):
    mode = g.weighted({"nearest": 2, "bilinear": 2, "linear": 0.5, "nearest-exact": 0.5})
    nd = 3 if mode == "linear" else 4 if mode == "bilinear" else g.pick_of([3, 4])
    x, t, aux = _nn_input(g, lambda u: u.dim() == nd and u.numel() > 0, lambda: (
        int(g.rng.integers(1, 3)), int(g.rng.integers(1, 3))) + _spatial(g, nd - 2, 2, 4))
    sh = _shape_of(g, x, t, aux)
    kw: dict = {"mode": mode}
    if g.chance(0.5):
        sz = tuple(int(g.rng.integers(1, 7)) for _ in sh[2:])
        kw["size"] = sz if len(sz) > 1 or g.chance(0.5) else sz[0]
    else:
        kw["scale_factor"] = g.pick_of([2, 2.0, 1.5, 0.5, (2, 1.5)[:nd - 2]])
    if mode in ("bilinear", "linear") and g.chance(0.5):
        kw["align_corners"] = g.pick_of([True, False])
    return aux + [_f((g.fresh(),), "interpolate", (V(x),), kw)]


def _nn_embedding(g: Gen):
    w, t, aux = _nn_input(g, lambda u: u.dim() == 2 and u.shape[0] >= 1,
                          lambda: (int(g.rng.integers(2, 6)), int(g.rng.integers(1, 4))))
    n, _ = _shape_of(g, w, t, aux)
    ish = g.pick_of([(3,), (2, 2), (), (4,)])
    idx = D(g.rng.integers(0, n, size=ish).astype(np.int64))
    kw: dict = {}
    writes: tuple = ()
    if g.chance(0.3):
        kw["padding_idx"] = int(g.rng.integers(-n, n))
    # no scale_grad_by_freq: ember's double backward keeps the frequency scale where PyTorch's
    # drops it (README, known differences), so second-order gradients would differ on purpose
    if g.chance(0.15):
        # rows of the weight that are looked up are renormed in place, outside autograd
        kw["max_norm"] = g.pick_of([1.0, 0.5])
        writes = (1,)
    return aux + [_f((g.fresh(),), "embedding", (idx, V(w)), kw, writes=writes)]


def _nn_distance(g: Gen):
    fn = g.pick_of(["cosine_similarity", "pairwise_distance"])
    x, t, aux = _nn_input(g, lambda u: u.dim() >= 1 and u.numel() > 0,
                          lambda: g.pick_of([(2, 3), (3,), (2, 2, 3)]))
    sh, dt = _shape_of(g, x, t, aux), _dtype_of(x, t, aux)
    y, a2 = _nn_tensor(g, _sub_shape(g, sh) if g.chance(0.3) else sh, dt)
    if fn == "cosine_similarity":
        d = g.rdim(len(sh))
        kw = {"dim": d} if g.chance(0.7) else {}
        return aux + a2 + [_f((g.fresh(),), fn, (V(x), y), kw, guards=(
            ("norm", 0, kw.get("dim", 1)), ("norm", 1, kw.get("dim", 1))))]
    kw = {}
    if g.chance(0.4):
        kw["p"] = g.pick_of([1.0, 3.0])
    if g.chance(0.3):
        kw["keepdim"] = True
    return aux + a2 + [_f((g.fresh(),), fn, (V(x), y), kw, guards=(("apart", 0, 1),))]


NN_RED = ("mean", "sum", "none")


def _nn_loss(g: Gen):
    fn = g.weighted({"mse_loss": 1.5, "l1_loss": 1, "smooth_l1_loss": 1, "huber_loss": 0.5,
                     "cross_entropy": 2, "nll_loss": 1.2,
                     "binary_cross_entropy_with_logits": 1.2, "kl_div": 0.4})
    kw: dict = {}
    if g.chance(0.7):
        kw["reduction"] = g.pick_of(list(NN_RED))
    out = (g.fresh(),)
    if fn in ("cross_entropy", "nll_loss"):
        return _class_loss(g, fn, kw, out)
    x, t, aux = _nn_input(g, lambda u: True, g.rand_shape, exist=0.7)
    sh, dt = _shape_of(g, x, t, aux), _dtype_of(x, t, aux)
    tsh = _sub_shape(g, sh) if g.chance(0.15) else sh
    r = g.rng.random()
    if fn == "binary_cross_entropy_with_logits":
        tgt = D(g.rng.uniform(0, 1, tsh).astype(dt)) if r < 0.6 else None
        if tgt is None:
            s = g.leaf(tsh, dt)
            s.args = (D(g.rng.uniform(0, 1, tsh).astype(dt)),)
            aux, tgt = aux + [s], V(s.out[0])
        if g.chance(0.3) and sh:
            s = g.leaf((sh[-1],), dt, rg=g.chance(0.3))
            s.args = (D(g.rng.uniform(0.3, 2, (sh[-1],)).astype(dt)),)
            aux, kw["pos_weight"] = aux + [s], V(s.out[0])
        if g.chance(0.2):
            kw["weight"] = D(g.rng.uniform(0.3, 2, _sub_shape(g, sh)).astype(dt))
        return aux + [_f(out, fn, (V(x), tgt), kw)]
    if r < 0.35:
        tgt, a2 = D(g.rand_data(tsh, dt)), []
    else:
        tgt, a2 = _nn_tensor(g, tsh, dt, exist=0.5)
    guards: tuple = ()
    if fn == "l1_loss":
        guards = (("diffaway", 0, 1, (0.0,)),)
    if fn in ("smooth_l1_loss", "huber_loss"):
        key = "beta" if fn == "smooth_l1_loss" else "delta"
        b = g.pick_of([1.0, 0.5, 0.25])
        if g.chance(0.6):
            kw[key] = b
        b = kw.get(key, 1.0)
        guards = (("diffaway", 0, 1, (-b, b)),)
    if fn == "kl_div":
        if g.chance(0.5):
            kw["log_target"] = True
        elif isinstance(tgt, D):
            tgt = D(np.abs(tgt.a) + 0.1)
        else:
            guards = (("pos", 1, 0.1),)
    return aux + a2 + [_f(out, fn, (V(x), tgt), kw, guards=guards)]


def _class_loss(g: Gen, fn: str, kw: dict, out: tuple):
    """cross_entropy / nll_loss: input (C,), (N, C) or (N, C, d); class-index targets (with
    weight, ignore_index) or, for cross_entropy, class probabilities (label_smoothing too)."""
    x, t, aux = _nn_input(g, lambda u: 1 <= u.dim() <= 3 and u.numel() > 0, lambda: g.pick_of(
        [(2, 3), (3,), (4, 2), (2, 3, 2), (1, 4)]), exist=0.5)
    sh, dt = _shape_of(g, x, t, aux), _dtype_of(x, t, aux)
    c = sh[0] if len(sh) == 1 else sh[1]
    tsh = () if len(sh) == 1 else (sh[0],) + sh[2:]
    if fn == "cross_entropy" and g.chance(0.3):
        p = g.rng.uniform(0.1, 1, sh)
        p = p / p.sum(axis=0 if len(sh) == 1 else 1, keepdims=True)
        tgt: object = D(p.astype(dt))
    else:
        tgt = D(g.rng.integers(0, c, size=tsh).astype(np.int64))
        if g.chance(0.25):
            kw["ignore_index"] = int(g.rng.integers(0, c))
    if g.chance(0.3):
        kw["weight"] = D(g.rng.uniform(0.3, 2, (c,)).astype(dt))
    if fn == "cross_entropy" and g.chance(0.3):
        kw["label_smoothing"] = g.pick_of([0.1, 0.25])
    return aux + [_f(out, fn, (V(x), tgt), kw)]


NN_FAMILIES = {_nn_act: 3, _nn_softmax: 1, _nn_dropout: 1, _nn_linear: 1.2, _nn_conv: 1.5,
               _nn_pool: 1.5, _nn_norm: 2, _nn_pad: 0.8, _nn_interp: 0.6, _nn_embedding: 0.5,
               _nn_distance: 0.6, _nn_loss: 2}
NN_AFTER = (("mul_", (-0.5,)), ("add_", (0.25,)), ("relu_", ()), ("zero_", ()),
            ("sigmoid_", ()))


def p_nn(g: Gen):
    """torch.nn.functional calls on the program's tensors (views, non-contiguous operands,
    results made under no_grad or inference mode), in place where PyTorch offers it, their
    results sometimes modified in place right after (the in-place write must invalidate what
    the op saved for backward)."""
    f = g.weighted(NN_FAMILIES)
    stmts = f(g)
    if not stmts:
        return None
    last = stmts[-1]
    if last.out and g.chance(0.2):
        fn, args = g.pick_of(list(NN_AFTER))
        guards = (("away", 0, (0.0,)),) if fn == "relu_" else ()
        stmts.append(Stmt("method", (), fn, (V(last.out[0]),) + args, guards=guards))
    return stmts


PROPOSALS = {p_leaf: 0.08, p_unary: 0.12, p_scalar: 0.08, p_binary: 0.12, p_reduce: 0.08,
             p_multi: 0.04, p_split: 0.04, p_index: 0.05, p_view: 0.15, p_inplace: 0.17,
             p_matmul: 0.03, p_cat: 0.03, p_where: 0.03, p_misc: 0.07, p_block: 0.04,
             p_int: 0.05, p_out: 0.05, p_overlap: 0.03, p_nn: 0.12}


def _close_block(g: Gen) -> None:
    g.open[-1][1] -= 1
    while g.open and g.open[-1][1] <= 0:
        g.open.pop()
        if g.open:
            g.open[-1][1] -= 1


def generate(seed: int) -> Program:
    """A random program (deterministic in ``seed``), valid in torch unless it ends in an
    error that torch raises (then ember must raise the same)."""
    g = Gen(seed)
    target = int(g.rng.integers(3, 22))
    for _ in range(int(g.rng.integers(1, 4))):
        g.try_add(g.leaf())
    count = tries = 0
    while count < target and tries < target * 6 and not g.done:
        tries += 1
        n0 = g.n
        f = g.weighted(PROPOSALS)
        try:
            s = f(g)
        except (IndexError, ValueError, ZeroDivisionError, RuntimeError):
            s = None   # a proposal tripping over an odd shape: draw another
        if s is None or s == []:
            g.n = n0
            continue
        st = g.try_add(s)
        if st in ("ok", "raised-kept"):
            count += 1
            if g.open:
                _close_block(g)
        else:
            g.n = n0
    g.open.clear()
    g.stmts[:] = prune_empty(g.stmts)
    if not g.done:
        add_tail(g)
    return renumber(Program(seed, g.stmts))


def add_tail(g: Gen) -> None:
    """Reduce some outputs to a scalar loss and differentiate it: backward(), backward with
    inputs=, twice with retain_graph, or autograd.grad with create_graph then a second grad."""
    live = g.tensors(lambda t: _fp(t) and t.requires_grad and not t.is_inference())
    if not live:
        return
    recent = live[-6:]
    k = int(g.rng.integers(1, min(3, len(recent)) + 1))
    roots = [recent[i] for i in sorted(g.rng.choice(len(recent), k, replace=False))]
    loss = Stmt("loss", ("loss",), args=tuple(V(r) for r in roots))
    leaves = g.tensors(lambda t: _fp(t) and t.requires_grad and t.is_leaf)
    variant = g.weighted({"backward": 0.4, "inputs": 0.15, "twice": 0.07, "grad": 0.38})
    if variant == "grad" and leaves:
        ins = leaves + ([g.pick_of(live)] if g.chance(0.3) else [])
        ins = list(dict.fromkeys(ins))
        outs = tuple(f"g{i}" for i in range(len(ins)))
        gs = Stmt("grad", outs, "grad", (V("loss"), [V(n) for n in ins]),
                  {"create_graph": True, "allow_unused": True}, seq=True)
        if _tail_try(g, [loss, gs]) != "ok":
            return
        rg = [o for o in outs if isinstance(g.env[o], torch.Tensor) and g.env[o].requires_grad]
        if rg and not _constant_in_torch(g, rg, ins):
            l2 = Stmt("loss", ("loss2",), args=tuple(V(o) for o in rg))
            g2 = Stmt("grad", tuple(f"h{i}" for i in range(len(ins))), "grad2",
                      (V("loss2"), [V(n) for n in ins]), {"allow_unused": True}, seq=True)
            _tail_try(g, [l2, g2])
        return
    if variant == "inputs":
        pool = list(dict.fromkeys(leaves + live))
        ins = [pool[i] for i in sorted(g.rng.choice(len(pool), min(len(pool), int(
            g.rng.integers(1, 4))), replace=False))]
        back = [Stmt("backward", args=(V("loss"),), kwargs={"inputs": [V(n) for n in ins]})]
    elif variant == "twice":
        back = [Stmt("backward", args=(V("loss"),), kwargs={"retain_graph": True}),
                Stmt("backward", args=(V("loss"),))]
    else:
        back = [Stmt("backward", args=(V("loss"),))]
    _tail_try(g, [loss] + back)


def _constant_in_torch(g: Gen, outs: list, ins: list) -> bool:
    """Whether the gradients ``outs`` are constants that torch's graph merely connects: the
    second-order gradients of their loss are all None or zero. A fused backward node (conv,
    layer_norm, batch_norm...: ConvolutionBackwardBackward0) makes every gradient it returns
    require grad when any of its inputs does; ember's formulas, written with ember ops, connect
    only what each gradient depends on, so its constant gradients have no graph and a second
    grad of them alone raises. Which constants carry a graph is torch's implementation detail,
    not a contract: such a second grad is not generated."""
    try:
        loss2 = Run(torch, "rev", observe=False).loss([g.env[o] for o in outs])
        hs = torch.autograd.grad(loss2, [g.env[n] for n in ins], allow_unused=True,
                                 retain_graph=True)
    except RuntimeError:
        return False
    return all(h is None or not bool(h.any()) for h in hs)


def _tail_try(g: Gen, stmts: list) -> str:
    g.stmts.extend(stmts)
    try:
        r = Run(torch, "rev", check=True, observe=False).run(g.stmts)
    except Invalid:
        del g.stmts[-len(stmts):]
        return "invalid"
    if r.raised is not None:
        g.done = True
        return "raised"
    g.env, g.order = r.env, r.order
    return "ok"


# --------------------------------------------------------------------------------------------
# the minimiser


def _prune(stmts: list, removed: set) -> list:
    """Drop statements that use a removed variable (lists of inputs and loss terms lose the
    element instead)."""
    out = []
    for s in stmts:
        if s.kind == "block":
            out.append(replace(s, body=_prune(s.body, removed)))
            continue
        if s.kind == "loss":
            args = tuple(a for a in s.args if a.name not in removed)
            if not args:
                removed.update(s.out)
                continue
            s = replace(s, args=args) if len(args) != len(s.args) else s
        elif s.kind == "grad":
            s = _prune_grad(s, removed)
            if s is None:
                continue
        elif s.kind == "backward" and "inputs" in s.kwargs:
            ins = [a for a in s.kwargs["inputs"] if a.name not in removed]
            if not ins or s.args[0].name in removed:
                continue
            s = replace(s, kwargs={**s.kwargs, "inputs": ins})
        elif uses(s) & removed:
            removed.update(s.out)
            continue
        out.append(s)
    return out


def _prune_grad(s: Stmt, removed: set):
    ins = s.args[1]
    keep = [i for i, a in enumerate(ins) if a.name not in removed]
    if s.args[0].name in removed or not keep:
        removed.update(s.out)
        return None
    if len(keep) == len(ins):
        return s
    removed.update(o for i, o in enumerate(s.out) if i not in keep)
    return replace(s, args=(s.args[0], [ins[i] for i in keep]),
                   out=tuple(s.out[i] for i in keep))


def _outs(s: Stmt) -> set:
    return {o for _, x in walk([s]) for o in x.out}


def _edit(stmts: list, path: tuple, fn) -> list:
    """``stmts`` with the statement at ``path`` replaced by the list ``fn(stmt)``."""
    i = path[0]
    if len(path) == 1:
        return stmts[:i] + fn(stmts[i]) + stmts[i + 1:]
    blk = stmts[i]
    return stmts[:i] + [replace(blk, body=_edit(blk.body, path[1:], fn))] + stmts[i + 1:]


def _get(stmts: list, path: tuple) -> Stmt:
    s = stmts[path[0]]
    return s if len(path) == 1 else _get(s.body, path[1:])


def without(prog: Program, path: tuple) -> Program:
    removed = _outs(_get(prog.stmts, path))
    new = _edit(prog.stmts, path, lambda s: [])
    return replace(prog, stmts=prune_empty(_prune(new, removed)))


def _variants(prog: Program, path: tuple, s: Stmt):
    """Smaller or simpler versions of ``prog`` around the statement at ``path``."""
    yield without(prog, path)
    if s.kind == "block":
        yield replace(prog, stmts=_edit(prog.stmts, path, lambda b: list(b.body)))
    if s.kind == "leaf":
        yield from _leaf_variants(prog, path, s)
    if s.kind == "method" and s.fn == "register_hook" and s.args[1].scale is not None:
        hk = replace(s.args[1], scale=None)
        yield replace(prog, stmts=_edit(prog.stmts, path, lambda x: [
            replace(x, args=(x.args[0], hk))]))


def _leaf_variants(prog: Program, path: tuple, s: Stmt):
    a, tan = s.args[0].a, s.extra["tan"]

    def with_data(a2, t2, **kw):
        return replace(prog, stmts=_edit(prog.stmts, path, lambda x: [replace(
            x, args=(D(a2),), kwargs={**x.kwargs, **kw}, extra={**x.extra, "tan": t2})]))
    for d, n in enumerate(a.shape):
        for k in (1, 2):
            if n > k:
                yield with_data(np.take(a, np.arange(k), d), np.take(tan, np.arange(k), d))
    r = np.round(a, 1)
    if not np.array_equal(r, a):
        yield with_data(r, np.round(tan, 1))
    if prog.mode == "rev" and s.kwargs.get("requires_grad"):
        yield with_data(a, tan, requires_grad=False)


def minimize(prog: Program, finding: Finding, budget: int = 300,
             seconds: float = 60.0) -> tuple:
    """Drop statements and simplify data while the same kind of disagreement persists.
    Returns (smallest program, its finding)."""
    key = finding.key
    t_end = time.monotonic() + seconds
    evals = 0
    best, bestf = prog, finding
    progress = True
    while progress and evals < budget and time.monotonic() < t_end:
        progress = False
        tried: set = set()
        again = True
        while again and evals < budget and time.monotonic() < t_end:
            again = False
            for path, s in reversed(list(walk(best.stmts))):
                if id(s) in tried:
                    continue
                tried.add(id(s))
                for cand in _variants(best, path, s):
                    evals += 1
                    f = _with_key(check(cand), key)
                    if f is not None:
                        best, bestf, again, progress = cand, f, True, True
                        break
                    if evals >= budget or time.monotonic() > t_end:
                        break
                if again:
                    break
    tidy = renumber(best)
    f = _with_key(check(tidy), key)
    return (tidy, f) if f is not None else (best, bestf)


def _with_key(findings: list, key: tuple):
    for f in findings:
        if f.key == key:
            return f
    return None


def renumber(prog: Program) -> Program:
    """Variables renamed t0, t1, ... in order of definition (for readable repros)."""
    m: dict = {}
    for _, s in walk(prog.stmts):
        for o in s.out:
            if o.startswith("t") and o not in m:
                m[o] = f"t{len(m)}"

    def ren(a):
        if isinstance(a, V):
            return V(m.get(a.name, a.name))
        if isinstance(a, tuple):
            return tuple(ren(x) for x in a)
        if isinstance(a, list):
            return [ren(x) for x in a]
        return a

    def rs(stmts):
        return [replace(s, out=tuple(m.get(o, o) for o in s.out), args=ren(s.args),
                        kwargs={k: ren(v) for k, v in s.kwargs.items()},
                        body=rs(s.body) if s.body is not None else None) for s in stmts]
    return replace(prog, stmts=rs(prog.stmts))


# --------------------------------------------------------------------------------------------
# reporting

PROBES = {"val": "{n}", "shape": "{n}.shape", "dtype": "{n}.dtype", "rg": "{n}.requires_grad",
          "leaf": "{n}.is_leaf", "fn": "{n}.grad_fn", "inf": "{n}.is_inference()",
          "ver": "{n}._version", "stride": "{n}.stride(), {n}.storage_offset()",
          "tan": "fwAD.unpack_dual({n}).tangent", "py": "{n}"}


def probe_for(f: Finding):
    ev, _, field_ = f.kind.partition(".")
    if ev in ("out", "target") and f.name:
        return f.path, PROBES.get(field_, "{n}").format(n=f.name)
    if ev == "final" and f.name:
        return None, PROBES.get(field_, "{n}").format(n=f.name)
    if ev == "grad" and f.name:
        return f.path, f"{f.name}.grad"
    if ev == "gout" and f.name:
        return f.path, f.name
    if f.kind.startswith("hook"):
        return None, "[(n, g) for n, g in log]"
    return None


def report(prog: Program, f: Finding) -> str:
    """A finding with its program as a runnable snippet."""
    return (f"{f.describe()}\n--- repro (seed {prog.seed}, {prog.mode} mode; "
            f"`import ember as torch` for ember's side) ---\n"
            + to_source(prog, probe_for(f)))
