"""nn.functional: linear maps, embeddings, one_hot and distances.

``linear`` and ``bilinear`` are one op each; the node a result carries is the one PyTorch's
composite would leave last (``AddmmBackward0``, ``ViewBackward0``, ``UnsafeViewBackward0``, ...),
chosen by PyTorch's own routing rules, while ember computes, differentiates and records once.
``embedding`` and ``embedding_bag`` gather rows and scatter-add their gradients (a flat
``np.add.at``, several times faster than a row-wise one). ``cosine_similarity`` and
``pairwise_distance`` are compositions of ember ops, as in PyTorch; ``pdist`` is one op.

The sampling family (pad, interpolate, grid_sample, pixel_shuffle...) lives in ``nn_sampling``
and attention in ``nn_attention``; both are re-exported here.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, Version, _is_contiguous, _make, _wrap_dim
from . import _opmath as _OM
from ._dispatch import HALF_NP, _type_name, check_broadcast
from ._registry import EM, Op, apply, ns_fn
from .linalg import _matmul_route, _np_matmul
from .nn_sampling import on_meta

__all__ = [
    "bilinear",
    "cosine_similarity",
    "embedding",
    "embedding_bag",
    "linear",
    "one_hot",
    "pairwise_distance",
    "pdist",
]


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _check_tensor(fn: str, name: str, pos: int, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


# ---- linear ----------------------------------------------------------------------------------

def _linear_fwd(x, w, b=None):
    if x.dtype in HALF_NP and type(x) is np.ndarray and type(w) is np.ndarray:
        # PyTorch's half-type GEMM summation orders and bias rounding (_opmath)
        y = _OM.half_linear(x, w, b, x.ndim == 2 or b is not None and b.ndim == 1
                            and x.flags.c_contiguous)
        if y is not None:
            return y
    wt = w.T
    if x.ndim > 2:
        k = x.shape[-1]   # (the rows counted: -1 cannot be inferred when k is 0)
        y = np.matmul(x.reshape(math.prod(x.shape[:-1]), k), _blas_t(wt))
        y = y.reshape(x.shape[:-1] + y.shape[1:])
    else:
        y = _np_matmul(x, wt)
    if b is not None:
        if isinstance(y, np.ndarray) and y.ndim and y.flags.writeable:
            np.add(y, b, out=y, casting="unsafe")
        else:
            y = np.asarray(y + b).astype(np.result_type(x, w), copy=False)
    return y


def _blas_t(wt):
    return wt if wt.ndim < 2 or wt.flags.f_contiguous or wt.flags.c_contiguous \
        else np.ascontiguousarray(wt)


def _linear_vjp(ns, g, need, x, w):
    bias = (g,) if len(need) > 2 else ()
    if not (need[0] or need[1]):
        return (None, None) + bias
    # only the operands other gradients need are saved: shapes come from what is at hand
    if w is not None:
        k, w2d = w.shape[-1], w.ndim == 2
    else:
        k, w2d = x.shape[-1], g.ndim == x.ndim
    n = g.shape[-1] if w2d else 1
    xs = tuple(x.shape) if x is not None else tuple(g.shape[:-1] if w2d else g.shape) + (k,)
    m = _prod(xs[:-1])
    g2 = g.reshape(m, n)
    gx = gw = None
    if need[0]:
        gx = ns.matmul(g2, ns.conj(w if w2d else w.reshape(1, k))).reshape(xs)
    if need[1]:
        gw = ns.matmul(g2.T, ns.conj(x.reshape(m, k)))
        gw = gw if w2d else gw.reshape(k)
    return (gx, gw) + bias


def _linear_jvp(ns, tangents, primals, outs):
    x, w = primals[0], primals[1]
    r = None
    if tangents[0] is not None:
        r = apply(LINEAR_PLAIN, (tangents[0], w))
    if tangents[1] is not None:
        s = apply(LINEAR_PLAIN, (x, tangents[1]))
        r = s if r is None else r + s
    if len(tangents) > 2 and tangents[2] is not None:
        r = tangents[2] if r is None else r + tangents[2]
    return r


_LINEAR_OPS: dict = {}


def _linear_op(node: str) -> Op:
    """The linear op recorded under PyTorch's node name ``node`` (one op per name)."""
    op = _LINEAR_OPS.get(node)
    if op is None:
        op = _LINEAR_OPS[node] = Op("linear", on_meta(_linear_fwd), _linear_vjp, _linear_jvp,
                                    saves=(0, 1), node=node, save_if=(1, 0))
    return op


