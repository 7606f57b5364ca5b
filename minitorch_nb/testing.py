"PyTorch's torch.testing: assert_close, with PyTorch's default tolerances per dtype and its failure message (chapter 01)."
from .ops import assert_close
