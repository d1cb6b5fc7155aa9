"""complex32 (ComplexHalf, chalf) tensors against PyTorch: values bit for bit, dtypes, strides,
reprs, promotion, gradients, checkpoints, and PyTorch's refusals where its CPU build has no
ComplexHalf kernel."""
import io
import warnings

import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")
LIBS = (ember, torch)
RNG = np.random.default_rng(7)


def _bits(x) -> np.ndarray:
    """A tensor's values as exact complex128 (complex32 and half types through complex64)."""
    x = x.detach()
    if x.dtype in (torch.complex32, ember.complex32):
        x = x.cfloat()
    elif x.dtype in (torch.bfloat16, ember.bfloat16):
        x = x.float()
    return np.asarray(x.resolve_conj().resolve_neg().numpy())


def same(e, t, strides: bool = True) -> None:
    """Same dtype, shape, strides and values (bit for bit, the sign of zero included)."""
    assert str(e.dtype)[6:] == str(t.dtype)[6:], (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    if strides:
        assert e.stride() == t.stride(), (e.stride(), t.stride())
    a, b = _bits(e), _bits(t)
    assert a.dtype == b.dtype
    ok = (a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind in "fc" else a == b
    if a.dtype.kind == "c":
        ok &= (np.signbit(a.real) == np.signbit(b.real)) | np.isnan(a.real)
        ok &= (np.signbit(a.imag) == np.signbit(b.imag)) | np.isnan(a.imag)
    elif a.dtype.kind == "f":
        ok &= (np.signbit(a) == np.signbit(b)) | np.isnan(a)
    assert ok.all(), (a[~ok][:5], b[~ok][:5])


def both(f, *arrays, strides: bool = True):
    """``f(lib, *tensors)`` in both libraries on complex32 tensors of the same values."""
    te = [ember.from_numpy(a.copy()).to(ember.chalf) for a in arrays]
    tt = [torch.from_numpy(a.copy()).to(torch.chalf) for a in arrays]
    same(f(ember, *te), f(torch, *tt), strides)


def _z(*shape, scale=4.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale + 1j * RNG.standard_normal(shape) * scale
            ).astype(np.complex64)


SPECIAL = np.array([0, -0.0, 1e-8, -3e-5 + 1e-7j, 65504, 70000, -1e6j, np.inf, -np.inf,
                    complex(np.nan, 1), complex(1, np.nan), 1 / 3 + 2j / 7, 2049 + 0.5j],
                   np.complex128)


def raises_same(f):
    """``f(lib)`` raises the same exception class and message in both libraries."""
    got = []
    for L in LIBS:
        try:
            f(L)
        except Exception as ex:   # noqa: BLE001 -- compared below
            got.append((type(ex).__name__, str(ex).replace("torch.", "ember.")))
        else:
            got.append(None)
    assert got[1] is not None, "PyTorch did not raise"
    assert got[0] == got[1], got


# ---- the dtype ----------------------------------------------------------------------------

def test_dtype_object():
    for n in ("itemsize", "is_complex", "is_floating_point", "is_signed"):
        assert getattr(ember.chalf, n) == getattr(torch.chalf, n)
    assert ember.complex32 is ember.chalf and repr(ember.chalf) == "ember.complex32"
    assert ember.complex32.to_real() is ember.float16
    assert ember.float16.to_complex() is ember.complex32
    fe, ft = ember.finfo(ember.chalf), torch.finfo(torch.chalf)
    assert (fe.bits, fe.eps, fe.max, fe.tiny, fe.dtype) == (ft.bits, ft.eps, ft.max, ft.tiny,
                                                              ft.dtype)


@pytest.mark.parametrize("other", ["bool", "uint8", "int8", "int64", "float16", "bfloat16",
                                   "float32", "float64", "complex64", "complex128", "complex32"])
def test_promotion(other):
    for a, b in ((ember.chalf, getattr(ember, other)), (getattr(ember, other), ember.chalf)):
        ta, tb = getattr(torch, a.name), getattr(torch, b.name)
        assert ember.promote_types(a, b).name == str(torch.promote_types(ta, tb))[6:]
        assert ember.can_cast(a, b) == torch.can_cast(ta, tb)
    for shape in ((3,), ()):
        t = torch.ones(shape, dtype=getattr(torch, other))
        e = ember.ones(shape, dtype=getattr(ember, other))
        x, y = torch.ones(3, dtype=torch.chalf), ember.ones(3, dtype=ember.chalf)
        assert str((y + e).dtype)[6:] == str((x + t).dtype)[6:]
        assert str(ember.result_type(e, y))[6:] == str(torch.result_type(t, x))[6:]


def test_float16_with_complex_numbers():
    for f in (lambda L, h: h + 1j, lambda L, h: h * (2 - 1j), lambda L, h: 1j - h,
              lambda L, h: h * L.tensor(1j), lambda L, h: h + L.tensor(0.5j, dtype=L.complex128),
              lambda L, h: L.where(h > 1, h, 1j), lambda L, h: h + L.ones(3, dtype=L.chalf)):
        h = np.array([1.5, -2.25, 3.3], np.float16)
        same(f(ember, ember.from_numpy(h.copy())), f(torch, torch.from_numpy(h.copy())))
    assert ember.result_type(ember.ones(2, dtype=ember.half), 1j) is ember.complex32


# ---- making and converting ----------------------------------------------------------------

def test_conversions_in_are_pytorch_roundings():
    v = 1 + 2 ** -11 + 2 ** -40   # rounds down through float32 (PyTorch), up directly
    for name in ("complex128", "complex64", "float64", "float32", "float16", "bfloat16",
                 "int64", "int16", "uint8", "bool"):
        # (v into float16 itself rounds differently in ember today: issue 7's half precision)
        src = SPECIAL if name.startswith("complex") else np.append(
            SPECIAL.real, v if name not in ("float16", "bfloat16") else 1.5)
        if name in ("int64", "int16", "uint8", "bool"):
            src = np.array([0, 1, -3, 255, 2049, 4097, 65519, 65520, 70000])
            src = src.astype(bool) if name == "bool" else src
            if name in ("uint8", "int16"):
                src = src[(src >= np.iinfo(name).min) & (src <= np.iinfo(name).max)]
        ae = ember.tensor(src.tolist(), dtype=getattr(ember, name))
        at = torch.tensor(src.tolist(), dtype=getattr(torch, name))
        same(ae.to(ember.chalf), at.to(torch.chalf))
        same(ae.chalf(), at.chalf())
        same(ember.tensor(src.tolist(), dtype=ember.chalf),
             torch.tensor(src.tolist(), dtype=torch.chalf))
        same(ember.zeros(len(src), dtype=ember.chalf).copy_(ae),
             torch.zeros(len(src), dtype=torch.chalf).copy_(at))


def test_conversions_out():
    z = np.concatenate([SPECIAL, _z(20)]).astype(np.complex64)
    e = ember.from_numpy(z.copy()).chalf()
    t = torch.from_numpy(z.copy()).chalf()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("complex128", "complex64", "float64", "float32", "float16", "bfloat16",
                     "int64", "int32", "bool"):
            fin = np.isfinite(z) | (name not in ("int64", "int32"))   # (C casts of inf: UB)
            same(e[ember.from_numpy(fin)].to(getattr(ember, name)),
                 t[torch.from_numpy(fin)].to(getattr(torch, name)))
        same(e.type(ember.complex64), t.type(torch.complex64))
        assert e.type() == t.type().replace("torch", "ember")


def test_creation():
    for f in (lambda L: L.zeros(2, 3, dtype=L.chalf), lambda L: L.ones(3, dtype=L.chalf),
              lambda L: L.full((2, 2), 1.5 - 2j, dtype=L.chalf),
              lambda L: L.full((2,), 70000.0 + 1j, dtype=L.chalf),
              lambda L: L.tensor(1 + 2j, dtype=L.chalf),
              lambda L: L.tensor([[1, 2.5], [3j, -0.0]], dtype=L.chalf),
              lambda L: L.scalar_tensor(3 - 1j, dtype=L.chalf),
              lambda L: L.ones_like(L.zeros(2, 3).t(), dtype=L.chalf),
              lambda L: L.full_like(L.zeros(2, 3, dtype=L.chalf), 2 + 1j),
              lambda L: L.zeros_like(L.zeros(2, 3, dtype=L.chalf).t()),
              lambda L: L.ones(2, dtype=L.chalf).new_ones(3),
              lambda L: L.ones(2, dtype=L.chalf).new_full((2,), -1j),
              lambda L: L.ones(2, dtype=L.chalf).new_tensor([1, 2j]),
              lambda L: L.zeros(2, 3, dtype=L.chalf).fill_(1 + 1j),
              lambda L: L.ones(2, 3, dtype=L.chalf).zero_(),
              lambda L: L.ones(3, dtype=L.chalf).fill_(L.tensor(2.5)),
              lambda L: L.ones(3, dtype=L.chalf).index_fill(0, L.tensor([1]), 3j),
              lambda L: L.fill(L.ones(3, dtype=L.chalf), True)):
        same(f(ember), f(torch))
    for f in (lambda L: L.empty(2, 3, dtype=L.chalf), lambda L: L.randn(4, 2, dtype=L.chalf),
              lambda L: L.rand(3, dtype=L.chalf),
              lambda L: L.empty_like(L.ones(2, 3, dtype=L.chalf).t())):
        e, t = f(ember), f(torch)
        assert e.dtype is ember.chalf and e.shape == t.shape and e.stride() == t.stride()


def test_randn_parts_are_float16_normals():
    ember.manual_seed(0)
    z = ember.randn(20000, dtype=ember.chalf)
    r = ember.view_as_real(z)
    assert r.dtype is ember.float16
    v = r.float().var(0)
    assert ((v - 0.5).abs() < 0.03).all()   # PyTorch: each part has variance 1/2


# ---- arithmetic, bit for bit ----------------------------------------------------------------

@pytest.mark.parametrize("op", ["add", "sub", "mul", "rsub"])
def test_binary_bits(op):
    a, b = _z(4000), _z(4000)
    both(lambda L, x, y: getattr(L, op)(x, y), a, b)
    both(lambda L, x, y: getattr(L, op)(x[:, None], y[:50]), a[:40], b[:50])   # broadcast
    if op != "mul":
        for alpha in (3, 0.1, 2 - 1j, -7):
            both(lambda L, x, y: getattr(L, op)(x, y, alpha=alpha), a, b)


@pytest.mark.parametrize("s", [2, 2.5, 0.1, 1 + 2 ** -11 + 2 ** -13, 1 / 3 + 1j / 7, -1j, True,
                               70000.0])
def test_scalar_operands_bits(s):
    a = _z(2000)
    fs = (lambda L, x: x + s, lambda L, x: x - s, lambda L, x: s - x, lambda L, x: x * s,
          lambda L, x: s * x, lambda L, x: L.add(x, s, alpha=0.5),
          lambda L, x: x.clone().add_(s), lambda L, x: x.clone().mul_(s),
          lambda L, x: x.clone().sub_(s), lambda L, x: x == s, lambda L, x: x != s)
    for f in fs:
        if isinstance(s, bool) and f in (fs[1], fs[2], fs[8]):
            continue   # (subtraction with a bool is refused)
        both(f, a)


@pytest.mark.parametrize("other", ["float32", "float64", "complex64", "complex128", "float16",
                                   "int64"])
def test_zero_dim_operands_bits(other):
    a = _z(2000)
    v = np.array(0.1 - 1.7j if other.startswith("complex") else 0.1 if "float" in other else 3)
    for f in (lambda L, x, s: x + s, lambda L, x, s: x * s, lambda L, x, s: s - x,
              lambda L, x, s: x.clone().mul_(s)):
        te = ember.from_numpy(a.copy()).chalf()
        tt = torch.from_numpy(a.copy()).chalf()
        se = ember.tensor(v.item(), dtype=getattr(ember, other))
        st = torch.tensor(v.item(), dtype=getattr(torch, other))
        same(f(ember, te, se), f(torch, tt, st))


def test_unary_bits():
    a = np.concatenate([SPECIAL.astype(np.complex64), _z(3000), _z(1000, scale=1e-4)])
    for f in (lambda L, x: -x, lambda L, x: x.neg(), lambda L, x: x.abs(), lambda L, x: x.sgn(),
              lambda L, x: L.isnan(x), lambda L, x: L.isinf(x), lambda L, x: L.isfinite(x),
              lambda L, x: L.isreal(x), lambda L, x: x.conj_physical(), lambda L, x: +x,
              lambda L, x: x.clone().neg_(), lambda L, x: x == x, lambda L, x: x != x.conj(),
              lambda L, x: L.eq(x, x.roll(1))):
        both(f, a)


def test_mixed_tensor_operands():
    a, h = _z(50), RNG.standard_normal(50).astype(np.float16)
    for f in (lambda L, x, y: x + y, lambda L, x, y: y - x, lambda L, x, y: x * y,
              lambda L, x, y: x * y.double(), lambda L, x, y: x + y.cfloat(),
              lambda L, x, y: x.clone().add_(y)):
        same(f(ember, ember.from_numpy(a.copy()).chalf(), ember.from_numpy(h.copy())),
             f(torch, torch.from_numpy(a.copy()).chalf(), torch.from_numpy(h.copy())))
    raises_same(lambda L: L.ones(2, dtype=L.half).add_(L.ones(2, dtype=L.chalf)))
    raises_same(lambda L: L.ones(2, dtype=L.chalf) + L.ones(3, dtype=L.chalf))


# ---- views, layout, memory ------------------------------------------------------------------

def test_layout_and_memory():
    for L in LIBS:
        x = L.zeros(3, 4, dtype=L.chalf)
        assert x.element_size() == 4 and x.itemsize == 4 and x.nbytes == 48
        assert x[1, 2].data_ptr() - x.data_ptr() == 24
        assert x.t().stride() == (1, 4) and x[1:, ::2].stride() == (4, 2)
        assert x[1:, 1:].storage_offset() == 5
        assert x.untyped_storage().nbytes() == 48
    a = _z(3, 4)
    for f in (lambda L, x: x.t(), lambda L, x: x.t().contiguous(), lambda L, x: x.t().clone(),
              lambda L, x: x.reshape(4, 3), lambda L, x: x.view(12), lambda L, x: x.flatten(),
              lambda L, x: x[:, 1], lambda L, x: x[::2, 1:], lambda L, x: x[[2, 0]],
              lambda L, x: x[x.abs() > 4], lambda L, x: x.unsqueeze(1).expand(3, 2, 4),
              lambda L, x: x.permute(1, 0).unsqueeze(0), lambda L, x: x.select(1, 3),
              lambda L, x: x.narrow(1, 1, 2), lambda L, x: L.as_strided(x, (2, 2), (1, 5), 1),
              lambda L, x: x.transpose(0, 1).reshape(-1), lambda L, x: x.diagonal(),
              lambda L, x: x.unbind(1)[2], lambda L, x: x.split(2, 1)[1],
              lambda L, x: x.chunk(2)[0], lambda L, x: x.movedim(0, 1),
              lambda L, x: x.repeat(2, 1), lambda L, x: x.tile(2), lambda L, x: x.roll(1, 0),
              lambda L, x: x.flip(0), lambda L, x: x.tril(), lambda L, x: x.triu(1),
              lambda L, x: x.index_select(1, L.tensor([3, 0])), lambda L, x: x.mT,
              lambda L, x: x.mH, lambda L, x: x.H, lambda L, x: L.cat([x, x.t().t()], 1),
              lambda L, x: L.stack([x, x], 1), lambda L, x: L.cat([x, L.ones(1, 4)]),
              lambda L, x: L.cat([x.half(), x]), lambda L, x: L.hstack([x, x]),
              lambda L, x: L.where(x.abs() > 3, x, 0), lambda L, x: L.where(x.abs() > 3, x, -2j),
              lambda L, x: L.where(x.abs() > 3, x, x.real), lambda L, x: L.where(x.abs() > 3, 1j,
                                                                                 x.real),
              lambda L, x: x.masked_fill(x.abs() > 3, 1 - 1j),
              lambda L, x: x.masked_fill(x.abs() > 3, L.tensor(2.5)),
              lambda L, x: x.index_put((L.tensor([0, 2]),), L.tensor(5j, dtype=L.chalf)),
              lambda L, x: x.index_put((L.tensor([0, 0]),), L.ones(4, dtype=L.chalf), True),
              lambda L, x: x.index_add(0, L.tensor([1, 1]), x[:2]),
              lambda L, x: x.masked_select(x.abs() > 3), lambda L, x: x.nonzero(),
              lambda L, x: x.clone(memory_format=L.contiguous_format),
              lambda L, x: L.block_diag(x, x[:1]), lambda L, x: L.diag_embed(x)):
        both(f, a)


def test_complex_views():
    a = _z(3, 4)
    for f in (lambda L, x: L.view_as_real(x), lambda L, x: L.view_as_real(x.t()),
              lambda L, x: x.real, lambda L, x: x.imag, lambda L, x: x.t().imag,
              lambda L, x: L.view_as_complex(L.view_as_real(x)), lambda L, x: x.conj(),
              lambda L, x: x.conj().imag, lambda L, x: x.conj().resolve_conj(),
              lambda L, x: x.conj() * 2, lambda L, x: x.conj().clone(),
              lambda L, x: L.view_as_complex(L.ones(3, 2, dtype=L.half))):
        both(f, a)
    for L in LIBS:
        x = L.tensor([1 + 2j, 3 - 4j], dtype=L.chalf)
        assert x.conj().is_conj() and not x.conj().resolve_conj().is_conj()
        r = L.view_as_real(x)
        assert r.dtype == L.half and r.stride() == (2, 1)
        assert r.data_ptr() == x.data_ptr() and x.imag.data_ptr() == x.data_ptr() + 2
        x.real[0] = 5
        x.imag.mul_(2)
        c = x.conj()
        c[1] = 1 + 1j   # written through the conjugate bit
        assert x.tolist() == [5 + 4j, 1 - 1j]


def test_writes():
    a = _z(3, 4)
    for f in (lambda L, x: x.__setitem__(0, 1 + 1j), lambda L, x: x.__setitem__((1, 2), -3),
              lambda L, x: x.__setitem__(x.abs() > 3, 0.5j),
              lambda L, x: x.__setitem__(slice(None), L.arange(4.0)),
              lambda L, x: x.__setitem__(2, L.tensor([1, 2, 3, 4], dtype=L.int64)),
              lambda L, x: x[:, 1].copy_(L.ones(3, dtype=L.cdouble) * (1 / 3 + 1j)),
              lambda L, x: x.t().fill_(2), lambda L, x: x.masked_fill_(x.abs() < 3, 7j),
              lambda L, x: x.index_put_((L.tensor([1]),), L.tensor(2.5 + 0j, dtype=L.chalf)),
              lambda L, x: x.add_(x), lambda L, x: x.mul_(x.conj()),
              lambda L, x: x[1:].sub_(x[0])):
        te, tt = ember.from_numpy(a.copy()).chalf(), torch.from_numpy(a.copy()).chalf()
        f(ember, te)
        f(torch, tt)
        same(te, tt)


# ---- Python values, NumPy, printing -------------------------------------------------------

def test_python_values():
    for L in LIBS:
        x = L.tensor([1 + 2j, 0.1 - 3j, float("inf")], dtype=L.chalf)
        assert x.tolist() == [1 + 2j, complex(np.float16(0.1), -3), complex(float("inf"), 0)]
        assert x[0].item() == 1 + 2j and complex(x[1]) == complex(np.float16(0.1), -3)
        assert float(L.tensor(1.5, dtype=L.chalf)) == 1.5
        assert not bool(L.tensor(0j, dtype=L.chalf)) and bool(L.tensor(1j, dtype=L.chalf))
        assert x.is_complex() and not x.is_floating_point() and x.is_signed()
    raises_same(lambda L: L.ones(2, dtype=L.chalf).numpy())
    raises_same(lambda L: np.asarray(L.ones(2, dtype=L.chalf)))
    raises_same(lambda L: float(L.tensor(1j, dtype=L.chalf)))


@pytest.mark.parametrize("values", [
    [1 + 2j, 3.5 - 1j, 0.1 + 0.2j], [[1e-5 + 1j, 100 + 1j]], [[1e5 + 1j, 100 + 1j]],
    [0j, -0.0 + 0j], [float("nan"), 1j], 1 + 1j, [2.0 + 0j, 4.0 + 0j], [],
    [[1e4 + 0.5j] * 3] * 2])
def test_repr(values):
    e = ember.tensor(values, dtype=ember.chalf)
    t = torch.tensor(values, dtype=torch.chalf)
    assert repr(e) == repr(t).replace("torch.", "ember.")
    assert str(e.t() if e.dim() == 2 else e) == str(t.t() if t.dim() == 2 else t).replace(
        "torch.", "ember.")


def test_repr_long_and_grad():
    z = _z(3000)
    e, t = ember.from_numpy(z.copy()).chalf(), torch.from_numpy(z.copy()).chalf()
    assert repr(e) == repr(t).replace("torch.", "ember.")
    e.requires_grad_()
    t.requires_grad_()
    assert repr(e[:3] * 2) == repr(t[:3] * 2).replace("torch.", "ember.")


# ---- what PyTorch refuses -------------------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda L, x: x.sum(), lambda L, x: x.mean(), lambda L, x: x.exp(), lambda L, x: x / 2,
    lambda L, x: x / x, lambda L, x: x @ x, lambda L, x: x[:2, None] @ x[None, :2],
    lambda L, x: x < x, lambda L, x: x >= 1, lambda L, x: x.sort(), lambda L, x: x.max(),
    lambda L, x: x.argmax(), lambda L, x: x.flip(0), lambda L, x: x.cumsum(0),
    lambda L, x: x.prod(), lambda L, x: x.sqrt(), lambda L, x: x.log(), lambda L, x: x.sin(),
    lambda L, x: x.tanh(), lambda L, x: x.sigmoid(), lambda L, x: x.pow(2),
    lambda L, x: x ** 2, lambda L, x: x.angle(), lambda L, x: x.reciprocal(),
    lambda L, x: x.clamp(0), lambda L, x: x.relu(), lambda L, x: x.sign(),
    lambda L, x: x.floor(), lambda L, x: L.maximum(x, x), lambda L, x: x.topk(1),
    lambda L, x: x.dot(x), lambda L, x: L.linalg.inv(x.reshape(2, 2)),
    lambda L, x: L.fft.fft(x),
    lambda L, x: L.nn.functional.softmax(x, 0), lambda L, x: x.logical_not(),
    lambda L, x: x.nansum(), lambda L, x: L.view_as_complex(x),
    lambda L, x: x.unsqueeze(0).expand(2, 4).sum(0),
    lambda L, x: x.clone().div_(2), lambda L, x: x.lerp(x, 0.5),
])
def test_refused_as_pytorch(f):
    raises_same(lambda L: f(L, L.tensor([1 + 2j, 3 - 1j, 0.5j, 2], dtype=L.chalf)))


