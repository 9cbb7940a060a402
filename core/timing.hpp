// Wall-clock timing with medians. Benchmarks on a shared machine compare
// medians and ratios measured in one run; nothing here is used to assert speed.
#pragma once
#include <functional>
#include <vector>

namespace convlab {

double now_seconds();  // steady clock
// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID): on a shared machine, the time the thread
// actually ran, without the time another process had its core.
double thread_cpu_seconds();

struct TimingStats {
  double median = 0, min = 0, max = 0;
  double spread = 0;  // (p75 - p25) / median: relative inter-quartile range
  int reps = 0;
  std::vector<double> samples;  // seconds, in the order measured
};

TimingStats summarize(std::vector<double> samples);

// The warm-up a CPU measurement of one algorithm takes before its timed reps (TimingOptions).
constexpr double kCpuWarmupSeconds = 0.05;

struct TimingOptions {
  int warmup = 1;
  // ... and runs of fn until this much time has passed: a CPU that sat idle (the inputs made on one
  // thread, a check in between) runs the next work slower for tens of milliseconds on a shared
  // machine's virtual CPUs (measured on Zen 5: 10 reps after a second idle 1.64-1.80 ms, after both
  // cores were busy 1.36-1.40, the same GEMM).
  double warmup_seconds = 0;
  int min_reps = 3;
  int max_reps = 50;
  double max_seconds = 2.0;       // stop adding reps after this much timed work
  double stable_rel = 0.02;       // ... or once the median moves less than this
  bool flush_caches = false;      // evict caches before every timed rep (llm.c-style)
  // Asked after every rep with the samples so far; true stops timing there
  // (a caller's pruning rule, e.g. find's: autotune/find.hpp).
  std::function<bool(const std::vector<double>& samples)> stop_early;
};

// Runs fn warmup times, then times it until min_reps are done and either the
// median is stable, max_seconds has passed or max_reps is reached -- or
// stop_early says so.
TimingStats time_it(const std::function<void()>& fn, const TimingOptions& opt = {});

// The stopping rule of time_it (and of time_cuda, core/cuda_stream.hpp), for a
// caller that measures one rep itself: timed_rep() runs one rep and returns its
// seconds. No warm-up here.
TimingStats repeat_until_stable(const std::function<double()>& timed_rep, const TimingOptions& opt);

// Streams through a buffer larger than the last-level cache.
void flush_cpu_caches();

}  // namespace convlab
