"""The Python module against the command line, gensim and POT, on the bundled demo corpus
(a BBC Sport slice with its 300-d embeddings)."""
import json
import math
import os
import warnings

import numpy as np
import pytest

import lcrwmd

from demo_data import DEMO, EMB, STOP, cli, read_tsv  # fixtures: conftest.py


@pytest.mark.parametrize("method", ["lc-rwmd", "wmd", "wcd", "rwmd"])
def test_search_equals_the_command_line(tmp_path, index, queries, method):
    idx = str(tmp_path / "demo.idx")
    cli("build", "--embeddings", EMB, "--docs", os.path.join(DEMO, "train.tsv"), "--stopwords",
        STOP, "--output", idx)
    # --embeddings: query words the index lacks are looked up, as the module does.
    out = cli("search", "--index", idx, "--queries", os.path.join(DEMO, "queries.tsv"),
              "--stopwords", STOP, "--embeddings", EMB, "--k", "5", "--method", method,
              "--backend", "cpu")
    rows = [line.split("\t") for line in out.splitlines()]
    d, i, ids = index.search([q[2] for q in queries], k=5, method=method, backend="cpu",
                             return_ids=True)
    assert d.shape == (len(queries), 5) and i.dtype == np.int64
    assert len(rows) == 5 * len(queries)
    for qi, q in enumerate(queries):
        for r in range(5):
            qid, rank, doc, dist = rows[qi * 5 + r]
            assert (qid, int(rank)) == (q[0], r + 1)
            assert doc == ids[qi][r] == index.ids[i[qi, r]]
            assert np.float32(float(dist)) == d[qi, r]


def test_token_lists_equal_text(emb, train, queries):
    texts = [r[2] for r in train[:40]]
    by_text = lcrwmd.Index.build(emb, texts, stopwords=STOP)
    by_tokens = lcrwmd.Index.build(emb, [lcrwmd.tokenize(t) for t in texts], stopwords=STOP)
    q = [x[2] for x in queries]
    np.testing.assert_array_equal(by_text.pairwise(q), by_tokens.pairwise(q))
    # Tokens are taken as they are: an upper-case token is another word (not in the vectors).
    only = lcrwmd.Index.build(emb, [["Football", "goal"]])
    assert only.vocab_size == 1


def test_gensim_keyed_vectors(emb, train):
    gensim_models = pytest.importorskip("gensim.models")
    words = emb.words[:3000]
    vectors = np.stack([emb[w] for w in words])
    kv = gensim_models.KeyedVectors(vector_size=emb.dim)
    kv.add_vectors(words, vectors)
    from_kv = lcrwmd.Embeddings.from_gensim(kv)
    assert len(from_kv) == len(words) and from_kv.dim == emb.dim
    np.testing.assert_array_equal(from_kv[words[7]], kv[words[7]])
    texts = [r[2] for r in train[:30]]
    a = lcrwmd.Index.build(from_kv, texts, stopwords=STOP)
    b = lcrwmd.Index.build(lcrwmd.Embeddings(words, vectors), texts, stopwords=STOP)
    np.testing.assert_array_equal(a.pairwise(texts[:5], method="wmd"),
                                  b.pairwise(texts[:5], method="wmd"))


def histogram(text, emb, stop):
    words = [t for t in lcrwmd.tokenize(text) if t not in stop and t in emb]
    vocab = sorted(set(words))
    counts = np.array([words.count(w) for w in vocab], dtype=np.float64)
    return vocab, counts / counts.sum()


def test_wmd_equals_pot(emb, train):
    ot = pytest.importorskip("ot")
    stop = set(line.strip() for line in open(STOP, encoding="utf-8"))
    for a, b in [(0, 1), (2, 50), (10, 90), (33, 34), (5, 119)]:
        ta, tb = train[a][2], train[b][2]
        va, wa = histogram(ta, emb, stop)
        vb, wb = histogram(tb, emb, stop)
        xa = np.stack([emb[w] for w in va]).astype(np.float64)
        xb = np.stack([emb[w] for w in vb]).astype(np.float64)
        cost = np.sqrt(np.maximum(((xa[:, None, :] - xb[None, :, :]) ** 2).sum(-1), 0))
        want = ot.emd2(wa, wb, cost)
        got = lcrwmd.wmd(ta, tb, emb, stopwords=STOP)
        assert got == pytest.approx(want, rel=1e-6), (a, b)
        # The relaxations bound it from below.
        assert lcrwmd.rwmd(ta, tb, emb, stopwords=STOP) <= got * (1 + 1e-6)
        assert lcrwmd.wcd(ta, tb, emb, stopwords=STOP) <= got * (1 + 1e-6)
    assert lcrwmd.wmd(train[3][2], train[3][2], emb, stopwords=STOP) == 0.0


