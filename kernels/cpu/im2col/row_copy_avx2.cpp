// Stride-2 row copy in AVX2 registers (row_copy.hpp): 8 outputs from two loads of 8 (the second masked
// to 7 lanes, so nothing past in[2 * (n - 1)] is read), one shuffle and one lane permute; a scalar tail.
#include <immintrin.h>

#include "kernels/cpu/im2col/row_copy.hpp"

namespace convlab::cpu {

void copy_stride2_avx2(const float* in, int n, float* out) {
  const __m256i seven = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, -1, 0);
  int i = 0;
  for (; i + 8 <= n; i += 8) {  // reads in[2i .. 2i + 14]
    const float* p = in + 2 * int64_t(i);
    const __m256 a = _mm256_loadu_ps(p), b = _mm256_maskload_ps(p + 8, seven);
    const __m256 s = _mm256_shuffle_ps(a, b, 0x88);  // a0 a2 b0 b2 | a4 a6 b4 b6
    _mm256_storeu_ps(out + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xd8)));
  }
  for (; i < n; ++i) out[i] = in[2 * int64_t(i)];
}

}  // namespace convlab::cpu
