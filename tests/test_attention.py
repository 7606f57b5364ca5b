"Chapter 11a (attention, multi-head attention, the Transformer encoder) against PyTorch as the oracle."
import math
import numpy as np
import pytest
import torch
import minitorch_nb as mt
from minitorch_nb import nn
import minitorch_nb.nn.functional as F
from minitorch_nb.nn import attention
from oracle import assert_close, to_numpy

DTYPES = [np.float32, np.float64]
TORCH_DTYPE = {np.float32: torch.float32, np.float64: torch.float64}
# float32: a softmax over a few keys, then products of a few dozen terms
TOL = {np.float32: dict(rtol=2e-4, atol=2e-5), np.float64: dict(rtol=1e-9, atol=1e-11)}

def both(arr, device, requires_grad=True):
    "The same array as a minitorch_nb tensor on `device` and a torch tensor."
    ours, theirs = mt.tensor(arr, device=device), torch.tensor(arr)
    if requires_grad: ours.requires_grad_(); theirs.requires_grad_()
    return ours, theirs

def mask_pair(arr, device):
    "A mask (bool or float) for both libraries, never requiring grad."
    return mt.tensor(arr, device=device), torch.tensor(arr)

def load_torch_state(ours, theirs, device):
    "Give `ours` torch's dtype and state, on `device`."
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    ours.to(next(iter(state.values())).dtype)
    ours.load_state_dict(state)
    return ours.to(device)

def backward_both(y, yt, inputs, rng, tol):
    "Backward of a random projection through both outputs; compare the inputs' gradients."
    g = rng.standard_normal(yt.shape).astype(to_numpy(yt).dtype)
    y.backward(mt.tensor(g, device=y.device))
    yt.backward(torch.tensor(g))
    for ours, theirs in inputs: assert_close(ours.grad, theirs.grad, **tol)

def compare_params(ours, theirs, tol):
    "Same parameter names in the same order, same gradients."
    ours_p, theirs_p = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert list(ours_p) == list(theirs_p)
    for name, p in theirs_p.items(): assert_close(ours_p[name].grad, p.grad, **tol)

# ---------------------------------------------------------------- scaled_dot_product_attention

SDPA_SHAPES = [((5, 4), (7, 4), (7, 3)), ((2, 5, 4), (2, 7, 4), (2, 7, 6)), ((2, 3, 6, 8), (2, 3, 6, 8), (2, 3, 6, 8)),
               ((2, 3, 4, 5), (1, 3, 6, 5), (2, 1, 6, 2))]  # the last one broadcasts the batch axes

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", SDPA_SHAPES, ids=str)
@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "causal", "bool4d"])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_sdpa(device, rng, dtype, shapes, mask_kind, scale):
    "Output and the gradients of query, key and value, for every kind of mask, against torch."
    (q, qt), (k, kt), (v, vt) = (both(rng.standard_normal(s).astype(dtype), device) for s in shapes)
    l, s = shapes[0][-2], shapes[1][-2]
    kw, kwt = dict(scale=scale), dict(scale=scale)
    if mask_kind == "bool" or mask_kind == "bool4d":
        shape = (l, s) if mask_kind == "bool" else (1,) * (len(shapes[0]) - 2) + (l, s)  # batch axes of size 1
        keep = rng.random(shape) < 0.6
        keep[..., 0] = True  # no row fully masked
        kw["attn_mask"], kwt["attn_mask"] = mask_pair(keep, device)
    elif mask_kind == "float":
        kw["attn_mask"], kwt["attn_mask"] = mask_pair(rng.standard_normal((l, s)).astype(dtype), device)
    elif mask_kind == "causal":
        kw["is_causal"] = kwt["is_causal"] = True
    y = F.scaled_dot_product_attention(q, k, v, **kw)
    yt = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, **kwt)
    assert_close(y, yt, **TOL[dtype])
    backward_both(y, yt, [(q, qt), (k, kt), (v, vt)], rng, TOL[dtype])

def test_sdpa_gradcheck(device, rng):
    "First and second derivatives of the fused backward, float64 finite differences, with a float mask."
    q, k, v = (mt.tensor(rng.standard_normal(s), device=device, requires_grad=True)
               for s in ((2, 3, 4), (2, 5, 4), (2, 5, 2)))
    bias = mt.tensor(rng.standard_normal((3, 5)), device=device)
    fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, bias)
    assert mt.gradcheck(fn, q, k, v)
    assert mt.gradgradcheck(fn, q, k, v)

