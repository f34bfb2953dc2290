"""lcrwmd.Collection: adds, replacements and deletes from Python answer as one build of the live
documents; the command line and Python change the same directory."""
import numpy as np
import pytest

import lcrwmd
from demo_data import EMB, STOP, cli


def texts(rows):
    return [r[2] for r in rows]


def ids(rows):
    return [r[0] for r in rows]


def test_adds_and_deletes_answer_as_one_build(tmp_path, emb, train, queries):
    path = tmp_path / "news"
    lcrwmd.Collection.create(path, EMB, texts(train[:50]), ids=ids(train[:50]),
                             labels=[r[1] for r in train[:50]], stopwords=STOP)
    c = lcrwmd.Collection(path, embeddings=emb)  # query words no segment holds: looked up
    assert len(c) == 50 and c.generation == 1 and c.segments == 1
    r = c.add(texts(train[50:]), ids=ids(train[50:]))
    assert r["added"] == 70 and r["replaced"] == 0
    # A known id with another text (its first half): replaced, its new version last.
    half = train[4][2][:len(train[4][2]) // 2]
    r = c.add([half], ids=[train[4][0]])
    assert r["replaced"] == 1
    r = c.delete([train[0][0], train[77][0], "no-such-id"])
    assert r["deleted"] == 2 and r["not_found"] == ["no-such-id"]
    assert c.generation == 4 and len(c) == 118 and c.deleted == 3

    live = [row for i, row in enumerate(train) if i not in (0, 4, 77)]
    live.append([train[4][0], train[4][1], half])
    assert c.ids == ids(live)
    one = lcrwmd.Index.build(emb, texts(live), ids=ids(live), stopwords=STOP)
    q = texts(queries)
    for method, direction in [("lc-rwmd", None), ("lc-rwmd", "query-to-document"),
                              ("wcd", None), ("bm25", None), ("wmd", None)]:
        d1, i1 = c.search(q, k=5, method=method, direction=direction)
        d2, i2 = one.search(q, k=5, method=method, direction=direction)
        np.testing.assert_allclose(d1, d2, rtol=1e-6, err_msg=method)
        assert (i1 == i2).all(), method
    _, _, found = c.search(q[:1], k=3, return_ids=True)
    assert all(doc in c.ids for doc in found[0])

    c.compact()
    assert c.segments == 1 and c.deleted == 0 and c.ids == ids(live)
    # Compacted: one build's index file, which Index.load reads.
    loaded = lcrwmd.Index.load(path, embeddings=emb)
    d1, i1 = loaded.search(q, k=5)
    d2, i2 = one.search(q, k=5)
    assert (i1 == i2).all() and (d1 == d2).all()


def test_the_command_line_and_python_change_the_same_collection(tmp_path, train):
    path = tmp_path / "shared"
    c = lcrwmd.Collection.create(path, EMB, texts(train[:10]), ids=ids(train[:10]),
                                 stopwords=STOP)
    docs = tmp_path / "more.tsv"
    docs.write_text("".join(f"{r[0]}\t{r[1]}\t{r[2]}\n" for r in train[10:20]))
    cli("add", "--index", str(path), "--docs", str(docs))
    assert len(c) == 20 and c.generation == 2  # the next call reads the new commit
    c.delete(train[3][0])
    info = cli("info", "--index", str(path))
    assert "19 live, 1 deleted" in info


def test_what_a_collection_refuses(tmp_path, train):
    path = tmp_path / "refuse"
    c = lcrwmd.Collection.create(path, EMB, texts(train[:5]), ids=ids(train[:5]))
    with pytest.raises(ValueError, match="ids"):
        c.add(["a text"], ids=None)
    with pytest.raises(lcrwmd.Error, match="another process"):
        import fcntl
        with open(path / "write.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            c.delete(train[0][0], wait=0.1)
    with pytest.raises(lcrwmd.Error, match="not empty"):
        lcrwmd.Collection.create(path, EMB, texts(train[:1]), ids=["x"])
    with pytest.raises(lcrwmd.Error, match="not a collection"):
        lcrwmd.Collection(tmp_path / "absent")
    assert len(c) == 5
