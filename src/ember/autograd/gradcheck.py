"""``gradcheck`` and ``gradgradcheck``: compare autograd's derivatives with finite differences.

Mirrors ``torch.autograd.gradcheck``. The numerical Jacobian comes from central differences,
perturbing each input's data in place (``(f(x + eps) - f(x - eps)) / 2 eps`` per element, or
along a random direction in ``fast_mode``); the analytical one from ``autograd.grad`` with one
basis ``grad_output`` per output element (and, with ``check_forward_ad``, forward-mode AD with
one basis tangent per input element). A mismatch raises :class:`GradcheckError`, or returns
False when ``raise_exception=False``.

``check_batched_grad`` compares one ``autograd.grad(is_grads_batched=True)`` call (one batched
backward pass, see ``ember._batched``) with two plain ones, as PyTorch's ``_test_batched_grad``
does with vmap. ``check_batched_forward_grad`` needs batched forward-mode tangents, which ember
does not have yet: it raises ``NotImplementedError``.
"""
from __future__ import annotations

import warnings

import numpy as np

from .._dtype import complex128, float64
from .._tensor import Tensor, Version, _make
from . import forward_ad as fwAD
from .function import Function

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


_NO_VMAP = "needs batched gradients (vmap), which ember does not have yet"

FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()


# ---------------------------------------------------------------------------------------------
# small helpers


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _wrap(arr) -> Tensor:
    return _make(np.asarray(arr), Version(), False, None)


def _is_float_or_complex(t) -> bool:
    return isinstance(t, Tensor) and (t.is_floating_point() or t.is_complex())


