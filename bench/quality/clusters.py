#!/usr/bin/python3
"""Clustering quality against the labels (ARI, NMI): `lcrwmd cluster` (k-medoids) under WCD,
RWMD, ACT-1 and, on the smaller corpora, WMD (ICT, whose full rows cost several times WMD's
sampled pairs, is left out),
beside TF-IDF + k-means (scikit-learn) and TF-IDF L1 + k-medoids (the same alternation, every
member tried) on the same tokens; k = the number of labels, a fixed sample of each corpus's test
documents, seeds 0..2, at most ten assignments. One JSON per method in
OUT/cluster/CORPUS_METHOD.json.

    PYTHONPATH=build/python bench/quality/clusters.py --lcrwmd build/lcrwmd --data ../shared/data \
        --work /tmp/q --out bench/results/quality [CORPUS ...]
"""
import csv
import os
import subprocess
import sys
import time

import numpy as np

from sklearn.cluster import KMeans
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score, pairwise_distances
from sklearn.preprocessing import normalize

import corpora
import lcrwmd
from baselines import identity
from knn_runs import METHODS

CLUSTERED = ["wcd", "lc-rwmd", "act-1", "wmd"]
SEEDS = [0, 1, 2]
# Every n-th test document (of the test split knn_runs.py searches): 800 or fewer, so that
# WMD's assignments (documents x k exact solves per iteration) fit in the run.
EVERY = {"r8": 3, "classic": 3, "amazon": 3, "ohsumed": 8, "20news": 2}
ITERATIONS = 10
# WMD's k-medoids solves documents x k EMDs per assignment and about k x 33 x 290 per update:
# minutes per iteration on the other corpora here (20news: about 5), so it runs on these.
WMD_ON = {"bbcsport", "twitter", "r8"}


def k_medoids(d, k, seed):
    """The same alternation as `lcrwmd cluster` over a full distance matrix: k-means++ seeds,
    then each point to its nearest medoid and each medoid to its cluster's best member (every
    member tried), at most ITERATIONS assignments."""
    rng = np.random.RandomState(seed)
    medoids = [rng.randint(len(d))]
    while len(medoids) < k:
        near = d[:, medoids].min(axis=1)
        medoids.append(rng.choice(len(d), p=near / near.sum()) if near.sum() > 0
                       else rng.randint(len(d)))
    for _ in range(ITERATIONS):
        nearest = d[:, medoids].argmin(axis=1)
        moved = list(medoids)
        for m in range(k):
            members = np.flatnonzero(nearest == m)
            if len(members):
                moved[m] = members[d[np.ix_(members, members)].sum(axis=1).argmin()]
        if moved == medoids:
            break
        medoids = moved
    return d[:, medoids].argmin(axis=1)


def scores(truth, found):
    return {"ari": adjusted_rand_score(truth, found),
            "nmi": normalized_mutual_info_score(truth, found)}


def save(out, corpus, method, result):
    corpora.write_json(os.path.join(out, "cluster", f"{corpus}_{method}.json"), result)


def main():
    p = corpora.parser(__doc__)
    p.add_argument("--baselines-only", action="store_true")
    a = p.parse_args()
    embeddings = corpora.embeddings(a.data)
    stopwords = corpora.stopwords(a.data)
    os.makedirs(os.path.join(a.out, "cluster"), exist_ok=True)
    emb = lcrwmd.Embeddings.load(embeddings)
    for corpus in a.corpora:
        rows = corpora.every(corpora.read_tsv(corpora.prepare(a.data, a.work, corpus)["test"]),
                             EVERY.get(corpus, 1))
        docs = os.path.join(a.work, f"{corpus}.cluster.tsv")
        corpora.write_tsv(docs, rows)
        idx = os.path.join(a.work, f"{corpus}.cluster.tf.idx")
        subprocess.run([a.lcrwmd, "build", "--embeddings", embeddings, "--stopwords", stopwords,
                        "--docs", docs, "--output", idx, "--no-text"],
                       stderr=subprocess.DEVNULL, check=True)
        label = {r[0]: r[1] for r in rows}
        k = len(set(label.values()))
        for method in [] if a.baselines_only else CLUSTERED:
            if method == "wmd" and corpus not in WMD_ON:
                continue
            done_before = os.path.join(a.out, "cluster", f"{corpus}_{method}.json")
            if a.resume and os.path.exists(done_before):
                continue
            runs = []
            for seed in SEEDS:
                print(f"{corpus} {method} seed {seed}", file=sys.stderr, flush=True)
                began = time.perf_counter()
                done = subprocess.run([a.lcrwmd, "cluster", "--index", idx, "--k", str(k),
                                       "--seed", str(seed), "--iterations", str(ITERATIONS),
                                       *METHODS[method]],
                                      capture_output=True, text=True, check=True)
                seconds = time.perf_counter() - began
                found = list(csv.reader(done.stdout.splitlines(), delimiter="\t"))
                runs.append({"seed": seed, "seconds": seconds,
                             "objective": sum(float(r[3]) for r in found),
                             **scores([label[r[0]] for r in found], [r[1] for r in found])})
            save(a.out, corpus, method,
                 {"method": method, "k": k, "n_docs": len(found), "runs": runs})
        # The baselines on the documents the index kept (the same tokens: words with a vector).
        stop = set(lcrwmd.Index.load(idx).stopwords)
        kept = [(r[1], [t for t in lcrwmd.tokenize(r[2]) if t not in stop and t in emb])
                for r in rows]
        kept = [(y, t) for y, t in kept if t]
        truth = [y for y, _ in kept]
        x = TfidfVectorizer(analyzer=identity, norm=None).fit_transform([t for _, t in kept])
        l1 = pairwise_distances(normalize(x, "l1"), metric="manhattan")
        for name, cluster in (("tfidf-kmeans", lambda seed: KMeans(
                                  n_clusters=k, n_init=10, random_state=seed).fit_predict(
                                      normalize(x, "l2"))),
                              ("tfidf-l1-kmedoids", lambda seed: k_medoids(l1, k, seed))):
            runs = []
            for seed in SEEDS:
                began = time.perf_counter()
                found = cluster(seed)
                runs.append({"seed": seed, "seconds": time.perf_counter() - began,
                             **scores(truth, found)})
            save(a.out, corpus, "base_" + name,
                 {"method": name, "k": k, "n_docs": len(kept), "runs": runs})

if __name__ == "__main__":
    main()
