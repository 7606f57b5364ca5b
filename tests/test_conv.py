"""Chapter 07 (nn.conv) against PyTorch: every op and layer, forward values, input and parameter gradients, on
devices "numpy" and "cpu" (the `device` fixture); float64 gradchecks; exception types; state_dicts loaded from
torch; the general NDArray path on the teaching devices; the CUDA kernels in Numba's simulator (a child process).

float64 comparisons use rtol = atol = 1e-10. float32 ones use rtol 1e-5 and an absolute tolerance of 1e-5 times the
largest magnitude of torch's result: a convolution (and its weight gradient) sums hundreds of float32 products in
another order than PyTorch's, and an entry that cancels to near zero keeps the rounding error of the large terms."""
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import minitorch_nb as mt
import minitorch_nb.nn.functional as F
from minitorch_nb import nn
from minitorch_nb.nn import conv as C
from oracle import to_numpy

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel:UserWarning")  # torch's

TOL = {np.float64: dict(rtol=1e-10, atol=1e-10), np.float32: dict(rtol=1e-5, atol=1e-5)}

def close(ours, theirs, dtype, what=""):
    a, b = to_numpy(ours), to_numpy(theirs)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != torch's {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != torch's {b.dtype}"
    tol = dict(TOL[np.dtype(dtype).type])
    if np.dtype(dtype) == np.float32 and b.size: tol["atol"] *= max(1.0, float(np.nanmax(np.abs(b))))
    np.testing.assert_allclose(a, b, err_msg=what, **tol)

def inputs(arrays, device, layouts=None):
    "Leaf tensors in both libraries (gradients wanted for floats) and the views passed to the op."
    ours = [mt.tensor(a, device=device, requires_grad=a.dtype.kind == "f") for a in arrays]
    theirs = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    layouts = layouts or [None] * len(arrays)
    view = lambda t, lay: t if lay is None else t.transpose(-1, -2) if lay == "T" else t[..., ::2]
    return ours, theirs, [view(t, l) for t, l in zip(ours, layouts)], [view(t, l) for t, l in zip(theirs, layouts)]

def check_op(ours_fn, theirs_fn, arrays, device, dtype, rng, layouts=None):
    "Same values; then the same gradient for every float input after backpropagating one random cotangent."
    o_leaves, t_leaves, o_in, t_in = inputs(arrays, device, layouts)
    out, ref = ours_fn(*o_in), theirs_fn(*t_in)
    close(out, ref, dtype, "forward")
    cot = rng.standard_normal(ref.shape).astype(dtype)
    ref.backward(torch.tensor(cot))
    out.backward(mt.tensor(cot, device=device))
    for i, (o, t) in enumerate(zip(o_leaves, t_leaves)):
        if t.grad is not None: close(o.grad, t.grad, dtype, f"gradient of input {i}")

DTYPES = [np.float32, np.float64]

# ------------------------------------------------------------------------------------------ convolutions

# (input shape, weight shape, kwargs): stride, padding (int, tuple, 'same', 'valid'), dilation, groups
CONV2D_CASES = [
    ((2, 3, 7, 8), (4, 3, 3, 3), dict(padding=1)),
    ((2, 4, 9, 7), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)),
    ((1, 3, 6, 6), (3, 1, 2, 2), dict(padding="same", groups=3)),            # even kernel: asymmetric padding
    ((2, 2, 8, 5), (4, 2, 4, 3), dict(padding="same", dilation=2)),
    ((2, 3, 5, 6), (5, 3, 3, 3), dict(padding="valid", stride=2)),
    ((3, 6, 6), (6, 1, 3, 3), dict(padding=2, stride=3, groups=3)),          # unbatched, depthwise
    ((2, 1, 28, 28), (8, 1, 3, 3), dict(padding=1)),                        # the CNN's first layer
    ((1, 2, 5, 5), (3, 2, 5, 5), dict()),                                    # kernel as large as the input
    ((0, 2, 5, 5), (3, 2, 3, 3), dict(padding=1)),                          # an empty batch
]

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", range(len(CONV2D_CASES)))
def test_conv2d_matches_torch(device, rng, dtype, bias, case):
    xs, ws, kw = CONV2D_CASES[case]
    arrays = [rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)]
    if bias: arrays.append(rng.standard_normal(ws[0]).astype(dtype))
    check_op(lambda *a: F.conv2d(*a, **kw), lambda *a: TF.conv2d(*a, **kw), arrays, device, dtype, rng)

@pytest.mark.parametrize("dtype", DTYPES)
def test_conv2d_of_non_contiguous_input_and_weight(device, rng, dtype):
    "A transposed input and a strided weight: the kernels read any strides."
    x, w = rng.standard_normal((2, 3, 9, 7)).astype(dtype), rng.standard_normal((4, 3, 3, 6)).astype(dtype)
    check_op(lambda a, b: F.conv2d(a, b, stride=2, padding=1), lambda a, b: TF.conv2d(a, b, stride=2, padding=1),
             [x, w], device, dtype, rng, layouts=["T", "step"])

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs, ws, kw", [((2, 3, 11), (4, 3, 3), dict(padding=1)),
                                         ((2, 4, 12), (6, 2, 4), dict(stride=2, dilation=2, groups=2)),
                                         ((3, 10), (5, 3, 2), dict(padding="same")),
                                         ((2, 3, 9), (2, 3, 3), dict(padding="valid", stride=(3,)))])
