"Chapter 02 (nn, init, functional, save/load) against PyTorch as the oracle."
import io, math, pickle
import numpy as np
import pytest
import torch
import minitorch_nb as mt
from minitorch_nb import nn
import minitorch_nb.nn.functional as F
from minitorch_nb.nn import init
from oracle import assert_close, to_numpy

DTYPES = [np.float32, np.float64]

# ---------------------------------------------------------------- helpers

def copy_from_torch(ours, theirs, device):
    "Give `ours` the weights of the torch module `theirs` (through load_state_dict of numpy arrays)."
    ours.to(device)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours

def both_inputs(arr, device):
    x = mt.tensor(arr, device=device, requires_grad=arr.dtype.kind == "f")
    xt = torch.tensor(arr, requires_grad=arr.dtype.kind == "f")
    return x, xt

def check_module(ours, theirs, arr, device, rng, tol=None):
    "Same forward values, input gradient and parameter gradients for a random upstream gradient."
    tol = tol or {}
    x, xt = both_inputs(arr, device)
    y, yt = ours(x), theirs(xt)
    assert_close(y, yt, **tol)
    g = rng.standard_normal(yt.shape).astype(to_numpy(yt).dtype)
    y.backward(mt.tensor(g, device=device))
    yt.backward(torch.tensor(g))
    if xt.requires_grad: assert_close(x.grad, xt.grad, **tol)
    ours_p, theirs_p = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert list(ours_p) == list(theirs_p)
    for name, p in theirs_p.items():
        assert_close(ours_p[name].grad, p.grad, **tol)

def torch_module(m, dtype):
    return m.to(torch.float64) if dtype == np.float64 else m

# ---------------------------------------------------------------- layers against torch

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5,), (4, 7), (2, 3, 6)])
def test_linear_matches_torch(device, rng, dtype, bias, shape):
    in_f, out_f = shape[-1], int(rng.integers(1, 9))
    theirs = torch_module(torch.nn.Linear(in_f, out_f, bias=bias), dtype)
    ours = copy_from_torch(nn.Linear(in_f, out_f, bias=bias), theirs, device).to(dtype)
    check_module(ours, theirs, rng.standard_normal(shape).astype(dtype), device, rng)

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make", [
    lambda t: t.ReLU(), lambda t: t.Tanh(), lambda t: t.Sigmoid(), lambda t: t.GELU(),
    lambda t: t.GELU(approximate="tanh"), lambda t: t.Flatten(), lambda t: t.Flatten(0, 1),
    lambda t: t.Softmax(dim=1), lambda t: t.LogSoftmax(dim=-1), lambda t: t.Identity()])
def test_activations_match_torch(device, rng, dtype, make):
    arr = (rng.standard_normal((3, 4, 5)) * 3).astype(dtype)
    check_module(make(nn), make(torch.nn), arr, device, rng)

@pytest.mark.parametrize("dtype", DTYPES)
def test_mlp_matches_torch(device, rng, dtype):
    make = lambda t: t.Sequential(t.Linear(6, 8), t.ReLU(), t.Linear(8, 8), t.GELU(), t.Linear(8, 3))
    theirs = torch_module(make(torch.nn), dtype)
    ours = copy_from_torch(make(nn), theirs, device).to(dtype)
    check_module(ours, theirs, rng.standard_normal((10, 6)).astype(dtype), device, rng)

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_matches_torch(device, rng, dtype, padding_idx):
    theirs = torch_module(torch.nn.Embedding(6, 4, padding_idx=padding_idx), dtype)
    ours = copy_from_torch(nn.Embedding(6, 4, padding_idx=padding_idx), theirs, device).to(dtype)
    idx = np.array([[0, 2, 2, 5], [5, 5, 1, 2]])  # repeated indices: the gradient is a scatter-add
    check_module(ours, theirs, idx, device, rng)
    assert repr(ours) == repr(theirs)

def test_embedding_padding_row_starts_at_zero():
    e = nn.Embedding(5, 3, padding_idx=1)
    assert np.all(e.weight.detach().numpy()[1] == 0)

