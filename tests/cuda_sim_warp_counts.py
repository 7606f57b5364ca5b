"""Chapter 06c's warp kernels run in Numba's CUDA simulator with their memory accesses and branch sides
recorded per warp: what the hardware would see. The strided read's input is an ndarray subclass that logs
every element a simulated thread reads, with that thread's block and warp; the two-path kernel's output
tells which side of the branch each element's thread took. Prints the table and, last, one JSON line of
the counts (the chapter and tests/test_cuda_warp_counts.py read it). Run with NUMBA_ENABLE_CUDASIM=1,
in a child process (the simulator must be switched on before Numba is first imported)."""
import json
import os
import threading
from collections import defaultdict
assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"
import numpy as np
import minitorch_nb.backends.cuda as bc

WARP, THREADS, N = 32, 128, 1024  # 8 blocks of 128 threads: one element per thread, 32 warps


class RecordedReads(np.ndarray):
    "An array that logs (block, warp, element) for every element a simulated GPU thread reads."
    log = []

    def __getitem__(self, i):
        t = threading.current_thread()
        if hasattr(t, "thread_id"):  # a simulated GPU thread (the simulator's BlockThread)
            RecordedReads.log.append((t.blockIdx.x, t.thread_id // WARP, int(i)))
        return super().__getitem__(i)


def sectors_per_warp(stride, itemsize=4, sector=32):
    "Run the strided read in the simulator; the 32-byte sectors each warp's load touched."
    a = np.arange(N, dtype=np.float32).view(RecordedReads)
    out = np.zeros(N, np.float32)
    RecordedReads.log = []
    bc.gpu_strided_read[N // THREADS, THREADS](out, a, stride)
    np.testing.assert_array_equal(out, np.arange(N).reshape(-1, stride).T.ravel())
    touched = defaultdict(set)
    for block, warp, element in RecordedReads.log:
        touched[block, warp].add(element * itemsize // sector)
    assert len(RecordedReads.log) == N and len(touched) == N // WARP
    return [len(s) for s in touched.values()]


def lanes_per_side(width, reps=3):
    "Run the two-path kernel in the simulator; for each warp, how many lanes took side 0 and side 1."
    x = np.linspace(-1, 1, N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    bc.gpu_two_paths[N // THREADS, THREADS](out, x, width, reps)
    side0, side1 = x.copy(), x.copy()
    for _ in range(reps):
        side0 = side0 * np.float32(0.999) + np.float32(0.5)
        side1 = side1 * np.float32(1.001) - np.float32(0.5)
    took1 = np.isclose(out, side1, rtol=0, atol=1e-6)
    assert np.all(took1 != np.isclose(out, side0, rtol=0, atol=1e-6)), "each element on one side"
    per_warp = took1.reshape(-1, WARP)  # element i is thread i: one element per thread
    return [[int(WARP - w.sum()), int(w.sum())] for w in per_warp]


counts = {"sectors": {}, "lanes": {}}
print("strided read, simulated: 32-byte sectors per warp load (32 warps)")
for stride in (1, 2, 4, 8, 32):
    sectors = sectors_per_warp(stride)
    counts["sectors"][stride] = sorted(set(sectors))
    print(f"  stride {stride:2d}: {sorted(set(sectors))} sectors per warp, {sum(sectors)} in all "
          f"for {N * 4} bytes read")
print("two paths, simulated: lanes on side 0 / side 1 in each warp (32 warps)")
for width in (1, 16, 32):
    lanes = lanes_per_side(width)
    counts["lanes"][width] = sorted({tuple(l) for l in lanes})
    passes = sum(sum(1 for k in l if k) for l in lanes)
    print(f"  width {width:2d}: {sorted({tuple(l) for l in lanes})}, {passes} passes for "
          f"{len(lanes)} warps")
print(json.dumps(counts))
