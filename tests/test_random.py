"""Random numbers against PyTorch: Generator and seed API, state round trips, every sampler's
shapes, dtypes, errors and autograd nodes, reproducibility under manual_seed / generator=, and
the distributions themselves (KS and chi-square tests against the target distribution and
against torch's own samples). Streams differ by design, so values are compared statistically;
every test is seeded and deterministic."""
import copy
import pickle
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.stats as st
import torch

import ember
from helpers import raises_same
from opinfo import check_sample, ember_fn, opinfos

ALPHA = 1e-3   # seeded, so a pass is deterministic; a wrong distribution fails by far


def _np(x):
    x = x.detach()
    if x.dtype in (torch.bfloat16, ember.bfloat16):
        x = x.float()
    return x.numpy().astype(np.complex128 if x.is_complex() else np.float64)


def _struct(x):
    """What can be compared between streams: type, shape, dtype, requires_grad, node name."""
    if isinstance(x, (torch.Tensor, ember.Tensor)):
        fn = x.grad_fn.name().replace("torch::", "ember::") if x.grad_fn is not None else None
        return (tuple(x.shape), str(x.dtype).split(".")[-1], x.requires_grad, fn, x.is_leaf,
                str(x.device))
    if isinstance(x, (list, tuple)):
        return [_struct(i) for i in x]
    return x


def same_struct(f):
    """``f(lib)`` returns the same structure in both libraries (values aside)."""
    torch.manual_seed(0)
    ember.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        re_, rt = f(ember), f(torch)
    assert _struct(re_) == _struct(rt), f"\nember: {_struct(re_)}\ntorch: {_struct(rt)}"
    return re_, rt


def same_error(f):
    return raises_same(lambda: f(ember), lambda: f(torch))


# ---- Generator, seeds, state --------------------------------------------------------------

def test_generator_api():
    g, t = ember.Generator(), torch.Generator()
    assert re.fullmatch(r"<ember\._C\.Generator object at 0x[0-9a-f]+>", repr(g))
    assert str(g.device) == str(t.device) == "cpu" and isinstance(g.device, ember.device)
    assert g.initial_seed() == t.initial_seed() == 67280421310721
    assert ember.Generator(device="cpu").device == ember.device("cpu")
    assert ember.Generator(ember.device("cpu")).initial_seed() == 67280421310721
    assert g.manual_seed(5) is g
    for s in (0, 5, 2 ** 63 - 1, 2 ** 64 - 1, -1, -(2 ** 63)):
        assert g.manual_seed(s).initial_seed() == t.manual_seed(s).initial_seed()
        ember.manual_seed(s)
        torch.manual_seed(s)
        assert ember.initial_seed() == torch.initial_seed() == ember.random.initial_seed()
    for s in (1.5, "3", True, ember.tensor(4)):   # the module function takes what int() takes
        assert ember.manual_seed(s).initial_seed() == torch.manual_seed(
            s if not isinstance(s, ember.Tensor) else torch.tensor(4)).initial_seed()
    assert isinstance(ember.manual_seed(1), ember.Generator)
    assert ember.default_generator is ember.manual_seed(1)
    s = ember.seed()
    assert 0 <= s < 2 ** 64 and ember.initial_seed() == s
    s2 = g.seed()
    assert g.initial_seed() == s2 and s2 != s


@pytest.mark.parametrize("case", [
    lambda T: T.manual_seed(2 ** 64),
    lambda T: T.manual_seed(-(2 ** 63) - 1),
    lambda T: T.manual_seed(None),
    lambda T: T.Generator().manual_seed(1.5),
    lambda T: T.Generator().manual_seed("3"),
    lambda T: T.Generator().manual_seed(True),
    lambda T: T.Generator().manual_seed(None),
    lambda T: T.Generator().manual_seed(np.int64(7)),
    lambda T: T.Generator().manual_seed(2 ** 64),
    lambda T: T.Generator().set_state(T.zeros(3, dtype=T.uint8)),
    lambda T: T.Generator().set_state(T.zeros(5056)),
    lambda T: T.Generator().set_state([1, 2]),
    lambda T: T.Generator().set_state(T.Generator().get_state()[:-1]),
    lambda T: T.Generator().set_state(T.Generator().get_state()[::2]),
    lambda T: T.set_rng_state(T.zeros(3, dtype=T.uint8)),
    lambda T: T.set_rng_state([1]),
    lambda T: T.Generator("meta"),
    lambda T: T.Generator().get_offset(),
    lambda T: T.Generator().set_offset(3),
    lambda T: T.Generator().graphsafe_get_state(),
    lambda T: T.Generator().graphsafe_set_state(T.Generator()),
    lambda T: T.Generator(1),
])
def test_generator_errors(case):
    same_error(case)


def test_state_layout_and_round_trip():
    for s in (0, 123, 2 ** 64 - 1):
        es, ts = ember.Generator().manual_seed(s).get_state(), torch.Generator().manual_seed(
            s).get_state()
        assert es.dtype is ember.uint8 and tuple(es.shape) == tuple(ts.shape) == (5056,)
        assert es[:8].tolist() == ts[:8].tolist()   # the initial seed leads, as in PyTorch
    g = ember.Generator().manual_seed(9)
    ember.rand(3, generator=g)
    state = g.get_state()
    a = [ember.rand(4, generator=g), ember.randn(3, generator=g), ember.randint(9, (5,),
                                                                              generator=g)]
    assert g.set_state(state) is g
    b = [ember.rand(4, generator=g), ember.randn(3, generator=g), ember.randint(9, (5,),
                                                                              generator=g)]
    assert all(ember.equal(x, y) for x, y in zip(a, b))
    assert ember.equal(g.get_state(), g.set_state(g.get_state()).get_state())
    assert g.initial_seed() == 9
    # a state given as a non-1-d tensor of the right size is accepted, as in PyTorch
    g.set_state(state.reshape(2, -1))
    assert ember.equal(ember.rand(4, generator=g), a[0])
    # the default generator's state through ember.get_rng_state / ember.random
    ember.manual_seed(3)
    st_ = ember.get_rng_state()
    x = ember.randn(5)
    ember.random.set_rng_state(st_)
    assert ember.equal(ember.randn(5), x)
    assert ember.equal(ember.random.get_rng_state(), ember.get_rng_state())
    # a state from another generator carries its stream over
    h = ember.Generator().set_state(g.get_state())
    assert ember.equal(ember.rand(6, generator=h), ember.rand(6, generator=g))


