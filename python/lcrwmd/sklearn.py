"""scikit-learn over lcrwmd's distances: a kNN classifier whose samples are documents (strings
or token lists), usable in Pipeline, cross_val_score and GridSearchCV, optionally in a word
metric it learns from its training labels (SupervisedMetric); a retriever in NearestNeighbors'
shape (fit the documents, ask for each query's nearest); and the distance matrix for
estimators that take metric="precomputed" (DBSCAN, AgglomerativeClustering, ...).

    from lcrwmd.sklearn import DocumentRetriever, KNeighborsClassifier, pairwise_distances
    clf = KNeighborsClassifier(emb, n_neighbors=5, method="wmd", stopwords="stop_words.txt")
    clf.fit(train_texts, train_labels).score(test_texts, test_labels)
    clf = KNeighborsClassifier(emb, metric=SupervisedMetric(dim=100))  # S-WMD's learned space
    search = DocumentRetriever(emb, n_neighbors=10).fit(documents)  # bm25 by default
    distances, rows = search.kneighbors(["how do I list open files"])
    D = pairwise_distances(texts, embeddings=emb, method="lc-rwmd")
"""
from __future__ import annotations

import os
import tempfile
import warnings
from typing import Optional, Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from . import (_FOR_DOCUMENTS, Embeddings, Index, StopWords, _documents, _method_parameters,
               _quietly, _takes_parameters, default_method)

_FOR_TEXT = default_method("text")  # a retriever's queries are typed words


def _keep_parameters(estimator, given: dict) -> None:
    """Every method's parameter as an estimator parameter (get_params, set_params, clone and
    GridSearchCV see them), at its default where not given."""
    for name, (p, _) in _method_parameters().items():
        setattr(estimator, name, given.get(name, p["default"]))


def _parameters(estimator) -> dict:
    """The methods' parameters an estimator holds, as search takes them."""
    return {name: getattr(estimator, name) for name in _method_parameters()}


def _samples(X) -> list:
    """Documents from X: a str is one document too many to guess, so it is refused."""
    if isinstance(X, str):
        raise ValueError("expected a sequence of documents (strings or token lists), got one "
                         "string")
    return _documents(list(X))


class SupervisedMetric(BaseEstimator):
    """A word metric learned from labels (Huang et al.'s Supervised WMD, as `lcrwmd learn`):
    fit(documents, labels) learns a map of the word vectors to `dim` dimensions (0: theirs) and
    a weight per word from an index of the documents (its `stopwords` and `weighting`), on
    centroids for `centroid_epochs` and then on entropic transport for `epochs`, each document
    against its `neighbors` nearest, `held_out` of the documents choosing the metric kept
    (each stage ending after `patience` epochs without a better one; `strength`: the entropic
    transport's, relative to the costs' scale, `lcrwmd learn --lambda`; an epoch learns from a
    fresh sample of `epoch_documents` where there are more).
    build(documents) indexes documents in the learned space, where every method runs; save(path)
    writes the metric file `lcrwmd build --metric` takes. held_out_error_ and
    unsupervised_error_ say what it gained on the held-out documents. Given to
    KNeighborsClassifier as `metric`, it is learned on the classifier's training documents with
    the classifier's embeddings, stop words and weighting (GridSearchCV reaches its parameters
    as metric__dim and so on)."""

    def __init__(self, embeddings: Optional[Embeddings] = None, dim: int = 0, epochs: int = 10,
                 centroid_epochs: int = 20, batch: int = 64, neighbors: int = 40,
                 held_out: float = 0.2, patience: int = 3, strength: float = 10.0,
                 epoch_documents: int = 4096, seed: int = 0, weighting: str = "tf",
                 stopwords: StopWords = None):
        self.embeddings = embeddings
        self.dim = dim
        self.epochs = epochs
        self.centroid_epochs = centroid_epochs
        self.batch = batch
        self.neighbors = neighbors
        self.held_out = held_out
        self.patience = patience
        self.strength = strength
        self.epoch_documents = epoch_documents
        self.seed = seed
        self.weighting = weighting
        self.stopwords = stopwords

    def fit(self, X, y) -> SupervisedMetric:
        if self.embeddings is None:
            raise ValueError("SupervisedMetric needs embeddings (an lcrwmd.Embeddings)")
        docs, y = _samples(X), np.asarray(y)
        if y.ndim != 1 or len(y) != len(docs):
            raise ValueError(f"{len(docs)} documents and {y.shape} labels")
        index = _quietly(Index.build, self.embeddings, docs, labels=[str(v) for v in y],
                         stopwords=self.stopwords, weighting=self.weighting, keep_text=False)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "metric.lcm")
            report = index.learn_metric(path, dim=self.dim, epochs=self.epochs,
                                        centroid_epochs=self.centroid_epochs, batch=self.batch,
                                        neighbors=self.neighbors, held_out=self.held_out,
                                        patience=self.patience, strength=self.strength,
                                        epoch_documents=self.epoch_documents, seed=self.seed)
            with open(path, "rb") as f:
                self.metric_bytes_ = f.read()
        self.held_out_error_ = report["held_out_error"]
        self.unsupervised_error_ = report["unsupervised_error"]
        return self

    def save(self, path) -> None:
        """Writes the metric file (what `lcrwmd build --metric` and Index.build(metric=) take)."""
        check_is_fitted(self, "metric_bytes_")
        tmp = os.fspath(path) + ".tmp"
        with open(tmp, "wb") as f:
            f.write(self.metric_bytes_)
        os.replace(tmp, os.fspath(path))

    def build(self, X, ids: Optional[Sequence] = None, labels: Optional[Sequence] = None,
              keep_text: bool = True) -> Index:
        """An index of documents X in the learned space (its queries read in it too)."""
        check_is_fitted(self, "metric_bytes_")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "metric.lcm")
            self.save(path)
            return _quietly(Index.build, self.embeddings, _samples(X), ids=ids, labels=labels,
                            stopwords=self.stopwords, weighting=self.weighting,
                            keep_text=keep_text, metric=path)

    def _more_tags(self):
        return {"X_types": ["string"], "requires_y": True}


