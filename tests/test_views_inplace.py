"""Storage semantics: views share memory and one version counter with their base; in-place
ops bump it; in-place ops through views rebase the base's autograd history (vs PyTorch)."""
import numpy as np
import pytest
import torch

import ember
from helpers import both, raises_same


def _raises_like(fe, ft):
    """raises_same, also reading torch's C++ node names (torch::autograd::X) as ember::..."""
    msgs = []
    for f in (ft, fe):
        with pytest.raises(Exception) as info:
            f()
        msgs.append((type(info.value).__name__, str(info.value)))
    (tt, tm), (et, em) = msgs
    assert et == tt
    assert em == tm.replace("torch.", "ember.").replace("torch::", "ember::"), f"\n{em}\n{tm}"


def _base(M):
    return M.tensor(np.arange(12.0).reshape(4, 3))


VIEWS = {
    "view": lambda x: x.view(3, 4),
    "view_flat": lambda x: x.view(-1),
    "reshape_view": lambda x: x.reshape(2, 2, 3),
    "view_as": lambda x: x.view_as(x.new_zeros(6, 2)),
    "flatten": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(0, (2, 2)),
    "transpose": lambda x: x.transpose(0, 1),
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "permute": lambda x: x.permute(1, 0),
    "movedim": lambda x: x.movedim(0, 1),
    "squeeze": lambda x: x.view(4, 1, 3).squeeze(1),
    "squeeze_all": lambda x: x.view(1, 4, 1, 3).squeeze(),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "select": lambda x: x.select(1, 2),
    "select_neg": lambda x: x.select(0, -1),
    "slice_rows": lambda x: x[1:3],
    "slice_step": lambda x: x[::2, 1:],
    "int_index": lambda x: x[2],
    "ellipsis_none": lambda x: x[..., None, 1],
    "narrow": lambda x: x.narrow(0, 1, 2),
    "diagonal": lambda x: x.diagonal(),
    "diagonal_off": lambda x: x.diagonal(1),
    "unfold": lambda x: x.unfold(0, 2, 2),
    "as_strided": lambda x: x.as_strided((2, 2), (3, 1), 1),
    "chunk0": lambda x: x.chunk(2)[1],
    "split0": lambda x: x.split(1, dim=1)[2],
    "unbind0": lambda x: x.unbind(1)[0],
    "view_of_view": lambda x: x.t()[1].narrow(0, 1, 2),
}


def _observe(M, make, inplace=True):
    x = _base(M)
    v = make(x)
    r = [tuple(v.shape), v.stride(), v.is_contiguous(), v.storage_offset(),
         (v.data_ptr() - x.data_ptr()) // x.element_size(), v._base is x, v._is_view(),
         v._version, v.is_leaf, v.requires_grad]
    if inplace:
        v.mul_(-1)
        r += [x, x._version, v._version]
    x.add_(100)
    r += [v, x._version, v._version]
    x.zero_()
    r += [v.sum(), v._version]
    return r


@pytest.mark.parametrize("name", list(VIEWS))
def test_views_share_memory_and_version(name):
    both(lambda M: _observe(M, VIEWS[name]))


@pytest.mark.parametrize("name", ["expand", "expand_as", "broadcast_to"])
def test_expand_shares_memory(name):
    make = {"expand": lambda x: x[0].expand(5, 3),
            "expand_as": lambda x: x[:, :1].expand_as(x),
            "broadcast_to": lambda x: x[1].broadcast_to((2, 3))}[name]
    both(lambda M: _observe(M, make, inplace=False))
    # writing into overlapping memory is refused, with torch's message
    raises_same(lambda: make(_base(ember)).add_(1), lambda: make(_base(torch)).add_(1))


def test_reshape_copies_when_it_must():
    def f(M):
        x = _base(M)
        r = x.t().reshape(12)          # not viewable: a copy
        r.add_(1)
        c = x.t().contiguous()
        c2 = x.contiguous()
        return [r._base is None, x._version, r.data_ptr() == x.data_ptr(), r.is_contiguous(),
                c._base is None, c.data_ptr() == x.data_ptr(), c2 is x, x]
    both(f)
    raises_same(lambda: _base(ember).t().view(12), lambda: _base(torch).t().view(12))


