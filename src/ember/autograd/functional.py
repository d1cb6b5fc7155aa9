"""``ember.autograd.functional``: vjp, jvp, jacobian, hessian, vhp and hvp of whole functions.

Mirrors ``torch.autograd.functional``: the same argument checks, error messages, strict-mode
errors and output structures (a Tensor, a tuple, or a tuple of tuples depending on whether the
inputs and the outputs of the user function were given as tuples).

``jacobian(vectorize=True)`` (reverse mode) is PyTorch's vectorized path: ONE backward pass over
the stacked standard basis of the outputs, ``autograd.grad(is_grads_batched=True)``, which runs
every VJP once on the whole batch of cotangents (``ember._batched``); ``hessian(vectorize=True)``
is that over the gradient's graph. With ``create_graph=True`` the batched grad falls back to one
backward per basis vector (the Tensor path has no batched form), stacked differentiably.
``jacobian(strategy="forward-mode", vectorize=True)`` is ONE forward pass of the function whose
dual inputs carry the stacked standard basis of all the inputs as a batched tangent (a Tensor over
a ``BatchedArray``), so every JVP formula runs once on the whole batch. It falls back to one JVP
per basis vector (the ``vectorize=False`` path, which PyTorch does not have) when some formula
cannot run on batched tangents, and when the tangents must carry a graph (inputs that require
grad; ``hessian(outer_jacobian_strategy="forward-mode")``, forward-over-reverse), since a graph
over batched tangents cannot be differentiated.
"""
from __future__ import annotations

from .._tensor import Tensor
from . import forward_ad as fwAD
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

# ---------------------------------------------------------------------------------------------
# helpers: tuple handling, input preparation, strict-mode checks


def _as_tuple(inp, arg_name: str, fn_name: str):
    """``(was_a_tuple, tuple_of_tensors)``; a TypeError for anything but Tensors."""
    was_tuple = isinstance(inp, tuple)
    items = inp if was_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = (f"the value at index {i} has type {type(el)}." if was_tuple
                     else f"the given {arg_name} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where}")
    return was_tuple, items


def _unpack(res, in_tuple: bool, out_tuple: bool | None = None):
    """Undo the tupling: drop the levels for arguments the user did not give as tuples."""
    if out_tuple is None:
        return res if in_tuple else res[0]
    if not in_tuple:
        res = tuple(r[0] for r in res)
    return res if out_tuple else res[0]


def _prepare(inputs, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh differentiable handles on the inputs; linked to the user's graph only when
    ``create_graph`` (so that the results can be differentiated further)."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(values, create_graph: bool):
    """Detach the results unless ``create_graph``; works on nested tuples."""
    if create_graph:
        return values
    return tuple(v.detach() if isinstance(v, Tensor) else _finish(v, create_graph)
                 for v in values)


def _validate_v(v, other, other_is_tuple: bool) -> None:
    if len(other) != len(v):
        if other_is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (a, b) in enumerate(zip(v, other)):
        if a.size() != b.size():
            prefix = f"Entry {idx} in " if other_is_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {b.size()} but got {a.size()}.")


def _check_requires_grad(tensors, kind: str, strict: bool) -> None:
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode.")
        if t.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs.")
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
        if kind == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in strict "
            "mode.")


def _grad(outputs: tuple, inputs: tuple, grad_outputs=None, create_graph: bool = False,
          retain_graph: bool | None = None, is_grads_batched: bool = False) -> tuple:
    """``autograd.grad`` over the outputs that require grad; None for unreachable inputs."""
    from . import grad
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad(tuple(p[0] for p in pairs), inputs, tuple(p[1] for p in pairs),
                allow_unused=True, create_graph=create_graph, retain_graph=retain_graph,
                is_grads_batched=is_grads_batched)


_STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    from .._ops.creation import zeros_like
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


# ---------------------------------------------------------------------------------------------
# vjp / jvp


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), v^T J)``: the vector-Jacobian product (``torch.autograd.functional.vjp``).
    """
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                       "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _prepare(v, create_graph, False)
            _validate_v(v, outputs, out_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    return _pulled_back(outputs, out_tuple, outputs, inputs, in_tuple, v, create_graph, strict,
                        "back")


def _pulled_back(outputs, out_tuple, roots, inputs, in_tuple, v, create_graph, strict, stage):
    """``(outputs, v^T d(roots)/d(inputs))`` shaped as the functional API returns them: the
    common end of vjp and vhp."""
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _grad(roots, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, stage)
    return (_unpack(_finish(outputs, create_graph), out_tuple),
            _unpack(_finish(res, create_graph), in_tuple))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), J v)``: the Jacobian-vector product, by the double-backward trick
    (``torch.autograd.functional.jvp``)."""
    from .._ops.creation import zeros_like
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _prepare(v, create_graph, False)
            _validate_v(v, inputs, in_tuple)
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                       "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        grad_outputs = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(res, outputs, strict, create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), out_tuple),
            _unpack(_finish(res, create_graph), out_tuple))


