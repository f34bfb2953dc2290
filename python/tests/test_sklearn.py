"""lcrwmd.sklearn against scikit-learn's own machinery (clone, Pipeline, cross_val_score,
GridSearchCV, DBSCAN and AgglomerativeClustering on a precomputed matrix), against the
command line's classify, and the retriever against the index's own search."""
import os
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.cluster import DBSCAN, AgglomerativeClustering  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer  # noqa: E402

import lcrwmd  # noqa: E402
from lcrwmd.sklearn import (DocumentRetriever, KNeighborsClassifier,  # noqa: E402
                            SupervisedMetric, pairwise_distances)

from demo_data import DEMO, EMB, STOP, cli  # noqa: E402


def test_predictions_equal_the_command_lines_classify(tmp_path, emb, train, queries):
    idx = str(tmp_path / "demo.idx")
    cli("build", "--embeddings", EMB, "--docs", os.path.join(DEMO, "train.tsv"), "--stopwords",
        STOP, "--output", idx)
    for method in ("lc-rwmd", "wmd"):
        out = cli("classify", "--index", idx, "--queries", os.path.join(DEMO, "queries.tsv"),
                  "--embeddings", EMB, "--k", "5", "--method", method, "--backend", "cpu")
        want = {row.split("\t")[0]: row.split("\t")[1] for row in out.splitlines()}
        clf = KNeighborsClassifier(emb, n_neighbors=5, method=method, stopwords=STOP,
                                   backend="cpu")
        got = clf.fit([r[2] for r in train], [r[1] for r in train]).predict(
            [q[2] for q in queries])
        assert list(got) == [want[q[0]] for q in queries]


def test_probabilities_and_neighbours(emb, train, queries):
    y = np.array([r[1] for r in train])
    clf = KNeighborsClassifier(emb, n_neighbors=4, stopwords=STOP).fit([r[2] for r in train], y)
    assert list(clf.classes_) == sorted(set(y))
    p = clf.predict_proba([q[2] for q in queries] + ["qqqzzz"])  # the last: no known word
    assert p.shape == (len(queries) + 1, len(clf.classes_))
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(p[-1], clf.prior_)
    assert clf.predict(["qqqzzz"])[0] == clf.classes_[np.argmax(clf.prior_)]
    # Training documents against themselves: each its own nearest, at distance 0.
    d, i = clf.kneighbors([r[2] for r in train[:6]], n_neighbors=3)
    assert list(i[:, 0]) == list(range(6)) and np.all(d[:, 0] == 0)
    assert clf.kneighbors([r[2] for r in train[:2]], return_distance=False).shape == (2, 4)


def test_labels_of_any_type_and_scores(emb, train):
    texts = [r[2] for r in train]
    codes = {lab: n for n, lab in enumerate(sorted({r[1] for r in train}), start=7)}
    y = np.array([codes[r[1]] for r in train])  # integers, sorted otherwise than their strings
    clf = KNeighborsClassifier(emb, n_neighbors=1, stopwords=STOP).fit(texts, y)
    assert clf.predict(texts).dtype == y.dtype
    assert clf.score(texts, y) == 1.0  # each document its own nearest neighbour


def test_clone_pipeline_cross_validation_and_grid_search(emb, train):
    texts, y = [r[2] for r in train], [r[1] for r in train]
    clf = KNeighborsClassifier(emb, stopwords=STOP)
    twin = clone(clf)
    assert twin.embeddings is emb and twin.get_params()["n_neighbors"] == 5
    assert twin.set_params(n_neighbors=3).n_neighbors == 3
    pipe = make_pipeline(FunctionTransformer(lambda docs: [d.lower() for d in docs]), clf)
    scores = cross_val_score(pipe, texts, y, cv=3)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    grid = GridSearchCV(clf, {"n_neighbors": [1, 3, 5], "method": ["lc-rwmd", "wcd"]}, cv=3)
    grid.fit(texts, y)
    assert grid.best_params_["n_neighbors"] in (1, 3, 5)
    assert len(grid.cv_results_["mean_test_score"]) == 6
    assert 0 <= grid.score(texts, y) <= 1


def _quick_metric(**kw):
    return SupervisedMetric(dim=kw.pop("dim", 8), epochs=1, centroid_epochs=2, neighbors=5, **kw)


