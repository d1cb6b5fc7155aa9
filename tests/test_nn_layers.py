"""Every ember.nn layer against torch.nn from identical weights: repr, state_dict keys, forward
values, input and parameter gradients, and buffers after a training pass."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)


class R:
    """A float input that requires grad (values from N(0, 1), scaled)."""

    grad = True

    def __init__(self, *shape, scale=1.0, offset=0.0):
        self.shape, self.scale, self.offset = shape, scale, offset

    def make(self, rng):
        return rng.standard_normal(self.shape) * self.scale + self.offset


class U(R):
    """A float input in (0.05, 0.95) (probabilities)."""

    def make(self, rng):
        return rng.uniform(0.05, 0.95, self.shape)


class Pos(R):
    """A positive float input without grad (variances, Poisson targets)."""

    grad = False

    def make(self, rng):
        return rng.uniform(0.5, 2.0, self.shape)


class Sign(R):
    """A ±1 float target without grad."""

    grad = False

    def make(self, rng):
        return np.where(rng.standard_normal(self.shape) > 0, 1.0, -1.0)


class Bin(R):
    """A 0/1 float target without grad."""

    grad = False

    def make(self, rng):
        return (rng.standard_normal(self.shape) > 0).astype(np.float64)


class Prob(R):
    """Rows that sum to one (KL targets), without grad."""

    grad = False

    def make(self, rng):
        a = rng.uniform(0.1, 1.0, self.shape)
        return a / a.sum(-1, keepdims=True)


class LogProb(R):
    """Log-softmax rows (CTC inputs), requiring grad."""

    def make(self, rng):
        a = rng.standard_normal(self.shape)
        a = a - a.max(-1, keepdims=True)
        return a - np.log(np.exp(a).sum(-1, keepdims=True))


class Int:
    """An int64 input in [low, high) without grad."""

    grad = False

    def __init__(self, high, *shape, low=0):
        self.high, self.shape, self.low = high, shape, low

    def make(self, rng):
        return rng.integers(self.low, self.high, self.shape).astype(np.int64)


class Lit:
    """A literal argument passed unchanged to both libraries."""

    grad = False

    def __init__(self, value):
        self.value = value


class Arr:
    """A fixed array input without grad."""

    grad = False

    def __init__(self, a):
        self.a = np.asarray(a)

    def make(self, rng):
        return self.a.copy()


def _ml_target():
    t = np.full((3, 4), -1, np.int64)
    t[0, :2] = [3, 0]
    t[1, :1] = [1]
    t[2, :3] = [2, 1, 0]
    return t


# (class name, constructor args, constructor kwargs, forward inputs, run in eval mode)
CASES = [
    ("Identity", (3,), {"k": 1}, [R(2, 3)], False),
    ("Linear", (5, 4), {}, [R(3, 5)], False),
    ("Linear", (5, 4), {"bias": False}, [R(2, 3, 5)], False),
    ("Bilinear", (3, 4, 2), {}, [R(5, 3), R(5, 4)], False),
    ("Flatten", (), {}, [R(2, 3, 4)], False),
    ("Unflatten", (1, (2, 3)), {}, [R(4, 6)], False),
    # activations
    ("ReLU", (), {}, [R(3, 4)], False),
    ("ReLU6", (), {}, [R(3, 4, scale=5)], False),
    ("Threshold", (0.1, 20.0), {}, [R(3, 4)], False),
    ("RReLU", (0.1, 0.3), {}, [R(3, 4)], True),
    ("Hardtanh", (-0.5, 0.7), {}, [R(3, 4)], False),
    ("Sigmoid", (), {}, [R(3, 4)], False),
    ("Hardsigmoid", (), {}, [R(3, 4, scale=4)], False),
    ("Tanh", (), {}, [R(3, 4)], False),
    ("SiLU", (), {}, [R(3, 4)], False),
    ("Mish", (), {}, [R(3, 4)], False),
    ("Hardswish", (), {}, [R(3, 4, scale=4)], False),
    ("ELU", (0.7,), {}, [R(3, 4)], False),
    ("CELU", (1.3,), {}, [R(3, 4)], False),
    ("SELU", (), {}, [R(3, 4)], False),
    ("GLU", (), {"dim": 0}, [R(4, 3)], False),
    ("GELU", (), {"approximate": "tanh"}, [R(3, 4)], False),
    ("GELU", (), {}, [R(3, 4)], False),
    ("Hardshrink", (0.3,), {}, [R(3, 4)], False),
    ("LeakyReLU", (0.2,), {}, [R(3, 4)], False),
    ("LogSigmoid", (), {}, [R(3, 4)], False),
    ("Softplus", (2.0, 5.0), {}, [R(3, 4, scale=3)], False),
    ("Softshrink", (0.3,), {}, [R(3, 4)], False),
    ("PReLU", (), {}, [R(3, 4)], False),
    ("PReLU", (4,), {"init": 0.1}, [R(2, 4, 3)], False),
    ("Softsign", (), {}, [R(3, 4)], False),
    ("Tanhshrink", (), {}, [R(3, 4)], False),
    ("Softmin", (1,), {}, [R(3, 4)], False),
    ("Softmax", (0,), {}, [R(3, 4)], False),
    ("Softmax2d", (), {}, [R(2, 3, 4, 4)], False),
    ("LogSoftmax", (-1,), {}, [R(3, 4)], False),
    # convolutions
    ("Conv1d", (4, 6, 3), {"stride": 2, "padding": 1}, [R(2, 4, 9)], False),
    ("Conv1d", (4, 4, 3), {"padding": "same", "padding_mode": "circular", "groups": 2},
     [R(2, 4, 7)], False),
    ("Conv2d", (3, 4, (2, 3)), {"dilation": 2, "bias": False}, [R(2, 3, 7, 8)], False),
    ("Conv2d", (3, 4, 3), {"padding": 1, "padding_mode": "reflect"}, [R(2, 3, 5, 5)], False),
    ("Conv2d", (3, 4, 3), {"padding": 2, "padding_mode": "replicate"}, [R(1, 3, 4, 5)], False),
    ("Conv2d", (2, 2, 3), {"padding": "valid"}, [R(2, 5, 5)], False),
    ("Conv3d", (2, 3, 2), {"padding": 1, "padding_mode": "circular"}, [R(1, 2, 4, 3, 4)], False),
    ("ConvTranspose1d", (4, 3, 3), {"stride": 2, "output_padding": 1}, [R(2, 4, 5)], False),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "padding": 1, "groups": 2},
     [R(2, 4, 3, 4)], False),
    ("ConvTranspose3d", (2, 3, 2), {"dilation": 2}, [R(1, 2, 3, 2, 3)], False),
    # pooling
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1}, [R(2, 3, 9)], False),
    ("MaxPool2d", (2,), {"ceil_mode": True}, [R(2, 3, 5, 5)], False),
    ("MaxPool2d", (3,), {"stride": 1, "dilation": 2}, [R(1, 2, 7, 7)], False),
    ("MaxPool3d", (2,), {}, [R(1, 2, 4, 4, 4)], False),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False},
     [R(2, 3, 9)], False),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, [R(2, 3, 6, 6)], False),
    ("AvgPool2d", (2,), {"divisor_override": 3}, [R(2, 3, 4, 4)], False),
    ("AvgPool3d", (2,), {"stride": 1}, [R(1, 2, 3, 4, 3)], False),
    ("LPPool1d", (2, 3), {"stride": 2}, [R(2, 3, 8)], False),
    ("LPPool2d", (3, 2), {}, [Pos(2, 3, 4, 4)], False),
    ("AdaptiveAvgPool1d", (4,), {}, [R(2, 3, 9)], False),
    ("AdaptiveAvgPool2d", ((3, None),), {}, [R(2, 3, 7, 5)], False),
    ("AdaptiveAvgPool3d", (2,), {}, [R(1, 2, 5, 4, 3)], False),
    ("AdaptiveMaxPool1d", (3,), {}, [R(2, 3, 8)], False),
    ("AdaptiveMaxPool2d", (2,), {}, [R(2, 3, 5, 5)], False),
    ("AdaptiveMaxPool3d", (2,), {}, [R(1, 2, 4, 4, 4)], False),
    # normalisation
    ("BatchNorm1d", (4,), {}, [R(5, 4)], False),
    ("BatchNorm1d", (4,), {"momentum": None}, [R(5, 4, 3)], False),
    ("BatchNorm2d", (3,), {"affine": False}, [R(4, 3, 3, 3)], False),
    ("BatchNorm2d", (3,), {}, [R(4, 3, 3, 3)], True),
    ("BatchNorm2d", (3,), {"track_running_stats": False}, [R(4, 3, 3, 3)], True),
    ("BatchNorm3d", (2,), {"momentum": 0.3}, [R(2, 2, 3, 2, 2)], False),
    ("SyncBatchNorm", (3,), {}, [R(4, 3, 5)], False),
    ("InstanceNorm1d", (3,), {}, [R(2, 3, 6)], False),
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True},
     [R(2, 3, 4, 4)], False),
    ("InstanceNorm3d", (2,), {"affine": True}, [R(2, 2, 3, 3, 3)], False),
    ("LayerNorm", ((3, 4),), {}, [R(2, 3, 4)], False),
    ("LayerNorm", (4,), {"bias": False}, [R(2, 4)], False),
    ("LayerNorm", (4,), {"elementwise_affine": False, "eps": 1e-3}, [R(2, 4)], False),
    ("GroupNorm", (2, 4), {}, [R(3, 4, 5)], False),
    ("RMSNorm", (4,), {}, [R(3, 4)], False),
    ("RMSNorm", ([2, 4],), {"eps": 1e-4, "elementwise_affine": False}, [R(3, 2, 4)], False),
    ("LocalResponseNorm", (3,), {}, [R(2, 5, 4)], False),
    # dropout (eval mode: identity)
    ("Dropout", (0.3,), {}, [R(3, 4)], True),
    ("Dropout1d", (), {}, [R(2, 3, 4)], True),
    ("Dropout2d", (0.2,), {}, [R(2, 3, 4, 4)], True),
    ("Dropout3d", (), {}, [R(2, 3, 2, 2, 2)], True),
    ("AlphaDropout", (0.2,), {}, [R(3, 4)], True),
    ("FeatureAlphaDropout", (0.2,), {}, [R(2, 3, 4)], True),
    ("Dropout", (0.0,), {}, [R(3, 4)], False),
    # embeddings
    ("Embedding", (10, 3), {}, [Int(10, 4, 5)], False),
    ("Embedding", (10, 3), {"padding_idx": -2}, [Int(10, 6)], False),
    ("Embedding", (10, 3), {"max_norm": 1.0}, [Int(10, 6)], False),
    ("EmbeddingBag", (10, 3), {"mode": "sum"}, [Int(10, 3, 4)], False),
    ("EmbeddingBag", (10, 3), {}, [Int(10, 7), Arr([0, 2, 5])], False),
    ("EmbeddingBag", (10, 3), {"mode": "max", "padding_idx": 1}, [Int(10, 3, 4)], False),
    # padding
    ("ZeroPad1d", ((1, 2),), {}, [R(2, 3, 4)], False),
    ("ZeroPad2d", (1,), {}, [R(2, 3, 4)], False),
    ("ZeroPad3d", ((1, 0, 0, 1, 2, 0),), {}, [R(1, 2, 2, 3, 2)], False),
    ("ConstantPad1d", (2, 3.5), {}, [R(2, 3, 4)], False),
    ("ConstantPad2d", ((1, 0, 2, 1), -1.0), {}, [R(2, 3, 4)], False),
    ("ConstantPad3d", (1, 0.5), {}, [R(1, 2, 2, 2, 2)], False),
    ("ReflectionPad1d", (2,), {}, [R(2, 3, 4)], False),
    ("ReflectionPad2d", ((1, 2, 0, 1),), {}, [R(2, 3, 4, 4)], False),
    ("ReflectionPad3d", (1,), {}, [R(1, 2, 3, 3, 3)], False),
    ("ReplicationPad1d", ((0, 3),), {}, [R(2, 3, 4)], False),
    ("ReplicationPad2d", (2,), {}, [R(2, 3, 4, 4)], False),
    ("ReplicationPad3d", (1,), {}, [R(1, 2, 2, 3, 2)], False),
    ("CircularPad1d", (2,), {}, [R(2, 3, 4)], False),
    ("CircularPad2d", ((1, 0, 2, 1),), {}, [R(2, 3, 4, 4)], False),
    ("CircularPad3d", (1,), {}, [R(1, 2, 2, 3, 2)], False),
    # shuffles, sampling, distances, fold
    ("PixelShuffle", (2,), {}, [R(2, 8, 3, 3)], False),
    ("PixelUnshuffle", (2,), {}, [R(2, 2, 4, 6)], False),
    ("ChannelShuffle", (2,), {}, [R(2, 4, 3, 3)], False),
    ("Upsample", (), {"scale_factor": 2}, [R(2, 3, 4)], False),
    ("Upsample", (), {"size": (5, 7), "mode": "bilinear"}, [R(2, 3, 4, 4)], False),
    ("Upsample", (), {"scale_factor": (1.5, 2.0), "mode": "bicubic", "align_corners": True},
     [R(1, 2, 4, 4)], False),
    ("UpsamplingNearest2d", (), {"scale_factor": 2}, [R(2, 3, 3, 3)], False),
    ("UpsamplingBilinear2d", ((5, 6),), {}, [R(2, 3, 3, 3)], False),
    ("CosineSimilarity", (), {}, [R(3, 4), R(3, 4)], False),
    ("CosineSimilarity", (0, 1e-6), {}, [R(3, 4), R(3, 4)], False),
    ("PairwiseDistance", (), {}, [R(3, 4), R(3, 4)], False),
    ("PairwiseDistance", (1.0,), {"keepdim": True}, [R(3, 4), R(3, 4)], False),
    ("Fold", ((4, 5), (2, 2)), {}, [R(2, 12, 12)], False),
    ("Unfold", ((2, 3),), {"padding": 1, "stride": 2}, [R(2, 3, 5, 5)], False),
    # losses
    ("L1Loss", (), {}, [R(3, 4), R(3, 4)], False),
    ("MSELoss", (), {"reduction": "sum"}, [R(3, 4), R(3, 4)], False),
    ("NLLLoss", (), {"ignore_index": 1}, [R(5, 4), Int(4, 5)], False),
    ("CrossEntropyLoss", (), {"label_smoothing": 0.1}, [R(5, 4), Int(4, 5)], False),
    ("CrossEntropyLoss", (), {"reduction": "none"}, [R(2, 4, 3), Int(4, 2, 3)], False),
    ("PoissonNLLLoss", (), {"full": True}, [R(3, 4), Pos(3, 4)], False),
    ("GaussianNLLLoss", (), {"full": True}, [R(3, 4), R(3, 4), Pos(3, 4)], False),
    ("KLDivLoss", (), {"reduction": "batchmean"}, [LogProb(3, 4), Prob(3, 4)], False),
    ("BCELoss", (), {}, [U(3, 4), Bin(3, 4)], False),
    ("BCEWithLogitsLoss", (), {}, [R(3, 4), Bin(3, 4)], False),
    ("HingeEmbeddingLoss", (0.5,), {}, [R(3, 4), Sign(3, 4)], False),
    ("MultiLabelMarginLoss", (), {}, [R(3, 4), Arr(_ml_target())], False),
    ("SmoothL1Loss", (), {"beta": 0.5}, [R(3, 4), R(3, 4)], False),
    ("HuberLoss", (), {"delta": 0.5}, [R(3, 4), R(3, 4)], False),
    ("SoftMarginLoss", (), {}, [R(3, 4), Sign(3, 4)], False),
    ("MultiLabelSoftMarginLoss", (), {}, [R(3, 4), Bin(3, 4)], False),
    ("CosineEmbeddingLoss", (), {"margin": 0.2}, [R(3, 4), R(3, 4), Sign(3)], False),
    ("MarginRankingLoss", (), {"margin": 0.1}, [R(5), R(5), Sign(5)], False),
    ("MultiMarginLoss", (), {"p": 2, "margin": 0.5}, [R(3, 4), Int(4, 3)], False),
    ("TripletMarginLoss", (), {"margin": 0.5, "swap": True}, [R(3, 4), R(3, 4), R(3, 4)],
     False),
    ("TripletMarginWithDistanceLoss", (), {}, [R(3, 4), R(3, 4), R(3, 4)], False),
    ("CTCLoss", (), {}, [LogProb(6, 2, 4), Int(4, 2, 3, low=1), Lit((6, 5)), Lit((3, 2))],
     False),
]

# class-weight buffers for the weighted losses: (name, kwargs builder)
WEIGHTED = [
    ("CrossEntropyLoss", lambda lib: {"weight": lib.tensor([1.0, 2.0, 0.5, 1.5],
                                                           dtype=lib.float64)}, [R(5, 4),
                                                                                 Int(4, 5)]),
    ("NLLLoss", lambda lib: {"weight": lib.tensor([1.0, 2.0, 0.5, 1.5], dtype=lib.float64)},
     [R(5, 4), Int(4, 5)]),
    ("BCEWithLogitsLoss", lambda lib: {"pos_weight": lib.tensor([1.0, 2.0, 0.5, 1.5],
                                                                dtype=lib.float64)},
     [R(3, 4), Bin(3, 4)]),
    ("MultiMarginLoss", lambda lib: {"weight": lib.tensor([1.0, 2.0, 0.5, 1.5],
                                                          dtype=lib.float64)},
     [R(3, 4), Int(4, 3)]),
]


def _norm_repr(s: str) -> str:
    return s.replace("torch.", "ember.")


def _load(e_mod, t_mod) -> None:
    """Copy torch's state into ember's module (through NumPy)."""
    sd = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in t_mod.state_dict().items()}
    e_mod.load_state_dict(sd)


def _inputs(specs, seed):
    rng = np.random.default_rng(seed)
    e_in, t_in = [], []
    for s in specs:
        if isinstance(s, Lit):
            e_in.append(s.value)
            t_in.append(s.value)
            continue
        a = s.make(rng)
        e = ember.from_numpy(a.copy())
        t = torch.from_numpy(a.copy())
        if s.grad:
            e.requires_grad_()
            t.requires_grad_()
        e_in.append(e)
        t_in.append(t)
    return e_in, t_in


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def _check(e_mod, t_mod, specs, eval_mode, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_mod.double()
        e_mod.double()
    assert _norm_repr(repr(e_mod)) == _norm_repr(repr(t_mod))
    assert list(e_mod.state_dict().keys()) == list(t_mod.state_dict().keys())
    _load(e_mod, t_mod)
    if eval_mode:
        t_mod.eval()
        e_mod.eval()
    e_in, t_in = _inputs(specs, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_out = _first(t_mod(*t_in))
        e_out = _first(e_mod(*e_in))
    assert tuple(e_out.shape) == tuple(t_out.shape)
    assert str(e_out.dtype).replace("ember", "torch") == str(t_out.dtype)
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-9,
                               atol=1e-10)
    if t_out.requires_grad:
        g = np.random.default_rng(seed + 1).standard_normal(tuple(t_out.shape))
        (t_out * torch.from_numpy(g)).sum().backward()
        (e_out * ember.from_numpy(g)).sum().backward()
        for e, t in zip(e_in, t_in):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-9,
                                           atol=1e-10)
        for (en, ep), (tn, tp) in zip(e_mod.named_parameters(), t_mod.named_parameters()):
            assert en == tn
            if tp.grad is None:
                assert ep.grad is None
            else:
                np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-9,
                                           atol=1e-10, err_msg=en)
    for (en, eb), (tn, tb) in zip(e_mod.named_buffers(), t_mod.named_buffers()):
        assert en == tn
        np.testing.assert_allclose(eb.numpy(), tb.numpy(), rtol=1e-9, atol=1e-12, err_msg=en)
        assert str(eb.dtype).replace("ember", "torch") == str(tb.dtype)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_layer_matches_torch(case):
    name, args, kwargs, specs, eval_mode = case
    torch.manual_seed(0)
    t_mod = getattr(torch.nn, name)(*args, **kwargs)
    e_mod = getattr(ember.nn, name)(*args, **kwargs)
    _check(e_mod, t_mod, specs, eval_mode)


@pytest.mark.parametrize("case", WEIGHTED, ids=[c[0] for c in WEIGHTED])
def test_weighted_losses(case):
    name, kw, specs = case
    t_mod = getattr(torch.nn, name)(**kw(torch))
    e_mod = getattr(ember.nn, name)(**kw(ember))
    _check(e_mod, t_mod, specs, False)


def test_batchnorm_two_training_steps_then_eval():
    for momentum in (0.1, None):
        t_mod = torch.nn.BatchNorm1d(3, momentum=momentum).double()
        e_mod = ember.nn.BatchNorm1d(3, momentum=momentum).double()
        for seed in (1, 2, 3):
            e_in, t_in = _inputs([R(6, 3, scale=2.0, offset=seed)], seed)
            t_mod(*t_in)
            e_mod(*e_in)
        assert int(e_mod.num_batches_tracked) == 3
        for k in ("running_mean", "running_var"):
            np.testing.assert_allclose(getattr(e_mod, k).numpy(), getattr(t_mod, k).numpy(),
                                       rtol=1e-12)
        t_mod.eval()
        e_mod.eval()
        e_in, t_in = _inputs([R(4, 3)], 9)
        np.testing.assert_allclose(e_mod(*e_in).detach().numpy(),
                                   t_mod(*t_in).detach().numpy(), rtol=1e-10)


def test_conv_transpose_output_size():
    t_mod = torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1).double()
    e_mod = ember.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1).double()
    _load(e_mod, t_mod)
    e_in, t_in = _inputs([R(1, 3, 4, 4)], 0)
    np.testing.assert_allclose(e_mod(e_in[0], output_size=(8, 8)).detach().numpy(),
                               t_mod(t_in[0], output_size=(8, 8)).detach().numpy(), rtol=1e-10)
    with pytest.raises(ValueError) as ee:
        e_mod(e_in[0], output_size=(12, 12))
    with pytest.raises(ValueError) as te:
        t_mod(t_in[0], output_size=(12, 12))
    assert str(ee.value) == str(te.value).replace("torch.", "ember.")


def test_max_unpool_roundtrip():
    for nd, shape in ((1, (2, 3, 8)), (2, (2, 3, 4, 4)), (3, (1, 2, 4, 4, 4))):
        e_in, t_in = _inputs([R(*shape)], nd)
        tp = getattr(torch.nn, f"MaxPool{nd}d")(2, return_indices=True)
        ep = getattr(ember.nn, f"MaxPool{nd}d")(2, return_indices=True)
        tu = getattr(torch.nn, f"MaxUnpool{nd}d")(2)
        eu = getattr(ember.nn, f"MaxUnpool{nd}d")(2)
        assert repr(eu) == repr(tu)
        to, ti = tp(t_in[0])
        eo, ei = ep(e_in[0])
        np.testing.assert_array_equal(ei.numpy(), ti.numpy())
        np.testing.assert_allclose(eu(eo, ei).detach().numpy(), tu(to, ti).detach().numpy())


def test_fractional_max_pool_with_samples():
    samples = np.random.default_rng(3).uniform(0, 1, (2, 3, 2))
    t_mod = torch.nn.FractionalMaxPool2d(2, output_size=(3, 3), return_indices=True,
                                         _random_samples=torch.from_numpy(samples))
    e_mod = ember.nn.FractionalMaxPool2d(2, output_size=(3, 3), return_indices=True,
                                         _random_samples=ember.from_numpy(samples))
    assert repr(e_mod) == repr(t_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    e_in, t_in = _inputs([R(2, 3, 7, 7)], 4)
    (to, ti), (eo, ei) = t_mod(t_in[0]), e_mod(e_in[0])
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy())
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    with pytest.raises(ValueError, match="requires specifying either"):
        ember.nn.FractionalMaxPool3d(2)


def test_dropout_training_statistics():
    x = ember.ones(2000)
    d = ember.nn.Dropout(0.25)
    y = d(x)
    kept = (y != 0).float().mean().item()
    assert abs(kept - 0.75) < 0.05
    np.testing.assert_allclose(y[y != 0].numpy(), 1 / 0.75, rtol=1e-6)
    d.eval()
    assert (d(x) == x).all()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        ember.nn.Dropout(1.5)


def test_lazy_layers_materialize():
    lin = ember.nn.LazyLinear(3)
    assert repr(lin) == repr(torch.nn.LazyLinear(3))
    assert isinstance(lin.weight, ember.nn.UninitializedParameter)
    y = lin(ember.randn(2, 5))
    assert type(lin) is ember.nn.Linear and tuple(lin.weight.shape) == (3, 5)
    assert tuple(y.shape) == (2, 3)
    bound = 1 / math.sqrt(5)
    assert float(lin.bias.abs().max()) <= bound
    for nd in (1, 2, 3):
        conv = getattr(ember.nn, f"LazyConv{nd}d")(4, 3)
        tconv = getattr(torch.nn, f"LazyConv{nd}d")(4, 3)
        assert repr(conv) == repr(tconv)
        conv(ember.randn(1, 2, *([5] * nd)))
        assert type(conv) is getattr(ember.nn, f"Conv{nd}d")
        assert tuple(conv.weight.shape) == (4, 2) + (3,) * nd
        ct = getattr(ember.nn, f"LazyConvTranspose{nd}d")(4, 3)
        ct(ember.randn(1, 2, *([5] * nd)))
        assert tuple(ct.weight.shape) == (2, 4) + (3,) * nd
    # an uninitialized module loads a checkpoint's shapes
    src = ember.nn.Linear(6, 2)
    lazy = ember.nn.LazyLinear(2)
    lazy.load_state_dict(src.state_dict())
    assert tuple(lazy.weight.shape) == (2, 6)
    assert (lazy.weight == src.weight).all()


def test_embedding_from_pretrained_and_padding():
    w = np.arange(12.0).reshape(4, 3)
    te = torch.nn.Embedding.from_pretrained(torch.from_numpy(w), padding_idx=1)
    ee = ember.nn.Embedding.from_pretrained(ember.from_numpy(w), padding_idx=1)
    assert repr(ee) == repr(te)
    assert ee.weight.requires_grad is False
    ee2 = ember.nn.Embedding.from_pretrained(ember.from_numpy(w), freeze=False)
    assert ee2.weight.requires_grad is True
    e = ember.nn.Embedding(5, 2, padding_idx=3)
    assert (e.weight[3] == 0).all()
    out = e(ember.tensor([3, 1, 3]))
    out.sum().backward()
    assert (e.weight.grad[3] == 0).all() and (e.weight.grad[1] == 1).all()
    bag = ember.nn.EmbeddingBag.from_pretrained(ember.from_numpy(w), mode="sum")
    tbag = torch.nn.EmbeddingBag.from_pretrained(torch.from_numpy(w), mode="sum")
    assert repr(bag) == repr(tbag)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        ember.nn.Embedding(3, 2, padding_idx=3)


def _std_of(mod_fn, attr, n=3):
    vals = np.concatenate([getattr(mod_fn(), attr).detach().numpy().ravel() for _ in range(n)])
    return vals


@pytest.mark.parametrize("name,args,attr,bound", [
    ("Linear", (50, 40), "weight", 1 / math.sqrt(50)),
    ("Linear", (50, 40), "bias", 1 / math.sqrt(50)),
    ("Conv2d", (4, 30, 3), "weight", 1 / math.sqrt(36)),
    ("Conv2d", (4, 30, 3), "bias", 1 / math.sqrt(36)),
    ("ConvTranspose1d", (6, 20, 3), "weight", 1 / math.sqrt(60)),
    ("Bilinear", (8, 5, 30), "weight", 1 / math.sqrt(8)),
])
def test_reset_parameters_bounds(name, args, attr, bound):
    """The uniform bounds of PyTorch's reset_parameters: values fill [-b, b] and stay inside."""
    v = _std_of(lambda: getattr(ember.nn, name)(*args), attr)
    assert v.max() <= bound and v.min() >= -bound
    assert v.max() > 0.9 * bound and v.min() < -0.9 * bound
    # uniform on [-b, b]: std b / sqrt(3)
    assert abs(v.std() - bound / math.sqrt(3)) < 0.1 * bound


