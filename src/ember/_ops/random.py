"""Random numbers: ``Generator``, the seed functions and every sampler (``torch.rand`` and
friends, ``normal``, ``bernoulli``, ``multinomial``, ``poisson`` and the in-place ``Tensor``
samplers).

Every random draw in ember goes through ``_rng(generator)`` here, so ``manual_seed`` (or a
``generator=``) makes a whole program reproducible. The bits come from NumPy's PCG64, so the
streams differ from PyTorch's mt19937/Philox; everything else (the API, dtypes and value lattices,
the state as a 5056-byte ``uint8`` tensor, argument checks and messages, autograd nodes) is
PyTorch's.
"""
from __future__ import annotations

import builtins
import math
import numbers
import os
import warnings

import numpy as np

from .. import _dtype as D
from .._device import as_device, check_factory_options
from .._device import device as _device_cls
from .._meta import meta_like
from .._tensor import Tensor
from ._dispatch import _type_name, check_inplace, commit, records
from ._registry import Op, method, wrap_outputs
from .creation import _CPP_NAMES, _new_tensor

__all__ = [
    "Generator",
    "bernoulli",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "multinomial",
    "normal",
    "poisson",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "seed",
    "set_rng_state",
]

_STATE_SIZE = 5056                 # PyTorch's CPUGeneratorImplState, so sizes and errors match
_DEFAULT_SEED = 67280421310721     # what a new torch.Generator() starts from
_MASK64 = (1 << 64) - 1
_OVERFLOW = "Overflow when unpacking long long"


# ---- Generator -------------------------------------------------------------------------

class Generator:
    """``torch.Generator`` (CPU): a seedable stream of random numbers.

    ``manual_seed``/``seed``/``initial_seed``/``get_state``/``set_state`` behave as PyTorch's;
    the state is a 5056-element ``uint8`` tensor whose first 8 bytes are the initial seed (as in
    PyTorch) and whose next 40 hold NumPy PCG64's state."""

    __slots__ = ("_rng", "_seed", "device", "__weakref__")

    def __init__(self, device="cpu") -> None:
        if isinstance(device, numbers.Integral) and not isinstance(device, builtins.bool):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        dev = _device_cls(device)
        if dev.type == "cuda":
            raise RuntimeError(
                "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend "
                "into two shared libraries: a CPU library and a CUDA library; this error has "
                "occurred because you are trying to use some CUDA functionality, but the CUDA "
                "library has not been loaded by the dynamic linker for some reason.  The CUDA "
                "library MUST be loaded, EVEN IF you don't directly use any symbols from the "
                "CUDA library! One common culprit is a lack of -Wl,--no-as-needed in your link "
                "arguments; many dynamic linkers will delete dynamic library dependencies if you "
                "don't depend on any of their symbols.  You can check if this has occurred by "
                "using ldd on your binary to see if there is a dependency on *_cuda.so "
                "library.")
        if dev.type != "cpu":
            raise RuntimeError(f"{dev.type.upper()} device type not an accelerator.")
        self.device = dev
        self._seed = _DEFAULT_SEED
        self._rng = np.random.default_rng(_DEFAULT_SEED)

    def __repr__(self) -> str:
        return f"<ember._C.Generator object at {hex(id(self))}>"

    def manual_seed(self, seed) -> Generator:
        """Seed this generator; negative seeds wrap to ``2**64 + seed`` as in PyTorch."""
        if isinstance(seed, np.integer):
            raise TypeError("an integer is required")
        if not isinstance(seed, numbers.Integral) or isinstance(seed, builtins.bool):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(1 << 63) <= seed <= _MASK64:
            raise ValueError(_OVERFLOW)
        self._seed = seed & _MASK64
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Seed from the OS's entropy (64 bits, as PyTorch reads /dev/urandom) and return it."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        """The state as a new ``uint8`` tensor of 5056 elements (``set_state`` takes it back)."""
        st = self._rng.bit_generator.state
        buf = bytearray(_STATE_SIZE)
        buf[0:8] = self._seed.to_bytes(8, "little")
        buf[8:24] = int(st["state"]["state"]).to_bytes(16, "little")
        buf[24:40] = int(st["state"]["inc"]).to_bytes(16, "little")
        buf[40:44] = int(st["has_uint32"]).to_bytes(4, "little")
        buf[44:48] = int(st["uinteger"]).to_bytes(4, "little")
        return _new_tensor(np.frombuffer(bytes(buf), np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restore a state from ``get_state`` (PyTorch's type and size checks)."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a ember.ByteTensor, but got {type(new_state).__name__}")
        d = new_state._data
        if d.dtype != np.uint8:
            raise TypeError("RNG state must be a ember.ByteTensor")
        if not new_state.is_contiguous():
            raise RuntimeError("RNG state must be contiguous")
        if d.size != _STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_SIZE} but "
                               f"found the input RNG state size to be {d.size}")
        b = np.ascontiguousarray(d).reshape(-1).tobytes()
        rng = np.random.default_rng(0)
        rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(b[8:24], "little"),
                      "inc": int.from_bytes(b[24:40], "little") | 1},   # PCG needs an odd inc
            "has_uint32": int.from_bytes(b[40:44], "little") & 1,
            "uinteger": int.from_bytes(b[44:48], "little")}
        self._seed = int.from_bytes(b[0:8], "little")
        self._rng = rng
        return self

    def clone_state(self) -> Generator:
        """A new generator at this one's state (same initial seed)."""
        return Generator(self.device.type).set_state(self.get_state())

    def get_offset(self) -> int:
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset: int) -> Generator:
        raise RuntimeError("CPU Generator does not use offset")

    def graphsafe_get_state(self) -> Generator:
        # CUDA-graph state sharing: PyTorch's CPU generator refuses it the same way
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state) -> Generator:
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def __reduce__(self):
        # PyTorch pickles (device,) and (seed, offset, state)
        return (Generator, (self.device.type,), (self._seed, None, self.get_state()))

    def __setstate__(self, st) -> None:
        self.set_state(st[2])


Generator.__module__ = "ember"
default_generator = Generator()
default_generator.seed()   # a fresh process gets a fresh seed, as PyTorch's default generator


def _gen(generator, fn: str = "") -> Generator:
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"{fn}(): argument 'generator' must be ember.Generator, not "
                        f"{type(generator).__name__}")
    return generator


