"""Custom autograd functions: ``Function`` with ``forward``/``backward`` (and optionally
``setup_context`` and ``jvp``), its context object, and ``once_differentiable``.

As in PyTorch, the context ``ctx`` passed to forward and backward *is* the backward node
(``MyFnBackward``), so it exposes ``next_functions``, ``register_hook`` and the rest.
"""
from __future__ import annotations

import functools

from .._tensor import CM_CUSTOM, Tensor, Version, _make, _view_of
from .forward_ad import fw_of
from .grad_mode import STATE, no_grad
from .graph import Node, _seq, version_error

__all__ = [
    "BackwardCFunction",
    "Function",
    "FunctionCtx",
    "InplaceFunction",
    "NestedIOFunction",
    "once_differentiable",
]


class FunctionCtx:
    """The methods a custom Function's ``ctx`` offers (mixed into every backward node)."""

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or None) for backward; they are version-checked when unpacked."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{i} is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Keep tensors for the ``jvp`` method."""
        self._fw_saved = tensors

    def mark_dirty(self, *args) -> None:
        """Mark inputs modified in place by forward (they must be returned as outputs)."""
        self._dirty = args

    def mark_non_differentiable(self, *args) -> None:
        """Mark outputs that need no gradient (their grads reach backward as zeros)."""
        self._non_diff = args

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs without a gradient."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        return self._unpack_saved()

    @property
    def saved_variables(self) -> tuple:
        return self._unpack_saved()


class BackwardCFunction(FunctionCtx, Node):
    """The node of one call of a custom Function (``ctx``)."""

    op = None

    def __repr__(self) -> str:
        c = type(self)
        return f"<{c.__module__}.{c.__qualname__} object at {id(self):#x}>"

    def __init__(self):
        self._seq = next(_seq)
        self._h = None
        self._saved = ()
        self._params = ()
        self._next = ()
        self._to_save = None
        self._dirty = ()
        self._non_diff = ()
        self._fw_saved = ()
        self._in_jvp = False
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._out_meta = ()
        if STATE.anomaly:
            from .anomaly_mode import record_trace
            record_trace(self)

    def name(self) -> str:
        return type(self).__name__

    def _unpack_saved(self) -> tuple:
        if self._saved is None:
            from .graph import FREED
            raise RuntimeError(FREED)
        if self._in_jvp:
            return tuple(self._fw_saved)   # in jvp: what save_for_forward kept, or nothing
        out = []
        for e in self._saved:
            if e is None:
                out.append(None)
            elif hasattr(e, "unpack"):
                out.append(e.unpack(self, True))
            elif len(e) == 2:
                t, ver = e
                if t._vc.v != ver:
                    raise version_error(t, ver, t._fn)
                out.append(t)
            else:
                data, vc, ver, k = e
                t = _make(data, vc, True, self, k)
                if vc.v != ver:
                    raise version_error(t, ver, self)
                out.append(t)
        return tuple(out)

    def _apply(self, grads, graph: bool) -> tuple:
        cls = self._forward_cls
        gs = []
        for g, meta in zip(grads, self._out_meta):
            if g is None:
                if self.materialize_grads and meta is not None:
                    from .._ops.creation import zeros
                    g = zeros(meta[0], dtype=meta[1])
            elif not isinstance(g, Tensor):
                g = _make(g, Version(), False, None)
            gs.append(g)
        if self._saved is None:
            from .graph import FREED
            raise RuntimeError(FREED)
        res = cls.backward(self, *gs)
        if not isinstance(res, tuple):
            res = (res,)
        n_in = len(self._arg_is_tensor)
        if len(res) < n_in:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{n_in}, got {len(res)})")
        if len(res) > n_in:
            if any(r is not None for r in res[n_in:]):
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {n_in}, got {len(res)})")
            res = res[:n_in]
        out = []
        for i, (r, is_t) in enumerate(zip(res, self._arg_is_tensor)):
            if not is_t:
                if r is not None and isinstance(r, Tensor):
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a "
                        "Variable")
                continue
            if r is not None and not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            e = self._next[len(out)]
            if r is not None and e[2] is not None and tuple(r._data.shape) != tuple(e[2]):
                import numpy as np
                try:
                    if np.broadcast_shapes(r._data.shape, e[2]) != r._data.shape:
                        raise ValueError
                    ok = len(r._data.shape) >= len(e[2])
                except ValueError:
                    ok = False
                if not ok:
                    raise RuntimeError(
                        f"Function {self.name()} returned an invalid gradient at index {len(out)}"
                        f" - got {list(r._data.shape)} but expected shape compatible with "
                        f"{list(e[2])}")
            out.append(r)
        return tuple(out)


class _FunctionMeta(type):
    """Gives each Function subclass its own backward node class, ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        # as PyTorch's, the node class lives in this module: its repr reads
        # <ember.autograd.function.NameBackward object at ...>
        backward_cls = type(name + "Backward", (BackwardCFunction,),
                            {"_forward_cls": cls, "__module__": __name__})
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=_FunctionMeta):
    """Base class for custom differentiable operations (``torch.autograd.Function``)."""

    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.", DeprecationWarning,
            stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#ember.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.")

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError(
            "ember has no vmap yet, so Function.vmap is not supported.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward (without recording) and, when an input requires grad, link the outputs
        to a ``<Name>Backward`` node whose backward is this class's ``backward``."""
        if cls.backward is Function.backward and cls.vjp is not Function.vjp:
            cls.backward = cls.vjp
        return _apply(cls, args, kwargs)


