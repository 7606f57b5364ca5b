"Chapter 00's engine against PyTorch: the chapter's examples, random expression graphs, every error case."
import gc
import weakref
import numpy as np
import pytest
import torch
import minitorch_nb as mt
from minitorch_nb.autograd import grad, graph_nodes, saved_bytes, Dual, derivative
from oracle import assert_close

def both(value, dtype=np.float64, requires_grad=True):
    "The same leaf in minitorch_nb and in torch."
    arr = np.asarray(value, dtype=dtype)
    return mt.tensor(arr, requires_grad=requires_grad), torch.tensor(arr, requires_grad=requires_grad)

# --- the chapter's worked examples -------------------------------------------------------------

def test_brief_example_accumulation_and_detach():
    data = mt.tensor([1.0, 3.0, 2.0, 4.0])
    w = mt.tensor(2.0, requires_grad=True)
    ((w * data) ** 2).mean().backward()
    assert w.grad.item() == 30.0
    w.grad = None
    for chunk in (data[0:2], data[2:4]): ((w * chunk) ** 2).mean().backward()
    assert w.grad.item() == 60.0
    w.grad = None
    for chunk in (data[0:2], data[2:4]): (((w * chunk) ** 2).mean() / 2).backward()
    assert w.grad.item() == 30.0
    with mt.no_grad(): w -= 0.01 * w.grad
    w.grad.zero_()
    y = w.detach() ** 2 + 3 * w
    y.backward()
    assert w.grad.item() == 3.0

def test_tape_example_matches_torch():
    (x, tx), (y, ty) = both(2.0), both(3.0)
    loss, tloss = ((x * y) + x) ** 2, ((tx * ty) + tx) ** 2
    loss.backward(); tloss.backward()
    assert (loss.item(), x.grad.item(), y.grad.item()) == (64.0, 64.0, 32.0)
    assert_close(x.grad, tx.grad); assert_close(y.grad, ty.grad)
    assert [n.name() for n in graph_nodes(loss)][:3] == ["PowBackward", "AddBackward", "MulBackward"]

def test_tiny_network_numbers():
    x, w1, w2 = (mt.tensor(v, requires_grad=True) for v in (1.0, 2.0, 3.0))
    hidden = (x * w1).retain_grad()
    out = hidden * w2  # ReLU of a positive value is the identity
    out.backward()
    assert (out.item(), w2.grad.item(), hidden.grad.item(), w1.grad.item(), x.grad.item()) == (6.0, 2.0, 3.0, 3.0, 6.0)

def test_x2sinx_first_second_derivatives_and_dual():
    x, tx = both(2.0)
    f, tf = x ** 2 * x.sin(), tx ** 2 * tx.sin()
    (g,) = grad(f, x, create_graph=True)
    (tg,) = torch.autograd.grad(tf, tx, create_graph=True)
    assert_close(g, tg)
    assert abs(g.item() - 1.9726023611) < 1e-9
    (h,) = grad(g, x); (th,) = torch.autograd.grad(tg, tx)
    assert_close(h, th)
    assert abs(derivative(lambda v: v * v * v.sin(), 2.0) - 1.9726023611) < 1e-9
    assert isinstance(Dual(1.0) + 1, Dual)

def test_hessian_vector_product_matches_torch():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((5, 5)); v = rng.standard_normal(5)
    (w, tw) = both(rng.standard_normal(5))
    f = 0.5 * (w @ (mt.tensor(A) @ w)) + w.sin().sum()
    tf = 0.5 * (tw @ (torch.tensor(A) @ tw)) + tw.sin().sum()
    (g,) = grad(f, w, create_graph=True); (tg,) = torch.autograd.grad(tf, tw, create_graph=True)
    (hv,) = grad((g * mt.tensor(v)).sum(), w); (thv,) = torch.autograd.grad((tg * torch.tensor(v)).sum(), tw)
    assert_close(hv, thv)

# --- random expression graphs against torch ---------------------------------------------------

UNARY = [
    ("sin", lambda a: a.sin()), ("cos", lambda a: a.cos()), ("neg", lambda a: -a),
    ("exp", lambda a: (a * 0.3).exp()), ("log", lambda a: (a * a + 1.0).log()),
    ("square", lambda a: a ** 2), ("cube", lambda a: a ** 3), ("scale", lambda a: 2.5 * a - 1.0),
    ("transpose2", lambda a: a.transpose(0, 1).transpose(0, 1)), ("slice", lambda a: a[:, 1:] .sum(1, keepdim=True) * a),
]
BINARY = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / (b * b + 1.0)), ("pow", lambda a, b: (a * a + 0.5) ** (b * 0.1)),
    ("matmul", lambda a, b: (a @ b.transpose(0, 1)) @ b * 0.1),
    ("rowbias", lambda a, b: a + b.mean(0)), ("colsum", lambda a, b: a * b.sum(1, keepdim=True)),
]

