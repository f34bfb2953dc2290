#!/usr/bin/env bash
# RESULTS.md's ACT/ICT rows: kNN test error of symmetric ACT-1, ACT-3, ACT-7 and ICT beside the
# WCD, RWMD and WMD rows of bench/quality.sh (run that first: it builds the indexes), and the
# bounds' ratio to the WMD and top-10 pruning share on a sample of queries (bench/act_bounds.py).
#   bench/act_quality.sh [WORK_DIR] [SHARED_DATA_DIR] [CORPUS ...]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/lcrwmd-quality}
DATA=${2:-../shared/data}
shift 2 || true
CORPORA=("$@")
[ ${#CORPORA[@]} -gt 0 ] || CORPORA=(bbcsport twitter r8 20news-sample)
BIN=build/lcrwmd
OUT=bench/results/quality
mkdir -p "$WORK" "$OUT"
scripts/build.sh >/dev/null

file() {  # the corpus file, plain or gzipped
  if [ -f "$DATA/corpora/$1/$2.tsv" ]; then echo "$DATA/corpora/$1/$2.tsv"; else echo "$DATA/corpora/$1/$2.tsv.gz"; fi
}

for c in "${CORPORA[@]}"; do
  corpus=${c%-sample}
  idx="$WORK/$corpus.idx"
  test_file=$(file "$corpus" test)
  [ -f "$idx" ] || $BIN build --embeddings "$DATA/embeddings/cbow300.bin" \
    --stopwords "$DATA/stop_words.txt" --docs "$(file "$corpus" train)" --output "$idx"
  if [ "$c" != "$corpus" ]; then  # every 10th test document, as bench/quality.sh samples it
    zcat -f "$test_file" | awk 'NR % 10 == 1' >"$WORK/${corpus}_test_sample.tsv"
    test_file="$WORK/${corpus}_test_sample.tsv"
  fi
  common=(--index "$idx" --queries "$test_file" --stopwords "$DATA/stop_words.txt"
          --embeddings "$DATA/embeddings/cbow300.bin" --json)
  echo "== $c"
  for k in 1 3 7; do
    $BIN eval knn "${common[@]}" --method act --act-steps $k >"$OUT/${c}_knn_act-$k.json"
  done
  $BIN eval knn "${common[@]}" --method ict >"$OUT/${c}_knn_ict.json"
done
for c in bbcsport twitter; do
  /usr/bin/python3 bench/act_bounds.py --lcrwmd $BIN --index "$WORK/$c.idx" \
    --queries "$(file $c test)" --data "$DATA" --json "$OUT/${c}_act_bounds.json"
done
