"""`lcrwmd serve` over a collection that changes: documents added, replaced and deleted over
HTTP, each answered once durable and seen by the next search (and by `lcrwmd search` on the same
directory), never half of a change; the write guard; bad writes named; background merges; a
change another process makes picked up. Needs the built command line (LCRWMD_CLI)."""
import fcntl
import os
import re
import signal
import subprocess
import threading
import time

import pytest

import lcrwmd
from demo_data import EMB, STOP, read_tsv
from test_serve import CLI, DEMO, TEXT, Server, cli_search

pytestmark = pytest.mark.skipif(not os.path.exists(CLI), reason="no lcrwmd command line built")

TRAIN = read_tsv(os.path.join(DEMO, "train.tsv"))
FIRST = 100  # the collection starts with these; the rest come over HTTP


def make_collection(path, rows):
    tsv = path + ".tsv"
    with open(tsv, "w", encoding="utf-8") as f:
        f.writelines("\t".join(r) + "\n" for r in rows)
    subprocess.run([CLI, "build", "--collection", "--docs", tsv, "--output", path] + TEXT,
                   check=True, capture_output=True)
    return path


@pytest.fixture
def collection(tmp_path):
    return make_collection(str(tmp_path / "col"), TRAIN[:FIRST])


def docs(rows):
    return {"documents": [{"id": i, "label": label, "text": text} for i, label, text in rows]}


def marker_word():
    """A word of the embeddings that no training document uses."""
    used = {w for _, _, text in TRAIN for w in re.findall(r"[a-z]+", text.lower())}
    stop = set(open(STOP, encoding="utf-8").read().split())
    return next(w for w in lcrwmd.Embeddings.load(EMB).words
                if w.isalpha() and len(w) > 4 and w not in used and w not in stop)


def http_search(server, body_extra, k=5):
    got = {}
    for qid, _, text in read_tsv(os.path.join(DEMO, "queries.tsv")):
        status, body = server.request("/search", {"queries": [{"id": qid, "text": text}], "k": k,
                                                  **body_extra})
        assert status == 200, body
        got[qid] = [(n["id"], n[body["ranked_by"]]) for n in body["results"][0]["neighbors"]]
    return got, body["generation"]


def assert_same(got, want, what):
    """The same neighbours; distances as the command line prints them (six digits)."""
    assert got.keys() == want.keys()
    for qid in want:
        assert [d for d, _ in got[qid]] == [d for d, _ in want[qid]], (what, qid)
        for (_, a), (_, b) in zip(got[qid], want[qid]):
            assert a == pytest.approx(b, rel=2e-6, abs=1e-6), (what, qid)


