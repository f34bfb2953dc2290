// Every way of running a command gives the same bytes: each SIMD level, each phase-1
// precision, one process or mpirun's ranks (and a failing rank stops the job).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "app/cli_run.h"
#include "lcrwmd/corpus.h"
#include "lcrwmd/cpu.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

using namespace test;
namespace fs = std::filesystem;

// ---- SIMD levels: the same bytes whichever level runs (src/cpu/simd.h) ------------------

TEST(CliSimd, EveryLevelGivesTheSameBytes) {
  const std::string demo = std::string(LCRWMD_SOURCE_DIR) + "/data/demo";
  const std::string build = "build --embeddings " + demo + "/embeddings.bin --docs " + demo +
                            "/train.tsv --stopwords " + demo + "/stop_words.txt --output ";
  const std::string common = " --queries " + demo + "/queries.tsv --stopwords " + demo +
                             "/stop_words.txt --embeddings " + demo +
                             "/embeddings.bin --k 9 --backend cpu";
  // The index of each level (its stored norms come from the kernels too), then every method.
  std::map<std::string, std::string> first;
  for (const std::string level : {"", "scalar", "avx2", "avx512"}) {
    const std::string env = level.empty() ? "" : "LCRWMD_SIMD=" + level + " ";
    const std::string index = tmp("simd" + level + ".idx");
    CliRun r = lcrwmd_via(env + LCRWMD_CLI + " " + build + index);
    ASSERT_EQ(r.code, 0) << r.err;
    if (!level.empty()) {
      EXPECT_EQ(slurp(index), slurp(tmp("simd.idx"))) << level;
    }
    for (const std::string method :
         {"lc-rwmd", "lc-rwmd --one-sided", "lc-rwmd --batch 4", "rwmd", "wcd", "wmd"}) {
      r = lcrwmd_via(env + LCRWMD_CLI + " search --index " + index + common + " --method " +
                     method);
      ASSERT_EQ(r.code, 0) << r.err;
      if (level.empty())
        first[method] = r.out;
      else
        EXPECT_EQ(r.out, first[method]) << method << " at LCRWMD_SIMD=" << level;
    }
  }
  const CliRun scalar = lcrwmd_via("LCRWMD_SIMD=scalar " + std::string(LCRWMD_CLI) + " devices");
  EXPECT_EQ(scalar.out.rfind("cpu\tscalar kernels\t", 0), 0u) << scalar.out;
  // devices names OpenBLAS's kernels and, where they are below what the CPU runs, the variable
  // that selects others (none where our own kernels are capped below AVX2 too).
  const std::string prescott = "OPENBLAS_CORETYPE=Prescott ";
  const CliRun sse3 = lcrwmd_via(prescott + LCRWMD_CLI + " devices");
  EXPECT_NE(sse3.out.find("\nblas\tOpenBLAS "), std::string::npos) << sse3.out;
  EXPECT_NE(sse3.out.find(", Prescott kernels"), std::string::npos) << sse3.out;
  const std::string level = cpu_simd_level();
  EXPECT_EQ(sse3.out.find("OPENBLAS_CORETYPE=") != std::string::npos,
            level == "avx2" || level == "avx512")
      << sse3.out;
  const CliRun capped = lcrwmd_via(prescott + "LCRWMD_SIMD=scalar " + LCRWMD_CLI + " devices");
  EXPECT_EQ(capped.out.find("OPENBLAS_CORETYPE="), std::string::npos) << capped.out;
  const CliRun bad = lcrwmd_via("LCRWMD_SIMD=sse9 " + std::string(LCRWMD_CLI) + " search --index " +
                                tmp("simd.idx") + common);
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("LCRWMD_SIMD=sse9"), std::string::npos) << bad.err;
}

// ---- phase-1 precisions: the same bytes whichever precision, oneDNN kernel and SIMD level -