def test_erf_and_gelu_against_references():
    xs = np.concatenate([np.linspace(-8, 8, 4001), [0.0, 1e-300, -1e-12, 2.9999999, 3.0, 6.0, np.inf, -np.inf]])
    ours = F_erf(xs)
    exact = np.array([math.erf(v) for v in xs])
    np.testing.assert_allclose(ours, exact, rtol=4e-15, atol=1e-300)
    np.testing.assert_allclose(ours, torch.erf(torch.tensor(xs)).numpy(), rtol=4e-15, atol=1e-300)

def F_erf(xs):
    return F.erf(mt.tensor(xs)).numpy()

@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradient_and_double_backward(approximate):
    x = mt.tensor(np.linspace(-5, 5, 41), requires_grad=True)
    xt = torch.tensor(np.linspace(-5, 5, 41), requires_grad=True)
    g, = mt.autograd.grad(F.gelu(x, approximate).sum(), x, create_graph=True)
    gt, = torch.autograd.grad(torch.nn.functional.gelu(xt, approximate=approximate).sum(), xt, create_graph=True)
    assert_close(g, gt)
    gg, = mt.autograd.grad(g.sum(), x)
    ggt, = torch.autograd.grad(gt.sum(), xt)
    assert_close(gg, ggt)

def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError, match="approximate"): nn.GELU("fast")

# ---------------------------------------------------------------- losses against torch

def loss_inputs(rng, dtype, shape, device):
    arr = (rng.standard_normal(shape) * 2).astype(dtype)
    return both_inputs(arr, device)

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(7, 5), (5,), (3, 4, 2, 2)])
def test_cross_entropy_matches_torch(device, rng, dtype, reduction, label_smoothing, weighted, shape):
    x, xt = loss_inputs(rng, dtype, shape, device)
    n_classes = shape[1] if len(shape) > 1 else shape[0]
    target_shape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    target = rng.integers(0, n_classes, target_shape)
    if target.ndim: target.reshape(-1)[:2] = -100  # ignored entries
    w = rng.uniform(0.5, 2, n_classes).astype(dtype) if weighted else None
    ours = nn.CrossEntropyLoss(None if w is None else mt.tensor(w, device=device), reduction=reduction,
                               label_smoothing=label_smoothing)
    theirs = torch.nn.CrossEntropyLoss(None if w is None else torch.tensor(w), reduction=reduction,
                                       label_smoothing=label_smoothing)
    t = mt.tensor(target, device=device)
    loss, loss_t = ours(x, t), theirs(xt, torch.tensor(target))
    assert_close(loss, loss_t)
    g = rng.standard_normal(loss_t.shape).astype(dtype)
    loss.backward(mt.tensor(g, device=device))
    loss_t.backward(torch.tensor(g))
    assert_close(x.grad, xt.grad)

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probability_targets_match_torch(device, rng, dtype, reduction, label_smoothing, weighted):
    x, xt = loss_inputs(rng, dtype, (6, 4), device)
    probs = rng.dirichlet(np.ones(4), 6).astype(dtype)
    w = rng.uniform(0.5, 2, 4).astype(dtype) if weighted else None
    loss = F.cross_entropy(x, mt.tensor(probs, device=device), None if w is None else mt.tensor(w, device=device),
                           reduction=reduction, label_smoothing=label_smoothing)
    loss_t = torch.nn.functional.cross_entropy(xt, torch.tensor(probs), None if w is None else torch.tensor(w),
                                               reduction=reduction, label_smoothing=label_smoothing)
    assert_close(loss, loss_t)
    loss.sum().backward()
    loss_t.sum().backward()
    assert_close(x.grad, xt.grad)

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_matches_torch(device, rng, dtype, reduction, weighted):
    x, xt = loss_inputs(rng, dtype, (8, 5), device)
    target = rng.integers(0, 5, 8)
    target[3] = 7  # ignore_index=7 below
    w = rng.uniform(0.5, 2, 5).astype(dtype) if weighted else None
    loss = nn.NLLLoss(None if w is None else mt.tensor(w, device=device), ignore_index=7, reduction=reduction)(
        x, mt.tensor(target, device=device))
    loss_t = torch.nn.NLLLoss(None if w is None else torch.tensor(w), ignore_index=7, reduction=reduction)(
        xt, torch.tensor(target))
    assert_close(loss, loss_t)
    loss.sum().backward()
    loss_t.sum().backward()
    assert_close(x.grad, xt.grad)

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_torch(device, rng, dtype, reduction):
    x, xt = loss_inputs(rng, dtype, (4, 3), device)
    target = rng.standard_normal((4, 3)).astype(dtype)
    loss = nn.MSELoss(reduction=reduction)(x, mt.tensor(target, device=device))
    loss_t = torch.nn.MSELoss(reduction=reduction)(xt, torch.tensor(target))
    assert_close(loss, loss_t)
    loss.sum().backward()
    loss_t.sum().backward()
    assert_close(x.grad, xt.grad)

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weights", [False, True])
def test_bce_with_logits_matches_torch(device, rng, dtype, reduction, weights):
    arr = np.concatenate([rng.standard_normal(10) * 3, [-800.0, -40.0, 40.0, 800.0]]).astype(dtype)  # extremes too
    x, xt = both_inputs(arr, device)
    target = rng.uniform(0, 1, arr.shape).astype(dtype)
    w = rng.uniform(0.5, 2, arr.shape).astype(dtype) if weights else None
    pw = rng.uniform(0.5, 3, arr.shape).astype(dtype) if weights else None
    wrap = lambda a, lib: None if a is None else (mt.tensor(a, device=device) if lib is mt else torch.tensor(a))
    loss = nn.BCEWithLogitsLoss(wrap(w, mt), reduction=reduction, pos_weight=wrap(pw, mt))(
        x, mt.tensor(target, device=device))
    loss_t = torch.nn.BCEWithLogitsLoss(wrap(w, torch), reduction=reduction, pos_weight=wrap(pw, torch))(
        xt, torch.tensor(target))
    assert np.all(np.isfinite(to_numpy(loss)))
    assert_close(loss, loss_t)
    loss.sum().backward()
    loss_t.sum().backward()
    assert_close(x.grad, xt.grad)

