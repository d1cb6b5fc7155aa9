"""ember.utils.data against torch.utils.data: collation, datasets, samplers, DataLoader."""
from __future__ import annotations

import collections
import math
import os
import time
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as TD

import ember
import ember.utils.data as ED

Point = collections.namedtuple("Point", "x y")


def same(e, t) -> None:
    """ember result ``e`` has torch result ``t``'s structure, types, dtypes, shapes, values."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), type(e)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
        return
    assert type(e).__name__ == type(t).__name__, (type(e), type(t))
    if isinstance(t, dict):
        assert list(e) == list(t)
        for k in t:
            same(e[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            same(a, b)
    elif isinstance(t, np.ndarray):
        np.testing.assert_array_equal(e, t)
    else:
        assert e == t


def plain(x):
    """Nested data with tensors replaced by (dtype, shape, values), to compare two ember runs."""
    if isinstance(x, ember.Tensor):
        return (str(x.dtype), tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(plain(v) for v in x)
    return x


def errors_alike(fe, ft, exc=Exception):
    """Both calls raise the same exception type with the same message."""
    with pytest.raises(exc) as te:
        ft()
    with pytest.raises(exc) as ee:
        fe()
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


rng = np.random.default_rng(0)
SAMPLES = {
    "ndarray_f32": [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3)],
    "ndarray_i32": [np.arange(4, dtype=np.int32) + i for i in range(3)],
    "ndarray_bool": [np.array([True, False]), np.array([False, False])],
    "np_float32": [np.float32(1.5), np.float32(-2)],
    "np_float64": [np.float64(1.5), np.float64(-2)],
    "np_int16": [np.int16(3), np.int16(4)],
    "np_bool": [np.bool_(True), np.bool_(False)],
    "int": [1, 2, 3],
    "float": [0.5, 1.25],
    "bool": [True, False],
    "str": ["a", "bc"],
    "bytes": [b"a", b"b"],
    "tuple": [(1, 2.0, "s"), (3, 4.0, "t")],
    "list": [[1, 2], [3, 4]],
    "dict": [{"a": 1, "b": np.ones(2)}, {"a": 2, "b": np.zeros(2)}],
    "namedtuple": [Point(1, 2.5), Point(3, 4.5)],
    "nested": [{"p": Point([1, 2], "u"), "q": (np.float32(1), [0.5])},
               {"p": Point([3, 4], "v"), "q": (np.float32(2), [1.5])}],
    "defaultdict": [collections.defaultdict(int, a=1), collections.defaultdict(int, a=2)],
}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_default_collate_and_convert_match_torch(name):
    batch = SAMPLES[name]
    same(ED.default_collate(batch), TD.default_collate(batch))
    for sample in batch:
        same(ED.default_convert(sample), TD.default_convert(sample))


def test_default_collate_tensors():
    arrays = [rng.standard_normal((3, 2)) for _ in range(4)]
    e = ED.default_collate([(ember.tensor(a), ember.tensor(i)) for i, a in enumerate(arrays)])
    t = TD.default_collate([(torch.tensor(a), torch.tensor(i)) for i, a in enumerate(arrays)])
    same(e, t)


@pytest.mark.parametrize("batch", [[object(), object()], [np.array(["a"]), np.array(["b"])],
                                   [[1, 2], [3]], [None, None]])
def test_default_collate_errors(batch):
    errors_alike(lambda: ED.default_collate(batch), lambda: TD.default_collate(batch))


def test_default_convert_keeps_string_arrays():
    a = np.array(["x", "y"])
    assert ED.default_convert(a) is a


def test_collate_fn_map_extension():
    from ember.utils.data._collate import collate, default_collate_fn_map

    class Box:
        pass

    fn_map = {**default_collate_fn_map, Box: lambda b, *, collate_fn_map: len(b)}
    assert collate([(Box(), 1), (Box(), 2)], collate_fn_map=fn_map)[0] == 2


# ---- datasets -------------------------------------------------------------------------------

def test_tensor_dataset():
    x = np.arange(12.0).reshape(6, 2)
    e = ED.TensorDataset(ember.tensor(x), ember.arange(6))
    t = TD.TensorDataset(torch.tensor(x), torch.arange(6))
    assert len(e) == len(t) == 6
    same(e[4], t[4])
    errors_alike(lambda: ED.TensorDataset(ember.ones(2), ember.ones(3)),
                 lambda: TD.TensorDataset(torch.ones(2), torch.ones(3)))


class Squares(ED.Dataset, TD.Dataset):
    """Usable by both libraries: NumPy and Python values only."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return {"i": i, "sq": np.array([i * i], dtype=np.float32), "name": f"s{i}"}


