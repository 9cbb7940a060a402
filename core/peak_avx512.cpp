// The FMA peak loop on AVX-512 (core/peak_fma.hpp): 24 chains of 16 lanes.
#include <immintrin.h>

#include "core/peak_fma.hpp"

float convlab::peak::fma_loop_avx512(long iters, float seed) {
  return fma_chains<__m512, 24>(iters, seed, [](__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); });
}
