"Chapter 08 (normalization layers, channel dropout, norm monitoring) against PyTorch as the oracle."
import inspect, math, warnings
import numpy as np
import pytest
import torch
import minitorch_nb as mt
from minitorch_nb import nn
import minitorch_nb.nn.functional as F
from minitorch_nb.nn import norm
from oracle import assert_close, to_numpy

def torch_takes_bias(cls):
    """Whether this PyTorch's norm layer `cls` has the `bias=` argument (and shows it in its repr): an older torch
    (2.11's BatchNorm and GroupNorm) lacks it. Feature detection, not version numbers."""
    return "bias" in inspect.signature(cls).parameters

def needs_torch_bias(*classes):
    "Skip a test that passes bias= to these torch classes when this torch lacks the argument."
    missing = [c.__name__ for c in classes if not torch_takes_bias(c)]
    if missing: pytest.skip(f"this torch's {', '.join(missing)} has no bias= argument")

def same_repr(ours, theirs):
    "Our repr is torch's, when torch's repr has the bias= field ours always shows (otherwise nothing to compare)."
    if torch_takes_bias(type(theirs)): assert repr(ours) == repr(theirs)

DTYPES = [np.float32, np.float64]
TORCH_DTYPE = {np.float32: torch.float32, np.float64: torch.float64}
# float32: sums of a few hundred terms; the gradients of a normalization subtract two such sums
TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-9, atol=1e-11)}

# ---------------------------------------------------------------- helpers

def both(arr, device, requires_grad=True):
    "The same array as a minitorch_nb tensor on `device` and a torch tensor."
    ours = mt.tensor(arr, device=device)
    theirs = torch.tensor(arr)
    if requires_grad: ours.requires_grad_(); theirs.requires_grad_()
    return ours, theirs

def load_torch_state(ours, theirs, device):
    "Give `ours` the dtype and the state (parameters and buffers) of the torch module `theirs`; move it to `device`."
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    floats = [v.dtype for v in state.values() if v.dtype.kind == "f"]
    if floats: ours.to(floats[0])
    ours.load_state_dict(state)
    return ours.to(device)

def step_both(ours, theirs, arr, device, rng, tol):
    "One forward and backward of both modules on the same input and upstream gradient; compare everything."
    x, xt = both(arr, device)
    y, yt = ours(x), theirs(xt)
    assert_close(y, yt, **tol)
    g = rng.standard_normal(yt.shape).astype(arr.dtype)
    y.backward(mt.tensor(g, device=device))
    yt.backward(torch.tensor(g))
    assert_close(x.grad, xt.grad, **tol)
    ours_p, theirs_p = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert list(ours_p) == list(theirs_p)
    for name, p in theirs_p.items():
        assert_close(ours_p[name].grad, p.grad, **tol)
        ours_p[name].grad, p.grad = None, None
    ours_b, theirs_b = dict(ours.named_buffers()), dict(theirs.named_buffers())
    assert list(ours_b) == list(theirs_b)
    for name, b in theirs_b.items(): assert_close(ours_b[name], b, **tol)

def affine_params(ours, theirs, rng):
    "Random weight and bias in both modules (the defaults 1 and 0 would hide mistakes)."
    for name, p in theirs.named_parameters():
        values = rng.standard_normal(tuple(p.shape)).astype(to_numpy(p).dtype)
        with torch.no_grad(): p.copy_(torch.tensor(values))
        with mt.no_grad(): getattr(ours, name).copy_(mt.tensor(values, device=getattr(ours, name).device))

# ---------------------------------------------------------------- BatchNorm

