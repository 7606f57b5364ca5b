"""Check the chapter rules of the book.

1. A chapter imports only earlier chapters (in its exported module and in its notebook's code cells).
2. Importing a later chapter never replaces an attribute that an earlier chapter defined
   (a later chapter may add methods to an earlier class, not replace them).
"""
import ast
import importlib
import json
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG, NBS = ROOT / "minitorch_nb", ROOT / "nbs"

def module_chapters():
    "Map each exported module name to the chapter number of the notebook it comes from."
    chapters = {}
    for py in sorted(PKG.glob("*.py")):
        m = re.search(r"File to edit: \.\./nbs/(\d\d)_[^ ]*\.ipynb", py.read_text()[:400])
        if m: chapters[py.stem] = int(m.group(1))
    return chapters

def imported_modules(source):
    "Names of minitorch_nb modules imported by Python `source` (absolute or relative imports)."
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 1 or mod.startswith("minitorch_nb"):
                parts = mod.split(".")[1:] if mod.startswith("minitorch_nb") else mod.split(".")
                if parts and parts[0]: found.add(parts[0])
                else: found.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("minitorch_nb."): found.add(a.name.split(".")[1])
    return found

def notebook_source(nb):
    "The code cells of a notebook, magics and shell lines removed."
    cells = json.loads(nb.read_text())["cells"]
    lines = []
    for c in cells:
        if c["cell_type"] != "code": continue
        for line in "".join(c["source"]).splitlines():
            lines.append("" if line.lstrip().startswith(("%", "!")) else line)
    return "\n".join(lines)

def check_imports(chapters):
    "Errors for every import of a later chapter."
    errors = []
    sources = [(f"minitorch_nb/{m}.py", n, (PKG / f"{m}.py").read_text()) for m, n in chapters.items()]
    for nb in sorted(NBS.glob("[0-9][0-9]_*.ipynb")):
        sources.append((f"nbs/{nb.name}", int(nb.name[:2]), notebook_source(nb)))
    for where, n, src in sources:
        for mod in imported_modules(src):
            if chapters.get(mod, -1) > n:
                errors.append(f"{where} (chapter {n:02d}) imports {mod} from later chapter {chapters[mod]:02d}")
    return errors

def snapshot(modules):
    "Identity of every attribute of every loaded chapter module and of the classes it defines."
    snap = {}
    for name, mod in modules.items():
        for attr, value in vars(mod).items():
            snap[(name, attr)] = id(value)
            if isinstance(value, type) and value.__module__ == mod.__name__:
                for cattr, cvalue in vars(value).items():
                    snap[(name, f"{attr}.{cattr}")] = id(cvalue)
    return snap

def check_no_replacement(chapters):
    "Import chapters in order (without the package __init__) and report replaced attributes."
    stub = types.ModuleType("minitorch_nb")
    stub.__path__ = [str(PKG)]
    sys.modules["minitorch_nb"] = stub
    errors, loaded = [], {}
    for name in sorted(chapters, key=lambda m: (chapters[m], m)):
        before = snapshot(loaded)
        loaded[name] = importlib.import_module(f"minitorch_nb.{name}")
        after = snapshot({k: v for k, v in loaded.items() if k != name})
        for key, ident in before.items():
            if key in after and after[key] != ident and not key[1].startswith("__"):
                errors.append(f"importing {name} (chapter {chapters[name]:02d}) replaced {key[0]}.{key[1]}")
    return errors

if __name__ == "__main__":
    chapters = module_chapters()
    errors = check_imports(chapters) + check_no_replacement(chapters)
    for e in errors: print("chapter rule broken:", e)
    if errors: sys.exit(1)
    print(f"chapter rules hold for {len(chapters)} modules")
