"Layers and losses as plain functions, like torch.nn.functional. A face over the chapters' files."
from .modules import (linear, relu, tanh, sigmoid, gelu, softmax, log_softmax, logsigmoid, erf, dropout,  # 02
                      embedding, mse_loss, nll_loss, cross_entropy, binary_cross_entropy_with_logits)
