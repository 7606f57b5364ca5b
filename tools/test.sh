#!/usr/bin/env bash
# Run every check of the project; the last line is pytest's "N passed".
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
export MPLBACKEND=Agg PYTHONHASHSEED=0
BIN=.venv/bin

snapshot() {  # content hashes of the sources nbdev writes, new files included
  find minitorch_nb nbs -type f -not -path '*/__pycache__/*' -not -path '*/.ipynb_checkpoints/*' -print0 \
    | sort -z | xargs -0 sha256sum
}

step() { printf '\n== %s\n' "$*"; }

unchanged_by() {  # run a command; fail, showing what changed, if it changed the sources
  local hint=$1; shift
  local before; before=$(snapshot)
  "$@"
  if [ "$before" != "$(snapshot)" ]; then
    echo "$* changed the sources: $hint"
    diff <(echo "$before") <(snapshot) || true
    exit 1
  fi
}

step "notebooks and package in sync (tools/export.py, nbdev_export with the doc-index fix, changes nothing)"
unchanged_by "export the notebooks (python tools/export.py) and commit the result" $BIN/python tools/export.py

step "notebooks clean (nbdev_clean changes nothing)"
unchanged_by "run nbdev_clean and commit the result" $BIN/nbdev_clean

step "the package imports in a fresh interpreter"
$BIN/python -c "import minitorch_nb as mt; print('minitorch_nb', mt.__version__)"

step "no undefined names in the package (ruff F821)"
$BIN/ruff check --no-cache --select F821 minitorch_nb

step "chapter rules: earlier chapters only, no replaced attributes"
$BIN/python tools/check_chapters.py

step "every chapter runs (nbdev_test)"
$BIN/nbdev_test --n_workers 2

step "tests (pytest)"
$BIN/python -m pytest tests/ -q -n 2 -p no:cacheprovider