def test_loss_errors_are_clear():
    x = mt.randn(4, 3)
    with pytest.raises(IndexError, match="target 3 is out of bounds for 3 classes"):
        F.cross_entropy(x, mt.tensor([0, 1, 2, 3]))
    with pytest.raises(ValueError, match=r"expected target of shape \[4\].*got \[4, 1\]"):
        F.cross_entropy(x, mt.tensor([[0], [1], [2], [0]]))
    with pytest.raises(ValueError, match="probability targets"):
        F.cross_entropy(x, mt.rand(4, 2))
    with pytest.raises(TypeError, match="class indices"):
        F.nll_loss(x, mt.rand(4))
    with pytest.raises(ValueError, match=r"\[4, 1\].*\[4\]"):
        F.mse_loss(mt.randn(4, 1), mt.randn(4))
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="average")
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(x, mt.tensor([0, 1, 2, 0]), label_smoothing=1.5)

# ---------------------------------------------------------------- functional against torch.nn.functional

@pytest.mark.parametrize("name, args", [
    ("relu", ()), ("tanh", ()), ("sigmoid", ()), ("gelu", ()), ("softmax", (1,)), ("log_softmax", (0,)),
    ("logsigmoid", ())])
def test_functional_matches_torch(rng, name, args):
    arr = rng.standard_normal((5, 4)) * 4
    x, xt = both_inputs(arr, "numpy")
    y, yt = getattr(F, name)(x, *args), getattr(torch.nn.functional, name)(xt, *args)
    assert_close(y, yt)
    y.sum().backward()
    yt.sum().backward()
    assert_close(x.grad, xt.grad)

def test_functional_linear_and_embedding(rng):
    w, wt = both_inputs(rng.standard_normal((3, 5)), "numpy")
    x, xt = both_inputs(rng.standard_normal((2, 5)), "numpy")
    assert_close(F.linear(x, w), torch.nn.functional.linear(xt, wt))
    idx = np.array([4, 0, 0, 2])
    e, et = both_inputs(rng.standard_normal((5, 2)), "numpy")
    F.embedding(mt.tensor(idx), e).sum().backward()
    torch.nn.functional.embedding(torch.tensor(idx), et).sum().backward()
    assert_close(e.grad, et.grad)

