"""Chapter 01: every op of the library against PyTorch (forward values, dtypes, input gradients, second order),
plus gradcheck, dtype promotion, factories and error messages."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, HealthCheck, strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes, array_shapes
import minitorch_nb as mt
from minitorch_nb.ops import gradcheck, gradgradcheck, GradcheckError
from oracle import assert_close, to_numpy

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
DTYPES = {np.dtype("float32"): torch.float32, np.dtype("float64"): torch.float64,
          np.dtype("int64"): torch.int64, np.dtype("bool"): torch.bool}

# ----------------------------------------------------------------------------------------------- harness

def make_inputs(arrays, layout, device):
    """Leaves for both libraries, and the tensors the op sees: the leaves themselves, or non-contiguous
    views of them made inside the graph (a transpose back, or every other element of a wider leaf)."""
    ours, theirs, leaves_o, leaves_t = [], [], [], []
    for arr in arrays:
        arr = np.asarray(arr)
        if layout == "transposed" and arr.ndim >= 2: src = np.ascontiguousarray(np.swapaxes(arr, -1, -2))
        elif layout == "sliced" and arr.ndim >= 1: src = np.repeat(arr, 2, axis=-1)
        else: src = arr
        grad = arr.dtype.kind == "f"
        lo, lt = mt.tensor(src, device=device, requires_grad=grad), torch.tensor(np.array(src), requires_grad=grad)
        leaves_o.append(lo); leaves_t.append(lt)
        if src is arr: ours.append(lo); theirs.append(lt)
        elif layout == "transposed": ours.append(lo.transpose(-1, -2)); theirs.append(lt.transpose(-1, -2))
        else: ours.append(lo[..., ::2]); theirs.append(lt[..., ::2])
    return ours, theirs, leaves_o, leaves_t

def check(f, g, arrays, device, layout="contiguous", second_order=None, seed=0, tol=None):
    """Forward value and dtype, the vector-Jacobian product for a random cotangent, and (float64) the
    gradient of <w, grad> with respect to the inputs, all against PyTorch."""
    ours, theirs, lo, lt = make_inputs(arrays, layout, device)
    out_o, out_t = f(*ours), g(*theirs)
    tol = tol or {}
    assert_close(out_o, out_t, **tol)
    want = [i for i, t in enumerate(lt) if t.requires_grad]
    if not out_t.requires_grad or not want: return
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(out_t.shape).astype(to_numpy(out_t).dtype)
    second = out_t.dtype == torch.float64 if second_order is None else second_order
    gs_o = mt.autograd.grad(out_o, [lo[i] for i in want], mt.tensor(v, device=device), create_graph=second,
                            allow_unused=True)
    gs_t = torch.autograd.grad(out_t, [lt[i] for i in want], torch.tensor(v), create_graph=second, allow_unused=True)
    for go, gt in zip(gs_o, gs_t):
        if gt is None: assert go is None or not to_numpy(go).any(); continue
        assert_close(go, gt, **tol)
    if not second: return
    ws = [rng.standard_normal(gt.shape) for gt in gs_t if gt is not None]
    pairs = [(go, gt) for go, gt in zip(gs_o, gs_t) if gt is not None]
    s_t = sum((gt * torch.tensor(w)).sum() for (_, gt), w in zip(pairs, ws))
    s_o = sum((go * mt.tensor(w, device=device)).sum() for (go, _), w in zip(pairs, ws))
    hs_t = torch.autograd.grad(s_t, [lt[i] for i in want], allow_unused=True) if s_t.requires_grad else [None] * len(want)
    if not s_o.requires_grad:  # our backward is constant in the inputs: torch's second derivative must be 0
        assert all(h is None or not h.any() for h in hs_t); return
    hs_o = mt.autograd.grad(s_o, [lo[i] for i in want], allow_unused=True)
    for ho, ht, x in zip(hs_o, hs_t, [lt[i] for i in want]):
        if ho is None: assert ht is None or not ht.any(); continue
        assert_close(ho, torch.zeros_like(x) if ht is None else ht, **tol)

def data(rng, shape, dtype, domain="real"):
    x = rng.standard_normal(shape)
    if domain == "positive": x = np.abs(x) + 0.5
    if domain == "unit": x = np.clip(x, -0.9, 0.9)
    return x.astype(dtype)

float_dtypes = st.sampled_from([np.float32, np.float64])
layouts = st.sampled_from(["contiguous", "transposed", "sliced"])
seeds = st.integers(0, 2**31 - 1)

# ----------------------------------------------------------------------------------------------- elementwise

UNARY = {
    "neg": (lambda x: -x, lambda x: -x, "real"),
    "exp": (lambda x: x.exp(), lambda x: x.exp(), "real"),
    "log": (lambda x: x.log(), lambda x: x.log(), "positive"),
    "sin": (lambda x: x.sin(), lambda x: x.sin(), "real"),
    "cos": (lambda x: x.cos(), lambda x: x.cos(), "real"),
    "tanh": (lambda x: x.tanh(), lambda x: x.tanh(), "real"),
    "sigmoid": (lambda x: x.sigmoid(), lambda x: x.sigmoid(), "real"),
    "relu": (lambda x: x.relu(), lambda x: x.relu(), "real"),
    "abs": (lambda x: x.abs(), lambda x: x.abs(), "real"),
    "builtin_abs": (lambda x: abs(x), lambda x: abs(x), "real"),
    "mt.functions": (lambda x: mt.tanh(mt.relu(x)) + mt.sigmoid(x), lambda x: x.relu().tanh() + x.sigmoid(), "real"),
    "sqrt": (lambda x: x.sqrt(), lambda x: x.sqrt(), "positive"),
    "pow2": (lambda x: x ** 2, lambda x: x ** 2, "real"),
    "pow_half": (lambda x: x ** 0.5, lambda x: x ** 0.5, "positive"),
    "rpow": (lambda x: 2.0 ** x, lambda x: 2.0 ** x, "real"),
    "clamp": (lambda x: x.clamp(-0.5, 0.7), lambda x: x.clamp(-0.5, 0.7), "real"),
    "clamp_min": (lambda x: x.clamp(min=0.1), lambda x: x.clamp(min=0.1), "real"),
    "clamp_max": (lambda x: mt.clamp(x, max=0.1), lambda x: torch.clamp(x, max=0.1), "real"),
    "clone": (lambda x: x.clone() * 2, lambda x: x.clone() * 2, "real"),
    "scalar_ops": (lambda x: (3 - x) / 2 + 1.5 * x - x / 4, lambda x: (3 - x) / 2 + 1.5 * x - x / 4, "real"),
    "masked_fill": (lambda x: x.masked_fill(x > 0.3, -1.0), lambda x: x.masked_fill(x > 0.3, -1.0), "real"),
}

@pytest.mark.parametrize("name", list(UNARY))
@SETTINGS
@given(shape=array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4), dtype=float_dtypes, layout=layouts,
       seed=seeds)
def test_unary(device, name, shape, dtype, layout, seed):
    f, g, domain = UNARY[name]
    check(f, g, [data(np.random.default_rng(seed), shape, dtype, domain)], device, layout, seed=seed)

BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b, "real"),
    "sub": (lambda a, b: a - b, lambda a, b: a - b, "real"),
    "mul": (lambda a, b: a * b, lambda a, b: a * b, "real"),
    "div": (lambda a, b: a / b, lambda a, b: a / b, "positive"),
    "pow": (lambda a, b: a ** b, lambda a, b: a ** b, "positive"),
    "maximum": (lambda a, b: a.maximum(b), lambda a, b: a.maximum(b), "real"),
    "minimum": (lambda a, b: mt.minimum(a, b), lambda a, b: torch.minimum(a, b), "real"),
    "max_tensor": (lambda a, b: mt.max(a, b), lambda a, b: torch.max(a, b), "real"),
    "where": (lambda a, b: mt.where(a > b, a * 2, b), lambda a, b: torch.where(a > b, a * 2, b), "real"),
    "clamp_tensor": (lambda a, b: a.clamp(min=b), lambda a, b: a.clamp(min=b), "real"),
    "clamp_both": (lambda a, b: a.clamp(min=b - 1, max=b), lambda a, b: a.clamp(min=b - 1, max=b), "real"),
}

@pytest.mark.parametrize("name", list(BINARY))
@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3), dtype=float_dtypes,
       layout=layouts, seed=seeds)
def test_binary_broadcast(device, name, shapes, dtype, layout, seed):
    f, g, domain = BINARY[name]
    rng = np.random.default_rng(seed)
    check(f, g, [data(rng, s, dtype, domain) for s in shapes.input_shapes], device, layout, seed=seed)

def test_ties_split_like_torch(device):
    "maximum/minimum give half the gradient to each side of a tie; clamp passes it at the bounds; full max shares."
    vals = np.array([[1., 2., 2.], [0.5, 3., -1.]])
    check(lambda a, b: a.maximum(b), lambda a, b: a.maximum(b), [vals, np.array([2., 2., -1.])], device)
    check(lambda a, b: a.minimum(b), lambda a, b: a.minimum(b), [vals, np.array([2., 2., -1.])], device)
    check(lambda a: a.clamp(0.5, 2.), lambda a: a.clamp(0.5, 2.), [vals], device)
    check(lambda a: a.max(), lambda a: a.max(), [np.array([[3., 1., 3.], [3., 0., 2.]])], device)
    check(lambda a: a.min(), lambda a: a.min(), [np.array([[1., 1., 3.], [3., 0., 0.]])], device)
    check(lambda a: a.max(1).values, lambda a: a.max(1).values, [np.array([[3., 1., 3.], [2., 2., 0.]])], device)
    check(lambda a: a.relu() + a.abs(), lambda a: a.relu() + a.abs(), [np.array([0., -0., 1., -1.])], device)

def test_nan_propagates_like_torch(device):
    "relu keeps a NaN and passes its gradient on, as PyTorch does; maximum, minimum and clamp propagate NaN too."
    x = np.array([np.nan, -1., 0., 2.])
    check(lambda a: a.relu(), lambda a: a.relu(), [x], device)
    check(lambda a: a.clamp(-0.5, 1.), lambda a: a.clamp(-0.5, 1.), [x], device)
    check(lambda a, b: a.maximum(b), lambda a, b: a.maximum(b), [x, np.array([0., np.nan, 1., 1.])], device)
    check(lambda a, b: a.minimum(b), lambda a, b: a.minimum(b), [x, np.array([0., np.nan, 1., 1.])], device)

def test_sigmoid_extremes_no_overflow(device):
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        check(lambda a: a.sigmoid(), lambda a: a.sigmoid(), [np.array([-1000., -50., 0., 50., 1000.], np.float32)], device)

# ----------------------------------------------------------------------------------------------- reductions

@st.composite
def shape_and_dim(draw, min_dims=1, allow_none=True, allow_tuple=False):
    shape = draw(array_shapes(min_dims=min_dims, max_dims=4, min_side=1, max_side=4))
    choices = [st.integers(-len(shape), len(shape) - 1)] if shape else [st.just(0)]
    if allow_none: choices.append(st.none())
    if allow_tuple and len(shape) > 1:
        choices.append(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True).map(tuple))
    return shape, draw(st.one_of(*choices))

REDUCTIONS = {
    "sum": lambda x, d, k: x.sum(d, keepdim=k) if d is not None else x.sum(),
    "mean": lambda x, d, k: x.mean(d, keepdim=k) if d is not None else x.mean(),
    "var": lambda x, d, k: x.var(d, keepdim=k) if d is not None else x.var(),
    "var_biased": lambda x, d, k: x.var(d, unbiased=False, keepdim=k) if d is not None else x.var(unbiased=False),
    "var_correction0": lambda x, d, k: x.var(d, keepdim=k, correction=0),
    "std": lambda x, d, k: x.std(d, keepdim=k) if d is not None else x.std(),
    "logsumexp": lambda x, d, k: x.logsumexp(d if d is not None else tuple(range(x.ndim)), keepdim=k),
}

def spread_out(rng, shape, dim, dtype):
    """Values that are at least 0.3 apart, and at most 0.5 * m in size, among the m elements each reduction of
    `dim` sees. With nearly equal float32 values the spread (and so the gradient of var and std) is a difference
    of nearly equal numbers; with values much larger than their spread, x - mean is: ill-conditioned either way,
    in any library."""
    reduced = sorted({d % len(shape) for d in ((dim,) if isinstance(dim, int) else dim)} if dim is not None
                     else range(len(shape)))
    kept = [d for d in range(len(shape)) if d not in reduced]
    m, r = int(np.prod([shape[d] for d in reduced])), int(np.prod([shape[d] for d in kept]))
    ranks = np.argsort(rng.random((m, r)), axis=0)  # a permutation of 0..m-1 for every reduction
    y = (ranks * 0.5 + rng.uniform(-0.1, 0.1, (m, r))).reshape([shape[d] for d in reduced + kept])
    return y.transpose(np.argsort(reduced + kept)).astype(dtype)

@pytest.mark.parametrize("name", list(REDUCTIONS))
@SETTINGS
@given(sd=shape_and_dim(min_dims=0, allow_tuple=True), keepdim=st.booleans(), dtype=float_dtypes, layout=layouts,
       seed=seeds)
def test_reductions(device, name, sd, keepdim, dtype, layout, seed):
    shape, dim = sd
    dims = range(len(shape)) if dim is None else (dim,) if isinstance(dim, int) else dim
    if name.startswith(("var", "std")) and (not shape or np.prod([shape[d] for d in dims]) < 2):
        shape, dim = (3,) + tuple(shape), 0  # N - 1 = 0 would give nan (in both libraries)
    f, rng = REDUCTIONS[name], np.random.default_rng(seed)
    x = data(rng, shape, dtype)
    if name.startswith(("var", "std")): x = spread_out(rng, shape, dim, dtype)
    check(lambda x: f(x, dim, keepdim), lambda x: f(x, dim, keepdim), [x], device, layout, seed=seed)

@pytest.mark.parametrize("largest", [True, False])
@SETTINGS
@given(sd=shape_and_dim(allow_none=False), keepdim=st.booleans(), dtype=float_dtypes, layout=layouts, seed=seeds,
       ties=st.booleans())
def test_max_min_dim(device, largest, sd, keepdim, dtype, layout, seed, ties):
    shape, dim = sd
    rng = np.random.default_rng(seed)
    x = np.round(data(rng, shape, dtype)) if ties else data(rng, shape, dtype)  # rounding makes ties likely
    name = "max" if largest else "min"
    check(lambda t: getattr(t, name)(dim, keepdim=keepdim).values, lambda t: getattr(t, name)(dim, keepdim=keepdim).values,
          [x], device, layout, seed=seed)
    check(lambda t: getattr(t, name)(dim, keepdim)[1], lambda t: getattr(t, name)(dim, keepdim)[1], [x], device, layout)
    check(lambda t: getattr(t, name)(), lambda t: getattr(t, name)(), [x], device, layout, seed=seed)
    arg = "argmax" if largest else "argmin"
    check(lambda t: getattr(t, arg)(dim, keepdim=keepdim), lambda t: getattr(t, arg)(dim, keepdim=keepdim), [x], device)
    check(lambda t: getattr(t, arg)(), lambda t: getattr(t, arg)(), [x], device)

def test_max_returns_named_pair_and_int_reductions(device):
    x = np.array([[1, 7, 3], [9, 2, 9]])
    o, t = mt.tensor(x, device=device), torch.tensor(x)
    assert_close(o.max(1).values, t.max(1).values)
    assert_close(o.max(1).indices, t.max(1).indices)
    assert_close(o.max(), t.max())
    assert_close(mt.min(o), torch.min(t))
    assert_close(o.sum(0), t.sum(0))
    assert_close(mt.tensor([True, False, True]).sum(), torch.tensor([True, False, True]).sum())
    assert_close(o.max(1, keepdim=True)[0], t.max(1, keepdim=True)[0])
    check(lambda a: a.max(0).values, lambda a: a.max(0).values, [np.array(2.5)], device)

@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@SETTINGS
@given(sd=shape_and_dim(min_dims=0, allow_none=False), dtype=float_dtypes, layout=layouts, seed=seeds,
       scale=st.sampled_from([1.0, 30.0]))
def test_softmax_family(device, fn, sd, dtype, layout, seed, scale):
    shape, dim = sd
    x = data(np.random.default_rng(seed), shape, dtype) * dtype(scale)
    check(lambda t: getattr(t, fn)(dim), lambda t: getattr(t, fn)(dim), [x], device, layout, seed=seed)
    check(lambda t: getattr(mt, fn)(t, dim), lambda t: getattr(torch, fn)(t, dim), [x], device, seed=seed)

def test_softmax_large_logits_finite(device):
    x = np.array([[-1000., 0., 1000.], [1000., 1000., -1000.]], np.float32)
    for fn in ("softmax", "log_softmax"):
        check(lambda t: getattr(t, fn)(-1), lambda t: getattr(t, fn)(-1), [x], device)
    check(lambda t: t.logsumexp(-1), lambda t: t.logsumexp(-1), [x], device)
    check(lambda t: t.logsumexp(0), lambda t: t.logsumexp(0), [np.array([-np.inf, -np.inf, 1.], np.float32)], device,
          second_order=False)
    assert np.isfinite(to_numpy(mt.tensor(x).log_softmax(1))).all()

# ----------------------------------------------------------------------------------------------- shapes

SHAPE_OPS = {
    "reshape": (lambda x: x.reshape(-1), lambda x: x.reshape(-1)),
    "flatten": (lambda x: x.flatten(), lambda x: x.flatten()),
    "flatten1": (lambda x: x.flatten(1) if x.ndim > 1 else x.flatten(), lambda x: x.flatten(1) if x.ndim > 1 else x.flatten()),
    "unsqueeze0": (lambda x: x.unsqueeze(0) * 2, lambda x: x.unsqueeze(0) * 2),
    "unsqueeze-1": (lambda x: mt.unsqueeze(x, -1) * 2, lambda x: torch.unsqueeze(x, -1) * 2),
    "squeeze": (lambda x: x.unsqueeze(1 if x.ndim else 0).squeeze() * 2, lambda x: x.unsqueeze(1 if x.ndim else 0).squeeze() * 2),
    "squeeze_dim": (lambda x: x.unsqueeze(0).squeeze(0) * 2, lambda x: x.unsqueeze(0).squeeze(0) * 2),
    "T": (lambda x: x.T * 1, lambda x: x.permute(tuple(reversed(range(x.ndim)))) * 1),
    "mT": (lambda x: x.mT * 1 if x.ndim > 1 else x * 1, lambda x: x.mT * 1 if x.ndim > 1 else x * 1),
    "permute": (lambda x: x.permute(tuple(reversed(range(x.ndim)))) * 1, lambda x: x.permute(tuple(reversed(range(x.ndim)))) * 1),
    "broadcast_to": (lambda x: x.broadcast_to((2,) + x.shape) * 1, lambda x: x.broadcast_to((2,) + x.shape) * 1),
    "expand": (lambda x: x.unsqueeze(0).expand(3, *x.shape), lambda x: x.unsqueeze(0).expand(3, *x.shape)),
    "getitem_slice": (lambda x: x[..., ::2] if x.ndim else x * 1, lambda x: x[..., ::2] if x.ndim else x * 1),
    "getitem_int": (lambda x: x[0] if x.ndim else x * 1, lambda x: x[0] if x.ndim else x * 1),
    "getitem_repeat": (lambda x: x[mt.tensor([0, 0, -1])] if x.ndim else x * 1,
                       lambda x: x[torch.tensor([0, 0, -1])] if x.ndim else x * 1),
    "getitem_mask": (lambda x: x[x > 0], lambda x: x[x > 0]),
    "split": (lambda x: x.split(2, -1)[0] * 3 if x.ndim else x * 3, lambda x: x.split(2, -1)[0] * 3 if x.ndim else x * 3),
    "chunk": (lambda x: x.chunk(2, 0)[-1] * 3 if x.ndim else x * 3, lambda x: x.chunk(2, 0)[-1] * 3 if x.ndim else x * 3),
}

@pytest.mark.parametrize("name", list(SHAPE_OPS))
@SETTINGS
@given(shape=array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4), dtype=float_dtypes, layout=layouts,
       seed=seeds)
def test_shape_ops(device, name, shape, dtype, layout, seed):
    f, g = SHAPE_OPS[name]
    check(f, g, [data(np.random.default_rng(seed), shape, dtype)], device, layout, seed=seed)

@SETTINGS
@given(shape=array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), seed=seeds)
def test_view_like_torch(device, shape, seed):
    "view works on contiguous tensors like reshape, and refuses exactly when PyTorch does."
    x = data(np.random.default_rng(seed), shape, np.float32)
    check(lambda t: t.view(-1), lambda t: t.view(-1), [x], device)
    check(lambda t: t.view(1, *t.shape), lambda t: t.view(1, *t.shape), [x], device)
    for layout in ("transposed", "sliced"):
        (o,), (t,), _, _ = make_inputs([x], layout, device)
        try: expected = t.view(-1)
        except RuntimeError:
            with pytest.raises(RuntimeError, match="use .reshape"): o.view(-1)
        else: assert_close(o.view(-1), expected)

@SETTINGS
@given(n=st.integers(1, 4), shape=array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3), data_=st.data(),
       dtype=float_dtypes, seed=seeds)
def test_cat_stack(device, n, shape, data_, dtype, seed):
    rng = np.random.default_rng(seed)
    dim = data_.draw(st.integers(-len(shape), len(shape) - 1))
    sizes = [data_.draw(st.integers(1, 3)) for _ in range(n)]
    arrays = [data(rng, shape[:dim % len(shape)] + (k,) + shape[dim % len(shape) + 1:], dtype) for k in sizes]
    check(lambda *ts: mt.cat(ts, dim), lambda *ts: torch.cat(ts, dim), arrays, device, seed=seed)
    same = [data(rng, shape, dtype) for _ in range(n)]
    sdim = data_.draw(st.integers(-len(shape) - 1, len(shape)))
    check(lambda *ts: mt.stack(ts, sdim), lambda *ts: torch.stack(ts, sdim), same, device, seed=seed)

def test_cat_where_promote_dtypes(device):
    for a, b in [(np.array([1, 2]), np.array([0.5])), (np.array([1., 2.], np.float32), np.array([3.])),
                 (np.array([True]), np.array([4]))]:
        assert_close(mt.cat([mt.tensor(a), mt.tensor(b)]), torch.cat([torch.tensor(a), torch.tensor(b)]))
    cond = np.array([True, False, True])
    for a, b in [(np.array([1, 2, 3]), 0.5), (np.array([1., 2., 3.], np.float32), 2), (1.5, 0), (1, 0),
                 (np.array([1, 2, 3]), np.array([1., 2., 3.]))]:
        ours = mt.where(mt.tensor(cond), *(mt.tensor(v) if isinstance(v, np.ndarray) else v for v in (a, b)))
        theirs = torch.where(torch.tensor(cond), *(torch.tensor(v) if isinstance(v, np.ndarray) else v for v in (a, b)))
        assert_close(ours, theirs)

# ----------------------------------------------------------------------------------------------- matmul

MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                 ((3,), (5, 3, 2)), ((5, 2, 3), (3,)), ((2, 1, 2, 3), (4, 3, 2)), ((1, 2, 3), (4, 3, 1)),
                 ((4, 1, 2, 3), (2, 3, 2))]

@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_matmul(device, shapes, dtype, layout):
    rng = np.random.default_rng(len(shapes[0]) * 10 + len(shapes[1]))
    arrays = [data(rng, s, dtype) for s in shapes]
    check(lambda a, b: a @ b, lambda a, b: a @ b, arrays, device, layout)
    check(lambda a, b: mt.matmul(a, b), lambda a, b: torch.matmul(a, b), arrays, device, layout)

# ----------------------------------------------------------------------------------------------- comparisons

@pytest.mark.parametrize("op", ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"])
@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3), seed=seeds,
       kinds=st.sampled_from(["ff", "fi", "ii", "fscalar", "iscalar_float"]))
def test_comparisons(device, op, shapes, seed, kinds):
    rng = np.random.default_rng(seed)
    a = np.round(rng.standard_normal(shapes.input_shapes[0]) * 2)  # small integers: equality happens
    b = np.round(rng.standard_normal(shapes.input_shapes[1]) * 2)
    if kinds == "fi": b = b.astype(np.int64)
    if kinds == "ii": a, b = a.astype(np.int64), b.astype(np.int64)
    oa, ta = mt.tensor(a.astype(np.float32) if kinds != "ii" else a, device=device), None
    ta = torch.tensor(to_numpy(oa))
    if kinds in ("fscalar", "iscalar_float"):
        other = 1.0 if kinds == "fscalar" else 0.5
        if kinds == "iscalar_float": oa, ta = mt.tensor(a.astype(np.int64)), torch.tensor(a.astype(np.int64))
        assert_close(getattr(oa, op)(other), getattr(ta, op)(other))
        return
    ob, tb = mt.tensor(b, device=device), torch.tensor(b)
    out = getattr(oa, op)(ob)
    assert out.dtype == mt.bool_ and not out.requires_grad
    assert_close(out, getattr(ta, op)(tb))

def test_logical_ops_and_comparisons_have_no_grad(device):
    x = mt.tensor([-1., 0., 2.], device=device, requires_grad=True)
    m = (x > -0.5) & ~(x == 2) | (x < -0.5) ^ False
    assert m.tolist() == ((torch.tensor([-1., 0., 2.]) > -0.5) & ~(torch.tensor([-1., 0., 2.]) == 2)
                          | (torch.tensor([-1., 0., 2.]) < -0.5)).tolist()
    assert m.grad_fn is None and not m.requires_grad
    assert m.any().item() and not m.all().item()
    assert {x: 1}[x] == 1  # tensors hash by identity
    assert (x == None) is False  # noqa: E711

# ----------------------------------------------------------------------------------------------- dtypes

OPERANDS = {
    "bool[2]": np.array([True, False]), "int64[2]": np.array([3, -2]), "float32[2]": np.array([1.5, -2.], np.float32),
    "float64[2]": np.array([0.25, 4.]), "bool0d": np.array(True), "int64_0d": np.array(5),
    "float32_0d": np.array(2., np.float32), "float64_0d": np.array(-1.5), "int": 2, "float": 2.5, "bool": True,
}
PAIRS = [(a, b) for a in OPERANDS for b in OPERANDS if not (np.isscalar(OPERANDS[a]) or isinstance(OPERANDS[a], (int, float)))]

def _as(lib, v): return v if isinstance(v, (bool, int, float)) else (mt.tensor(v) if lib == "mt" else torch.tensor(v))

@pytest.mark.parametrize("a,b", PAIRS)
def test_result_type_matches_torch(a, b):
    ours = mt.result_type(_as("mt", OPERANDS[a]), _as("mt", OPERANDS[b]))
    theirs = torch.result_type(_as("torch", OPERANDS[a]), _as("torch", OPERANDS[b]))
    assert DTYPES[np.dtype(ours)] == theirs

@pytest.mark.parametrize("op", ["add", "mul", "sub", "maximum", "where", "lt"])
@pytest.mark.parametrize("a,b", PAIRS)
def test_binary_result_dtypes_match_torch(op, a, b):
    x, y = OPERANDS[a], OPERANDS[b]
    if op == "sub" and (np.asarray(x).dtype == bool or np.asarray(y).dtype == bool): pytest.skip("torch refuses bool -")
    if op == "maximum" and isinstance(y, (bool, int, float)): y = np.array(y)
    fns = {"add": lambda p, q, lib: p + q, "mul": lambda p, q, lib: p * q, "sub": lambda p, q, lib: p - q,
           "maximum": lambda p, q, lib: p.maximum(q),
           "where": lambda p, q, lib: (mt if lib == "mt" else torch).where(_as(lib, np.array([True, False])), p, q),
           "lt": lambda p, q, lib: p < q}
    ours = fns[op](_as("mt", x), _as("mt", y), "mt")
    theirs = fns[op](_as("torch", x), _as("torch", y), "torch")
    assert_close(ours, theirs)

@pytest.mark.parametrize("fn", [
    pytest.param(lambda t: t.exp(), id="exp"),
    pytest.param(lambda t: t / 2, id="div_scalar"),
    pytest.param(lambda t: t / t, id="div"),
    pytest.param(lambda t: t.tanh(), id="tanh"), pytest.param(lambda t: t.sigmoid(), id="sigmoid"),
    pytest.param(lambda t: t.sqrt(), id="sqrt"), pytest.param(lambda t: t.abs(), id="abs"),
    pytest.param(lambda t: t.relu(), id="relu"), pytest.param(lambda t: t.logsumexp(0), id="logsumexp"),
    pytest.param(lambda t: t.clamp(0.5), id="clamp_float_bound"), pytest.param(lambda t: t.clamp(0, 2), id="clamp_int"),
    pytest.param(lambda t: t ** 0.5, id="pow_float"), pytest.param(lambda t: t ** 2, id="pow_int"),
])
def test_integer_inputs_dtype_like_torch(fn):
    x = np.array([1, 4, 9])
    assert_close(fn(mt.tensor(x)), fn(torch.tensor(x)))

def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"): mt.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"): mt.arange(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="softmax needs a floating point"): mt.tensor([1, 2]).softmax(0)
    with pytest.raises(RuntimeError, match="var.. and std.. need a floating point"): mt.tensor([1, 2]).var()

# ----------------------------------------------------------------------------------------------- non-contiguous numpy input

@pytest.mark.parametrize("make", [lambda a: a.T, lambda a: a[:, ::2], lambda a: a[::-1], lambda a: np.broadcast_to(a[:1], a.shape)],
                         ids=["transposed", "strided", "reversed", "broadcast"])
def test_noncontiguous_numpy_to_tensor(device, make):
    base = np.arange(24, dtype=np.float32).reshape(4, 6) / 7
    arr = make(base)
    o, t = mt.tensor(arr, device=device, requires_grad=True), torch.tensor(np.array(arr), requires_grad=True)
    assert_close(o, t)
    check(lambda x: (x.softmax(-1) * x.sigmoid()).sum(0), lambda x: (x.softmax(-1) * x.sigmoid()).sum(0),
          [arr], device)
    before = base.copy()
    mt.tensor(arr, device=device).zero_()  # mt.tensor copies: the caller's array is untouched
    np.testing.assert_array_equal(base, before)

# ----------------------------------------------------------------------------------------------- factories

def test_factories_like_torch(device):
    pairs = [
        (mt.zeros(2, 3), torch.zeros(2, 3)), (mt.ones((2, 1)), torch.ones((2, 1))),
        (mt.zeros(3, dtype=mt.int64), torch.zeros(3, dtype=torch.int64)),
        (mt.full((2, 2), 7), torch.full((2, 2), 7)), (mt.full((2,), 1.5), torch.full((2,), 1.5)),
        (mt.full((2,), True), torch.full((2,), True)), (mt.arange(5), torch.arange(5)),
        (mt.arange(2, 11, 3), torch.arange(2, 11, 3)), (mt.arange(0, 1, 0.1), torch.arange(0, 1, 0.1)),
        (mt.arange(5, 0, -1.5), torch.arange(5, 0, -1.5)), (mt.arange(1., 4.), torch.arange(1., 4.)),
        (mt.arange(0, 2, 0.3, dtype=mt.float64), torch.arange(0, 2, 0.3, dtype=torch.float64)),
        (mt.eye(3), torch.eye(3)), (mt.eye(2, 4), torch.eye(2, 4)),
        (mt.zeros_like(mt.tensor([[1, 2]])), torch.zeros_like(torch.tensor([[1, 2]]))),
        (mt.ones_like(mt.tensor([1.])), torch.ones_like(torch.tensor([1.]))),
        (mt.full_like(mt.tensor([1., 2.]), 3), torch.full_like(torch.tensor([1., 2.]), 3)),
        (mt.zeros(0, 3), torch.zeros(0, 3)), (mt.ones(()), torch.ones(())),
    ]
    for ours, theirs in pairs: assert_close(ours, theirs)
    for args in [(0, 1, 5), (-1, 3, 7), (0.5, -2.25, 13), (0, 1, 1), (3, 3, 4), (0, 10, 100)]:
        assert_close(mt.linspace(*args), torch.linspace(*args), rtol=1e-6, atol=1e-6)
        assert_close(mt.linspace(*args, dtype=mt.float64), torch.linspace(*args, dtype=torch.float64))
    assert mt.empty(2, 3).shape == (2, 3) and mt.empty(2, dtype=mt.int64).dtype == mt.int64
    for f in (mt.rand, mt.randn):
        t = f(3, 4, device=device, requires_grad=True)
        assert t.shape == (3, 4) and t.dtype == mt.float32 and t.is_leaf and t.requires_grad and t.device == device
    assert mt.zeros(2, device=device).device == device

def test_random_seeding_and_distributions():
    mt.manual_seed(7); a = mt.randn(1000); u = mt.rand(1000); i = mt.randint(3, 9, (1000,)); p = mt.randperm(10)
    mt.manual_seed(7)
    assert mt.randn(1000).tolist() == a.tolist() and mt.rand(1000).tolist() == u.tolist()
    assert abs(a.mean().item()) < 0.1 and abs(a.std().item() - 1) < 0.1
    assert 0 <= u.min().item() and u.max().item() < 1 and abs(u.mean().item() - 0.5) < 0.05
    assert i.dtype == mt.int64 and i.min().item() >= 3 and i.max().item() <= 8
    assert sorted(p.tolist()) == list(range(10))
    g = np.random.default_rng(1)
    assert mt.rand(3, generator=g).tolist() == mt.rand(3, generator=np.random.default_rng(1)).tolist()
    assert mt.manual_seed(0) is mt.manual_seed(1)  # reseeded in place: holders of the generator see it

# ----------------------------------------------------------------------------------------------- gradcheck

def d64(rng, *shape, positive=False):
    x = rng.standard_normal(shape)
    return mt.tensor(np.abs(x) + 0.5 if positive else x, dtype=mt.float64, requires_grad=True)

GRADCHECK_FNS = {
    "tanh_sigmoid": (lambda x, y: (x * y).tanh() + x.sigmoid(), [(3, 4), (4,)]),
    "relu_abs": (lambda x, y: (x + y).relu() * y.abs(), [(3, 4), (4,)]),
    "max_min": (lambda x, y: x.maximum(y) + x.minimum(y * 2) + x.max(1).values.sum() + x.min(), [(3, 4), (4,)]),
    "var_std": (lambda x: x.var(0) * x.std(1, keepdim=True), [(3, 4)]),
    "softmax": (lambda x, y: (x @ y).softmax(-1) * (x @ y).log_softmax(0) + x.logsumexp(1).sum(), [(3, 4), (4, 2)]),
    "shapes": (lambda x, y: mt.cat([x.unsqueeze(0), mt.stack([y, y])], 0).flatten(1).squeeze().T, [(3, 4), (3, 4)]),
    "where_clamp": (lambda x, y: mt.where(x > 0, x * y, y).clamp(-0.5, 0.8) + x.clamp(min=y), [(3, 4), (4,)]),
    "indexing": (lambda x: x[mt.tensor([0, 0, 2])][:, 1:] * x[x > 0].sum() + x.view(-1)[::3].sum(), [(3, 4)]),
    "batched_matmul": (lambda x, y: (x @ y).sqrt(), [(2, 1, 3, 4), (3, 4, 2)]),
}

@pytest.mark.parametrize("name", list(GRADCHECK_FNS))
def test_gradcheck_and_gradgradcheck(device, name):
    fn, shapes = GRADCHECK_FNS[name]
    rng = np.random.default_rng(3)
    pos = name == "batched_matmul"
    inputs = [d64(rng, *s, positive=pos).to(device).detach().requires_grad_() for s in shapes]
    assert gradcheck(fn, *inputs)
    if name not in ("relu_abs", "where_clamp"):  # near kinks a second finite difference is unreliable
        assert gradgradcheck(fn, *inputs)

class WrongSin(mt.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.sin(a.array)
    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * a.cos() * 1.01  # one percent off

def test_gradcheck_catches_bad_backward_and_names_input():
    x, y = d64(np.random.default_rng(0), 3), d64(np.random.default_rng(1), 2, 3)
    with pytest.raises(GradcheckError, match=r"input 1 \(shape \[2, 3\]\): element \(\d, \d\)"):
        gradcheck(lambda a, b: a * WrongSin.apply(b), x, y)
    with pytest.raises(ValueError, match="use float64"):
        gradcheck(lambda a: a.sin(), mt.tensor([1.], requires_grad=True))
    with pytest.raises(ValueError, match="no input requires grad"):
        gradcheck(lambda a: a.sin(), mt.tensor([1.], dtype=mt.float64))
    assert gradcheck(lambda a, b: a * b, x, mt.tensor(2.0, dtype=mt.float64))  # constants are allowed

def test_gradgradcheck_catches_nondifferentiable_backward():
    class DetachedBackward(mt.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a.array ** 2
        @staticmethod
        def backward(ctx, grad):
            a, = ctx.saved_tensors
            return grad * a.detach() * 2  # right value, but cut from the graph: no second derivative
    x = d64(np.random.default_rng(2), 4)
    assert gradcheck(lambda a: DetachedBackward.apply(a), x)
    with pytest.raises(GradcheckError):
        gradgradcheck(lambda a: DetachedBackward.apply(a) * a, x)

# ----------------------------------------------------------------------------------------------- bad input

def test_errors_name_the_problem():
    cases = [
        (lambda: mt.ones(2, 3) @ mt.ones(4, 2), RuntimeError, r"\[2, 3\] and \[4, 2\]"),
        (lambda: mt.ones(3, 2) + mt.ones(3), RuntimeError, r"\[3, 2\] and \[3\]"),
        (lambda: mt.where(mt.ones(2) > 0, mt.ones(3), mt.ones(2)), RuntimeError, r"\[2\] and \[3\]"),
        (lambda: mt.ones(2).maximum(mt.ones(3)), RuntimeError, r"\[2\] and \[3\]"),
        (lambda: mt.cat([mt.ones(2, 3), mt.ones(3, 2)]), RuntimeError, r"shape \[3, 2\] but tensor 0 has shape \[2, 3\]"),
        (lambda: mt.cat([mt.ones(2, 3), mt.ones(3)]), RuntimeError, r"\[3\] but tensor 0 has shape \[2, 3\]"),
        (lambda: mt.cat([]), RuntimeError, "non-empty"),
        (lambda: mt.cat([mt.tensor(1.), mt.tensor(2.)]), RuntimeError, "zero-dimensional"),
        (lambda: mt.stack([mt.ones(2), mt.ones(3)]), RuntimeError, r"\[2\] at entry 0 and \[3\] at entry 1"),
        (lambda: mt.ones(2, 3).T.view(6), RuntimeError, r"shape \[3, 2\].*as shape \[6\]"),
        (lambda: mt.ones(2, 3).view(4, 2), RuntimeError, r"\[4, 2\] is invalid for a tensor of 6 elements"),
        (lambda: mt.ones(2).unsqueeze(3), IndexError, "out of range"),
        (lambda: mt.ones(2).clamp(), RuntimeError, "at least one of min or max"),
        (lambda: mt.where(mt.ones(2), 1., 0.), TypeError, "bool tensor as condition"),
        (lambda: mt.ones(0).max(), RuntimeError, r"empty tensor \(shape \[0\]\)"),
        (lambda: mt.ones(2, 3).max(2), IndexError, "dimension 2 is out of range"),
        (lambda: mt.ones(5).split(2.5 if False else [2, 2]), RuntimeError, r"\[2, 2\] don't add up to 5"),
        (lambda: mt.ones(2) & mt.ones(2), NotImplementedError, "bitwise_and.*float32"),  # torch: the same type
        (lambda: mt.ones(2, 3) @ mt.ones(3, 2, dtype=mt.float64), RuntimeError, "same dtype.*float32 != float64"),
    ]
    for fn, exc, pattern in cases:
        with pytest.raises(exc, match=pattern): fn()

def test_unbroadcast_essay_example():
    "S3:209-254: b:[1,C] added to A:[N,C]; the gradient of b is the column sum."
    A = mt.tensor([[1., 2.], [3., 4.], [5., 6.]], requires_grad=True)
    b = mt.tensor([[0.5, -0.3]], requires_grad=True)
    (A + b).backward(mt.tensor([[1., 2.], [0.5, 1.5], [0.3, 0.7]]))
    np.testing.assert_allclose(b.grad.numpy(), [[1.8, 4.2]], rtol=1e-6)
