"""nn.functional linear, bilinear, embedding, embedding_bag, one_hot and distances against
PyTorch: OpInfo samples (float64 and float32: values, gradients, forward-mode tangents), the
grad_fn each route leaves, double backward and error messages."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from helpers import assert_same, both, check_op, raises_same
from opinfo import check_opinfo, check_sample, opinfos

DTYPES = [torch.float64, torch.float32]
RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def numeric_checks(fn, *arrays, double=True):
    """ember's own JVP, VJP and double backward against finite differences, where PyTorch has
    no forward AD or double backward to compare with."""
    ins = [ember.from_numpy(a.copy()).requires_grad_() for a in arrays]
    assert ember.autograd.gradcheck(fn, ins, check_forward_ad=True)
    if double:
        assert ember.autograd.gradgradcheck(fn, ins)


# ---- OpInfo ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["linear", "bilinear", "cosine_similarity",
                                  "pairwise_distance", "pdist"])
def test_opinfo(name, dtype):
    assert check_opinfo(f"nn.functional.{name}", dtype) > 0


# OpInfo's embedding ops take (weight, indices) to put the weight first
_REORDERED = {"embedding": lambda w, idx, **kw: EF.embedding(idx, w, **kw),
              "embedding_bag": lambda w, idx, **kw: EF.embedding_bag(idx, w, **kw)}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["embedding", "embedding_bag"])
def test_opinfo_embedding(name, dtype):
    n = 0
    for info in opinfos(f"nn.functional.{name}"):
        for sample in info.sample_inputs("cpu", dtype, requires_grad=True):
            check_sample(info, sample, fe=_REORDERED[name])
            n += 1
    assert n


def test_opinfo_one_hot():
    # integer samples cannot require grad (check_opinfo asks for it): run them directly
    info, = opinfos("nn.functional.one_hot")
    samples = list(info.sample_inputs("cpu", torch.int64, requires_grad=False))
    for sample in samples:
        check_sample(info, sample)
    assert len(samples) == 6


# ---- linear ---------------------------------------------------------------------------------

LINEAR_CASES = [  # (input shape, weight shape, bias shape or None, transpose input)
    ((3, 4), (5, 4), (5,), False), ((3, 4), (5, 4), None, False),
    ((2, 3, 4), (5, 4), (5,), False), ((2, 3, 4), (5, 4), None, False),
    ((2, 3, 4), (5, 4), (5,), True), ((2, 3, 4), (5, 4), None, True),
    ((2, 2, 3, 4), (5, 4), (5,), False), ((4,), (5, 4), (5,), False), ((4,), (5, 4), None, False),
    ((3, 4), (4,), None, False), ((4,), (4,), None, False), ((4,), (4,), (), False),
    ((3, 4), (5, 4), (), False), ((2, 3, 4), (5, 4), (), False), ((2, 3, 4), (5, 4), (3, 5), False),
    ((3, 4), (5, 4), (3, 5), False), ((2, 3, 4), (4,), (), False), ((0, 4), (5, 4), (5,), False),
    ((2, 1, 4), (5, 4), (5,), False),
]


@pytest.mark.parametrize("xs,ws,bs,tr", LINEAR_CASES)
def test_linear_routes(xs, ws, bs, tr):
    """Values, gradients, tangents, double backward and the node PyTorch's route leaves."""
    arrays = [rand(*xs), rand(*ws)] + ([] if bs is None else [rand(*bs)])

    def f(F, transpose):
        def run(x, w, b=None):
            if transpose:
                x = x.transpose(0, 1)
            return F.linear(x, w, b)
        return run
    if tr:
        arrays[0] = rand(xs[1], xs[0], *xs[2:])
    check_op(f(EF, tr), f(TF, tr), *arrays)


@pytest.mark.parametrize("argnums", [(0,), (1,), (2,), (0, 2)])
@pytest.mark.parametrize("xs", [(3, 4), (2, 3, 4), (4,)])
def test_linear_partial_grads(xs, argnums):
    """Only the operands a gradient needs are saved; the others' shapes still work out."""
    check_op(EF.linear, TF.linear, rand(*xs), rand(5, 4), rand(5), argnums=argnums)
    check_op(EF.linear, TF.linear, rand(*xs), rand(4), argnums=argnums[:1] if 2 not in argnums
             else (0,))


