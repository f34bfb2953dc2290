#!/usr/bin/python3
"""`lcrwmd serve` under load beside `lcrwmd search --batch 256` on the same queries.

    bench/serve_load.py --index 20news.idx --queries test.tsv [--data ../shared/data]
                        [--count 1024] [--clients 64] [--method M] [--soak-seconds 0] [--json F]

1. `lcrwmd search --batch 256 --k 10` over the first COUNT queries: its search time (from its
   own report, without loading the index).
2. `lcrwmd serve` on 127.0.0.1 (an ephemeral port): CLIENTS threads each send single-query
   requests (k = 10) until the COUNT queries are answered; throughput, latency percentiles,
   and whether every answer equals the command line's.
3. With --soak-seconds: the same load repeated for that long, the server's RSS sampled at the
   start, the middle and the end (memory must stay flat).
Load stays on 127.0.0.1 and is bounded in count and time. Needs nothing beyond Debian's Python.
"""
import json
import os
import re
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request

from bench_args import index_and_queries, rss_mib


def main():
    p = index_and_queries(__doc__)
    p.add_argument("--count", type=int, default=1024)
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--method", help="the method both ask for (default: the engine's)")
    p.add_argument("--soak-seconds", type=float, default=0)
    p.add_argument("--json")
    a = p.parse_args()
    text = ["--stopwords", os.path.join(a.data, "stop_words.txt"),
            "--embeddings", os.path.join(a.data, "embeddings", "cbow300.bin")]
    method = ["--method", a.method] if a.method else []
    asked = {"method": a.method} if a.method else {}
    lines = subprocess.run(["zcat", "-f", a.queries], check=True,
                           capture_output=True).stdout.decode().splitlines()[: a.count]
    queries = [line.split("\t", 2) for line in lines]
    with tempfile.TemporaryDirectory() as tmp:
        sample = os.path.join(tmp, "queries.tsv")
        with open(sample, "w") as f:
            f.write("\n".join(lines) + "\n")
        # 1. The command line, one batch of 256 at a time.
        r = subprocess.run([a.lcrwmd, "search", "--index", a.index, "--queries", sample,
                            "--batch", "256", "--k", "10", *method, *text],
                           check=True, capture_output=True, text=True)
        cli_seconds = float(re.search(r"search: .*?, ([0-9.]+) s", r.stderr).group(1))
        cli_top = {}
        for line in r.stdout.splitlines():
            qid, _, doc, _ = line.split("\t")
            cli_top.setdefault(qid, []).append(doc)
        kept = [q for q in queries if q[0] in cli_top]  # queries with a known word

    # 2. The service.
    server = subprocess.Popen([a.lcrwmd, "serve", "--index", a.index, "--port", "0", *text],
                              stderr=subprocess.PIPE, text=True)
    url = server.stderr.readline().strip().rsplit(" ", 1)[1]

    def load(seconds=None):
        todo = list(reversed(kept))
        lock = threading.Lock()
        latencies, same, errors = [], [0], []
        stop_at = time.monotonic() + seconds if seconds else None

        def client():
            while True:
                with lock:
                    if stop_at is not None:
                        if time.monotonic() > stop_at:
                            return
                        if not todo:
                            todo.extend(reversed(kept))
                    elif not todo:
                        return
                    qid, _, body = todo.pop()
                req = urllib.request.Request(url + "/search", data=json.dumps(
                    {"queries": [{"id": qid, "text": body}], "k": 10, **asked}).encode(),
                    headers={"Content-Type": "application/json"})
                t0 = time.perf_counter()
                try:
                    with urllib.request.urlopen(req, timeout=300) as resp:
                        got = json.load(resp)
                except OSError as e:  # urllib's HTTPError and URLError included
                    with lock:
                        errors.append(repr(e))
                    continue
                dt = time.perf_counter() - t0
                docs = [n["id"] for n in got["results"][0]["neighbors"]]
                with lock:
                    latencies.append(dt)
                    same[0] += docs == cli_top[qid]

        threads = [threading.Thread(target=client) for _ in range(a.clients)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.perf_counter() - t0, latencies, same[0], errors

    wall, lat, same, errors = load()
    lat.sort()
    res = {
        "index": a.index, "method": a.method, "queries": len(kept), "clients": a.clients,
        "cli_batch256_seconds": cli_seconds, "cli_batch256_qps": len(kept) / cli_seconds,
        "serve_seconds": wall, "serve_qps": len(kept) / wall,
        "serve_over_cli": (len(kept) / wall) / (len(kept) / cli_seconds),
        "latency_p50_ms": 1e3 * lat[len(lat) // 2],
        "latency_p99_ms": 1e3 * lat[min(len(lat) - 1, int(0.99 * len(lat)))],
        "latency_mean_ms": 1e3 * statistics.mean(lat),
        "answers_identical_to_cli": same, "errors": len(errors),
    }
    if a.soak_seconds > 0:
        rss = [rss_mib(server.pid)]
        half = threading.Timer(a.soak_seconds / 2, lambda: rss.append(rss_mib(server.pid)))
        half.start()
        _, soak_lat, _, soak_errors = load(a.soak_seconds)
        half.join()
        rss.append(rss_mib(server.pid))
        res.update({"soak_seconds": a.soak_seconds, "soak_requests": len(soak_lat),
                    "soak_errors": len(soak_errors),
                    "rss_mib_start_middle_end": rss})
    server.terminate()
    res["server_exit"] = server.wait(timeout=120)
    for k, v in res.items():
        print(f"{k:28s} {v:.3f}" if isinstance(v, float) else f"{k:28s} {v}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
