"""ember.nn.Module against torch.nn.Module: registries and their named_* orders, state_dict and
load_state_dict (keys, errors, hooks), hooks around forward and backward, conversions, repr,
Parameter, and the containers."""
from __future__ import annotations

import copy
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember

LIBS = [(ember, ember.nn), (torch, torch.nn)]


def build(lib, nn):
    """The same small network in either library (shared submodule, buffers, a None entry)."""

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.act = nn.ReLU()
            self.register_buffer("steps", lib.zeros(2))
            self.register_buffer("scratch", lib.ones(1), persistent=False)
            self.register_parameter("unused", None)

        def forward(self, x):
            return self.act(self.fc(x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            shared = nn.Linear(4, 4)
            self.seq = nn.Sequential(shared, nn.Tanh(), shared)
            self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 1)})
            self.scale = nn.Parameter(lib.ones(1))
            self.none_child = None

        def forward(self, x):
            h = self.seq(self.block(x))
            return self.heads["a"](h) * self.scale

    return Net()


def both():
    torch.manual_seed(0)
    t = build(torch, torch.nn)
    e = build(ember, ember.nn)
    e.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                       for k, v in t.state_dict().items()})
    return e, t


def names(it):
    return [n for n, _ in it]


def test_named_members_orders_and_duplicates():
    e, t = both()
    for fn in ("named_parameters", "named_buffers", "named_modules", "named_children"):
        assert names(getattr(e, fn)()) == names(getattr(t, fn)()), fn
    for kw in ({"remove_duplicate": False}, {"prefix": "root"},
               {"prefix": "p", "recurse": False}):
        assert names(e.named_parameters(**kw)) == names(t.named_parameters(**kw)), kw
        assert names(e.named_buffers(**kw)) == names(t.named_buffers(**kw)), kw
    assert names(e.named_modules(remove_duplicate=False)) == names(
        t.named_modules(remove_duplicate=False))
    assert names(e.named_modules(prefix="m")) == names(t.named_modules(prefix="m"))
    assert len(list(e.parameters())) == len(list(t.parameters()))
    assert len(list(e.parameters(recurse=False))) == 1
    assert len(list(e.buffers())) == len(list(t.buffers()))
    assert [type(m).__name__ for m in e.modules()] == [type(m).__name__ for m in t.modules()]
    assert [type(m).__name__ for m in e.children()] == [type(m).__name__ for m in t.children()]


def test_state_dict_keys_order_and_metadata():
    e, t = both()
    es, ts = e.state_dict(), t.state_dict()
    assert list(es) == list(ts)
    assert list(es._metadata) == list(ts._metadata)
    assert es._metadata["block"] == {"version": 1}
    assert all(not v.requires_grad for v in es.values())
    kv = e.state_dict(keep_vars=True)
    assert kv["scale"] is e.scale
    assert list(e.state_dict(prefix="x.")) == list(t.state_dict(prefix="x."))
    dest = OrderedDict()
    assert e.state_dict(destination=dest) is dest
    for k in es:
        np.testing.assert_array_equal(es[k].numpy(), ts[k].numpy())
    # detached tensors share memory with the parameters
    es["scale"].fill_(3.0)
    assert float(e.scale) == 3.0


def _load_error(mod, sd, **kw):
    with pytest.raises(RuntimeError) as ex:
        mod.load_state_dict(sd, **kw)
    return str(ex.value)


def test_load_state_dict_errors_and_results():
    e, t = both()
    es = OrderedDict((k, v.clone()) for k, v in e.state_dict().items())
    ts = OrderedDict((k, v.clone()) for k, v in t.state_dict().items())
    # missing and unexpected keys, PyTorch's text
    for sd in (es, ts):
        sd.pop("block.fc.bias")
    es["extra.w"] = ember.zeros(1)
    ts["extra.w"] = torch.zeros(1)
    assert _load_error(e, es) == _load_error(t, ts)
    er = e.load_state_dict(es, strict=False)
    tr = t.load_state_dict(ts, strict=False)
    assert er.missing_keys == tr.missing_keys and er.unexpected_keys == tr.unexpected_keys
    assert repr(er) == repr(tr)
    assert repr(e.load_state_dict(e.state_dict())) == "<All keys matched successfully>"
    # size mismatch
    es2 = dict(e.state_dict())
    ts2 = dict(t.state_dict())
    es2["scale"] = ember.ones(3)
    ts2["scale"] = torch.ones(3)
    assert _load_error(e, es2) == _load_error(t, ts2).replace("torch.", "ember.")
    # not a tensor
    es2["scale"] = 1.0
    ts2["scale"] = 1.0
    assert _load_error(e, es2) == _load_error(t, ts2)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        e.load_state_dict([1])


