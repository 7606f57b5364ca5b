"""Chapter 01's scans, sorts, strided views, einsum, selection, factories and assert_close against PyTorch:
values, dtypes, gradients (random, broadcast and non-contiguous inputs), exception types, finite differences.
Runs on 'numpy' and 'cpu' here, and once more on 'cuda' under Numba's CUDA simulator in a child process."""
import builtins
import os
import subprocess
import sys
from pathlib import Path
import numpy as np
import pytest
import torch
import minitorch_nb as mt

SIM = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
DEVICES = ["cuda"] if SIM else [d for d in ("numpy", "cpu") if d in mt.autograd.available_devices()]

def dtype_name(d): return str(d).replace("torch.", "")

def check(m, t, rtol=1e-9, atol=1e-12):
    "Same values, shape and dtype (recursing into tuples such as (values, indices))."
    if isinstance(t, (tuple, list)):
        assert isinstance(m, (tuple, list)) and len(m) == len(t)
        for a, b in zip(m, t): check(a, b, rtol, atol)
        return
    assert isinstance(m, mt.Tensor), type(m)
    assert dtype_name(m.dtype) == dtype_name(t.dtype), (m.dtype, t.dtype)
    got = np.asarray(m.detach().to("numpy").numpy())
    if t.dtype in (torch.float32, torch.float16): rtol, atol = 2e-6, 1e-6  # a scan adds in another order
    assert got.shape == tuple(t.shape), (got.shape, t.shape)
    np.testing.assert_allclose(got, t.detach().numpy(), rtol=rtol, atol=atol)

def pair(a, dev, grad=True, layout="contiguous"):
    "The same float64 values in both libraries; 'transposed' and 'sliced' give non-contiguous tensors."
    if layout == "transposed": base = np.ascontiguousarray(a.T)
    elif layout == "sliced": base = np.repeat(a, 2, axis=-1)
    else: base = a
    m, t = mt.tensor(base).to(dev), torch.tensor(base)
    if layout == "transposed": m, t = m.mT, t.mT
    if layout == "sliced": m, t = m[..., ::2], t[..., ::2]
    if grad: m, t = m.detach().requires_grad_(), t.detach().requires_grad_()
    if layout != "contiguous": assert not m.is_contiguous() and not t.is_contiguous()
    return m, t

def outputs(out):
    "The float tensors among an op's outputs (named tuples give their values)."
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if o.dtype.is_floating_point] if isinstance(outs[0], torch.Tensor) else \
           [o for o in outs if o.dtype.kind == "f"]

def check_grads(fn, a, dev, layout="contiguous", seed=0):
    "fn(lib, x) in both libraries: values, then the gradient of a random projection of the float outputs."
    m, t = pair(a, dev, layout=layout)
    mo, to = fn(mt, m), fn(torch, t)
    check(mo, to)
    rng = np.random.default_rng(seed)
    ms, ts = outputs(mo), outputs(to)
    if not ts: return  # indices only: nothing to differentiate
    gs = [rng.standard_normal(tuple(o.shape)).astype(dtype_name(o.dtype)) for o in ts]
    mt.autograd.backward(ms, [mt.tensor(g).to(dev) for g in gs])
    torch.autograd.backward(ts, [torch.tensor(g) for g in gs])
    low = any(o.dtype == torch.float32 for o in ts)  # a float32 op: its float64 input's gradient has float32's error
    check(m.grad, t.grad, *((2e-6, 1e-6) if low else ()))
    assert m.grad.device == dev

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 6))

