"""Every CUDA kernel of the package compiled to PTX for an H100/H200 (compute capability 9.0), with the argument
types CudaBackend launches it with. Numba's simulator runs kernels as Python, so it never types them; this file
does, without a GPU: Numba's CUDA target, NVVM and libdevice (the book extra's `nvidia-nvvm` and
`nvidia-cuda-runtime` wheels), no driver. A typing or lowering error in any kernel, in any branch, fails here.

The kernels are found, not listed: every numba CUDA dispatcher in the package's loaded modules (and in the
module's dict of op-table kernels, GPU_KERNELS) must have an entry in SIGNATURES, so a new kernel without one
fails `test_every_kernel_has_launch_signatures`. The op-table kernels' entries are generated from the table,
with numpy's type rules, so a new row of the table is compiled here without a line added to this file."""
import importlib
import importlib.metadata
import os
import re
import sys
import types as pytypes

import numba
import pytest
from numba import cuda, types

import numpy as np
import minitorch_nb  # noqa: F401  (loads every module the package face imports)
from minitorch_nb import ndarray as nd

KERNELS_MODULE = "minitorch_nb.backends.cuda"  # the module that defines the CUDA kernels (CudaBackend's launch sites)

if numba.config.ENABLE_CUDASIM:
    pytest.skip("NUMBA_ENABLE_CUDASIM=1: the simulator has no compiler; run without it", allow_module_level=True)

kernels = importlib.import_module(KERNELS_MODULE)
CC = (9, 0)  # Hopper: H100 and H200

# --- argument types, as the launch sites in CudaBackend pass them --------------------------------------------------
# Every buffer is a 1-D C-contiguous device array (numba_cuda.device_array(size) / to_device, or buffer[offset:]);
# shape/stride metadata (_meta) and gather/scatter positions (_dev) are int64 device arrays; Python ints (offsets
# and sizes) are int64, Python bools (accumulate, is_max) booleans; fill's value is a numpy scalar of
# the array's dtype (np.asarray(fill_value, dtype)[()]).
F32, F64, I64, BOOL = types.float32, types.float64, types.int64, types.boolean
META = types.Array(I64, 1, "C")

def buf(dtype):
    return types.Array(dtype, 1, "C")

def map_sig(out, a): return (buf(out), META, I64, buf(a), META, I64, META, I64)
def zip_sig(out, a): return (buf(out), META, I64, buf(a), META, I64, buf(a), META, I64, META, I64)
def where_sig(d): return (buf(d), META, I64, buf(BOOL), META, I64, buf(d), META, I64, buf(d), META, I64, META, I64)
def copy_sig(out, a): return (buf(out), META, I64, buf(a), META, I64, META, I64)
def reduce_sig(d): return (buf(d), META, I64, buf(d), META, I64, META, I64, I64, I64)
def arg_reduce_sig(d): return (BOOL, buf(I64), META, I64, buf(d), META, I64, META, I64, I64, I64)
def naive_sig(d): return (buf(d), META, I64, buf(d), META, I64, buf(d), META, I64, META, I64, I64, I64)
TILED_SIG = (buf(F32), buf(F32), buf(F32), I64, I64, I64)  # float32 only: CudaBackend.matmul's fast path

def row_signatures(op):
    """The launch types of an op-table row's kernel: for each input dtype numpy accepts for the row (of float32,
    float64, int64, bool), the output dtype numpy's type rules give (chapter 05's _ufunc_dtype, _reduce_dtype):
    what NDArray allocates before CudaBackend launches the kernel (exp of bools gives float16, for instance)."""
    sigs = []
    for d in map(np.dtype, ("float32", "float64", "int64", "bool")):
        try:
            if op.kind == "unary": sigs.append(map_sig(numba.from_dtype(nd._ufunc_dtype(op.name, d)), numba.from_dtype(d)))
            elif op.kind == "binary": sigs.append(zip_sig(numba.from_dtype(nd._ufunc_dtype(op.name, d, d)), numba.from_dtype(d)))
            else: sigs.append(reduce_sig(numba.from_dtype(nd._reduce_dtype(op.name, d))))  # reduce casts its input first
        except TypeError:  # numpy has no loop for this dtype (bitwise ops of floats...): NDArray refuses before a launch
            pass
    return sorted(set(sigs), key=str)

