"Chapter 09a: activation checkpointing (mt.utils.checkpoint) against PyTorch's torch.utils.checkpoint."
import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp
import minitorch_nb as mt
from minitorch_nb import nn
from minitorch_nb.utils.checkpoint import checkpoint, checkpoint_sequential

def pair(seed=0, blocks=6, width=8, p=0.0):
    "The same stack of Linear + Tanh (+ Dropout) blocks in minitorch_nb and in torch."
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for _ in range(blocks):
        w, b = rng.standard_normal((width, width)).astype(np.float32) / 3, rng.standard_normal(width).astype(np.float32)
        lin, tlin = nn.Linear(width, width), torch.nn.Linear(width, width)
        lin.load_state_dict({"weight": w, "bias": b})
        with torch.no_grad(): tlin.weight.copy_(torch.tensor(w)); tlin.bias.copy_(torch.tensor(b))
        ours.append(nn.Sequential(lin, nn.Tanh())); theirs.append(torch.nn.Sequential(tlin, torch.nn.Tanh()))
    return nn.Sequential(*ours), torch.nn.Sequential(*theirs)

def grads(module):
    return [p.grad.detach().numpy().copy() for p in module.parameters()]

@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_gradients_match_torch_and_plain(device, use_reentrant):
    ours, theirs = pair()
    ours.to(device)
    x = np.random.default_rng(1).standard_normal((5, 8)).astype(np.float32)
    xo, xt = mt.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    checkpoint(ours, xo, use_reentrant=use_reentrant).square().sum().backward()
    tcp.checkpoint(theirs, xt, use_reentrant=use_reentrant).square().sum().backward()
    for a, b in zip(grads(ours), grads(theirs)): np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xo.grad.to("numpy").numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
    checked = [np.asarray(g) for g in grads(ours)]
    ours.zero_grad()
    ours(mt.tensor(x, device=device)).square().sum().backward()
    for a, b in zip(checked, grads(ours)): np.testing.assert_array_equal(a, np.asarray(b))  # bit-exact recompute

def test_parameters_get_gradients_when_no_input_requires_grad():
    "use_reentrant=False (the default): the parameters inside get gradients through the checkpoint node."
    ours, theirs = pair()
    x = np.ones((2, 8), np.float32)
    y = checkpoint(ours, mt.tensor(x))
    assert y.requires_grad
    y.sum().backward()
    tcp.checkpoint(theirs, torch.tensor(x), use_reentrant=False).sum().backward()
    for a, b in zip(grads(ours), grads(theirs)): np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)

def test_reentrant_warns_without_inputs_requiring_grad():
    ours, _ = pair()
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(ours, mt.ones(2, 8), use_reentrant=True)
    assert not y.requires_grad

def test_autograd_grad_through_checkpoint():
    ours, theirs = pair()
    x = np.ones((2, 8), np.float32)
    xo, xt = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    w, tw = ours[0][0].weight, theirs[0][0].weight
    go = mt.autograd.grad(checkpoint(ours, xo).sum(), [xo, w])
    gt = torch.autograd.grad(tcp.checkpoint(theirs, xt, use_reentrant=False).sum(), [xt, tw])
    for a, b in zip(go, gt): np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    assert w.grad is None  # autograd.grad leaves .grad alone

def test_dropout_mask_is_replayed_and_rng_continues(device):
    net = nn.Sequential(nn.Linear(16, 16), nn.Dropout(0.5), nn.Linear(16, 1)).to(device)
    x = mt.randn(4, 16, device=device)
    def run(ckpt, preserve=True):
        mt.manual_seed(3); net.zero_grad()
        y = checkpoint(net, x, preserve_rng_state=preserve) if ckpt else net(x)
        y.sum().backward()
        return np.asarray(net[0].weight.grad.to("numpy").numpy()).copy(), mt.rand(3).numpy()
    (g0, r0), (g1, r1), (g2, _) = run(False), run(True), run(True, preserve=False)
    np.testing.assert_array_equal(g0, g1)
    np.testing.assert_array_equal(r0, r1)  # the recomputation does not shift the random stream
    assert not np.array_equal(g0, g2)

