"""``out=`` arguments, handled once for every op as PyTorch's out= variants behave.

An op taking ``out`` starts with ``if out is not None: return with_out(op, out, args, kw)``:
the op runs out of place (with ``out=None``) and ``write`` puts the result into ``out``:

* autograd: in grad mode, an input or ``out`` that requires grad is refused with PyTorch's
  "functions with out=... arguments don't support automatic differentiation" error;
* dtype: the result is cast to ``out``'s dtype when ``can_cast`` allows it (TensorIterator ops),
  or must match exactly (``dtype="exact"`` and op-specific messages), or is computed in
  ``out``'s dtype (``dtype="as_out"``: sum, cumsum, creation functions, ..., where a ``dtype``
  argument must be ``out``'s);
* shape: a wrongly shaped ``out`` is resized (with PyTorch's deprecation warning when it had
  elements) in place over its own memory when that is large enough, as ``resize_`` does;
* ``out`` keeps its identity, is returned, and its version counter is bumped once; a view
  ``out`` writes through to its base; an ``out`` that is also an input works like an in-place
  op (elementwise ops refuse partial overlap and an ``out`` whose elements share memory);
  index, selection and joining ops (``overlap="full"``) refuse any overlap with their inputs
  (structured kernels, ``resized=True``, check ``out`` as resized).

Multi-output ops take a tuple ``out=(values, indices)`` and return PyTorch's
``return_types.<name>_out`` named tuple of the given tensors.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _Lazy, _root, raw_data
from ..autograd.grad_mode import STATE

__all__ = ["EXACT", "FOUND", "check_factory_out", "check_out_grad", "with_out", "write"]

# the C++ type names PyTorch's "Expected out tensor to have dtype ..." message prints
_CPP = {"float32": "float", "float64": "double", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
        "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
        "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}

SELF_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.")


def _requires_grad(x) -> bool:
    if isinstance(x, Tensor):
        return x.requires_grad
    if isinstance(x, (list, tuple)):
        return any(_requires_grad(e) for e in x)
    return False


def check_out_grad(name: str, out, args) -> None:
    """PyTorch's refusal of out= when autograd would have to record (grad mode on and an
    argument, ``out`` included, requires grad)."""
    if STATE.grad and (_requires_grad(args) or _requires_grad(out)):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad.")


def with_out(fn, out, args: tuple, kwargs: dict | None = None, *, name: str | None = None,
             dtype="cast", overlap: bool = False, differentiable: bool = True,
             inputs: tuple | None = None, reduced_dim: int | None = None, warn=True,
             below_autograd: bool = False, resized: bool = False):
    """Run ``fn(*args, **kwargs)`` (without ``out``) and write its result into ``out``.

    ``dtype``: "cast" (TensorIterator's can_cast rule), "exact" (the dtypes must match),
    another message (a format string, see ``FOUND``) for ops that require the result's dtype
    with their own words, "as_out" (the op computes in ``out``'s dtype: ``dtype=out.dtype``
    is passed to ``fn`` unless the caller gave one) or a callable ``check(result_dtype,
    out_dtype)`` raising the op's own error; for tuple outs, a tuple (or a dict {index: rule},
    checked in its order) of those. ``overlap``: elementwise ops refuse an ``out`` that
    partly overlaps an input (``inputs``, default ``args``) or whose elements share memory;
    "full" (PyTorch's ``assert_no_overlap``: take, index_select, cat, ...) refuses any overlap
    with ``inputs``, and a tuple of "full" / "partial" gives the rule of each of ``inputs``
    (gather's index may be ``out`` itself); ``resized``: these checks see ``out`` after it
    was resized (structured kernels check in their meta function, after ``set_output``).
    ``differentiable``: False for ops autograd does not see (comparisons, index results),
    which skip the autograd refusal. ``reduced_dim``: the dim a (values, indices) reduction
    without keepdim removed; PyTorch resizes its outs with that dim kept (the warning shows
    it). ``warn``: False for the creation functions, which resize silently, or the op's own
    warning (a format string of ``have``, ``n`` and ``want``). ``below_autograd``: a call
    another out= kernel makes below the autograd layer (mean.out's sum_out): no forward-AD
    refusal after it."""
    kwargs = kwargs or {}
    name = name or fn.__name__
    if differentiable:
        check_out_grad(name, out, (args, tuple(kwargs.values())))
    _check_out_type(name, out)
    if dtype == "as_out":
        o = out[0] if isinstance(out, (tuple, list)) else out
        given = kwargs.get("dtype")
        if given is None:
            kwargs = dict(kwargs, dtype=o.dtype)
        elif given is not o.dtype:   # (sum, prod, cumsum...: a given dtype must be out's)
            raise RuntimeError(EXACT.format(rc=_CPP.get(given.name, given.name),
                                            oc=_CPP.get(o.dtype.name, o.dtype.name)))
        dtype = "cast"
    try:
        res = fn(*args, **kwargs)
    except NotImplementedError:
        if overlap and dtype == "cast" and isinstance(out, Tensor):
            # TensorIterator refuses an out its operands' common dtype cannot be cast to
            # before the kernel's dtype dispatch fails (atan2 of complex into a double)
            _check_dtype_rule(D.result_type_of(args), out.dtype, "cast")
        raise
    r = write(name, res, out, dtype=dtype,
              inputs=(args if inputs is None else inputs) if overlap else None,
              reduced_dim=reduced_dim, warn=warn, overlap=(overlap, resized))
    if STATE.fw_level >= 0 and not below_autograd and (
            _has_tangent((args, tuple(kwargs.values()))) or _has_tangent(out)):
        # as PyTorch's autograd kernel: the out= op has run (out is written), then refuses
        if name.startswith("aten::"):   # factory functions: no out= variant in autograd
            raise NotImplementedError(
                f"Trying to use forward AD with {name} that does not support it.")
        raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not "
                                  "support it because it is an out= function")
    return r


def check_factory_out(out, dtype=None, device=None) -> None:
    """PyTorch's argument-parser check for a factory function given ``out=``: an explicit
    ``dtype`` / ``device`` must be ``out``'s (before any other check of the call)."""
    if not isinstance(out, Tensor):
        return   # (with_out's TypeError)
    if dtype is not None and dtype is not out.dtype:
        from ._dispatch import _type_name
        raise RuntimeError(f"dtype {_type_name(dtype)} does not match dtype of out parameter "
                           f"({_type_name(out.dtype)})")
    if device is not None:
        from .._device import as_device
        dt = as_device(device).type
        if dt != out.device.type:
            raise RuntimeError(f"device type {dt} does not match device type of out parameter "
                               f"({out.device.type})")


def _has_tangent(x) -> bool:
    if isinstance(x, Tensor):
        from ..autograd.forward_ad import fw_of
        return fw_of(x) is not None
    if isinstance(x, (list, tuple)):
        return any(_has_tangent(e) for e in x)
    return False


def _check_out_type(name: str, out) -> None:
    if isinstance(out, (tuple, list)):
        for o in out:
            _check_out_type(name, o)
    elif not isinstance(out, Tensor):
        t = type(out)
        tn = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {tn}")


def write(name: str, res, out, *, dtype="cast", inputs=None, reduced_dim=None, warn=True,
          overlap=(True, False)):
    """Write result ``res`` (a tensor or a tuple of them) into ``out`` with PyTorch's rules
    (see the module docstring); returns ``out`` (a named tuple of the outs for tuples)."""
    if isinstance(out, (tuple, list)):
        res_t = tuple(res)
        if len(out) != len(res_t):
            raise TypeError(f"{name}(): argument 'out' must be tuple of {len(res_t)} Tensors")
        # per-output rules: a dict {output index: rule} is checked in its own order
        checks = dtype if isinstance(dtype, dict) else dict(enumerate(
            dtype if isinstance(dtype, (tuple, list)) else (dtype,) * len(res_t)))
        for i, c in checks.items():
            _check_dtype(res_t[i], out[i], c)
        for r, o in zip(res_t, out):   # (every out checked before any is written)
            _check_one(r, o, inputs, reduced_dim, warn, overlap)
        for r, o in zip(res_t, out):
            _store(r, o)
        return _named(res, tuple(out))
    _check_dtype(res, out, dtype)
    _check_one(res, out, inputs, warn=warn, overlap=overlap)
    _store(res, out)
    return out


def _named(res, outs: tuple):
    """PyTorch returns ``return_types.<name>_out`` for a tuple out."""
    fields = getattr(type(res), "_fields", None)
    if fields is None:
        return outs
    from .reduction import _structseq, return_types
    nm = type(res).__name__ + "_out"
    cls = getattr(return_types, nm, None)
    if cls is None:
        cls = _structseq(nm, fields)
        setattr(return_types, nm, cls)
    return cls(*outs)


# PyTorch's messages for an ``out`` of another dtype than the result's, where the op does not
# cast: {r}/{o} are the result's / out's scalar type names (Float), {rc}/{oc} their C++ names,
# {rl}/{ol} their legacy tensor type names (FloatTensor)
EXACT = "Expected out tensor to have dtype {rc}, but got {oc} instead"
FOUND = "Found dtype {o} but expected {r}"


def _check_dtype(res: Tensor, out: Tensor, rule) -> None:
    if res.dtype is not out.dtype:
        _check_dtype_rule(res.dtype, out.dtype, rule)


def _check_dtype_rule(rd, od, rule) -> None:
    from ._dispatch import _type_name
    if rule == "cast":
        if not D.can_cast(rd, od):
            raise RuntimeError(f"result type {_type_name(rd)} can't be cast to the desired "
                               f"output type {_type_name(od)}")
    elif rule == "exact":
        raise RuntimeError(EXACT.format(rc=_CPP[rd.name], oc=_CPP[od.name]))
    elif isinstance(rule, str):
        raise RuntimeError(rule.format(r=_type_name(rd), o=_type_name(od), rc=_CPP[rd.name],
                                       oc=_CPP[od.name], rl=rd._legacy, ol=od._legacy))
    elif callable(rule):
        rule(rd, od)


def _check_one(res: Tensor, out: Tensor, inputs, reduced_dim=None, warn=True,
               overlap=(True, False)) -> None:
    """Everything that may refuse ``out`` (resizing it, as PyTorch does before its checks)."""
    r = res._data
    x = out._x
    if x is not None and x.inference and not STATE.inference and not x.counted:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            "make a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details.")
    rule, resized = overlap   # (with_out's overlap and resized)
    elementwise = inputs is not None and rule is True
    if inputs is not None:
        # (before a resize also for structured kernels: PyTorch grows a storage in place, so
        # an overlap before the resize is one after it)
        _check_no_overlap(out, inputs, "partial" if elementwise else rule, internal=not resized)
    if out._data.shape != r.shape:
        _resize(out, r, reduced_dim, warn, restride=elementwise)
    if inputs is not None and resized:
        _check_no_overlap(out, inputs, rule)


def _store(res: Tensor, out: Tensor) -> None:
    r = res._data
    if STATE.mutation_ctx is not None:
        STATE.mutation_ctx.before_write(out)
    d = raw_data(out)
    if isinstance(out, _Lazy):   # a conj (neg) view stores the inverse transform
        r = type(out)._fn_np(np.asarray(r))
    if r.dtype != d.dtype and (r.dtype.names is not None or d.dtype.names is not None):
        from .._chalf import cast  # complex32 pairs, which NumPy cannot cast
        r = cast(np.asarray(r), d.dtype)
    try:
        np.copyto(d, r, casting="unsafe")
    except ValueError:   # a read-only (expanded) out: PyTorch writes it all the same
        from ._dispatch import write_changed
        write_changed(d, r)
    out._vc.v += 1


def _check_no_overlap(out: Tensor, inputs, rule, internal: bool = True) -> None:
    """PyTorch's ``assert_no_internal_overlap(out)``, then ``assert_no_partial_overlap`` /
    ``assert_no_overlap`` (``rule`` "partial" / "full", or one per input) with the inputs."""
    d = raw_data(out)
    if internal and d.size > 1 and any(st == 0 and n > 1 for st, n in zip(d.strides, d.shape)):
        raise RuntimeError(SELF_OVERLAP)
    from ._dispatch import check_overlap
    rules = (rule,) * len(inputs) if isinstance(rule, str) else rule
    for x, r in zip(inputs, rules):
        check_overlap(out, [t for t in _flat((x,)) if isinstance(t, Tensor)], full=r == "full")


def _flat(xs):
    for x in xs:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _resize(out: Tensor, r: np.ndarray, reduced_dim=None, warn=True, restride=False) -> None:
    """``out.resize_(r.shape)`` as PyTorch's ``resize_output``: a deprecation warning when
    ``out`` had elements; the new shape is laid out contiguously from ``out``'s first element
    over its own buffer when that holds enough elements (a view keeps writing into its base),
    else over new memory laid out as the result."""
    d = out._data
    if d.size and isinstance(warn, str):
        warnings.warn(warn.format(have=list(d.shape), n=d.size, want=r.shape), UserWarning,
                      stacklevel=6)
    elif d.size and warn:
        have, want = list(d.shape), list(r.shape)
        if reduced_dim is not None:
            k = reduced_dim % (r.ndim + 1)
            have.insert(min(k, len(have)), 1)
            want.insert(k, 1)
        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{have}, which does not match the required output shape {want}. "
            "This behavior is deprecated, and in a future PyTorch release outputs will not be "
            "resized unless they have zero elements. You can explicitly reuse an out tensor t by "
            "resizing it, inplace, to zero elements with t.resize_(0). (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)", UserWarning,
            stacklevel=6)
    resize_data(out, r.shape, like=r, restride=restride)


def resize_data(out: Tensor, shape, like=None, restride: bool = False) -> None:
    """Give ``out`` the new ``shape`` as ``resize_`` does: contiguous from its first element over
    its own buffer when that holds enough elements, else over new memory (laid out as ``like``
    when given). ``restride``: then laid out as ``like`` over its own buffer too, as
    TensorIterator restrides an output it resized to the layout it computed."""
    d = out._data
    n = int(np.prod(shape, dtype=np.int64))
    new = None
    root = _root(d) if type(d) is np.ndarray else None
    if root is not None and root.flags.c_contiguous and root.flags.writeable and root.size:
        if root.dtype == d.dtype:
            flat = root.reshape(-1)
            off = (d.__array_interface__["data"][0] - flat.__array_interface__["data"][0])
            off //= d.itemsize
            if 0 <= off and off + n <= flat.size:
                new = flat[off:off + n].reshape(shape)
                from ._dispatch import _dense
                if restride and like.strides != new.strides and _dense(like):
                    new = np.lib.stride_tricks.as_strided(
                        flat[off:off + n], shape,
                        tuple(st // like.itemsize * d.itemsize for st in like.strides))
    if new is None:
        if like is not None and not like.size and type(like) is np.ndarray:
            # (np.empty_like would give NumPy's zero strides: the result's PyTorch strides)
            from .._layout import empty_np, torch_strides
            new = empty_np(shape, torch_strides(like), d.dtype)
        else:
            new = (np.empty_like(like, dtype=d.dtype) if like is not None
                   else np.zeros(shape, d.dtype))
    out._data = new
