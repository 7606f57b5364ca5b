#!/usr/bin/env bash
# Create .venv and install the project into it, with the extra a command needs:
#
#   bash tools/setup.sh          # `dev`: the book's packages plus the tests' (pytest, PyTorch CPU as the oracle, ...)
#   bash tools/setup.sh book     # `book`: only what running and rendering the book needs (no PyTorch)
#
# tools/test.sh uses `dev`; tools/build_book.sh and tools/jupyter.sh use `book`. Safe to run again: it installs
# only when pyproject.toml changed since the last install or the extra asked for is not there yet (`dev`
# includes `book`). pip runs quietly; a line says what each step does, and a long step says it is still going.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
extra=${1:-dev}
case "$extra" in
  dev) check="import minitorch_nb, nbdev, torch" ;;
  book) check="import minitorch_nb, nbdev, matplotlib" ;;
  *) echo "setup.sh: unknown extra '$extra' (book or dev)" >&2; exit 2 ;;
esac
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating the virtual environment .venv ($("$PY" --version))"
  "$PY" -m venv .venv
fi
stamp=.venv/.minitorch_nb-installed
hash=$(sha256sum pyproject.toml | cut -d' ' -f1)
have=$(cat "$stamp" 2>/dev/null || true)   # "<hash> <extra>"
covered=0
if [ "${have%% *}" = "$hash" ]; then
  case "${have#* }:$extra" in dev:*|book:book) covered=1 ;; esac
fi
if [ "$covered" = 1 ] && .venv/bin/python -c "$check" 2>/dev/null; then exit 0; fi

ticker() {  # a line every 20 s while a long step runs
  local what=$1 t=0
  while sleep 20; do t=$((t + 20)); echo "setup: ... still $what (${t}s)"; done
}
step() {  # step "what it does" command...
  local what=$1; shift
  echo "setup: $what"
  ticker "$what" & local tick=$!
  local rc=0
  "$@" || rc=$?
  kill "$tick" 2>/dev/null; wait "$tick" 2>/dev/null || true
  return $rc
}
step "upgrading pip" .venv/bin/python -m pip install --quiet --upgrade pip
step "installing the project with its '$extra' extra (pyproject.toml; a few minutes the first time)" \
  .venv/bin/python -m pip install --quiet -e ".[$extra]"
# keep the wider extra if it was installed before: dev covers book
if [ "${have#* }" = dev ] && [ "$extra" = book ] && .venv/bin/python -c "import torch" 2>/dev/null; then extra=dev; fi
echo "$hash $extra" > "$stamp"
echo "setup: .venv ready ($extra)"
