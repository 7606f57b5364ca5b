"""Chapter 05's op table, row by row: every op against numpy on every device (values and dtypes, broadcast and
non-contiguous inputs, inf, nan and signed zeros), every backend's kernel table covering every row, and the one
way a backend's shortcut declines (NotImplemented)."""
import warnings
import numpy as np
import pytest
import minitorch_nb as mt
from minitorch_nb import ndarray as nd
from minitorch_nb.ndarray import OPS, NDArray

# One test row per op of the table: the inputs it is checked on, and its Tensor-level spelling (chapter 01's
# Function, None where chapter 01 has none yet). Inputs: "any" = floats with inf, nan and zeros, integers
# (with zeros), bools; "power" = the same, but integer exponents are never negative (numpy refuses those).
TEST_ROWS = {
    "negative": ("any", lambda t: -t),
    "positive": ("any", None),
    "abs": ("any", lambda t: t.abs()),
    "exp": ("any", lambda t: t.exp()),
    "expm1": ("any", None),
    "log": ("any", lambda t: t.log()),
    "log1p": ("any", None),
    "log2": ("any", None),
    "log10": ("any", None),
    "sin": ("any", lambda t: t.sin()),
    "cos": ("any", lambda t: t.cos()),
    "tan": ("any", None),
    "sinh": ("any", None),
    "cosh": ("any", None),
    "tanh": ("any", lambda t: t.tanh()),
    "sqrt": ("any", lambda t: t.sqrt()),
    "square": ("any", None),
    "sign": ("any", None),
    "floor": ("any", None),
    "ceil": ("any", None),
    "rint": ("any", None),
    "logical_not": ("any", lambda t: t.logical_not()),
    "arcsin": ("any", lambda t: t.asin()),
    "arccos": ("any", lambda t: t.acos()),
    "arctan": ("any", lambda t: t.atan()),
    "arcsinh": ("any", lambda t: t.asinh()),
    "arccosh": ("any", lambda t: t.acosh()),
    "arctanh": ("any", lambda t: t.atanh()),
    "trunc": ("any", lambda t: t.trunc()),
    "exp2": ("any", lambda t: t.exp2()),
    "isnan": ("any", None),
    "isinf": ("any", None),
    "isfinite": ("any", None),
    "invert": ("any", lambda t: ~t),
    "add": ("any", lambda a, b: a + b),
    "subtract": ("any", lambda a, b: a - b),
    "multiply": ("any", lambda a, b: a * b),
    "divide": ("any", lambda a, b: a / b),
    "power": ("power", lambda a, b: a ** b),
    "maximum": ("any", lambda a, b: a.maximum(b)),
    "minimum": ("any", lambda a, b: a.minimum(b)),
    "floor_divide": ("any", lambda a, b: a // b),
    "remainder": ("any", None),  # Tensor % follows PyTorch: a zero result has a's sign (tests/test_elementwise_api.py)
    "arctan2": ("any", lambda a, b: a.atan2(b)),
    "fmod": ("any", lambda a, b: a.fmod(b)),
    "copysign": ("any", lambda a, b: a.copysign(b)),
    "logaddexp": ("any", lambda a, b: a.logaddexp(b)),
    "logaddexp2": ("any", lambda a, b: a.logaddexp2(b)),
    "equal": ("any", lambda a, b: a == b),
    "not_equal": ("any", lambda a, b: a != b),
    "less": ("any", lambda a, b: a < b),
    "less_equal": ("any", lambda a, b: a <= b),
    "greater": ("any", lambda a, b: a > b),
    "greater_equal": ("any", lambda a, b: a >= b),
    "logical_and": ("any", lambda a, b: a.logical_and(b)),
    "logical_or": ("any", lambda a, b: a.logical_or(b)),
    "logical_xor": ("any", lambda a, b: a.logical_xor(b)),
    "bitwise_and": ("any", lambda a, b: a & b),
    "bitwise_or": ("any", lambda a, b: a | b),
    "bitwise_xor": ("any", lambda a, b: a ^ b),
    "sum": ("any", lambda t: t.sum(1)),
    "prod": ("any", None),
    "max": ("any", lambda t: t.max(1).values),
    "min": ("any", lambda t: t.min(1).values),
    "any": ("any", lambda t: t.any(1)),
    "all": ("any", lambda t: t.all(1)),
}
ROWS = sorted(OPS)
DTYPES = [np.float32, np.float64, np.int64, np.bool_]
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 100.0, -1000.0]
TOL = {np.dtype(np.float16): dict(rtol=2e-3, atol=2e-3), np.dtype(np.float32): dict(rtol=1e-5, atol=1e-5),
       np.dtype(np.float64): dict(rtol=1e-12, atol=1e-12)}  # float16: numpy's result for bool inputs of exp, sin, ...
