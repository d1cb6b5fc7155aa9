"""nn.functional scaled_dot_product_attention and multi_head_attention_forward against
PyTorch: OpInfo samples (float64 and float32; dropout samples with the same keep mask on both
sides), the kernel PyTorch's CPU dispatch picks (its node), masks, grouped-query heads, double
backward and error messages."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from ember._ops import nn_attention
from helpers import assert_same, both, check_op, raises_same
from opinfo import check_sample, opinfos

DTYPES = [torch.float64, torch.float32]
RNG = np.random.default_rng(11)
FLASH = "ScaledDotProductFlashAttentionForCpuBackward0"


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def keep_mask(shape, p):
    """A dropout keep mask that depends only on the shape, so both libraries can use it."""
    rng = np.random.default_rng(sum(shape) * 7 + len(shape))
    return rng.random(tuple(shape)) < 1 - p


@pytest.fixture
def same_dropout(monkeypatch):
    """ember draws its dropout masks from ``keep_mask``; torch's F.dropout applies it too."""
    monkeypatch.setattr(nn_attention, "_keep_mask", lambda shape, p, like: keep_mask(shape, p))

    def torch_dropout(x, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return x
        return x * torch.from_numpy(keep_mask(tuple(x.shape), p)).to(x.dtype) / (1 - p)
    monkeypatch.setattr(TF, "dropout", torch_dropout)


def _tol(dtype):
    # float32 logits of OpInfo's samples reach ~100: softmax gradients agree to ~1e-5
    return (1e-3, 1e-4) if dtype == torch.float32 else (None, None)


# ---- OpInfo ---------------------------------------------------------------------------------

class _MathWithMask:
    """scaled_dot_product_attention with dropout, in torch, through its math kernel given the
    keep mask (PyTorch's own testing hook), so the two libraries drop the same weights."""

    def __init__(self, info):
        self.name, self.supports_autograd, self.supports_forward_ad = info.name, True, False

    @staticmethod
    def op(q, k, v, dropout_p=0.0, is_causal=False, **kw):
        shape = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2]) + (q.shape[-2], k.shape[-2])
        m = torch.from_numpy(keep_mask(tuple(shape), dropout_p))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.ops.aten._scaled_dot_product_attention_math(
                q, k, v, None, dropout_p, is_causal, m)[0]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_opinfo_sdpa(dtype, same_dropout):
    info, = opinfos("nn.functional.scaled_dot_product_attention")
    rtol, atol = _tol(dtype)
    n = 0
    for sample in info.sample_inputs("cpu", dtype, requires_grad=True):
        use = _MathWithMask(info) if sample.kwargs.get("dropout_p", 0) > 0 else info
        check_sample(use, sample, fe=EF.scaled_dot_product_attention, rtol=rtol, atol=atol)
        n += 1
    assert n == 25


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_opinfo_mha(dtype, same_dropout):
    info, = opinfos("nn.functional.multi_head_attention_forward")
    rtol, atol = _tol(dtype)
    for sample in info.sample_inputs("cpu", dtype, requires_grad=True):
        check_sample(info, sample, rtol=rtol, atol=atol)


# ---- scaled_dot_product_attention -------------------------------------------------------------

def sdpa_pair(**kw):
    return (lambda q, k, v, *m: EF.scaled_dot_product_attention(q, k, v, *m, **kw),
            lambda q, k, v, *m: TF.scaled_dot_product_attention(q, k, v, *m, **kw))