BN_CASES = [(nn.BatchNorm1d, torch.nn.BatchNorm1d, (16, 5)), (nn.BatchNorm1d, torch.nn.BatchNorm1d, (6, 5, 7)),
            (nn.BatchNorm2d, torch.nn.BatchNorm2d, (4, 3, 5, 6)), (nn.BatchNorm3d, torch.nn.BatchNorm3d, (3, 2, 3, 4, 2))]

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", BN_CASES, ids=lambda c: f"{c[0].__name__}{c[2]}")
@pytest.mark.parametrize("momentum", [0.1, None, 0.7])
def test_batchnorm_training_then_eval(device, rng, dtype, case, momentum):
    "Several training steps (outputs, all gradients, running statistics), then eval outputs and gradients."
    ours_cls, theirs_cls, shape = case
    theirs = theirs_cls(shape[1], momentum=momentum).to(TORCH_DTYPE[dtype])
    ours = load_torch_state(ours_cls(shape[1], momentum=momentum), theirs, device)
    affine_params(ours, theirs, rng)
    for step in range(4):
        arr = (rng.standard_normal(shape) * (1 + step) + step).astype(dtype)
        step_both(ours, theirs, arr, device, rng, TOL[dtype])
    assert int(ours.num_batches_tracked) == int(theirs.num_batches_tracked) == 4
    ours.eval(); theirs.eval()
    step_both(ours, theirs, rng.standard_normal(shape).astype(dtype), device, rng, TOL[dtype])

@pytest.mark.parametrize("affine,bias,track", [(False, True, True), (True, False, True), (True, True, False),
                                               (False, True, False)])
def test_batchnorm_options(device, rng, affine, bias, track):
    "affine=False, bias=False, track_running_stats=False: parameters, buffers, train and eval as PyTorch."
    needs_torch_bias(torch.nn.BatchNorm2d)
    theirs = torch.nn.BatchNorm2d(3, affine=affine, track_running_stats=track, bias=bias)
    ours = load_torch_state(nn.BatchNorm2d(3, affine=affine, track_running_stats=track, bias=bias), theirs, device)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    affine_params(ours, theirs, rng)
    for mode in ("train", "train", "eval"):
        getattr(ours, mode)(); getattr(theirs, mode)()
        step_both(ours, theirs, rng.standard_normal((4, 3, 2, 5)).astype(np.float32), device, rng, TOL[np.float32])

def test_batchnorm_state_dict_from_torch(device, rng):
    "A trained torch BatchNorm's state_dict loads and gives torch's outputs, in eval and in train mode."
    theirs = torch.nn.BatchNorm2d(4)
    for _ in range(3): theirs(torch.randn(5, 4, 3, 3) * 2 + 1)
    affine_params(nn.BatchNorm2d(4), theirs, rng)
    ours = load_torch_state(nn.BatchNorm2d(4), theirs, device)
    assert {k: v.dtype for k, v in ours.state_dict().items()}["num_batches_tracked"] == np.int64
    for mode in ("eval", "train"):
        getattr(ours, mode)(); getattr(theirs, mode)()
        step_both(ours, theirs, rng.standard_normal((6, 4, 3, 3)).astype(np.float32), device, rng, TOL[np.float32])
    assert ours.state_dict().keys() == theirs.state_dict().keys()

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7, 4), (5, 4, 9), (3, 4, 5, 2)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_functional_batch_norm(device, rng, dtype, shape, training, affine):
    x, xt = both(rng.standard_normal(shape).astype(dtype) * 3 - 2, device)
    c = shape[1]
    rm_arr, rv_arr = rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)
    rm, rmt = both(rm_arr, device, False)
    rv, rvt = both(rv_arr, device, False)
    w, wt = both(rng.standard_normal(c).astype(dtype), device) if affine else (None, None)
    b, bt = both(rng.standard_normal(c).astype(dtype), device) if affine else (None, None)
    y = F.batch_norm(x, rm, rv, w, b, training, 0.3, 1e-3)
    yt = torch.nn.functional.batch_norm(xt, rmt, rvt, wt, bt, training, 0.3, 1e-3)
    assert_close(y, yt, **TOL[dtype])
    g = rng.standard_normal(shape).astype(dtype)
    y.backward(mt.tensor(g, device=device)); yt.backward(torch.tensor(g))
    for ours, theirs in [(x.grad, xt.grad), (rm, rmt), (rv, rvt)] + ([(w.grad, wt.grad), (b.grad, bt.grad)] if affine else []):
        assert_close(ours, theirs, **TOL[dtype])
    assert y.device == x.device and (rm.device, rv.device) == (x.device, x.device)

