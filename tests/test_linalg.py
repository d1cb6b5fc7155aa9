import numpy as np
import pytest
import torch

import ember
from helpers import check_op, pair, raises_same

RNG = np.random.default_rng(0)


def rnd(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)),
    ((3,), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (5, 3, 4)), ((5, 2, 3), (1, 3, 4)), ((7, 1, 2, 3), (5, 3, 4)),
    ((6, 5, 2, 3), (6, 5, 3, 4)), ((6, 5, 2, 3), (3,)), ((3,), (6, 5, 3, 4)),
    ((1, 3), (5, 3, 4)), ((2, 3), (5, 3, 1)), ((2, 3), (1, 3, 4)), ((4, 1, 2, 3), (1, 3, 3, 2)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matmul_ranks(sa, sb, dtype):
    a, b = rnd(*sa, dtype=dtype), rnd(*sb, dtype=dtype)
    check_op(lambda x, y: x @ y, lambda x, y: x @ y, a, b)


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES[:12])
def test_matmul_grad_fn_one_side(sa, sb):
    # the final node depends on which operand requires grad (PyTorch's fold rule)
    a, b = rnd(*sa), rnd(*sb)
    for argnums in ((0,), (1,)):
        check_op(ember.matmul, torch.matmul, a, b, argnums=argnums, double=False, fwd=False)


@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)), ((5, 3, 2), (2, 4)),
                                   ((2, 3), (5, 3, 4))])
def test_matmul_noncontig(sa, sb):
    check_op(ember.matmul, torch.matmul, rnd(*sa), rnd(*sb), noncontig=True)


def test_matmul_complex():
    a = rnd(2, 3) + 1j * rnd(2, 3)
    b = rnd(3, 4) + 1j * rnd(3, 4)
    check_op(ember.matmul, torch.matmul, a, b)
    check_op(ember.matmul, torch.matmul, a[0], b[:, 0])
    check_op(ember.matmul, torch.matmul, np.stack([a, a]), b[:, 0])


def test_matmul_int():
    a = RNG.integers(-5, 5, (2, 3))
    b = RNG.integers(-5, 5, (3, 4))
    check_op(ember.matmul, torch.matmul, a, b)
    check_op(ember.matmul, torch.matmul, a[0], b[:, 0])


def test_mm_bmm_mv_dot():
    check_op(ember.mm, torch.mm, rnd(2, 3), rnd(3, 4))
    check_op(ember.bmm, torch.bmm, rnd(5, 2, 3), rnd(5, 3, 4))
    check_op(ember.mv, torch.mv, rnd(2, 3), rnd(3))
    check_op(ember.dot, torch.dot, rnd(3), rnd(3))
    check_op(lambda a, b: a.mm(b), lambda a, b: a.mm(b), rnd(2, 3, dtype="float32"),
             rnd(3, 4, dtype="float32"))
    check_op(lambda a, b: a.matmul(b), lambda a, b: a.matmul(b), rnd(4, 3), rnd(3))


def test_vdot_outer():
    check_op(ember.vdot, torch.vdot, rnd(3), rnd(3))
    c1, c2 = rnd(3) + 1j * rnd(3), rnd(3) + 1j * rnd(3)
    check_op(ember.vdot, torch.vdot, c1, c2)
    check_op(ember.outer, torch.outer, rnd(3), rnd(2))
    check_op(ember.ger, torch.ger, rnd(3), rnd(2, dtype="float32"))
    check_op(ember.inner, torch.inner, rnd(3), rnd(3))
    check_op(ember.inner, torch.inner, rnd(2, 3), rnd(4, 3))


def test_addmm_addmv_baddbmm():
    check_op(ember.addmm, torch.addmm, rnd(2, 4), rnd(2, 3), rnd(3, 4))
    check_op(ember.addmm, torch.addmm, rnd(4), rnd(2, 3), rnd(3, 4))
    check_op(lambda x, a, b: ember.addmm(x, a, b, beta=0.5, alpha=2.0),
             lambda x, a, b: torch.addmm(x, a, b, beta=0.5, alpha=2.0),
             rnd(2, 4), rnd(2, 3), rnd(3, 4))
    check_op(ember.addmv, torch.addmv, rnd(2), rnd(2, 3), rnd(3))
    check_op(lambda x, a, b: ember.addmv(x, a, b, beta=2, alpha=-1),
             lambda x, a, b: torch.addmv(x, a, b, beta=2, alpha=-1), rnd(1), rnd(2, 3), rnd(3))
    check_op(ember.baddbmm, torch.baddbmm, rnd(4), rnd(2, 2, 3), rnd(2, 3, 4))
    check_op(lambda x, a, b: x.addmm(a, b, alpha=3), lambda x, a, b: x.addmm(a, b, alpha=3),
             rnd(2, 4, dtype="float32"), rnd(2, 3, dtype="float32"), rnd(3, 4, dtype="float32"))


