"""One pre-norm transformer block, forward + backward, float32: batch 16, sequence 32, width 64,
2 heads.

The block is token embedding, layer_norm, a fused QKV linear, causal
scaled_dot_product_attention, the output projection and residual, layer_norm, a 4x GELU MLP and
residual; the loss is the mean of the output. Both libraries run the same code through their
``nn.functional`` with the same weights and tokens; the ratio measures ember's per-op overhead
and its attention / embedding / linear kernels against PyTorch's. ``--ops`` adds each op's
forward and backward time, ember against torch, at the shapes the block runs them.
"""
from __future__ import annotations

import numpy as np
from _common import MISSING, header, libraries, report, skipped, timeit
from _common import breakdown as _breakdown

BATCH, SEQ, WIDTH, HEADS, VOCAB = 16, 32, 64, 2, 1000


def make_params(T, rs):
    def w(*shape, scale=0.02):
        return T.from_numpy((rs.standard_normal(shape) * scale).astype(np.float32))

    def z(*shape):
        return T.from_numpy(np.zeros(shape, np.float32))

    def o(*shape):
        return T.from_numpy(np.ones(shape, np.float32))

    p = {"emb": w(VOCAB, WIDTH), "ln1_w": o(WIDTH), "ln1_b": z(WIDTH),
         "qkv_w": w(3 * WIDTH, WIDTH), "qkv_b": z(3 * WIDTH),
         "proj_w": w(WIDTH, WIDTH), "proj_b": z(WIDTH), "ln2_w": o(WIDTH), "ln2_b": z(WIDTH),
         "fc1_w": w(4 * WIDTH, WIDTH), "fc1_b": z(4 * WIDTH),
         "fc2_w": w(WIDTH, 4 * WIDTH), "fc2_b": z(WIDTH)}
    for t in p.values():
        t.requires_grad_()
    return p


def block(T, p, tokens):
    """The transformer block, written once against the torch API."""
    F = T.nn.functional
    b, s = tokens.shape
    x = F.embedding(tokens, p["emb"])
    h = F.layer_norm(x, (WIDTH,), p["ln1_w"], p["ln1_b"])
    qkv = F.linear(h, p["qkv_w"], p["qkv_b"])
    q, k, v = qkv.view(b, s, 3, HEADS, WIDTH // HEADS).permute(2, 0, 3, 1, 4).unbind(0)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    a = a.transpose(1, 2).reshape(b, s, WIDTH)
    x = x + F.linear(a, p["proj_w"], p["proj_b"])
    h = F.layer_norm(x, (WIDTH,), p["ln2_w"], p["ln2_b"])
    h = F.linear(F.gelu(F.linear(h, p["fc1_w"], p["fc1_b"])), p["fc2_w"], p["fc2_b"])
    return x + h


def run(T, tokens_np):
    p = make_params(T, np.random.RandomState(0))
    tokens = T.from_numpy(tokens_np)
    losses = []

    def step():
        for t in p.values():
            t.grad = None
        loss = block(T, p, tokens).mean()
        loss.backward()
        return loss

    def fwd():
        with T.no_grad():
            block(T, p, tokens)

    for _ in range(3):
        losses.append(step().item())
    grad_norm = float(sum(float((t.grad * t.grad).sum()) for t in p.values()) ** 0.5)
    t_step = timeit(step, number=10, repeat=7)
    t_fwd = timeit(fwd, number=10, repeat=7)
    return {"forward + backward": t_step[0], "  same, median": t_step[1],
            "forward only, no_grad": t_fwd[0]}, losses, grad_norm


def main():
    header(f"bench_transformer: one block, batch {BATCH}, seq {SEQ}, width {WIDTH}, {HEADS} "
           "heads, float32, time per step (best of 7 x 10)")
    tokens_np = np.random.RandomState(1).randint(0, VOCAB, (BATCH, SEQ)).astype(np.int64)
    res, losses, norms = {}, {}, {}
    for name, T in libraries():
        try:
            res[name], losses[name], norms[name] = run(T, tokens_np)
        except MISSING as e:
            skipped(name, e)
    labels = next(iter(res.values())).keys() if res else ()
    for label in labels:
        report(label, res.get("ember", {}).get(label), res.get("torch", {}).get(label))
    for name in losses:
        print(f"  {name}: loss {losses[name][0]:.6f}, gradient norm {norms[name]:.6f}")


def op_cases(T, rs):
    """(label, forward on tensors, input arrays, which need grad) per op of the block, at the
    shapes the step runs them."""
    F = T.nn.functional
    b, s, w, h = BATCH, SEQ, WIDTH, HEADS

    def a(*shape):
        return (rs.standard_normal(shape) * 0.5).astype(np.float32)

    return [
        ("embedding", lambda t: F.embedding(t[1], t[0]),
         [a(VOCAB, w), rs.randint(0, VOCAB, (b, s)).astype(np.int64)], [True, False]),
        ("layer_norm", lambda t: F.layer_norm(t[0], (w,), t[1], t[2]),
         [a(b, s, w), a(w) + 1, a(w)], [True, True, True]),
        ("linear qkv", lambda t: F.linear(*t), [a(b, s, w), a(3 * w, w), a(3 * w)],
         [True, True, True]),
        ("view/permute/unbind", lambda t: t[0].view(b, s, 3, h, w // h).permute(
            2, 0, 3, 1, 4).unbind(0)[1], [a(b, s, 3 * w)], [True]),
        ("sdpa causal", lambda t: F.scaled_dot_product_attention(*t, is_causal=True),
         [a(b, h, s, w // h), a(b, h, s, w // h), a(b, h, s, w // h)], [True, True, True]),
        ("transpose/reshape", lambda t: t[0].transpose(1, 2).reshape(b, s, w),
         [a(b, h, s, w // h)], [True]),
        ("linear fc1", lambda t: F.linear(*t), [a(b, s, w), a(4 * w, w), a(4 * w)],
         [True, True, True]),
        ("gelu", lambda t: F.gelu(t[0]), [a(b, s, 4 * w)], [True]),
        ("linear fc2", lambda t: F.linear(*t), [a(b, s, 4 * w), a(w, 4 * w), a(w)],
         [True, True, True]),
        ("residual add", lambda t: t[0] + t[1], [a(b, s, w), a(b, s, w)], [True, True]),
    ]


def breakdown():
    _breakdown("op", op_cases, 20, "us")


if __name__ == "__main__":
    import sys
    main()
    if "--ops" in sys.argv[1:]:
        breakdown()