def test_batch_norm_without_running_stats_and_native_order(device, rng):
    "running_mean=None in training: batch statistics only; torch.batch_norm's argument order at the top level."
    x, xt = both(rng.standard_normal((6, 3, 4)).astype(np.float32), device)
    w, wt = both(rng.standard_normal(3).astype(np.float32), device)
    assert_close(F.batch_norm(x, None, None, w, training=True), torch.nn.functional.batch_norm(xt, None, None, wt, training=True))
    y = mt.batch_norm(x, w, None, None, None, True, 0.1, 1e-5, True)
    yt = torch.batch_norm(xt, wt, None, None, None, True, 0.1, 1e-5, False)
    assert_close(y, yt, **TOL[np.float32])

def test_batchnorm_non_contiguous_inputs(device, rng):
    "Transposed and sliced inputs (strided, with an offset) normalize like their contiguous copies."
    base = rng.standard_normal((6, 5, 8, 4)).astype(np.float32)
    for view in (lambda t: t.permute(0, 1, 3, 2), lambda t: t[1:, :, ::2, 1:], lambda t: t.transpose(0, 2)[:, :, :4]):
        theirs = torch.nn.BatchNorm2d(view(torch.tensor(base)).shape[1])
        ours = load_torch_state(nn.BatchNorm2d(theirs.num_features), theirs, device)
        affine_params(ours, theirs, rng)
        x, xt = both(base, device)
        y, yt = ours(view(x)), theirs(view(xt))
        assert_close(y, yt, **TOL[np.float32])
        g = rng.standard_normal(tuple(yt.shape)).astype(np.float32)
        y.backward(mt.tensor(g, device=device)); yt.backward(torch.tensor(g))
        assert_close(x.grad, xt.grad, **TOL[np.float32])
        assert_close(ours.weight.grad, theirs.weight.grad, **TOL[np.float32])
        assert_close(ours.running_var, theirs.running_var, **TOL[np.float32])

def test_batchnorm_momentum_none_is_cumulative_average(device, rng):
    "momentum=None: after k batches the running mean is the plain average of the k batch means."
    bn = nn.BatchNorm1d(3, momentum=None).to(device)
    batches = [rng.standard_normal((10, 3)).astype(np.float64) + k for k in range(5)]
    for b in batches: bn.double()(mt.tensor(b, device=device))
    np.testing.assert_allclose(to_numpy(bn.running_mean), np.mean([b.mean(0) for b in batches], 0), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(bn.running_var), np.mean([b.var(0, ddof=1) for b in batches], 0), rtol=1e-12)

def test_batch_norm_statistics_are_stable(device, rng):
    "Data with a mean far above its spread (float32): the one-pass statistics keep their digits, as two passes do."
    arr = (1e4 + rng.standard_normal((16, 3, 40, 70))).astype(np.float32)  # rows longer than one chunk
    y = F.batch_norm(mt.tensor(arr, device=device), None, None, training=True)
    ref = (arr - arr.astype(np.float64).mean((0, 2, 3), keepdims=True)) / np.sqrt(arr.astype(np.float64).var((0, 2, 3), keepdims=True) + 1e-5)
    np.testing.assert_allclose(to_numpy(y), ref, atol=2e-3)  # float32 x near 1e4 has steps of 1e-3

def test_cpu_kernels_match_formulas(rng):
    "The Numba kernels on device 'cpu' against the same formulas on numpy arrays, chunked rows included."
    x3 = rng.standard_normal((3, 4, norm.STATS_CHUNK * 2 + 77)).astype(np.float32) * 2 + 5
    mean, var = norm.channel_stats(x3)
    np.testing.assert_allclose(mean, x3.astype(np.float64).mean((0, 2)), rtol=1e-6)
    np.testing.assert_allclose(var, x3.astype(np.float64).var((0, 2)), rtol=1e-5)
    dy3 = rng.standard_normal(x3.shape).astype(np.float32)
    invstd, w = ((var + 1e-5) ** -0.5).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    cpu = lambda a: mt.tensor(a, device="cpu").array
    for batch_stats in (True, False):
        kernel = norm.bn_backward(cpu(dy3), cpu(x3), cpu(mean), cpu(invstd), cpu(w), batch_stats)
        formula = norm.bn_backward(dy3, x3, mean, invstd, w, batch_stats)
        assert type(kernel[0]) is mt.NDArray
        for k, f in zip(kernel, formula): np.testing.assert_allclose(k.to_numpy(), f, rtol=2e-4, atol=2e-4)