def test_refused_as_pytorch_in_backward():
    def f(L):
        x = L.tensor([1 + 2j, 3 - 1j], dtype=L.chalf, requires_grad=True)
        y = L.tensor(0.5 + 1j, dtype=L.chalf, requires_grad=True)
        (x * y).backward(L.ones(2, dtype=L.chalf))   # y's gradient is a sum
    raises_same(f)

    def g(L):
        x = L.tensor([1 + 2j, 3 - 1j], dtype=L.chalf, requires_grad=True)
        L.linalg.vector_norm(x).backward()   # divides x by the norm
    raises_same(g)

    def h(L):
        x = L.tensor([1 + 2j, 3 - 1j], dtype=L.chalf, requires_grad=True)
        x.sgn().backward(L.ones(2, dtype=L.chalf))   # divides by |x|
    raises_same(h)


# ---- autograd -----------------------------------------------------------------------------

def _grads(L, f, arrays, cot):
    xs = [L.from_numpy(a.copy()).to(L.chalf).requires_grad_() for a in arrays]
    out = f(L, *xs)
    c = L.from_numpy(cot.copy()).to(out.dtype)
    return out, L.autograd.grad(out, xs, c)


@pytest.mark.parametrize("f", [
    lambda L, x, y: x + y, lambda L, x, y: x - y, lambda L, x, y: x * y,
    lambda L, x, y: L.add(x, y, alpha=0.3), lambda L, x, y: -x * 2.5 + y,
    lambda L, x, y: (x.conj() * y).conj(), lambda L, x, y: x.t() * y.t(),
    lambda L, x, y: L.cat([x, y])[1:4] * 1j, lambda L, x, y: L.where(x.abs() > 3, x, y),
    lambda L, x, y: x.masked_fill(y.abs() > 4, 0) + y, lambda L, x, y: (x * y).real.cfloat(),
    lambda L, x, y: x.cfloat().chalf() * y, lambda L, x, y: L.view_as_real(x * y)[..., 0].chalf(),
    lambda L, x, y: x[:, ::2].abs().chalf() * y[:, 1::2],
])
def test_gradients_bits(f):
    a, b = _z(3, 4), _z(3, 4)
    shape_out = f(torch, torch.from_numpy(a).chalf(), torch.from_numpy(b).chalf())
    cot = _z(*shape_out.shape) if shape_out.is_complex() else \
        RNG.standard_normal(tuple(shape_out.shape)).astype(np.float32)
    oe, ge = _grads(ember, f, (a, b), cot)
    ot, gt = _grads(torch, f, (a, b), cot)
    same(oe, ot, strides=False)
    assert oe.grad_fn.name() == ot.grad_fn.name()
    for x, y in zip(ge, gt):
        same(x, y, strides=False)


