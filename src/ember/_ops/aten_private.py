"""Underscored and ``native_*`` ATen operators that PyTorch exposes as ``torch.<name>`` and lists
in its OpInfo database, built as thin functions over ember's operators, and ``Tensor.__rdiv__``
(PyTorch's alias of ``__rtruediv__``)."""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor, _wrap_dim
from . import nn_norm
from ._out import with_out
from ._registry import Op, apply
from .joining import cat
from .misc_ops import _plain, _stats, native_batch_norm
from .nn_norm import group_norm

__all__ = ["native_group_norm", "_native_batch_norm_legit", "_chunk_cat",
           "_softmax_backward_data", "_safe_softmax", "_unsafe_masked_index",
           "_unsafe_masked_index_put_accumulate", "hash_tensor", "segment_reduce",
           "_segment_reduce"]

# PyTorch's Tensor.__rdiv__ is the same function as __rtruediv__ (``2 / x`` and
# ``x.__rdiv__(2)`` both record MulBackward0)
Tensor.__rdiv__ = Tensor.__rtruediv__



def _no_sparse(name: str):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"Tensor.{name}(): ember has no sparse layouts; tensors are "
                                  "always torch.strided (dense)")
    method.__name__ = name
    return method


# sparse conversions are named (PyTorch's OpInfo lists to_sparse) but refused with a sentence
for _name in ("to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr",
              "to_sparse_bsc"):
    setattr(Tensor, _name, _no_sparse(_name))

_NODES: dict = {}


def _as_node(node: str, *outs: Tensor):
    """``outs`` passed through one identity node called ``node``: the composite functions below
    record PyTorch's grad_fn name (their gradients are the composite's)."""
    n = len(outs)
    if (node, n) not in _NODES:
        # the outputs get memory of their own: an in-place change to one must not reach the
        # composite's saved results behind the version counter's back
        _NODES[node, n] = Op(node, lambda *a: tuple(np.array(x) for x in a) if n > 1
                             else np.array(a[0]),
                             lambda ns, g, need: g if n > 1 else (g,), linear=True, node=node,
                             n_out=n)
    return apply(_NODES[node, n], outs, ())


_BN_LEGIT = nn_norm._norm_op("_native_batch_norm_legit", "NativeBatchNormLegitBackward0",
                             ("input", "weight", None, "eps", None))
