#!/usr/bin/python3
"""lcrwmd.gensim.WmdSimilarity beside gensim's own, on the same queries (BENCHMARKS.md):
agreement of the similarity rows and of the num_best lists, and the time of each.

    PYTHONPATH=build/python bench/gensim_dropin.py [--json out.json] [--queries 3]

Needs gensim and pyemd (scripts/install-deps.sh) and ../shared/data.
"""
import argparse
import csv
import json
import os
import platform
import time

import numpy as np
from gensim.matutils import full2sparse_clipped
from gensim.models import KeyedVectors
from gensim.similarities import WmdSimilarity as GensimWmdSimilarity

import lcrwmd
from lcrwmd.gensim import WmdSimilarity

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "..", "shared", "data")


def token_lists(path, stop, limit=None):
    with open(path, encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [[t for t in lcrwmd.tokenize(r[2]) if t not in stop] for r in rows[:limit]]


def seconds(run):
    start = time.perf_counter()
    out = run()
    return time.perf_counter() - start, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=3, help="test documents per corpus")
    ap.add_argument("--num-best", type=int, default=10)
    ap.add_argument("--corpora", nargs="+", default=["bbcsport", "twitter"])
    ap.add_argument("--json")
    args = ap.parse_args()
    with open(os.path.join(DATA, "stop_words.txt"), encoding="utf-8") as f:
        stop = {w.strip() for w in f if w.strip()}
    kv = KeyedVectors.load_word2vec_format(os.path.join(DATA, "embeddings", "cbow300.bin"),
                                           binary=True)
    rows = []
    for corpus in args.corpora:
        docs = token_lists(os.path.join(DATA, "corpora", corpus, "train.tsv"), stop)
        queries = token_lists(os.path.join(DATA, "corpora", corpus, "test.tsv"), stop,
                              args.queries)
        theirs_index = GensimWmdSimilarity(docs, kv)
        t_gensim, theirs = seconds(lambda: np.atleast_2d(theirs_index[queries]))
        t_build, ours_index = seconds(lambda: WmdSimilarity(docs, kv))
        t_rows, ours = seconds(lambda: np.atleast_2d(ours_index[queries]))
        best_index = WmdSimilarity(docs, kv, num_best=args.num_best)
        t_best, best = seconds(lambda: best_index[queries])
        if len(queries) == 1:
            best = [best]
        want = [[(int(j), float(v)) for j, v in full2sparse_clipped(t, args.num_best)]
                for t in theirs]
        same_lists = sum([i for i, _ in b] == [i for i, _ in w] for b, w in zip(best, want))
        # Exactly tied documents (duplicates) come in index order here, in argsort's there.
        same_sets = sum({i for i, _ in b} == {i for i, _ in w} and
                        all(abs(x - y) <= 5e-5 for (_, x), (_, y) in zip(b, w))
                        for b, w in zip(best, want))
        row = {
            "corpus": corpus, "documents": len(docs), "queries": len(queries),
            "gensim_s_per_query": t_gensim / len(queries),
            "lcrwmd_rows_s_per_query": t_rows / len(queries),
            "lcrwmd_top_s_per_query": t_best / len(queries),
            "lcrwmd_index_s": t_build,
            "speedup_rows": t_gensim / t_rows, "speedup_top": t_gensim / t_best,
            "max_similarity_difference": float(np.max(np.abs(ours - theirs))),
            "same_num_best_lists": same_lists,
            "same_num_best_sets_and_similarities": same_sets,
        }
        rows.append(row)
        print(f"{corpus}: {len(queries)} queries x {len(docs)} documents: gensim "
              f"{row['gensim_s_per_query']:.3f} s/query; lcrwmd all similarities "
              f"{row['lcrwmd_rows_s_per_query']:.4f} s/query ({row['speedup_rows']:.0f}x), "
              f"top-{args.num_best} {row['lcrwmd_top_s_per_query']:.4f} s/query "
              f"({row['speedup_top']:.0f}x); largest similarity difference "
              f"{row['max_similarity_difference']:.1e}; top-{args.num_best} lists identical "
              f"{same_lists}/{len(queries)}, the same documents and similarities "
              f"{same_sets}/{len(queries)}; lcrwmd's index built in {t_build:.2f} s", flush=True)
    if args.json:
        meta = {"machine": platform.node(), "cpus": os.cpu_count(),
                "date": time.strftime("%Y-%m-%d"), "simd": lcrwmd.cpu_simd_level()}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "results": rows}, f, indent=2)


if __name__ == "__main__":
    main()