def test_linear_node_depends_on_requires_grad():
    """Without bias, N-D input: the matmul route folds when the weight requires grad."""
    x, w = rand(2, 3, 4), rand(5, 4)
    for wg in (True, False):
        def f(T, wg=wg):
            xt = T.from_numpy(x.copy()).requires_grad_().transpose(0, 1)
            return T.nn.functional.linear(xt, T.from_numpy(w.copy()).requires_grad_(wg))
        both(f)


def test_linear_float32_and_int():
    check_op(EF.linear, TF.linear, rand(6, 8, dtype=np.float32), rand(3, 8, dtype=np.float32),
             rand(3, dtype=np.float32))
    xi, wi = RNG.integers(-3, 3, (3, 4)), RNG.integers(-3, 3, (2, 4))
    check_op(EF.linear, TF.linear, xi, wi, RNG.integers(-3, 3, (2,)))


def test_linear_bias_dtype_in_matmul_route():
    """A float bias added in place to a double output (the unfused route) is allowed."""
    x, w, b = rand(2, 3, 4), rand(5, 4), rand(5, dtype=np.float32)
    both(lambda T: T.nn.functional.linear(
        T.from_numpy(x.copy()).transpose(0, 1), T.from_numpy(w.copy()), T.from_numpy(b.copy())))


@pytest.mark.parametrize("case", [
    ((3, 4), (5, 3), None), ((2, 3, 4), (5, 3), None), ((4,), (5, 3), (5,)),
    ((2, 3, 4), (5, 3), (5,)), ((3, 4), (5, 4), (4,)), ((2, 3, 4), (5, 4), (4,)),
    ((3, 4), (5, 4), (1, 1, 5)), ((), (5, 4), None), ((3, 4), (2, 5, 4), None),
    ((3, 4), (4,), ()), ((2, 3, 4), (5, 4), (2, 3, 2, 5)),
])
def test_linear_errors(case):
    xs, ws, bs = case
    x, w = rand(*xs), rand(*ws)
    b = None if bs is None else rand(*bs)

    def call(T):
        bt = None if b is None else T.from_numpy(b.copy())
        return lambda: T.nn.functional.linear(T.from_numpy(x.copy()), T.from_numpy(w.copy()),
                                              bt)
    raises_same(call(ember), call(torch))


def test_linear_errors_noncontiguous_and_dtypes():
    x, w = rand(2, 3, 4), rand(5, 3)

    def call(T, wd=None, bd=None, x_t=True, bias=True):
        xt = T.from_numpy(x.copy())
        xt = xt.transpose(0, 1) if x_t else xt
        wt = T.from_numpy(w.copy() if wd is None else rand(5, 4).astype(wd))
        bt = T.from_numpy(rand(5).astype(bd or np.float64)) if bias else None
        return lambda: T.nn.functional.linear(xt, wt, bt)
    raises_same(call(ember), call(torch))
    raises_same(call(ember, bias=False), call(torch, bias=False))
    raises_same(call(ember, np.float32, x_t=False, bias=False),
                call(torch, np.float32, x_t=False, bias=False))
    raises_same(call(ember, np.float64, np.float32, x_t=False),
                call(torch, np.float64, np.float32, x_t=False))
    raises_same(call(ember, np.float32, np.float32, x_t=False),
                call(torch, np.float32, np.float32, x_t=False))


# ---- bilinear -------------------------------------------------------------------------------

