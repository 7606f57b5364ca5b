"""Check the chapter rules of the book and the shape of the package.

1. Every file of the package is either exported by nbdev from one notebook (its header names the notebook) or a
   hand-written *face*: a docstring and imports that re-export what the chapters' files define, as
   `nn/functional.py` does. Only the package's own `__init__.py` may hold other hand-written code.
2. A chapter imports only earlier chapters (in its exported module and in its notebook's code cells). A name it
   takes from a face counts as the chapter that defines the name: `from minitorch_nb import nn` in chapter 03
   may read `nn.Linear` (chapter 02) although a later chapter adds `nn.BatchNorm2d` to the same face.
3. Importing a later chapter never replaces an attribute that an earlier chapter defined
   (a later chapter may add methods to an earlier class, not replace them).

Chapters are numbered notebooks `NN_name.ipynb`, or sub-chapters `NNa_name.ipynb`, ordered 06a < 06b < 07.
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
HEADER = re.compile(r"File to edit: (?:\.\./)+nbs/(\d\d[a-z]?)_[^ ]*\.ipynb")
CHAPTER_NB = "[0-9][0-9]*_*.ipynb"

def module_name(py):
    "minitorch_nb/nn/modules.py -> 'nn.modules'; minitorch_nb/nn/__init__.py -> 'nn'."
    parts = py.relative_to(PKG).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

def package_files():
    "Every .py file of the package except nbdev's doc index."
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts and p.name != "_modidx.py")

def chapter_key(chapter):
    "'06a' -> (6, 'a'), '07' -> (7, ''): the reading order."
    return int(chapter[:2]), chapter[2:]

def resolve(module, level, here):
    "The absolute dotted name (without 'minitorch_nb') of an import written in module `here`."
    if level == 0:
        return module.split(".", 1)[1] if module.startswith("minitorch_nb.") else ("" if module == "minitorch_nb" else None)
    base = here.split(".") if here else []
    is_package = (PKG / Path(*base) / "__init__.py").exists() if base else True
    base = base if is_package else base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))

def attribute_chain(node):
    "['nn', 'functional', 'relu'] for the expression `nn.functional.relu`; None if it does not start at a name."
    parts = []
    while isinstance(node, ast.Attribute): parts.append(node.attr); node = node.value
    return [node.id] + parts[::-1] if isinstance(node, ast.Name) else None

def imported_modules(source, here="", face_names=None):
    """Dotted names of minitorch_nb modules imported by Python `source` (a module of the package, or a notebook).
    A name taken from a face counts as the module that defines it; a face imported as a module (`from
    minitorch_nb import nn`) counts as the modules behind the attributes the source reads from it (`nn.Linear`)."""
    face_names = face_names or {}
    tree = ast.parse(source)
    found, aliases = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = resolve(node.module or "", node.level, here)
            if mod is None: continue
            for a in node.names:  # `from pkg import name` may import the submodule pkg.name
                sub = f"{mod}.{a.name}" if mod else a.name
                if sub in face_names: aliases[a.asname or a.name] = sub
                elif known_module(sub): found.add(sub)
                else: found.add(face_names.get(mod, {}).get(a.name, mod))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if not a.name.startswith("minitorch_nb."): continue
                name = a.name.split(".", 1)[1]
                if name in face_names and a.asname: aliases[a.asname] = name
                else: found.add(name)
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):  # what the source reads from the faces it imported as modules
        if not isinstance(node, ast.Attribute) or id(node) in inner: continue
        parts = attribute_chain(node)
        if not parts or parts[0] not in aliases: continue
        face, rest = aliases[parts[0]], parts[1:]
        while len(rest) > 1 and f"{face}.{rest[0]}" in face_names:  # nn.functional.relu: a face in a face
            face, rest = f"{face}.{rest[0]}", rest[1:]
        if rest[0].startswith("__"): continue  # __name__, __file__: every module has them
        found.add(face_names[face].get(rest[0], face if not known_module(f"{face}.{rest[0]}")
                                       else f"{face}.{rest[0]}"))
    return {m for m in found if m}

def face_exports(faces):
    "{face: {name: module}}: for every name a face re-exports, the module that defines it (or that it is)."
    out = {}
    for face, src in faces.items():
        names = out.setdefault(face, {})
        for node in ast.parse(src).body:
            if not isinstance(node, ast.ImportFrom): continue
            mod = resolve(node.module or "", node.level, face)
            for a in node.names:
                sub = f"{mod}.{a.name}" if mod else a.name
                names[a.asname or a.name] = sub if known_module(sub) else mod
    return out

def known_module(name):
    path = PKG / Path(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()

def is_face(tree):
    """A face holds a docstring and imports, nothing else; a program's face (`python -m
    minitorch_nb.distributed.run`) may end with `if __name__ == "__main__": sys.exit(main())`."""
    body = tree.body[1:] if tree.body and isinstance(tree.body[0], ast.Expr) else tree.body
    if body and is_main_guard(body[-1]): body = body[:-1]
    return all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in body)

def is_main_guard(node):
    "`if __name__ == \"__main__\":` around a single call of an imported function (possibly inside sys.exit)."
    return (isinstance(node, ast.If) and not node.orelse and len(node.body) == 1
            and ast.unparse(node.test) in ("__name__ == '__main__'", '__name__ == "__main__"')
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Call))