def test_conv1d_matches_torch(device, rng, dtype, xs, ws, kw):
    arrays = [rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype),
              rng.standard_normal(ws[0]).astype(dtype)]
    check_op(lambda *a: F.conv1d(*a, **kw), lambda *a: TF.conv1d(*a, **kw), arrays, device, dtype, rng)

CONV_T_CASES = [
    ((2, 3, 4, 5), (3, 2, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ((2, 4, 3, 3), (4, 3, 2, 3), dict(stride=(2, 1), groups=2, dilation=(1, 2))),
    ((3, 5, 4), (3, 2, 3, 3), dict(padding=1)),                               # unbatched
    ((1, 2, 3, 3), (2, 1, 3, 3), dict(stride=1, dilation=2, output_padding=1)),  # output_padding < dilation
]

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(CONV_T_CASES)))
def test_conv_transpose2d_matches_torch(device, rng, dtype, case):
    xs, ws, kw = CONV_T_CASES[case]
    groups = kw.get("groups", 1)
    arrays = [rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype),
              rng.standard_normal(ws[1] * groups).astype(dtype)]
    check_op(lambda *a: F.conv_transpose2d(*a, **kw), lambda *a: TF.conv_transpose2d(*a, **kw), arrays, device,
             dtype, rng)

@pytest.mark.parametrize("dtype", DTYPES)
def test_conv_transpose1d_matches_torch(device, rng, dtype):
    arrays = [rng.standard_normal((2, 4, 7)).astype(dtype), rng.standard_normal((4, 3, 3)).astype(dtype)]
    kw = dict(stride=3, padding=1, output_padding=2, groups=2)
    check_op(lambda *a: F.conv_transpose1d(*a, **kw), lambda *a: TF.conv_transpose1d(*a, **kw), arrays, device,
             dtype, rng)

def test_conv_gradients_by_finite_differences():
    "float64 gradcheck (first derivatives) and gradgradcheck (second) of conv2d, conv_transpose2d and conv1d."
    rng = np.random.default_rng(1)
    t = lambda *s: mt.tensor(rng.standard_normal(s), requires_grad=True)
    x, w, b = t(2, 4, 6, 5), t(6, 2, 3, 2), t(6)
    conv = lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
    assert mt.gradcheck(conv, x, w, b)
    assert mt.gradgradcheck(lambda x, w: F.conv2d(x, w, padding=1, groups=2), x, w)
    xt, wt = t(2, 4, 3, 3), t(4, 2, 3, 3)
    assert mt.gradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2), xt, wt)
    assert mt.gradgradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=2, groups=2), xt, wt)
    assert mt.gradcheck(lambda x, w: F.conv1d(x, w, padding="same"), t(2, 3, 8), t(2, 3, 4))

def test_conv_second_derivatives_match_torch():
    "A gradient penalty (the norm of the input gradient) differentiated again, against torch."
    rng = np.random.default_rng(2)
    xa, wa = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    x, w = mt.tensor(xa, requires_grad=True), mt.tensor(wa, requires_grad=True)
    tx, tw = torch.tensor(xa, requires_grad=True), torch.tensor(wa, requires_grad=True)
    (gx,) = mt.autograd.grad(F.conv2d(x, w, stride=2, padding=1).square().sum(), [x], create_graph=True)
    (tgx,) = torch.autograd.grad(TF.conv2d(tx, tw, stride=2, padding=1).square().sum(), [tx], create_graph=True)
    w.grad = None  # chapter 00's autograd.grad also accumulates into leaves it was not asked about (torch doesn't)
    gx.square().sum().backward()
    tgx.square().sum().backward()
    close(w.grad, tw.grad, np.float64, "weight gradient of the penalty")
    close(x.grad, tx.grad, np.float64, "input gradient of the penalty")

def test_conv_matches_the_seven_loops():
    "The chapter's oracle agrees with torch too (groups, stride, padding, dilation, bias)."
    rng = np.random.default_rng(3)
    x, w, b = rng.standard_normal((2, 4, 7, 6)), rng.standard_normal((6, 2, 3, 3)), rng.standard_normal(6)
    ref = TF.conv2d(*map(torch.tensor, (x, w, b)), stride=2, padding=1, dilation=2, groups=2).numpy()
    np.testing.assert_allclose(C.conv2d_loops(x, w, b, 2, 1, 2, groups=2), ref, rtol=1e-12, atol=1e-12)

# ------------------------------------------------------------------------------------------ pooling

MAXPOOL_CASES = [(2,), (3, 2, 1), ((3, 2), (2, 1), (1, 1), (2, 1), True), (2, 2, 0, 1, True), (3, 1, 1, 2)]

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args", MAXPOOL_CASES, ids=str)
@pytest.mark.parametrize("shape", [(2, 3, 7, 9), (3, 8, 6)])
def test_max_pool2d_matches_torch(device, rng, dtype, args, shape):
    x = rng.standard_normal(shape).astype(dtype)
    check_op(lambda a: F.max_pool2d(a, *args), lambda a: TF.max_pool2d(a, *args), [x], device, dtype, rng)
    (mx,), (tx,) = inputs([x], device)[2:]
    mv, mi = F.max_pool2d(mx, *args, return_indices=True)
    tv, ti = TF.max_pool2d(tx, *args, return_indices=True)
    close(mv, tv, dtype, "values")
    assert to_numpy(mi).dtype == np.int64
    np.testing.assert_array_equal(to_numpy(mi), to_numpy(ti))
    np.testing.assert_array_equal(to_numpy(F.max_pool2d_with_indices(mx, *args)[1]), to_numpy(ti))

