"""Tensor: an ndarray plus autograd metadata. Operators and methods are thin: they call ops.

Operator methods (``exp``, ``__add__``, ...) are attached by the op modules in ``_ops`` through
``_ops._registry.method``, so each op is written once, beside its derivatives.
"""
from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import _dtype as D
from . import _layout as _L
from ._device import CPU, META
from ._meta import MetaArray
from ._state import STATE

__all__ = ["Tensor"]


class Version:
    """The version counter shared by all tensors over one buffer."""

    __slots__ = ("v",)

    def __init__(self):
        self.v = 0


class _Extra:
    """A tensor's rarely used parts: hooks, retain_grad, inference and meta flags."""

    __slots__ = ("counted", "detached", "hooks", "inference", "name", "post_acc", "retains",
                 "view_op")

    def __init__(self):
        self.hooks = None      # leaf hooks: {id: fn}
        self.retains = False
        self.post_acc = None   # {id: fn}
        self.inference = False
        # an inference tensor with a working version counter: PyTorch's detach() (or .data) of
        # one, made outside inference mode, takes in-place ops there (its views do not)
        self.counted = False
        self.name = None
        self.detached = -1     # node sequence number when detach_() dropped a grad_fn
        # the view op (conj, neg_view, view_as_real, view_as_complex) that made a view whose
        # history PyTorch regenerates by replaying that op rather than by as_strided
        self.view_op = None


