"Every collective on every rank, checked against the value numpy computes from all ranks' inputs."
import sys
import ml_dtypes
import numpy as np
import minitorch_nb as mt
import minitorch_nb.distributed as dist

dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()
device = sys.argv[1]

def data(r, dtype, shape=(3, 4)):
    "Rank r's input: distinct, exactly representable values."
    return (np.arange(np.prod(shape)).reshape(shape) * (r + 1) + r).astype(dtype)

def check(got, want, what):
    got = np.asarray(got.numpy() if isinstance(got, mt.Tensor) else got)
    assert got.dtype == want.dtype and np.array_equal(got, want), (what, got, want)

every = lambda dtype: np.stack([data(r, dtype) for r in range(world)])
for dtype in (np.float32, np.float64, np.int64, np.int32, np.float16, ml_dtypes.bfloat16):
    for op, fn in (("sum", np.sum), ("max", np.max), ("min", np.min), ("product", np.prod)):
        t = mt.tensor(data(rank, dtype), device=device)
        dist.all_reduce(t, op=op)
        # float16 and bfloat16 are reduced in float32 (MPI has no 16-bit arithmetic), then rounded once
        wide = np.float32 if dtype in (np.float16, ml_dtypes.bfloat16) else dtype
        check(t, fn(every(dtype).astype(wide), axis=0).astype(dtype), f"all_reduce {op} {dtype}")
    if np.dtype(dtype).kind == "f" or dtype == ml_dtypes.bfloat16:
        t = mt.tensor(data(rank, dtype), device=device)
        dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True).wait()
        check(t, (every(dtype).astype(np.float32).sum(0) / world).astype(dtype), f"avg {dtype}")
    # a transposed (non-contiguous) tensor goes through a copy and comes back transposed
    t = mt.tensor(data(rank, dtype), device=device).t()
    dist.all_reduce(t)
    check(t, every(dtype).sum(0).astype(dtype).T, f"all_reduce non-contiguous {dtype}")
    b = mt.tensor(data(rank, dtype), device=device)
    dist.broadcast(b, src=world - 1)
    check(b, data(world - 1, dtype), f"broadcast {dtype}")
    out = [mt.zeros(3, 4, dtype=mt.tensor(data(0, dtype)).dtype, device=device) for _ in range(world)]
    dist.all_gather(out, mt.tensor(data(rank, dtype), device=device))
    for r in range(world): check(out[r], data(r, dtype), f"all_gather {dtype}")
    ins = [mt.tensor(data(rank * world + k, dtype), device=device) for k in range(world)]
    o = mt.zeros(3, 4, dtype=ins[0].dtype, device=device)
    dist.reduce_scatter(o, ins)
    check(o, sum(data(r * world + rank, dtype) for r in range(world)).astype(dtype), f"reduce_scatter {dtype}")
    red = mt.tensor(data(rank, dtype), device=device)
    dist.reduce(red, dst=0)
    check(red, every(dtype).sum(0).astype(dtype) if rank == 0 else data(rank, dtype), f"reduce {dtype}")
# point to point: a ring, blocking and non-blocking
right, left = (rank + 1) % world, (rank - 1) % world
got = mt.zeros(5, device=device)
if world == 1:  # a blocking send to oneself may wait for a receive that can't start: MPI allows that deadlock
    work = dist.irecv(got, src=0)
    dist.send(mt.full((5,), 0.0, device=device), dst=0)
    work.wait(); src = 0
elif rank % 2 == 0:
    dist.send(mt.full((5,), float(rank), device=device), dst=right)
    src = dist.recv(got, src=left)
else:
    src = dist.recv(got)  # from any rank
    dist.send(mt.full((5,), float(rank), device=device), dst=right)
check(got, np.full(5, float(left), np.float32), "send/recv")
assert src == left
msg, into = mt.full((4,), 10.0 * rank, device=device), mt.zeros(4, device=device)
works = [dist.isend(msg, dst=right, tag=7), dist.irecv(into, src=left, tag=7)]
for w in works: w.wait()
check(into, np.full(4, 10.0 * left, np.float32), "isend/irecv")
msg16, into16 = mt.full((3,), 1.5 + rank, dtype=mt.bfloat16, device=device), mt.zeros(3, dtype=mt.bfloat16, device=device)
works = [dist.isend(msg16, dst=right, tag=8), dist.irecv(into16, src=left, tag=8)]
for w in works: w.wait()
check(into16, np.full(3, 1.5 + left, ml_dtypes.bfloat16), "isend/irecv bfloat16")
dist.barrier()
print(f"rank {rank} of {world} on {device}: all collectives OK")