LINEAR_PLAIN = _linear_op("MmBackward0")


class _Operand:
    """What PyTorch's matmul routing reads of an operand (shape, dtype, strides, requires_grad),
    without building the transposed weight as a tensor."""

    __slots__ = ("_data", "_rg")

    def __init__(self, data, rg):
        self._data = data
        self._rg = rg

    @property
    def dtype(self):
        return D._FROM_NP[self._data.dtype]


def _check_addmm(bias: Tensor, m1_shape, w: Tensor, x_dtype) -> None:
    """at::addmm(bias, input, weight.t())'s checks, in PyTorch's order."""
    wd, bd = w._data, bias._data
    if wd.ndim == 2 and bd.dtype == wd.dtype == x_dtype and m1_shape[1] == wd.shape[1] and (
            bd.shape == wd.shape[:1]):
        return   # the usual layer: nothing to report
    if w._data.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {w._data.ndim}-D tensor")
    bt, wt = bias._data.dtype, w._data.dtype
    if bt != wt:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_type_name(bias.dtype)} and {_type_name(w.dtype)}")
    if x_dtype != wt:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{_type_name(D._FROM_NP[x_dtype])} and {_type_name(w.dtype)}")
    n, k = w._data.shape
    if m1_shape[1] != k:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m1_shape[0]}x"
                           f"{m1_shape[1]} and {k}x{n})")
    bs = bias._data.shape
    target = (m1_shape[0], n)
    if len(bs) > 2 or any(s != 1 and s != t for s, t in zip(bs[::-1], target[::-1])):
        from .views import expand
        expand(bias.detach(), target)   # raises PyTorch's expand error


def _check_bias_add(out_shape, out_dtype, bias: Tensor) -> None:
    """The checks of PyTorch's in-place ``output.add_(bias)``."""
    bs = bias._data.shape
    check_broadcast(out_shape, bs)
    if len(bs) > len(out_shape) or any(o == 1 and s != 1 for o, s in
                                       zip(out_shape[::-1], bs[::-1])):
        full = [max(a, b) for a, b in zip((1,) * (len(bs) - len(out_shape)) + tuple(out_shape),
                                          (1,) * (len(out_shape) - len(bs)) + tuple(bs))]
        raise RuntimeError(f"output with shape {_shape_str(out_shape)} doesn't match the "
                           f"broadcast shape {_shape_str(full)}")
    od = D._FROM_NP[out_dtype]
    if bias.dtype._cat > od._cat and bias._data.ndim:
        raise RuntimeError(f"result type {_type_name(bias.dtype)} can't be cast to the desired "
                           f"output type {_type_name(od)}")