def _differentiable_outputs(x) -> tuple:
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _diff_inputs(inputs) -> tuple[list, list]:
    """(indices, tensors) of the inputs that require grad."""
    pairs = [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _allclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    dt = np.result_type(a, b)
    return bool(np.allclose(np.asarray(a, dt), np.asarray(b, dt), rtol=rtol, atol=atol))


def _scalar_str(x) -> str:
    return str(np.asarray(x).item())


def _notallclose_msg(analytical, numerical, output_idx: int, input_idx: int, complex_indices,
                     test_imag: bool = False, is_forward_ad: bool = False) -> str:
    out_is_complex = (not is_forward_ad) and complex_indices and output_idx in complex_indices
    inp_is_complex = is_forward_ad and complex_indices and input_idx in complex_indices
    part = "imaginary" if test_imag else "real"
    element = "inputs" if is_forward_ad else "outputs"
    prefix = (f"While considering the {part} part of complex {element} only, "
              if (out_is_complex or inp_is_complex) else "")
    mode = "computed with forward mode " if is_forward_ad else ""
    return (prefix + f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input "
            f"{input_idx:d},\nnumerical:{numerical}\nanalytical:{analytical}\n")


# ---------------------------------------------------------------------------------------------
# numerical derivatives


def _evaluate(fn, inputs) -> list:
    """Run ``fn`` and copy its outputs: (data, dtype) per tensor output, None otherwise."""
    res = []
    for o in _as_tuple(fn(*inputs)):
        res.append((np.array(o._data, copy=True), o.dtype) if isinstance(o, Tensor) else None)
    return res


def _central_difference(fn, inputs, arr: np.ndarray, where, delta, norm: float, eps: float,
                        idx=None) -> list:
    """``(f(x + delta) - f(x - delta)) / (2 norm)`` for each output, flattened; ``x`` is the part
    ``where`` of the input's data ``arr``, perturbed in place and restored afterwards."""
    orig = np.array(arr[where], copy=True)
    arr[where] = orig - delta
    try:
        outa = _evaluate(fn, inputs)
        arr[where] = orig + delta
        outb = _evaluate(fn, inputs)
    finally:
        arr[where] = orig
    res = []
    for a, b in zip(outa, outb):
        if a is None or b is None:
            res.append(None)
            continue
        on_index = f"on index {idx} " if idx is not None else ""
        if a[0].shape != b[0].shape:
            from .._size import Size
            raise AssertionError(
                "Expected `func` to return outputs with the same shape when inputs are perturbed "
                f"{on_index}by {eps}, but got: shapes {Size(a[0].shape)} and {Size(b[0].shape)}.")
        if a[1] is not b[1]:
            raise AssertionError(
                "Expected `func` to return outputs with the same dtype when inputs are perturbed "
                f"{on_index}by {eps}, but got: dtypes {a[1]} and {b[1]}.")
        res.append(((b[0] - a[0]) / (2 * norm)).reshape(-1))
    return res


def _numerical_jvp(fn, inputs, inp: Tensor, where, delta, eps: float, norm: float,
                   is_forward_ad: bool, idx=None) -> list:
    """The directional derivatives of every output along ``delta`` (for a complex input, the
    derivatives along the real and the imaginary directions combined as ``dx + 1j * dy``)."""
    arr = inp._data
    if inp.is_complex():
        dr, di = delta if isinstance(delta, tuple) else (delta, delta)
        ds_dx = _central_difference(fn, inputs, arr, where, dr, norm, eps, idx)
        ds_dy = _central_difference(fn, inputs, arr, where, di * 1j, norm, eps, idx)
        return [None if x is None else x + y * 1j for x, y in zip(ds_dx, ds_dy)]
    res = _central_difference(fn, inputs, arr, where, delta, norm, eps, idx)
    if not is_forward_ad:
        for r in res:
            if r is not None and np.iscomplexobj(r):
                raise AssertionError("Expected ds_dx to be real-valued, not complex.")
    return res


def _numerical_jacobian(fn, inputs, func_out, eps: float, is_forward_ad: bool) -> list:
    """Per input requiring grad, per entry of ``func_out``: the ``(in_numel, out_numel)``
    Jacobian by central differences (None for outputs that are not float/complex tensors)."""
    func_out = _as_tuple(func_out)
    if not is_forward_ad and any(isinstance(o, Tensor) and o.is_complex() for o in func_out):
        raise ValueError("Expected output to be non-complex. get_numerical_jacobian no longer "
                         "supports functions that return complex outputs.")
    jacobians = []
    for _, inp in zip(*_diff_inputs(inputs)):
        jac = []
        for o in func_out:
            if _is_float_or_complex(o):
                dt = inp._data.dtype if inp.is_complex() else o._data.dtype
                jac.append(np.zeros((inp._data.size, o._data.size), dt))
            else:
                jac.append(None)
        for k, idx in enumerate(np.ndindex(*inp._data.shape)):
            cols = _numerical_jvp(fn, inputs, inp, idx, eps, eps, eps, is_forward_ad, idx)
            for j, c in zip(jac, cols):
                if j is not None and c is not None:
                    j[k] = c
        jacobians.append(jac)
    return jacobians


def _check_no_differentiable_outputs(fn, inputs, func_out, eps: float, is_forward_ad: bool):
    for per_input in _numerical_jacobian(fn, inputs, func_out, eps, is_forward_ad):
        for jac in per_input:
            if jac is not None and np.count_nonzero(jac) > 0:
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


# ---------------------------------------------------------------------------------------------
# analytical derivatives


def _vjps(output: Tensor, diff_inputs: list, grad_output: np.ndarray) -> tuple:
    from . import grad
    return grad(output, diff_inputs, _wrap(grad_output), retain_graph=True, allow_unused=True)


def _stack_vjps(rows: list, diff_inputs: list, n_cols: int):
    """Columns of per-input Jacobians from lists of vjps; plus size/dtype correctness."""
    jacs = [np.zeros((t._data.size, n_cols), t._data.dtype) for t in diff_inputs]
    sizes_ok = types_ok = True
    for col, grads in enumerate(rows):
        for jac, g, inp in zip(jacs, grads, diff_inputs):
            if g is None:
                continue
            if g._data.shape != inp._data.shape:
                sizes_ok = False
            elif g.dtype is not inp.dtype:
                types_ok = False
            if g._data.size != jac.shape[0]:
                continue
            jac[:, col] = g._data.reshape(-1)
    return jacs, sizes_ok, types_ok


def _analytical_jacobian(inputs, output: Tensor, nondet_tol: float, check_grad_dtypes: bool,
                         v: np.ndarray | None = None) -> list:
    """Per input requiring grad, the ``(in_numel, out_numel)`` Jacobian of ``output`` from
    backward (or the single column ``v^T J`` when ``v`` is given), computed twice to check that
    backward is reentrant."""
    _, diff_inputs = _diff_inputs(inputs)
    shape, dtype = output._data.shape, output._data.dtype

    def rows():
        if v is not None:
            return [_vjps(output, diff_inputs, v.reshape(shape).astype(dtype))]
        res = []
        for j in range(output._data.size):
            go = np.zeros(output._data.size, dtype)
            go[j] = 1
            res.append(_vjps(output, diff_inputs, go.reshape(shape)))
        return res

    n_cols = 1 if v is not None else output._data.size
    jac1, sizes_ok, types_ok = _stack_vjps(rows(), diff_inputs, n_cols)
    jac2, _, _ = _stack_vjps(rows(), diff_inputs, n_cols)
    reentrant = all(a.size == 0 or np.abs(a - b).max() <= nondet_tol
                    for a, b in zip(jac1, jac2))
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
            + FAILED_NONDET_MSG)
    return jac1


