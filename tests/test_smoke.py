import numpy as np

import ember
from helpers import check_op


def test_seed_requires_grad_example():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y1 = x ** 2
    y2 = y1 * 2
    y3 = y1 + y2
    y3.backward(ember.ones(y3.shape))
    assert x.grad.tolist() == [6.0, 12.0]


def test_check_op_mul_exp():
    a = np.random.default_rng(1).standard_normal((3, 4))
    b = np.random.default_rng(2).standard_normal((4,))
    check_op(lambda x, y: (x * y).exp(), lambda x, y: (x * y).exp(), a, b)
