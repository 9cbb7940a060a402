// The FMA peak loop on AVX2 + FMA (core/peak_fma.hpp): 12 chains of 8 lanes.
#include <immintrin.h>

#include "core/peak_fma.hpp"

float convlab::peak::fma_loop_avx2(long iters, float seed) {
  return fma_chains<__m256, 12>(iters, seed, [](__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); });
}