OPS = {
    "cumsum": lambda L, x: L.cumsum(x, 1),
    "cumsum_method_neg_dim": lambda L, x: x.cumsum(-2),
    "cumsum_dtype": lambda L, x: L.cumsum(x, dim=0, dtype=L.float32),
    "cumprod": lambda L, x: L.cumprod(x, 1),
    "cumprod_dim0": lambda L, x: x.cumprod(dim=0),
    "cummax": lambda L, x: L.cummax(x, 1),
    "cummin": lambda L, x: L.cummin(x, 0),
    "logcumsumexp": lambda L, x: L.logcumsumexp(x, 1),
    "prod_all": lambda L, x: L.prod(x),
    "prod_dim": lambda L, x: L.prod(x, 1),
    "prod_keepdim": lambda L, x: x.prod(0, keepdim=True),
    "tril": lambda L, x: L.tril(x),
    "triu_diagonal": lambda L, x: L.triu(x, diagonal=2),
    "tril_negative": lambda L, x: x.tril(-1),
    "flip": lambda L, x: L.flip(x, (0, 1)),
    "flip_method": lambda L, x: x.flip(1),
    "roll": lambda L, x: L.roll(x, 2, 1),
    "roll_flat": lambda L, x: L.roll(x, 5),
    "roll_dims": lambda L, x: L.roll(x, shifts=(1, -2), dims=(0, 1)),
    "diagonal": lambda L, x: L.diagonal(x),
    "diagonal_offset": lambda L, x: x.diagonal(offset=2),
    "diagonal_swapped": lambda L, x: x.diagonal(-1, 1, 0),
    "diag": lambda L, x: L.diag(x, 1),
    "diag_of_vector": lambda L, x: L.diag(x[1], -2),
    "unfold": lambda L, x: x.unfold(1, 3, 1),
    "unfold_step": lambda L, x: x.unfold(0, 2, 2),
    "sort": lambda L, x: L.sort(x, 1),
    "sort_descending": lambda L, x: x.sort(dim=0, descending=True),
    "sort_stable": lambda L, x: L.sort(x, stable=True),
    "argsort": lambda L, x: L.argsort(x, 1, descending=True),
    "msort": lambda L, x: L.msort(x),
    "topk": lambda L, x: L.topk(x, 3),
    "topk_smallest": lambda L, x: x.topk(2, dim=0, largest=False),
    "masked_select": lambda L, x: L.masked_select(x, x > 0),
    "masked_select_broadcast": lambda L, x: L.masked_select(x, L.tensor([True, False, True, True, False, True])),
    "repeat": lambda L, x: x.repeat(2, 1, 3),
    "repeat_interleave": lambda L, x: L.repeat_interleave(x, 2, dim=1),
    "repeat_interleave_flat": lambda L, x: x.repeat_interleave(3),
    "repeat_interleave_counts": lambda L, x: x.repeat_interleave(L.tensor([1, 0, 3, 2]), dim=0),
    "var_mean": lambda L, x: L.var_mean(x, 1),
    "std_mean": lambda L, x: L.std_mean(x, dim=0, correction=0, keepdim=True),
    "unflatten": lambda L, x: x.unflatten(1, (2, -1)),
    "einsum_matmul": lambda L, x: L.einsum("ij,kj->ik", x, x),
    "einsum_implicit": lambda L, x: L.einsum("ij,jk", x, x.T),
    "einsum_trace": lambda L, x: L.einsum("ii", x[:, :4]),
    "einsum_diagonal": lambda L, x: L.einsum("ii->i", x[:, 2:]),
    "einsum_sum": lambda L, x: L.einsum("ij->j", x),
    "einsum_ellipsis": lambda L, x: L.einsum("...j,j->...", x, x[0]),
    "einsum_outer_list": lambda L, x: L.einsum("i,j->ij", [x[0], x[:, 1]]),
}

@pytest.mark.parametrize("layout", ["contiguous", "sliced"] if SIM else ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("name", OPS)
def test_values_dtypes_and_gradients_match_torch(name, dev, layout):
    check_grads(OPS[name], X, dev, layout)

BATCHED = {
    "tril_batched": lambda L, x: L.tril(x, 1),
    "diagonal_dims_0_2": lambda L, x: L.diagonal(x, 1, 0, 2),
    "unfold_dim0": lambda L, x: x.unfold(0, 2, 1),
    "cumsum_middle": lambda L, x: L.cumsum(x, 1),
    "cummax_last": lambda L, x: L.cummax(x, -1),
    "sort_middle": lambda L, x: L.sort(x, 1, descending=True),
    "flip_middle": lambda L, x: x.flip(1),
    "einsum_batched": lambda L, x: L.einsum("bij,bkj->bik", x, x),
    "einsum_ellipsis_broadcast": lambda L, x: L.einsum("...ij,...jk->...ik", x, x[:1].transpose(1, 2)),
    "einsum_three": lambda L, x: L.einsum("aij,ajk,bkl->ail", x, x.transpose(1, 2), x),
    "einsum_permute": lambda L, x: L.einsum("ijk->kji", x),
    "einsum_batch_diagonal": lambda L, x: L.einsum("bii->bi", x[:, :, :3]),
    "prod_middle": lambda L, x: L.prod(x, 1),
}

@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("name", BATCHED)
def test_three_dimensional_inputs_match_torch(name, dev):
    check_grads(BATCHED[name], rng.standard_normal((2, 3, 4)), dev)

EINSUM = [("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk", [(2, 2, 3), (2, 3, 2)]), ("i,i", [(3,), (3,)]),
          ("ij,ij->ij", [(2, 1), (2, 3)]), ("ij,ij->", [(2, 1), (2, 3)]), ("Ba", [(2, 3)]), ("aB", [(2, 3)]),
          ("...ii->...i", [(2, 3, 3)]), ("i...->...", [(3, 2, 2)]), ("...", [(2, 3)]), ("i...->i", [(2, 3)]),
          ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]), ("ij,jk,kl->li", [(2, 3), (3, 4), (4, 2)]),
          ("iij->j", [(3, 3, 2)]), ("ijk,k->ij", [(2, 1, 3), (3,)]), (" i j , j k -> i k ", [(2, 3), (3, 2)])]

@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("equation,shapes", EINSUM)
def test_einsum_equations_match_torch(equation, shapes, dev):
    arrays = [rng.standard_normal(s) for s in shapes]
    ms = [mt.tensor(a).to(dev).requires_grad_() for a in arrays]
    ts = [torch.tensor(a).requires_grad_() for a in arrays]
    mo, to = mt.einsum(equation, *ms), torch.einsum(equation, *ts)
    check(mo, to)
    g = rng.standard_normal(tuple(to.shape))
    mo.backward(mt.tensor(g).to(dev)); to.backward(torch.tensor(g))
    for m, t in zip(ms, ts): check(m.grad, t.grad)

