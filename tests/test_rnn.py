"Chapter 10 (RNN, LSTM, GRU, their cells, pad_sequence) against PyTorch as the oracle."
import itertools, warnings
import numpy as np
import pytest
import torch
import minitorch_nb as mt
from minitorch_nb import nn
from minitorch_nb.nn import rnn
from oracle import assert_close, to_numpy

TOL64 = dict(rtol=1e-9, atol=1e-11)
TOL32 = dict(rtol=2e-4, atol=2e-5)  # float32 sums over steps and gates of a few dozen terms
KINDS = {"RNN_TANH": (nn.RNN, torch.nn.RNN, dict(nonlinearity="tanh")),
         "RNN_RELU": (nn.RNN, torch.nn.RNN, dict(nonlinearity="relu")),
         "LSTM": (nn.LSTM, torch.nn.LSTM, {}), "GRU": (nn.GRU, torch.nn.GRU, {})}
I, H, T, B = 3, 4, 5, 2

def make_pair(kind, device, dtype=np.float64, **options):
    "Our module and torch's with the same options; torch's state_dict loaded into ours, which moves to device."
    ours_cls, torch_cls, extra = KINDS[kind]
    torch.manual_seed(0)
    theirs = torch_cls(I, H, **extra, **options).to(torch.float64 if dtype == np.float64 else torch.float32)
    ours = ours_cls(I, H, **extra, **options, dtype=dtype)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours.to(device), theirs

def tensors(arr, device):
    "The same array as a minitorch_nb tensor on device and as a torch tensor, both requiring grad."
    return mt.tensor(arr, device=device, requires_grad=True), torch.tensor(arr, requires_grad=True)

def flat_states(states):
    "The final state(s) as a list: [h_n] or [h_n, c_n]."
    return list(states) if isinstance(states, tuple) else [states]

def run_both(ours, theirs, x, states, device, rng, tol):
    "Forward both with the same input and states, backward the same random cotangents, compare everything."
    xs = tensors(x, device)
    hx = [tensors(s, device) for s in states] if states is not None else None
    lstm = isinstance(theirs, torch.nn.LSTM)
    arg = lambda k: None if hx is None else (tuple(p[k] for p in hx) if lstm else hx[0][k])
    (y, hn), (yt, hnt) = ours(xs[0], arg(0)), theirs(xs[1], arg(1))
    outs, touts = [y] + flat_states(hn), [yt] + flat_states(hnt)
    loss, tloss = 0, 0
    for o, to in zip(outs, touts):
        assert_close(o, to, **tol)
        assert o.device == mt.device(device)
        v = rng.standard_normal(tuple(to.shape)).astype(x.dtype)
        loss, tloss = loss + (o * mt.tensor(v, device=device)).sum(), tloss + (to * torch.tensor(v)).sum()
    loss.backward(); tloss.backward()
    assert_close(xs[0].grad, xs[1].grad, **tol)
    for p in hx or []: assert_close(p[0].grad, p[1].grad, **tol)
    ours_params = dict(ours.named_parameters())
    assert list(ours_params) == [k for k, _ in theirs.named_parameters()]
    for name, tp in theirs.named_parameters(): assert_close(ours_params[name].grad, tp.grad, **tol)

OPTIONS = list(itertools.product([1, 2], [True, False], [False, True], [False, True]))  # layers, bias, batch_first, bidir

@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("num_layers,bias,batch_first,bidirectional", OPTIONS)
@pytest.mark.parametrize("given_states", [False, True])
@pytest.mark.parametrize("batched", [True, False])
def test_layers_match_torch(kind, num_layers, bias, batch_first, bidirectional, given_states, batched, device):
    rng = np.random.default_rng(0)
    ours, theirs = make_pair(kind, device, num_layers=num_layers, bias=bias, batch_first=batch_first,
                             bidirectional=bidirectional)
    shape = ((B, T, I) if batch_first else (T, B, I)) if batched else (T, I)
    x = rng.standard_normal(shape)
    n_states = 2 if kind == "LSTM" else 1
    state_shape = (num_layers * (2 if bidirectional else 1),) + ((B,) if batched else ()) + (H,)
    states = [rng.standard_normal(state_shape) for _ in range(n_states)] if given_states else None
    run_both(ours, theirs, x, states, device, rng, TOL64)

