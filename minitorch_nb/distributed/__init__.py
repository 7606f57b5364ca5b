"Distributed training on MPI, like torch.distributed: a process group, collectives on tensors, DDP. A face."
from .core import (ReduceOp, ProcessGroup, Work, is_available, init_process_group, is_initialized,  # 09b
                   destroy_process_group, new_group, get_rank, get_world_size, get_backend, barrier,
                   all_reduce, broadcast, all_gather, reduce_scatter, reduce, send, recv, isend, irecv,
                   DistributedDataParallel, launch)
