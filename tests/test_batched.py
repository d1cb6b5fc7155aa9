"""Batched cotangents: BatchedArray against a per-example loop, grad(is_grads_batched=True),
vectorized jacobian/hessian and gradcheck(check_batched_grad=True) against torch."""
import numpy as np
import pytest
import torch
import torch.autograd.functional as TF

import ember
import ember.autograd.functional as EF
from ember import _batched as BT
from ember._batched import BatchedArray
from helpers import raises_same

NB = 4


def _ex(shape, rng, dtype=np.float64):
    return rng.standard_normal((NB,) + tuple(shape)).astype(dtype)


def _per_example(fn, args):
    """fn on BatchedArrays once, and on each example; both stacked into an ndarray."""
    def unb(a, b):
        return a.data[b] if isinstance(a, BatchedArray) else a
    res = [fn(*[unb(a, b) for a in args]) for b in range(NB)]
    return np.stack([np.asarray(r) for r in res])


def check(fn, *args, batched_only=True):
    """``fn`` over batched operands equals the loop, and runs without a per-example fallback."""
    BT.FALLBACKS.clear()
    got = fn(*args)
    assert isinstance(got, BatchedArray), type(got)
    if batched_only:
        assert not BT.FALLBACKS, BT.FALLBACKS
    want = _per_example(fn, args)
    assert got.data.shape == want.shape, (got.data.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got.data, want, rtol=1e-12, atol=1e-12)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def B(shape, rng, dtype=np.float64):
    return BatchedArray(_ex(shape, rng, dtype))


# ---- BatchedArray semantics ---------------------------------------------------------------

def test_logical_view(rng):
    x = B((2, 3), rng)
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and len(x) == 2
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    assert x.reshape(-1).shape == (6,) and x.reshape(3, 2).shape == (3, 2)
    assert x.astype(np.float32).dtype == np.float32
    assert np.shape(x) == (2, 3) and np.ndim(x) == 2 and not np.iscomplexobj(x)
    with pytest.raises(TypeError):
        np.asarray(x)
    with pytest.raises(ValueError):
        bool(x)


@pytest.mark.parametrize("bshape,ushape", [((3,), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 4)),
                                           ((), (2, 3)), ((2, 3), ()), ((1, 3), (5, 2, 1))])