def test_concat_stack_subset_datasets():
    parts = [list(range(3)), list(range(10, 14)), list(range(20, 22))]
    e, t = ED.ConcatDataset(parts), TD.ConcatDataset(parts)
    assert e.cumulative_sizes == t.cumulative_sizes
    assert [e[i] for i in range(-len(t), len(t))] == [t[i] for i in range(-len(t), len(t))]
    errors_alike(lambda: e[-10], lambda: t[-10])
    errors_alike(lambda: ED.ConcatDataset([]), lambda: TD.ConcatDataset([]))
    assert len(e + e) == 18 and isinstance(e + e, ED.ConcatDataset)

    s_e = ED.StackDataset(a=Squares(4), b=list("wxyz"))
    s_t = TD.StackDataset(a=Squares(4), b=list("wxyz"))
    same(s_e[2], s_t[2])
    same(s_e.__getitems__([0, 3]), s_t.__getitems__([0, 3]))
    same(ED.StackDataset(Squares(3), [1, 2, 3])[1], TD.StackDataset(Squares(3), [1, 2, 3])[1])
    errors_alike(lambda: ED.StackDataset([1], [1, 2]), lambda: TD.StackDataset([1], [1, 2]))
    errors_alike(lambda: ED.StackDataset([1], b=[1]), lambda: TD.StackDataset([1], b=[1]))
    errors_alike(lambda: ED.StackDataset(), lambda: TD.StackDataset())

    sub_e, sub_t = ED.Subset(list("abcdef"), [5, 0, 2]), TD.Subset(list("abcdef"), [5, 0, 2])
    assert len(sub_e) == 3 and [sub_e[i] for i in range(3)] == [sub_t[i] for i in range(3)]
    assert sub_e.__getitems__([2, 0]) == sub_t.__getitems__([2, 0])

    class Bad(ED.Subset):
        def __getitem__(self, i):
            return 0

    class BadT(TD.Subset):
        def __getitem__(self, i):
            return 0

    with pytest.raises(NotImplementedError) as ee:
        Bad([1], [0])
    with pytest.raises(NotImplementedError) as te:
        BadT([1], [0])
    assert str(ee.value) == str(te.value).replace("BadT", "Bad")