def _rng(generator=None) -> np.random.Generator:
    """The NumPy generator behind ``generator`` (the default one when None): the one place every
    random draw in ember takes its bits from."""
    return _gen(generator)._rng


def manual_seed(seed) -> Generator:
    """``torch.manual_seed``: anything ``int()`` takes, in ``[-2**63, 2**64)``."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """``torch.seed``: reseed the default generator non-deterministically."""
    return default_generator.seed()


def initial_seed() -> int:
    """``torch.initial_seed``."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """``torch.get_rng_state``: the default generator's state (a ``uint8`` tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """``torch.set_rng_state``."""
    default_generator.set_state(new_state)


# ---- messages --------------------------------------------------------------------------

def _num(x) -> str:
    """A number as C++'s ostream prints a double (``%g``) or an integer."""
    if isinstance(x, numbers.Integral):
        return str(int(x))
    return "%g" % float(x)


def _not_impl(kernel: str, dt: D.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(dt)}\'')


def _tname(v) -> str:
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, Generator):
        return "ember._C.Generator"
    if isinstance(v, D.dtype):
        return "ember.dtype"
    return type(v).__name__


_FACTORY_KW = ("Tensor out = None, ember.dtype dtype = None, ember.layout layout = None, "
               "ember.device device = None, bool pin_memory = False, bool requires_grad = False")
_SIGS = {
    "rand": (f" * (tuple of ints size, *, ember.Generator generator, {_FACTORY_KW})\n"
             f" * (tuple of ints size, *, {_FACTORY_KW})\n"),
    "randperm": (f" * (int n, *, ember.Generator generator, {_FACTORY_KW})\n"
                 f" * (int n, *, {_FACTORY_KW})\n"),
    "randint": (f" * (int high, tuple of ints size, *, ember.Generator generator, {_FACTORY_KW})\n"
                f" * (int high, tuple of ints size, *, {_FACTORY_KW})\n"
                f" * (int low, int high, tuple of ints size, *, ember.Generator generator, "
                f"{_FACTORY_KW})\n"
                f" * (int low, int high, tuple of ints size, *, {_FACTORY_KW})\n"),
    "normal": (" * (Tensor mean, Tensor std, *, ember.Generator generator = None, "
               "Tensor out = None)\n"
               " * (Tensor mean, float std = 1, *, ember.Generator generator = None, "
               "Tensor out = None)\n"
               " * (float mean, Tensor std, *, ember.Generator generator = None, "
               "Tensor out = None)\n"
               " * (float mean, float std, tuple of ints size, *, ember.Generator generator = "
               f"None, {_FACTORY_KW})\n"),
    "bernoulli": (" * (Tensor input, *, ember.Generator generator = None, Tensor out = None)\n"
                  " * (Tensor input, float p, *, ember.Generator generator = None)\n"),
}
_SIGS["randn"] = _SIGS["rand"]


def _bad_call(name: str, args, kwargs) -> TypeError:
    """The argument parser's TypeError for a call matching none of ``name``'s overloads."""
    got = ", ".join([_tname(a) for a in args]
                    + [f"{k}={_tname(v)}" for k, v in kwargs.items() if v is not None])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{_SIGS[name]}")


def _check_gen(name: str, generator, args, kwargs) -> Generator:
    if generator is not None and not isinstance(generator, Generator):
        raise _bad_call(name, args, dict(kwargs, generator=generator))
    return _gen(generator)


def _sizes(name: str, size) -> tuple:
    """``size`` from ``f(*size)`` / ``f(size)``, with the parser's errors."""
    if len(size) == 1 and not isinstance(size[0], (numbers.Integral, np.integer, Tensor)):
        size = tuple(size[0])
    out = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor) and s.numel() == 1 and not s.is_floating_point():
            s = s.item()
        if not isinstance(s, (numbers.Integral, np.integer)) or isinstance(s, builtins.bool):
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{type(s).__name__}\"")
        out.append(int(s))
    for s in out:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(out)}")
    return tuple(out)


# ---- drawing arrays --------------------------------------------------------------------

def _real_np(dt: D.dtype) -> np.dtype:
    """The NumPy dtype of one part of ``dt`` (complex64 -> float32, complex32 -> float16)."""
    return dt.to_real().np


def _digits(npdt: np.dtype) -> int:
    """``std::numeric_limits<T>::digits`` of a floating dtype."""
    if npdt == D.bfloat16.np:
        return 8
    return {2: 11, 4: 24, 8: 53}[np.dtype(npdt).itemsize]


def _uniform01(rng: np.random.Generator, shape, npdt) -> np.ndarray:
    """Uniform on [0, 1) on PyTorch's lattice for the dtype: multiples of 2**-digits."""
    d = _digits(npdt)
    if d == 24:
        return rng.random(shape, dtype=np.float32)
    if d == 53:
        return rng.random(shape)
    return rng.integers(0, 1 << d, shape).astype(np.float32) * np.float32(2.0 ** -d)


def _draw(dt: D.dtype, shape, real_fn) -> np.ndarray:
    """An array of dtype ``dt``: ``real_fn(shape, part_dtype)`` fills it, a complex dtype's real
    and imaginary parts as two real draws (PyTorch samples ``view_as_real``)."""
    if dt.is_complex:
        part = real_fn(tuple(shape) + (2,), _real_np(dt))
        return np.ascontiguousarray(part, dtype=_real_np(dt)).view(dt.np)[..., 0]
    return np.asarray(real_fn(tuple(shape), dt.np)).astype(dt.np, copy=False)


def _float_only(dt: D.dtype, kernel: str) -> None:
    if not (dt.is_floating_point or dt.is_complex):
        raise _not_impl(kernel, dt)