def test_general_path_on_ndarrays(rng):
    "Device 'strided' (NDArrays without the Numba kernels, the path device 'cuda' takes) matches torch."
    theirs = torch.nn.BatchNorm2d(3)
    ours = load_torch_state(nn.BatchNorm2d(3), theirs, "strided")
    affine_params(ours, theirs, rng)
    step_both(ours, theirs, rng.standard_normal((4, 3, 2, 3)).astype(np.float32), "strided", rng, TOL[np.float32])
    ln, lnt = nn.LayerNorm(6).to("strided"), torch.nn.LayerNorm(6)
    step_both(ln, lnt, rng.standard_normal((4, 6)).astype(np.float32), "strided", rng, TOL[np.float32])

def test_empty_batch(device):
    "An empty batch gives an empty output and leaves the running statistics alone, as in PyTorch."
    bn = nn.BatchNorm1d(3).to(device)
    y = bn(mt.zeros(0, 3, device=device, requires_grad=True))
    assert y.shape == (0, 3)
    assert to_numpy(bn.running_var).tolist() == [1.0, 1.0, 1.0]
    y.sum().backward()
    assert to_numpy(bn.weight.grad).tolist() == [0.0, 0.0, 0.0]

@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradcheck(device, rng, training):
    x = mt.tensor(rng.standard_normal((4, 3, 5)), device=device, requires_grad=True)
    w = mt.tensor(rng.standard_normal(3), device=device, requires_grad=True)
    b = mt.tensor(rng.standard_normal(3), device=device, requires_grad=True)
    rm, rv = mt.tensor(rng.standard_normal(3), device=device), mt.tensor(rng.uniform(0.5, 2, 3), device=device)
    fn = lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training, 0.0)  # momentum 0: the calls leave rm, rv alone
    assert mt.gradcheck(fn, x, w, b)
    assert mt.gradgradcheck(fn, x, w, b)

# ---------------------------------------------------------------- LayerNorm and GroupNorm

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,normalized", [((5, 8), 8), ((3, 4, 6), (6,)), ((2, 3, 4, 5), [4, 5]), ((7,), (7,)),
                                              ((2, 3, 4), (2, 3, 4))])
@pytest.mark.parametrize("affine,bias", [(True, True), (True, False), (False, True)])
def test_layernorm(device, rng, dtype, shape, normalized, affine, bias):
    needs_torch_bias(torch.nn.LayerNorm)
    theirs = torch.nn.LayerNorm(normalized, elementwise_affine=affine, bias=bias).to(TORCH_DTYPE[dtype])
    ours = load_torch_state(nn.LayerNorm(normalized, elementwise_affine=affine, bias=bias), theirs, device)
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict())
    affine_params(ours, theirs, rng)
    step_both(ours, theirs, (rng.standard_normal(shape) * 3 + 1).astype(dtype), device, rng, TOL[dtype])

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("groups,shape", [(1, (4, 6)), (3, (4, 6, 5)), (6, (2, 6, 3, 4)), (2, (3, 4, 2, 3, 2))])
@pytest.mark.parametrize("affine", [True, False])
def test_groupnorm(device, rng, dtype, groups, shape, affine):
    theirs = torch.nn.GroupNorm(groups, shape[1], affine=affine).to(TORCH_DTYPE[dtype])
    ours = load_torch_state(nn.GroupNorm(groups, shape[1], affine=affine), theirs, device)
    same_repr(ours, theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    affine_params(ours, theirs, rng)
    step_both(ours, theirs, (rng.standard_normal(shape) * 2 - 1).astype(dtype), device, rng, TOL[dtype])
    ours.eval(); theirs.eval()  # no running statistics: the same in both modes
    step_both(ours, theirs, rng.standard_normal(shape).astype(dtype), device, rng, TOL[dtype])

def test_functional_layer_and_group_norm(device, rng):
    "F.layer_norm, F.group_norm and the top-level mt.layer_norm/mt.group_norm against torch, non-contiguous input."
    arr = rng.standard_normal((4, 6, 5)).astype(np.float32)
    x, xt = both(arr, device)
    w, wt = both(rng.standard_normal(4).astype(np.float32), device)
    b, bt = both(rng.standard_normal(4).astype(np.float32), device)
    pairs = [(F.layer_norm(x.transpose(0, 2), (4,), w, b), torch.nn.functional.layer_norm(xt.transpose(0, 2), (4,), wt, bt)),
             (mt.layer_norm(x, [6, 5]), torch.layer_norm(xt, [6, 5])),
             (F.group_norm(x.transpose(0, 1), 2, w, b), torch.nn.functional.group_norm(xt.transpose(0, 1), 2, wt, bt)),
             (mt.group_norm(x[:, ::2], 3), torch.group_norm(xt[:, ::2], 3))]
    g = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for _, t in pairs]
    for (y, yt), gi in zip(pairs, g):
        assert_close(y, yt, **TOL[np.float32])
    mt.autograd.backward([y for y, _ in pairs], [mt.tensor(gi, device=device) for gi in g])
    torch.autograd.backward([yt for _, yt in pairs], [torch.tensor(gi) for gi in g])
    for ours, theirs in [(x.grad, xt.grad), (w.grad, wt.grad), (b.grad, bt.grad)]: assert_close(ours, theirs, **TOL[np.float32])

