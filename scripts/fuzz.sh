#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS (default 60): the embeddings readers, the document
# reader, the index loader, the ranks' wire format, serve's request bodies (searches and adds)
# and a collection's files. Built with clang, ASan and UBSan in build-fuzz/; seeds come from
# data/demo and a small synthetic index.
# Each run starts from the seeds with libFuzzer's seed SEED (default 1), so a run is
# repeatable: a longer one tries the same inputs first. A crash, a leak, a sanitizer report or
# an exception other than lcrwmd::Error fails the run (libFuzzer leaves the input as
# build-fuzz/crash-*).
#   scripts/fuzz.sh [SECONDS [SEED]]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
SEED=${2:-1}
scripts/install-deps.sh
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLCRWMD_FUZZ=ON \
  -DLCRWMD_NATIVE=OFF -DLCRWMD_WITH_CUDA=OFF -DLCRWMD_WITH_MPI=OFF -DLCRWMD_BUILD_PYTHON=OFF \
  -DLCRWMD_BUILD_TESTS=OFF -DLCRWMD_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target lcrwmd_cli fuzz_embeddings fuzz_tsv fuzz_index \
  fuzz_wire fuzz_request fuzz_collection

seeds=build-fuzz/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{embeddings,tsv,index,wire,request,collection}
export ASAN_OPTIONS=detect_leaks=1
# A tiny synthetic corpus: index, text embeddings and documents.
build-fuzz/lcrwmd synth --docs 6 --vocab 30 --words-per-doc 4 --dim 3 \
  --output "$seeds/small.idx" --embeddings-output "$seeds/embeddings/small.vec" \
  --docs-output "$seeds/tsv/small.tsv" >/dev/null
printf '\001' | cat - "$seeds/small.idx" >"$seeds/index/verified"
printf '\000' | cat - "$seeds/small.idx" >"$seeds/index/unverified"
rm "$seeds/small.idx"
# The demo's binary embeddings cut to their first two words; a slice of its queries, gzipped.
python3 - "$seeds/embeddings/demo2.bin" <<'PY'
import sys
data = open("data/demo/embeddings.bin", "rb").read()
header, rest = data.split(b"\n", 1)
dim = int(header.split()[1])
out, at = [], 0
for _ in range(2):
    space = rest.index(b" ", at)
    out.append(rest[at:space + 1 + 4 * dim + 1])
    at = space + 1 + 4 * dim + 1
open(sys.argv[1], "wb").write(b"2 %d\n" % dim + b"".join(out))
PY
build-fuzz/lcrwmd embeddings --input "$seeds/embeddings/small.vec" \
  --output "$seeds/embeddings/small.lce" 2>/dev/null
# A tiny fastText model (its layout is checked before libfasttext reads it).
build-fuzz/lcrwmd vectors train --docs "$seeds/tsv/small.tsv" --output "$seeds/embeddings/small.bin" \
  --dim 2 --epochs 1 --min-count 1 --buckets 20 --threads 1 2>/dev/null
# A collection's manifest (0 first) and deletion file (1 first), from the same small corpus.
build-fuzz/lcrwmd build --embeddings "$seeds/embeddings/small.vec" --docs "$seeds/tsv/small.tsv" \
  --output "$seeds/col" --collection 2>/dev/null
build-fuzz/lcrwmd delete --index "$seeds/col" --id "$(head -1 "$seeds/tsv/small.tsv" | cut -f1)" \
  2>/dev/null
printf '\000' | cat - "$seeds/col/manifest" >"$seeds/collection/manifest"
printf '\001' | cat - "$seeds"/col/seg-*.del-* >"$seeds/collection/deletions"
rm -rf "$seeds/col"
# An index built with a learned metric (its bytes the file's last): the small corpus labelled in
# two classes.
awk -F'\t' -v OFS='\t' '{ $2 = NR % 2 ? "a" : "b"; print }' "$seeds/tsv/small.tsv" \
  >"$seeds/labelled.tsv"
build-fuzz/lcrwmd build --embeddings "$seeds/embeddings/small.vec" --docs "$seeds/labelled.tsv" \
  --output "$seeds/labelled.idx" 2>/dev/null
build-fuzz/lcrwmd learn --index "$seeds/labelled.idx" --output "$seeds/small.lcm" \
  --centroid-epochs 1 --epochs 1 --neighbors 2 --held-out 0 2>/dev/null
build-fuzz/lcrwmd build --embeddings "$seeds/embeddings/small.vec" --docs "$seeds/labelled.tsv" \
  --metric "$seeds/small.lcm" --output "$seeds/metric.idx" 2>/dev/null
printf '\001' | cat - "$seeds/metric.idx" >"$seeds/index/metric"
rm "$seeds/labelled.tsv" "$seeds/labelled.idx" "$seeds/small.lcm" "$seeds/metric.idx"
head -5 data/demo/queries.tsv >"$seeds/tsv/queries.tsv"
gzip -c "$seeds/tsv/queries.tsv" >"$seeds/tsv/queries.tsv.gz"

# Request bodies: good ones of each endpoint, and the kinds of bad the tests send.
printf '{"queries": ["goal", {"id": "q2", "text": "match"}], "k": 5, "method": "wmd"}' \
  >"$seeds/request/search.json"
printf '{"query": "goal", "doc": "d1", "method": "lc-rwmd", "symmetric": false, "act_steps": 2}' \
  >"$seeds/request/explain.json"
printf '{"documents": [{"id": "d9", "label": "x", "text": "goal\\tmatch\\n"}, {"id": "d9"}]}' \
  >"$seeds/request/documents.json"
printf '{"queries": ["goal \xff"], "k": 1e300, "k": -3}' >"$seeds/request/bad.json"
printf '[[[[[[[[[[[[[[[[[[[[{"queries": "\\ud800"}]]]]]]]]]]]]]]]]]]]' >"$seeds/request/deep.json"

for target in embeddings tsv index wire request collection; do
  corpus=build-fuzz/corpus/$target
  rm -rf "$corpus"
  mkdir -p "$corpus"
  echo "== fuzz_$target for ${SECONDS_EACH}s"
  (cd build-fuzz && ./fuzz_$target -seed="$SEED" -max_total_time="$SECONDS_EACH" -max_len=16384 \
     -print_final_stats=1 "corpus/$target" "seeds/$target" 2>&1 | tail -12)
done
