"""mt.bfloat16 (ml_dtypes' bfloat16, registered with numpy) against torch.bfloat16 on the CPU.

PyTorch's CPU kernels compute bfloat16 ops in float32 and round each result to bfloat16 once (ties to even); so do
ours (chapter 00's `Function.upcast_bfloat16`). Results are compared bit for bit (`assert_bf16_close(ulps=0)`),
except where float32 sums run in another order (matmul, sum, mean: one bfloat16 step at most) or where torch's
kernel keeps an intermediate in bfloat16 (log_softmax, batch_norm: the recipe is reproduced below).
"""
import pickle
import numpy as np
import pytest
import torch
import torch.nn.functional as TF
import minitorch_nb as mt
from minitorch_nb import nn
import minitorch_nb.nn.functional as F
from oracle import BF16, assert_bf16_close, bf16_ulp, to_numpy

def bf16_pair(arr, device, requires_grad=False):
    "The same bfloat16 values in both libraries (float32 holds each bfloat16 exactly)."
    arr = np.asarray(arr, np.float32).astype(BF16)
    ours = mt.tensor(arr, device=device, requires_grad=requires_grad)
    theirs = torch.tensor(arr.astype(np.float32)).bfloat16().requires_grad_(requires_grad)
    return ours, theirs

def uniform(shape, lo=-3.0, hi=3.0, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)

# --- the dtype -----------------------------------------------------------------------------------------------

def test_bfloat16_is_a_real_floating_point_dtype(device):
    x, t = mt.zeros(3, dtype=mt.bfloat16, device=device), torch.zeros(3, dtype=torch.bfloat16)
    assert mt.bfloat16 == BF16 and mt.bfloat16.itemsize == t.element_size() == 2
    assert x.dtype == mt.bfloat16 and x.is_floating_point() and t.is_floating_point()
    assert not mt.zeros(3, dtype=mt.int64).is_floating_point() and mt.zeros(2).half().is_floating_point()
    assert x.requires_grad_().requires_grad  # a float dtype: it can require gradients
    assert str(x.type()) == t.type() == "torch.BFloat16Tensor".replace("torch.", "torch.")

def test_finfo_like_torch():
    ours, theirs = np.finfo(mt.bfloat16), torch.finfo(torch.bfloat16)
    assert (float(ours.eps), float(ours.max), float(ours.tiny), float(ours.smallest_normal)) == \
           (theirs.eps, theirs.max, theirs.tiny, theirs.smallest_normal) == (2.0**-7, theirs.max, 2.0**-126, 2.0**-126)

def test_repr_prints_numbers_like_float32s():
    x = mt.tensor([1.0, 2.5, -3.0, 0.1], dtype=mt.bfloat16)
    assert repr(x) == "tensor([ 1.0000,  2.5000, -3.0000,  0.1001], dtype=bfloat16)"  # 0.1 is 0.10009765625
    assert repr(mt.tensor(1.5).bfloat16()) == "tensor(1.5, dtype=bfloat16)"

@pytest.mark.parametrize("name, make_ours, make_theirs", [
    ("zeros", lambda d: mt.zeros(2, 3, dtype=mt.bfloat16, device=d), lambda: torch.zeros(2, 3, dtype=torch.bfloat16)),
    ("ones", lambda d: mt.ones(4, dtype=mt.bfloat16, device=d), lambda: torch.ones(4, dtype=torch.bfloat16)),
    ("full", lambda d: mt.full((3,), 0.1, dtype=mt.bfloat16, device=d),
     lambda: torch.full((3,), 0.1, dtype=torch.bfloat16)),
    ("arange", lambda d: mt.arange(0, 5, 0.7, dtype=mt.bfloat16, device=d),
     lambda: torch.arange(0, 5, 0.7, dtype=torch.bfloat16)),
    ("linspace", lambda d: mt.linspace(-1, 1, 7, dtype=mt.bfloat16, device=d),
     lambda: torch.linspace(-1, 1, 7, dtype=torch.bfloat16)),
    ("eye", lambda d: mt.eye(3, dtype=mt.bfloat16, device=d), lambda: torch.eye(3, dtype=torch.bfloat16)),
    ("tensor", lambda d: mt.tensor([0.1, 1e-30, 3e38, 1 + 2**-8], dtype=mt.bfloat16, device=d),
     lambda: torch.tensor([0.1, 1e-30, 3e38, 1 + 2**-8], dtype=torch.bfloat16)),
    ("full_like", lambda d: mt.full_like(mt.zeros(2, dtype=mt.bfloat16, device=d), 1 / 3),
     lambda: torch.full_like(torch.zeros(2, dtype=torch.bfloat16), 1 / 3)),
])
def test_factories_make_bfloat16_like_torch(name, make_ours, make_theirs, device):
    ours = make_ours(device)
    assert ours.device == device, name
    assert_bf16_close(ours, make_theirs(), err_msg=name)

