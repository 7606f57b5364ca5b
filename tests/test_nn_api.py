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
