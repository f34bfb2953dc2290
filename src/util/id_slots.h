#pragma once
// The documents of an index by id, without a scan: an open-addressing table of slots, each the
// number + 1 of the document whose id's XXH3-64 hash probes to it (linear probing; 0: empty),
// twice as many slots as documents rounded up to a power of two, so that a lookup reads a slot
// or two and compares one id. Built once from the ids it is asked about, which it does not
// copy: 8 to 16 bytes a document beside them (a string map would hold every id again).
#include <xxhash.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace lcrwmd {

class IdSlots {
 public:
  IdSlots() = default;
  // The ids of documents 0..n-1, id(i) each; of ids given twice, the first document is found.
  template <typename IdOf>
  IdSlots(std::size_t n, const IdOf& id) : slots_(std::bit_ceil(std::max<std::size_t>(2 * n, 2))) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string_view key = id(i);
      for (std::size_t at = hash(key) & mask;; at = (at + 1) & mask) {
        if (slots_[at] == 0) {
          slots_[at] = static_cast<std::uint32_t>(i + 1);
          break;
        }
        if (id(slots_[at] - 1) == key) break;  // a repeated id: the first keeps it
      }
    }
  }

  template <typename IdOf>
  std::optional<std::size_t> find(std::string_view key, const IdOf& id) const {
    if (slots_.empty()) return std::nullopt;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t at = hash(key) & mask; slots_[at] != 0; at = (at + 1) & mask)
      if (id(slots_[at] - 1) == key) return slots_[at] - 1;
    return std::nullopt;
  }

  std::size_t bytes() const { return slots_.size() * sizeof(std::uint32_t); }

 private:
  static std::size_t hash(std::string_view s) {
    return static_cast<std::size_t>(XXH3_64bits(s.data(), s.size()));
  }
  std::vector<std::uint32_t> slots_;
};

}  // namespace lcrwmd
