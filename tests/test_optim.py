"Chapter 03: optimizers, schedulers and clipping step by step against PyTorch; state_dict round trips; Learner resume."
import math
import warnings
import numpy as np
import pytest
import torch
import minitorch_nb as mt
from minitorch_nb.training import SGD, Adam, AdamW, RMSprop, clip_grad_norm_, accumulate_gradients, optimizer_state_bytes
from minitorch_nb.optim import lr_scheduler as S

TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}
SHAPES = [(3, 4), (4,), (2, 1, 3)]

def _problem(dtype, seed=0):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    curv = [rng.uniform(0.5, 2.0, s).astype(dtype) for s in SHAPES]
    center = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    return init, curv, center

def _grad(p, a, c, step, sign):
    "A deterministic gradient: a convex bowl plus a step-dependent push (negated for maximize)."
    return (sign * (a * (p - c) + np.cos(step + np.arange(p.size).reshape(p.shape)) * 0.3)).astype(p.dtype)

def _trajectories(ours_fn, torch_fn, dtype, steps=35, maximize=False, groups=None):
    init, curv, center = _problem(dtype)
    ours = [mt.tensor(x, requires_grad=True) for x in init]
    theirs = [torch.tensor(x, requires_grad=True) for x in init]
    wrap = (lambda ps: [{"params": [p], **g} for p, g in zip(ps, groups)]) if groups else (lambda ps: ps)
    o, t = ours_fn(wrap(ours)), torch_fn(wrap(theirs))
    sign = -1.0 if maximize else 1.0
    for step in range(steps):
        for p, q, a, c in zip(ours, theirs, curv, center):
            p.grad = mt.tensor(_grad(p.array, a, c, step, sign))
            q.grad = torch.tensor(_grad(q.detach().numpy(), a, c, step, sign))
        o.step(); t.step()
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.array, q.detach().numpy(), **TOL[dtype], err_msg=f"step {step}")
    return o, t, ours, theirs

CASES = {
    "sgd": dict(cls="SGD", kw=dict(lr=0.05)),
    "sgd_momentum": dict(cls="SGD", kw=dict(lr=0.05, momentum=0.9)),
    "sgd_dampening_wd": dict(cls="SGD", kw=dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.05)),
    "sgd_nesterov": dict(cls="SGD", kw=dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    "sgd_maximize": dict(cls="SGD", kw=dict(lr=0.05, momentum=0.5, maximize=True), maximize=True),
    "adam": dict(cls="Adam", kw=dict(lr=0.05)),
    "adam_l2": dict(cls="Adam", kw=dict(lr=0.05, weight_decay=0.1, betas=(0.8, 0.99), eps=1e-6)),
    "adam_amsgrad": dict(cls="Adam", kw=dict(lr=0.05, amsgrad=True)),
    "adam_maximize": dict(cls="Adam", kw=dict(lr=0.05, maximize=True, weight_decay=0.01), maximize=True),
    "adamw": dict(cls="AdamW", kw=dict(lr=0.05)),
    "adamw_amsgrad_wd": dict(cls="AdamW", kw=dict(lr=0.05, weight_decay=0.3, amsgrad=True)),
    "rmsprop": dict(cls="RMSprop", kw=dict(lr=0.01)),
    "rmsprop_all": dict(cls="RMSprop", kw=dict(lr=0.01, alpha=0.9, centered=True, momentum=0.5, weight_decay=0.1)),
    "rmsprop_maximize": dict(cls="RMSprop", kw=dict(lr=0.01, momentum=0.3, maximize=True), maximize=True),
    "adagrad": dict(cls="Adagrad", kw=dict(lr=0.1)),
    "adagrad_all": dict(cls="Adagrad", kw=dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.3,
                                              eps=1e-6)),
    "adagrad_maximize_foreach": dict(cls="Adagrad", kw=dict(lr=0.1, maximize=True, foreach=True), maximize=True),
    "adadelta": dict(cls="Adadelta", kw=dict()),
    "adadelta_all": dict(cls="Adadelta", kw=dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1)),
    "adadelta_maximize_foreach": dict(cls="Adadelta", kw=dict(lr=2.0, maximize=True, foreach=False), maximize=True),
    "adamax": dict(cls="Adamax", kw=dict(lr=0.05)),
    "adamax_all": dict(cls="Adamax", kw=dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    "adamax_maximize_foreach": dict(cls="Adamax", kw=dict(lr=0.05, maximize=True, foreach=True), maximize=True),
    "nadam": dict(cls="NAdam", kw=dict(lr=0.05)),
    "nadam_all": dict(cls="NAdam", kw=dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, momentum_decay=0.01)),
    "nadam_decoupled": dict(cls="NAdam", kw=dict(lr=0.05, weight_decay=0.2, decoupled_weight_decay=True)),
    "nadam_maximize_foreach": dict(cls="NAdam", kw=dict(lr=0.05, maximize=True, foreach=True, momentum_decay=0.1),
                                   maximize=True),
}

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(CASES))
def test_trajectory_matches_torch(name, dtype):
    case = CASES[name]
    _trajectories(lambda ps: getattr(mt.optim, case["cls"])(ps, **case["kw"]),
                  lambda ps: getattr(torch.optim, case["cls"])(ps, **case["kw"]), dtype, maximize=case.get("maximize", False))

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_param_groups_with_different_options(dtype):
    groups = [dict(lr=0.1), dict(lr=0.01, weight_decay=0.2, amsgrad=True), dict(betas=(0.5, 0.9))]
    o, t, _, _ = _trajectories(lambda ps: Adam(ps, lr=0.03), lambda ps: torch.optim.Adam(ps, lr=0.03), dtype, groups=groups)
    for go, gt in zip(o.param_groups, t.param_groups):
        for k in ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"): assert go[k] == gt[k], k
    groups = [dict(momentum=0.9, nesterov=True), dict(lr=0.2), dict(momentum=0.5, dampening=0.5)]
    _trajectories(lambda ps: SGD(ps, lr=0.05), lambda ps: torch.optim.SGD(ps, lr=0.05), dtype, groups=groups)

@pytest.mark.parametrize("cls,kw", [("Adam", dict(lr=0.05, amsgrad=True)), ("SGD", dict(lr=0.05, momentum=0.9)),
                                    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.2)), ("AdamW", dict(lr=0.05))])
def test_state_dict_round_trip_mid_training(cls, kw, tmp_path):
    init, curv, center = _problem(np.float64)
    a = [mt.tensor(x, requires_grad=True) for x in init]
    opt = getattr(mt.optim, cls)([{"params": a[:1]}, {"params": a[1:], "lr": 0.02}], **kw)
    def run(opt, ps, steps, start):
        for s in range(start, start + steps):
            for p, cu, ce in zip(ps, curv, center): p.grad = mt.tensor(_grad(p.array, cu, ce, s, 1.0))
            opt.step()
    run(opt, a, 10, 0)
    mt.save(opt.state_dict(), tmp_path / "opt.ckpt") if hasattr(mt, "save") else None
    sd = mt.load(tmp_path / "opt.ckpt") if hasattr(mt, "load") else opt.state_dict()
    b = [mt.tensor(p.array, requires_grad=True) for p in a]
    opt_b = getattr(mt.optim, cls)([{"params": b[:1]}, {"params": b[1:]}], lr=123.0)
    opt_b.load_state_dict(sd)
    assert opt_b.param_groups[1]["lr"] == 0.02 and opt_b.param_groups[0]["lr"] == kw["lr"]
    run(opt, a, 15, 10); run(opt_b, b, 15, 10)
    for p, q in zip(a, b): np.testing.assert_array_equal(p.array, q.array)

