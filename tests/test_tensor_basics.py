"""Tensor basics: creation functions, devices (cpu, meta), metadata, conversions (vs PyTorch)."""
import numpy as np
import pytest
import torch

import ember
from helpers import both, raises_same

# ---- creation ----------------------------------------------------------------------------

@pytest.mark.parametrize("data", [
    [1, 2, 3], [1.0, 2], [True, False], [1, 2.5, True], 3, 2.5, True, [[1, 2], [3, 4]],
    [], [[]], [1 + 2j, 3], (1, 2), [np.float32(1.5)], [np.int16(3), 4],
    np.arange(4, dtype=np.int32), np.ones((2, 2), dtype=np.float16), np.array([1, 2], np.uint8),
])
def test_tensor_dtype_inference(data):
    both(lambda M: M.tensor(data))


def test_tensor_with_dtype_and_requires_grad():
    def f(M):
        return [M.tensor([1, 2], dtype=M.float64), M.tensor(3.7, dtype=M.int32),
                M.tensor([1.5], requires_grad=True), M.tensor([[1.0]], dtype=M.float16),
                M.tensor([0.5, 2], dtype=M.bfloat16), M.tensor([1, 0], dtype=M.bool)]
    both(f)
    raises_same(lambda: ember.tensor([1, 2], requires_grad=True),
                lambda: torch.tensor([1, 2], requires_grad=True))
    for bad in ([[1, 2], [3]], [[1], [2, 3]], [[[1, 2], [3, 4]], [[5, 6], [7]]], [[1], 2],
                [[1.0], [2.0, 3.0]]):
        raises_same(lambda bad=bad: ember.tensor(bad), lambda bad=bad: torch.tensor(bad))


def test_tensor_copies_as_tensor_and_from_numpy_share():
    def f(M):
        a = np.arange(6.0).reshape(2, 3)
        t = M.tensor(a)
        s = M.as_tensor(a)
        n = M.from_numpy(a)
        c = M.as_tensor(a, dtype=M.float32)
        a[0, 0] = 100.0
        x = M.ones(3)
        r = [t, s, n, c, M.as_tensor(x) is x, M.as_tensor(x, dtype=M.float64).dtype,
             M.as_tensor([1, 2]), n.is_contiguous()]
        n[1, 1] = -1.0
        r.append(a[1, 1])
        return r
    both(f)
    raises_same(lambda: ember.from_numpy(np.array(["a"])), lambda: torch.from_numpy(
        np.array(["a"])))


def test_from_numpy_keeps_strides():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    e, t = ember.from_numpy(a), torch.from_numpy(a)
    assert e.stride() == t.stride() and e.shape == t.shape
    assert e.data_ptr() == a.__array_interface__["data"][0]


SIZES = [(), (0,), (3,), (2, 3), (2, 0, 4)]


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty", "rand", "randn"])
@pytest.mark.parametrize("size", SIZES)
def test_filled_creation_shapes_and_dtypes(fn, size):
    def f(M):
        F = getattr(M, fn)
        a = F(*size) if size else F(size)
        b = F(size, dtype=M.float64)
        c = F(list(size), requires_grad=True)
        r = [tuple(a.shape), a.dtype, b.dtype, c.requires_grad, c.is_leaf, a.stride()]
        if fn in ("zeros", "ones"):
            r += [a, F(size, dtype=M.int64)]
        return r
    both(f)


def test_full_arange_linspace_eye():
    def f(M):
        return [M.full((2, 3), 7), M.full((2,), 1.5), M.full((2,), True), M.full((1,), 2,
                                                                                dtype=M.float64),
                M.arange(5), M.arange(1, 4), M.arange(0, 1, 0.25), M.arange(5.0),
                M.arange(10, 0, -3), M.arange(3, dtype=M.float32),
                M.linspace(0, 1, 5), M.linspace(-1, 1, 4, dtype=M.float64),
                M.linspace(0, 10, 3, dtype=M.int64), M.linspace(2, 2, 1),
                M.eye(3), M.eye(2, 3), M.eye(2, dtype=M.int64)]
    both(f)
    raises_same(lambda: ember.arange(0, 5, 0), lambda: torch.arange(0, 5, 0))
    raises_same(lambda: ember.arange(5, 0, 1), lambda: torch.arange(5, 0, 1))


def test_randint_and_random_ranges():
    def f(M):
        a = M.randint(0, 5, (100,))
        b = M.randint(3, (2, 3))
        c = M.randint(2, 4, (5,), dtype=M.int32)
        d = M.rand(1000)
        n = M.randn(2, 3, dtype=M.float64)
        return [a.dtype, tuple(a.shape), bool(((a >= 0) & (a < 5)).all()), b.dtype,
                tuple(b.shape), c.dtype, bool(((d >= 0) & (d < 1)).all()), n.dtype]
    both(f)


