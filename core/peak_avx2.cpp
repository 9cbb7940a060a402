// The FMA peak loop on AVX2 + FMA: 12 chains of 8 lanes (core/peak_fma.hpp).
#include <immintrin.h>

#include "core/peak_fma.hpp"

namespace convlab::peak {
namespace {
struct Avx2 {
  using vec = __m256;
  static constexpr int lanes = 8;
  static vec bcast(float x) { return _mm256_set1_ps(x); }
  static vec fma(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
  static vec add(vec a, vec b) { return _mm256_add_ps(a, b); }
  static float sum(vec v) {
    alignas(32) float out[lanes];
    _mm256_store_ps(out, v);
    float r = 0;
    for (float x : out) r += x;
    return r;
  }
};
}  // namespace

float fma_loop_avx2(long iters, float seed) { return fma_chains<Avx2, 12>(iters, seed); }

}  // namespace convlab::peak
