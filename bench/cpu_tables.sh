#!/usr/bin/env bash
# The CPU tables of bench/results/cpu.md (issue #10): the rnns group at the fastrnns shape under every
# fuser x executor in one interleaved table, at 2 threads, at 1 thread and with 3 layers; PyTorch's rows
# beside them (bench/torch_compare.py, OpenBLAS told the real core); a perf profile of the fastest and
# the slowest row. Raw outputs go to DIR (default bench/results/cpu-raw), to be summarized by hand.
#
#   bench/cpu_tables.sh [DIR]        (builds first; takes about 20 minutes on 2 cores)
#
# Run it on an otherwise idle machine: nothing else may compile or benchmark meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench/results/cpu-raw}"
mkdir -p "$out"
scripts/build >/dev/null
gb=build/bin/graphbench
all=(--group rnns --fuser old,te --executor legacy,profiling --interleave)

{ uname -a; nproc; grep -m1 "model name" /proc/cpuinfo; date -u; git rev-parse --short HEAD; } > "$out/machine.txt"

"$gb" "${all[@]}" --nloops 15 --warmup 3 --json "$out/rnns-2threads.json" | tee "$out/rnns-2threads.txt"
"$gb" "${all[@]}" --threads 1 --nloops 8 --warmup 3 --json "$out/rnns-1thread.json" | tee "$out/rnns-1thread.txt"
"$gb" "${all[@]}" --numLayers 3 --nloops 8 --warmup 3 --json "$out/rnns-3layers.json" | tee "$out/rnns-3layers.txt"

if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  # PyTorch's fastest use of 2 cores is 1 OpenMP thread with 2 OpenBLAS threads (2 and 2 fight over the
  # cores: bench/results/cpu.md); then one core.
  OPENBLAS_NUM_THREADS=2 OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 bench/torch_compare.py --group rnns \
    --threads 1 --nloops 10 --warmup 3 | tee "$out/torch-rnns-1thread-blas2.txt"
  OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 bench/torch_compare.py --group rnns --threads 1 --nloops 10 \
    --warmup 3 | tee "$out/torch-rnns-1thread.txt"
fi

if command -v perf >/dev/null; then
  # DNNL_JIT_PROFILE=2 makes oneDNN write a perf map, so its JIT'd GEMM kernels have names.
  for row in jit_premul py; do
    DNNL_JIT_PROFILE=2 perf record -o "$out/perf-$row.data" -- "$gb" --group rnns --fuser te --executor profiling \
      --rnns "$row" --nloops 15 --warmup 3 >/dev/null 2>&1
    # Whole reports first: `head` closing a pipe early would stop the script (pipefail).
    perf report -i "$out/perf-$row.data" --no-children --sort dso > "$out/perf-$row.report" 2>/dev/null
    grep "%" "$out/perf-$row.report" | head -12 > "$out/perf-$row-dso.txt" || true
    perf report -i "$out/perf-$row.data" --no-children --sort dso,sym > "$out/perf-$row.report" 2>/dev/null
    grep "%" "$out/perf-$row.report" | head -40 | cut -c1-160 > "$out/perf-$row-sym.txt" || true
    rm -f "$out/perf-$row.data" "$out/perf-$row.report"
  done
fi