@pytest.mark.parametrize("lead", [(), (3,), (2, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear(lead, bias):
    arrays = [rand(*lead, 4), rand(*lead, 3), rand(5, 4, 3)] + ([rand(5)] if bias else [])
    check_op(EF.bilinear, TF.bilinear, *arrays)


@pytest.mark.parametrize("shapes", [
    ((3, 4), (3, 4), (5, 4), None), ((3, 4), (4,), (5, 4, 4), None),
    ((3, 4), (3, 3), (5, 4, 4), None), ((3, 4), (2, 4), (5, 4, 4), None),
    ((3, 4), (3, 4), (5, 3, 4), None), ((3, 4), (3, 4), (5, 4, 4), (3,)),
])
def test_bilinear_errors(shapes):
    s1, s2, sw, sb = shapes
    arrs = [rand(*s1), rand(*s2), rand(*sw)] + ([rand(*sb)] if sb else [None])

    def call(T):
        ts = [None if a is None else T.from_numpy(a.copy()) for a in arrs]
        return lambda: T.nn.functional.bilinear(*ts)
    raises_same(call(ember), call(torch))


def test_bilinear_dtype_error():
    def call(T, i):
        arrs = [rand(3, 4), rand(3, 4), rand(5, 4, 4), rand(5)]
        arrs[i] = arrs[i].astype(np.float32)
        return lambda: T.nn.functional.bilinear(*[T.from_numpy(a) for a in arrs])
    for i in (1, 3):
        raises_same(call(ember, i), call(torch, i))


# ---- embedding ------------------------------------------------------------------------------

IDX = np.array([[1, 2, 4, 5], [4, 3, 2, 9], [1, 1, 0, 0]])


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 0}, {"padding_idx": -1},
                                {"scale_grad_by_freq": True},
                                {"padding_idx": 1, "scale_grad_by_freq": True}])
def test_embedding(kw):
    # (the double backward is PyTorch's embedding_dense_double_backward: no frequency scale,
    # which composed with the scaled backward gives true second derivatives of gradients)
    check_op(lambda w, i: EF.embedding(i, w, **kw), lambda w, i: TF.embedding(i, w, **kw),
             rand(10, 3), IDX)


def test_embedding_int32_and_scalar_index():
    check_op(lambda w, i: EF.embedding(i, w), lambda w, i: TF.embedding(i, w), rand(10, 3),
             IDX.astype(np.int32))
    check_op(lambda w, i: EF.embedding(i, w), lambda w, i: TF.embedding(i, w), rand(10, 3),
             np.array(3))


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
def test_embedding_max_norm(norm_type):
    """The referenced rows are renormalised in place (a version bump), as in PyTorch."""
    w = rand(10, 3) * 2

    def f(T):
        wt = T.from_numpy(w.copy()).requires_grad_()
        out = T.nn.functional.embedding(T.from_numpy(IDX.copy()), wt, max_norm=1.0,
                                        norm_type=norm_type)
        g, = T.autograd.grad(out.sum(), wt)
        return out, wt.detach(), wt._version, g
    both(f)


@pytest.mark.parametrize("bad", [
    {"idx": np.array([10])}, {"idx": np.array([-1])}, {"idx": np.array([1.0])},
    {"padding_idx": 10}, {"padding_idx": -11}, {"weight": (10,)}, {"weight": (2, 5, 3)},
    {"idx": np.array([1.0]), "max_norm": 1.0},
])
def test_embedding_errors(bad):
    idx = bad.get("idx", IDX)
    w = rand(*bad.get("weight", (10, 3)))
    kw = {k: v for k, v in bad.items() if k in ("padding_idx", "max_norm")}

    def call(T):
        return lambda: T.nn.functional.embedding(T.from_numpy(idx.copy()),
                                                 T.from_numpy(w.copy()), **kw)
    raises_same(call(ember), call(torch))


def test_embedding_sparse_not_built():
    with pytest.raises(NotImplementedError, match="sparse"):
        EF.embedding(ember.tensor([1]), ember.ones(3, 2), sparse=True)


# ---- embedding_bag --------------------------------------------------------------------------

BAG_IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9])


