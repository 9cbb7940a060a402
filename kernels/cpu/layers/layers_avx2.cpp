// kernels/cpu/layers' bodies (*_impl.inc) compiled for AVX2 + FMA (FMA unused:
// no contraction, see kernels/CMakeLists.txt). AVX2 has no 64-bit multiply, so
// the dropout masks get one here: mullo64 from three 32x32->64 multiplies,
// 16 masks per call (4 x 4 lanes), the same bits as rng::dropout_mask.
#include <immintrin.h>

#include "kernels/cpu/layers/eltwise_impl.inc"
#include "kernels/cpu/layers/lrn_impl.inc"
#include "kernels/cpu/layers/pool_softmax_impl.inc"

namespace convlab::cpu {
namespace {

// a * c mod 2^64 per 64-bit lane.
inline __m256i mullo64(__m256i a, uint64_t c) {
  const __m256i clo = _mm256_set1_epi64x(int64_t(c & 0xffffffffu)), chi = _mm256_set1_epi64x(int64_t(c >> 32));
  const __m256i lo = _mm256_mul_epu32(a, clo);
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), clo), _mm256_mul_epu32(a, chi));
  return _mm256_add_epi64(lo, _mm256_slli_epi64(cross, 32));
}

inline __m256i mix64_avx2(__m256i z) {
  z = _mm256_add_epi64(z, _mm256_set1_epi64x(int64_t(0x9E3779B97F4A7C15ull)));
  z = mullo64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), 0xBF58476D1CE4E5B9ull);
  z = mullo64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), 0x94D049BB133111EBull);
  return _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
}

struct Mask16Avx2 {
  static void run(const DropoutArgs& a, int64_t i0, float* m) {
    const uint64_t base = a.key + uint64_t(i0) * kDropoutStride;
    const __m256i thr = _mm256_set1_epi64x(a.threshold);
    int bits = 0;  // bit l: element i0 + l is dropped
    for (int g = 0; g < 4; ++g) {
      const uint64_t s = kDropoutStride;
      const __m256i off = _mm256_setr_epi64x(int64_t(uint64_t(4 * g) * s), int64_t(uint64_t(4 * g + 1) * s),
                                             int64_t(uint64_t(4 * g + 2) * s), int64_t(uint64_t(4 * g + 3) * s));
      const __m256i u = mix64_avx2(_mm256_add_epi64(_mm256_set1_epi64x(int64_t(base)), off));
      // (u >> 11) < 2^53 is non-negative as int64: the signed compare is the unsigned one
      const __m256i drop = _mm256_cmpgt_epi64(thr, _mm256_srli_epi64(u, 11));
      bits |= _mm256_movemask_pd(_mm256_castsi256_pd(drop)) << (4 * g);
    }
    const __m256i sel = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256 keep = _mm256_set1_ps(a.keep);
    for (int h = 0; h < 2; ++h) {
      const __m256i b = _mm256_and_si256(_mm256_set1_epi32((bits >> (8 * h)) & 0xff), sel);
      const __m256 dropped = _mm256_castsi256_ps(_mm256_cmpeq_epi32(b, sel));
      _mm256_storeu_ps(m + 8 * h, _mm256_andnot_ps(dropped, keep));
    }
  }
};

// bias_relu_bwd_row's blocks: 16 floats a step (two ymm), mask by y > 0 (NaN: 0, as
// the plain loop; and-ing with the all-zero mask gives +0 as it does), the sums in
// four ymm of 4 doubles (lane l: element l of each block).
struct BwdBlocksAvx2 {
  template <bool Mask, bool Sum>
  static int64_t run(int64_t n, const float* y, float* dy, double* a) {
    __m256d acc[4];
    for (int q = 0; q < 4; ++q) acc[q] = _mm256_loadu_pd(a + 4 * q);
    int64_t j = 0;
    for (; j + 16 <= n; j += 16)
      for (int h = 0; h < 2; ++h) {
        __m256 g = _mm256_loadu_ps(dy + j + 8 * h);
        if constexpr (Mask) {
          g = _mm256_and_ps(g, _mm256_cmp_ps(_mm256_loadu_ps(y + j + 8 * h), _mm256_setzero_ps(), _CMP_GT_OQ));
          _mm256_storeu_ps(dy + j + 8 * h, g);
        }
        if constexpr (Sum) {
          acc[2 * h] = _mm256_add_pd(acc[2 * h], _mm256_cvtps_pd(_mm256_castps256_ps128(g)));
          acc[2 * h + 1] = _mm256_add_pd(acc[2 * h + 1], _mm256_cvtps_pd(_mm256_extractf128_ps(g, 1)));
        }
      }
    for (int q = 0; q < 4; ++q) _mm256_storeu_pd(a + 4 * q, acc[q]);
    return j;
  }
};

}  // namespace

const LayerKernels& layer_kernels_avx2() {
  static const LayerKernels k{"avx2",           &relu_fwd_span, &relu_bwd_span, &bias_relu_row,
                              &bias_relu_bwd_row<BwdBlocksAvx2>, &lrn_fwd_block, &lrn_bwd_block, &pool_fwd_plane,
                              &dropout_span_t<Mask16Avx2>, &sgd_span, &softmax_row};
  return k;
}

}  // namespace convlab::cpu
