#!/usr/bin/env bash
# Reproduces the figures of BENCHMARKS.md: synthetic Set-1 and Set-2 indexes (generated once
# into $WORK), the 20news batch test, and the peak memory of the command line.
#   bench/run_all.sh [WORK_DIR] [SHARED_DATA_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/lcrwmd-bench}
DATA=${2:-../shared/data}
BIN=build
OUT=bench/results
mkdir -p "$WORK" "$OUT"
scripts/build.sh >/dev/null

for set in set1 set2; do
  if [ ! -f "$WORK/$set.idx" ]; then
    $BIN/lcrwmd synth --preset $set --output "$WORK/$set.idx" --queries 300 \
      --queries-output "$WORK/${set}_q.tsv"
  fi
  echo "== $set"
  $BIN/lcrwmd_bench --reps 9 --json "$OUT/$set.json" synthetic --index "$WORK/$set.idx" \
    --queries "$WORK/${set}_q.tsv" --batches 64 256
done

echo "== CPU phase 1 in each precision (f32, bf16, int8), side by side"
$BIN/lcrwmd_bench --reps 7 --json "$OUT/precision_set1.json" precision --index "$WORK/set1.idx" \
  --queries "$WORK/set1_q.tsv" --batches 64
CORPUS=(--embeddings "$DATA/embeddings/cbow300.bin" --stopwords "$DATA/stop_words.txt"
        --train "$DATA/corpora/20news/train.tsv.gz" --test "$DATA/corpora/20news/test.tsv.gz")
$BIN/lcrwmd_bench --reps 21 --json "$OUT/precision_20news_single.json" precision "${CORPUS[@]}" \
  --batches 64 512
$BIN/lcrwmd_bench --json "$OUT/precision_20news.json" precision "${CORPUS[@]}" --batches 0 \
  --no-single --bulk 7532

echo "== 20news: test queries against the train set"
$BIN/lcrwmd_bench --json "$OUT/20news.json" real --embeddings "$DATA/embeddings/cbow300.bin" \
  --stopwords "$DATA/stop_words.txt" --train "$DATA/corpora/20news/train.tsv.gz" \
  --test "$DATA/corpora/20news/test.tsv.gz" --batch 256

echo "== peak resident memory of 'lcrwmd search' on Set 1 (one process per line)"
head -1 "$WORK/set1_q.tsv" >"$WORK/q1.tsv"
head -64 "$WORK/set1_q.tsv" >"$WORK/q64.tsv"
printf "%-44s %10s %10s\n" "command" "peak MiB" "index MiB"
index_mib=$(( $(stat -c %s "$WORK/set1.idx") / 1048576 ))
for args in "--queries $WORK/q1.tsv --one-sided" "--queries $WORK/q1.tsv" \
            "--queries $WORK/q64.tsv --one-sided --batch 64" "--queries $WORK/q64.tsv --batch 64"; do
  /usr/bin/time -o "$WORK/time.txt" -f "%M" $BIN/lcrwmd search --backend cpu --index "$WORK/set1.idx" $args \
    >/dev/null 2>&1
  kib=$(tail -1 "$WORK/time.txt")
  printf "%-44s %10d %10d\n" "$(echo "$args" | sed "s|$WORK/||g")" $((kib / 1024)) "$index_mib"
done
