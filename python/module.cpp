// _lcrwmd: the Python binding (pybind11), kept thin: conversions at the edge, the engine's own
// objects inside, the GIL released while it computes. python/lcrwmd/__init__.py adds the
// Pythonic conveniences (gensim, scipy) on top.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"
#include "lcrwmd/eval.h"
#include "lcrwmd/explain.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/index.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/text.h"

namespace py = pybind11;
using namespace lcrwmd;

namespace {

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

// Documents from Python: str (tokenized like the command line) or a sequence of str tokens
// (taken as they are).
std::vector<RawDocument> to_documents(const py::sequence& docs, const std::vector<std::string>& ids,
                                      const std::vector<std::string>& labels) {
  std::vector<RawDocument> out(docs.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const py::handle d = docs[i];
    RawDocument& r = out[i];
    if (py::isinstance<py::str>(d)) {
      r.text = d.cast<std::string>();
    } else if (py::isinstance<py::sequence>(d)) {
      r.pretokenized = true;
      r.tokens = d.cast<std::vector<std::string>>();
    } else {
      throw py::type_error("document " + std::to_string(i) +
                           ": expected a str or a list of str tokens, got " +
                           std::string(py::str(d.get_type())));
    }
    r.id = ids.empty() ? std::to_string(i) : ids[i];
    r.label = labels.empty() ? std::string() : labels[i];
    r.line = i + 1;
  }
  return out;
}

template <typename T>
std::vector<T> optional_list(const std::optional<std::vector<T>>& v, std::size_t n,
                             const char* what) {
  if (!v) return {};
  if (v->size() != n)
    throw py::value_error(std::string(what) + ": " + std::to_string(v->size()) + " given for " +
                          std::to_string(n) + " documents");
  return *v;
}

std::shared_ptr<Embeddings> make_embeddings(std::vector<std::string> words, FloatArray vectors) {
  if (vectors.ndim() != 2 || static_cast<std::size_t>(vectors.shape(0)) != words.size())
    throw py::value_error("vectors must be a (len(words), dim) array");
  const std::size_t dim = static_cast<std::size_t>(vectors.shape(1));
  std::vector<float> v(vectors.data(), vectors.data() + words.size() * dim);
  py::gil_scoped_release release;
  return std::make_shared<Embeddings>(std::move(words), std::move(v), dim);
}

std::vector<std::string> words_of(const Embeddings& e) {
  std::vector<std::string> w(e.size());
  for (std::size_t i = 0; i < e.size(); ++i) w[i] = e.word(i);
  return w;
}

py::array_t<float> vectors_of(const Embeddings& e) {
  py::array_t<float> out({static_cast<py::ssize_t>(e.size()), static_cast<py::ssize_t>(e.dim())});
  if (e.size() > 0)
    std::memcpy(out.mutable_data(), e.vector(0), e.size() * e.dim() * sizeof(float));
  return out;
}

StopWords to_stopwords(const std::optional<std::vector<std::string>>& words) {
  StopWords s;
  if (words)
    for (const std::string& w : *words) s.add(w);
  return s;
}

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
  std::shared_ptr<const Embeddings> embeddings;  // may be null (a loaded index)
  std::vector<std::string> excluded;             // documents left with no known word at build
  // After `index`: destroyed first, since the searchers refer to it.
  std::shared_ptr<Searchers> searchers = std::make_shared<Searchers>();

  // The searcher of `backend` for `method` (an error first where that backend cannot run it),
  // its CPU phase 1 at `precision`.
  std::shared_ptr<const Searcher> searcher(const std::string& backend, const std::string& method,
                                           const std::string& precision) const {
    SearcherOptions o;
    o.backend = parse_backend(backend);
    resolve_backend(o.backend, parse_method(method));
    o.cpu.precision = resolve_precision(parse_precision(precision));
    std::lock_guard lock(searchers->mutex);
    auto& s = searchers->by_backend[backend + "/" + to_string(o.cpu.precision)];
    if (!s) s = make_searcher(*index, o);
    return s;
  }
};