class KNeighborsClassifier(ClassifierMixin, BaseEstimator):
    """Classifies documents by the vote of their n_neighbors nearest training documents under
    `method` (lcrwmd.methods()), as Index.classify votes: a tie is settled by the
    n_neighbors - 1 nearest, and so on. `embeddings` is an lcrwmd.Embeddings (shared, never
    copied, by clone); `weighting` "tf" or "tfidf"; `stopwords` a path or the words. A document
    with no word the embeddings know has no distance: in training it is left out (with a
    warning), to predict it gets the training set's most frequent class and its frequencies
    as probabilities. `metric`: a SupervisedMetric, learned by fit on the training documents
    (a clone of it, with this classifier's embeddings, stop words and weighting; fitted as
    metric_) and the documents indexed in its space."""

    @_takes_parameters
    def __init__(self, embeddings: Optional[Embeddings] = None, n_neighbors: int = 5,
                 method: str = _FOR_DOCUMENTS, symmetric: bool = True, weighting: str = "tf",
                 stopwords: StopWords = None, backend: str = "auto",
                 precision: str = "auto", metric: Optional[SupervisedMetric] = None,
                 **parameters):
        self.metric = metric
        self.embeddings = embeddings
        self.n_neighbors = n_neighbors
        self.method = method
        self.symmetric = symmetric
        self.weighting = weighting
        self.stopwords = stopwords
        self.backend = backend
        self.precision = precision
        _keep_parameters(self, parameters)

    def fit(self, X, y) -> KNeighborsClassifier:
        if self.embeddings is None:
            raise ValueError("KNeighborsClassifier needs embeddings (an lcrwmd.Embeddings)")
        docs, y = _samples(X), np.asarray(y)
        if y.ndim != 1 or len(y) != len(docs):
            raise ValueError(f"{len(docs)} documents and {y.shape} labels")
        self.classes_, codes = np.unique(y, return_inverse=True)
        # Each document labelled by its class's position and named by its own: the index's
        # labels and ids map back to classes_ and to X's rows.
        ids, labels = [str(i) for i in range(len(docs))], [str(c) for c in codes]
        if self.metric is not None:
            self.metric_ = clone(self.metric).set_params(
                embeddings=self.embeddings, stopwords=self.stopwords, weighting=self.weighting)
            self.metric_.fit(docs, codes)
            self.index_ = _quietly(self.metric_.build, docs, ids=ids, labels=labels,
                                   keep_text=False)
        else:
            self.index_ = _quietly(Index.build, self.embeddings, docs, ids=ids, labels=labels,
                                   stopwords=self.stopwords, weighting=self.weighting,
                                   keep_text=False)
        if self.index_.excluded:
            warnings.warn(f"{len(self.index_.excluded)} training documents have no known word "
                          f"and are left out")
        self.rows_ = np.array([int(i) for i in self.index_.ids], dtype=np.int64)
        kept = codes[self.rows_]
        self.prior_ = np.bincount(kept, minlength=len(self.classes_)) / max(len(kept), 1)
        return self

    def _options(self) -> dict:
        return dict(k=self.n_neighbors, method=self.method, symmetric=self.symmetric,
                    backend=self.backend, precision=self.precision, **_parameters(self))

    def predict_proba(self, X) -> np.ndarray:
        check_is_fitted(self, "index_")
        votes = self.index_.predict_proba(_samples(X), **self._options())
        out = np.zeros((votes.shape[0], len(self.classes_)))
        out[:, [int(c) for c in self.index_.classes]] = votes
        unknown = np.isnan(votes).any(axis=1) if votes.size else np.zeros(len(out), bool)
        out[unknown] = self.prior_
        return out

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "index_")
        labels = self.index_.predict(_samples(X), **self._options())
        fallback = int(np.argmax(self.prior_))
        return self.classes_[[fallback if lab is None else int(lab) for lab in labels]]

    def kneighbors(self, X, n_neighbors: Optional[int] = None, return_distance: bool = True):
        """The n_neighbors nearest training documents of each document of X: (distances,
        indices into the training set), or the indices alone; -1 (and inf) where there are
        fewer or a document has no known word."""
        check_is_fitted(self, "index_")
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # rows of -1 are documented here
            d, i = self.index_.search(_samples(X), k=k, method=self.method,
                                      symmetric=self.symmetric, backend=self.backend,
                                      precision=self.precision, **_parameters(self))
        i = np.where(i >= 0, self.rows_[np.maximum(i, 0)], -1)
        return (d, i) if return_distance else i

    def _more_tags(self):
        return {"X_types": ["string"], "requires_y": True}


