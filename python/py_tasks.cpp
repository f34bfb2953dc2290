// What NLP work does with a distance, bound on Index: kNN classification (lcrwmd/classify.h).
#include "python/py_tasks.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "lcrwmd/classify.h"
#include "lcrwmd/kmedoids.h"
#include "lcrwmd/pairs.h"

namespace lcrwmd::python {
namespace {

struct Classified {
  Queries queries;
  std::vector<Classification> labels;  // per row of queries.set
};

Classified classify_with(const PyIndex& p, const py::sequence& docs, std::int64_t k,
                         const std::string& method, bool symmetric, const std::string& backend,
                         bool prune, const py::dict& parameters, const std::string& precision) {
  const std::size_t kk = to_k(k);
  const SearchOptions o = make_options(method, direction_of(symmetric), 0, prune, parameters);
  Classified c{to_queries(p, docs, std::nullopt), {}};
  const std::shared_ptr<const Searcher> searcher = p.searcher(backend, o, precision);
  const Index& index = *p.index;
  py::gil_scoped_release release;
  const SearchResults r = searcher->search(c.queries.set, kk, o);
  c.labels = classify(
      r, kk, [&](std::size_t d) { return index.label(d); },
      [&](std::size_t d) { return std::string(index.doc_id(d)); });
  return c;
}

// The keyword arguments every classification call takes, after the queries.
#define LCRWMD_CLASSIFY_ARGS                                                                \
  py::arg("k") = 5, py::arg("method") = documents_method(), py::arg("symmetric") = true,    \
  py::arg("backend") = "auto", py::arg("prune") = true, py::arg("parameters") = py::dict(), \
  py::arg("precision") = "auto"

// A binding taking the queries and the classification arguments, answering with
// answer(index, its classification).
template <typename Answer>
auto classifying(Answer answer) {
  return [answer](const PyIndex& p, const py::sequence& docs, std::int64_t k,
                  const std::string& method, bool symmetric, const std::string& backend, bool prune,
                  const py::dict& parameters, const std::string& precision) {
    return answer(
        p, classify_with(p, docs, k, method, symmetric, backend, prune, parameters, precision));
  };
}

std::vector<std::string> classes_of(const Index& index) {
  return label_classes(index.n_docs(), [&](std::size_t d) { return index.label(d); });
}

}  // namespace

void bind_tasks(py::class_<PyIndex>& cls) {
  cls.def_property_readonly(
         "classes", [](const PyIndex& p) { return classes_of(*p.index); },
         "The distinct labels of the indexed documents, sorted: predict_proba's columns.")
      .def("classify", classifying([](const PyIndex&, const Classified& c) {
             py::list out;
             for (const std::int64_t row : c.queries.rows) {
               if (row < 0) {
                 out.append(py::none());
                 continue;
               }
               const Classification& l = c.labels[static_cast<std::size_t>(row)];
               py::dict votes;
               for (const auto& [label, count] : l.votes) votes[py::str(label)] = count;
               py::dict d;
               d["label"] = l.label;
               d["votes"] = votes;
               d["voters"] = l.voters;
               out.append(d);
             }
             return out;
           }),
           py::arg("queries"), LCRWMD_CLASSIFY_ARGS,
           "Each query's label by the vote of its k nearest documents, with the votes: a dict "
           "{label, votes: {label: count}, voters}, or None for a query with no known word. Ties "
           "are settled as eval_knn settles them: by the k - 1 nearest, and so on.")
      .def("predict", classifying([](const PyIndex&, const Classified& c) {
             py::list out;
             for (const std::int64_t row : c.queries.rows)
               if (row < 0)
                 out.append(py::none());
               else
                 out.append(c.labels[static_cast<std::size_t>(row)].label);
             return out;
           }),
           py::arg("queries"), LCRWMD_CLASSIFY_ARGS,
           "The label of each query (as classify), None where it has no known word.")
      .def("predict_proba", classifying([](const PyIndex& p, const Classified& c) {
             const std::vector<std::string> classes = classes_of(*p.index);
             const auto n = static_cast<py::ssize_t>(c.queries.rows.size());
             const auto m = static_cast<py::ssize_t>(classes.size());
             py::array_t<double> out({n, m});
             auto a = out.mutable_unchecked<2>();
             for (py::ssize_t j = 0; j < n; ++j) {
               const std::int64_t row = c.queries.rows[static_cast<std::size_t>(j)];
               for (py::ssize_t i = 0; i < m; ++i)
                 a(j, i) = row < 0 ? std::numeric_limits<double>::quiet_NaN() : 0.0;
               if (row < 0) continue;
               const Classification& l = c.labels[static_cast<std::size_t>(row)];
               for (const auto& [label, count] : l.votes) {
                 const auto at = std::lower_bound(classes.begin(), classes.end(), label);
                 a(j, at - classes.begin()) =
                     static_cast<double>(count) / static_cast<double>(l.voters);
               }
             }
             return out;
           }),
           py::arg("queries"), LCRWMD_CLASSIFY_ARGS,
           "Each query's votes / voters per class (columns: Index.classes), as scikit-learn's "
           "uniform weights; a row of NaN where a query has no known word.")
      .def(
          "pairs",
          [](const PyIndex& p, float max_distance, const std::string& method,
             const std::string& backend, bool prune, const py::dict& parameters,
             const std::string& precision) {
            const SearchOptions o = make_options(method, "symmetric", 0, prune, parameters);
            const std::shared_ptr<const Searcher> searcher = p.searcher(backend, o, precision);
            std::vector<Pair> all;
            {
              py::gil_scoped_release release;
              pairs_within(*p.index, *searcher, max_distance, o, [&](std::span<const Pair> found) {
                all.insert(all.end(), found.begin(), found.end());
              });
            }
            const auto n = static_cast<py::ssize_t>(all.size());
            py::array_t<std::int64_t> a(n), b(n);
            py::array_t<float> d(n);
            auto av = a.mutable_unchecked<1>();
            auto bv = b.mutable_unchecked<1>();
            auto dv = d.mutable_unchecked<1>();
            for (py::ssize_t i = 0; i < n; ++i) {
              const Pair& x = all[static_cast<std::size_t>(i)];
              av(i) = static_cast<std::int64_t>(x.a);
              bv(i) = static_cast<std::int64_t>(x.b);
              dv(i) = x.distance;
            }
            return py::make_tuple(a, b, d);
          },
          py::arg("max_distance"), py::arg("method") = documents_method(),
          py::arg("backend") = "auto", py::arg("prune") = true, py::arg("parameters") = py::dict(),
          py::arg("precision") = "auto",
          "Every pair of the index's documents within max_distance, once (a < b): arrays a, b, "
          "distance, by a, then distance.")
      .def(
          "cluster",
          [](const PyIndex& p, std::size_t k, std::uint64_t seed, const std::string& method,
             std::size_t iterations, std::size_t candidates, std::size_t members,
             const std::string& backend, const py::dict& parameters, const std::string& precision) {
            ClusterOptions o;
            o.k = k;
            o.seed = seed;
            o.max_iterations = iterations;
            o.candidates = candidates;
            o.members = members;
            o.search = make_options(method, "symmetric", 0, true, parameters);
            const std::shared_ptr<const Searcher> searcher =
                p.searcher(backend, o.search, precision);
            Clustering c;
            {
              py::gil_scoped_release release;
              c = k_medoids(*p.index, *searcher, o);
            }
            py::dict out;
            out["labels"] = py::array_t<std::int64_t>(
                static_cast<py::ssize_t>(c.assignment.size()),
                std::vector<std::int64_t>(c.assignment.begin(), c.assignment.end()).data());
            out["medoids"] = py::array_t<std::int64_t>(
                static_cast<py::ssize_t>(c.medoids.size()),
                std::vector<std::int64_t>(c.medoids.begin(), c.medoids.end()).data());
            out["distances"] =
                py::array_t<float>(static_cast<py::ssize_t>(c.distance.size()), c.distance.data());
            out["objective"] = c.objective;
            return out;
          },
          py::arg("k"), py::arg("seed") = 0, py::arg("method") = documents_method(),
          py::arg("iterations") = 20, py::arg("candidates") = 32, py::arg("members") = 256,
          py::arg("backend") = "auto", py::arg("parameters") = py::dict(),
          py::arg("precision") = "auto",
          "k-medoids over the index's documents: a dict with labels (each document's cluster), "
          "medoids (each cluster's document), distances (from its medoid) and objective (per "
          "iteration).");
}

}  // namespace lcrwmd::python
