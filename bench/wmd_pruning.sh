#!/usr/bin/env bash
# Exact WMD top-10: how many EMD solves the bounds avoid, and the time against solving every
# pair with the same engine (--prune none), on bbcsport (all 220 test documents) and 20news
# (every 10th test document, 752 queries, against the 11,294 training documents).
#   bench/wmd_pruning.sh [WORK_DIR] [SHARED_DATA_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/lcrwmd-quality}
DATA=${2:-../shared/data}
BIN=build/lcrwmd
mkdir -p "$WORK"
scripts/build.sh >/dev/null
common=(--stopwords "$DATA/stop_words.txt" --embeddings "$DATA/embeddings/cbow300.bin"
        --method wmd --k 10 --output /dev/null)
for c in bbcsport 20news; do
  idx="$WORK/$c.idx"
  train="$DATA/corpora/$c/train.tsv"; [ -f "$train" ] || train="$train.gz"
  test="$DATA/corpora/$c/test.tsv"; [ -f "$test" ] || test="$test.gz"
  [ -f "$idx" ] || $BIN build --embeddings "$DATA/embeddings/cbow300.bin" \
    --stopwords "$DATA/stop_words.txt" --docs "$train" --output "$idx"
  if [ "$c" = 20news ]; then
    zcat -f "$test" | awk 'NR % 10 == 1' >"$WORK/20news_test_sample.tsv"
    test="$WORK/20news_test_sample.tsv"
  fi
  echo "== $c: pruned"
  $BIN search --index "$idx" --queries "$test" "${common[@]}" 2>&1 | grep -E "^search|EMD"
  if [ "$c" = bbcsport ]; then
    echo "== $c: every pair (--prune none)"
    $BIN search --index "$idx" --queries "$test" "${common[@]}" --prune none 2>&1 |
      grep -E "^search|EMD"
  fi
done
