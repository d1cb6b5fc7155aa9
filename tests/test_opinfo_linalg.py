"""Every torch.linalg.* entry of PyTorch's OpInfo database on its own sample inputs, in float64,
float32 and complex128 (where PyTorch supports the dtype): values, reverse gradients of every
output, forward-mode tangents and grad_fn names, with each sample's ``output_process_fn_grad``
(which makes eigen- and singular vectors comparable: their signs or phases are arbitrary) applied
in both libraries. Plus gradcheck / gradgradcheck on the central decompositions and PyTorch's
error messages."""
import types

import numpy as np
import pytest
import torch

import ember
from helpers import raises_same
from opinfo import _op_db, check_sample, ember_fn

SAMPLES = 5   # samples per entry and dtype, spread over the entry's whole list
DTYPES = {"float64": (torch.float64, 1e-7, 1e-9), "float32": (torch.float32, 2e-3, 2e-4),
          "complex128": (torch.complex128, 1e-7, 1e-9)}

LEFT_OUT: dict = {}


def _entries():
    out = []
    for info in _op_db():
        if info.name.startswith("linalg.") or info.name in ("svd_lowrank", "pca_lowrank"):
            for dt in DTYPES:
                out.append(pytest.param(info, dt,
                                        id=f"{info.name}.{info.variant_test_name}.{dt}"
                                        .replace("..", ".")))
    return out


def _spread(samples, k):
    if len(samples) <= k:
        return samples
    idx = np.linspace(0, len(samples) - 1, k).round().astype(int)
    return [samples[i] for i in sorted(set(idx))]


# entries whose ``op`` is a lambda around the function
CALLS = {
    ("linalg.pinv", "singular"): lambda a, b: ember.linalg.pinv(a @ b.mT),
    ("linalg.lstsq", "grad_oriented"): lambda a, b, driver: ember.linalg.lstsq(
        a, b, driver=driver)[:2],
    ("svd_lowrank", ""): lambda a, b, **kw: ember.svd_lowrank(a @ b.mT, **kw),
    ("pca_lowrank", ""): lambda a, b, **kw: ember.pca_lowrank(a @ b.mT, **kw),
}


def _processed(info, sample):
    proc = sample.output_process_fn_grad
    fe = CALLS.get((info.name, info.variant_test_name)) or ember_fn(info.name)
    shim = types.SimpleNamespace(name=info.name, op=lambda *a, **k: proc(info.op(*a, **k)),
                                 supports_autograd=info.supports_autograd,
                                 supports_forward_ad=info.supports_forward_ad)
    return shim, (lambda *a, **k: proc(fe(*a, **k)))


@pytest.mark.parametrize("info,dt", _entries())
def test_opinfo_linalg(info, dt):
    key = f"{info.name}.{info.variant_test_name}".rstrip(".")
    if key in LEFT_OUT or (key, dt) in LEFT_OUT:
        pytest.skip(LEFT_OUT.get(key) or LEFT_OUT[(key, dt)])
    tdt, rtol, atol = DTYPES[dt]
    if tdt not in info.supported_dtypes("cpu"):
        pytest.skip("dtype not supported by PyTorch for this entry")
    samples = list(info.sample_inputs("cpu", tdt, requires_grad=True))
    if "lowrank" in info.name:
        # only exactly rank-q inputs give results independent of the random projection
        samples = [x for x in samples if x.kwargs.get("M") is None and
                   not x.kwargs.get("center", False)]
    samples = _spread(samples, SAMPLES)
    for i, sample in enumerate(samples):
        shim, fe = _processed(info, sample)
        try:
            check_sample(shim, sample, fe, rtol=rtol, atol=atol)
        except AssertionError as ex:
            raise AssertionError(f"sample {i}: {sample}\n{ex}") from None