def test_state_dict_layout_matches_torch():
    x = np.ones(3, np.float32)
    ours, theirs = [mt.tensor(x, requires_grad=True) for _ in range(2)], [torch.tensor(x, requires_grad=True) for _ in range(2)]
    o = Adam([{"params": ours[:1]}, {"params": ours[1:], "lr": 0.1}])
    t = torch.optim.Adam([{"params": theirs[:1]}, {"params": theirs[1:], "lr": 0.1}])
    for ps, opt in ((ours, o), (theirs, t)):
        for p in ps: p.grad = mt.tensor(x) if isinstance(p, mt.Tensor) else torch.tensor(x)
        opt.step()
    so, st = o.state_dict(), t.state_dict()
    assert list(so["state"]) == list(st["state"]) == [0, 1]
    assert set(so["state"][0]) == set(st["state"][0])
    assert [g["params"] for g in so["param_groups"]] == [g["params"] for g in st["param_groups"]]
    np.testing.assert_allclose(so["state"][1]["exp_avg_sq"].array, st["state"][1]["exp_avg_sq"].numpy())

def test_load_state_dict_errors():
    a, b = mt.tensor([1.0], requires_grad=True), mt.tensor([1.0], requires_grad=True)
    sd = SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="parameter group 0 has 1 parameters"): SGD([a], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="has 1 parameter groups but the optimizer has 2"): SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)

def test_zero_grad_semantics():
    w = mt.tensor([1.0, 2.0], requires_grad=True)
    opt = SGD([w], lr=0.1)
    (w * w).sum().backward()
    g = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is g and np.all(w.grad.array == 0)
    (w * w).sum().backward(); (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.array, [4.0, 8.0])   # accumulates without zero_grad
    opt.zero_grad()
    assert w.grad is None
    opt.step()                                                # no grad: nothing changes
    np.testing.assert_array_equal(w.array, [1.0, 2.0])

def test_step_keeps_identity_and_bumps_version():
    w = mt.tensor([1.0, 2.0], requires_grad=True)
    data, opt = w.array, Adam([w], lr=0.1)
    y = w * w
    y.sum().backward(retain_graph=True)
    opt.step()
    assert w.array is data
    with pytest.raises(RuntimeError, match="modified by an in-place operation"): y.sum().backward()

def test_constructor_errors():
    w = mt.tensor([1.0], requires_grad=True)
    for make, msg in [(lambda: SGD(w), "wrap it in a list"), (lambda: SGD([], lr=0.1), "empty parameter list"),
                      (lambda: SGD([w, w]), "more than once"), (lambda: SGD([w * 2]), "non-leaf"),
                      (lambda: Adam([w], betas=(1.0, 0.9)), "beta parameter at index 0"),
                      (lambda: SGD([w], lr=-1), "invalid lr"), (lambda: SGD([w], nesterov=True), "Nesterov")]:
        with pytest.raises((TypeError, ValueError), match=msg): make()

def _lr_pairs(make_ours, make_theirs, steps, opt_name="SGD", opt_kw=dict(momentum=0.9)):
    po = [mt.tensor([1.0], requires_grad=True) for _ in range(2)]
    pt = [torch.tensor([1.0], requires_grad=True) for _ in range(2)]
    oo = getattr(mt.optim, opt_name)([{"params": [po[0]], "lr": 0.1}, {"params": [po[1]], "lr": 0.03}], **opt_kw)
    ot = getattr(torch.optim, opt_name)([{"params": [pt[0]], "lr": 0.1}, {"params": [pt[1]], "lr": 0.03}], **opt_kw)
    so, st = make_ours(oo), make_theirs(ot)
    for step in range(steps):
        assert so.get_last_lr() == st.get_last_lr(), step           # exactly equal, not just close
        for go, gt in zip(oo.param_groups, ot.param_groups):
            for k in ("momentum", "betas"):
                if k in gt: assert go[k] == gt[k], (step, k)
        oo.step(); ot.step(); so.step(); st.step()
    return so, st

@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", ["step", "cosine", "cosine_odd", "lambda", "onecycle", "onecycle_adam_3phase", "onecycle_linear"])
def test_schedulers_match_torch(name):
    T = torch.optim.lr_scheduler
    f = lambda e: 0.95 ** e + 0.01 * e
    cases = {
        "step": (lambda o: S.StepLR(o, 7, 0.5), lambda o: T.StepLR(o, 7, 0.5), 40, "SGD"),
        "cosine": (lambda o: S.CosineAnnealingLR(o, 10, 1e-3), lambda o: T.CosineAnnealingLR(o, 10, 1e-3), 45, "SGD"),
        "cosine_odd": (lambda o: S.CosineAnnealingLR(o, 37), lambda o: T.CosineAnnealingLR(o, 37), 60, "SGD"),
        "lambda": (lambda o: S.LambdaLR(o, f), lambda o: T.LambdaLR(o, f), 40, "SGD"),
        "onecycle": (lambda o: S.OneCycleLR(o, [1.0, 0.5], total_steps=50), lambda o: T.OneCycleLR(o, [1.0, 0.5], total_steps=50), 50, "SGD"),
        "onecycle_adam_3phase": (lambda o: S.OneCycleLR(o, 0.5, epochs=5, steps_per_epoch=8, three_phase=True),
                                 lambda o: T.OneCycleLR(o, 0.5, epochs=5, steps_per_epoch=8, three_phase=True), 40, "Adam"),
        "onecycle_linear": (lambda o: S.OneCycleLR(o, 0.5, total_steps=33, anneal_strategy="linear", cycle_momentum=False, pct_start=0.25),
                            lambda o: T.OneCycleLR(o, 0.5, total_steps=33, anneal_strategy="linear", cycle_momentum=False, pct_start=0.25), 33, "Adam"),
    }
    mo, mtorch, steps, opt = cases[name]
    _lr_pairs(mo, mtorch, steps, opt, dict(momentum=0.9) if opt == "SGD" else {})

def test_warmup_cosine_and_scheduler_state_dict():
    opt = AdamW([mt.tensor([0.0], requires_grad=True)], lr=2.5e-4)
    sched = S.LambdaLR(opt, S.WarmupCosine(500, 5000))
    lrs = []
    for _ in range(5001): lrs.append(opt.param_groups[0]["lr"]); opt.step(); sched.step()
    assert lrs[0] == 0 and lrs[500] == 2.5e-4 and abs(lrs[250] - 1.25e-4) < 1e-18
    closed = [2.5e-4 * (1 + math.cos(math.pi * (t - 500) / 4500)) / 2 for t in range(500, 5001)]
    np.testing.assert_allclose(lrs[500:], closed, rtol=0, atol=1e-18)
    o1 = SGD([mt.tensor([0.0], requires_grad=True)], lr=0.1)
    s1 = S.CosineAnnealingLR(o1, 20)
    for _ in range(7): o1.step(); s1.step()
    o2 = SGD([mt.tensor([0.0], requires_grad=True)], lr=0.1)
    o2.load_state_dict(o1.state_dict())
    s2 = S.CosineAnnealingLR(o2, 5)
    s2.load_state_dict(s1.state_dict())
    for _ in range(20):
        o1.step(); s1.step(); o2.step(); s2.step()
        assert s1.get_last_lr() == s2.get_last_lr()

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("norm_type,max_norm", [(2.0, 1.0), (2.0, 100.0), (1.0, 0.5), (math.inf, 0.3), (3.0, 0.7)])
def test_clip_grad_norm_matches_torch(dtype, norm_type, max_norm):
    rng = np.random.default_rng(1)
    grads = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    ours = [mt.tensor(np.zeros(s, dtype), requires_grad=True) for s in SHAPES]
    theirs = [torch.zeros(s, dtype=torch.float32 if dtype == np.float32 else torch.float64, requires_grad=True) for s in SHAPES]
    for p, q, g in zip(ours, theirs, grads): p.grad, q.grad = mt.tensor(g), torch.tensor(g)
    no = clip_grad_norm_(ours, max_norm, norm_type)
    nt = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert no.dtype == np.dtype(dtype) and no.shape == ()
    np.testing.assert_allclose(no.item(), nt.item(), **TOL[dtype])
    for p, q in zip(ours, theirs): np.testing.assert_allclose(p.grad.array, q.grad.numpy(), **TOL[dtype])

