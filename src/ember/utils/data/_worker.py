"""Worker-process side of the DataLoader (``torch.utils.data._utils.worker`` and ``fetch``).

Each worker gets (task index, sampler output) pairs on its own index queue, fetches and
collates the batch, and puts (task index, batch) on the shared result queue. Exceptions travel
back wrapped, and the main process re-raises them with PyTorch's "Caught X in DataLoader
worker process N" text.
"""
from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ._collate import tensor_dataset_batch

# How often blocked queue reads wake up to check that the other side is still alive.
# (PyTorch uses 5 s plus a SIGCHLD handler; a short poll gives the same promptness.)
MP_STATUS_CHECK_INTERVAL = 0.2


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        cls = _MapDatasetFetcher if kind == _DatasetKind.Map else _IterableDatasetFetcher
        return cls(dataset, auto_collation, collate_fn, drop_last)


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems:
            data = getitems(index)
        else:
            batch = tensor_dataset_batch(self.dataset, index, self.collate_fn)
            if batch is not None:
                return batch
            data = [self.dataset[i] for i in index]
        return self.collate_fn(data)


class _IterableDatasetFetcher(_MapDatasetFetcher):
    def __init__(self, dataset, auto_collation, collate_fn, drop_last) -> None:
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: its id, the worker count, its seed
    and its own copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object | None = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's ``WorkerInfo``, or ``None`` in the main process."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    seed: int | None = None


class KeyErrorMessage(str):
    """A KeyError's message printed as is (KeyError would show the repr of a long text)."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception and its formatted traceback, carried across a process boundary."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            # An exception type whose constructor takes other arguments.
            raise RuntimeError(msg) from None
        raise exc


def _numpy_seed(base_seed: int, worker_id: int) -> np.ndarray:
    # Distinct, well-mixed legacy NumPy seeds per worker (PyTorch hashes the same entropy
    # with SeedSequence's algorithm), so workers do not repeat each other's np.random draws.
    ss = np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0])
    return ss.generate_state(4)


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 persistent_workers) -> None:
    """The body of one worker process."""
    from ... import manual_seed
    global _worker_info
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        np.random.seed(_numpy_seed(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                  collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        parent = os.getppid()
        while os.getppid() == parent:  # a worker whose loader process died exits
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                # The loader may be shutting down without a None ever reaching this queue
                # (its feeder thread collected along with the iterator): the event suffices.
                if done_event.is_set():
                    break
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                      collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
