"""Instance normalisation (``torch/nn/modules/instancenorm.py``)."""
from __future__ import annotations

import warnings

from ..._tensor import Tensor
from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _NO_BATCH_DIM = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        n = self._NO_BATCH_DIM
        if input.dim() not in (n, n + 1):
            raise ValueError(f"expected {n}D or {n + 1}D input (got {input.dim()}D input)")

    def _get_no_batch_dim(self) -> int:
        return self._NO_BATCH_DIM

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is not "
                          "used because affine=False", stacklevel=2)
        if input.dim() == self._get_no_batch_dim():
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    _NO_BATCH_DIM = 2


class InstanceNorm2d(_InstanceNorm):
    _NO_BATCH_DIM = 3


class InstanceNorm3d(_InstanceNorm):
    _NO_BATCH_DIM = 4


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    cls_to_become = InstanceNorm1d
    _NO_BATCH_DIM = 2


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    cls_to_become = InstanceNorm2d
    _NO_BATCH_DIM = 3


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    cls_to_become = InstanceNorm3d
    _NO_BATCH_DIM = 4
