"""Grad modes (no_grad, enable_grad, set_grad_enabled, inference_mode), kept per thread.

All autograd modes live in one thread-local object, ``STATE``: a new thread starts with grad
enabled, no inference mode, no dual level and no saved-tensor hooks, whatever the thread that
started it had set (as in PyTorch). Anomaly mode alone is process-wide, as PyTorch's is.
"""
from __future__ import annotations

import functools
import inspect

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]


from .._state import STATE


def is_grad_enabled() -> bool:
    """``torch.is_grad_enabled``: grad mode as last set; inside inference mode an
    ``enable_grad`` reports True yet records nothing, as in PyTorch."""
    return STATE.grad or (STATE.inference and STATE.grad_asked)


def is_inference_mode_enabled() -> bool:
    """``torch.is_inference_mode_enabled``."""
    return STATE.inference


class _DecoratorContextManager:
    """A context manager that can also decorate functions (and generator functions)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("grad-mode decorators cannot decorate classes")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:  # noqa: BLE001  (re-thrown into the generator)
                            with self.clone():
                                response = gen.throw(e)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as e:
                    return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """A decorator context manager also usable bare: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable recording of operations in this block or function (``torch.no_grad``)."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = (STATE.grad, STATE.grad_asked)
        STATE.grad = STATE.grad_asked = False

    def __exit__(self, *exc) -> None:
        STATE.grad, STATE.grad_asked = self.prev


def _set_grad(mode: bool) -> tuple:
    """Set grad mode; inference mode keeps recording off whatever is asked. Returns the state to
    restore."""
    prev = (STATE.grad, STATE.grad_asked)
    if STATE.inference:
        STATE.grad_asked = mode
    else:
        STATE.grad = mode
    return prev


class enable_grad(_NoParamDecoratorContextManager):
    """Enable recording inside a no_grad block or function (``torch.enable_grad``)."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _set_grad(True)

    def __exit__(self, *exc) -> None:
        STATE.grad, STATE.grad_asked = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off: takes effect at once (so it also works as a plain call), and as
    a context manager or decorator restores the previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.prev = _set_grad(self.mode)

    def __call__(self, func):
        STATE.grad, STATE.grad_asked = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        _set_grad(self.mode)

    def __exit__(self, *exc) -> None:
        STATE.grad, STATE.grad_asked = self.prev

    def clone(self):
        return self.__class__(self.mode)

    def __repr__(self) -> str:
        return f"ember.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


class inference_mode(_DecoratorContextManager):
    """No-grad mode whose outputs are inference tensors (``torch.inference_mode``)."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self.prev = None

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):  # bare @inference_mode
            return cls(True)(mode)
        return super().__new__(cls)

    def __enter__(self) -> None:
        self.prev = (STATE.grad, STATE.inference, STATE.grad_asked)
        STATE.grad, STATE.inference, STATE.grad_asked = not self.mode, bool(self.mode), False

    def __exit__(self, *exc) -> None:
        STATE.grad, STATE.inference, STATE.grad_asked = self.prev

    def clone(self):
        return self.__class__(self.mode)
