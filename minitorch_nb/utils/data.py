"Datasets, samplers, batching and the DataLoader, like torch.utils.data. A face over chapter 04's file."
from ..data import (Dataset, TensorDataset, DataLoader, Sampler, SequentialSampler, RandomSampler,  # 04
                    BatchSampler, DistributedSampler, default_collate, get_worker_info)
