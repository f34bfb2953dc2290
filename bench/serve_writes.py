#!/usr/bin/python3
"""`lcrwmd serve` taking documents: a collection of 10,000 20news training documents served
(CPU), then single-document HTTP adds (POST /documents) from one client and from four at once,
then search latency (one client, the 20news test texts, bm25 and lc-rwmd) with the service idle
beside the same while another client adds documents back to back, with the segments and
background merges seen meanwhile. Prints a table and writes JSON (BENCHMARKS.md, "Collections
that change"). Then the same queries over the collection as the adds left it and over a
compacted copy, in one process.

    PYTHONPATH=build/python bench/serve_writes.py [--work DIR] [--adds 200] [--queries 200]
        [--json OUT]
"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
CLI = os.path.join(ROOT, "build", "lcrwmd")
EMB = os.path.join(DATA, "embeddings", "cbow300.bin")
STOP = os.path.join(DATA, "stop_words.txt")
FIRST = 10000


def rows(name):
    with gzip.open(os.path.join(DATA, "corpora", "20news", name + ".tsv.gz"), "rt",
                   encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t", 2) for line in f if line.strip()]


def post(url, path, body):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        if e.code != 422:  # a document left with no word: not added
            raise
        return json.loads(e.read())


def get(url, path):
    with urllib.request.urlopen(url + path, timeout=60) as r:
        return r.read().decode()


def settle(url):
    """Waits until the background merges are done: the served commit unchanged for 2 s."""
    last, since = None, time.perf_counter()
    while time.perf_counter() - since < 2:
        generation = json.loads(get(url, "/info"))["collection"]["generation"]
        if generation != last:
            last, since = generation, time.perf_counter()
        time.sleep(0.2)


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def add_all(url, docs, clients):
    """Single-document adds from `clients` threads: documents per second."""
    it = iter(docs)
    lock = threading.Lock()

    def client():
        while True:
            with lock:
                d = next(it, None)
            if d is None:
                return
            post(url, "/documents", {"documents": [{"id": d[0], "label": d[1], "text": d[2]}]})

    t = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return len(docs) / (time.perf_counter() - t)


def latencies(url, texts, method):
    out = []
    for text in texts:
        t = time.perf_counter()
        post(url, "/search", {"queries": [text], "k": 10, "method": method})
        out.append(time.perf_counter() - t)
    return out


def grown_against_compacted(work, col, texts):
    """The same queries over the collection as the adds left it and over a compacted copy, in
    one long-lived process (as a service searches: scratch memory warm), the least of three
    after a first search; lcrwmd from PYTHONPATH (build/python)."""
    import lcrwmd
    compacted = os.path.join(work, "compacted")
    shutil.copytree(col, compacted)
    subprocess.run([CLI, "compact", "--index", compacted], check=True, capture_output=True)
    emb = lcrwmd.Embeddings.load(EMB)
    out = {"segments": lcrwmd.Collection(col, embeddings=emb).segments}
    for method in ("lc-rwmd", "bm25"):
        best = []
        for path in (col, compacted):
            c = lcrwmd.Collection(path, embeddings=emb)
            c.search(texts, k=10, method=method)
            runs = []
            for _ in range(3):
                t = time.perf_counter()
                c.search(texts, k=10, method=method)
                runs.append(time.perf_counter() - t)
            best.append(min(runs))
        out[method] = {"grown_s": best[0], "compacted_s": best[1], "ratio": best[0] / best[1]}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default="/tmp/lcrwmd-serve-writes")
    ap.add_argument("--adds", type=int, default=200)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "results",
                                                   "serve_writes_20news.json"))
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    train, test = rows("train"), rows("test")
    tsv = os.path.join(a.work, "first.tsv")
    with open(tsv, "w", encoding="utf-8") as f:
        f.writelines("\t".join(r) + "\n" for r in train[:FIRST])
    col = os.path.join(a.work, "col")
    subprocess.run([CLI, "build", "--collection", "--docs", tsv, "--output", col, "--embeddings",
                    EMB, "--stopwords", STOP], check=True, capture_output=True)
    proc = subprocess.Popen([CLI, "serve", "--index", col, "--port", "0", "--embeddings", EMB,
                             "--stopwords", STOP, "--backend", "cpu"],
                            stderr=subprocess.PIPE, text=True)
    url = "http://127.0.0.1:" + proc.stderr.readline().strip().rsplit(":", 1)[1]
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    texts = [r[2] for r in test[:a.queries]]
    fresh = iter(train[FIRST:])
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                  if line.startswith("model name")), "unknown CPU")
    result = {"machine": f"{os.cpu_count()} cores, {model}", "documents_at_start": FIRST,
              "adds": a.adds}
    try:
        latencies(url, texts[:20], "bm25")  # warm
        result["adds_per_s_1_client"] = add_all(url, [next(fresh) for _ in range(a.adds)], 1)
        result["adds_per_s_4_clients"] = add_all(url, [next(fresh) for _ in range(a.adds)], 4)
        for method in ("bm25", "lc-rwmd"):
            settle(url)
            idle = latencies(url, texts, method)
            stop, added, segments = threading.Event(), [0], []

            def writer():
                while not stop.is_set():
                    d = next(fresh, None)
                    if d is None:
                        return
                    post(url, "/documents",
                         {"documents": [{"id": d[0], "label": d[1], "text": d[2]}]})
                    added[0] += 1
                    if added[0] % 10 == 0:
                        segments.append(json.loads(get(url, "/info"))["collection"]["segments"])

            w = threading.Thread(target=writer)
            t = time.perf_counter()
            w.start()
            busy = latencies(url, texts, method)
            stop.set()
            w.join()
            elapsed = time.perf_counter() - t
            result[method] = {
                "idle_p50_ms": 1000 * statistics.median(idle),
                "idle_p99_ms": 1000 * percentile(idle, 99),
                "loaded_p50_ms": 1000 * statistics.median(busy),
                "loaded_p99_ms": 1000 * percentile(busy, 99),
                "adds_per_s_meanwhile": added[0] / elapsed,
                "most_segments": max(segments, default=None),
            }
        info = json.loads(get(url, "/info"))
        metrics = get(url, "/metrics")
        result["documents_at_end"] = info["documents"]
        result["segments_at_end"] = info["collection"]["segments"]
        result["merges"] = int(next(line.split()[1] for line in metrics.splitlines()
                                    if line.startswith("lcrwmd_merges_total ")))
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    result["grown_against_compacted"] = grown_against_compacted(a.work, col, texts)
    print(f"20news collection of {FIRST} documents served on the CPU ({result['machine']})")
    print(f"single-document HTTP adds: {result['adds_per_s_1_client']:.1f}/s one client, "
          f"{result['adds_per_s_4_clients']:.1f}/s four clients")
    print(f"{'method':10} {'idle p50':>9} {'idle p99':>9} {'adding p50':>11} {'adding p99':>11} "
          f"{'adds/s':>7} {'segments':>9}")
    for method in ("bm25", "lc-rwmd"):
        r = result[method]
        print(f"{method:10} {r['idle_p50_ms']:8.1f}ms {r['idle_p99_ms']:8.1f}ms "
              f"{r['loaded_p50_ms']:10.1f}ms {r['loaded_p99_ms']:10.1f}ms "
              f"{r['adds_per_s_meanwhile']:7.1f} {r['most_segments']!s:>9}")
    print(f"at the end: {result['documents_at_end']} documents in {result['segments_at_end']} "
          f"segments, {result['merges']} background merges")
    g = result["grown_against_compacted"]
    for method in ("lc-rwmd", "bm25"):
        r = g[method]
        print(f"{len(texts)} queries, {method}, one process: grown ({g['segments']} segments) "
              f"{r['grown_s']:.3f} s, compacted {r['compacted_s']:.3f} s: {r['ratio']:.2f}x")
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
