"Learning-rate schedulers, like torch.optim.lr_scheduler. A face over the chapters' files."
from ..training import (LRScheduler, StepLR, LambdaLR, CosineAnnealingLR, OneCycleLR, WarmupCosine,  # 03
                        ExponentialLR, MultiStepLR, LinearLR, ConstantLR, CosineAnnealingWarmRestarts, ReduceLROnPlateau,
                        SequentialLR)