def test_load_state_dict_copies_or_assigns():
    lin = ember.nn.Linear(2, 3)
    w = lin.weight
    new = {"weight": ember.ones(3, 2), "bias": ember.zeros(3)}
    lin.load_state_dict(new)
    assert lin.weight is w and (w == 1).all() and w.requires_grad
    lin.load_state_dict({"weight": ember.full((3, 2), 2.0), "bias": ember.zeros(3)}, assign=True)
    assert lin.weight is not w and isinstance(lin.weight, ember.nn.Parameter)
    assert lin.weight.requires_grad and float(lin.weight[0, 0]) == 2.0
    # 0-dim buffer accepts a one-element checkpoint entry, as PyTorch
    bn = ember.nn.BatchNorm1d(2)
    sd = bn.state_dict()
    sd["num_batches_tracked"] = ember.tensor([7])
    bn.load_state_dict(sd)
    assert int(bn.num_batches_tracked) == 7
    # an old BatchNorm checkpoint without num_batches_tracked
    sd = bn.state_dict()
    del sd["num_batches_tracked"]
    sd._metadata[""]["version"] = 1
    bn.load_state_dict(sd)


def test_state_dict_hooks():
    calls = []
    for lib, nn in LIBS:
        m = nn.Sequential(nn.Linear(2, 2))
        log = []
        m.register_state_dict_pre_hook(lambda mod, prefix, kv: log.append(("pre", prefix)))

        def post(mod, sd, prefix, meta):
            log.append(("post", prefix, list(sd)))
        m[0].register_state_dict_post_hook(post)
        m.state_dict()

        def lpre(mod, sd, prefix, meta, strict, missing, unexpected, errors):
            log.append(("lpre", type(mod).__name__, prefix))
        m[0].register_load_state_dict_pre_hook(lpre)

        def lpost(mod, keys):
            log.append(("lpost", type(mod).__name__, list(keys.missing_keys)))
        m.register_load_state_dict_post_hook(lpost)
        m[0].register_load_state_dict_post_hook(lpost)
        sd = m.state_dict()
        del sd["0.bias"]
        m.load_state_dict(sd, strict=False)
        calls.append(log)
    assert calls[0] == calls[1]
    m = ember.nn.Linear(2, 2)
    m.register_state_dict_post_hook(lambda *a: {})
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        m.state_dict()


def test_forward_hooks_with_kwargs_and_order():
    results = []
    for lib, nn in LIBS:
        log = []

        class M(nn.Module):
            def forward(self, x, scale=1.0):
                log.append(("fwd", scale))
                return x * scale

        m = M()
        h1 = m.register_forward_pre_hook(lambda mod, args: log.append("pre1"))
        m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,), prepend=True)
        m.register_forward_pre_hook(lambda mod, args, kw: (args, {"scale": 2.0}),
                                    with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: out * 10)
        m.register_forward_hook(lambda mod, args, kw, out: log.append(("hook", kw)),
                                with_kwargs=True)
        y = m(lib.ones(2))
        h1.remove()
        y2 = m(lib.ones(2), scale=3.0)
        results.append((log, y.tolist(), y2.tolist()))
    assert results[0] == results[1]
    m = ember.nn.Identity()
    m.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        m(ember.ones(1))


def test_always_call_forward_hook_and_global_hooks():
    seen = []
    m = ember.nn.Linear(2, 2)
    m.register_forward_hook(lambda mod, a, out: seen.append("always"), always_call=True)
    with pytest.raises(RuntimeError):
        m(ember.ones(3))
    assert seen == ["always"]
    from ember.nn.modules.module import register_module_forward_hook
    h = register_module_forward_hook(lambda mod, a, out: seen.append(type(mod).__name__))
    try:
        ember.nn.Sequential(ember.nn.ReLU())(ember.ones(1))
    finally:
        h.remove()
    assert seen[1:] == ["ReLU", "Sequential"]
    ember.nn.ReLU()(ember.ones(1))
    assert len(seen) == 3