def test_random_factories_give_bfloat16(device):
    for make in (mt.rand, mt.randn):
        x = make(1000, dtype=mt.bfloat16, device=device)
        assert x.dtype == mt.bfloat16 and x.device == device
        assert len(np.unique(to_numpy(x))) > 100  # values, not a constant

# --- casts ---------------------------------------------------------------------------------------------------

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20,
                     3.3895e38, 3.3961e38, 3.40e38, -3.3961e38, 1e-40, 9.2e-41, 1e-45, 2.0**-133, 65504.0, 1e5],
                    np.float32)

def test_float32_to_bfloat16_rounds_like_torch(device):
    "Round to nearest, ties to even, on 2**18 random bit patterns and the edge cases: ties, overflow, subnormals."
    bits = np.random.default_rng(0).integers(0, 2**32, 2**18, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([bits.view(np.float32), SPECIALS])
    ours = mt.tensor(x, device=device).bfloat16()
    theirs = torch.tensor(x).bfloat16()
    assert_bf16_close(ours, theirs)  # finite values bit for bit, the same infinities and NaNs
    ties = mt.tensor([1 + 2**-8, 1 + 3 * 2**-8], device=device).bfloat16()  # halfway: to the even neighbour
    assert ties.tolist() == [1.0, 1 + 2**-6]
    assert mt.tensor([3.4e38], device=device).bfloat16().tolist() == [float("inf")]  # past max + half a step

def test_float64_and_float16_to_bfloat16_like_torch(device):
    x = np.concatenate([np.random.default_rng(1).standard_normal(4096) * 10.0 ** np.arange(-20, 20, 10).repeat(1024),
                        SPECIALS.astype(np.float64), [1 + 2**-8 + 2**-40, 1 + 2**-8 - 2**-40]])
    assert_bf16_close(mt.tensor(x, device=device).bfloat16(), torch.tensor(x).bfloat16())
    h = np.random.default_rng(2).standard_normal(4096).astype(np.float16)
    assert_bf16_close(mt.tensor(h, device=device).bfloat16(), torch.tensor(h).bfloat16())

def test_integers_to_and_from_bfloat16_like_torch(device):
    ints = np.array([0, 1, -1, 255, 256, 257, 2**24 + 1, -(2**31), 2**40 + 2**32, 123456789], np.int64)
    assert_bf16_close(mt.tensor(ints, device=device).bfloat16(), torch.tensor(ints).bfloat16())
    vals = np.array([0.5, -0.5, 1.75, -1.75, 200.0, -3.0, 1000.0], np.float32)
    ours, theirs = bf16_pair(vals, device)
    for dt, tdt in ((mt.int64, torch.int64), (mt.int32, torch.int32), (mt.int8, torch.int8),
                    (mt.uint8, torch.uint8), (mt.bool_, torch.bool)):
        np.testing.assert_array_equal(to_numpy(ours.to(dt)), theirs.to(tdt).numpy(), err_msg=str(dt))

def test_bfloat16_to_wider_floats_is_exact(device):
    ours, theirs = bf16_pair(uniform(1000, -1e4, 1e4), device)
    for dt, tdt in ((mt.float32, torch.float32), (mt.float64, torch.float64), (mt.float16, torch.float16)):
        np.testing.assert_array_equal(to_numpy(ours.to(dt)), theirs.to(tdt).numpy(), err_msg=str(dt))

def test_casts_carry_gradients_as_torch(device):
    x, t = mt.tensor(uniform(8), device=device, requires_grad=True), torch.tensor(uniform(8), requires_grad=True)
    x.bfloat16().float().pow(2).sum().backward(); t.bfloat16().float().pow(2).sum().backward()
    assert x.grad.dtype == mt.float32
    np.testing.assert_array_equal(to_numpy(x.grad), t.grad.numpy())

# --- elementwise ops: float32 maths, one rounding -----------------------------------------------------------

UNARY = {  # name -> (our call, torch's, input range)
    "exp": (lambda x: x.exp(), torch.exp, (-5, 5)), "log": (lambda x: x.log(), torch.log, (0.01, 100)),
    "sin": (lambda x: x.sin(), torch.sin, (-6, 6)), "cos": (lambda x: x.cos(), torch.cos, (-6, 6)),
    "tanh": (lambda x: x.tanh(), torch.tanh, (-4, 4)), "sigmoid": (lambda x: x.sigmoid(), torch.sigmoid, (-8, 8)),
    "sqrt": (lambda x: x.sqrt(), torch.sqrt, (0, 100)), "relu": (F.relu, torch.relu, (-3, 3)),
    "abs": (lambda x: x.abs(), torch.abs, (-3, 3)), "neg": (lambda x: -x, torch.neg, (-3, 3)),
    "square": (lambda x: x.square(), torch.square, (-30, 30)),
    "rsqrt": (lambda x: x.rsqrt(), torch.rsqrt, (0.01, 100)),
    "reciprocal": (lambda x: x.reciprocal(), torch.reciprocal, (0.1, 10)),
    "log1p": (lambda x: x.log1p(), torch.log1p, (-0.9, 10)), "expm1": (lambda x: x.expm1(), torch.expm1, (-3, 3)),
    "floor": (lambda x: x.floor(), torch.floor, (-300, 300)), "round": (lambda x: x.round(), torch.round, (-300, 300)),
    "gelu": (F.gelu, TF.gelu, (-4, 4)), "silu": (F.silu, TF.silu, (-6, 6)), "erf": (mt.erf, torch.erf, (-3, 3)),
    "softplus": (F.softplus, TF.softplus, (-10, 10)),
}

# torch's backward of these is one kernel (or one bfloat16 op): the gradients agree to one rounding
ONE_ROUNDING_BACKWARD = {"exp", "log", "sin", "cos", "tanh", "sigmoid", "sqrt", "relu", "abs", "neg", "square",
                         "floor", "round", "gelu", "silu", "softplus", "log1p"}

@pytest.mark.parametrize("name", list(UNARY))
def test_unary_ops_and_their_gradients_like_torch(name, device):
    ours_fn, theirs_fn, (lo, hi) = UNARY[name]
    (x, t), c = bf16_pair(uniform(4096, lo, hi), device, requires_grad=True), uniform(4096, seed=1).astype(BF16)
    y, yt = ours_fn(x), theirs_fn(t)
    assert y.dtype == mt.bfloat16
    # gelu: ours computes 1 + erf(x/√2) in float32, which cancels below x = -3 and reaches bfloat16's last bit
    assert_bf16_close(y, yt, ulps=1 if name == "gelu" else 0, err_msg=name)
    (y * mt.tensor(c, device=device)).sum().backward()
    (yt * torch.tensor(c.astype(np.float32)).bfloat16()).sum().backward()
    assert x.grad.dtype == mt.bfloat16 and t.grad.dtype == torch.bfloat16
    # ours computes each backward formula in float32 and rounds once; torch too where its backward is one kernel
    if name in ONE_ROUNDING_BACKWARD: assert_bf16_close(x.grad, t.grad, ulps=1, err_msg=f"grad of {name}")
    # elsewhere torch's formula reuses the rounded output (rsqrt: -0.5 * grad * result**3) or rounds between
    # ops: then ours is never farther from the float64 gradient than torch's, give or take one rounding
    t64 = torch.tensor(to_numpy(x).astype(np.float64), requires_grad=True)
    (theirs_fn(t64) * torch.tensor(c.astype(np.float64))).sum().backward()
    exact, ours, theirs = (t64.grad.numpy(), to_numpy(x.grad).astype(np.float64),
                           to_numpy(t.grad).astype(np.float64))
    assert np.all(np.abs(ours - exact) <= np.abs(theirs - exact) + bf16_ulp(exact)), name

BINARY = {"add": (lambda a, b: a + b), "sub": (lambda a, b: a - b), "mul": (lambda a, b: a * b),
          "div": (lambda a, b: a / b), "pow": (lambda a, b: a.abs() ** b), "maximum": (lambda a, b: a.maximum(b)),
          "minimum": (lambda a, b: a.minimum(b)), "atan2": (lambda a, b: a.atan2(b))}

@pytest.mark.parametrize("name", list(BINARY))
def test_binary_ops_with_broadcasting_and_numbers_like_torch(name, device):
    fn = BINARY[name]
    (a, at), (b, bt) = bf16_pair(uniform((64, 64)), device), bf16_pair(uniform(64, 0.5, 2.0, seed=1), device)
    assert_bf16_close(fn(a, b), fn(at, bt), err_msg=name)
    assert_bf16_close(fn(a, mt.tensor(1.7, device=device).bfloat16()), fn(at, torch.tensor(1.7).bfloat16()))
    if name not in ("maximum", "minimum", "atan2"):
        assert_bf16_close(fn(a, 1.7), fn(at, 1.7), err_msg=f"{name} with a Python float")

def test_type_promotion_like_torch():
    x, t = bf16_pair([1.5, 2.25], "numpy")
    cases = [(lambda l, a: a + l.ones(2)), (lambda l, a: a + l.ones(2).half()), (lambda l, a: a + l.ones(2).double()),
             (lambda l, a: a + l.ones(2, dtype=l.int64)), (lambda l, a: a * 2.5), (lambda l, a: a * 3),
             (lambda l, a: a + l.tensor(1.0, dtype=l.float64)), (lambda l, a: l.ones(2, dtype=l.int32) / a),
             (lambda l, a: (a > 1.6)), (lambda l, a: a.sum())]
    for i, case in enumerate(cases):
        ours, theirs = case(mt, x), case(torch, t)
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), i
        np.testing.assert_array_equal(np.asarray(to_numpy(ours), np.float64), to_numpy(theirs).astype(np.float64))

