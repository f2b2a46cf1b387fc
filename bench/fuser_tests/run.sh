#!/usr/bin/env bash
# PyTorch's own cases under every fuser x executor, on the CPU or (DEVICE=cuda) the CUDA driver in use
# (GJ_CUDA_DRIVER=emulated without a GPU), tallied by tally.py. Needs Debian's /usr/bin/python3 with PyTorch
# (python3-torch) and a build (scripts/build).
#   bench/fuser_tests/run.sh [OUT_DIR]                    op_db's samples (opinfo_cases.py); default OUT_DIR:
#                                                         build/fuser_tests
#   bench/fuser_tests/run.sh --suite TESTS_DIR [OUT_DIR]  what PyTorch's fuser test files in TESTS_DIR (its
#                                                         test/ folder) script and trace (suite_cases.py);
#                                                         default OUT_DIR: build/fuser_suite
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = "--suite" ]; then
  [ $# -ge 2 ] || { echo "run.sh: --suite takes the folder holding test_jit_fuser_te.py and test_jit_fuser.py" >&2; exit 2; }
  tests=$2
  out=${3:-$root/build/fuser_suite}
  mkdir -p "$out"
  /usr/bin/python3 "$root/bench/fuser_tests/suite_cases.py" --tests "$tests" --out "$out"
else
  out=${1:-$root/build/fuser_tests}
  mkdir -p "$out"
  /usr/bin/python3 "$root/bench/fuser_tests/opinfo_cases.py" --out "$out"
fi
device=${DEVICE:-cpu}
status=0
GJ_CASE_TABLE="$out/table.json" GJ_CASE_OUTCOMES="$out/outcomes.$device.jsonl" GJ_CASE_DEVICE="$device" \
  "$root/build/bin/audit_test" --gtest_filter='ExternalTable.*' --gtest_brief=1 > "$out/log.$device.txt" 2>&1 || status=$?
python3 "$root/bench/fuser_tests/tally.py" "$out/outcomes.$device.jsonl"
[ "$status" -eq 0 ] || echo "audit_test exited with $status (a mismatch fails it; a crash leaves the outcomes before it): $out/log.$device.txt"
exit "$status"
