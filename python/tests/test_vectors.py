"""Word vectors trained on your own documents: Embeddings.train (fastText in the engine), a
.bin read by Embeddings.load, unseen query words looked up through their n-grams, and the
gensim route (a gensim FastText's vectors as Embeddings) beside ours."""
import os
import pickle

import numpy as np
import pytest

import lcrwmd
from demo_data import STOP

QUICK = dict(dim=16, epochs=2, min_count=2, buckets=5000, threads=1, seed=5)


@pytest.fixture(scope="module")
def model_path(tmp_path_factory, train):
    path = tmp_path_factory.mktemp("vectors") / "demo.bin"
    lcrwmd.Embeddings.train([r[2] for r in train], path, stopwords=STOP, **QUICK)
    return path


def test_train_returns_the_model_and_writes_the_same_bytes_twice(tmp_path, train, model_path):
    again = tmp_path / "again.bin"
    model = lcrwmd.Embeddings.train([r[2] for r in train], again, stopwords=STOP, **QUICK)
    assert isinstance(model, lcrwmd.FastTextModel) and isinstance(model, lcrwmd.WordVectors)
    assert model.dim == 16 and len(model) > 100 and model.format == "fasttext"
    assert open(again, "rb").read() == open(model_path, "rb").read()
    # A word it never saw has a vector, from its character n-grams.
    assert "federrer" not in model.words and "federrer" in model
    assert model["federrer"].shape == (16,) and np.isfinite(model["federrer"]).all()


def test_training_says_how_far_it_is_and_stops_when_asked(tmp_path, train, capfd):
    texts = [r[2] for r in train]
    lcrwmd.Embeddings.train(texts, tmp_path / "a.bin", stopwords=STOP, **QUICK)
    lines = [line for line in capfd.readouterr().err.splitlines() if "training vectors:" in line]
    assert lines and "words/s" in lines[0] and "s left" in lines[0]
    lcrwmd.Embeddings.train(texts, tmp_path / "b.bin", stopwords=STOP, progress=False, **QUICK)
    assert "training vectors" not in capfd.readouterr().err
    # A callable sees the fraction rise; False from it stops the training and writes nothing.
    seen = []

    def until_half(fraction, words_per_second, eta_seconds):
        seen.append(fraction)
        return fraction < 0.5

    with pytest.raises(lcrwmd.Error):
        lcrwmd.Embeddings.train(texts, tmp_path / "c.bin", stopwords=STOP, progress=until_half,
                                **dict(QUICK, epochs=50))
    assert seen and seen == sorted(seen) and not (tmp_path / "c.bin").exists()

    # An exception from it stops the training and is raised as it was.
    def broken(fraction, words_per_second, eta_seconds):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        lcrwmd.Embeddings.train(texts, tmp_path / "d.bin", stopwords=STOP, progress=broken,
                                **dict(QUICK, epochs=50))
    assert not (tmp_path / "d.bin").exists()


def test_load_reads_a_model_and_tables_alike(model_path, emb):
    model = lcrwmd.Embeddings.load(model_path)
    assert isinstance(model, lcrwmd.FastTextModel)
    assert isinstance(emb, lcrwmd.Embeddings) and isinstance(emb, lcrwmd.WordVectors)
    again = pickle.loads(pickle.dumps(model))  # by its path
    np.testing.assert_array_equal(again["tennis"], model["tennis"])


def test_an_index_of_a_model_keeps_unseen_query_words(model_path, train):
    model = lcrwmd.Embeddings.load(model_path)
    texts = [r[2] for r in train]
    index = lcrwmd.Index.build(model, texts, stopwords=STOP)
    assert index.unit_vectors  # a model's default, as the command line's
    assert not lcrwmd.Index.build(model, texts, unit_vectors=False).unit_vectors
    d, i = index.search(["federrer wimbledonn tenniss"], k=3, direction="query-to-document")
    assert (i >= 0).all() and np.isfinite(d).all()
    with pytest.raises(lcrwmd.Error, match="not the embeddings the index was built from"):
        index.with_embeddings(lcrwmd.Embeddings.train(texts[:60], model_path.parent / "x.bin",
                                                      **QUICK))


def test_training_refuses_a_wordless_corpus_naming_it(tmp_path):
    out = tmp_path / "none.bin"
    with pytest.raises(lcrwmd.Error, match="no words to train"):
        lcrwmd.Embeddings.train(["the and", "..."], out, stopwords=["the", "and"], **QUICK)
    assert not out.exists() and os.listdir(tmp_path) == []


def test_the_gensim_route_beside_ours(train):
    """gensim's FastText trained on the same tokens, handed over as a table (from_gensim):
    the words it was trained on, with gensim's vectors."""
    gensim = pytest.importorskip("gensim.models")
    tokens = [[t for t in lcrwmd.tokenize(r[2])] for r in train]
    ft = gensim.FastText(sentences=tokens, vector_size=16, min_count=2, epochs=2, workers=1,
                         seed=5)
    emb = lcrwmd.Embeddings.from_gensim(ft.wv)
    assert emb.dim == 16 and len(emb) == len(ft.wv.index_to_key)
    index = lcrwmd.Index.build(emb, [r[2] for r in train], stopwords=STOP)
    assert index.n_docs == len(train)
