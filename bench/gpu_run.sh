#!/usr/bin/env bash
# On a GPU machine: runs the GPU tests and graphbench on CUDA with a build packed by bench/gpu_pack.sh,
# and writes one dated results file, gpu-DATE-DEVICE.md, into OUTDIR (then committed to bench/results/);
# where the machine's python3 has a CUDA torch, the same rows on PyTorch go beside them.
#
#   bench/gpu_run.sh [CARRY=gpu-carry] [OUTDIR=bench/results] [PART=all|1|2|bandwidth|persistent]
#
# The whole run comes near the device tool's 10 minutes a command (bench/results/gpu.md records how long each took):
# PART 1 runs the tests and the rnns timings, PART 2 the other sections and PyTorch's rows, each into a
# file of its own (gpu-DATE-DEVICE-1.md, -2.md), for two calls. PART bandwidth (a few minutes) runs the
# reductions' tests (cuda_ops_test, te_test) and the --kernel-bandwidth section alone, the latter once for
# each of $SPLIT_BLOCKS_PER_SM (default 2; GJ_TE_SPLIT_BLOCKS_PER_SM, the TE split reductions' grid).
# PART persistent (a few minutes; not in all) runs recurrence_test and the persistent recurrences' rows
# (jit_persistent, docs/fusers.md) beside cuDNN's LSTM and jit_premul at seq 100, hidden 512 and batch 1, 4,
# 16, 64, 128, hidden 1024 at batch 64 and three layers at batch 64, uncaptured and with --cuda-graphs, then
# nn.LSTM on the machine's PyTorch at the same shapes.
#
# Every test binary runs whole: the CUDA cases (runtime/cuda, every kernel either fuser generates for the
# models of tests/data, launched and compared with the interpreter; the unfused ops and Function on the
# device against the CPU and tests/data, cuda_ops_test; the cooperative kernels of emulator_test, whose
# planted bugs the GPU leaves to the emulator; PyTorch's edge cases of audit_test) no longer skip there.
# GJ_CUDA_DRIVER must be unset: cuda_ops_test runs on the emulated driver only where ctest sets it.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=${1:-gpu-carry}
outdir=${2:-bench/results}
part=${3:-all}
case $part in
  all | 1 | 2 | bandwidth | persistent) ;;
  *) echo "gpu_run.sh: PART must be all, 1, 2, bandwidth or persistent, not '$part'" >&2; exit 2 ;;
esac
mkdir -p "$outdir"
built=$(cat "$carry/commit" 2>/dev/null || echo "? (no $carry/commit)")
# gpu_pack.sh packs the build (carry.tar.gz); an unpacked carry (bin/, lib/) is taken as it is.
if [ -f "$carry/carry.tar.gz" ]; then
  unpacked=$(mktemp -d)
  tar -xzf "$carry/carry.tar.gz" -C "$unpacked"
  carry=$unpacked
else
  carry=$(cd "$carry" && pwd)
fi
export LD_LIBRARY_PATH="$carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export GJ_TEST_DATA_DIR="$PWD/tests/data"
unset GJ_CUDA_DRIVER
# cuBLAS (opened at run time): the toolkit's, else the one a Python package brought.
if [ -z "${GJ_CUBLAS:-}" ] && [ ! -e /usr/local/cuda/lib64/libcublas.so.13 ] && ! ldconfig -p | grep -q 'libcublas\.so\.13'; then
  GJ_CUBLAS=$(find /usr/local /opt -name 'libcublas.so.13*' 2>/dev/null | head -1)
  export GJ_CUBLAS
fi
# cuDNN (opened at run time, for the cudnn row and CudnnLstm's tests): likewise. The folder goes on the
# library path too, since libcudnn.so.9 opens its sub-libraries by name.
if [ -z "${GJ_CUDNN:-}" ] && ! ldconfig -p | grep -q 'libcudnn\.so\.9'; then
  GJ_CUDNN=$(find /usr/local /opt /usr/lib -name 'libcudnn.so.9*' 2>/dev/null | head -1)
  [ -n "$GJ_CUDNN" ] && export GJ_CUDNN LD_LIBRARY_PATH="$(dirname "$GJ_CUDNN"):$LD_LIBRARY_PATH"
