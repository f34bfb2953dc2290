"""Lucene 8's BM25 as a peer (Debian's liblucene8-java): LuceneBm25.java compiled and run on a
TSV of documents and one of queries, one thread. Used by bench/typed_search.py and
bench/retrieval/evaluate.py."""
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
JARS = ["lucene-core", "lucene-analyzers-common"]


def jars():
    out = []
    for name in JARS:
        found = sorted(glob.glob(f"/usr/share/java/{name}-8*.jar"))
        if not found:
            sys.exit(f"no {name} jar: apt-get install liblucene8-java "
                     "(scripts/install-deps.sh --results)")
        out.append(found[-1])
    return out


def run_lucene(work, docs, queries, stop, runs, k=10):
    """Index `docs` in work/lucene-index and search each of `queries` `runs` times. Returns its
    JSON (index seconds, each pass's milliseconds per query), the jars' names and each query
    id's ranked document ids (from work/lucene-top{k}.tsv)."""
    cp = ":".join(jars())
    classes = os.path.join(work, "lucene-classes")
    os.makedirs(classes, exist_ok=True)
    subprocess.run(["javac", "-cp", cp, "-d", classes, os.path.join(HERE, "LuceneBm25.java")],
                   check=True)
    top = os.path.join(work, f"lucene-top{k}.tsv")
    cmd = ["java", "-Xmx8g", "-XX:ActiveProcessorCount=1", "-cp", f"{cp}:{classes}",
           "LuceneBm25", docs, queries, stop, str(k), str(runs),
           os.path.join(work, "lucene-index"), top]
    print("+", " ".join(cmd), flush=True)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    ranked = {}
    with open(top, encoding="utf-8") as f:
        for line in f:
            q, _, doc, _ = line.rstrip("\n").split("\t")
            ranked.setdefault(q, []).append(doc)
    return (json.loads(out.strip().splitlines()[-1]), [os.path.basename(j) for j in jars()],
            ranked)
