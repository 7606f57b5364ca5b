"""A differential op harness: every row of tests/op_specs.py runs under torch (the oracle) and minitorch_nb.

For each row, dtype and spelling (torch.name, Tensor.name, F.name, the Python operator) it compares values
(per-dtype tolerances), result dtypes, shapes and types, `requires_grad`, gradients of every float input, and
where torch raises, the exception type. A completeness test fails for any public op with no row.
"""
import math, operator, os, warnings
import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as TF
import minitorch_nb as mt
import minitorch_nb.nn.functional as F
from op_specs import ROWS, A, V, D, N

# Tolerances per dtype, the same for every op (values and gradients); integers and booleans are exact.
# bfloat16: torch.testing's own defaults for it (8 significant bits: one rounding is up to 2**-8 relative)
TOL = {"float16": dict(rtol=1e-3, atol=1e-3), "float32": dict(rtol=1e-5, atol=1e-6),
       "float64": dict(rtol=1e-10, atol=1e-12), "bfloat16": dict(rtol=1.6e-2, atol=1e-5)}
FLOATS = ("float16", "float32", "float64", "bfloat16")
BF16 = np.dtype(ml_dtypes.bfloat16)

def bf16_tolerance(b):
    """torch's bfloat16 defaults, and 2**-6 of the largest |value|: where an op is several roundings in a row
    (a backward formula, a mean), torch rounds to bfloat16 after each and ours once, in float32; each rounding
    moves a value by up to 2**-9 of its intermediate's scale, so a result near zero that is the difference of
    larger ones (cancellation) differs in absolute, not relative, terms."""
    finite = np.abs(b[np.isfinite(b)])
    return dict(rtol=TOL["bfloat16"]["rtol"], atol=max(TOL["bfloat16"]["atol"], 2**-6 * finite.max(initial=0.0)))

def torch_tensor(arr):
    "torch.tensor of a numpy array; torch reads no bfloat16 array, so it goes through float32 (exactly)."
    return torch.tensor(arr.astype(np.float32)).bfloat16() if arr.dtype == BF16 else torch.tensor(arr)
# The device minitorch_nb's inputs are made on: "numpy" (chapter 00) by default; MINITORCH_HARNESS_DEVICE=cpu runs
# the table through chapter 06a's kernels instead (tests/test_op_table.py checks every device's kernels too).
DEVICE = os.environ.get("MINITORCH_HARNESS_DEVICE", "numpy")

# --- the spellings ------------------------------------------------------------------------------------------
BINARY_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
              "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "matmul": operator.matmul,
              "and": operator.and_, "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
              "rshift": operator.rshift, "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
              "le": operator.le, "gt": operator.gt, "ge": operator.ge, "getitem": operator.getitem}
UNARY_OPS = {"neg": operator.neg, "pos": operator.pos, "abs": operator.abs, "invert": operator.invert,
             "len": len, "bool": bool, "float": float, "int": int, "index": operator.index}
OPERATOR_NAMES = ({f"__{n}__" for n in BINARY_OPS} | {f"__{n}__" for n in UNARY_OPS}
                  | {f"__r{n}__" for n in BINARY_OPS if n not in ("eq", "ne", "lt", "le", "gt", "ge", "getitem")})

def operator_call(name, args):
    "Call the Python operator that `name` (a dunder) stands for; `__rX__` puts the first argument on the right."
    core = name[2:-2]
    if core in UNARY_OPS: return UNARY_OPS[core](*args)
    if core in BINARY_OPS: return BINARY_OPS[core](*args)
    assert core.startswith("r") and core[1:] in BINARY_OPS, name
    return BINARY_OPS[core[1:]](args[1], args[0])

def torch_forms(row):
    "The spellings torch has for the row: torch.name and Tensor.name, F.name, or the operator."
    if row.forms is not None: return row.forms
    if row.name.startswith("__"): return ("op",)
    if row.ns == "F": return ("F",)
    forms = tuple(f for f, has in (("torch", hasattr(torch, row.name)), ("method", hasattr(torch.Tensor, row.name)))
                  if has)
    assert forms, f"torch has neither torch.{row.name} nor Tensor.{row.name}"
    return forms

def call(lib, form, name, args, kwargs, ref=None):
    if form == "torch": return getattr(lib, name)(*args, **kwargs)
    if form == "F" and lib is torch and ref: return getattr(torch, ref)(*args, **kwargs)
    if form == "F": return getattr(TF if lib is torch else F, name)(*args, **kwargs)
    if form == "method": return getattr(args[0], name)(*args[1:], **kwargs)
    if form == "attr": return getattr(args[0], name)
    assert form == "op" and not kwargs
    return operator_call(name, args)