@pytest.mark.parametrize("kind", list(KINDS))
def test_float32_and_longer_sequences(kind, device):
    rng = np.random.default_rng(1)
    ours, theirs = make_pair(kind, device, np.float32, num_layers=2, bidirectional=True)
    run_both(ours, theirs, rng.standard_normal((40, 3, I)).astype(np.float32), None, device, rng, TOL32)

@pytest.mark.parametrize("kind", list(KINDS))
def test_dropout_between_layers(kind, device):
    "p = 1 zeroes every input of layer 2 in training, deterministically: comparable with torch; eval ignores it."
    rng = np.random.default_rng(2)
    x = rng.standard_normal((T, B, I))
    for training in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, theirs = make_pair(kind, device, num_layers=3, dropout=1.0)
        ours.train(training); theirs.train(training)
        run_both(ours, theirs, x, None, device, rng, TOL64)
    ours, _ = make_pair(kind, device, num_layers=2, dropout=0.5)
    xt = mt.tensor(x, device=device)
    assert not np.allclose(to_numpy(ours(xt)[0]), to_numpy(ours.eval()(xt)[0]))

def test_state_dict_keys_and_shapes():
    for kind, (ours_cls, torch_cls, extra) in KINDS.items():
        for num_layers, bias, _, bidirectional in OPTIONS:
            options = dict(num_layers=num_layers, bias=bias, bidirectional=bidirectional, **extra)
            ours, theirs = ours_cls(7, 5, **options), torch_cls(7, 5, **options)
            assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
                   [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
            assert len(ours.all_weights) == len(theirs.all_weights)
            assert ours.flatten_parameters() is None
            assert repr(ours) == repr(theirs)

def test_init_range():
    "Every parameter ~ U(-1/sqrt(H), 1/sqrt(H)), as in PyTorch."
    mt.manual_seed(0)
    for p in nn.LSTM(30, 100, num_layers=2).parameters():
        v = to_numpy(p)
        assert np.abs(v).max() <= 0.1 and np.abs(v).max() > 0.099 and abs(v.mean()) < 0.01

CELLS = {"RNNCell_tanh": (nn.RNNCell, torch.nn.RNNCell, dict(nonlinearity="tanh"), 1),
         "RNNCell_relu": (nn.RNNCell, torch.nn.RNNCell, dict(nonlinearity="relu"), 1),
         "LSTMCell": (nn.LSTMCell, torch.nn.LSTMCell, {}, 2), "GRUCell": (nn.GRUCell, torch.nn.GRUCell, {}, 1)}

@pytest.mark.parametrize("kind", list(CELLS))
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("given_states", [False, True])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_torch(kind, bias, given_states, batched, device):
    ours_cls, torch_cls, extra, n_states = CELLS[kind]
    rng = np.random.default_rng(3)
    torch.manual_seed(0)
    theirs = torch_cls(I, H, bias=bias, **extra).double()
    ours = ours_cls(I, H, bias=bias, **extra, dtype=mt.float64)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    ours.to(device)
    x = tensors(rng.standard_normal((B, I) if batched else (I,)), device)
    hx = [tensors(rng.standard_normal((B, H) if batched else (H,)), device) for _ in range(n_states)]
    arg = lambda k: None if not given_states else (tuple(p[k] for p in hx) if n_states == 2 else hx[0][k])
    out, tout = ours(x[0], arg(0)), theirs(x[1], arg(1))
    outs, touts = (list(out), list(tout)) if n_states == 2 else ([out], [tout])
    loss, tloss = 0, 0
    for o, to in zip(outs, touts):
        assert_close(o, to, **TOL64)
        v = rng.standard_normal(tuple(to.shape))
        loss, tloss = loss + (o * mt.tensor(v, device=device)).sum(), tloss + (to * torch.tensor(v)).sum()
    loss.backward(); tloss.backward()
    assert_close(x[0].grad, x[1].grad, **TOL64)
    if given_states:
        for p in hx: assert_close(p[0].grad, p[1].grad, **TOL64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name, tp in theirs.named_parameters(): assert_close(dict(ours.named_parameters())[name].grad, tp.grad, **TOL64)

def _f64(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [mt.tensor(rng.standard_normal(s) * 0.5, requires_grad=True) for s in shapes]

@pytest.mark.parametrize("cell,gates", [("rnn", 1), ("lstm", 4), ("gru", 3)])
def test_cells_gradcheck(cell, gates):
    x, h, c, w_ih, w_hh, b_ih, b_hh = _f64((2, I), (2, H), (2, H), (gates * H, I), (gates * H, H), gates * H, gates * H)
    if cell == "lstm": fn, args = rnn.lstm_cell, (x, h, c, w_ih, w_hh, b_ih, b_hh)
    elif cell == "gru": fn, args = rnn.gru_cell, (x, h, w_ih, w_hh, b_ih, b_hh)
    else: fn, args = rnn.rnn_cell, (x, h, w_ih, w_hh, b_ih, b_hh)
    assert mt.gradcheck(fn, *args)
    assert mt.gradgradcheck(fn, *args)

@pytest.mark.parametrize("mode,gates", [("RNN_TANH", 1), ("RNN_RELU", 1), ("LSTM", 4), ("GRU", 3)])
@pytest.mark.parametrize("reverse", [False, True])
def test_fused_layer_gradcheck(mode, gates, reverse, device):
    "The BPTT written out against finite differences, every input, on both devices."
    x, h0, c0, w_ih, w_hh, b_ih, b_hh = _f64((T, B, I), (B, H), (B, H), (gates * H, I), (gates * H, H), gates * H,
                                             gates * H, seed=4)
    args = [t.detach().to(device).requires_grad_() for t in (x, h0, c0, w_ih, w_hh, b_ih, b_hh)]
    if mode != "LSTM": args[2] = None
    fn = lambda *a: rnn.recurrent_layer(mode, *a, reverse=reverse)
    assert mt.gradcheck(fn, *args)

def test_fused_layer_is_one_node_and_double_backward():
    "Gradients of gradients go through the cells: compared with torch's double backward of nn.LSTM."
    ours, theirs = make_pair("LSTM", "numpy")
    x, xt = tensors(np.random.default_rng(5).standard_normal((T, B, I)), "numpy")
    y, yt = ours(x)[0], theirs(xt)[0]
    assert y.grad_fn.next_functions[0].name() == "RecurrentLayerBackward"
    (g,), (gt,) = mt.autograd.grad(y.sum(), [x], create_graph=True), torch.autograd.grad(yt.sum(), [xt], create_graph=True)
    (g * g).sum().backward(); (gt * gt).sum().backward()
    assert_close(x.grad, xt.grad, **TOL64)
    for name, tp in theirs.named_parameters(): assert_close(dict(ours.named_parameters())[name].grad, tp.grad, **TOL64)

def test_no_grad_keeps_nothing():
    ours, _ = make_pair("LSTM", "numpy")
    with mt.no_grad(): y, _ = ours(mt.tensor(np.ones((T, B, I))))
    assert y.grad_fn is None and not y.requires_grad

def test_noncontiguous_input(device):
    rng = np.random.default_rng(6)
    ours, theirs = make_pair("GRU", device, batch_first=True)
    x = rng.standard_normal((T, B, I))
    y = ours(mt.tensor(x, device=device).transpose(0, 1))[0]  # (B, T, I) as a view
    assert_close(y, theirs(torch.tensor(x).transpose(0, 1))[0], **TOL64)

# ---------------------------------------------------------------- errors, with torch's types and messages

def _error(fn):
    try: fn()
    except Exception as e: return type(e), str(e)
    raise AssertionError("no error")

LAYER_ERRORS = [
    lambda m, t: m(t.randn(5, 3, 7, dtype=t.float64)),                                        # feature size
    lambda m, t: m(t.randn(2, 5, 3, 10, dtype=t.float64)),                                    # 4-D input
    lambda m, t: m(t.randn(5, 3, 10, dtype=t.float64), (t.zeros(1, 3, 20, dtype=t.float64), t.zeros(2, 3, 20, dtype=t.float64))),  # h0 layers
    lambda m, t: m(t.randn(5, 3, 10, dtype=t.float64), (t.zeros(2, 3, 20, dtype=t.float64), t.zeros(2, 3, 21, dtype=t.float64))),  # c0 hidden
    lambda m, t: m(t.randn(5, 3, 10, dtype=t.float64), (t.zeros(2, 20, dtype=t.float64), t.zeros(2, 20, dtype=t.float64))),        # 2-D states
    lambda m, t: m(t.randn(5, 10, dtype=t.float64), (t.zeros(2, 3, 20, dtype=t.float64), t.zeros(2, 3, 20, dtype=t.float64))),     # unbatched
    lambda m, t: m(t.randn(5, 3, 10, dtype=t.float32)),                                       # dtype
]

@pytest.mark.parametrize("k", range(len(LAYER_ERRORS)))
def test_layer_errors_match_torch(k):
    ours, theirs = nn.LSTM(10, 20, 2, dtype=mt.float64), torch.nn.LSTM(10, 20, 2).double()
    ours_type, ours_msg = _error(lambda: LAYER_ERRORS[k](ours, mt))
    theirs_type, theirs_msg = _error(lambda: LAYER_ERRORS[k](theirs, torch))
    assert ours_type is theirs_type
    if k < 6: assert ours_msg == theirs_msg

def test_gru_errors_match_torch():
    ours, theirs = nn.GRU(10, 20, 2), torch.nn.GRU(10, 20, 2)
    for bad in (lambda m, t: m(t.randn(5, 3, 10), t.zeros(1, 3, 20)), lambda m, t: m(t.randn(5, 3, 10), t.zeros(3, 20))):
        assert _error(lambda: bad(ours, mt)) == _error(lambda: bad(theirs, torch))

CELL_ERRORS = [lambda m, t: m(t.randn(3, 7)), lambda m, t: m(t.randn(2, 3, 10)),
               lambda m, t: m(t.randn(3, 10), (t.zeros(4, 20), t.zeros(3, 20))),
               lambda m, t: m(t.randn(3, 10), (t.zeros(3, 21), t.zeros(3, 20))),
               lambda m, t: m(t.randn(3, 10), (t.zeros(3, 20), t.zeros(3, 21)))]

@pytest.mark.parametrize("k", range(len(CELL_ERRORS)))
def test_cell_errors_match_torch(k):
    assert _error(lambda: CELL_ERRORS[k](nn.LSTMCell(10, 20), mt)) == \
           _error(lambda: CELL_ERRORS[k](torch.nn.LSTMCell(10, 20), torch))

@pytest.mark.parametrize("make", [lambda n: n.LSTM(3, 4, dropout=1.5), lambda n: n.LSTM(3, 4, dropout=-0.1),
                                  lambda n: n.RNN(3, 4, nonlinearity="sigmoid"), lambda n: n.GRU(3, 0),
                                  lambda n: n.GRU(3, 4, num_layers=0), lambda n: n.LSTM(3, 4.0)])
def test_constructor_errors_match_torch(make):
    ours, theirs = _error(lambda: make(nn)), _error(lambda: make(torch.nn))
    assert ours[0] is theirs[0]
    assert ours[1] == theirs[1]

def test_dropout_warning_matches_torch():
    for n in (nn, torch.nn):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            n.LSTM(3, 4, dropout=0.5)
        assert len(w) == 1 and w[0].category is UserWarning
    assert "num_layers greater than 1" in str(w[0].message)

# ---------------------------------------------------------------- pad_sequence

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side, device):
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal((n, 3, 2)) for n in (4, 1, 6)]
    pairs = [tensors(a, device) for a in arrays]
    ours = nn.utils.rnn.pad_sequence([p[0] for p in pairs], batch_first, -1.0, padding_side)
    theirs = torch.nn.utils.rnn.pad_sequence([p[1] for p in pairs], batch_first, -1.0, padding_side)
    assert_close(ours, theirs, **TOL64)
    g = rng.standard_normal(tuple(theirs.shape))
    ours.backward(mt.tensor(g, device=device)); theirs.backward(torch.tensor(g))
    for p in pairs: assert_close(p[0].grad, p[1].grad, **TOL64)

# ---------------------------------------------------------------- packed sequences

def _pack_both(x, lengths, batch_first, enforce_sorted, device):
    "The same padded batch packed by ours (from a tensor that requires grad) and by torch."
    xs = tensors(x, device)
    return xs, (nn.utils.rnn.pack_padded_sequence(xs[0], lengths, batch_first, enforce_sorted),
                torch.nn.utils.rnn.pack_padded_sequence(xs[1], lengths, batch_first, enforce_sorted))

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [6, 4, 4, 1]), (False, [2, 6, 1, 4])])
def test_pack_pad_roundtrip_matches_torch(batch_first, enforce_sorted, lengths, device):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 6, 3) if batch_first else (6, 4, 3))
    xs, (ours, theirs) = _pack_both(x, lengths, batch_first, enforce_sorted, device)
    assert_close(ours.data, theirs.data, **TOL64)
    for a, b in zip(ours[1:], theirs[1:]):
        assert (a is None) == (b is None)
        if a is not None: assert to_numpy(a).tolist() == b.tolist()
    (padded, lens), (tpadded, tlens) = (f(p, batch_first, -2.0, 8) for f, p in (
        (nn.utils.rnn.pad_packed_sequence, ours), (torch.nn.utils.rnn.pad_packed_sequence, theirs)))
    assert_close(padded, tpadded, **TOL64)
    assert to_numpy(lens).tolist() == tlens.tolist()
    g = rng.standard_normal(tuple(tpadded.shape))
    padded.backward(mt.tensor(g, device=device)); tpadded.backward(torch.tensor(g))
    assert_close(xs[0].grad, xs[1].grad, **TOL64)

