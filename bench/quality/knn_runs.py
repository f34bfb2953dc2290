#!/usr/bin/python3
"""kNN error at k = 1..19 of every method and weighting, on the validation split (against the
fit split) and on the test split (against the whole training set): `lcrwmd eval knn --json`,
one JSON file per run in OUT/knn/CORPUS_WEIGHTING_METHOD_SPLIT.json.

    bench/quality/knn_runs.py --lcrwmd build/lcrwmd --data ../shared/data --work /tmp/q \
        --out bench/results/quality [--resume] [--vectors shared|trained] [--metric learned]
        [--methods a,b] [--weightings tf,tfidf] [CORPUS ...]

--vectors trained: word vectors trained by `lcrwmd vectors train` (its defaults, seed 0, one
thread so that the model is the same bytes on every run) on the training set, never on the test
set, in place of the shared CBOW, for the validation run (k chosen on part of the training set)
and the test run alike, with and without a learned metric; JSON in OUT/knn_trained.

--metric learned: a word metric learned by `lcrwmd learn` (its defaults, seed 0) from the labels
of the fit split (80% of the training set, of which learn itself holds out 20% to stop early),
one per weighting, applied by `lcrwmd build --metric` to the fit and training indexes; k is
chosen on the validation split, never seen by learning. JSON in OUT/knn_learned (with
--vectors trained: OUT/knn_trained_learned), with each learning's summary (CORPUS_WEIGHTING_learn
.json: epochs, time and where it went); each metric's learning log beside its file in WORK.
"""
import os
import subprocess
import sys

import corpora

METHODS = {
    "wcd": ["--method", "wcd"],
    "lc-rwmd": ["--method", "lc-rwmd"],
    "lc-rwmd-one-sided": ["--method", "lc-rwmd", "--one-sided"],
    "act-1": ["--method", "act", "--act-steps", "1"],
    "ict": ["--method", "ict"],
    "wmd": ["--method", "wmd"],
}
WEIGHTINGS = ["tf", "tfidf"]
# One-sided LC-RWMD is the paper's D1 alone; TF shows what it does, TF-IDF adds nothing to it.
SKIP = {("tfidf", "lc-rwmd-one-sided")}
# The split searched, and the split it is searched against.
AGAINST = {"valid": "fit", "test": "train"}


def run(cmd, out_path):
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        subprocess.run(cmd, stdout=f, stderr=subprocess.DEVNULL, check=True)
    os.replace(tmp, out_path)


def build(a, docs, weighting, idx, embeddings, metric=None):
    if not os.path.exists(idx):
        subprocess.run([a.lcrwmd, "build", "--embeddings", embeddings, "--stopwords",
                        a.stopwords, "--weighting", weighting, "--docs", docs, "--output", idx,
                        "--no-text", *(["--metric", metric] if metric else [])],
                       stderr=subprocess.DEVNULL, check=True)


def learned_metric(a, corpus, weighting, fit_docs, embeddings, tag, results):
    """The metric learned from the fit split's labels (once), its log beside it and its
    summary (`learn --json`: epochs, time and where it went) in RESULTS."""
    path = os.path.join(a.work, f"{corpus}.fit.{weighting}{tag}.lcm")
    if not os.path.exists(path):
        idx = os.path.join(a.work, f"{corpus}.fit.{weighting}{tag}.idx")
        build(a, fit_docs, weighting, idx, embeddings)
        print(f"{corpus} {weighting}: learning a metric", file=sys.stderr, flush=True)
        summary = os.path.join(results, f"{corpus}_{weighting}_learn.json")
        with open(path + ".log.tmp", "w") as log, open(summary + ".tmp", "w") as out:
            subprocess.run([a.lcrwmd, "learn", "--index", idx, "--output", path, "--json"],
                           stdout=out, stderr=log, check=True)
        os.replace(path + ".log.tmp", path + ".log")
        os.replace(summary + ".tmp", summary)
    return path


def vectors(a, corpus, docs):
    """The word vectors of a corpus's runs: the shared ones, or a model trained on its training
    set (`docs`, once). One thread: fastText's threads race on the shared vectors, so only a
    model trained by one thread is the same on the next run, and the runs with and without a
    learned metric compare the same vectors."""
    if a.vectors == "shared":
        return a.embeddings
    model = os.path.join(a.work, f"{corpus}.train.vectors.bin")
    if not os.path.exists(model):
        print(f"{corpus}: training vectors", file=sys.stderr, flush=True)
        subprocess.run([a.lcrwmd, "vectors", "train", "--docs", docs, "--stopwords",
                        a.stopwords, "--threads", "1", "--output", model],
                       stderr=subprocess.DEVNULL, check=True)
    return model


def main():
    p = corpora.parser(__doc__)
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--weightings", default=",".join(WEIGHTINGS))
    p.add_argument("--vectors", choices=["shared", "trained"], default="shared")
    p.add_argument("--metric", choices=["none", "learned"], default="none")
    a = p.parse_args()
    for given, known in ((a.methods, METHODS), (a.weightings, WEIGHTINGS)):
        if unknown := [x for x in given.split(",") if x not in known]:
            p.error(f"unknown {', '.join(unknown)}: choose from {', '.join(known)}")
    a.embeddings = corpora.embeddings(a.data)
    a.stopwords = corpora.stopwords(a.data)
    folder = ("knn" if a.vectors == "shared" else "knn_trained") + (
        "_learned" if a.metric == "learned" else "")
    results = os.path.join(a.out, folder)
    os.makedirs(results, exist_ok=True)
    for corpus in a.corpora:
        paths = corpora.prepare(a.data, a.work, corpus)
        for weighting in a.weightings.split(","):
            for split, against in AGAINST.items():
                emb = vectors(a, corpus, paths["train"])
                tag = "" if a.vectors == "shared" else ".trained"
                metric = None
                if a.metric == "learned":
                    metric = learned_metric(a, corpus, weighting, paths["fit"], emb, tag, results)
                    tag += ".learned"
                idx = os.path.join(a.work, f"{corpus}.{against}.{weighting}{tag}.idx")
                build(a, paths[against], weighting, idx, emb, metric)
                for method in a.methods.split(","):
                    if (weighting, method) in SKIP:
                        continue
                    out = os.path.join(results, f"{corpus}_{weighting}_{method}_{split}.json")
                    if a.resume and os.path.exists(out):
                        continue
                    print(f"{corpus} {weighting} {method} {split}", file=sys.stderr, flush=True)
                    run([a.lcrwmd, "eval", "knn", "--index", idx, "--queries", paths[split],
                         "--embeddings", emb, "--json", *METHODS[method]], out)


if __name__ == "__main__":
    main()
