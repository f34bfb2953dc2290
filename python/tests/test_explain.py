"""Index.explain and plot_alignment: the words that carry a distance, against what search
reports."""
import os

import pytest

import lcrwmd
from demo_data import DEMO, read_tsv


def test_explain_wmd_is_the_searched_distance_and_its_flow(index, queries):
    text = queries[0][2]
    d, i = index.search([text], k=2, method="wmd", backend="cpu")
    for rank in range(2):
        e = index.explain(text, int(i[0, rank]), method="wmd")
        assert e.doc == index.ids[i[0, rank]]
        assert e.distance == pytest.approx(float(d[0, rank]), rel=0, abs=0)  # the same float
        assert sum(f.mass for f in e.flows) == pytest.approx(1.0, abs=1e-9)
        assert sum(f.contribution for f in e.flows) == pytest.approx(e.distance, rel=1e-6)
        contributions = [f.contribution for f in e.flows]
        assert contributions == sorted(contributions, reverse=True)
        # repr summarises: the largest three flows and how many more, not every flow.
        assert len(e.flows) > 3 and f"{len(e.flows)} flows" in repr(e)
        assert f"{len(e.flows) - 3} more" in repr(e) and len(repr(e)) < 300
    # By id too; a document against itself moves every word onto itself for free.
    assert index.explain(text, index.ids[int(i[0, 1])]).distance == e.distance
    doc0 = index.explain(index_text(index, 0), 0)
    assert doc0.distance == 0.0
    assert all(f.cost == 0.0 and f.query_word == f.doc_word for f in doc0.flows)


def index_text(index, position):
    rows = read_tsv(os.path.join(DEMO, "train.tsv"))
    return rows[position][2]


def test_explain_rwmd_directions(index, queries):
    text = queries[1][2]
    full = index.pairwise([text], method="rwmd", backend="cpu")[0]
    for doc in (0, 5):
        e = index.explain(text, doc, method="rwmd")
        d1 = sum(f.contribution for f in e.doc_to_query)
        d2 = sum(f.contribution for f in e.query_to_doc)
        assert d1 == pytest.approx(e.doc_to_query_distance, rel=1e-12)
        assert d2 == pytest.approx(e.query_to_doc_distance, rel=1e-12)
        assert e.doc_to_query_set_distance == (d1 >= d2)
        assert e.distance == pytest.approx(float(full[doc]), rel=1e-6)
        assert max(d1, d2) == pytest.approx(e.distance, rel=1e-6)
        one = index.explain(text, doc, method="lc-rwmd", symmetric=False)
        assert one.doc_to_query_set_distance and one.distance == pytest.approx(d1, rel=1e-6)


def test_explain_act_and_ict_directions(index, queries):
    text = queries[1][2]
    for method, steps in (("act", 1), ("act", 3), ("ict", 1)):
        full = index.pairwise([text], method=method, act_steps=steps, backend="cpu")[0]
        for doc in (0, 5):
            e = index.explain(text, doc, method=method, act_steps=steps)
            d1 = sum(f.contribution for f in e.doc_to_query)
            d2 = sum(f.contribution for f in e.query_to_doc)
            assert max(d1, d2) == pytest.approx(e.distance, rel=1e-6)
            assert e.distance == pytest.approx(float(full[doc]), rel=1e-5)
            if method == "act":  # each word in at most k + 1 steps
                words = [f.doc_word for f in e.doc_to_query]
                assert max(words.count(w) for w in set(words)) <= steps + 1


def test_explain_bad_input(index, queries):
    with pytest.raises(lcrwmd.Error, match="nosuchdoc"):
        index.explain(queries[0][2], "nosuchdoc")
    with pytest.raises(lcrwmd.Error):
        index.explain(queries[0][2], index.n_docs)
    with pytest.raises(lcrwmd.Error, match="no word known"):
        index.explain("", 0)
    with pytest.raises(lcrwmd.Error, match="no word known"):
        index.explain("qqqzzzx xxyyzz", 0)
    with pytest.raises(lcrwmd.Error, match="wcd"):
        index.explain(queries[0][2], 0, method="wcd")


def test_plot_alignment_writes_a_png(tmp_path, index, queries):
    pytest.importorskip("matplotlib")
    e = index.explain(queries[0][2], 3)
    path = tmp_path / "alignment.png"
    lcrwmd.plot_alignment(e, path, top=12)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
