"""Differential-testing helpers: run the same computation in ember and PyTorch on the same NumPy
data and compare values, dtypes, shapes, gradients (reverse, forward, double backward)."""
from __future__ import annotations

import numpy as np
import torch

import ember

DTYPES = {"float32": (ember.float32, torch.float32), "float64": (ember.float64, torch.float64),
          "float16": (ember.float16, torch.float16), "bfloat16": (ember.bfloat16, torch.bfloat16),
          "complex64": (ember.complex64, torch.complex64),
          "complex128": (ember.complex128, torch.complex128), "int64": (ember.int64, torch.int64),
          "int32": (ember.int32, torch.int32), "int16": (ember.int16, torch.int16),
          "int8": (ember.int8, torch.int8), "uint8": (ember.uint8, torch.uint8),
          "bool": (ember.bool, torch.bool)}


def tol(dtype_name: str):
    return {"float64": (1e-10, 1e-12), "complex128": (1e-10, 1e-12), "float16": (2e-3, 2e-3),
            "complex32": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}.get(dtype_name, (2e-5, 2e-6))


def pair(a: np.ndarray, requires_grad: bool = False, noncontig: bool = False):
    """The same data as an ember tensor and a torch tensor (optionally non-contiguous)."""
    if noncontig and a.ndim >= 2:
        base = np.ascontiguousarray(np.swapaxes(a, -1, -2))
        e = ember.from_numpy(base.copy()).transpose(-1, -2)
        t = torch.from_numpy(base.copy()).transpose(-1, -2)
        if requires_grad:
            e = e.detach().requires_grad_()
            t = t.detach().requires_grad_()
        return e, t
    e = ember.from_numpy(a.copy())
    t = torch.from_numpy(a.copy())
    if requires_grad:
        e.requires_grad_()
        t.requires_grad_()
    return e, t


def to_np(x):
    """An ember or torch tensor (or nested tuple of them) as NumPy data."""
    if isinstance(x, (tuple, list)):
        return [to_np(i) for i in x]
    if isinstance(x, torch.Tensor):
        x = x.detach()
        if x.dtype == torch.bfloat16:
            x = x.float()
        elif x.dtype == torch.complex32:   # (NumPy has no complex32: exact in complex64)
            x = x.cfloat()
        return x.numpy(force=True)  # force: ZeroTensors, conj/neg views
    if isinstance(x, ember.Tensor):
        x = x.detach()
        if x.dtype is ember.bfloat16:
            x = x.float()
        elif x.dtype is ember.complex32:
            x = x.cfloat()
        return x.numpy(force=True)  # force: conj/neg views (as for torch)
    return np.asarray(x)


def dtype_name(x) -> str:
    return str(x.dtype).split(".")[-1]


def assert_same(e, t, rtol=None, atol=None):
    """ember result ``e`` matches torch result ``t``: shape, dtype and values."""
    if isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)), f"ember returned {type(e)}, torch a sequence"
        assert len(e) == len(t)
        for a, b in zip(e, t):
            assert_same(a, b, rtol, atol)
        return
    if t is None:
        assert e is None, f"expected None, got {e!r}"
        return
    if not isinstance(t, torch.Tensor):
        assert e == t or (e != e and t != t), f"{e!r} != {t!r}"
        return
    assert isinstance(e, ember.Tensor), f"expected a Tensor, got {type(e)}"
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} != {tuple(t.shape)}"
    assert dtype_name(e) == dtype_name(t), f"dtype {e.dtype} != {t.dtype}"
    r, a = tol(dtype_name(t))
    np.testing.assert_allclose(to_np(e), to_np(t), rtol=rtol or r, atol=atol or a,
                               equal_nan=True)


def flat(x) -> list:
    """The leaves of a (nested) tuple/list result, in order."""
    if isinstance(x, (tuple, list)):
        return [leaf for i in x for leaf in flat(i)]
    return [x]


