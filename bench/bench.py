"""Benchmarks: minitorch_nb against numpy and PyTorch, measured side by side in one run.

Each benchmark times our code and a reference with the same inputs, interleaving the two so that
machine noise hits both alike, and reports the ratio ours / reference with the issue's target.

    .venv/bin/python bench/bench.py            # all benchmarks
    .venv/bin/python bench/bench.py op mlp     # the ones whose name contains "op" or "mlp"

Results are printed and written to bench/results.json (machine, versions, times, ratios).
"""
import json
import os
import platform
import sys
import time
from pathlib import Path

import minitorch_nb  # noqa: F401  first: it sets the thread-pool environment before numpy loads (THREAD_ENV)
import numpy as np

ROOT = Path(__file__).resolve().parent
BENCHMARKS = []

def benchmark(name, reference, target):
    "Register a benchmark: a function returning (ours, theirs) callables; `target` = the worst acceptable ratio."
    def register(setup):
        BENCHMARKS.append(dict(name=name, reference=reference, target=target, setup=setup))
        return setup
    return register

def best_time(fn, number, repeat):
    "The best of `repeat` runs of `number` calls, per call, in seconds."
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number): fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best

def compare(ours, theirs, number, rounds=11):
    "Interleaved best-of timings of two callables after a warm-up."
    ours(); theirs()
    t_ours, t_theirs = float("inf"), float("inf")
    for _ in range(rounds):
        t_ours = min(t_ours, best_time(ours, number, 1))
        t_theirs = min(t_theirs, best_time(theirs, number, 1))
    return t_ours, t_theirs

def calibrate(fn, budget=0.05):
    "How many calls of `fn` take about `budget` seconds."
    start = time.perf_counter(); fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, int(budget / once))

# --- chapter 01: per-op overhead --------------------------------------------------------------------

@benchmark("op overhead: (a+b).sum().backward(), 4 elements", "torch", target=3.0)
def op_overhead():
    import torch
    import minitorch_nb as mt
    a, b = mt.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True), mt.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    ta, tb = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True), torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    def ours(): (a + b).sum().backward()
    def theirs(): (ta + tb).sum().backward()
    return ours, theirs

# --- chapter 02/03: an MLP training step ------------------------------------------------------------

def _mlp_pair(device="numpy", bfloat16=False):
    "The same 784-256-10 MLP, data and SGD optimizer in minitorch_nb and in torch (both cast to bfloat16)."
    import torch
    import minitorch_nb as mt
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((128, 784)).astype(np.float32), rng.integers(0, 10, 128)
    model = mt.nn.Sequential(mt.nn.Linear(784, 256), mt.nn.ReLU(), mt.nn.Linear(256, 10)).to(device)
    tmodel = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    with torch.no_grad():
        for p, tp in zip(model.parameters(), tmodel.parameters()): tp.copy_(torch.tensor(p.detach().to("numpy").numpy()))
    opt, topt = mt.optim.SGD(model.parameters(), lr=0.01), torch.optim.SGD(tmodel.parameters(), lr=0.01)
    loss_fn, tloss_fn = mt.nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()
    xb, yb = mt.tensor(x, device=device), mt.tensor(y, device=device)
    txb, tyb = torch.tensor(x), torch.tensor(y)
    if bfloat16:  # in place: the optimizers keep their parameters
        model.bfloat16(); tmodel.bfloat16()
        xb, txb = xb.bfloat16(), txb.bfloat16()
    def ours():
        opt.zero_grad(); loss_fn(model(xb), yb).backward(); opt.step()
    def theirs():
        topt.zero_grad(); tloss_fn(tmodel(txb), tyb).backward(); topt.step()
    return ours, theirs

@benchmark("MLP 784-256-10 SGD step, batch 128", "torch", target=1.5)
def mlp_step(): return _mlp_pair()

# --- chapter 06: Numba kernels on device "cpu" --------------------------------------------------------
# Targets are time ratios (ours / reference): a throughput target of ">= 0.8x numpy" is a time ratio <= 1/0.8 = 1.25.