def test_grad_accumulates_in_chalf():
    a, c = _z(6), _z(6)
    res = []
    for L in LIBS:
        x = L.from_numpy(a.copy()).chalf().requires_grad_()
        for k in (1.5, 0.3, -2.7):
            (x * k).backward(L.from_numpy(c.copy()).chalf())
        res.append(x.grad)
    same(*res)


def test_forward_ad():
    a, t1 = _z(5), _z(5)
    res = []
    for L in LIBS:
        fw = L.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(L.from_numpy(a.copy()).chalf(), L.from_numpy(t1.copy()).chalf())
            y = x * x + x * 1j - x.conj()
            res.append((fw.unpack_dual(y).primal, fw.unpack_dual(y).tangent))
    same(res[0][0], res[1][0])
    same(res[0][1], res[1][1])


def test_requires_grad():
    for L in LIBS:
        x = L.ones(2, dtype=L.chalf, requires_grad=True)
        assert x.requires_grad and (x * 2).grad_fn.name() == "MulBackward0"


# ---- checkpoints ----------------------------------------------------------------------------

def test_save_load_both_ways():
    a = _z(3, 4)
    e, t = ember.from_numpy(a.copy()).chalf(), torch.from_numpy(a.copy()).chalf()
    buf = io.BytesIO()
    ember.save({"x": e, "v": e[1:].t(), "p": ember.nn.Parameter(e)}, buf)
    buf.seek(0)
    got = torch.load(buf)
    same(got["x"], t)
    same(got["v"], t[1:].t())
    assert got["v"].untyped_storage().data_ptr() == got["x"].untyped_storage().data_ptr()
    buf = io.BytesIO()
    torch.save({"x": t, "v": t[1:].t()}, buf)
    buf.seek(0)
    got = ember.load(buf)
    same(got["x"], e)
    same(got["v"], e[1:].t())
    same(got["x"] * 2, t * 2)
    import copy
    import pickle
    same(pickle.loads(pickle.dumps(e)) + 1, t + 1)
    same(copy.deepcopy(e) * 1j, t * 1j)