# --- matmul and reductions: float32 accumulation ------------------------------------------------------------

def test_matmul_accumulates_in_float32_like_torch(device):
    "One rounding of a float32 sum: equal to torch's but where the float32 sums differ in order (one step)."
    (a, at), (b, bt) = bf16_pair(uniform((64, 256)), device), bf16_pair(uniform((256, 48), seed=1), device)
    y, yt = a @ b, at @ bt
    assert_bf16_close(y, yt, ulps=1)
    exact = (to_numpy(a).astype(np.float64) @ to_numpy(b).astype(np.float64)).astype(np.float32).astype(BF16)
    assert np.mean(to_numpy(y) == exact) > 0.95  # almost all are the float64 product rounded once
    (a.requires_grad_() @ b).sum().backward()
    (at.requires_grad_() @ bt).sum().backward()
    assert a.grad.dtype == mt.bfloat16
    assert_bf16_close(a.grad, at.grad, ulps=1)
    assert_bf16_close(F.linear(a, b.T.contiguous()), TF.linear(at, bt.T.contiguous()), ulps=1)

def test_sum_does_not_accumulate_in_bfloat16(device):
    """numpy's own sum of a bfloat16 array rounds after every addition and stalls; ours (and torch's) sums in
    float32 and rounds once."""
    x = np.full(4096, 0.1, np.float32).astype(BF16)
    ours, theirs = mt.tensor(x, device=device).sum(), torch.tensor(x.astype(np.float32)).bfloat16().sum()
    assert_bf16_close(ours, theirs)
    assert ours.item() == 410.0 and float(x.sum()) == 32.0  # numpy's bfloat16 loop would have given 32