// Index.to_gpu(): a resident GPU searcher and the index it answers for.
struct PyGpuSearcher {
  PyIndex index;
  std::shared_ptr<const GpuIndex> gpu;
};

// Query documents as a QuerySet; rows[j] is the QuerySet row of input query j, or -1 where it
// was left with no known word.
struct Queries {
  QuerySet set;
  std::vector<std::int64_t> rows;
  std::vector<std::string> excluded;
};

Queries to_queries(const PyIndex& p, const py::sequence& docs,
                   const std::optional<std::vector<std::string>>& labels) {
  const std::vector<RawDocument> raw =
      to_documents(docs, {}, optional_list(labels, docs.size(), "labels"));
  Queries q;
  QueryOptions opt;
  opt.embeddings = p.embeddings.get();
  TextReport report;
  {
    py::gil_scoped_release release;
    q.set = make_query_set(*p.index, raw, opt, &report);
  }
  q.excluded = report.empty_documents;
  if (report.not_in_index_tokens > 0) {
    const std::string msg =
        std::to_string(report.not_in_index_tokens) + " query tokens (" +
        std::to_string(report.not_in_index_distinct) +
        " distinct words) are not in the index and were dropped: load it with the embeddings "
        "it was built from (Index.load(path, embeddings=...)) to look them up";
    if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) != 0) throw py::error_already_set();
  }
  q.rows.assign(raw.size(), -1);
  for (std::size_t r = 0; r < q.set.size(); ++r)
    q.rows[std::stoul(q.set.ids[r])] = static_cast<std::int64_t>(r);
  return q;
}

// Python's k is any int: below 1, the library's error (lcrwmd.Error), not pybind11's TypeError.
std::size_t to_k(std::int64_t k) {
  if (k < 1) check_k(0);
  return static_cast<std::size_t>(k);
}

SearchOptions make_options(const std::string& method, bool symmetric, std::size_t batch, bool prune,
                           std::size_t act_steps = 1) {
  SearchOptions o;
  o.method = parse_method(method);
  o.symmetric = symmetric;
  o.batch = batch;
  o.prune = prune;
  o.act_steps = act_steps;
  return o;
}

py::tuple search_with(const PyIndex& p, const Searcher& searcher, const py::sequence& queries,
                      std::size_t k, const std::string& method, bool symmetric, std::size_t batch,
                      bool prune, std::size_t act_steps = 1) {
  const SearchOptions o = make_options(method, symmetric, batch, prune, act_steps);
  const Queries q = to_queries(p, queries, std::nullopt);
  SearchResults r;
  {
    py::gil_scoped_release release;
    r = searcher.search(q.set, k, o);
  }
  const auto nq = static_cast<py::ssize_t>(q.rows.size()), kk = static_cast<py::ssize_t>(k);
  py::array_t<float> distances({nq, kk});
  py::array_t<std::int64_t> indices({nq, kk});
  auto d = distances.mutable_unchecked<2>();
  auto ix = indices.mutable_unchecked<2>();
  for (py::ssize_t j = 0; j < nq; ++j) {
    const std::int64_t row = q.rows[static_cast<std::size_t>(j)];
    for (py::ssize_t t = 0; t < kk; ++t) {
      const bool have = row >= 0 && static_cast<std::size_t>(t) < r.k;
      const std::size_t at =
          have ? static_cast<std::size_t>(row) * r.k + static_cast<std::size_t>(t) : 0;
      d(j, t) = have ? r.distances[at] : std::numeric_limits<float>::infinity();
      ix(j, t) = have ? r.indices[at] : -1;
    }
  }
  return py::make_tuple(distances, indices, q.excluded);
}

