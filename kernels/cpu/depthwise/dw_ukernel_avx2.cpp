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
};
using T = detail::Table<Avx2, 4, 8, 12>;
}  // namespace

const DwUkernels& dw_ukernels_avx2() {
  static const DwUkernels k{"avx2", 8, 12, &T::row_any, &T::wgrad};
  return k;
}

}  // namespace convlab::cpu::depthwise