def test_torch_dropout_replay_matches_ours_in_kind():
    "The oracle's behaviour the test above mirrors: same gradients with and without checkpointing."
    tnet = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Dropout(0.5), torch.nn.Linear(16, 1))
    x = torch.randn(4, 16)
    def run(ckpt):
        torch.manual_seed(3); tnet.zero_grad()
        (tcp.checkpoint(tnet, x, use_reentrant=False) if ckpt else tnet(x)).sum().backward()
        return tnet[0].weight.grad.clone(), torch.rand(3)
    (g0, r0), (g1, r1) = run(False), run(True)
    assert torch.equal(g0, g1) and torch.equal(r0, r1)

@pytest.mark.parametrize("segments", [1, 2, 3, 4, 6])
def test_checkpoint_sequential_matches_torch(segments, device):
    ours, theirs = pair(blocks=6)
    ours.to(device)
    x = np.random.default_rng(2).standard_normal((3, 8)).astype(np.float32)
    xo, xt = mt.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo = checkpoint_sequential(ours, segments, xo)
    yt = tcp.checkpoint_sequential(theirs, segments, xt, use_reentrant=False)
    np.testing.assert_allclose(yo.to("numpy").detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    yo.sum().backward(); yt.sum().backward()
    for a, b in zip(grads(ours), grads(theirs)): np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xo.grad.to("numpy").numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)

def test_checkpoint_sequential_takes_a_list_and_kwargs():
    ours, theirs = pair(blocks=4)
    x = np.ones((2, 8), np.float32)
    yo = checkpoint_sequential(list(ours.children()), 2, mt.tensor(x), preserve_rng_state=False)
    yt = tcp.checkpoint_sequential(list(theirs.children()), 2, torch.tensor(x), use_reentrant=False,
                                   preserve_rng_state=False)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)

def test_multiple_outputs_and_keyword_arguments():
    def f(a, b, scale=1.0): return (a * b * scale).tanh(), (a + b).sin()
    def tf(a, b, scale=1.0): return (a * b * scale).tanh(), (a + b).sin()
    a, b = np.linspace(-1, 1, 5).astype(np.float32), np.linspace(2, 0, 5).astype(np.float32)
    ao, bo = mt.tensor(a, requires_grad=True), mt.tensor(b, requires_grad=True)
    at, bt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    u, v = checkpoint(f, ao, bo, scale=2.0)
    ut, vt = tcp.checkpoint(tf, at, bt, scale=2.0, use_reentrant=False)
    (u.sum() + 3 * v.sum()).backward(); (ut.sum() + 3 * vt.sum()).backward()
    np.testing.assert_allclose(ao.grad.numpy(), at.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(bo.grad.numpy(), bt.grad.numpy(), rtol=1e-6)
    # only one of the outputs used
    ao.grad = None
    checkpoint(f, ao, bo)[1].sum().backward()
    at.grad = None
    tcp.checkpoint(tf, at, bt, use_reentrant=False)[1].sum().backward()
    np.testing.assert_allclose(ao.grad.numpy(), at.grad.numpy(), rtol=1e-6)

def test_errors():
    with pytest.raises(ValueError, match="Unexpected keyword arguments"):
        checkpoint(lambda x, k=1: x * k, mt.ones(2, requires_grad=True), use_reentrant=True, k=2)
    with pytest.raises(ValueError, match="Unexpected keyword arguments"):
        tcp.checkpoint(lambda x, k=1: x * k, torch.ones(2, requires_grad=True), use_reentrant=True, k=2)
    h = mt.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="pass that tensor as an argument"):
        checkpoint(lambda t: t * h, mt.ones(3, requires_grad=True))
    with pytest.raises(TypeError, match="must return a Tensor"):
        checkpoint(lambda t: [t], mt.ones(3, requires_grad=True))
    with pytest.raises(ValueError, match="segments"):
        checkpoint_sequential([nn.Tanh()], 0, mt.ones(3))
    with pytest.raises(ValueError, match="at most one segment per layer"):
        checkpoint_sequential([nn.Tanh()] * 2, 3, mt.ones(3, requires_grad=True))
    with pytest.raises(ValueError):  # torch: the same type, from range()
        tcp.checkpoint_sequential([torch.nn.Tanh()] * 2, 3, torch.ones(3, requires_grad=True), use_reentrant=False)

