"""Matrix products: matmul (all ranks), mm, bmm, mv, dot, vdot, outer, addmm, addmv, baddbmm
and einsum.

Each product runs one NumPy call (``np.matmul`` / ``np.einsum``). ``matmul`` follows PyTorch's
routing through dot / mv / mm / fold / bmm: the view ops it applies to the operands run for real
(so backward saves what PyTorch saves), the product and its final view are one node;
``_matmul_route`` gives that node's name without running anything (for linear and attention).
The VJPs are written once for both namespaces and skip inputs that need no gradient.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import _dtype as D
from .._batched import BatchedArray as _BA
from .._tensor import Tensor, Version, _make, _scalar_name, _view_of
from ..autograd.grad_mode import STATE
from . import _opmath as _OM
from ._dispatch import HALF_NP, _type_name
from ._out import with_out
from ._registry import Op, _edge_rec, apply, method, ns_fn

__all__ = [
    "addmm",
    "addmv",
    "baddbmm",
    "bmm",
    "dot",
    "einsum",
    "ger",
    "inner",
    "matmul",
    "mm",
    "mv",
    "outer",
    "vdot",
]


# ---- namespace helpers ---------------------------------------------------------------------

def _mH_np(x):
    x = np.swapaxes(x, -1, -2)
    return np.conj(x) if x.dtype.kind == "c" else x


def _blas(x):
    """``x`` laid out so that NumPy's matmul can hand it to BLAS (broadcast gradients have zero
    strides, which make it fall back to a slow loop)."""
    f = x.flags
    if f.c_contiguous or f.f_contiguous:
        return x
    st = x.strides
    if x.ndim >= 2 and 0 not in st[-2:] and x.itemsize in (abs(st[-1]), abs(st[-2])) and (
            0 not in st[:-2]):
        return x
    if type(x) is _BA:      # a batched forward-mode tangent: its matmul rule lays it out
        return x
    return np.ascontiguousarray(x)


def _np_matmul(a, b):
    if a.dtype in HALF_NP and type(a) is np.ndarray and type(b) is np.ndarray:
        return _half_matmul(a, b)
    return np.matmul(_blas(a), _blas(b))


def _half_matmul(a, b):
    """PyTorch's CPU GEMM for half types: products accumulated in float32, rounded once; for
    float16 in its reference BLAS's summation order where ember reproduces it (_opmath)."""
    r = _OM.half_gemm(a, b)
    if r is not None:
        return r
    return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)


ns_fn("matmul", _np_matmul, lambda a, b: matmul(a, b))
ns_fn("mH", _mH_np, lambda x: x.mH)
ns_fn("unsqueeze", np.expand_dims, lambda x, d: x.unsqueeze(d))
ns_fn("squeeze", np.squeeze, lambda x, d: x.squeeze(d))
_PATHS: dict = {}


def _np_einsum(eq, *ops):
    """``np.einsum`` with a contraction path (BLAS where it helps), cached per equation and
    shapes."""
    h = next((o.dtype for o in ops if o.dtype in HALF_NP), None)
    if h is not None and all(type(o) is np.ndarray for o in ops):
        if len(ops) == 2 and ops[0].dtype == ops[1].dtype:
            r = _OM.half_einsum2(eq, *ops)    # PyTorch's permuted bmm (_opmath)
            if r is not None:
                return r
        # float32 accumulation, one rounding (as PyTorch's bmm for half types)
        return np.asarray(_np_einsum(eq, *(o.astype(np.float32) for o in ops))).astype(h)
    if len(ops) < 2:
        return np.einsum(eq, *ops)
    key = (eq,) + tuple(o.shape for o in ops)
    path = _PATHS.get(key)
    if path is None:
        if len(_PATHS) > 4096:
            _PATHS.clear()
        path = _PATHS[key] = np.einsum_path(eq, *ops, optimize="greedy")[0]
    return np.einsum(eq, *ops, optimize=path)


ns_fn("einsum", _np_einsum,
      lambda eq, *ops: einsum(eq, *ops))
ns_fn("const", lambda a: a, lambda a: _make(a, Version(), False, None))


# ---- matmul family: one forward, one VJP, the node name per route --------------------------

def _missing_rank(g_ndim: int, other: int) -> int:
    """The rank of the operand that was not saved (its gradient is not needed), from the
    gradient's rank and the other operand's: exact where the VJP's routing depends on it
    (rank 1), at least 2 otherwise."""
    if other == 1:
        return g_ndim + 1
    return 1 if g_ndim == other - 1 else max(g_ndim, 2)


