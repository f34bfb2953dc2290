"""A drop-in for gensim's WMD: `WmdSimilarity` and `wmdistance` with gensim's arguments and
results, computed by lcrwmd (exact WMD with pruned top-k, in C++, on all cores).

    from lcrwmd.gensim import WmdSimilarity      # was: from gensim.similarities import ...
    index = WmdSimilarity(corpus, kv, num_best=10)
    sims = index[query]                           # [(doc, similarity), ...], best first

Semantics follow gensim 4 (`KeyedVectors.wmdistance`, `WmdSimilarity`): documents are token
lists; tokens missing from the vectors are dropped; a document with no known token is at
distance inf (similarity 0); word vectors are unit-normalised first unless norm=False; the
similarity is 1 / (1 + distance). gensim itself is not needed, only an object with its
KeyedVectors' `index_to_key` and `vectors` (and `get_vector`).
"""
from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np

from . import Embeddings, Index

__all__ = ["WmdSimilarity", "wmdistance"]

Tokens = Sequence[str]
SparseRow = list[tuple[int, float]]


def _embeddings(kv, norm: bool, words: Optional[Sequence[str]] = None) -> Embeddings:
    """kv's vectors (only those of `words`, where given) as lcrwmd Embeddings."""
    if words is None:
        words = list(kv.index_to_key)
        vectors = np.asarray(kv.vectors, dtype=np.float32)
    else:
        vectors = np.asarray(kv.vectors[[kv.key_to_index[w] for w in words]], dtype=np.float32)
    if norm:
        # As gensim's get_vector(norm=True): float32 vectors over float32 norms.
        norms = np.linalg.norm(vectors, axis=1)
        vectors = vectors / norms[..., np.newaxis]
    return Embeddings(list(words), np.ascontiguousarray(vectors, dtype=np.float32))


def _known(tokens: Tokens, emb: Embeddings) -> list[str]:
    return [t for t in tokens if t in emb]


def _all_costs_zero(a: list[str], b: list[str], emb: Embeddings) -> bool:
    """gensim returns inf where every word of one document sits on every word of the other
    (a zero cost matrix stalls its solver) unless both are one and the same single word."""
    if len(set(a) | set(b)) <= 1:
        return False
    va = np.array([emb[w] for w in set(a)], dtype=np.float64)
    vb = np.array([emb[w] for w in set(b)], dtype=np.float64)
    return not np.any(np.linalg.norm(va[:, None, :] - vb[None, :, :], axis=2))


def _gensim_distance(d: float, a: list[str], b: list[str], emb: Embeddings) -> float:
    if not a or not b:
        return float("inf")
    if d == 0.0 and _all_costs_zero(a, b, emb):
        return float("inf")
    return float(d)


def wmdistance(kv, document1: Tokens, document2: Tokens, norm: bool = True) -> float:
    """gensim's `kv.wmdistance(document1, document2, norm=norm)`: exact WMD between two token
    lists; inf where either has no token known to `kv`."""
    a = [t for t in document1 if t in kv.key_to_index]
    b = [t for t in document2 if t in kv.key_to_index]
    if not a or not b:
        return float("inf")
    emb = _embeddings(kv, norm, sorted(set(a) | set(b)))
    index = Index.build(emb, [b])
    d = float(index.pairwise([a], method="wmd", backend="cpu")[0, 0])
    return _gensim_distance(d, a, b, emb)


