"""Chapter 06c's reduction kernel (strided partials combined by a tree in shared memory) under Numba's CUDA
simulator, against numpy: every reduction of the op table and those built on them (mean, var, std), every axis
and keepdims, contiguous and strided rows, NaN; argmax/argmin; and the float32 sums bit for bit against
`tree_sum_numpy`, the kernel's order of operations in numpy. Run by tests/test_cuda_sim.py and by the chapter in a
child process, because NUMBA_ENABLE_CUDASIM must be set before Numba is first imported. Small sizes: the
simulator runs every GPU thread as a Python thread. Prints one line per check; exits non-zero on a failure.
Usage: NUMBA_ENABLE_CUDASIM=1 python tests/cuda_sim_reduce.py [CHECK_NAME ...]   (default: every check)"""
import os
import sys
assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"
import numpy as np
import minitorch_nb as mt
from minitorch_nb import ndarray as nd
from minitorch_nb.backends.cuda import tree_sum_numpy, reduce_config, SIMULATOR_REDUCE, CudaBackend, gpu_kernel

rng = np.random.default_rng(0)
CHECKS = []

def check(fn):
    CHECKS.append(fn)
    return fn

def cuda(a): return nd.array(a, device="cuda")

@check
def float32_sums_are_the_models_bit_for_bit():
    "Contiguous rows of every length class (shorter than a block, a block, longer, with a tail): same bits."
    for n in (1, 3, 37, 64, 300, 2049):
        a = (1e4 + rng.standard_normal((3, n))).astype(np.float32)
        got = cuda(a).__array_namespace__().sum(cuda(a), axis=1).to_numpy()
        want = tree_sum_numpy(a, reduce_config(3, n, 1, **SIMULATOR_REDUCE)[1][1])  # its block shape here
        assert got.dtype == np.float32 and (got.view(np.int32) == want.view(np.int32)).all(), (n, got, want)
    print("float32 sums: the kernel's bits are tree_sum_numpy's for rows of 1 to 2049")

@check
def every_reduction_every_axis_and_keepdims():
    a = rng.standard_normal((5, 6, 7)).astype(np.float32)
    a[1, 2, 3] = np.nan
    ints, bools = rng.integers(-3, 4, (5, 6, 7)), rng.standard_normal((5, 6, 7)) > 1.2
    finite = np.where(np.isnan(a), 0.5, a)
    full = [("sum", a), ("max", a)]  # every layout and axis
    more = [("prod", finite), ("min", a), ("sum", ints), ("prod", ints), ("max", ints), ("any", bools),
            ("all", ~bools), ("mean", a), ("var", finite), ("std", finite)]
    views = {"contiguous": (lambda t: t, lambda t: t),
             "transposed": (lambda t: t.transpose(2, 0, 1), lambda t: t.permute_dims((2, 0, 1))),
             "strided": (lambda t: t[::2, ::-1, 1::3], lambda t: t[::2, ::-1, 1::3])}
    runs = [(name, arr, view, axis, keep) for name, arr in full for view in views
            for axis, keep in ((None, False), (0, True), (1, False), (2, True), ((0, 2), False), ((1, 2), True))]
    runs += [(name, arr, view, axis, axis == (0, 2)) for name, arr in more for view in ("contiguous", "strided")
             for axis in (None, 1, (0, 2))]
    for name, arr, view_name, axis, keepdims in runs:
        on_numpy, on_cuda = views[view_name]
        v, x = on_numpy(arr), on_cuda(cuda(arr))
        xp = x.__array_namespace__()
        got = getattr(xp, name)(x, axis=axis, keepdims=keepdims).to_numpy()
        with np.errstate(all="ignore"):
            want = getattr(np, name)(v, axis=axis, keepdims=keepdims)
        what = f"{name} {view_name} axis={axis} keepdims={keepdims}"
        assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape, got.dtype)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(got, want, err_msg=what)
    n = len(runs)
    print(f"{n} reductions (sum, max: 3 layouts, 6 axes; prod min any all mean var std, ints; keepdims) agree with numpy")

@check
def argmax_and_argmin_take_the_first_extreme_and_the_first_nan():
    a = np.array([[1.0, 3.0, 3.0, np.nan, 2.0, np.nan], [0.0, -1.0, -1.0, 5.0, 5.0, 0.0]], np.float32)
    x = cuda(a)
    xp = x.__array_namespace__()
    for axis in (0, 1):
        for keepdims in (False, True):
            np.testing.assert_array_equal(xp.argmax(x, axis=axis, keepdims=keepdims).to_numpy(),
                                          np.argmax(a, axis=axis, keepdims=keepdims))
            np.testing.assert_array_equal(xp.argmin(x, axis=axis, keepdims=keepdims).to_numpy(),
                                          np.argmin(a, axis=axis, keepdims=keepdims))
    print("argmax, argmin: the first extreme, the first NaN, as numpy")

@check
def long_float32_rows_stay_close_to_float64():
    """Values near 1e4 (a batch norm's unnormalised data): the mean within two float32 steps of the float64 one
    (rounding the sum to float32, then the quotient, cost up to one), the variance (of values near 1) to 1e-5."""
    a = (1e4 + rng.standard_normal((2, 5000))).astype(np.float32)
    t = mt.tensor(a, device="cuda")
    exact = a.astype(np.float64)
    step = float(np.spacing(np.float32(1e4)))
    err_mean = np.abs(t.mean(1).to("numpy").numpy() - exact.mean(1)).max()
    err_var = np.abs(t.var(1, unbiased=False).to("numpy").numpy() - exact.var(1)).max()
    assert err_mean < 2 * step and err_var < 1e-5, (err_mean, err_var, step)
    print(f"rows of 5000 near 1e4: mean off by {err_mean:.1e} (float32 step {step:.1e}), var by {err_var:.1e}")

@check
def the_gpus_block_shapes_too():
    """The backend launches smaller blocks here (SIMULATOR_REDUCE); the kernel launched with a GPU's shapes (256
    threads: one long contiguous row per block, or 32 strided outputs x 8 threads) gives the same results."""
    a = (1e4 + rng.standard_normal((40, 300))).astype(np.float32)
    for axis, want in ((1, tree_sum_numpy(a, reduce_config(40, 300, 1)[1][1])), (0, a.sum(0))):
        x = cuda(a)
        out = nd.full(tuple(1 if d == axis else s for d, s in enumerate(a.shape)), 0.0, np.float32, "cuda")
        args, total = CudaBackend()._reduce_args(out, x, axis)
        blocks, threads = reduce_config(total, a.shape[axis], x.strides[axis], cap=3)
        assert threads == ((1, 256) if axis == 1 else (32, 8)), threads
        gpu_kernel("sum")[blocks, threads](*args)
        got = out.to_numpy().reshape(-1)
        if axis == 1: assert (got == want).all(), (got, want)
        else: np.testing.assert_allclose(got, want, rtol=1e-6)
    print("GPU block shapes (1 x 256 contiguous, 32 x 8 strided) in the simulator: as numpy and the model")

if __name__ == "__main__":
    chosen = [fn for fn in CHECKS if fn.__name__ in sys.argv[1:]] or CHECKS  # names on the command line: those
    for fn in chosen:
        fn()
    print(f"reductions: {len(chosen)} simulator checks passed")