def test_generator_pickle_and_copy():
    g = ember.Generator().manual_seed(11)
    ember.rand(2, generator=g)
    for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert isinstance(h, ember.Generator) and h is not g and h.initial_seed() == 11
        state = g.get_state()
        assert ember.equal(ember.rand(5, generator=h), ember.rand(5, generator=g))
        g.set_state(state)
    c = g.clone_state()
    assert c is not g and c.initial_seed() == 11
    assert ember.equal(ember.rand(4, generator=c), ember.rand(4, generator=g))
    torch_red = torch.Generator().__reduce__()
    assert len(g.__reduce__()) == len(torch_red) and len(g.__reduce__()[2]) == len(torch_red[2])


def test_fresh_process_gets_fresh_seed():
    code = "import ember; print(ember.initial_seed(), ember.Generator().initial_seed())"
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert outs[0][0] != outs[1][0]
    assert outs[0][1] == outs[1][1] == str(67280421310721)


def test_random_module_and_fork_rng():
    assert set(torch.random.__all__) == set(ember.random.__all__)
    ember.manual_seed(4)
    before = ember.get_rng_state()
    with ember.random.fork_rng():
        ember.rand(10)
        ember.manual_seed(99)
    assert ember.equal(ember.get_rng_state(), before)
    with ember.random.fork_rng(devices=[]):
        ember.randn(3)
    assert ember.equal(ember.get_rng_state(), before)
    with pytest.raises(ValueError):
        with ember.random.fork_rng():
            ember.rand(3)
            raise ValueError
    assert ember.equal(ember.get_rng_state(), before)
    with ember.random.fork_rng(enabled=False):
        ember.rand(3)
    assert not ember.equal(ember.get_rng_state(), before)
    assert ember.random.thread_safe_generator() is torch.random.thread_safe_generator() is None


# ---- reproducibility ------------------------------------------------------------------------

def _all_samplers(g=None):
    k = {"generator": g}
    x = ember.zeros(4, 3)
    return [ember.rand(3, 2, **k), ember.randn(4, **k), ember.randn(2, dtype=ember.complex64, **k),
            ember.randint(3, 9, (5,), **k), ember.randperm(7, **k), ember.rand_like(x, **k),
            ember.randn_like(x, **k), ember.randint_like(x, 10, **k),
            ember.normal(ember.zeros(3), ember.ones(3), **k), ember.normal(0.0, 2.0, (3,), **k),
            ember.bernoulli(ember.full((5,), 0.5), **k),
            ember.multinomial(ember.ones(6), 3, **k),
            ember.multinomial(ember.ones(2, 6), 4, True, **k),
            ember.poisson(ember.full((4,), 3.0), **k),
            x.clone().uniform_(-1, 1, **k), x.clone().normal_(2, 3, **k),
            x.clone().bernoulli_(0.3, **k), x.clone().random_(**k), x.clone().random_(5, **k),
            x.clone().random_(2, 8, **k), x.clone().exponential_(**k), x.clone().cauchy_(**k),
            x.clone().log_normal_(**k), x.clone().geometric_(0.4, **k)]


def test_manual_seed_reproduces_everything():
    ember.manual_seed(123)
    a = _all_samplers()
    ember.manual_seed(123)
    b = _all_samplers()
    assert all(ember.equal(x, y) for x, y in zip(a, b))
    ember.manual_seed(124)
    c = _all_samplers()
    assert not all(ember.equal(x, y) for x, y in zip(a, c))


def test_generator_argument_is_independent_of_the_default():
    g = ember.Generator().manual_seed(5)
    ember.manual_seed(0)
    a = _all_samplers(g)
    state = ember.get_rng_state()
    assert ember.equal(state, ember.manual_seed(0).get_state())   # default stream untouched
    g.manual_seed(5)
    ember.manual_seed(77)
    b = _all_samplers(g)
    assert all(ember.equal(x, y) for x, y in zip(a, b))


def test_whole_programs_reproduce_under_manual_seed():
    """Initialisers, dropout, samplers, random_split: every random draw follows the seed."""
    def program():
        lin = ember.nn.Linear(4, 3)
        conv = ember.nn.Conv1d(2, 2, 3)
        w = ember.empty(3, 5)
        ember.nn.init.xavier_normal_(w)
        x = ember.ones(8, 4)
        d = ember.nn.functional.dropout(x, 0.5, training=True)
        d2 = ember.nn.functional.dropout1d(ember.ones(2, 3, 4), 0.5, training=True)
        a = ember.nn.functional.alpha_dropout(x, 0.5, training=True)
        r = ember.nn.functional.rrelu(-ember.ones(6), training=True)
        sampler = list(ember.utils.data.RandomSampler(range(10)))
        sub = ember.utils.data.random_split(range(10), [0.5, 0.5])
        loader = [b.tolist() for b in ember.utils.data.DataLoader(range(6), batch_size=2,
                                                                   shuffle=True)]
        return ([lin.weight.detach(), lin.bias.detach(), conv.weight.detach(), w, d, d2, a, r],
                sampler, list(sub[0].indices), loader)
    ember.manual_seed(2024)
    t1, s1, i1, l1 = program()
    ember.manual_seed(2024)
    t2, s2, i2, l2 = program()
    assert all(ember.equal(a, b) for a, b in zip(t1, t2))
    assert s1 == s2 and i1 == i2 and l1 == l2
    ember.manual_seed(2025)
    t3, s3, _, _ = program()
    assert not ember.equal(t1[0], t3[0]) and s1 != s3


def test_generator_argument_in_init_and_data():
    g = ember.Generator()
    w1 = ember.nn.init.uniform_(ember.empty(3, 3), generator=g.manual_seed(1))
    w2 = ember.nn.init.uniform_(ember.empty(3, 3), generator=g.manual_seed(1))
    assert ember.equal(w1, w2)
    p1 = list(ember.utils.data.RandomSampler(range(8), generator=g.manual_seed(3)))
    p2 = list(ember.utils.data.RandomSampler(range(8), generator=g.manual_seed(3)))
    assert p1 == p2 and sorted(p1) == list(range(8))
    s1 = ember.utils.data.random_split(range(8), [3, 5], generator=g.manual_seed(4))
    s2 = ember.utils.data.random_split(range(8), [3, 5], generator=g.manual_seed(4))
    assert list(s1[1].indices) == list(s2[1].indices)


# ---- shapes, dtypes, devices, autograd nodes --------------------------------------------------

def _leaf(T, shape=(3,), fill=0.5, dtype=None):
    return T.full(shape, fill, dtype=dtype or T.float32, requires_grad=True)