def _linear_route(x: Tensor, w: Tensor, b) -> Op:
    """PyTorch's at::linear dispatch: fused addmm for 2-D input (and for contiguous input with
    a contiguous 1-D bias, flattened then viewed back), else matmul(input, weight.t()) then
    add_ (a strided or expanded bias takes that route too)."""
    xd, wd = x._data.ndim, w._data.ndim
    if xd == 0 or wd == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{xd}D and {wd}D")
    if wd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {wd}D")
    xs = x._data.shape
    if b is not None and (xd == 2 or b._data.ndim == 1 and _is_contiguous(x._data)
                          and _is_contiguous(b._data)):
        _check_addmm(b, (_prod(xs[:-1]), xs[-1]), w, x._data.dtype)
        return _linear_op("AddmmBackward0" if xd == 2 else "ViewBackward0")
    mm = _matmul_route(_Operand(x._data, x._rg), _Operand(w._data.T, w._rg))
    if b is None:
        return _linear_op(mm.node.__name__)
    out_shape = xs[:-1] + (w._data.shape[:1] if wd == 2 else ())
    _check_bias_add(out_shape, x._data.dtype, b)
    return _linear_op("AddBackward0")


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``torch.nn.functional.linear``: ``input @ weight.T + bias``, one op whose node is the
    one PyTorch's route leaves (AddmmBackward0 for 2-D input with bias, ViewBackward0 for
    contiguous N-D input with a contiguous 1-D bias, matmul's node otherwise, AddBackward0 when
    a bias is added after the matmul)."""
    _check_tensor("linear", "input", 1, input)
    _check_tensor("linear", "weight", 2, weight)
    op = _linear_route(input, weight, bias)
    if bias is None:
        return apply(op, (input, weight))
    return apply(op, (input, weight, bias))


# ---- bilinear --------------------------------------------------------------------------------

def _bilinear_fwd(x1, x2, w, b=None):
    from .linalg import _np_einsum
    lead = x1.shape[:-1]
    m = _prod(lead)
    y = _np_einsum("mi,oij,mj->mo", x1.reshape(m, x1.shape[-1]), w, x2.reshape(m, x2.shape[-1]))
    y = y.reshape(lead + w.shape[:1])
    if b is not None:
        y = y + b
    return y


def _bilinear_vjp(ns, g, need, x1, x2, w):
    m = _prod(x1.shape[:-1])
    a, c, o = x1.reshape(m, x1.shape[-1]), x2.reshape(m, x2.shape[-1]), g.reshape(m, w.shape[0])
    wc = ns.conj(w)
    g1 = ns.einsum("mo,oij,mj->mi", o, wc, ns.conj(c)).reshape(x1.shape) if need[0] else None
    g2 = ns.einsum("mo,oij,mi->mj", o, wc, ns.conj(a)).reshape(x2.shape) if need[1] else None
    gw = ns.einsum("mo,mi,mj->oij", o, ns.conj(a), ns.conj(c)) if need[2] else None
    return (g1, g2, gw) + ((g,) if len(need) > 3 else ())


def _bilinear_jvp(ns, tangents, primals, outs):
    r = None
    for i in range(3):
        t = tangents[i]
        if t is not None:
            args = list(primals[:3])
            args[i] = t
            s = apply(BILINEAR_NOBIAS, tuple(args))
            r = s if r is None else r + s
    if len(tangents) > 3 and tangents[3] is not None:
        r = tangents[3] if r is None else r + tangents[3]
    return r


BILINEAR = Op("bilinear", on_meta(_bilinear_fwd), _bilinear_vjp, _bilinear_jvp,
              saves=(0, 1, 2), node="AddBackward0")
BILINEAR_NOBIAS = Op("bilinear", on_meta(_bilinear_fwd), _bilinear_vjp, _bilinear_jvp,
                     saves=(0, 1, 2), node="ViewBackward0")


def _check_bilinear(x1: Tensor, x2: Tensor, w: Tensor, b) -> None:
    s1, s2, sw = x1._data.shape, x2._data.shape, w._data.shape
    dts = [x1, x2, w] + ([b] if b is not None else [])
    if len({t._data.dtype for t in dts}) > 1:
        names = ["input1", "input2", "weight", "bias"]
        parts = ", ".join(f"{n}: {_scalar_name(t.dtype)}" for n, t in zip(names, dts))
        raise RuntimeError(f"All tensors must have the same dtype, got {parts}")
    if len(s1) != len(s2):
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {len(s1)} and "
                           f"{len(s2)}")
    for i in range(len(s1) - 1):
        if s1[i] != s2[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {s1[i]} and {s2[i]}")
    if len(sw) < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(sw)}, "
                         f"{len(sw) - 1}], but got 2)")
    if s1[-1] != sw[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {s1[-1]} "
                           f"but expected {sw[1]}")
    if s2[-1] != sw[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {s2[-1]} "
                           f"but expected {sw[2]}")
    if b is not None and b._data.shape[:1] != sw[:1]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{b._data.shape[0] if b._data.ndim else 1} but expected {sw[0]}")


def _scalar_name(dt: D.dtype) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}.get(
        dt.name, dt.name)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """``torch.nn.functional.bilinear``: ``y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o]``
    in one op (PyTorch's _trilinear, reshape and add)."""
    _check_bilinear(input1, input2, weight, bias)
    if bias is None:
        return apply(BILINEAR_NOBIAS, (input1, input2, weight))
    return apply(BILINEAR, (input1, input2, weight, bias))


# ---- row gather / scatter helpers --------------------------------------------------------------

def _rows_add_np(g, n_rows, idx):
    """``zeros(n_rows, d)`` with row ``idx[i]`` += ``g[i]``: one flat ``add.at``."""
    d = g.shape[-1]
    z = np.zeros_like(g, shape=(n_rows * d,))
    if idx.size and d:
        flat = (idx.reshape(-1, 1) * d + np.arange(d, like=idx)).reshape(-1)
        np.add.at(z, flat, np.ascontiguousarray(g).reshape(-1))
    return z.reshape(n_rows, d)


def _rows_take_np(x, idx):
    return np.take(x, idx, axis=0)


ROWS_ADD = Op("rows_add", _rows_add_np, lambda ns, g, need, n_rows, idx:
              (ns.rows_take(g, idx),), linear=True, node="IndexAddBackward0")
ROWS_TAKE = Op("rows_take", lambda x, idx, n_rows: np.take(x, idx, axis=0),
               lambda ns, g, need, idx, n_rows: (ns.rows_add(g, n_rows, idx),), linear=True,
               node="IndexSelectBackward0")
ns_fn("rows_add", _rows_add_np, lambda g, n_rows, idx: apply(ROWS_ADD, (g,), (n_rows, idx)))
ns_fn("rows_take", _rows_take_np,
      lambda x, idx: apply(ROWS_TAKE, (x,), (idx, x._data.shape[0])))


# ---- embedding -------------------------------------------------------------------------------

def _embedding_fwd(w, idx, n_rows, scale):
    return np.take(w, idx, axis=0)


def _embedding_vjp(ns, g, need, idx, n_rows, scale):
    d = g.shape[-1]
    flat = idx.reshape(-1)
    g2 = g.reshape(flat.shape[0], d)
    if ns is EM:   # (recorded: its own derivative, below)
        return (apply(EMBEDDING_BWD, (g2,), (n_rows, flat, scale)),)
    if scale is not None:
        g2 = g2 * ns.const(scale[flat][:, None])
    return (ns.rows_add(g2, n_rows, flat),)


def _embedding_bwd_np(g2, n_rows, flat, scale):
    return _rows_add_np(g2 if scale is None else g2 * scale[flat][:, None], n_rows, flat)


def _embedding_bwd_vjp(ns, gg, need, n_rows, flat, scale):
    r = ns.rows_take(gg, flat)
    if scale is not None and not scale.all():   # the padding row's gradient is zero
        r = r * ns.const((scale[flat] != 0)[:, None].astype(scale.dtype))
    return (r,)


# PyTorch's embedding_dense_backward with a scale (padding row, 1/frequency). Its derivative
# is embedding_dense_double_backward: a gather with the padding row zeroed and no frequency
# scale, as PyTorch's ("the first backward takes care of scaling by frequency"): composed with
# the forward's scaled backward this gives the true second derivative of a gradient.
EMBEDDING_BWD = Op("embedding_backward", _embedding_bwd_np, _embedding_bwd_vjp, linear=True,
                   node="EmbeddingDenseBackwardBackward0")


EMBEDDING = Op("embedding", on_meta(_embedding_fwd), _embedding_vjp, linear=True,
               node="EmbeddingBackward0", names=("indices", "weight_sym_argsize_0", None))


def _index_type_error(t: Tensor, fn: str, argno: int = 1, name: str = "indices") -> None:
    if t._data.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            f"Expected tensor for argument #{argno} '{name}' to have one of the following scalar "
            f"types: Long, Int; but got ember.{t.dtype._legacy} instead (while checking "
            f"arguments for {fn})")