@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "var", "std", "norm", "logsumexp",
                                  "cumsum", "softmax", "layer_norm"])
def test_reductions_like_torch(name, device):
    x, t = bf16_pair(uniform((16, 300)), device, requires_grad=True)
    call = {"sum": lambda v: v.sum(1), "mean": lambda v: v.mean(1), "amax": lambda v: v.amax(1),
            "amin": lambda v: v.min(1)[0], "var": lambda v: v.var(1),
            "std": lambda v: v.std(1), "norm": lambda v: v.norm(dim=1), "logsumexp": lambda v: v.logsumexp(1),
            "cumsum": lambda v: v.cumsum(1), "softmax": lambda v: v.softmax(1),
            "layer_norm": lambda v: (F if isinstance(v, mt.Tensor) else TF).layer_norm(v, (300,))}[name]
    y, yt = call(x), call(t)
    assert y.dtype == mt.bfloat16
    # float32 sums in another order, and mean's division after the sum's rounding: one bfloat16 step
    assert_bf16_close(y, yt, ulps=0 if name in ("amax", "amin", "softmax", "layer_norm") else 1, err_msg=name)
    c = uniform(y.shape, seed=1).astype(BF16)
    (y * mt.tensor(c, device=device)).float().sum().backward()
    (yt * torch.tensor(c.astype(np.float32)).bfloat16()).float().sum().backward()
    assert x.grad.dtype == mt.bfloat16
    # torch's backward formulas reuse the rounded bfloat16 result (logsumexp, norm) or round between ops;
    # ours computes each node in float32 and rounds once: its largest error from the float64 gradient is no
    # larger than torch's, give or take one rounding at the gradient's scale
    t64 = torch.tensor(to_numpy(x).astype(np.float64), requires_grad=True)
    (call(t64) * torch.tensor(c.astype(np.float64))).sum().backward()
    exact, ours, theirs = (t64.grad.numpy(), to_numpy(x.grad).astype(np.float64),
                           to_numpy(t.grad).astype(np.float64))
    assert np.abs(ours - exact).max() <= np.abs(theirs - exact).max() + bf16_ulp(np.abs(exact).max()), name

