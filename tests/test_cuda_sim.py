"Chapter 06c: the CUDA kernels, run in Numba's CUDA simulator in a child process (the variable must be set before Numba loads)."
import os
import subprocess
import sys
from pathlib import Path

def run_under_the_simulator(name, passed_line, **env):
    "Run tests/NAME in a child process with the simulator on; it must exit 0 and print passed_line."
    script = Path(__file__).with_name(name)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", **env)
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert passed_line in result.stdout, result.stdout

def test_cuda_kernels_under_the_simulator():
    run_under_the_simulator("cuda_sim_checks.py", "12 simulator checks passed",
                            PYTHONPATH=str(Path(__file__).parent))

def test_warp_kernels_under_the_simulator():
    "06c's strided read (coalesced or not) and two-path kernel (divergent or not) against numpy."
    run_under_the_simulator("cuda_sim_warps.py", "warp kernels: 6 simulator checks passed")

def test_warp_models_match_the_kernels_index_functions():
    "The chapter's address and branch models use the kernels' own index functions (plain Python on the host)."
    from minitorch_nb.backends.cuda import strided_index, branch_side
    n = 1024
    assert [strided_index(t, n, 32) for t in range(32)] == [32 * t for t in range(32)]
    assert sorted(strided_index(i, n, 8) for i in range(n)) == list(range(n))
    assert {branch_side(t, 1) for t in range(32)} == {0, 1} and {branch_side(t, 32) for t in range(32)} == {0}

def test_streams_and_events_without_cuda_say_so():
    import pytest
    import minitorch_nb as mt
    if mt.cuda.is_available(): pytest.skip("a GPU (or the simulator) is present")
    for make in (mt.cuda.Stream, mt.cuda.Event, mt.cuda.current_stream, mt.cuda.default_stream,
                 lambda: mt.cuda.pinned_empty((2, 3))):
        with pytest.raises(RuntimeError, match="not available: Numba found no CUDA GPU"):
            make()
    with pytest.raises(TypeError, match="needs an mt.cuda.Stream"):
        with mt.cuda.stream("side"): pass

def test_reduction_kernel_under_the_simulator():
    "06c's tree reduction: bit for bit its numpy model, every reduction, axis and keepdims against numpy."
    run_under_the_simulator("cuda_sim_reduce.py", "reductions: 5 simulator checks passed")
