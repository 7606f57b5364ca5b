"A deep-learning framework built from scratch, chapter by chapter, in the minitorch_nb book."
__version__ = "0.1.0"

import os as _os

# Thread pools: the one place the package sets environment variables (chapter 06a measures why).
# OpenBLAS threads busy-wait after each BLAS call, and Numba's OpenMP threads spin after each kernel; on a
# small machine they steal each other's cores. A value you set yourself wins, and MINITORCH_NB_THREAD_ENV=0
# leaves the environment alone. Only what is set before numpy and Numba load takes effect.
THREAD_ENV = {
    "OPENBLAS_THREAD_TIMEOUT": "4",  # OpenBLAS threads sleep after 2**4 clock cycles of spinning
    "OMP_WAIT_POLICY": "PASSIVE",  # idle Numba (OpenMP) threads sleep instead of spinning...
    "GOMP_SPINCOUNT": "30000",  # ...after a short spin, so back-to-back kernels find them awake
}
if _os.environ.get("MINITORCH_NB_THREAD_ENV", "1") != "0":
    for _name, _value in THREAD_ENV.items(): _os.environ.setdefault(_name, _value)
    del _name, _value

# The public names, chapter by chapter. Autograd Functions (Exp, ReLU, Softmax...) stay in their chapter's
# module (mt.autograd.Exp, mt.ops.ReLU): at the top level, as in PyTorch, ReLU is only nn.ReLU.
from . import autograd  # 00
from .autograd import (Tensor, tensor, Function, device, no_grad, enable_grad, set_grad_enabled, is_grad_enabled,
                       inference_mode, is_inference_mode_enabled,
                       float32, float64, float16, int64, int32, int16, int8, uint8, bool_, bfloat16, result_type,
                       broadcast_shapes)
# PyTorch's other names for the dtypes (mt.long is a dtype; t.long() stays a Tensor method)
from .autograd import (float32 as float, float64 as double, float16 as half, int64 as long, int32 as int,
                       int16 as short, bool_ as bool)
from . import ops  # 01
from .ops import (zeros, ones, empty, full, zeros_like, ones_like, empty_like, full_like, rand_like, randn_like,
                  arange, linspace, eye, rand, randn, randint, randperm, manual_seed, where, cat, concat, stack,
                  clip, gradcheck, gradgradcheck, GradcheckError,
                  # function forms of Tensor methods: mt.tanh(x) is x.tanh()
                  matmul, mean, reshape, permute, transpose, tanh, sigmoid, sqrt, relu, maximum, minimum, clamp,
                  argmax, argmin, var, std, masked_fill, unsqueeze, squeeze, flatten, broadcast_to, clone, split,
                  chunk, softmax, log_softmax, logsumexp, add, sub, subtract, mul, multiply, div, divide, true_divide,
                  neg, negative, mm, t, exp, log, sin, cos, norm, eq, ne, lt, le, gt, ge, numel, log1p, expm1, tan,
                  sinh, cosh, log2, log10, square, rsqrt, reciprocal, sign, floor, ceil, isnan, isinf, isfinite, amax,
                  detach, expand_as, reshape_as)
from .ops import addcmul, addcdiv  # their in-place forms serve optimizers
abs, max, min = (ops.function_forms[_n] for _n in ("abs", "max", "min"))  # every module keeps Python's builtins
sum, pow, round, all, any = (ops.function_forms[_n] for _n in ("sum", "pow", "round", "all", "any"))
# Chapter 01's scans, sorts, views, einsum and selection, in PyTorch's spellings; mt.testing.assert_close
from .ops import (einsum, cumsum, cumprod, cummax, cummin, logcumsumexp, prod, tril, triu, flip, roll, diagonal, diag,
                  sort, argsort, msort, topk, isclose, allclose, nonzero, argwhere, masked_select, repeat_interleave,
                  unflatten, var_mean, std_mean, from_numpy, as_tensor)
from . import testing
# elementwise maths (chapter 01): inverse functions, rounding, remainders, lerp, nan_to_num, logical ops
from .ops import (asin, arcsin, acos, arccos, atan, arctan, asinh, arcsinh, acosh, arccosh, atanh, arctanh, atan2,
                  arctan2, exp2, trunc, fix, frac, copysign, logaddexp, logaddexp2, fmod, remainder, floor_divide, lerp,
                  nan_to_num, logical_and, logical_or, logical_xor, logical_not)
from . import nn  # 02
from .nn import save, load
from .nn.modules import erf, erfinv  # torch.erf, torch.erfinv (chapter 02)
from . import optim, learner  # 03
from .nn import utils as _nn_utils  # nn.utils.clip_grad_norm_ comes from chapter 03's file
from . import data, random  # 04
from . import utils  # torch.utils.data spellings over chapter 04's data
from .random import Generator, default_generator, get_rng_state, set_rng_state
from . import ndarray  # 05
from .ndarray import NDArray, as_strided
from .backends import cpu as _backend_cpu  # device 'cpu' (chapter 06a)
from . import hardware  # memory hierarchy, BLAS and energy models (chapter 06b)
from .backends import cuda as _backend_cuda  # device 'cuda' (chapter 06c)
from . import cuda  # mt.cuda.is_available(), streams and events, like torch.cuda
# PyTorch's default device and torch.accelerator, over chapter 00's device registry
from .autograd import set_default_device, get_default_device
from . import accelerator
# mt.relu is F.relu, which checks its input: mt.relu(2.0) raises TypeError, as torch.relu does
from .nn.functional import relu
# PyTorch's torch.conv2d & co. (chapter 07): the same functions as F.conv2d
from .nn.functional import conv1d, conv2d, conv_transpose1d, conv_transpose2d, max_pool2d
# torch.layer_norm, torch.group_norm, and torch.batch_norm in its own argument order (chapter 08)
from .nn.norm import layer_norm, group_norm, batch_norm_native as batch_norm
# activation checkpointing (mt.utils.checkpoint) and mixed precision (mt.amp, mt.autocast): chapter 09a
from . import memory, amp
from .memory import autocast, is_autocast_enabled, get_autocast_dtype
from . import distributed  # 09b: process groups on MPI, collectives, DistributedDataParallel
from . import gan  # 12: GAN players, losses and the DCGAN training loop