def test_layer_and_group_norm_gradcheck(device, rng):
    x = mt.tensor(rng.standard_normal((3, 4, 5)), device=device, requires_grad=True)
    w = mt.tensor(rng.standard_normal((4, 5)), device=device, requires_grad=True)
    b = mt.tensor(rng.standard_normal((4, 5)), device=device, requires_grad=True)
    assert mt.gradcheck(lambda x, w, b: F.layer_norm(x, (4, 5), w, b), x, w, b)
    assert mt.gradgradcheck(lambda x, w, b: F.layer_norm(x, (4, 5), w, b), x, w, b)
    wg = mt.tensor(rng.standard_normal(4), device=device, requires_grad=True)
    assert mt.gradcheck(lambda x, w: F.group_norm(x, 2, w, w * 0.5), x, wg)
    assert mt.gradgradcheck(lambda x, w: F.group_norm(x, 2, w), x, wg)

def test_layer_norm_erases_scale(device, rng):
    "LayerNorm output is the same for x and 10·x (+ a constant): per-sample magnitude is gone."
    x = mt.tensor(rng.standard_normal((4, 8)).astype(np.float64), device=device)
    ln = nn.LayerNorm(8, eps=0.0, elementwise_affine=False)
    np.testing.assert_allclose(to_numpy(ln(x * 10 + 3)), to_numpy(ln(x)), atol=1e-12)

# ---------------------------------------------------------------- errors, PyTorch's exception types

def _error(fn):
    try: fn()
    except Exception as e: return type(e), str(e)
    return None, None

