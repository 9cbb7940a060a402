// The round trip of a cache line between OpenMP threads (core/thread_distance.hpp).
#include "core/thread_distance.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <vector>

namespace convlab {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kTripsPerBatch = 256;
constexpr int kBatches = 9;
constexpr double kBudgetSeconds = 0.02;  // all pairs together

// One line per flag, so the two threads share nothing else.
struct alignas(128) Flag {
  std::atomic<int> value{0};
};

}  // namespace

ThreadDistance measure_thread_distance(int threads) {
  ThreadDistance d;
  d.threads = threads > 0 ? threads : omp_get_max_threads();
  if (d.threads < 2) return d;
  const int partners = std::min(d.threads - 1, 7);
  // Per partner: the median of its batches' mean round trips; NaN when no batch completed.
  std::vector<double> per(size_t(partners), ThreadDistance::nan);
  Flag flag;
  std::atomic<int> turn{0};     // which partner plays now (1-based); -1: stop
  std::atomic<bool> give_up{false};
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kBudgetSeconds));
#pragma omp parallel num_threads(d.threads)
  {
    const int me = omp_get_thread_num();
    if (omp_get_num_threads() >= 2 && me == 0) {
      for (int j = 1; j <= std::min(partners, omp_get_num_threads() - 1) && !give_up.load(); ++j) {
        std::vector<double> batches;
        flag.value.store(0, std::memory_order_relaxed);
        turn.store(j, std::memory_order_release);
        int v = 0;
        for (int b = 0; b < kBatches && !give_up.load(std::memory_order_relaxed); ++b) {
          const Clock::time_point t0 = Clock::now();
          for (int i = 0; i < kTripsPerBatch; ++i) {
            flag.value.store(++v, std::memory_order_release);  // odd: the partner's turn
            long spins = 0;
            while (flag.value.load(std::memory_order_acquire) != v + 1)
              if ((++spins & 0xffff) == 0 && Clock::now() > deadline) {
                give_up.store(true);
                break;
              }
            if (give_up.load(std::memory_order_relaxed)) break;
            ++v;
          }
          if (give_up.load(std::memory_order_relaxed)) break;
          batches.push_back(std::chrono::duration<double>(Clock::now() - t0).count() * 1e9 / kTripsPerBatch);
        }
        if (!batches.empty()) {
          std::nth_element(batches.begin(), batches.begin() + batches.size() / 2, batches.end());
          per[size_t(j - 1)] = batches[batches.size() / 2];
        }
        turn.store(0, std::memory_order_release);
        flag.value.store(-1, std::memory_order_release);  // releases the partner's loop
      }
      turn.store(-1, std::memory_order_release);
    } else if (me >= 1 && me <= partners) {
      for (;;) {
        const int t = turn.load(std::memory_order_acquire);
        if (t == -1) break;
        if (t != me) continue;
        for (;;) {  // answer every odd value with the next one until told to stop
          const int v = flag.value.load(std::memory_order_acquire);
          if (v == -1 || turn.load(std::memory_order_relaxed) != me) break;
          if (v & 1) flag.value.store(v + 1, std::memory_order_release);
        }
        while (turn.load(std::memory_order_acquire) == me) {
        }
      }
    }
  }
  for (double x : per)
    if (std::isfinite(x)) {
      d.min_ns = std::isfinite(d.min_ns) ? std::min(d.min_ns, x) : x;
      d.max_ns = std::isfinite(d.max_ns) ? std::max(d.max_ns, x) : x;
    }
  return d;
}

bool placement_changed(double a_ns, double b_ns) {
  if (!(a_ns > 0) || !(b_ns > 0)) return false;
  return std::max(a_ns, b_ns) > kFarRatio * std::min(a_ns, b_ns);
}

}  // namespace convlab