def _cotangent(rng, t: torch.Tensor):
    """One random cotangent for torch output ``t``, as an (ember, torch) pair of its dtype."""
    a = rng.standard_normal(tuple(t.shape))
    if t.is_complex():
        a = a + 1j * rng.standard_normal(tuple(t.shape))
    a = np.asarray(a.astype(np.complex128 if t.is_complex() else np.float64))
    name = dtype_name(t)
    return (ember.from_numpy(a.copy()).to(getattr(ember, name)),
            torch.from_numpy(a.copy()).to(getattr(torch, name)))


def _same_grad_fn(a, b, k) -> None:
    if b.grad_fn is None:   # torch returned a leaf (an input itself)
        assert a.grad_fn is None, f"output {k}: ember has {a.grad_fn.name()}, torch a leaf"
        return
    assert a.grad_fn is not None, f"output {k}: ember has no grad_fn, torch {b.grad_fn.name()}"
    want = b.grad_fn.name().replace("torch::", "ember::")
    assert a.grad_fn.name() == want, f"output {k}: grad_fn {a.grad_fn.name()} != {want}"


def _sq(x):
    return (x * x).sum().real if x.is_complex() else (x * x).sum()


def check_op(fe, ft, *arrays, grad=True, fwd=True, double=True, noncontig=False,
             rtol=None, atol=None, argnums=None):
    """Run ``fe`` on ember tensors and ``ft`` on torch tensors made from ``arrays``; compare
    every output (values, dtypes, shapes, ``requires_grad``, ``grad_fn`` names), the reverse
    gradients of all differentiable outputs together (one random cotangent each), the
    forward-mode tangent of every output, and the double backward through all first-order
    gradients (with respect to the inputs and to the cotangents, as ``gradgradcheck`` does).

    Arrays whose dtype is floating/complex get requires_grad (or only those in ``argnums``).
    """
    diff = [i for i, a in enumerate(arrays)
            if a.dtype.kind in "fc" and (argnums is None or i in argnums)]
    ins = [pair(a, grad and i in diff, noncontig) for i, a in enumerate(arrays)]
    es, ts = [p[0] for p in ins], [p[1] for p in ins]
    oe, ot = fe(*es), ft(*ts)
    assert_same(oe, ot, rtol, atol)
    if not grad or not diff:
        return oe, ot
    fl_e, fl_t = flat(oe), flat(ot)
    assert len(fl_e) == len(fl_t), (len(fl_e), len(fl_t))
    live = []
    for k, (a, b) in enumerate(zip(fl_e, fl_t)):
        if isinstance(b, torch.Tensor):
            assert a.requires_grad == b.requires_grad, (
                f"output {k}: requires_grad {a.requires_grad} != {b.requires_grad}")
            if b.requires_grad:
                _same_grad_fn(a, b, k)
                live.append(k)
    rng = np.random.default_rng(0)
    de = [es[i] for i in diff]
    dt = [ts[i] for i in diff]
    if live:
        cots = [_cotangent(rng, fl_t[k]) for k in live]
        ce, ct = [c[0] for c in cots], [c[1] for c in cots]
        if double:
            for c in ce + ct:
                c.requires_grad_()
        gre = ember.autograd.grad([fl_e[k] for k in live], de, ce, create_graph=double,
                                  allow_unused=True)
        grt = torch.autograd.grad([fl_t[k] for k in live], dt, ct, create_graph=double,
                                  allow_unused=True)
        assert_same(list(gre), list(grt), rtol, atol)
        if double:
            for j, (a, b) in enumerate(zip(gre, grt)):
                if b is not None:
                    assert a.requires_grad == b.requires_grad, (
                        f"grad of input {j}: requires_grad {a.requires_grad} != "
                        f"{b.requires_grad}")
            pairs = [(a, b) for a, b in zip(gre, grt) if b is not None and b.requires_grad]
            if pairs:
                se = sum(_sq(a) for a, _ in pairs)
                st = sum(_sq(b) for _, b in pairs)
                g2e = ember.autograd.grad(se, de + ce, allow_unused=True)
                g2t = torch.autograd.grad(st, dt + ct, allow_unused=True)
                # second-order sums cancel: absolute error scales with the largest entry, and
                # with the least precise dtype involved (a float32 input under a float64 output)
                r2 = rtol or max(tol(dtype_name(x))[0] for x in dt + ct)
                for a, b in zip(g2e, g2t):
                    if b is None:
                        assert_same(a, b)
                        continue
                    a2 = atol or r2 * max(1.0, float(np.abs(to_np(b)).max(initial=0)))
                    assert_same(a, b, r2, a2)
    if fwd:
        _check_tangents(fe, ft, arrays, es, ts, diff, rng, rtol, atol)
    return oe, ot