def _matmul_vjp(ns, g, need, a, b):
    # an operand is saved only when the other's gradient needs it, as in PyTorch
    if a is None and b is None:   # no input leads anywhere (e.g. an inference-mode view)
        return None, None
    da = a.ndim if a is not None else _missing_rank(g.ndim, b.ndim)
    db = b.ndim if b is not None else _missing_rank(g.ndim, a.ndim)
    ga = gb = None
    if need[0]:
        if db == 1:
            ga = ns.unsqueeze(g, -1) * ns.conj(b)
        elif da == 1:
            ga = ns.squeeze(ns.matmul(ns.unsqueeze(g, -2), ns.mH(b)), -2)
        else:
            ga = ns.matmul(g, ns.mH(b))
    if need[1]:
        if da == 1:
            gb = g * ns.conj(a) if db == 1 else ns.unsqueeze(ns.conj(a), -1) * ns.unsqueeze(g, -2)
        elif db == 1:
            gb = ns.squeeze(ns.matmul(ns.mH(a), ns.unsqueeze(g, -1)), -1)
        elif db == 2 and da > 2:
            # fold the batch into the rows: one GEMM instead of a batch and a sum
            k, m = a.shape[-1], g.shape[-1]
            gb = ns.matmul(ns.mH(a.reshape(-1, k)), g.reshape(-1, m))
        else:
            gb = ns.matmul(ns.mH(a), g)
    return ga, gb


def _bilinear_jvp(f):
    """The JVP of a product ``f(a, b)`` linear in each operand: f(ta, b) + f(a, tb)."""
    def jvp(ns, tangents, primals, outs, *params):
        ta, tb = tangents[0], tangents[1]
        a, b = primals[0], primals[1]
        r = None
        if ta is not None:
            r = f(ta, b)
        if tb is not None:
            s = f(a, tb)
            r = s if r is None else r + s
        return r
    return jvp


_matmul_jvp = _bilinear_jvp(lambda a, b: matmul(a, b))


def _mk(name, node=None, names=None):
    return Op(name, _np_matmul, _matmul_vjp, _matmul_jvp, saves=(0, 1), node=node, names=names,
              save_if=(1, 0))


DOT = _mk("dot", names=("self", "tensor"))
MV = _mk("mv", names=("self", "vec"))
MM = _mk("mm", names=("self", "mat2"))
BMM = _mk("bmm", names=("self", "mat2"))


def _mm_vjp_tb(ns, g, need, a, b):
    """mm's VJP when mat2 is a transposed matrix (``x @ w.t()``): mat2's gradient is made in
    mat2's own layout, as PyTorch's mm backward does from mat2's strides, so that ``t()``'s
    backward hands ``w`` a gradient in w's layout which its ``.grad`` adopts without a copy."""
    ga = _matmul_vjp(ns, g, (need[0], False), a, b)[0] if need[0] else None
    gb = ns.mH(ns.matmul(ns.mH(g), a)) if need[1] else None
    return ga, gb


MM_TB = Op("mm", _np_matmul, _mm_vjp_tb, _matmul_jvp, saves=(0, 1), names=("self", "mat2"),
           save_if=(1, 0))


def _mm_op(b) -> Op:
    """MM, or MM_TB when ``b`` (mat2's array) is laid out as a transposed matrix."""
    f = b.flags
    return MM_TB if f.f_contiguous and not f.c_contiguous else MM


# PyTorch's matmul folds or expands its operands with view ops (reshape, mT, t, unsqueeze,
# expand), multiplies them with mm / mv / bmm and views the product back. Ember runs those view
# ops for real (so the tensors saved for backward are PyTorch's: folded views, or copies where its
# reshape copies) but fuses the product with the last step into one node named after it.

def _swap_np(x):
    return np.swapaxes(x, -1, -2)


ns_fn("swap", _swap_np, lambda x: x.transpose(-1, -2))


def _fold_post(post):
    def fwd(x, y, inner, shape):
        r = _np_matmul(x, y).reshape(shape)
        if post is None:
            return r
        r = np.swapaxes(r, -1, -2)
        return np.ascontiguousarray(r) if post == "clone" else r

    def vjp(ns, g, need, x, y, inner, shape):
        if post is not None:
            g = ns.swap(g)
        return _matmul_vjp(ns, g.reshape(inner), need, x, y)

    def jvp(ns, tangents, primals, outs, inner, shape):
        r = _matmul_jvp(ns, tangents, primals, outs).reshape(shape)
        if post is None:
            return r
        r = r.transpose(-1, -2)
        return r.contiguous() if post == "clone" else r
    return fwd, vjp, jvp


def _mk_fold(name, node, post=None):
    fwd, vjp, jvp = _fold_post(post)
    op = Op(name, fwd, vjp, jvp, saves=(0, 1), node=node, names=("self", "mat2"),
            save_if=(1, 0))
    op.folded = True
    return op


MM_SQUEEZE = _mk_fold("matmul_squeeze", "SqueezeBackward4")
MM_VIEW = _mk_fold("matmul_view", "UnsafeViewBackward0")
MM_T = _mk_fold("matmul_t", "TransposeBackward0", "t")
MM_CLONE = _mk_fold("matmul_clone", "CloneBackward0", "clone")


def _lname(t) -> str:
    return _type_name(t.dtype)


def _not_impl(name: str, t) -> None:
    if t._data.dtype == np.bool_:
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


def _check_dot(a, b, name="dot") -> None:
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D "
                           "tensors")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_lname(a)} and {_lname(b)}")
    n, m = a._data.shape[0], b._data.shape[0]
    if n != m:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
            f"number of elements, but got {n} and {m} elements respectively")
    _not_impl(name, a)


