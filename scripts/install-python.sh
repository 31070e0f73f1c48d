#!/usr/bin/env bash
# `make python`: installs the fa4 wheel (scripts/build-wheel.py over the
# self-contained libFA4CAPI.so of build-static/) so that `import fa4`
# compiles and runs kernels with no PYTHONPATH or library path.
#
# FA4_PYTHON=/path/to/python installs into that interpreter's environment;
# otherwise into the virtual environment FA4_VENV (default .venv), created
# with --system-site-packages so that an installed PyTorch stays visible.
set -euo pipefail
cd "$(dirname "$0")/.."
wheel=$(scripts/build-wheel.py --library build-static/lib/libFA4CAPI.so --out dist)
if [ -n "${FA4_PYTHON:-}" ]; then
  python="$FA4_PYTHON"
else
  venv="${FA4_VENV:-.venv}"
  [ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages "$venv"
  python="$venv/bin/python"
fi
# The wheel names no dependencies; nothing is downloaded.
"$python" -m pip install -q --no-index --no-deps --force-reinstall "$wheel"
echo "fa4: installed $(basename "$wheel") into $("$python" -c 'import sys; print(sys.prefix)')"
if [ -z "${FA4_PYTHON:-}" ]; then
  echo "fa4: use it with $venv/bin/python, or after: source $venv/bin/activate"
fi
