"Chapter 06a: the Numba CPU kernels (device 'cpu') against numpy and PyTorch, on strided and broadcast layouts."
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st, HealthCheck
import minitorch_nb as mt
from minitorch_nb import ndarray as nd
from minitorch_nb.backends import cpu as bc
from minitorch_nb.autograd import tensor
from oracle import assert_close

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def numba_kernels_only():
    "Switch off the backend's numpy fast paths, so that every op below runs its Numba kernel whatever its size."
    bc.cpu_backend.fast_paths = False
    yield
    bc.cpu_backend.fast_paths = True


@pytest.mark.parametrize("fast_paths", [True, False])
def test_fast_paths_and_kernels_agree_over_parallel_min(fast_paths, rng):
    bc.cpu_backend.fast_paths = fast_paths
    a = rng.standard_normal((1100, 256)).astype(np.float32)  # 281600 elements: over PARALLEL_MIN
    assert a.size >= bc.PARALLEL_MIN
    x = nd.array(a, device="cpu")
    xp = x.__array_namespace__()
    np.testing.assert_allclose((x + 1.5).to_numpy(), a + 1.5, rtol=1e-6)
    np.testing.assert_allclose((x.T * x.T).to_numpy(), a.T * a.T, rtol=1e-6)
    np.testing.assert_allclose(xp.exp(x).to_numpy(), np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(xp.sum(x, axis=0).to_numpy(), a.sum(0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(xp.sum(x, axis=1).to_numpy(), a.sum(1), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(xp.max(x[::-1], axis=0).to_numpy(), a[::-1].max(0))
    np.testing.assert_array_equal(x.T.compact().to_numpy(), a.T)


def strided_pair(rng, data, dtype=np.float32):
    "A random numpy array and the same values as an NDArray on 'cpu', both seen through the same random view."
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    a = (rng.standard_normal(shape) * 3).astype(dtype)
    x = nd.array(a, device="cpu")
    kind = data.draw(st.sampled_from(["none", "slice", "permute", "flip"]))
    if kind == "slice":
        idx = tuple(slice(data.draw(st.integers(0, max(n - 1, 0))), None, data.draw(st.sampled_from([1, 2]))) for n in shape)
        a, x = a[idx], x[idx]
    elif kind == "permute":
        axes = tuple(data.draw(st.permutations(range(len(shape)))))
        a, x = a.transpose(axes), x.permute_dims(axes)
    elif kind == "flip":
        a, x = a[::-1], x[::-1]
    return a, x


def test_position_of_matches_chapter_05_helpers():
    shape, strides, offset = np.array([3, 4, 5]), np.array([1, 3, 12]), 7
    index = np.zeros(3, np.int64)
    for ordinal in range(60):
        nd.to_index(ordinal, shape, index)
        assert bc.position_of(ordinal, shape, strides, offset, 3) == nd.index_to_position(index, strides, offset)
        assert bc.cpu_position_of(ordinal, shape, strides, offset, 3) == nd.index_to_position(index, strides, offset)


def test_coalesce_merges_only_what_every_operand_allows():
    assert [list(v) for v in bc.coalesce((2, 3, 4), (12, 4, 1), (12, 4, 1))] == [[24], [1], [1]]
    assert [list(v) for v in bc.coalesce((2, 3, 4), (12, 4, 1), (0, 4, 1))] == [[2, 12], [12, 1], [0, 1]]
    assert [list(v) for v in bc.coalesce((1, 1), (5, 1))] == [[1], [0]]


@settings(max_examples=40, **SETTINGS)
@given(st.data())
def test_elementwise_on_views_matches_numpy(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a, x = strided_pair(rng, data)
    b = a[..., :1] * 0.5 + 1  # broadcasts along the last dimension (stride 0 after broadcasting)
    xb = nd.array(np.ascontiguousarray(b), device="cpu")
    xp = x.__array_namespace__()
    tol = dict(rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose((x + xb).to_numpy(), a + b, **tol)
    np.testing.assert_allclose((x * 2.5 - xb).to_numpy(), a * 2.5 - b, **tol)
    np.testing.assert_allclose((x / xb).to_numpy(), a / b, **tol)
    np.testing.assert_allclose(xp.exp(x).to_numpy(), np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(xp.tanh(x).to_numpy(), np.tanh(a), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(xp.log(xp.abs(x) + 1).to_numpy(), np.log(np.abs(a) + 1), rtol=1e-6)
    np.testing.assert_array_equal((x > xb).to_numpy(), a > b)
    np.testing.assert_array_equal(xp.maximum(x, 0.0).to_numpy(), np.maximum(a, 0))
    np.testing.assert_array_equal(xp.where(x > 0, x, xb).to_numpy(), np.where(a > 0, a, b))
    np.testing.assert_array_equal(x.astype(np.float64).to_numpy(), a.astype(np.float64))
    np.testing.assert_array_equal(x.compact().to_numpy(), a)


@settings(max_examples=40, **SETTINGS)
@given(st.data())
def test_reductions_on_views_match_numpy(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a, x = strided_pair(rng, data)
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    keep = data.draw(st.booleans())
    xp = x.__array_namespace__()
    np.testing.assert_allclose(xp.sum(x, axis=axis, keepdims=keep).to_numpy(), a.sum(axis=axis, keepdims=keep),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(xp.max(x, axis=axis, keepdims=keep).to_numpy(), a.max(axis=axis, keepdims=keep))
    np.testing.assert_array_equal(xp.min(x, axis=axis, keepdims=keep).to_numpy(), a.min(axis=axis, keepdims=keep))
    np.testing.assert_array_equal(xp.argmax(x, axis=axis, keepdims=keep).to_numpy(), a.argmax(axis=axis, keepdims=keep))
    np.testing.assert_array_equal(xp.any(x > 1, axis=axis).to_numpy(), (a > 1).any(axis=axis))


def test_nan_rules_match_numpy():
    a = np.array([[1.0, np.nan, 3.0], [np.nan, -1.0, 2.0], [0.0, 5.0, 4.0]], np.float32)
    x = nd.array(a, device="cpu")
    xp = x.__array_namespace__()
    for axis in (0, 1):
        np.testing.assert_array_equal(xp.max(x, axis=axis).to_numpy(), a.max(axis=axis))
        np.testing.assert_array_equal(xp.min(x, axis=axis).to_numpy(), a.min(axis=axis))
        np.testing.assert_array_equal(xp.argmax(x, axis=axis).to_numpy(), a.argmax(axis=axis))
        np.testing.assert_array_equal(xp.argmin(x, axis=axis).to_numpy(), a.argmin(axis=axis))
    np.testing.assert_array_equal(xp.maximum(x, x.T).to_numpy(), np.maximum(a, a.T))


def test_integer_and_bool_kernels_match_numpy(rng):
    a = rng.integers(-50, 50, (4, 6))
    b = rng.integers(1, 7, (6,))
    x, y = nd.array(a, device="cpu"), nd.array(b, device="cpu")
    for got, want in [(x + y, a + b), (x * y, a * b), (x // y, a // b), (x % y, a % b), (x / y, a / b),
                      (x - y, a - b), (x.sum(axis=0), a.sum(axis=0)), (x.prod(axis=1), a.prod(axis=1)),
                      (x.abs(), np.abs(a)), ((x > 0) & (y > 3), (a > 0) & (b > 3)), (~(x > 0), ~(a > 0)),
                      (x @ x.T, a @ a.T), (x[:, ::2] @ x.T[::2], a[:, ::2] @ a.T[::2])]:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got.to_numpy(), want)


def test_gather_scatter_and_setitem(rng):
    a = rng.standard_normal((5, 4)).astype(np.float32)
    x = nd.array(a, device="cpu")
    np.testing.assert_array_equal(x[[4, 0, 0]].to_numpy(), a[[4, 0, 0]])
    np.testing.assert_array_equal(x[x > 0].to_numpy(), a[a > 0])
    x[[1, 1, 3]] = nd.array(np.array([7.0], np.float32), device="cpu")
    a[[1, 1, 3]] = 7.0
    np.testing.assert_array_equal(x.to_numpy(), a)
    acc, acc_np = nd.array(np.zeros(4, np.float32), device="cpu"), np.zeros(4, np.float32)
    np.add.at(acc, np.array([0, 2, 2, 2]), nd.array(np.array([1.0, 2.0, 3.0, 4.0], np.float32), device="cpu"))
    np.add.at(acc_np, np.array([0, 2, 2, 2]), np.array([1.0, 2.0, 3.0, 4.0], np.float32))
    np.testing.assert_array_equal(acc.to_numpy(), acc_np)  # repeated indices add up
    x[1:4:2, ::-1] = nd.array(np.arange(4, dtype=np.float32), device="cpu")
    a[1:4:2, ::-1] = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(x.to_numpy(), a)


@pytest.mark.parametrize("path", ["blas", "tiled", "strided"])
@pytest.mark.parametrize("shape", [((33, 17), (17, 20)), ((1, 5), (5, 1)), ((3, 4, 6), (6, 5)), ((2, 1, 3, 4), (5, 4, 2))])
def test_matmul_paths_match_torch(path, shape, rng):
    sa, sb = shape
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    backend = nd.get_backend("cpu")
    old, backend.matmul_path = backend.matmul_path, path
    try:
        got = (nd.array(a, device="cpu") @ nd.array(b, device="cpu")).to_numpy()
        got_t = (nd.array(a, device="cpu").mT.compact().mT @ nd.array(b, device="cpu")).to_numpy()  # strided input
    finally:
        backend.matmul_path = old
    want = (torch.tensor(a) @ torch.tensor(b)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_t, want, rtol=1e-5, atol=1e-5)


def test_tiled_kernel_on_sizes_that_are_not_multiples_of_the_tiles(rng):
    for m, k, n in [(1, 1, 1), (65, 257, 513), (130, 3, 7)]:
        a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        out = np.full((m, n), np.nan)
        bc.matmul_tiled_kernel(out, a, b)
        np.testing.assert_allclose(out, a @ b, rtol=1e-10, atol=1e-10)


def test_every_row_of_the_op_table_has_a_kernel():
    assert set(bc.cpu_backend.kernels) == set(nd.OPS)
    assert all(kernel is getattr(bc, f"{name}_kernel") for name, kernel in bc.cpu_backend.kernels.items())
    assert bc.NUMPY_SIMD_OPS <= set(nd.OPS), bc.NUMPY_SIMD_OPS - set(nd.OPS)  # the fast path names table rows


def test_float16_and_rows_added_after_import_fall_back_to_numpy(monkeypatch):
    x = nd.array(np.array([1.0, 2.0], np.float16), device="cpu")  # Numba has no float16 arrays
    np.testing.assert_array_equal((x + x).to_numpy(), np.array([2.0, 4.0], np.float16))
    y = nd.array(np.array([1.0, -1.0]), device="cpu")
    np.testing.assert_allclose(y.__array_namespace__().atan2(y, y).to_numpy(), np.arctan2([1.0, -1.0], [1.0, -1.0]))
    monkeypatch.setattr(nd, "OPS", dict(nd.OPS))
    monkeypatch.setattr(nd, "_ELEMENTWISE_UFUNCS", dict(nd._ELEMENTWISE_UFUNCS))
    monkeypatch.setattr(nd.ArrayNamespace, "hypot", None, raising=False)
    nd.add_op(nd.Op("hypot", "binary", np.hypot, lambda u, v: np.sqrt(u * u + v * v), "hypot"))
    assert "hypot" not in bc.cpu_backend.kernels  # no compiled kernel: the row runs numpy's loop
    np.testing.assert_allclose(y.__array_namespace__().hypot(y, y * 2.0).to_numpy(), np.hypot([1.0, -1.0], [2.0, -2.0]))


def test_cached_kernels_follow_an_edited_scalar_function(tmp_path):
    """Numba checks a cached kernel against its own file only, and the scalar functions live in ndarray.py:
    a copy of the package whose ndarray.py changes a row's scalar function must not load the old kernel."""
    import os, shutil, subprocess, sys
    from pathlib import Path
    shutil.copytree(Path(mt.__file__).parent, tmp_path / "minitorch_nb", ignore=shutil.ignore_patterns("__pycache__"))
    probe = ("import numpy as np; from minitorch_nb.backends import cpu; x, o, s = np.array([1.5]), np.empty(1), "
             "np.array([1]); cpu.negative_kernel(o, s, 0, x, s, 0, s); "
             "print(o[0], sum(cpu.negative_kernel.stats.cache_hits.values()))")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    def run():
        out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout.split()
    assert run() == ["-1.5", "0"]  # compiled, and written to the cache
    assert run() == ["-1.5", "1"]  # loaded from the cache
    source = tmp_path / "minitorch_nb" / "ndarray.py"
    row = 'Op("negative", "unary", np.negative, lambda x: -x,'
    assert source.read_text().count(row) == 1
    source.write_text(source.read_text().replace(row, row.replace("lambda x: -x,", "lambda x: -x - 1,")))
    assert run() == ["-2.5", "0"]  # the edited function: compiled again, not loaded from the stale cache
    assert run() == ["-2.5", "1"]


def test_tensor_ops_and_gradients_on_cpu_match_torch(rng):
    a0, b0 = rng.standard_normal((4, 5)), rng.standard_normal((5,))
    a, b = tensor(a0, device="cpu", requires_grad=True), tensor(b0, device="cpu", requires_grad=True)
    ta, tb = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    out = ((a * b).exp().sum(dim=1) / (a.T @ a).sum() + mt.log_softmax(a, dim=0)[1:].sum()).sum()
    tout = ((ta * tb).exp().sum(dim=1) / (ta.T @ ta).sum() + torch.log_softmax(ta, dim=0)[1:].sum()).sum()
    out.backward(); tout.backward()
    assert out.device == "cpu" and a.grad.device == "cpu"
    assert_close(out, tout)
    assert_close(a.grad, ta.grad)
    assert_close(b.grad, tb.grad)


def test_cpu_and_numpy_training_give_the_same_losses():
    def losses(device):
        g = np.random.default_rng(3)
        X, Y = g.standard_normal((32, 6)).astype(np.float32), g.standard_normal((32, 2)).astype(np.float32)
        w = tensor(g.standard_normal((6, 2)).astype(np.float32) * 0.1, device=device, requires_grad=True)
        xb, yb, out = tensor(X, device=device), tensor(Y, device=device), []
        for _ in range(10):
            loss = ((xb @ w).tanh() - yb).pow(2).mean() if hasattr(w, "pow") else (((xb @ w).tanh() - yb) ** 2).mean()
            loss.backward()
            with mt.no_grad():
                w -= 0.3 * w.grad
                w.grad.zero_()
            out.append(loss.item())
        return np.array(out)
    np.testing.assert_allclose(losses("cpu"), losses("numpy"), rtol=1e-5)


def test_cuda_without_a_gpu_says_so():
    if mt.cuda.is_available(): pytest.skip("a GPU (or the simulator) is present")
    with pytest.raises(RuntimeError, match="not available"):
        tensor([1.0]).to("cuda")
