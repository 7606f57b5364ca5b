"""DDP training of a small CNN; writes each rank's final parameters (and the averaged gradients of the first
step) to OUT.rank.npz. Arguments: OUT STEPS GLOBAL_BATCH ACCUMULATE DEVICE."""
import sys, contextlib
import numpy as np
import minitorch_nb as mt
import minitorch_nb.distributed as dist
from minitorch_nb import nn
from minitorch_nb.nn.parallel import DistributedDataParallel as DDP

out, steps, batch, accumulate, device = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()
data = np.load(out + ".data.npz")
x_all, y_all = data["x"], data["y"]
import minitorch_nb.distributed.core as core
core._FIRST_BUCKET_BYTES = 512  # PyTorch's 1 MiB would hold this small model whole: make several buckets
mt.manual_seed(1000 + rank)  # different on every rank: DDP's broadcast must make them equal
model = DDP(nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(4 * 4 * 4, 10)).to(device), bucket_cap_mb=0.0005)
for name, p in model.module.named_parameters():  # the initial weights come from the file, on rank 0
    if rank == 0: p.data.copy_(mt.tensor(data["init." + name]))
model._sync_module_states()
opt = mt.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
per = batch // world
first_grads = None
for step in range(steps):
    lo = step * batch + rank * per  # this rank's contiguous share of the global batch
    x, y = mt.tensor(x_all[lo:lo + per], device=device), mt.tensor(y_all[lo:lo + per], device=device)
    opt.zero_grad()
    for j, (xm, ym) in enumerate(zip(x.chunk(accumulate), y.chunk(accumulate))):
        ctx = contextlib.nullcontext() if j == accumulate - 1 else model.no_sync()
        with ctx: (nn.functional.cross_entropy(model(xm), ym) / accumulate).backward()
    if step == 0:
        first_grads = {n: p.grad.numpy().copy() for n, p in model.module.named_parameters()}
    opt.step()
np.savez(f"{out}.{rank}.npz", **{"param." + n: p.detach().numpy() for n, p in model.module.named_parameters()},
         **{"grad." + n: g for n, g in first_grads.items()}, allreduces=model.num_allreduces,
         buckets=len(model.bucket_names()))
print(f"rank {rank}: done")
