#!/usr/bin/env bash
# Open the book's chapters (nbs/) in Jupyter Lab, from the project's .venv (created on first use).
# Extra arguments go to `jupyter lab`, e.g.  bash tools/jupyter.sh --no-browser --port 8899
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
exec .venv/bin/jupyter lab --notebook-dir=nbs "$@"