def _uniform_np(rng, dt: D.dtype, shape, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    def fn(s, npdt):
        u = _uniform01(rng, s, npdt)
        if low == 0.0 and high == 1.0:
            return u
        return u.astype(np.float64) * (high - low) + low
    return _draw(dt, shape, fn)


def _normal_np(rng, dt: D.dtype, shape, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
    if dt.is_complex:   # each part gets half the variance
        std = std / math.sqrt(2.0)

    def fn(s, npdt):
        z = rng.standard_normal(s, dtype=np.float64 if _digits(npdt) == 53 else np.float32)
        if mean == 0.0 and std == 1.0:
            return z
        return z.astype(np.float64) * std + mean
    return _draw(dt, shape, fn)


def _new(data, dt: D.dtype, shape, device, requires_grad: bool) -> Tensor:
    return _new_tensor(data if data is not None else meta_like(shape, dt.np), device,
                       requires_grad)


def _is_meta(device) -> bool:
    return device is not None and as_device(device).type == "meta"


def _kw_size(name: str, size: tuple, kwargs: dict, given: dict) -> tuple:
    """``size`` from ``f(*size)`` or ``f(size=...)`` (the only keyword ``rand``/``randn`` take
    beyond their own); any other keyword is the parser's invalid combination."""
    if any(k != "size" for k in kwargs):
        shown = {k: v for k, v in given.items() if v is not None}
        shown.update(kwargs)
        raise _bad_call(name, size, dict(reversed(list(shown.items()))))
    if "size" in kwargs:
        return size + (kwargs["size"],)
    return size


# ---- factories -------------------------------------------------------------------------

def _dtype_checks(dtype, default: D.dtype, requires_grad: bool, kernel: str | None = None
                  ) -> D.dtype:
    """The dtype checks every random factory makes once its arguments parsed: ``dtype`` (else
    ``default``); a floating-only kernel (``kernel``: its name) refuses other dtypes; only
    floating and complex results may require grad."""
    dt = dtype or default
    if kernel is not None:
        _float_only(dt, kernel)
    if requires_grad and not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return dt


def _made(draw, dt: D.dtype, shape, device, requires_grad: bool) -> Tensor:
    """A factory's result: ``draw()`` (nothing is drawn for a meta tensor)."""
    return _new(None if _is_meta(device) else draw(), dt, shape, device, requires_grad)


def _factory_out(fn, out, args: tuple, kwargs: dict) -> Tensor:
    """A random factory's ``out=`` (``_out.with_out``): drawn in ``out``'s dtype (an explicit
    ``dtype`` must be ``out``'s), ``out`` resized without a warning, refused under autograd
    as ``aten::<name>``; ``requires_grad=True`` then marks ``out``, as PyTorch's does."""
    from ._out import check_factory_out, with_out
    if not isinstance(out, Tensor):
        raise _bad_call(fn.__name__, args, {"out": out})
    check_factory_out(out, kwargs.get("dtype"), kwargs.pop("device", None))
    rg = kwargs.pop("requires_grad", False)
    r = with_out(fn, out, args, kwargs, name="aten::" + fn.__name__, dtype="as_out", warn=False)
    if rg:
        r.requires_grad_(True)
    return r


def _size_factory(name: str, size: tuple, kwargs: dict, generator, dtype, layout, pin_memory):
    """``rand`` / ``randn``'s argument parsing: (generator, shape)."""
    check_factory_options(layout, pin_memory)
    size = _kw_size(name, size, kwargs, {"generator": generator, "dtype": dtype})
    if not size:
        raise _bad_call(name, (), {"generator": generator})
    return _check_gen(name, generator, size, {}), _sizes(name, size)


def rand(*size, generator: Generator | None = None, out=None, dtype: D.dtype | None = None,
         layout=None, device=None, requires_grad: bool = False, pin_memory: bool = False,
         **kwargs) -> Tensor:
    """``torch.rand``: uniform on [0, 1) (complex dtypes: each part)."""
    if out is not None:
        return _factory_out(rand, out, size, dict(kwargs, generator=generator, dtype=dtype,
                                                  device=device, requires_grad=requires_grad))
    g, shape = _size_factory("rand", size, kwargs, generator, dtype, layout, pin_memory)
    dt = _dtype_checks(dtype, D.get_default_dtype(), requires_grad, "check_uniform_bounds")
    return _made(lambda: _uniform_np(g._rng, dt, shape), dt, shape, device, requires_grad)


def randn(*size, generator: Generator | None = None, out=None, dtype: D.dtype | None = None,
          layout=None, device=None, requires_grad: bool = False, pin_memory: bool = False,
          **kwargs) -> Tensor:
    """``torch.randn``: standard normal (complex dtypes: each part has variance 1/2)."""
    if out is not None:
        return _factory_out(randn, out, size, dict(kwargs, generator=generator, dtype=dtype,
                                                   device=device, requires_grad=requires_grad))
    g, shape = _size_factory("randn", size, kwargs, generator, dtype, layout, pin_memory)
    dt = _dtype_checks(dtype, D.get_default_dtype(), requires_grad, "normal_kernel_cpu")
    return _made(lambda: _normal_np(g._rng, dt, shape), dt, shape, device, requires_grad)


def _long(v, name: str, fn: str, pos: int) -> int:
    if isinstance(v, Tensor) and v.numel() == 1 and not (v.is_floating_point()
                                                         or v.is_complex()):
        v = v.item()
    if not isinstance(v, (numbers.Integral, np.integer)) or isinstance(v, builtins.bool):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not "
                        f"{type(v).__name__}")
    v = int(v)
    if not -(1 << 63) <= v < (1 << 63):
        raise ValueError(_OVERFLOW)
    return v


def randint(*args, size=None, low=None, high=None, generator: Generator | None = None,
            out=None, dtype: D.dtype | None = None, layout=None, device=None,
            requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """``torch.randint(high, size)`` / ``torch.randint(low, high, size)``: integers in
    [low, high), int64 unless ``dtype`` says otherwise (checked as ``random_`` does)."""
    if out is not None:
        return _factory_out(randint, out, args, {
            "size": size, "low": low, "high": high, "generator": generator, "dtype": dtype,
            "device": device, "requires_grad": requires_grad})
    check_factory_options(layout, pin_memory)
    args = list(args)
    if size is None and len(args) in (2, 3):
        size = args.pop()
    if high is None and args:
        high = args.pop()
    if low is None and args:
        low = args.pop()
    if args or high is None or size is None:
        raise _bad_call("randint", tuple(a for a in (low, high, size) if a is not None),
                        {"generator": generator})
    g = _check_gen("randint", generator, (), {})
    npos = 2 if low is not None else 1
    if isinstance(size, (numbers.Integral, Tensor)):
        raise TypeError(f"randint(): argument 'size' (position {npos + 1}) must be tuple of "
                        f"ints, not {type(size).__name__}")
    shape = _sizes("randint", (size,))
    lo = 0 if low is None else _long(low, "low", "randint", 1)
    hi = _long(high, "high", "randint", npos)
    dt = _dtype_checks(dtype, D.int64, requires_grad)
    return _made(lambda: _random_from_to(g._rng, dt, shape, lo, hi, stacklevel=5), dt, shape,
                 device, requires_grad)


def randperm(n, *args, generator: Generator | None = None, out=None,
             dtype: D.dtype | None = None, layout=None, device=None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """``torch.randperm``: a random permutation of ``0..n-1`` (PyTorch's dtype checks)."""
    if out is not None:
        return _factory_out(randperm, out, (n,) + args, {
            "generator": generator, "dtype": dtype, "device": device,
            "requires_grad": requires_grad})
    check_factory_options(layout, pin_memory)
    if args:   # e.g. a generator given positionally
        raise _bad_call("randperm", (n,) + args, {"generator": generator})
    g = _check_gen("randperm", generator, (n,), {})
    n = _long(n, "n", "randperm", 1)
    dt = dtype or D.int64
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if dt is D.bool or dt.is_complex:
        raise _not_impl("randperm", dt)
    if not dt.is_floating_point and n > 0 and n - 1 > D.iinfo(dt).max:
        ctype = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t",
                 "int32": "int32_t"}[dt.name]
        raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
    limits = {D.float16: (2049, "2049 for Half"), D.float32: ((1 << 24) + 1, "2^24+1 for Float"),
              D.float64: ((1 << 53) + 1, "2^53+1 for Double")}
    if dt in limits and n > limits[dt][0]:
        raise RuntimeError(f"n cannot be greater than {limits[dt][1]} type.")
    _dtype_checks(dt, dt, requires_grad)
    return _made(lambda: g._rng.permutation(n).astype(dt.np), dt, (n,), device, requires_grad)


def _laid_like(out: Tensor, input: Tensor, memory_format, fn: str = "rand_like") -> Tensor:
    """A fresh ``*_like`` result re-laid out as PyTorch's ``empty_like(input, memory_format)``
    (``preserve_format`` keeps a dense input's strides)."""
    from .. import _layout as _L
    d = input._data
    if memory_format is not None:
        _L.check_format(memory_format, fn)
    elif type(d) is not np.ndarray or d.flags.c_contiguous and (
            d.ndim < 2 or 1 not in d.shape) and d.size:
        return out
    want = _L.like_strides(d.shape, input.stride(), memory_format)
    if type(out._data) is np.ndarray and out.stride() != want:
        out._data = _L.copy_to_strides(out._data, want)
    return out


def _like_args(input: Tensor, dtype, device):
    return dtype or input.dtype, device if device is not None else input.device


def rand_like(input: Tensor, *, generator: Generator | None = None, dtype=None, layout=None,
              device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    """``torch.rand_like``."""
    check_factory_options(layout)
    dt, dev = _like_args(input, dtype, device)
    return _laid_like(rand(tuple(input.shape), generator=generator, dtype=dt, device=dev,
                           requires_grad=requires_grad), input, memory_format)


def randn_like(input: Tensor, *, generator: Generator | None = None, dtype=None, layout=None,
               device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    """``torch.randn_like``."""
    check_factory_options(layout)
    dt, dev = _like_args(input, dtype, device)
    return _laid_like(randn(tuple(input.shape), generator=generator, dtype=dt, device=dev,
                            requires_grad=requires_grad), input, memory_format, "randn_like")


def randint_like(input: Tensor, low=None, high=None, *, generator: Generator | None = None,
                 dtype=None, layout=None, device=None, requires_grad: bool = False,
                 memory_format=None) -> Tensor:
    """``torch.randint_like(input, high)`` / ``(input, low, high)``: of ``input``'s dtype."""
    check_factory_options(layout)
    if high is None:
        low, high = None, low
    if high is None:
        raise TypeError("randint_like() missing required argument 'high' (pos 2)")
    dt, dev = _like_args(input, dtype, device)
    lo_hi = (high,) if low is None else (low, high)
    return _laid_like(randint(*lo_hi, tuple(input.shape), generator=generator, dtype=dt,
                              device=dev, requires_grad=requires_grad), input, memory_format,
                      "randint_like")


# ---- random_ and its integer ranges ----------------------------------------------------

def _warn_range(v: int, name: str, dt: D.dtype, stacklevel: int) -> None:
    d = _digits(dt.np)
    if v < -(1 << d) or v > (1 << d):
        warnings.warn(
            f"{name} is out of bounds [-(2^{d}), 2^{d}]. Due to precision limitations "
            f"{_CPP_NAMES[dt.name]} can support discrete uniform distribution only within this "
            "range. This warning will become an error in version 1.7 release, please fix the "
            "code in advance", UserWarning, stacklevel=stacklevel + 1)


def _check_in_range(lo: int, hi_inc: int, dt: D.dtype, stacklevel: int) -> None:
    """PyTorch's ``check_from_to_in_range``."""
    if dt.is_floating_point:
        info = D.finfo(dt)
        mn, mx = float(info.min), float(info.max)
    elif dt is D.bool:
        mn, mx = 0, 1
    elif dt.is_complex:
        raise RuntimeError(
            "check_random_bounds handles only integral, floating-point and boolean types")
    else:
        info = D.iinfo(dt)
        mn, mx = info.min, info.max
    cpp = _CPP_NAMES[dt.name]
    if not mn <= lo <= mx:
        raise RuntimeError(f"from is out of bounds for {cpp}")
    if not mn <= hi_inc <= mx:
        raise RuntimeError(f"to - 1 is out of bounds for {cpp}")
    if dt.is_floating_point:
        _warn_range(lo, "from", dt, stacklevel + 1)
        _warn_range(hi_inc, "to - 1", dt, stacklevel + 1)


def _round_from(v: int, npdt) -> int:
    """PyTorch's ``update_from``: a start that rounds below itself in the dtype moves up."""
    r = int(np.asarray(v + 1, np.float64).astype(npdt).astype(np.float64))
    if r < v:
        n = builtins.abs(v + 1).bit_length() - 1
        v = r + (1 << (n - _digits(npdt) + 1))
    return v


def _round_to(v: int, npdt) -> int:
    """PyTorch's ``update_to``: an end that rounds above itself in the dtype moves down."""
    r = int(np.asarray(v - 1, np.float64).astype(npdt).astype(np.float64))
    if r >= v:
        n = builtins.abs(v - 1).bit_length() - 1
        v = r - (1 << (n - _digits(npdt) + 1))
    return v


def _random_from_to(rng, dt: D.dtype, shape, lo: int, hi: int | None,
                    stacklevel: int) -> np.ndarray:
    """Integers in [lo, hi) (``hi=None``: up to the dtype's largest integer), as ``random_``."""
    if hi is not None:
        if lo >= hi:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} "
                               f">= to={hi}")
        if dt.is_floating_point:
            lo, hi = _round_from(lo, dt.np), _round_to(hi, dt.np)
            if lo >= hi:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' "
                                   f"casted to dtype, but got from={lo} >= to={hi}")
        hi_inc = hi - 1
    elif lo == -(1 << 63):
        # the whole int64 range (PyTorch's full-64-bit kernel), cast to the dtype
        if dt is D.float16:
            raise _not_impl("random_full_64_bits_range_kernel_cpu", dt)
        return rng.integers(lo, (1 << 63) - 1, shape, dtype=np.int64,
                            endpoint=True).astype(dt.np)
    elif dt.is_floating_point:
        hi_inc = builtins.min(1 << _digits(dt.np), (1 << 63) - 1)
        lo = _round_from(lo, dt.np)
        if lo >= hi_inc:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal "
                               f"to 'to_inc' casted to dtype, but got from={lo} > "
                               f"to_inc={hi_inc}")
    elif dt is D.bool:
        hi_inc = 1
    elif dt.is_complex:
        raise RuntimeError("random_from_to_impl handles only integral, floating-point and "
                           "boolean types")
    else:
        hi_inc = D.iinfo(dt).max
    _check_in_range(lo, hi_inc, dt, stacklevel + 1)
    vals = rng.integers(lo, hi_inc, shape, dtype=np.int64, endpoint=True)
    return vals.astype(dt.np)