class Tensor:
    """A multi-dimensional array with autograd, mirroring ``torch.Tensor``.

    ``_data`` is the NumPy array; views hold NumPy views of their base's buffer and share its
    version counter ``_vc``. ``_rg`` is requires_grad, ``_fn`` the grad_fn node and ``_onr`` the
    output number in it, ``_acc`` a weak reference to a leaf's AccumulateGrad node, ``_fw`` the
    forward-mode tangent and ``_x`` the rarely used parts.
    """

    __slots__ = (
        "__weakref__",
        "_acc",
        "_av",
        "_base",
        "_cm",
        "_data",
        "_fn",
        "_fw",
        "_fwb",
        "_grad",
        "_onr",
        "_rg",
        "_vc",
        "_x",
    )
    __array_priority__ = 1000

    def __init__(self, *args, **kwargs):
        # ember.Tensor(...) as a constructor: legacy form, like torch.Tensor(2, 3) or ([1, 2]).
        from ._ops.creation import legacy_new
        t = legacy_new(D.get_default_dtype(), args, kwargs)
        _init(self, t._data, Version(), False, None)

    # ---- metadata ---------------------------------------------------------------------
    @property
    def dtype(self) -> D.dtype:
        return D._FROM_NP[self._data.dtype]

    @property
    def shape(self):
        from ._size import Size
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        from ._size import Size
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def stride(self, dim: int | None = None):
        s = tuple(x // self._data.itemsize for x in self._data.strides)
        if self.is_meta or self._data.size == 0 and not any(s) and not _L.zero_strided(
                self._data):
            # (NumPy gives a fresh empty array zero strides: PyTorch's are row-major; an empty
            # view or a result laid out as PyTorch's keeps the strides it was given, zeros
            # included: _layout.zero_strided_empty)
            s = _contiguous_strides(self._data.shape)
        if dim is None:
            return s
        return s[_wrap_dim(dim, self._data.ndim)]

    def storage_offset(self) -> int:
        if self.is_meta:
            return 0
        root = _root(self._data)
        if root is self._data:
            return 0
        return (_address(self._data) - _address(root)) // self._data.itemsize

    def is_contiguous(self, memory_format=None) -> bool:
        if self.is_meta:
            return True
        if memory_format is None or memory_format is _L.contiguous_format:
            return _is_contiguous(self._data)
        return _L.is_contiguous_as(self._data.shape, self.stride(),
                                   _L.check_format(memory_format, "is_contiguous"))

    def data_ptr(self) -> int:
        # (PyTorch's is null for an empty tensor, whatever its storage)
        return 0 if self.is_meta or not self._data.size else _address(self._data)

    @property
    def device(self):
        return META if self.is_meta else CPU

    def get_device(self) -> int:
        return -1

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return not self.is_meta

    @property
    def is_meta(self) -> bool:
        return type(self._data) is MetaArray

    is_quantized = False
    is_sparse = False
    is_mkldnn = False
    is_nested = False
    layout = "strided"

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f" or self._data.dtype == D.bfloat16.np

    def is_complex(self) -> bool:
        d = self._data.dtype
        return d.kind == "c" or d.kind == "V" and d == D.complex32.np   # (ember._chalf)

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def is_inference(self) -> bool:
        x = self._x
        return x is not None and x.inference

    @property
    def _version(self) -> int:
        x = self._x
        if x is not None and x.inference and not x.counted:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc.v

    def _is_view(self) -> bool:
        return self._base is not None

    # ---- autograd metadata -------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        if self._base is not None:
            # as PyTorch: a view requires grad when it has history or its base requires grad
            return self._rg or self._fn is not None or self._base._rg
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and not (self.is_floating_point() or self.is_complex()):
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients")
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set requires_grad on a leaf (``torch.Tensor.requires_grad_``)."""
        if self._fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and not (self.is_floating_point() or self.is_complex()):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self.is_inference() and not STATE.inference:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed.")
        self._rg = bool(requires_grad)
        return self

    @property
    def grad_fn(self):
        if self._base is not None:
            _refresh_view(self)
        return self._fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def output_nr(self) -> int:
        return self._onr

    @property
    def grad(self):
        if self._fn is not None and not self.retains_grad and self._grad is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you "
                "access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for "
                "more information. (Triggered internally at "
                "/__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)",
                UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}")
            if value.dtype is not self.dtype:
                from ._ops._dispatch import _type_name
                raise RuntimeError(
                    "attempting to assign a gradient with dtype "
                    f"'{_scalar_name(value.dtype)}' to a tensor with grad_dtype "
                    f"'{_type_name(self.dtype)}'. The gradient must match the tensor's grad_dtype "
                    "(defaults to the tensor's dtype). You can set the tensor's grad_dtype "
                    "attribute with a specific dtype, or None to allow any dtype. Set grad_dtype "
                    "with caution. Diverging the dtypes of a tensor and its gradient may break "
                    "downstream systems that assume they match.")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size")
            if value.is_meta != self.is_meta:
                raise RuntimeError(
                    f"attempting to assign a gradient with device type '{value.device.type}' to "
                    f"a tensor with device type '{self.device.type}'. Please ensure that the "
                    "gradient and the tensor are on the same device")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        x = self._x
        return x is not None and x.retains

    def retain_grad(self) -> None:
        """Populate ``.grad`` for this non-leaf tensor during backward."""
        if self._fn is None:   # PyTorch's is_leaf here reads grad_fn without regenerating it
            if not self.requires_grad:   # (a view of a base requiring grad requires grad)
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._base is not None:
            _refresh_view(self)   # a view changed in place retains its regenerated history's
        if self.retains_grad:
            return
        self._extra().retains = True
        ref = weakref.ref(self)

        def retain(grad):
            # as PyTorch: a contiguous copy first, then out-of-place sums
            t = ref()
            if t is None or not t.retains_grad:
                return
            from .autograd.graph import GRAD_LOCK
            with GRAD_LOCK:
                cur = t._grad
                t._grad = (grad.clone(memory_format=_L.contiguous_format) if cur is None
                           else cur + grad)
            return
        self._fn._hooks().retains[self._onr] = retain

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient (``torch.Tensor.register_hook``)."""
        if not self.requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient")
        if self._base is not None:
            _refresh_view(self)   # a view changed in place hooks its regenerated history
        if self._fn is not None:
            return self._fn._register_tensor_hook(self._onr, hook)
        from .autograd.graph import RemovableHandle
        x = self._extra()
        if x.hooks is None:
            x.hooks = {}
        handle = RemovableHandle(x.hooks)
        x.hooks[handle.id] = hook
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` after this leaf's ``.grad`` has been accumulated."""
        if self._fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
        from .autograd.graph import RemovableHandle
        x = self._extra()
        if x.post_acc is None:
            x.post_acc = {}
        handle = RemovableHandle(x.post_acc)
        x.post_acc[handle.id] = hook
        return handle

    def _extra(self) -> _Extra:
        x = self._x
        if x is None:
            x = self._x = _Extra()
        return x

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Accumulate d(self)/d(leaves) into the leaves' ``.grad``."""
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A new tensor sharing storage and version counter, out of the graph (of an inference
        tensor outside inference mode: one with a version counter of its own, as PyTorch's)."""
        t = _view_of(self, raw_data(self), differentiable=False)
        x = self._x
        if x is not None and x.inference and not STATE.inference:
            t._x.counted = True
            t._vc = Version()
        return t

    def detach_(self) -> Tensor:
        """Detach in place; refused on any differentiable view, as in PyTorch."""
        if STATE.inference or self.is_inference():
            # PyTorch's autograd kernel does not run in inference mode nor for inference
            # tensors: a no-op
            return self
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. "
                "To fix this error, please refer to the Optimizer.zero_grad() function in "
                "torch/optim/optimizer.py as the solution.")
        if self._fn is not None:
            # nodes recorded before now that saved this tensor refuse to unpack it (PyTorch)
            from .autograd.graph import _seq
            self._extra().detached = next(_seq)
        self._fn = None
        self._rg = False
        self._onr = 0
        self._fw = None   # the forward gradient goes too, as in PyTorch
        return self

    @property
    def data(self) -> Tensor:
        """The same storage without autograd history and with its own version counter (an
        inference tensor's stays one)."""
        d = _make(self._data, Version(), False, None)
        x = self._x
        if x is not None and x.inference:
            d._extra().inference = True
            d._x.counted = not STATE.inference
        return d

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data

    def _base_tensor(self):
        return self._base

    # ---- conversion ----------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The NumPy array sharing this tensor's memory (``torch.Tensor.numpy``)."""
        if self._rg and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead.")
        if self.is_meta:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to "
                            "copy the tensor to host memory first.")
        if self._data.dtype == D.bfloat16.np and not force:
            raise TypeError("Got unsupported ScalarType BFloat16")
        if self._data.dtype == D.complex32.np:
            raise TypeError("Got unsupported ScalarType ComplexHalf")
        return self._data if not force else self._data.copy()

    def item(self):
        """The single value as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if self.is_meta:
            raise RuntimeError(
                "Tensor.item() cannot be called on meta tensors")
        return _py_scalar(self._data.reshape(()))

    def tolist(self):
        if self.is_meta:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        d = self._data
        if d.dtype == D.bfloat16.np or d.dtype == np.float16:
            d = d.astype(np.float32)
        elif d.dtype == D.complex32.np:
            from ._chalf import to_c64
            d = to_c64(d)
        return d.tolist()

    def __array__(self, dtype=None, copy=None):
        if self._rg:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead.")
        if self._data.dtype == D.complex32.np:
            self.numpy()   # PyTorch's refusal: NumPy has no ComplexHalf
        return self._data if dtype is None else self._data.astype(dtype)

    def _one_number(self, to=None):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        v = self.item()
        if to is not None and isinstance(v, complex):
            # PyTorch's check: the imaginary part must be 0
            from ._scalar import to_dtype
            v = to_dtype(v, to)
        return v

    def __float__(self) -> float:
        return float(self._one_number(D.float64))

    def __int__(self) -> int:
        return int(self._one_number(D.int64))

    def __complex__(self) -> complex:
        return complex(self._one_number())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError(
                "only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with no values is ambiguous" if not self._data.size
                else "Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self, *, tensor_contents=None) -> str:
        from ._printing import tensor_repr
        return tensor_repr(self, tensor_contents)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and not self.is_meta:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._data.copy(), self._rg))

    def __deepcopy__(self, memo):
        if self._fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                "because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001")
        if type(self) is Tensor and not self.is_meta:
            # shares copied memory with the other deep-copied tensors over the same storage
            from ._storage import tensor_deepcopy
            t = tensor_deepcopy(self, memo)
        else:
            t = _make(self._data.copy(), Version(), self._rg, None)
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t

    def __getstate__(self):
        raise TypeError("use pickle on ember tensors through __reduce_ex__")

    def __setstate__(self, state):
        raise TypeError("use pickle on ember tensors through __reduce_ex__")


# ---- PyTorch's conj and neg bits: views whose values are a transform of their memory ----------

_DATA = Tensor.__dict__["_data"]   # the slot itself, beneath _Lazy's property
raw_data = _DATA.__get__           # a tensor's array as stored (a lazy view's untransformed memory)


class _Lazy(Tensor):
    """A view with PyTorch's conjugate (or negative) bit set: it shares its base's memory, and
    reads see the transformed values (``_data`` is a fresh read-only array), writes store the
    inverse transform (``store``). Both transforms are involutions."""

    __slots__ = ()
    bits = 0
    _fn_np = None

    @property
    def _data(self):
        raw = _DATA.__get__(self)
        a = type(self)._fn_np(raw)
        if type(a) is not np.ndarray:   # (a 0-dim array's ufunc result is a NumPy scalar)
            a = np.asarray(a)
        elif 1 in raw.shape and a.size and a.strides != raw.strides:
            # NumPy picks its own stride for a size-1 dim; PyTorch's resolved copy is laid out
            # as empty_like(self), which kernels (an fft's batch order) and clone() observe
            a = _L.restride(a, _L.preserve_strides(raw.shape, _L.elem_strides(raw)))
        a.flags.writeable = False
        return a

    @_data.setter
    def _data(self, value) -> None:   # ``x.data = y``: new memory, no bit
        self.__class__ = Tensor
        _DATA.__set__(self, value)

    def _plain(self) -> Tensor:
        return _make(_DATA.__get__(self), self._vc, False, None)

    def stride(self, dim: int | None = None):
        return self._plain().stride(dim)

    def storage_offset(self) -> int:
        return self._plain().storage_offset()

    def is_contiguous(self, memory_format=None) -> bool:
        return self._plain().is_contiguous(memory_format)

    def data_ptr(self) -> int:
        return self._plain().data_ptr()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if not force:
            what, fix = ("conjugate", "conj") if self.bits & CONJ_BIT else ("negative", "neg")
            raise RuntimeError(f"Can't call numpy() on Tensor that has {what} bit set. Use "
                               f"tensor.resolve_{fix}().numpy() instead.")
        return self._data.copy()

    def __array__(self, dtype=None, copy=None):
        self.numpy()

    @property
    def data(self) -> Tensor:
        d = _make(_DATA.__get__(self), Version(), False, None)
        if self.is_inference():
            d._extra().inference = True
        d.__class__ = type(self)
        return d

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data


CONJ_BIT, NEG_BIT = 4, 8


def _pairs_too(f, name: str):
    """``f`` (np.conj, np.negative), or ember._chalf's where NumPy refuses complex32 pairs."""
    def g(a):
        try:
            return f(a)
        except TypeError:
            from . import _chalf
            if not _chalf.is_ch(a):
                raise
            return getattr(_chalf, name)(a)
    return g


class _ConjTensor(_Lazy):
    __slots__ = ()
    bits = CONJ_BIT
    _fn_np = staticmethod(_pairs_too(np.conj, "conj"))


class _NegTensor(_Lazy):
    __slots__ = ()
    bits = NEG_BIT
    _fn_np = staticmethod(_pairs_too(np.negative, "negative"))


for _c in (_ConjTensor, _NegTensor):   # what ``type(t)`` prints, as for any PyTorch tensor
    _c.__name__ = _c.__qualname__ = "Tensor"
LAZY_OF_BITS = {0: Tensor, CONJ_BIT: _ConjTensor, NEG_BIT: _NegTensor}


def lazy_bits(t) -> int:
    """The conj/neg bits of ``t`` (0 for a plain tensor or a Parameter)."""
    return getattr(type(t), "bits", 0)


def set_lazy_bits(t: Tensor, bits: int) -> Tensor:
    """Make ``t`` (a tensor over plain memory) read its memory through ``bits``."""
    t.__class__ = LAZY_OF_BITS[bits]
    return t


def store(t: Tensor, values) -> None:
    """Write ``values`` into ``t``'s memory (a lazy view stores the inverse transform)."""
    if isinstance(t, _Lazy):
        values = type(t)._fn_np(np.asarray(values))
    np.copyto(_DATA.__get__(t), values, casting="unsafe")


def _rebuild(data, requires_grad):
    if data.dtype.names is not None:   # unpickled complex32 pairs: ember's own dtype object
        data = data.view(D.complex32.np)
    return _make(data, Version(), requires_grad, None)


_new = object.__new__


def _make(data, vc, rg, fn, onr=0) -> Tensor:
    """Build a tensor without argument checks: the constructor every op uses."""
    t = _new(Tensor)
    t._data = data
    t._vc = vc
    t._rg = rg
    t._fn = fn
    t._onr = onr
    t._base = None
    t._grad = None
    t._acc = None
    t._fw = None
    t._x = None
    return t


def _init(t, data, vc, rg, fn) -> None:
    t._data = data
    t._vc = vc
    t._rg = rg
    t._fn = fn
    t._onr = 0
    t._base = None
    t._grad = None
    t._acc = None
    t._fw = None
    t._x = None


# How a differentiable view was created (PyTorch's CreationMeta): in-place changes through a view
# made in no_grad or inference mode, by a multi-output view op or inside a custom Function, and
# later uses of such a view after its buffer changed, are refused: autograd could not tell which
# history the user meant.
CM_DEFAULT, CM_NO_GRAD, CM_INFERENCE, CM_MULTI, CM_CUSTOM = range(5)


def _view_of(src: Tensor, data, differentiable: bool = True, multi: bool = False) -> Tensor:
    """A tensor over (part of) ``src``'s buffer sharing its version counter. A differentiable
    view records its root base in ``_base`` (in-place ops on it rebase the base's history), the
    version its history belongs to (``_av``) and how it was created (``_cm``)."""
    t = _make(data, src._vc, False, None)
    if isinstance(src, _Lazy) and np.may_share_memory(data, _DATA.__get__(src)):
        t.__class__ = type(src)   # a view of a conj (neg) view has the bit too
    x = src._x
    if x is not None and x.inference:
        # an inference tensor's views are inference tensors, not views: PyTorch tracks no view
        # (nor autograd) metadata for them
        t._extra().inference = True
    elif differentiable:
        st = STATE
        new = (CM_INFERENCE if st.inference else
               (CM_MULTI if multi else CM_DEFAULT) if st.grad else CM_NO_GRAD)
        if src._base is not None:
            t._base = src._base
            prev = src._cm
            if new == CM_DEFAULT or prev == CM_INFERENCE:
                new = prev
        else:
            t._base = src
        t._cm = new
        t._av = src._vc.v
        t._fwb = src if src._base is None or src._fwb is None else src._fwb
    return t


def _refresh_view(t: Tensor) -> bool:
    """PyTorch's view + in-place detection, run wherever a view's history is read: once the
    buffer of a differentiable view was modified in place after the view's grad_fn was set
    (through its base or another view), the view's grad_fn becomes an AsStridedBackward0 over its
    base's current history. Returns whether the view requires grad."""
    base = t._base
    if t._av == t._vc.v:
        return t._rg or base._rg
    if t._fn is None and not base._rg:
        return t._rg
    if t._cm:
        raise view_rebase_error(t, direct=False)
    from ._ops.views import as_strided_node
    set_history(t, as_strided_node(t, base), 0)
    t._av = t._vc.v
    return True


def set_history(t: Tensor, fn, onr: int) -> None:
    """Give ``t`` a new grad_fn (an in-place op, or a view's refreshed history). As in PyTorch,
    ``retain_grad`` follows the tensor to its new grad_fn; hooks stay with the old one."""
    old, old_nr = t._fn, t._onr
    t._fn, t._onr, t._rg = fn, onr, True
    if old is not None and old._h is not None and old is not fn and t.retains_grad:
        hook = old._h.retains.pop(old_nr, None)
        if hook is not None:
            fn._hooks().retains[onr] = hook


_CM_TEXT = {CM_NO_GRAD: ("no_grad mode", "with grad mode enabled", "no_grad block"),
            CM_INFERENCE: ("inference mode", "in normal mode", "inference_mode block")}


def view_rebase_error(t: Tensor, direct: bool) -> RuntimeError:
    """PyTorch's refusal of an in-place change that would rebase a view created in a special
    way (``handle_view_on_rebase``)."""
    cm = t._cm
    fn = t._fn
    from .autograd.graph import _short_name
    short = _short_name(fn) if fn is not None else ""
    what = ("is being modified inplace" if direct else
            "its base or another view of its base has been modified inplace")
    if cm in _CM_TEXT:
        made, mode, block = _CM_TEXT[cm]
        head = (f"Output {t._onr} of {short} is a view of a view which was created in {made}"
                if fn is not None else f"A view was created in {made}")
        return RuntimeError(
            f"{head} and {what} {mode}. Given that this use case is ambiguous and error-prone, "
            f"it is forbidden. You can clarify your code by moving both the view and the inplace "
            f"either both inside the {block} (if you don't want the inplace to be tracked) or "
            "both outside (if you want the inplace to be tracked).")
    if fn is not None:
        head = f"Output {t._onr} of {short} is a view and {what}."
    else:   # the view was made from a tensor not requiring grad: PyTorch calls it no_grad
        head = f"A view was created in no_grad mode and {what} with grad mode enabled."
    if cm == CM_MULTI:
        return RuntimeError(
            f"{head} This view is the output of a function that returns multiple views. Such "
            "functions do not allow the output views to be modified inplace. You should replace "
            "the inplace operation by an out-of-place one.")
    return RuntimeError(
        f"{head} This view was created inside a custom Function (or because an input was "
        "returned as-is) and the autograd logic to handle view+inplace would override the "
        "custom backward associated with the custom Function, leading to incorrect gradients. "
        "This behavior is forbidden. You can fix this by cloning the output of the custom "
        "Function.")


def _wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


_root = _L.owner   # the array owning an array's memory


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _contiguous_strides(shape) -> tuple:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _is_contiguous(a: np.ndarray) -> bool:
    if a.flags.c_contiguous:
        return True
    # PyTorch ignores the strides of size-1 dimensions.
    expected = 1
    for size, st in zip(reversed(a.shape), reversed(a.strides)):
        if size == 0:
            return True
        if size != 1 and st != expected * a.itemsize:
            return False
        expected *= size
    return True


def _py_scalar(a: np.ndarray):
    if a.dtype.kind == "V":   # bfloat16, or complex32 pairs (ember._chalf)
        if a.dtype == D.complex32.np:
            from ._chalf import item
            return item(a)
        return float(a)
    return a.item()


_SCALAR_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                 "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
                 "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                 "uint16": "unsigned short", "uint32": "unsigned int",
                 "uint64": "unsigned long",
                 "bool": "bool", "complex64": "c10::complex<float>",
                 "complex128": "c10::complex<double>", "complex32": "c10::complex<c10::Half>"}


def _scalar_name(d) -> str:
    return _SCALAR_NAMES[d.name]