FLOATS = (F32, F64)
SIGNATURES = {  # kernel -> the argument types it is launched with (dtypes: out first, then inputs)
    **{f"GPU_KERNELS[{name}]": row_signatures(op) for name, op in nd.OPS.items()},  # one per op-table row
    "gpu_where_kernel": [where_sig(d) for d in FLOATS + (I64, BOOL)],
    # copy: contiguous(), views, setitem; and astype between every pair the reductions and .float() use
    "gpu_copy_kernel": [copy_sig(d, d) for d in FLOATS + (I64, BOOL)]
                       + [copy_sig(F64, F32), copy_sig(F32, F64), copy_sig(BOOL, F32), copy_sig(BOOL, F64),
                          copy_sig(I64, BOOL), copy_sig(F32, BOOL), copy_sig(F32, I64), copy_sig(F64, I64)],
    "gpu_fill_kernel": [(buf(d), I64, I64, d) for d in FLOATS + (I64, BOOL)],
    "gpu_take_kernel": [(buf(d), I64, buf(d), META) for d in FLOATS + (I64, BOOL)],
    "gpu_put_kernel": [(buf(d), META, buf(d), META, I64, META, BOOL) for d in FLOATS + (I64, BOOL)],
    "gpu_arg_reduce_kernel": [arg_reduce_sig(d) for d in FLOATS + (I64,)],
    "gpu_matmul_naive": [naive_sig(d) for d in FLOATS],
    "gpu_matmul_tiled": [TILED_SIG],
    "gpu_matmul_double_buffered": [TILED_SIG],  # launched by chapter 06's cells and bench/gpu_matmul.py
    # chapter 06c's warp lessons: launched by its cells with host arrays and Python ints
    "gpu_strided_read": [(buf(d), buf(d), I64) for d in FLOATS],
    "gpu_two_paths": [(buf(F32), buf(F32), I64, I64)],
    # device function, compiled on its own with the types the kernels call it with
    "gpu_position_of": [(I64, META, META, I64, I64)],
    "gpu_strided_index": [(I64, I64, I64)],
    "gpu_branch_side": [(types.uint32, I64), (types.int32, I64)],
}
# chapter 07 (nn/conv.py): im2col and col2im, launched by CudaBackend.im2col_all / col2im_all for float32 and float64;
# the geometry is 14 Python ints (N, C, H, W, then kernel, stride, padding, dilation and output size pairs)
GEOMETRY = (I64,) * 14
SIGNATURES.update({
    "gpu_im2col_kernel": [(buf(d), buf(d), META, I64, *GEOMETRY, F64, I64) for d in FLOATS],
    "gpu_col2im_kernel": [(buf(d), buf(d), *GEOMETRY, I64) for d in FLOATS],
    # max pooling: values, int64 positions, the input, its strides and offset, the geometry, -inf, the count
    "gpu_max_pool_kernel": [(buf(d), buf(I64), buf(d), META, I64, *GEOMETRY, d, I64) for d in FLOATS],
    "gpu_window_max": [(buf(d), I64, META, *(I64,) * 12, d) for d in FLOATS],  # x, plane, xs, H..ow, low
})
TILE = kernels.TILE
SHARED_BYTES = {  # kernels that stage tiles in shared memory: float32 tiles of TILE x TILE, two or four of them
    "gpu_matmul_tiled": 2 * TILE * TILE * 4,
    "gpu_matmul_double_buffered": 2 * 2 * TILE * TILE * 4,
}

def is_reduction(name):
    "An op-table row's reduction kernel (a tree over REDUCE_THREADS partials in shared memory)."
    return name.startswith("GPU_KERNELS[") and nd.OPS[name[len("GPU_KERNELS["):-1]].kind == "reduce"

def expected_shared_bytes(name, sig):
    "Shared memory a kernel declares: the matmuls' tiles; a reduction's partials, REDUCE_THREADS of its dtype."
    if name in SHARED_BYTES: return SHARED_BYTES[name]
    if is_reduction(name): return kernels.REDUCE_THREADS * numba.np.numpy_support.as_dtype(sig[3].dtype).itemsize
    return 0

