"""Convolution layers (``torch/nn/modules/conv.py``): Conv1d/2d/3d with every padding mode,
ConvTranspose1d/2d/3d and their Lazy variants."""
from __future__ import annotations

import math

from ..._ops.creation import empty
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _pair, _reverse_repeat_tuple, _single, _triple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]

_VALID_PADDING_STRINGS = {"same", "valid"}
_VALID_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _VALID_PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{_VALID_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _VALID_PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_VALID_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            rpt = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    rpt[2 * i] = left
                    rpt[2 * i + 1] = total - left
            self._reversed_padding_repeated_twice = rpt
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


def _conv_class(nd: int, tup, fn):
    class ConvNd(_ConvNd):
        def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                     padding=0, dilation=1, groups: int = 1, bias: bool = True,
                     padding_mode: str = "zeros", device=None, dtype=None) -> None:
            super().__init__(in_channels, out_channels, tup(kernel_size), tup(stride),
                             padding if isinstance(padding, str) else tup(padding),
                             tup(dilation), False, tup(0), groups, bias, padding_mode,
                             device, dtype)

        def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
            if self.padding_mode != "zeros":
                return fn(F.pad(input, self._reversed_padding_repeated_twice,
                                mode=self.padding_mode),
                          weight, bias, self.stride, tup(0), self.dilation, self.groups)
            return fn(input, weight, bias, self.stride, self.padding, self.dilation,
                      self.groups)

        def forward(self, input: Tensor) -> Tensor:
            p = self._parameters
            return self._conv_forward(input, p["weight"], p["bias"])

    ConvNd.__name__ = ConvNd.__qualname__ = f"Conv{nd}d"
    ConvNd.__doc__ = f"{nd}-D convolution over an input of several planes (``nn.Conv{nd}d``)."
    return ConvNd


Conv1d = _conv_class(1, _single, F.conv1d)
Conv2d = _conv_class(2, _pair, F.conv2d)
Conv3d = _conv_class(3, _triple, F.conv3d)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         transposed, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,
                        num_spatial_dims, dilation=None) -> list:
        if output_size is None:
            return list(_single(self.output_padding))
        has_batch = input.dim() == num_spatial_dims + 2
        non_spatial = 2 if has_batch else 1
        if len(output_size) == non_spatial + num_spatial_dims:
            output_size = output_size[non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must "
                f"have {num_spatial_dims} or {non_spatial + num_spatial_dims} elements (got "
                f"{len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            size = ((input.size(d + non_spatial) - 1) * stride[d] - 2 * padding[d]
                    + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(size)
            max_sizes.append(size + stride[d] - 1)
        for i in range(len(output_size)):
            if output_size[i] < min_sizes[i] or output_size[i] > max_sizes[i]:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{min_sizes} to {max_sizes} (for an input of {input.size()[2:]})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]


def _conv_transpose_class(nd: int, tup, fn):
    class ConvTransposeNd(_ConvTransposeNd):
        def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                     padding=0, output_padding=0, groups: int = 1, bias: bool = True,
                     dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
            super().__init__(in_channels, out_channels, tup(kernel_size), tup(stride),
                             tup(padding), tup(dilation), True, tup(output_padding), groups,
                             bias, padding_mode, device, dtype)

        def forward(self, input: Tensor, output_size=None) -> Tensor:
            if self.padding_mode != "zeros":
                raise ValueError(f"Only `zeros` padding mode is supported for "
                                 f"{self.__class__.__name__}")
            op = self._output_padding(input, output_size, self.stride, self.padding,
                                      self.kernel_size, nd, self.dilation)
            return fn(input, self.weight, self.bias, self.stride, self.padding, op,
                      self.groups, self.dilation)

    ConvTransposeNd.__name__ = ConvTransposeNd.__qualname__ = f"ConvTranspose{nd}d"
    ConvTransposeNd.__doc__ = f"{nd}-D transposed convolution (``nn.ConvTranspose{nd}d``)."
    return ConvTransposeNd


ConvTranspose1d = _conv_transpose_class(1, _single, F.conv_transpose1d)
ConvTranspose2d = _conv_transpose_class(2, _pair, F.conv_transpose2d)
ConvTranspose3d = _conv_transpose_class(3, _triple, F.conv_transpose3d)


class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        nsp = len(self.kernel_size)
        no_batch = nsp + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise ValueError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) "
                             f"input to {self.__class__.__name__}, but got input of size: "
                             f"{input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]


def _lazy_conv_class(base):
    class LazyConv(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                     groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                     device=None, dtype=None) -> None:
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                             padding_mode, device, dtype)
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)

    LazyConv.__name__ = LazyConv.__qualname__ = "Lazy" + base.__name__
    return LazyConv


def _lazy_conv_transpose_class(base):
    class LazyConvTranspose(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0,
                     output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                     padding_mode: str = "zeros", device=None, dtype=None) -> None:
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                             dilation, padding_mode, device, dtype)
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)

    LazyConvTranspose.__name__ = LazyConvTranspose.__qualname__ = "Lazy" + base.__name__
    return LazyConvTranspose


LazyConv1d = _lazy_conv_class(Conv1d)
LazyConv2d = _lazy_conv_class(Conv2d)
LazyConv3d = _lazy_conv_class(Conv3d)
LazyConvTranspose1d = _lazy_conv_transpose_class(ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv_transpose_class(ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv_transpose_class(ConvTranspose3d)
