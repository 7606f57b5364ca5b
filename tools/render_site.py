#!/usr/bin/env python
"""Render the book's website into `_docs/` without Quarto.

Where Quarto is installed, `tools/build_book.sh` renders the site with nbdev + Quarto from
`nbs/_quarto.yml`. Quarto cannot be installed everywhere, so this script makes the same site from
the same notebooks with what the Python environment has:

1. every book page (`nbs/index.ipynb`, chapters `nbs/NN_name.ipynb`, sub-chapters `nbs/NNa_name.ipynb`)
   goes through nbdev's own notebook processing, the exact per-file step of `nbdev_docs`
   (`nbdev.serve_drv.exec_nb` with `nbdev.processors.FilterDefaults`: front matter, `#| hide`/`#| export` removal, `show_doc` for
   exported symbols run and rendered, `#| exports` source shown folded, doc links, magics ...);
   the processed notebooks are written to `_proc/` like `nbdev_proc_nbs` does;
2. each processed notebook is turned into Pandoc markdown here, applying the Quarto cell options
   that nbdev leaves for Quarto (`echo`, `output`, `include`, `code-fold`, `code-summary`), with the
   cell outputs (stream, error, text, markdown, HTML, LaTeX, PNG/JPEG/SVG figures written as files);
3. pandoc (shipped by the `pypandoc_binary` wheel) makes standalone HTML with `tools/site/template.html`:
   a sidebar of all pages with a search box, syntax highlighting, math typeset by the KaTeX copy in
   `tools/site/katex/` (no CDN: the site works offline), citations `[@key]` resolved by citeproc from
   `nbs/references.bib` (plus a References page listing every entry), a table of contents;
4. links are made local: `NN_name.ipynb` -> `NN_name.html`, nbdev doc links to `doc_host` -> relative;
5. `search_index.js`: every section of every page (prose and code, not outputs) for the search box.

Rendering fixes on the way: carriage returns in stream outputs are applied as a terminal would (a
progress bar leaves its final state, not every redraw); `show_doc` blocks show classes as `class X(...)`,
drop nbdev's `:NoneType` annotations and do not repeat an inherited docstring on every subclass;
`#| gpu` cells say that they run only where a GPU is present. Figures get captions: a markdown cell right
after a cell with a figure that starts with **Figure.** (the book's way: it reads as a caption in Jupyter, and
as a paragraph under the figure in Quarto) becomes the numbered `<figcaption>` of the cell's last image, as
does a Quarto `#| fig-cap:` option.

Usage: .venv/bin/python tools/render_site.py [--out _docs] [--jobs 2]
"""
from __future__ import annotations

import argparse
import base64
import concurrent.futures as cf
import configparser
import html
import json
import multiprocessing as mp
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSETS = Path(__file__).resolve().parent / 'site'
CSS_NAME = 'style.css'
_re_ansi = re.compile(r'\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])')
_re_chapter = re.compile(r'^(\d\d[a-z]?)_(.+)\.ipynb$')  # 06_name, or a sub-chapter 06a_name
BIB_NAME = 'references.bib'
REFS_STEM = 'references'


def settings() -> configparser.SectionProxy:
    cp = configparser.ConfigParser(interpolation=None)
    cp.read(ROOT / 'settings.ini')
    return cp['DEFAULT']


def book_notebooks(nbs: Path) -> list[Path]:
    "The pages of the book in order: the front page, then the chapters."
    pages = [nbs / 'index.ipynb'] if (nbs / 'index.ipynb').exists() else []
    return pages + sorted(p for p in nbs.glob('[0-9][0-9]*_*.ipynb') if p.is_file() and _re_chapter.match(p.name))


# --------------------------------------------------------------------------------------------
# 1. nbdev processing (runs in a fresh process per notebook, like nbdev's proc_nbs)