def test_linear_errors_name_the_shapes():
    lin = nn.Linear(4, 2)
    with pytest.raises(RuntimeError, match=r"\[3, 5\].*\[2, 4\]"): lin(mt.randn(3, 5))
    with pytest.raises(RuntimeError, match="float64 but weight is float32"): lin(mt.randn(3, 4).double())

def test_embedding_rejects_bad_indices():
    e = nn.Embedding(4, 2)
    with pytest.raises(IndexError, match="index 4 is out of range for 4 rows"): e(mt.tensor([0, 4]))
    with pytest.raises(IndexError, match="index -1"): e(mt.tensor([-1]))
    with pytest.raises(TypeError, match="integer indices"): e(mt.tensor([0.0, 1.0]))

# ---------------------------------------------------------------- Module mechanics

def make_mlp(lib):
    return lib.Sequential(lib.Linear(4, 8), lib.ReLU(), lib.Linear(8, 3))

class Stats(nn.Module):
    "Our module with two parameters, two persistent buffers, a non-persistent one and a child."
    def __init__(self, lib_tensor):
        super().__init__()
        self.weight = nn.Parameter(mt.ones(3))
        self.bias = nn.Parameter(mt.zeros(3))
        self.register_buffer("running_mean", mt.zeros(3))
        self.register_buffer("num_batches_tracked", mt.tensor(0))
        self.register_buffer("scratch", mt.zeros(3), persistent=False)
        self.fc = nn.Linear(3, 2)

class TorchStats(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(3))
        self.bias = torch.nn.Parameter(torch.zeros(3))
        self.register_buffer("running_mean", torch.zeros(3))
        self.register_buffer("num_batches_tracked", torch.tensor(0))
        self.register_buffer("scratch", torch.zeros(3), persistent=False)
        self.fc = torch.nn.Linear(3, 2)

def test_names_and_order_match_torch():
    ours, theirs = make_mlp(nn), make_mlp(torch.nn)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    a, b = Stats(mt), TorchStats()
    assert list(a.state_dict()) == list(b.state_dict())
    assert [n for n, _ in a.named_buffers()] == [n for n, _ in b.named_buffers()]
    assert [n for n, _ in a.named_parameters()] == [n for n, _ in b.named_parameters()]
    nested = lambda lib: lib.Sequential(lib.Sequential(lib.Linear(2, 2), lib.Tanh()), lib.ModuleList([lib.Linear(2, 2)]))
    assert list(nested(nn).state_dict()) == list(nested(torch.nn).state_dict())

def test_repr_matches_torch():
    make = lambda t: t.Sequential(t.Linear(784, 256), t.ReLU(), t.Dropout(0.2), t.Linear(256, 10, bias=False),
                                  t.ModuleList([t.Linear(2, 2), t.Linear(2, 2), t.Tanh()]), t.GELU("tanh"),
                                  t.Flatten(), t.Embedding(10, 3), t.Sigmoid(), t.Identity(), t.LogSoftmax(1))
    assert repr(make(nn)) == repr(make(torch.nn))
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())

def test_shared_parameters_are_counted_once():
    lin = nn.Linear(3, 3)
    model = nn.Sequential(lin, nn.ReLU(), lin)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
    tmodel.append(tmodel[0])
    assert len(list(model.parameters())) == len(list(tmodel.parameters())) == 2
    assert list(model.state_dict()) == list(tmodel.state_dict())

def test_registration_rules():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(mt.ones(2))
            self.plain = mt.ones(2)  # a plain tensor attribute is not registered
            self.child = nn.Linear(2, 2)
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["w", "child.weight", "child.bias"]
    with pytest.raises(TypeError, match="cannot assign a Tensor to parameter 'w'"): net.w = mt.ones(2)
    net.w = None
    assert [n for n, _ in net.named_parameters()] == ["child.weight", "child.bias"]
    with pytest.raises(KeyError, match="already exists"): net.register_buffer("plain", mt.ones(1))
    with pytest.raises(TypeError, match="register_buffer"): net.register_parameter("q", mt.ones(1))
    with pytest.raises(KeyError, match=r"'\.'"): net.register_buffer("a.b", mt.ones(1))
    del net.child
    assert not hasattr(net, "child")
    class Forgot(nn.Module):
        def __init__(self): self.w = nn.Parameter(mt.ones(1))
    with pytest.raises(AttributeError, match="super\\(\\).__init__\\(\\)"): Forgot()
    with pytest.raises(NotImplementedError, match="forward"): nn.Module()(1)