def test_large_arrays_through_the_cpu_kernels(device):
    "2**18 elements: device 'cpu' runs its parallel Numba kernels (on the float32 copies), not numpy's loops."
    x, t = bf16_pair(uniform((512, 512)), device)
    assert_bf16_close(x.exp(), t.exp())
    assert_bf16_close(x * x + 1.0, t * t + 1.0)
    assert_bf16_close(x.sum(1), t.sum(1), ulps=1)
    assert_bf16_close(x.amax(0), t.amax(0))

# --- where torch keeps an intermediate in bfloat16 --------------------------------------------------------------

def test_log_softmax_rounds_once_where_torch_rounds_its_row_sum(device):
    """torch's bfloat16 log_softmax keeps the row's sum of exponentials, and its log, in bfloat16; ours keeps
    them in float32. Both recipes, written out in numpy, reproduce each library bit for bit, and ours is the
    closer to float64."""
    x, t = bf16_pair(uniform((64, 48)), device)
    v = to_numpy(x).astype(np.float32)
    r = lambda a: a.astype(BF16).astype(np.float32)
    shifted = v - v.max(1, keepdims=True)
    total = np.exp(shifted).sum(1, keepdims=True)
    assert_bf16_close(x.log_softmax(1), (shifted - np.log(total)).astype(BF16))
    assert_bf16_close(t.log_softmax(1), (shifted - r(np.log(r(total)))).astype(BF16))
    exact = torch.tensor(v, dtype=torch.float64).log_softmax(1).numpy()
    err = lambda y: np.abs(to_numpy(y).astype(np.float64) - exact).max()
    assert err(x.log_softmax(1)) < err(t.log_softmax(1))