def _uses_setup_context(cls) -> bool:
    return cls.setup_context is not Function.setup_context


def _apply(cls, args, kwargs):
    ctx = cls._backward_cls()
    tensor_args = [a for a in args if isinstance(a, Tensor)]
    record = STATE.grad and any(t.requires_grad for t in tensor_args)
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad and STATE.grad
                                 for a in args)
    ctx._arg_is_tensor = tuple(isinstance(a, Tensor) for a in args)
    with no_grad():
        if _uses_setup_context(cls):
            outputs = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, outputs)
        else:
            outputs = cls.forward(ctx, *args, **kwargs)
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    from .._ops._registry import edge
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_diff}
    input_ids = {id(t) for t in tensor_args}
    for t in ctx._dirty:
        if record and t._rg and t._fn is None and t._base is None:
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place operation.")
        t._vc.v += 1
    if record:
        ctx._next = tuple(edge(t) for t in tensor_args)
    new_outs = []
    for k, o in enumerate(outs):
        if not isinstance(o, Tensor):
            new_outs.append(o)
            continue
        if id(o) in input_ids and id(o) not in dirty:
            o = _view_of(o, o._data)   # an input returned as is: a view of it, as in PyTorch
        new_outs.append(o)
    ctx._out_meta = tuple((o._data.shape, o.dtype) if isinstance(o, Tensor) else None
                          for o in new_outs)
    if len(new_outs) != 1:
        ctx.n_out = len(new_outs)   # one gradient slot per output (the engine sizes buffers so)
    if record:
        for k, o in enumerate(new_outs):
            if not isinstance(o, Tensor) or id(outs[k]) in non_diff:
                continue
            if not (o.is_floating_point() or o.is_complex()):
                continue
            o._fn, o._onr, o._rg = ctx, k, True
            if o._base is not None:
                # a view made by the Function: modifying it in place would bypass its backward
                o._cm, o._av = CM_CUSTOM, o._vc.v
        _save(ctx, new_outs, outs)
    else:
        ctx._saved = ()
    if STATE.fw_level >= 0 and any(fw_of(t) is not None for t in tensor_args):
        _forward_ad(cls, ctx, args, new_outs)
    if single:
        return new_outs[0]
    return tuple(new_outs)


def _save(ctx, new_outs, raw_outs) -> None:
    saved = []
    to_save = ctx._to_save or ()
    out_ids = {id(o): k for k, o in enumerate(raw_outs) if isinstance(o, Tensor)}
    st = STATE
    for t in to_save:
        if t is None:
            saved.append(None)
            continue
        k = out_ids.get(id(t))
        if st.saved_hooks:
            from .saved import pack_with
            pack, unpack = st.saved_hooks[-1]
            saved.append(pack_with(pack, unpack, t if k is None else new_outs[k], k is not None,
                                   k or 0))
        elif k is not None:
            o = new_outs[k]
            saved.append((o._data, o._vc, o._vc.v, k))
        else:
            saved.append((t, t._vc.v))
    ctx._saved = saved
    ctx._to_save = None


def _forward_ad(cls, ctx, args, outs) -> None:
    from .forward_ad import _remember
    tangents = [fw_of(a) if isinstance(a, Tensor) else None for a in args]
    ctx._in_jvp = True
    try:
        res = cls.jvp(ctx, *tangents)   # in grad mode, as PyTorch: forward-over-reverse works
    finally:
        ctx._in_jvp = False
    if not isinstance(res, tuple):
        res = (res,)
    for o, t in zip(outs, res):
        if isinstance(o, Tensor) and t is not None:
            o._fw = t
            _remember(o)


def once_differentiable(fn):
    """Run a custom backward without recording; differentiating its result again raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not STATE.grad:
            return outputs
        requires = any(isinstance(a, Tensor) and a._rg for a in args)
        if not requires:
            return outputs
        tup = outputs if isinstance(outputs, tuple) else (outputs,)
        err = _OnceDiffError.make(ctx, [a for a in args if isinstance(a, Tensor)])
        wrapped = tuple(err(o) if isinstance(o, Tensor) else o for o in tup)
        return wrapped if isinstance(outputs, tuple) else wrapped[0]
    return wrapper


class _OnceDiffError:
    @staticmethod
    def make(ctx, inputs):
        from .._ops._registry import edge

        def attach(o):
            node = DelayedError._backward_cls()
            node._next = tuple(edge(t) for t in inputs)
            node._arg_is_tensor = (True,) * len(inputs)
            node._out_meta = ((o._data.shape, o.dtype),)
            node._saved = ()
            node.msg = ("trying to differentiate twice a function that was marked with "
                        "@once_differentiable")
            return _make(o._data, o._vc, True, node, 0)
        return attach


class DelayedError(Function):
    """A node that raises when a gradient reaches it."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.msg)


class InplaceFunction(Function):
    def __init__(self, inplace: bool = False):
        self.inplace = inplace


class NestedIOFunction(Function):
    pass

