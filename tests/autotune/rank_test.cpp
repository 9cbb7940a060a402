// rank / near_tie / select: the fixed tie-break rule and its stability.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "autotune/perf.hpp"

namespace convlab {
namespace {

AlgoPerf ok(std::string name, double t, double spread = 0.0, bool det = true, size_t ws = 0) {
  AlgoPerf a;
  a.algo = std::move(name);
  a.time = t;
  a.spread = spread;
  a.deterministic = det;
  a.workspace = ws;
  return a;
}

std::vector<std::string> names(const std::vector<AlgoPerf>& l) {
  std::vector<std::string> n;
  for (const auto& a : l) n.push_back(a.algo);
  return n;
}

TEST(Rank, FasterFirstWhenOutsideTheNoise) {
  std::vector<AlgoPerf> l = {ok("b", 2.0), ok("a", 1.0), ok("c", 3.0)};
  rank(l);
  EXPECT_EQ(names(l), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(Rank, NearTieGoesToDeterministicThenWorkspaceThenName) {
  // 1 % apart with 3 % spread: tied. The slower deterministic one wins.
  std::vector<AlgoPerf> l = {ok("fast_nondet", 1.00, 0.03, false), ok("det", 1.01, 0.03, true)};
  rank(l);
  EXPECT_EQ(l[0].algo, "det");
  // Same determinism: the smaller workspace.
  l = {ok("big", 1.000, 0.02, true, 1 << 20), ok("small", 1.015, 0.02, true, 64)};
  rank(l);
  EXPECT_EQ(l[0].algo, "small");
  // Everything equal: the name.
  l = {ok("zeta", 1.0), ok("alpha", 1.0)};
  rank(l);
  EXPECT_EQ(names(l), (std::vector<std::string>{"alpha", "zeta"}));
  // 30 % apart is never a tie, whatever the spread (capped at 10 %).
  l = {ok("fast_nondet", 1.0, 0.5, false), ok("det", 1.3, 0.5, true)};
  rank(l);
  EXPECT_EQ(l[0].algo, "fast_nondet");
}

TEST(Rank, NoiseFloorAndCap) {
  EXPECT_TRUE(near_tie(ok("a", 1.0), ok("b", 1.009)));    // 1 % floor
  EXPECT_FALSE(near_tie(ok("a", 1.0), ok("b", 1.02)));    // spread 0 -> floor only
  EXPECT_TRUE(near_tie(ok("a", 1.0, 0.05), ok("b", 1.04)));
  EXPECT_FALSE(near_tie(ok("a", 1.0, 0.9), ok("b", 1.11)));  // cap 10 %
}

TEST(Rank, OrderIsIndependentOfInputOrder) {
  std::vector<AlgoPerf> base = {ok("a", 1.00, 0.02, false, 0), ok("b", 1.01, 0.02, true, 512), ok("c", 1.015, 0.02, true, 0),
                                ok("d", 2.0), ok("e", 2.0, 0.0, true, 8)};
  AlgoPerf bad = ok("f", 0.1);
  bad.status = PerfStatus::inaccurate;
  AlgoPerf uns;
  uns.algo = "g";
  uns.status = PerfStatus::unsupported;
  base.push_back(bad);
  base.push_back(uns);
  std::vector<AlgoPerf> ref = base;
  rank(ref);
  EXPECT_EQ(names(ref), (std::vector<std::string>{"c", "b", "a", "d", "e", "f", "g"}));
  std::mt19937 rng(7);
  for (int i = 0; i < 50; ++i) {
    std::vector<AlgoPerf> l = base;
    std::shuffle(l.begin(), l.end(), rng);
    rank(l);
    ASSERT_EQ(names(l), names(ref));
  }
}

TEST(Rank, SelectAppliesConstraintsAndSkipsFailures) {
  AlgoPerf wrong = ok("wrong", 0.5);
  wrong.status = PerfStatus::inaccurate;
  AlgoPerf fast = ok("fast", 1.0, 0, false, 1000);
  fast.max_rel_error = 1e-3;
  AlgoPerf mid = ok("mid", 2.0, 0, true, 10);
  mid.max_rel_error = 1e-6;
  std::vector<AlgoPerf> l = {wrong, fast, mid, ok("slow", 3.0)};
  rank(l);
  EXPECT_EQ(select(l, {})->algo, "fast");
  Constraints c;
  c.workspace_limit = 100;
  EXPECT_EQ(select(l, c)->algo, "mid");
  c = {};
  c.max_error = 1e-4;
  EXPECT_EQ(select(l, c)->algo, "mid");
  c.deterministic = true;
  c.workspace_limit = 0;
  EXPECT_EQ(select(l, c)->algo, "slow");
  std::vector<AlgoPerf> only_wrong = {wrong};
  EXPECT_EQ(select(only_wrong, {}), nullptr);
}

}  // namespace
}  // namespace convlab