def test_clip_grad_norm_nonfinite():
    w = mt.tensor([1.0, 2.0], requires_grad=True)
    w.grad = mt.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"): clip_grad_norm_([w], 1.0, error_if_nonfinite=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # like PyTorch: NaN gradients, no numpy warning
        assert math.isinf(clip_grad_norm_([w], 1.0).item())
    tw = torch.tensor([1.0, 2.0], requires_grad=True)
    tw.grad = torch.tensor([float("inf"), 1.0])
    torch.nn.utils.clip_grad_norm_([tw], 1.0)
    np.testing.assert_array_equal(w.grad.numpy(), tw.grad.numpy())  # [nan, 0] in both
    assert clip_grad_norm_([mt.tensor([1.0], requires_grad=True)], 1.0).item() == 0.0   # no gradients at all

def test_gradient_accumulation_seed_example_and_helper():
    w = mt.tensor(2.0, requires_grad=True)
    x = np.array([1.0, 3.0, 2.0, 4.0], np.float32)
    loss = lambda xb: ((w * mt.tensor(xb)) ** 2).mean()
    assert accumulate_gradients(loss, [(x[:2],), (x[2:],)]) == 7.5 * 4
    assert w.grad.item() == 30.0
    w.grad = None
    for chunk in (x[:2], x[2:]): loss(chunk).backward()
    assert w.grad.item() == 60.0

def test_learner_accumulation_weights_each_micro_batch_by_its_share():
    "Accumulation over micro-batches of 3, 3, 3, 1 equals one big batch; an incomplete last group steps on its own mean."
    from minitorch_nb.learner import Learner
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((10, 3)).astype(np.float32), rng.standard_normal((10, 1)).astype(np.float32)
    w0 = rng.standard_normal((1, 3)).astype(np.float32)
    batches = [(mt.tensor(x[i:i + 3]), mt.tensor(y[i:i + 3])) for i in range(0, 10, 3)]   # sizes 3, 3, 3, 1

    def fitted(k, lr=0.1):
        model = mt.nn.Linear(3, 1, bias=False)
        model.weight.array[...] = w0
        Learner(model, mt.nn.MSELoss(), SGD(model.parameters(), lr=lr), batches, accumulate=k,
                progress=False, verbose=False).fit(1)
        return model.weight.array.copy()

    def big_batch_steps(groups, lr=0.1):
        "SGD on one big batch per group of examples, the reference (with PyTorch)."
        tw = torch.tensor(w0, requires_grad=True)
        for rows in groups:
            tw.grad = None
            torch.nn.functional.mse_loss(torch.tensor(x[rows]) @ tw.T, torch.tensor(y[rows])).backward()
            with torch.no_grad(): tw -= lr * tw.grad
        return tw.detach().numpy()

    np.testing.assert_allclose(fitted(4), big_batch_steps([slice(0, 10)]), rtol=1e-5, atol=1e-6)   # 3+3+3+1 in one
    # k=3: a full group of 9, then the last example alone, whose gradient must not be divided by 3
    np.testing.assert_allclose(fitted(3), big_batch_steps([slice(0, 9), slice(9, 10)]), rtol=1e-5, atol=1e-6)
    # k=2: groups 3+3 and 3+1, the second weighted 3/4 and 1/4 as accumulate_gradients does
    np.testing.assert_allclose(fitted(2), big_batch_steps([slice(0, 6), slice(6, 10)]), rtol=1e-5, atol=1e-6)

def test_optimizer_state_bytes():
    ps = [mt.tensor(np.zeros((100, 1000), np.float32), requires_grad=True)]
    assert optimizer_state_bytes(SGD(ps)) == 0
    assert optimizer_state_bytes(SGD(ps, momentum=0.9)) == 400_000
    adam = Adam(ps)
    assert optimizer_state_bytes(adam) == 800_000
    ps[0].grad = mt.tensor(np.ones((100, 1000), np.float32)); adam.step()
    assert mt.training.held_state_bytes(adam) == 800_000
    assert optimizer_state_bytes(Adam(ps, amsgrad=True)) == 1_200_000
    assert optimizer_state_bytes(RMSprop(ps, momentum=0.1, centered=True)) == 1_200_000

# ------------------------------------------------------------------ mt.nn.utils (added to chapter 02's nn by chapter 03)

@pytest.mark.parametrize("norm_type,max_norm", [(2.0, 0.5), (math.inf, 0.05), (2.0, 1e3)])
def test_nn_utils_clip_grad_norm_on_a_model_matches_torch(norm_type, max_norm):
    from minitorch_nb.nn.utils import clip_grad_norm_ as clip
    assert clip is mt.nn.utils.clip_grad_norm_
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((16, 5)).astype(np.float32), rng.integers(0, 3, 16)
    model = mt.nn.Sequential(mt.nn.Linear(5, 7), mt.nn.Tanh(), mt.nn.Linear(7, 3))
    tmodel = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3))
    with torch.no_grad():
        for p, q in zip(model.parameters(), tmodel.parameters()): q.copy_(torch.tensor(p.array))
    mt.nn.CrossEntropyLoss()(model(mt.tensor(x)), mt.tensor(y)).backward()
    torch.nn.CrossEntropyLoss()(tmodel(torch.tensor(x)), torch.tensor(y)).backward()
    n_ours = mt.nn.utils.clip_grad_norm_(model.parameters(), max_norm, norm_type)
    n_theirs = torch.nn.utils.clip_grad_norm_(tmodel.parameters(), max_norm, norm_type)
    np.testing.assert_allclose(n_ours.item(), n_theirs.item(), rtol=1e-5)
    for p, q in zip(model.parameters(), tmodel.parameters()):
        np.testing.assert_allclose(p.grad.array, q.grad.numpy(), rtol=1e-5, atol=1e-7)

def test_nn_utils_is_a_real_module():
    import minitorch_nb.nn.utils as utils
    from minitorch_nb import training
    assert utils.__file__.replace("\\", "/").endswith("minitorch_nb/nn/utils/__init__.py")
    assert utils.clip_grad_norm_ is training.clip_grad_norm_ is mt.nn.utils.clip_grad_norm_

# ------------------------------------------------------------------ checkpoint and resume, bit for bit

def _spiral_run(seed):
    "A Learner on a shuffling DataLoader with its own generator, a dropout MLP, AdamW and a StepLR schedule."
    from minitorch_nb.data import TensorDataset, DataLoader
    from minitorch_nb.learner import Learner, accuracy
    rng = np.random.default_rng(0)                       # the data themselves do not depend on `seed`
    x = rng.standard_normal((120, 4)).astype(np.float32)
    y = (x[:, 0] * x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 0.5)
    mt.manual_seed(seed)
    model = mt.nn.Sequential(mt.nn.Linear(4, 32), mt.nn.ReLU(), mt.nn.Dropout(0.2), mt.nn.Linear(32, 3))
    opt = AdamW(model.parameters(), lr=0.01, weight_decay=0.01)
    sched = S.StepLR(opt, step_size=7, gamma=0.5)
    train_dl = DataLoader(TensorDataset(mt.tensor(x[:96]), mt.tensor(y[:96])), batch_size=16, shuffle=True,
                          generator=mt.Generator().manual_seed(seed))
    valid_dl = DataLoader(TensorDataset(mt.tensor(x[96:]), mt.tensor(y[96:])), batch_size=24)
    return Learner(model, mt.nn.CrossEntropyLoss(), opt, train_dl, valid_dl, scheduler=sched, metrics=[accuracy],
                   progress=False, verbose=False)

