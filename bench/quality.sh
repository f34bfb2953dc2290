#!/usr/bin/env bash
# Reproduces RESULTS.md, tables and figures:
#   - kNN error under Sato, Yamada & Kashima's protocol (k chosen on a held-out 20% of the
#     training set) for WCD, RWMD, ACT-1, ICT and WMD with TF and TF-IDF weights, and the
#     scikit-learn baselines on the same tokens (bench/quality/{knn_runs,baselines}.py); WCD,
#     RWMD and ACT-1 again with vectors trained on each training split;
#   - clustering ARI/NMI of `lcrwmd cluster` beside TF-IDF + k-means (bench/quality/clusters.py);
#   - the overlap with the WMD ranking, precision at k and the bounds' tightness (bbcsport,
#     twitter, r8).
#   bench/quality.sh [WORK_DIR] [SHARED_DATA_DIR] [CORPUS ...]   (default: all eight corpora)
# Indexes and splits go to WORK_DIR, JSON to bench/results/quality/, PNG to docs/figures/, the
# tables to bench/results/quality/tables.md (and stdout).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/lcrwmd-quality}
DATA=${2:-../shared/data}
shift 2 || true
BIN=build/lcrwmd
OUT=bench/results/quality
PY=/usr/bin/python3
mkdir -p "$WORK" "$OUT/ranking"
scripts/install-deps.sh --results
scripts/build.sh >/dev/null
export PYTHONPATH=$PWD/build/python
common=(--data "$DATA" --work "$WORK" --out "$OUT")
$PY bench/quality/knn_runs.py --lcrwmd $BIN "${common[@]}" "$@"
# The same with vectors trained on each training split (RESULTS.md), the cheaper methods.
$PY bench/quality/knn_runs.py --lcrwmd $BIN "${common[@]}" --vectors trained \
  --methods wcd,lc-rwmd,act-1 "$@"
$PY bench/quality/baselines.py "${common[@]}" "$@"
$PY bench/quality/clusters.py --lcrwmd $BIN "${common[@]}" "$@"

# Rankings against the exact WMD's, on the corpora small enough for WMD's full ranking.
for c in bbcsport twitter r8; do
  [ $# -eq 0 ] || [[ " $* " == *" $c "* ]] || continue
  q=(--index "$WORK/$c.train.tf.idx" --queries "$WORK/$c.test.tsv"
     --embeddings "$DATA/embeddings/cbow300.bin" --json)
  for m in wcd lc-rwmd wmd; do
    $BIN eval precision "${q[@]}" --method $m >"$OUT/ranking/${c}_precision_$m.json"
  done
  [ "$c" != r8 ] || continue
  for m in wcd lc-rwmd; do
    $BIN eval overlap "${q[@]}" --method $m --reference wmd >"$OUT/ranking/${c}_overlap_$m.json"
  done
  $BIN eval overlap "${q[@]}" --method lc-rwmd --one-sided --reference wmd \
    >"$OUT/ranking/${c}_overlap_lc-rwmd-one-sided.json"
  $PY bench/act_bounds.py --lcrwmd $BIN --index "$WORK/$c.train.tf.idx" \
    --queries "$WORK/$c.test.tsv" --data "$DATA" --json "$OUT/ranking/${c}_act_bounds.json"
done
$PY bench/quality/report.py "$OUT" docs/figures | tee "$OUT/tables.md"
