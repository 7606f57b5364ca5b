"The Parameter class under PyTorch's other name for it, torch.nn.parameter. A face over chapter 02's file."
from .modules import Parameter  # 02
