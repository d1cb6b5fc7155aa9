"""Disagreements the issue-7 fuzzer extension found (dtypes, NumPy scalars, out=, overlapping
writes), each fixed in ember and pinned here against torch."""
from __future__ import annotations

import warnings

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


@pytest.mark.parametrize("fn", ["amax", "amin"])
@pytest.mark.parametrize("dim", [-1, 0, (-1,), (), [-2]])
@pytest.mark.parametrize("shape", [(0,), (2, 0)])
def test_amax_names_the_empty_dim_as_given(fn, dim, shape):
    # seed 12943: "Expected reduction dim -1 to have non-zero size" keeps the user's -1
    same(lambda M: getattr(M, fn)(M.zeros(shape), dim))


_OUT_ORDER = {
    "atan2": lambda M, x, c: M.atan2(x, c, out=x), "atan2_c": lambda M, x, c: M.atan2(c, c, out=c),
    "fmod": lambda M, x, c: M.fmod(x, c, out=x), "maximum": lambda M, x, c: M.maximum(x, c, out=x),
    "hypot": lambda M, x, c: M.hypot(c, x, out=x), "abs": lambda M, x, c: M.abs(c, out=x),
    "remainder": lambda M, x, c: M.remainder(c, x, out=x),
    "copysign": lambda M, x, c: M.copysign(c, x, out=x),
}


@pytest.mark.parametrize("case", sorted(_OUT_ORDER))
def test_out_cast_refused_before_the_kernels_dtype_dispatch(case):
    # seed 13057: TensorIterator's "can't be cast to the desired output type" comes before a
    # kernel's "not implemented for 'ComplexDouble'"; an op's own earlier check stays first
    same(lambda M: _OUT_ORDER[case](M, M.ones(2, dtype=M.float64),
                                    M.ones(2, dtype=M.complex128)))


@pytest.mark.parametrize("dim", [0, -1, (0,), [-1], ()])
def test_amax_of_a_0dim_tensor(dim):
    same(lambda M: [M.amax(M.tensor(-1.5), dim, keepdim=True), M.amin(M.tensor(2.0), dim)])


def _chain(fn) -> list:
    """The grad_fn names from ``fn`` down its first edges (AccumulateGrad's prefix dropped)."""
    out = []
    while fn is not None:
        out.append(fn.name().split("::")[-1])
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt else None
    return out


@pytest.mark.parametrize("size", [0, 1, 3])
def test_indexing_skips_a_slice_only_as_written(size):
    # seeds 5162, 5686, 5776: PyTorch skips a slice when it is written to start at 0 with step 1
    # and stop at or past the end, before wrapping: `:-1` on an empty dim still records
    # SliceBackward0 (it takes everything), `0:5` on 3 elements does not
    keys = [slice(None, -1), slice(0, -1, 1), slice(0, 5), slice(None, size), slice(-size, None),
            slice(0, 0), slice(None, None, 2)]
    for k in keys:
        for key in ((k,), (None, k), (Ellipsis, k, 0), (k, [0, 0]), (None, k, ember.tensor(True))):
            def f(M, key=key):
                key = tuple(torch.tensor(True) if M is torch and isinstance(i, ember.Tensor)
                            else i for i in key)
                return _chain((M.zeros(size, 2, requires_grad=True) * 1)[key].grad_fn)
            same(f)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("out_dt", ["int64", "bool", "uint8", "float32", "float16"])
@pytest.mark.parametrize("dt", [None, "float64", "int64"])
@pytest.mark.parametrize("in_dt", ["float64", "complex64", "int64", "float16"])
def test_mean_out_dtypes(in_dt, dt, out_dt):
    # seeds 7891, 10380: mean.out computes in out's dtype as sum_out(...).div_(n): an integer or
    # bool out gets the sum, then the division refuses a (default-dtype) Float result; a given
    # dtype must be out's own
    def f(M):
        x = M.tensor([[1.7, 2.6, 3.1], [4.2, 5.9, 6.4]], dtype=getattr(M, in_dt))
        o = M.zeros(0, dtype=getattr(M, out_dt))
        kw = {} if dt is None else {"dtype": getattr(M, dt)}
        return _outcome(lambda M_: M.mean(x, 0, out=o, **kw), M), _plain(o)
    same(f)


def _F(x):
    return (torch if isinstance(x, torch.Tensor) else ember).nn.functional


SELECTING = {
    "sort": lambda x: x.sort(-1, descending=True),
    "topk": lambda x: x.topk(2),
    "max_dim": lambda x: x.max(1),
    "min_dim_keepdim": lambda x: x.min(1, keepdim=True),
    "kthvalue": lambda x: x.kthvalue(2, 1),
    "median_dim": lambda x: x.median(1),
    "nanmedian_dim": lambda x: x.nanmedian(1),
    "mode": lambda x: x.mode(1),
    "cummax": lambda x: x.cummax(1),
    "cummin": lambda x: x.cummin(1),
    "max_pool2d": lambda x: _F(x).max_pool2d(x.unsqueeze(0), 2, return_indices=True),
    "adaptive_max_pool1d": lambda x: _F(x).adaptive_max_pool1d(x, 2, return_indices=True),
}


@pytest.mark.parametrize("name", sorted(SELECTING))
def test_selecting_ops_save_their_indices(name):
    # seed 7599: PyTorch saves the indices output for backward, so changing it in place fails
    # the backward with the version error (ember read the changed positions)
    def f(M):
        x = M.tensor([[-0.5, -0.8, 0.3, 1.2], [-0.9, 0.8, 0.1, 0.4]], requires_grad=True)
        v, i = SELECTING[name](x * 1)
        i.add_(1)
        return v.sum().backward()
    same(f)

    def g(M):
        x = M.tensor([[-0.5, -0.8, 0.3, 1.2], [-0.9, 0.8, 0.1, 0.4]], requires_grad=True)
        v, i = SELECTING[name](x)
        return v.grad_fn._saved_indices if hasattr(v.grad_fn, "_saved_indices") else i
    same(g)


@pytest.mark.parametrize("data", [[[1.5, -2.0, 0.5]], [[1.5, 0.0, 0.5, 2.0]],
                                  [[0.0, 2.0], [1.0, 3.0]], [[2.0]]])
