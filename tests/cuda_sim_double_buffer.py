"""Chapter 06c's double-buffered shared-memory matmul under Numba's CUDA simulator. Run by
tests/test_kernels_hw_c.py (and by the chapter) in a child process, because NUMBA_ENABLE_CUDASIM must be set
before Numba is first imported. Sizes stay at most 32 (the simulator runs every GPU thread as a Python thread)."""
import os
import re
assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"
import numpy as np
import minitorch_nb.backends.cuda as bc

# Before the kernel is spliced into the chapter, $DRAFTS names the draft files whose export cells define it.
for path in filter(None, os.environ.get("DRAFTS", "").split(",")):
    for cell in re.split(r"^# %%.*$", open(path).read(), flags=re.M):
        if re.match(r"\s*#\|\s*exports?\b", cell): exec(compile(cell, path, "exec"), bc.__dict__)

assert bc.cuda.is_available() and bc.cuda.is_simulator()
rng = np.random.default_rng(0)
shapes = [(31, 17, 20), (32, 32, 32), (16, 16, 16), (1, 5, 1), (5, 0, 3)]  # (m, k, n): ragged, exact, tiny, k = 0
for m, k, n in shapes:
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    out = np.full(m * n, np.nan, np.float32)  # NaN: an element the kernel forgets to store shows up
    grid = ((n + bc.TILE - 1) // bc.TILE, (m + bc.TILE - 1) // bc.TILE)
    bc.gpu_matmul_double_buffered[grid, (bc.TILE, bc.TILE)](out, a.ravel(), b.ravel(), m, n, k)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out.reshape(m, n), want, rtol=1e-5, atol=1e-5)
    print(f"{m}x{k} @ {k}x{n}: ok")
print(f"double-buffered matmul: {len(shapes)} shapes agree with numpy")