@pytest.mark.parametrize("dev", DEVICES)
def test_integer_and_bool_dtypes_follow_torch(dev):
    i = np.array([[3, -1, 2], [0, 5, 5]], dtype=np.int32)
    b = np.array([[True, False, True], [True, True, False]])
    for data in (i, b):
        m, t = mt.tensor(data).to(dev), torch.tensor(data)
        for fn in (lambda L, x: L.cumsum(x, 1), lambda L, x: L.cumprod(x, 0), lambda L, x: L.prod(x),
                   lambda L, x: L.prod(x, 1), lambda L, x: L.tril(x), lambda L, x: L.flip(x, (1,)),
                   lambda L, x: L.roll(x, 1, 1), lambda L, x: L.diagonal(x), lambda L, x: x.unfold(1, 2, 1),
                   lambda L, x: L.nonzero(x), lambda L, x: L.nonzero(x, as_tuple=True), lambda L, x: L.argwhere(x),
                   lambda L, x: x.repeat(2, 2), lambda L, x: L.repeat_interleave(x, 2, dim=0),
                   lambda L, x: L.masked_select(x, L.tensor([True, False, True]))):
            check(fn(mt, m), fn(torch, t))
    m, t = mt.tensor(i).to(dev), torch.tensor(i)
    for fn in (lambda L, x: L.cummax(x, 1), lambda L, x: L.cummin(x, 0), lambda L, x: L.sort(x, dim=1, stable=True),
               lambda L, x: L.sort(x, dim=1, descending=True, stable=True), lambda L, x: L.topk(x, 1, 0),
               lambda L, x: L.einsum("ij,kj->ik", x, x), lambda L, x: L.isclose(x, x + 1, rtol=0.5)):
        check(fn(mt, m), fn(torch, t))

@pytest.mark.parametrize("dev", DEVICES)
def test_ties_and_nan_indices_follow_torch(dev):
    v = np.array([[1., 3., 3., 2., np.nan, 5., np.nan, 0.], [2., 2., 1., 1., 0., 4., 4., 4.]])
    m, t = mt.tensor(v).to(dev), torch.tensor(v)
    for fn in (lambda L, x: L.cummax(x, 1), lambda L, x: L.cummin(x, 1), lambda L, x: L.sort(x, dim=1, stable=True),
               lambda L, x: L.sort(x, dim=1, descending=True, stable=True), lambda L, x: L.argsort(x, dim=1, stable=True),
               lambda L, x: L.isclose(x, x), lambda L, x: L.isclose(x, x, equal_nan=True)):
        check(fn(mt, m), fn(torch, t))
    assert mt.allclose(m, m, equal_nan=True) and not mt.allclose(m, m)

@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_selects_like_torch_and_breaks_ties_by_index(dev, largest):
    """Values as torch's for any k (ties included); indices as torch's where they are defined (no ties), and where
    torch leaves the order of equal elements unspecified, ours are the lower index first (a stable sort's)."""
    rng = np.random.default_rng(0)
    distinct = rng.permutation(3 * 700).reshape(3, 700).astype(np.float32) / 7  # n >= 64 k: torch's partial sort
    tied = rng.integers(0, 4, (5, 300))
    nans = np.array([[1., np.nan, 3., np.nan, 2., -np.inf, 3.], [np.nan] * 7])
    for arr, dims in ((distinct, (0, 1)), (tied, (1,)), (nans, (1,))):
        m, t = mt.tensor(arr).to(dev), torch.tensor(arr)
        for d in dims:
            for k in sorted({0, 1, min(5, arr.shape[d]), arr.shape[d]}):
                ours, theirs = m.topk(k, dim=d, largest=largest), t.topk(k, dim=d, largest=largest)
                check(ours.values, theirs.values)
                got, idx = ours.values.to("numpy").numpy(), ours.indices.to("numpy").numpy()
                np.testing.assert_array_equal(np.take_along_axis(arr, idx, d), got)  # the indices point at them
                stable = np.argsort(-arr if largest and arr.dtype.kind != "f" else arr, axis=d, kind="stable")
                if largest and arr.dtype.kind == "f":  # descending, NaN first, ties in index order
                    stable = arr.shape[d] - 1 - np.flip(np.argsort(np.flip(arr, d), axis=d, kind="stable"), d)
                np.testing.assert_array_equal(idx, np.take(stable, range(k), axis=d))
                if arr is distinct: np.testing.assert_array_equal(idx, theirs.indices.numpy())
    assert mt.tensor([2., 1.]).topk(1, sorted=False).values.tolist() == [2.]

