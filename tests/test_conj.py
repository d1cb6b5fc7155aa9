"""PyTorch's lazy conjugation: ``conj()`` of a complex tensor is a view with the conjugate bit
(memory shared both ways), ``.imag`` of it a view with the negative bit; autograd and forward AD
see through both, in-place changes through them reach the base, and the grad_fn that a view
regenerates after an in-place change is ConjBackward0 as in PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from helpers import both, raises_same

Z = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j])
W = np.array([[1 + 2j], [2 + 0j], [3j]])


def T(M, a, rg=False):
    t = M.from_numpy(np.array(a, copy=True))
    return t.requires_grad_() if rg else t


def bits(t) -> tuple:
    return (t.is_conj(), t.is_neg(), t._is_view())


def test_conj_is_a_view_with_the_bit():
    def f(M):
        x = T(M, Z)
        y = x.conj()
        return [bits(y), y._base is x, y.data_ptr() == x.data_ptr(), y.stride(),
                y.storage_offset(), y, bits(y.conj()), y.conj()._base is x, bits(y[1:]),
                bits(y.unsqueeze(0).mT), bits(y.detach()), bits(y.data), bits(y.clone()),
                bits(y.resolve_conj()), y.resolve_conj(), bits(y.view(3, 1)), bits(-y),
                bits(y * 2), y.tolist(), M.is_conj(y), repr(y)]
    both(f)


def test_real_tensors_conj_is_themselves():
    def f(M):
        x = T(M, [1.0, 2.0], rg=True)
        return [x.conj() is x, x.conj_physical() is x, x.resolve_conj() is x,
                x.resolve_neg() is x, bits(x.conj())]
    both(f)


def test_imag_of_a_conj_view_has_the_negative_bit():
    def f(M):
        x = T(M, Z)
        y = x.conj()
        im, re = y.imag, y.real
        out = [bits(im), bits(re), im, re, im.stride(), im.storage_offset(), M.is_neg(im),
               bits(im.resolve_neg()), im.resolve_neg()]
        im.add_(1)            # stores the negation: x's imaginary parts go down by one
        re.mul_(2)
        return out + [x, y]
    both(f)


def test_writes_through_conj_views_reach_the_base():
    def f(M):
        x = T(M, Z)
        y = x.conj()
        y.mul_(2)
        a = x.clone()
        y[0] = 5 + 5j
        b = x.clone()
        y.copy_(T(M, Z * 1j))
        c = x.clone()
        y.conj_physical_()
        d = [x.clone(), bits(y)]
        x.add_(1j)            # and writes into the base are seen through the view
        return [a, b, c, d, y, x._version, y._version]
    both(f)


def test_conj_view_errors():
    x, tx = ember.from_numpy(Z.copy()), torch.from_numpy(Z.copy())
    raises_same(lambda: ember.view_as_real(x.conj()), lambda: torch.view_as_real(tx.conj()))
    raises_same(lambda: x.conj().numpy(), lambda: tx.conj().numpy())
    raises_same(lambda: x.conj().imag.numpy(), lambda: tx.conj().imag.numpy())
    raises_same(lambda: np.asarray(x.conj()), lambda: np.asarray(tx.conj()))


@pytest.mark.parametrize("case", range(6))
def test_gradients_through_conj_views_and_inplace(case):
    """The regressions the fuzzer found (seeds 337, 911, 1233) and their neighbours."""
    def f(M):
        z = T(M, Z, rg=True)
        w = T(M, W)
        out = []
        if case == 0:     # .mH, then in-place on it: ConjBackward0 regenerated (seed 337)
            t3 = (z.view(-1, 3) / 3).mH
            t3.add_(t3)
            out.append(t3.grad_fn)
            t3.reciprocal_()
            loss = (t3 * w).sum().abs()
        elif case == 1:   # the base changed in place after the conj view was taken (seed 911)
            h = z * (1 + 1j)
            c = h.conj()
            h.sub_(T(M, [1.0, 2.0, 3.0]))
            out += [c.requires_grad, c.is_leaf, c.grad_fn, c]
            loss = (c * w.reshape(3)).sum().abs()
        elif case == 2:   # a conj view made under no_grad is a view requiring grad (seed 1233)
            with M.no_grad():
                m = z.view(3, 1).mH
            out += [m.requires_grad, m.grad_fn]
            loss = (z * 2).abs().sum()
        elif case == 3:   # .imag of a conj view, changed in place
            h = z * 2
            im = h.conj().imag
            im.mul_(3)
            out += [h.grad_fn, im.grad_fn]
            loss = (h * w.reshape(3)).sum().abs()
        elif case == 4:   # a slice of a conj view, after the base changed: AsStridedBackward0
            h = z * 2
            v = h.conj()[1:]
            v.mul_(2j)
            h.imag.mul_(2)
            out += [v.grad_fn, h.grad_fn]
            loss = h.abs().sum() + v.real.sum()
        else:             # double backward through conj
            g, = M.autograd.grad((z.conj() * z * w.reshape(3)).real.sum(), z,
                                 create_graph=True)
            out.append(g)
            loss = g.abs().sum()
        loss.backward()
        return out + [z.grad]
    both(f)


def test_forward_ad_through_conj_views():
    def f(M):
        fw = M.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(T(M, Z), T(M, [1j, 2, 3 + 1j]))
            c = d.conj()
            out = [fw.unpack_dual(c).tangent]
            c.mul_(T(M, [2j, 1, 1]))
            out += [fw.unpack_dual(d).tangent, fw.unpack_dual(c).tangent]
            im = d.conj().imag
            im.mul_(3)
            out += [fw.unpack_dual(d).tangent, fw.unpack_dual(im).tangent, d]
        return out
    both(f)


def test_conj_physical_records_its_nodes():
    def f(M):
        z = T(M, Z, rg=True)
        r = M.conj_physical(z)
        h = z * 1
        h.conj_physical_()
        x = T(M, [1.0, 2.0], rg=True) * 1
        x.conj_physical_()   # on a real tensor too: a version bump and a node
        return [r.grad_fn, bits(r), h.grad_fn, x.grad_fn, x._version]
    both(f)
