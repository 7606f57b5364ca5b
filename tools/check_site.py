#!/usr/bin/env python
"""Check the rendered website in `_docs/`.

1. every expected page exists: `index.html` and one `NN_name.html` per chapter `nbs/NN_name.ipynb` or
   sub-chapter `nbs/NNa_name.ipynb`;
2. in every HTML page of the site, every local `href`/`src` (not http(s), mailto, data, javascript)
   resolves to a file of the site, and a `#fragment` names an `id` (or `name`) in the target page;
   every `<img>` has a source that resolves;
3. no unresolved citation in any page: a raw `[@key]`, pandoc's `(key?)` or "???";
4. headless Chromium (driven over the DevTools protocol, tools/browser.py) opens every page at 1400 px:
   - no JavaScript errors in the console;
   - every math element is typeset by KaTeX (no bare TeX, no KaTeX error);
   - no raw markdown emphasis (a `*` or `**` at one edge of a word) in the text outside code and math;
   - the page has the search box; on the front page, searching finds "im2col" and "roofline" in chapters;
   - no code or output block needs horizontal scrolling (both wrap); code lines over 100 columns are
     reported; with --strict-code they fail on the pages tools/code_width.py holds to the limit (the
     chapters tests/test_book_text.py checks), and so does any such line in those notebooks' code cells;
   - every figure of a cell's output has a caption (a `<figcaption>`, or a paragraph starting "Figure" right
     after the cell);
   - a full-page screenshot goes to `site_check/<page>.png` (non-blank).
   Chromium is installed with apt-get (Debian's `chromium` package) when no chromium is on PATH.

Exits non-zero with a list of what is wrong.

Usage: .venv/bin/python tools/check_site.py [--site _docs] [--nbs nbs] [--shots site_check] [--no-browser] [--strict-code]
"""
from __future__ import annotations

