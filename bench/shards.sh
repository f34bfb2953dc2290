#!/usr/bin/env bash
# Set 1 in 1, 2, 4, 8 and 16 shards, each with its own vocabulary (`lcrwmd synth --shards N`):
# each shard's vocabulary, its phase-1 work and its time per query, the shards run one after
# another on this machine (what one node per shard would take each), and the collection searched
# in one process against the unsharded index (the same neighbours). BENCHMARKS.md, "Shards".
#   bench/shards.sh [WORK_DIR] [QUERIES]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/lcrwmd-shards}
NQ=${2:-8}
BIN=build/lcrwmd
OUT=bench/results/shards_set1.json
mkdir -p "$WORK"
common=(--backend cpu --no-verify --batch "$NQ" --k 10 --threads 2)
[ -f "$WORK/s1.idx" ] || $BIN synth --preset set1 --output "$WORK/s1.idx" --queries "$NQ" \
  --queries-output "$WORK/q.tsv" 2>/dev/null
# The search's own time and its phase-1 counts, from its notes on stderr.
calc() { awk "BEGIN { printf \"%.4f\", $1 }"; }
seconds() { sed -n 's/^search: .*, \([0-9.]*\) s (.*/\1/p' "$1"; }
pairs() { sed -n 's/.*phase 1: .* (\([0-9]*\) of \([0-9]*\)).*/\2/p' "$1"; }
vocab() { $BIN info --index "$1" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["vocab_size"])'; }
json="{\"machine\": \"$(nproc) cores\", \"queries\": $NQ, \"results\": ["
printf "%7s %10s %10s %12s %12s %12s %12s %10s\n" shards "vocab/shard" "max vocab" \
  "1-sided s/q" "sym s/q" "all, 1-sided" "all, sym" identical
first=1
for n in 1 2 4 8 16; do
  if [ "$n" = 1 ]; then files=("$WORK/s1.idx"); else
    $BIN synth --preset set1 --output "$WORK/s$n.idx" --shards "$n" 2>/dev/null
    files=(); for i in $(seq 0 $((n - 1))); do files+=("$WORK/s$n.$i.idx"); done
  fi
  vsum=0; vmax=0; one_max=0; sym_max=0; one_sum=0; sym_sum=0; wp=0
  for f in "${files[@]}"; do
    v=$(vocab "$f"); vsum=$((vsum + v)); [ "$v" -gt "$vmax" ] && vmax=$v
    $BIN search --index "$f" --queries "$WORK/q.tsv" "${common[@]}" --one-sided >/dev/null 2>"$WORK/err1"
    $BIN search --index "$f" --queries "$WORK/q.tsv" "${common[@]}" >/dev/null 2>"$WORK/err2"
    t1=$(seconds "$WORK/err1"); t2=$(seconds "$WORK/err2"); wp=$((wp + $(pairs "$WORK/err1")))
    one_sum=$(calc "$one_sum + $t1"); sym_sum=$(calc "$sym_sum + $t2")
    one_max=$(calc "($t1 > $one_max) ? $t1 : $one_max")
    sym_max=$(calc "($t2 > $sym_max) ? $t2 : $sym_max")
  done
  # The collection in one process against the unsharded index: the same neighbours, in order.
  idx=(); for f in "${files[@]}"; do idx+=(--index "$f"); done
  $BIN search "${idx[@]}" --queries "$WORK/q.tsv" "${common[@]}" >"$WORK/sharded.tsv" 2>/dev/null
  [ "$n" = 1 ] && cp "$WORK/sharded.tsv" "$WORK/whole.tsv"
  same=$(cmp -s <(cut -f1-3 "$WORK/sharded.tsv") <(cut -f1-3 "$WORK/whole.tsv") && echo yes || echo no)
  per() { calc "$1 / $NQ"; }
  printf "%7d %10d %10d %12.4f %12.4f %12.4f %12.4f %10s\n" "$n" $((vsum / n)) "$vmax" \
    "$(per "$one_max")" "$(per "$sym_max")" "$(per "$one_sum")" "$(per "$sym_sum")" "$same"
  [ $first = 1 ] || json+=", "
  first=0
  json+="{\"shards\": $n, \"mean_shard_vocab\": $((vsum / n)), \"max_shard_vocab\": $vmax,"
  json+=" \"phase1_word_pairs\": $wp, \"slowest_shard_one_sided_s_per_query\": $(per "$one_max"),"
  json+=" \"slowest_shard_symmetric_s_per_query\": $(per "$sym_max"),"
  json+=" \"all_shards_one_sided_s_per_query\": $(per "$one_sum"),"
  json+=" \"all_shards_symmetric_s_per_query\": $(per "$sym_sum"), \"same_neighbours\": \"$same\"}"
  [ "$n" = 1 ] || rm -f "${files[@]}"
done
echo "$json]}" >"$OUT"
echo "wrote $OUT"