def _cpu_pair(shape, op, dtype=np.float32):
    "op on Tensors of device 'cpu' (ours) against the same op on plain numpy arrays (reference)."
    import minitorch_nb as mt
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    x, y = mt.tensor(a, device="cpu"), mt.tensor(b, device="cpu")
    return (lambda: op(x, y)), (lambda: op(a, b))

@benchmark("cpu add 1M f32 (>=1.0x numpy throughput: time ratio <= 1.0)", "numpy", target=1.0)
def cpu_add(): return _cpu_pair((1 << 20,), lambda u, v: u + v)

@benchmark("cpu mul 1M f32 (>=1.0x numpy throughput: time ratio <= 1.0)", "numpy", target=1.0)
def cpu_mul(): return _cpu_pair((1 << 20,), lambda u, v: u * v)

@benchmark("cpu exp 1M f32 (>=1.0x numpy throughput: time ratio <= 1.0)", "numpy", target=1.0)
def cpu_exp():
    ours, _ = _cpu_pair((1 << 20,), lambda u, v: u.exp())
    _, theirs = _cpu_pair((1 << 20,), lambda u, v: np.exp(u))
    return ours, theirs

@benchmark("cpu sum dim=1 of 1024x1024 f32 (>=0.8x: time ratio <= 1.25)", "numpy", target=1.25)
def cpu_sum_rows(): return _cpu_pair((1024, 1024), lambda u, v: u.sum(1))

@benchmark("cpu sum dim=0 of 1024x1024 f32 (>=0.8x: time ratio <= 1.25)", "numpy", target=1.25)
def cpu_sum_cols(): return _cpu_pair((1024, 1024), lambda u, v: u.sum(0))

@benchmark("cpu matmul 1024^2 f32, fast path (>=0.9x: time ratio <= 1.11)", "numpy", target=1 / 0.9)
def cpu_matmul_fast(): return _cpu_pair((1024, 1024), lambda u, v: u @ v)

@benchmark("cpu matmul 1024^2 f32, teaching tiled kernel (>=0.25x: time ratio <= 4.0)", "numpy", target=4.0)
def cpu_matmul_tiled():
    from minitorch_nb.backends import cpu as backend_cpu
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((1024, 1024)).astype(np.float32) for _ in range(2))
    out = np.empty((1024, 1024), np.float32)
    return (lambda: backend_cpu.matmul_tiled_kernel(out, a, b)), (lambda: np.matmul(a, b, out=out))

@benchmark("MLP 784-256-10 SGD step on 'cpu' vs on 'numpy' (time ratio <= 1.2)", "minitorch_nb numpy", target=1.2)
def mlp_step_cpu():
    ours, _ = _mlp_pair("cpu")
    theirs, _ = _mlp_pair("numpy")
    return ours, theirs

_FIRST_CALL = """
import time, numpy as np
from minitorch_nb.backends import cpu as bc
a = np.ones(1000, np.float32); s = np.array([1000]); st = np.array([1])
t = time.perf_counter(); bc.add_kernel(a, st, 0, a, st, 0, a, st, 0, s); t = time.perf_counter() - t
print(t, sum(bc.add_kernel.stats.cache_misses.values()), sum(bc.add_kernel.stats.cache_hits.values()))
"""

@benchmark("second process: kernels compiled on first call, warm cache vs cold (must be 0)", "cold cache", target=0.0)
def first_call_cached():
    """Counts, not callables: Numba's own cache statistics in fresh interpreters (cold: an empty NUMBA_CACHE_DIR).
    A miss means the kernel was compiled; the ratio is warm misses / cold misses, so the target is 0."""
    import subprocess, tempfile
    def first_call(cache_dir):
        env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
        out = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, capture_output=True, text=True, check=True)
        seconds, misses, hits = out.stdout.split()
        return float(seconds), int(misses), int(hits)
    with tempfile.TemporaryDirectory() as d:
        cold = first_call(d)
        warm = first_call(d)
    print(f"  first add_kernel call: cold {cold[0]:.3f} s ({cold[1]} compiled), warm {warm[0]:.3f} s "
          f"({warm[1]} compiled, {warm[2]} loaded from the cache)")
    if cold[1] != 1 or warm[2] != 1: raise RuntimeError(f"unexpected cache statistics: cold {cold}, warm {warm}")
    return warm[1], cold[1]

# --- chapter 03/04: time to accuracy on a real data set ----------------------------------------------

