#!/usr/bin/env bash
# One prepared check for a machine with an NVIDIA GPU (an H200 lent for a few minutes): what the GPU sees,
# our matmul kernels against cuBLAS at 4096 x 4096 float32, the GPU tests, the chapter's `#| gpu` cells.
#
#   bash bench/gpu_check.sh [NOTEBOOK]          NOTEBOOK: default nbs/06c_cuda.ipynb
#   GPU_CHECK_DRY=1 bash bench/gpu_check.sh     no GPU: the same steps on the CPU (simulator, small sizes)
#
# Writes $OUT/gpu_check.json (timings, plus each step's exit status) and $OUT/gpu_check.log (everything
# printed); OUT defaults to bench/results. Wheels for what the machine lacks (nbdev and its needs) are taken
# from .whl/ if present (bash bench/gpu_wheels.sh makes it; see bench/README.md). Every step runs under
# `timeout`, inside one budget (GPU_CHECK_BUDGET seconds, default 285): the script ends within 5 minutes.
# Exit status: 0 if every step that ran passed (skipped steps say why), 1 otherwise.
# shellcheck disable=SC2317  # (the helper functions run through step's bash -c, which shellcheck cannot follow)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
REPO=$PWD
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
DRY=${GPU_CHECK_DRY:-0}
BUDGET=${GPU_CHECK_BUDGET:-285}
SITE=${GPU_CHECK_SITE:-/tmp/gpu_check_site}
NOTEBOOK=${1:-nbs/06c_cuda.ipynb}
if [ -x .venv/bin/python ] && [ "$DRY" = 1 ]; then PY=${PYTHON:-.venv/bin/python}; else PY=${PYTHON:-python3}; fi
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg PYTHONHASHSEED=0
START=$SECONDS
STEPS=()  # "name<TAB>exit<TAB>seconds" per step; exit "skip" for a step that did not run

say() { printf '%s\n' "$@"; }  # one line per argument

left() { echo $((BUDGET - (SECONDS - START))); }

step() {  # step NAME LIMIT_S COMMAND...: run under timeout, within what is left of the budget
  local name=$1 limit=$2; shift 2
  local remaining; remaining=$(left)
  if [ "$remaining" -lt 10 ]; then skip "$name" "only ${remaining}s left of the ${BUDGET}s budget"; return; fi
  [ "$limit" -le "$remaining" ] || limit=$remaining
  say "" "== $name (at most ${limit}s): $*"
  local t0=$SECONDS rc
  if declare -F "$1" >/dev/null; then  # a function of this script: timeout needs a program, so a bash that has it
    timeout --kill-after=5 "$limit" bash -c "$(declare -f "$1"); \"\$@\"" "$1" "$@" </dev/null
  else
    timeout --kill-after=5 "$limit" "$@" </dev/null
  fi
  rc=$?
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then say "== $name: TIMED OUT after ${limit}s"; fi
  say "== $name: exit $rc after $((SECONDS - t0))s"
  STEPS+=("$name"$'\t'"$rc"$'\t'"$((SECONDS - t0))")
}

skip() { say "" "== $1: SKIPPED: $2"; STEPS+=("$1"$'\t'skip$'\t'0); }

fail() { say "" "== $1: FAILED: $2"; STEPS+=("$1"$'\t'1$'\t'0); }

carried_wheels() {  # install .whl/*.whl into $SITE (no index: the GPU machine reaches no registry)
  local wheels=(.whl/*.whl)
  if [ ! -e "${wheels[0]}" ]; then echo "no .whl/ folder: using $PY's own packages"; return 0; fi
  echo "${#wheels[@]} wheels from .whl/ into $SITE"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "${wheels[@]}"
}

gpu_tests() {  # the tests that compile or run CUDA code (not the simulator's: it needs no GPU)
  local files=(tests/test_cuda_ptx.py) f
  for f in tests/test_gpu*.py; do [ -e "$f" ] && files+=("$f"); done
  "$PY" -m pytest -q -p no:cacheprovider "${files[@]}"
}

run_notebook() {  # run_notebook PATH FLAGS: nbdev_test through the chosen python (its console script may name another)
  "$PY" -c 'import sys; from nbdev.test import nbdev_test; nbdev_test(path=sys.argv[1], flags=sys.argv[2], do_print=True)' "$@"
}

summary() {  # each step's exit status into gpu_check.json (written by the benchmark, or new); exit 1 if one failed
  say "" "== summary: $((SECONDS - START))s of the ${BUDGET}s budget"
  printf '%s\n' "${STEPS[@]}" | "$PY" -c '
import json, sys
path, dry = sys.argv[1], sys.argv[2] == "1"
try:
    with open(path) as f: report = json.load(f)
except (OSError, ValueError):
    report = {"dry": dry, "ok": False, "note": "the benchmark wrote no results"}
report["steps"], failed = {}, False
for line in sys.stdin.read().splitlines():
    name, rc, secs = line.split("\t")
    report["steps"][name] = {"exit": rc if rc == "skip" else int(rc), "seconds": int(secs)}
    failed |= rc not in ("0", "skip")
    print(f"  {name:36s} {rc:>5s} {secs:>4s}s")
with open(path, "w") as f: json.dump(report, f, indent=1)
print("results:", path)
sys.exit(1 if failed else 0)
' "$OUT/gpu_check.json" "$DRY"
}

main() {
  say "gpu_check: $(date -u +%FT%TZ), repo $REPO, python $PY, notebook $NOTEBOOK, dry=$DRY, out $OUT"
  rm -f "$OUT/gpu_check.json"
  if [ "$DRY" = 1 ]; then
    skip "nvidia-smi" "dry run (GPU_CHECK_DRY=1): no GPU"
    if [ -d .whl ]; then say "dry run: a GPU run would install the wheels in .whl/ into $SITE"; fi
    export PYTHONPATH="$REPO"
    step "matmul vs numpy (simulator, n=20)" 90 env NUMBA_ENABLE_CUDASIM=1 "$PY" bench/gpu_matmul.py --dry --out "$OUT/gpu_check.json"
    step "gpu tests (PTX compile, no GPU)" 90 gpu_tests
    if [ ! -f "$NOTEBOOK" ]; then fail "notebook #| gpu cells" "no notebook $NOTEBOOK"
    elif ! "$PY" -c "import nbdev" 2>/dev/null; then fail "notebook #| gpu cells" "nbdev not importable by $PY"
    else skip "notebook #| gpu cells" "dry run: a GPU run does nbdev_test --flags gpu --do_print --path $NOTEBOOK"
    fi
  else
    step "nvidia-smi" 20 nvidia-smi
    step "carried wheels" 60 carried_wheels
    export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
    if [ -d "$SITE" ]; then export PYTHONPATH="$PYTHONPATH:$SITE"; fi
    # the numbers first: they come back even if a later step runs out of time
    step "matmul vs cuBLAS (4096, float32)" 90 "$PY" bench/gpu_matmul.py --out "$OUT/gpu_check.json"
    step "gpu tests" 60 gpu_tests
    if [ ! -f "$NOTEBOOK" ]; then fail "notebook #| gpu cells" "no notebook $NOTEBOOK"
    elif ! "$PY" -c "import nbdev" 2>/dev/null; then
      fail "notebook #| gpu cells" "nbdev not importable by $PY: carry wheels (bash bench/gpu_wheels.sh, bench/README.md)"
    else
      step "notebook #| gpu cells" 150 run_notebook "$NOTEBOOK" gpu
    fi
  fi
  summary
}

export PY SITE
main "$@" 2>&1 | tee "$OUT/gpu_check.log"
exit "${PIPESTATUS[0]}"