def classify():
    "({module: chapter} of exported files, {face: source}, errors)."
    chapters, faces, errors = {}, {}, []
    for py in package_files():
        src, name = py.read_text(), module_name(py)
        m = HEADER.search(src[:400])
        if m: chapters[name] = m.group(1)
        elif py == PKG / "__init__.py": continue
        elif is_face(ast.parse(src)): faces[name] = src
        else: errors.append(f"minitorch_nb/{py.relative_to(PKG)} is neither exported from a notebook nor a face "
                            "(a docstring and imports only)")
    return chapters, faces, errors

def face_chapters(chapters, faces):
    "A face counts as the latest chapter it re-exports from (faces may import faces)."
    resolved = dict(chapters)
    for _ in range(len(faces) + 1):
        for name, src in faces.items():
            deps = [resolved[m] for m in imported_modules(src, name) if m in resolved]
            if deps: resolved[name] = max(deps, key=chapter_key)
    return resolved

def notebook_source(nb):
    "The code cells of a notebook, magics and shell lines removed."
    cells = json.loads(nb.read_text())["cells"]
    lines = []
    for c in cells:
        if c["cell_type"] != "code": continue
        for line in "".join(c["source"]).splitlines():
            lines.append("" if line.lstrip().startswith(("%", "!")) else line)
    return "\n".join(lines)

def check_imports(chapters, resolved, face_names=None):
    "Errors for every import of a later chapter."
    errors, sources = [], []
    for name, ch in chapters.items():
        py = PKG / Path(*name.split(".")).with_suffix(".py")
        if not py.exists(): py = PKG / Path(*name.split(".")) / "__init__.py"
        sources.append((f"minitorch_nb/{py.relative_to(PKG)}", ch, name, py.read_text()))
    for nb in sorted(NBS.glob(CHAPTER_NB)):
        sources.append((f"nbs/{nb.name}", nb.name.split("_")[0], "", notebook_source(nb)))
    for where, ch, here, src in sources:
        for mod in imported_modules(src, here, face_names):
            if mod in resolved and chapter_key(resolved[mod]) > chapter_key(ch):
                errors.append(f"{where} (chapter {ch}) imports {mod} from later chapter {resolved[mod]}")
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
    "Import chapters in order (packages stubbed: no __init__ or face runs); report replaced attributes."
    for init in sorted(PKG.rglob("__init__.py")):  # every package as a bare stub: no face runs, so importing
        if "__pycache__" in init.parts: continue   # a chapter loads that chapter and what it imports, no more
        name = ".".join(("minitorch_nb",) + init.parent.relative_to(PKG).parts)
        stub = types.ModuleType(name)
        stub.__path__ = [str(init.parent)]
        sys.modules[name] = stub
    errors, loaded = [], {}
    for name in sorted(chapters, key=lambda m: (chapter_key(chapters[m]), m)):
        before = snapshot(loaded)
        loaded[name] = importlib.import_module(f"minitorch_nb.{name}")
        after = snapshot({k: v for k, v in loaded.items() if k != name})
        for key, ident in before.items():
            if key in after and after[key] != ident and not key[1].startswith("__"):
                errors.append(f"importing {name} (chapter {chapters[name]}) replaced {key[0]}.{key[1]}")
    return errors

if __name__ == "__main__":
    chapters, faces, errors = classify()
    errors += check_imports(chapters, face_chapters(chapters, faces), face_exports(faces)) + check_no_replacement(chapters)
    for e in errors: print("chapter rule broken:", e)
    if errors: sys.exit(1)
    print(f"chapter rules hold for {len(chapters)} exported modules and {len(faces)} faces")
