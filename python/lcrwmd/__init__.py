"""lcrwmd: nearest documents by the Word Mover's Distance and its relaxations, in C++.

    import lcrwmd
    emb = lcrwmd.Embeddings.load("cbow300.bin")
    index = lcrwmd.Index.build(emb, train_texts, labels=train_labels, stopwords="stop_words.txt")
    distances, indices = index.search(test_texts, k=10)          # symmetric LC-RWMD
    scores, indices = index.query("federer wimbledon", k=10)    # typed words: bm25

    # Or vectors trained on your own documents (fastText), which give every word a vector:
    emb = lcrwmd.Embeddings.train(train_texts, "vectors.bin", stopwords="stop_words.txt")

Documents are strings (tokenized like the command line: lowercased runs of letters, digits and
apostrophes) or lists of tokens (taken as they are). Errors raise lcrwmd.Error (a ValueError)
with the engine's message. The methods (`method=`), as lcrwmd.methods() describes them:
"""
from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings
from typing import Callable, Iterable, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from ._lcrwmd import (Embeddings, Error, FastTextModel, WordVectors, cpu_precision, cpu_simd_level,
                      cuda_devices, default_method, methods, set_threads, tokenize)
from ._lcrwmd import Collection as _NativeCollection
from ._lcrwmd import Index as _NativeIndex
from .explanation import Explanation, Flow, _explanation, plot_alignment

__doc__ = (__doc__ or "") + "".join(f"\n    {m['name']}: {m['summary']}" for m in methods())

__all__ = ["ExcludedDocumentsWarning", "Embeddings", "FastTextModel", "WordVectors", "Index", "Collection", "GpuSearcher", "Error", "Flow", "Explanation", "wmd", "rwmd",
           "wcd", "eval_knn", "plot_alignment", "tokenize", "set_threads", "cuda_devices",
           "cpu_simd_level", "cpu_precision", "default_method", "methods"]

# The method where none is named, for a document as the query (search, pairwise, classification,
# pairs, clusters); typed words (query) take default_method("text", direction).
_FOR_DOCUMENTS = default_method("document")

class ExcludedDocumentsWarning(UserWarning):
    """Documents with no known word were left out of an index: its results number the index's
    documents, not the caller's list (Index.ids maps them back)."""


#: A document: a string (tokenized by lcrwmd.tokenize) or a sequence of tokens taken as they are.
Document = Union[str, Sequence[str]]
#: Stop words: a path to a file with one word per line, or the words.
StopWords = Union[None, str, os.PathLike, Iterable[str]]
#: search() returns (distances, indices), or (distances, indices, ids) with return_ids=True.
SearchResult = Union[tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]],
                     tuple[npt.NDArray[np.float32], npt.NDArray[np.int64], list[list[str]]]]


def _from_gensim(keyed_vectors) -> Embeddings:
    """Embeddings from a gensim KeyedVectors (its words and vectors, as float32)."""
    return Embeddings(list(keyed_vectors.index_to_key),
                      np.ascontiguousarray(keyed_vectors.vectors, dtype=np.float32))


def _progress_lines() -> Callable[[float, float, float], None]:
    """A training progress callback: a line on stderr per tenth, as the command line's log."""
    shown = 0

    def line(fraction: float, words_per_second: float, eta_seconds: float) -> None:
        nonlocal shown
        if int(fraction * 10) > shown:
            shown = int(fraction * 10)
            print(f"training vectors: {100 * fraction:5.1f}%  {words_per_second:9.0f} words/s  "
                  f"{eta_seconds:5.0f} s left", file=sys.stderr, flush=True)
    return line


def _train(docs, path: Union[str, os.PathLike], stopwords: StopWords = None,
           progress: Union[bool, Callable[[float, float, float], Optional[bool]]] = True,
           **options):
    """Trains fastText word vectors on `docs` (str or token lists) as an index reads them
    (`stopwords` left out: give the index's), writes the model to `path` whole or not at all,
    and returns it as a FastTextModel (a word never seen gets a vector from its character
    n-grams). Options: model ("skipgram" | "cbow"), dim, epochs, min_count, minn, maxn,
    buckets, window, negatives, lr, threads, seed (one thread and one seed: the same model,
    byte for byte). progress: True shows a line on stderr per tenth of the training; False
    none; a callable is called as progress(fraction, words_per_second, eta_seconds), and
    returning False stops the training (as Ctrl-C does), writing nothing."""
    if progress is True:
        progress = _progress_lines()
    elif progress is False:
        progress = None
    return _native_train(_documents(docs), os.fspath(path), _stopwords(stopwords),
                         progress=progress, **options)


