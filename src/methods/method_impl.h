#pragma once
// What the library runs for a method, beside its description (lcrwmd/method.h): its CPU batch
// computation and the flows explain shows (hnswlib's SpaceInterface, per method). Each method's
// file defines its MethodImpl, and its one entry in methods() (methods.cpp) points at it, so a
// new method is its own file plus that entry; the searchers, the planner and explain ask here
// instead of testing the method's name.
#include <cstddef>
#include <memory>

#include "lcrwmd/explain.h"
#include "lcrwmd/method.h"
#include "methods/batch_distance.h"

namespace lcrwmd {

// What a batch's computation is made from.
struct MethodContext {
  const Index& index;
  QueryRange queries;
  const SearchOptions& options;
  const Phase1* phase1;      // null for a method without a phase 1 (WordPass::none)
  std::size_t cache_budget;  // bytes it may keep for D2's word distances
  Rows rows;                 // distances, or bounds a top-k refines
};

struct MethodImpl {
  // The CPU's distances (or bounds) of a batch of queries to every document.
  std::unique_ptr<BatchDistance> (*make)(const MethodContext& context);
  // explain's flows for query q and document doc (Explanation's fields), in the arithmetic of
  // the method's reference; null where a distance moves no word (MethodInfo::explains false).
  void (*explain)(const Index& index, const QuerySet& queries, std::size_t q, std::size_t doc,
                  const SearchOptions& options, Explanation& out);
  // A pruned top-k asks phase 1 for bounds (Rows::bounds) and refines the few documents that
  // need it (LC-RWMD's D1); otherwise every method computes its distances or its own bounds.
  bool bounds_rows;
};

// The methods' implementations, each defined in the method's own file (ICT's is ACT's: its
// steps are all of them, act_steps).
extern const MethodImpl kWcdImpl, kRwmdImpl, kLcRwmdImpl, kWmdImpl, kActImpl, kBm25Impl,
    kHybridImpl;

inline const MethodImpl& implementation(Method m) { return *describe(m).impl; }

// explain's flows of the families of methods (explain.cpp), as MethodImpl::explain: both
// directions of RWMD from each word's nearest counterpart; ACT-k's capped transfers (ICT's
// with act_steps); WMD's optimal flow.
void explain_rwmd(const Index& index, const QuerySet& queries, std::size_t q, std::size_t doc,
                  const SearchOptions& options, Explanation& e);
void explain_act(const Index& index, const QuerySet& queries, std::size_t q, std::size_t doc,
                 const SearchOptions& options, Explanation& e);
void explain_wmd(const Index& index, const QuerySet& queries, std::size_t q, std::size_t doc,
                 const SearchOptions& options, Explanation& e);

}  // namespace lcrwmd
