"""The ATen-level nn operators PyTorch exposes as ``torch.<name>``, with ATen's signatures.

These differ from ``nn.functional``'s forms: ``torch.embedding(weight, indices, padding_idx=-1)``,
``torch.dropout(input, p, train)``, ``torch.batch_norm(input, weight, bias, running_mean,
running_var, training, momentum, eps, cudnn_enabled)``, losses taking an int ``reduction``
(0 none, 1 mean, 2 sum, any other value none, as ATen's ``apply_loss_reduction``),
``torch.max_pool2d`` returning only the values. Each delegates to the ``nn.functional``
implementation in ``_ops/nn_*.py`` (which PyTorch's own ``F`` forms call), so values, gradients
and ``grad_fn`` names are those of ``F``. Where ``F`` is the very same function in PyTorch
(``torch.conv2d is F.conv2d``), the name is bound to ember's ``F`` function.

PyTorch's Python bindings read the schema default ``reduction=Mean`` as 0: called without
``reduction``, ``torch.kl_div``, ``torch.ctc_loss`` and the other losses here return the
unreduced loss, and so do these.
"""
from __future__ import annotations

import numpy as np

from .._settings import warn_once
from .._tensor import Tensor, Version, _make
from . import nn_activation as _act
from . import nn_conv, nn_grid, nn_loss, nn_misc, nn_more, nn_norm, nn_pooling, nn_sampling
from ._parser import must_be
from ._registry import Op, apply
from .random import _rng

__all__ = [
    # the same functions as nn.functional's (PyTorch binds one object under both names)
    "adaptive_avg_pool1d", "avg_pool1d", "bilinear", "celu_", "channel_shuffle", "conv1d",
    "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "cosine_similarity", "hardshrink", "native_channel_shuffle", "pairwise_distance", "pdist",
    "pixel_shuffle", "pixel_unshuffle", "prelu", "relu_", "rms_norm", "selu_", "threshold_",
    # ATen signatures
    "adaptive_max_pool1d", "affine_grid_generator", "alpha_dropout", "alpha_dropout_",
    "batch_norm", "binary_cross_entropy_with_logits", "celu", "chain_matmul", "convolution",
    "cosine_embedding_loss", "ctc_loss", "dropout", "dropout_", "embedding",
    "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout", "feature_dropout_",
    "frobenius_norm", "grid_sampler", "group_norm", "hinge_embedding_loss", "instance_norm",
    "kl_div", "layer_norm", "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices",
    "max_pool2d", "max_pool3d", "native_dropout", "norm_except_dim", "nuclear_norm",
    "poisson_nll_loss", "rrelu", "rrelu_", "selu", "threshold", "triplet_margin_loss",
    "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
]

adaptive_avg_pool1d = nn_pooling.adaptive_avg_pool1d
avg_pool1d = nn_pooling.avg_pool1d
bilinear = nn_misc.bilinear
celu_ = _act.celu_
channel_shuffle = nn_sampling.channel_shuffle
conv1d = nn_conv.conv1d
conv2d = nn_conv.conv2d
conv3d = nn_conv.conv3d
conv_tbc = nn_more.conv_tbc
conv_transpose1d = nn_conv.conv_transpose1d
conv_transpose2d = nn_conv.conv_transpose2d
conv_transpose3d = nn_conv.conv_transpose3d
cosine_similarity = nn_misc.cosine_similarity
hardshrink = _act.hardshrink
native_channel_shuffle = nn_more.native_channel_shuffle
pairwise_distance = nn_misc.pairwise_distance
pdist = nn_misc.pdist
pixel_shuffle = nn_sampling.pixel_shuffle
pixel_unshuffle = nn_sampling.pixel_unshuffle
prelu = _act.prelu
relu_ = _act.relu_
rms_norm = nn_norm.rms_norm
selu_ = _act.selu_
threshold_ = _act.threshold_


