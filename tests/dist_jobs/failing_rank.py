"Rank 1 raises while rank 0 waits for a message from it: the job must end, not hang."
import minitorch_nb as mt
import minitorch_nb.distributed as dist
dist.init_process_group(backend="mpi")
if dist.get_rank() == 1: raise RuntimeError("rank 1 failed on purpose")
dist.recv(mt.zeros(1), src=1)  # never arrives
