"""Every in-place method bumps the version counter exactly as PyTorch's does.

``INPLACE`` has an entry (the arguments to call it with) for every in-place method (name ending
in ``_``) that ``ember.Tensor`` and ``torch.Tensor`` both have, plus the in-place operators and
``__setitem__``; ``test_table_covers_every_inplace_method`` fails when ember gains one without
an entry. Each is called on a tensor, on a view of it (``select``), and on a non-contiguous view
(``t()``), in both libraries, comparing ``_version`` of the target, its base and a sibling view
before and after, the values, and what the call returns. Then each runs on a tensor that autograd
saved for backward (directly or through a view), and the backward must fail (or succeed) as
PyTorch's does, with its message.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from helpers import assert_same

R = np.random.default_rng(7)
F34 = R.uniform(0.1, 0.9, (3, 4))             # in the domain of log, atanh, logit, erfinv, ...
F34B = R.uniform(0.2, 0.8, (3, 4))
F34C = R.uniform(-0.5, 0.5, (3, 4))
I34 = R.integers(0, 4, (3, 4))
I34B = R.integers(0, 8, (3, 4))
MASK = R.uniform(size=(3, 4)) > 0.5
IDX1 = np.array([2, 0])                        # indices along dim 1 (length 4)
SRC32 = R.standard_normal((3, 2))
ROWS = np.array([0, 2, 1])
COLS = np.array([3, 1, 1])
SRC34 = R.standard_normal((3, 4))
BATCH1 = R.standard_normal((2, 3, 5))
BATCH2 = R.standard_normal((2, 5, 4))
VEC3 = R.standard_normal(3)
VEC4 = R.standard_normal(4)
PUT_IDX = np.array([0, 5, 11, -2])
PUT_REP = np.array([1, 4, 1, 4])                 # repeated: accumulate adds both
VALS4 = np.array([1.0, -2.0, 3.0, 0.5])


def T(M, a):
    """A fresh tensor of library ``M`` holding ``a``."""
    return M.from_numpy(np.array(a, copy=True))


def _f(*arrs, **kw):
    """Arguments: arrays become fresh tensors of the library, other values pass through."""
    def conv(M, a):
        if isinstance(a, np.ndarray):
            return T(M, a)
        return tuple(conv(M, i) for i in a) if isinstance(a, tuple) else a

    def make(M):
        return [conv(M, a) for a in arrs], {k: conv(M, v) for k, v in kw.items()}
    return make


def _none():
    return _f()


# name -> (self kind: "f" float64 / "i" int64, argument maker); a list for several variants
UNARY = ["abs_", "absolute_", "conj_physical_", "acos_", "acosh_", "arccos_", "arccosh_",
         "arcsin_", "arcsinh_",
         "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "cos_", "cosh_",
         "deg2rad_", "digamma_", "erf_", "erfc_", "erfinv_", "exp2_", "exp_", "expm1_", "fix_",
         "floor_", "frac_", "i0_", "lgamma_", "log10_", "log1p_", "log2_", "log_", "logit_",
         "logical_not_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_",
         "round_", "rsqrt_", "sgn_", "sigmoid_", "sign_", "sin_", "sinc_", "sinh_", "sqrt_",
         "square_", "tan_", "tanh_", "trunc_", "zero_", "tril_", "triu_"]
BINARY = ["add_", "arctan2_", "atan2_", "copysign_", "div_", "divide_", "eq_", "float_power_",
          "floor_divide_", "fmod_", "ge_", "greater_", "greater_equal_", "gt_", "heaviside_",
          "hypot_", "le_", "less_", "less_equal_", "logical_and_", "logical_or_",
          "logical_xor_", "lt_", "mul_", "multiply_", "ne_", "not_equal_", "pow_", "remainder_",
          "sub_", "subtract_", "true_divide_", "xlogy_", "copy_"]

INPLACE: dict = {n: [("f", _none())] for n in UNARY}
NO_SCALAR = {"arctan2_", "atan2_", "heaviside_", "hypot_", "logical_and_", "logical_or_",
             "logical_xor_"}   # torch's argument parser wants a Tensor there
INPLACE.update({n: [("f", _f(F34B))] + ([] if n in NO_SCALAR else [("f", _f(0.5))])
                for n in BINARY})
INPLACE.update({
    "add_": [("f", _f(F34B)), ("f", _f(F34B, alpha=2.0)), ("f", _f(0.5))],
    "sub_": [("f", _f(F34B)), ("f", _f(F34B, alpha=-1.5))],
    "div_": [("f", _f(F34B)), ("f", _f(F34B, rounding_mode="floor")), ("f", _f(3.0))],
    "copy_": [("f", _f(F34B)), ("f", _f(F34B[0])), ("f", _f(I34))],
    "addcdiv_": [("f", _f(F34B, F34C + 2, value=0.5))],
    "addcmul_": [("f", _f(F34B, F34C, value=2.0)), ("f", _f(F34B, F34C))],
    "bitwise_and_": [("i", _f(I34B)), ("i", _f(5))],
    "bitwise_or_": [("i", _f(I34B))],
    "bitwise_xor_": [("i", _f(I34B))],
    "bitwise_not_": [("i", _none())],
    "clamp_": [("f", _f(0.3, 0.6)), ("f", _f(min=0.4)), ("f", _f(F34C, F34B))],
    "clamp_max_": [("f", _f(0.5))],
    "clamp_min_": [("f", _f(0.5))],
    "clip_": [("f", _f(0.2, 0.7))],
    "cumprod_": [("f", _f(1))],
    "cumsum_": [("f", _f(0))],
    "detach_": [("f", _none())],
    "requires_grad_": [("f", _none()), ("f", _f(False))],
    "fill_": [("f", _f(0.25)), ("f", _f(np.array(1.5)))],
    "index_add_": [("f", _f(1, IDX1, SRC32)), ("f", _f(1, IDX1, SRC32, alpha=2.0))],
    "index_copy_": [("f", _f(1, IDX1, SRC32))],
    "index_fill_": [("f", _f(1, IDX1, 0.5))],
    "index_put_": [("f", _f((ROWS, COLS), np.array([1.0, 2.0, 3.0]))),
                   ("f", _f((ROWS, COLS), np.array(7.0), True))],
    "masked_fill_": [("f", _f(MASK, 0.5)), ("f", _f(MASK, np.array(2.0)))],
    "lerp_": [("f", _f(F34B, 0.3)), ("f", _f(F34B, F34C))],
    "polygamma_": [("f", _f(1))],
    "pow_": [("f", _f(2)), ("f", _f(F34B))],
    "renorm_": [("f", _f(2, 0, 1.0))],
    "round_": [("f", _none()), ("f", _f(decimals=1))],
    "scatter_": [("f", _f(1, I34[:, :2], SRC32)), ("f", _f(1, I34[:, :2], 0.5)),
                 ("f", _f(1, I34[:, :2], SRC32, reduce="add"))],
    "scatter_add_": [("f", _f(1, I34[:, :2], SRC32))],
    "tril_": [("f", _none()), ("f", _f(1))],
    "triu_": [("f", _none()), ("f", _f(-1))],
    "logit_": [("f", _none()), ("f", _f(0.2))],
    "nan_to_num_": [("f", _none()), ("f", _f(0.0, 1.0, -1.0))],
    "float_power_": [("f", _f(F34B)), ("f", _f(2))],
    "addbmm_": [("f", _f(BATCH1, BATCH2)), ("f", _f(BATCH1, BATCH2, beta=0.5, alpha=2.0))],
    "addr_": [("f", _f(VEC3, VEC4)), ("f", _f(VEC3, VEC4, beta=2.0, alpha=-1.0))],
    "addmm_": [("f", _f(SRC32, F34B[:2])), ("f", _f(SRC32, F34B[:2], beta=0.5, alpha=2.0))],
    "addmv_": [("f", _f(F34B, VEC4))],   # (a matrix self: refused)
    "baddbmm_": [("f", _f(BATCH1[:1], BATCH2[:1]))],   # (a matrix self: refused)
    "as_strided_": [("f", _f((2, 2), (1, 2))), ("f", _f((3,), (2,), 1))],
    "apply_": [("f", _f(lambda v: v * 2 + 1))],
    "map_": [("f", _f(F34B, lambda a, b: a - b)), ("f", _f(VEC4, lambda a, b: a * b))],
    "map2_": [("f", _f(F34B, F34C, lambda a, b, c: a * b + c))],
    "bitwise_left_shift_": [("i", _f(I34B)), ("i", _f(2))],
    "bitwise_right_shift_": [("i", _f(I34)), ("i", _f(1))],
    "gcd_": [("i", _f(I34B))],
    "lcm_": [("i", _f(I34B))],
    "fill_diagonal_": [("f", _f(0.5)), ("f", _f(2.0, True))],
    "igamma_": [("f", _f(F34B))],
    "igammac_": [("f", _f(F34B))],
    "ldexp_": [("f", _f(I34)), ("f", _f(F34B))],
    "nextafter_": [("f", _f(F34B))],
    "mvlgamma_": [("f", _f(1)), ("f", _f(2))],     # p=2: PyTorch 2.13 checks no domain
    "index_reduce_": [("f", _f(1, IDX1, SRC32, "prod")),
                      ("f", _f(1, IDX1, SRC32, "amax", include_self=False)),
                      ("f", _f(1, IDX1, SRC32, "mean"))],
    "scatter_reduce_": [("f", _f(1, I34[:, :2], SRC32, "sum")),
                        ("f", _f(1, I34[:, :2], SRC32, "amin", include_self=False)),
                        ("f", _f(1, I34[:, :2], SRC32, "mean"))],
    "masked_scatter_": [("f", _f(MASK, SRC34))],
    "put_": [("f", _f(PUT_IDX, VALS4)), ("f", _f(PUT_REP, VALS4, True))],
    # shape-changing: the target's metadata changes in place
    "squeeze_": [("f", _none()), ("f", _f(0))],
    "unsqueeze_": [("f", _f(1)), ("f", _f(-1))],
    "t_": [("f", _none())],
    "transpose_": [("f", _f(0, 1))],
    "swapaxes_": [("f", _f(1, 0))],
    "swapdims_": [("f", _f(0, -1))],
    "resize_": [("f", _f(2, 3)), ("f", _f((12,))), ("f", _f(3, 4))],
    "resize_as_": [("f", _f(F34B[:2, :3])), ("f", _f(F34B))],
    "set_": [("f", _none()), ("f", _f(F34B)), ("f", _f(F34B[1:])), ("f", _f(I34)),
             ("f", _f(F34B, 2, (2, 3))), ("f", _f(F34B[1:], 1, (2, 2), (1, 3)))],
    # random samplers: versions, returns, shapes and dtypes compared, not values (RANDOM)
    "bernoulli_": [("f", _none()), ("f", _f(0.3)), ("f", _f(F34B))],
    "cauchy_": [("f", _none()), ("f", _f(1.0, 2.0))],
    "exponential_": [("f", _none()), ("f", _f(2.0))],
    "geometric_": [("f", _f(0.3))],
    "log_normal_": [("f", _none()), ("f", _f(0.5, 0.25))],
    "normal_": [("f", _none()), ("f", _f(1.0, 2.0))],
    "uniform_": [("f", _none()), ("f", _f(-1.0, 1.0))],
    "random_": [("f", _none()), ("f", _f(10)), ("f", _f(2, 7)), ("i", _f(0, 5))],
})
# in-place samplers: their values come from each library's own stream
RANDOM = {"bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_", "normal_",
          "uniform_", "random_"}
# operators and item assignment: in place too
OPERATORS = {
    "__iadd__": [("f", _f(F34B))], "__isub__": [("f", _f(0.5))], "__imul__": [("f", _f(F34B))],
    "__itruediv__": [("f", _f(2.0))], "__ifloordiv__": [("f", _f(F34B))],
    "__imod__": [("f", _f(0.3))], "__ipow__": [("f", _f(2))],
    "__iand__": [("i", _f(I34B))], "__ior__": [("i", _f(I34B))], "__ixor__": [("i", _f(3))],
    "__setitem__": [("f", _f(0, 1.0)), ("f", _f((slice(None), 1), F34B[:, 0])),
                    ("f", _f((ROWS, COLS), 5.0)), ("f", _f(MASK, 0.0)),
                    ("f", _f(Ellipsis, F34B))],
}
ALL = {**INPLACE, **OPERATORS}
CASES = [(n, k) for n in sorted(ALL) for k in range(len(ALL[n]))]


def _msg(ex: Exception) -> str:
    return str(ex).replace("torch::", "ember::").replace("torch.", "ember.")


def _public_inplace(cls) -> set:
    return {n for n in dir(cls) if n.endswith("_") and not n.startswith("_")}


def test_table_covers_every_inplace_method():
    both_have = _public_inplace(ember.Tensor) & _public_inplace(torch.Tensor)
    missing = sorted(both_have - set(INPLACE))
    assert not missing, f"in-place methods without an entry in INPLACE: {missing}"
    ember_only = sorted(_public_inplace(ember.Tensor) - _public_inplace(torch.Tensor))
    assert not ember_only, f"ember has in-place methods torch lacks: {ember_only}"
    ops = sorted(n for n in OPERATORS if not hasattr(ember.Tensor, n))
    assert not ops, f"ember lacks the in-place operators {ops}"


def _self_data(kind):
    return (F34 if kind == "f" else I34).copy()


def _targets(M, kind, where):
    """(target, base, sibling) for ``where`` in tensor / select_view / t_view."""
    a = _self_data(kind)
    if where == "tensor":
        t = T(M, a)
        return t, t, None
    if where == "select_view":
        base = T(M, np.stack([a * 0 + 1, a]))
        return base[1], base, base[0]
    base = T(M, np.ascontiguousarray(a.T))
    return base.t(), base, base[0]


def _outcome(M, name, k, where):
    kind, make = ALL[name][k]
    tgt, base, sib = _targets(M, kind, where)
    args, kw = make(M)
    tensors = [x for x in (tgt, base, sib) if x is not None]
    before = [x._version for x in tensors]
    try:
        r = getattr(tgt, name)(*args, **kw)
    except Exception as ex:  # noqa: BLE001
        return ("raised", type(ex).__name__, _msg(ex),
                [x._version - v for x, v in zip(tensors, before)])
    deltas = [x._version - v for x, v in zip(tensors, before)]
    same = r is tgt if name != "__setitem__" else r is None
    return ("ok", deltas, same, base, tgt)


def _same(name, e, t):
    """``assert_same``; for a sampler (``RANDOM``) only the shapes and dtypes."""
    if name not in RANDOM:
        assert_same(e, t)
        return
    if isinstance(t, (list, tuple)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _same(name, a, b)
        return
    if not isinstance(t, torch.Tensor):
        assert e == t, (e, t)
        return
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)


def _compare(name, re, rt):
    if rt[0] == "raised" or re[0] == "raised":
        assert re == rt, f"\nember: {re}\ntorch: {rt}"
        return
    _, de, se, be, te = re
    _, dt, st, bt, tt = rt
    assert (de, se) == (dt, st), (
        f"version deltas (target, base, sibling) / returns self: ember {de, se}, torch {dt, st}")
    _same(name, be, bt)
    _same(name, te, tt)


@pytest.mark.parametrize("where", ["tensor", "select_view", "t_view"])
@pytest.mark.parametrize("name,k", CASES)
def test_version_bump(name, k, where):
    if not hasattr(ember.Tensor, name):
        pytest.fail(f"ember.Tensor has no {name}")
    _compare(name, _outcome(ember, name, k, where), _outcome(torch, name, k, where))


def _pick(where, t):
    return t if where == "tensor" else t[-1] if where == "select_view" else t.t()


def _saved_outcome(M, name, k, where):
    """Modify, in place, a tensor autograd saved (or a view of it); then run backward."""
    kind, make = ALL[name][k]
    args, kw = make(M)
    if kind == "f":
        x = T(M, {"tensor": F34, "select_view": np.stack([F34B, F34]),
                  "t_view": np.ascontiguousarray(F34.T)}[where]).requires_grad_()
        a = x * 1
        y = a.sin()                        # saves a
        tgt = _pick(where, a)
        leaf = x
    else:
        src = T(M, F34C).requires_grad_()
        idx = T(M, {"tensor": I34, "select_view": np.stack([I34 * 0, I34]),
                    "t_view": np.ascontiguousarray(I34.T)}[where])
        tgt = _pick(where, idx)
        y = src.gather(1, idx[0] if where == "select_view" else tgt)   # saves the index
        leaf = src
    v0 = tgt._version
    try:
        getattr(tgt, name)(*args, **kw)
    except Exception as ex:  # noqa: BLE001
        return ["call raised", type(ex).__name__, _msg(ex)]
    dv = tgt._version - v0
    try:
        y.sum().backward()
    except Exception as ex:  # noqa: BLE001
        return ["backward raised", dv, type(ex).__name__, _msg(ex)]
    return ["ok", dv, leaf.grad]


@pytest.mark.parametrize("where", ["tensor", "select_view", "t_view"])
@pytest.mark.parametrize("name,k", CASES)
def test_saved_tensor_modified(name, k, where):
    if not hasattr(ember.Tensor, name):
        pytest.fail(f"ember.Tensor has no {name}")
    re, rt = _saved_outcome(ember, name, k, where), _saved_outcome(torch, name, k, where)
    if rt[0] == "ok" and re[0] == "ok":
        assert re[1] == rt[1], (re[1], rt[1])
        _same(name, re[2], rt[2])
        return
    assert re == rt, f"\nember: {re}\ntorch: {rt}"


# ---- .grad: accumulation bumps its version; it never aliases a tensor the user holds --------

def _grad_story(M):
    x = M.from_numpy(F34.copy()).requires_grad_()
    versions = []
    for k in range(3):
        (x * (k + 1)).sum().backward()
        versions.append(x.grad._version)
    g_before = x.grad
    (x * x).sum().backward()
    versions.append((x.grad._version, x.grad is g_before))
    return versions, x.grad


def test_grad_accumulation_bumps_grad_version():
    (ve, ge), (vt, gt) = _grad_story(ember), _grad_story(torch)
    assert ve == vt
    assert_same(ge, gt)


def _alias_story(M):
    out = []
    g = M.from_numpy(F34B.copy()) * 1.0         # a fresh tensor the user keeps
    y = M.from_numpy(F34.copy()).requires_grad_()
    y.backward(g)
    g.mul_(5)
    out.append(y.grad)
    z = M.from_numpy(F34.copy()).requires_grad_()
    g2 = M.from_numpy(F34C.copy()) * 1.0
    (z * 1).backward(g2)
    g2.add_(1)
    out.append(z.grad)
    w = M.from_numpy(F34.copy()).requires_grad_()
    w.grad = M.from_numpy(F34B.copy())
    held = w.grad
    (w * 2).sum().backward()
    out.append((w.grad is held, held._version))
    out.append(w.grad)
    return out


def test_grad_never_aliases_a_tensor_the_user_holds():
    oe, ot = _alias_story(ember), _alias_story(torch)
    assert oe[2] == ot[2]
    assert_same([oe[0], oe[1], oe[3]], [ot[0], ot[1], ot[3]])


# ---- saving only what a gradient needs: an operand no gradient needs may change later --------

SAVE_CASES = {
    "mul": lambda M, a, c: a * c,
    "mul_rev": lambda M, a, c: c * a,
    "div": lambda M, a, c: a / c,
    "div_rev": lambda M, a, c: c / a,
    "addcmul": lambda M, a, c: M.addcmul(c, a, c, value=0.5),
    "addcdiv": lambda M, a, c: M.addcdiv(c, c, a + 2, value=0.5),
    "mm": lambda M, a, c: a.mm(c.t()),
    "matmul_rev": lambda M, a, c: c.matmul(a.t()),
    "pow": lambda M, a, c: a ** c,
    "atan2": lambda M, a, c: M.atan2(a, c),
}


@pytest.mark.parametrize("which", ["a", "c"])
@pytest.mark.parametrize("name", list(SAVE_CASES))
def test_modifying_an_operand_after_use(name, which):
    """``y = f(a, c)``, ``a`` in the graph, ``c`` not; then one of them changes in place. The
    backward fails exactly when PyTorch's does (it saved that operand)."""
    res = []
    for M in (ember, torch):
        x = M.from_numpy(F34.copy()).requires_grad_()
        a = x * 1
        c = M.from_numpy(F34B.copy())
        y = SAVE_CASES[name](M, a, c)
        (a if which == "a" else c).add_(0.25)
        try:
            y.sum().backward()
        except RuntimeError as ex:
            res.append(("raised", _msg(ex)))
        else:
            res.append(("ok", x.grad))
    if res[1][0] == "raised" or res[0][0] == "raised":
        assert res[0] == res[1], f"\nember: {res[0]}\ntorch: {res[1]}"
    else:
        assert_same(res[0][1], res[1][1])


