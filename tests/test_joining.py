import numpy as np
import pytest
import torch

import ember
from helpers import check_op, raises_same

RNG = np.random.default_rng(0)


def rnd(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(dtype, dim):
    shapes = [(2, 3), (2, 3)] if dim == 0 else [(2, 3), (2, 1)]
    arrays = [rnd(*s, dtype=dtype) for s in shapes]
    check_op(lambda *x: ember.cat(x, dim), lambda *x: torch.cat(x, dim), *arrays)
    check_op(lambda *x: ember.cat(x, dim=dim), lambda *x: torch.cat(x, dim=dim), *arrays,
             noncontig=True)


def test_cat_aliases_three_inputs():
    a, b, c = rnd(2, 3), rnd(1, 3), rnd(4, 3)
    check_op(lambda *x: ember.concat(list(x)), lambda *x: torch.concat(list(x)), a, b, c)
    check_op(lambda *x: ember.concatenate(x), lambda *x: torch.concatenate(x), a, b, c)
    check_op(lambda *x: ember.cat(x), lambda *x: torch.cat(x), a, b, c, argnums=(1,))


def test_cat_promotion():
    check_op(lambda *x: ember.cat(x), lambda *x: torch.cat(x), rnd(2, 3, dtype="float32"),
             rnd(2, 3))
    check_op(lambda *x: ember.cat(x), lambda *x: torch.cat(x), RNG.integers(0, 3, (2,)), rnd(2))
    check_op(lambda *x: ember.cat(x), lambda *x: torch.cat(x), np.ones(2, bool),
             np.arange(3, dtype=np.int32))


def test_cat_legacy_empty():
    check_op(lambda *x: ember.cat(x, 1), lambda *x: torch.cat(x, 1), rnd(2, 3), rnd(0))
    check_op(lambda *x: ember.cat(x), lambda *x: torch.cat(x), rnd(0), rnd(0))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack(dtype, dim):
    arrays = [rnd(2, 3, dtype=dtype) for _ in range(3)]
    check_op(lambda *x: ember.stack(x, dim), lambda *x: torch.stack(x, dim), *arrays)
    check_op(lambda *x: ember.stack(x, dim), lambda *x: torch.stack(x, dim), *arrays,
             noncontig=True)


def test_stack_promotion_and_scalars():
    check_op(lambda *x: ember.stack(x), lambda *x: torch.stack(x), rnd(2, dtype="float32"), rnd(2))
    check_op(lambda *x: ember.stack(x), lambda *x: torch.stack(x), rnd(), rnd())


@pytest.mark.parametrize("name,shapes", [
    ("hstack", [(2,), (3,)]), ("hstack", [(2, 3), (2, 1)]), ("hstack", [(), ()]),
    ("vstack", [(3,), (3,)]), ("vstack", [(2, 3), (3,)]), ("dstack", [(3,), (3,)]),
    ("dstack", [(2, 3), (2, 3, 2)]), ("column_stack", [(3,), (3, 2)]),
    ("row_stack", [(3,), (3,)]),
])
def test_stacks(name, shapes):
    arrays = [rnd(*s) for s in shapes]
    check_op(lambda *x: getattr(ember, name)(x), lambda *x: getattr(torch, name)(x), *arrays)


@pytest.mark.parametrize("shape,reps", [
    ((2, 3), (2, 1)), ((2, 3), (2, 1, 3)), ((2, 3), (1, 1)), ((), ()), ((2, 3), (0, 2)),
    ((3,), (2, 2)), ((2, 1, 3), (1, 4, 1)),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_repeat(shape, reps, dtype):
    a = rnd(*shape, dtype=dtype)
    if reps:
        check_op(lambda x: x.repeat(*reps), lambda x: x.repeat(*reps), a)
    check_op(lambda x: x.repeat(reps), lambda x: x.repeat(reps), a, noncontig=True)


@pytest.mark.parametrize("shape,reps", [((2, 3), (2,)), ((2, 3), (2, 2, 2)), ((2, 3), ()),
                                        ((3,), (2, 2))])
def test_tile(shape, reps):
    a = rnd(*shape)
    check_op(lambda x: ember.tile(x, reps), lambda x: torch.tile(x, reps), a)
    check_op(lambda x: x.tile(reps), lambda x: x.tile(reps), a, noncontig=True)


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1), (-1,), ()])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_flip(dims, dtype):
    a = rnd(2, 3, dtype=dtype)
    check_op(lambda x: ember.flip(x, dims), lambda x: torch.flip(x, dims), a)
    check_op(lambda x: x.flip(dims), lambda x: x.flip(dims), a, noncontig=True)
    if dims:
        check_op(lambda x: x.flip(*dims), lambda x: x.flip(*dims), a)


