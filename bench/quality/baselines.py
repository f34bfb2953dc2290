#!/usr/bin/python3
"""The baselines a user tries first, on the same tokens and splits as the methods: bag of words
and TF-IDF, L1-normalised, with the L1 distance (Sato et al.'s strongest baselines), and TF-IDF
with the cosine distance, through scikit-learn. kNN errors at k = 1..19 with `lcrwmd eval knn`'s
vote, one JSON file per run in OUT/knn/CORPUS_base_NAME_SPLIT.json, as knn_runs.py writes them.

    PYTHONPATH=build/python bench/quality/baselines.py --data ../shared/data --work /tmp/q \
        --out bench/results/quality [CORPUS ...]

"The same tokens": lcrwmd's tokenizer, the stop words removed, and only words with a vector
in the embeddings kept (what the index holds); documents left empty are left out, as the index
and `eval knn` leave them out.
"""
import os
import sys
import time
from collections import Counter

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.metrics import pairwise_distances
from sklearn.preprocessing import normalize

import corpora
import lcrwmd

KS = range(1, 20)


def vote(labels, k):
    """`lcrwmd eval knn`'s vote: the majority of the k nearest; a tie goes to the k - 1 nearest."""
    for j in range(min(k, len(labels)), 0, -1):
        counts = Counter(labels[:j]).most_common()
        if len(counts) == 1 or counts[0][1] > counts[1][1]:
            return counts[0][0]
    return None


def identity(tokens):
    return tokens


BASELINES = {
    # name: (vectorizer, the rows' norm, metric)
    "bow-l1": (lambda: CountVectorizer(analyzer=identity), "l1", "manhattan"),
    "tfidf-l1": (lambda: TfidfVectorizer(analyzer=identity, norm=None), "l1", "manhattan"),
    "tfidf-cos": (lambda: TfidfVectorizer(analyzer=identity, norm=None), "l2", "cosine"),
}


def knn_errors(metric, train_x, train_y, query_x, query_y):
    """Errors at each k; neighbours by ascending distance, ties to the earlier training document."""
    wrong = np.zeros(max(KS) + 1)
    for start in range(0, query_x.shape[0], 256):
        d = pairwise_distances(query_x[start:start + 256], train_x, metric=metric, n_jobs=-1)
        nearest = np.argsort(d, axis=1, kind="stable")[:, :max(KS)]
        for row, truth in zip(nearest, query_y[start:start + 256]):
            labels = [train_y[i] for i in row]
            for k in KS:
                wrong[k] += vote(labels, k) != truth
    return {str(k): wrong[k] / query_x.shape[0] for k in KS}



def main():
    a = corpora.parser(__doc__, runs_lcrwmd=False).parse_args()
    emb = lcrwmd.Embeddings.load(corpora.embeddings(a.data))
    with open(corpora.stopwords(a.data)) as f:
        stop = {w.strip() for w in f if w.strip()}

    def tokens(rows):
        docs = [[t for t in lcrwmd.tokenize(text) if t not in stop and t in emb]
                for _, _, text in rows]
        kept = [i for i, d in enumerate(docs) if d]
        return [docs[i] for i in kept], np.array([rows[i][1] for i in kept], dtype=object)

    os.makedirs(os.path.join(a.out, "knn"), exist_ok=True)
    for corpus in a.corpora:
        paths = corpora.prepare(a.data, a.work, corpus)
        split = {name: tokens(corpora.read_tsv(path)) for name, path in paths.items()}
        for query, against in (("valid", "fit"), ("test", "train")):
            (docs, labels), (queries, truth) = split[against], split[query]
            for name, (make, norm, metric) in BASELINES.items():
                print(f"{corpus} {name} {query}", file=sys.stderr, flush=True)
                began = time.perf_counter()
                vec = make().fit(docs)
                errors = knn_errors(metric, normalize(vec.transform(docs), norm), labels,
                                    normalize(vec.transform(queries), norm), truth)
                result = {"method": name, "errors": errors, "n_queries": len(queries),
                          "n_docs": len(docs), "seconds": time.perf_counter() - began,
                          "vocabulary": len(vec.vocabulary_)}
                corpora.write_json(
                    os.path.join(a.out, "knn", f"{corpus}_base_{name}_{query}.json"), result)

if __name__ == "__main__":
    main()