def _random_full(rng, dt: D.dtype, shape) -> np.ndarray:
    """``random_()``: [0, 2**digits] for floating dtypes, [0, max] for integers, {0, 1} bool."""
    if dt.is_complex:
        raise _not_impl("random_kernel_cpu", dt)
    if dt.is_floating_point:
        top = 1 << _digits(dt.np)
    elif dt is D.bool:
        top = 1
    else:
        top = D.iinfo(dt).max
    return rng.integers(0, top, shape, dtype=np.int64, endpoint=True).astype(dt.np)


# ---- autograd nodes of the samplers: zero gradients, zero tangents -----------------------

def _zero_vjp(ns, g, need, *params):
    return tuple(ns.zeros_of(g, g.shape) if n else None for n in need)


def _zero_jvp(ns, tangents, primals, outs, *params):
    return outs[0].new_zeros(outs[0]._data.shape)


def _sampler_op(name: str, node: str) -> Op:
    op = Op(name, None, _zero_vjp, node=node)
    op.jvp = _zero_jvp
    return op


def _not_impl_vjp(ns, g, need, *params):
    raise RuntimeError("derivative for aten::bernoulli is not implemented")


NORMAL_TT = _sampler_op("normal_tt", "NormalBackward3")
NORMAL_TF = _sampler_op("normal_tf", "NormalBackward1")
NORMAL_FT = _sampler_op("normal_ft", "NormalBackward2")
BERNOULLI = _sampler_op("bernoulli", "BernoulliBackward0")
BERNOULLI_P = Op("bernoulli_p", None, _not_impl_vjp, node="ember::autograd::NotImplemented")
BERNOULLI_P.jvp = _zero_jvp
POISSON = _sampler_op("poisson", "PoissonBackward0")
UNIFORM_ = _sampler_op("uniform_", "UniformBackward0")
NORMAL_ = _sampler_op("normal_", "NormalBackward0")
BERNOULLI_T_ = _sampler_op("bernoulli_tensor_", "BernoulliBackward1")
BERNOULLI_F_ = _sampler_op("bernoulli_float_", "BernoulliBackward2")
RANDOM_FROM_TO_ = _sampler_op("random_from_to_", "RandomBackward0")
RANDOM_TO_ = _sampler_op("random_to_", "RandomBackward1")
RANDOM_ = _sampler_op("random_", "RandomBackward2")
EXPONENTIAL_ = _sampler_op("exponential_", "ExponentialBackward0")
CAUCHY_ = _sampler_op("cauchy_", "CauchyBackward0")
LOG_NORMAL_ = _sampler_op("log_normal_", "LogNormalBackward0")
GEOMETRIC_ = _sampler_op("geometric_", "GeometricBackward0")


