#!/usr/bin/env python
"""Run notebooks top to bottom and save their fresh outputs in place.

Cells run the way `nbdev_test` runs them (execnb's in-process `CaptureShell`, the notebook's folder as
working directory, `IN_TEST` unset so the outputs are the reader's), so a chapter that passes
`nbdev_test` also executes here. Cells that carry a test flag from settings.ini `tst_flags` that is not
enabled are not run and keep the outputs they had; `gpu` cells run only where `nvidia-smi -L` finds a
GPU, `slow` cells run unless `--skip-slow`. `#| eval: false` cells are not run. Each notebook runs in
its own process; the first error stops that notebook, leaves its file unchanged, and makes the script
exit non-zero. The notebooks are then cleaned with `nbdev_clean`.

Usage: .venv/bin/python tools/execute_nbs.py [--skip-slow] [--flags "gpu"] nbs/index.ipynb nbs/00_autograd.ipynb ...
"""
from __future__ import annotations

import argparse
import configparser
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _have_gpu() -> bool:
    smi = shutil.which('nvidia-smi')
    if not smi: return False
    try: return subprocess.run([smi, '-L'], capture_output=True, timeout=30).returncode == 0
    except Exception: return False


def run_one(fn: Path, run_flags: set[str]) -> int:
    "Execute one notebook in this process and write it back. Returns 0 on success."
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

    def no_eval(cell):
        if cell.cell_type != 'code': return True
        if 'nbdev_export' + '(' in cell.source: return True
        d = extract_directives(cell, remove=False, lang=lang)  # keep the source as it is
        if d.get('eval:', [''])[0].lower() == 'false': return True
        return bool(skip & d.keys())

    k = CaptureShell(fn)
    k._fname = fn
    start = time.time()
    cwd = os.getcwd()
    try:
        os.chdir(fn.parent)
        k.run_all(nb, exc_stop=True, preproc=no_eval)
    except BaseException:
        sys.stderr.write(k.prettytb(fname=fn) + '\n')
        return 1
    finally:
        os.chdir(cwd)
    write_nb(nb, fn)
    print(f'  executed {fn.name} in {time.time() - start:.1f}s', flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('notebooks', nargs='+')
    ap.add_argument('--skip-slow', action='store_true', help='do not run `#| slow` cells')
    ap.add_argument('--flags', default=None, help='space-separated test flags to run (default: slow, and gpu when a GPU is present)')
    ap.add_argument('--one', action='store_true', help=argparse.SUPPRESS)  # internal: run in this process
    a = ap.parse_args(argv)
    if a.flags is not None: flags = set(a.flags.split())
    else:
        flags = set() if a.skip_slow else {'slow'}
        if _have_gpu(): flags.add('gpu')
    fns = [Path(n).resolve() for n in a.notebooks]
    if a.one: return run_one(fns[0], flags)
    failed = []
    print(f'execute_nbs: running {len(fns)} notebook(s); flags run: {" ".join(sorted(flags)) or "none"}', flush=True)
    for fn in fns:
        r = subprocess.run([sys.executable, __file__, '--one', '--flags', ' '.join(sorted(flags)), str(fn)])
        if r.returncode: failed.append(fn.name)
    ok = [str(f) for f in fns if f.name not in failed]
    if ok:
        nbdev_clean = Path(sys.executable).parent / 'nbdev_clean'
        for f in ok:
            subprocess.run([str(nbdev_clean), '--fname', f], check=True, cwd=ROOT)
    if failed:
        print(f'execute_nbs: FAILED: {", ".join(failed)} (left unchanged)', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