TEST(CliPrecision, EveryPrecisionGivesTheSameBytes) {
  const std::string demo = std::string(LCRWMD_SOURCE_DIR) + "/data/demo";
  const std::string index = tmp("precision.idx");
  ASSERT_EQ(lcrwmd("build --embeddings " + demo + "/embeddings.bin --docs " + demo +
                   "/train.tsv --stopwords " + demo + "/stop_words.txt --output " + index)
                .code,
            0);
  const std::string common = " --index " + index + " --queries " + demo +
                             "/queries.tsv --stopwords " + demo + "/stop_words.txt --embeddings " +
                             demo + "/embeddings.bin --backend cpu";
  const std::vector<std::string> runs = {"search --k 9 --method lc-rwmd",
                                         "search --k 9 --method lc-rwmd --one-sided --batch 3",
                                         "search --k 9 --method act --act-steps 2",
                                         "search --k 9 --method ict --one-sided",
                                         "search --k 5 --method wmd",
                                         "pairwise --method lc-rwmd --output "};
  // The f32 baseline of each run: its stdout, or for pairwise the .npy file.
  const auto output = [&](const std::string& env, const std::string& run,
                          const std::string& precision, CliRun& r) {
    const bool npy = run.rfind("pairwise", 0) == 0;
    const std::string file = tmp("precision.npy");
    r = lcrwmd_via(env + LCRWMD_CLI + " " + run + (npy ? file : "") + common + " --precision " +
                   precision);
    return npy ? slurp(file) : r.out;
  };
  std::map<std::string, std::string> want;
  for (const std::string& run : runs) {
    CliRun r;
    want[run] = output("", run, "f32", r);
    ASSERT_EQ(r.code, 0) << run << ": " << r.err;
    ASSERT_FALSE(want[run].empty()) << run;
  }
  std::size_t compared = 0;
  // oneDNN's kernels capped below AMX (VNNI, AVX-512 BF16), and our SIMD levels.
  for (const std::string env :
       {"", "DNNL_MAX_CPU_ISA=AVX512_CORE_VNNI ", "DNNL_MAX_CPU_ISA=AVX512_CORE_BF16 ",
        "LCRWMD_SIMD=scalar ", "LCRWMD_SIMD=avx2 "})
    for (const std::string precision : {"auto", "f32", "bf16", "int8"})
      for (const std::string& run : runs) {
        CliRun r;
        const std::string got = output(env, run, precision, r);
        if (r.code != 0 && r.err.find("which this CPU lacks") != std::string::npos) continue;
        ASSERT_EQ(r.code, 0) << env << run << " --precision " << precision << ": " << r.err;
        EXPECT_EQ(got, want[run]) << env << run << " --precision " << precision;
        ++compared;
      }
  EXPECT_GE(compared, 5 * 2 * runs.size());  // every environment ran f32 and auto at least
  // A precision the CPU lacks (oneDNN capped at AVX2): a clear error naming what is missing.
  const CliRun lacking = lcrwmd_via("DNNL_MAX_CPU_ISA=AVX2 " + std::string(LCRWMD_CLI) + " search" +
                                    common + " --precision int8");
  EXPECT_NE(lacking.code, 0);
  EXPECT_NE(lacking.err.find("AVX512_VNNI"), std::string::npos) << lacking.err;
  EXPECT_TRUE(lacking.out.empty());
  // devices names what auto takes; the search report counts the recomputed distances.
  const CliRun devices = lcrwmd("devices");
  EXPECT_NE(devices.out.find("phase 1\tauto: "), std::string::npos) << devices.out;
  CliRun r;
  output("", runs[0], "auto", r);
  EXPECT_NE(r.err.find("word distances recomputed per (vocabulary word, query)"), std::string::npos)
      << r.err;
}

// ---- mpirun: the same bytes as one process, and a failing rank stops the job -----------

#ifdef LCRWMD_MPIRUN
// mpirun on this machine; root may run it (CI containers do), ranks may outnumber cores.
CliRun mpirun(const std::string& ranks_and_args) {
  return lcrwmd_via("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 " +
                    std::string(LCRWMD_MPIRUN) + " --oversubscribe " + ranks_and_args);
}