STRUCT_CASES = {
    "rand": lambda T: T.rand(2, 3),
    "rand_tuple": lambda T: T.rand((2, 3), dtype=T.float64),
    "rand_list_size_kw": lambda T: T.rand(size=[0, 2], requires_grad=True),
    "rand_half": lambda T: T.rand(4, dtype=T.float16),
    "rand_bf16": lambda T: T.rand(4, dtype=T.bfloat16),
    "rand_complex": lambda T: T.rand(4, dtype=T.complex64),
    "rand_meta": lambda T: T.rand(2, device="meta"),
    "rand_0d": lambda T: T.rand(()),
    "randn": lambda T: T.randn(3, 2, requires_grad=True),
    "randn_c128": lambda T: T.randn(3, dtype=T.complex128),
    "randint": lambda T: T.randint(5, (2, 3)),
    "randint_lohi": lambda T: T.randint(-3, 5, (4,), dtype=T.int16),
    "randint_kw": lambda T: T.randint(low=1, high=3, size=(2,)),
    "randint_high_kw_size": lambda T: T.randint(3, size=(2,)),
    "randint_float": lambda T: T.randint(3, (2,), dtype=T.float32, requires_grad=True),
    "randint_bool": lambda T: T.randint(0, 2, (3,), dtype=T.bool),
    "randint_full": lambda T: T.randint(-2 ** 63, 2 ** 63 - 1, (3,)),
    "randperm": lambda T: T.randperm(5),
    "randperm_0": lambda T: T.randperm(0),
    "randperm_float": lambda T: T.randperm(4, dtype=T.float32, requires_grad=True),
    "randperm_half": lambda T: T.randperm(2049, dtype=T.float16),
    "randperm_bf16": lambda T: T.randperm(3, dtype=T.bfloat16),
    "rand_like": lambda T: T.rand_like(T.zeros(2, 3, dtype=T.float64)),
    "rand_like_grad": lambda T: T.rand_like(_leaf(T), requires_grad=True),
    "randn_like": lambda T: T.randn_like(T.zeros(2, dtype=T.complex64)),
    "randn_like_dtype": lambda T: T.randn_like(T.zeros(2), dtype=T.float64),
    "randint_like": lambda T: T.randint_like(T.zeros(2, dtype=T.int32), 5),
    "randint_like_lohi": lambda T: T.randint_like(T.zeros(2), 3, 5),
    "randint_like_kw": lambda T: T.randint_like(T.zeros(2), low=1, high=5),
    "normal_tt": lambda T: T.normal(_leaf(T), _leaf(T)),
    "normal_tt_bcast": lambda T: T.normal(_leaf(T, (2, 1)), _leaf(T, (3,))),
    "normal_tt_dtype": lambda T: T.normal(T.zeros(2, dtype=T.float64), T.ones(2)),
    "normal_tt_dtype2": lambda T: T.normal(T.zeros(2), T.ones(2, dtype=T.float64)),
    "normal_tf": lambda T: T.normal(_leaf(T), 2.0),
    "normal_t_default": lambda T: T.normal(mean=_leaf(T)),
    "normal_ft": lambda T: T.normal(1.0, _leaf(T)),
    "normal_ft_0d": lambda T: T.normal(0.0, T.tensor(1.0)),
    "normal_ff": lambda T: T.normal(0.0, 1.0, (2, 3), requires_grad=True),
    "normal_ff_dtype": lambda T: T.normal(0.0, 1.0, size=(2,), dtype=T.float64),
    "normal_ff_complex": lambda T: T.normal(0.0, 1.0, (2,), dtype=T.complex64),
    "normal_ff_int_args": lambda T: T.normal(1, 1, (3,)),
    "normal_complex_mean": lambda T: T.normal(T.zeros(2, dtype=T.complex64), 1.0),
    "normal_half": lambda T: T.normal(T.zeros(2, dtype=T.float16), 1.0),
    "normal_empty": lambda T: T.normal(T.zeros(0), T.ones(0)),
    "normal_meta": lambda T: T.normal(0, 1, size=(2,), device="meta"),
    "bernoulli": lambda T: T.bernoulli(_leaf(T)),
    "bernoulli_method": lambda T: _leaf(T).bernoulli(),
    "bernoulli_p": lambda T: T.bernoulli(_leaf(T), 0.3),
    "bernoulli_p_kw_tensor": lambda T: T.bernoulli(T.zeros(2), p=T.tensor(0.2)),
    "bernoulli_int_p": lambda T: T.bernoulli(T.tensor([1, 2]), 0.2),
    "bernoulli_half": lambda T: T.bernoulli(T.full((3,), 0.5, dtype=T.float16)),
    "multinomial": lambda T: T.multinomial(_leaf(T, (4,)), 2),
    "multinomial_2d": lambda T: T.multinomial(T.ones(3, 4, dtype=T.float64), 4),
    "multinomial_repl": lambda T: T.multinomial(T.ones(3, 4), 9, True),
    "multinomial_method": lambda T: T.ones(3).multinomial(2, replacement=True),
    "multinomial_empty_rows": lambda T: T.multinomial(T.ones(0, 3), 1),
    "multinomial_half": lambda T: T.multinomial(T.ones(3, dtype=T.float16), 1),
    "poisson": lambda T: T.poisson(_leaf(T, fill=3.0)),
    "poisson_f64": lambda T: T.poisson(T.tensor([1.0, 0.0], dtype=T.float64)),
    "poisson_half": lambda T: T.poisson(T.tensor([1.0, 2.0], dtype=T.float16)),
}
_INPLACE = {
    "uniform_": (lambda x: x.uniform_(), "UniformBackward0"),
    "uniform_args": (lambda x: x.uniform_(-2, 3), "UniformBackward0"),
    "uniform_to_kw": (lambda x: x.uniform_(to=2), "UniformBackward0"),
    "normal_": (lambda x: x.normal_(1, 2), "NormalBackward0"),
    "bernoulli_f": (lambda x: x.bernoulli_(0.25), "BernoulliBackward2"),
    "bernoulli_default": (lambda x: x.bernoulli_(), "BernoulliBackward2"),
    "random_": (lambda x: x.random_(), "RandomBackward2"),
    "random_to": (lambda x: x.random_(5), "RandomBackward1"),
    "random_from_to": (lambda x: x.random_(2, 5), "RandomBackward0"),
    "random_from_none": (lambda x: x.random_(3, None), "RandomBackward0"),
    "exponential_": (lambda x: x.exponential_(2.0), "ExponentialBackward0"),
    "cauchy_": (lambda x: x.cauchy_(1, 2), "CauchyBackward0"),
    "log_normal_": (lambda x: x.log_normal_(), "LogNormalBackward0"),
    "geometric_": (lambda x: x.geometric_(0.3), "GeometricBackward0"),
}


@pytest.mark.parametrize("name", sorted(STRUCT_CASES))
def test_struct(name):
    same_struct(STRUCT_CASES[name])


