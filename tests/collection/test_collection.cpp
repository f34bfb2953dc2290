// A collection changed by adds, replacements and deletes answers as one build of its live
// documents; its files are checked when opened; one writer at a time.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "collection/collection_files.h"
#include "collection/commit.h"
#include "collection/prepared_merge.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/collection_reader.h"
#include "lcrwmd/cpu.h"
#include "lcrwmd/error.h"
#include "lcrwmd/query.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

namespace fs = std::filesystem;

bool close(float a, float b, float tolerance = 1e-6f) {
  return std::fabs(a - b) <= tolerance * std::max(1.0f, std::fabs(b));
}

std::string demo(const std::string& file) {
  return std::string(LCRWMD_SOURCE_DIR) + "/data/demo/" + file;
}

std::string fresh_dir(const std::string& name) {
  const fs::path p = test::temp_dir() / name;
  fs::remove_all(p);
  return p.string();
}

struct Demo {
  Embeddings emb = Embeddings::load(demo("embeddings.bin"));
  StopWords stop = StopWords::load(demo("stop_words.txt"));
  std::vector<RawDocument> docs = read_tsv(demo("train.tsv"));
  std::vector<RawDocument> queries = read_tsv(demo("queries.tsv"));
  IndexData build(const std::vector<RawDocument>& d) const {
    BuildOptions bo;
    bo.stopwords = &stop;
    return build_index_data(emb, d, bo);
  }
  std::vector<RawDocument> range(std::size_t begin, std::size_t end) const {
    return {docs.begin() + static_cast<std::ptrdiff_t>(begin),
            docs.begin() + static_cast<std::ptrdiff_t>(end)};
  }
};

// Every method and direction, and query-to-document LC-RWMD with IDF query weights.
std::vector<std::pair<SearchOptions, QueryWeights>> every_search() {
  std::vector<std::pair<SearchOptions, QueryWeights>> out;
  for (const Method m : methods())
    for (const Direction d : kDirections) {
      if (!m->has(d)) continue;
      SearchOptions o;
      o.method = m;
      o.direction = d;
      o.parameters.set("act_steps", 2);
      out.emplace_back(o, QueryWeights::index);
    }
  SearchOptions o;
  o.direction = Direction::query_to_document;
  out.emplace_back(o, QueryWeights::idf);
  return out;
}

std::string what(const SearchOptions& o, QueryWeights w) {
  return std::string(to_string(o.method)) + " " + to_string(o.direction) +
         (w == QueryWeights::idf ? " idf" : "");
}

// The collection's answers against one build of `live` (its documents in order), for every
// method: the same neighbours, distances within 1e-6 relative.
void expect_one_builds_answers(const Demo& d, const Collection& c,
                               const std::vector<RawDocument>& live) {
  const Index whole = Index::from_data(d.build(live));
  const SegmentSet set = c.documents();
  ASSERT_EQ(set.n_docs(), whole.n_docs());
  for (std::size_t i = 0; i < whole.n_docs(); ++i)
    ASSERT_EQ(set.doc_id(i), whole.doc_id(i)) << "document " << i;
  const CollectionSearcher collection(set, {});
  const CpuSearcher one(whole);
  const std::size_t k = 6;
  for (const auto& [o, weights] : every_search()) {
    QueryOptions qo;
    qo.embeddings = &d.emb;
    qo.weights = weights;
    qo.keep_term_only = !o.method->vectors;
    const QuerySet qc = set.make_query_set(d.queries, qo),
                   qw = make_query_set(whole, d.queries, qo);
    const SearchResults a = collection.search(qc, k, o), b = one.search(qw, k, o);
    ASSERT_EQ(a.k, b.k) << what(o, weights);
    // A word distance computed in another vocabulary's product may differ in its last bits;
    // the hybrid's z-scores divide that by the distances' spread, which magnifies it.
    const float tolerance = o.method == Method("hybrid") ? 1e-5f : 1e-6f;
    for (std::size_t e = 0; e < a.distances.size(); ++e) {
      EXPECT_TRUE(close(a.distances[e], b.distances[e], tolerance))
          << what(o, weights) << " entry " << e << ": " << a.distances[e] << " vs "
          << b.distances[e];
      if (a.indices[e] == b.indices[e]) continue;
      // Only documents at (nearly) the same distance may trade places (the demo has texts
      // added twice), or leave a row at its k-th distance.
      const std::size_t row = e / k * k;
      bool tie = close(a.distances[e], b.distances[row + k - 1]);
      for (std::size_t f = row; f < row + k; ++f)
        tie = tie || (b.indices[f] == a.indices[e] && close(b.distances[f], a.distances[e]));
      EXPECT_TRUE(tie) << what(o, weights) << " entry " << e << ": document " << a.indices[e]
                       << " where one build has " << b.indices[e];
    }
    if (o.method == Method("bm25")) {
      // One pass over every segment's postings: one build's very bytes and order, also where
      // k passes the documents that share a term with a query (the rest, deleted ones
      // included, never listed).
      EXPECT_EQ(a.distances, b.distances) << what(o, weights);
      EXPECT_EQ(a.indices, b.indices) << what(o, weights);
      const SearchResults all_a = collection.search(qc, live.size() + 3, o),
                          all_b = one.search(qw, live.size() + 3, o);
      EXPECT_EQ(all_a.distances, all_b.distances) << what(o, weights);
      EXPECT_EQ(all_a.indices, all_b.indices) << what(o, weights);
      EXPECT_TRUE(std::count(all_a.indices.begin(), all_a.indices.end(), -1) > 0);
    }
  }
  // A distance matrix has the live documents' columns.
  SearchOptions o;
  o.direction = Direction::document_to_query;
  QueryOptions qo;
  qo.embeddings = &d.emb;
  const std::vector<float> a = test::matrix(collection, set.make_query_set(d.queries, qo), o),
                           b = test::matrix(one, make_query_set(whole, d.queries, qo), o);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t e = 0; e < a.size(); ++e) ASSERT_TRUE(close(a[e], b[e])) << "matrix " << e;
}

