"""Code lines of the book stay within 100 columns: the site shows code without horizontal scrolling.

One rule for two checks: tests/test_book_text.py (the notebooks' code cells) and
`tools/check_site.py --strict-code` (the rendered pages). Both hold the chapters in CHECKED to it; the
other chapters are still being wrapped, and join the list when they are.
"""
import json
import re
from pathlib import Path

MAX_COLUMNS = 100
# chapter numbers (a sub-chapter 06a counts as 06) held to MAX_COLUMNS, and "index" for the front page
CHECKED = ("index", "00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12")


def is_checked(stem: str) -> bool:
    "Whether the notebook or page `stem` (e.g. '06a_cpu_kernels', 'index') is held to MAX_COLUMNS."
    m = re.match(r"^(\d\d)[a-z]?_", stem)
    return (m.group(1) if m else stem) in CHECKED


def long_code_lines(nb_path) -> list[str]:
    "'name cell N line L (C columns): text' for every code-cell line over MAX_COLUMNS."
    nb = json.loads(Path(nb_path).read_text(encoding="utf-8"))
    hits = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code": continue
        source = cell.get("source")
        source = "".join(source) if isinstance(source, list) else (source or "")
        for j, line in enumerate(source.split("\n"), 1):
            if len(line) > MAX_COLUMNS:
                hits.append(f"{Path(nb_path).name} cell {i} line {j} ({len(line)} columns): "
                            f"{line[:60]}...")
    return hits