def cuda_dispatchers():
    """Every numba CUDA dispatcher (kernel or device function) in the loaded minitorch_nb modules, by name, and in
    their dicts of dispatchers (GPU_KERNELS: name[key])."""
    found = {}
    mods = [kernels] + [m for n, m in sorted(sys.modules.items()) if n.split(".")[0] == "minitorch_nb" and m]
    for mod in mods:
        for name, obj in vars(mod).items():
            items = obj.items() if isinstance(obj, dict) else [(None, obj)]
            for key, value in items:
                if isinstance(value, cuda.dispatcher.CUDADispatcher) and all(value is not o for o in found.values()):
                    found.setdefault(name if key is None else f"{name}[{key}]", value)
    return found

DISPATCHERS = cuda_dispatchers()

# --- the toolchain: NVVM from the dev wheels, and a stand-in for the absent GPU --------------------------------------
def wheel_cuda_home(tmp):
    """A CUDA_HOME laid out as Numba's own CUDA target looks for it (nvvm/lib64, nvvm/libdevice, lib64), made of
    links into the `nvidia-nvvm` and `nvidia-cuda-runtime` wheels; None if they are not installed."""
    try:
        nvvm = importlib.metadata.distribution("nvidia-nvvm").locate_file("nvidia/cu13/lib/libnvvm.so.4")
        cudart = importlib.metadata.distribution("nvidia-cuda-runtime").locate_file("nvidia/cu13/lib/libcudart.so.13")
    except importlib.metadata.PackageNotFoundError:
        return None
    nvvm, cudart = os.path.realpath(nvvm), os.path.realpath(cudart)
    root = tmp / "cuda_home"
    (root / "nvvm").mkdir(parents=True)
    (root / "nvvm" / "lib64").symlink_to(os.path.dirname(nvvm))
    (root / "nvvm" / "libdevice").symlink_to(os.path.join(os.path.dirname(os.path.dirname(nvvm)), "nvvm", "libdevice"))
    (root / "lib64").symlink_to(os.path.dirname(cudart))  # the runtime's version tells Numba which ccs NVVM has
    return root

@pytest.fixture(scope="module", autouse=True)
def ptx_toolchain(tmp_path_factory):
    """Point Numba at the wheels' NVVM (numba's built-in target finds a toolkit only through CUDA_HOME, conda or
    /usr/local/cuda; NVIDIA's numba-cuda finds wheels itself), and, without a GPU, stand in for the device query.

    The stand-in: when a kernel calls a `cuda.jit(device=True)` function, Numba compiles that function for the
    *current device* (CUDADispatcher.compile_device asks `get_current_device().compute_capability`), which needs
    a driver even inside compile_ptx. The stand-in answers CC, the target every kernel here is compiled for; it
    lives only while this module runs (test_device_functions_ask_the_driver shows why it is needed)."""
    with pytest.MonkeyPatch.context() as mp:
        home = wheel_cuda_home(tmp_path_factory.mktemp("ptx")) if cuda.implementation == "Built-in" else None
        if home is not None: mp.setenv("CUDA_HOME", str(home))
        if not cuda.is_available():
            import numba.cuda.dispatcher
            mp.setattr(numba.cuda.dispatcher, "get_current_device",
                       lambda: pytypes.SimpleNamespace(compute_capability=CC, id=0, name="compute capability 9.0 (stand-in)"))
        yield home

# --- PTX facts ----------------------------------------------------------------------------------------------------
def n_params(sig):
    "PTX parameters of a kernel: an array is passed as meminfo, parent, nitems, itemsize, data, shape, strides."
    return sum(5 + 2 * t.ndim if isinstance(t, types.Array) else 1 for t in sig)

def entry_params(ptx):
    "The .param lines of the one kernel entry in `ptx`."
    head = re.search(r"\.visible \.entry [^(]*\((.*?)\)", ptx, re.DOTALL)
    return re.findall(r"\.param ", head.group(1)) if head else None

def shared_bytes(ptx):
    return sum(int(n) for n in re.findall(r"^\s*(?:\.visible\s+)?\.shared\s.*?\[(\d+)\];", ptx, re.MULTILINE))

