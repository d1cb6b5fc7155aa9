"""Python numbers written into tensors, checked as PyTorch checks them.

PyTorch carries a Python number as a ``c10::Scalar`` and converts it to the tensor's element
type with ``checked_convert``: a value the type cannot hold raises "value cannot be converted to
type int8_t without overflow" (NaN or inf into an integer type, 300 into int8, 1e300 into
float32, a complex number with a nonzero imaginary part into a real type), while a negative
integer written into an unsigned type wraps (-1 into uint8 is 255) as long as its magnitude fits.
``torch.tensor`` converts each element of its data on its own path, with the dtype's name
("int8") in the same message and Python's own errors for the number kinds a type refuses.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from . import _dtype as D

# the C++ type names PyTorch's Scalar conversion reports
_CTYPE = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t",
          "int32": "int", "int64": "int64_t", "uint16": "uint16_t", "uint32": "uint32_t",
          "uint64": "uint64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
          "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
          "complex128": "c10::complex<double>", "complex32": "c10::complex<c10::Half>"}

_I64 = 1 << 63


_LIMITS: dict = {}


def _limits(dt: D.dtype):
    """(lowest, max) of a real dtype as Python numbers."""
    r = _LIMITS.get(dt)
    if r is None:
        if dt.is_floating_point or dt.is_complex:
            fi = D.finfo(dt.to_real())
            r = fi.min, fi.max
        else:
            ii = np.iinfo(dt.np)
            r = builtins.int(ii.min), builtins.int(ii.max)
        _LIMITS[dt] = r
    return r


def overflows(value, dt: D.dtype) -> bool:
    """c10's ``overflows<To>(value)``: whether ``value`` (a Python int, float or complex) cannot be
    converted to ``dt``'s element type."""
    if dt is D.bool:
        return False
    if isinstance(value, builtins.complex):
        if not dt.is_complex and value.imag != 0:
            return True
        value = value.real
        if dt.is_complex:
            return not math.isinf(value) and not math.isnan(value) and abs(value) > _limits(dt)[1]
    lo, hi = _limits(dt)
    if isinstance(value, builtins.float):
        if math.isinf(value) and (dt.is_floating_point or dt.is_complex):
            return False
        if math.isnan(value):
            return not (dt.is_floating_point or dt.is_complex)
        return value < lo or value > hi
    if not dt.is_signed and not (dt.is_floating_point or dt.is_complex) and value < 0:
        # negative integers wrap into an unsigned type (two's complement) when they fit
        return -value > hi
    return value < lo or value > hi


def _number(value):
    """A NumPy scalar or bool as the Python number PyTorch's Scalar would hold."""
    if isinstance(value, np.generic):
        value = D.py_scalar(value)   # its kind, as PyTorch's argument parser reads it
    return value


def _scalar_range(value) -> None:
    """A Scalar holds int64 or uint64: a bigger Python int fails converting."""
    if isinstance(value, builtins.int) and not isinstance(value, builtins.bool):
        if value >= 1 << 64:
            raise OverflowError("int too big to convert")
        if value < -_I64:
            raise OverflowError("can't convert negative int to unsigned")


def to_dtype(value, dt: D.dtype, one: bool = False):
    """``value`` converted for storing into a tensor of ``dt`` (PyTorch's ``Scalar::to<T>``):
    PyTorch's errors for values that overflow, negative ints wrapped into unsigned types,
    complex values with a zero imaginary part reduced to their real part. ``one``: the target
    has one element, which PyTorch's ``fill_`` writes through double for half and bfloat16
    (too large a value becomes inf there; only a complex one is refused)."""
    value = _number(value)
    if not isinstance(value, (builtins.int, builtins.float, builtins.complex)):
        raise TypeError(f"can't convert {type(value).__name__} to a number")
    _scalar_range(value)
    if dt is D.complex32 and not one:
        dt = D.complex64   # PyTorch's fill of many ComplexHalf elements checks complex<float>
        if overflows(value, dt):
            raise RuntimeError("value cannot be converted to type c10::complex<float> without "
                               "overflow")
        return _wrapped(value, D.complex32)
    if one and dt in (D.float16, D.bfloat16):
        if isinstance(value, builtins.complex) and value.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        return _wrapped(value, dt)
    if overflows(value, dt):
        raise RuntimeError(f"value cannot be converted to type {_CTYPE[dt.name]} without overflow")
    return _wrapped(value, dt)


def _wrapped(value, dt: D.dtype):
    if dt is D.bool:
        return builtins.bool(value)
    if isinstance(value, builtins.complex) and not dt.is_complex:
        value = value.real
    if not (dt.is_floating_point or dt.is_complex):
        if isinstance(value, builtins.float):
            value = builtins.int(value)   # truncation toward zero, as a C cast
        if not dt.is_signed and value < 0:
            value += 1 << (8 * dt.itemsize)
    return value


def setitem_value(value, dt: D.dtype):
    """A number assigned by ``x[key] = value``: PyTorch unpacks it to int64 or double first,
    then makes a 0-dim tensor of it (a one-element fill) that it copies in."""
    value = _number(value)
    if isinstance(value, builtins.int) and not isinstance(value, builtins.bool) and not (
            -_I64 <= value < _I64):
        raise ValueError("Overflow when unpacking long long")
    return to_dtype(value, dt, True)


def index_fill_value(value, dt: D.dtype):
    """``index_fill_``'s number: a complex one is refused for any non-complex tensor."""
    value = _number(value)
    if isinstance(value, builtins.complex) and not dt.is_complex:
        raise RuntimeError(
            "index_fill_(): Converting complex Scalar to non-complex type is not supported")
    return to_dtype(value, dt)


def data_value(value, dt: D.dtype):
    """One element of ``torch.tensor``'s data converted to ``dt`` (PyTorch's ``store_scalar``)."""
    value = _number(value)
    if isinstance(value, builtins.bool):
        return _wrapped(value, dt)
    if dt.is_complex:
        return builtins.complex(value)
    if isinstance(value, builtins.complex):
        if dt.is_floating_point:
            raise TypeError("must be real number, not complex")
        if dt is not D.bool:
            raise TypeError("'complex' object cannot be interpreted as an integer")
        return builtins.bool(value)
    if isinstance(value, builtins.int) and not (-_I64 <= value < _I64):
        if dt.is_floating_point:
            return builtins.float(value)
        if dt.name == "uint64" and 0 <= value < 1 << 64:
            return value
        if dt.name == "uint64":
            raise OverflowError("int too big to convert" if value > 0 else
                                "can't convert negative int to unsigned")
        if dt is not D.bool:
            raise ValueError("Overflow when unpacking long long")
    if dt.is_floating_point:
        return builtins.float(value)   # out of range becomes inf, as a C cast does
    if dt.name == "uint64":
        if isinstance(value, builtins.float):
            raise TypeError("an integer is required")
        if value < 0:
            raise OverflowError("can't convert negative int to unsigned")
    if dt is not D.bool and overflows(value, dt):
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
    return _wrapped(value, dt)


__all__ = ["data_value", "index_fill_value", "overflows", "setitem_value", "to_dtype"]
