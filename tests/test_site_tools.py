"""The site tools without a browser: figure captions in tools/render_site.py, and math without a CDN on both
render paths (render_site's pandoc, and Quarto through nbs/_quarto.yml)."""
import base64
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import render_site  # noqa: E402

PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")).decode()


def figure_cell(n_images=1):
    outs = [{"output_type": "display_data", "data": {"image/png": PNG, "text/plain": ["<Figure>"]},
             "metadata": {"image/png": {"width": 300}}} for _ in range(n_images)]
    return {"cell_type": "code", "source": "plt.plot([1, 2]); plt.show()", "outputs": outs, "metadata": {}}


def md(text): return {"cell_type": "markdown", "source": text, "metadata": {}}


def render(cells, tmp_path):
    return render_site.PageWriter("07_x", tmp_path).markdown({"cells": cells})[1]


def test_a_figure_cell_followed_by_a_caption_cell_becomes_a_numbered_figure(tmp_path):
    out = render([figure_cell(), md("**Figure.** Loss against steps: $\\eta$ = 0.1 [@kingma2015adam]."),
                  md("Prose after it."), figure_cell(), md("**Figure.** The second one.")], tmp_path)
    assert out.count('<figure class="book-figure">') == 2 and out.count("</figcaption></figure>") == 2
    assert "[Figure 1.]{.figure-number} Loss against steps: $\\eta$ = 0.1 [@kingma2015adam]." in out
    assert "[Figure 2.]{.figure-number} The second one." in out
    assert "**Figure.**" not in out, "the caption cell is used once, as the caption, not repeated as a paragraph"
    assert 'alt="Loss against steps: eta = 0.1 ."' in out and 'width="300"' in out
    assert "Prose after it." in out


def test_only_the_last_image_of_a_cell_gets_the_caption(tmp_path):
    out = render([figure_cell(2), md("**Figure.** Two panels, one caption.")], tmp_path)
    assert out.count("<figure") == 1 and out.count("![](07_x_files/figure-html/cell-0-output-") == 1


def test_a_figure_caption_cell_after_a_cell_without_a_figure_stays_a_paragraph(tmp_path):
    cells = [{"cell_type": "code", "source": "1 + 1", "metadata": {},
              "outputs": [{"output_type": "execute_result", "data": {"text/plain": ["2"]}, "metadata": {}}]},
             md("**Figure.** Not a caption here.")]
    out = render(cells, tmp_path)
    assert "<figure" not in out and "**Figure.** Not a caption here." in out


def test_a_quarto_fig_cap_option_is_a_caption_too(tmp_path):
    cell = figure_cell()
    cell["source"] = '#| fig-cap: "A short caption"\n' + cell["source"]
    out = render([cell], tmp_path)
    assert "[Figure 1.]{.figure-number} A short caption" in out and "fig-cap" not in out


def test_render_site_typesets_math_with_the_shipped_katex():
    src = (ROOT / "tools" / "render_site.py").read_text()
    assert "'--katex=katex/'" in src
    for name in ("katex.min.js", "katex.min.css"): assert (ROOT / "tools" / "site" / "katex" / name).is_file()
    assert any((ROOT / "tools" / "site" / "katex" / "fonts").glob("*.woff2"))


def test_the_quarto_path_uses_the_shipped_katex_not_a_cdn():
    conf = yaml.safe_load((ROOT / "nbs" / "_quarto.yml").read_text())
    math = conf["format"]["html"]["html-math-method"]
    assert math == {"method": "katex", "url": "katex/"}, math  # a relative URL: the site's own copy
    assert "katex/" in conf["project"]["resources"]
    build = (ROOT / "tools" / "build_book.sh").read_text()
    assert re.search(r"cp -r tools/site/katex _proc/katex\b.*\n.*quarto render", build), \
        "build_book.sh must copy the KaTeX folder into _proc before quarto render"
    assert not re.search(r"https?://", (ROOT / "nbs" / "_quarto.yml").read_text()), "no URL (CDN) in _quarto.yml"