@pytest.mark.parametrize("overlap", [False, True])
def test_max_pool2d_ties_and_nan_follow_torch(device, overlap):
    "Equal values: the first maximum of the window gets the gradient; a NaN wins (the last NaN)."
    a = np.array([[[[3.0, 3.0, 1.0, 5.0], [3.0, 3.0, np.nan, 2.0], [0.0, np.nan, np.nan, 2.0],
                    [1.0, 1.0, 2.0, 2.0]]]])
    args = (2, 1) if overlap else (2,)
    ours, theirs = mt.tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)
    mv, mi = F.max_pool2d(ours, *args, return_indices=True)
    tv, ti = TF.max_pool2d(theirs, *args, return_indices=True)
    np.testing.assert_array_equal(to_numpy(mi), to_numpy(ti))
    np.testing.assert_array_equal(np.isnan(to_numpy(mv)), np.isnan(to_numpy(tv)))
    g = np.arange(1.0, tv.numel() + 1).reshape(tv.shape)
    mv.backward(mt.tensor(g, device=device)); tv.backward(torch.tensor(g))
    np.testing.assert_array_equal(to_numpy(ours.grad), to_numpy(theirs.grad))

@pytest.mark.parametrize("args", MAXPOOL_CASES, ids=str)
def test_max_pool2d_many_ties_follow_torch(device, args):
    """Values from {0, 1, 2}, then some -inf and NaN: most windows hold ties, so the position of the first maximum
    (and of the last NaN) decides; values, positions and the gradient equal torch's."""
    rng = np.random.default_rng(5)
    for trial in range(4):
        a = rng.integers(0, 3, (2, 3, 8, 9)).astype(np.float64)
        if trial >= 2: a[rng.random(a.shape) < 0.2] = -np.inf
        if trial == 3: a[rng.random(a.shape) < 0.05] = np.nan
        ours, theirs = mt.tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)
        mv, mi = F.max_pool2d(ours, *args, return_indices=True)
        tv, ti = TF.max_pool2d(theirs, *args, return_indices=True)
        np.testing.assert_array_equal(to_numpy(mi), to_numpy(ti), err_msg=f"positions, trial {trial}")
        np.testing.assert_array_equal(to_numpy(mv), to_numpy(tv), err_msg=f"values, trial {trial}")
        g = rng.standard_normal(tv.shape)
        mv.backward(mt.tensor(g, device=device)); tv.backward(torch.tensor(g))
        np.testing.assert_allclose(to_numpy(ours.grad), to_numpy(theirs.grad), rtol=1e-12, atol=1e-12)

AVGPOOL_CASES = [(2,), (3, 2, 1), (3, 2, 1, True), (3, 2, 1, True, False), (3, 2, 1, False, True, 4),
                 ((3, 2), (2, 1), (1, 0), True, False), (2, 1, 1, False, False)]

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args", AVGPOOL_CASES, ids=str)
def test_avg_pool2d_matches_torch(device, rng, dtype, args):
    x = rng.standard_normal((2, 3, 7, 6)).astype(dtype)
    check_op(lambda a: F.avg_pool2d(a, *args), lambda a: TF.avg_pool2d(a, *args), [x], device, dtype, rng)

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [1, (3, 2), (5, None), (4, 7), (2, 3)], ids=str)
def test_adaptive_avg_pool2d_matches_torch(device, rng, dtype, size):
    x = rng.standard_normal((2, 3, 6, 7)).astype(dtype)
    check_op(lambda a: F.adaptive_avg_pool2d(a, size), lambda a: TF.adaptive_avg_pool2d(a, size), [x], device,
             dtype, rng)
    x3 = rng.standard_normal((3, 5, 4)).astype(dtype)  # unbatched
    check_op(lambda a: F.adaptive_avg_pool2d(a, size), lambda a: TF.adaptive_avg_pool2d(a, size), [x3], device,
             dtype, rng)

def test_pooling_gradients_by_finite_differences():
    rng = np.random.default_rng(4)
    x = mt.tensor(rng.standard_normal((2, 3, 7, 6)), requires_grad=True)  # distinct values: no ties
    assert mt.gradcheck(lambda t: F.max_pool2d(t, 3, 2, 1, 1, True), x)
    assert mt.gradgradcheck(lambda t: F.max_pool2d(t, (2, 3), 1), x)
    assert mt.gradcheck(lambda t: F.avg_pool2d(t, 3, 2, 1, True, False), x)
    assert mt.gradcheck(lambda t: F.adaptive_avg_pool2d(t, (4, 5)), x)

# ------------------------------------------------------------------------------------------ unfold, fold, interpolate

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
                                dict(kernel_size=3, dilation=2, padding=2, stride=2)], ids=str)