def test_every_linalg_entry_exists():
    names = {info.name for info in _op_db() if info.name.startswith("linalg.")}
    assert len(names) == 39, len(names)   # 44 entries: some names have several variants
    for name in names:
        assert callable(ember_fn(name)), name
    stale = {k if isinstance(k, str) else k[0] for k in LEFT_OUT} - {
        f"{i.name}.{i.variant_test_name}".rstrip(".") for i in _op_db()}
    assert not stale, stale


# ---- gradcheck / gradgradcheck --------------------------------------------------------------

RNG = np.random.default_rng(0)


def _leaf(*shape, spd=False):
    a = RNG.standard_normal(shape)
    if spd:
        a = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    return ember.from_numpy(a).requires_grad_()


def _svd_invariant(A):
    U, S, Vh = ember.linalg.svd(A, full_matrices=False)
    return S, U @ Vh, U * U     # sign-invariant functions of the factors


def _eigh_invariant(A):
    L, V = ember.linalg.eigh(A + A.mT)
    return L, V * V


GRAD_CASES = {
    "svd": (_svd_invariant, lambda: (_leaf(4, 3),)),
    "svd_wide": (_svd_invariant, lambda: (_leaf(2, 3, 5),)),
    "eigh": (_eigh_invariant, lambda: (_leaf(4, 4),)),
    "qr": (lambda A: tuple(ember.linalg.qr(A)), lambda: (_leaf(5, 3),)),
    "qr_wide": (lambda A: tuple(ember.linalg.qr(A)), lambda: (_leaf(3, 5),)),
    "solve": (ember.linalg.solve, lambda: (_leaf(2, 3, 3), _leaf(3, 2))),
    "solve_vec": (ember.linalg.solve, lambda: (_leaf(3, 3), _leaf(3))),
    "det": (ember.linalg.det, lambda: (_leaf(2, 3, 3),)),
    "slogdet": (lambda A: tuple(ember.linalg.slogdet(A))[1], lambda: (_leaf(3, 3),)),
    "matrix_exp": (ember.linalg.matrix_exp, lambda: (_leaf(3, 3),)),
    "cholesky": (lambda A: ember.linalg.cholesky(A + A.mT), lambda: (_leaf(3, 3, spd=True),)),
    "inv": (ember.linalg.inv, lambda: (_leaf(3, 3),)),
    "lu_factor": (lambda A: ember.linalg.lu_factor(A)[0], lambda: (_leaf(4, 4),)),
    "pinv": (ember.linalg.pinv, lambda: (_leaf(4, 3),)),
}


@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_gradcheck(case):
    fn, make = GRAD_CASES[case]
    inputs = make()
    assert ember.autograd.gradcheck(fn, inputs, check_forward_ad=True)


@pytest.mark.parametrize("case", ["svd", "eigh", "qr", "solve", "det", "matrix_exp", "cholesky",
                                  "inv"])
def test_gradgradcheck(case):
    fn, make = GRAD_CASES[case]
    assert ember.autograd.gradgradcheck(fn, make())


def test_complex_gradcheck():
    a = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    A = ember.from_numpy(a).requires_grad_()
    assert ember.autograd.gradcheck(ember.linalg.det, (A,))
    assert ember.autograd.gradcheck(ember.linalg.inv, (A,))
    assert ember.autograd.gradcheck(lambda x: ember.linalg.svdvals(x), (A,))


# ---- errors ---------------------------------------------------------------------------------

def _both(fn_name, *arrays, **kw):
    def call(lib):
        args = [lib.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in arrays]
        f = lib
        for part in fn_name.split("."):
            f = getattr(f, part)
        return lambda: f(*args, **kw)
    return call(ember), call(torch)


