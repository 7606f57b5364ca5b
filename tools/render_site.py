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
   a sidebar of all pages, syntax highlighting, math as MathML (works offline), a table of contents;
4. links are made local: `NN_name.ipynb` -> `NN_name.html`, nbdev doc links to `doc_host` -> relative.

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
        sys.exit('render_site: nbdev processing failed:\n' + '\n'.join(errors) +
                 '\nrender_site: note: like nbdev_docs, this runs every exported cell, every cell with an import and '
                 'every show_doc cell (nbdev.processors.exec_show_docs) in a fresh shell: a cell that mixes an import with '
                 'other code runs without the rest of the notebook. Keep imports in cells of their own (nbdev FAQ).')


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

    def __init__(self, stem: str, out: Path):
        self.stem, self.out = stem, out
        self.files_rel = f'{stem}_files'
        self.n_files = 0

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
        parts = []
        for i, cell in enumerate(cells):
            kind = cell.get('cell_type')
            if kind == 'markdown': parts.append(self.md_cell(cell, i))
            elif kind == 'code': parts.append(self.code_cell(cell, i))
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

    def code_cell(self, cell: dict, i: int) -> str:
        opts, code = _quarto_options(_text(cell.get('source')))
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
            for j, o in enumerate(cell.get('outputs') or []):
                r = self.output(o, i, j, asis=opts.get('output') == 'asis')
                if r: body.append(r)
        if not body: return ''
        return _div('.cell', '\n'.join(body), colons=4)

    def output(self, o: dict, i: int, j: int, asis: bool) -> str:
        t = o.get('output_type')
        if t == 'stream':
            txt = _re_ansi.sub('', _text(o.get('text')))
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
                img = f'![]({rel}){{width={int(width)}}}' if width else f'![]({rel})'
                return _div('.cell-output .cell-output-display', img)
        if 'image/svg+xml' in data:
            rel = self._write_file('figure-html', f'cell-{i}-output-{j}.svg', _text(data['image/svg+xml']).encode())
            return _div('.cell-output .cell-output-display', f'![]({rel})')
        if 'text/markdown' in data:
            return _div('.cell-output .cell-output-markdown', _text(data['text/markdown']))
        if 'text/html' in data:
            return _div('.cell-output .cell-output-html', _raw_html(_text(data['text/html'])))
        if 'text/latex' in data:
            return _div('.cell-output .cell-output-display', _text(data['text/latex']))
        if 'text/plain' in data:
            txt = _re_ansi.sub('', _text(data['text/plain']))
            return _div('.cell-output .cell-output-display', _code_block(txt))
        return ''


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
        num = m.group(1) if m else '◆'
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
    for p in pages:
        nb = json.loads((proc_dir / p.name).read_text(encoding='utf-8'))
        w = PageWriter(p.stem, out)
        fm, md = w.markdown(nb)
        docs.append((p.stem, page_title(p.stem, fm), fm, md))
    nav = [(stem, title) for stem, title, _, _ in docs]
    aliases = {nbdev_page_name(p): f'{p.stem}.html' for p in pages if nbdev_page_name(p) != f'{p.stem}.html'}
    written = []
    with tempfile.TemporaryDirectory() as td:
        for k, (stem, title, fm, md) in enumerate(docs):
            meta = {'title': title, 'pagetitle': re.sub(r'[`*_]', '', title), 'site-title': site_title,
                    'site-tagline': tagline, 'site-css': CSS_NAME, 'lang': 'en'}
            if fm.get('description'): meta['description'] = str(fm['description'])
            m = re.match(r'^(\d\d[a-z]?)_', stem)
            if m and not _re_num_title.match(title): meta['chapter-label'] = f'Chapter {m.group(1)}'
            if k > 0: meta['prev-href'], meta['prev-title'] = f'{docs[k-1][0]}.html', docs[k-1][1]
            if k + 1 < len(docs): meta['next-href'], meta['next-title'] = f'{docs[k+1][0]}.html', docs[k+1][1]
            src, mf = Path(td) / f'{stem}.md', Path(td) / f'{stem}.yaml'
            src.write_text(md, encoding='utf-8')
            mf.write_text(json.dumps(meta), encoding='utf-8')  # JSON is YAML
            dst = out / f'{stem}.html'
            cmd = [pandoc, str(src), '-f', 'markdown-citations', '-t', 'html5', '--standalone',
                   f'--template={ASSETS / "template.html"}', f'--metadata-file={mf}',
                   '--mathml', '--syntax-highlighting=pygments', '--toc', '--toc-depth=3',
                   '-V', f'sidebar={sidebar_html(nav, stem)}', '--wrap=none', '-o', str(dst)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                (out / f'{stem}.md').write_text(md, encoding='utf-8')
                sys.exit(f'render_site: pandoc failed on {stem} (markdown kept in {out / (stem + ".md")}):\n{r.stderr}')
            for line in r.stderr.splitlines():
                print(f'  pandoc [{stem}]: {line}')
            doc = localize_links(dst.read_text(encoding='utf-8'), prefixes, aliases)
            dst.write_text(doc, encoding='utf-8')
            copy_local_resources(doc, out, ROOT / cfg.get('nbs_path', 'nbs'))
            written.append(dst)
            print(f'  rendered {dst.relative_to(ROOT) if dst.is_relative_to(ROOT) else dst}')
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
    (out / '.nojekyll').touch()
    written = render(pages, proc_dir, out, cfg)
    print(f'render_site: wrote {len(written)} page(s) to {out}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