class _Stream:
    """range(start, end), sharded across workers as in PyTorch's documentation."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __len__(self):
        return self.end - self.start

    def __iter__(self):
        info = ED.get_worker_info() or TD.get_worker_info()
        lo, hi = self.start, self.end
        if info is not None:
            per = math.ceil((hi - lo) / info.num_workers)
            lo = lo + info.id * per
            hi = min(lo + per, hi)
        return iter(range(lo, hi))


class Stream(_Stream, ED.IterableDataset):
    pass


class TStream(_Stream, TD.IterableDataset):
    pass


def test_chain_dataset():
    e = ED.ChainDataset([Stream(0, 3), Stream(5, 7)])
    assert list(e) == [0, 1, 2, 5, 6] and len(e) == 5
    assert list(Stream(0, 2) + Stream(4, 5)) == [0, 1, 4]
    errors_alike(lambda: list(ED.ChainDataset([[1]])), lambda: list(TD.ChainDataset([[1]])))


def test_random_split():
    for lengths in ([3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [0.33, 0.33, 0.34]):
        e = ED.random_split(range(10), lengths, generator=ember.Generator().manual_seed(1))
        t = TD.random_split(range(10), lengths, generator=torch.Generator().manual_seed(1))
        assert [len(s) for s in e] == [len(s) for s in t]
        assert sorted(i for s in e for i in s) == list(range(10))
        again = ED.random_split(range(10), lengths, generator=ember.Generator().manual_seed(1))
        assert [list(s) for s in e] == [list(s) for s in again]
    ember.manual_seed(3)
    a = [list(s) for s in ED.random_split(range(8), [4, 4])]
    ember.manual_seed(3)
    assert a == [list(s) for s in ED.random_split(range(8), [4, 4])]
    errors_alike(lambda: ED.random_split(range(10), [3, 3]),
                 lambda: TD.random_split(range(10), [3, 3]))
    errors_alike(lambda: ED.random_split(range(10), [1.5, -0.5]),
                 lambda: TD.random_split(range(10), [1.5, -0.5]))
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        ED.random_split(range(1), [0.5, 0.5])


# ---- samplers -------------------------------------------------------------------------------

def test_sequential_and_batch_samplers():
    assert list(ED.SequentialSampler(range(5))) == list(TD.SequentialSampler(range(5)))
    for bs, drop in [(1, False), (3, False), (3, True), (5, True), (7, False), (7, True)]:
        e = ED.BatchSampler(range(10), bs, drop)
        t = TD.BatchSampler(range(10), bs, drop)
        assert list(e) == list(t) and len(e) == len(t)
    for bad in [0, -1, True, 1.0]:
        errors_alike(lambda: ED.BatchSampler(range(3), bad, False),
                     lambda: TD.BatchSampler(range(3), bad, False))
    errors_alike(lambda: ED.BatchSampler(range(3), 2, 1), lambda: TD.BatchSampler(range(3), 2, 1))


def test_random_sampler():
    data = range(20)
    s = ED.RandomSampler(data, generator=ember.Generator().manual_seed(5))
    first = list(s)
    assert sorted(first) == list(data) and len(s) == 20
    assert list(s) != first  # the generator moves on: a new order every epoch
    assert first == list(ED.RandomSampler(data, generator=ember.Generator().manual_seed(5)))
    ember.manual_seed(0)
    a = list(ED.RandomSampler(data))
    ember.manual_seed(0)
    assert a == list(ED.RandomSampler(data)) and sorted(a) == list(data)

    long = list(ED.RandomSampler(range(4), num_samples=10))
    assert len(long) == 10 and sorted(long[:8]) == [0, 0, 1, 1, 2, 2, 3, 3]
    rep = list(ED.RandomSampler(range(3), replacement=True, num_samples=70))
    assert len(rep) == 70 and set(rep) == {0, 1, 2}
    for kwargs in [{"replacement": 1}, {"num_samples": 0}, {"num_samples": 2.0}]:
        errors_alike(lambda: ED.RandomSampler(data, **kwargs),
                     lambda: TD.RandomSampler(data, **kwargs))


def test_subset_and_weighted_samplers():
    idx = [3, 9, 4, 7]
    s = list(ED.SubsetRandomSampler(idx, generator=ember.Generator().manual_seed(2)))
    assert sorted(s) == sorted(idx)
    assert s == list(ED.SubsetRandomSampler(idx, generator=ember.Generator().manual_seed(2)))

    w = [0.0, 1.0, 0.0, 3.0]
    draws = list(ED.WeightedRandomSampler(w, 400, generator=ember.Generator().manual_seed(0)))
    assert set(draws) == {1, 3} and 240 < draws.count(3) < 360
    no_rep = list(ED.WeightedRandomSampler([1, 2, 3, 4, 5], 5, replacement=False))
    assert sorted(no_rep) == [0, 1, 2, 3, 4]
    sampler = ED.WeightedRandomSampler(w, 3)
    assert sampler.weights.dtype is ember.float64 and len(sampler) == 3
    for args, kwargs in [((w, 0), {}), ((w, 2), {"replacement": 0}), (([[1.0]], 1), {})]:
        errors_alike(lambda: ED.WeightedRandomSampler(*args, **kwargs),
                     lambda: TD.WeightedRandomSampler(*args, **kwargs))
    nan, inf = float("nan"), float("inf")
    for weights, n, rep in [([1.0, 0.0], 3, False), ([-1.0, 1.0], 1, True),
                            ([-1.0, 1.0], 2, True), ([1.0, -1.0], 2, False),
                            ([0.0, 0.0], 1, True), ([0.0, 0.0], 2, True), ([nan, 1.0], 1, True),
                            ([nan, 1.0], 2, True), ([1.0, inf], 2, True), ([inf, 1.0], 2, False)]:
        errors_alike(lambda: list(ED.WeightedRandomSampler(weights, n, rep)),
                     lambda: list(TD.WeightedRandomSampler(weights, n, rep)))


# ---- DataLoader, single process -------------------------------------------------------------

def pair_collate(batch):
    return {"n": len(batch), "ids": [b["i"] for b in batch]}


LOADER_CASES = [
    {},
    {"batch_size": 3},
    {"batch_size": 3, "drop_last": True},
    {"batch_size": 4, "drop_last": True},
    {"batch_size": None},
    {"batch_sampler": [[0, 1], [5], [2, 3, 4]]},
    {"sampler": [6, 0, 2], "batch_size": 2},
    {"batch_size": 2, "collate_fn": pair_collate},
]


@pytest.mark.parametrize("kwargs", LOADER_CASES)
def test_loader_matches_torch(kwargs):
    e = ED.DataLoader(Squares(7), **kwargs)
    t = TD.DataLoader(Squares(7), **kwargs)
    assert len(e) == len(t)
    same(list(e), list(t))


def test_loader_tensor_dataset_and_iterable():
    x = np.arange(14.0).reshape(7, 2).astype(np.float32)
    e = ED.DataLoader(ED.TensorDataset(ember.tensor(x), ember.arange(7)), batch_size=3)
    t = TD.DataLoader(TD.TensorDataset(torch.tensor(x), torch.arange(7)), batch_size=3)
    same(list(e), list(t))
    for kwargs in [{}, {"batch_size": 2, "drop_last": True}, {"batch_size": None},
                   {"batch_size": 4}]:
        e = ED.DataLoader(Stream(3, 8), **kwargs)
        t = TD.DataLoader(TStream(3, 8), **kwargs)
        assert len(e) == len(t)
        same(list(e), list(t))


def test_loader_tensor_dataset_batches_like_per_sample_collation():
    # the loader gathers a TensorDataset batch in one take per tensor: same values, dtypes,
    # history and errors as stacking the samples one by one
    x = rng.standard_normal((9, 2, 3)).astype(np.float32)
    y = np.arange(9, dtype=np.int32)[::-1].copy()
    order = [[8, 0, 3], [-1, 2], [5, 5, 1, 7]]

    class Doubled(TD.TensorDataset):
        def __getitem__(self, i):
            a, b = super().__getitem__(i)
            return a * 2, b

    class EDoubled(ED.TensorDataset):
        def __getitem__(self, i):
            a, b = super().__getitem__(i)
            return a * 2, b

    for ecls, tcls in [(ED.TensorDataset, TD.TensorDataset), (EDoubled, Doubled)]:
        e = ED.DataLoader(ecls(ember.tensor(x), ember.tensor(y)), batch_sampler=order)
        t = TD.DataLoader(tcls(torch.tensor(x), torch.tensor(y)), batch_sampler=order)
        same(list(e), list(t))
    e = list(ED.DataLoader(ED.TensorDataset(ember.tensor(x)), batch_size=4))[0][0]
    e[0, 0, 0] = 100.0   # a fresh batch, not a view of the dataset
    assert x[0, 0, 0] != 100.0
    ew = ember.tensor(x, requires_grad=True)
    tw = torch.tensor(x, requires_grad=True)
    (eb,), (tb,) = (next(iter(L(D(w), batch_size=2))) for L, D, w in
                    [(ED.DataLoader, ED.TensorDataset, ew), (TD.DataLoader, TD.TensorDataset, tw)])
    assert eb.grad_fn.name() == tb.grad_fn.name()
    with ember.inference_mode(), torch.inference_mode():
        (eb,), (tb,) = (next(iter(L(D(w), batch_size=2))) for L, D, w in
                        [(ED.DataLoader, ED.TensorDataset, ember.tensor(x)),
                         (TD.DataLoader, TD.TensorDataset, torch.tensor(x))])
        assert eb.is_inference() == tb.is_inference()
    errors_alike(lambda: list(ED.DataLoader(ED.TensorDataset(ember.tensor(x)),
                                            batch_sampler=[[1, 9]])),
                 lambda: list(TD.DataLoader(TD.TensorDataset(torch.tensor(x)),
                                            batch_sampler=[[1, 9]])))


@pytest.mark.parametrize("kwargs", [
    {"batch_sampler": [[0]], "batch_size": 2}, {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "sampler": [0]}, {"batch_sampler": [[0]], "drop_last": True},
    {"sampler": [0], "shuffle": True}, {"batch_size": None, "drop_last": True},
    {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2},
    {"num_workers": 1, "prefetch_factor": -1}, {"persistent_workers": True},
    {"multiprocessing_context": "fork"}, {"num_workers": 1, "multiprocessing_context": "nope"},
])
def test_loader_argument_errors(kwargs):
    errors_alike(lambda: ED.DataLoader(Squares(3), **kwargs),
                 lambda: TD.DataLoader(Squares(3), **kwargs))


def test_loader_iterable_argument_errors_and_setattr():
    for kwargs in [{"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}]:
        with pytest.raises(ValueError) as ee:
            ED.DataLoader(Stream(0, 2), **kwargs)
        with pytest.raises(ValueError) as te:
            TD.DataLoader(TStream(0, 2), **kwargs)
        assert str(ee.value).split(", but")[0] == str(te.value).split(", but")[0]
    e, t = ED.DataLoader(Squares(2)), TD.DataLoader(Squares(2))
    errors_alike(lambda: setattr(e, "batch_size", 3), lambda: setattr(t, "batch_size", 3))
    e.timeout = 0  # not frozen


def test_loader_shuffle_reproducible():
    def epoch(seed):
        loader = ED.DataLoader(range(10), batch_size=4, shuffle=True,
                               generator=ember.Generator().manual_seed(seed))
        return [b.tolist() for b in loader]

    a = epoch(0)
    assert [len(b) for b in a] == [4, 4, 2]
    assert sorted(sum(a, [])) == list(range(10)) and a == epoch(0) and a != epoch(1)
    ember.manual_seed(7)
    b = [x.tolist() for x in ED.DataLoader(range(10), shuffle=True)]
    ember.manual_seed(7)
    assert b == [x.tolist() for x in ED.DataLoader(range(10), shuffle=True)]


def test_pin_memory_on_cpu_warns_like_torch():
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        e = list(ED.DataLoader(range(3), pin_memory=True))
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        t = list(TD.DataLoader(range(3), pin_memory=True))
    same(e, t)
    assert [str(w.message) for w in we] == [str(w.message) for w in wt]


# ---- DataLoader with worker processes -------------------------------------------------------

class WhoLoads(ED.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = ED.get_worker_info()
        return {"i": i, "worker": info.id, "seed": info.seed,
                "init": getattr(info.dataset, "tag", None), "x": np.full(2, i, np.float32)}


def _tag_worker(worker_id):
    ED.get_worker_info().dataset.tag = worker_id * 10


def test_workers_match_single_process_and_report_info():
    gen = ember.Generator().manual_seed(0)
    loader = ED.DataLoader(Squares(11), batch_size=3, num_workers=2, generator=gen,
                           persistent_workers=True, prefetch_factor=1)
    single = list(ED.DataLoader(Squares(11), batch_size=3))
    for _ in range(2):  # the second epoch reuses the persistent workers
        assert plain(list(loader)) == plain(single)
    assert ED.get_worker_info() is None

    batches = list(ED.DataLoader(WhoLoads(), batch_size=2, num_workers=2,
                                 worker_init_fn=_tag_worker))
    assert [b["i"].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    # batches go round-robin to the workers; each worker has its own seed
    assert [b["worker"].tolist() for b in batches] == [[0, 0], [1, 1], [0, 0], [1, 1]]
    assert [b["init"].tolist() for b in batches] == [[0, 0], [10, 10], [0, 0], [10, 10]]
    seeds = [b["seed"][0].item() for b in batches]
    assert seeds[0] == seeds[2] and seeds[1] == seeds[0] + 1
    assert batches[3]["x"].dtype is ember.float32


def test_iterable_dataset_with_workers_matches_torch():
    e = [x.tolist() for x in ED.DataLoader(Stream(3, 10), num_workers=2, batch_size=2)]
    t = [x.tolist() for x in TD.DataLoader(TStream(3, 10), num_workers=2, batch_size=2)]
    assert e == t


class Faulty(ED.Dataset):
    def __init__(self, mode):
        self.mode = mode

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            if self.mode == "die":
                os._exit(3)
            if self.mode == "sleep":
                time.sleep(1.5)
            if self.mode == "raise":
                raise KeyError("missing")
        return i


def test_worker_failures():
    loader = ED.DataLoader(Faulty("die"), num_workers=1)
    with pytest.raises(RuntimeError, match=r"^DataLoader worker \(pid\(s\) \d+\) exited "
                                           r"unexpectedly$") as info:
        list(loader)
    assert "exit code 3" in str(info.value.__cause__)

    it = iter(ED.DataLoader(Faulty("sleep"), num_workers=1, timeout=0.5))
    assert [next(it).item(), next(it).item()] == [0, 1]
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.5 seconds$"):
        next(it)
    assert time.monotonic() - start < 3
    it._shutdown_workers()

    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(ED.DataLoader(Faulty("raise"), num_workers=1))
    with pytest.raises(ZeroDivisionError, match="Caught ZeroDivisionError in DataLoader worker "
                                                "process 1"):
        list(ED.DataLoader(Faulty("ok"), num_workers=2, worker_init_fn=lambda w: 1 // (1 - w)))
