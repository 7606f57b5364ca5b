"""Chapter 01's elementwise maths against PyTorch: the inverse trigonometric and hyperbolic functions, rounding,
exp2, erf/erfinv, copysign, logaddexp(2), remainder/fmod/floor_divide and the `%` and `//` operators, lerp,
nan_to_num and the logical ops. Values, dtypes and gradients on broadcast and non-contiguous inputs, in float32
and float64, on every device ("cuda" in Numba's simulator, in a child process: see the last test); exception
types; edge values (zeros of both signs, infinities, NaN, domain edges); finite differences in float64."""
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path
import numpy as np
import pytest
import torch
import minitorch_nb as mt

ON_SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"  # the child process of test_cuda_simulator
DEVICES = ["cuda"] if ON_SIMULATOR else [d for d in ("numpy", "cpu") if d in mt.autograd.available_devices()]
# the simulator runs every kernel thread in Python: there one dtype and one broadcast shape cover the kernels
FLOATS = [np.float32] if ON_SIMULATOR else [np.float32, np.float64]
BINARY_SHAPES = [(3, 1)] if ON_SIMULATOR else [(4,), (3, 1), (1, 4)]
TORCH_DTYPE = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
               np.dtype(np.int64): torch.int64, np.dtype(np.bool_): torch.bool}
TOL = {np.dtype(np.float32): dict(rtol=2e-5, atol=1e-6), np.dtype(np.float64): dict(rtol=1e-12, atol=1e-13)}

# name: (a sampler of inputs inside the domain, d/dx is tested against torch)
UNARY = {
    "asin": lambda r, n: r.uniform(-0.95, 0.95, n), "acos": lambda r, n: r.uniform(-0.95, 0.95, n),
    "atan": lambda r, n: r.normal(0, 2, n), "asinh": lambda r, n: r.normal(0, 3, n),
    "acosh": lambda r, n: r.uniform(1.1, 5, n), "atanh": lambda r, n: r.uniform(-0.95, 0.95, n),
    "exp2": lambda r, n: r.normal(0, 3, n), "trunc": lambda r, n: r.normal(0, 3, n),
    "frac": lambda r, n: r.normal(0, 3, n), "erf": lambda r, n: r.normal(0, 1.5, n),
    "erfinv": lambda r, n: r.uniform(-0.99, 0.99, n), "sign": lambda r, n: r.normal(0, 2, n),
    "floor": lambda r, n: r.normal(0, 3, n), "ceil": lambda r, n: r.normal(0, 3, n), "round": lambda r, n: r.normal(0, 3, n),
    "isnan": lambda r, n: r.normal(0, 3, n), "isinf": lambda r, n: r.normal(0, 3, n), "isfinite": lambda r, n: r.normal(0, 3, n),
    "nan_to_num": lambda r, n: r.normal(0, 3, n), "logical_not": lambda r, n: r.integers(-1, 2, n).astype(float)}
ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
           "arctanh": "atanh", "fix": "trunc", "arctan2": "atan2"}
# name: (sampler of the divisor-like second input); the first input is normal(0, 3)
BINARY = {
    "atan2": lambda r, n: r.normal(0, 2, n), "copysign": lambda r, n: r.normal(0, 2, n),
    "logaddexp": lambda r, n: r.normal(0, 3, n), "logaddexp2": lambda r, n: r.normal(0, 3, n),
    "remainder": lambda r, n: r.choice([-1, 1], n) * r.uniform(0.3, 2, n),
    "fmod": lambda r, n: r.choice([-1, 1], n) * r.uniform(0.3, 2, n),
    "floor_divide": lambda r, n: r.choice([-1, 1], n) * r.uniform(0.3, 2, n),
    "logical_and": lambda r, n: r.integers(-1, 2, n).astype(float),
    "logical_or": lambda r, n: r.integers(-1, 2, n).astype(float),
    "logical_xor": lambda r, n: r.integers(-1, 2, n).astype(float)}
NO_TORCH_GRAD = {"floor_divide"}  # torch: "derivative for aten::floor_divide is not implemented"; ours is zero
# erf and erfinv are Chebyshev series and Newton steps: hundreds of kernel launches, minutes each in the simulator
# (which runs every GPU thread in Python). They are Array API code like the rest, checked on "numpy" and "cpu".
SLOW_ON_SIMULATOR = {"erf", "erfinv"}
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -3.0, 1e-30, 40.0, math.inf, -math.inf, math.nan]


