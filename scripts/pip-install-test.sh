#!/usr/bin/env bash
# `pip install .` as a user would, without a package index: into a fresh virtual environment
# (with Debian's numpy, scipy and gensim visible through --system-site-packages), then the
# installed module is imported and searched from outside the source tree; a wheel is built too.
#   scripts/pip-install-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
# The CUDA kernels are the release build's to test; leaving them out here halves the build.
export LCRWMD_CMAKE_ARGS=${LCRWMD_CMAKE_ARGS:--DLCRWMD_WITH_CUDA=OFF}
"$work/venv/bin/python" -m pip install --no-build-isolation --no-index --quiet "$root"
"$work/venv/bin/python" -m pip wheel --no-build-isolation --no-index --no-deps --quiet \
  --wheel-dir "$work/wheels" "$root"
ls "$work"/wheels/lcrwmd-*.whl
cd "$work"
"$work/venv/bin/python" - "$root/data/demo" <<'PY'
import sys
import lcrwmd
from lcrwmd.gensim import WmdSimilarity  # noqa: F401  (the drop-in is installed too)

demo = sys.argv[1]
assert lcrwmd.__file__.startswith(sys.prefix), lcrwmd.__file__  # the venv's copy, not the tree
emb = lcrwmd.Embeddings.load(f"{demo}/embeddings.bin")
docs = [line.split("\t")[2] for line in open(f"{demo}/train.tsv", encoding="utf-8")]
index = lcrwmd.Index.build(emb, docs, stopwords=f"{demo}/stop_words.txt")
d, i = index.search(docs[:2], k=3, backend="cpu")
assert list(i[:, 0]) == [0, 1] and d[0, 0] == 0.0, (d, i)
print(f"pip install: {lcrwmd.__file__} ({index}), simd {lcrwmd.cpu_simd_level()}, "
      f"phase 1 {lcrwmd.cpu_precision()}")
PY