TEST(Collection, AddsReplacementsAndDeletesAnswerAsOneBuild) {
  const Demo d;
  ASSERT_EQ(d.docs.size(), 120u);
  const std::string dir = fresh_dir("col-answers");
  Collection::create(dir, d.build(d.range(0, 60)), demo("embeddings.bin"));
  CollectionWriter w(dir, 30, false);  // unmerged: several segments, each with deletions
  EXPECT_EQ(w.add(d.range(60, 90)).added, 30u);
  EXPECT_EQ(w.add(d.range(90, 120)).added, 30u);
  // Two known ids with other texts: replaced, their new versions last.
  std::vector<RawDocument> again = {d.docs[5], d.docs[70]};
  again[0].text = d.docs[100].text;
  again[1].text = d.docs[3].text;
  const CollectionChange r = w.add(again);
  EXPECT_EQ(r.added, 2u);
  EXPECT_EQ(r.replaced, 2u);
  const std::set<std::string> gone = {d.docs[0].id, d.docs[17].id, d.docs[65].id, d.docs[95].id,
                                      d.docs[119].id};
  const CollectionChange del = w.remove({d.docs[0].id, d.docs[17].id, d.docs[65].id, d.docs[95].id,
                                         d.docs[119].id, "no-such-id", d.docs[0].id});
  EXPECT_EQ(del.deleted, 5u);
  EXPECT_EQ(del.not_found, std::vector<std::string>{"no-such-id"});
  EXPECT_EQ(del.generation, 5u);

  std::vector<RawDocument> live;
  for (std::size_t i = 0; i < d.docs.size(); ++i)
    if (!gone.contains(d.docs[i].id) && i != 5 && i != 70) live.push_back(d.docs[i]);
  live.insert(live.end(), again.begin(), again.end());
  const Collection c = Collection::open(dir);
  EXPECT_EQ(c.n_docs(), live.size());
  EXPECT_EQ(c.n_segments(), 4u);
  EXPECT_EQ(c.n_deleted(), 7u);
  EXPECT_EQ(c.generation(), 5u);
  expect_one_builds_answers(d, c, live);

  // Compaction: one segment, the bytes of one build of the live documents.
  EXPECT_EQ(w.compact().segments, 1u);
  const Collection one = Collection::open(dir);
  EXPECT_TRUE(one.is_one_index());
  const std::string built = (test::temp_dir() / "col-answers.idx").string();
  Index::save(d.build(live), built);
  EXPECT_EQ(test::read_file(one.segment(0).source()), test::read_file(built));
  expect_one_builds_answers(d, one, live);
  // Only the manifest, the lock and the one segment are left.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 3u);
}

// One segment with deletions: every method, the hybrid's standardisation included, answers as
// the build without them.
TEST(Collection, DeletedDocumentsLeaveEveryMethodsAnswers) {
  const Demo d;
  const std::string dir = fresh_dir("col-deleted");
  Collection::create(dir, d.build(d.docs), demo("embeddings.bin"));
  std::vector<std::string> ids;
  std::vector<RawDocument> live;
  for (std::size_t i = 0; i < d.docs.size(); ++i)
    (i % 7 == 3 ? ids.push_back(d.docs[i].id) : live.push_back(d.docs[i]));
  CollectionWriter(dir).remove(ids);
  const Collection c = Collection::open(dir);
  ASSERT_EQ(c.n_segments(), 1u);
  ASSERT_FALSE(c.is_one_index());
  expect_one_builds_answers(d, c, live);
  EXPECT_THROW(load_index(dir), Error);
}