def test_writes_are_searchable_at_once_durable_and_what_the_command_line_reads(collection):
    s = Server(collection, "--no-merge")
    try:
        status, body = s.request("/documents", docs(TRAIN[FIRST:]))
        assert status == 200, body
        assert body["added"] == len(TRAIN) - FIRST and body["replaced"] == 0
        assert body["documents"] == len(TRAIN) and body["not_indexed"] == []
        # A replacement (the id of an early document, another text) and two deletes.
        replaced = [TRAIN[3][0], TRAIN[3][1], TRAIN[110][2]]
        status, body = s.request("/documents", docs([replaced]))
        assert (status, body["added"], body["replaced"]) == (200, 1, 1), body
        for gone in (TRAIN[5][0], TRAIN[105][0]):
            status, body = s.request("/documents/" + gone, method="DELETE")
            assert (status, body["deleted"]) == (200, gone), body
        generation = body["generation"]
        status, body = s.request("/documents/" + TRAIN[5][0])
        assert status == 404 and body["field"] == "id"
        status, body = s.request("/documents/" + TRAIN[3][0])
        assert status == 200 and body["text"] == TRAIN[110][2] and body["generation"] == generation
        status, info = s.request("/info")
        assert info["documents"] == len(TRAIN) - 2
        assert info["collection"]["segments"] == 3 and info["collection"]["deleted"] == 3
        # The service's answers are the command line's on the same directory, byte for byte.
        for extra, flags in [({}, ["--method", "bm25"]), ({"method": "lc-rwmd"}, []),
                             ({"method": "wcd"}, ["--method", "wcd"])]:
            got, seen = http_search(s, extra)
            assert seen == generation
            assert_same(got, cli_search(collection, flags, 5), extra)
        # What returned 200 survives kill -9.
        s.proc.send_signal(signal.SIGKILL)
        s.proc.wait(timeout=60)
        info = subprocess.run([CLI, "info", "--index", collection], check=True,
                              capture_output=True, text=True).stdout
        assert re.search(rf"^documents +{len(TRAIN) - 2} live, 3 deleted", info, re.M), info
    finally:
        if s.proc.poll() is None:
            s.stop()
        s.proc.stderr.close()
    # And equals one build of the live documents (neighbours; distances within 1e-6).
    live = [r for r in TRAIN if r[0] not in (TRAIN[3][0], TRAIN[5][0], TRAIN[105][0])]
    live.append(replaced)
    built = make_collection(collection + "-built", live)
    for flags in (["--method", "bm25"], []):
        assert_same(cli_search(collection, flags, 5), cli_search(built, flags, 5), flags)


