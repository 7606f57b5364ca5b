"""The oracle: PyTorch DDP on the gloo backend, the same model, data and shares as ddp_train.py; writes the
averaged gradients of the first step on each rank to OUT.torch.rank.npz. Arguments: OUT GLOBAL_BATCH WORLD."""
import os, sys
import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

def run(rank, out, batch, world, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    data = np.load(out + ".data.npz")
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 10))
    model.load_state_dict({k[5:]: torch.tensor(v) for k, v in data.items() if k.startswith("init.")})
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    per = batch // world
    x = torch.tensor(data["x"][rank * per:(rank + 1) * per])
    y = torch.tensor(data["y"][rank * per:(rank + 1) * per])
    torch.nn.functional.cross_entropy(ddp(x), y).backward()
    np.savez(f"{out}.torch.{rank}.npz", **{n: p.grad.numpy() for n, p in model.named_parameters()})
    dist.destroy_process_group()

if __name__ == "__main__":
    out, batch, world, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    mp.spawn(run, args=(out, batch, world, port), nprocs=world, join=True)