def test_broadcasting_ufuncs(rng, bshape, ushape):
    x, u = B(bshape, rng), rng.standard_normal(ushape)
    for f in (np.add, np.multiply, np.subtract, np.true_divide, np.maximum):
        check(lambda a, f=f: f(a, u), x)
        check(lambda a, f=f: f(u, a), x)
    check(lambda a: a * 2 - u / 3 + (a > 0) * u, x)
    check(lambda a: 1.5 ** (a * 0.1) + abs(-a) + (a <= u), x)
    y = B(ushape, rng)
    check(lambda a, b: a * b + b, x, y)
    check(lambda a: np.exp(np.conj(a)) + np.where(a > 0, a, u), x)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (-1, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(rng, axis, keepdims):
    x = B((2, 3, 4), rng)
    for f in (np.sum, np.mean, np.prod, np.max, np.min, np.any):
        check(lambda a, f=f: f(a, axis=axis, keepdims=keepdims), x)
    check(lambda a: a.sum(axis=axis, keepdims=keepdims), x)
    check(lambda a: np.add.reduce(a, axis=axis, keepdims=keepdims), x)


def test_scans_and_arg_reductions(rng):
    x = B((3, 4), rng)
    for ax in (None, 0, 1, -1):
        check(lambda a, ax=ax: np.cumsum(a, axis=ax), x)
        check(lambda a, ax=ax: np.cumprod(a, axis=ax), x)
        check(lambda a, ax=ax: np.argmax(a, axis=ax), x)
        check(lambda a, ax=ax: np.flip(a, ax), x)
        check(lambda a, ax=ax: np.roll(a, 2, axis=ax), x)


def test_shape_functions(rng):
    x = B((2, 1, 3), rng)
    check(lambda a: np.expand_dims(a, 0), x)
    check(lambda a: np.expand_dims(a, (-1, 1)), x)
    check(lambda a: np.squeeze(a), x)
    check(lambda a: np.squeeze(a, 1), x)
    check(lambda a: np.broadcast_to(a, (5, 2, 4, 3)), x)
    check(lambda a: np.swapaxes(a, 0, -1), x)
    check(lambda a: np.transpose(a, (2, 0, 1)), x)
    check(lambda a: np.transpose(a), x)
    check(lambda a: a.transpose(1, 2, 0), x)
    check(lambda a: np.moveaxis(a, 0, -1), x)
    check(lambda a: np.moveaxis(a, (0, 1), (2, 0)), x)
    check(lambda a: np.reshape(a, (3, -1)), x)
    check(lambda a: np.ravel(a), x)
    y = B((3, 4, 5), rng)
    for off in (-1, 0, 2):
        check(lambda a, off=off: np.diagonal(a, off, 0, 2), y)
        check(lambda a, off=off: a.diagonal(off, -1, 1), y)
    check(lambda a: np.tril(a[0]) + np.triu(a[1], 1), y)


def test_joining(rng):
    x, y, u = B((2, 3), rng), B((2, 3), rng), rng.standard_normal((2, 3))
    for ax in (0, 1, -1):
        check(lambda a, b, ax=ax: np.concatenate([a, u, b], axis=ax), x, y)
        check(lambda a, b, ax=ax: np.stack([u, a, b], axis=ax), x, y)
    check(lambda a: np.stack((a, a), -1), x)


@pytest.mark.parametrize("key", [
    0, -1, (slice(None), 1), (Ellipsis, 2), (None, 1), (slice(1, None), None, slice(None, None, 2)),
    np.array([1, 0, 1]), [1, 0], (slice(None), np.array([0, 3, 3])),
    (np.array([0, 1]), slice(None), np.array([1, 2])),        # non-adjacent: advanced dims first
    (np.array([[0], [1]]), 0, slice(None)), (1, slice(None), np.array([1, 0])),
    (np.array([0, 1]), np.array([3, 2]), 0),
])
def test_getitem_setitem(rng, key):
    x = B((2, 4, 3), rng)
    check(lambda a: a[key], x)
    want = x.data.copy()
    for b in range(NB):
        want[b][key] = 7.0
    y = x.copy()
    y[key] = 7.0
    np.testing.assert_array_equal(y.data, want)
    v = BatchedArray(np.stack([np.asarray(x.data[b][key]) * 2 + b for b in range(NB)]))
    y = x.copy()
    y[key] = v
    for b in range(NB):
        want[b][key] = v.data[b]
    np.testing.assert_array_equal(y.data, want)


def test_boolean_mask_and_add_at(rng):
    x = B((3, 4), rng)
    m = rng.standard_normal((3, 4)) > 0
    check(lambda a: a[m], x)
    idx = np.array([0, 2, 0, 0])

    def add_at(g):
        if isinstance(g, BatchedArray):
            z = BatchedArray(np.zeros((NB, 3, 5)))
        else:
            z = np.zeros((3, 5))
        np.add.at(z, (slice(None), idx), g)
        return z
    check(add_at, x)


def test_gather_scatter(rng):
    x = B((3, 4), rng)
    idx = rng.integers(0, 4, (3, 2))
    check(lambda a: np.take_along_axis(a, idx, 1), x)
    check(lambda a: np.take(a, [3, 0], axis=1), x)
    check(lambda a: np.take(a, [3, 0, 11]), x)

    def put(g):
        z = BatchedArray(np.zeros((NB, 3, 4))) if isinstance(g, BatchedArray) else np.zeros((3, 4))
        np.put_along_axis(z, idx, g, axis=1)
        return z
    check(put, B((3, 2), rng))


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                   ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((3,), (5, 3, 4)),
                                   ((5, 2, 3), (3,)), ((1, 2, 3), (5, 3, 2))])