@pytest.mark.parametrize("dim", [0, -1])
def test_cumprod_double_backward(data, dim):
    # seed 5630: without zeros cumprod's backward reads its saved result (a second derivative
    # with respect to that output exists); with zeros under create_graph it is PyTorch's exact
    # O(n^2) formula (the masked one lost the derivative at the zero); one element: grad itself
    def f(M):
        x = M.tensor(data, dtype=M.complex128, requires_grad=True)
        y = x * (1 + 0.5j)
        r = y.cumprod(dim)
        w = M.tensor(np.arange(r.numel()).reshape(r.shape) % 3 + 0.5j, dtype=r.dtype)
        g, = M.autograd.grad((r * w).real.sum(), y, create_graph=True)
        if not g.requires_grad:
            return g
        hs = M.autograd.grad((g * g.conj()).real.sum(), [x, r], allow_unused=True)
        return [g.grad_fn.name().split("::")[-1]] + [h.resolve_conj() for h in hs
                                                     if h is not None]
    a, b = f(torch), f(ember)
    if isinstance(a, torch.Tensor):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-12)
        return
    assert a[0] == b[0] and len(a) == len(b)
    for p, q in zip(a[1:], b[1:]):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["abs", "absolute", "deg2rad", "rad2deg", "nan_to_num", "frexp",
                                  "isinf", "isfinite", "isnan", "exp", "mean", "sum"])
@pytest.mark.parametrize("shape", [(2, 3), ()])
def test_ops_built_on_out_refuse_an_inference_tensor_that_requires_grad(name, shape):
    # seed 16154: outside inference mode, PyTorch's abs (deg2rad, nan_to_num, frexp; isinf and
    # isfinite through abs) writes through its own out= call, which refuses an input requiring
    # grad; kernels that are not built that way run and record nothing
    def fn(M):
        with M.inference_mode():
            x = (M.arange(6.0, dtype=M.float64).reshape(2, 3)[0, 0] if not shape else
                 M.arange(6.0, dtype=M.float64).reshape(shape)).clone().requires_grad_()
        r = getattr(M, name)(x)
        r = r if isinstance(r, (tuple, list)) else [r]
        return [(t.requires_grad, t.grad_fn is None, t.detach()) for t in r]
    same(fn)


@pytest.mark.parametrize("multi", [True, False])
def test_register_hook_on_a_view_changed_in_place(multi):
    # seed 18387: the hook goes on the view's regenerated history, and a multi-output view
    # (split) changed through its base refuses as its grad_fn does
    def fn(M):
        t0 = M.ones(2, 3, dtype=M.float64, requires_grad=True)
        t5 = t0 * 1
        t6 = t5.split([1, 2], -1)[0] if multi else t5[:, :1]
        t5[M.tensor([0])] = 2
        log = []
        if M is torch and not multi:
            t6.grad_fn   # (torch 2.13 crashes in register_hook here unless grad_fn was read)
        t6.register_hook(lambda g: log.append(g.sum().item()))
        (t6 * 3).sum().backward()
        return log, t0.grad
    if multi:   # torch crashes unless grad_fn was read, which raises: ember's register_hook
        with pytest.raises(RuntimeError, match="Output 0 of SplitWithSizes is a view"):
            fn(ember)
    else:
        same(fn)


_VIEW_LEAF_OPS = {"mul_": lambda M, t: t.mul_(2), "adv_setitem": lambda M, t: t.__setitem__(
    M.tensor([0, 2]), 2.0), "setitem": lambda M, t: t.__setitem__(0, 2.0),
    "index_add_": lambda M, t: t.index_add_(0, M.tensor([1]), M.ones(1, dtype=M.float64))}


@pytest.mark.parametrize("read", [False, True])
@pytest.mark.parametrize("case", sorted(_VIEW_LEAF_OPS))
def test_view_whose_base_gained_history_is_a_leaf_until_read(case, read):
    # seeds 19377, 19995, 21134: a view made before its base gained history in place has no
    # grad_fn until something reads it (regenerating it): PyTorch's check_inplace reads
    # is_leaf without regenerating, so an in-place op on the view refuses as on a leaf
    def fn(M):
        t0 = M.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=M.float64)
        t3 = t0.view(4)
        t0.div_(M.tensor([[1.3]], dtype=M.float64, requires_grad=True))
        if read:
            t3.grad_fn
        _VIEW_LEAF_OPS[case](M, t3)
        return t3.grad_fn.name().split("::")[-1], t3.requires_grad, t3.detach()
    same(fn)


def test_inplace_with_a_no_grad_view_operand_records():
    # seed 19946: a view made under no_grad of a tensor requiring grad requires grad itself;
    # t *= view records (MulBackward0) as t * view does
    def fn(M):
        t0 = M.tensor([[1.5, 0.5]], requires_grad=True)
        with M.no_grad():
            t1 = t0.expand(-1, 2)
            t2 = t0 * 2
        t4 = t2.clone()
        t4 *= t1
        return t4.requires_grad, t4.grad_fn.name()
    same(fn)


_INFERENCE_ORDER = {
    "adv_setitem_shape": lambda M, a, h, v: a.__setitem__(M.tensor([-1]),
                                                          M.ones(1, 4, dtype=M.float64)),
    "imul_cast": lambda M, a, h, v: h.__imul__(M.tensor([[0.4 - 0.8j]])),
    "add_shape": lambda M, a, h, v: h.add_(M.ones(3)),
    "adv_setitem_dtype": lambda M, a, h, v: v.__setitem__(M.tensor([0]),
                                                          M.ones(1, dtype=M.float32)),
    "mul_": lambda M, a, h, v: v.mul_(2),
    "copy_overlap": lambda M, a, h, v: v[1:].copy_(v[:-1]),
    "adv_setitem": lambda M, a, h, v: v.__setitem__(M.tensor([0]), 5.0),
}


@pytest.mark.parametrize("case", sorted(_INFERENCE_ORDER))
def test_inference_refusal_comes_after_the_kernels_checks(case):
    # seeds 20023, 20362: PyTorch refuses an inference tensor when bumping its version, after
    # the kernel's shape, dtype and cast checks; ember raises at that point, before writing
    def fn(M):
        with M.inference_mode():
            a = M.tensor([[0.2]], dtype=M.float64, requires_grad=case.endswith("shape"))
            h = M.tensor([[1.5], [0.5]], dtype=M.float32)
            v = M.ones(3, dtype=M.float64)
        _INFERENCE_ORDER[case](M, a, h, v)
    same(fn)


