"""`lcrwmd serve` end to end: the command line's server on an ephemeral port of 127.0.0.1,
queried concurrently, against `lcrwmd search` on the same texts; every kind of bad request;
SIGTERM during load. Needs the built command line (LCRWMD_CLI), not the Python module."""
import json
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

import lcrwmd

SOURCE = os.environ.get("LCRWMD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("LCRWMD_CLI", os.path.join(SOURCE, "build", "lcrwmd"))
DEMO = os.path.join(SOURCE, "data", "demo")
TEXT = ["--stopwords", os.path.join(DEMO, "stop_words.txt"),
        "--embeddings", os.path.join(DEMO, "embeddings.bin")]

pytestmark = pytest.mark.skipif(not os.path.exists(CLI), reason="no lcrwmd command line built")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("serve") / "demo.idx")
    subprocess.run([CLI, "build", "--docs", os.path.join(DEMO, "train.tsv"), "--output", path]
                   + TEXT, check=True, capture_output=True)
    return path


def queries():
    with open(os.path.join(DEMO, "queries.tsv"), encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t", 2) for line in f]


class Server:
    def __init__(self, index, *flags, text=TEXT, cli=CLI):
        self.proc = subprocess.Popen([cli, "serve", "--index", index, "--port", "0", *text, *flags],
                                     stderr=subprocess.PIPE, text=True)
        self.banner = self.proc.stderr.readline()
        assert "listening on http://" in self.banner, self.banner
        # Reached over loopback whatever address it listens on.
        port = self.banner.strip().rsplit(":", 1)[1]
        self.url = "http://127.0.0.1:" + port

    def request(self, path, body=None, raw=None, method=None, headers=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                text = r.read().decode()
                return r.status, json.loads(text) if r.headers.get_content_type() == "application/json" else text
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read().decode())

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=60)
        self.proc.stderr.close()
        return code


@pytest.fixture(scope="module")
def server(index):
    s = Server(index, "--max-wait-ms", "50")
    yield s
    assert s.stop() == 0


def cli_search(index, method_flags, k):
    out = subprocess.run([CLI, "search", "--index", index, "--queries",
                          os.path.join(DEMO, "queries.tsv"), "--k", str(k), *TEXT, *method_flags],
                         check=True, capture_output=True, text=True).stdout
    top = {}
    for line in out.splitlines():
        qid, _, doc, dist = line.split("\t")
        top.setdefault(qid, []).append((doc, float(dist)))
    return top


