// The round trip of a cache line between a team's threads (core/thread_distance.hpp):
// what it measures on this machine, and the placement rule.
#include <gtest/gtest.h>

#include <cmath>

#include "core/thread_distance.hpp"

namespace convlab {
namespace {

TEST(ThreadDistance, OneThreadMeasuresNothing) {
  const ThreadDistance d = measure_thread_distance(1);
  EXPECT_EQ(d.threads, 1);
  EXPECT_FALSE(d.measured());
  EXPECT_TRUE(std::isnan(d.max_ns));
}

// Two threads always exist to OpenMP, on one CPU too (time-sliced: then the round trip is the
// scheduler's, long, or the budget ends it and nothing is measured -- never a hang).
TEST(ThreadDistance, TwoThreadsPassTheLine) {
  for (int rep = 0; rep < 3; ++rep) {
    const ThreadDistance d = measure_thread_distance(2);
    EXPECT_EQ(d.threads, 2);
    if (!d.measured()) continue;
    EXPECT_GT(d.min_ns, 1.0);  // a store seen by another core takes more than a nanosecond
    EXPECT_LT(d.max_ns, 1e8);
    EXPECT_EQ(d.min_ns, d.max_ns);  // one partner
  }
}

TEST(ThreadDistance, ManyThreadsGiveARange) {
  const ThreadDistance d = measure_thread_distance(5);
  EXPECT_EQ(d.threads, 5);
  if (d.measured()) {
    EXPECT_LE(d.min_ns, d.max_ns);
  }
}

TEST(ThreadDistance, PlacementChanged) {
  EXPECT_FALSE(placement_changed(100, 199));
  EXPECT_TRUE(placement_changed(100, 201));
  EXPECT_TRUE(placement_changed(400, 100));
  EXPECT_FALSE(placement_changed(NAN, 400));
  EXPECT_FALSE(placement_changed(0, 400));
}

}  // namespace
}  // namespace convlab