@pytest.mark.parametrize("multi", [True, False])
def test_retain_grad_on_a_view_changed_in_place(multi):
    # seed 24897: retain_grad reads the view's regenerated history (a multi-output view of a
    # base changed in place refuses, as its grad_fn does)
    def fn(M):
        t0 = M.ones(2, 4, dtype=M.float64, requires_grad=True)
        t5 = t0 * 1
        t4 = t5.unbind(-1)[3] if multi else t5[:, 3]
        with M.no_grad():
            t5 += 1.25
        t4.retain_grad()
        (t4 * 2).sum().backward()
        return t4.grad, t0.grad
    same(fn)


# ---- fuzz seeds 15774, 16262, 17291, 19128, 19171, 19408, 20127, 23693, 24093 (issue 6) --------

def _tangent(M, build):
    fw = M.autograd.forward_ad
    with fw.dual_level():
        return fw.unpack_dual(build(M, fw)).tangent


def test_tangent_of_view_of_result_with_odd_size1_strides():
    # seeds 19408, 24093: a result laid out like a sliced input ((1, 2) with stride 48 bytes
    # in its size-1 dim) got a tangent with NumPy's normalised strides, so views of it took
    # tangents of their own and missed later in-place writes through the base
    def sort_then_index_put(M, fw):
        x = fw.make_dual(M.tensor([[-0.31, -0.27]], dtype=M.float64),
                         M.tensor([[1.5, 1.0]], dtype=M.float64))
        y, _ = M.sort(x[::3, -2:3], -1)
        v, = y.chunk(1, 0)
        y[M.tensor([[False, True]])] = 2.0
        return v

    def view_as_real_div_(M, fw):
        a, _ = M.tensor([[0.3, -1.0, 1.1]]).split(2, 1)
        c = a.to(M.complex128)
        fw_d = fw.make_dual(M.tensor([[[1.0]]], dtype=M.float64),
                            M.tensor([[[1.4]]], dtype=M.float64))
        M.view_as_real(c).div_(fw_d)
        return c
    for build in (sort_then_index_put, view_as_real_div_):
        a, b = _tangent(torch, build), _tangent(ember, build)
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12)


@pytest.mark.parametrize("shapes", [((1,), ()), ((1, 3), (3,)), ((1, 1), (1,)), ((2, 3), (3,)),
                                    ((3,), (3,)), ("view", (3,))])
def test_copy_into_tensor_without_tangent_aliases_broadcast_tangent(shapes):
    # seed 20127: PyTorch's copy_ gives self (no tangent, not a view) the view
    # src_tangent.broadcast_to(self.shape), kept when its layout is self's: later in-place
    # changes of src's tangent show in self's
    dst, src = shapes

    def f(M, fw):
        s = M.zeros(2, 3, dtype=M.float64)[:1] if dst == "view" else M.zeros(dst,
                                                                            dtype=M.float64)
        x = fw.make_dual(M.ones(src, dtype=M.float64), M.full(src, 0.5, dtype=M.float64))
        s.copy_(x)
        x.unsqueeze(0).mul_(fw.make_dual(M.tensor([3.0], dtype=M.float64),
                                         M.tensor([1.0], dtype=M.float64)))
        return s
    a, b = _tangent(torch, f), _tangent(ember, f)
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12)


@pytest.mark.parametrize("rg", [False, True])
def test_einsum_inference_operand(rg):
    # seed 17291: PyTorch's einsum first permutes each operand; on an inference tensor alone
    # that view skips autograd, so the operand (requiring grad) no longer does: nothing is
    # recorded unless another operand requires grad (then saving the inference one fails)
    def f(M):
        with M.inference_mode():
            a = M.tensor([[1.1]], dtype=M.float64, requires_grad=True)
        b = M.tensor([[0.4]], dtype=M.float64, requires_grad=rg)
        r = M.einsum("ij,jk->ik", a, b)
        return [r.requires_grad, r.grad_fn is None, r.is_inference(), r]
    same(f)


@pytest.mark.parametrize("op", ["cummax", "cummin", "logcumsumexp", "cumsum"])
def test_cum_backward_of_empty_input(op):
    # seed 19171: cummax/cummin's backward hands back the saved (empty) input itself, so
    # with create_graph the gradient requires grad and a second grad runs; logcumsumexp's
    # hands back the incoming gradient (no history)
    def f(M):
        x = M.empty((0, 1), dtype=M.float64, requires_grad=True)
        y = getattr(M, op)(x, 1)
        y = y[0] if isinstance(y, tuple) else y
        g, = M.autograd.grad(y.sum(), [x], create_graph=True, allow_unused=True)
        out = [g.requires_grad, g.grad_fn is None, tuple(g.shape)]
        if g.requires_grad:
            h, = M.autograd.grad(g.sum(), [x], allow_unused=True)
            out.append(None if h is None else tuple(h.shape))
        return out
    same(f)


@pytest.mark.parametrize("div", [True, False])
@pytest.mark.parametrize("view_first", [True, False])
def test_saved_version_error_asks_only_the_reported_tensor(div, view_first):
    # seed 15774: the version error names the saved tensor PyTorch unpacks first (other
    # before self); ember also asked the other one (a multi-output view whose base changed)
    # for its grad_fn, which raised the multi-view error instead
    def f(M):
        x = M.tensor([[1.5], [0.8]], requires_grad=True)
        y = x.sinh()
        v = y[:1]
        _, w = y.chunk(2, 0)
        a, b = (w, v) if view_first else (v, w)
        r = a / b if div else a * b
        v.mul_(2.0)
        return r.sum().backward()
    same(f)


def test_backward_inputs_named_twice():
    # seed 23693: an intermediate named twice in backward(inputs=...) (x.double() of a double
    # tensor is x) retains its grad once, as retain_grad does
    def f(M):
        x = M.tensor([[0.4]], dtype=M.float64, requires_grad=True)
        v, _ = M.max(x, -2)
        (v * 3).sum().backward(inputs=[x, v, v.double(), x])
        return [x.grad, v.grad]
    same(f)


