"""Linear layers (``torch/nn/modules/linear.py``): Identity, Linear, Bilinear, LazyLinear."""
from __future__ import annotations

import math

from ..._ops.creation import empty
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x A^T + b`` with A, b ~ U(-1/sqrt(in), 1/sqrt(in)) (PyTorch's reset)."""

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        p = self._parameters
        return F.linear(input, p["weight"], p["bias"])

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """Linear as MultiheadAttention's out_proj (``torch.nn.modules.linear``)."""


class Bilinear(Module):
    """``y = x1^T A x2 + b`` with A, b ~ U(-1/sqrt(in1), 1/sqrt(in1))."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), device=device,
                                      dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose ``in_features`` is taken from the first input's last dimension."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        # bias is hardcoded False in the parent call so it does not create a real bias
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