def test_addmm_beta_zero_ignores_nan():
    x = np.full((2, 4), np.nan)
    check_op(lambda x, a, b: ember.addmm(x, a, b, beta=0),
             lambda x, a, b: torch.addmm(x, a, b, beta=0), x, rnd(2, 3), rnd(3, 4),
             argnums=(1, 2))


def test_rmatmul_and_operator():
    a, b = rnd(2, 3), rnd(3, 4)
    ea, ta = pair(a)
    eb, tb = pair(b)
    assert np.allclose((ea @ eb).numpy(), (ta @ tb).numpy())
    assert np.allclose(ea.__rmatmul__(ember.from_numpy(rnd(4, 2))).shape, (4, 3))


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ij,ij->i", [(2, 3), (2, 3)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->ji", [(3, 2)]),
    ("ij->", [(3, 2)]), ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]), ("i,j->ij", [(2,), (3,)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,j->j", [(2, 3), (3,)]), ("ij,jk->ki", [(2, 3), (3, 4)]), ("i,i", [(2,), (1,)]),
    ("bA", [(2, 3)]), ("...j,...->j...", [(5, 2, 3), (2,)]), ("ii,i->i", [(3, 3), (3,)]),
    ("ij,kl->", [(2, 3), (3, 4)]), ("ijk,ikj->k", [(2, 3, 3), (2, 3, 3)]),
    ("iij->j", [(2, 2, 3)]), ("i...->...", [(2, 3, 4)]),
])
def test_einsum(eq, shapes):
    arrays = [rnd(*s) for s in shapes]
    check_op(lambda *x: ember.einsum(eq, *x), lambda *x: torch.einsum(eq, *x), *arrays)


def test_einsum_forms_and_dtypes():
    a, b = rnd(2, 3, dtype="float32"), rnd(3, 4, dtype="float32")
    check_op(lambda x, y: ember.einsum("ij,jk->ik", [x, y]),
             lambda x, y: torch.einsum("ij,jk->ik", [x, y]), a, b)
    check_op(lambda x, y: ember.einsum(x, [0, 1], y, [1, 2], [0, 2]),
             lambda x, y: torch.einsum(x, [0, 1], y, [1, 2], [0, 2]), a, b)
    check_op(lambda x, y: ember.einsum("ij,ij->ij", x, y),
             lambda x, y: torch.einsum("ij,ij->ij", x, y), a, rnd(2, 3))
    c = rnd(2, 3) + 1j * rnd(2, 3)
    check_op(lambda x, y: ember.einsum("ij,jk->ik", x, y),
             lambda x, y: torch.einsum("ij,jk->ik", x, y), c, rnd(3, 2) + 0j)
    ints = RNG.integers(0, 4, (2, 3))
    check_op(lambda x: ember.einsum("ij->j", x), lambda x: torch.einsum("ij->j", x), ints)


def test_einsum_noncontig():
    check_op(lambda x, y: ember.einsum("ij,jk->ik", x, y),
             lambda x, y: torch.einsum("ij,jk->ik", x, y), rnd(2, 3), rnd(3, 4), noncontig=True)


def _both(f, *arrays):
    es = [ember.from_numpy(a) for a in arrays]
    ts = [torch.from_numpy(a) for a in arrays]
    return raises_same(lambda: f(ember, *es), lambda: f(torch, *ts))


