"""ember.optim.lr_scheduler against torch.optim.lr_scheduler: lr sequences and state_dicts."""
import warnings

import pytest
import torch

import ember

STEPS = 30


def _opt(m, cls="SGD", tensor_lr=False):
    a, b = m.ones(2, requires_grad=True), m.ones(3, requires_grad=True)
    lr = m.tensor(0.1) if tensor_lr else 0.1
    kw = dict(momentum=0.9) if cls == "SGD" else {}
    return getattr(m.optim, cls)([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=lr, **kw)


def _f(x):
    return 0.9 ** x


FACTORIES = {
    "LambdaLR": lambda m, o: m.optim.lr_scheduler.LambdaLR(o, [_f, lambda e: 1 / (e + 1)]),
    "MultiplicativeLR": lambda m, o: m.optim.lr_scheduler.MultiplicativeLR(o, _f),
    "StepLR": lambda m, o: m.optim.lr_scheduler.StepLR(o, 7, gamma=0.5),
    "MultiStepLR": lambda m, o: m.optim.lr_scheduler.MultiStepLR(o, [3, 8, 8, 20], 0.3),
    "ConstantLR": lambda m, o: m.optim.lr_scheduler.ConstantLR(o, 0.25, total_iters=6),
    "LinearLR": lambda m, o: m.optim.lr_scheduler.LinearLR(o, 0.2, 0.9, total_iters=12),
    "ExponentialLR": lambda m, o: m.optim.lr_scheduler.ExponentialLR(o, 0.93),
    "PolynomialLR": lambda m, o: m.optim.lr_scheduler.PolynomialLR(o, 20, power=2.0),
    "CosineAnnealingLR": lambda m, o: m.optim.lr_scheduler.CosineAnnealingLR(o, 9, 0.001),
    "CosineAnnealingWarmRestarts":
        lambda m, o: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 4, 2, 0.002),
    "CyclicLR": lambda m, o: m.optim.lr_scheduler.CyclicLR(o, 0.01, [0.1, 0.2], 4, 6,
                                                           mode="triangular2"),
    "CyclicLR-exp": lambda m, o: m.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, 5,
                                                               mode="exp_range", gamma=0.97),
    "OneCycleLR": lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, [0.5, 0.3], total_steps=31),
    "OneCycleLR-3": lambda m, o: m.optim.lr_scheduler.OneCycleLR(
        o, 0.5, epochs=4, steps_per_epoch=8, anneal_strategy="linear", three_phase=True),
    "SequentialLR": lambda m, o: m.optim.lr_scheduler.SequentialLR(
        o, [m.optim.lr_scheduler.LinearLR(o, 0.1, total_iters=5),
            m.optim.lr_scheduler.ExponentialLR(o, 0.9),
            m.optim.lr_scheduler.CosineAnnealingLR(o, 8)], milestones=[5, 15]),
    "ChainedScheduler": lambda m, o: m.optim.lr_scheduler.ChainedScheduler(
        [m.optim.lr_scheduler.ConstantLR(o, 0.5, total_iters=4),
         m.optim.lr_scheduler.ExponentialLR(o, 0.9)]),
}


def _plain(v):
    if isinstance(v, (torch.Tensor, ember.Tensor)):
        return ("tensor", v.item())
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items() if not callable(x) or isinstance(x, dict)}
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(x) for x in v)
    return v


def _approx(a, b):
    if isinstance(a, dict):
        assert set(a) == set(b)
        for k in a:
            _approx(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _approx(x, y)
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-12, abs=1e-15)
    else:
        assert a == b


@pytest.mark.parametrize("tensor_lr", [False, True])
@pytest.mark.parametrize("name", list(FACTORIES))
def test_schedule_matches_torch(name, tensor_lr):
    if tensor_lr and name.startswith(("CyclicLR", "OneCycleLR")):
        pytest.skip("their lrs are computed from float bounds")
    runs = {}
    for m in (torch, ember):
        opt = _opt(m, tensor_lr=tensor_lr)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = FACTORIES[name](m, opt)
        seq = [_plain(sched.get_last_lr())]
        groups = []
        for _ in range(STEPS):
            opt.step()
            sched.step()
            seq.append(_plain(sched.get_last_lr()))
            groups.append(_plain([{k: v for k, v in g.items() if k != "params"}
                                  for g in opt.param_groups]))
        runs[m] = (seq, groups, _plain(sched.state_dict()), _plain(opt.state_dict()))
    for a, b in zip(runs[torch], runs[ember]):
        _approx(a, b)


def test_state_dict_resume():
    res = {}
    for m in (torch, ember):
        opt = _opt(m)
        s = m.optim.lr_scheduler.CosineAnnealingLR(opt, 10)
        for _ in range(4):
            opt.step()
            s.step()
        sd = s.state_dict()
        opt2 = _opt(m)
        opt2.load_state_dict(opt.state_dict())
        s2 = m.optim.lr_scheduler.CosineAnnealingLR(opt2, 10)
        s2.load_state_dict(sd)
        out = []
        for _ in range(8):
            opt2.step()
            s2.step()
            out.append(s2.get_last_lr())
        res[m] = out
    _approx(res[torch], res[ember])


def test_reduce_on_plateau():
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.8, 0.8, 0.8, 0.8, 0.81] * 3
    res = {}
    for m in (torch, ember):
        opt = _opt(m)
        s = m.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=2, factor=0.5, cooldown=1,
                                                   min_lr=[0.0, 0.02], threshold=0.01)
        out = []
        for v in metrics:
            s.step(v)
            out.append(s.get_last_lr())
        res[m] = (out, _plain(s.state_dict()))
    _approx(res[torch], res[ember])


def _warnings_of(m, before: bool):
    opt = _opt(m)
    s = m.optim.lr_scheduler.StepLR(opt, 3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        if not before:
            opt.step()
        s.step()
        s.step(5)
    return [str(x.message) for x in w]


@pytest.mark.parametrize("before", [True, False])
def test_warnings(before):
    t = _warnings_of(torch, before)
    assert t and _warnings_of(ember, before) == t


@pytest.mark.parametrize("make", [
    lambda m: m.optim.lr_scheduler.StepLR(object(), 3),
    lambda m: m.optim.lr_scheduler.StepLR(_opt(m), 3, last_epoch=4),
    lambda m: m.optim.lr_scheduler.ConstantLR(_opt(m), factor=2.0),
    lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(_opt(m), mode="mid"),
    lambda m: m.optim.lr_scheduler.CyclicLR(_opt(m, "Adagrad"), 0.01, 0.1),
    lambda m: m.optim.lr_scheduler.OneCycleLR(_opt(m), 0.1),
    lambda m: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(m), 0),
    lambda m: m.optim.lr_scheduler.SequentialLR(_opt(m), [], []),
])
def test_errors(make):
    def run(m):
        try:
            make(m)
        except Exception as exc:   # noqa: BLE001
            return type(exc).__name__, str(exc).replace("torch.", "ember.")
    assert run(torch) is not None
    assert run(ember) == run(torch)
