"""Chapter 02's PyTorch surface against torch: activations, robust and probabilistic losses, pad/one_hot/normalize,
parameter containers, tree walks, legacy loss arguments and argument type errors."""
import math, warnings
import numpy as np
import pytest
import torch
import minitorch_nb as mt
from minitorch_nb import nn
import minitorch_nb.nn.functional as F
import torch.nn.functional as TF
from oracle import assert_close, to_numpy

DTYPES = [np.float32, np.float64]
REDUCTIONS = ["none", "mean", "sum"]

def leaf(arr, device, requires_grad=True):
    "The same data as a leaf of ours (on `device`) and of torch's."
    ours = mt.tensor(arr, device=device, requires_grad=requires_grad and arr.dtype.kind == "f")
    return ours, torch.tensor(arr, requires_grad=requires_grad and arr.dtype.kind == "f")

def strided(x, xt):
    "A non-contiguous view of each (a permutation of the dimensions), inside the graph."
    if x.ndim < 2: return x, xt
    dims = tuple(reversed(range(x.ndim)))
    return x.permute(*dims), xt.permute(*dims)

def backward_both(y, yt, rng, device):
    "Backward a random upstream gradient through both graphs."
    g = rng.standard_normal(tuple(yt.shape)).astype(to_numpy(yt).dtype)
    y.backward(mt.tensor(g, device=device))
    yt.backward(torch.tensor(g))

def torch_reduction_warnings(fn):
    "Run fn, returning (result, [warning messages])."
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(w.message) for w in caught]

# ---------------------------------------------------------------- activations

ACTIVATIONS = [  # (functional name, keyword arguments, module name, module arguments)
    ("softplus", {}, "Softplus", {}), ("softplus", dict(beta=2.0, threshold=5.0), "Softplus", dict(beta=2.0, threshold=5.0)),
    ("softplus", dict(beta=0.5), "Softplus", dict(beta=0.5)),
    ("silu", {}, "SiLU", {}), ("mish", {}, "Mish", {}), ("softsign", {}, "Softsign", {}),
    ("elu", {}, "ELU", {}), ("elu", dict(alpha=0.5), "ELU", dict(alpha=0.5)), ("elu", dict(alpha=2.0), "ELU", dict(alpha=2.0)),
    ("celu", {}, "CELU", {}), ("celu", dict(alpha=0.5), "CELU", dict(alpha=0.5)), ("celu", dict(alpha=2.0), "CELU", dict(alpha=2.0)),
    ("selu", {}, "SELU", {}), ("leaky_relu", {}, "LeakyReLU", {}),
    ("leaky_relu", dict(negative_slope=0.2), "LeakyReLU", dict(negative_slope=0.2)),
    ("hardtanh", {}, "Hardtanh", {}), ("hardtanh", dict(min_val=-2.0, max_val=0.5), "Hardtanh", dict(min_val=-2.0, max_val=0.5)),
    ("relu6", {}, "ReLU6", {}), ("hardsigmoid", {}, "Hardsigmoid", {}), ("hardswish", {}, "Hardswish", {}),
    ("logsigmoid", {}, "LogSigmoid", {}), ("softmin", dict(dim=1), "Softmin", dict(dim=1)),
    ("softmin", dict(dim=-1), "Softmin", dict(dim=-1)), ("softmin", dict(dim=0), "Softmin", dict(dim=0)),
]
IDS = [f"{f}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for f, kw, _, _ in ACTIVATIONS]

# every corner of the piecewise functions, the thresholds, overflow territory, and a NaN
# torch's float64 hardsigmoid gradient is 1/6 rounded to float32 (its kernel's constant is 1.0f / 6.0f); ours is 1/6
GRAD_TOL = {("hardsigmoid", np.float64): dict(rtol=1e-7, atol=1e-12)}

CORNERS = np.array([-100.0, -20.0, -6.0, -3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 5.0, 6.0, 10.0, 20.0,
                    100.0, np.nan])

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn, kwargs, module, margs", ACTIVATIONS, ids=IDS)
def test_activation_values_and_gradients_match_torch(device, rng, dtype, fn, kwargs, module, margs):
    arr = (rng.standard_normal((3, 4, 5)) * 4).astype(dtype)
    arr.reshape(-1)[:CORNERS.size - 1] = CORNERS[:-1]  # corners included, on a random background
    x, xt = leaf(arr, device)
    xs, xts = strided(x, xt)  # non-contiguous input
    y, yt = getattr(F, fn)(xs, **kwargs), getattr(TF, fn)(xts, **kwargs)
    assert_close(y, yt)
    backward_both(y, yt, rng, device)
    assert_close(x.grad, xt.grad, **GRAD_TOL.get((fn, dtype), {}))
    ym, ymt = getattr(nn, module)(**margs)(xs), getattr(torch.nn, module)(**margs)(xts)
    assert_close(ym, ymt)

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn, kwargs, module, margs", [a for a in ACTIVATIONS if a[0] != "softmin"],
                         ids=[i for i, a in zip(IDS, ACTIVATIONS) if a[0] != "softmin"])
def test_activation_gradients_at_corners_and_nan_match_torch(dtype, fn, kwargs, module, margs):
    x, xt = leaf(CORNERS.astype(dtype), "numpy")
    y, yt = getattr(F, fn)(x, **kwargs), getattr(TF, fn)(xt, **kwargs)
    assert_close(y, yt)  # NaN where torch has NaN
    y.sum().backward()
    yt.sum().backward()
    g, gt = x.grad, xt.grad
    if fn in ("hardtanh", "relu6", "hardsigmoid"):  # torch's gradient at NaN differs between its vectorised and
        assert g.tolist()[-1] == 0.0  # scalar loops (1 or 0); ours is 0, NaN is not inside the interval
        g, gt = g[:-1], gt[:-1]
    assert_close(g, gt, **GRAD_TOL.get((fn, dtype), {}))

SMOOTH = [("softplus", {}), ("softplus", dict(beta=3.0)), ("silu", {}), ("mish", {}), ("softsign", {}),
          ("elu", dict(alpha=0.7)), ("celu", dict(alpha=1.5)), ("selu", {}), ("logsigmoid", {})]

