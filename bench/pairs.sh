#!/usr/bin/env bash
# Near-duplicates on 20news train (11,294 documents, 63.8M pairs): `lcrwmd pairs` against the
# full matrix (`lcrwmd pairwise`) thresholded in numpy, at a range holding ~0.01% of the pairs;
# the time of each, the pairs found by both, and the share of pairs the bounds settled.
# BENCHMARKS.md, "Pruning".
#   bench/pairs.sh [WORK_DIR] [FRACTION]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/lcrwmd-pairs}
FRACTION=${2:-0.0001}
DATA=${LCRWMD_DATA:-../shared/data}
BIN=$PWD/build/lcrwmd
PY=/usr/bin/python3
mkdir -p "$WORK"
zcat -f "$DATA/corpora/20news/train.tsv"* >"$WORK/train.tsv"
"$BIN" build --embeddings "$DATA/embeddings/cbow300.bin" --docs "$WORK/train.tsv" \
  --stopwords "$DATA/stop_words.txt" --no-text --output "$WORK/t.idx" 2>/dev/null
secs() { /usr/bin/time -f %e -o "$WORK/time" "$@"; cat "$WORK/time"; }
t_matrix=$(secs "$BIN" pairwise --index "$WORK/t.idx" --queries "$WORK/train.tsv" --backend cpu \
  --output "$WORK/d.npy" 2>/dev/null)
read -r range t_threshold n_matrix < <("$PY" - "$WORK/d.npy" "$FRACTION" <<'PY'
import sys, time, numpy as np
d = np.load(sys.argv[1], mmap_mode="r")
t = time.time()
iu = np.triu_indices(d.shape[0], 1)
upper = np.asarray(d)[iu]
r = np.partition(upper, int(len(upper) * float(sys.argv[2])))[int(len(upper) * float(sys.argv[2]))]
print(repr(float(r)), round(time.time() - t, 2), int((upper <= r).sum()))
PY
)
printf "%-34s %10s %12s %s\n" method "time s" "pairs" "bounds settled"
printf "%-34s %10s %12s\n" "lc-rwmd, pairwise + numpy" "$t_matrix + $t_threshold" "$n_matrix"
for method in lc-rwmd wmd; do
  t=$(secs "$BIN" pairs --index "$WORK/t.idx" --max-distance "$range" --method "$method" \
    --backend cpu --output "$WORK/pairs_$method.tsv" 2>"$WORK/err_$method")
  n=$(wc -l <"$WORK/pairs_$method.tsv")
  settled=$(grep -E "avoided|D2 computed" "$WORK/err_$method" | head -1 | sed 's/^ *//')
  printf "%-34s %10s %12s %s\n" "$method, lcrwmd pairs" "$t" "$n" "$settled"
done
echo "range: $range (the $FRACTION quantile of lc-rwmd's pairs)"