def test_unfold_and_fold_match_torch(device, rng, dtype, kw):
    x = rng.standard_normal((2, 3, 6, 7)).astype(dtype)
    check_op(lambda a: F.unfold(a, **kw), lambda a: TF.unfold(a, **kw), [x], device, dtype, rng)
    check_op(lambda a: F.unfold(a, **kw), lambda a: TF.unfold(a, **kw), [x[0]], device, dtype, rng)  # unbatched
    blocks = TF.unfold(torch.tensor(x), **kw).numpy()
    check_op(lambda a: F.fold(a, (6, 7), **kw), lambda a: TF.fold(a, (6, 7), **kw), [blocks], device, dtype, rng)
    check_op(lambda a: F.fold(a, (6, 7), **kw), lambda a: TF.fold(a, (6, 7), **kw), [blocks[1]], device, dtype, rng)

# (kernel, stride, padding, dilation): overlapping and gapped windows, strides and dilations of 2 and 3
COL2IM_GEOMETRIES = [((3, 3), (1, 1), (1, 1), (1, 1)), ((3, 3), (2, 2), (1, 1), (2, 2)), ((2, 3), (2, 1), (0, 2), (2, 1)),
                     ((3, 2), (3, 2), (2, 1), (1, 3)), ((1, 1), (2, 2), (0, 0), (1, 1)), ((4, 4), (2, 3), (3, 1), (2, 2))]

@pytest.mark.parametrize("geometry", COL2IM_GEOMETRIES, ids=str)
def test_col2im_of_numpy_and_cpu_equals_torchs_fold(rng, geometry):
    "col2im (numpy's strided adds; the Numba kernel) against torch's fold, for the matrix layout of the GEMMs."
    (kh, kw), stride, padding, dilation = geometry
    N, K, H, W = 2, 3, 9, 8
    sizes = zip((H, W), (kh, kw), stride, padding, dilation)
    ho, wo = (C.conv_out_size(n, k, s, 2 * p, d) for n, k, s, p, d in sizes)  # conv_out_size: both sides' padding
    win = C.Windows((kh, kw), stride, padding, dilation, (ho, wo))
    blocks = rng.standard_normal((N, K * kh * kw, ho * wo))
    want = TF.fold(torch.tensor(blocks), (H, W), (kh, kw), dilation, padding, stride).numpy()
    cols = np.ascontiguousarray(blocks.transpose(1, 0, 2).reshape(K * kh * kw, N * ho * wo))  # (C·kh·kw, N·L)
    np.testing.assert_allclose(C.col2im_numpy(cols, (N, K, H, W), win), want, rtol=1e-12, atol=1e-12)
    got = C.col2im(mt.tensor(cols, device="cpu").array, (N, K, H, W), win).to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    x = rng.standard_normal((N, K, H, W))  # and im2col against unfold, for the same geometry
    unfolded = TF.unfold(torch.tensor(x), (kh, kw), dilation, padding, stride).numpy()
    np.testing.assert_array_equal(C.im2col_numpy(x, win), unfolded.transpose(1, 0, 2).reshape(K * kh * kw, -1))

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, kw", [
    ((2, 3, 5, 7), dict(scale_factor=2)), ((2, 3, 5, 7), dict(scale_factor=1.7)), ((2, 3, 5, 7), dict(size=(4, 13))),
    ((2, 3, 5, 7), dict(scale_factor=(0.5, 3.0))), ((2, 3, 9), dict(size=4)), ((1, 2, 3, 4, 5), dict(scale_factor=1.5)),
    ((2, 3, 5, 7), dict(size=(8, 3), mode="nearest-exact")), ((2, 3, 5, 7), dict(scale_factor=1.3, mode="nearest-exact")),
    ((2, 3, 5, 7), dict(scale_factor=1.7, recompute_scale_factor=True))], ids=str)
def test_interpolate_nearest_matches_torch(device, rng, dtype, shape, kw):
    x = rng.standard_normal(shape).astype(dtype)
    check_op(lambda a: F.interpolate(a, **kw), lambda a: TF.interpolate(a, **kw), [x], device, dtype, rng)

def test_nearest_source_matches_torch_for_many_sizes():
    "Which pixel each output copies: float32 arithmetic, as in PyTorch, for all sizes up to 40."
    for n_in in range(1, 41):
        for n_out in range(1, 41):
            x = torch.arange(float(n_in)).reshape(1, 1, -1)
            for mode in ("nearest", "nearest-exact"):
                want = TF.interpolate(x, size=n_out, mode=mode).numpy().ravel().astype(np.int64)
                np.testing.assert_array_equal(C.nearest_source(n_in, n_out, exact=mode != "nearest"), want)

# ------------------------------------------------------------------------------------------ exceptions