def _digits_arrays():
    "The book's digits split (chapter 04) as flat float32 arrays in [0, 1] and int64 labels."
    import minitorch_nb as mt
    (x, y), (xv, yv) = mt.data.Digits(train=True).tensors(), mt.data.Digits(train=False).tensors()
    flat = lambda t: t.numpy().reshape(len(t), -1)
    return flat(x), y.numpy(), flat(xv), yv.numpy()

def _train_until(step, accuracy, orders, batch_size, goal, what):
    "Run epochs over the given orders until accuracy() >= goal; return the epochs it took (raise if never)."
    for epoch, order in enumerate(orders, 1):
        for i in range(0, len(order), batch_size): step(order[i:i + batch_size])
        if accuracy() >= goal: return epoch
    raise RuntimeError(f"{what} did not reach {goal:.0%} validation accuracy in {len(orders)} epochs")

@benchmark("digits MLP 64-128-10 Adam b32: time to 97% valid acc", "torch", target=2.0)
def digits_time_to_97():
    """The same MLP, initial weights, Adam(lr=3e-3), batch size and batch order in both frameworks; each call
    trains from the initial weights until validation accuracy reaches 97% (checked after every epoch)."""
    import torch
    import minitorch_nb as mt
    x, y, xv, yv = _digits_arrays()
    orders = [np.random.default_rng(e).permutation(len(y)) for e in range(40)]
    mt.manual_seed(0)
    model = mt.nn.Sequential(mt.nn.Linear(64, 128), mt.nn.ReLU(), mt.nn.Linear(128, 10))
    tmodel = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    init = [p.data.copy() for p in model.parameters()]
    loss_fn, tloss_fn = mt.nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()
    xt, yt, xvt = torch.tensor(x), torch.tensor(y), torch.tensor(xv)
    epochs = {}

    def ours():
        with mt.no_grad():
            for p, w in zip(model.parameters(), init): p.data[...] = w
        opt = mt.optim.Adam(model.parameters(), lr=3e-3)
        def step(rows):
            opt.zero_grad(); loss_fn(model(mt.tensor(x[rows])), mt.tensor(y[rows])).backward(); opt.step()
        def accuracy():
            with mt.no_grad(): return float((model(mt.tensor(xv)).numpy().argmax(1) == yv).mean())
        epochs["ours"] = _train_until(step, accuracy, orders, 32, 0.97, "minitorch_nb")

    def theirs():
        with torch.no_grad():
            for q, w in zip(tmodel.parameters(), init): q.copy_(torch.from_numpy(w))
        topt = torch.optim.Adam(tmodel.parameters(), lr=3e-3)
        def step(rows):
            topt.zero_grad(); tloss_fn(tmodel(xt[rows]), yt[rows]).backward(); topt.step()
        def accuracy():
            with torch.no_grad(): return float((tmodel(xvt).argmax(1).numpy() == yv).mean())
        epochs["torch"] = _train_until(step, accuracy, orders, 32, 0.97, "torch")

    ours(); theirs()
    print(f"  epochs to 97%: minitorch_nb {epochs['ours']}, torch {epochs['torch']}")
    return ours, theirs

# --- chapter 07: convolution ------------------------------------------------------------------------

def _cnn_pair(device):
    "Chapter 07's CNN (small_cnn), its weights, a batch of 64 1x28x28 images and AdamW in minitorch_nb and torch."
    import torch
    import minitorch_nb as mt
    from minitorch_nb.nn.conv import small_cnn
    rng = np.random.default_rng(0)
    x, y = rng.random((64, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, 64)
    mt.manual_seed(0)
    model = small_cnn().to(device)
    tmodel = torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Dropout(0.25), torch.nn.Linear(64 * 7 * 7, 10))
    tmodel.load_state_dict({k: torch.tensor(v.detach().to("numpy").numpy()) for k, v in model.state_dict().items()})
    opt, topt = mt.optim.AdamW(model.parameters(), lr=1e-3), torch.optim.AdamW(tmodel.parameters(), lr=1e-3)
    xb, yb, txb, tyb = mt.tensor(x, device=device), mt.tensor(y, device=device), torch.tensor(x), torch.tensor(y)
    def ours():
        opt.zero_grad(); mt.nn.functional.cross_entropy(model(xb), yb).backward(); opt.step()
    def theirs():
        topt.zero_grad(); torch.nn.functional.cross_entropy(tmodel(txb), tyb).backward(); topt.step()
    return ours, theirs