NDARRAY_DEVICES = ["strided", "python", "cpu", "cpu kernels"]


def values(rng, shape, dtype, exponent=False):
    "Inputs of `dtype`: floats hold every special value, integers hold zeros (exponents: 0..4), bools both values."
    dtype = np.dtype(dtype)
    if dtype == np.bool_: return rng.random(shape) < 0.5
    if dtype.kind == "i": return rng.integers(0 if exponent else -4, 5, shape).astype(dtype)
    v = (rng.standard_normal(shape) * 2).astype(dtype).reshape(-1)
    v[:len(SPECIAL)] = np.array(SPECIAL, dtype)[:v.size]
    return rng.permutation(v).reshape(shape)


def numpy_says(fn):
    "fn() with numpy's warnings silenced: the value, or the exception class numpy raised."
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try: return fn()
        except (TypeError, ValueError) as e: return type(e)


def assert_same(ours, want, what):
    "Same dtype, same values (floats: nan where numpy has nan, infinities of the same sign, close elsewhere)."
    if isinstance(want, type):  # numpy refused (e.g. a bitwise op on floats): we refuse with the same error
        assert ours is want, f"{what}: numpy raises {want.__name__}, we gave {ours}"
        return
    assert not isinstance(ours, type), f"{what}: we raised {ours.__name__}, numpy did not"
    got = ours.to_numpy() if isinstance(ours, NDArray) else np.asarray(ours.detach().to("numpy").numpy())
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, numpy gives {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, numpy gives {want.shape}"
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, equal_nan=True, err_msg=what, **TOL[want.dtype])
        zeros = want == 0
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]), err_msg=f"{what}: signed zeros")
    else: np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.fixture
def on_device(request):
    "The NDArray device a test runs on; 'cpu kernels' is device 'cpu' with its numpy fast paths off."
    name = request.param
    if name.startswith("cpu") and "cpu" not in nd.BACKENDS: pytest.skip("chapter 06 registers device 'cpu'")
    if name != "cpu kernels":
        yield name
        return
    backend = nd.get_backend("cpu")
    old, backend.fast_paths = backend.fast_paths, False
    try: yield "cpu"
    finally: backend.fast_paths = old


def test_every_row_has_a_test_row():
    assert set(TEST_ROWS) == set(OPS), f"rows without a test row: {set(OPS) - set(TEST_ROWS)}"


def test_every_row_generates_its_functions():
    "The xp function of every row, the method of every unary op and reduction, the operators of every row that has one."
    xp = nd.array(np.ones(2)).__array_namespace__()
    for op in OPS.values():
        assert callable(getattr(xp, op.api)), op.name
        if op.kind != "binary": assert callable(getattr(NDArray, op.api)), op.name
        if op.operator: assert callable(getattr(NDArray, f"__{op.operator}__")), op.name
    assert nd._ufunc_dtype("divide", np.dtype(np.int64), np.dtype(np.int64)) == np.float64


def _unary_cases(op, rng, device):
    for dtype in DTYPES:
        x = nd.array(values(rng, (4, 6), dtype), device=device)[:, ::2].T  # (3, 4), not contiguous
        a = x.to_numpy()
        xp = x.__array_namespace__()
        yield f"{op.api}({np.dtype(dtype).name})", lambda: getattr(xp, op.api)(x), lambda: op.ufunc(a)
        yield f"x.{op.api}()", lambda: getattr(x, op.api)(), lambda: op.ufunc(a)
        if op.operator:
            yield f"__{op.operator}__", lambda: getattr(x, f"__{op.operator}__")(), lambda: op.ufunc(a)


def _binary_cases(op, rng, device, exponent):
    for dtype in DTYPES:
        for other in (dtype, np.float32 if dtype != np.float32 else np.int64):
            x = nd.array(values(rng, (4, 6), dtype), device=device)[:, ::2].T  # (3, 4), not contiguous
            y = nd.array(values(rng, (4,), other, exponent), device=device)  # broadcast along the rows
            a, b = x.to_numpy(), y.to_numpy()
            xp, what = x.__array_namespace__(), f"{op.api}({np.dtype(dtype).name}, {np.dtype(other).name})"
            yield what, lambda: getattr(xp, op.api)(x, y), lambda: op.ufunc(a, b)
            if not exponent:  # the other order: the broadcast operand on the left
                yield what + " swapped", lambda: getattr(xp, op.api)(y, x), lambda: op.ufunc(b, a)
            scalar = 3 if exponent or np.dtype(dtype).kind != "f" else 2.5
            yield what + f" and {scalar}", lambda: getattr(xp, op.api)(x, scalar), lambda: op.ufunc(a, scalar)
            if op.operator:
                yield what + " operator", lambda: getattr(x, f"__{op.operator}__")(y), lambda: op.ufunc(a, b)


