"""Output memory layout against PyTorch: ``stride()`` and ``is_contiguous()`` (also for
channels_last) after every op family, on inputs of many layouts (issue 7 item 3)."""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import torch

import ember

F_T, F_E = torch.nn.functional, ember.nn.functional
BASE = (np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5) % 11) / 7.0 - 0.6


def _layouts(L):
    """name -> a function making that input layout in library ``L``."""
    def t(a):
        return L.tensor(np.ascontiguousarray(a))
    return {
        "contig": lambda: t(BASE),
        "t2": lambda: t(BASE.reshape(6, 20)).t(),
        "perm": lambda: t(BASE).permute(0, 2, 3, 1),
        "cl": lambda: t(BASE).contiguous(memory_format=L.channels_last),
        "step": lambda: t(BASE)[:, ::2, :, 1::2],
        "expand": lambda: t(BASE[0, 0, 0]).expand(3, 4, 5),
        "unit": lambda: t(BASE[:1, :, :1]).permute(3, 1, 2, 0),
        "unit_cl": lambda: t(BASE[:, :, :1]).contiguous(memory_format=L.channels_last),
        "t3": lambda: t(BASE[0]).transpose(0, 2),
        "empty": lambda: t(BASE[:, :0]),
    }


LAYOUTS = list(_layouts(torch))


def _sig(x):
    if isinstance(x, (tuple, list)):
        return tuple(_sig(y) for y in x)
    if not hasattr(x, "stride"):
        return x
    cl = x.dim() == 4 and x.is_contiguous(memory_format=x.__class__ is torch.Tensor and
                                          torch.channels_last or ember.channels_last)
    return tuple(x.shape), x.stride(), x.is_contiguous(), cl


def _run(f, L, layout):
    x = _layouts(L)[layout]()
    try:
        return _sig(f(L, x))
    except Exception as e:   # noqa: BLE001 - both libraries must refuse alike
        return type(e).__name__


def _d4(f):
    """Only for 4-D inputs (N, C, H, W)."""
    return lambda L, x: f(L, x) if x.dim() == 4 else None