def test_norm_and_embedding_init():
    bn = ember.nn.BatchNorm2d(3)
    assert (bn.weight == 1).all() and (bn.bias == 0).all()
    assert (bn.running_var == 1).all() and bn.num_batches_tracked.dtype == ember.int64
    emb = ember.nn.Embedding(400, 50)
    w = emb.weight.detach().numpy()
    assert abs(w.std() - 1) < 0.05 and abs(w.mean()) < 0.05
    p = ember.nn.PReLU(3, init=0.3)
    assert np.allclose(p.weight.detach().numpy(), 0.3)


def test_layer_errors_match_torch():
    cases = [
        (lambda m: m.Conv2d(3, 4, 3, groups=2), ValueError),
        (lambda m: m.Conv2d(4, 4, 3, padding="same", stride=2), ValueError),
        (lambda m: m.Conv2d(4, 4, 3, padding="full"), ValueError),
        (lambda m: m.Conv2d(4, 4, 3, padding_mode="mirror"), ValueError),
        (lambda m: m.ConvTranspose2d(4, 4, 3, padding_mode="reflect"), ValueError),
        (lambda m: m.GroupNorm(3, 4), ValueError),
        (lambda m: m.MultiMarginLoss(p=3), ValueError),
        (lambda m: m.TripletMarginLoss(margin=0), ValueError),
        (lambda m: m.Unflatten(1, 3), TypeError),
        (lambda m: m.Hardtanh(1.0, 0.0), AssertionError),
        (lambda m: m.BatchNorm2d(3)(m.Identity()(ember_or_torch(m).zeros(2, 3))), ValueError),
        (lambda m: m.Softmax2d()(ember_or_torch(m).zeros(2, 3)), ValueError),
        (lambda m: m.CircularPad2d(1)(ember_or_torch(m).zeros(2, 3)), ValueError),
        (lambda m: m.InstanceNorm1d(3, affine=True)(ember_or_torch(m).zeros(2, 4, 5)),
         ValueError),
    ]
    for fn, exc in cases:
        with pytest.raises(exc) as te:
            fn(torch.nn)
        with pytest.raises(exc) as ee:
            fn(ember.nn)
        if "{" in str(te.value):   # a set printed in hash order: compare up to it
            assert str(ee.value).split("{")[0] == str(te.value).split("{")[0]
        else:
            assert str(ee.value) == str(te.value), (str(ee.value), str(te.value))


