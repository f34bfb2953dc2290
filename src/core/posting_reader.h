#pragma once
// A term's postings (Index::Postings) read a stored block at a time: a compressed list's block
// decoded when a posting in it is asked for (one block kept), a plain list read in place. Its
// seek skips the blocks whose last document is below the one sought without decoding them.
#include <cstddef>
#include <cstdint>
#include <span>

#include "io/posting_codec.h"
#include "lcrwmd/index.h"
#include "util/sorted_ids.h"

namespace lcrwmd {

class PostingReader {
 public:
  PostingReader() = default;
  explicit PostingReader(const Index::Postings& postings) { reset(postings); }
  // It points into itself.
  PostingReader(const PostingReader&) = delete;
  PostingReader& operator=(const PostingReader&) = delete;

  void reset(const Index::Postings& postings) {
    p_ = postings;
    docs_ = p_.docs;
    counts_ = p_.counts;
    begin_ = 0;
    end_ = p_.blocks ? 0 : p_.size;  // a plain list: one block
  }

  std::size_t size() const { return p_.size; }
  std::uint32_t first() const { return p_.first; }

  // The block holding posting e (< size()) loaded: postings [begin(), end()), the e-th's
  // document docs()[e - begin()].
  void load(std::size_t e) {
    if (e < begin_ || e >= end_) decode(e);
  }
  std::size_t begin() const { return begin_; }
  std::size_t end() const { return end_; }
  const std::uint32_t* docs() const { return docs_; }
  const std::uint32_t* counts() const { return counts_; }

  std::uint32_t doc(std::size_t e) {
    load(e);
    return docs_[e - begin_];
  }
  std::uint32_t count(std::size_t e) {
    load(e);
    return counts_[e - begin_];
  }

  // The first posting at or past e whose document is at least d; size() where none. From one
  // call to the next, d ascending: a gallop within the block loaded.
  std::size_t seek(std::size_t e, std::uint32_t d) {
    if (e >= size()) return size();
    load(e);
    if (docs_[end_ - 1 - begin_] < d) {
      if (!p_.blocks) return size();
      e = skip_to(d);
      if (e == size()) return e;
    }
    std::size_t at = e - begin_;
    lcrwmd::holds({docs_, end_ - begin_}, at, d);
    return begin_ + at;
  }
  // Whether the list holds document d, for d ascending from one call to the next (util/
  // sorted_ids.h's holds() over the list): `at`, the first posting not yet passed, moved to the
  // first at or past d.
  bool holds(std::size_t& at, std::uint32_t d) {
    at = seek(at, d);
    return at < size() && doc(at) == d;
  }

 private:
  // Decodes the block holding posting e.
  void decode(std::size_t e) {
    const std::size_t b = (e + p_.skip) / io::kStoredBlock;
    const std::size_t from = b * io::kStoredBlock;  // its first posting, of the blocks'
    io::decode_block(p_.blocks[b], p_.bytes, std::min(io::kStoredBlock, p_.stored - from), doc_buf_,
                     count_buf_);
    const std::size_t lead = b == 0 ? p_.skip : 0;  // a shard's postings before its first
    docs_ = doc_buf_ + lead;
    counts_ = count_buf_ + lead;
    begin_ = from + lead - p_.skip;
    end_ = std::min(p_.size, from + io::kStoredBlock - p_.skip);
  }
  // Loads the first block past the one loaded whose last document is at least d; its first
  // posting, or size() where there is none.
  std::size_t skip_to(std::uint32_t d);

  Index::Postings p_;
  const std::uint32_t* docs_ = nullptr;
  const std::uint32_t* counts_ = nullptr;
  std::size_t begin_ = 0, end_ = 0;
  std::uint32_t doc_buf_[io::kStoredBlock];
  std::uint32_t count_buf_[io::kStoredBlock];
};

}  // namespace lcrwmd
