"""Chapter 06c's warp kernels as PTX for an H100/H200 (sm_90), compiled without a GPU: Numba's CUDA target
with NVVM and libdevice from the `nvidia-nvvm` and `nvidia-cuda-runtime` wheels (as tests/test_cuda_ptx.py
compiles every kernel). Prints the instructions that carry the two lessons, the divergent branch of
gpu_two_paths and the global load of gpu_strided_read, and, last, one JSON line of facts (the chapter and
tests/test_cuda_warp_counts.py read it). Run in a child process: it points Numba at the wheels' NVVM and
stands in for the absent GPU's compute capability, which must not leak into the caller."""
import importlib.metadata
import json
import os
import re
import struct
import sys
import tempfile
import types as pytypes

CC = (9, 0)


def wheel_cuda_home(root):
    """A CUDA_HOME laid out as Numba's CUDA target looks for it (nvvm/lib64, nvvm/libdevice, lib64), made of
    links into the NVIDIA wheels; exits with a message if they are not installed."""
    try:
        dist = importlib.metadata.distribution
        nvvm = os.path.realpath(dist("nvidia-nvvm").locate_file("nvidia/cu13/lib/libnvvm.so.4"))
        cudart = os.path.realpath(dist("nvidia-cuda-runtime").locate_file("nvidia/cu13/lib/libcudart.so.13"))
    except importlib.metadata.PackageNotFoundError as e:
        sys.exit(f"cuda_ptx_warps: {e.name} is not installed (pip install -e '.[book]')")
    os.makedirs(os.path.join(root, "nvvm"))
    os.symlink(os.path.dirname(nvvm), os.path.join(root, "nvvm", "lib64"))
    os.symlink(os.path.join(os.path.dirname(os.path.dirname(nvvm)), "nvvm", "libdevice"),
               os.path.join(root, "nvvm", "libdevice"))
    os.symlink(os.path.dirname(cudart), os.path.join(root, "lib64"))
    return root


os.environ["CUDA_HOME"] = wheel_cuda_home(os.path.join(tempfile.mkdtemp(), "cuda_home"))
import numba.cuda.dispatcher  # noqa: E402
from numba import cuda, types  # noqa: E402
assert not numba.config.ENABLE_CUDASIM, "run without NUMBA_ENABLE_CUDASIM: the simulator has no compiler"
if not cuda.is_available():  # a kernel's device functions are compiled for the current device's CC
    numba.cuda.dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(
        compute_capability=CC, id=0, name="compute capability 9.0 (stand-in)")
import minitorch_nb.backends.cuda as bc  # noqa: E402

F32 = types.Array(types.float32, 1, "C")


def instructions(ptx):
    "The PTX's instruction and label lines, stripped, without comments, declarations and blank lines."
    lines = [re.sub(r"\s+", " ", l.split("//")[0]).strip() for l in ptx.splitlines()]
    return [l for l in lines if l and not l.startswith((".", "{", "}", ")", "("))]


def fma_constants(line):
    "(a, b) of `fma.rn.f32 d, x, a, b` with float32 immediates 0fXXXXXXXX, as numbers."
    return tuple(struct.unpack(">f", bytes.fromhex(h))[0] for h in re.findall(r"0f([0-9A-F]{8})", line))


def branch_of_two_paths(ptx):
    "The load, the predicated branch after it, and the first multiply-add on each side of it."
    code = instructions(ptx)
    load = next(i for i, l in enumerate(code) if l.startswith("ld.global.f32"))
    branch = next(i for i in range(load, len(code)) if re.match(r"@%p\d+ bra\b", code[i]))
    pred = code[branch].split()[0][1:]
    setp = next(i for i in range(branch, load, -1) if re.match(rf"setp\.\S+\s+{re.escape(pred)},", code[i]))
    target = code[branch].split()[-1].rstrip(";")
    fall = next(l for l in code[branch + 1:] if l.startswith("fma.rn.f32"))
    jump = next(l for l in code[code.index(target + ":"):] if l.startswith("fma.rn.f32"))
    return {"load": code[load], "setp": code[setp], "branch": code[branch], "target": target,
            "fall_through": fall, "taken": jump}


two_paths = cuda.compile_ptx(bc.gpu_two_paths.py_func, (F32, F32, types.int64, types.int64), cc=CC)[0]
strided = cuda.compile_ptx(bc.gpu_strided_read.py_func, (F32, F32, types.int64), cc=CC)[0]
assert re.search(r"^\.target sm_90\b", two_paths, re.M) and re.search(r"^\.target sm_90\b", strided, re.M)

b = branch_of_two_paths(two_paths)
code = instructions(two_paths)
conditional = [l for l in code if re.match(r"@!?%p\d+ bra\b", l)]
uniform = [l for l in code if l.startswith("bra.uni")]
print(f"gpu_two_paths, sm_90: {len(code)} instructions and labels; the branch after the load of x:")
(a1, b1), (a0, b0) = fma_constants(b["fall_through"]), fma_constants(b["taken"])
print(f"  {b['load']:<48s} x = a[i]")
print(f"  {b['setp']:<48s} one predicate bit per thread")
print(f"  {b['branch']:<48s} the threads whose bit is set jump")
print(f"  {b['fall_through']:<48s} the others: x = x * {a1:.3f} + ({b1})")
print(f"  {b['target'] + ':':<48s}")
print(f"  {b['taken']:<48s} the jumpers: x = x * {a0:.3f} + {b0}")
print(f"  in the whole kernel: {len(conditional)} predicated branches `@%p bra`, {len(uniform)} `bra.uni`\n"
      "  (`.uni`: a jump the compiler knows every thread of the warp takes together)")

s_code = instructions(strided)
loads = [l for l in s_code if l.startswith("ld.global")]
stores = [l for l in s_code if l.startswith("st.global")]
divides = [l for l in s_code if re.match(r"(div|rem)\.[su](32|64)\b", l)]
first = s_code.index(loads[0])
kinds = " or ".join(sorted({l.split()[0] for l in loads + stores}))
print(f"gpu_strided_read, sm_90: {len(loads)} global loads and {len(stores)} global stores, each {kinds}\n"
      "  (copies of the loop body: the compiler unrolls and specialises the grid-stride loop);\n"
      f"  {len(divides)} integer divides and remainders compute the index. One load, and its address:")
for l in s_code[first - 4:first + 1]: print(f"  {l}")

facts = {"two_paths": {"branch": b["branch"], "fall_through": fma_constants(b["fall_through"]),
                       "taken": fma_constants(b["taken"]), "conditional": len(conditional),
                       "uniform": len(uniform)},
         "strided": {"loads": len(loads), "stores": len(stores),
                     "load_kinds": sorted({l.split()[0] for l in loads}), "divides": len(divides)}}
print(json.dumps(facts))