def _forward_jacobian(fn, inputs, check_grad_dtypes: bool, all_u=None) -> list:
    """Per input requiring grad, per float output of ``fn``: the Jacobian from forward-mode AD,
    one basis tangent per input element (or the single column ``J u`` with ``all_u``)."""
    from .._ops.creation import zeros_like
    _, tensor_inputs = _diff_inputs(inputs)
    if any(t.is_complex() for t in tensor_inputs):
        raise ValueError(
            "Expected inputs to be non-complex for _get_analytical_jacobian_forward_ad.")
    jacobians = []
    with fwAD.dual_level():
        tangents, duals = [], []
        for inp in inputs:
            if isinstance(inp, Tensor) and inp.requires_grad:
                inp = fwAD.make_dual(inp.detach(), zeros_like(inp))
                tangents.append(fwAD.unpack_dual(inp)[1])
            duals.append(inp)

        def column():
            res = []
            for o in _as_tuple(fn(*duals)):
                if not _is_float_or_complex(o):
                    continue
                val, tg = fwAD.unpack_dual(o)
                if check_grad_dtypes and tg is not None and val.is_complex() != tg.is_complex():
                    raise GradcheckError("Forward AD gradient has dtype mismatch.")
                res.append(np.zeros(val._data.size, val._data.dtype) if tg is None
                           else np.array(tg._data, val._data.dtype).reshape(-1))
            return res

        for i, tg in enumerate(tangents):
            data = tg._data
            if all_u is not None:
                data[...] = all_u[i].reshape(data.shape)
                jacobians.append([c[None, :] for c in column()])
                data[...] = 0
                continue
            cols = []
            for idx in np.ndindex(*data.shape):
                data[idx] = 1
                cols.append(column())
                data[idx] = 0
            if not cols:            # an empty input: zero rows, one block per float output
                per_out = [np.zeros((0, c.size), c.dtype) for c in column()]
            else:
                per_out = [np.stack([c[k] for c in cols]) for k in range(len(cols[0]))]
            jacobians.append(per_out)
    return jacobians


# ---------------------------------------------------------------------------------------------
# slow and fast checks


