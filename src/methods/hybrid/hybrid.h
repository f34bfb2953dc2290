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
// A hybrid search's weight.
double hybrid_weight(const SearchOptions& o);

// Each of n documents' hybrid distance from its query-to-document distance and its bm25 score,
// in place of the distance: weight * z(distance) - z(score), both standardised over the
// documents not in `skip` (ascending). The moments are summed in a fixed order, so a row gives
// the same bits whatever the threads, and a row with documents skipped the bits of a row of
// only the others.
void fuse_hybrid(float* distances, const double* scores, std::size_t n,
                 std::span<const std::uint32_t> skip, double weight);

}  // namespace lcrwmd