# the overload without running statistics is a node of its own in PyTorch
_BN_LEGIT_NO_STATS = nn_norm._norm_op("_native_batch_norm_legit",
                                      "NativeBatchNormLegitBackward1",
                                      ("input", "weight", None, "eps", None))


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,
                      C: int, HxW: int, group: int, eps: float) -> tuple:
    """``torch.native_group_norm``: ``(F.group_norm(...), mean, rstd)`` with the statistics per
    (sample, group), shape ``(N, group)``, carrying no gradient."""
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements, got {input.numel()}")
    out = group_norm(input, group, weight, bias, eps)
    # the statistics are outputs of NativeGroupNormBackward0 too; ember differentiates them
    # through the mean and variance ops (PyTorch drops a gradient reaching them: README)
    grouped = input.reshape(N, group, (C // group) * HxW)
    mean = grouped.mean(-1)
    rstd = (grouped.var(-1, unbiased=False) + eps).rsqrt()
    if not (out.requires_grad or mean.requires_grad):
        return out, mean, rstd
    return _as_node("NativeGroupNormBackward0", out, mean, rstd)


def _native_batch_norm_legit(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                             running_mean: Tensor | bool | None = None,
                             running_var: Tensor | float | None = None,
                             training: bool | float = False, momentum: float = 0.1,
                             eps: float = 1e-5) -> tuple:
    """``torch._native_batch_norm_legit``: ``native_batch_norm`` with the running statistics
    either given (``(input, weight, bias, running_mean, running_var, training, momentum, eps)``)
    or left out (``(input, weight, bias, training, momentum, eps)``: batch statistics only)."""
    op = _BN_LEGIT
    if isinstance(running_mean, bool):   # the no_stats overload: shift the arguments
        running_mean, running_var, training, momentum, eps = (
            None, None, running_mean, running_var, training)
        op = _BN_LEGIT_NO_STATS
    if input.numel() == 0 or not (training or running_mean is not None):
        return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                                 momentum, eps)
    # nn_norm's batch norm with PyTorch's node for this overload
    nn_norm._check_float(input, "batch_norm")
    nn_norm._check_mixed(input, weight, bias, running_mean, running_var)
    nn_norm._check_running_no_grad(running_mean, running_var)
    shape = input.shape
    c = shape[1]
    lay = nn_norm._Layout(shape, (shape[0], c, math.prod(shape[2:])), (0, 2), (1, c, 1), (0, 2),
                          (c,), bool(training), nn_norm._compute_dtype(input))
    st = nn_norm._Stats()
    if not training:
        st.mean = running_mean._data.reshape(lay.wshape).astype(lay.cdt)
        st.rstd = 1.0 / np.sqrt(running_var._data.reshape(lay.wshape).astype(lay.cdt) + eps)
    out = apply(op, (input, weight, bias), (lay, float(eps), st))
    if training and running_mean is not None:
        nn_norm._update_running(running_mean, running_var, st, lay, momentum)
    if training:
        axes = (0,) + tuple(range(2, input.dim()))
        return (out,) + _stats(input, axes, (c,), eps)
    e = np.zeros((0,), input._data.dtype)
    return out, _plain(e), _plain(e.copy())


def _chunk_cat_check(tensors: list, dim: int, num_chunks: int) -> int:
    """PyTorch's checks of a _chunk_cat call, in its order; the dim, wrapped."""
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("_chunk_cat expects all input tensors with the same dtype")
    if any(t.numel() == 0 for t in tensors):
        raise RuntimeError("_chunk_cat expects non-empty tensor")
    nd = tensors[0].dim()
    if all(t.dim() == nd for t in tensors):
        d = _wrap_dim(dim, nd)
    elif dim < 0:
        raise RuntimeError("_chunk_cat expects non-negative dim when input tensors have "
                           "different ndims")
    elif any(dim >= t.dim() for t in tensors):
        raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
    else:
        d = dim
    if any(t.shape[:d] != tensors[0].shape[:d] for t in tensors):
        raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all "
                           "tensors")
    return d


def _chunk_cat(tensors, dim: int, num_chunks: int, *, out: Tensor | None = None) -> Tensor:
    """``torch._chunk_cat``: each tensor split into ``num_chunks`` chunks along ``dim`` (the last
    one zero-padded to ``ceil(size / num_chunks)``), the dims after ``dim`` flattened into the
    chunk, and the chunks concatenated: shape ``(*pre, num_chunks, total)``."""
    if out is not None:
        return with_out(_chunk_cat, out, (tensors, dim, num_chunks), dtype="exact")
    tensors = list(tensors)
    d = _chunk_cat_check(tensors, dim, num_chunks)
    parts = []
    for t in tensors:
        size = t.shape[d]
        chunk = -(-size // num_chunks)
        pad = chunk * num_chunks - size
        if pad:
            fill = t.new_zeros(tuple(t.shape[:d]) + (pad,) + tuple(t.shape[d + 1:]))
            t = cat([t, fill], d)
        post = math.prod(t.shape[d + 1:])
        parts.append(t.reshape(tuple(t.shape[:d]) + (num_chunks, chunk * post)))
    res = cat(parts, d + 1)
    return res


# ---- softmax's backward as an operator, and the softmax that gives 0 for all -inf rows ---------

def _sbd_fwd(g, y, dim):
    return y * (g - np.sum(g * y, axis=dim, keepdims=True))


def _sbd_vjp(ns, G, need, g, y, dim):
    sgy = ns.sum_dims(G * y, (dim,), True)
    dg = y * (G - sgy) if need[0] else None
    dy = G * (g - ns.sum_dims(g * y, (dim,), True)) - g * sgy if need[1] else None
    return dg, dy


def _sbd_jvp(ns, tangents, primals, outs, dim):
    (tg, ty), (g, y) = tangents, primals
    r = None
    if ty is not None:
        r = ty * (g - ns.sum_dims(g * y, (dim,), True)) - y * ns.sum_dims(g * ty, (dim,), True)
    if tg is not None:
        t = y * (tg - ns.sum_dims(tg * y, (dim,), True))
        r = t if r is None else r + t
    return r


_SOFTMAX_BWD_DATA = Op("_softmax_backward_data", _sbd_fwd, _sbd_vjp, _sbd_jvp, saves=(0, 1),
                       node="SoftmaxBackwardDataBackward0", names=("grad_output", "output"))


def _softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int,
                           input_dtype) -> Tensor:
    """``torch._softmax_backward_data``: the gradient of softmax's input,
    ``output * (grad_output - (grad_output * output).sum(dim, keepdim=True))``, in
    ``input_dtype`` (differentiable twice, as PyTorch's)."""
    d = dim + output.dim() if dim < 0 else dim
    if not 0 <= d < max(output.dim(), 1):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(output.dim(), 1)}, {max(output.dim(), 1) - 1}], but got {dim})")
    r = apply(_SOFTMAX_BWD_DATA, (grad_output, output), (d if output.dim() else None,))
    return r if input_dtype is None or r.dtype is input_dtype else r.to(input_dtype)