def random_program(seed, n_leaves=3, n_ops=8):
    "A random DAG of operations over leaves of shape (3, 4): a list of (op, argument indices)."
    rng = np.random.default_rng(seed)
    steps, n_values = [], n_leaves
    for _ in range(n_ops):
        if rng.random() < 0.45:
            steps.append((UNARY[rng.integers(len(UNARY))], (int(rng.integers(n_values)),)))
        else:
            steps.append((BINARY[rng.integers(len(BINARY))], tuple(int(i) for i in rng.integers(n_values, size=2))))
        n_values += 1
    return steps

def run_program(steps, leaves):
    values = list(leaves)
    for (_, fn), args in steps: values.append(fn(*(values[i] for i in args)))
    return values[-1].sum() + values[len(leaves)].mean()  # two outputs joined: a value used on two paths

def leaf_pairs(seed, n=3, shape=(3, 4)):
    "n random float64 leaves, the same values in minitorch_nb and in torch."
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape) for _ in range(n)]
    return [mt.tensor(a, requires_grad=True) for a in arrays], [torch.tensor(a, requires_grad=True) for a in arrays]

@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_match_torch(seed):
    ours, theirs = leaf_pairs(100 + seed)
    steps = random_program(seed)
    out, tout = run_program(steps, ours), run_program(steps, theirs)
    assert_close(out, tout)
    out.backward(); tout.backward()
    for a, b in zip(ours, theirs):
        if b.grad is None: assert a.grad is None or not np.any(a.grad.array)
        else: assert_close(a.grad, b.grad)

@pytest.mark.parametrize("seed", range(10))
def test_random_graphs_second_order_match_torch(seed):
    ours, theirs = leaf_pairs(200 + seed)
    steps = random_program(seed + 1000)
    g = grad(run_program(steps, ours), ours, create_graph=True, allow_unused=True)
    tg = torch.autograd.grad(run_program(steps, theirs), theirs, create_graph=True, allow_unused=True)
    s = sum(((x * x).sum() for x in g if x is not None), mt.tensor(0.0, dtype=mt.float64))
    ts = sum(((x * x).sum() for x in tg if x is not None), torch.tensor(0.0, dtype=torch.float64))
    if not ts.requires_grad:
        assert not s.requires_grad
        return
    h = grad(s, ours, allow_unused=True); th = torch.autograd.grad(ts, theirs, allow_unused=True)
    for a, b in zip(h, th):
        if b is None: assert a is None or not np.any(a.array)
        else: assert_close(a, b)

def test_float32_results_stay_float32():
    (x, tx), (y, ty) = both(np.arange(6.0).reshape(2, 3), np.float32), both(np.ones(3), np.float32)
    out, tout = ((x * y + 2.0) / (y + 1.5)).exp().sum(), ((tx * ty + 2.0) / (ty + 1.5)).exp().sum()
    out.backward(); tout.backward()
    assert_close(out, tout); assert_close(x.grad, tx.grad); assert_close(y.grad, ty.grad)

# --- engine mechanics ----------------------------------------------------------------------------

def test_long_chain_does_not_recurse():
    x = mt.tensor(1.0, dtype=mt.float64, requires_grad=True)
    y = x
    for _ in range(20_000): y = y * 1.0001
    y.backward()
    assert abs(x.grad.item() - 1.0001 ** 20_000) < 1e-9

def test_each_node_runs_once_in_a_diamond():
    x = mt.tensor(3.0, requires_grad=True)
    a = x * 2
    out = a * a + a  # `a` feeds three uses
    out.backward()
    assert x.grad.item() == (2 * 6 + 1) * 2

def test_leaf_grad_is_not_aliased_between_leaves():
    a, b = mt.tensor([1.0, 2.0], requires_grad=True), mt.tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    a.grad += 1  # must not change b.grad
    assert b.grad.tolist() == [1.0, 1.0]

def test_backward_frees_saved_tensors_and_graph_is_collectable():
    x = mt.tensor(np.ones(1000), requires_grad=True)
    y = (x * x).sin().sum()
    assert saved_bytes(y) > 0
    y.backward()
    assert saved_bytes(y) == 0
    node = weakref.ref(y.grad_fn)
    del y; gc.collect()
    assert node() is None

def test_retain_graph_allows_second_backward():
    x = mt.tensor(2.0, requires_grad=True)
    f = x ** 2 * x.sin()
    f.backward(retain_graph=True); f.backward()
    assert abs(x.grad.item() - 2 * 1.9726024) < 1e-5