def test_csr_weights_equal_build(emb, train):
    scipy_sparse = pytest.importorskip("scipy.sparse")
    stop = set(line.strip() for line in open(STOP, encoding="utf-8"))
    texts = [r[2] for r in train[:25]]
    row, col, val = [], [], []
    column = {w: c for c, w in enumerate(emb.words)}
    for i, t in enumerate(texts):
        vocab, weights = histogram(t, emb, stop)
        counts = [lcrwmd.tokenize(t).count(w) for w in vocab]
        row += [i] * len(vocab)
        col += [column[w] for w in vocab]
        val += counts
    m = scipy_sparse.csr_matrix((val, (row, col)), shape=(len(texts), len(emb)), dtype=np.float32)
    a = lcrwmd.Index.from_csr(emb, m)
    b = lcrwmd.Index.build(emb, texts, stopwords=STOP)
    assert (a.n_docs, a.vocab_size) == (b.n_docs, b.vocab_size)
    np.testing.assert_array_equal(a.pairwise(texts[:4]), b.pairwise(texts[:4]))


def test_save_and_load(tmp_path, emb, index, queries):
    path = tmp_path / "saved.idx"
    index.save(path)
    again = lcrwmd.Index.load(path, embeddings=emb, stopwords=STOP)
    assert again.ids == index.ids and again.labels == index.labels
    q = [x[2] for x in queries]
    for a, b in zip(index.search(q, k=3), again.search(q, k=3)):
        np.testing.assert_array_equal(a, b)
    # The index remembers its stop words and texts: loaded without stopwords= it answers the
    # same; other stop words or other embeddings are refused, naming what differs.
    bare = lcrwmd.Index.load(path, embeddings=emb)
    for a, b in zip(index.search(q, k=3), bare.search(q, k=3)):
        np.testing.assert_array_equal(a, b)
    # Without the embeddings, query words the index lacks are dropped, with a warning that
    # names the fix.
    with pytest.warns(UserWarning, match="not in the index and were dropped: load it with the "
                                         "embeddings"):
        lcrwmd.Index.load(path).search(["football zzzunknownzzz"], k=1)
    with open(STOP, encoding="utf-8") as f:  # each read as a token ("a's" is "a")
        assert bare.stopwords == sorted({t for w in f for t in lcrwmd.tokenize(w)})
    assert bare.text(0) == read_tsv(os.path.join(DEMO, "train.tsv"))[0][2]
    with pytest.raises(lcrwmd.Error, match="stop words, not the index's own"):
        lcrwmd.Index.load(path, stopwords=["the"])
    other = lcrwmd.Embeddings(emb.words, np.asarray([emb[w] for w in emb.words]) * 2)
    with pytest.raises(lcrwmd.Error, match="not the embeddings the index was built from"):
        lcrwmd.Index.load(path, embeddings=other)
    no_text = lcrwmd.Index.build(emb, [x[2] for x in read_tsv(os.path.join(DEMO, "train.tsv"))],
                                 keep_text=False)
    with pytest.raises(lcrwmd.Error, match="no texts"):
        no_text.text(0)


def test_padding_and_queries_without_known_words(emb, train):
    small = lcrwmd.Index.build(emb, [r[2] for r in train[:3]], stopwords=STOP)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d, i = small.search([train[0][2], "zzzqqq xxyyzz"], k=5)
    assert any("no word known" in str(w.message) for w in caught)
    assert list(i[0, :3]) != [-1, -1, -1] and d[0, 0] == 0.0 and i[0, 0] == 0
    assert list(i[0, 3:]) == [-1, -1] and np.isinf(d[0, 3:]).all()
    assert (i[1] == -1).all()