X4, W4 = np.zeros((2, 3, 5, 5), np.float32), np.zeros((4, 3, 3, 3), np.float32)
BAD = {
    "conv2d 2-D input": lambda t, f: f.conv2d(t.zeros(3, 5), t.tensor(W4)),
    "conv2d 5-D input": lambda t, f: f.conv2d(t.zeros(1, 2, 3, 5, 5), t.tensor(W4)),
    "conv2d channels": lambda t, f: f.conv2d(t.zeros(2, 2, 5, 5), t.tensor(W4)),
    "conv2d kernel too big": lambda t, f: f.conv2d(t.tensor(X4), t.zeros(4, 3, 7, 7)),
    "conv2d stride 0": lambda t, f: f.conv2d(t.tensor(X4), t.tensor(W4), stride=0),
    "conv2d negative padding": lambda t, f: f.conv2d(t.tensor(X4), t.tensor(W4), padding=-1),
    "conv2d dilation 0": lambda t, f: f.conv2d(t.tensor(X4), t.tensor(W4), dilation=0),
    "conv2d groups 0": lambda t, f: f.conv2d(t.tensor(X4), t.tensor(W4), groups=0),
    "conv2d groups vs in": lambda t, f: f.conv2d(t.zeros(2, 4, 5, 5), t.zeros(4, 3, 3, 3), groups=2),
    "conv2d groups vs out": lambda t, f: f.conv2d(t.zeros(2, 4, 5, 5), t.zeros(3, 2, 3, 3), groups=2),
    "conv2d same strided": lambda t, f: f.conv2d(t.tensor(X4), t.tensor(W4), stride=2, padding="same"),
    "conv2d bad padding string": lambda t, f: f.conv2d(t.tensor(X4), t.tensor(W4), padding="full"),
    "conv2d bias size": lambda t, f: f.conv2d(t.tensor(X4), t.tensor(W4), t.zeros(3)),
    "conv2d stride of 3": lambda t, f: f.conv2d(t.tensor(X4), t.tensor(W4), stride=(1, 1, 1)),
    "conv2d dtypes": lambda t, f: f.conv2d(t.tensor(X4).double(), t.tensor(W4)),
    "conv2d bias dtype": lambda t, f: f.conv2d(t.tensor(X4), t.tensor(W4), t.zeros(4, dtype=t.float64)),
    "conv2d not a tensor": lambda t, f: f.conv2d([1.0], t.tensor(W4)),
    "conv2d bool": lambda t, f: f.conv2d(t.ones(1, 3, 5, 5, dtype=t.bool), t.ones(4, 3, 3, 3, dtype=t.bool)),
    "conv2d no out channels": lambda t, f: f.conv2d(t.tensor(X4), t.zeros(0, 3, 3, 3)),
    "conv1d 4-D input": lambda t, f: f.conv1d(t.tensor(X4), t.zeros(4, 3, 3)),
    "conv1d stride pair": lambda t, f: f.conv1d(t.zeros(2, 3, 7), t.zeros(4, 3, 3), stride=(1, 1)),
    "conv_transpose2d output_padding": lambda t, f: f.conv_transpose2d(t.tensor(X4), t.zeros(3, 4, 3, 3), stride=2,
                                                                        output_padding=2),
    "conv_transpose2d channels": lambda t, f: f.conv_transpose2d(t.tensor(X4), t.zeros(4, 4, 3, 3)),
    "conv_transpose2d too small": lambda t, f: f.conv_transpose2d(t.zeros(1, 3, 1, 1), t.zeros(3, 4, 1, 1), padding=1),
    "conv_transpose2d same": lambda t, f: f.conv_transpose2d(t.tensor(X4), t.zeros(3, 4, 3, 3), padding="same"),
    "max_pool2d padding too big": lambda t, f: f.max_pool2d(t.tensor(X4), 2, padding=2),
    "max_pool2d kernel too big": lambda t, f: f.max_pool2d(t.tensor(X4), 7),
    "max_pool2d 2-D input": lambda t, f: f.max_pool2d(t.zeros(5, 5), 2),
    "max_pool2d stride 0": lambda t, f: f.max_pool2d(t.tensor(X4), 2, stride=0),
    "max_pool2d kernel 0": lambda t, f: f.max_pool2d(t.tensor(X4), 0),
    "max_pool2d negative padding": lambda t, f: f.max_pool2d(t.tensor(X4), 2, padding=-1),
    "max_pool2d dilation 0": lambda t, f: f.max_pool2d(t.tensor(X4), 2, dilation=0),
    "max_pool2d kernel of 3": lambda t, f: f.max_pool2d(t.tensor(X4), (2, 2, 2)),
    "max_pool2d no channels": lambda t, f: f.max_pool2d(t.zeros(2, 0, 4, 4), 2),
    "avg_pool2d padding too big": lambda t, f: f.avg_pool2d(t.tensor(X4), 2, padding=2),
    "avg_pool2d kernel too big": lambda t, f: f.avg_pool2d(t.tensor(X4), 7),
    "avg_pool2d divisor 0": lambda t, f: f.avg_pool2d(t.tensor(X4), 2, divisor_override=0),
    "adaptive_avg_pool2d 2-D": lambda t, f: f.adaptive_avg_pool2d(t.zeros(5, 5), 2),
    "adaptive_avg_pool2d negative": lambda t, f: f.adaptive_avg_pool2d(t.tensor(X4), -1),
    "adaptive_avg_pool2d integers": lambda t, f: f.adaptive_avg_pool2d(t.ones(1, 1, 4, 4, dtype=t.int64), 2),
    "unfold 2-D": lambda t, f: f.unfold(t.zeros(5, 5), 2),
    "unfold too big": lambda t, f: f.unfold(t.tensor(X4), 7),
    "unfold kernel 0": lambda t, f: f.unfold(t.tensor(X4), 0),
    "unfold stride 0": lambda t, f: f.unfold(t.tensor(X4), 2, stride=0),
    "fold not divisible": lambda t, f: f.fold(t.zeros(1, 7, 9), (4, 4), 2),
    "fold wrong L": lambda t, f: f.fold(t.zeros(1, 8, 8), (4, 4), 2),
    "fold 4-D": lambda t, f: f.fold(t.zeros(1, 8, 9, 1), (4, 4), 2),
    "interpolate both": lambda t, f: f.interpolate(t.tensor(X4), size=4, scale_factor=2),
    "interpolate neither": lambda t, f: f.interpolate(t.tensor(X4)),
    "interpolate 2-D": lambda t, f: f.interpolate(t.zeros(3, 4), size=2),
    "interpolate size of 3": lambda t, f: f.interpolate(t.tensor(X4), size=(2, 3, 4)),
    "interpolate align_corners": lambda t, f: f.interpolate(t.tensor(X4), scale_factor=2, align_corners=True),
    "interpolate integers": lambda t, f: f.interpolate(t.ones(1, 1, 4, 4, dtype=t.int64), scale_factor=2),
}
BAD_MODULES = {
    "Conv2d groups vs in": lambda n: n.Conv2d(4, 4, 3, groups=3),
    "Conv2d groups vs out": lambda n: n.Conv2d(4, 3, 3, groups=2),
    "Conv2d groups 0": lambda n: n.Conv2d(4, 3, 3, groups=0),
    "Conv2d padding_mode": lambda n: n.Conv2d(4, 3, 3, padding_mode="zero"),
    "Conv2d padding string": lambda n: n.Conv2d(4, 3, 3, padding="full"),
    "Conv2d same strided": lambda n: n.Conv2d(4, 3, 3, padding="same", stride=2),
    "ConvTranspose2d padding_mode": lambda n: n.ConvTranspose2d(4, 3, 3, padding_mode="reflect"),
    "Conv2d forward channels": lambda n: n.Conv2d(4, 3, 3)(_zeros(n, (1, 3, 5, 5))),
    "ConvTranspose2d output_size": lambda n: n.ConvTranspose2d(3, 2, 3, stride=2, padding=1)(
        _zeros(n, (1, 3, 4, 4)), output_size=(9, 9)),
}

