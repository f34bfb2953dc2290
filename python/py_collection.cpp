// lcrwmd.Collection's native side (docs/collections.md): a collection directory changed from
// Python, searched at its last commit (opened again when another process has committed).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lcrwmd/collection.h"
#include "lcrwmd/collection_reader.h"
#include "lcrwmd/segments.h"
#include "python/py_index.h"

namespace lcrwmd::python {
namespace {

class PyCollection {
 public:
  PyCollection(const std::string& path, std::shared_ptr<const WordVectors> embeddings)
      : embeddings_(std::move(embeddings)), reader_(open(path, embeddings_.get())) {}

  static void create(const std::string& path, const std::string& embeddings,
                     const py::sequence& docs, const std::optional<std::vector<std::string>>& ids,
                     const std::optional<std::vector<std::string>>& labels,
                     const std::optional<std::vector<std::string>>& stopwords, bool keep_text) {
    const std::vector<RawDocument> raw = to_documents(docs, optional_list(ids, docs.size(), "ids"),
                                                      optional_list(labels, docs.size(), "labels"));
    const StopWords stop = to_stopwords(stopwords);
    {
      py::gil_scoped_release release;
      const WordSet words = distinct_tokens(raw);
      const Embeddings emb = Embeddings::load(embeddings, &words);
      BuildOptions bo;
      bo.stopwords = &stop;
      bo.keep_text = keep_text;
      bo.unit_vectors = unit_vectors_by_default(emb, nullptr);
      Collection::create(path, build_index_data(emb, raw, bo), embeddings);
    }
  }

  py::dict add(const py::sequence& docs, const std::optional<std::vector<std::string>>& ids,
               const std::optional<std::vector<std::string>>& labels, double wait) {
    if (!ids) throw py::value_error("add: ids are needed (an id already held is replaced)");
    const std::vector<RawDocument> raw = to_documents(docs, optional_list(ids, docs.size(), "ids"),
                                                      optional_list(labels, docs.size(), "labels"));
    CollectionChange ch;
    py::dict d = change(wait, ch, [&](CollectionWriter& w) { return w.add(raw); });
    d["added"] = ch.added;
    d["replaced"] = ch.replaced;
    d["excluded"] = ch.report.empty_documents;
    return d;
  }

  py::dict remove(const std::vector<std::string>& ids, double wait) {
    CollectionChange ch;
    py::dict d = change(wait, ch, [&](CollectionWriter& w) { return w.remove(ids); });
    d["deleted"] = ch.deleted;
    d["not_found"] = ch.not_found;
    return d;
  }

  py::dict compact(double wait) {
    CollectionChange ch;
    return change(wait, ch, [](CollectionWriter& w) { return w.compact(); });
  }

  py::tuple search(const py::sequence& queries, std::int64_t k, const std::string& method,
                   const std::string& direction, const py::dict& parameters,
                   const std::string& query_weights, float max_distance) {
    SearchOptions o = make_options(method, direction, 0, true, parameters);
    o.max_distance = max_distance;
    check_options(o);
    std::shared_ptr<const DocumentSnapshot> s;
    {
      py::gil_scoped_release release;
      s = snapshot();
    }
    const Queries q = read_queries(
        [&s](const std::vector<RawDocument>& raw, const QueryOptions& qo, TextReport& report) {
          return s->documents().make_query_set(raw, qo, &report);
        },
        queries, std::nullopt, parse_query_weights(query_weights, o.direction), !o.method->vectors,
        embeddings_.get());
    return search_queries(s->searcher(), q, to_k(k), o);
  }

  std::vector<std::string> ids() {
    const std::shared_ptr<const DocumentSnapshot> s = snapshot();
    std::vector<std::string> out;
    for (std::size_t i = 0; i < s->documents().n_docs(); ++i)
      out.emplace_back(s->documents().doc_id(i));
    return out;
  }
  std::size_t size() { return snapshot()->documents().n_docs(); }
  std::uint64_t generation() { return snapshot()->generation(); }
  std::size_t segments() { return snapshot()->collection()->n_segments(); }
  std::size_t deleted() { return snapshot()->collection()->n_deleted(); }
  const std::string& path() const { return reader_->path(); }

 private:
  // The collection's reader: each commit's files checked as it opens them, its segments
  // against the vectors queries are read with (another process may have written them). An
  // Error for a path that is no collection.
  static std::unique_ptr<CollectionReader> open(const std::string& path,
                                                const WordVectors* embeddings) {
    py::gil_scoped_release release;
    if (!Collection::exists(path))
      throw Error(path + ": not a collection (no manifest): lcrwmd.Collection.create makes one");
    return std::make_unique<CollectionReader>(
        path,
        CollectionReaderOptions{
            .searcher = {}, .verify = true, .verify_refreshes = true, .query_vectors = embeddings});
  }

  // The last commit (opened again only after another commit, this process's or another's).
  std::shared_ptr<const DocumentSnapshot> snapshot() {
    reader_->refresh();
    return reader_->acquire();
  }

  // One change by this collection's writer (the GIL released meanwhile) into `ch`; what every
  // change reports. The writer is kept between changes (one at a time), so that a change reads
  // only what other writers committed since its last (CollectionWriter).
  template <typename Change>
  py::dict change(double wait, CollectionChange& ch, Change&& f) {
    {
      py::gil_scoped_release release;
      const std::lock_guard lock(writing_);
      if (!writer_ || writer_wait_ != wait) {
        writer_ = std::make_unique<CollectionWriter>(path(), wait);
        writer_wait_ = wait;
      }
      ch = f(*writer_);
    }
    py::dict d;
    d["generation"] = ch.generation;
    d["segments"] = ch.segments;
    return d;
  }

  std::shared_ptr<const WordVectors> embeddings_;  // before reader_, which checks against them
  std::unique_ptr<CollectionReader> reader_;
  std::mutex writing_;  // change's: one writer, one change at a time
  std::unique_ptr<CollectionWriter> writer_;
  double writer_wait_ = 0;
};

}  // namespace

void bind_collection(py::module_& m) {
  py::class_<PyCollection>(m, "Collection")
      .def(py::init<std::string, std::shared_ptr<const WordVectors>>(), py::arg("path"),
           py::arg("embeddings") = py::none())
      .def_static("create", &PyCollection::create, py::arg("path"), py::arg("embeddings"),
                  py::arg("docs"), py::arg("ids") = py::none(), py::arg("labels") = py::none(),
                  py::arg("stopwords") = py::none(), py::arg("keep_text") = true)
      .def("add", &PyCollection::add, py::arg("docs"), py::arg("ids") = py::none(),
           py::arg("labels") = py::none(), py::arg("wait") = 30.0)
      .def("delete", &PyCollection::remove, py::arg("ids"), py::arg("wait") = 30.0)
      .def("compact", &PyCollection::compact, py::arg("wait") = 30.0)
      .def("search", &PyCollection::search, py::arg("queries"), py::arg("k"), py::arg("method"),
           py::arg("direction"), py::arg("parameters"), py::arg("query_weights"),
           py::arg("max_distance"))
      .def_property_readonly("ids", &PyCollection::ids)
      .def_property_readonly("generation", &PyCollection::generation)
      .def_property_readonly("segments", &PyCollection::segments)
      .def_property_readonly("deleted", &PyCollection::deleted)
      .def_property_readonly("path", &PyCollection::path)
      .def("__len__", &PyCollection::size);
}

}  // namespace lcrwmd::python