@pytest.mark.parametrize("shapes,kw", [
    (((2, 2, 5, 4), (2, 2, 6, 4), (2, 2, 6, 4)), {}),
    (((2, 2, 5, 4), (2, 2, 6, 4), (2, 2, 6, 4)), {"is_causal": True}),
    (((2, 2, 5, 4), (2, 2, 6, 4), (2, 2, 6, 4)), {"scale": 0.3}),
    (((2, 2, 5, 4), (2, 2, 6, 4), (2, 2, 6, 4)), {"scale": -0.3}),
    (((2, 4, 5, 4), (2, 2, 6, 4), (2, 2, 6, 4)), {"enable_gqa": True}),
    (((2, 2, 5, 4), (2, 1, 6, 4), (2, 1, 6, 4)), {}),
    (((2, 2, 5, 4), (2, 2, 6, 4), (2, 2, 6, 3)), {}),
    (((2, 5, 4), (2, 6, 4), (2, 6, 4)), {"is_causal": True}),
    (((5, 4), (6, 4), (6, 4)), {}), (((1, 2, 2, 5, 4), (1, 2, 2, 6, 4), (1, 2, 2, 6, 4)), {}),
])
def test_sdpa(shapes, kw):
    """Flash-kernel inputs (4-D, equal heads and head dims) get PyTorch's fused node; the others
    its math composite's. PyTorch has no forward AD here and no double backward for its flash
    kernel: ember's are checked numerically for those."""
    arrays = [rand(*s) for s in shapes]
    fe, ft = sdpa_pair(**kw)
    flash = len(shapes[0]) == 4 and shapes[1][1] * (2 if kw.get("enable_gqa") else 1) == \
        shapes[0][1] and shapes[2][-1] == shapes[0][-1]
    check_op(fe, ft, *arrays, fwd=False, double=not flash)
    out = fe(*[ember.from_numpy(a).requires_grad_() for a in arrays])
    assert (out.grad_fn.name() == FLASH) == flash
    small = [ember.from_numpy(rand(*s[:-2], 3, 2)).requires_grad_() for s in shapes]
    assert ember.autograd.gradcheck(fe, small, check_forward_ad=True, fast_mode=True)
    if flash:
        assert ember.autograd.gradgradcheck(fe, small, fast_mode=True)


@pytest.mark.parametrize("mask", ["bool", "float", "bool4d", "float_grad", "float3d", "row"])
def test_sdpa_masks(mask):
    q, k, v = rand(2, 2, 5, 4), rand(2, 2, 6, 4), rand(2, 2, 6, 4)
    fe, ft = sdpa_pair()
    if mask.startswith("bool"):
        m = RNG.random((2, 1, 5, 6) if mask == "bool4d" else (5, 6)) > 0.3
        m[..., 2, :] = False    # a row masked entirely gives zeros
        check_op(lambda a, b, c: fe(a, b, c, ember.from_numpy(m)),
                 lambda a, b, c: ft(a, b, c, torch.from_numpy(m)), q, k, v, fwd=False,
                 double=False)
        return
    m = rand(*{"float3d": (2, 5, 6), "row": (1, 6)}.get(mask, (5, 6)))
    if mask == "float_grad":   # a mask that requires grad takes PyTorch's math path
        check_op(fe, ft, q, k, v, m, fwd=False)
    else:
        check_op(lambda a, b, c: fe(a, b, c, ember.from_numpy(m)),
                 lambda a, b, c: ft(a, b, c, torch.from_numpy(m)), q, k, v, fwd=False,
                 double=mask == "float3d")


def test_sdpa_causal_with_mask_on_flash_path():
    q, k, v = rand(1, 2, 4, 3), rand(1, 2, 4, 3), rand(1, 2, 4, 3)
    m = RNG.random((4, 4)) > 0.2
    fe, ft = sdpa_pair(is_causal=True)
    check_op(lambda a, b, c: fe(a, b, c, ember.from_numpy(m)),
             lambda a, b, c: ft(a, b, c, torch.from_numpy(m)), q, k, v, fwd=False, double=False)


def test_sdpa_float32_and_half():
    arrs = [rand(2, 2, 5, 8, dtype=np.float32) for _ in range(3)]
    check_op(*sdpa_pair(is_causal=True), *arrs, fwd=False, double=False, rtol=1e-4, atol=1e-5)
    half = [a.astype(np.float16) for a in arrs]
    assert_same(EF.scaled_dot_product_attention(*[ember.from_numpy(a) for a in half]),
                TF.scaled_dot_product_attention(*[torch.from_numpy(a) for a in half]))