@pytest.mark.parametrize("kw", [
    {"mode": "sum"}, {"mode": "mean"}, {"mode": "max"}, {"mode": "sum", "psw": True},
    {"mode": "mean", "padding_idx": 4}, {"mode": "max", "padding_idx": 2},
    {"mode": "sum", "include_last_offset": True, "offsets": [0, 3, 3, 8]},
    {"mode": "mean", "offsets": [0, 0, 5, 8]}, {"mode": "max", "offsets": [0, 2, 2]},
    {"mode": "sum", "psw": True, "padding_idx": 4},
])
def test_embedding_bag(kw):
    """PyTorch has no double backward for embedding_bag: ember's is checked numerically."""
    kw = dict(kw)
    offsets = np.array(kw.pop("offsets", [0, 3, 5]))
    psw = kw.pop("psw", False)
    arrays = [rand(10, 3), BAG_IDX, offsets] + ([rand(8)] if psw else [])

    def f(F):
        def run(w, i, o, p=None):
            return F.embedding_bag(i, w, o, per_sample_weights=p, **kw)
        return run
    check_op(f(EF), f(TF), *arrays, double=False, fwd=False)
    consts = [ember.from_numpy(a) for a in arrays[1:3]]
    numeric_checks(lambda *d: f(EF)(d[0], *consts, *d[1:]), arrays[0], *arrays[3:],
                   double=kw["mode"] != "max")


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq(mode):
    """Each row's gradient divided by the row's count in the batch, as documented. (PyTorch
    2.13's CPU kernel divides by the count of the row at the group's position in the sorted
    indices instead, a bug ember does not copy: the reference is embedding + a bag sum.)"""
    w, off = rand(10, 3), np.array([0, 3, 5])
    bag = np.searchsorted(off, np.arange(8), side="right") - 1
    cnt = np.bincount(bag, minlength=3)

    def ref(wt):
        rows = TF.embedding(torch.from_numpy(BAG_IDX), wt, scale_grad_by_freq=True)
        if mode == "mean":
            rows = rows / torch.from_numpy(cnt[bag, None].astype(np.float64))
        return torch.zeros(3, 3, dtype=wt.dtype).index_add(0, torch.from_numpy(bag), rows)
    g = rand(3, 3)
    we = ember.from_numpy(w.copy()).requires_grad_()
    wt = torch.from_numpy(w.copy()).requires_grad_()
    oe = EF.embedding_bag(ember.from_numpy(BAG_IDX), we, ember.from_numpy(off), mode=mode,
                          scale_grad_by_freq=True)
    ot = ref(wt)
    assert_same(oe, ot)
    assert_same(ember.autograd.grad(oe, we, ember.from_numpy(g))[0],
                torch.autograd.grad(ot, wt, torch.from_numpy(g))[0])


def test_embedding_bag_2d_input():
    idx = BAG_IDX.reshape(2, 4)
    for mode in ("sum", "mean", "max"):
        check_op(lambda w, i, m=mode: EF.embedding_bag(i, w, mode=m),
                 lambda w, i, m=mode: TF.embedding_bag(i, w, mode=m), rand(10, 3), idx,
                 double=False, fwd=False)
    check_op(lambda w, i, p: EF.embedding_bag(i, w, mode="sum", per_sample_weights=p),
             lambda w, i, p: TF.embedding_bag(i, w, mode="sum", per_sample_weights=p),
             rand(10, 3), idx, rand(2, 4), double=False, fwd=False)


@pytest.mark.parametrize("bad", [
    {"idx": np.array([1, 10])}, {"idx": np.array([1, -1])}, {"offsets": np.array([1, 3])},
    {"offsets": np.array([0, 9])}, {"offsets": np.array([0.0, 3.0])},
    {"idx": BAG_IDX.astype(np.float64)}, {"mode": "foo"},
    {"mode": "mean", "psw": np.ones(8)}, {"psw": np.ones(4)},
    {"mode": "sum", "psw": np.ones(8, np.float32)}, {"padding_idx": 10},
    {"idx": BAG_IDX.reshape(1, 1, 8)}, {"idx": BAG_IDX.reshape(2, 4)},
    {"offsets": None}, {"offsets": np.array([[0]])},
    {"mode": "max", "scale_grad_by_freq": True}, {"weight": (10,)},
])
def test_embedding_bag_errors(bad):
    idx = bad.get("idx", BAG_IDX)
    offsets = bad.get("offsets", np.array([0, 3]))
    w = rand(*bad.get("weight", (10, 3)))
    kw = {k: v for k, v in bad.items() if k in ("mode", "padding_idx", "scale_grad_by_freq")}
    psw = bad.get("psw")

    def call(T):
        def run():
            o = None if offsets is None else T.from_numpy(offsets.copy())
            p = None if psw is None else T.from_numpy(psw.copy())
            return T.nn.functional.embedding_bag(T.from_numpy(idx.copy()),
                                                 T.from_numpy(w.copy()), o,
                                                 per_sample_weights=p, **kw)
        return run
    raises_same(call(ember), call(torch))


# ---- one_hot --------------------------------------------------------------------------------

