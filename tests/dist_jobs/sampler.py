"""DistributedSampler with no num_replicas or rank: they come from the default process group. Writes each rank's
shards (for several sizes, shuffle, drop_last, epochs) to OUT.rank.json. Argument: OUT."""
import json, sys
import minitorch_nb as mt
import minitorch_nb.distributed as dist
from minitorch_nb.utils.data import DistributedSampler

out = sys.argv[1]
try:
    DistributedSampler(range(10))
    raise AssertionError("a sampler before init_process_group must fail")
except ValueError as e: before = str(e)
dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()
shards = {}
for n in (10, 11, 3):
    for shuffle in (False, True):
        for drop_last in (False, True):
            for seed, epoch in ((0, 0), (0, 1), (7, 0)):
                s = DistributedSampler(range(n), shuffle=shuffle, seed=seed, drop_last=drop_last)
                s.set_epoch(epoch)
                assert (s.num_replicas, s.rank) == (world, rank)
                shards[f"{n} {int(shuffle)} {int(drop_last)} {seed} {epoch}"] = list(s)
dist.destroy_process_group()
try:
    DistributedSampler(range(10))
    raise AssertionError("a sampler after destroy_process_group must fail")
except ValueError as e: after = str(e)
json.dump({"world": world, "rank": rank, "shards": shards, "before": before, "after": after},
          open(f"{out}.{rank}.json", "w"))
print(f"rank {rank}: done")