class DocumentRetriever(BaseEstimator):
    """Search over documents in the shape of scikit-learn's NearestNeighbors: fit(documents)
    indexes them, kneighbors(queries) gives each query's n_neighbors best as (distances, rows of
    the fitted documents). The default is what a search box wants: method="bm25" (Okapi BM25,
    bm25_k1, bm25_b); method="hybrid" adds lc-rwmd's query-to-document distance
    (hybrid_weight, hybrid_sample), and every other method of lcrwmd.methods() ranks by its
    distance in `direction` (None: the method's default; "query-to-document" for short queries).
    score(queries, relevant) is recall@n_neighbors: the share of queries whose relevant
    document (a row of the fitted documents) is among their neighbours. Parameters as
    KNeighborsClassifier's otherwise; rows of -1 (and inf) where a query finds fewer documents
    (bm25: only those sharing a word with it) or has no known word."""

    @_takes_parameters
    def __init__(self, embeddings: Optional[Embeddings] = None, n_neighbors: int = 10,
                 method: str = _FOR_TEXT, direction: Optional[str] = None,
                 query_weights: str = "auto", weighting: str = "tf",
                 stopwords: StopWords = None, backend: str = "auto",
                 precision: str = "auto", **parameters):
        self.embeddings = embeddings
        self.n_neighbors = n_neighbors
        self.method = method
        self.direction = direction
        self.query_weights = query_weights
        self.weighting = weighting
        self.stopwords = stopwords
        self.backend = backend
        self.precision = precision
        _keep_parameters(self, parameters)

    def fit(self, X, y=None) -> DocumentRetriever:
        if self.embeddings is None:
            raise ValueError("DocumentRetriever needs embeddings (an lcrwmd.Embeddings)")
        docs = _samples(X)
        self.index_ = _quietly(Index.build, self.embeddings, docs,
                               ids=[str(i) for i in range(len(docs))],
                               stopwords=self.stopwords, weighting=self.weighting,
                               keep_text=False)
        if self.index_.excluded:
            warnings.warn(f"{len(self.index_.excluded)} documents have no known word and are "
                          f"left out")
        self.rows_ = np.array([int(i) for i in self.index_.ids], dtype=np.int64)
        return self

    def kneighbors(self, X, n_neighbors: Optional[int] = None, return_distance: bool = True):
        check_is_fitted(self, "index_")
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # rows of -1 are documented here
            d, i = self.index_.search(_samples(X), k=k, method=self.method,
                                      direction=self.direction, backend=self.backend,
                                      precision=self.precision,
                                      query_weights=self.query_weights, **_parameters(self))
        i = np.where(i >= 0, self.rows_[np.maximum(i, 0)], -1)
        return (d, i) if return_distance else i

    def score(self, X, y) -> float:
        y = np.asarray(y)
        found = self.kneighbors(X, return_distance=False)
        if y.shape != (len(found),):
            raise ValueError(f"{len(found)} queries and {y.shape} relevant documents")
        return float(np.mean([y[q] in found[q] for q in range(len(y))])) if len(y) else 0.0

    def _more_tags(self):
        return {"X_types": ["string"], "requires_y": False}


@_takes_parameters
def pairwise_distances(X, Y=None, embeddings: Optional[Embeddings] = None,
                       method: str = _FOR_DOCUMENTS, symmetric: bool = True, weighting: str = "tf",
                       stopwords: StopWords = None, backend: str = "auto",
                       precision: str = "auto", **parameters) -> np.ndarray:
    """(len(X), len(Y)) distances between documents, float64, for estimators taking
    metric="precomputed"; Y=None: X against itself. A document with no known word has no
    distance: a ValueError names it."""
    if embeddings is None:
        raise ValueError("pairwise_distances needs embeddings (an lcrwmd.Embeddings)")
    rows = _samples(X)
    cols = rows if Y is None else _samples(Y)
    index = _quietly(Index.build, embeddings, cols, ids=[str(i) for i in range(len(cols))],
                     stopwords=stopwords, weighting=weighting, keep_text=False)
    if index.excluded:
        raise ValueError(f"documents with no known word have no distance: "
                         f"{'Y' if Y is not None else 'X'}[{index.excluded[0]}]"
                         f"{' and others' if len(index.excluded) > 1 else ''}")
    return index.pairwise(rows, method=method, symmetric=symmetric, backend=backend,
                          precision=precision, **parameters).astype(np.float64)


__all__: Sequence[str] = ["DocumentRetriever", "KNeighborsClassifier", "pairwise_distances"]
