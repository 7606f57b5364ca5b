"""The oracle of ddp_unused.py: PyTorch DDP on gloo, the same model, data, schedule and modes; writes
OUT.torch.find.rank.npz and OUT.torch.strict.rank.txt. Arguments: OUT PORT."""
import os, sys
import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from unused_common import STEPS, HEADS, data, make, loss

def model_from(out):
    model = make(torch.nn)
    init = np.load(out + ".init.npz")
    model.load_state_dict({k: torch.tensor(init[k]) for k in init.files})
    return model

def run(rank, out, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    x, y = data(2)
    ddp = torch.nn.parallel.DistributedDataParallel(model_from(out))
    loss(ddp(torch.tensor(x[0, rank]), HEADS[0][rank]), torch.tensor(y[0, rank])).backward()
    with torch.no_grad(): ddp(torch.tensor(x[1, rank]), "c")
    try: ddp(torch.tensor(x[1, rank]), HEADS[1][rank])
    except RuntimeError as e: open(f"{out}.torch.strict.{rank}.txt", "w").write(str(e))
    model = model_from(out)
    ddp = torch.nn.parallel.DistributedDataParallel(model, find_unused_parameters=True)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    saved = {}
    for step in range(STEPS):
        opt.zero_grad()
        loss(ddp(torch.tensor(x[step, rank]), HEADS[step][rank]), torch.tensor(y[step, rank])).backward()
        saved |= {f"grad.{step}.{n}": p.grad.numpy().copy() for n, p in model.named_parameters()
                  if p.grad is not None}
        opt.step()
    saved |= {"param." + n: p.detach().numpy() for n, p in model.named_parameters()}
    np.savez(f"{out}.torch.find.{rank}.npz", **saved)
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(run, args=(sys.argv[1], int(sys.argv[2])), nprocs=2, join=True)