def test_train_eval_zero_grad_requires_grad():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    assert all(m.training for m in model.modules())
    model.eval()
    assert not any(m.training for m in model.modules())
    model.train()
    model(mt.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad(set_to_none=False)
    assert all(np.all(p.grad.numpy() == 0) for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())

def test_to_keeps_parameter_identity(device):
    model = make_mlp(nn)
    params = list(model.parameters())
    model(mt.randn(2, 4)).sum().backward()
    model.to(device).double()
    assert all(a is b for a, b in zip(params, model.parameters()))
    assert all(p.dtype == np.float64 and p.device == device for p in params)
    assert all(p.grad.dtype == np.float64 and p.grad.device == device for p in params)
    out = model(mt.randn(2, 4, dtype=mt.float64, device=device))
    assert out.dtype == np.float64
    s = Stats(mt).to(device).double()
    assert s.num_batches_tracked.dtype == np.int64  # integer buffers keep their dtype
    assert s.running_mean.dtype == np.float64
    with pytest.raises(RuntimeError, match="unknown device"): model.to("tpu")

def test_forward_hooks():
    lin = nn.Linear(2, 2)
    seen = []
    handle = lin.register_forward_hook(lambda m, args, out: seen.append(out.shape))
    lin(mt.randn(5, 2))
    handle.remove()
    lin(mt.randn(5, 2))
    assert seen == [(5, 2)]

def test_sequential_and_modulelist_containers():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear) and isinstance(seq[1:], nn.Sequential)
    assert list(seq[1:].state_dict()) == ["2.weight", "2.bias"]  # slices keep the names, as in torch
    assert [type(m).__name__ for m in seq] == ["Linear", "ReLU", "Linear"]
    with pytest.raises(IndexError, match="out of range"): seq[3]
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.Linear(1, 2)).extend([nn.Tanh()])
    ml.insert(0, nn.ReLU())
    assert [type(m).__name__ for m in ml] == ["ReLU", "Linear", "Linear", "Tanh"]
    assert [n for n, _ in ml.named_parameters()] == ["1.weight", "1.bias", "2.weight", "2.bias"]
    with pytest.raises(NotImplementedError): ml(mt.ones(1))

# ---------------------------------------------------------------- state_dict / load_state_dict

def snapshot(model):
    return {k: v.numpy().copy() for k, v in model.state_dict().items()}

def test_state_dict_round_trip_between_libraries(rng):
    ours, theirs = make_mlp(nn), make_mlp(torch.nn)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = rng.standard_normal((3, 4)).astype(np.float32)
    assert_close(ours(mt.tensor(x)), theirs(torch.tensor(x)))
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})

def test_state_dict_shares_storage_and_is_detached():
    model = make_mlp(nn)
    sd = model.state_dict()
    assert not sd["0.weight"].requires_grad
    with mt.no_grad(): model[0].weight.fill_(1.5)
    assert np.all(sd["0.weight"].numpy() == 1.5)

@pytest.mark.parametrize("edit, message", [
    (lambda sd: sd.pop("2.bias"), 'Missing key(s) in state_dict: "2.bias"'),
    (lambda sd: sd.update(extra=mt.ones(1)), 'Unexpected key(s) in state_dict: "extra"'),
    (lambda sd: sd.update({"0.weight": mt.ones(4, 8)}), "size mismatch for 0.weight: copying a param with shape "
                                                        "[4, 8] from checkpoint, the shape in current model is [8, 4]"),
    (lambda sd: sd.update({"0.bias": [1.0] * 8}), "expected a Tensor"),
])
def test_load_state_dict_errors_change_nothing(edit, message):
    model = make_mlp(nn)
    before = snapshot(model)
    sd = {k: mt.randn(*v.shape) for k, v in make_mlp(nn).state_dict().items()}  # different values
    edit(sd)
    with pytest.raises((RuntimeError, TypeError)) as info: model.load_state_dict(sd)
    assert message in str(info.value)
    after = snapshot(model)
    assert all(np.array_equal(before[k], after[k]) for k in before)

