#include "core/peak.hpp"

#include <algorithm>
#include <thread>
#include <vector>
#include <cstdio>
#include <cstdlib>

#include "core/device.hpp"
#include "core/peak_fma.hpp"
#include "core/timing.hpp"

namespace convlab {

namespace {

// The scalar fallback: 12 chains, one lane each (the vector loops: core/peak_fma.hpp).
float fma_loop_scalar(long iters, float seed) {
  float a[12];
  for (int i = 0; i < 12; ++i) a[i] = seed + float(i);
  for (long it = 0; it < iters; ++it) {
    for (int i = 0; i < 12; ++i) a[i] = a[i] * 0.999999f + 1e-7f;
    __asm__ volatile("" : : "r"(a) : "memory");
  }
  float s = 0;
  for (float v : a) s += v;
  return s;
}

}  // namespace

volatile double g_peak_sink = 0;  // keeps every loop's result observable

PeakResult measure_fma_peak(int threads, double seconds, bool thread_cpu_time) {
  const CpuInfo& cpu = cpu_info();
  PeakResult res;
  res.threads = threads > 0 ? threads : cpu.hardware_threads;
  res.isa = cpu.isa();  // capped by CONVLAB_ISA like every kernel
  const int lanes = res.isa == "avx512" ? 16 : res.isa == "avx2" ? 8 : 1;
  auto loop = [&](long iters, float seed) {
    return res.isa == "avx512" ? peak::fma_loop_avx512(iters, seed)
           : res.isa == "avx2" ? peak::fma_loop_avx2(iters, seed)
                               : fma_loop_scalar(iters, seed);
  };
  // Calibrate the iteration count on one thread.
  long iters = 1 << 16;
  for (;;) {
    const double t0 = now_seconds();
    volatile float sink = loop(iters, 1.f);
    (void)sink;
    const double dt = now_seconds() - t0;
    if (dt > seconds / 4 || iters > (1L << 40)) {
      iters = long(double(iters) * seconds / std::max(dt, 1e-6));
      break;
    }
    iters *= 4;
  }
  iters = std::max(iters, 1L);
  // Plain threads, each timing its own loop; the team's rate is the sum.
  const int chains = res.isa == "avx512" ? 24 : 12;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<double> rate(size_t(res.threads), 0.0);
    std::vector<float> sums(size_t(res.threads), 0.f);
    std::vector<std::thread> team;
    for (int t = 0; t < res.threads; ++t)
      team.emplace_back([&, t] {
        const double t0 = thread_cpu_time ? thread_cpu_seconds() : now_seconds();
        sums[size_t(t)] = loop(iters, float(t));
        const double dt = (thread_cpu_time ? thread_cpu_seconds() : now_seconds()) - t0;
        rate[size_t(t)] = double(iters) * chains * lanes * 2 / dt * 1e-9;
      });
    for (auto& th : team) th.join();
    double total = 0, check = 0;
    for (int t = 0; t < res.threads; ++t) total += rate[size_t(t)], check += sums[size_t(t)];
    g_peak_sink = check;
    best = std::max(best, total);
  }
  res.gflops = best;
  return res;
}

}  // namespace convlab

#include "core/tensor.hpp"

namespace convlab {

double measure_stream_bandwidth(int threads) {
  const int t = threads > 0 ? threads : cpu_info().hardware_threads;
  const size_t n = size_t(16) << 20;  // 3 arrays x 64 MiB
  AlignedBuffer<float> a(n), b(n), c(n);
#pragma omp parallel for num_threads(t) schedule(static)
  for (size_t i = 0; i < n; ++i) {
    a[i] = 0;
    b[i] = 1;
    c[i] = 2;
  }
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = now_seconds();
#pragma omp parallel for num_threads(t) schedule(static)
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 0.5f * c[i];
    const double dt = now_seconds() - t0;
    best = std::max(best, 3.0 * 4.0 * double(n) / dt * 1e-9);
  }
  return best;
}

}  // namespace convlab
