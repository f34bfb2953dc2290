"""A drop-in for gensim's WMD: `WmdSimilarity` and `wmdistance` with gensim's arguments and
results, computed by lcrwmd (exact WMD with pruned top-k, in C++, on all cores).

    from lcrwmd.gensim import WmdSimilarity      # was: from gensim.similarities import ...
    index = WmdSimilarity(corpus, kv, num_best=10)
    sims = index[query]                           # [(doc, similarity), ...], best first

Semantics follow gensim 4 (`KeyedVectors.wmdistance`, `WmdSimilarity`): documents are token
lists; tokens the vectors lack (`token in kv` false) are dropped, while a FastText model's
out-of-vocabulary words, which it gives vectors from their n-grams, are kept; a document with
no known token is at distance inf (similarity 0); word vectors are unit-normalised first
unless norm=False; the similarity is 1 / (1 + distance). `WmdSimilarity` iterates, saves and
loads (pickle; `.gz` compressed) as gensim's does. gensim itself is not needed, only an object
with its KeyedVectors' `index_to_key`, `key_to_index`, `vectors` and `get_vector` (and `in`).
"""
from __future__ import annotations

import gzip
import pickle
from typing import Optional, Sequence, Union

import numpy as np

from . import Embeddings, Index, _quietly, methods

__all__ = ["WmdSimilarity", "wmdistance"]

Tokens = Sequence[str]
SparseRow = list[tuple[int, float]]


def _unit(vectors: np.ndarray) -> np.ndarray:
    # As gensim's get_vector(norm=True): float32 vectors over float32 norms.
    return vectors / np.linalg.norm(vectors, axis=1)[..., np.newaxis]


def _vectors(kv, words: Sequence[str], norm: bool) -> np.ndarray:
    """kv's vectors of `words`: rows of kv.vectors for its vocabulary, get_vector for the
    others (a FastText model's out-of-vocabulary words, from their n-grams)."""
    if not words:
        return np.zeros((0, kv.vectors.shape[1]), dtype=np.float32)
    rows = [kv.vectors[kv.key_to_index[w]] if w in kv.key_to_index else kv.get_vector(w)
            for w in words]
    vectors = np.asarray(rows, dtype=np.float32)
    return _unit(vectors) if norm else vectors


def _embeddings(kv, norm: bool, words: Optional[Sequence[str]] = None,
                extra: Sequence[str] = ()) -> Embeddings:
    """kv's vectors (only those of `words`, where given; and of `extra`, words outside its
    vocabulary that it has vectors for) as lcrwmd Embeddings."""
    if words is None:
        vectors = np.asarray(kv.vectors, dtype=np.float32)
        vectors = _unit(vectors) if norm else vectors
        words = list(kv.index_to_key)
        if extra:
            vectors = np.concatenate([vectors, _vectors(kv, list(extra), norm)])
            words = words + list(extra)
    else:
        words = list(words)
        vectors = _vectors(kv, words, norm)
    return Embeddings(words, np.ascontiguousarray(vectors, dtype=np.float32))


def _in(kv, token: str) -> bool:
    """gensim's `token in kv`: its vocabulary, or any word a FastText model has n-grams for."""
    try:
        return token in kv
    except TypeError:
        return token in kv.key_to_index


def _known(tokens: Tokens, kv) -> list[str]:
    return [t for t in tokens if _in(kv, t)]


def _all_costs_zero(a: list[str], b: list[str], vector) -> bool:
    """gensim returns inf where every word of one document sits on every word of the other
    (a zero cost matrix stalls its solver) unless both are one and the same single word."""
    if len(set(a) | set(b)) <= 1:
        return False
    va = np.array([vector(w) for w in set(a)], dtype=np.float64)
    vb = np.array([vector(w) for w in set(b)], dtype=np.float64)
    return not np.any(np.linalg.norm(va[:, None, :] - vb[None, :, :], axis=2))


def _gensim_distance(d: float, a: list[str], b: list[str], vector) -> float:
    """d as gensim reports it; vector(word): the word's vector as the distance saw it."""
    if not a or not b:
        return float("inf")
    if d == 0.0 and _all_costs_zero(a, b, vector):
        return float("inf")
    return float(d)