def test_complex_of_halves_and_tensors_of_tensors():
    h, k = np.array([1.5, -2.25, 1e-3], np.float16), np.array([0.1, 3, -0.0], np.float16)
    res = []
    for L in (ember, torch):
        a = L.from_numpy(h.copy()).requires_grad_()
        b = L.from_numpy(k.copy()).requires_grad_()
        c = L.complex(a, b)
        g = L.autograd.grad(c, (a, b), L.tensor([1 + 2j, 3 - 1j, 0.5j], dtype=L.chalf))
        z = L.tensor([1 + 2j, 3], dtype=L.chalf)
        res.append((c, *g, L.tensor([z[0], z[1]]), L.tensor(z), L.as_tensor(z, dtype=L.cfloat)))
    for e, t in zip(*res):
        same(e, t)
    assert res[0][0].grad_fn.name() == "ComplexBackward0"
    raises_same(lambda L: L.polar(L.ones(2, dtype=L.half), L.ones(2, dtype=L.half)))


@pytest.mark.parametrize("p", [2, 3, float("inf"), -float("inf")])
def test_norm_forward_and_tangent(p):
    a, t1 = _z(3, 4), _z(3, 4)
    res = []
    for L in LIBS:
        fw = L.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(L.from_numpy(a.copy()).chalf(), L.from_numpy(t1.copy()).chalf())
            n = L.linalg.vector_norm(x, p, dim=1)
            res.append((fw.unpack_dual(n).primal, fw.unpack_dual(n).tangent))
    same(res[0][0], res[1][0])
    # the tangent: PyTorch's formula rounds each step to half precision, ember's (on complex64
    # copies) once, so they agree to about a half-precision ulp of the largest terms
    e, t = _bits(res[0][1]), _bits(res[1][1])
    np.testing.assert_allclose(e, t, rtol=0, atol=4e-3 * np.abs(t).max())


# ---- issue 7: reductions, distances, composites, and what PyTorch refuses ----------------

