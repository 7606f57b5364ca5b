#!/usr/bin/env python
"""Check the rendered website in `_docs/`.

1. every expected page exists: `index.html` and one `NN_name.html` per chapter `nbs/NN_name.ipynb` or
   sub-chapter `nbs/NNa_name.ipynb`;
2. in every HTML page of the site, every local `href`/`src` (not http(s), mailto, data, javascript)
   resolves to a file of the site, and a `#fragment` names an `id` (or `name`) in the target page;
   every `<img>` has a source that resolves;
3. headless Chromium screenshots the front page and chapter 00 (when present) to `site_check/*.png`;
   each must be a non-blank PNG, and the page must not log JavaScript errors ("Uncaught ...").
   Chromium is installed with apt-get when `chromium` is not on PATH.

Exits non-zero with a list of what is wrong.

Usage: .venv/bin/python tools/check_site.py [--site _docs] [--nbs nbs] [--shots site_check] [--no-screenshots]
"""
from __future__ import annotations

import argparse
import configparser
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
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


def ensure_chromium() -> str:
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        exe = shutil.which(name)
        if exe: return exe
    print('check_site: chromium not found; installing it with apt-get ...', flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    sudo = [] if os.geteuid() == 0 else ['sudo']
    for cmd in (sudo + ['apt-get', 'update', '-qq'], sudo + ['apt-get', 'install', '-y', '-qq', 'chromium']):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode: sys.exit(f'check_site: `{" ".join(cmd)}` failed:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}')
    exe = shutil.which('chromium')
    if not exe: sys.exit('check_site: chromium still not on PATH after apt-get install')
    return exe


def screenshot(chromium: str, page: Path, out: Path, size=(1280, 1600)) -> list[str]:
    errors = []
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists(): out.unlink()
    with tempfile.TemporaryDirectory(prefix='chromium-profile-') as prof:
        cmd = [chromium, '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
               '--disable-background-networking', '--disable-component-update', '--disable-sync',
               '--disable-dev-shm-usage', '--hide-scrollbars', '--enable-logging=stderr', '--v=0',
               f'--user-data-dir={prof}', f'--screenshot={out}', f'--window-size={size[0]},{size[1]}',
               page.resolve().as_uri()]
        try: r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        except subprocess.TimeoutExpired: return [f'chromium timed out on {page.name}']
    log = r.stdout + r.stderr
    for line in log.splitlines():
        if 'Uncaught' in line or re.search(r'CONSOLE\(\d+\)].*(?:Error|error)', line) or 'Failed to load resource' in line:
            errors.append(f'{page.name}: browser console: {line.strip()}')
    if r.returncode != 0 or not out.exists():
        return errors + [f'chromium failed on {page.name} (exit {r.returncode}):\n{log[-3000:]}']
    from PIL import Image
    with Image.open(out) as im:
        im.load()
        if im.format != 'PNG': errors.append(f'{out}: not a PNG ({im.format})')
        rgb = im.convert('RGB')
        lo_hi = rgb.getextrema()
        if all(lo == hi for lo, hi in lo_hi): errors.append(f'{out}: blank screenshot (a single colour)')
        else:
            # a rendered page has a fair amount of ink: text, rules, code backgrounds
            import numpy as np
            a = np.asarray(rgb.resize((rgb.width // 4, rgb.height // 4)), dtype=np.int16)
            bg = a[-1, -1]
            ink = float((np.abs(a - bg).sum(axis=-1) > 60).mean())
            if ink < 0.005: errors.append(f'{out}: almost blank screenshot ({ink:.2%} non-background pixels)')
    return errors


def main(argv=None) -> int:
    cp = configparser.ConfigParser(interpolation=None)
    cp.read(ROOT / 'settings.ini')
    cfg = cp['DEFAULT']
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--site', default=str(ROOT / cfg.get('doc_path', '_docs')))
    ap.add_argument('--nbs', default=str(ROOT / cfg.get('nbs_path', 'nbs')))
    ap.add_argument('--shots', default=str(ROOT / 'site_check'), help='folder for the screenshots')
    ap.add_argument('--no-screenshots', action='store_true', help='only check pages and links')
    ap.add_argument('--page', action='append', default=[], help='also screenshot this page of the site (repeatable)')
    a = ap.parse_args(argv)
    site, nbs, shots = Path(a.site).resolve(), Path(a.nbs).resolve(), Path(a.shots).resolve()
    if not site.is_dir(): sys.exit(f'check_site: FAILED: no site folder {site} (render it first)')
    errors = check_pages(site, nbs)
    link_errors, n_links = check_links(site)
    errors += link_errors
    n_pages = len(list(site.rglob('*.html')))
    print(f'check_site: {n_pages} page(s), {n_links} local link(s) checked')
    if not a.no_screenshots:
        chromium = ensure_chromium()
        targets = [('index', site / 'index.html')]
        ch0 = [chapter_page(site, nb) for nb in sorted(nbs.glob('00_*.ipynb'))]
        if ch0: targets.append(('chapter00', ch0[0] or site / (sorted(nbs.glob('00_*.ipynb'))[0].stem + '.html')))
        targets += [(Path(p).stem, site / p) for p in a.page]
        for label, pg in targets:
            if not pg.exists():
                errors.append(f'no page {pg} to screenshot'); continue
            out = shots / f'{label}.png'
            errs = screenshot(chromium, pg, out)
            errors += errs
            if not errs: print(f'check_site: screenshot {out}')
    if errors:
        print(f'check_site: FAILED with {len(errors)} problem(s):', file=sys.stderr)
        for e in errors[:200]: print('  ' + e, file=sys.stderr)
        if len(errors) > 200: print(f'  ... and {len(errors) - 200} more', file=sys.stderr)
        return 1
    print('check_site: OK')
    return 0


if __name__ == '__main__':
    sys.exit(main())
