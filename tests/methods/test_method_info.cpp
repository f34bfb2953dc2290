// The methods' descriptions (lcrwmd/method.h) and the rules and plans that read them.
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <vector>

#include "lcrwmd/cpu.h"
#include "lcrwmd/explain.h"
#include "lcrwmd/gpu.h"
#include "lcrwmd/method.h"
#include "lcrwmd/searcher.h"
#include "methods/method_impl.h"
#include "search/batch_plan.h"
#include "test_util.h"

namespace lcrwmd {
namespace {

TEST(MethodInfo, EveryMethodOnceByItsName) {
  std::set<std::string> names;
  std::set<const MethodInfo*> seen;
  for (const Method m : methods()) {
    EXPECT_TRUE(names.insert(m.name()).second) << m.name();
    EXPECT_TRUE(seen.insert(&m.info()).second) << m.name();
    EXPECT_EQ(Method(m.name()), m);
    EXPECT_STREQ(to_string(m), m.name());
    EXPECT_GT(std::string(m->summary).size(), 20u) << m.name();
  }
  EXPECT_EQ(seen.size(), 8u);
  try {
    (void)Method("emd");
    FAIL() << "an unknown method was taken";
  } catch (const Error& e) {
    for (const std::string& n : names) EXPECT_NE(std::string(e.what()).find(n), std::string::npos);
  }
  EXPECT_EQ(method_names([](const MethodInfo& m) { return Method(m) == Method("wmd"); }), "wmd");
  EXPECT_EQ(method_names(), "bm25, hybrid, wcd, rwmd, lc-rwmd, wmd, act or ict");
}

// One default per kind of query, read from the descriptions: typed text bm25, documents the
// symmetric lc-rwmd; text asking a direction bm25 lacks falls to the documents' method.
TEST(MethodInfo, OneDefaultMethodPerKindOfQuery) {
  EXPECT_EQ(default_method(QueryKind::text), Method("bm25"));
  EXPECT_EQ(default_method(QueryKind::document), Method("lc-rwmd"));
  EXPECT_EQ(default_method(QueryKind::document)->default_direction(), Direction::symmetric);
  EXPECT_EQ(default_method(QueryKind::text, Direction::query_to_document), Method("bm25"));
  EXPECT_EQ(default_method(QueryKind::text, Direction::symmetric), Method("lc-rwmd"));
  EXPECT_EQ(default_method(QueryKind::text, Direction::document_to_query), Method("lc-rwmd"));
  EXPECT_EQ(default_method(QueryKind::document, Direction::query_to_document), Method("lc-rwmd"));
  EXPECT_EQ(SearchOptions{}.method, default_method(QueryKind::document));
  for (const QueryKind kind : {QueryKind::text, QueryKind::document}) {
    int defaults = 0;
    for (const Method m : methods()) defaults += m->default_for == kind;
    EXPECT_EQ(defaults, 1);
  }
}

// One rule for a direction: refused where the method does not have it, by the library's check,
// by every searcher and by explain; the relaxations have both one-sided forms, WMD and WCD none,
// BM25 and the hybrid only query-to-document.
TEST(MethodInfo, EachDirectionOnlyWhereTheMethodHasIt) {
  const Index ix = Index::from_data(test::random_index(20, 30, 5, 4, 2));
  const QuerySet qs = test::mixed_queries(ix, 2, 1);
  for (const Method m : methods()) {
    const bool search_box = m == Method("bm25") || m == Method("hybrid");
    const bool relaxation = m != Method("wmd") && m != Method("wcd") && !search_box;
    EXPECT_EQ(m->document_to_query, relaxation) << m.name();
    EXPECT_EQ(m->query_to_document, relaxation || search_box) << m.name();
    EXPECT_EQ(m->symmetric, !search_box) << m.name();
    for (const Direction d : kDirections) {
      SearchOptions o;
      o.method = m;
      o.direction = d;
      if (m->has(d)) {
        EXPECT_NO_THROW(check_options(o)) << m.name();
        // bm25 reads its queries' terms from text (test_bm25.cpp); these are made by hand.
        if (!m->reads_terms()) {
          EXPECT_NO_THROW(search(ix, qs, 3, o)) << m.name();
        }
        continue;
      }
      try {
        check_options(o);
        FAIL() << m.name() << ": a " << to_string(d) << " search was taken";
      } catch (const OptionError& e) {
        EXPECT_EQ(e.option(), "direction");
        EXPECT_NE(std::string(e.what()).find(m.name()), std::string::npos);
        EXPECT_NE(std::string(e.what()).find(to_string(d)), std::string::npos);
      }
      EXPECT_THROW(search(ix, qs, 3, o), OptionError) << m.name();
      if (m->explains()) {
        EXPECT_THROW(explain(ix, qs, 0, 0, m, d), OptionError) << m.name();
      }
    }
  }
  EXPECT_EQ(parse_direction("query-to-document"), Direction::query_to_document);
  EXPECT_THROW(parse_direction("both"), Error);
  SearchOptions too_many;
  too_many.method = Method("act");
  too_many.parameters.set("act_steps", static_cast<double>(kMaxActSteps + 1));
  EXPECT_THROW(check_options(too_many), OptionError);
}

// Every description points at what the library runs for it, and says what that does: a CPU
// computation for each, explain's flows exactly where the description says it explains, lazy
// bounds for LC-RWMD's top-k alone.
TEST(MethodInfo, EachDescriptionHasItsImplementation) {
  for (const Method m : methods()) {
    ASSERT_NE(m->impl, nullptr) << m.name();
    EXPECT_NE(implementation(m).cpu.make, nullptr) << m.name();
    EXPECT_EQ(implementation(m).explain != nullptr, m->explains()) << m.name();
    SearchOptions o;
    o.method = m;
    EXPECT_EQ(top_k_rows(o) == Rows::bounds, m == Method("lc-rwmd")) << m.name();
    o.prune = false;
    EXPECT_EQ(top_k_rows(o), Rows::distances) << m.name();
  }
}

TEST(MethodInfo, BackendAndExplainFollowTheDescription) {
  const Index ix = Index::from_data(test::random_index(20, 30, 5, 4, 2));
  const QuerySet qs = test::mixed_queries(ix, 2, 1);
  for (const Method m : methods()) {
    SearchOptions o;
    o.method = m;
    if (m->runs_on_gpu())
      EXPECT_EQ(resolve_backend(Backend::cuda, o), Backend::cuda) << m.name();
    else
      EXPECT_THROW(resolve_backend(Backend::cuda, o), OptionError) << m.name();
    if (m->query_to_document) {  // the CPU's alone: cuda refuses it, auto takes the CPU
      o.direction = Direction::query_to_document;
      try {
        resolve_backend(Backend::cuda, o);
        FAIL() << m.name() << " query-to-document on cuda";
      } catch (const OptionError& e) {
        EXPECT_EQ(e.option(), m->runs_on_gpu() ? "direction" : "method") << m.name();
      }
      EXPECT_EQ(resolve_backend(Backend::automatic, o), Backend::cpu) << m.name();
    }
    if (m->explains()) {
      EXPECT_NO_THROW(explain(ix, qs, 0, 1, m)) << m.name();
    } else {
      try {
        explain(ix, qs, 0, 1, m);
        FAIL() << m.name() << " explained";
      } catch (const OptionError& e) {
        EXPECT_EQ(e.option(), "method");
      }
    }
  }
}

TEST(MethodInfo, BatchesHoldAtMostTheMethodsCap) {
  const Index ix = Index::from_data(test::random_index(60, 40, 5, 6, 3));
  const QuerySet qs = test::mixed_queries(ix, 50, 4);
  for (const Method m : methods()) {
    SearchOptions o;
    o.method = m;
    std::size_t largest = 0;
    for (const BatchPlan& p : plan_batches(ix, qs, o, CpuOptions{}))
      largest = std::max(largest, p.end - p.begin);
    const std::size_t cap = implementation(m).cpu.max_batch;
    EXPECT_EQ(largest, cap ? cap : qs.size()) << m.name();
  }
}

// However much memory there is, LC-RWMD's batches stop at 65,536 query words (phase 1's strip
// of bounds then stays in the L2 cache), its top-k's (four times the bytes per pair) at 32,768;
// other methods take every query.
TEST(MethodInfo, LcRwmdBatchesStopAtTheirWordCap) {
  const Index ix = Index::from_data(test::random_index(60, 40, 5, 6, 3));
  QuerySet qs;
  const std::size_t n = 2000, h = 40;  // 80,000 query words
  std::vector<std::uint32_t> words(h);
  std::iota(words.begin(), words.end(), 0u);
  for (std::size_t q = 0; q < n; ++q) test::add_query(qs, std::to_string(q), words);
  CpuOptions big;
  big.memory_budget = std::size_t{64} << 30;
  for (const Direction direction : kDirections) {
    SearchOptions o;
    o.direction = direction;
    const std::vector<BatchPlan> plans = plan_batches(ix, qs, o, big);
    ASSERT_EQ(plans.size(), 2u);
    EXPECT_EQ(plans[0].end - plans[0].begin, 65536 / h);  // whole queries within the cap
    EXPECT_EQ(plans[1].end, n);
    const std::vector<BatchPlan> top_k = plan_batches(ix, qs, o, big, Rows::bounds);
    ASSERT_EQ(top_k.size(), 3u);
    EXPECT_EQ(top_k[0].end - top_k[0].begin, 32768 / h);
    EXPECT_EQ(top_k[2].end, n);
  }
  SearchOptions act;
  act.method = Method("act");
  EXPECT_EQ(plan_batches(ix, qs, act, big).size(), 1u);
}

// The working memory of one query, as a top-k search counts it: its row, per vocabulary word
// LC-RWMD's bound of the minimum and 12 bytes for refining it, and for symmetric search the
// v x h word distances.
TEST(MethodInfo, QueryWorkingMemory) {
  const Index ix = Index::from_data(test::random_index(60, 40, 5, 6, 3));
  const std::size_t n = ix.n_docs(), v = ix.vocab_size(), h = 7;
  SearchOptions o;
  o.direction = Direction::document_to_query;
  EXPECT_EQ(cpu_query_bytes(ix, o, h), 4 * n + 16 * v);
  o.prune = false;  // every distance: the minimum alone
  EXPECT_EQ(cpu_query_bytes(ix, o, h), 4 * (n + v));
  o.prune = true;
  o.direction = Direction::symmetric;
  EXPECT_EQ(cpu_query_bytes(ix, o, h), 4 * n + 16 * v + 4 * v * h);
  o.direction = Direction::query_to_document;  // the cache and B2's terms, no bounds to refine
  EXPECT_EQ(cpu_query_bytes(ix, o, h), 4 * n + 4 * v + 4 * v * h);
  o.direction = Direction::symmetric;
  o.method = Method("wcd");
  EXPECT_EQ(cpu_query_bytes(ix, o, h), 4 * n);
  o.method = Method("act");
  // Three (cost, weight) pairs and the symmetric minimum, and the cache.
  o.parameters.set("act_steps", 2);
  EXPECT_EQ(cpu_query_bytes(ix, o, h), 4 * (n + v * 7 + v * h));
}

}  // namespace
}  // namespace lcrwmd
