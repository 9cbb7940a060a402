// AVX-512 direct-convolution micro-kernels: V = 16 (one zmm per channel block),
// conv up to 28 (pixels x k-blocks) of 16 channels in registers (of 32 zmm), wgrad up
// to 28 taps x 16 output channels. Bodies: direct_ukernel_impl.inc.
#include <immintrin.h>

#include "kernels/cpu/direct/direct_ukernel_impl.inc"

namespace convlab::cpu::direct {
namespace {
struct Avx512 {
  using vec = __m512;
  static constexpr int V = 16;
  static vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, vec v) { _mm512_storeu_ps(p, v); }
  static vec zero() { return _mm512_setzero_ps(); }
  static vec bcast(const float* p) { return _mm512_set1_ps(*p); }
  static vec fma(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
};
using T = detail::Table<Avx512, 28, 28>;
}  // namespace

const Ukernels& ukernels_avx512() {
  static const Ukernels k{"avx512", 16, 28, 28, &T::conv, &T::wgrad, &T::pix};
  return k;
}

}  // namespace convlab::cpu::direct
