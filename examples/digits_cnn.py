"""Train a small CNN on scikit-learn's 8x8 handwritten digits, written as an ordinary PyTorch
training script: a Dataset and DataLoader, an ``nn.Module``, AdamW with a cosine learning-rate
schedule, train/eval modes, evaluation under ``no_grad``, a checkpoint saved and reloaded, a
progress bar (tqdm) and a plot of loss and accuracy per epoch (matplotlib, PNG).

The data ships inside scikit-learn (1,797 images), so nothing is downloaded.

    python examples/digits_cnn.py            # ember
    python examples/digits_cnn.py --torch    # the same script on PyTorch, for comparison
"""
from __future__ import annotations

import os
import sys
import time

# The arrays here are small: one BLAS thread is fastest, and a multi-threaded BLAS on a busy
# machine can be many times slower (its threads wait on each other). Set before NumPy.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

if "--torch" in sys.argv:
    import torch
    torch.set_num_threads(1)
else:
    try:
        import ember as torch
    except ImportError:  # run from a checkout without installing
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
        import ember as torch

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from tqdm import tqdm  # noqa: E402

nn = torch.nn
F = torch.nn.functional
DataLoader, Dataset = torch.utils.data.DataLoader, torch.utils.data.Dataset

EPOCHS = 12
BATCH = 32


class Digits(Dataset):
    """The 8x8 digit images as 1x8x8 float tensors scaled to [0, 1], with their labels."""

    def __init__(self, images: np.ndarray, labels: np.ndarray) -> None:
        self.x = torch.tensor(images.reshape(-1, 1, 8, 8) / 16.0, dtype=torch.float32)
        self.y = torch.tensor(labels, dtype=torch.int64)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),                                   # 16 x 4 x 4
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d(2),                                   # 32 x 2 x 2
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(32 * 2 * 2, 64), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(64, 10),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def evaluate(model: nn.Module, loader) -> tuple[float, float]:
    """Mean loss and accuracy over ``loader``, in eval mode and without recording a graph."""
    model.eval()
    total, correct, loss = 0, 0, 0.0
    with torch.no_grad():
        for x, y in loader:
            out = model(x)
            loss += F.cross_entropy(out, y, reduction="sum").item()
            correct += (out.argmax(1) == y).sum().item()
            total += len(y)
    return loss / total, correct / total


def main() -> int:
    torch.manual_seed(0)
    digits = load_digits()
    order = np.random.default_rng(0).permutation(len(digits.target))
    test_idx, train_idx = order[:360], order[360:]
    train = Digits(digits.data[train_idx], digits.target[train_idx])
    test = Digits(digits.data[test_idx], digits.target[test_idx])
    train_loader = DataLoader(train, batch_size=BATCH, shuffle=True)
    test_loader = DataLoader(test, batch_size=256)

    model = Net()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=EPOCHS * len(train_loader))
    history = {"train loss": [], "test loss": [], "test accuracy": []}
    t0 = time.perf_counter()
    for epoch in range(EPOCHS):
        model.train()
        running, seen = 0.0, 0
        bar = tqdm(train_loader, desc=f"epoch {epoch + 1:2d}/{EPOCHS}", leave=False,
                   disable=not sys.stderr.isatty())
        for x, y in bar:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            sched.step()
            running += loss.item() * len(y)
            seen += len(y)
            bar.set_postfix(loss=f"{running / seen:.3f}")
        test_loss, acc = evaluate(model, test_loader)
        history["train loss"].append(running / seen)
        history["test loss"].append(test_loss)
        history["test accuracy"].append(acc)
        print(f"epoch {epoch + 1:2d}: train loss {running / seen:.4f}  "
              f"test loss {test_loss:.4f}  test accuracy {acc:.2%}", flush=True)
    seconds = time.perf_counter() - t0

    out_dir = os.path.abspath("demo_out")
    os.makedirs(out_dir, exist_ok=True)
    ckpt = os.path.join(out_dir, "digits_cnn.pt")
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                "epoch": EPOCHS}, ckpt)
    restored = Net()
    restored.load_state_dict(torch.load(ckpt)["model"])
    _, acc_restored = evaluate(restored, test_loader)

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    epochs = range(1, EPOCHS + 1)
    ax1.plot(epochs, history["train loss"], label="train")
    ax1.plot(epochs, history["test loss"], label="test")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("cross-entropy")
    ax1.legend()
    ax2.plot(epochs, [100 * a for a in history["test accuracy"]])
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("test accuracy (%)")
    fig.tight_layout()
    plot = os.path.join(out_dir, "digits_cnn.png")
    fig.savefig(plot, dpi=100)

    final = history["test accuracy"][-1]
    print(f"\ntrained in {seconds:.1f} s; test accuracy {final:.2%} "
          f"(reloaded checkpoint: {acc_restored:.2%})")
    print(f"checkpoint: {ckpt}\nplot:       {plot}")
    return 0 if final >= 0.97 and acc_restored == final else 1


if __name__ == "__main__":
    sys.exit(main())