# ---------------------------------------------------------------------------------------------
# jacobian / hessian


def _jacfwd(func, inputs, strict: bool, vectorize: bool):
    """The Jacobian by forward-mode AD, one standard basis vector per input element."""
    from .._ops.creation import zeros, zeros_like
    from .._ops.joining import stack
    if strict:
        raise RuntimeError(
            "ember.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` "
            "are not supported together (yet). Please either set `strict=False` or "
            "`strategy=\"reverse-mode\"`.")
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if vectorize and sum(inp.nelement() for inp in inputs) and not any(
            inp.requires_grad for inp in inputs):
        try:
            return _jacfwd_batched(func, inputs, in_tuple)
        except _Unbatchable:
            pass    # some JVP formula could not run on batched tangents: one JVP per vector
    out_tuple = None
    primals = None
    columns = [[] for _ in inputs]      # columns[j][k] = tuple of output tangents
    for j, inp in enumerate(inputs):
        flat = zeros(inp.nelement(), dtype=inp.dtype)
        for k in range(inp.nelement()):
            basis = flat.clone()
            basis[k] = 1
            with fwAD.dual_level():
                args = tuple(fwAD.make_dual(x, basis.view_as(x) if i == j else zeros_like(x))
                             for i, x in enumerate(inputs))
                out_tuple, outs = _as_tuple(func(*args), "outputs", "jacobian")
                tangents = []
                plain = []
                for o in outs:
                    p, tg = fwAD.unpack_dual(o)
                    plain.append(p)
                    tangents.append(zeros_like(p) if tg is None else tg)
                primals = plain
                columns[j].append(tuple(tangents))
    if primals is None:                 # every input is empty: run func once for the shapes
        out_tuple, primals = _as_tuple(func(*inputs), "outputs", "jacobian")
    jac = []
    for i, out in enumerate(primals):
        row = []
        for j, inp in enumerate(inputs):
            shape = out.size() + inp.size()
            if columns[j]:
                col = stack([c[i].reshape(-1) for c in columns[j]], dim=-1)
                row.append(col.reshape(shape))
            else:
                row.append(zeros(shape, dtype=out.dtype))
        jac.append(row)
    # lists, not tuples: what torch's (vectorized) forward-mode path returns
    return _unpack(jac, in_tuple, out_tuple)


class _Unbatchable(Exception):
    """A JVP formula failed on batched tangents (the per-basis-vector loop takes over)."""


