"""Training loops written the ordinary PyTorch way (modules, optimizers, DataLoader), run with
both libraries from the same initial weights and data.

1. MLP 784-1024-1024-10 at batch 256, float32: three nn.Linear layers called through their
   modules (F.linear inside), F.relu, F.cross_entropy, torch.optim.SGD (momentum 0.9); one step
   is zero_grad, forward, loss, backward, optimizer step. The matrix products dominate, so the
   ratio shows what ember adds on top (gradient layout, accumulation, optimizer loop). The
   same step is also timed written as ``x @ w.t() + b``.
2. A small-model epoch: nn.Sequential(Linear 64-128, ReLU, Linear 128-128, ReLU, Linear
   128-10), Adam, nn.CrossEntropyLoss, DataLoader over a TensorDataset (batch 32, shuffled),
   20 steps. The arrays are tiny, so this measures per-call overhead: module calls, the
   optimizer's step, collation.
3. CNN step at batch 64 of 1x28x28: Conv2d 1->32 3x3, BatchNorm2d, ReLU, MaxPool2d,
   Conv2d 32->64 3x3, BatchNorm2d, ReLU, MaxPool2d, Flatten, Linear 1600->10; AdamW.
"""
from __future__ import annotations

import numpy as np
from _common import MISSING, header, libraries, report, skipped, timeit

MLP_SIZES = (784, 1024, 1024, 10)
MLP_BATCH = 256
SMALL_SIZES = (64, 128, 128, 10)
SMALL_BATCH = 32
SMALL_STEPS = 20
CNN_BATCH = 64


def load_weights(T, model, seed: int) -> None:
    """Overwrite every parameter with the same seeded NumPy values in both libraries."""
    rs = np.random.RandomState(seed)
    with T.no_grad():
        for p in model.parameters():
            fan_in = int(np.prod(p.shape[1:])) if p.dim() > 1 else p.shape[0]
            a = rs.standard_normal(tuple(p.shape)) * np.sqrt(1.0 / fan_in)
            p.copy_(T.from_numpy(a.astype(np.float32)))


def mlp_model(T):
    nn, F = T.nn, T.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            a, b, c, d = MLP_SIZES
            self.fc1 = nn.Linear(a, b)
            self.fc2 = nn.Linear(b, c)
            self.fc3 = nn.Linear(c, d)

        def forward(self, x):
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))

    model = MLP()
    load_weights(T, model, 0)
    return model


def run_mlp(T, data):
    x_np, y_np = data
    F = T.nn.functional
    model = mlp_model(T)
    opt = T.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = T.from_numpy(x_np), T.from_numpy(y_np)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    def step_xwt():
        # the same step written as nn.Linear's formula: the weight's gradient comes back
        # through t(), and must still arrive in the weight's own layout
        opt.zero_grad()
        h = x
        for i, lin in enumerate((model.fc1, model.fc2, model.fc3)):
            h = h @ lin.weight.t() + lin.bias
            h = F.relu(h) if i < 2 else h
        loss = F.cross_entropy(h, y)
        loss.backward()
        opt.step()
        return loss

    losses = [step().item() for _ in range(3)]
    t = timeit(step, number=3, repeat=5)
    t2 = timeit(step_xwt, number=3, repeat=5)
    return {"MLP step (nn.Linear, CE, SGD)": t[0], "  same, median": t[1],
            "MLP step written x @ w.t() + b": t2[0]}, losses


def run_small(T, data):
    x_np, y_np = data
    nn = T.nn
    a, b, c, d = SMALL_SIZES
    model = nn.Sequential(nn.Linear(a, b), nn.ReLU(), nn.Linear(b, c), nn.ReLU(),
                          nn.Linear(c, d))
    load_weights(T, model, 1)
    opt = T.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    ds = T.utils.data.TensorDataset(T.from_numpy(x_np), T.from_numpy(y_np))
    loader = T.utils.data.DataLoader(ds, batch_size=SMALL_BATCH, shuffle=True)
    last = []

    def epoch():
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
        last.append(loss.item())

    epoch()
    t = timeit(epoch, number=1, repeat=15)
    return {f"small epoch ({SMALL_STEPS} steps, Adam, DataLoader)": t[0],
            "  same, median": t[1]}, last[:3]


def cnn_model(T):
    nn = T.nn
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(1600, 10))
    load_weights(T, model, 2)
    return model


def run_cnn(T, data):
    x_np, y_np = data
    F = T.nn.functional
    model = cnn_model(T)
    opt = T.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = T.from_numpy(x_np), T.from_numpy(y_np)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    losses = [step().item() for _ in range(3)]
    t = timeit(step, number=3, repeat=5)
    return {"CNN step (Conv2d, BatchNorm2d, AdamW)": t[0], "  same, median": t[1]}, losses


def workloads():
    rs = np.random.RandomState(1)
    mlp = (rs.standard_normal((MLP_BATCH, MLP_SIZES[0])).astype(np.float32),
           rs.randint(0, MLP_SIZES[-1], MLP_BATCH).astype(np.int64))
    n = SMALL_BATCH * SMALL_STEPS
    small = (rs.standard_normal((n, SMALL_SIZES[0])).astype(np.float32),
             rs.randint(0, SMALL_SIZES[-1], n).astype(np.int64))
    cnn = (rs.standard_normal((CNN_BATCH, 1, 28, 28)).astype(np.float32),
           rs.randint(0, 10, CNN_BATCH).astype(np.int64))
    return [("mlp", run_mlp, mlp), ("small", run_small, small), ("cnn", run_cnn, cnn)]


def main():
    header("bench_training: nn.Module + optim + DataLoader training loops (best of 5-15 runs)")
    for name, fn, data in workloads():
        res, losses = {}, {}
        for lib, T in libraries():
            try:
                res[lib], losses[lib] = fn(T, data)
            except MISSING as e:
                skipped(f"{name} ({lib})", e)
        labels = next(iter(res.values())).keys() if res else ()
        for label in labels:
            report(label, res.get("ember", {}).get(label), res.get("torch", {}).get(label))
        for lib, ls in losses.items():
            print(f"    {lib} losses: " + ", ".join(f"{v:.6f}" for v in ls))


if __name__ == "__main__":
    main()