def test_full_backward_hooks_match_torch():
    res = []
    for lib, nn in LIBS:
        torch.manual_seed(0)
        log = []
        m = nn.Linear(3, 2).double()
        m.weight.data = lib.tensor(np.arange(6.0).reshape(2, 3))

        def pre(mod, gout):
            log.append(("pre", [g.tolist() for g in gout]))
            return (gout[0] * 2,)

        def post(mod, gin, gout):
            log.append(("post", [None if g is None else g.tolist() for g in gin],
                        [g.tolist() for g in gout]))
            return (gin[0] + 1,)
        m.register_full_backward_pre_hook(pre)
        m.register_full_backward_hook(post)
        x = lib.tensor(np.ones((1, 3)), requires_grad=True)
        m(x).sum().backward()
        res.append((log, x.grad.tolist(), m.weight.grad.tolist()))
    assert res[0] == res[1]
    # no input requires grad: the hook still fires, with None grad_input
    for lib, nn in LIBS:
        got = []
        m = nn.Linear(2, 2)
        m.register_full_backward_hook(lambda mod, gi, go: got.append(gi))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(lib.ones(1, 2)).sum().backward()
        assert got == [(None,)]


def test_call_fast_path_is_plain_forward():
    m = ember.nn.Linear(2, 2)
    x = ember.ones(1, 2)
    assert (m(x) == m.forward(x)).all()
    assert not (m._forward_hooks or m._forward_pre_hooks or m._backward_hooks)


def test_train_eval_requires_grad_zero_grad():
    e, t = both()
    for m in (e, t):
        m.eval()
        assert not any(x.training for x in m.modules())
        assert m.train() is m and all(x.training for x in m.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        e.train(1)
    e.requires_grad_(False)
    assert not any(p.requires_grad for p in e.parameters())
    e.requires_grad_()
    e(ember.ones(2, 3)).sum().backward()
    assert all(p.grad is not None for p in e.heads["a"].parameters())
    e.zero_grad(set_to_none=False)
    assert all(p.grad is None or float(p.grad.abs().sum()) == 0 for p in e.parameters())
    e.zero_grad()
    assert all(p.grad is None for p in e.parameters())


def test_conversions_keep_parameter_identity():
    m = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.BatchNorm1d(2))
    w = m[0].weight
    m.double()
    assert m[0].weight is w and w.dtype == ember.float64
    assert m[1].running_mean.dtype == ember.float64
    assert m[1].num_batches_tracked.dtype == ember.int64
    m.float()
    assert w.dtype == ember.float32
    m.to(ember.float64)
    assert w.dtype == ember.float64
    m.to("cpu")
    m.to("cpu", ember.float32)
    assert w.dtype == ember.float32
    m.half()
    assert w.dtype == ember.float16
    m.to(dtype=ember.float32).cpu()
    m.type(ember.float64)
    assert w.dtype == ember.float64
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex"):
        m.to(ember.int32)
    w.grad = ember.ones(2, 2, dtype=ember.float64)
    m.float()
    assert w.grad.dtype == ember.float32
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Sequential"]


def test_registration_errors_match_torch():
    def cases(lib, nn):
        m = nn.Linear(2, 2)
        return [
            lambda: m.register_buffer("a.b", lib.ones(1)),
            lambda: m.register_buffer("", lib.ones(1)),
            lambda: m.register_buffer("weight", lib.ones(1)),
            lambda: m.register_buffer("x", 3),
            lambda: m.register_parameter("x", lib.ones(1)),
            lambda: m.register_parameter("y", nn.Parameter(lib.ones(1)) * 2),
            lambda: m.add_module("w.x", nn.ReLU()),
            lambda: m.add_module("k", 3),
            lambda: setattr(m, "weight", lib.ones(2, 2)),
            lambda: m.get_submodule("nope"),
            lambda: m.get_parameter("nope"),
            lambda: m.get_buffer("weight"),
            lambda: nn.Sequential(nn.ReLU())[3],
            lambda: nn.Module().forward(1),
            lambda: getattr(m, "nope"),
        ]
    for ce, ct in zip(cases(ember, ember.nn), cases(torch, torch.nn)):
        with pytest.raises(Exception) as te:
            ct()
        with pytest.raises(Exception) as ee:
            ce()
        assert type(ee.value) is type(te.value)
        assert str(ee.value).replace("ember.", "torch.") == str(te.value)


