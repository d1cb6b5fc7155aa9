"""nn.MultiheadAttention and the transformer modules against PyTorch: from identical weights
(torch's state_dict copied into ember) and identical inputs, outputs, attention weights and the
gradients of every input and parameter over kdim/vdim, batch_first, biases, bias_kv,
zero-attention, masks, causal hints, unbatched inputs, norm_first, activations and layer
stacks; the encoder's inference nested-tensor path; state_dict keys, reprs, initialisation and
error messages."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from helpers import assert_same, raises_same

RNG = np.random.default_rng(5)


def rand(*shape):
    return RNG.standard_normal(shape)


def emods():
    """ember's module namespace (``ember.nn``)."""
    return ember.nn


def copy_weights(em, tm):
    sd = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    em.load_state_dict(sd)


def make(name, *args, ns=None, **kwargs):
    tm = getattr(torch.nn, name)(*args, dtype=torch.float64, **kwargs)
    em = getattr(ns or ember.nn, name)(*args, dtype=ember.float64, **kwargs)
    copy_weights(em, tm)
    return em, tm


def leaf(a):
    return (ember.from_numpy(a.copy()).requires_grad_(),
            torch.from_numpy(a.copy()).requires_grad_())


def flat(x):
    if isinstance(x, (tuple, list)):
        return [leaf_ for i in x for leaf_ in flat(i)]
    return [x]


def compare(em, tm, e_out, t_out, e_inputs, t_inputs):
    """Outputs equal (None where torch has None); then one random cotangent per output and
    every input and parameter gradient equal."""
    eo, to = flat(e_out), flat(t_out)
    assert len(eo) == len(to)
    for a, b in zip(eo, to):
        assert_same(a, b)
    pairs = [(a, b) for a, b in zip(eo, to) if b is not None]
    cots = [rand(*b.shape) for _, b in pairs]
    e_loss = sum((a * ember.from_numpy(c)).sum() for (a, _), c in zip(pairs, cots))
    t_loss = sum((b * torch.from_numpy(c)).sum() for (_, b), c in zip(pairs, cots))
    e_loss.backward()
    t_loss.backward()
    for a, b in zip(e_inputs, t_inputs):
        assert_same(a.grad, b.grad)
    tp = dict(tm.named_parameters())
    ep = dict(em.named_parameters())
    assert list(ep) == list(tp)
    for k in tp:
        if tp[k].grad is None:
            assert ep[k].grad is None, k
        else:
            assert_same(ep[k].grad, tp[k].grad)


# ------------------------------------------------------------------------------------------
# MultiheadAttention

MHA_CONFIGS = [
    dict(),
    dict(batch_first=True),
    dict(kdim=5, vdim=6),
    dict(kdim=5, vdim=6, batch_first=True, bias=False),
    dict(add_bias_kv=True),
    dict(add_zero_attn=True, batch_first=True),
    dict(add_bias_kv=True, add_zero_attn=True, kdim=5, vdim=3),
]


def _qkv(cfg, batched=True):
    L, S, N, E = 3, 4, 2, 8
    kd, vd = cfg.get("kdim", E), cfg.get("vdim", E)
    if not batched:
        return rand(L, E), rand(S, kd), rand(S, vd)
    if cfg.get("batch_first"):
        return rand(N, L, E), rand(N, S, kd), rand(N, S, vd)
    return rand(L, N, E), rand(S, N, kd), rand(S, N, vd)


