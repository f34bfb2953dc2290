"""Fixtures over the demo corpus: its embeddings, training and query rows, and an index."""
import os

import pytest

import lcrwmd
from demo_data import DEMO, EMB, STOP, read_tsv


@pytest.fixture(scope="module")
def emb():
    return lcrwmd.Embeddings.load(EMB)


@pytest.fixture(scope="module")
def train():
    return read_tsv(os.path.join(DEMO, "train.tsv"))


@pytest.fixture(scope="module")
def queries():
    return read_tsv(os.path.join(DEMO, "queries.tsv"))


@pytest.fixture(scope="module")
def index(emb, train):
    return lcrwmd.Index.build(emb, [r[2] for r in train], ids=[r[0] for r in train],
                              labels=[r[1] for r in train], stopwords=STOP)
