"Optimizers, like torch.optim. A face over the chapters' files."
from ..training import Optimizer, SGD, RMSprop, Adam, AdamW  # 03
from . import lr_scheduler