def compile_one(name, sig):
    disp = DISPATCHERS[name]
    device = disp.targetoptions.get("device", False)
    try:
        return cuda.compile_ptx(disp.py_func, sig, device=device, cc=CC)[0], device
    except Exception as e:  # the typing or lowering error, named with the kernel and its argument types
        error = f"{type(e).__name__}: {e}"
    pytest.fail(f"{name}{tuple(str(t) for t in sig)} does not compile for sm_{CC[0]}{CC[1]}:\n{error}", pytrace=False)

# --- tests --------------------------------------------------------------------------------------------------------
def test_every_kernel_has_launch_signatures():
    assert len(DISPATCHERS) >= 10, f"expected the chapter's CUDA kernels in {KERNELS_MODULE}, found {sorted(DISPATCHERS)}"
    missing = sorted(set(DISPATCHERS) - set(SIGNATURES))
    stale = sorted(set(SIGNATURES) - set(DISPATCHERS))
    assert not missing, f"CUDA kernels without launch signatures in SIGNATURES (add the types its launch site passes): {missing}"
    assert not stale, (f"SIGNATURES names kernels the package no longer has: {stale} "
                       f"(moved? KERNELS_MODULE is {KERNELS_MODULE!r})")

@pytest.mark.parametrize("name", sorted(DISPATCHERS))
def test_kernel_compiles_to_ptx_for_sm90(name):
    if name not in SIGNATURES: pytest.fail(f"{name}: no launch signature in SIGNATURES", pytrace=False)
    py_name = DISPATCHERS[name].py_func.__name__
    for sig in SIGNATURES[name]:
        ptx, device = compile_one(name, sig)
        where = f"{name}{tuple(str(t) for t in sig)}"
        assert re.search(r"^\.target sm_90\b", ptx, re.MULTILINE), where
        assert re.search(r"^\.address_size 64$", ptx, re.MULTILINE), where
        assert ".extern .func" not in ptx, f"{where}: unresolved calls (libdevice not linked?)"
        mangled = f"{len(py_name)}{py_name}"
        if device:
            assert re.search(rf"^\.visible \.func .*{mangled}", ptx, re.MULTILINE), where
            continue
        entries = re.findall(r"^\.visible \.entry (\S+)\(", ptx, re.MULTILINE)
        assert len(entries) == 1 and mangled in entries[0], (where, entries)
        assert len(entry_params(ptx)) == n_params(sig), where
        if name in SHARED_BYTES:
            assert shared_bytes(ptx) == SHARED_BYTES[name], (where, shared_bytes(ptx))
            for op in ("st.shared.f32", "ld.shared.f32", "bar.sync"): assert op in ptx, (where, op)
        elif is_reduction(name):
            assert shared_bytes(ptx) == expected_shared_bytes(name, sig), (where, shared_bytes(ptx))
            for op in ("st.shared.", "ld.shared.", "bar.sync"): assert op in ptx, (where, op)
        else:
            assert shared_bytes(ptx) == 0 and "bar.sync" not in ptx, f"{where}: unexpected shared memory or barrier"

@pytest.mark.parametrize("name", ["gpu_matmul_tiled", "gpu_matmul_double_buffered"])
def test_tiled_matmuls_accumulate_in_float32_with_fma(name):
    ptx, _ = compile_one(name, TILED_SIG)
    assert ptx.count("fma.rn.f32") >= TILE, "the unrolled inner loop over one tile: one fused multiply-add per step"
    assert not re.search(r"\.f64\b", ptx), "no float64 arithmetic in the float32 tiled kernel"

def test_float32_reductions_stay_in_float32_with_a_barrier_per_tree_step():
    """sum and max of float32: partials in a float32 shared array (REDUCE_THREADS x 4 bytes), no float64 arithmetic,
    barriers between the tree's steps; the tree's loop is not unrolled (its depth depends on the launch)."""
    for op in ("sum", "max"):
        ptx, _ = compile_one(f"GPU_KERNELS[{op}]", reduce_sig(F32))
        assert shared_bytes(ptx) == kernels.REDUCE_THREADS * 4, shared_bytes(ptx)
        assert "st.shared.f32" in ptx and "ld.shared.f32" in ptx, op
        assert not re.search(r"\.f64\b", ptx), f"{op}: float64 arithmetic in the float32 reduction"
        assert ptx.count("bar.sync") >= 2, f"{op}: a barrier after the partials and after each tree step"
    assert "add.f32" in compile_one("GPU_KERNELS[sum]", reduce_sig(F32))[0]