def _grads_same(f, arrays, strides=False):
    """``f(lib, *tensors)`` and its gradients (a random cotangent) in both libraries: values,
    grad_fn name and every gradient, bit for bit."""
    res = []
    cot = None
    for L in LIBS:
        xs = [L.from_numpy(a.copy()).to(L.chalf).requires_grad_() for a in arrays]
        out = f(L, *xs)
        if cot is None:
            cot = (_z(*out.shape) if out.is_complex() else
                   RNG.standard_normal(tuple(out.shape)).astype(np.float32))
        c = L.from_numpy(cot.copy()).to(out.dtype)
        res.append((out, L.autograd.grad(out, xs, c, allow_unused=True)))
    (oe, ge), (ot, gt) = res
    same(oe, ot, strides)
    assert oe.grad_fn.name() == ot.grad_fn.name().replace("torch::", "ember::")
    for x, y in zip(ge, gt):
        assert (x is None) == (y is None)
        if x is not None:
            same(x, y, strides=False)


def _backward_refused(f, arrays, grad_of=lambda out: out):
    def g(L):
        xs = [L.from_numpy(a.copy()).to(L.chalf).requires_grad_() for a in arrays]
        out = grad_of(f(L, *xs))
        out.backward(L.ones(out.shape, dtype=out.dtype))
    raises_same(g)


_MEAN_TOO = (lambda L, x: L.var_mean(x, 1), lambda L, x: L.std_mean(x, 0, keepdim=True),
             lambda L, x: L.std_mean(x), lambda L, x: L.var_mean(x.t(), 1, correction=0))


@pytest.mark.parametrize("f", [
    lambda L, x: x.var(), lambda L, x: x.var(1), lambda L, x: x.var(0, keepdim=True),
    lambda L, x: x.var(1, unbiased=False), lambda L, x: L.var(x, (0, 1), correction=3),
    lambda L, x: x.std(), lambda L, x: x.std(0), lambda L, x: L.std(x, 1, correction=0),
    lambda L, x: x[:1, :1].var(), lambda L, x: x.t().std(1), *_MEAN_TOO])
def test_var_std_bits(f):
    a = np.concatenate([_z(40, 9), _z(20, 9, scale=300)])
    a[5, :] = SPECIAL[:9]
    a[7, 3] = 1e-7j
    if f in _MEAN_TOO:
        # (PyTorch's Welford mean of a part holding an infinity can be NaN, by position; ember's
        # var_mean of real tensors differs there too)
        a = a[(np.abs(a) < 6e4).all(1)]
    te, tt = ember.from_numpy(a.copy()).chalf(), torch.from_numpy(a.copy()).chalf()
    e, t = f(ember, te), f(torch, tt)
    for x, y in zip(e if isinstance(e, tuple) else (e,), t if isinstance(t, tuple) else (t,)):
        same(x, y)


def test_var_std_autograd_as_pytorch():
    a = _z(3, 4)
    for f in (lambda L, x: x.var(), lambda L, x: x.std(1), lambda L, x: L.var_mean(x, 0)[0],
              lambda L, x: L.std_mean(x)[0]):
        _backward_refused(f, (a,))   # var_backward takes self.mean(): a sum
    _backward_refused(lambda L, x: L.var_mean(x, 1)[1], (a,))   # mean_backward divides
    for L in LIBS:
        x = L.from_numpy(a.copy()).chalf().requires_grad_()
        assert x.var().grad_fn.name() == "VarBackward0"
        assert L.std_mean(x)[1].grad_fn.name() == "StdMeanBackward0"

    def fw(L):
        with L.autograd.forward_ad.dual_level():
            x = L.autograd.forward_ad.make_dual(L.from_numpy(a.copy()).chalf(),
                                               L.from_numpy(a.copy()).chalf())
            x.var(0)
    raises_same(fw)


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, 1.5, 0, float("inf"), -float("inf")])
def test_dist_and_pairwise_distance(p):
    a, b = _z(6, 7), _z(6, 7)
    both(lambda L, x, y: L.dist(x, y, p), a, b)
    both(lambda L, x, y: L.dist(x, y[0], p), a, b)
    both(lambda L, x, y: x.dist(y.conj(), p), a, b)
    both(lambda L, x, y: L.nn.functional.pairwise_distance(x, y, p), a, b)
    both(lambda L, x, y: L.nn.functional.pairwise_distance(x, y, p, 1e-3, True), a, b)
    both(lambda L, x, y: L.nn.functional.pairwise_distance(x[0], y[0], p), a, b)
    c, d = _z(300, 3), _z(300, 3)
    both(lambda L, x, y: L.nn.functional.pairwise_distance(x, y, p), c, d)
    both(lambda L, x, y: L.stack([L.dist(x[i], y[i], p) for i in range(300)]), c, d)
    if p == 2:   # the gradient divides the complex32 difference by the norm
        _backward_refused(lambda L, x, y: L.dist(x, y), (a, b))
        _backward_refused(lambda L, x, y: L.nn.functional.pairwise_distance(x, y), (a, b))
    elif p == 0:   # (PyTorch's formula for other negates an undefined gradient)
        _backward_refused(lambda L, x, y: L.dist(x, y, p), (a, b))
    else:
        _grads_same(lambda L, x, y: L.dist(x, y, p), (a, b))
        _grads_same(lambda L, x, y: L.nn.functional.pairwise_distance(x, y, p), (a, b))
        # a broadcast operand's gradient is a sum, which PyTorch has no ComplexHalf kernel for
        _backward_refused(lambda L, x, y: L.dist(x, y[0], p), (a, b))


@pytest.mark.parametrize("value", [1, 3, 0.1, 1e-3, 2 - 1j, True])
def test_addcmul_bits(value):
    s = np.concatenate([SPECIAL.astype(np.complex64), _z(300), _z(300, scale=200)])
    a, b, c = s, RNG.permutation(s), RNG.permutation(s)
    both(lambda L, x, y, z: L.addcmul(x, y, z, value=value), a, b, c)
    both(lambda L, x, y, z: x.clone().addcmul_(y, z, value=value), a, b, c)
    both(lambda L, x, y, z: x[:20, None].addcmul(y[:30], z[:1], value=value), a, b, c)
    _grads_same(lambda L, x, y, z: L.addcmul(x, y, z, value=value), (_z(5, 6), _z(5, 6),
                                                                      _z(5, 6)))


def test_addcmul_mixed_and_refused():
    a = _z(50)
    h = RNG.standard_normal(50).astype(np.float16)
    for f in (lambda L, x, y: L.addcmul(x, y, y), lambda L, x, y: L.addcmul(y, x, y, value=2),
              lambda L, x, y: L.addcmul(x, x, y.double())):
        same(f(ember, ember.from_numpy(a.copy()).chalf(), ember.from_numpy(h.copy())),
             f(torch, torch.from_numpy(a.copy()).chalf(), torch.from_numpy(h.copy())))
    raises_same(lambda L: L.addcdiv(*(L.ones(2, dtype=L.chalf),) * 3))


@pytest.mark.parametrize("rtol,atol", [(1e-5, 1e-8), (1e-3, 0), (0, 1e-3), (0.01, 0.01), (0, 0),
                                       (2 ** -11 + 2 ** -22, 2 ** -11 + 2 ** -22), (1e-3, 1e5)])
