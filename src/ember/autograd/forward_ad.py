"""Forward-mode AD: dual levels, dual tensors, and the JVP step every op runs on them.

A tensor's tangent lives in its ``_fw`` slot. Ops compute the output tangent from their JVP when
an input carries one; primals are used without their tangents inside the JVP, so nothing nests.
"""
from __future__ import annotations

import weakref
from collections import namedtuple

from .grad_mode import STATE

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])


def enter_dual_level() -> int:
    """Open a new dual level (only one at a time, as in PyTorch) and return its number."""
    if STATE.fw_level >= 0:
        raise RuntimeError(
            "Nested forward mode AD is not supported at the moment")
    STATE.fw_level = 0
    STATE.fw_tensors = []
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level: every tangent made inside it is dropped."""
    if level is None:
        level = STATE.fw_level
    if level != STATE.fw_level or level < 0:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This "
            "is not supported.")
    for r in getattr(STATE, "fw_tensors", ()):
        t = r()
        if t is not None:
            t._fw = None
    STATE.fw_tensors = []
    STATE.fw_level = -1


class dual_level:
    """Context manager for one forward-AD level (``torch.autograd.forward_ad.dual_level``)."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def _remember(t) -> None:
    STATE.fw_tensors.append(weakref.ref(t))


# A view's tangent is a view of its owner's tangent, as in PyTorch: the owner is the view's base,
# or the dual tensor it was taken from (``make_dual``'s result owns its tangent). Owners keep
# tangents laid out like their data, so a view's tangent sits at the view's offset and strides,
# and an in-place op writes its tangent into that memory: base, views and siblings stay in step.

def fw_of(t):
    """``t``'s tangent (None without one); a view's is derived from its owner's on first use.
    Inference mode hides every tangent, as in PyTorch (its forward-AD kernels do not run there):
    ops see no tangent, in-place ops leave tangents alone, ``unpack_dual`` gives None."""
    fw = t._fw
    if fw is not None or t._base is None:
        return None if fw is not None and STATE.inference else fw
    o = t._fwb
    if o is None or o._fw is None or STATE.fw_level < 0 or STATE.inference:
        return None
    from .._tensor import Version, _make, lazy_bits, raw_data, set_lazy_bits
    data = _tangent_view(o._fw._data, raw_data(o), raw_data(t))
    if data is None:
        return None
    fw = t._fw = _make(data, Version(), False, None)
    bits = lazy_bits(t) ^ lazy_bits(o)
    if bits:   # a conj (neg) view's tangent is the conj (neg) view of its owner's
        set_lazy_bits(fw, bits)
    _remember(t)
    return fw


def owner(t):
    """The tensor that holds the tangent memory ``t``'s tangent lives in."""
    return t if t._base is None or t._fwb is None else t._fwb


def _addr(a) -> int:
    return a.__array_interface__["data"][0]


def _tangent_view(T, D, V):
    """The part of tangent array ``T`` (laid out like data ``D``) where view ``V`` of ``D``
    sits, as an ndarray view; None where no such view exists."""
    import numpy as np
    if type(T) is not np.ndarray or T.shape != D.shape or (T.strides != D.strides and D.size):
        return None   # (empty arrays' strides say nothing of memory: an empty view is found)
    lo, hi = np.lib.array_utils.byte_bounds(D)
    vlo, vhi = np.lib.array_utils.byte_bounds(V)
    if V.size and not lo <= vlo <= vhi <= hi:
        return None   # not a view of D's memory
    h = _Memory()
    h.owner = T   # keeps the tangent's memory alive (its owning array need not be contiguous)
    h.__array_interface__ = {"shape": V.shape, "typestr": V.dtype.str, "version": 3,
                             "strides": V.strides, "data": (_addr(T) + _addr(V) - _addr(D), False)}
    try:
        a = np.asarray(h)
    except (TypeError, ValueError):
        return None
    return a if a.dtype == V.dtype else a.view(V.dtype)