def _check_mv_shapes(in_shape, ms, vs, dts) -> None:
    if len(ms) != 2 or len(vs) != 1 or len(in_shape) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {len(in_shape)}, {len(ms)}, "
                           f"{len(vs)}")
    if ms[1] != vs[0] or ms[0] != in_shape[0]:
        raise RuntimeError(f"size mismatch, got input ({in_shape[0]}), mat ({ms[0]}x{ms[1]}), "
                           f"vec ({vs[0]})")
    if len(set(dts)) > 1:
        n = [_type_name(D._FROM_NP[d]) for d in dts]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {n[0]}, "
                           f"{n[1]}, and {n[2]}")
    if dts[0] == np.bool_:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")


def _check_mv(ms, vs, mdt, vdt) -> None:
    if len(ms) == 2 and len(vs) == 1:
        _check_mv_shapes((ms[0],), ms, vs, (vdt, mdt, vdt))
    else:
        _check_mv_shapes((1,) if len(ms) < 2 else (ms[0],), ms, vs, (vdt, mdt, vdt))


def _check_mm(s1, s2, dt1, dt2, m1_name="self") -> None:
    if len(s1) != 2:
        raise RuntimeError(f"{m1_name} must be a matrix")
    if len(s2) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s1[0]}x{s1[1]} and "
                           f"{s2[0]}x{s2[1]})")
    if dt1 != dt2:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: "
            f"{_scalar_name(D._FROM_NP[dt1])} != {_scalar_name(D._FROM_NP[dt2])}")
    if dt1 == np.bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")


def _check_bmm(s1, s2, dt1, dt2) -> None:
    if len(s1) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(s2) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if s2[0] != s1[0] or s2[1] != s1[2]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{s1[0]}, {s1[2]}] "
            f"but got: [{s2[0]}, {s2[1]}].")
    if dt1 != dt2:
        raise RuntimeError(f"expected scalar type {_type_name(D._FROM_NP[dt1])} but found "
                           f"{_type_name(D._FROM_NP[dt2])}")
    if dt1 == np.bool_:
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _broadcast_shapes(s1, s2) -> tuple:
    n = max(len(s1), len(s2))
    a = (1,) * (n - len(s1)) + tuple(s1)
    b = (1,) * (n - len(s2)) + tuple(s2)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _needs_grad(t) -> bool:
    return t.requires_grad if isinstance(t, Tensor) else t._rg


def _should_fold(a, b) -> bool:
    d1, d2 = a._data.ndim, b._data.ndim
    larger = d1 >= d2
    dim_t1 = d1 if larger else d2
    dim_t2 = d2 if larger else d1
    if not (dim_t1 >= 3 and dim_t2 <= 2):
        return False
    if _needs_grad(b if larger else a):
        return True
    if d1 == 2:
        return False
    t = a._data if larger else np.swapaxes(b._data, -1, -2)
    if t.size == 0:
        return True
    st = [s // t.itemsize for s in t.strides]
    sh = t.shape
    return all(st[i] == st[i + 1] * sh[i + 1] for i in range(dim_t1 - 2))


def _matmul_route(a, b) -> Op:
    """PyTorch's matmul dispatch on operands that need not be tensors (``nn_misc._Operand``): runs
    its checks and gives the op whose node name the result's grad_fn takes."""
    sa, sb = a._data.shape, b._data.shape
    da, db = len(sa), len(sb)
    ta, tb = a._data.dtype, b._data.dtype
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D "
                           f"and {db}D")
    if da == 1 and db == 1:
        _check_dot(a, b)
        return DOT
    if da == 2 and db == 1:
        _check_mv(sa, sb, ta, tb)
        return MV
    if da == 1 and db == 2:
        _check_mm((1,) + sa, sb, ta, tb)
        return MM_SQUEEZE
    if da == 2 and db == 2:
        _check_mm(sa, sb, ta, tb)
        return MM
    if _should_fold(a, b):
        if db > da:  # t1 = b.mT, t2 = a.t() or a
            t1 = sb[:-2] + (sb[-1], sb[-2])
            folded = (_prod(t1[:-1]), t1[-1])
            if da == 2:
                _check_mm(folded, (sa[1], sa[0]), tb, ta)
                n, p = sa[0], sb[-1]
                # an empty product is contiguous whatever its strides (an empty inner dim
                # is not enough: the product still has elements)
                empty = n == 0 or _prod(t1[:-1]) == 0
                return MM_T if n == 1 or p == 1 or empty else MM_CLONE
            _check_mv(folded, sa, tb, ta)
            return MM_VIEW
        folded = (_prod(sa[:-1]), sa[-1])
        if db == 2:
            _check_mm(folded, sb, ta, tb)
        else:
            _check_mv(folded, sb, ta, tb)
        return MM_VIEW
    if da == 3 and db == 3 and sa[0] != sb[0]:
        if sa[0] == 1 and a._rg:
            return _matmul_route(a.squeeze(0), b)
        if sb[0] == 1 and b._rg:
            return _matmul_route(a, b.squeeze(0))
    n = sa[-2] if da > 1 else 1
    m1 = sa[-1]
    m2 = sb[-2] if db > 1 else sb[0]
    p = sb[-1] if db > 1 else 1
    batch = _broadcast_shapes(sa[:max(da - 2, 0)], sb[:max(db - 2, 0)])
    bp = _prod(batch)
    _check_bmm((bp, n, m1), (bp, m2, p), ta, tb)
    return MM_VIEW