def wmdistance(kv, document1: Tokens, document2: Tokens, norm: bool = True) -> float:
    """gensim's `kv.wmdistance(document1, document2, norm=norm)`: exact WMD between two token
    lists; inf where either has no token known to `kv`."""
    a = _known(document1, kv)
    b = _known(document2, kv)
    if not a or not b:
        return float("inf")
    emb = _embeddings(kv, norm, sorted(set(a) | set(b)))
    index = _quietly(Index.build, emb, [b])
    d = float(index.pairwise([a], method="wmd", backend="cpu")[0, 0])
    return _gensim_distance(d, a, b, emb.__getitem__)


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
        self.normalize = False  # gensim's attributes: the corpus is tokens, not vectors,
        self.index = np.arange(len(corpus))  # and its "index" their positions
        self._stop = set(stopwords or ())
        docs = [[t for t in doc if t not in self._stop] for doc in corpus]
        self._known_docs = [_known(d, kv_model) for d in docs]
        # kv's vocabulary, and the corpus's words outside it that kv has vectors for.
        self._emb = _embeddings(kv_model, norm, extra=self._outside(self._known_docs))
        # The native index holds the documents with a known token; _position maps its rows back.
        self._position = np.array([i for i, d in enumerate(self._known_docs) if d],
                                  dtype=np.int64)
        self._lc = (_quietly(Index.build, self._emb,
                             [self._known_docs[i] for i in self._position])
                    if len(self._position) else None)

    def _outside(self, docs: Sequence[Sequence[str]], known: Optional[Embeddings] = None) -> list:
        """The words of docs outside kv's vocabulary (and `known`): kv has vectors for them."""
        return sorted({t for d in docs for t in d
                       if t not in self.wv.key_to_index and (known is None or t not in known)})

    def __len__(self) -> int:
        return len(self.corpus)

    def __str__(self) -> str:
        return "%s<%i docs, %i features>" % (type(self).__name__, len(self), self._emb.dim)

    def __iter__(self):
        """Each corpus document's similarities to the corpus, in order (gensim's iteration),
        computed chunksize documents at a time."""
        step = max(int(self.chunksize), 1)
        for start in range(0, len(self.corpus), step):
            for sims in self[self.index[start:start + step]]:
                yield sims

    def save(self, fname, *args, **kwargs) -> None:
        """Pickles the similarity index to `fname` (gzip-compressed where it ends in .gz), as
        gensim's SaveLoad does; its other arguments are accepted and have nothing to do."""
        opener = gzip.open if str(fname).endswith(".gz") else open
        with opener(fname, "wb") as f:
            pickle.dump(self, f, protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def load(cls, fname, mmap=None) -> "WmdSimilarity":
        """A similarity index saved by save(). mmap is gensim's: a compressed file cannot be
        memory-mapped (IOError); otherwise there is nothing to map (the index is in memory)."""
        compressed = str(fname).endswith(".gz")
        if mmap is not None and compressed:
            raise IOError(f"cannot mmap compressed object {fname}")
        opener = gzip.open if compressed else open
        with opener(fname, "rb") as f:
            obj = pickle.load(f)
        if not isinstance(obj, cls):
            raise TypeError(f"{fname} holds a {type(obj).__name__}, not a {cls.__name__}")
        return obj

    def _queries(self, query) -> tuple[list[list[str]], bool]:
        if isinstance(query, np.ndarray):  # gensim: positions of corpus documents
            query = [self.corpus[i] for i in query]
        if not query or not isinstance(query[0], list):
            query = [query]
        queries = [_known([t for t in q if t not in self._stop], self.wv) for q in query]
        return queries, len(queries) == 1

    def _vector(self, word: str) -> np.ndarray:
        return self._emb[word] if word in self._emb else _vectors(self.wv, [word], self.norm)[0]

    def _searcher(self, queries: list[list[str]]) -> Index:
        """The native index, its embeddings extended by the queries' words outside kv's
        vocabulary (a FastText model's) where there are any."""
        extra = self._outside(queries, self._emb)
        if not extra:
            return self._lc
        vectors = np.concatenate([self._emb.vectors, _vectors(self.wv, extra, self.norm)])
        return self._lc.with_embeddings(Embeddings(self._emb.words + extra, vectors))

    def _distances(self, queries: list[list[str]]) -> np.ndarray:
        """(n_queries, len(corpus)) distances in gensim's terms (inf where gensim has inf)."""
        d = np.full((len(queries), len(self.corpus)), np.inf)
        rows = [j for j, q in enumerate(queries) if q]
        if rows and self._lc is not None:
            part = self._searcher(queries).pairwise([queries[j] for j in rows],
                                                    method=self.method, backend=self._backend(),
                                                    batch=self.chunksize)
            d[np.ix_(rows, self._position)] = part
            for j in rows:
                for i in np.flatnonzero(d[j] == 0.0):
                    d[j, i] = _gensim_distance(0.0, queries[j], self._known_docs[i], self._vector)
        return d

    def _backend(self) -> str:
        # auto: no GPU searcher (nor its upload) for a method the CPU runs; "cuda" is passed as
        # asked, so that wmd there is the library's error, never a silent move to the CPU.
        cpu_only = {m["name"] for m in methods() if not m["runs_on_gpu"]}
        return "cpu" if self.method in cpu_only and self.backend == "auto" else self.backend

    def _best(self, queries: list[list[str]]) -> list[SparseRow]:
        """The num_best nearest corpus documents of each query: a pruned top-k search."""
        out: list[SparseRow] = [[] for _ in queries]
        rows = [j for j, q in enumerate(queries) if q]
        if not rows or self._lc is None or self.num_best <= 0:
            return out
        k = min(self.num_best, self._lc.n_docs)
        dist, idx = self._searcher(queries).search([queries[j] for j in rows], k=k,
                                                   method=self.method, backend=self._backend(),
                                                   batch=self.chunksize)
        for r, j in enumerate(rows):
            for dd, ii in zip(dist[r], idx[r]):
                if ii < 0:
                    continue
                pos = int(self._position[ii])
                g = _gensim_distance(float(dd), queries[j], self._known_docs[pos], self._vector)
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