TEST(Collection, LiveDocumentsAreNumberedWithoutTheDeleted) {
  const Demo d;
  const std::string dir = fresh_dir("col-numbers");
  Collection::create(dir, d.build(d.range(0, 10)), demo("embeddings.bin"));
  CollectionWriter w(dir);
  w.add(d.range(10, 20));
  w.remove({d.docs[0].id, d.docs[4].id, d.docs[5].id, d.docs[9].id, d.docs[12].id});
  const Collection c = Collection::open(dir);
  const SegmentSet set = c.documents();
  std::vector<std::string> want;
  for (std::size_t i = 0; i < 20; ++i)
    if (i != 0 && i != 4 && i != 5 && i != 9 && i != 12) want.push_back(d.docs[i].id);
  ASSERT_EQ(set.n_docs(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(set.doc_id(i), want[i]);
    EXPECT_EQ(set.find_doc(want[i]), i);
    const auto [s, local] = set.locate(i);
    EXPECT_EQ(set.collection_doc(s, local), i);
  }
  EXPECT_FALSE(set.find_doc(d.docs[4].id));
  EXPECT_THROW(set.locate(want.size()), Error);
}

TEST(Collection, RefusesWhatItCannotKeepRight) {
  const Demo d;
  IndexData tfidf = d.build(d.range(0, 5));
  tfidf.weighting = Weighting::tfidf;
  EXPECT_THROW(Collection::create(fresh_dir("col-tfidf"), tfidf, demo("embeddings.bin")), Error);
  const std::string dir = fresh_dir("col-refuse");
  Collection::create(dir, d.build(d.range(0, 5)), demo("embeddings.bin"));
  EXPECT_THROW(Collection::create(dir, d.build(d.range(0, 5)), demo("embeddings.bin")), Error)
      << "a non-empty directory";
  CollectionWriter w(dir);
  // Other embeddings: refused, naming the recorded ones.
  const std::string other =
      test::write_file("col-other.vec", "1 300\nfoo" + std::string(300 * 2, ' ') + "\n");
  try {
    w.add(d.range(5, 6), other);
    ADD_FAILURE() << "other embeddings taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not the embeddings"), std::string::npos) << e.what();
  }
  // No document with a word, none replacing: nothing to add, nothing committed.
  EXPECT_THROW(w.add({RawDocument{"new", "", "qqqqzzzz xxxyyy", 1}}), NothingToAdd);
  EXPECT_EQ(Collection::open(dir).generation(), 1u);
  // An id twice in one add: an Error naming the lines; nothing committed.
  std::vector<RawDocument> twice = d.range(5, 7);
  twice[1].id = twice[0].id;
  EXPECT_THROW(w.add(twice), Error);
  EXPECT_EQ(Collection::open(dir).generation(), 1u);
  // Every document deleted: refused.
  std::vector<std::string> all;
  for (std::size_t i = 0; i < 5; ++i) all.push_back(d.docs[i].id);
  EXPECT_THROW(w.remove(all), Error);
  EXPECT_EQ(Collection::open(dir).n_docs(), 5u);
}

TEST(Collection, ASecondWriterWaitsThenFails) {
  const Demo d;
  const std::string dir = fresh_dir("col-lock");
  Collection::create(dir, d.build(d.range(0, 5)), demo("embeddings.bin"));
  const int fd = ::open((dir + "/write.lock").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  try {
    CollectionWriter(dir, 0.2).remove({d.docs[0].id});
    ADD_FAILURE() << "a second writer went ahead";
  } catch (const CollectionBusy& e) {  // what a service answers 503 for
    EXPECT_NE(std::string(e.what()).find("another process"), std::string::npos) << e.what();
  }
  ::close(fd);  // released: the next writer goes ahead
  EXPECT_EQ(CollectionWriter(dir, 0.2).remove({d.docs[0].id}).deleted, 1u);
}

TEST(Collection, DamagedFilesAreNamedWhenOpened) {
  const Demo d;
  const std::string dir = fresh_dir("col-damage");
  Collection::create(dir, d.build(d.range(0, 10)), demo("embeddings.bin"));
  CollectionWriter(dir).remove({d.docs[2].id});
  const Collection c = Collection::open(dir);
  const std::string seg = c.segment(0).source();
  std::string del;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".del-") != std::string::npos) del = e.path().string();
  ASSERT_FALSE(del.empty());
  const auto expect_named = [&](const std::string& file, const std::string& why) {
    try {
      Collection::open(dir);
      ADD_FAILURE() << why << ": opened";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << why << ": " << e.what();
    }
  };
  const std::string seg_bytes = test::read_file(seg), del_bytes = test::read_file(del),
                    manifest = test::read_file(dir + "/manifest");
  const auto put = [](const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  };
  put(seg, seg_bytes.substr(0, seg_bytes.size() / 2));
  expect_named("seg-000001.idx", "a truncated segment");
  std::string flipped = seg_bytes;
  flipped[flipped.size() / 2] ^= 1;
  put(seg, flipped);
  expect_named("seg-000001.idx", "a segment's flipped bit");
  put(seg, seg_bytes);
  put(del, del_bytes.substr(0, del_bytes.size() - 3));
  expect_named(".del-", "a truncated deletion file");
  fs::remove(del);
  expect_named("missing", "a missing deletion file");
  put(del, del_bytes);
  put(dir + "/manifest", manifest.substr(0, manifest.size() - 10));
  expect_named("manifest", "a truncated manifest");
  put(dir + "/manifest", manifest);
  EXPECT_EQ(Collection::open(dir).n_docs(), 9u);
}

