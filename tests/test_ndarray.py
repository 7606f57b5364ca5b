"Chapter 05: NDArray views, kernels and the Array API seam, checked against numpy and PyTorch."
import tracemalloc
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st, HealthCheck
import minitorch_nb as mt
from minitorch_nb import ndarray as nd
from minitorch_nb.ndarray import NDArray
from minitorch_nb.autograd import tensor  # the factory (mt.tensor), whatever the package namespace holds

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
BACKENDS = ["strided", "python"]  # vectorised numpy kernels and the Python reference loops


def numpy_layout(a):
    "(shape, element strides, storage offset) of a numpy array, through the chapter's helpers."
    return a.shape, nd.element_strides(a), nd.numpy_storage(a)[1]


def check_same(x, a):
    "NDArray x and numpy array a: same values, shape, dtype; same strides on dims of size > 1; same offset."
    assert isinstance(x, NDArray)
    assert x.shape == a.shape and x.dtype == a.dtype
    np.testing.assert_array_equal(x.to_numpy(), a)
    _, strides, offset = numpy_layout(a)
    assert [s for n, s in zip(x.shape, x.strides) if n > 1] == [s for n, s in zip(a.shape, strides) if n > 1]
    if a.size: assert x.offset == offset
    # metadata consistency: every element sits where index_to_position says
    if x.size:
        assert np.array_equal(x.buffer[x.positions().ravel()], a.ravel())
        for k, index in enumerate(np.ndindex(*x.shape)):
            if k % 7 == 0: assert x.buffer[nd.index_to_position(index, x.strides, x.offset)] == a[index]


def draw_reshape(data, shape):
    "A random shape with the same number of elements (size-1 dimensions sprinkled in)."
    n = int(np.prod(shape))
    dims = []
    while n > 1:
        divisors = [d for d in range(2, n + 1) if n % d == 0]
        d = data.draw(st.sampled_from(divisors))
        dims.append(d)
        n //= d
    for _ in range(data.draw(st.integers(0, 2))):
        dims.insert(data.draw(st.integers(0, len(dims))), 1)
    return tuple(data.draw(st.permutations(dims))) if dims else ()


def apply_random_op(data, a, x):
    "Draw one view-making op, apply it to numpy array `a` and NDArray `x`; also check reshape's view/copy choice."
    kind = data.draw(st.sampled_from(["slice", "int", "permute", "broadcast", "reshape", "newaxis"]))
    if kind == "slice" and a.ndim:
        idx = tuple(slice(data.draw(st.none() | st.integers(-n - 1, n + 1)), data.draw(st.none() | st.integers(-n - 1, n + 1)),
                          data.draw(st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3]))) for n in a.shape)
        return a[idx + (Ellipsis,)], x[idx]  # the Ellipsis keeps numpy from returning a scalar copy
    if kind == "int" and a.ndim and all(a.shape):
        d = data.draw(st.integers(0, a.ndim - 1))
        idx = (slice(None),) * d + (data.draw(st.integers(-a.shape[d], a.shape[d] - 1)),)
        return a[idx + (Ellipsis,)], x[idx]  # the Ellipsis keeps numpy from returning a scalar copy
    if kind == "permute" and a.ndim:
        axes = tuple(data.draw(st.permutations(range(a.ndim))))
        return a.transpose(axes), x.permute_dims(axes)
    if kind == "broadcast":
        shape = tuple(data.draw(st.integers(1, 3)) if n == 1 else n for n in a.shape)
        shape = tuple(data.draw(st.lists(st.integers(1, 3), max_size=1))) + shape
        return np.broadcast_to(a, shape), x.broadcast_to(shape)
    if kind == "reshape" and a.size:
        shape = draw_reshape(data, a.shape)
        try:
            np.reshape(a, shape, copy=False)
            numpy_views = True
        except ValueError:
            numpy_views = False
        ours = x.reshape(shape)
        assert nd.shares_memory(ours, x) == numpy_views, (a.shape, a.strides, shape)
        if not numpy_views:
            with pytest.raises(ValueError, match="without copying"): x.reshape(shape, copy=False)
        return np.reshape(a, shape), ours
    if kind == "newaxis":
        d = data.draw(st.integers(0, a.ndim))
        idx = (slice(None),) * d + (None,)
        return a[idx + (Ellipsis,)], x[idx]  # the Ellipsis keeps numpy from returning a scalar copy
    return a, x