def test_attribute_semantics():
    for lib, nn in LIBS:
        m = nn.Module()
        m.p = nn.Parameter(lib.ones(1))
        m.register_buffer("b", lib.zeros(1))
        m.c = nn.ReLU()
        assert "p" in m._parameters and "b" in m._buffers and "c" in m._modules
        assert {"p", "b", "c"} <= set(dir(m))
        m.b = lib.ones(2)     # replacing a buffer keeps it a buffer
        assert m._buffers["b"].shape == (2,)
        m.p = None
        assert m._parameters["p"] is None and "p" not in dict(m.named_parameters())
        del m.p, m.b, m.c
        assert not (m._parameters or m._buffers or m._modules)
        m.c = nn.ReLU()
        m.c = nn.Parameter(lib.ones(1))    # a parameter replaces a child module
        assert "c" not in m._modules and "c" in m._parameters
        m.x = 3
        del m.x
        m.buf = nn.Buffer(lib.ones(3), persistent=False)
        assert "buf" in m._buffers and "buf" not in m.state_dict()
        assert type(m._buffers["buf"]) is lib.Tensor
    e, t = both()
    assert e.get_submodule("seq.0") is e.seq[0]
    assert e.get_parameter("block.fc.weight") is e.block.fc.weight
    assert e.get_buffer("block.steps") is e.block.steps
    e.set_submodule("heads.b", ember.nn.Identity())
    assert isinstance(e.heads["b"], ember.nn.Identity)


def test_repr_matches_torch():
    e, t = both()
    assert repr(e) == repr(t)

    class WithExtra(ember.nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"
    assert repr(WithExtra()) == "WithExtra(\n  a=1\n  b=2\n)"
    for lib, nn in LIBS:
        ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.ReLU()])
        pl = nn.ParameterList([nn.Parameter(lib.ones(2, 3)), lib.zeros(1), "x"])
        pd = nn.ParameterDict({"b": lib.ones(2), "a": nn.Parameter(lib.zeros(3, 1))})
        nl = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU(), nn.Dropout()))
        if lib is ember:
            er = [repr(ml), repr(pl), repr(pd), repr(nl), repr(nn.ModuleList())]
        else:
            tr = [repr(ml), repr(pl), repr(pd), repr(nl), repr(nn.ModuleList())]
    assert [s.replace("torch.", "ember.") for s in tr] == er


def test_parameter_behaviour():
    p = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
    tp = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(p) == repr(tp)
    assert isinstance(p, ember.Tensor) and p.requires_grad and p.is_leaf
    assert type(p * 2) is ember.Tensor and type(p + p) is ember.Tensor
    assert type(p.detach()) is ember.Tensor and type(p.data) is ember.Tensor
    assert type(p[0]) is ember.Tensor and type(p.view(2)) is ember.Tensor
    q = ember.nn.Parameter(ember.ones(2), requires_grad=False)
    assert not q.requires_grad
    assert ember.nn.Parameter().shape == (0,)
    src = ember.zeros(2)
    shared = ember.nn.Parameter(src)
    src.add_(1)
    assert (shared == 1).all()
    p.note = "attributes allowed"
    c = copy.deepcopy(p)
    assert type(c) is ember.nn.Parameter and c.note == "attributes allowed"
    assert c.requires_grad and (c == p).all() and c.data_ptr() != p.data_ptr()
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is ember.nn.Parameter and (r == p).all() and r.requires_grad
    u = ember.nn.UninitializedParameter()
    assert repr(u) == repr(torch.nn.UninitializedParameter())
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        u.shape
    u.materialize((2, 3))
    assert type(u) is ember.nn.Parameter and tuple(u.shape) == (2, 3)
    ub = ember.nn.UninitializedBuffer()
    ub.materialize(4)
    assert type(ub) is ember.Tensor


def test_module_deepcopy_and_pickle():
    e, _ = both()
    c = copy.deepcopy(e)
    assert list(c.state_dict()) == list(e.state_dict())
    assert c.seq[0] is c.seq[2] and c.seq[0] is not e.seq[0]
    x = ember.ones(1, 3)
    np.testing.assert_allclose(c(x).detach().numpy(), e(x).detach().numpy())
    p = pickle.loads(pickle.dumps(ember.nn.Linear(2, 3)))
    assert isinstance(p.weight, ember.nn.Parameter)


