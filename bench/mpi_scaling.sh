#!/usr/bin/env bash
# Distributed search on this machine (BENCHMARKS.md, "Shards and MPI"): one process against
# mpirun ranks over one index on the Set-1 shape, both layouts, one-sided and symmetric, each
# configuration run REPS times in alternation; the search's time from its own notes on stderr,
# every output compared with one process's.
#   bench/mpi_scaling.sh [WORK_DIR] [QUERIES] [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/lcrwmd-bench}
NQ=${2:-8}
REPS=${3:-3}
BIN=build/lcrwmd
OUT=bench/results/mpi_scaling.json
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -f "$WORK/set1.idx" ] || $BIN synth --preset set1 --output "$WORK/set1.idx" --queries 300 \
  --queries-output "$WORK/set1_q.tsv"
head -"$NQ" "$WORK/set1_q.tsv" >"$WORK/q_mpi.tsv"
common="search --backend cpu --index $WORK/set1.idx --queries $WORK/q_mpi.tsv --no-verify --batch $NQ --k 10"
mpi="mpirun --bind-to none --oversubscribe"
declare -A runs=(
  ["1 process, 2 threads"]="$BIN $common --threads 2"
  ["mpirun 1 rank, 2 threads"]="$mpi -np 1 $BIN $common --threads 2"
  ["mpirun 2 ranks x 1 thread, docs"]="$mpi -np 2 $BIN $common --threads 1 --distribute docs"
  ["mpirun 2 ranks x 1 thread, queries"]="$mpi -np 2 $BIN $common --threads 1 --distribute queries"
)
order=("1 process, 2 threads" "mpirun 1 rank, 2 threads" "mpirun 2 ranks x 1 thread, docs"
       "mpirun 2 ranks x 1 thread, queries")
$BIN $common --one-sided >"$WORK/ref_one.tsv" 2>/dev/null  # warms the page cache
$BIN $common >"$WORK/ref_sym.tsv" 2>/dev/null
json="{\"machine\": \"$(nproc) cores\", \"queries\": $NQ, \"reps\": $REPS, \"results\": ["
first=1
printf "%-38s %-10s %10s %10s\n" configuration variant "search s" identical
for variant in one-sided symmetric; do
  flag=""; [ $variant = one-sided ] && flag="--one-sided"
  ref="$WORK/ref_${variant:0:3}.tsv"
  declare -A best=()
  for rep in $(seq "$REPS"); do
    for name in "${order[@]}"; do
      ${runs[$name]} $flag >"$WORK/out.tsv" 2>"$WORK/err.txt"
      t=$(sed -n 's/^search: .*, \([0-9.]*\) s (.*/\1/p' "$WORK/err.txt")
      cmp -s "$WORK/out.tsv" "$ref" && same=yes || same=NO
      if [ -z "${best[$name]:-}" ] || awk "BEGIN{exit !($t < ${best[$name]})}"; then
        best[$name]=$t
      fi
      [ "$same" = yes ] || { echo "results differ: $name $variant" >&2; exit 1; }
    done
  done
  for name in "${order[@]}"; do
    printf "%-38s %-10s %10.3f %10s\n" "$name" $variant "${best[$name]}" yes
    [ $first = 1 ] || json+=", "
    first=0
    json+="{\"configuration\": \"$name\", \"variant\": \"$variant\", \"search_s\": ${best[$name]}}"
  done
  unset best
done
echo "$json]}" >"$OUT"
echo "JSON: $OUT"