def _nbdev_process(args):
    src, dst = args
    os.chdir(ROOT)  # nbdev finds settings.ini from the working directory
    if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))  # the package, even when not installed
    import warnings
    warnings.simplefilter('ignore')
    from nbdev.processors import FilterDefaults
    from nbdev.serve_drv import exec_nb
    os.environ['IN_TEST'] = '1'  # as nbdev.serve_drv.main does
    try:
        exec_nb(Path(src), Path(dst), FilterDefaults)
    except BaseException as e:  # report, do not hang the pool
        import traceback
        return f'{src}: {type(e).__name__}: {e}\n' + ''.join(traceback.format_exception(e))
    return None


def process_notebooks(pages: list[Path], proc_dir: Path, jobs: int) -> None:
    proc_dir.mkdir(parents=True, exist_ok=True)
    work = [(str(p), str(proc_dir / p.name)) for p in pages]
    ctx = mp.get_context('spawn')
    errors = []
    # one fresh process per notebook: IPython (run by exec_show_docs) replaces __main__ in its process
    with cf.ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=ctx, max_tasks_per_child=1) as ex:
        for (src, _), err in zip(work, ex.map(_nbdev_process, work)):
            if err: errors.append(err)
            else: print(f'  processed {Path(src).name}')
    if errors:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from docs_cells import unbound_names  # the likely cause, named cell by cell
        found = [f for p in pages for f in unbound_names(p)]
        sys.exit('render_site: nbdev processing failed:\n' + '\n'.join(errors) +
                 '\nrender_site: note: like nbdev_docs, this runs every exported cell, every cell with an import and '
                 'every show_doc cell (nbdev.processors.exec_show_docs) in a fresh shell: a cell that mixes an import with '
                 'other code runs without the rest of the notebook. Keep imports in cells of their own (nbdev FAQ).'
                 + ''.join(f'\nrender_site: names such a cell reads that only a skipped cell binds: {f}' for f in found))


# --------------------------------------------------------------------------------------------
# 2. processed notebook -> pandoc markdown

def _text(x) -> str:
    return ''.join(x) if isinstance(x, list) else (x or '')


def _fence(content: str, ch: str = '`', minimum: int = 3) -> str:
    runs = [len(m) for m in re.findall(re.escape(ch) + '+', content)]
    return ch * max(minimum, max(runs, default=0) + 1)


def _code_block(content: str, attrs: str = '') -> str:
    f = _fence(content)
    return f'{f}{(" " + attrs) if attrs else ""}\n{content.rstrip()}\n{f}\n'


def _div(classes: str, body: str, colons: int = 3) -> str:
    c = ':' * colons
    return f'{c} {{{classes}}}\n{body.rstrip()}\n{c}\n'


def _raw_html(s: str) -> str:
    return _code_block(s, '{=html}')


_re_qopt = re.compile(r'^\s*#\|\s*([\w-]+)\s*:\s*(.*?)\s*$')


def _quarto_options(src: str) -> tuple[dict, str]:
    "Split leading `#| key: value` Quarto cell options (left in place by nbdev) from the code."
    opts, lines = {}, src.splitlines()
    i = 0
    while i < len(lines):
        m = _re_qopt.match(lines[i])
        if not m: break
        k, v = m.group(1), m.group(2)
        if len(v) >= 2 and v[0] == v[-1] and v[0] in '"\'': v = v[1:-1]
        opts[k] = {'true': True, 'false': False}.get(v.lower(), v)
        i += 1
    return opts, '\n'.join(lines[i:])