# ---- a view sees its base's in-place changes (history regenerated on next use) -------------

VIEW_USES = {
    "unary": lambda v: v.exp(),
    "scalar": lambda v: v * 3.0,
    "binary": lambda v: v * v,
    "reduction": lambda v: v.sum(),
    "matmul": lambda v: v @ v,
}


@pytest.mark.parametrize("how", ["base_inplace", "grad_enters_by_copy", "sibling_view"])
@pytest.mark.parametrize("use", list(VIEW_USES))
def test_view_used_after_base_changed(use, how):
    res = []
    for M in (ember, torch):
        x = M.from_numpy(np.stack([F34[:3, :3], F34B[:3, :3]])).requires_grad_()
        if how == "base_inplace":
            base = x * 1
            v = base[0]
            base.mul_(2)                       # v's history is now stale
        elif how == "grad_enters_by_copy":
            base = M.zeros(2, 3, 3, dtype=M.float64)
            v = base[1]                        # created without grad
            base.copy_(x)                      # the base now requires grad through CopySlices
        else:
            base = x * 1
            v = base[1]
            base[1].add_(x[0])                 # changed through another view
        y = VIEW_USES[use](v)
        res.append((y.requires_grad, None if y.grad_fn is None else _msg_name(y.grad_fn)))
        if y.requires_grad:
            y.sum().backward()
        res.append(x.grad)
    assert res[0] == res[2]
    assert_same(res[1], res[3])