ERROR_CASES = [
    ("bn1d batch of one", lambda t: t.nn.BatchNorm1d(3)(t.ones(1, 3))),
    ("bn2d batch of one 1x1", lambda t: t.nn.BatchNorm2d(3)(t.ones(1, 3, 1, 1))),
    ("bn1d 4-D", lambda t: t.nn.BatchNorm1d(3)(t.ones(2, 3, 2, 2))),
    ("bn2d 3-D", lambda t: t.nn.BatchNorm2d(3)(t.ones(3, 2, 2))),
    ("bn3d 4-D", lambda t: t.nn.BatchNorm3d(3)(t.ones(3, 2, 2, 2))),
    ("bn2d wrong channels", lambda t: t.nn.BatchNorm2d(3)(t.ones(2, 4, 2, 2))),
    ("bn weight size", lambda t: t.nn.functional.batch_norm(t.ones(4, 3), None, None, t.ones(4), training=True)),
    ("bn eval no stats", lambda t: t.nn.functional.batch_norm(t.ones(4, 3), None, None, training=False)),
    ("bn only mean", lambda t: t.nn.functional.batch_norm(t.ones(4, 3), t.zeros(3), None, training=True)),
    ("bn int input", lambda t: t.nn.functional.batch_norm(t.ones(4, 3, dtype=t.int64), None, None, training=True)),
    ("bn mixed dtype", lambda t: t.nn.functional.batch_norm(t.ones(4, 3, dtype=t.float64), None, None, t.ones(3), training=True)),
    ("bn eps 0 training", lambda t: t.nn.functional.batch_norm(t.ones(4, 3), None, None, training=True, eps=0.0)),
    ("bn eps negative", lambda t: t.nn.functional.batch_norm(t.ones(4, 3), t.zeros(3), t.ones(3), eps=-1.0)),
    ("bn momentum None", lambda t: t.nn.functional.batch_norm(t.ones(4, 3), t.zeros(3), t.ones(3), True, momentum=None)),
    ("bn list input", lambda t: t.nn.functional.batch_norm([1.0, 2.0], None, None, training=True)),
    ("bn 1-D input", lambda t: t.nn.functional.batch_norm(t.ones(5), None, None, training=True)),
    ("ln shape", lambda t: t.nn.functional.layer_norm(t.ones(3, 4), (5,))),
    ("ln module shape", lambda t: t.nn.LayerNorm([2, 3])(t.ones(3, 4))),
    ("ln weight shape", lambda t: t.nn.functional.layer_norm(t.ones(3, 4), (4,), t.ones(3))),
    ("ln bias shape", lambda t: t.nn.functional.layer_norm(t.ones(3, 4), (4,), t.ones(4), t.ones(2))),
    ("ln int shape", lambda t: t.nn.functional.layer_norm(t.ones(3, 4), 4)),
    ("ln empty shape", lambda t: t.nn.functional.layer_norm(t.ones(3, 4), ())),
    ("ln int input", lambda t: t.nn.functional.layer_norm(t.ones(3, 4, dtype=t.int64), (4,))),
    ("ln list input", lambda t: t.nn.functional.layer_norm([1.0, 2.0], (2,))),
    ("gn divisible ctor", lambda t: t.nn.GroupNorm(4, 6)),
    ("gn wrong channels", lambda t: t.nn.GroupNorm(2, 6)(t.ones(2, 4, 3))),
    ("gn 1-D", lambda t: t.nn.functional.group_norm(t.ones(6), 2)),
    ("gn one value per group", lambda t: t.nn.functional.group_norm(t.ones(1, 6), 6)),
    ("gn not divisible", lambda t: t.nn.functional.group_norm(t.ones(2, 5, 3), 2)),
    ("gn zero groups", lambda t: t.nn.functional.group_norm(t.ones(2, 4), 0)),
    ("gn int input", lambda t: t.nn.functional.group_norm(t.ones(2, 4, dtype=t.int64), 2)),
    ("gn list input", lambda t: t.nn.functional.group_norm([1.0, 2.0], 1)),
    ("dropout1d 4-D", lambda t: t.nn.functional.dropout1d(t.ones(2, 3, 4, 4))),
    ("dropout2d p", lambda t: t.nn.functional.dropout2d(t.ones(2, 3, 4, 4), p=1.5)),
    ("Dropout2d p", lambda t: t.nn.Dropout2d(p=-0.1)),
]

@pytest.mark.parametrize("name,fn", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_match_torch(name, fn):
    "The same exception type as PyTorch, with a message that names the problem (our words may differ)."
    theirs, _ = _error(lambda: fn(torch))
    ours, message = _error(lambda: fn(mt))
    assert theirs is not None, f"torch accepts {name}"
    assert ours is theirs, f"{name}: torch raises {theirs.__name__}, we raise {ours} ({message})"
    assert len(message) > 20

def test_batch_of_one_message():
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when training, got input size \[1, 3\]"):
        nn.BatchNorm1d(3)(mt.ones(1, 3))
    nn.BatchNorm1d(3).eval()(mt.ones(1, 3))  # eval uses the running statistics: one sample is fine
    nn.BatchNorm1d(3)(mt.ones(1, 3, 2))  # two values per channel: fine, as in PyTorch

# ---------------------------------------------------------------- channel dropout

@pytest.mark.parametrize("name,shape,mask_dims", [("dropout1d", (40, 30, 5), 2), ("dropout2d", (40, 30, 3, 2), 2),
                                                  ("dropout3d", (40, 30, 2, 2, 2), 2), ("dropout1d", (300, 7), 1),
                                                  ("dropout3d", (300, 2, 2, 3), 1)])
def test_channel_dropout_masks(device, name, shape, mask_dims):
    "Whole channels are zeroed (or all kept and scaled by 1/(1-p)); the zeroed fraction is p; the gradient is the mask."
    mt.manual_seed(0)
    p = 0.3
    x = mt.ones(*shape, device=device, requires_grad=True)
    y = getattr(F, name)(x, p)
    values = to_numpy(y)
    per_channel = values.reshape(*shape[:mask_dims], -1)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))  # one value per channel
    np.testing.assert_allclose(np.unique(per_channel), [0, 1 / (1 - p)], rtol=1e-6)
    n = per_channel[..., 0].size
    assert abs(np.mean(per_channel[..., 0] == 0) - p) < 5 * math.sqrt(p * (1 - p) / n)
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), values)

