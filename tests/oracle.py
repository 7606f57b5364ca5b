"Helpers to compare minitorch_nb with PyTorch (the test-only oracle)."
import ml_dtypes
import numpy as np
import torch
import minitorch_nb as mt

BF16 = np.dtype(ml_dtypes.bfloat16)

TOL = {np.dtype("float32"): dict(rtol=1e-5, atol=1e-6), np.dtype("float64"): dict(rtol=1e-10, atol=1e-12)}

def pair(arr, requires_grad=True, device="numpy"):
    "The same data as a minitorch_nb tensor on `device` and as a torch tensor."
    arr = np.asarray(arr)
    ours = mt.tensor(arr, device=device)
    # torch reads no ml_dtypes array: float32 holds every bfloat16 exactly
    theirs = torch.tensor(arr.astype(np.float32)).bfloat16() if arr.dtype == BF16 else torch.tensor(arr)
    if requires_grad and (arr.dtype.kind == "f" or arr.dtype == BF16):
        ours.requires_grad_()
        theirs.requires_grad_()
    return ours, theirs

def to_numpy(t):
    "Numpy copy of a minitorch_nb or torch tensor (a numpy array: itself)."
    if isinstance(t, np.ndarray): return t
    if isinstance(t, torch.Tensor):
        # numpy has no torch.bfloat16: through float32, exactly
        if t.dtype == torch.bfloat16: return t.detach().float().numpy().astype(BF16)
        return t.detach().numpy()
    return np.asarray(t.detach().to("numpy").numpy())

def assert_close(ours, theirs, **tol):
    "Values, shape and dtype of `ours` match `theirs` within the dtype's tolerance."
    a, b = to_numpy(ours), to_numpy(theirs)
    assert a.shape == b.shape, f"shape {a.shape} != {b.shape}"
    assert a.dtype == b.dtype, f"dtype {a.dtype} != {b.dtype}"
    np.testing.assert_allclose(a, b, **(tol or TOL.get(a.dtype, dict(rtol=0, atol=0))))

def bf16_ulp(x):
    "The spacing of bfloat16 numbers at |x| (8 significant bits), as float64; subnormal spacing below 2**-126."
    x = np.abs(np.asarray(x, np.float64))
    e = np.floor(np.log2(np.where(x > 0, x, 1.0)))
    return 2.0 ** (np.maximum(e, -126) - 7)

def assert_bf16_close(ours, theirs, ulps=0, err_msg=""):
    """Both bfloat16, the same shape, the same NaNs and infinities; the finite values equal (ulps=0), or at most
    `ulps` bfloat16 spacings apart (where float32 accumulation order differs, e.g. matmul)."""
    a, b = to_numpy(ours), to_numpy(theirs)
    assert a.dtype == b.dtype == BF16, f"dtypes {a.dtype}, {b.dtype}"
    assert a.shape == b.shape, f"shape {a.shape} != {b.shape}"
    a, b = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=err_msg)
    np.testing.assert_array_equal(a[np.isinf(b)], b[np.isinf(b)], err_msg=err_msg)
    fin = np.isfinite(b)
    diff, step = np.abs(a[fin] - b[fin]), bf16_ulp(np.maximum(np.abs(a[fin]), np.abs(b[fin])))
    bad = diff > ulps * step
    assert not bad.any(), (f"{err_msg} {int(bad.sum())} of {diff.size} values differ by more than {ulps} "
                           f"bfloat16 ulp, e.g. ours {a[fin][bad][0]} vs torch {b[fin][bad][0]}")
