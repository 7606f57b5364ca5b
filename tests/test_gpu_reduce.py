"""On a real GPU (bench/gpu_check.sh's "gpu tests" step; skipped without one, and under the simulator): chapter 06c's
tree reduction and chapter 07's max-pooling kernel.

- float32 rows of 100,000 values near 1e4: the sums over every axis are bit for bit `tree_sum_numpy`'s (the kernel's
  order of additions in numpy), variances as float64's, and means within 2 float32 steps of float64's;
- every reduction (sum, prod, max, min, any, all, mean, var, std, argmax, argmin), every axis and keepdims, against
  numpy, NaN included, with more outputs than the grid has blocks;
- batch_norm's statistics of data with a mean of 1e4 (tests/test_norm.py's case) against float64 and PyTorch on 'cuda';
- max_pool2d with many ties and NaNs: the positions of torch's rule (the first maximum, the last NaN), 20 runs alike."""
import numba
import numpy as np
import pytest
from numba import cuda

if numba.config.ENABLE_CUDASIM or not cuda.is_available():
    pytest.skip("needs a CUDA GPU (the simulator's checks are tests/cuda_sim_reduce.py and cuda_sim_conv.py)",
                allow_module_level=True)

import minitorch_nb as mt
import minitorch_nb.nn.functional as F
from minitorch_nb import ndarray as nd
from minitorch_nb.backends.cuda import reduce_config, tree_sum_numpy, sequential_sum_numpy

STEP = float(np.spacing(np.float32(1e4)))  # float32's spacing near 1e4: 2**-10

@pytest.fixture(scope="module")
def rows():
    return (1e4 + np.random.default_rng(0).standard_normal((64, 100_000))).astype(np.float32)

def on_gpu(a): return nd.array(a, device="cuda")

CONFIG = {}  # reduce_config's keywords for the backend's launches: the defaults on a GPU

def model_sum(rows, axis):
    """`tree_sum_numpy` in the order the backend folds: axis 0 (strided rows) first, then axis 1 (contiguous)."""
    threads = lambda total, n, step: reduce_config(total, n, step, **CONFIG)[1][1]
    (r, n), out = rows.shape, rows
    if axis in (None, 0): out = tree_sum_numpy(rows.T, threads(n, r, n))[None, :]  # (1, n)
    if axis in (None, 1): out = tree_sum_numpy(out, threads(out.shape[0], n, 1))[:, None]
    return out.reshape(-1) if axis is not None else out.reshape(())

@pytest.mark.parametrize("axis", [None, 0, 1])
def test_sums_are_the_kernels_order_bit_for_bit(rows, axis):
    x = mt.tensor(rows, device="cuda")
    dims = () if axis is None else (axis,)
    got = x.sum(*dims).to("numpy").numpy()
    want = model_sum(rows, axis)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert (got.view(np.int32) == want.view(np.int32)).all(), np.abs(got - want).max()
    count = rows.size if axis is None else rows.shape[axis]
    np.testing.assert_allclose(x.mean(*dims).to("numpy").numpy(), want / np.float32(count), rtol=2.4e-7, atol=0)
    exact = rows.astype(np.float64)
    np.testing.assert_allclose(x.var(*dims, unbiased=False).to("numpy").numpy(), exact.var(axis), rtol=1e-4)

def test_long_rows_keep_the_mean_within_float32_steps(rows):
    """Means of rows of 100,000 values near 1e4 (and of all 6.4 million): within 2 float32 steps of float64 (a
    correctly rounded float32 sum divided by n can already be a step off); summed left to right, thousands off."""
    exact = rows.astype(np.float64)
    x = mt.tensor(rows, device="cuda")
    tree_err = np.abs(x.mean(1).to("numpy").numpy() - exact.mean(1)).max()
    seq_err = np.abs(sequential_sum_numpy(rows) / np.float32(rows.shape[1]) - exact.mean(1)).max()
    assert tree_err < 2 * STEP and seq_err > 1000 * STEP, (tree_err, seq_err)
    assert abs(float(x.mean().item()) - exact.mean()) < 2 * STEP