def _grad_scale(idx, n_rows, padding_idx, by_freq, dtype):
    """Per-row factor of the weight gradient: 0 on the padding row, 1/count when scaling by
    frequency (PyTorch's embedding_backward)."""
    s = np.ones_like(idx, dtype=np.dtype(dtype), shape=(n_rows,))
    if by_freq:
        cnt = np.bincount(idx.reshape(-1), minlength=n_rows)
        s = s / np.maximum(cnt, 1).astype(s.dtype)
    if padding_idx >= 0:
        s[padding_idx] = 0
    return s


def _renorm_rows(weight: Tensor, idx, max_norm: float, norm_type: float) -> None:
    """PyTorch's embedding_renorm_: rows referenced by ``idx`` whose ``norm_type``-norm exceeds
    ``max_norm`` are scaled down to it, in place and outside autograd. Like any in-place op it
    bumps the weight's version, whether or not a row changed. Rows that share memory (an
    expanded weight) are renormed one after the other in ascending order, as PyTorch's loop
    does: a row aliasing an already scaled one sees its new norm."""
    w = weight._data
    rows = np.unique(idx.reshape(-1))
    weight._vc.v += 1
    if not rows.size:
        return
    if w.dtype.names is not None:
        _renorm_rows_chalf(weight, rows, max_norm, norm_type)
        return
    if not w.flags.writeable:   # a view of a writable buffer that repeats rows
        from ._dispatch import SELF_OVERLAP, write_changed
        for r in rows:
            n = _row_norms(w[r][None], norm_type)[0]
            if n > max_norm:
                if 0 in w.strides[1:] and w.shape[1] > 1:   # the row itself repeats elements
                    raise RuntimeError(SELF_OVERLAP)
                write_changed(w[r], w[r] * np.asarray(max_norm / (n + 1e-7), w.dtype))
        return
    n = _row_norms(w[rows], norm_type)
    big = n > max_norm
    if big.any():
        r = rows[big]
        w[r] = w[r] * (max_norm / (n[big] + 1e-7))[:, None].astype(w.dtype)


