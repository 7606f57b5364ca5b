"Tensor semantics a PyTorch user reaches for, each checked against torch: values and exception types."
import copy
import pickle
import warnings
import numpy as np
import pytest
import torch
import minitorch_nb as mt
from oracle import assert_close

pytestmark = pytest.mark.filterwarnings("error")  # a leaked numpy RuntimeWarning is a failure

def both(value, dtype=np.float32, requires_grad=True):
    arr = np.asarray(value, dtype=dtype)
    return mt.tensor(arr, requires_grad=requires_grad), torch.tensor(arr, requires_grad=requires_grad)

def raises_like_torch(ours, theirs, exc, match=None):
    "Both calls raise `exc` (the same type in both libraries)."
    with pytest.raises(exc, match=match): ours()
    with pytest.raises(exc): theirs()

# --- requires_grad and .grad, assigned ---------------------------------------------------------------

def test_requires_grad_setter_on_a_leaf():
    x, tx = both([1.0, 2.0], requires_grad=False)
    x.requires_grad = True; tx.requires_grad = True
    assert (x.requires_grad, x.is_leaf) == (tx.requires_grad, tx.is_leaf) == (True, True)
    (x * x).sum().backward(); (tx * tx).sum().backward()
    assert_close(x.grad, tx.grad)
    x.requires_grad = False; tx.requires_grad = False
    assert not x.requires_grad and not tx.requires_grad

@pytest.mark.parametrize("value", [True, False])
def test_requires_grad_setter_on_a_non_leaf_raises_like_torch(value):
    x, tx = both([1.0, 2.0])
    y, ty = x * 2, tx * 2
    raises_like_torch(lambda: setattr(y, "requires_grad", value), lambda: setattr(ty, "requires_grad", value),
                      RuntimeError, "leaf tensors")

def test_requires_grad_setter_on_integers_raises_like_torch():
    x, tx = mt.tensor([1, 2]), torch.tensor([1, 2])
    raises_like_torch(lambda: setattr(x, "requires_grad", True), lambda: setattr(tx, "requires_grad", True),
                      RuntimeError, "floating point")
    x.requires_grad = False; tx.requires_grad = False  # switching off is always fine

def test_requires_grad_on_a_non_leaf_that_requires_grad_is_a_no_op_like_torch():
    x, tx = both([1.0, 2.0])
    y, ty = x * 2, tx * 2
    assert y.requires_grad_() is y and ty.requires_grad_() is ty and y.requires_grad_(True).grad_fn is not None
    raises_like_torch(lambda: y.requires_grad_(False), lambda: ty.requires_grad_(False), RuntimeError, "detach")
    with mt.no_grad(): z = x * 2
    with torch.no_grad(): tz = tx * 2
    assert z.requires_grad_().requires_grad and tz.requires_grad_().requires_grad  # a leaf: switched on

@pytest.mark.parametrize("value", [0.0, 1, np.ones(2, np.float32), [1.0, 1.0]])
def test_grad_must_be_a_tensor_or_none_like_torch(value):
    x, tx = both([1.0, 2.0])
    raises_like_torch(lambda: setattr(x, "grad", value), lambda: setattr(tx, "grad", value), TypeError,
                      "expected to be a Tensor or None")

@pytest.mark.parametrize("make, match", [
    (lambda lib: lib.ones(3), r"size \[3\] to a tensor of size \[2\]"),
    (lambda lib: lib.tensor(1.0), r"size \[\] to a tensor of size \[2\]"),
    (lambda lib: lib.ones(2, dtype=lib.float64), "dtype float64 to a tensor of dtype float32"),
    (lambda lib: lib.ones(2, dtype=lib.long), "dtype int64"),
])
def test_grad_of_the_wrong_shape_or_dtype_raises_like_torch(make, match):
    x, tx = both([1.0, 2.0])
    raises_like_torch(lambda: setattr(x, "grad", make(mt)), lambda: setattr(tx, "grad", make(torch)),
                      RuntimeError, match)
    assert x.grad is None and tx.grad is None  # nothing was assigned