PAGES = ["index.ipynb"] + sorted(p.name for p in (ROOT / "nbs").glob("[0-9][0-9]*_*.ipynb"))


@pytest.mark.parametrize("page", PAGES)
def test_every_figure_of_every_chapter_has_a_caption_cell(page):
    import json
    cells = json.loads((ROOT / "nbs" / page).read_text())["cells"]
    missing = [i for i, c in enumerate(cells) if render_site._has_image(c)
               and not (i + 1 < len(cells) and render_site.figure_caption(cells[i + 1]))]
    assert not missing, f"{page}: figure cells without a **Figure.** caption cell after them: {missing}"


def test_a_docstring_wrapped_over_lines_is_one_emphasised_paragraph():
    md = ("---\n\n### f\n\n```python\ndef f(\n    x\n):\n```\n\n"
          "*Rows of tensors that share their first dimension: `ds[i] = (t[i] for t in*\ntensors)` and a*b.\n\n"
          "A second paragraph.")
    out = render_site.fix_show_doc(md, lambda name: None)
    assert "*Rows of tensors that share their first dimension: `ds[i] = (t[i] for t in tensors)` and a\\*b.*" in out
    assert out.rstrip().endswith("A second paragraph.")


def test_the_raw_emphasis_probe_flags_leftover_markers_not_shapes():
    "check_site's browser probe: a `*` at a word's edge is raw markdown, a `*` in a shape like (N, C, *) is not."
    sys.path.insert(0, str(ROOT / "tools"))
    import check_site
    rx = re.compile(re.search(r"const rx = /(.*)/;", check_site._PAGE_PROBE).group(1))
    raw = ["*a ** p for a number p.*", "**bold** left", "see *this", "the end*", "word**"]
    fine = ["(N, C, *)", "(*, d)", "(L_i, *) into (L_max, B, *)", "a ** b", "a*b", "2 * 3", "x (N, C, *), as"]
    assert all(rx.search(t) for t in raw), [t for t in raw if not rx.search(t)]
    assert not any(rx.search(t) for t in fine), [t for t in fine if rx.search(t)]


import docs_cells  # noqa: E402  (tools/docs_cells.py)

# chapters whose docs processing breaks at the time of writing (their branches fix them; remove them from here then)
DOCS_BROKEN = set()


def test_docs_cells_finds_a_cell_that_needs_a_skipped_one(tmp_path):
    "The scanner: an import cell reading a name bound only by a skipped cell (directly or in a called function)."
    cells = [{"cell_type": "code", "source": "#| exports\ndef f(x): return x + 1"},
             {"cell_type": "code", "source": "rng = 3\ndef helper(): return rng"},
             {"cell_type": "code", "source": "import math\nprint(f(math.pi))"},             # fine
             {"cell_type": "code", "source": "import json\nx = rng + 1"},                  # rng: skipped cell
             {"cell_type": "code", "source": "import os\ndef g(): return WARP\ng()"},      # WARP, through g
             {"cell_type": "code", "source": "import re\nh = lambda: later\nk = [i for i in range(3)]"}]  # fine
    p = tmp_path / "99_x.ipynb"
    p.write_text(__import__("json").dumps({"cells": cells}))
    found = docs_cells.unbound_names(p)
    assert [f.split(":")[0] for f in found] == ["99_x.ipynb cell 3", "99_x.ipynb cell 4"], found
    assert "['rng']" in found[0] and "['WARP']" in found[1], found


@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.xfail(reason="docs processing breaks; fix pending"))
                                  if p in DOCS_BROKEN else p for p in PAGES])
def test_the_cells_nbdev_runs_for_the_docs_run_on_their_own(page):
    "nbdev runs exported, show_doc and import cells alone to render the docs: none may need a skipped cell."
    found = docs_cells.unbound_names(ROOT / "nbs" / page)
    assert not found, "keep imports in cells of their own (nbdev runs such cells without the rest):\n" + "\n".join(found)