@pytest.mark.parametrize("dev", DEVICES)
def test_zeros_in_products_get_torchs_gradients(dev):
    a = np.array([[2., 0., 3., 0.5, 4.], [1.5, -2., 0., 3., 1.], [0., 0., 2., 1., 3.], [1., 2., 3., 4., 0.]])
    for fn in (lambda L, x: L.cumprod(x, 1), lambda L, x: L.cumprod(x, 0), lambda L, x: L.prod(x, 1),
               lambda L, x: L.prod(x), lambda L, x: L.prod(x[:, 2:]), lambda L, x: L.prod(x[1]),
               lambda L, x: L.prod(x, 0, keepdim=True)):
        check_grads(fn, a, dev)

@pytest.mark.parametrize("dev", DEVICES)
def test_finite_differences_in_float64(dev):
    "Where the gradient is a formula of its own (zeros, overlaps, diagonals), first and second order."
    z = np.array([[1.5, 0., -2., 0.5], [0., 0., 3., 1.], [0.7, 1.2, -0.4, 0.]])
    x = lambda a: mt.tensor(a).to(dev).requires_grad_()
    assert mt.gradcheck(lambda t: t.cumprod(1), x(z)) and mt.gradgradcheck(lambda t: t.cumprod(1), x(z))
    assert mt.gradcheck(lambda t: t.prod(1), x(z)) and mt.gradgradcheck(lambda t: t.prod(1), x(z))
    assert mt.gradcheck(lambda t: t.logcumsumexp(1), x(z))
    assert mt.gradcheck(lambda t: t.unfold(1, 2, 1), x(z)) and mt.gradgradcheck(lambda t: t.unfold(1, 2, 1), x(z))
    assert mt.gradcheck(lambda t: mt.einsum("ii,ij->j", t[:, :3], t), x(z))
    assert mt.gradgradcheck(lambda t: mt.diag(t[0, :3]) @ t.diagonal(1).unsqueeze(1), x(z))

@pytest.mark.parametrize("dev", DEVICES)
def test_diagonal_and_unfold_are_views(dev):
    m = mt.arange(12.).reshape(3, 4).to(dev)
    d, w = m.diagonal(1), m.unfold(1, 2, 1)
    assert (d.storage_offset(), d.stride(), w.stride()) == (1, (5,), (4, 1, 1))
    t = torch.arange(12.).reshape(3, 4)
    assert (t.diagonal(1).storage_offset(), t.diagonal(1).stride(), t.unfold(1, 2, 1).stride()) == (1, (5,), (4, 1, 1))
    m.diagonal().copy_(mt.tensor([-1., -2., -3.]).to(dev))  # a write through the view reaches the matrix
    assert m.to("numpy").numpy()[[0, 1, 2], [0, 1, 2]].tolist() == [-1., -2., -3.]
    assert mt.flip(m, (0,)).storage_offset() == 0  # flip copies, as in PyTorch

def exception_type(fn, lib):
    try: fn(lib)
    except Exception as e: return type(e)
    return None

ERRORS = {
    "cumsum_dim": lambda L: L.cumsum(L.ones(3), 5),
    "cumprod_dim": lambda L: L.ones(2, 3).cumprod(-3),
    "cumsum_no_dim": lambda L: L.cumsum(L.ones(3)),
    "cummax_no_dim": lambda L: L.ones(3).cummax(),
    "cummax_dim": lambda L: L.cummax(L.ones(3), 1),
    "logcumsumexp_int": lambda L: L.logcumsumexp(L.tensor([1, 2]), 0),
    "prod_tuple": lambda L: L.prod(L.ones(2, 3), (0, 1)),
    "prod_dim": lambda L: L.ones(2).prod(2),
    "tril_1d": lambda L: L.tril(L.ones(3)),
    "triu_0d": lambda L: L.triu(L.tensor(1.)),
    "roll_misaligned": lambda L: L.roll(L.ones(2, 3), (1, 2), (0,)),
    "roll_dim": lambda L: L.roll(L.ones(2, 3), 1, 2),
    "flip_repeated": lambda L: L.flip(L.ones(2, 3), (0, 0)),
    "flip_dim": lambda L: L.flip(L.ones(2, 3), (2,)),
    "diagonal_same": lambda L: L.diagonal(L.ones(3, 3), 0, 0, 0),
    "diagonal_dim": lambda L: L.diagonal(L.ones(3, 3), 0, 0, 2),
    "diagonal_1d": lambda L: L.diagonal(L.ones(3)),
    "diag_3d": lambda L: L.diag(L.ones(2, 2, 2)),
    "unfold_size": lambda L: L.ones(5).unfold(0, 6, 1),
    "unfold_step": lambda L: L.ones(5).unfold(0, 2, 0),
    "unfold_dim": lambda L: L.ones(5).unfold(1, 2, 1),
    "sort_dim": lambda L: L.sort(L.ones(2, 3), 2),
    "topk_k": lambda L: L.topk(L.ones(3), 4),
    "topk_dim": lambda L: L.topk(L.ones(3), 1, 1),
    "isclose_dtypes": lambda L: L.isclose(L.ones(3), L.ones(3, dtype=L.float64)),
    "isclose_number": lambda L: L.isclose(L.ones(3), 1.0),
    "allclose_shapes": lambda L: L.allclose(L.ones(3), L.ones(2)),
    "masked_select_int_mask": lambda L: L.masked_select(L.ones(2, 3), L.tensor([1, 0, 1])),
    "masked_select_shapes": lambda L: L.masked_select(L.ones(2, 3), L.tensor([True, False])),
    "repeat_few_dims": lambda L: L.ones(2, 3).repeat(2),
    "repeat_interleave_negative": lambda L: L.repeat_interleave(L.tensor([1, 2]), L.tensor([-1, 2])),
    "repeat_interleave_length": lambda L: L.repeat_interleave(L.ones(4), L.tensor([1, 2])),
    "unflatten_sizes": lambda L: L.ones(6).unflatten(0, (4, -1)),
    "var_mean_int": lambda L: L.var_mean(L.tensor([1, 2])),
    "from_numpy_list": lambda L: L.from_numpy([1, 2]),
    "from_numpy_str": lambda L: L.from_numpy(np.array(["a"])),
    "einsum_size": lambda L: L.einsum("ij,jk", L.ones(2, 3), L.ones(4, 4)),
    "einsum_ndim": lambda L: L.einsum("ij", L.ones(2, 3, 4)),
    "einsum_output_unknown": lambda L: L.einsum("ij->k", L.ones(2, 3)),
    "einsum_output_repeated": lambda L: L.einsum("ij->ii", L.ones(2, 3)),
    "einsum_few_operands": lambda L: L.einsum("ij,jk", L.ones(2, 3)),
    "einsum_many_operands": lambda L: L.einsum("ij", L.ones(2, 3), L.ones(3)),
    "einsum_character": lambda L: L.einsum("i1", L.ones(2, 3)),
    "einsum_dot": lambda L: L.einsum("i.j", L.ones(2, 3)),
    "einsum_diagonal_sizes": lambda L: L.einsum("ii", L.ones(2, 3)),
    "einsum_dtypes": lambda L: L.einsum("i,i", L.ones(3), L.ones(3, dtype=L.float64)),
}

