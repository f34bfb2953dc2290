#!/usr/bin/python3
"""Retrieval quality of every method and direction on tasks with relevance judgements
(make_tasks.py): recall@10, MRR@10 and nDCG@10 of each query's one relevant document, beside
Okapi BM25 and Xapian's BM25 on the same tokens and Lucene 8's BM25 on the same texts. Prints a
table per task and writes JSON.

  PYTHONPATH=build/python bench/retrieval/evaluate.py TASKS_DIR [--tasks a,b] [--json OUT]
      [--vectors shared,trained,trained-unit] [--hybrid-weights 0.1,0.2,...]

Vector sets (--vectors): "shared", the shared CBOW (--embeddings); "trained", fastText skipgram
trained by lcrwmd (Embeddings.train, its defaults) on each task's documents alone, never its
queries; either with "-unit" ("trained-unit"), every vector scaled to length 1 (Index.build's
unit_vectors). The hybrid's weight is chosen on the tuning task (the first of --tasks,
man-commands) for each vector set, from --hybrid-weights, and used as it is on the others.

Every run reads the tokens lcrwmd reads (its tokenizer and the stop words of the index), so
the engines differ in how they rank, not in what they see. bm25, the direct BM25 and Xapian see
every token, with or without a vector; the embedding methods only those with one. The index
keeps only documents with at least one word that has a vector; the direct BM25 and Xapian
index every document. Lucene (bench/lucene, Debian's liblucene8-java; skipped where it is not
installed) reads the texts themselves, as a user would index them: its StandardAnalyzer with
the same stop words, BM25Similarity (k1 1.2, b 0.75), one thread; its query time is the best of
--lucene-runs passes (its JIT settles over the first few).
"""
import argparse
import json
import math
import os
import sys
import time
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lucene"))
from lucene import run_lucene  # noqa: E402

import lcrwmd

K = 10
DATA = os.environ.get("LCRWMD_SHARED", os.path.join(os.path.dirname(__file__), "../../../shared"))

# (label, search keyword arguments): every method in every direction it has; query weights as
# the direction's default unless named.
RUNS = [
    ("bm25", dict(method="bm25")),
    ("hybrid", dict(method="hybrid")),
    ("hybrid (standardised over every document)", dict(method="hybrid", hybrid_sample=0)),
    ("wcd", dict(method="wcd")),
    ("lc-rwmd symmetric", dict(method="lc-rwmd")),
    ("lc-rwmd document-to-query", dict(method="lc-rwmd", direction="document-to-query")),
    ("lc-rwmd query-to-document (index weights)",
     dict(method="lc-rwmd", direction="query-to-document", query_weights="index")),
    ("lc-rwmd query-to-document (idf)", dict(method="lc-rwmd", direction="query-to-document")),
    ("act-1 query-to-document (idf)", dict(method="act", direction="query-to-document")),
    ("ict query-to-document (idf)", dict(method="ict", direction="query-to-document")),
    ("act-1 symmetric", dict(method="act")),
    ("wmd", dict(method="wmd")),
]


def read_tsv(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            ident, _, text = line.rstrip("\n").split("\t", 2)
            rows.append((ident, text))
    return rows


def metrics(ranked, relevant):
    """recall@K, MRR@K, nDCG@K of lists of ranked ids, one relevant id each."""
    r = m = n = 0.0
    for ids, rel in zip(ranked, relevant):
        if rel in ids[:K]:
            pos = ids[:K].index(rel)
            r += 1
            m += 1 / (pos + 1)
            n += 1 / math.log2(pos + 2)
    q = len(relevant)
    return {"recall@10": r / q, "mrr@10": m / q, "ndcg@10": n / q}


def bm25_rank(doc_tokens, query_tokens, k1=1.2, b=0.75):
    """Okapi BM25 (idf log(1 + (N - df + 0.5) / (df + 0.5)), a repeated query term counted as
    often as it occurs), written out directly: lcrwmd's bm25 checked against it."""
    n = len(doc_tokens)
    tf = [Counter(d) for d in doc_tokens]
    lengths = np.array([len(d) for d in doc_tokens], dtype=float)
    avg = lengths.mean()
    df = Counter(t for c in tf for t in c)
    postings = {}
    for i, c in enumerate(tf):
        for t, x in c.items():
            postings.setdefault(t, []).append((i, x))
    out = []
    for q in query_tokens:
        score = np.zeros(n)
        for t, qf in Counter(q).items():
            if t not in postings:
                continue
            idf = math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1)
            for i, x in postings[t]:
                score[i] += qf * idf * x * (k1 + 1) / (x + k1 * (1 - b + b * lengths[i] / avg))
        order = np.lexsort((np.arange(n), -score))[:K]
        out.append([i for i in order if score[i] > 0])
    return out