def _jacfwd_batched(func, inputs, in_tuple: bool):
    """The Jacobian by ONE forward pass of ``func``: each input's tangent is a Tensor over a
    :class:`~ember._batched.BatchedArray` holding its block of the stacked standard basis of all
    the (flattened) inputs, so every JVP formula runs once over the whole batch."""
    import numpy as np

    from .._batched import BatchedArray
    from .._tensor import Version, _make
    numels = [inp.nelement() for inp in inputs]
    total = sum(numels)
    tangents, off = [], 0
    for inp, n in zip(inputs, numels):
        dt = inp._data.dtype
        b = np.zeros((total, n), dt)
        b[off:off + n] = np.eye(n, dtype=dt)
        off += n
        tangents.append(_make(BatchedArray(b.reshape((total,) + inp._data.shape)), Version(),
                              False, None))
    try:
        with fwAD.dual_level():
            args = tuple(fwAD.make_dual(x, t) for x, t in zip(inputs, tangents))
            out_tuple, outs = _as_tuple(func(*args), "outputs", "jacobian")
            res = [fwAD.unpack_dual(o) for o in outs]
    except Exception as e:  # noqa: BLE001 - retried with the loop, which raises user errors
        raise _Unbatchable from e
    if any(tg is not None and tg.requires_grad for _, tg in res):
        # the tangents are part of a graph (forward-over-reverse: hessian's outer jacobian):
        # torch's result is differentiable, and a graph over batched tangents cannot be
        # differentiated, so the loop builds it (its stacked tangents keep their history)
        raise _Unbatchable
    jac = []
    for p, tg in res:
        shape = p._data.shape
        m = p._data.size
        if tg is None:
            d = np.zeros((total, m), p._data.dtype)
        elif type(tg._data) is BatchedArray:
            d = tg._data.data.reshape(total, m)
        else:   # a tangent that does not depend on the basis vector (a constant)
            d = np.broadcast_to(np.asarray(tg._data).reshape(1, m), (total, m))
        row, off = [], 0
        for inp, n in zip(inputs, numels):
            blk = d[off:off + n].T.reshape(shape + inp._data.shape)
            row.append(_make(np.array(blk, dtype=p._data.dtype, order="C"), Version(), False,
                             None))
            off += n
        jac.append(row)
    # lists, not tuples: what torch's vectorized forward-mode path returns
    return _unpack(jac, in_tuple, out_tuple)


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs`` (``torch.autograd.functional.jacobian``).

    Output ``i`` with respect to input ``j`` has shape ``out_i.shape + in_j.shape``; the
    nesting follows whether inputs/outputs were tuples.
    """
    from .._ops.creation import zeros_like
    from .._ops.joining import stack
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "ember.autograd.functional.jacobian: `create_graph=True` and "
                "`strategy=\"forward-mode\"` are not supported together (yet). Please either "
                "set `create_graph=False` or `strategy=\"reverse-mode\"`.")
        return _jacfwd(func, inputs, strict, vectorize)

    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                       "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "ember.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                    "are not supported together. Please either set `strict=False` or "
                    "`vectorize=False`.")
            return _jacrev_vectorized(inputs, outputs, in_tuple, out_tuple, create_graph)
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat_out = out.reshape(-1)
            for k in range(out.nelement()):
                vj = _grad((flat_out[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, inp) in enumerate(zip(vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {j}. This is not allowed in strict mode.")
                        g = zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(
                            "The jacobian of the user-provided function is independent of "
                            f"input {i}. This is not allowed in strict mode when "
                            "create_graph=True.")
                    rows[j].append(g)
            jac.append(tuple(
                stack(r, dim=0).view(out.size() + inp.size()) if r else
                inp.new_zeros(out.size() + inp.size())
                for r, inp in zip(rows, inputs)))
        jac = _finish(tuple(jac), create_graph)
        return _unpack(jac, in_tuple, out_tuple)


def _jacrev_vectorized(inputs, outputs, in_tuple, out_tuple, create_graph: bool):
    """PyTorch's vectorized reverse-mode Jacobian: the standard basis of all the (flattened)
    outputs as one batch of ``grad_outputs``, one ``grad(is_grads_batched=True)`` call."""
    import numpy as np

    from .._ops.creation import zeros_like
    from .._tensor import Version, _make
    numels = [o.nelement() for o in outputs]
    total = sum(numels)
    basis, off = [], 0
    for o, n in zip(outputs, numels):
        b = np.zeros((total, n), o._data.dtype)
        b[off:off + n] = np.eye(n, dtype=o._data.dtype)
        off += n
        basis.append(_make(b, Version(), False, None))
    flat = tuple(o.reshape(-1) for o in outputs)
    with enable_grad():
        vj = list(_grad(flat, inputs, tuple(basis), create_graph=create_graph,
                        is_grads_batched=True))
    per_input = []
    for g, inp in zip(vj, inputs):
        row, off = [], 0
        for out, n in zip(outputs, numels):
            shape = out.size() + inp.size()
            if g is None:   # PyTorch: zeros_like(input).expand(...), a stride-0 view
                row.append(zeros_like(inp).expand((n,) + inp.size()).reshape(shape))
            else:
                row.append(g[off:off + n].view(shape))
            off += n
        per_input.append(row)
    jac = _finish(tuple(zip(*per_input)), create_graph)
    return _unpack(jac, in_tuple, out_tuple)


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar function (``torch.autograd.functional.hessian``): the Jacobian of
    its gradient. Entry ``(i, j)`` has shape ``in_i.shape + in_j.shape``."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack(res, in_tuple, in_tuple)


# ---------------------------------------------------------------------------------------------
# vhp / hvp


def _scalar_function_outputs(func, inputs, name: str, strict: bool):
    out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict)
    if out_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {name} should contain a single "
            "element")
    return out_tuple, outputs


def _hessian_v_setup(func, inputs, v, create_graph, strict, name):
    in_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _prepare(inputs, create_graph, True)
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _prepare(v, create_graph, False)
        _validate_v(v, inputs, in_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    out_tuple, outputs = _scalar_function_outputs(func, inputs, name, strict)
    jac = _grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return in_tuple, inputs, v, out_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), v^T H)`` for a scalar function (``torch.autograd.functional.vhp``)."""
    with enable_grad():
        in_tuple, inputs, v, out_tuple, outputs, jac = _hessian_v_setup(
            func, inputs, v, create_graph, strict, "vhp")
    return _pulled_back(outputs, out_tuple, jac, inputs, in_tuple, v, create_graph, strict,
                        "double_back")


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), H v)`` for a scalar function, by the double-backward trick
    (``torch.autograd.functional.hvp``)."""
    from .._ops.creation import zeros_like
    with enable_grad():
        in_tuple, inputs, v, out_tuple, outputs, jac = _hessian_v_setup(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(zeros_like(t, requires_grad=True) for t in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "double_back_trick")
    return (_unpack(_finish(outputs, create_graph), out_tuple),
            _unpack(_finish(res, create_graph), in_tuple))