def test_matmul_ranks(rng, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    check(lambda x: x @ b, B(sa, rng))
    check(lambda x: a @ x, B(sb, rng))
    check(lambda x, y: np.matmul(x, y), B(sa, rng), B(sb, rng))


def test_einsum(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    check(lambda x: np.einsum("ij,jk->ik", x, b), B((3, 4), rng))
    check(lambda x: np.einsum("ij,jk->ki", a, x), B((4, 5), rng))
    check(lambda x, y: np.einsum("ij,jk->j", x, y), B((3, 4), rng), B((4, 5), rng))
    check(lambda x: np.einsum("ii->i", x), B((3, 3), rng))


def test_misc_functions(rng):
    x = B((2, 3), rng)
    z = BatchedArray(x.data + 1j * x.data[::-1])
    check(lambda a: np.real(a) + np.imag(a) + np.abs(a), z)
    assert np.iscomplexobj(z)
    check(lambda a: np.zeros_like(a) + np.ones_like(a) * a, x)
    check(lambda a: np.clip(a, -0.5, 0.5), x)
    check(lambda a: np.nan_to_num(a / (a > 0)), x)
    check(lambda a: a.astype(np.float32), x)
    check(lambda a: np.copy(a.mT), x)


def test_unknown_functions_loop(rng):
    x = B((3, 3), rng)
    BT.FALLBACKS.clear()
    check(lambda a: np.linalg.inv(a + 3 * np.eye(3)), x, batched_only=False)
    assert BT.FALLBACKS  # ran once per example, counted
    check(lambda a: np.outer(a[0], a[1]), x, batched_only=False)


# ---- grad(is_grads_batched=True) against torch -------------------------------------------

def _grad_both(f, arrays, dtype="float64", seed=0, unused_ok=True):
    rng = np.random.default_rng(seed)
    res = {}
    for m in (ember, torch):
        dt = getattr(m, dtype)
        ts = [m.tensor(a, dtype=dt, requires_grad=True) for a in arrays]
        out = f(m, *ts)
        outs = out if isinstance(out, tuple) else (out,)
        r2 = np.random.default_rng(seed + 1)
        gos = tuple(m.tensor(r2.standard_normal((5,) + tuple(o.shape)), dtype=o.dtype)
                    for o in outs)
        r = m.autograd.grad(outs, ts, gos, is_grads_batched=True, allow_unused=unused_ok)
        res[m] = r
    del rng
    for e, t in zip(res[ember], res[torch]):
        assert (e is None) == (t is None)
        if t is None:
            continue
        assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        tl = 1e-5 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=tl, atol=tl)
        assert not e.requires_grad


R = np.random.default_rng(3)
X23, Y23, X34 = R.standard_normal((2, 3)), R.standard_normal((2, 3)), R.standard_normal((3, 4))
V3, M234 = R.standard_normal(3), R.standard_normal((2, 3, 4))
POS = np.abs(R.standard_normal((2, 3))) + 0.5

FUNCS = [
    ("elementwise", lambda m, x, y: (x * y).sin() + x.exp() / (y * y + 1), (X23, Y23)),
    ("unary chain", lambda m, x: x.tanh().sigmoid().sqrt().log() ** 2, (POS,)),
    ("pow", lambda m, x, y: x ** y + 2 ** x + x ** 3, (POS, Y23)),
    ("broadcast", lambda m, x, v: x * v - v / (x * x + 1) + 1, (X23, V3)),
    ("broadcast 3d", lambda m, x, y: x * y, (M234, X34)),
    ("reductions", lambda m, x: (x.sum(1), x.mean(0, keepdim=True), x.prod(), x.amax(-1)),
     (X23,)),
    ("var/std/norm", lambda m, x: (x.var(1), x.std(), x.norm(dim=0), x.logsumexp(1)), (M234,)),
    ("max dim", lambda m, x: x.max(1)[0] + x.min(-1).values, (X34,)),
    ("cumsum/cumprod", lambda m, x: x.cumsum(1) * x.cumprod(0), (X23,)),
    ("matmul 2d", lambda m, a, b: a @ b, (X23, X34)),
    ("matmul 1d", lambda m, a, v: (a @ v, v @ v, v @ a.T), (X23, V3)),
    ("matmul batched", lambda m, a, b: a @ b, (M234, R.standard_normal((4, 2)))),
    ("matmul bmm", lambda m, a, b: m.bmm(a, b), (M234, R.standard_normal((2, 4, 3)))),
    ("mv/dot/outer", lambda m, a, v: (m.mv(a, v), m.dot(v, v), m.outer(v, v)), (X23, V3)),
    ("addmm", lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2), (X23[:, :1], X23, X34)),
    ("einsum", lambda m, a, b: (m.einsum("ij,jk->ik", a, b), m.einsum("ij->j", a),
                                m.einsum("ii->i", b[:, :3])), (X23, X34)),
    ("views", lambda m, x: (x.mT.reshape(4, 6)[1:, ::2], x.transpose(0, 2).unsqueeze(1),
                            x.permute(2, 0, 1).flatten(1), x.view(6, 4).t()), (M234,)),
    ("expand/squeeze", lambda m, x: (x[:, :1].expand(2, 5).sum(0), x.unsqueeze(0).squeeze(),
                                     x[:1].squeeze(0) * 2), (X23,)),
    ("select/narrow", lambda m, x: (x[1], x[:, 2], x.narrow(2, 1, 2), x[..., None, 0]),
     (M234,)),
    ("advanced index", lambda m, x: (x[[0, 1, 1]], x[:, [2, 0, 2]], x[[1, 0], :, [3, 1]],
                                     x[x > 0]), (M234,)),
    ("gather/index_select", lambda m, x: (x.gather(1, m.tensor([[0, 2], [1, 1]])),
                                          x.index_select(1, m.tensor([2, 0, 2]))), (X23,)),
    ("masked_fill/where", lambda m, x, y: (x.masked_fill(x > 0, 1.0), m.where(x > y, x, y * 2),
                                           x.relu(), x.abs(), x.clamp(-0.5, 0.5)), (X23, Y23)),
    ("softmax", lambda m, x: (x.softmax(-1), x.log_softmax(0), m.softmax(x, 1)), (M234,)),
    ("cat/stack", lambda m, x, y: (m.cat([x, y, x * y], 1), m.stack([x, y], 2)), (X23, Y23)),
    ("split/unbind/chunk", lambda m, x: (x.split(1, 1)[1] * 2, x.unbind(0)[1], x.chunk(2, 2)[0]),
     (M234,)),
    ("diagonal", lambda m, x: (x.diagonal(0, 1, 2), x.diagonal(1, 0, 2)), (M234,)),
    ("flip/roll/repeat", lambda m, x: (x.flip(1), x.roll(1, 0), x.repeat(2, 1, 2)), (X23,)),
    ("to/clone", lambda m, x: x.to(m.float32).double().clone() * 3, (X23,)),
    ("unused", lambda m, x, y: x * 2, (X23, Y23)),
]


