"""``torch.nn.MultiheadAttention`` (PyTorch keeps it in ``nn/modules/activation.py``).

The module holds PyTorch's parameters (``in_proj_weight`` or ``q/k/v_proj_weight`` when
``kdim``/``vdim`` differ, ``in_proj_bias``, ``out_proj``, ``bias_k``/``bias_v``) with PyTorch's
initialisation, and runs ``F.multi_head_attention_forward``. PyTorch's CPU fast path
(``_native_multi_head_attention``, taken only in inference) computes the same values, so ember
always takes the composite path.
"""
from __future__ import annotations

import ember

from ..._ops.nn_attention import _canonical_mask
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention"]


def _none_or_dtype(x: Tensor | None):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return x.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


class MultiheadAttention(Module):
    """``torch.nn.MultiheadAttention``: attention over ``num_heads`` heads of size
    ``embed_dim // num_heads``; ``(L, N, E)`` inputs, or ``(N, L, E)`` with ``batch_first``,
    or unbatched ``(L, E)``."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(ember.empty((embed_dim, embed_dim), **factory_kwargs))
            self.k_proj_weight = Parameter(ember.empty((embed_dim, self.kdim), **factory_kwargs))
            self.v_proj_weight = Parameter(ember.empty((embed_dim, self.vdim), **factory_kwargs))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(
                ember.empty((3 * embed_dim, embed_dim), **factory_kwargs))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ember.empty(3 * embed_dim, **factory_kwargs))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory_kwargs)
        if add_bias_kv:
            self.bias_k = Parameter(ember.empty((1, 1, embed_dim), **factory_kwargs))
            self.bias_v = Parameter(ember.empty((1, 1, embed_dim), **factory_kwargs))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        is_batched = query.dim() == 3
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                           _none_or_dtype(attn_mask), "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if query.is_nested or key.is_nested or value.is_nested:
            raise AssertionError("MultiheadAttention does not support NestedTensor outside of "
                                 "its fast path. The fast path was not hit because ember has "
                                 "no MultiheadAttention fast path")
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight if separate else None,
            k_proj_weight=self.k_proj_weight if separate else None,
            v_proj_weight=self.v_proj_weight if separate else None,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            return attn_output.transpose(1, 0), attn_output_weights
        return attn_output, attn_output_weights

    def merge_masks(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                    query: Tensor) -> tuple[Tensor | None, int | None]:
        """PyTorch's ``merge_masks``: combine the (canonical, additive) masks into one
        ``(N, num_heads, L, S)`` mask and return it with its type (1: padding, 2: merged)."""
        mask_type: int | None = None
        merged_mask: Tensor | None = None
        if key_padding_mask is not None:
            mask_type = 1
            merged_mask = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                attn_mask_expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                attn_mask_expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            merged_mask = attn_mask_expanded
            if key_padding_mask is not None:
                key_padding_mask_expanded = key_padding_mask.view(
                    batch_size, 1, 1, seq_len).expand(-1, self.num_heads, -1, -1)
                merged_mask = attn_mask_expanded + key_padding_mask_expanded
        return merged_mask, mask_type