@pytest.mark.parametrize("k", [1, 3])
def test_checkpoint_resume_is_bit_identical(tmp_path, k):
    n = 5
    straight = _spiral_run(seed=0).fit(n)
    part = _spiral_run(seed=0).fit(k)
    part.save_checkpoint(tmp_path / "ckpt")
    resumed = _spiral_run(seed=77)             # everything fresh, from another seed
    assert not np.array_equal(resumed.model[0].weight.array, part.model[0].weight.array)
    resumed.load_checkpoint(tmp_path / "ckpt").fit(n - k)
    assert resumed.epoch == straight.epoch == n
    assert resumed.recorder.losses == straight.recorder.losses           # exact float equality, every batch
    assert resumed.recorder.epochs == straight.recorder.epochs
    assert resumed.recorder.lrs == straight.recorder.lrs
    for (name, a), b in zip(straight.model.named_parameters(), resumed.model.parameters()):
        assert np.array_equal(a.array, b.array), name
    for a, b in zip(straight.opt.state.values(), resumed.opt.state.values()):
        for key in a: assert np.array_equal(np.asarray(a[key].array if hasattr(a[key], "data") else a[key]),
                                            np.asarray(b[key].array if hasattr(b[key], "data") else b[key])), key
    # the data order was part of it: without restoring the loader's generator the run differs
    other = _spiral_run(seed=0).fit(k)
    other.save_checkpoint(tmp_path / "ckpt2")
    broken = _spiral_run(seed=77).load_checkpoint(tmp_path / "ckpt2")
    broken.train_dl.generator.manual_seed(5)
    broken.fit(n - k)
    assert broken.recorder.losses != straight.recorder.losses

# ------------------------------------------------------------------ memory estimate against tracemalloc

def test_memory_estimate_matches_tracemalloc():
    import tracemalloc
    from minitorch_nb.training import memory_estimate
    rng = np.random.default_rng(0)
    xb, yb = mt.tensor(rng.standard_normal((64, 300)).astype(np.float32)), mt.tensor(rng.integers(0, 10, 64))
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        model = mt.nn.Sequential(mt.nn.Linear(300, 128), mt.nn.ReLU(), mt.nn.Linear(128, 10))
        opt = Adam(model.parameters())
        mt.nn.CrossEntropyLoss()(model(xb), yb).backward(); opt.step()
        held = tracemalloc.get_traced_memory()[0] - start
        before = tracemalloc.get_traced_memory()[0]
        out = model(xb)
        act = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    est = memory_estimate(model, opt, xb)
    n_params = 300 * 128 + 128 + 128 * 10 + 10
    assert est.weights == est.gradients == 4 * n_params and est.optimizer_state == 8 * n_params
    assert est.activations == 64 * 128 * 4 + 64 * 128      # the hidden activation (float32) + ReLU's bool mask
    params_state = est.weights + est.gradients + est.optimizer_state
    assert params_state <= held <= params_state + 16_384      # + Python objects (wrappers, dicts)
    assert 0 <= act - est.activations - out.array.nbytes < 4096

# ------------------------------------------------------------------ Adagrad, Adadelta, Adamax, NAdam: beyond the trajectories above

NEW_OPTIMIZERS = ["adagrad_all", "adadelta_all", "adamax_all", "nadam_all", "nadam_decoupled", "adagrad_maximize_foreach"]

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NEW_OPTIMIZERS)
def test_long_trajectory_matches_torch(name, dtype):
    case = CASES[name]
    _trajectories(lambda ps: getattr(mt.optim, case["cls"])(ps, **case["kw"]),
                  lambda ps: getattr(torch.optim, case["cls"])(ps, **case["kw"]), dtype, steps=400,
                  maximize=case.get("maximize", False))

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cls,kw,groups", [
    # PyTorch fills Adagrad's sum with the constructor's initial_accumulator_value, whatever a group says
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.2),
     [dict(lr_decay=0.1), dict(lr=0.02, weight_decay=0.3, initial_accumulator_value=5.0), dict(eps=1e-3, maximize=True)]),
    ("Adadelta", dict(rho=0.95), [dict(lr=0.3), dict(rho=0.5, weight_decay=0.1), dict(eps=1e-3)]),
    ("Adamax", dict(lr=0.03), [dict(lr=0.1), dict(betas=(0.5, 0.9), weight_decay=0.2), dict(eps=1e-3)]),
    ("NAdam", dict(lr=0.03), [dict(momentum_decay=0.1), dict(weight_decay=0.2, decoupled_weight_decay=True),
                              dict(betas=(0.5, 0.9), weight_decay=0.1)]),
])
def test_new_optimizers_param_groups(cls, kw, groups, dtype):
    o, t, _, _ = _trajectories(lambda ps: getattr(mt.optim, cls)(ps, **kw), lambda ps: getattr(torch.optim, cls)(ps, **kw),
                               dtype, steps=60, groups=groups)
    for go, gt in zip(o.param_groups, t.param_groups):
        for k in go:
            if k != "params": assert go[k] == gt[k], k
    assert set(gt) - set(o.param_groups[0]) <= {"differentiable", "capturable", "fused"}

@pytest.mark.parametrize("cls,kw", [("Adagrad", dict(lr=0.1, lr_decay=0.01)), ("Adadelta", dict(weight_decay=0.1)),
                                    ("Adamax", dict(lr=0.05)), ("NAdam", dict(lr=0.05, weight_decay=0.1))])
def test_new_optimizers_state_dict_round_trip(cls, kw, tmp_path):
    "Saved mid-run through mt.save and loaded into a fresh optimizer: the rest of the run is the same, bit for bit."
    init, curv, center = _problem(np.float32)
    a = [mt.tensor(x, requires_grad=True) for x in init]
    opt = getattr(mt.optim, cls)([{"params": a[:1]}, {"params": a[1:], "lr": 0.02}], **kw)
    def run(opt, ps, steps, start):
        for s in range(start, start + steps):
            for p, cu, ce in zip(ps, curv, center): p.grad = mt.tensor(_grad(p.array, cu, ce, s, 1.0))
            opt.step()
    run(opt, a, 10, 0)
    mt.save(opt.state_dict(), tmp_path / "opt.ckpt")
    b = [mt.tensor(p.array, requires_grad=True) for p in a]
    opt_b = getattr(mt.optim, cls)([{"params": b[:1]}, {"params": b[1:]}], lr=123.0)
    opt_b.load_state_dict(mt.load(tmp_path / "opt.ckpt"))
    assert opt_b.param_groups[1]["lr"] == 0.02
    run(opt, a, 15, 10); run(opt_b, b, 15, 10)
    for p, q in zip(a, b): np.testing.assert_array_equal(p.array, q.array)

def _to_numpy_state(sd):
    "A torch optimizer state_dict with its tensors as numpy arrays (what a torch user would hand over)."
    return {"state": {i: {k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in s.items()} for i, s in sd["state"].items()},
            "param_groups": [dict(g) for g in sd["param_groups"]]}

def _to_torch_state(sd):
    return {"state": {i: {k: torch.tensor(np.asarray(v.array)) if isinstance(v, mt.Tensor) else v for k, v in s.items()}
                      for i, s in sd["state"].items()},
            "param_groups": [dict(g) for g in sd["param_groups"]]}

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["sgd_momentum", "adam_amsgrad", "adamw", "rmsprop_all", "adagrad_all", "adadelta_all",
                                  "adamax_all", "nadam_all", "nadam_decoupled"])