def test_channel_dropout_modes_and_reprs(device):
    for ours, theirs, shape in [(nn.Dropout1d(0.2), torch.nn.Dropout1d(0.2), (2, 3, 4)),
                                (nn.Dropout2d(), torch.nn.Dropout2d(), (2, 3, 4, 4)),
                                (nn.Dropout3d(0.4, inplace=True), torch.nn.Dropout3d(0.4, inplace=True), (2, 3, 2, 2, 2))]:
        assert repr(ours) == repr(theirs)
        x = mt.randn(*shape, device=device)
        assert ours.eval()(x) is x  # eval: the identity
        ours.train()
        with mt.no_grad(): dropped = to_numpy(ours(mt.ones(64, *shape[1:], device=device)))
        assert 0 < np.mean(dropped == 0) < 1  # no_grad does not turn dropout off
    assert np.all(to_numpy(F.dropout2d(mt.ones(2, 3, 4, 4, device=device), 1.0)) == 0)
    x = mt.ones(2, 3, 4, 4, device=device)
    assert F.dropout2d(x, 0.0) is x and F.dropout2d(x, 0.5, training=False) is x

@pytest.mark.parametrize("fn,shape", [("dropout2d", (2, 3, 4)), ("dropout2d", (2, 3)), ("dropout2d", (2, 3, 2, 2, 2)),
                                      ("dropout3d", (2, 3, 4))])
def test_channel_dropout_warnings(fn, shape):
    "PyTorch's deprecation warnings for inputs of the wrong rank, the same category and the same text."
    def caught(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(lib.nn.functional, fn)(lib.ones(*shape))
        return [(x.category, str(x.message)) for x in w]
    assert caught(mt) == caught(torch) and caught(mt)

# ---------------------------------------------------------------- modules move, reprs, faces

def test_reprs_and_faces():
    for ours, theirs in [(nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)),
                         (nn.BatchNorm1d(3, momentum=None, affine=False, track_running_stats=False),
                          torch.nn.BatchNorm1d(3, momentum=None, affine=False, track_running_stats=False)),
                         (nn.LayerNorm([2, 3], elementwise_affine=False), torch.nn.LayerNorm([2, 3], elementwise_affine=False)),
                         (nn.GroupNorm(2, 4, affine=False), torch.nn.GroupNorm(2, 4, affine=False))]:
        same_repr(ours, theirs)
    if torch_takes_bias(torch.nn.GroupNorm):
        assert repr(nn.GroupNorm(2, 4, bias=False)) == repr(torch.nn.GroupNorm(2, 4, bias=False))
    assert F.batch_norm is norm.batch_norm and nn.BatchNorm2d is norm.BatchNorm2d and F.dropout2d is norm.dropout2d
    bn = nn.BatchNorm1d(3, track_running_stats=False)
    assert (bn.running_mean, bn.num_batches_tracked, list(bn.named_buffers())) == (None, None, [])

def test_module_to_moves_buffers(rng):
    "Training on device 'cpu' gives what training on 'numpy' gives, buffers included."
    arrays = [rng.standard_normal((8, 3, 4)).astype(np.float32) for _ in range(3)]
    results = {}
    for device in ("numpy", "cpu"):
        bn = nn.BatchNorm1d(3).to(device)
        assert bn.running_mean.device == device and bn.num_batches_tracked.device == device
        for a in arrays: bn(mt.tensor(a, device=device))
        results[device] = [to_numpy(b) for b in bn.buffers()]
    for a, b in zip(*results.values()): np.testing.assert_allclose(a, b, rtol=1e-6)