@pytest.mark.parametrize("f,shapes,dts", [
    (lambda m, a, b: a @ b, [(2, 3), (4, 5)], None),
    (lambda m, a, b: m.mm(a, b), [(2, 3), (4, 5)], None),
    (lambda m, a, b: m.mm(a, b), [(3,), (3, 5)], None),
    (lambda m, a, b: m.mm(a, b), [(2, 3), (3,)], None),
    (lambda m, a, b: m.mm(a, b), [(2, 3), (3, 4)], ("float32", "float64")),
    (lambda m, a, b: a @ b, [(2, 3), (3, 4)], ("float32", "float64")),
    (lambda m, a, b: a @ b, [(3,), (3,)], ("float32", "float64")),
    (lambda m, a, b: a @ b, [(2, 3), (3,)], ("float32", "float64")),
    (lambda m, a, b: a @ b, [(5, 2, 3), (5, 3, 4)], ("float32", "float64")),
    (lambda m, a, b: a @ b, [(5, 2, 3), (3, 4)], ("float32", "float64")),
    (lambda m, a, b: a @ b, [(2, 3), (5, 3, 4)], ("float32", "float64")),
    (lambda m, a, b: a @ b, [(3,), (4,)], None),
    (lambda m, a, b: a @ b, [(2, 3), (4,)], None),
    (lambda m, a, b: a @ b, [(3,), (4, 5)], None),
    (lambda m, a, b: a @ b, [(5, 2, 3), (5, 4, 5)], None),
    (lambda m, a, b: a @ b, [(5, 2, 3), (4, 3, 4)], None),
    (lambda m, a, b: a @ b, [(5, 2, 3), (4,)], None),
    (lambda m, a, b: a @ b, [(5, 2, 3), (4, 5)], None),
    (lambda m, a, b: a @ b, [(4,), (5, 2, 3)], None),
    (lambda m, a, b: a @ b, [(2, 4), (5, 2, 3)], None),
    (lambda m, a, b: a @ b, [(), (3,)], None),
    (lambda m, a, b: m.dot(a, b), [(2, 3), (2, 3)], None),
    (lambda m, a, b: m.dot(a, b), [(3,), (4,)], None),
    (lambda m, a, b: m.dot(a, b), [(3,), (3,)], ("float32", "float64")),
    (lambda m, a, b: m.vdot(a, b), [(3,), (4,)], None),
    (lambda m, a, b: m.mv(a, b), [(2, 3), (4,)], None),
    (lambda m, a, b: m.mv(a, b), [(2, 3), (3, 1)], None),
    (lambda m, a, b: m.mv(a, b), [(2, 3), (3,)], ("float32", "float64")),
    (lambda m, a, b: m.bmm(a, b), [(2, 3), (3, 4)], None),
    (lambda m, a, b: m.bmm(a, b), [(2, 2, 3), (3, 3, 4)], None),
    (lambda m, a, b: m.bmm(a, b), [(2, 2, 3), (2, 4, 4)], None),
    (lambda m, a, b: m.bmm(a, b), [(2, 2, 3), (2, 3, 4)], ("float32", "float64")),
    (lambda m, a, b: m.outer(a, b), [(2, 3), (2,)], None),
    (lambda m, a, b: m.outer(a, b), [(3,), (2, 2)], None),
])
def test_errors(f, shapes, dts):
    dts = dts or ("float32", "float32")
    _both(f, *[rnd(*s, dtype=d) for s, d in zip(shapes, dts)])


def test_errors_bool_and_add():
    bools = np.ones((2, 3), bool), np.ones((3, 2), bool)
    _both(lambda m, a, b: m.mm(a, b), *bools)
    _both(lambda m, a, b: m.dot(a, b), bools[0][0], bools[1][:, 0])
    _both(lambda m, x, a, b: m.addmm(x, a, b), rnd(2, 4), rnd(2, 3), rnd(4, 5))
    _both(lambda m, x, a, b: m.addmm(x, a, b), rnd(3, 4), rnd(2, 3), rnd(3, 4))
    _both(lambda m, x, a, b: m.addmm(x, a, b), rnd(4, dtype="float32"), rnd(2, 3), rnd(3, 4))
    _both(lambda m, x, a, b: m.addmm(x, a, b), rnd(4), rnd(3), rnd(3, 4))
    _both(lambda m, x, a, b: m.addmv(x, a, b), rnd(3), rnd(2, 3), rnd(3))
    _both(lambda m, x, a, b: m.addmv(x, a, b), rnd(2, 2), rnd(2, 3), rnd(3))
    _both(lambda m, x, a, b: m.baddbmm(x, a, b), rnd(3), rnd(2, 2, 3), rnd(2, 3, 4))


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3), (4, 4)]), ("ij,jk->iz", [(2, 3), (3, 4)]),
    ("ij,jk->ii", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3)]), ("ij", [(2, 3), (3,)]),
    ("ijk,jk->ik", [(2, 3), (3, 4)]), ("i1,i", [(2,), (2,)]), ("ii", [(2, 3)]),
    ("...ij", [(2,)]), ("i..i", [(2, 2)]),
])
def test_einsum_errors(eq, shapes):
    arrays = [rnd(*s) for s in shapes]
    _both(lambda m, *x: m.einsum(eq, *x), *arrays)


def test_einsum_dtype_error():
    _both(lambda m, a, b: m.einsum("ij,jk->ik", a, b), rnd(2, 3, dtype="float32"), rnd(3, 4))