def _msg_name(fn) -> str:
    return fn.name().replace("torch::", "ember::")


# ---- backward through the in-place op itself ------------------------------------------------

def _through(M, name, k, where):
    """An in-place op on a non-leaf (or a view of one), then backward through it; returns what
    to compare, and the node names separately."""
    kind, make = ALL[name][k]
    if kind != "f":
        return None, None
    args, kw = make(M)
    x = T(M, {"tensor": F34, "select_view": np.stack([F34B, F34]),
              "t_view": np.ascontiguousarray(F34.T)}[where]).requires_grad_()
    a = x * 1.5
    tgt = _pick(where, a)
    try:
        getattr(tgt, name)(*args, **kw)
    except Exception as ex:  # noqa: BLE001
        return ["call raised", type(ex).__name__, _msg(ex)], None
    names = [_msg_name(t.grad_fn) if t.grad_fn is not None else None for t in (a, tgt)]
    w = M.from_numpy(np.linspace(-1, 1, a.numel()).reshape(tuple(a.shape)))
    try:
        (a * w).sum().backward()
    except Exception as ex:  # noqa: BLE001
        return ["backward raised", type(ex).__name__, _msg(ex)], names
    return ["ok", a.requires_grad, a, x.grad], names


@pytest.mark.parametrize("where", ["tensor", "select_view", "t_view"])
@pytest.mark.parametrize("name,k", CASES)
def test_backward_through_inplace_op(name, k, where):
    """Values and gradients after an in-place op recorded in the graph (saved outputs keep
    their post-write version; CopySlices for views)."""
    (re, _), (rt, _) = _through(ember, name, k, where), _through(torch, name, k, where)
    if rt is None:
        return
    if rt[0] != "ok" or re[0] != "ok":
        assert re == rt, f"\nember: {re}\ntorch: {rt}"
        return
    assert re[1] == rt[1]
    _same(name, re[2:], rt[2:])


@pytest.mark.parametrize("where", ["tensor", "select_view"])
@pytest.mark.parametrize("name,k", CASES)
def test_inplace_op_grad_fn_names(name, k, where):
    (_, ne), (_, nt) = _through(ember, name, k, where), _through(torch, name, k, where)
    assert ne == nt
