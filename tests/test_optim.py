"""ember.optim against torch.optim: trajectories, state_dicts, cross-loading, errors."""
import numpy as np
import pytest
import torch

import ember
import ember.optim as eoptim

SHAPES = [(3, 4), (5,)]
STEPS = 10

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, betas=(0.8, 0.9))),
    ("Adam", dict(lr=0.01, foreach=True)),
    ("Adam", dict(lr=0.01, fused=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.3)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.2)),
    ("Adagrad", dict(lr=0.1, maximize=True)),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.05)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, betas=(0.9, 0.5))),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("Rprop", dict(lr=0.01, etas=(0.4, 1.5), step_sizes=(1e-4, 0.05))),
    ("ASGD", dict(lr=0.05, lambd=1e-3, alpha=0.6, t0=3, weight_decay=0.01)),
]


def _init(dtype):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def _grad(x, k):
    # depends on the current parameters, so trajectories diverge if any step differs;
    # the sign flips of cos make Rprop's sign logic matter
    return 2 * x + np.cos(3 * x + k) + 0.1 * k


def _pair(dtype, name, kw, init=None):
    init = _init(dtype) if init is None else init
    tp = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    ep = [ember.tensor(a.copy(), requires_grad=True) for a in init]
    return tp, ep, getattr(torch.optim, name)(tp, **kw), getattr(eoptim, name)(ep, **kw)


def _step(tp, ep, topt, eopt, k):
    for t, e in zip(tp, ep):
        g = _grad(t.detach().numpy(), k)
        t.grad = torch.tensor(g)
        e.grad = ember.tensor(g.copy())
    topt.step()
    eopt.step()


def _close(a, b, rtol):
    np.testing.assert_allclose(np.asarray(b), a, rtol=rtol, atol=rtol)


def _cmp_value(t, e, rtol, where):
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), where
        assert str(t.dtype).split(".")[1] == str(e.dtype).split(".")[1], where
        assert tuple(t.shape) == tuple(e.shape), where
        _close(t.detach().numpy(), e.detach().numpy(), rtol)
    elif isinstance(t, (list, tuple)):
        assert type(t) is type(e) and len(t) == len(e), where
        for a, b in zip(t, e):
            _cmp_value(a, b, rtol, where)
    elif isinstance(t, float):
        assert e == pytest.approx(t, rel=rtol, abs=rtol), where
    else:
        assert t == e, where


def _cmp_state_dict(tsd, esd, rtol):
    assert set(tsd) == set(esd) == {"state", "param_groups"}
    assert set(tsd["state"]) == set(esd["state"])
    for k, ts in tsd["state"].items():
        assert list(ts) == list(esd["state"][k])
        for key, v in ts.items():
            _cmp_value(v, esd["state"][k][key], rtol, (k, key))
    assert len(tsd["param_groups"]) == len(esd["param_groups"])
    for tg, eg in zip(tsd["param_groups"], esd["param_groups"]):
        assert list(tg) == list(eg)
        for key, v in tg.items():
            _cmp_value(v, eg[key], rtol, key)


def _to_ember(v):
    if isinstance(v, torch.Tensor):
        return ember.tensor(v.detach().numpy().copy())
    if isinstance(v, dict):
        return {k: _to_ember(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_to_ember(x) for x in v)
    return v


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-10), (np.float32, 1e-5)])
@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_trajectory_and_state_dict(name, kw, dtype, rtol):
    tp, ep, topt, eopt = _pair(dtype, name, kw)
    for k in range(STEPS):
        _step(tp, ep, topt, eopt, k)
        for t, e in zip(tp, ep):
            _close(t.detach().numpy(), e.detach().numpy(), rtol)
            assert e.dtype is getattr(ember, np.dtype(dtype).name)
    _cmp_state_dict(topt.state_dict(), eopt.state_dict(), rtol)


@pytest.mark.parametrize("name,kw", CASES[1::2], ids=[n for n, _ in CASES[1::2]])
def test_load_torch_state_dict_continues(name, kw):
    tp, _, topt, _ = _pair(np.float64, name, kw)
    for k in range(4):
        for t in tp:
            t.grad = torch.tensor(_grad(t.detach().numpy(), k))
        topt.step()
    cur = [t.detach().numpy().copy() for t in tp]
    ep = [ember.tensor(a.copy(), requires_grad=True) for a in cur]
    eopt = getattr(eoptim, name)(ep, **kw)
    sd = topt.state_dict()
    eopt.load_state_dict(_to_ember(sd))
    # torch reloads too: loading casts non-'step' state (NAdam's mu_product) to the param dtype
    tp = [torch.tensor(a.copy(), requires_grad=True) for a in cur]
    topt = getattr(torch.optim, name)(tp, **kw)
    topt.load_state_dict(sd)
    for k in range(4, 9):
        for t, e in zip(tp, ep):
            g = _grad(t.detach().numpy(), k)
            t.grad, e.grad = torch.tensor(g), ember.tensor(g.copy())
        topt.step()
        eopt.step()
    for t, e in zip(tp, ep):
        _close(t.detach().numpy(), e.detach().numpy(), 1e-10)
    _cmp_state_dict(topt.state_dict(), eopt.state_dict(), 1e-10)


def test_ember_state_dict_loads_into_torch():
    tp, ep, topt, eopt = _pair(np.float64, "Adam", dict(lr=0.01, amsgrad=True))
    for k in range(3):
        _step(tp, ep, topt, eopt, k)
    esd = eopt.state_dict()
    conv = {"state": {k: {n: torch.tensor(v.numpy().copy()) for n, v in s.items()}
                      for k, s in esd["state"].items()},
            "param_groups": esd["param_groups"]}
    tp2 = [torch.tensor(e.detach().numpy().copy(), requires_grad=True) for e in ep]
    topt2 = torch.optim.Adam(tp2, lr=0.01, amsgrad=True)
    topt2.load_state_dict(conv)
    for k in range(3, 6):
        _step(tp2, ep, topt2, eopt, k)
    for t, e in zip(tp2, ep):
        _close(t.detach().numpy(), e.detach().numpy(), 1e-10)


