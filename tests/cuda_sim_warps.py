"""Chapter 06c's warp kernels under Numba's CUDA simulator: the strided read (coalesced or not, by its stride)
and the two-path kernel (divergent or not, by its width). Run by tests/test_cuda_sim.py and by the chapter in a
child process, because NUMBA_ENABLE_CUDASIM must be set before Numba is first imported. Sizes stay small (the
simulator runs every GPU thread as a Python thread)."""
import os
assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"
import numpy as np
import minitorch_nb.backends.cuda as bc

assert bc.cuda.is_available() and bc.cuda.is_simulator()
checks = 0

def two_paths_reference(a, width, reps, threads):
    "numpy's float32 loops, element i on the side of the thread that handles it (threadIdx.x = i % threads)."
    side = (np.arange(a.size) % threads // width) % 2
    x, y = a.copy(), a.copy()
    for _ in range(reps):
        x = x * np.float32(0.999) + np.float32(0.5)
        y = y * np.float32(1.001) - np.float32(0.5)
    return np.where(side == 0, x, y)

a = np.arange(256, dtype=np.float32)
for stride in (1, 2, 32):  # 256 = 256 x 1 = 128 x 2 = 8 x 32: the read is the transpose of that view
    out = np.full_like(a, np.nan)
    bc.gpu_strided_read[4, 64](out, a, stride)
    np.testing.assert_array_equal(out, a.reshape(-1, stride).T.ravel())
    print(f"strided read, stride {stride}: the transpose, every element once")
    checks += 1

rng = np.random.default_rng(0)
for n, width, blocks, threads in ((256, 1, 4, 64), (256, 32, 4, 64), (200, 1, 2, 64)):  # 200: a grid-stride loop
    x = rng.standard_normal(n).astype(np.float32)
    out = np.full_like(x, np.nan)
    bc.gpu_two_paths[blocks, threads](out, x, width, 5)
    np.testing.assert_allclose(out, two_paths_reference(x, width, 5, threads), rtol=1e-6, atol=1e-6)
    print(f"two paths, n={n}, width {width}: numpy's loops on each element's side")
    checks += 1
print(f"warp kernels: {checks} simulator checks passed")
