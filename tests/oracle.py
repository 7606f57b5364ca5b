"Helpers to compare minitorch_nb with PyTorch (the test-only oracle)."
import numpy as np
import torch
import minitorch_nb as mt

TOL = {np.dtype("float32"): dict(rtol=1e-5, atol=1e-6), np.dtype("float64"): dict(rtol=1e-10, atol=1e-12)}

def pair(arr, requires_grad=True, device="numpy"):
    "The same data as a minitorch_nb tensor on `device` and as a torch tensor."
    arr = np.asarray(arr)
    ours = mt.tensor(arr, device=device)
    theirs = torch.tensor(arr)
    if requires_grad and arr.dtype.kind == "f":
        ours.requires_grad_()
        theirs.requires_grad_()
    return ours, theirs

def to_numpy(t):
    "Numpy copy of a minitorch_nb or torch tensor."
    if isinstance(t, torch.Tensor): return t.detach().numpy()
    return np.asarray(t.detach().to("numpy").numpy())

def assert_close(ours, theirs, **tol):
    "Values, shape and dtype of `ours` match `theirs` within the dtype's tolerance."
    a, b = to_numpy(ours), to_numpy(theirs)
    assert a.shape == b.shape, f"shape {a.shape} != {b.shape}"
    assert a.dtype == b.dtype, f"dtype {a.dtype} != {b.dtype}"
    np.testing.assert_allclose(a, b, **(tol or TOL.get(a.dtype, dict(rtol=0, atol=0))))
