"""The torch.* entries of PyTorch's OpInfo database (those test_opinfo_core runs in float64) in
float32, complex128 and complex32, where PyTorch supports the dtype for the entry on CPU:
values, reverse gradients, forward-AD tangents (complex tangents for complex inputs) and grad_fn
names, on the first samples, with per-dtype tolerances; a complex32 sample PyTorch refuses (it
has few ComplexHalf kernels) must be refused by ember with the same error. Entries left out are
listed per dtype with the reason."""
import numpy as np
import pytest
import torch

import ember
from helpers import check_op
from opinfo import check_sample, ember_fn, to_ember
from test_opinfo_core import LEFT_OUT as LEFT_OUT_F64
from test_opinfo_core import TORCH_WRONG_TANGENT, _entries

SAMPLES = 4   # the first samples: PyTorch puts the small edge cases (0-dim, empty) first
# (rtol, atol): ember computes float32 in NumPy's float32 kernels, PyTorch in its own (different
# summation orders, vectorised transcendental functions); complex128 as float64
TOLS = {"float32": (1e-4, 1e-5), "complex128": (1e-9, 1e-11),
        # complex32 (ember._chalf): the results are float16 pairs, rounded once as PyTorch's
        "complex32": (1e-3, 1e-3)}

# entries left out in float64 stay out (same reasons), except those whose reason is float64's
_F64_ONLY = {"float64 samples are invalid in PyTorch too"}
LEFT_OUT = {
    "float32": {},
    # None: checked in this dtype although float64 leaves the entry out
    "complex128": {
        "logcumsumexp": None,   # float64's inexact forward-AD sample is not among the first
    },
    "complex32": {
        # PyTorch sums a 0-dim fill value's gradient with a kernel ComplexHalf lacks ("sum_cpu"
        # raised in backward); ember's formula selects the single filled slice without a sum
        "index_fill": "PyTorch's backward refuses ComplexHalf (sum_cpu); ember's needs no sum",
    },
}


def _params():
    out = []
    for p in _entries():
        info = p.values[0]
        for dt in TOLS:
            if getattr(torch, dt) in info.supported_dtypes("cpu"):
                out.append(pytest.param(info, dt, id=f"{p.id}-{dt}"))
    return out


def _left_out(name: str, dt: str):
    if name in LEFT_OUT[dt]:
        return LEFT_OUT[dt][name]
    reason = LEFT_OUT_F64.get(name)
    return None if reason in _F64_ONLY else reason


@pytest.mark.parametrize("info,dt", _params())
def test_opinfo_dtype(info, dt):
    reason = _left_out(info.name, dt)
    if reason:
        pytest.skip(reason)
    tdt = getattr(torch, dt)
    rtol, atol = TOLS[dt]
    back = info.supports_autograd and tdt in info.supported_backward_dtypes("cpu")
    fe = ember_fn(info.name)
    for i, sample in enumerate(info.sample_inputs("cpu", tdt, requires_grad=back)):
        if i == SAMPLES:
            break
        if sample.kwargs.get("memory_format") not in (None, torch.preserve_format):
            continue   # memory formats other than strided are not honoured yet (issue 7)
        try:
            # (where PyTorch's tangent is wrong only values and gradients are compared)
            check_sample(info, sample, fe, rtol=rtol, atol=atol,
                         parts="fb" if info.name in TORCH_WRONG_TANGENT else "fbj")
        except AssertionError as ex:
            raise AssertionError(f"sample {i}: {sample}\n{ex}") from None
        except Exception as ex:
            if dt != "complex32" or not _raised_by_torch(ex):
                raise
            # PyTorch has few ComplexHalf kernels: where it refuses a sample (forward or
            # backward), ember must refuse it with the same exception and message
            with pytest.raises(type(ex)) as got:
                _run_ember(sample, fe)
            assert str(got.value) == str(ex), f"sample {i}: {sample}"


def _raised_by_torch(ex: Exception) -> bool:
    tb = ex.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return "/torch/" in tb.tb_frame.f_code.co_filename


def _run_ember(sample, fe) -> None:
    """``sample`` through ember: the forward, then a backward of every output requiring grad
    to every input leaf (what check_sample runs)."""
    leaves: dict = {}
    out = fe(to_ember(sample.input, leaves), *to_ember(sample.args, leaves),
             **to_ember(sample.kwargs, leaves))
    outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
            if isinstance(o, ember.Tensor) and o.requires_grad]
    inputs = [e for e in leaves.values() if e.requires_grad]
    if outs and inputs:
        ember.autograd.grad(outs, inputs, [ember.ones_like(o) for o in outs], allow_unused=True)


def test_left_out_names_are_entries():
    names = {p.values[0].name for p in _entries()}
    for dt, table in LEFT_OUT.items():
        stale = set(table) - names
        assert not stale, f"{dt} LEFT_OUT names no longer in op_db or ember: {stale}"
    assert len(_params()) > 300


_Z = np.random.default_rng(3).standard_normal((2, 2, 3, 4))
_Z = _Z[0] + 1j * _Z[1]
COMPLEX_CASES = {
    # complex gradients with PyTorch's convention (grad * conj(df/dz)), first and second order
    "logcumsumexp": (lambda m, a: m.logcumsumexp(a, 1), (_Z[0],)),
    "logsumexp": (lambda m, a: m.logsumexp(a, 1), (_Z[0],)),
    "renorm": (lambda m, a: m.renorm(a, 2, 0, 1.0), (_Z[0],)),
    "dist": (lambda m, a, b: m.dist(a, b), (_Z[0], _Z[1])),
    "ldexp": (lambda m, a, b: m.ldexp(a, b), (_Z[0], _Z[1])),
}


@pytest.mark.parametrize("name", list(COMPLEX_CASES))
def test_complex_gradients(name):
    f, arrays = COMPLEX_CASES[name]
    check_op(lambda *a: f(ember, *a), lambda *a: f(torch, *a), *arrays,
             double=name not in ("dist", "ldexp"))


def test_complex_logcumsumexp_keeps_the_first_phase():
    # a sequential scan from -inf, as PyTorch's: the first element is not wrapped to (-pi, pi]
    z = np.array([1 - 7.5j, 2 + 0.5j, -np.inf + 0j])
    e = ember.logcumsumexp(ember.from_numpy(z), 0)
    t = torch.logcumsumexp(torch.from_numpy(z), 0)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)
    assert ember.logsumexp(ember.from_numpy(z[:1]), 0).item() == \
        torch.logsumexp(torch.from_numpy(z[:1]), 0).item()
