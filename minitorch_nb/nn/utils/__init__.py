"Utilities on parameters and their gradients, like torch.nn.utils. A face over the chapters' files."
from ...training import clip_grad_norm_, clip_grad_value_  # 03
from . import rnn  # 10