def _zeros(n, shape): return (torch if n is torch.nn else mt).zeros(*shape)

def _exception(call):
    try: call()
    except Exception as e: return e  # noqa: BLE001 -- the exception is what is compared
    return None

@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_raises_torchs_exception_type(name):
    theirs, ours = _exception(lambda: BAD[name](torch, TF)), _exception(lambda: BAD[name](mt, F))
    assert theirs is not None, f"torch accepts {name}"
    assert ours is not None, f"minitorch_nb accepts {name}; torch raises {type(theirs).__name__}: {theirs}"
    assert type(ours) is type(theirs), f"{name}: {type(ours).__name__}: {ours} | torch: {type(theirs).__name__}: {theirs}"
    assert len(str(ours)) > 20  # a message, not just a type

@pytest.mark.parametrize("name", sorted(BAD_MODULES))
def test_bad_module_arguments_raise_torchs_exception_type(name):
    theirs, ours = _exception(lambda: BAD_MODULES[name](torch.nn)), _exception(lambda: BAD_MODULES[name](nn))
    assert theirs is not None and ours is not None, (theirs, ours)
    assert type(ours) is type(theirs), f"{name}: {type(ours).__name__}: {ours} | torch: {theirs!r}"

def test_error_messages_name_the_shapes():
    with pytest.raises(RuntimeError, match=r"weight of size \[4, 3, 3, 3\], expected input\[2, 2, 5, 5\] to have 3 "
                                           r"channels, but got 2 channels"):
        F.conv2d(mt.zeros(2, 2, 5, 5), mt.tensor(W4))
    with pytest.raises(RuntimeError, match=r"padded input size per channel: \(5 x 5\). Kernel size: \(7 x 7\)"):
        F.conv2d(mt.tensor(X4), mt.zeros(4, 3, 7, 7))
    with pytest.raises(RuntimeError, match=r"Calculated output size: \(3x0x0\)"):
        F.max_pool2d(mt.tensor(X4), 7)

# ------------------------------------------------------------------------------------------ modules

def copy_from_torch(ours, theirs, device):
    "Load torch's state_dict into our module (numpy arrays), on `device`."
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours.to(device)