def _alias(t: Tensor) -> Tensor:
    """A view of all of ``t`` standing for PyTorch's no-op ``expand`` + ``reshape`` of a batched
    operand: saved for backward instead of ``t``, it shares its version counter and, once ``t`` is
    modified in place, reports an AsStrided history as PyTorch's saved view does. It leads where
    ``t`` does."""
    e = _edge_rec(t)
    v = _view_of(t, t._data)
    if e[0] is not None:
        v._fn, v._onr, v._rg = e[0], e[1], True
    return v


_TENSORDOT_OUT = ("tensordot: Expected the output tensor to have dtype {r}, but got an output "
                  "tensor with dtype {o}")


def matmul(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``torch.matmul``: dot, matrix-vector, matrix-matrix or broadcast batched product, routed
    (checks, folds, saved tensors, node names) as PyTorch's ``_matmul_impl``."""
    if out is not None:
        return with_out(matmul, out, (input, other), dtype="exact")
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        bad = input if not isinstance(input, Tensor) else other
        raise TypeError(f"matmul(): argument '{'input' if bad is input else 'other'}' "
                        f"(position {1 if bad is input else 2}) must be Tensor, not "
                        f"{type(bad).__name__}")
    a, b = input._data, other._data
    sa, sb = a.shape, b.shape
    da, db = len(sa), len(sb)
    if da == 2 and db == 2:
        _check_mm(sa, sb, a.dtype, b.dtype)
        return apply(_mm_op(b), (input, other))
    if da == 3 and db == 3 and sa[0] == sb[0] and STATE.fw_level < 0:
        # bmm of equal batches: PyTorch's expand and reshape are no-ops, whose views stand-ins
        # replace (one node in all)
        _check_bmm(sa, sb, a.dtype, b.dtype)
        if STATE.grad:
            if input._rg or input._base is not None and input.requires_grad:
                input = _alias(input)
            if other._rg or other._base is not None and other.requires_grad:
                other = _alias(other)
        return apply(MM_VIEW, (input, other), (sa[:2] + sb[2:],) * 2)
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D "
                           f"and {db}D")
    ta, tb = a.dtype, b.dtype
    if da == 1 and db == 1:
        _check_dot(input, other)
        return apply(DOT, (input, other))
    if da == 2 and db == 1:
        _check_mv(sa, sb, ta, tb)
        return apply(MV, (input, other))
    if da == 1 and db == 2:
        _check_mm((1,) + sa, sb, ta, tb)
        return apply(MM_SQUEEZE, (input.unsqueeze(0), other), ((1, sb[1]), (sb[1],)))
    if da == 3 and db == 3 and sa[0] != sb[0]:
        if sa[0] == 1 and input.requires_grad:
            return matmul(input.squeeze(0), other)
        if sb[0] == 1 and other.requires_grad:
            return matmul(input, other.squeeze(0))
    if _should_fold(input, other):
        return _matmul_fold(input, other)
    n = sa[-2] if da > 1 else 1
    m1 = sa[-1]
    m2 = sb[-2] if db > 1 else sb[0]
    p = sb[-1] if db > 1 else 1
    batch = _broadcast_shapes(sa[:max(da - 2, 0)], sb[:max(db - 2, 0)])
    bp = _prod(batch)
    _check_bmm((bp, n, m1), (bp, m2, p), ta, tb)
    inner = (bp, n, p)
    x = input.expand(batch + (n, m1)).reshape(bp, n, m1)
    y = (other.unsqueeze(-1) if db == 1 else other).expand(batch + (m2, p)).reshape(bp, m2, p)
    shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    return apply(MM_VIEW, (x, y), (inner, shape))


def _matmul_fold(input: Tensor, other: Tensor) -> Tensor:
    """PyTorch's folded matmul: the larger operand (transposed when it is the second) reshaped
    to a matrix, one mm or mv, the product viewed back (and transposed back)."""
    sa, sb = input._data.shape, other._data.shape
    da, db = len(sa), len(sb)
    ta, tb = input._data.dtype, other._data.dtype
    transpose = db > da
    if transpose:   # t1 = other.mT, t2 = input.t() or input
        s1 = sb[:-2] + (sb[-1], sb[-2])
        folded = (_prod(s1[:-1]), s1[-1])
        if da == 2:
            _check_mm(folded, (sa[1], sa[0]), tb, ta)
        else:
            _check_mv(folded, sa, tb, ta)
    else:
        s1 = sa
        folded = (_prod(sa[:-1]), sa[-1])
        if db == 2:
            _check_mm(folded, sb, ta, tb)
        else:
            _check_mv(folded, sb, ta, tb)
    t1 = (other.mT if transpose else input).reshape(folded)
    t2 = (input.t() if da == 2 else input) if transpose else other
    shape = s1[:-1]
    if t2._data.ndim == 1:
        return apply(MM_VIEW, (t1, t2), (folded[:1], shape))
    p = t2._data.shape[1]
    shape = shape + (p,)
    op = MM_VIEW
    if transpose:   # output.mT.contiguous(): a copy unless the transpose is contiguous already
        op = MM_T if p <= 1 or sb[-1] == 1 or _prod(s1[:-1]) == 0 else MM_CLONE
    return apply(op, (t1, t2), ((folded[0], p), shape))