def _float_positions(func_out) -> list:
    """For each float/complex tensor in ``func_out``, whether it requires grad (in order)."""
    return [o.requires_grad for o in _as_tuple(func_out) if _is_float_or_complex(o)]


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, *, use_forward_ad=False, complex_indices=None, test_imag=False,
                    masked=False):
    func_out = _as_tuple(func_out)
    if not outputs:
        return _check_no_differentiable_outputs(func, inputs, func_out, eps, use_forward_ad)
    numerical = _numerical_jacobian(func, inputs, func_out, eps, use_forward_ad)
    # numerical[j][i]: input j, output i, restricted to the outputs that require grad
    diff_pos = [k for k, o in enumerate(func_out) if isinstance(o, Tensor) and o.requires_grad]
    numerical = [[per_in[k] for k in diff_pos] for per_in in numerical]
    if use_forward_ad:
        analytical = _forward_jacobian(func, inputs, check_grad_dtypes)
        fmask = _float_positions(func_out)
        fidx = [k for k, rg in enumerate(fmask) if rg]
        for j, per_in in enumerate(numerical):
            for i, n in enumerate(per_in):
                a = analytical[j][fidx[i]]
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(_notallclose_msg(
                        _wrap(a), _wrap(n), i, j, complex_indices, test_imag, True))
    else:
        for i, o in enumerate(outputs):
            analytical = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes)
            for j, a in enumerate(analytical):
                n = numerical[j][i]
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(_notallclose_msg(
                        _wrap(a), _wrap(n), i, j, complex_indices, test_imag))
    return True


def _make_vectors(inp_tensors, outputs, use_forward_ad: bool):
    """Random unit directions: ``u`` per input (a pair for complex inputs), ``v`` per output."""
    rng = np.random.default_rng(0)

    def vec(t, real: bool):
        dt = t._data.dtype
        if real and np.issubdtype(dt, np.complexfloating):
            dt = np.finfo(dt).dtype
        x = rng.random(t._data.size).astype(dt)
        return x / np.linalg.norm(x)

    all_u = [(vec(t, True), vec(t, True)) if t.is_complex() else vec(t, True)
             for t in inp_tensors]
    all_v = None if use_forward_ad else [vec(o, False) for o in outputs]
    return all_v, all_u


def _adjusted_atol(atol: float, u, v) -> float:
    sum_v = 1.0 if v is None else float(np.sum(v))
    sum_u = float(np.sum(u[0]) + np.sum(u[1])) if isinstance(u, tuple) else float(np.sum(u))
    return atol * sum_u * sum_v


def _slow_mode_details(func, inputs, func_out, input_idx, output_idx, rtol, atol, eps,
                       is_forward_ad) -> str:
    diff_out = _differentiable_outputs(func_out)
    diff_pos = [k for k, o in enumerate(_as_tuple(func_out))
                if isinstance(o, Tensor) and o.requires_grad]
    n = _numerical_jacobian(func, inputs, func_out, eps, is_forward_ad)[input_idx]
    n = n[diff_pos[output_idx]]
    if is_forward_ad:
        fidx = [k for k, rg in enumerate(_float_positions(func_out)) if rg]
        a = _forward_jacobian(func, inputs, False)[input_idx][fidx[output_idx]]
    else:
        a = _analytical_jacobian(inputs, diff_out[output_idx], float("inf"), False)[input_idx]
    dt = np.result_type(a, n)
    max_diff = np.abs(np.asarray(n, dt) - np.asarray(a, dt)).max() if a.size else 0.0
    msg = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background "
        "\nabout fast mode. Below, we recompute numerical and analytical jacobians in slow mode:"
        f"\n\nNumerical:\n {_wrap(n)}\nAnalytical:\n{_wrap(a)}\n\n"
        f"The max per-element difference (slow mode) is: {_scalar_str(max_diff)}.\n")
    if _allclose(a, n, rtol, atol):
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


