#include "app/wire.h"

#include <cstring>
#include <type_traits>
#include <vector>

#include "lcrwmd/error.h"

namespace lcrwmd::app {
namespace {

class Writer {
 public:
  template <typename T>
  void pod(const T& x) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&x), sizeof x);
  }
  template <typename T>
  void vec(const std::vector<T>& v) {
    pod(static_cast<std::uint64_t>(v.size()));
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void strings(const std::vector<std::string>& v) {
    pod(static_cast<std::uint64_t>(v.size()));
    for (const std::string& s : v) {
      pod(static_cast<std::uint64_t>(s.size()));
      bytes_ += s;
    }
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& b) : b_(b) {}
  template <typename T>
  T pod() {
    T x;
    std::memcpy(&x, take(sizeof x), sizeof x);
    return x;
  }
  // Counts are checked against the bytes left before anything is allocated: a damaged
  // message is an error, never a huge allocation.
  template <typename T>
  std::vector<T> vec() {
    const auto n = count(sizeof(T));
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));
    return v;
  }
  std::vector<std::string> strings() {
    std::vector<std::string> v(count(sizeof(std::uint64_t)));
    for (std::string& s : v) {
      const auto n = count(1);
      s.assign(take(n), n);
    }
    return v;
  }

 private:
  std::size_t count(std::size_t item_bytes) {
    const auto n = pod<std::uint64_t>();
    if (n > (b_.size() - at_) / item_bytes) truncated();
    return static_cast<std::size_t>(n);
  }
  [[noreturn]] static void truncated() {
    throw Error("distributed search: truncated message between ranks");
  }
  const char* take(std::size_t n) {
    if (n > b_.size() - at_) truncated();
    const char* p = b_.data() + at_;
    at_ += n;
    return p;
  }
  const std::string& b_;
  std::size_t at_ = 0;
};

}  // namespace

std::string pack(const QuerySet& q) {
  Writer w;
  w.strings(q.ids);
  w.strings(q.labels);
  w.vec(q.indptr);
  w.vec(q.words);
  w.vec(q.weights);
  w.strings(q.extra_words);
  w.vec(q.extra_vectors);
  return w.take();
}

QuerySet unpack_queries(const std::string& bytes) {
  Reader r(bytes);
  QuerySet q;
  q.ids = r.strings();
  q.labels = r.strings();
  q.indptr = r.vec<std::uint64_t>();
  q.words = r.vec<std::uint32_t>();
  q.weights = r.vec<float>();
  q.extra_words = r.strings();
  q.extra_vectors = r.vec<float>();
  return q;
}

std::string pack(const SearchResults& res, const SearchStats& st) {
  Writer w;
  w.pod(static_cast<std::uint64_t>(res.n_queries));
  w.pod(static_cast<std::uint64_t>(res.k));
  w.vec(res.distances);
  w.vec(res.indices);
  for (std::size_t x : {st.batches, st.distances, st.refined, st.tightened, st.device_chunks,
                        st.word_pairs, st.recomputed})
    w.pod(static_cast<std::uint64_t>(x));
  w.pod(static_cast<std::uint32_t>(st.backend));
  w.pod(static_cast<std::uint32_t>(st.precision));
  return w.take();
}

void unpack_results(const std::string& bytes, SearchResults& res, SearchStats& st) {
  Reader r(bytes);
  res.n_queries = r.pod<std::uint64_t>();
  res.k = r.pod<std::uint64_t>();
  res.distances = r.vec<float>();
  res.indices = r.vec<std::int64_t>();
  for (std::size_t* x : {&st.batches, &st.distances, &st.refined, &st.tightened, &st.device_chunks,
                         &st.word_pairs, &st.recomputed})
    *x = r.pod<std::uint64_t>();
  st.backend = static_cast<Backend>(r.pod<std::uint32_t>());
  st.precision = static_cast<Precision>(r.pod<std::uint32_t>());
}

}  // namespace lcrwmd::app