INPLACE_BAD_ARGS = {
    "index_copy_": lambda M, t, s: t.index_copy_(1, M.tensor([0]), s),
    "index_copy_dim": lambda M, t, s: t.index_copy_(5, M.tensor([0]), s.float()),
    "index_fill_": lambda M, t, s: t.index_fill_(1, M.tensor([[0]]), 1.0),
    "index_add_dim": lambda M, t, s: t.index_add_(5, M.tensor([0]), s.float()),
    "scatter_add_dim": lambda M, t, s: t.scatter_add_(5, M.tensor([[0]]), s.float()),
    "scatter_value_dim": lambda M, t, s: t.scatter_(5, M.tensor([[0]]), 1.0),
    "put_": lambda M, t, s: t.put_(M.tensor([0]), s),
    "masked_scatter_": lambda M, t, s: t.masked_scatter_(M.tensor([[True]]), s),
    "scatter_reduce_": lambda M, t, s: t.scatter_reduce_(1, M.tensor([[0]]), s, "sum"),
    "masked_fill_": lambda M, t, s: t.masked_fill_(M.tensor([[1]]), 1.0),
    "index_put_": lambda M, t, s: t.index_put_((M.tensor([0]),), s),
}


@pytest.mark.parametrize("kind", ["leaf", "inference"])
@pytest.mark.parametrize("name", sorted(INPLACE_BAD_ARGS))
def test_inplace_refusal_order_with_bad_arguments(name, kind):
    # seed 19128: autograd refuses an in-place write to a leaf requiring grad before the
    # kernel checks its arguments; an inference tensor's refusal comes after those checks
    def f(M):
        if kind == "leaf":
            t = M.tensor([[1.1]], requires_grad=True)
        else:
            with M.inference_mode():
                t = M.tensor([[1.1]])
        return INPLACE_BAD_ARGS[name](M, t, M.tensor([[1.0]], dtype=M.float64))
    same(f)


MEAN_OUT = {
    "complex_into_long": lambda M, d, c: M.mean(c, 0, out=M.tensor([-3])),
    "real_into_long": lambda M, d, c: M.mean(d, 0, out=M.tensor([-3])),
    "no_dim_into_long": lambda M, d, c: M.mean(d, out=M.tensor(-3)),
    "no_dim_complex_into_float": lambda M, d, c: M.mean(c, out=M.tensor(-3.0)),
    "into_float": lambda M, d, c: M.mean(d, 0, out=M.tensor([-3.0])),
}


@pytest.mark.parametrize("name", sorted(MEAN_OUT))
@pytest.mark.parametrize("dual", [True, False])
def test_mean_out_checks_before_forward_ad_refusal(name, dual):
    # seed 16262: mean.out's kernel (sum_out, then div_ refusing an integer out) runs below
    # autograd before the out= forward-AD refusal; without dim (mean.dtype_out) the input's
    # type is checked against out's first
    def f(M):
        fw = M.autograd.forward_ad
        with fw.dual_level():
            d = M.tensor([[0.8]], dtype=M.float64)
            c = M.tensor([[-0.8 - 0.5j]], dtype=M.complex128)
            if dual:
                d = fw.make_dual(d, M.tensor([[0.3]], dtype=M.float64))
                c = fw.make_dual(c, M.tensor([[0.3j]], dtype=M.complex128))
            return MEAN_OUT[name](M, d, c)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (the complex-to-real cast warns on both sides)
        same(f)


def test_retain_grad_on_a_no_grad_view_changed_in_place_is_a_no_op():
    # seed 6151: a view made under no_grad has no grad_fn; retain_grad sees a leaf (without
    # regenerating the history, which would raise) and does nothing, as PyTorch's
    def fn(M):
        t0 = M.tensor([[[0.5]], [[1.2]], [[0.5]]], dtype=M.float64, requires_grad=True)
        with M.no_grad():
            t1, t2, t3 = t0.split([0, 2, 1], 0)
            t2.add_(t2)
            t2.retain_grad()
        return t2.retains_grad, t2.requires_grad
    same(fn)


@pytest.mark.parametrize("ord", [-1, -2.5, float("inf"), float("-inf"), 0.5, 2])
@pytest.mark.parametrize("shape,dim", [((0,), None), ((2, 0), 1), ((2, 0), 0), ((2, 0, 3), (-2,)),
                                       ((2, 0, 3), (1, 2)), ((0, 3), 1)])
def test_norm_without_identity_on_empty(ord, shape, dim):
    # seed 28415: a negative or infinite norm over an empty tensor or empty reduced dim has no
    # identity; PyTorch's message names the order and the dim as given
    same(lambda M: M.linalg.vector_norm(M.zeros(shape, dtype=M.complex128), ord, dim))
    same(lambda M: M.zeros(shape).norm(ord, dim))


_CONJ_STRIDED = {"as_strided": lambda t: t.as_strided((2, 2), (1, 1), 1),
                 "unfold": lambda t: t.unfold(1, 3, 1), "unfold_step": lambda t: t.unfold(1, 2, 2)}


@pytest.mark.parametrize("case", sorted(_CONJ_STRIDED))
def test_strided_views_of_a_conj_view_pass_gradients(case):
    # seed 37380: as_strided/unfold of a conj view located their windows in a transformed copy
    # of the data instead of the memory, so no gradient reached the input
    def fn(M):
        t0 = M.tensor([[0.9 + 0.8j, -0.8 + 0.4j, -1.1 + 0.5j, 1.2 - 1.1j]], dtype=M.complex64,
                      requires_grad=True)
        v = _CONJ_STRIDED[case](t0.conj())
        (v * (1 + 2j)).real.sum().backward()
        return v.is_conj(), v.detach().resolve_conj(), t0.grad.resolve_conj()
    same(fn)


@pytest.mark.parametrize("value", [1 + 2j, 1 + 0j, -0.5j])
@pytest.mark.parametrize("inplace", [False, True])
def test_masked_fill_with_a_complex_tensor_value_into_a_real_tensor(value, inplace):
    # seed 36622: the value is read as a Scalar, which a nonzero imaginary part cannot turn into
    # a real type ("value cannot be converted to type float without overflow")
    def fn(M):
        x = M.tensor([1.0, 2.0])
        v = M.tensor(value)
        return x.clone().masked_fill_(x > 1, v) if inplace else x.masked_fill(x > 1, v)
    same(fn)