def mm(input: Tensor, mat2: Tensor, *, out=None) -> Tensor:
    """``torch.mm``: 2-D @ 2-D."""
    if out is not None:
        return with_out(mm, out, (input, mat2), dtype="exact")
    _check_mm(input._data.shape, mat2._data.shape, input._data.dtype, mat2._data.dtype)
    return apply(_mm_op(mat2._data), (input, mat2))


def bmm(input: Tensor, mat2: Tensor, *, out=None) -> Tensor:
    """``torch.bmm``: 3-D @ 3-D with equal batch sizes (no broadcasting)."""
    if out is not None:
        return with_out(bmm, out, (input, mat2), dtype="exact")
    _check_bmm(input._data.shape, mat2._data.shape, input._data.dtype, mat2._data.dtype)
    return apply(BMM, (input, mat2))


def mv(input: Tensor, vec: Tensor, *, out=None) -> Tensor:
    """``torch.mv``: 2-D @ 1-D."""
    if out is not None:
        return with_out(mv, out, (input, vec), dtype=(
            "addmv input tensors must have the same dtype, but got {o}, {r}, and {r}"))
    _check_mv(input._data.shape, vec._data.shape, input._data.dtype, vec._data.dtype)
    return apply(MV, (input, vec))


def dot(input: Tensor, tensor: Tensor, *, out=None) -> Tensor:
    """``torch.dot``: inner product of two 1-D tensors of the same dtype."""
    if out is not None:
        return with_out(dot, out, (input, tensor),
                        dtype="result dtype {o} does not match input dtype {r}")
    _check_dot(input, tensor)
    return apply(DOT, (input, tensor))


def _vdot_vjp(ns, g, need, a, b):
    return (ns.conj(g) * b if need[0] else None, g * a if need[1] else None)


_vdot_jvp = _bilinear_jvp(lambda a, b: vdot(a, b))


VDOT = Op("vdot", lambda a, b: np.vdot(a, b) if a.dtype.kind == "c" else np.dot(a, b),
          _vdot_vjp, _vdot_jvp, saves=(0, 1))


def vdot(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``torch.vdot``: conj(input) . other."""
    if out is not None:
        return with_out(vdot, out, (input, other),
                        dtype="result dtype {o} does not match input dtype {r}")
    _check_dot(input, other, "vdot")
    return apply(VDOT, (input, other))


def inner(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``torch.inner`` for the 1-D case; higher ranks contract the last dims."""
    if out is not None:
        return with_out(inner, out, (input, other), dtype=_TENSORDOT_OUT, differentiable=False)
    if input._data.ndim == 0 or other._data.ndim == 0:
        return input * other
    return _inner(input, other)


def _inner(a, b):
    if a._data.shape[-1] != b._data.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"{list(a._data.shape)} and {list(b._data.shape)}")
    return _tensordot_last(a, b)


def _tensordot_last(a, b):
    la = "abcdefghijklm"[:a._data.ndim - 1]
    lb = "nopqrstuvwxy"[:b._data.ndim - 1]
    return einsum(f"{la}z,{lb}z->{la}{lb}", a, b)


def outer(input: Tensor, vec2: Tensor, *, out=None) -> Tensor:
    """``torch.outer``: ``input[:, None] * vec2`` (a MulBackward0 node, as in PyTorch)."""
    if out is not None:
        return with_out(outer, out, (input, vec2), name="mul")
    if input._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input._data.ndim}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    return input.reshape(-1, 1) * vec2


ger = outer


# ---- addmm / addmv / baddbmm ---------------------------------------------------------------

def _add_prod_fwd(x, m1, m2, beta, alpha):
    if m1.dtype in HALF_NP and all(type(a) is np.ndarray for a in (m1, m2)):
        # half types: beta * x + alpha * (m1 @ m2) in float32, rounded once (PyTorch's GEMM;
        # float16 in its summation order where ember reproduces it, _opmath)
        h = m1.dtype
        if type(x) is np.ndarray:
            r = _OM.half_gemm(m1, m2, x, beta, alpha)
            if r is not None:
                return r
        r = _add_prod_fwd(np.asarray(x).astype(np.float32), m1.astype(np.float32),
                          m2.astype(np.float32), beta, alpha)
        return np.asarray(r).astype(h)
    p = _np_matmul(m1, m2)
    if alpha != 1:
        p = p * alpha
    if beta == 0:
        return np.broadcast_to(p, np.broadcast_shapes(x.shape, p.shape)).astype(p.dtype)
    return p + (x if beta == 1 else x * beta)


