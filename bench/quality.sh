#!/usr/bin/env bash
# Reproduces RESULTS.md: kNN test error of WCD, LC-RWMD (symmetric = RWMD, and one-sided),
# ACT-1/3/7, ICT and exact WMD on the shared corpora, the overlap and precision figures, the
# bounds' ratios to the WMD (bench/act_bounds.py), and the plots.
#   bench/quality.sh [WORK_DIR] [SHARED_DATA_DIR] [CORPUS ...]
# Indexes go to WORK_DIR, JSON to bench/results/quality/, PNG to docs/figures/.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/lcrwmd-quality}
DATA=${2:-../shared/data}
shift 2 || true
CORPORA=("$@")
[ ${#CORPORA[@]} -gt 0 ] || CORPORA=(bbcsport twitter r8 20news imdb)
BIN=build/lcrwmd
OUT=bench/results/quality
mkdir -p "$WORK" "$OUT"
scripts/build.sh >/dev/null

file() {  # the corpus file, plain or gzipped
  if [ -f "$DATA/corpora/$1/$2.tsv" ]; then echo "$DATA/corpora/$1/$2.tsv"; else echo "$DATA/corpora/$1/$2.tsv.gz"; fi
}
act_family() {  # NAME ARGS...: symmetric ACT-1, ACT-3, ACT-7 and ICT
  local name=$1
  shift
  for k in 1 3 7; do
    $BIN eval knn "$@" --method act --act-steps $k >"$OUT/${name}_knn_act-$k.json"
  done
  $BIN eval knn "$@" --method ict >"$OUT/${name}_knn_ict.json"
}

for c in "${CORPORA[@]}"; do
  idx="$WORK/$c.idx"
  test_file=$(file "$c" test)
  [ -f "$idx" ] || $BIN build --embeddings "$DATA/embeddings/cbow300.bin" \
    --stopwords "$DATA/stop_words.txt" --docs "$(file "$c" train)" --output "$idx"
  # imdb: 25,000 test reviews; every 10th keeps the run in minutes.
  if [ "$c" = imdb ]; then
    zcat -f "$test_file" | awk 'NR % 10 == 1' >"$WORK/imdb_test_sample.tsv"
    test_file="$WORK/imdb_test_sample.tsv"
  fi
  common=(--index "$idx" --queries "$test_file" --stopwords "$DATA/stop_words.txt"
          --embeddings "$DATA/embeddings/cbow300.bin" --json)
  echo "== $c"
  $BIN eval knn "${common[@]}" --method wcd >"$OUT/${c}_knn_wcd.json"
  $BIN eval knn "${common[@]}" --method lc-rwmd >"$OUT/${c}_knn_lc-rwmd.json"
  $BIN eval knn "${common[@]}" --method lc-rwmd --one-sided >"$OUT/${c}_knn_lc-rwmd-one-sided.json"
  case $c in
    20news)
      # Exact WMD on every 10th test document (753), next to the bounds on the same sample.
      zcat -f "$test_file" | awk 'NR % 10 == 1' >"$WORK/20news_test_sample.tsv"
      sample=(--index "$idx" --queries "$WORK/20news_test_sample.tsv"
              --stopwords "$DATA/stop_words.txt" --embeddings "$DATA/embeddings/cbow300.bin" --json)
      for m in wcd lc-rwmd wmd; do
        $BIN eval knn "${sample[@]}" --method $m >"$OUT/20news-sample_knn_$m.json"
      done
      $BIN eval knn "${sample[@]}" --method lc-rwmd --one-sided \
        >"$OUT/20news-sample_knn_lc-rwmd-one-sided.json"
      act_family 20news-sample "${sample[@]}"
      ;;
    bbcsport | twitter | r8)
      $BIN eval knn "${common[@]}" --method wmd >"$OUT/${c}_knn_wmd.json"
      act_family "$c" "${common[@]}"
      for m in wcd lc-rwmd; do
        $BIN eval precision "${common[@]}" --method $m >"$OUT/${c}_precision_$m.json"
      done
      $BIN eval precision "${common[@]}" --method wmd >"$OUT/${c}_precision_wmd.json"
      ;;
  esac
  case $c in
    bbcsport | twitter)
      for m in wcd lc-rwmd; do
        $BIN eval overlap "${common[@]}" --method $m --reference wmd \
          >"$OUT/${c}_overlap_$m.json"
      done
      $BIN eval overlap "${common[@]}" --method lc-rwmd --one-sided --reference wmd \
        >"$OUT/${c}_overlap_lc-rwmd-one-sided.json"
      /usr/bin/python3 bench/act_bounds.py --lcrwmd $BIN --index "$idx" --queries "$test_file" \
        --data "$DATA" --json "$OUT/${c}_act_bounds.json"
      ;;
  esac
done
/usr/bin/python3 scripts/plot_results.py "$OUT" docs/figures
