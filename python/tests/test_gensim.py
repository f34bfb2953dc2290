"""lcrwmd.gensim against gensim itself (WmdSimilarity, KeyedVectors.wmdistance with pyemd), on
samples of bbcsport and twitter with the project's 300-d word2vec vectors.

gensim's solver (pyemd, Pele's FastEMD) rounds weights and costs to integers (a factor of 1e6
on their largest): its distances are off by up to ~2e-5 relative (measured: 1.02154045 where
POT's exact ot.emd2 and lcrwmd give 1.02155521). So against gensim the similarities agree to
GENSIM_TOL, and the distances are held to an exact EMD (POT on gensim's own cost matrix) to 1e-6.
"""
import csv
import os
import time

from collections import Counter

import numpy as np
import pytest

import lcrwmd
from lcrwmd.gensim import WmdSimilarity, wmdistance

gensim = pytest.importorskip("gensim")
pytest.importorskip("pyemd")  # gensim's wmdistance solves with it
from gensim.matutils import full2sparse_clipped  # noqa: E402
from gensim.models import KeyedVectors  # noqa: E402
from gensim.similarities import WmdSimilarity as GensimWmdSimilarity  # noqa: E402

GENSIM_TOL = 5e-5

SOURCE = os.environ.get("LCRWMD_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(SOURCE, "..", "shared", "data")
if not os.path.isdir(DATA):
    pytest.skip(f"no shared data at {DATA}", allow_module_level=True)


def token_lists(corpus, n, stop):
    with open(os.path.join(DATA, "corpora", corpus), encoding="utf-8") as f:
        rows = [r for r, _ in zip(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE),
                                  range(n))]
    return [[t for t in lcrwmd.tokenize(r[2]) if t not in stop] for r in rows]


@pytest.fixture(scope="module")
def stop():
    with open(os.path.join(DATA, "stop_words.txt"), encoding="utf-8") as f:
        return {w.strip() for w in f if w.strip()}


@pytest.fixture(scope="module")
def kv():
    return KeyedVectors.load_word2vec_format(
        os.path.join(DATA, "embeddings", "cbow300.bin"), binary=True)


def exact_wmd(kv, a, b, norm=True):
    """The WMD by POT's exact network simplex, on the cost matrix and weights gensim builds."""
    import ot
    a, b = Counter(t for t in a if t in kv), Counter(t for t in b if t in kv)
    va = np.array([kv.get_vector(w, norm=norm) for w in a], dtype=np.float64)
    vb = np.array([kv.get_vector(w, norm=norm) for w in b], dtype=np.float64)
    cost = np.linalg.norm(va[:, None, :] - vb[None, :, :], axis=2)
    pa = np.array(list(a.values()), dtype=np.float64)
    pb = np.array(list(b.values()), dtype=np.float64)
    return float(ot.emd2(pa / pa.sum(), pb / pb.sum(), cost))


def assert_same_best(ours, theirs):
    """The same (document, similarity) lists, to gensim's precision; documents whose
    similarities tie to within it may come in either order."""
    theirs = [(int(j), float(t)) for j, t in theirs]
    assert len(ours) == len(theirs)
    for (i, s), (j, t) in zip(ours, theirs):
        assert abs(s - t) <= GENSIM_TOL
        assert i == j or abs(s - t) <= 2 * GENSIM_TOL


@pytest.mark.parametrize("corpus, n_docs, n_queries", [("bbcsport", 40, 3),
                                                       ("twitter", 200, 6)])