TEST(CollectionFiles, ManifestRoundTripsAndEveryDamageIsCaught) {
  collection::Manifest m;
  m.generation = 7;
  m.next_segment = 4;
  m.embeddings = "/data/vectors with spaces.bin";
  m.embeddings_fingerprint = 0x0123456789abcdefULL;
  m.segments.push_back({1, "seg-000001.idx", 100, 4096, "seg-000001.del-000006", 3});
  m.segments.push_back({3, "seg-000003.idx", 5, 512, "", 0});
  const std::string text = collection::format_manifest(m);
  const collection::Manifest back = collection::parse_manifest(text, "m");
  EXPECT_EQ(collection::format_manifest(back), text);
  EXPECT_EQ(back.embeddings, m.embeddings);
  ASSERT_EQ(back.segments.size(), 2u);
  EXPECT_EQ(back.segments[0].number, 1u);  // read from its file's name
  EXPECT_EQ(back.segments[1].number, 3u);
  // A segment named otherwise than the collection names them (its number is its deletion
  // files' too): refused, not renamed at the next commit.
  for (const char* name : {"seg-1.idx", "seg-99999999999999999999999.idx"}) {
    collection::Manifest odd = m;
    odd.segments[1].file = name;
    odd.segments[1].deletions.clear();
    EXPECT_THROW(collection::parse_manifest(collection::format_manifest(odd), "m"), Error) << name;
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::string bad = text;
    bad[i] ^= 0x20;
    EXPECT_THROW(collection::parse_manifest(bad, "m"), Error) << "byte " << i;
    EXPECT_THROW(collection::parse_manifest(text.substr(0, i), "m"), Error) << "length " << i;
  }
}

TEST(CollectionFiles, DeletionFilesRoundTripAndEveryDamageIsCaught) {
  const std::vector<std::uint32_t> del = {0, 3, 4, 99};
  const std::string bytes = collection::format_deletions(100, del);
  EXPECT_EQ(collection::parse_deletions(bytes, 100, "d"), del);
  EXPECT_THROW(collection::parse_deletions(bytes, 101, "d"), Error) << "another segment's";
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] ^= 1;
    EXPECT_THROW(collection::parse_deletions(bad, 100, "d"), Error) << "byte " << i;
    EXPECT_THROW(collection::parse_deletions(bytes.substr(0, i), 100, "d"), Error) << i;
  }
  const std::vector<std::uint32_t> unsorted = {3, 1};
  EXPECT_THROW(collection::parse_deletions(collection::format_deletions(100, unsorted), 100, "d"),
               Error);
  EXPECT_TRUE(collection::is_collection_file("seg-000001.idx"));
  EXPECT_TRUE(collection::is_collection_file("seg-000001.del-000002.tmp.AbC123"));
  EXPECT_FALSE(collection::is_collection_file("notes.txt"));
  EXPECT_FALSE(collection::is_collection_file("seg-x.idx"));
}

// A searcher of another backend than the CPU's: it cannot leave documents out itself.
class NotCpu final : public Searcher {
 public:
  explicit NotCpu(const Index& index) : cpu_(index) {}
  Backend backend() const override { return Backend::cuda; }
  const Index& index() const override { return cpu_.index(); }

 protected:
  SearchResults top_k(const QuerySet& q, std::size_t k, const SearchOptions& o,
                      SearchStats* stats) const override {
    EXPECT_TRUE(o.skip.empty());
    return cpu_.search(q, k, o, stats);
  }
  void all_distances(const QuerySet& q, const SearchOptions& o, const RowSink& sink,
                     SearchStats* stats) const override {
    cpu_.pairwise(q, o, sink, stats);
  }

 private:
  CpuSearcher cpu_;
};