def test_sdpa_dropout_statistics():
    """Real dropout (ember's generator): kept weights scaled by 1/(1-p), a consistent
    gradient, and about p of the weights dropped."""
    ember.manual_seed(0)
    q = ember.from_numpy(rand(4, 2, 16, 8)).requires_grad_()
    v = ember.eye(16, dtype=ember.float64).expand(4, 2, 16, 16)
    attn = EF.scaled_dot_product_attention(q, q, v, dropout_p=0.25)
    plain = EF.scaled_dot_product_attention(q, q, v)
    kept = attn.detach().numpy() != 0
    assert abs(1 - kept.mean() - 0.25) < 0.05
    np.testing.assert_allclose(attn.detach().numpy()[kept], plain.detach().numpy()[kept] / 0.75)
    attn.sum().backward()
    assert q.grad is not None and np.isfinite(q.grad.numpy()).all()


@pytest.mark.parametrize("case", ["dtype", "dims", "mask_dtype", "causal_and_mask", "gqa",
                                  "gqa_heads", "shapes"])
def test_sdpa_errors(case):
    def call(T):
        q, k, v = (T.from_numpy(rand(2, 2, 3, 4)) for _ in range(3))
        kw = {}
        if case == "dtype":
            k = k.float()
        elif case == "dims":
            q, k, v = q[0, 0, 0], k[0, 0, 0], v[0, 0, 0]
        elif case == "mask_dtype":
            kw["attn_mask"] = T.ones(3, 3, dtype=T.int64)
        elif case == "causal_and_mask":
            q, k, v = q[0], k[0], v[0]
            kw = {"attn_mask": T.ones(3, 3, dtype=T.bool), "is_causal": True}
        elif case == "gqa":
            k = v = T.from_numpy(rand(2, 3, 3, 4))
            kw["enable_gqa"] = True
        elif case == "gqa_heads":
            k = v = T.from_numpy(rand(2, 3, 3, 4))
        else:
            k = T.from_numpy(rand(2, 2, 3, 5))
        return lambda: T.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
    raises_same(call(ember), call(torch))


# ---- multi_head_attention_forward -------------------------------------------------------------

E, H, L, S, B = 6, 2, 4, 5, 3


def _mha_params(separate=False, bias=True, bias_kv=False):
    p = {"out_w": rand(E, E), "out_b": rand(E) if bias else None}
    if separate:
        p.update(q_w=rand(E, E), k_w=rand(E, 4), v_w=rand(E, 5))
    else:
        p["in_w"] = rand(3 * E, E)
    p["in_b"] = rand(3 * E) if bias else None
    if bias_kv:
        p.update(bias_k=rand(1, 1, E), bias_v=rand(1, 1, E))
    return p


def _mha(T, p, q, k, v, **kw):
    t = {n: None if a is None else T.from_numpy(a.copy()).requires_grad_()
         for n, a in p.items()}
    ins = [T.from_numpy(a.copy()).requires_grad_() for a in (q, k, v)]
    sep = "q_w" in p
    out = T.nn.functional.multi_head_attention_forward(
        *ins, E, H, t.get("in_w"), t["in_b"], t.get("bias_k"), t.get("bias_v"),
        kw.pop("add_zero_attn", False), kw.pop("dropout_p", 0.0), t["out_w"], t["out_b"],
        use_separate_proj_weight=sep, q_proj_weight=t.get("q_w"), k_proj_weight=t.get("k_w"),
        v_proj_weight=t.get("v_w"), **kw)
    leaves = ins + [x for x in t.values() if x is not None]
    o = [x for x in out if x is not None]
    grads = T.autograd.grad(sum((x * x).sum() for x in o), leaves, allow_unused=True)
    return out, grads, [x.grad_fn for x in o]


