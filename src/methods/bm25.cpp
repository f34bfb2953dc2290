// bm25: Okapi BM25 (methods/bm25.h), each query's row of scores given as distances (minus the
// scores), so that it ranks through the same top-k as every method.
#include "methods/bm25.h"

#include <algorithm>
#include <string>

#include "lcrwmd/error.h"
#include "methods/batch_distance.h"
#include "methods/method_impl.h"

namespace lcrwmd {

Bm25Scorer::Bm25Scorer(const Index& index, const QuerySet& queries, double k1, double b)
    : index_(index), terms_(queries.terms), k1_(k1) {
  if (!index.has_terms())
    throw Error(index.source() +
                ": the index holds no term counts (assembled without them): bm25 reads an "
                "index from `lcrwmd build` or `lcrwmd synth`");
  const QueryTerms& t = terms_;
  if (t.indptr.size() != queries.size() + 1 || t.counts.size() != t.terms.size())
    throw Error(
        "bm25 reads the queries' terms, and these have none: queries made by hand rather than "
        "from text (make_query_set)");
  if (t.idf.size() != t.terms.size() || !(t.mean_length > 0))
    throw Error(
        "bm25: these queries carry no collection-wide term statistics (shards built apart, "
        "searched under mpirun); build the shards as one build's (lcrwmd build --shards N)");
  // A document's length part, k1 (1 - b + b len / mean): computed per posting read, as a
  // query reads far fewer postings than there are documents (no pass over them all per batch).
  length_scale_ = k1 * b / t.mean_length;
  length_base_ = k1 * (1.0 - b);
}

void Bm25Scorer::score(std::size_t q, double* score, std::size_t begin, std::size_t end) const {
  std::fill(score + begin, score + end, 0.0);
  for (std::uint64_t p = terms_.indptr[q]; p < terms_.indptr[q + 1]; ++p) {
    const auto id = index_.find_term(terms_.terms[p]);
    if (!id) continue;
    const double w = static_cast<double>(terms_.counts[p]) * terms_.idf[p] * (k1_ + 1.0);
    const Index::Postings post = index_.postings(*id);
    const std::uint32_t* docs = post.docs;
    if (begin > 0)  // the documents before the range passed over (postings are in order)
      docs = std::lower_bound(docs, docs + post.size, post.first + begin);
    for (std::size_t e = static_cast<std::size_t>(docs - post.docs); e < post.size; ++e) {
      const std::size_t i = post.docs[e] - post.first;
      if (i >= end) break;
      const double f = post.counts[e];
      const double norm = length_base_ + length_scale_ * index_.doc_length(i);
      score[i] += w * f / (f + norm);
    }
  }
}

namespace {

class Bm25 final : public BatchDistance {
 public:
  Bm25(const Index& index, QueryRange q, double k1, double b)
      : n_(index.n_docs()), q_(q), scorer_(index, q.set, k1, b) {}

  void compute(float* out) override {
    scorer_.score_each(q_.begin, q_.size(), [&](std::size_t j, const std::vector<double>& score) {
      float* row = out + j * n_;
      for (std::size_t i = 0; i < n_; ++i)
        row[i] = score[i] > 0 ? -static_cast<float>(score[i]) : 0.0f;
    });
  }

 private:
  std::size_t n_;
  QueryRange q_;
  Bm25Scorer scorer_;
};

}  // namespace

std::unique_ptr<BatchDistance> make_bm25(const Index& index, QueryRange queries, double k1,
                                         double b) {
  return std::make_unique<Bm25>(index, queries, k1, b);
}

const MethodImpl kBm25Impl{[](const MethodContext& c) {
                             return make_bm25(c.index, c.queries, c.options.bm25_k1,
                                              c.options.bm25_b);
                           },
                           nullptr, false};

}  // namespace lcrwmd