// Left-out documents on a backend that cannot skip them: k + their number searched, dropped.
TEST(Collection, ABackendThatCannotSkipSearchesMoreAndDrops) {
  const Demo d;
  const Index ix = Index::from_data(d.build(d.docs));
  QueryOptions qo;
  qo.embeddings = &d.emb;
  const QuerySet q = make_query_set(ix, d.queries, qo);
  std::vector<std::uint32_t> skip;
  for (std::uint32_t i = 0; i < ix.n_docs(); i += 3) skip.push_back(i);
  for (const std::size_t k : {1u, 5u, 100u}) {
    SearchOptions o;
    o.skip = skip;
    const SearchResults a = NotCpu(ix).search(q, k, o), b = CpuSearcher(ix).search(q, k, o);
    ASSERT_EQ(a.k, b.k);
    EXPECT_EQ(a.indices, b.indices) << "k " << k;
    EXPECT_EQ(a.distances, b.distances) << "k " << k;
    for (const std::int64_t doc : a.indices)
      EXPECT_FALSE(doc >= 0 && doc % 3 == 0) << "a left-out document " << doc;
    // k past the documents left: each row ends with -1s.
    if (k == 100) {
      EXPECT_EQ(a.indices[ix.n_docs() - skip.size()], -1);
    }
  }
  SearchOptions o;
  const std::vector<std::uint32_t> unsorted = {5, 2};
  o.skip = unsorted;
  EXPECT_THROW(CpuSearcher(ix).search(q, 3, o), OptionError);
}

// Searches while a writer adds, deletes and compacts: every open reads a committed state
// (a commit's files removed meanwhile make it read the next), every search answers it.
TEST(Collection, SearchesWhileAWriterChangesIt) {
  const Demo d;
  const std::string dir = fresh_dir("col-concurrent");
  Collection::create(dir, d.build(d.range(0, 40)), demo("embeddings.bin"));
  std::atomic<bool> done{false};
  std::set<std::size_t> committed = {40};
  std::mutex m;
  std::thread writer([&] {
    CollectionWriter w(dir);
    for (std::size_t b = 40; b < 120; b += 10) {
      const std::size_t n = Collection::open(dir).n_docs() + 10;
      {
        const std::lock_guard lock(m);
        committed.insert(n);
      }
      w.add(d.range(b, b + 10));
      if (b % 30 == 0) {
        const std::lock_guard lock(m);
        committed.insert(n - 1);
        w.remove({d.docs[b].id});
      }
      if (b == 80) w.compact();
    }
    done = true;
  });
  QueryOptions qo;
  qo.embeddings = &d.emb;
  // A reader refreshed before each search, as the service and Python keep theirs.
  CollectionReader reader(dir, {});
  std::size_t opens = 0, swaps = 0;
  while (!done || opens == 0) {
    swaps += reader.refresh();
    const std::shared_ptr<const DocumentSnapshot> s = reader.acquire();
    const SegmentSet& set = s->documents();
    const SearchResults r = s->searcher().search(set.make_query_set(d.queries, qo), 3, {});
    ++opens;
    {
      const std::lock_guard lock(m);
      EXPECT_TRUE(committed.contains(set.n_docs())) << set.n_docs();
    }
    for (const std::int64_t i : r.indices)
      ASSERT_TRUE(i >= 0 && static_cast<std::size_t>(i) < set.n_docs());
  }
  writer.join();
  EXPECT_GT(opens, 1u);
  EXPECT_GT(swaps, 0u);
  reader.refresh();
  EXPECT_EQ(reader.acquire()->documents().n_docs(), 120u - 2);
  EXPECT_EQ(Collection::open(dir).n_docs(), 120u - 2);
}

// A reader serves one commit until refreshed; a snapshot held across a refresh answers for its
// own commit, whole; an index file is a snapshot that never changes.
TEST(CollectionReader, ServesACommitUntilRefreshedAndHeldSnapshotsStayWhole) {
  const Demo d;
  const std::string dir = fresh_dir("col-reader");
  Collection::create(dir, d.build(d.range(0, 50)), demo("embeddings.bin"));
  CollectionReader reader(dir, {});
  EXPECT_FALSE(reader.refresh());  // nothing new
  const std::shared_ptr<const DocumentSnapshot> before = reader.acquire();
  const std::shared_ptr<const Searcher> searcher = DocumentSnapshot::searcher_of(before);
  ASSERT_NE(before->collection(), nullptr);
  EXPECT_EQ(before->documents().n_docs(), 50u);
  EXPECT_NE(before->one_index(), nullptr);
  {
    CollectionWriter w(dir, 30, false);
    w.add(d.range(50, 70));
    w.remove({d.docs[3].id});
  }
  EXPECT_EQ(reader.acquire(), before);  // not until refreshed
  EXPECT_TRUE(reader.refresh());
  EXPECT_FALSE(reader.refresh());
  const std::shared_ptr<const DocumentSnapshot> after = reader.acquire();
  EXPECT_EQ(after->generation(), before->generation() + 2);
  EXPECT_EQ(after->documents().n_docs(), 69u);
  EXPECT_EQ(after->one_index(), nullptr);  // two segments, a deletion
  EXPECT_FALSE(after->documents().find_doc(d.docs[3].id));
  // The snapshot held since before answers as the first commit did.
  QueryOptions qo;
  qo.embeddings = &d.emb;
  const SearchResults r =
      searcher->search(before->documents().make_query_set(d.queries, qo), 50, {});
  EXPECT_EQ(r.k, 50u);
  EXPECT_TRUE(before->documents().find_doc(d.docs[3].id));
  // An index file: itself, for good.
  const std::string file = (test::temp_dir() / "reader.idx").string();
  Index::save(d.build(d.range(0, 10)), file);
  CollectionReader one(file, {});
  EXPECT_EQ(one.acquire()->collection(), nullptr);
  EXPECT_EQ(one.acquire()->documents().n_docs(), 10u);
  EXPECT_FALSE(one.refresh());
  // A collection is opened alone.
  EXPECT_THROW(DocumentSnapshot::open({file, dir}, false), Error);
}