def test_one_hot():
    both(lambda T: T.nn.functional.one_hot(T.tensor([[0, 3], [2, 1]])))
    both(lambda T: T.nn.functional.one_hot(T.tensor([0, 3]), 6))
    both(lambda T: T.nn.functional.one_hot(T.tensor([], dtype=T.int64), 3))


@pytest.mark.parametrize("args", [([1.0], -1), ([1], -1, "int32"), ([-1], -1), ([5], 3),
                                  ([], -1), ([1], -2), ([1], 0)])
def test_one_hot_errors(args):
    data, n = args[0], args[1]

    def call(T):
        dt = getattr(T, args[2]) if len(args) > 2 else None
        return lambda: T.nn.functional.one_hot(T.tensor(data, dtype=dt) if data
                                               else T.tensor(data, dtype=T.int64), n)
    raises_same(call(ember), call(torch))


# ---- distances ------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes,dim", [(((3, 4), (3, 4)), 1), (((3, 4), (1, 4)), 1),
                                        (((2, 3, 4), (3, 4)), -1), (((4,), (4,)), 0)])
def test_cosine_similarity(shapes, dim):
    a, b = rand(*shapes[0]), rand(*shapes[1])
    check_op(lambda x, y: EF.cosine_similarity(x, y, dim),
             lambda x, y: TF.cosine_similarity(x, y, dim), a, b)


def test_cosine_similarity_clamps_small_norms():
    a, b = np.zeros((2, 3)), rand(2, 3)
    check_op(lambda x, y: EF.cosine_similarity(x, y), lambda x, y: TF.cosine_similarity(x, y),
             a, b, double=False)


def test_cosine_similarity_errors():
    def call(T, a, b):
        return lambda: T.nn.functional.cosine_similarity(T.tensor(a), T.tensor(b))
    raises_same(call(ember, [[1, 2]], [[3, 4]]), call(torch, [[1, 2]], [[3, 4]]))
    raises_same(call(ember, [[1.0, 2.0]], [[3.0, 4.0, 5.0]]),
                call(torch, [[1.0, 2.0]], [[3.0, 4.0, 5.0]]))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, float("inf")])
def test_pairwise_distance(p):
    check_op(lambda x, y: EF.pairwise_distance(x, y, p, keepdim=True),
             lambda x, y: TF.pairwise_distance(x, y, p, keepdim=True), rand(3, 5), rand(5))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 1.5, 0.5, float("inf"), 0.0])
def test_pdist(p):
    x = rand(5, 3)
    x[3] = x[1]     # a zero distance
    # PyTorch has neither forward AD nor double backward for pdist
    check_op(lambda t: EF.pdist(t, p), lambda t: TF.pdist(t, p), x, double=False, fwd=False)
    if p not in (0.0, 0.5, float("inf")):   # (finite differences across kinks fail)
        numeric_checks(lambda t: EF.pdist(t, p), rand(5, 3))


def test_pdist_errors():
    for x, p in (((2, 3, 4), 2.0), ((3, 4), -1.0)):
        a = rand(*x)
        raises_same(lambda: EF.pdist(ember.from_numpy(a), p), lambda: TF.pdist(
            torch.from_numpy(a), p))
    raises_same(lambda: EF.pdist(ember.ones(3, 2, dtype=ember.int64)),
                lambda: TF.pdist(torch.ones(3, 2, dtype=torch.int64)))


def test_float32_results():
    a, b = rand(4, 6, dtype=np.float32), rand(4, 6, dtype=np.float32)
    assert_same(EF.pdist(ember.from_numpy(a)), TF.pdist(torch.from_numpy(a)))
    assert_same(EF.cosine_similarity(ember.from_numpy(a), ember.from_numpy(b)),
                TF.cosine_similarity(torch.from_numpy(a), torch.from_numpy(b)))


# ---- misuse: PyTorch's exception class and message --------------------------------------------

_M = np.random.default_rng(0)
_X4, _W = _M.standard_normal((2, 3, 6, 6)), _M.standard_normal((4, 3, 3, 3))
_X3, _X5 = _M.standard_normal((2, 3, 8)), _M.standard_normal((1, 2, 4, 4, 4))


def _T(lib, a):
    return lib.from_numpy(np.array(a, copy=True))