def test_eval_knn_equals_the_command_line(tmp_path, index, queries):
    idx = str(tmp_path / "demo.idx")
    cli("build", "--embeddings", EMB, "--docs", os.path.join(DEMO, "train.tsv"), "--stopwords",
        STOP, "--output", idx)
    want = json.loads(cli("eval", "knn", "--index", idx, "--queries",
                          os.path.join(DEMO, "queries.tsv"), "--stopwords", STOP, "--embeddings",
                          EMB, "--k", "1,3,5", "--json", "--backend", "cpu"))
    got = lcrwmd.eval_knn(index, [q[2] for q in queries], [q[1] for q in queries], ks=[1, 3, 5],
                          backend="cpu")
    assert got["best_k"] == want["best_k"] and got["n_queries"] == want["n_queries"]
    for k in (1, 3, 5):
        assert got["errors"][k] == pytest.approx(want["errors"][str(k)], abs=1e-6)


def test_methods_are_described_by_the_engine():
    ms = lcrwmd.methods()
    assert [m["name"] for m in ms] == ["bm25", "hybrid", "wcd", "rwmd", "lc-rwmd", "wmd", "act",
                                       "ict"]
    for m in ms:
        assert m["summary"] and m["name"] + ": " + m["summary"] in lcrwmd.__doc__
    assert {m["name"] for m in ms if not m["runs_on_gpu"]} == {"wmd", "bm25", "hybrid"}


def test_bad_arguments_raise_clear_errors(emb, index):
    with pytest.raises(lcrwmd.Error, match="unknown method 'emd'"):
        index.search(["football"], method="emd")
    with pytest.raises(lcrwmd.Error, match="unknown backend"):
        index.search(["football"], backend="gpu")
    for k in (0, -1):
        with pytest.raises(lcrwmd.Error, match="k must be at least 1"):
            index.search(["football"], k=k)
    # One rule for every front end (the library's): a direction a method lacks is refused,
    # never silently made symmetric.
    for m in lcrwmd.methods():
        for d in ("symmetric", "document-to-query", "query-to-document"):
            if d in m["directions"]:
                continue
            with pytest.raises(lcrwmd.Error, match=f"{m['name']} has no {d} form"):
                index.search(["football"], method=m["name"], direction=d)
            with pytest.raises(lcrwmd.Error, match=f"{m['name']} has no {d} form"):
                index.pairwise(["football"], method=m["name"], direction=d)
        if not m["document_to_query"]:
            with pytest.raises(lcrwmd.Error, match=f"{m['name']} has no document-to-query form"):
                index.search(["football"], method=m["name"], symmetric=False)
    with pytest.raises(lcrwmd.Error, match="wmd has no document-to-query form"):
        index.explain("football", 0, method="wmd", symmetric=False)
    with pytest.raises(lcrwmd.Error, match="unknown direction"):
        index.search(["football"], direction="both")
    with pytest.raises(lcrwmd.Error, match="give one of them"):
        index.search(["football"], direction="query-to-document", symmetric=False)
    with pytest.raises(lcrwmd.Error, match="unknown query weights"):
        index.search(["football"], direction="query-to-document", query_weights="bm25")
    with pytest.raises(lcrwmd.Error, match="nonexistent.bin"):
        lcrwmd.Embeddings.load("/nonexistent.bin")
    with pytest.raises(lcrwmd.Error, match="nonexistent.idx"):
        lcrwmd.Index.load("/nonexistent.idx")
    with pytest.raises(ValueError, match="vectors must be"):
        lcrwmd.Embeddings(["a", "b"], np.zeros((3, 4), dtype=np.float32))
    with pytest.raises(TypeError, match="document 1"):
        lcrwmd.Index.build(emb, ["football", 7])
    with pytest.raises(ValueError, match="ids: 1 given for 2"):
        lcrwmd.Index.build(emb, ["football", "tennis"], ids=["x"])
    with pytest.raises(ValueError, match="no word known"):
        index.pairwise(["zzzqqq"])
    with pytest.raises(ValueError, match="columns"):
        import scipy.sparse
        lcrwmd.Index.from_csr(emb, scipy.sparse.csr_matrix(np.ones((2, 3), dtype=np.float32)))
    with pytest.raises(lcrwmd.Error, match="CPU backend only"):
        index.search(["football"], method="wmd", backend="cuda")


