#pragma once
// The hybrid's fusion of a query's evidence, written once for one index (methods/hybrid.cpp)
// and for a collection's segments together (ShardedSearcher).
#include <cstddef>
#include <cstdint>
#include <span>

namespace lcrwmd {

// Each of n documents' hybrid distance from its query-to-document distance and its bm25 score,
// in place of the distance: weight * z(distance) - z(score), both standardised over the
// documents not in `skip` (ascending). The moments are summed in a fixed order, so a row gives
// the same bits whatever the threads, and a row with documents skipped the bits of a row of
// only the others.
void fuse_hybrid(float* distances, const double* scores, std::size_t n,
                 std::span<const std::uint32_t> skip, double weight);

}  // namespace lcrwmd