def _reduce_cases(op, rng, device):
    for dtype in DTYPES:
        x = nd.array(values(rng, (5, 4, 6), dtype), device=device).permute_dims((2, 1, 0))[::2]  # (3, 4, 5) view
        a = x.to_numpy()
        xp = x.__array_namespace__()
        for axis, keepdims in ((None, False), (1, False), ((0, 2), True), (-1, False)):
            what = f"{op.api}({np.dtype(dtype).name}, axis={axis}, keepdims={keepdims})"
            want = lambda axis=axis, keepdims=keepdims: op.ufunc.reduce(a, axis=axis, keepdims=keepdims)
            yield what, lambda axis=axis, keepdims=keepdims: getattr(xp, op.api)(x, axis=axis, keepdims=keepdims), want
        yield f"x.{op.api}(1)", lambda: getattr(x, op.api)(1), lambda: op.ufunc.reduce(a, axis=1)


@pytest.mark.parametrize("on_device", NDARRAY_DEVICES, indirect=True)
@pytest.mark.parametrize("name", ROWS)
def test_row_against_numpy(name, on_device):
    "Every way to call the op (xp function, method, operator) on views, broadcast, mixed dtypes and numbers."
    op, (inputs, _) = OPS[name], TEST_ROWS[name]
    rng = np.random.default_rng(sorted(OPS).index(name))
    cases = (_unary_cases(op, rng, on_device) if op.kind == "unary" else
             _binary_cases(op, rng, on_device, inputs == "power") if op.kind == "binary" else
             _reduce_cases(op, rng, on_device))
    for what, ours, want in cases:
        assert_same(numpy_says(ours), numpy_says(want), f"{name} on {on_device!r}: {what}")


TENSOR_ROWS = [name for name in ROWS if TEST_ROWS[name][1] is not None]


def test_rows_without_a_tensor_function():
    """The rows chapter 01 has no Function for yet (a new row comes with its Function), and remainder, whose
    Function gives a zero result the dividend's sign, as PyTorch does, where numpy gives it the divisor's."""
    assert set(ROWS) - set(TENSOR_ROWS) == {
        "positive", "expm1", "log1p", "log2", "log10", "tan", "sinh", "cosh", "square", "sign", "floor", "ceil",
        "rint", "isnan", "isinf", "isfinite", "prod", "remainder"}


@pytest.mark.parametrize("tensor_device", ["numpy", "strided", "cpu"])
@pytest.mark.parametrize("name", TENSOR_ROWS)
def test_row_at_tensor_level(name, tensor_device):
    "The row's Function (chapter 01) on Tensors against the row's numpy ufunc: values and dtypes, broadcast, a view."
    if tensor_device not in mt.autograd._DEVICES: pytest.skip(f"device {tensor_device!r} is not registered")
    op, (inputs, spelling) = OPS[name], TEST_ROWS[name]
    rng = np.random.default_rng(ROWS.index(name))
    bits = name.startswith("bitwise") or name == "invert"
    for dtype in ((np.int64, np.bool_) if bits else (np.float32, np.float64)):
        a = values(rng, (4, 6), dtype)
        t = mt.tensor(a, device=tensor_device)[:, ::2].T  # (3, 4), not contiguous
        a = a[:, ::2].T
        what = f"{name} on {tensor_device!r} ({np.dtype(dtype).name})"
        if op.kind == "unary":
            assert_same(numpy_says(lambda: spelling(t)), numpy_says(lambda: op.ufunc(a)), what)
        elif op.kind == "reduce":
            assert_same(numpy_says(lambda: spelling(t)), numpy_says(lambda: op.ufunc.reduce(a, axis=1)), what)
        else:
            b = values(rng, (4,), dtype, exponent=inputs == "power")
            u = mt.tensor(b, device=tensor_device)
            assert_same(numpy_says(lambda: spelling(t, u)), numpy_says(lambda: op.ufunc(a, b)), what)


# ------------------------------------------------------------------------------------------------ backends

def backend_classes():
    "Every Backend class the package defines (chapter 05's two, chapter 06's CPU and CUDA ones)."
    found, todo = [], [nd.Backend]
    while todo:
        cls = todo.pop()
        if cls.__module__.startswith("minitorch_nb"): found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(found, key=lambda c: c.__qualname__)


@pytest.mark.parametrize("cls", backend_classes(), ids=lambda c: c.__name__)
def test_every_backend_kernel_table_covers_every_row(cls):
    """A backend's `kernels` maps op names to what runs them; an op missing there would silently run a slower
    fallback, so it is a failure here. A backend must declare its own table (inheriting one is not enough)."""
    own = cls in (nd.Backend, nd.NumpyBackend) or any(
        "kernels" in vars(c) for c in cls.__mro__ if c not in (nd.Backend, nd.NumpyBackend))
    assert own, f"{cls.__name__} inherits its `kernels` table: it must declare what it runs for each row"
    registered = [b for b in nd.BACKENDS.values() if type(b) is cls]
    backend = registered[0] if registered else object.__new__(cls)  # e.g. CUDA without a GPU: the table only
    missing = set(OPS) - set(backend.kernels)
    assert not missing, f"{cls.__name__}.kernels has no kernel for {sorted(missing)}"