def test_sdpa_matches_loop_oracle(rng):
    "The vectorized attention against the four-loop oracle of the chapter, with a mask."
    q, k, v = rng.standard_normal((6, 5)), rng.standard_normal((9, 5)), rng.standard_normal((9, 3))
    keep = rng.random((6, 9)) < 0.5
    keep[:, 3] = True
    got = F.scaled_dot_product_attention(mt.tensor(q), mt.tensor(k), mt.tensor(v), mt.tensor(keep))
    np.testing.assert_allclose(got.numpy(), attention.attention_loop(q, k, v, keep), rtol=1e-12, atol=1e-13)

def test_sdpa_dropout(device, rng):
    "dropout_p=1 drops every weight (zeros, as torch); 0 < p < 1 keeps the expectation."
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    out = F.scaled_dot_product_attention(*(mt.tensor(x, device=device),) * 3, dropout_p=1.0)
    ref = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(x),) * 3, dropout_p=1.0)
    assert_close(out, ref)
    mt.manual_seed(0)
    v = mt.ones(1, 200, 1, device=device, dtype=mt.float64)
    q = mt.zeros(1, 1000, 4, device=device, dtype=mt.float64)  # uniform weights 1/200
    k = mt.zeros(1, 200, 4, device=device, dtype=mt.float64)
    dropped = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    assert abs(dropped.mean() - 1) < 0.02 and dropped.std() > 0.03

def test_sdpa_errors(device):
    "PyTorch's exception types for bad arguments."
    q = mt.randn(2, 3, 4, device=device)
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=mt.ones(3, 3, dtype=mt.bool_, device=device),
                                       is_causal=True)
    with pytest.raises(RuntimeError, match="same last dimension"):
        F.scaled_dot_product_attention(q, mt.randn(2, 3, 5, device=device), q)
    with pytest.raises(RuntimeError, match="number of positions"):
        F.scaled_dot_product_attention(q, q, mt.randn(2, 4, 4, device=device))
    with pytest.raises(TypeError, match="must be Tensor"):
        F.scaled_dot_product_attention(q, q, q.numpy())

def test_softmax_rows_stable():
    "No overflow for huge scores, the sum is 1, and a fully masked row is NaN as in torch."
    s = np.array([[1000.0, 999.0, -np.inf], [-np.inf, -np.inf, -np.inf]])
    p = attention.softmax_rows(s)
    ref = torch.softmax(torch.tensor(s), -1).numpy()
    np.testing.assert_allclose(p[0], ref[0], rtol=1e-12)
    assert np.isnan(p[1]).all() and np.isnan(ref[1]).all()

@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block", [1, 5, 16, 100])
def test_blockwise_attention(rng, causal, block):
    "The online-softmax blockwise attention equals the reference for any block size."
    q, k, v = rng.standard_normal((40, 8)), rng.standard_normal((40, 8)), rng.standard_normal((40, 3))
    ref = F.scaled_dot_product_attention(mt.tensor(q), mt.tensor(k), mt.tensor(v), is_causal=causal).numpy()
    np.testing.assert_allclose(attention.blockwise_attention(q, k, v, block, causal), ref, rtol=1e-11, atol=1e-12)

# ---------------------------------------------------------------- MultiheadAttention

