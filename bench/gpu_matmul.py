"""Our CUDA matmul kernels against cuBLAS on one GPU, float32, n x n (4096 by default), measured in one run.

    python bench/gpu_matmul.py --out bench/results/gpu_check.json
    NUMBA_ENABLE_CUDASIM=1 python bench/gpu_matmul.py --dry      # no GPU: the same path in the simulator, n=20

Times (CUDA events, mean of --reps launches after one warm-up launch that also compiles) of
gpu_matmul_tiled, gpu_matmul_double_buffered, mt's `x @ y` on device 'cuda' (the tiled kernel plus the
framework) and `x @ y.T` (a strided operand: the naive kernel), and of cuBLAS's SGEMM through CuPy
(else PyTorch) on the same device buffers, TF32 off. Writes ms, TFLOP/s and ratio = our time / cuBLAS's
time, with each result's relative error against cuBLAS's, to --out as JSON.
"""
import argparse
import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo's package, not an installed one
import minitorch_nb as mt  # noqa: E402  first: it sets the thread-pool environment before numpy loads
import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import cuda as numba_cuda  # noqa: E402

def kernels_module():
    "The module holding the CUDA kernels (chapter 06c)."
    return importlib.import_module("minitorch_nb.backends.cuda")

class Timer:
    "Mean milliseconds per call of `fn` over `reps` calls: CUDA events on a GPU, the host clock in the simulator."
    def __init__(self, simulated): self.simulated = simulated
    def __call__(self, fn, reps, record=None, sync=None):
        fn(); (sync or numba_cuda.synchronize)()  # warm up (and compile)
        if self.simulated or record is None:
            start = time.perf_counter()
            for _ in range(reps): fn()
            (sync or numba_cuda.synchronize)()
            return (time.perf_counter() - start) * 1e3 / reps
        return record(fn, reps)

def numba_events(fn, reps):
    start, end = numba_cuda.event(timing=True), numba_cuda.event(timing=True)
    start.record()
    for _ in range(reps): fn()
    end.record(); end.synchronize()
    return numba_cuda.event_elapsed_time(start, end) / reps