@pytest.mark.parametrize("name", sorted(_INPLACE))
def test_inplace_sampler_autograd_and_version(name):
    f, node = _INPLACE[name]

    def run(T):
        leaf = T.ones(3, requires_grad=True)
        y = leaf * 2
        v = y._version
        r = f(y)
        assert r is y and y._version == v + 1
        assert type(y.grad_fn).__name__ == node
        y.sum().backward()
        return leaf.grad, y
    (ge, ye), (gt, yt) = same_struct(run)
    assert ge.tolist() == gt.tolist() == [0.0, 0.0, 0.0]   # the sampler's gradient is zero
    # a view written in place bumps its base's version and rebases the base's history
    base = ember.zeros(2, 3)
    f(base[0])
    assert base._version == 1
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        f(ember.ones(3, requires_grad=True))
    with ember.no_grad():
        z = f(ember.ones(3, requires_grad=True))
        assert z.grad_fn is None


def test_inplace_on_dtypes_and_meta():
    for dt in ("float16", "bfloat16", "float64", "complex64"):
        for name in ("uniform_", "normal_"):
            same_struct(lambda T: _INPLACE[name][0](T.zeros(4, dtype=getattr(T, dt))))
    for dt in ("int64", "uint8", "int8", "bool", "float16", "float32"):
        same_struct(lambda T: T.zeros(4, dtype=getattr(T, dt)).random_())
        same_struct(lambda T: T.zeros(4, dtype=getattr(T, dt)).bernoulli_(0.5))
    same_struct(lambda T: T.zeros(4, dtype=T.int64).geometric_(0.5))
    same_struct(lambda T: T.zeros(4, dtype=T.int32).bernoulli_(T.full((4,), 0.5)))
    m = ember.zeros(3, device="meta").uniform_()
    assert m.is_meta and m._version == 1