class PageWriter:
    "Turn one processed notebook into pandoc markdown, writing its figures under the site folder."

    def __init__(self, stem: str, out: Path, gpu_sources=frozenset(), lookup=None):
        self.stem, self.out, self.gpu_sources, self.lookup = stem, out, gpu_sources, lookup or (lambda name: None)
        self.files_rel = f'{stem}_files'
        self.n_files = self.n_figures = 0

    def _write_file(self, sub: str, name: str, data: bytes) -> str:
        d = self.out / self.files_rel / sub
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(data)
        self.n_files += 1
        return f'{self.files_rel}/{sub}/{name}'

    def markdown(self, nb: dict) -> tuple[dict, str]:
        import yaml
        cells = nb.get('cells', [])
        fm = {}
        if cells and cells[0].get('cell_type') == 'raw':
            m = re.match(r'^\s*---\s*\n(.*?)\n---\s*$', _text(cells[0].get('source')), re.S)
            if m:
                fm = yaml.safe_load(m.group(1)) or {}
                cells = cells[1:]
        parts, captioned = [], set()
        for i, cell in enumerate(cells):
            kind = cell.get('cell_type')
            if i in captioned: continue
            if kind == 'markdown': parts.append(self.md_cell(cell, i))
            elif kind == 'code':
                nxt = cells[i + 1] if i + 1 < len(cells) else None
                caption = figure_caption(nxt) if nxt and _has_image(cell) else None
                if caption is not None: captioned.add(i + 1)
                parts.append(self.code_cell(cell, i, caption))
            elif kind == 'raw':
                fmt = (cell.get('metadata') or {}).get('format', '')
                if 'html' in fmt: parts.append(_raw_html(_text(cell.get('source'))))
        return fm, '\n\n'.join(p for p in parts if p) + '\n'

    def md_cell(self, cell: dict, i: int) -> str:
        src = _text(cell.get('source'))
        for name, bundle in (cell.get('attachments') or {}).items():
            for mime, b64 in bundle.items():
                if mime.startswith('image/'):
                    rel = self._write_file('attachments', f'cell-{i}-{name}', base64.b64decode(_text(b64)))
                    src = src.replace(f'attachment:{name}', rel)
                    break
        return src

    def code_cell(self, cell: dict, i: int, caption: str | None = None) -> str:
        opts, code = _quarto_options(_text(cell.get('source')))
        if caption is None and opts.get('fig-cap'): caption = str(opts['fig-cap'])
        if opts.get('include') is False: return ''
        lang = (cell.get('metadata') or {}).get('language') or 'python'
        body = []
        if opts.get('echo', True) is not False and code.strip():
            block = _code_block(code.strip('\n'), f'{{.{lang} .cell-code}}')
            fold = opts.get('code-fold')
            if fold in (True, 'show', 'true'):
                summary = html.escape(str(opts.get('code-summary', 'Code')))
                body += [_raw_html(f'<details class="code-fold"{" open" if fold == "show" else ""}>'
                                   f'<summary>{summary}</summary>'), block, _raw_html('</details>')]
            else:
                body.append(block)
        if opts.get('output', True) is not False:
            outs = cell.get('outputs') or []
            last_image = max((j for j, o in enumerate(outs) if _image_mime(o)), default=None)
            for j, o in enumerate(outs):
                cap = caption if j == last_image else None
                r = self.output(o, i, j, asis=opts.get('output') == 'asis', caption=cap)
                if r: body.append(r)
        if not body: return ''
        if code.strip() in self.gpu_sources:
            ran = any(o.get('output_type') != 'error' for o in cell.get('outputs') or [])
            note = ('GPU cell: it runs only where a GPU is present; the output below is from such a run.' if ran else
                    'GPU cell: it runs only where a GPU is present. The machine that built this page had none, '
                    'so there is no output here; run the notebook on a machine with an NVIDIA GPU to see it.')
            body.insert(0, _raw_html(f'<p class="gpu-note">{html.escape(note)}</p>'))
            return _div('.cell .gpu-cell', '\n'.join(body), colons=4)
        return _div('.cell', '\n'.join(body), colons=4)

    def output(self, o: dict, i: int, j: int, asis: bool, caption: str | None = None) -> str:
        t = o.get('output_type')
        if t == 'stream':
            txt = apply_carriage_returns(_re_ansi.sub('', _text(o.get('text'))))
            if not txt.strip(): return ''
            name = o.get('name', 'stdout')
            return _div(f'.cell-output .cell-output-{name}', _code_block(txt))
        if t == 'error':
            tb = _re_ansi.sub('', '\n'.join(o.get('traceback') or []))
            if not tb.strip(): tb = f"{o.get('ename', 'Error')}: {o.get('evalue', '')}"
            return _div('.cell-output .cell-output-error', _code_block(tb))
        if t not in ('execute_result', 'display_data'): return ''
        data, meta = o.get('data') or {}, o.get('metadata') or {}
        for mime, ext in (('image/png', 'png'), ('image/jpeg', 'jpg'), ('image/gif', 'gif')):
            if mime in data:
                rel = self._write_file('figure-html', f'cell-{i}-output-{j}.{ext}', base64.b64decode(_text(data[mime])))
                width = (meta.get(mime) or {}).get('width')  # retina figures carry their display width
                if caption is not None: return _div('.cell-output .cell-output-display', self.figure(rel, width, caption))
                img = f'![]({rel}){{width={int(width)}}}' if width else f'![]({rel})'
                return _div('.cell-output .cell-output-display', img)
        if 'image/svg+xml' in data:
            rel = self._write_file('figure-html', f'cell-{i}-output-{j}.svg', _text(data['image/svg+xml']).encode())
            if caption is not None: return _div('.cell-output .cell-output-display', self.figure(rel, None, caption))
            return _div('.cell-output .cell-output-display', f'![]({rel})')
        if 'text/markdown' in data:
            md = _text(data['text/markdown'])
            if md.startswith('---'): md = fix_show_doc(md, self.lookup)
            return _div('.cell-output .cell-output-markdown', md)
        if 'text/html' in data:
            return _div('.cell-output .cell-output-html', _raw_html(_text(data['text/html'])))
        if 'text/latex' in data:
            return _div('.cell-output .cell-output-display', _text(data['text/latex']))
        if 'text/plain' in data:
            txt = _re_ansi.sub('', _text(data['text/plain']))
            return _div('.cell-output .cell-output-display', _code_block(txt))
        return ''

    def figure(self, rel: str, width, caption: str) -> str:
        "A numbered <figure>: the image, then its caption (markdown: math and citations work in it)."
        self.n_figures += 1
        alt = html.escape(_plain(caption), quote=True)
        size = f' width="{int(width)}"' if width else ''
        return '\n'.join([_raw_html(f'<figure class="book-figure"><img src="{html.escape(rel, quote=True)}" '
                                     f'alt="{alt}"{size}><figcaption>'),
                          f'[Figure {self.n_figures}.]{{.figure-number}} {caption.strip()}\n',
                          _raw_html('</figcaption></figure>')])


