"Chapter 06a: fused kernels (relu-affine, linear+ReLU), one-pass BatchNorm statistics, Newton rsqrt and a sigmoid table, against numpy/PyTorch float64 references."
import numpy as np
import pytest
import torch
from minitorch_nb.backends.cpu import (fused_relu_affine, linear_relu, bias_relu_kernel,
                                        batch_norm_stats, WELFORD_ROWS, rsqrt_newton, RSQRT_MAGIC, sigmoid_lut)

F32_EPS = float(np.finfo(np.float32).eps)


def f64(a): return torch.from_numpy(np.asarray(a, np.float64))


# ---- fused elementwise chain -------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1, 1), (3, 1000), (257, 33), (1024, 64)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_relu_affine_matches_torch(shape, dtype, rng):
    x = rng.standard_normal(shape).astype(dtype)
    scale, shift = rng.uniform(0.5, 2, shape[1]).astype(dtype), rng.standard_normal(shape[1]).astype(dtype)
    want = (2 * (torch.relu(f64(x)) * f64(scale) + f64(shift)) + 1).numpy()
    got = fused_relu_affine(x, scale, shift)
    assert got.dtype == dtype and got.shape == shape
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, atol=4 * np.finfo(dtype).eps)


def test_fused_relu_affine_alpha_beta_in_place_and_strided(rng):
    x = rng.standard_normal((50, 40)).astype(np.float32)
    scale, shift = rng.standard_normal(20).astype(np.float32), rng.standard_normal(20).astype(np.float32)
    view = x[:, ::2]  # non-contiguous input
    want = (-0.5 * (torch.relu(f64(view)) * f64(scale) + f64(shift)) + 3).numpy()
    np.testing.assert_allclose(fused_relu_affine(view, scale, shift, alpha=-0.5, beta=3), want, rtol=1e-6, atol=1e-6)
    y = x.copy()
    out = fused_relu_affine(y, np.ones(40, np.float32), np.zeros(40, np.float32), alpha=1, beta=0, out=y)
    assert out is y
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_fused_relu_affine_propagates_nan_like_torch():
    x = np.array([[np.nan, -1.0, 2.0]], np.float32)
    got = fused_relu_affine(x, np.ones(3, np.float32), np.zeros(3, np.float32))
    want = (2 * torch.relu(torch.from_numpy(x)) + 1).numpy()
    np.testing.assert_array_equal(got, want)  # [nan, 1, 5]


def test_fused_relu_affine_errors():
    x = np.zeros((4, 3), np.float32)
    with pytest.raises(ValueError, match=r"scale must have shape \(3,\).*got \(2,\)"):
        fused_relu_affine(x, np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match=r"shift must have shape \(3,\)"):
        fused_relu_affine(x, np.ones(3), np.ones((1, 3)))
    with pytest.raises(ValueError, match=r"x must have shape \(N, C\), got \(3,\)"):
        fused_relu_affine(np.zeros(3), np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match=r"out has shape \(3, 4\), x has \(4, 3\)"):
        fused_relu_affine(x, np.ones(3), np.ones(3), out=np.zeros((3, 4), np.float32))


# ---- linear + ReLU with a fused epilogue ------------------------------------------------------------------

@pytest.mark.parametrize("n, n_in, n_out", [(1, 1, 1), (7, 45, 300), (64, 256, 128)])
def test_linear_relu_matches_torch(n, n_in, n_out, rng):
    x = rng.standard_normal((n, n_in)).astype(np.float32)
    w = rng.standard_normal((n_out, n_in)).astype(np.float32)
    b = rng.standard_normal(n_out).astype(np.float32)
    want = torch.relu(torch.nn.functional.linear(f64(x), f64(w), f64(b))).numpy()
    got = linear_relu(x, w, b)
    assert got.dtype == np.float32 and got.shape == (n, n_out)
    # float32 dot products of length n_in: error bounded by ~n_in * eps * sum|x_i w_i|
    bound = n_in * F32_EPS * (np.abs(x).astype(np.float64) @ np.abs(w).T.astype(np.float64) + np.abs(b))
    assert (np.abs(got - want) <= bound).all()
    assert ((got == 0) == (want == 0)).mean() > 0.99  # the same outputs are cut by the ReLU