def _reduction(fn, reduction) -> str:
    """ATen's int reduction as nn.functional's name (ints other than 1 and 2: unreduced)."""
    if isinstance(reduction, bool) or not isinstance(reduction, (int, np.integer)):
        raise must_be(fn, "reduction", reduction, "int")
    return {1: "mean", 2: "sum"}.get(int(reduction), "none")


# ---- convolution -------------------------------------------------------------------------------

def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding, dilation,
                transposed: bool, output_padding, groups: int) -> Tensor:
    """``torch.convolution``: the convolution every ``conv*``/``conv_transpose*`` goes through,
    its spatial rank taken from ``weight``."""
    nd = weight.dim() - 2
    if nd < 1:
        raise RuntimeError("weight should have at least three dimensions")
    if nd > 3:
        raise RuntimeError(f"expected stride to be a single integer value or a list of 3 values "
                           f"to match the convolution dimensions, but got stride={list(stride)}")
    if input.dim() != weight.dim():   # (no unbatched inputs at this level)
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
            f"{list(weight.shape)}, but got {input.dim()}-dimensional input of size "
            f"{list(input.shape)} instead")
    stride, padding, dilation = list(stride), list(padding), list(dilation)
    if transposed:
        fn = (nn_conv.conv_transpose1d, nn_conv.conv_transpose2d, nn_conv.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, stride, padding, list(output_padding), groups, dilation)
    fn = (nn_conv.conv1d, nn_conv.conv2d, nn_conv.conv3d)[nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


# ---- dropout -----------------------------------------------------------------------------------

def _check_p(p: float) -> None:
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _aten_dropout(name: str, inplace: bool, feature: bool, alpha: bool):
    """``torch.<name>(input, p, train)``: ``input`` itself unless training with ``p > 0``;
    ``feature`` drops whole ``input[n, c]`` slices (any rank >= 2), ``alpha`` keeps the mean and
    variance of a SELU activation."""
    def f(input: Tensor, p: float, train: bool) -> Tensor:
        _check_p(p)
        return _act._dropout_impl(input, p, train, inplace, feature, alpha)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``torch.{name}``."
    return f


dropout = _aten_dropout("dropout", False, False, False)
dropout_ = _aten_dropout("dropout_", True, False, False)
feature_dropout = _aten_dropout("feature_dropout", False, True, False)
feature_dropout_ = _aten_dropout("feature_dropout_", True, True, False)
alpha_dropout = _aten_dropout("alpha_dropout", False, False, True)
alpha_dropout_ = _aten_dropout("alpha_dropout_", True, False, True)
feature_alpha_dropout = _aten_dropout("feature_alpha_dropout", False, True, True)
feature_alpha_dropout_ = _aten_dropout("feature_alpha_dropout_", True, True, True)


def _nd_fwd(x, mask, fwd_scale, bwd_scale):
    y = x * mask
    if fwd_scale != 1:
        y *= np.asarray(fwd_scale, x.dtype)
    return y


def _nd_vjp(ns, g, need, mask, fwd_scale, bwd_scale):
    # (PyTorch's native_dropout_backward: grad * mask * scale, the scale 1 when train is None)
    return (g * mask * bwd_scale if bwd_scale != 1 else g * mask,)


# params: the kept-elements mask in the input's dtype, the forward and the backward scales
NATIVE_DROPOUT = Op("native_dropout", _nd_fwd, _nd_vjp, linear=True, names=(None, None, None))


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple:
    """``torch.native_dropout``: ``(output, mask)`` with a bool mask of the kept elements
    (``NativeDropoutBackward0``). ``train=None`` drops as in training; its gradient, as
    PyTorch's derivative formula writes it, is then not rescaled by ``1 / (1 - p)``."""
    d = input._data
    if input.numel() == 0:
        return input, _plain(np.empty_like(d))
    if train is None or train:
        if p < 0 or p > 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p}")
        keep = 1.0 - p
        scale = 0.0 if keep == 0 else 1.0 / keep
        mask = _rng(None).random(d.shape, dtype=np.float32) < keep
        bwd = scale if train else 1.0
    else:
        mask = np.ones(d.shape, bool)
        scale = bwd = 1.0
    out = apply(NATIVE_DROPOUT, (input,), (mask.astype(d.dtype), scale, bwd))
    return out, _plain(mask)


