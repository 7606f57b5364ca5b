"mt.accelerator, after torch.accelerator: which registered device is an accelerator, and whether it is there (chapter 00)."
from .autograd import (is_accelerator_available as is_available, current_accelerator, accelerator_count as device_count,
                       current_accelerator_index as current_device_index)