def test_linear_relu_float64_and_bias_epilogue_kernel(rng):
    x, w, b = rng.standard_normal((9, 5)), rng.standard_normal((4, 5)), rng.standard_normal(4)
    want = torch.relu(torch.nn.functional.linear(f64(x), f64(w), f64(b))).numpy()
    np.testing.assert_allclose(linear_relu(x, w, b), want, rtol=1e-12, atol=1e-12)
    out = np.array([[-1.0, 0.5], [2.0, -3.0]])
    bias_relu_kernel(out, np.array([0.5, 1.0]))
    np.testing.assert_array_equal(out, [[0.0, 1.5], [2.5, 0.0]])


def test_linear_relu_errors():
    x, w = np.zeros((3, 5), np.float32), np.zeros((4, 5), np.float32)
    with pytest.raises(ValueError, match=r"must agree on in; got x \(3, 5\), weight \(5, 4\)"):
        linear_relu(x, w.T, np.zeros(4, np.float32))
    with pytest.raises(ValueError, match=r"bias must have shape \(4,\) for weight \(4, 5\), got \(5,\)"):
        linear_relu(x, w, np.zeros(5, np.float32))


# ---- BatchNorm statistics -----------------------------------------------------------------------------------

@pytest.mark.parametrize("rows", [1, 2, WELFORD_ROWS - 1, WELFORD_ROWS, 3 * WELFORD_ROWS + 17])
def test_batch_norm_stats_float64_against_numpy_and_torch(rows, rng):
    x = rng.standard_normal((rows, 7)) * rng.uniform(0.1, 10, 7) + rng.uniform(-5, 5, 7)
    mean, var = batch_norm_stats(x)
    assert mean.dtype == var.dtype == np.float64
    np.testing.assert_allclose(mean, x.mean(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(var, x.var(axis=0), rtol=1e-10, atol=1e-12)
    tvar, tmean = torch.var_mean(torch.from_numpy(x), dim=0, correction=0)
    np.testing.assert_allclose(var, tvar.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mean, tmean.numpy(), rtol=1e-12, atol=1e-12)


def test_batch_norm_stats_float32_with_a_large_mean(rng):
    # E[x^2] - E[x]^2 in float32 is meaningless here (relative error ~ eps * 1e8); Welford in float64 is not.
    x = (1e4 + rng.standard_normal((5000, 6))).astype(np.float32)
    mean, var = batch_norm_stats(x)
    assert mean.dtype == var.dtype == np.float32
    ref = x.astype(np.float64)
    # the only error left is rounding the float64 result to float32 (half an ulp) plus float64 accumulation
    np.testing.assert_allclose(mean, ref.mean(axis=0), rtol=F32_EPS, atol=0)
    np.testing.assert_allclose(var, ref.var(axis=0), rtol=F32_EPS, atol=0)
    tvar, _ = torch.var_mean(torch.from_numpy(ref), dim=0, correction=0)
    np.testing.assert_allclose(var, tvar.numpy(), rtol=F32_EPS, atol=0)


def test_batch_norm_stats_strided_and_constant_columns(rng):
    x = rng.standard_normal((300, 10))
    x[:, 3] = 2.5  # a constant channel: variance exactly 0
    view = x[::3, ::2]
    mean, var = batch_norm_stats(view)
    np.testing.assert_allclose(mean, view.mean(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(var, view.var(axis=0), rtol=1e-10, atol=1e-14)
    assert (var >= 0).all()
    single = batch_norm_stats(x[:1])
    np.testing.assert_array_equal(single[0], x[0]); np.testing.assert_array_equal(single[1], np.zeros(10))


def test_batch_norm_stats_errors():
    with pytest.raises(ValueError, match=r"must have shape \(N, C\) with N >= 1, got \(5,\)"):
        batch_norm_stats(np.zeros(5))
    with pytest.raises(ValueError, match=r"got \(0, 3\)"):
        batch_norm_stats(np.zeros((0, 3)))
    with pytest.raises(TypeError, match="must be a float array, got int64"):
        batch_norm_stats(np.zeros((4, 3), np.int64))


# ---- Newton reciprocal square root -------------------------------------------------------------------------

def test_rsqrt_newton_converges_quadratically_over_the_float32_range(rng):
    x = (np.float32(10.0) ** rng.uniform(-37, 38, 50000)).astype(np.float32)
    exact = 1 / np.sqrt(x.astype(np.float64))
    # Newton for 1/sqrt: a relative error e becomes -(3/2)e^2 - (1/2)e^3; float32 adds a few roundings per step
    bound = 0.0345  # the bit-trick guess: worst case 0.034366 over every float32 in [1, 4) (the error has period 4)
    for steps in range(4):
        err = np.abs(rsqrt_newton(x, steps) / exact - 1).max()
        assert err <= bound + 4 * F32_EPS, (steps, err, bound)
        bound = 1.5 * bound**2 + 0.5 * bound**3
    assert np.abs(rsqrt_newton(x) / exact - 1).max() <= 3 * F32_EPS  # float32-accurate after 3 steps


def test_rsqrt_newton_exact_values_and_shapes():
    got = rsqrt_newton(np.array([[1.0, 4.0], [0.25, 16.0]], np.float32))
    assert got.shape == (2, 2) and got.dtype == np.float32
    np.testing.assert_allclose(got, [[1.0, 0.5], [2.0, 0.25]], rtol=2 * F32_EPS)
    np.testing.assert_allclose(rsqrt_newton(2.0), 1 / np.sqrt(2.0), rtol=2 * F32_EPS)
    tiny, huge = np.finfo(np.float32).tiny, np.finfo(np.float32).max
    np.testing.assert_allclose(rsqrt_newton([tiny, huge]), 1 / np.sqrt(np.array([tiny, huge], np.float64)), rtol=3 * F32_EPS)
    assert RSQRT_MAGIC == 0x5F375A7E


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan, 1e-40])
def test_rsqrt_newton_rejects_what_the_bit_trick_cannot_handle(bad):
    with pytest.raises(ValueError, match="positive, finite, normal float32"):
        rsqrt_newton(np.array([1.0, bad], np.float32))


# ---- sigmoid from a table ----------------------------------------------------------------------------------

@pytest.mark.parametrize("entries", [2, 8, 32, 256])
def test_sigmoid_lut_within_the_interpolation_bound(entries):
    x = np.linspace(-50, 50, 300001)
    exact = torch.sigmoid(f64(x)).numpy()
    h = 8.0 / (entries - 1)
    interpolation = h**2 / 8 / (6 * np.sqrt(3))  # h^2/8 * max|sigma''|
    saturation = 1 - 1 / (1 + np.exp(-8.0))
    err = np.abs(sigmoid_lut(x, entries) - exact).max()
    assert err <= max(interpolation, saturation) + 1e-15


def test_sigmoid_lut_exact_at_the_knots_symmetric_and_typed():
    knots = np.linspace(0, 8, 32)
    np.testing.assert_allclose(sigmoid_lut(knots), torch.sigmoid(f64(knots)).numpy(), rtol=0, atol=1e-15)
    np.testing.assert_allclose(sigmoid_lut(-knots), torch.sigmoid(f64(-knots)).numpy(), rtol=0, atol=1e-15)
    x32 = np.array([-3.0, 0.0, 0.7, 100.0], np.float32)
    got = sigmoid_lut(x32)
    assert got.dtype == np.float32 and got[1] == 0.5
    assert sigmoid_lut(np.array([3, -3])).dtype == np.float64
    np.testing.assert_array_equal(np.isnan(sigmoid_lut(np.array([np.nan, 1.0]))), [True, False])
    np.testing.assert_allclose(sigmoid_lut(np.array([np.inf, -np.inf])), [1 / (1 + np.exp(-8.0)), 1 - 1 / (1 + np.exp(-8.0))])


def test_sigmoid_lut_errors():
    with pytest.raises(ValueError, match="at least 2 entries, got 1"):
        sigmoid_lut(np.zeros(3), entries=1)