@pytest.mark.parametrize("outshape", [(1, 4), (4,), (0,), (8,)])
@pytest.mark.parametrize("op", ["sin", "add"])
def test_resized_out_takes_the_iterators_layout(outshape, op):
    # seed 33467: TensorIterator restrides an out it resized to the layout it computed (a
    # transposed input's), over out's own buffer when that is large enough
    def fn(M):
        src = M.tensor([[1.5, 1.1], [1.2, 0.2]], dtype=M.float64).movedim(0, -1)
        o = M.zeros(outshape, dtype=M.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (M.sin(src, out=o) if op == "sin" else M.add(src, 1, out=o))
        return o.stride(), o.storage_offset(), o
    same(fn)


@pytest.mark.parametrize("shape", [(1, 1, 3), (2, 3), (3,)])
def test_backward_inputs_at_a_folded_matmul_runs_only_its_view(shape):
    # seed 25150: torch's batched matmul is UnsafeViewBackward0 over MmBackward0; with
    # backward(inputs=[result]) only the view node runs, so a saved operand changed in place
    # does not matter; a plain mm (2-D) is one node, which runs and refuses
    def fn(M):
        a = M.full(shape, 0.5, dtype=M.float64)
        w = M.tensor([[1.1], [1.4], [1.4]], dtype=M.float64, requires_grad=True)
        r = a @ w
        a.mul_(2.0)
        r.sum().backward(inputs=[r])
        return r.grad, w.grad
    same(fn)


@pytest.mark.parametrize("key", [slice(0, 3, 3), slice(0, 3), slice(1, 1)])
def test_empty_view_made_in_inference_mode_finds_its_tangent(key):
    """Fuzz seeds 6268, 6579: a slice of an empty dual tensor, first viewed inside
    inference_mode, has its owner's (empty) tangent, as in PyTorch, after the empty result's
    array was swapped for one with row-major strides."""
    def run(M):
        fw = M.autograd.forward_ad
        with fw.dual_level():
            t = fw.make_dual(M.empty((0,), dtype=M.float64), M.empty((0,), dtype=M.float64)) * 1
            with M.inference_mode():
                v = t[key]
            r = fw.unpack_dual(v).tangent
            return None if r is None else tuple(r.shape)
    assert run(ember) == run(torch)


# ---- the nn.functional family (issue 8)


def _near(a, b) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_near(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return bool(np.isclose(a, b, rtol=1e-12, atol=1e-12))
    return a == b


def near(fn):
    """``same`` up to float rounding."""
    a, b = _outcome(fn, torch), _outcome(fn, ember)
    assert _near(a, b), (a, b)

_BIASES = {"strided": lambda M: M.tensor([0.3, 9.0, -1.2, 9.0, 0.7, 9.0], dtype=M.float64)[::2],
           "expanded": lambda M: M.tensor([0.4], dtype=M.float64).expand(3),
           "contiguous": lambda M: M.tensor([0.3, -1.2, 0.7], dtype=M.float64)}


@pytest.mark.parametrize("bias", sorted(_BIASES))
@pytest.mark.parametrize("shape", [(3,), (2, 2, 3), (2, 1, 2, 3)])
def test_linear_with_a_strided_bias_adds_after_the_matmul(bias, shape):
    # nn seed 8: at::linear fuses an N-D contiguous input's bias into addmm (ViewBackward0)
    # only when the bias is contiguous too; a strided or expanded one is added after the
    # matmul (AddBackward0)
    def fn(M):
        x = M.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), dtype=M.float64)
        w = M.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [0.1, 0.2, 0.3]], dtype=M.float64,
                     requires_grad=True)
        r = M.nn.functional.linear(x, w, _BIASES[bias](M))
        return r.grad_fn.name(), tuple(r.shape)
    same(fn)


@pytest.mark.parametrize("idx", [[0, 1], [], [2, 2]])
def test_embedding_max_norm_always_bumps_the_version(idx):
    # nn seed 17: embedding_renorm_ is an in-place op: the weight's version moves (and a view
    # of it regenerates its history) even when no row exceeds max_norm
    def fn(M):
        w0 = M.tensor(np.arange(12.0).reshape(4, 3) / 30, dtype=M.float64, requires_grad=True)
        w = w0 * 1
        v = w[1:]
        M.nn.functional.embedding(M.tensor(idx, dtype=M.int64), w, max_norm=10.0)
        return w._version, v._version, v.grad_fn.name()
    same(fn)


def test_embedding_max_norm_renorms_an_expanded_weight_row_by_row():
    # nn seed 17: rows that share memory (an expanded weight) are renormed one after the other
    # (ember's vectorised write into the read-only expand raised a NumPy ValueError)
    def fn(M):
        w0 = M.tensor(np.arange(12.0).reshape(4, 3) / 3, dtype=M.float64)
        e = w0[:1].expand(3, 3)
        out = M.nn.functional.embedding(M.tensor([[0, 1], [2, 0]]), e, max_norm=0.5)
        return out, w0, e._version
    near(fn)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_tangent_of_a_dual_pos_weight_alone(reduction):
    # nn seed 44: pos_weight and weight are not differentiable; with only them dual the result
    # has no tangent (ember's JVP summed a None tangent for a reduced loss and crashed)
    def fn(M):
        fw = M.autograd.forward_ad
        with fw.dual_level():
            pw = fw.make_dual(M.tensor([0.7], dtype=M.float64), M.tensor([1.3], dtype=M.float64))
            r = M.nn.functional.binary_cross_entropy_with_logits(
                M.tensor([-1.1, 1.4, 0.4], dtype=M.float64),
                M.tensor([0.7, 0.4, 0.0], dtype=M.float64), pos_weight=pw, reduction=reduction)
            return r, fw.unpack_dual(r).tangent
    near(fn)


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("dual", ["input", "weight", "none"])
@pytest.mark.parametrize("stat", ["mean", "var"])
def test_batch_norm_eval_refuses_dual_running_stats(training, dual, stat):
    # nn seed 289: in evaluation mode batch_norm's JVP (run when input, weight or bias has a
    # tangent) refuses running statistics with a tangent; in training they are not used
    def fn(M):
        fw = M.autograd.forward_ad
        one = M.ones(3, dtype=M.float64)
        with fw.dual_level():
            x = M.tensor([[0.9, -0.1, 0.3], [0.2, 0.5, -0.7]], dtype=M.float64)
            w = one.clone()
            if dual == "input":
                x = fw.make_dual(x, M.ones_like(x))
            elif dual == "weight":
                w = fw.make_dual(w, one)
            rm, rv = M.zeros(3, dtype=M.float64), one.clone()
            if stat == "mean":
                rm = fw.make_dual(rm, one)
            else:
                rv = fw.make_dual(rv, one)
            r = M.nn.functional.batch_norm(x, rm, rv, w, training=training)
            return r, fw.unpack_dual(r).tangent, rm
    near(fn)