@pytest.mark.parametrize("name,f,arrays", FUNCS, ids=[c[0] for c in FUNCS])
def test_grad_batched_matches_torch(name, f, arrays):
    BT.FALLBACKS.clear()
    _grad_both(f, arrays)
    assert not BT.FALLBACKS, BT.FALLBACKS   # every one of these formulas is genuinely batched


@pytest.mark.parametrize("name,f,arrays", FUNCS[:12], ids=[c[0] for c in FUNCS[:12]])
def test_grad_batched_float32(name, f, arrays):
    _grad_both(f, arrays, dtype="float32")


def test_grad_batched_custom_function_and_hooks():
    class Cube(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    class TCube(torch.autograd.Function):
        forward = staticmethod(Cube.forward)
        backward = staticmethod(Cube.backward)

    BT.FALLBACKS.clear()

    def f(m, x):
        y = (Cube if m is ember else TCube).apply(x.sin())
        y.register_hook(lambda g: g * 2)
        return y.exp()
    _grad_both(f, (X23,))
    assert BT.FALLBACKS.get("CubeBackward") == 1, BT.FALLBACKS   # ran once per example


def test_grad_batched_create_graph():
    res = {}
    gos = np.random.default_rng(5).standard_normal((3, 2, 3))
    for m in (ember, torch):
        x = m.tensor(X23, requires_grad=True)
        go = m.tensor(gos, requires_grad=True)
        (g,) = m.autograd.grad((x ** 3).sin(), x, go, is_grads_batched=True, create_graph=True)
        assert g.requires_grad and tuple(g.shape) == (3, 2, 3)
        gg = m.autograd.grad((g * g).sum(), (x, go))
        res[m] = [g, *gg]
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10)


