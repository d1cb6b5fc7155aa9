"""nn.functional: scaled_dot_product_attention and multi_head_attention_forward.

``scaled_dot_product_attention`` is one op: ``softmax(q k^T * scale + mask) v`` with PyTorch's
causal mask, boolean or additive masks (rows masked entirely give zeros, like its
``_safe_softmax``), dropout and grouped-query heads. Which node the result carries follows
PyTorch's CPU kernel choice: its fused flash kernel
(``ScaledDotProductFlashAttentionForCpuBackward0``) when the inputs qualify, else the math
composite, whose last op is a matmul. The forward keeps the attention probabilities for the
fast backward; under ``create_graph`` the VJP recomputes them with ember ops, so double
backward works.

``multi_head_attention_forward`` is PyTorch's composite, written with ember ops.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, Version, _make
from ._registry import NP, Op, ns_fn, wrap_outputs
from .nn_sampling import like, on_meta

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]

_NEG_INF = -math.inf


def _keep_mask(shape, p: float, like) -> np.ndarray:
    """Which attention weights dropout keeps (probability 1 - p), from ember's generator."""
    from .random import _rng
    return _rng(None).random(shape) < (1.0 - p)


# ---- the attention op -------------------------------------------------------------------------

class _Attn:
    """One call's constants: scale, the causal mask, the dropout keep mask (already divided by
    1 - p), the grouped-query repeats, and the probabilities the forward computed."""

    __slots__ = ("causal", "drop", "probs", "rep_k", "rep_v", "scale")

    def __init__(self, scale, causal, drop, rep_k, rep_v):
        self.scale, self.causal, self.drop = scale, causal, drop
        self.rep_k, self.rep_v = rep_k, rep_v
        self.probs = None


def _rep_np(x, r: int):
    return x if r == 1 else np.repeat(x, r, axis=-3)