def ember_or_torch(nn_mod):
    return torch if nn_mod is torch.nn else ember


def test_clip_grad_and_vector_utils():
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    grads = [rng.standard_normal((3, 4)) * 3, rng.standard_normal(5) * 3]
    for norm_type in (2.0, 1.0, float("inf")):
        ep = [ember.nn.Parameter(ember.from_numpy(a.copy())) for a in arrays]
        tp = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in arrays]
        for p, g in zip(ep, grads):
            p.grad = ember.from_numpy(g.copy())
        for p, g in zip(tp, grads):
            p.grad = torch.from_numpy(g.copy())
        en = ember.nn.utils.clip_grad_norm_(ep, 1.5, norm_type)
        tn = torch.nn.utils.clip_grad_norm_(tp, 1.5, norm_type)
        np.testing.assert_allclose(en.numpy(), tn.numpy(), rtol=1e-12)
        for a, b in zip(ep, tp):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)
    ember.nn.utils.clip_grad_value_(ep, 0.1)
    torch.nn.utils.clip_grad_value_(tp, 0.1)
    for a, b in zip(ep, tp):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())
    v = ember.nn.utils.parameters_to_vector(ep)
    assert tuple(v.shape) == (17,)
    ember.nn.utils.vector_to_parameters(v * 2, ep)
    np.testing.assert_allclose(ep[1].detach().numpy(), arrays[1] * 2)
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        ember.nn.utils.vector_to_parameters([1.0], ep)
    p = ember.nn.Parameter(ember.ones(2))
    p.grad = ember.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        ember.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