def test_grad_batched_identity_and_materialize():
    for m in (ember, torch):
        x = m.tensor(V3, requires_grad=True)
        z = m.tensor(V3, requires_grad=True)
        go = m.ones(4, 3, dtype=m.float64)
        (g,) = m.autograd.grad(x, x, go, is_grads_batched=True)
        assert tuple(g.shape) == (4, 3)
        r = m.autograd.grad(x * 2, (x, z), go, is_grads_batched=True, materialize_grads=True)
        assert tuple(r[0].shape) == (4, 3) and tuple(r[1].shape) == (3,)
        np.testing.assert_array_equal(r[0].numpy(), 2.0)


@pytest.mark.parametrize("call", [
    lambda m, x: m.autograd.grad(x * 2, x, m.ones(4, 2, dtype=m.float64), is_grads_batched=True),
    lambda m, x: m.autograd.grad(x * 2, x, m.ones(3, dtype=m.float64), is_grads_batched=True),
    lambda m, x: m.autograd.grad(x.sum(), x, None, is_grads_batched=True),
    lambda m, x: m.autograd.grad(x * 2, x, None, is_grads_batched=True),
    lambda m, x: m.autograd.grad(x * 1, x, m.ones(4, 3, dtype=m.complex128),
                                 is_grads_batched=True),
    lambda m, x: m.autograd.grad((x * 2, x.sum()), x, (m.ones(4, 3, dtype=m.float64),
                                                       m.ones(5, dtype=m.float64)),
                                 is_grads_batched=True),
])
def test_grad_batched_errors_match_torch(call):
    raises_same(lambda: call(ember, ember.tensor(V3, requires_grad=True)),
                lambda: call(torch, torch.tensor(V3, requires_grad=True)))


def test_plain_backward_untouched():
    BT.FALLBACKS.clear()
    x = ember.tensor(X23, requires_grad=True)
    (x.exp() * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(X23))
    assert not BT.FALLBACKS


# ---- jacobian / hessian (vectorize=True) and check_batched_grad ----------------------------

def same(re, rt):
    if isinstance(rt, torch.Tensor):
        assert tuple(re.shape) == tuple(rt.shape), (re.shape, rt.shape)
        assert re.requires_grad == rt.requires_grad
        np.testing.assert_allclose(re.detach().numpy(), rt.detach().numpy(), rtol=1e-9,
                                   atol=1e-12)
        return
    assert type(re) is type(rt) and len(re) == len(rt), (type(re), type(rt))
    for a, b in zip(re, rt):
        same(a, b)


A5 = R.standard_normal((5, 5))
X5 = R.standard_normal(5)

JACS = [
    lambda m: (lambda x: (m.tensor(A5) @ x).tanh(), m.tensor(X5)),
    lambda m: (lambda x, y: (x.sin(), (y * x[:3]).sum(0), y.T @ y), (m.tensor(X5), m.tensor(Y23))),
    lambda m: (lambda x, y: x * 2, (m.tensor(X5), m.tensor(Y23))),
    lambda m: (lambda x: (x.softmax(0), x.cumsum(0)[[1, 3]]), (m.tensor(X5),)),
    lambda m: (lambda x: x.reshape(1, 5).expand(3, 5).sum(0), m.tensor(X5)),
]
HESS = [
    lambda m: (lambda x: ((m.tensor(A5) @ x.tanh()) + x ** 3).sum(), m.tensor(X5)),
    lambda m: (lambda x, y: (x[:3] * y).sum() * x.exp().sum(), (m.tensor(X5), m.tensor(Y23))),
    lambda m: (lambda x: x.softmax(0).log().sum() + x.prod() + x.norm(), m.tensor(X5)),
]