def _unrep(ns, g, r: int):
    """The gradient of a head-repeated tensor: the sum over each head's copies."""
    if r == 1:
        return g
    shape = tuple(g.shape)
    g = g.reshape(shape[:-3] + (shape[-3] // r, r) + shape[-2:])
    return ns.sum_dims(g, (len(shape) - 2,), False)


def _rep(ns, x, r: int):
    if r == 1:
        return x
    if ns is NP:
        return _rep_np(x, r)
    shape = tuple(x.shape)
    y = x.unsqueeze(-3).expand(shape[:-2] + (r,) + shape[-2:])
    return y.reshape(shape[:-3] + (shape[-3] * r,) + shape[-2:])


def _rowmax_np(s):
    """The maximum over the last axis, kept. NumPy reduces a short last axis row by row (about
    60 ns a row); over the leading axis of the transposed copy it is one vector loop."""
    n = s.shape[-1]
    if n > 128 or s.ndim < 2 or s.size < 4096 or type(s) is not np.ndarray:
        return np.max(s, axis=-1, keepdims=True)
    t = np.ascontiguousarray(s.reshape(-1, n).T)
    return np.max(t, axis=0).reshape(s.shape[:-1] + (1,))


def _softmax_np(s):
    m = _rowmax_np(s)
    dead = None
    if not np.isfinite(m).all():   # rows masked entirely (m = -inf) give zeros
        dead = m == _NEG_INF
        m[dead] = 0
    e = np.subtract(s, m)
    np.exp(e, out=e)
    tot = _rowsum_np(e)
    if dead is not None:
        tot[dead] = 1
    e /= tot
    return e


def _rowsum_np(x):
    """Sums over the last axis as a product with ones: BLAS beats NumPy's reduction over short
    rows several times over."""
    if x.dtype.kind != "f" or x.dtype.itemsize < 4:
        return np.sum(x, axis=-1, keepdims=True)
    return np.matmul(x, np.ones_like(x, shape=(x.shape[-1], 1)))


ns_fn("rowsum", _rowsum_np, lambda x: x.sum(-1, keepdim=True))


def _softmax_em(s):
    """Softmax whose fully masked rows are 0 (PyTorch's _safe_softmax), differentiably."""
    from .activation import softmax
    from .reduction import _const_em
    dead = _const_em(lambda a: np.all(np.isneginf(a), axis=-1, keepdims=True), s)
    p = softmax(s.masked_fill(dead, 0), -1)
    return p.masked_fill(dead, 0)


ns_fn("attn_softmax", _softmax_np, _softmax_em)


def _scores(ns, q, k, mask, a: _Attn):
    s = ns.matmul(q, ns.mH(k)) * a.scale
    if mask is not None:
        s = s + mask
    if a.causal is not None:
        s = ns.where(ns.const(a.causal), s, _NEG_INF)
    return ns.attn_softmax(s)


def _half(x) -> bool:
    return x is not None and x.dtype.itemsize == 2 and x.dtype.kind == "f" or (
        x is not None and x.dtype == D.bfloat16.np)


def _attn_fwd(q, k, v, mask, a: _Attn):
    """The forward on arrays (``_scores`` + matmul, with the temporaries reused in place)."""
    dt = q.dtype
    if _half(q):   # fused kernels accumulate half types in float32
        q, k, v = (t.astype(np.float32) for t in (q, k, v))
        mask = mask.astype(np.float32) if mask is not None else None
    s = np.matmul(q, np.swapaxes(_rep_np(k, a.rep_k), -1, -2))
    s *= a.scale
    if mask is not None:
        s = np.add(s, mask, out=s) if np.broadcast_shapes(s.shape, mask.shape) == s.shape \
            else s + mask
    if a.causal is not None:
        np.copyto(s, _NEG_INF, where=~like(a.causal, s))
    p = _softmax_np(s)
    a.probs = p
    pd = p if a.drop is None else p * like(a.drop.astype(p.dtype), p)
    return np.matmul(pd, _rep_np(v, a.rep_v)).astype(dt, copy=False)


def _attn_vjp(ns, g, need, q, k, v, mask, a: _Attn):
    kr, vr = _rep(ns, k, a.rep_k), _rep(ns, v, a.rep_v)
    if ns is NP and a.probs is not None and not _half(q):
        p = a.probs
    else:
        p = _scores(ns, q, kr, mask, a)
    drop = None if a.drop is None else ns.const(a.drop.astype(q.dtype if ns is NP else
                                                             q._data.dtype))
    pd = p if drop is None else p * drop
    gv = _unrep(ns, ns.matmul(ns.mH(pd), g), a.rep_v) if need[2] else None
    if not (need[0] or need[1] or need[3]):
        return None, None, gv, None
    gp = ns.matmul(g, ns.mH(vr))
    if drop is not None:
        gp = gp * drop
    gs = p * (gp - ns.rowsum(gp * p))
    gq = ns.matmul(gs, kr) * a.scale if need[0] else None
    gk = _unrep(ns, ns.matmul(ns.mH(gs), q) * a.scale, a.rep_k) if need[1] else None
    return gq, gk, gv, gs if need[3] else None


def _attn_jvp(ns, tangents, primals, outs, a: _Attn):
    q, k, v, mask = primals
    tq, tk, tv, tm = tangents
    kr, vr = _rep(ns, k, a.rep_k), _rep(ns, v, a.rep_v)
    p = _scores(ns, q, kr, mask, a)
    ts = None
    if tq is not None:
        ts = ns.matmul(tq, ns.mH(kr)) * a.scale
    if tk is not None:
        t = ns.matmul(q, ns.mH(_rep(ns, tk, a.rep_k))) * a.scale
        ts = t if ts is None else ts + t
    if tm is not None:
        ts = tm if ts is None else ts + tm
    drop = None if a.drop is None else ns.const(a.drop.astype(q._data.dtype))
    r = None
    if ts is not None:
        tp = p * (ts - ns.rowsum(ts * p))
        r = ns.matmul(tp if drop is None else tp * drop, vr)
    if tv is not None:
        t = ns.matmul(p if drop is None else p * drop, _rep(ns, tv, a.rep_v))
        r = t if r is None else r + t
    return r


_ATTN_OPS: dict = {}


def _attn_op(node: str) -> Op:
    op = _ATTN_OPS.get(node)
    if op is None:
        op = _ATTN_OPS[node] = Op("scaled_dot_product_attention", _attn_fwd, _attn_vjp,
                                  _attn_jvp, saves=(0, 1, 2, 3), node=node)
    return op


# ---- scaled_dot_product_attention ---------------------------------------------------------

def _cname(dt: D.dtype) -> str:
    from .nn_misc import _scalar_name
    return _scalar_name(dt)


def _validate(q: Tensor, k: Tensor, v: Tensor, mask) -> None:
    """PyTorch's validate_sdpa_input."""
    if not (q._data.dtype == k._data.dtype == v._data.dtype):
        raise RuntimeError(
            f"Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cname(q.dtype)} key.dtype: {_cname(k.dtype)} and value.dtype: "
            f"{_cname(v.dtype)} instead.")
    if min(q._data.ndim, k._data.ndim, v._data.ndim) < 2:
        raise RuntimeError(
            f"Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {q._data.ndim} key.dim: {k._data.ndim} and value.dim: {v._data.ndim} "
            "instead.")
    if mask is not None:
        md = mask._data.dtype
        if md != np.bool_ and md != np.float32 and md != q._data.dtype:
            raise RuntimeError(
                f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {_cname(mask.dtype)} and  query.dtype: {_cname(q.dtype)} "
                "instead.")


def _gqa_reps(q: Tensor, k: Tensor, v: Tensor, enable_gqa: bool):
    if not enable_gqa:
        return 1, 1
    hq, hk, hv = q._data.shape[-3], k._data.shape[-3], v._data.shape[-3]
    if hq == hk == hv:
        return 1, 1
    if hq % hk or hq % hv:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return hq // hk, hq // hv


def _use_flash(q: Tensor, k: Tensor, v: Tensor, mask, dropout_p: float, gqa: bool) -> bool:
    """PyTorch's CPU choice of its fused flash kernel (sdp_utils_cpp's checks)."""
    if dropout_p > 0.0:
        return False
    qs, ks, vs = q._data.shape, k._data.shape, v._data.shape
    if not (len(qs) == len(ks) == len(vs) == 4):
        return False
    if not (qs[0] == ks[0] == vs[0]):
        return False
    if gqa:
        if qs[1] % ks[1] or ks[1] != vs[1]:
            return False
    elif not (qs[1] == ks[1] == vs[1]):
        return False
    if mask is not None:
        ms = mask._data.shape
        if mask._rg or mask._data.ndim not in (2, 4):
            return False
        if ms[-2] not in (qs[2], 1) or ms[-1] not in (ks[2], 1):
            return False
        if len(ms) == 4 and (ms[0] not in (1, qs[0]) or ms[1] not in (1, qs[1])):
            return False
    if not (qs[-1] == ks[-1] == vs[-1]) or qs[2] == 0 or ks[2] == 0:
        return False
    return all(t._data.strides[-1] == t._data.itemsize or t._data.shape[-1] == 1
               for t in (q, k, v))


def _check_math(q: Tensor, k: Tensor, v: Tensor, gqa: bool) -> None:
    """The math composite's matmul checks (broadcast batch dims, matching inner sizes)."""
    from .linalg import _matmul_route
    from .nn_misc import _Operand
    if gqa:
        _gqa_reps(q, k, v, gqa)
    else:
        from ._dispatch import check_broadcast
        check_broadcast(q._data.shape[:-2], k._data.shape[:-2])
    _matmul_route(_Operand(q._data, q._rg), _Operand(np.swapaxes(k._data, -1, -2), k._rg))


def _math_node(q: Tensor, k: Tensor, v: Tensor) -> str:
    """The node of the math composite's last op, matmul(attn, value)."""
    from .linalg import _matmul_route
    from .nn_misc import _Operand
    qs, ks = q._data.shape, k._data.shape
    lead = np.broadcast_shapes(qs[:-2], ks[:-2])
    attn = np.broadcast_to(np.empty((), q._data.dtype), lead + (qs[-2], ks[-2]))
    return _matmul_route(_Operand(attn, True), _Operand(v._data, v._rg)).node.__name__


_CAUSAL: dict = {}


def _causal(n_q: int, n_k: int) -> np.ndarray:
    """The top-left aligned lower-triangular mask PyTorch's is_causal uses."""
    m = _CAUSAL.get((n_q, n_k))
    if m is None:
        if len(_CAUSAL) > 64:
            _CAUSAL.clear()
        m = _CAUSAL[(n_q, n_k)] = np.tril(np.ones((n_q, n_k), np.bool_))
    return m


def _float_mask(mask, dtype) -> Tensor | None:
    """A boolean mask as PyTorch's additive one: 0 where attending, -inf elsewhere."""
    if mask is None or mask._data.dtype != np.bool_:
        return mask
    m = np.where(mask._data, 0, _NEG_INF).astype(dtype)
    return _make(m, Version(), False, None)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale=None,
                                 enable_gqa: bool = False) -> Tensor:
    """``torch.nn.functional.scaled_dot_product_attention``: softmax(q k^T * scale + mask) v,
    with a causal mask, dropout on the attention weights and grouped-query heads."""
    _validate(query, key, value, attn_mask)
    flash = _use_flash(query, key, value, attn_mask, dropout_p, enable_gqa)
    if not flash:
        _check_math(query, key, value, enable_gqa)
    if is_causal and attn_mask is not None and not flash:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    rep_k, rep_v = _gqa_reps(query, key, value, enable_gqa)
    qs, ks = query._data.shape, key._data.shape
    sc = 1.0 / math.sqrt(qs[-1]) if scale is None else float(scale)
    causal = _causal(qs[-2], ks[-2]) if is_causal else None
    mask = _float_mask(attn_mask, query._data.dtype)
    drop = None
    if dropout_p > 0.0:
        shape = np.broadcast_shapes(qs[:-2], ks[:-3] + (ks[-3] * rep_k,) if len(ks) > 2
                                    else ks[:-2]) + (qs[-2], ks[-2])
        keep = _keep_mask(shape, dropout_p, query._data)
        drop = keep / (1.0 - dropout_p) if dropout_p < 1 else np.zeros(shape)
    a = _Attn(sc, causal, drop, rep_k, rep_v)
    node = "ScaledDotProductFlashAttentionForCpuBackward0" if flash else \
        _math_node(query, key, value)
    op = _attn_op(node)
    out = on_meta(_attn_fwd)(query._data, key._data, value._data,
                             None if mask is None else mask._data, a)
    return wrap_outputs(op, (query, key, value, mask), (a,), out)


# ---- multi_head_attention_forward ---------------------------------------------------------

def _dropout(x: Tensor, p: float) -> Tensor:
    """Dropout of the attention weights (training mode), from ember's generator."""
    if p <= 0.0:
        return x
    keep = _keep_mask(x._data.shape, p, x._data)
    scale = np.where(keep, 1.0 / (1.0 - p), 0.0).astype(x._data.dtype) if p < 1 else \
        np.zeros_like(x._data)
    return x * _make(scale, Version(), False, None)


def _shape(t: Tensor) -> str:
    return "ember.Size([" + ", ".join(str(s) for s in t._data.shape) + "])"


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """PyTorch's _mha_shape_check: whether the inputs are batched, or an AssertionError."""
    qd, kd, vd = query.dim(), key.dim(), value.dim()
    if qd not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{qd}-D query tensor")
    batched = qd == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if kd != qd or vd != qd:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {qd}-D but "
                             f"found {kd}-D and {vd}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != qd - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{qd - 1}-D but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D "
                                 f"or 3-D but found {attn_mask.dim()}-D tensor instead")
        if not batched and attn_mask.dim() == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{_shape(attn_mask)}")
    return batched