def test_each_backend_keeps_one_searcher(index, queries):
    texts = [q[2] for q in queries]
    # "auto" without a GPU is the CPU: the same answers as "cpu", search after search.
    first = index.search(texts, k=4, backend="auto")
    for _ in range(2):
        again = index.search(texts, k=4, backend="auto")
        np.testing.assert_array_equal(again[1], first[1])
    d, i = index.search(texts, k=4, backend="cpu")
    np.testing.assert_allclose(first[0], d, rtol=2e-4)


@pytest.mark.skipif(bool(lcrwmd.cuda_devices()), reason="a GPU is present")
def test_to_gpu_without_a_device_is_a_clear_error(index):
    with pytest.raises(lcrwmd.Error, match="no CUDA device|without CUDA"):
        index.to_gpu()


@pytest.mark.skipif(not lcrwmd.cuda_devices(), reason="no CUDA device")
def test_to_gpu_uploads_once_and_answers_as_the_cpu(index, queries):
    texts = [q[2] for q in queries]
    gpu = index.to_gpu()
    assert gpu.uploads == 1
    d, i = gpu.search(texts, k=5)
    gpu.search(texts, k=5, symmetric=False)
    gpu.pairwise(texts[:2])
    assert gpu.uploads == 1, "searches must not upload the index again"
    dc, ic = index.search(texts, k=5, backend="cpu")
    np.testing.assert_allclose(d, dc, rtol=2e-4)


def test_act_lies_between_rwmd_and_wmd(index, queries):
    texts = [q[2] for q in queries[:3]]
    rwmd = index.pairwise(texts, method="rwmd", backend="cpu")
    wmd = index.pairwise(texts, method="wmd", backend="cpu")
    act1 = index.pairwise(texts, method="act", backend="cpu")
    act3 = index.pairwise(texts, method="act", act_steps=3, backend="cpu")
    ict = index.pairwise(texts, method="ict", backend="cpu")
    tol = 1e-4
    assert np.all(rwmd <= act1 + tol) and np.all(act1 <= act3 + tol) and np.all(act3 <= ict + tol)
    assert np.all(ict <= wmd + tol)
    assert np.mean(act1 > rwmd + 1e-3) > 0.5  # tighter than RWMD for most pairs
    d, i = index.search(texts, k=5, method="act", backend="cpu")
    for row in range(len(texts)):
        np.testing.assert_allclose(d[row], np.sort(act1[row])[:5], rtol=1e-5)
    if lcrwmd.cuda_devices():  # the GPU's ACT answers as the CPU's
        dg, ig = index.search(texts, k=5, method="act", backend="cuda")
        np.testing.assert_allclose(dg, d, rtol=2e-4)
    else:
        with pytest.raises(lcrwmd.Error, match="no CUDA device|without CUDA"):
            index.search(texts, k=5, method="act", backend="cuda")


def _precisions():
    """The CPU phase-1 precisions this machine runs."""
    out = []
    for p in ("f32", "bf16", "int8"):
        try:
            lcrwmd.cpu_precision(p)
            out.append(p)
        except lcrwmd.Error as e:
            assert "lacks" in str(e)
    return out


@pytest.mark.parametrize("method", ["lc-rwmd", "act", "wmd"])
def test_every_precision_gives_the_same_results(index, queries, method):
    assert lcrwmd.cpu_precision().split()[0] in ("f32", "bf16", "int8")
    texts = [q[2] for q in queries]
    want = index.search(texts, k=7, method=method, backend="cpu", precision="f32")
    assert np.isfinite(want[0]).all() and (want[1] >= 0).all()
    for p in _precisions() + ["auto"]:
        got = index.search(texts, k=7, method=method, backend="cpu", precision=p)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    if method != "wmd":
        m = index.pairwise(texts[:3], method=method, backend="cpu", precision="f32")
        for p in _precisions():
            np.testing.assert_array_equal(
                index.pairwise(texts[:3], method=method, backend="cpu", precision=p), m)
    with pytest.raises(lcrwmd.Error, match="precision"):
        index.search(texts, precision="fp8")
    if "int8" in _precisions():  # the CPU's alone: refused by the GPU rather than ignored
        with pytest.raises(lcrwmd.Error, match="precision int8 is the CPU backend's"):
            index.search(texts, backend="cuda", precision="int8")


