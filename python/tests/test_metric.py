"""A metric learned from labels in Python: written by Index.learn_metric, applied by
Index.build(metric=...), the same as the command line's, and refused where it does not fit."""
import os

import pytest

import lcrwmd

from demo_data import DEMO, EMB, STOP, cli


def test_a_learned_metric_applies_as_on_the_command_line(tmp_path, emb, index, train, queries):
    path = tmp_path / "m.lcm"
    report = index.learn_metric(path, dim=8, epochs=1, centroid_epochs=2, neighbors=5, seed=1)
    assert path.exists()
    assert report["train_documents"] + report["held_out_documents"] == len(train)
    assert report["epoch_documents"] == report["train_documents"]  # fewer than an epoch's sample
    assert 0 <= report["held_out_error"] <= 1
    texts = [r[2] for r in train]
    learned = lcrwmd.Index.build(emb, texts, ids=[r[0] for r in train],
                                 labels=[r[1] for r in train], stopwords=STOP, metric=path)
    assert learned.dim == 8
    # The command line's build with the same metric gives the same distances.
    idx = tmp_path / "m.idx"
    cli("build", "--embeddings", EMB, "--docs", os.path.join(DEMO, "train.tsv"),
        "--stopwords", os.path.join(DEMO, "stop_words.txt"), "--metric", str(path),
        "--output", str(idx))
    loaded = lcrwmd.Index.load(str(idx), emb)
    q = [r[2] for r in queries]
    a = learned.search(q, k=5)
    b = loaded.search(q, k=5)
    assert (a[0] == b[0]).all() and (a[1] == b[1]).all()


def test_a_metric_that_does_not_fit_is_refused(tmp_path, emb, index, train):
    path = tmp_path / "m.lcm"
    index.learn_metric(path, dim=4, epochs=0, centroid_epochs=1, neighbors=3)
    texts = [r[2] for r in train]
    with pytest.raises(Exception, match="m.lcm"):
        lcrwmd.Index.build(emb, texts, metric=path, unit_vectors=True)
    damaged = tmp_path / "damaged.lcm"
    damaged.write_bytes(b"LCRWMDMT no")
    with pytest.raises(Exception, match="damaged.lcm"):
        lcrwmd.Index.build(emb, texts, metric=damaged)
    # The library's policy, the command line's: named options out of range are refused.
    for bad in ({"strength": 0.0}, {"strength": float("inf")}, {"patience": 0},
                {"neighbors": 0}):
        with pytest.raises(Exception, match="|".join(bad)):
            index.learn_metric(tmp_path / "bad.lcm", epochs=0, centroid_epochs=1, **bad)
    assert not (tmp_path / "bad.lcm").exists()
    unlabelled = lcrwmd.Index.build(emb, texts, stopwords=STOP)
    with pytest.raises(Exception, match="label"):
        unlabelled.learn_metric(tmp_path / "none.lcm")
    assert not (tmp_path / "none.lcm").exists()