def _canonical_mask(mask, name: str, other_type, other_name: str, target, check_other=True):
    """PyTorch's _canonical_mask: bool masks become additive float ones."""
    if mask is None:
        return None
    if mask.dtype is not D.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same "
                      "type for both instead.", stacklevel=3)
    if not mask.is_floating_point():
        m = np.where(mask._data, _NEG_INF, 0).astype(target.np)
        mask = _make(m, Version(), False, None)
    return mask


def _in_projection_packed(q, k, v, w, b):
    from .nn_misc import linear
    e = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2).squeeze(-2)
            proj = proj.contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, e)).unsqueeze(0).transpose(0, -2)
        kv = kv.squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q, b_k, b_v):
    from .nn_misc import linear
    eq, ek, ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, want in (("query", w_q, (eq, eq)), ("key", w_k, (eq, ek)),
                          ("value", w_v, (eq, ev))):
        if tuple(w.shape) != want:
            raise AssertionError(f"expecting {name} weights shape of {want}, but got "
                                 f"{_shape(w)}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (eq,):
            raise AssertionError(f"expecting {name} bias shape of {(eq,)}, but got {_shape(b)}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _project(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight,
             q_proj_weight, k_proj_weight, v_proj_weight):
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
        if w is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is "
                                 "None")
    b = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    return _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, *b)


