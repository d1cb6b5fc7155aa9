"""Ops with several outputs against PyTorch: the gradient of each output alone, of every subset
that leaves one output out, and of all of them together (through ``autograd.grad`` with one
cotangent per output, and through ``backward()`` of a loss that uses every output), with double
backward; plus ``check_op`` (all outputs, forward-mode tangents). A VJP that drops the gradient of
any output but the first fails here.

``test_every_multi_output_op_is_covered`` fails when ember gains an op with more than one
output that no entry of ``CASES`` reaches.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember._ops._registry import ALL_OPS
from helpers import assert_same, check_op, flat, pair, raises_same


def data(shape=(4, 6), seed=0, dtype="float64"):
    """Distinct values (tie-breaking of the selecting ops is unspecified)."""
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n).reshape(shape).astype(dtype) * 0.37
            - 2.0)


A = data()
B3 = data((2, 3, 4), 1)
V = data((3,), 2)
W = data((4,), 3)
IMG = data((1, 2, 5, 6), 4)
VOL = data((1, 2, 4, 4, 5), 5)
SAMPLES2 = np.random.default_rng(6).uniform(0.1, 0.9, (1, 2, 2))
SAMPLES3 = np.random.default_rng(7).uniform(0.1, 0.9, (1, 2, 3))
MODE = np.array([[1., 2., 2., 1., 3., 2.], [3., 3., 1., 1., 2., 3.], [4., 5., 6., 7., 8., 8.],
                 [0., 0., 0., 1., 1., 2.]])

_R = np.random.default_rng(11)
SQ = _R.standard_normal((4, 4)) * 0.5 + np.diag([3., 4., 5., 6.])     # well conditioned
EIG = _R.standard_normal((4, 4)) * 0.5 + np.diag([1., 2., 3., 3.])
EIG[2, 3], EIG[3, 2] = 1.5, -1.5                         # one complex pair, all eigvals distinct
SPD = SQ @ SQ.T + np.eye(4)


def _spd(M, x):
    return x @ x.mT + M.eye(x.shape[0], dtype=x.dtype)


def _eig(M, x):
    vals, vecs = M.linalg.eig(x)
    return vals.real, vals.imag, vecs.abs()


def _eigh(M, x):
    vals, vecs = M.linalg.eigh(x)
    return vals, vecs.abs()


def _svd(M, x):
    u, s, vh = M.linalg.svd(x, full_matrices=False)
    return u.abs(), s, vh.abs()


# name -> (fn(M, *tensors), arrays). Each returns a tuple (or namedtuple) of outputs.
CASES = {
    "split_int": (lambda M, x: x.split(2, 1), [A]),
    "split_uneven": (lambda M, x: M.split(x, 4, 1), [A]),
    "split_sizes": (lambda M, x: x.split([1, 3, 2], 1), [A]),
    "split_dim0": (lambda M, x: M.split(x, 1), [A]),
    "split_3d_neg": (lambda M, x: M.split(x, [1, 3], -1), [B3]),
    "chunk": (lambda M, x: x.chunk(3, 1), [A]),
    "chunk_uneven": (lambda M, x: M.chunk(x, 3, 0), [A]),
    "tensor_split_int": (lambda M, x: M.tensor_split(x, 4, 1), [A]),
    "tensor_split_idx": (lambda M, x: x.tensor_split([1, 4], 1), [A]),
    "hsplit": (lambda M, x: M.hsplit(x, 3), [A]),
    "hsplit_idx": (lambda M, x: x.hsplit([2, 5]), [A]),
    "vsplit": (lambda M, x: M.vsplit(x, 2), [A]),
    "unbind0": (lambda M, x: x.unbind(0), [A]),
    "unbind1": (lambda M, x: M.unbind(x, 1), [B3]),
    "var_mean": (lambda M, x: M.var_mean(x, 1), [A]),
    "var_mean_all": (lambda M, x: M.var_mean(x), [A]),
    "std_mean": (lambda M, x: M.std_mean(x, 0, keepdim=True), [A]),
    "std_mean_corr": (lambda M, x: M.std_mean(x, (0, 2), correction=0), [B3]),
    "max_dim": (lambda M, x: M.max(x, 1), [A]),
    "min_dim": (lambda M, x: x.min(0, True), [A]),
    "sort": (lambda M, x: M.sort(x, 1), [A]),
    "sort_stable": (lambda M, x: x.sort(dim=0, descending=True, stable=True), [A]),
    "topk": (lambda M, x: M.topk(x, 3), [A]),
    "kthvalue": (lambda M, x: M.kthvalue(x, 2, 0), [A]),
    "median_dim": (lambda M, x: M.median(x, 1), [A]),
    "nanmedian_dim": (lambda M, x: x.nanmedian(0, True), [A]),
    "mode": (lambda M, x: M.mode(x, 1), [MODE]),
    "cummax": (lambda M, x: M.cummax(x, 1), [A]),
    "aminmax": (lambda M, x: M.aminmax(x, dim=1), [A]),
    "aminmax_all": (lambda M, x: x.aminmax(), [A]),
    "split_copy": (lambda M, x: M.split_copy(x, 4, 1), [A]),
    "split_with_sizes_copy": (lambda M, x: M.split_with_sizes_copy(x, [1, 3], 0), [A]),
    "unbind_copy": (lambda M, x: M.unbind_copy(x, 1), [B3]),
    "unsafe_split": (lambda M, x: M.unsafe_split(x, 2, 1), [A]),
    "unsafe_chunk": (lambda M, x: x.unsafe_chunk(3, 0), [A]),
    "unsafe_split_with_sizes": (lambda M, x: M.unsafe_split_with_sizes(x, [2, 4], 1), [A]),
    "cummin": (lambda M, x: x.cummin(0), [A]),
    "meshgrid_ij": (lambda M, x, y: M.meshgrid(x, y, indexing="ij"), [V, W]),
    "meshgrid_xy": (lambda M, x, y: M.meshgrid(x, y, indexing="xy"), [V, W]),
    "broadcast_tensors": (lambda M, x, y: M.broadcast_tensors(x, y), [A[:1], A[:, :1]]),
    "atleast_1d": (lambda M, x, y: M.atleast_1d(x, y), [np.array(1.5), V]),
    "atleast_2d": (lambda M, x, y: M.atleast_2d(x, y), [V, A]),
    "atleast_3d": (lambda M, x, y: M.atleast_3d(x, y), [V, A]),
    # nn.functional: pooling that also returns the indices
    "max_pool1d": (lambda M, x: M.nn.functional.max_pool1d(x[0], 2, return_indices=True),
                   [IMG]),
    "max_pool2d": (lambda M, x: M.nn.functional.max_pool2d(x, 2, 1, return_indices=True),
                   [IMG]),
    "max_pool2d_ceil": (lambda M, x: M.nn.functional.max_pool2d(
        x, 3, 2, padding=1, ceil_mode=True, return_indices=True), [IMG]),
    "max_pool3d": (lambda M, x: M.nn.functional.max_pool3d(x, 2, return_indices=True), [VOL]),
    "adaptive_max_pool1d": (lambda M, x: M.nn.functional.adaptive_max_pool1d(
        x[0], 4, return_indices=True), [IMG]),
    "adaptive_max_pool2d": (lambda M, x: M.nn.functional.adaptive_max_pool2d(
        x, (3, 4), return_indices=True), [IMG]),
    "adaptive_max_pool3d": (lambda M, x: M.nn.functional.adaptive_max_pool3d(
        x, (2, 3, 3), return_indices=True), [VOL]),
    "fractional_max_pool2d": (lambda M, x: M.nn.functional.fractional_max_pool2d(
        x, 2, output_size=(3, 4), return_indices=True,
        _random_samples=M.from_numpy(SAMPLES2.copy())), [IMG]),
    "fractional_max_pool3d": (lambda M, x: M.nn.functional.fractional_max_pool3d(
        x, 2, output_size=(2, 2, 3), return_indices=True,
        _random_samples=M.from_numpy(SAMPLES3.copy())), [VOL]),
    # linalg: raw outputs where they are unique; where a decomposition is unique only up to
    # signs/phases (eig, eigh, svd) the case returns every output made invariant to that choice
    # (abs of the vectors, as PyTorch's OpInfos do), so the gradients are well-defined
    "frexp": (lambda M, x: M.frexp(x), [A]),
    "cholesky": (lambda M, x: (M.cholesky(_spd(M, x)),), [A]),
    "cholesky_upper": (lambda M, x: (x.cholesky(upper=True),), [SPD]),
    "linalg_cholesky_ex": (lambda M, x: M.linalg.cholesky_ex(_spd(M, x)), [A]),
    "linalg_eig": (lambda M, x: _eig(M, x), [EIG]),
    "linalg_eigh": (lambda M, x: _eigh(M, x + x.mT), [SQ]),
    "linalg_svd": (lambda M, x: _svd(M, x), [A]),
    "linalg_svd_tall": (lambda M, x: _svd(M, x.mT), [A]),
    "linalg_qr": (lambda M, x: M.linalg.qr(x), [A.T.copy()]),
    "linalg_qr_wide": (lambda M, x: M.linalg.qr(x), [SQ[:3]]),
    "linalg_slogdet": (lambda M, x: M.linalg.slogdet(x), [SQ]),
    "linalg_slogdet_neg": (lambda M, x: M.linalg.slogdet(-x[:3, :3]), [SQ]),
    "linalg_inv_ex": (lambda M, x: M.linalg.inv_ex(x), [SQ]),
    "linalg_solve_ex": (lambda M, x, y: M.linalg.solve_ex(x, y), [SQ, A]),
    "linalg_solve_ex_left": (lambda M, x, y: M.linalg.solve_ex(x, y, left=False), [SQ, A.T.copy()]),
    "triangular_solve": (lambda M, y, x: M.triangular_solve(y, x), [A, SQ]),
    "triangular_solve_lower_t": (lambda M, y, x: y.triangular_solve(
        x, upper=False, transpose=True), [A, SQ]),
    "linalg_lstsq": (lambda M, x, y: M.linalg.lstsq(x, y, driver="gelsd"),
                     [A.T.copy(), data((6, 2), 9)]),
    "linalg_lu": (lambda M, x: M.linalg.lu(x), [SQ]),
    "linalg_lu_wide": (lambda M, x: M.linalg.lu(x), [A]),
    "linalg_lu_factor_ex": (lambda M, x: M.linalg.lu_factor_ex(x), [SQ]),
    "lu_unpack": (lambda M, x: M.lu_unpack(*M.linalg.lu_factor(x)), [A.T.copy()]),
    # a multi-output op whose input is an intermediate, so its gradient flows on
    "split_of_product": (lambda M, x, y: (x * y).split(2, 1), [A, A[::-1].copy()]),
}

_SEEN_OPS: set = set()


def _record(outs) -> None:
    """Note every registered op in the graph behind ``outs`` (a case may post-process a
    decomposition's outputs; it then uses each of them, so each gradient still matters)."""
    stack = [getattr(o, "grad_fn", None) for o in outs]
    done: set = set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in done:
            continue
        done.add(id(fn))
        if getattr(fn, "op", None) is not None:
            _SEEN_OPS.add(fn.op.name)
        stack.extend(nxt for nxt, _ in fn.next_functions)


def _run(name, M, ins):
    f, _ = CASES[name]
    return flat(f(M, *ins))


def _leaves(arrays):
    ps = [pair(a, requires_grad=True) for a in arrays]
    return [p[0] for p in ps], [p[1] for p in ps]


def _live(ot) -> list:
    return [k for k, o in enumerate(ot) if isinstance(o, torch.Tensor) and o.requires_grad]


def _cot(rng, t):
    a = rng.standard_normal(tuple(t.shape))
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _grads_of(name, subset, create_graph):
    """Gradients of the outputs in ``subset`` (one cotangent each) w.r.t. every input."""
    arrays = CASES[name][1]
    es, ts = _leaves(arrays)
    oe, ot = _run(name, ember, es), _run(name, torch, ts)
    _record(oe)
    rng = np.random.default_rng(len(subset))
    cots = [_cot(rng, ot[k]) for k in subset]
    ge = ember.autograd.grad([oe[k] for k in subset], es, [c[0] for c in cots],
                             create_graph=create_graph, allow_unused=True)
    gt = torch.autograd.grad([ot[k] for k in subset], ts, [c[1] for c in cots],
                             create_graph=create_graph, allow_unused=True)
    assert_same(list(ge), list(gt))
    if create_graph:
        pe = [g for g, h in zip(ge, gt) if h is not None and h.requires_grad]
        pt = [h for h in gt if h is not None and h.requires_grad]
        assert len(pe) == len(pt)
        if pt:
            se = sum((g * g * 0.5).sum() for g in pe)
            st = sum((h * h * 0.5).sum() for h in pt)
            assert_same(list(ember.autograd.grad(se, es, allow_unused=True)),
                        list(torch.autograd.grad(st, ts, allow_unused=True)))


def _subsets(n_live: list) -> list:
    """Each output alone, all but one (for each), and all of them."""
    subs = [[k] for k in n_live]
    if len(n_live) > 2:
        subs += [[k for k in n_live if k != j] for j in n_live]
    if len(n_live) > 1:
        subs.append(list(n_live))
    return subs


NO_FORWARD_AD = {"cholesky", "cholesky_upper"}   # derivatives.yaml has no forward formula
# PyTorch 2.13's tangent is wrong here (all of dA, untransposed, though the solve reads only A's
# triangle, of A^T with transpose=True); ember's is the derivative: test_torch_wrong_tangent
TORCH_WRONG_TANGENT = {n for n in CASES if n.startswith("triangular_solve")}


@pytest.mark.parametrize("name", list(CASES))
def test_check_op(name):
    f, arrays = CASES[name]
    check_op(lambda *x: f(ember, *x), lambda *x: f(torch, *x), *arrays,
             fwd=name not in NO_FORWARD_AD | TORCH_WRONG_TANGENT)


@pytest.mark.parametrize("name", sorted(TORCH_WRONG_TANGENT))
def test_torch_wrong_tangent(name):
    f, arrays = CASES[name]
    xs = [ember.from_numpy(a.copy()).requires_grad_() for a in arrays]
    assert ember.autograd.gradcheck(lambda *x: f(ember, *x), xs, check_forward_ad=True,
                                    check_backward_ad=False, check_undefined_grad=False)


@pytest.mark.parametrize("name", sorted(NO_FORWARD_AD))
def test_forward_ad_refused(name):
    f, arrays = CASES[name]

    def go(M):
        fw = M.autograd.forward_ad
        with fw.dual_level():
            xs = [fw.make_dual(M.from_numpy(a.copy()), M.from_numpy(np.ones_like(a)))
                  for a in arrays]
            f(M, *xs)
    raises_same(lambda: go(ember), lambda: go(torch))


@pytest.mark.parametrize("name", list(CASES))
def test_each_output_and_subsets(name):
    arrays = CASES[name][1]
    _, ts = _leaves(arrays)
    live = _live(_run(name, torch, ts))
    assert live, "torch has no differentiable output here"
    for sub in _subsets(live):
        for cg in (False, True):
            try:
                _grads_of(name, sub, cg)
            except AssertionError as ex:
                raise AssertionError(f"outputs {sub}, create_graph={cg}: {ex}") from None


@pytest.mark.parametrize("name", list(CASES))
def test_backward_of_a_loss_using_every_output(name):
    """All outputs' gradients arrive through ordinary nodes and accumulate in ``.grad``."""
    arrays = CASES[name][1]
    res = []
    for M in (ember, torch):
        xs = [M.from_numpy(a.copy()).requires_grad_() for a in arrays]
        outs = _run(name, M, xs)
        loss = 0
        for k, o in enumerate(outs):
            if o.requires_grad:
                w = M.from_numpy(np.linspace(-1, 2, o.numel()).reshape(tuple(o.shape)))
                loss = loss + (o * w * (k + 1)).sum() + (o * o).sum() * 0.1 * k
        loss.backward()
        res.append([x.grad for x in xs])
    assert_same(res[0], res[1])


@pytest.mark.parametrize("name", ["split_int", "unbind0", "var_mean", "meshgrid_ij",
                                  "sort", "max_dim"])
def test_output_used_twice_and_retain_graph(name):
    """Backward twice through a retained multi-output node; one output feeding two consumers."""
    arrays = CASES[name][1]
    res = []
    for M in (ember, torch):
        xs = [M.from_numpy(a.copy()).requires_grad_() for a in arrays]
        outs = _run(name, M, xs)
        live = [o for o in outs if o.requires_grad]
        loss = (live[-1] * 3).sum() + (live[-1] ** 2).sum() + live[0].sum()
        loss.backward(retain_graph=True)
        first = [x.grad.clone() for x in xs]
        (live[-1].exp().sum()).backward()
        res.append([first, [x.grad for x in xs]])
    assert_same(res[0], res[1])


def test_multi_output_views_refuse_inplace():
    for name in ("split_int", "chunk", "unbind0"):
        f = CASES[name][0]

        def go(M, f=f):
            x = M.from_numpy(A.copy()).requires_grad_()
            outs = f(M, x * 1)
            outs[1].mul_(2)
        raises_same(lambda: go(ember), lambda: go(torch))


def test_unique_outputs_and_missing_derivative():
    a = np.array([3., 1., 2., 1., 3., 3., 0.5])
    for kw in ({}, {"return_inverse": True}, {"return_counts": True},
               {"return_inverse": True, "return_counts": True, "sorted": True}):
        e, t = pair(a, requires_grad=True)
        oe, ot = ember.unique(e, **kw), torch.unique(t, **kw)
        assert_same(oe, ot)
        fe, ft = flat(oe), flat(ot)
        assert [o.requires_grad for o in fe] == [o.requires_grad for o in ft]
        assert fe[0].grad_fn.name() == ft[0].grad_fn.name()
        raises_same(lambda: fe[0].sum().backward(), lambda: ft[0].sum().backward())
    e, t = pair(a, requires_grad=True)
    oe = ember.unique_consecutive(e, return_inverse=True, return_counts=True)
    ot = torch.unique_consecutive(t, return_inverse=True, return_counts=True)
    assert_same(oe, ot)
    assert oe[0].grad_fn.name() == ot[0].grad_fn.name()
    assert [o.requires_grad for o in oe] == [o.requires_grad for o in ot]
    raises_same(lambda: oe[0].sum().backward(), lambda: ot[0].sum().backward())


def test_every_multi_output_op_is_covered():
    """Every registered op with several outputs is reached by some entry of ``CASES``."""
    for name in CASES:     # record the op names (independent of test order)
        f, arrays = CASES[name]
        es, _ = _leaves(arrays)
        _record(flat(f(ember, *es)))
    # cdist's own backward (double backward: test_matrix); native_group_norm's statistics carry
    # gradients in ember where PyTorch drops them (README; tests/test_aten_private.py)
    internal = {"cdist_backward", "NativeGroupNormBackward0"}
    multi = {op.name for op in ALL_OPS if op.n_out > 1} - internal
    missing = sorted(multi - _SEEN_OPS)
    assert not missing, f"multi-output ops without a case in CASES: {missing}"


@pytest.mark.parametrize("name", ["var_mean", "std_mean", "max_dim", "sort", "topk", "cummax",
                                  "max_pool2d", "split_of_product"])
def test_second_backward_through_freed_node(name):
    """Multi-output nodes take the engine's general path: their saved tensors are freed after
    backward too, so a second backward raises PyTorch's error (and works with retain_graph)."""
    f, arrays = CASES[name]

    def run(M, retain):
        xs = [M.from_numpy(a.copy()).requires_grad_() for a in arrays]
        outs = [o for o in flat(f(M, *xs)) if o.requires_grad]
        loss = sum((o * (k + 2)).sum() for k, o in enumerate(outs))   # nothing else saved
        loss.backward(retain_graph=retain)
        loss.backward()
        return [x.grad for x in xs]
    assert_same(run(ember, True), run(torch, True))
    raises_same(lambda: run(ember, False), lambda: run(torch, False))
