"""Whole training runs in ember and PyTorch side by side: the same model (identical initial
weights copied from torch into ember), the same optimizer, scheduler and NumPy batches, and the
loss must stay equal for 200 steps. Also checkpoints moved mid-run between the two libraries."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch

import ember

STEPS = 200
RTOL = 1e-4


def _to_ember_state(sd) -> dict:
    return {k: ember.tensor(v.detach().numpy().copy()) for k, v in sd.items()}


def _twins(build):
    """The same model in both libraries: torch's initial weights copied into ember."""
    torch.manual_seed(0)
    tm = build(torch)
    em = build(ember)
    assert list(em.state_dict()) == list(tm.state_dict())
    em.load_state_dict(_to_ember_state(tm.state_dict()))
    return em, tm


def _step(M, model, opt, x, y, loss_fn, clip=None, sched=None) -> float:
    opt.zero_grad()
    loss = loss_fn(M, model(M.from_numpy(x)), M.from_numpy(y))
    loss.backward()
    if clip is not None:
        M.nn.utils.clip_grad_norm_(model.parameters(), clip)
    opt.step()
    if sched is not None:
        sched.step()
    return loss.item()


def _train(M, model, opt, batches, loss_fn, clip=None, sched=None, steps=STEPS) -> list:
    model.train()
    return [_step(M, model, opt, *batches(i), loss_fn, clip, sched) for i in range(steps)]


def _assert_losses(le, lt, rtol=RTOL) -> None:
    le, lt = np.array(le), np.array(lt)
    assert np.isfinite(lt).all()
    np.testing.assert_allclose(le, lt, rtol=rtol, atol=0)
    # the run must actually train, or equal losses prove little
    assert lt[-10:].mean() < 0.9 * lt[:10].mean()


def _assert_params(em, tm, rtol=1e-3, atol=1e-5, skip=()) -> None:
    te = tm.state_dict()
    for k, v in em.state_dict().items():
        a, b = v.numpy(), te[k].numpy()
        for name, index in skip:
            if k.endswith(name):
                a, b = np.delete(a, index), np.delete(b, index)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=k)


def _batches(shape_x, make_y, n=16, seed=0):
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(shape_x).astype(np.float32) for _ in range(n)]
    ys = [make_y(rng, x) for x in xs]
    return lambda i: (xs[i % n], ys[i % n])


def _ce(M, out, y):
    return M.nn.functional.cross_entropy(out, y)


def _mse(M, out, y):
    return M.nn.functional.mse_loss(out, y)


# ---- (a) MLP + SGD with momentum ---------------------------------------------------------------

def _mlp(M):
    return M.nn.Sequential(M.nn.Linear(10, 32), M.nn.Tanh(), M.nn.Linear(32, 32), M.nn.ReLU(),
                           M.nn.Dropout(0.0), M.nn.Linear(32, 3))


def _noisy(rng, y, k):
    # a quarter of the labels random: the loss stays well above zero, where float32 rounding
    # (summation order in matmuls differs between the libraries) would dominate its relative error
    flip = rng.random(y.shape) < 0.25
    return np.where(flip, rng.integers(0, k, y.shape), y).astype(np.int64)


def _class_y(rng, x):
    return _noisy(rng, x[:, :3].argmax(1), 3)


@pytest.mark.parametrize("kw", [dict(momentum=0.9, nesterov=True),
                                dict(momentum=0.9, weight_decay=1e-2, dampening=0.1)])
def test_mlp_sgd_momentum(kw):
    em, tm = _twins(_mlp)
    batches = _batches((8, 10), _class_y)
    oe = ember.optim.SGD(em.parameters(), lr=0.05, **kw)
    ot = torch.optim.SGD(tm.parameters(), lr=0.05, **kw)
    _assert_losses(_train(ember, em, oe, batches, _ce), _train(torch, tm, ot, batches, _ce))
    _assert_params(em, tm)


# ---- (b) CNN with BatchNorm2d, AdamW and a scheduler -------------------------------------------

def _cnn(M):
    nn = M.nn
    # no conv bias before BatchNorm (as users write it): its true gradient is zero, so Adam
    # would turn float32 rounding noise into full-size steps that differ between the libraries
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, bias=False), nn.BatchNorm2d(6),
                         nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3))


def _img_y(rng, x):
    return _noisy(rng, x.reshape(x.shape[0], -1)[:, :3].argmax(1), 3)