class _Memory:
    """An array interface over part of a tangent's memory."""

    __slots__ = ("owner", "__array_interface__")


def match_layout(g, d):
    """Tangent array ``g`` laid out like data ``d`` (and writable): ``g`` itself when it is."""
    import numpy as np
    if type(g) is not np.ndarray or type(d) is not np.ndarray:
        return g
    if g.shape == d.shape and g.strides == d.strides and g.flags.writeable:
        return g
    return _fresh(g, d)


def _fresh(g, d):
    """A copy of tangent array ``g`` laid out like data ``d``."""
    import numpy as np
    out = zeros_like_layout(d)
    if out is None:
        return np.array(np.broadcast_to(g, d.shape))
    np.copyto(out, g, casting="unsafe")
    return out


def zeros_like_layout(d):
    """Zeros with exactly ``d``'s strides (None for negative strides)."""
    import numpy as np
    if d.flags.c_contiguous or d.flags.f_contiguous:
        z = np.zeros_like(d, order="K")
        if z.strides == d.strides:   # (NumPy normalises the strides of size-1 dims)
            return z
    if any(s < 0 for s in d.strides):
        return None
    extent = sum((n - 1) * s for n, s in zip(d.shape, d.strides)) // d.itemsize + 1 \
        if d.size else 0
    buf = np.zeros(extent, d.dtype)
    return np.lib.stride_tricks.as_strided(buf, d.shape, d.strides)


def write_tangent(t, fw) -> None:
    """An in-place op gave ``t`` the tangent ``fw``: write it into ``t``'s tangent memory (made
    as zeros in its owner first if there was none)."""
    import numpy as np

    from .._tensor import Version, _make, lazy_bits, raw_data, store
    if not (t.is_floating_point() or t.is_complex()):
        return
    tgt = fw_of(t)
    if tgt is None:
        o = owner(t)
        z = zeros_like_layout(raw_data(o)) if type(fw._data) is np.ndarray else None
        if z is not None:
            o._fw = _make(z, Version(), False, None)
            _remember(o)
            tgt = fw_of(t)
    td = None if tgt is None else raw_data(tgt)   # (a conj view's: its memory)
    if tgt is not None and type(fw._data) is np.ndarray and td.size and any(
            st == 0 and n > 1 for st, n in zip(td.strides, td.shape)) \
            and _expanded_write(td, type(tgt)._fn_np(fw._data) if lazy_bits(tgt) else fw._data):
        return
    if tgt is None or type(fw._data) is not np.ndarray or not td.flags.writeable:
        from .._ops._dispatch import _write_base_tangent
        if t._base is not None:
            _write_base_tangent(t._base, t, fw)
        t._fw = fw
        _remember(t)
        return
    store(tgt, fw._data)


def _expanded_write(d, new) -> bool:
    """Write tangent ``new`` into ``d``, a read-only expanded view of a writable buffer, as the
    in-place op wrote the primal (only the elements that change, so a write at one position
    reaches its aliases); False when ``d`` is not such a view."""
    import numpy as np

    from .._ops._dispatch import write_changed
    root = d
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.writeable:
        return False
    write_changed(d, new)
    return True