@pytest.mark.parametrize("fn, kwargs", SMOOTH)
def test_activation_second_derivatives_match_torch(rng, fn, kwargs):
    arr = rng.standard_normal(30) * 3
    arr = arr[np.abs(arr) > 1e-3]  # away from the ELUs' joint at 0, where the second derivative jumps
    x, xt = leaf(arr, "numpy")
    g, = mt.autograd.grad(getattr(F, fn)(x, **kwargs).sum(), x, create_graph=True)
    gt, = torch.autograd.grad(getattr(TF, fn)(xt, **kwargs).sum(), xt, create_graph=True)
    assert_close(g, gt)
    gg, = mt.autograd.grad(g.sum(), x)
    ggt, = torch.autograd.grad(gt.sum(), xt)
    assert_close(gg, ggt)
    assert mt.gradcheck(lambda t: getattr(F, fn)(t, **kwargs), x)

def test_softplus_is_stable_where_the_formula_overflows():
    x = mt.tensor([-1000.0, -88.0, 88.0, 89.0, 1000.0])
    np.testing.assert_allclose(F.softplus(x, threshold=1e9).numpy(), [0.0, 6.0546e-39, 88.0, 89.0, 1000.0], rtol=1e-4)
    assert np.isfinite(F.softplus(x, threshold=1e9).numpy()).all()  # torch: inf from exp(89) in float32

@pytest.mark.parametrize("fn", ["softplus", "silu", "mish", "elu", "celu", "selu", "leaky_relu", "hardsigmoid",
                                "hardswish", "logsigmoid"])
def test_floating_point_only_activations_refuse_integers_like_torch(fn):
    with pytest.raises(NotImplementedError): getattr(TF, fn)(torch.tensor([1, -2]))
    with pytest.raises(NotImplementedError, match=f'"{fn}" is not implemented for int64'): getattr(F, fn)(mt.tensor([1, -2]))

@pytest.mark.parametrize("fn", ["hardtanh", "relu6", "softsign", "relu"])
def test_integer_inputs_where_torch_takes_them(fn):
    arr = np.array([-7, -1, 0, 1, 3, 8])
    assert_close(getattr(F, fn)(mt.tensor(arr)), getattr(TF, fn)(torch.tensor(arr)))

@pytest.mark.parametrize("fn", ["relu", "tanh", "sigmoid", "gelu", "softmax", "log_softmax", "softmin", "logsigmoid",
                                "softplus", "silu", "mish", "softsign", "elu", "celu", "selu", "leaky_relu",
                                "hardtanh", "relu6", "hardsigmoid", "hardswish"])
def test_activations_name_a_non_tensor_argument(fn):
    with pytest.raises(TypeError, match=rf"^{fn}\(\): argument 'input' \(position 1\) must be Tensor, not numpy.ndarray$"):
        getattr(F, fn)(np.ones(3))
    if fn not in ("softsign", "tanh", "sigmoid", "softmax", "log_softmax", "softmin"):  # torch's Python ones fail
        with pytest.raises(TypeError, match="must be Tensor, not numpy.ndarray"): getattr(TF, fn)(np.ones(3))

def test_activation_argument_errors_match_torch():
    x, xt = mt.randn(3, 4), torch.randn(3, 4)
    for ours, theirs in [(lambda: F.hardtanh(x, 2.0, 1.0), lambda: TF.hardtanh(xt, 2.0, 1.0)),
                         (lambda: F.celu(x, 0.0), lambda: TF.celu(xt, 0.0)),
                         (lambda: nn.Hardtanh(2.0, 1.0), lambda: torch.nn.Hardtanh(2.0, 1.0)),
                         (lambda: nn.Hardtanh(1.0, 1.0), lambda: torch.nn.Hardtanh(1.0, 1.0))]:
        with pytest.raises(Exception) as theirs_error: theirs()
        with pytest.raises(theirs_error.type): ours()
    with pytest.warns(FutureWarning, match="`min_value` is deprecated and renamed to `min_val`"):
        assert repr(nn.Hardtanh(min_value=-2.0)) == repr(torch.nn.Hardtanh(min_val=-2.0))

ACTIVATION_MODULES = [("Softplus", ()), ("Softplus", (2, 10)), ("SiLU", ()), ("SiLU", (True,)), ("Mish", (True,)),
                      ("ELU", ()), ("ELU", (0.5, True)), ("CELU", (2.0,)), ("SELU", ()), ("SELU", (True,)),
                      ("LeakyReLU", ()), ("LeakyReLU", (0.2, True)), ("Hardtanh", ()), ("Hardtanh", (-2, 3)),
                      ("Hardtanh", (-2.0, 3.0, True)), ("ReLU6", ()), ("ReLU6", (True,)), ("Hardsigmoid", (True,)),
                      ("Hardswish", ()), ("Hardswish", (True,)), ("Softsign", ()), ("Softmin", ()), ("Softmin", (1,)),
                      ("Softmax", ()), ("LogSoftmax", (0,)), ("PReLU", ()), ("PReLU", (3, 0.1)), ("LogSigmoid", ())]

@pytest.mark.parametrize("name, args", ACTIVATION_MODULES)
def test_activation_module_repr_and_state_dict_match_torch(name, args):
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())

@pytest.mark.parametrize("fn, name", [("softmin", "Softmin"), ("softmax", "Softmax"), ("log_softmax", "LogSoftmax")])
@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4), (2, 2, 3, 4)])
def test_implicit_softmax_dim_warns_and_matches_torch(rng, fn, name, shape):
    arr = rng.standard_normal(shape)
    theirs, their_warnings = torch_reduction_warnings(lambda: getattr(TF, fn)(torch.tensor(arr)))
    ours, our_warnings = torch_reduction_warnings(lambda: getattr(F, fn)(mt.tensor(arr)))
    assert_close(ours, theirs)
    assert our_warnings == their_warnings == [f"Implicit dimension choice for {fn} has been deprecated. "
                                              "Change the call to include dim=X as an argument."]
    with pytest.warns(UserWarning, match="Implicit dimension"): assert_close(getattr(nn, name)()(mt.tensor(arr)), theirs)
    assert_close(getattr(F, fn)(mt.tensor(arr), 0, dtype=mt.float32), getattr(TF, fn)(torch.tensor(arr), 0, dtype=torch.float32))

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("num_parameters, shape", [(1, (7,)), (1, (4, 3)), (3, (4, 3)), (3, (2, 3, 5)), (1, (2, 3, 5)),
                                                   (1, ())])