@pytest.mark.parametrize("sched", ["step", "cosine"])
def test_cnn_batchnorm_adamw_scheduler(sched):
    em, tm = _twins(_cnn)
    batches = _batches((6, 1, 8, 8), _img_y)

    def make(M, model):
        opt = M.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)
        if sched == "step":
            return opt, M.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.5)
        return opt, M.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS, eta_min=1e-4)

    oe, se = make(ember, em)
    ot, st = make(torch, tm)
    le = _train(ember, em, oe, batches, _ce, sched=se)
    lt = _train(torch, tm, ot, batches, _ce, sched=st)
    _assert_losses(le, lt)
    assert oe.param_groups[0]["lr"] == pytest.approx(ot.param_groups[0]["lr"], rel=1e-12)
    _assert_params(em, tm)
    em.eval()
    tm.eval()
    x = batches(3)[0]
    with ember.no_grad():
        ye = em(ember.from_numpy(x))
    with torch.no_grad():
        yt = tm(torch.from_numpy(x))
    np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=1e-3, atol=1e-4)
    assert int(em[1].num_batches_tracked) == STEPS


# ---- (c) Embedding -> LSTM -> Linear with Adam -------------------------------------------------

class _Tagger:
    @staticmethod
    def build(M):
        class Tagger(M.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = M.nn.Embedding(20, 8)
                self.lstm = M.nn.LSTM(8, 16, num_layers=2, batch_first=True)
                self.out = M.nn.Linear(16, 5)

            def forward(self, tokens):
                h, _ = self.lstm(self.emb(tokens))
                return self.out(h[:, -1])

        return Tagger()


def _seq_batches(n=16, seed=1):
    rng = np.random.default_rng(seed)
    xs = [rng.integers(0, 20, (4, 7)).astype(np.int64) for _ in range(n)]
    ys = [(x.sum(1) % 5).astype(np.int64) for x in xs]
    return lambda i: (xs[i % n], ys[i % n])


def test_lstm_adam():
    # float64: in float32 the two runs agree to 1e-6 for 120 steps, then the recurrent network's
    # sensitivity amplifies the last-bit differences of summation order (matmul blocking differs)
    # to 3e-4 by step 190; in float64 they agree to 1e-13 over all 200 steps.
    em, tm = _twins(_Tagger.build)
    em.double()
    tm.double()
    batches = _seq_batches()
    oe = ember.optim.Adam(em.parameters(), lr=1e-2)
    ot = torch.optim.Adam(tm.parameters(), lr=1e-2)
    le = _train(ember, em, oe, batches, _ce)
    lt = _train(torch, tm, ot, batches, _ce)
    _assert_losses(le, lt, rtol=1e-9)
    assert em.lstm.weight_hh_l1.dtype is ember.float64
    _assert_params(em, tm, rtol=1e-9, atol=1e-12)


# ---- (d) TransformerEncoder with a key padding mask --------------------------------------------

def _encoder(M):
    class Enc(M.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = M.nn.Embedding(20, 16)
            layer = M.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0,
                                                 batch_first=True)
            self.enc = M.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = M.nn.Linear(16, 5)

        def forward(self, tokens):
            pad = tokens == 0
            h = self.enc(self.emb(tokens), src_key_padding_mask=pad)
            keep = (~pad).unsqueeze(-1).to(h.dtype)
            return self.head((h * keep).sum(1) / keep.sum(1))

    return Enc()


def _padded_batches(n=16, seed=2):
    rng = np.random.default_rng(seed)
    xs = []
    for _ in range(n):
        x = rng.integers(1, 20, (4, 6)).astype(np.int64)
        for row, length in enumerate(rng.integers(2, 7, 4)):
            x[row, length:] = 0
        xs.append(x)
    ys = [(x[:, 0] % 5).astype(np.int64) for x in xs]
    return lambda i: (xs[i % n], ys[i % n])


def test_transformer_encoder_padding_mask_adam():
    em, tm = _twins(_encoder)
    batches = _padded_batches()
    oe = ember.optim.Adam(em.parameters(), lr=3e-3)
    ot = torch.optim.Adam(tm.parameters(), lr=3e-3)
    _assert_losses(_train(ember, em, oe, batches, _ce), _train(torch, tm, ot, batches, _ce))
    # the key projection's bias cannot change the softmax, its true gradient is zero: Adam
    # scales the rounding noise there up to full steps, so those entries are not comparable
    _assert_params(em, tm, skip=[("in_proj_bias", slice(16, 32))])


# ---- (e) gradient clipping in the loop ---------------------------------------------------------

def test_clip_grad_norm_in_loop():
    em, tm = _twins(_mlp)
    batches = _batches((8, 10), _class_y)
    oe = ember.optim.SGD(em.parameters(), lr=0.5, momentum=0.5)
    ot = torch.optim.SGD(tm.parameters(), lr=0.5, momentum=0.5)
    # max_norm small enough that clipping is active on most steps
    le = _train(ember, em, oe, batches, _ce, clip=0.25)
    lt = _train(torch, tm, ot, batches, _ce, clip=0.25)
    _assert_losses(le, lt)
    _assert_params(em, tm)
    x, y = batches(0)
    for M, model in ((ember, em), (torch, tm)):
        model.zero_grad()
        _ce(M, model(M.from_numpy(x)), M.from_numpy(y)).backward()
    ge = ember.nn.utils.clip_grad_norm_(em.parameters(), 0.25)
    gt = torch.nn.utils.clip_grad_norm_(tm.parameters(), 0.25)
    assert float(ge) == pytest.approx(float(gt), rel=1e-3)
    assert float(gt) > 0.25
    for pe, pt in zip(em.parameters(), tm.parameters()):
        np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy(), rtol=1e-3, atol=1e-6)