@settings(max_examples=300, **SETTINGS)
@given(st.data())
def test_view_chains_match_numpy(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=0, max_size=4)))
    order = data.draw(st.sampled_from("CF"))
    a = np.asarray(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape), order=order)
    x = nd.array(a, order=order)
    assert x.strides == nd.strides_for(shape, order)
    check_same(x, a)
    for _ in range(data.draw(st.integers(1, 5))):
        a, x = apply_random_op(data, a, x)
        check_same(x, a)
    c = x.compact()
    assert c.is_contiguous() and np.array_equal(c.to_numpy(), a)
    assert (c is x) == x.is_contiguous()
    assert x.is_contiguous() == nd.is_contiguous_layout(a.shape, nd.element_strides(a)) or a.size <= 1


@settings(max_examples=60, **SETTINGS)
@given(st.data(), st.sampled_from(BACKENDS))
def test_elementwise_and_reductions_on_views_match_numpy(data, device):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    a = rng.standard_normal(shape).astype(np.float32)
    x = nd.array(a, device=device)
    for _ in range(data.draw(st.integers(0, 3))):
        a, x = apply_random_op(data, a, x)
    xp = x.__array_namespace__()
    tol = dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xp.exp(x).to_numpy(), np.exp(a), **tol)
    np.testing.assert_array_equal((x * 2.5 - x).to_numpy(), a * 2.5 - a)
    assert (x * 2.5).dtype == np.float32 and (x / 3).dtype == np.float32  # Python numbers don't upcast
    np.testing.assert_array_equal((x > 0).to_numpy(), a > 0)
    np.testing.assert_array_equal(xp.maximum(x, 0.0).to_numpy(), np.maximum(a, 0))
    np.testing.assert_array_equal(xp.where(x > 0, x, -x).to_numpy(), np.where(a > 0, a, -a))
    if a.size:
        axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1)) if a.ndim else None
        keep = data.draw(st.booleans())
        np.testing.assert_allclose(xp.sum(x, axis=axis, keepdims=keep).to_numpy(), np.sum(a, axis=axis, keepdims=keep), **tol)
        np.testing.assert_array_equal(xp.max(x, axis=axis, keepdims=keep).to_numpy(), np.max(a, axis=axis, keepdims=keep))
        np.testing.assert_array_equal(xp.argmax(x, axis=axis, keepdims=keep).to_numpy(),
                                      np.argmax(a, axis=axis, keepdims=keep))
    if a.ndim >= 2:
        np.testing.assert_allclose((x.mT @ x).to_numpy(), a.swapaxes(-1, -2) @ a, **tol)


@settings(max_examples=150, **SETTINGS)
@given(st.data(), st.sampled_from(BACKENDS))
def test_setitem_into_views_matches_numpy(data, device):
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    x = nd.array(a, device=device)
    va, vx = a, x
    if data.draw(st.booleans()):
        va, vx = a.T, x.T
    idx = tuple(data.draw(st.sampled_from([slice(None), slice(None, None, -1), slice(1, None, 2), 0, -1]))
                for _ in range(data.draw(st.integers(0, va.ndim))))
    idx = tuple(i for i, n in zip(idx, va.shape) if not (isinstance(i, int) and n == 0))
    target = va[idx]
    if data.draw(st.booleans()):
        value = data.draw(st.integers(-100, 100))
    else:  # an array that broadcasts: a suffix of the target shape with some sizes 1
        suffix = target.shape[data.draw(st.integers(0, target.ndim)):]
        value = -np.arange(int(np.prod(suffix)), dtype=np.int64).reshape(suffix) - 1
        value = value[tuple(slice(0, 1) if data.draw(st.booleans()) else slice(None) for _ in suffix)]
    va[idx] = value
    vx[idx] = value if np.isscalar(value) else nd.array(value, device=device)
    np.testing.assert_array_equal(x.to_numpy(), a)