def test_prelu_matches_torch(device, rng, dtype, num_parameters, shape):
    theirs = torch.nn.PReLU(num_parameters, init=0.1)
    if dtype == np.float64: theirs = theirs.double()
    with torch.no_grad(): theirs.weight.copy_(torch.tensor(rng.uniform(-0.5, 0.5, num_parameters)))
    ours = nn.PReLU(num_parameters, init=0.1).to(device).to(dtype)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    arr = (rng.standard_normal(shape) * 2).astype(dtype)
    if arr.size > 2: arr.reshape(-1)[:2] = 0.0  # the corner
    x, xt = leaf(arr, device)
    xs, xts = strided(x, xt) if len(shape) != 2 else (x, xt)  # a 2-d transpose would move the channels
    y, yt = ours(xs), theirs(xts)
    assert_close(y, yt)
    backward_both(y, yt, rng, device)
    assert_close(x.grad, xt.grad)
    assert_close(ours.weight.grad, theirs.weight.grad)

def test_prelu_errors_match_torch():
    cases = [((3, 4), (3,)), ((3, 4), (2, 2)), ((), (4,)), ((4,), (4,))]
    for xshape, wshape in cases:
        with pytest.raises(RuntimeError) as theirs: TF.prelu(torch.ones(xshape), torch.ones(wshape))
        with pytest.raises(RuntimeError) as ours: F.prelu(mt.ones(xshape), mt.ones(wshape))
        assert str(theirs.value).split(".")[0].split(":")[0] in str(ours.value)
    with pytest.raises(RuntimeError, match="Type promoting not supported"): F.prelu(mt.ones(3).double(), mt.ones(1))

# ---------------------------------------------------------------- regression losses

def loss_pair(rng, dtype, device, shape=(4, 5), scale=2.0, target_grad=True):
    x, xt = leaf((rng.standard_normal(shape) * scale).astype(dtype), device)
    y, yt = leaf((rng.standard_normal(shape) * scale).astype(dtype), device, requires_grad=target_grad)
    return x, xt, y, yt

def check_loss(ours_fn, theirs_fn, x, xt, y, yt, rng, device, target_grad_where=None, permute=True):
    "Same loss and the same gradients for input and target (non-contiguous inputs, unless not `permute`)."
    (xs, xts), (ys, yts) = (strided(x, xt), strided(y, yt)) if permute else ((x, xt), (y, yt))
    loss, loss_t = ours_fn(xs, ys), theirs_fn(xts, yts)
    assert_close(loss, loss_t)
    backward_both(loss, loss_t, rng, device)
    assert_close(x.grad, xt.grad)
    if yt.grad is None: return
    if target_grad_where is None: assert_close(y.grad, yt.grad)
    else:
        np.testing.assert_allclose(to_numpy(y.grad)[target_grad_where], to_numpy(yt.grad)[target_grad_where],
                                   rtol=1e-5 if y.dtype == np.float32 else 1e-10, atol=1e-12)
        assert np.isfinite(to_numpy(y.grad)).all()

REGRESSION = [("l1_loss", {}), ("mse_loss", {}), ("smooth_l1_loss", {}), ("smooth_l1_loss", dict(beta=0.5)),
              ("smooth_l1_loss", dict(beta=0.0)), ("smooth_l1_loss", dict(beta=3.0)), ("huber_loss", {}),
              ("huber_loss", dict(delta=0.3)), ("huber_loss", dict(delta=2.0))]

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("fn, kwargs", REGRESSION)
def test_regression_losses_match_torch(device, rng, dtype, reduction, fn, kwargs):
    x, xt, y, yt = loss_pair(rng, dtype, device)
    arr = to_numpy(y).copy()  # differences exactly at 0 and at the joints (±β, ±δ)
    arr.reshape(-1)[:7] += np.array([0.0, 0.5, -1.0, 2.0, -0.3, 3.0, 1.0], dtype)
    arr.reshape(-1)[7:] = (rng.standard_normal(arr.size - 7) * 2).astype(dtype)
    x, xt = leaf(arr, device)
    check_loss(lambda a, b: getattr(F, fn)(a, b, reduction=reduction, **kwargs),
               lambda a, b: getattr(TF, fn)(a, b, reduction=reduction, **kwargs), x, xt, y, yt, rng, device)

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("fn", ["l1_loss", "mse_loss", "huber_loss"])
def test_per_element_weights_match_torch(device, rng, reduction, fn):
    x, xt, y, yt = loss_pair(rng, np.float64, device)
    w = rng.uniform(0.1, 2.0, (5, 4))  # the shape of the (permuted) input that check_loss passes
    check_loss(lambda a, b: getattr(F, fn)(a, b, reduction=reduction, weight=mt.tensor(w, device=device)),
               lambda a, b: getattr(TF, fn)(a, b, reduction=reduction, weight=torch.tensor(w)), x, xt, y, yt, rng, device)
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        getattr(F, fn)(x, y, weight=mt.ones(5))

@pytest.mark.parametrize("name, args, fn, fargs", [
    ("L1Loss", {}, "l1_loss", {}), ("SmoothL1Loss", dict(beta=0.5), "smooth_l1_loss", dict(beta=0.5)),
    ("HuberLoss", dict(delta=0.7), "huber_loss", dict(delta=0.7)), ("MSELoss", {}, "mse_loss", {})])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_loss_modules_match_torch(rng, name, args, fn, fargs, reduction):
    x, xt, y, yt = loss_pair(rng, np.float32, "numpy")
    ours, theirs = getattr(nn, name)(reduction=reduction, **args), getattr(torch.nn, name)(reduction=reduction, **args)
    assert_close(ours(x, y), theirs(xt, yt))
    assert repr(ours) == repr(theirs) and ours.reduction == theirs.reduction
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []

def test_regression_loss_errors_match_torch():
    x, xt = mt.randn(3, 4), torch.randn(3, 4)
    for fn, kwargs in [("smooth_l1_loss", dict(beta=-1.0)), ("huber_loss", dict(delta=0.0)),
                       ("huber_loss", dict(delta=-1.0)), ("l1_loss", dict(reduction="avg")),
                       ("huber_loss", dict(reduction="avg")), ("smooth_l1_loss", dict(reduction="avg"))]:
        with pytest.raises(Exception) as theirs: getattr(TF, fn)(xt, xt, **kwargs)
        with pytest.raises(theirs.type): getattr(F, fn)(x, x, **kwargs)
    for fn in ("l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss"):  # torch warns and broadcasts; we refuse
        with pytest.raises(ValueError, match=r"\[3, 4\].*\[4\]"): getattr(F, fn)(x, x[0])
        with pytest.raises(TypeError, match=f"{fn}\\(\\): argument 'target' \\(position 2\\) must be Tensor"):
            getattr(F, fn)(x, np.ones((3, 4)))