def test_grad_does_not_touch_dot_grad_and_supports_nonleaf_inputs():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    (gh, gx) = grad((h * h).sum(), [h, x])
    assert gh.tolist() == [6.0, 12.0] and gx.tolist() == [18.0, 36.0] and x.grad is None

@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_leaves_the_grad_of_other_leaves_alone_like_torch(create_graph):
    "autograd.grad w.r.t. a alone must not accumulate into b.grad (nor a.grad), as in torch."
    results = []
    for lib in (mt, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        w = lib.tensor([0.5, -1.0], requires_grad=True)
        w.grad = lib.tensor([10.0, 10.0])  # an earlier backward's gradient, kept
        (ga,) = lib.autograd.grad((a * b * w).sum(), [a], create_graph=create_graph)
        results.append((ga.detach().numpy(), a.grad, b.grad, w.grad.numpy()))
    (ours, theirs) = results
    np.testing.assert_allclose(ours[0], theirs[0])
    assert ours[1] is None and theirs[1] is None and ours[2] is None and theirs[2] is None
    np.testing.assert_array_equal(ours[3], theirs[3])

def test_detach_shares_storage_and_version():
    v = mt.tensor([1.0, 2.0], requires_grad=True)
    d = v.detach()
    assert np.shares_memory(d.array, v.array) and not d.requires_grad
    y = v * v
    with mt.no_grad(): d += 1  # writes through to v, which `y` saved
    with pytest.raises(RuntimeError, match="modified by an in-place operation"): y.sum().backward()

def test_enable_grad_inside_no_grad_and_decorator():
    x = mt.tensor(1.0, requires_grad=True)
    @mt.no_grad()
    def f(): return x * 2
    assert not f().requires_grad
    with mt.no_grad():
        with mt.enable_grad(): assert (x * 2).requires_grad
    assert mt.is_grad_enabled()

def outcome(fn):
    "fn()'s value, or the type of the exception it raised and the start of its message."
    try: return fn()
    except Exception as e: return type(e).__name__, str(e)[:40]  # noqa: BLE001 -- the exception is the outcome

def grad_mode_story(lib):
    "set_grad_enabled as a call and as a context; a recursive decorated function restores the mode on return."
    seen = []
    lib.set_grad_enabled(False)
    seen.append(lib.is_grad_enabled())
    with lib.set_grad_enabled(True): seen.append(lib.is_grad_enabled())
    seen.append(lib.is_grad_enabled())
    lib.set_grad_enabled(True)
    @lib.no_grad()
    def depth(n): return lib.is_grad_enabled() if n == 0 else depth(n - 1)
    @lib.set_grad_enabled(False)
    def off(): return lib.is_grad_enabled()
    seen += [depth(3), lib.is_grad_enabled(), off(), lib.is_grad_enabled()]
    @lib.enable_grad()
    def on(n): return lib.is_grad_enabled() if n == 0 else on(n - 1)
    with lib.no_grad(): seen += [on(2), lib.is_grad_enabled()]
    return seen

def test_grad_mode_switches_like_torch():
    assert grad_mode_story(mt) == grad_mode_story(torch) == [False, True, False, False, True, False, True, True, False]

def inference_story(lib):
    "What inference mode makes, and what autograd refuses afterwards, as values and exception (type, message)."
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    out = {}
    with lib.inference_mode():
        x, y, view = lib.tensor([3.0, 4.0]), w * 2, w[0]
        out["inside"] = (lib.is_inference_mode_enabled(), lib.is_grad_enabled(), lib.ones(2).is_inference())
        with lib.enable_grad(): z, on = w * 2, lib.is_grad_enabled()
        out["enable_grad inside"] = (on, z.requires_grad, z.is_inference(), lib.is_grad_enabled())
        with lib.inference_mode(False):
            n = w * 2
            out["inference_mode(False) inside"] = (lib.is_inference_mode_enabled(), n.requires_grad, n.is_inference())
        with lib.no_grad(): out["no_grad inside"] = (lib.ones(1).is_inference(), lib.is_inference_mode_enabled())
    out["made inside"] = (x.is_inference(), y.is_inference(), y.requires_grad, view.is_inference())
    out["outside"] = (lib.is_inference_mode_enabled(), lib.is_grad_enabled(), w.is_inference())
    out["derived"] = ((x + 1).is_inference(), x.clone().is_inference(), x.detach().is_inference(),
                      x[1:].is_inference(), x.data.is_inference())
    out["add saves nothing"] = outcome(lambda: (w + x).requires_grad)
    for name, fn in (("mul", lambda: w * x), ("mul swapped", lambda: x * w), ("div", lambda: w / x),
                     ("matmul", lambda: w @ x), ("pow", lambda: w ** x)):
        out[name] = outcome(fn)
    out["mul under no_grad"] = outcome(lambda: lib.no_grad()(lambda: (w * x).tolist())())
    out["clone then mul"] = outcome(lambda: (w * x.clone()).requires_grad)
    for name, fn in (("add_", lambda: x.add_(1)), ("setitem", lambda: x.__setitem__(0, 5.0)),
                     ("zero_", lambda: x.zero_()), ("mul_ of a view", lambda: x[:1].mul_(2)),
                     ("requires_grad_", lambda: x.requires_grad_()),
                     ("requires_grad_(False)", lambda: x.requires_grad_(False).requires_grad)):
        out[name] = outcome(fn)
    with lib.inference_mode():  # a fresh one: torch writes before it raises in the refused cases above
        fresh = lib.tensor([3.0, 4.0])
        fresh.add_(1)
    out["in-place inside"] = fresh.tolist()
    @lib.inference_mode
    def bare(): return lib.ones(1).is_inference()
    @lib.inference_mode()
    def called(): return lib.ones(1).is_inference()
    out["decorators"] = (bare(), called(), lib.is_inference_mode_enabled())
    import pickle
    out["pickled"] = pickle.loads(pickle.dumps(x)).is_inference()
    return out

def test_inference_mode_like_torch():
    ours, theirs = inference_story(mt), inference_story(torch)
    for key in theirs: assert ours[key] == theirs[key], f"{key}: {ours[key]} != torch's {theirs[key]}"
    assert theirs["mul"][0] == "RuntimeError" and theirs["add_"][0] == "RuntimeError"  # the story tests refusals

def test_inplace_on_nonleaf_records_history_like_torch():
    (x, tx) = both([1.0, 2.0, 3.0])
    y, ty = x * 2, tx * 2
    y += x; ty += tx
    y *= 3.0; ty *= 3.0
    y.sum().backward(); ty.sum().backward()
    assert_close(x.grad, tx.grad)

def test_setitem_with_grad_matches_torch():
    (x, tx), (v, tv) = both(np.arange(6.0).reshape(2, 3)), both([10.0, 20.0, 30.0])
    y, ty = x * 1, tx * 1
    y[0] = v * 2; ty[0] = tv * 2
    (y * y).sum().backward(); (ty * ty).sum().backward()
    assert_close(x.grad, tx.grad); assert_close(v.grad, tv.grad)

def test_indexing_gradients_accumulate_on_repeats():
    (x, tx) = both(np.arange(5.0))
    idx = [0, 0, 3]
    x[idx].sum().backward(); tx[idx].sum().backward()
    assert_close(x.grad, tx.grad)
    (b, tb) = both(np.arange(6.0).reshape(2, 3))
    mask = np.array([[True, False, True], [False, True, False]])
    (b[mt.tensor(mask)] ** 2).sum().backward(); (tb[torch.tensor(mask)] ** 2).sum().backward()
    assert_close(b.grad, tb.grad)

@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 1, 3, 4), (5, 4, 2)), ((4, 2, 3), (3, 5))])
def test_matmul_shapes_match_torch(sa, sb):
    rng = np.random.default_rng(0)
    (a, ta), (b, tb) = both(rng.standard_normal(sa)), both(rng.standard_normal(sb))
    out, tout = a @ b, ta @ tb
    assert_close(out, tout)
    g = rng.standard_normal(tout.shape)
    out.backward(mt.tensor(g)); tout.backward(torch.tensor(g))
    assert_close(a.grad, ta.grad); assert_close(b.grad, tb.grad)