Z = np.zeros((3, 3))
BZ = np.stack([np.eye(3), Z])
NEG = -np.eye(3)
RECT = np.ones((2, 3))
INT = np.ones((3, 3), np.int64)
ERRORS = [
    ("linalg.inv", (Z,), {}), ("linalg.inv", (BZ,), {}), ("linalg.inv", (INT,), {}),
    ("linalg.inv", (RECT,), {}), ("linalg.inv", (np.ones(3),), {}), ("inverse", (Z,), {}),
    ("linalg.solve", (Z, Z), {}), ("linalg.solve", (BZ, BZ), {}),
    ("linalg.solve", (np.eye(3), np.ones((4, 2))), {}),
    ("linalg.solve", (np.eye(3), np.ones(3, np.float32)), {}),
    ("linalg.cholesky", (NEG,), {}), ("linalg.cholesky", (np.stack([np.eye(3), NEG]),), {}),
    ("linalg.cholesky", (INT,), {}), ("linalg.det", (INT,), {}), ("linalg.det", (RECT,), {}),
    ("linalg.svd", (INT,), {}), ("linalg.svd", (np.ones(3),), {}), ("linalg.eigh", (RECT,), {}),
    ("linalg.eigh", (INT,), {}), ("linalg.qr", (INT,), {}), ("linalg.qr", (Z,), {"mode": "x"}),
    ("linalg.eigvalsh", (Z,), {"UPLO": "X"}), ("linalg.lu_factor", (Z,), {}),
    ("linalg.matrix_exp", (INT,), {}), ("linalg.slogdet", (INT,), {}), ("linalg.eig", (INT,), {}),
    ("linalg.solve_triangular", (RECT, RECT), {"upper": True}), ("linalg.pinv", (INT,), {}),
    ("linalg.lstsq", (RECT, np.ones((3, 2))), {}), ("linalg.matrix_power", (RECT, 2), {}),
    ("linalg.matrix_norm", (Z,), {"ord": 3}), ("linalg.norm", (np.ones((2, 2, 2)),),
                                               {"ord": 2}),
    ("linalg.cond", (np.ones(3),), {}), ("linalg.multi_dot", ([np.ones(3)],), {}),
]


@pytest.mark.parametrize("name,args,kw", ERRORS, ids=[f"{e[0]}-{i}" for i, e in
                                                       enumerate(ERRORS)])
def test_errors(name, args, kw):
    if name == "linalg.multi_dot":
        fe = lambda: ember.linalg.multi_dot([ember.from_numpy(args[0][0])])  # noqa: E731
        ft = lambda: torch.linalg.multi_dot([torch.from_numpy(args[0][0])])  # noqa: E731
    else:
        fe, ft = _both(name, *args, **kw)
    raises_same(fe, ft)


def test_linalg_error_class_and_ex_variants():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ember.zeros(2, 2, dtype=ember.float64))
    b = np.stack([np.eye(3), Z, NEG])
    for fn in ("inv_ex", "cholesky_ex", "lu_factor_ex"):
        re = getattr(ember.linalg, fn)(ember.from_numpy(b.copy()))
        rt = getattr(torch.linalg, fn)(torch.from_numpy(b.copy()))
        assert re.info.tolist() == rt.info.tolist(), fn
    re = ember.linalg.solve_ex(ember.from_numpy(b.copy()), ember.ones(3, 3, 1, dtype=ember.float64))
    rt = torch.linalg.solve_ex(torch.from_numpy(b.copy()), torch.ones(3, 3, 1, dtype=torch.float64))
    assert re.info.tolist() == rt.info.tolist()


def test_return_type_reprs():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    for fn in ("svd", "eigh", "qr", "slogdet", "cholesky_ex", "inv_ex", "lu_factor", "lu"):
        re = getattr(ember.linalg, fn)(ember.from_numpy(a.copy()))
        rt = getattr(torch.linalg, fn)(torch.from_numpy(a.copy()))
        assert type(re).__name__ == type(rt).__name__
        assert repr(re) == repr(rt).replace("torch.", "ember."), (repr(re), repr(rt))
    re, rt = ember.svd(ember.from_numpy(a.copy())), torch.svd(torch.from_numpy(a.copy()))
    assert type(re).__name__ == type(rt).__name__ and re._fields == ('U', 'S', 'V')
