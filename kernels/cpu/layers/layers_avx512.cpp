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

// bias_relu_bwd_row's blocks: 16 floats a step, mask by y > 0 (NaN: 0, as the plain
// loop), the sums in two zmm of 8 doubles (lane l: element l of each block).
struct BwdBlocksAvx512 {
  template <bool Mask, bool Sum>
  static int64_t run(int64_t n, const float* y, float* dy, double* a) {
    __m512d a0 = _mm512_loadu_pd(a), a1 = _mm512_loadu_pd(a + 8);
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
      __m512 g = _mm512_loadu_ps(dy + j);
      if constexpr (Mask) {
        g = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_loadu_ps(y + j), _mm512_setzero_ps(), _CMP_GT_OQ), g);
        _mm512_storeu_ps(dy + j, g);
      }
      if constexpr (Sum) {
        a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm512_castps512_ps256(g)));
        a1 = _mm512_add_pd(a1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(g), 1))));
      }
    }
    _mm512_storeu_pd(a, a0);
    _mm512_storeu_pd(a + 8, a1);
    return j;
  }
};

}  // namespace

const LayerKernels& layer_kernels_avx512() {
  static const LayerKernels k{"avx512",          &relu_fwd_span, &relu_bwd_span,  &bias_relu_row,
                              &bias_relu_bwd_row<BwdBlocksAvx512>, &lrn_fwd_block, &lrn_bwd_block,  &pool_fwd_plane,
                              &dropout_span_t<Mask16Avx512>, &sgd_span, &softmax_row};
  return k;
}

}  // namespace convlab::cpu