def _plain(a: np.ndarray) -> Tensor:
    return _make(a, Version(), False, None)


# ---- activations with ATen's signatures -----------------------------------------------------

def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``torch.celu``."""
    return _act.celu(input, alpha)


def selu(input: Tensor) -> Tensor:
    """``torch.selu``."""
    return _act.selu(input)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """``torch.threshold``."""
    return _act.threshold(input, threshold, value)


def _rrelu(input: Tensor, lower, upper, training: bool, generator, inplace: bool) -> Tensor:
    _act._need_float(input, "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    noise = None
    if training:
        d = input._data
        wdt = np.float32 if _act._is_half(d) else d.dtype
        noise = _rng(generator).uniform(lower, upper, d.shape).astype(wdt)
        noise[d > 0] = 1
    params = (noise, float(lower), float(upper), bool(training))
    return _act._run(_act.RRELU_ if inplace else _act.RRELU, input, params, inplace)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    """``torch.rrelu``: ``F.rrelu`` with the slopes drawn from ``generator``."""
    return _rrelu(input, lower, upper, training, generator, False)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False, generator=None) -> Tensor:
    """``torch.rrelu_``."""
    return _rrelu(input, lower, upper, training, generator, True)


# ---- recurrent cells (nn.LSTMCell and friends run the same arithmetic in nn/modules/rnn.py) ----

def _gates(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih, b_hh) -> tuple:
    return nn_misc.linear(input, w_ih, b_ih), nn_misc.linear(hx, w_hh, b_hh)


def lstm_cell(input: Tensor, hx, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple:
    """``torch.lstm_cell``: one LSTM step, gates ``i, f, g, o``; ``hx`` is ``(h, c)``."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    gi, gh = _gates(input, hx[0], w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, 1)
    c = f.sigmoid() * hx[1] + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
             b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``torch.gru_cell``: one GRU step, gates ``r, z, n``."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return (hx - n) * z + n


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``torch.rnn_tanh_cell``: ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).tanh()


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``torch.rnn_relu_cell``: ``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).relu()


# ---- normalisation -------------------------------------------------------------------------

def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """``torch.batch_norm`` (``cudnn_enabled`` has no effect on the CPU, as in PyTorch)."""
    if not training and (running_mean is None or running_var is None):
        which = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{which} must be defined in evaluation mode")
    return nn_norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                              eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """``torch.instance_norm``."""
    return nn_norm.instance_norm(input, running_mean, running_var, weight, bias,
                                 use_input_stats, momentum, eps)


