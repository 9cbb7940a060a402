// kernels/cpu/layers' bodies (*_impl.inc) compiled for AVX-512 (F/VL/BW/DQ),
// and the dropout masks written out (GCC leaves the plain loop scalar): 16 per
// call, two zmm of 8 64-bit lanes (vpmullq), the same bits as rng::dropout_mask.
#include <immintrin.h>

// GCC 12's _mm512_srli_epi64 passes _mm512_undefined_epi32() as the unused
// merge source, which -Wmaybe-uninitialized reports (as sgemm_pack_avx512.cpp).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/cpu/layers/eltwise_impl.inc"
#include "kernels/cpu/layers/lrn_impl.inc"
#include "kernels/cpu/layers/pool_softmax_impl.inc"

namespace convlab::cpu {
namespace {

inline __m512i mix64_avx512(__m512i z) {
  z = _mm512_add_epi64(z, _mm512_set1_epi64(int64_t(0x9E3779B97F4A7C15ull)));
  z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)), _mm512_set1_epi64(int64_t(0xBF58476D1CE4E5B9ull)));
  z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)), _mm512_set1_epi64(int64_t(0x94D049BB133111EBull)));
  return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

struct Mask16Avx512 {
  static void run(const DropoutArgs& a, int64_t i0, float* m) {
    const __m512i base = _mm512_set1_epi64(int64_t(a.key + uint64_t(i0) * kDropoutStride));
    const __m512i thr = _mm512_set1_epi64(a.threshold);
    __mmask16 drop = 0;
    for (int g = 0; g < 2; ++g) {
      alignas(64) int64_t off[8];
      for (int l = 0; l < 8; ++l) off[l] = int64_t(uint64_t(8 * g + l) * kDropoutStride);
      const __m512i u = mix64_avx512(_mm512_add_epi64(base, _mm512_load_si512(off)));
      drop |= __mmask16(_mm512_cmplt_epu64_mask(_mm512_srli_epi64(u, 11), thr) << (8 * g));
    }
    _mm512_storeu_ps(m, _mm512_maskz_mov_ps(__mmask16(~drop), _mm512_set1_ps(a.keep)));
  }
};

}  // namespace

const LayerKernels& layer_kernels_avx512() {
  static const LayerKernels k{"avx512",          &relu_fwd_span, &relu_bwd_span,  &bias_relu_row,
                              &bias_relu_bwd_row, &lrn_fwd_block, &lrn_bwd_block,  &pool_fwd_plane,
                              &dropout_span_t<Mask16Avx512>, &sgd_span, &softmax_row};
  return k;
}

}  // namespace convlab::cpu
