// AVX2+FMA direct-convolution micro-kernels: V = 8 (one ymm per channel
// block), conv up to 12 (pixels x k-blocks) of 8 channels in registers (12 of the 16 ymm),
// wgrad up to 12 taps. Bodies: direct_ukernel_impl.inc.
#include <immintrin.h>

#include "kernels/cpu/direct/direct_ukernel_impl.inc"

namespace convlab::cpu::direct {
namespace {
struct Avx2 {
  using vec = __m256;
  static constexpr int V = 8;
  static vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, vec v) { _mm256_storeu_ps(p, v); }
  static vec zero() { return _mm256_setzero_ps(); }
  static vec bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static vec fma(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
};
using T = detail::Table<Avx2, 12, 12>;
}  // namespace

const Ukernels& ukernels_avx2() {
  static const Ukernels k{"avx2", 8, 12, 12, &T::conv, &T::wgrad, &T::pix};
  return k;
}

}  // namespace convlab::cpu::direct