def test_detach_shares_version_data_does_not():
    def f(M):
        x = _base(M)
        d = x.detach()
        dd = x.data
        d.add_(1)
        r = [x._version, d._version, dd._version, x]
        dd.mul_(2)
        r += [x._version, d._version, dd._version, x, d._base, dd._base,
              d.data_ptr() == x.data_ptr() == dd.data_ptr()]
        x.sub_(1)
        r += [x._version, d._version, dd._version]
        return r
    both(f)


def test_version_bumps_per_inplace_op():
    def f(M):
        x = M.zeros(3)
        v = x[1:]
        out = [x._version]
        x.add_(1)
        out.append(x._version)
        x += 1
        out.append(x._version)
        x.mul_(2).sub_(1)
        out.append(x._version)
        v.fill_(5)
        out.append((x._version, v._version))
        x.copy_(M.ones(3))
        out.append(x._version)
        x[0] = 7.0
        out.append(x._version)
        y = x + 1          # out of place: no bump
        out += [x._version, y._version, x, v]
        return out
    both(f)


def test_data_setter_and_version():
    def f(M):
        a = M.ones(3, requires_grad=True)
        a.data = M.zeros(3) + 2
        (a * a).sum().backward()
        b = M.ones(2)
        b.data = M.tensor([5.0, 6.0])
        return [a, a.grad, a._version, b, b._version, a.is_leaf]
    both(f)


# ---- autograd through in-place ops on views ------------------------------------------------

def test_inplace_on_view_of_non_leaf_rebases_base():
    def f(M):
        a = M.tensor([1., 2., 3., 4.], requires_grad=True)
        b = a * 1
        v = b.narrow(0, 1, 2)
        names = [v.grad_fn.name()]
        v.mul_(2)
        names += [b.grad_fn.name().split("::")[-1], v.grad_fn.name(), b._version, v._version,
                  b.grad_fn.next_functions, v.grad_fn.next_functions]
        (b * M.tensor([1., 10., 100., 1000.])).sum().backward(retain_graph=True)
        g1 = a.grad.clone()
        a.grad = None
        v.sum().backward()
        return names + [g1, a.grad, b]
    e, _ = both(f)
    assert e[-3].tolist() == [1.0, 20.0, 200.0, 1000.0]


def test_view_regenerated_after_base_inplace():
    def f(M):
        a = M.tensor([1., 2., 3., 4.], requires_grad=True)
        b = a * 1
        v = b.narrow(0, 1, 2)
        b.mul_(3)
        r = [v.grad_fn, v]
        v.sum().backward()
        return r + [a.grad]
    e, _ = both(f)
    assert e[-1].tolist() == [0.0, 3.0, 3.0, 0.0]


def test_view_of_leaf_after_no_grad_inplace():
    def f(M):
        a = M.tensor([1., 2., 3., 4.], requires_grad=True)
        v = a.narrow(0, 1, 2)
        r = [v.grad_fn]
        with M.no_grad():
            a.mul_(2)
        r += [v.grad_fn, v.requires_grad, v]
        (v * v).sum().backward()
        return r + [a.grad]
    both(f)


def test_two_views_and_saved_view_error():
    def f(M):
        a = M.tensor([1., 2., 3., 4.], requires_grad=True)
        b = a * 1
        v1, v2 = b.narrow(0, 0, 2), b.narrow(0, 2, 2)
        v1.mul_(v2)
        return [b.grad_fn.name().split("::")[-1], v1.grad_fn, v2.grad_fn]
    both(f)

    def g(M):
        a = M.tensor([1., 2., 3., 4.], requires_grad=True)
        b = a * 1
        v1, v2 = b.narrow(0, 0, 2), b.narrow(0, 2, 2)
        v1.mul_(v2)
        b.sum().backward()
    err = raises_same(lambda: g(ember), lambda: g(torch))
    assert "output 0 of AsStrided" in str(err)


def test_base_gains_history_through_copy():
    def f(M):
        b = M.zeros(4)
        v = b.narrow(0, 0, 2)
        x = M.ones(4, requires_grad=True)
        b.copy_(x * 3)
        r = [b.grad_fn, v.grad_fn, v.requires_grad, v.is_leaf]
        y = v * 2
        r.append(y.requires_grad)
        y.sum().backward()
        return r + [x.grad]
    e, _ = both(f)
    assert e[-1].tolist() == [6.0, 6.0, 0.0, 0.0]