def test_batch_norm_where_torch_rounds_its_statistics(device):
    """torch's bfloat16 batch_norm rounds the batch mean, variance and 1/std to bfloat16 before normalising;
    ours keeps them in float32 and rounds the output once, and is the closer to float64."""
    x, t = bf16_pair(uniform((64, 48)), device)
    ours, theirs = F.batch_norm(x, None, None, training=True), TF.batch_norm(t, None, None, training=True)
    v, r = to_numpy(x).astype(np.float32), (lambda a: a.astype(BF16).astype(np.float32))
    mu, var = r(v.mean(0)), r(v.var(0))
    assert_bf16_close(theirs, ((v - mu) * r(1 / np.sqrt(var + np.float32(1e-5)))).astype(BF16))
    once = ((v - v.mean(0)) / np.sqrt(v.var(0) + np.float32(1e-5))).astype(BF16)
    assert_bf16_close(ours, once, ulps=1)  # float32 statistics in another summation order
    v64 = v.astype(np.float64)
    exact = (v64 - v64.mean(0)) / np.sqrt(v64.var(0) + 1e-5)
    err = lambda y: np.abs(to_numpy(y).astype(np.float64) - exact).max()
    assert err(ours) < err(theirs)

def test_prod_where_torch_multiplies_in_bfloat16(device):
    "torch's bfloat16 prod rounds after every product; ours multiplies in float32 and rounds once."
    x, t = bf16_pair(uniform((16, 50), 0.9, 1.1), device)
    v, acc = to_numpy(x).astype(np.float32), np.ones(16, np.float32)
    for j in range(50): acc = (acc * v[:, j]).astype(BF16).astype(np.float32)
    assert_bf16_close(t.prod(1), acc.astype(BF16))  # torch: the sequential bfloat16 recipe, bit for bit
    assert_bf16_close(x.prod(1), v.astype(np.float64).prod(1).astype(np.float32).astype(BF16), ulps=1)
    exact = v.astype(np.float64).prod(1)
    err = lambda y: np.abs(to_numpy(y).astype(np.float64) - exact).max()
    assert err(x.prod(1)) < err(t.prod(1)) / 4

def test_composite_gradients_stay_as_close_to_float64_as_torch():
    """Where a gradient is a sum of cancelling terms (pow's exponent over broadcast rows, cosine_similarity),
    torch rounds each term to bfloat16 and ours sums in float32: the two differ, and ours is no farther from
    the float64 gradient than twice torch's."""
    rng = np.random.default_rng(0)
    cases = {"pow": ((lambda a, b: a ** b), rng.uniform(0.2, 2, (3, 4)), rng.uniform(-2, 2, 4), (3, 4)),
             "cosine_similarity": ((lambda a, b: (F if isinstance(a, mt.Tensor) else TF).cosine_similarity(a, b)),
                                   rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4)), (3,))}
    for name, (fn, a, b, out_shape) in cases.items():
        c = rng.standard_normal(out_shape).astype(np.float32).astype(BF16)
        grads = {}
        for lib in ("mt", "torch", "float64"):
            if lib == "mt": xs, cot = [mt.tensor(v.astype(BF16), requires_grad=True) for v in (a, b)], mt.tensor(c)
            else:
                dt = torch.bfloat16 if lib == "torch" else torch.float64
                xs = [torch.tensor(v.astype(BF16).astype(np.float32)).to(dt).requires_grad_() for v in (a, b)]
                cot = torch.tensor(c.astype(np.float32)).to(dt)
            (fn(*xs) * cot).sum().backward()
            grads[lib] = [to_numpy(v.grad).astype(np.float64) for v in xs]
        for i in range(2):
            err_ours = np.abs(grads["mt"][i] - grads["float64"][i]).max()
            err_torch = np.abs(grads["torch"][i] - grads["float64"][i]).max()
            assert err_ours <= 2 * err_torch, (name, i, err_ours, err_torch)

# --- state, modules, errors ---------------------------------------------------------------------------------