class Mpi : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string demo = std::string(LCRWMD_SOURCE_DIR) + "/data/demo";
    index = tmp("mpi_demo.idx");
    common = " --index " + index + " --queries " + demo + "/queries.tsv --stopwords " + demo +
             "/stop_words.txt";
    const CliRun r = lcrwmd("build --embeddings " + demo + "/embeddings.bin --docs " + demo +
                            "/train.tsv --stopwords " + demo + "/stop_words.txt --output " + index);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  std::string index, common;
};

TEST_F(Mpi, OneTwoThreeRanksGiveTheSameBytes) {
  for (const std::string method : {"lc-rwmd", "lc-rwmd --one-sided", "wmd", "wcd"}) {
    const std::string args = "search" + common + " --k 7 --method " + method;
    const CliRun one = lcrwmd(args);
    ASSERT_EQ(one.code, 0) << one.err;
    ASSERT_FALSE(one.out.empty());
    for (int np : {1, 2, 3})
      for (const char* layout : {"docs", "queries"}) {
        const CliRun r = mpirun("-np " + std::to_string(np) + " " + LCRWMD_CLI + " " + args +
                                " --distribute " + layout);
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_EQ(r.out, one.out) << method << ", " << np << " ranks, " << layout;
      }
  }
  // pairwise: the ranks' blocks of rows, written by rank 0.
  ASSERT_EQ(lcrwmd("pairwise" + common + " --output " + tmp("p1.npy")).code, 0);
  for (int np : {2, 3}) {
    const std::string out = tmp(test::numbered('p', static_cast<std::size_t>(np)) + ".npy");
    const CliRun r = mpirun("-np " + std::to_string(np) + " " + LCRWMD_CLI + " pairwise" + common +
                            " --output " + out);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(slurp(out), slurp(tmp("p1.npy"))) << np << " ranks";
  }
  // eval: the same table (but for the time it took).
  auto untimed = [](std::string s) {
    const auto open = s.find(" ("), close = s.find(" s)");
    if (open != std::string::npos && close != std::string::npos) s.erase(open, close + 3 - open);
    return s;
  };
  const CliRun one = lcrwmd("eval knn" + common + " --k 1,3,5");
  ASSERT_EQ(one.code, 0) << one.err;
  const CliRun three =
      mpirun(std::string("-np 3 ") + LCRWMD_CLI + " eval knn" + common + " --k 1,3,5");
  ASSERT_EQ(three.code, 0) << three.err;
  EXPECT_EQ(untimed(three.out), untimed(one.out));
}

// A shard per rank, each rank mapping only its own: the bytes of the same shards in one process.
TEST_F(Mpi, AShardPerRankGivesTheCollectionsBytes) {
  const std::string demo = std::string(LCRWMD_SOURCE_DIR) + "/data/demo";
  const std::string base = tmp("mpi_shards.idx");
  const CliRun built =
      lcrwmd("build --embeddings " + demo + "/embeddings.bin --docs " + demo +
             "/train.tsv --stopwords " + demo + "/stop_words.txt --shards 3 " + "--output " + base);
  ASSERT_EQ(built.code, 0) << built.err;
  std::string shards;
  for (int i = 0; i < 3; ++i)
    shards += " --index " + tmp("mpi_shards." + std::to_string(i) + ".idx");
  const std::string args =
      "search" + shards + " --queries " + demo + "/queries.tsv --k 7 --with-text";
  for (const std::string method : {"lc-rwmd", "wmd", "act --one-sided"}) {
    const CliRun one = lcrwmd(args + " --method " + method);
    ASSERT_EQ(one.code, 0) << one.err;
    ASSERT_FALSE(one.out.empty());
    const CliRun three = mpirun("-np 3 " + std::string(LCRWMD_CLI) + " " + args + " --method " +
                                method + " --threads 1");
    ASSERT_EQ(three.code, 0) << three.err;
    EXPECT_EQ(three.out, one.out) << method;
  }
  // pairwise: rank 0 writes the rows, each rank's columns side by side.
  const std::string pairwise = "pairwise" + shards + " --queries " + demo + "/queries.tsv";
  ASSERT_EQ(lcrwmd(pairwise + " --output " + tmp("shards1.npy")).code, 0);
  const CliRun matrix = mpirun("-np 3 " + std::string(LCRWMD_CLI) + " " + pairwise +
                               " --threads 1 --output " + tmp("shards3.npy"));
  ASSERT_EQ(matrix.code, 0) << matrix.err;
  EXPECT_EQ(slurp(tmp("shards3.npy")), slurp(tmp("shards1.npy")));
  const CliRun wrong = mpirun("-np 2 " + std::string(LCRWMD_CLI) + " " + args);
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("give one shard per rank"), std::string::npos) << wrong.err;
}