def xapian_rank(doc_tokens, query_tokens, k1=1.2, b=0.75):
    """Xapian's BM25 (k2 = 0, k3 = 1, min_normlen 0.5) over the same tokens as terms."""
    import xapian
    db = xapian.WritableDatabase("", xapian.DB_BACKEND_INMEMORY)
    for d in doc_tokens:
        doc = xapian.Document()
        for pos, t in enumerate(d, 1):
            doc.add_posting(t, pos)
        db.add_document(doc)
    enquire = xapian.Enquire(db)
    enquire.set_weighting_scheme(xapian.BM25Weight(k1, 0, 1, b, 0.5))
    out = []
    t = time.time()
    for q in query_tokens:
        enquire.set_query(xapian.Query(xapian.Query.OP_OR, list(dict.fromkeys(q))))
        out.append([m.docid - 1 for m in enquire.get_mset(0, K)])
    xapian_rank.query_seconds = time.time() - t  # the queries alone, not the indexing
    return out


def word_vectors(kind, folder, docs, stop, shared, threads, work, reuse):
    """The vector set `kind` for a task: the shared embeddings, or a model trained on its
    documents (returned with the training's seconds; reuse: a model trained before, 0 s)."""
    if kind == "shared":
        return shared, 0.0
    path = os.path.join(work, os.path.basename(folder) + ".bin")
    if reuse and os.path.exists(path):
        return lcrwmd.Embeddings.load(path), 0.0
    t = time.time()
    model = lcrwmd.Embeddings.train([d for _, d in docs], path, stopwords=stop, threads=threads)
    return model, time.time() - t


def lucene_rank(folder, stopwords, work, runs):
    """Lucene's top 10 of each query (by its id, the relevant document's), from the task's own
    files; None where Lucene or a JDK is not installed."""
    try:
        luc, _, top = run_lucene(os.path.join(work, "lucene-" + os.path.basename(folder)),
                                 os.path.join(folder, "docs.tsv"),
                                 os.path.join(folder, "queries.tsv"), stopwords, runs)
    except (SystemExit, FileNotFoundError):
        return None
    best = min(luc["runs_ms"], key=sum)
    return top, sum(best) / 1000


def evaluate_task(folder, emb, stop, runs, unit=False, hybrid_weight=0.3, weights=(),
                  lucene=None):
    docs = read_tsv(os.path.join(folder, "docs.tsv"))
    queries = read_tsv(os.path.join(folder, "queries.tsv"))
    t = time.time()
    index = lcrwmd.Index.build(emb, [d for _, d in docs], ids=[i for i, _ in docs],
                               stopwords=stop, keep_text=False, unit_vectors=unit)
    kept = set(index.ids)
    relevant = [i for i, _ in queries]
    qtexts = [q for _, q in queries]
    rows = {}
    found = {}  # each run's top 10s
    print(f"\n{os.path.basename(folder)}: {len(docs)} documents ({len(kept)} with a known "
          f"word), {len(queries)} queries; index {time.time() - t:.1f} s", flush=True)
    stopset = set(index.stopwords)
    tok = [[w for w in lcrwmd.tokenize(d) if w not in stopset] for _, d in docs]
    qtok = [[w for w in lcrwmd.tokenize(q) if w not in stopset] for q in qtexts]
    ids = [i for i, _ in docs]
    for name, ranker in (("bm25 (direct)", bm25_rank), ("xapian bm25", xapian_rank)):
        t = time.time()
        try:
            ranked = [[ids[i] for i in r] for r in ranker(tok, qtok)]
        except ImportError:
            print(f"  {name}: python3-xapian is not installed, skipped")
            continue
        rows[name] = dict(metrics(ranked, relevant), seconds=time.time() - t)
        if name == "xapian bm25":
            rows[name]["query_seconds"] = xapian_rank.query_seconds
        print_row(name, rows[name])
    if lucene is not None:
        t = time.time()
        got = lucene_rank(folder, *lucene)
        if got is None:
            print("  lucene bm25: liblucene8-java or a JDK is not installed, skipped")
        else:
            assert len(set(relevant)) == len(relevant), "a query id twice: Lucene's ranks by id"
            rows["lucene bm25"] = dict(metrics([got[0].get(r, []) for r in relevant], relevant),
                                       seconds=time.time() - t, query_seconds=got[1])
            print_row("lucene bm25", rows["lucene bm25"])
    # The hybrid's weight: each of `weights` tried here (the tuning task), the best kept.
    sweep = {}
    for w in weights:
        _, _, got = index.search(qtexts, k=K, return_ids=True, backend="cpu", method="hybrid",
                                 hybrid_weight=w)
        sweep[w] = metrics([[g for g in row if g] for row in got], relevant)
        print(f"  hybrid weight {w:<5} recall@10 {sweep[w]['recall@10']:.3f}  "
              f"MRR@10 {sweep[w]['mrr@10']:.3f}", flush=True)
    if sweep:
        hybrid_weight = max(sweep, key=lambda w: (sweep[w]["recall@10"], sweep[w]["mrr@10"]))
        print(f"  hybrid weight chosen: {hybrid_weight}")
    for name, kw in runs:
        if kw.get("method") == "hybrid":
            kw = dict(kw, hybrid_weight=hybrid_weight)
        t = time.time()
        with np.errstate(all="ignore"):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, _, got = index.search(qtexts, k=K, return_ids=True, backend="cpu", **kw)
        ranked = [[g for g in row if g] for row in got]
        found[name] = ranked
        rows[name] = dict(metrics(ranked, relevant), seconds=time.time() - t)
        print_row(name, rows[name])
    # What any fusion of two rankings' top 10s could reach at best: the queries whose document
    # is in either.
    a, b = "bm25", "lc-rwmd query-to-document (idf)"
    if a in found and b in found:
        either = sum(rel in x[:K] or rel in y[:K]
                     for x, y, rel in zip(found[a], found[b], relevant)) / len(relevant)
        rows["ceiling: bm25 or query-to-document"] = {"recall@10": either}
        print(f"  {'ceiling: in bm25s or query-to-documents top 10':44s} recall@10 {either:.3f}")
    return {"documents": len(docs), "queries": len(queries), "runs": rows,
            "hybrid_weight": hybrid_weight, "hybrid_sweep": {str(w): m for w, m in sweep.items()}}


