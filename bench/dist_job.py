"""The MPI side of bench.py's distributed rows; run under mpiexec by bench.py. Rank 0 prints one JSON line.

    mpiexec -n 2 python -m mpi4py bench/dist_job.py allreduce
    mpiexec -n N python -m mpi4py bench/dist_job.py ddp GLOBAL_BATCH
    mpiexec -n 2 python -m mpi4py bench/dist_job.py overlap
"""
import json, sys, time
import numpy as np
import minitorch_nb as mt
import minitorch_nb.distributed as dist
from minitorch_nb import nn
from minitorch_nb.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()
comm = dist.core._group().comm

def timed(fn, number, rounds=7):
    "Best of `rounds` blocks of `number` calls, per call; every rank starts each block together."
    best = float("inf")
    for _ in range(rounds):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(number): fn()
        best = min(best, (time.perf_counter() - start) / number)
    return comm.allreduce(best, op=__import__("mpi4py").MPI.MAX)  # the slowest rank's time

def allreduce():
    "mt.distributed.all_reduce of a 4 MiB float32 tensor vs mpi4py's Allreduce of the same buffer."
    from mpi4py import MPI
    t = mt.zeros(1 << 20)
    arr = np.zeros(1 << 20, np.float32)
    ours = lambda: dist.all_reduce(t)
    theirs = lambda: comm.Allreduce(MPI.IN_PLACE, arr, op=MPI.SUM)
    ours(); theirs()
    t_ours, t_theirs = float("inf"), float("inf")
    for _ in range(5):  # interleaved, so noise hits both
        t_ours, t_theirs = min(t_ours, timed(ours, 20, 1)), min(t_theirs, timed(theirs, 20, 1))
    return dict(ours_s=t_ours, theirs_s=t_theirs)

def train_step_fn(model, batch, ddp=True, after_backward=None):
    rng = np.random.default_rng(rank)
    x = mt.tensor(rng.standard_normal((batch,) + model.input_shape).astype(np.float32))
    y = mt.tensor(rng.integers(0, 10, batch))
    net = DDP(model) if ddp else model
    opt = mt.optim.SGD(net.parameters(), lr=0.01)
    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        if after_backward: after_backward(model)
        opt.step()
    return step

def ddp(global_batch):
    "Seconds per step of the chapter-07 CNN, global batch split over the ranks."
    mt.manual_seed(0)
    model = nn.conv.small_cnn(dropout=0.0)
    model.input_shape = (1, 28, 28)
    step = train_step_fn(model, global_batch // world, ddp=world > 1)
    step(); step()
    return dict(step_s=timed(step, 3, 5), world=world)

def one_allreduce_after_backward(model):
    "The baseline: all gradients flattened into one buffer, one all-reduce when backward is over."
    grads = [p.grad for p in model.parameters()]
    flat = mt.from_numpy(np.concatenate([g.numpy().ravel() for g in grads]))
    dist.all_reduce(flat, op=dist.ReduceOp.AVG)
    off = 0
    for g in grads:
        g.copy_(flat[off:off + g.numel()].reshape(g.shape)); off += g.numel()

def overlap():
    "DDP's bucketed all-reduces started during backward vs one all-reduce after it, same model and data."
    mt.manual_seed(0)
    make = lambda: nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                                 nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    a, b = make(), make()
    a.input_shape = b.input_shape = (784,)
    bucketed = train_step_fn(a, 64, ddp=True)
    after = train_step_fn(b, 64, ddp=False, after_backward=one_allreduce_after_backward)
    bucketed(); after()
    t_b, t_a = float("inf"), float("inf")
    for _ in range(4):
        t_b, t_a = min(t_b, timed(bucketed, 3, 1)), min(t_a, timed(after, 3, 1))
    return dict(bucketed_s=t_b, after_s=t_a)

mode = sys.argv[1]
result = {"allreduce": allreduce, "overlap": overlap}.get(mode, lambda: ddp(int(sys.argv[2])))()
if rank == 0: print(json.dumps(result))