# ---- (f) checkpoints moved between the libraries mid-run ---------------------------------------

def _ckpt_setup(M, model):
    opt = M.optim.Adam(model.parameters(), lr=1e-2, betas=(0.8, 0.95), weight_decay=1e-3)
    sched = M.optim.lr_scheduler.StepLR(opt, step_size=20, gamma=0.7)
    return opt, sched


def _save(M, model, opt, sched) -> io.BytesIO:
    buf = io.BytesIO()
    M.save({"model": model.state_dict(), "optim": opt.state_dict(),
            "sched": sched.state_dict(), "step": 100}, buf)
    buf.seek(0)
    return buf


def _resume(M, build, buf, **load_kw):
    ckpt = M.load(buf, **load_kw)
    model = build(M)
    model.load_state_dict(ckpt["model"])
    opt, sched = _ckpt_setup(M, model)
    opt.load_state_dict(ckpt["optim"])
    sched.load_state_dict(ckpt["sched"])
    assert ckpt["step"] == 100
    return model, opt, sched


@pytest.mark.parametrize("direction", ["ember_to_torch", "torch_to_ember"])
def test_checkpoint_resume_across_libraries(direction):
    half = STEPS // 2
    em, tm = _twins(_cnn)
    batches = _batches((6, 1, 8, 8), _img_y)
    oe, se = _ckpt_setup(ember, em)
    ot, st = _ckpt_setup(torch, tm)
    le = _train(ember, em, oe, batches, _ce, sched=se, steps=half)
    lt = _train(torch, tm, ot, batches, _ce, sched=st, steps=half)
    _assert_losses(le, lt)
    shifted = lambda i: batches(i + half)  # noqa: E731
    if direction == "ember_to_torch":
        src = (ember, em, oe, se)
        cont = (torch, tm, ot, st)
        m2, o2, s2 = _resume(torch, _cnn, _save(ember, em, oe, se), weights_only=True)
        resumed = (torch, m2, o2, s2)
    else:
        src = (torch, tm, ot, st)
        cont = (ember, em, oe, se)
        m2, o2, s2 = _resume(ember, _cnn, _save(torch, tm, ot, st))
        resumed = (ember, m2, o2, s2)
    # the resumed copy (in the other library) continues exactly as the source run does
    l_src = _train(src[0], src[1], src[2], shifted, _ce, sched=src[3], steps=half)
    l_res = _train(resumed[0], resumed[1], resumed[2], shifted, _ce, sched=resumed[3],
                   steps=half)
    l_cont = _train(cont[0], cont[1], cont[2], shifted, _ce, sched=cont[3], steps=half)
    np.testing.assert_allclose(l_res, l_src, rtol=RTOL)
    np.testing.assert_allclose(l_res, l_cont, rtol=RTOL)
    assert o2.param_groups[0]["lr"] == pytest.approx(src[2].param_groups[0]["lr"], rel=1e-12)
    assert s2.last_epoch == src[3].last_epoch == STEPS


# ---- more of what users train: packed bidirectional GRU, a weight-tied Transformer LM ----------

