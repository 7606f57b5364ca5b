"""Chapter 06c's warp lessons measured on the kernels themselves: the simulator's record of each warp's
memory sectors and branch sides (tests/cuda_sim_warp_counts.py) against the chapter's models, and the PTX
of the two kernels (tests/cuda_ptx_warps.py): one predicated branch between the two loops, one kind of
4-byte global load whatever the stride."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent


def run_script(name, **env):
    result = subprocess.run([sys.executable, str(HERE / name)], capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, **env))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_simulated_sectors_and_lanes_match_the_models():
    from minitorch_nb.backends.cuda import strided_index, branch_side
    counts = run_script("cuda_sim_warp_counts.py", NUMBA_ENABLE_CUDASIM="1")
    n, warp = 1024, 32
    for stride, seen in counts["sectors"].items():
        model = {len({strided_index(t, n, int(stride)) * 4 // 32 for t in range(w * warp, (w + 1) * warp)})
                 for w in range(n // warp)}
        assert seen == sorted(model), (stride, seen, model)
    assert counts["sectors"]["1"] == [4] and counts["sectors"]["32"] == [32]
    for width, seen in counts["lanes"].items():
        model = set()
        for w in range(n // warp):
            sides = [branch_side(t % 128, int(width)) for t in range(w * warp, (w + 1) * warp)]
            model.add((sides.count(0), sides.count(1)))
        assert [tuple(x) for x in seen] == sorted(model), (width, seen, model)
    assert counts["lanes"]["1"] == [[16, 16]] and counts["lanes"]["32"] == [[0, 32], [32, 0]]


def test_ptx_of_the_warp_kernels():
    pytest.importorskip("numba")
    import numba
    if numba.config.ENABLE_CUDASIM: pytest.skip("the simulator has no compiler")
    facts = run_script("cuda_ptx_warps.py", NUMBA_ENABLE_CUDASIM="0")
    two, strided = facts["two_paths"], facts["strided"]
    f32 = lambda *xs: [float(np.float32(x)) for x in xs]
    assert two["branch"].startswith("@%p") and " bra " in two["branch"]  # predicated, not .uni
    assert sorted([two["fall_through"], two["taken"]]) == sorted([f32(1.001, -0.5), f32(0.999, 0.5)])
    assert two["conditional"] >= 1 and two["uniform"] >= 0
    assert strided["loads"] == strided["stores"] >= 1
    assert strided["load_kinds"] == ["ld.global.f32"]  # one 4-byte load per thread, whatever the stride
    assert strided["divides"] >= 2                     # i % rows and i // rows
