"""ember.autograd.functional against torch.autograd.functional on the same NumPy data."""
import numpy as np
import pytest
import torch
import torch.autograd.functional as TF

import ember
import ember.autograd.functional as EF
from helpers import raises_same

RNG = np.random.default_rng(1234)
A = RNG.standard_normal(3) + 1.5          # positive-ish, keeps log/sqrt away from trouble
B = RNG.standard_normal((2, 3))
C = RNG.standard_normal((3, 4))
S = np.array([0.7])


def _e(*arrs):
    return tuple(ember.tensor(a) for a in arrs)


def _t(*arrs):
    return tuple(torch.tensor(a) for a in arrs)


def same(re, rt, path="res"):
    """Same nesting (Tensor / tuple / list), shapes, values and requires_grad."""
    if isinstance(rt, torch.Tensor):
        assert isinstance(re, ember.Tensor), (path, type(re))
        assert tuple(re.shape) == tuple(rt.shape), (path, re.shape, rt.shape)
        assert str(re.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1], path
        np.testing.assert_allclose(re.detach().numpy(), rt.detach().numpy(), rtol=1e-7,
                                   atol=1e-10, err_msg=path)
        assert re.requires_grad == rt.requires_grad, (path, re.requires_grad, rt.requires_grad)
        return
    assert type(re) is type(rt), (path, type(re), type(rt))
    assert len(re) == len(rt), path
    for i, (a, b) in enumerate(zip(re, rt)):
        same(a, b, f"{path}[{i}]")


def run(name, f, arrs, tuple_in=True, v=None, ekw=None, tkw=None, **kw):
    ie, it = _e(*arrs), _t(*arrs)
    if not tuple_in:
        ie, it = ie[0], it[0]
    args_e, args_t = (ie,), (it,)
    if v is not None:
        ve, vt = (_e(*v), _t(*v)) if isinstance(v, tuple) else (ember.tensor(v), torch.tensor(v))
        args_e, args_t = (ie, ve), (it, vt)
    re = getattr(EF, name)(f(ember), *args_e, **kw, **(ekw or {}))
    rt = getattr(TF, name)(f(torch), *args_t, **kw, **(tkw or {}))
    same(re, rt)
    return re, rt


# functions written once, for either library -------------------------------------------------

def f_exp_sum(m):
    return lambda x: x.exp().sum()


def f_elem(m):
    return lambda x: x.sin() * x ** 2


def f_matvec(m):
    return lambda x: (x.unsqueeze(0) * x.unsqueeze(1)).sum(0)


def f_two_in_one_out(m):
    return lambda x, y: (x * y).sum(1).exp()


def f_one_in_two_out(m):
    return lambda x: (x.exp(), (x ** 3).sum())


def f_two_in_two_out(m):
    return lambda x, y: (x * y, y.tanh().sum(0) + x)


def f_mm(m):
    return lambda y, w: m.matmul(y, w).sin()


def f_scalar2(m):
    return lambda x, y: (x ** 2 * y).sum() + (y.sin() ** 2).sum()


def f_indep(m):
    return lambda x, y: x * 2.0


JAC_CASES = [
    (f_exp_sum, (A,), False),
    (f_elem, (A,), False),
    (f_elem, (B,), True),
    (f_matvec, (A,), False),
    (f_two_in_one_out, (A, B), True),
    (f_one_in_two_out, (A,), False),
    (f_one_in_two_out, (A,), True),
    (f_two_in_two_out, (A, B), True),
    (f_mm, (B, C), True),
    (f_indep, (A, B), True),
]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("f,arrs,tuple_in", JAC_CASES)
def test_jacobian_reverse(f, arrs, tuple_in, create_graph):
    run("jacobian", f, arrs, tuple_in, create_graph=create_graph)


@pytest.mark.parametrize("f,arrs,tuple_in", JAC_CASES)
def test_jacobian_forward_mode(f, arrs, tuple_in):
    # torch only has the vectorized forward-mode path; ember builds it one basis vector at a time
    run("jacobian", f, arrs, tuple_in, strategy="forward-mode", tkw={"vectorize": True})


def test_jacobian_create_graph_is_differentiable():
    xe = ember.tensor(A, requires_grad=True)
    xt = torch.tensor(A, requires_grad=True)
    je = EF.jacobian(lambda x: x.sin() * x, xe, create_graph=True)
    jt = TF.jacobian(lambda x: x.sin() * x, xt, create_graph=True)
    same(je, jt)
    ge, = ember.autograd.grad(je.sum(), xe)
    gt, = torch.autograd.grad(jt.sum(), xt)
    same(ge, gt)
    # without create_graph the result is detached even for inputs requiring grad
    same(EF.jacobian(lambda x: x.sin() * x, xe), TF.jacobian(lambda x: x.sin() * x, xt))