# --- inputs -------------------------------------------------------------------------------------------------
class Made:
    "A materialised A or V: a numpy base array, the view to take of it, and whether it is a gradient leaf."
    def __init__(self, base, layout, grad): self.base, self.layout, self.grad = base, layout, grad

def random_array(shape, dtype, lo, hi, rng):
    if dtype == "bool": return rng.random(shape) < 0.5
    if dtype in ("int64", "int32"): return rng.integers(math.floor(lo), math.ceil(hi) + 1, size=shape).astype(dtype)
    return rng.uniform(lo, hi, size=shape).astype(dtype)

def materialise(x, row, dtypes, rng):
    "Replace each A and V (recursively) by a Made of the dtype it gets: its own, or the row's next."
    if isinstance(x, (A, V)):
        dtype = x.dtype or next(dtypes)
        if isinstance(x, V): return Made(np.asarray(x.values, dtype=dtype), "C", x.grad)
        lo = row.lo if x.lo is None else x.lo
        hi = row.hi if x.hi is None else x.hi
        return Made(random_array(x.shape, dtype, lo, hi, rng), x.layout, x.grad)
    if isinstance(x, (list, tuple)): return type(x)(materialise(v, row, dtypes, rng) for v in x)
    if isinstance(x, dict): return {k: materialise(v, row, dtypes, rng) for k, v in x.items()}
    return x

def dtype_stream(entry):
    "The dtypes the row's inputs take in turn: one name for all, or a tuple, one per input."
    if isinstance(entry, str):
        while True: yield entry
    yield from entry
    raise AssertionError(f"the row needs more dtypes than {entry}")

def build(x, lib, row, leaves):
    "The inputs in `lib`: tensors of the same values and layout; gradient leaves are collected in `leaves`."
    if isinstance(x, Made):
        leaf = torch_tensor(x.base) if lib is torch else lib.tensor(x.base, device=DEVICE)
        if row.grad and x.grad and x.base.dtype.name in FLOATS: leaf.requires_grad_()
        leaves.append(leaf)
        if x.layout == "T" and x.base.ndim >= 2: return leaf.transpose(-2, -1)
        if x.layout == "step": return leaf[..., ::2]
        return leaf
    if isinstance(x, D): return getattr(lib, x.name)
    if isinstance(x, N): return np.asarray(x.values, dtype=x.dtype)
    if isinstance(x, (list, tuple)): return type(x)(build(v, lib, row, leaves) for v in x)
    if isinstance(x, dict): return {k: build(v, lib, row, leaves) for k, v in x.items()}
    return x

def run(lib, row, form, made_args, made_kwargs):
    "Build the inputs in `lib` and call the op: ('ok', result, leaves) or ('raise', exception, leaves)."
    leaves = []
    args, kwargs = build(made_args, lib, row, leaves), build(made_kwargs, lib, row, leaves)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = call(lib, form, row.name, args, kwargs, row.ref)
    except Exception as e:  # noqa: BLE001 -- the exception is the result being compared
        return "raise", e, leaves
    if lib is mt:  # a numpy RuntimeWarning leaking out of minitorch_nb is a bug (torch stays quiet)
        leaked = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        assert not leaked, f"minitorch_nb leaked warnings: {leaked}"
    return "ok", out, leaves

# --- comparing ----------------------------------------------------------------------------------------------
def np_of(t):
    if isinstance(t, torch.Tensor):
        return t.detach().float().numpy().astype(BF16) if t.dtype == torch.bfloat16 else t.detach().numpy()
    return np.asarray(t.detach().to("numpy").numpy())

def close(a, b, what):
    "Two numpy arrays: same shape, dtype and values (per-dtype tolerance; nan equals nan)."
    assert a.shape == b.shape, f"{what}: shape {a.shape} != torch's {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != torch's {b.dtype}"
    tol = TOL.get(a.dtype.name)
    if a.dtype == BF16:  # numpy compares no bfloat16
        a, b = a.astype(np.float64), b.astype(np.float64)
        tol = bf16_tolerance(b)
    if tol: np.testing.assert_allclose(a, b, err_msg=what, **tol)
    else: np.testing.assert_array_equal(a, b, err_msg=what)  # exact (allclose would compare int64 as float64)

