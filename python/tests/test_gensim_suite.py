"""gensim's own WMD tests, from the installed gensim (Debian's python3-gensim 4.2), run against
lcrwmd's drop-in: `gensim.similarities.WmdSimilarity` and `KeyedVectors.wmdistance` are
replaced by `lcrwmd.gensim`'s for the run, and the test cases are gensim's, unchanged:

- test_similarities.py, TestWmdSimilarity: every test, un-skipped (its base class carries
  `@unittest.skip("skipping abstract base class")`, which its subclasses inherit; pyemd is
  installed). Its test_num_best calls `self.testFull`, a name gensim 4.2 renamed to
  `test_full` (it fails with gensim's own class too): the case runs with `testFull` aliased to
  `test_full`.
- test_word2vec.py, TestWMD: every test. Importing the module reads lee_background.cor,
  which Debian does not ship, through gensim.test.utils' lazy `lee_corpus_list`: that name is
  set to an empty list first (TestWMD does not use it).
- test_fasttext.py, test_wm_distance: it loads `lee_fasttext.bin`, which Debian does not ship
  (no gensim/test/test_data), so it is restated on a FastText model trained on gensim's
  `common_texts`, with the same documents' shape (one in-vocabulary, one of out-of-vocabulary
  words) and, beyond gensim's assertion (not inf), the value gensim itself computes.
"""
import unittest

import numpy as np
import pytest

import lcrwmd.gensim

gensim = pytest.importorskip("gensim")
pytest.importorskip("pyemd")  # gensim's tests skip without it; here they must run
import gensim.test.utils  # noqa: E402

gensim.test.utils.lee_corpus_list = []  # Debian lacks its data file (see above)
from gensim import similarities  # noqa: E402
from gensim.models import FastText, KeyedVectors  # noqa: E402
from gensim.test import test_similarities, test_word2vec  # noqa: E402
from gensim.test.utils import common_texts  # noqa: E402

GENSIM_WMDISTANCE = KeyedVectors.wmdistance


@pytest.fixture
def drop_in(monkeypatch):
    monkeypatch.setattr(similarities, "WmdSimilarity", lcrwmd.gensim.WmdSimilarity)
    monkeypatch.setattr(KeyedVectors, "wmdistance",
                        lambda self, d1, d2, norm=True: lcrwmd.gensim.wmdistance(self, d1, d2,
                                                                                 norm))


class _WmdSimilarityCase(test_similarities.TestWmdSimilarity):
    __test__ = False  # run below, with the drop-in in place; not collected by pytest itself
    __unittest_skip__ = False  # the abstract base's skip, inherited
    testFull = test_similarities.TestWmdSimilarity.test_full  # gensim 4.2's stale name


def names(case):
    return unittest.TestLoader().getTestCaseNames(case)


def run(case, name):
    result = unittest.TestResult()
    test = case(name)
    test.run(result)
    if hasattr(test, "cls"):  # the similarity cases: they ran the drop-in
        assert test.cls is lcrwmd.gensim.WmdSimilarity
    problems = result.failures + result.errors
    assert not problems, problems[0][1]
    assert not result.skipped, result.skipped
    assert result.testsRun == 1


@pytest.mark.parametrize("name", names(_WmdSimilarityCase))
def test_gensim_wmd_similarity(drop_in, name):
    run(_WmdSimilarityCase, name)


@pytest.mark.parametrize("name", names(test_word2vec.TestWMD))
def test_gensim_word2vec_wmd(drop_in, name):
    run(test_word2vec.TestWMD, name)


def test_gensim_fasttext_wm_distance_with_out_of_vocabulary_words(drop_in):
    model = FastText(common_texts, vector_size=16, min_count=1, seed=42, workers=1, epochs=20)
    doc = ["human", "computer"]
    oov_doc = ["humans", "computers", "graphss"]
    assert not any(w in model.wv.key_to_index for w in oov_doc)
    assert all(w in model.wv for w in oov_doc)  # FastText has vectors for them
    for a, b in [(doc, oov_doc), (doc, ["humans", "interface"]), (oov_doc, oov_doc[::-1])]:
        ours = model.wv.wmdistance(a, b)
        theirs = GENSIM_WMDISTANCE(model.wv, a, b)
        assert ours != float("inf")
        assert ours == pytest.approx(theirs, rel=1e-5, abs=1e-6), (a, b)
    # And as the similarity index, with out-of-vocabulary words in the corpus and the query.
    index = lcrwmd.gensim.WmdSimilarity([doc, oov_doc, ["graph", "trees"]], model.wv)
    sims = index[["humans", "graphs"]]
    want = [1 / (1 + GENSIM_WMDISTANCE(model.wv, ["humans", "graphs"], d))
            for d in (doc, oov_doc, ["graph", "trees"])]
    np.testing.assert_allclose(sims, want, rtol=1e-5)