def test_setitem_overlap_and_advanced(rng):
    a = np.arange(10.)
    x = nd.array(a)
    a[1:] = a[:-1].copy()
    x[1:] = x[:-1]  # source and destination overlap: must read before writing
    np.testing.assert_array_equal(x.to_numpy(), a)
    a[[0, 2, 4]] = [-1, -2, -3]
    x[[0, 2, 4]] = [-1, -2, -3]
    a[a > 5] = 0
    x[x > 5] = 0
    np.testing.assert_array_equal(x.to_numpy(), a)
    s = nd.array(np.zeros(4))
    np.add.at(s, np.array([1, 1, 3]), nd.array([1., 2., 3.]))  # scatter-add through __array_ufunc__
    np.testing.assert_array_equal(s.to_numpy(), [0, 3, 0, 3])


def test_essay_table_and_errors():
    A = nd.array(np.arange(12.).reshape(3, 4))
    assert A.layout == ((3, 4), (4, 1), 0)
    assert A[0:2, 1:3].layout == ((2, 2), (4, 1), 1)
    assert A.T.layout == ((4, 3), (1, 4), 0)
    assert nd.shares_memory(A.T, A) and not nd.shares_memory(A.T.reshape(-1), A)
    assert not nd.shares_memory(A[0], A[1])
    with pytest.raises(ValueError, match=r"can't broadcast shape \[3, 4\] to \[2, 4\]"): A.broadcast_to((2, 4))
    with pytest.raises(ValueError, match="without copying"): A.T.view(12)
    with pytest.raises(ValueError, match="reach buffer positions 0..13, but the buffer has 12"): A.as_strided((2, 2), (12, 1))
    with pytest.raises(ValueError, match="stride 0"): A[None].broadcast_to((2, 3, 4))[...] = 1
    with pytest.raises(IndexError, match="out of bounds for dimension 1 with size 4"): A[0, 4]
    with pytest.raises(RuntimeError, match="different devices"): A + nd.array(np.ones(4), device="python")
    with pytest.raises(RuntimeError, match="no NDArray backend for device 'tpu'"): nd.array([1.], device="tpu")
    with pytest.raises(RuntimeError, match=r"shapes \[3, 4\] and \[3\] can't be broadcast"): A + nd.array(np.ones(3))


def test_as_strided_bounds_and_negative_steps():
    A = nd.array(np.arange(12.))
    w = A.as_strided((5, 3), (2, 1))  # overlapping windows
    np.testing.assert_array_equal(w.to_numpy(), np.lib.stride_tricks.as_strided(np.arange(12.), (5, 3), (16, 8)))
    r = A.as_strided((4,), (-3,), 11)
    np.testing.assert_array_equal(r.to_numpy(), [11, 8, 5, 2])


def test_views_allocate_nothing_copies_allocate_data():
    A = nd.array(np.zeros((64, 32), np.float32))
    for view in (lambda: A[1:10, ::2], lambda: A.T, lambda: A[0].broadcast_to((100, 32)), lambda: A.reshape(32, 64)):
        with nd.count_allocations() as c: view()
        assert c.bytes == 0 and c.count == 0
    with nd.count_allocations() as c: A.T.reshape(-1)
    assert c.bytes == A.size * 4 and c.count == 1
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        v = A.T
        view_bytes = tracemalloc.get_traced_memory()[0] - base
        r = v.reshape(-1)
        copy_bytes = tracemalloc.get_traced_memory()[0] - base - view_bytes
    finally:
        tracemalloc.stop()
    assert view_bytes < 2000 and copy_bytes >= A.size * 4