_re_caption = re.compile(r'^\s*\*\*Figure\.?\*\*\s*')


def figure_caption(cell: dict) -> str | None:
    """The caption of the figure above, when `cell` is a markdown cell that starts with **Figure.** (how the
    book writes a caption, readable in Jupyter and on either site), without that marker; else None."""
    if cell.get('cell_type') != 'markdown': return None
    src = _text(cell.get('source'))
    m = _re_caption.match(src)
    return src[m.end():].strip() if m and src[m.end():].strip() else None


def _image_mime(o: dict) -> str | None:
    data = o.get('data') or {}
    return next((m for m in ('image/png', 'image/jpeg', 'image/gif', 'image/svg+xml') if m in data), None)


def _has_image(cell: dict) -> bool:
    return cell.get('cell_type') == 'code' and any(_image_mime(o) for o in cell.get('outputs') or [])


def _plain(md: str) -> str:
    "Markdown caption -> plain text for an alt attribute (marks, citations and math delimiters dropped)."
    t = re.sub(r'\[@[^\]]*\]', '', md)
    t = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', t)
    t = re.sub(r'[*_`$\\]', '', t)
    return ' '.join(t.split())


def apply_carriage_returns(txt: str) -> str:
    "What a terminal shows: each line keeps the text after its last carriage return (a progress bar's last state)."
    if '\r' not in txt: return txt
    lines = []
    for line in txt.split('\n'):
        segs = [s for s in line.split('\r') if s.strip()]
        last = segs[-1] if segs else ''
        if last.strip() in ('█', ''):
            if lines and not lines[-1].strip(): continue
            last = ''
        lines.append(last.rstrip())
    return '\n'.join(lines).strip('\n') + '\n'


_re_sd_head = re.compile(r'^(#{2,6}) (\S+)\s*$', re.M)
_re_sd_sig = re.compile(r'```python\ndef (\w+)\((.*?)\):\n```', re.S)


