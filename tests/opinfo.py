"""PyTorch's OpInfo sample inputs, run through ember and PyTorch and compared.

``op_db`` (``torch.testing._internal.common_methods_invocations``) holds, for every public
operator, sample inputs that PyTorch's own test suite uses. ``check_opinfo(name, dtype)`` runs
every sample of the entries called ``name`` through both libraries and compares the outputs
(all of them), the reverse-mode gradients of every differentiable output with respect to every
input that requires grad, and the forward-mode tangents.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect

import numpy as np
import torch

import ember
from helpers import _same_grad_fn, assert_same


@functools.cache
def _op_db():
    from torch.testing._internal.common_methods_invocations import op_db
    return op_db


def opinfos(name: str) -> list:
    """The OpInfo entries named ``name`` (one per variant_test_name)."""
    return [o for o in _op_db() if o.name == name]


def to_ember(x, leaves: dict):
    """A torch value converted to ember: tensors copied (a leaf that requires grad stays one;
    ``leaves`` maps id(torch tensor) -> ember tensor), dtypes mapped, containers recursed."""
    if isinstance(x, torch.Tensor):
        if id(x) in leaves:
            return leaves[id(x)]
        d = x.detach()
        a = (d.float() if d.dtype == torch.bfloat16 else d.cfloat() if d.dtype == torch.chalf
             else d).numpy(force=True).copy()
        e = ember.from_numpy(a)
        if d.dtype == torch.bfloat16:
            e = e.bfloat16()
        elif d.dtype == torch.chalf:   # (exact through complex64)
            e = e.chalf()
        if x.requires_grad:
            e.requires_grad_()
        leaves[id(x)] = e
        return e
    if isinstance(x, (torch.dtype, torch.memory_format)):
        return getattr(ember, str(x).split(".")[-1])
    if isinstance(x, tuple):
        return tuple(to_ember(i, leaves) for i in x)
    if isinstance(x, list):
        return [to_ember(i, leaves) for i in x]
    if isinstance(x, dict):
        return {k: to_ember(v, leaves) for k, v in x.items()}
    if isinstance(x, torch.nn.Module) and not list(x.parameters()) \
            and hasattr(ember.nn, type(x).__name__):
        # a parameterless module given as an argument (a distance_function): ember's own
        cls = getattr(ember.nn, type(x).__name__)
        params = inspect.signature(cls).parameters
        return cls(**{k: getattr(x, k) for k in params if hasattr(x, k)})
    if dataclasses.is_dataclass(x) and hasattr(ember.nn, type(x).__name__):
        # an options object (LinearCrossEntropyOptions): ember's own, same fields
        return getattr(ember.nn, type(x).__name__)(
            **{f.name: to_ember(getattr(x, f.name), leaves) for f in dataclasses.fields(x)})
    return x


def to_ember_strided(x, memo: dict):
    """``x`` converted to ember keeping PyTorch's memory sharing: tensors over one storage
    become ember views (``as_strided``) of one ember copy of that storage, so that out= and
    in-place overlap checks see what PyTorch sees (conj/neg views and meta tensors are copied
    alone). Copies are read from clones: ``Tensor.numpy()`` would make PyTorch's storage
    non-resizable."""
    if isinstance(x, torch.Tensor):
        if id(x) in memo:
            return memo[id(x)]
        if x.is_meta:
            e = ember.empty_strided(tuple(x.shape), x.stride(), device="meta",
                                    dtype=to_ember(x.dtype, {}))
        elif x.is_conj() or x.is_neg() or x.layout != torch.strided:
            e = to_ember(x.clone().requires_grad_(x.requires_grad), {})
        else:
            key = (x.untyped_storage()._cdata, x.dtype)
            if key not in memo:
                flat = torch.empty(0, dtype=x.dtype).set_(x.untyped_storage())
                memo[key] = to_ember(flat.detach().clone(), {})
            e = memo[key].as_strided(tuple(x.shape), x.stride(), x.storage_offset())
            if x.requires_grad:
                e.requires_grad_()
        memo[id(x)] = e
        return e
    if isinstance(x, tuple):
        return tuple(to_ember_strided(i, memo) for i in x)
    if isinstance(x, list):
        return [to_ember_strided(i, memo) for i in x]
    if isinstance(x, dict):
        return {k: to_ember_strided(v, memo) for k, v in x.items()}
    return to_ember(x, {})


def _torch_leaves(sample) -> list:
    out = []

    def walk(x):
        if isinstance(x, torch.Tensor):
            if x.requires_grad and x.is_leaf and all(x is not o for o in out):
                out.append(x)
        elif isinstance(x, (tuple, list)):
            for i in x:
                walk(i)
        elif isinstance(x, dict):
            for i in x.values():
                walk(i)
    walk(sample.input)
    walk(sample.args)
    walk(sample.kwargs)
    return out


def _outputs(r) -> list:
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _diff_outputs(outs) -> list:
    return [i for i, o in enumerate(outs) if isinstance(o, torch.Tensor) and o.requires_grad]


_CALLS = {
    # OpInfo entries whose ``op`` takes its arguments in another order than the function
    "where": lambda x, condition, other: ember.where(condition, x, other),
    "polygamma": lambda x, n, **kw: ember.polygamma(n, x, **kw),
    "einsum": lambda tensors, equation: ember.einsum(equation, tensors),
    "nn.functional.embedding": lambda weight, idx, **k: ember.nn.functional.embedding(
        idx, weight, **k),
    "torch.ops.aten._safe_softmax.default": lambda x, *a, **k: ember._safe_softmax(x, *a, **k),
}

# entries told apart by their variant: (name, variant_test_name) -> ember callable
VARIANT_CALLS = {
    ("normal", "in_place"): lambda x, *a, **k: x.normal_(*a, **k),
}


def ember_fn(name: str):
    """The ember function for an OpInfo name (``nn.functional.conv2d`` -> F.conv2d); entries
    named after Tensor methods (``float``, ``double``...) give the method."""
    if name in _CALLS:
        return _CALLS[name]
    if "." not in name and not hasattr(ember, name) and not hasattr(ember.Tensor, name) \
            and hasattr(ember.Tensor, name + "_"):
        # a sampler entry whose OpInfo op fills its input in place (uniform -> Tensor.uniform_)
        return getattr(ember.Tensor, name + "_")
    if name.endswith("_") and not hasattr(ember, name) and hasattr(ember.Tensor, name):
        # an in-place entry whose OpInfo op clones first (zero_, resize_)
        return lambda x, *a, **k: getattr(x.clone(), name)(*a, **k)
    if "." not in name and not hasattr(ember, name) and not name.endswith("_"):
        # a Tensor method or property without a torch.* function (contiguous, byte, T, mH...);
        # in-place entries are left out (their OpInfo op clones first)
        attr = getattr(ember.Tensor, name)
        return (lambda x, *a, **k: getattr(x, name)) if isinstance(attr, property) else attr
    obj = ember
    for part in name.split("."):
        obj = getattr(obj, part)
    if not callable(obj) or isinstance(obj, ember.dtype):
        obj = getattr(ember.Tensor, name)
    return obj


def check_sample(info, sample, fe=None, values: bool = True, rtol=None, atol=None,
                 parts: str = "fbj") -> None:
    """One sample through both libraries: outputs, gradients, tangents. ``parts`` picks the
    checks: ``f`` forward values, ``b`` reverse gradients (and grad_fn names), ``j`` forward-AD
    tangents."""
    fe = fe or ember_fn(info.name)
    ft = info.op
    leaves: dict = {}
    e_in = to_ember(sample.input, leaves)
    e_args = to_ember(sample.args, leaves)
    e_kwargs = to_ember(sample.kwargs, leaves)
    rt = ft(sample.input, *sample.args, **sample.kwargs)
    re = fe(e_in, *e_args, **e_kwargs)
    ot, oe = _outputs(rt), _outputs(re)
    assert len(oe) == len(ot), (len(oe), len(ot))
    if values:
        if "f" in parts:
            assert_same(oe, ot, rtol, atol)
    else:
        for a, b in zip(oe, ot):
            assert tuple(a.shape) == tuple(b.shape) and str(a.dtype)[6:] == str(b.dtype)[6:]
    t_leaves = _torch_leaves(sample)
    if not info.supports_autograd or not t_leaves or not values:
        return
    e_leaves = [leaves[id(t)] for t in t_leaves]
    live = _diff_outputs(ot)
    if not live:
        return
    rng = np.random.default_rng(0)
    if "b" in parts:
        _check_backward(ot, oe, live, t_leaves, e_leaves, rng, rtol, atol)
    if "j" in parts and info.supports_forward_ad:
        _check_forward_ad(ft, fe, sample, t_leaves, rng, rtol, atol)


def _check_backward(ot, oe, live, t_leaves, e_leaves, rng, rtol, atol) -> None:
    for i in live:
        assert oe[i].requires_grad, f"output {i} does not require grad"
        _same_grad_fn(oe[i], ot[i], i)
    cots_t, cots_e = [], []
    for i in live:
        a = rng.standard_normal(tuple(ot[i].shape))
        if ot[i].is_complex():
            a = a + 1j * rng.standard_normal(a.shape)
        name = str(ot[i].dtype).split(".")[-1]
        a = np.asarray(a).astype({"bfloat16": "float32", "complex32": "complex64"}.get(name, name))
        ct, ce = torch.from_numpy(a.copy()), ember.from_numpy(a.copy())
        if name in ("bfloat16", "complex32"):
            ct, ce = ct.to(getattr(torch, name)), ce.to(getattr(ember, name))
        cots_t.append(ct)
        cots_e.append(ce)
    gt = torch.autograd.grad([ot[i] for i in live], t_leaves, cots_t, allow_unused=True)
    ge = ember.autograd.grad([oe[i] for i in live], e_leaves, cots_e, allow_unused=True)
    assert_same(list(ge), list(gt), rtol, atol)


def _random(rng, t) -> np.ndarray:
    """Random data of ``t``'s shape and dtype (complex: random real and imaginary parts)."""
    a = rng.standard_normal(tuple(t.shape))
    if t.is_complex():
        a = a + 1j * rng.standard_normal(a.shape)
    name = str(t.dtype).split(".")[-1]
    return np.asarray(a).astype("complex64" if name == "complex32" else name)   # 0-d: an array


