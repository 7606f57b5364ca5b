#!/usr/bin/env bash
# One prepared check for a machine with an NVIDIA GPU (an H200 lent for a few minutes): what the GPU sees,
# our matmul kernels against cuBLAS at 4096 x 4096 float32, the GPU tests, the chapter run with its `#| gpu`
# cells (the executed copy saved as $OUT/06c_cuda.ipynb: bench/gpu_outputs.py takes those cells' outputs into
# the book), the op table against PyTorch on device 'cuda', and the layer tests with 'cuda' among the devices.
#
#   bash bench/gpu_check.sh [NOTEBOOK]          NOTEBOOK: default nbs/06c_cuda.ipynb
#   GPU_CHECK_DRY=1 bash bench/gpu_check.sh     no GPU: the same steps on the CPU (simulator, small sizes)
#
# Writes $OUT/gpu_check.json (timings, plus each step's exit status) and $OUT/gpu_check.log (everything
# printed); OUT defaults to bench/results. Wheels for what the machine lacks (nbdev and its needs) are taken
# from .whl/ if present (bash bench/gpu_wheels.sh makes it; see bench/README.md). Every step runs under
# `timeout`, inside one budget (GPU_CHECK_BUDGET seconds, default 420): the script ends within 7 minutes.
# Exit status: 0 if every step that ran passed (skipped steps say why), 1 otherwise.
# shellcheck disable=SC2317  # (the helper functions run through step's bash -c, which shellcheck cannot follow)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
REPO=$PWD
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
DRY=${GPU_CHECK_DRY:-0}
BUDGET=${GPU_CHECK_BUDGET:-420}
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

numpy_compat() {  # numba-cuda 0.30 still overloads np.row_stack, which numpy 2.5 removed: give it the old alias
  mkdir -p "$SITE"
  echo 'import numpy; numpy.row_stack = getattr(numpy, "row_stack", numpy.vstack)' > "$SITE/sitecustomize.py"
}

op_table_on_cuda() {  # every op of tests/op_specs.py against PyTorch, inputs on device 'cuda'
  # shellcheck disable=SC2046
  MINITORCH_HARNESS_DEVICE=cuda "$PY" -m pytest -q -p no:cacheprovider -p no:benchmark $("$PY" -c "import xdist" 2>/dev/null && echo "-n 8") --tb=short \
    tests/test_op_harness.py > "$OUT/op_table_cuda.log" 2>&1
  local rc=$?; tail -5 "$OUT/op_table_cuda.log"; return $rc
}

layers_on_cuda() {  # the layer tests, 'cuda' as their differential device
  # shellcheck disable=SC2046
  MINITORCH_TEST_DEVICES=cuda "$PY" -m pytest -q -p no:cacheprovider -p no:benchmark $("$PY" -c "import xdist" 2>/dev/null && echo "-n 8") --tb=short \
    tests/test_conv.py tests/test_norm.py tests/test_nn.py tests/test_devices.py > "$OUT/layers_cuda.log" 2>&1
  local rc=$?; grep -E "^(FAILED|ERROR)" "$OUT/layers_cuda.log" | head -40; tail -2 "$OUT/layers_cuda.log"; return $rc
}

record_notebook() {  # run NOTEBOOK with its gpu cells, every cell even after an error; keep the executed copy
  "$PY" tools/execute_nbs.py --one --keep-going --flags gpu "$1"; local rc=$?
  cp "$1" "$OUT/$(basename "$1")"; return $rc
}

gpu_tests() {  # the tests that compile or run CUDA code (not the simulator's: it needs no GPU)
  local files=(tests/test_cuda_ptx.py) f
  for f in tests/test_gpu*.py; do [ -e "$f" ] && files+=("$f"); done
  local workers=()  # 4 processes where there are cores for them (the GPU machine's 16) and pytest-xdist
  if [ "$(nproc)" -ge 8 ] && "$PY" -c "import xdist" 2>/dev/null; then workers=(-n 4); fi
  "$PY" -m pytest -q -p no:cacheprovider "${workers[@]}" -rs --durations=5 "${files[@]}"
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
    step "gpu tests (PTX compile, no GPU)" 150 gpu_tests
    if [ ! -f "$NOTEBOOK" ]; then fail "notebook #| gpu cells" "no notebook $NOTEBOOK"
    elif ! "$PY" -c "import nbdev" 2>/dev/null; then fail "notebook #| gpu cells" "nbdev not importable by $PY"
    else skip "notebook #| gpu cells" "dry run: a GPU run does tools/execute_nbs.py --one --keep-going --flags gpu $NOTEBOOK"
    fi
  else
    step "nvidia-smi" 20 nvidia-smi
    step "carried wheels" 60 carried_wheels
    step "numpy 2.5 alias for numba-cuda" 10 numpy_compat
    export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
    if [ -d "$SITE" ]; then export PYTHONPATH="$PYTHONPATH:$SITE"; fi
    # the numbers first: they come back even if a later step runs out of time
    step "matmul vs cuBLAS (4096, float32)" 90 "$PY" bench/gpu_matmul.py --out "$OUT/gpu_check.json"
    step "gpu tests" 90 gpu_tests
    if [ ! -f "$NOTEBOOK" ]; then fail "notebook #| gpu cells" "no notebook $NOTEBOOK"
    elif ! "$PY" -c "import nbdev" 2>/dev/null; then
      fail "notebook #| gpu cells" "nbdev not importable by $PY: carry wheels (bash bench/gpu_wheels.sh, bench/README.md)"
    else
      step "notebook #| gpu cells" 120 record_notebook "$NOTEBOOK"
    fi
    step "op table on cuda" 120 op_table_on_cuda
    step "layer tests on cuda" 100 layers_on_cuda
  fi
  summary
}

export PY SITE OUT
main "$@" 2>&1 | tee "$OUT/gpu_check.log"
exit "${PIPESTATUS[0]}"