def test_grad_assignment_that_torch_accepts():
    x, tx = both([1.0, 2.0])
    raises_like_torch(lambda: setattr(x, "grad", x), lambda: setattr(tx, "grad", tx), RuntimeError, "its own grad")
    x.grad, tx.grad = mt.tensor([0.5, 0.5]), torch.tensor([0.5, 0.5])
    (x * 2).sum().backward(); (tx * 2).sum().backward()
    assert_close(x.grad, tx.grad)  # backward accumulates into an assigned gradient
    x.grad = None; tx.grad = None
    assert x.grad is None and tx.grad is None
    x.grad = mt.ones(2); del x.grad
    assert x.grad is None
    y, ty = x * 2, tx * 2
    y.grad, ty.grad = mt.zeros(2), torch.zeros(2)  # a non-leaf's .grad can be assigned too
    assert_close(y.grad, ty.grad)

# --- numpy arrays as operands -------------------------------------------------------------------------

def test_torch_refuses_to_mix_numpy_with_tensors_that_require_grad():
    "What PyTorch does: an error, never a silently dropped graph. minitorch_nb treats the array as a constant."
    tw = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"): tw + np.ones(2)
    with pytest.raises(TypeError): np.ones(2) + tw
    with pytest.raises(TypeError): np.ones(2) * tw

OPS = [
    ("w + a", lambda w, a: w + a), ("a + w", lambda w, a: a + w), ("a * w", lambda w, a: a * w),
    ("w - a", lambda w, a: w - a), ("a - w", lambda w, a: a - w), ("a / w", lambda w, a: a / w),
    ("w / a", lambda w, a: w / a), ("w ** a", lambda w, a: w ** a), ("a ** w", lambda w, a: a ** w),
]