def test_python_kernels_match_numpy_kernels(rng):
    a = rng.standard_normal((3, 4, 5))
    for dev_args in [(np.s_[::-1, 1:, ::2], (2, 0, 1))]:
        idx, axes = dev_args
        xs = [nd.array(a, device=d)[idx].permute_dims(axes) for d in BACKENDS]
        for op in (lambda x: x.sum(axis=1), lambda x: x.min(axis=(0, 2)), lambda x: x.argmin(axis=2),
                   lambda x: x.abs().sqrt(), lambda x: x.mean(), lambda x: x[0] @ x[1].mT):
            r0, r1 = (op(x).to_numpy() for x in xs)
            np.testing.assert_allclose(r0, r1, rtol=1e-12)


def test_index_arithmetic_compiles_with_numba():
    numba = pytest.importorskip("numba")
    to_index, index_to_position = numba.njit(nd.to_index), numba.njit(nd.index_to_position)
    shape, strides, index = np.array([3, 4, 5]), np.array([1, 3, 12]), np.zeros(3, np.int64)
    to_index(37, shape, index)
    assert list(index) == list(np.unravel_index(37, (3, 4, 5)))
    assert index_to_position(index, strides, 2) == 2 + int(index @ strides)


def test_view_strides_rule_examples():
    assert nd.view_strides((3, 4), (4, 1), (2, 6)) == (6, 1)
    assert nd.view_strides((4, 3), (1, 4), (12,)) is None  # transposed: must copy
    assert nd.view_strides((2, 3, 4), (12, 4, 1), (6, 4)) == (4, 1)
    assert nd.view_strides((2, 3, 4), (24, 4, 1), (2, 12)) == (24, 1)  # a gap between the first dims only
    assert nd.view_strides((2, 3, 4), (24, 4, 1), (6, 4)) is None


# --- Tensor: strides API checked against PyTorch ------------------------------------------------------

def torch_like_chain(data, t, tt):
    "Apply the same random view ops to a minitorch_nb tensor and a torch tensor."
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["slice", "transpose", "expand", "reshape", "int"]))
        if kind == "slice" and t.ndim:
            idx = tuple(slice(data.draw(st.integers(0, n)), None, data.draw(st.integers(1, 3))) for n in t.shape)
            t, tt = t[idx], tt[idx]
        elif kind == "transpose" and t.ndim >= 2:
            t, tt = t.transpose(0, -1), tt.transpose(0, -1)
        elif kind == "expand":
            shape = (2,) + tuple(3 if n == 1 else n for n in t.shape)
            t, tt = t.expand(*shape), tt.expand(*shape)
        elif kind == "reshape" and t.numel():
            shape = draw_reshape(data, t.shape)
            t, tt = t.reshape(shape), tt.reshape(shape)
        elif kind == "int" and t.ndim > (t.device == "numpy") and t.shape[0]:  # chapter 00 copies numpy's 0-d results
            t, tt = t[0], tt[0]
    return t, tt


@settings(max_examples=120, **SETTINGS)
@given(st.data(), st.sampled_from(["numpy", "strided"]))
def test_tensor_stride_api_matches_torch(data, device):
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    base = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    t, tt = torch_like_chain(data, tensor(base, device=device), torch.tensor(base))
    assert t.shape == tuple(tt.shape)
    if t.numel() > 1:
        assert [s for n, s in zip(t.shape, t.stride()) if n > 1] == [s for n, s in zip(tt.shape, tt.stride()) if n > 1]
    if t.numel() and (t.ndim or device != "numpy"):  # chapter 00 turns numpy's 0-d results into copies
        assert t.storage_offset() == tt.storage_offset()
    assert t.is_contiguous() == tt.is_contiguous()
    c = t.contiguous()
    assert c.is_contiguous() and (c is t) == t.is_contiguous()
    np.testing.assert_array_equal(c.to("numpy").numpy(), tt.contiguous().numpy())