def test_embeddings_and_index_pickle(emb, index, queries):
    import pickle
    e2 = pickle.loads(pickle.dumps(emb))
    assert e2.words == emb.words and e2.dim == emb.dim
    np.testing.assert_array_equal(e2[emb.words[7]], emb[emb.words[7]])
    assert emb.vectors.shape == (len(emb), emb.dim)
    np.testing.assert_array_equal(emb.vectors[7], emb[emb.words[7]])
    np.testing.assert_array_equal(e2.vectors, emb.vectors)
    i2 = pickle.loads(pickle.dumps(index))
    assert i2.ids == index.ids and i2.labels == index.labels and i2.stopwords == index.stopwords
    assert i2.text(3) == index.text(3)
    q = [x[2] for x in queries]  # their words the index lacks come from the pickled embeddings
    for a, b in zip(index.search(q, k=3, method="wmd"), i2.search(q, k=3, method="wmd")):
        np.testing.assert_array_equal(a, b)


def test_typed_queries_query_to_document(index):
    """What people type: a few words, ranked by each word's nearest document word (IDF weights),
    the pruned top-k equal to sorting every distance, curly quotes read as straight ones."""
    typed = ["federer wimbledon tennis set", "england batsmen wicket"]
    d, i = index.search(typed, k=5, direction="query-to-document")
    labels = index.labels
    assert [labels[j] for j in i[0][:3]] == ["tennis"] * 3
    assert [labels[j] for j in i[1][:3]] == ["cricket"] * 3
    m = index.pairwise(typed, direction="query-to-document")
    for r in range(len(typed)):
        order = np.lexsort((np.arange(m.shape[1]), m[r]))[:5]
        assert list(i[r]) == list(order)
        np.testing.assert_array_equal(d[r], m[r][order])
    # query_weights="index" is another ranking; "auto" is IDF for this direction.
    idf = index.search(typed, k=5, direction="query-to-document", query_weights="idf")
    np.testing.assert_array_equal(idf[0], d)
    curly = index.search(["Federer\u2019s \u201ccomeback\u201d"], k=5, direction="query-to-document")
    straight = index.search(["Federer's comeback"], k=5, direction="query-to-document")
    np.testing.assert_array_equal(curly[1], straight[1])
    assert lcrwmd.tokenize("Federer\u2019s") == ["federer"]
    assert lcrwmd.tokenize("Federer\u2019s", version=1) == ["federer\u2019s"]


def test_bm25_scores_every_term_and_finds_only_matching_documents(index):
    """bm25: query-to-document by default, minus Okapi BM25 written out here over the same
    tokens (every token past the stop words, with a vector or without), documents sharing no
    word left out, k1 and b checked."""
    typed = ["federer wimbledon tennis set", "england batsmen wicket", "zzyzx federer"]
    d, i = index.search(typed, k=index.n_docs, method="bm25")
    stop = set(index.stopwords)
    docs = [[w for w in lcrwmd.tokenize(index.text(j)) if w not in stop]
            for j in range(index.n_docs)]
    n = len(docs)
    mean = sum(len(x) for x in docs) / n
    for r, q in enumerate(typed):
        want = np.zeros(n)
        for t in set(w for w in lcrwmd.tokenize(q) if w not in stop):
            df = sum(t in x for x in docs)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for j, x in enumerate(docs):
                f = x.count(t)
                if f:
                    want[j] += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len(x) / mean))
        matching = int((want > 0).sum())
        assert 0 < matching < n
        assert list(i[r][matching:]) == [-1] * (n - matching)
        np.testing.assert_allclose(-d[r][:matching], want[i[r][:matching]], rtol=1e-5)
        assert sorted(want[i[r][:matching]], reverse=True) == pytest.approx(want[i[r][:matching]])
    m = index.pairwise(typed, method="bm25", bm25_k1=0.5, bm25_b=0.0)
    assert m.shape == (3, n) and (m <= 0).all()
    with pytest.raises(lcrwmd.Error, match="k1"):
        index.search(typed, method="bm25", bm25_k1=-1)
    with pytest.raises(lcrwmd.Error, match="b must be within"):
        index.search(typed, method="bm25", bm25_b=2)
    with pytest.raises(lcrwmd.Error, match="bm25 has no symmetric form"):
        index.search(typed, method="bm25", direction="symmetric")
    # hybrid: bm25's standardised score less 0.3 of the query-to-document distance's.
    s = -index.pairwise(typed, method="bm25").astype(np.float64)
    q = index.pairwise(typed, direction="query-to-document").astype(np.float64)
    z = lambda x: (x - x.mean(1, keepdims=True)) / x.std(1, keepdims=True)
    h = index.pairwise(typed, method="hybrid")
    np.testing.assert_allclose(h, 0.3 * z(q) - z(s), atol=1e-4)
    with pytest.raises(lcrwmd.Error, match="hybrid_weight must be"):
        index.search(typed, method="hybrid", hybrid_weight=-1)


