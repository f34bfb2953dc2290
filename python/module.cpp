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

#include "lcrwmd/collection.h"
#include "lcrwmd/corpus.h"
#include "lcrwmd/embeddings.h"
#include "lcrwmd/error.h"
#include "lcrwmd/eval.h"
#include "lcrwmd/explain.h"
#include "lcrwmd/fasttext.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/index.h"
#include "lcrwmd/learn.h"
#include "lcrwmd/query.h"
#include "lcrwmd/search.h"
#include "lcrwmd/searcher.h"
#include "lcrwmd/text.h"
#include "python/py_collection.h"
#include "python/py_index.h"
#include "python/py_tasks.h"

using namespace lcrwmd;
using namespace lcrwmd::python;

PYBIND11_MODULE(_lcrwmd, m) {
  m.doc() = "lcrwmd: nearest documents by the Word Mover's Distance and its relaxations";
  py::register_exception<Error>(m, "Error", PyExc_ValueError);

  // A word's vector from any source, as `emb[word]` and `word in emb` read it.
  const auto vector_of = [](const WordVectors& e, const std::string& w) {
    py::array_t<float> v(static_cast<py::ssize_t>(e.dim()));
    if (!e.lookup(w, v.mutable_data())) throw py::key_error(w);
    return v;
  };
  const auto has_vector = [](const WordVectors& e, const std::string& w) {
    std::vector<float> v(e.dim());
    return e.lookup(w, v.data());
  };
  py::class_<WordVectors, std::shared_ptr<WordVectors>>(
      m, "WordVectors",
      "Where word vectors come from: an Embeddings table or a FastTextModel. `emb[word]` is a "
      "word's vector, `word in emb` tests for one.")
      .def_property_readonly("dim", &WordVectors::dim, "Dimension of the vectors.")
      .def_property_readonly("format", &WordVectors::format,
                             "word2vec-binary, text, indexed, memory or fasttext.")
      .def_property_readonly("source", &WordVectors::source, "The file it was read from.")
      .def("__contains__", has_vector)
      .def("__getitem__", vector_of);

  py::class_<Embeddings, WordVectors, std::shared_ptr<Embeddings>>(
      m, "Embeddings",
      "A table of word vectors: Embeddings.load(path), Embeddings(words, vectors), "
      "Embeddings.from_gensim(keyed_vectors); Embeddings.train(docs, path) trains a fastText "
      "model on your own documents.")
      .def(py::init(&make_embeddings), py::arg("words"), py::arg("vectors"),
           "Embeddings of `words` from a (len(words), dim) float array (copied).")
      .def_static(
          "load",
          [](const std::string& path) {
            py::gil_scoped_release release;
            return std::shared_ptr<WordVectors>(open_word_vectors(path));
          },
          py::arg("path"),
          "Reads a word2vec binary or text file, GloVe or fastText .vec (an Embeddings), or a "
          "fastText model .bin (a FastTextModel, which gives every word a vector, from its "
          "character n-grams if unseen); the format is detected. Raises lcrwmd.Error naming the "
          "file and line or byte of a damaged entry.")
      .def_static(
          "train",
          [](const py::sequence& docs, const std::string& path,
             std::optional<std::vector<std::string>> stopwords, const std::string& model,
             std::size_t dim, std::size_t epochs, std::size_t min_count, std::size_t minn,
             std::size_t maxn, std::size_t buckets, std::size_t window, std::size_t negatives,
             double lr, std::size_t threads, std::uint32_t seed, const py::object& progress) {
            const std::vector<RawDocument> raw = to_documents(docs, {}, {});
            const StopWords stop = to_stopwords(stopwords);
            const FastTextOptions o{.model = model,
                                    .dim = dim,
                                    .epochs = epochs,
                                    .min_count = min_count,
                                    .min_n = minn,
                                    .max_n = maxn,
                                    .buckets = buckets,
                                    .window = window,
                                    .negatives = negatives,
                                    .learning_rate = lr,
                                    .threads = threads,
                                    .seed = seed};
            // progress(fraction, words_per_second, eta_seconds) now and then, with the GIL; a
            // false answer, an exception or Ctrl-C stops the training (no model written), the
            // exception raised here.
            std::optional<py::error_already_set> raised;
            TrainingCallback report;
            if (!progress.is_none())
              report = [&](const TrainingProgress& p) {
                py::gil_scoped_acquire gil;
                if (raised) return false;
                try {
                  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
                  const py::object go = progress(p.fraction, p.words_per_second, p.eta_seconds);
                  return go.is_none() || PyObject_IsTrue(go.ptr()) == 1;
                } catch (py::error_already_set& e) {
                  raised.emplace(std::move(e));
                  return false;
                }
              };
            {
              py::gil_scoped_release release;
              try {
                train_fasttext(raw, &stop, o, path, "the documents given", report);
              } catch (const Error&) {
                if (!raised) throw;
              }
            }
            if (raised) throw std::move(*raised);
            return std::shared_ptr<FastTextModel>(FastTextModel::load(path));
          },
          py::arg("docs"), py::arg("path"), py::arg("stopwords") = py::none(),
          py::arg("model") = "skipgram", py::arg("dim") = FastTextOptions{}.dim,
          py::arg("epochs") = FastTextOptions{}.epochs,
          py::arg("min_count") = FastTextOptions{}.min_count,
          py::arg("minn") = FastTextOptions{}.min_n, py::arg("maxn") = FastTextOptions{}.max_n,
          py::arg("buckets") = FastTextOptions{}.buckets,
          py::arg("window") = FastTextOptions{}.window,
          py::arg("negatives") = FastTextOptions{}.negatives,
          py::arg("lr") = FastTextOptions{}.learning_rate, py::arg("threads") = 0,
          py::arg("seed") = 0, py::arg("progress") = py::none(),
          "Trains fastText word vectors on documents (texts or token lists), read as an index "
          "reads them (its tokenizer; `stopwords` left out: give the index's), writes the model "
          "to `path` whole or not at all, and returns it (a FastTextModel). One thread and one "
          "seed give the same model byte for byte. progress: called now and then as "
          "progress(fraction, words_per_second, eta_seconds); False from it, an exception or "
          "Ctrl-C stops the training, writing nothing.")
      .def("__len__", &Embeddings::size, "Number of words.")
      .def("__repr__",
           [](const Embeddings& e) {
             return "lcrwmd.Embeddings(" + std::to_string(e.size()) + " words, dim " +
                    std::to_string(e.dim()) +
                    (e.source().empty() ? std::string() : ", from " + e.source()) + ")";
           })
      .def(py::pickle(
          [](const Embeddings& e) { return py::make_tuple(words_of(e), vectors_of(e)); },
          [](const py::tuple& t) {
            if (t.size() != 2) throw py::value_error("not a pickled lcrwmd.Embeddings");
            return make_embeddings(t[0].cast<std::vector<std::string>>(), t[1].cast<FloatArray>());
          }))
      .def_property_readonly("words", &words_of, "The words, in the order of their vectors.")
      .def_property_readonly("vectors", &vectors_of,
                             "The vectors, a (len(emb), dim) float32 array (a copy).");

  py::class_<FastTextModel, WordVectors, std::shared_ptr<FastTextModel>>(
      m, "FastTextModel",
      "A fastText model (.bin) as word vectors: fastText's own vector for every word, from its "
      "character n-grams alone for a word it never saw. Pickled by its path.")
      .def("__len__", &FastTextModel::words, "Words in its dictionary.")
      .def("__repr__",
           [](const FastTextModel& f) {
             return "lcrwmd.FastTextModel(" + std::to_string(f.words()) + " words, dim " +
                    std::to_string(f.dim()) + ", " + std::to_string(f.buckets()) +
                    " n-gram buckets, from " + f.source() + ")";
           })
      .def_property_readonly(
          "words",
          [](const FastTextModel& f) {
            std::vector<std::string> w;
            for (std::size_t i = 0; i < f.words(); ++i) w.push_back(f.word(i));
            return w;
          },
          "Its dictionary's words, most frequent first.")
      .def_property_readonly("buckets", &FastTextModel::buckets, "Rows of its n-gram table.")
      .def_property_readonly("resident_bytes", &FastTextModel::resident_bytes,
                             "The bytes its rows take in memory.")
      .def(py::pickle([](const FastTextModel& f) { return py::make_tuple(f.source()); },
                      [](const py::tuple& t) {
                        if (t.size() != 1) throw py::value_error("not a pickled FastTextModel");
                        return std::shared_ptr<FastTextModel>(
                            FastTextModel::load(t[0].cast<std::string>()));
                      }));

  py::class_<PyIndex> index_cls(m, "Index");
  index_cls
      .def_static(
          "build",
          [](std::shared_ptr<const WordVectors> emb, const py::sequence& docs,
             std::optional<std::vector<std::string>> ids,
             std::optional<std::vector<std::string>> labels,
             std::optional<std::vector<std::string>> stopwords, const std::string& weighting,
             bool keep_text, std::optional<bool> unit_vectors, std::optional<std::string> metric) {
            const std::vector<RawDocument> raw =
                to_documents(docs, optional_list(ids, docs.size(), "ids"),
                             optional_list(labels, docs.size(), "labels"));
            PyIndex p;
            const StopWords stop = to_stopwords(stopwords);
            BuildOptions bo;
            bo.stopwords = &stop;
            bo.weighting = parse_weighting(weighting);
            bo.keep_text = keep_text;
            if (metric) {
              bo.metric = std::make_shared<const Metric>(Metric::load(*metric));
              if (unit_vectors && *unit_vectors != bo.metric->unit_vectors())
                throw Error(*metric + ": learned on vectors " +
                            (bo.metric->unit_vectors() ? "scaled to length 1" : "as they are") +
                            ": leave unit_vectors out");
            }
            bo.unit_vectors = unit_vectors.value_or(unit_vectors_by_default(*emb, bo.metric.get()));
            TextReport report;
            {
              py::gil_scoped_release release;
              if (bo.metric) bo.metric->check_vectors(*emb, *metric);
              p.index = std::make_shared<const Index>(
                  Index::from_data(build_index_data(*vectors_for(emb, raw), raw, bo, &report)));
            }
            p.excluded = report.empty_documents;
            p.embeddings = std::move(emb);
            return p;
          },
          py::arg("embeddings"), py::arg("docs"), py::arg("ids") = py::none(),
          py::arg("labels") = py::none(), py::arg("stopwords") = py::none(),
          py::arg("weighting") = "tf", py::arg("keep_text") = true,
          py::arg("unit_vectors") = py::none(), py::arg("metric") = py::none())
      .def(
          "learn_metric",
          [](const PyIndex& p, const std::string& path, std::size_t dim, std::size_t epochs,
             std::size_t centroid_epochs, std::size_t batch, std::size_t neighbors, double held_out,
             std::size_t patience, double strength, std::size_t epoch_documents,
             std::uint64_t seed) {
            LearnOptions o;
            o.out_dim = dim;
            o.transport_epochs = epochs;
            o.centroid_epochs = centroid_epochs;
            o.batch = batch;
            o.neighbors = neighbors;
            o.held_out = held_out;
            o.patience = patience;
            o.transport.lambda = strength;
            o.epoch_documents = epoch_documents;
            o.seed = seed;
            bool interrupted = false;
            LearnReport r;
            {
              py::gil_scoped_release release;
              // Ctrl-C, seen between batches, stops learning; nothing is written then.
              const LearnCallback check = [&](const LearnProgress&) {
                py::gil_scoped_acquire acquire;
                interrupted = PyErr_CheckSignals() != 0;
                return !interrupted;
              };
              const Metric learned = learn_metric(*p.index, o, check, &r);
              if (!interrupted) learned.save(path);
            }
            if (interrupted) throw py::error_already_set();
            py::dict d;
            d["held_out_error"] = r.held_out_error;
            d["unsupervised_error"] = r.unsupervised_error;
            d["train_documents"] = r.train_documents;
            d["held_out_documents"] = r.held_out_documents;
            d["epoch_documents"] = r.epoch_documents;
            d["unlabelled"] = r.unlabelled;
            return d;
          },
          py::arg("path"), py::arg("dim") = 0, py::arg("epochs") = LearnOptions{}.transport_epochs,
          py::arg("centroid_epochs") = LearnOptions{}.centroid_epochs,
          py::arg("batch") = LearnOptions{}.batch, py::arg("neighbors") = LearnOptions{}.neighbors,
          py::arg("held_out") = LearnOptions{}.held_out,
          py::arg("patience") = LearnOptions{}.patience,
          py::arg("strength") = LearnOptions{}.transport.lambda,
          py::arg("epoch_documents") = LearnOptions{}.epoch_documents, py::arg("seed") = 0,
          "Learns a word metric from this index's labels (Supervised WMD: a map of the word "
          "vectors to `dim` dimensions, 0 for theirs, and a weight per word), written to `path` "
          "whole or not at all; `Index.build(..., metric=path)` applies it. Returns the held-out "
          "error of the kept metric and of the unsupervised one.")
      .def_static("from_csr", &from_csr, py::arg("embeddings"), py::arg("indptr"),
                  py::arg("indices"), py::arg("data"), py::arg("n_cols"),
                  py::arg("ids") = py::none(), py::arg("labels") = py::none())
      .def_static(
          "load",
          [](const std::string& path, std::shared_ptr<const WordVectors> emb,
             std::optional<std::vector<std::string>> stopwords) {
            PyIndex p;
            {
              py::gil_scoped_release release;
              p.index = std::make_shared<const Index>(load_index(path));
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
             const std::string& method, const std::string& direction, const std::string& backend,
             std::size_t batch, bool prune, const py::dict& parameters,
             const std::string& precision, float max_distance, const std::string& query_weights) {
            SearchOptions o = make_options(method, direction, batch, prune, parameters);
            o.max_distance = max_distance;
            check_options(o);
            return search_with(p, *p.searcher(backend, o, precision), queries, to_k(k), o,
                               query_weights);
          },
          py::arg("queries"), py::arg("k") = 10, py::arg("method") = documents_method(),
          py::arg("direction") = "", py::arg("backend") = "auto", py::arg("batch") = 0,
          py::arg("prune") = true, py::arg("parameters") = py::dict(),
          py::arg("precision") = "auto",
          py::arg("max_distance") = std::numeric_limits<float>::infinity(),
          py::arg("query_weights") = "auto")
      .def(
          "more_like",
          [](const PyIndex& p, const std::vector<std::size_t>& docs, std::int64_t k,
             const std::string& method, const std::string& direction, const std::string& backend,
             const py::dict& parameters, const std::string& precision) {
            const SearchOptions o = make_options(method, direction, 0, true, parameters);
            const std::size_t kk = to_k(k);
            std::vector<std::int64_t> self(docs.begin(), docs.end());
            SearchResults r;
            {
              py::gil_scoped_release release;
              const QuerySet qs = query_set_from_index(*p.index, docs, o.method->reads_terms());
              r = without_self(p.searcher(backend, o, precision)->search(qs, kk + 1, o), self, kk);
            }
            const auto nq = static_cast<py::ssize_t>(r.n_queries),
                       kc = static_cast<py::ssize_t>(r.k);
            py::array_t<float> d({nq, kc});
            py::array_t<std::int64_t> i({nq, kc});
            std::copy(r.distances.begin(), r.distances.end(), d.mutable_data());
            std::copy(r.indices.begin(), r.indices.end(), i.mutable_data());
            return py::make_tuple(d, i);
          },
          py::arg("docs"), py::arg("k") = 10, py::arg("method") = documents_method(),
          py::arg("direction") = "", py::arg("backend") = "auto",
          py::arg("parameters") = py::dict(), py::arg("precision") = "auto")
      .def(
          "explain",
          [](const PyIndex& p, const py::object& query, std::size_t doc, const std::string& method,
             const std::string& direction, const py::dict& parameters,
             const std::string& query_weights) {
            return explain_with(p, query, doc, make_options(method, direction, 0, true, parameters),
                                query_weights);
          },
          py::arg("query"), py::arg("doc"), py::arg("method") = "wmd",
          py::arg("direction") = "symmetric", py::arg("parameters") = py::dict(),
          py::arg("query_weights") = "auto")
      .def(
          "pairwise",
          [](const PyIndex& p, const py::sequence& queries, const std::string& method,
             const std::string& direction, const std::string& backend, std::size_t batch,
             const py::dict& parameters, const std::string& precision,
             const std::string& query_weights) {
            const SearchOptions o = make_options(method, direction, batch, true, parameters);
            return pairwise_with(p, *p.searcher(backend, o, precision), queries, o, query_weights);
          },
          py::arg("queries"), py::arg("method") = documents_method(), py::arg("direction") = "",
          py::arg("backend") = "auto", py::arg("batch") = 0, py::arg("parameters") = py::dict(),
          py::arg("precision") = "auto", py::arg("query_weights") = "auto")
      .def(
          "to_gpu",
          [](const PyIndex& p, int device, std::size_t memory_mib, bool tf32,
             const std::string& precision) {
            GpuOptions o;
            o.device = device;
            o.memory_budget = memory_mib << 20;
            o.allow_tf32 = tf32;
            o.precision = parse_precision(precision);
            PyGpuSearcher s{p, nullptr};
            py::gil_scoped_release release;
            s.gpu = std::make_shared<const GpuIndex>(*p.index, o);
            return s;
          },
          py::arg("device") = 0, py::arg("memory_mib") = 0, py::arg("tf32") = false,
          py::arg("precision") = "auto")
      .def(
          "eval_knn",
          [](const PyIndex& p, const py::sequence& queries, std::vector<std::string> labels,
             std::vector<std::size_t> ks, const std::string& method, bool symmetric,
             const std::string& backend, const py::dict& parameters, const std::string& precision) {
            if (ks.empty()) throw py::value_error("ks: give at least one k");
            const SearchOptions o =
                make_options(method, direction_of(symmetric), 0, true, parameters);
            const Queries q = to_queries(p, queries, labels);
            const std::shared_ptr<const Searcher> searcher = p.searcher(backend, o, precision);
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
          py::arg("queries"), py::arg("labels"), py::arg("ks"),
          py::arg("method") = documents_method(), py::arg("symmetric") = true,
          py::arg("backend") = "auto", py::arg("parameters") = py::dict(),
          py::arg("precision") = "auto")
      .def(
          "with_embeddings",
          [](const PyIndex& p, std::shared_ptr<const WordVectors> emb) {
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
            p.embeddings = t[1].cast<std::shared_ptr<const WordVectors>>();
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
      .def_property_readonly("unit_vectors",
                             [](const PyIndex& p) { return p.index->unit_vectors(); })
      .def(
          "text", [](const PyIndex& p, std::size_t i) { return p.index->text(i); }, py::arg("i"));
  bind_tasks(index_cls);

  py::class_<PyGpuSearcher>(m, "GpuSearcher")
      .def(
          "search",
          [](const PyGpuSearcher& s, const py::sequence& queries, std::int64_t k,
             const std::string& method, const std::string& direction, std::size_t batch, bool prune,
             float max_distance, const py::dict& parameters) {
            SearchOptions o = make_options(method, direction, batch, prune, parameters);
            o.max_distance = max_distance;
            return search_with(s.index, *s.gpu, queries, to_k(k), o, "auto");
          },
          py::arg("queries"), py::arg("k") = 10, py::arg("method") = documents_method(),
          py::arg("direction") = "symmetric", py::arg("batch") = 0, py::arg("prune") = true,
          py::arg("max_distance") = std::numeric_limits<float>::infinity(),
          py::arg("parameters") = py::dict())
      .def(
          "pairwise",
          [](const PyGpuSearcher& s, const py::sequence& queries, const std::string& method,
             const std::string& direction, std::size_t batch, const py::dict& parameters) {
            return pairwise_with(s.index, *s.gpu, queries,
                                 make_options(method, direction, batch, true, parameters), "auto");
          },
          py::arg("queries"), py::arg("method") = documents_method(),
          py::arg("direction") = "symmetric", py::arg("batch") = 0,
          py::arg("parameters") = py::dict())
      .def_property_readonly("uploads", [](const PyGpuSearcher& s) { return s.gpu->uploads(); })
      .def_property_readonly("device", [](const PyGpuSearcher& s) { return s.gpu->device().name; })
      .def_property_readonly("resident_bytes",
                             [](const PyGpuSearcher& s) { return s.gpu->resident_bytes(); });

  m.def(
      "tokenize",
      [](const std::string& text, std::uint32_t version) { return tokenize(text, version); },
      py::arg("text"), py::arg("version") = kTokenizerVersion,
      "The tokenizer indexes and their queries use: NFKC, case-folded runs of letters, marks "
      "and digits with inner apostrophes (curly ones read as '), a possessive's 's dropped "
      "(version 2, what new indexes record; version 1: lowercased runs of ASCII letters, "
      "digits, apostrophes and non-ASCII bytes)");
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
        for (const Method method : lcrwmd::methods()) {
          const MethodInfo& i = method.info();
          py::dict d;
          d["name"] = i.name;
          d["summary"] = i.summary;
          for (const auto& [name, value] : method_properties(i)) d[name] = value;
          d["directions"] = directions(i);
          d["answers"] = i.answer == Answer::score ? "score" : "distance";
          py::list parameters;
          for (const Parameter& p : i.parameters) parameters.append(parameter_dict(p));
          d["parameters"] = parameters;
          d["default_for"] = !i.default_for                      ? py::object(py::none())
                             : *i.default_for == QueryKind::text ? py::str("text")
                                                                 : py::str("document");
          out.append(d);
        }
        return out;
      },
      "Every method as the engine describes it, in order: a dict each with its name, a "
      "one-line summary, its directions, whether it has each one-sided form, prunes its top-k by "
      "bounds, runs on the GPU and can be explained, whether it answers a distance or a score, "
      "its parameters (each a dict: name, the keyword argument; type, 'integer' or 'number'; "
      "default; min; max, None for none; help) and the kind of query it is the default for "
      "('text', 'document' or None).");
  m.def(
      "default_method",
      [](const std::string& kind, const std::optional<std::string>& direction) {
        if (kind != "text" && kind != "document")
          throw Error("kind: expected 'text' or 'document', not '" + kind + "'");
        return default_method(kind == "text" ? QueryKind::text : QueryKind::document,
                              direction ? std::optional(parse_direction(*direction)) : std::nullopt)
            .name();
      },
      py::arg("kind") = "document", py::arg("direction") = py::none(),
      "The method a search takes where none is named, by what its queries are: 'text' (typed "
      "words, a search box's: bm25) or 'document' (a document as the query: lc-rwmd); where a "
      "direction is asked that the text method lacks, the documents' method.");
  m.def("cpu_simd_level", &cpu_simd_level,
        "The SIMD level of the CPU kernels here: 'scalar', 'avx2' or 'avx512'.");
  m.def(
      "cpu_precision",
      [](const std::string& precision) { return describe_precision(parse_precision(precision)); },
      py::arg("precision") = "auto",
      "What the CPU's phase 1 runs `precision` as here, e.g. 'int8 (brg:avx512_core_amx_int8)' "
      "('auto': the fastest this CPU has); lcrwmd.Error where the CPU lacks it.");
  bind_collection(m);
}
