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