def test_state_dicts_cross_between_torch_and_ours(name, dtype):
    "Torch's state_dict (tensors as numpy arrays) loads into ours, ours into torch; both continue as torch loaded from torch."
    case = CASES[name]
    make_o = lambda ps: getattr(mt.optim, case["cls"])(ps, **case["kw"])
    make_t = lambda ps: getattr(torch.optim, case["cls"])(ps, **case["kw"])
    o, t, ours, theirs = _trajectories(make_o, make_t, dtype, steps=10)
    assert [set(s) for s in o.state_dict()["state"].values()] == [set(s) for s in t.state_dict()["state"].values()]
    # loading casts floating state to the parameters' dtype (NAdam's float32 mu_product too), so the reference
    # is torch loaded from torch's own state_dict
    ours2 = [mt.tensor(q.detach().numpy().copy(), requires_grad=True) for q in theirs]   # ours, from torch's state
    theirs2 = [torch.tensor(p.array.copy(), requires_grad=True) for p in ours]           # torch's, from our state
    ref = [q.detach().clone().requires_grad_() for q in theirs]
    o2, t2, t_ref = make_o(ours2), make_t(theirs2), make_t(ref)
    o2.load_state_dict(_to_numpy_state(t.state_dict()))
    t2.load_state_dict(_to_torch_state(o.state_dict()))
    t_ref.load_state_dict(t.state_dict())
    _, curv, center = _problem(dtype)
    sign = -1.0 if case.get("maximize") else 1.0
    for step in range(10, 40):
        for group in (ours2, theirs2, ref):
            for p, a, c in zip(group, curv, center):
                g = _grad(p.array if isinstance(p, mt.Tensor) else p.detach().numpy(), a, c, step, sign)
                p.grad = mt.tensor(g) if isinstance(p, mt.Tensor) else torch.tensor(g)
        o2.step(); t2.step(); t_ref.step()
        for p, q, r in zip(ours2, theirs2, ref):
            np.testing.assert_allclose(p.array, r.detach().numpy(), **TOL[dtype], err_msg=f"ours from torch's state, step {step}")
            np.testing.assert_allclose(q.detach().numpy(), r.detach().numpy(), **TOL[dtype], err_msg=f"torch from ours, step {step}")
    assert all(isinstance(s["step"], int) for s in o2.state.values() if "step" in s)

def test_adagrad_state_exists_before_the_first_step():
    w = [mt.tensor(np.zeros(3, np.float32), requires_grad=True)]
    tw = [torch.zeros(3, requires_grad=True)]
    o, t = mt.optim.Adagrad(w, initial_accumulator_value=0.5), torch.optim.Adagrad(tw, initial_accumulator_value=0.5)
    so, st = o.state_dict(), t.state_dict()
    assert list(so["state"]) == list(st["state"]) == [0] and set(so["state"][0]) == set(st["state"][0]) == {"step", "sum"}
    np.testing.assert_array_equal(so["state"][0]["sum"].array, st["state"][0]["sum"].numpy())
    assert mt.training.held_state_bytes(o) == optimizer_state_bytes(o) == 12
    assert optimizer_state_bytes(mt.optim.NAdam(w)) == optimizer_state_bytes(mt.optim.Adamax(w)) == 24
    assert optimizer_state_bytes(mt.optim.Adadelta(w)) == 24

BAD_HYPER = [("Adagrad", dict(lr=-0.1)), ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(weight_decay=-0.5)),
             ("Adagrad", dict(initial_accumulator_value=-1.0)), ("Adagrad", dict(eps=-1e-10)),
             ("Adagrad", dict(lr=-1, eps=-1)),
             ("Adadelta", dict(lr=-1.0)), ("Adadelta", dict(rho=1.01)), ("Adadelta", dict(rho=-0.1)),
             ("Adadelta", dict(eps=-1e-6)), ("Adadelta", dict(weight_decay=-1)),
             ("Adamax", dict(lr=-2e-3)), ("Adamax", dict(eps=-1.0)), ("Adamax", dict(betas=(1.0, 0.9))),
             ("Adamax", dict(betas=(0.9, -0.1))), ("Adamax", dict(weight_decay=-0.1)),
             ("NAdam", dict(lr=-1e-3)), ("NAdam", dict(eps=-1e-8)), ("NAdam", dict(betas=(-0.1, 0.999))),
             ("NAdam", dict(betas=(0.9, 1.0))), ("NAdam", dict(weight_decay=-1)), ("NAdam", dict(momentum_decay=-4e-3))]

@pytest.mark.parametrize("cls,kw", BAD_HYPER)
def test_new_optimizers_reject_bad_hyperparameters_as_torch(cls, kw):
    with pytest.raises(ValueError) as theirs: getattr(torch.optim, cls)([torch.zeros(1, requires_grad=True)], **kw)
    with pytest.raises(ValueError) as ours: getattr(mt.optim, cls)([mt.tensor([0.0], requires_grad=True)], **kw)
    assert str(ours.value) == str(theirs.value)

@pytest.mark.parametrize("cls", ["Adagrad", "Adadelta", "Adamax", "NAdam"])
def test_new_optimizers_on_device_cpu(cls):
    "The same steps on the Numba device 'cpu' as on numpy arrays."
    rng = np.random.default_rng(2)
    x0 = rng.standard_normal((3, 4)).astype(np.float32)
    runs = []
    for device in ("numpy", "cpu"):
        w = mt.tensor(x0, device=device, requires_grad=True)
        opt = getattr(mt.optim, cls)([w], lr=0.05, weight_decay=0.1)
        for step in range(5):
            w.grad = mt.tensor(np.cos(x0 * (step + 1)), device=device)
            opt.step()
        runs.append(np.asarray(w.detach().to("numpy").array))
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-6, atol=1e-7)

# ------------------------------------------------------------------ clip_grad_value_, and clip_grad_norm_'s foreach / error_if_nonfinite

def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)[:30]) for w in caught]

def _grad_pairs(dtype, specials=()):
    rng = np.random.default_rng(5)
    grads = [rng.standard_normal(s).astype(dtype) * 3 for s in SHAPES]
    for i, v in specials: grads[0].flat[i] = v
    tdt = torch.float32 if dtype == np.float32 else torch.float64
    ours = [mt.tensor(np.zeros(s, dtype), requires_grad=True) for s in SHAPES]
    theirs = [torch.zeros(s, dtype=tdt, requires_grad=True) for s in SHAPES]
    for p, q, g in zip(ours, theirs, grads): p.grad, q.grad = mt.tensor(g.copy()), torch.tensor(g.copy())
    return ours, theirs

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("clip_value", [0.5, 2.0, 0.0, 1e9, -1.0])
@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_value_matches_torch(clip_value, foreach, dtype):
    ours, theirs = _grad_pairs(dtype, specials=[(0, float("nan")), (1, float("inf")), (2, -float("inf"))])
    ours[1].grad = None; theirs[1].grad = None                   # a parameter without a gradient is skipped
    versions = [p.grad._version.value for p in ours if p.grad is not None]
    assert mt.nn.utils.clip_grad_value_(ours, clip_value, foreach=foreach) is None
    assert torch.nn.utils.clip_grad_value_(theirs, clip_value, foreach=foreach) is None
    for p, q in zip(ours, theirs):
        if q.grad is None: assert p.grad is None; continue
        assert p.grad.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(p.grad.array, q.grad.numpy())
    assert [p.grad._version.value for p in ours if p.grad is not None] == [v + 1 for v in versions]

def test_clip_grad_value_single_tensor_and_generator():
    w, tw = mt.tensor([0.0, 0.0], requires_grad=True), torch.zeros(2, requires_grad=True)
    w.grad, tw.grad = mt.tensor([3.0, -0.25]), torch.tensor([3.0, -0.25])
    mt.nn.utils.clip_grad_value_(w, 1); torch.nn.utils.clip_grad_value_(tw, 1)
    np.testing.assert_array_equal(w.grad.numpy(), tw.grad.numpy())
    model = mt.nn.Linear(3, 2)
    for p in model.parameters(): p.grad = mt.tensor(np.full(p.shape, 5.0, np.float32))
    mt.nn.utils.clip_grad_value_(model.parameters(), 0.1)
    assert all(np.all(p.grad.array == np.float32(0.1)) for p in model.parameters())

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("foreach", [None, True, False])
@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf, 0.5])
def test_clip_grad_norm_foreach_matches_torch(foreach, norm_type, dtype):
    ours, theirs = _grad_pairs(dtype)
    no = mt.nn.utils.clip_grad_norm_(ours, 1.5, norm_type, foreach=foreach)
    nt = torch.nn.utils.clip_grad_norm_(theirs, 1.5, norm_type, foreach=foreach)
    np.testing.assert_allclose(no.item(), nt.item(), **TOL[dtype])
    for p, q in zip(ours, theirs): np.testing.assert_allclose(p.grad.array, q.grad.numpy(), **TOL[dtype])