class WmdSimilarity:
    """gensim's `WmdSimilarity(corpus, kv_model, num_best=None, chunksize=256)`.

    `index[query]` for one token list gives a numpy row of similarities to every corpus
    document, or with num_best the list of (document position, similarity), best first,
    leaving out documents at infinite distance; `index[[q1, q2, ...]]` one such result per
    query. Beyond gensim: `norm` (unit-normalise vectors, gensim's default), `method` ("wmd"
    exact, the default; "lc-rwmd", "rwmd" or "wcd" for the fast lower bounds), `backend`
    ("cpu", "cuda" or "auto") and `stopwords`.
    """

    def __init__(self, corpus: Sequence[Tokens], kv_model, num_best: Optional[int] = None,
                 chunksize: int = 256, norm: bool = True, method: str = "wmd",
                 backend: str = "auto", stopwords: Optional[Sequence[str]] = None):
        self.corpus = corpus
        self.wv = kv_model
        self.num_best = num_best
        self.chunksize = chunksize
        self.norm = norm
        self.method = method
        self.backend = backend
        self.normalize = False  # gensim's attribute: the corpus is tokens, not vectors
        self._emb = _embeddings(kv_model, norm)
        self._stop = set(stopwords or ())
        # The index holds the documents with a known token; _position maps its rows back.
        docs = [[t for t in doc if t not in self._stop] for doc in corpus]
        self._known_docs = [_known(d, self._emb) for d in docs]
        self._position = np.array([i for i, d in enumerate(self._known_docs) if d],
                                  dtype=np.int64)
        self._index = (Index.build(self._emb, [self._known_docs[i] for i in self._position])
                       if len(self._position) else None)

    def __len__(self) -> int:
        return len(self.corpus)

    def __str__(self) -> str:
        return "%s<%i docs, %i features>" % (type(self).__name__, len(self), self._emb.dim)

    def _queries(self, query) -> tuple[list[list[str]], bool]:
        if isinstance(query, np.ndarray):  # gensim: positions of corpus documents
            query = [self.corpus[i] for i in query]
        if not query or not isinstance(query[0], list):
            query = [query]
        queries = [_known([t for t in q if t not in self._stop], self._emb) for q in query]
        return queries, len(queries) == 1

    def _distances(self, queries: list[list[str]]) -> np.ndarray:
        """(n_queries, len(corpus)) distances in gensim's terms (inf where gensim has inf)."""
        d = np.full((len(queries), len(self.corpus)), np.inf)
        rows = [j for j, q in enumerate(queries) if q]
        if rows and self._index is not None:
            part = self._index.pairwise([queries[j] for j in rows], method=self.method,
                                        backend=self._backend(), batch=self.chunksize)
            d[np.ix_(rows, self._position)] = part
            for j in rows:
                for i in np.flatnonzero(d[j] == 0.0):
                    d[j, i] = _gensim_distance(0.0, queries[j], self._known_docs[i], self._emb)
        return d

    def _backend(self) -> str:
        return "cpu" if self.method == "wmd" else self.backend

    def _best(self, queries: list[list[str]]) -> list[SparseRow]:
        """The num_best nearest corpus documents of each query: a pruned top-k search."""
        out: list[SparseRow] = [[] for _ in queries]
        rows = [j for j, q in enumerate(queries) if q]
        if not rows or self._index is None or self.num_best <= 0:
            return out
        k = min(self.num_best, self._index.n_docs)
        dist, idx = self._index.search([queries[j] for j in rows], k=k, method=self.method,
                                       backend=self._backend(), batch=self.chunksize)
        for r, j in enumerate(rows):
            for dd, ii in zip(dist[r], idx[r]):
                if ii < 0:
                    continue
                pos = int(self._position[ii])
                g = _gensim_distance(float(dd), queries[j], self._known_docs[pos], self._emb)
                sim = 1.0 / (1.0 + g)
                if sim > 1e-9:  # gensim's full2sparse_clipped leaves out (near) zeros
                    out[j].append((pos, sim))
            out[j].sort(key=lambda p: (-p[1], p[0]))
        return out

    def get_similarities(self, query) -> np.ndarray:
        """Similarities 1 / (1 + WMD) to every corpus document: a row for one query, a matrix
        for several (gensim's get_similarities)."""
        queries, single = self._queries(query)
        sims = 1.0 / (1.0 + self._distances(queries))
        return sims[0] if single else sims

    def __getitem__(self, query) -> Union[np.ndarray, SparseRow, list[SparseRow]]:
        if self.num_best is None:
            return self.get_similarities(query)
        queries, single = self._queries(query)
        best = self._best(queries)
        return best[0] if single else best
