"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode, compared with PyTorch."""
import gc
import threading
import weakref

import numpy as np
import pytest
import torch

import ember
from helpers import both, raises_same


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    yield
    ember.set_grad_enabled(True)
    torch.set_grad_enabled(True)
    assert not ember.is_inference_mode_enabled()


def _modes(M):
    return (M.is_grad_enabled(), M.is_inference_mode_enabled())


def test_defaults_and_namespaces():
    def f(M):
        return [_modes(M), M.autograd.no_grad is M.no_grad,
                M.autograd.enable_grad is M.enable_grad,
                M.autograd.set_grad_enabled is M.set_grad_enabled,
                M.autograd.inference_mode is M.inference_mode,
                M.autograd.grad_mode.no_grad is M.no_grad]
    both(f)


@pytest.mark.parametrize("kind", ["no_grad", "enable_grad"])
def test_context_decorator_bare_decorator(kind):
    def f(M):
        cm = getattr(M, kind)
        x = M.ones(2, requires_grad=True)
        out = []
        for outer in (True, False):
            M.set_grad_enabled(outer)
            with cm():
                out.append(((x * 2).requires_grad, _modes(M)))
            out.append(_modes(M))

            @cm()
            def g(t):
                return (t * 2).requires_grad, _modes(M)

            @cm
            def h(t):
                return (t * 2).requires_grad, _modes(M)
            out += [g(x), h(x), g.__name__, h.__name__, _modes(M)]
        M.set_grad_enabled(True)
        return out
    both(f)


def test_decorated_generator_keeps_mode_per_step():
    def f(M):
        x = M.ones(1, requires_grad=True)

        @M.no_grad()
        def gen():
            for _ in range(3):
                yield (x * 2).requires_grad, M.is_grad_enabled()
        out = []
        for item in gen():
            out.append(item)
            out.append(M.is_grad_enabled())   # restored between steps
        return out
    e, _ = both(f)
    assert e == [(False, False), True] * 3


def test_set_grad_enabled_forms():
    def f(M):
        x = M.ones(2, requires_grad=True)
        out = []
        with M.no_grad():
            with M.set_grad_enabled(True):
                out.append((x * 2).requires_grad)
            out.append(M.is_grad_enabled())
        with M.set_grad_enabled(False):
            out.append((x * 2).requires_grad)
        out.append(M.is_grad_enabled())

        @M.set_grad_enabled(False)
        def g():
            return M.is_grad_enabled()
        out += [M.is_grad_enabled(), g(), M.is_grad_enabled()]
        r = M.set_grad_enabled(False)
        out += [M.is_grad_enabled(), repr(r).replace("torch.", "ember.")]
        M.set_grad_enabled(True)
        out.append(M.is_grad_enabled())
        return out
    both(f)


def test_exceptions_restore_mode():
    def f(M):
        out = []
        for cm in (M.no_grad(), M.set_grad_enabled(False), M.inference_mode()):
            try:
                with cm:
                    raise ValueError
            except ValueError:
                pass
            out.append(_modes(M))
        return out
    both(f)


def test_no_grad_records_nothing_and_saves_nothing():
    def f(M):
        packed = []

        def pack(t):
            packed.append(tuple(t.shape))
            return t
        x = M.ones(3, requires_grad=True)
        with M.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            with M.no_grad():
                y = (x * x).exp()
            n_nograd = len(packed)
            z = (x * x).exp()
        return [y.requires_grad, y.grad_fn, y.is_leaf, n_nograd, len(packed) > 0, z.grad_fn]
    e, _ = both(f)
    assert e[3] == 0


@pytest.mark.parametrize("M", [ember, torch], ids=["ember", "torch"])
def test_no_grad_result_keeps_no_input_alive(M):
    x = M.ones(3, requires_grad=True)
    with M.no_grad():
        y = x.exp()
    r = weakref.ref(x)
    del x
    gc.collect()
    assert r() is None and y.grad_fn is None
    x = M.ones(3, requires_grad=True)
    y = x.exp()
    r = weakref.ref(x)
    del x
    gc.collect()
    assert r() is not None     # the graph (AccumulateGrad) holds the leaf


def test_inplace_under_no_grad_on_leaf_allowed():
    def f(M):
        w = M.ones(3, requires_grad=True)
        with M.no_grad():
            w.mul_(2)
            w -= 1
        (w * w).sum().backward()
        return [w, w.grad, w.is_leaf, w.grad_fn, w._version]
    both(f)


# ---- inference mode --------------------------------------------------------------------------

def test_inference_tensors():
    def f(M):
        x = M.ones(2, requires_grad=True)
        normal = M.ones(2)
        with M.inference_mode():
            t = M.ones(2)
            v = t.view(2, 1)
            y = x * 2
            m = normal * 2
            out = [_modes(M), t.is_inference(), v.is_inference(), y.is_inference(),
                   y.requires_grad, y.grad_fn, m.is_inference(), normal.is_inference()]
            t.add_(1)
            normal.add_(1)
            out += [t, normal._version]
        out += [_modes(M), t.is_inference(), t.requires_grad, (t * 2).is_inference(),
                t.clone().is_inference(), t.exp().requires_grad]
        return out
    both(f)


