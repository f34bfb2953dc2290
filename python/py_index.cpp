// The Python binding's pieces (py_index.h).
#include "python/py_index.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "lcrwmd/error.h"
#include "lcrwmd/explain.h"

namespace lcrwmd::python {

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

std::shared_ptr<Embeddings> make_embeddings(std::vector<std::string> words, FloatArray vectors) {
  if (vectors.ndim() != 2 || static_cast<std::size_t>(vectors.shape(0)) != words.size())
    throw py::value_error("vectors must be a (len(words), dim) array");
  const std::size_t dim = static_cast<std::size_t>(vectors.shape(1));
  std::vector<float> v(vectors.data(), vectors.data() + words.size() * dim);
  py::gil_scoped_release release;
  return std::make_shared<Embeddings>(std::move(words), std::move(v), dim);
}

std::shared_ptr<const Embeddings> vectors_for(const std::shared_ptr<const WordVectors>& source,
                                              const std::vector<RawDocument>& docs) {
  if (auto table = std::dynamic_pointer_cast<const Embeddings>(source)) return table;
  return std::make_shared<const Embeddings>(select_vectors(*source, distinct_tokens(docs)));
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

std::shared_ptr<const Searcher> PyIndex::searcher(const std::string& backend,
                                                  const SearchOptions& search,
                                                  const std::string& precision) const {
  SearcherOptions o;
  o.backend = parse_backend(backend);
  resolve_backend(o.backend, search);
  o.cpu.precision = parse_precision(precision);  // as asked: make_searcher checks it
  const Precision runs_at = resolve_precision(o.cpu.precision);
  std::lock_guard lock(searchers->mutex);
  auto& s = searchers->by_backend[backend + "/" + to_string(runs_at)];
  if (!s) s = make_searcher(*index, o);
  return s;
}

Queries read_queries(const MakeQueries& make, const py::sequence& docs,
                     const std::optional<std::vector<std::string>>& labels, QueryWeights weights,
                     bool keep_term_only, const WordVectors* embeddings) {
  const std::vector<RawDocument> raw =
      to_documents(docs, {}, optional_list(labels, docs.size(), "labels"));
  Queries q;
  QueryOptions opt;
  opt.embeddings = embeddings;
  opt.weights = weights;
  opt.keep_term_only = keep_term_only;
  TextReport report;
  {
    py::gil_scoped_release release;
    q.set = make(raw, opt, report);
  }
  q.excluded = report.empty_documents;
  if (report.not_in_index_tokens > 0) {
    const std::string msg =
        std::to_string(report.not_in_index_tokens) + " query tokens (" +
        std::to_string(report.not_in_index_distinct) +
        " distinct words) are not in the index and were dropped: load it with the embeddings "
        "it was built from (embeddings=...) to look them up";
    if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) != 0) throw py::error_already_set();
  }
  q.rows.assign(raw.size(), -1);
  for (std::size_t r = 0; r < q.set.size(); ++r)
    q.rows[std::stoul(q.set.ids[r])] = static_cast<std::int64_t>(r);
  return q;
}

Queries to_queries(const PyIndex& p, const py::sequence& docs,
                   const std::optional<std::vector<std::string>>& labels, QueryWeights weights,
                   bool keep_term_only) {
  return read_queries(
      [&p](const std::vector<RawDocument>& raw, const QueryOptions& o, TextReport& report) {
        return make_query_set(*p.index, raw, o, &report);
      },
      docs, labels, weights, keep_term_only, p.embeddings.get());
}

std::size_t to_k(std::int64_t k) {
  if (k < 1) check_k(0);
  return static_cast<std::size_t>(k);
}

SearchOptions make_options(const std::string& method, const std::string& direction,
                           std::size_t batch, bool prune, const py::dict& parameters) {
  SearchOptions o;
  o.method = Method(method);
  // "": the method's own (symmetric where it has it)
  o.direction = resolve_direction(
      o.method.info(), direction.empty() ? std::nullopt : std::optional(parse_direction(direction)),
      false);
  o.batch = batch;
  o.prune = prune;
  ParameterValues given;
  for (const auto& [key, value] : parameters) {
    const auto name = key.cast<std::string>();
    // A bool is an int to Python; no parameter is one.
    if (py::isinstance<py::bool_>(value) ||
        !(py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)))
      throw py::type_error(name + ": expected a number, got " +
                           py::str(py::type::of(value).attr("__name__")).cast<std::string>());
    given.set(name, value.cast<double>());
  }
  o.parameters = method_parameters(o.method, given);
  check_options(o);
  return o;
}