MHA_OPTIONS = [dict(batch_first=True), dict(batch_first=False), dict(batch_first=True, bias=False)]

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("options", MHA_OPTIONS, ids=str)
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("masks", ["none", "bool", "float", "padding", "both", "mask3d", "causal"])
@pytest.mark.parametrize("cross", [False, True])
def test_multihead_attention(device, rng, dtype, options, need_weights, average, masks, cross):
    "Outputs, weights, input and parameter gradients against torch's module with the same state."
    torch.manual_seed(0)
    e, h, b, l = 12, 3, 2, 5
    s = 7 if cross else l
    theirs = torch.nn.MultiheadAttention(e, h, **options).to(TORCH_DTYPE[dtype])
    ours = load_torch_state(nn.MultiheadAttention(e, h, **options), theirs, device)
    with torch.no_grad():  # non-zero biases: the defaults 0 would hide mistakes
        for p in theirs.parameters(): p.copy_(torch.randn(p.shape, dtype=p.dtype) * 0.3)
    ours = load_torch_state(ours, theirs, device)
    shape = lambda n: (b, n, e) if options["batch_first"] else (n, b, e)
    x, xt = both(rng.standard_normal(shape(l)).astype(dtype), device)
    if cross:
        (kv, kvt), (vv, vvt) = (both(rng.standard_normal(shape(s)).astype(dtype), device) for _ in range(2))
        args, args_t, inputs = (x, kv, vv), (xt, kvt, vvt), [(x, xt), (kv, kvt), (vv, vvt)]
    else:
        args, args_t, inputs = (x, x, x), (xt, xt, xt), [(x, xt)]
    kw = dict(need_weights=need_weights, average_attn_weights=average)
    kwt = dict(kw)
    keep_first = lambda m: np.concatenate([np.zeros_like(m[..., :1]), m[..., 1:]], -1)  # key 0 always visible
    if masks in ("bool", "both"):
        kw["attn_mask"], kwt["attn_mask"] = mask_pair(keep_first(rng.random((l, s)) < 0.4), device)
    if masks == "float":
        kw["attn_mask"], kwt["attn_mask"] = mask_pair(rng.standard_normal((l, s)).astype(dtype), device)
    if masks == "mask3d":
        kw["attn_mask"], kwt["attn_mask"] = mask_pair(keep_first(rng.random((b * h, l, s)) < 0.4), device)
    if masks in ("padding", "both"):
        pad = np.zeros((b, s), bool)
        pad[1, -2:] = True
        kw["key_padding_mask"], kwt["key_padding_mask"] = mask_pair(pad, device)
    if masks == "causal":
        causal = np.triu(np.ones((l, s), bool), 1)
        kw["attn_mask"], kwt["attn_mask"] = mask_pair(causal, device)
        kw["is_causal"] = kwt["is_causal"] = True
    y, w = ours(*args, **kw)
    yt, wt = theirs(*args_t, **kwt)
    assert_close(y, yt, **TOL[dtype])
    if need_weights: assert_close(w, wt, **TOL[dtype])
    else: assert w is None and wt is None
    backward_both(y, yt, inputs, rng, TOL[dtype])
    compare_params(ours, theirs, TOL[dtype])

