"Shared fixtures: the devices every differential test runs on, and PyTorch as the oracle."
import os
os.environ.setdefault("MPLBACKEND", "Agg")
import numpy as np
import pytest
from hypothesis import settings

# The same examples on every run: a test suite that passes once passes always (and fails reproducibly).
settings.register_profile("deterministic", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("deterministic")
import minitorch_nb as mt

def available_devices():
    "Devices registered by the package (chapters 06a and 06c add 'cpu' and 'cuda')."
    return [d for d in ("numpy", "cpu") if d in mt.autograd._DEVICES]

@pytest.fixture(params=available_devices())
def device(request):
    "Run a test once per device."
    return request.param

@pytest.fixture
def rng():
    "A seeded numpy generator, new for every test."
    return np.random.default_rng(0)
