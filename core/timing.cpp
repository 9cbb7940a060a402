#include "core/timing.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/tensor.hpp"

namespace convlab {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

namespace {
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * double(sorted.size() - 1);
  const size_t lo = size_t(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}
}  // namespace

TimingStats summarize(std::vector<double> samples) {
  TimingStats st;
  st.reps = int(samples.size());
  st.samples = samples;
  if (samples.empty()) return st;
  std::sort(samples.begin(), samples.end());
  st.median = quantile(samples, 0.5);
  st.min = samples.front();
  st.max = samples.back();
  st.spread = st.median > 0 ? (quantile(samples, 0.75) - quantile(samples, 0.25)) / st.median : 0;
  return st;
}

TimingStats time_it(const std::function<void()>& fn, const TimingOptions& opt) {
  const double w0 = now_seconds();
  for (int i = 0; i < opt.warmup || now_seconds() - w0 < opt.warmup_seconds; ++i) fn();
  return repeat_until_stable(
      [&] {
        if (opt.flush_caches) flush_cpu_caches();
        const double t0 = now_seconds();
        fn();
        return now_seconds() - t0;
      },
      opt);
}

TimingStats repeat_until_stable(const std::function<double()>& timed_rep, const TimingOptions& opt) {
  std::vector<double> samples;
  double spent = 0, last_median = -1;
  while (int(samples.size()) < opt.max_reps) {
    const double dt = timed_rep();
    samples.push_back(dt);
    spent += dt;
    if (opt.stop_early && opt.stop_early(samples)) break;
    if (int(samples.size()) >= opt.min_reps) {
      const double med = summarize(samples).median;
      const bool stable = last_median > 0 && std::fabs(med - last_median) <= opt.stable_rel * med;
      if (spent >= opt.max_seconds || (stable && samples.size() >= 5)) break;
      last_median = med;
    }
  }
  return summarize(std::move(samples));
}

void flush_cpu_caches() {
  static AlignedBuffer<float> junk(size_t(64) << 20 >> 2);  // 64 MiB
  static float sink = 0;
  float acc = 0;
  for (size_t i = 0; i < junk.size(); i += 16) {
    junk[i] = float(i) + sink;
    acc += junk[i];
  }
  sink = acc * 1e-30f;
}

}  // namespace convlab