# ---- normal, bernoulli, poisson, multinomial ---------------------------------------------

def _std_ok(std: float) -> None:
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")


def _as_float(v, fn: str, name: str, pos: int) -> float:
    if isinstance(v, Tensor):
        if v.numel() != 1:
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be float, not "
                            "Tensor")
        return v.item()
    if not isinstance(v, numbers.Real):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be float, not "
                        f"{type(v).__name__}")
    return float(v)


def normal(mean=None, std=None, size=None, *, generator: Generator | None = None, out=None,
           dtype=None, layout=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """``torch.normal``, all four overloads: (Tensor, Tensor) broadcast, (Tensor, float),
    (float, Tensor), (float, float, size). The tensor overloads record NormalBackward1/2/3
    (zero gradients, as in PyTorch)."""
    if out is not None:
        return _normal_out(out, mean, std, size, generator, dtype, requires_grad)
    check_factory_options(layout, pin_memory)
    if mean is None:
        raise TypeError('normal() missing 1 required positional arguments: "mean"')
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        args = (mean,) + ((std,) if std is not None else ()) + ((size,) if size is not None
                                                                else ())
        if size is None or std is None:
            raise _bad_call("normal", args, {"generator": generator, "dtype": dtype})
        g = _check_gen("normal", generator, args, {})
        m, s = float(mean), float(std)
        shape = _sizes("normal", (size,))
        _std_ok(s)
        dt = _dtype_checks(dtype, D.get_default_dtype(), requires_grad, "normal_kernel_cpu")
        return _made(lambda: _normal_np(g._rng, dt, shape, m, s), dt, shape, device,
                     requires_grad)
    args = (mean,) + ((std,) if std is not None else ()) + ((size,) if size is not None else ())
    if size is not None or dtype is not None or requires_grad or device is not None:
        raise _bad_call("normal", args, {"generator": generator, "dtype": dtype})
    g = _check_gen("normal", generator, args, {})
    if st and std.is_complex():
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if mt and st:
        shapes = (tuple(mean.shape), tuple(std.shape))
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            from ._dispatch import check_broadcast
            check_broadcast(*shapes)
            raise
        dt = mean.dtype
        op, inputs = NORMAL_TT, (mean, std)
        _float_only(dt, "normal_kernel_cpu")
        _float_only(std.dtype, "normal_kernel_cpu")
        sd = std._data
        if sd.size and not bool(np.all(sd >= 0)):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        m, s = mean._data, sd
    elif mt:
        s = 1.0 if std is None else _as_float(std, "normal", "std", 2)
        _std_ok(s)
        shape, dt = tuple(mean.shape), mean.dtype
        _float_only(dt, "normal_kernel_cpu")
        op, inputs, m = NORMAL_TF, (mean, s), mean._data
    else:
        m = _as_float(mean, "normal", "mean", 1)
        shape, dt = tuple(std.shape), std.dtype
        _float_only(dt, "normal_kernel_cpu")
        sd = std._data
        if sd.size and not bool(np.all(sd >= 0)):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        op, inputs, s = NORMAL_FT, (m, std), sd
    if any(isinstance(t, Tensor) and t.is_meta for t in inputs):
        return wrap_outputs(op, inputs, (), meta_like(shape, dt.np))
    z = _normal_np(g._rng, dt, shape)
    out = (z * np.asarray(s, dtype=_real_np(dt)) + np.asarray(m)).astype(dt.np)
    return wrap_outputs(op, inputs, (), out)


def _normal_out(out, mean, std, size, generator, dtype, requires_grad) -> Tensor:
    """``normal(..., out=)``: the factory form as the other factories; the tensor forms draw
    into ``out``'s dtype (PyTorch resizes ``out`` and runs ``normal_`` on it, so a
    non-floating ``out`` is refused by that kernel)."""
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        return _factory_out(normal, out, (mean, std, size), {
            "generator": generator, "dtype": dtype, "requires_grad": requires_grad})
    from ._out import with_out
    if isinstance(out, Tensor):
        _float_only(out.dtype, "normal_kernel_cpu")
    return with_out(normal, out, (mean, std) + (() if size is None else (size,)),
                    {"generator": generator}, dtype="cast")


_P_IN = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
         "be improved?  If so, please report an enhancement request to PyTorch.)")


