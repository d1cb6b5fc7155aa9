"""``torch.compile`` for ember: no compiler, the model runs eagerly with the same results.

``torch.compile`` promises the semantics of the eager program; ember has only the eager
program, so a compiled function is the function and a compiled module runs its module. What
PyTorch shows of the wrapper is kept: a module comes back as an ``OptimizedModule`` holding it
as ``_orig_mod`` (so ``state_dict`` keys carry PyTorch's ``_orig_mod.`` prefix), a function as a
``functools.wraps`` wrapper. Arguments that only steer compilation and cannot change results
(``fullgraph``, ``dynamic``, ``name``, ``recompile_limit``, ``isolate_recompiles``) are accepted;
those asking for a compiler ember does not have (a callable or unknown ``backend``, a ``mode``
other than the default, inductor ``options``, ``shapes_spec``) are refused.
"""
from __future__ import annotations

import functools

__all__ = ["compile"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_BACKENDS = (None, "inductor", "eager", "aot_eager")


class InvalidBackend(RuntimeError):
    """PyTorch's ``torch._dynamo.exc.InvalidBackend``."""


def _check(backend, mode, options, shapes_spec) -> None:
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if callable(backend):
        raise NotImplementedError(
            "ember.compile: ember builds no FX graphs, so a callable backend cannot be given "
            "one; leave backend unset or use backend='eager'")
    if backend not in _BACKENDS:
        raise InvalidBackend(f"Invalid backend: {backend!r}, see "
                             "`torch._dynamo.list_backends()` for available backends.")
    if mode not in (None, "default"):
        raise NotImplementedError(
            f"ember.compile: mode={mode!r} asks for compiled kernels ember does not build "
            "(it runs eagerly); leave mode unset")
    if options:
        raise NotImplementedError(
            "ember.compile: inductor options need PyTorch's compiler, which ember does not have "
            "(it runs eagerly); leave options unset")
    if shapes_spec is not None:
        raise NotImplementedError("ember.compile: shapes_spec needs PyTorch's compiler, which "
                                  "ember does not have; leave it unset")


def compile(model=None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend=None, mode: str | None = None, options: dict | None = None,
            name: str | None = None, disable: bool = False, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec=None):
    """``torch.compile``: ember runs ``model`` eagerly (same results, no speed-up); see the
    module docstring for which arguments are accepted."""
    kwargs = dict(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                  options=options, name=name, disable=disable,
                  recompile_limit=recompile_limit, isolate_recompiles=isolate_recompiles,
                  shapes_spec=shapes_spec)
    if model is None:
        def fn(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, **kwargs)
        return fn
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    _check(backend, mode, options, shapes_spec)
    if disable:
        return model
    from .nn.modules.module import Module
    if isinstance(model, Module):
        return _optimized_module()(model)

    @functools.wraps(model)
    def compiled(*args, **kw):
        return model(*args, **kw)
    return compiled


_OPTIMIZED: list = []


def _optimized_module():
    """The ``OptimizedModule`` class, made on first use (``nn`` is imported after this module)."""
    if not _OPTIMIZED:
        _OPTIMIZED.append(_optimized_module_class())
    return _OPTIMIZED[0]


def _optimized_module_class():
    from .nn.modules.module import Module

    class OptimizedModule(Module):
        """PyTorch's ``OptimizedModule``: ``_orig_mod`` as its only submodule, its attributes
        read through, calls run it (eagerly, in ember)."""

        def __init__(self, mod) -> None:
            super().__init__()
            self._orig_mod = mod
            self.training = mod.training

        def forward(self, *args, **kwargs):
            return self._orig_mod(*args, **kwargs)

        def __getattr__(self, name: str):
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(self.__dict__["_modules"]["_orig_mod"], name)

        def __len__(self) -> int:
            mod = self._orig_mod
            if hasattr(mod, "__len__"):
                return len(mod)
            raise TypeError(f"{type(mod).__name__} does not support len()")

    return OptimizedModule
