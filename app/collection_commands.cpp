// lcrwmd add, delete and compact: changing a collection (lcrwmd/collection.h).
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/query_input.h"
#include "lcrwmd/collection.h"
#include "lcrwmd/corpus.h"
#include "lcrwmd/error.h"
#include "lcrwmd/plural.h"

namespace lcrwmd::app {
namespace {

struct CollectionFlags {
  std::string index, embeddings;
  double wait = 30;
};

void add_collection_flags(CLI::App* c, CollectionFlags& f) {
  c->add_option("--index", f.index, "Collection directory (from `lcrwmd build --collection`)")
      ->required();
  c->add_option("--wait", f.wait,
                "Seconds to wait for another process changing the collection, then fail")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
}

// A writer of the collection the flags name, which says so on stderr where it waits for
// another process's change.
CollectionWriter writer(const CollectionFlags& f, bool merge = true) {
  CollectionWriter w(f.index, f.wait, merge);
  w.on_wait([](const std::string& message) { note("%s", message.c_str()); });
  return w;
}

void report(const std::string& path, const CollectionChange& ch) {
  const Collection c = Collection::open(path, false);
  note("collection %s: generation %llu, %s in %s, %zu deleted awaiting compaction", path.c_str(),
       static_cast<unsigned long long>(ch.generation), plural(c.n_docs(), "live document").c_str(),
       plural(c.n_segments(), "segment").c_str(), c.n_deleted());
}

// Ids, one per line (blank lines skipped, a trailing CR dropped).
std::vector<std::string> read_ids(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open");
  std::vector<std::string> ids;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) ids.push_back(std::move(line));
  }
  if (in.bad()) throw Error(path + ": read failed");
  return ids;
}

}  // namespace

void add_collection_commands(CLI::App& app) {
  {
    auto* c = app.add_subcommand(
        "add", "Add documents to a collection (an id it holds already: replaced), durably");
    auto f = std::make_shared<CollectionFlags>();
    auto docs = std::make_shared<std::string>();
    add_collection_flags(c, *f);
    c->add_option("--docs", *docs, "Documents: TSV id<TAB>label<TAB>text (.gz ok)")->required();
    c->add_option("--embeddings", f->embeddings,
                  "The embeddings the collection was built from (default: the path it recorded)");
    auto no_merge = std::make_shared<bool>(false);
    c->add_flag("--no-merge", *no_merge,
                "Leave the segments unmerged (a bulk load of many adds, compacted at its end)");
    c->callback([f, docs, no_merge] {
      const auto t = Clock::now();
      const std::vector<RawDocument> documents = read_tsv(*docs);
      CollectionWriter w = writer(*f, !*no_merge);
      const CollectionChange ch = w.add(documents, f->embeddings);
      report_text(ch.report, "documents");
      note("added %s (%zu replacing documents with their ids) (%.2f s)",
           plural(ch.added, "document").c_str(), ch.replaced, since(t));
      report(f->index, ch);
    });
  }
  {
    auto* c = app.add_subcommand("delete", "Delete documents from a collection by id, durably");
    auto f = std::make_shared<CollectionFlags>();
    auto ids_file = std::make_shared<std::string>();
    auto ids = std::make_shared<std::vector<std::string>>();
    add_collection_flags(c, *f);
    c->add_option("--ids", *ids_file, "File of ids, one per line");
    c->add_option("--id", *ids, "An id (repeatable)");
    c->callback([f, ids_file, ids] {
      std::vector<std::string> all = *ids;
      if (!ids_file->empty())
        for (std::string& id : read_ids(*ids_file)) all.push_back(std::move(id));
      if (all.empty()) throw Error("delete: give --ids FILE or --id ID");
      CollectionWriter w = writer(*f);
      const CollectionChange ch = w.remove(all);
      note("deleted %s", plural(ch.deleted, "document").c_str());
      if (!ch.not_found.empty()) {
        std::string list;
        for (std::size_t i = 0; i < ch.not_found.size() && i < 5; ++i)
          list += (i ? ", " : "") + ch.not_found[i];
        note("%zu ids name no live document (nothing to delete): %s%s", ch.not_found.size(),
             list.c_str(), ch.not_found.size() > 5 ? ", ..." : "");
      }
      report(f->index, ch);
    });
  }
  {
    auto* c = app.add_subcommand(
        "compact",
        "Rewrite a collection's live documents as one segment (what one build of them gives)");
    auto f = std::make_shared<CollectionFlags>();
    add_collection_flags(c, *f);
    c->callback([f] {
      const auto t = Clock::now();
      CollectionWriter w = writer(*f);
      const CollectionChange ch = w.compact();
      note("compacted (%.2f s)", since(t));
      report(f->index, ch);
    });
  }
}

}  // namespace lcrwmd::app