def _packed_gru(M):
    class G(M.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = M.nn.Embedding(20, 6, padding_idx=0)
            self.rnn = M.nn.GRU(6, 8, num_layers=2, batch_first=True, bidirectional=True)
            self.out = M.nn.Linear(16 + 16, 5)

        def forward(self, tokens):
            lengths = (tokens != 0).sum(1)
            packed = M.nn.utils.rnn.pack_padded_sequence(self.emb(tokens), lengths,
                                                         batch_first=True, enforce_sorted=False)
            out, h = self.rnn(packed)
            out, _ = M.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
            return self.out(M.cat([h[-2], h[-1], out.mean(1)], 1))

    return G()


def test_packed_bidirectional_gru_adam():
    em, tm = _twins(_packed_gru)
    batches = _padded_batches()
    oe = ember.optim.Adam(em.parameters(), lr=1e-2)
    ot = torch.optim.Adam(tm.parameters(), lr=1e-2)
    le = _train(ember, em, oe, batches, _ce, steps=60)
    lt = _train(torch, tm, ot, batches, _ce, steps=60)
    _assert_losses(le, lt)
    _assert_params(em, tm)


def _tied_lm(M):
    class LM(M.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = M.nn.Embedding(20, 16)
            self.tr = M.nn.Transformer(16, 2, 1, 1, 32, dropout=0.0, batch_first=True)
            self.norm = M.nn.LayerNorm(16)
            self.out = M.nn.Linear(16, 20, bias=False)
            self.out.weight = self.emb.weight

        def forward(self, tokens):
            mask = M.nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
            pad = tokens == 0
            h = self.tr(self.emb(tokens), self.emb(tokens), tgt_mask=mask, tgt_is_causal=True,
                        src_key_padding_mask=pad, memory_key_padding_mask=pad)
            return self.out(self.norm(h)).flatten(0, 1)

    return LM()


def _lm_loss(M, out, y):
    return M.nn.functional.cross_entropy(out, y.flatten(), ignore_index=0, label_smoothing=0.1)


def test_weight_tied_transformer_lm_checkpoint():
    rng = np.random.default_rng(3)
    xs = [rng.integers(1, 20, (3, 6)) for _ in range(8)]
    for x in xs:
        x[0, 4:] = 0

    def batches(i):
        return xs[i % 8], np.roll(xs[i % 8], -1, 1)

    em, tm = _twins(_tied_lm)
    assert em.out.weight is em.emb.weight
    assert len(list(em.parameters())) == len(list(tm.parameters()))

    def setup(M, model):
        opt = M.optim.AdamW(model.parameters(), lr=3e-3, amsgrad=True)
        return opt, M.optim.lr_scheduler.LinearLR(opt, 0.1, 1.0, 10)

    (oe, se), (ot, st) = setup(ember, em), setup(torch, tm)
    le = _train(ember, em, oe, batches, _lm_loss, sched=se, steps=40)
    lt = _train(torch, tm, ot, batches, _lm_loss, sched=st, steps=40)
    _assert_losses(le, lt)
    # the tied weight is one storage in the checkpoint: torch rebuilds it shared, and the model
    # continues from ember's optimizer state as ember does
    buf = io.BytesIO()
    ember.save({"model": em.state_dict(), "optim": oe.state_dict()}, buf)
    buf.seek(0)
    ck = torch.load(buf, weights_only=True)
    assert ck["model"]["out.weight"].data_ptr() == ck["model"]["emb.weight"].data_ptr()
    t2 = _tied_lm(torch)
    t2.load_state_dict(ck["model"])
    o2 = torch.optim.AdamW(t2.parameters(), lr=3e-3, amsgrad=True)
    o2.load_state_dict(ck["optim"])
    np.testing.assert_allclose(_train(torch, t2, o2, batches, _lm_loss, steps=20),
                               _train(ember, em, oe, batches, _lm_loss, steps=20), rtol=RTOL)


def test_reduce_lr_on_plateau():
    em, tm = _twins(_mlp)
    batches = _batches((8, 10), _class_y)
    oe = ember.optim.SGD(em.parameters(), lr=0.1)
    ot = torch.optim.SGD(tm.parameters(), lr=0.1)
    se = ember.optim.lr_scheduler.ReduceLROnPlateau(oe, patience=2, factor=0.5)
    st = torch.optim.lr_scheduler.ReduceLROnPlateau(ot, patience=2, factor=0.5)
    lrs = set()
    for i in range(60):
        le = _step(ember, em, oe, *batches(i), _ce)
        lt = _step(torch, tm, ot, *batches(i), _ce)
        assert le == pytest.approx(lt, rel=RTOL)
        se.step(le)
        st.step(lt)
        assert oe.param_groups[0]["lr"] == ot.param_groups[0]["lr"]
        lrs.add(ot.param_groups[0]["lr"])
    assert len(lrs) > 3
    assert se.num_bad_epochs == st.num_bad_epochs
