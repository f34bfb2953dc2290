"""The Python module's search against the command line's, on bbcsport (220 test queries x 517
training documents), three alternated runs per method (BENCHMARKS.md, issue 6). The Python time
includes reading the queries into histograms; the command line's is its own "search:" time.
    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py [SHARED_DATA_DIR]"""
import csv
import re
import subprocess
import sys
import tempfile
import time

import lcrwmd

data = sys.argv[1] if len(sys.argv) > 1 else "../shared/data"
corpus, stop = f"{data}/corpora/bbcsport", f"{data}/stop_words.txt"


def read(path):
    with open(path, encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [r[0] for r in rows], [r[2] for r in rows], [r[1] for r in rows]


ids, train, labels = read(f"{corpus}/train.tsv")
_, test, _ = read(f"{corpus}/test.tsv")
emb = lcrwmd.Embeddings.load(f"{data}/embeddings/cbow300.bin")
index = lcrwmd.Index.build(emb, train, ids=ids, labels=labels, stopwords=stop)
with tempfile.TemporaryDirectory() as tmp:
    index.save(f"{tmp}/bbc.idx")
    print(f"{'method':8} {'python s':>9} {'cli s':>7} {'ratio':>6}")
    for method in ["lc-rwmd", "wmd"]:
        for _ in range(3):
            t = time.perf_counter()
            index.search(test, k=10, method=method, backend="cpu")
            py = time.perf_counter() - t
            err = subprocess.run(
                ["build/lcrwmd", "search", "--index", f"{tmp}/bbc.idx", "--queries",
                 f"{corpus}/test.tsv", "--stopwords", stop, "--embeddings",
                 f"{data}/embeddings/cbow300.bin", "--k", "10", "--method", method, "--backend",
                 "cpu", "--output", f"{tmp}/out.tsv"],
                check=True, capture_output=True, text=True).stderr
            line = next(x for x in err.splitlines() if x.startswith("search:"))
            cli = float(re.search(r", ([0-9.]+) s \(", line).group(1))
            print(f"{method:8} {py:9.3f} {cli:7.3f} {py / cli:6.3f}")
