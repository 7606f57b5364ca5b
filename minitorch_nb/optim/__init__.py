"Optimizers, like torch.optim. A face over the chapters' files."
from ..training import Optimizer, SGD, RMSprop, Adam, AdamW, Adagrad, Adadelta, Adamax, NAdam  # 03
from . import lr_scheduler
