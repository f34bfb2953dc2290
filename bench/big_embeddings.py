#!/usr/bin/python3
"""Large embeddings, small corpus: what `lcrwmd build` and a one-query `lcrwmd search
--embeddings` cost in time and peak memory with a GoogleNews-sized word2vec binary file, read
as it is and indexed once by `lcrwmd embeddings`, beside a search without --embeddings and
gensim's load of the same file.

    bench/big_embeddings.py --lcrwmd build/lcrwmd --data ../shared/data [--words 3000000]
                            [--dir /tmp/lcrwmd-big] [--json F]

The file holds the shared 300-d CBOW vectors (75,000 words) spread among synthetic words up to
--words, so bbcsport's words are found in it; it is written once to --dir and reused. Each
command runs as its own process under /usr/bin/time (elapsed time, peak resident memory); the
page cache is warm (the file is read once before), as it is for repeated commands. Not CI.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np


def read_word2vec_binary(path):
    with open(path, "rb") as f:
        count, dim = map(int, f.readline().split())
        words, rows = [], np.empty((count, dim), dtype=np.float32)
        for i in range(count):
            word = bytearray()
            while (c := f.read(1)) != b" ":
                if c != b"\n":
                    word += c
            words.append(bytes(word))
            rows[i] = np.frombuffer(f.read(4 * dim), dtype=np.float32)
    return words, rows


def write_big(path, real_words, real_vectors, total, seed=1):
    """total entries: the real ones at evenly spread positions, synthetic ones between."""
    rng = np.random.default_rng(seed)
    dim = real_vectors.shape[1]
    step = total // len(real_words)
    chunk = 100_000
    with open(path + ".tmp", "wb") as f:
        f.write(b"%d %d\n" % (total, dim))
        for start in range(0, total, chunk):
            n = min(chunk, total - start)
            block = rng.standard_normal((n, dim), dtype=np.float32) * 0.2
            out = bytearray()
            for i in range(n):
                pos = start + i
                if pos % step == 0 and pos // step < len(real_words):
                    r = pos // step
                    out += real_words[r] + b" " + real_vectors[r].tobytes() + b"\n"
                else:
                    out += b"syn%08d " % pos + block[i].tobytes() + b"\n"
            f.write(out)
    os.replace(path + ".tmp", path)


def timed(cmd):
    with tempfile.NamedTemporaryFile(mode="r", suffix=".time") as t:
        proc = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", t.name, *cmd],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr}")
        seconds, kib = t.read().split()
    return {"seconds": float(seconds), "peak_mib": int(kib) / 1024}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lcrwmd", default="build/lcrwmd")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--words", type=int, default=3_000_000)
    ap.add_argument("--dir", default="/tmp/lcrwmd-big")
    ap.add_argument("--json")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    big = os.path.join(a.dir, f"big{a.words}.bin")
    if not os.path.exists(big):
        words, vectors = read_word2vec_binary(os.path.join(a.data, "embeddings", "cbow300.bin"))
        write_big(big, words, vectors, a.words)
    with open(big, "rb") as f:  # warm the page cache, as for a file used again and again
        while f.read(1 << 24):
            pass
    corpus = os.path.join(a.data, "corpora", "bbcsport")
    train = os.path.join(corpus, "train.tsv")
    query = os.path.join(a.dir, "one_query.tsv")
    with open(os.path.join(corpus, "test.tsv"), encoding="utf-8") as f, \
            open(query, "w", encoding="utf-8") as out:
        out.write(f.readline())
    index = os.path.join(a.dir, "bbc.idx")
    stop = os.path.join(a.data, "stop_words.txt")
    indexed = os.path.join(a.dir, f"big{a.words}.lce")
    search = [a.lcrwmd, "search", "--index", index, "--queries", query, "--k", "10"]
    rows = {
        "lcrwmd build (517 documents)": timed([a.lcrwmd, "build", "--embeddings", big, "--docs",
                                                train, "--stopwords", stop, "--output", index]),
        "lcrwmd search, one query, without --embeddings": timed(search),
        "lcrwmd search, one query, --embeddings": timed(search + ["--embeddings", big]),
        "lcrwmd embeddings (indexing the file, once)": timed(
            [a.lcrwmd, "embeddings", "--input", big, "--output", indexed]),
        "lcrwmd build, indexed embeddings": timed(
            [a.lcrwmd, "build", "--embeddings", indexed, "--docs", train, "--stopwords", stop,
             "--output", index + ".2"]),
        "lcrwmd search, one query, indexed --embeddings": timed(
            search + ["--embeddings", indexed]),
        "gensim KeyedVectors.load_word2vec_format": timed(
            ["/usr/bin/python3", "-c", "import sys; from gensim.models import KeyedVectors; "
             "KeyedVectors.load_word2vec_format(sys.argv[1], binary=True)", big]),
    }
    with open(index, "rb") as x, open(index + ".2", "rb") as y:
        assert x.read() == y.read(), "the indexed embeddings built another index"
    size = os.path.getsize(big)
    print(f"\n{a.words:,} words x 300 (word2vec binary, {size / 2**30:.2f} GiB), bbcsport")
    print(f"{'command':<52} {'time':>8} {'peak memory':>12}")
    for name, r in rows.items():
        print(f"{name:<52} {r['seconds']:>6.2f} s {r['peak_mib']:>8.0f} MiB")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"words": a.words, "file_bytes": size, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
