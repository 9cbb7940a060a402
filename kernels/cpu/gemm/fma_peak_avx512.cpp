// fma_peak_avx512: the machine's measured AVX-512 FMA throughput, the "100 %"
// of the GEMM benchmark's fraction-of-peak column (llm.c-style napkin math).
// Each thread runs 24 independent zmm FMA chains (enough to cover 4-cycle
// latency on two ports) for `iters` steps; flops = threads*iters*24*16*2.
// Register-only, no memory traffic. Threads: one OpenMP team, no sharing.
#include <immintrin.h>
#include <omp.h>

#include "kernels/cpu/gemm/fma_peak.hpp"

namespace convlab::cpu {

double fma_peak_flops_avx512(int threads, long iters) {
  double sink = 0;
  const double t0 = omp_get_wtime();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
  {
    __m512 acc[24];
    for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
    const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
    for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 24
      for (int i = 0; i < 24; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
    }
    __m512 s = acc[0];
    for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, acc[i]);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, s);  // (_mm512_reduce_add_ps trips GCC 12's -Wuninitialized)
    for (int i = 0; i < 16; ++i) sink += double(lanes[i]);
  }
  const double t1 = omp_get_wtime();
  const double flops = double(threads) * double(iters) * 24 * 16 * 2;
  return sink == 12345.0 ? 0 : flops / (t1 - t0);
}

}  // namespace convlab::cpu