@pytest.mark.parametrize("special", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("norm_type", [2.0, math.inf, 1.0])
def test_clip_grad_norm_nonfinite_as_torch(special, norm_type):
    ours, theirs = _grad_pairs(np.float32, specials=[(3, special)])
    with pytest.raises(RuntimeError) as e_t: torch.nn.utils.clip_grad_norm_(theirs, 1.0, norm_type, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as e_o: mt.nn.utils.clip_grad_norm_(ours, 1.0, norm_type, error_if_nonfinite=True)
    assert str(e_o.value) == str(e_t.value)
    for p, q in zip(ours, theirs): np.testing.assert_array_equal(p.grad.array, q.grad.numpy())   # untouched by the error
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        no = mt.nn.utils.clip_grad_norm_(ours, 1.0, norm_type)
    nt = torch.nn.utils.clip_grad_norm_(theirs, 1.0, norm_type)
    np.testing.assert_array_equal(no.numpy(), nt.numpy())
    for p, q in zip(ours, theirs): np.testing.assert_array_equal(p.grad.array, q.grad.numpy())

def test_clip_grad_norm_empty_generator_warns_as_torch():
    gen = lambda lib: (p for p in [])
    ours = _warnings_of(lambda: mt.nn.utils.clip_grad_norm_(gen(mt), 1.0))
    theirs = _warnings_of(lambda: torch.nn.utils.clip_grad_norm_(gen(torch), 1.0))
    assert ours == theirs and len(ours) == 1
    assert _warnings_of(lambda: mt.nn.utils.clip_grad_norm_([], 1.0)) == _warnings_of(lambda: torch.nn.utils.clip_grad_norm_([], 1.0)) == []
    assert mt.nn.utils.clip_grad_norm_([], 1.0).item() == torch.nn.utils.clip_grad_norm_([], 1.0).item() == 0.0

def test_nn_utils_face_has_clip_grad_value():
    from minitorch_nb.nn.utils import clip_grad_value_
    from minitorch_nb import training
    assert clip_grad_value_ is training.clip_grad_value_ is mt.nn.utils.clip_grad_value_

# ------------------------------------------------------------------ the new schedulers, step by step against torch

class _Halving:
    "A callable object as lr_lambda: its attributes go into LambdaLR's state_dict."
    def __init__(self, every): self.every = every
    def __call__(self, epoch): return 0.5 ** (epoch // self.every)

def _sched_cases():
    seq = lambda L: (lambda o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=7), L.ExponentialLR(o, 0.97)], [7]))
    seq3 = lambda L: (lambda o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, 4),
                                                   L.CosineAnnealingLR(o, 20, 1e-3), L.MultiStepLR(o, [5, 9], 0.3)],
                                               [4, 30]))
    return {
        "exponential": lambda L: (lambda o: L.ExponentialLR(o, 0.95)),
        "multistep": lambda L: (lambda o: L.MultiStepLR(o, [5, 12, 12, 40], 0.5)),
        "multistep_unsorted": lambda L: (lambda o: L.MultiStepLR(o, [40, 3, 17], 0.7)),
        "linear_warmup": lambda L: (lambda o: L.LinearLR(o, start_factor=0.05, total_iters=25)),
        "linear_decay": lambda L: (lambda o: L.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=30)),
        "linear_default": lambda L: (lambda o: L.LinearLR(o)),
        "constant": lambda L: (lambda o: L.ConstantLR(o, 0.25, total_iters=6)),
        "constant_default": lambda L: (lambda o: L.ConstantLR(o)),
        "lambda_per_group": lambda L: (lambda o: L.LambdaLR(o, [lambda e: 0.97 ** e, _Halving(7)])),
        "sequential": seq,
        "sequential_three": seq3,
        "sequential_warm_cosine": lambda L: (lambda o: L.SequentialLR(
            o, [L.LinearLR(o, 0.01, total_iters=10), L.CosineAnnealingLR(o, T_max=50)], milestones=[10])),
        "warm_restarts": lambda L: (lambda o: L.CosineAnnealingWarmRestarts(o, 10)),
        "warm_restarts_mult": lambda L: (lambda o: L.CosineAnnealingWarmRestarts(o, 3, T_mult=2, eta_min=1e-3)),
        "warm_restarts_mult3": lambda L: (lambda o: L.CosineAnnealingWarmRestarts(o, 2, T_mult=3)),
    }

SCHED_CASES = _sched_cases()
OPT_FOR_SCHED = [("SGD", dict(momentum=0.9)), ("Adagrad", {}), ("NAdam", {}), ("Adadelta", {}), ("Adamax", {})]

@pytest.mark.filterwarnings("error")  # neither library warns when the optimizer steps first
@pytest.mark.parametrize("opt_name,opt_kw", OPT_FOR_SCHED[:2])
@pytest.mark.parametrize("name", list(SCHED_CASES))
def test_new_schedulers_match_torch(name, opt_name, opt_kw):
    make = SCHED_CASES[name]
    so, st = _lr_pairs(make(S), make(torch.optim.lr_scheduler), 150, opt_name, opt_kw)
    assert so.get_last_lr() == st.get_last_lr()

def _state_keys(sd):
    return {k: (_state_keys(v) if k == "_schedulers" else None) for k, v in sd.items()} if isinstance(sd, dict) else \
        [_state_keys(s) for s in sd]

@pytest.mark.filterwarnings("ignore:To get the last")
@pytest.mark.parametrize("name", list(SCHED_CASES) + ["step", "cosine", "lambda"])
def test_scheduler_state_dict_as_torch_and_loads_torchs(name):
    "The same state_dict keys and values as torch's; torch's state_dict loads into ours mid-run and the runs agree."
    T = torch.optim.lr_scheduler
    make = SCHED_CASES.get(name) or {"step": lambda L: (lambda o: L.StepLR(o, 7, 0.5)),
                                     "cosine": lambda L: (lambda o: L.CosineAnnealingLR(o, 13, 1e-3)),
                                     "lambda": lambda L: (lambda o: L.LambdaLR(o, _Halving(5)))}[name]
    so, st = _lr_pairs(make(S), make(T), 23)
    sdo, sdt = so.state_dict(), st.state_dict()
    assert _state_keys(sdo) == _state_keys(sdt)
    def plain(sd):
        if isinstance(sd, dict): return {k: plain(v) for k, v in sd.items()}
        if isinstance(sd, list): return [plain(v) for v in sd]
        return sd
    assert plain(sdo) == plain(sdt)
    # torch's state_dict into a fresh scheduler of ours over a fresh optimizer that loaded ours
    po = [mt.tensor([1.0], requires_grad=True) for _ in range(2)]
    oo2 = mt.optim.SGD([{"params": [po[0]], "lr": 5.0}, {"params": [po[1]], "lr": 5.0}], momentum=0.9)
    so2 = make(S)(oo2)                           # as PyTorch advises: the scheduler first, then the loads
    oo2.load_state_dict(so.optimizer.state_dict())
    so2.load_state_dict(st.state_dict())
    for step in range(40):
        oo2.step(); st.optimizer.step(); so2.step(); st.step()
        assert so2.get_last_lr() == st.get_last_lr(), step