py::dict flows_dict(const std::vector<WordFlow>& flows) {
  py::list query_word, doc_word, mass, cost;
  for (const WordFlow& f : flows) {
    query_word.append(f.query_word);
    doc_word.append(f.doc_word);
    mass.append(f.mass);
    cost.append(f.cost);
  }
  py::dict d;
  d["query_word"] = query_word;
  d["doc_word"] = doc_word;
  d["mass"] = mass;
  d["cost"] = cost;
  return d;
}

// Index.explain: one query document against one indexed document (by position).
py::dict explain_with(const PyIndex& p, const py::object& query, std::size_t doc,
                      const std::string& method, bool symmetric, std::size_t act_steps) {
  py::list one;
  one.append(query);
  const Queries q = to_queries(p, one, std::nullopt);
  if (q.set.size() == 0)
    throw Error("explain: the query has no word known to the index or its embeddings");
  Explanation e;
  {
    py::gil_scoped_release release;
    e = explain(*p.index, q.set, 0, doc, parse_method(method), symmetric, act_steps);
  }
  py::dict d;
  d["doc"] = e.doc;
  d["method"] = std::string(to_string(e.method));
  d["symmetric"] = e.symmetric;
  d["distance"] = e.distance;
  d["flows"] = flows_dict(e.flows);
  if (e.method != Method::wmd) {
    d["doc_to_query"] = flows_dict(e.doc_to_query);
    d["query_to_doc"] = flows_dict(e.query_to_doc);
    d["doc_to_query_distance"] = e.doc_to_query_distance;
    d["query_to_doc_distance"] = e.query_to_doc_distance;
    d["doc_to_query_set_distance"] = e.doc_to_query_set_distance;
  }
  return d;
}

py::array_t<float> pairwise_with(const PyIndex& p, const Searcher& searcher,
                                 const py::sequence& queries, const std::string& method,
                                 bool symmetric, std::size_t batch, std::size_t act_steps = 1) {
  const SearchOptions o = make_options(method, symmetric, batch, true, act_steps);
  const Queries q = to_queries(p, queries, std::nullopt);
  if (!q.excluded.empty())
    throw py::value_error("query " + q.excluded.front() +
                          " has no word known to the index or its embeddings");
  const std::size_t n = p.index->n_docs();
  py::array_t<float> out({static_cast<py::ssize_t>(q.set.size()), static_cast<py::ssize_t>(n)});
  float* dst = out.mutable_data();
  {
    py::gil_scoped_release release;
    searcher.pairwise(q.set, o, [&](std::size_t first, std::size_t rows, const float* d) {
      std::copy(d, d + rows * n, dst + first * n);
    });
  }
  return out;
}