def test_manual_seed_reproducible():
    ember.manual_seed(3)
    a = ember.randn(4)
    ember.manual_seed(3)
    b = ember.randn(4)
    assert a.tolist() == b.tolist()


def test_like_functions():
    def f(M):
        x = M.tensor(np.arange(6.0).reshape(2, 3)).t()
        i = M.tensor([[1, 2]], dtype=M.int32)
        return [M.zeros_like(x), M.ones_like(i), M.full_like(x, 3), M.empty_like(i).shape,
                M.zeros_like(x, dtype=M.int64), M.ones_like(x, requires_grad=True),
                M.rand_like(x).shape, M.rand_like(x).dtype, M.randn_like(x).dtype,
                M.randint_like(i, 5).dtype, M.full_like(i, 2.7), M.zeros_like(x).stride(),
                M.ones_like(x).is_contiguous()]
    both(f)


def test_new_functions():
    def f(M):
        x = M.ones(2, dtype=M.float64)
        i = M.ones(2, dtype=M.int16)
        return [x.new_zeros(3), x.new_ones((2, 2)), x.new_full((2,), 5), x.new_empty(4).shape,
                x.new_tensor([1, 2]), i.new_zeros(2), i.new_tensor([1.5]),
                x.new_zeros(2, dtype=M.int64), x.new_ones(1, requires_grad=True),
                i.new_full((1,), 3)]
    both(f)


def test_legacy_constructors():
    def f(M):
        return [M.Tensor(2, 3).shape, M.Tensor(2, 3).dtype, M.Tensor([1, 2]),
                M.FloatTensor([1, 2]), M.DoubleTensor([1.5]), M.LongTensor([1, 2]),
                M.LongTensor(3).shape, M.IntTensor([4]), M.BoolTensor([1, 0]),
                M.ByteTensor([1]), isinstance(M.ones(2), M.FloatTensor),
                isinstance(M.ones(2), M.DoubleTensor), isinstance(M.ones(2), M.Tensor),
                M.ones(2).type(), M.ones(2, dtype=M.int64).type(),
                M.ones(2).type(M.DoubleTensor).dtype, M.ones(2).type("torch.IntTensor").dtype]
    both(f)


# ---- devices ---------------------------------------------------------------------------------

def test_cpu_device_flags():
    def f(M):
        x = M.ones(2)
        return [x.device, str(x.device), x.is_cuda, x.is_meta, x.is_quantized, x.is_cpu,
                x.get_device(), M.device("cpu"), M.device("cpu") == x.device,
                x.cpu() is x, x.to("cpu") is x, x.is_sparse]
    both(f)


def test_meta_tensors_keep_shape_and_dtype():
    def f(M):
        m = M.ones(2, 3, device="meta")
        z = M.zeros(4, dtype=M.int64, device="meta")
        e = M.empty(3, 2, device="meta", requires_grad=True)
        r = [m.device, m.is_meta, m.is_cuda, tuple(m.shape), m.dtype, z.dtype, e.requires_grad]
        for y in [m * 2, m + m, m.exp(), m.sum(0), m.t(), m.view(6), m.float().double(),
                  (z + 1.5), m.unsqueeze(0).expand(2, 2, 3), M.ones(3).to("meta"),
                  M.zeros_like(m), e * e]:
            r.append([y.device, tuple(y.shape), y.dtype, y.is_meta, y.requires_grad])
        return r
    both(f)
    raises_same(lambda: ember.ones(2, device="meta").item(),
                lambda: torch.ones(2, device="meta").item())
    raises_same(lambda: ember.ones(2, device="meta").numpy(),
                lambda: torch.ones(2, device="meta").numpy())


# ---- metadata --------------------------------------------------------------------------------

def test_metadata():
    def f(M):
        x = M.tensor(np.arange(24.0).reshape(2, 3, 4), dtype=M.float32)
        t = x.transpose(0, 2)
        return [x.shape, x.size(), x.size(1), x.size(-1), x.dim(), x.ndim, x.numel(),
                x.nelement(), x.stride(), x.stride(0), t.stride(), x.is_contiguous(),
                t.is_contiguous(), t.contiguous().is_contiguous(), t.contiguous().stride(),
                x.element_size(), M.ones(2, dtype=M.float64).element_size(),
                M.ones(2, dtype=M.int16).element_size(), x.itemsize, x.nbytes,
                x.storage_offset(), x[1].storage_offset(), type(x.shape).__name__,
                x.is_floating_point(), x.is_complex(), x.is_signed(),
                M.ones(1, dtype=M.uint8).is_signed(), len(x), x.dim() == len(x.shape)]
    both(f)
    raises_same(lambda: ember.ones(2, 3).size(2), lambda: torch.ones(2, 3).size(2))
    raises_same(lambda: len(ember.tensor(1.0)), lambda: len(torch.tensor(1.0)))