def _int_list(fn, name: str, value):
    if not isinstance(value, (list, tuple)):
        raise must_be(fn, name, value, "tuple of ints")
    return value


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Tensor:
    """``torch.layer_norm``: ``normalized_shape`` must be a sequence here (ATen's int list)."""
    return nn_norm.layer_norm(input, _int_list(layer_norm, "normalized_shape", normalized_shape),
                              weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    """``torch.group_norm``."""
    return nn_norm.group_norm(input, num_groups, weight, bias, eps)


_NORM_OPS: dict = {}


def _aten_norm(x: Tensor, p: float, dims, keepdim: bool) -> Tensor:
    """ATen's ``norm`` (``norm.Scalar`` without dims: ``NormBackward0``; ``norm.ScalarOpt_dim``:
    ``NormBackward1``), computed by ``linalg_vector_norm``'s op."""
    node = "NormBackward0" if dims is None else "NormBackward1"
    if node not in _NORM_OPS:
        from .reduction import NORM
        _NORM_OPS[node] = Op("norm", NORM.fwd, NORM.vjp, NORM.jvp, saves=NORM.saves,
                             save_out=True, node=node)
    if dims is not None:
        dims = tuple(d % x.dim() if x.dim() else d for d in dims)
    return apply(_NORM_OPS[node], (x,), (dims, bool(keepdim), float(p)))


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """``torch.norm_except_dim`` (weight_norm's norm): the ``pow``-norm over every dim but
    ``dim``, shaped to broadcast against ``v``; ``dim=-1``: the norm of all of ``v``."""
    if dim == -1:
        return _aten_norm(v, pow, None, False)
    nd = v.dim()
    if dim == 0:
        n = _aten_norm(v.contiguous().view(v.size(0), -1), pow, (1,), False)
        return n.view((v.size(0),) + (1,) * (nd - 1))
    if dim == nd - 1:
        n = _aten_norm(v.contiguous().view(-1, v.size(-1)), pow, (0,), False)
        return n.view((1,) * (nd - 1) + (v.size(-1),))
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


# ---- pooling ----------------------------------------------------------------------------------

def _stride(stride):
    return None if isinstance(stride, (list, tuple)) and len(stride) == 0 else stride


def max_pool1d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
               ceil_mode: bool = False) -> Tensor:
    """``torch.max_pool1d``: the values only (``stride=()``: the kernel size)."""
    return nn_pooling.max_pool1d(input, kernel_size, _stride(stride), padding, dilation,
                                 ceil_mode)


def max_pool2d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
               ceil_mode: bool = False) -> Tensor:
    """``torch.max_pool2d``: the values only."""
    return nn_pooling.max_pool2d(input, kernel_size, _stride(stride), padding, dilation,
                                 ceil_mode)


def max_pool3d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
               ceil_mode: bool = False) -> Tensor:
    """``torch.max_pool3d``: the values only."""
    return nn_pooling.max_pool3d(input, kernel_size, _stride(stride), padding, dilation,
                                 ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode: bool = False) -> tuple:
    """``torch.max_pool1d_with_indices``: a plain ``(values, indices)`` tuple."""
    return tuple(nn_pooling.max_pool1d_with_indices(input, kernel_size, _stride(stride), padding,
                                                    dilation, ceil_mode))


def adaptive_max_pool1d(input: Tensor, output_size) -> tuple:
    """``torch.adaptive_max_pool1d``: a plain ``(values, indices)`` tuple."""
    return tuple(nn_pooling.adaptive_max_pool1d_with_indices(input, output_size))


# ---- embedding ----------------------------------------------------------------------------

def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``torch.embedding``: weight first; a negative ``padding_idx`` (or one past the rows)
    means none, as in ATen."""
    n = weight.shape[0] if weight.dim() else 0
    pad = padding_idx if 0 <= padding_idx < n else None
    return nn_misc.embedding(indices, weight, pad, None, 2.0, scale_grad_by_freq, sparse)


# ---- losses with an int reduction ----------------------------------------------------------

def _reduce(loss: Tensor, red: str) -> Tensor:
    return loss.mean() if red == "mean" else loss.sum() if red == "sum" else loss


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *,
           log_target: bool = False) -> Tensor:
    """``torch.kl_div``: 1 divides by every element (no warning: that is ``F``'s)."""
    red = _reduction(kl_div, reduction)
    return _reduce(nn_loss.kl_div(input, target, reduction="none", log_target=log_target), red)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: int = 0) -> Tensor:
    """``torch.binary_cross_entropy_with_logits``: ``input`` broadcast to ``target``'s shape
    (ATen computes into a tensor shaped as ``target``)."""
    red = _reduction(binary_cross_entropy_with_logits, reduction)
    if input.shape != target.shape:
        shape = tuple(np.broadcast_shapes(input.shape, target.shape))
        if shape != tuple(target.shape):
            raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        input = input.expand(shape)
    return nn_loss.binary_cross_entropy_with_logits(input, target, weight, reduction=red,
                                                    pos_weight=pos_weight)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """``torch.margin_ranking_loss``."""
    red = _reduction(margin_ranking_loss, reduction)
    return nn_loss.margin_ranking_loss(input1, input2, target, margin, reduction=red)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 0) -> Tensor:
    """``torch.hinge_embedding_loss``."""
    red = _reduction(hinge_embedding_loss, reduction)
    return nn_loss.hinge_embedding_loss(input, target, margin, reduction=red)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    """``torch.cosine_embedding_loss``."""
    red = _reduction(cosine_embedding_loss, reduction)
    return nn_loss.cosine_embedding_loss(input1, input2, target, margin, reduction=red)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """``torch.poisson_nll_loss`` (every argument required, as ATen's)."""
    red = _reduction(poisson_nll_loss, reduction)
    return nn_loss.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=red)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, reduction: int = 0) -> Tensor:
    """``torch.triplet_margin_loss``."""
    red = _reduction(triplet_margin_loss, reduction)
    return nn_loss.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                       reduction=red)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    """``torch.ctc_loss``: lengths as int lists or tensors; 1 divides each loss by its target
    length, then averages."""
    red = _reduction(ctc_loss, reduction)
    return nn_loss.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, red,
                            zero_infinity)


