"""Issue 6's classes, each a regression test against PyTorch: gradients stay right after in-place
ops through views and bases, whatever mode the views were made in, and misuse raises PyTorch's
errors. Each case returns what the user can observe; ``both`` compares ember's with torch's."""
import warnings

import numpy as np
import pytest
import torch

import ember
from helpers import both, norm

# ---- 1. a view's history follows in-place changes of its base or a sibling view --------------


def _stale_base(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 1
    v = x[1:]
    x.mul_(2)
    v.sum().backward()
    return a.grad, v.grad_fn


def _stale_relu(M):
    a = M.tensor([1., -2., 3.], requires_grad=True)
    h = a * 2
    first = h[:2]
    h.relu_()
    first.sum().backward()
    return a.grad


def _stale_sibling(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 1
    v1, v2 = x[:2], x[1:]
    v1.mul_(2)
    v2.prod().backward()
    return a.grad


def _stale_no_grad_write(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    v = x.view(3, 1)
    with M.no_grad():
        x.add_(1)
    (v * v).sum().backward()
    return a.grad, v.grad_fn


def _stale_chain_of_views(M):
    a = M.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    x = a * 1
    v = x.t()[0]
    w = v.unsqueeze(0)
    x[1].mul_(3)
    (w * w).sum().backward()
    return a.grad, w.grad_fn


# ---- 2. retain_grad follows the tensor's new history -------------------------------------------

def _retain_mul(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    y = a * 2
    y.retain_grad()
    y.mul_(3)
    y.sum().backward()
    return y.grad, a.grad


def _retain_setitem(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    y = a * 2
    y.retain_grad()
    y[0] = 0
    (y * 3).sum().backward()
    return y.grad, a.grad


def _retain_view(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    y = a * 2
    v = y[1:]
    v.retain_grad()
    y.mul_(2)
    (v * v).sum().backward()
    return v.grad, a.grad


# ---- 3. complex views ----------------------------------------------------------------------------

def _cplx(M, change):
    a = M.tensor([1 + 2j, 3 - 1j, -2 + .5j], requires_grad=True)
    z = a * 1
    change(M, z)
    (z * z.conj()).real.sum().backward()
    return a.grad


COMPLEX = {
    "real_mul_": lambda M, z: z.real.mul_(3),
    "imag_mul_": lambda M, z: z.imag.mul_(3),
    "real_setitem": lambda M, z: z.real.__setitem__(0, 5),
    "imag_slice_setitem": lambda M, z: z.imag[1:].__setitem__(slice(None), 2.),
    "view_as_real_mul_": lambda M, z: M.view_as_real(z).mul_(M.tensor([2., 3.])),
    "view_as_real_row": lambda M, z: M.view_as_real(z)[1].mul_(-1),
    "real_of_slice": lambda M, z: z[1:].real.add_(1),
}


def _cplx_stale(M):
    a = M.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    z = a * 1
    r = z.real
    z.mul_(2j)
    (r * r).sum().backward()
    return a.grad, r.grad_fn


def _view_as_complex_inplace(M):
    a = M.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    x = a * 1
    c = M.view_as_complex(x)
    c.mul_(1j)
    (x * M.tensor([[1., 2.], [3., 4.]])).sum().backward()
    return a.grad


# ---- 6. views made in special modes, by multi-output ops, by custom Functions -------------------

def _try(f):
    def g(M):
        try:
            return f(M)
        except RuntimeError as e:
            return ("raised", str(e).replace("torch.", "ember.").replace("torch::", "ember::"))
    return g


def _no_grad_view_props(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    with M.no_grad():
        v = x[1:]
    y = v * 2
    return v.requires_grad, v.is_leaf, v.grad_fn, y.requires_grad, y.grad_fn.next_functions[0]


def _no_grad_view_inplace(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    with M.no_grad():
        v = x[1:]
    v.mul_(2)


def _no_grad_view_of_leaf_inplace(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    with M.no_grad():
        v = a[1:]
    v.mul_(2)


def _no_grad_view_written_with_grad_tensor(M):
    b = M.tensor([1., 2.], requires_grad=True)
    x = M.zeros(3)
    with M.no_grad():
        v = x[1:]
    v.copy_(b)


def _no_grad_view_indirect(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    with M.no_grad():
        v = x[1:]
    x.mul_(3)
    return v.requires_grad, v * 2


def _no_grad_view_indirect_no_grad_write(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    with M.no_grad():
        v = x[1:]
        x.mul_(3)
    with M.no_grad():
        r = (v * 2).requires_grad
    return r, v.grad_fn


def _view_of_no_grad_view_inplace(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    with M.no_grad():
        v = x[1:]
    v.view(-1).mul_(2)


def _no_grad_view_both_inside(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    with M.no_grad():
        v = x[1:]
        v.mul_(2)
    return x, x.grad_fn, x._version


def _no_grad_view_of_plain_tensor(M):
    x = M.ones(3)
    with M.no_grad():
        v = x[1:]
    x.mul_(2)
    v.mul_(2)
    return v.grad_fn, v.requires_grad, x


def _inference_view_inplace(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    with M.inference_mode():
        w = x[1:]
    w.mul_(2)


def _inference_view_indirect(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    with M.inference_mode():
        w = x[1:]
    x.mul_(2)
    return w.grad_fn


def _inference_view_props(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    with M.inference_mode():
        w = x[1:]
    return w.requires_grad, w.is_inference(), w.grad_fn


def _multi(op, k):
    def f(M):
        a = M.tensor([1., 2., 3., 4.], requires_grad=True)
        x = a * 2
        outs = op(x)
        outs[k].mul_(2)
    return f


def _multi_indirect(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    u = x.unbind()
    x.mul_(2)
    return u[0].grad_fn


def _multi_view_of_output(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    u = x.unbind()
    u[0].view(1).mul_(2)


def _multi_no_grad_write(M):
    a = M.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    u = x.unbind()
    with M.no_grad():
        u[0].mul_(2)
    return x.grad_fn, x._version, x


def _custom_view(M):
    class F(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view(-1)

        @staticmethod
        def backward(ctx, g):
            return g.view(2, 2)
    a = M.ones(2, 2, requires_grad=True)
    y = F.apply(a * 2)
    y.mul_(2)


def _custom_identity(M):
    class G(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g
    a = M.ones(3, requires_grad=True)
    y = G.apply(a * 2)
    y.mul_(2)


CASES = {
    "stale_base": _stale_base,
    "stale_relu": _stale_relu,
    "stale_sibling": _stale_sibling,
    "stale_no_grad_write": _stale_no_grad_write,
    "stale_chain_of_views": _stale_chain_of_views,
    "retain_mul": _retain_mul,
    "retain_setitem": _retain_setitem,
    "retain_view": _retain_view,
    "cplx_stale": _cplx_stale,
    "view_as_complex_inplace": _view_as_complex_inplace,
    "no_grad_view_props": _no_grad_view_props,
    "no_grad_view_inplace": _try(_no_grad_view_inplace),
    "no_grad_view_of_leaf_inplace": _try(_no_grad_view_of_leaf_inplace),
    "no_grad_view_written_with_grad_tensor": _try(_no_grad_view_written_with_grad_tensor),
    "no_grad_view_indirect": _try(_no_grad_view_indirect),
    "no_grad_view_indirect_no_grad_write": _try(_no_grad_view_indirect_no_grad_write),
    "view_of_no_grad_view_inplace": _try(_view_of_no_grad_view_inplace),
    "no_grad_view_both_inside": _no_grad_view_both_inside,
    "no_grad_view_of_plain_tensor": _no_grad_view_of_plain_tensor,
    "inference_view_inplace": _try(_inference_view_inplace),
    "inference_view_indirect": _try(_inference_view_indirect),
    "inference_view_props": _inference_view_props,
    "unbind_inplace": _try(_multi(lambda x: x.unbind(), 0)),
    "split_inplace": _try(_multi(lambda x: x.split(1), 1)),
    "chunk_inplace": _try(_multi(lambda x: x.chunk(2), 1)),
    "split_sizes_inplace": _try(_multi(lambda x: x.split([1, 3]), 1)),
    "multi_indirect": _try(_multi_indirect),
    "multi_view_of_output": _try(_multi_view_of_output),
    "multi_no_grad_write": _multi_no_grad_write,
    "custom_view_inplace": _try(_custom_view),
    "custom_identity_inplace": _try(_custom_identity),
}
CASES.update({f"complex_{k}": (lambda f: lambda M: _cplx(M, f))(f) for k, f in COMPLEX.items()})


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name):
    both(CASES[name])


def test_answer_does_not_depend_on_reading_grad_fn():
    """Reading ``v.grad_fn`` first must not change the result (it used to fix it)."""
    def f(M, peek):
        a = M.tensor([1., 2., 3.], requires_grad=True)
        x = a * 1
        v = x[1:]
        x.mul_(2)
        if peek:
            v.grad_fn
        v.sum().backward()
        return a.grad
    assert norm(f(ember, True)) == norm(f(ember, False)) == norm(f(torch, False))


# ---- 4. forward AD through in-place ops: a view's tangent is a view of its base's -------------

def _fw(body):
    def f(M):
        fa = M.autograd.forward_ad
        with fa.dual_level():
            x = fa.make_dual(M.tensor([1., -2., 3.], dtype=M.float64),
                             M.tensor([1., 10., 100.], dtype=M.float64))
            r = body(M, x)
            return [(t, fa.unpack_dual(t).tangent) for t in (r if isinstance(r, tuple) else (r,))]
    return f


def _fw_no_grad(M, x):
    y = x * 1
    with M.no_grad():
        y.mul_(2)
    return y


def _fw_view_then_base_inplace(M, x):
    y = x * 1
    v = y[1:]
    y.mul_(2)
    return v, y


def _fw_view_inplace_in_no_grad(M, x):
    y = x * 1
    v = y[1:]
    with M.no_grad():
        v.mul_(2)
    return y, v


def _fw_sibling(M, x):
    y = x * 1
    a, b = y[:2], y[1:]
    a.mul_(3)
    return b, y


FORWARD = {
    "iadd_self": lambda M, x: (lambda y: (y.__iadd__(y), y)[1])(x * 1),
    "add_alpha": lambda M, x: (lambda y: (y.add_(x, alpha=3), y)[1])(x * 1),
    "clamp_": lambda M, x: (lambda y: (y.clamp_(-1, 2), y)[1])(x * 1),
    "setitem_on_view": lambda M, x: (lambda y: (y[1:].__setitem__(0, 5.), y, y[1:])[1:])(x * 1),
    "no_grad_inplace": _fw_no_grad,
    "view_then_base_inplace": _fw_view_then_base_inplace,
    "view_inplace_in_no_grad": _fw_view_inplace_in_no_grad,
    "sibling_views": _fw_sibling,
    "copy_into_plain_base_view": lambda M, x: (lambda y: (y[1:].copy_(x[:2]), y)[1])(
        M.zeros(3, dtype=M.float64)),
    "view_made_before_base_got_tangent": lambda M, x: (lambda y, v: (y.copy_(x), y, v)[1:])(
        *(lambda y: (y, y[1:]))(M.zeros(3, dtype=M.float64))),
    "setitem_column": lambda M, x: (lambda y: (y[:, 0].copy_(x), y, y.t())[1:])(
        M.zeros(3, 2, dtype=M.float64)),
    "complex_real_copy_": lambda M, x: (lambda y: (y.real.copy_(x), y)[1])(
        M.zeros(3, dtype=M.complex128)),
}


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_ad_inplace(name):
    both(_fw(FORWARD[name]))


# ---- 5. double backward through in-place ops on views -----------------------------------------

def _dd(body):
    def f(M):
        a = M.tensor([0.5, -2., 3.], dtype=M.float64, requires_grad=True)
        y = body(M, a)
        g, = M.autograd.grad((y * y * y).sum(), a, create_graph=True)
        g2, = M.autograd.grad((g * g).sum(), a)
        return g, g2
    return f


DOUBLE = {
    "clamp_on_slice": lambda M, a: (lambda x: (x[1:].clamp_(-1, 1), x)[1])(a * 1),
    "assign_all": lambda M, a: (lambda x: (x.__setitem__(slice(None), a * a), x)[1])(a * 2),
    "mul_slice_by_other_slice": lambda M, a: (lambda x: (x[1:].mul_(a[:2]), x)[1])(a * 1),
    "stale_view": lambda M, a: (lambda x, v: (x.mul_(a), v)[1])(*(lambda x: (x, x[1:]))(a * a)),
    "setitem_constant": lambda M, a: (lambda x: (x.__setitem__(0, 2.), x * a)[1])(a.clone()),
    "sin_on_view_of_view": lambda M, a: (lambda x: (x[1:, 0].sin_(), x)[1])((a * 1).view(3, 1)),
}


@pytest.mark.parametrize("name", sorted(DOUBLE))
def test_double_backward_inplace(name):
    both(_dd(DOUBLE[name]))


# ---- 7-11. saving and freeing, requires_grad, hooks, 0-dim gradients, Variable, modes ----------

def _raises(f):
    def g(M):
        try:
            return f(M)
        except Exception as e:  # noqa: BLE001
            return ("raised", type(e).__name__,
                    str(e).replace("torch.", "ember.").replace("torch::", "ember::"))
    return g


def _twice_without_saved(M):
    x = M.tensor([1., 2.], requires_grad=True)
    y = x.sum()
    y.backward()
    y.backward()
    (x * 2.).sum().backward()   # a number operand is no saved tensor either
    return x.grad


def _twice_with_saved(M):
    x = M.tensor([1., 2.], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _unrelated_save(M):
    a = M.tensor([1., 2.], requires_grad=True)
    b = M.tensor([3., 4.])
    y = a.exp()
    z = b * 2
    b.add_(1)
    (y + z).sum().backward()
    return a.grad


def _mm_unneeded_operand(M):
    a = M.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    b = M.tensor([[3., 4.], [5., 6.]])
    y = a @ b
    a2 = M.tensor([[1., 2.], [3., 4.]])
    b2 = M.tensor([[3., 4.], [5., 6.]], requires_grad=True)
    y2 = a2 @ b2
    b.add_(1)
    a2.add_(1)
    (y.sum() + y2.sum()).backward()


def _requires_grad_false_after_forward(M):
    x = M.tensor([1., 2.], requires_grad=True)
    y = (x * 2).sum()
    x.requires_grad_(False)
    y.backward()
    return x.grad


def _hook_pack_order(M):
    log = []
    a = M.ones(2, requires_grad=True)
    b = M.ones(3, 1, requires_grad=True)
    with M.autograd.graph.saved_tensors_hooks(
            lambda t: (log.append(("pack", tuple(t.shape))), t)[1],
            lambda t: (log.append(("unpack", tuple(t.shape))), t)[1]):
        y = a * b
        z = M.atan2(a, b) / b
    (y.sum() + z.sum()).backward()
    return log


def _acc_node_hooks(M):
    x = M.tensor([1., 2.], requires_grad=True)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    log = []
    acc.register_hook(lambda gi, go: log.append(("post", len(gi), go[0])))
    acc.register_prehook(lambda go: log.append(("pre", go[0])))
    y.sum().backward()
    return log, x.grad


def _zero_dim_grad(M):
    x = M.tensor(2., requires_grad=True)
    g, = M.autograd.grad(x * x, x)
    g.add_(1)
    s = M.sigmoid(x)
    s.backward()
    return g, g.view(1), s, x.grad


def _mean_grad_is_writable(M):
    x = M.tensor([1., 2.], requires_grad=True)
    g, = M.autograd.grad(x.mean(), x)
    g.add_(1)
    return g, g.stride()


def _inference_enable_grad(M):
    x = M.ones(2, requires_grad=True)
    with M.inference_mode():
        with M.enable_grad():
            y = x * 2
            inside = M.is_grad_enabled()
        with M.set_grad_enabled(True):
            z = x * 2
    return y.requires_grad, y.grad_fn, z.requires_grad, inside, M.is_grad_enabled()


def _int_sum_no_grad(M):
    x = M.ones(2, requires_grad=True)
    with M.no_grad():
        return x.sum(dtype=M.int64)


def _variable(M):
    t = M.ones(2)
    v = M.autograd.Variable(t, requires_grad=True)
    return v.requires_grad, isinstance(t, M.autograd.Variable), v.is_leaf, t.requires_grad


TRUST = {
    "twice_without_saved": _twice_without_saved,
    "twice_with_saved": _raises(_twice_with_saved),
    "unrelated_save": _unrelated_save,
    "mm_unneeded_operand": _raises(_mm_unneeded_operand),
    "requires_grad_false_after_forward": _requires_grad_false_after_forward,
    "int_sum": _raises(lambda M: M.ones(2, requires_grad=True).sum(dtype=M.int64)),
    "int_cumsum": _raises(lambda M: M.ones(2, requires_grad=True).cumsum(0, dtype=M.int64)),
    "int_prod": _raises(lambda M: M.ones(2, requires_grad=True).prod(dtype=M.int64)),
    "int_sum_no_grad": _int_sum_no_grad,
    "atan2_origin": lambda M: (lambda x, y: (M.atan2(x, y).sum().backward(), x.grad, y.grad)[1:])(
        M.tensor([0., 1.], requires_grad=True), M.tensor([0., 0.], requires_grad=True)),
    "hook_wrong_shape": _raises(lambda M: (lambda y: (y.register_hook(lambda g: M.ones(3)),
                                                      y.sum().backward()))(
        M.ones(2, requires_grad=True) * 2)),
    "hook_wrong_dtype": _raises(lambda M: (lambda y: (y.register_hook(lambda g: g.double()),
                                                      y.sum().backward()))(
        M.ones(2, requires_grad=True) * 2)),
    "hook_not_tensor": _raises(lambda M: (lambda y: (y.register_hook(lambda g: 3),
                                                     y.sum().backward()))(
        M.ones(2, requires_grad=True) * 2)),
    "leaf_hook_wrong_shape": _raises(lambda M: (lambda x: (x.register_hook(lambda g: M.ones(3)),
                                                           (x * 2).sum().backward()))(
        M.ones(2, requires_grad=True))),
    "hook_pack_order": _hook_pack_order,
    "acc_node_hooks": _acc_node_hooks,
    "zero_dim_grad": _zero_dim_grad,
    "mean_grad_is_writable": _mean_grad_is_writable,
    "inference_enable_grad": _inference_enable_grad,
    "variable": _variable,
    "variable_of_number": _raises(lambda M: M.autograd.Variable(3)),
    "T_is_permute": lambda M: M.ones(2, 3, requires_grad=True).T.grad_fn,
}


@pytest.mark.parametrize("name", sorted(TRUST))
def test_trust(name):
    both(TRUST[name])


def test_inference_tensor_inplace_outside_changes_nothing():
    """Refused before writing (PyTorch writes, then raises; the issue asks for no change)."""
    with ember.inference_mode():
        t = ember.ones(2)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        t.add_(1)
    assert t.tolist() == [1.0, 1.0]


# ---- 12. pruning: hooks on branches that lead to no requested input do not fire ---------------

def _pruned(call):
    def f(M):
        log = []
        x = M.tensor([1., 2.], requires_grad=True)
        y = M.tensor([1., 2.], requires_grad=True)
        a, b = x * 2, y * 3
        a.register_hook(lambda g: log.append("a"))
        b.register_hook(lambda g: log.append("b"))
        a.grad_fn.register_prehook(lambda g: log.append("pa"))
        b.grad_fn.register_prehook(lambda g: log.append("pb"))
        call(M, (a + b).sum(), x)
        return log, x.grad, y.grad
    return f


@pytest.mark.parametrize("how", ["grad", "backward_inputs"])
def test_pruned_branches_run_no_hooks(how):
    if how == "grad":
        both(_pruned(lambda M, out, x: M.autograd.grad(out, x)))
    else:
        both(_pruned(lambda M, out, x: out.backward(inputs=[x])))


def _fill_names(M):
    out = []
    for f in (lambda y: y.fill_(2.), lambda y: y.__setitem__(Ellipsis, 2.),
              lambda y: y.__setitem__(slice(None), 2.), lambda y: y.zero_(),
              lambda y: y.fill_(M.tensor(2.)), lambda y: y.__setitem__(Ellipsis, M.ones(3))):
        y = M.zeros(3, requires_grad=True) * 1
        f(y)
        out.append((y.grad_fn, y.grad_fn.next_functions))
    v = M.tensor(2., requires_grad=True)
    y = M.zeros(3, requires_grad=True) * 1
    y.fill_(v)
    y.sum().backward()
    return out, v.grad


def test_fill_and_setitem_node_names():
    both(_fill_names)


# ---- found by the fuzzer ---------------------------------------------------------------------

FUZZ_FOUND = {
    "split_into_one_piece": lambda M: (lambda x: (lambda s: ((s[0] * 3).sum().backward(),
                                                             s, s[0].grad_fn, x.grad)[1:])(
        x.split(2)))(M.tensor([1., 2.], requires_grad=True)),
    "unbind_size_one": lambda M: M.ones(1, 2, requires_grad=True).unbind(),
    "unbind_empty": lambda M: M.ones(0, 2).unbind(),
    "zero_dim_views": lambda M: (lambda x: [x.mT, x.mH, x.H, x.T, x.flip(0), x.movedim(0, 0),
                                            x.unfold(0, 1, 1)])(
        M.tensor(2., requires_grad=True) * 1),
    "unfold_node": lambda M: (lambda y: (lambda u: ((u * u).sum().backward(), u.grad_fn,
                                                    y.grad)[1:])(y.unfold(0, 3, 2)))(
        M.arange(6.).requires_grad_()),
    "H_is_transpose": lambda M: M.ones(2, 3, requires_grad=True).H.grad_fn,
    "H_of_vector": _raises(lambda M: M.ones(3).H),
}


@pytest.mark.parametrize("name", sorted(FUZZ_FOUND))
def test_fuzz_found(name):
    both(FUZZ_FOUND[name])


# ---- matmul saves PyTorch's folded / expanded operands; std_mean saves result0 only; writes
# ---- into expanded tensors ----------------------------------------------------------------

_MATMUL_SHAPES = [((3,), (3, 2)), ((4, 2, 3), (3, 2)), ((4, 2, 3), (3,)), ((2, 3), (4, 3, 2)),
                  ((3,), (4, 3, 2)), ((4, 2, 3), (4, 3, 2)), ((5, 4, 2, 3), (4, 3, 2)),
                  ((4, 2, 3), (1, 3, 2)), ((1, 2, 3), (4, 3, 2)), ((2, 3), (4, 3, 1))]


def _matmul_modified(sa, sb, grads, which):
    """``a @ b``, then one operand changed in place: the error names the saved (folded) tensor,
    or there is none where PyTorch saved a copy."""
    def f(M):
        a = M.arange(float(np.prod(sa)), dtype=M.float64).reshape(sa)
        b = M.arange(float(np.prod(sb)), dtype=M.float64).reshape(sb) / 7
        leaves = [M.tensor(1.0, dtype=M.float64, requires_grad=True) if g else None
                  for g in grads]
        a = a * leaves[0] if grads[0] else a
        b = b * leaves[1] if grads[1] else b
        c = a @ b
        (a, b)[which].mul_(2)
        try:
            c.sum().backward()
        except RuntimeError as e:
            return c.grad_fn, str(e).replace("torch.", "ember.")
        return c.grad_fn, [t.grad for t in leaves if t is not None]
    return f


@pytest.mark.parametrize("sa,sb", _MATMUL_SHAPES)
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
def test_matmul_saves_folded_operands(sa, sb, grads):
    for which in (0, 1):
        both(_matmul_modified(sa, sb, grads, which))


def test_matmul_fold_grads_second_order():
    def f(M):
        a = M.tensor(np.linspace(-1, 1, 24).reshape(4, 2, 3), requires_grad=True)
        w = M.tensor(np.linspace(0.5, 2, 6).reshape(2, 3), requires_grad=True)
        y = a @ w.t()
        g, = M.autograd.grad((y * y).sum(), [w], create_graph=True)
        g.sum().backward()
        return y.grad_fn, g, a.grad, w.grad
    both(f)


def test_std_mean_saves_result0_only():
    def f(M):
        x = M.tensor([1.0, 2.5, 4.0], requires_grad=True)
        s, m = M.std_mean(x, 0)
        v, m2 = M.var_mean(x, 0)
        m.sub_(1)      # mean is not saved: modifying it is no error
        m2.sub_(1)
        (s + v).backward()
        return x.grad, sorted(k for k in dir(s.grad_fn) if k.startswith("_saved_result"))
    both(f)


def _expanded_write(f):
    def g(M):
        x = (M.tensor([1.0, 3.0]) * 1).expand(2, 2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                f(M, x)
            except RuntimeError as e:
                return "raised", str(e)
        return x, [str(i.message) for i in w], x._version
    return g


EXPANDED_WRITES = {
    "masked_fill_": lambda M, x: x.masked_fill_(M.tensor([[True, False], [False, False]]), 5.0),
    "masked_fill_tensor": lambda M, x: x.masked_fill_(M.tensor([False, True]), M.tensor(2.0)),
    "fill_": lambda M, x: x.fill_(4.0),
    "fill_tensor": lambda M, x: x.fill_(M.tensor(4.0)),
    "zero_": lambda M, x: x.zero_(),
    "index_fill_": lambda M, x: x.index_fill_(1, M.tensor([1]), 6.0),
    "index_put_": lambda M, x: x.index_put_((M.tensor([0]), M.tensor([1])), M.tensor(8.0)),
    "setitem_int": lambda M, x: x[0].__setitem__(1, 9.0),
    "select_add_": lambda M, x: x[1, 0].add_(1),
    "add_": lambda M, x: x.add_(1),
    "copy_": lambda M, x: x.copy_(M.ones(2, 2)),
    "clamp_": lambda M, x: x.clamp_(0, 2),
    "scatter_": lambda M, x: x.scatter_(0, M.tensor([[1, 0]]), 3.0),
}


@pytest.mark.parametrize("name", sorted(EXPANDED_WRITES))
def test_write_into_expanded(name):
    both(_expanded_write(EXPANDED_WRITES[name]))


def test_backward_through_write_into_expanded_view():
    # CopySlices copies the gradient into the overlapping view's region: PyTorch refuses
    def f(M):
        x = M.tensor(1.5, dtype=M.float64, requires_grad=True) * 1
        y = x.expand(2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y.masked_fill_(M.tensor([True, False]), 2.0)
        try:
            y.sum().backward()
        except RuntimeError as e:
            return y.grad_fn, str(e)
        return y.grad_fn
    both(f)


# ---- fuzzer group 2 findings --------------------------------------------------------------

def _outcome(fn):
    try:
        return fn()
    except RuntimeError as e:
        return "RuntimeError: " + str(e)[:80]


def test_abs_and_nansum_refuse_complex():
    def f(M):
        z = M.tensor([1 + 1j, -2j])
        return (_outcome(lambda: z.abs_()), _outcome(lambda: z.absolute_()),
                _outcome(lambda: z.nansum()), M.tensor([-1.5]).abs_(),
                _outcome(lambda: M.tensor([1j], requires_grad=True).abs_()))
    both(f)


def test_inplace_checks_leaf_before_inference():
    def f(M):
        with M.inference_mode():
            x = M.tensor(0.6, dtype=M.float64, requires_grad=True)
        return _outcome(lambda: x.copy_(M.tensor(0.9))), _outcome(lambda: x.mul_(2))
    both(f)


def test_copy_into_itself_and_into_integers():
    def f(M):
        e = M.tensor([[0.8]], dtype=M.float64).sum(1, keepdim=True).expand(-1, 3)
        e.copy_(e)   # the kernel returns at once: no self-overlap refusal
        r = M.tensor([1.4], dtype=M.float64, requires_grad=True)
        i = M.tensor([1])
        i.copy_(r)   # an integer tensor records nothing
        a = (r * 1).clone()
        a.copy_(a)
        return e, e._version, i, i.requires_grad, i.grad_fn, type(a.grad_fn).__name__
    both(f)


def test_setitem_strips_every_leading_one_of_the_value():
    def f(M):
        x = M.tensor([[[1.4, 1.5], [0.5, 0.8]]], dtype=M.float64)
        v, _ = x.split(1, -1)
        v[M.tensor([0])] = v   # a (2, 1) view of itself: too hard to tell, allowed
        y = M.zeros(3)
        y[[0]] = M.ones(1, 1)
        z = M.zeros(2, 1)
        return x, y, _outcome(lambda: z.__setitem__(M.tensor([0]), z))
    both(f)


def test_std_of_a_constant_slice_has_zero_tangent():
    def f(M):
        fw = M.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(M.tensor([0.87] * 3, dtype=M.float64),
                             M.tensor([-1.2] * 3, dtype=M.float64))
            s, m = M.std_mean(x.unsqueeze(0), 1)
            return s, fw.unpack_dual(s).tangent, M.std(x).item()
    both(f)


def test_advanced_index_result_layout():
    # PyTorch's index kernel lays the result out after the source's strides, and the gradient
    # of an as_strided view of it follows that layout
    def f(M):
        a = M.tensor(np.arange(48.).reshape(2, 3, 4, 2) / 50 + 0.3, requires_grad=True)
        t = a[:, M.tensor([2, 0, 1])]
        s = a.permute(2, 0, 3, 1)[:, M.tensor([[1, 0]]), :, M.tensor([0, 2])]
        c = t.cumsum(dim=2)
        c.as_strided((2, 1), (1, 2), 27).sum().backward()
        return t.stride(), s.shape, s.stride(), a.grad
    both(f)


def test_node_without_gradient_still_checks_saved_versions():
    def f(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        a = x.clone()
        b = a.sin()
        a.add_(1)
        c = b.norm(0) + x.sum()   # norm(0) hands SinBackward0 no gradient
        return _outcome(lambda: c.backward())
    both(f)


def _any_error(fn):
    try:
        return fn()
    except Exception as e:   # noqa: BLE001 - the type is part of what is compared
        return type(e).__name__ + ": " + str(e)[:100]


def test_pow_exponent_gradient_reads_the_saved_result():
    # fuzzer seeds 2438, 2449, 4909: PyTorch's pow_backward_exponent uses the saved result, so a
    # change made through .data shows and double backward differentiates through the result
    def f(M):
        x = M.tensor(-0.2, dtype=M.float64, requires_grad=True)
        y = 1.5 ** x
        y.data.mul_(-0.5)
        g1, = M.autograd.grad(y * 3, x)
        z = M.tensor([0.8 + 0.3j], dtype=M.complex128, requires_grad=True)
        r = 1.5 ** z
        gz, gr = M.autograd.grad((r.exp() * 2).real.sum(), [z, r], create_graph=True)
        h = M.autograd.grad((gz * (1 - 2j)).real.sum(), [z, r], allow_unused=True)
        b = M.tensor([1.2, 0.7], dtype=M.float64, requires_grad=True)
        e = M.tensor([0.5, 2.0], dtype=M.float64, requires_grad=True)
        p = b ** e
        ge, gp = M.autograd.grad(p.sum(), [e, p], create_graph=True)
        return g1, h, M.autograd.grad(ge.sum(), [b, p], allow_unused=True)
    both(f)


def test_ops_save_what_pytorch_saves():
    # fuzzer seeds 2905, 3207, 4493: masked_select and take save self, index_add and index_copy
    # save source (when its gradient is needed): changing it in place makes backward refuse
    def f(M):
        out = []
        for build in (lambda x, s: x.masked_select(x > 0.5),
                      lambda x, s: x.take(M.tensor([0, 3])),
                      lambda x, s: M.zeros(3, 2).index_add(0, M.tensor([0, 2]), s),
                      lambda x, s: M.zeros(3, 2).index_copy(0, M.tensor([0, 2]), s)):
            x = M.tensor([[0.3, 0.9], [1.2, -0.4]], requires_grad=True)
            xs = x * 1
            y = build(xs, xs)
            xs.mul_(2)
            out.append(_outcome(lambda: y.sum().backward()))
        s = M.ones(2, 2)   # no gradient needed for source: not saved
        y = (M.zeros(3, 2, requires_grad=True) * 1).index_add(0, M.tensor([0, 2]), s)
        s.mul_(2)
        y.sum().backward()
        return out, y.grad_fn.next_functions[0][0] is not None
    both(f)


def test_as_strided_counts_from_the_storage_start():
    # fuzzer seeds 4300, 2421, 3040: as_strided of an as_strided view, a view reaching outside
    # its input (no gradient flows there), PyTorch's refusals instead of reading past the buffer
    def f(M):
        t0 = M.tensor([1.4, -1.0, -0.8])
        t2 = t0.as_strided((1,), (1,), 2).as_strided((1, 2), (3, 1), 1)
        x = M.arange(8., requires_grad=True)
        z = (x * 1)[2:5].as_strided((2, 2), (1, 1), 3)
        g, = M.autograd.grad((z * z).sum(), x, create_graph=True)
        e = (x * 1)[:0].as_strided((1,), (1,), 1)
        ge, = M.autograd.grad(e.sum(), x)
        errs = [_any_error(lambda a=a: t0[1:].as_strided(*a)) for a in
                (((2,), (1,), 2), ((2,), (-1,), 1), ((2, 2), (1,), 0))]
        return t2, t2.storage_offset(), g, M.autograd.grad(g.sum(), x), ge, errs
    both(f)


def test_roll_dims_of_a_zero_dim_tensor():
    # fuzzer seeds 2252, 3608, 4870
    def f(M):
        x = M.tensor(0.9)
        return (x.roll(1), _any_error(lambda: x.roll(1, 0)), _any_error(lambda: x.roll(1, -1)),
                _any_error(lambda: x.roll((1, 1), (0, 0))))
    both(f)


def test_copies_are_laid_out_as_pytorch_lays_them_out():
    # fuzzer seeds 3121, 3463, 3857, 4057, 4731: clone of a tensor that is not dense, an
    # elementwise result whose operands disagree on layout (the first decides), expand's
    # strides; views of the results succeed or fail as in PyTorch
    def f(M):
        a = M.tensor([[1.5, 1.7]], requires_grad=True).expand(2, -1, -1).clone()
        b = M.ones(4, 3).t() + M.ones(3, 4)
        c = M.ones(3, 4) + M.ones(4, 3).t()
        d = M.arange(3.).reshape(1, 1, 1, 3).permute(2, 3, 0, 1) \
            + M.arange(2.).reshape(2, 1, 1, 1).permute(2, 1, 0, 3)
        e = M.arange(2.).reshape(1, 2, 1).permute(1, 2, 0).expand(2, 2, 1)
        g = M.arange(6.).reshape(3, 2, 1).transpose(0, 1) / M.ones(3, 2, 1, 1, 1)
        return (a.stride(), a.reshape(-1, 4).grad_fn, b.stride(), c.stride(), d.stride(),
                e.stride(), g.stride(), _any_error(lambda: b.view(12)))
    both(f)


def test_matmul_with_empty_inner_dim_copies_the_transpose():
    # fuzzer seed 2528: the product still has elements, so output.mT.contiguous() copies
    def f(M):
        a = M.ones(2, 0, requires_grad=True) * 1
        return [type((a @ M.ones(s)).grad_fn).__name__ for s in ((1, 0, 2), (3, 0, 2))]
    both(f)


def test_double_backward_through_an_empty_unfold_keeps_the_graph():
    # fuzzer seeds 1715, 4258: the gradient of an empty view is zeros still linked to the graph
    # (create_graph), so differentiating it again works
    def f(M):
        t0 = M.tensor([[1.3]], dtype=M.float64, requires_grad=True)
        t2 = t0.unfold(-2, 0, 2).sinh()
        g, = M.autograd.grad(t2.sum(), [t0], create_graph=True)
        h, = M.autograd.grad((g * 2).sum(), [t0], allow_unused=True)
        return g, g.requires_grad, h
    both(f)


def test_view_as_real_regenerated_history_keeps_its_name():
    # fuzzer seed 1406: PyTorch replays view_as_real / view_as_complex (not as_strided) to
    # regenerate such a view's history after an in-place change
    def f(M):
        x = M.tensor([[1 + 2j, 3 - 1j]], requires_grad=True)
        y = x * 2
        r = M.view_as_real(y)
        r.div_(M.tensor([1.5, 2.0], dtype=M.float64))
        s = M.view_as_real(y)[0, 1]
        y.mul_(2)
        z = M.tensor([[1., 2], [3, 4]], requires_grad=True) * 1
        c = M.view_as_complex(z)
        c.mul_(2)
        (r.sum() + c.abs().sum() + z.sum()).backward()
        return [r.grad_fn.name(), s.grad_fn.name(), y.real.grad_fn.name(),
                c.grad_fn.name(), x.grad, r]
    both(f)


def test_inplace_on_a_self_overlapping_view_runs_element_by_element():
    # fuzzer seed 4325: as_strided views whose elements share memory are written element after
    # element, each reading what the earlier ones wrote
    def f(M):
        b = M.arange(12, dtype=M.float64) / 7 + 0.3
        v = b.as_strided((3, 3), (2, 1), 2)
        v.div_(v.gather(-2, M.tensor([[0, 1, 1], [1, 0, 2], [0, 0, 2]])))
        b.as_strided((3, 3), (2, 1), 2).tanh_()
        b.as_strided((3, 3), (1, 2), 1).mul_(M.tensor([1.5, 2, 3], dtype=M.float64))
        b.as_strided((2, 3), (1, 2), 0).add_(1)   # strided, no overlap
        c = M.arange(12, dtype=M.float32).reshape(3, 4) + 1
        c.as_strided((3, 3), (3, 1), 0).div_(M.tensor(2.0, dtype=M.float64))
        x = M.arange(6, dtype=M.float64).requires_grad_()
        y = x * 1
        y.as_strided((2, 3), (2, 1)).mul_(2)
        y.sum().backward()
        return b, c, y.detach(), x.grad
    both(f)
