#!/usr/bin/env bash
# The CUDA backend's figures (BENCHMARKS.md): the GPU tests, then Set 1 and Set 2 at full scale
# (generated once into $WORK) with lcrwmd_bench gpu and lcrwmd_bench act (ACT-1 against
# LC-RWMD, bench/results/gpu_act_set{1,2}.json), each beside the PyTorch reference
# (bench/torch_peer.py, same machine, same run) with the ratios merged into
# bench/results/gpu_set{1,2}.json. Needs an NVIDIA GPU (and PyTorch for the reference).
#   bench/gpu.sh [WORK_DIR] [BUNDLE_DIR]
# With BUNDLE_DIR (from bench/gpu_bundle.sh) nothing is built: the bundled binaries run with
# their libraries, for a GPU machine that cannot install Debian's packages; CUDA's own
# libraries (cudart 13, cuBLAS 13, cuSPARSE 12) must be on LD_LIBRARY_PATH there (the toolkit's
# lib64, or the nvidia/*/lib folders of its Python packages).
# Environment: SETS (default "set1 set2"), BATCHES (default "64 256 1024 4096"), TESTS=0 skips
# the tests, RESULTS (default bench/results), NCU (Nsight Compute's ncu; default: on PATH, else
# /usr/local/cuda/bin/ncu; KERNELS=0 skips the per-kernel times).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/lcrwmd-gpu}
OUT=${RESULTS:-bench/results}
mkdir -p "$WORK" "$OUT"
if [ -n "${2:-}" ]; then
  BIN=$2
  TESTS_BIN=$2/lcrwmd_tests
  export LD_LIBRARY_PATH="$2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  scripts/build.sh >/dev/null
  BIN=build
  TESTS_BIN=build/tests/lcrwmd_tests
fi
$BIN/lcrwmd devices
if [ "${TESTS:-1}" != 0 ]; then
  echo "== GPU tests (GPU results against the CPU backend)"
  $TESTS_BIN --gtest_filter='*Gpu*:Backend*' --gtest_brief=1
fi

for set in ${SETS:-set1 set2}; do
  if [ ! -f "$WORK/$set.idx" ]; then
    $BIN/lcrwmd synth --preset $set --output "$WORK/$set.idx" --queries 4096 \
      --queries-output "$WORK/${set}_q.tsv"
  fi
  echo "== $set on the GPU"
  # shellcheck disable=SC2086
  $BIN/lcrwmd_bench --reps 9 --json "$OUT/gpu_$set.json" gpu --index "$WORK/$set.idx" \
    --queries "$WORK/${set}_q.tsv" --batches ${BATCHES:-64 256 1024 4096}
  ncu=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
  if [ "${KERNELS:-1}" != 0 ] && [ -x "$ncu" ]; then
    # Our kernels' times inside real searches (one query, then a batch of 64, one-sided), per
    # kernel name: the figures lcrwmd_bench sets NVIDIA's cuBLAS and cuSPARSE beside.
    echo "== $set: per-kernel GPU time (Nsight Compute gpu__time_duration, summed per kernel)"
    for nq in 1 64; do
      head -n $nq "$WORK/${set}_q.tsv" >"$WORK/${set}_q$nq.tsv"
      "$ncu" --csv --metrics gpu__time_duration.sum --log-file "$OUT/gpu_${set}_kernels_q$nq.csv" \
        $BIN/lcrwmd search --backend cuda --index "$WORK/$set.idx" \
        --queries "$WORK/${set}_q$nq.tsv" --one-sided --batch $nq --k 10 >/dev/null 2>&1 || true
      python3 - "$OUT/gpu_${set}_kernels_q$nq.csv" $nq <<'PY'
import csv, collections, sys
total = collections.Counter()
with open(sys.argv[1]) as f:
    lines = [l for l in f if l.startswith('"')]
for row in csv.DictReader(lines):
    if row.get("Metric Name") == "gpu__time_duration.sum":
        scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0}.get(row["Metric Unit"], 1.0)
        name = row["Kernel Name"].split("(")[0].split("<")[0]
        total[name] += float(row["Metric Value"].replace(",", "")) * scale
print(f"{sys.argv[2]} queries: " + ", ".join(f"{k} {v:.3f} ms" for k, v in total.most_common()))
PY
    done
  fi
  echo "== $set: ACT-1 beside LC-RWMD on the GPU (issue 16's ratios: <= 1.5x one-sided, <= 2x symmetric)"
  $BIN/lcrwmd_bench --reps 5 --backend cuda --json "$OUT/gpu_act_$set.json" act \
    --index "$WORK/$set.idx" --queries "$WORK/${set}_q.tsv" --batches 1 64
  echo "== $set: the PyTorch reference, same GPU"
  if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    python3 bench/torch_peer.py --preset $set --merge-into "$OUT/gpu_$set.json"
  else
    echo "(no PyTorch with CUDA here: no reference)"
  fi
done