def _row_norms(w: np.ndarray, norm_type: float) -> np.ndarray:
    a = np.abs(w)
    if norm_type == math.inf:
        return a.max(axis=1)
    if norm_type == 1:
        return a.sum(axis=1)
    if norm_type == 2:
        return np.sqrt((a * a).sum(axis=1))
    return (a ** norm_type).sum(axis=1) ** (1.0 / norm_type)


def _renorm_rows_chalf(weight: Tensor, rows, max_norm: float, norm_type: float) -> None:
    """``_renorm_rows`` on complex32 pairs (ember._chalf), as PyTorch's loop runs it: each
    row's ``norm(norm_type)`` (float16) read as a double, then ``row *= scale`` in complex32."""
    from .._chalf import from_values, number, to_c64
    from .reduction import _norm_fwd
    w = weight._data
    z = to_c64(w[rows])
    with np.errstate(all="ignore"):
        n = np.asarray(_norm_fwd(z, (1,), False, norm_type)).astype(np.float16)
    big = n.astype(np.float64) > max_norm
    if big.any():
        sc = np.array([number(max_norm / (float(v) + 1e-7)) for v in n[big]], np.complex64)
        w[rows[big]] = from_values(z[big] * sc[:, None])
        weight._vc.v += 1


def _check_weight_2d(weight: Tensor) -> None:
    if weight._data.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``torch.nn.functional.embedding``: rows of ``weight`` at ``input``. ``padding_idx``'s
    row gets no gradient, ``max_norm`` renormalises the rows used in place (as PyTorch),
    ``scale_grad_by_freq`` divides each row's gradient by its count in ``input``."""
    n_rows = weight._data.shape[0] if weight._data.ndim else 0
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= n_rows:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -n_rows:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = n_rows + padding_idx
    else:
        padding_idx = -1
    if sparse:
        raise NotImplementedError("embedding(sparse=True) needs sparse gradient tensors, which "
                                  "ember does not have; use sparse=False")
    idx = input._data
    if max_norm is not None:
        _check_weight_2d(weight)
        _index_type_error(input, "embedding_renorm_", 2)
        _renorm_rows(weight, idx, float(max_norm), float(norm_type))
    _check_weight_2d(weight)
    _index_type_error(input, "embedding")
    if idx.size and (idx.min() < 0 or idx.max() >= n_rows):
        raise IndexError("index out of range in self")
    scale = None
    if padding_idx >= 0 or scale_grad_by_freq:
        scale = _grad_scale(idx, n_rows, padding_idx, scale_grad_by_freq, weight._data.dtype)
    out = apply(EMBEDDING, (weight,), (idx, n_rows, scale))
    if out.requires_grad and out.is_complex():   # (PyTorch's autograd refuses, after the op)
        raise RuntimeError("embedding does not support automatic differentiation for outputs "
                           "with complex dtype.")
    return out


# ---- embedding_bag ---------------------------------------------------------------------------

