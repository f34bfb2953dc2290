#pragma once
// What the Python binding (module.cpp) is made of: documents, embeddings and stop words from
// Python objects; an index with its embeddings and the searchers it has made; queries read as
// the index reads them; search, explain and pairwise with the GIL released while they compute.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/text.h"

namespace lcrwmd::python {

namespace py = pybind11;
using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;
using Int64Array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// Documents from Python: str (tokenized like the command line) or a sequence of str tokens
// (taken as they are).
std::vector<RawDocument> to_documents(const py::sequence& docs, const std::vector<std::string>& ids,
                                      const std::vector<std::string>& labels);

// An optional per-document list: empty where not given, else exactly n of them.
template <typename T>
std::vector<T> optional_list(const std::optional<std::vector<T>>& v, std::size_t n,
                             const char* what) {
  if (!v) return {};
  if (v->size() != n)
    throw py::value_error(std::string(what) + ": " + std::to_string(v->size()) + " given for " +
                          std::to_string(n) + " documents");
  return *v;
}

std::shared_ptr<Embeddings> make_embeddings(std::vector<std::string> words, FloatArray vectors);
std::vector<std::string> words_of(const Embeddings& e);
py::array_t<float> vectors_of(const Embeddings& e);
StopWords to_stopwords(const std::optional<std::vector<std::string>>& words);
// The vectors a build of `docs` takes from `source`: a table as it is, a model's for the
// documents' words (seen or not).
std::shared_ptr<const Embeddings> vectors_for(const std::shared_ptr<const WordVectors>& source,
                                              const std::vector<RawDocument>& docs);

// The searchers an Index has made, one per backend and precision, kept while the Index lives: a
// GPU's resident set is uploaded by the first search only.
struct Searchers {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const Searcher>> by_backend;  // "backend/precision"
};

// An index and the embeddings it was built from (for query words it lacks, as the command
// line's --embeddings); queries are read with the index's own stop words.
struct PyIndex {
  std::shared_ptr<const Index> index;
  std::shared_ptr<const WordVectors> embeddings;  // may be null (a loaded index)
  std::vector<std::string> excluded;              // documents left with no known word at build
  // After `index`: destroyed first, since the searchers refer to it.
  std::shared_ptr<Searchers> searchers = std::make_shared<Searchers>();

  // The searcher of `backend` for searches like `o` (an error first where that backend cannot
  // run them), its CPU phase 1 at `precision`.
  std::shared_ptr<const Searcher> searcher(const std::string& backend, const SearchOptions& o,
                                           const std::string& precision) const;
};

// Index.to_gpu(): a resident GPU searcher and the index it answers for.
struct PyGpuSearcher {
  PyIndex index;
  std::shared_ptr<const GpuIndex> gpu;
};

// Query documents as a QuerySet; rows[j] is the QuerySet row of input query j, or -1 where it
// was left with no known word (keep_term_only, for a lexical method: and no term).
struct Queries {
  QuerySet set;
  std::vector<std::int64_t> rows;
  std::vector<std::string> excluded;
};
// Queries read from Python documents by `make` (an index's or a collection's reading), each
// document's row among them (-1: excluded, no known word), a warning for dropped tokens.
using MakeQueries =
    std::function<QuerySet(const std::vector<RawDocument>&, const QueryOptions&, TextReport&)>;
Queries read_queries(const MakeQueries& make, const py::sequence& docs,
                     const std::optional<std::vector<std::string>>& labels, QueryWeights weights,
                     bool keep_term_only, const WordVectors* embeddings);
Queries to_queries(const PyIndex& p, const py::sequence& docs,
                   const std::optional<std::vector<std::string>>& labels,
                   QueryWeights weights = QueryWeights::index, bool keep_term_only = false);

// Python's k is any int: below 1, the library's error (lcrwmd.Error), not pybind11's TypeError.
std::size_t to_k(std::int64_t k);
// direction: "symmetric" | "document-to-query" | "query-to-document" ("": the method's own);
// parameters: the method's, by name (the keyword arguments Python's wrappers take, each a
// number; lcrwmd.methods() lists them): checked by the library, which names the one at fault.
SearchOptions make_options(const std::string& method, const std::string& direction,
                           std::size_t batch, bool prune, const py::dict& parameters);
// The native functions' method where none is named (the Python wrappers name one each time).
inline const char* documents_method() { return default_method(QueryKind::document).name(); }
// A parameter's description as lcrwmd.methods() gives it.
py::dict parameter_dict(const Parameter& p);
// The direction the older keyword symmetric=True/False names.
inline const char* direction_of(bool symmetric) {
  return symmetric ? "symmetric" : "document-to-query";
}

// (distances, indices, excluded query ids): numpy (n_queries, k), inf / -1 past the results.
// query_weights: "auto" | "index" | "idf" (parse_query_weights, for o's direction).
py::tuple search_with(const PyIndex& p, const Searcher& searcher, const py::sequence& queries,
                      std::size_t k, const SearchOptions& o, const std::string& query_weights);
// The same for queries already read.
py::tuple search_queries(const Searcher& searcher, const Queries& q, std::size_t k,
                         const SearchOptions& o);
// Index.explain: one query document against one indexed document (by position).
py::dict explain_with(const PyIndex& p, const py::object& query, std::size_t doc,
                      const SearchOptions& o, const std::string& query_weights);
py::array_t<float> pairwise_with(const PyIndex& p, const Searcher& searcher,
                                 const py::sequence& queries, const SearchOptions& o,
                                 const std::string& query_weights);

// Weights as CSR over the embeddings' words (scipy's arrays): only the words used are kept,
// each row is L1-normalised in double.
PyIndex from_csr(std::shared_ptr<const Embeddings> emb, Int64Array indptr, Int64Array indices,
                 FloatArray data, std::size_t n_cols, std::optional<std::vector<std::string>> ids,
                 std::optional<std::vector<std::string>> labels);

}  // namespace lcrwmd::python
