"""Process-wide settings that training scripts set: deterministic algorithms, float32 matmul
precision, warn-always, flush-denormal and the deprecated default tensor type.

PyTorch keeps these in its global ``at::Context`` (one value for all threads), and so does this
module. Ops consult ``DET``: ``alert_not_deterministic(name)`` where PyTorch's CPU kernel has no
deterministic implementation (``put_`` without accumulation, ``max_unpool``), and
``fill_uninitialized(array)`` where PyTorch fills fresh memory under deterministic mode
(``empty``, ``empty_like``, ``empty_strided``, ``new_empty``, grown ``resize_`` storage).
"""
from __future__ import annotations

import builtins
import importlib
import warnings

import numpy as np

__all__ = ["are_deterministic_algorithms_enabled", "get_deterministic_debug_mode",
           "get_float32_matmul_precision", "is_deterministic_algorithms_warn_only_enabled",
           "is_warn_always_enabled", "set_default_tensor_type", "set_deterministic_debug_mode",
           "set_float32_matmul_precision", "set_flush_denormal", "set_warn_always", "typename",
           "use_deterministic_algorithms"]


class _Det:
    """The determinism flags (PyTorch's ``_C._get_deterministic_algorithms`` and friends)."""

    __slots__ = ("enabled", "fill", "warn_only")

    def __init__(self) -> None:
        self.enabled = False
        self.warn_only = False
        self.fill = True   # torch.utils.deterministic.fill_uninitialized_memory


DET = _Det()
_MATMUL = ["highest"]
_WARN_ALWAYS = [False]
_ONCE: set = set()