def test_normal_and_samplers_gradients():
    """PyTorch's formulas: zero gradients into mean/std/p/rate, zero tangents."""
    for f in (lambda T, a, b: T.normal(a, b), lambda T, a, b: T.normal(a, 2.0),
              lambda T, a, b: T.normal(1.0, b), lambda T, a, b: T.bernoulli(a * 0 + 0.5),
              lambda T, a, b: T.poisson(b)):
        def run(T):
            a = T.zeros(2, 1, requires_grad=True)
            b = T.ones(3, requires_grad=True)
            out = f(T, a, b)
            grads = T.autograd.grad(out.sum(), (a, b), allow_unused=True)
            return [g for g in grads]
        (ge, gt) = same_struct(run)
        for x, y in zip(ge, gt):
            assert (x is None) == (y is None) and (x is None or x.tolist() == y.tolist())
    fw = ember.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(ember.ones(3), ember.ones(3))
        for out in (ember.normal(d, 1.0), ember.normal(d, d), ember.poisson(d),
                    d.clone().uniform_(), d.clone().exponential_(),
                    d.clone().bernoulli_(d * 0 + 0.5)):
            assert fw.unpack_dual(out).tangent.tolist() == [0.0, 0.0, 0.0]
    q = ember.full((3,), 0.5, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::bernoulli is not implemented"):
        ember.bernoulli(q, 0.3).sum().backward()
    assert ember.rand_like(q).grad_fn is None and not ember.rand_like(q).requires_grad


# ---- errors -------------------------------------------------------------------------------

ERRORS = {
    "rand_int": lambda T: T.rand(2, dtype=T.int64),
    "rand_bool": lambda T: T.rand(2, dtype=T.bool),
    "randn_int": lambda T: T.randn(2, dtype=T.int32),
    "randn_bool": lambda T: T.randn(2, dtype=T.bool),
    "rand_like_int": lambda T: T.rand_like(T.zeros(2, dtype=T.int64)),
    "randn_like_int": lambda T: T.randn_like(T.zeros(2, dtype=T.int64)),
    "rand_gen": lambda T: T.rand(2, generator=3),
    "rand_no_size": lambda T: T.rand(),
    "rand_float_size": lambda T: T.rand(2, 3.0),
    "rand_negative": lambda T: T.rand(-1),
    "rand_bad_kw": lambda T: T.rand(2, dtype=T.float32, foo=1),
    "generator_cuda": lambda T: T.Generator(device="cuda"),
    "random_three_args": lambda T: T.zeros(2).random_(1, 2, 3),
    "randn_negative": lambda T: T.randn(2, -3),
    "randint_no_size": lambda T: T.randint(3),
    "randint_int_size": lambda T: T.randint(3, 5),
    "randint_float_high": lambda T: T.randint(2.5, (3,)),
    "randint_empty_range": lambda T: T.randint(3, 3, (2,)),
    "randint_reversed": lambda T: T.randint(4, 3, (2,)),
    "randint_uint8_hi": lambda T: T.randint(0, 300, (2,), dtype=T.uint8),
    "randint_uint8_lo": lambda T: T.randint(-1, 3, (2,), dtype=T.uint8),
    "randint_int32": lambda T: T.randint(0, 2 ** 40, (2,), dtype=T.int32),
    "randint_bool": lambda T: T.randint(0, 3, (2,), dtype=T.bool),
    "randint_overflow": lambda T: T.randint(2 ** 63, (2,)),
    "randint_complex": lambda T: T.randint(0, 3, (2,), dtype=T.complex64),
    "randint_grad": lambda T: T.randint(3, (2,), requires_grad=True),
    "randint_like_bool": lambda T: T.randint_like(T.zeros(2, dtype=T.bool), 5),
    "randperm_negative": lambda T: T.randperm(-1),
    "randperm_uint8": lambda T: T.randperm(300, dtype=T.uint8),
    "randperm_int8": lambda T: T.randperm(1000, dtype=T.int8),
    "randperm_bool": lambda T: T.randperm(3, dtype=T.bool),
    "randperm_complex": lambda T: T.randperm(3, dtype=T.complex64),
    "randperm_half": lambda T: T.randperm(3000, dtype=T.float16),
    "randperm_grad": lambda T: T.randperm(3, requires_grad=True),
    "randperm_float_n": lambda T: T.randperm(3.0),
    "randperm_gen": lambda T: T.randperm(3, generator=3),
    "randperm_gen_positional": lambda T: T.randperm(4, T.Generator()),
    "normal_gen_positional": lambda T: T.normal(T.zeros(2), T.ones(2), T.Generator()),
    "normal_ff_no_size": lambda T: T.normal(0.0, 1.0),
    "normal_t_size": lambda T: T.normal(T.zeros(2), 1.0, (3,)),
    "normal_t_dtype": lambda T: T.normal(T.zeros(2), 1.0, dtype=T.float32),
    "normal_std_neg": lambda T: T.normal(0.0, -1.0, (2,)),
    "normal_std_nan": lambda T: T.normal(0.0, float("nan"), (2,)),
    "normal_t_std_neg": lambda T: T.normal(T.zeros(2), -1.0),
    "normal_tt_std_neg": lambda T: T.normal(T.zeros(2), -T.ones(2)),
    "normal_tt_std_nan": lambda T: T.normal(T.zeros(2), T.tensor([1.0, float("nan")])),
    "normal_tt_shapes": lambda T: T.normal(T.zeros(2), T.ones(3)),
    "normal_tt_shapes2": lambda T: T.normal(T.zeros(4), T.ones(2, 2)),
    "normal_int_mean": lambda T: T.normal(T.zeros(2, dtype=T.int64), 1.0),
    "normal_int_std": lambda T: T.normal(1.0, T.ones(2, dtype=T.int64)),
    "normal_ff_int_dtype": lambda T: T.normal(0.0, 1.0, (2,), dtype=T.int64),
    "normal_complex_std": lambda T: T.normal(T.zeros(2), T.ones(2, dtype=T.complex64)),
    "normal_no_mean": lambda T: T.normal(std=T.ones(2)),
    "normal_gen": lambda T: T.normal(0, 1, (2,), generator=3),
    "bernoulli_gt1": lambda T: T.bernoulli(T.tensor([1.5])),
    "bernoulli_neg": lambda T: T.bernoulli(T.tensor([-0.5])),
    "bernoulli_nan": lambda T: T.bernoulli(T.tensor([float("nan")])),
    "bernoulli_int": lambda T: T.bernoulli(T.tensor([1, 0])),
    "bernoulli_bool": lambda T: T.bernoulli(T.tensor([True])),
    "bernoulli_complex": lambda T: T.bernoulli(T.zeros(2, dtype=T.complex64)),
    "bernoulli_p_range": lambda T: T.bernoulli(T.tensor([0.2]), p=1.5),
    "bernoulli_gen": lambda T: T.bernoulli(T.zeros(2), generator=3),
    "bernoulli__p_range": lambda T: T.zeros(2).bernoulli_(1.5),
    "bernoulli__p_nan": lambda T: T.zeros(2).bernoulli_(float("nan")),
    "bernoulli__tensor_range": lambda T: T.zeros(2).bernoulli_(T.tensor([1.5, 0])),
    "bernoulli__tensor_shape": lambda T: T.zeros(2).bernoulli_(T.tensor([0.5, 1.0, 0.0])),
    "bernoulli__tensor_int": lambda T: T.zeros(2).bernoulli_(T.tensor([1, 0])),
    "bernoulli__complex": lambda T: T.zeros(2, dtype=T.complex64).bernoulli_(0.5),
    "multinomial_too_many": lambda T: T.multinomial(T.ones(3), 4),
    "multinomial_zero": lambda T: T.multinomial(T.ones(3), 0),
    "multinomial_neg_n": lambda T: T.multinomial(T.ones(3), -1, True),
    "multinomial_sum0": lambda T: T.multinomial(T.zeros(3), 1),
    "multinomial_neg": lambda T: T.multinomial(T.tensor([-1.0, 0.0, 1.0]), 1),
    "multinomial_inf": lambda T: T.multinomial(T.tensor([float("inf"), 0.0, 1.0]), 2),
    "multinomial_nan": lambda T: T.multinomial(T.tensor([float("nan"), 0.0, 1.0]), 1),
    "multinomial_row_sum0": lambda T: T.multinomial(T.tensor([[0.0, 1.0], [0.0, 0.0]]), 1),
    "multinomial_repl_neg": lambda T: T.multinomial(T.tensor([-1.0, 0.0, 1.0]), 2, True),
    "multinomial_repl_inf": lambda T: T.multinomial(T.tensor([float("inf"), 0.0, 1.0]), 2, True),
    "multinomial_repl_nan": lambda T: T.multinomial(T.tensor([float("nan"), 0.0, 1.0]), 2, True),
    "multinomial_repl_sum0": lambda T: T.multinomial(T.zeros(3), 2, True),
    "multinomial_repl_rows": lambda T: T.multinomial(T.tensor([[0.0, 0.0], [-1.0, 1.0]]), 2,
                                                     True),
    "multinomial_int": lambda T: T.multinomial(T.tensor([1, 2]), 1),
    "multinomial_complex": lambda T: T.multinomial(T.ones(3, dtype=T.complex64), 1),
    "multinomial_0d": lambda T: T.multinomial(T.tensor(1.0), 1),
    "multinomial_0d_int": lambda T: T.multinomial(T.tensor(1), 1),
    "multinomial_3d": lambda T: T.multinomial(T.ones(2, 2, 2), 1),
    "multinomial_no_categories": lambda T: T.multinomial(T.ones(2, 0), 1),
    "multinomial_float_n": lambda T: T.multinomial(T.ones(3), 2.0),
    "multinomial_gen": lambda T: T.multinomial(T.ones(2), 1, generator=3),
    "poisson_neg": lambda T: T.poisson(T.tensor([-1.0])),
    "poisson_nan": lambda T: T.poisson(T.tensor([float("nan")])),
    "poisson_int": lambda T: T.poisson(T.tensor([1, 2])),
    "poisson_complex": lambda T: T.poisson(T.ones(2, dtype=T.complex64)),
    "poisson_gen": lambda T: T.poisson(T.ones(2), generator=3),
    "uniform_reversed": lambda T: T.zeros(2).uniform_(1, 0),
    "uniform_to_oob": lambda T: T.zeros(2).uniform_(0, 1e308),
    "uniform_from_nan": lambda T: T.zeros(2).uniform_(float("nan"), 1),
    "uniform_half_oob": lambda T: T.zeros(2, dtype=T.float16).uniform_(0, 70000),
    "uniform_span": lambda T: T.zeros(2).uniform_(-3e38, 3e38),
    "uniform_int": lambda T: T.zeros(2, dtype=T.int64).uniform_(),
    "uniform_bad_kw": lambda T: T.zeros(2).uniform_(from_=1, to=2),
    "uniform_gen": lambda T: T.zeros(2).uniform_(generator=3),
    "normal__neg": lambda T: T.zeros(2).normal_(0, -1),
    "normal__nan": lambda T: T.zeros(2).normal_(0, float("nan")),
    "normal__int": lambda T: T.zeros(2, dtype=T.int64).normal_(),
    "normal__gen": lambda T: T.zeros(2).normal_(generator=3),
    "exponential_neg": lambda T: T.zeros(2).exponential_(-1),
    "exponential_zero": lambda T: T.zeros(2).exponential_(0),
    "exponential_nan": lambda T: T.zeros(2).exponential_(float("nan")),
    "exponential_int": lambda T: T.zeros(2, dtype=T.int64).exponential_(),
    "exponential_complex": lambda T: T.zeros(2, dtype=T.complex64).exponential_(),
    "cauchy_neg": lambda T: T.zeros(2).cauchy_(0, -1),
    "cauchy_zero": lambda T: T.zeros(2).cauchy_(0, 0),
    "cauchy_int": lambda T: T.zeros(2, dtype=T.int64).cauchy_(),
    "log_normal_neg": lambda T: T.zeros(2).log_normal_(0, -1),
    "log_normal_zero": lambda T: T.zeros(2).log_normal_(0, 0),
    "log_normal_int": lambda T: T.zeros(2, dtype=T.int64).log_normal_(),
    "geometric_0": lambda T: T.zeros(2).geometric_(0),
    "geometric_1": lambda T: T.zeros(2).geometric_(1),
    "geometric_big": lambda T: T.zeros(2).geometric_(1.5),
    "geometric_nan": lambda T: T.zeros(2).geometric_(float("nan")),
    "geometric_bool": lambda T: T.zeros(2, dtype=T.bool).geometric_(0.5),
    "geometric_complex": lambda T: T.zeros(2, dtype=T.complex64).geometric_(0.5),
    "random_complex": lambda T: T.zeros(2, dtype=T.complex64).random_(),
    "random_empty_range": lambda T: T.zeros(2, dtype=T.int64).random_(5, 5),
    "random_zero": lambda T: T.zeros(2, dtype=T.int64).random_(0),
    "random_neg_to": lambda T: T.zeros(2, dtype=T.int64).random_(-3),
    "random_uint8": lambda T: T.zeros(2, dtype=T.uint8).random_(300),
    "random_float_arg": lambda T: T.zeros(2, dtype=T.int64).random_(2.5),
    "random_bad_kw": lambda T: T.zeros(2).random_(from_=1, to=3),
    "random_half_full64": lambda T: T.zeros(2, dtype=T.float16).random_(-2 ** 63, None),
    "random_complex_range": lambda T: T.zeros(2, dtype=T.complex64).random_(0, 5),
    "inplace_expanded": lambda T: T.zeros(2, 3).expand(4, 2, 3).uniform_(),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    same_error(ERRORS[name])


def test_float_range_warnings():
    for f in (lambda T: T.randint(0, 2 ** 25, (2,), dtype=T.float32),
              lambda T: T.zeros(2, dtype=T.float16).random_(-5000, 5),
              lambda T: T.randint(0, 2 ** 12, (2,), dtype=T.bfloat16)):
        msgs = []
        for T in (ember, torch):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                f(T)
            msgs.append([str(x.message).split(" (Triggered internally")[0] for x in w])
        assert msgs[0] == msgs[1] and msgs[0]


# ---- value lattices and ranges ------------------------------------------------------------

def test_value_ranges():
    ember.manual_seed(0)
    for dt, d in (("float16", 11), ("bfloat16", 8), ("float32", 24), ("float64", 53)):
        x = _np(ember.rand(4000, dtype=getattr(ember, dt)))
        assert x.min() >= 0 and x.max() < 1
        assert np.all(x * 2 ** d == np.round(x * 2 ** d))   # PyTorch's lattice: k * 2**-digits
        r = _np(ember.zeros(4000, dtype=getattr(ember, dt)).random_())
        assert r.min() >= 0 and r.max() <= 2 ** d and np.all(r == np.round(r))
    for dt, hi in (("uint8", 255), ("int8", 127), ("bool", 1)):
        r = ember.zeros(4000, dtype=getattr(ember, dt)).random_().numpy().astype(np.int64)
        assert r.min() == 0 and r.max() == hi
    r = ember.zeros(4000, dtype=ember.int16).random_().numpy()
    assert r.min() >= 0 and r.max() > 30000
    big = ember.zeros(4000, dtype=ember.int64).random_().numpy()
    assert big.min() >= 0 and big.max() > 2 ** 62
    full = ember.randint(-2 ** 63, 2 ** 63 - 1, (4000,)).numpy()
    assert full.min() < -2 ** 62 and full.max() > 2 ** 62
    r = ember.zeros(4000, dtype=ember.int32).random_(-5, None).numpy()
    assert r.min() >= -5 and r.max() > 2 ** 30
    u = _np(ember.zeros(4000).uniform_(-2, 3))
    assert u.min() >= -2 and u.max() < 3
    assert sorted(ember.randperm(50).tolist()) == list(range(50))
    assert _np(ember.zeros(4000).geometric_(0.5)).min() == 1
    b = _np(ember.bernoulli(ember.tensor([0.0, 1.0] * 100)))
    assert b.tolist() == [0.0, 1.0] * 100
    m = ember.multinomial(ember.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]), 5, True)
    assert m.tolist() == [[2] * 5, [0] * 5]
    m = ember.multinomial(ember.tensor([0.0, 3.0, 0.0, 1.0]), 2)
    assert sorted(m.tolist()) == [1, 3]
    assert ember.poisson(ember.tensor([0.0, 1e10])).tolist()[0] == 0.0
    assert abs(ember.poisson(ember.tensor([1e10], dtype=ember.float64)).item() - 1e10) < 1e6


