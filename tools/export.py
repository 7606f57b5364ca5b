"""Export the notebooks into the package: `nbdev_export`, with one fix to nbdev's doc index.

nbdev 2.4.14 leaves out of `_modidx.py` every cell whose notebook path contains "auto", meaning to skip only
its own auto-generated `__all__` cell, so `00_autograd.ipynb` got no doc-index entries at all
(https://github.com/AnswerDotAI/nbdev/issues/1430). The auto cells are already dropped by `_iter_py_cells`,
so the index here sees each cell with its notebook name blanked; nothing else changes.

    .venv/bin/python tools/export.py     # instead of nbdev_export (same arguments)
"""
import nbdev.doclinks as doclinks

_iter_py_cells = doclinks._iter_py_cells

def _cells_for_index(p):
    "nbdev's cells of an exported file, with the notebook name that its index tests for 'auto' blanked."
    for cell in _iter_py_cells(p):
        cell.nb = ""  # read only by the index's "'auto' in cell.nb" test; the location comes from cell.nb_path
        yield cell

doclinks._iter_py_cells = _cells_for_index

if __name__ == "__main__":
    doclinks.nbdev_export()
