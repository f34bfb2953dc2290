#!/usr/bin/env bash
# Exact WMD top-10 with a shard per MPI rank: 20news train cut into N shards (`build --shards N`),
# 100 test queries, one thread per rank. Per N: the EMD solves and tighter bounds of the whole
# job, its CPU time and wall time, and whether the output is the bytes the same files give in
# one process. BENCHMARKS.md, "Shards and MPI".
#   bench/rank_wmd.sh [WORK_DIR] [RANKS...]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/lcrwmd-rank-wmd}
shift || true
RANKS=("${@:-2 4 8}")
read -r -a RANKS <<<"${RANKS[*]}"
DATA=${LCRWMD_DATA:-../shared/data}
BIN=$PWD/build/lcrwmd
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$WORK"
{ zcat -f "$DATA/corpora/20news/test.tsv"* || true; } | head -100 >"$WORK/q.tsv"
printf "%6s %11s %14s %10s %8s %10s\n" ranks "EMD solves" "tighter bounds" "CPU s" "wall s" identical
for n in "${RANKS[@]}"; do
  "$BIN" build --embeddings "$DATA/embeddings/cbow300.bin" --docs "$DATA/corpora/20news/train.tsv.gz" \
    --stopwords "$DATA/stop_words.txt" --output "$WORK/t.idx" --shards "$n" 2>/dev/null
  files=(); for i in $(seq 0 $((n - 1))); do files+=(--index "$WORK/t.$i.idx"); done
  [ "$n" = 1 ] && files=(--index "$WORK/t.idx")
  args=(search "${files[@]}" --queries "$WORK/q.tsv" --k 10 --method wmd --backend cpu)
  OMP_NUM_THREADS=2 "$BIN" "${args[@]}" --output "$WORK/one.tsv" 2>/dev/null
  /usr/bin/time -f "%U %S %e" -o "$WORK/time" mpirun --oversubscribe --bind-to none \
    --mca mpi_yield_when_idle 1 -np "$n" -x OMP_NUM_THREADS=1 \
    "$BIN" "${args[@]}" --output "$WORK/ranks.tsv" 2>"$WORK/err"
  solves=$(sed -n 's/.*EMD solves: \([0-9]*\) of.*/\1/p' "$WORK/err")
  tighter=$(sed -n 's/.*tighter bounds: \([0-9]*\).*/\1/p' "$WORK/err")
  read -r user sys wall <"$WORK/time"
  same=no; cmp -s "$WORK/one.tsv" "$WORK/ranks.tsv" && same=yes
  printf "%6s %11s %14s %10.2f %8.2f %10s\n" "$n" "$solves" "$tighter" \
    "$(awk "BEGIN { print $user + $sys }")" "$wall" "$same"
done
