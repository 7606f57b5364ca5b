#!/usr/bin/env python
"""Cells that break the site's nbdev processing, found without running anything.

To render `show_doc`, nbdev (nbdev_docs, and tools/render_site.py's first step) runs only some cells of a
notebook, in order, in one fresh shell: exported cells, `show_doc` cells and *every cell that contains an
import*. A cell of that kind that reads a name only a skipped cell defines (`rng = ...` in a cell without an
import, say) fails there with a NameError, although the notebook runs top to bottom, and then no page of the
site renders. This reads each such cell's top-level statements, and the bodies of functions they call, and
lists the names nothing before them binds. Keep imports in cells of their own (nbdev's FAQ).

Usage: .venv/bin/python tools/docs_cells.py nbs/*.ipynb      (prints one line per problem; exit 1 if any)
"""
import ast
import builtins
import json
import re
import sys
from pathlib import Path

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SHELL_NAMES = {"show_doc", "display", "get_ipython", "In", "Out"}  # what nbdev's shell provides


def _imported(node):
    return {(a.asname or a.name).split(".")[0] for a in node.names}


def statement_names(node):
    "(names read, names bound, functions called by name) when a statement runs; def and lambda bodies run later."
    loads, stores, calls = set(), set(), set()

    def visit(n):
        if isinstance(n, _DEFS + (ast.Lambda,)):
            if not isinstance(n, ast.Lambda): stores.add(n.name)
            for d in getattr(n, "decorator_list", []) + n.args.defaults + [d for d in n.args.kw_defaults if d]:
                visit(d)
            return
        if isinstance(n, ast.ClassDef): stores.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)): stores.update(_imported(n))
        elif isinstance(n, ast.Name): (loads if isinstance(n.ctx, ast.Load) else stores).add(n.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name): calls.add(n.func.id)
        for c in ast.iter_child_nodes(n): visit(c)

    visit(node)
    return loads, stores, calls


def body_needs(fn):
    "Global names a function's body reads when it runs (parameters, local names and nested bodies left out)."
    loads, stores = set(), set()

    def visit(n):
        if isinstance(n, _DEFS + (ast.ClassDef,)): stores.add(n.name)
        if isinstance(n, _DEFS + (ast.Lambda,)): return
        if isinstance(n, ast.Name): (loads if isinstance(n.ctx, ast.Load) else stores).add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)): stores.update(_imported(n))
        elif isinstance(n, ast.arg): stores.add(n.arg)
        for c in ast.iter_child_nodes(n): visit(c)

    for stmt in fn.body: visit(stmt)
    a = fn.args
    return loads - stores - {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x}


def _directives(src):
    found = {}
    for line in src.splitlines():
        m = re.match(r"^\s*#\|\s*([\w-]+:?)\s*(.*)$", line)
        if m: found[m.group(1)] = m.group(2)
        elif line.strip() and not line.lstrip().startswith("#"): break
    return found


def docs_cells(nb_path):
    "(index, source, tree) of the code cells nbdev's doc processing runs, as nbdev.processors._do_eval picks them."
    cells, has_docs = [], False
    for i, c in enumerate(json.loads(Path(nb_path).read_text(encoding="utf-8"))["cells"]):
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        if c["cell_type"] != "code" or not src.strip() or "nbdev_export()" in src: continue
        try: tree = ast.parse("\n".join(l for l in src.splitlines() if not l.lstrip().startswith(("%", "!"))))
        except SyntaxError: continue
        d = _directives(src)
        if d.get("eval:", "").lower() == "false": continue
        documented = bool(d.keys() & {"export", "exports", "exporti", "exec_doc"}) or any(
            isinstance(t, ast.Expr) and isinstance(t.value, ast.Call)
            and getattr(t.value.func, "id", None) == "show_doc"
            for t in tree.body)
        has_docs |= documented
        if documented or any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(tree)):
            cells.append((i, src, tree))
    return cells if has_docs else []  # nbdev runs nothing in a notebook without exports or show_doc


def unbound_names(nb_path):
    "'name cell N: [names] in <first line>' for each statement of a docs cell that reads a name nothing bound."
    known, needs, problems = set(dir(builtins)) | _SHELL_NAMES, {}, []
    for i, src, tree in docs_cells(nb_path):
        for stmt in tree.body:
            loads, stores, calls = statement_names(stmt)
            todo = list(calls & needs.keys())
            while todo:  # calling a function defined earlier runs its body now
                for n in needs[todo.pop()] - loads:
                    loads.add(n)
                    if n in needs: todo.append(n)
            for fn in ast.walk(stmt):
                if isinstance(fn, _DEFS): needs[fn.name] = body_needs(fn)
            missing = sorted(loads - known - stores)
            if missing: problems.append(f"{Path(nb_path).name} cell {i}: {missing} in {src.splitlines()[0][:70]!r}")
            known |= stores
    return problems


if __name__ == "__main__":
    found = [p for nb in sys.argv[1:] for p in unbound_names(nb)]
    for p in found: print(p)
    sys.exit(1 if found else 0)
