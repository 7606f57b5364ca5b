"The device registry: names as PyTorch spells them, transfers with their gradients, one mixed-device error."
import numpy as np
import pytest
import torch
import minitorch_nb as mt

HOST_DEVICES = ["numpy", "strided", "python", "cpu"]  # every device that runs on this machine without a GPU

def test_every_registered_device_is_listed_once_in_chapter_order():
    names = mt.autograd.available_devices()
    assert names[:3] == ["numpy", "strided", "python"] and "cpu" in names
    assert ("cuda" in names) == mt.cuda.is_available()  # 'cuda' is a device name either way, as in PyTorch
    assert len(names) == len(set(names))

def test_device_objects_spell_names_as_pytorch():
    d = mt.device("cuda:0")
    assert (d.type, d.index, d == "cuda", str(d), repr(d)) == ("cuda", 0, True, "cuda", "device(type='cuda', index=0)")
    assert (mt.device("cpu").index, mt.device("cuda", 0).index) == (None, 0)
    assert repr(torch.device("cuda:0")) == repr(d)  # PyTorch's own spelling
    assert mt.tensor([1.0]).device.type == "numpy" and isinstance(mt.tensor([1.0]).device, mt.device)

def test_unknown_devices_and_indices_fail_naming_what_exists():
    with pytest.raises(RuntimeError, match=r"unknown device 'tpu'; available: \['numpy', 'strided', 'python'"):
        mt.tensor([1.0]).to("tpu")
    with pytest.raises(RuntimeError, match="unknown device 'mps'"): mt.device("mps")
    with pytest.raises(RuntimeError, match="device 'cuda' has one index, 0; got cuda:1"): mt.device("cuda:1")
    with pytest.raises(RuntimeError, match="unknown device"): mt.nn.Linear(2, 2).to("tpu")

@pytest.mark.parametrize("src", HOST_DEVICES)
@pytest.mark.parametrize("dst", HOST_DEVICES)
def test_transfer_keeps_values_and_sends_the_gradient_home(src, dst):
    x = mt.tensor([[1.0, -2.0], [3.0, 0.5]]).to(src).requires_grad_()
    y = x.to(dst)
    assert (y.device, x.device) == (dst, src)
    np.testing.assert_array_equal(np.asarray(y.detach().array), [[1.0, -2.0], [3.0, 0.5]])
    (y * y).sum().backward()
    assert x.grad.device == src
    np.testing.assert_allclose(np.asarray(x.grad.array), 2 * np.array([[1.0, -2.0], [3.0, 0.5]]))

@pytest.mark.parametrize("spelling", ["cpu", "cpu:0", mt.device("cpu")])
def test_pytorch_spellings_of_a_transfer(spelling):
    x = mt.tensor([1.0, 2.0])
    assert x.to(spelling).device == "cpu" and x.cpu().device == "cpu" and not x.cpu().is_cuda
    assert mt.tensor([1.0], device=spelling).device == "cpu"
    model = mt.nn.Linear(3, 2)
    weight = model.weight
    assert model.to(spelling) is model and model.weight is weight and weight.device == "cpu"
    assert model.cpu().weight.device == "cpu"

def test_cuda_without_a_gpu_says_so():
    if mt.cuda.is_available(): pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="device 'cuda' is not available"): mt.tensor([1.0]).cuda()
    with pytest.raises(RuntimeError, match="device 'cuda' is not available"): mt.nn.Linear(2, 2).cuda()
    assert mt.tensor([1.0]).is_cuda is False

MIXED = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "matmul": lambda a, b: a @ b.T,
    "where": lambda a, b: mt.where(a > 0, a, b),
    "maximum": lambda a, b: mt.maximum(a, b),
    "cat": lambda a, b: mt.cat([a, b]),
    "stack": lambda a, b: mt.stack([a, b]),
    "mse_loss": lambda a, b: mt.nn.functional.mse_loss(a, b),
}

@pytest.mark.parametrize("op", MIXED)
@pytest.mark.parametrize("other", ["strided", "python", "cpu"])
def test_every_mixed_device_op_names_both_devices_and_the_fix(op, other):
    a, b = mt.ones(2, 3), mt.ones(2, 3).to(other)
    with pytest.raises(RuntimeError, match=rf"expected all tensors on the same device, but found '(numpy|{other})'.* "
                                           rf"and '(numpy|{other})'.*; move one first, e.g. t.to\("):
        MIXED[op](a, b)

def test_mixed_devices_fail_like_torch():
    "PyTorch raises RuntimeError for this too (checked on the meta device, which every build has)."
    with pytest.raises(RuntimeError): torch.ones(2) + torch.ones(2, device="meta")
    with pytest.raises(RuntimeError): mt.ones(2) + mt.ones(2).cpu()
