#!/usr/bin/env bash
# The persistent kernel cache across processes (runtime/disk_cache.h), as a user meets it: graphir runs a
# model with a fuser twice on a fresh cache folder. The second process takes every kernel from disk (on
# CUDA the unfused kernels' module too) and writes the same bytes; corrupt and truncated entries are
# ignored with a warning and replaced; a folder others may write to is refused; GJ_CACHE_DIR=off writes
# nothing.
#
#   tests/kernel_cache_test.sh GRAPHIR SCRATCH FUSER DEVICE IR INPUTS
set -euo pipefail
graphir=$1 scratch=$2 fuser=$3 device=$4 ir=$5 inputs=$6
rm -rf "$scratch"
mkdir -p "$scratch"
export GJ_CACHE_DIR=$scratch/cache

run() {  # run NAME: outputs and gradients to $scratch/NAME, the summary line to $scratch/NAME.log
  "$graphir" run "$ir" --inputs "$inputs" --out "$scratch/$1" --backward --fuser "$fuser" --device "$device" \
    > "$scratch/$1.log" 2>&1 || { cat "$scratch/$1.log"; echo "FAILED: graphir run ($1)"; exit 1; }
}
summary() { grep -o "[0-9]* compiled, [0-9]* of them from the disk cache" "$scratch/$1.log"; }
same() {  # the .npy files of two runs, byte for byte
  (cd "$scratch/$1" && find . -name '*.npy' | sort) > "$scratch/files"
  [ -s "$scratch/files" ] || { echo "FAILED: run $1 wrote no .npy files"; exit 1; }
  while read -r f; do
    cmp -s "$scratch/$1/$f" "$scratch/$2/$f" || { echo "FAILED: $f differs between runs $1 and $2"; exit 1; }
  done < "$scratch/files"
}
expect() {  # expect NAME "N compiled, M of them from the disk cache"
  local got
  got=$(summary "$1")
  [ "$got" = "$2" ] || { cat "$scratch/$1.log"; echo "FAILED: run $1 says '$got', expected '$2'"; exit 1; }
}

run cold
compiled=$(summary cold | cut -d' ' -f1)
[ "$compiled" -gt 0 ] || { cat "$scratch/cold.log"; echo "FAILED: no kernel was compiled"; exit 1; }
expect cold "$compiled compiled, 0 of them from the disk cache"
entries=$(find "$GJ_CACHE_DIR" -name '*.gjk' | wc -l)
[ "$entries" -ge 1 ] || { echo "FAILED: the cold run stored no entry"; exit 1; }

# On CUDA the unfused kernels' module (kernels.cuh) is an entry too, which the warm run loads rather than
# compiles and stores again (the same file: a store renames a new one into place).
runtime_entry() { grep -l "graphjit_kernels.cu" "$GJ_CACHE_DIR"/*.gjk 2>/dev/null || true; }
if [ "$device" = cuda ]; then
  [ "$(runtime_entry | wc -l)" = 1 ] || { echo "FAILED: the cold run stored no entry for kernels.cuh's module"; exit 1; }
  inode=$(stat -c %i "$(runtime_entry)")
fi

run warm
expect warm "$compiled compiled, $compiled of them from the disk cache"
same cold warm
if [ "$device" = cuda ] && [ "$(stat -c %i "$(runtime_entry)")" != "$inode" ]; then
  echo "FAILED: the warm run compiled kernels.cuh's module again"; exit 1
fi

# Every entry damaged: one byte flipped in each, and the first one truncated too.
first=1
for f in "$GJ_CACHE_DIR"/*.gjk; do
  size=$(stat -c %s "$f")
  printf '\xff' | dd of="$f" bs=1 seek=$((size - 10)) conv=notrunc status=none
  if [ $first = 1 ]; then truncate -s $((size / 2)) "$f"; first=0; fi
done
run corrupt
expect corrupt "$compiled compiled, 0 of them from the disk cache"
grep -q "is ignored (checksum mismatch)" "$scratch/corrupt.log" || { cat "$scratch/corrupt.log"; echo "FAILED: no warning for a corrupt entry"; exit 1; }
grep -q "is ignored (truncated" "$scratch/corrupt.log" || { cat "$scratch/corrupt.log"; echo "FAILED: no warning for a truncated entry"; exit 1; }
same cold corrupt
run replaced  # the corrupt run stored good entries again
expect replaced "$compiled compiled, $compiled of them from the disk cache"

chmod 777 "$GJ_CACHE_DIR"
run shared
expect shared "$compiled compiled, 0 of them from the disk cache"
grep -q "other users may write to it" "$scratch/shared.log" || { cat "$scratch/shared.log"; echo "FAILED: a shared folder was used"; exit 1; }
same cold shared
chmod 700 "$GJ_CACHE_DIR"

export GJ_CACHE_DIR=off
run off
expect off "$compiled compiled, 0 of them from the disk cache"
[ "$(find "$scratch" -name '*.gjk' | wc -l)" = "$entries" ] || { echo "FAILED: GJ_CACHE_DIR=off wrote entries"; exit 1; }
echo "kernel cache: $compiled kernels; warm, corrupt, shared and off runs as expected"