import argparse
import configparser
import os
import re
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import code_width  # noqa: E402  (the 100-column rule, shared with tests/test_book_text.py)
_external = re.compile(r'^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)')


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links, self.imgs = set(), [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ('id',) + (('name',) if tag == 'a' else ()):
            if a.get(k): self.ids.add(a[k])
        for k in ('href', 'src'):
            if k in a and a[k] is not None: self.links.append((tag, k, a[k], self.getpos()[0]))
        if tag == 'img': self.imgs.append((a.get('src'), self.getpos()[0]))

    handle_startendtag = handle_starttag


def parse(path: Path) -> _Page:
    p = _Page()
    p.feed(path.read_text(encoding='utf-8', errors='replace'))
    return p


def _nbdev_name(nb: Path) -> str:
    "nbdev + Quarto drop the number: 00_autograd.ipynb -> autograd.html (nbdev.doclinks._nbpath2html)"
    return re.sub(r'^\d+[a-zA-Z0-9]*_', '', nb.name.lower()).rsplit('.', 1)[0] + '.html'


def chapter_page(site: Path, nb: Path) -> Path | None:
    "The rendered page of chapter `nb`: NN_name.html (tools/render_site.py) or name.html (nbdev + Quarto)."
    for name in (nb.stem + '.html', _nbdev_name(nb)):
        if (site / name).is_file(): return site / name
    return None


def check_pages(site: Path, nbs: Path) -> list[str]:
    errors = []
    if not (site / 'index.html').is_file(): errors.append(f'missing page: {site / "index.html"}')
    for nb in sorted(p for p in nbs.glob('[0-9][0-9]*_*.ipynb') if re.match(r'^\d\d[a-z]?_.+\.ipynb$', p.name)):
        if chapter_page(site, nb) is None:
            errors.append(f'missing page for {nb.name}: {site / (nb.stem + ".html")}')
    return errors


def check_links(site: Path) -> tuple[list[str], int]:
    errors, n, cache = [], 0, {}

    def page(p: Path) -> _Page:
        if p not in cache: cache[p] = parse(p)
        return cache[p]

    for f in sorted(site.rglob('*.html')):
        pg = page(f)
        rel = f.relative_to(site)
        for src, line in pg.imgs:
            if not src: errors.append(f'{rel}:{line}: <img> without src')
        for tag, attr, url, line in pg.links:
            url = url.strip()
            if not url or _external.match(url):
                if url.lower().startswith('javascript:'): errors.append(f'{rel}:{line}: javascript: link')
                continue
            n += 1
            parts = urlsplit(url)
            path, frag = unquote(parts.path), unquote(parts.fragment)
            if path.startswith('/'): target = site / path.lstrip('/')
            else: target = (f.parent / path) if path else f
            if target.is_dir(): target = target / 'index.html'
            try: target.resolve().relative_to(site.resolve())
            except ValueError:
                errors.append(f'{rel}:{line}: <{tag} {attr}="{url}"> points outside the site'); continue
            if not target.exists():
                errors.append(f'{rel}:{line}: <{tag} {attr}="{url}"> -> missing {target.relative_to(site) if target.is_relative_to(site) else target}')
                continue
            if frag and target.suffix == '.html' and frag not in page(target).ids:
                errors.append(f'{rel}:{line}: <{tag} {attr}="{url}"> -> no id "{frag}" in {target.relative_to(site)}')
    return errors, n


_re_unresolved = re.compile(r'\[-?@[\w:.-]+|\?\?\?|<span class="citation"[^>]*>[^<]*\?\)?</span>|<strong>[\w:.-]+\?</strong>')


def check_citations(site: Path) -> list[str]:
    "Citations left unresolved: a raw [@key], pandoc's '(key?)' / '**key?**', or '???'."
    errors = []
    for f in sorted(site.glob('*.html')):
        doc = f.read_text(encoding='utf-8', errors='replace')
        body = re.sub(r'<(script|style|pre|code)\b.*?</\1>', '', doc, flags=re.S | re.I)
        for m in _re_unresolved.finditer(body):
            errors.append(f'{f.name}: unresolved citation: {m.group(0)[:80]!r}')
    return errors


# JavaScript run in each page: what a reader would see wrong
_PAGE_PROBE = r"""(() => {
  const out = {math: 0, untypeset: [], katexErrors: [], rawMd: [], search: !!document.getElementById('search-input'),
               wideOutputs: [], wideCode: [], images: []};
  document.querySelectorAll('span.math').forEach(el => {
    out.math++;
    if (!el.querySelector('.katex')) out.untypeset.push(el.textContent.slice(0, 80));
  });
  document.querySelectorAll('.katex-error').forEach(el => out.katexErrors.push((el.getAttribute('title') || el.textContent).slice(0, 120)));
  const skip = 'pre, code, script, style, .katex, .math, textarea, input';
  const walker = document.createTreeWalker(document.querySelector('main') || document.body, NodeFilter.SHOW_TEXT);
  // emphasis markers left over; 'a ** b' and 'a*b' are maths, '(N, C, *)' and '(*, d)' are shapes
  const rx = /(^|\s)\*\*?[^\s*(),;:.]|[^\s*(),;:]\*\*?(\s|$)/;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement && n.parentElement.closest(skip)) continue;
    const t = n.textContent;
    if (rx.test(t)) out.rawMd.push(t.trim().slice(0, 100));
  }
  out.longCode = 0; out.longestCode = 0;
  document.querySelectorAll('main pre').forEach(pre => {
    if (!pre.closest('.cell-output')) pre.textContent.split('\n').forEach(l => {
      if (l.length > MAX_COLUMNS) out.longCode++;
      out.longestCode = Math.max(out.longestCode, l.length);
    });
    const over = pre.scrollWidth - pre.clientWidth;
    if (over <= 1) return;
    const first = (pre.textContent.split('\n').find(l => l.length * 1 > 0) || '').slice(0, 90);
    const longest = Math.max(...pre.textContent.split('\n').map(l => l.length));
    const item = {over, longest, first};
    if (pre.closest('.cell-output')) out.wideOutputs.push(item); else out.wideCode.push(item);
  });
  document.querySelectorAll('main img').forEach(img => { if (!img.complete || img.naturalWidth === 0) out.images.push(img.getAttribute('src')); });
  // a figure's caption: its <figcaption> (tools/render_site.py), or a paragraph starting "Figure" right after the
  // cell (Quarto renders the book's caption cells that way)
  out.figures = 0; out.uncaptioned = [];
  document.querySelectorAll('main .cell-output-display img').forEach(img => {
    out.figures++;
    const cap = img.closest('figure') && img.closest('figure').querySelector('figcaption');
    const cell = img.closest('.cell');
    const next = cell && cell.nextElementSibling;
    const after = next && /^\s*Figure\b/.test(next.textContent) ? next.textContent : '';
    if (!((cap && cap.textContent.trim().length > 20) || after.length > 20))
      out.uncaptioned.push(img.getAttribute('src'));
  });
  return out;
})()"""

_SEARCH_PROBE = r"""new Promise(resolve => {
  const input = document.getElementById('search-input');
  if (!input) return resolve(null);
  input.value = %s; input.dispatchEvent(new Event('input'));
  const t0 = Date.now();
  const poll = () => {
    const box = document.getElementById('search-results');
    if (box && !box.hidden && box.dataset.count !== undefined)
      return resolve([...box.querySelectorAll('a')].map(a => a.getAttribute('href')));
    if (Date.now() - t0 > 15000) return resolve('timeout');
    setTimeout(poll, 50);
  };
  poll();
})"""

SEARCH_TERMS = ('im2col', 'roofline')


def check_in_browser(chromium: str, site: Path, shots: Path, strict_code: bool) -> tuple[list[str], list[str]]:
    "Open every page in headless Chromium; returns (errors, notes)."
    import json as _json
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from browser import Browser
    errors, notes = [], []
    shots.mkdir(parents=True, exist_ok=True)
    for old in shots.glob('*.png'): old.unlink()
    pages = sorted(f for f in site.glob('*.html') if 'http-equiv="refresh"' not in f.read_text(encoding='utf-8', errors='replace')[:600])
    b = Browser(chromium, width=1400, height=1000)
    try:
        for f in pages:
            b.goto(f.resolve().as_uri())
            time.sleep(0.2)
            r = b.eval(_PAGE_PROBE.replace('MAX_COLUMNS', str(code_width.MAX_COLUMNS)))
            name = f.name
            for e in b.console_errors(): errors.append(f'{name}: browser console: {e[:300]}')
            if not r['search']: errors.append(f'{name}: no search box')
            for t in r['untypeset'][:5]: errors.append(f'{name}: math not typeset: {t!r}')
            if len(r['untypeset']) > 5: errors.append(f'{name}: ... {len(r["untypeset"]) - 5} more untypeset math elements')
            for t in r['katexErrors'][:5]: errors.append(f'{name}: KaTeX error: {t}')
            for t in r['rawMd'][:10]: errors.append(f'{name}: raw markdown emphasis in the text: {t!r}')
            for w in r['wideOutputs'][:10]: errors.append(f'{name}: output block wider than the column by {w["over"]} px: {w["first"]!r}')
            for src in r['images']: errors.append(f'{name}: image does not load: {src}')
            for src in r['uncaptioned']: errors.append(f'{name}: figure without a caption: {src}')
            if r['wideCode']:
                longest = max(w['longest'] for w in r['wideCode'])
                errors.append(f'{name}: {len(r["wideCode"])} code block(s) need horizontal scrolling at 1400 px '
                              f'(longest line {longest} characters), e.g. {r["wideCode"][0]["first"]!r}')
            if r['longCode']:
                msg = (f'{name}: {r["longCode"]} code line(s) over {code_width.MAX_COLUMNS} columns '
                       f'(longest {r["longestCode"]}); they wrap on the page')
                (errors if strict_code and code_width.is_checked(f.stem) else notes).append(msg)
            if name == 'index.html':
                for term in SEARCH_TERMS:
                    hits = b.eval(_SEARCH_PROBE % _json.dumps(term))
                    if not isinstance(hits, list) or not any(re.match(r'\d\d[a-z]?_', h) for h in hits):
                        errors.append(f'{name}: searching for {term!r} finds no chapter section (got {hits!r})')
                    else: notes.append(f'search {term!r}: {len(hits)} result(s), first {hits[0]}')
                b.goto(f.resolve().as_uri())
            out = shots / (f.stem + '.png')
            scale = b.screenshot(str(out))
            errors += png_problems(out)
            shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
            print(f'check_site: looked at {name} ({r["math"]} math elements, {r["figures"]} figure(s), '
                  f'{len(r["wideCode"])} wide code block(s)); '
                  f'full-page screenshot {shown}' + (f' at {scale:.0%}' if scale < 1 else ''), flush=True)
    finally:
        b.close()
    return errors, notes


def png_problems(out: Path) -> list[str]:
    errors = []
    if not out.exists(): return [f'{out}: no screenshot']
    from PIL import Image
    Image.MAX_IMAGE_PIXELS = None  # a full-page screenshot of a long chapter is large, and ours
    with Image.open(out) as im:
        im.load()
        if im.format != 'PNG': errors.append(f'{out}: not a PNG ({im.format})')
        rgb = im.convert('RGB')
        if all(lo == hi for lo, hi in rgb.getextrema()): errors.append(f'{out}: blank screenshot (a single colour)')
        else:
            import numpy as np
            a = np.asarray(rgb.resize((max(1, rgb.width // 4), max(1, rgb.height // 4))), dtype=np.int16)
            ink = float((np.abs(a - a[-1, -1]).sum(axis=-1) > 60).mean())
            if ink < 0.005: errors.append(f'{out}: almost blank screenshot ({ink:.2%} non-background pixels)')
    return errors


def ensure_chromium() -> str:
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        exe = shutil.which(name)
        if exe: return exe
    print('check_site: no chromium on PATH; installing Debian\'s `chromium` package with apt-get (once; it is the '
          'headless browser that looks at the pages) ...', flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    sudo = [] if os.geteuid() == 0 else ['sudo']
    for cmd in (sudo + ['apt-get', 'update', '-qq'], sudo + ['apt-get', 'install', '-y', '-qq', 'chromium']):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode: sys.exit(f'check_site: `{" ".join(cmd)}` failed:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}')
    exe = shutil.which('chromium')
    if not exe: sys.exit('check_site: chromium still not on PATH after apt-get install')
    return exe


def main(argv=None) -> int:
    cp = configparser.ConfigParser(interpolation=None)
    cp.read(ROOT / 'settings.ini')
    cfg = cp['DEFAULT']
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--site', default=str(ROOT / cfg.get('doc_path', '_docs')))
    ap.add_argument('--nbs', default=str(ROOT / cfg.get('nbs_path', 'nbs')))
    ap.add_argument('--shots', default=str(ROOT / 'site_check'), help='folder for the screenshots')
    ap.add_argument('--no-browser', '--no-screenshots', action='store_true', help='only the static checks (no Chromium)')
    ap.add_argument('--strict-code', action='store_true',
                    help='fail on code lines over 100 columns in the chapters tools/code_width.py checks')
    a = ap.parse_args(argv)
    site, nbs, shots = Path(a.site).resolve(), Path(a.nbs).resolve(), Path(a.shots).resolve()
    if not site.is_dir(): sys.exit(f'check_site: FAILED: no site folder {site} (render it first)')
    errors = check_pages(site, nbs)
    link_errors, n_links = check_links(site)
    errors += link_errors
    n_pages = len(list(site.rglob('*.html')))
    print(f'check_site: {n_pages} page(s), {n_links} local link(s) checked')
    errors += check_citations(site)
    if a.strict_code:
        errors += [hit for nb in sorted(nbs.glob('*.ipynb')) if code_width.is_checked(nb.stem)
                   for hit in code_width.long_code_lines(nb)]
    notes = []
    if not a.no_browser:
        chromium = ensure_chromium()
        errs, notes = check_in_browser(chromium, site, shots, a.strict_code)
        errors += errs
    for n in notes: print(f'check_site: note: {n}')
    if errors:
        print(f'check_site: FAILED with {len(errors)} problem(s):', file=sys.stderr)
        for e in errors[:200]: print('  ' + e, file=sys.stderr)
        if len(errors) > 200: print(f'  ... and {len(errors) - 200} more', file=sys.stderr)
        return 1
    print('check_site: OK')
    return 0


if __name__ == '__main__':
    sys.exit(main())
