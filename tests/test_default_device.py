"PyTorch's default device (set_default_device / get_default_device) and torch.accelerator, against torch."
import numpy as np
import pytest
import torch
import minitorch_nb as mt

@pytest.fixture
def restore_default():
    yield
    mt.set_default_device(None)
    torch.set_default_device(None)

def test_default_device_round_trip_like_torch(restore_default):
    assert mt.get_default_device() == "numpy" and torch.get_default_device() == torch.device("cpu")
    assert isinstance(mt.get_default_device(), mt.device) and isinstance(torch.get_default_device(), torch.device)
    mt.set_default_device("cpu"); torch.set_default_device("meta")
    assert mt.get_default_device() == "cpu" and torch.get_default_device().type == "meta"
    mt.set_default_device(None); torch.set_default_device(None)
    assert mt.get_default_device() == "numpy" and torch.get_default_device() == torch.device("cpu")

def test_unknown_default_device_raises_like_torch(restore_default):
    with pytest.raises(RuntimeError): mt.set_default_device("bogus")
    with pytest.raises(RuntimeError): torch.set_default_device("bogus")
    assert mt.get_default_device() == "numpy"

@pytest.mark.parametrize("make", [lambda lib: lib.tensor([1.0, 2.0]), lambda lib: lib.Tensor([1.0, 2.0]),
                                  lambda lib: lib.tensor(np.ones(2))])
def test_new_tensors_go_to_the_default_device(make, restore_default):
    mt.set_default_device("cpu")
    t = make(mt)
    assert t.device == "cpu" and t.tolist() == make(torch).tolist()
    assert make(mt).to("numpy").device == "numpy"  # a device named in a call wins over the default
    assert mt.tensor([1.0], device="numpy").device == "numpy"

def test_factories_go_to_the_default_device(restore_default):
    mt.set_default_device("cpu")
    assert mt.zeros(2).device == "cpu"

def test_accelerator_basics_like_torch():
    here = mt.cuda.is_available()
    assert mt.accelerator.is_available() == here and mt.accelerator.device_count() == int(here)
    assert mt.accelerator.current_accelerator() == "cuda"  # registered even without a GPU, as a CUDA build of torch
    assert mt.accelerator.current_accelerator(check_available=True) == ("cuda" if here else None)
    if not torch.accelerator.is_available():  # torch here is a CPU build: no accelerator at all
        assert torch.accelerator.device_count() == 0 and torch.accelerator.current_accelerator() is None
        with pytest.raises(RuntimeError): torch.accelerator.current_device_index()
    if not here:
        with pytest.raises(RuntimeError): mt.accelerator.current_device_index()
    else:
        assert mt.accelerator.current_device_index() == 0