OPS = {
    # pointwise, with broadcasting and scalars
    "neg": lambda L, x: -x,
    "exp": lambda L, x: x.exp(),
    "add_self": lambda L, x: x + x,
    "add_scalar": lambda L, x: x + 1,
    "mul_contig": lambda L, x: x * x.contiguous(),
    "mul_bcast_row": lambda L, x: x * x.sum(0, keepdim=True),
    "sub_bcast_last": lambda L, x: x - x[..., :1],
    "gt": lambda L, x: x > 0,
    "pow": lambda L, x: x ** 2,
    "to64": lambda L, x: x.to(L.float64),
    "clamp": lambda L, x: x.clamp(0, 1),
    "addcmul": lambda L, x: L.addcmul(x, x, x),
    "where": lambda L, x: L.where(x > 0, x, 0.0),
    "masked_fill": lambda L, x: x.masked_fill(x > 0, 1.0),
    # reductions
    "sum_all": lambda L, x: x.sum(),
    "sum0": lambda L, x: x.sum(0),
    "sum_keep": lambda L, x: x.sum(-1, keepdim=True),
    "mean_keep0": lambda L, x: x.mean(0, keepdim=True),
    "amax_keep": lambda L, x: x.amax(1, keepdim=True),
    "max_dim": lambda L, x: tuple(x.max(0)),
    "var": lambda L, x: x.var(0),
    "logsumexp": lambda L, x: x.logsumexp(-1, keepdim=True),
    # scans, softmax family
    "cumsum": lambda L, x: x.cumsum(0),
    "cumprod": lambda L, x: x.cumprod(-1),
    "cummax": lambda L, x: tuple(x.cummax(0)),
    "logcumsumexp": lambda L, x: x.logcumsumexp(0),
    "softmax": lambda L, x: x.softmax(0),
    "log_softmax": lambda L, x: x.log_softmax(-1),
    # indexing
    "basic": lambda L, x: x[1:, ..., ::2],
    "adv0": lambda L, x: x[[0, 1]],
    "adv1": lambda L, x: x[:, [0, 1]],
    "bool": lambda L, x: x[x > 0],
    "index_select": lambda L, x: x.index_select(0, L.tensor([0, 1])),
    "gather": lambda L, x: x.gather(0, L.zeros(x.shape, dtype=L.int64)),
    "setitem": lambda L, x: _setitem(x),
    # joining
    "cat0": lambda L, x: L.cat([x, x]),
    "cat1": lambda L, x: L.cat([x, x], 1),
    "cat_mixed": lambda L, x: L.cat([x, x.contiguous()]),
    "stack0": lambda L, x: L.stack([x, x]),
    "stack1": lambda L, x: L.stack([x, x], 1),
    "stack_last": lambda L, x: L.stack([x, x], -1),
    "flip": lambda L, x: x.flip(0),
    "roll": lambda L, x: x.roll(1, 0),
    "tril": lambda L, x: x.tril(),
    "repeat": lambda L, x: x.repeat(*([1] * x.dim())),
    # copies, conversions, factories
    "clone": lambda L, x: x.clone(),
    "clone_contig": lambda L, x: x.clone(memory_format=L.contiguous_format),
    "clone_cl": lambda L, x: x.clone(memory_format=L.channels_last),
    "contiguous": lambda L, x: x.contiguous(),
    "contiguous_cl": lambda L, x: x.contiguous(memory_format=L.channels_last),
    "to_cl": lambda L, x: x.to(memory_format=L.channels_last),
    "to_contig_alias": lambda L, x: x.to(memory_format=L.contiguous_format) is x,
    "to64_cl": lambda L, x: x.to(L.float64, memory_format=L.channels_last),
    "empty_like": lambda L, x: L.empty_like(x),
    "zeros_like": lambda L, x: L.zeros_like(x),
    "ones_like_cl": lambda L, x: L.ones_like(x, memory_format=L.channels_last),
    "full_like_contig": lambda L, x: L.full_like(x, 2.0, memory_format=L.contiguous_format),
    "randn_like": lambda L, x: L.randn_like(x),
    "rand_like_cl": lambda L, x: L.rand_like(x, memory_format=L.channels_last),
    "new_empty_strided": lambda L, x: x.new_empty_strided((2, 3), (1, 2)),
    "empty_cl": lambda L, x: L.empty(tuple(x.shape), memory_format=L.channels_last),
    "is_cl": lambda L, x: x.is_contiguous(memory_format=L.channels_last),
    "is_cl3d": lambda L, x: x.is_contiguous(memory_format=L.channels_last_3d),
    "is_preserve": lambda L, x: x.is_contiguous(memory_format=L.preserve_format),
    # selection
    "sort": lambda L, x: tuple(x.sort(0)),
    "sort_last": lambda L, x: tuple(x.sort(-1)),
    "topk": lambda L, x: tuple(x.topk(1, 0)),
    # nn.functional
    "relu": lambda L, x: L.nn.functional.relu(x),
    "gelu": lambda L, x: L.nn.functional.gelu(x),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, x.shape[-1:]),
    "conv2d": _d4(lambda L, x: L.nn.functional.conv2d(
        x, L.ones(2, x.shape[1], 2, 2))),
    "max_pool2d": _d4(lambda L, x: L.nn.functional.max_pool2d(x, 2)),
    "avg_pool2d": _d4(lambda L, x: L.nn.functional.avg_pool2d(x, 2)),
    "batch_norm": _d4(lambda L, x: L.nn.functional.batch_norm(
        x, None, None, training=True)),
    "group_norm": _d4(lambda L, x: L.nn.functional.group_norm(x, 1)),
    "adaptive_avg_pool2d": _d4(lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 2)),
    "interpolate": _d4(lambda L, x: L.nn.functional.interpolate(x, scale_factor=2.0)),
    "pad": lambda L, x: L.nn.functional.pad(x, (1, 1)),
    "linear": lambda L, x: L.nn.functional.linear(x, L.ones(3, x.shape[-1])),
    "softplus": lambda L, x: L.nn.functional.softplus(x),
    "dropout0": lambda L, x: L.nn.functional.dropout(x, 0.0),
    # more reductions, selections and indexing
    "argmax_keep": lambda L, x: x.argmax(0, keepdim=True),
    "median_dim": lambda L, x: tuple(x.median(0)),
    "std_mean": lambda L, x: L.std_mean(x, 0),
    "prod": lambda L, x: x.prod(-1),
    "any_keep": lambda L, x: (x > 0).any(0, keepdim=True),
    "argsort": lambda L, x: x.argsort(-1, descending=True),
    "masked_select": lambda L, x: x.masked_select(x > 0),
    "take": lambda L, x: x.take(L.tensor([0, 2])),
    "diff": lambda L, x: x.diff(dim=0),
    "setitem_adv": lambda L, x: _set_adv(x),
    "setitem_bool": lambda L, x: _set_bool(x),
    # ternary with broadcasting
    "where_bcast": lambda L, x: L.where(x[:1] > 0, x, x[..., :1]),
    "clamp_t": lambda L, x: x.clamp(x[:1], x[:1] + 1),
    "addcdiv": lambda L, x: L.addcdiv(x, x[:1], x[..., :1] + 2),
    "lerp_t": lambda L, x: L.lerp(x, x.contiguous(), x),
    # scatters: a plain result (structured kernels), a clone of self, or self's exact strides
    "scatter": lambda L, x: x.scatter(0, L.zeros(x.shape, dtype=L.int64), x),
    "scatter_value": lambda L, x: x.scatter(0, L.zeros(x.shape, dtype=L.int64), 1.0),
    "scatter_add": lambda L, x: x.scatter_add(0, L.zeros(x.shape, dtype=L.int64), x),
    "index_add": lambda L, x: x.index_add(0, L.zeros(x.shape[0], dtype=L.int64), x),
    "index_copy": lambda L, x: x.index_copy(0, L.arange(x.shape[0]), x),
    "masked_scatter": lambda L, x: x.masked_scatter(x > 0, x),
    "index_fill": lambda L, x: x.index_fill(0, L.tensor([0]), 1.0),
    "index_put": lambda L, x: x.index_put((L.tensor([0]),), L.tensor(1.0)),
    "put": lambda L, x: x.put(L.tensor([0] if x.numel() else [], dtype=L.int64),
                              L.ones(1 if x.numel() else 0)),
    "slice_scatter": lambda L, x: L.slice_scatter(x, x[:1], 0, 0, 1),
    "select_scatter": lambda L, x: L.select_scatter(x, x[0], 0, 0),
    "diagonal_scatter": lambda L, x: L.diagonal_scatter(x, x.diagonal()),
    "pad0": lambda L, x: L.nn.functional.pad(x, (0, 0)),
    "pad_crop": lambda L, x: L.nn.functional.pad(x, (-1, 0)),
    "complex": lambda L, x: L.complex(x, x.contiguous()),
    "polar": lambda L, x: L.polar(x.abs(), x),
    "view_as_real": lambda L, x: L.view_as_real(L.complex(x, x)),
    # matmul family
    "matmul": lambda L, x: x @ x.transpose(-1, -2),
    "mm_t": lambda L, x: x.reshape(-1, x.shape[-1]).t() @ x.reshape(-1, x.shape[-1])
    if x.dim() else None,
}