// A refresh after one add opens the new segment alone: the others are the earlier snapshot's
// own (the same mappings, id tables and searchers); after a delete, every segment is shared and
// only the deletions are read again. The answers are a fresh open's.
TEST(CollectionReader, ARefreshOpensOnlyWhatChanged) {
  const Demo d;
  const std::string dir = fresh_dir("col-reopen");
  Collection::create(dir, d.build(d.range(0, 60)), demo("embeddings.bin"));
  CollectionReader reader(dir, {});
  CollectionWriter w(dir, 30, false);
  w.add(d.range(60, 80));
  ASSERT_TRUE(reader.refresh());
  const auto shared = [](const DocumentSnapshot& a, const DocumentSnapshot& b) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < a.documents().size(); ++i)
      for (std::size_t j = 0; j < b.documents().size(); ++j)
        n += &a.documents().segment(i) == &b.documents().segment(j);
    return n;
  };
  const std::shared_ptr<const DocumentSnapshot> two = reader.acquire();
  ASSERT_EQ(two->documents().size(), 2u);
  w.add(d.range(80, 81));
  ASSERT_TRUE(reader.refresh());
  const std::shared_ptr<const DocumentSnapshot> three = reader.acquire();
  ASSERT_EQ(three->documents().size(), 3u);
  EXPECT_EQ(shared(*two, *three), 2u);  // one segment opened: the new one
  w.remove({d.docs[5].id, d.docs[70].id});
  ASSERT_TRUE(reader.refresh());
  const std::shared_ptr<const DocumentSnapshot> deleted = reader.acquire();
  EXPECT_EQ(shared(*three, *deleted), 3u);
  EXPECT_EQ(deleted->documents().n_docs(), 79u);
  EXPECT_FALSE(deleted->documents().find_doc(d.docs[5].id));
  EXPECT_TRUE(three->documents().find_doc(d.docs[5].id));  // the held snapshot as it was
  const std::shared_ptr<const DocumentSnapshot> fresh = DocumentSnapshot::open({dir}, true);
  QueryOptions qo;
  qo.embeddings = &d.emb;
  for (const auto& [o, weights] : every_search()) {
    qo.weights = weights;
    const SearchResults a =
        deleted->searcher().search(deleted->documents().make_query_set(d.queries, qo), 10, o);
    const SearchResults b =
        fresh->searcher().search(fresh->documents().make_query_set(d.queries, qo), 10, o);
    EXPECT_EQ(a.indices, b.indices) << what(o, weights);
    EXPECT_EQ(a.distances, b.distances) << what(o, weights);
  }
}