def _add_prod_vjp(ns, g, need, m1, m2, beta, alpha):
    gx = g1 = g2 = None
    if type(g) is np.ndarray and g.dtype in HALF_NP and (beta != 1 or alpha != 1):
        # half types: PyTorch scales grad by beta, and grad @ other by alpha, each in float32
        # with one rounding (mm first, then the scalar)
        g32 = g.astype(np.float32)
        if need[0]:
            gx = (g32 * np.float32(beta)).astype(g.dtype)
        if need[1] or need[2]:
            g1, g2 = _matmul_vjp(ns, g, (need[1], need[2]), m1, m2)
            if alpha != 1:
                g1, g2 = ((None if r is None else
                           (r.astype(np.float32) * np.float32(alpha)).astype(g.dtype))
                          for r in (g1, g2))
        return gx, g1, g2
    if need[0]:
        gx = g if beta == 1 else g * ns.conj(beta)
    ga = g if alpha == 1 else g * ns.conj(alpha)
    if need[1] or need[2]:
        g1, g2 = _matmul_vjp(ns, ga, (need[1], need[2]), m1, m2)
    return gx, g1, g2


def _add_prod_jvp(ns, tangents, primals, outs, beta, alpha):
    tx, t1, t2 = tangents
    _, m1, m2 = primals
    r = None
    if t1 is not None:
        r = matmul(t1, m2)
    if t2 is not None:
        s = matmul(m1, t2)
        r = s if r is None else r + s
    if r is not None and alpha != 1:
        r = r * alpha
    if tx is not None and beta != 0:
        s = tx if beta == 1 else tx * beta
        r = s if r is None else r + s
    return r


def _mk_add(name, names):
    return Op(name, _add_prod_fwd, _add_prod_vjp, _add_prod_jvp, saves=(1, 2),
              names=names + ("beta", "alpha"))


ADDMM = _mk_add("addmm", ("mat1", "mat2"))
ADDMV = _mk_add("addmv", ("mat", "vec"))
BADDBMM = _mk_add("baddbmm", ("batch1", "batch2"))


def _expand_check(x: Tensor, shape) -> None:
    """Refuse an ``input`` that does not broadcast to ``shape``, with expand's message (expand
    runs only then, so a valid call records no ``aten::expand``, as in PyTorch)."""
    s = x._data.shape
    lead = len(shape) - len(s)
    if lead < 0 or any(a != 1 and a != b for a, b in zip(s, shape[lead:])):
        from .views import expand
        expand(x.detach(), shape)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    """``torch.addmm``: ``beta * input + alpha * (mat1 @ mat2)``."""
    if out is not None:
        return with_out(addmm, out, (input, mat1, mat2), {"beta": beta, "alpha": alpha},
                        dtype="exact")
    s1, s2 = mat1._data.shape, mat2._data.shape
    if len(s1) != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {len(s1)}-D tensor")
    if len(s2) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {len(s2)}-D tensor")
    if mat1._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_lname(mat1)} and "
                           f"{_lname(mat2)}")
    if input._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_lname(input)} and "
                           f"{_lname(mat2)}")
    _check_mm(s1, s2, mat1._data.dtype, mat2._data.dtype)
    _expand_check(input, (s1[0], s2[1]))
    return apply(ADDMM, (input, mat1, mat2), (beta, alpha))


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    """``torch.addmv``: ``beta * input + alpha * (mat @ vec)``."""
    if out is not None:
        return with_out(addmv, out, (input, mat, vec), {"beta": beta, "alpha": alpha},
                        dtype="exact")
    ms, vs = mat._data.shape, vec._data.shape
    ins = input._data.shape
    if len(ms) != 2 or len(vs) != 1 or len(ins) > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {len(ins)}, {len(ms)}, "
                           f"{len(vs)}")
    want = (ms[0],)
    in1 = ins if len(ins) == 1 and ins[0] != 1 else want
    _check_mv_shapes(in1, ms, vs, (input._data.dtype, mat._data.dtype, vec._data.dtype))
    return apply(ADDMV, (input, mat, vec), (beta, alpha))


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1,
            out=None) -> Tensor:
    """``torch.baddbmm``: ``beta * input + alpha * (batch1 @ batch2)`` per batch."""
    if out is not None:
        return with_out(baddbmm, out, (input, batch1, batch2), {"beta": beta, "alpha": alpha},
                        dtype="exact")
    s1, s2 = batch1._data.shape, batch2._data.shape
    _check_bmm(s1, s2, batch1._data.dtype, batch2._data.dtype)
    _expand_check(input, (s1[0], s1[1], s2[2]))
    if input._data.dtype != batch1._data.dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_scalar_name(input.dtype)}, batch1: "
            f"{_scalar_name(batch1.dtype)}, batch2: {_scalar_name(batch2.dtype)}")
    return apply(BADDBMM, (input, batch1, batch2), (beta, alpha))