MHA_EXTRAS = [dict(kdim=5, vdim=3), dict(kdim=5), dict(add_bias_kv=True), dict(add_zero_attn=True),
              dict(add_bias_kv=True, add_zero_attn=True, kdim=4, vdim=6),
              dict(add_bias_kv=True, add_zero_attn=True, bias=False)]

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("extras", MHA_EXTRAS, ids=str)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("masks", ["none", "bool", "mask3d", "padding", "both"])
def test_multihead_attention_extras(device, rng, dtype, extras, batch_first, need_weights, average,
                                    masks):
    "kdim/vdim (separate projection weights), add_bias_kv and add_zero_attn against torch."
    torch.manual_seed(0)
    e, h, b, l, s = 12, 3, 2, 5, 7
    theirs = torch.nn.MultiheadAttention(e, h, batch_first=batch_first, **extras).to(TORCH_DTYPE[dtype])
    with torch.no_grad():
        for p in theirs.parameters(): p.copy_(torch.randn(p.shape, dtype=p.dtype) * 0.3)
    ours = load_torch_state(nn.MultiheadAttention(e, h, batch_first=batch_first, **extras), theirs, device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert (ours.in_proj_weight is None) == (theirs.in_proj_weight is None)
    shape = lambda n, w: (b, n, w) if batch_first else (n, b, w)
    x, xt = both(rng.standard_normal(shape(l, e)).astype(dtype), device)
    kdim, vdim = extras.get("kdim", e), extras.get("vdim", e)
    kv = [both(rng.standard_normal(shape(s, w)).astype(dtype), device) for w in (kdim, vdim)]
    kw = dict(need_weights=need_weights, average_attn_weights=average)
    kwt = dict(kw)
    if masks in ("bool", "both"):
        hide = rng.random((l, s)) < 0.5
        hide[0] = True  # a fully masked row: only the appended keys (never masked) are left to it
        if not (extras.get("add_bias_kv") or extras.get("add_zero_attn")): hide[:, 0] = False
        kw["attn_mask"], kwt["attn_mask"] = mask_pair(hide, device)
    if masks == "mask3d":
        kw["attn_mask"], kwt["attn_mask"] = mask_pair(rng.standard_normal((b * h, l, s)).astype(dtype), device)
    if masks in ("padding", "both"):
        pad = np.zeros((b, s), bool)
        pad[1, -3:] = True
        kw["key_padding_mask"], kwt["key_padding_mask"] = mask_pair(pad, device)
    y, w = ours(x, kv[0][0], kv[1][0], **kw)
    yt, wt = theirs(xt, kv[0][1], kv[1][1], **kwt)
    assert_close(y, yt, **TOL[dtype])
    if need_weights:
        assert w.shape == wt.shape
        assert_close(w, wt, **TOL[dtype])
    else: assert w is None and wt is None
    backward_both(y, yt, [(x, xt)] + kv, rng, TOL[dtype])
    compare_params(ours, theirs, TOL[dtype])

@pytest.mark.parametrize("options", [{}, dict(kdim=5, vdim=3, add_bias_kv=True, add_zero_attn=True)],
                         ids=str)
def test_multihead_attention_unbatched(device, rng, options):
    "A 2-D (L, E) input is one sequence: outputs and weights without the batch axis."
    torch.manual_seed(1)
    theirs = torch.nn.MultiheadAttention(8, 2, **options).double()
    ours = load_torch_state(nn.MultiheadAttention(8, 2, **options), theirs, device)
    x, xt = both(rng.standard_normal((4, 8)), device)
    if options:
        (k, kt), (v, vt) = (both(rng.standard_normal((4, w)), device) for w in (5, 3))
    else: (k, kt), (v, vt) = (x, xt), (x, xt)
    pad, pad_t = mask_pair(np.array([False, False, True, False]), device)
    (y, w), (yt, wt) = ours(x, k, v, key_padding_mask=pad), theirs(xt, kt, vt, key_padding_mask=pad_t)
    assert_close(y, yt, **TOL[np.float64])
    assert_close(w, wt, **TOL[np.float64])
    backward_both(y, yt, [(x, xt)] + ([(k, kt), (v, vt)] if options else []), rng, TOL[np.float64])

def test_multihead_attention_extras_initialisation():
    "Separate projection weights and bias_k/bias_v: torch's shapes, Xavier-initialised, zero biases."
    for options in (dict(kdim=5, vdim=3), dict(add_bias_kv=True), dict(add_zero_attn=True, vdim=4)):
        ours, theirs = nn.MultiheadAttention(8, 2, **options), torch.nn.MultiheadAttention(8, 2, **options)
        assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
            {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
        for name, p in ours.named_parameters():
            if name.endswith("proj_weight") or name.startswith("bias_"): assert float(p.abs().sum()) > 0
            if name == "in_proj_bias": assert float(p.abs().sum()) == 0

def test_multihead_attention_defaults_and_dropout(device):
    "Torch's initialisation (zero biases, parameter shapes) and dropout only in training mode."
    mha = nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True).to(device)
    t = torch.nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True)
    assert {k: tuple(v.shape) for k, v in mha.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}
    assert float(mha.in_proj_bias.abs().sum()) == 0 and float(mha.out_proj.bias.abs().sum()) == 0
    bound = math.sqrt(6 / (8 + 24))  # xavier_uniform_ on the stacked (24, 8) weight
    assert float(mha.in_proj_weight.abs().max()) <= bound
    x = mt.randn(2, 6, 8, device=device)
    mha.eval()
    a, b = mha(x, x, x)[0], mha(x, x, x)[0]
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    mha.train()
    mt.manual_seed(0)
    c = mha(x, x, x, need_weights=False)[0]
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())

def test_multihead_attention_errors(device):
    "PyTorch's exception types: AssertionError for the width, RuntimeError for masks."
    with pytest.raises(AssertionError, match="divisible"): nn.MultiheadAttention(6, 4)
    mha = nn.MultiheadAttention(8, 2).to(device)
    x = mt.randn(3, 2, 8, device=device)
    with pytest.raises(AssertionError, match="embedding dimension of 8"):
        bad = mt.randn(3, 2, 7, device=device)
        mha(bad, bad, bad)
    with pytest.raises(RuntimeError, match="attn_mask"):
        mha(x, x, x, attn_mask=mt.zeros(4, 3, dtype=mt.bool_, device=device))
    with pytest.raises(AssertionError, match="key_padding_mask"):
        mha(x, x, x, key_padding_mask=mt.zeros(3, 3, dtype=mt.bool_, device=device))
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        mha(x, x, x, is_causal=True)

MHA_BAD_INPUTS = [  # (module options, query shape, key shape, value shape), inputs (L, B, E)
    (dict(kdim=5, vdim=3), (4, 2, 8), (6, 2, 4), (6, 2, 3)),  # key width is not kdim
    (dict(kdim=5, vdim=3), (4, 2, 8), (6, 2, 5), (6, 2, 4)),  # value width is not vdim
    (dict(kdim=5, vdim=3), (4, 2, 8), (6, 2, 5), (5, 2, 3)),  # key and value lengths differ
    (dict(), (4, 2, 8), (6, 2, 7), (6, 2, 7)),  # key width with the stacked weight
    (dict(), (4, 2, 8), (6, 3, 8), (6, 3, 8)),  # batch sizes differ
    (dict(add_bias_kv=True), (4, 2, 8), (6, 3, 8), (6, 3, 8)),
]