// Ids found through each segment's id table (the writer's find_live, a set's find_doc) are those
// a scan of every live document finds, on collections changed at random by adds, replacements
// and deletes of one document or many, with merges.
TEST(Collection, IdsFoundThroughEachSegmentsTableAreAScans) {
  const Demo d;
  const std::string dir = fresh_dir("col-ids");
  Collection::create(dir, d.build(d.range(0, 30)), demo("embeddings.bin"));
  std::mt19937 rng(7);
  // A quarter of the adds merge (which drops the deleted documents); the rest leave deleted
  // documents in their segments for the tables to skip.
  CollectionWriter w(dir, 30, false), merging(dir, 30, true);
  std::vector<std::string> ids;  // every id used: the demo's, and new ones
  for (const RawDocument& doc : d.docs) ids.push_back(doc.id);
  std::map<std::string, std::size_t> scan;  // the live documents, in collection order
  for (std::size_t i = 0; i < 30; ++i) scan.emplace(d.docs[i].id, i);
  for (int step = 0; step < 40; ++step) {
    const std::size_t kind = rng() % 3, n = 1 + rng() % (rng() % 4 == 0 ? 12 : 2);
    std::vector<RawDocument> docs;
    std::set<std::string> taken;
    for (std::size_t i = 0; i < n; ++i) {
      RawDocument doc = d.docs[rng() % 40];  // few ids: each deleted, replaced and re-added often
      if (kind == 1) doc.id = "new-" + std::to_string(rng() % 20);  // added, or replaced later
      if (!taken.insert(doc.id).second) continue;
      docs.push_back(doc);
    }
    std::size_t live_before = 0;  // of the ids given, those live: what the writer must find
    for (const RawDocument& doc : docs) live_before += scan.contains(doc.id);
    if (kind == 2) {
      std::vector<std::string> gone;
      for (const RawDocument& doc : docs) gone.push_back(doc.id);
      const CollectionChange change = w.remove(gone);
      EXPECT_EQ(change.deleted, live_before) << "step " << step;
      EXPECT_EQ(change.not_found.size(), docs.size() - live_before) << "step " << step;
    } else {
      EXPECT_EQ((rng() % 4 == 0 ? merging : w).add(docs).replaced, live_before) << "step " << step;
      for (const RawDocument& doc : docs) ids.push_back(doc.id);
    }
    const Collection c = Collection::open(dir, false);
    scan.clear();
    std::size_t at = 0;
    for (std::size_t s = 0; s < c.n_segments(); ++s) {
      const Index& ix = c.segment(s);
      for (std::size_t i = 0; i < ix.n_docs(); ++i)
        if (!std::binary_search(c.deleted(s).begin(), c.deleted(s).end(), i)) {
          EXPECT_TRUE(scan.emplace(std::string(ix.doc_id(i)), at++).second) << ix.doc_id(i);
          EXPECT_EQ(ix.find_doc(ix.doc_id(i)), i);
        }
    }
    const SegmentSet live = c.documents();
    for (const std::string& id : ids) {
      const auto it = scan.find(id);
      const std::optional<std::size_t> found = live.find_doc(id);
      ASSERT_EQ(found.has_value(), it != scan.end()) << "step " << step << ": " << id;
      if (found) {
        EXPECT_EQ(*found, it->second) << id;
      }
    }
    EXPECT_FALSE(live.find_doc("never-added"));
  }
}

// Adds of one document each: after every add, at most nine segments of a tier (a tier: the
// base-10 logarithm of a segment's live documents) and the segments' vocabularies within 1.1
// times the distinct words (each segment's phase 1 runs over its own) unless the newest is
// less than a tenth of the one before; the answers one build's.
TEST(Collection, ManySmallAddsKeepFewSegmentsWithFewWordsTwice) {
  const Demo d;
  const std::string dir = fresh_dir("col-tiers");
  Collection::create(dir, d.build(d.range(0, 30)), demo("embeddings.bin"));
  CollectionWriter w(dir);
  std::size_t most = 0;
  std::vector<RawDocument> live = d.range(0, 30);
  for (std::size_t i = 30; i < 60; ++i) {
    // Every seventh add replaces an earlier document (its id, this text): the merges that
    // add calls for must leave the replaced version out.
    RawDocument doc = d.docs[i];
    if (i % 7 == 0) {
      doc.id = d.docs[i - 20].id;
      std::erase_if(live, [&](const RawDocument& r) { return r.id == doc.id; });
    }
    live.push_back(doc);
    w.add({doc});
    const Collection c = Collection::open(dir);
    const SegmentSet set = c.documents();
    std::map<int, std::size_t> per_tier;
    std::size_t words = 0;
    for (std::size_t s = 0; s < c.n_segments(); ++s) {
      ++per_tier[static_cast<int>(std::log10(static_cast<double>(c.segment(s).n_docs())))];
      words += c.segment(s).vocab_size();
    }
    for (const auto& [tier, n] : per_tier) EXPECT_LE(n, 9u) << "tier " << tier << " after " << i;
    const std::size_t n = c.n_segments();
    const auto live_in = [&](std::size_t s) { return c.segment(s).n_docs() - c.deleted(s).size(); };
    EXPECT_TRUE(n == 1 ||
                static_cast<double>(words) <= 1.1 * static_cast<double>(set.vocab_size()) ||
                live_in(n - 2) > 10 * live_in(n - 1))
        << words << " words in segments, " << set.vocab_size() << " distinct, after " << i;
    most = std::max(most, c.n_segments());
  }
  EXPECT_GT(most, 1u) << "every add merged everything";
  expect_one_builds_answers(d, Collection::open(dir), live);
}