// Weights as CSR over the embeddings' words (scipy's arrays): only the words used are kept,
// each row is L1-normalised in double.
PyIndex from_csr(std::shared_ptr<const Embeddings> emb,
                 py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> indptr,
                 py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> indices,
                 FloatArray data, std::size_t n_cols, std::optional<std::vector<std::string>> ids,
                 std::optional<std::vector<std::string>> labels) {
  if (n_cols != emb->size())
    throw py::value_error("the matrix has " + std::to_string(n_cols) + " columns, the embeddings " +
                          std::to_string(emb->size()) + " words");
  const auto ip = indptr.unchecked<1>();
  const auto ix = indices.unchecked<1>();
  const auto vx = data.unchecked<1>();
  if (indptr.size() < 1 || ip(0) != 0 || ip(indptr.size() - 1) != ix.shape(0))
    throw py::value_error("not a CSR matrix: indptr must run from 0 to len(indices)");
  const std::size_t n = static_cast<std::size_t>(indptr.size()) - 1;
  IndexData d;
  d.dim = emb->dim();
  d.ids = optional_list(ids, n, "ids");
  d.labels = optional_list(labels, n, "labels");
  if (d.ids.empty())
    for (std::size_t i = 0; i < n; ++i) d.ids.push_back(std::to_string(i));
  if (d.labels.empty()) d.labels.assign(n, "");
  std::vector<std::int64_t> compact(emb->size(), -1);
  for (py::ssize_t p = 0; p < ix.shape(0); ++p) {
    const std::int64_t c = ix(p);
    if (c < 0 || static_cast<std::size_t>(c) >= emb->size())
      throw py::value_error("column " + std::to_string(c) + " out of range");
    if (compact[static_cast<std::size_t>(c)] < 0) compact[static_cast<std::size_t>(c)] = 0;
  }
  for (std::size_t c = 0; c < emb->size(); ++c)
    if (compact[c] >= 0) {
      compact[c] = static_cast<std::int64_t>(d.vocab.size());
      d.vocab.push_back(emb->word(c));
      d.vectors.insert(d.vectors.end(), emb->vector(c), emb->vector(c) + emb->dim());
    }
  d.doc_freq.assign(d.vocab.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::pair<std::uint32_t, double>> row;
    double total = 0;
    for (std::int64_t p = ip(i); p < ip(i + 1); ++p) {
      const double w = vx(p);
      if (!(w >= 0) || !std::isfinite(w))
        throw py::value_error("document " + std::to_string(i) + ": negative or non-finite weight");
      if (w == 0) continue;
      row.emplace_back(static_cast<std::uint32_t>(compact[static_cast<std::size_t>(ix(p))]), w);
      total += w;
    }
    if (row.empty()) throw py::value_error("document " + std::to_string(i) + " has no weight");
    std::sort(row.begin(), row.end());
    for (std::size_t t = 0; t < row.size(); ++t) {
      if (t > 0 && row[t].first == row[t - 1].first)
        throw py::value_error("document " + std::to_string(i) + ": column listed twice");
      d.indices.push_back(row[t].first);
      d.values.push_back(static_cast<float>(row[t].second / total));
      ++d.doc_freq[row[t].first];
    }
    d.indptr.push_back(d.indices.size());
  }
  PyIndex out;
  out.index = std::make_shared<const Index>(Index::from_data(d));
  out.embeddings = std::move(emb);
  return out;
}

}  // namespace

