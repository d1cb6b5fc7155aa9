"""Samplers (``torch.utils.data.sampler``): the index streams a DataLoader draws from.

Random samplers draw from ember's generators (NumPy PCG64), so their streams differ from
PyTorch's while following the same rules (a fresh seed from the global generator per epoch
when no ``generator`` is given, ``randperm`` blocks for sampling without replacement).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

import numpy as np

from ..._ops import creation
from ..._ops import random as _rnd

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

_T_co = TypeVar("_T_co", covariant=True)


class Sampler(Generic[_T_co]):
    """Base class: subclasses define ``__iter__`` (and ``__len__`` when the length is known)."""

    def __iter__(self) -> Iterator[_T_co]:
        raise NotImplementedError(f"{type(self).__name__} does not implement __iter__")


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _fresh_generator() -> _rnd.Generator:
    # PyTorch seeds a private generator from the global one on every epoch, so that
    # torch.manual_seed makes shuffling reproducible without sharing the global stream.
    seed = int(_rnd.default_generator._rng.integers(0, 2 ** 63))
    return _rnd.Generator().manual_seed(seed)


class RandomSampler(Sampler[int]):
    """A random permutation, or ``num_samples`` draws with ``replacement``."""

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        gen = _fresh_generator() if self.generator is None else self.generator
        if self.replacement:
            # Drawn in blocks of 32 as PyTorch does, so a partly consumed epoch costs little.
            for _ in range(self.num_samples // 32):
                yield from _rnd.randint(0, n, (32,), generator=gen).tolist()
            yield from _rnd.randint(0, n, (self.num_samples % 32,), generator=gen).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _rnd.randperm(n, generator=gen).tolist()
            yield from _rnd.randperm(n, generator=gen).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in random order."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _rnd.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


def _multinomial(weights: np.ndarray, num_samples: int, replacement: bool, generator) -> list:
    """``torch.multinomial`` on a 1-d float64 weight vector, with PyTorch's checks and messages
    (which differ between its two kernels)."""
    n = weights.shape[0]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if not replacement or num_samples == 1:
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    else:
        for w in weights.tolist():
            if not w >= 0:  # NaN lands here too, as in PyTorch's kernel
                raise RuntimeError(
                    "invalid multinomial distribution (encountering probability entry < 0)")
            if not math.isfinite(w):
                raise RuntimeError("invalid multinomial distribution (encountering probability "
                                   "entry = infinity or NaN)")
    total = weights.sum()
    if total <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _rnd._rng(generator)
    if replacement:
        return rng.choice(n, size=num_samples, p=weights / total).tolist()
    # Exponential-race sampling (PyTorch's method too): the largest w / Exp(1) keys form a
    # weighted sample without replacement; zero weights come last instead of raising.
    keys = weights / rng.exponential(size=n)
    return np.argsort(-keys, kind="stable")[:num_samples].tolist()


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        from ... import float64
        w = creation.as_tensor(weights, dtype=float64)
        if len(w.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        yield from _multinomial(self.weights.numpy(), self.num_samples, self.replacement,
                                self.generator)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups another sampler's indices into lists of ``batch_size``."""

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int,
                 drop_last: bool) -> None:
        if (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        it = iter(self.sampler)
        if self.drop_last:
            yield from (list(b) for b in zip(*[it] * self.batch_size))
            return
        batch = list(itertools.islice(it, self.batch_size))
        while batch:
            yield batch
            batch = list(itertools.islice(it, self.batch_size))

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