class _Bags:
    """How the indices fall into bags, computed once per call: the used positions (padding and
    positions past the last offset left out), their rows and bags, the per-position factor of a
    mean (1/bag size) and of scale_grad_by_freq (1/count of the row)."""

    __slots__ = ("argrow", "bag", "freq", "mean", "mode", "n", "n_bags", "n_rows", "pos",
                 "rows", "whole")

    def __init__(self, idx, offsets, n_rows, mode, include_last, padding_idx, by_freq, dtype):
        n = idx.shape[0]
        starts = offsets[:-1] if include_last else offsets
        end = int(offsets[-1]) if include_last and offsets.size else n
        self.n, self.n_rows, self.mode = n, n_rows, mode
        self.n_bags = starts.shape[0]
        pos = np.arange(n, like=idx)
        bag = np.searchsorted(starts, pos, side="right") - 1
        keep = (pos < end) & (bag >= 0)
        if padding_idx is not None:
            keep &= idx != padding_idx
        self.pos, self.bag, self.rows = pos[keep], bag[keep], idx[keep]
        self.whole = self.pos.shape[0] == n
        self.mean = self.freq = None
        if mode == 1:
            cnt = np.bincount(self.bag, minlength=self.n_bags)
            self.mean = (1.0 / np.maximum(cnt, 1)[self.bag]).astype(dtype)[:, None]
        if by_freq:
            cnt = np.bincount(idx, minlength=n_rows)
            self.freq = (1.0 / cnt[self.rows]).astype(dtype)[:, None]
        self.argrow = None


def _bag_sum(ns, w, psw, plan: _Bags):
    """Sum (or mean) of the rows in each bag, weighted by ``psw`` when given."""
    v = ns.rows_take(w, plan.rows)
    if psw is not None:
        v = v * ns.rows_take(psw.reshape(plan.n, 1), plan.pos)
    if plan.mean is not None:
        v = v * ns.const(plan.mean)
    return ns.rows_add(v, plan.n_bags, plan.bag)


def _bag_max_np(w, plan: _Bags):
    d = w.shape[1]
    v = np.take(w, plan.rows, axis=0)
    col = np.arange(d, like=w)
    flat = (plan.bag[:, None] * d + col).reshape(-1)
    out = np.full_like(w, -np.inf, shape=(plan.n_bags * d,))
    np.maximum.at(out, flat, v.reshape(-1))
    hit = v == out.reshape(plan.n_bags, d)[plan.bag]
    first = np.full_like(plan.rows, plan.rows.shape[0], shape=(plan.n_bags * d,))
    cand = np.where(hit, np.arange(plan.rows.shape[0], like=w)[:, None], plan.rows.shape[0])
    np.minimum.at(first, flat, cand.reshape(-1))
    empty = first == plan.rows.shape[0]
    rows = np.where(empty, 0, np.append(plan.rows, 0)[first])
    plan.argrow = np.where(empty, -1, rows * d + np.tile(col, plan.n_bags))
    out[empty] = 0
    return out.reshape(plan.n_bags, d)


def _eb_fwd(w, psw, plan: _Bags):
    if plan.mode == 2:
        return _bag_max_np(w, plan)
    from ._registry import NP
    return _bag_sum(NP, w, psw, plan)


def _eb_vjp(ns, g, need, w, psw, plan: _Bags):
    gw = gp = None
    if plan.mode == 2:
        if need[0]:
            live = plan.argrow >= 0
            gf = g.reshape(-1) * ns.const(live.astype(g.dtype))
            gw = ns.scatter_add_flat(gf, np.where(live, plan.argrow, 0),
                                    (plan.n_rows, g.shape[1]))
        return gw, None
    gb = ns.rows_take(g, plan.bag)
    if need[0]:
        v = gb if psw is None else gb * ns.rows_take(psw.reshape(plan.n, 1), plan.pos)
        for f in (plan.mean, plan.freq):
            if f is not None:
                v = v * ns.const(f)
        gw = ns.rows_add(v, plan.n_rows, plan.rows)
    if need[1]:
        gp = ns.sum_dims(gb * ns.rows_take(w, plan.rows), (1,), True)
        if not plan.whole:
            gp = ns.rows_add(gp, plan.n, plan.pos)
        gp = gp.reshape(plan.n)
    return gw, gp


def _eb_jvp(ns, tangents, primals, outs, plan: _Bags):
    tw, tp = tangents
    w, psw = primals
    if plan.mode == 2:
        live = plan.argrow >= 0
        t = ns.take_flat(tw, np.where(live, plan.argrow, 0)) * ns.const(live.astype(
            tw._data.dtype))
        return t.reshape(outs[0].shape)
    r = None
    if tw is not None:
        r = _bag_sum(ns, tw, psw, plan)
    if tp is not None:
        s = _bag_sum(ns, w, tp, plan)
        r = s if r is None else r + s
    return r


EMBEDDING_BAG = Op("embedding_bag", on_meta(_eb_fwd), _eb_vjp, _eb_jvp, saves=(0, 1),
                   save_if=(1, 0), node="EmbeddingBagBackward0")