def _fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, *, use_forward_ad=False, complex_indices=None, test_imag=False,
                    masked=False):
    _, inp_tensors = _diff_inputs(inputs)
    all_v, all_u = _make_vectors(inp_tensors, outputs, use_forward_ad)
    func_out_t = _as_tuple(func_out)
    diff_pos = [k for k, o in enumerate(func_out_t) if isinstance(o, Tensor) and o.requires_grad]
    # numerical J u per input, per differentiable output (reduced to v^T J u in backward mode)
    numerical = []
    for inp, u in zip(inp_tensors, all_u):
        delta = (u[0].reshape(inp._data.shape) * eps, u[1].reshape(inp._data.shape) * eps) \
            if isinstance(u, tuple) else u.reshape(inp._data.shape) * eps
        ju = _numerical_jvp(func, inputs, inp, Ellipsis, delta, eps, eps, use_forward_ad)
        if not outputs and not use_forward_ad:
            for x in ju:
                if x is not None and x.size and np.abs(x).max() > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        ju = [ju[k] for k in diff_pos]
        if all_v is not None:
            ju = [np.sum(v * x) for v, x in zip(all_v, ju)]
        numerical.append(ju)
    if use_forward_ad:
        fidx = [k for k, rg in enumerate(_float_positions(func_out)) if rg]
        fwd = _forward_jacobian(func, inputs, check_grad_dtypes, all_u=all_u)
        analytical = [[fwd[j][k][0] for k in fidx] for j in range(len(inp_tensors))]
    else:
        analytical = [[None] * len(outputs) for _ in inp_tensors]
        for i, (o, v) in enumerate(zip(outputs, all_v)):
            vjs = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes, v=v)
            for j, (vj, u) in enumerate(zip(vjs, all_u)):
                vj = vj[:, 0]
                if np.iscomplexobj(vj):
                    analytical[j][i] = vj.real @ u[0] + 1j * (vj.imag @ u[1])
                else:
                    analytical[j][i] = vj @ u
    for j, per_in in enumerate(numerical):
        for i, n in enumerate(per_in):
            a = analytical[j][i]
            tol = _adjusted_atol(atol, all_u[j], all_v[i] if all_v else None)
            if not _allclose(np.asarray(a), np.asarray(n), rtol, tol):
                details = _slow_mode_details(func, inputs, func_out, j, i, rtol, atol, eps,
                                             use_forward_ad)
                if use_forward_ad:
                    a_s, n_s = _wrap(a), _wrap(n)
                else:
                    a_s, n_s = _scalar_str(a), _scalar_str(n)
                raise GradcheckError(_notallclose_msg(
                    a_s, n_s, i, j, complex_indices, test_imag, use_forward_ad) + details)
    return True


# ---------------------------------------------------------------------------------------------
# complex handling, extra checks


def _real_and_imag_output(fn):
    def apply(part):
        def wrapped(*inputs):
            return tuple(part(o) if o.is_complex() else o for o in _as_tuple(fn(*inputs)))
        return wrapped
    return apply(lambda o: o.real), apply(lambda o: o.imag)


def _real_and_imag_input(fn, complex_idx, inputs):
    def apply(combine):
        def wrapped(*args):
            new = list(args)
            for k in complex_idx:
                new[k] = combine(new[k], inputs[k])
            return _as_tuple(fn(*new))
        return wrapped
    return (apply(lambda x, orig: x + orig.imag * 1j),
            apply(lambda x, orig: orig.real + x * 1j))