def _set_adv(x):
    y = x.clone()
    y[[0, 1]] = 2.0
    return y


def _set_bool(x):
    y = x.clone()
    y[y > 0] = 2.0
    return y


def _setitem(x):
    y = x.clone()
    y[..., 0] = 1.0
    return y


CASES = [(op, lay) for op in OPS for lay in LAYOUTS]
# what ember does not match yet (see the module docstring of ember._layout)
XFAIL = {
    # PyTorch refuses a 0-channel input ("Non-empty 4D data tensor expected"); ember resamples
    ("interpolate", "empty"),
    # conv2d of an input without channels: ember slices a computed result (a view with that
    # result's strides), PyTorch allocates a row-major empty one
    ("conv2d", "empty"),
}


@pytest.mark.parametrize("op,layout", CASES, ids=[f"{o}-{lay}" for o, lay in CASES])
def test_layout(op, layout):
    f = OPS[op]
    want = _run(f, torch, layout)
    got = _run(f, ember, layout)
    if (op, layout) in XFAIL and got != want:
        pytest.xfail("known difference")
    assert got == want


def test_memory_format_objects():
    for name in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"):
        assert repr(getattr(ember, name)) == repr(getattr(torch, name)) == "torch." + name
        assert isinstance(getattr(ember, name), ember.memory_format)
        assert pickle.loads(pickle.dumps(getattr(ember, name))) is getattr(ember, name)
    with pytest.raises(TypeError, match="must be torch.memory_format, not str"):
        ember.ones(2).contiguous(memory_format="channels_last")


@pytest.mark.parametrize("mk", [
    lambda L: L.ones(3).contiguous(memory_format=L.channels_last),
    lambda L: L.ones(3).clone(memory_format=L.channels_last),
    lambda L: L.empty(3, memory_format=L.channels_last),
    lambda L: L.ones(2, 3, 4, 5).contiguous(memory_format=L.channels_last_3d),
    lambda L: L.ones(2, 3, 4, 5).transpose(1, 2).contiguous(memory_format=L.preserve_format),
    lambda L: L.empty(2, 3, memory_format=L.preserve_format),
])
def test_format_errors(mk):
    with pytest.raises(RuntimeError) as et:
        mk(torch)
    with pytest.raises(RuntimeError) as ee:
        mk(ember)
    assert str(ee.value) == str(et.value)