def test_sequential_api_matches_torch():
    out = []
    for lib, nn in LIBS:
        a, b, c, d = nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity()
        s = nn.Sequential(a, b)
        s.append(c)
        s.insert(1, d)
        s.insert(-1, nn.ELU())
        s.extend([nn.GELU()])
        r = [repr(s), len(s), type(s[1:3]).__name__, repr(s[::2]), repr(s[-1])]
        del s[1]
        r.append(list(s._modules))
        s[0] = nn.Softsign()
        r.append(repr(s))
        popped = s.pop(0)
        r.append((type(popped).__name__, repr(s)))
        r.append(repr(s + nn.Sequential(nn.ReLU())))
        r.append(repr(nn.Sequential(nn.ReLU()) * 2))
        r.append(repr(nn.Sequential(OrderedDict([("x", nn.ReLU()), ("y", nn.Tanh())]))))
        r.append(nn.Sequential(nn.Linear(2, 2), nn.ReLU())(lib.ones(1, 2)).shape == (1, 2))
        with pytest.raises(IndexError) as ex:
            s.insert(20, nn.ReLU())
        r.append(str(ex.value))
        out.append(r)
    assert out[0] == out[1]


def test_modulelist_moduledict_api_matches_torch():
    out = []
    for lib, nn in LIBS:
        ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
        ml.append(nn.Sigmoid())
        ml.extend([nn.ELU()])
        ml.insert(0, nn.GELU())
        ml += [nn.Identity()]
        r = [repr(ml), len(ml), repr(ml[-1]), repr(ml[1:3])]
        del ml[0]
        r.append(list(ml._modules))
        r.append(repr(ml + nn.ModuleList([nn.ReLU()])))
        r.append(type(ml.pop(1)).__name__)
        with pytest.raises(IndexError) as ex:
            ml[10]
        r.append(str(ex.value))
        md = nn.ModuleDict([("z", nn.ReLU()), ("a", nn.Tanh())])
        md["m"] = nn.Sigmoid()
        md.update({"q": nn.ELU()})
        r += [list(md.keys()), "a" in md, len(md), repr(md), type(md.pop("z")).__name__]
        md.clear()
        r.append(len(md))
        with pytest.raises(ValueError) as ex:
            md.update([("a", nn.ReLU(), 3)])
        r.append(str(ex.value))
        out.append(r)
    assert out[0] == out[1]


def test_parameterlist_parameterdict_api_matches_torch():
    out = []
    for lib, nn in LIBS:
        pl = nn.ParameterList([lib.ones(2)])
        pl.append(nn.Parameter(lib.zeros(3)))
        pl.extend([lib.ones(1)])
        r = [len(pl), type(pl[0]).__name__, [n for n, _ in pl.named_parameters()],
             repr(pl[1:]).replace("torch.", "ember."), list(pl.state_dict())]
        pl[0] = lib.full((2,), 5.0)
        r.append(float(pl[0][0]))
        with pytest.raises(RuntimeError) as ex:
            pl()
        r.append(str(ex.value))
        pd = nn.ParameterDict({"w": lib.ones(2)})
        pd["v"] = nn.Parameter(lib.zeros(1))
        pd.update([("u", lib.ones(3))])
        r += [list(pd.keys()), list(pd.state_dict()), "v" in pd, len(pd), type(pd["w"]).__name__]
        r.append(pd.pop("w").shape == (2,))
        r.append(pd.get("zz", 7))
        r.append(list((pd | nn.ParameterDict({"a": lib.ones(1)})).keys()))
        r.append(pd.popitem()[0])
        with pytest.raises(TypeError) as ex:
            pd[1] = lib.ones(1)
        r.append(str(ex.value))
        out.append(r)
    assert out[0] == out[1]