def test_load_state_dict_not_strict():
    model = make_mlp(nn)
    src = make_mlp(nn).state_dict()
    src.pop("2.bias")
    src["extra"] = mt.ones(1)
    missing, unexpected = model.load_state_dict(src, strict=False)
    assert (missing, unexpected) == (["2.bias"], ["extra"])
    assert np.array_equal(model[0].weight.detach().numpy(), src["0.weight"].numpy())
    src["0.weight"] = mt.ones(1, 1)
    with pytest.raises(RuntimeError, match="size mismatch"): model.load_state_dict(src, strict=False)

def test_load_state_dict_casts_and_buffers(device):
    s = Stats(mt).to(device)
    sd = {k: (v.numpy() if k != "running_mean" else np.arange(3.0)) for k, v in Stats(mt).state_dict().items()}
    sd["num_batches_tracked"] = np.array(7)
    s.load_state_dict(sd)
    assert s.running_mean.dtype == np.float32 and s.running_mean.device == device
    assert s.running_mean.tolist() == [0.0, 1.0, 2.0] and s.num_batches_tracked.item() == 7
    assert "scratch" not in s.state_dict() and "scratch" in dict(s.named_buffers())
    assert "running_mean" not in dict(s.named_parameters())

# ---------------------------------------------------------------- save / load

def checkpoint_example():
    model = make_mlp(nn)
    w = mt.randn(2, 2)
    return {"model": model.state_dict(), "optim": {"state": {0: {"step": 3, "exp_avg": mt.zeros(2)}},
                                                   "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999),
                                                                     "params": [0, 1]}]},
            "epoch": 4, "name": "mlp", "history": [2.3, 1.1, float("nan"), float("inf")], "nothing": None,
            "flags": (True, False), "ints": mt.tensor([1, 2, 3]), "mask": mt.tensor([True, False]),
            "double": mt.tensor([1.0, 2.0], dtype=mt.float64), "param": nn.Parameter(mt.ones(2)),
            "same_twice": [w, w], "np": np.arange(3), "np_scalar": np.float32(2.5)}

def assert_same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, mt.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a: assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b): assert_same(x, y)
    elif isinstance(a, float) and math.isnan(a): assert math.isnan(b)
    elif isinstance(a, np.ndarray): np.testing.assert_array_equal(a, b)
    else: assert a == b

def test_save_load_round_trip(tmp_path):
    ck = checkpoint_example()
    path = tmp_path / "ck.mt"
    mt.save(ck, path)
    assert path.exists() and not (tmp_path / "ck.mt.npz").exists()
    back = mt.load(path)
    assert_same(ck, back)
    assert back["same_twice"][0] is back["same_twice"][1]
    assert isinstance(back["param"], nn.Parameter) and back["param"].requires_grad
    buf = io.BytesIO()
    mt.save(ck, buf)
    buf.seek(0)
    assert_same(ck, mt.load(buf))
    np.load(path, allow_pickle=False).close()  # a plain npz archive that numpy reads without pickle

def test_saved_model_loads_into_fresh_model(tmp_path, device):
    model = make_mlp(nn).to(device)
    mt.save(model.state_dict(), tmp_path / "m.mt")
    fresh = make_mlp(nn).to(device)
    fresh.load_state_dict(mt.load(tmp_path / "m.mt"))
    x = mt.randn(5, 4, device=device)
    np.testing.assert_array_equal(to_numpy(model(x)), to_numpy(fresh(x)))
    assert all(t.device == device for t in mt.load(tmp_path / "m.mt").values())
    assert all(t.device == "numpy" for t in mt.load(tmp_path / "m.mt", map_location="numpy").values())

def test_save_refuses_objects_it_cannot_describe(tmp_path):
    with pytest.raises(TypeError, match="state_dict"): mt.save(make_mlp(nn), tmp_path / "m.mt")
    with pytest.raises(TypeError, match=r"obj\['a'\]\[1\]"): mt.save({"a": [1, object()]}, tmp_path / "m.mt")
    assert not (tmp_path / "m.mt").exists()  # nothing written when the object can't be stored

