"""The book stands alone: no pointers to material the reader does not have.

Scans every notebook of the book (markdown, code with its comments, and saved outputs) for internal line
references ("S1:7118"), checklist IDs ("(C5)", "Part 2 of the checklist", "SEED..."), unnamed sources ("the
essay", "the textbook's example", "the source says", "one source of this book") and pointers to chapters
that do not exist ("chapter 07" while there is no nbs/07_*.ipynb). Cite real works instead: `[@key]` with
the key in nbs/references.bib.
"""
import json
import re
import sys
from pathlib import Path

import pytest

NBS = Path(__file__).resolve().parent.parent / "nbs"
_re_chapter_nb = re.compile(r"^(\d\d)([a-z]?)_.+\.ipynb$")

# (name, pattern); each pattern is case-sensitive unless it carries (?i)
LEAKS = [
    ("line reference", re.compile(r"\b[SP]\d+:\d+")),
    ("checklist ID", re.compile(r"(?<![\w)\]])\((?:[A-I]\d{1,2})(?:\s*(?:[,/–-]|and|to|…|\.\.\.)\s*[A-I]?\d{1,2})*\)")),
    ("checklist", re.compile(r"(?i)\bchecklist\b")),
    ("SEED", re.compile(r"\bSEED")),
    ("the essay", re.compile(r"(?i)\bthe essay")),
    # any textbook but the one named: "the textbook formula" reads as a pointer too; cite the formula's source
    ("the textbook", re.compile(r"(?i)(?<!Systems\* )(?<!Systems )\btextbook")),
    # "the source code of ...", "the source of a package" are fine; "the source's example", "the source says" not
    ("the source", re.compile(r"(?i)\bthe source\b(?!\s+(?:code|of|file|files|notebooks?|tree|array|buffer|and|to|is the notebook))")),
    ("a source of this book", re.compile(r"(?i)\b(?:one|a|another|the) sources? (?:of|for) this book")),
    ("this book's sources", re.compile(r"(?i)\bthis book's sources?\b")),
]
_re_chapter_ref = re.compile(
    r"\b[Cc]hapters?\s+(\d\d[a-z]?(?:\s*(?:-|–|,|and|or|to)\s*\d\d[a-z]?)*)")


def book_notebooks():
    return [NBS / "index.ipynb"] + sorted(p for p in NBS.glob("*.ipynb") if _re_chapter_nb.match(p.name))


def existing_chapters():
    "Chapter numbers with a notebook: '06' for 06a_..., and '06a' itself."
    have = set()
    for p in book_notebooks():
        m = _re_chapter_nb.match(p.name)
        if m: have |= {m.group(1), m.group(1) + m.group(2)}
    return have


def _text(x):
    return "".join(x) if isinstance(x, list) else (x or "")


def cell_texts(cell):
    "The text a reader sees of a cell: its source, and for code cells its saved outputs."
    yield "source", _text(cell.get("source"))
    for o in cell.get("outputs") or []:
        if "text" in o: yield "output", _text(o["text"])
        for mime, v in (o.get("data") or {}).items():
            if mime.startswith("text/"): yield "output", _text(v)
        if o.get("output_type") == "error": yield "output", "\n".join(o.get("traceback") or [])


def find_leaks(nb_path, have=None):
    "List of 'file cell N (kind): what: context' for every leaked reference in a notebook."
    have = existing_chapters() if have is None else have
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    hits = []
    for i, cell in enumerate(nb.get("cells", [])):
        for where, t in cell_texts(cell):
            found = [(name, m) for name, rx in LEAKS for m in rx.finditer(t)]
            for m in _re_chapter_ref.finditer(t):
                missing = [n for n in re.findall(r"\d\d[a-z]?", m.group(1)) if n not in have]
                if missing: found.append((f"chapter {', '.join(missing)} does not exist", m))
            for name, m in found:
                ctx = t[max(0, m.start() - 50):m.end() + 30].replace("\n", " ")
                hits.append(f"{nb_path.name} cell {i} ({cell.get('cell_type')} {where}): {name}: ...{ctx}...")
    return hits


def test_patterns_catch_leaks(tmp_path):
    "The scanner itself: leaks are found, ordinary words are not."
    bad = ["As S1:7118-7122 shows", "Momentum (C5)", "items (C5, C14)", "(Part 2 of the checklist)",
           "see SEED_CHECKLIST.md", "the essay's worked example", "The textbook's 2-2-1 network",
           "the source's running example", "as given by the source.", "One source of this book states",
           "a widely read textbook", "The textbook formula overflows", "That textbook's listing",
           "the running product's textbook gradient", "Chapter 07 turns convolution", "chapters 05-09", "chapter 06d"]
    good = ["the source code of the game", "the source of a Python package", "seed=0", "manual_seed(seed)",
            "(e1)", "chapter 05's NDArray", "chapters 00-01", "chapter 06", "the *Machine Learning Systems* textbook [@reddi2024mlsys]",
            "(A + B)", "f(C5)"]
    cells = [{"cell_type": "markdown", "source": s} for s in bad + good]
    p = tmp_path / "x.ipynb"
    p.write_text(json.dumps({"cells": cells}))
    hits = find_leaks(p, have={"00", "01", "05", "06", "06a"})
    flagged = {int(re.search(r"cell (\d+)", h).group(1)) for h in hits}
    assert flagged == set(range(len(bad))), hits