def _F(lib):
    return lib.nn.functional


MISUSE = {  # wrong ranks, mismatched channels, bad padding, negative sizes, targets out of range
    "conv2d 5d input": lambda l: _F(l).conv2d(_T(l, _X4[None]), _T(l, _W)),
    "conv2d 2d input": lambda l: _F(l).conv2d(_T(l, _X4[0,0]), _T(l, _W)),
    "conv2d weight 3d": lambda l: _F(l).conv2d(_T(l, _X4), _T(l, _W[0])),
    "conv2d channels": lambda l: _F(l).conv2d(_T(l, _X4[:, :2]), _T(l, _W)),
    "conv2d groups": lambda l: _F(l).conv2d(_T(l, _X4), _T(l, _W), groups=2),
    "conv2d groups0": lambda l: _F(l).conv2d(_T(l, _X4), _T(l, _W), groups=0),
    "conv2d bias": lambda l: _F(l).conv2d(_T(l, _X4), _T(l, _W), _T(l, np.ones(3))),
    "conv2d neg pad": lambda l: _F(l).conv2d(_T(l, _X4), _T(l, _W), padding=-1),
    "conv2d bad pad str": lambda l: _F(l).conv2d(_T(l, _X4), _T(l, _W), padding="full"),
    "conv2d same stride": lambda l: _F(l).conv2d(_T(l, _X4), _T(l, _W), padding="same", stride=2),
    "conv2d stride0": lambda l: _F(l).conv2d(_T(l, _X4), _T(l, _W), stride=0),
    "conv2d dil0": lambda l: _F(l).conv2d(_T(l, _X4), _T(l, _W), dilation=0),
    "conv2d kernel too big": lambda l: _F(l).conv2d(_T(l, _X4[..., :2, :2]), _T(l, _W)),
    "conv2d pad len": lambda l: _F(l).conv2d(_T(l, _X4), _T(l, _W), padding=(1, 1, 1)),
    "conv1d 4d": lambda l: _F(l).conv1d(_T(l, _X4), _T(l, _W)),
    "conv1d chan": lambda l: _F(l).conv1d(_T(l, _X3), _T(l, _W[:, :2, :, 0])),
    "convT2d chan": lambda l: _F(l).conv_transpose2d(_T(l, _X4), _T(l, _W)),
    "convT2d outpad": lambda l: (
        _F(l).conv_transpose2d(_T(l, _X4), _T(l, _W.transpose(1,0,2,3)), output_padding=2)),
    "convT2d neg pad": lambda l: (
        _F(l).conv_transpose2d(_T(l, _X4), _T(l, _W.transpose(1,0,2,3)), padding=-1)),
    "conv3d 4d": lambda l: _F(l).conv3d(_T(l, _X4[0]), _T(l, _W[..., None])),
    "maxpool2d neg k": lambda l: _F(l).max_pool2d(_T(l, _X4), -1),
    "maxpool2d k0": lambda l: _F(l).max_pool2d(_T(l, _X4), 0),
    "maxpool2d pad big": lambda l: _F(l).max_pool2d(_T(l, _X4), 2, padding=2),
    "maxpool2d neg pad": lambda l: _F(l).max_pool2d(_T(l, _X4), 2, padding=-1),
    "maxpool2d stride0": lambda l: _F(l).max_pool2d(_T(l, _X4), 2, stride=0),
    "maxpool2d 2d input": lambda l: _F(l).max_pool2d(_T(l, _X4[0, 0]), 2),
    "maxpool2d 5d input": lambda l: _F(l).max_pool2d(_T(l, _X4[None]), 2),
    "maxpool2d out small": lambda l: _F(l).max_pool2d(_T(l, _X4[..., :1, :1]), 3),
    "maxpool1d neg k": lambda l: _F(l).max_pool1d(_T(l, _X3), -2),
    "maxpool1d 4d": lambda l: _F(l).max_pool1d(_T(l, _X4), 2),
    "maxpool3d neg": lambda l: _F(l).max_pool3d(_T(l, _X5), -1),
    "avgpool2d neg k": lambda l: _F(l).avg_pool2d(_T(l, _X4), -1),
    "avgpool2d pad big": lambda l: _F(l).avg_pool2d(_T(l, _X4), 2, padding=2),
    "avgpool2d neg pad": lambda l: _F(l).avg_pool2d(_T(l, _X4), 2, padding=-1),
    "avgpool1d neg": lambda l: _F(l).avg_pool1d(_T(l, _X3), -1),
    "avgpool3d neg": lambda l: _F(l).avg_pool3d(_T(l, _X5), -1),
    "adaptive avg neg": lambda l: _F(l).adaptive_avg_pool2d(_T(l, _X4), -1),
    "adaptive avg neg 1d": lambda l: _F(l).adaptive_avg_pool1d(_T(l, _X3), -2),
    "adaptive max neg": lambda l: _F(l).adaptive_max_pool2d(_T(l, _X4), (-1, 2)),
    "adaptive avg 5d": lambda l: _F(l).adaptive_avg_pool2d(_T(l, _X4[None]), 2),
    "lppool neg": lambda l: _F(l).lp_pool2d(_T(l, _X4), 2, -1),
    "interp neg size": lambda l: _F(l).interpolate(_T(l, _X4), size=-2),
    "interp neg size2": lambda l: _F(l).interpolate(_T(l, _X4), size=(-2, 3)),
    "interp zero size": lambda l: _F(l).interpolate(_T(l, _X4), size=0),
    "interp neg scale": lambda l: _F(l).interpolate(_T(l, _X4), scale_factor=-1.0),
    "interp both": lambda l: _F(l).interpolate(_T(l, _X4), size=2, scale_factor=2.0),
    "interp none": lambda l: _F(l).interpolate(_T(l, _X4)),
    "interp size len": lambda l: _F(l).interpolate(_T(l, _X4), size=(2, 2, 2)),
    "interp bad mode": lambda l: _F(l).interpolate(_T(l, _X4), size=2, mode="cubic"),
    "interp linear 4d": lambda l: _F(l).interpolate(_T(l, _X4), size=2, mode="linear"),
    "interp bilinear 3d": lambda l: _F(l).interpolate(_T(l, _X3), size=2, mode="bilinear"),
    "interp align nearest": lambda l: _F(l).interpolate(_T(l, _X4), size=2, align_corners=True),
    "interp 2d input": lambda l: _F(l).interpolate(_T(l, _X4[0,0]), size=2),
    "pad neg too much": lambda l: _F(l).pad(_T(l, _X4), (-4, -4)),
    "pad odd": lambda l: _F(l).pad(_T(l, _X4), (1, 1, 1)),
    "pad too long": lambda l: _F(l).pad(_T(l, _X3), (1, 1, 1, 1, 1, 1, 1, 1)),
    "pad reflect big": lambda l: _F(l).pad(_T(l, _X4), (6, 6), mode="reflect"),
    "pad reflect 1d": lambda l: _F(l).pad(_T(l, _X4[0,0,0]), (1, 1), mode="reflect"),
    "pad circular big": lambda l: _F(l).pad(_T(l, _X4), (7, 7), mode="circular"),
    "pad replicate neg": lambda l: _F(l).pad(_T(l, _X4), (-7, 1), mode="replicate"),
    "pad bad mode": lambda l: _F(l).pad(_T(l, _X4), (1, 1), mode="wrap"),
    "pad value nonconst": lambda l: _F(l).pad(_T(l, _X4), (1, 1), mode="reflect", value=1.0),
    "unfold neg": lambda l: _F(l).unfold(_T(l, _X4), -1),
    "fold bad": lambda l: _F(l).fold(_T(l, _X3), (4, 4), 2),
    "pixel_shuffle bad": lambda l: _F(l).pixel_shuffle(_T(l, _X4), 2),
    "pixel_shuffle neg": lambda l: _F(l).pixel_shuffle(_T(l, _X4), -1),
    "pixel_unshuffle bad": lambda l: _F(l).pixel_unshuffle(_T(l, _X4[..., :5]), 2),
    "channel_shuffle bad": lambda l: _F(l).channel_shuffle(_T(l, _X4), 2),
    "channel_shuffle neg": lambda l: _F(l).channel_shuffle(_T(l, _X4), -3),
    "embedding oob": lambda l: _F(l).embedding(_T(l, np.array([0, 9])), _T(l, _W[0, 0])),
    "embedding neg": lambda l: _F(l).embedding(_T(l, np.array([0, -1])), _T(l, _W[0, 0])),
    "one_hot oob": lambda l: _F(l).one_hot(_T(l, np.array([0, 5])), 3),
    "one_hot neg": lambda l: _F(l).one_hot(_T(l, np.array([0, -1])), 3),
    "batch_norm chan": lambda l: (
        _F(l).batch_norm(_T(l, _X4), _T(l, np.zeros(2)), _T(l, np.ones(2)))),
    "layer_norm shape": lambda l: _F(l).layer_norm(_T(l, _X4), (5,)),
    "group_norm div": lambda l: _F(l).group_norm(_T(l, _X4), 2),
    "instance_norm 1d": lambda l: _F(l).instance_norm(_T(l, _X4[0,0,0])),
    "nll 3d target": lambda l: _F(l).nll_loss(_T(l, _X3), _T(l, np.full((2, 8), 5))),
    "ce oob 4d": lambda l: _F(l).cross_entropy(_T(l, _X4), _T(l, np.full((2, 6, 6), 3))),
    "ce neg": lambda l: _F(l).cross_entropy(_T(l, _X4[:, :, 0, 0]), _T(l, np.array([-2, 0]))),
    "linear mismatch": lambda l: _F(l).linear(_T(l, _X3), _T(l, _W[:, :, 0, 0])),
    "bilinear mismatch": lambda l: (
        _F(l).bilinear(_T(l, _X3[0]), _T(l, _X3[0]), _T(l, _M.standard_normal((2, 3, 3))))),
    "softmax dim": lambda l: _F(l).softmax(_T(l, _X3), dim=5),
    "glu odd": lambda l: _F(l).glu(_T(l, _X3), dim=1),
    "prelu w": lambda l: _F(l).prelu(_T(l, _X4), _T(l, np.ones(2))),
    "grid_sample 3d": lambda l: _F(l).grid_sample(_T(l, _X3), _T(l, _X3)),
    "affine_grid": lambda l: _F(l).affine_grid(_T(l, np.zeros((2, 3, 3))), (2, 3, 4, 4)),
    "dropout p": lambda l: _F(l).dropout(_T(l, _X3), p=1.5),
    "local_response 2d": lambda l: _F(l).local_response_norm(_T(l, _X4[0,0]), 2),
    "cosine_sim": lambda l: _F(l).cosine_similarity(_T(l, _X3), _T(l, _X4)),
    "pdist 3d": lambda l: _F(l).pdist(_T(l, _X3)),
    "sdpa mismatch": lambda l: (
        _F(l).scaled_dot_product_attention(_T(l, _X3), _T(l, _X3[..., :4]), _T(l, _X3))),
    "unfold 2d": lambda l: _F(l).unfold(_T(l, _X4[0, 0]), 2),
    "max_unpool oob": lambda l: (
        _F(l).max_unpool2d(_T(l, _X4), _T(l, np.full((2, 3, 6, 6), 500)), 2)),
}