_CONV_NC = {"conv1d_input": ("conv1d", True, False), "conv1d_grad": ("conv1d", False, True),
            "conv_transpose1d_grad": ("conv_transpose1d", False, True),
            "conv_transpose1d_input": ("conv_transpose1d", True, False),
            "conv2d_both": ("conv2d", True, True)}


@pytest.mark.parametrize("case", sorted(_CONV_NC))
@pytest.mark.parametrize("bias", [False, True])
def test_conv_with_a_non_contiguous_input_or_gradient(case, bias):
    # nn seed 435: buffers made with np.empty_like(x, shape=...) of x's rank copied a permuted
    # input's layout, and the row-major strided views over them read the wrong elements
    # (conv1d's values, conv_transpose1d's input gradient)
    fn_name, perm_x, perm_g = _CONV_NC[case]
    d = 2 if fn_name.endswith("2d") else 1

    def fn(M):
        shape = (2, 2) + (5,) * d
        xa = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
        x = M.tensor(xa.T.copy() if perm_x else xa, dtype=M.float64, requires_grad=True)
        xx = x.permute(*range(d + 1, -1, -1)) if perm_x else x
        w = M.tensor(np.linspace(-1, 0.5, 3 * 2 * 2 ** d).reshape((2, 3) + (2,) * d)[:, :2]
                     if fn_name.startswith("conv_t") else
                     np.linspace(-1, 0.5, 3 * 2 * 2 ** d).reshape((3, 2) + (2,) * d),
                     dtype=M.float64, requires_grad=True)
        b = M.tensor([0.5, -0.25, 1.0][:w.shape[1] if fn_name.startswith("conv_t") else 3],
                     dtype=M.float64) if bias else None
        y = getattr(M.nn.functional, fn_name)(xx, w, b)
        ga = np.cos(np.arange(y.numel())).reshape(tuple(y.shape)[::-1])
        g = M.tensor(ga, dtype=M.float64).permute(*range(y.dim() - 1, -1, -1)) if perm_g else \
            M.tensor(ga.T.copy(), dtype=M.float64)
        y.backward(g)
        return y, x.grad, w.grad
    near(fn)


@pytest.mark.parametrize("pool", ["max_pool2d", "max_pool1d", "adaptive_max_pool2d"])
def test_max_pool_gradient_arriving_transposed(pool):
    # nn fuzzing: the gradient's scatter wrote into a reshape of a zeros array that copied a
    # transposed gradient's layout, i.e. into a copy: the input's gradient was all zeros
    def fn(M):
        xa = np.random.default_rng(1).permutation(120).reshape(2, 3, 4, 5) / 10.0
        x = M.tensor(xa, dtype=M.float64, requires_grad=True)
        F = M.nn.functional
        y = F.max_pool1d(x.reshape(2, 12, 5), 2) if pool == "max_pool1d" else \
            F.adaptive_max_pool2d(x, (2, 3)) if pool.startswith("adaptive") else F.max_pool2d(x, 2)
        yt = y.transpose(0, -1)
        (yt * M.tensor(np.linspace(-1, 1, yt.numel()).reshape(tuple(yt.shape)),
                       dtype=M.float64)).sum().backward()
        return y, x.grad
    near(fn)


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("which", ["mean", "var"])
def test_batch_norm_saves_its_running_statistics(training, which):
    # nn seed 401: PyTorch's batch_norm node saves the running statistics in both modes, so
    # changing one in place before backward is the version error (ember read them at forward
    # time and did not save them)
    def fn(M):
        x = M.tensor([[0.8, 1.3, 0.4], [0.1, -0.5, 0.9]], dtype=M.float64, requires_grad=True)
        rm = M.tensor([0.7, 0.9, 0.4], dtype=M.float64)
        rv = M.tensor([1.7, 1.5, 1.2], dtype=M.float64)
        y = M.nn.functional.batch_norm(x, rm, rv, training=training)
        with M.no_grad():
            (rm if which == "mean" else rv).add_(1)
        y.sum().backward()
        return x.grad
    same(fn)


@pytest.mark.parametrize("fn_name,shape", [("dropout1d", (2, 3)), ("dropout3d", (2, 3, 1, 2))])
@pytest.mark.parametrize("p,training", [(0.5, False), (0.0, True), (1.0, True)])
def test_channel_dropout_in_place_on_an_unbatched_input(fn_name, shape, p, training):
    # nn seed 1303: in place, PyTorch unsqueezes and squeezes the unbatched input itself (two
    # version bumps, node SqueezeBackward4)
    def fn(M):
        x0 = M.ones(*shape, dtype=M.float64, requires_grad=True)
        x = x0 * 1
        r = getattr(M.nn.functional, fn_name)(x, p=p, training=training, inplace=True)
        r.sum().backward()
        return r is x, tuple(r.shape), r.grad_fn.name(), x._version, r.detach(), x0.grad
    same(fn)


@pytest.mark.parametrize("pad", [(0, 0), (0, 0, 0, 0), (1, 0, 0, 0)])
def test_circular_pad_copies_through_views(pad):
    # nn seed 164: PyTorch's _pad_circular copies the input into a slice() of the result even
    # where nothing is padded, so the node is CopySlices also for all-zero pads
    def fn(M):
        x = M.tensor(np.arange(6.0).reshape(1, 2, 3), requires_grad=True)
        r = M.nn.functional.pad(x.permute(0, 2, 1), pad, mode="circular")
        return r.grad_fn.name().split("::")[-1], r
    same(fn)


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float16"])
@pytest.mark.parametrize("weight", [False, True])
def test_rms_norm_of_a_non_contiguous_input_ends_in_a_clone(dtype, weight):
    # nn seed 737: PyTorch's rms_norm makes its result contiguous, a CloneBackward0 node for a
    # non-contiguous input (before the cast back of a half type: ToCopyBackward0 then)
    def fn(M):
        dt = getattr(M, dtype)
        x = M.tensor(np.linspace(0.3, 1.5, 6).reshape(3, 2), dtype=dt, requires_grad=True).t()
        w = M.tensor([0.5, 1.0, 1.5], dtype=dt) if weight else None
        r = M.nn.functional.rms_norm(x, [3], w)
        return r.grad_fn.name(), r.is_contiguous()
    same(fn)


