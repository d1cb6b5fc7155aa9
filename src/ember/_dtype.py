"""dtypes and PyTorch's type-promotion rules, mapped onto NumPy (and ml_dtypes for bfloat16)."""
from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np

__all__ = [
    "bfloat16",
    "bool",
    "can_cast",
    "cdouble",
    "cfloat",
    "chalf",
    "complex32",
    "complex64",
    "complex128",
    "double",
    "dtype",
    "finfo",
    "float",
    "float16",
    "float32",
    "float64",
    "get_default_dtype",
    "half",
    "iinfo",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "long",
    "promote_types",
    "qint8",
    "qint32",
    "quint2x4",
    "quint4x2",
    "quint8",
    "result_type",
    "set_default_dtype",
    "short",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, mirroring ``torch.dtype`` (``ember.float32``, ...)."""

    __slots__ = (
        "_cat",
        "_legacy",
        "is_complex",
        "is_floating_point",
        "is_signed",
        "itemsize",
        "name",
        "np",
    )

    def __init__(self, name: str, np_dtype, cat: int, signed: bool, legacy: str):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = cat == _FLOAT
        self.is_complex = cat == _COMPLEX
        self.is_signed = signed
        self._cat = cat
        self._legacy = legacy

    def __repr__(self) -> str:
        return "ember." + self.name

    def __reduce__(self):
        return self.name

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64, complex32: float16}.get(self, self)

    def to_complex(self) -> dtype:
        return {float32: complex64, float64: complex128, float16: complex32,
                bfloat16: complex64}.get(self, self)


bool = dtype("bool", np.bool_, _BOOL, False, "BoolTensor")
uint8 = dtype("uint8", np.uint8, _INT, False, "ByteTensor")
int8 = dtype("int8", np.int8, _INT, True, "CharTensor")
int16 = dtype("int16", np.int16, _INT, True, "ShortTensor")
int32 = dtype("int32", np.int32, _INT, True, "IntTensor")
int64 = dtype("int64", np.int64, _INT, True, "LongTensor")
float16 = dtype("float16", np.float16, _FLOAT, True, "HalfTensor")
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT, True, "BFloat16Tensor")
float32 = dtype("float32", np.float32, _FLOAT, True, "FloatTensor")
float64 = dtype("float64", np.float64, _FLOAT, True, "DoubleTensor")
complex64 = dtype("complex64", np.complex64, _COMPLEX, True, "ComplexFloatTensor")
complex128 = dtype("complex128", np.complex128, _COMPLEX, True, "ComplexDoubleTensor")
# PyTorch's "shell" unsigned types: tensors of them exist, but they promote with no other integer
# type and many kernels refuse them (``UNSUPPORTED_UINT`` lists what ember refuses likewise)
uint16 = dtype("uint16", np.uint16, _INT, False, "UInt16Tensor")
uint32 = dtype("uint32", np.uint32, _INT, False, "UInt32Tensor")
uint64 = dtype("uint64", np.uint64, _INT, False, "UInt64Tensor")
SHELL_UINTS = (uint16, uint32, uint64)
# PyTorch's ComplexHalf: NumPy has no such type, so its elements are stored as a structured pair
# of float16 (4 bytes, as PyTorch's); src/ember/_chalf.py converts and computes
complex32 = dtype("complex32", [("real", "<f2"), ("imag", "<f2")], _COMPLEX, True,
                  "ComplexHalfTensor")


class _NameOnly(dtype):
    """A dtype PyTorch names but ember cannot store: the quantized types (ember has no
    quantized tensors). The object exists, with PyTorch's repr,
    itemsize and flags, and promotes as PyTorch's does; making a tensor of it (anything that
    asks for its NumPy type) raises NotImplementedError saying so."""

    __slots__ = ("_why",)

    def __init__(self, name: str, itemsize: int, cat: int, why: str):
        self.name = name
        self.itemsize = itemsize
        self.is_floating_point = False
        self.is_complex = cat == _COMPLEX
        self._cat = cat
        self._legacy = ""
        self._why = why

    @property
    def np(self):
        raise NotImplementedError(f"ember cannot make tensors of dtype {self!r}: {self._why}")

    @property
    def is_signed(self) -> builtins.bool:
        if self._cat == _QUANT:
            raise RuntimeError("isSignedType not supported for quantized types")
        return True


_QUANT = 4
_QWHY = "quantized tensors are not implemented in ember (the dtype exists as a name only)"
quint8 = _NameOnly("quint8", 1, _QUANT, _QWHY)
qint8 = _NameOnly("qint8", 1, _QUANT, _QWHY)
qint32 = _NameOnly("qint32", 4, _QUANT, _QWHY)
quint4x2 = _NameOnly("quint4x2", 1, _QUANT, _QWHY)
quint2x4 = _NameOnly("quint2x4", 1, _QUANT, _QWHY)
chalf = complex32
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64,
       complex128, uint16, uint32, uint64, complex32)
_FROM_NP = {d.np: d for d in ALL}


def from_numpy_dtype(npd) -> dtype:
    """The ember dtype of a NumPy dtype; TypeError for types PyTorch has no tensor for."""
    d = _FROM_NP.get(npd)
    if d is None or d is complex32:   # (a NumPy array of ember's complex32 pairs is no complex)
        d = _FROM_NP.get(np.dtype(npd))
        if d is None or d is complex32:
            raise TypeError(
                f"can't convert np.ndarray of type numpy.{np.dtype(npd).type.__name__}. The only "
                "supported types are: float64, float32, float16, complex64, complex128, int64, "
                "int32, int16, int8, uint64, uint32, uint16, uint8, and bool.")
    return d


class _Defaults:
    dtype = float32
    complex = complex64


def get_default_dtype() -> dtype:
    """The dtype Python floats become (``torch.get_default_dtype``)."""
    return _Defaults.dtype


def set_default_dtype(d: dtype) -> None:
    """Set the floating default; only float32/float64 (and half types) as PyTorch allows."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _Defaults.dtype = d
    _Defaults.complex = complex128 if d is float64 else complex64