@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (2, True)])
@pytest.mark.parametrize("given_states", [False, True])
def test_layers_on_packed_input_match_torch(kind, num_layers, bidirectional, given_states, device):
    rng = np.random.default_rng(9)
    ours, theirs = make_pair(kind, device, num_layers=num_layers, bidirectional=bidirectional)
    xs, (packed, tpacked) = _pack_both(rng.standard_normal((T, 4, I)), [2, 5, 1, 4], False, False, device)
    n_states = 2 if kind == "LSTM" else 1
    states = [tensors(rng.standard_normal((num_layers * (1 + bidirectional), 4, H)), device) for _ in range(n_states)]
    arg = lambda k: None if not given_states else (tuple(s[k] for s in states) if kind == "LSTM" else states[0][k])
    (y, hn), (yt, hnt) = ours(packed, arg(0)), theirs(tpacked, arg(1))
    assert isinstance(y, nn.utils.rnn.PackedSequence)
    outs, touts = [y.data] + flat_states(hn), [yt.data] + flat_states(hnt)
    loss, tloss = 0, 0
    for o, to in zip(outs, touts):
        assert_close(o, to, **TOL64)
        v = rng.standard_normal(tuple(to.shape))
        loss, tloss = loss + (o * mt.tensor(v, device=device)).sum(), tloss + (to * torch.tensor(v)).sum()
    loss.backward(); tloss.backward()
    assert_close(xs[0].grad, xs[1].grad, **TOL64)
    if given_states:
        for s in states: assert_close(s[0].grad, s[1].grad, **TOL64)
    for name, tp in theirs.named_parameters(): assert_close(dict(ours.named_parameters())[name].grad, tp.grad, **TOL64)