def test_isclose_allclose(rtol, atol):
    a = np.concatenate([SPECIAL.astype(np.complex64), _z(3000)])
    scale = np.logspace(-6, -1, a.size).astype(np.float32)
    b = (a * (1 + RNG.standard_normal(a.size).astype(np.float32) * scale)
         + 1e-5 * RNG.standard_normal(a.size)).astype(np.complex64)
    # and pairs on the boundary, where each rounding of the composite decides
    c = _z(5000)
    u = RNG.uniform(0.9, 1.1, c.size) * np.exp(2j * np.pi * RNG.uniform(size=c.size))
    a = np.concatenate([a, (c + (rtol * np.abs(c) + min(atol, 1)) * u).astype(np.complex64)])
    b = np.concatenate([b, c])
    for en in (False, True):
        both(lambda L, x, y: L.isclose(x, y, rtol, atol, en), a, b)
        both(lambda L, x, y: x.isclose(y[:1], rtol=rtol, atol=atol, equal_nan=en), a, b)
        for x, y in ((a, b), (a, a), (b[:5], b[:5]), (a[20:], b[20:])):
            got = [L.allclose(L.from_numpy(x.copy()).to(L.chalf),
                              L.from_numpy(y.copy()).to(L.chalf), rtol, atol, en) for L in LIBS]
            assert got[0] is got[1]
    raises_same(lambda L: L.isclose(L.ones(2, dtype=L.chalf), L.ones(2, dtype=L.cfloat)))
    raises_same(lambda L: L.allclose(L.ones(2, dtype=L.chalf), L.ones(2), rtol, atol))


def test_kron_outer_diff_l1_loss():
    a, b = _z(6, 7), _z(5, 4)
    both(lambda L, x, y: L.kron(x, y), a, b)
    both(lambda L, x, y: L.outer(x[0], y[0]), a, b)
    both(lambda L, x, y: L.ger(x[:, 0], y[1]), a, b)
    both(lambda L, x: L.diff(x, n=3, dim=0), a)
    both(lambda L, x, y: L.diff(x[:5], dim=1, prepend=y, append=y[:, :1]), a, b)
    _grads_same(lambda L, x: L.diff(x, n=2, dim=0), (a,))
    _grads_same(lambda L, x, y: L.diff(x, dim=1, prepend=y[:, :2], append=y[:, :1]),
                (a, _z(6, 7)))
    # kron's and outer's gradients sum over the broadcast product: PyTorch has no kernel
    _backward_refused(lambda L, x, y: L.kron(x, y), (a, b))
    _backward_refused(lambda L, x, y: L.outer(x[0], y[0]), (a, b))
    c = _z(6, 7)
    for red in ("mean", "sum", "none"):
        both(lambda L, x, y: L.nn.functional.l1_loss(x, y, reduction=red), a, c)
        _grads_same(lambda L, x, y: L.nn.functional.l1_loss(x, y, reduction=red), (a, c))


def test_pad():
    a = _z(2, 5, 3)
    for f in (lambda L, x: L.nn.functional.pad(x, (1, 2)),
              lambda L, x: L.nn.functional.pad(x, (1, 2, 0, 1), value=1.5),
              lambda L, x: L.nn.functional.pad(x, (1, 1), value=1 + 2 ** -11 + 2 ** -40),
              lambda L, x: L.nn.functional.pad(x, (2, 0), value=70000.0),
              lambda L, x: L.nn.functional.pad(x, (1, 0, -1, 2), value=-3),
              lambda L, x: L.nn.functional.pad(x, (1, 2), mode="circular"),
              lambda L, x: L.nn.functional.pad(x[None], (1, 2, 2, 1), mode="circular")):
        both(f, a)
    _grads_same(lambda L, x: L.nn.functional.pad(x, (1, 2, -1, 1), value=0.3), (a,))
    _grads_same(lambda L, x: L.nn.functional.pad(x, (2, 1), mode="circular"), (a,))
    for mode in ("reflect", "replicate"):
        for p in ((1, 1), (0, 0), (1, 0, 1, 1)):
            raises_same(lambda L: L.nn.functional.pad(L.ones(2, 3, 3, dtype=L.chalf), p, mode))
        raises_same(lambda L: L.nn.functional.pad(L.ones(1, 1, 2, 2, 2, dtype=L.chalf),
                                                  (1,) * 6, mode))
    # PyTorch's own checks come first
    raises_same(lambda L: L.nn.functional.pad(L.ones(2, 3, dtype=L.chalf), (3, 3), "reflect"))
    raises_same(lambda L: L.nn.functional.pad(L.ones(2, 3), (1, 1), value=1j))


def test_embedding():
    w = _z(10, 4)
    idx = np.array([[1, 3, 3], [0, 9, 5]])
    both(lambda L, x: L.nn.functional.embedding(L.from_numpy(idx), x), w)
    both(lambda L, x: L.nn.functional.embedding(L.from_numpy(idx), x, padding_idx=3), w)
    for max_norm, norm_type in ((1.0, 2.0), (3.0, 1.0), (2.0, float("inf")), (5.0, 3.0)):
        res = []
        for L in LIBS:
            W = L.from_numpy(w.copy()).to(L.chalf)
            res.append((L.nn.functional.embedding(L.from_numpy(idx), W, max_norm=max_norm,
                                                  norm_type=norm_type), W))
        same(res[0][0], res[1][0])
        same(res[0][1], res[1][1])   # the rows used are renormalised in place
    for dt in ("chalf", "cfloat"):   # PyTorch's autograd refuses complex embeddings
        raises_same(lambda L: L.nn.functional.embedding(
            L.tensor([1]), L.ones(2, 3, dtype=getattr(L, dt), requires_grad=True)))
    for L in LIBS:
        with L.no_grad():
            L.nn.functional.embedding(L.tensor([1]), L.ones(2, 3, dtype=L.chalf,
                                                            requires_grad=True))


def test_svd_refused_unless_empty():
    for f in (lambda L, x: L.linalg.svd(x), lambda L, x: L.linalg.svdvals(x),
              lambda L, x: L.svd(x), lambda L, x: L.svd(x, compute_uv=False),
              lambda L, x: L.linalg.svd(x[None], full_matrices=False)):
        raises_same(lambda L: f(L, L.ones(2, 3, dtype=L.chalf)))
        for shape in ((0, 3), (2, 0, 2), (3, 0)):
            e = f(ember, ember.ones(shape, dtype=ember.chalf))
            t = f(torch, torch.ones(shape, dtype=torch.chalf))
            for x, y in zip(e if isinstance(e, tuple) else (e,),
                            t if isinstance(t, tuple) else (t,)):
                same(x, y, strides=False)
    raises_same(lambda L: L.linalg.svd(L.ones(3, dtype=L.chalf)))   # its check first


@pytest.mark.parametrize("f", [
    lambda L, x: L.nn.functional.unfold(x.reshape(1, 1, 2, 2), 1),
    lambda L, x: L.nn.functional.fold(x.reshape(1, 4, 1), 2, 2),
    lambda L, x: L.nn.functional.unfold(x.reshape(1, 1, 2, 2), 3),   # (its check first)
    lambda L, x: L.searchsorted(x, x), lambda L, x: L.searchsorted(x, 1.0),
    lambda L, x: L.searchsorted(x, x, right=True, sorter=L.tensor([0, 1, 2, 3])),
    lambda L, x: L.searchsorted(x[:0], x), lambda L, x: L.searchsorted(x.real, x),
    lambda L, x: L.searchsorted(x, x.real.float()), lambda L, x: L.searchsorted(x.real, 1j),
    lambda L, x: L.searchsorted(x.real.double(), x), lambda L, x: L.searchsorted(x.cfloat(), 1),
    lambda L, x: L.bucketize(x, x), lambda L, x: L.bucketize(x.real.float(), x),
    lambda L, x: L.gather(x, 0, L.tensor([1, 0])), lambda L, x: x.gather(0, L.tensor([9])),
    lambda L, x: L.take_along_dim(x, L.tensor([1, 0])),
    lambda L, x: L.take_along_dim(x[None], L.tensor([[1, 0]]), 1),
    lambda L, x: x.scatter(0, L.tensor([1]), x), lambda L, x: x.scatter(0, L.tensor([1]), 2.0),
    lambda L, x: x.scatter(0, L.tensor([1]), x, reduce="add"),
    lambda L, x: x.scatter(0, L.tensor([9]), 2.0, reduce="multiply"),
    lambda L, x: x.clone().scatter_(0, L.tensor([1]), x),
    lambda L, x: x.scatter_add(0, L.tensor([9]), x),
    lambda L, x: x.scatter_reduce(0, L.tensor([1]), x, "sum"),
    lambda L, x: x.scatter_reduce(0, L.tensor([1]), x, "amax", include_self=False),
    lambda L, x: x.scatter(0, L.tensor([1.0]), x),   # (its check first)
    lambda L, x: x.requires_grad_().scatter_(0, L.tensor([1]), x),
])
def test_refused_as_pytorch_issue7(f):
    raises_same(lambda L: f(L, L.tensor([1 + 2j, 3 - 1j, 0.5j, 2], dtype=L.chalf)))