def test_flip_copies_and_lr_ud():
    a = rnd(2, 3)
    check_op(ember.fliplr, torch.fliplr, a)
    check_op(ember.flipud, torch.flipud, a)
    check_op(ember.flipud, torch.flipud, rnd(4))
    e = ember.from_numpy(a.copy())
    f = e.flip(0)
    f.add_(1)
    assert np.allclose(e.numpy(), a)
    ints = RNG.integers(0, 9, (2, 3))
    check_op(lambda x: x.flip(1), lambda x: x.flip(1), ints)


@pytest.mark.parametrize("shifts,dims", [(1, None), (1, 0), ((1, 2), (0, 1)), (-4, 1),
                                         (5, -1), ((7,), None)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_roll(shifts, dims, dtype):
    a = rnd(2, 3, dtype=dtype)
    check_op(lambda x: ember.roll(x, shifts, dims), lambda x: torch.roll(x, shifts, dims), a)
    check_op(lambda x: x.roll(shifts, dims), lambda x: x.roll(shifts, dims), a, noncontig=True)


def test_roll_empty():
    check_op(lambda x: ember.roll(x, 1, 0), lambda x: torch.roll(x, 1, 0), rnd(0, 3))


def test_split_unbind_grads_use_cat_stack():
    a = rnd(4, 3)
    check_op(lambda x: x.split(1)[2] * 2, lambda x: x.split(1)[2] * 2, a)
    check_op(lambda x: x.unbind(1)[0] * 3, lambda x: x.unbind(1)[0] * 3, a)
    check_op(lambda x: x.chunk(2, 1)[1], lambda x: x.chunk(2, 1)[1], a)


def _both(f, *arrays):
    es = [ember.from_numpy(a) for a in arrays]
    ts = [torch.from_numpy(a) for a in arrays]
    return raises_same(lambda: f(ember, *es), lambda: f(torch, *ts))


@pytest.mark.parametrize("f,shapes", [
    (lambda m, a, b: m.cat([a, b], 1), [(2, 3), (3, 3)]),
    (lambda m, a, b: m.cat([a, b], 0), [(2, 3), (2, 3, 4)]),
    (lambda m, a, b: m.cat([a, b], 0), [(2, 3), (2,)]),
    (lambda m, a, b: m.cat([a, b]), [(), ()]),
    (lambda m, a, b: m.cat([a, b]), [(3,), ()]),
    (lambda m, a, b: m.cat([a, b], 2), [(2, 3), (2, 3)]),
    (lambda m, a, b: m.cat([a, b], -3), [(2, 3), (2, 3)]),
    (lambda m, a, b: m.cat(a), [(2, 3), (2, 3)]),
    (lambda m, a, b: m.cat([]), [(2, 3), (2, 3)]),
    (lambda m, a, b: m.stack([a, b]), [(2,), (3,)]),
    (lambda m, a, b: m.stack([a, b], 3), [(2, 3), (2, 3)]),
    (lambda m, a, b: m.stack([a, b], -4), [(2, 3), (2, 3)]),
    (lambda m, a, b: m.stack([]), [(2, 3), (2, 3)]),
    (lambda m, a, b: m.vstack([a, b]), [(3,), (4,)]),
    (lambda m, a, b: m.vstack([]), [(3,), (4,)]),
    (lambda m, a, b: m.hstack([]), [(3,), (4,)]),
    (lambda m, a, b: a.repeat(2), [(2, 3), (3,)]),
    (lambda m, a, b: a.repeat(-1, 1), [(2, 3), (3,)]),
    (lambda m, a, b: m.flip(a, 0), [(2, 3), (3,)]),
    (lambda m, a, b: m.flip(a, (0, 0)), [(2, 3), (3,)]),
    (lambda m, a, b: m.flip(a, (2,)), [(2, 3), (3,)]),
    (lambda m, a, b: m.fliplr(b), [(2, 3), (3,)]),
    (lambda m, a, b: m.flipud(b[0]), [(2, 3), (3,)]),
    (lambda m, a, b: m.roll(a, (1, 2), (0,)), [(2, 3), (3,)]),
    (lambda m, a, b: m.roll(a, (1, 2)), [(2, 3), (3,)]),
    (lambda m, a, b: m.roll(a, 1, 2), [(2, 3), (3,)]),
    (lambda m, a, b: m.roll(a, (), ()), [(2, 3), (3,)]),
])
def test_errors(f, shapes):
    _both(f, *[rnd(*s, dtype="float32") for s in shapes])