@pytest.mark.parametrize("norm", ["rms_norm", "layer_norm"])
@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_norm_over_an_empty_normalized_shape(norm, mode):
    # nn seed 10: the derivatives divided by the normalised size in Python floats
    # (ZeroDivisionError for an empty one)
    def fn(M):
        f = getattr(M.nn.functional, norm)
        fw = M.autograd.forward_ad
        if mode == "fwd":
            with fw.dual_level():
                x = fw.make_dual(M.ones(1, 0, dtype=M.float64), M.ones(1, 0, dtype=M.float64))
                r = f(x, (0,))
                return r, fw.unpack_dual(r).tangent
        x = M.ones(1, 0, dtype=M.float64, requires_grad=True)
        f(x, (0,)).sum().backward()
        return x.grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(fn)


_BN_ARGS = {
    "empty_affine": lambda M, T: (M.ones(0, 2, dtype=M.float64, requires_grad=True), T(0, 0),
                                  T(1, 1), T(2, 3, rg=True), T(1, 1, rg=True), True),
    "empty_wrong_sizes": lambda M, T: (M.ones(0, 2, dtype=M.float64), T(0, 0), T(1, 1),
                                       T(2, 3, 4), None, True),
    "empty_no_channels": lambda M, T: (M.ones(1, 0, 2, dtype=M.float64), T(), T(), T(), None,
                                       True),
    "mean_before_bias": lambda M, T: (M.ones(2, 1, dtype=M.float64), T(), T(1), None, T(1, 2),
                                      False),
    "var_before_weight": lambda M, T: (M.ones(2, 1, dtype=M.float64), T(1), T(1, 2), T(1, 2),
                                       None, False),
    "var_before_both_none": lambda M, T: (M.ones(2, 1, dtype=M.float64), None, T(1, 2),
                                          T(1, 2), None, True),
}


@pytest.mark.parametrize("case", sorted(_BN_ARGS))
def test_batch_norm_checks_and_empty_input(case):
    # nn seeds 454, 479: an empty input returns before any check, as a copy times weight[0]
    # plus bias[0]; otherwise the running statistics are checked before weight and bias
    def fn(M):
        def T(*a, rg=False):
            return M.tensor([float(v) for v in a], dtype=M.float64, requires_grad=rg)
        x, rm, rv, w, b, training = _BN_ARGS[case](M, T)
        r = M.nn.functional.batch_norm(x, rm, rv, w, b, training=training)
        return tuple(r.shape), r.grad_fn.name() if r.grad_fn else None
    same(fn)


@pytest.mark.parametrize("dual", [False, True])
def test_in_place_into_an_expanded_tensor_refuses_the_overlap_before_the_cast(dual):
    # nn seed 1190: TensorIterator refuses a self-overlapping output before it computes the
    # result type (ember checked the complex-into-real cast first)
    def fn(M):
        fw = M.autograd.forward_ad
        with fw.dual_level():
            t0 = M.tensor([[1.2]], dtype=M.float64)
            if dual:
                t0 = fw.make_dual(t0, M.tensor([[-0.2]], dtype=M.float64))
            t0.expand(2, 2).sub_(M.tensor([[-0.7 + 0.7j]], dtype=M.complex128))
    same(fn)


@pytest.mark.parametrize("needs", ["bias", "input", "weight"])
@pytest.mark.parametrize("changed", ["input", "weight"])
@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_saves_input_and_weight_whatever_is_needed(needs, changed, transposed):
    # seed 692: PyTorch's ConvolutionBackward0 saves input and weight whenever it records, so
    # changing either in place before backward is the version error even when no gradient
    # reads it (ember saved only what the needed gradients read)
    def fn(M):
        x = M.ones(1, 1, 3, 3, dtype=M.float64, requires_grad=needs == "input")
        w = M.ones(1, 1, 2, 2, dtype=M.float64, requires_grad=needs == "weight")
        b = M.ones(1, dtype=M.float64, requires_grad=needs == "bias")
        x1 = x * 1 if needs == "input" else x
        w1 = w * 1 if needs == "weight" else w
        f = M.nn.functional.conv_transpose2d if transposed else M.nn.functional.conv2d
        y = f(x1, w1, b)
        with M.no_grad():
            (x1 if changed == "input" else w1).add_(1)
        y.sum().backward()
    same(fn)


def test_rms_norm_of_a_strided_slice_ends_in_its_multiplication():
    # seed 837: only a dense non-contiguous input (a permutation) gives a result laid out like
    # it, which rms_norm's final .contiguous() copies; a strided slice's result is row-major
    def fn(M):
        x = M.tensor(np.linspace(0.3, 1.5, 24).reshape(3, 8), requires_grad=True)[:, ::2]
        return M.nn.functional.rms_norm(x, [3, 4], weight=M.ones(3, 4)).grad_fn.name()
    same(fn)


@pytest.mark.parametrize("x_requires_grad", [False, True])
def test_layer_norm_saves_its_bias(x_requires_grad):
    # seed 797: NativeLayerNormBackward0 saves the bias too, so changing it in place before
    # backward is the version error
    def fn(M):
        x = M.tensor([[0.8, 1.3, 0.4], [0.1, -0.5, 0.9]], dtype=M.float64,
                     requires_grad=x_requires_grad)
        b = M.tensor([0.5, 0.2, -0.8, 0.1, 0.3, 0.6], dtype=M.float64, requires_grad=True)
        y = M.nn.functional.layer_norm(x, (3,), None, b[::2], eps=0.001)
        with M.no_grad():
            b.add_(1)
        (y * y).sum().backward()
        return b.grad
    same(fn)