@pytest.mark.parametrize("keep", [0.5, 0.9, -1])
def test_truncated_file_raises_clear_error(tmp_path, keep):
    path = tmp_path / "ck.mt"
    mt.save(checkpoint_example(), path)
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * keep)] if keep > 0 else data[:-1])
    with pytest.raises(mt.nn.CheckpointError, match="ck.mt.*truncated or corrupt"): mt.load(path)

def test_corrupted_member_raises_clear_error(tmp_path):
    path = tmp_path / "ck.mt"
    mt.save({"w": mt.ones(1000)}, path)
    data = bytearray(path.read_bytes())
    i = data.index(np.ones(1000, np.float32).tobytes()[:64])
    data[i + 100] ^= 0xFF  # flip bits inside the array's bytes: the zip CRC catches it
    path.write_bytes(bytes(data))
    with pytest.raises(mt.nn.CheckpointError, match="truncated or corrupt"): mt.load(path)

def test_foreign_files_raise_clear_errors(tmp_path):
    cases = {"notes.txt": b"hello, I am text\n", "empty.mt": b"",
             "obj.pkl": pickle.dumps({"w": np.ones(3)}), "arr.npy": None, "model.pt": None}
    np.save(tmp_path / "arr.npy", np.ones(3))
    torch.save({"w": torch.ones(3)}, tmp_path / "model.pt")
    expected = {"notes.txt": "not a file written by mt.save", "empty.mt": "empty", "obj.pkl": "never unpickles",
                "arr.npy": "single .npy array", "model.pt": "zip archive but not a file written by mt.save"}
    for name, content in cases.items():
        if content is not None: (tmp_path / name).write_bytes(content)
        with pytest.raises(mt.nn.CheckpointError) as info: mt.load(tmp_path / name)
        assert name in str(info.value) and expected[name] in str(info.value), str(info.value)
    with pytest.raises(FileNotFoundError): mt.load(tmp_path / "missing.mt")

def test_pickled_model_breaks_when_class_moves_but_state_dict_loads():
    import sys, types
    mod = types.ModuleType("old_models")
    exec("from minitorch_nb import nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.fc = nn.Linear(2, 2)\n    def forward(self, x): return self.fc(x)\n", mod.__dict__)
    sys.modules["old_models"] = mod
    net = mod.Net()
    blob, sd = pickle.dumps(net), net.state_dict()
    del sys.modules["old_models"]
    with pytest.raises(ModuleNotFoundError, match="old_models"): pickle.loads(blob)
    class RenamedNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
        def forward(self, x): return self.fc(x)
    fresh = RenamedNet()
    fresh.load_state_dict(sd)
    x = mt.randn(3, 2)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), net(x).detach().numpy())

# ---------------------------------------------------------------- init

def ks_statistic(samples, cdf):
    "Kolmogorov-Smirnov distance between the empirical distribution of `samples` and `cdf`."
    x = np.sort(samples.ravel())
    n = x.size
    c = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n))

# For n samples, P(D > 1.95/sqrt(n)) is about 0.001 under the null hypothesis (Kolmogorov distribution).
KS_LIMIT = 1.95

def uniform_cdf(lo, hi): return lambda x: np.clip((x - lo) / (hi - lo), 0, 1)
def normal_cdf(std): return lambda x: 0.5 * (1 + np.vectorize(math.erf)(x / (std * math.sqrt(2))))