def test_inference_tensor_errors():
    def mk(M):
        with M.inference_mode():
            return M.ones(2)
    cases = [
        lambda M, t: M.ones(2, requires_grad=True) * t,        # saved for backward
        lambda M, t: (M.ones(2, requires_grad=True) * 2).mul(t),
        lambda M, t: t.add_(1),                                # in-place outside
        lambda M, t: t.zero_(),
        lambda M, t: t.view(2, 1).mul_(2),
        lambda M, t: t.requires_grad_(),
        lambda M, t: t._version,
    ]
    for c in cases:
        raises_same(lambda c=c: c(ember, mk(ember)), lambda c=c: c(torch, mk(torch)))


def test_inference_mode_false_and_nesting():
    def f(M):
        x = M.ones(1, requires_grad=True)
        out = []
        with M.inference_mode(False):
            out += [_modes(M), M.zeros(1).is_inference()]
        with M.inference_mode():
            with M.inference_mode(False):
                y = x * 2
                out += [_modes(M), y.requires_grad, M.zeros(1).is_inference()]
            out.append(_modes(M))
        with M.no_grad():
            with M.inference_mode():
                out.append(_modes(M))
            out.append(_modes(M))

        @M.inference_mode()
        def g():
            return _modes(M), M.zeros(1).is_inference()

        @M.inference_mode
        def h():
            return _modes(M)
        out += [g(), h(), _modes(M)]
        return out
    both(f)


def test_inference_tensor_ok_in_untracked_use():
    def f(M):
        with M.inference_mode():
            t = M.ones(2) * 3
        with M.no_grad():
            u = t + 1
        c = t.clone()
        c.requires_grad_()
        (c * c).sum().backward()
        return [u, u.is_inference(), c.grad, c.is_inference()]
    both(f)


# ---- threads -------------------------------------------------------------------------------

def test_modes_are_thread_local():
    def f(M):
        seen = {}

        def worker(tag):
            seen[tag] = _modes(M)
            with M.no_grad():
                seen[tag + "_inner"] = _modes(M)
        with M.no_grad():
            th = threading.Thread(target=worker, args=("no_grad",))
            th.start()
            th.join()
        with M.inference_mode():
            th = threading.Thread(target=worker, args=("inference",))
            th.start()
            th.join()
        M.set_grad_enabled(False)
        th = threading.Thread(target=worker, args=("set_false",))
        th.start()
        th.join()
        main = _modes(M)
        M.set_grad_enabled(True)
        return [seen, main]
    e, _ = both(f)
    assert e[0]["no_grad"] == (True, False)


def test_thread_mode_change_does_not_leak():
    def f(M):
        evt = threading.Event()
        done = threading.Event()

        def worker():
            M.set_grad_enabled(False)
            evt.set()
            done.wait(5)
        th = threading.Thread(target=worker)
        th.start()
        evt.wait(5)
        here = M.is_grad_enabled()
        done.set()
        th.join()
        return here
    e, _ = both(f)
    assert e is True


def test_numpy_arrays_unaffected():
    # plain data paths keep working inside every mode
    for cm in (ember.no_grad(), ember.inference_mode(), ember.enable_grad()):
        with cm:
            a = ember.from_numpy(np.arange(3.0))
            assert (a * 2).tolist() == [0.0, 2.0, 4.0]


# an op on inference tensors (one requiring grad) outside inference mode: the autograd kernel is
# skipped, but some kernels write through an op that records, or refuse through an out= call
_INFERENCE_CALLS = {
    "max_dim": lambda x: x.max(0), "min_dim": lambda x: x.min(0, keepdim=True),
    "mode": lambda x: x.mode(-1), "cumsum": lambda x: x.cumsum(-1),
    "cumprod": lambda x: x.cumprod(0), "logcumsumexp": lambda x: x.logcumsumexp(0),
    "sort": lambda x: x.sort(descending=True), "msort": lambda x: x.msort(),
    "topk": lambda x: x.topk(1, 0), "flip": lambda x: x.flip(0),
    "kthvalue": lambda x: x.kthvalue(1, 0), "median_dim": lambda x: x.median(-1),
    "median": lambda x: x.median(), "nanmedian_dim": lambda x: x.nanmedian(0),
    "cummax": lambda x: x.cummax(0), "cummin": lambda x: x.cummin(0),
    "logsumexp": lambda x: x.logsumexp(0), "mean": lambda x: x.mean(),
    "mean_dim": lambda x: x.mean(0), "std": lambda x: x.std(), "std_dim": lambda x: x.std(0),
    "var_all_dims": lambda x: x.var((0, 1)) if x.dim() == 2 else x.var(0),
    "var_keepdim": lambda x: x.var(0, keepdim=True), "sum": lambda x: x.sum(0),
    "amax": lambda x: x.amax(0),
    "softmax": lambda x: x.softmax(0), "clone": lambda x: x.clone(), "double": lambda x: x.double(),
}


@pytest.mark.parametrize("shape", [(), (1,), (2, 3)], ids=str)
@pytest.mark.parametrize("call", sorted(_INFERENCE_CALLS))
def test_ops_on_inference_tensors_outside_inference_mode(call, shape):
    import warnings

    def f(M):
        with M.inference_mode():
            x = M.from_numpy(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape))
            x.requires_grad_()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = _INFERENCE_CALLS[call](x)
        except RuntimeError as ex:
            return str(ex).replace("torch.", "ember.")
        r = r if isinstance(r, tuple) else (r,)
        return [(o.requires_grad, o.grad_fn, o.is_inference()) for o in r]
    both(f)
