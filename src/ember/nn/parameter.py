"""``ember.nn.parameter``: Parameter, Buffer and their uninitialized forms (``torch.nn.parameter``).

A Parameter is a Tensor subclass whose instances share the data (and version counter) of the
tensor they were made from. Ops never return one: every op builds plain Tensors, so a Parameter
travels the same fast paths as a Tensor (dispatch tests ``isinstance`` after a cheap ``type(x) is
Tensor`` test, and the subclass adds no per-op work).
"""
from __future__ import annotations

from collections import OrderedDict

from .._tensor import Tensor, Version, _init, _make

__all__ = [
    "Buffer",
    "Parameter",
    "UninitializedBuffer",
    "UninitializedParameter",
    "UninitializedTensorMixin",
    "is_lazy",
]


def _empty(device=None, dtype=None) -> Tensor:
    from .._ops.creation import empty
    return empty(0, device=device, dtype=dtype)


def _alias(cls, data: Tensor, requires_grad: bool):
    """A ``cls`` instance over ``data``'s buffer and version counter, detached
    (``Tensor._make_subclass``)."""
    t = object.__new__(cls)
    _init(t, data._data, data._vc, bool(requires_grad), None)
    return t


def _rebuild_parameter(data, requires_grad, hooks=None):
    """Unpickle a Parameter (``torch._utils._rebuild_parameter``)."""
    return Parameter(data, requires_grad)


class Parameter(Tensor):
    """A Tensor that a Module registers as a parameter when assigned as an attribute
    (``torch.nn.Parameter``). Unlike a plain ember Tensor it accepts arbitrary attributes."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = _empty()
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        return _alias(cls, data, requires_grad)

    def __init__(self, *args, **kwargs):
        pass   # everything happened in __new__ (Tensor.__init__ is the legacy constructor)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        src = _make(self._data.copy(), Version(), False, None)
        result = type(self)(src, self.requires_grad)
        if self._grad is not None:
            result._grad = self._grad.__deepcopy__(memo)
        if self.__dict__:
            import copy
            result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = result
        return result

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (_make(self._data, Version(), False, None), self._rg,
                                     OrderedDict()))


class UninitializedTensorMixin:
    """What the uninitialized Parameter and Buffer share (``torch.nn.parameter``): no shape
    until ``materialize`` gives them one and turns them into ``cls_to_become``."""

    __slots__ = ()

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor ``shape`` (uninitialized values) and become ``cls_to_become``."""
        from .._ops.creation import empty
        if dtype is None:
            dtype = self.dtype
        if isinstance(shape, int):
            shape = (shape,)
        self._data = empty(tuple(shape), device=device, dtype=dtype)._data
        self._vc.v += 1
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param) -> bool:
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (the Lazy layers' weights)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        return _alias(cls, _empty(device, dtype), requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, None, self.dtype)
        memo[id(self)] = result
        return result


class Buffer(Tensor):
    """A tensor that a Module registers as a buffer when assigned as an attribute
    (``torch.nn.Buffer``). Registration stores a plain Tensor over the same data."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = _empty()
        t = _alias(cls, data, data.requires_grad)
        t.persistent = persistent
        return t

    def __init__(self, *args, **kwargs):
        pass

    def __repr__(self) -> str:
        return repr(_plain(self))


def _plain(t: Tensor) -> Tensor:
    """A plain Tensor over ``t``'s data and version counter (keeps requires_grad)."""
    out = _make(t._data, t._vc, t._rg, None)
    return out


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet; becomes a plain Tensor once materialized."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None):
        return _alias(cls, _empty(device, dtype), requires_grad)

    def __init__(self, *args, **kwargs):
        pass
