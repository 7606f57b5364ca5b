"Weight initialisation schemes, like torch.nn.init. A face over the chapters' files."
from .modules import (calculate_gain, uniform_, normal_, constant_, zeros_, ones_, xavier_uniform_,  # 02
                      xavier_normal_, kaiming_uniform_, kaiming_normal_, _calculate_fan_in_and_fan_out)