// A collection of two segments (an add after the build), with deleted documents: a segment per
// rank answers as one process, bm25 and the hybrid with the collection's statistics; more ranks
// than segments are refused, naming the way out.
TEST_F(Mpi, ACollectionsSegmentsARankEachAnswerAsOneProcess) {
  const std::string demo = std::string(LCRWMD_SOURCE_DIR) + "/data/demo";
  const std::vector<RawDocument> docs = read_tsv(demo + "/train.tsv");
  const auto tsv = [](const std::string& name, std::size_t begin, std::size_t end,
                      const std::vector<RawDocument>& d) {
    std::string s;
    for (std::size_t i = begin; i < end; ++i)
      s += d[i].id + "\t" + d[i].label + "\t" + d[i].text + "\n";
    return test::write_file(name, s);
  };
  const std::string dir = tmp("mpi_collection");
  fs::remove_all(dir);
  const std::string built = "build --embeddings " + demo + "/embeddings.bin --docs " +
                            tsv("mpi_first.tsv", 0, 70, docs) + " --stopwords " + demo +
                            "/stop_words.txt --collection --output " + dir;
  ASSERT_EQ(lcrwmd(built).code, 0);
  const CliRun added = lcrwmd("add --no-merge --index " + dir + " --docs " +
                              tsv("mpi_more.tsv", 70, docs.size(), docs));
  ASSERT_EQ(added.code, 0) << added.err;
  const CliRun removed = lcrwmd("delete --index " + dir + " --ids " +
                                test::write_file("mpi_ids.txt", docs[2].id + "\n" + docs[80].id));
  ASSERT_EQ(removed.code, 0) << removed.err;
  const std::string args = "search --index " + dir + " --queries " + demo + "/queries.tsv --k 7";
  for (const std::string method :
       {"hybrid", "bm25", "lc-rwmd --direction query-to-document", "lc-rwmd", "wmd"}) {
    const CliRun one = lcrwmd(args + " --method " + method);
    ASSERT_EQ(one.code, 0) << one.err;
    ASSERT_FALSE(one.out.empty());
    const CliRun two = mpirun("-np 2 " + std::string(LCRWMD_CLI) + " " + args + " --method " +
                              method + " --threads 1");
    ASSERT_EQ(two.code, 0) << two.err;
    EXPECT_EQ(two.out, one.out) << method;
  }
  const CliRun three = mpirun("-np 3 " + std::string(LCRWMD_CLI) + " " + args);
  EXPECT_EQ(three.code, 1);
  EXPECT_NE(three.err.find("a collection of 2 segments cannot be shared by 3 ranks"),
            std::string::npos)
      << three.err;
}

TEST_F(Mpi, AFailingRankStopsTheJobWithAClearMessage) {
  // Rank 1 is given an index that does not exist (mpirun's MPMD syntax): it fails loading its
  // shard while rank 0 succeeds. The job must end, not hang, with rank 0 saying why.
  const auto out = tmp("mpi_fail.tsv");
  const std::string tail =
      " --queries " + std::string(LCRWMD_SOURCE_DIR) + "/data/demo/queries.tsv --output " + out;
  const CliRun r =
      mpirun("-np 1 " + std::string(LCRWMD_CLI) + " search --index " + index + tail + " : -np 1 " +
             LCRWMD_CLI + " search --index " + tmp("missing.idx") + tail);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.code, 124) << "the job hung until timeout";
  EXPECT_NE(r.err.find("rank 1 of 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing.idx"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}
#else
TEST(Mpi, Skipped) { GTEST_SKIP() << "built without MPI: distributed commands not tested"; }
#endif

}  // namespace
}  // namespace lcrwmd
