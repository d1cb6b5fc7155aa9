"""Train a small multilayer perceptron with ember, written exactly as one would with PyTorch.

The data set is made here: three interleaved 2-D spirals (one class each), split into training
and test points. The network is plain tensors: weights created with requires_grad=True, a
forward with ``@`` and relu, a cross-entropy from log_softmax, ``loss.backward()``, and a
gradient-descent update under ``no_grad``. Seeded and deterministic.

    python examples/mlp_demo.py            # ember
    python examples/mlp_demo.py --torch    # the same script on PyTorch, for comparison
"""
from __future__ import annotations

import itertools
import math
import os
import sys
import time

# The matrices here are tiny (450 x 64): one BLAS thread is fastest, and a multi-threaded BLAS
# on a busy machine can be many times slower (its threads wait on each other). Set before NumPy.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

if "--torch" in sys.argv:
    import torch
else:
    try:
        import ember as torch
    except ImportError:  # run from a checkout without installing: use src/
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))), "src"))
        import ember as torch

CLASSES = 3
POINTS_PER_CLASS = 200
TEST_FRACTION = 0.25
HIDDEN = 64
EPOCHS = 1000
LR = 0.1
PRINT_EVERY = 100


def spirals(seed: int = 0):
    """Points on three noisy spiral arms (radius 0.05..1, a 4-radian sweep each), labels 0..2."""
    rs = np.random.RandomState(seed)
    xs, ys = [], []
    for k in range(CLASSES):
        r = np.linspace(0.05, 1.0, POINTS_PER_CLASS)
        theta = np.linspace(k * 4.0, (k + 1) * 4.0, POINTS_PER_CLASS)
        theta = theta + rs.standard_normal(POINTS_PER_CLASS) * 0.3
        xs.append(np.stack([r * np.sin(theta), r * np.cos(theta)], axis=1))
        ys.append(np.full(POINTS_PER_CLASS, k))
    x = np.concatenate(xs).astype(np.float32)
    y = np.concatenate(ys).astype(np.int64)
    order = rs.permutation(len(y))
    n_test = int(len(y) * TEST_FRACTION)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def init_params():
    """He-initialised weights and zero biases of a 2-HIDDEN-HIDDEN-3 network."""
    sizes = [2, HIDDEN, HIDDEN, CLASSES]
    params = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        w = torch.randn(fan_in, fan_out) * math.sqrt(2.0 / fan_in)
        params.append(w.requires_grad_())
        params.append(torch.zeros(fan_out, requires_grad=True))
    return params


def forward(params, x):
    w1, b1, w2, b2, w3, b3 = params
    h = (x @ w1 + b1).relu()
    h = (h @ w2 + b2).relu()
    return h @ w3 + b3


def cross_entropy(logits, onehot):
    """Mean negative log-likelihood; log_softmax is the numerically stable log of softmax."""
    return -(logits.log_softmax(dim=1) * onehot).sum() / logits.shape[0]


def accuracy(logits, labels) -> float:
    return (logits.argmax(dim=1) == labels).float().mean().item()


def main():
    torch.manual_seed(0)
    x_tr, y_tr, x_te, y_te = spirals()
    x_train, y_train = torch.from_numpy(x_tr), torch.from_numpy(y_tr)
    x_test, y_test = torch.from_numpy(x_te), torch.from_numpy(y_te)
    onehot = torch.from_numpy(np.eye(CLASSES, dtype=np.float32)[y_tr])
    params = init_params()
    lib = "torch" if "--torch" in sys.argv else "ember"
    print(f"{lib}: 3-class spiral, {len(y_tr)} training / {len(y_te)} test points; MLP "
          f"2-{HIDDEN}-{HIDDEN}-{CLASSES}, full-batch gradient descent, lr {LR}")

    start = time.perf_counter()
    for epoch in range(1, EPOCHS + 1):
        logits = forward(params, x_train)
        loss = cross_entropy(logits, onehot)
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        if epoch % PRINT_EVERY == 0 or epoch == 1:
            print(f"epoch {epoch:5d}  loss {loss.item():.4f}  "
                  f"train accuracy {accuracy(logits, y_train):6.1%}")
    elapsed = time.perf_counter() - start

    with torch.no_grad():
        test_acc = accuracy(forward(params, x_test), y_test)
    print(f"test accuracy {test_acc:.1%}  ({EPOCHS} epochs in {elapsed:.1f} s)")
    return test_acc


if __name__ == "__main__":
    main()