@pytest.mark.parametrize("size,stride", [
    ((2, 3), (1, 2)), ((2, 3, 4), (12, 1, 3)), ((3, 4), (0, 1)), ((2, 2), (4, 1)),
    ((0, 3), (3, 1)), ((), ()), ((5,), (2,)),
])
def test_empty_strided(size, stride):
    for L in (torch, ember):
        t = L.empty_strided(size, stride)
        assert t.stride() == stride and tuple(t.shape) == size
        n = L.empty_strided(size, stride, dtype=L.float64).new_empty_strided(size, stride)
        assert n.stride() == stride and n.dtype == L.float64
    e = ember.empty_strided(size, stride)
    if e.numel():
        e.as_strided((1,), (1,), 0).fill_(3.0)
        assert e.reshape(-1)[0].item() == 3.0


def test_view_after_layout_ops():
    # the issue's examples: results laid out as PyTorch's can be viewed where its can
    for L in (torch, ember):
        a = L.ones(3, 4)
        assert tuple(L.cat([a.t(), a.t()]).view(-1).shape) == (24,)
        assert tuple(a.t()[:, [0, 1]].reshape(4, 2).view(-1).shape) == (8,)
        assert tuple(a.t().softmax(0).view(-1).shape) == (12,)
        assert tuple(a.t().cumsum(0).view(-1).shape) == (12,)
    x = ember.ones(2, 3, 4, 5).contiguous(memory_format=ember.channels_last)
    assert x.stride() == (60, 1, 15, 3)
    assert x.is_contiguous(memory_format=ember.channels_last) and not x.is_contiguous()
    assert (x + 1).is_contiguous(memory_format=ember.channels_last)


def test_module_to_memory_format():
    for L in (torch, ember):
        m = L.nn.Conv2d(3, 4, 3)
        assert m.to(memory_format=L.channels_last) is m
        assert m.weight.stride() == (27, 1, 9, 3) and m.bias.stride() == (1,)
        assert isinstance(m.weight, L.nn.Parameter)
        y = m(L.ones(2, 3, 8, 8).to(memory_format=L.channels_last))
        assert y.stride() == (144, 1, 24, 4)
        m.to(L.float64, memory_format=L.contiguous_format)
        assert m.weight.stride() == (27, 9, 3, 1) and m.weight.dtype == L.float64


def test_channels_last_values_and_grad():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    res = []
    for L in (torch, ember):
        t = L.tensor(x, requires_grad=True)
        y = t.contiguous(memory_format=L.channels_last)
        z = (y.clone() * L.arange(5.0)).sum()
        z.backward()
        res.append((y.detach().numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])


# ---- TensorIterator's output layout, generated: elementwise ops of one, two and three
# operands on inputs with size-1 dims, broadcasting, permutations, expands, channels_last(_3d)

def _inputs(L):
    def t(shape):
        return L.tensor(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) % 7 - 3)
    return {
        "c": lambda: t((2, 3, 4)),
        "unit_perm": lambda: t((1, 3, 1, 5)).permute(3, 1, 2, 0),
        "unit_perm2": lambda: t((3, 1, 4)).permute(2, 1, 0),
        "unit_t": lambda: t((1, 3)).t(),
        "unit_mid_t": lambda: t((4, 1, 3)).transpose(0, 2),
        "perm": lambda: t((2, 3, 4)).permute(2, 0, 1),
        "step": lambda: t((2, 6, 4))[:, ::2],
        "step_unit": lambda: t((2, 6, 1))[:, ::2],
        "expand": lambda: t((3, 1)).expand(3, 4),
        "expand_lead": lambda: t((1, 4)).expand(3, 4),
        "expand_new": lambda: t((4,)).expand(2, 3, 4),
        "cl": lambda: t((2, 3, 4, 5)).contiguous(memory_format=L.channels_last),
        "cl_unit": lambda: t((2, 3, 1, 5)).contiguous(memory_format=L.channels_last),
        "cl_c1": lambda: t((2, 1, 4, 5)).contiguous(memory_format=L.channels_last),
        "cl_hw1": lambda: t((2, 3, 1, 1)).contiguous(memory_format=L.channels_last),
        "cl3d": lambda: t((2, 3, 2, 4, 5)).contiguous(memory_format=L.channels_last_3d),
        "cl3d_unit": lambda: t((1, 3, 1, 2, 1)).contiguous(memory_format=L.channels_last_3d),
        "s0": lambda: t(()),
        "v1s": lambda: t((10,))[::2],
        "e0": lambda: L.zeros(2, 0, 4),
        "e0_perm": lambda: L.zeros(2, 0, 4).permute(2, 0, 1),
        "e0_t": lambda: L.zeros(0, 3).t(),
        "e0_cl": lambda: L.zeros(2, 3, 0, 5).contiguous(memory_format=L.channels_last),
        "e0_step": lambda: L.zeros(2, 0, 6)[..., ::2],
        "e0_unit": lambda: L.zeros(1, 0, 1),
    }


