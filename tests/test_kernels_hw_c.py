"Chapters 06a and 06c: the tiled matmul with tile sizes as arguments, the autotuner, the double-buffered CUDA matmul."
import os
import subprocess
import sys
from pathlib import Path
import numpy as np
import pytest
import torch
from minitorch_nb.backends.cpu import (matmul_tiled_sized_kernel, Autotuner, TILE_CANDIDATES, tiled_matmul_variants,
                                        matmul_autotuned)

SHAPES = [(1, 1, 1), (3, 5, 2), (67, 45, 131), (8, 300, 17), (130, 7, 260)]  # (m, k, n), none a multiple of a tile

def torch_matmul(a, b):
    return (torch.from_numpy(a.astype(np.float64)) @ torch.from_numpy(b.astype(np.float64))).numpy()

@pytest.mark.parametrize("tiles", list(TILE_CANDIDATES) + [(1, 1, 1), (3, 5, 7), (4, 1000, 1000)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_tile_size_matches_torch(tiles, dtype, rng):
    for m, k, n in SHAPES:
        a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
        out = np.full((m, n), np.nan, dtype)
        matmul_tiled_sized_kernel(out, a, b, *tiles)
        rtol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(out, torch_matmul(a, b), rtol=rtol, atol=rtol * np.sqrt(k))

def test_variants_are_named_by_their_tiles_and_each_one_is_correct(rng):
    variants = tiled_matmul_variants()
    assert list(variants) == list(TILE_CANDIDATES)
    a, b = rng.standard_normal((67, 45)).astype(np.float32), rng.standard_normal((45, 131)).astype(np.float32)
    for variant in variants.values():
        out = np.full((67, 131), np.nan, np.float32)
        variant(out, a, b)
        np.testing.assert_allclose(out, torch_matmul(a, b), rtol=1e-5, atol=1e-4)

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_autotuned_matches_torch_on_views(dtype, rng):
    a = rng.standard_normal((40, 30)).astype(dtype)
    b = rng.standard_normal((50, 30)).astype(dtype)
    got = matmul_autotuned(a[::2], b.T[:, 5:])  # strided and transposed inputs are made contiguous first
    assert got.dtype == dtype and got.shape == (20, 45)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, torch_matmul(a[::2], b.T[:, 5:]), rtol=rtol, atol=rtol * 10)

class ScriptedClock:
    "A fake clock: reading number 2r is the start of timed run r (time 0), reading 2r+1 its end (the scripted duration)."
    def __init__(self, durations):
        self.durations, self.readings = list(durations), 0
    def __call__(self):
        r, is_end = divmod(self.readings, 2)
        self.readings += 1
        return float(self.durations[r]) if is_end else 0.0

def test_choice_follows_the_injected_clock(rng):
    a, b = rng.standard_normal((9, 8)).astype(np.float32), rng.standard_normal((8, 7)).astype(np.float32)
    # per candidate, 3 repeats; candidate 2 is fastest on its best run (0.5), although its first run is slowest
    durations = [4, 4, 4, 3, 3, 3, 9, 0.5, 2, 1, 1, 1]
    tuner = Autotuner(tiled_matmul_variants(), repeat=3, timer=ScriptedClock(durations))
    got = matmul_autotuned(a, b, tuner)
    key = ((9, 8), (8, 7), "<f4")
    assert tuner.choice[key] == TILE_CANDIDATES[2]
    assert tuner.timings[key] == {TILE_CANDIDATES[0]: 4, TILE_CANDIDATES[1]: 3, TILE_CANDIDATES[2]: 0.5,
                                  TILE_CANDIDATES[3]: 1}
    np.testing.assert_allclose(got, torch_matmul(a, b), rtol=1e-5, atol=1e-5)

def test_second_call_is_a_cache_hit_and_new_keys_are_timed(rng):
    readings = []
    clock = lambda: readings.append(1) or 0.0  # every variant ties: the first listed wins
    tuner = Autotuner(tiled_matmul_variants(), repeat=2, timer=clock)
    a, b = rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)
    matmul_autotuned(a, b, tuner)
    assert tuner.timed_calls == 2 * len(TILE_CANDIDATES) and len(readings) == 2 * tuner.timed_calls
    assert tuner.choice == {((6, 5), (5, 4), "<f4"): TILE_CANDIDATES[0]}
    matmul_autotuned(a + 1, b, tuner)  # same shapes and dtype, other values: cached
    assert tuner.timed_calls == 2 * len(TILE_CANDIDATES) and len(readings) == 2 * tuner.timed_calls
    matmul_autotuned(a.astype(np.float64), b.astype(np.float64), tuner)  # new dtype
    matmul_autotuned(a[:3], b, tuner)  # new shape
    assert tuner.timed_calls == 3 * 2 * len(TILE_CANDIDATES) and len(tuner.choice) == 3

def test_autotuner_runs_the_chosen_variant_only_after_tuning():
    calls = {"slow": 0, "fast": 0}
    def variant(name, seconds):
        def run(x):
            calls[name] += 1
            clock.now += seconds
            return (name, x)
        return run
    class Clock:
        now = 0.0
        def __call__(self): return self.now
    clock = Clock()
    tuner = Autotuner({"slow": variant("slow", 2.0), "fast": variant("fast", 1.0)}, repeat=3, timer=clock)
    assert tuner("k", 5) == ("fast", 5)
    assert calls == {"slow": 3, "fast": 4}  # 3 timed runs each, then the winner once for the result
    assert tuner("k", 6) == ("fast", 6) and calls == {"slow": 3, "fast": 5} and tuner.timed_calls == 6

def test_bad_inputs_name_the_problem(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    with pytest.raises(ValueError, match=r"shapes \(3, 4\) and \(3, 4\) don't match"):
        matmul_autotuned(a, a)
    with pytest.raises(ValueError, match="don't match"):
        matmul_autotuned(a[0], a.T)
    with pytest.raises(TypeError, match="got float32 and float64"):
        matmul_autotuned(a, a.T.astype(np.float64))
    with pytest.raises(TypeError, match="got int64 and int64"):
        matmul_autotuned(np.ones((2, 2), np.int64), np.ones((2, 2), np.int64))
    with pytest.raises(ValueError, match=r"3 positive integers, got \(4, 0, 8\)"):
        tiled_matmul_variants([(4, 0, 8)])
    with pytest.raises(ValueError, match="at least one variant"):
        Autotuner({})

def test_double_buffered_cuda_matmul_under_the_simulator():
    script = Path(__file__).with_name("cuda_sim_double_buffer.py")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "double-buffered matmul: 5 shapes agree with numpy" in result.stdout, result.stdout