def _check_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads):
    if attn_mask is None:
        return None
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {_shape(attn_mask)}, but should "
                               f"be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        want = (bsz * num_heads, tgt_len, src_len)
        if tuple(attn_mask.shape) != want:
            raise RuntimeError(f"The shape of the 3D attn_mask is {_shape(attn_mask)}, but should "
                               f"be {want}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _static(t, name, bsz, num_heads, head_dim):
    if t.size(0) != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got "
                             f"{t.size(0)}")
    if t.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.size(2)}")
    return t


def _extend_keys(k, v, attn_mask, key_padding_mask, bias_k, bias_v, static_k, static_v, bsz):
    """Append the learned bias_k / bias_v key and value (and a column to the masks)."""
    from .joining import cat
    from .nn_sampling import pad
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    return k, v, attn_mask, key_padding_mask


def _heads(q, k, v, static_k, static_v, tgt_len, bsz, num_heads, head_dim):
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        k = _static(static_k, "static_k", bsz, num_heads, head_dim)
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        v = _static(static_v, "static_v", bsz, num_heads, head_dim)
    return q, k, v


def _zero_attn(k, v, attn_mask, key_padding_mask, bsz, num_heads, head_dim):
    from .creation import zeros
    from .joining import cat
    from .nn_sampling import pad
    shape = (bsz * num_heads, 1, head_dim)
    k = cat([k, zeros(shape, dtype=k.dtype)], dim=1)
    v = cat([v, zeros(shape, dtype=v.dtype)], dim=1)
    if attn_mask is not None:
        attn_mask = pad(attn_mask, (0, 1))
    if key_padding_mask is not None:
        key_padding_mask = pad(key_padding_mask, (0, 1))
    return k, v, attn_mask, key_padding_mask