def test_init_functions_against_torch_statistics():
    init = ember.nn.init
    g = ember.Generator().manual_seed(3)
    w = ember.empty(200, 300)
    init.uniform_(w, -2, 3, generator=g)
    a = w.numpy()
    assert a.min() >= -2 and a.max() < 3 and abs(a.mean() - 0.5) < 0.05
    b = ember.empty(200, 300)
    init.uniform_(b, -2, 3, generator=ember.Generator().manual_seed(3))
    assert (b == w).all()     # generator= is honoured
    init.normal_(w, 1.0, 2.0)
    assert abs(w.numpy().std() - 2) < 0.05
    init.trunc_normal_(w, 0.0, 1.0, -0.5, 1.0)
    assert w.numpy().min() >= -0.5 and w.numpy().max() <= 1.0
    init.constant_(w, 0.25)
    assert (w == 0.25).all()
    init.ones_(w)
    init.zeros_(w)
    assert float(w.abs().sum()) == 0
    e = ember.empty(3, 4)
    init.eye_(e)
    np.testing.assert_array_equal(e.numpy(), np.eye(3, 4))
    d = ember.empty(4, 2, 3)
    td = torch.empty(4, 2, 3)
    init.dirac_(d, groups=2)
    torch.nn.init.dirac_(td, groups=2)
    np.testing.assert_array_equal(d.numpy(), td.numpy())
    for name in ("linear", "conv2d", "sigmoid", "tanh", "relu", "selu"):
        assert init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    assert init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain("leaky_relu",
                                                                                  0.2)
    w = ember.empty(400, 100)
    init.xavier_uniform_(w, gain=2.0)
    bound = 2.0 * (6 / 500) ** 0.5
    assert w.numpy().max() <= bound and w.numpy().max() > 0.95 * bound
    init.xavier_normal_(w)
    assert abs(w.numpy().std() - (2 / 500) ** 0.5) < 0.003
    init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu")
    bound = (2 ** 0.5) * (3 / 400) ** 0.5
    assert w.numpy().max() <= bound and w.numpy().max() > 0.95 * bound
    init.kaiming_normal_(w)
    assert abs(w.numpy().std() - (2 / 100) ** 0.5) < 0.005
    o = ember.empty(3, 5)
    init.orthogonal_(o, gain=2.0)
    np.testing.assert_allclose(o.numpy() @ o.numpy().T, 4 * np.eye(3), atol=1e-5)
    s = ember.empty(10, 6)
    init.sparse_(s, 0.3)
    assert ((s.numpy() == 0).sum(0) == 3).all()
    # initialisers never record a graph, even on a parameter
    p = ember.nn.Parameter(ember.empty(3, 3))
    init.kaiming_uniform_(p)
    assert p.grad_fn is None and p.is_leaf
    errors = [
        (lambda m: m.init.eye_(m.empty(2)), ValueError),
        (lambda m: m.init.dirac_(m.empty(2, 2)), ValueError),
        (lambda m: m.init.xavier_uniform_(m.empty(3)), ValueError),
        (lambda m: m.init.kaiming_uniform_(m.empty(3, 3), mode="fan"), ValueError),
        (lambda m: m.init.calculate_gain("foo"), ValueError),
        (lambda m: m.init.calculate_gain("leaky_relu", "x"), ValueError),
        (lambda m: m.init.orthogonal_(m.empty(3)), ValueError),
    ]
    for fn, exc in errors:
        with pytest.raises(exc) as te:
            fn(torch.nn if False else _TorchNS)
        with pytest.raises(exc) as ee:
            fn(_EmberNS)
        assert str(ee.value) == str(te.value)


class _TorchNS:
    init = torch.nn.init
    empty = staticmethod(torch.empty)


class _EmberNS:
    init = ember.nn.init
    empty = staticmethod(ember.empty)


def test_nn_namespace_covers_built_layers():
    """Every public class in ember.nn is also in torch.nn (no invented names)."""
    for name in ember.nn.__all__:
        assert hasattr(torch.nn, name), name


def test_backward_hooks_multiple_outputs_and_non_tensor_args():
    res = []
    for lib, nn in LIBS:
        class M(nn.Module):
            def forward(self, a, k, b):
                return a * 2, b * a, 3

        m = M()
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append(
            ([None if g is None else g.tolist() for g in gi],
             [None if g is None else g.tolist() for g in go])))
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", len(go))))
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        o1, o2, o3 = m(a, "x", b)
        (o1.sum() + o2.sum() * 3).backward()
        res.append((log, a.grad.tolist(), b.grad.tolist(), o3))
    assert res[0] == res[1]


def test_lazy_norms_materialize_like_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 4))
    out, vals = [], []
    for lib, nn in LIBS:
        r, v = [], []
        for name, kw in (("LazyBatchNorm2d", {}), ("LazyInstanceNorm2d", {"affine": True}),
                         ("LazyBatchNorm1d", {"affine": False})):
            m = getattr(nn, name)(**kw)
            r.append(repr(m))
            xin = lib.tensor(x if "2d" in name else x[:, :, 0, :])
            y = m(xin.float())
            r += [type(m).__name__, repr(m), list(m.state_dict()),
                  [tuple(t.shape) for t in m.state_dict().values()]]
            v.append(y.detach().numpy())
        out.append(r)
        vals.append(v)
    assert out[0] == out[1]
    for a, b in zip(*vals):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