def print_row(name, r):
    queries = f", queries {r['query_seconds']:.2f} s" if "query_seconds" in r else ""
    print(f"  {name:44s} recall@10 {r['recall@10']:.3f}  MRR@10 {r['mrr@10']:.3f}  "
          f"nDCG@10 {r['ndcg@10']:.3f}  ({r['seconds']:.2f} s{queries})", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks")
    ap.add_argument("--tasks", dest="only", default="man-commands,man-library,debian-packages")
    ap.add_argument("--runs", default="", help="comma-separated labels (default: all)")
    ap.add_argument("--embeddings", default=os.path.join(DATA, "data/embeddings/cbow300.bin"))
    ap.add_argument("--stopwords", default=os.path.join(DATA, "data/stop_words.txt"))
    ap.add_argument("--vectors", default="shared",
                    help="comma-separated vector sets: shared, trained, trained-unit")
    ap.add_argument("--hybrid-weights", default="",
                    help="comma-separated weights tried on the tuning task (default: 0.3 alone)")
    ap.add_argument("--threads", type=int, default=0, help="training threads (0: every core)")
    ap.add_argument("--work", default="/tmp/lcrwmd-retrieval-vectors",
                    help="where trained models are written")
    ap.add_argument("--reuse-vectors", action="store_true",
                    help="take the models a run before trained in --work")
    ap.add_argument("--lucene-runs", type=int, default=5,
                    help="Lucene's passes over each task's queries, the best timed (0: no Lucene)")
    ap.add_argument("--json")
    a = ap.parse_args()
    shared = lcrwmd.Embeddings.load(a.embeddings)
    with open(a.stopwords, encoding="utf-8") as f:
        stop = [w.strip() for w in f if w.strip()]
    runs = [r for r in RUNS if not a.runs or r[0] in a.runs.split(",")]
    weights = [float(w) for w in a.hybrid_weights.split(",") if w]
    os.makedirs(a.work, exist_ok=True)
    out = {"k": K, "lcrwmd": lcrwmd.__file__, "vectors": {}}
    tasks = a.only.split(",")
    models = {}  # (task, "shared" | "trained"): the vectors and their training's seconds
    for kind in a.vectors.split(","):
        out["vectors"][kind] = {}
        hybrid_weight = 0.3
        for n, task in enumerate(tasks):
            folder = os.path.join(a.tasks, task)
            base = kind.removesuffix("-unit")
            if (task, base) not in models:
                models[task, base] = word_vectors(base, folder, read_tsv(os.path.join(
                    folder, "docs.tsv")), stop, shared, a.threads, a.work, a.reuse_vectors)
            emb, seconds = models[task, base]
            print(f"\n[{kind} vectors] {task}" +
                  (f": trained in {seconds:.1f} s" if seconds else ""), flush=True)
            lucene = (a.stopwords, a.work, a.lucene_runs) if a.lucene_runs > 0 else None
            r = evaluate_task(folder, emb, stop, runs, unit=kind.endswith("-unit"),
                              hybrid_weight=hybrid_weight, weights=weights if n == 0 else (),
                              lucene=lucene)
            hybrid_weight = r["hybrid_weight"]
            r["training_seconds"] = seconds
            out["vectors"][kind][task] = r
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
