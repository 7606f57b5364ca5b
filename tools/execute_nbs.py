#!/usr/bin/env python
"""Run notebooks top to bottom and save their fresh outputs in place.

Cells run the way `nbdev_test` runs them (execnb's in-process `CaptureShell`, the notebook's folder as
working directory, `IN_TEST` unset so the outputs are the reader's), so a chapter that passes
`nbdev_test` also executes here. Cells that carry a test flag from settings.ini `tst_flags` that is not
enabled are not run and keep the outputs they had; `gpu` cells run only where `nvidia-smi -L` finds a
GPU, `slow` cells run unless `--skip-slow`. `#| eval: false` cells are not run. Each notebook runs in
its own process; the first error stops that notebook, leaves its file unchanged, and makes the script
exit non-zero. The notebooks are then cleaned with `nbdev_clean`.

Progress: a line when a notebook starts and ends, and every 20 s the cell running (its number and the
heading of the section it is in). Outputs carry no machine paths: the project's folder, the home folder,
Python's own prefix and the temporary folder are replaced by relative or neutral names
(`normalise_outputs`), so a rebuild on another machine gives the same text.

Usage: .venv/bin/python tools/execute_nbs.py [--skip-slow] [--flags "gpu"] nbs/index.ipynb nbs/00_autograd.ipynb ...
"""
from __future__ import annotations

import argparse
import configparser
import os
import shutil
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _have_gpu() -> bool:
    smi = shutil.which('nvidia-smi')
    if not smi: return False
    try: return subprocess.run([smi, '-L'], capture_output=True, timeout=30).returncode == 0
    except Exception: return False


def _path_rules() -> list[tuple[re.Pattern, str]]:
    "Machine-specific path prefixes and what they become in saved outputs (longest first)."
    import sysconfig
    paths = sysconfig.get_paths()
    pairs = [(str(ROOT) + os.sep, ''), (str(ROOT), '.'), (paths['purelib'] + os.sep, '<site-packages>' + os.sep),
             (paths['stdlib'] + os.sep, '<stdlib>' + os.sep), (str(Path.home()) + os.sep, '~' + os.sep),
             (tempfile.gettempdir().rstrip(os.sep) + os.sep, '<tmp>' + os.sep)]
    pairs = [(a, b) for a, b in pairs if len(a) > 1]
    rules = [(re.compile(r'/tmp/ipykernel_\d+/\d+\.py'), '<notebook cell>')]
    for a, b in sorted(pairs, key=lambda p: -len(p[0])):
        rules.append((re.compile(re.escape(a)), b))
    return rules


def _normalise(text: str, rules) -> str:
    for rx, new in rules: text = rx.sub(new.replace('\\', '\\\\'), text)
    return text


def normalise_outputs(nb, rules=None) -> int:
    "Replace machine paths in every text output of `nb` (a dict or execnb notebook); returns how many changed."
    rules = rules or _path_rules()
    n = 0

    def fix(v):
        nonlocal n
        if isinstance(v, list): new = [_normalise(x, rules) if isinstance(x, str) else x for x in v]
        elif isinstance(v, str): new = _normalise(v, rules)
        else: return v
        if new != v: n += 1
        return new
    for cell in nb['cells']:
        for o in cell.get('outputs') or []:
            if 'text' in o: o['text'] = fix(o['text'])
            if 'traceback' in o: o['traceback'] = fix(o['traceback'])
            if 'evalue' in o: o['evalue'] = fix(o['evalue'])
            for mime in list((o.get('data') or {})):
                if mime.startswith('text/'): o['data'][mime] = fix(o['data'][mime])
    return n


class _Progress:
    "Prints the running cell (number, section heading) every `every` seconds from a background thread."

    def __init__(self, name: str, cells, every: float = 20.0):
        self.name, self.cells, self.every = name, cells, every
        self.n_code = sum(c.cell_type == 'code' for c in cells)
        self.idx, self.k, self.heading, self.t0 = None, 0, '', time.time()
        self.fd = os.dup(sys.__stdout__.fileno())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def at(self, cell):
        "Called before each code cell runs."
        self.k += 1
        self.idx = cell.idx_
        for c in reversed(self.cells[:cell.idx_]):
            if c.cell_type == 'markdown':
                m = re.search(r'^#{1,4}\s+(.+)$', c.source, re.M)
                if m:
                    self.heading = m.group(1).strip()[:70]
                    break

    def _run(self):
        while not self._stop.wait(self.every):
            where = f' in "{self.heading}"' if self.heading else ''
            line = f'  ... {self.name}: cell {self.k}/{self.n_code}{where}, {time.time() - self.t0:.0f}s\n'
            os.write(self.fd, line.encode())  # the terminal: the running cell's sys.stdout is captured into the notebook

    def __enter__(self): self._thread.start(); return self

    def __exit__(self, *a):
        self._stop.set(); self._thread.join(); os.close(self.fd)


