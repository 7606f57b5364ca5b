#!/usr/bin/env bash
# Open the book's chapters (nbs/) in Jupyter Lab, from the project's .venv (created on first use with the
# `book` extra: tools/setup.sh book).
#
#   bash tools/jupyter.sh                              # Jupyter Lab on nbs/, opens a browser if there is one
#   bash tools/jupyter.sh --no-browser --port 8899     # extra arguments go to `jupyter lab`
#   bash tools/jupyter.sh --help                       # this text (`.venv/bin/jupyter lab --help` for Jupyter's own)
#
# As root (a container, a CI machine) it passes --allow-root, which Jupyter otherwise requires.
set -euo pipefail
cd "$(dirname "$0")/.."
for arg in "$@"; do
  case "$arg" in -h|--help) sed -n '2,9p' "$0"; exit 0 ;; esac
done
bash tools/setup.sh book
extra=()
if [ "$(id -u)" = 0 ]; then extra+=(--allow-root); fi
exec .venv/bin/jupyter lab --notebook-dir=nbs "${extra[@]}" "$@"
