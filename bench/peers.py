#!/usr/bin/python3
"""lcrwmd's exact WMD side by side with POT (ot.emd2) and gensim (wmdistance, WmdSimilarity).

    bench/peers.py --lcrwmd build/lcrwmd --data ../shared/data [--corpus bbcsport] [--json F]

The documents are tokenised here exactly as lcrwmd does (runs of ASCII letters, digits,
apostrophes and bytes >= 0x80, ASCII-lowercased, apostrophes stripped at the ends; Kusner's
stop words; words without an embedding dropped; weights = counts / total), and lcrwmd is given
the same embeddings for query words its index lacks, so both sides solve the same problems.
Reports: distances (POT to 1e-6 relative, gensim's wmdistance), top-10 neighbours, and times.
Needs python3-pot, python3-gensim, python3-pyemd (scripts/install-deps.sh --results). Not CI.
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import ot
from gensim.models import KeyedVectors

TOKEN = re.compile(rb"[A-Za-z0-9'\x80-\xff]+")


def read_tsv(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        for line in f:
            doc_id, label, text = line.rstrip(b"\n").split(b"\t", 2)
            yield doc_id.decode(), label.decode(), text


def bag(text, stop, kv):
    """(distinct words, their weights, the kept tokens in order)."""
    tokens = []
    for tok in TOKEN.findall(text):
        w = tok.lower().strip(b"'")
        if not w:
            continue
        w = w.decode("utf-8", "surrogateescape")
        if w not in stop and w in kv.key_to_index:
            tokens.append(w)
    words, counts = np.unique(np.array(tokens, dtype=object), return_counts=True)
    c = counts.astype(np.float64)
    return list(words), c / c.sum() if len(c) else c, tokens


def cost_matrix(kv, a_words, b_words):
    return ot.dist(kv[a_words].astype(np.float64), kv[b_words].astype(np.float64),
                   metric="euclidean")


def run(cmd):
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return time.perf_counter() - t, r.stdout, r.stderr


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--lcrwmd", default="build/lcrwmd")
    p.add_argument("--data", default="../shared/data")
    p.add_argument("--corpus", default="bbcsport")
    p.add_argument("--pair-queries", type=int, default=20,
                   help="queries whose distances to every document are compared pair by pair")
    p.add_argument("--gensim-queries", type=int, default=2,
                   help="queries for gensim's WmdSimilarity (slow: one EMD per document)")
    p.add_argument("--json")
    a = p.parse_args()
    d = a.data
    emb = f"{d}/embeddings/cbow300.bin"
    stop_path = f"{d}/stop_words.txt"
    train_path = f"{d}/corpora/{a.corpus}/train.tsv"
    test_path = f"{d}/corpora/{a.corpus}/test.tsv"
    kv = KeyedVectors.load_word2vec_format(emb, binary=True)
    stop = set(open(stop_path).read().split())
    train = [(i, bag(t, stop, kv)) for i, _, t in read_tsv(train_path)]
    train = [(i, b) for i, b in train if b[0]]
    test = [(i, bag(t, stop, kv)) for i, _, t in read_tsv(test_path)]
    test = [(i, b) for i, b in test if b[0]]
    n, nq = len(train), len(test)
    h = float(np.mean([len(b[0]) for _, b in train + test]))
    print(f"{a.corpus}: {nq} test x {n} train documents, {h:.1f} distinct words per document")

    tmp = tempfile.mkdtemp(prefix="lcrwmd-peers-")
    idx = os.path.join(tmp, "train.idx")
    run([a.lcrwmd, "build", "--embeddings", emb, "--docs", train_path, "--stopwords", stop_path,
         "--output", idx])
    common = ["--index", idx, "--stopwords", stop_path, "--embeddings", emb]
    res = {"corpus": a.corpus, "n_queries": nq, "n_docs": n, "mean_distinct_words": h}

    # 1. Distances pair by pair: lcrwmd pairwise (one thread) against ot.emd2 on the same
    #    cost matrices, and gensim's wmdistance on the same token lists.
    sub = os.path.join(tmp, "sub.tsv")
    with open(test_path, "rb") as f, open(sub, "wb") as out:
        kept = {i for i, _ in test[: a.pair_queries]}
        for line in f:
            if line.split(b"\t", 1)[0].decode() in kept:
                out.write(line)
    npy = os.path.join(tmp, "wmd.npy")
    t_ours, _, _ = run([a.lcrwmd, "pairwise", *common, "--queries", sub, "--method", "wmd",
                        "--threads", "1", "--output", npy])
    ours = np.load(npy)
    pot = np.zeros_like(ours, dtype=np.float64)
    t_cost = t_emd = 0.0
    problems = open(os.path.join(tmp, "problems.bin"), "wb")
    for q, (_, (qw, qa, _)) in enumerate(test[: a.pair_queries]):
        for i, (_, (dw, da, _)) in enumerate(train):
            t0 = time.perf_counter()
            c = cost_matrix(kv, dw, qw)
            t1 = time.perf_counter()
            pot[q, i] = ot.emd2(da, qa, c)
            t_emd += time.perf_counter() - t1
            t_cost += t1 - t0
            problems.write(np.array(c.shape, dtype=np.int32).tobytes() + da.tobytes() +
                           qa.tobytes() + c.tobytes() + np.float64(pot[q, i]).tobytes())
    problems.close()
    # The same cost matrices through lcrwmd's solver alone (lcrwmd_bench emd, one thread).
    _, bench_out, _ = run([os.path.join(os.path.dirname(a.lcrwmd), "lcrwmd_bench"), "--threads",
                           "1", "emd", "--problems", os.path.join(tmp, "problems.bin")])
    emd_us = float(re.search(r"emd per problem, one thread \(us\)\s+([0-9.]+)", bench_out).group(1))
    emd_diff = 1e-9 * float(re.search(r"max relative difference to the reference \(x 1e-9\)"
                                      r"\s+([0-9.e+-]+)", bench_out).group(1))
    pairs = ours.size
    rel = np.abs(ours - pot) / np.maximum(pot, 1e-12)
    res["pairs"] = {
        "pairs": int(pairs), "max_rel_diff_pot": float(rel.max()),
        "lcrwmd_us_per_pair_1thread": 1e6 * t_ours / pairs,
        "pot_emd2_us_per_pair": 1e6 * t_emd / pairs,
        "pot_cost_matrix_us_per_pair": 1e6 * t_cost / pairs,
        "lcrwmd_emd_us_on_pot_cost_matrices": emd_us,
        "max_rel_diff_lcrwmd_emd_vs_pot_same_matrices": emd_diff,
    }
    g = []
    for q, (_, (_, _, qt)) in enumerate(test[: a.gensim_queries]):
        for i, (_, (_, _, dt)) in enumerate(train[:100]):
            g.append((ours[q, i], kv.wmdistance(dt, qt, norm=False)))
    g = np.array(g)
    res["pairs"]["max_rel_diff_gensim"] = float(
        (np.abs(g[:, 0] - g[:, 1]) / np.maximum(g[:, 1], 1e-12)).max())
    print(json.dumps(res["pairs"], indent=1))

    # 2. Top-10 for every test document: lcrwmd search (pruned, all threads) against POT
    #    brute force over every pair, and gensim's WmdSimilarity on a few queries.
    t_search, out, err = run([a.lcrwmd, "search", *common, "--queries", test_path,
                              "--method", "wmd", "--k", "10"])
    ours_top = {}
    for line in out.splitlines():
        qid, rank, did, dist = line.split("\t")
        ours_top.setdefault(qid, []).append(did)
    t0 = time.perf_counter()
    same = 0
    brute_top = {}
    for qid, (qw, qa, _) in test:
        dist = np.array([ot.emd2(da, qa, cost_matrix(kv, dw, qw)) for _, (dw, da, _) in train])
        order = np.lexsort((np.arange(n), dist.astype(np.float32)))[:10]
        brute_top[qid] = [train[i][0] for i in order]
        same += brute_top[qid] == ours_top.get(qid)
    t_brute = time.perf_counter() - t0
    # gensim's WmdSimilarity is this loop over wmdistance, but with unit-normalised vectors
    # (its default norm=True), another distance; the loop with norm=False is the same search.
    t0 = time.perf_counter()
    gensim_same = 0
    for qid, (_, _, qt) in test[: a.gensim_queries]:
        dist = np.array([kv.wmdistance(dt, qt, norm=False) for _, (_, _, dt) in train])
        order = np.lexsort((np.arange(n), dist.astype(np.float32)))[:10]
        gensim_same += [train[i][0] for i in order] == ours_top.get(qid)
    t_gensim = (time.perf_counter() - t0) / a.gensim_queries
    solves = re.search(r"EMD solves: (\d+)", err)
    res["topk"] = {
        "k": 10, "queries_identical_to_pot": same, "queries": nq,
        "queries_identical_to_gensim_brute_force": gensim_same, "gensim_queries": a.gensim_queries,
        "lcrwmd_seconds": t_search, "pot_brute_force_seconds": t_brute,
        "speedup_vs_pot": t_brute / t_search,
        "gensim_wmdistance_seconds_per_query": t_gensim,
        "speedup_vs_gensim": t_gensim * nq / t_search,
        "lcrwmd_emd_solves": int(solves.group(1)) if solves else None,
        "pairs": nq * n,
    }
    print(json.dumps(res["topk"], indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