def fix_show_doc(md: str, lookup) -> str:
    """nbdev's show_doc markdown, made right: `class X(...)` for classes, no `:NoneType` annotations that
    nbdev infers from `=None` defaults, and no docstring that a class only inherits (every `Function`
    subclass would otherwise repeat `Function`'s)."""
    m = _re_sd_head.search(md)
    if not m: return md
    name = m.group(2).replace('\\_', '_')
    obj = lookup(name)
    md = re.sub(r':NoneType=None', '=None', md)
    is_class = isinstance(obj, type) if obj is not None else ('.' not in name and name[:1].isupper())
    if is_class:
        def sig(s):
            args = s.group(2).strip()
            return f'```python\nclass {s.group(1)}' + (f'({s.group(2)})' if args else '') + ':\n```'
        md = _re_sd_sig.sub(sig, md, count=1)
        if isinstance(obj, type) and not obj.__dict__.get('__doc__'):
            end = md.find('```', md.find('```python') + 3)
            if end > 0: md = md[:end + 3] + '\n'
    return _escape_docstring_stars(md)


def _escape_docstring_stars(md: str) -> str:
    """Docstrings are plain text with `code` in backticks: a `*` in them (`a ** p`, `a*A@B + b*C`) is
    multiplication and a `_` after a symbol (`‖x‖_p`) a subscript, not emphasis. Escape those outside
    code, keeping nbdev's `*first line*` emphasis."""
    start = md.find('```python')
    end = md.find('```', start + 9) if start >= 0 else -1
    if end < 0: return md
    head, rest = md[:end + 3], md[end + 3:]

    def esc(text):
        parts = re.split(r'(`[^`]*`)', text)
        def one(p):
            p = p.replace('*', '\\*')
            return re.sub(r'(?<![\w\\])_+|_+(?![\w])', lambda m: '\\_' * len(m.group()), p)
        return ''.join(p if p.startswith('`') else one(p) for p in parts)
    # nbdev emphasises the first line of a docstring only: a docstring wrapped over several lines would
    # show half a sentence in italics, so the lines of its first paragraph join the emphasis
    raw = rest.split('\n')
    for k, line in enumerate(raw):
        if re.match(r'^\*[^*].*\*$', line):
            j = k + 1
            while j < len(raw) and raw[j].strip() and not re.match(r'^\s*([-*|>#]|```|\d+\.)', raw[j]): j += 1
            if j > k + 1: raw[k:j] = ['*' + ' '.join([line[1:-1]] + [r.strip() for r in raw[k + 1:j]]) + '*']
            break
    lines = []
    for line in raw:
        m = re.match(r'^\*(.*)\*$', line)
        if m and not m.group(1).startswith('*'): lines.append('*' + esc(m.group(1)) + '*')
        elif re.match(r'^\s*\* ', line):
            i = line.index('*') + 1
            lines.append(line[:i] + esc(line[i:]))
        elif line.startswith('```'): lines.append(line)
        else: lines.append(esc(line))
    return head + '\n'.join(lines)


def symbol_lookup():
    "Find the objects show_doc documents by name (`Tensor`, `Tensor.sum`), in the package's modules."
    import importlib
    import pkgutil
    import warnings
    if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))
    mods = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        try:
            pkg = importlib.import_module(settings().get('lib_name', 'minitorch_nb'))
            mods.append(pkg)
            for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):
                try: mods.append(importlib.import_module(info.name))
                except Exception: pass
        except Exception as e:
            print(f'render_site: note: the package does not import ({e}); show_doc fixes fall back to names')

    def lookup(name):
        head, *rest = name.split('.')
        for mod in mods:
            obj = mod.__dict__.get(head)
            if obj is None: continue
            try:
                for r in rest: obj = getattr(obj, r)
            except AttributeError: continue
            return obj
        return None
    return lookup