# ---------------------------------------------------------------- binary cross-entropy

def probabilities(rng, shape, dtype):
    p = rng.uniform(0, 1, shape).astype(dtype)
    p.reshape(-1)[:4] = [0.0, 1.0, 1e-7, 1 - 1e-7]  # the ends, where the logs are capped
    return p

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weight_shape", [None, (5, 4), (4,)])
def test_binary_cross_entropy_matches_torch(device, rng, dtype, reduction, weight_shape):
    probs = probabilities(rng, (4, 5), dtype)
    x, xt = leaf(probs, device)
    target = rng.uniform(0, 1, (4, 5)).astype(dtype)
    target.reshape(-1)[:8] = [0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.5, 0.5]
    y, yt = leaf(target, device)
    w = None if weight_shape is None else rng.uniform(0.5, 2.0, weight_shape).astype(dtype)  # for the permuted input
    wrap = lambda lib, a: None if a is None else (mt.tensor(a, device=device) if lib is mt else torch.tensor(a))
    check_loss(lambda a, b: F.binary_cross_entropy(a, b, wrap(mt, w), reduction=reduction),
               lambda a, b: TF.binary_cross_entropy(a, b, wrap(torch, w), reduction=reduction), x, xt, y, yt, rng, device,
               target_grad_where=(probs > 0) & (probs < 1))  # torch's is ±inf at 0 and 1; ours stays ±100·grad
    ours, theirs = nn.BCELoss(wrap(mt, w), reduction=reduction), torch.nn.BCELoss(wrap(torch, w), reduction=reduction)
    (xs, xts), (ys, yts) = strided(x, xt), strided(y, yt)
    assert_close(ours(xs, ys), theirs(xts, yts))
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict())

def test_binary_cross_entropy_second_derivative_matches_torch(rng):
    x, xt = leaf(rng.uniform(0.05, 0.95, 8), "numpy")
    y = rng.uniform(0, 1, 8)
    g, = mt.autograd.grad(F.binary_cross_entropy(x, mt.tensor(y)), x, create_graph=True)
    gt, = torch.autograd.grad(TF.binary_cross_entropy(xt, torch.tensor(y)), xt, create_graph=True)
    assert_close(g, gt)
    assert_close(mt.autograd.grad(g.sum(), x)[0], torch.autograd.grad(gt.sum(), xt)[0])

def test_binary_cross_entropy_errors_match_torch():
    p, pt = mt.rand(3, 4), torch.rand(3, 4)
    for ours, theirs in [(lambda: F.binary_cross_entropy(p * 2, p), lambda: TF.binary_cross_entropy(pt * 2, pt)),
                         (lambda: F.binary_cross_entropy(p, p * 3), lambda: TF.binary_cross_entropy(pt, pt * 3)),
                         (lambda: F.binary_cross_entropy(mt.tensor([math.nan]), mt.tensor([0.0])),
                          lambda: TF.binary_cross_entropy(torch.tensor([math.nan]), torch.tensor([0.0]))),
                         (lambda: F.binary_cross_entropy(p, p[0]), lambda: TF.binary_cross_entropy(pt, pt[0])),
                         (lambda: F.binary_cross_entropy(p, p, mt.ones(3)), lambda: TF.binary_cross_entropy(pt, pt, torch.ones(3))),
                         (lambda: F.binary_cross_entropy(p, p, reduction="avg"), lambda: TF.binary_cross_entropy(pt, pt, reduction="avg"))]:
        with pytest.raises(Exception) as theirs_error: theirs()
        with pytest.raises(theirs_error.type) as ours_error: ours()
        if "between 0 and 1" in str(theirs_error.value): assert str(theirs_error.value) == str(ours_error.value)

# ---------------------------------------------------------------- KL divergence

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("target_shape", [(4, 5), (5,)])
def test_kl_div_matches_torch(device, rng, dtype, reduction, log_target, target_shape):
    logq = np.log(rng.dirichlet(np.ones(5), 4)).astype(dtype)
    p = rng.dirichlet(np.ones(5), 4 if len(target_shape) == 2 else None).astype(dtype)  # (5,) broadcasts
    if not log_target: p.reshape(-1)[:2] = 0.0  # 0 log 0 = 0
    p = np.log(p) if log_target else p
    x, xt = leaf(logq, device)
    y, yt = leaf(p.astype(dtype), device, requires_grad=log_target)  # torch's target gradient is NaN at p = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reduction='mean' warns in both
        check_loss(lambda a, b: F.kl_div(a, b, reduction=reduction, log_target=log_target),
                   lambda a, b: TF.kl_div(a, b, reduction=reduction, log_target=log_target), x, xt, y, yt, rng, device,
                   permute=len(target_shape) == 2)
        ours = nn.KLDivLoss(reduction=reduction, log_target=log_target)
        theirs = torch.nn.KLDivLoss(reduction=reduction, log_target=log_target)
        assert_close(ours(x, y), theirs(xt, yt))
    assert repr(ours) == repr(theirs)

def test_kl_div_warnings_and_errors_match_torch():
    logq, p = np.log(np.full((2, 3), 1 / 3)), np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    ours, our_warnings = torch_reduction_warnings(lambda: F.kl_div(mt.tensor(logq), mt.tensor(p)))
    theirs, their_warnings = torch_reduction_warnings(lambda: TF.kl_div(torch.tensor(logq), torch.tensor(p)))
    assert_close(ours, theirs)
    assert our_warnings == their_warnings and len(our_warnings) == 1
    for reduction in ("batchmean", "sum", "none"):
        assert torch_reduction_warnings(lambda: F.kl_div(mt.tensor(logq), mt.tensor(p), reduction=reduction))[1] == []
    assert_close(F.kl_div(mt.tensor(-1.0), mt.tensor(0.3), reduction="batchmean"),
                 TF.kl_div(torch.tensor(-1.0), torch.tensor(0.3), reduction="batchmean"))
    for ours_fn, theirs_fn in [(lambda: F.kl_div(mt.ones(3, 4), mt.ones(3, 2)), lambda: TF.kl_div(torch.ones(3, 4), torch.ones(3, 2))),
                               (lambda: F.kl_div(mt.ones(3), mt.ones(3), reduction="x"),
                                lambda: TF.kl_div(torch.ones(3), torch.ones(3), reduction="x"))]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as theirs_error: theirs_fn()
            with pytest.raises(theirs_error.type): ours_fn()

