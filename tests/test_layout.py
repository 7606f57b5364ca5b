"The shape of the package: real files for PyTorch's namespaces, faces, no internals at the top, a full doc index."
import importlib
import shutil
import subprocess
import sys
import types
from pathlib import Path
import pytest
import minitorch_nb as mt

ROOT = Path(__file__).resolve().parent.parent

@pytest.mark.parametrize("name", ["autograd", "ops", "nn", "nn.modules", "nn.functional", "nn.init", "nn.utils",
                                  "optim", "optim.lr_scheduler", "training", "learner", "data", "random", "ndarray",
                                  "cuda"])
def test_every_namespace_is_a_real_file(name):
    module = importlib.import_module(f"minitorch_nb.{name}")
    assert isinstance(module, types.ModuleType) and Path(module.__file__).is_file()
    assert Path(module.__file__).resolve().is_relative_to(ROOT / "minitorch_nb")

def test_no_in_memory_modules():
    for name, module in list(sys.modules.items()):
        if name.startswith("minitorch_nb"): assert getattr(module, "__file__", None), name
    found = subprocess.run(["git", "grep", "-n", "submodule(", "--", "minitorch_nb", "nbs"], cwd=ROOT,
                           capture_output=True, text=True).stdout
    assert "def submodule" not in found and "= submodule(" not in found

def test_top_level_has_no_internals_and_no_autograd_functions():
    for name in ("extends", "submodule", "as_array", "run_backward", "namespace", "device_of", "T", "to", "mT",
                 "AccumulateGrad", "unbroadcast", "register_device", "ToDevice", "Add", "Exp"):
        assert not hasattr(mt, name), name
    functions = [n for n, v in vars(mt).items() if isinstance(v, type) and issubclass(v, mt.Function) and v is not mt.Function]
    assert functions == []
    assert mt.nn.ReLU.__mro__[1] is mt.nn.Module and mt.ops.ReLU.__mro__[1] is mt.Function  # one name per idea

def test_function_forms_are_the_methods():
    x = mt.tensor([[-1.0, 2.0], [0.5, -3.0]])
    assert mt.max.__wrapped__ is mt.Tensor.max and mt.abs.__wrapped__ is mt.Tensor.abs  # a check over the method
    assert mt.relu is mt.nn.functional.relu  # torch.relu, like F.relu, refuses a number
    assert mt.clamp(x, -1, 1).tolist() == x.clamp(-1, 1).tolist() and mt.max(x).item() == 2.0
    assert mt.ops.max is max and mt.autograd.sum is sum  # the modules keep Python's builtins

def test_doc_index_lists_patched_methods_by_class_and_chapter_00():
    from minitorch_nb._modidx import d
    syms = d["syms"]
    assert "minitorch_nb.autograd.Tensor.sum" in syms["minitorch_nb.autograd"]
    assert "minitorch_nb.autograd.Tensor" in syms["minitorch_nb.autograd"]
    assert "minitorch_nb.nn.modules.Module.parameters" in syms["minitorch_nb.nn.modules"]
    assert "minitorch_nb.ops.Tensor.max" in syms["minitorch_nb.ops"]
    every = [k for mod in syms.values() for k in mod]
    for alias in ("._max", "._parameters_", "._modules_", "._sum"): assert not any(k.endswith(alias) for k in every)

def test_chapter_checker_catches_a_replaced_method_and_a_hand_written_module(tmp_path):
    "tools/check_chapters.py fails when a later chapter replaces an earlier method, or a face holds code."
    shutil.copytree(ROOT / "minitorch_nb", tmp_path / "minitorch_nb", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "nbs", tmp_path / "nbs", ignore=shutil.ignore_patterns("*.ipynb_checkpoints"))
    (tmp_path / "tools").mkdir()
    shutil.copy(ROOT / "tools" / "check_chapters.py", tmp_path / "tools")
    run = lambda: subprocess.run([sys.executable, "tools/check_chapters.py"], cwd=tmp_path, capture_output=True, text=True)
    assert run().returncode == 0, run().stdout
    training = tmp_path / "minitorch_nb" / "training.py"
    original = training.read_text()
    training.write_text(original + "\n@patch\ndef sum(self: Tensor, dim=None): return 0\n")
    out = run()
    assert out.returncode == 1 and "importing training (chapter 03) replaced autograd.Tensor.sum" in out.stdout
    training.write_text(original)
    (tmp_path / "minitorch_nb" / "nn" / "init.py").write_text('"A face."\nfrom .modules import uniform_\nx = 1\n')
    out = run()
    assert out.returncode == 1 and "nn/init.py is neither exported from a notebook nor a face" in out.stdout

def test_thread_environment_is_set_in_one_place_and_yields_to_the_user():
    code = ("import os; os.environ['OMP_WAIT_POLICY'] = 'ACTIVE'; import minitorch_nb as mt; "
            "print(os.environ['OMP_WAIT_POLICY'], os.environ['GOMP_SPINCOUNT'], os.environ['OPENBLAS_THREAD_TIMEOUT'])")
    env = {k: v for k, v in __import__("os").environ.items() if k not in mt.THREAD_ENV}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["ACTIVE", "30000", "4"]
    env["MINITORCH_NB_THREAD_ENV"] = "0"
    code = "import os, minitorch_nb; print('GOMP_SPINCOUNT' in os.environ, 'OPENBLAS_THREAD_TIMEOUT' in os.environ)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
    setters = subprocess.run(["git", "grep", "-n", "-E", r"environ(\.setdefault\(|\[)\"(GOMP_SPINCOUNT|OMP_WAIT_POLICY|"
                              r"OPENBLAS_THREAD_TIMEOUT)\"", "--", "minitorch_nb", "bench"], cwd=ROOT,
                             capture_output=True, text=True).stdout
    assert setters == ""  # the package and the benchmarks leave it to THREAD_ENV

FAULT_PROBE = """
import resource, minitorch_nb as mt, numpy as np
def step(): return sum(float(a[0]) for a in [np.ones(1 << 20, np.float32) for _ in range(40)])  # 160 MiB
step()
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(3): step()
print(mt.backends.cpu.MALLOC_KEPT, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / 3)
"""

@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_freed_memory_is_kept_unless_the_user_says_otherwise():
    "Chapter 06a: the package keeps freed blocks mapped (no page faults when a step allocates them again)."
    import os
    base = {k: v for k, v in os.environ.items()
            if k not in ("MINITORCH_NB_MALLOC", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES")}
    def probe(**extra):
        out = subprocess.run([sys.executable, "-c", FAULT_PROBE], env={**base, **extra}, capture_output=True,
                             text=True, check=True).stdout.split()
        return out[0] == "True", float(out[1])
    (kept, faults_kept), (off, faults_off) = probe(), probe(MINITORCH_NB_MALLOC="0")
    assert not off and not probe(MALLOC_TRIM_THRESHOLD_="131072")[0]  # opted out, or the user's own setting
    if kept:  # glibc
        assert faults_off > 1000 and faults_kept < 0.05 * faults_off, (faults_kept, faults_off)
