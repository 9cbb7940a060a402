// core/stats: medians and bootstrap intervals on known distributions, paired
// ratios and differences, and the degenerate cases (no, one, all-equal samples).
#include "core/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.hpp"

namespace convlab::stats {
namespace {

std::vector<double> normal(size_t n, double mean, double sd, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> d(mean, sd);
  std::vector<double> v(n);
  for (double& x : v) x = d(g);
  return v;
}

TEST(Stats, MedianAndQuantile) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({7}), 7);
  EXPECT_TRUE(std::isnan(median({})));
  const std::vector<double> s = {1, 2, 3, 4, 5};
  EXPECT_DOUBLE_EQ(quantile_sorted(s, 0), 1);
  EXPECT_DOUBLE_EQ(quantile_sorted(s, 1), 5);
  EXPECT_DOUBLE_EQ(quantile_sorted(s, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile_sorted(s, 0.125), 1.5);  // h = 0.5: halfway between the first two
  EXPECT_TRUE(std::isnan(quantile_sorted({}, 0.5)));
}

// Normal(10, 1), n = 400: the median's standard error is sqrt(pi/2) / sqrt(n) = 0.0627, so the
// 95 % interval is about +-0.123 wide on each side, and it holds the true median.
TEST(Stats, MedianIntervalOfANormalSample) {
  const auto x = normal(400, 10, 1, 7);
  const Interval ci = median_ci(x);
  EXPECT_TRUE(ci.contains(10)) << ci.lo << " " << ci.hi;
  EXPECT_TRUE(ci.contains(median(x)));
  EXPECT_GT(ci.hi - ci.lo, 0.5 * 2 * 0.123);
  EXPECT_LT(ci.hi - ci.lo, 1.6 * 2 * 0.123);
}

// Coverage: 300 samples of 40 from Exponential(1) (true median ln 2); the nominal 95 % interval
// must cover it in roughly 95 % of them (the percentile bootstrap of a median is slightly
// liberal or conservative at small n; 88-99 % is what 300 draws can tell apart).
TEST(Stats, MedianIntervalCoversTheTrueMedian) {
  std::mt19937_64 g(11);
  std::exponential_distribution<double> d(1.0);
  int covered = 0;
  const int trials = 300;
  BootstrapOptions o;
  o.resamples = 1000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> x(40);
    for (double& v : x) v = d(g);
    o.seed = uint64_t(t) + 1;
    covered += median_ci(x, o).contains(std::log(2.0));
  }
  EXPECT_GE(covered, int(0.88 * trials));
  EXPECT_LE(covered, int(0.99 * trials));
}

TEST(Stats, DegenerateSamples) {
  const Interval one = median_ci({3.5});
  EXPECT_EQ(one.lo, 3.5);
  EXPECT_EQ(one.hi, 3.5);
  const Interval same = median_ci({2, 2, 2, 2, 2});
  EXPECT_EQ(same.lo, 2);
  EXPECT_EQ(same.hi, 2);
  const Interval none = median_ci({});
  EXPECT_FALSE(none.valid());
  EXPECT_FALSE(median_ratio_ci({}, {}).valid());
  const Interval r1 = median_ratio_ci({6}, {3});
  EXPECT_EQ(r1.lo, 2);
  EXPECT_EQ(r1.hi, 2);
  EXPECT_THROW(median_ratio_ci({1, 2}, {1}), Error);
  EXPECT_THROW(median_diff_ci({1}, {1, 2}), Error);
}

TEST(Stats, SameDataSameInterval) {
  const auto x = normal(30, 5, 2, 3);
  const Interval a = median_ci(x), b = median_ci(x);
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.hi, b.hi);
  BootstrapOptions o;
  o.seed = 20;
  const Interval c = median_ci(x, o);
  EXPECT_TRUE(c.lo != a.lo || c.hi != a.hi);  // the seed is used
}

// a = 1.25 * b exactly, round by round: every paired resample has the same ratio of medians.
TEST(Stats, PairedRatioOfAScaledSampleIsExact) {
  const auto b = normal(25, 100, 30, 5);
  std::vector<double> a(b.size());
  for (size_t i = 0; i < b.size(); ++i) a[i] = 1.25 * b[i];
  const Interval r = median_ratio_ci(a, b);
  EXPECT_NEAR(r.lo, 1.25, 1e-12);
  EXPECT_NEAR(r.hi, 1.25, 1e-12);
  const Interval d = median_diff_ci(a, b);
  EXPECT_GT(d.lo, 0);
}

// Rounds that drift a lot (a shared machine: 80-120 ms) with a 5 % difference inside each round:
// pairing keeps both policies of a round together, so the 5 % is resolved. Two policies drawn
// from the same rounds with no difference: the interval holds 1.
TEST(Stats, PairingResolvesADifferenceThatRoundDriftWouldHide) {
  std::mt19937_64 g(9);
  std::uniform_real_distribution<double> drift(80, 120);
  std::normal_distribution<double> jitter(0, 0.5);
  std::vector<double> base, faster, same;
  for (int r = 0; r < 12; ++r) {
    const double level = drift(g);
    base.push_back(level + jitter(g));
    faster.push_back(level / 1.05 + jitter(g));
    same.push_back(level + jitter(g));
  }
  const Interval sp = median_ratio_ci(base, faster);
  EXPECT_GT(sp.lo, 1.0) << sp.lo << " " << sp.hi;
  EXPECT_TRUE(sp.contains(1.05)) << sp.lo << " " << sp.hi;
  EXPECT_TRUE(median_ratio_ci(base, same).contains(1.0));
}

}  // namespace
}  // namespace convlab::stats