@pytest.mark.parametrize("body_extra,flags", [
    ({}, ["--method", "bm25"]),  # a text's default
    ({"method": "lc-rwmd"}, []),
    ({"symmetric": False}, ["--one-sided"]),
    ({"method": "wmd"}, ["--method", "wmd"]),
    ({"method": "act", "act_steps": 2}, ["--method", "act", "--act-steps", "2"]),
])
def test_concurrent_searches_answer_as_the_command_line(index, server, body_extra, flags):
    want = cli_search(index, flags, 5)
    qs = queries()
    got, errors = {}, []

    def one(qid, text, k):
        status, body = server.request("/search", {"queries": [{"id": qid, "text": text}], "k": k,
                                                  **body_extra})
        if status != 200:
            errors.append(body)
            return
        got[qid] = [(n["id"], n[body["ranked_by"]]) for n in body["results"][0]["neighbors"]]

    # Every query from its own thread at once, k differing (a batch runs at the largest k).
    threads = [threading.Thread(target=one, args=(qid, text, 5 if i % 2 else 3))
               for i, (qid, _, text) in enumerate(qs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, (qid, _, _) in enumerate(qs):
        k = 5 if i % 2 else 3
        assert [d for d, _ in got[qid]] == [d for d, _ in want[qid][:k]], qid
        for (_, a), (_, b) in zip(got[qid], want[qid]):
            assert a == pytest.approx(b, rel=1e-6)
    # Several queries in one request, in the request's order, named by position.
    status, body = server.request("/search", {"queries": [t for _, _, t in qs[:3]], "k": 5,
                                              **body_extra})
    assert status == 200
    assert [r["query"] for r in body["results"]] == [0, 1, 2]
    for r, (qid, _, _) in zip(body["results"], qs[:3]):
        assert [n["id"] for n in r["neighbors"]] == [d for d, _ in want[qid]]


def test_concurrent_requests_share_batches(server):
    before = server.request("/metrics")[1]
    batches0 = metric(before, "lcrwmd_batch_queries_count")
    queries0 = metric(before, "lcrwmd_batch_queries_sum")
    text = queries()[0][2]
    # lc-rwmd: phase 1's counts below (bm25, a text's default, has no phase 1).
    threads = [threading.Thread(target=server.request,
                                args=("/search", {"queries": [text], "method": "lc-rwmd"}))
               for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = server.request("/metrics")[1]
    assert metric(after, "lcrwmd_batch_queries_sum") - queries0 == 16
    assert metric(after, "lcrwmd_batch_queries_count") - batches0 < 16  # some shared a batch
    assert 'lcrwmd_requests_total{endpoint="search",code="200"}' in after
    assert "lcrwmd_queue_queries 0" in after
    # Phase 1's work: a (word, query) pair per vocabulary word and query, and recomputed
    # distances: at least one per vocabulary word (the 16 queries are the same text: the batches
    # share their nearest words).
    pairs = metric(after, "lcrwmd_phase1_word_pairs_total") - metric(
        before, "lcrwmd_phase1_word_pairs_total")
    assert pairs > 0 and pairs % 16 == 0
    assert metric(after, "lcrwmd_phase1_recomputed_total") - metric(
        before, "lcrwmd_phase1_recomputed_total") >= pairs // 16


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(name + " missing")


BAD_SEARCHES = [
    (b"", 400, "body"),
    (b"{not json", 400, "body"),
    (b"[1, 2]", 400, "body"),
    (b'{"queries": ["goal \xff"]}', 400, "body"),  # not UTF-8
    (b'{"queries": ["goal \\ud800"]}', 400, "body"),  # a lone surrogate
    (b'{"queries": ["goal"], "\xfe": 1}', 400, "body"),
    (b"[" * 100000 + b"]" * 100000, 400, "body"),
    (b'{"queries": ["goal"], "k": 2, "k": 3}', 400, "k"),
    (b'{"k": 3}', 400, "queries"),
    (b'{"queries": []}', 400, "queries"),
    (b'{"queries": "goal"}', 400, "queries"),
    (b'{"queries": [7]}', 400, "queries[0]"),
    (b'{"queries": [{"txt": "goal"}]}', 400, "queries[0].txt"),
    (b'{"queries": [{"id": 1}]}', 400, "queries[0].text"),
    (b'{"queries": ["goal"], "kk": 3}', 400, "kk"),
    (b'{"queries": ["goal"], "k": 0}', 400, "k"),
    (b'{"queries": ["goal"], "k": 100000000}', 400, "k"),
    (b'{"queries": ["goal"], "k": -3}', 400, "k"),
    (b'{"queries": ["goal"], "k": 1e300}', 400, "k"),
    (b'{"queries": ["goal"], "k": 2.5}', 400, "k"),
    (b'{"queries": ["goal"], "k": 18446744073709551616}', 400, "k"),
    (b'{"queries": ["goal"], "k": "ten"}', 400, "k"),
    (b'{"queries": ["goal"], "act_steps": -1}', 400, "act_steps"),
    (b'{"queries": ["goal"], "symmetric": "no"}', 400, "symmetric"),
    (b'{"queries": ["goal"], "method": "fast"}', 400, "method"),
    (b'{"queries": ["goal"], "method": ["wmd"]}', 400, "method"),
    (b'{"queries": ["goal"], "method": "wmd", "symmetric": false}', 400, "symmetric"),
    (b'{"queries": ["goal", "qqqzzz xxyyzz"], "method": "lc-rwmd"}', 422, "queries[1]"),
    (b'{"queries": ["goal", "the of"]}', 422, "queries[1]"),  # bm25: stop words alone
    (b'{"queries": [{"id": [1], "text": "goal"}]}', 400, "queries[0].id"),
    (b'{"queries": ["goal"], "direction": "sideways"}', 400, "direction"),
    (b'{"queries": ["goal"], "method": "wcd", "direction": "query-to-document"}', 400,
     "direction"),
    (b'{"queries": ["goal"], "direction": "query-to-document", "symmetric": false}', 400,
     "symmetric"),
    (b'{"queries": ["goal"], "query_weights": "bm25"}', 400, "query_weights"),
    (b'{"queries": ["goal"], "method": "act", "act_steps": 1000001}', 400, "act_steps"),
    (b'{"queries": ["goal"], "method": "bm25", "bm25_b": 2}', 400, "bm25_b"),
    (b'{"queries": ["goal"], "method": "bm25", "bm25_k1": "high"}', 400, "bm25_k1"),
    (b'{"queries": ["goal"], "method": "hybrid", "hybrid_weight": -1}', 400, "hybrid_weight"),
    (b'{"queries": ["goal"], "method": "bm25", "direction": "symmetric"}', 400, "direction"),
    (b'{"like": 3}', 400, "like"),
    (b'{"like": "bbcsport-000233", "queries": ["goal"]}', 400, "like"),
    (b'{"like": "nosuchdoc"}', 404, "like"),
]

BAD_EXPLAINS = [
    (b'{"doc": "x"}', 400, "query"),
    (b'{"query": "goal"}', 400, "doc"),
    (b'{"query": "goal", "doc": "nosuchdoc"}', 404, "doc"),
    (b'{"query": "", "doc": "bbcsport-000233"}', 422, "query"),
    (b'{"query": "goal", "doc": "bbcsport-000233", "top": 3}', 400, "top"),
    (b'{"query": "goal \xff", "doc": "bbcsport-000233"}', 400, "body"),
]


@pytest.mark.parametrize("raw,status,field", BAD_SEARCHES)
def test_bad_requests_name_the_field(server, raw, status, field):
    code, body = server.request("/search", raw=raw)
    assert code == status, body
    assert body["field"] == field
    assert body["error"] and body["status"] == status


@pytest.mark.parametrize("raw,status,field", BAD_EXPLAINS)
def test_bad_explains_name_the_field(server, raw, status, field):
    code, body = server.request("/explain", raw=raw)
    assert code == status, body
    assert body["field"] == field


def test_a_post_without_a_body_names_the_body(server):
    # No body and no Content-Length at all (what `curl -X POST` sends): the HTTP library
    # refuses to read it; the answer still names the body.
    import http.client
    from urllib.parse import urlparse
    u = urlparse(server.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.putrequest("POST", "/search")
    conn.endheaders()
    r = conn.getresponse()
    body = json.loads(r.read().decode())
    conn.close()
    assert r.status == 400 and body["field"] == "body", body


@pytest.mark.parametrize("method,path,allow", [
    ("GET", "/search", "POST"), ("PUT", "/search", "POST"), ("DELETE", "/explain", "POST"),
    ("POST", "/info", "GET, HEAD"), ("PUT", "/health", "GET, HEAD"),
])
def test_wrong_methods_are_405_with_allow(server, method, path, allow):
    req = urllib.request.Request(server.url + path, method=method,
                                 data=b"{}" if method != "GET" else None)
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=60)
    assert e.value.code == 405 and e.value.headers["Allow"] == allow
    assert json.loads(e.value.read().decode())["field"] == "method"


def test_no_bad_request_keeps_the_server_from_stopping(index):
    # Every bad request, then SIGTERM: the server drains and exits 0 within a bound (a reply
    # that failed to be written once left a request counted in flight forever).
    s = Server(index)
    for raw, status, _ in BAD_SEARCHES:
        assert s.request("/search", raw=raw)[0] == status
    for raw, status, _ in BAD_EXPLAINS:
        assert s.request("/explain", raw=raw)[0] == status
    assert s.request("/search", {"queries": ["goal"], "k": 1})[0] == 200
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(timeout=10) == 0
    s.proc.stderr.close()


def test_other_endpoints_and_limits(index, server):
    assert server.request("/health") == (200, {"status": "ok"})
    status, info = server.request("/info")
    assert status == 200 and info["documents"] == 120 and info["backend"] == "cpu"
    assert info["precision"] == lcrwmd.cpu_precision()
    assert info["method_details"] == lcrwmd.methods() and info["default_method"] == "bm25"
    assert info["like_method"] == "lc-rwmd"
    assert info["methods"] == [m["name"] for m in lcrwmd.methods()]
    status, page = server.request("/")
    assert status == 200 and "<textarea" in page and "/explain" in page
    assert server.request("/nowhere")[0] == 404
    code, body = server.request("/explain", {"query": queries()[0][2], "doc": "nosuchdoc"})
    assert code == 404 and body["field"] == "doc"
    text = queries()[0][2]
    status, top = server.request("/search", {"queries": [text], "k": 1, "method": "wmd"})
    doc = top["results"][0]["neighbors"][0]
    status, e = server.request("/explain", {"query": text, "doc": doc["id"]})
    assert status == 200 and e["method"] == "wmd"
    assert e["distance"] == pytest.approx(doc["distance"], rel=1e-6)
    assert sum(f["mass"] * f["cost"] for f in e["flows"]) == pytest.approx(e["distance"], rel=1e-5)
    # explain's options mean what search's mean: its default method (wmd) refuses one-sided,
    # and a one-sided lc-rwmd explanation is the doc -> query direction's.
    code, body = server.request("/explain", {"query": text, "doc": doc["id"], "symmetric": False})
    assert code == 400 and body["field"] == "symmetric"
    status, e = server.request("/explain", {"query": text, "doc": doc["id"], "method": "lc-rwmd",
                                            "symmetric": False})
    assert status == 200 and e["symmetric"] is False
    assert e["distance"] == pytest.approx(e["doc_to_query"]["distance"], rel=1e-6)
    # A server with small limits: an oversize body is a 413, a full queue a 503.
    small = Server(index, "--max-body-kib", "1", "--max-queries", "2")
    try:
        code, body = small.request("/search", {"queries": ["goal " * 400]})
        assert code == 413
        code, body = small.request("/search", {"queries": ["goal", "match", "ball"]})
        assert code == 413 and body["field"] == "queries"
    finally:
        assert small.stop() == 0


def test_sigterm_answers_every_accepted_request(index):
    # Batches would wait 60 s for company: the requests are all in flight when SIGTERM comes,
    # and the drain runs them at once.
    s = Server(index, "--max-wait-ms", "60000")
    text = queries()[1][2]
    results = []

    def one():
        try:
            results.append(s.request("/search", {"queries": [text], "k": 5, "method": "wmd"}))
        except Exception as e:  # noqa: BLE001 (reported by the assertion below)
            results.append((repr(e), None))

    threads = [threading.Thread(target=one) for _ in range(24)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while (queued := metric(s.request("/metrics")[1], "lcrwmd_queue_queries")) < 24:
        assert time.monotonic() < deadline, f"{queued} requests arrived: {results}"
        time.sleep(0.01)
    s.proc.send_signal(signal.SIGTERM)
    time.sleep(0.05)
    late = s.request("/search", {"queries": [text]})  # during the drain: refused, clearly
    assert late[0] == 503 and late[1]["field"] == "queue", late
    for t in threads:
        t.join()
    assert [r[0] for r in results] == [200] * 24, results
    assert len({json.dumps(r[1]) for r in results}) == 1  # the same answer for each
    assert s.proc.wait(timeout=60) == 0
    s.proc.stderr.close()


def test_defaults_match_intent_and_more_like_this(index, server):
    """A text without a method: bm25, said in the answer; a direction bm25 lacks: lc-rwmd's.
    "like": the document's own words, symmetric lc-rwmd, the document itself left out."""
    ix = lcrwmd.Index.load(index)
    text = queries()[0][2]
    status, body = server.request("/search", {"queries": [text], "k": 5})
    assert status == 200 and (body["method"], body["direction"]) == ("bm25", "query-to-document")
    d, i = ix.search([text], k=5, method="bm25")
    assert [n["id"] for n in body["results"][0]["neighbors"]] == [ix.ids[j] for j in i[0]]
    status, body = server.request("/search", {"queries": [text], "k": 5, "direction": "symmetric"})
    assert status == 200 and (body["method"], body["direction"]) == ("lc-rwmd", "symmetric")
    status, body = server.request("/search", {"queries": [text], "symmetric": False})
    assert status == 200 and (body["method"], body["direction"]) == ("lc-rwmd", "document-to-query")
    doc = ix.ids[7]
    status, body = server.request("/search", {"like": doc, "k": 4})
    assert status == 200 and (body["method"], body["direction"]) == ("lc-rwmd", "symmetric")
    assert body["results"][0]["query"] == doc
    got = [(n["id"], n["distance"]) for n in body["results"][0]["neighbors"]]
    d, i = ix.search([ix.text(7)], k=5)
    want = [(ix.ids[j], x) for j, x in zip(i[0], d[0]) if ix.ids[j] != doc][:4]
    assert [g for g, _ in got] == [w for w, _ in want] and doc not in [g for g, _ in got]
    for (_, a), (_, b) in zip(got, want):
        assert a == pytest.approx(b, rel=1e-5, abs=1e-6)
    # bm25 ranks words without vectors too: a text of none is answered, with no neighbours.
    status, body = server.request("/search", {"queries": ["qqqzzz xxyyzz"]})
    assert status == 200 and body["results"][0]["neighbors"] == []
    status, body = server.request("/search", {"like": doc, "k": 3, "method": "bm25"})
    assert status == 200 and body["method"] == "bm25" and len(body["results"][0]["neighbors"]) == 3


def test_bm25_and_the_hybrid_answer_a_score_higher_first(index, server):
    """A ranking by score is named so, in the JSON and the command line's TSV, best first."""
    for method in ("bm25", "hybrid"):
        status, body = server.request("/search", {"queries": ["wimbledon champion serves"],
                                                  "k": 5, "method": method})
        assert status == 200 and body["ranked_by"] == "score", body
        scores = [n["score"] for n in body["results"][0]["neighbors"]]
        assert scores == sorted(scores, reverse=True) and scores[0] > 0
        assert all("distance" not in n for n in body["results"][0]["neighbors"])
        for top in cli_search(index, ["--method", method], 5).values():
            tsv = [x for _, x in top]
            assert tsv == sorted(tsv, reverse=True) and tsv[0] > 0
    status, body = server.request("/search", {"queries": ["wimbledon champion serves"], "k": 3,
                                              "method": "lc-rwmd"})
    assert body["ranked_by"] == "distance" and "distance" in body["results"][0]["neighbors"][0]