def test_pack_errors_match_torch():
    for bad in (lambda u, t: u.pack_padded_sequence(t.zeros(3, 2, 1), [1, 3]),
                lambda u, t: u.pack_padded_sequence(t.zeros(3, 2, 1), [3, 0])):
        assert _error(lambda: bad(nn.utils.rnn, mt)) == _error(lambda: bad(torch.nn.utils.rnn, torch))
    p, tp = (u.pack_padded_sequence(t.zeros(3, 2, 1), [3, 2]) for u, t in ((nn.utils.rnn, mt), (torch.nn.utils.rnn, torch)))
    assert _error(lambda: nn.utils.rnn.pad_packed_sequence(p, total_length=2)) == \
           _error(lambda: torch.nn.utils.rnn.pad_packed_sequence(tp, total_length=2))

@pytest.mark.parametrize("kind", list(KINDS))
def test_frozen_parameters_and_input_without_grad(kind, device):
    "Only the gradients asked for are computed, and they are torch's."
    rng = np.random.default_rng(10)
    ours, theirs = make_pair(kind, device)
    for m in (ours, theirs): m.weight_ih_l0.requires_grad_(False); m.bias_hh_l0.requires_grad_(False)
    x = rng.standard_normal((T, B, I))
    ours(mt.tensor(x, device=device))[0].sum().backward(); theirs(torch.tensor(x))[0].sum().backward()
    for name, tp in theirs.named_parameters():
        op = dict(ours.named_parameters())[name]
        assert (op.grad is None) == (tp.grad is None)
        if tp.grad is not None: assert_close(op.grad, tp.grad, **TOL64)