def test_contiguous_and_data_ptr():
    def f(M):
        x = M.ones(3, 4)
        t = x.t()
        c = t.contiguous()
        return [x.contiguous() is x, c is t, c.data_ptr() == t.data_ptr(),
                x.data_ptr() == t.data_ptr(), c.stride(), c._base is None,
                M.ones(3, 1).t().is_contiguous(), M.ones(0, 2).t().is_contiguous()]
    both(f)


def test_transpose_properties():
    data = np.arange(24.0).reshape(2, 3, 4)
    cdata = data[0] + 1j * data[1]

    def f(M):
        x = M.tensor(data)
        m = M.tensor(data[0])
        c = M.tensor(cdata)
        v = M.tensor([1.0, 2.0])
        return [m.T, m.mT, m.H, m.mH, x.mT, x.mT.stride(), c.H, c.mH, c.real, c.imag,
                c.real.stride(), m.real is m, v.T, M.tensor(5.0).T,
                c.real.data_ptr() == c.data_ptr()]
    both(f)
    raises_same(lambda: ember.ones(3).mT, lambda: torch.ones(3).mT)
    raises_same(lambda: ember.ones(3).imag, lambda: torch.ones(3).imag)


# ---- item, tolist, numpy --------------------------------------------------------------------

def test_item_tolist():
    def f(M):
        return [M.tensor(2.5).item(), M.tensor([7]).item(), M.tensor([[True]]).item(),
                type(M.tensor(3).item()).__name__, type(M.tensor(3.0).item()).__name__,
                M.tensor([[1, 2], [3, 4]]).tolist(), M.tensor(1.5).tolist(),
                M.tensor([1.5, 2], dtype=M.float16).tolist(),
                M.tensor([1 + 2j]).tolist(), M.ones(2, requires_grad=True).tolist(),
                M.ones(1, requires_grad=True).item(), float(M.tensor([2.0])),
                int(M.tensor(3.9)), bool(M.tensor([0.0]))]
    both(f)
    raises_same(lambda: ember.ones(2).item(), lambda: torch.ones(2).item())
    raises_same(lambda: bool(ember.ones(2)), lambda: bool(torch.ones(2)))


def test_numpy_shares_memory():
    def f(M):
        x = M.zeros(3)
        a = x.numpy()
        a[0] = 5.0
        x[1] = 7.0
        t = M.tensor(np.arange(6.0).reshape(2, 3)).t()
        n = t.numpy()
        return [x, a.tolist(), n.strides, n.dtype.name, M.ones(2, dtype=M.int16).numpy().dtype.name,
                M.ones(2, requires_grad=True).detach().numpy().tolist(),
                M.ones(2, requires_grad=True).numpy(force=True).tolist()]
    both(f)
    err = raises_same(lambda: ember.ones(2, requires_grad=True).numpy(),
                      lambda: torch.ones(2, requires_grad=True).numpy())
    assert "requires grad" in str(err)
    raises_same(lambda: np.asarray(ember.ones(2, requires_grad=True)),
                lambda: np.asarray(torch.ones(2, requires_grad=True)))


# ---- legacy Tensor.new ---------------------------------------------------------------------

@pytest.mark.parametrize("args", [(2, 3), (), (np.int64(2), 3), (0,), ("size",)])
def test_tensor_new_sizes(args):
    def f(M):
        t = M.tensor([[1.5, 2]], dtype=M.float64)
        r = t.new(*((M.Size([2, 3]),) if args == ("size",) else args))
        return [r.shape, r.dtype, r.requires_grad]   # uninitialised: metadata only
    both(f)


@pytest.mark.parametrize("data", [
    [1, 2], (1, 2), [1.7, 2], [[1], [2]], np.array([1, 2]), [], (2, 3)])
def test_tensor_new_data(data):
    both(lambda M: M.tensor([[1.5, 2]], dtype=M.float64).new(data))
    both(lambda M: M.tensor([1, 2]).new(data))   # data is cast to self's dtype
    both(lambda M: M.ones(2, dtype=M.float32).new(data, device="cpu"))


def test_tensor_new_of_tensor_aliases():
    def f(M):
        t = M.zeros(1, dtype=M.float64)
        y = M.tensor([1.0, 2.0], dtype=M.float64, requires_grad=True)
        r = t.new(y)
        r2 = t.new(y * 2)
        with M.no_grad():
            r.add_(1)
        return [r, r is y, r._base is y, y._version, r.grad_fn.name(), r2.grad_fn.name(),
                r.is_leaf, t.new(M.tensor(3.0, dtype=M.float64))]
    both(f)