def test_empty_indices_run():
    a = _z(2, 3)
    e = np.zeros((2, 0), np.int64)
    for f in (lambda L, x: L.gather(x, 1, L.from_numpy(e)),
              lambda L, x: L.take_along_dim(x, L.from_numpy(e), 1),
              lambda L, x: x.scatter(1, L.from_numpy(e), x),
              lambda L, x: x.scatter(1, L.from_numpy(e), 2.0),
              lambda L, x: x.scatter_reduce(1, L.from_numpy(e), x, "sum", include_self=False),
              lambda L, x: L.searchsorted(x[0], x[:, :0])):
        both(f, a, strides=False)


_CONVS = [
    ("conv1d", lambda L, x, w, b: L.nn.functional.conv1d(x, w, b), (2, 3, 30), (4, 3, 5)),
    ("conv1d", lambda L, x, w, b: L.nn.functional.conv1d(x[0], w, None, 2, 1), (2, 3, 30),
     (4, 3, 5)),
    ("conv2d", lambda L, x, w, b: L.nn.functional.conv2d(x, w, L.cat([b, b]), padding=1),
     (2, 64, 12, 12), (8, 64, 3, 3)),
    ("conv2d", lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, 2, (1, 2), 2), (2, 6, 11, 9),
     (4, 6, 3, 2)),
    ("conv2d", lambda L, x, w, b: L.nn.functional.conv2d(x, w, b[:2], groups=2), (2, 6, 7, 7),
     (2, 3, 3, 3)),
    ("conv2d", lambda L, x, w, b: L.nn.functional.conv2d(x, w, None, padding="same"),
     (2, 6, 7, 8), (4, 6, 4, 3)),
    ("conv3d", lambda L, x, w, b: L.nn.functional.conv3d(x, w, b, (2, 1, 1), 0, (1, 2, 1)),
     (2, 5, 5, 6, 5), (4, 5, 2, 2, 3)),
    ("conv_transpose1d", lambda L, x, w, b: L.nn.functional.conv_transpose1d(x, w, b[:3]),
     (2, 3, 10), (3, 3, 3)),
    ("conv_transpose2d", lambda L, x, w, b: L.nn.functional.conv_transpose2d(x, w, b, 2, 1, 1),
     (2, 24, 5, 6), (24, 4, 3, 3)),
    ("conv_transpose2d", lambda L, x, w, b: L.nn.functional.conv_transpose2d(
        x, w, None, (1, 2), 0, 0, 3, 2), (2, 12, 6, 5), (12, 2, 3, 2)),
    ("conv_transpose3d", lambda L, x, w, b: L.nn.functional.conv_transpose3d(x, w, b[:3], 2),
     (2, 10, 3, 4, 3), (10, 3, 2, 3, 2)),
]


@pytest.mark.parametrize("case", range(len(_CONVS)))
def test_convolutions_bits(case):
    """PyTorch convolves complex32 with three float16 convolutions (Gauss's trick) in its slow
    CPU kernels; their float32 reductions and roundings are ember._chalf_conv's."""
    _, f, xs, ws = _CONVS[case]
    x, w, b = _z(*xs), _z(*ws, scale=0.5), _z(4)
    x.reshape(-1)[:len(SPECIAL)] = SPECIAL   # (infinities and NaNs spread as PyTorch's do)
    both(f, x, w, b)
    # gradients, recorded as PyTorch records them (ConvolutionBackward0 nodes under the Gauss
    # composite): the input's bit for bit; the weight's and the bias's come from ember's
    # float16 backward (rounded once from float32), PyTorch's from CPU-dependent vectorised
    # reductions, so they agree to a few float16 ulps
    x = _z(*xs)
    cot = _z(*f(torch, *[torch.from_numpy(a).chalf() for a in (x, w, b)]).shape)
    res = []
    for L in LIBS:
        t = [L.from_numpy(a.copy()).chalf().requires_grad_() for a in (x, w, b)]
        out = f(L, *t)
        c = L.from_numpy(cot.copy()).chalf()
        gs = L.autograd.grad(out, t, c, allow_unused=True)
        gx = L.autograd.grad(f(L, t[0], t[1].detach(), t[2].detach()), t[0], c)[0]
        res.append((out, gx, gs, out.grad_fn.name(), out.grad_fn.next_functions[0][0].name()))
    same(res[0][0], res[1][0], strides=False)
    same(res[0][1], res[1][1], strides=False)
    assert res[0][3:] == res[1][3:]
    tx, tw = _z(*xs), _z(*ws)   # forward AD: the tangent's float16 convolutions, bit for bit
    tan = []
    for L in LIBS:
        fw = L.autograd.forward_ad
        with fw.dual_level():
            X = fw.make_dual(L.from_numpy(x.copy()).chalf(), L.from_numpy(tx.copy()).chalf())
            W = fw.make_dual(L.from_numpy(w.copy()).chalf(), L.from_numpy(tw.copy()).chalf())
            tan.append(fw.unpack_dual(f(L, X, W, L.from_numpy(b.copy()).chalf())).tangent)
    same(tan[0], tan[1], strides=False)
    for ge, gt in zip(res[0][2], res[1][2]):
        assert (ge is None) == (gt is None)
        if ge is not None:
            assert ge.dtype is ember.chalf and gt.dtype is torch.chalf
            e, t = _bits(ge), _bits(gt)
            np.testing.assert_allclose(e, t, rtol=0, atol=4e-3 * np.abs(t).max())


def test_matrix_norm_and_cond():
    a = _z(3, 4, 5)
    for o in ("fro", 1, -1, float("inf"), -float("inf")):   # (vector norms and amax/amin)
        both(lambda L, x: L.linalg.matrix_norm(x, o), a, strides=False)
        both(lambda L, x: L.linalg.matrix_norm(x, o, dim=(0, 2), keepdim=True), a,
             strides=False)
        both(lambda L, x: L.linalg.norm(x[0], o), a, strides=False)
    for o in ("nuc", 2, -2, 3, "abc"):   # (the SVD-based ones refuse half precision)
        raises_same(lambda L: L.linalg.matrix_norm(L.ones(2, 2, dtype=L.chalf), o))
    raises_same(lambda L: L.norm(L.ones(2, 2, dtype=L.chalf), "nuc"))
    for shape in ((2, 2), (2, 3), (0, 2, 2), (2, 3, 0), (2, 0, 0)):
        for p in (None, 2, -2, 1, -1, float("inf"), "fro", "nuc", 3):
            def f(L):
                return L.linalg.cond(L.ones(shape, dtype=L.chalf), p)
            try:
                t = f(torch)
            except Exception:   # noqa: BLE001 -- compared by raises_same
                raises_same(f)
            else:
                same(f(ember), t)