def ours(t, device): return mt.tensor(t.detach().numpy(), device=device)
def numpy_of(x): return np.asarray((x.detach() if isinstance(x, mt.Tensor) else x).to("numpy").numpy())


def assert_like_torch(got, want, what, tol=None, signed_zeros=True):
    """Same shape and dtype as torch's result; values close (NaN where torch has NaN, zeros with torch's sign,
    except in gradients: grad * 0 is -0.0 for a negative grad, and PyTorch's zero gradients are +0.0)."""
    if not isinstance(want, torch.Tensor):
        return np.testing.assert_allclose(got, want, err_msg=what)
    g, w = numpy_of(got), want.detach().numpy()
    assert g.shape == w.shape, f"{what}: shape {g.shape}, torch {w.shape}"
    assert TORCH_DTYPE[g.dtype] == want.dtype, f"{what}: dtype {g.dtype}, torch {want.dtype}"
    if w.dtype.kind != "f": return np.testing.assert_array_equal(g, w, err_msg=what)
    np.testing.assert_allclose(g, w, equal_nan=True, err_msg=what, **(tol or TOL[g.dtype]))
    if not signed_zeros: return
    zeros = w == 0
    np.testing.assert_array_equal(np.signbit(g[zeros]), np.signbit(w[zeros]), err_msg=f"{what}: signed zeros")


def call(lib, name, *args):
    "lib.name(*args) for mt or torch, torch's numbers as Python numbers."
    return getattr(lib, name)(*args)


def strided(rng, sampler, dtype, device):
    "A (3, 4) non-contiguous view (every other column of a (4, 6), transposed) for both libraries, with a gradient."
    base = sampler(rng, (4, 6)).astype(dtype)
    t = torch.tensor(base)[:, ::2].T.detach().requires_grad_()
    m = mt.tensor(base, device=device)[:, ::2].T.detach().requires_grad_()
    return m, t


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_and_gradients_like_torch(name, dtype, device):
    if device == "cuda" and name in SLOW_ON_SIMULATOR: pytest.skip("too slow for the CUDA simulator")
    rng = np.random.default_rng(sorted(UNARY).index(name))
    m, t = strided(rng, UNARY[name], dtype, device)
    got, want = getattr(m, name)(), getattr(t, name)()
    assert_like_torch(got, want, f"{name} on {device}")
    assert_like_torch(call(mt, name, m), want, f"mt.{name} on {device}")
    if not want.requires_grad: return  # bool results are never in the graph
    g = rng.standard_normal(want.shape).astype(dtype)
    want.backward(torch.tensor(g))
    got.backward(mt.tensor(g, device=device))
    assert m.grad.device == device
    assert_like_torch(m.grad, t.grad, f"d {name} on {device}", signed_zeros=False)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", BINARY_SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values_and_gradients_like_torch(name, shape, dtype, device):
    "a: a (3, 4) view; b broadcast against it from `shape`, on either side."
    rng = np.random.default_rng(sorted(BINARY).index(name))
    ma, ta = strided(rng, lambda r, n: r.normal(0, 3, n), dtype, device)
    base = BINARY[name](rng, shape).astype(dtype)
    tb, mb = torch.tensor(base, requires_grad=True), mt.tensor(base, device=device, requires_grad=True)
    for swap in (False, True):
        x, y, tx, ty = (mb, ma, tb, ta) if swap else (ma, mb, ta, tb)
        got, want = getattr(x, name)(y), getattr(tx, name)(ty)
        what = f"{name}({'b, a' if swap else 'a, b'}) on {device}, b of shape {shape}"
        assert_like_torch(got, want, what)
        assert_like_torch(call(mt, name, x, y), want, "mt." + what)
        if not want.requires_grad or name in NO_TORCH_GRAD: continue
        for p in (ma, mb, ta, tb): p.grad = None
        g = rng.standard_normal(want.shape).astype(dtype)
        want.backward(torch.tensor(g))
        got.backward(mt.tensor(g, device=device))
        assert_like_torch(ma.grad, ta.grad, "d/da " + what, signed_zeros=False)
        assert_like_torch(mb.grad, tb.grad, "d/db " + what, signed_zeros=False)