@pytest.mark.parametrize("name", ERRORS)
def test_exception_types_match_torch(name):
    want = exception_type(ERRORS[name], torch)
    assert want is not None
    got = exception_type(ERRORS[name], mt)
    assert got is not None and issubclass(got, want), (got, want)

def torch_message(fn):
    with pytest.raises(Exception) as e: fn(torch.testing.assert_close, torch)
    return e.type, str(e.value)

CLOSE_FAILURES = {
    "float32": lambda ac, L: ac(L.tensor([1., 2., 3.]), L.tensor([1., 2.5, 3.])),
    "matrix": lambda ac, L: ac(L.tensor([[1., 2.], [3., 4.]]), L.tensor([[1., 2.5], [3., 0.]])),
    "int": lambda ac, L: ac(L.tensor([1, 2, 3]), L.tensor([1, 5, 3])),
    "bool": lambda ac, L: ac(L.tensor([True, False]), L.tensor([True, True])),
    "scalar_tensor": lambda ac, L: ac(L.tensor(1.), L.tensor(2.)),
    "one_element": lambda ac, L: ac(L.tensor([1.]), L.tensor([2.])),
    "python_floats": lambda ac, L: ac(1.0, 1.5),
    "python_ints": lambda ac, L: ac(1, 2),
    "float64": lambda ac, L: ac(L.ones(2, dtype=L.float64), L.ones(2, dtype=L.float64) * 2),
    "float16": lambda ac, L: ac(L.ones(2, dtype=L.float16), L.ones(2, dtype=L.float16) * 1.002),
    "nan": lambda ac, L: ac(L.tensor([float("nan")]), L.tensor([float("nan")])),
    "zero_expected": lambda ac, L: ac(L.tensor([0., 1.]), L.tensor([1., 0.])),
    "given_tolerances": lambda ac, L: ac(L.tensor([1., 2.]), L.tensor([1.1, 2.]), rtol=0.01, atol=0.0),
    "custom_msg": lambda ac, L: ac(L.tensor([1.]), L.tensor([2.]), msg="custom"),
    "list_item": lambda ac, L: ac([L.ones(2)], [L.ones(2) * 2]),
    "dict_item": lambda ac, L: ac({"a": L.ones(2)}, {"a": L.ones(2) * 2}),
    "lengths": lambda ac, L: ac([1, 2], [1, 2, 3]),
    "python_types": lambda ac, L: ac(1, 1.0),
}

@pytest.mark.parametrize("name", CLOSE_FAILURES)
def test_assert_close_fails_with_torchs_message(name):
    want_type, want = torch_message(CLOSE_FAILURES[name])
    with pytest.raises(want_type) as e: CLOSE_FAILURES[name](mt.testing.assert_close, mt)
    assert str(e.value) == want