@settings(max_examples=80, **SETTINGS)
@given(st.data(), st.sampled_from(["numpy", "strided"]))
def test_as_strided_forward_and_backward_match_torch(data, device):
    n = data.draw(st.integers(1, 12))
    size = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    stride = tuple(data.draw(st.lists(st.integers(0, 3), min_size=len(size), max_size=len(size))))
    span = sum((m - 1) * s for m, s in zip(size, stride))
    offset = data.draw(st.integers(0, max(0, n - 1 - span)))
    if offset + span >= n: return
    rng = np.random.default_rng(n)
    base = rng.standard_normal(n)
    x = tensor(base, device=device).requires_grad_()
    xt = torch.tensor(base, requires_grad=True)
    y, yt = mt.as_strided(x, size, stride, offset), torch.as_strided(xt, size, stride, offset)
    np.testing.assert_array_equal(y.detach().to("numpy").numpy(), yt.detach().numpy())
    g = rng.standard_normal(size)
    y.backward(tensor(g, device=device))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.to("numpy").numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", ["numpy", "strided"])
def test_as_strided_of_a_view_and_double_backward(device):
    base = np.arange(10.)
    x = tensor(base, device=device).requires_grad_()
    xt = torch.tensor(base, requires_grad=True)
    v, vt = x[2:], xt[2:]
    assert v.storage_offset() == vt.storage_offset() == 2
    w, wt = mt.as_strided(v, (3, 2), (2, 1)), torch.as_strided(vt, (3, 2), (2, 1))  # storage offset follows v
    np.testing.assert_array_equal(w.detach().to("numpy").numpy(), wt.detach().numpy())
    (g,) = mt.autograd.grad((w * w * w).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad((wt * wt * wt).sum(), xt, create_graph=True)
    np.testing.assert_allclose(g.detach().to("numpy").numpy(), gt.detach().numpy())
    g.sum().backward()
    gt.sum().backward()
    np.testing.assert_allclose(x.grad.to("numpy").numpy(), xt.grad.numpy())


def test_numpy_storage_offsets_match_torch():
    a = np.arange(24.).reshape(2, 3, 4)
    t = torch.arange(24.).reshape(2, 3, 4)
    for idx in (np.s_[1], np.s_[1, 2], np.s_[:, 1:, 2:], np.s_[1, ::2, 1::3]):
        assert nd.numpy_storage(a[idx])[1] == t[idx].storage_offset()
    assert nd.numpy_storage(a.T[2])[1] == t.permute(2, 1, 0)[2].storage_offset()
    f = np.asfortranarray(a)
    assert nd.element_strides(f) == (1, 2, 6) and nd.numpy_storage(f[1, 1:])[1] == 1 + 2


# --- The Array API seam: chapter 00's Functions run on NDArray --------------------------------------

OPS = {
    "add_broadcast": lambda a, b: (a + b[0]).sum(),
    "mul_div": lambda a, b: (a * b / (b * b + 1.0)).sum(),
    "pow_exp_log": lambda a, b: ((a ** 2 + 1.0).log() + (b * 0.1).exp()).sum(),
    "sin_cos_neg": lambda a, b: (-(a.sin() * b.cos())).sum(),
    "sum_mean_dims": lambda a, b: (a.sum(1, keepdim=True) * b.mean(0)).sum(),
    "reshape_permute_T": lambda a, b: (a.T.reshape(-1) * b.permute(1, 0).reshape(-1)).sum(),
    "matmul": lambda a, b: (a @ b.T).sum(),
    "getitem_basic_advanced": lambda a, b: (a[1:, ::-1] * b[[0, 2]]).sum() + a[a > 0].sum(),
    "expand": lambda a, b: (a[:1].expand(3, 4) * b).sum(),
}


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_engine_runs_on_ndarray(name, dtype, rng):
    a0, b0 = rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((3, 4)).astype(dtype)
    results = {}
    for device in ("numpy", "strided"):
        a, b = (tensor(v, device=device).requires_grad_() for v in (a0, b0))
        out = OPS[name](a, b)
        out.backward()
        results[device] = out, a.grad, b.grad
        assert out.dtype == dtype and a.grad.dtype == dtype and out.device == device
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for ours, ref in zip(results["strided"], results["numpy"]):
        np.testing.assert_allclose(ours.detach().to("numpy").numpy(), ref.detach().numpy(), **tol)


def test_inplace_and_setitem_on_ndarray_tensors():
    for device in ("numpy", "strided"):
        w = tensor(np.ones((2, 3)), device=device)
        w[0, 1:] = 5.0
        w += 1
        with mt.no_grad(): w *= w
        w.T[0] = 0.0
        np.testing.assert_array_equal(w.to("numpy").numpy(), [[0, 36, 36], [0, 4, 4]])


def test_one_call_shortcuts_match_the_general_path(rng):
    """'strided' takes chapter 05's one-call shortcuts (ufunc, reduce_all, matmul_all, where_all, gather_all, copy_all);
    'python' always takes the general path (empty output + kernel). Same values and dtypes, one buffer per op."""
    a, b = rng.standard_normal((2, 4, 5)).astype(np.float32)
    mask = a > 0.3
    ops = [lambda x, y, m: x.T * 2.0 + y.T, lambda x, y, m: 3 - x, lambda x, y, m: x.exp(),
           lambda x, y, m: x[::-1] @ y.mT, lambda x, y, m: x.reduce("sum", (0, 1)), lambda x, y, m: x.reduce("max", 1),
           lambda x, y, m: x.__array_namespace__().where(m, x, y), lambda x, y, m: x[np.array([2, 0, 2])],
           lambda x, y, m: x[m], lambda x, y, m: x.T.copy(), lambda x, y, m: m.astype(np.float32),
           lambda x, y, m: x[::-1, ::2].astype(np.float32)]
    for op in ops:
        results = []
        for device in BACKENDS:
            x, y, m = (nd.array(v, device=device) for v in (a, b, mask))
            results.append(op(x, y, m))
        fast, general = results
        assert fast.dtype == general.dtype == np.float32 and fast.shape == general.shape
        np.testing.assert_allclose(fast.to_numpy(), general.to_numpy(), rtol=1e-6)
    x = nd.array(a)
    with nd.count_allocations() as c: x.T * 2.0 + x.T
    assert c.count == 2 and c.bytes == 2 * a.nbytes
    assert nd.Backend.ufunc(x.backend, "add", x, x) is NotImplemented  # the base class always declines
    assert nd.Backend.copy_all(x.backend, x, x.dtype) is NotImplemented
    with nd.count_allocations() as c: t = x.T.copy()
    assert c.count == 1 and t.strides == (4, 1) and t.base is None and t.buffer is not x.buffer
    with pytest.raises(RuntimeError, match=r"shapes \[4, 5\] and \[4\] can't be broadcast"): x + nd.array(np.ones(4))

@pytest.mark.parametrize("device", ["strided", "cpu"])
def test_one_call_results_are_row_major_and_write_through(device, rng):
    """numpy lays some results out like their inputs (where, gather and reductions of a column-major view):
    the adopted buffer must still be row-major, so that in-place writes and reads see the same values."""
    a = rng.standard_normal((4, 3, 5))
    x = nd.array(a, device=device).permute_dims((2, 1, 0))  # a column-major view, like a.T
    xp = x.__array_namespace__()
    results = {"where": (xp.where(x > 0, x, -x), np.where(a.T > 0, a.T, -a.T)),
               "gather": (x[:, [0, 2]], a.T[:, [0, 2]]),
               "sum": (x.reduce("sum", 1, keepdims=True), a.T.sum(1, keepdims=True)),
               "exp": (xp.exp(x), np.exp(a.T))}
    for name, (ours, want) in results.items():
        assert ours.is_contiguous() and ours.strides == nd.strides_for(ours.shape), name
        ours += 1.0
        np.testing.assert_allclose(ours.to_numpy(), want + 1.0, rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(nd.as_numpy_view(ours), want + 1.0, rtol=1e-12, err_msg=name)