def make_dual(tensor, tangent, *, level: int | None = None):
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient."""
    if STATE.fw_level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor._data.shape)} while the given forward gradient is of size "
            f"{list(tangent._data.shape)}.".replace("'", ""))
    # a differentiable view (ViewBackward0 when recorded), as in PyTorch
    from .._ops.views import view
    from .._tensor import Version, _make
    out = view(tensor, tensor._data.shape)
    if STATE.inference:
        return out   # PyTorch's make_dual records no tangent in inference mode
    tg = tangent if tangent.dtype is tensor.dtype else tangent.to(tensor.dtype)
    data = match_layout(tg._data, tensor._data)
    out._fw = tg if data is tg._data else _make(data, Version(), False, None)
    out._fwb = None   # the dual owns its tangent
    _remember(out)
    return out


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """The primal (a view without tangent) and the tangent of a dual tensor."""
    fw = fw_of(tensor)
    if fw is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_primal(tensor), fw)


def _primal(t):
    """An alias of ``t`` with the same autograd identity but no tangent."""
    from .._tensor import _make
    if fw_of(t) is None:
        return t
    if t._base is not None:
        from .._tensor import _refresh_view
        _refresh_view(t)
    p = _make(t._data, t._vc, t._rg, t._fn, t._onr)
    if t._base is not None:
        p._base, p._av, p._cm, p._fwb = t._base, t._av, t._cm, None
    if t._rg and t._fn is None:
        from .._ops._registry import acc_node
        p._acc = weakref.ref(acc_node(t))
    return p


def _shares_tangent(o) -> bool:
    """Whether view ``o`` takes its tangent as a view of its owner's tangent memory: not when
    that tangent has autograd history (forward-over-reverse), which a raw view would drop."""
    ow = o._fwb if o._base is not None else None
    if ow is None or ow._fw is None or ow._fw._rg:
        return False
    return fw_of(o) is not None


def apply_jvp(op, inputs, params, outs) -> None:
    """Give each output of ``op`` its tangent, from the op's JVP."""
    import numpy as np

    from .._ops._registry import EM
    from .._tensor import Tensor
    if STATE.fw_level < 0 or STATE.inference:
        return
    if op.is_view and all(_shares_tangent(o) for o in outs):
        return   # each output's tangent is a view of its owner's (see ``fw_of``)
    tangents = [fw_of(t) if isinstance(t, Tensor) else None for t in inputs]
    primals = [_primal(t) if isinstance(t, Tensor) else t for t in inputs]
    plain_outs = list(outs)
    if op.linear:
        from .._ops._registry import apply
        from .._ops.creation import zeros_like
        # a linear op is linear in all its operands jointly: constant operands (tensors
        # without tangent, Python numbers) contribute a zero tangent
        args = tuple(tangents[i] if tangents[i] is not None else
                     (zeros_like(p) if isinstance(p, Tensor) else 0 * p)
                     for i, p in enumerate(primals))
        r = apply(op, args, params)
    elif op.elementwise:
        saved = [primals[i] for i in op.saves]
        if op.save_out:
            saved += [plain_outs[k] for k in op.saved_outs]
        r = None
        for i, tg in enumerate(tangents):
            if tg is None:
                continue
            need = tuple(j == i for j in range(len(inputs)))
            cplx = tg.is_complex()
            g = op.vjp(EM, tg.conj() if cplx else tg, need, *saved, *params)
            g = g[i] if isinstance(g, tuple) else g
            if cplx or g.is_complex():
                g = g.conj()
            r = g if r is None else r + g
    else:
        try:
            r = op.jvp(EM, tangents, primals, plain_outs, *params)
        except NotImplementedError as ex:   # a step without a complex32 kernel in ember
            from .._chalf import jvp_upcast
            r = jvp_upcast(ex, op, tangents, primals, plain_outs, params)
    rs = (r,) if op.n_out == 1 else r
    # an output's tangent gets memory of its own: a JVP may hand back an input's tangent (x + 1)
    # or a view of it, and an in-place op on the output later writes into its tangent
    taken = [t._data for t in tangents if t is not None and type(t._data) is np.ndarray]
    for k in op.diff_out:
        o, tg = outs[k], rs[k]
        if tg is None or not (o.is_floating_point() or o.is_complex()):
            continue
        if tg._data.dtype != o._data.dtype:
            tg = tg.to(o.dtype)
        data = match_layout(tg._data, o._data)
        if type(data) is np.ndarray and not tg._rg:
            if any(np.may_share_memory(data, a) for a in taken):
                data = _fresh(data, o._data)
            taken.append(data)
        if data is not tg._data:
            from .._tensor import Version, _make
            tg = _make(data, Version(), False, None)
        o._fw = tg
        _remember(o)