INPUTS = list(_inputs(torch))
F = "nn.functional"
UNARY = {
    "neg": lambda L, x: -x, "exp": lambda L, x: x.exp(), "abs": lambda L, x: x.abs(),
    "sigmoid": lambda L, x: x.sigmoid(), "relu": lambda L, x: L.relu(x),
    "to64": lambda L, x: x.double(), "int": lambda L, x: x.int(), "bool": lambda L, x: x.bool(),
    "pow2": lambda L, x: x ** 2, "pow2f": lambda L, x: x ** 2.0,
    "clamp": lambda L, x: x.clamp(0, 1), "clamp_min": lambda L, x: x.clamp_min(0.5),
    "gt0": lambda L, x: x > 0, "lnot": lambda L, x: L.logical_not(x),
    "add1": lambda L, x: x + 1, "add1f": lambda L, x: x + 1.5, "rsub": lambda L, x: 2 - x,
    "mul_s0": lambda L, x: x * L.tensor(2.0), "sign": lambda L, x: x.sign(),
    "gelu": lambda L, x: L.nn.functional.gelu(x), "silu": lambda L, x: L.nn.functional.silu(x),
    "nan_to_num": lambda L, x: x.nan_to_num(), "floor": lambda L, x: x.floor(),
    "softplus": lambda L, x: L.nn.functional.softplus(x), "isnan": lambda L, x: x.isnan(),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x), "square": lambda L, x: x.square(),
    "div2": lambda L, x: x / 2, "remainder": lambda L, x: x % 2, "bitand": lambda L, x: x.int() & 1,
}
BINARY = {
    "add": lambda L, x, y: x + y, "mul": lambda L, x, y: x * y, "div": lambda L, x, y: x / y,
    "maximum": lambda L, x, y: L.maximum(x, y), "lt": lambda L, x, y: x < y,
    "atan2": lambda L, x, y: L.atan2(x, y), "pow": lambda L, x, y: x ** y,
    "add_int": lambda L, x, y: x + y.int(), "clamp_max_t": lambda L, x, y: x.clamp_max(y),
}
TERNARY = {
    "addcmul": lambda L, x, y, z: L.addcmul(x, y, z),
    "addcdiv": lambda L, x, y, z: L.addcdiv(x, y, z + 10),
    "where": lambda L, x, y, z: L.where(x > 0, y, z), "lerp": lambda L, x, y, z: L.lerp(x, y, z),
    "clamp_t": lambda L, x, y, z: L.clamp(x, y, z),
}
PARTNERS = {   # a second operand made from the input: same layout, row-major, broadcast, 0-dim
    "self": lambda L, x: x, "contig": lambda L, x: x.contiguous(),
    "row": lambda L, x: x.sum(0, keepdim=True) if x.dim() else x,
    "last1": lambda L, x: x[..., :1] if x.dim() else x,
    "s0": lambda L, x: L.tensor(1.5),
}


def _sig2(x):
    L = torch if isinstance(x, torch.Tensor) else ember
    return (tuple(x.shape), x.stride(), x.is_contiguous(),
            x.dim() == 4 and x.is_contiguous(memory_format=L.channels_last),
            x.dim() == 5 and x.is_contiguous(memory_format=L.channels_last_3d),
            str(x.dtype).split(".")[-1])


def _mismatches(make):
    """The (case, torch, ember) triples where ``make(L, inputs)`` lays its result out
    differently (or where one library raises and the other does not)."""
    bad = []
    for name in INPUTS:
        for case, f in make(name):
            res = []
            for L in (torch, ember):
                try:
                    res.append(_sig2(f(L, _inputs(L)[name]())))
                except Exception as e:   # noqa: BLE001 - both must refuse alike
                    res.append(type(e).__name__)
            if res[0] != res[1]:
                bad.append((name, case, *res))
    return bad