// A merge made without the writer's lock while deletes and a replacement commit: placed under
// the lock, it carries their deletions over, and the collection answers as one build of what
// is live; a merge whose segments another writer merged meanwhile is not placed.
TEST(Collection, AMergeCarriesOverWhatWasDeletedWhileItWasMade) {
  const Demo d;
  const std::string dir = fresh_dir("col-merge-while");
  Collection::create(dir, d.build(d.range(0, 30)), demo("embeddings.bin"));
  CollectionWriter w(dir, 30, false);
  for (std::size_t i = 30; i < 42; ++i) w.add({d.docs[i]});
  const collection::State before = collection::read_state(dir, false);
  ASSERT_EQ(before.segments.size(), 13u);
  const collection::PreparedMerge p = collection::prepare_merge(before, {0, 13});
  // Meanwhile: deletions in the first, a middle and the last merging segment, and one outside
  // them (the replacement's new segment), and a replacement of a merging document.
  w.remove({d.docs[3].id, d.docs[31].id, d.docs[35].id, d.docs[41].id});
  w.add({d.docs[33]});
  w.remove({d.docs[33].id});
  w.add({d.docs[33], d.docs[44]});
  std::vector<RawDocument> live;
  for (std::size_t i = 0; i < 42; ++i)
    if (i != 3 && i != 31 && i != 35 && i != 41 && i != 33) live.push_back(d.docs[i]);
  live.push_back(d.docs[33]);
  live.push_back(d.docs[44]);
  {
    const collection::WriterLock lock(dir, 0);
    collection::State now = collection::read_state(dir, false);
    ASSERT_TRUE(collection::place_merge(dir, now, p));
    collection::commit(dir, now);
  }
  const Collection c = Collection::open(dir);
  EXPECT_EQ(c.n_segments(), 2u);
  EXPECT_EQ(c.n_docs(), live.size());
  expect_one_builds_answers(d, c, live);
  // Made, then its segments merged by another writer: not placed, nothing changed.
  const collection::PreparedMerge stale =
      collection::prepare_merge(collection::read_state(dir, false), {0, 2});
  CollectionWriter(dir).compact();
  const collection::WriterLock lock(dir, 0);
  collection::State now = collection::read_state(dir, false);
  EXPECT_FALSE(collection::place_merge(dir, now, stale));
  EXPECT_EQ(now.segments.size(), 1u);
  expect_one_builds_answers(d, Collection::open(dir), live);
}

TEST(Collection, MergeLaterDoesWhatAddsWouldHave) {
  // A writer that does not merge and has the embeddings in memory (a service's adds), then
  // merge() (its background merge): the segments, byte for byte, of a writer that merges as
  // it adds and reads the file, and the same answers.
  const Demo d;
  const std::string now = fresh_dir("col-merge-now"), later = fresh_dir("col-merge-later");
  for (const std::string& dir : {now, later})
    Collection::create(dir, d.build(d.range(0, 30)), demo("embeddings.bin"));
  const Embeddings all = Embeddings::load(demo("embeddings.bin"));
  CollectionWriter merging(now), deferred(later, 30, false);
  deferred.use_embeddings(all);
  for (std::size_t i = 30; i < 42; ++i) {
    merging.add({d.docs[i]});
    deferred.add({d.docs[i]});
  }
  const Collection unmerged = Collection::open(later);
  EXPECT_EQ(unmerged.n_segments(), 13u);
  const CollectionChange c = deferred.merge();
  EXPECT_GT(c.merges, 0u);
  EXPECT_EQ(c.generation, unmerged.generation() + c.merges);  // a commit each
  const Collection a = Collection::open(now), b = Collection::open(later);
  ASSERT_EQ(b.n_segments(), a.n_segments());
  EXPECT_LT(b.n_segments(), 13u);
  for (std::size_t s = 0; s < a.n_segments(); ++s)
    EXPECT_EQ(test::read_file(b.segment(s).source()), test::read_file(a.segment(s).source())) << s;
  expect_one_builds_answers(d, b, d.range(0, 42));
  // Nothing due: no commit.
  EXPECT_EQ(deferred.merge().generation, c.generation);
  EXPECT_EQ(Collection::last_generation(later), c.generation);
  // Compaction from memory: one build's bytes too.
  merging.compact();
  deferred.compact();
  EXPECT_EQ(test::read_file(Collection::open(later).segment(0).source()),
            test::read_file(Collection::open(now).segment(0).source()));
  // Embeddings in memory from another file: refused at the next change.
  std::string line = "1 300\nfoo";
  for (int i = 0; i < 300; ++i) line += " 0.5";
  const std::string other = test::write_file("col-merge-other.vec", line + "\n");
  const Embeddings wrong = Embeddings::load(other);
  deferred.use_embeddings(wrong);
  EXPECT_THROW(deferred.add({d.docs[50]}), Error);
}

}  // namespace
}  // namespace lcrwmd
