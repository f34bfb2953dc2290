// A collection through the command line: its commands, and what a crash, a kill -9 at any
// moment or a full disk leaves (a committed state, never half of one).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "app/cli_run.h"
#include "collection/collection_files.h"
#include "lcrwmd/collection.h"

extern char** environ;

namespace lcrwmd::test {
namespace {

// The live ids of a collection, in order, then its segments' count.
std::vector<std::string> live_ids(const std::string& dir) {
  const Collection c = Collection::open(dir);
  const SegmentSet set = c.documents();
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < set.n_docs(); ++i) ids.emplace_back(set.doc_id(i));
  ids.push_back(std::to_string(c.n_segments()) + " segments, " + std::to_string(c.n_deleted()) +
                " deleted");
  return ids;
}

// Every file of the collection is the manifest, the lock or one the manifest names.
void expect_only_referenced_files(const std::string& dir) {
  const std::string manifest = slurp(dir + "/manifest");
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == "manifest" || name == "write.lock") continue;
    EXPECT_NE(manifest.find(" " + name), std::string::npos) << dir << ": stray file " << name;
  }
}

// The demo corpus as a collection of its first 80 documents (the others to add), made once.
class CliCollection : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::vector<RawDocument> docs = read_tsv(demo_dir() + "/train.tsv");
    const auto write = [](const std::string& name, const std::vector<RawDocument>& d) {
      std::string s;
      for (const RawDocument& r : d) s += r.id + "\t" + r.label + "\t" + r.text + "\n";
      return write_file(name, s);
    };
    first_ = write("col-first.tsv", {docs.begin(), docs.begin() + 80});
    // 40 new documents and a known id with another text: a replacement.
    std::vector<RawDocument> more(docs.begin() + 80, docs.end());
    more.push_back(docs[3]);
    more.back().text = docs[100].text;
    more_ = write("col-more.tsv", more);
    ids_ = write_file("col-ids.txt", docs[0].id + "\n" + docs[10].id + "\r\n\n" + docs[90].id);
    base_ = tmp("col-base");
    fs::remove_all(base_);
    const CliRun r = lcrwmd("build --embeddings " + demo_dir() + "/embeddings.bin --docs " +
                            first_ + " --stopwords " + demo_dir() + "/stop_words.txt --output " +
                            base_ + " --collection");
    ASSERT_EQ(r.code, 0) << r.err;
  }

  // A copy of the base collection, changed by `steps` (command lines after "lcrwmd").
  static std::string copy_of_base(const std::string& name, const std::vector<std::string>& steps) {
    const std::string dir = tmp(name);
    fs::remove_all(dir);
    fs::copy(base_, dir);
    for (const std::string& s : steps) {
      const CliRun r = lcrwmd(s + " --index " + dir);
      EXPECT_EQ(r.code, 0) << s << ": " << r.err;
    }
    return dir;
  }

  static std::string add() { return "add --docs " + more_; }
  static std::string del() { return "delete --ids " + ids_; }

  static inline std::string first_, more_, ids_, base_;
};