@pytest.mark.parametrize("dev", DEVICES)
def test_assert_close_passes_and_refuses_like_torch(dev):
    ac = mt.testing.assert_close
    ac(mt.ones(3).to(dev), mt.ones(3).to(dev) * (1 + 1e-6))  # inside float32's rtol
    ac(mt.tensor([float("nan"), 1.]).to(dev), mt.tensor([float("nan"), 1.]).to(dev), equal_nan=True)
    ac(mt.ones(2), mt.ones(2, dtype=mt.float64), check_dtype=False)
    ac(mt.ones(0), mt.ones(0))
    ac((mt.ones(2), {"k": [1, 2.0]}), (mt.ones(2), {"k": [1, 2.0]}))
    ac(np.ones(2), np.ones(2))
    for bad, kind in (((mt.ones(2), mt.ones(3)), AssertionError), ((mt.ones(2), mt.ones(2, dtype=mt.float64)), AssertionError),
                      ((mt.ones(2), 1.0), TypeError), ((mt.ones(2), [1., 1.]), TypeError)):
        with pytest.raises(kind): ac(*bad)
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"): ac(mt.ones(2), mt.ones(2), rtol=1e-3)
    with pytest.raises(AssertionError, match="'shape' do not match"): ac(mt.ones(2), mt.ones(3))
    assert mt.testing.assert_close is mt.ops.assert_close

@pytest.mark.parametrize("dev", DEVICES)
def test_new_factories_keep_dtype_and_device(dev):
    base = mt.ones(2, dtype=mt.float64).to(dev)
    tb = torch.ones(2, dtype=torch.float64)
    for fn in (lambda x: x.new_zeros(2, 3), lambda x: x.new_ones((2,)), lambda x: x.new_full((2,), 3),
               lambda x: x.new_tensor([1, 2]), lambda x: x.new_zeros(2, dtype=(mt.int32 if isinstance(x, mt.Tensor)
                                                                                else torch.int32))):
        m, t = fn(base), fn(tb)
        check(m, t)
        assert m.device == dev and not m.requires_grad
    assert base.new_empty(3, 1).shape == (3, 1) and base.new_ones(2, requires_grad=True).requires_grad
    assert base.new_zeros(2, device="numpy").device == "numpy"

def test_from_numpy_shares_memory_and_as_tensor_copies_only_when_it_must():
    a = np.arange(4.)
    t = mt.from_numpy(a)
    a[0], t[1] = 9., -1.
    assert t.tolist() == [9., -1., 2., 3.] and a.tolist() == [9., -1., 2., 3.]
    assert t.dtype == mt.float64 and mt.from_numpy(np.ones(2, np.int16)).dtype == mt.int16
    assert np.shares_memory(mt.as_tensor(a).numpy(), a)
    assert not np.shares_memory(mt.as_tensor(a, dtype=mt.float32).numpy(), a)
    x = mt.ones(2)
    assert mt.as_tensor(x) is x and mt.as_tensor([1, 2]).dtype == mt.int64
    assert mt.as_tensor(x, dtype=mt.float64).dtype == mt.float64 and mt.as_tensor([1.], device="cpu").device == "cpu"

def test_inference_mode_is_a_context_manager_and_a_decorator():
    w = mt.ones(2, requires_grad=True)
    with mt.inference_mode(): assert not (w * 2).requires_grad and not mt.is_grad_enabled()
    with mt.inference_mode(False): assert (w * 2).requires_grad
    @mt.inference_mode()
    def f(v): return v * 2
    @mt.inference_mode
    def g(v): return v * 3
    assert not f(w).requires_grad and not g(w).requires_grad and g(w).tolist() == [3., 3.]
    assert (w * 2).requires_grad and mt.is_grad_enabled()

def test_function_forms_and_top_level_names():
    x = mt.tensor([[3., 1.], [2., 4.]])
    for name in ("cumsum", "cumprod", "logcumsumexp", "argsort", "msort", "tril", "triu", "diagonal", "diag"):
        got, want = getattr(mt, name), getattr(torch, name)
        args = (1,) if name in ("cumsum", "cumprod", "logcumsumexp") else ()
        check(got(x, *args), want(torch.tensor(x.numpy()), *args))
    check(mt.flip(input=x, dims=(0,)), torch.flip(torch.tensor(x.numpy()), dims=(0,)))
    assert mt.einsum is mt.ops.einsum and mt.testing.assert_close is mt.ops.assert_close

@pytest.mark.skipif(SIM, reason="this is the run under the simulator")
def test_every_op_on_cuda_under_the_simulator():
    "The same tests on device 'cuda', in a child process (NUMBA_ENABLE_CUDASIM must be set before Numba loads)."
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                             "-k", "cuda", str(Path(__file__))], env=env, capture_output=True, text=True,
                            timeout=1800, cwd=Path(__file__).parent.parent)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and " failed" not in result.stdout