MODULES = [  # (make(nn), input shape)
    (lambda n: n.Conv2d(3, 4, 3), (2, 3, 7, 6)),
    (lambda n: n.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2, bias=False), (2, 4, 8, 7)),
    (lambda n: n.Conv2d(2, 3, 3, padding="same", padding_mode="reflect"), (2, 2, 6, 5)),
    (lambda n: n.Conv2d(2, 3, (2, 3), padding=1, padding_mode="replicate"), (2, 2, 5, 6)),
    (lambda n: n.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="circular"), (2, 2, 5, 6)),
    (lambda n: n.Conv2d(2, 3, 4, padding="same", padding_mode="circular"), (2, 5, 6)),   # unbatched, even kernel
    (lambda n: n.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 9)),
    (lambda n: n.Conv1d(2, 4, 3, padding="same", padding_mode="reflect", groups=2), (2, 2, 7)),
    (lambda n: n.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1), (2, 3, 4, 5)),
    (lambda n: n.ConvTranspose2d(4, 4, 2, stride=2, groups=2, bias=False), (2, 4, 3, 3)),
    (lambda n: n.ConvTranspose1d(3, 2, 3, stride=2), (2, 3, 5)),
    (lambda n: n.MaxPool2d(2), (2, 3, 6, 7)),
    (lambda n: n.MaxPool2d(3, 2, 1, ceil_mode=True), (2, 3, 6, 7)),
    (lambda n: n.AvgPool2d(3, 2, 1, count_include_pad=False), (2, 3, 6, 7)),
    (lambda n: n.AvgPool2d(2, ceil_mode=True, divisor_override=3), (3, 5, 7)),
    (lambda n: n.AdaptiveAvgPool2d((3, None)), (2, 3, 7, 5)),
    (lambda n: n.AdaptiveAvgPool2d(1), (2, 3, 7, 5)),
    (lambda n: n.Upsample(scale_factor=2), (2, 3, 3, 4)),
    (lambda n: n.Upsample(size=(5, 7), mode="nearest-exact"), (2, 3, 3, 4)),
    (lambda n: n.LeakyReLU(), (2, 3, 4)),
    (lambda n: n.LeakyReLU(0.2), (2, 3, 4)),
]

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(MODULES)))
def test_module_loads_torch_state_dict_and_matches(device, rng, dtype, case):
    make, shape = MODULES[case]
    theirs = make(torch.nn).to(torch.float64 if dtype == np.float64 else torch.float32)
    ours = copy_from_torch(make(nn), theirs, device).to(dtype)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name in ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
                 "padding_mode", "output_padding", "transposed", "ceil_mode", "count_include_pad", "divisor_override",
                 "return_indices", "output_size", "scale_factor", "size", "mode", "negative_slope"):
        if hasattr(theirs, name): assert getattr(ours, name) == getattr(theirs, name), name
    x = rng.standard_normal(shape).astype(dtype)
    xo, xt = mt.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    close(yo, yt, dtype, "forward")
    g = rng.standard_normal(yt.shape).astype(dtype)
    yo.backward(mt.tensor(g, device=device)); yt.backward(torch.tensor(g))
    close(xo.grad, xt.grad, dtype, "input gradient")
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname
        close(p.grad, tp.grad, dtype, f"gradient of {name}")

def test_conv_transpose_output_size_matches_torch(rng):
    make = lambda n: n.ConvTranspose2d(3, 2, 3, stride=3, padding=1)
    theirs = make(torch.nn); ours = copy_from_torch(make(nn), theirs, "numpy")
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    for size in ((10, 10), (11, 12), (1, 2, 12, 10), [1, 2, 11, 11]):
        close(ours(mt.tensor(x), output_size=size), theirs(torch.tensor(x), output_size=size), np.float32, str(size))

@pytest.mark.parametrize("make", [lambda n: n.Conv2d(8, 16, 3, groups=2), lambda n: n.Conv1d(6, 4, 5),
                                  lambda n: n.ConvTranspose2d(8, 6, 3, groups=2), lambda n: n.Conv2d(3, 64, 7, bias=False)])