fi
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
slug=$(echo "${device:-unknown}" | tr -c 'A-Za-z0-9\n' '-' | tr -s '-' | sed 's/-$//' | tr 'A-Z' 'a-z')
report="$outdir/gpu-$(date -u +%F)-$slug$([ "$part" = all ] || echo "-$part").md"
status=0
# The "## Tests" section: each test binary run whole, a line each, the tail of its output where it fails.
run_tests() {
  echo "## Tests"
  echo
  local t log result
  for t in "$@"; do
    log=$(mktemp)
    if "$carry/bin/$t" --gtest_brief=1 > "$log" 2>&1; then result=passed; else result=FAILED; status=1; fi
    echo "- $t: $result. $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$log" | tr '\n' ' ')"
    if [ $result = FAILED ]; then echo; echo '```'; tail -60 "$log"; echo '```'; echo; fi
    rm -f "$log"
  done
}
{
  echo "# GPU run $(date -u '+%F %H:%M UTC')"
  echo
  echo "- device: ${device:-none found} (driver ${driver:-?})"
  echo "- build: CUDA-only (scripts/build --cuda-only) of commit $built, carried from the build machine"
  echo "- cuBLAS: ${GJ_CUBLAS:-from the library path}; cuDNN: ${GJ_CUDNN:-from the library path}"
  [ "$part" = all ] || echo "- part $part (bench/gpu_run.sh's PART)"
  echo
  if [ "$part" = bandwidth ]; then
  run_tests cuda_ops_test te_test
  echo
  fusers=old,te  # the legacy fuser's rows (the runtime's reductions) once
  for per in ${SPLIT_BLOCKS_PER_SM:-2}; do
    echo "## graphbench --device=cuda --kernel-bandwidth, GJ_TE_SPLIT_BLOCKS_PER_SM=$per"
    echo
    echo '```'
    GJ_TE_SPLIT_BLOCKS_PER_SM=$per "$carry/bin/graphbench" --device cuda --kernel-bandwidth --fuser $fusers \
      --executor profiling --group rnns,ops --rnns jit,jit_layernorm --nloops 5 --warmup 2 2>&1 | tail -20
    echo '```'
    echo
    fusers=te
  done
  fi
  if [ "$part" = persistent ]; then
  run_tests recurrence_test
  echo
  for graphs in "" --cuda-graphs; do
    echo "## graphbench --device=cuda $graphs: persistent recurrences beside cuDNN's LSTM (hidden 512, seq 100)"
    echo
    echo '```'
    for shape in "1 512 1" "4 512 1" "16 512 1" "64 512 1" "128 512 1" "64 1024 1" "64 512 3"; do
      set -- $shape
      "$carry/bin/graphbench" --device cuda $graphs --fuser old,te --executor profiling --group rnns --miniBatch $1 \
        --inputSize $2 --hiddenSize $2 --numLayers $3 --rnns cudnn,jit_premul,jit_persistent 2>&1 | tail -7
    done
    echo '```'
    echo
  done
  echo "## PyTorch's nn.LSTM on the same device (bench/torch_compare.py --device cuda --rnns cudnn)"
  echo
  echo '```'
  if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    for shape in "1 512 1" "4 512 1" "16 512 1" "64 512 1" "128 512 1" "64 1024 1" "64 512 3"; do
      set -- $shape
      python3 bench/torch_compare.py --device cuda --group rnns --rnns cudnn --miniBatch $1 --inputSize $2 \
        --hiddenSize $2 --numLayers $3 2>&1 | grep -v Warning | tail -3
    done
  else
    echo "no python3 with a CUDA torch on this machine"
  fi
  echo '```'
  fi
  if [ "$part" = all ] || [ "$part" = 1 ]; then
  run_tests cuda_test cuda_ops_test emulator_test audit_test fuser_test te_test runtime_test
  log=$(mktemp)
  if "$carry/bin/difftest" --seed 1 --count 200 --device cuda > "$log" 2>&1; then result=passed; else result=FAILED; status=1; fi
  echo "- difftest --device=cuda (200 random graphs, every fuser x executor): $result. $(tail -2 "$log" | tr '\n' ' ')"
  if [ $result = FAILED ]; then echo; echo '```'; grep -E '^(MISMATCH|ERROR|WARNING)' "$log" | head -20; echo '```'; fi
  rm -f "$log"
  echo
  echo "## graphbench --device=cuda"
  echo
  echo '```'
  "$carry/bin/graphbench" --device cuda --fuser old,te --executor legacy,profiling --group rnns 2>&1 | tail -40
  echo '```'
  echo
  echo "## graphbench --device=cuda --cuda-graphs"
  echo
  echo '```'
  "$carry/bin/graphbench" --device cuda --cuda-graphs --fuser old,te --executor legacy,profiling --group rnns 2>&1 \
    | tail -40
  echo '```'
  echo
  echo "## graphbench --device=cuda, fused kernels at loop level 3 (fastrnns' knobs)"
  echo
  echo '```'
  "$carry/bin/graphbench" --device cuda --fuser old,te --executor profiling --group rnns --rnns jit,jit_premul \
    --cuda-pointwise-loop-level 3 --cuda-pointwise-block-size 128 --cuda-pointwise-block-count 264 2>&1 | tail -12
  echo '```'
  echo
  fi
  if [ "$part" = all ] || [ "$part" = 2 ]; then
  echo "## graphbench --device=cuda, fastrnns' layer-norm and dropout rows and --check"
  echo
  echo '```'
  "$carry/bin/graphbench" --device cuda --fuser old,te --executor profiling --group rnns \
    --rnns cudnn,jit,jit_layernorm,jit_layernorm_decom,cudnn_layernorm 2>&1 | tail -14
  "$carry/bin/graphbench" --device cuda --fuser old,te --executor profiling --group rnns --numLayers 2 \
    --rnns cudnn,jit,cudnn_dropout,jit_dropout 2>&1 | tail -10
  "$carry/bin/graphbench" --device cuda --check --fuser none,old,te --executor legacy,profiling --seqLength 20 \
    --miniBatch 16 --inputSize 64 --hiddenSize 64 \
    --rnns cudnn,aten,py,jit,jit_premul,jit_premul_bias,jit_simple,jit_multilayer,jit_layernorm,jit_layernorm_decom \
    2>&1 | tail -50 || status=1
  "$carry/bin/graphbench" --device cuda --check --fuser none,old,te --executor legacy,profiling --seqLength 20 \
    --miniBatch 16 --inputSize 64 --hiddenSize 64 --numLayers 2 --rnns cudnn_dropout,jit_dropout \
    2>&1 | tail -20 || status=1
  echo '```'
  echo
  echo "## graphbench --device=cuda, fastrnns' variable-length rows (--variable-lstms) and their --check"
  echo
  echo '```'
  "$carry/bin/graphbench" --device cuda --fuser old,te --executor profiling --variable-lstms --group vl_lstm \
    2>&1 | tail -10
  "$carry/bin/graphbench" --device cuda --check --fuser none,old,te --executor legacy,profiling --group vl_lstm \
    --miniBatch 16 --inputSize 64 --hiddenSize 64 --numLayers 2 2>&1 | tail -20 || status=1
  echo '```'
  echo
  echo "## graphbench --device=cuda, fastrnns' cnns group (ResNet-18 and -50 on cuDNN's convolutions) and its --check"
  echo
  echo '```'
  "$carry/bin/graphbench" --device cuda --cuda-graphs --fuser old,te --executor profiling --group cnns --miniBatch 32 \
    2>&1 | tail -10
  "$carry/bin/graphbench" --device cuda --check --fuser none,old,te --executor legacy,profiling --group cnns \
    --miniBatch 4 --imageSize 64 2>&1 | tail -20 || status=1
  echo '```'
  echo
  echo "## graphbench --device=cuda, the other groups"
  echo
  echo '```'
  "$carry/bin/graphbench" --device cuda --group lm,classifier,cells,ops 2>&1 | tail -60
  echo '```'
  echo
  echo "## graphbench --device=cuda --fuser=te --cuda-graphs, the other groups"
  echo
  echo '```'
  "$carry/bin/graphbench" --device cuda --fuser te --cuda-graphs --group lm,classifier,cells,ops 2>&1 | tail -60
  echo '```'
  echo
  # Each fused kernel timed on its own (the rows' times then include the waits): the share of the GPU's
  # DRAM bandwidth the slowest kernel of 16 MiB or more reached (issue 50's 60 % line).
  echo "## graphbench --device=cuda --kernel-bandwidth: the fused kernels' share of DRAM bandwidth"
  echo
  echo '```'
  "$carry/bin/graphbench" --device cuda --kernel-bandwidth --fuser old,te --executor profiling --group rnns,ops \
    --rnns jit,jit_layernorm --nloops 5 --warmup 2 2>&1 | tail -20
  echo '```'
  echo
  # The same rows on the machine's PyTorch (bench/torch_compare.py), strict float32 like graphjit's.
  echo "## PyTorch on the same device (bench/torch_compare.py --device cuda)"
  echo
  echo '```'
  if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    python3 bench/torch_compare.py --device cuda --group rnns,lm,classifier,cells,ops 2>&1 | grep -v Warning | tail -80
    python3 bench/torch_compare.py --device cuda --group rnns --rnns jit_layernorm,jit_layernorm_decom,cudnn_layernorm \
      2>&1 | grep -v Warning | tail -6
    python3 bench/torch_compare.py --device cuda --group rnns --numLayers 2 --rnns cudnn,jit,cudnn_dropout,jit_dropout \
      2>&1 | grep -v Warning | tail -7
    python3 bench/torch_compare.py --device cuda --group cnns --miniBatch 32 2>&1 | grep -v Warning | tail -5
    python3 bench/torch_compare.py --device cuda --group vl_lstm 2>&1 | grep -v Warning | tail -6
  else
    echo "no python3 with a CUDA torch on this machine"
  fi
  echo '```'
  fi
} > "$report"
cat "$report"
exit $status
