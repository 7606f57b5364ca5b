"Layers and losses as plain functions, like torch.nn.functional. A face over the chapters' files."
from .modules import (linear, relu, tanh, sigmoid, gelu, softmax, log_softmax, softmin, logsigmoid, softplus,  # 02
                      silu, mish, softsign, elu, celu, selu, leaky_relu, prelu, hardtanh, relu6, hardsigmoid,
                      hardswish, erf, dropout, embedding, mse_loss, nll_loss, cross_entropy,
                      binary_cross_entropy_with_logits)