@pytest.mark.parametrize("make,expected", [
    (lambda: (mt.tensor([1.0, 2.0]) + 1.5), np.float32), (lambda: (mt.tensor([1, 2]) * 2), np.int64),
    (lambda: (mt.tensor([1, 2]) + 1.5), np.float32), (lambda: mt.tensor([1.0]) * mt.tensor(2.0, dtype=mt.float64), np.float32),
    (lambda: mt.tensor([1.0]) * mt.tensor([2.0], dtype=mt.float64), np.float64),
    (lambda: mt.tensor([1, 2]) * mt.tensor(2.0, dtype=mt.float64), np.float64),
])
def test_promotion_matches_torch_rules(make, expected):
    assert make().dtype == expected

# --- every documented error ------------------------------------------------------------------------

def test_error_inplace_update_of_leaf_outside_no_grad():
    w = mt.tensor(2.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="no_grad"): w -= 1.0
    with pytest.raises(RuntimeError, match="no_grad"): w.zero_()
    with pytest.raises(RuntimeError, match="no_grad"): w[()] = 1.0
    assert w.item() == 2.0  # nothing was changed

def test_error_backward_on_no_grad_result():
    w = mt.tensor(2.0, requires_grad=True)
    with mt.no_grad(): y = w * 3
    with pytest.raises(RuntimeError, match="does not require grad"): y.backward()