# ---------------------------------------------------------------- cosine similarity, normalize

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape1, shape2, dim", [((5, 4), (5, 4), 1), ((5, 4), (1, 4), 1), ((5, 4), (5, 4), 0),
                                                 ((2, 3, 4), (2, 3, 4), -1), ((2, 3, 4), (3, 1), 1), ((4,), (4,), 0)])
@pytest.mark.parametrize("eps", [1e-8, 0.5])
def test_cosine_similarity_matches_torch(device, rng, dtype, shape1, shape2, dim, eps):
    a = rng.standard_normal(shape1).astype(dtype)
    b = rng.standard_normal(shape2).astype(dtype)
    if len(shape1) == 2 and shape1[0] > 1: a[1] *= 0.05  # a short vector: below eps = 0.5, the clamp acts
    x1, x1t = leaf(a, device)
    x2, x2t = leaf(b, device)
    y, yt = F.cosine_similarity(x1, x2, dim, eps), TF.cosine_similarity(x1t, x2t, dim, eps)
    assert_close(y, yt)
    backward_both(y, yt, rng, device)
    assert_close(x1.grad, x1t.grad)
    assert_close(x2.grad, x2t.grad)
    assert_close(nn.CosineSimilarity(dim, eps)(x1, x2), torch.nn.CosineSimilarity(dim, eps)(x1t, x2t))

def test_cosine_similarity_of_a_zero_vector_matches_torch():
    a = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    b = np.array([[1.0, -1.0, 2.0], [0.0, 0.0, 0.0]])
    x1, x1t = leaf(a, "numpy")
    x2, x2t = leaf(b, "numpy")
    y, yt = F.cosine_similarity(x1, x2), TF.cosine_similarity(x1t, x2t)
    assert_close(y, yt)
    y.sum().backward()
    yt.sum().backward()
    assert_close(x1.grad, x1t.grad)
    assert_close(x2.grad, x2t.grad)
    assert repr(nn.CosineSimilarity(0, 1e-3)) == repr(torch.nn.CosineSimilarity(0, 1e-3))

def test_cosine_similarity_errors_match_torch():
    cases = [(lambda lib: lib.tensor([[1, 2]]), lambda lib: lib.tensor([[1, 3]]), {}),
             (lambda lib: lib.ones(3, 4), lambda lib: lib.ones(2, 4), {}),
             (lambda lib: lib.ones(3, 4), lambda lib: lib.ones(3, 4), dict(dim=2)),
             (lambda lib: lib.ones(4), lambda lib: lib.ones(4), {})]
    for make1, make2, kwargs in cases:
        with pytest.raises(Exception) as theirs: TF.cosine_similarity(make1(torch), make2(torch), **kwargs)
        with pytest.raises(theirs.type): F.cosine_similarity(make1(mt), make2(mt), **kwargs)
    assert_close(F.cosine_similarity(mt.tensor([[1, 2]]), mt.tensor([[1.0, 3.0]])),
                 TF.cosine_similarity(torch.tensor([[1, 2]]), torch.tensor([[1.0, 3.0]])))
    with pytest.raises(TypeError, match="argument 'x2' \\(position 2\\) must be Tensor, not numpy.ndarray"):
        F.cosine_similarity(mt.ones(3), np.ones(3), dim=0)

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [1, 2, 3, 0.5, math.inf])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("eps", [1e-12, 0.5])
def test_normalize_matches_torch(device, rng, dtype, p, dim, eps):
    arr = rng.standard_normal((4, 5)).astype(dtype)
    arr[1] *= 0.01  # a short row (and column entries), so that eps = 0.5 clamps
    x, xt = leaf(arr, device)
    xs, xts = strided(x, xt)
    y, yt = F.normalize(xs, p, dim, eps), TF.normalize(xts, p, dim, eps)
    assert_close(y, yt)
    backward_both(y, yt, rng, device)
    assert_close(x.grad, xt.grad)

def test_normalize_zero_rows_and_errors_match_torch():
    x, xt = leaf(np.array([[0.0, 0.0], [3.0, 4.0]]), "numpy")
    y, yt = F.normalize(x), TF.normalize(xt)
    assert_close(y, yt)
    y.sum().backward()
    yt.sum().backward()
    assert_close(x.grad, xt.grad)
    for make, kwargs in [(lambda lib: lib.tensor([[1, 2]]), {}), (lambda lib: lib.ones(4), {}),
                         (lambda lib: lib.ones(4), dict(dim=3))]:
        with pytest.raises(Exception) as theirs: TF.normalize(make(torch), **kwargs)
        with pytest.raises(theirs.type): F.normalize(make(mt), **kwargs)
    assert_close(F.normalize(mt.ones(4), dim=0), TF.normalize(torch.ones(4), dim=0))

# ---------------------------------------------------------------- legacy size_average / reduce

LEGACY_FLAGS = [(None, None), (True, None), (False, None), (None, True), (None, False), (True, True), (True, False),
                (False, True), (False, False)]
LOSS_CLASSES = ["L1Loss", "MSELoss", "SmoothL1Loss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "NLLLoss",
                "CrossEntropyLoss"]

@pytest.mark.parametrize("name", LOSS_CLASSES)
@pytest.mark.parametrize("size_average, reduce", LEGACY_FLAGS)
def test_legacy_loss_arguments_map_and_warn_as_in_torch(name, size_average, reduce):
    ours, our_warnings = torch_reduction_warnings(lambda: getattr(nn, name)(size_average=size_average, reduce=reduce))
    theirs, their_warnings = torch_reduction_warnings(lambda: getattr(torch.nn, name)(size_average=size_average,
                                                                                      reduce=reduce))
    assert ours.reduction == theirs.reduction
    assert our_warnings == their_warnings

@pytest.mark.parametrize("name", ["L1Loss", "MSELoss", "SmoothL1Loss", "KLDivLoss"])
def test_legacy_positional_flags_as_in_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert getattr(nn, name)(False).reduction == getattr(torch.nn, name)(False).reduction == "sum"
        assert getattr(nn, name)(True, False).reduction == getattr(torch.nn, name)(True, False).reduction == "none"