# ---------------------------------------------------------------- LSTM with projections (proj_size)

P = 3  # proj_size < H

@pytest.mark.parametrize("num_layers,bias,batch_first,bidirectional", OPTIONS)
@pytest.mark.parametrize("given_states", [False, True])
@pytest.mark.parametrize("batched", [True, False])
def test_lstm_projection_matches_torch(num_layers, bias, batch_first, bidirectional, given_states, batched,
                                       device):
    "h_t = W_hr (o·tanh c_t): outputs, h_n (proj_size), c_n (hidden_size) and every gradient as torch's."
    rng = np.random.default_rng(11)
    ours, theirs = make_pair("LSTM", device, num_layers=num_layers, bias=bias, batch_first=batch_first,
                             bidirectional=bidirectional, proj_size=P)
    shape = ((B, T, I) if batch_first else (T, B, I)) if batched else (T, I)
    lead = (num_layers * (2 if bidirectional else 1),) + ((B,) if batched else ())
    states = [rng.standard_normal(lead + (P,)), rng.standard_normal(lead + (H,))] if given_states else None
    y, (h_n, c_n) = ours(mt.tensor(rng.standard_normal(shape), device=device))
    assert y.shape[-1] == P * (2 if bidirectional else 1) and h_n.shape[-1] == P and c_n.shape[-1] == H
    run_both(ours, theirs, rng.standard_normal(shape), states, device, rng, TOL64)