def _safe_fwd(x, dim):
    dead = np.all(x == -np.inf, axis=dim, keepdims=True)
    m = np.where(dead, 0, np.max(x, axis=dim, keepdims=True))
    e = np.exp(x - m)
    return np.where(dead, 0, e / np.sum(e, axis=dim, keepdims=True)).astype(x.dtype)


def _safe_vjp(ns, G, need, y, dim):
    return (y * (G - ns.sum_dims(G * y, (dim,), True)),)


def _safe_jvp(ns, tangents, primals, outs, dim):
    y = outs[0]
    return y * (tangents[0] - ns.sum_dims(tangents[0] * y, (dim,), True))


_SAFE_SOFTMAX = Op("_safe_softmax", _safe_fwd, _safe_vjp, _safe_jvp, save_out=True,
                   node="SafeSoftmaxBackward0", names=("result",))


def _safe_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """``torch._safe_softmax``: softmax along ``dim``, with 0 (not NaN) for slices that are
    all ``-inf`` (the attention kernels' fully masked rows)."""
    if dtype is not None and input.dtype is not dtype:
        input = input.to(dtype)
    n = max(input.dim(), 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    d = dim % n if input.dim() else None
    return apply(_SAFE_SOFTMAX, (input,), (d,))


# ---- masked indexing (the decompositions of upsampling and padding use these) -----------------

def _masked_key(x: Tensor, mask: Tensor, indices) -> tuple:
    """The indices with masked-off positions sent to 0 (PyTorch's kernel never reads them)."""
    from .pointwise_more import where
    key = []
    for i in indices:
        key.append(slice(None) if i is None else where(mask, i, 0))
    return tuple(key)


def _unsafe_masked_index(input: Tensor, mask: Tensor, indices, fill) -> Tensor:
    """``torch._unsafe_masked_index``: ``input[indices]`` where ``mask`` holds, ``fill``
    elsewhere (the masked-off indices may be out of bounds)."""
    from .pointwise_more import where
    return _as_node("UnsafeMaskedIndexBackward0",
                    where(mask, input[_masked_key(input, mask, indices)], fill))


def _unsafe_masked_index_put_accumulate(input: Tensor, mask: Tensor, indices,
                                        values: Tensor) -> Tensor:
    """``torch._unsafe_masked_index_put_accumulate``: ``input.index_put(indices, values,
    accumulate=True)`` with the masked-off values (and their indices) left out."""
    from .pointwise_more import where
    vals = where(mask, values, values.new_zeros(()))
    return _as_node("UnsafeMaskedIndexPutAccumulateBackward0",
                    input.index_put(_masked_key(input, mask, indices), vals, accumulate=True))


# ---- hash_tensor --------------------------------------------------------------------------------

def hash_tensor(input: Tensor, dim=None, *, keepdim: bool = False, mode: int = 0) -> Tensor:
    """``torch.hash_tensor``: the xor of the elements' bits, each widened to its 64-bit float or
    integer type first, over ``dim`` (all dims by default); a ``uint64`` result."""
    from .. import _dtype as D
    from ._dispatch import _type_name
    from .reduction import dims_arg
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    a = input._data
    if a.dtype.kind == "c":
        raise NotImplementedError(
            f'"xor_sum_cpu" not implemented for \'{_type_name(input.dtype)}\'')
    if a.dtype.kind == "f" or input.dtype.name in ("bfloat16",):
        bits = np.asarray(a, np.float64).view(np.uint64)
    elif a.dtype.kind == "u":
        bits = np.asarray(a, np.uint64)
    else:
        bits = np.asarray(a, np.int64).view(np.uint64)
    dims = dims_arg(dim, a.ndim)
    axes = tuple(range(a.ndim)) if dims is None else tuple(dims)
    for d in axes:
        if a.shape[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    r = np.bitwise_xor.reduce(bits, axis=axes, keepdims=keepdim) if axes else bits.copy()
    from .._tensor import Version, _make
    out = _make(np.array(r, np.uint64), Version(), False, None)   # 0-dim stays 0-dim
    return out if out.dtype is D.uint64 else out.to(D.uint64)


# ---- segment_reduce -----------------------------------------------------------------------------

_SEG_EMPTY = {"max": -math.inf, "min": math.inf, "mean": math.nan, "sum": 0.0, "prod": 1.0}


def _segment(seg: Tensor, reduce: str, axis: int, initial) -> Tensor:
    from .pointwise_more import maximum, minimum
    n = seg.shape[axis]
    if reduce in ("sum", "mean"):
        v = seg.sum(axis)
        if initial is not None:
            v = v + initial
        return v / n if reduce == "mean" else v
    if reduce == "prod":
        v = seg.prod(axis)
        return v if initial is None else v * initial
    v = seg.amax(axis) if reduce == "max" else seg.amin(axis)
    if initial is None:
        return v
    return (maximum if reduce == "max" else minimum)(v, v.new_full((), initial))


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None,
                   indices: Tensor | None = None, offsets: Tensor | None = None, axis: int = 0,
                   unsafe: bool = False, initial=None) -> Tensor:
    """``torch.segment_reduce`` (``torch._segment_reduce``): ``data`` reduced (max, min, mean,
    sum, prod) over consecutive segments along ``axis`` given by ``lengths`` or ``offsets``
    (batched: one row per index of the dims before ``axis``); ``initial`` joins every segment,
    and an empty segment gives ``initial`` (else -inf, inf, nan, 0, 1)."""
    if reduce not in _SEG_EMPTY:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    nd = max(data.dim(), 1)
    axis = axis + nd if axis < 0 else axis
    out = _segment_rows(data, reduce, lengths, offsets, axis, unsafe, initial)
    return _as_node("SegmentReduceBackward0", out) if out.requires_grad else out


def _segment_rows(data, reduce, lengths, offsets, axis, unsafe, initial) -> Tensor:
    from .joining import stack
    seg = lengths if lengths is not None else offsets
    if seg is not None and seg.dim() > 1:
        # batched segments: one row of lengths/offsets per index of the leading dims
        if axis != seg.dim() - 1:
            raise RuntimeError("segment_reduce(): Expected axis to be the last dimension of "
                               "lengths or offsets")
        rows = [_segment_rows(data.select(0, i), reduce,
                              None if lengths is None else lengths[i],
                              None if offsets is None else offsets[i], axis - 1, unsafe, initial)
                for i in range(data.shape[0])]
        return stack(rows, 0)
    if lengths is not None:
        lens = np.asarray(lengths._data)
        if not unsafe and (lens < 0).any():
            raise RuntimeError("lengths contains negative value!")
        if not unsafe and int(lens.sum()) != data.shape[axis]:
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to "
                               "sum to data.size(lengths.dim()-1) when !unsafe.")
        offs = np.concatenate([[0], np.cumsum(lens)])
    elif offsets is not None:
        offs = np.asarray(offsets._data)
    else:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    parts = []
    rest = tuple(data.shape[:axis]) + tuple(data.shape[axis + 1:])
    for a, b in zip(offs[:-1].tolist(), offs[1:].tolist()):
        if b == a:
            fill = _SEG_EMPTY[reduce] if initial is None else initial
            parts.append(data.new_full(rest, fill).detach())
        else:
            parts.append(_segment(data.narrow(axis, a, b - a), reduce, axis, initial))
    if not parts:
        return data.new_zeros(tuple(data.shape[:axis]) + (0,) + tuple(data.shape[axis + 1:]))
    return stack(parts, axis)


_segment_reduce = segment_reduce
