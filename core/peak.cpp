#include "core/peak.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>

#include "core/device.hpp"
#include "core/timing.hpp"

namespace convlab {

namespace {

// 12 independent accumulators: FMA latency 4 x 2 ports = 8 in flight, plus slack.
// Each call does iters * 12 FMAs of `lanes` fp32 lanes = iters * 12 * lanes * 2 FLOP.
__attribute__((target("avx512f"))) float fma_loop_avx512(long iters, float seed) {
  __m512 a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_ps(seed + float(i));
  const __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it) {
    for (int i = 0; i < 12; ++i) a[i] = _mm512_fmadd_ps(a[i], b, c);
    // Opaque to the optimiser: every FMA of every iteration must happen.
    __asm__ volatile("" : "+v"(a[0]), "+v"(a[1]), "+v"(a[2]), "+v"(a[3]), "+v"(a[4]), "+v"(a[5]), "+v"(a[6]),
                     "+v"(a[7]), "+v"(a[8]), "+v"(a[9]), "+v"(a[10]), "+v"(a[11]));
  }
  __m512 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, a[i]);
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  float r = 0;
  for (float v : out) r += v;
  return r;
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(long iters, float seed) {
  __m256 a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_ps(seed + float(i));
  const __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it) {
    for (int i = 0; i < 12; ++i) a[i] = _mm256_fmadd_ps(a[i], b, c);
    __asm__ volatile("" : "+x"(a[0]), "+x"(a[1]), "+x"(a[2]), "+x"(a[3]), "+x"(a[4]), "+x"(a[5]), "+x"(a[6]),
                     "+x"(a[7]), "+x"(a[8]), "+x"(a[9]), "+x"(a[10]), "+x"(a[11]));
  }
  __m256 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, a[i]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  float r = 0;
  for (float v : out) r += v;
  return r;
}

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

PeakResult measure_fma_peak(int threads, double seconds) {
  const CpuInfo& cpu = cpu_info();
  PeakResult res;
  res.threads = threads > 0 ? threads : cpu.hardware_threads;
  res.isa = cpu.avx512f ? "avx512" : (cpu.avx2 && cpu.fma) ? "avx2" : "scalar";
  const int lanes = res.isa == "avx512" ? 16 : res.isa == "avx2" ? 8 : 1;
  auto loop = [&](long iters, float seed) {
    return res.isa == "avx512" ? fma_loop_avx512(iters, seed)
           : res.isa == "avx2" ? fma_loop_avx2(iters, seed)
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
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = now_seconds();
#pragma omp parallel num_threads(res.threads)
    {
      volatile float sink = loop(iters, float(omp_get_thread_num()));
      (void)sink;
    }
    const double dt = now_seconds() - t0;
    best = std::max(best, double(iters) * 12 * lanes * 2 * res.threads / dt * 1e-9);
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
