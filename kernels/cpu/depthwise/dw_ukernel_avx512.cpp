// AVX-512 depthwise micro-kernels: V = 16 channels per zmm; a 3x3 row keeps its
// 9 weights and 16 pixels' accumulators in registers (25 of the 32 zmm), other
// tap counts 16 pixels; wgrad up to 24 taps. Bodies: dw_ukernel_impl.inc.
// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized inside _mm512_reduce_add_ps (GCC bug
// 105593), not on anything here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "kernels/cpu/depthwise/dw_ukernel_impl.inc"

namespace convlab::cpu::depthwise {
namespace {
struct Avx512 {
  using vec = __m512;
  static constexpr int V = 16;
  static vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, vec v) { _mm512_storeu_ps(p, v); }
  static vec zero() { return _mm512_setzero_ps(); }
  static vec fma(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
  static vec add(vec a, vec b) { return _mm512_add_ps(a, b); }
  static vec set1(float x) { return _mm512_set1_ps(x); }
  using mask = __mmask16;
  static mask make_mask(uint32_t bits) { return __mmask16(bits); }
  static vec maskz_load(const float* p, mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void mask_store(float* p, mask m, vec v) { _mm512_mask_storeu_ps(p, m, v); }
  static float hsum(vec v) { return _mm512_reduce_add_ps(v); }
};
using T = detail::Table<Avx512, 16, 16, 24, 4, 4>;
}  // namespace

const DwUkernels& dw_ukernels_avx512() {
  static const DwUkernels k{"avx512", 16, 24, &T::row_any, &T::wgrad, &T::plane_, &T::plane_wgrad};
  return k;
}

}  // namespace convlab::cpu::depthwise
