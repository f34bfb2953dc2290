#include "distributed/rank_messages.h"

#include <algorithm>

#include "distributed/collective.h"
#include "io/byte_stream.h"
#include "lcrwmd/error.h"
#include "lcrwmd/wire.h"

namespace lcrwmd::rank_messages {
namespace {

// Each message's error and its part, on rank 0; an Error for the first rank that failed.
std::vector<std::string> parts_of(const std::vector<std::string>& messages) {
  std::vector<std::string> errors, parts;
  for (const std::string& m : messages) {
    Reader r(m);
    const std::vector<std::string> fields = r.strings();
    errors.push_back(fields.at(0));
    parts.push_back(fields.at(1));
  }
  if (const std::string e = collective::first_error(errors); !e.empty()) throw Error(e);
  return parts;
}

// The error, or the part where there is none.
std::string message(const std::string& error, const std::string& part) {
  Writer w;
  w.strings({error, part});
  return w.take();
}

}  // namespace

std::string results(const std::string& error, const SearchResults& r, const SearchStats& st) {
  return message(error, error.empty() ? pack(r, st) : std::string());
}

std::vector<SearchResults> read_results(const std::vector<std::string>& parts, SearchStats& total) {
  std::vector<SearchResults> out;
  for (const std::string& p : parts_of(parts)) {
    SearchStats st;
    unpack_results(p, out.emplace_back(), st);
    accumulate(total, st);
  }
  return out;
}

std::string rows(const Searcher& searcher, const QuerySet& queries, std::size_t begin,
                 std::size_t end, std::size_t width, const SearchOptions& options,
                 SearchStats& stats) {
  std::vector<float> block((end - begin) * width);
  const std::string error = collective::attempt([&] {
    SearchStats st;
    searcher.pairwise(
        subset(queries, begin, end), options,
        [&](std::size_t first, std::size_t count, const float* d) {
          std::copy(d, d + count * width,
                    block.begin() + static_cast<std::ptrdiff_t>(first * width));
        },
        &st);
    accumulate(stats, st);
  });
  if (!error.empty()) return message(error, {});
  Writer w;
  w.vec(block);
  return message({}, w.take());
}

std::vector<std::vector<float>> read_rows(const std::vector<std::string>& parts) {
  std::vector<std::vector<float>> out;
  for (const std::string& p : parts_of(parts)) {
    Reader r(p);
    out.push_back(r.vec<float>());
  }
  return out;
}

std::string evidence(const std::string& error, const Evidence& e) {
  if (!error.empty()) return message(error, {});
  Writer w;
  w.vec(e.distances);
  w.vec(e.scores);
  return message({}, w.take());
}

std::vector<Evidence> read_evidence(const std::vector<std::string>& parts) {
  std::vector<Evidence> out;
  for (const std::string& p : parts_of(parts)) {
    Reader r(p);
    Evidence& e = out.emplace_back();
    e.distances = r.vec<float>();
    e.scores = r.vec<double>();
  }
  return out;
}

void sum_stats(Communicator& comm, const SearchStats& mine, SearchStats* total) {
  const std::vector<std::string> counts = comm.gather(pack(SearchResults{}, mine));
  if (comm.rank() != 0 || !total) return;
  *total = {};
  for (const std::string& c : counts) {
    SearchResults none;
    SearchStats st;
    unpack_results(c, none, st);
    accumulate(*total, st);
  }
}

}  // namespace lcrwmd::rank_messages
