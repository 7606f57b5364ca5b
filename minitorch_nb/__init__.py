"A deep-learning framework built from scratch, chapter by chapter, in the minitorch_nb book."
__version__ = "0.1.0"

from . import autograd
from .autograd import *