@pytest.mark.parametrize("f", [
    lambda L, x: L.take(x, L.tensor([0, 9])), lambda L, x: x.put(L.tensor([0]), x[:1]),
    lambda L, x: x.put(L.tensor([0]), x[:1], accumulate=True),
    lambda L, x: L.rot90(x.reshape(2, 2)), lambda L, x: L.rot90(x.reshape(2, 2), 2),
    lambda L, x: L.unique(x), lambda L, x: L.unique(x[:0]), lambda L, x: L.unique(x, dim=0),
    lambda L, x: L.unique_consecutive(x), lambda L, x: x.masked_scatter(x.abs() > 9, x),
    lambda L, x: x.clone().masked_scatter_(x.abs() > 1, x),
    lambda L, x: L.nn.functional.pixel_shuffle(x.reshape(1, 4, 1, 1), 2),
    lambda L, x: L.nn.functional.pixel_unshuffle(x.reshape(1, 1, 2, 2), 2),
    lambda L, x: L.nn.functional.channel_shuffle(x.reshape(1, 4, 1, 1), 2),
    lambda L, x: L.nan_to_num(x), lambda L, x: L.nan_to_num(x[:0].requires_grad_()),
    lambda L, x: L.equal(x, x), lambda L, x: L.equal(x, x.clone()),
    lambda L, x: L.equal(x, x.conj()), lambda L, x: L.equal(x, x.real),
    lambda L, x: L.linalg.cross(x[:3], x[1:]), lambda L, x: L.lerp(x, x, x),
    lambda L, x: L.lerp(x, x, x.real), lambda L, x: L.nn.functional.linear(x, x[None]),
    lambda L, x: L.einsum("i,i->", x, x), lambda L, x: L.eye(2, dtype=L.chalf),
    lambda L, x: L.linalg.matrix_power(x.reshape(2, 2), 0),
    lambda L, x: L.nn.functional.dropout(x, 0.5),
    lambda L, x: L.nn.functional.dropout2d(x.reshape(1, 2, 2, 1), 0.5),
    lambda L, x: L.nn.functional.interpolate(x.reshape(1, 1, 4), size=8),
    lambda L, x: L.nn.functional.interpolate(x.reshape(1, 1, 4, 1, 1), size=(8, 1, 1)),
    lambda L, x: L.nn.functional.interpolate(x.reshape(1, 1, 4), size=8, mode="nearest-exact"),
])
def test_refused_as_pytorch_more(f):
    raises_same(lambda L: f(L, L.tensor([1 + 2j, 3 - 1j, 0.5j, 2], dtype=L.chalf)))


@pytest.mark.parametrize("name", [
    "cholesky", "cholesky_inverse", "cholesky_solve", "linalg.ldl_factor_ex",
    "linalg.matrix_rank", "geqrf", "linalg.lu", "linalg.lu_factor_ex", "linalg.vecdot",
    "triangular_solve", "linalg.inv", "linalg.slogdet", "logdet", "linalg.det", "det",
    "linalg.matrix_exp", "linalg.qr", "linalg.cholesky", "linalg.cholesky_ex", "linalg.lstsq",
    "linalg.lu_factor", "linalg.solve", "linalg.solve_ex", "linalg.eig", "linalg.eigvals",
    "linalg.tensorsolve", "linalg.householder_product", "linalg.lu_solve",
    "linalg.solve_triangular"])
def test_linalg_refused_as_pytorch(name):
    def f(L):
        x = L.tensor([[1 + 2j, 3 - 1j], [0, -1j]], dtype=L.chalf)
        b = L.ones(2, 1, dtype=L.chalf)
        fn = L
        for part in name.split("."):
            fn = getattr(fn, part)
        extra = {"cholesky_solve": (b, x), "triangular_solve": (b, x), "linalg.lstsq": (x, b),
                 "linalg.solve": (x, b), "linalg.solve_ex": (x, b), "linalg.vecdot": (x, x),
                 "linalg.tensorsolve": (x, b[:, 0]), "linalg.householder_product": (x, x[0]),
                 "linalg.lu_solve": (x, L.tensor([1, 2], dtype=L.int32), b)}
        if name == "linalg.solve_triangular":
            return fn(x, b, upper=True)
        return fn(*extra.get(name, (x,)))
    raises_same(f)


def test_all_any_equal_conj_physical():
    a = np.array([[complex(-0.0, 0), complex(0, -0.0)], [1j, complex(np.nan, 0)],
                  [0, 0], [2, 1e-7]], np.complex64)
    for f in (lambda L, x: x.all(), lambda L, x: x.any(), lambda L, x: x.all(1),
              lambda L, x: L.any(x, 0, keepdim=True), lambda L, x: x[:0].all(),
              lambda L, x: L.all(x, 1, out=L.empty(4, dtype=L.bool)),
              lambda L, x: x.clone().conj_physical_(), lambda L, x: x.conj_physical(),
              lambda L, x: L.rot90(x, 3), lambda L, x: L.rot90(x, 1, (1, 0)),
              lambda L, x: L.take(x, L.zeros(0, dtype=L.int64)),
              lambda L, x: x.put(L.zeros(0, dtype=L.int64), x[:0, 0]),
              lambda L, x: x.scatter_add(0, L.zeros(0, 2, dtype=L.int64), x),
              lambda L, x: L.nn.functional.pixel_shuffle(x[:0].reshape(0, 4, 1, 1), 2)):
        both(f, a, strides=False)
    got = []
    for L in LIBS:
        x = L.from_numpy(a.copy()).chalf()
        got.append((L.equal(x, x.cfloat()), L.equal(x[2:], x[2:].cfloat()), L.equal(x, x.t()),
                    L.equal(x[0], x)))
    assert got[0] == got[1] == (False, True, False, False), got   # (NaN != NaN)


def test_index_reduce():
    """Only prod runs (on matrices and up): each source slice multiplied in turn, rounded."""
    a, s = _z(5, 6), _z(7, 6)
    a.reshape(-1)[:13] = SPECIAL
    ix = [0, 2, 0, 4, 0, 2, 1]
    both(lambda L, x, y: x.index_reduce(0, L.tensor(ix), y, "prod"), a, s)
    both(lambda L, x, y: x.clone().index_reduce_(0, L.tensor(ix), y, "prod"), a, s)
    both(lambda L, x, y: x.index_reduce(1, L.tensor([1, 1, 5, 1]), y[:5, :4], "prod"), a, s)
    for red in ("mean", "amax", "amin"):
        raises_same(lambda L: L.ones(3, 2, dtype=L.chalf).index_reduce(
            0, L.tensor([0]), L.ones(1, 2, dtype=L.chalf), red))
        both(lambda L, x, y: x.index_reduce(0, L.zeros(0, dtype=L.int64), y[:0], red), a, s)
    raises_same(lambda L: L.ones(3, 2, dtype=L.chalf).index_reduce(
        0, L.zeros(0, dtype=L.int64), L.ones(0, 2, dtype=L.chalf), "prod", include_self=False))
    for f in (lambda L: L.ones(3, dtype=L.chalf).index_reduce(0, L.tensor([0, 1]),
                                                             L.ones(2, dtype=L.chalf), "prod"),
              lambda L: L.ones((), dtype=L.chalf).index_reduce(0, L.tensor([0]),
                                                              L.ones((), dtype=L.chalf), "prod")):
        raises_same(f)
    for dt in ("chalf", "cfloat"):   # (PyTorch's autograd refuses complex outputs here)
        raises_same(lambda L: L.ones(3, 2, dtype=getattr(L, dt), requires_grad=True).index_reduce(
            0, L.tensor([0]), L.ones(1, 2, dtype=getattr(L, dt)), "prod"))
