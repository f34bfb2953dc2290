#!/usr/bin/python3
"""Word vectors trained in the engine: what training, n-gram vectors and a served model cost.

    PYTHONPATH=build/python bench/vectors.py [--data ../shared/data] [--corpus 20news]
        [--epochs 5] [--reps 2] [--json F]

1. Training speed: `lcrwmd vectors train` beside Debian's `fasttext skipgram` on the same
   tokens (the index's tokenizer and stop words, a document a line; the same options, two
   threads), alternated REPS times. Words/s = tokens x epochs / seconds, from each command's
   wall clock (ours includes reading and tokenizing the TSV) and, for ours, its training alone.
2. Train + build end to end: `lcrwmd build --train-vectors` (the defaults: 20 epochs) on the
   corpus's training split, wall clock.
3. A query word the model never saw: query-to-document searches of the test split's first 1,000
   documents' first five words, as they are and with every word misspelled (a letter doubled),
   against the index of step 2 with its model: the second's extra time is the n-gram vectors
   (each unseen word's vector: the mean of its n-grams' rows).
4. The service's resident memory (VmRSS, after /health answers) over that index: without
   --embeddings, with the model (200,000 buckets), and with a model of fastText's default
   2,000,000 buckets (one epoch: memory does not depend on it).
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

import lcrwmd
from bench_args import rss_mib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def read_tsv(path):
    out = subprocess.run(["zcat", "-f", path], check=True, capture_output=True).stdout
    return [line.split("\t", 2) for line in out.decode("utf-8").splitlines() if line]


def token_lines(rows, stop):
    """The tokens `lcrwmd vectors train` trains on: the index's tokenizer, stop words dropped,
    documents left with none skipped."""
    lines = []
    for _, _, text in rows:
        tokens = [t for t in lcrwmd.tokenize(text) if t not in stop]
        if tokens:
            lines.append(" ".join(tokens))
    return lines


def served_rss(cli, index, extra):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([cli, "serve", "--index", index, "--port", str(port), *extra],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        return rss_mib(p.pid)
    finally:
        p.terminate()
        p.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--corpus", default="20news")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--lcrwmd", default=os.path.join(ROOT, "build", "lcrwmd"))
    ap.add_argument("--json")
    a = ap.parse_args()
    corpus = os.path.join(a.data, "corpora", a.corpus)
    train = [p for p in (os.path.join(corpus, "train.tsv"), os.path.join(corpus, "train.tsv.gz"))
             if os.path.exists(p)][0]
    test = [p for p in (os.path.join(corpus, "test.tsv"), os.path.join(corpus, "test.tsv.gz"))
            if os.path.exists(p)][0]
    stopfile = os.path.join(a.data, "stop_words.txt")
    stop = set(w.strip() for w in open(stopfile, encoding="utf-8") if w.strip())
    out = {"corpus": a.corpus, "epochs": a.epochs, "machine": os.uname().nodename}
    fasttext = shutil.which("fasttext")
    with tempfile.TemporaryDirectory() as tmp:
        rows = read_tsv(train)
        lines = token_lines(rows, stop)
        tokens = sum(len(line.split()) for line in lines)
        text = os.path.join(tmp, "tokens.txt")
        with open(text, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        print(f"{a.corpus}: {len(rows)} documents, {tokens} tokens past the stop words")
        # 1. Training speed, alternated.
        common = dict(dim=100, epoch=a.epochs, minCount=5, minn=3, maxn=6, bucket=200000,
                      thread=2)
        ours_flags = ["--dim", "100", "--epochs", str(a.epochs), "--min-count", "5", "--minn",
                      "3", "--maxn", "6", "--buckets", "200000", "--threads", "2"]
        runs = {"lcrwmd": [], "lcrwmd_training": [], "fasttext": [], "python": []}
        texts = [r[2] for r in rows]
        for rep in range(a.reps):
            t = time.time()
            r = subprocess.run([a.lcrwmd, "vectors", "train", "--docs", train, "--stopwords",
                                stopfile, "--output", os.path.join(tmp, "ours.bin"),
                                *ours_flags], check=True, capture_output=True, text=True)
            runs["lcrwmd"].append(time.time() - t)
            runs["lcrwmd_training"].append(float(re.search(r"words/s \(([0-9.]+) s\)",
                                                           r.stderr).group(1)))
            if fasttext:
                t = time.time()
                subprocess.run([fasttext, "skipgram", "-input", text, "-output",
                                os.path.join(tmp, "theirs"), "-verbose", "0",
                                *[x for k, v in common.items() for x in (f"-{k}", str(v))]],
                               check=True, capture_output=True)
                runs["fasttext"].append(time.time() - t)
            t = time.time()  # Embeddings.train: the same training, without a progress callback
            lcrwmd.Embeddings.train(texts, os.path.join(tmp, "python.bin"), stopwords=list(stop),
                                    dim=100, epochs=a.epochs, min_count=5, minn=3, maxn=6,
                                    buckets=200000, threads=2)
            runs["python"].append(time.time() - t)
        work = tokens * a.epochs
        out["tokens"] = tokens
        out["training"] = {k: {"seconds": v, "words_per_second": [work / s for s in v]}
                           for k, v in runs.items() if v}
        print("\n| training, 2 threads | best of runs | words/s |\n|---|---|---|")
        for k, v in runs.items():
            if v:
                print(f"| {k} | {min(v):.1f} s | {work / min(v):,.0f} |")
        # 2. Train + build end to end (the defaults).
        index = os.path.join(tmp, "trained.idx")
        t = time.time()
        subprocess.run([a.lcrwmd, "build", "--train-vectors", "--docs", train, "--stopwords",
                        stopfile, "--output", index], check=True, capture_output=True)
        out["train_and_build_seconds"] = time.time() - t
        model = os.path.join(tmp, "trained.vectors.bin")
        print(f"\ntrain + build (20 epochs, 2 threads): {out['train_and_build_seconds']:.1f} s")
        # 3. Unseen query words.
        vectors = lcrwmd.Embeddings.load(model)
        ix = lcrwmd.Index.load(index, embeddings=vectors)
        heads = []
        for _, _, t_ in read_tsv(test)[:1000]:
            words = [w for w in lcrwmd.tokenize(t_) if w not in stop and w.isalpha()][:5]
            if words:
                heads.append(words)
        seen = [" ".join(w) for w in heads]
        typos = [" ".join(x[: len(x) // 2] + x[len(x) // 2] + x[len(x) // 2:] for x in w)
                 for w in heads]
        known = set(vectors.words)
        unseen = sum(1 for q in typos for x in q.split() if x not in known)
        # The n-gram vector alone: model[word] for each distinct misspelling it never saw, and for
        # as many words of its dictionary.
        never = sorted({x for q in typos for x in q.split() if x not in known})
        lookups = {}
        for name, ws in (("unseen", never), ("dictionary", vectors.words[:len(never)])):
            t = time.perf_counter()
            for _ in range(5):
                for w in ws:
                    vectors[w]
            lookups[name] = (time.perf_counter() - t) / 5 / max(1, len(ws))
        print(f"a word's vector: {lookups['unseen'] * 1e6:.1f} us unseen (n-grams alone), "
              f"{lookups['dictionary'] * 1e6:.1f} us in the dictionary (Python's model[word])")
        times = {}
        for name, qs in (("as written", seen), ("misspelled", typos)):
            best = float("inf")
            for _ in range(3):
                t = time.time()
                ix.search(qs, k=10, direction="query-to-document", backend="cpu")
                best = min(best, time.time() - t)
            times[name] = best
        out["unseen_words"] = {"queries": len(heads), "misspelled_words_unseen": unseen,
                               "seconds": times, "lookup_seconds": lookups}
        print(f"\n{len(heads)} queries of five words, query-to-document: as written "
              f"{times['as written']:.3f} s, misspelled ({unseen} words the model never saw) "
              f"{times['misspelled']:.3f} s")
        # 4. The service's memory.
        big = os.path.join(tmp, "big.bin")
        subprocess.run([a.lcrwmd, "vectors", "train", "--docs", train, "--stopwords", stopfile,
                        "--output", big, "--epochs", "1", "--buckets", "2000000", "--threads",
                        "2"], check=True, capture_output=True)
        bigix = os.path.join(tmp, "big.idx")
        subprocess.run([a.lcrwmd, "build", "--embeddings", big, "--docs", train, "--stopwords",
                        stopfile, "--output", bigix], check=True, capture_output=True)
        rss = {"index alone": served_rss(a.lcrwmd, index, []),
               "with the model (200,000 buckets)": served_rss(a.lcrwmd, index,
                                                              ["--embeddings", model]),
               "another index, model of 2,000,000 buckets": served_rss(
                   a.lcrwmd, bigix, ["--embeddings", big])}
        out["serve_rss_mib"] = rss
        out["model_bytes"] = {"200000": os.path.getsize(model), "2000000": os.path.getsize(big)}
        print("\n| lcrwmd serve | resident MiB |\n|---|---|")
        for k, v in rss.items():
            print(f"| {k} | {v:.0f} |")
        print(f"model files: {os.path.getsize(model) / 2**20:.0f} MiB (200,000 buckets), "
              f"{os.path.getsize(big) / 2**20:.0f} MiB (2,000,000)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