# ---- einsum --------------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _is_letter(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def _parse_einsum(equation: str, shapes):
    """The equation with each ellipsis written out in spare letters: (input subscripts, output
    subscripts), checked as PyTorch checks them."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    for i, c in enumerate(eq):
        if c in ",." or _is_letter(c):
            continue
        if c == "-" and eq[i:i + 2] == "->" and i == len(lhs):
            continue
        if c == ">" and i == len(lhs) + 1 and arrow:
            continue
        raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                           "string, subscripts must be in [a-zA-Z]")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    used = {c for c in eq if _is_letter(c)}
    spare = [c for c in _LETTERS if c not in used]
    subs, ell_dims = [], 0
    ell_of = []
    for k, (t, shape) in enumerate(zip(terms, shapes)):
        if t.count("...") > 1 or t.replace("...", "").count("."):
            raise RuntimeError(f"einsum(): found '.' for operand {k} that is not part of any "
                               "ellipsis")
        has_ell = "..." in t
        nl = len(t.replace("...", ""))
        nd = len(shape)
        if has_ell:
            if nl > nd:
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({nl}) is more than the "
                    f"number of dimensions ({nd}) for operand {k}")
            ell_dims = max(ell_dims, nd - nl)
        elif nl != nd:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nl}) does not match the "
                f"number of dimensions ({nd}) for operand {k} and no ellipsis was given")
        ell_of.append(nd - nl if has_ell else -1)
        subs.append(t)
    ell = "".join(spare[:ell_dims])
    out_subs = []
    for t, e in zip(subs, ell_of):
        out_subs.append(t.replace("...", ell[ell_dims - e:]) if e >= 0 else t)
    if arrow:
        for c in rhs.replace("...", ""):
            if c == ".":
                raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                   "already found")
        seen = set()
        for c in rhs.replace("...", ""):
            if c in seen:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the "
                                   "output")
            if c not in lhs:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   "equation for any input operand")
            seen.add(c)
        out = rhs.replace("...", ell)
    else:
        counts: dict = {}
        for t in terms:
            for c in t.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1))
    # label sizes, with size-1 broadcasting
    sizes: dict = {}
    for k, (t, shape) in enumerate(zip(out_subs, shapes)):
        local: dict = {}
        for c, s in zip(t, shape):
            if c in local and local[c] != s:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but the "
                                   f"sizes don't match, {s} != {local[c]}")
            local[c] = s
        for c, s in local.items():
            prev = sizes.get(c)
            if prev is None or prev == 1:
                sizes[c] = s
            elif s != 1 and s != prev:
                raise RuntimeError(f"einsum(): subscript {c} has size {s} for operand {k} which "
                                   f"does not broadcast with previously seen size {prev}")
    return out_subs, out, sizes, spare[ell_dims:]


@functools.lru_cache(maxsize=1024)
def _parse_cached(eq: str, shapes: tuple):
    return _parse_einsum(eq, shapes)


def _expand_labels(ns, x, sub, sizes):
    shape = tuple(sizes[c] for c in sub)
    if tuple(x.shape) != shape:
        x = ns.expand_to(x, shape)
    return x


def _einsum_fwd(*args):
    *ops, subs, out, sizes, _spare = args
    shapes = [x.shape for x in ops]
    ops = [_expand_labels_np(x, s, sizes) for x, s in zip(ops, subs)]
    r = _np_einsum(",".join(subs) + "->" + out, *ops)
    if type(r) is _BA:
        return r
    return _einsum_layout(np.asarray(r), subs, shapes, out)


def _einsum_layout(r, subs, shapes, out):
    """PyTorch's layout for an einsum contracting several operands, approximately: its last
    pairwise product is a bmm whose result is contiguous over the labels of both sides (a label
    counts for a side where its size there exceeds 1), then the others, each group in ``out``'s
    order (PyTorch sometimes orders the left-only labels before the right-only ones)."""
    if len(subs) < 2 or r.ndim < 2 or not set("".join(subs)) - set(out):
        return r
    if not r.size:   # (PyTorch's empty einsum result is row-major)
        return np.empty(r.shape, r.dtype)
    right = {c for c, n in zip(subs[-1], shapes[-1]) if n > 1}
    left = {c for s, sh in zip(subs[:-1], shapes[:-1]) for c, n in zip(s, sh) if n > 1}
    order = sorted(range(len(out)), key=lambda i: out[i] not in left or out[i] not in right)
    return np.ascontiguousarray(r.transpose(order)).transpose(np.argsort(order))


def _expand_labels_np(x, sub, sizes):
    shape = tuple(sizes[c] for c in sub)
    return x if x.shape == shape else np.broadcast_to(x, shape)


def _einsum_grad_eq(i, subs, out, sizes, spare):
    """The einsum that gives operand ``i``'s gradient: (equation, extra constant arrays)."""
    s = subs[i]
    spare = list(spare)
    target, extra_subs, extra = [], [], []
    seen = set()
    present = set(out)
    for j, t in enumerate(subs):
        if j != i:
            present.update(t)
    for c in s:
        if c in seen:  # repeated label: a fresh one tied to it by an identity matrix
            f = spare.pop(0)
            target.append(f)
            extra_subs.append(c + f)
            extra.append(("eye", sizes[c]))
        else:
            seen.add(c)
            target.append(c)
            if c not in present:  # summed in this operand only: broadcast back with ones
                extra_subs.append(c)
                extra.append(("ones", sizes[c]))
                present.add(c)
    in_subs = [out] + [t for j, t in enumerate(subs) if j != i] + extra_subs
    return ",".join(in_subs) + "->" + "".join(target), extra


