"Chapter 06b: cache sizes from sysfs, BLAS FLOP/byte counts, the energy estimator."
import os, shutil, subprocess
import numpy as np
import pytest
from minitorch_nb.hardware import parse_cache_size, cache_sizes, blas_cost, BLAS_SIZES, ENERGY_PJ, energy_estimate


@pytest.mark.parametrize("text, expected", [("32K", 32 * 1024), ("1024K", 1 << 20), ("32M", 32 * 1024 * 1024),
                                            ("48k", 49152), ("1G", 1 << 30), ("512", 512), (" 512K\n", 524288)])
def test_parse_cache_size(text, expected):
    assert parse_cache_size(text) == expected


@pytest.mark.parametrize("bad", ["32 KB", "K", "", "-1K", "1.5M"])
def test_parse_cache_size_rejects(bad):
    with pytest.raises(ValueError, match="not a cache size"):
        parse_cache_size(bad)


def write_cache(root, name, **files):
    os.makedirs(root / name)
    for key, value in files.items(): (root / name / key).write_text(value + "\n")


def test_cache_sizes_fake_tree(tmp_path):
    write_cache(tmp_path, "index0", level="1", type="Data", size="48K")
    write_cache(tmp_path, "index1", level="1", type="Instruction", size="32K")
    write_cache(tmp_path, "index2", level="2", type="Unified", size="1280K")
    write_cache(tmp_path, "index3", level="3", type="Unified", size="54M")
    write_cache(tmp_path, "index4", level="4")  # incomplete entry: skipped
    (tmp_path / "uevent").write_text("")
    assert cache_sizes(str(tmp_path)) == {"L1d": 49152, "L2": 1310720, "L3": 54 * 1024 * 1024}


def test_cache_sizes_missing_dir(tmp_path):
    assert cache_sizes(str(tmp_path / "absent")) == {}


@pytest.mark.skipif(not os.path.isdir("/sys/devices/system/cpu/cpu0/cache") or shutil.which("lscpu") is None,
                    reason="needs Linux sysfs cache info and lscpu")
def test_cache_sizes_match_lscpu():
    out = subprocess.run(["lscpu", "-C=NAME,ONE-SIZE,TYPE", "-B"], capture_output=True, text=True)
    if out.returncode != 0: pytest.skip("this lscpu has no -C")
    rows = [line.split() for line in out.stdout.splitlines()[1:] if line.strip()]
    expected = {name: int(size) for name, size, kind in rows if kind != "Instruction"}
    assert cache_sizes() == expected


def reference_gemm_flops(m, n, k):
    "Count the multiplies and adds of the triple loop C[i, j] += A[i, t] * B[t, j] (C starting from its old value)."
    count = 0
    for _ in range(m):
        for _ in range(n):
            for _ in range(k): count += 2
    return count


@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (3, 5, 7), (8, 2, 16)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("beta", [0.0, 1.0, -0.5])
def test_blas_cost_gemm(m, n, k, dtype, beta):
    A, B, C = np.zeros((m, k), dtype), np.zeros((k, n), dtype), np.zeros((m, n), dtype)
    reads_c = beta != 0
    nbytes = A.nbytes + B.nbytes + C.nbytes * (2 if reads_c else 1)
    assert blas_cost("gemm", m, n, k, itemsize=np.dtype(dtype).itemsize, beta=beta) == (reference_gemm_flops(m, n, k), nbytes)


@pytest.mark.parametrize("m, n", [(1, 1), (4, 9), (16, 3)])
@pytest.mark.parametrize("beta", [0.0, 2.0])
def test_blas_cost_gemv(m, n, beta):
    A, x, y = np.zeros((m, n), np.float32), np.zeros(n, np.float32), np.zeros(m, np.float32)
    nbytes = A.nbytes + x.nbytes + y.nbytes * (1 if beta == 0 else 2)
    assert blas_cost("gemv", m, n, beta=beta) == (reference_gemm_flops(m, 1, n), nbytes)


def test_blas_cost_axpy_and_intensities():
    n = 1000
    x = np.zeros(n, np.float32)
    assert blas_cost("axpy", n) == (2 * n, 3 * x.nbytes)
    flops, nbytes = blas_cost("axpy", n)
    assert flops / nbytes == pytest.approx(1 / 6, rel=1e-12)
    flops, nbytes = blas_cost("gemm", 512, 512, 512, beta=0)
    assert flops / nbytes == pytest.approx(512 / 6, rel=1e-12)


def test_blas_cost_errors():
    with pytest.raises(ValueError, match="unknown BLAS op 'dot'"):
        blas_cost("dot", 3)
    with pytest.raises(ValueError, match=r"gemv takes sizes \('m', 'n'\), got \(3,\)"):
        blas_cost("gemv", 3)
    assert set(BLAS_SIZES) == {"axpy", "gemv", "gemm"}


def test_energy_estimate_defaults():
    # one float32 read from DRAM: 640 pJ; one multiply-add (2 FLOPs): 3.7 + 0.9 pJ
    assert energy_estimate(0, 4) == pytest.approx({"compute": 0.0, "memory": 640e-12, "total": 640e-12}, rel=1e-12)
    assert energy_estimate(2, 0)["compute"] == pytest.approx(4.6e-12, rel=1e-12)
    e = energy_estimate(2 * 1024**3, 3 * 1024**2 * 4)
    assert e["total"] == pytest.approx(e["compute"] + e["memory"], rel=1e-15)
    assert e["compute"] == pytest.approx(2 * 1024**3 * 2.3e-12, rel=1e-12)
    assert e["memory"] == pytest.approx(3 * 1024**2 * 4 * 160e-12, rel=1e-12)


def test_energy_estimate_custom_and_table():
    e = energy_estimate(10, 100, pj_per_flop=ENERGY_PJ["int8_add"], pj_per_byte=ENERGY_PJ["l1_read_8kb"])
    assert e["compute"] == pytest.approx(0.3e-12, rel=1e-12) and e["memory"] == pytest.approx(1000e-12, rel=1e-12)
    assert round(ENERGY_PJ["dram_read_32bit"] / ENERGY_PJ["fp32_mult"]) == 173
    assert ENERGY_PJ["fp16_add"] == 0.4 and ENERGY_PJ["int32_add"] == 0.1


def test_energy_estimate_rejects_negative():
    with pytest.raises(ValueError, match="must be >= 0"):
        energy_estimate(1, -4)
