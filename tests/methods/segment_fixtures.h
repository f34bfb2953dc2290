#pragma once
// What the segment and rank tests share: every method's options, an index split into parts, and
// ranks played by threads.
#include <barrier>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "io/index_format.h"
#include "lcrwmd/communicator.h"
#include "lcrwmd/segments.h"
#include "test_util.h"

namespace lcrwmd::test {

// Every method in every direction it has, but those that read the queries' terms from text,
// which these tests' queries, made by hand, do not have (test_bm25.cpp has them).
inline std::vector<SearchOptions> every_method() {
  std::vector<SearchOptions> out;
  for (const Method m : methods())
    for (const Direction direction : kDirections) {
      if (m->reads_terms()) continue;
      if (!m->has(direction)) continue;
      SearchOptions o;
      o.method = m;
      o.direction = direction;
      o.parameters.set("act_steps", 2);
      out.push_back(o);
    }
  return out;
}

inline std::string name(const SearchOptions& o) {
  return std::string(to_string(o.method)) + " " + to_string(o.direction);
}

// The shards of `whole` (split_index_data), as indexes.
struct Split {
  std::vector<Index> files;
  std::vector<const Index*> pointers() const {
    std::vector<const Index*> p;
    for (const Index& f : files) p.push_back(&f);
    return p;
  }
};
inline Split split(const IndexData& whole, std::size_t parts) {
  Split s;
  for (const IndexData& d : split_index_data(whole, parts)) s.files.push_back(Index::from_data(d));
  return s;
}

// Ranks as threads: every broadcast and gather meets all of them at a barrier.
class ThreadRanks {
 public:
  explicit ThreadRanks(int n) : slots_(static_cast<std::size_t>(n)), barrier_(n) {}

  class Rank final : public Communicator {
   public:
    Rank(ThreadRanks& all, int rank) : all_(all), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return static_cast<int>(all_.slots_.size()); }
    void broadcast(std::string& bytes) override {
      if (rank_ == 0) all_.root_ = bytes;
      all_.barrier_.arrive_and_wait();
      if (rank_ != 0) bytes = all_.root_;
      all_.barrier_.arrive_and_wait();
    }
    std::vector<std::string> gather(const std::string& bytes) override {
      all_.slots_[static_cast<std::size_t>(rank_)] = bytes;
      all_.barrier_.arrive_and_wait();
      std::vector<std::string> out;
      if (rank_ == 0) out = all_.slots_;
      all_.barrier_.arrive_and_wait();
      return out;
    }

   private:
    ThreadRanks& all_;
    int rank_;
  };

 private:
  std::vector<std::string> slots_;
  std::string root_;
  std::barrier<> barrier_;
};

// Runs f(rank, communicator) on `n` threads standing in for ranks.
template <typename F>
void on_ranks(int n, F&& f) {
  ThreadRanks all(n);
  std::vector<std::thread> ranks;
  for (int r = 0; r < n; ++r)
    ranks.emplace_back([&, r] {
      ThreadRanks::Rank comm(all, r);
      f(r, comm);
    });
  for (std::thread& t : ranks) t.join();
}

inline std::vector<RawDocument> word_queries() {
  std::vector<RawDocument> docs;
  for (const char* text : {"w3 w3 w17 w40 w88", "w1 w69 w69 w69 w2 w120", "w55", "w140 w7 w7"})
    docs.push_back({numbered('q', docs.size()), "", text, docs.size() + 1});
  return docs;
}

}  // namespace lcrwmd::test
