// Query sets and search results as bytes (lcrwmd/wire.h).
#include "lcrwmd/wire.h"

#include "io/byte_stream.h"

namespace lcrwmd {

std::string pack(const QuerySet& q) {
  Writer w;
  w.strings(q.ids);
  w.strings(q.labels);
  w.vec(q.indptr);
  w.vec(q.words);
  w.vec(q.weights);
  w.strings(q.extra_words);
  w.vec(q.extra_vectors);
  w.vec(q.terms.indptr);
  w.strings(q.terms.terms);
  w.vec(q.terms.counts);
  w.vec(q.terms.idf);
  w.pod(q.terms.mean_length);
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
  q.terms.indptr = r.vec<std::uint64_t>();
  q.terms.terms = r.strings();
  q.terms.counts = r.vec<std::uint32_t>();
  q.terms.idf = r.vec<float>();
  q.terms.mean_length = r.pod<double>();
  return q;
}

std::string pack(const SearchResults& res, const SearchStats& st) {
  Writer w;
  w.pod(static_cast<std::uint64_t>(res.n_queries));
  w.pod(static_cast<std::uint64_t>(res.k));
  w.vec(res.distances);
  w.vec(res.indices);
  for (std::size_t x : {st.batches, st.distances, st.refined, st.tightened, st.device_chunks,
                        st.walked, st.word_pairs, st.recomputed})
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
                         &st.walked, &st.word_pairs, &st.recomputed})
    *x = r.pod<std::uint64_t>();
  st.backend = static_cast<Backend>(r.pod<std::uint32_t>());
  st.precision = static_cast<Precision>(r.pod<std::uint32_t>());
}

}  // namespace lcrwmd