def run_one(fn: Path, run_flags: set[str], keep_going: bool = False) -> int:
    """Execute one notebook in this process and write it back. Returns 0 on success. With `keep_going`, a cell's
    error is saved as its output, the rest still run, the notebook is written, and 1 is returned."""
    os.environ.setdefault('MPLBACKEND', 'Agg')
    from execnb.nbio import read_nb, write_nb
    from execnb.shell import CaptureShell
    from nbdev.process import extract_directives, nb_lang
    cp = configparser.ConfigParser(interpolation=None)
    cp.read(ROOT / 'settings.ini')
    all_flags = set(cp['DEFAULT'].get('tst_flags', '').split())
    skip = all_flags - run_flags
    nb = read_nb(fn)
    lang = nb_lang(nb)
    for i, cell in enumerate(nb.cells): cell.idx_ = i

    progress = _Progress(fn.name, nb.cells)

    def no_eval(cell):
        if cell.cell_type != 'code': return True
        progress.at(cell)
        if 'nbdev_export' + '(' in cell.source: return True
        d = extract_directives(cell, remove=False, lang=lang)  # keep the source as it is
        if d.get('eval:', [''])[0].lower() == 'false': return True
        return bool(skip & d.keys())

    k = CaptureShell(fn)
    k._fname = fn
    start = time.time()
    cwd = os.getcwd()
    print(f'  executing {fn.name} ({progress.n_code} code cells)', flush=True)
    try:
        os.chdir(fn.parent)
        with progress: k.run_all(nb, exc_stop=not keep_going, preproc=no_eval)
    except BaseException:
        sys.stderr.write(k.prettytb(fname=fn) + '\n')
        return 1
    finally:
        os.chdir(cwd)
    normalise_outputs(nb)
    write_nb(nb, fn)
    errors = [c.idx_ for c in nb.cells if any(o.get('output_type') == 'error' for o in c.get('outputs', []))]
    print(f'  executed {fn.name} in {time.time() - start:.1f}s' + (f'; errors in cells {errors}' if errors else ''),
          flush=True)
    return 1 if errors else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('notebooks', nargs='+')
    ap.add_argument('--skip-slow', action='store_true', help='do not run `#| slow` cells')
    ap.add_argument('--flags', default=None, help='space-separated test flags to run (default: slow, and gpu when a GPU is present)')
    ap.add_argument('--keep-going', action='store_true', help='run every cell even after an error (errors saved)')
    ap.add_argument('--one', action='store_true', help=argparse.SUPPRESS)  # internal: run in this process
    a = ap.parse_args(argv)
    if a.flags is not None: flags = set(a.flags.split())
    else:
        flags = set() if a.skip_slow else {'slow'}
        if _have_gpu(): flags.add('gpu')
    fns = [Path(n).resolve() for n in a.notebooks]
    if a.one: return run_one(fns[0], flags, a.keep_going)
    failed = []
    print(f'execute_nbs: running {len(fns)} notebook(s); flags run: {" ".join(sorted(flags)) or "none"}', flush=True)
    for fn in fns:
        keep = ['--keep-going'] if a.keep_going else []
        r = subprocess.run([sys.executable, __file__, '--one', '--flags', ' '.join(sorted(flags)), *keep, str(fn)])
        if r.returncode: failed.append(fn.name)
    ok = [str(f) for f in fns if f.name not in failed]
    if ok:
        nbdev_clean = Path(sys.executable).parent / 'nbdev_clean'
        for f in ok:
            subprocess.run([str(nbdev_clean), '--fname', f], check=True, cwd=ROOT)
    if failed:
        where = 'errors saved in the notebooks' if a.keep_going else 'left unchanged'
        print(f'execute_nbs: FAILED: {", ".join(failed)} ({where})', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
