"""layer_norm, batch_norm, group_norm, rms_norm and gelu/silu at typical layer shapes, float32.

Each case runs forward, then backward (with respect to the input and the affine parameters)
from one fixed upstream gradient; both libraries run the very same code on the same data.
Shapes: a transformer block's activations (batch 8 x 256 tokens x 768 features) and a CNN
block's (batch 32 x 64 channels x 28 x 28). PyTorch runs fused C++ kernels here; ember's are a
few NumPy passes each, so the ratio measures how close whole-array NumPy gets.
"""
from __future__ import annotations

import numpy as np
from _common import MISSING, header, libraries, report, skipped, timeit

SEQ = (8, 256, 768)
IMG = (32, 64, 28, 28)


def cases(T):
    F = T.nn.functional
    return {
        "layer_norm 8x256x768": (SEQ, lambda x, w, b: F.layer_norm(x, (768,), w, b), 768),
        "rms_norm 8x256x768": (SEQ, lambda x, w, b: F.rms_norm(x, (768,), w), -768),
        "gelu 8x256x768": (SEQ, lambda x, w, b: F.gelu(x), None),
        "gelu tanh 8x256x768": (SEQ, lambda x, w, b: F.gelu(x, approximate="tanh"), None),
        "silu 8x256x768": (SEQ, lambda x, w, b: F.silu(x), None),
        "batch_norm train 32x64x28x28": (IMG, lambda x, w, b: F.batch_norm(
            x, None, None, w, b, True), 64),
        "batch_norm eval 32x64x28x28": (IMG, lambda x, w, b: F.batch_norm(
            x, T.zeros(64), T.ones(64), w, b, False), 64),
        "group_norm 32x64x28x28": (IMG, lambda x, w, b: F.group_norm(x, 8, w, b), 64),
    }


def run(T, arrays):
    out = {}
    for label, (shape, fn, c) in cases(T).items():
        x = T.from_numpy(arrays[shape][0]).requires_grad_()
        g = T.from_numpy(arrays[shape][1])
        w = b = None
        if c is not None:   # c < 0: a weight and no bias
            w = T.from_numpy(np.linspace(0.5, 1.5, abs(c), dtype=np.float32)).requires_grad_()
        if c is not None and c > 0:
            b = T.from_numpy(np.linspace(-0.2, 0.2, c, dtype=np.float32)).requires_grad_()
        leaves = [t for t in (x, w, b) if t is not None]

        def fwd():
            with T.no_grad():
                fn(x, w, b)

        def fwd_bwd():
            T.autograd.grad(fn(x, w, b), leaves, g)

        out[label + " forward"] = timeit(fwd, number=3, repeat=5)[0]
        out[label + " fwd+bwd"] = timeit(fwd_bwd, number=3, repeat=5)[0]
    return out


def main():
    header("bench_norm_act: norms and activations, float32, forward and forward+backward "
           "(best of 5 x 3)")
    rs = np.random.RandomState(0)
    arrays = {s: (rs.standard_normal(s).astype(np.float32), rs.standard_normal(s).astype(
        np.float32)) for s in (SEQ, IMG)}
    res = {}
    for name, T in libraries():
        try:
            res[name] = run(T, arrays)
        except MISSING as e:
            skipped(name, e)
    labels = next(iter(res.values())).keys() if res else ()
    for label in labels:
        report(label, res.get("ember", {}).get(label), res.get("torch", {}).get(label))


if __name__ == "__main__":
    main()