@pytest.mark.parametrize("device", DEVICES)
def test_floor_divide_gradient_is_zero(device):
    a = mt.tensor([2.5, -2.5], device=device, requires_grad=True)
    (a // 2).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("weight", ["number", "tensor"])
def test_lerp_like_torch(weight, dtype, device):
    rng = np.random.default_rng(1)
    ms, ts = strided(rng, lambda r, n: r.normal(0, 2, n), dtype, device)
    e = rng.normal(0, 2, (4,)).astype(dtype)
    te, me = torch.tensor(e, requires_grad=True), mt.tensor(e, device=device, requires_grad=True)
    for w in ([0.3, 0.75, 1.0, -0.6] if weight == "number" else [rng.uniform(-1, 2, (3, 1)).astype(dtype)]):
        tw = w if weight == "number" else torch.tensor(w, requires_grad=True)
        mw = w if weight == "number" else mt.tensor(w, device=device, requires_grad=True)
        for p in (ms, me, ts, te): p.grad = None
        got, want = ms.lerp(me, mw), torch.lerp(ts, te, tw)
        assert_like_torch(got, want, f"lerp weight {w}")
        assert_like_torch(mt.lerp(ms, me, mw), want, f"mt.lerp weight {w}")
        g = rng.standard_normal((3, 4)).astype(dtype)
        want.backward(torch.tensor(g))
        got.backward(mt.tensor(g, device=device))
        assert_like_torch(ms.grad, ts.grad, "d/dstart", signed_zeros=False)
        assert_like_torch(me.grad, te.grad, "d/dend", signed_zeros=False)
        if weight == "tensor": assert_like_torch(mw.grad, tw.grad, "d/dweight", signed_zeros=False)
    one = mt.tensor([2.0, -7.0], device=device).lerp(mt.tensor([1e8, 3.0], device=device), 1.0)
    assert one.tolist() == [1e8, 3.0]  # exactly `end` at weight 1, as in PyTorch


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
def test_nan_to_num_defaults_and_arguments_like_torch(dtype, device):
    base = np.array([math.nan, math.inf, -math.inf, 1.5, -0.0]) if np.dtype(dtype).kind == "f" else np.array([0, 3, -2])
    base = base.astype(dtype)
    for kwargs in ({}, dict(nan=1.0), dict(nan=-2.0, posinf=7.0, neginf=-9.0), dict(posinf=1e300)):
        t, m = torch.tensor(base), mt.tensor(base, device=device)
        assert_like_torch(m.nan_to_num(**kwargs), torch.nan_to_num(t, **kwargs), f"nan_to_num({kwargs})")
        assert_like_torch(mt.nan_to_num(m, **kwargs), torch.nan_to_num(t, **kwargs), f"mt.nan_to_num({kwargs})")
    if np.dtype(dtype).kind != "f": return
    t, m = torch.tensor(base, requires_grad=True), mt.tensor(base, device=device, requires_grad=True)
    torch.nan_to_num(t).sum().backward()
    m.nan_to_num().sum().backward()
    assert_like_torch(m.grad, t.grad, "d nan_to_num", signed_zeros=False)


# ---------------------------------------------------------------------------------------------- dtypes, errors

def torch_says(fn):
    "fn() or the exception class it raised, warnings silenced."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try: return fn()
        except Exception as e: return type(e)


OPERANDS = {"int64": lambda lib: lib.tensor([3, -3, 4]), "bool": lambda lib: lib.tensor([True, False, True]),
            "float32": lambda lib: lib.tensor([1.5, -2.5, 0.5]),
            "float64": lambda lib: lib.tensor([1.5, -2.5, 0.5], dtype=lib.float64),
            "int64 0-d": lambda lib: lib.tensor(2), "float64 0-d": lambda lib: lib.tensor(2.0, dtype=lib.float64),
            "2": lambda lib: 2, "2.5": lambda lib: 2.5}
TENSOR_OPERANDS = [k for k in OPERANDS if k not in ("2", "2.5")]


def same_outcome(mine, theirs, what):
    if isinstance(theirs, type):
        assert isinstance(mine, type) and issubclass(mine, theirs), f"{what}: torch raises {theirs.__name__}, we gave {mine}"
        return
    assert not isinstance(mine, type), f"{what}: we raised {mine.__name__}, torch gave {theirs}"
    assert_like_torch(mine, theirs, what, tol=dict(rtol=1e-6, atol=1e-6))


@pytest.mark.parametrize("name", sorted(set(UNARY) | set(ALIASES) - {"arctan2"}))
@pytest.mark.parametrize("operand", TENSOR_OPERANDS)
def test_unary_dtypes_and_errors_like_torch(name, operand):
    "Integer and bool inputs: promoted to float32, kept, or refused with torch's exception type."
    mine = torch_says(lambda: getattr(OPERANDS[operand](mt), name)())
    theirs = torch_says(lambda: getattr(OPERANDS[operand](torch), name)())
    same_outcome(mine, theirs, f"{name}({operand})")


@pytest.mark.parametrize("name", sorted(BINARY) + ["arctan2"])
@pytest.mark.parametrize("left", TENSOR_OPERANDS)
@pytest.mark.parametrize("right", list(OPERANDS))
def test_binary_dtypes_and_errors_like_torch(name, left, right):
    "Every pair of dtypes and Python numbers: the result dtype, or torch's exception type (TypeError for a number "
    "where torch wants a tensor, NotImplementedError for a dtype it has no kernel for)."
    mine = torch_says(lambda: getattr(OPERANDS[left](mt), name)(OPERANDS[right](mt)))
    theirs = torch_says(lambda: getattr(OPERANDS[left](torch), name)(OPERANDS[right](torch)))
    same_outcome(mine, theirs, f"{name}({left}, {right})")


@pytest.mark.parametrize("op", ["%", "//", "%=", "//="])
@pytest.mark.parametrize("left", list(OPERANDS))
@pytest.mark.parametrize("right", list(OPERANDS))
def test_operators_like_torch(op, left, right):
    if left in ("2", "2.5") and right in ("2", "2.5"): pytest.skip("two Python numbers: Python's own operator")
    if op.endswith("=") and left in ("2", "2.5"): pytest.skip("in place on a number rebinds the name")
    def run(lib):
        a, b = OPERANDS[left](lib), OPERANDS[right](lib)
        if op == "%": return a % b
        if op == "//": return a // b
        if op == "%=": a %= b
        else: a //= b
        return a
    mine, theirs = torch_says(lambda: run(mt)), torch_says(lambda: run(torch))
    same_outcome(mine, theirs, f"{left} {op} {right}")


@pytest.mark.parametrize("device", DEVICES)
def test_integer_division_by_zero_raises_like_torch(device):
    a, z = mt.tensor([5, -5], device=device), mt.tensor([2, 0], device=device)
    for fn in (lambda lib, a, z: a % z, lambda lib, a, z: a // z, lambda lib, a, z: a.fmod(z),
               lambda lib, a, z: a.remainder(0), lambda lib, a, z: a // 0, lambda lib, a, z: lib.floor_divide(a, z),
               lambda lib, a, z: lib.remainder(5, z), lambda lib, a, z: lib.fmod(a, 0)):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"): fn(mt, a, z)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"): fn(torch, torch.tensor([5, -5]), torch.tensor([2, 0]))
    f = mt.tensor([5.0, -5.0, 0.0], device=device)
    assert_like_torch(f % 0.0, torch.tensor([5.0, -5.0, 0.0]) % 0.0, "float % 0")
    assert_like_torch(f // 0.0, torch.tensor([5.0, -5.0, 0.0]) // 0.0, "float // 0")


def test_sign_conventions_of_the_remainders():
    "remainder and % follow the divisor (Python's %), fmod the dividend (C's fmod), as in PyTorch."
    a, b = [-7, 7, -7, 7, -6, 6], [3, 3, -3, -3, 3, -3]
    for lib_a, lib_b in ((mt.tensor(a), mt.tensor(b)), (mt.tensor(a, dtype=mt.float64), mt.tensor(b, dtype=mt.float64))):
        assert (lib_a % lib_b).tolist() == [x % y for x, y in zip(a, b)]
        assert lib_a.fmod(lib_b).tolist() == [math.fmod(x, y) for x, y in zip(a, b)]
        assert (lib_a // lib_b).tolist() == [x // y for x, y in zip(a, b)]
    assert (5 % mt.tensor([3, -3])).tolist() == [2, -1] and (7.5 // mt.tensor([2])).tolist() == [3.0]


def test_other_exception_types_like_torch():
    f, i = mt.tensor([0.5, -0.5]), mt.tensor([1, 2])
    cases = [
        (lambda lib, x: lib.asin(0.5), "asin of a number"),
        (lambda lib, x: lib.atan2(x, 2.5), "atan2 with a number"),
        (lambda lib, x: lib.logaddexp(x, 1.0), "logaddexp with a number"),
        (lambda lib, x: lib.lerp(x, x.double(), 0.5), "lerp of mixed dtypes"),
        (lambda lib, x: lib.lerp(x, x, x.double()), "lerp with a weight of another dtype"),
        (lambda lib, x: lib.lerp(lib.tensor([1, 2]), lib.tensor([1, 2]), 0.5), "lerp of integers"),
        (lambda lib, x: lib.frac(lib.tensor([1, 2])), "frac of integers"),
        (lambda lib, x: lib.logaddexp(lib.tensor([1]), lib.tensor([2])), "logaddexp of integers"),
        (lambda lib, x: lib.tensor([True]) % lib.tensor([True]), "bool % bool"),
        (lambda lib, x: lib.trunc(lib.tensor([True])), "trunc of bools"),
        (lambda lib, x: lib.fmod(2, x), "fmod of a number"),
        (lambda lib, x: lib.logical_and(x, 1), "logical_and with a number"),
    ]
    for fn, what in cases:
        theirs = torch_says(lambda: fn(torch, torch.tensor([0.5, -0.5])))
        assert isinstance(theirs, type), f"{what}: torch does not raise"
        mine = torch_says(lambda: fn(mt, f))
        assert isinstance(mine, type) and issubclass(mine, theirs), f"{what}: torch raises {theirs.__name__}, we gave {mine}"
    assert i.trunc().dtype == mt.int64 and i.fix().tolist() == [1, 2]


# ---------------------------------------------------------------------------------------------- edge values

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_edge_values_like_torch(name, dtype, device):
    "0, -0, ±1 (the domain edges of asin, acosh, atanh, erfinv), ±inf, NaN and tiny and large numbers."
    if device == "cuda" and name in SLOW_ON_SIMULATOR: pytest.skip("too slow for the CUDA simulator")
    base = np.array(SPECIAL + [1.0 + 1e-7, -1.0 - 1e-7, 0.9999999, 200.0], dtype)
    t, m = torch.tensor(base, requires_grad=True), mt.tensor(base, device=device, requires_grad=True)
    want, got = getattr(t, name)(), getattr(m, name)()
    assert_like_torch(got, want, f"{name} of edge values on {device}")
    if not want.requires_grad: return
    want.sum().backward()
    got.sum().backward()
    assert_like_torch(m.grad, t.grad, f"d {name} at edge values on {device}", signed_zeros=False)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_edge_values_like_torch(name, dtype, device):
    "Every pair of edge values (signed zeros, infinities, NaN, a divisor of 0): values and both gradients."
    a = np.array(SPECIAL, dtype)[:, None].repeat(len(SPECIAL), 1)
    b = a.T.copy()
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ma, mb = mt.tensor(a, device=device, requires_grad=True), mt.tensor(b, device=device, requires_grad=True)
    want, got = getattr(ta, name)(tb), getattr(ma, name)(mb)
    assert_like_torch(got, want, f"{name} of edge values on {device}")
    if not want.requires_grad or name in NO_TORCH_GRAD: return
    want.sum().backward()
    got.sum().backward()
    assert_like_torch(ma.grad, ta.grad, f"d/da {name} at edge values on {device}", signed_zeros=False)
    assert_like_torch(mb.grad, tb.grad, f"d/db {name} at edge values on {device}", signed_zeros=False)


def test_erfinv_is_accurate_to_roundoff_on_the_whole_interval():
    "Against torch.erfinv (itself within 2e-16 of the exact values) on a fine grid and up to the last float64 below 1."
    ys = np.concatenate([np.linspace(-1, 1, 100001)[1:-1], 1 - np.logspace(-16, -1, 1000),
                         -1 + np.logspace(-16, -1, 1000), [np.nextafter(1.0, 0.0), np.nextafter(-1.0, 0.0), 5e-324]])
    for device in DEVICES:
        got = mt.tensor(ys, device=device).erfinv().numpy()
        want = torch.erfinv(torch.tensor(ys)).numpy()
        worst = np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300))
        assert worst < 2e-15, f"erfinv on {device}: relative error {worst:.1e} against torch"
    assert mt.tensor([1.0, -1.0, 1.5, math.nan]).erfinv().tolist()[:2] == [math.inf, -math.inf]


# ---------------------------------------------------------------------------------------------- finite differences

GRADCHECK = {  # functions of float64 inputs away from kinks and jumps
    "asin": lambda x: x.tanh().asin(), "acos": lambda x: x.tanh().acos(), "atan": lambda x: x.atan(),
    "asinh": lambda x: x.asinh(), "acosh": lambda x: (x * x + 1.2).acosh(), "atanh": lambda x: (x.tanh() * 0.9).atanh(),
    "exp2": lambda x: x.exp2(), "frac": lambda x: x.frac(), "erfinv": lambda x: (x.tanh() * 0.95).erfinv(),
    "erf": lambda x: x.erf(), "nan_to_num": lambda x: x.nan_to_num(),
    "atan2": lambda x, y: x.atan2(y), "copysign": lambda x, y: x.copysign(y), "logaddexp": lambda x, y: x.logaddexp(y),
    "logaddexp2": lambda x, y: x.logaddexp2(y), "remainder": lambda x, y: x.remainder(y), "fmod": lambda x, y: x.fmod(y),
    "%": lambda x, y: x % y, "lerp": lambda x, y: x.lerp(y, (x * y).tanh()),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradients_by_finite_differences(name, device):
    rng = np.random.default_rng(len(name))
    fn = GRADCHECK[name]
    n_args = fn.__code__.co_argcount
    x = rng.normal(0, 1.5, (3, 4))
    x[np.abs(x - np.round(x)) < 0.05] += 0.1  # away from the jumps of frac
    inputs = [mt.tensor(x, device=device)[:, ::-1].requires_grad_()]  # a non-contiguous view
    if n_args == 2:
        y = rng.choice([-1, 1], (4,)) * rng.uniform(0.5, 2, (4,))
        q = x / y
        y = np.where(np.abs(q - np.round(q)) < 0.05, y * 1.1, y)  # away from the jumps of remainder and fmod
        inputs.append(mt.tensor(y, device=device, requires_grad=True))
    assert mt.ops.gradcheck(fn, *inputs)


# ---------------------------------------------------------------------------------------------- spellings

def test_names_are_pytorchs_and_aliases_are_one_object():
    for name in sorted(set(UNARY) | set(BINARY) | set(ALIASES) | {"lerp", "remainder"}):
        assert hasattr(torch, name) and hasattr(torch.Tensor, name), name
        assert callable(getattr(mt, name)) and callable(getattr(mt.Tensor, name)), name
    for alias, name in ALIASES.items():
        assert getattr(mt.Tensor, alias) is getattr(mt.Tensor, name), alias
    x = mt.tensor([0.25, -0.5])
    assert mt.arcsin(input=x).tolist() == x.asin().tolist() and mt.remainder(5, mt.tensor([3])).tolist() == [2]
    assert mt.atan2(x, other=x).tolist() == x.atan2(x).tolist()


def test_warnings_stay_silent():
    "Outside the domain the result is NaN or inf, as in PyTorch, without numpy's RuntimeWarnings."
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mt.tensor([2.0, -3.0]).asin(); mt.tensor([0.5]).acosh(); mt.tensor([1.0]).atanh()
        mt.tensor([1.0]) % 0.0; mt.tensor([1.0]) // 0.0; mt.tensor([1.0]).fmod(0.0); mt.tensor([1e4]).exp2()
        mt.tensor([1.0, 2.0]).erfinv()


# ---------------------------------------------------------------------------------------------- cuda

@pytest.mark.skipif(ON_SIMULATOR, reason="this is the parent process")
def test_this_file_on_cuda_in_the_simulator():
    "Every test above once more, on device 'cuda' in Numba's CUDA simulator (set before Numba loads: a child process)."
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    tests = ["test_unary_values_and_gradients_like_torch", "test_binary_values_and_gradients_like_torch",
             "test_lerp_like_torch", "test_nan_to_num_defaults_and_arguments_like_torch",
             "test_integer_division_by_zero_raises_like_torch", "test_unary_edge_values_like_torch",
             "test_binary_edge_values_like_torch", "test_floor_divide_gradient_is_zero"]  # not the float64
    # finite differences: their many forward passes are slow in the simulator, and they check formulas, not devices
    result = subprocess.run([sys.executable, "-m", "pytest", __file__, "-q", "-x", "-p", "no:cacheprovider",
                             "-k", " or ".join(tests)], env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and " failed" not in result.stdout