@pytest.mark.parametrize("dev", [d for d in DEVICES if d != "numpy"])
def test_ndarray_namespace_scans_sorts_and_nonzero_match_numpy(dev):
    "The Array API functions chapter 05's namespace gained: cumulative_sum/prod (scans), argsort, sort, nonzero."
    from minitorch_nb import ndarray as nd
    a = np.array([[3, 1, 2, 2, 0], [5, -1, 0, 4, 4]], dtype=np.int32)
    f = rng.standard_normal((3, 5)).astype(np.float32)
    x, y = nd.array(a, device=dev), nd.array(f, device=dev)
    xp = x.__array_namespace__()
    def same(got, want):
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
        np.testing.assert_allclose(got.to_numpy(), want, rtol=2e-6)
    for axis in (0, 1, -1):
        same(xp.cumulative_sum(x, axis=axis), np.cumulative_sum(a, axis=axis))
        same(xp.cumulative_prod(x, axis=axis), np.cumulative_prod(a, axis=axis))
        same(xp.cumulative_sum(y, axis=axis), np.cumulative_sum(f, axis=axis))
        same(xp.cumulative_sum(x, axis=axis, include_initial=True), np.cumulative_sum(a, axis=axis, include_initial=True))
        same(xp.argsort(x, axis=axis), np.argsort(a, axis=axis, stable=True))
        same(xp.sort(y, axis=axis), np.sort(f, axis=axis))
    same(xp.argsort(x, axis=1, descending=True), torch.argsort(torch.tensor(a), dim=1, descending=True, stable=True).numpy())
    same(xp.sort(x[:, ::-2], axis=1, descending=True), -np.sort(-a[:, ::-2], axis=1))  # a strided view
    same(xp.cumulative_sum(x[:, 1:].mT, axis=0), np.cumulative_sum(a[:, 1:].T, axis=0))
    for got, want in zip(xp.nonzero(x), np.nonzero(a)): same(got, want)
    same(xp.cumulative_sum(nd.array(np.array([True, False, True]), device=dev)), np.cumulative_sum(np.array([True, False, True])))
    with pytest.raises(ValueError): xp.cumulative_sum(x)  # 2-d without an axis, as the Array API says
    with pytest.raises(ValueError): xp.nonzero(nd.array(np.array(1.0), device=dev))

@pytest.mark.parametrize("dev", DEVICES)
def test_repeat_interleave_of_counts_alone_and_one_element_repeats(dev):
    c, tc = mt.tensor([2, 0, 3]).to(dev), torch.tensor([2, 0, 3])
    check(mt.repeat_interleave(c), torch.repeat_interleave(tc))
    m, t = pair(X[:2, :3], dev)
    check(m.repeat_interleave(mt.tensor([2]).to(dev), dim=1), t.repeat_interleave(torch.tensor([2]), dim=1))

EDGES = {
 "cumsum0d": lambda L: L.cumsum(L.tensor(2.), 0), "cumsum_empty": lambda L: L.cumsum(L.ones(0, 3), 0),
 "cummax0d": lambda L: L.cummax(L.tensor(2.), 0), "cummin_empty": lambda L: L.cummin(L.ones(2, 0), 1),
 "lcse_inf": lambda L: L.logcumsumexp(L.tensor([-float("inf"), 0., -float("inf")]), 0),
 "lcse_allinf": lambda L: L.logcumsumexp(L.tensor([-float("inf"), -float("inf")]), 0),
 "prod0d": lambda L: L.prod(L.tensor(3.)), "prod0d_dim": lambda L: L.prod(L.tensor(3.), 0),
 "prod_empty": lambda L: L.prod(L.ones(0)), "prod_empty_dim": lambda L: L.ones(2, 0).prod(1),
 "roll0d": lambda L: L.roll(L.tensor(3.), 1), "roll0d_dim": lambda L: L.roll(L.tensor(3.), 1, 0),
 "roll_empty": lambda L: L.roll(L.ones(0, 2), 1, 0),
 "flip0d": lambda L: L.flip(L.tensor(3.), (0,)), "flip_empty_dims": lambda L: L.flip(L.ones(2), ()),
 "diag_empty": lambda L: L.diagonal(L.ones(2, 3), 5),
 "sort_empty": lambda L: L.sort(L.ones(0)), "topk0": lambda L: L.topk(L.ones(3), 0),
 "topk0d": lambda L: L.topk(L.tensor(2.), 1), "argsort0d": lambda L: L.argsort(L.tensor(2.)),
 "nonzero_empty": lambda L: L.nonzero(L.zeros(2, 3)), "nonzero0d_zero": lambda L: L.nonzero(L.tensor(0.)),
 "masked0d": lambda L: L.masked_select(L.tensor(2.), L.tensor(True)),
 "repeat0d": lambda L: L.tensor(2.).repeat(3), "repeat_zero": lambda L: L.ones(2).repeat(0),
 "ri0d": lambda L: L.repeat_interleave(L.tensor(2.), 3), "ri_dim_neg": lambda L: L.repeat_interleave(L.ones(2, 3), 2, dim=-1),
 "unflatten_neg": lambda L: L.ones(2, 6).unflatten(-1, (3, 2)),
 "einsum0d": lambda L: L.einsum("", L.tensor(3.)), "einsum_scalar_mul": lambda L: L.einsum(",i", L.tensor(2.), L.ones(2)),
 "einsum_ellipsis_out_only": lambda L: L.einsum("ij->...ij", L.ones(2, 2)),
 "tril_big_k": lambda L: L.tril(L.ones(2, 2), 5), "triu_neg_big": lambda L: L.triu(L.ones(2, 3), -5),
 "unfold_full": lambda L: L.arange(4.).unfold(0, 4, 3), "unfold_size0": lambda L: L.arange(4.).unfold(0, 0, 1),
 "isclose_int_atol": lambda L: L.isclose(L.tensor([1, 5]), L.tensor([2, 5]), atol=1, rtol=0),
 "isclose_bool": lambda L: L.isclose(L.tensor([True]), L.tensor([False])),
 "var_mean_all": lambda L: L.var_mean(L.arange(4.)), "std_mean_unb": lambda L: L.std_mean(L.arange(4.), 0, False),
 "cumsum_bool": lambda L: L.cumsum(L.tensor([True, True]), 0),
 "cummax_bool": lambda L: L.cummax(L.tensor([False, True, False]), 0),
 "sort_bool_desc": lambda L: L.sort(L.tensor([False, True, False]), descending=True, stable=True),
 "diag_neg_2d": lambda L: L.diag(L.arange(9.).reshape(3, 3), -1),
 "roll_neg": lambda L: L.roll(L.arange(5), -7),
}