@pytest.mark.parametrize("op", list(UNARY))
def test_iter_unary(op):
    assert _mismatches(lambda n: [(op, UNARY[op])]) == []


@pytest.mark.parametrize("op", list(BINARY))
def test_iter_binary(op):
    f = BINARY[op]

    def make(n):
        for p, g in PARTNERS.items():
            yield (p, "x op y"), lambda L, x, g=g: f(L, x, g(L, x))
            yield (p, "y op x"), lambda L, x, g=g: f(L, g(L, x), x)
    assert _mismatches(make) == []


@pytest.mark.parametrize("op", list(TERNARY))
def test_iter_ternary(op):
    f = TERNARY[op]

    def make(n):
        for p, g in PARTNERS.items():
            for pos in range(3):
                def h(L, x, g=g, pos=pos):
                    args = [x, x, x]
                    args[pos] = g(L, x)
                    return f(L, *args)
                yield (p, pos), h
    assert _mismatches(make) == []


# interpolate: every mode keeps a channels_last(_3d) input's memory format, as PyTorch's
# upsample kernels allocate in the input's suggested format (adaptive_avg_pool3d does not)
INTERP = [("nearest", 3, {}), ("nearest", 4, {}), ("nearest", 5, {}), ("nearest-exact", 4, {}),
          ("nearest-exact", 5, {}), ("linear", 3, {}), ("bilinear", 4, {}),
          ("bilinear", 4, {"align_corners": True}), ("bicubic", 4, {}), ("trilinear", 5, {}),
          ("area", 3, {}), ("area", 4, {}), ("area", 5, {}),
          ("bilinear", 4, {"antialias": True}), ("bicubic", 4, {"antialias": True})]


