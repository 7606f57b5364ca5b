#!/usr/bin/env bash
# Build the book: run every chapter so its outputs are fresh, render the website into _docs/, check it.
#
#   bash tools/build_book.sh                # set up .venv, execute all pages, render, check
#   bash tools/build_book.sh --no-execute   # only re-render and check (outputs as saved in the notebooks)
#   bash tools/build_book.sh --skip-slow    # execute, but leave `#| slow` cells with their saved outputs
#   bash tools/build_book.sh --no-check     # skip tools/check_site.py
#
# Pages: nbs/index.ipynb and nbs/[0-9][0-9]*_*.ipynb (chapters NN_name, sub-chapters NNa_name). They are
# executed in place (the outputs are part of the book) with tools/execute_nbs.py, which runs cells as
# nbdev_test does and then nbdev_clean's them, printing the running cell's heading at least every 20 s;
# `#| gpu` cells run only where a GPU is present. The site is rendered with nbdev + Quarto when
# `quarto` is on PATH, otherwise with tools/render_site.py (nbdev's processing + pandoc, offline).
# Only the `book` extra is installed (tools/setup.sh book): no chapter imports PyTorch. The site check drives
# headless Chromium, and installs Debian's `chromium` package with apt-get when no chromium is on PATH.
# README.md is hand-written: nothing here regenerates it (nbdev_docs would, so its steps are run
# without the README step).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

execute=1; check=1; exec_args=()
for arg in "$@"; do
  case "$arg" in
    --no-execute) execute=0 ;;
    --skip-slow) exec_args+=(--skip-slow) ;;
    --no-check) check=0 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "build_book.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done

bash tools/setup.sh book   # the book's packages only: no PyTorch (the tests' `dev` extra has it)
PY=.venv/bin/python
export MPLBACKEND=Agg PYTHONUNBUFFERED=1

shopt -s nullglob
pages=(nbs/index.ipynb nbs/[0-9][0-9]*_*.ipynb)  # one glob: 05_, 06a_, 06b_, 07_ sort in book order
shopt -u nullglob
echo "build_book: ${#pages[@]} page(s): ${pages[*]}"

if [ "$execute" = 1 ]; then
  echo "build_book: executing the pages (this takes a while; --no-execute skips it)"
  "$PY" tools/execute_nbs.py "${exec_args[@]}" "${pages[@]}"
fi

if command -v quarto >/dev/null 2>&1; then
  echo "build_book: rendering with nbdev + Quarto ($(quarto --version))"
  # = nbdev_docs without its nbdev_readme/nbdev_contributing steps, which would overwrite README.md
  .venv/bin/nbdev_proc_nbs
  rm -rf _proc/katex && cp -r tools/site/katex _proc/katex  # math from the shipped KaTeX (_quarto.yml), no CDN
  (cd _proc && quarto render --no-cache)
  rm -rf _docs
  mv _proc/_docs _docs
else
  echo "build_book: quarto not found; rendering with tools/render_site.py (nbdev processing + pandoc)"
  "$PY" tools/render_site.py
fi

if [ "$check" = 1 ]; then
  "$PY" tools/check_site.py
fi
echo "build_book: the site is in $ROOT/_docs -- open file://$ROOT/_docs/index.html"