@pytest.mark.parametrize("shape", [(200, 300), (64, 16, 3, 3)])
def test_init_distributions(shape):
    fan_in = shape[1] * math.prod(shape[2:])
    fan_out = shape[0] * math.prod(shape[2:])
    g = np.random.default_rng(1)
    cases = [
        (lambda t: init.uniform_(t, -2, 3, generator=g), uniform_cdf(-2, 3), (-2, 3)),
        (lambda t: init.normal_(t, 0, 0.5, generator=g), normal_cdf(0.5), None),
        (lambda t: init.xavier_uniform_(t, gain=2, generator=g),
         uniform_cdf(-2 * math.sqrt(6 / (fan_in + fan_out)), 2 * math.sqrt(6 / (fan_in + fan_out))), None),
        (lambda t: init.xavier_normal_(t, generator=g), normal_cdf(math.sqrt(2 / (fan_in + fan_out))), None),
        (lambda t: init.kaiming_uniform_(t, nonlinearity="relu", generator=g),
         uniform_cdf(-math.sqrt(6 / fan_in), math.sqrt(6 / fan_in)), None),
        (lambda t: init.kaiming_uniform_(t, a=math.sqrt(5), generator=g),  # Linear's default: U(±1/sqrt(fan_in))
         uniform_cdf(-1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in)), None),
        (lambda t: init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu", generator=g),
         normal_cdf(math.sqrt(2 / fan_out)), None),
    ]
    for fill, cdf, _ in cases:
        t = nn.Parameter(mt.zeros(*shape))
        out = fill(t)
        assert out is t and t.requires_grad and t.grad_fn is None
        values = t.detach().numpy()
        assert ks_statistic(values, cdf) < KS_LIMIT / math.sqrt(values.size)

def test_init_constants_gains_and_fans():
    t = mt.zeros(3, 4)
    assert np.all(init.ones_(t).numpy() == 1) and np.all(init.constant_(t, 0.25).numpy() == 0.25)
    assert np.all(init.zeros_(t).numpy() == 0)
    for name, param in [("linear", None), ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
                        ("leaky_relu", 0.2), ("selu", None), ("conv2d", None)]:
        assert init.calculate_gain(name, param) == pytest.approx(torch.nn.init.calculate_gain(name, param))
    for shape in [(5, 3), (8, 4, 3, 3), (2, 6, 5)]:
        assert init._calculate_fan_in_and_fan_out(mt.zeros(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(shape))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"): init.xavier_uniform_(mt.zeros(5))
    with pytest.raises(ValueError, match="mode"): init.kaiming_normal_(mt.zeros(2, 2), mode="fan")

def test_init_generators_and_global_seed():
    a, b = mt.zeros(50, 20), mt.zeros(50, 20)
    init.normal_(a, generator=np.random.default_rng(5))
    init.normal_(b, generator=np.random.default_rng(5))
    assert np.array_equal(a.numpy(), b.numpy())
    mt.manual_seed(3)
    l1 = nn.Linear(10, 10)
    mt.manual_seed(3)
    l2 = nn.Linear(10, 10)
    assert np.array_equal(l1.weight.detach().numpy(), l2.weight.detach().numpy())
    assert not np.array_equal(l1.weight.detach().numpy(), nn.Linear(10, 10).weight.detach().numpy())

def test_default_initialisations():
    mt.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert ks_statistic(w, uniform_cdf(-bound, bound)) < KS_LIMIT / math.sqrt(w.size)
    assert ks_statistic(b, uniform_cdf(-bound, bound)) < KS_LIMIT / math.sqrt(b.size)
    emb = nn.Embedding(300, 100).weight.detach().numpy()
    assert ks_statistic(emb, normal_cdf(1.0)) < KS_LIMIT / math.sqrt(emb.size)

# ---------------------------------------------------------------- dropout

@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_statistics(device, p):
    mt.manual_seed(0)
    n = 200_000
    x = mt.ones(n, device=device, requires_grad=True)
    y = nn.Dropout(p)(x)
    values = to_numpy(y)
    zeros = np.mean(values == 0)
    assert abs(zeros - p) < 5 * math.sqrt(p * (1 - p) / n)  # binomial: 5 standard deviations
    np.testing.assert_allclose(values[values != 0], 1 / (1 - p), rtol=1e-6)
    assert abs(values.mean() - 1) < 5 * math.sqrt(p / (1 - p) / n)  # expected value preserved
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), values)  # gradient = mask / (1 - p)

def test_dropout_modes(device):
    d = nn.Dropout(0.5)
    x = mt.randn(1000, device=device)
    d.eval()
    assert d(x) is x
    d.train()
    with mt.no_grad():  # no_grad does not switch dropout off
        assert np.mean(to_numpy(d(x)) == 0) > 0.4
    assert np.all(to_numpy(nn.Dropout(1.0)(x)) == 0) and nn.Dropout(0.0)(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"): nn.Dropout(1.5)