def _bernoulli_np(rng, p: np.ndarray, npdt) -> np.ndarray:
    """Bernoulli(p) draws of dtype ``npdt`` (p an array broadcast to the output)."""
    return (rng.random(p.shape) < p).astype(npdt)


def bernoulli(input: Tensor, p=None, *, generator: Generator | None = None,
              out=None) -> Tensor:
    """``torch.bernoulli(input)`` draws 1 with probability ``input`` (BernoulliBackward0, zero
    gradient); ``torch.bernoulli(input, p)`` fills ``input``'s shape and dtype with
    Bernoulli(``p``) draws (not differentiable: its node raises, as PyTorch's). ``out``
    (``bernoulli(input)`` only) is resized to ``input``'s shape and takes the draws in its own
    dtype, as PyTorch's ``out.resize_(...).bernoulli_(input)``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    args = (input,) + ((p,) if p is not None else ())
    if out is not None and p is not None:
        raise _bad_call("bernoulli", args, {"out": out})
    g = _check_gen("bernoulli", generator, args, {})
    if out is not None:
        from ._out import with_out
        return with_out(bernoulli, out, (input,), {"generator": g}, dtype=_any_dtype,
                        warn=False, overlap="partial")
    d = input._data
    if p is None:
        if input.is_complex():
            raise _not_impl("bernoulli_tensor_cpu_self_", input.dtype)
        if not input.is_floating_point():
            raise _not_impl("bernoulli_tensor_cpu_p_", input.dtype)
        if input.is_meta:
            return wrap_outputs(BERNOULLI, (input,), (), meta_like(d.shape, d.dtype))
        pd = np.asarray(d, np.float64)
        if not bool(np.all((pd >= 0) & (pd <= 1))):
            raise RuntimeError(_P_IN)
        return wrap_outputs(BERNOULLI, (input,), (), _bernoulli_np(g._rng, pd, d.dtype))
    pv = _as_float(p, "bernoulli", "p", 2)
    if not 0 <= pv <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(pv)}")
    if input.is_complex():
        raise _not_impl("bernoulli_scalar_cpu_", input.dtype)
    if input.is_meta:
        out = meta_like(d.shape, d.dtype)
    else:
        out = _bernoulli_np(g._rng, np.full(d.shape, pv), d.dtype)
    return wrap_outputs(BERNOULLI_P, (input,), (), out)


def _any_dtype(result_dtype, out_dtype) -> None:
    """(0/1 draws go into an ``out`` of any dtype)"""


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """``torch.poisson``: Poisson(rate) draws of ``input``'s floating dtype (PoissonBackward0,
    zero gradient)."""
    g = _gen(generator, "poisson")
    if not input.is_floating_point():
        raise _not_impl("poisson_cpu", input.dtype)
    d = input._data
    if input.is_meta:
        return wrap_outputs(POISSON, (input,), (), meta_like(d.shape, d.dtype))
    lam = np.asarray(d, np.float64)
    if not bool(np.all(lam >= 0)):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    big = lam > 1e15      # beyond NumPy's sampler: the normal limit is exact to float precision
    out = g._rng.poisson(np.where(big, 0.0, lam)).astype(np.float64)
    if big.any():
        fin = np.where(np.isinf(lam), 0.0, lam)
        approx = np.rint(fin + np.sqrt(fin) * g._rng.standard_normal(lam.shape))
        out = np.where(big, np.where(np.isinf(lam), -2.0 ** 63, approx), out)
    return wrap_outputs(POISSON, (input,), (), out.astype(d.dtype))


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None, out=None) -> Tensor:
    """``torch.multinomial``: category indices drawn from the rows of ``input`` (1-d or 2-d,
    non-negative weights). Without replacement PyTorch's exponential race (the ``k`` largest
    ``p / Exp(1)``), with replacement inverse-CDF sampling; PyTorch's checks and messages."""
    g = _gen(generator, "multinomial")
    n = _long(num_samples, "num_samples", "multinomial", 2)
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.is_floating_point():
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_type_name(input.dtype)}")
    if out is not None:
        from ._out import with_out
        if isinstance(out, Tensor) and out.dtype is not D.int64:
            raise RuntimeError(f"multinomial expects Long tensor out, got: "
                               f"{_type_name(out.dtype)}")
        return with_out(multinomial, out, (input, n, replacement), {"generator": g},
                        differentiable=False, warn=False)
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    k = input.shape[-1]
    if not replacement and n > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if k > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = 1 if input.dim() == 1 else input.shape[0]
    p = np.asarray(input._data, np.float64).reshape(rows, k)
    idx = multinomial_np(g._rng, p, n, replacement)
    out = idx.reshape((n,) if input.dim() == 1 else (rows, n))
    return _new_tensor(out)


