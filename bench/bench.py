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

def compare(ours, theirs, number, rounds=5):
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

def _mlp_pair(device="numpy"):
    "The same 784-256-10 MLP, data and SGD optimizer in minitorch_nb and in torch."
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
    def ours():
        opt.zero_grad(); loss_fn(model(xb), yb).backward(); opt.step()
    def theirs():
        topt.zero_grad(); tloss_fn(tmodel(txb), tyb).backward(); topt.step()
    return ours, theirs

@benchmark("MLP 784-256-10 SGD step, batch 128", "torch", target=1.5)
def mlp_step(): return _mlp_pair()

# --- driver -------------------------------------------------------------------------------------------

def versions():
    import numpy, numba
    out = dict(python=platform.python_version(), numpy=numpy.__version__, numba=numba.__version__,
               machine=platform.machine(), cpus=os.cpu_count())
    try:
        import torch; out["torch"] = torch.__version__
    except ImportError: pass
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
        number = calibrate(ours)
        t_ours, t_theirs = compare(ours, theirs, number)
        ratio = t_ours / t_theirs
        ok = ratio <= b["target"]
        results.append(dict(name=b["name"], reference=b["reference"], ours_s=t_ours, reference_s=t_theirs,
                            ratio=ratio, target=b["target"], met=ok))
        print(f"{b['name']:55s} ours {t_ours*1e6:10.1f} us  {b['reference']} {t_theirs*1e6:10.1f} us  "
              f"ratio {ratio:5.2f} (target <= {b['target']}) {'ok' if ok else 'MISSED'}")
    out = dict(when=time.strftime("%Y-%m-%d %H:%M:%S"), versions=versions(), results=results)
    (ROOT / "results.json").write_text(json.dumps(out, indent=1) + "\n")
    return results

if __name__ == "__main__":
    main(sys.argv[1:])
