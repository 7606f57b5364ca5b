"Layers and losses as plain functions, like torch.nn.functional. A face over the chapters' files."
from .modules import (linear, relu, tanh, sigmoid, gelu, softmax, log_softmax, softmin, logsigmoid, softplus,  # 02
                      silu, mish, softsign, elu, celu, selu, leaky_relu, prelu, hardtanh, relu6, hardsigmoid,
                      hardswish, erf, dropout, embedding, pad, one_hot, normalize, cosine_similarity, mse_loss,
                      l1_loss, smooth_l1_loss, huber_loss, nll_loss, cross_entropy, binary_cross_entropy,
                      binary_cross_entropy_with_logits, kl_div)
from .conv import (conv1d, conv2d, conv_transpose1d, conv_transpose2d, max_pool2d, max_pool2d_with_indices,  # 07
                   avg_pool2d, adaptive_avg_pool2d, unfold, fold, interpolate)
from .norm import batch_norm, layer_norm, group_norm, dropout1d, dropout2d, dropout3d  # 08
from .attention import scaled_dot_product_attention  # 11