# ---- sampling grids --------------------------------------------------------------------------

_INTERP = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``torch.grid_sampler``: ``F.grid_sample`` with ATen's mode numbers (interpolation 0
    bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection)."""
    if interpolation_mode not in _INTERP or padding_mode not in _PADDING:
        raise NotImplementedError(
            f"grid_sampler: interpolation_mode {interpolation_mode} / padding_mode "
            f"{padding_mode} is not one of ATen's modes (PyTorch reads such a value as "
            "undefined memory; ember refuses it)")
    return nn_grid.grid_sample(input, grid, _INTERP[interpolation_mode],
                               _PADDING[padding_mode], bool(align_corners))


def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    """``torch.affine_grid_generator``."""
    return nn_grid.affine_grid(theta, list(size), bool(align_corners))


# ---- deprecated matrix helpers ---------------------------------------------------------------

def chain_matmul(*matrices, out: Tensor | None = None) -> Tensor:
    """``torch.chain_matmul`` (deprecated; warns once, as PyTorch): ``linalg.multi_dot`` of two or
    more matrices, a single matrix returned as is."""
    warn_once("chain_matmul",
              "ember.chain_matmul is deprecated and will be removed in a future PyTorch release. "
              "Use ember.linalg.multi_dot instead, which accepts a list of two or more tensors "
              "rather than multiple parameters. (Triggered internally at /__w/pytorch/pytorch/"
              "aten/src/ATen/native/LinearAlgebra.cpp:1102.)")
    from .linalg_misc import multi_dot
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if not isinstance(m, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(m).__name__}")
    if len(matrices) == 1:
        m = matrices[0]
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
        r = m.clone()
    else:
        r = multi_dot(list(matrices))
    if out is not None:
        from ._out import with_out
        return with_out(lambda: r, out, ())
    return r


def nuclear_norm(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """``torch.nuclear_norm`` (deprecated in ATen, warning once): ``linalg.matrix_norm(input,
    'nuc', dim, keepdim)``; without ``dim``, over the last two dims."""
    warn_once("nuclear_norm",
              "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will "
              "be removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', "
              "dim, keepdim)` instead (Triggered internally at /__w/pytorch/pytorch/aten/src/"
              "ATen/native/LinearAlgebra.cpp:3229.)")
    from .linalg_misc import matrix_norm
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    if dim is None:
        dim = (-2, -1)
    return matrix_norm(input, "nuc", tuple(dim), keepdim)


def frobenius_norm(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    """``torch.frobenius_norm`` (deprecated in ATen, warning once): the 2-norm over ``dim``."""
    warn_once("frobenius_norm",
              "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It "
              "will be removed in a future PyTorch release. Please use `linalg.vector_norm(A, "
              "2., dim, keepdim)` instead (Triggered internally at /__w/pytorch/pytorch/aten/"
              "src/ATen/native/ReduceOps.cpp:1623.)")
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    return _aten_norm(input, 2.0, dims, keepdim)

