#pragma once
// The hybrid's fusion of a query's evidence, written once for one index (methods/hybrid/hybrid.cpp)
// and for a collection's segments together (CollectionSearcher).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "lcrwmd/method.h"
#include "lcrwmd/search.h"

namespace lcrwmd {

// The weight of the query-to-document distance's z-score against bm25's (0: bm25's ranking;
// 0.3 was the best of 0.3, 0.5, 1 and 2 on the retrieval task used for tuning, RESULTS.md).
inline constexpr Parameter kHybridWeight{
    .name = "hybrid_weight",
    .kind = Parameter::Kind::number,
    .default_value = 0.3,
    .min = 0,
    .max = std::numeric_limits<double>::infinity(),
    .help =
        "the query-to-document distance's weight against bm25's score (each standardised; "
        "0: bm25's ranking)"};
// How many documents standardise both halves: a fixed sample, evenly spaced over the live
// documents, so that a top-k needs neither every document's distance nor every posting of the
// query's terms (those sharing no term score 0).
inline constexpr Parameter kHybridSample{
    .name = "hybrid_sample",
    .kind = Parameter::Kind::integer,
    .default_value = 1024,
    .min = 0,
    .max = std::numeric_limits<double>::infinity(),
    .help =
        "documents, evenly spaced, whose bm25 scores and query-to-document distances "
        "standardise the hybrid's (0: every document)"};
// A hybrid search's weight and sample.
double hybrid_weight(const SearchOptions& o);
std::size_t hybrid_sample(const SearchOptions& o);

// Each of n documents' hybrid distance from its query-to-document distance and its bm25 score,
// in place of the distance: weight * z(distance) - z(score), both standardised over a sample of
// the documents not in `skip` (ascending): `sample` of them evenly spaced (0: all). The moments
// are summed in the sample's order, so a row gives the same bits whatever the threads, a row
// with documents skipped the bits of a row of only the others, and a bounded top-k (which finds
// the same moments from the sample alone) the same values.
void fuse_hybrid(float* distances, const double* scores, std::size_t n,
                 std::span<const std::uint32_t> skip, double weight, std::size_t sample);

}  // namespace lcrwmd