def _merge_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len):
    if key_padding_mask is None:
        return attn_mask
    s = key_padding_mask.shape
    if s[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {s[0]}")
    if s[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{s[1]}")
    kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
    kpm = kpm.reshape(bsz * num_heads, 1, src_len)
    return kpm if attn_mask is None else attn_mask + kpm


def _weights_path(q, k, v, attn_mask, dropout_p, is_causal, shapes, out_w, out_b,
                  average, batched):
    from .activation import softmax
    from .linalg import baddbmm, bmm
    from .nn_misc import linear
    tgt_len, bsz, embed_dim, num_heads, src_len = shapes
    e = q.shape[-1]
    q_scaled = q * math.sqrt(1.0 / float(e))
    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    kt = k.transpose(-2, -1)
    w = bmm(q_scaled, kt) if attn_mask is None else baddbmm(attn_mask, q_scaled, kt)
    w = softmax(w, -1)
    if dropout_p > 0.0:
        w = _dropout(w, dropout_p)
    out = bmm(w, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_w, out_b)
    out = out.view(tgt_len, bsz, out.size(1))
    w = w.view(bsz, num_heads, tgt_len, src_len)
    if average:
        w = w.mean(dim=1)
    if not batched:
        out, w = out.squeeze(1), w.squeeze(0)
    return out, w


def _sdpa_path(q, k, v, attn_mask, dropout_p, is_causal, shapes, out_w, out_b, batched):
    from .nn_misc import linear
    tgt_len, bsz, embed_dim, num_heads, src_len = shapes
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    hd = embed_dim // num_heads
    q = q.view(bsz, num_heads, tgt_len, hd)
    k = k.view(bsz, num_heads, src_len, hd)
    v = v.view(bsz, num_heads, src_len, hd)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_w, out_b)
    out = out.view(tgt_len, bsz, out.size(1))
    return (out if batched else out.squeeze(1)), None


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """``torch.nn.functional.multi_head_attention_forward``: PyTorch's composite (input
    projections, optional bias_k/bias_v and zero-attention keys, masks, attention through
    explicit weights when ``need_weights`` else ``scaled_dot_product_attention``, output
    projection), written with ember ops so every output has PyTorch's history."""
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype,
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    q, k, v = _project(query, key, value, in_proj_weight, in_proj_bias,
                       use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight)
    attn_mask = _check_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads)
    k, v, attn_mask, key_padding_mask = _extend_keys(k, v, attn_mask, key_padding_mask, bias_k,
                                                     bias_v, static_k, static_v, bsz)
    q, k, v = _heads(q, k, v, static_k, static_v, tgt_len, bsz, num_heads, head_dim)
    if add_zero_attn:
        k, v, attn_mask, key_padding_mask = _zero_attn(k, v, attn_mask, key_padding_mask, bsz,
                                                       num_heads, head_dim)
    src_len = k.size(1)
    attn_mask = _merge_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len)
    if not training:
        dropout_p = 0.0
    shapes = (tgt_len, bsz, embed_dim, num_heads, src_len)
    if need_weights:
        return _weights_path(q, k, v, attn_mask, dropout_p, is_causal, shapes, out_proj_weight,
                             out_proj_bias, average_attn_weights, batched)
    return _sdpa_path(q, k, v, attn_mask, dropout_p, is_causal, shapes, out_proj_weight,
                      out_proj_bias, batched)