def multinomial_np(rng: np.random.Generator, p: np.ndarray, n: int,
                   replacement: bool) -> np.ndarray:
    """``multinomial`` on a 2-d float64 weight array (rows x categories) -> int64 indices."""
    rows, k = p.shape
    if rows == 0 or n == 0:
        return np.zeros((rows, n), np.int64)
    if not replacement or n == 1:
        if not (bool(np.all(p < np.inf)) and bool(np.all(p >= 0))):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if bool(np.any(p.sum(1) == 0)):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        keys = p / rng.standard_exponential(p.shape)
        # the n largest keys, largest first (topk); ties toward the lower index
        order = np.argsort(-keys, axis=1, kind="stable")
        return order[:, :n].astype(np.int64)
    total = p.sum(1, keepdims=True)
    for r in builtins.range(rows):
        # PyTorch checks row by row, entry by entry: `v >= 0` (NaN fails it) then finiteness,
        # then the row's sum
        row = p[r]
        neg = np.flatnonzero(~(row >= 0))
        inf = np.flatnonzero(np.isinf(row))
        if neg.size and (not inf.size or neg[0] <= inf[0]):   # (-inf fails `v >= 0` first)
            raise RuntimeError("invalid multinomial distribution (encountering probability "
                               "entry < 0)")
        if inf.size:
            raise RuntimeError("invalid multinomial distribution (encountering probability "
                               "entry = infinity or NaN)")
        if not total[r, 0] > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    cdf = np.cumsum(p / total, axis=1)
    u = rng.random((rows, n))
    out = np.empty((rows, n), np.int64)
    for r in builtins.range(rows):
        # side='right' never picks a zero-probability category; a draw past a cdf that sums to
        # just under 1 goes to the last category with positive weight
        i = np.searchsorted(cdf[r], u[r], side="right")
        last = int(np.flatnonzero(p[r])[-1])
        out[r] = np.minimum(i, last)
    return out


# ---- in-place samplers on Tensor --------------------------------------------------------

def _fill(self: Tensor, op: Op, data_fn, others: tuple = (), params: tuple = ()) -> Tensor:
    """Write ``data_fn()`` into ``self`` in place: version bump and, when recording, the
    sampler's node (zero gradient) as ``self``'s history."""
    if self.is_meta:
        self._vc.v += 1
        return self
    out = np.asarray(data_fn())
    inputs = (self,) + others
    return commit(op, self, inputs, params, out, records(inputs))


def _uniform_(self: Tensor, *args, generator: Generator | None = None, **kwargs) -> Tensor:
    """``Tensor.uniform_(from=0, to=1)``: uniform on [from, to) (both parts of a complex)."""
    names = ("from", "to")
    for k in kwargs:
        if k not in names:
            raise TypeError(f"uniform_() got an unexpected keyword argument '{k}'")
    vals = dict(zip(names, (0.0, 1.0)))
    vals.update(zip(names, args))
    vals.update(kwargs)
    check_inplace(self)
    g = _gen(generator, "uniform_")
    lo = _as_float(vals["from"], "uniform_", "from", 1)
    hi = _as_float(vals["to"], "uniform_", "to", 2)
    dt = self.dtype
    part = D._FROM_NP[_real_np(dt)] if dt.is_complex else dt
    if not part.is_floating_point:
        raise _not_impl("check_uniform_bounds", dt)
    info = D.finfo(part)
    cpp = _CPP_NAMES[part.name]
    for v, nm in ((lo, "from"), (hi, "to")):
        if not float(info.min) <= v <= float(info.max):
            raise RuntimeError(f"{nm} is out of bounds for {cpp}")
    if lo > hi:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_num(lo)} > to={_num(hi)}")
    if hi - lo > float(info.max):
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{_type_name(part)}>::max(), but found to={_num(hi)} and "
                           f"from={_num(lo)} which result in to-from to exceed the limit")
    return _fill(self, UNIFORM_, lambda: _uniform_np(g._rng, dt, self.shape, lo, hi),
                 params=(lo, hi))


def _normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *,
             generator: Generator | None = None) -> Tensor:
    """``Tensor.normal_``: N(mean, std**2) (a complex tensor: std/sqrt(2) per part)."""
    check_inplace(self)
    g = _gen(generator, "normal_")
    m = _as_float(mean, "normal_", "mean", 1)
    s = _as_float(std, "normal_", "std", 2)
    _std_ok(s)
    _float_only(self.dtype, "normal_kernel_cpu")
    return _fill(self, NORMAL_, lambda: _normal_np(g._rng, self.dtype, self.shape, m, s),
                 params=(m, s))


