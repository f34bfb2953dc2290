#!/usr/bin/python3
"""The hybrid's standardisation and fusion, other ways, from every document's rows.

The hybrid standardises bm25's scores and query-to-document's distances over one fixed sample of
the documents, and a top-k pays for the sample on every query. This recomputes, with numpy, from
each task's whole rows of bm25 scores and query-to-document distances, what other ways would
rank: the scores over every document (as the engine did before: every posting of the query's
terms read for their moments); the scores over the best score and the distances over the
nearest (no moments, no sample); the scores over the best with the sampled distances;
reciprocal rank fusion; smaller samples. The first row recomputes the engine's hybrid and is
checked against its top-10s. Weights are to be chosen on man-commands alone (the tuning task);
the other two are held out.

Usage: PYTHONPATH=build/python fusions.py TASKS_DIR [--json OUT] (tasks from make_tasks.py).
"""
import argparse
import json
import os

import numpy as np

import lcrwmd
from evaluate import DATA, K, metrics, read_tsv  # the tasks' reader and measures

SAMPLE = 1024  # the engine's default hybrid_sample
WEIGHT = 0.3   # the engine's default hybrid_weight


def ranked(fused):
    """Each row's K least, ties to the smaller document, as the engine orders them."""
    return np.argsort(fused, axis=1, kind="stable")[:, :K]


def as_ids(top, ids):
    """Rows of document positions as the documents' ids (what metrics compares)."""
    return [[ids[i] for i in row] for row in top]


def z(x, columns=None):
    """Each row standardised by the moments of `columns` (all where None); sd 0 counts as 1."""
    y = x if columns is None else x[:, columns]
    sd = y.std(1, keepdims=True)
    sd[sd == 0] = 1
    return (x - y.mean(1, keepdims=True)) / sd


def rows(index, queries, method, **kw):
    """The (queries, documents) rows, a query with no known word a row of zeros."""
    out = np.zeros((len(queries), len(index.ids)))
    for c0 in range(0, len(queries), 50):
        chunk = queries[c0:c0 + 50]
        try:
            out[c0:c0 + len(chunk)] = index.pairwise(chunk, method=method, **kw)
        except ValueError:  # one of them has no known word: each alone
            for i, q in enumerate(chunk):
                try:
                    out[c0 + i] = index.pairwise([q], method=method, **kw)[0]
                except ValueError:
                    pass
    return out


def evenly(n, m):
    """The engine's sample: m of n documents at evenly spaced ranks (no deletions here)."""
    m = min(m, n)
    return np.arange(m) * n // m


def variants(S, D, sample):
    zd = z(D, sample)
    best = S.max(1, keepdims=True)
    best[best == 0] = 1
    nearest = D.min(1, keepdims=True)
    nearest[nearest == 0] = 1
    out = {f"the engine: both over the sample, w={WEIGHT}": WEIGHT * zd - z(S, sample),
           f"z(scores) over every document, z(distances) over the sample, w={WEIGHT}":
           WEIGHT * zd - z(S)}
    for w in (0.1, 0.5):
        out[f"both over the sample, w={w}"] = w * zd - z(S, sample)
    for m in (64, 128, 256, 512):  # smaller samples than the engine's
        few = evenly(S.shape[1], m)
        out[f"both over a sample of {m}, w={WEIGHT}"] = WEIGHT * z(D, few) - z(S, few)
    for w in (0.02, 0.05, 0.1, 0.2):
        out[f"scores / best, distances / nearest, w={w}"] = w * D / nearest - S / best
    for w in (0.02, 0.03, 0.05, 0.1):
        out[f"scores / best, z(distances) over the sample, w={w}"] = w * zd - S / best
    rs = np.argsort(np.argsort(-S, 1, kind="stable"), 1, kind="stable")
    rd = np.argsort(np.argsort(D, 1, kind="stable"), 1, kind="stable")
    for c in (5, 10):
        for w in (0.1, 0.2, 0.3):
            out[f"reciprocal rank fusion, c={c}, w={w}"] = -(1 / (c + rs + 1) + w / (c + rd + 1))
    return {name: ranked(fused) for name, fused in out.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks")
    ap.add_argument("--only", default="man-commands,man-library,debian-packages")
    ap.add_argument("--embeddings", default=os.path.join(DATA, "data/embeddings/cbow300.bin"))
    ap.add_argument("--stopwords", default=os.path.join(DATA, "data/stop_words.txt"))
    ap.add_argument("--json")
    a = ap.parse_args()
    emb = lcrwmd.Embeddings.load(a.embeddings)
    with open(a.stopwords, encoding="utf-8") as f:
        stop = [w.strip() for w in f if w.strip()]
    out = {}
    for task in a.only.split(","):
        folder = os.path.join(a.tasks, task)
        docs = read_tsv(os.path.join(folder, "docs.tsv"))
        queries = read_tsv(os.path.join(folder, "queries.tsv"))
        index = lcrwmd.Index.build(emb, [d for _, d in docs], ids=[i for i, _ in docs],
                                   stopwords=stop, keep_text=False)
        ids = list(index.ids)
        relevant = [i for i, _ in queries]
        texts = [q for _, q in queries]
        n = len(ids)
        S = -rows(index, texts, "bm25")  # bm25's distance is its score negated
        D = rows(index, texts, "lc-rwmd", direction="query-to-document")
        found = {name: as_ids(top, ids)
                 for name, top in variants(S, D, evenly(n, SAMPLE)).items()}
        _, _, got = index.search(texts, k=K, return_ids=True, backend="cpu", method="hybrid")
        engine = [[g for g in row if g] for row in got]
        recomputed = next(iter(found.values()))
        same = float(np.mean([x == y for x, y in zip(recomputed, engine)]))
        print(f"\n{task}: {n} documents, {len(queries)} queries; the engine's top-10 recomputed "
              f"here equal to its own for {same:.3f} of the queries")
        result = {"engine hybrid": metrics(engine, relevant),
                  "bm25": metrics(as_ids(ranked(-S), ids), relevant),
                  "query-to-document": metrics(as_ids(ranked(D), ids), relevant)}
        result.update({name: metrics(top, relevant) for name, top in found.items()})
        for name, r in result.items():
            print(f"  {name:66s} recall@10 {r['recall@10']:.3f}  MRR@10 {r['mrr@10']:.3f}")
        out[task] = {"documents": n, "queries": len(queries), "same_top10_as_engine": same,
                     "runs": result}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
