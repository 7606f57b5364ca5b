"""Chapter 07's CUDA kernels (im2col, col2im) and the convolution and pooling ops on device "cuda", under Numba's
CUDA simulator. Run by tests/test_conv.py in a child process, because NUMBA_ENABLE_CUDASIM must be set before Numba
is first imported. Sizes stay small: the simulator runs every GPU thread as a Python thread."""
import os
assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"
import numpy as np
import torch
import torch.nn.functional as TF
import minitorch_nb as mt
import minitorch_nb.nn.functional as F
from minitorch_nb.nn import conv as C

rng = np.random.default_rng(0)
launched = []
for name in ("gpu_im2col_kernel", "gpu_col2im_kernel", "gpu_max_pool_kernel"):  # count the launches of this chapter's kernels
    kernel = getattr(C, name)
    class Counting:
        def __init__(self, kernel, name): self.kernel, self.name = kernel, name
        def __getitem__(self, config):
            launched.append(self.name)
            return self.kernel[config]
    setattr(C, name, Counting(kernel, name))

def check_kernels():
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    xc = mt.tensor(x, device="cuda").array.permute(0, 1, 3, 2)  # a transposed input: the kernel reads any strides
    xt = x.transpose(0, 1, 3, 2)
    for win in (C.Windows((3, 2), (2, 1), (1, 1), (1, 2), (3, 5)), C.Windows((3, 3), (1, 1), (1, 1), (1, 1), (6, 5)),
                C.Windows((2, 2), (2, 2), (0, 0), (1, 1), (3, 2))):
        cols = C.im2col(xc, win)
        assert type(cols.buffer).__name__ == "FakeCUDAArray" and cols.device == "cuda"
        np.testing.assert_array_equal(cols.to_numpy(), C.im2col_numpy(xt, win))
        back = C.col2im(cols, xt.shape, win)
        np.testing.assert_allclose(back.to_numpy(), C.col2im_numpy(C.im2col_numpy(xt, win), xt.shape, win), rtol=1e-6,
                                   atol=1e-6)
    assert launched.count("gpu_im2col_kernel") == 3 and launched.count("gpu_col2im_kernel") == 3, launched
    print("im2col/col2im kernels: 3 geometries, transposed input")

def check_ops():
    "Forward and gradients of conv2d, conv_transpose2d and the poolings on 'cuda', against torch."
    x = rng.standard_normal((2, 4, 6, 5))
    w = rng.standard_normal((6, 2, 3, 3))
    ours = [mt.tensor(a, device="cuda", requires_grad=True) for a in (x, w)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w)]
    yo = F.conv2d(*ours, stride=(2, 1), padding=1, groups=2)
    yt = TF.conv2d(*theirs, stride=(2, 1), padding=1, groups=2)
    g = rng.standard_normal(yt.shape)
    yo.backward(mt.tensor(g, device="cuda")); yt.backward(torch.tensor(g))
    for o, t in ((yo, yt), (ours[0].grad, theirs[0].grad), (ours[1].grad, theirs[1].grad)):
        np.testing.assert_allclose(o.detach().to("numpy").numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-10)
    wt = rng.standard_normal((4, 3, 3, 3))  # 4 channels in, 3 out
    up = F.conv_transpose2d(mt.tensor(x, device="cuda"), mt.tensor(wt, device="cuda"), stride=2, output_padding=1)
    ref = TF.conv_transpose2d(torch.tensor(x), torch.tensor(wt), stride=2, output_padding=1)
    np.testing.assert_allclose(up.to("numpy").numpy(), ref.numpy(), rtol=1e-10, atol=1e-10)
    xp = mt.tensor(x, device="cuda", requires_grad=True)
    v, i = F.max_pool2d(xp, 3, 2, 1, return_indices=True)
    tv, ti = TF.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(v.detach().to("numpy").numpy(), tv.numpy())
    np.testing.assert_array_equal(i.to("numpy").numpy(), ti.numpy())
    v.sum().backward()
    txp = torch.tensor(x, requires_grad=True); TF.max_pool2d(txp, 3, 2, 1).sum().backward()
    np.testing.assert_array_equal(xp.grad.to("numpy").numpy(), txp.grad.numpy())
    a = F.avg_pool2d(mt.tensor(x, device="cuda"), 2, ceil_mode=True)
    np.testing.assert_allclose(a.to("numpy").numpy(), TF.avg_pool2d(torch.tensor(x), 2, ceil_mode=True).numpy(), rtol=1e-12)
    print("conv2d, conv_transpose2d, max_pool2d, avg_pool2d on device 'cuda'")

def check_max_pool_ties_and_nan():
    """gpu_max_pool_kernel: ties go to the first maximum, the last NaN of a window wins, an all -inf window points at
    its first position inside the input (PyTorch's rules); the same positions on every run; float32 and float64."""
    a = np.array([[[[3.0, 3.0, 1.0, 5.0, 0.0], [3.0, 3.0, np.nan, 2.0, 0.0], [0.0, np.nan, np.nan, 2.0, 1.0],
                    [-np.inf, -np.inf, 2.0, 2.0, 1.0], [-np.inf, -np.inf, 7.0, 7.0, 1.0]]]])
    before = launched.count("gpu_max_pool_kernel")
    for dtype in (np.float32, np.float64):
        for args in ((2,), (2, 1), (3, 1, 1), (2, 2, 1, 2)):
            x = a.astype(dtype)
            tv, ti = TF.max_pool2d(torch.tensor(x), *args, return_indices=True)
            if args == (2, 1): assert ti[0, 0, 1, 1] == 12 and ti[0, 0, 3, 0] == 15, ti  # the last NaN; all -inf
            runs = [F.max_pool2d(mt.tensor(x, device="cuda"), *args, return_indices=True) for _ in range(3)]
            for v, i in runs:
                np.testing.assert_array_equal(i.to("numpy").numpy(), ti.numpy(), err_msg=f"{dtype} {args}")
                np.testing.assert_array_equal(v.to("numpy").numpy(), tv.numpy())  # NaN where NaN
                assert v.dtype == dtype
    assert launched.count("gpu_max_pool_kernel") - before == 2 * 4 * 3, launched
    print("max_pool2d kernel: ties, NaN and -inf windows as torch, 3 runs alike, float32 and float64")

check_kernels()
check_max_pool_ties_and_nan()
check_ops()
print("conv simulator checks passed")
