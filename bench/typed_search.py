#!/usr/bin/python3
"""Typed queries against a million real documents: lcrwmd's bm25, query-to-document LC-RWMD and
hybrid beside Lucene's BM25, one thread, one query at a time, in one run.

The documents: Debian's package descriptions (apt's Translation-en; `apt-get update -o
Acquire::Languages=en` fetches it) and WordNet's glosses (Debian's wordnet-base), copied
--copies times with new ids (six: about 1.08 million). The queries: --queries package synopses
of at least three words, as a user would type them. lcrwmd builds one index file from the shared
vectors and stop words; Lucene 8 (Debian's liblucene8-java, bench/lucene/LuceneBm25.java) indexes
the same texts with StandardAnalyzer and the same stop words, one segment.

  bench/typed_search.py --work /tmp/typed --data ../shared/data --lcrwmd build/lcrwmd \\
      --bench build/lcrwmd_bench --json bench/results/typed_search.json

With --set1 the documents are Set 1 instead (`lcrwmd synth --preset set1`: a million synthetic
documents over 452,058 words, written as text for Lucene) and the queries 64 of its documents
cut to five words spread from their commonest word to their rarest (`lcrwmd_bench directions
--words 5`, which writes them as text for Lucene).

Prints a table of milliseconds per query and writes JSON; the index and Lucene's files stay in
--work for another run (--reuse).
"""
import argparse
import glob
import hashlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "retrieval"))
sys.path.insert(0, os.path.join(HERE, "lucene"))
from lucene import run_lucene  # noqa: E402
from make_tasks import clean, debian_packages  # noqa: E402  apt's Translation-en, read once


def packages():
    """(package, synopsis, synopsis and long description), each package once."""
    seen = set()
    for package, synopsis, body in debian_packages():
        if package not in seen:
            seen.add(package)
            yield package, synopsis, clean(synopsis + " " + body)


def glosses():
    """(synset id, gloss) from WordNet's data files."""
    files = sorted(glob.glob("/usr/share/wordnet/data.*"))
    if not files:
        sys.exit("no WordNet: apt-get install wordnet-base (scripts/install-deps.sh --results)")
    for path in files:
        pos = path.rsplit(".", 1)[1]
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(" ") or "|" not in line:
                    continue  # the licence
                yield f"{pos}{line.split(' ', 1)[0]}", clean(line.split("|", 1)[1])