def reference(a_dev, b_dev, n, dry):
    "(name, version, matmul returning a host array, event timer, sync): cuBLAS via CuPy, else PyTorch, else numpy."
    if dry:
        a, b = a_dev.copy_to_host().reshape(n, n), b_dev.copy_to_host().reshape(n, n)
        return "numpy (dry run: not cuBLAS)", np.__version__, lambda: a @ b, None, lambda: None
    try:
        import cupy as cp
        a, b = cp.asarray(a_dev).reshape(n, n), cp.asarray(b_dev).reshape(n, n)  # the same device memory
        def cupy_events(fn, reps):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            for _ in range(reps): fn()
            end.record(); end.synchronize()
            return cp.cuda.get_elapsed_time(start, end) / reps
        tf32 = os.environ.get("CUPY_TF32", "0")
        return (f"cuBLAS via CuPy (CUPY_TF32={tf32})", cp.__version__, lambda: a @ b, cupy_events,
                cp.cuda.runtime.deviceSynchronize)
    except ImportError:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        a, b = torch.as_tensor(a_dev, device="cuda").reshape(n, n), torch.as_tensor(b_dev, device="cuda").reshape(n, n)
        def torch_events(fn, reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(reps): fn()
            end.record(); end.synchronize()
            return start.elapsed_time(end) / reps
        return "cuBLAS via PyTorch (allow_tf32=False)", torch.__version__, lambda: a @ b, torch_events, torch.cuda.synchronize

def as_host(x):
    "A host numpy array from a numba device array, a CuPy/PyTorch array, an mt tensor or a numpy array."
    if hasattr(x, "copy_to_host"): return x.copy_to_host()
    if hasattr(x, "get"): return x.get()
    if hasattr(x, "detach"): return x.detach().to("numpy").numpy() if isinstance(x, mt.Tensor) else x.cpu().numpy()
    return np.asarray(x)

def device_name(device):
    name = getattr(device, "name", "Numba's CUDA simulator")
    return name.decode() if isinstance(name, bytes) else str(name)

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=None, help="matrix size (default 4096; 20 with --dry)")
    p.add_argument("--reps", type=int, default=None, help="timed launches per kernel (default 10; 1 with --dry)")
    p.add_argument("--dry", action="store_true", help="no GPU: run in Numba's simulator (NUMBA_ENABLE_CUDASIM=1)")
    p.add_argument("--out", default="bench/results/gpu_check.json")
    args = p.parse_args(argv)
    n, reps = args.n or (20 if args.dry else 4096), args.reps or (1 if args.dry else 10)
    if not mt.cuda.is_available():
        sys.exit("no CUDA device (and no simulator): run on a GPU, or with NUMBA_ENABLE_CUDASIM=1 and --dry")
    if mt.cuda.is_simulator() != args.dry:
        sys.exit("--dry goes with the simulator (NUMBA_ENABLE_CUDASIM=1), timings on a GPU without either")
    k = kernels_module()
    rng = np.random.default_rng(0)
    a_host, b_host = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    a_dev, b_dev = numba_cuda.to_device(a_host.ravel()), numba_cuda.to_device(b_host.ravel())
    o_dev = numba_cuda.device_array(n * n, np.float32)
    timer = Timer(simulated=args.dry)
    ref_name, ref_version, ref_matmul, ref_events, ref_sync = reference(a_dev, b_dev, n, args.dry)
    want = as_host(ref_matmul()).reshape(n, n).astype(np.float64)
    ref_ms = timer(ref_matmul, reps, ref_events, ref_sync)
    flop = 2.0 * n ** 3
    tflops = lambda ms: flop / (ms * 1e-3) / 1e12

    grid, block = ((n + k.TILE - 1) // k.TILE, (n + k.TILE - 1) // k.TILE), (k.TILE, k.TILE)
    x, y = mt.tensor(a_host, device="cuda"), mt.tensor(b_host, device="cuda")
    y_t = mt.tensor(np.ascontiguousarray(b_host.T), device="cuda").T  # the values of b, strided: the naive kernel
    holder = {}
    def launch(kernel): return lambda: kernel[grid, block](o_dev, a_dev, b_dev, n, n, n)
    def mt_op(fn): return lambda: holder.__setitem__("z", fn())
    variants = [("gpu_matmul_tiled", launch(k.gpu_matmul_tiled), lambda: o_dev, reps),
                ("gpu_matmul_double_buffered", launch(k.gpu_matmul_double_buffered), lambda: o_dev, reps),
                ("mt: x @ y (tiled kernel)", mt_op(lambda: x @ y), lambda: holder["z"], reps),
                ("mt: x @ y.T, strided (naive kernel)", mt_op(lambda: x @ y_t), lambda: holder["z"], max(1, reps // 3))]
    results = {}
    for name, fn, result, r in variants:
        ms = timer(fn, r, numba_events)
        got = as_host(result()).reshape(n, n).astype(np.float64)
        rel_err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        results[name] = dict(ms=round(ms, 4), tflops=round(tflops(ms), 3), ratio=round(ms / ref_ms, 3),
                             rel_err=float(f"{rel_err:.3g}"), reps=r)
        print(f"{name:38s} {ms:9.3f} ms {tflops(ms):8.3f} TFLOP/s  ratio {ms / ref_ms:7.2f}  rel.err {rel_err:.2e}")
    print(f"{ref_name:38s} {ref_ms:9.3f} ms {tflops(ref_ms):8.3f} TFLOP/s")
    ok = all(r["rel_err"] < 1e-4 for r in results.values())  # float32 sums of n products: ~1e-6 here
    device = numba_cuda.get_current_device() if hasattr(numba_cuda, "get_current_device") else None  # the simulator has none
    report = dict(
        what=f"{n}x{n} float32 matmul: our CUDA kernels vs cuBLAS; ratio = our ms / cuBLAS ms", n=n, dtype="float32",
        dry=args.dry, ok=ok,
        device=dict(name=device_name(device), compute_capability=list(getattr(device, "compute_capability", ()))),
        versions=dict(python=platform.python_version(), numpy=np.__version__, numba=numba.__version__,
                      numba_cuda_target="simulator" if args.dry else getattr(numba_cuda, "implementation", "?"),
                      reference=f"{ref_name} {ref_version}"),
        reference=dict(name=ref_name, ms=round(ref_ms, 4), tflops=round(tflops(ref_ms), 3), reps=reps),
        kernels=results, tile=k.TILE, kernels_module=k.__name__)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {out}; results {'agree with' if ok else 'DIFFER from'} the reference (rel.err < 1e-4)")
    return 0 if ok else 1

if __name__ == "__main__":
    sys.exit(main())
