#!/usr/bin/python3
"""What a change costs as a living collection grows: collections of real documents (every shared
corpus, then the same again with new ids: 10,000, 180,000 and 1,067,493 documents by default),
each built once, then served (`lcrwmd serve`, CPU): single-document HTTP adds (POST /documents,
each answered durable and searchable), GET /documents/ID, single deletes (DELETE), and 10,000
documents in one POST; then the same collection in one process (`lcrwmd_bench writes`: the
commit and the refresh apart, and the lookups by id). Prints a table and writes JSON
(BENCHMARKS.md, "What a change costs").

    bench/serve_scale.py [--sizes 10000,180000,1067493] [--work DIR] [--single 30] [--json OUT]
"""
import argparse
import glob
import gzip
import json
import os
import random
import shutil
import subprocess
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
CLI = os.path.join(ROOT, "build", "lcrwmd")
BENCH = os.path.join(ROOT, "build", "lcrwmd_bench")
EMB = os.path.join(DATA, "embeddings", "cbow300.bin")
STOP = os.path.join(DATA, "stop_words.txt")
BULK = 10000


def corpus():
    """Every shared corpus's documents (texts and labels), in a fixed order."""
    out = []
    for path in sorted(glob.glob(os.path.join(DATA, "corpora", "*", "*.tsv*"))):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            out += [line.rstrip("\n").split("\t", 2)[1:] for line in f if line.count("\t") >= 2]
    return out


def documents(base, n, copy0=0):
    """n documents: the corpus, then again with new ids (r1-..., r2-...), from copy copy0."""
    for i in range(n):
        copy, j = divmod(i + copy0 * len(base), len(base))
        yield f"r{copy}-{j}", base[j][0], base[j][1]


def write_tsv(path, docs):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f"{i}\t{label}\t{text}\n" for i, label, text in docs)


def request(url, method="GET", body=None, raw=None):
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def over_http(col, fresh, ids, single):
    proc = subprocess.Popen([CLI, "serve", "--index", col, "--port", "0", "--embeddings", EMB,
                             "--backend", "cpu", "--max-body-kib", "65536"],
                            stderr=subprocess.PIPE, text=True)
    url = "http://127.0.0.1:" + proc.stderr.readline().strip().rsplit(":", 1)[1]
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    out = {}
    try:
        adds = [timed(lambda d=d: request(url + "/documents", "POST", {"documents": [
            {"id": d[0], "label": d[1], "text": d[2]}]})) for d in fresh[:single]]
        gets = [timed(lambda i=i: request(url + "/documents/" + i)) for i in ids]
        deletes = [timed(lambda d=d: request(url + "/documents/" + d[0], "DELETE"))
                   for d in fresh[:single]]
        bulk = json.dumps({"documents": [{"id": d[0], "label": d[1], "text": d[2]}
                                         for d in fresh[single:single + BULK]]}).encode()
        out["bulk_s"] = timed(lambda: request(url + "/documents", "POST", raw=bulk))
        for name, xs in (("add", adds), ("get", gets), ("delete", deletes)):
            out[name + "_p50_ms"] = 1000 * pct(xs, 50)
            out[name + "_p99_ms"] = 1000 * pct(xs, 99)
        out["segments"] = request(url + "/info")["collection"]["segments"]
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,180000,1067493")
    ap.add_argument("--work", default="/tmp/lcrwmd-serve-scale")
    ap.add_argument("--single", type=int, default=30)
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "results", "serve_scale.json"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    base = corpus()
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                  if line.startswith("model name")), "unknown CPU")
    result = {"machine": f"{os.cpu_count()} cores, {model}", "corpus_documents": len(base),
              "sizes": {}}
    rng = random.Random(1)
    for n in (int(s) for s in a.sizes.split(",")):
        col = os.path.join(a.work, f"col{n}")
        tsv = os.path.join(a.work, f"docs{n}.tsv")
        if not os.path.exists(os.path.join(col, "manifest")):  # built once, then copied
            write_tsv(tsv, documents(base, n))
            shutil.rmtree(col, ignore_errors=True)
            t = timed(lambda: subprocess.run(
                [CLI, "build", "--collection", "--docs", tsv, "--output", col, "--embeddings",
                 EMB, "--stopwords", STOP], check=True, capture_output=True))
            print(f"built {n} documents in {t:.0f} s")
        fresh = list(documents(base, 2 * a.single + 2 * BULK, copy0=100))  # ids new to it
        ids = [f"r{i // len(base)}-{i % len(base)}" for i in rng.sample(range(n), 100)]
        run = os.path.join(a.work, "run")
        shutil.rmtree(run, ignore_errors=True)
        shutil.copytree(col, run)
        os.sync()  # the copy's writeback done before anything is timed (commits sync)
        r = {"http": over_http(run, fresh, ids, a.single)}
        shutil.rmtree(run)
        shutil.copytree(col, run)
        os.sync()
        new_tsv = os.path.join(a.work, "new.tsv")
        write_tsv(new_tsv, fresh[:2 * a.single + BULK])
        out = os.path.join(a.work, "writes.json")
        subprocess.run([BENCH, "--json", out, "writes", "--collection", run, "--docs", new_tsv, "--single",
                        str(a.single), "--bulk", str(BULK)], check=True)
        with open(out) as f:
            r["in_process"] = json.load(f)["results"]
        shutil.rmtree(run)
        result["sizes"][str(n)] = r
        h = r["http"]
        print(f"{n} documents: HTTP add p50 {h['add_p50_ms']:.1f} ms (p99 {h['add_p99_ms']:.1f}),"
              f" GET p50 {h['get_p50_ms']:.2f} ms, DELETE p50 {h['delete_p50_ms']:.1f} ms,"
              f" {BULK} in one POST {h['bulk_s']:.2f} s")
    print(f"({result['machine']})")
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