@pytest.mark.parametrize("opt_name,opt_kw", OPT_FOR_SCHED[1:])
@pytest.mark.parametrize("sched", ["sequential_warm_cosine", "warm_restarts_mult", "multistep", "plateau"])
def test_new_optimizers_with_schedulers_trajectory(sched, opt_name, opt_kw):
    "Parameters, not just rates: each new optimizer under a schedule, against torch in float64 for 150 steps."
    init, curv, center = _problem(np.float64, seed=4)
    ours = [mt.tensor(x, requires_grad=True) for x in init]
    theirs = [torch.tensor(x, requires_grad=True) for x in init]
    lr = 1.0 if opt_name == "Adadelta" else 0.05
    oo, ot = getattr(mt.optim, opt_name)(ours, lr=lr, **opt_kw), getattr(torch.optim, opt_name)(theirs, lr=lr, **opt_kw)
    if sched == "plateau":
        so, st = S.ReduceLROnPlateau(oo, factor=0.5, patience=3), torch.optim.lr_scheduler.ReduceLROnPlateau(ot, factor=0.5, patience=3)
    else: so, st = SCHED_CASES[sched](S)(oo), SCHED_CASES[sched](torch.optim.lr_scheduler)(ot)
    for step in range(150):
        for p, q, a, c in zip(ours, theirs, curv, center):
            p.grad = mt.tensor(_grad(p.array, a, c, step, 1.0))
            q.grad = torch.tensor(_grad(q.detach().numpy(), a, c, step, 1.0))
        oo.step(); ot.step()
        if sched == "plateau":
            so.step(float(sum((p.array ** 2).sum() for p in ours))); st.step(float(sum((q.detach() ** 2).sum() for q in theirs)))
        else: so.step(); st.step()
        assert so.get_last_lr() == st.get_last_lr(), step
        for p, q in zip(ours, theirs): np.testing.assert_allclose(p.array, q.detach().numpy(), **TOL[np.float64], err_msg=f"step {step}")

