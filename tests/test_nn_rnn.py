"""nn.RNN / LSTM / GRU and their cells, and nn.utils.rnn, against PyTorch: from identical
weights (torch's state_dict copied into ember) and identical inputs, the outputs, final states
and the gradients of every input and parameter, over layers, directions, batch_first,
proj_size, unbatched inputs, initial states and packed sequences; forward-mode tangents and
double backward; state_dict keys, reprs, initialisation bounds and error messages."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfwAD
import torch.nn.utils.rnn as TRU

import ember
import ember.autograd.forward_ad as efwAD
import ember.nn.utils.rnn as ERU
from helpers import assert_same, raises_same

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape)


def make(name, *args, **kwargs):
    """The same module in both libraries, ember's loaded from torch's state_dict."""
    tm = getattr(torch.nn, name)(*args, dtype=torch.float64, **kwargs)
    em = getattr(ember.nn, name)(*args, dtype=ember.float64, **kwargs)
    sd = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    em.load_state_dict(sd)
    return em, tm


def leaf(a):
    return (ember.from_numpy(a.copy()).requires_grad_(),
            torch.from_numpy(a.copy()).requires_grad_())


def flat(x):
    if isinstance(x, (tuple, list)):
        return [leaf_ for i in x for leaf_ in flat(i)]
    return [x]


def compare(em, tm, e_out, t_out, e_inputs, t_inputs):
    """Outputs equal; then one random cotangent per output, and every input and parameter
    gradient equal."""
    eo, to = flat(e_out), flat(t_out)
    assert len(eo) == len(to)
    for a, b in zip(eo, to):
        assert_same(a, b)
    cots = [rand(*b.shape) for b in to]
    e_loss = sum((a * ember.from_numpy(c)).sum() for a, c in zip(eo, cots))
    t_loss = sum((b * torch.from_numpy(c)).sum() for b, c in zip(to, cots))
    e_loss.backward()
    t_loss.backward()
    for a, b in zip(e_inputs, t_inputs):
        assert_same(a.grad, b.grad)
    tp = dict(tm.named_parameters())
    ep = dict(em.named_parameters())
    assert list(ep) == list(tp)
    for k in tp:
        assert tp[k].grad is not None
        assert_same(ep[k].grad, tp[k].grad)


CONFIGS = [
    dict(num_layers=1),
    dict(num_layers=2, bidirectional=True),
    dict(num_layers=2, batch_first=True, bias=False),
    dict(num_layers=3, bidirectional=True, batch_first=True),
]


@pytest.mark.parametrize("name,extra", [("RNN", {}), ("RNN", {"nonlinearity": "relu"}),
                                        ("GRU", {}), ("LSTM", {}), ("LSTM", {"proj_size": 2})])
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
@pytest.mark.parametrize("with_h0", [False, True])
def test_forward_backward(name, extra, cfg, with_h0):
    kw = dict(cfg, **extra)
    em, tm = make(name, 3, 4, **kw)
    T, B = 5, 2
    shape = (B, T, 3) if kw.get("batch_first") else (T, B, 3)
    ex, tx = leaf(rand(*shape))
    e_in, t_in = [ex], [tx]
    e_args, t_args = [ex], [tx]
    if with_h0:
        n = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
        hsize = kw.get("proj_size") or 4
        eh, th = leaf(rand(n, B, hsize))
        e_in.append(eh)
        t_in.append(th)
        if name == "LSTM":
            ec, tc = leaf(rand(n, B, 4))
            e_in.append(ec)
            t_in.append(tc)
            e_args.append((eh, ec))
            t_args.append((th, tc))
        else:
            e_args.append(eh)
            t_args.append(th)
    compare(em, tm, em(*e_args), tm(*t_args), e_in, t_in)


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched(name, batch_first):
    kw = {"proj_size": 2} if name == "LSTM" else {}
    em, tm = make(name, 3, 4, num_layers=2, bidirectional=True, batch_first=batch_first, **kw)
    ex, tx = leaf(rand(6, 3))
    eh, th = leaf(rand(4, 2 if name == "LSTM" else 4))
    if name == "LSTM":
        ec, tc = leaf(rand(4, 4))
        compare(em, tm, em(ex, (eh, ec)), tm(tx, (th, tc)), [ex, eh, ec], [tx, th, tc])
    else:
        compare(em, tm, em(ex, eh), tm(tx, th), [ex, eh], [tx, th])
    e_out = em(ex)
    t_out = tm(tx)
    assert_same(list(flat(e_out)), list(flat(t_out)))


def test_dropout_between_layers():
    # p = 1 is deterministic: every layer after the first sees zeros
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        em, tm = make("LSTM", 3, 4, num_layers=2, dropout=1.0)
    ex, tx = leaf(rand(4, 2, 3))
    compare(em, tm, em(ex), tm(tx), [ex], [tx])
    # eval mode: no dropout
    em2, tm2 = make("GRU", 3, 4, num_layers=3, dropout=0.5)
    em2.eval()
    tm2.eval()
    ex, tx = leaf(rand(4, 2, 3))
    compare(em2, tm2, em2(ex), tm2(tx), [ex], [tx])
    # training mode with 0 < p < 1 drops something
    em2.train()
    ember.manual_seed(0)
    out_train = em2(ex)[0]
    em2.eval()
    out_eval = em2(ex)[0]
    assert not np.allclose(out_train.detach().numpy(), out_eval.detach().numpy())


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("sorted_", [True, False])
def test_packed_sequence_input(name, sorted_):
    kw = {"proj_size": 3} if name == "LSTM" else {}
    em, tm = make(name, 3, 5, num_layers=2, bidirectional=True, **kw)
    lengths = [5, 4, 2, 2, 1] if sorted_ else [2, 5, 1, 4, 2]
    ex, tx = leaf(rand(5, 5, 3))
    ep = ERU.pack_padded_sequence(ex, lengths, enforce_sorted=sorted_)
    tp = TRU.pack_padded_sequence(tx, lengths, enforce_sorted=sorted_)
    assert_same(ep.data, tp.data)
    assert ep.batch_sizes.tolist() == tp.batch_sizes.tolist()
    e_in, t_in = [ex], [tx]
    e_args, t_args = [ep], [tp]
    hsize = 3 if name == "LSTM" else 5
    eh, th = leaf(rand(4, 5, hsize))
    e_in.append(eh)
    t_in.append(th)
    if name == "LSTM":
        ec, tc = leaf(rand(4, 5, 5))
        e_in.append(ec)
        t_in.append(tc)
        e_args.append((eh, ec))
        t_args.append((th, tc))
    else:
        e_args.append(eh)
        t_args.append(th)
    e_out, e_h = em(*e_args)
    t_out, t_h = tm(*t_args)
    assert isinstance(e_out, ERU.PackedSequence)
    e_pad, e_len = ERU.pad_packed_sequence(e_out, batch_first=True, padding_value=-2.0)
    t_pad, t_len = TRU.pad_packed_sequence(t_out, batch_first=True, padding_value=-2.0)
    assert e_len.tolist() == t_len.tolist()
    compare(em, tm, (e_pad, e_h), (t_pad, t_h), e_in, t_in)


def test_pack_pad_utilities():
    seqs = [rand(4, 2), rand(2, 2), rand(3, 2)]
    es = [ember.from_numpy(s.copy()).requires_grad_() for s in seqs]
    ts = [torch.from_numpy(s.copy()).requires_grad_() for s in seqs]
    for bf in (False, True):
        for side in ("right", "left"):
            assert_same(ERU.pad_sequence(es, bf, 1.5, side), TRU.pad_sequence(ts, bf, 1.5, side))
    ep = ERU.pack_sequence(es, enforce_sorted=False)
    tp = TRU.pack_sequence(ts, enforce_sorted=False)
    assert_same(ep.data, tp.data)
    assert ep.sorted_indices.tolist() == tp.sorted_indices.tolist()
    assert ep.unsorted_indices.tolist() == tp.unsorted_indices.tolist()
    for bf in (False, True):
        e_pad, e_len = ERU.pad_packed_sequence(ep, bf, 0.5, total_length=6)
        t_pad, t_len = TRU.pad_packed_sequence(tp, bf, 0.5, total_length=6)
        assert_same(e_pad, t_pad)
        assert e_len.tolist() == t_len.tolist()
    cot = rand(6, 3, 2)
    (ERU.pad_packed_sequence(ep, total_length=6)[0] * ember.from_numpy(cot)).sum().backward()
    (TRU.pad_packed_sequence(tp, total_length=6)[0] * torch.from_numpy(cot)).sum().backward()
    for a, b in zip(es, ts):
        assert_same(a.grad, b.grad)
    for a, b in zip(ERU.unpack_sequence(ep), TRU.unpack_sequence(tp)):
        assert_same(a, b)
    e_pad, t_pad = ERU.pad_sequence(es, True), TRU.pad_sequence(ts, True)
    lens = [4, 2, 3]
    for a, b in zip(ERU.unpad_sequence(e_pad, ember.tensor(lens), True),
                    TRU.unpad_sequence(t_pad, torch.tensor(lens), True)):
        assert_same(a, b)
    perm = [2, 0, 3, 1]
    assert (ERU.invert_permutation(ember.tensor(perm)).tolist()
            == TRU.invert_permutation(torch.tensor(perm)).tolist())
    assert ERU.invert_permutation(None) is None
    d = ERU.PackedSequence(ember.ones(3, 2), ember.tensor([2, 1]))
    assert d.unsorted_indices is None and d.double().data.dtype is ember.float64


def test_pack_errors():
    x = rand(4, 3, 2)
    ex, tx = ember.from_numpy(x), torch.from_numpy(x)
    for lengths in ([2, 3, 1], [3, 2, 0], [3, 2]):
        raises_same(lambda: ERU.pack_padded_sequence(ex, lengths),
                    lambda: TRU.pack_padded_sequence(tx, lengths))
    p_e = ERU.pack_padded_sequence(ex, [3, 2, 1])
    p_t = TRU.pack_padded_sequence(tx, [3, 2, 1])
    raises_same(lambda: ERU.pad_packed_sequence(p_e, total_length=2),
                lambda: TRU.pad_packed_sequence(p_t, total_length=2))
    raises_same(lambda: ERU.pad_sequence([]), lambda: TRU.pad_sequence([]))
    raises_same(lambda: ERU.pad_sequence(5), lambda: TRU.pad_sequence(5))
    raises_same(lambda: ERU.pad_sequence([ex[0]], padding_side="mid"),
                lambda: TRU.pad_sequence([tx[0]], padding_side="mid"))


@pytest.mark.parametrize("name,kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                     ("RNNCell", {"bias": False}), ("LSTMCell", {}),
                                     ("GRUCell", {}), ("GRUCell", {"bias": False})])
def test_cells(name, kw):
    em, tm = make(name, 3, 4, **kw)
    for batched in (True, False):
        xs = (2, 3) if batched else (3,)
        hs = (2, 4) if batched else (4,)
        ex, tx = leaf(rand(*xs))
        eh, th = leaf(rand(*hs))
        if name == "LSTMCell":
            ec, tc = leaf(rand(*hs))
            compare(em, tm, em(ex, (eh, ec)), tm(tx, (th, tc)), [ex, eh, ec], [tx, th, tc])
        else:
            compare(em, tm, em(ex, eh), tm(tx, th), [ex, eh], [tx, th])
        em.zero_grad()
        tm.zero_grad()
        assert_same(flat(em(ex)), flat(tm(tx)))


def test_lstm_unrolled_from_cells():
    # A 1-layer LSTM equals its cell applied step by step (shared weights under other names)
    em, _ = make("LSTM", 3, 4)
    cell = ember.nn.LSTMCell(3, 4, dtype=ember.float64)
    cell.load_state_dict({k[:-3]: v for k, v in em.state_dict().items()})
    x = ember.from_numpy(rand(5, 2, 3))
    out, (h, c) = em(x)
    hc = None
    for t in range(5):
        hc = cell(x[t], hc)
        assert np.allclose(hc[0].detach().numpy(), out[t].detach().numpy(), atol=1e-12)
    assert np.allclose(hc[1].detach().numpy(), c[0].detach().numpy(), atol=1e-12)


def test_double_backward_and_forward_ad():
    em, tm = make("LSTM", 3, 4, num_layers=2, bidirectional=True, proj_size=2)
    ex, tx = leaf(rand(4, 2, 3))
    (ge,) = ember.autograd.grad((em(ex)[0] ** 2).sum(), ex, create_graph=True)
    (gt,) = torch.autograd.grad((tm(tx)[0] ** 2).sum(), tx, create_graph=True)
    assert_same(ge, gt)
    (ge ** 2).sum().backward()
    (gt ** 2).sum().backward()
    assert_same(ex.grad, tx.grad)
    assert_same(em.weight_hh_l1_reverse.grad, tm.weight_hh_l1_reverse.grad)
    assert_same(em.weight_hr_l0.grad, tm.weight_hr_l0.grad)

    em, tm = make("GRU", 3, 4, num_layers=2, bidirectional=True, batch_first=True)
    x, v = rand(2, 4, 3), rand(2, 4, 3)
    with efwAD.dual_level():
        d = efwAD.make_dual(ember.from_numpy(x), ember.from_numpy(v))
        out, h = em(d)
        e_tan = (efwAD.unpack_dual(out).tangent, efwAD.unpack_dual(h).tangent)
    with tfwAD.dual_level():
        d = tfwAD.make_dual(torch.from_numpy(x), torch.from_numpy(v))
        out, h = tm(d)
        t_tan = (tfwAD.unpack_dual(out).tangent, tfwAD.unpack_dual(h).tangent)
    assert_same(e_tan, t_tan)


@pytest.mark.parametrize("name,kw", [
    ("LSTM", dict(num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True,
                  proj_size=2)),
    ("LSTM", {}), ("GRU", dict(num_layers=3)), ("RNN", dict(nonlinearity="relu")),
    ("RNNCell", dict(nonlinearity="relu", bias=False)), ("RNNCell", {}), ("LSTMCell", {}),
    ("GRUCell", dict(bias=False))])
def test_repr_state_dict_init(name, kw):
    tm = getattr(torch.nn, name)(3, 4, **kw)
    em = getattr(ember.nn, name)(3, 4, **kw)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    for (ek, ev), (tk, tv) in zip(em.state_dict().items(), tm.state_dict().items()):
        assert tuple(ev.shape) == tuple(tv.shape), ek
        assert ev.dtype is ember.float32
        assert float(ev.abs().max()) <= 1 / math.sqrt(4) and float(ev.abs().max()) > 0.1
    if name in ("LSTM", "GRU", "RNN"):
        assert [[tuple(p.shape) for p in ws] for ws in em.all_weights] == \
            [[tuple(p.shape) for p in ws] for ws in tm.all_weights]
        assert em._flat_weights_names == tm._flat_weights_names


def test_replaced_parameter_is_used():
    em, tm = make("GRU", 3, 4)
    w = rand(12, 4)
    em.weight_hh_l0 = ember.nn.parameter.Parameter(ember.from_numpy(w.copy()))
    tm.weight_hh_l0 = torch.nn.Parameter(torch.from_numpy(w.copy()))
    ex, tx = leaf(rand(3, 2, 3))
    compare(em, tm, em(ex), tm(tx), [ex], [tx])
    assert em._flat_weights[1] is em.weight_hh_l0


def _errors(lib, mods):
    nn = mods
    f64 = lib.float64

    def r(*s):
        return lib.zeros(*s, dtype=f64)

    lstm = nn.LSTM(4, 3, 2, dtype=f64)
    gru = nn.GRU(4, 3, dtype=f64)
    rnn = nn.RNN(4, 3, dtype=f64)
    cell = nn.RNNCell(4, 3, dtype=f64)
    lcell = nn.LSTMCell(4, 3, dtype=f64)
    gcell = nn.GRUCell(4, 3, dtype=f64)
    return [
        lambda: lstm(r(5, 2, 6)),
        lambda: lstm(r(5, 2, 4), (r(2, 2, 3), r(2, 3, 3))),
        lambda: lstm(r(5, 2, 4), (r(1, 2, 3), r(2, 2, 3))),
        lambda: lstm(r(5, 2, 4, 1)),
        lambda: lstm(r(5, 4), (r(2, 2, 3), r(2, 3, 3))),
        lambda: lstm(r(5, 2, 4), (r(2, 3), r(2, 3))),
        lambda: lstm(r(5, 2, 4).float()),
        lambda: lstm(r(0, 2, 4)),
        lambda: gru(r(5, 2, 4), r(1, 3, 3)),
        lambda: gru(r(5, 2, 4), r(1, 3)),
        lambda: gru(r(5)),
        lambda: rnn(r(5, 4), r(1, 1, 3)),
        lambda: rnn(r(5, 2, 4, 1)),
        lambda: rnn(r(5, 2, 4), r(2, 2, 3)),
        lambda: cell(r(2, 5)),
        lambda: cell(r(2, 4), r(2, 5)),
        lambda: cell(r(2, 4), r(3, 3)),
        lambda: cell(r(2, 2, 4)),
        lambda: cell(r(2, 4), r(1, 2, 3)),
        lambda: lcell(r(2, 4), (r(2, 3), r(2, 5))),
        lambda: lcell(r(2, 4), (r(2, 3), r(2, 2, 3))),
        lambda: gcell(r(2, 4), r(3)),
        lambda: gcell(r(4), r(2, 3)),
        lambda: gcell(r(1, 2, 4)),
        lambda: nn.RNNCell(4, 3, nonlinearity="foo")(r(4)),
        lambda: nn.RNN(4, 3, nonlinearity="x"),
        lambda: nn.GRU(4, 3, proj_size=2),
        lambda: nn.RNN(4, 3, proj_size=2),
        lambda: nn.LSTM(4, 3, proj_size=3),
        lambda: nn.LSTM(4, 3, proj_size=-1),
        lambda: nn.LSTM(4, 3, dropout=2),
        lambda: nn.LSTM(4, 3, dropout=True),
        lambda: nn.LSTM(4, 3, bias=1),
        lambda: nn.LSTM(4, 3, batch_first=None),
        lambda: nn.LSTM(4.0, 3),
        lambda: nn.LSTM(0, 3),
        lambda: nn.LSTM(4, 3.0),
        lambda: nn.LSTM(4, 0),
        lambda: nn.LSTM(4, 3, 0),
    ]


def test_errors():
    for fe, ft in zip(_errors(ember, ember.nn), _errors(torch, torch.nn), strict=True):
        raises_same(fe, ft)
    with pytest.warns(UserWarning, match="dropout option adds dropout after all but last"):
        ember.nn.LSTM(4, 3, dropout=0.5)


def test_empty_batch_and_module_conversion():
    em, tm = make("LSTM", 3, 4, num_layers=2)
    eo, (eh, ec) = em(ember.zeros(4, 0, 3, dtype=ember.float64))
    to, (th, tc) = tm(torch.zeros(4, 0, 3, dtype=torch.float64))
    assert_same((eo, eh, ec), (to, th, tc))
    em.float()
    tm.float()
    x = rand(3, 2, 3).astype(np.float32)
    assert_same(em(ember.from_numpy(x))[0], tm(torch.from_numpy(x))[0])


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_packed_without_state_and_state_dict_to_torch(name):
    # ember's own initial weights, loaded into torch, give torch's results
    em = getattr(ember.nn, name)(3, 4, num_layers=2, bidirectional=True, dtype=ember.float64)
    tm = getattr(torch.nn, name)(3, 4, num_layers=2, bidirectional=True, dtype=torch.float64)
    tm.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                        for k, v in em.state_dict().items()})
    seqs = [rand(2, 3), rand(5, 3), rand(3, 3)]
    ep = ERU.pack_sequence([ember.from_numpy(s) for s in seqs], enforce_sorted=False)
    tp = TRU.pack_sequence([torch.from_numpy(s) for s in seqs], enforce_sorted=False)
    e_out, e_h = em(ep)
    t_out, t_h = tm(tp)
    assert_same(e_out.data, t_out.data)
    assert e_out.unsorted_indices.tolist() == t_out.unsorted_indices.tolist()
    assert_same(flat(e_h), flat(t_h))