def test_naive_matmul_accumulates_float32_in_float64():
    ptx, _ = compile_one("gpu_matmul_naive", naive_sig(F32))
    assert "cvt.f64.f32" in ptx and "add.f64" in ptx, "products summed in float64"
    assert "cvt.rn.f32.f64" in ptx, "the sum rounded to float32 once, when stored"

def test_nvvm_comes_from_the_dev_wheels(ptx_toolchain):
    if ptx_toolchain is None:
        pytest.skip("nvidia-nvvm wheels not installed or numba-cuda in use: Numba's own toolkit search applies")
    from numba.cuda.cuda_paths import get_cuda_paths
    paths = get_cuda_paths()
    nvvm_dir = os.path.dirname(os.path.realpath(
        importlib.metadata.distribution("nvidia-nvvm").locate_file("nvidia/cu13/lib/libnvvm.so.4")))
    assert paths["nvvm"].by == "CUDA_HOME" and os.path.dirname(os.path.realpath(paths["nvvm"].info)) == nvvm_dir, paths
    assert os.path.realpath(paths["libdevice"].info).startswith(os.path.dirname(nvvm_dir)), paths

def test_device_functions_ask_the_driver():
    "Why the stand-in exists: without it, compiling a kernel that calls a device function needs a GPU."
    if cuda.is_available(): pytest.skip("a GPU is present: the device query has a real answer")
    fresh = cuda.jit(device=True)(kernels.position_of)  # a new dispatcher: nothing compiled for it yet

    def calls_device_function(out, shape, strides):
        out[0] = fresh(0, shape, strides, 0, shape.size)
    sig = (buf(I64), META, META)
    import numba.cuda.dispatcher
    from numba.cuda.cudadrv.error import CudaSupportError
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(numba.cuda.dispatcher, "get_current_device", cuda.get_current_device)  # the real query
        with pytest.raises(CudaSupportError):
            cuda.compile_ptx(calls_device_function, sig, cc=CC)
    ptx, _ = cuda.compile_ptx(calls_device_function, sig, cc=CC)  # with the stand-in (the module's fixture)
    assert re.search(r"^\.target sm_90\b", ptx, re.MULTILINE)

def test_every_op_table_row_has_a_kernel_with_signatures():
    "The generated entries cover the table: a row whose every dtype numpy refuses would have no kernel to test."
    assert {name for name in DISPATCHERS if name.startswith("GPU_KERNELS[")} == {f"GPU_KERNELS[{n}]" for n in nd.OPS}
    assert all(SIGNATURES[f"GPU_KERNELS[{n}]"] for n in nd.OPS), [n for n in nd.OPS if not SIGNATURES[f"GPU_KERNELS[{n}]"]]

def test_guarded_float32_math_is_rounded_once_when_stored():
    "exp's guard compares with a float64 constant: a float32 input passes through float64, and is rounded on the store."
    ptx, _ = compile_one("GPU_KERNELS[exp]", map_sig(F32, F32))
    assert "cvt.f64.f32" in ptx and "cvt.rn.f32.f64" in ptx
    ptx, _ = compile_one("GPU_KERNELS[add]", zip_sig(F32, F32))
    assert not re.search(r"\.f64\b", ptx), "a guard-free row stays in float32"


def test_strided_read_loads_one_float_per_thread_from_global_memory():
    "The index arithmetic is inlined: one ld.global.f32 and one st.global.f32 per element, no call."
    ptx, _ = compile_one("gpu_strided_read", (buf(F32), buf(F32), I64))
    assert "ld.global.f32" in ptx and "st.global.f32" in ptx, "a float32 load and store per element"
    assert "call.uni" not in ptx, "strided_index inlined into the kernel"

def test_two_paths_branches_on_the_thread_index():
    """The two loops of gpu_two_paths stay two loops behind a branch on %tid.x (what makes a warp whose threads
    disagree run both), and each multiply-add is one fused fma.rn.f32."""
    ptx, _ = compile_one("gpu_two_paths", (buf(F32), buf(F32), I64, I64))
    assert "%tid.x" in ptx
    assert re.search(r"@%p\d+ bra", ptx), "a conditional branch"
    assert ptx.count("fma.rn.f32") >= 2, "one fused multiply-add in each loop"