def test_under_no_grad_it_just_runs():
    net, _ = pair()
    with mt.no_grad(): y = checkpoint(net, mt.ones(2, 8))
    assert y.grad_fn is None and not y.requires_grad

def test_memory_at_sqrt_n_segments():
    "64 blocks: √N = 8 segments keep at most a third of the plain step's peak memory."
    from minitorch_nb.memory import measure_memory
    mt.manual_seed(0)
    net = nn.Sequential(*[nn.Sequential(nn.Linear(64, 64), nn.ReLU()) for _ in range(64)])
    x = mt.randn(128, 64)
    def step(k): checkpoint_sequential(net, k, x).sum().backward()
    step(1)
    peak = {k: measure_memory(lambda: step(k))[2] for k in (1, 8)}
    assert peak[8] <= peak[1] / 3

def test_second_derivatives_through_checkpoint():
    "backward(create_graph=True) through a checkpoint gives differentiable gradients, as PyTorch's does."
    def f(t): return (t * t * t).sin()
    x = np.linspace(-1, 1, 5).astype(np.float64)
    xo, xt = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    h, ht = xo * 2, xt * 2   # a non-leaf input
    g, = mt.autograd.grad(checkpoint(f, h).sum(), xo, create_graph=True)
    gt, = torch.autograd.grad(tcp.checkpoint(f, ht, use_reentrant=False).sum(), xt, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy(), rtol=1e-12)
    g.sum().backward(); gt.sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-12)

def _brute_force_plan(flops, saved, inputs, budget):
    "Every way to cut the chain into runs, each kept or checkpointed: the least recomputation that fits."
    import itertools
    n, best = len(flops), None
    for cuts in itertools.product([False, True], repeat=n - 1):
        bounds = [0] + [i + 1 for i, c in enumerate(cuts) if c] + [n]
        runs = list(zip(bounds, bounds[1:]))
        for flags in itertools.product([False, True], repeat=len(runs)):
            if any(not f and b - a > 1 for (a, b), f in zip(runs, flags)): continue  # kept runs are single layers
            kept = sum(sum(saved[a:b]) if not f else inputs[a] for (a, b), f in zip(runs, flags))
            cap = max([sum(saved[a:b]) for (a, b), f in zip(runs, flags) if f] or [0])
            cost = sum(sum(flops[a:b]) for (a, b), f in zip(runs, flags) if f)
            if kept + cap <= budget and (best is None or (cost, kept + cap) < best): best = (cost, kept + cap)
    return best

@pytest.mark.parametrize("seed", range(6))
def test_plan_checkpoints_is_optimal(seed):
    from minitorch_nb.memory import plan_checkpoints
    rng = np.random.default_rng(seed)
    n = 6
    flops, saved, inputs = (list(rng.integers(1, 20, n)), list(rng.integers(1, 4, n)), list(rng.integers(1, 3, n)))
    for budget in (4, 7, 10, 30):
        found = plan_checkpoints(flops, saved, inputs, budget)
        expected = _brute_force_plan(flops, saved, inputs, budget)
        assert (found is None) == (expected is None)
        if found: assert found[:2] == expected

def test_backward_twice_needs_retain_graph_like_torch():
    ours, theirs = pair(blocks=2)
    x = np.ones((2, 8), np.float32)
    xo, xt = mt.tensor(x, requires_grad=True) * 1, torch.tensor(x, requires_grad=True) * 1
    y, yt = checkpoint(ours, xo).sum(), tcp.checkpoint(theirs, xt, use_reentrant=False).sum()
    y.backward(retain_graph=True); yt.backward(retain_graph=True)
    y.backward(); yt.backward()   # a second pass through the retained graph adds the gradients again
    for a, b in zip(grads(ours), grads(theirs)): np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError): y.backward()
    with pytest.raises(RuntimeError): yt.backward()
