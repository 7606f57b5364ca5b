"""Chapter 06's CUDA kernels under Numba's CUDA simulator. Run by tests/test_cuda_sim.py in a child process,
because NUMBA_ENABLE_CUDASIM must be set before Numba is first imported. Sizes stay small (the simulator runs
every GPU thread as a Python thread). Prints one line per check and exits non-zero on the first failure."""
import os
import sys
assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"
import numpy as np
import torch
import minitorch_nb as mt
from minitorch_nb import ndarray as nd

rng = np.random.default_rng(0)
CHECKS = []

def check(fn):
    CHECKS.append(fn)
    return fn

def close(got, want, rtol=1e-5, atol=1e-6):
    got = got.to_numpy() if isinstance(got, nd.NDArray) else got.detach().to("numpy").numpy()
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)

@check
def device_is_simulated():
    assert mt.cuda.is_available() and mt.cuda.is_simulator()
    x = nd.array([1.0, 2.0], device="cuda")
    assert type(x.buffer).__name__ == "FakeCUDAArray" and x.device == "cuda"

@check
def elementwise_on_views_and_broadcasts():
    a = rng.standard_normal((4, 6, 5)).astype(np.float32)
    b = rng.standard_normal((6, 1)).astype(np.float32)
    x, y = nd.array(a, device="cuda"), nd.array(b, device="cuda")
    v, av = x[::-1, 1:, ::2].permute_dims((2, 0, 1)), a[::-1, 1:, ::2].transpose(2, 0, 1)
    xp = x.__array_namespace__()
    close(x + y, a + b)
    close(v * 2.0 - 1.0, av * 2.0 - 1.0)
    close(xp.exp(v), np.exp(av), rtol=1e-6)
    close(xp.log(xp.abs(x) + 1.0), np.log(np.abs(a) + 1.0), rtol=1e-6)
    close(xp.maximum(x, 0.0), np.maximum(a, 0))
    close(x > y, a > b)
    close(xp.where(x > 0, x, y), np.where(a > 0, a, b))
    close(x.astype(np.float64), a.astype(np.float64))
    close(xp.tan(x), np.tan(a), rtol=1e-6)  # no GPU kernel: runs on the host and is copied back

@check
def reductions():
    a = rng.standard_normal((5, 7, 3)).astype(np.float32)
    a[1, 2, 0] = np.nan
    x = nd.array(a, device="cuda")
    xp = x.__array_namespace__()
    for axis in (None, 0, 1, (0, 2)):
        close(xp.sum(x, axis=axis), np.sum(a, axis=axis), rtol=1e-5, atol=1e-5)
        close(xp.max(x, axis=axis), np.max(a, axis=axis))
    for axis in (0, 1, 2):
        close(xp.argmax(x, axis=axis), np.argmax(a, axis=axis))
        close(xp.argmin(x, axis=axis), np.argmin(a, axis=axis))

@check
def gather_scatter_setitem():
    a = rng.standard_normal((6, 4)).astype(np.float32)
    x = nd.array(a, device="cuda")
    close(x[[5, 0, 0]], a[[5, 0, 0]])
    x[[1, 1, 3]] = nd.array(np.array([7.0], np.float32), device="cuda")
    a[[1, 1, 3]] = 7.0
    close(x, a)
    x[::2, 1:] = 0.5
    a[::2, 1:] = 0.5
    close(x, a)
    acc, acc_np = nd.array(np.zeros(4, np.float32), device="cuda"), np.zeros(4, np.float32)
    np.add.at(acc, np.array([0, 2, 2]), nd.array(np.array([1.0, 2.0, 3.0], np.float32), device="cuda"))
    np.add.at(acc_np, np.array([0, 2, 2]), np.array([1.0, 2.0, 3.0], np.float32))
    close(acc, acc_np)

@check
def matmul_tiled_and_naive():
    for sa, sb in [((33, 17), (17, 20)), ((16, 16), (16, 16)), ((1, 3), (3, 1)), ((2, 5, 4), (4, 3))]:
        a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
        want = (torch.tensor(a) @ torch.tensor(b)).numpy()
        close(nd.array(a, device="cuda") @ nd.array(b, device="cuda"), want, rtol=1e-5, atol=1e-5)  # tiled (2-D)
        close(nd.array(a, device="cuda").mT.compact().mT @ nd.array(b, device="cuda"), want, rtol=1e-5, atol=1e-5)
    a64 = rng.standard_normal((9, 5))
    close(nd.array(a64, device="cuda") @ nd.array(a64.T.copy(), device="cuda"), a64 @ a64.T, rtol=1e-12, atol=1e-12)

@check
def tensor_engine_on_cuda_matches_torch():
    a0, b0 = rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    a, b = mt.tensor(a0, device="cuda", requires_grad=True), mt.tensor(b0, device="cuda", requires_grad=True)
    ta, tb = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    loss = mt.log_softmax((a @ b).relu() + 0.1, dim=1).sum() + (a * a).mean()
    tloss = torch.log_softmax((ta @ tb).relu() + 0.1, dim=1).sum() + (ta * ta).mean()
    loss.backward(); tloss.backward()
    assert a.grad.device == "cuda"
    close(loss, tloss.detach().numpy(), rtol=1e-5, atol=1e-5)
    close(a.grad, ta.grad.numpy(), rtol=1e-5, atol=1e-5)
    close(b.grad, tb.grad.numpy(), rtol=1e-5, atol=1e-5)

@check
def transfers_between_devices_carry_gradients():
    w = mt.tensor([1.0, -2.0, 3.0], requires_grad=True)
    on_gpu = w.to("cuda")
    back = (on_gpu * on_gpu).to("cpu").sum()
    back.backward()
    assert w.grad.device == "numpy" and w.grad.tolist() == [2.0, -4.0, 6.0]
    try:
        on_gpu.data + nd.array([1.0, 2.0, 3.0], device="cpu")
    except RuntimeError as e:
        assert "different devices" in str(e)
    else:
        raise AssertionError("mixing devices must fail")

if __name__ == "__main__":
    for fn in CHECKS:
        fn()
        print("passed", fn.__name__)
    print(f"{len(CHECKS)} simulator checks passed")