def _bernoulli_(self: Tensor, p=0.5, *, generator: Generator | None = None) -> Tensor:
    """``Tensor.bernoulli_(p)``: p a number or a tensor broadcast to ``self``."""
    if isinstance(p, Tensor):
        check_inplace(self, (p,))
        g = _gen(generator, "bernoulli_")
        if self.is_complex():
            raise _not_impl("bernoulli_tensor_cpu_self_", self.dtype)
        if not p.is_floating_point():
            raise _not_impl("bernoulli_tensor_cpu_p_", p.dtype)
        pe = p.expand(tuple(self.shape))._data
        pd = np.asarray(pe, np.float64)
        if not bool(np.all((pd >= 0) & (pd <= 1))):
            raise RuntimeError(_P_IN)
        return _fill(self, BERNOULLI_T_, lambda: _bernoulli_np(g._rng, pd, self._data.dtype),
                     others=(p,))
    check_inplace(self)
    g = _gen(generator, "bernoulli_")
    pv = _as_float(p, "bernoulli_", "p", 1)
    if not 0 <= pv <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(pv)}")
    if self.is_complex():
        raise _not_impl("bernoulli_scalar_cpu_", self.dtype)
    return _fill(self, BERNOULLI_F_,
                 lambda: _bernoulli_np(g._rng, np.full(tuple(self.shape), pv),
                                       self._data.dtype), params=(pv,))


_RANDOM_SIGS = (" * (*, ember.Generator generator = None)\n"
                " * (int from, int to, *, ember.Generator generator = None)\n"
                " * (int to, *, ember.Generator generator = None)\n")


def _random_(self: Tensor, *args, generator: Generator | None = None, **kwargs) -> Tensor:
    """``Tensor.random_()``, ``random_(to)``, ``random_(from, to)`` (``to=None``: up to the
    dtype's largest integer)."""
    def bad():
        # PyTorch's parser lists the keywords last-first
        kws = list(reversed(kwargs.items()))
        got = ", ".join([_tname(a) for a in args] + [f"{k}={_tname(v)}" for k, v in kws])
        if kwargs and not args:
            got += ", "
        sigs = _RANDOM_SIGS
        wrong = [k for k, _ in kws]   # the first overload takes no from/to
        if wrong:
            sigs = sigs.replace(
                "None)\n", "None)\n      didn't match because some of the keywords were "
                f"incorrect: {', '.join(wrong)}\n", 1)
        return TypeError(f"random_() received an invalid combination of arguments - got "
                         f"({got}), but expected one of:\n{sigs}")
    vals = list(args)
    if len(vals) > 2:
        raise TypeError(f"random_() takes 2 positional arguments but {len(vals)} were given")
    if any(k not in ("from", "to") for k in kwargs):
        raise bad()
    if "from" in kwargs:
        vals = [kwargs["from"]] + vals
    if "to" in kwargs:
        vals = vals + [kwargs["to"]] if vals else [0, kwargs["to"]]
    for v in vals:
        if v is not None and (not isinstance(v, (numbers.Integral, np.integer))
                              or isinstance(v, builtins.bool)):
            raise bad()
    check_inplace(self)
    g = _gen(generator, "random_")
    shape = tuple(self.shape)
    if not vals:
        return _fill(self, RANDOM_, lambda: _random_full(g._rng, self.dtype, shape))
    vals = [None if v is None else _long(v, "to", "random_", 1) for v in vals]
    if len(vals) == 1:
        data = _random_from_to(g._rng, self.dtype, shape, 0, vals[0], stacklevel=2)
        return _fill(self, RANDOM_TO_, lambda: data, params=(vals[0],))
    data = _random_from_to(g._rng, self.dtype, shape, vals[0], vals[1], stacklevel=2)
    return _fill(self, RANDOM_FROM_TO_, lambda: data, params=tuple(vals))


def _continuous(self: Tensor, what: str, name) -> None:
    if not self.is_floating_point():
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {name}")


def _exponential_(self: Tensor, lambd: float = 1.0, *,
                  generator: Generator | None = None) -> Tensor:
    """``Tensor.exponential_``: Exp(lambd) draws."""
    check_inplace(self)
    g = _gen(generator, "exponential_")
    lam = _as_float(lambd, "exponential_", "lambd", 1)
    if not lam > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lam)}")
    _continuous(self, "Exponential", _type_name(self.dtype))
    return _fill(self, EXPONENTIAL_, lambda: g._rng.standard_exponential(self.shape) / lam,
                 params=(lam,))


def _cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
             generator: Generator | None = None) -> Tensor:
    """``Tensor.cauchy_``: Cauchy(median, sigma) draws."""
    check_inplace(self)
    g = _gen(generator, "cauchy_")
    m = _as_float(median, "cauchy_", "median", 1)
    s = _as_float(sigma, "cauchy_", "sigma", 2)
    if not s > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(s)}")
    _continuous(self, "Cauchy", _CPP_NAMES[self.dtype.name])
    return _fill(self, CAUCHY_, lambda: m + s * g._rng.standard_cauchy(self.shape),
                 params=(m, s))


def _log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                 generator: Generator | None = None) -> Tensor:
    """``Tensor.log_normal_``: exp of N(mean, std**2) draws."""
    check_inplace(self)
    g = _gen(generator, "log_normal_")
    m = _as_float(mean, "log_normal_", "mean", 1)
    s = _as_float(std, "log_normal_", "std", 2)
    if not s > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(s)}")
    if not self.is_floating_point():
        raise _not_impl("log_normal_cpu", self.dtype)
    return _fill(self, LOG_NORMAL_, lambda: g._rng.lognormal(m, s, self.shape), params=(m, s))


def _geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """``Tensor.geometric_``: the number of Bernoulli(p) trials up to the first success."""
    check_inplace(self)
    g = _gen(generator, "geometric_")
    pv = _as_float(p, "geometric_", "p", 1)
    if not 0 < pv < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(pv)}")
    if self.dtype is D.bool or self.is_complex():
        raise _not_impl("geometric_cpu", self.dtype)
    return _fill(self, GEOMETRIC_, lambda: g._rng.geometric(pv, self.shape), params=(pv,))


def _bernoulli_m(self: Tensor, p=None, *, generator: Generator | None = None) -> Tensor:
    return bernoulli(self, p, generator=generator)


def _multinomial_m(self: Tensor, num_samples: int, replacement: bool = False, *,
                   generator: Generator | None = None) -> Tensor:
    return multinomial(self, num_samples, replacement, generator=generator)


for _name, _fn in [("uniform_", _uniform_), ("normal_", _normal_), ("bernoulli_", _bernoulli_),
                   ("random_", _random_), ("exponential_", _exponential_),
                   ("cauchy_", _cauchy_), ("log_normal_", _log_normal_),
                   ("geometric_", _geometric_), ("bernoulli", _bernoulli_m),
                   ("multinomial", _multinomial_m)]:
    method(_name, _fn)
