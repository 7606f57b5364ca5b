"A deep-learning framework built from scratch, chapter by chapter, in the minitorch_nb book."
__version__ = "0.1.0"

import os as _os

# Thread pools: the one place the package sets environment variables (chapter 06 measures why).
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

from . import autograd
from .autograd import *
from . import tensor
from .tensor import *
from .tensor import _abs as abs, _max as max, _min as min  # torch.abs/max/min (builtins untouched elsewhere)
from .autograd import tensor  # mt.tensor is the function; the chapter-01 module stays importable as minitorch_nb.tensor
from . import nn  # also registers minitorch_nb.nn.init and minitorch_nb.nn.functional
from .nn import save, load
from . import optim
from . import learner  # made by optim.py (chapter 03 exports one file)
from . import data
from . import random  # published by data.py (chapter 04 exports one file)
from .random import Generator, default_generator, get_rng_state, set_rng_state
from . import ndarray
from .ndarray import NDArray, as_strided
from .backends import cpu as _backend_cpu  # device 'cpu' (chapter 06a)
from . import hardware  # memory hierarchy, BLAS and energy models (chapter 06b)
from .backends import cuda as _backend_cuda  # device 'cuda' (chapter 06c)
from . import cuda  # mt.cuda.is_available(), streams and events, like torch.cuda
