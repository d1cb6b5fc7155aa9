"""Pooling layers (``torch/nn/modules/pooling.py``): max, average, LP, fractional, adaptive
and max-unpooling in 1, 2 and 3 dimensions."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _pair, _single, _triple

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices",
                     "ceil_mode"]

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, "
                "dilation={dilation}, ceil_mode={ceil_mode}".format(**self.__dict__))


class MaxPool1d(_MaxPoolNd):
    def forward(self, input: Tensor):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    def forward(self, input: Tensor):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    def forward(self, input: Tensor):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _MaxUnpoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _unpool_class(nd: int, tup, fn):
    class MaxUnpool(_MaxUnpoolNd):
        def __init__(self, kernel_size, stride=None, padding=0) -> None:
            super().__init__()
            self.kernel_size = tup(kernel_size)
            self.stride = tup(stride if (stride is not None) else kernel_size)
            self.padding = tup(padding)

        def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
            return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    MaxUnpool.__name__ = MaxUnpool.__qualname__ = f"MaxUnpool{nd}d"
    return MaxUnpool


MaxUnpool1d = _unpool_class(1, _single, F.max_unpool1d)
MaxUnpool2d = _unpool_class(2, _pair, F.max_unpool2d)
MaxUnpool3d = _unpool_class(3, _triple, F.max_unpool3d)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPoolNdOverride(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override


class AvgPool2d(_AvgPoolNdOverride):
    __constants__ = _AvgPoolNd.__constants__ + ["divisor_override"]

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool3d(_AvgPoolNdOverride):
    __constants__ = _AvgPoolNd.__constants__ + ["divisor_override"]

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


def _fractional_class(nd: int, tup, fn):
    name = f"FractionalMaxPool{nd}d"

    class FractionalMaxPool(Module):
        __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]

        def __init__(self, kernel_size, output_size=None, output_ratio=None,
                     return_indices: bool = False, _random_samples=None) -> None:
            super().__init__()
            self.kernel_size = tup(kernel_size)
            self.return_indices = return_indices
            self.register_buffer("_random_samples", _random_samples)
            self.output_size = tup(output_size) if output_size is not None else None
            self.output_ratio = tup(output_ratio) if output_ratio is not None else None
            if output_size is None and output_ratio is None:
                raise ValueError(f"{name} requires specifying either an output size, or a "
                                 "pooling ratio")
            if output_size is not None and output_ratio is not None:
                raise ValueError("only one of output_size and output_ratio may be specified")
            if self.output_ratio is not None:
                if not all(0 < r < 1 for r in self.output_ratio):
                    raise ValueError(f"output_ratio must be between 0 and 1 (got "
                                     f"{output_ratio})")

        def forward(self, input: Tensor):
            return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                      self.return_indices, _random_samples=self._random_samples)

    FractionalMaxPool.__name__ = FractionalMaxPool.__qualname__ = name
    return FractionalMaxPool


FractionalMaxPool2d = _fractional_class(2, _pair, F.fractional_max_pool2d)
FractionalMaxPool3d = _fractional_class(3, _triple, F.fractional_max_pool3d)


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]

    def __init__(self, norm_type: float, kernel_size, stride=None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))


class LPPool1d(_LPPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool2d(_LPPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool3d(_LPPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    def forward(self, input: Tensor):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    def forward(self, input: Tensor):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    def forward(self, input: Tensor):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)
