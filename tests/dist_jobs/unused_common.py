"""What ddp_unused.py (ours, on MPI) and torch_unused.py (PyTorch on gloo) share: the schedule of which head each
rank uses at each step, the data, and the loss. Head c is never used; heads a and b are used on some ranks."""
import numpy as np

STEPS = 3
HEADS = [["a", "b"], ["a", "a"], ["b", "a"]]  # HEADS[step][rank]

def data(world=2, seed=0):
    "Each rank's inputs and targets for each step."
    g = np.random.default_rng(seed)
    return (g.standard_normal((STEPS, world, 5, 4)).astype(np.float32),
            g.standard_normal((STEPS, world, 5, 2)).astype(np.float32))

def make(nn):
    "The model, in the library whose `nn` is given (torch.nn or minitorch_nb.nn)."
    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.body, self.a, self.b, self.c = nn.Linear(4, 8), nn.Linear(8, 2), nn.Linear(8, 2), nn.Linear(8, 2)
        def forward(self, x, head): return getattr(self, head)(self.body(x).relu())
    return Heads()

def loss(out, y): return ((out - y) ** 2).mean()