def _legacy_call(lib, fn, rng_seed, size_average, reduce):
    rng = np.random.default_rng(rng_seed)
    make = (lambda a: mt.tensor(a)) if lib is F else (lambda a: torch.tensor(a))
    x, p = rng.standard_normal((4, 3)), rng.uniform(0.01, 0.99, (4, 3))
    args = {"l1_loss": (x, p), "mse_loss": (x, p), "smooth_l1_loss": (x, p), "binary_cross_entropy": (p, p[::-1].copy()),
            "binary_cross_entropy_with_logits": (x, p), "kl_div": (np.log(p), p),
            "nll_loss": (x, np.array([0, 2, 1, 1])), "cross_entropy": (x, np.array([0, 2, 1, 1]))}[fn]
    return getattr(lib, fn)(*map(make, args), size_average=size_average, reduce=reduce)

@pytest.mark.parametrize("fn", ["l1_loss", "mse_loss", "smooth_l1_loss", "binary_cross_entropy",
                                "binary_cross_entropy_with_logits", "kl_div", "nll_loss", "cross_entropy"])
@pytest.mark.parametrize("size_average, reduce", LEGACY_FLAGS[1:])
def test_legacy_functional_arguments_match_torch(fn, size_average, reduce):
    ours, our_warnings = torch_reduction_warnings(lambda: _legacy_call(F, fn, 0, size_average, reduce))
    theirs, their_warnings = torch_reduction_warnings(lambda: _legacy_call(TF, fn, 0, size_average, reduce))
    assert_close(ours, theirs)
    assert our_warnings == their_warnings

def test_elementwise_mean_is_mean_with_torchs_warning():
    x = np.arange(6.0).reshape(2, 3)
    ours, our_warnings = torch_reduction_warnings(lambda: F.l1_loss(mt.tensor(x), mt.zeros(2, 3, dtype=mt.float64),
                                                                    reduction="elementwise_mean"))
    theirs, their_warnings = torch_reduction_warnings(lambda: TF.l1_loss(torch.tensor(x), torch.zeros(2, 3, dtype=torch.float64),
                                                                         reduction="elementwise_mean"))
    assert_close(ours, theirs)
    assert our_warnings == their_warnings

# ---------------------------------------------------------------- pad and one_hot

PADS = [  # (input shape, pad, modes)
    ((3, 4), (1, 2), "all"), ((2, 3, 4), (1, 2), "all"), ((2, 3, 4), (3, 3), "all"), ((2, 3, 4), (0, 0), "all"),
    ((2, 3, 4), (-1, 2), "all"), ((2, 3, 4), (2, -1), "all"), ((2, 3, 4), (-1, -1), "all"), ((2, 3, 4), (4, 4), "circular"),
    ((2, 3, 4), (1, 1, 2, 2), "all"), ((1, 2, 3, 4), (1, 0, 0, 2), "all"), ((1, 2, 3, 4), (2, 1, 1, 2), "all"),
    ((1, 2, 2, 3, 4), (1, 0, 0, 1, 1, 1), "all"), ((2, 2, 3, 4), (1, 2, 0, 1, 1, 1), "all"),
    ((4,), (2, 3), "constant"), ((4,), (-1, -2), "constant"), ((3, 4), (1, 1, 2, 0), "constant"),
    ((2, 3, 4), (1, 1, 1, 1, 1, 1), "constant"), ((2, 3, 4), (-2, -2), "constant"),
]
MODES = ["constant", "reflect", "replicate", "circular"]
PAD_CASES = [(shape, amounts, mode) for shape, amounts, modes in PADS for mode in MODES if modes in ("all", mode)]

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, amounts, mode", PAD_CASES)
def test_pad_matches_torch(device, rng, dtype, shape, amounts, mode):
    x, xt = leaf(rng.standard_normal(shape).astype(dtype), device)
    xs, xts = strided(x, xt)
    xs, xts = strided(xs, xts)  # permuted twice: the original shape, through two views
    y, yt = F.pad(xs, amounts, mode), TF.pad(xts, amounts, mode)
    assert_close(y, yt)
    if yt.numel():
        backward_both(y, yt, rng, device)
        assert_close(x.grad, xt.grad)

def test_pad_constant_values_match_torch():
    x = np.arange(12).reshape(3, 4)
    for value in (2.5, -1, None):
        assert_close(F.pad(mt.tensor(x), (1, 2), value=value), TF.pad(torch.tensor(x), (1, 2), value=value))
        assert_close(F.pad(mt.tensor(x * 1.0), [2, 0, 1, 1], value=value), TF.pad(torch.tensor(x * 1.0), [2, 0, 1, 1], value=value))
    assert_close(F.pad(mt.tensor(1.5), ()), TF.pad(torch.tensor(1.5), ()))
    assert_close(F.pad(mt.tensor(x * 1.0).reshape(1, 3, 4), (1, 1), "reflect", value=0),
                 TF.pad(torch.tensor(x * 1.0).reshape(1, 3, 4), (1, 1), "reflect", value=0))

BAD_PADS = [((4,), (1, 2), "reflect", None), ((4,), (1, 1, 1, 1), "constant", None), ((2, 3), (1, 1, 1, 1), "reflect", None),
            ((1, 3, 4), (1, 0, 0, 1, 1, 1), "replicate", None), ((1, 2, 3, 4), (1, 2), "circular", None),
            ((1, 3, 4), (4, 4), "reflect", None), ((1, 3, 4), (5, 0), "circular", None), ((1, 3, 4), (1, 1, 1), "constant", None),
            ((1, 3, 4), (1, 1), "wrap", None), ((1, 3, 4), (1, 1), "reflect", 2.5), ((1, 3, 4), (1.0, 1), "circular", None),
            ((1, 2, 0), (1, 1), "replicate", None), ((1, 2, 0), (1, 1), "reflect", None)]

@pytest.mark.parametrize("shape, amounts, mode, value", BAD_PADS)
def test_pad_errors_match_torch(shape, amounts, mode, value):
    with pytest.raises(Exception) as theirs: TF.pad(torch.zeros(shape), amounts, mode, value)
    with pytest.raises(theirs.type) as ours: F.pad(mt.zeros(shape), amounts, mode, value)
    first_line = str(theirs.value).split("\n")[0]
    if not first_line.startswith(("Expected 2D", "narrow")): assert first_line in str(ours.value)