@pytest.mark.parametrize("name, op", OPS, ids=[n for n, _ in OPS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_arrays_are_constants_and_the_graph_is_kept(name, op, dtype):
    "torch's answer for the same program with the array made a constant tensor: torch.tensor(a)."
    a = np.array([1.5, 2.0], dtype=dtype)
    w, tw = both([0.5, 3.0])
    out, tout = op(w, a), op(tw, torch.tensor(a))
    assert isinstance(out, mt.Tensor) and out.grad_fn is not None
    out.sum().backward(); tout.sum().backward()
    assert_close(out, tout); assert_close(w.grad, tw.grad)

@pytest.mark.parametrize("shape_w, shape_a", [((2,), (2, 2)), ((3, 2), (2,)), ((3, 2), (2, 4))])
def test_matmul_with_numpy_arrays_keeps_the_graph(shape_w, shape_a):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape_a).astype(np.float32)
    w, tw = both(rng.standard_normal(shape_w))
    for out, tout in ((w @ a, tw @ torch.tensor(a)), (a.T @ w.T if len(shape_w) > 1 else a @ w,
                                                      torch.tensor(a.T) @ tw.T if len(shape_w) > 1 else torch.tensor(a) @ tw)):
        assert out.grad_fn is not None
        w.grad, tw.grad = None, None
        out.sum().backward(); tout.sum().backward()
        assert_close(out, tout); assert_close(w.grad, tw.grad)

def test_numpy_zero_d_array_promotes_like_a_zero_d_tensor():
    w, tw = both([1.0, 2.0])
    out, tout = w * np.array(2.0), tw * torch.tensor(np.array(2.0))
    assert out.dtype == np.float32 and tout.dtype == torch.float32
    assert_close(out, tout)

def test_in_place_with_a_numpy_array():
    x, tx = both([1.0, 2.0], requires_grad=False)
    x += np.array([1.0, 1.0], np.float32); tx += torch.tensor([1.0, 1.0])
    assert_close(x, tx)

def test_numpy_array_on_another_device_becomes_a_constant_there():
    if "cpu" not in mt.autograd.available_devices(): pytest.skip("no 'cpu' device")
    w = mt.tensor([1.0, 2.0], device="cpu", requires_grad=True)
    out = np.array([3.0, 4.0], np.float32) * w
    assert out.device == "cpu" and out.grad_fn is not None
    out.sum().backward()
    assert w.grad.tolist() == [3.0, 4.0]

def test_numpy_reads_values_only_without_grad_like_torch():
    x, tx = both([1.0, 2.0], requires_grad=False)
    assert np.asarray(x).tolist() == np.asarray(tx).tolist() == [1.0, 2.0]
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.allclose(x, [1.0, 2.0])
    with warnings.catch_warnings():  # torch's own __array_wrap__ has numpy 1's signature: numpy 2 warns about it
        warnings.simplefilter("ignore", DeprecationWarning)
        theirs = [np.sin(tx), np.add(tx, 1), np.exp(torch.tensor([1, 2])), np.isnan(tx), np.sin(torch.tensor(1.0))]
    ours = [np.sin(x), np.add(x, 1), np.exp(mt.tensor([1, 2])), np.isnan(x), np.sin(mt.tensor(1.0))]
    for o, t in zip(ours, theirs):  # a ufunc's result comes back as a tensor: numpy's dtypes, bool as uint8
        assert type(o) is mt.Tensor and type(t) is torch.Tensor
        assert_close(o, t)
    assert type(np.concatenate([x, x])) is type(np.concatenate([tx, tx])) is np.ndarray
    w, tw = both([1.0, 2.0])
    raises_like_torch(lambda: np.asarray(w), lambda: np.asarray(tw), RuntimeError, "requires grad")
    raises_like_torch(lambda: np.sin(w), lambda: np.sin(tw), RuntimeError, "requires grad")  # never a dropped graph
    assert np.asarray(w.detach()).tolist() == [1.0, 2.0]

def test_other_operands_are_refused_like_torch():
    x, tx = both([1.0, 2.0])
    for bad in ([1, 1], "a", None, {1: 2}):
        raises_like_torch(lambda: x + bad, lambda: tx + bad, TypeError)
        raises_like_torch(lambda: bad * x, lambda: bad * tx, TypeError)
    raises_like_torch(lambda: x @ [1.0, 1.0], lambda: tx @ [1.0, 1.0], TypeError)

# --- dtypes by PyTorch's names --------------------------------------------------------------------------

DTYPE_NAMES = ["float", "float32", "double", "float64", "half", "float16", "int", "int32", "long", "int64",
               "short", "int16", "int8", "uint8", "bool"]

@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_names_match_torch(name):
    ours, theirs = getattr(mt, name), getattr(torch, name)
    assert ours == np.dtype(str(theirs).removeprefix("torch."))
    z, tz = mt.zeros(3, dtype=ours), torch.zeros(3, dtype=theirs)
    assert z.dtype == ours and str(tz.dtype) == str(theirs)
    assert z.tolist() == tz.tolist()
    assert mt.tensor([1, 0, 1], dtype=ours).tolist() == torch.tensor([1, 0, 1], dtype=theirs).tolist()
    assert mt.ones(2).to(ours).dtype == ours

def test_dtype_names_are_comparable_with_tensor_dtypes():
    assert mt.zeros(3, dtype=mt.long).dtype == mt.long == mt.int64 and mt.ones(2).dtype == mt.float
    assert mt.tensor([1.0]).dtype != mt.double and mt.tensor([True]).dtype == mt.bool

@pytest.mark.parametrize("method", ["float", "double", "half", "int", "long", "short", "char", "byte", "bool"])
def test_conversion_methods_match_torch(method):
    x, tx = mt.tensor([1.7, -0.2, 3.0]), torch.tensor([1.7, -0.2, 3.0])
    out, tout = getattr(x, method)(), getattr(tx, method)()
    assert out.dtype == np.dtype(str(tout.dtype).removeprefix("torch."))
    assert out.tolist() == pytest.approx(tout.tolist(), rel=1e-3) if out.dtype.kind == "f" else out.tolist() == tout.tolist()
    assert callable(mt.Tensor.long) and not callable(mt.long)  # methods on Tensor, dtypes at the top level

def test_mixed_dtype_promotion_matches_torch():
    pairs = [("int32", "int64"), ("uint8", "int8"), ("int16", "float16"), ("float16", "float32"), ("bool", "int8")]
    for a, b in pairs:
        out = mt.ones(2, dtype=getattr(mt, a)) + mt.ones(2, dtype=getattr(mt, b))
        tout = torch.ones(2, dtype=getattr(torch, a)) + torch.ones(2, dtype=getattr(torch, b))
        assert out.dtype == np.dtype(str(tout.dtype).removeprefix("torch.")), (a, b)
    assert (mt.ones(2, dtype=mt.int32) + 1).dtype == mt.int32 and (torch.ones(2, dtype=torch.int32) + 1).dtype == torch.int32
    assert (mt.ones(2, dtype=mt.half) * 2.5).dtype == mt.half

def test_bfloat16_is_a_dtype_like_torchs():
    "mt.bfloat16 (ml_dtypes' numpy bfloat16) works wherever torch.bfloat16 does; tests/test_bfloat16.py has the rest."
    for ours, theirs in ((mt.zeros(2, dtype=mt.bfloat16), torch.zeros(2, dtype=torch.bfloat16)),
                         (mt.tensor([1.0], dtype=mt.bfloat16), torch.tensor([1.0], dtype=torch.bfloat16)),
                         (mt.ones(2).to(mt.bfloat16), torch.ones(2).to(torch.bfloat16)),
                         (mt.ones(2).bfloat16() * 2.5, torch.ones(2).bfloat16() * 2.5)):
        assert ours.dtype == mt.bfloat16 and theirs.dtype == torch.bfloat16
        assert ours.tolist() == theirs.tolist()
    assert np.dtype(mt.bfloat16).itemsize == 2 and repr(mt.bfloat16) == "dtype(bfloat16)"

def test_legacy_tensor_constructor_matches_torch():
    for args in (([1, 2],), ([[1, 2], [3, 4]],), ([True, False],), ([1.5],), ((2, 3),)):
        ours, theirs = mt.Tensor(*args), torch.Tensor(*args)
        assert ours.dtype == mt.float32 and theirs.dtype == torch.float32
        assert ours.tolist() == theirs.tolist()
    for sizes in ((2, 3), (3,), (0,), ()):
        ours, theirs = mt.Tensor(*sizes), torch.Tensor(*sizes)  # uninitialised: shape and dtype only
        assert ours.shape == tuple(theirs.shape) and ours.dtype == mt.float32 and ours.is_leaf
    raises_like_torch(lambda: mt.Tensor(-1), lambda: torch.Tensor(-1), RuntimeError, "negative dimension")
    raises_like_torch(lambda: mt.Tensor([1, 2], [3]), lambda: torch.Tensor([1, 2], [3]), TypeError)
    t, tt = mt.tensor([1, 2]), torch.tensor([1, 2])
    assert mt.Tensor(t).dtype == mt.int64 and torch.Tensor(tt).dtype == torch.int64  # a tensor keeps its dtype
    assert np.shares_memory(mt.Tensor(t).array, t.array)

def test_legacy_constructor_keeps_a_numpy_arrays_dtype():
    "A documented difference: torch.Tensor(ndarray) is float32; here an array keeps its dtype (mt.tensor's rule)."
    assert mt.Tensor(np.ones(2)).dtype == mt.float64 and torch.Tensor(np.ones(2)).dtype == torch.float32
    assert mt.Tensor(np.ones(2), dtype=mt.float32).dtype == mt.float32

# --- pickling and copying -------------------------------------------------------------------------------

def roundtrip(obj): return pickle.loads(pickle.dumps(obj))

def test_pickle_leaves_and_non_leaves_like_torch():
    x, tx = both([1.0, 2.0])
    ((x * 3) ** 2).sum().backward(); ((tx * 3) ** 2).sum().backward()
    y, ty = x * 2, tx * 2
    for ours, theirs in ((mt.tensor([1, 2]), torch.tensor([1, 2])), (x, tx), (y, ty), (x.detach(), tx.detach())):
        a, b = roundtrip(ours), roundtrip(theirs)
        assert (a.tolist(), a.requires_grad, a.is_leaf, a.grad, a.grad_fn is None) == \
               (b.tolist(), b.requires_grad, b.is_leaf, b.grad, b.grad_fn is None)
        assert a.dtype == ours.dtype
    z = roundtrip(y)
    (z * z).sum().backward()  # the copy is a new leaf of its own graph
    assert z.grad.tolist() == [4.0, 8.0]

def test_pickle_in_the_middle_of_a_graph_does_not_disturb_it():
    x, tx = both([1.0, 2.0])
    y = x.sin() * x
    roundtrip((x, y))
    y.sum().backward(); (tx.sin() * tx).sum().backward()
    assert_close(x.grad, tx.grad)

def test_pickle_keeps_subclass_attributes_and_device():
    p, tp = mt.nn.Parameter(mt.ones(2)), torch.nn.Parameter(torch.ones(2))
    q, tq = roundtrip(p), roundtrip(tp)
    assert type(q) is mt.nn.Parameter and type(tq) is torch.nn.Parameter and q.requires_grad and tq.requires_grad
    frozen = roundtrip(mt.nn.Parameter(mt.ones(2), requires_grad=False))
    assert not frozen.requires_grad
    t = mt.ones(2); t.note = "kept"
    assert roundtrip(t).note == "kept"
    if "cpu" in mt.autograd.available_devices():
        c = roundtrip(mt.tensor([1.0, 2.0], device="cpu", requires_grad=True))
        assert c.device == "cpu" and c.requires_grad and c.tolist() == [1.0, 2.0]

def test_pickle_a_module_after_backward_like_torch():
    rng = np.random.default_rng(0)
    net, tnet = mt.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    with torch.no_grad():
        tnet.weight.copy_(torch.tensor(net.weight.detach().numpy())); tnet.bias.copy_(torch.tensor(net.bias.detach().numpy()))
    x = rng.standard_normal((2, 4)).astype(np.float32)
    net(mt.tensor(x)).sum().backward(); tnet(torch.tensor(x)).sum().backward()
    copy_, tcopy = roundtrip(net), roundtrip(tnet)
    for p, tp in zip(copy_.parameters(), tcopy.parameters()):
        assert type(p) is mt.nn.Parameter and p.requires_grad and p.grad is None and tp.grad is None
        assert_close(p, tp)
    copy_(mt.tensor(x)).sum().backward(); tcopy(torch.tensor(x)).sum().backward()
    assert_close(copy_.weight.grad, tcopy.weight.grad)
    assert net.weight.grad is not None  # the original keeps its gradient

def test_deepcopy_keeps_grad_and_refuses_non_leaves_like_torch():
    x, tx = both([1.0, 2.0])
    (x * x).sum().backward(); (tx * tx).sum().backward()
    c, tc = copy.deepcopy(x), copy.deepcopy(tx)
    assert_close(c.grad, tc.grad)
    assert not np.shares_memory(c.array, x.array) and c.requires_grad and c.is_leaf
    c.grad += 1
    assert x.grad.tolist() == [2.0, 4.0]
    raises_like_torch(lambda: copy.deepcopy(x * 2), lambda: copy.deepcopy(tx * 2), RuntimeError, "graph leaves")
    net = mt.nn.Linear(2, 2)
    net(mt.ones(1, 2)).sum().backward()
    net2 = copy.deepcopy(net)
    assert net2.weight.grad.tolist() == net.weight.grad.tolist() and net2.weight is not net.weight

def test_copy_copy_shares_values_like_torch():
    x, tx = both([1.0, 2.0])
    (x * x).sum().backward(); (tx * tx).sum().backward()
    c, tc = copy.copy(x), copy.copy(tx)
    assert np.shares_memory(c.array, x.array) and (c.grad, tc.grad) == (None, None) and c.requires_grad

# --- formatting, comparison with a list, means of nothing ----------------------------------------------

@pytest.mark.parametrize("value, spec", [(1.5, "+.2f"), (1.5, ""), (3, "d"), (3, "5"), (2.25, ".1e"), (True, "")])
def test_format_of_a_zero_d_tensor_matches_torch(value, spec):
    assert format(mt.tensor(value), spec) == format(torch.tensor(value), spec)
    assert f"{mt.tensor(value):{spec}}" == f"{torch.tensor(value):{spec}}"  # the same through an f-string

def test_format_of_other_tensors_matches_torch():
    for value in ([1.5], [1.5, 2.0]):
        raises_like_torch(lambda: format(mt.tensor(value), ".2f"), lambda: format(torch.tensor(value), ".2f"),
                          TypeError, "format")
        assert format(mt.tensor(value), "") == str(mt.tensor(value))
    x, tx = both(1.5)
    assert format(x, ".2f") == format(tx, ".2f") == "1.50"  # requires_grad is fine

def test_equality_with_a_list_is_false_like_torch():
    "PyTorch does not convert a list for ==: it is plain False, and < raises a TypeError."
    x, tx = mt.tensor([1.0, 1.0]), torch.tensor([1.0, 1.0])
    assert (x == [1, 1]) is False and (tx == [1, 1]) is False
    assert (x != [1, 1]) is True and (tx != [1, 1]) is True
    raises_like_torch(lambda: x < [1, 2], lambda: tx < [1, 2], TypeError)

@pytest.mark.parametrize("shape, dim", [((0,), None), ((0, 3), 0), ((0, 3), None), ((2, 0), 1), ((0, 3), 1)])
def test_mean_of_nothing_is_nan_without_a_warning_like_torch(shape, dim):
    x, tx = mt.zeros(*shape, requires_grad=True), torch.zeros(*shape, requires_grad=True)
    out, tout = (x.mean(), tx.mean()) if dim is None else (x.mean(dim), tx.mean(dim))
    assert_close(out, tout)
    out.sum().backward(); tout.sum().backward()
    assert_close(x.grad, tx.grad)
    assert np.isnan(mt.tensor([]).mean().item())

# --- mt.autograd, as torch.autograd ---------------------------------------------------------------------

def test_variable_is_a_silent_alias_like_torch():
    t, tt = mt.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v, tv = mt.autograd.Variable(t), torch.autograd.Variable(tt)
        r, tr = mt.autograd.Variable(t, requires_grad=True), torch.autograd.Variable(tt, requires_grad=True)
    assert type(v) is mt.Tensor and type(tv) is torch.Tensor and v is not t and tv is not tt
    assert np.shares_memory(v.array, t.array) and (v.requires_grad, r.requires_grad) == (tv.requires_grad, tr.requires_grad)
    assert isinstance(t, mt.autograd.Variable) and isinstance(tt, torch.autograd.Variable)
    assert not isinstance(np.ones(2), mt.autograd.Variable)
    y, ty = mt.tensor([1.0], requires_grad=True) * 2, torch.tensor([1.0], requires_grad=True) * 2
    u, tu = mt.autograd.Variable(y), torch.autograd.Variable(ty)
    assert (u.requires_grad, u.is_leaf) == (tu.requires_grad, tu.is_leaf) == (False, True)
    assert mt.autograd.Variable().shape == tuple(torch.autograd.Variable().shape) == (0,)
    raises_like_torch(lambda: mt.autograd.Variable([1, 2]), lambda: torch.autograd.Variable([1, 2]), TypeError,
                      "has to be a tensor")
    with pytest.warns(UserWarning, match="volatile"): mt.autograd.Variable(t, volatile=True)
    with pytest.warns(UserWarning, match="volatile"): torch.autograd.Variable(tt, volatile=True)

def test_autograd_namespace_like_torch():
    x, tx = both([1.0, 2.0])
    for name in ("Function", "grad", "backward", "Variable"):
        assert hasattr(mt.autograd, name) and hasattr(torch.autograd, name)
    (g,), (tg,) = mt.autograd.grad((x * x).sum(), x), torch.autograd.grad((tx * tx).sum(), tx)
    assert_close(g, tg)
    mt.autograd.backward([(x * 3).sum()]); torch.autograd.backward([(tx * 3).sum()])
    assert_close(x.grad, tx.grad)

def test_copy_matches_torch_in_values_dtypes_gradients_and_errors():
    import torch
    for lib in (mt, torch):
        w = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        with lib.no_grad(): w.copy_(lib.tensor([10.0, 20.0], dtype=lib.float64))
        assert (w.tolist(), str(w.dtype).split(".")[-1], w.requires_grad) == ([[10.0, 20.0], [10.0, 20.0]], "float32", True)
    # through the graph: a non-leaf copy_ passes the gradient to the source, not to the overwritten values
    grads = {}
    for name, lib in (("mt", mt), ("torch", torch)):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        src = lib.tensor([5.0, 6.0, 7.0], requires_grad=True)
        y = a * 2
        y.copy_(src * 3)
        (y * lib.tensor([1.0, 10.0, 100.0])).sum().backward()
        grads[name] = (a.grad.tolist() if a.grad is not None else None, src.grad.tolist())
    assert grads["mt"] == grads["torch"]
    for lib, leaf_error in ((mt, RuntimeError), (torch, RuntimeError)):
        w = lib.ones(2, requires_grad=True)
        with pytest.raises(leaf_error): w.copy_(lib.zeros(2))
        with pytest.raises(TypeError, match=r"copy_\(\): argument 'other' \(position 1\) must be Tensor, not list"):
            w.copy_([1.0, 2.0])
