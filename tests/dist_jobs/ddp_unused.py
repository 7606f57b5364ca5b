"""DDP with a parameter that gets no gradient. MODE find: find_unused_parameters=True, three SGD steps, each rank's
gradients of every step and final parameters to OUT.find.rank.npz. MODE strict: the default; the error of the
next forward that would sync to OUT.strict.rank.txt. Arguments: OUT MODE."""
import sys
import numpy as np
import minitorch_nb as mt
import minitorch_nb.distributed as dist
import minitorch_nb.distributed.core as core
from minitorch_nb import nn
from minitorch_nb.nn.parallel import DistributedDataParallel as DDP
from unused_common import STEPS, HEADS, data, make, loss

out, mode = sys.argv[1], sys.argv[2]
dist.init_process_group(backend="mpi")
rank = dist.get_rank()
x, y = data(dist.get_world_size())
init = np.load(out + ".init.npz")
mt.manual_seed(10 + rank)
model = make(nn)
model.load_state_dict({k: mt.tensor(init[k]) for k in init.files} if rank == 0 else model.state_dict())
if mode == "strict":
    ddp = DDP(model)
    loss(ddp(mt.tensor(x[0, rank]), HEADS[0][rank]), mt.tensor(y[0, rank])).backward()
    with mt.no_grad(): ddp(mt.tensor(x[1, rank]), "c")  # a forward without grad is allowed (as in torch)
    try:
        ddp(mt.tensor(x[1, rank]), HEADS[1][rank])
        raise AssertionError("the second forward must raise")
    except RuntimeError as e:
        open(f"{out}.strict.{rank}.txt", "w").write(str(e))
else:
    core._FIRST_BUCKET_BYTES = 64  # several buckets, so unused parameters must complete some of them
    ddp = DDP(model, find_unused_parameters=True, bucket_cap_mb=0.0001)
    assert len(ddp.bucket_names()) > 2, ddp.bucket_names()
    opt = mt.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    saved = {}
    for step in range(STEPS):
        opt.zero_grad()
        loss(ddp(mt.tensor(x[step, rank]), HEADS[step][rank]), mt.tensor(y[step, rank])).backward()
        saved |= {f"grad.{step}.{n}": p.grad.numpy().copy() for n, p in model.named_parameters()
                  if p.grad is not None}
        opt.step()
    saved |= {"param." + n: p.detach().numpy() for n, p in model.named_parameters()}
    np.savez(f"{out}.find.{rank}.npz", **saved)
print(f"rank {rank}: {mode} done")
