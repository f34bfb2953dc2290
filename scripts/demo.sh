#!/usr/bin/env bash
# Set-up and demo in one: installs, builds, indexes the bundled BBC Sport slice and prints the
# three nearest training documents of each demo query by symmetric LC-RWMD, what a search box's
# few words find (bm25, and LC-RWMD query-to-document), then how well each method (WCD, LC-RWMD, exact WMD)
# classifies the queries by their nearest neighbours.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
demo=data/demo
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
./build/lcrwmd build --embeddings $demo/embeddings.bin --docs $demo/train.tsv \
  --stopwords $demo/stop_words.txt --output "$out/demo.idx"
./build/lcrwmd search --index "$out/demo.idx" --queries $demo/queries.tsv \
  --embeddings $demo/embeddings.bin --k 3 >"$out/results.tsv"
echo
echo "Nearest training documents (symmetric LC-RWMD) for each demo query:"
# Join the results with the documents' labels and titles (the first words of their text).
awk -F'\t' -v OFS='\t' '
  FILENAME == ARGV[1] { label[$1] = $2; split($3, w, " "); title[$1] = w[1] " " w[2] " " w[3] " " w[4] " " w[5] " " w[6]; next }
  FILENAME == ARGV[2] { qlabel[$1] = $2; split($3, w, " "); qtitle[$1] = w[1] " " w[2] " " w[3] " " w[4] " " w[5] " " w[6]; next }
  {
    if ($2 == 1) printf "\n%s [%s] %s...\n", $1, qlabel[$1], qtitle[$1]
    printf "  %d. %-9s %-16s [%-9s] %s...\n", $2, $4, $3, label[$3], title[$3]
  }' $demo/train.tsv $demo/queries.tsv "$out/results.tsv"

echo
for how in "" "--method lc-rwmd --direction query-to-document"; do
  echo "What a search box's few words find (${how:-bm25, the default for typed words}):"
  # shellcheck disable=SC2086 # $how: flags, split as words
  ./build/lcrwmd search --index "$out/demo.idx" --query "federer wimbledon tennis set" \
    --query "england batsmen wicket" --embeddings $demo/embeddings.bin --k 3 $how 2>/dev/null |
    awk -F'\t' 'FILENAME == ARGV[1] { label[$1] = $2; split($3, w, " "); title[$1] = w[1] " " w[2] " " w[3] " " w[4] " " w[5] " " w[6]; next }
      { if ($2 == 1) printf "\n\"%s\"\n", $1
        printf "  %d. %-11s %-16s [%-9s] %s...\n", $2, $4, $3, label[$3], title[$3] }' \
      $demo/train.tsv -
  echo
done

echo
echo "kNN classification of the demo queries by their nearest training documents:"
for m in wcd lc-rwmd wmd; do
  ./build/lcrwmd eval knn --index "$out/demo.idx" --queries $demo/queries.tsv \
    --embeddings $demo/embeddings.bin --method $m --k 1,3,5 \
    2>/dev/null | sed 's/^/  /'
done