def test_lstm_projection_float32_longer(device):
    rng = np.random.default_rng(12)
    ours, theirs = make_pair("LSTM", device, np.float32, num_layers=2, bidirectional=True, proj_size=2)
    run_both(ours, theirs, rng.standard_normal((40, 3, I)).astype(np.float32), None, device, rng, TOL32)

def test_lstm_projection_state_dict_and_repr():
    for num_layers, bias, _, bidirectional in OPTIONS:
        options = dict(num_layers=num_layers, bias=bias, bidirectional=bidirectional, proj_size=3)
        ours, theirs = nn.LSTM(7, 5, **options), torch.nn.LSTM(7, 5, **options)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
               [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
        assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
               [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]
        assert repr(ours) == repr(theirs) and ours.proj_size == theirs.proj_size == 3
    mt.manual_seed(0)
    w_hr = to_numpy(nn.LSTM(30, 100, proj_size=40).weight_hr_l0)
    assert w_hr.shape == (40, 100) and 0.099 < np.abs(w_hr).max() <= 0.1  # U(-1/sqrt(H), 1/sqrt(H))

@pytest.mark.parametrize("proj_size", [5, 6, -1])
def test_lstm_projection_size_errors_match_torch(proj_size):
    make = lambda n: n.LSTM(3, 5, proj_size=proj_size)
    assert _error(lambda: make(nn)) == _error(lambda: make(torch.nn))

@pytest.mark.parametrize("kind", ["RNN", "GRU"])
@pytest.mark.parametrize("proj_size", [0, 2])
def test_projection_only_for_lstm(kind, proj_size):
    make = lambda n: getattr(n, kind)(3, 5, proj_size=proj_size)
    assert _error(lambda: make(nn)) == _error(lambda: make(torch.nn))

@pytest.mark.parametrize("k", range(3))
def test_lstm_projection_state_errors_match_torch(k):
    "h0 must have proj_size numbers, c0 hidden_size: torch's messages name the expected shapes."
    bad = [lambda m, t: m(t.randn(5, 3, 10), (t.zeros(2, 3, 20), t.zeros(2, 3, 20))),   # h0 of hidden_size
           lambda m, t: m(t.randn(5, 3, 10), (t.zeros(2, 3, 6), t.zeros(2, 3, 6))),     # c0 of proj_size
           lambda m, t: m(t.randn(5, 10), (t.zeros(2, 20), t.zeros(2, 20)))][k]         # unbatched
    ours, theirs = nn.LSTM(10, 20, 2, proj_size=6), torch.nn.LSTM(10, 20, 2, proj_size=6)
    assert _error(lambda: bad(ours, mt)) == _error(lambda: bad(theirs, torch))

@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_projection_fused_layer_gradcheck(reverse, device):
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = _f64((T, B, I), (B, P), (B, H), (4 * H, I), (4 * H, P),
                                                   4 * H, 4 * H, (P, H), seed=13)
    args = [t.detach().to(device).requires_grad_() for t in (x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)]
    assert mt.gradcheck(lambda *a: rnn.recurrent_layer("LSTM", *a, reverse=reverse), *args)

def test_lstm_projection_double_backward_and_packed(device):
    "Gradients of gradients (the cell path), and a packed batch, with projections, against torch."
    ours, theirs = make_pair("LSTM", "numpy", proj_size=P, num_layers=2)
    x, xt = tensors(np.random.default_rng(14).standard_normal((T, B, I)), "numpy")
    (g,), (gt,) = (mt.autograd.grad(ours(x)[0].sum(), [x], create_graph=True),
                   torch.autograd.grad(theirs(xt)[0].sum(), [xt], create_graph=True))
    (g * g).sum().backward(); (gt * gt).sum().backward()
    assert_close(x.grad, xt.grad, **TOL64)
    for name, tp in theirs.named_parameters():
        assert_close(dict(ours.named_parameters())[name].grad, tp.grad, **TOL64)
    ours, theirs = make_pair("LSTM", device, proj_size=P, bidirectional=True)
    xs, (packed, tpacked) = _pack_both(np.random.default_rng(15).standard_normal((T, 4, I)), [2, 5, 1, 4],
                                       False, False, device)
    (y, (h_n, c_n)), (yt, (h_nt, c_nt)) = ours(packed), theirs(tpacked)
    for o, to in ((y.data, yt.data), (h_n, h_nt), (c_n, c_nt)): assert_close(o, to, **TOL64)
    (y.data.sum() + h_n.sum() + c_n.sum()).backward(); (yt.data.sum() + h_nt.sum() + c_nt.sum()).backward()
    assert_close(xs[0].grad, xs[1].grad, **TOL64)
    for name, tp in theirs.named_parameters():
        assert_close(dict(ours.named_parameters())[name].grad, tp.grad, **TOL64)

# ---------------------------------------------------------------- the float32 step kernels

def test_tanh32_within_a_few_ulps_of_tanh():
    "The fitted float32 tanh against numpy's float64 tanh, over random values, tiny ones and the special ones."
    xs = np.concatenate([np.random.default_rng(13).uniform(-20, 20, 1 << 18), np.geomspace(1e-30, 1e-2, 4096)])
    xs = np.concatenate([xs, -xs]).astype(np.float32)
    exact = np.tanh(xs.astype(np.float64))
    got = np.array([rnn.tanh32(x) for x in xs[::64]] + [rnn.tanh32(x) for x in xs[-8192:]], np.float64)
    ref = np.concatenate([exact[::64], exact[-8192:]])
    assert (np.abs(got - ref) <= 8 * np.spacing(np.abs(ref).astype(np.float32))).all()
    assert rnn.tanh32(np.float32(np.inf)) == 1 and rnn.tanh32(np.float32(-np.inf)) == -1
    assert np.isnan(rnn.tanh32(np.float32(np.nan)))
    sig = np.array([rnn.sigmoid32(x) for x in xs[::64]], np.float64)
    # σ = tanh(x/2)/2 + 1/2: half of tanh's bound (8 ulps of 1: 4.8e-7) plus the rounding of the sum (3e-8)
    assert_close(sig, 1 / (1 + np.exp(-xs[::64].astype(np.float64))), rtol=0, atol=2.7e-7)

@pytest.mark.parametrize("projection", [False, True])
def test_lstm_kernels_match_numpy_steps(projection):
    "The kernels and the numpy loops on the same float32 inputs: forward values and every backward output."
    rng = np.random.default_rng(14)
    T_, B_, H_, P_ = 9, 5, 7, 3
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    w_hr = f32(P_, H_) if projection else None
    H_out = P_ if projection else H_
    xw, h0, c0, w_hh = f32(T_, B_, 4 * H_), f32(B_, H_out), f32(B_, H_), f32(4 * H_, H_out)
    runs = [rnn.lstm_steps(xw, h0, c0, w_hh, w_hr, kernel=k) for k in (False, True)]
    for key in ("hs", "gates", "cs", "tcs"): assert_close(runs[1][key], runs[0][key], rtol=1e-5, atol=1e-6)
    dy, dh, dc = f32(*runs[0]["hs"].shape), f32(*h0.shape), f32(B_, H_)
    grads = [rnn.lstm_steps_backward(dy, dh, dc, runs[0], c0, w_hh, kernel=k, w_hr=w_hr) for k in (False, True)]
    for a, b in zip(*grads):
        if a is not None: assert_close(b, a, rtol=1e-5, atol=1e-6)

def test_lstm_forward_kernel_takes_float32_only():
    with pytest.raises(TypeError, match="float32"):
        rnn.lstm_steps(np.zeros((2, 1, 8)), np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((8, 2)), kernel=True)

@pytest.mark.parametrize("num_layers,bias,batch_first,bidirectional", OPTIONS)
def test_lstm_float32_matches_torch(num_layers, bias, batch_first, bidirectional, device):
    "float32 runs the step kernels on both devices: every option against torch, states given."
    rng = np.random.default_rng(15)
    ours, theirs = make_pair("LSTM", device, np.float32, num_layers=num_layers, bias=bias,
                             batch_first=batch_first, bidirectional=bidirectional)
    x = rng.standard_normal((B, 24, I) if batch_first else (24, B, I)).astype(np.float32)
    states = [rng.standard_normal((num_layers * (2 if bidirectional else 1), B, H)).astype(np.float32)
              for _ in range(2)]
    run_both(ours, theirs, x, states, device, rng, TOL32)
