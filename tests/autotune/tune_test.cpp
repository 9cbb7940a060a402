// The one cache-or-find step (autotune/cache.hpp) and the tuning run behind
// `convlab tune` (autotune/tune.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "autotune/cache.hpp"
#include "autotune/tune.hpp"
#include "core/error.hpp"
#include "core/problem_list.hpp"
#include "tests/autotune/planted.hpp"
#include "tests/support/memory_limit.hpp"

namespace convlab {
namespace {

namespace fs = std::filesystem;

class CacheOrFind : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("convlab_cache_or_find_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fast_.delay_ms = 0;
    slow_.delay_ms = 20;  // well past a descheduled microsecond-long run on a shared, loaded machine
    opt_.max_seconds = 0.01;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }
  int runs() const { return fast_.runs + slow_.runs; }

  fs::path dir_;
  testing::Planted fast_{"cpu.planted_fast"}, slow_{"cpu.planted_slow"};
  std::vector<const Algorithm*> candidates_{&fast_, &slow_};
  ConvProblem p_ = parse_problem("mb1ic2ih6oc2oh6kh3ph1");
  ExecContext ctx_;
  FindOptions opt_;
};

TEST_F(CacheOrFind, MissFindsAndStoresThenHitRunsNothing) {
  TuneCache cache(path("c.jsonl"));
  cache.load();
  const Tuned first = cache_or_find(&cache, p_, Direction::fwd, ctx_, opt_, candidates_);
  EXPECT_FALSE(first.from_cache);
  EXPECT_GT(first.find_seconds, 0);
  ASSERT_EQ(first.results.size(), 2u);
  EXPECT_EQ(first.results[0].algo, "cpu.planted_fast");
  EXPECT_GT(runs(), 0);

  // Saved: a fresh cache object on the same file answers without running anything.
  TuneCache reread(path("c.jsonl"));
  reread.load();
  const int before = runs();
  const Tuned second = cache_or_find(&reread, p_, Direction::fwd, ctx_, opt_, candidates_);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.find_seconds, 0);
  EXPECT_EQ(runs(), before);
  ASSERT_EQ(second.results.size(), 2u);
  EXPECT_EQ(second.results[0].algo, first.results[0].algo);

  // Another direction is another key.
  EXPECT_FALSE(cache_or_find(&reread, p_, Direction::bwd_data, ctx_, opt_, candidates_).from_cache);
}

TEST_F(CacheOrFind, RetuneAndUncoveredEntriesFindAgain) {
  TuneCache cache(path("c.jsonl"));
  cache.load();
  cache_or_find(&cache, p_, Direction::fwd, ctx_, opt_, candidates_);
  EXPECT_FALSE(cache_or_find(&cache, p_, Direction::fwd, ctx_, opt_, candidates_, /*retune=*/true).from_cache);
  // A candidate the entry does not list: the entry cannot answer, and is replaced by one that can.
  testing::Planted added("cpu.planted_added");
  std::vector<const Algorithm*> more = candidates_;
  more.push_back(&added);
  const Tuned t = cache_or_find(&cache, p_, Direction::fwd, ctx_, opt_, more);
  EXPECT_FALSE(t.from_cache);
  EXPECT_EQ(t.results.size(), 3u);
  EXPECT_TRUE(cache_or_find(&cache, p_, Direction::fwd, ctx_, opt_, more).from_cache);
  ASSERT_NE(cache.lookup(make_cache_key(p_, Direction::fwd, ctx_)), nullptr);
}