def test_state_dict_round_trip_keeps_bfloat16(tmp_path, device):
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 2)).to(device).bfloat16()
    state = model.state_dict()
    assert {v.dtype for v in state.values()} == {mt.bfloat16}
    mt.save(state, tmp_path / "m.pt")
    loaded = mt.load(tmp_path / "m.pt")
    fresh = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 2)).to(device).bfloat16()
    fresh.load_state_dict(loaded)
    for k, v in fresh.state_dict().items():
        assert v.dtype == mt.bfloat16 and to_numpy(v).tobytes() == to_numpy(state[k]).tobytes(), k
    x = mt.randn(3, 4, device=device).bfloat16()
    assert to_numpy(fresh(x)).tobytes() == to_numpy(model(x)).tobytes()
    again = pickle.loads(pickle.dumps(state["0.weight"]))
    assert again.dtype == mt.bfloat16 and to_numpy(again).tobytes() == to_numpy(state["0.weight"]).tobytes()

def test_float32_state_dict_loads_into_a_bfloat16_model_like_torch():
    "load_state_dict copies into the existing parameters: they stay bfloat16, the values rounded, as in torch."
    mt.manual_seed(0)
    src, dst = nn.Linear(5, 3), nn.Linear(5, 3).bfloat16()
    tdst = torch.nn.Linear(5, 3).bfloat16()
    dst.load_state_dict(src.state_dict())
    tdst.load_state_dict({k: torch.tensor(v.numpy()) for k, v in src.state_dict().items()})
    for (k, v), tv in zip(dst.state_dict().items(), tdst.state_dict().values()):
        assert_bf16_close(v, tv, err_msg=k)

@pytest.mark.parametrize("bad", ["matmul_mixed", "bitwise_and", "linear_mixed"])
def test_errors_like_torch(bad, device):
    (x, t), (w, wt) = bf16_pair(uniform((2, 3)), device), bf16_pair(uniform((3, 3)), device)
    ours_fn, theirs_fn = {
        "matmul_mixed": (lambda: x @ w.float(), lambda: t @ wt.float()),
        "bitwise_and": (lambda: x & x, lambda: t & t),
        "linear_mixed": (lambda: F.linear(x, w.float()), lambda: TF.linear(t, wt.float())),
    }[bad]
    with pytest.raises(Exception) as theirs:
        theirs_fn()
    with pytest.raises(type(theirs.value)):
        ours_fn()

# --- optimizers on bfloat16 parameters ------------------------------------------------------------------------

def optimizer_runs(name, kw, device, steps=3):
    "The same bfloat16 parameter and gradients through `steps` steps of ours, torch's, and torch's in float64."
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(1000).astype(np.float32).astype(BF16)
    grads = [rng.standard_normal(1000).astype(np.float32).astype(BF16) for _ in range(steps)]
    p = mt.tensor(w0, device=device, requires_grad=True)
    q = torch.tensor(w0.astype(np.float32)).bfloat16().requires_grad_()
    q64 = torch.tensor(w0.astype(np.float64), requires_grad=True)
    opts = getattr(mt.optim, name)([p], **kw), getattr(torch.optim, name)([q], **kw), getattr(torch.optim, name)([q64], **kw)
    for g in grads:
        p.grad = mt.tensor(g, device=device)
        q.grad, q64.grad = torch.tensor(g.astype(np.float32)).bfloat16(), torch.tensor(g.astype(np.float64))
        for o in opts: o.step()
    return p, q, q64, opts[0].state.get(p, {}), opts[1].state.get(q, {})

def test_sgd_step_on_bfloat16_parameters_is_torchs(device):
    "x - lr·g in float32, rounded once: torch's too (a learning rate that bfloat16 holds exactly: torch rounds it)."
    p, q, *_ = optimizer_runs("SGD", dict(lr=0.125), device)
    assert_bf16_close(p, q)