def _load(path: Union[str, os.PathLike]) -> WordVectors:
    return _native_load(os.fspath(path))


_load.__doc__ = Embeddings.load.__doc__
Embeddings.from_gensim = staticmethod(_from_gensim)
_native_load = Embeddings.load
Embeddings.load = staticmethod(_load)
_native_train = Embeddings.train
Embeddings.train = staticmethod(_train)
# Word vectors are immutable and large: a deep copy (scikit-learn's clone) shares them.
Embeddings.__deepcopy__ = lambda self, memo: self
FastTextModel.__deepcopy__ = lambda self, memo: self


def _documents(docs):
    if isinstance(docs, str):
        return [docs]
    # Token sequences become lists; anything else goes through for the engine to refuse.
    return [list(d) if not isinstance(d, str) and hasattr(d, "__iter__") else d for d in docs]


def _strings(values):
    return None if values is None else [str(v) for v in values]


def _stopwords(stopwords):
    """None, a path to a file with one word per line, or an iterable of words."""
    if stopwords is None:
        return None
    if isinstance(stopwords, (str, os.PathLike)):
        with open(stopwords, encoding="utf-8") as f:
            return [line.strip() for line in f if line.strip()]
    return [str(w) for w in stopwords]


def _direction(direction: Optional[str], symmetric: bool) -> str:
    # symmetric=False is the older spelling of direction="document-to-query"; "" is the
    # method's own direction (symmetric where it has one, bm25's query-to-document).
    if direction is None:
        return "" if symmetric else "document-to-query"
    if not symmetric and direction != "document-to-query":
        raise Error(f"symmetric=False is direction='document-to-query', not {direction!r}: "
                    "give one of them")
    return direction


def _method_parameters() -> dict:
    """Every method's parameters by name, each once: (its description, the methods with it)."""
    out = {}
    for m in methods():
        for p in m["parameters"]:
            out.setdefault(p["name"], (p, []))[1].append(m["name"])
    return out


def _takes_parameters(f):
    """f's **parameters are the methods' parameters (act_steps, bm25_k1, ...), passed on to the
    engine, which checks them: its signature and docstring list them as lcrwmd.methods()
    describes them, defaults included, and a name no method has is a TypeError."""
    described = _method_parameters()
    own = inspect.signature(f).parameters

    @functools.wraps(f)
    def checked(*args, **kwargs):
        for name in kwargs:
            if name not in own and name not in described:
                raise TypeError(f"{f.__name__}() got an unexpected keyword argument {name!r} "
                                f"(the methods' parameters: {', '.join(described)})")
        return f(*args, **kwargs)

    signature = inspect.signature(f)
    kept = [q for q in signature.parameters.values() if q.kind != q.VAR_KEYWORD]
    kept += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=p["default"],
                               annotation=int if p["type"] == "integer" else float)
             for name, (p, _) in described.items()]
    checked.__signature__ = signature.replace(parameters=kept)
    lines = [f"    {name} ({', '.join(ms)}; {p['type']}, default {p['default']}): {p['help']}"
             for name, (p, ms) in described.items()]
    checked.__doc__ = ((f.__doc__ or "") + "\n\n        The methods' parameters, as keyword "
                       "arguments (each read by the methods named):\n" +
                       "\n".join("        " + line for line in lines))
    return checked


