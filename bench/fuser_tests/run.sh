#!/usr/bin/env bash
# PyTorch's own op samples (bench/fuser_tests/opinfo_cases.py, from the installed PyTorch's op_db) under every
# fuser x executor, on the CPU or (DEVICE=cuda) the CUDA driver in use (GJ_CUDA_DRIVER=emulated without a GPU),
# tallied by tally.py. Needs Debian's /usr/bin/python3 with PyTorch (python3-torch) and a build (scripts/build).
#   bench/fuser_tests/run.sh [OUT_DIR]          default OUT_DIR: build/fuser_tests
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build/fuser_tests}
device=${DEVICE:-cpu}
mkdir -p "$out"
/usr/bin/python3 "$root/bench/fuser_tests/opinfo_cases.py" --out "$out"
status=0
GJ_CASE_TABLE="$out/table.json" GJ_CASE_OUTCOMES="$out/outcomes.$device.jsonl" GJ_CASE_DEVICE="$device" \
  "$root/build/bin/audit_test" --gtest_filter='ExternalTable.*' --gtest_brief=1 > "$out/log.$device.txt" 2>&1 || status=$?
python3 "$root/bench/fuser_tests/tally.py" "$out/outcomes.$device.jsonl"
[ "$status" -eq 0 ] || echo "audit_test exited with $status (a mismatch fails it; a crash leaves the outcomes before it): $out/log.$device.txt"
exit "$status"
