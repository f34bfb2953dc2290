#!/usr/bin/python3
"""Cuts the bundled demo data from ../shared/data: a stratified slice of bbcsport (train for the
index, a few test documents as queries), the stop words, and the word2vec-binary rows of
cbow300.bin for the words the slice uses. Rerunning it reproduces data/demo byte for byte."""
import collections
import os
import re
import struct
import sys

SHARED = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../shared/data")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../data/demo")
PER_CLASS_TRAIN, PER_CLASS_QUERY = 24, 2
TOKEN = re.compile(rb"[A-Za-z0-9'\x80-\xff]+")


def tokens(text):
    for t in TOKEN.findall(text):
        t = t.strip(b"'").lower()
        if t:
            yield t


def stratified(path, per_class):
    taken = collections.Counter()
    lines = []
    with open(path, "rb") as f:
        for line in f:
            label = line.split(b"\t")[1]
            if taken[label] < per_class:
                taken[label] += 1
                lines.append(line)
    return lines


def main():
    os.makedirs(OUT, exist_ok=True)
    train = stratified(os.path.join(SHARED, "corpora/bbcsport/train.tsv"), PER_CLASS_TRAIN)
    queries = stratified(os.path.join(SHARED, "corpora/bbcsport/test.tsv"), PER_CLASS_QUERY)
    with open(os.path.join(SHARED, "stop_words.txt"), "rb") as f:
        stop_bytes = f.read()
    stop = set(stop_bytes.split())
    words = set()
    for line in train + queries:
        words.update(t for t in tokens(line.split(b"\t", 2)[2]) if t not in stop)
    rows = []
    with open(os.path.join(SHARED, "embeddings/cbow300.bin"), "rb") as f:
        count, dim = map(int, f.readline().split())
        for _ in range(count):
            word = b""
            while True:
                c = f.read(1)
                if c == b" ":
                    break
                if c != b"\n":
                    word += c
            vec = f.read(4 * dim)
            if word in words:
                rows.append((word, vec))
    with open(os.path.join(OUT, "embeddings.bin"), "wb") as f:
        f.write(b"%d %d\n" % (len(rows), dim))
        for word, vec in rows:
            f.write(word + b" " + vec + b"\n")
    with open(os.path.join(OUT, "train.tsv"), "wb") as f:
        f.writelines(train)
    with open(os.path.join(OUT, "queries.tsv"), "wb") as f:
        f.writelines(queries)
    with open(os.path.join(OUT, "stop_words.txt"), "wb") as f:
        f.write(stop_bytes)
    print(f"{len(train)} documents, {len(queries)} queries, {len(rows)} embedding rows of dim {dim}")


if __name__ == "__main__":
    main()