def _gradcheck_real_imag(gradcheck_fn, func, func_out, inputs, outputs, eps, rtol, atol,
                         check_grad_dtypes, check_forward_ad, check_backward_ad, nondet_tol,
                         check_undefined_grad):
    common = (eps, rtol, atol, check_grad_dtypes, nondet_tol)
    if check_backward_ad:
        complex_out = [i for i, o in enumerate(outputs) if o.is_complex()]
        if any(isinstance(o, Tensor) and o.is_complex() for o in _as_tuple(func_out)):
            real_fn, imag_fn = _real_and_imag_output(func)
            imag_out = imag_fn(*inputs)
            gradcheck_fn(imag_fn, imag_out, inputs, _differentiable_outputs(imag_out), *common,
                         complex_indices=complex_out, test_imag=True)
            real_out = real_fn(*inputs)
            gradcheck_fn(real_fn, real_out, inputs, _differentiable_outputs(real_out), *common,
                         complex_indices=complex_out)
        else:
            gradcheck_fn(func, func_out, inputs, outputs, *common)
    if check_forward_ad:
        complex_in = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.is_complex()]
        if complex_in:
            real_fn, imag_fn = _real_and_imag_input(func, complex_in, inputs)
            imag_inputs = [t.imag if isinstance(t, Tensor) and t.is_complex() else t
                           for t in inputs]
            imag_out = imag_fn(*imag_inputs)
            gradcheck_fn(imag_fn, imag_out, imag_inputs, _differentiable_outputs(imag_out),
                         *common, complex_indices=complex_in, test_imag=True, use_forward_ad=True)
            real_inputs = [t.real if isinstance(t, Tensor) and t.is_complex() else t
                           for t in inputs]
            real_out = real_fn(*real_inputs)
            gradcheck_fn(real_fn, real_out, real_inputs, _differentiable_outputs(real_out),
                         *common, complex_indices=complex_in, use_forward_ad=True)
            if check_undefined_grad:
                _test_undefined_forward_mode(imag_fn, imag_inputs)
                _test_undefined_forward_mode(real_fn, real_inputs)
        else:
            gradcheck_fn(func, func_out, inputs, outputs, *common, use_forward_ad=True)
            if check_undefined_grad:
                _test_undefined_forward_mode(func, inputs)


def _check_inputs(inputs) -> bool:
    any_rg = False
    for idx, inp in enumerate(inputs):
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            continue
        if inp.dtype not in (float64, complex128):
            warnings.warn(
                f"Input #{idx} requires gradient and is not a double precision floating point "
                "or complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ", stacklevel=3)
        if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck.")
        any_rg = True
    if not any_rg:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    return True


