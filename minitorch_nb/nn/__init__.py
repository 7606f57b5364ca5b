"Layers, losses and containers, like torch.nn. A face: each chapter exports its own file, listed here."
from .modules import (Parameter, Module, RemovableHandle, IncompatibleKeys, Sequential, ModuleList,  # 02
                      ModuleDict, ParameterList, ParameterDict, Linear, Identity, ReLU, Tanh, Sigmoid, GELU,
                      Softmax, LogSoftmax, Softmin, LogSigmoid, Softplus, SiLU, Mish, Softsign, ELU, CELU, SELU,
                      LeakyReLU, PReLU, Hardtanh, ReLU6, Hardsigmoid, Hardswish, Dropout, Flatten, Embedding,
                      CosineSimilarity, MSELoss, L1Loss, SmoothL1Loss, HuberLoss, NLLLoss, CrossEntropyLoss,
                      BCELoss, BCEWithLogitsLoss, KLDivLoss, CheckpointError, save, load)
from . import functional, init, parameter  # nn.utils is filled by chapter 03: the package's __init__ imports it after optim
from .conv import (Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d,  # 07
                   Upsample)
from .norm import BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm, GroupNorm, Dropout1d, Dropout2d, Dropout3d  # 08
from . import parallel  # 09b
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell  # 10
from .attention import MultiheadAttention, TransformerEncoderLayer, TransformerEncoder  # 11
from .attention import TransformerDecoderLayer, TransformerDecoder, Transformer  # 11a
