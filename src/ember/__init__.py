"""ember: PyTorch's tensor and autograd system, rebuilt in Python on NumPy.

``import ember as torch`` runs ordinary PyTorch autograd code on the CPU.
"""
from __future__ import annotations

import numpy as _np

from . import _alloc, _dtype
from ._device import device, get_default_device, set_default_device  # noqa: F401
from ._dtype import (
    bfloat16,
    bool,
    can_cast,
    cdouble,
    cfloat,
    chalf,
    complex32,
    complex64,
    complex128,
    double,
    dtype,
    finfo,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    qint8,
    qint32,
    quint2x4,
    quint4x2,
    quint8,
    set_default_dtype,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._size import Size
from ._printing import *  # noqa: F401,F403
from ._tensor import Tensor
from ._storage import install as _install_storage  # noqa: E402
_install_storage()  # Tensor.untyped_storage, storage, set_
from ._ops import *  # noqa: F401,F403  (the operator namespace)
from ._ops import __all__ as _ops_all
from ._ops.creation import LEGACY as _LEGACY
from . import accelerator, autograd, cuda, nn, optim  # noqa: F401
from . import utils  # noqa: E402,F401  (torch.utils.data)
from . import serialization  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from . import fft  # noqa: E402,F401  (torch.fft)
from . import signal  # noqa: E402,F401  (torch.signal.windows)
from . import special  # noqa: E402,F401  (torch.special)
from . import masked  # noqa: E402,F401  (torch.masked reductions)
from . import random  # noqa: E402,F401  (torch.random)
from ._ops.random import default_generator  # noqa: E402,F401
from .serialization import load, save  # noqa: E402,F401
from .autograd import Variable  # noqa: F401
from .autograd.anomaly_mode import (  # noqa: F401
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

globals().update(_LEGACY)
# PyTorch computes inf/nan silently; NumPy would warn on every such op.
_np.seterr(all="ignore")
_alloc.tune_malloc()
strided = "strided"
from ._layout import (  # noqa: E402,F401  (torch.memory_format and its four values)
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)


def result_type(tensor1, tensor2) -> dtype:
    """``torch.result_type``."""
    return _dtype.result_type(tensor1, tensor2)


def is_tensor(obj) -> bool:
    """``torch.is_tensor``."""
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


def is_complex(input: Tensor) -> bool:
    return input.is_complex()


def numel(input: Tensor) -> int:
    return input.numel()


__version__ = "0.1.0"
from ._settings import *  # noqa: E402,F401,F403  (determinism, matmul precision, warn_always)
from ._compile import compile  # noqa: E402,F401,A001  (runs the model eagerly)
from ._threads import (  # noqa: E402,F401  (torch.get_num_threads and friends)
    get_num_interop_threads,
    get_num_threads,
    set_num_interop_threads,
    set_num_threads,
)
