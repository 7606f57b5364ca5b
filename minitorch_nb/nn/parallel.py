"Parallel wrappers of modules, like torch.nn.parallel. A face."
from ..distributed.core import DistributedDataParallel  # 09b
