"""Disagreements the issue-7 fuzzer extension found (dtypes, NumPy scalars, out=, overlapping
writes), each fixed in ember and pinned here against torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

LIBS = (torch, ember)


def _outcome(fn, M):
    try:
        r = fn(M)
    except Exception as e:  # noqa: BLE001 - compared
        return ("raise", type(e).__name__, str(e).replace("torch", "ember"))
    return ("ok", _plain(r))


def _plain(r):
    if isinstance(r, (torch.Tensor, ember.Tensor)):
        return (str(r.dtype).split(".")[-1], r.detach().numpy().tolist())
    if isinstance(r, (tuple, list)):
        return [_plain(x) for x in r]
    return r


def same(fn):
    a, b = _outcome(fn, torch), _outcome(fn, ember)
    assert a == b


@pytest.mark.parametrize("dt", ["int64", "bool", "float16", "complex128", "float32",
                                "complex64", "float64"])
def test_abs_complex_out_dtypes(dt):
    # abs of complex64 writes its float result into a float or its own complex dtype
    same(lambda M: M.abs(M.tensor([3 + 4j]), out=M.zeros(1, dtype=getattr(M, dt))))


OUT_FW = {
    "add_dual_in": lambda M, d, mk: M.add(d, 1, out=M.zeros(2, dtype=M.float64)),
    "sum_dual_in": lambda M, d, mk: M.sum(d, 0, out=M.zeros((), dtype=M.float64)),
    "add_dual_out": lambda M, d, mk: M.add(M.ones(2, dtype=M.float64), 1, out=mk()),
    "lt": lambda M, d, mk: M.lt(d, 1, out=M.zeros(2, dtype=M.bool)),
    "cumsum": lambda M, d, mk: M.cumsum(d, 0, out=M.zeros(2, dtype=M.float64)),
    "zeros": lambda M, d, mk: M.zeros(2, out=mk(), dtype=M.float64),
    "arange": lambda M, d, mk: M.arange(2., out=mk()),
    "exp_written": lambda M, d, mk: (lambda o: (_outcome(
        lambda M_: M.exp(d, out=o), M)[:2], o))(M.zeros(2, dtype=M.float64)),
}


@pytest.mark.parametrize("name", sorted(OUT_FW))
def test_out_refuses_forward_ad(name):
    # PyTorch's out= functions run, then refuse dual inputs or outputs (out is written)
    def f(M):
        fw = M.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(M.tensor([1., 2.], dtype=M.float64),
                             M.tensor([1., 1.], dtype=M.float64))

            def mk():
                return fw.make_dual(M.zeros(2, dtype=M.float64), M.ones(2, dtype=M.float64))
            return OUT_FW[name](M, d, mk)
    same(f)


def test_detach_inplace_is_a_no_op_in_inference_mode():
    def f(M):
        x = M.ones(2, requires_grad=True)
        y = x * 2
        v = y[:1]
        with M.inference_mode():
            x.detach_()
            y.detach_()
            v.detach_()
        return x.requires_grad, y.grad_fn is None, v.grad_fn is None, v._version
    same(f)


def test_view_of_leaf_that_stopped_requiring_grad():
    # the view was made while its base required grad: it still does, and its base is a leaf
    def f(M):
        t0 = M.tensor([[[0.9]]], dtype=M.float64, requires_grad=True)
        t1 = t0.diagonal(offset=0, dim1=2, dim2=1)
        t0.requires_grad_(False)
        t1 *= M.tensor([0.4], dtype=M.float64)
        return t1
    same(f)


def test_scatter_inplace_refuses_a_leaf_before_checking_dtypes():
    same(lambda M: M.tensor([1.3], requires_grad=True).scatter_(
        0, M.tensor([0, 1]), M.tensor([1.3], dtype=M.float64)))


def test_cumprod_double_backward_of_empty():
    def f(M):
        t0 = M.empty((0,), dtype=M.float64, requires_grad=True)
        t2 = t0.reciprocal().cumprod(dim=0)
        g, = M.autograd.grad((t2 * 2).sum(), [t0], create_graph=True)
        return g
    same(f)


def test_logcumsumexp_tangent_of_empty():
    # PyTorch's own formula raises here (a max over the empty dim); ember's tangent is empty
    fw = ember.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(ember.zeros(0, 1, dtype=ember.float64),
                         ember.zeros(0, 1, dtype=ember.float64))
        r = ember.logcumsumexp(d, 0)
        assert fw.unpack_dual(r).tangent.shape == (0, 1)


def test_custom_function_node_repr():
    def f(M):
        class Sq(M.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * x

            @staticmethod
            def backward(ctx, g):
                return g
        r = repr(Sq.apply(M.ones(1, requires_grad=True)).grad_fn)
        return r.split(" object at ")[0].replace("torch.", "ember.")
    same(f)


def test_numpy_scalar_operands():
    # a NumPy scalar is a Python number in promotion (float32 stays float32)
    for s in (np.float64(1.5), np.float32(2.0), np.float16(1.25), np.int64(3), np.int8(2)):
        same(lambda M, s=s: M.tensor([1.5, -2.0]) * s)
        same(lambda M, s=s: s + M.tensor([1, -2]))
        same(lambda M, s=s: M.tensor([7, -5]) // s)


def test_scatter_add_inplace_refuses_a_leaf_before_checking_dtypes():
    same(lambda M: M.tensor([[0.7 + 0.7j]], dtype=M.complex128, requires_grad=True)
         .scatter_add_(-1, M.tensor([[0]]), M.tensor([[1j]], dtype=M.complex64)))


def test_detach_inplace_of_an_inference_tensor_is_a_no_op():
    def f(M):
        with M.inference_mode():
            t0 = M.tensor(0.3, requires_grad=True)
            v = M.ones(3)[1:]
        t0.detach_()
        v.detach_()
        return t0.requires_grad
    same(f)


def test_copy_into_the_same_elements_of_an_expanded_tensor():
    # PyTorch's copy_ returns at once when source and destination view the same elements
    def f(M):
        t0 = M.tensor([[0.9]])
        with M.no_grad():
            t1 = t0.expand(2, 2, -1)
            t1[:, -2:2:1, :] = t1
            t1[:, :, :].copy_(t1)
        return t0, t1
    same(f)
    same(lambda M: M.ones(1).expand(3)[:].copy_(M.ones(1).expand(3)))   # other memory: refused


def test_setitem_of_a_0dim_tensor_into_one_element_copies():
    # PyTorch's copy_to: equal sizes copy (a real value's gradient is the real part), only a
    # 0-dim value into a bigger region fills (and refuses a complex gradient for a real value)
    def f(M, key, cg):
        t0 = M.tensor(0.7, dtype=M.float64, requires_grad=True)
        t2 = M.sigmoid(M.tensor([(-0.6 + 0.4j), (-0.8 - 0.8j)], dtype=M.complex64))
        t2[key] = t0
        loss = (t2.rsqrt().cos() * M.tensor([1.0, 2.0 + 1j], dtype=M.complex64)).real.sum()
        g, = M.autograd.grad(loss, [t0], create_graph=cg)
        return g, g.grad_fn.name().split("::")[-1] if cg else None
    for key in (1, slice(0, 2)):
        for cg in (False, True):
            same(lambda M, key=key, cg=cg: f(M, key, cg))


def test_double_backward_reaches_prods_saved_result():
    # seeds 1176/2776: prod's backward reads its saved result (grad * result / input, PyTorch's
    # prod_backward without zeros), so a second derivative with respect to that result exists
    def f(M):
        a = M.tensor(0.9, dtype=M.float64, requires_grad=True)
        t2 = a + 0.5
        t5 = M.stack([t2, M.tensor(-1.4, dtype=M.float64), t2], 0).prod(-1, keepdim=True)
        loss = (t5.expand(1, 2) * M.tensor([[-2.3, -1.3]], dtype=M.float64)).sum()
        g, _ = M.autograd.grad(loss, [a, t5], create_graph=True)
        return M.autograd.grad((g * 3).sum(), [a, t5], allow_unused=True)
    same(f)


@pytest.mark.parametrize("real", [False, True])
def test_as_strided_writes_into_a_result_laid_out_like_its_transposed_input(real):
    # seed 1614: a scalar op on a transposed tensor owns column-major memory; as_strided counts
    # its offset in that memory and an in-place op through it writes there
    def fn(M):
        z = np.float64(-0.75) + M.zeros(2, 3, dtype=M.complex128).t()
        v = z.real if real else z
        v.as_strided((1, 1), (1, 1), 3).neg_()
        return z
    same(fn)


def test_sgn_double_backward_reaches_its_saved_result():
    # seed 4635: sgn's VJP is PyTorch's (g - r^2 conj(g)) / 2|x|, so the gradient of the
    # first gradient with respect to sgn's own output (requested as an input) is torch's
    def run(M):
        x = M.tensor([1.2 + 0.3j, 0j, -0.5 + 2j], dtype=M.complex128, requires_grad=True)
        r = M.sgn(x)
        w = M.tensor([1 + 0.5j, 2 - 1j, -0.7 + 0.2j], dtype=M.complex128)
        g, gr = M.autograd.grad((r * w).real.sum(), [x, r], create_graph=True)
        hx, hr = M.autograd.grad((g * w).real.sum(), [x, r])
        return g.grad_fn.name(), [t.detach().numpy() for t in (g, hx, hr)]
    (tn, tv), (en, ev) = run(torch), run(ember)
    assert tn == en == "MaskedFillBackward0"
    for a, b in zip(tv, ev):
        # at x = 0 the second derivatives are NaN (0/0 through the division), as in torch
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=0)
    assert np.isnan(ev[1][1]) and np.isnan(ev[2][1])


def test_sgn_tangent_is_its_gradient_map():
    def fn(M):
        import torch.autograd.forward_ad as tfw

        import ember.autograd.forward_ad as efw
        fw = tfw if M is torch else efw
        with fw.dual_level():
            x = fw.make_dual(M.tensor([1.2 + 0.3j, 0j], dtype=M.complex128),
                             M.tensor([0.3 - 1j, 1 + 1j], dtype=M.complex128))
            return fw.unpack_dual(M.sgn(x)).tangent
    same(fn)


@pytest.mark.parametrize("dt", ["int64", "int32", "uint8", "bool", "float32", "complex64"])
@pytest.mark.parametrize("alpha", [0.5, 1.7, -1.5, 2, True, 1 + 1j])
def test_index_add_converts_alpha_to_the_tensors_type(dt, alpha):
    # seed 7767: an int tensor's alpha=0.5 is 0 (PyTorch converts the Scalar to int64_t)
    def fn(M):
        d = getattr(M, dt)
        src = M.ones(1, dtype=d) * (3 if dt != "bool" else True)
        return M.zeros(2, dtype=d).index_add_(0, M.tensor([0]), src, alpha=alpha)
    same(fn)


@pytest.mark.parametrize("dt", ["float64", "float32"])
def test_std_of_a_constant_matches_torchs_two_algorithms(dt):
    # seed 9097: one output element is PyTorch's two-pass variance (a constant's std can be
    # a tiny nonzero, and std's tangent follows it); several outputs are Welford's (exact 0)
    def fn(M):
        d = getattr(M, dt)
        x = M.full((3,), 1.4, dtype=d)
        return [x.std(), x.view(1, 3).std(1), x.expand(2, 3).std(), M.full((2, 3), 1.4, dtype=d)
                .std(1), M.full((3, 2), 1.4, dtype=d).var(0), M.full((2, 6), 0.1, dtype=d).std(1)]
    same(fn)


_INFERENCE_INPLACE = {
    "div_self": lambda M, a, b, n: a.div_(a), "add_inference": lambda M, a, b, n: a.add_(b),
    "add_normal": lambda M, a, b, n: a.add_(n), "mul_number": lambda M, a, b, n: a.mul_(2),
    "sub_number": lambda M, a, b, n: a.sub_(1), "iadd_number": lambda M, a, b, n: a.__iadd__(2),
    "fill_": lambda M, a, b, n: a.fill_(1.0), "zero_": lambda M, a, b, n: a.zero_(),
    "clamp_": lambda M, a, b, n: a.clamp_(0, 1), "pow_number": lambda M, a, b, n: a.pow_(2),
    "exp_": lambda M, a, b, n: a.exp_(), "eq_number": lambda M, a, b, n: a.eq_(1),
    "lerp_": lambda M, a, b, n: a.lerp_(b, 0.5), "copy_inference": lambda M, a, b, n: a.copy_(b),
    "copy_normal": lambda M, a, b, n: a.copy_(n), "setitem": lambda M, a, b, n: a.__setitem__(
        0, 1.0), "masked_fill_": lambda M, a, b, n: a.masked_fill_(a > 1, 1.0),
    "index_add_": lambda M, a, b, n: a.index_add_(0, M.tensor([0]), b),
    "scatter_value": lambda M, a, b, n: a.scatter_(0, M.tensor([0]), 1.0),
    "atan2_": lambda M, a, b, n: a.atan2_(b), "fmod_number": lambda M, a, b, n: a.fmod_(2),
}


@pytest.mark.parametrize("case", sorted(_INFERENCE_INPLACE))
def test_inplace_on_an_inference_leaf_refuses_as_torchs_dispatch(case):
    # seed 10471: an op whose arguments are all inference tensors never reaches autograd (they
    # carry no autograd keys): the inference refusal, not the leaf one; a normal tensor among
    # the arguments (a number add_/mul_ wraps, an index, a mask) brings autograd's check first
    def fn(M):
        with M.inference_mode():
            a = M.tensor([1.0, 2.0], requires_grad=True)
            b = M.tensor([1.0, 2.0])
        return _INFERENCE_INPLACE[case](M, a, b, M.tensor([1.0, 2.0]))
    same(fn)


_COUNTED = {
    "detach.mul_": (lambda a: a.detach(), lambda t: t.mul_(2)),
    "detach.copy_": (lambda a: a.detach(), lambda t: t.copy_(t.new_ones(()))),
    "detach.fill_": (lambda a: a.detach(), lambda t: t.fill_(3.0)),
    "detach.zero_": (lambda a: a.detach(), lambda t: t.zero_()),
    "detach.t_": (lambda a: a.detach(), lambda t: t.t_()),
    "detach.detach.mul_": (lambda a: a.detach().detach(), lambda t: t.mul_(2)),
    "data.mul_": (lambda a: a.data, lambda t: t.mul_(2)),
    "detach.view.mul_": (lambda a: a.detach().view(4), lambda t: t.mul_(2)),
    "detach[0].mul_": (lambda a: a.detach()[0], lambda t: t.mul_(2)),
    "detach.setitem": (lambda a: a.detach(), lambda t: t.__setitem__(0, 1.0)),
    "view.mul_": (lambda a: a.view(4), lambda t: t.mul_(2)),
}


@pytest.mark.parametrize("case", sorted(_COUNTED))
def test_detach_of_an_inference_tensor_takes_inplace_ops(case):
    # seed 11802: PyTorch's detach() (and .data) of an inference tensor, made outside inference
    # mode, is an inference tensor with a version counter of its own: in-place ops on it work
    # there (and write the shared memory); its views, and the tensor itself, still refuse
    make, op = _COUNTED[case]

    def fn(M):
        with M.inference_mode():
            a = M.ones(2, 2, dtype=M.float64)
        t = make(a)
        op(t)
        out = [t._version, t.is_inference(), a.clone()]
        e = t.detach()
        e.add_(1)   # a detach of it: a fresh counter again
        with M.inference_mode():
            t.add_(1)   # no count in inference mode
        return out + [e._version, t._version, a.clone()]
    same(fn)


def test_setitem_of_an_int_on_a_0dim_tensor():
    same(lambda M: M.zeros(()).__setitem__(0, 5.0))
