"Train 6 steps (all), or 3 steps and a checkpoint (first), or 3 more from it (resume). Arguments: MODE FOLDER."
import sys, itertools
import numpy as np
import minitorch_nb as mt
import minitorch_nb.distributed as dist
from minitorch_nb import nn
from minitorch_nb.nn.parallel import DistributedDataParallel as DDP
from minitorch_nb.utils.data import DataLoader, DistributedSampler, TensorDataset

mode, folder = sys.argv[1], sys.argv[2]          # mode: all | first | resume
dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()
g = np.random.default_rng(0)
data = TensorDataset(mt.tensor(g.standard_normal((40, 8)).astype(np.float32)), mt.tensor(g.integers(0, 3, 40)))
mt.manual_seed(0)
model = DDP(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 3)))
opt = mt.optim.Adam(model.parameters(), lr=0.01)
sampler = DistributedSampler(data, world, rank, seed=0)
mt.manual_seed(1 + rank)                          # each rank its own dropout masks
steps, done, epoch = list(range(6) if mode == "all" else range(3)), 0, 0
if mode == "resume":
    state = mt.load(f"{folder}/checkpoint.{rank}")
    model.load_state_dict(state["model"]); opt.load_state_dict(state["optimizer"])
    mt.set_rng_state(state["rng"]); epoch, done = state["epoch"], state["batches_done"]
for _ in steps:
    sampler.set_epoch(epoch)
    batches = itertools.islice(DataLoader(data, batch_size=4, sampler=sampler), done, None)
    x, y = next(batches)
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    done += 1
    if done == len(sampler) // 4: epoch, done = epoch + 1, 0  # 5 batches per epoch per rank
if mode == "first":
    mt.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "rng": mt.get_rng_state(),
             "epoch": epoch, "batches_done": done}, f"{folder}/checkpoint.{rank}")
final = np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])
np.save(f"{folder}/{mode}.{rank}.npy", final)
print(f"[rank {rank}] {mode}: epoch {epoch}, batch {done}, checksum {final.sum():.9f}")