def _quietly(build, *args, **kwargs):
    """An index built where its caller reports the documents left out in its own words."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExcludedDocumentsWarning)
        return build(*args, **kwargs)


def _range(max_distance):
    return float("inf") if max_distance is None else float(max_distance)


def _results(index, d, i, excluded, return_ids):
    if excluded:
        warnings.warn(f"{len(excluded)} queries have no word known to the index or its "
                      f"embeddings (query numbers {', '.join(excluded[:10])}): rows of -1")
    if not return_ids:
        return d, i
    ids = index.ids
    return d, i, [[ids[j] for j in row if j >= 0] for row in i]


class Index:
    """A resident set of documents: bag-of-words histograms over the words of the embeddings
    that occur in it, with the embeddings kept to read queries."""

    def __init__(self, native: _NativeIndex):
        self._native = native

    @classmethod
    def build(cls, embeddings: WordVectors, docs: Union[Document, Sequence[Document]],
              ids: Optional[Sequence] = None, labels: Optional[Sequence] = None,
              stopwords: StopWords = None, weighting: str = "tf",
              keep_text: bool = True, unit_vectors: Optional[bool] = None,
              metric: Optional[str] = None) -> Index:
        """Index documents (str or token lists) with `embeddings` (an Embeddings table or a
        FastTextModel). Documents left with no known word are excluded (a warning names
        them); their ids are in `excluded`, and results number the index's documents
        (`ids` maps them back). The index records its stop words, weighting and document frequencies, and
        reads queries with them; keep_text keeps each document's text (compressed) for
        `text(i)`; unit_vectors scales every word vector to length 1 (queries' too; default
        on for a fastText model, off for a table, or as the metric was learned). metric: a metric file from `lcrwmd learn`, which
        maps the vectors and weighs the words for every method, queries included; it must have
        been learned on these embeddings."""
        index = cls(_NativeIndex.build(embeddings, _documents(docs), _strings(ids),
                                       _strings(labels), _stopwords(stopwords), weighting,
                                       keep_text, unit_vectors,
                                       None if metric is None else str(metric)))
        if index.excluded:
            named = "ids" if ids is not None else "positions in docs"
            warnings.warn(f"{len(index.excluded)} documents have no known word and are not in "
                          f"the index ({named} {', '.join(index.excluded[:10])}"
                          f"{', ...' if len(index.excluded) > 10 else ''}): search results "
                          f"number the index's documents, not docs; index.ids names them "
                          f"(docs[int(index.ids[i])] without ids=)", ExcludedDocumentsWarning,
                          stacklevel=2)
        return index

    @classmethod
    def from_csr(cls, embeddings: Embeddings, matrix, ids: Optional[Sequence] = None,
                 labels: Optional[Sequence] = None) -> Index:
        """Index a scipy.sparse matrix of weights, one row per document, one column per word
        of `embeddings` (rows are L1-normalised)."""
        import scipy.sparse
        m = scipy.sparse.csr_matrix(matrix)
        m.sum_duplicates()
        return cls(_NativeIndex.from_csr(embeddings, m.indptr.astype(np.int64),
                                         m.indices.astype(np.int64), m.data.astype(np.float32),
                                         m.shape[1], _strings(ids), _strings(labels)))

    @classmethod
    def load(cls, path: Union[str, os.PathLike], embeddings: Optional[WordVectors] = None,
             stopwords: StopWords = None) -> Index:
        """An index file from `lcrwmd build` or save(). Queries are read with its own stop
        words (`stopwords`, where given, must be the same: lcrwmd.Error otherwise) and, for
        words it lacks, `embeddings`, which must be the ones it was built from."""
        return cls(_NativeIndex.load(os.fspath(path), embeddings, _stopwords(stopwords)))

    def with_embeddings(self, embeddings: WordVectors) -> Index:
        """The same index (sharing its searchers) with its queries' words that it lacks looked
        up in `embeddings`, which must hold its own words with their vectors (lcrwmd.Error
        otherwise)."""
        return Index(self._native.with_embeddings(embeddings))

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the index file (the format of `lcrwmd build`), atomically."""
        self._native.save(os.fspath(path))

    def learn_metric(self, path: Union[str, os.PathLike], dim: int = 0, epochs: int = 10,
                     centroid_epochs: int = 20, batch: int = 64, neighbors: int = 40,
                     held_out: float = 0.2, patience: int = 3, strength: float = 10.0,
                     epoch_documents: int = 4096, seed: int = 0) -> dict:
        """Learns a word metric from this index's labels (Supervised WMD: a map of the word
        vectors to `dim` dimensions, 0 for theirs, and a weight per word) and writes it to
        `path` whole or not at all (Ctrl-C stops it, writing nothing); `Index.build(...,
        metric=path)` applies it to every method. The options are `lcrwmd learn`'s (`strength`
        is its --lambda: the entropic transport's, relative to the costs' scale). Returns the
        held-out error of the kept metric ("held_out_error") and of the unsupervised one
        ("unsupervised_error")."""
        return self._native.learn_metric(os.fspath(path), dim, epochs, centroid_epochs, batch,
                                         neighbors, held_out, patience, strength,
                                         epoch_documents, seed)

    @_takes_parameters
    def search(self, queries: Union[Document, Sequence[Document]], k: int = 10,
               method: str = _FOR_DOCUMENTS, symmetric: bool = True, backend: str = "auto",
               batch: int = 0, prune: bool = True, return_ids: bool = False,
               precision: str = "auto", max_distance: Optional[float] = None,
               direction: Optional[str] = None, query_weights: str = "auto",
               **parameters) -> SearchResult:
        """The k nearest documents of each query: (distances, indices), both (n_queries, k),
        ascending distance, ties by the smaller index; -1 (and inf) where fewer than k
        documents exist or a query has no known word. return_ids=True adds the documents'
        ids, row by row. The searcher of each backend is made once and kept while the Index
        lives: with a GPU ("auto" or "cuda") only the first search uploads the index. batch caps
        the queries that share one phase 1 (0: as many as the memory budget holds, for
        LC-RWMD up to 65,536 query words, 32,768 for its pruned top-k).
        precision ("auto", "f32", "bf16", "int8") is the CPU's phase-1 GEMM: the same results
        in each, "auto" the fastest this CPU has (lcrwmd.cpu_precision()). max_distance keeps
        only the neighbours at most that far (a row then ends early, -1 past its last).
        direction: "symmetric" (max(D1, D2): how alike two documents are), "query-to-document"
        (each query word to its nearest document word: for short queries, a search box's) or
        "document-to-query" (symmetric=False says the same); None: symmetric where the method
        has it (bm25: query-to-document). query_weights: "auto" (IDF for query-to-document,
        else as the index weighs its documents), "index" or "idf". method="bm25" is Okapi BM25
        (bm25_k1, bm25_b) over every term: its distances are minus its scores, and only
        documents that share a term with the query are found; method="hybrid" adds lc-rwmd's
        query-to-document distance to it, each standardised (over hybrid_sample documents),
        the distance weighted by hybrid_weight. For typed words (a search box's), query() takes the
        method made for them."""
        d, i, excluded = self._native.search(_documents(queries), k, method,
                                             _direction(direction, symmetric), backend, batch,
                                             prune, parameters, precision, _range(max_distance),
                                             query_weights)
        return _results(self, d, i, excluded, return_ids)

    @_takes_parameters
    def query(self, texts: Union[Document, Sequence[Document]], k: int = 10,
              method: Optional[str] = None, direction: Optional[str] = None,
              backend: str = "auto", precision: str = "auto", query_weights: str = "auto",
              max_distance: Optional[float] = None, return_ids: bool = False,
              **parameters) -> SearchResult:
        """Typed words as queries, a search box's (what the service's /search takes): as search,
        but where no method is named, lcrwmd.default_method("text", direction): bm25 (its
        distances minus its scores), or lc-rwmd where a direction bm25 lacks is asked."""
        return self.search(texts, k, method=method or default_method("text", direction),
                           direction=direction, backend=backend, precision=precision,
                           query_weights=query_weights, max_distance=max_distance,
                           return_ids=return_ids, **parameters)

    @_takes_parameters
    def more_like(self, docs: Union[int, str, Sequence[Union[int, str]]], k: int = 10,
                  method: str = _FOR_DOCUMENTS, direction: Optional[str] = None,
                  backend: str = "auto", precision: str = "auto",
                  return_ids: bool = False, **parameters) -> SearchResult:
        """More like these documents of the index (positions or ids): each one's own words as
        the query, the document itself left out of its k neighbours; by default the symmetric
        distance (how alike two documents are). As search otherwise."""
        one = isinstance(docs, (int, str, np.integer))
        rows = [self._position(d, "more_like") for d in ([docs] if one else docs)]
        d, i = self._native.more_like(rows, k, method, direction or "", backend, parameters,
                                      precision)
        return _results(self, d, i, [], return_ids)

    @_takes_parameters
    def range_search(self, queries: Union[Document, Sequence[Document]], max_distance: float,
                     k: Optional[int] = None, method: str = _FOR_DOCUMENTS, symmetric: bool = True,
                     backend: str = "auto", precision: str = "auto",
                     direction: Optional[str] = None, query_weights: str = "auto", **parameters
                     ) -> list[tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]]:
        """Every document within max_distance of each query, nearest first (at most k; None:
        no cap): a (distances, indices) pair per query. A bounded method computes exact
        distances only where its bound is within the range."""
        d, i = self.search(queries, k=self.n_docs if k is None else k, method=method,
                           symmetric=symmetric, backend=backend, precision=precision,
                           max_distance=max_distance, direction=direction,
                           query_weights=query_weights, **parameters)
        return [(d[j][i[j] >= 0], i[j][i[j] >= 0]) for j in range(len(d))]

    @_takes_parameters
    def pairwise(self, queries: Union[Document, Sequence[Document]], method: str = _FOR_DOCUMENTS,
                 symmetric: bool = True, backend: str = "auto", batch: int = 0,
                 precision: str = "auto", direction: Optional[str] = None,
                 query_weights: str = "auto", **parameters) -> npt.NDArray[np.float32]:
        """The (n_queries, n_docs) matrix of distances, float32 (precision, direction,
        query_weights and the methods' parameters: as for search)."""
        return self._native.pairwise(_documents(queries), method,
                                     _direction(direction, symmetric), backend, batch, parameters,
                                     precision, query_weights)

    @_takes_parameters
    def classify(self, queries: Union[Document, Sequence[Document]], k: int = 5,
                 method: str = _FOR_DOCUMENTS, symmetric: bool = True, backend: str = "auto",
                 prune: bool = True, precision: str = "auto",
                 **parameters) -> list[Optional[dict]]:
        """Each query's label by the vote of its k nearest documents: a dict with "label",
        "votes" ({label: count}, most first) and "voters"; None for a query with no known word.
        A tie is settled as eval_knn settles it: by the k - 1 nearest, and so on down to the
        nearest alone. The queries need no labels; the index's documents do."""
        return self._native.classify(_documents(queries), k, method, symmetric, backend, prune,
                                     parameters, precision)

    @_takes_parameters
    def predict(self, queries: Union[Document, Sequence[Document]], k: int = 5,
                method: str = _FOR_DOCUMENTS, symmetric: bool = True, backend: str = "auto",
                prune: bool = True, precision: str = "auto",
                **parameters) -> list[Optional[str]]:
        """Each query's label, as classify decides it (None: no known word)."""
        return self._native.predict(_documents(queries), k, method, symmetric, backend, prune,
                                    parameters, precision)

    @_takes_parameters
    def predict_proba(self, queries: Union[Document, Sequence[Document]], k: int = 5,
                      method: str = _FOR_DOCUMENTS, symmetric: bool = True, backend: str = "auto",
                      prune: bool = True, precision: str = "auto",
                      **parameters) -> npt.NDArray[np.float64]:
        """(n_queries, len(classes)): each class's votes / voters among the k nearest
        (scikit-learn's uniform weights); a row of NaN for a query with no known word."""
        return self._native.predict_proba(_documents(queries), k, method, symmetric, backend,
                                          prune, parameters, precision)

    @_takes_parameters
    def pairs(self, max_distance: float, method: str = _FOR_DOCUMENTS, backend: str = "auto",
              prune: bool = True, precision: str = "auto", **parameters
              ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Every pair of the index's documents within max_distance (near-duplicates), each
        once, a < b: the arrays (a, b, distance), by a, then distance. A bounded method
        computes exact distances only where its bound is within the range."""
        return self._native.pairs(float(max_distance), method, backend, prune, parameters,
                                  precision)

    @_takes_parameters
    def cluster(self, k: int, seed: int = 0, method: str = _FOR_DOCUMENTS, iterations: int = 20,
                candidates: int = 32, members: int = 256, backend: str = "auto",
                precision: str = "auto", **parameters) -> dict:
        """k-medoids over the documents (each cluster represented by one of them): a dict with
        "labels" (each document's cluster), "medoids" (each cluster's document), "distances"
        (from its medoid) and "objective" (their sum, per iteration). Each iteration assigns
        every document to its nearest medoid, then tries `candidates` members of each cluster
        as its medoid, scored on `members` of them; the same seed, the same clusters."""
        return self._native.cluster(k, seed, method, iterations, candidates, members, backend,
                                    parameters, precision)

    @property
    def classes(self) -> list[str]:
        """The distinct labels of the documents, sorted: predict_proba's columns."""
        return self._native.classes

    @_takes_parameters
    def explain(self, query: Document, doc: Union[int, str], method: str = "wmd",
                symmetric: bool = True, precision: str = "auto", direction: Optional[str] = None,
                query_weights: str = "auto", **parameters) -> Explanation:
        """Which words carried the distance of `query` to document `doc` (its position, or its
        id as a str): an Explanation with the flows, largest contribution first. For "wmd" its
        distance is the one search reports and its flows' mass * cost sum to it; "rwmd" and
        "lc-rwmd" give both directions of the relaxation, "act" (act_steps = k) and "ict" both
        directions of their capped transfers. Raises lcrwmd.Error for an unknown document or a
        query with no known word. precision is accepted as search's (an explanation recomputes
        its pair's word distances from the vectors: every precision gives the same flows)."""
        cpu_precision(precision)  # a precision this CPU lacks: an error, as for search
        doc = self._position(doc, "explain")
        return _explanation(self._native.explain(query, doc, method,
                                                 _direction(direction, symmetric), parameters,
                                                 query_weights))

    def _position(self, doc: Union[int, str], what: str) -> int:
        """A document's position, from its position or its id (a str); an Error naming `what`."""
        if isinstance(doc, str):
            try:
                return self.ids.index(doc)
            except ValueError:
                raise Error(f"{what}: no document with id {doc!r}") from None
        if not 0 <= int(doc) < self.n_docs:
            raise Error(f"{what}: document {doc} of {self.n_docs}")
        return int(doc)

    def to_gpu(self, device: int = 0, memory_mib: int = 0, tf32: bool = False,
               precision: str = "auto") -> GpuSearcher:
        """A GpuSearcher: this index resident on CUDA device `device`, uploaded once, for many
        searches. memory_mib bounds the working memory beyond the resident set (0: most of
        what is free); precision is LC-RWMD's phase-1 GEMM, "f32" or "bf16" (tensor cores;
        "auto": bf16 where the device has it), certified: the same results either way; tf32
        runs every method's phase-1 GEMM on TF32 tensor cores instead, uncertified (distances
        to ~1e-3)."""
        return GpuSearcher(self, self._native.to_gpu(device, memory_mib, tf32, precision))

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return self._native.n_docs

    def __len__(self) -> int:
        return self._native.n_docs

    @property
    def vocab_size(self) -> int:
        """Distinct words of the documents (the rows phase 1 compares queries with)."""
        return self._native.vocab_size

    @property
    def dim(self) -> int:
        """Dimension of the word vectors."""
        return self._native.dim

    @property
    def unit_vectors(self) -> bool:
        """Whether its word vectors (and its queries') were scaled to length 1."""
        return self._native.unit_vectors

    @property
    def ids(self) -> list[str]:
        """Document ids, by index (the given ids, else "0", "1", ...)."""
        return self._native.ids

    @property
    def labels(self) -> list[str]:
        """Document labels, by index ("" where none were given)."""
        return self._native.labels

    @property
    def stopwords(self) -> list[str]:
        """The stop words it was built with (sorted); its queries are read with them too."""
        return self._native.stopwords

    def text(self, i: int) -> str:
        """Document i's text, as it was given (lcrwmd.Error if built with keep_text=False)."""
        return self._native.text(int(i))

    @property
    def excluded(self) -> list[str]:
        """Ids of the documents left out at build time: no word known to the embeddings."""
        return self._native.excluded

    def __repr__(self) -> str:
        return f"lcrwmd.Index({self.n_docs} documents, {self.vocab_size} words, dim {self.dim})"


def _pair(method: str, symmetric: bool, doc_a: Document, doc_b: Document,
          embeddings: Embeddings, stopwords: StopWords) -> float:
    index = Index.build(embeddings, [doc_b], stopwords=stopwords)
    if index.n_docs == 0:
        raise Error("doc_b has no word known to the embeddings")
    return float(index.pairwise([doc_a], method=method, symmetric=symmetric, backend="cpu")[0, 0])


def wmd(doc_a: Document, doc_b: Document, embeddings: Embeddings,
        stopwords: StopWords = None) -> float:
    """Exact Word Mover's Distance between two documents (EMD, Euclidean word costs)."""
    return _pair("wmd", True, doc_a, doc_b, embeddings, stopwords)


def rwmd(doc_a: Document, doc_b: Document, embeddings: Embeddings, stopwords: StopWords = None,
         symmetric: bool = True) -> float:
    """Relaxed WMD: max of both one-sided relaxations (symmetric), or doc_b -> doc_a alone."""
    return _pair("rwmd", symmetric, doc_a, doc_b, embeddings, stopwords)


def wcd(doc_a: Document, doc_b: Document, embeddings: Embeddings,
        stopwords: StopWords = None) -> float:
    """Word Centroid Distance: between the weighted mean vectors."""
    return _pair("wcd", True, doc_a, doc_b, embeddings, stopwords)


@_takes_parameters
def eval_knn(index: Index, queries: Sequence[Document], labels: Sequence,
             ks: Iterable[int] = range(1, 20), method: str = _FOR_DOCUMENTS, symmetric: bool = True,
             backend: str = "auto", precision: str = "auto", **parameters) -> dict:
    """kNN classification error of labelled queries against the index's labels: a dict with
    "errors" {k: rate}, "best_k", "best_error", "n_queries" and "excluded_queries"
    (precision: as for Index.search)."""
    return index._native.eval_knn(_documents(queries), _strings(labels), [int(k) for k in ks],
                                  method, symmetric, backend, parameters, precision)


class Collection:
    """A collection that changes (docs/collections.md): a directory of segments that takes new
    documents (an id it holds already is replaced) and deletions, each durable once the call
    returns, searched as one build of its live documents. The command line's `lcrwmd add`,
    `delete` and `compact` change the same directory; a search reads the last commit."""

    def __init__(self, path: Union[str, os.PathLike], embeddings: Optional[WordVectors] = None):
        """Opens the collection at `path` (every file checked). `embeddings`, where given, looks
        up query words no segment holds; they must be the ones it was built from."""
        self._native = _NativeCollection(os.fspath(path), embeddings)

    @classmethod
    def create(cls, path: Union[str, os.PathLike], embeddings: Union[str, os.PathLike],
               docs: Union[Document, Sequence[Document]], ids: Optional[Sequence] = None,
               labels: Optional[Sequence] = None, stopwords: StopWords = None,
               keep_text: bool = True) -> Collection:
        """A new collection in `path` (absent or an empty directory) of `docs`, its words'
        vectors from the embeddings file `embeddings`, which it records for later adds. TF
        weighting (a collection refuses TF-IDF: each change would re-weight every document)."""
        docs = _documents(docs)
        _NativeCollection.create(os.fspath(path), os.fspath(embeddings), docs, _strings(ids),
                                 _strings(labels), _stopwords(stopwords), keep_text)
        return cls(path)

    def add(self, docs: Union[Document, Sequence[Document]], ids: Sequence,
            labels: Optional[Sequence] = None, wait: float = 30.0) -> dict:
        """Adds documents (str or token lists) with their ids: an id the collection holds is
        replaced. Durable once it returns. Returns the counts ({"added", "replaced",
        "excluded": ids left with no known word, "generation", "segments"}). Another process
        changing the collection is waited for up to `wait` seconds (lcrwmd.Error after)."""
        return self._native.add(_documents(docs), _strings(ids), _strings(labels), wait)

    def delete(self, ids: Union[str, Sequence[str]], wait: float = 30.0) -> dict:
        """Deletes the documents with these ids, durably ({"deleted", "not_found",
        "generation", "segments"})."""
        return self._native.delete([ids] if isinstance(ids, str) else _strings(ids), wait)

    def compact(self, wait: float = 30.0) -> dict:
        """Rewrites the live documents as one segment: what one build of them gives."""
        return self._native.compact(wait)

    @_takes_parameters
    def search(self, queries: Union[Document, Sequence[Document]], k: int = 10,
               method: str = _FOR_DOCUMENTS, direction: Optional[str] = None,
               query_weights: str = "auto", max_distance: Optional[float] = None,
               return_ids: bool = False, **parameters) -> SearchResult:
        """As Index.search, over the live documents of the last commit (positions in `ids`),
        on the CPU."""
        d, i, excluded = self._native.search(_documents(queries), k, method, direction or "",
                                             parameters, query_weights, _range(max_distance))
        return _results(self, d, i, excluded, return_ids)

    @_takes_parameters
    def query(self, texts: Union[Document, Sequence[Document]], k: int = 10,
              method: Optional[str] = None, direction: Optional[str] = None,
              query_weights: str = "auto", max_distance: Optional[float] = None,
              return_ids: bool = False, **parameters) -> SearchResult:
        """As Index.query: typed words, bm25 where no method is named."""
        return self.search(texts, k, method=method or default_method("text", direction),
                           direction=direction, query_weights=query_weights,
                           max_distance=max_distance, return_ids=return_ids, **parameters)

    @property
    def ids(self) -> list[str]:
        """The live documents' ids, in collection order."""
        return self._native.ids

    @property
    def generation(self) -> int:
        """Commits so far."""
        return self._native.generation

    @property
    def segments(self) -> int:
        return self._native.segments

    @property
    def deleted(self) -> int:
        """Deleted documents still held in segments, until a merge or compact drops them."""
        return self._native.deleted

    def __len__(self) -> int:
        return len(self._native)

    def __repr__(self) -> str:
        return (f"lcrwmd.Collection({self._native.path!r}: {len(self)} documents, "
                f"{self.segments} segments, generation {self.generation})")


class GpuSearcher:
    """An Index resident on a GPU (Index.to_gpu): search and pairwise as the Index's, without a
    backend argument; the index is uploaded once, when it is made (`uploads` counts)."""

    def __init__(self, index: Index, native):
        self.index = index
        self._native = native

    @_takes_parameters
    def search(self, queries: Union[Document, Sequence[Document]], k: int = 10,
               method: str = _FOR_DOCUMENTS, symmetric: bool = True, batch: int = 0,
               prune: bool = True, return_ids: bool = False,
               max_distance: Optional[float] = None, direction: Optional[str] = None,
               **parameters) -> SearchResult:
        """As Index.search, on this GPU (which has no query-to-document direction)."""
        d, i, excluded = self._native.search(_documents(queries), k, method,
                                             _direction(direction, symmetric), batch, prune,
                                             _range(max_distance), parameters)
        return _results(self.index, d, i, excluded, return_ids)

    @_takes_parameters
    def pairwise(self, queries: Union[Document, Sequence[Document]], method: str = _FOR_DOCUMENTS,
                 symmetric: bool = True, batch: int = 0, direction: Optional[str] = None,
                 **parameters) -> npt.NDArray[np.float32]:
        """As Index.pairwise, on this GPU."""
        return self._native.pairwise(_documents(queries), method,
                                     _direction(direction, symmetric), batch, parameters)

    @property
    def uploads(self) -> int:
        """Uploads of document chunks so far: one per chunk when made, none per search where
        the index fits on the device."""
        return self._native.uploads

    @property
    def device(self) -> str:
        """The device's name."""
        return self._native.device

    @property
    def resident_bytes(self) -> int:
        """Device memory held by the resident index."""
        return self._native.resident_bytes