@pytest.mark.parametrize("k", range(len(JACS)))
@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_vectorized(k, create_graph):
    fe, ie = JACS[k](ember)
    ft, it = JACS[k](torch)
    BT.FALLBACKS.clear()
    je = EF.jacobian(fe, ie, vectorize=True, create_graph=create_graph)
    assert create_graph or not BT.FALLBACKS
    same(je, TF.jacobian(ft, it, vectorize=True, create_graph=create_graph))
    jl = EF.jacobian(fe, ie, vectorize=False, create_graph=create_graph)
    for a, b in zip(_flat(je), _flat(jl)):   # (requires_grad may differ from the loop's)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def _flat(r):
    if isinstance(r, ember.Tensor):
        return [r]
    return [t for x in r for t in _flat(x)]


@pytest.mark.parametrize("k", range(len(HESS)))
@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian_vectorized(k, create_graph):
    fe, ie = HESS[k](ember)
    ft, it = HESS[k](torch)
    BT.FALLBACKS.clear()
    he = EF.hessian(fe, ie, vectorize=True, create_graph=create_graph)
    assert create_graph or not BT.FALLBACKS
    same(he, TF.hessian(ft, it, vectorize=True, create_graph=create_graph))


def test_jacobian_forward_mode_vectorize():
    fe, ie = JACS[0](ember)
    ft, it = JACS[0](torch)
    same(EF.jacobian(fe, ie, vectorize=True, strategy="forward-mode"),
         TF.jacobian(ft, it, vectorize=True, strategy="forward-mode"))


def test_vectorized_jacobian_is_one_pass(monkeypatch):
    from ember.autograd import engine
    calls = []
    real = engine.run_backward

    def spy(*a, **k):
        calls.append(k.get("batched", False))
        return real(*a, **k)
    monkeypatch.setattr("ember.autograd.run_backward", spy)
    fe, ie = JACS[0](ember)
    EF.jacobian(fe, ie, vectorize=True)
    assert calls == [True]
    calls.clear()
    EF.jacobian(fe, ie, vectorize=False)
    assert calls == [False] * 5


@pytest.mark.parametrize("f,arrays", [
    (lambda x, y: (x * y).sin() + x.exp(), (X23, Y23)),
    (lambda x, w: (x @ w).softmax(-1), (X23, X34)),
    (lambda x: (x[[1, 0]].cumsum(1), x.max(1).values, x.var(0)), (X23,)),
    (lambda x, y: ember.cat([x, y], 0).T.reshape(-1)[::2], (X23, Y23)),
])
def test_check_batched_grad(f, arrays):
    ins = tuple(ember.tensor(a, requires_grad=True) for a in arrays)
    assert ember.autograd.gradcheck(f, ins, check_batched_grad=True)
    assert ember.autograd.gradgradcheck(f, ins, check_batched_grad=True)


def test_check_batched_grad_catches_a_wrong_batched_rule(monkeypatch):
    # a batching rule that mixes the examples (adds example 0 into every one) must be caught
    real = BT._HANDLED[np.sum]

    def mixing_sum(a, *args, **kwargs):
        r = real(a, *args, **kwargs)
        return BatchedArray(r.data + r.data[:1]) if isinstance(r, BatchedArray) else r
    monkeypatch.setitem(BT._HANDLED, np.sum, mixing_sum)
    x = ember.tensor(X23, requires_grad=True)
    with pytest.raises(ember.autograd.GradcheckError, match="batched gradient"):
        ember.autograd.gradcheck(lambda x: x.softmax(1), (x,), check_batched_grad=True)


# ---- forward-mode jacobian (vectorize=True): ONE forward pass with batched tangents ----------