def test_error_second_backward_without_retain_graph():
    x = mt.tensor(2.0, requires_grad=True)
    f = x.sin() * x
    f.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"): f.backward()

def test_error_nonscalar_backward_and_bad_gradient_shape():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="scalar"): (x * 2).backward()
    with pytest.raises(RuntimeError, match=r"shape \[3\]"): (x * 2).backward(mt.tensor([1.0, 1.0, 1.0]))

def test_error_integer_requires_grad_and_nonleaf_requires_grad_change():
    with pytest.raises(RuntimeError, match="floating point"): mt.tensor([1, 2], requires_grad=True)
    y = mt.tensor([1.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="detach"): y.requires_grad_(False)

def test_error_shapes_are_named():
    with pytest.raises(RuntimeError, match=r"\[2, 3\] and \[4, 5\]"): mt.tensor(np.ones((2, 3))) @ mt.tensor(np.ones((4, 5)))
    with pytest.raises(RuntimeError, match=r"\[2, 3\] and \[4, 3\]"): mt.tensor(np.ones((2, 3))) + mt.tensor(np.ones((4, 3)))
    with pytest.raises(RuntimeError, match="invalid for a tensor of 6"): mt.tensor(np.ones((2, 3))).reshape(4, 2)

def test_error_unused_input_to_grad():
    x, z = mt.tensor(1.0, requires_grad=True), mt.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused"): grad(x * 2, [x, z])
    assert grad(x * 2, [x, z], allow_unused=True)[1] is None

def test_error_unknown_device():
    with pytest.raises(RuntimeError, match=r"unknown device 'tpu'; available: \['numpy'"): mt.tensor([1.0]).to("tpu")

@pytest.mark.parametrize("device", ["numpy", "cpu"])
def test_first_gradient_is_taken_without_a_copy_only_when_nothing_else_holds_it(device):
    "As PyTorch's AccumulateGrad: a fresh gradient becomes .grad as it is; one that something else holds is copied."
    class Triple(mt.autograd.Function):
        @staticmethod
        def forward(ctx, a): return a.array * 3
        @staticmethod
        def backward(ctx, grad):
            out = grad * 3
            Triple.sent = id(out.array)
            return out
    x = mt.tensor([1.0, 2.0], requires_grad=True, device=device)
    Triple.apply(x).sum().backward()
    assert id(x.grad.array) == Triple.sent and x.grad.tolist() == [3.0, 3.0]
    a, b = (mt.tensor(v, requires_grad=True, device=device) for v in ([1.0, 2.0], [3.0, 4.0]))
    Triple.apply(a + b).sum().backward()  # `+` passes one fresh gradient to both: one copy, one original
    assert sorted(id(t.grad.array) == Triple.sent for t in (a, b)) == [False, True]
    a, b = (mt.tensor(v, requires_grad=True, device=device) for v in ([1.0, 2.0], [3.0, 4.0]))
    ((a + b) * 2).sum().backward()  # one fresh gradient object for both leaves
    a.grad += 1
    assert b.grad.tolist() == [2.0, 2.0] and a.grad.tolist() == [3.0, 3.0]
    ((a + b) * 2).sum().backward()  # the second backward adds in place, each into its own array
    assert a.grad.tolist() == [5.0, 5.0] and b.grad.tolist() == [4.0, 4.0]
    g, x = mt.tensor([5.0, 6.0], device=device), mt.tensor([1.0, 1.0], requires_grad=True, device=device)
    (x + 0).backward(g)  # the caller's gradient reaches x unchanged: x.grad must be a copy
    g += 1
    assert x.grad.tolist() == [5.0, 6.0]
    x = mt.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x * 1
    y.retain_grad()
    (y + 0).backward(mt.tensor([1.0, 1.0], device=device) * 2)  # a retained non-leaf and a leaf, one gradient
    y.grad += 10
    assert x.grad.tolist() == [2.0, 2.0] and y.grad.tolist() == [12.0, 12.0]
    w = mt.tensor([1.0, 2.0], requires_grad=True, device=device)
    (w * 2).sum().backward(create_graph=True)  # create_graph: .grad is the engine's tensor, as before
    assert w.grad.tolist() == [2.0, 2.0]

# --- PyTorch's Function contract (the same source runs under both libraries) ------------------------

def functions(lib):
    "Custom Functions written as PyTorch requires, built on `lib` (torch or minitorch_nb)."
    class ClampMin(lib.autograd.Function):  # forward returns a Tensor; a number argument gets None
        @staticmethod
        def forward(ctx, x, lo):
            ctx.save_for_backward(x)
            ctx.lo = lo
            return lib.tensor(np.maximum(x.detach().numpy(), lo))
        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * lib.tensor(x.detach().numpy() > ctx.lo), None
    class Scale(lib.autograd.Function):  # a number before the tensor; forward computes with Tensor ops
        @staticmethod
        def forward(ctx, k, x):
            ctx.k, ctx.seen = k, (ctx.needs_input_grad, lib.is_grad_enabled())
            return x * k
        @staticmethod
        def backward(ctx, grad): return None, grad * ctx.k
    class MulAdd(lib.autograd.Function):  # tensor, number, tensor; needs_input_grad picks the work
        @staticmethod
        def forward(ctx, x, c, y):
            ctx.save_for_backward(x, y)
            ctx.flags = ctx.needs_input_grad
            return x * y + c
        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            need_x, _, need_y = ctx.needs_input_grad
            return grad * y if need_x else None, None, grad * x if need_y else None
    class ExpSaved(lib.autograd.Function):  # saves its own output: differentiable twice
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            return r
        @staticmethod
        def backward(ctx, grad):
            r, = ctx.saved_tensors
            return grad * r
    class Sort(lib.autograd.Function):  # two outputs, one marked non-differentiable
        @staticmethod
        def forward(ctx, x):
            order = np.argsort(x.detach().numpy(), kind="stable")
            ctx.order, indices = order, lib.tensor(order)
            ctx.mark_non_differentiable(indices)
            return x[lib.tensor(order)], indices
        @staticmethod
        def backward(ctx, grad_values, grad_indices):
            ctx.seen = grad_indices.tolist()
            return grad_values[lib.tensor(np.argsort(ctx.order))]
    class Pair(lib.autograd.Function):  # two differentiable outputs
        @staticmethod
        def forward(ctx, x): return x * 2, x * x
        @staticmethod
        def backward(ctx, ga, gb):
            x = ctx.x_
            return ga * 2 + gb * 2 * x
    class PairSaving(Pair):
        @staticmethod
        def forward(ctx, x):
            ctx.x_ = x
            return x * 2, x * x
    class Identity(lib.autograd.Function):  # returns its input as it is
        @staticmethod
        def forward(ctx, x): return x
        @staticmethod
        def backward(ctx, grad): return grad * 2
    class ArgMax(lib.autograd.Function):  # an integer output gets no gradient
        @staticmethod
        def forward(ctx, x): return x.argmax()
        @staticmethod
        def backward(ctx, grad): return None
    return dict(ClampMin=ClampMin, Scale=Scale, MulAdd=MulAdd, ExpSaved=ExpSaved, Sort=Sort, Pair=PairSaving,
                Identity=Identity, ArgMax=ArgMax)

OURS, THEIRS = functions(mt), functions(torch)

def test_function_returning_a_tensor_with_a_number_argument_matches_torch():
    (x, tx) = both([-1.0, 0.5, 2.0])
    y, ty = OURS["ClampMin"].apply(x, 0.0), THEIRS["ClampMin"].apply(tx, 0.0)
    assert type(y.array) is np.ndarray  # unwrapped: the output holds an array, not a Tensor
    (y * y).sum().backward(); (ty * ty).sum().backward()
    assert_close(y, ty); assert_close(x.grad, tx.grad)
    assert y.grad_fn.name() == "ClampMinBackward"

def test_pytorch_form_passes_gradcheck():
    x = mt.tensor([-1.3, 0.4, 2.0], dtype=mt.float64, requires_grad=True)
    assert mt.gradcheck(lambda v: OURS["ClampMin"].apply(v, 0.0) * v, x)
    assert mt.gradcheck(lambda v: OURS["MulAdd"].apply(v, 2.0, v.sin()), x)

def test_forward_is_not_recorded_and_flags_are_per_argument_like_torch():
    (x, tx) = both([1.0, 2.0])
    y, ty = OURS["Scale"].apply(3.0, x), THEIRS["Scale"].apply(3.0, tx)
    assert y.grad_fn.seen == ty.grad_fn.seen == ((False, True), False)
    assert [n.name() for n in y.grad_fn.next_functions] == ["AccumulateGrad"]  # no MulBackward inside
    y.sum().backward(); ty.sum().backward()
    assert_close(x.grad, tx.grad)

@pytest.mark.parametrize("wanted", [(True, True), (True, False), (False, True)])
def test_needs_input_grad_skips_work_like_torch(wanted):
    (x, tx), (y, ty) = both([1.0, 2.0], requires_grad=wanted[0]), both([3.0, 4.0], requires_grad=wanted[1])
    out, tout = OURS["MulAdd"].apply(x, 5.0, y), THEIRS["MulAdd"].apply(tx, 5.0, ty)
    assert out.grad_fn.flags == tout.grad_fn.flags == (wanted[0], False, wanted[1])
    out.sum().backward(); tout.sum().backward()
    assert_close(out, tout)
    for a, b in ((x, tx), (y, ty)):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None: assert_close(a.grad, b.grad)

@pytest.mark.parametrize("wanted", [(True, True), (True, False), (False, False)])
def test_needs_input_grad_under_no_grad_keeps_the_flags_like_torch(wanted):
    "The flags describe the inputs: under no_grad they stay what they are, as in PyTorch."
    (x, tx), (y, ty) = both([1.0, 2.0], requires_grad=wanted[0]), both([3.0, 4.0], requires_grad=wanted[1])
    seen = {}
    for lib, (a, b) in ((mt, (x, y)), (torch, (tx, ty))):
        class Peek(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, c, b):
                seen[lib.__name__] = ctx.needs_input_grad
                return a * b + c
            @staticmethod
            def backward(ctx, grad): return grad, None, grad
        with lib.no_grad(): out = Peek.apply(a, 1.0, b)
        assert out.grad_fn is None and not out.requires_grad
    assert seen["minitorch_nb"] == seen["torch"] == (wanted[0], False, wanted[1])

def test_saved_output_is_differentiable_twice_like_torch():
    (x, tx) = both([0.5, 1.0])
    y, ty = OURS["ExpSaved"].apply(x), THEIRS["ExpSaved"].apply(tx)
    (g,) = grad(y.sum(), x, create_graph=True); (tg,) = torch.autograd.grad(ty.sum(), tx, create_graph=True)
    (h,) = grad(g.sum(), x); (th,) = torch.autograd.grad(tg.sum(), tx)
    assert_close(g, tg); assert_close(h, th)
    assert saved_bytes(OURS["ExpSaved"].apply(x)) == 2 * 8  # the output, counted once

def test_saved_output_changed_in_place_is_caught_like_torch():
    (x, tx) = both([0.5, 1.0])
    y, ty = OURS["ExpSaved"].apply(x), THEIRS["ExpSaved"].apply(tx)
    with mt.no_grad(): y += 1
    with torch.no_grad(): ty += 1
    with pytest.raises(RuntimeError, match="modified by an in-place operation"): y.sum().backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"): ty.sum().backward()

def test_multiple_outputs_and_non_differentiable_indices_match_torch():
    (x, tx) = both([3.0, 1.0, 2.0])
    (v, i), (tv, ti) = OURS["Sort"].apply(x), THEIRS["Sort"].apply(tx)
    assert (i.requires_grad, ti.requires_grad, i.grad_fn, ti.grad_fn) == (False, False, None, None)
    assert i.tolist() == ti.tolist() and i.dtype == np.int64
    w = np.array([1.0, 2.0, 3.0])
    (v * mt.tensor(w)).sum().backward(); (tv * torch.tensor(w)).sum().backward()
    assert_close(v, tv); assert_close(x.grad, tx.grad)
    assert v.grad_fn.next_functions[0].ctx.seen == [0, 0, 0]  # zeros for the indices, as torch passes
    assert v.grad_fn.name() == "SortBackward"

@pytest.mark.parametrize("use", ["first", "second", "both"])
def test_multiple_outputs_missing_gradients_are_zeros_like_torch(use):
    (x, tx) = both([1.0, -2.0])
    (a, b), (ta, tb) = OURS["Pair"].apply(x), THEIRS["Pair"].apply(tx)
    pick = {"first": lambda p, q: p.sum(), "second": lambda p, q: (q * 3).sum(), "both": lambda p, q: (p * q).sum()}[use]
    pick(a, b).backward(); pick(ta, tb).backward()
    assert_close(a, ta); assert_close(b, tb); assert_close(x.grad, tx.grad)

def test_materialize_grads_false_gives_none_like_torch():
    def make(lib):
        class Pair(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3
            @staticmethod
            def backward(ctx, ga, gb):
                ctx.seen = (ga is None, gb is None)
                return ga * 2
        return Pair
    (x, tx) = both([1.0, 2.0])
    (a, _), (ta, _) = make(mt).apply(x), make(torch).apply(tx)
    a.sum().backward(); ta.sum().backward()
    assert a.grad_fn.next_functions[0].ctx.seen == ta.grad_fn.seen == (False, True)
    assert_close(x.grad, tx.grad)

def test_input_returned_as_is_and_integer_outputs_like_torch():
    (x, tx) = both([1.0, 2.0])
    y, ty = OURS["Identity"].apply(x), THEIRS["Identity"].apply(tx)
    assert y is not x and ty is not tx and np.shares_memory(y.array, x.array)
    y.sum().backward(); ty.sum().backward()
    assert_close(x.grad, tx.grad)
    r, tr = OURS["ArgMax"].apply(x), THEIRS["ArgMax"].apply(tx)
    assert (r.item(), r.requires_grad, r.grad_fn) == (tr.item(), False, None) and tr.grad_fn is None

def test_apply_takes_keyword_arguments_like_torch():
    (x, tx) = both([1.0, 2.0])
    y, ty = OURS["ClampMin"].apply(x, lo=1.5), THEIRS["ClampMin"].apply(tx, lo=1.5)
    y.sum().backward(); ty.sum().backward()
    assert_close(y, ty); assert_close(x.grad, tx.grad)

def test_extra_none_gradients_are_accepted_like_torch():
    def make(lib):
        class AddC(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, c): return x + c
            @staticmethod
            def backward(ctx, grad): return grad, None, None
        return AddC
    (x, tx) = both([1.0, 2.0])
    make(mt).apply(x, 2.0).sum().backward(); make(torch).apply(tx, 2.0).sum().backward()
    assert_close(x.grad, tx.grad)

def test_teaching_form_one_gradient_per_tensor_still_works():
    "The chapter's form, which PyTorch refuses: backward returns one gradient per tensor input."
    def make(lib):
        class AddC(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, c): return x + c
            @staticmethod
            def backward(ctx, grad): return grad
        return AddC
    (x, tx) = both([1.0, 2.0])
    make(mt).apply(x, 2.0).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 2, got 1\)"):
        make(torch).apply(tx, 2.0).sum().backward()

@pytest.mark.parametrize("grads, match", [
    (lambda g: (g, g), "different than None at position 2, but the corresponding forward input was not a"),
    (lambda g: (g, None, g), "incorrect number of gradients"),
])
def test_bad_gradients_for_arguments_raise_like_torch(grads, match):
    def make(lib):
        class AddC(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, c): return x + c
            @staticmethod
            def backward(ctx, grad): return grads(grad)
        return AddC
    (x, tx) = both([1.0, 2.0])
    with pytest.raises(RuntimeError, match=match): make(mt).apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match=match): make(torch).apply(tx, 2.0).sum().backward()

