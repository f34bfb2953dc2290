"""The evaluation's documents: each corpus's splits and samples, written once as TSV files that
every method and baseline reads, so all of them see the same documents.

Protocol (Sato, Yamada & Kashima, "Re-evaluating Word Mover's Distance", ICML 2022): k is chosen
on a held-out 20% of the training set ("valid", searched against the other 80%, "fit"), and the
test error is read at that k, the test set searched against the whole training set.
"""
import argparse
import gzip
import json
import os

import numpy as np

CORPORA = ["bbcsport", "twitter", "r8", "20news", "amazon", "classic", "ohsumed", "imdb"]

# Every n-th document (in file order) where exact WMD over the whole set does not fit in the
# run's time on a 2-vCPU machine; the same documents for every method and baseline.
TEST_EVERY = {"20news": 10, "imdb": 50}
VALID_EVERY = {"20news": 3, "imdb": 10}


def source(data, corpus, split):
    plain = os.path.join(data, "corpora", corpus, split + ".tsv")
    return plain if os.path.exists(plain) else plain + ".gz"


def read_tsv(path):
    """(id, label, text) triples."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t", 2)) for line in f if line.strip()]


def write_tsv(path, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for row in rows:
            f.write("\t".join(row) + "\n")
    os.replace(tmp, path)


def hold_out(rows, share=0.2, seed=0):
    """Stratified: for each label in sorted order, one RandomState(seed) permutes the label's
    documents and the first round(share * n) are held out. Returns (fit, valid), file order."""
    rng = np.random.RandomState(seed)
    by_label = {}
    for i, row in enumerate(rows):
        by_label.setdefault(row[1], []).append(i)
    held = set()
    for label in sorted(by_label):
        members = by_label[label]
        held.update(members[j] for j in rng.permutation(len(members))[:round(share * len(members))])
    return ([r for i, r in enumerate(rows) if i not in held],
            [r for i, r in enumerate(rows) if i in held])


def every(rows, n):
    return rows[::n] if n > 1 else rows


def prepare(data, work, corpus):
    """Writes WORK/CORPUS.{train,fit,valid,test}.tsv; returns their paths by split name."""
    train = read_tsv(source(data, corpus, "train"))
    fit, valid = hold_out(train)
    splits = {"train": train, "fit": fit, "valid": every(valid, VALID_EVERY.get(corpus, 1)),
              "test": every(read_tsv(source(data, corpus, "test")), TEST_EVERY.get(corpus, 1))}
    os.makedirs(work, exist_ok=True)
    paths = {}
    for name, rows in splits.items():
        paths[name] = os.path.join(work, f"{corpus}.{name}.tsv")
        if not os.path.exists(paths[name]):
            write_tsv(paths[name], rows)
    return paths


def parser(doc, runs_lcrwmd=True):
    """The options every step takes, described by doc's first line (with --lcrwmd and --resume
    for the steps that run it)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    if runs_lcrwmd:
        p.add_argument("--lcrwmd", required=True)
        p.add_argument("--resume", action="store_true", help="keep the JSON files already written")
    p.add_argument("--data", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("corpora", nargs="*", default=CORPORA)
    return p


def embeddings(data):
    return os.path.join(data, "embeddings", "cbow300.bin")


def stopwords(data):
    return os.path.join(data, "stop_words.txt")


def write_json(path, result):
    with open(path + ".tmp", "w") as f:
        json.dump(result, f, sort_keys=True)
    os.replace(path + ".tmp", path)
