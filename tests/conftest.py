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

def differential_devices():
    """The devices the differential tests run on: 'numpy' (chapter 00) and 'cpu' (chapter 06a's Numba kernels);
    MINITORCH_TEST_DEVICES (e.g. "numpy cpu cuda") chooses others where a GPU is present (tools/gpu_check.sh)."""
    wanted = os.environ.get("MINITORCH_TEST_DEVICES", "numpy cpu").split()
    return [d for d in wanted if d in mt.autograd.available_devices()]

@pytest.fixture(params=differential_devices())
def device(request):
    "Run a test once per device."
    return request.param

@pytest.fixture
def rng():
    "A seeded numpy generator, new for every test."
    return np.random.default_rng(0)