py::dict parameter_dict(const Parameter& p) {
  const bool integer = p.kind == Parameter::Kind::integer;
  const auto number = [&](double v) -> py::object {
    if (integer) return py::int_(static_cast<long long>(v));
    return py::float_(v);
  };
  py::dict d;
  d["name"] = p.name;
  d["flag"] = flag(p);
  d["type"] = integer ? "integer" : "number";
  d["default"] = number(p.default_value);
  d["min"] = number(p.min);
  d["max"] = std::isfinite(p.max) ? number(p.max) : py::object(py::none());
  d["help"] = p.help;
  return d;
}

py::tuple search_with(const PyIndex& p, const Searcher& searcher, const py::sequence& queries,
                      std::size_t k, const SearchOptions& o, const std::string& query_weights) {
  const Queries q = to_queries(p, queries, std::nullopt,
                               parse_query_weights(query_weights, o.direction), !o.method->vectors);
  return search_queries(searcher, q, k, o);
}

py::tuple search_queries(const Searcher& searcher, const Queries& q, std::size_t k,
                         const SearchOptions& o) {
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

namespace {

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

}  // namespace

py::dict explain_with(const PyIndex& p, const py::object& query, std::size_t doc,
                      const SearchOptions& o, const std::string& query_weights) {
  py::list one;
  one.append(query);
  const Queries q =
      to_queries(p, one, std::nullopt, parse_query_weights(query_weights, o.direction));
  if (q.set.size() == 0)
    throw Error("explain: the query has no word known to the index or its embeddings");
  Explanation e;
  {
    py::gil_scoped_release release;
    e = explain(*p.index, q.set, 0, doc, o.method, o.direction, o.parameters);
  }
  py::dict d;
  d["doc"] = e.doc;
  d["method"] = std::string(to_string(e.method));
  d["direction"] = std::string(to_string(e.direction));
  d["symmetric"] = e.direction == Direction::symmetric;
  d["distance"] = e.distance;
  d["flows"] = flows_dict(e.flows);
  if (e.sides) {
    d["doc_to_query"] = flows_dict(e.doc_to_query);
    d["query_to_doc"] = flows_dict(e.query_to_doc);
    d["doc_to_query_distance"] = e.doc_to_query_distance;
    d["query_to_doc_distance"] = e.query_to_doc_distance;
    d["doc_to_query_set_distance"] = e.doc_to_query_set_distance;
  }
  return d;
}

py::array_t<float> pairwise_with(const PyIndex& p, const Searcher& searcher,
                                 const py::sequence& queries, const SearchOptions& o,
                                 const std::string& query_weights) {
  const Queries q = to_queries(p, queries, std::nullopt,
                               parse_query_weights(query_weights, o.direction), !o.method->vectors);
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

PyIndex from_csr(std::shared_ptr<const Embeddings> emb, Int64Array indptr, Int64Array indices,
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
  // The columns used, as a build orders its vocabulary (vocabulary_before: by the rows that
  // weigh them, ties bytewise).
  std::vector<std::int64_t> compact(emb->size(), -1);
  std::vector<std::size_t> used;
  std::vector<std::uint32_t> df(emb->size(), 0);
  for (py::ssize_t p = 0; p < ix.shape(0); ++p) {
    const std::int64_t c = ix(p);
    if (c < 0 || static_cast<std::size_t>(c) >= emb->size())
      throw py::value_error("column " + std::to_string(c) + " out of range");
    if (compact[static_cast<std::size_t>(c)] < 0) {
      compact[static_cast<std::size_t>(c)] = 0;
      used.push_back(static_cast<std::size_t>(c));
    }
  }
  for (std::size_t i = 0; i < n; ++i) {  // a document's weight on a column counts it once
    std::vector<std::size_t> cols;
    for (std::int64_t p = ip(i); p < ip(i + 1); ++p)
      if (vx(p) != 0) cols.push_back(static_cast<std::size_t>(ix(p)));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (const std::size_t c : cols) ++df[c];
  }
  std::sort(used.begin(), used.end(), [&](std::size_t a, std::size_t b) {
    return vocabulary_before(df[a], emb->word(a), df[b], emb->word(b));
  });
  for (const std::size_t c : used) {
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

}  // namespace lcrwmd::python
