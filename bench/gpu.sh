#!/usr/bin/env bash
# The CUDA backend's figures (BENCHMARKS.md, issue 4): the GPU tests, then Set 1 and Set 2 at
# full scale (generated once into $WORK) with lcrwmd_bench gpu. Needs an NVIDIA GPU.
#   bench/gpu.sh [WORK_DIR] [BUNDLE_DIR]
# With BUNDLE_DIR (from bench/gpu_bundle.sh) nothing is built: the bundled binaries run with
# their libraries, for a GPU machine that cannot install Debian's packages; CUDA's own
# libraries (cudart 13, cuBLAS 13, cuSPARSE 12) must be on LD_LIBRARY_PATH there (the toolkit's
# lib64, or the nvidia/*/lib folders of its Python packages).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/lcrwmd-gpu}
OUT=bench/results
mkdir -p "$WORK" "$OUT"
if [ -n "${2:-}" ]; then
  BIN=$2
  TESTS=$2/lcrwmd_tests
  export LD_LIBRARY_PATH="$2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  scripts/build.sh >/dev/null
  BIN=build
  TESTS=build/tests/lcrwmd_tests
fi
$BIN/lcrwmd devices
echo "== GPU tests (GPU results against the CPU backend)"
$TESTS --gtest_filter='*Gpu*:Backend*' --gtest_brief=1

for set in set1 set2; do
  if [ ! -f "$WORK/$set.idx" ]; then
    $BIN/lcrwmd synth --preset $set --output "$WORK/$set.idx" --queries 4096 \
      --queries-output "$WORK/${set}_q.tsv"
  fi
  echo "== $set on the GPU"
  $BIN/lcrwmd_bench --reps 9 --json "$OUT/gpu_$set.json" gpu --index "$WORK/$set.idx" \
    --queries "$WORK/${set}_q.tsv" --batches 256 1024 4096
done