def _check_forward_ad(ft, fe, sample, t_leaves, rng, rtol, atol) -> None:
    fwt, fwe = torch.autograd.forward_ad, ember.autograd.forward_ad
    tangents = [_random(rng, t) for t in t_leaves]
    with fwt.dual_level(), fwe.dual_level():
        swap_t = {id(t): fwt.make_dual(t.detach(), torch.from_numpy(tg.copy()).to(t.dtype))
                  for t, tg in zip(t_leaves, tangents)}
        leaves: dict = {}
        for t, tg in zip(t_leaves, tangents):
            e = to_ember(t.detach(), {})
            leaves[id(swap_t[id(t)])] = fwe.make_dual(e, ember.from_numpy(tg.copy()).to(e.dtype))

        def sub(x):
            if isinstance(x, torch.Tensor):
                return swap_t.get(id(x), x.detach())
            if isinstance(x, (tuple, list)):
                return type(x)(sub(i) for i in x)
            if isinstance(x, dict):
                return {k: sub(v) for k, v in x.items()}
            return x
        t_in, t_args, t_kwargs = sub(sample.input), sub(sample.args), sub(sample.kwargs)
        rt = _outputs(ft(t_in, *t_args, **t_kwargs))
        re = _outputs(fe(to_ember(t_in, leaves), *to_ember(t_args, leaves),
                         **to_ember(t_kwargs, leaves)))
        for a, b in zip(re, rt):
            if isinstance(b, torch.Tensor) and (b.is_floating_point() or b.is_complex()):
                tb = fwt.unpack_dual(b).tangent
                ta = fwe.unpack_dual(a).tangent
                if tb is None:
                    assert ta is None or not ta.abs().sum().item(), "unexpected tangent"
                else:
                    assert ta is not None, "missing tangent"
                    assert_same(ta, tb, rtol, atol)


def check_opinfo(name: str, dtype=torch.float64, values: bool = True, rtol=None,
                 atol=None) -> int:
    """Run every sample of the OpInfo entries called ``name``; returns how many ran."""
    n = 0
    for info in opinfos(name):
        for sample in info.sample_inputs("cpu", dtype, requires_grad=True):
            try:
                check_sample(info, sample, values=values, rtol=rtol, atol=atol)
            except AssertionError as ex:
                raise AssertionError(f"{name} {info.variant_test_name} sample {n}: "
                                     f"{sample}\n{ex}") from None
            n += 1
    assert n, f"no samples for {name}"
    return n
