"""Custom autograd Functions (ember.autograd.Function), compared with PyTorch."""
import gc

import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, both, raises_same


@pytest.fixture(autouse=True)
def _collect():
    # torch 2.13 can segfault when the GC later collects a mix of these tests' torch graphs
    # (node hooks, saved-tensor hooks, custom Function contexts); collect each test's own.
    yield
    gc.collect()


R = np.random.default_rng(1)
A = R.standard_normal((3, 4))
B = R.standard_normal((3, 4))


def _exp(M):
    class Exp(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y
    return Exp


def _od(M):
    return (ember.autograd.function if M is ember else torch.autograd.function).once_differentiable


def test_forward_backward_apply():
    def f(M, dt="float64"):
        x = M.tensor(A.astype(dt), requires_grad=True)
        y = _exp(M).apply(x)
        (y * M.tensor(B.astype(dt))).sum().backward()
        return [y, x.grad, y.grad_fn, type(y.grad_fn).__name__, y.grad_fn.next_functions,
                y.is_leaf, y.requires_grad]
    both(f)
    re, rt = f(ember, "float32"), f(torch, "float32")
    assert_same(re[:2], rt[:2])


def test_setup_context_style_and_non_tensor_args():
    def f(M):
        seen = []

        class Scale(M.autograd.Function):
            @staticmethod
            def forward(x, k, y, flag):
                return x * k + y, "str", 3

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, k, y, flag = inputs
                ctx.k = k
                seen.append(ctx.needs_input_grad)
                ctx.save_for_backward(x, output[0])

            @staticmethod
            def backward(ctx, g, g2, g3):
                seen.append(ctx.needs_input_grad)
                seen.append((g2, g3))
                x, out = ctx.saved_tensors
                return g * ctx.k, None, g, None

        x = M.tensor(A, requires_grad=True)
        y = M.tensor(B)
        o, s, n = Scale.apply(x, 2.5, y, True)
        o.sum().backward()
        return [o, s, n, x.grad, seen, o.grad_fn]
    both(f)


def test_needs_input_grad_forward_style():
    def f(M):
        seen = []

        class Mul(M.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                seen.append(ctx.needs_input_grad)
                ctx.save_for_backward(a, b)
                return a * b

            @staticmethod
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                seen.append(ctx.needs_input_grad)
                return (g * b if ctx.needs_input_grad[0] else None,
                        g * a if ctx.needs_input_grad[1] else None)
        a = M.tensor(A, requires_grad=True)
        b = M.tensor(B)
        Mul.apply(a, b).sum().backward()
        c = M.tensor(B, requires_grad=True)
        Mul.apply(b, c).sum().backward()
        return [a.grad, c.grad, seen]
    both(f)


def test_saved_tensor_version_checks():
    def out_modified(M):
        x = M.tensor(A, requires_grad=True)
        y = _exp(M).apply(x)
        y.mul_(2)
        y.sum().backward()

    def input_modified(M):
        class Mul(M.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * b

            @staticmethod
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                return g * b, g * a
        a = M.tensor(A, requires_grad=True) * 1
        b = M.tensor(B)
        z = Mul.apply(a, b)
        b.add_(1)
        z.sum().backward()

    def saved_after_free(M):
        x = M.tensor(A, requires_grad=True)
        y = _exp(M).apply(x)
        y.sum().backward()
        return y.grad_fn.saved_tensors

    def save_non_tensor(M):
        class F(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        F.apply(M.tensor(A, requires_grad=True))

    for c in (out_modified, input_modified, saved_after_free, save_non_tensor):
        raises_same(lambda c=c: c(ember), lambda c=c: c(torch))


def test_saved_tensors_with_retain_graph():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        y = _exp(M).apply(x)
        y.sum().backward(retain_graph=True)
        s = y.grad_fn.saved_tensors
        y.sum().backward()
        return [x.grad, s]
    both(f)


def _add_one(M):
    class AddOne(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.add_(1)

        @staticmethod
        def backward(ctx, g):
            return g
    return AddOne


def test_mark_dirty():
    def f(M):
        x = M.tensor(A, requires_grad=True)
        a = x.clone()
        v0 = a._version
        b = _add_one(M).apply(a)
        r = [b is a, a._version - v0, a.grad_fn, b.grad_fn, a]
        (b * 2).sum().backward()
        return r + [x.grad]
    both(f)
    raises_same(lambda: _add_one(ember).apply(ember.ones(2, requires_grad=True)),
                lambda: _add_one(torch).apply(torch.ones(2, requires_grad=True)))

    def no_grad_leaf(M):   # a leaf that needs no grad may be modified
        a = M.ones(2)
        b = _add_one(M).apply(a)
        return [b, b.requires_grad, a._version]
    both(no_grad_leaf)


def test_mark_non_differentiable():
    def f(M):
        class MaxIdx(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = (x > 0).to(M.int64)
                mask = x > 0
                ctx.mark_non_differentiable(idx, mask)
                ctx.save_for_backward(mask)
                return x * mask, idx, mask

            @staticmethod
            def backward(ctx, g, gi, gm):
                (mask,) = ctx.saved_tensors
                return g * mask
        x = M.tensor(A, requires_grad=True)
        v, i, m = MaxIdx.apply(x)
        v.sum().backward()
        return [v, i, m, i.requires_grad, i.grad_fn, m.grad_fn, x.grad, v.grad_fn]
    both(f)

    def float_nondiff(M):
        class F(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                a, b = x * 2, x * 3
                ctx.mark_non_differentiable(b)
                return a, b

            @staticmethod
            def backward(ctx, ga, gb):
                return ga * 2 + gb
        x = M.tensor(A, requires_grad=True)
        a, b = F.apply(x)
        (a + b).sum().backward()
        return [b.requires_grad, b.grad_fn, x.grad]
    both(float_nondiff)


def test_materialize_grads():
    for materialize in (True, False):
        def f(M):
            seen = []

            class Two(M.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.set_materialize_grads(materialize)
                    return x * 2, x * 3

                @staticmethod
                def backward(ctx, g1, g2):
                    seen.append([g1, g2])
                    r = 0
                    if g1 is not None:
                        r = r + 2 * g1
                    if g2 is not None:
                        r = r + 3 * g2
                    return r
            x = M.tensor(A, requires_grad=True)
            a, b = Two.apply(x)
            a.sum().backward()
            return [seen, x.grad]
        both(f)


def test_multiple_outputs_and_return_input_unchanged():
    def f(M):
        class Split(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[0].clone(), x[1:].clone()

            @staticmethod
            def backward(ctx, g0, g1):
                return M.cat([g0.unsqueeze(0), g1])
        x = M.tensor(A, requires_grad=True)
        a, b = Split.apply(x)
        (a.sum() * 2 + (b * b).sum()).backward()
        return [a, b, a.grad_fn, a.output_nr, b.output_nr, x.grad]
    both(f)

    def ident(M):
        class Id(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2
        x = M.tensor(A, requires_grad=True)
        y = Id.apply(x)
        r = [y is x, y.grad_fn, x.grad_fn, x._version, y._version, y.is_leaf]
        y.sum().backward()
        return r + [x.grad]
    both(ident)


def test_no_record_without_requires_grad():
    def f(M):
        Exp = _exp(M)
        y1 = Exp.apply(M.tensor(A))
        with M.no_grad():
            y2 = Exp.apply(M.tensor(A, requires_grad=True))

        class Long(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return (x * 2).long()

            @staticmethod
            def backward(ctx, g):
                return g
        y3 = Long.apply(M.tensor(A, requires_grad=True))
        return [y1, y1.grad_fn, y2, y2.grad_fn, y3, y3.grad_fn]
    both(f)


def test_jvp_forward_mode():
    def f(M):
        fa = M.autograd.forward_ad

        class Sq(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                ctx.save_for_forward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

            @staticmethod
            def jvp(ctx, t):
                (x,) = ctx.saved_tensors
                return 2 * x * t

        class OnlyBw(Sq):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def jvp(ctx, t):
                return [ctx.saved_tensors, 2 * t][1]
        out = []
        with fa.dual_level():
            for req in (False, True):
                x = fa.make_dual(M.tensor(A, requires_grad=req), M.tensor(B))
                y = Sq.apply(x)
                out.append(fa.unpack_dual(y).tangent)
                out.append(fa.unpack_dual(OnlyBw.apply(x)).tangent)
        return out
    both(f)
    raises_same(
        lambda: _jvp_missing(ember), lambda: _jvp_missing(torch))


def _jvp_missing(M):
    fa = M.autograd.forward_ad
    with fa.dual_level():
        x = fa.make_dual(M.tensor(A), M.tensor(B))
        _exp(M).apply(x)


def test_once_differentiable():
    def sq(M):
        class Sq(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @_od(M)
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g
        return Sq

    def plain(M):
        x = M.tensor(A, requires_grad=True)
        (g,) = M.autograd.grad(sq(M).apply(x).sum(), x)
        (g2,) = M.autograd.grad(sq(M).apply(x).sum(), x, create_graph=True)
        return [g, g2, g.requires_grad, g2.requires_grad]
    both(plain)

    def double(M):
        x = M.tensor(A, requires_grad=True)
        z = (sq(M).apply(x) ** 2).sum()
        (g,) = M.autograd.grad(z, x, create_graph=True)
        g.sum().backward()
    raises_same(lambda: double(ember), lambda: double(torch))


def test_custom_function_in_double_backward():
    def f(M):
        class Cube(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x ** 2 * g
        x = M.tensor(A, requires_grad=True)
        y = Cube.apply(x)
        (g,) = M.autograd.grad((y * M.tensor(B)).sum(), x, create_graph=True)
        (g2,) = M.autograd.grad((g * g).sum(), x)
        return [g, g2, g.grad_fn]
    both(f)


def _bad(M, res, n_in=1):
    class Bad(M.autograd.Function):
        @staticmethod
        def forward(ctx, *xs):
            return sum(xs[1:], xs[0] * 1)

        @staticmethod
        def backward(ctx, g):
            return res(M, g)
    x = M.tensor([1., 2.], requires_grad=True)
    return Bad.apply(*([x] * n_in))


def test_backward_errors():
    cases = [
        (lambda M, g: g, 2),
        (lambda M, g: (g, g), 1),
        (lambda M, g: M.ones(3), 1),
        (lambda M, g: M.ones(2, 3), 1),
        (lambda M, g: g.tolist(), 1),
        (lambda M, g: "x", 1),
    ]
    for res, n in cases:
        raises_same(lambda: _bad(ember, res, n).sum().backward(),
                    lambda: _bad(torch, res, n).sum().backward())

    def scalar_out(M):
        class S(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.sum()

            @staticmethod
            def backward(ctx, g):
                return g
        S.apply(M.ones(2, requires_grad=True)).backward()
    raises_same(lambda: scalar_out(ember), lambda: scalar_out(torch))

    def grad_for_non_tensor(M):
        class F(M.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g, g
        F.apply(M.ones(2, requires_grad=True), 2.0).sum().backward()
    raises_same(lambda: grad_for_non_tensor(ember), lambda: grad_for_non_tensor(torch))


def test_broadcastable_grads_are_reduced():
    def f(M):
        r = []
        for make in (lambda M, g: M.ones(1, 2), lambda M, g: M.ones(3, 2) * g):
            x = M.tensor([1., 2.], requires_grad=True)
            _bad(M, make).sum().backward()
            r.append(x.grad)
        return r
    # the returned grads reach a fresh leaf each time; compare the reduced shapes/values
    both(lambda M: [_grad_of(M, lambda M, g: M.ones(1, 2)),
                    _grad_of(M, lambda M, g: M.ones(3, 2) * g)])


def _grad_of(M, res):
    class F(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return res(M, g)
    x = M.tensor([1., 2.], requires_grad=True)
    F.apply(x).sum().backward()
    return x.grad


def test_function_instantiation_warns_and_legacy_call_raises():
    import warnings
    for M in (ember, torch):
        Exp = _exp(M)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            Exp()
        assert any(issubclass(x.category, DeprecationWarning) for x in w)
    msgs = []
    for M in (ember, torch):
        try:
            _exp(M)()(M.ones(1))
        except RuntimeError as e:
            msgs.append(str(e).replace("#torch.", "#ember."))
    assert len(msgs) == 2 and msgs[0] == msgs[1]
