// Okapi BM25 over the documents' terms (lcrwmd/index.h's lexical part): each query term's
// postings added into a row of scores, the row given as distances (minus the scores), so that
// bm25 ranks through the same top-k as every method.
#include <cmath>
#include <string>
#include <vector>

#include "lcrwmd/error.h"
#include "methods/batch_distance.h"
#include "methods/method_impl.h"

namespace lcrwmd {
namespace {

class Bm25 final : public BatchDistance {
 public:
  Bm25(const Index& index, QueryRange q, const SearchOptions& o)
      : index_(index), q_(q), k1_(o.bm25_k1), b_(o.bm25_b) {
    if (!index.has_terms())
      throw Error(index.source() +
                  ": the index holds no term counts (assembled without them): bm25 reads an "
                  "index from `lcrwmd build` or `lcrwmd synth`");
    const QueryTerms& t = q.set.terms;
    if (t.indptr.size() != q.set.size() + 1 || t.counts.size() != t.terms.size())
      throw Error(
          "bm25 reads the queries' terms, and these have none: queries made by hand rather "
          "than from text (make_query_set)");
    if (t.idf.size() != t.terms.size() || !(t.mean_length > 0))
      throw Error(
          "bm25: these queries carry no collection-wide term statistics (shards built apart, "
          "searched under mpirun); build the shards as one build's (lcrwmd build --shards N)");
  }

  // Each query's terms in their (sorted) order, each term's postings in document order: the
  // same sums in the same order at every batch size and thread count.
  void compute(float* out) override {
    const std::size_t n = index_.n_docs(), nq = q_.size();
    const QueryTerms& t = q_.set.terms;
    // The length part of each document's denominator, shared by all its terms.
    std::vector<double> norm(n);
    const double mean = t.mean_length;
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i)
      norm[i] = k1_ * (1.0 - b_ + b_ * static_cast<double>(index_.doc_length(i)) / mean);
#pragma omp parallel if (nq > 1)
    {
      std::vector<double> score(n);
#pragma omp for schedule(dynamic)
      for (std::size_t j = 0; j < nq; ++j) {
        std::fill(score.begin(), score.end(), 0.0);
        const std::size_t q = q_.begin + j;
        for (std::uint64_t p = t.indptr[q]; p < t.indptr[q + 1]; ++p) {
          const auto id = index_.find_term(t.terms[p]);
          if (!id) continue;
          const double w = static_cast<double>(t.counts[p]) * t.idf[p] * (k1_ + 1.0);
          const Index::Postings post = index_.postings(*id);
          for (std::size_t e = 0; e < post.size; ++e) {
            const std::size_t i = post.docs[e] - post.first;
            const double f = post.counts[e];
            score[i] += w * f / (f + norm[i]);
          }
        }
        float* row = out + j * n;
        for (std::size_t i = 0; i < n; ++i)
          row[i] = score[i] > 0 ? -static_cast<float>(score[i]) : 0.0f;
      }
    }
  }

 private:
  const Index& index_;
  QueryRange q_;
  double k1_, b_;
};

}  // namespace

const MethodImpl kBm25Impl{[](const MethodContext& c) -> std::unique_ptr<BatchDistance> {
                             return std::make_unique<Bm25>(c.index, c.queries, c.options);
                           },
                           nullptr, false};

}  // namespace lcrwmd