def test_every_reduction_every_axis_and_keepdims():
    rng = np.random.default_rng(1)
    small, wide = rng.standard_normal((5, 6, 7)).astype(np.float32), rng.standard_normal((33, 300, 9)).astype(np.float32)
    small[1, 2, 3] = wide[4, 100, 2] = np.nan
    ints = rng.integers(-3, 4, (33, 300, 9))
    for a, names in ((small, ("sum", "prod", "max", "min", "mean", "var", "std")),
                     (wide, ("sum", "max", "min", "mean", "var")),
                     (np.where(np.isnan(wide), 0.5, wide) / 2 + 1, ("prod",)),
                     (ints, ("sum", "max", "min")), (wide > 1.5, ("any", "all"))):
        x = on_gpu(a)
        xp = x.__array_namespace__()
        for name in names:
            for axis in (None, 0, 1, 2, (0, 2), (1, 2)):
                for keepdims in (False, True):
                    got = getattr(xp, name)(x, axis=axis, keepdims=keepdims).to_numpy()
                    with np.errstate(all="ignore"):
                        want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
                    what = f"{name} {a.shape} {a.dtype} axis={axis} keepdims={keepdims}"
                    assert got.shape == want.shape and got.dtype == want.dtype, what
                    if want.dtype.kind == "f":
                        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, equal_nan=True, err_msg=what)
                    else:
                        np.testing.assert_array_equal(got, want, err_msg=what)
        if a.dtype.kind != "b":
            for axis in (0, 1, 2):
                np.testing.assert_array_equal(xp.argmax(x, axis=axis).to_numpy(), np.argmax(a, axis=axis))
                np.testing.assert_array_equal(xp.argmin(x, axis=axis).to_numpy(), np.argmin(a, axis=axis))

def test_batch_norm_statistics_of_data_far_from_zero():
    "tests/test_norm.py's test_batch_norm_statistics_are_stable on 'cuda', and against PyTorch's CUDA batch norm."
    arr = (1e4 + np.random.default_rng(0).standard_normal((16, 3, 40, 70))).astype(np.float32)
    y = F.batch_norm(mt.tensor(arr, device="cuda"), None, None, training=True).to("numpy").numpy()
    x64 = arr.astype(np.float64)
    ref = (arr - x64.mean((0, 2, 3), keepdims=True)) / np.sqrt(x64.var((0, 2, 3), keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, ref, atol=2e-3)
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available(): pytest.skip("PyTorch without CUDA")
    theirs = torch.nn.functional.batch_norm(torch.tensor(arr, device="cuda"), None, None, training=True)
    np.testing.assert_allclose(y, theirs.cpu().numpy(), atol=2e-3)

def test_max_pool2d_ties_and_nan_are_torchs_and_deterministic():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    a = rng.integers(0, 3, (4, 8, 32, 32)).astype(np.float32)  # many ties
    a[rng.random(a.shape) < 0.05] = np.nan                      # windows with one NaN and with several
    tv, ti = torch.nn.functional.max_pool2d(torch.tensor(a), 3, 1, 1, return_indices=True)
    nans = torch.isnan(torch.nn.functional.unfold(torch.tensor(a).reshape(32, 1, 32, 32), 3, padding=1)).sum(1)
    assert (nans >= 2).any() and (nans == 0).any()
    cpu = F.max_pool2d(mt.tensor(a, device="cpu"), 3, 1, 1, return_indices=True)[1].to("numpy").numpy()
    np.testing.assert_array_equal(cpu, ti.numpy())
    x = mt.tensor(a, device="cuda")
    for run in range(20):
        v, i = F.max_pool2d(x, 3, 1, 1, return_indices=True)
        np.testing.assert_array_equal(i.to("numpy").numpy(), ti.numpy(), err_msg=f"run {run}")
        np.testing.assert_array_equal(v.to("numpy").numpy(), tv.numpy(), err_msg=f"run {run}")