TEST_F(CliCollection, AddDeleteCompactAndEveryCommandReadsIt) {
  const std::string dir = copy_of_base("col-cli", {});
  const std::string q = " --queries " + demo_dir() + "/queries.tsv --embeddings " + demo_dir() +
                        "/embeddings.bin --k 3";
  CliRun r = lcrwmd(add() + " --index " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("added 41 documents (1 replacing"), std::string::npos) << r.err;
  r = lcrwmd(del() + " --id no-such-id --index " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("deleted 3 documents"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 ids name no live document (nothing to delete): no-such-id"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(live_ids(dir).size(), 117u + 1);
  r = lcrwmd("info --index " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("117 live, 3 deleted"), std::string::npos) << r.out;
  r = lcrwmd("search --index " + dir + q);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 30) << r.out;
  // What reads one index refuses several segments, naming the way out.
  for (const std::string& cmd : {"pairs --max-distance 5 --index " + dir,
                                 "eval knn --index " + dir + q.substr(0, q.find(" --k"))}) {
    r = lcrwmd(cmd);
    EXPECT_NE(r.code, 0) << cmd;
    EXPECT_NE(r.err.find("lcrwmd compact --index"), std::string::npos) << cmd << ": " << r.err;
  }
  r = lcrwmd("compact --index " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("117 live documents in 1 segment,"), std::string::npos) << r.err;
  expect_only_referenced_files(dir);
  r = lcrwmd("eval knn --index " + dir + q.substr(0, q.find(" --k")));
  EXPECT_EQ(r.code, 0) << r.err;
  // Bad requests: a clear error, nothing changed.
  const std::uint64_t generation = Collection::open(dir).generation();
  for (const std::string& cmd : std::vector<std::string>{
           "delete --index " + dir, "add --docs /no/such.tsv --index " + dir,
           "add --docs " + more_ + " --embeddings " + demo_dir() + "/queries.tsv --index " + dir,
           "add --docs " + more_ + " --index " + demo_dir(),
           "delete --id x --index /no/such/dir"}) {
    r = lcrwmd(cmd);
    EXPECT_NE(r.code, 0) << cmd;
    EXPECT_FALSE(r.err.empty()) << cmd;
  }
  EXPECT_EQ(Collection::open(dir).generation(), generation);
}

struct Op {
  std::string name, command;
  std::vector<std::string> before;  // steps from the base to its starting state
};

// Killed at each point of each change (between a file's sync and its rename, after each
// rename, between the data and the manifest, after the commit): the collection opens and holds
// the state before the change or after it; the next change removes what the killed one left.
TEST_F(CliCollection, KilledAtEveryPointLeavesACommittedState) {
  // add: with the merges it calls for; delete and compact: on two segments (--no-merge).
  const std::vector<Op> ops = {{"add", add(), {}},
                               {"delete", del(), {add() + " --no-merge"}},
                               {"compact", "compact", {add() + " --no-merge", del()}}};
  const std::vector<std::string> points = {
      "atomic-file:synced#1",       "atomic-file:synced#2",         "atomic-file:synced#3",
      "atomic-file:renamed#1",      "atomic-file:renamed#2",        "atomic-file:renamed#3",
      "collection:segment-written", "collection:deletions-written", "collection:committed"};
  for (const Op& op : ops) {
    const std::string ref = copy_of_base("col-ref-" + op.name, op.before);
    const std::vector<std::string> before = live_ids(ref);
    ASSERT_EQ(lcrwmd(op.command + " --index " + ref).code, 0);
    const std::vector<std::string> after = live_ids(ref);
    ASSERT_NE(before, after);
    std::size_t killed = 0;
    for (const std::string& point : points) {
      const std::string dir = copy_of_base("col-crash", op.before);
      const CliRun r = lcrwmd_via("LCRWMD_CRASH_AT=" + point + " " + LCRWMD_CLI + " " + op.command +
                                  " --index " + dir);
      const std::string what = op.name + " killed at " + point;
      // Killed (the shell's 128 + SIGKILL), or done where the change never reaches the point.
      ASSERT_TRUE(r.code == 128 + SIGKILL || r.code == 0) << what << ": " << r.code << r.err;
      killed += r.code != 0;
      const std::vector<std::string> now = live_ids(dir);
      EXPECT_TRUE(now == before || now == after) << what;
      if (r.code == 0) {
        EXPECT_EQ(now, after) << what;
      }
      // The next writer goes ahead and clears what the killed one left behind.
      const CliRun next = lcrwmd("delete --id " + now.front() + " --index " + dir);
      ASSERT_EQ(next.code, 0) << what << ": " << next.err;
      expect_only_referenced_files(dir);
    }
    // Every point each change passes: add writes four files (the replaced document's deletion
    // file, its segment, the merged segment, the manifest), delete three (a deletion file per
    // segment, the manifest), compact two.
    EXPECT_EQ(killed, op.name == "add" ? 9u : op.name == "delete" ? 8u : 6u) << op.name;
  }
}

// kill -9 at random moments of an add: always a committed state.
TEST_F(CliCollection, KilledAtRandomMomentsLeavesACommittedState) {
  const std::string ref = copy_of_base("col-ref-random", {});
  const std::vector<std::string> before = live_ids(ref);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(lcrwmd(add() + " --index " + ref).code, 0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<std::string> after = live_ids(ref);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> when(0.0, took);
  std::size_t killed = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = copy_of_base("col-random", {});
    const std::string index = dir;
    std::vector<std::string> args = {LCRWMD_CLI, "add", "--docs", more_, "--index", index};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t io;
    posix_spawn_file_actions_init(&io);
    posix_spawn_file_actions_addopen(&io, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, LCRWMD_CLI, &io, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&io);
    std::this_thread::sleep_for(std::chrono::duration<double>(when(rng)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    killed += WIFSIGNALED(status) ? 1 : 0;
    const std::vector<std::string> now = live_ids(dir);
    EXPECT_TRUE(now == before || now == after) << "kill " << i;
  }
  EXPECT_GT(killed, 0u) << "every add finished before its kill";
}

// A full disk (a file size limit, its signal ignored): an error naming the file, the collection
// as it was, no temporary left.
TEST_F(CliCollection, AFullDiskIsAnErrorAndChangesNothing) {
  const std::string dir = copy_of_base("col-full", {});
  const std::vector<std::string> before = live_ids(dir);
  const CliRun r = lcrwmd_via("trap '' XFSZ; ulimit -f 256; exec " + std::string(LCRWMD_CLI) + " " +
                              add() + " --index " + dir);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("seg-000002.idx"), std::string::npos) << r.err;
  EXPECT_EQ(live_ids(dir), before);
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

}  // namespace
}  // namespace lcrwmd::test