@pytest.mark.parametrize("name, kw", [("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True,
                                                                                weight_decay=0.01)),
                                      ("Adam", dict(lr=1e-2)), ("AdamW", dict(lr=1e-2, weight_decay=0.1)),
                                      ("RMSprop", dict(lr=1e-2))])
def test_optimizers_on_bfloat16_parameters_like_torch(name, kw, device):
    """The state stays bfloat16, as torch keeps it. The update is float32 maths rounded once per stored tensor
    (numpy's bfloat16 arithmetic would round after every operation); torch rounds after each of its foreach
    ops and rounds the learning rate itself: ours is never farther from the float64 run."""
    p, q, q64, state, tstate = optimizer_runs(name, kw, device)
    assert p.dtype == mt.bfloat16 and {k: str(v.dtype) for k, v in state.items() if k != "step"} == \
        {k: str(v.dtype).replace("torch.", "") for k, v in tstate.items() if k != "step"}
    exact = q64.detach().numpy()
    err = lambda t: np.abs(to_numpy(t).astype(np.float64) - exact).max()
    assert err(p) <= err(q) + bf16_ulp(np.abs(exact).max()), (err(p), err(q))

@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_of_bfloat16_gradients_like_torch(norm_type, device):
    "The total norm sums in float32, not in bfloat16 (where 4000 squares would stall), and comes back bfloat16."
    grads = [uniform(s, seed=i).astype(BF16) for i, s in enumerate(((40, 50), (2000,)))]
    ours = [mt.zeros(*g.shape, dtype=mt.bfloat16, device=device, requires_grad=True) for g in grads]
    theirs = [torch.zeros(g.shape, dtype=torch.bfloat16, requires_grad=True) for g in grads]
    for o, t, g in zip(ours, theirs, grads):
        o.grad, t.grad = mt.tensor(g, device=device), torch.tensor(g.astype(np.float32)).bfloat16()
    total, ttotal = (mt.nn.utils.clip_grad_norm_(ours, 1.0, norm_type),
                     torch.nn.utils.clip_grad_norm_(theirs, 1.0, norm_type))
    # torch rounds each gradient's norm to bfloat16 before the total: one step apart at most
    assert_bf16_close(total, ttotal, ulps=1)
    for o, t in zip(ours, theirs): assert_bf16_close(o.grad, t.grad, ulps=1)

def test_from_numpy_refuses_a_bfloat16_array_like_torch():
    "torch.from_numpy and as_tensor know no ml_dtypes array: TypeError in both (mt.tensor copies one, though)."
    a = np.ones(2, BF16)
    for ours, theirs in ((mt.from_numpy, torch.from_numpy), (mt.as_tensor, torch.as_tensor)):
        with pytest.raises(TypeError): theirs(a)
        with pytest.raises(TypeError, match="bfloat16"): ours(a)
    assert mt.tensor(a).dtype == mt.bfloat16

def test_grad_scaler_on_a_bfloat16_model_like_torch(device):
    "bfloat16 needs no scaler, but one works as torch's does: unscaled bfloat16 gradients, the same steps."
    mt.manual_seed(0)
    lin, tlin = nn.Linear(4, 2), torch.nn.Linear(4, 2)
    tlin.load_state_dict({k: torch.tensor(v.numpy()) for k, v in lin.state_dict().items()})
    lin.to(device).bfloat16(); tlin.bfloat16()
    opt, topt = mt.optim.SGD(lin.parameters(), lr=0.125), torch.optim.SGD(tlin.parameters(), lr=0.125)
    sc, tsc = mt.amp.GradScaler("cpu"), torch.amp.GradScaler("cpu")
    x = uniform((3, 4))
    for _ in range(3):
        opt.zero_grad(); topt.zero_grad()
        sc.scale(lin(mt.tensor(x, device=device).bfloat16()).float().sum()).backward()
        tsc.scale(tlin(torch.tensor(x).bfloat16()).float().sum()).backward()
        sc.step(opt); tsc.step(topt); sc.update(); tsc.update()
    assert sc.get_scale() == tsc.get_scale()
    for p, q in zip(lin.parameters(), tlin.parameters()): assert_bf16_close(p, q)
