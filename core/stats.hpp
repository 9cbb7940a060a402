// Medians and their bootstrap confidence intervals, for timings measured on a
// shared, noisy machine (train/trainer reports every policy's iteration time,
// every speedup and every per-layer time this way).
//
//   median_ci(x)            percentile bootstrap of the median: resample x with
//                           replacement `resamples` times, take each resample's
//                           median, report the (1-level)/2 and (1+level)/2
//                           quantiles of those medians
//   median_ratio_ci(a, b)   paired: a[i] and b[i] were measured in the same
//                           round, so one resample draws round indices and keeps
//                           both samples of a round together; the statistic is
//                           median(a*) / median(b*) (a speedup when a is the
//                           baseline's times and b the policy's)
//   median_diff_ci(a, b)    paired, median(a*) - median(b*) (time saved)
//
// The generator is std::mt19937_64 (its output is fixed by the standard) from a
// fixed seed, and indices are drawn by modulo, so an interval is a pure function
// of its inputs and options. Degenerate inputs: one sample or all-equal samples
// give a zero-width interval at that value; no samples give NaN bounds.
// With n samples the interval of a median can only move between order
// statistics, so with ~10 rounds it is coarse (about the 2nd to the 9th of 10).
#pragma once
#include <cstdint>
#include <vector>

namespace convlab::stats {

// The middle value (the mean of the two middle values for even n); NaN when empty.
double median(std::vector<double> v);

// The q-quantile of sorted data, linear between order statistics (R type 7).
// NaN when empty; q is clamped to [0, 1].
double quantile_sorted(const std::vector<double>& sorted, double q);

struct Interval {
  double lo, hi;
  bool contains(double x) const { return lo <= x && x <= hi; }
  bool valid() const { return lo == lo && hi == hi; }  // not NaN
};

struct BootstrapOptions {
  int resamples = 2000;
  double level = 0.95;
  uint64_t seed = 19;  // fixed: the same data give the same interval in every run
};

Interval median_ci(const std::vector<double>& x, const BootstrapOptions& opt = {});
// a and b must have the same length (paired by index); throws Error otherwise.
Interval median_ratio_ci(const std::vector<double>& a, const std::vector<double>& b, const BootstrapOptions& opt = {});
Interval median_diff_ci(const std::vector<double>& a, const std::vector<double>& b, const BootstrapOptions& opt = {});

}  // namespace convlab::stats