def test_wmd_similarity_matches_gensim(kv, stop, corpus, n_docs, n_queries):
    docs = token_lists(f"{corpus}/train.tsv", n_docs, stop)
    docs.append(["zzzunknownzzz"])  # no known token: distance inf, similarity 0
    queries = token_lists(f"{corpus}/test.tsv", n_queries, stop)

    theirs_index = GensimWmdSimilarity(docs, kv)
    start = time.perf_counter()
    theirs = theirs_index[queries]
    t_gensim = time.perf_counter() - start
    start = time.perf_counter()
    ours_index = WmdSimilarity(docs, kv)  # copies (and normalises) kv's vectors once
    t_build = time.perf_counter() - start
    start = time.perf_counter()
    ours = ours_index[queries]
    t_ours = time.perf_counter() - start
    assert ours.shape == theirs.shape == (n_queries, len(docs))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=GENSIM_TOL)
    for j in range(n_queries):  # and exact, against POT, for a few documents
        for i in (0, 7, n_docs - 1):
            assert 1.0 / ours[j, i] - 1.0 == pytest.approx(exact_wmd(kv, docs[i], queries[j]),
                                                          rel=1e-6)
    assert np.all(ours[:, -1] == 0.0)

    # num_best: the pruned top-k search, against gensim's own clipping of its full rows.
    best_index = WmdSimilarity(docs, kv, num_best=10)
    start = time.perf_counter()
    best = best_index[queries]
    t_best = time.perf_counter() - start
    for row, want in zip(best, theirs):
        assert_same_best(row, full2sparse_clipped(want, 10))
    # One query: a row (a list without num_best's wrapping), as gensim.
    one = WmdSimilarity(docs, kv, num_best=5)[queries[0]]
    assert_same_best(one, full2sparse_clipped(theirs[0], 5))
    np.testing.assert_allclose(WmdSimilarity(docs, kv)[queries[0]], theirs[0], atol=GENSIM_TOL)
    # Saved and loaded (pickled, as gensim's), the same answers.
    import pickle
    again = pickle.loads(pickle.dumps(best_index))
    assert again[queries] == best
    print(f"\n{corpus}: {n_queries} queries x {len(docs)} documents: gensim {t_gensim:.2f} s, "
          f"lcrwmd {t_ours:.3f} s all similarities ({t_gensim / t_ours:.0f}x), "
          f"{t_best:.3f} s top-10 ({t_gensim / t_best:.0f}x); lcrwmd's index {t_build:.2f} s")


def test_wmdistance_matches_gensim(kv, stop):
    docs = token_lists("bbcsport/train.tsv", 4, stop) + token_lists("twitter/train.tsv", 4, stop)
    for a, b in zip(docs, docs[1:]):
        for norm in (True, False):
            d = wmdistance(kv, a, b, norm=norm)
            assert d == pytest.approx(exact_wmd(kv, a, b, norm=norm), rel=1e-6)
            # pyemd's rounding weighs more on the raw vectors' larger costs (~7e-5 seen).
            assert d == pytest.approx(kv.wmdistance(a, b, norm=norm), rel=2e-4)
    # gensim's special cases: no known word, one and the same word, a document with itself.
    assert wmdistance(kv, ["zzzunknownzzz"], docs[0]) == kv.wmdistance(["zzzunknownzzz"],
                                                                       docs[0]) == float("inf")
    assert wmdistance(kv, [], docs[0]) == float("inf")
    assert wmdistance(kv, ["apple", "apple"], ["apple"]) == kv.wmdistance(["apple"],
                                                                         ["apple"]) == 0.0
    assert wmdistance(kv, docs[0], docs[0]) == pytest.approx(0.0, abs=1e-6)


def test_fast_bounds_bound_the_exact_similarity(kv, stop):
    docs = token_lists("twitter/train.tsv", 100, stop)
    queries = token_lists("twitter/test.tsv", 3, stop)
    exact = WmdSimilarity(docs, kv, backend="cpu")[queries]
    for method in ("lc-rwmd", "rwmd", "wcd"):
        bound = WmdSimilarity(docs, kv, method=method, backend="cpu")[queries]
        # A lower bound on the distance is an upper bound on the similarity.
        assert np.all(bound >= exact - 1e-6), method



def test_wmd_on_cuda_is_the_librarys_error_not_a_silent_move(kv, stop):
    docs = token_lists("twitter/train.tsv", 20, stop)
    queries = token_lists("twitter/test.tsv", 2, stop)
    with pytest.raises(lcrwmd.Error, match="CPU backend only"):
        WmdSimilarity(docs, kv, backend="cuda")[queries]
    WmdSimilarity(docs, kv, backend="auto")[queries]  # auto: the CPU runs it