@pytest.mark.parametrize("options,q_shape,k_shape,v_shape", MHA_BAD_INPUTS, ids=str)
def test_multihead_attention_bad_inputs_like_torch(device, options, q_shape, k_shape, v_shape):
    "Keys and values that don't fit raise the exception type torch raises."
    theirs = torch.nn.MultiheadAttention(8, 2, **options)
    ours = nn.MultiheadAttention(8, 2, **options).to(device)
    with pytest.raises(Exception) as expected:
        theirs(*(torch.randn(s) for s in (q_shape, k_shape, v_shape)))
    with pytest.raises(expected.type):
        ours(*(mt.randn(*s, device=device) for s in (q_shape, k_shape, v_shape)))

# ---------------------------------------------------------------- TransformerEncoderLayer and TransformerEncoder

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "causal", "padding"])
def test_encoder_layer(device, rng, dtype, norm_first, activation, batch_first, masks):
    "One layer: outputs, input and parameter gradients against torch, with loaded state."
    torch.manual_seed(0)
    kw = dict(dim_feedforward=24, dropout=0.0, activation=activation, batch_first=batch_first, norm_first=norm_first)
    theirs = torch.nn.TransformerEncoderLayer(12, 3, **kw).to(TORCH_DTYPE[dtype])
    with torch.no_grad():
        for p in theirs.parameters(): p.add_(torch.randn(p.shape, dtype=p.dtype) * 0.2)
    ours = load_torch_state(nn.TransformerEncoderLayer(12, 3, **kw), theirs, device)
    b, l = 2, 6
    x, xt = both(rng.standard_normal((b, l, 12) if batch_first else (l, b, 12)).astype(dtype), device)
    fkw, fkwt = {}, {}
    if masks == "causal":
        m = np.triu(np.full((l, l), -np.inf, dtype), 1)
        fkw["src_mask"], fkwt["src_mask"] = mask_pair(m, device)
        fkw["is_causal"] = fkwt["is_causal"] = True
    if masks == "padding":
        pad = np.zeros((b, l), bool)
        pad[0, -3:] = True
        fkw["src_key_padding_mask"], fkwt["src_key_padding_mask"] = mask_pair(pad, device)
    y, yt = ours(x, **fkw), theirs(xt, **fkwt)
    assert_close(y, yt, **TOL[dtype])
    backward_both(y, yt, [(x, xt)], rng, TOL[dtype])
    compare_params(ours, theirs, TOL[dtype])

@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("final_norm", [False, True])
def test_encoder_stack(device, rng, norm_first, final_norm):
    "A stack of layers with an optional final norm, in eval mode with dropout 0.1 (inactive)."
    torch.manual_seed(0)
    layer_t = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True, norm_first=norm_first)
    theirs = torch.nn.TransformerEncoder(layer_t, 3, norm=torch.nn.LayerNorm(8) if final_norm else None,
                                         enable_nested_tensor=False).double().eval()
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True, norm_first=norm_first)
    ours = nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(8) if final_norm else None).eval()
    ours = load_torch_state(ours, theirs, device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x, xt = both(rng.standard_normal((3, 5, 8)), device)
    y, yt = ours(x), theirs(xt)
    assert_close(y, yt, **TOL[np.float64])
    backward_both(y, yt, [(x, xt)], rng, TOL[np.float64])
    compare_params(ours, theirs, TOL[np.float64])

def test_encoder_layers_are_copies():
    "TransformerEncoder deep-copies the layer: parameters are not shared."
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    assert len(list(enc.parameters())) == 2 * 12

def test_encoder_layer_errors(device):
    "Unknown activation (RuntimeError, as torch); a callable activation is used as it is."
    with pytest.raises(RuntimeError, match="relu/gelu"): nn.TransformerEncoderLayer(8, 2, activation="tanh")
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=F.silu).to(device)
    x = mt.randn(4, 2, 8, device=device)
    assert layer(x).shape == (4, 2, 8)
    with pytest.raises(RuntimeError, match="Need attn_mask"): layer(x, is_causal=True)

# ---------------------------------------------------------------- positions, patches, counters