# ---- distributions --------------------------------------------------------------------------

N = 20000


def _ks(e, t, cdf):
    """ember's and torch's samples both fit ``cdf`` and each other."""
    assert st.kstest(e, cdf).pvalue > ALPHA
    assert st.kstest(t, cdf).pvalue > ALPHA
    assert st.ks_2samp(e, t).pvalue > ALPHA


def _draw(f):
    ember.manual_seed(1)
    torch.manual_seed(1)
    return _np(f(ember)), _np(f(torch))


CONTINUOUS = {
    "rand": (lambda T: T.rand(N), st.uniform().cdf),
    "rand_f64": (lambda T: T.rand(N, dtype=T.float64), st.uniform().cdf),
    "uniform_": (lambda T: T.empty(N).uniform_(-2, 3), st.uniform(-2, 5).cdf),
    "randn": (lambda T: T.randn(N), st.norm().cdf),
    "randn_half": (lambda T: T.randn(N, dtype=T.float16), st.norm().cdf),
    "randn_like": (lambda T: T.randn_like(T.zeros(N, dtype=T.float64)), st.norm().cdf),
    "normal_": (lambda T: T.empty(N).normal_(1.5, 2.0), st.norm(1.5, 2.0).cdf),
    "normal_tt": (lambda T: T.normal(T.full((N,), -1.0), T.full((N,), 0.5)),
                  st.norm(-1, 0.5).cdf),
    "normal_tf": (lambda T: T.normal(T.full((N,), 2.0), 3.0), st.norm(2, 3).cdf),
    "normal_ft": (lambda T: T.normal(2.0, T.full((N,), 3.0)), st.norm(2, 3).cdf),
    "normal_ff": (lambda T: T.normal(-2.0, 0.25, (N,)), st.norm(-2, 0.25).cdf),
    "randn_complex_re": (lambda T: T.randn(N, dtype=T.complex128).real,
                         st.norm(0, 0.5 ** 0.5).cdf),
    "randn_complex_im": (lambda T: T.randn(N, dtype=T.complex64).imag,
                         st.norm(0, 0.5 ** 0.5).cdf),
    "normal_complex_im": (lambda T: T.empty(N, dtype=T.complex128).normal_(1, 2).imag,
                          st.norm(1, 2 / 2 ** 0.5).cdf),
    "rand_complex_im": (lambda T: T.rand(N, dtype=T.complex64).imag, st.uniform().cdf),
    "exponential_": (lambda T: T.empty(N).exponential_(2.5), st.expon(scale=1 / 2.5).cdf),
    "cauchy_": (lambda T: T.empty(N).cauchy_(1.0, 0.5), st.cauchy(1.0, 0.5).cdf),
    "log_normal_": (lambda T: T.empty(N, dtype=T.float64).log_normal_(0.5, 0.75),
                    st.lognorm(0.75, scale=np.exp(0.5)).cdf),
}


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_distribution(name):
    f, cdf = CONTINUOUS[name]
    e, t = _draw(f)
    _ks(e, t, cdf)