@pytest.mark.parametrize("cfg", MHA_CONFIGS, ids=lambda c: "-".join(map(str, c.items())) or "d")
@pytest.mark.parametrize("need_weights,avg", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("masks", ["none", "bool", "float3d", "padding", "both"])
def test_mha(cfg, need_weights, avg, masks):
    em, tm = make("MultiheadAttention", 8, 2, **cfg)
    q, k, v = _qkv(cfg)
    (eq, tq), (ek, tk), (ev, tv) = leaf(q), leaf(k), leaf(v)
    kw_e, kw_t = {}, {}
    N, L, S = 2, 3, 4
    if masks in ("bool", "both"):
        m = RNG.random((L, S)) < 0.3
        m[:, 0] = False
        kw_e["attn_mask"], kw_t["attn_mask"] = ember.from_numpy(m), torch.from_numpy(m)
    if masks == "float3d":
        m = rand(N * 2, L, S)
        kw_e["attn_mask"], kw_t["attn_mask"] = ember.from_numpy(m), torch.from_numpy(m)
    if masks in ("padding", "both"):
        p = np.array([[False, False, True, True], [False, True, False, False]])
        kw_e["key_padding_mask"] = ember.from_numpy(p)
        kw_t["key_padding_mask"] = torch.from_numpy(p)
    e_out = em(eq, ek, ev, need_weights=need_weights, average_attn_weights=avg, **kw_e)
    t_out = tm(tq, tk, tv, need_weights=need_weights, average_attn_weights=avg, **kw_t)
    compare(em, tm, e_out, t_out, [eq, ek, ev], [tq, tk, tv])


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_self_attention_causal_unbatched(batch_first, need_weights):
    em, tm = make("MultiheadAttention", 6, 3, batch_first=batch_first)
    ex, tx = leaf(rand(2, 5, 6) if batch_first else rand(5, 2, 6))
    ecm = ember.nn.Transformer.generate_square_subsequent_mask(5, dtype=ember.float64)
    tcm = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    compare(em, tm, em(ex, ex, ex, attn_mask=ecm, is_causal=True, need_weights=need_weights),
            tm(tx, tx, tx, attn_mask=tcm, is_causal=True, need_weights=need_weights), [ex], [tx])
    em.zero_grad()
    tm.zero_grad()
    ex, tx = leaf(rand(5, 6))
    ep = ember.from_numpy(np.array([False, False, True, False, True]))
    tp = torch.from_numpy(np.array([False, False, True, False, True]))
    compare(em, tm, em(ex, ex, ex, key_padding_mask=ep, need_weights=need_weights),
            tm(tx, tx, tx, key_padding_mask=tp, need_weights=need_weights), [ex], [tx])


def test_mha_dropout_modes():
    em, tm = make("MultiheadAttention", 8, 2, dropout=0.5)
    em.eval()
    tm.eval()
    q, k, v = _qkv({})
    (eq, tq), (ek, tk), (ev, tv) = leaf(q), leaf(k), leaf(v)
    compare(em, tm, em(eq, ek, ev), tm(tq, tk, tv), [eq, ek, ev], [tq, tk, tv])
    em.train()
    a = em(eq, ek, ev)[1].detach().numpy()
    b = em(eq, ek, ev)[1].detach().numpy()
    assert not np.allclose(a, b)   # training applies dropout to the weights


@pytest.mark.parametrize("cfg", [dict(), dict(kdim=5, vdim=6, bias=False),
                                 dict(add_bias_kv=True, add_zero_attn=True, batch_first=True)])
def test_mha_repr_state_dict_init(cfg):
    tm = torch.nn.MultiheadAttention(8, 2, **cfg)
    em = ember.nn.MultiheadAttention(8, 2, **cfg)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    for (k, ev), (_, tv) in zip(em.state_dict().items(), tm.state_dict().items()):
        assert tuple(ev.shape) == tuple(tv.shape), k
    if em.in_proj_bias is not None:
        assert float(em.in_proj_bias.abs().max()) == 0 and float(em.out_proj.bias.abs().sum()) == 0
    w = em.in_proj_weight if em.in_proj_weight is not None else em.q_proj_weight
    bound = (6 / sum(w.shape)) ** 0.5
    assert 0.5 * bound < float(w.abs().max()) <= bound
    for name in ("embed_dim", "kdim", "vdim", "_qkv_same_embed_dim", "num_heads", "head_dim",
                 "batch_first", "dropout", "add_zero_attn"):
        assert getattr(em, name) == getattr(tm, name), name


def _mha_errors(lib, nn):
    m = nn.MultiheadAttention(8, 2, dtype=lib.float64)
    x = lib.zeros(3, 2, 8, dtype=lib.float64)
    return [
        lambda: nn.MultiheadAttention(8, 3),
        lambda: nn.MultiheadAttention(0, 2),
        lambda: m(x, x, x, attn_mask=lib.zeros(3, 3, dtype=lib.int64)),
        lambda: m(x, x, x, is_causal=True),
        lambda: m(x, x, x, attn_mask=lib.zeros(2, 3, dtype=lib.bool)),
        lambda: m(x, x, lib.zeros(3, 2, 7, dtype=lib.float64)),
    ]


def test_mha_errors():
    for fe, ft in zip(_mha_errors(ember, ember.nn), _mha_errors(torch, torch.nn), strict=True):
        raises_same(fe, ft)


# ------------------------------------------------------------------------------------------
# Transformer layers

def _act(lib, kind):
    if kind == "callable":
        return EF.silu if lib is ember else TF.silu
    return kind


LAYER_CONFIGS = [
    dict(),
    dict(norm_first=True, activation="gelu"),
    dict(batch_first=True, bias=False),
    dict(batch_first=True, norm_first=True, activation="callable", layer_norm_eps=1e-3),
]


def _layer_pair(name, cfg, d_model=8, nhead=2, ff=16):
    kw = {k: v for k, v in cfg.items() if k != "activation"}
    act = cfg.get("activation", "relu")
    tm = getattr(torch.nn, name)(d_model, nhead, ff, 0.0, _act(torch, act), dtype=torch.float64,
                                 **kw)
    em = getattr(emods(), name)(d_model, nhead, ff, 0.0, _act(ember, act), dtype=ember.float64,
                                **kw)
    copy_weights(em, tm)
    return em, tm


def _seq(cfg, S, N=2, E=8):
    return rand(N, S, E) if cfg.get("batch_first") else rand(S, N, E)


@pytest.mark.parametrize("cfg", LAYER_CONFIGS, ids=lambda c: "-".join(map(str, c.items())) or "d")
@pytest.mark.parametrize("masks", ["none", "causal", "padding"])
def test_encoder_layer(cfg, masks):
    em, tm = _layer_pair("TransformerEncoderLayer", cfg)
    ex, tx = leaf(_seq(cfg, 5))
    kw_e, kw_t = {}, {}
    if masks == "causal":
        kw_e["src_mask"] = ember.triu(ember.full((5, 5), float("-inf"), dtype=ember.float64), 1)
        kw_t["src_mask"] = torch.nn.Transformer.generate_square_subsequent_mask(
            5, dtype=torch.float64)
        kw_e["is_causal"] = kw_t["is_causal"] = True
    if masks == "padding":
        p = np.array([[False] * 5, [False, False, False, True, True]])
        kw_e["src_key_padding_mask"] = ember.from_numpy(p)
        kw_t["src_key_padding_mask"] = torch.from_numpy(p)
    compare(em, tm, em(ex, **kw_e), tm(tx, **kw_t), [ex], [tx])


@pytest.mark.parametrize("cfg", LAYER_CONFIGS, ids=lambda c: "-".join(map(str, c.items())) or "d")
def test_decoder_layer(cfg):
    em, tm = _layer_pair("TransformerDecoderLayer", cfg)
    (ex, tx), (emem, tmem) = leaf(_seq(cfg, 4)), leaf(_seq(cfg, 6))
    ecm = ember.triu(ember.full((4, 4), float("-inf"), dtype=ember.float64), 1)
    tcm = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    mm = RNG.random((4, 6)) < 0.3
    mm[:, 0] = False
    tp = np.array([[False] * 4, [False, False, True, True]])
    mp = np.array([[False] * 5 + [True], [False] * 6])
    compare(em, tm,
            em(ex, emem, tgt_mask=ecm, memory_mask=ember.from_numpy(mm),
               tgt_key_padding_mask=ember.from_numpy(tp),
               memory_key_padding_mask=ember.from_numpy(mp), tgt_is_causal=True),
            tm(tx, tmem, tgt_mask=tcm, memory_mask=torch.from_numpy(mm),
               tgt_key_padding_mask=torch.from_numpy(tp),
               memory_key_padding_mask=torch.from_numpy(mp), tgt_is_causal=True),
            [ex, emem], [tx, tmem])
    em.zero_grad()
    tm.zero_grad()
    (ex, tx), (emem, tmem) = leaf(rand(4, 8)), leaf(rand(6, 8))   # unbatched
    compare(em, tm, em(ex, emem), tm(tx, tmem), [ex, emem], [tx, tmem])


def _stack_pair(kind, cfg, n=2, with_norm=True):
    ns = emods()
    layer = "TransformerEncoderLayer" if kind == "enc" else "TransformerDecoderLayer"
    stack = "TransformerEncoder" if kind == "enc" else "TransformerDecoder"
    el, tl = _layer_pair(layer, cfg)
    en = ns.LayerNorm(8, dtype=ember.float64) if with_norm else None
    tn = torch.nn.LayerNorm(8, dtype=torch.float64) if with_norm else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        em, tm = getattr(ns, stack)(el, n, en), getattr(torch.nn, stack)(tl, n, tn)
    with torch.no_grad():   # make the clones differ, so each layer's weights matter
        for p in tm.parameters():
            p.add_(torch.from_numpy(rand(*p.shape)) * 0.1)
    copy_weights(em, tm)
    return em, tm


@pytest.mark.parametrize("cfg", LAYER_CONFIGS[:3], ids=lambda c: "-".join(map(str, c.items()))
                         or "d")
def test_encoder_decoder_stacks(cfg):
    em, tm = _stack_pair("enc", cfg, 3)
    ex, tx = leaf(_seq(cfg, 5))
    p = np.array([[False] * 5, [False, False, False, True, True]])
    compare(em, tm, em(ex, src_key_padding_mask=ember.from_numpy(p)),
            tm(tx, src_key_padding_mask=torch.from_numpy(p)), [ex], [tx])
    em, tm = _stack_pair("dec", cfg, 2, with_norm=False)
    (ex, tx), (emem, tmem) = leaf(_seq(cfg, 4)), leaf(_seq(cfg, 3))
    ecm = ember.triu(ember.full((4, 4), float("-inf"), dtype=ember.float64), 1)
    tcm = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    compare(em, tm, em(ex, emem, tgt_mask=ecm), tm(tx, tmem, tgt_mask=tcm), [ex, emem],
            [tx, tmem])


def test_encoder_nested_path_zeroes_padding():
    # Inference with a left-aligned padding mask: PyTorch runs nested tensors and pads with 0
    cfg = dict(batch_first=True)
    em, tm = _stack_pair("enc", cfg, 2)
    assert em.use_nested_tensor and tm.use_nested_tensor
    em.eval()
    tm.eval()
    x = _seq(cfg, 5)
    p = np.array([[False] * 5, [False, False, False, True, True]])
    with torch.no_grad(), ember.no_grad():
        e = em(ember.from_numpy(x), src_key_padding_mask=ember.from_numpy(p))
        t = tm(torch.from_numpy(x), src_key_padding_mask=torch.from_numpy(p))
    assert_same(e, t)
    # a mask that is not left-aligned, or grad mode with trainable weights: the dense path
    q = np.array([[False] * 5, [False, True, False, False, False]])
    with torch.no_grad(), ember.no_grad():
        e = em(ember.from_numpy(x), src_key_padding_mask=ember.from_numpy(q))
        t = tm(torch.from_numpy(x), src_key_padding_mask=torch.from_numpy(q))
    assert_same(e, t)
    e = em(ember.from_numpy(x), src_key_padding_mask=ember.from_numpy(p))
    t = tm(torch.from_numpy(x), src_key_padding_mask=torch.from_numpy(p))
    assert_same(e, t)


def test_encoder_nested_warnings():
    ns = emods()
    cases = [dict(), dict(batch_first=True, norm_first=True), dict(batch_first=True, bias=False),
             dict(batch_first=True, activation=None), dict(batch_first=True, nhead=1)]
    for c in cases:
        c = dict(c)
        nhead = c.pop("nhead", 2)
        act = c.pop("activation", "relu")
        with warnings.catch_warnings(record=True) as we:
            warnings.simplefilter("always")
            el = ns.TransformerEncoderLayer(8, nhead, 16, activation=act or EF.silu, **c)
            e = ns.TransformerEncoder(el, 2)
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            tl = torch.nn.TransformerEncoderLayer(8, nhead, 16, activation=act or TF.silu, **c)
            t = torch.nn.TransformerEncoder(tl, 2)
        assert [str(w.message) for w in we] == [str(w.message) for w in wt]
        assert e.use_nested_tensor == t.use_nested_tensor
        assert el.activation_relu_or_gelu == tl.activation_relu_or_gelu
    for e_act, t_act in [(ember.nn.ReLU(), torch.nn.ReLU()), (ember.nn.GELU(), torch.nn.GELU()),
                         (EF.gelu, TF.gelu)]:
        el = ns.TransformerEncoderLayer(8, 2, 16, activation=e_act)
        tl = torch.nn.TransformerEncoderLayer(8, 2, 16, activation=t_act)
        assert el.activation_relu_or_gelu == tl.activation_relu_or_gelu
        assert repr(el) == repr(tl)


@pytest.mark.parametrize("cfg", [dict(), dict(batch_first=True, norm_first=True, bias=False)])
def test_transformer(cfg):
    ns = emods()
    tm = torch.nn.Transformer(8, 2, 2, 2, 16, 0.0, dtype=torch.float64, **cfg)
    em = ns.Transformer(8, 2, 2, 2, 16, 0.0, dtype=ember.float64, **cfg)
    copy_weights(em, tm)
    (es, ts), (et, tt) = leaf(_seq(cfg, 5)), leaf(_seq(cfg, 4))
    ecm = ns.Transformer.generate_square_subsequent_mask(4, dtype=ember.float64)
    tcm = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    assert_same(ecm, tcm)
    p = np.array([[False] * 5, [False, False, False, False, True]])
    compare(em, tm,
            em(es, et, tgt_mask=ecm, src_key_padding_mask=ember.from_numpy(p),
               memory_key_padding_mask=ember.from_numpy(p)),
            tm(ts, tt, tgt_mask=tcm, src_key_padding_mask=torch.from_numpy(p),
               memory_key_padding_mask=torch.from_numpy(p)),
            [es, et], [ts, tt])


def test_transformer_repr_state_dict_init():
    ns = emods()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.Transformer(8, 2, 2, 1, 16)
        em = ns.Transformer(8, 2, 2, 1, 16)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    for (k, ev), (_, tv) in zip(em.state_dict().items(), tm.state_dict().items()):
        assert tuple(ev.shape) == tuple(tv.shape), k
        if ev.dim() > 1:
            bound = (6 / (ev.shape[0] + ev.shape[1])) ** 0.5
            assert 0.5 * bound < float(ev.abs().max()) <= bound, k
    # the clones are independent copies
    p0 = em.encoder.layers[0].linear1.weight
    p1 = em.encoder.layers[1].linear1.weight
    assert p0 is not p1
    for name, kw in [("TransformerEncoderLayer", dict(norm_first=True, bias=False)),
                     ("TransformerDecoderLayer", dict(activation="gelu", batch_first=True))]:
        assert repr(getattr(ns, name)(8, 2, 16, **kw)) == repr(getattr(torch.nn, name)(8, 2, 16,
                                                                                       **kw))


def _transformer_errors(lib, ns):
    f64 = lib.float64
    t = ns.Transformer(8, 2, 1, 1, 16, dtype=f64)
    bf = ns.Transformer(8, 2, 1, 1, 16, batch_first=True, dtype=f64)
    return [
        lambda: t(lib.zeros(3, 2, 8, dtype=f64), lib.zeros(3, 3, 8, dtype=f64)),
        lambda: bf(lib.zeros(3, 2, 8, dtype=f64), lib.zeros(2, 2, 8, dtype=f64)),
        lambda: t(lib.zeros(3, 2, 8, dtype=f64), lib.zeros(3, 2, 6, dtype=f64)),
        lambda: ns.TransformerEncoderLayer(8, 2, activation="tanh"),
        lambda: ns.TransformerDecoderLayer(8, 2, activation="swish"),
        lambda: ns.TransformerEncoderLayer(8, 2, dtype=f64)(
            lib.zeros(3, 2, 8, dtype=f64), src_key_padding_mask=lib.zeros(2, 3, dtype=lib.int64)),
    ]


def test_transformer_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fe, ft in zip(_transformer_errors(ember, emods()),
                          _transformer_errors(torch, torch.nn), strict=True):
            raises_same(fe, ft)