def test_sinusoidal_positions():
    "sin in even columns, cos in odd ones, torch-free formula check."
    pe = attention.sinusoidal_positions(10, 6, dtype=mt.float64).numpy()
    t, i = 7, 2
    assert math.isclose(pe[t, 2 * i], math.sin(t / 10000 ** (2 * i / 6)), rel_tol=1e-12)
    assert math.isclose(pe[t, 2 * i + 1], math.cos(t / 10000 ** (2 * i / 6)), rel_tol=1e-12)

def test_patchify(device, rng):
    "as_strided patches equal the reshape/permute formula, and the gradient flows back."
    arr = rng.standard_normal((2, 3, 8, 12))
    x, xt = both(arr, device)
    tokens = attention.patchify(x, 4)
    ref = xt.reshape(2, 3, 2, 4, 3, 4).permute(0, 2, 4, 1, 3, 5).reshape(2, 6, 48)
    assert_close(tokens, ref)
    backward_both(tokens, ref, [(x, xt)], rng, TOL[np.float64])
    with pytest.raises(ValueError, match="multiple"): attention.patchify(x, 5)

def test_encoder_layer_costs():
    "The counters: parameters from the modules, MACs of the attention term."
    c = attention.encoder_layer_costs(100, 64, 4, 256)
    assert c["attention_macs"] == 2 * 100 * 100 * 64
    assert c["linear_macs"] == 4 * 100 * 64 * 64 + 2 * 100 * 64 * 256
    layer = torch.nn.TransformerEncoderLayer(64, 4, 256)
    assert attention.n_params(nn.TransformerEncoderLayer(64, 4, 256)) == sum(p.numel() for p in layer.parameters())

# ---------------------------------------------------------------- TransformerDecoderLayer, TransformerDecoder, Transformer

def perturb(module, scale=0.2):
    "Random non-default parameters: the initial zeros and ones would hide mistakes."
    with torch.no_grad():
        for p in module.parameters(): p.add_(torch.randn(p.shape, dtype=p.dtype) * scale)
    return module

def decoder_masks(rng, kind, b, l, s, dtype, device):
    "Keyword arguments (ours, torch's) for the decoder's forward: causal and padding masks."
    kw, kwt = {}, {}
    if kind in ("causal", "all"):
        causal = np.triu(np.full((l, l), -np.inf, dtype), 1)
        kw["tgt_mask"], kwt["tgt_mask"] = mask_pair(causal, device)
        kw["tgt_is_causal"] = kwt["tgt_is_causal"] = True
    if kind in ("memory", "all"):
        hide = rng.random((l, s)) < 0.4
        hide[:, 0] = False
        kw["memory_mask"], kwt["memory_mask"] = mask_pair(hide, device)
    if kind in ("padding", "all"):
        tgt_pad, mem_pad = np.zeros((b, l), bool), np.zeros((b, s), bool)
        tgt_pad[0, -2:], mem_pad[1, -3:] = True, True
        kw["tgt_key_padding_mask"], kwt["tgt_key_padding_mask"] = mask_pair(tgt_pad, device)
        kw["memory_key_padding_mask"], kwt["memory_key_padding_mask"] = mask_pair(mem_pad, device)
    return kw, kwt

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "causal", "memory", "padding", "all"])
def test_decoder_layer(device, rng, dtype, norm_first, activation, batch_first, masks):
    "One layer: outputs, target, memory and parameter gradients against torch, with loaded state."
    torch.manual_seed(0)
    kw = dict(dim_feedforward=24, dropout=0.0, activation=activation, batch_first=batch_first,
              norm_first=norm_first)
    theirs = perturb(torch.nn.TransformerDecoderLayer(12, 3, **kw).to(TORCH_DTYPE[dtype]))
    ours = load_torch_state(nn.TransformerDecoderLayer(12, 3, **kw), theirs, device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    b, l, s = 2, 6, 5
    shape = lambda n: (b, n, 12) if batch_first else (n, b, 12)
    (x, xt), (m, mt_) = (both(rng.standard_normal(shape(n)).astype(dtype), device) for n in (l, s))
    fkw, fkwt = decoder_masks(rng, masks, b, l, s, dtype, device)
    y, yt = ours(x, m, **fkw), theirs(xt, mt_, **fkwt)
    assert_close(y, yt, **TOL[dtype])
    backward_both(y, yt, [(x, xt), (m, mt_)], rng, TOL[dtype])
    compare_params(ours, theirs, TOL[dtype])

def test_decoder_layer_unbatched_and_callable_activation(device, rng):
    "A 2-D target and memory, and a callable activation, against torch."
    torch.manual_seed(2)
    theirs = perturb(torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0,
                                                      activation=torch.nn.functional.silu).double())
    ours = load_torch_state(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, activation=F.silu),
                            theirs, device)
    (x, xt), (m, mt_) = (both(rng.standard_normal((n, 8)), device) for n in (4, 3))
    y, yt = ours(x, m), theirs(xt, mt_)
    assert y.shape == (4, 8)
    assert_close(y, yt, **TOL[np.float64])
    backward_both(y, yt, [(x, xt), (m, mt_)], rng, TOL[np.float64])