_SMALL_FLOATS = (float16, bfloat16)
_promote_cache: dict = {}


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """``torch.promote_types``: the smallest dtype both can be safely cast to."""
    if type1 is type2:
        return type1
    key = (type1, type2)
    try:
        r = _promote_cache.get(key)
    except TypeError:   # (an unhashable argument: refused below)
        r = None
    if r is None:
        for name, v in (("type1", type1), ("type2", type2)):
            if not isinstance(v, dtype):
                from ._ops._parser import must_be
                raise must_be(promote_types, name, v, "torch.dtype")
        r = _promote_cache[key] = _promote(type1, type2)
    return r


_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
               "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
               "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
               "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
               "complex32": "ComplexHalf", "quint8": "QUInt8", "qint8": "QInt8",
               "qint32": "QInt32", "quint4x2": "QUInt4x2", "quint2x4": "QUInt2x4"}


def type_name(d: dtype) -> str:
    """PyTorch's ScalarType name of ``d`` ("Float", "Long", "UInt16", ...)."""
    return _TYPE_NAMES[d.name]


def _promote(a: dtype, b: dtype) -> dtype:
    if a._cat == _QUANT or b._cat == _QUANT:
        raise RuntimeError(
            "promoteTypes with quantized numbers is not handled yet; figure out what the correct "
            f"rules should be, offending types: {type_name(a)} {type_name(b)}")
    if a is complex32 or b is complex32:
        # ComplexHalf absorbs bool, integers and float16; anything wider lifts it to the
        # complex type of the wider one's precision
        o = b if a is complex32 else a
        if o._cat <= _INT or o is float16:
            return complex32
        return complex128 if o in (float64, complex128) else complex64
    if (a in SHELL_UINTS or b in SHELL_UINTS) and a._cat != _FLOAT and b._cat != _FLOAT:
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
            f"{type_name(a)} and {type_name(b)}")
    if a._cat < b._cat:
        a, b = b, a
    if a._cat != b._cat:
        if a._cat == _COMPLEX and b is float64:
            return complex128
        return a
    if a._cat == _BOOL:
        return a
    if a._cat == _INT:
        return _FROM_NP[np.promote_types(a.np, b.np)]
    if a in _SMALL_FLOATS and b in _SMALL_FLOATS:
        return float32
    return a if a.itemsize >= b.itemsize else b