def make_data(work, copies, n_queries):
    docs_path, queries_path = os.path.join(work, "docs.tsv"), os.path.join(work, "queries.tsv")
    pk = list(packages())
    base = [(f"pkg:{p}", text) for p, _, text in pk] + [(f"wn:{i}", g) for i, g in glosses()]
    with open(docs_path, "w", encoding="utf-8") as f:
        for c in range(copies):
            for ident, text in base:
                f.write(f"{ident}#{c}\t\t{text}\n")
    synopses = sorted({s for _, s, _ in pk if len(re.findall(r"[A-Za-z0-9]+", s)) >= 3},
                      key=lambda s: hashlib.sha256(s.encode()).hexdigest())[:n_queries]
    with open(queries_path, "w", encoding="utf-8") as f:
        for q, s in enumerate(synopses):
            f.write(f"q{q}\t\t{s}\n")
    return docs_path, queries_path, len(base) * copies, len(synopses)


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "shared", "data"))
    ap.add_argument("--lcrwmd", default="build/lcrwmd")
    ap.add_argument("--bench", default="build/lcrwmd_bench")
    ap.add_argument("--copies", type=int, default=6)
    ap.add_argument("--queries", type=int, default=295)
    ap.add_argument("--runs", type=int, default=3, help="lcrwmd's timed passes over the queries")
    ap.add_argument("--lucene-runs", type=int, default=10,
                    help="Lucene's passes (its JIT takes about seven to settle); the best counts")
    ap.add_argument("--reuse", action="store_true", help="keep --work's documents and index")
    ap.add_argument("--set1", action="store_true",
                    help="Set 1's documents and five-word queries instead of the real ones")
    ap.add_argument("--query-weights", choices=["index", "idf"], default="index",
                    help="how lcrwmd_bench weighs the queries' words: as the index weighs its "
                         "documents (the default, every earlier figure's), or by idf, as the "
                         "command line weighs query-to-document and hybrid queries")
    ap.add_argument("--json")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    stop = os.path.join(a.data, "stop_words.txt")
    index = os.path.join(a.work, "docs.idx")
    # Set 1: the synthetic queries (whole documents) cut to five words by the benchmark, which
    # writes them as Lucene is given them.
    synth_queries = os.path.join(a.work, "set1_q.tsv")
    if a.set1 and not (a.reuse and os.path.exists(index)):
        docs, queries = os.path.join(a.work, "docs.tsv"), os.path.join(a.work, "queries.tsv")
        run([a.lcrwmd, "synth", "--preset", "set1", "--output", index, "--queries", "64",
             "--queries-output", synth_queries, "--docs-output", docs])
        n_docs, n_queries = sum(1 for _ in open(docs, encoding="utf-8")), 64
    elif a.reuse and os.path.exists(index):
        docs, queries = os.path.join(a.work, "docs.tsv"), os.path.join(a.work, "queries.tsv")
        n_docs = sum(1 for _ in open(docs, encoding="utf-8"))
        n_queries = (64 if a.set1 else sum(1 for _ in open(queries, encoding="utf-8")))
    else:
        docs, queries, n_docs, n_queries = make_data(a.work, a.copies, a.queries)
        t = time.time()
        run([a.lcrwmd, "build", "--embeddings", os.path.join(a.data, "embeddings", "cbow300.bin"),
             "--docs", docs, "--stopwords", stop, "--no-text", "--output", index])
        print(f"lcrwmd build: {time.time() - t:.0f} s")
    print(f"{n_docs:,} documents, {n_queries} queries")

    # lcrwmd: every method on each query in turn, a pass over the queries first untimed (as
    # Lucene's first pass, which its JIT compiles in; bm25's blocks are made on a term's first
    # search); then Lucene.
    ours_json = os.path.join(a.work, "lcrwmd.json")
    shape = (["--queries", synth_queries, "--words", "5", "--queries-output", queries] if a.set1
             else ["--queries", queries, "--words", "0"])
    run([a.bench, "--threads", "1", "--reps", str(a.runs * n_queries), "--json", ours_json,
         "directions", "--index", index] + shape +
        ["--batches", "0", "--warm-up", str(n_queries), "--query-weights", a.query_weights])
    ours = json.load(open(ours_json))
    luc, jars, lucene_top = run_lucene(a.work, docs, queries, stop, a.lucene_runs)
    # How far the two rankings agree (their tokenizers differ): the documents both put in a
    # query's top-10, of 10.
    ours_top = os.path.join(a.work, "lcrwmd-top10.tsv")
    run([a.lcrwmd, "search", "--index", index, "--queries", queries, "--method", "bm25", "--k",
         "10", "--threads", "1", "--output", ours_top], capture_output=True)
    tops = [{}, {q: set(d) for q, d in lucene_top.items()}]
    for line in open(ours_top, encoding="utf-8"):
        q, _, doc, _ = line.rstrip("\n").split("\t")
        tops[0].setdefault(q, set()).add(doc)
    agree = statistics.mean(len(tops[0].get(q, set()) & tops[1][q]) / 10 for q in tops[1])
    per_run = [statistics.mean(r) for r in luc["runs_ms"]]
    best = min(range(len(per_run)), key=per_run.__getitem__)
    lucene_median = statistics.median(luc["runs_ms"][best])
    rows = [("Lucene BM25 (its best pass)", lucene_median, per_run[best]),
            ("lcrwmd bm25", ours["single_bm25_ms"], None),
            ("lcrwmd bm25 scoring every posting", ours["single_bm25_every_posting_ms"], None),
            ("lcrwmd query-to-document", ours["single_query-to-document_ms"], None),
            ("lcrwmd hybrid", ours["single_hybrid_ms"], None),
            # Each method in a pass of its own over the queries, as Lucene is timed (above,
            # each query runs every method in turn, each finding the caches full of the
            # others' data).
            ("lcrwmd bm25, a pass of its own", ours["alone_bm25_ms"], None),
            ("lcrwmd query-to-document, a pass of its own", ours["alone_query-to-document_ms"],
             None),
            ("lcrwmd hybrid, a pass of its own", ours["alone_hybrid_ms"], None)]
    print(f"\n{n_docs:,} documents, {n_queries} typed queries, top-10, one thread, "
          f"{platform.processor() or platform.machine()}, lcrwmd's queries weighed: "
          f"{a.query_weights}")
    print(f"| per query | median (ms) | vs Lucene's median |")
    print("|---|---|---|")
    for name, med, _ in rows:
        print(f"| {name} | {med:.2f} | {med / lucene_median:.2f}x |")
    print(f"Lucene's mean per query over each pass: {', '.join(f'{m:.2f}' for m in per_run)} ms")
    print(f"top-10 documents both rank: {agree:.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"set": "set1" if a.set1 else "real", "documents": n_docs,
                       "queries": n_queries, "query_weights": a.query_weights,
                       "lucene": luc | {"jars": jars},
                       "lcrwmd": ours, "lucene_median_ms": lucene_median,
                       "lucene_mean_ms_per_pass": per_run, "top10_agreement": agree}, f,
                      indent=1)


if __name__ == "__main__":
    main()
