#!/usr/bin/env bash
# Here (no GPU needed): builds the CUDA-only configuration (scripts/build --cuda-only: no LLVM, no
# oneDNN) and packs what a GPU machine needs to run bench/gpu_run.sh into gpu-carry/carry.tar.gz
# (git-ignored): the test binaries and tools, and the shared libraries they use that a bare GPU machine
# lacks. The
# machine's own CUDA toolkit provides NVRTC and the driver provides libcuda.
#
#   bench/gpu_pack.sh            then, with the device tool: carry ["gpu-carry"] and run
#                                bench/gpu_run.sh gpu-carry "$OUT" (or in two calls, with PART 1
#                                then 2 as the third argument, where one call's 10 minutes are short)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build --cuda-only
rm -rf gpu-carry
mkdir -p gpu-carry/bin gpu-carry/lib
bins=(cuda_test cuda_ops_test emulator_test audit_test fuser_test te_test runtime_test recurrence_test difftest graphbench graphir)
for b in "${bins[@]}"; do
  cp build-cuda/bin/$b gpu-carry/bin/
  strip gpu-carry/bin/$b
done
# Shared libraries from Debian packages (fmt, OpenBLAS and its Fortran runtime, OpenMP); not the C and
# C++ runtimes, which the machine has in newer versions, and not CUDA's.
for b in "${bins[@]}"; do ldd build-cuda/bin/$b; done | awk '$3 ~ /^\// { print $3 }' | sort -u |
  grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libdl|libpthread|librt|libnvrtc[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" gpu-carry/lib/; done
ls gpu-carry/lib
# Packed: OpenBLAS alone is 36 MB unpacked, and a run carries at most 64 MiB (gpu_run.sh unpacks it).
tar -czf gpu-carry.tar.gz -C gpu-carry bin lib
rm -rf gpu-carry/bin gpu-carry/lib
mv gpu-carry.tar.gz gpu-carry/carry.tar.gz
# The commit the binaries were built from (a GPU machine's copy of .git may be older than the tree it gets).
dirty=$(git status --porcelain --untracked-files=no | grep -q . && echo ", with uncommitted changes" || true)
echo "$(git rev-parse --short HEAD)$dirty" > gpu-carry/commit
du -sh gpu-carry
