#include "collection/prepared_merge.h"

#include <algorithm>
#include <utility>

#include "io/index_image.h"
#include "lcrwmd/index.h"
#include "util/sorted_ids.h"

namespace lcrwmd::collection {

IndexData merged_documents(const State& st, MergeCandidate due) {
  std::vector<const Index*> parts;
  std::vector<std::vector<std::size_t>> live;
  for (std::size_t s = due.begin; s < due.end; ++s) {
    const Segment& seg = st.segments[s];
    parts.push_back(seg.index.get());
    std::vector<std::size_t>& kept = live.emplace_back();
    for_each_kept(seg.index->n_docs(), seg.deleted, [&](std::size_t i) { kept.push_back(i); });
  }
  return merge_documents(parts, live);
}

PreparedMerge prepare_merge(const State& st, MergeCandidate due) {
  PreparedMerge p;
  for (std::size_t s = due.begin; s < due.end; ++s) {
    const Segment& seg = st.segments[s];
    p.numbers.push_back(seg.number);
    p.seen.push_back(seg.deleted);
    p.docs.push_back(seg.index->n_docs());
  }
  p.image = io::index_image(merged_documents(st, due));
  return p;
}

bool place_merge(const std::string& dir, State& st, const PreparedMerge& p) {
  // Its segments still there: in its order, one after another (nothing between them); those
  // gone were dropped with every document deleted, or merged by another writer (their
  // documents are elsewhere now): their rows are deleted in the merged segment.
  const std::size_t n = p.numbers.size();
  std::vector<const Segment*> now(n, nullptr);
  std::size_t first = st.segments.size(), last = 0, there = 0;
  for (std::size_t s = 0; s < st.segments.size(); ++s) {
    const auto k = std::find(p.numbers.begin(), p.numbers.end(), st.segments[s].number);
    if (k == p.numbers.end()) continue;
    now[static_cast<std::size_t>(k - p.numbers.begin())] = &st.segments[s];
    first = std::min(first, s);
    last = s;
    ++there;
  }
  if (there == 0 || last - first + 1 != there) return false;
  for (std::size_t k = 0, s = first; k < n; ++k)
    if (now[k] != nullptr && now[k] != &st.segments[s++]) return false;  // another order
  // A document's row in the merged segment: its segment's first row there, plus its own row
  // less the documents of its segment before it that the merge left out.
  std::vector<std::uint32_t> deleted;
  std::uint32_t rows = 0;  // the merged rows of the segments before
  for (std::size_t k = 0; k < n; ++k) {
    const std::vector<std::uint32_t>& seen = p.seen[k];
    const std::uint32_t kept = static_cast<std::uint32_t>(p.docs[k] - seen.size());
    if (now[k] == nullptr) {
      for (std::uint32_t r = 0; r < kept; ++r) deleted.push_back(rows + r);
    } else {
      std::size_t before = 0;  // of `seen` (within now[k]->deleted: deletions stay), those below
      for (const std::uint32_t i : now[k]->deleted) {
        while (before < seen.size() && seen[before] < i) ++before;
        if (before < seen.size() && seen[before] == i) continue;
        deleted.push_back(rows + i - static_cast<std::uint32_t>(before));
      }
    }
    rows += kept;
  }
  Segment merged = write_segment(dir, st.manifest, p.image);
  set_deleted(dir, st.manifest, merged, std::move(deleted));
  const auto at = st.segments.begin() + static_cast<std::ptrdiff_t>(first);
  st.segments.insert(st.segments.erase(at, at + static_cast<std::ptrdiff_t>(there)),
                     std::move(merged));
  drop_empty(st);
  return true;
}

}  // namespace lcrwmd::collection