HESS_CASES = [
    (f_exp_sum, (A,), False),
    (f_exp_sum, (B,), True),
    (lambda m: (lambda x: (x.sin() * x ** 2).sum()), (A,), False),
    (f_scalar2, (A, B), True),
    (lambda m: (lambda x, y: (x * 2).sum() + (y ** 3).sum()), (A, B), True),
]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("f,arrs,tuple_in", HESS_CASES)
def test_hessian(f, arrs, tuple_in, create_graph):
    run("hessian", f, arrs, tuple_in, create_graph=create_graph)


# forward-over-reverse: ops that save their *output* for backward (exp, tanh, ...) lose its
# tangent in ember (saved outputs are stored without their forward grad), so keep to ops that
# save inputs here
HESS_FWD_CASES = [c for c in HESS_CASES if c[0] is not f_exp_sum] + [
    (lambda m: (lambda x: (x.sin() * x ** 2).sum()), (B,), True)]


@pytest.mark.parametrize("f,arrs,tuple_in", HESS_FWD_CASES)
def test_hessian_forward_over_reverse(f, arrs, tuple_in):
    run("hessian", f, arrs, tuple_in, outer_jacobian_strategy="forward-mode",
        tkw={"vectorize": True})


@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp(create_graph):
    run("vjp", f_elem, (A,), False, v=RNG.standard_normal(3), create_graph=create_graph)
    run("vjp", f_exp_sum, (A,), False, create_graph=create_graph)          # v=None, scalar out
    run("vjp", f_two_in_two_out, (A, B), True,
        v=(RNG.standard_normal((2, 3)), RNG.standard_normal(3)), create_graph=create_graph)
    run("vjp", f_one_in_two_out, (A,), True,
        v=(RNG.standard_normal(3), np.array(1.5)), create_graph=create_graph)
    run("vjp", f_indep, (A, B), True, v=RNG.standard_normal(3), create_graph=create_graph)


@pytest.mark.parametrize("create_graph", [False, True])
def test_jvp(create_graph):
    run("jvp", f_elem, (A,), False, v=RNG.standard_normal(3), create_graph=create_graph)
    run("jvp", lambda m: (lambda x: x.exp() * 3), (S,), False, create_graph=create_graph)
    run("jvp", f_two_in_two_out, (A, B), True,
        v=(RNG.standard_normal(3), RNG.standard_normal((2, 3))), create_graph=create_graph)
    run("jvp", f_mm, (B, C), True, v=(RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))),
        create_graph=create_graph)