def _eb_python_checks(input, weight, offsets, mode, psw, by_freq, sparse):
    """The argument checks of PyTorch's Python ``embedding_bag``, in its order."""
    if psw is not None and input._data.shape != psw._data.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({_size(psw)}) is not None, then it must have "
            f"the same shape as the input ({_size(input)})")
    if weight._data.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight._data.ndim}")
    nd = input._data.ndim
    if nd == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{_type_str(offsets)}")
    elif nd == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets._data.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {nd}")
    modes = {"sum": 0, "mean": 1, "max": 2}
    if mode not in modes:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    return modes[mode]


def _size(t: Tensor) -> str:
    return "ember.Size([" + ", ".join(str(s) for s in t._data.shape) + "])"


def _type_str(x) -> str:
    return "<class 'ember.Tensor'>" if isinstance(x, Tensor) else str(type(x))


def _eb_kernel_checks(idx_t, off_t, weight, psw, padding_idx):
    """The checks of PyTorch's embedding_bag kernel."""
    for t in (idx_t, off_t):
        _index_type_error(t, "embedding_bag")
    if psw is not None and psw._data.dtype != weight._data.dtype:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have the same type as tensor for "
            f"argument #1 'per_sample_weights'; but type ember.{weight.dtype._legacy} does not "
            f"equal ember.{psw.dtype._legacy} (while checking arguments for embedding_bag)")
    n_rows = weight._data.shape[0]
    if padding_idx is not None:
        if not -n_rows <= padding_idx < n_rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, "
                               f"-{n_rows} through {n_rows - 1}, but got {padding_idx}")
        padding_idx %= n_rows
    return padding_idx


def _legacy(a) -> str:
    return D._FROM_NP[a.dtype]._legacy


def _check_offsets(idx, off) -> None:
    if off.size and off[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {int(off[0])}\n[ ember.{_legacy(off)}{{}} ]")
    if off.size and off[-1] > idx.shape[0]:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                           f"{idx.shape[0]} but got offsets[-1] of {int(off[-1])}")


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """``torch.nn.functional.embedding_bag``: sums, means or maxima of bags of embedding rows
    (bags given by ``offsets`` into a 1-D ``input``, or the rows of a 2-D one), in one op."""
    if weight.dtype is D.int64 and input.is_floating_point():
        import warnings
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage "
            "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
            "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    psw = per_sample_weights
    mode_n = _eb_python_checks(input, weight, offsets, mode, psw, scale_grad_by_freq, sparse)
    if sparse:
        raise NotImplementedError("embedding_bag(sparse=True) needs sparse gradient tensors, "
                                  "which ember does not have; use sparse=False")
    idx = input._data
    if idx.ndim == 2:
        off = np.arange(0, idx.size, max(idx.shape[1], 1), like=idx).astype(idx.dtype)
        off_t = _make(off, Version(), False, None)
        include_last_offset = False
        idx = idx.reshape(-1)
        if psw is not None:
            psw = psw.reshape(-1)
    else:
        off_t = offsets
    if max_norm is not None:
        _index_type_error(input, "embedding_renorm_", 2)
        _renorm_rows(weight, idx, float(max_norm), float(norm_type))
    if psw is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    padding_idx = _eb_kernel_checks(input, off_t, weight, psw, padding_idx)
    _check_offsets(idx, off_t._data)
    off = off_t._data.astype(np.int64)
    n_rows = weight._data.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n_rows):
        bad = idx[(idx < 0) | (idx >= n_rows)][0]
        raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found "
                           f"idx to be {int(bad)}")
    plan = _Bags(idx.astype(np.int64), off, n_rows, mode_n, include_last_offset, padding_idx,
                 scale_grad_by_freq, weight._data.dtype)
    return apply(EMBEDDING_BAG, (weight, psw), (plan,))


# ---- one_hot ---------------------------------------------------------------------------------

def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """``torch.nn.functional.one_hot``: int64 one-hot rows; ``num_classes=-1`` takes max + 1."""
    x = tensor._data
    if x.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if x.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(x.max()) + 1
    if x.size:
        if x.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if x.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = (x[..., None] == np.arange(max(num_classes, 0), like=x)).astype(np.int64)
    return _make(out, Version(), False, None)


# ---- distances -------------------------------------------------------------------------------