@pytest.mark.parametrize("cfg", [
    {}, {"need_weights": False}, {"average_attn_weights": False}, {"bias": False},
    {"separate": True}, {"bias_kv": True}, {"add_zero_attn": True},
    {"key_padding_mask": "bool"}, {"key_padding_mask": "float"}, {"attn_mask": "2d"},
    {"attn_mask": "3d", "need_weights": False}, {"attn_mask": "bool", "bias_kv": True},
    {"attn_mask": "causal", "is_causal": True, "need_weights": False},
    {"unbatched": True}, {"unbatched": True, "need_weights": False},
    {"dropout_p": 0.3}, {"dropout_p": 0.3, "training": False},
    {"self_attention": True}, {"kv_same": True},
])
def test_mha(cfg, same_dropout):
    cfg = dict(cfg)
    p = _mha_params(cfg.pop("separate", False), cfg.pop("bias", True), cfg.pop("bias_kv", False))
    batched = not cfg.pop("unbatched", False)
    lead = (B,) if batched else ()
    q = rand(L, *lead, E)
    k = rand(S, *lead, 4 if "k_w" in p else E)
    v = rand(S, *lead, 5 if "v_w" in p else E)
    if cfg.pop("self_attention", False):
        k = v = q
    elif cfg.pop("kv_same", False):
        v = k
    kpm, am = cfg.pop("key_padding_mask", None), cfg.pop("attn_mask", None)
    pad = np.zeros((B, S), bool)
    pad[:, -1] = True
    masks = {"2d": rand(L, S), "3d": rand(B * H, L, S), "bool": RNG.random((L, S)) > 0.8,
             "causal": np.triu(np.full((L, S), -np.inf), 1)}

    def f(T):
        kw = dict(cfg)
        if kpm is not None:
            kw["key_padding_mask"] = T.from_numpy(pad if kpm == "bool" else
                                                  np.where(pad, -1e4, 0.0))
        if am is not None:
            kw["attn_mask"] = T.from_numpy(masks[am].copy())
        if q is k and k is v:
            qq = T.from_numpy(q.copy()).requires_grad_()
            out = T.nn.functional.multi_head_attention_forward(
                qq, qq, qq, E, H, T.from_numpy(p["in_w"].copy()), T.from_numpy(p["in_b"].copy()),
                None, None, False, 0.0, T.from_numpy(p["out_w"].copy()),
                T.from_numpy(p["out_b"].copy()), **kw)
            return out, T.autograd.grad(out[0].sum(), qq), out[0].grad_fn
        return _mha(T, p, q, k, v, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(f)


@pytest.mark.parametrize("case", ["query_dim", "kv_dim", "embed", "heads", "kv_shape",
                                  "mask_shape", "mask_dim", "kpm_shape", "causal_no_mask",
                                  "bias_k_only", "sep_weight", "no_in_proj", "mask_dtype",
                                  "unbatched_kpm"])
def test_mha_errors(case):
    def call(T):
        q, k, v = (T.from_numpy(rand(L, B, E)) for _ in range(3))
        args = dict(embed=E, heads=H, in_w=T.from_numpy(rand(3 * E, E)), bias_k=None,
                    sep=False, q_w=None)
        kw = {}
        if case == "query_dim":
            q = q[None]
        elif case == "kv_dim":
            k = k[0]
        elif case == "embed":
            args["embed"] = E + 1
        elif case == "heads":
            args["heads"] = 4
        elif case == "kv_shape":
            v = v[:2]
        elif case == "mask_shape":
            kw["attn_mask"] = T.zeros(L, S + 1)
        elif case == "mask_dim":
            kw["attn_mask"] = T.zeros(1, 1, L, L)
        elif case == "kpm_shape":
            kw["key_padding_mask"] = T.zeros(B, L + 1, dtype=T.bool)
        elif case == "causal_no_mask":
            kw["is_causal"] = True
        elif case == "bias_k_only":
            args["bias_k"] = T.zeros(1, 1, E)
        elif case == "sep_weight":
            args.update(sep=True, q_w=T.zeros(E, E + 1))
        elif case == "no_in_proj":
            args["in_w"] = None
        elif case == "mask_dtype":
            kw["attn_mask"] = T.zeros(L, L, dtype=T.int64)
        else:
            q, k, v = q[:, 0], k[:, 0], v[:, 0]
            kw["key_padding_mask"] = T.zeros(B, L, dtype=T.bool)
        zeros = T.zeros(E, E), T.zeros(E, 4)
        return lambda: T.nn.functional.multi_head_attention_forward(
            q, k, v, args["embed"], args["heads"], args["in_w"], None, args["bias_k"], None,
            False, 0.0, T.from_numpy(rand(E, E)), None, use_separate_proj_weight=args["sep"],
            q_proj_weight=args["q_w"], k_proj_weight=zeros[0], v_proj_weight=zeros[1], **kw)
    raises_same(call(ember), call(torch))
