#!/usr/bin/env bash
# Download, here (where PyPI is reachable), the wheels that bench/gpu_check.sh installs on the GPU machine,
# which reaches no registry: what its Python 3.12 image lacks to run the chapters with nbdev_test. That image
# already has numpy, numba, numba-cuda, CuPy, PyTorch, pytest, hypothesis, matplotlib, scikit-learn, PyYAML,
# packaging, psutil, pygments (see the device notes); carry only what is missing, one version of each.
#
#   bash bench/gpu_wheels.sh            -> .whl/*.whl (ignored by git; name `.whl` in the device tool's carry)
#
# Versions are those of this checkout's .venv (made by tools/setup.sh), so the GPU machine runs the
# notebooks with the nbdev set the book pins; without a .venv, the pins below and the newest of the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
PINNED="nbdev==2.4.14 fastcore==1.14.5 execnb==0.1.18 ghapi==1.1.1 fastgit==0.1.4"
# nbdev's and execnb's needs (IPython's among them) that the GPU image lacks
NEEDS="astunparse asttokens watchdog ipython ipython-pygments-lexers jedi parso matplotlib-inline pexpect
ptyprocess prompt-toolkit wcwidth stack-data executing pure-eval traitlets"
specs=()
for spec in $PINNED; do specs+=("$spec"); done
for name in $NEEDS; do
  if version=$(.venv/bin/python -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$name" 2>/dev/null); then
    specs+=("$name==$version")
  else
    specs+=("$name")
  fi
done
rm -rf .whl && mkdir .whl
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "${specs[@]}"
ls .whl
du -sh .whl
