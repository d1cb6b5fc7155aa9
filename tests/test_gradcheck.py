"""gradcheck / gradgradcheck: pass on correct derivatives, catch planted wrong ones, and raise
the same precondition errors (and mismatch messages) as torch."""
import warnings

import numpy as np
import pytest
import torch
from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError

import ember
from ember.autograd import GradcheckError, gradcheck, gradgradcheck
from helpers import raises_same

RNG = np.random.default_rng(7)
A = RNG.random(4) + 0.5
B = RNG.random((3, 4)) + 0.5
C = RNG.standard_normal((4, 2))


def leaf(m, a):
    return m.tensor(a, dtype=m.float64, requires_grad=True)


# custom Functions, written once for either library ----------------------------------------

def make_cube(m, factor=3.0, jvp_factor=3.0):
    """x**3 with a backward scaled by factor/3 (3 = correct) and a forward-AD rule."""
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.x = x
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return factor * x ** 2 * g

        @staticmethod
        def jvp(ctx, t):
            return jvp_factor * ctx.x ** 2 * t
    return Cube


def make_mul(m):
    """x * y with two inputs and two outputs (x*y and x+y)."""
    class MulAdd(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y, x + y

        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            return g1 * y + g2, g1 * x + g2
    return MulAdd


def make_double_wrong(m):
    """x**3 whose first derivative is right but whose second derivative is off by 5/6."""
    class Square3(m.autograd.Function):          # 3 x**2, with a wrong backward
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 3 * x ** 2

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 5 * x * g

    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return Square3.apply(x) * g
    return Cube


# passing checks -------------------------------------------------------------------------------

OPS = [
    (lambda m: (lambda x: x.exp() * x.sin()), (A,)),
    (lambda m: (lambda x: (x ** 2).sum()), (A,)),
    (lambda m: (lambda x, y: x * y), (A, B)),                       # broadcasting
    (lambda m: (lambda y, w: m.matmul(y, w).tanh()), (B, C)),
    (lambda m: (lambda y: (y.sum(0), y.mean(1, keepdim=True))), (B,)),
    (lambda m: (lambda y: y.t()[1:3] / 2), (B,)),
    (lambda m: (lambda x, y: m.cat([x.unsqueeze(0), y]).log()), (A, B)),
    (lambda m: (lambda y: m.softmax(y, dim=1)), (B,)),
    (lambda m: (lambda x: x.sqrt().reciprocal()), (A,)),
]


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("f,arrs", OPS)
def test_gradcheck_passes_on_ops(f, arrs, fast_mode):
    assert gradcheck(f(ember), tuple(leaf(ember, a) for a in arrs), fast_mode=fast_mode)


@pytest.mark.parametrize("f,arrs", OPS[:5])
def test_gradcheck_forward_ad_on_ops(f, arrs):
    for fast in (False, True):
        assert gradcheck(f(ember), tuple(leaf(ember, a) for a in arrs), check_forward_ad=True,
                         fast_mode=fast)


@pytest.mark.parametrize("f,arrs", OPS[:6])
def test_gradgradcheck_passes_on_ops(f, arrs):
    inputs = tuple(leaf(ember, a) for a in arrs)
    assert gradgradcheck(f(ember), inputs)
    assert gradgradcheck(f(ember), inputs, fast_mode=True, gen_non_contig_grad_outputs=True)


def test_gradcheck_noncontiguous_and_non_tensor_args():
    y = leaf(ember, B).detach().t().requires_grad_()         # a non-contiguous leaf
    assert not y.is_contiguous()
    assert gradcheck(lambda y, k: (y * k).sin(), (y, 2.5))
    assert gradcheck(lambda y, k: (y * k).sin(), (y, leaf(ember, B.T).detach()))
    np.testing.assert_array_equal(y.detach().numpy(), B.T)   # restored after perturbation


def test_gradcheck_custom_functions():
    x, y = leaf(ember, A), leaf(ember, A[::-1].copy())
    assert gradcheck(make_cube(ember).apply, (x,), check_forward_ad=True)
    assert gradcheck(make_cube(ember).apply, (x,), check_forward_ad=True, fast_mode=True)
    assert gradcheck(make_mul(ember).apply, (x, y))
    assert gradcheck(make_mul(ember).apply, (x, y), fast_mode=True)
    assert gradgradcheck(make_mul(ember).apply, (x, y))
    assert gradgradcheck(lambda x: make_cube(ember).apply(x), (x,))


def test_gradcheck_complex():
    z = ember.tensor(A + 1j * A[::-1], requires_grad=True)
    x = leaf(ember, A)
    assert gradcheck(lambda z: (z * z).abs(), (z,))
    assert gradcheck(lambda z: z * z.conj() + z.exp(), (z,))
    assert gradcheck(lambda z: z * z.conj() + z.exp(), (z,), fast_mode=True)
    assert gradcheck(lambda x: x * (1 + 2j), (x,))
    assert gradcheck(lambda z: z * z, (z,), check_forward_ad=True)


# planted errors --------------------------------------------------------------------------------

def _messages(call):
    """(ember message, torch message) of the GradcheckError each library raises."""
    out = []
    for m in (ember, torch):
        with pytest.raises(GradcheckError if m is ember else TorchGradcheckError) as ei:
            call(m)
        out.append(str(ei.value))
    return out[0].replace("torch.", "ember."), out[1].replace("torch.", "ember.")


def test_wrong_backward_is_caught_with_torch_message():
    def call(m):
        m.autograd.gradcheck(make_cube(m, factor=4.5).apply, (leaf(m, A),))
    e, t = _messages(call)
    assert e.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "\nanalytical:tensor([[" in e
    assert e == t


def test_wrong_backward_fast_mode():
    def call(m):
        m.autograd.gradcheck(make_cube(m, factor=4.5).apply, (leaf(m, A),), fast_mode=True)
    e, t = _messages(call)
    assert e.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "computed \nin fast mode" in e and "\nNumerical:\n tensor([[" in e
    # the random projection vectors differ (torch's RNG), but the slow-mode part is the same
    assert e[e.index("\nThe above"):e.index("The max")] == t[t.index("\nThe above"):
                                                             t.index("The max")]


def test_wrong_backward_second_input_and_output():
    class Bad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y, x + y

        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            return g1 * y + g2, g1 * x + 2 * g2          # d(x+y)/dy is 1, not 2
    x, y = leaf(ember, A), leaf(ember, A + 1)
    with pytest.raises(GradcheckError, match="mismatch for output 1 with respect to input 1,"):
        gradcheck(Bad.apply, (x, y))
    assert gradcheck(Bad.apply, (x, y), raise_exception=False) is False
    assert gradcheck(Bad.apply, (x, y), fast_mode=True, raise_exception=False) is False


def test_raise_exception_false_returns_false():
    x = leaf(ember, A)
    assert gradcheck(make_cube(ember, factor=3.3).apply, (x,), raise_exception=False) is False
    assert gradcheck(make_cube(ember).apply, (x,), raise_exception=False) is True
    # a tolerance wide enough accepts the wrong factor
    assert gradcheck(make_cube(ember, factor=3.0001).apply, (x,), rtol=1e-3)


def test_wrong_forward_ad_is_caught():
    x = leaf(ember, A)
    cube = make_cube(ember, jvp_factor=2.0).apply
    assert gradcheck(cube, (x,))                                   # backward is fine
    with pytest.raises(GradcheckError, match="^Jacobian computed with forward mode mismatch "
                                             "for output 0 with respect to input 0,\nnumerical:"):
        gradcheck(cube, (x,), check_forward_ad=True)
    with pytest.raises(GradcheckError, match="computed with forward mode mismatch"):
        gradcheck(cube, (x,), check_forward_ad=True, fast_mode=True)
    assert gradcheck(cube, (x,), check_forward_ad=True, check_backward_ad=False,
                     raise_exception=False) is False


def test_backward_not_multiplied_by_grad_output():
    def call(m):
        class NoMul(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return 2 * g + (g == 0).all().to(g.dtype) * 1e-3   # nonzero for zero grads
        m.autograd.gradcheck(NoMul.apply, (leaf(m, A),), check_undefined_grad=False)
    e, t = _messages(call)
    assert e == t == "backward not multiplied by grad_output"


def test_nondeterministic_backward():
    def call(m):
        count = [0]

        class Flaky(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                count[0] += 1
                return g * (2 + 1e-9 * count[0])
        m.autograd.gradcheck(Flaky.apply, (leaf(m, A),))
    e, t = _messages(call)
    assert e == t and e.startswith("Backward is not reentrant")


def test_gradgradcheck_catches_wrong_double_backward():
    x = leaf(ember, A)
    cube = make_double_wrong(ember).apply
    assert gradcheck(cube, (x,))
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to "
                                             "input 0,\nnumerical:"):
        gradgradcheck(cube, (x,))
    assert gradgradcheck(cube, (x,), raise_exception=False) is False
    assert gradgradcheck(cube, (x,), fast_mode=True, raise_exception=False) is False
    go = ember.tensor(RNG.random(4), requires_grad=True)
    assert gradgradcheck(cube, (x,), (go,), raise_exception=False) is False
    # torch's version of the same planted error gives the same message
    e, t = _messages(lambda m: m.autograd.gradgradcheck(
        make_double_wrong(m).apply, (leaf(m, A),), (m.tensor(np.linspace(-1, 1, 4)),)))
    assert e == t


def test_no_differentiable_outputs():
    raises_same(lambda: gradcheck(lambda x: x.detach() * 2, (leaf(ember, A),)),
                lambda: torch.autograd.gradcheck(lambda x: x.detach() * 2, (leaf(torch, A),)))
    for fast in (False, True):
        assert gradcheck(lambda x: x.detach()[:0] * 2, (leaf(ember, A),), fast_mode=fast)
        assert not gradcheck(lambda x: x.detach() * 2, (leaf(ember, A),), fast_mode=fast,
                             raise_exception=False)


# preconditions and flags ----------------------------------------------------------------------

def test_single_precision_warns():
    x = ember.tensor(A, dtype=ember.float32, requires_grad=True)
    with pytest.warns(UserWarning, match=r"^Input #0 requires gradient and is not a double "
                                         r"precision floating point or complex\. This check "
                                         r"will likely fail"):
        gradcheck(lambda x: x * 2, (x,), raise_exception=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradcheck(lambda x: x * 2, (leaf(ember, A),))


@pytest.mark.parametrize("call", [
    lambda m, ac: ac.gradcheck(lambda x: x * 2, (m.tensor(A),)),
    lambda m, ac: ac.gradcheck(lambda x: x * 2, m.tensor(A, dtype=m.float64).expand(2, 4)
                               .requires_grad_()),
    lambda m, ac: ac.gradcheck(lambda x: x * 2, (m.tensor(A[:1]).expand(3).requires_grad_(),)),
    lambda m, ac: ac.gradcheck(lambda x: x, (leaf(m, A),), check_backward_ad=False),
    lambda m, ac: ac.gradcheck(lambda x: x, (leaf(m, A),), check_backward_ad=False,
                               check_forward_ad=True, check_batched_grad=True),
    lambda m, ac: ac.gradcheck(lambda x: x, (leaf(m, A),), check_batched_forward_grad=True),
    lambda m, ac: ac.gradgradcheck(lambda x: x, (leaf(m, A),), check_rev_over_rev=False),
    lambda m, ac: ac.gradgradcheck(lambda x: x, (leaf(m, A),), check_rev_over_rev=False,
                                   check_fwd_over_rev=True),
    lambda m, ac: ac.gradgradcheck(lambda x: x, (leaf(m, A),), check_rev_over_rev=False,
                                   check_fwd_over_rev=True, check_undefined_grad=False,
                                   check_batched_grad=True),
])
def test_precondition_errors_match_torch(call):
    raises_same(lambda: call(ember, ember.autograd), lambda: call(torch, torch.autograd))


def test_batched_checks():
    x = leaf(ember, A)
    assert gradcheck(lambda x: x * 2, (x,), check_batched_grad=True)
    assert gradgradcheck(lambda x: x * x.sin(), (x,), check_batched_grad=True)
    with pytest.raises(NotImplementedError, match="vmap"):
        gradcheck(lambda x: x * 2, (x,), check_forward_ad=True, check_batched_forward_grad=True)


def test_exports():
    from ember.autograd.gradcheck import GradcheckError as E2
    assert E2 is GradcheckError and issubclass(GradcheckError, RuntimeError)
    assert ember.autograd.gradcheck.GradcheckError is GradcheckError
    assert ember.autograd.gradcheck is gradcheck
    assert ember.autograd.gradgradcheck is gradgradcheck
