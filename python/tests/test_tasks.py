"""Classification and range search from Python: Index.predict / predict_proba / classify, and
Index.range_search against the full matrix with ranges exactly at distances that occur."""
import numpy as np
import pytest


def test_predict_classify_and_probabilities_agree(index, queries):
    texts = [q[2] for q in queries] + ["qqqzzz"]  # the last: no known word
    labels = index.predict(texts, k=5)
    votes = index.classify(texts, k=5)
    proba = index.predict_proba(texts, k=5)
    assert labels[-1] is None and votes[-1] is None and np.isnan(proba[-1]).all()
    assert index.classes == sorted(set(index.labels))
    for label, vote, p in zip(labels[:-1], votes[:-1], proba[:-1]):
        assert vote["label"] == label and vote["voters"] == 5
        assert sum(vote["votes"].values()) == 5 and next(iter(vote["votes"])) == label
        assert p.sum() == pytest.approx(1.0)
        for cls, count in vote["votes"].items():
            assert p[index.classes.index(cls)] == pytest.approx(count / 5)
    with pytest.raises(Exception, match="k must be at least 1"):
        index.predict(texts[:1], k=0)


@pytest.mark.parametrize("method", ["lc-rwmd", "wmd", "wcd"])
def test_range_search_is_the_matrix_within_the_range(index, queries, method):
    texts = [q[2] for q in queries[:6]]
    m = index.pairwise(texts, method=method)
    for r in (np.sort(m[0])[0], np.sort(m[0])[7], np.sort(m.ravel())[m.size // 5]):
        for k in (None, 4):
            got = index.range_search(texts, float(r), k=k, method=method)
            for j, (d, i) in enumerate(got):
                want = sorted((m[j, n], n) for n in np.flatnonzero(m[j] <= r))[:k]
                assert list(i) == [n for _, n in want]
                np.testing.assert_array_equal(d, [x for x, _ in want])


@pytest.mark.parametrize("method", ["lc-rwmd", "wmd"])
def test_pairs_are_the_upper_triangle_within_the_range(emb, train, method):
    import lcrwmd
    from demo_data import STOP
    sub = lcrwmd.Index.build(emb, [r[2] for r in train[:50]], stopwords=STOP)
    m = sub.pairwise([r[2] for r in train[:50]], method=method)
    upper = np.sort(m[np.triu_indices(50, 1)])
    for r in (upper[0], upper[len(upper) // 30]):
        a, b, d = sub.pairs(float(r), method=method)
        want = sorted((i, m[i, j], j) for i, j in zip(*np.triu_indices(50, 1)) if m[i, j] <= r)
        assert list(zip(a, d, b)) == want


def test_cluster_is_deterministic_and_follows_the_topics(index):
    from sklearn.metrics import adjusted_rand_score
    a = index.cluster(5, seed=3)
    b = index.cluster(5, seed=3)
    assert np.array_equal(a["labels"], b["labels"]) and np.array_equal(a["medoids"], b["medoids"])
    assert list(a["labels"][a["medoids"]]) == list(range(5))
    assert np.all(a["distances"][a["medoids"]] == 0)
    assert a["objective"][-1] == pytest.approx(float(a["distances"].sum()), rel=1e-6)
    assert all(y <= x for x, y in zip(a["objective"], a["objective"][1:]))
    ari = adjusted_rand_score(index.labels, a["labels"])
    assert ari > 0.2  # five sports, five clusters: far from chance (0)