def test_pad_too_negative_is_a_runtime_error():
    with pytest.raises(RuntimeError): TF.pad(torch.zeros(3, 4), (-3, -2))
    with pytest.raises(RuntimeError, match="negative size"): F.pad(mt.zeros(3, 4), (-3, -2))

@pytest.mark.parametrize("shape, num_classes", [((5,), -1), ((5,), 7), ((2, 3), -1), ((), -1), ((), 4), ((0,), 3)])
def test_one_hot_matches_torch(device, rng, shape, num_classes):
    idx = rng.integers(0, 4, shape)
    ours = F.one_hot(mt.tensor(idx, device=device), num_classes)
    assert_close(ours, TF.one_hot(torch.tensor(idx), num_classes))
    assert ours.device == device

@pytest.mark.parametrize("values, dtype, num_classes", [([1, 2], np.int32, -1), ([1.0, 2.0], np.float32, -1),
                                                        ([-1, 2], np.int64, -1), ([1, 5], np.int64, 3),
                                                        ([], np.int64, -1), ([0], np.int64, 0), ([0], np.int64, -2)])
def test_one_hot_errors_match_torch(values, dtype, num_classes):
    with pytest.raises(Exception) as theirs: TF.one_hot(torch.tensor(np.array(values, dtype)), num_classes)
    with pytest.raises(theirs.type) as ours: F.one_hot(mt.tensor(np.array(values, dtype)), num_classes)
    assert str(theirs.value).split(".")[0] in str(ours.value)

@pytest.mark.parametrize("fn", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                                "binary_cross_entropy_with_logits", "kl_div", "nll_loss", "cross_entropy", "normalize",
                                "one_hot", "pad"])
def test_losses_and_utilities_name_a_numpy_input(fn):
    args = {"pad": ((1, 1),), "normalize": (), "one_hot": ()}.get(fn, (mt.ones(3),))
    with pytest.raises(TypeError, match=rf"{fn}\(\): argument 'input' \(position 1\) must be Tensor, not numpy.ndarray"):
        getattr(F, fn)(np.ones(3), *args)

# ---------------------------------------------------------------- containers

def describe(model):
    return ([n for n, _ in model.named_modules()], [n for n, _ in model.named_parameters()], list(model.state_dict()))

def test_module_dict_matches_torch():
    make = lambda lib: lib.ModuleDict({"b": lib.ReLU(), "a": lib.Linear(2, 3)})
    ours, theirs = make(nn), make(torch.nn)
    assert describe(ours) == describe(theirs) and repr(ours) == repr(theirs)
    for m in (ours, theirs): m.update([("c", type(m["b"])()), ("a", type(m["b"])())])
    assert list(ours) == list(theirs) and list(ours.keys()) == list(theirs.keys()) == ["b", "a", "c"]
    assert [type(v).__name__ for v in ours.values()] == [type(v).__name__ for v in theirs.values()]
    assert type(ours.pop("c")).__name__ == type(theirs.pop("c")).__name__ and len(ours) == len(theirs) == 2
    del ours["b"], theirs["b"]
    assert list(ours.items())[0][0] == list(theirs.items())[0][0] == "a" and "a" in ours and "b" not in ours
    ours.clear()
    assert len(ours) == 0 and repr(ours) == repr(torch.nn.ModuleDict())
    both = [nn.ModuleDict(), torch.nn.ModuleDict()]
    for action in [lambda m: m.update([("c",)]), lambda m: m.update(3), lambda m: m.__setitem__("d", 3),
                   lambda m: m.__setitem__(3, type(m)()), lambda m: m.__setitem__("a.b", type(m)()),
                   lambda m: m["missing"], lambda m: m.pop("missing"), lambda m: m(1)]:
        with pytest.raises(Exception) as theirs_error: action(both[1])
        with pytest.raises(theirs_error.type): action(both[0])

def test_parameter_list_matches_torch(rng):
    arrays = [rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal(4)]
    ours = nn.ParameterList([mt.tensor(arrays[0]), nn.Parameter(mt.tensor(arrays[1]))])
    theirs = torch.nn.ParameterList([torch.tensor(arrays[0]), torch.nn.Parameter(torch.tensor(arrays[1]))])
    assert describe(ours) == describe(theirs)
    assert repr(ours) == repr(theirs).replace("torch.", "")
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in ours)
    for lst, lib in ((ours, mt), (theirs, torch)):
        lst.append(lib.ones(1)).extend([lib.zeros(2)])
        lst += [lib.ones(3)]
        lst[0] = lib.full((2, 3), 5.0)
        lst.append("a string")  # PyTorch keeps other objects as plain attributes
    assert describe(ours) == describe(theirs) and len(ours) == len(theirs) == 6
    assert repr(ours) == repr(theirs).replace("torch.", "")
    assert ours[0].tolist() == theirs[0].tolist() and isinstance(ours[0], nn.Parameter)
    assert [tuple(p.shape) for p in ours[1:5]] == [tuple(p.shape) for p in theirs[1:5]] and ours[-1] == "a string"
    assert type(ours[1:3]).__name__ == "ParameterList" and list(ours[1:3].state_dict()) == list(theirs[1:3].state_dict())
    assert [k for k in dir(ours) if k.isdigit()] == [k for k in dir(theirs) if k.isdigit()] == []
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    for action in [lambda l: l[10], lambda l: l.__setitem__(10, 1), lambda l: l.extend(3), lambda l: l(1),
                   lambda l: l.extend(l[0] * 1)]:
        with pytest.raises(Exception) as theirs_error: action(theirs)
        with pytest.raises(theirs_error.type): action(ours)
    with pytest.raises(RuntimeError): torch.nn.ParameterList([torch.tensor([1, 2])])
    with pytest.raises(RuntimeError, match="floating point"): nn.ParameterList([mt.tensor([1, 2])])

