"""Jacobians and Hessians of 100-dimensional functions, with and without ``vectorize``.

``jacobian(g, x)`` for ``g(x) = tanh(A @ x)`` and ``hessian(f, x)`` for
``f(x) = (A @ tanh(x) + x**3).sum()``, x of 100 elements, float64. ``vectorize=False`` runs one
backward pass per output element (100 passes); ``vectorize=True`` runs ONE backward pass over
the stacked identity basis (ember: batched cotangents through the bare-array VJPs; torch: vmap).
``strategy="forward-mode", vectorize=True`` is ONE forward pass whose inputs carry the stacked
identity basis as a batched tangent (ember: a Tensor over a BatchedArray; torch: vmap over jvp).
"""
from __future__ import annotations

import numpy as np
from _common import MISSING, header, libraries, report, skipped, timeit

N = 100


def run(T, a_np, x_np):
    F = T.autograd.functional
    A = T.from_numpy(a_np)
    x = T.from_numpy(x_np)

    def g(v):
        return T.tanh(A @ v)

    def f(v):
        return (A @ T.tanh(v) + v ** 3).sum()

    res, vals = {}, {}
    for vec in (False, True):
        tag = "vectorize=True " if vec else "vectorize=False"
        vals[f"jac {vec}"] = F.jacobian(g, x, vectorize=vec).numpy()
        vals[f"hess {vec}"] = F.hessian(f, x, vectorize=vec).numpy()
        res[f"jacobian {tag}"] = timeit(lambda v=vec: F.jacobian(g, x, vectorize=v),
                                        number=1 if not vec else 5, repeat=3)[0]
        res[f"hessian  {tag}"] = timeit(lambda v=vec: F.hessian(f, x, vectorize=v),
                                        number=1 if not vec else 5, repeat=3)[0]
    vals["jac fwd"] = F.jacobian(g, x, vectorize=True, strategy="forward-mode").numpy()
    res["jacobian forward-mode vectorize=True "] = timeit(
        lambda: F.jacobian(g, x, vectorize=True, strategy="forward-mode"), number=5, repeat=3)[0]
    return res, vals


def main():
    header(f"bench_functional: jacobian / hessian of {N}-dim functions, float64 (best of 3)")
    rs = np.random.RandomState(0)
    a_np = rs.standard_normal((N, N)) / np.sqrt(N)
    x_np = rs.standard_normal(N)
    res, vals = {}, {}
    for name, T in libraries():
        try:
            res[name], vals[name] = run(T, a_np, x_np)
        except MISSING as e:
            skipped(name, e)
    labels = sorted(next(iter(res.values())).keys()) if res else ()
    for label in labels:
        report(label, res.get("ember", {}).get(label), res.get("torch", {}).get(label))
    if "ember" in res:
        e = res["ember"]
        for what in ("jacobian", "hessian "):
            lo, hi = e[f"{what} vectorize=False"], e[f"{what} vectorize=True "]
            print(f"  ember {what.strip()}: vectorize=True is {lo / hi:.1f}x faster than the loop")
        lo = e["jacobian vectorize=False"]
        hi = e["jacobian forward-mode vectorize=True "]
        print(f"  ember jacobian forward-mode vectorize=True is {lo / hi:.1f}x faster than the "
              "reverse-mode loop")
    if len(vals) == 2:
        ok = all(np.allclose(vals["ember"][k], vals["torch"][k], rtol=1e-10, atol=1e-12)
                 for k in vals["ember"])
        print("  results equal torch's: " + ("yes" if ok else "NO"))


if __name__ == "__main__":
    main()
