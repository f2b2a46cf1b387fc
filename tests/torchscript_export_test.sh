#!/bin/sh
# Runs tests/torchscript_export_test.py with a Python that has PyTorch (GJ_TORCH_PYTHON, default
# /usr/bin/python3: Debian's python3-torch); without one the test says so and is skipped (exit 77).
PY=${GJ_TORCH_PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import torch, numpy' >/dev/null 2>&1; then
  echo "SKIPPED: $PY cannot import torch and numpy (apt-get install python3-torch, or set GJ_TORCH_PYTHON);" \
       "graphjit's TorchScript exports were not fed to PyTorch"
  exit 77
fi
exec "$PY" "$(dirname "$0")/torchscript_export_test.py" "$@"
