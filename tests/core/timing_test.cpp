// time_it's warm-up (core/timing.hpp): the count and the time both hold before the first timed rep, and
// the timed reps are counted apart from it.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/timing.hpp"

namespace convlab {
namespace {

TEST(TimeIt, WarmsUpForItsCountAndItsTime) {
  int calls = 0;
  const auto sleep_1ms = [&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  TimingOptions opt;
  opt.warmup = 2;
  opt.min_reps = opt.max_reps = 3;
  opt.max_seconds = 1e9;
  const TimingStats count_only = time_it(sleep_1ms, opt);
  EXPECT_EQ(count_only.reps, 3);
  EXPECT_EQ(calls, 2 + 3);

  calls = 0;
  opt.warmup_seconds = 0.03;  // at least 30 ms of 1 ms calls before timing: more than 2 of them
  const double t0 = now_seconds();
  const TimingStats timed = time_it(sleep_1ms, opt);
  EXPECT_GE(now_seconds() - t0, 0.03);
  EXPECT_EQ(timed.reps, 3);
  EXPECT_GT(calls, 2 + 3);
  EXPECT_LE(calls, 30 + 3 + 1);  // sleeps last at least 1 ms each
}

}  // namespace
}  // namespace convlab