def _test_backward_mul_by_grad_output(outputs, inputs, masked) -> bool:
    from .._ops.creation import zeros_like
    from . import grad
    _, diff_inputs = _diff_inputs(inputs)
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    if not outputs:
        return True
    grads = grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if masked:
            if not np.allclose(gi._data, 0):
                raise GradcheckError("backward not multiplied by grad_output")
        elif np.any(gi._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype is not di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi._data.shape != di._data.shape:
            raise GradcheckError("grad is incorrect size")
    return True


class _UndefinedGrad(Function):
    """Identity whose backward sends an undefined (None) gradient to its input."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return None


def _test_undefined_backward_mode(func, outputs, inputs) -> bool:
    from .._ops.creation import zeros_like
    from . import grad
    _, diff_inputs = _diff_inputs(inputs)
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")

    def warn_bc_breaking():
        warnings.warn(
            "Backwards compatibility: New undefined gradient support checking feature is "
            "enabled by default, but it may break existing callers of this function. If this is "
            "true for you, you can call this function with \"check_undefined_grad=False\" to "
            "disable the feature", stacklevel=3)

    def check(outs) -> bool:
        if not outs:
            return True
        try:
            grads = grad(outs, diff_inputs, [zeros_like(o) for o in outs], allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                "\"Notes about undefined output gradients\" in \"tools/autograd/derivatives.yaml\""
            ) from e
        for gi in grads:
            if gi is not None and np.any(gi._data != 0):
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    "undefined or zero. Please look at \"Notes about undefined output gradients\" "
                    "in \"tools/autograd/derivatives.yaml\"")
        return True

    to_check = [[_UndefinedGrad.apply(o) for o in _differentiable_outputs(func(*inputs))
                 if isinstance(o, Tensor)]]
    if len(to_check[0]) > 1:
        for undef in range(len(outputs)):
            outs = _differentiable_outputs(func(*inputs))
            to_check.append([_UndefinedGrad.apply(o) if k == undef else o
                             for k, o in enumerate(outs)])
    return all(check(outs) for outs in to_check)


def _test_undefined_forward_mode(func, inputs) -> bool:
    """Outputs' tangents must not change when one input's zero tangent is left undefined."""
    from .._ops.creation import zeros_like
    idxs, tensors = _diff_inputs(inputs)
    _, all_u = _make_vectors(tensors, (), True)
    with fwAD.dual_level():
        duals = list(inputs)
        for k, t, u in zip(idxs, tensors, all_u):
            u = u[0] if isinstance(u, tuple) else u
            duals[k] = fwAD.make_dual(t.detach(), _wrap(u.reshape(t._data.shape)
                                                        .astype(t._data.dtype)))
        for k, t in zip(idxs, tensors):
            keep = duals[k]
            duals[k] = fwAD.make_dual(t.detach(), zeros_like(t))
            outs1 = [o for o in _as_tuple(func(*duals)) if _is_float_or_complex(o)]
            duals[k] = t.detach()
            outs2 = [o for o in _as_tuple(func(*duals)) if _is_float_or_complex(o)]
            duals[k] = keep
            for index_o, (o1, o2) in enumerate(zip(outs1, outs2)):
                r1, r2 = fwAD.unpack_dual(o1)[1], fwAD.unpack_dual(o2)[1]
                if r1 is not None and r2 is not None and not np.allclose(r1._data, r2._data):
                    raise GradcheckError(
                        f"Mismatch in tangent values for output with index: {index_o} when "
                        f"input: {t} has an undefined tangent value.  Got: {r1} but expected: "
                        f"{r2}")
    return True


# ---------------------------------------------------------------------------------------------
# public API


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against finite differences
    (``torch.autograd.gradcheck``). Returns True, or raises :class:`GradcheckError` (returns
    False when ``raise_exception=False``) on the first mismatch."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    args = {"func": func, "inputs": inputs, "eps": eps, "atol": atol, "rtol": rtol,
            "nondet_tol": nondet_tol, "check_undefined_grad": check_undefined_grad,
            "check_grad_dtypes": check_grad_dtypes, "check_batched_grad": check_batched_grad,
            "check_batched_forward_grad": check_batched_forward_grad,
            "check_forward_ad": check_forward_ad, "check_backward_ad": check_backward_ad,
            "fast_mode": fast_mode, "masked": masked}
    if not raise_exception:
        try:
            return _gradcheck_helper(**args)
        except GradcheckError:
            return False
    return _gradcheck_helper(**args)


gradcheck.GradcheckError = GradcheckError   # also reachable as ember.autograd.gradcheck.<...>


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                      check_grad_dtypes, check_batched_grad, check_batched_forward_grad,
                      check_forward_ad, check_backward_ad, fast_mode, masked) -> bool:
    tupled = _as_tuple(inputs)
    _check_inputs(tupled)
    func_out = func(*tupled)
    outputs = _differentiable_outputs(func_out)
    check_fn = _fast_gradcheck if fast_mode else _slow_gradcheck

    def gradcheck_fn(*a, **k):
        return check_fn(*a, masked=masked, **k)

    _gradcheck_real_imag(gradcheck_fn, func, func_out, tupled, outputs, eps, rtol, atol,
                         check_grad_dtypes, check_forward_ad, check_backward_ad, nondet_tol,
                         check_undefined_grad)
    if check_batched_forward_grad:
        raise NotImplementedError(
            "gradcheck: check_batched_forward_grad=True " + _NO_VMAP
            + "; pass check_batched_forward_grad=False.")
    if not check_backward_ad:
        return True
    if check_batched_grad:
        for i, o in enumerate(outputs):
            _test_batched_grad(tupled, o, i)
    _test_backward_mul_by_grad_output(outputs, tupled, masked)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, tupled)
    return True


FAILED_BATCHED_GRAD_MSG = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
This could have been invoked in a number of ways (via a test that calls
gradcheck/gradgradcheck directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_grad=False` and/or `check_batched_gradgrad=False`.

If you're modifying an existing operator that supports batched grad computation,
or wish to make a new operator work with batched grad computation, please read
the following.

To compute batched grads (e.g., jacobians, hessians), we vmap over the backward
computation. The most common failure case is if there is a 'vmap-incompatible
operation' in the backward pass. Please see
NOTE: [How to write vmap-compatible backward formulas]
in the codebase for an explanation of how to fix this.
""".strip()


def _test_batched_grad(inputs, output: Tensor, output_idx: int) -> bool:
    """PyTorch's ``_test_batched_grad``: a batch of two random ``grad_outputs`` through one
    ``grad(is_grads_batched=True)`` must give the two separate ``grad`` results, stacked."""
    import ember

    from . import grad
    diff_inputs = _diff_inputs(inputs)[1]

    def fill(results, lead=()):
        return tuple(g if g is not None else
                     ember.zeros([], dtype=inp.dtype).expand(lead + tuple(inp.shape))
                     for g, inp in zip(results, diff_inputs))

    grad_outputs = [ember.randn_like(output) for _ in range(2)]
    expected = [fill(grad(output, diff_inputs, g, retain_graph=True, allow_unused=True))
                for g in grad_outputs]
    expected = [ember.stack(shards) for shards in zip(*expected)]
    try:
        result = fill(grad(output, diff_inputs, ember.stack(grad_outputs), retain_graph=True,
                           allow_unused=True, is_grads_batched=True), (2,))
    except RuntimeError as ex:
        raise GradcheckError(
            f"While computing batched gradients, got: {ex}\n\n{FAILED_BATCHED_GRAD_MSG}"
        ) from ex
    for input_idx, (res, exp) in enumerate(zip(result, expected)):
        if ember.allclose(res, exp):
            continue
        raise GradcheckError(f"""
For output {output_idx} and input {input_idx}:

{FAILED_BATCHED_GRAD_MSG}

Got:
{res}

Expected:
{exp}
""".strip())
    return True


def _make_grad_output(x: Tensor, noncontiguous: bool) -> Tensor:
    """Uniform in [-1, 1), of ``x``'s shape (like ``torch.testing.make_tensor``), requiring grad;
    non-contiguous (every other element of a wider buffer) when asked."""
    import ember
    if x.is_floating_point() or x.is_complex():
        dtype = x.dtype
    else:
        dtype = ember.float64
    shape = tuple(x.shape)
    real = ember.float32 if dtype is ember.complex64 else \
        ember.float64 if dtype is ember.complex128 else dtype
    wide = shape[:-1] + (shape[-1] * 2,) if (noncontiguous and shape and x.numel() > 1) \
        else shape
    data = ember.rand(wide, dtype=real)._data * 2 - 1
    if dtype.is_complex:
        data = data + 1j * (ember.rand(wide, dtype=real)._data * 2 - 1)
    data = np.asarray(data)
    if wide != shape:
        data = data[..., ::2]
    return _make(data, Version(), True, None)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False,
                  masked: bool = False) -> bool:
    """Check second derivatives (``torch.autograd.gradgradcheck``): gradcheck the function
    ``(inputs, grad_outputs) -> autograd.grad(func(inputs), inputs, grad_outputs,
    create_graph=True)``. Random ``grad_outputs`` are made when not given."""
    from . import grad
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True")
    tupled = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable_outputs(func(*tupled))
        tupled_grads = tuple(_make_grad_output(o, gen_non_contig_grad_outputs) for o in outs)
    else:
        tupled_grads = _as_tuple(grad_outputs)
    n_out = len(tupled_grads)
    diff_in = {i for i, x in enumerate(tupled) if isinstance(x, Tensor) and x.requires_grad}
    diff_go = {i for i, x in enumerate(tupled_grads) if x.requires_grad}

    def new_func(*args):
        in_args = tuple(x.requires_grad_() if i in diff_in else x
                        for i, x in enumerate(args[:len(args) - n_out]))
        outs = _differentiable_outputs(func(*in_args))
        gos = tuple(x.requires_grad_() if i in diff_go else x
                    for i, x in enumerate(args[len(args) - n_out:]))
        diff_args = tuple(x for i, x in enumerate(in_args) if i in diff_in)
        gi = grad(outs, diff_args, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gi if g is not None)

    return gradcheck(new_func, tupled + tupled_grads, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)