def _must_be_bool(fn: str, param: str, value, position: int | None) -> None:
    if type(value) is not builtins.bool:
        where = f" (position {position})" if position else ""
        raise TypeError(f"{fn}(): argument '{param}'{where} must be bool, not "
                        f"{type(value).__name__}")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """``torch.use_deterministic_algorithms``: on the CPU, ``put_`` without accumulation and
    ``max_unpool1d/2d/3d`` then raise (or warn, with ``warn_only``), and fresh ``empty``-style
    memory is filled with NaN (integers: their maximum) while
    ``utils.deterministic.fill_uninitialized_memory`` is on, as PyTorch's CPU kernels do."""
    _must_be_bool("_set_deterministic_algorithms", "mode", mode, 1)
    _must_be_bool("_set_deterministic_algorithms", "warn_only", warn_only, None)
    DET.enabled = mode
    DET.warn_only = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """``torch.are_deterministic_algorithms_enabled``."""
    return DET.enabled


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """``torch.is_deterministic_algorithms_warn_only_enabled``."""
    return DET.warn_only


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """``torch.set_deterministic_debug_mode``: "default"/0, "warn"/1 or "error"/2."""
    if not isinstance(debug_mode, (builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    DET.enabled = debug_mode != 0
    DET.warn_only = debug_mode == 1


def get_deterministic_debug_mode() -> int:
    """``torch.get_deterministic_debug_mode``: 0, 1 (warn) or 2 (error)."""
    if not DET.enabled:
        return 0
    return 1 if DET.warn_only else 2


def alert_not_deterministic(name: str) -> None:
    """PyTorch's ``alertNotDeterministic``: an op without a deterministic implementation raises
    under deterministic mode, or warns with ``warn_only``."""
    if not DET.enabled:
        return
    if DET.warn_only:
        warnings.warn(
            f"{name} does not have a deterministic implementation, but you set "
            "'ember.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue "
            "at https://github.com/pytorch/pytorch/issues to help us prioritize adding "
            "deterministic support for this operation.", UserWarning, stacklevel=3)
        return
    raise RuntimeError(
        f"{name} does not have a deterministic implementation, but you set "
        "'ember.use_deterministic_algorithms(True)'. You can turn off determinism just for this "
        "operation, or you can use the 'warn_only=True' option, if that's acceptable for your "
        "application. You can also file an issue at https://github.com/pytorch/pytorch/issues "
        "to help us prioritize adding deterministic support for this operation.")


def fill_uninitialized(a):
    """Fill ``a`` (an ndarray of fresh, nominally uninitialised memory) as PyTorch does under
    deterministic mode: NaN for floating types (a complex NaN has a zero imaginary part), the
    maximum for integers, True for bool. Returns ``a``."""
    if not (DET.enabled and DET.fill) or type(a) is not np.ndarray or not a.size:
        return a
    k = a.dtype.kind
    if k == "b":
        a.fill(True)
    elif k in "iu":
        a.fill(np.iinfo(a.dtype).max)
    elif k == "V":   # complex32 pairs: (NaN, 0) as for the other complex types
        halves = a.view(np.float16)
        halves[..., 0::2] = np.nan
        halves[..., 1::2] = 0
    else:
        a.fill(np.nan)
    return a


def fill_uninitialized_tensor(t):
    """``fill_uninitialized`` on a fresh tensor's array; returns the tensor."""
    if DET.enabled:
        fill_uninitialized(t._data)
    return t


def get_float32_matmul_precision() -> str:
    """``torch.get_float32_matmul_precision``."""
    return _MATMUL[0]


def set_float32_matmul_precision(precision: str) -> None:
    """``torch.set_float32_matmul_precision``: "highest", "high" or "medium". The setting
    allows, never requires, lower internal precision; ember has no reduced-precision float32
    GEMM, so it computes every setting as "highest" (PyTorch's documented fallback where no
    faster algorithm is available)."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect. (Triggered internally at "
                      "/__w/pytorch/pytorch/aten/src/ATen/Context.cpp:458.)", UserWarning,
                      stacklevel=2)
        return
    _MATMUL[0] = precision


def set_warn_always(b: bool, /) -> None:
    """``torch.set_warn_always``: warnings PyTorch gives once per process (``warn_once``) are
    given every time."""
    if type(b) is not builtins.bool:
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _WARN_ALWAYS[0] = b


def is_warn_always_enabled() -> bool:
    """``torch.is_warn_always_enabled``."""
    return _WARN_ALWAYS[0]


def warn_once(key: str, message: str, category=UserWarning, stacklevel: int = 3) -> None:
    """PyTorch's ``TORCH_WARN_ONCE``: the first time per process for ``key``, or every time
    under ``set_warn_always(True)``."""
    if key in _ONCE and not _WARN_ALWAYS[0]:
        return
    _ONCE.add(key)
    warnings.warn(message, category, stacklevel=stacklevel)


def set_flush_denormal(mode: bool) -> bool:
    """``torch.set_flush_denormal``: returns whether flushing denormals could be configured.
    NumPy offers no control of the CPU's FTZ/DAZ flags, so ember answers False, as PyTorch does
    on a CPU without them, and denormals are kept."""
    if type(mode) is not builtins.bool:
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return False


def set_default_tensor_type(t, /) -> None:
    """``torch.set_default_tensor_type`` (deprecated in PyTorch 2.1, with its warning once per
    process): a floating legacy type (``ember.DoubleTensor`` or its name, "torch.DoubleTensor"
    being read as ember's) sets the default dtype."""
    warn_once("set_default_tensor_type",
              "ember.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
              "ember.set_default_dtype() and ember.set_default_device() as alternatives. "
              "(Triggered internally at /__w/pytorch/pytorch/torch/csrc/tensor/"
              "python_tensor.cpp:434.)")
    import ember
    if isinstance(t, str):
        name = t
        if name.startswith(("torch.cuda.", "ember.cuda.")):
            shown = "ember." + name.split(".", 1)[1]
            raise TypeError(f"type {shown} not available. Torch not compiled with CUDA enabled.")
        module, _, attr = name.rpartition(".")
        if module in ("torch", "ember"):
            t = getattr(ember, attr, None)
            if t is None:
                raise AttributeError(f"module 'torch' has no attribute '{attr}'")
        else:
            t = getattr(importlib.import_module(module or name), attr) if module else \
                importlib.import_module(name)
    legacy = getattr(ember, getattr(t, "__name__", ""), None) is t and hasattr(t, "dtype")
    if not legacy:
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    ember.set_default_dtype(t.dtype)


def typename(obj, /) -> str:
    """``torch.typename``: a tensor's legacy type name (``Tensor.type()``), else the object's
    module-qualified name."""
    from ._tensor import Tensor
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"