@pytest.mark.parametrize("nb", book_notebooks(), ids=lambda p: p.stem)
def test_no_leaked_references(nb):
    hits = find_leaks(nb)
    assert not hits, f"{len(hits)} pointer(s) to material the reader does not have:\n" + "\n".join(hits)


_re_machine_path = re.compile(r"(?<![\w.<])(?:/tmp/|/home/|/root/|/work/|/Users/|/private/var/|[A-Z]:\\\\Users\\\\)[^\s\"']*"
                              r"|/[^\s\"']*/site-packages/")


@pytest.mark.parametrize("nb", book_notebooks(), ids=lambda p: p.stem)
def test_outputs_have_no_machine_paths(nb):
    "Saved outputs are the same on every machine (tools/execute_nbs.py normalises paths when it runs a chapter)."
    cells = json.loads(nb.read_text(encoding="utf-8")).get("cells", [])
    hits = [f"{nb.name} cell {i}: {m.group(0)[:100]}" for i, c in enumerate(cells)
            for where, t in cell_texts(c) if where == "output" for m in _re_machine_path.finditer(t)]
    assert not hits, "outputs with paths of the machine that ran them:\n" + "\n".join(hits)


def test_citations_resolve():
    "Every [@key] of a markdown cell names an entry of nbs/references.bib (the site renders them with citeproc)."
    keys = set(re.findall(r"^@\w+\{([^,\s]+),", (NBS / "references.bib").read_text(encoding="utf-8"), re.M))
    missing = []
    for nb in book_notebooks():
        for i, c in enumerate(json.loads(nb.read_text(encoding="utf-8")).get("cells", [])):
            if c.get("cell_type") != "markdown": continue
            text = re.sub(r"`[^`]*`", "", _text(c.get("source")))
            for group in re.findall(r"\[([^\[\]]*@[^\[\]]*)\]", text):
                missing += [f"{nb.name} cell {i}: @{k}" for k in re.findall(r"-?@([\w:.-]*\w)", group) if k not in keys]
    assert not missing, "citation keys not in nbs/references.bib:\n" + "\n".join(missing)


sys.path.insert(0, str(NBS.parent / "tools"))
import code_width  # noqa: E402  (the rule shared with tools/check_site.py --strict-code)


def test_code_width_finds_long_lines_and_knows_the_checked_chapters(tmp_path):
    "The checker itself: a line of 101 columns is caught, one of 100 is not; sub-chapters follow their number."
    cells = [{"cell_type": "code", "source": ["x = 1\n", "y = '" + "a" * 94 + "'\n", "z = '" + "b" * 95 + "'"]},
             {"cell_type": "markdown", "source": "w" * 300}]
    p = tmp_path / "99_x.ipynb"
    p.write_text(json.dumps({"cells": cells}))
    hits = code_width.long_code_lines(p)
    assert len(hits) == 1 and "cell 0 line 3 (101 columns)" in hits[0], hits
    assert code_width.is_checked("06b_hardware") and code_width.is_checked("index")
    assert not code_width.is_checked("99_x")


@pytest.mark.parametrize("nb", [p for p in book_notebooks() if code_width.is_checked(p.stem)], ids=lambda p: p.stem)
def test_code_lines_fit_in_100_columns(nb):
    "Every code-cell line of a checked chapter fits in 100 columns (wrap it by hand so it stays readable)."
    hits = code_width.long_code_lines(nb)
    assert not hits, f"{len(hits)} code line(s) over {code_width.MAX_COLUMNS} columns:\n" + "\n".join(hits)


def test_bibliography_entries_are_closed():
    "Every entry of nbs/references.bib closes its braces before the next one starts (pandoc rejects the whole file)."
    text = (NBS / "references.bib").read_text(encoding="utf-8")
    starts = [m.start() for m in re.finditer(r"^@\w+\{", text, re.M)] + [len(text)]
    bad = []
    for a, b in zip(starts, starts[1:]):
        entry, depth = text[a:b], 0
        for ch in entry:
            depth += (ch == "{") - (ch == "}")
            if depth < 0: break
        if depth != 0: bad.append(entry.splitlines()[0])
    assert not bad, "entries whose braces do not balance:\n" + "\n".join(bad)


def _imports_torch(source):
    "Whether a code cell's source imports torch (cell magics and shell lines left out)."
    import ast
    try: tree = ast.parse("\n".join(l for l in source.splitlines() if not l.lstrip().startswith(("%", "!"))))
    except SyntaxError: return False
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    return any(m == "torch" or m.startswith("torch.") for m in names)


@pytest.mark.parametrize("nb", book_notebooks(), ids=lambda p: p.stem)
def test_chapters_do_not_import_torch(nb):
    "The book builds with its `book` extra, which has no PyTorch: PyTorch checks belong in tests/."
    cells = json.loads(nb.read_text(encoding="utf-8")).get("cells", [])
    hits = [i for i, c in enumerate(cells) if c.get("cell_type") == "code" and _imports_torch(_text(c.get("source")))]
    assert not hits, f"{nb.name}: cells {hits} import torch"