@pytest.mark.parametrize("case", [
    ((ember.tensor([1, 2], dtype=ember.int32),), {}),
    ((ember.tensor(2),), {}),
    ((ember.tensor([1.0], dtype=ember.float64),), {"device": "cpu"}),
    (([1, 2], 3), {}), ((2.5,), {}), ((True,), {}), ((None,), {}), (("ab",), {}),
    ((), {"dtype": ember.float32}), ((2,), {"requires_grad": True}), ((3,), {"foo": 1}),
    ((2, [1]), {}), ((-1,), {}), ((1.0, 2), {}), ((2,), {"dtype": ember.int64}),
    ((ember.tensor([2.0], dtype=ember.float64), 3), {}),
])
def test_tensor_new_errors(case):
    args, kwargs = case

    def conv(v, M):
        if isinstance(v, ember.Tensor):
            return M.tensor(v.tolist(), dtype=getattr(M, str(v.dtype).split(".")[1]))
        if isinstance(v, ember.dtype):
            return getattr(M, str(v).split(".")[1])
        return v

    def call(M):
        t = M.zeros(1, dtype=M.float64)
        return t.new(*[conv(a, M) for a in args], **{k: conv(v, M) for k, v in kwargs.items()})
    raises_same(lambda: call(ember), lambda: call(torch))


_KW_FORMS = {
    "permute(dims=)": lambda L, x: x.permute(dims=(1, 0)),
    "reshape(shape=)": lambda L, x: x.reshape(shape=(3, 2)),
    "view(size=)": lambda L, x: x.view(size=(3, 2)),
    "view(dtype=)": lambda L, x: x.view(dtype=L.int32),
    "expand(size=)": lambda L, x: x[:1].expand(size=(4, 3)),
    "repeat(repeats=)": lambda L, x: x.repeat(repeats=(2, 1)),
    "tile(dims=)": lambda L, x: x.tile(dims=(2,)),
    "new_zeros(size=)": lambda L, x: x.new_zeros(size=(2,)),
    "new_ones(size=)": lambda L, x: x.new_ones(size=[2, 2]),
    "new_empty(size=)": lambda L, x: x.new_empty(size=(2,)).shape,
    "sum_to_size(size=)": lambda L, x: x.sum_to_size(size=(1, 3)),
    "flip(dims=)": lambda L, x: x.flip(dims=(0,)),
    "split(split_size=)": lambda L, x: x.split(split_size=1),
    "torch.reshape(shape=)": lambda L, x: L.reshape(x, shape=(6,)),
    "torch.permute(dims=)": lambda L, x: L.permute(x, dims=(1, 0)),
    # misuse: a bare int by keyword, both forms at once, nothing at all
    "reshape(shape=6)": lambda L, x: x.reshape(shape=6),
    "permute(dims=0)": lambda L, x: x[0].permute(dims=0),
    "new_zeros(size=2)": lambda L, x: x.new_zeros(size=2),
    "new_zeros(2, size=(2,))": lambda L, x: x.new_zeros(2, size=(2,)),
    "flip(0, dims=1)": lambda L, x: x.flip(0, dims=1),
    "flip()": lambda L, x: x.flip(),
    "new_zeros()": lambda L, x: x.new_zeros(),
    "new_zeros(pin_memory=True)": lambda L, x: x.new_zeros(2, pin_memory=True),
}


@pytest.mark.parametrize("name", list(_KW_FORMS))
def test_keyword_forms_of_varargs_methods(name):
    """Methods taking sizes or dims as varargs take them by PyTorch's keyword too (new_zeros'
    ``size=`` was silently dropped, giving a 0-dim tensor), with PyTorch's errors."""
    f = _KW_FORMS[name]
    got = []
    for L in (ember, torch):
        x = L.arange(6.).reshape(2, 3)
        try:
            r = f(L, x)
            got.append(("ok", [t.tolist() for t in r] if isinstance(r, tuple) else
                        r.tolist() if hasattr(r, "tolist") else tuple(r)))
        except Exception as e:  # noqa: BLE001 - the exception itself is compared
            got.append((type(e).__name__, str(e).replace("torch", "ember")))
    assert got[0] == got[1]


@pytest.mark.parametrize("mf", ["channels_last", "contiguous_format", "preserve_format"])
def test_cpu_honours_memory_format(mf):
    e = ember.randn(2, 3, 4, 5)
    t = torch.randn(2, 3, 4, 5)
    ye, yt = e.cpu(memory_format=getattr(ember, mf)), t.cpu(memory_format=getattr(torch, mf))
    assert ye.stride() == yt.stride() and (ye is e) == (yt is t)