def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``torch.nn.functional.cosine_similarity``: each input divided by its norm (clamped to
    ``eps``) first, then the dot product over ``dim``: PyTorch's composite, op for op."""
    from .reduction import norm
    common = D.result_type_of((x1, x2))
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_type_name(common)}")
    if not (x1.is_floating_point() or x1.is_complex()):
        x1 = x1.to(common)
    if not (x2.is_floating_point() or x2.is_complex()):
        x2 = x2.to(common)
    if x1._data.shape != x2._data.shape:
        from .matrix import broadcast_tensors
        x1, x2 = broadcast_tensors(x1, x2)
    n1 = norm(x1, 2, dim, True).clone()
    n2 = norm(x2, 2, dim, True).clone()
    from ..autograd.grad_mode import no_grad
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _norm_op():
    from .reduction import NORM
    return Op("norm", NORM.fwd, NORM.vjp, NORM.jvp, saves=NORM.saves, save_out=True,
              node="NormBackward1")


_NORM1: list = []


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``torch.nn.functional.pairwise_distance``: ``norm(x1 - x2 + eps, p)`` over the last dim
    (PyTorch's at::norm, whose node is NormBackward1)."""
    if not _NORM1:
        _NORM1.append(_norm_op())
    nd = max(x1._data.ndim, x2._data.ndim)
    diff = x1 - x2 + eps
    if not (diff.is_floating_point() or diff.is_complex()):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_type_name(diff.dtype)}")
    dims = (_wrap_dim(nd - 1, max(nd, 1)),) if diff._data.ndim else None
    return apply(_NORM1[0], (diff,), (dims, keepdim, float(p)))


# ---- pdist -----------------------------------------------------------------------------------

def _pairs(n: int, like):
    i, j = np.triu_indices(n, 1)
    return np.asarray(i, like=like), np.asarray(j, like=like)


def _pdist_fwd(x, p, i, j):
    from .reduction import _norm_fwd
    return _norm_fwd(np.take(x, i, axis=0) - np.take(x, j, axis=0), (1,), False, p)


def _pdist_dd(ns, diff, d, p):
    """d dist / d diff for each row pair, as PyTorch's _pdist_backward: 0 where the distance is
    0 (and, for p < 1, where a component of the difference is)."""
    de = d[:, None]
    zero = ns.data_fn(lambda a: a == 0, de)
    if p == 1:
        return ns.where(zero, 0, ns.sgn(diff))
    if p == 2:
        return ns.where(zero, 0, diff / ns.where(zero, 1, de))
    ad = ns.abs(diff)
    if p == math.inf:
        hit = ns.data_fn(lambda a, b: (a == b) & (b != 0), ad, de)
        return ns.where(hit, ns.sgn(diff), 0)
    bad = ns.data_fn(lambda a, z: (a == 0) | z, ad, zero) if p < 1 else zero
    return ns.where(bad, 0, ns.sgn(diff) * ns.where(bad, 1, ad) ** (p - 1)
                    / ns.where(zero, 1, de) ** (p - 1))


def _pdist_vjp(ns, g, need, x, out, p, i, j):
    if p == 0 or not i.shape[0]:   # zero, but (like PyTorch's) connected to x
        return (ns.zeros_of(x, x.shape) + ns.dep_zero(x),)
    diff = ns.rows_take(x, i) - ns.rows_take(x, j)
    gd = _pdist_dd(ns, diff, out, p) * g[:, None]
    n = x.shape[0]
    return (ns.rows_add(gd, n, i) - ns.rows_add(gd, n, j),)


def _pdist_jvp(ns, tangents, primals, outs, p, i, j):
    x, t = primals[0], tangents[0]
    if p == 0 or not i.shape[0]:
        return ns.zeros_of(outs[0], outs[0].shape)
    diff = ns.rows_take(x, i) - ns.rows_take(x, j)
    td = ns.rows_take(t, i) - ns.rows_take(t, j)
    return ns.sum_dims(_pdist_dd(ns, diff, outs[0], p) * td, (1,), False)


PDIST = Op("pdist", on_meta(_pdist_fwd), _pdist_vjp, _pdist_jvp, saves=(0,), save_out=True,
           node="PdistBackward0")


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """``torch.nn.functional.pdist``: the p-norm distances between all row pairs i < j."""
    x = input._data
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = _pairs(x.shape[0], x)
    return apply(PDIST, (input,), (float(p), i, j))
