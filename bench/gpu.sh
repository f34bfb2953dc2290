#!/usr/bin/env bash
# The CUDA backend's figures (BENCHMARKS.md, issue 4): the GPU tests, then Set 1 and Set 2 at
# full scale (generated once into $WORK) with lcrwmd_bench gpu. Needs an NVIDIA GPU.
#   bench/gpu.sh [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/lcrwmd-gpu}
BIN=build
OUT=bench/results
mkdir -p "$WORK" "$OUT"
scripts/build.sh >/dev/null
$BIN/lcrwmd devices
echo "== GPU tests (GPU results against the CPU backend)"
$BIN/tests/lcrwmd_tests --gtest_filter='*Gpu*:Backend*' --gtest_brief=1

for set in set1 set2; do
  if [ ! -f "$WORK/$set.idx" ]; then
    $BIN/lcrwmd synth --preset $set --output "$WORK/$set.idx" --queries 4096 \
      --queries-output "$WORK/${set}_q.tsv"
  fi
  echo "== $set on the GPU"
  $BIN/lcrwmd_bench --reps 9 --json "$OUT/gpu_$set.json" gpu --index "$WORK/$set.idx" \
    --queries "$WORK/${set}_q.tsv" --batches 256 1024 4096
done