@pytest.mark.parametrize("b_requires_grad", [False, True])
def test_einsum_of_two_saves_an_operand_only_for_the_others_gradient(b_requires_grad):
    # seed 1635: PyTorch's two-operand einsum (a bmm) saves each operand only when the other
    # needs its gradient; changing one in place is no error otherwise
    def fn(M):
        a0 = M.tensor([1.0, -1.4, 1.1], dtype=M.float64, requires_grad=True)
        a = (a0 * 1).reshape(1, 3)
        b = M.tensor([[1.0], [2.0], [3.0]], dtype=M.float64, requires_grad=b_requires_grad)
        r = M.einsum("ij,jk->ik", a, b)
        a.mul_(2)
        r.sum().backward()
        return a0.grad
    r = [_outcome(fn, M) for M in LIBS]
    # (the shape in the version error differs: torch's operand is internally [1, 1, 3])
    assert r[0][:2] == r[1][:2] and (r[0][0] == "raise" or r[0] == r[1]), r


@pytest.mark.parametrize("base", [1.5, 2, 1 + 1j, 1.0])
def test_scalar_base_pow_of_an_inference_tensor_requiring_grad(base):
    # seed 5977: outside inference mode pow(Scalar, Tensor) of an inference tensor that requires
    # grad is refused by its out= kernel, except for a base of 1 (a tensor of ones)
    def fn(M):
        with M.inference_mode():
            t0 = M.tensor([0.3 - 0.6j], dtype=M.complex128, requires_grad=True)
        r = base ** t0
        return r.requires_grad, r.is_inference(), r
    same(fn)


def test_batch_norm_refuses_a_running_stat_requiring_grad_before_checking_dtypes():
    # seed 7705: the autograd kernel's refusal comes before the CPU kernel's dtype checks
    def fn(M):
        rm = M.tensor([1.4], dtype=M.float64, requires_grad=True) * 1
        M.nn.functional.batch_norm(M.ones(2, 1, dtype=M.float64), rm,
                                   M.tensor([0.3], dtype=M.float32), training=True)
    same(fn)


@pytest.mark.parametrize("value", [1.2, 0.2])
def test_embedding_max_norm_on_rows_that_repeat_their_elements(value):
    # seed 7852: a weight expanded along its columns: scaling a row in place writes elements
    # that share memory, PyTorch's overlap error (rows within max_norm are left alone)
    def fn(M):
        w = M.tensor([[value]]).expand(3, 2)
        return M.nn.functional.embedding(M.tensor(0), w, max_norm=0.5)
    same(fn)


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 3}, {"scale_grad_by_freq": True},
                                {"scale_grad_by_freq": True, "padding_idx": 0}])
def test_embedding_double_backward_is_the_true_second_derivative(kw):
    """The fuzzer's nn family: embedding's backward differentiates as PyTorch's
    embedding_dense_double_backward (a gather, the padding row zeroed, no frequency scale), so
    a gradient's derivative equals finite differences (a frequency scale applied twice gave
    1/count of it), with PyTorch's node name."""
    idx_a, c = [0, 1, 0, 3], np.arange(12.).reshape(4, 3)

    def run(M):
        w = M.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=M.float64, requires_grad=True)
        e = M.nn.functional.embedding(M.tensor(idx_a), w, **kw)
        g, = M.autograd.grad((e ** 2 * M.tensor([1., 0.5, 3.], dtype=M.float64)).sum(), w,
                             create_graph=True)
        h, = M.autograd.grad((g * M.tensor(c, dtype=M.float64)).sum(), w)
        return type(g.grad_fn).__name__, h.detach().numpy().round(12).tolist()
    assert run(ember) == run(torch)


def test_leaf_moved_into_the_graph_interior():
    """Fuzz seed 2674: a leaf that stopped requiring grad and then got history from an in-place
    op raises PyTorch's error when a graph built while it was a leaf reaches its accumulator."""
    def run(M):
        t0 = M.tensor([[[-1.1]]], requires_grad=True)
        t1 = t0.permute(1, 0, 2)
        t0.requires_grad_(False)
        y = t1 * 2   # (recorded while t0 is still the view's leaf)
        t0[-1:2:1, :] = M.tensor([[[1.5]]], requires_grad=True)
        try:
            y.sum().backward()
        except RuntimeError as e:
            return str(e)
        return "no error"
    assert run(ember) == run(torch)


@pytest.mark.parametrize(("shape", "size"), [((1, 1, 1), 0), ((1, 1, 0), 3), ((1, 1, 1, 2), (0, 3)),
                                             ((1, 1, 1, 1, 1), (1, 0, 2))])
def test_interpolate_empty_size_messages(shape, size):
    """Fuzz seed 13966: interpolate's size refusal words its 1-d message as PyTorch's."""
    got = []
    for M in (ember, torch):
        with pytest.raises(RuntimeError) as e:
            M.nn.functional.interpolate(M.ones(*shape), size=size)
        got.append(str(e.value))
    assert got[0] == got[1]


@pytest.mark.parametrize("expr", ["2.0 - t", "M.rsub(t, 2.0, alpha=3)", "t - 2.0"])
def test_rsub_of_an_inference_tensor_records_sub(expr):
    """Fuzz seed 12488: outside inference mode, a number minus an inference tensor skips
    autograd's rsub and records the sub on the wrapped number (SubBackward0), as PyTorch."""
    def run(M):
        with M.inference_mode():
            t = M.tensor([1.7, -2.0], dtype=M.float64, requires_grad=True)
        r = eval(expr, {"M": M, "t": t})
        return type(r.grad_fn).__name__, r.requires_grad, r.detach().tolist()
    assert run(ember) == run(torch)


def test_group_norm_saves_contiguous_copies():
    """Fuzz seed 12384: group_norm hands its kernel contiguous copies of a non-contiguous input,
    weight and bias (CloneBackward0), so writing the caller's weight in place after the forward
    is no version error, as in PyTorch."""
    def run(M):
        x = M.tensor(np.linspace(-1, 2, 24).reshape(2, 4, 3).transpose(0, 2, 1).copy(),
                     dtype=M.float64).transpose(1, 2).requires_grad_()
        base = M.tensor([1.0, 0.5, 1.2, 0.8, 0.3, 0.9, 1.1, 0.7], dtype=M.float64)
        b = M.tensor([1.7, 0.5, -0.2, 0.1], dtype=M.float64, requires_grad=True)
        y = M.nn.functional.group_norm(x, 2, weight=base[::2], bias=b)
        base.sub_(2.0)
        gx, gb = M.autograd.grad((y * y).sum(), [x, b])
        return ([type(f[0]).__name__ for f in y.grad_fn.next_functions],
                np.round(gx.numpy(), 10).tolist(), np.round(gb.numpy(), 10).tolist())
    assert run(ember) == run(torch)
