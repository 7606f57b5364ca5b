"""DDP over a bfloat16 model: every rank ends with the same bfloat16 gradients, the average of the ranks' own
(gathered here) summed in float32 and rounded once, and the same parameters after an SGD step. Argument: device."""
import sys
import ml_dtypes
import numpy as np
import minitorch_nb as mt
import minitorch_nb.distributed as dist
from minitorch_nb import nn
from minitorch_nb.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="mpi")
rank, world, device = dist.get_rank(), dist.get_world_size(), sys.argv[1]
mt.manual_seed(rank)  # different weights on each rank: DDP must broadcast rank 0's
model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)).to(device).bfloat16()
ddp = DDP(model)
x = mt.tensor(np.random.default_rng(rank).standard_normal((4, 6)).astype(np.float32), device=device).bfloat16()
# each rank's own gradients, without DDP, from the broadcast weights
local = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)).to(device).bfloat16()
local.load_state_dict(model.state_dict())
local(x).float().pow(2).sum().backward()
ddp(x).float().pow(2).sum().backward()
for (name, p), q in zip(model.named_parameters(), local.parameters()):
    assert p.dtype == p.grad.dtype == mt.bfloat16, name
    parts = [mt.zeros(*q.shape, dtype=mt.bfloat16, device=device) for _ in range(world)]
    dist.all_gather(parts, q.grad)
    want = (sum(t.numpy().astype(np.float32) for t in parts) / world).astype(ml_dtypes.bfloat16)
    got = p.grad.numpy()
    assert got.dtype == want.dtype and np.array_equal(got, want), (name, got, want)
opt = mt.optim.SGD(model.parameters(), lr=0.1)
opt.step()
for name, p in model.named_parameters():
    gathered = [mt.zeros(*p.shape, dtype=mt.bfloat16, device=device) for _ in range(world)]
    dist.all_gather(gathered, p.detach())
    assert all(np.array_equal(g.numpy(), gathered[0].numpy()) for g in gathered), name
print(f"rank {rank} of {world} on {device}: bfloat16 DDP OK")