@benchmark("CNN (07) AdamW step, batch 64x1x28x28, device 'numpy'", "torch", target=2.0)
def cnn_step_numpy(): return _cnn_pair("numpy")

@benchmark("CNN (07) AdamW step, batch 64x1x28x28, device 'cpu'", "torch", target=2.0)
def cnn_step_cpu(): return _cnn_pair("cpu")

def _conv_pair(device):
    "F.conv2d forward + backward (input, weight, bias), batch 16, 32->64 channels, 3x3, padding 1, 32x32."
    import torch
    import minitorch_nb as mt
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((16, 32, 32, 32), (64, 32, 3, 3), (64,))]
    g = rng.standard_normal((16, 64, 32, 32)).astype(np.float32)
    ours_in = [mt.tensor(a, device=device, requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    mg, tg = mt.tensor(g, device=device), torch.tensor(g)
    def ours():
        for t in ours_in: t.grad = None
        mt.nn.functional.conv2d(*ours_in, padding=1).backward(mg)
    def theirs():
        for t in theirs_in: t.grad = None
        torch.nn.functional.conv2d(*theirs_in, padding=1).backward(tg)
    return ours, theirs

@benchmark("conv2d fwd+bwd 16x32x32x32 -> 64, 3x3, device 'numpy'", "torch", target=2.0)
def conv2d_numpy(): return _conv_pair("numpy")

@benchmark("conv2d fwd+bwd 16x32x32x32 -> 64, 3x3, device 'cpu'", "torch", target=2.0)
def conv2d_cpu(): return _conv_pair("cpu")

@benchmark("cpu im2col kernel vs a copy of its bytes (>=0.8x bandwidth: time ratio <= 1.25)", "numpy copy", target=1.25)
def im2col_bandwidth():
    "im2col_kernel filling the 288 x 16384 matrix of the conv above, against np.copyto of a matrix that size."
    from minitorch_nb.nn.conv import im2col_kernel
    x = np.random.default_rng(0).standard_normal((16, 32, 32, 32)).astype(np.float32)
    cols = np.empty((32 * 9, 16 * 32 * 32), np.float32)
    src, strides = np.ones_like(cols), np.array([s // 4 for s in x.strides], np.int64)
    def ours(): im2col_kernel(cols.reshape(-1), x.reshape(-1), strides, 0, 16, 32, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1,
                              32, 32, np.float32(0))
    return ours, (lambda: np.copyto(cols, src))

# --- chapter 08: normalization --------------------------------------------------------------------------------

def _batchnorm2d_pair(device, shape=(64, 64, 32, 32)):
    """BatchNorm2d forward + backward in training mode, ours on `device` against torch's on the CPU, both on as many
    threads as Numba uses (torch.set_num_threads), the same input and upstream gradient."""
    import numba, torch
    import minitorch_nb as mt
    torch.set_num_threads(numba.get_num_threads())
    rng = np.random.default_rng(0)
    x_np, g_np = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    bn, tbn = mt.nn.BatchNorm2d(shape[1]).to(device), torch.nn.BatchNorm2d(shape[1])
    x, g = mt.tensor(x_np, device=device, requires_grad=True), mt.tensor(g_np, device=device)
    tx, tg = torch.tensor(x_np, requires_grad=True), torch.tensor(g_np)
    def ours():
        x.grad = bn.weight.grad = bn.bias.grad = None
        bn(x).backward(g)
    def theirs():
        tx.grad = tbn.weight.grad = tbn.bias.grad = None
        tbn(tx).backward(tg)
    return ours, theirs

@benchmark("BatchNorm2d fwd+bwd (64,64,32,32) f32 on 'cpu', same threads", "torch", target=1.5)
def batchnorm2d_cpu(): return _batchnorm2d_pair("cpu")

@benchmark("BatchNorm2d fwd+bwd (64,64,32,32) f32 on 'cpu' vs on 'numpy' (kernels vs formulas)", "minitorch_nb numpy",
           target=1.0)
def batchnorm2d_cpu_vs_numpy():
    ours, _ = _batchnorm2d_pair("cpu")
    theirs, _ = _batchnorm2d_pair("numpy")
    return ours, theirs

# --- chapter 09a: activation checkpointing -------------------------------------------------------------

def _checkpointed_step():
    "One training step of 64 Linear(128)+ReLU blocks on a (256, 128) batch, checkpointed in k segments."
    import minitorch_nb as mt
    from minitorch_nb import nn
    mt.manual_seed(0)
    net = nn.Sequential(*[nn.Sequential(nn.Linear(128, 128), nn.ReLU()) for _ in range(64)])
    x = mt.randn(256, 128)
    def step(k): mt.utils.checkpoint.checkpoint_sequential(net, k, x).square().mean().backward()
    step(1)  # the gradients exist from here on
    return step

@benchmark("checkpoint 64 blocks, sqrt(N)=8 segments: peak memory (bytes)", "no checkpointing", target=1 / 3)
def checkpoint_memory():
    from minitorch_nb.memory import measure_memory
    step = _checkpointed_step()
    return measure_memory(lambda: step(8))[2], measure_memory(lambda: step(1))[2]

@benchmark("checkpoint 64 blocks, sqrt(N)=8 segments: step time", "no checkpointing", target=1.4)
def checkpoint_time():
    step = _checkpointed_step()
    return (lambda: step(8)), (lambda: step(1))

@benchmark("MLP 784-256-10 SGD step in bfloat16 (.bfloat16()), batch 128, device 'numpy'", "torch", target=2.0)
def mlp_bf16_numpy(): return _mlp_pair("numpy", bfloat16=True)

@benchmark("MLP 784-256-10 SGD step in bfloat16 (.bfloat16()), batch 128, device 'cpu'", "torch", target=2.0)
def mlp_bf16_cpu(): return _mlp_pair("cpu", bfloat16=True)

# --- chapter 09b: distributed training on MPI (jobs under mpiexec, 1 thread per rank) -------------------------

def _mpi_job(nproc, *args):
    "Run bench/dist_job.py on `nproc` ranks (one thread each) and return rank 0's JSON result."
    from minitorch_nb.distributed.core import launch
    env = {"OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": f"{ROOT.parent}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    job = launch(ROOT / "dist_job.py", args, nproc=nproc, timeout=300, env=env)
    if job.returncode != 0: raise RuntimeError(job.launcher + job.stderr[0])
    return json.loads(job.stdout[0].strip().splitlines()[-1])

@benchmark("all_reduce 4 MiB f32, 2 ranks: time vs mpi4py Allreduce (>=0.9x throughput: ratio <= 1.11)",
           "mpi4py", target=1 / 0.9)
def dist_all_reduce():
    r = _mpi_job(2, "allreduce")
    return r["ours_s"], r["theirs_s"]

@benchmark("DDP chapter-07 CNN, batch 64: s/step 2 ranks vs 1 rank (>=1.6x throughput: ratio <= 0.625)",
           "1 rank", target=1 / 1.6)
def dist_ddp_scaling():
    return _mpi_job(2, "ddp", 64)["step_s"], _mpi_job(1, "ddp", 64)["step_s"]

@benchmark("DDP MLP 2 ranks: s/step, buckets during backward vs one all-reduce after it", "after backward",
           target=1.0)
def dist_bucket_overlap():
    r = _mpi_job(2, "overlap")
    return r["bucketed_s"], r["after_s"]
# --- chapter 10: recurrent layers ---------------------------------------------------------------------------

def _blas_threads():
    "How many threads numpy's BLAS runs on (None if threadpoolctl cannot tell)."
    try:
        from threadpoolctl import threadpool_info
        return max(i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas")
    except (ImportError, ValueError):
        return None

def _lstm_pair(device, T=64, B=32, H=256):
    """nn.LSTM(H, H), one layer: forward + backward of a (T, B, H) float32 batch with the same weights, input and
    upstream gradient as torch's, which runs on as many threads as numpy's BLAS (both are GEMM-bound)."""
    import torch
    import minitorch_nb as mt
    if _blas_threads(): torch.set_num_threads(_blas_threads())
    rng = np.random.default_rng(0)
    x_np, g_np = (rng.standard_normal((T, B, H)).astype(np.float32) for _ in range(2))
    tlstm = torch.nn.LSTM(H, H)
    lstm = mt.nn.LSTM(H, H)
    lstm.load_state_dict({k: v.detach().numpy() for k, v in tlstm.state_dict().items()})
    lstm.to(device)
    x, g = mt.tensor(x_np, device=device, requires_grad=True), mt.tensor(g_np, device=device)
    tx, tg = torch.tensor(x_np, requires_grad=True), torch.tensor(g_np)
    def ours():
        x.grad = None
        for p in lstm.parameters(): p.grad = None
        lstm(x)[0].backward(g)
    def theirs():
        tx.grad = None
        for p in tlstm.parameters(): p.grad = None
        tlstm(tx)[0].backward(tg)
    return ours, theirs

@benchmark("LSTM 1 layer, hidden 256, seq 64, batch 32, fwd+bwd, device 'numpy'", "torch", target=1.5)
def lstm_numpy(): return _lstm_pair("numpy")

@benchmark("LSTM 1 layer, hidden 256, seq 64, batch 32, fwd+bwd, device 'cpu'", "torch", target=1.5)
def lstm_cpu(): return _lstm_pair("cpu")
# --- chapter 11: attention and the Transformer encoder layer ----------------------------------------------------

def _blas_threads():
    "The threads numpy's BLAS uses (torch is given as many, so both sides multiply matrices alike)."
    try:
        from threadpoolctl import threadpool_info
        return max([i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"] or [1])
    except ImportError: return 1

def _encoder_layer_pair(device):
    """TransformerEncoderLayer(d_model 128, 4 heads, feed-forward 512, dropout 0) forward + backward on (32, 64, 128)
    float32, ours on `device` with torch's state, against torch on the CPU."""
    import torch
    import minitorch_nb as mt
    torch.set_num_threads(_blas_threads())
    torch.manual_seed(0)
    theirs = torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
    ours = mt.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    ours.to(device)
    x_np = np.random.default_rng(0).standard_normal((32, 64, 128)).astype(np.float32)
    x, tx = mt.tensor(x_np, device=device, requires_grad=True), torch.tensor(x_np, requires_grad=True)
    def ours_step():
        ours.zero_grad(); x.grad = None
        ours(x).sum().backward()
    def theirs_step():
        theirs.zero_grad(); tx.grad = None
        theirs(tx).sum().backward()
    return ours_step, theirs_step

@benchmark("TransformerEncoderLayer d128 h4 seq64 b32 fwd+bwd f32, device 'numpy'", "torch", target=2.0)
def encoder_layer_numpy(): return _encoder_layer_pair("numpy")

@benchmark("TransformerEncoderLayer d128 h4 seq64 b32 fwd+bwd f32, device 'cpu'", "torch", target=2.0)
def encoder_layer_cpu(): return _encoder_layer_pair("cpu")

def _decoder_layer_pair(device):
    """TransformerDecoderLayer(d_model 128, 4 heads, feed-forward 512, dropout 0) forward + backward on a
    (32, 64, 128) float32 target with the causal mask and a (32, 64, 128) memory, ours on `device` with
    torch's state, against torch on the CPU."""
    import torch
    import minitorch_nb as mt
    torch.set_num_threads(_blas_threads())
    torch.manual_seed(0)
    theirs = torch.nn.TransformerDecoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
    ours = mt.nn.TransformerDecoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    ours.to(device)
    g = np.random.default_rng(0)
    tgt_np, mem_np = (g.standard_normal((32, 64, 128)).astype(np.float32) for _ in range(2))
    mask_np = np.triu(np.full((64, 64), -np.inf, np.float32), 1)
    tgt, mem = (mt.tensor(a, device=device, requires_grad=True) for a in (tgt_np, mem_np))
    ttgt, tmem = (torch.tensor(a, requires_grad=True) for a in (tgt_np, mem_np))
    mask, tmask = mt.tensor(mask_np, device=device), torch.tensor(mask_np)
    def ours_step():
        ours.zero_grad(); tgt.grad = mem.grad = None
        ours(tgt, mem, tgt_mask=mask, tgt_is_causal=True).sum().backward()
    def theirs_step():
        theirs.zero_grad(); ttgt.grad = tmem.grad = None
        theirs(ttgt, tmem, tgt_mask=tmask, tgt_is_causal=True).sum().backward()
    return ours_step, theirs_step

@benchmark("TransformerDecoderLayer d128 h4 seq64 mem64 b32 fwd+bwd f32, device 'numpy'", "torch", target=2.0)
def decoder_layer_numpy(): return _decoder_layer_pair("numpy")

@benchmark("TransformerDecoderLayer d128 h4 seq64 mem64 b32 fwd+bwd f32, device 'cpu'", "torch", target=2.0)
def decoder_layer_cpu(): return _decoder_layer_pair("cpu")

def _sdpa_pair(device):
    "scaled_dot_product_attention forward on (32, 4, 64, 32) float32 query, key and value, no grad."
    import torch
    import minitorch_nb as mt
    torch.set_num_threads(_blas_threads())
    q_np, k_np, v_np = (np.random.default_rng(i).standard_normal((32, 4, 64, 32)).astype(np.float32) for i in range(3))
    q, k, v = (mt.tensor(a, device=device) for a in (q_np, k_np, v_np))
    tq, tk, tv = (torch.tensor(a) for a in (q_np, k_np, v_np))
    sdpa, tsdpa = mt.nn.functional.scaled_dot_product_attention, torch.nn.functional.scaled_dot_product_attention
    def theirs():
        with torch.no_grad(): tsdpa(tq, tk, tv)
    return (lambda: sdpa(q, k, v)), theirs

@benchmark("scaled_dot_product_attention fwd (32,4,64,32) f32, device 'numpy'", "torch", target=1.5)
def sdpa_numpy(): return _sdpa_pair("numpy")

@benchmark("scaled_dot_product_attention fwd (32,4,64,32) f32, device 'cpu'", "torch", target=1.5)
def sdpa_cpu(): return _sdpa_pair("cpu")

@benchmark("GPT (11b) decoding 256 tokens x 8 sequences: KV cache / recompute (<=0.2: >=5x faster)",
           "minitorch_nb recompute", target=0.2)
def kv_cache_decoding():
    "Greedy decoding with the cache against recomputing the prefix at every step; best of two runs each."
    import minitorch_nb as mt
    from minitorch_nb.gpt import GPT, generate
    mt.manual_seed(0)
    model = GPT(512, block_size=272, d_model=96, n_layer=3, n_head=4)
    prompt = np.random.default_rng(0).integers(0, 512, (8, 16))
    def timed(use_cache):
        start = time.perf_counter()
        generate(model, prompt, 256, temperature=0, use_cache=use_cache)
        return time.perf_counter() - start
    cached = min(timed(True) for _ in range(2))
    recompute = min(timed(False) for _ in range(2))
    return cached, recompute
# --- chapter 12: GANs ----------------------------------------------------------------------------------------

def _dcgan_pair(device):
    """One DCGAN round (chapter 12's gan_step): G(z), a discriminator Adam step on a real batch and G(z).detach(), a
    generator Adam step through D; batch 64, 64-d codes, width 32; the same weights in torch (CPU, one round each)."""
    import torch
    import minitorch_nb as mt
    from minitorch_nb import gan
    tn = torch.nn
    rng = np.random.default_rng(0)
    real = rng.uniform(-1, 1, (64, 1, 28, 28)).astype(np.float32)
    mt.manual_seed(0)
    G, D = gan.dcgan_generator(64, 32), gan.dcgan_discriminator(32)
    for net in (G, D): net.apply(gan.dcgan_init)
    tG = tn.Sequential(tn.ConvTranspose2d(64, 128, 7, 1, 0, bias=False), tn.BatchNorm2d(128), tn.ReLU(),
                       tn.ConvTranspose2d(128, 64, 4, 2, 1, bias=False), tn.BatchNorm2d(64), tn.ReLU(),
                       tn.ConvTranspose2d(64, 1, 4, 2, 1), tn.Tanh())
    tD = tn.Sequential(tn.Conv2d(1, 64, 4, 2, 1), tn.LeakyReLU(0.2), tn.Conv2d(64, 128, 4, 2, 1, bias=False),
                       tn.BatchNorm2d(128), tn.LeakyReLU(0.2), tn.Conv2d(128, 1, 7, 1, 0), tn.Flatten())
    for ours, theirs in ((G, tG), (D, tD)):
        theirs.load_state_dict({k: torch.tensor(v.detach().to("numpy").numpy()) for k, v in ours.state_dict().items()})
    G, D = G.to(device), D.to(device)
    adam = lambda params, lib: lib.Adam(params, lr=2e-4, betas=(0.5, 0.999))
    opt_g, opt_d, topt_g, topt_d = adam(G.parameters(), mt.optim), adam(D.parameters(), mt.optim), \
        adam(tG.parameters(), torch.optim), adam(tD.parameters(), torch.optim)
    xb, txb = mt.tensor(real, device=device), torch.tensor(real)
    z = rng.standard_normal((64, 64, 1, 1)).astype(np.float32)
    zb, tzb = mt.tensor(z, device=device), torch.tensor(z)
    bce = tn.functional.binary_cross_entropy_with_logits
    def ours(): gan.gan_step(G, D, opt_g, opt_d, xb, zb)
    def theirs():
        fake = tG(tzb)
        r, f = tD(txb), tD(fake.detach())
        d_loss = bce(r, torch.ones_like(r)) + bce(f, torch.zeros_like(f))
        topt_d.zero_grad(); d_loss.backward(); topt_d.step()
        g = tD(fake)
        g_loss = bce(g, torch.ones_like(g))
        topt_g.zero_grad(); g_loss.backward(); topt_g.step()
    return ours, theirs

@benchmark("DCGAN step (12): D+G Adam, batch 64, latent 64, device 'cpu'", "torch", target=2.0)
def dcgan_step_cpu(): return _dcgan_pair("cpu")

# --- driver -------------------------------------------------------------------------------------------

def versions():
    import numpy, numba
    out = dict(python=platform.python_version(), numpy=numpy.__version__, numba=numba.__version__,
               machine=platform.machine(), cpus=os.cpu_count())
    try:
        import torch; out["torch"] = torch.__version__
    except ImportError: pass
    try:  # which BLAS numpy uses, and its kernel (e.g. OpenBLAS 'Haswell')
        from threadpoolctl import threadpool_info
        out["blas"] = [dict(api=i.get("internal_api"), version=i.get("version"), kernel=i.get("architecture"),
                            threads=i.get("num_threads")) for i in threadpool_info() if i.get("user_api") == "blas"]
    except ImportError: pass
    out["env"] = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_THREAD_TIMEOUT",
                                             "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "NUMBA_THREADING_LAYER")
                  if k in os.environ}
    return out

def main(filters):
    results = []
    for b in BENCHMARKS:
        if filters and not any(f in b["name"] for f in filters): continue
        try:
            ours, theirs = b["setup"]()
        except (ImportError, AttributeError) as e:
            print(f"{b['name']:55s} skipped: {e}")
            continue
        timed = callable(ours)
        if timed:
            t_ours, t_theirs = compare(ours, theirs, calibrate(ours))
        else:  # the benchmark measured its own values (e.g. counts from whole processes)
            t_ours, t_theirs = ours, theirs
        ratio = t_ours / t_theirs
        ok = ratio <= b["target"]
        values = dict(ours_s=t_ours, reference_s=t_theirs) if timed else dict(ours_value=t_ours, reference_value=t_theirs)
        results.append(dict(name=b["name"], reference=b["reference"], **values, ratio=ratio, target=b["target"], met=ok))
        shown = (lambda v: f"{v * 1e6:10.1f} us") if timed else (lambda v: f"{v:10g}   ")
        print(f"{b['name']:55s} ours {shown(t_ours)}  {b['reference']} {shown(t_theirs)}  "
              f"ratio {ratio:5.2f} (target <= {b['target']}) {'ok' if ok else 'MISSED'}")
    out = dict(when=time.strftime("%Y-%m-%d %H:%M:%S"), versions=versions(), results=results)
    (ROOT / "results.json").write_text(json.dumps(out, indent=1) + "\n")
    return results

if __name__ == "__main__":
    main(sys.argv[1:])