PYBIND11_MODULE(_lcrwmd, m) {
  m.doc() = "lcrwmd: nearest documents by the Word Mover's Distance and its relaxations";
  py::register_exception<Error>(m, "Error", PyExc_ValueError);

  py::class_<Embeddings, std::shared_ptr<Embeddings>>(
      m, "Embeddings",
      "Word vectors: Embeddings.load(path), Embeddings(words, vectors), or "
      "Embeddings.from_gensim(keyed_vectors). `emb[word]` is a word's vector, `word in emb` "
      "tests for one.")
      .def(py::init(&make_embeddings), py::arg("words"), py::arg("vectors"),
           "Embeddings of `words` from a (len(words), dim) float array (copied).")
      .def_static(
          "load",
          [](const std::string& path) {
            py::gil_scoped_release release;
            return std::make_shared<Embeddings>(Embeddings::load(path));
          },
          py::arg("path"),
          "Reads a word2vec binary or text file, GloVe or fastText .vec (the format is "
          "detected); raises lcrwmd.Error naming the file and line of a damaged entry.")
      .def_property_readonly("dim", &Embeddings::dim, "Dimension of the vectors.")
      .def("__len__", &Embeddings::size, "Number of words.")
      .def(py::pickle(
          [](const Embeddings& e) { return py::make_tuple(words_of(e), vectors_of(e)); },
          [](const py::tuple& t) {
            if (t.size() != 2) throw py::value_error("not a pickled lcrwmd.Embeddings");
            return make_embeddings(t[0].cast<std::vector<std::string>>(), t[1].cast<FloatArray>());
          }))
      .def("__contains__",
           [](const Embeddings& e, const std::string& w) { return e.find(w).has_value(); })
      .def("__getitem__",
           [](const Embeddings& e, const std::string& w) {
             const auto i = e.find(w);
             if (!i) throw py::key_error(w);
             return py::array_t<float>(static_cast<py::ssize_t>(e.dim()), e.vector(*i));
           })
      .def_property_readonly("words", &words_of, "The words, in the order of their vectors.")
      .def_property_readonly("vectors", &vectors_of,
                             "The vectors, a (len(emb), dim) float32 array (a copy).");

  py::class_<PyIndex>(m, "Index")
      .def_static(
          "build",
          [](std::shared_ptr<const Embeddings> emb, const py::sequence& docs,
             std::optional<std::vector<std::string>> ids,
             std::optional<std::vector<std::string>> labels,
             std::optional<std::vector<std::string>> stopwords, const std::string& weighting,
             bool keep_text) {
            const std::vector<RawDocument> raw =
                to_documents(docs, optional_list(ids, docs.size(), "ids"),
                             optional_list(labels, docs.size(), "labels"));
            PyIndex p;
            const StopWords stop = to_stopwords(stopwords);
            BuildOptions bo;
            bo.stopwords = &stop;
            bo.weighting = parse_weighting(weighting);
            bo.keep_text = keep_text;
            TextReport report;
            {
              py::gil_scoped_release release;
              p.index = std::make_shared<const Index>(
                  Index::from_data(build_index_data(*emb, raw, bo, &report)));
            }
            p.excluded = report.empty_documents;
            p.embeddings = std::move(emb);
            return p;
          },
          py::arg("embeddings"), py::arg("docs"), py::arg("ids") = py::none(),
          py::arg("labels") = py::none(), py::arg("stopwords") = py::none(),
          py::arg("weighting") = "tf", py::arg("keep_text") = true)
      .def_static("from_csr", &from_csr, py::arg("embeddings"), py::arg("indptr"),
                  py::arg("indices"), py::arg("data"), py::arg("n_cols"),
                  py::arg("ids") = py::none(), py::arg("labels") = py::none())
      .def_static(
          "load",
          [](const std::string& path, std::shared_ptr<const Embeddings> emb,
             std::optional<std::vector<std::string>> stopwords) {
            PyIndex p;
            {
              py::gil_scoped_release release;
              p.index = std::make_shared<const Index>(Index::load(path));
              if (emb) check_embeddings(*p.index, *emb);
            }
            if (stopwords) check_stopwords(*p.index, to_stopwords(stopwords), "stopwords");
            p.embeddings = std::move(emb);
            return p;
          },
          py::arg("path"), py::arg("embeddings") = py::none(), py::arg("stopwords") = py::none())
      .def(
          "save",
          [](const PyIndex& p, const std::string& path) {
            py::gil_scoped_release release;
            Index::save(p.index->data(), path);
          },
          py::arg("path"))
      .def(
          "search",
          [](const PyIndex& p, const py::sequence& queries, std::int64_t k,
             const std::string& method, bool symmetric, const std::string& backend,
             std::size_t batch, bool prune, std::size_t act_steps, const std::string& precision) {
            return search_with(p, *p.searcher(backend, method, precision), queries, to_k(k), method,
                               symmetric, batch, prune, act_steps);
          },
          py::arg("queries"), py::arg("k") = 10, py::arg("method") = "lc-rwmd",
          py::arg("symmetric") = true, py::arg("backend") = "auto", py::arg("batch") = 0,
          py::arg("prune") = true, py::arg("act_steps") = 1, py::arg("precision") = "auto")
      .def(
          "explain",
          [](const PyIndex& p, const py::object& query, std::size_t doc, const std::string& method,
             bool symmetric, std::size_t act_steps) {
            return explain_with(p, query, doc, method, symmetric, act_steps);
          },
          py::arg("query"), py::arg("doc"), py::arg("method") = "wmd", py::arg("symmetric") = true,
          py::arg("act_steps") = 1)
      .def(
          "pairwise",
          [](const PyIndex& p, const py::sequence& queries, const std::string& method,
             bool symmetric, const std::string& backend, std::size_t batch, std::size_t act_steps,
             const std::string& precision) {
            return pairwise_with(p, *p.searcher(backend, method, precision), queries, method,
                                 symmetric, batch, act_steps);
          },
          py::arg("queries"), py::arg("method") = "lc-rwmd", py::arg("symmetric") = true,
          py::arg("backend") = "auto", py::arg("batch") = 0, py::arg("act_steps") = 1,
          py::arg("precision") = "auto")
      .def(
          "to_gpu",
          [](const PyIndex& p, int device, std::size_t memory_mib, bool tf32) {
            GpuOptions o;
            o.device = device;
            o.memory_budget = memory_mib << 20;
            o.allow_tf32 = tf32;
            PyGpuSearcher s{p, nullptr};
            py::gil_scoped_release release;
            s.gpu = std::make_shared<const GpuIndex>(*p.index, o);
            return s;
          },
          py::arg("device") = 0, py::arg("memory_mib") = 0, py::arg("tf32") = false)
      .def(
          "eval_knn",
          [](const PyIndex& p, const py::sequence& queries, std::vector<std::string> labels,
             std::vector<std::size_t> ks, const std::string& method, bool symmetric,
             const std::string& backend, std::size_t act_steps, const std::string& precision) {
            if (ks.empty()) throw py::value_error("ks: give at least one k");
            const SearchOptions o = make_options(method, symmetric, 0, true, act_steps);
            const Queries q = to_queries(p, queries, labels);
            const std::shared_ptr<const Searcher> searcher = p.searcher(backend, method, precision);
            KnnReport rep;
            {
              py::gil_scoped_release release;
              const SearchResults r =
                  searcher->search(q.set, *std::max_element(ks.begin(), ks.end()), o);
              rep = knn_error(r, *p.index, q.set, ks);
            }
            py::dict errors;
            for (std::size_t i = 0; i < rep.ks.size(); ++i)
              errors[py::int_(rep.ks[i])] = rep.errors[i];
            py::dict out;
            out["errors"] = errors;
            out["best_k"] = rep.best_k;
            out["best_error"] = rep.best_error;
            out["n_queries"] = q.set.size();
            out["excluded_queries"] = q.excluded;
            return out;
          },
          py::arg("queries"), py::arg("labels"), py::arg("ks"), py::arg("method") = "lc-rwmd",
          py::arg("symmetric") = true, py::arg("backend") = "auto", py::arg("act_steps") = 1,
          py::arg("precision") = "auto")
      .def(
          "with_embeddings",
          [](const PyIndex& p, std::shared_ptr<const Embeddings> emb) {
            check_embeddings(*p.index, *emb);
            PyIndex q = p;  // the same index and searchers
            q.embeddings = std::move(emb);
            return q;
          },
          py::arg("embeddings"))
      .def(py::pickle(
          [](const PyIndex& p) {
            return py::make_tuple(py::bytes(p.index->to_bytes()), p.embeddings, p.excluded);
          },
          [](const py::tuple& t) {
            if (t.size() != 3) throw py::value_error("not a pickled lcrwmd.Index");
            PyIndex p;
            p.index = std::make_shared<const Index>(Index::from_bytes(t[0].cast<std::string>()));
            p.embeddings = t[1].cast<std::shared_ptr<const Embeddings>>();
            p.excluded = t[2].cast<std::vector<std::string>>();
            return p;
          }))
      .def("__len__", [](const PyIndex& p) { return p.index->n_docs(); })
      .def_property_readonly("n_docs", [](const PyIndex& p) { return p.index->n_docs(); })
      .def_property_readonly("vocab_size", [](const PyIndex& p) { return p.index->vocab_size(); })
      .def_property_readonly("dim", [](const PyIndex& p) { return p.index->dim(); })
      .def_property_readonly("excluded", [](const PyIndex& p) { return p.excluded; })
      .def_property_readonly("ids",
                             [](const PyIndex& p) {
                               std::vector<std::string> v;
                               for (std::size_t i = 0; i < p.index->n_docs(); ++i)
                                 v.emplace_back(p.index->doc_id(i));
                               return v;
                             })
      .def_property_readonly("labels",
                             [](const PyIndex& p) {
                               std::vector<std::string> v;
                               for (std::size_t i = 0; i < p.index->n_docs(); ++i)
                                 v.emplace_back(p.index->label(i));
                               return v;
                             })
      .def_property_readonly("stopwords",
                             [](const PyIndex& p) { return p.index->stopwords().sorted(); })
      .def_property_readonly("has_text", [](const PyIndex& p) { return p.index->has_text(); })
      .def(
          "text", [](const PyIndex& p, std::size_t i) { return p.index->text(i); }, py::arg("i"));

  py::class_<PyGpuSearcher>(m, "GpuSearcher")
      .def(
          "search",
          [](const PyGpuSearcher& s, const py::sequence& queries, std::int64_t k,
             const std::string& method, bool symmetric, std::size_t batch, bool prune) {
            return search_with(s.index, *s.gpu, queries, to_k(k), method, symmetric, batch, prune);
          },
          py::arg("queries"), py::arg("k") = 10, py::arg("method") = "lc-rwmd",
          py::arg("symmetric") = true, py::arg("batch") = 0, py::arg("prune") = true)
      .def(
          "pairwise",
          [](const PyGpuSearcher& s, const py::sequence& queries, const std::string& method,
             bool symmetric, std::size_t batch) {
            return pairwise_with(s.index, *s.gpu, queries, method, symmetric, batch);
          },
          py::arg("queries"), py::arg("method") = "lc-rwmd", py::arg("symmetric") = true,
          py::arg("batch") = 0)
      .def_property_readonly("uploads", [](const PyGpuSearcher& s) { return s.gpu->uploads(); })
      .def_property_readonly("device", [](const PyGpuSearcher& s) { return s.gpu->device().name; })
      .def_property_readonly("resident_bytes",
                             [](const PyGpuSearcher& s) { return s.gpu->resident_bytes(); });

  m.def(
      "tokenize", [](const std::string& text) { return tokenize(text); }, py::arg("text"),
      "The tokenizer every index and query uses (lowercased runs of letters, digits, "
      "apostrophes and non-ASCII bytes)");
  m.def("set_threads", &set_threads, py::arg("n"),
        "Threads of the CPU backend (OpenMP and OpenBLAS); n <= 0 leaves them as they are.");
  m.def(
      "cuda_devices",
      [] {
        std::vector<std::string> names;
        for (const GpuDevice& d : gpu_devices()) names.push_back(d.name);
        return names;
      },
      "Names of the CUDA devices this build can use (empty without CUDA or a GPU).");
  m.def(
      "methods",
      [] {
        py::list out;
        for (const MethodInfo& i : lcrwmd::methods()) {
          py::dict d;
          d["name"] = i.name;
          d["summary"] = i.summary;
          d["one_sided"] = i.one_sided;
          d["bounded"] = i.bounded;
          d["reads_act_steps"] = i.reads_act_steps;
          d["runs_on_gpu"] = i.runs_on_gpu;
          d["explains"] = i.explains;
          out.append(d);
        }
        return out;
      },
      "Every method as the engine describes it, in order: a dict each with its name, a "
      "one-line summary, and whether it has a one-sided form, prunes its top-k by bounds, reads "
      "act_steps, runs on the GPU and can be explained.");
  m.def("cpu_simd_level", &cpu_simd_level,
        "The SIMD level of the CPU kernels here: 'scalar', 'avx2' or 'avx512'.");
  m.def(
      "cpu_precision",
      [](const std::string& precision) { return describe_precision(parse_precision(precision)); },
      py::arg("precision") = "auto",
      "What the CPU's phase 1 runs `precision` as here, e.g. 'int8 (brg:avx512_core_amx_int8)' "
      "('auto': the fastest this CPU has); lcrwmd.Error where the CPU lacks it.");
}
