"""Calling conventions shared by the op families: operand promotion, unary and binary calls,
and in-place application with PyTorch's checks and history rebasing (CopySlices)."""
from __future__ import annotations

import numpy as np

from .. import _chalf
from .. import _dtype as D
from .. import _layout as _L
from .._tensor import (
    CONJ_BIT,
    Tensor,
    Version,
    _Lazy,
    _make,
    _refresh_view,
    _root,
    lazy_bits,
    raw_data,
    set_history,
    view_rebase_error,
)
from ..autograd.forward_ad import fw_of, write_tangent
from ..autograd.grad_mode import STATE
from ._registry import NP, Op, _skips_autograd, apply, make_node, wrap_one, wrap_outputs, wrap_two
from ._uint import SHELL_NP, UINT_GATED
from ._uint import check as uint_check

_FLOAT_KINDS = "fc"
_PYNUM = (int, float, bool, complex)


def to_operand(x):
    """Python numbers pass through; NumPy scalars become the Python numbers PyTorch makes of
    them (``D.py_scalar``: their kind counts, not their width; ``np.float64`` subclasses
    ``float``, so it is tested first); tensors stay."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.generic):
        return D.py_scalar(x)
    if isinstance(x, _PYNUM):
        return x
    if isinstance(x, np.ndarray):
        from .creation import tensor
        return tensor(x)
    from ._parser import bad_operand
    raise bad_operand(x)


def promoted(a, b, int_to_float: bool = False):
    """The arrays (or scalars) ``a`` and ``b`` cast to their PyTorch result dtype."""
    da = a._data if isinstance(a, Tensor) else a
    db = b._data if isinstance(b, Tensor) else b
    ta = type(da)
    tb = type(db)
    # fast paths: same dtype; float tensor with a Python float/int
    if ta is np.ndarray and tb is np.ndarray and da.dtype is db.dtype and (
            not int_to_float or da.dtype.kind in _FLOAT_KINDS):
        return da, db, da.dtype
    if ta is np.ndarray and (tb is float or tb is int) and da.dtype.kind in _FLOAT_KINDS:
        return da, db, da.dtype
    rt = D.result_type_of((a, b))
    if int_to_float and not (rt.is_floating_point or rt.is_complex):
        rt = D.get_default_dtype()
    npt = rt.np
    if rt.is_complex and (rt is D.complex32 or _chalf.is_ch(da) or _chalf.is_ch(db)):
        return _chalf.promoted(da, db, npt)   # NumPy cannot cast to or from its pairs
    if isinstance(da, np.ndarray):
        if da.dtype != npt:
            da = da.astype(npt)
    elif npt.kind in "iub" or rt is D.bfloat16:
        da = np.asarray(da).astype(npt)
    if isinstance(db, np.ndarray):
        if db.dtype != npt:
            db = db.astype(npt)
    elif npt.kind in "iub" or rt is D.bfloat16:
        db = np.asarray(db).astype(npt)
    return da, db, npt


_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
HALF_NP = (np.dtype(np.float16), D.bfloat16.np)
# ops whose CPU kernel reads a scalar second operand (a Python number or any 0-dim tensor) at
# float32 ("opmath") precision for half types, instead of rounding it to the half type first
# (PyTorch's mul and div kernels; add and sub round it)
_SCALAR_OPMATH = frozenset({"mul", "div"})


_CPU: dict = {}


def cpu_lanes() -> tuple:
    """(half-type lanes in one of PyTorch's CPU vectors, intra-op threads), as PyTorch picks them
    on this machine: 32 lanes with AVX512 (avx512f/bw/vl/dq), else 16; one thread per usable
    core. Some half kernels round differently in their vectorised body and their scalar tail,
    and where the tail falls depends on both."""
    if not _CPU:
        import os
        try:
            with open("/proc/cpuinfo") as f:
                flags = next((ln for ln in f if ln.startswith("flags")), "").split()
        except OSError:
            flags = []
        cap = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
        avx512 = all(f in flags for f in ("avx512f", "avx512bw", "avx512vl", "avx512dq"))
        _CPU["lanes"] = 32 if avx512 and cap not in ("avx2", "default") else 16
        try:
            _CPU["threads"] = max(1, len(os.sched_getaffinity(0)))
        except (AttributeError, OSError):
            _CPU["threads"] = max(1, os.cpu_count() or 1)
    return _CPU["lanes"], _CPU["threads"]


def half_scalar(op: Op, b, da, npt, params: tuple):
    """``op`` on half array ``da`` and scalar ``b`` as PyTorch's kernel computes it: in float32
    with the scalar's float32 value, rounded once; None where that does not apply."""
    if op.name not in _SCALAR_OPMATH or npt not in HALF_NP:
        return None
    if isinstance(b, Tensor):
        if b._data.ndim or type(b._data) is not np.ndarray:
            return None
        b = b._data
    elif not isinstance(b, (int, float)):
        return None
    with np.errstate(over="ignore"):
        s = np.float32(b)
    return op.fwd(np.asarray(da).astype(np.float32), s, *params).astype(npt)


def fused_vjp(vjp, half: tuple = HALF_NP, upcast: bool = True):
    """A VJP (or elementwise JVP) as one of PyTorch's fused backward kernels computes it for
    half types: gradient and saved arrays in float32, each result rounded once to the
    gradient's half type. Other dtypes, and the differentiable (ember) namespace, run
    ``vjp`` as written. ``half``: the half types the kernel fuses (some of PyTorch's kernels
    compute float16 op by op, each step rounded, and only bfloat16 in float32). ``upcast=False``:
    a kernel that selects rather than computes (threshold_backward); it runs on the half arrays
    and only the forward-mode route changes."""
    def f(ns, g, need, *saved):
        if ns is not NP and isinstance(g, Tensor) and type(g._data) is np.ndarray \
                and g._data.dtype in half and not any(
                isinstance(t, Tensor) and t.requires_grad for t in (g,) + saved):
            # a forward-mode tangent (or a backward without create_graph's graph to record):
            # the kernel on the arrays, as PyTorch runs its fused kernel for the JVP too
            res = f(NP, g._data, need, *(t._data if isinstance(t, Tensor) else t
                                         for t in saved))
            return tuple(None if r is None else _make(r, Version(), False, None) for r in res)
        if type(g) is not np.ndarray or g.dtype.itemsize != 2 or g.dtype not in half \
                or ns is not NP or not upcast:
            return vjp(ns, g, need, *saved)
        dt = g.dtype
        up = [s.astype(np.float32) if type(s) is np.ndarray and s.dtype in HALF_NP else s
              for s in saved]
        res = vjp(ns, g.astype(np.float32), need, *up)
        return tuple(None if r is None else np.asarray(r).astype(dt) for r in res)
    f.__name__ = getattr(vjp, "__name__", "vjp")
    return f


def binary(op: Op, a, b, params: tuple = (), int_to_float: bool = False):
    """Call a two-operand op with PyTorch's type promotion."""
    tb = type(b)
    if tb is float and isinstance(a, Tensor) and type(a._data) is np.ndarray and (
            (dt := a._data.dtype) is _F32 or dt is _F64):
        # the common case: float tensor (or nn.Parameter) with a Python float
        out = op.fwd(da := a._data, b, *params)
        if out.ndim > 1 and out.strides != da.strides and not (
                out.flags.c_contiguous and da.flags.c_contiguous and 1 not in da.shape
                and da.size):
            # (NumPy's order misses size-1 dims, ties; pow's number exponent is no operand; a
            # row-major input without size-1 dims has a row-major result of another itemsize)
            out = iter_layout(out, (da,) if op.name == "pow" else (da, b))
        return wrap_one(op, a, params, out, b)
    if isinstance(b, Tensor) and isinstance(a, Tensor):
        da = a._data
        db = b._data
        if type(da) is np.ndarray and type(db) is np.ndarray and (
                (dt := da.dtype) is _F32 or dt is _F64) and db.dtype is dt:
            if da.shape == db.shape:
                # two float tensors of one dtype and shape: no promotion, no broadcast
                out = op.fwd(da, db, *params)
                if type(out) is np.ndarray and out.ndim > 1 and not (
                        out.flags.c_contiguous and da.flags.c_contiguous
                        and db.flags.c_contiguous and out.shape == da.shape):
                    out = iter_layout(out, (da, db))
                return wrap_two(op, a, b, params, out)
            if da.flags.c_contiguous and db.flags.c_contiguous:
                # broadcasting row-major operands to a result without size-1 dims: every
                # size-1 dim of an operand is broadcast (stride 0), the others' strides fall
                # strictly, so TensorIterator's order is row-major too and no layout is
                # computed; a failure to broadcast goes the general way (PyTorch's error)
                try:
                    out = op.fwd(da, db, *params)
                except ValueError:
                    out = None
                if out is not None:
                    if type(out) is np.ndarray and out.ndim > 1 and not (
                            out.flags.c_contiguous and 1 not in out.shape and out.size):
                        out = iter_layout(out, (da, db))
                    return wrap_two(op, a, b, params, out)
    if tb is not Tensor and not isinstance(b, Tensor):
        b = to_operand(b)
    if not isinstance(a, Tensor):
        a = to_operand(a)
    da, db, npt = promoted(a, b, int_to_float)
    if op.name in UINT_GATED and npt in SHELL_NP:
        uint_check(op.name, npt)
    out = None
    if npt in HALF_NP:
        out = half_scalar(op, b, da, npt, params)
        if out is None and isinstance(a, (int, float)):
            # ``2.5 * t`` is PyTorch's ``t.mul(2.5)``: the Python number reaches the kernel as
            # its scalar operand (a 0-dim tensor first stays first, and is rounded)
            out = half_scalar(op, a, db, npt, params)
    if out is None:
        try:
            out = op.fwd(da, db, *params)
        except ValueError:
            check_broadcast(np.shape(da), np.shape(db))
            raise
        except TypeError as e:   # NumPy refused complex32 pairs (or a real type error)
            out = _chalf.refused(e, op, (da, db), params)
    if type(out) is np.ndarray and out.ndim > 1:
        # the operands' strides before promotion (a cast copy of an expand has lost its zeros)
        xa = a._data if isinstance(a, Tensor) else a
        xb = b._data if isinstance(b, Tensor) else b
        if not (out.flags.c_contiguous and _c_same(xa, out) and _c_same(xb, out)):
            out = iter_layout(out, (xa,) if op.name == "pow" else (xa, xb))
    return wrap_outputs(op, (a, b), params, out)


def _c_same(x, out) -> bool:
    """A number, or a row-major array of the result's shape: it leaves the result row-major
    (a broadcast operand's size-1 strides can reorder dims in PyTorch)."""
    return type(x) is not np.ndarray or not x.ndim or (
        x.flags.c_contiguous and x.shape == out.shape and x.strides == out.strides and x.size)


def iter_layout(out: np.ndarray, arrays) -> np.ndarray:
    """``out`` laid out as PyTorch's TensorIterator lays out an elementwise result of
    ``arrays`` (the operands before promotion; numbers count as PyTorch's wrapped 0-dim
    tensors): ``ember._layout.iter_result`` holds the rule."""
    return _L.iter_result(out, arrays)


def check_broadcast(*shapes) -> None:
    """PyTorch's error when ``shapes`` do not broadcast together."""
    res: list = []
    for s in shapes:
        s = tuple(s)
        n = max(len(res), len(s))
        a = [1] * (n - len(res)) + res
        b = [1] * (n - len(s)) + list(s)
        for i in range(n - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(
                    f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                    f"non-singleton dimension {i}")
        res = [x if x != 1 else y for x, y in zip(a, b)]


def broadcast_failed(exc: ValueError, *shapes) -> None:
    """PyTorch's error in place of NumPy's ValueError ``exc`` when it is a broadcast failure."""
    if "broadcast" in str(exc):
        check_broadcast(*shapes)


def unary(op: Op, x: Tensor, params: tuple = (), int_to_float: bool = False):
    """Call a one-operand op; integer inputs become the default float when the op needs it."""
    d = x._data
    if type(d) is np.ndarray and ((dt := d.dtype) is _F32 or dt is _F64):
        # the commonest call: a float32/float64 array, nothing to gate, cast or refuse
        out = op.fwd(d, *params)
        if type(out) is np.ndarray and out.ndim > 1 and out.strides != d.strides and (
                out.itemsize == d.itemsize or not d.flags.c_contiguous):
            out = _L.iter_result(out, (d,))   # (as below)
        return wrap_one(op, x, params, out)
    if op.name in UINT_GATED and d.dtype in SHELL_NP:
        uint_check(op.name, d.dtype)
    try:
        if int_to_float and d.dtype.kind not in _FLOAT_KINDS and d.dtype != D.bfloat16.np:
            d = d.astype(D.get_default_dtype().np)
        out = op.fwd(d, *params)
    except TypeError as e:   # NumPy refused complex32 pairs (or a real type error)
        out = _chalf.refused(e, op, (d,), params)
    if type(out) is np.ndarray and out.ndim > 1 and out.strides != d.strides and (
            out.itemsize == d.itemsize or not d.flags.c_contiguous):
        out = _L.iter_result(out, (x._data,))   # (NumPy's order misses size-1 dims, ties)
    return wrap_one(op, x, params, out)


# ---- in-place ---------------------------------------------------------------------------

def check_inplace(self: Tensor, others: tuple = (), op: Op | None = None) -> None:
    """PyTorch's refusals for in-place ops on tensors autograd needs intact, in its order: a view
    created in a special way, a view of a leaf, a leaf; then an inference tensor outside
    inference mode. ``others`` are the op's other operands (a no-grad view written with a tensor
    that requires grad is refused too)."""
    if autograd_refusals(self, others, op):
        refuse_inference(self, others)


def autograd_refusals(self: Tensor, others: tuple = (), op: Op | None = None) -> bool:
    """The part of ``check_inplace`` PyTorch's autograd kernel raises, before the op's own
    argument checks. For an inference tensor autograd runs only when ``op`` still reaches it (some
    argument is a normal tensor). Returns whether ``self`` is an inference tensor written outside
    inference mode: PyTorch refuses it when bumping its version, after the kernel's checks, so the
    caller runs those and then calls ``refuse_inference`` (before writing anything)."""
    x = self._x
    refused = x is not None and x.inference and not STATE.inference and not x.counted
    if STATE.grad and (not refused or op is not None and not _skips_autograd(op, others)):
        _check_inplace_autograd(self, others)
    return refused


def refuse_inference(self: Tensor, others: tuple = ()) -> None:
    """PyTorch's refusal of an in-place op on an inference tensor outside inference mode."""
    check_overlap(self, [o for o in others if isinstance(o, Tensor)])
    raise RuntimeError(
        "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
        "make a clone to get a normal tensor before doing inplace update.See "
        "https://github.com/pytorch/rfcs/pull/17 for more details.")


def _check_inplace_autograd(self: Tensor, others: tuple) -> None:
    base = self._base
    if base is not None:
        rg = self._rg or self._fn is not None or base._rg
        if not rg and not any(isinstance(o, Tensor) and o.requires_grad for o in others):
            return
        if self._cm:
            raise view_rebase_error(self, direct=True)
        if rg and base._fn is None:   # PyTorch: view requires grad and its base is a leaf
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation.")
    # a leaf to PyTorch: no grad_fn yet, though requiring grad; that includes a view whose base
    # gained history in place after the view was made, as long as nothing regenerated the
    # view's grad_fn (is_leaf reads grad_fn without regenerating it)
    if (self._rg or base is not None and (self._fn is not None or base._rg)) and self._fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor "
           "refer to a single memory location. Please clone() the tensor before performing the "
           "operation.")


def check_overlap(self: Tensor, others, full: bool = False) -> None:
    """PyTorch's refusal to write ``self`` from an operand sharing its memory: elementwise ops
    and ``copy_`` refuse a partial overlap (``assert_no_partial_overlap``), index and scatter
    ops (``full=True``) any overlap (``assert_no_overlap``). Only tensors over the same buffer
    (one version counter) are looked at, so the common case costs an identity test."""
    for o in others:
        if isinstance(o, Tensor) and o._vc is self._vc:
            st = _overlap_status(self._data, o._data)
            if st == 1 or st == 2 and full:
                raise RuntimeError(OVERLAP)


_dense = _L.dense_np


def _overlap_status(a: np.ndarray, b: np.ndarray) -> int:
    """PyTorch's ``get_overlap_status``: 0 none (or too hard to tell), 1 partial, 2 full."""
    if a is b:
        return 2
    if type(a) is not np.ndarray or type(b) is not np.ndarray or not a.size or not b.size:
        return 0
    if not (_dense(a) and _dense(b)):
        return 0
    a0 = a.__array_interface__["data"][0]
    b0 = b.__array_interface__["data"][0]
    a1, b1 = a0 + a.nbytes, b0 + b.nbytes
    if a0 == b0 and a1 == b1:
        return 2 if a.strides == b.strides else 1
    return 1 if a0 < b1 and b0 < a1 else 0


def records(inputs) -> bool:
    """Whether an in-place op on ``inputs`` (self first) is recorded: grad mode is on and one of
    them requires grad (a view counts its base)."""
    return STATE.grad and any(isinstance(t, Tensor) and t.requires_grad for t in inputs)


def _cast_result(self: Tensor, out: np.ndarray, rt) -> np.ndarray:
    sd = self._data.dtype
    if rt != sd:
        _check_cast(self, rt)
        out = out.astype(sd)
    return out


def _check_cast(self: Tensor, rt) -> None:
    """PyTorch's refusal to write a result of dtype ``rt`` into ``self`` (a higher category)."""
    r, s = D._FROM_NP[np.dtype(rt)], D._FROM_NP[self._data.dtype]
    if r._cat > s._cat:
        raise RuntimeError(
            f"result type {_type_name(r)} can't be cast to the desired output type "
            f"{_type_name(s)}")


def _type_name(d: D.dtype) -> str:
    return D.type_name(d)


def _check_shape(self: Tensor, out) -> None:
    if out.shape != self._data.shape:
        raise RuntimeError(
            f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
            f"{list(out.shape)}")


def inplace(op: Op, self: Tensor, others: tuple = (), params: tuple = (),
            int_to_float: bool = False, overlap: int = 1) -> Tensor:
    """Run ``op`` out of place, write the result into ``self``, bump its version and, when
    recording, make ``self`` (or, for a view, its base) take the op's node as history.
    ``overlap``: 1 refuses an operand partly overlapping ``self``, 2 any overlap (index and
    scatter ops), 0 none (a fill value is read once)."""
    others = tuple(to_operand(o) for o in others)
    refused = autograd_refusals(self, others, op)
    d0 = self._data
    if type(d0) is np.ndarray and not d0.flags.writeable and d0.size and \
            op.name not in _EXPANDED_OK and any(
            st == 0 and n > 1 for st, n in zip(d0.strides, d0.shape)):
        # PyTorch's TensorIterator refuses a self-overlapping (expanded) output first, before
        # a partial overlap with an operand and before the result type's cast
        raise RuntimeError(SELF_OVERLAP)
    if overlap:
        check_overlap(self, others, overlap == 2)
    # a view whose elements share memory (as_strided): PyTorch's kernel computes element after
    # element, each reading what the previous ones wrote
    seq = (self._base is not None and op.elementwise and len(others) <= 1
           and _self_overlapping(self._data))
    if op.name in UINT_GATED and self._data.dtype in SHELL_NP:
        uint_check(op.name, self._data.dtype)
    if len(others) == 1:
        da, db, rt = promoted(self, others[0], int_to_float)
        if rt is not self._data.dtype:
            # PyTorch refuses an uncastable result before its kernel runs (and raises)
            _check_cast(self, rt)
        hs = half_scalar(op, others[0], da, rt, params) if rt in HALF_NP and not seq else None
        if hs is not None:
            out = hs
        elif seq:
            out = _sequential(op, self._data, da.dtype, db, params).astype(rt)
        else:
            if op.ufunc is not None and _direct_ok(op, self, others[0], params, da, rt):
                # nothing to record: let the ufunc write straight into self's buffer (NumPy
                # checks the shapes before writing; on a mismatch the general path raises)
                try:
                    op.ufunc(da, db, out=da)
                except (ValueError, TypeError):   # (complex32 pairs: the general path)
                    pass
                else:
                    x = self._x
                    if x is None or not x.inference or not STATE.inference:
                        self._vc.v += 1
                    return self
            try:
                out = op.fwd(da, db, *params)
            except ValueError as e:
                broadcast_failed(e, np.shape(da), np.shape(db))
                raise
            except TypeError as e:   # NumPy refused complex32 pairs (or a real type error)
                out = _chalf.refused(e, op, (da, db), params)
    else:
        d = self._data
        if int_to_float and d.dtype.kind not in _FLOAT_KINDS:
            d = d.astype(D.get_default_dtype().np)
        datas = [o._data if isinstance(o, Tensor) else o for o in others]
        try:
            out = op.fwd(d, *datas, *params)
        except ValueError as e:
            broadcast_failed(e, d.shape, *[np.shape(x) for x in datas])
            raise
        except TypeError as e:   # NumPy refused complex32 pairs (or a real type error)
            out = _chalf.refused(e, op, (d, *datas), params)
        rt = np.asarray(out).dtype
        if seq:
            out = _sequential(op, self._data, d.dtype, None, params).astype(rt)
    out = np.asarray(out)
    _check_shape(self, out)
    out = _cast_result(self, out, rt)
    if refused:
        refuse_inference(self, others)
    inputs = (self,) + others
    return commit(op, self, inputs, params, out, records(inputs))


def _self_overlapping(d: np.ndarray) -> bool:
    """Whether some elements of view ``d`` share memory (strides that fold back, as as_strided
    makes). A stride-0 (expanded) view is left to ``_write_expanded``, which refuses it."""
    if d.flags.c_contiguous or d.flags.f_contiguous or not d.size or type(d) is not np.ndarray:
        return False
    dims = sorted((abs(st), n) for st, n in zip(d.strides, d.shape) if n != 1)
    if not dims or dims[0][0] == 0:
        return False
    reach = 0
    for st, n in dims:
        if st <= reach:
            break
        reach += st * (n - 1)
    else:
        return False
    # the quick test is inconclusive: count the distinct addresses
    addr = sum(np.arange(n).reshape((-1,) + (1,) * (d.ndim - 1 - i)) * st
               for i, (st, n) in enumerate(zip(d.strides, d.shape)))
    return np.unique(addr).size < d.size


def _sequential(op: Op, d: np.ndarray, work, other, params) -> np.ndarray:
    """``op`` applied in place to self-overlapping view ``d`` one element at a time, in
    PyTorch's loop order (largest stride outermost), on a scratch copy of its buffer; returns
    the view's final values."""
    root = _root(d)
    if not root.flags.c_contiguous:
        return np.asarray(op.fwd(d.astype(work), *(() if other is None else (other,)), *params))
    scratch = root.copy()
    off = d.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    sv = np.ndarray(d.shape, d.dtype, buffer=scratch, offset=off, strides=d.strides)
    ob = None if other is None else np.broadcast_to(np.asarray(other), d.shape)
    order = sorted(range(d.ndim), key=lambda i: -abs(d.strides[i]))
    for pos in np.ndindex(*(d.shape[i] for i in order)):
        at = [0] * d.ndim
        for i, p in zip(order, pos):
            at[i] = p
        at = tuple(at)
        a = np.asarray(sv[at], dtype=work)
        r = op.fwd(a, *params) if ob is None else op.fwd(a, ob[at], *params)
        sv[at] = r
    return np.array(sv)


def _direct_ok(op: Op, self: Tensor, other, params, da, rt) -> bool:
    """Whether ``self op= other`` may run as one ufunc call writing into ``self``: no graph to
    record, no tangent, no saved-tensor bookkeeping, and ``self``'s own buffer and dtype."""
    if params and params != (1,):
        return False
    st = STATE
    if st.grad and (self._rg or self._base is not None and self._base._rg or isinstance(
            other, Tensor) and (other._rg or other._base is not None and other._base._rg)):
        return False   # (a view made under no_grad requires grad through its base)
    if st.fw_level >= 0:
        return False
    d = self._data
    return (da is d and rt == d.dtype and type(d) is np.ndarray and d.flags.writeable
            and st.mutation_ctx is None and not (self._x is not None and self._x.inference
                                                  and not st.inference))


def commit(op: Op, self: Tensor, inputs, params, out, record: bool, write: bool = True) -> Tensor:
    """Write ``out`` into ``self`` and rebase its history onto ``op``'s node when recording
    (``write=False``: the kernel writes nothing, as ``x.copy_(x)``, but autograd still records)."""
    node = None
    if record:
        if self._base is not None:
            _refresh_view(self)   # the op's input is the view's current history
        # saved inputs keep their pre-write versions; a saved output records the post-write
        # one; a formula needing self's old value gets a copy of it (PyTorch's original_self)
        res = _make(raw_data(self), self._vc, False, None)
        if isinstance(self, _Lazy):
            res.__class__ = type(self)   # the saved result reads the memory as self does
        to_save = inputs
        if 0 in op.saves:
            orig = _make(self._data.copy(), Version(), self._rg, self._fn, self._onr)
            to_save = (orig,) + tuple(inputs[1:])
        node = make_node(op, to_save, params, (res,))
    fw = None
    if STATE.fw_level >= 0 and any(isinstance(t, Tensor) and fw_of(t) is not None
                                   for t in inputs):
        from ..autograd.forward_ad import apply_jvp
        tmp = _make(out, Version(), False, None)
        apply_jvp(op, inputs, params, [tmp])
        fw = tmp._fw
    if STATE.mutation_ctx is not None:
        STATE.mutation_ctx.before_write(self)
    if write and not self.is_meta:
        d = raw_data(self)
        if isinstance(self, _Lazy):   # a conj (neg) view stores the inverse transform
            out = type(self)._fn_np(np.asarray(out))
        try:
            np.copyto(d, out, casting="unsafe")
        except ValueError:  # a read-only broadcast (expanded) array
            _write_expanded(op, d, out)
    x = self._x
    if x is None or not x.inference or not STATE.inference:   # (inference mode: PyTorch does
        self._vc.v += 1                                      # not count an inference tensor's)
    if node is not None:
        if op.save_out:
            s = list(node._saved)
            data, vc, _, k = s[-1]
            if isinstance(self, _Lazy):   # saved as read before the write: read it again
                data = self._data
            s[-1] = (data, vc, vc.v, k)
            node._saved = s
        if self._base is not None:
            from .views import rebase_view
            rebase_view(self, node)
        else:
            set_history(self, node, 0)
    if fw is not None:
        write_tangent(self, fw)
    return self


# ops PyTorch lets write into a tensor whose elements share memory (an expanded one): fill_ and
# zero_ silently, the index and mask fills with a deprecation warning (name, example, source line)
_EXPANDED_OK = {"fill_": None, "zero_": None,
                "masked_fill": ("masked_fill_", "mask] = scalar", 2450),
                "masked_fill_tensor": ("masked_fill_", "mask] = scalar", 2450),
                "index_fill": ("index_fill_", "mask] = scalar", 1913),
                "index_fill_tensor": ("index_fill_", "mask] = scalar", 1913),
                "index_put": ("index_put_", "indices] = tensor", 976)}
SELF_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.")


class _Writable:
    """An array interface over ``a``'s memory that is not read-only."""

    def __init__(self, a: np.ndarray):
        i = dict(a.__array_interface__)
        i["data"] = (i["data"][0], False)
        self.__array_interface__ = i
        self.base = a


def _write_expanded(op: Op, d: np.ndarray, out) -> None:
    """Write ``out`` into read-only view ``d`` of a writable buffer (an expand, or a view of
    one), as PyTorch does: refused when elements share memory unless ``op`` allows it (then
    only the elements that change are written, so a fill at one position reaches its aliases);
    a view without internal overlap (one element of an expand) is written plainly."""
    if not d.size:   # nothing is written to an empty one: no overlap
        return
    root = _root(d)   # through as_strided's wrappers (an expand's view) too
    if not root.flags.writeable:
        raise RuntimeError(SELF_OVERLAP)
    if any(st == 0 and n > 1 for st, n in zip(d.strides, d.shape)):
        if op.name not in _EXPANDED_OK:
            raise RuntimeError(SELF_OVERLAP)
        how = _EXPANDED_OK[op.name]
        if how is not None:
            import warnings
            warnings.warn(
                f"Use of {how[0]} on expanded tensors is deprecated. Please clone() the tensor "
                f"before performing this operation. This also applies to advanced indexing e.g. "
                f"tensor[{how[1]} (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
                f"native/TensorAdvancedIndexing.cpp:{how[2]}.)", UserWarning, stacklevel=4)
    write_changed(d, out)


def write_changed(d: np.ndarray, out) -> None:
    """Write only the elements of ``out`` that differ from read-only view ``d``'s (of a
    writable buffer), so that a write at one position of an expand reaches its aliases."""
    out = np.asarray(out).astype(d.dtype, copy=False)
    changed = out != d
    if d.dtype.kind == "f":   # -0.0 over 0.0 is a change too
        changed |= np.signbit(out) != np.signbit(d)
    np.copyto(np.asarray(_Writable(d)), out, where=changed)


def _write_base_tangent(base: Tensor, view: Tensor, fw: Tensor) -> None:
    """An in-place op on a view changes its base's tangent too: write the view's new tangent
    into the base's (zeros if it had none)."""
    from ..autograd.forward_ad import _remember
    from .views import _put_flat_np, view_index
    if not (base.is_floating_point() or base.is_complex()):
        return
    bt = base._fw
    bd = np.zeros(base._data.shape, base._data.dtype) if bt is None else bt._data
    idx = view_index(raw_data(base), raw_data(view))
    v = np.broadcast_to(fw._data, view._data.shape).astype(bd.dtype)
    bits = lazy_bits(view) ^ lazy_bits(base)
    if bits:   # the base's tangent region is the view's through the view's bits
        v = np.conj(v) if bits & CONJ_BIT else -v
    if type(v) is not np.ndarray:   # a batched tangent (vectorized forward-mode jacobian)
        from .._batched import NPB
        _put_flat_np = NPB.put_flat
    base._fw = _make(_put_flat_np(bd, idx, v), Version(), False, None)
    if bt is None:
        _remember(base)


__all__ = [
    "apply",
    "binary",
    "check_inplace",
    "check_overlap",
    "commit",
    "inplace",
    "promoted",
    "records",
    "to_operand",
    "unary",
]