@pytest.mark.parametrize("name", sorted(MISUSE))
def test_misuse_errors(name):
    case = MISUSE[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_same(lambda: case(ember), lambda: case(torch))


# ---- the namespace ------------------------------------------------------------------------------

def test_every_public_functional_exists():
    """Every public function of torch.nn.functional is in ember.nn.functional (the CUDA-only
    float8 and grouped GEMMs raise NotImplementedError saying why)."""
    import inspect
    names = [n for n, v in vars(TF).items() if not n.startswith("_") and callable(v)
             and not inspect.isclass(v) and getattr(v, "__module__", "") in (
                 "torch.nn.functional", "torch._C._nn", "torch", None, "torch._C")]
    missing = [n for n in names if not hasattr(EF, n) and n not in (
        "handle_torch_function", "has_torch_function", "has_torch_function_unary",
        "has_torch_function_variadic", "boolean_dispatch", "assert_int_or_pair")]
    assert not missing, missing
    x = ember.ones(2, 2)
    for name, args in [("grouped_mm", (x, x)), ("scaled_mm", (x, x, x, 0, x, 0)),
                       ("scaled_grouped_mm", (x, x, x, 0, x, 0))]:
        with pytest.raises(NotImplementedError, match=name):
            getattr(EF, name)(*args)
