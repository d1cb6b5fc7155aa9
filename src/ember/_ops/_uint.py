"""PyTorch's kernel gaps for its "shell" unsigned types (uint16, uint32, uint64).

PyTorch 2.13 creates, copies, views, indexes, multiplies, divides and compares for equality
tensors of these types, but many elementwise kernels are not compiled for them and raise
``NotImplementedError: "add_stub" not implemented for 'UInt32'``. ember computes every op on
NumPy, which could do them all; it refuses the same ones, by op name, so code that runs on ember
runs on PyTorch.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import _dtype as D

SHELL_NP = frozenset(d.np for d in D.SHELL_UINTS)

# ember op name -> PyTorch's kernel name in its NotImplementedError
_KERNELS = {
    "add": "add_stub", "sub": "add_stub", "rsub": "add_stub",
    "neg": "neg_cpu", "abs": "abs_cpu", "sign": "sign_cpu", "sgn": "sign_cpu",
    "floor_divide": "div_floor_cpu", "remainder": "remainder_cpu", "remainder_t": "remainder_cpu",
    "fmod": "fmod_cpu", "fmod_t": "fmod_cpu", "pow": "pow", "pow_scalar": "pow", "square": "pow",
    "maximum": "maximum_cpu", "minimum": "minimum_cpu", "fmax": "maximum_cpu",
    "fmin": "minimum_cpu", "hypot": "hypot_cpu",
    "lt": "lt_cpu", "le": "le_cpu", "gt": "gt_cpu", "ge": "ge_cpu",
    "lt_t": "lt_cpu", "le_t": "le_cpu", "gt_t": "gt_cpu", "ge_t": "ge_cpu",
    "bitwise_not": "bitwise_not_cpu", "bitwise_left_shift": "lshift_cpu",
    "bitwise_right_shift": "rshift_cpu", "logical_and": "logical_and_cpu",
    "logical_or": "logical_or_cpu", "logical_xor": "logical_xor_cpu",
    "logical_not": "logical_not_cpu",
}


UINT_GATED = frozenset(_KERNELS)


def check(op_name: str, npd) -> None:
    """PyTorch's NotImplementedError when ``op_name`` has no kernel for NumPy dtype ``npd``."""
    if npd in SHELL_NP:
        k = _KERNELS.get(op_name)
        if k is not None:
            raise NotImplementedError(
                f"\"{k}\" not implemented for '{D.type_name(D._FROM_NP[np.dtype(npd)])}'")


def _minmax(name: str):
    def kernel(args, kwargs) -> str:
        if args and getattr(args[0], "_data", None) is not None:   # max(a, b): elementwise
            return f"{name}imum_cpu"
        return f"{name}_cpu" if args or "dim" in kwargs else f"{name}_all"
    return kernel


# functions and methods whose PyTorch kernels refuse the shell types (kernel name, or a function
# of the remaining arguments giving it)
_FUNCS = {
    "max": _minmax("max"), "min": _minmax("min"), "amax": "max_values_cpu",
    "amin": "min_values_cpu", "argmax": "argmax_cpu", "argmin": "argmin_cpu",
    "aminmax": "aminmax_cpu", "cummax": "cummax_cpu", "cummin": "cummin_cpu",
    "topk": "topk_cpu", "kthvalue": "kthvalue_cpu", "median": "median_cpu",
    "count_nonzero": "nonzero_count_cpu", "nonzero": "nonzero_count_cpu",
    "argwhere": "nonzero_count_cpu", "flip": "flip_cpu", "gather": "scatter_gather_tensor_cpu",
    "index_select": "index_select", "masked_select": "masked_select",
    "clamp": "clamp_scalar_cpu", "clip": "clamp_scalar_cpu", "tril": "tril", "triu": "triu",
    "trace": "trace", "bincount": "bincount_cpu", "histc": "aminmax_cpu",
    "masked_fill": "masked_fill", "masked_fill_": "masked_fill", "index_fill": "index_fill_cpu",
    "index_fill_": "index_fill_cpu", "relu": "clamp_min_scalar_cpu",
    "bitwise_left_shift": "lshift_cpu", "__lshift__": "lshift_cpu",
    "bitwise_right_shift": "rshift_cpu", "__rshift__": "rshift_cpu",
    "bitwise_not": "bitwise_not_cpu", "__invert__": "bitwise_not_cpu",
}


def _gated(f, kernel):
    def gated(input, *args, **kwargs):
        d = getattr(input, "_data", None)
        if d is not None and d.dtype in SHELL_NP:
            k = kernel(args, kwargs) if callable(kernel) else kernel
            raise NotImplementedError(
                f"\"{k}\" not implemented for '{D.type_name(D._FROM_NP[d.dtype])}'")
        return f(input, *args, **kwargs)
    functools.update_wrapper(gated, f)
    return gated


def install(namespace: dict) -> None:
    """Put the refusals in front of the ``Tensor`` methods and the namespace's functions."""
    from .._tensor import Tensor
    for name, kernel in _FUNCS.items():
        f = Tensor.__dict__.get(name)
        if f is not None and callable(f):
            setattr(Tensor, name, _gated(f, kernel))
        f = namespace.get(name)
        if f is not None and callable(f):
            namespace[name] = _gated(f, kernel)
