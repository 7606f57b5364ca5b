"Random numbers: PyTorch-style generators and JAX-style functional keys, like torch.random. A face."
from .data import (Generator, default_generator, get_rng_state, set_rng_state, Key, key, split, fold_in,  # 04
                   uniform, normal, permutation)