def test_ks_check_can_fail():
    """The checks above are not vacuous: a planted wrong variance (or mean) fails them."""
    e, t = _draw(lambda T: T.randn(N))
    with pytest.raises(AssertionError):
        _ks(e * 1.05, t, st.norm().cdf)
    with pytest.raises(AssertionError):
        _ks(e + 0.04, t, st.norm().cdf)
    c, _ = _draw(lambda T: T.randn(N, dtype=T.complex128))
    with pytest.raises(AssertionError):   # a complex part of variance 1 instead of 1/2
        _ks(c.real * 2 ** 0.5, t, st.norm(0, 0.5 ** 0.5).cdf)


def _chi2(e, t, pmf: dict):
    """Counts of ember's and torch's samples fit ``pmf`` (values -> probabilities) and each
    other (the tail beyond the listed values pooled)."""
    keys = sorted(pmf)
    probs = np.array([pmf[k] for k in keys])
    for x in (e, t):
        counts = np.array([(x == k).sum() for k in keys] + [(~np.isin(x, keys)).sum()])
        exp = np.append(probs, max(1 - probs.sum(), 0.0)) * len(x)
        keep = exp > 0
        assert counts[~keep].sum() == 0
        assert st.chisquare(counts[keep], exp[keep]).pvalue > ALPHA
    table = np.array([[(x == k).sum() for k in keys] + [(~np.isin(x, keys)).sum()]
                      for x in (e, t)])
    table = table[:, table.sum(0) > 0]
    assert st.chi2_contingency(table).pvalue > ALPHA


