#include "bench_writes.h"

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "lcrwmd/collection.h"
#include "lcrwmd/collection_reader.h"
#include "lcrwmd/corpus.h"
#include "lcrwmd/error.h"
#include "lcrwmd/text.h"
#include "lcrwmd/word_vectors.h"

namespace lcrwmd::bench {
namespace {

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

void add_times(Report& rep, const std::string& what, const std::vector<double>& s) {
  rep.add(what + ", p50 (ms)", 1e3 * percentile(s, 0.5), "ms");
  rep.add(what + ", p99 (ms)", 1e3 * percentile(s, 0.99), "ms");
}

}  // namespace

void write_benchmarks(const WritesRun& run, Report& rep) {
  const std::vector<RawDocument> docs = read_tsv(run.docs);
  if (docs.size() < 2 * run.single + run.bulk)
    throw Error(run.docs + ": " + std::to_string(docs.size()) + " documents; the run adds " +
                std::to_string(2 * run.single + run.bulk));
  double t_open = 0;
  std::unique_ptr<CollectionReader> reader;
  t_open = seconds_of([&] {
    reader = std::make_unique<CollectionReader>(run.collection, CollectionReaderOptions{});
  });
  const std::size_t n = reader->acquire()->documents().n_docs();
  std::printf("%s: %zu live documents in %zu segments\n", run.collection.c_str(), n,
              reader->acquire()->documents().size());
  rep.figure("documents", static_cast<double>(n));
  rep.add("open the collection and make its searcher (s)", t_open, "s");
  const std::unique_ptr<WordVectors> vectors =
      open_word_vectors(Collection::open(run.collection, false).embeddings());
  // Merges left to merge(), as the service leaves them to its background.
  CollectionWriter writer(run.collection, 30, false);
  writer.use_embeddings(*vectors);

  std::vector<double> add, refresh, find, del, del_refresh;
  std::size_t next = 0;
  for (std::size_t i = 0; i < run.single; ++i) {
    add.push_back(seconds_of([&] { writer.add({docs[next++]}); }));
    refresh.push_back(seconds_of([&] { reader->refresh(); }));
  }
  std::mt19937 rng(1);
  const std::shared_ptr<const DocumentSnapshot> now = reader->acquire();
  std::vector<std::string> ids;
  while (ids.size() < 200 + run.single) {  // distinct: the last ones are deleted below
    std::string id(now->documents().doc_id(rng() % now->documents().n_docs()));
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(std::move(id));
  }
  const std::size_t rss0 = status_kib("VmRSS:");
  const double first = seconds_of([&] { (void)now->documents().find_doc(ids[0]); });
  const double table_mib = static_cast<double>(status_kib("VmRSS:") - rss0) / 1024;
  for (const std::string& id : ids)
    find.push_back(seconds_of([&] {
      if (!now->documents().find_doc(id)) throw Error("lost " + id);
    }));
  for (std::size_t i = 0; i < run.single; ++i) {  // documents of the collection's own
    const std::string& id = ids[ids.size() - 1 - i];
    del.push_back(seconds_of([&] { writer.remove({id}); }));
    del_refresh.push_back(seconds_of([&] { reader->refresh(); }));
  }
  add_times(rep, "one document added (written, committed)", add);
  add_times(rep, "the refresh that makes it searchable", refresh);
  rep.add("a document found by id, the first time: its segments' id tables built (ms)", 1e3 * first,
          "ms");
  rep.add("resident memory of those tables (MiB)", table_mib, "MiB");
  add_times(rep, "a document found by id", find);
  add_times(rep, "one document of the collection's deleted (committed)", del);
  add_times(rep, "the refresh after a delete", del_refresh);
  if (run.bulk > 0) {
    const std::vector<RawDocument> many(
        docs.begin() + static_cast<std::ptrdiff_t>(next),
        docs.begin() + static_cast<std::ptrdiff_t>(next + run.bulk));
    rep.add(std::to_string(run.bulk) + " documents in one add (s)",
            seconds_of([&] { writer.add(many); }), "s");
    rep.add("its refresh (ms)", 1e3 * seconds_of([&] { reader->refresh(); }), "ms");
  }
  rep.add("segments at the end", static_cast<double>(reader->acquire()->documents().size()), "");
}

}  // namespace lcrwmd::bench