def test_wrong_count_names_both_forms():
    def make(lib):
        class Scale3(lib.autograd.Function):
            @staticmethod
            def forward(ctx, k, x): return x * k
            @staticmethod
            def backward(ctx, grad): return None, grad, grad, grad
        return Scale3
    x = mt.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"expected 2 \(one per argument of forward\) or 1 \(one per tensor"):
        make(mt).apply(3.0, x).sum().backward()

def test_save_for_backward_refuses_non_tensors_like_torch():
    def make(lib):
        class SaveInt(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, None, 3)
                return x * 1
            @staticmethod
            def backward(ctx, grad): return grad
        return SaveInt
    (x, tx) = both([1.0])
    with pytest.raises(TypeError, match="save_for_backward can only save"): make(mt).apply(x)
    with pytest.raises(TypeError, match="save_for_backward can only save"): make(torch).apply(tx)

def test_integer_cast_has_no_gradient_like_torch():
    (x, tx) = both([1.5, 2.5])
    assert (x.long().requires_grad, x.int().requires_grad, x.bool().requires_grad) == (False, False, False)
    assert (tx.long().requires_grad, tx.int().requires_grad, tx.bool().requires_grad) == (False, False, False)
    assert x.half().requires_grad and tx.half().requires_grad
    (x.half().float() * 2).sum().backward(); (tx.half().float() * 2).sum().backward()
    assert_close(x.grad, tx.grad)

def test_separate_setup_context_form_matches_torch():
    def make(lib):
        class MulK(lib.autograd.Function):  # PyTorch 2's form: forward without ctx
            @staticmethod
            def forward(x, k): return x * k
            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.k = inputs[1]
                ctx.save_for_backward(output)
                ctx.flags = ctx.needs_input_grad
            @staticmethod
            def backward(ctx, grad):
                out, = ctx.saved_tensors
                return grad * ctx.k + 0 * out, None
        class MulKChild(MulK):  # inherits forward; its own setup_context is the one called
            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.k, ctx.flags = inputs[1] * 2, ctx.needs_input_grad
                ctx.save_for_backward(output)
        return MulK, MulKChild
    (x, tx) = both([1.0, 2.0])
    for ours, theirs in zip(make(mt), make(torch)):
        x.grad, tx.grad = None, None
        y, ty = ours.apply(x, 5.0), theirs.apply(tx, 5.0)
        assert y.grad_fn.flags == ty.grad_fn.flags == (True, False)
        y.sum().backward(); ty.sum().backward()
        assert_close(y, ty); assert_close(x.grad, tx.grad)
