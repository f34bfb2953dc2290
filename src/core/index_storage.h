#pragma once
// What backs an Index: a memory-mapped file or an in-memory image of one, its views
// (io/index_image.h), and the lookups and caches built from it on first use.
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/posting_blocks.h"
#include "io/index_image.h"
#include "io/mapped_file.h"
#include "lcrwmd/index.h"
#include "lcrwmd/string_map.h"
#include "util/id_slots.h"

namespace lcrwmd {

struct Index::Storage {
  std::string name;
  std::unique_ptr<MappedFile> file;
  std::vector<char> bytes;
  const char* base = nullptr;
  std::size_t size = 0;
  io::StringTable vocab, ids, labels, texts, terms;
  StopWords stopwords;

  std::once_flag word_map_once;
  StringMap<std::uint32_t> word_map;
  // A shard's: the storage of the index whose vocabulary it shares, and whose word map it looks
  // words up in (built once, not per shard; that index outlives its shards).
  Storage* vocabulary_owner = nullptr;
  std::once_flag id_slots_once;
  IdSlots id_slots;  // find_doc's
  std::once_flag centroids_once;
  std::vector<float> centroids;
  std::once_flag word_postings_once;
  Index::WordPostings word_postings;
  // posting_blocks', by term: made by the first search reading each (outside the lock; the
  // first made is kept).
  std::shared_mutex blocks_mutex;
  std::unordered_map<std::uint32_t, std::unique_ptr<const PostingBlocks>> blocks;
  // A shard's document offsets, rebased to its first document (Index::shard).
  std::vector<std::uint64_t> shard_indptr;
};

}  // namespace lcrwmd
