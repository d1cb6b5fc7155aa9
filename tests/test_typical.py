"""Ordinary PyTorch autograd code runs unchanged on ember and gives PyTorch's results."""
import numpy as np
import torch

import ember


def _program(torch):
    """Ordinary autograd code: an RNN loop, clipping, double backward, losses, in-place
    on views, scatter/gather, .data updates and dtype promotion."""
    rs = np.random.RandomState(0)
    out = []
    # 1. tiny RNN with manual loop, tanh cell, gradient clipping by hand
    Wx = torch.tensor(rs.randn(3, 5) * 0.5, requires_grad=True)
    Wh = torch.tensor(rs.randn(5, 5) * 0.5, requires_grad=True)
    b = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    xs = torch.tensor(rs.randn(7, 2, 3))
    h = torch.zeros(2, 5, dtype=torch.float64)
    hs = []
    for t in range(xs.shape[0]):
        h = torch.tanh(xs[t] @ Wx + h @ Wh + b)
        hs.append(h)
    H = torch.stack(hs, 1)
    loss = (H ** 2).mean() + H[:, -1].abs().sum() * 0.1
    loss.backward()
    for p in (Wx, Wh, b):
        n = p.grad.norm()
        if n > 1:
            p.grad.mul_(1 / n)
    out += [loss.item(), Wx.grad.sum().item(), Wh.grad.abs().max().item(), b.grad.tolist()]
    # 2. hessian-vector product via double backward
    x = torch.tensor(rs.randn(4), requires_grad=True)
    f = (x.sin() * x.exp()).sum() + (x[None, :] * x[:, None]).sum()
    g, = torch.autograd.grad(f, x, create_graph=True)
    v = torch.ones(4, dtype=torch.float64)
    hv, = torch.autograd.grad(g, x, v)
    out += [hv.tolist()]
    # 3. masked ops, where, clamp, softmax cross-entropy with integer targets
    logits = torch.tensor(rs.randn(6, 4), requires_grad=True)
    tgt = torch.tensor([0, 3, 1, 2, 2, 0])
    lp = torch.log_softmax(logits, dim=1)
    nll = -lp[torch.arange(6), tgt].mean()
    reg = torch.where(logits > 0, logits, torch.zeros_like(logits)).clamp(max=1.0).sum()
    (nll + 0.01 * reg).backward()
    out += [nll.item(), logits.grad.sum(0).tolist()]
    # 4. in-place on a view of a non-leaf, scatter_add, gather
    w = torch.tensor(rs.randn(5), requires_grad=True)
    y = w.clone()
    y[1:4] *= 3
    y[0] = y[4] * 2
    z = torch.zeros(3, dtype=torch.float64).scatter_add(0, torch.tensor([0, 1, 0, 2, 1]), y)
    z.gather(0, torch.tensor([2, 0])).sum().backward()
    out += [w.grad.tolist(), y.grad_fn.name().replace('torch::', 'ember::')]
    # 5. no_grad update loop with .data and detach
    p = torch.tensor([1.0, -2.0], requires_grad=True)
    for _ in range(3):
        l = ((p - 3) ** 2).sum()
        l.backward()
        p.data -= 0.1 * p.grad
        p.grad.zero_()
    out += [p.tolist(), p.detach().numpy().tolist()]
    # 6. dtype promotion mixtures
    a = torch.arange(6).reshape(2, 3)
    def name(t):
        return str(t.dtype).split('.')[-1]
    out += [name(a * 2.5), name(a / 2), (a // 4).tolist(), (a % 4).tolist(),
            name(a.float() + torch.tensor(1., dtype=torch.float64))]
    return out


def _plain(o):
    return o if isinstance(o, str) else np.round(np.asarray(o, dtype=float), 6).tolist()


def test_ordinary_program_matches_torch():
    ours = [_plain(o) for o in _program(ember)]
    theirs = [_plain(o) for o in _program(torch)]
    theirs = [o.replace("torch::", "ember::") if isinstance(o, str) else o for o in theirs]
    assert ours == theirs