def test_parameter_dict_matches_torch(rng):
    w = rng.standard_normal((3, 1)).astype(np.float32)
    ours = nn.ParameterDict({"w": mt.tensor(w), "b": nn.Parameter(mt.zeros(2, dtype=mt.float64))})
    theirs = torch.nn.ParameterDict({"w": torch.tensor(w), "b": torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))})
    assert describe(ours) == describe(theirs) and list(ours) == list(theirs) == ["b", "w"]  # a dict is read sorted
    assert repr(ours) == repr(theirs).replace("torch.", "")
    for d, lib in ((ours, mt), (theirs, torch)):
        d["s"] = "hello"  # not a tensor: a plain attribute, not in the state_dict
        d.update([("u", lib.ones(3))])
        d.update({"z": lib.ones(1), "y": lib.ones(1)})
        d.setdefault("n", lib.ones(2))
        d.setdefault("w", lib.ones(9))
    assert describe(ours) == describe(theirs) and list(ours) == list(theirs)
    assert repr(ours) == repr(theirs).replace("torch.", "")
    assert ours.get("missing", 4) == theirs.get("missing", 4) == 4 and ours.get("s") == "hello"
    assert ours.pop("s") == "hello" and theirs.pop("s") == "hello"
    assert ours.popitem()[0] == theirs.popitem()[0] and list(reversed(ours)) == list(reversed(theirs))
    assert list(ours.copy()) == list(theirs.copy()) and ours.copy()["w"] is ours["w"]
    assert list(ours | nn.ParameterDict({"q": mt.ones(1)})) == list(theirs | torch.nn.ParameterDict({"q": torch.ones(1)}))
    assert list(ours.fromkeys(["p", "q"], mt.ones(1)).state_dict()) == ["p", "q"]
    del ours["u"], theirs["u"]
    assert describe(ours) == describe(theirs) and ("u" in ours, "w" in ours) == (False, True)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    for action in [lambda d: d.__setitem__(1, d["w"]), lambda d: d[1], lambda d: d["missing"],
                   lambda d: d.__setitem__("a.b", d["w"] * 1), lambda d: d.__setitem__("keys", d["w"] * 1),
                   lambda d: d.update(3), lambda d: d.update([("v",)]), lambda d: d(1)]:
        with pytest.raises(Exception) as theirs_error: action(theirs)
        with pytest.raises(theirs_error.type): action(ours)
    assert list(ours) == [k for k in theirs if k not in (1, "a.b", "keys")]  # torch keeps the keys it refused
    ours.clear()
    assert len(ours) == 0 and list(ours.state_dict()) == []

def test_torch_state_dict_loads_into_containers():
    make = lambda lib: lib.nn.Sequential(lib.nn.ModuleDict({"enc": lib.nn.Linear(3, 4)}),
                                         lib.nn.ParameterList([lib.randn(4)]), lib.nn.ParameterDict({"s": lib.randn(1)}))
    theirs, ours = make(torch), make(mt)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["0.enc.weight", "0.enc.bias", "1.0", "2.s"]
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    forward = lambda m, x: m[0]["enc"](x) * m[1][0] + m[2]["s"]
    assert_close(forward(ours, mt.tensor(x)), forward(theirs, torch.tensor(x)))

# ---------------------------------------------------------------- walking the tree: named_modules, apply

def tied_model(lib):
    shared = lib.Linear(3, 3)
    block = lib.Sequential(shared, lib.Tanh(), shared)
    return lib.Sequential(block, lib.ModuleList([block, lib.Linear(3, 2)]), lib.ReLU())

@pytest.mark.parametrize("kwargs", [{}, dict(prefix="model"), dict(remove_duplicate=False),
                                    dict(prefix="m", remove_duplicate=False)])
def test_named_modules_matches_torch(kwargs):
    ours, theirs = tied_model(nn), tied_model(torch.nn)
    assert [n for n, _ in ours.named_modules(**kwargs)] == [n for n, _ in theirs.named_modules(**kwargs)]
    assert [type(m).__name__ for _, m in ours.named_modules(**kwargs)] == \
        [type(m).__name__ for _, m in theirs.named_modules(**kwargs)]
    memo, memo_t = {ours[0]}, {theirs[0]}  # modules to skip
    assert [n for n, _ in ours.named_modules(memo, **kwargs)] == [n for n, _ in theirs.named_modules(memo_t, **kwargs)]
    assert len(memo) == len(memo_t)

@pytest.mark.parametrize("kwargs", [{}, dict(prefix="model"), dict(recurse=False), dict(remove_duplicate=False),
                                    dict(prefix="p", recurse=True, remove_duplicate=False)])
def test_named_parameters_and_buffers_match_torch(kwargs):
    ours, theirs = tied_model(nn), tied_model(torch.nn)
    assert [n for n, _ in ours.named_parameters(**kwargs)] == [n for n, _ in theirs.named_parameters(**kwargs)]
    assert [n for n, _ in ours[0].named_parameters(**kwargs)] == [n for n, _ in theirs[0].named_parameters(**kwargs)]
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]

def test_apply_visits_like_torch():
    ours, theirs = tied_model(nn), tied_model(torch.nn)
    seen, seen_t = [], []
    assert ours.apply(lambda m: seen.append(type(m).__name__)) is ours
    theirs.apply(lambda m: seen_t.append(type(m).__name__))
    assert seen == seen_t
    def init(m):
        if isinstance(m, nn.Linear): nn.init.constant_(m.weight, 0.5)
    ours.apply(init)
    assert all(np.all(to_numpy(m.weight) == 0.5) for m in ours.modules() if isinstance(m, nn.Linear))

# ---------------------------------------------------------------- argument types of Linear, the Parameter face

def test_linear_names_a_numpy_input_like_torch():
    for ours, theirs in [(lambda: nn.Linear(4, 3)(np.ones((2, 4), np.float32)),
                          lambda: torch.nn.Linear(4, 3)(np.ones((2, 4), np.float32))),
                         (lambda: F.linear([1.0, 2.0], mt.ones(3, 2)), lambda: TF.linear([1.0, 2.0], torch.ones(3, 2))),
                         (lambda: F.linear(mt.ones(2, 4), np.ones((3, 4), np.float32)),
                          lambda: TF.linear(torch.ones(2, 4), np.ones((3, 4), np.float32))),
                         (lambda: F.linear(mt.ones(2, 4), mt.ones(3, 4), np.ones(3, np.float32)),
                          lambda: TF.linear(torch.ones(2, 4), torch.ones(3, 4), np.ones(3, np.float32)))]:
        with pytest.raises(TypeError) as theirs_error: theirs()
        with pytest.raises(TypeError) as ours_error: ours()
        assert str(ours_error.value) == str(theirs_error.value)

def test_parameter_face():
    import minitorch_nb.nn.parameter as parameter
    from minitorch_nb.nn.parameter import Parameter
    assert Parameter is nn.Parameter is mt.nn.parameter.Parameter is parameter.Parameter
    assert parameter.__name__ == "minitorch_nb.nn.parameter"
    assert isinstance(nn.Linear(2, 2).weight, Parameter)