def test_typed_words_take_the_text_method_and_documents_the_symmetric_distance(index, tmp_path):
    """One default by intent, read from the methods' descriptions: query() (typed words) is
    bm25's where no method is named, lc-rwmd's where a direction bm25 lacks is asked; search()
    (documents as queries) the symmetric lc-rwmd; the same in a Collection."""
    typed = ["federer wimbledon", "england batsmen wicket"]
    assert lcrwmd.default_method("text") == "bm25"
    assert lcrwmd.default_method() == lcrwmd.default_method("document") == "lc-rwmd"
    assert lcrwmd.default_method("text", "symmetric") == "lc-rwmd"
    assert [m["name"] for m in lcrwmd.methods() if m["default_for"] == "text"] == ["bm25"]
    with pytest.raises(lcrwmd.Error, match="kind: expected 'text' or 'document'"):
        lcrwmd.default_method("box")
    for got, want in [(index.query(typed, k=5), index.search(typed, k=5, method="bm25")),
                      (index.query(typed, k=5, direction="symmetric"), index.search(typed, k=5)),
                      (index.query(typed, k=5, method="lc-rwmd"), index.search(typed, k=5)),
                      (index.search(typed, k=5), index.search(typed, k=5, method="lc-rwmd"))]:
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    assert not np.array_equal(index.query(typed, k=5)[1], index.search(typed, k=5)[1])
    _, _, ids = index.query("federer wimbledon", k=3, return_ids=True, bm25_k1=0.5)
    assert len(ids[0]) == 3
    with pytest.raises(lcrwmd.Error, match="k1"):
        index.query(typed, bm25_k1=-1)
    path = tmp_path / "typed"
    lcrwmd.Collection.create(path, EMB, [index.text(j) for j in range(index.n_docs)],
                             ids=index.ids, stopwords=STOP)
    c = lcrwmd.Collection(path)
    np.testing.assert_array_equal(c.query(typed, k=5)[1], index.query(typed, k=5)[1])
    np.testing.assert_array_equal(c.search(typed, k=5)[1], index.search(typed, k=5)[1])


def test_more_like_a_document_leaves_it_out(index):
    """more_like: the document's own words as the query (symmetric by default), itself left
    out; by position or id; as a search with its text minus itself."""
    d, i = index.more_like([7, index.ids[30]], k=4)
    for row, doc in zip(range(2), (7, 30)):
        want_d, want_i = index.search([index.text(doc)], k=5)
        keep = want_i[0] != doc
        np.testing.assert_array_equal(i[row], want_i[0][keep][:4])
        np.testing.assert_allclose(d[row], want_d[0][keep][:4], rtol=1e-6)
        assert doc not in i[row]
    _, _, ids = index.more_like(7, k=3, method="bm25", return_ids=True)
    assert len(ids[0]) == 3 and index.ids[7] not in ids[0]
    with pytest.raises(lcrwmd.Error, match="more_like: no document with id 'nope'"):
        index.more_like("nope")