def outcome(fn, lib):
    "An op's result as plain data, or the type of the exception it raised."
    try: r = fn(lib)
    except Exception as e: return type(e).__name__
    parts = list(r) if isinstance(r, tuple) else [r]
    return [(dtype_name(p.dtype), tuple(p.shape), np.asarray(p.detach().numpy() if isinstance(p, torch.Tensor)
             else p.detach().to("numpy").numpy()).tolist()) for p in parts]

@pytest.mark.parametrize("name", EDGES)
def test_empty_zero_dimensional_and_extreme_inputs_match_torch(name):
    got, want = outcome(EDGES[name], mt), outcome(EDGES[name], torch)
    if isinstance(want, str):  # an exception: ours must be of torch's type (or a subclass)
        assert isinstance(got, str) and issubclass(getattr(builtins, got), getattr(builtins, want)), (got, want)
    else: assert str(got) == str(want), (got, want)

def test_logcumsumexp_gradient_at_minus_infinity_is_the_exact_one():
    "PyTorch gives nan for the -inf element; its true derivative is 1 (out[0] = x[0]; later terms weigh exp(-inf))."
    y = mt.tensor([-float("inf"), 0., 1.], dtype=mt.float64, requires_grad=True)
    y.logcumsumexp(0).sum().backward()
    x = torch.tensor([-float("inf"), 0., 1.], dtype=torch.float64, requires_grad=True)
    x.logcumsumexp(0).sum().backward()
    assert torch.isnan(x.grad[0]) and y.grad.tolist()[0] == 1.0
    np.testing.assert_allclose(y.grad.numpy()[1:], x.grad.numpy()[1:], rtol=1e-12)

KEYWORDS = {
    "cumsum": lambda L, x: L.cumsum(input=x, dim=1, dtype=L.float64),
    "cumsum_axis": lambda L, x: L.cumsum(x, axis=1),
    "cumprod_axis": lambda L, x: x.cumprod(axis=0),
    "cummax": lambda L, x: L.cummax(input=x, dim=0),
    "logcumsumexp": lambda L, x: L.logcumsumexp(input=x, dim=1),
    "prod": lambda L, x: L.prod(input=x, dim=1, keepdim=True, dtype=L.float32),
    "tril": lambda L, x: L.tril(input=x, diagonal=-1),
    "roll": lambda L, x: L.roll(input=x, shifts=1, dims=0),
    "flip": lambda L, x: L.flip(input=x, dims=[1]),
    "diagonal": lambda L, x: L.diagonal(input=x, offset=-1, dim1=1, dim2=0),
    "diag": lambda L, x: L.diag(input=x, diagonal=1),
    "unfold": lambda L, x: x.unfold(dimension=1, size=2, step=2),
    "sort": lambda L, x: L.sort(input=x, dim=0, descending=True),
    "argsort": lambda L, x: L.argsort(input=x, dim=0),
    "topk": lambda L, x: L.topk(input=x, k=2, dim=1, largest=False, sorted=True),
    "isclose": lambda L, x: L.isclose(input=x, other=x * 1.001, rtol=1e-2, atol=0.0, equal_nan=False),
    "nonzero": lambda L, x: L.nonzero(input=x > 0, as_tuple=True),
    "masked_select": lambda L, x: L.masked_select(input=x, mask=x < 0),
    "repeat_interleave": lambda L, x: L.repeat_interleave(input=x, repeats=2, dim=0),
    "var_mean": lambda L, x: L.var_mean(x, dim=1, keepdim=True, correction=0),
    "unflatten": lambda L, x: L.unflatten(input=x, dim=1, sizes=(3, 2)),
    "new_full": lambda L, x: x.new_full(size=(2,), fill_value=1.5, dtype=L.float32),
}

@pytest.mark.parametrize("name", KEYWORDS)
def test_keyword_names_and_axis_alias_as_in_torch(name):
    m, t = pair(X, DEVICES[0], grad=False)
    check(KEYWORDS[name](mt, m), KEYWORDS[name](torch, t))
