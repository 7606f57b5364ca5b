"""Chapter 08's normalization layers on device "cuda" under Numba's CUDA simulator: the general path (the Array
API formulas on chapter 06c's kernels), against torch. Run by tests/test_norm.py in a child process, because
NUMBA_ENABLE_CUDASIM must be set before Numba is first imported. Tiny sizes: the simulator runs every GPU thread
as a Python thread."""
import os
assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"
import numpy as np
import torch
import minitorch_nb as mt

rng = np.random.default_rng(0)
assert mt.cuda.is_available() and mt.cuda.is_simulator()
cases = [(mt.nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3), (2, 3, 2, 2)),
         (mt.nn.LayerNorm(4), torch.nn.LayerNorm(4), (3, 4)),
         (mt.nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4), (2, 4, 3))]
for ours, theirs, shape in cases:
    ours.to("cuda")
    for mode in ("train", "eval"):
        getattr(ours, mode)(); getattr(theirs, mode)()
        a, g = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32)
        x, xt = mt.tensor(a, device="cuda", requires_grad=True), torch.tensor(a, requires_grad=True)
        y, yt = ours(x), theirs(xt)
        assert type(y.array.buffer).__name__ == "FakeCUDAArray"
        y.backward(mt.tensor(g, device="cuda")); yt.backward(torch.tensor(g))
        pairs = [(y, yt), (x.grad, xt.grad)] + [(p.grad, q.grad) for p, q in zip(ours.parameters(), theirs.parameters())]
        pairs += [(b, c) for b, c in zip(ours.buffers(), theirs.buffers())]
        for p, q in pairs:
            np.testing.assert_allclose(p.detach().to("numpy").numpy(), q.detach().numpy(), rtol=1e-4, atol=1e-5)
        for p in ours.parameters(): p.grad = None
        for q in theirs.parameters(): q.grad = None
    print(type(ours).__name__, "matches torch on 'cuda' (simulator), train and eval")
print("normalization simulator checks passed")