# ---------------------------------------------------------------- NormMonitor

def test_norm_monitor_records_each_layer(rng):
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    monitor = norm.NormMonitor(model)
    assert monitor.layers == [model[0], model[2]]
    x = mt.tensor(rng.standard_normal((5, 4)).astype(np.float32))
    for _ in range(3):
        model.zero_grad()
        model(x).sum().backward()
        monitor.record()
    assert np.asarray(monitor.grads).shape == (3, 2)
    h = model[0](x)
    np.testing.assert_allclose(monitor.activations[-1][0], np.sqrt(np.mean(to_numpy(h) ** 2)), rtol=1e-5)
    np.testing.assert_allclose(monitor.grads[-1][1], np.linalg.norm(to_numpy(model[2].weight.grad)), rtol=1e-5)
    monitor.remove()
    model(x)
    assert len(monitor.activations) == 3 and not model[0]._forward_hooks

# ---------------------------------------------------------------- device "cuda": the general path, in the simulator

def test_norms_on_cuda_under_the_simulator():
    "BatchNorm2d, LayerNorm and GroupNorm on device 'cuda' (Numba's simulator, a child process) match torch."
    import os, subprocess, sys
    from pathlib import Path
    script = Path(__file__).with_name("norm_cuda_sim.py")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=os.pathsep.join([str(script.parent.parent), str(script.parent)]))
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "normalization simulator checks passed" in result.stdout, result.stdout

def test_factory_arguments_and_resets(rng):
    "device= and dtype= place parameters and buffers as PyTorch's factory arguments do; the resets restore them."
    bn = nn.BatchNorm2d(3, device="cpu", dtype=mt.float64)
    assert {(str(t.device), str(t.dtype)) for t in bn.state_dict().values()} == {("cpu", "float64"), ("cpu", "int64")}
    for mod in (nn.LayerNorm((2, 3), device="cpu", dtype=mt.float64), nn.GroupNorm(1, 3, device="cpu", dtype=mt.float64)):
        assert {(str(p.device), str(p.dtype)) for p in mod.parameters()} == {("cpu", "float64")}
    ours, theirs = nn.BatchNorm1d(4), torch.nn.BatchNorm1d(4)
    x = rng.standard_normal((8, 4)).astype(np.float32) * 3 + 2
    ours(mt.tensor(x)); theirs(torch.tensor(x))
    ours.reset_running_stats(); theirs.reset_running_stats()
    for (name, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_array_equal(to_numpy(a), b.numpy(), err_msg=name)
    with mt.no_grad(): ours.weight.fill_(3.0)
    ours.reset_parameters()
    assert to_numpy(ours.weight).tolist() == [1.0] * 4 and to_numpy(ours.bias).tolist() == [0.0] * 4

def test_small_cnn_with_batchnorm_matches_torchs_conv_bn_relu_pool(device, rng):
    "Chapter 07's small_cnn(norm=BatchNorm2d), in training mode, against torch's conv-BN-ReLU-pool stages."
    from minitorch_nb.nn.conv import small_cnn
    theirs = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Dropout(0.0), torch.nn.Linear(16 * 4 * 4, 10))
    ours = small_cnn(widths=(8, 16), image_size=16, dropout=0.0, norm=nn.BatchNorm2d)
    assert [type(m).__name__ for m in ours] == [type(m).__name__ for m in theirs]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    with torch.no_grad():
        for m in theirs:
            if isinstance(m, torch.nn.BatchNorm2d):  # weight and bias away from 1 and 0, which would hide mistakes
                m.weight.copy_(torch.tensor(rng.standard_normal(m.num_features)))
                m.bias.copy_(torch.tensor(rng.standard_normal(m.num_features)))
    load_torch_state(ours, theirs, device)
    step_both(ours, theirs, rng.standard_normal((6, 1, 16, 16)).astype(np.float32), device, rng, TOL[np.float32])