def test_tensor_lr_groups_and_skip_none_grad():
    init = _init(np.float32)
    tp = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    ep = [ember.tensor(a.copy(), requires_grad=True) for a in init]
    topt = torch.optim.Adam([{"params": tp[:1]}, {"params": tp[1:], "lr": 0.1}],
                            lr=torch.tensor(0.01))
    eopt = eoptim.Adam([{"params": ep[:1]}, {"params": ep[1:], "lr": 0.1}],
                       lr=ember.tensor(0.01))
    for k in range(5):
        for t, e in zip(tp[:1], ep[:1]):   # the second param never gets a gradient
            g = _grad(t.detach().numpy(), k)
            t.grad, e.grad = torch.tensor(g), ember.tensor(g.copy())
        topt.step()
        eopt.step()
    for t, e in zip(tp, ep):
        _close(t.detach().numpy(), e.detach().numpy(), 1e-6)
    _cmp_state_dict(topt.state_dict(), eopt.state_dict(), 1e-6)
    assert repr(topt) == repr(eopt)


def test_version_bumped_once_and_zero_grad():
    p = ember.tensor([1.0, 2.0], requires_grad=True)
    opt = eoptim.Adam([p], lr=0.1)
    p.grad = ember.tensor([0.5, -0.5])
    v = p._version
    opt.step()
    assert p._version == v + 1
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and g.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None
    opt.step()                       # no gradient: nothing changes
    assert p._version == v + 1


def test_hooks():
    p = ember.tensor([1.0], requires_grad=True)
    opt = eoptim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    opt.register_state_dict_post_hook(lambda o, sd: sd.update(extra=1))
    p.grad = ember.tensor([1.0])
    opt.step()
    h1.remove()
    opt.step()
    assert calls == ["pre", "post", "post"]
    assert opt.state_dict()["extra"] == 1
    assert p.tolist() == pytest.approx([0.8])


def _errors(lib, make):
    try:
        make(lib)
    except Exception as exc:   # noqa: BLE001
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("make", [
    lambda m: m.optim.SGD([], lr=0.1),
    lambda m: m.optim.Adam([m.ones(2, requires_grad=True) * 2]),
    lambda m: m.optim.SGD(m.ones(2, requires_grad=True), lr=0.1),
    lambda m: (lambda p: m.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1))(
        m.ones(2, requires_grad=True)),
    lambda m: m.optim.Adam([m.ones(2, requires_grad=True)], lr=-1.0),
    lambda m: m.optim.Adam([m.ones(2, requires_grad=True)], betas=(1.0, 0.9)),
    lambda m: m.optim.Adam([m.ones(2, requires_grad=True)], betas=(0.9, m.tensor(0.9))),
    lambda m: m.optim.SGD([m.ones(2, requires_grad=True)], lr=0.1, nesterov=True),
    lambda m: m.optim.SGD([m.ones(2, requires_grad=True)], momentum=-1.0),
    lambda m: m.optim.Rprop([m.ones(2, requires_grad=True)], etas=(1.5, 1.2)),
    lambda m: m.optim.Adagrad([m.ones(2, requires_grad=True)], lr_decay=-1.0),
    lambda m: m.optim.Adam([m.ones(2, requires_grad=True)], fused=True, foreach=True),
    lambda m: m.optim.LBFGS([{"params": [m.ones(2, requires_grad=True)]},
                             {"params": [m.ones(2, requires_grad=True)]}]),
    lambda m: m.optim.SGD([m.ones(2, requires_grad=True)], lr=0.1).load_state_dict(
        {"state": {}, "param_groups": []}),
    lambda m: m.optim.SGD([m.ones(2, requires_grad=True)], lr=0.1).add_param_group(
        {"params": {m.ones(2, requires_grad=True)}}),
])
def test_errors(make):
    expected = _errors(torch, make)
    assert expected is not None
    assert _errors(ember, make) == (expected[0], expected[1].replace("torch.", "ember."))


def test_capturable_on_cpu_raises_like_torch():
    def make(m):
        p = m.ones(2, requires_grad=True)
        p.grad = m.ones(2)
        m.optim.Adam([p], capturable=True).step()
    assert _errors(ember, make) == _errors(torch, make)


def _rosenbrock(m, xy):
    return (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2


@pytest.mark.parametrize("kw", [dict(lr=0.1, max_iter=5),
                                dict(lr=1, max_iter=10, history_size=4,
                                     line_search_fn="strong_wolfe")])
def test_lbfgs(kw):
    res = {}
    for m in (torch, ember):
        xy = m.tensor([-1.2, 1.0], dtype=m.float64, requires_grad=True)
        opt = m.optim.LBFGS([xy], **kw)

        def closure():
            opt.zero_grad()
            loss = _rosenbrock(m, xy)
            loss.backward()
            return loss

        losses = [float(opt.step(closure).detach()) for _ in range(4)]
        st = opt.state[xy]
        res[m] = (losses, xy.detach().numpy().copy(), st["func_evals"], st["n_iter"],
                  float(st["t"]), st["prev_loss"])
    t, e = res[torch], res[ember]
    np.testing.assert_allclose(e[0], t[0], rtol=1e-9)
    np.testing.assert_allclose(e[1], t[1], rtol=1e-9)
    assert e[2:4] == t[2:4]
    assert e[4] == pytest.approx(t[4], rel=1e-9)
    assert e[5] == pytest.approx(t[5], rel=1e-9)
