"""Run one PyTorch program under real torch or under minitorch_nb posing as `torch`; write its `result` as JSON.

    python run_program.py torch|minitorch_nb PROGRAM.py OUT.json

The program is a plain PyTorch script (`import torch`, nothing from minitorch_nb) that leaves a dict `result`
of floats and nested lists of floats. For minitorch_nb, every module of the package is registered under the
name torch uses (`minitorch_nb.nn.functional` as `torch.nn.functional`), so `import torch.nn as nn` finds the
same module objects as `minitorch_nb.nn` instead of loading a second copy.
"""
import json
import runpy
import sys

def pose_as_torch():
    "Make `import torch...` import minitorch_nb's modules."
    import minitorch_nb
    for name, module in list(sys.modules.items()):
        if name == "minitorch_nb" or name.startswith("minitorch_nb."):
            sys.modules["torch" + name[len("minitorch_nb"):]] = module

def to_json(value):
    "Floats and nested lists of floats, from numbers, tuples and numpy arrays."
    if hasattr(value, "tolist"): value = value.tolist()
    if isinstance(value, (list, tuple)): return [to_json(v) for v in value]
    if isinstance(value, dict): return {k: to_json(v) for k, v in value.items()}
    return float(value)

if __name__ == "__main__":
    lib, program, out = sys.argv[1:]
    if lib == "minitorch_nb": pose_as_torch()
    elif lib != "torch": raise SystemExit(f"unknown library {lib!r}: use torch or minitorch_nb")
    namespace = runpy.run_path(program, run_name="__main__")
    with open(out, "w") as f: json.dump(to_json(namespace["result"]), f)
