// AVX2+FMA depthwise micro-kernels: V = 8 channels per ymm; a 3x3 row keeps its
// 9 weights and 4 pixels' accumulators in registers (13 of the 16 ymm), other
// tap counts 8 pixels; wgrad up to 12 taps. Bodies: dw_ukernel_impl.inc.
#include <immintrin.h>

#include "kernels/cpu/depthwise/dw_ukernel_impl.inc"

namespace convlab::cpu::depthwise {
namespace {
struct Avx2 {
  using vec = __m256;
  static constexpr int V = 8;
  static vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, vec v) { _mm256_storeu_ps(p, v); }
  static vec zero() { return _mm256_setzero_ps(); }
  static vec fma(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
  static vec add(vec a, vec b) { return _mm256_add_ps(a, b); }
  static vec set1(float x) { return _mm256_set1_ps(x); }
  using mask = __m256i;
  static mask make_mask(uint32_t bits) {
    const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(int(bits)), lane), lane);
  }
  static vec maskz_load(const float* p, mask m) { return _mm256_maskload_ps(p, m); }
  static void mask_store(float* p, mask m, vec v) { _mm256_maskstore_ps(p, m, v); }
  static float hsum(vec v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
  }
};
using T = detail::Table<Avx2, 4, 8, 12, 4, 2>;
}  // namespace

const DwUkernels& dw_ukernels_avx2() {
  static const DwUkernels k{"avx2", 8, 12, &T::row_any, &T::wgrad, &T::plane_, &T::plane_wgrad};
  return k;
}

}  // namespace convlab::cpu::depthwise