def compare(ours, theirs, what="result"):
    "Recursively compare a result with torch's: tensors, sequences, dtypes, Python numbers."
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, mt.Tensor), f"{what}: {type(ours).__name__}, torch gives a Tensor"
        close(np_of(ours), np_of(theirs), what)
        assert ours.requires_grad == theirs.requires_grad, f"{what}: requires_grad {ours.requires_grad}"
    elif isinstance(theirs, torch.dtype):
        assert np.dtype(ours).name == str(theirs).removeprefix("torch."), f"{what}: dtype {ours} != {theirs}"
    elif isinstance(theirs, (tuple, list)):  # also torch.Size and torch.return_types
        assert isinstance(ours, (tuple, list)), f"{what}: {type(ours).__name__}, torch gives {type(theirs).__name__}"
        assert len(ours) == len(theirs), f"{what}: {len(ours)} items, torch gives {len(theirs)}"
        for i, (o, t) in enumerate(zip(ours, theirs)): compare(o, t, f"{what}[{i}]")
    else:
        assert type(ours) is type(theirs), f"{what}: {type(ours).__name__}, torch gives {type(theirs).__name__}"
        assert ours == theirs or (ours != ours and theirs != theirs), f"{what}: {ours!r} != torch's {theirs!r}"

def tensors_of(x, kind):
    if isinstance(x, kind): return [x]
    if isinstance(x, (tuple, list)): return [t for v in x for t in tensors_of(v, kind)]
    return []

def compare_gradients(row, ours, theirs, leaves_m, leaves_t, rng):
    "Backpropagate the same random cotangent through both results and compare every leaf's gradient."
    outs_t = [t for t in tensors_of(theirs, torch.Tensor) if t.requires_grad]
    if not outs_t: return
    outs_m = [o for o in tensors_of(ours, mt.Tensor) if o.requires_grad]
    assert len(outs_m) == len(outs_t), "a different number of outputs require grad"
    cots = [rng.standard_normal(t.shape).astype(np_of(t).dtype) for t in outs_t]
    sum(((t * torch_tensor(c)).sum() for t, c in zip(outs_t, cots)), torch.zeros(())).backward()
    losses = [(o * mt.tensor(c, device=o.device)).sum() for o, c in zip(outs_m, cots)]
    sum(losses[1:], losses[0]).backward()
    for i, (lm, lt) in enumerate(zip(leaves_m, leaves_t)):
        if lt.grad is None:
            assert lm.grad is None or not np.any(np_of(lm.grad)), f"grad of input {i}: torch gives None"
        else:
            assert lm.grad is not None, f"grad of input {i} is None, torch gives one"
            close(np_of(lm.grad), np_of(lt.grad), f"grad of input {i}")

def check(row, dtype, form):
    "Run every case of the row in both libraries and compare."
    for k, case in enumerate(row.cases):
        rng = np.random.default_rng(k)
        made_args = materialise(case, row, dtype_stream(dtype), rng)
        made_kwargs = materialise(row.kwargs, row, dtype_stream(dtype), rng)
        status_t, theirs, leaves_t = run(torch, row, form, made_args, made_kwargs)
        status_m, ours, leaves_m = run(mt, row, form, made_args, made_kwargs)
        where = f"case {k} ({form}, {dtype})"
        if row.raises:
            assert status_t == "raise", f"{where}: a row of bad input, but torch accepts it"
        if status_t == "raise":
            assert status_m == "raise", f"{where}: torch raises {type(theirs).__name__}: {theirs}; ours returns"
            assert isinstance(ours, type(theirs)), (
                f"{where}: raises {type(ours).__name__}: {ours}; torch raises {type(theirs).__name__}: {theirs}")
            continue
        if status_m == "raise": raise AssertionError(f"{where}: torch returns, ours raises") from ours
        compare(ours, theirs, f"{where} result")
        if row.grad: compare_gradients(row, ours, theirs, leaves_m, leaves_t, rng)

def params():
    for row in ROWS:
        for dtype in row.dtypes:
            dname = dtype if isinstance(dtype, str) else "-".join(dtype)
            for form in torch_forms(row):
                keys = ("*", dname, form, f"{dname}:{form}", f"@{DEVICE}", f"{dname}@{DEVICE}")
                reason = next((row.xfail[k] for k in keys if k in row.xfail), None)
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                yield pytest.param(row, dtype, form, id=f"{row.id or row.name}-{dname}-{form}", marks=marks)

@pytest.mark.parametrize("row, dtype, form", list(params()))
def test_op_matches_torch(row, dtype, form):
    check(row, dtype, form)

