"""torch.get_num_threads / set_num_threads / the inter-op pair: PyTorch's API and errors; ember's
intra-op threads are its BLAS's."""
from __future__ import annotations

import pytest
import torch

import ember
from helpers import raises_same


@pytest.mark.parametrize("bad", [0, -1, 1.5, "a", True])
def test_errors(bad):
    raises_same(lambda: ember.set_num_threads(bad), lambda: torch.set_num_threads(bad))


def test_set_and_get_reach_the_blas():
    from ember._threads import _blas_libraries
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1
        assert all(get() == 1 for _, get in _blas_libraries())
    finally:
        ember.set_num_threads(before)
    assert ember.get_num_threads() == before
    assert isinstance(ember.get_num_interop_threads(), int)
    ember.set_num_interop_threads(ember.get_num_interop_threads())