@pytest.mark.parametrize("mode,nd,kw", INTERP, ids=[f"{m}{n}{''.join(k)}" for m, n, k in INTERP])
def test_interpolate_layout(mode, nd, kw):
    shapes = {3: [(2, 3, 5), (1, 1, 4)], 4: [(2, 3, 4, 5), (2, 3, 1, 5), (2, 1, 4, 5)],
              5: [(2, 3, 2, 4, 5), (1, 3, 1, 4, 5)]}[nd]
    fmts = {3: ["c", "perm"], 4: ["c", "cl", "perm"], 5: ["c", "cl3d", "perm"]}[nd]
    for shape in shapes:
        base = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 10
        for fmt in fmts:
            for size in ("x2", "half", "one"):
                res = []
                for L in (torch, ember):
                    x = L.tensor(base)
                    if fmt == "cl":
                        x = x.contiguous(memory_format=L.channels_last)
                    elif fmt == "cl3d":
                        x = x.contiguous(memory_format=L.channels_last_3d)
                    elif fmt == "perm":
                        x = x.transpose(-1, -2)
                    a = {"x2": {"scale_factor": 2.0},
                         "half": {"size": tuple(max(1, s // 2) for s in x.shape[2:])},
                         "one": {"size": (1,) * (nd - 2)}}[size]
                    y = L.nn.functional.interpolate(x, mode=mode, **a, **kw)
                    res.append((tuple(y.shape), y.stride()))
                assert res[0] == res[1], (shape, fmt, size)


# ---- empty tensors (issue 7): sources of many layouts, every op family ---------------------

def _empty_sources(L):
    """name -> a function making an empty tensor of that layout in library ``L``."""
    z = L.zeros
    return {
        "c": lambda: z(2, 0, 3),
        "p": lambda: z(2, 0, 3).permute(2, 0, 1),
        "q": lambda: z(0, 2, 3).permute(1, 2, 0),
        "r": lambda: z(2, 3, 0).permute(2, 0, 1),
        "t": lambda: z(4, 0).t(),
        "cl": lambda: z(2, 3, 0, 4).contiguous(memory_format=L.channels_last),
        "step": lambda: z(4, 3, 5)[:, :0, ::2],
        # PyTorch keeps NumPy's zero strides of a fresh empty array (from_numpy), and a zero
        # stride asked for by empty_strided
        "np": lambda: L.from_numpy(np.empty((2, 0, 3), np.float32)),
        "np1": lambda: L.from_numpy(np.empty(0, np.float32)),
        "zs": lambda: L.empty_strided((2, 0, 3), (0, 0, 0)),
        "tnp": lambda: L.tensor(np.empty((1, 0, 1), np.float32)),
    }


def _grad_of(L, x):
    x = x.requires_grad_()
    (x * 2).sum().backward()
    return x.grad


_EMPTY_OPS = {
    "self": lambda L, x: x,
    "transpose": lambda L, x: x.transpose(0, -1),
    "select": lambda L, x: x[0] if x.shape[0] else x,
    "slice_last": lambda L, x: x[..., 1:],
    "view_same": lambda L, x: x.view(x.shape),
    "reshape": lambda L, x: x.reshape(-1),
    "flatten1": lambda L, x: x.flatten(1) if x.dim() > 1 else x,
    "unsqueeze0": lambda L, x: x.unsqueeze(0),
    "unsqueeze_last": lambda L, x: x.unsqueeze(-1),
    "expand": lambda L, x: x.expand(4, *x.shape),
    "squeeze": lambda L, x: x.squeeze(),
    "narrow": lambda L, x: x.narrow(-1, 0, 0),
    "movedim": lambda L, x: x.movedim(0, -1),
    "detach": lambda L, x: x.detach(),
    "add1": lambda L, x: x + 1,
    "add_contig": lambda L, x: x + x.contiguous(),
    "exp": lambda L, x: x.exp(),
    "neg_": lambda L, x: x.neg_(),
    "where": lambda L, x: L.where(x > 0, x, 0.0),
    "lt": lambda L, x: x < 1,
    "bcast_add": lambda L, x: x + L.zeros(x.shape[-1:]),
    "clone": lambda L, x: x.clone(),
    "clone_contig": lambda L, x: x.clone(memory_format=L.contiguous_format),
    "contiguous": lambda L, x: x.contiguous(),
    "to64": lambda L, x: x.double(),
    "zeros_like": lambda L, x: L.zeros_like(x),
    "empty_like": lambda L, x: L.empty_like(x),
    "full_like": lambda L, x: L.full_like(x, 2.0),
    "rand_like": lambda L, x: L.rand_like(x),
    "new_empty": lambda L, x: x.new_empty(x.shape),
    "tensor_of": lambda L, x: L.tensor(x),
    "deepcopy": lambda L, x: __import__("copy").deepcopy(x),
    "sum0": lambda L, x: x.sum(0),
    "sum_last_keep": lambda L, x: x.sum(-1, keepdim=True),
    "mean0": lambda L, x: x.mean(0),
    "cumsum0": lambda L, x: x.cumsum(0),
    "softmax": lambda L, x: x.softmax(-1),
    "sort": lambda L, x: x.sort(-1)[0],
    "flip": lambda L, x: x.flip(0),
    "roll": lambda L, x: x.roll(1, 0),
    "cat0": lambda L, x: L.cat([x, x]),
    "cat_last": lambda L, x: L.cat([x, x], -1),
    "stack": lambda L, x: L.stack([x, x]),
    "index_empty": lambda L, x: x[L.tensor([], dtype=L.long)],
    "index_last": lambda L, x: x[..., L.tensor([], dtype=L.long)],
    "index_col": lambda L, x: x[:, L.zeros(0, dtype=L.long)] if x.dim() > 1 else x,
    "masked": lambda L, x: x[x > 0],
    "nonzero": lambda L, x: x.nonzero(),
    "mm": lambda L, x: x @ L.zeros(x.shape[-1], 2),
    "mm_t": lambda L, x: x.transpose(-1, -2) @ L.zeros(x.shape[-2], 2) if x.dim() > 1 else x,
    "grad": _grad_of,
    # autograd.grad hands back the backward's own result: sum's is an expand (zero strides)
    "grad_of_sum": lambda L, x: L.autograd.grad(x.requires_grad_().sum(), x)[0],
    "grad_of_sum_dim": lambda L, x: L.autograd.grad(x.requires_grad_().sum(0).sum(), x)[0],
    "add_out_resized": lambda L, x: L.add(x, 1, out=L.empty(0)),
    "exp_out_resized": lambda L, x: L.exp(x, out=L.empty(5)),
    "pad": lambda L, x: L.nn.functional.pad(x, (1, 1)),
    # views of results (NumPy gives a fresh empty result zero strides, which its views keep)
    "add1_transpose": lambda L, x: (x + 1).transpose(0, -1),
    "exp_expand": lambda L, x: x.exp().expand(2, *x.shape),
    "sum0_permute": lambda L, x: x.sum(0, keepdim=True).permute(*range(x.dim())[::-1]),
    "cat_select": lambda L, x: L.cat([x, x])[0] if x.shape[0] else x,
    "mul_slice_step": lambda L, x: (x * 2)[..., ::2],
    "mm_transpose": lambda L, x: (x @ L.zeros(x.shape[-1], 2)).transpose(-1, -2) if x.dim() > 1
    else x,
    "linear": lambda L, x: L.nn.functional.linear(x, L.zeros(2, x.shape[-1]), L.ones(2)),
}
_EMPTY_CASES = [(s, o) for s in _empty_sources(torch) for o in _EMPTY_OPS]


def _empty_sig(L, src, op):
    try:
        r = _EMPTY_OPS[op](L, _empty_sources(L)[src]())
    except Exception as e:   # noqa: BLE001 - both libraries must refuse alike
        return type(e).__name__
    return tuple(r.shape), r.stride(), r.storage_offset(), r.is_contiguous()


@pytest.mark.parametrize("src,op", _EMPTY_CASES, ids=[f"{s}-{o}" for s, o in _EMPTY_CASES])
def test_empty_result_strides(src, op):
    assert _empty_sig(ember, src, op) == _empty_sig(torch, src, op)


@pytest.mark.parametrize("make", [
    lambda: np.broadcast_to(np.arange(3.0), (2, 3)),
    lambda: np.broadcast_to(np.arange(3.0)[:, None], (3, 4)),
    lambda: np.broadcast_to(np.array(1.0), (2, 3)),
    lambda: np.arange(6.0).reshape(2, 3).T,
    lambda: np.arange(12.0).reshape(3, 4)[:, ::2],
    lambda: np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    lambda: np.ndarray((3, 1), np.float64, np.arange(3.0), 0, (8, 80)),
    lambda: np.empty((0, 3)),
    lambda: np.empty((2, 0, 3)).transpose(2, 0, 1),
    lambda: np.empty(0),
    lambda: np.arange(12.0).reshape(3, 4)[:0],
    lambda: np.broadcast_to(np.arange(3.0), (0, 3)),
    lambda: np.array(3.0),
], ids=["bcast_row", "bcast_col", "bcast_scalar", "T", "step", "fortran", "unit_stride",
        "empty", "empty_perm", "empty1d", "empty_slice", "bcast_empty", "scalar"])
@pytest.mark.parametrize("fn", ["tensor", "tensor_f32", "as_tensor", "from_numpy", "asarray"])
def test_from_numpy_strides(make, fn):
    """``torch.tensor`` copies an array as ``clone`` does (from_numpy's strides, zeros
    included, under preserve_format); ``from_numpy`` / ``as_tensor`` keep NumPy's strides."""
    def sig(L):
        a = make()
        f = (lambda x: L.tensor(x, dtype=L.float32)) if fn == "tensor_f32" else getattr(L, fn)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # (PyTorch: a read-only array)
            t = f(a)
        return tuple(t.shape), t.stride(), t.is_contiguous(), t.tolist()
    assert sig(ember) == sig(torch)


@pytest.mark.parametrize("key", [
    "1:1", "1:1:2", "4:", "5:", ":0:3", "2:2:2", "..., 1:1:2", ":, 5:7:2", "1:1, 1:", "4:, 2:",
])
def test_empty_slices(key):
    """An empty slice keeps PyTorch's stride (times the step) and storage offset (the clamped
    start's); NumPy drops both; data_ptr() of any empty tensor is 0, as PyTorch's."""
    def sig(L):
        x = L.arange(12.0).reshape(4, 3)
        y = eval(f"x[{key}]")   # noqa: S307 - a fixed table of slice keys
        n = x.narrow(0, 2, 0)
        ptr = y.data_ptr() if not y.numel() else None
        return (tuple(y.shape), y.stride(), y.storage_offset(), ptr, n.stride(),
                n.storage_offset(), y.unsqueeze(0).stride(), y.t().stride() if y.dim() == 2
                else None)
    assert sig(ember) == sig(torch)


@pytest.mark.parametrize("make", [
    lambda L: L.zeros(4, 3), lambda L: L.ones(4, 3), lambda L: L.ones(2, 2, 2),
    lambda L: L.zeros(5), lambda L: L.ones(5), lambda L: L.tensor(1.0), lambda L: L.tensor(0.0),
    lambda L: L.zeros(0, 3), lambda L: L.tensor([[0, 1], [1, 0]]),
])
def test_nonzero_strides(make):
    """``nonzero`` fills a (ndim, n) row-major buffer and returns its transpose: strides
    (1, n), also for n = 0 or one dim."""
    def sig(L):
        x = make(L)
        return [(tuple(r.shape), r.stride(), r.tolist()) for r in (x.nonzero(), x.argwhere())]
    assert sig(ember) == sig(torch)