DISCRETE = {
    "randint": (lambda T: T.randint(-3, 4, (N,)), {k: 1 / 7 for k in range(-3, 4)}),
    "randint_like": (lambda T: T.randint_like(T.zeros(N), 5), {k: 0.2 for k in range(5)}),
    "random_to": (lambda T: T.empty(N).random_(6), {k: 1 / 6 for k in range(6)}),
    "random_bool": (lambda T: T.empty(N, dtype=T.bool).random_(), {0: 0.5, 1: 0.5}),
    "bernoulli": (lambda T: T.bernoulli(T.full((N,), 0.3)), {0: 0.7, 1: 0.3}),
    "bernoulli_p": (lambda T: T.bernoulli(T.zeros(N), 0.8), {0: 0.2, 1: 0.8}),
    "bernoulli_": (lambda T: T.empty(N, dtype=T.int64).bernoulli_(0.6), {0: 0.4, 1: 0.6}),
    "bernoulli_t": (lambda T: T.empty(N).bernoulli_(T.tensor([0.1, 0.9]).repeat(N // 2)),
                    {0: 0.5, 1: 0.5}),
    "geometric_": (lambda T: T.empty(N).geometric_(0.35),
                   {k: st.geom(0.35).pmf(k) for k in range(1, 15)}),
    "poisson": (lambda T: T.poisson(T.full((N,), 3.5)),
                {k: st.poisson(3.5).pmf(k) for k in range(0, 12)}),
    "multinomial_repl": (lambda T: T.multinomial(T.tensor([1.0, 0.0, 2.0, 5.0]), N, True),
                         {0: 1 / 8, 2: 2 / 8, 3: 5 / 8}),
    "multinomial_first": (lambda T: T.multinomial(T.tensor([1.0, 0.0, 2.0, 5.0]).expand(N, 4),
                                                  2)[:, 0], {0: 1 / 8, 2: 2 / 8, 3: 5 / 8}),
    "randperm_first": (lambda T: T.stack([T.randperm(5)[0] for _ in range(2000)]),
                       {k: 0.2 for k in range(5)}),
}


@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_distribution(name):
    f, pmf = DISCRETE[name]
    e, t = _draw(f)
    _chi2(e.real, t.real, pmf)


def test_bernoulli_tensor_probabilities_are_per_element():
    e, t = _draw(lambda T: T.empty(N).bernoulli_(T.tensor([0.1, 0.9]).repeat(N // 2)))
    _chi2(e[0::2], t[0::2], {0: 0.9, 1: 0.1})
    _chi2(e[1::2], t[1::2], {0: 0.1, 1: 0.9})


def test_chi2_check_can_fail():
    e, t = _draw(lambda T: T.bernoulli(T.full((N,), 0.3)))
    with pytest.raises(AssertionError):
        _chi2(e, t, {0: 0.68, 1: 0.32})
    w, wt = _draw(lambda T: T.multinomial(T.tensor([1.0, 2.0, 5.0]), N, True))
    with pytest.raises(AssertionError):   # uniform instead of weighted
        _chi2(np.random.default_rng(0).integers(0, 3, N), wt, {0: 1 / 8, 1: 2 / 8, 2: 5 / 8})


def test_multinomial_without_replacement_joint():
    """The second draw without replacement follows PyTorch's (p_j / (1 - p_i)) distribution:
    compare the pairs with torch's and with the exact probabilities."""
    p = [0.1, 0.2, 0.3, 0.4]
    e, t = _draw(lambda T: T.multinomial(T.tensor(p).expand(N, 4), 2))
    pairs = {(i, j): p[i] * p[j] / (1 - p[i]) for i in range(4) for j in range(4) if i != j}
    enc = {k: v for (i, j), v in pairs.items() for k in [i * 4 + j]}
    _chi2(e[:, 0] * 4 + e[:, 1], t[:, 0] * 4 + t[:, 1], enc)
    assert not (e[:, 0] == e[:, 1]).any()


# ---- op_db entries left out of test_opinfo_core for their values -----------------------------

_VARIANTS = {"in_place": lambda inp, *a, **k: inp.normal_(*a, **k),
             "number_mean": lambda std, mean, *a, **k: ember.normal(mean, std, *a, **k)}


@pytest.mark.parametrize("name", ["normal", "randn", "randn_like", "rand_like", "randint",
                                  "randint_like", "bernoulli", "multinomial"])
def test_opinfo_shapes_and_dtypes(name):
    infos = opinfos(name)
    assert infos
    for info in infos:
        for i, sample in enumerate(info.sample_inputs("cpu", torch.float64,
                                                      requires_grad=False)):
            if i == 8:
                break
            check_sample(info, sample, _VARIANTS.get(info.variant_test_name,
                                                     ember_fn(info.name)), values=False)


# ---- out= on the random factories (issue 7): drawn in out's dtype, out resized silently and
# returned, PyTorch's errors for a non-floating kernel, a mismatched dtype= and autograd

_OUT_CASES = {
    "rand_f64": lambda L: L.rand(3, out=L.empty(2, dtype=L.float64)),
    "rand_same": lambda L: L.rand(2, 3, out=L.empty(2, 3)),
    "rand_int": lambda L: L.rand(3, out=L.empty(3, dtype=L.int64)),
    "randn_int": lambda L: L.randn(3, out=L.empty(3, dtype=L.int64)),
    "rand_dtype_mismatch": lambda L: L.rand(3, out=L.empty(3), dtype=L.float64),
    "randint": lambda L: L.randint(5, (3,), out=L.empty(2)),
    "randint_low": lambda L: L.randint(2, 5, (3, 2), out=L.empty(0, dtype=L.int32)),
    "randint_bool": lambda L: L.randint(3, (2,), out=L.empty(2, dtype=L.bool)),
    "randperm": lambda L: L.randperm(4, out=L.empty(2)),
    "randperm_bool": lambda L: L.randperm(5, out=L.empty(2, dtype=L.bool)),
    "randperm_i16": lambda L: L.randperm(5, out=L.empty(2, dtype=L.int16)),
    "out_requires_grad": lambda L: L.rand(3, out=L.empty(2, requires_grad=True)),
    "requires_grad_flag": lambda L: L.rand(3, out=L.empty(2), requires_grad=True),
    "rand_c64": lambda L: L.rand(2, out=L.empty(2, dtype=L.complex64)),
    "randn_gen": lambda L: L.randn(2, generator=L.Generator(), out=L.empty(5)),
    "rand_strided": lambda L: L.rand(2, 3, out=L.empty(6)[::2]),
    "normal_f": lambda L: L.normal(0., 1., (3,), out=L.empty(2, dtype=L.float64)),
    "normal_f_int": lambda L: L.normal(0., 1., (3,), out=L.empty(2, dtype=L.int64)),
    "normal_t": lambda L: L.normal(L.zeros(3), 1.0, out=L.empty(3)),
    "normal_t64": lambda L: L.normal(L.zeros(3), 1.0, out=L.empty(3, dtype=L.float64)),
    "normal_tt": lambda L: L.normal(L.zeros(3), L.ones(2, 1), out=L.empty(1)),
    "normal_t_int": lambda L: L.normal(L.zeros(3), 1.0, out=L.empty(3, dtype=L.int64)),
    "normal_ft": lambda L: L.normal(0.5, L.ones(3), out=L.empty(3)),
    "out_not_tensor": lambda L: L.rand(3, out=[1]),
    "randint_out_not_tensor": lambda L: L.randint(3, (2,), out=3),
}


def _out_result(f, L):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = f(L)
        except Exception as e:   # noqa: BLE001 -- the exception itself is compared
            return type(e).__name__, str(e).replace("ember", "torch")
    return str(r.dtype).split(".")[-1], tuple(r.shape), r.stride(), r.requires_grad


@pytest.mark.parametrize("case", list(_OUT_CASES))
def test_factory_out(case):
    assert _out_result(_OUT_CASES[case], ember) == _out_result(_OUT_CASES[case], torch)


@pytest.mark.parametrize("make", [
    lambda L, o: L.rand(50, out=o), lambda L, o: L.randn(50, out=o),
    lambda L, o: L.normal(2.0, 0.5, (50,), out=o), lambda L, o: L.randperm(50, out=o),
    lambda L, o: L.randint(3, 9, (50,), out=o),
])
def test_factory_out_writes_and_returns_out(make):
    o = ember.zeros(3, dtype=ember.float64)
    v = o._version
    r = make(ember, o)
    assert r is o and tuple(o.shape) == (50,) and o.dtype == ember.float64
    assert o._version > v and len(set(o.tolist())) > 5
    ember.manual_seed(3)
    a = make(ember, ember.empty(0, dtype=ember.float64)).clone()
    ember.manual_seed(3)
    b = make(ember, ember.empty(0, dtype=ember.float64))
    assert ember.equal(a, b)   # seeded draws into out= are reproducible


# ---- window functions (one shared prologue): dtypes, lengths 0/1, errors, values

@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "bartlett_window",
                                  "blackman_window", "kaiser_window"])
def test_window_functions(name):
    bad = []
    for n in (-1, 0, 1, 2, 5, 8):
        for periodic in (True, False):
            for dt in (None, "float64", "float16", "bfloat16", "int64", "complex64"):
                for rg in (False, True):
                    res = []
                    for L in (torch, ember):
                        try:
                            w = getattr(L, name)(n, periodic, requires_grad=rg,
                                                 dtype=getattr(L, dt) if dt else None)
                        except Exception as e:   # noqa: BLE001 -- compared
                            res.append((type(e).__name__, str(e).replace("ember", "torch")))
                            continue
                        v = w.detach()
                        v = v.real if v.is_complex() else v
                        res.append((str(w.dtype).split(".")[-1], w.requires_grad,
                                    v.float().numpy()))
                    (t, e) = res
                    if len(t) == 2 or len(e) == 2:   # an error: class and message
                        same = len(t) == len(e) and t == e
                    else:
                        same = t[:-1] == e[:-1] and np.allclose(t[-1], e[-1], rtol=1e-5,
                                                                atol=1e-7)
                    if not same:
                        bad.append((n, periodic, dt, rg, t, e))
    assert not bad, bad


def test_randint_like_memory_format():
    """randint_like lays its result out as empty_like(input, memory_format), as rand_like."""
    for fmt in (None, "preserve_format", "contiguous_format", "channels_last"):
        kw_e = {} if fmt is None else {"memory_format": getattr(ember, fmt)}
        kw_t = {} if fmt is None else {"memory_format": getattr(torch, fmt)}
        for args in ((5,), (2, 5)):
            e = ember.randint_like(ember.empty(2, 3, 4, 5).contiguous(
                memory_format=ember.channels_last), *args, **kw_e)
            t = torch.randint_like(torch.empty(2, 3, 4, 5).contiguous(
                memory_format=torch.channels_last), *args, **kw_t)
            assert e.stride() == t.stride(), (fmt, args)
            assert e.shape == t.shape and e.dtype.is_floating_point == t.dtype.is_floating_point
