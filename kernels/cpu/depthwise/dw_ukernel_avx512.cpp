// AVX-512 depthwise micro-kernels: V = 16 channels per zmm; a 3x3 row keeps its
// 9 weights and 16 pixels' accumulators in registers (25 of the 32 zmm), other
// tap counts 16 pixels; wgrad up to 24 taps. Bodies: dw_ukernel_impl.inc.
#include <immintrin.h>

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
};
using T = detail::Table<Avx512, 16, 16, 24>;
}  // namespace

const DwUkernels& dw_ukernels_avx512() {
  static const DwUkernels k{"avx512", 16, 24, &T::row_any, &T::wgrad};
  return k;
}

}  // namespace convlab::cpu::depthwise