@pytest.mark.parametrize("name", ["vhp", "hvp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_vhp_hvp(name, create_graph):
    run(name, lambda m: (lambda x: (x.sin() * x ** 2).sum()), (A,), False,
        v=RNG.standard_normal(3), create_graph=create_graph)
    run(name, lambda m: (lambda x: (x ** 4).sum()), (S,), False, create_graph=create_graph)
    run(name, f_scalar2, (A, B), True, v=(RNG.standard_normal(3), RNG.standard_normal((2, 3))),
        create_graph=create_graph)


def test_create_graph_results_differentiable_again():
    xe, xt = ember.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    ve, vt = ember.tensor(B[0]), torch.tensor(B[0])
    for name in ("vjp", "jvp", "hvp", "vhp"):
        fe = (lambda x: (x.exp() * x).sum()) if name in ("hvp", "vhp") else \
            (lambda x: x.exp() * x)
        _, re = getattr(EF, name)(fe, xe, ve, create_graph=True)
        _, rt = getattr(TF, name)(fe, xt, vt, create_graph=True)
        assert re.requires_grad and rt.requires_grad
        same(ember.autograd.grad(re.sum(), xe), torch.autograd.grad(rt.sum(), xt))


# errors --------------------------------------------------------------------------------------

def _both(call):
    """``call(lib, functional_module, tensors)`` for each library, for raises_same."""
    return (lambda: call(ember, EF, _e(A, B)), lambda: call(torch, TF, _t(A, B)))


@pytest.mark.parametrize("call", [
    # strict mode: outputs independent of an input, linear functions for hessian...
    lambda m, F, t: F.vjp(lambda x, y: x * 2, t, m.ones(3), strict=True),
    lambda m, F, t: F.vjp(lambda x, y: x.detach() * 2, t, m.ones(3), strict=True),
    lambda m, F, t: F.jvp(lambda x, y: x * 2, t, (m.ones(3), m.ones(2, 3)), strict=True),
    lambda m, F, t: F.jvp(lambda x, y: x.detach(), t, (m.ones(3), m.ones(2, 3)), strict=True),
    lambda m, F, t: F.jacobian(lambda x, y: x * 2, t, strict=True),
    lambda m, F, t: F.jacobian(lambda x, y: (x * y).sum(), t, strict=True, create_graph=True),
    lambda m, F, t: F.jacobian(lambda x, y: x.detach(), t, strict=True),
    lambda m, F, t: F.hessian(lambda x, y: (x * 2).sum() + (y ** 2).sum(), t, strict=True),
    lambda m, F, t: F.hessian(lambda x, y: (x ** 2).sum(), t, strict=True),
    lambda m, F, t: F.hessian(lambda x, y: (x * y).sum(), t, strict=True, create_graph=True),
    lambda m, F, t: F.vhp(lambda x, y: (x * 2).sum() + (y ** 2).sum(), t,
                          (m.ones(3), m.ones(2, 3)), strict=True),
    lambda m, F, t: F.hvp(lambda x, y: (x * y).sum(), t, (m.ones(3), m.ones(2, 3)),
                          strict=True),
    lambda m, F, t: F.hvp(lambda x, y: (x ** 2).sum() + (y ** 2).sum(), t,
                          (m.ones(3), m.ones(2, 3)), strict=True, create_graph=True),
    lambda m, F, t: F.vhp(lambda x, y: (x ** 2).sum() + (y ** 3).sum(), t,
                          (m.ones(3), m.ones(2, 3)), strict=True, create_graph=True),
    lambda m, F, t: F.vjp(lambda x, y: (x ** 2).sum(), t, strict=True, create_graph=True),
    # argument checking
    lambda m, F, t: F.vjp(lambda x: x, [t[0]], m.ones(3)),
    lambda m, F, t: F.vjp(lambda x, y: x, (t[0], 3), m.ones(3)),
    lambda m, F, t: F.vjp(lambda x: [x], t[0], m.ones(3)),
    lambda m, F, t: F.vjp(lambda x: x, t[0]),
    lambda m, F, t: F.vjp(lambda x: x, t[0], m.ones(2)),
    lambda m, F, t: F.vjp(lambda x: (x, x), t[0], (m.ones(3),)),
    lambda m, F, t: F.vjp(lambda x: (x, x), t[0], (m.ones(3), m.ones(4))),
    lambda m, F, t: F.vjp(lambda x: x, t[0], (m.ones(3), m.ones(3))),
    lambda m, F, t: F.jvp(lambda x: x, t[0]),
    lambda m, F, t: F.jvp(lambda x, y: x, t, (m.ones(3),)),
    lambda m, F, t: F.jvp(lambda x, y: x, t, (m.ones(3), m.ones(3))),
    lambda m, F, t: F.hvp(lambda x: x, t[0], m.ones(3)),
    lambda m, F, t: F.vhp(lambda x: (x.sum(), x.sum()), t[0], m.ones(3)),
    lambda m, F, t: F.hvp(lambda x: x.sum(), t[0]),
    lambda m, F, t: F.hessian(lambda x: x, t[0]),
    lambda m, F, t: F.hessian(lambda x: (x.sum(),), t[0]),
    lambda m, F, t: F.jacobian(lambda x: x, t[0], strategy="sideways"),
    lambda m, F, t: F.hessian(lambda x: x.sum(), t[0], outer_jacobian_strategy="sideways"),
    lambda m, F, t: F.jacobian(lambda x: x, t[0], strategy="forward-mode", create_graph=True),
    lambda m, F, t: F.jacobian(lambda x: x, t[0], strategy="forward-mode", strict=True),
    lambda m, F, t: F.jacobian(lambda x: x * 2, t[0], strict=True, vectorize=True),
])
def test_errors_match_torch(call):
    fe, ft = _both(call)
    try:
        rt = ft()
    except Exception:  # noqa: BLE001
        raises_same(fe, ft)
    else:                       # torch accepts it (e.g. strict checks that pass): so must ember
        same(fe(), rt)


def test_vectorize_matches_torch():
    # vectorize=True: one batched backward pass (reverse mode); forward mode loops over tangents
    x = ember.tensor(A)
    for kw in ({}, {"strategy": "forward-mode"}):
        same(EF.jacobian(lambda x: x * 2, x, vectorize=True, **kw),
             TF.jacobian(lambda x: x * 2, torch.tensor(A), vectorize=True, **kw))
    same(EF.hessian(lambda x: (x ** 3).sum(), x, vectorize=True),
         TF.hessian(lambda x: (x ** 3).sum(), torch.tensor(A), vectorize=True))
    # torch: forward-mode needs vectorize=True; ember does it without
    with pytest.raises(NotImplementedError):
        TF.jacobian(lambda x: x * 2, torch.tensor(A), strategy="forward-mode")
    same(EF.jacobian(lambda x: x * 2, x, strategy="forward-mode"),
         TF.jacobian(lambda x: x * 2, torch.tensor(A), strategy="forward-mode", vectorize=True))


def test_inputs_are_not_modified_and_grad_mode_kept():
    xe = ember.tensor(A)
    with ember.no_grad():
        out, res = EF.vjp(lambda x: x * 3, xe, ember.ones(3))
    assert not xe.requires_grad and not out.requires_grad and not res.requires_grad
    assert ember.is_grad_enabled()
    np.testing.assert_allclose(res.numpy(), 3.0)
    EF.hessian(lambda x: (x ** 3).sum(), xe, outer_jacobian_strategy="forward-mode")
    assert not xe.requires_grad