def _hook_calls(device):
    "Calls of every shortcut hook, on small and large inputs, that a backend may take or decline."
    rng = np.random.default_rng(0)
    calls = []
    for n in (12, 1 << 18):  # small, and large enough for chapter 06's kernels
        f = nd.array(rng.standard_normal(n).astype(np.float32), device=device)
        i = nd.array(rng.integers(0, 5, n), device=device)
        m = f > 0
        b = f.backend
        calls += [("ufunc", lambda f=f: b.ufunc("exp", f)), ("ufunc", lambda f=f: b.ufunc("add", f, f)),
                  ("ufunc", lambda f=f: b.ufunc("add", f, np.ones(n, np.float32))),
                  ("reduce_all", lambda f=f: b.reduce_all("sum", f, (0,), False)),
                  ("reduce_all", lambda i=i: b.reduce_all("sum", i, (0,), False)),
                  ("where_all", lambda f=f, m=m: b.where_all(m, f, f)),
                  ("gather_all", lambda f=f: b.gather_all(f, (np.array([0, 2]),))),
                  ("scatter_add_all", lambda f=f: b.scatter_add_all(f, (np.array([0, 2]),), f[[1, 3]])),
                  ("scatter_add_all", lambda f=f: b.scatter_add_all(f, (np.array([0, 2]),), np.ones(2, np.float32))),
                  ("copy_all", lambda f=f: b.copy_all(f, np.dtype(np.float64)))]
        w = f[:12].reshape(3, 4)
        calls += [("matmul_all", lambda w=w: b.matmul_all(w, w.T)),
                  ("matmul_all", lambda w=w: b.matmul_all(w, w.T.astype(np.float64)))]
    return calls


@pytest.mark.parametrize("device", ["python", "strided", "cpu"])
def test_shortcuts_take_or_decline_with_notimplemented(device):
    "Every shortcut hook answers with a new NDArray (it did the work) or NotImplemented, and nothing else."
    if device not in nd.BACKENDS: pytest.skip(f"device {device!r} is not registered")
    wrong = []
    for hook, call in _hook_calls(device):
        out = call()
        if out is not NotImplemented and type(out) is not NDArray: wrong.append(f"{hook} -> {out!r}")
    assert not wrong, wrong


def test_base_backend_declines_everything_and_shortcut_falls_back():
    x = nd.array(np.arange(6.0).reshape(2, 3), device="python")
    b = nd.get_backend("python")
    assert [b.ufunc("exp", x), b.reduce_all("sum", x, (0,), False), b.matmul_all(x, x.T), b.where_all(x > 1, x, x),
            b.gather_all(x, ([0],)), b.scatter_add_all(x, ([0],), x[:1]), b.copy_all(x, x.dtype)] == [NotImplemented] * 7
    assert nd.shortcut(lambda v: NotImplemented, lambda v: v + 1, 1) == 2
    assert nd.shortcut(lambda v: v * 10, lambda v: v + 1, 1) == 10
    assert nd.shortcut(lambda v: None, lambda v: v + 1, 1) is None  # only NotImplemented declines


def test_add_op_generates_a_new_row_everywhere(monkeypatch):
    "A toy row added after import: the xp function and the reference kernel come with it; a duplicate is refused."
    monkeypatch.setattr(nd, "OPS", dict(nd.OPS))
    monkeypatch.setattr(nd, "_ELEMENTWISE_UFUNCS", dict(nd._ELEMENTWISE_UFUNCS))
    monkeypatch.setattr(nd.ArrayNamespace, "hypot", None, raising=False)  # removed again after the test
    nd.add_op(nd.Op("hypot", "binary", np.hypot, lambda x, y: np.sqrt(x * x + y * y), "hypot"))
    a, b = np.array([[3.0, 5.0], [-8.0, 0.0]]), np.array([4.0, 12.0])
    for device in ("strided", "python"):
        x, y = nd.array(a, device=device), nd.array(b, device=device)
        np.testing.assert_allclose(x.__array_namespace__().hypot(x.T, y).to_numpy(), np.hypot(a.T, b))
        np.testing.assert_allclose(np.hypot(x, y).to_numpy(), np.hypot(a, b))  # numpy's ufunc on NDArrays
    with pytest.raises(ValueError, match="already has a row 'add'"): nd.add_op(nd.OPS["add"])
