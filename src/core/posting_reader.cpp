// PostingReader's skip over blocks (core/posting_reader.h).
#include "core/posting_reader.h"

#include <algorithm>

namespace lcrwmd {

std::size_t PostingReader::skip_to(std::uint32_t d) {
  // The list's blocks past the one loaded, galloped over by their last documents: those before
  // lo end below d; hi's does not, or hi is the end.
  const std::size_t n_blocks = io::stored_blocks(p_.skip + p_.size);
  std::size_t lo = (end_ - 1 + p_.skip) / io::kStoredBlock + 1, hi = lo;
  for (std::size_t step = 1; hi < n_blocks && p_.blocks[hi].last < d; step *= 2) {
    lo = hi + 1;
    hi = std::min(n_blocks, hi + step);
  }
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (p_.blocks[mid].last < d)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == n_blocks) return size();
  const std::size_t e = lo * io::kStoredBlock - p_.skip;  // lo > 0: not before the first
  if (e >= size()) return size();
  decode(e);
  return e;
}

}  // namespace lcrwmd