def test_default_initialisation_is_torchs(make):
    "kaiming_uniform_(a=√5): U(-1/√fan_in, 1/√fan_in) for the weight and the bias, fan_in = weight[0].numel()."
    ours, theirs = make(nn), make(torch.nn)
    assert ours.weight.shape == tuple(theirs.weight.shape)
    bound = 1 / math.sqrt(theirs.weight[0].numel())
    w = to_numpy(ours.weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    np.testing.assert_allclose(w.std(), bound / math.sqrt(3), rtol=0.1)  # the std of U(-b, b)
    if theirs.bias is not None:
        assert np.abs(to_numpy(ours.bias)).max() <= bound
    assert ours.weight.dtype == np.float32 and ours.weight.requires_grad

def test_leaky_relu_matches_torch(device, rng):
    x = (rng.standard_normal((3, 4, 5)) * 3).astype(np.float32)
    for slope in (0.01, 0.2, -0.5):
        check_op(lambda a: F.leaky_relu(a, slope), lambda a: TF.leaky_relu(a, slope), [x], device, np.float32, rng)
    assert repr(nn.LeakyReLU(0.2, inplace=True)) == repr(torch.nn.LeakyReLU(0.2, inplace=True))

def test_small_cnn_matches_torch_with_the_same_weights(device, rng):
    "The chapter's model, in eval mode, gives torch's outputs and parameter gradients with torch's weights."
    ours = C.small_cnn()
    theirs = torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Dropout(0.25), torch.nn.Linear(64 * 49, 10))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    copy_from_torch(ours, theirs, device)
    ours.eval(); theirs.eval()
    x, y = rng.random((8, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, 8)
    lo = F.cross_entropy(ours(mt.tensor(x, device=device)), mt.tensor(y, device=device))
    lt = TF.cross_entropy(theirs(torch.tensor(x)), torch.tensor(y))
    close(lo, lt, np.float32, "loss")
    lo.backward(); lt.backward()
    for (name, p), tp in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(to_numpy(p.grad), to_numpy(tp.grad), rtol=1e-4, atol=1e-6, err_msg=name)

# ------------------------------------------------------------------------------------------ devices and kernels

@pytest.mark.parametrize("teaching_device", ["strided", "python"])
def test_general_path_on_the_teaching_devices(rng, teaching_device):
    "Devices whose backends have no im2col/max-pool hooks (chapter 05's) take the general path: same results."
    x = rng.standard_normal((1, 2, 5, 4))
    w = rng.standard_normal((3, 2, 2, 3))
    xd, wd = mt.tensor(x, device=teaching_device, requires_grad=True), mt.tensor(w, device=teaching_device, requires_grad=True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    yo, yt = F.conv2d(xd, wd, stride=(1, 2), padding=1, dilation=(2, 1)), TF.conv2d(tx, tw, stride=(1, 2), padding=1, dilation=(2, 1))
    close(yo, yt, np.float64, "conv")
    g = rng.standard_normal(yt.shape)
    yo.backward(mt.tensor(g, device=teaching_device)); yt.backward(torch.tensor(g))
    close(xd.grad, tx.grad, np.float64, "input gradient"); close(wd.grad, tw.grad, np.float64, "weight gradient")
    for overlap in ((2,), (3, 1, 1)):
        xv = mt.tensor(x, device=teaching_device)
        mv, mi = F.max_pool2d(xv, *overlap, return_indices=True)
        tv, ti = TF.max_pool2d(torch.tensor(x), *overlap, return_indices=True)
        close(mv, tv, np.float64, "max pool"); np.testing.assert_array_equal(to_numpy(mi), to_numpy(ti))
    if teaching_device == "strided":  # the numpy-backed backend answers the hooks itself
        assert C.im2col(xd.array, C.Windows((2, 2), (1, 1), (0, 0), (1, 1), (4, 3))).device == "strided"

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.float16])
def test_cpu_kernels_against_numpy_for_every_dtype(rng, dtype):
    "im2col/col2im and max pooling on 'cpu' (Numba for 4 dtypes, numpy's path for float16) equal numpy's."
    x = (rng.standard_normal((2, 3, 7, 6)) * 10).astype(dtype).transpose(0, 1, 3, 2)
    cpu = mt.tensor(x, device="cpu").array
    for win in (C.Windows((3, 2), (2, 1), (1, 2), (2, 1), (3, 7)), C.Windows((2, 2), (2, 2), (0, 0), (1, 1), (3, 3))):
        np.testing.assert_array_equal(C.im2col(cpu, win).to_numpy(), C.im2col_numpy(x, win))
        cols = C.im2col_numpy(x, win)
        got = C.col2im(mt.tensor(cols, device="cpu").array, x.shape, win).to_numpy()
        np.testing.assert_allclose(got, C.col2im_numpy(cols, x.shape, win), rtol=1e-3 if dtype == np.float16 else 1e-6)
    for win in (C.Windows((3, 2), (2, 1), (1, 1), (2, 1), (3, 8)), C.Windows((2, 2), (2, 2), (0, 0), (1, 1), (3, 3))):
        best, at = C.max_pool(cpu, win)  # pooling geometries: padding at most half the window, as PyTorch requires
        want_best, want_at = C.max_pool_numpy(x, win)
        np.testing.assert_array_equal(best.to_numpy(), want_best)
        np.testing.assert_array_equal(at.to_numpy(), want_at)

def test_cpu_im2col_writes_only_its_matrix(rng):
    "The Numba path allocates one buffer (the matrix) and reads a transposed input in place."
    x = mt.tensor(rng.standard_normal((4, 3, 8, 8)).astype(np.float32), device="cpu").transpose(2, 3)
    win = C.Windows((3, 3), (1, 1), (1, 1), (1, 1), (8, 8))
    with mt.ndarray.count_allocations("cpu") as c:
        cols = C.im2col(x.array, win)
    assert (c.count, c.bytes) == (1, cols.size * 4)
    np.testing.assert_array_equal(cols.to_numpy(), C.im2col_numpy(to_numpy(x), win))

def test_cuda_kernels_under_the_simulator():
    "gpu_im2col_kernel, gpu_col2im_kernel and the conv/pool ops on device 'cuda' in Numba's simulator."
    script = Path(__file__).with_name("cuda_sim_conv.py")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=os.pathsep.join([str(script.parent.parent), str(script.parent)]))
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "conv simulator checks passed" in result.stdout, result.stdout

@pytest.mark.parametrize("args", [(2, 2, 0), (2, 1, 0), (3, 1, 1)], ids=str)
def test_max_pool_general_path_takes_the_last_nan(args):
    """max_pool_strided (im2col, max and argmax: the path of a backend without a pooling kernel) on ties and NaN,
    on NDArrays of device 'strided', against torch's positions: argmax alone would take the first NaN."""
    a = np.array([[[[3.0, 3.0, 1.0, 5.0], [3.0, 3.0, np.nan, 2.0], [0.0, np.nan, np.nan, 2.0],
                    [1.0, 1.0, 2.0, 2.0]]]])
    win = C._pool_windows("max_pool2d", mt.tensor(a), *args, 1, False)
    best, at = C.max_pool_strided(mt.tensor(a, device="strided").array, win)
    tv, ti = TF.max_pool2d(torch.tensor(a), *args, return_indices=True)
    np.testing.assert_array_equal(at.to_numpy(), ti.numpy())
    np.testing.assert_array_equal(best.to_numpy(), tv.numpy())