def test_a_supervised_metric_alone_and_inside_the_classifier(tmp_path, emb, train, queries):
    texts, y = [r[2] for r in train], np.array([r[1] for r in train])
    metric = _quick_metric(embeddings=emb, stopwords=STOP).fit(texts, y)
    assert 0 <= metric.held_out_error_ <= 1 and 0 <= metric.unsupervised_error_ <= 1
    learned = metric.build(texts, labels=list(y))
    assert learned.dim == 8
    # Saved, it is the file the command line's build takes.
    metric.save(tmp_path / "m.lcm")
    idx = str(tmp_path / "m.idx")
    cli("build", "--embeddings", EMB, "--docs", os.path.join(DEMO, "train.tsv"), "--stopwords",
        STOP, "--metric", str(tmp_path / "m.lcm"), "--output", idx)
    assert lcrwmd.Index.load(idx, emb).dim == 8
    # In the classifier: learned on its training documents, with its embeddings and stop words.
    clf = KNeighborsClassifier(emb, n_neighbors=3, stopwords=STOP, metric=_quick_metric())
    clf.fit(texts, y)
    assert clf.metric_.embeddings is emb and clf.index_.dim == 8
    assert clf.metric.get_params()["embeddings"] is None  # the parameter itself untouched
    assert 0 <= clf.score([q[2] for q in queries], [q[1] for q in queries]) <= 1
    # Its parameters tuned as the classifier's.
    twin = clone(clf)
    assert twin.get_params()["metric__dim"] == 8
    grid = GridSearchCV(clf, {"metric__dim": [4, 8]}, cv=2).fit(texts, y)
    assert grid.best_params_["metric__dim"] in (4, 8)
    pipe = make_pipeline(FunctionTransformer(lambda docs: [d.lower() for d in docs]), clf)
    assert 0 <= pipe.fit(texts, y).score(texts, y) <= 1
    with pytest.raises(ValueError):
        SupervisedMetric().fit(texts, y)  # no embeddings


def test_precomputed_distances_for_clustering(emb, index, train):
    texts = [r[2] for r in train[:40]]
    d = pairwise_distances(texts, embeddings=emb, stopwords=STOP)
    assert d.shape == (40, 40) and d.dtype == np.float64
    np.testing.assert_array_equal(np.diag(d), 0)
    sub = lcrwmd.Index.build(emb, texts, stopwords=STOP)
    np.testing.assert_array_equal(d, sub.pairwise(texts))
    assert pairwise_distances(texts[:3], texts, embeddings=emb, stopwords=STOP).shape == (3, 40)
    labels = AgglomerativeClustering(n_clusters=4, metric="precomputed",
                                     linkage="average").fit_predict(d)
    assert len(set(labels)) == 4
    assert DBSCAN(eps=float(np.median(d)), metric="precomputed").fit_predict(d).shape == (40,)
    with pytest.raises(ValueError, match="no known word"):
        pairwise_distances(texts[:2] + ["qqqzzz"], embeddings=emb)


def test_the_retriever_answers_as_the_index_searches(emb, train):
    texts = [r[2] for r in train]
    queries = [" ".join(t.split()[3:7]) for t in texts[:12]] + ["qqqzzz"]  # the last: unknown
    index = lcrwmd.Index.build(emb, texts, ids=[str(i) for i in range(len(texts))],
                               stopwords=STOP, keep_text=False)
    rows = np.array([int(i) for i in index.ids])
    for params in ({}, {"method": "hybrid", "hybrid_weight": 0.5},
                   {"method": "lc-rwmd", "direction": "query-to-document"},
                   {"method": "bm25", "bm25_k1": 0.9, "bm25_b": 0.4}):
        r = DocumentRetriever(emb, n_neighbors=5, stopwords=STOP, backend="cpu", **params)
        d, i = r.fit(texts).kneighbors(queries)
        search = {k: v for k, v in params.items() if k != "method"}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the unknown query's row of -1, said by the index
            wd, wi = index.search(queries, k=5, method=params.get("method", "bm25"),
                                  backend="cpu", **search)
        np.testing.assert_array_equal(d, wd)
        np.testing.assert_array_equal(i, np.where(wi >= 0, rows[np.maximum(wi, 0)], -1))
        assert np.all(i[-1] == -1), params  # no word the index knows: nothing found
        # Recall@5: each of the first twelve queries is four words of its own document.
        relevant = list(range(12)) + [0]
        want = np.mean([relevant[q] in i[q] for q in range(len(queries))])
        assert r.score(queries, relevant) == want
        assert clone(r).get_params() == r.get_params()
    bm25 = DocumentRetriever(emb, n_neighbors=5, stopwords=STOP).fit(texts)
    assert bm25.score(queries[:12], list(range(12))) >= 0.9
    with pytest.raises(ValueError):
        bm25.score(queries, [0, 1])