def _einsum_vjp(ns, g, need, *args):
    n = len(need)
    ops = args[:n]
    subs, out, sizes, spare = args[n:]
    res = []
    for i in range(n):
        if not need[i]:
            res.append(None)
            continue
        eq, extra = _einsum_grad_eq(i, subs, out, sizes, spare)
        dt = g._data.dtype if isinstance(g, Tensor) else g.dtype
        consts = [ns.const(np.eye(k, dtype=dt) if kind == "eye" else np.ones(k, dtype=dt))
                  for kind, k in extra]
        others = [ns.conj(_expand_labels(ns, x, s, sizes))
                  for j, (x, s) in enumerate(zip(ops, subs)) if j != i]
        res.append(ns.einsum(eq, _expand_labels(ns, g, out, sizes), *others, *consts))
    return tuple(res)


def _einsum_jvp(ns, tangents, primals, outs, subs, out, sizes, spare):
    eq = ",".join(subs) + "->" + out
    r = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        ops = list(primals)
        ops[i] = t
        s = einsum(eq, *[_expand_labels(ns, x, sb, sizes) for x, sb in zip(ops, subs)])
        r = s if r is None else r + s
    return r


_EINSUM_OPS: dict = {}


def _einsum_op(n: int, node: str) -> Op:
    op = _EINSUM_OPS.get((n, node))
    if op is None:
        # two operands: PyTorch's bmm (or mul) saves each only for the other's gradient, so
        # changing one in place is no error when the other does not require grad
        op = _EINSUM_OPS[(n, node)] = Op("einsum", _einsum_fwd, _einsum_vjp, _einsum_jvp,
                                         saves=tuple(range(n)), node=node,
                                         save_if=(1, 0) if n == 2 else None)
    return op


def _sublist_eq(args) -> tuple:
    def letters(sub):
        s = ""
        for v in sub:
            if v is Ellipsis:
                s += "..."
            else:
                if not 0 <= int(v) < 52:
                    raise RuntimeError("einsum(): subscript in subscript list is not within the "
                                       "valid range [0, 52)")
                s += _LETTERS[int(v)]
        return s
    args = list(args)
    ops, terms = [], []
    while len(args) >= 2:
        ops.append(args.pop(0))
        terms.append(letters(args.pop(0)))
    eq = ",".join(terms)
    if args:
        eq += "->" + letters(args[0])
    return eq, ops


def einsum(*args) -> Tensor:
    """``torch.einsum``: equation string (or sublist format) and operands."""
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand, or "
                        "at least one operand and its subscripts list")
    if isinstance(args[0], str):
        eq, ops = args[0], list(args[1:])
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
    else:
        eq, ops = _sublist_eq(args)
    if STATE.grad and not STATE.inference and any(o.is_inference() for o in ops):
        # PyTorch's einsum first permutes each operand: on an inference tensor alone that view
        # skips autograd, so the operand goes on as one that does not require grad
        ops = [o.detach() if o.is_inference() else o for o in ops]
    subs, out, sizes, spare = _parse_cached(eq, tuple(o._data.shape for o in ops))
    letters_in = set("".join(subs))
    contracted = bool(letters_in - set(out))
    if len(ops) == 1:
        node = "SumBackward1" if contracted else "PermuteBackward0"
    else:
        node = "ViewBackward0" if contracted else "MulBackward0"
    dts = [o._data.dtype for o in ops]
    if len(set(dts)) > 1:
        if contracted:
            d0 = dts[0]
            d1 = next(d for d in dts if d != d0)
            raise RuntimeError(f"expected scalar type {_type_name(D._FROM_NP[d0])} but found "
                               f"{_type_name(D._FROM_NP[d1])}")
        rt = D.result_type_of(tuple(ops))
        ops = [o if o.dtype is rt else o.to(rt) for o in ops]
    return apply(_einsum_op(len(ops), node), tuple(ops), (tuple(subs), out, sizes, spare))


# ---- methods and operators -----------------------------------------------------------------

for _name, _fn in [("matmul", matmul), ("mm", mm), ("bmm", bmm), ("mv", mv), ("dot", dot),
                   ("vdot", vdot), ("inner", inner), ("outer", outer), ("ger", ger),
                   ("addmm", addmm), ("addmv", addmv), ("baddbmm", baddbmm)]:
    method(_name, _fn)


def _rmatmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


def _matmul_op(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


method("__matmul__", _matmul_op)
method("__rmatmul__", _rmatmul)