def test_a_search_sees_a_change_whole_or_not_at_all(collection):
    # Each add brings two documents with a word no other has; searches meanwhile must count an
    # even number of them, never one of a pair.
    word = marker_word()
    s = Server(collection, "--max-wait-ms", "0")
    counts, errors, stop = [], [], threading.Event()

    def searcher():
        while not stop.is_set():
            status, body = s.request("/search", {"queries": [word], "k": 100})
            if status != 200:
                errors.append(body)
                return
            counts.append(sum(1 for n in body["results"][0]["neighbors"] if n["score"] > 0))

    threads = [threading.Thread(target=searcher) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for i in range(12):
            pair = [[f"pair{i}-{j}", "marker", f"{word} {TRAIN[i + j][2][:200]}"] for j in (0, 1)]
            status, body = s.request("/documents", docs(pair))
            assert status == 200, body
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors
    assert counts and all(c % 2 == 0 for c in counts), counts
    status, body = s.request("/search", {"queries": [word], "k": 100})
    assert sum(1 for n in body["results"][0]["neighbors"] if n["score"] > 0) == 24
    assert s.stop() == 0


def test_adds_arriving_together_commit_together_each_answered_as_alone(collection):
    # Sixteen clients add at once: adds that wait while another commits share a commit, yet each
    # gets its own answer, is readable when answered, and one with no word is still a 422.
    s = Server(collection, "--no-merge")
    rows = TRAIN[FIRST:]
    answers, lock = {}, threading.Lock()

    def client(c):
        for j in range(c, len(rows) + 8, 16):
            if j < len(rows):
                body, key = docs([rows[j]]), rows[j][0]
            else:  # a document with no word
                body, key = {"documents": [{"id": f"empty{j}", "text": "qqqzzz xxyyxx"}]}, f"empty{j}"
            status, answer = s.request("/documents", body)
            seen = s.request("/documents/" + key)[0] if status == 200 else None
            with lock:
                answers[key] = (status, answer, seen)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(16)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i, _, _ in rows:
            status, answer, seen = answers[i]
            assert (status, answer["added"], answer["replaced"], seen) == (200, 1, 0, 200), answer
        empties = [a for k, a in answers.items() if k.startswith("empty")]
        assert len(empties) == 8 and all(st == 422 and a["field"] == "documents"
                                         for st, a, _ in empties)
        assert s.request("/info")[1]["documents"] == len(TRAIN)
        metrics = s.request("/metrics")[1]
        adds = int(re.search(r"^lcrwmd_adds_total (\d+)", metrics, re.M).group(1))
        commits = int(re.search(r"^lcrwmd_add_commits_total (\d+)", metrics, re.M).group(1))
        assert adds == len(rows) + 8 and commits < len(rows), (adds, commits)
        # Two adds of one id committed together or not: the later one's text is kept.
        for text in (TRAIN[0][2], TRAIN[1][2]):
            assert s.request("/documents", docs([[TRAIN[2][0], "x", text]]))[0] == 200
        assert s.request("/documents/" + TRAIN[2][0])[1]["text"] == TRAIN[1][2]
    finally:
        assert s.stop() == 0
    # One build's answers: the adds came in any order, so near-ties may swap; the distances
    # rank by rank may not.
    got = cli_search(collection, [], 5)
    want = cli_search(make_collection(collection + "-built", [
        *[r for r in TRAIN if r[0] != TRAIN[2][0]], [TRAIN[2][0], "x", TRAIN[1][2]]]), [], 5)
    for qid in want:
        assert [d for _, d in got[qid]] == pytest.approx([d for _, d in want[qid]], rel=2e-6), qid


def test_background_merges_and_other_writers(collection, tmp_path):
    s = Server(collection)
    try:
        for r in TRAIN[FIRST:FIRST + 12]:  # twelve single adds: tier merges are due
            status, body = s.request("/documents", docs([r]))
            assert status == 200, body
        # The merger counts a merge after committing it, and another thread may refresh the
        # served commit first: wait for both.
        deadline = time.time() + 30
        while time.time() < deadline:
            info = s.request("/info")[1]
            metrics = s.request("/metrics")[1]
            merged = re.search(r"^lcrwmd_merges_total [1-9]", metrics, re.M)
            if info["collection"]["segments"] < 13 and merged:
                break
            time.sleep(0.1)
        assert info["collection"]["segments"] < 13, info
        assert info["documents"] == FIRST + 12
        assert merged, metrics
        # Another process adds: the service reads its commit within a few seconds.
        extra = tmp_path / "more.tsv"
        extra.write_text("".join("\t".join(r) + "\n" for r in TRAIN[FIRST + 12:]), encoding="utf-8")
        subprocess.run([CLI, "add", "--index", collection, "--docs", str(extra)], check=True,
                       capture_output=True)
        deadline = time.time() + 30
        while time.time() < deadline and s.request("/info")[1]["documents"] != len(TRAIN):
            time.sleep(0.1)
        assert s.request("/info")[1]["documents"] == len(TRAIN)
        status, body = s.request("/documents/" + TRAIN[-1][0])
        assert status == 200 and body["label"] == TRAIN[-1][1]
    finally:
        assert s.stop() == 0


@pytest.mark.parametrize("body,status,field", [
    ({}, 400, "documents"),
    ({"documents": []}, 400, "documents"),
    ({"documents": [{"id": "a"}]}, 400, "documents[0].text"),
    ({"documents": [{"id": 3, "text": "goal"}]}, 400, "documents[0].id"),
    ({"documents": [{"text": "goal"}]}, 400, "documents[0].id"),
    ({"documents": [{"id": "a", "label": 5, "text": "goal"}]}, 400, "documents[0].label"),
    ({"documents": [{"id": "", "text": "goal"}]}, 400, "documents[0].id"),
    ({"documents": [{"id": "a\tb", "text": "goal"}]}, 400, "documents[0].id"),
    ({"documents": [{"id": "a", "label": "x\ny", "text": "goal"}]}, 400, "documents[0].label"),
    ({"documents": [{"id": "a", "text": "goal", "title": "t"}]}, 400, "documents[0].title"),
    ({"documents": [{"id": "a", "text": "goal"}, {"id": "a", "text": "match"}]}, 400,
     "documents[1].id"),
    ({"documents": ["goal"]}, 400, "documents[0]"),
    ({"documents": [{"id": "a", "text": "goal"}], "k": 3}, 400, "k"),
    ({"documents": [{"id": "a", "text": "qqqzzz xxyyxx"}]}, 422, "documents"),
    ({"documents": [{"id": str(i), "text": "goal"} for i in range(3)]}, 413, "documents"),
])
def test_bad_writes_name_the_field_and_change_nothing(collection, body, status, field):
    s = Server(collection, "--max-documents", "2")
    try:
        got, answer = s.request("/documents", body)
        assert (got, answer["field"]) == (status, field), answer
        assert s.request("/info")[1]["collection"]["generation"] == 1
    finally:
        assert s.stop() == 0


def test_write_errors_and_methods(collection, tmp_path):
    s = Server(collection)
    try:
        assert s.request("/documents/nope", method="DELETE")[0] == 404
        assert s.request("/documents/nope")[0] == 404
        status, body = s.request("/documents/x", body={}, method="PUT")
        assert status == 405 and body["field"] == "method"
        status, body = s.request("/documents", method="GET")
        assert status == 405
        # The body limit holds for writes too.
        big = {"documents": [{"id": "big", "text": "goal " * 300000}]}
        assert s.request("/documents", big)[0] == 413
        # JSON sent as curl -d sends it (labelled a form) is read up to the same limit.
        long = {"documents": [{"id": "long", "text": TRAIN[FIRST + 1][2] + " goal" * 4000}]}
        status, body = s.request("/documents", long,
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 200, body
        # A lexical explanation needs one segment; an embedding one is the document's own.
        assert s.request("/documents", docs([TRAIN[FIRST]]))[0] == 200
        query = {"query": TRAIN[FIRST][2][:300], "doc": TRAIN[FIRST][0]}
        status, body = s.request("/explain", {**query, "method": "bm25"})
        assert status == 409 and f"lcrwmd compact --index {collection}`" in body["error"], body
        status, body = s.request("/explain", {**query, "method": "rwmd"})
        assert status == 200, body
    finally:
        assert s.stop() == 0
    # An index file does not change.
    idx = str(tmp_path / "file.idx")
    subprocess.run([CLI, "build", "--docs", os.path.join(DEMO, "train.tsv"), "--output", idx]
                   + TEXT, check=True, capture_output=True)
    s = Server(idx)
    try:
        status, body = s.request("/documents", docs([TRAIN[0]]))
        assert status == 409 and "collection" in body["error"]
    finally:
        assert s.stop() == 0


def test_a_write_waits_for_another_writer_then_is_refused(collection):
    s = Server(collection, "--write-wait", "0.3")
    try:
        with open(os.path.join(collection, "write.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another process is changing it
            status, body = s.request("/documents", docs([TRAIN[FIRST]]))
            assert (status, body["field"]) == (503, "collection"), body
            assert "write.lock" in body["error"]
        status, body = s.request("/documents", docs([TRAIN[FIRST]]))  # released
        assert status == 200, body
    finally:
        assert s.stop() == 0


def hold_lock(collection, pid):
    """Takes the collection's writer lock as a writer would, naming `pid` as its holder."""
    lock = open(os.path.join(collection, "write.lock"), "r+")
    fcntl.flock(lock, fcntl.LOCK_EX)
    lock.truncate(0)
    lock.write(f"{pid}\n")
    lock.flush()
    return lock


def test_two_writers_wait_for_each_other_say_so_and_lose_nothing(collection, tmp_path):
    # The command line waits for another writer and says whom it waits for.
    extra = tmp_path / "cli.tsv"
    cli_rows = [("cli-" + i, label, text) for i, label, text in TRAIN[FIRST:]]
    extra.write_text("".join("\t".join(r) + "\n" for r in cli_rows), encoding="utf-8")
    add = [CLI, "add", "--index", collection, "--docs", str(extra), "--wait", "20"]
    lock = hold_lock(collection, 4242)
    proc = subprocess.Popen(add, stderr=subprocess.PIPE, text=True)
    # Released once the command says it waits (on a loaded machine it reads its documents and
    # vectors for longer than a fixed sleep).
    said = []
    for line in proc.stderr:
        said.append(line)
        if "waiting up to" in line:
            break
    assert proc.poll() is None, said  # still waiting
    lock.close()  # released
    _, rest = proc.communicate(timeout=60)
    err = "".join(said) + rest
    assert proc.returncode == 0, err
    assert "waiting up to 20 s for process 4242" in err and "write.lock" in err, err
    # The service's writer waits alike and logs it; then the command line and the service write
    # at once, each waiting for the other's commits: every write of both is durable.
    s = Server(collection)
    try:
        lock = hold_lock(collection, 4343)
        answers = []
        t = threading.Thread(target=lambda: answers.append(
            s.request("/documents", docs([("svc-first", "x", TRAIN[0][2])]))))
        t.start()
        time.sleep(0.5)
        assert not answers  # waiting for the lock
        lock.close()
        t.join(60)
        assert answers and answers[0][0] == 200, answers
        both = [("both-" + i, label, text) for i, label, text in TRAIN[:FIRST]]
        extra.write_text("".join("\t".join(r) + "\n" for r in both[FIRST // 2:]),
                         encoding="utf-8")
        proc = subprocess.Popen(add, stderr=subprocess.PIPE, text=True)
        for r in both[:FIRST // 2]:
            status, body = s.request("/documents", docs([r]))
            assert status == 200, body
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        every = [r[0] for r in cli_rows + both] + ["svc-first"]
        deadline = time.time() + 30  # the service reads the command line's commit on its own
        while time.time() < deadline and s.request("/info")[1]["documents"] != FIRST + len(every):
            time.sleep(0.1)
        assert s.request("/info")[1]["documents"] == FIRST + len(every)
        for i in every:
            assert s.request("/documents/" + i)[0] == 200, i
    finally:
        s.proc.send_signal(signal.SIGTERM)
        assert s.proc.wait(timeout=60) == 0
        log = s.proc.stderr.read()
        s.proc.stderr.close()
    assert "lcrwmd serve: " in log and "waiting up to 30 s for process 4343" in log, log
    assert set(lcrwmd.Collection(collection).ids) == {r[0] for r in TRAIN[:FIRST]} | set(every)


def test_the_write_guard(collection, tmp_path):
    token = "s3cret-token-0123456789"
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    one = docs([TRAIN[FIRST]])
    # Beyond loopback without a token: searches yes, writes no.
    s = Server(collection, "--host", "0.0.0.0")
    try:
        assert s.request("/search", {"queries": ["goal"]})[0] == 200
        status, body = s.request("/documents", one)
        assert (status, body["field"]) == (403, "authorization") and "--write-token-file" in body["error"]
        assert s.request("/documents/" + TRAIN[0][0], method="DELETE")[0] == 403
    finally:
        assert s.stop() == 0
    # With a token (here on loopback too): only its holders write.
    s = Server(collection, "--write-token-file", str(token_file))
    try:
        assert s.request("/documents", one)[0] == 401
        assert s.request("/documents", raw=b"{not json")[0] == 401  # refused before it is read
        assert s.request("/documents", one, headers={"Authorization": "Bearer nope"})[0] == 401
        status, body = s.request("/documents", one, headers={"Authorization": "Bearer " + token})
        assert status == 200, body
        assert s.request("/documents/" + TRAIN[0][0], method="DELETE",
                         headers={"Authorization": "Bearer " + token})[0] == 200
    finally:
        assert s.stop() == 0
    s = Server(collection, "--read-only")
    try:
        assert s.request("/documents", one)[0] == 403
    finally:
        assert s.stop() == 0
    short = tmp_path / "short"
    short.write_text("abc\n")
    r = subprocess.run([CLI, "serve", "--index", collection, "--write-token-file", str(short)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "16 characters" in r.stderr
