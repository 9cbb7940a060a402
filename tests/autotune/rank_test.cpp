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

namespace convlab {
namespace {

AlgoPerf timed(std::string name, double t, double lo, double hi) {
  AlgoPerf a = ok(std::move(name), t, 0.02);
  a.lo = lo;
  a.hi = hi;
  return a;
}

// Ties are marked from the medians' intervals: overlapping intervals are a tie
// with the pick even 15 % apart (beyond the near-tie noise cap), separated ones
// are not.
TEST(Rank, TiesMarkedWhenIntervalsOverlapNotWhenSeparated) {
  std::vector<AlgoPerf> l = {timed("b", 1.15, 1.05, 1.25), timed("a", 1.00, 0.95, 1.10), timed("c", 3.0, 2.9, 3.1)};
  EXPECT_FALSE(near_tie(l[0], l[1]));  // 15 % apart: not within the spread rule
  rank(l);
  ASSERT_EQ(names(l), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(l[0].tie);   // the pick has a tie ...
  EXPECT_TRUE(l[1].tie);   // ... b, whose interval overlaps a's
  EXPECT_FALSE(l[2].tie);  // c is separated
  EXPECT_EQ(ties_of(l, "a"), (std::vector<std::string>{"b"}));

  // Separated intervals: no tie anywhere.
  std::vector<AlgoPerf> s = {timed("a", 1.00, 0.95, 1.04), timed("b", 1.15, 1.08, 1.25)};
  rank(s);
  for (const AlgoPerf& x : s) EXPECT_FALSE(x.tie) << x.algo;
  EXPECT_TRUE(ties_of(s, "a").empty());

  // Marked against another pick (a caller's choice under constraints): b's ties are a, not c.
  mark_ties(l, "b");
  EXPECT_TRUE(l[0].tie);
  EXPECT_TRUE(l[1].tie);
  EXPECT_FALSE(l[2].tie);
  // No pick (or a pick that is not an ok entry): nothing is a tie.
  mark_ties(l, "");
  for (const AlgoPerf& x : l) EXPECT_FALSE(x.tie) << x.algo;
}

// Entries without intervals (predictions, lines cached before intervals were kept) tie by the
// near-tie rule rank() orders by, so a pick that sits on a slower row is always marked.
TEST(Rank, WithoutIntervalsTheNearTieRuleMarksTies) {
  std::vector<AlgoPerf> l = {ok("fast_nondet", 1.00, 0.03, false), ok("det", 1.01, 0.03, true), ok("slow", 2.0)};
  rank(l);
  ASSERT_EQ(l[0].algo, "det");  // the pick sits on the slower row of the two ...
  EXPECT_TRUE(l[0].tie);
  EXPECT_TRUE(l[1].tie);        // ... and the faster row is marked as its tie
  EXPECT_FALSE(l[2].tie);
}

}  // namespace
}  // namespace convlab
