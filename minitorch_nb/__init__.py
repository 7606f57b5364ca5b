"A deep-learning framework built from scratch, chapter by chapter, in the minitorch_nb book."
__version__ = "0.1.0"

import os as _os
# OpenBLAS threads busy-wait for a while after each BLAS call, stealing the cores from the Numba kernels that
# come next (chapter 06 measures it). This takes effect only when minitorch_nb is imported before numpy.
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

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
from . import backend_cpu, backend_cuda  # devices 'cpu' and 'cuda' (chapter 06)
from .backend_cuda import cuda  # mt.cuda.is_available(), like torch.cuda