TEST_F(CacheOrFind, WithoutACacheFindAlwaysRuns) {
  const Tuned a = cache_or_find(nullptr, p_, Direction::fwd, ctx_, opt_, candidates_);
  const int after_first = runs();
  const Tuned b = cache_or_find(nullptr, p_, Direction::fwd, ctx_, opt_, candidates_);
  EXPECT_FALSE(a.from_cache);
  EXPECT_FALSE(b.from_cache);
  EXPECT_GT(runs(), after_first);
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(CacheOrFind, FindOptionsReportStartAndCandidates) {
  int starts = 0, steps = 0;
  opt_.on_start = [&] { ++starts; };
  opt_.on_candidate = [&](int, int, const Algorithm&) { ++steps; };
  TuneCache cache(path("c.jsonl"));
  cache.load();
  cache_or_find(&cache, p_, Direction::fwd, ctx_, opt_, candidates_);
  EXPECT_EQ(starts, 1);
  EXPECT_EQ(steps, 2);
  cache_or_find(&cache, p_, Direction::fwd, ctx_, opt_, candidates_);  // a hit: find does not start
  EXPECT_EQ(starts, 1);
}

// tune(): repeated shapes are tuned once, a verbose line's direction is kept unless directions are
// given, get mode measures nothing and compares nothing.
TEST(Tune, PairsRepeatsAndModes) {
  const ProblemSet set = expand_problems({"mb1ic2ih6oc2oh6kh3ph1n\"a\"", "mb1ic2ih6oc2oh6kh3ph1n\"b\""});
  TuneOptions opt;
  opt.dirs = {Direction::fwd};
  opt.ctx.threads = 1;
  opt.find_options.max_seconds = 0.01;
  int steps = 0, done = 0;
  opt.on_step = [&](int i, int n, const std::string& what) {
    ++steps;
    EXPECT_EQ(i, 0);
    EXPECT_EQ(n, 2);
    EXPECT_EQ(what.rfind("a fwd", 0), 0u) << what;
  };
  opt.on_find_done = [&] { ++done; };
  const TuneResult r = tune(set.items, opt);
  ASSERT_EQ(r.pairs.size(), 2u);
  EXPECT_EQ(r.tuned, 1);
  EXPECT_EQ(r.cache_hits, 0);
  EXPECT_GT(steps, 1);
  EXPECT_EQ(done, 1);
  EXPECT_FALSE(r.pairs[0].from_cache);
  EXPECT_TRUE(r.pairs[1].from_cache);  // the same shape as pair 0
  EXPECT_EQ(r.pairs[1].label, "b");
  EXPECT_EQ(r.pairs[0].found.size(), r.pairs[1].found.size());
  EXPECT_GT(r.candidates, 0u);
  for (const TunePair& pr : r.pairs) {
    EXPECT_TRUE(pr.compared);
    EXPECT_FALSE(pr.find_algo.empty());
    EXPECT_EQ(pr.get_algo, pr.get_choice() ? pr.get_choice()->algo : "");
    EXPECT_FALSE(pr.got_leave_one_out.empty());
  }
  EXPECT_EQ(r.compared, 2);
  EXPECT_EQ(r.in_sample.pairs, 2);
  EXPECT_EQ(r.no_choice, 0);

  // A verbose-log item keeps its direction unless directions were given.
  ProblemItem logged = set.items[0];
  logged.dir = Direction::bwd_filter;
  opt.find = false;
  opt.dirs = parse_directions("all");
  TuneResult g = tune({logged}, opt);
  ASSERT_EQ(g.pairs.size(), 1u);
  EXPECT_EQ(g.pairs[0].dir, Direction::bwd_filter);
  EXPECT_TRUE(g.pairs[0].found.empty());
  EXPECT_TRUE(g.pairs[0].got_leave_one_out.empty());
  EXPECT_FALSE(g.pairs[0].compared);
  EXPECT_TRUE(g.pairs[0].find_algo.empty());
  EXPECT_NE(g.pairs[0].get_choice(), nullptr);
  EXPECT_EQ(g.compared, 0);
  opt.dirs_given = true;
  EXPECT_EQ(tune({logged}, opt).pairs.size(), 3u);
}

// tune refuses before its machine probe and any find when a pair find would measure does not fit
// (the cached pairs need no find and are not counted); the limit bounds a broken check.
TEST(Tune, RefusesAPairThatDoesNotFitBeforeAnyWork) {
  const ProblemSet set = expand_problems({"mb1ic2ih6oc2oh6kh3ph1n\"small\"", "mb1ic1ih4096iw4096oc8kh1n\"big\""});
  TuneOptions opt;
  opt.dirs = {Direction::fwd};
  opt.ctx.threads = 1;
  opt.find_options.max_seconds = 0.01;
  int steps = 0;
  opt.on_step = [&](int, int, const std::string&) { ++steps; };
  testing::ScopedAddressSpaceLimit limit(size_t(64) << 20);
  ASSERT_TRUE(limit.ok());
  try {
    (void)tune(set.items, opt);
    ADD_FAILURE() << "tuned a 512 MiB problem under a 64 MiB limit";
  } catch (const OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("find on big fwd needs ", 0), 0u) << m;
  }
  EXPECT_EQ(steps, 0) << "find started before the memory check";
}

}  // namespace
}  // namespace convlab