@pytest.mark.parametrize("name", [n for n in sorted(mt.ops.function_forms) if hasattr(torch, n)])
def test_function_forms_refuse_a_number_like_torch(name):
    "torch.name(2.0) for an op of tensors: the same exception type (TypeError mostly), or the same result."
    try: theirs = getattr(torch, name)(2.0)
    except AttributeError:  # torch.norm is Python code that trips over the float ('float' has no 'layout'): no API
        with pytest.raises(TypeError): getattr(mt, name)(2.0)
    except Exception as e:  # noqa: BLE001 -- the exception is the result being compared
        with pytest.raises(type(e)): getattr(mt, name)(2.0)
    else: compare(getattr(mt, name)(2.0), theirs)

# --- completeness -------------------------------------------------------------------------------------------
# Public names that are not ops of tensors and need no row here, each with why; they have their own tests.
NON_OPS = {
    "new_empty", "empty", # uninitialised values: shape and dtype are tested in tests/test_shape_ops_api.py
    # creation and random functions (tests/test_tensor.py, tests/test_ops_api.py, tests/test_data.py)
    "tensor", "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
    "randn_like", "arange", "eye", "rand", "randn", "randint", "randperm", "manual_seed",
    "get_rng_state", "set_rng_state", "Generator",
    # gradient checking, grad mode and serialization (tests/test_autograd.py, tests/test_nn.py)
    "gradcheck", "gradgradcheck", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "save", "load",
    "inference_mode", "is_inference_mode_enabled", "is_inference",  # tests/test_autograd.py, against torch
    # dtype and device helpers (tests/test_torch_semantics.py, tests/test_devices.py)
    "device", "cpu", "cuda", "set_default_device", "get_default_device",
    # Tensor methods that are autograd plumbing or in-place utilities (tests/test_autograd.py, test_ndarray.py)
    "backward", "requires_grad_", "retain_grad", "copy_", "fill_", "zero_", "is_contiguous", "storage_offset",
    "numpy",
    # reached only with a numpy array on the left, where torch raises TypeError and ours keeps the graph on
    # purpose (tests/test_torch_semantics.py)
    "__rmatmul__",
    # random fills (tests/test_data_attr.py checks their statistics)
    "normal_", "uniform_",
    # autocast state queries (tests/test_amp.py, against torch)
    "is_autocast_enabled", "get_autocast_dtype",
    # a hook on leaves, autograd plumbing that DDP uses (tests/test_distributed.py, against torch)
    "register_post_accumulate_grad_hook",
    # attention takes masks, causal flags and dropout the harness's generators don't make: tests/test_attention.py
    # runs it against torch in every combination, values, gradients and exception types
    "scaled_dot_product_attention",
}
# Named in-place forms (x.mul_(2)) of ops with a row: tests/test_data_attr.py runs each against torch.
INPLACE = {("method", name + "_") for name in mt.ops._INPLACE_FORMS}
# Spellings of ours that torch lacks (torch has only the method): kept, as they harm no PyTorch program.
EXTRAS = {("torch", "expand_as"), ("torch", "reshape_as")}

def covered():
    "The (form, name) pairs the table runs."
    return {(form, row.name) for row in ROWS for form in torch_forms(row)}

def public_names():
    "(form, name) for every public op: function forms, top-level functions, F.*, Tensor methods and operators."
    names = {("torch", n) for n in mt.ops.function_forms}
    names |= {("torch", n) for n in dir(mt) if not n.startswith("_") and callable(getattr(mt, n))
              and not isinstance(getattr(mt, n), type) and not isinstance(getattr(mt, n), np.dtype)}
    names |= {("F", n) for n in dir(F) if not n.startswith("_") and callable(getattr(F, n))}
    names |= {("method", n) for n, v in vars_of(mt.Tensor).items() if not n.startswith("_") and callable(v)}
    names |= {("op", n) for n in vars_of(mt.Tensor) if n in OPERATOR_NAMES}
    return names

def vars_of(cls):
    "Attributes defined by the class and its bases below object (properties are not methods)."
    out = {}
    for klass in reversed(cls.__mro__[:-1]): out.update(vars(klass))
    return {n: v for n, v in out.items() if not isinstance(v, property)}

def test_every_public_op_has_a_row():
    missing = sorted(f"{form}:{name}" for form, name in public_names() - covered() - EXTRAS - INPLACE
                     if name not in NON_OPS)
    assert not missing, f"public ops without a row in tests/op_specs.py (or a NON_OPS entry): {missing}"

def test_every_row_names_an_op_torch_has():
    for row in ROWS:
        for form in torch_forms(row):
            if form == "op": assert row.name in OPERATOR_NAMES, row.name
            elif form == "F": assert hasattr(TF, row.name) or hasattr(torch, row.ref or ""), row.name
            elif form == "torch": assert hasattr(torch, row.name), row.name
            else: assert hasattr(torch.Tensor, row.name), row.name