def _check_tangents(fe, ft, arrays, es, ts, diff, rng, rtol, atol) -> None:
    """Forward mode: every output's tangent (None exactly where torch's is None)."""
    fwe, fwt = ember.autograd.forward_ad, torch.autograd.forward_ad
    tangents = []
    for i in diff:
        a = rng.standard_normal(arrays[i].shape)
        if arrays[i].dtype.kind == "c":
            a = a + 1j * rng.standard_normal(arrays[i].shape)
        tangents.append(np.asarray(a.astype(arrays[i].dtype)))
    with fwe.dual_level(), fwt.dual_level():
        fe_in, ft_in = list(es), list(ts)
        for i, tg in zip(diff, tangents):
            fe_in[i] = fwe.make_dual(es[i].detach(), ember.from_numpy(tg.copy()))
            ft_in[i] = fwt.make_dual(ts[i].detach(), torch.from_numpy(tg.copy()))
        re, rt = flat(fe(*fe_in)), flat(ft(*ft_in))
        assert len(re) == len(rt)
        for k, (a, b) in enumerate(zip(re, rt)):
            if not isinstance(b, torch.Tensor):
                continue
            tt = fwt.unpack_dual(b).tangent
            te = fwe.unpack_dual(a).tangent
            if tt is None:
                assert te is None, f"output {k}: ember has a tangent, torch none"
                continue
            assert te is not None, f"output {k}: ember has no tangent, torch has one"
            assert_same(te, tt, rtol, atol)


def raises_same(fe, ft):
    """Both calls raise the same exception type with the same message (torch. -> ember.)."""
    try:
        ft()
    except Exception as ex:  # noqa: BLE001
        tex = ex
    else:
        raise AssertionError("torch did not raise")
    try:
        fe()
    except Exception as ex:  # noqa: BLE001
        eex = ex
    else:
        raise AssertionError(f"ember did not raise; torch raised {tex!r}")
    assert type(eex).__name__ == type(tex).__name__, (eex, tex)
    assert str(eex) == str(tex).replace("torch.", "ember."), f"\n{eex}\n{tex}"
    return eex


def _plain_np(x):
    x = x.detach().resolve_conj().resolve_neg()
    if str(x.dtype).endswith("bfloat16"):
        x = x.float()
    return x.numpy()


def norm(x):
    """The observable parts of a result, in a form equal between ember and torch."""
    if isinstance(x, (torch.Tensor, ember.Tensor)):
        if x.is_meta:
            vals = None
        else:
            a = _plain_np(x)
            vals = np.round(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
                            5).tolist() if a.dtype.kind in "fc" else a.tolist()
        return ("T", tuple(x.shape), str(x.dtype).split(".")[-1], vals, x.requires_grad)
    if isinstance(x, (torch.dtype, ember.dtype)):
        return ("dtype", str(x).split(".")[-1])
    if isinstance(x, (torch.device, ember.device)):
        return ("device", str(x))
    if isinstance(x, (list, tuple)):
        return [norm(i) for i in x]
    if isinstance(x, str):
        return x.replace("torch.", "ember.")
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items()}
    if hasattr(x, "next_functions"):
        return ("fn", x.name().replace("torch::", "ember::"))
    return x


def both(f):
    """Run ``f(ember)`` and ``f(torch)``; their observable results must be equal."""
    re, rt = f(ember), f(torch)
    assert norm(re) == norm(rt), f"\nember: {norm(re)}\ntorch: {norm(rt)}"
    return re, rt