def gpu_cell_sources(nb_path: Path) -> frozenset:
    "The code (directives removed, as nbdev's processing leaves it) of the `#| gpu` cells of a notebook."
    nb = json.loads(nb_path.read_text(encoding='utf-8'))
    out = set()
    for c in nb.get('cells', []):
        if c.get('cell_type') != 'code': continue
        lines = _text(c.get('source')).splitlines()
        if not any(re.match(r'^\s*#\|\s*gpu\s*$', ln) for ln in lines[:5]): continue
        out.add('\n'.join(ln for ln in lines if not re.match(r'^\s*#\|', ln)).strip())
    return frozenset(out)


# --------------------------------------------------------------------------------------------
# 3. pandoc, 4. links

def pandoc_path() -> str:
    import pypandoc
    return pypandoc.get_pandoc_path()


def page_title(stem: str, fm: dict) -> str:
    if fm.get('title'): return str(fm['title'])
    m = re.match(r'^\d\d[a-z]?_(.+)$', stem)
    return (m.group(1) if m else stem).replace('_', ' ').title()


_re_num_title = re.compile(r'^\s*(?:chapter\s+)?\d+[a-z]?\s*(?:[—–:.-]\s*|\s+)', re.I)


def sidebar_html(pages: list[tuple[str, str]], current: str) -> str:
    items = []
    for stem, title in pages:
        m = re.match(r'^(\d\d[a-z]?)_', stem)
        num = m.group(1) if m else ('◆' if stem == 'index' else '¶')
        if stem == 'index': title = 'Introduction'
        cls = ' class="active"' if stem == current else ''
        cur = ' aria-current="page"' if stem == current else ''
        items.append(f'<li{cls}><a href="{stem}.html"{cur}><span class="num">{num}</span>'
                     f'<span class="name">{html.escape(_re_num_title.sub("", title) or title)}</span></a></li>')
    return '<ol class="chapters">' + ''.join(items) + '</ol>'


_re_attr = re.compile(r'\b(href|src)="([^"]*)"')


def nbdev_page_name(nb: Path) -> str:
    "The file name nbdev + Quarto give the page of `nb` (`00_autograd.ipynb` -> `autograd.html`)."
    from nbdev.doclinks import _nbpath2html
    return _nbpath2html(Path(nb.name)).name


def localize_links(doc: str, prefixes: list[str], aliases: dict[str, str]) -> str:
    """Make links to notebooks and to this site's own published URL point at the rendered pages.
    `aliases` maps nbdev's page names (used by nbdev doc links) to this site's page names."""
    def fix(m):
        attr, url = m.group(1), html.unescape(m.group(2))
        for p in prefixes:
            if p and url.startswith(p):
                url = url[len(p):] or 'index.html'
                break
        if not re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', url) and not url.startswith(('#', '/')):
            path, sep, frag = url.partition('#')
            path = re.sub(r'^(?:\./)?(?:nbs/)?', '', path) if path.endswith(('.ipynb', '.qmd')) else path
            path = re.sub(r'\.(ipynb|qmd)$', '.html', path)
            path = aliases.get(path, path)
            url = path + sep + frag
        return f'{attr}="{html.escape(url, quote=True)}"'
    return _re_attr.sub(fix, doc)


def copy_local_resources(doc: str, out: Path, nbs: Path) -> None:
    "Copy files that markdown cells link to (e.g. images next to the notebooks) into the site."
    for _, url in _re_attr.findall(doc):
        url = html.unescape(url).partition('#')[0].partition('?')[0]
        if not url or re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', url) or url.startswith('/') or '..' in Path(url).parts: continue
        dst, src = out / url, nbs / url
        if not dst.exists() and src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)


