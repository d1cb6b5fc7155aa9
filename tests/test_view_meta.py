"""Autograd metadata of views and of calls on special tensors, compared with PyTorch: the node
each index form records, `.real`/`.imag`, reshape's three cases, views made under no_grad, and
calls on inference tensors outside inference mode."""
import numpy as np
import pytest

from helpers import both


def _chain(t, n=4):
    """The names along the first edges of ``t``'s history."""
    out, fn = [], t.grad_fn
    while fn is not None and len(out) < n:
        out.append(fn.name().replace("torch::", "ember::"))
        fn = fn.next_functions[0][0] if fn.next_functions else None
    return out


INDEX_FORMS = ["[:]", "[0::1]", "[0:3]", "[0:100]", "[...]", "[:, :]", "[:, 0:4]", "[:, 0:100]",
               "[:, -4:]", "[:, -10:4]", "[-3:, 1]", "[:, 1:]", "[0]", "[None]", "[..., None]",
               "[0][:]", "[(slice(None),)]", "[:, None:None:None]"]


@pytest.mark.parametrize("key", INDEX_FORMS)
def test_index_form_nodes(key):
    def f(M):
        a = M.tensor(np.arange(12.).reshape(3, 4), requires_grad=True) * 1
        return _chain(eval("a" + key, {"a": a}))
    both(f)


RESHAPES = ["a.reshape(24)", "a[:2].reshape(12)", "a[:, :3].reshape(12)",
            "a[:, :3].reshape(2, 2, 3)", "a.t().reshape(6, 2, 2)", "a.t().flatten()",
            "a[:, 0].reshape(2, 2)", "a.expand(2, 4, 6).reshape(2, 24)", "a[0:1, :].reshape(6)"]


@pytest.mark.parametrize("src", RESHAPES)
def test_reshape_nodes(src):
    def f(M):
        a = M.tensor(np.arange(24.).reshape(4, 6), requires_grad=True) * 1
        r = eval(src)
        (g,) = M.autograd.grad((r * M.arange(float(r.numel())).reshape(r.shape)).sum(), a)
        return _chain(r), r._is_view(), g
    both(f)


def test_real_imag_are_selects_of_view_as_real():
    def f(M):
        a = M.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        b = a * 1
        out = [_chain(b.real), _chain(b.imag), b.imag.storage_offset()]
        ((b.real * M.tensor([1., 2.])).sum() + (b.imag * M.tensor([3., 4.])).sum()).backward()
        return out + [a.grad]
    both(f)


def test_view_made_under_no_grad_requires_grad():
    def f(M):
        a = M.tensor([1.0, 2.0], requires_grad=True)
        b = a.exp()
        with M.no_grad():
            v = b[0:1]
            u = a.view(2)
        out = [v.requires_grad, v.is_leaf, u.requires_grad, u.is_leaf]
        out.append(M.autograd.grad((v * 3 + b).sum(), [a, v], allow_unused=True,
                                   retain_graph=True))
        out.append(M.autograd.grad((u * 3).sum() + a.sum(), [u, a], allow_unused=True))
        (v * 3 + b).sum().backward(inputs=[v, a], retain_graph=True)
        out += [a.grad, v.grad]
        try:
            M.autograd.grad((v * 3).sum() + b.sum(), [v])
        except RuntimeError as e:
            out.append(str(e))
        try:
            v.mul_(2)
        except RuntimeError as e:
            out.append(str(e)[:40])
        return out
    both(f)


INFERENCE = ["t0.exp2()", "t0.view(3)", "t0.expand(2, 3)", "t0[0]", "t0 * 2", "t0 + n", "t0 ** 2",
             "t0 - 1", "t0 / 2", "t0.clamp(0, 1)", "1 / t0",
             "t0.sum()", "t0.clone()", "t0.float()", "t0[m]", "t0[[0, 2]]", "t0.index_select(0, i)",
             "t0.masked_fill(m, 1.)", "t0.split(1)[0]", "t0.unbind()[1]", "t0.reshape(3, 1)"]


@pytest.mark.parametrize("src", INFERENCE)
def test_inference_tensor_outside_inference_mode(src):
    def f(M):
        with M.inference_mode():
            t0 = M.tensor([0.2, 0.3, 0.4], dtype=M.float64, requires_grad=True)
        n = M.tensor([1.0, 2.0, 3.0], dtype=M.float64, requires_grad=True)
        m = M.tensor([False, True, True])
        i = M.tensor([0, 2])
        r = eval(src, {"t0": t0, "n": n, "m": m, "i": i})
        out = [r.requires_grad, r.is_leaf, _chain(r, 1), r.is_inference(), r._is_view()]
        if r.requires_grad:
            out.append(M.autograd.grad(r.sum(), t0))
        return out
    both(f)
