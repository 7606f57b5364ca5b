"""mt.distributed and DistributedDataParallel: MPI jobs started with mpiexec (under MPIEXEC_TIMEOUT and
coreutils `timeout`, so a broken job fails instead of hanging), checked against numpy, against one process
trained on the union batch, and against PyTorch DDP on the gloo backend."""
import os, socket, subprocess, sys, time
from pathlib import Path
import numpy as np
import pytest
import torch
import minitorch_nb as mt
from minitorch_nb import nn
from minitorch_nb.distributed.core import mpiexec_command, bucket_plan

JOBS = Path(__file__).parent / "dist_jobs"
ROOT = Path(__file__).parent.parent

def run_job(script, args=(), n=2, timeout=120):
    "Run a job of `n` ranks; MPI kills it after `timeout` s, coreutils `timeout` 10 s later if MPI didn't."
    env = {**os.environ, "MPIEXEC_TIMEOUT": str(timeout), "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1",
           "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    cmd = ["timeout", "-k", "5", str(timeout + 10)] + mpiexec_command(JOBS / script, args, nproc=n)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout + 30)
    return proc, time.perf_counter() - start

@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("device", ["numpy", "cpu"])
def test_collectives(n, device):
    proc, _ = run_job("collectives.py", [device], n=n)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("all collectives OK") == n

@pytest.mark.parametrize("device", ["numpy", "cpu"])
def test_ddp_over_a_bfloat16_model(device):
    "bfloat16 gradients averaged in float32 and rounded once, the same on every rank (tests/dist_jobs/ddp_bf16.py)."
    proc, _ = run_job("ddp_bf16.py", [device], n=2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("bfloat16 DDP OK") == 2

def test_world_of_one_without_mpiexec():
    "A script started as plain `python script.py` is a world of one: every collective is the identity."
    proc = subprocess.run([sys.executable, str(JOBS / "collectives.py"), "numpy"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert "rank 0 of 1 on numpy: all collectives OK" in proc.stdout

def test_failing_rank_ends_the_job_quickly():
    "Rank 1 raises while rank 0 waits for it: `python -m mpi4py` aborts every rank, long before the timeout."
    proc, seconds = run_job("failing_rank.py", n=2, timeout=60)
    assert proc.returncode != 0
    assert "rank 1 failed on purpose" in proc.stderr
    assert seconds < 30, seconds

def test_launcher_module():
    "`python -m minitorch_nb.distributed.run -n 2 script` runs the job (and Python warns about nothing)."
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPIEXEC_TIMEOUT": "120"}
    proc = subprocess.run([sys.executable, "-m", "minitorch_nb.distributed.run", "-n", "2", "--timeout", "120",
                           str(JOBS / "collectives.py"), "numpy"], capture_output=True, text=True, env=env,
                          timeout=150)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("all collectives OK") == 2 and proc.stderr == ""

def cnn(init):
    "ddp_train.py's model in one process, starting from the weights in `init`."
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(4 * 4 * 4, 10))
    model.load_state_dict({k: mt.tensor(v) for k, v in init.items()})
    return model

@pytest.fixture(scope="module")
def ddp_data(tmp_path_factory):
    "Data and initial weights for ddp_train.py, in a file every rank reads."
    out = str(tmp_path_factory.mktemp("ddp") / "run")
    rng = np.random.default_rng(0)
    mt.manual_seed(0)
    init = {k: v.numpy() for k, v in nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                                    nn.Flatten(), nn.Linear(64, 10)).state_dict().items()}
    x = rng.standard_normal((6 * 16, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, 6 * 16).astype(np.int64)
    np.savez(out + ".data.npz", x=x, y=y, **{"init." + k: v for k, v in init.items()})
    return out, x, y, init

def single_process(x, y, init, steps, batch):
    "One process, the union batch of each step, the same optimizer."
    model = cnn(init)
    opt = mt.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    first = None
    for step in range(steps):
        opt.zero_grad()
        nn.functional.cross_entropy(model(mt.tensor(x[step * batch:(step + 1) * batch])),
                                    mt.tensor(y[step * batch:(step + 1) * batch])).backward()
        if step == 0: first = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
        opt.step()
    return {n: p.detach().numpy() for n, p in model.named_parameters()}, first

@pytest.mark.parametrize("n, accumulate, device", [(2, 1, "numpy"), (4, 1, "cpu"), (2, 2, "numpy")])
def test_ddp_matches_one_process_on_the_union_batch(ddp_data, n, accumulate, device):
    out, x, y, init = ddp_data
    steps, batch = 6, 16
    proc, _ = run_job("ddp_train.py", [out, steps, batch, accumulate, device], n=n)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ranks = [np.load(f"{out}.{r}.npz") for r in range(n)]
    want, want_grads = single_process(x, y, init, steps, batch)
    for r in ranks:  # every rank holds the same values, bit for bit
        for k in r.files: np.testing.assert_array_equal(r[k], ranks[0][k])
    for name, w in want.items():  # and one process on the union batch, to float32 rounding
        np.testing.assert_allclose(ranks[0]["param." + name], w, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(ranks[0]["grad." + name], want_grads[name], rtol=2e-5, atol=1e-7)
    # one all-reduce per bucket and step, however many micro-batches a step accumulates
    assert int(ranks[0]["allreduces"]) == steps * int(ranks[0]["buckets"]) and int(ranks[0]["buckets"]) > 1

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def torch_gloo_oracle(out, attempts=3):
    """Run the torch oracle job. Now and then one of its spawned gloo ranks aborts with std::terminate
    (SIGABRT) in torch's own process group, whatever our code does; such a run is retried on a new port."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    for _ in range(attempts):
        proc = subprocess.run(["timeout", "-k", "5", "150", sys.executable, str(JOBS / "torch_gloo.py"), out, "16",
                               "2", str(free_port())], capture_output=True, text=True, env=env, timeout=180)
        if proc.returncode == 0 or "SIGABRT" not in proc.stderr: return proc
    return proc

def test_ddp_gradients_match_torch_gloo(ddp_data):
    "PyTorch DDP on gloo (2 spawned processes) is the oracle for the averaged gradients of the first step."
    out, x, y, init = ddp_data
    proc = torch_gloo_oracle(out)
    assert proc.returncode == 0, proc.stderr
    ours = run_job("ddp_train.py", [out, 1, 16, 1, "numpy"], n=2)[0]
    assert ours.returncode == 0, ours.stderr
    for r in range(2):
        theirs, mine = np.load(f"{out}.torch.{r}.npz"), np.load(f"{out}.{r}.npz")
        for name in theirs.files:
            np.testing.assert_allclose(mine["grad." + name], theirs[name], rtol=1e-5, atol=1e-7)

def test_bucket_plan_matches_torch():
    import torch.distributed as tdist
    models = [nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)),
              nn.Sequential(*[nn.Linear(300, 300) for _ in range(20)]),
              mt.nn.conv.small_cnn()]
    for model in models:
        params = list(model.parameters())
        shadows = [torch.empty(tuple(p.shape)) for p in params][::-1]  # torch's input: reverse order
        for cap in (25, 1, 0.3, 0.001):
            theirs, _ = tdist._compute_bucket_assignment_by_size(shadows, [2**20, int(cap * 2**20)])
            assert bucket_plan(params, cap) == [[len(params) - 1 - i for i in b] for b in theirs], (model, cap)

@pytest.mark.parametrize("n, replicas, drop_last", [(10, 4, False), (10, 4, True), (12, 3, False), (3, 4, False),
                                                    (7, 2, True)])
def test_distributed_sampler_matches_torch(n, replicas, drop_last):
    from torch.utils.data import DistributedSampler as TorchSampler
    for rank in range(replicas):
        ours = mt.utils.data.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    # shuffled: each epoch one permutation shared by the ranks, split without overlap, new with set_epoch
    shards = []
    for epoch in (0, 1):
        samplers = [mt.utils.data.DistributedSampler(range(n), replicas, r, drop_last=drop_last) for r in range(replicas)]
        for s in samplers: s.set_epoch(epoch)
        shards.append([list(s) for s in samplers])
        flat = sorted(i for shard in shards[-1] for i in shard)
        assert len(flat) == len(TorchSampler(range(n), replicas, 0, drop_last=drop_last)) * replicas
        assert set(flat) <= set(range(n)) and (drop_last or set(flat) == set(range(n)))
    assert shards[0] != shards[1]
    with pytest.raises(ValueError):
        mt.utils.data.DistributedSampler(range(n), replicas, replicas)

def test_errors_before_init():
    import minitorch_nb.distributed as dist
    if dist.is_initialized(): pytest.skip("a group is already initialized in this process")
    for fn in (dist.get_rank, dist.get_world_size, dist.barrier):
        with pytest.raises(ValueError, match="init_process_group"): fn()
    with pytest.raises(ValueError, match="backend"): dist.init_process_group(backend="nccl")

def test_checkpoint_resume_is_bit_exact(tmp_path):
    "Model, optimizer, RNG and sampler position saved after 3 steps; a new job resumes; 6 steps in one go agree."
    for mode in ("all", "first", "resume"):
        proc, _ = run_job("resume.py", [mode, tmp_path], n=2)
        assert proc.returncode == 0, proc.stderr
    for r in range(2):
        assert np.load(tmp_path / f"all.{r}.npy").tobytes() == np.load(tmp_path / f"resume.{r}.npy").tobytes()
    state = mt.load(tmp_path / "checkpoint.0")
    assert list(state["model"])[0] == "module.0.weight" and state["epoch"] == 0 and state["batches_done"] == 3

# --- the simulators and the hook, in this process ---------------------------------------------------------------

from minitorch_nb.distributed.core import (SimWorld, ring_all_reduce, tree_all_reduce, naive_all_reduce,
                                           gpipe_schedule, bubble, column_parallel, row_parallel, ZeroAdamShard,
                                           top_k, fedavg, amdahl_speedup, step_time)

@pytest.mark.parametrize("D, n", [(2, 8), (3, 10), (5, 7), (8, 1024)])
def test_ring_all_reduce_bytes_and_values(D, n):
    xs = [np.random.default_rng(r).standard_normal(n) for r in range(D)]
    world = SimWorld(D)
    out = ring_all_reduce(world, xs)
    for o in out: np.testing.assert_allclose(o, np.sum(xs, axis=0), rtol=1e-12, atol=1e-12)
    assert world.steps == 2 * (D - 1) and world.messages == 2 * D * (D - 1)
    chunks = [len(c) * 8 for c in np.array_split(np.zeros(n), D)]
    assert sum(world.sent) == 2 * (D - 1) * sum(chunks)  # every chunk travels 2(D-1) times in all
    if n % D == 0: assert world.sent == [2 * (D - 1) * n * 8 // D] * D
    for algo in (naive_all_reduce, tree_all_reduce):
        if algo is tree_all_reduce and D & (D - 1): continue
        for o in algo(SimWorld(D), xs): np.testing.assert_allclose(o, np.sum(xs, axis=0), rtol=1e-12, atol=1e-12)

@pytest.mark.parametrize("p, m", [(1, 1), (2, 3), (4, 4), (4, 32), (8, 5)])
def test_gpipe_bubble_is_exact(p, m):
    grid = gpipe_schedule(p, m)
    assert all(len(row) == 2 * (m + p - 1) for row in grid)
    assert abs(bubble(grid) - (p - 1) / (m + p - 1)) < 1e-12
    for i, row in enumerate(grid):  # stage i runs F0..F(m-1) then B(m-1)..B0, and forwards start at tick i
        assert [c for c in row if c] == [f"F{j}" for j in range(m)] + [f"B{j}" for j in reversed(range(m))]
        assert row.index("F0") == i

@pytest.mark.parametrize("D", [2, 4])
def test_tensor_parallel_linear_equals_unsharded(D):
    mt.manual_seed(0)
    lin, x = nn.Linear(12, 8), mt.randn(5, 12)
    mt.testing.assert_close(mt.cat([f(x) for f in column_parallel(lin, D)], dim=1), lin(x))
    parts = [f(xp) for f, xp in zip(row_parallel(lin, D), x.chunk(D, dim=1))]
    mt.testing.assert_close(sum(parts) + lin.bias, lin(x), rtol=1e-5, atol=1e-6)

def test_zero1_adam_is_adam_bit_for_bit():
    mt.manual_seed(0)
    p = mt.nn.Parameter(mt.randn(37))
    opt = mt.optim.Adam([p], lr=0.1)
    shards = [ZeroAdamShard(37, r, 3, lr=0.1) for r in range(3)]
    flat = p.detach().numpy().copy()
    for _ in range(4):
        g = np.random.default_rng(0).standard_normal(37).astype(np.float32)
        p.grad = mt.tensor(g)
        opt.step()
        flat = np.concatenate([s.step(flat, g) for s in shards])
    assert flat.tobytes() == p.detach().numpy().tobytes()
    assert sum(s.state_bytes() for s in shards) == 2 * 37 * 4

def test_small_helpers():
    assert np.count_nonzero(top_k(np.arange(-50.0, 50.0), 0.05)) == 5
    np.testing.assert_allclose(fedavg([np.ones(2), 3 * np.ones(2)], [1, 3]), [2.5, 2.5])
    assert abs(amdahl_speedup(0.95, 1000, 0.116 / 100) - 19.19) < 0.01  # the corrected worked example
    assert step_time(0.18, 0.245) == pytest.approx(0.425) and step_time(0.18, 0.1, overlap_s=0.15) == 0.18

def test_post_accumulate_grad_hook_matches_torch():
    "The engine's hook that DDP uses: called once per backward, after .grad holds every path's contribution."
    def trace(lib):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        seen = []
        h = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        (w * w + 3 * w).sum().backward()
        (w * 2).sum().backward()
        h.remove()
        (w * 2).sum().backward()
        return seen, w.grad.tolist()
    assert trace(mt) == trace(torch)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (mt.tensor([1.0], requires_grad=True) * 2).register_post_accumulate_grad_hook(print)

def test_distributed_sampler_defaults_to_the_default_group(tmp_path):
    """Under mpiexec a DistributedSampler given no num_replicas or rank takes the group's (2 ranks): shards agree
    with torch's sampler split of the same permutation; before init_process_group and after destroy, torch's
    ValueError."""
    import json
    from torch.utils.data import DistributedSampler as TorchSampler
    proc, _ = run_job("sampler.py", [tmp_path / "s"], n=2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = [json.loads((tmp_path / f"s.{r}.json").read_text()) for r in range(2)]
    with pytest.raises(ValueError) as theirs: TorchSampler(range(10))  # no group in this process
    for r, g in enumerate(got):
        assert (g["world"], g["rank"]) == (2, r)
        assert g["before"] == g["after"] == str(theirs.value)
    for config, shard0 in got[0]["shards"].items():
        n, shuffle, drop_last, seed, epoch = map(int, config.split())
        shards = [shard0, got[1]["shards"][config]]
        # the permutation both ranks share: one replica of the same seed and epoch holds all of it
        whole = mt.utils.data.DistributedSampler(range(n), 1, 0, shuffle=bool(shuffle), seed=seed)
        whole.set_epoch(epoch)
        order = list(whole)
        for r in range(2):
            split = TorchSampler(range(n), 2, r, shuffle=False, drop_last=bool(drop_last))
            assert shards[r] == [order[i] for i in split], config  # torch's padding and split
        if drop_last or n % 2 == 0: assert not set(shards[0]) & set(shards[1]), config  # disjoint
        if not shuffle:  # unshuffled, torch's sampler itself gives the same shards
            assert shards == [list(TorchSampler(range(n), 2, r, shuffle=False, drop_last=bool(drop_last)))
                              for r in range(2)]

@pytest.fixture(scope="module")
def unused_runs(tmp_path_factory):
    "ddp_unused.py (ours, 2 MPI ranks) and torch_unused.py (PyTorch DDP on gloo) from the same initial weights."
    sys.path.insert(0, str(JOBS))
    from unused_common import make
    out = str(tmp_path_factory.mktemp("unused") / "run")
    mt.manual_seed(0)
    init = {k: v.numpy() for k, v in make(nn).state_dict().items()}
    np.savez(out + ".init.npz", **init)
    for mode in ("find", "strict"):
        proc, _ = run_job("ddp_unused.py", [out, mode], n=2)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run(["timeout", "-k", "5", "150", sys.executable, str(JOBS / "torch_unused.py"), out,
                           str(free_port())], capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"},
                          timeout=180)
    assert proc.returncode == 0, proc.stderr
    return out, init

def test_ddp_unused_parameters_raise_at_the_next_forward_like_torch(unused_runs):
    "find_unused_parameters=False: the forward after a backward that missed parameters raises torch's error."
    out, _ = unused_runs
    for r in range(2):
        ours, theirs = (Path(f"{out}.{who}strict.{r}.txt").read_text() for who in ("", "torch."))
        assert ours.startswith("Expected to have finished reduction in the prior iteration") and "find_unused_parameters=True" in ours
        line = lambda text: next(l.strip() for l in text.splitlines() if l.startswith("Parameter indices"))
        assert line(ours) == line(theirs)
    # at step 0 rank 0 used head a and rank 1 head b (see HEADS): parameters 2 3 are a's, 4 5 b's, 6 7 c's
    assert [line(Path(f"{out}.strict.{r}.txt").read_text())[-7:] for r in range(2)] == ["4 5 6 7", "2 3 6 7"]

def test_ddp_find_unused_parameters_matches_torch_and_one_process(unused_runs):
    """find_unused_parameters=True: every step's gradients equal torch's on each rank (a parameter no rank used has
    no .grad; one used on the other rank only gets the average), and the trained weights equal one process
    minimizing the mean of the ranks' losses."""
    from unused_common import STEPS, HEADS, data, make, loss
    out, init = unused_runs
    ours = [np.load(f"{out}.find.{r}.npz") for r in range(2)]
    theirs = [np.load(f"{out}.torch.find.{r}.npz") for r in range(2)]
    for r in range(2):
        assert sorted(ours[r].files) == sorted(theirs[r].files)  # the same gradients exist (None where torch's are)
        assert not any(".c." in k for k in ours[r].files if k.startswith("grad."))  # head c: never used, never a grad
        for k in theirs[r].files:
            np.testing.assert_allclose(ours[r][k], theirs[r][k], rtol=1e-5, atol=1e-6, err_msg=k)
            np.testing.assert_array_equal(ours[r][k], ours[0][k], err_msg=k)  # the ranks agree bit for bit
    model = make(nn)  # one process, the mean of both ranks' losses
    model.load_state_dict({k: mt.tensor(v) for k, v in init.items()})
    opt = mt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = data(2)
    for step in range(STEPS):
        opt.zero_grad()
        total = sum(loss(model(mt.tensor(x[step, r]), HEADS[step][r]), mt.tensor(y[step, r])) for r in range(2))
        (total / 2).backward()
        opt.step()
    for n, p in model.named_parameters():
        np.testing.assert_allclose(ours[0]["param." + n], p.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=n)