P23 = np.abs(R.standard_normal((2, 3))) + 0.5
FWD_JACS = {
    "elementwise": (lambda m: lambda x: x.sin() * x ** 2 + x.exp() / (1 + x.tanh()), (X5,)),
    "broadcasting": (lambda m: lambda x, y: x[:3] * y + y.exp() / x[:3], (X5, Y23)),
    "reductions": (lambda m: lambda p: (p.sum(1), p.mean(0), p.prod(1), p.amax(1), p.norm(),
                                        p.var(1), p.logsumexp(0), p.cumsum(1)), (P23,)),
    "matmul": (lambda m: lambda y, z: (y @ z, m.matmul(y[0], z), m.mm(y, z) @ z.T,
                                       m.mv(z.T, y[1]), m.einsum("ij,jk->ik", y, z)),
               (Y23, X34)),
    "views": (lambda m: lambda y: (y.T, y.t().contiguous().view(6), y.reshape(3, 2)[1:],
                                   y.unsqueeze(0).squeeze(0), y.permute(1, 0), y[:, None, 1],
                                   y.transpose(0, 1)[::2], y.narrow(1, 1, 2), y.diagonal(),
                                   y.expand(4, 2, 3), y.clone()), (Y23,)),
    "softmax": (lambda m: lambda y: (y.softmax(1), y.log_softmax(0)), (Y23,)),
    "tuple": (lambda m: lambda x, y: (x.sin(), (y * x[:3]).sum(0), y.T @ y), (X5, Y23)),
    "indexing": (lambda m: lambda y: (y[[1, 0]], y[:, [2, 0]], y.flip(0), m.cat([y, y * 2], 0),
                                      m.stack([y, y.cos()], 1), m.where(y > 0, y, y * 3)),
                 (Y23,)),
    "independent": (lambda m: lambda x, y: x * 2, (X5, Y23)),
    "inplace": (lambda m: lambda y: (lambda z: (z.__setitem__(0, y[1] * 3), z.mul_(y))[1])(
        y.clone()), (Y23,)),
    "float32": (lambda m: lambda y: (y.float().sin() * 3).double(), (Y23,)),
}


@pytest.mark.parametrize("name", list(FWD_JACS))
@pytest.mark.parametrize("tuple_in", [True, False])
def test_jacobian_forward_mode_batched(name, tuple_in):
    mk, arrays = FWD_JACS[name]
    if not tuple_in and len(arrays) > 1:
        pytest.skip("several inputs")
    ie = tuple(ember.tensor(a) for a in arrays)
    it = tuple(torch.tensor(a) for a in arrays)
    if not tuple_in:
        ie, it = ie[0], it[0]
    calls = []
    fe = mk(ember)

    def counted(*a):
        calls.append(1)
        return fe(*a)
    BT.FALLBACKS.clear()
    je = EF.jacobian(counted, ie, vectorize=True, strategy="forward-mode")
    assert len(calls) == 1             # one forward pass over the whole basis, no loop
    assert not BT.FALLBACKS, BT.FALLBACKS
    jt = TF.jacobian(mk(torch), it, vectorize=True, strategy="forward-mode")
    same(je, jt)
    for a, b in zip(_flat(je), _flat(EF.jacobian(fe, ie, strategy="forward-mode"))):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-15)


def test_jacobian_forward_mode_batched_falls_back_to_the_loop():
    # trace's forward cannot take a batched tangent: the whole jacobian reruns per basis vector
    a5 = R.standard_normal((3, 3))
    calls = []

    def f(x):
        calls.append(1)
        return x.trace() * x
    je = EF.jacobian(f, ember.tensor(a5), vectorize=True, strategy="forward-mode")
    assert len(calls) == 1 + 9
    same(je, TF.jacobian(lambda x: x.trace() * x, torch.tensor(a5), vectorize=True,
                         strategy="forward-mode"))
    # inputs requiring grad: torch's result carries a graph, so ember loops (differentiable)
    calls.clear()
    xe = ember.tensor(X5, requires_grad=True)
    xt = torch.tensor(X5, requires_grad=True)
    je = EF.jacobian(lambda x: (calls.append(1), x.sin())[1], xe, vectorize=True,
                     strategy="forward-mode")
    assert len(calls) == 5
    same(je, TF.jacobian(lambda x: x.sin(), xt, vectorize=True, strategy="forward-mode"))
    # errors are the loop's (user errors are raised as without batching)
    msgs = []
    for vec in (True, False):
        with pytest.raises(TypeError) as ei:
            EF.jacobian(lambda x: 3, ember.tensor(X5), vectorize=vec, strategy="forward-mode")
        msgs.append(str(ei.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("k", range(len(HESS)))
def test_hessian_forward_over_reverse_vectorized(k):
    fe, ie = HESS[k](ember)
    ft, it = HESS[k](torch)
    same(EF.hessian(fe, ie, vectorize=True, outer_jacobian_strategy="forward-mode"),
         TF.hessian(ft, it, vectorize=True, outer_jacobian_strategy="forward-mode"))
