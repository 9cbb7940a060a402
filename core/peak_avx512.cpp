// The FMA peak loop on AVX-512: 24 chains of 16 lanes (core/peak_fma.hpp).
#include <immintrin.h>

#include "core/peak_fma.hpp"

namespace convlab::peak {
namespace {
struct Avx512 {
  using vec = __m512;
  static constexpr int lanes = 16;
  static vec bcast(float x) { return _mm512_set1_ps(x); }
  static vec fma(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
  static vec add(vec a, vec b) { return _mm512_add_ps(a, b); }
  static float sum(vec v) {
    alignas(64) float out[lanes];
    _mm512_store_ps(out, v);
    float r = 0;
    for (float x : out) r += x;
    return r;
  }
};
}  // namespace

float fma_loop_avx512(long iters, float seed) { return fma_chains<Avx512, 24>(iters, seed); }

}  // namespace convlab::peak
