#!/usr/bin/python3
"""A kill -9 soak of `lcrwmd serve` over a collection: clients add, replace and delete documents
by id (one at a time and in batches) and search, while the server is killed with SIGKILL at
random moments and restarted. Each client keeps its own record of every write the server
acknowledged (a write that got no answer may or may not have happened). At the end, with the
server restarted once more: every acknowledged write holds (each id live with the text of its
last acknowledged add, or deleted), every search answer named only documents live at the
generation it names, and the collection answers as one build of its live documents does
(Python's lcrwmd.Index over the same texts, in the collection's order). Prints p50/p99 of
writes and searches, the restarts, the server's resident memory over time; writes JSON; exits
1 where a check fails. --sabotage deletes an acknowledged document behind the clients' back
(with `lcrwmd delete`, another writer), which the checks must catch.

    PYTHONPATH=build/python bench/soak.py [--seconds 60] [--clients 3] [--docs 200]
        [--collection DIR] [--work DIR] [--json OUT] [--sabotage]
"""
import argparse
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.environ.get("LCRWMD_CLI", os.path.join(ROOT, "build", "lcrwmd"))
DEMO = os.path.join(ROOT, "data", "demo")


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t", 2) for line in f if line.strip()]


class Server:
    """`lcrwmd serve` on the collection, restarted after each kill; its URL and its memory."""

    def __init__(self, collection, embeddings):
        self.args = [CLI, "serve", "--index", collection, "--port", "0", "--embeddings",
                     embeddings, "--backend", "cpu", "--max-wait-ms", "5"]
        self.lock = threading.Lock()
        self.restarts, self.memory = 0, []
        self.start()

    def start(self):
        proc = subprocess.Popen(self.args, stderr=subprocess.PIPE, text=True)
        banner = proc.stderr.readline()
        if "listening on http://" not in banner:
            raise SystemExit(f"the server did not start: {banner}{proc.stderr.read()}")
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        with self.lock:
            self.proc, self.url = proc, "http://127.0.0.1:" + banner.strip().rsplit(":", 1)[1]

    def kill_and_restart(self):
        with self.lock:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        t = time.perf_counter()
        self.start()
        self.restarts += 1
        return time.perf_counter() - t

    def sample_memory(self, t0):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                kib = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
            self.memory.append((round(time.perf_counter() - t0, 1), kib // 1024))
        except (OSError, StopIteration):
            pass

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=120)


def request(server, path, body=None, method=None, timeout=30):
    """(status, answer), or None where no answer came (the server killed meanwhile)."""
    with server.lock:
        url = server.url
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")
    except (OSError, ValueError, http.client.HTTPException):  # cut off mid-answer by a kill
        return None


class Client(threading.Thread):
    """Writes ids of its own (a small set, so that adds replace and deletes find them) and
    searches; records every write in order, acknowledged (with its commit's generation) or not
    (no answer: the server killed meanwhile)."""

    def __init__(self, n, server, texts, ids, stop, rng_seed):
        super().__init__(daemon=True)
        self.n, self.server, self.texts, self.stop = n, server, texts, stop
        self.ids = [f"c{n}-{i}" for i in range(ids)]
        self.lock = threading.Lock()  # ids and history, against the sabotage's reading them
        self.rng = random.Random(rng_seed)
        # Per id, its writes in order: (op "add" | "delete", text, acknowledged, generation).
        self.history = {i: [] for i in self.ids}
        self.searches = []  # (generation, ids answered)
        self.write_s, self.search_s, self.unanswered = [], [], 0

    def run(self):
        while not self.stop.is_set():
            r = self.rng.random()
            with self.lock:
                ids = self.rng.sample(self.ids, 1 if self.rng.random() < 0.7 else
                                      self.rng.randint(2, 8))
            if r < 0.45:
                self.add(ids)
            elif r < 0.7:
                self.delete(ids[0])
            else:
                self.search()

    def add(self, ids):
        docs = [{"id": i, "label": f"c{self.n}", "text": self.rng.choice(self.texts)} for i in ids]
        t = time.perf_counter()
        got = request(self.server, "/documents", {"documents": docs})
        if got is not None and got[0] not in (200, 503):
            raise SystemExit(f"client {self.n}: add answered {got}")
        acked = got is not None and got[0] == 200
        with self.lock:
            for d in docs:
                self.history[d["id"]].append(
                    ("add", d["text"], acked, got[1]["generation"] if acked else None))
        self.note(acked, t, self.write_s)

    def delete(self, doc_id):
        t = time.perf_counter()
        got = request(self.server, "/documents/" + doc_id, method="DELETE")
        if got is not None and got[0] not in (200, 404, 503):
            raise SystemExit(f"client {self.n}: delete answered {got}")
        # A 404 acknowledges that the id is not live: the state a delete leaves.
        acked = got is not None and got[0] in (200, 404)
        with self.lock:
            self.history[doc_id].append(
                ("delete", None, acked, got[1].get("generation") if acked else None))
        self.note(acked, t, self.write_s)

    def search(self):
        t = time.perf_counter()
        got = request(self.server, "/search", {"queries": [self.rng.choice(self.texts)[:80]],
                                               "k": 10, "method": "bm25"})
        if got is not None and got[0] == 200:
            self.search_s.append(time.perf_counter() - t)
            self.searches.append((got[1]["generation"],
                                  [h["id"] for h in got[1]["results"][0]["neighbors"]]))

    def note(self, acked, t, times):
        if acked:
            times.append(time.perf_counter() - t)
        else:
            self.unanswered += 1
            time.sleep(0.05)  # the server restarting

    def take_away(self):
        """An id whose last write is an acknowledged add, no longer written (the sabotage's)."""
        with self.lock:
            for i in self.ids:
                h = self.history[i]
                if h and h[-1][0] == "add" and h[-1][2] and len(self.ids) > 8:
                    self.ids.remove(i)
                    return i
        return None


def final_states(history, initially_live):
    """An id's possible states now, from its writes in order: each acknowledged write fixes the
    state, one without an answer may or may not have happened."""
    states = {("live", None)} if initially_live else {("deleted", None)}
    for op, text, acked, _ in history:
        new = ("live", text) if op == "add" else ("deleted", None)
        states = {new} if acked else states | {new}
    return states


def surely_deleted_at(history, generation):
    """Whether the id was surely not live at `generation`: an acknowledged delete committed at or
    before it, after which no add was acknowledged at or before it nor asked without an answer
    (whose commit, if any, is not known)."""
    deleted = False
    for op, _, acked, g in history:
        if op == "delete" and acked and g is not None and g <= generation:
            deleted = True
        elif op == "add" and (not acked or g <= generation):
            deleted = False
    return deleted


def check(clients, server, initial, embeddings):
    """The failures found, each a line; and the live documents' texts."""
    failures, live = [], {}
    for c in clients:
        for doc_id, hist in c.history.items():
            got = request(server, "/documents/" + doc_id, timeout=60)
            if got is None or got[0] not in (200, 404):
                failures.append(f"{doc_id}: GET answered {got}")
                continue
            state = ("live", got[1]["text"]) if got[0] == 200 else ("deleted", None)
            if got[0] == 200:
                live[doc_id] = got[1]["text"]
            possible = final_states(hist, doc_id in initial)
            if state not in possible:
                failures.append(f"{doc_id}: {state[0]} where its acknowledged writes leave it "
                                f"{' or '.join(sorted({s[0] for s in possible}))}")
    writes = {i: h for c in clients for i, h in c.history.items()}
    for c in clients:
        for generation, ids in c.searches:
            for i in ids:
                if i in writes and surely_deleted_at(writes[i], generation):
                    failures.append(f"a search at generation {generation} answered {i}, "
                                    "deleted by then")
                elif i not in writes and i not in initial:
                    failures.append(f"a search at generation {generation} answered {i}, "
                                    "never written")
    return failures + one_build(server, embeddings), live


def one_build(server, embeddings):
    """The collection's answers against one build of its live documents, in its order, by
    Python's module (PYTHONPATH)."""
    import lcrwmd
    path = server.args[3]
    emb = lcrwmd.Embeddings.load(embeddings)
    col = lcrwmd.Collection(path, embeddings=emb)  # query words read as one build reads them
    texts = []
    conn = http.client.HTTPConnection(server.url.split("//", 1)[1], timeout=60)  # kept alive
    for i in col.ids:
        conn.request("GET", "/documents/" + urllib.parse.quote(i))
        r = conn.getresponse()
        got = (r.status, json.loads(r.read()))
        if got[0] != 200 or got[1]["text"] is None:
            return [f"{i}: listed live by the collection, but GET answers {got}"]
        texts.append(got[1]["text"])
    conn.close()
    segment = sorted(f for f in os.listdir(path) if f.endswith(".idx"))[0]
    stopwords = lcrwmd.Index.load(os.path.join(path, segment)).stopwords
    one = lcrwmd.Index.build(emb, texts, ids=col.ids, stopwords=stopwords)
    queries = [t[:200] for t in texts[:20]]
    failures = []
    # bm25 scores every segment in one pass: one build's bytes. lc-rwmd over several segments:
    # the same neighbours and distances but for the last bits of a segment's sums where a query
    # word is not among its words, and with them the order of near-ties (lcrwmd/segments.h).
    # A document in another place than one build's must be one that one build puts at (nearly)
    # the same distance: it is looked for among one build's top 30, which a tie at the tenth
    # place may bring in from beyond the ten.
    for method, tol in (("bm25", 0.0), ("lc-rwmd", 1e-5)):
        d, _, ids = col.search(queries, k=10, method=method, return_ids=True)
        d1, _, ids1 = one.search(queries, k=30, method=method, return_ids=True)
        def near(x, y, tol=tol):
            return abs(x - y) <= tol * max(1.0, abs(y))
        for q in range(len(queries)):
            close = all(near(x, y) for x, y in zip(d[q], d1[q]))
            at = dict(zip(ids1[q], d1[q]))
            tied = all(i in at and near(x, at[i]) for i, x in zip(ids[q], d[q]))
            if len(ids[q]) != min(10, len(ids1[q])) or not close or not tied:
                failures.append(f"{method}, query {q}: the collection answers otherwise than "
                                f"one build of its live documents ({ids[q]} against "
                                f"{ids1[q][:10]})")
                break
    return failures


def pct(xs, p):
    xs = sorted(xs)
    return 1000 * xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--clients", type=int, default=3)
    ap.add_argument("--ids", type=int, default=40, help="ids each client writes")
    ap.add_argument("--collection", help="an existing collection (default: the demo's, built)")
    ap.add_argument("--embeddings", default=os.path.join(DEMO, "embeddings.bin"))
    ap.add_argument("--work", default="/tmp/lcrwmd-soak")
    ap.add_argument("--kill-after", default="4,12", help="seconds between kills: min,max")
    ap.add_argument("--json")
    ap.add_argument("--sabotage", action="store_true")
    a = ap.parse_args()
    rng = random.Random(0)
    texts = [r[2] for r in read_tsv(os.path.join(DEMO, "train.tsv"))]
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    col = a.collection
    if col is None:
        col = os.path.join(a.work, "col")
        subprocess.run([CLI, "build", "--collection", "--docs", os.path.join(DEMO, "train.tsv"),
                        "--output", col, "--embeddings", a.embeddings, "--stopwords",
                        os.path.join(DEMO, "stop_words.txt")], check=True, capture_output=True)
    import lcrwmd
    initial = set(lcrwmd.Collection(col).ids)
    server = Server(col, a.embeddings)
    stop = threading.Event()
    clients = [Client(n, server, texts, a.ids, stop, 100 + n) for n in range(a.clients)]
    t0 = time.perf_counter()
    for c in clients:
        c.start()
    lo, hi = (float(x) for x in a.kill_after.split(","))
    restart_s, sabotaged = [], None
    next_kill = t0 + rng.uniform(lo, hi)
    while time.perf_counter() - t0 < a.seconds:
        time.sleep(0.25)
        server.sample_memory(t0)
        if a.sabotage and sabotaged is None and time.perf_counter() - t0 > a.seconds / 2:
            sabotaged = clients[0].take_away()  # another writer deletes it: no client knows
            if sabotaged:
                subprocess.run([CLI, "delete", "--index", col, "--ids", "/dev/stdin"],
                               input=sabotaged + "\n", text=True, check=True, capture_output=True)
        if time.perf_counter() >= next_kill:
            restart_s.append(server.kill_and_restart())
            next_kill = time.perf_counter() + rng.uniform(lo, hi)
    stop.set()
    for c in clients:
        c.join(timeout=120)
    failures, live = check(clients, server, initial, a.embeddings)
    server.stop()
    writes = [x for c in clients for x in c.write_s]
    searches = [x for c in clients for x in c.search_s]
    memory = [m for _, m in server.memory] or [0]
    # Resident memory after warm-up: the largest in each tenth of the run past the first.
    tenths = [max((m for t, m in server.memory if a.seconds * w / 10 <= t < a.seconds * (w + 1) / 10),
                  default=0) for w in range(1, 10)]
    tenths = [m for m in tenths if m > 0] or [0]
    result = {
        "seconds": a.seconds, "clients": a.clients, "restarts": server.restarts,
        "restart_p50_ms": pct(restart_s, 50),
        "acknowledged_writes": len(writes), "unanswered_writes": sum(c.unanswered for c in clients),
        "write_p50_ms": pct(writes, 50), "write_p99_ms": pct(writes, 99),
        "searches": len(searches), "search_p50_ms": pct(searches, 50),
        "search_p99_ms": pct(searches, 99), "live_at_end": len(live),
        "resident_mib": server.memory, "resident_tenths_max_mib": tenths,
        "resident_drift": max(tenths) / min(tenths) if min(tenths) else None,
        "failures": failures[:50], "sabotaged": sabotaged,
    }
    print(f"{a.seconds:.0f} s, {a.clients} clients, {server.restarts} kills: "
          f"{len(writes)} writes acknowledged (p50 {result['write_p50_ms']:.1f} ms, p99 "
          f"{result['write_p99_ms']:.1f}), {result['unanswered_writes']} unanswered; "
          f"{len(searches)} searches (p50 {result['search_p50_ms']:.1f} ms); restart p50 "
          f"{result['restart_p50_ms']:.0f} ms; resident memory "
          f"{min(memory)}-{max(memory)} MiB, after the first tenth the largest of each tenth "
          f"{min(tenths)}-{max(tenths)} MiB")
    for f in failures[:20]:
        print("FAILED:", f)
    print("nothing acknowledged lost" if not failures else f"{len(failures)} checks failed")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