@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("final_norm", [False, True])
def test_decoder_stack(device, rng, norm_first, final_norm):
    "A stack of layers with an optional final norm, in eval mode with dropout 0.1 (inactive)."
    torch.manual_seed(0)
    layer_t = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.1, batch_first=True,
                                               norm_first=norm_first)
    theirs = torch.nn.TransformerDecoder(layer_t, 3, norm=torch.nn.LayerNorm(8) if final_norm else None)
    theirs = perturb(theirs.double().eval())
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.1, batch_first=True, norm_first=norm_first)
    ours = nn.TransformerDecoder(layer, 3, norm=nn.LayerNorm(8) if final_norm else None).eval()
    ours = load_torch_state(ours, theirs, device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.layers[0].linear1.weight is not ours.layers[1].linear1.weight
    (x, xt), (m, mt_) = (both(rng.standard_normal((3, n, 8)), device) for n in (5, 4))
    fkw, fkwt = decoder_masks(rng, "all", 3, 5, 4, np.float64, device)
    y, yt = ours(x, m, **fkw), theirs(xt, mt_, **fkwt)
    assert_close(y, yt, **TOL[np.float64])
    backward_both(y, yt, [(x, xt), (m, mt_)], rng, TOL[np.float64])
    compare_params(ours, theirs, TOL[np.float64])

def test_decoder_dropout_only_in_training(device):
    "Dropout 0.5: two eval passes agree, a training pass differs."
    mt.manual_seed(0)
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.5, batch_first=True).to(device)
    x, m = mt.randn(2, 4, 8, device=device), mt.randn(2, 3, 8, device=device)
    layer.eval()
    a, b = layer(x, m).detach().numpy(), layer(x, m).detach().numpy()
    assert np.array_equal(a, b)
    layer.train()
    assert not np.allclose(a, layer(x, m).detach().numpy())

@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer(device, rng, norm_first, batch_first):
    "Encoder + decoder with every mask: outputs, source, target and parameter gradients against torch."
    torch.manual_seed(0)
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16,
              dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    theirs = perturb(torch.nn.Transformer(**kw).double())
    ours = load_torch_state(nn.Transformer(**kw), theirs, device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    b, s, l = 2, 5, 4
    shape = lambda n: (b, n, 8) if batch_first else (n, b, 8)
    (src, src_t), (tgt, tgt_t) = (both(rng.standard_normal(shape(n)), device) for n in (s, l))
    fkw, fkwt = decoder_masks(rng, "all", b, l, s, np.float64, device)
    src_pad = np.zeros((b, s), bool)
    src_pad[0, -1] = True
    fkw["src_key_padding_mask"], fkwt["src_key_padding_mask"] = mask_pair(src_pad, device)
    fkw["memory_key_padding_mask"] = fkw["src_key_padding_mask"]
    fkwt["memory_key_padding_mask"] = fkwt["src_key_padding_mask"]
    y, yt = ours(src, tgt, **fkw), theirs(src_t, tgt_t, **fkwt)
    assert_close(y, yt, **TOL[np.float64])
    backward_both(y, yt, [(src, src_t), (tgt, tgt_t)], rng, TOL[np.float64])
    compare_params(ours, theirs, TOL[np.float64])

def test_transformer_defaults_and_mask():
    "Torch's parameter shapes and Xavier initialisation; the square subsequent mask equals torch's."
    ours, theirs = nn.Transformer(16, 2, 1, 1, 32), torch.nn.Transformer(16, 2, 1, 1, 32)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    w = ours.decoder.layers[0].linear1.weight
    assert float(w.abs().max()) <= math.sqrt(6 / (16 + 32))
    for dtype, tdtype in ((None, None), (mt.float64, torch.float64)):
        mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=dtype)
        mask_t = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=tdtype)
        assert mask.dtype == to_numpy(mask_t).dtype
        assert np.array_equal(mask.numpy(), to_numpy(mask_t))