def test_inplace_chain_through_transposed_view():
    data = np.random.default_rng(0).standard_normal((3, 4))

    def f(M):
        a = M.tensor(data, requires_grad=True)
        b = a * 2
        v = b.t().select(0, 1)
        v.sin_()
        w = b[1:, ::2]
        w.mul_(2)
        b.sum().backward()
        return [v.grad_fn, w.grad_fn, b.grad_fn.name().split("::")[-1], b, a.grad]
    both(f)


def test_setitem_on_non_leaf_grad():
    data = np.random.default_rng(1).standard_normal((3, 3))

    def f(M):
        a = M.tensor(data, requires_grad=True)
        s = M.tensor([5.0, 6.0, 7.0], requires_grad=True)
        b = a * 2
        b[1] = s * s
        b[:, 0] = 0.0
        (b * b).sum().backward()
        return [b, a.grad, s.grad, b.grad_fn.name().split("::")[-1]]
    both(f)


def test_overlapping_view_gradients_accumulate():
    def f(M):
        a = M.tensor([1., 2.], requires_grad=True)
        b = a * 1
        e = b.expand(3, 2)
        b.mul_(2)
        r = [e.grad_fn]
        (e * M.arange(6.0).view(3, 2)).sum().backward()
        x = M.arange(4.0).requires_grad_()
        s = x.as_strided((3, 2), (1, 1))
        (s * s).sum().backward()
        return r + [a.grad, x.grad, s.grad_fn]
    both(f)


def test_double_backward_through_copyslices():
    def f(M):
        a = M.tensor([0.5, 1.0, 1.5], requires_grad=True)
        b = a * a
        b[1:].mul_(a[1:])
        (g,) = M.autograd.grad(b.sum(), a, create_graph=True)
        (h,) = M.autograd.grad(g.sum(), a)
        return [b, g, h]
    both(f)


INPLACE_ERRORS = [
    lambda M: M.ones(2, requires_grad=True).add_(1),
    lambda M: M.ones(2, requires_grad=True).narrow(0, 0, 1).mul_(2),
    lambda M: M.ones(2, 2, requires_grad=True).t().zero_(),
    lambda M: M.ones(2, requires_grad=True)[0].fill_(3),
    lambda M: M.ones(2, requires_grad=True).unbind(0)[0].mul_(2) if False else
    (M.ones(2, requires_grad=True) * 1).unbind(0)[0].mul_(2),
    lambda M: (M.ones(4, requires_grad=True) * 1).split(2)[0].add_(1),
    lambda M: (M.ones(4, requires_grad=True) * 1).chunk(2)[1].zero_(),
    lambda M: M.ones(3).expand(2, 3).add_(1),
    lambda M: M.ones(3, 2).copy_(M.ones(2, 3)),
    lambda M: M.ones(3, dtype=M.int64).mul_(1.5),
    lambda M: M.ones(3).add_(M.ones(2, 3)),
]


@pytest.mark.parametrize("i", range(len(INPLACE_ERRORS)))
def test_inplace_errors(i):
    raises_same(lambda: INPLACE_ERRORS[i](ember), lambda: INPLACE_ERRORS[i](torch))


def test_inplace_on_leaf_view_allowed_under_no_grad():
    def f(M):
        a = M.ones(4, requires_grad=True)
        with M.no_grad():
            a[1:3].mul_(5)
            a.narrow(0, 0, 1).fill_(-1)
        (a * a).sum().backward()
        return [a, a.grad, a._version, a.is_leaf, a.grad_fn]
    both(f)


def test_saved_tensor_modified_through_view_raises():
    def f(M):
        a = M.ones(3, requires_grad=True)
        b = a * 2
        c = b * b                  # saves b
        b[0].add_(1)               # bumps b's version through a view
        c.sum().backward()
    _raises_like(lambda: f(ember), lambda: f(torch))

    def g(M):
        a = M.ones(3, requires_grad=True)
        b = a.exp()                # saves its output
        b.detach().mul_(2)
        b.sum().backward()
    _raises_like(lambda: g(ember), lambda: g(torch))


def test_expand_error_names_the_tensor_type():
    from helpers import raises_same
    raises_same(lambda: ember.ones(2, 4).expand(4), lambda: torch.ones(2, 4).expand(4))
    raises_same(lambda: ember.ones(2, 4, dtype=ember.float64).expand(3, 4, 2),
                lambda: torch.ones(2, 4, dtype=torch.float64).expand(3, 4, 2))
