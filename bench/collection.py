#!/usr/bin/python3
"""A collection that grows: 20news training documents as a collection of 1,000, then one
`lcrwmd add` of 10,000 documents, then single-document adds (each its own process); the
segments the tiered merges leave; search time over the grown collection beside the same
documents compacted (lc-rwmd symmetric and bm25, the same queries, the least of three runs
each); the compaction's time. Prints a table and writes JSON
(BENCHMARKS.md, "Collections that change").

    bench/collection.py [--work DIR] [--singles 100] [--queries 200] [--json OUT]
"""
import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
CLI = os.path.join(ROOT, "build", "lcrwmd")
EMB = os.path.join(DATA, "embeddings", "cbow300.bin")
STOP = os.path.join(DATA, "stop_words.txt")


def rows(name):
    with gzip.open(os.path.join(DATA, "corpora", "20news", name + ".tsv.gz"), "rt",
                   encoding="utf-8") as f:
        return [line for line in f if line.strip()]


def run(*args, may_fail=False):
    t = time.perf_counter()
    p = subprocess.run([CLI, *args], capture_output=True, text=True)
    if p.returncode != 0 and not may_fail:
        raise SystemExit(f"lcrwmd {' '.join(args)}: {p.stderr}")
    return time.perf_counter() - t, (p.stderr if p.returncode == 0 else None)


def write(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines)
    return path


def info(index):
    p = subprocess.run([CLI, "info", "--index", index, "--json"], capture_output=True, text=True,
                       check=True)
    return json.loads(p.stdout)


def search(index, queries, method, out, reps=3):
    """The search's own time (its note on stderr), the least of `reps` runs: the files warm."""
    args = ["search", "--index", index, "--queries", queries, "--embeddings", EMB, "--k", "10",
            "--method", method, "--backend", "cpu", "--output", out]
    times = []
    for _ in range(reps):
        _, err = run(*args)
        times.append(float(re.search(r"^search: .*, ([0-9.]+) s \(", err, re.M).group(1)))
    return min(times)


def neighbours(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        q, _, doc, _ = line.rstrip("\n").split("\t")
        out.setdefault(q, []).append(doc)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/lcrwmd-collection")
    ap.add_argument("--singles", type=int, default=100)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "results",
                                                   "collection_20news.json"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    train, test = rows("train"), rows("test")
    col = os.path.join(a.work, "news")
    subprocess.run(["rm", "-rf", col], check=True)
    r = {"corpus": "20news", "machine": f"{os.cpu_count()} cores", "embeddings": "cbow300.bin"}

    base = write(os.path.join(a.work, "base.tsv"), train[:1000])
    r["build_1000_s"], _ = run("build", "--embeddings", EMB, "--docs", base, "--stopwords", STOP,
                               "--output", col, "--collection")
    bulk = write(os.path.join(a.work, "bulk.tsv"), train[1000:11000])
    r["add_10000_s"], _ = run("add", "--index", col, "--docs", bulk)
    r["add_10000_docs_per_s"] = 10000 / r["add_10000_s"]
    single = []
    segments = []
    for line in train[11000:]:
        if len(single) == a.singles:
            break
        one = write(os.path.join(a.work, "one.tsv"), [line])
        s, err = run("add", "--index", col, "--docs", one, may_fail=True)
        if err is None:  # a document with no known word: nothing added
            continue
        single.append(s)
        segments.append(len(info(col).get("segments", [None])))
    r["single_add_s"] = {"mean": statistics.mean(single), "p50": statistics.median(single),
                         "max": max(single)}
    r["single_adds_per_s"] = 1 / statistics.mean(single)
    r["segments_after_single_adds"] = segments
    r["documents"] = info(col)["n_docs"]

    queries = write(os.path.join(a.work, "queries.tsv"), test[:a.queries])
    grown, compacted = {}, {}
    for method in ["lc-rwmd", "bm25"]:
        grown[method] = search(col, queries, method, os.path.join(a.work, f"g-{method}.tsv"))
    r["compact_s"], _ = run("compact", "--index", col)
    same = True
    for method in ["lc-rwmd", "bm25"]:
        compacted[method] = search(col, queries, method, os.path.join(a.work, f"c-{method}.tsv"))
        g = neighbours(os.path.join(a.work, f"g-{method}.tsv"))
        c = neighbours(os.path.join(a.work, f"c-{method}.tsv"))
        same = same and g == c
    r["search_s"] = {"grown": grown, "compacted": compacted,
                     "segments_grown": segments[-1] if segments else 2}
    r["same_neighbours"] = same

    print(f"20news, {r['machine']}: a collection of 1,000 documents, one add of 10,000, then "
          f"{a.singles} single-document adds ({r['documents']} documents)")
    print(f"  build 1,000 (--collection)      {r['build_1000_s']:8.2f} s")
    print(f"  add 10,000 (one add)            {r['add_10000_s']:8.2f} s "
          f"({r['add_10000_docs_per_s']:.0f} documents/s)")
    print(f"  single-document add             {r['single_add_s']['mean']:8.3f} s mean, "
          f"{r['single_add_s']['p50']:.3f} s median ({r['single_adds_per_s']:.1f} adds/s)")
    print(f"  segments after the single adds  {segments[:1]} ... {segments[-1:]} "
          f"(at most {max(segments)})")
    print(f"  compact                         {r['compact_s']:8.2f} s")
    for method in ["lc-rwmd", "bm25"]:
        print(f"  search {a.queries} queries, {method:8s} grown {grown[method]:.3f} s, "
              f"compacted {compacted[method]:.3f} s: {grown[method] / compacted[method]:.2f}x")
    print(f"  same neighbours grown and compacted: {same}")
    with open(a.json, "w") as f:
        json.dump(r, f, indent=1)


if __name__ == "__main__":
    main()