def scalar_dtype(v) -> dtype:
    """The dtype a Python number takes in promotion (a "wrapped number" in PyTorch)."""
    t = type(v)
    if t is builtins.float:
        return _Defaults.dtype
    if t is builtins.int:
        return int64
    if t is builtins.bool:
        return bool
    if t is builtins.complex:
        return _Defaults.complex
    if isinstance(v, np.generic):
        return scalar_dtype(py_scalar(v))
    raise TypeError(f"unsupported scalar type {t.__name__}")


def py_scalar(v: np.generic):
    """The Python number PyTorch's argument parser makes of NumPy scalar ``v`` (its Scalar
    conversion): NumPy integers become ``int``, ``np.complex128`` (a Python complex) ``complex``,
    anything else ``float(v)``: so ``np.bool_`` counts as a float and ``np.complex64`` loses its
    imaginary part (with NumPy's ComplexWarning), as in PyTorch. Width never matters."""
    if isinstance(v, np.integer):
        return builtins.int(v)
    if isinstance(v, builtins.complex):
        return builtins.complex(v)
    return builtins.float(v)


def _combine(higher, lower):
    """PyTorch's combine_categories: a higher-priority group wins unless outranked in category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._cat == _COMPLEX:
        return higher
    if lower._cat == _COMPLEX:
        return higher.to_complex() if higher._cat == _FLOAT else lower
    if higher._cat == _FLOAT:
        return higher
    if higher._cat == _BOOL or lower._cat == _FLOAT:
        return promote_types(higher, lower)
    return higher


def result_type_of(operands) -> dtype:
    """``torch.result_type`` over tensors and Python scalars (dim>0 > 0-dim > scalars)."""
    dim = zero = wrapped = None
    for o in operands:
        d = getattr(o, "_data", None)
        if d is None:
            s = scalar_dtype(o)
            wrapped = s if wrapped is None else promote_types(wrapped, s)
        elif d.ndim:
            t = _FROM_NP[d.dtype]
            dim = t if dim is None else promote_types(dim, t)
        else:
            t = _FROM_NP[d.dtype]
            zero = t if zero is None else promote_types(zero, t)
    return _combine(dim, _combine(zero, wrapped))


def result_type(a, b) -> dtype:
    """``torch.result_type(tensor_or_scalar, tensor_or_scalar)``."""
    return result_type_of((a, b))


_F16, _F32, _WIDE = np.dtype(np.float16), np.dtype(np.float32), (np.dtype(np.float64),
                                                                  np.dtype(np.complex128))


def astype(a: np.ndarray, npd) -> np.ndarray:
    """``a.astype(npd)`` as PyTorch's C++ casts: a double becomes a half through float (c10::Half
    is built from a float), so it can round twice."""
    if npd == _F16 and a.dtype in _WIDE:
        a = np.real(a).astype(_F32)
    return a.astype(npd)


def can_cast(from_: dtype, to: dtype) -> bool:
    """``torch.can_cast``: casting never lowers the category (complex->float, float->int...)."""
    return from_._cat <= to._cat


class finfo:
    """``torch.finfo`` for a floating dtype."""

    def __init__(self, type: dtype | None = None):
        type = (type or _Defaults.dtype).to_real()   # a complex type: its parts' (PyTorch)
        fi = ml_dtypes.finfo(type.np) if type is bfloat16 else np.finfo(type.np)
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.eps = builtins.float(fi.eps)
        self.max = builtins.float(fi.max)
        self.min = builtins.float(fi.min)
        self.tiny = self.smallest_normal = builtins.float(fi.tiny)
        self.resolution = 10.0 ** -builtins.int(fi.precision)


class iinfo:
    """``torch.iinfo`` for an integer dtype."""

    def __init__(self, type: dtype):
        ii = np.iinfo(type.np)
        self.dtype = type.name
        self.bits = ii.bits
        self.max = builtins.int(ii.max)
        self.min = builtins.int(ii.min)