def _metric_walk(n, seed):
    "A metric that falls, plateaus with noise, jumps and falls again: every rule of ReduceLROnPlateau gets used."
    rng = np.random.default_rng(seed)
    base = np.concatenate([np.linspace(1.0, 0.5, n // 4), np.full(n // 4, 0.5), np.linspace(0.6, 0.2, n // 4),
                           np.full(n - 3 * (n // 4), 0.2)])
    return base * (1 + 0.01 * rng.standard_normal(n))

@pytest.mark.parametrize("kw", [dict(), dict(patience=3), dict(mode="max", patience=2, factor=0.5),
                                dict(threshold=0.02, threshold_mode="abs", patience=1, cooldown=3),
                                dict(threshold=0.05, patience=0, cooldown=1, min_lr=[1e-3, 5e-3], factor=0.3),
                                dict(mode="max", threshold_mode="abs", threshold=0.0, patience=2, min_lr=0.02),
                                dict(patience=1, factor=0.9, eps=0.004, min_lr=0.0)])
def test_reduce_lr_on_plateau_matches_torch(kw):
    so, st = _lr_pairs(lambda o: S.ReduceLROnPlateau(o, **kw), lambda o: torch.optim.lr_scheduler.ReduceLROnPlateau(o, **kw), 0)
    for step, m in enumerate(_metric_walk(200, seed=len(kw))):
        so.optimizer.step(); st.optimizer.step()
        so.step(mt.tensor(m, dtype=mt.float64) if step % 2 else m); st.step(m)
        assert so.get_last_lr() == st.get_last_lr(), step
        for k in ("best", "num_bad_epochs", "cooldown_counter", "last_epoch"): assert getattr(so, k) == getattr(st, k), (step, k)
    assert so.state_dict() == {k: v for k, v in st.state_dict().items()}
    assert so.get_last_lr() != [0.1, 0.03]                      # it did reduce

def test_reduce_lr_on_plateau_state_dict_round_trip(tmp_path):
    T = torch.optim.lr_scheduler
    so, st = _lr_pairs(lambda o: S.ReduceLROnPlateau(o, patience=2), lambda o: T.ReduceLROnPlateau(o, patience=2), 0)
    walk = _metric_walk(120, 0)
    for m in walk[:50]: so.step(m); st.step(m)
    mt.save(so.state_dict(), tmp_path / "s.ckpt")
    o2 = mt.optim.SGD([{"params": [mt.tensor([1.0], requires_grad=True)]}, {"params": [mt.tensor([1.0], requires_grad=True)]}],
                      lr=1.0)
    s2 = S.ReduceLROnPlateau(o2, mode="max")                       # wrong settings, replaced by the load
    o2.load_state_dict(so.optimizer.state_dict()); s2.load_state_dict(mt.load(tmp_path / "s.ckpt"))
    for m in walk[50:]:
        s2.step(m); st.step(m)
        assert s2.get_last_lr() == st.get_last_lr()
    assert s2.mode == "min" and s2.state_dict()["mode_worse"] == math.inf

def _scenario(L, opt_mod, which):
    "Scheduler uses that warn (or do not) in torch; returns a function that runs one."
    def run():
        ps = [opt_mod.tensor([1.0], requires_grad=True)]
        o = (mt.optim.SGD if opt_mod is mt else torch.optim.SGD)(ps, lr=0.1)
        if which == "step_before_optimizer":
            s = L.StepLR(o, 2); s.step(); o.step(); s.step()
        elif which == "right_order":
            s = L.ExponentialLR(o, 0.9)
            for _ in range(5): o.step(); s.step()
        elif which == "epoch_argument":
            s = L.MultiStepLR(o, [2, 4]); o.step(); s.step(3); s.step(); s.step(epoch=1)
        elif which == "get_lr_outside_step":
            s = L.CosineAnnealingLR(o, 10); o.step(); s.step(); s.get_lr(); s.get_last_lr()
        elif which == "sequential_without_optimizer_steps":
            s = L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=3), L.ExponentialLR(o, 0.9)], [3])
            for _ in range(6): s.step()
        elif which == "sequential_right_order":
            s = L.SequentialLR(o, [L.ConstantLR(o, 0.5, 2), L.LinearLR(o, 0.2), L.StepLR(o, 3)], [2, 7])
            for _ in range(15): o.step(); s.step()
        elif which == "plateau_epoch":
            s = L.ReduceLROnPlateau(o); s.step(1.0); s.step(0.5, epoch=4)
        elif which == "warm_restarts_float_epoch":
            s = L.CosineAnnealingWarmRestarts(o, 2)
            for e in (0.5, 1.0, 2.5, 7.25): o.step(); s.step(e)
            s.step()
        elif which == "onecycle_get_lr":
            s = L.OneCycleLR(o, 1.0, total_steps=10); o.step(); s.step(); s.get_lr()
    return run

@pytest.mark.parametrize("which", ["step_before_optimizer", "right_order", "epoch_argument", "get_lr_outside_step",
                                   "sequential_without_optimizer_steps", "sequential_right_order", "plateau_epoch",
                                   "warm_restarts_float_epoch", "onecycle_get_lr"])
def test_scheduler_warnings_as_torch(which):
    ours = _warnings_of(_scenario(S, mt, which))
    theirs = _warnings_of(_scenario(torch.optim.lr_scheduler, torch, which))
    assert ours == theirs

@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", ["step", "multistep", "exponential", "linear", "constant", "cosine"])
def test_step_with_epoch_uses_the_closed_form_as_torch(name):
    T = torch.optim.lr_scheduler
    make = {"step": lambda L: (lambda o: L.StepLR(o, 4, 0.5)), "multistep": lambda L: (lambda o: L.MultiStepLR(o, [3, 8, 8], 0.3)),
            "exponential": lambda L: (lambda o: L.ExponentialLR(o, 0.8)),
            "linear": lambda L: (lambda o: L.LinearLR(o, 0.2, 0.9, total_iters=6)),
            "constant": lambda L: (lambda o: L.ConstantLR(o, 0.4, 5)),
            "cosine": lambda L: (lambda o: L.CosineAnnealingLR(o, 9, 0.01))}[name]
    so, st = _lr_pairs(make(S), make(T), 3)
    for e in [5, 9, 9, 2, 0, 14, 30, 7]:
        so.optimizer.step(); st.optimizer.step()
        so.step(e); st.step(e)
        assert so.get_last_lr() == st.get_last_lr(), e
        so.step(); st.step()                                 # and the recursive form from there
        assert so.get_last_lr() == st.get_last_lr(), e

@pytest.mark.parametrize("T_0,T_mult,eta_min", [(5, 1, 0.0), (3, 2, 1e-3), (2, 3, 0.01), (1, 2, 0)])
def test_warm_restarts_with_fractional_epochs_as_torch(T_0, T_mult, eta_min):
    T = torch.optim.lr_scheduler
    so, st = _lr_pairs(lambda o: S.CosineAnnealingWarmRestarts(o, T_0, T_mult, eta_min),
                       lambda o: T.CosineAnnealingWarmRestarts(o, T_0, T_mult, eta_min), 0)
    iters = 7
    for epoch in range(40):
        for i in range(iters):
            so.optimizer.step(); st.optimizer.step()
            so.step(epoch + i / iters); st.step(epoch + i / iters)
            assert so.get_last_lr() == st.get_last_lr(), (epoch, i)
            assert (so.T_cur, so.T_i, so.last_epoch) == (st.T_cur, st.T_i, st.last_epoch)
    for e in [3.5, 0.25, 100.0, 12, 0]:                       # jumps back and forth, then plain steps
        so.step(e); st.step(e); so.step(); st.step()
        assert so.get_last_lr() == st.get_last_lr(), e
    assert so.state_dict() == st.state_dict()
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"): so.step(-1)

def _same_error(make_ours, make_theirs, exact=True):
    with pytest.raises(Exception) as theirs: make_theirs()
    with pytest.raises(Exception) as ours: make_ours()
    assert type(ours.value) is type(theirs.value)
    if exact: assert str(ours.value) == str(theirs.value)
    else: assert str(ours.value)[:60] == str(theirs.value)[:60]

@pytest.mark.parametrize("case", ["linear_start0", "linear_start2", "linear_end", "constant_factor", "plateau_factor",
                                  "plateau_mode", "plateau_threshold_mode", "plateau_min_lrs", "warm_T0", "warm_T0_float",
                                  "warm_Tmult", "warm_eta", "seq_empty", "seq_milestones", "seq_plateau", "seq_not_a_scheduler",
                                  "seq_other_optimizer", "lambda_count", "plateau_not_optimizer", "not_optimizer"])
def test_scheduler_constructor_errors_as_torch(case):
    def build(L, lib):
        ps = [lib.tensor([1.0], requires_grad=True)]
        optim = mt.optim if lib is mt else torch.optim
        o, o2 = optim.SGD(ps, lr=0.1), optim.SGD([lib.tensor([1.0], requires_grad=True)], lr=0.1)
        return {"linear_start0": lambda: L.LinearLR(o, start_factor=0), "linear_start2": lambda: L.LinearLR(o, start_factor=2),
                "linear_end": lambda: L.LinearLR(o, end_factor=-0.5), "constant_factor": lambda: L.ConstantLR(o, factor=1.5),
                "plateau_factor": lambda: L.ReduceLROnPlateau(o, factor=1.0), "plateau_mode": lambda: L.ReduceLROnPlateau(o, mode="avg"),
                "plateau_threshold_mode": lambda: L.ReduceLROnPlateau(o, threshold_mode="pct"),
                "plateau_min_lrs": lambda: L.ReduceLROnPlateau(o, min_lr=[0.1, 0.2]),
                "warm_T0": lambda: L.CosineAnnealingWarmRestarts(o, 0), "warm_T0_float": lambda: L.CosineAnnealingWarmRestarts(o, 2.5),
                "warm_Tmult": lambda: L.CosineAnnealingWarmRestarts(o, 2, T_mult=0),
                "warm_eta": lambda: L.CosineAnnealingWarmRestarts(o, 2, eta_min="0"),
                "seq_empty": lambda: L.SequentialLR(o, [], []),
                "seq_milestones": lambda: L.SequentialLR(o, [L.StepLR(o, 2), L.StepLR(o, 3)], [2, 5]),
                "seq_plateau": lambda: L.SequentialLR(o, [L.StepLR(o, 2), L.ReduceLROnPlateau(o)], [2]),
                "seq_not_a_scheduler": lambda: L.SequentialLR(o, [L.StepLR(o, 2), "cosine"], [2]),
                "seq_other_optimizer": lambda: L.SequentialLR(o, [L.StepLR(o, 2), L.StepLR(o2, 2)], [2]),
                "lambda_count": lambda: L.LambdaLR(o, [lambda e: 1.0] * 2),
                "plateau_not_optimizer": lambda: L.ReduceLROnPlateau("sgd"),
                "not_optimizer": lambda: L.StepLR(object(), 2)}[case]
    _same_error(build(S, mt), build(torch.optim.lr_scheduler, torch), exact=case != "seq_other_optimizer")

def test_scheduler_state_through_mt_save(tmp_path):
    "MultiStepLR's Counter, SequentialLR's nested states and ReduceLROnPlateau's infinities survive mt.save/mt.load."
    o = mt.optim.NAdam([mt.tensor([0.0], requires_grad=True)], lr=0.1)
    seq = S.SequentialLR(o, [S.LinearLR(o, 0.1, total_iters=4), S.MultiStepLR(o, [3, 3, 9], 0.5)], [4])
    for _ in range(6): o.step(); seq.step()
    mt.save({"opt": o.state_dict(), "sched": seq.state_dict()}, tmp_path / "c.ckpt")
    o2 = mt.optim.NAdam([mt.tensor([0.0], requires_grad=True)], lr=0.1)
    seq2 = S.SequentialLR(o2, [S.LinearLR(o2, 0.5, total_iters=2), S.MultiStepLR(o2, [1], 0.9)], [2])
    ckpt = mt.load(tmp_path / "c.ckpt")
    o2.load_state_dict(ckpt["opt"]); seq2.load_state_dict(ckpt["sched"])
    assert isinstance(seq2._schedulers[1].milestones, type(seq._schedulers[1].milestones))
    for _ in range(12):
        o.step(); seq.step(); o2.step(); seq2.step()
        assert seq.get_last_lr() == seq2.get_last_lr()
    p = S.ReduceLROnPlateau(o, mode="max")
    mt.save(p.state_dict(), tmp_path / "p.ckpt")
    assert mt.load(tmp_path / "p.ckpt")["best"] == -math.inf

# ------------------------------------------------------------------ the Learner steps ReduceLROnPlateau on the validation loss

def test_learner_with_reduce_lr_on_plateau(tmp_path):
    from minitorch_nb.learner import Learner
    from minitorch_nb.data import TensorDataset, DataLoader
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3 * rng.standard_normal((64, 1))).astype(np.float32)
    def make(valid):
        mt.manual_seed(0)
        model = mt.nn.Linear(3, 1)
        opt = mt.optim.NAdam(model.parameters(), lr=0.3)
        sched = S.ReduceLROnPlateau(opt, factor=0.5, patience=1, threshold=0.1)
        dl = DataLoader(TensorDataset(mt.tensor(x), mt.tensor(y)), batch_size=16, shuffle=True, generator=mt.Generator().manual_seed(1))
        vdl = DataLoader(TensorDataset(mt.tensor(x[:32]), mt.tensor(y[:32])), batch_size=32) if valid else None
        return Learner(model, mt.nn.MSELoss(), opt, dl, vdl, scheduler=sched, scheduler_every="epoch", progress=False, verbose=False)
    for valid in (True, False):
        learn, seen = make(valid), []
        step = learn.scheduler.step
        learn.scheduler.step = lambda metric: (seen.append(float(metric)), step(metric))
        learn.fit(12)
        assert learn.scheduler.last_epoch == 12 and learn.opt.param_groups[0]["lr"] <= 0.3 / 4
        np.testing.assert_allclose(seen, [r["valid_loss" if valid else "train_loss"] for r in learn.recorder.epochs], rtol=1e-6)
    with pytest.raises(ValueError, match="scheduler_every='epoch'"):
        Learner(mt.nn.Linear(3, 1), mt.nn.MSELoss(), learn.opt, [], scheduler=S.ReduceLROnPlateau(learn.opt))
    # checkpoint and resume with NAdam's float32 mu_product and the plateau state: bit for bit
    straight = make(True).fit(8)
    part = make(True).fit(3)
    part.save_checkpoint(tmp_path / "ckpt")
    resumed = make(True).load_checkpoint(tmp_path / "ckpt").fit(5)
    assert resumed.recorder.losses == straight.recorder.losses
    assert resumed.scheduler.state_dict() == straight.scheduler.state_dict()