def test_decoder_errors_like_torch(device):
    "Wrong widths, mask shapes and batch sizes raise the exception types torch raises."
    torch.manual_seed(0)
    x, m = (4, 2, 8), (6, 2, 8)
    bool_mask = lambda *s: (mt.zeros(*s, dtype=mt.bool_, device=device), torch.zeros(*s, dtype=torch.bool))
    cases = [((4, 2, 7), m, {}), (x, (6, 2, 7), {}), (x, (6, 3, 8), {})]
    for name, shape in (("tgt_mask", (4, 5)), ("memory_mask", (4, 5)),
                        ("tgt_key_padding_mask", (2, 5)), ("memory_key_padding_mask", (2, 5)),
                        ("tgt_key_padding_mask", (3, 4))):
        cases.append((x, m, {name: bool_mask(*shape)}))
    cases.append((x, m, {"tgt_is_causal": (True, True)}))
    cases.append((x, m, {"memory_is_causal": (True, True)}))
    for norm_first in (False, True):
        kw = dict(dim_feedforward=16, norm_first=norm_first)
        ours = nn.TransformerDecoderLayer(8, 2, **kw).to(device)
        theirs = torch.nn.TransformerDecoderLayer(8, 2, **kw)
        for tgt_shape, mem_shape, extra in cases:
            with pytest.raises(Exception) as expected:
                theirs(torch.randn(tgt_shape), torch.randn(mem_shape), **{k: v[1] for k, v in extra.items()})
            with pytest.raises(expected.type):
                ours(mt.randn(*tgt_shape, device=device), mt.randn(*mem_shape, device=device),
                     **{k: v[0] for k, v in extra.items()})
    with pytest.raises(RuntimeError, match="relu/gelu"): nn.TransformerDecoderLayer(8, 2, activation="tanh")
    model = nn.Transformer(8, 2, 1, 1, 16).to(device)
    with pytest.raises(RuntimeError, match="batch number"):
        model(mt.randn(5, 2, 8, device=device), mt.randn(4, 3, 8, device=device))
    with pytest.raises(RuntimeError, match="feature number"):
        model(mt.randn(5, 2, 8, device=device), mt.randn(4, 2, 7, device=device))

def test_transformer_custom_parts(device, rng):
    "custom_encoder and custom_decoder replace the built ones; the output is the custom decoder's."
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 1)
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2)
    model = nn.Transformer(8, 2, custom_encoder=enc, custom_decoder=dec).to(device)
    assert model.encoder is enc and model.decoder is dec and len(model.decoder.layers) == 2
    src, tgt = mt.randn(5, 2, 8, device=device), mt.randn(3, 2, 8, device=device)
    expected = dec(tgt, enc(src)).detach().numpy()
    assert np.array_equal(model(src, tgt).detach().numpy(), expected)

def test_multihead_attention_extras_gradcheck(device, rng):
    "kdim/vdim, bias_k/bias_v and zero attention: float64 finite differences of the inputs' gradients."
    mt.manual_seed(0)
    mha = nn.MultiheadAttention(6, 2, kdim=4, vdim=3, add_bias_kv=True, add_zero_attn=True)
    mha = mha.double().to(device)
    x, k, v = (mt.tensor(rng.standard_normal(s), device=device, requires_grad=True)
               for s in ((3, 2, 6), (5, 2, 4), (5, 2, 3)))
    hide = mt.tensor(rng.random((3, 5)) < 0.5, device=device)
    assert mt.gradcheck(lambda x, k, v: mha(x, k, v, attn_mask=hide)[0], x, k, v)

def test_transformer_unbatched(device, rng):
    "2-D source and target: one sequence each, against torch."
    torch.manual_seed(3)
    kw = dict(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16,
              dropout=0.0)
    theirs = perturb(torch.nn.Transformer(**kw).double())
    ours = load_torch_state(nn.Transformer(**kw), theirs, device)
    (src, src_t), (tgt, tgt_t) = (both(rng.standard_normal((n, 8)), device) for n in (5, 3))
    mask = np.triu(np.full((3, 3), -np.inf), 1)
    y = ours(src, tgt, tgt_mask=mt.tensor(mask, device=device))
    yt = theirs(src_t, tgt_t, tgt_mask=torch.tensor(mask))
    assert y.shape == (3, 8)
    assert_close(y, yt, **TOL[np.float64])
    backward_both(y, yt, [(src, src_t), (tgt, tgt_t)], rng, TOL[np.float64])