def render(pages: list[Path], proc_dir: Path, out: Path, cfg) -> list[Path]:
    pandoc = pandoc_path()
    site_title = cfg.get('title', 'minitorch_nb')
    tagline = cfg.get('description', '')
    prefixes = [cfg.get('doc_host', '').rstrip('/') + '/' + cfg.get('doc_baseurl', '/').strip('/')]
    prefixes = [p.rstrip('/') + '/' for p in prefixes if p.strip('/')]
    # first pass: markdown for every page (titles are needed for the sidebar of each page)
    docs = []
    lookup = symbol_lookup()
    for p in pages:
        nb = json.loads((proc_dir / p.name).read_text(encoding='utf-8'))
        w = PageWriter(p.stem, out, gpu_cell_sources(p), lookup)
        fm, md = w.markdown(nb)
        docs.append((p.stem, page_title(p.stem, fm), fm, md))
    bib = ROOT / cfg.get('nbs_path', 'nbs') / BIB_NAME
    if bib.is_file():  # the References page: every entry of the bibliography
        docs.append((REFS_STEM, 'References', {'nocite': '@*'},
                     'Every work the book cites, with the chapters\' citations linking here.\n\n::: {#refs}\n:::\n'))
    nav = [(stem, title) for stem, title, _, _ in docs]
    aliases = {nbdev_page_name(p): f'{p.stem}.html' for p in pages if nbdev_page_name(p) != f'{p.stem}.html'}
    written, unresolved = [], []
    with tempfile.TemporaryDirectory() as td:
        for k, (stem, title, fm, md) in enumerate(docs):
            meta = {'title': title, 'pagetitle': re.sub(r'[`*_]', '', title), 'site-title': site_title,
                    'site-tagline': tagline, 'site-css': CSS_NAME, 'lang': 'en'}
            if fm.get('description'): meta['description'] = str(fm['description'])
            m = re.match(r'^(\d\d[a-z]?)_', stem)
            if m and not _re_num_title.match(title): meta['chapter-label'] = f'Chapter {m.group(1)}'
            if stem == REFS_STEM: meta['nocite'] = fm['nocite']
            else: meta['reference-section-title'] = 'References'
            meta['link-citations'] = True
            if k > 0: meta['prev-href'], meta['prev-title'] = f'{docs[k-1][0]}.html', docs[k-1][1]
            if k + 1 < len(docs): meta['next-href'], meta['next-title'] = f'{docs[k+1][0]}.html', docs[k+1][1]
            src, mf = Path(td) / f'{stem}.md', Path(td) / f'{stem}.yaml'
            src.write_text(md, encoding='utf-8')
            mf.write_text(json.dumps(meta), encoding='utf-8')  # JSON is YAML
            dst = out / f'{stem}.html'
            # citations: only bracketed [@key] (a bare @name stays text: cite_literal.lua), resolved by citeproc
            cite = ([f'--lua-filter={ASSETS / "cite_literal.lua"}', '--citeproc', f'--bibliography={bib}']
                    if bib.is_file() else [])
            cmd = [pandoc, str(src), '-f', 'markdown', '-t', 'html5', '--standalone',
                   f'--template={ASSETS / "template.html"}', f'--metadata-file={mf}', *cite,
                   '--katex=katex/', '--syntax-highlighting=pygments', '--toc', '--toc-depth=3',
                   '-V', f'sidebar={sidebar_html(nav, stem)}', '--wrap=none', '-o', str(dst)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                (out / f'{stem}.md').write_text(md, encoding='utf-8')
                sys.exit(f'render_site: pandoc failed on {stem} (markdown kept in {out / (stem + ".md")}):\n{r.stderr}')
            for line in r.stderr.splitlines():
                print(f'  pandoc [{stem}]: {line}')
                if 'Citeproc: citation' in line and 'not found' in line: unresolved.append(f'{stem}: {line.strip()}')
            doc = localize_links(dst.read_text(encoding='utf-8'), prefixes, aliases)
            dst.write_text(doc, encoding='utf-8')
            copy_local_resources(doc, out, ROOT / cfg.get('nbs_path', 'nbs'))
            written.append(dst)
            print(f'  rendered {dst.relative_to(ROOT) if dst.is_relative_to(ROOT) else dst}')
    if unresolved:
        sys.exit('render_site: citations whose key is not in nbs/references.bib:\n  ' + '\n  '.join(unresolved))
    write_search_index(out, [(f'{stem}.html', title) for stem, title, _, _ in docs])
    # nbdev + Quarto name chapter pages without the number (00_autograd.ipynb -> autograd.html), and
    # nbdev doc links use those names: small redirect pages keep such URLs working on this site too
    for alias, target in aliases.items():
        if not (out / alias).exists():
            t = html.escape(target, quote=True)
            (out / alias).write_text(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Moved</title>'
                                     f'<link rel="canonical" href="{t}"><meta http-equiv="refresh" content="0; url={t}">'
                                     f'<script>location.replace("{t}" + location.hash)</script></head>'
                                     f'<body><p>This page is <a href="{t}">{t}</a>.</p></body></html>\n', encoding='utf-8')
    return written


def page_sections(doc: str, page: str, title: str) -> list[list[str]]:
    "[page, page title, heading, anchor, text] for each section of a rendered page (outputs left out)."
    from html.parser import HTMLParser

    class P(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.secs, self.stack, self.skip, self.head = [[page, title, title, '', []]], [], 0, None
            self.in_main = False

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == 'main': self.in_main = True
            if tag in ('nav', 'aside', 'footer', 'script', 'style') or 'cell-output' in (a.get('class') or '') \
                    or 'katex-mathml' in (a.get('class') or ''):
                self.stack.append(tag); self.skip += 1; return
            if self.skip and tag == self.stack[-1]: self.stack.append(tag); self.skip += 1; return
            if tag in ('h1', 'h2', 'h3', 'h4') and self.in_main and not self.skip and a.get('id'):
                self.head = [a['id'], []]

        def handle_endtag(self, tag):
            if self.skip and self.stack and tag == self.stack[-1]:
                self.stack.pop(); self.skip -= 1; return
            if self.head and tag in ('h1', 'h2', 'h3', 'h4'):
                anchor, words = self.head
                self.secs.append([page, title, ' '.join(''.join(words).split()), anchor, []])
                self.head = None

        def handle_data(self, data):
            if self.skip or not self.in_main: return
            (self.head[1] if self.head else self.secs[-1][4]).append(data)

    p = P()
    p.feed(doc)
    out = []
    for pg, t, h, a, words in p.secs:
        text = ' '.join(''.join(words).split())
        if text or a: out.append([pg, t, h, a, text])
    return out


def write_search_index(out: Path, pages: list[tuple[str, str]]) -> None:
    "search_index.js: a script (so that it loads from file:// too) with every section of every page."
    secs = []
    for name, title in pages:
        f = out / name
        if f.is_file(): secs += page_sections(f.read_text(encoding='utf-8'), name, re.sub(r'[`*]', '', title))
    (out / 'search_index.js').write_text('window.BOOK_SEARCH = ' + json.dumps(secs, ensure_ascii=False) + ';\n',
                                         encoding='utf-8')
    print(f'  search index: {len(secs)} sections, {(out / "search_index.js").stat().st_size // 1024} KiB')


def main(argv=None) -> int:
    cfg = settings()
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--nbs', default=str(ROOT / cfg.get('nbs_path', 'nbs')), help='folder of the notebooks')
    ap.add_argument('--out', default=str(ROOT / cfg.get('doc_path', '_docs')), help='site folder (replaced)')
    ap.add_argument('--proc', default=str(ROOT / '_proc'), help='folder for the nbdev-processed notebooks')
    ap.add_argument('--jobs', type=int, default=min(2, os.cpu_count() or 1), help='notebooks processed in parallel')
    a = ap.parse_args(argv)
    nbs, out, proc_dir = Path(a.nbs).resolve(), Path(a.out).resolve(), Path(a.proc).resolve()
    pages = book_notebooks(nbs)
    if not pages: sys.exit(f'render_site: no notebooks in {nbs}')
    print(f'render_site: {len(pages)} page(s) from {nbs}')
    process_notebooks(pages, proc_dir, a.jobs)
    if out.exists(): shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copy2(ASSETS / 'style.css', out / CSS_NAME)
    shutil.copy2(ASSETS / 'site.js', out / 'site.js')
    shutil.copytree(ASSETS / 'katex', out / 'katex', ignore=shutil.ignore_patterns('LICENSE'))
    shutil.copy2(ASSETS / 'katex' / 'LICENSE', out / 'katex' / 'LICENSE.txt')
    (out / '.nojekyll').touch()
    written = render(pages, proc_dir, out, cfg)
    print(f'render_site: wrote {len(written)} page(s) to {out}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
