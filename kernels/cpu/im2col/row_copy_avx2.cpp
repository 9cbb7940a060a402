// Stride-2 row copy in AVX2 registers (row_copy.hpp): 8 outputs from two loads of 8, one shuffle and one
// lane permute. No masked loads (see row_copy_avx512.cpp): a block whose second load would pass the
// row's last element loads it one float earlier (odd lanes); the last partial block is the row's last 8
// outputs again; rows of fewer than 8 outputs are copied one float at a time.
#include <immintrin.h>

#include "kernels/cpu/im2col/row_copy.hpp"

namespace convlab::cpu {

namespace {
// a0 a2 a4 a6 | b(s) b(s+2) b(s+4) b(s+6): IMM picks b's even (0x88) or odd (0xd8) elements.
template <int IMM>
inline __m256 evens(__m256 a, __m256 b) {
  const __m256 s = _mm256_shuffle_ps(a, b, IMM);  // a0 a2 b. b. | a4 a6 b. b.
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xd8));
}
}  // namespace

void copy_stride2_avx2(const float* in, int n, float* out) {
  if (n < 8) {
    for (int i = 0; i < n; ++i) out[i] = in[2 * int64_t(i)];
    return;
  }
  int i = 0;
  for (; i + 8 < n; i += 8) {  // reads in[2i .. 2i + 15]: 2i + 16 is a later output's
    const float* p = in + 2 * int64_t(i);
    _mm256_storeu_ps(out + i, evens<0x88>(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)));
  }
  i = n - 8;  // the last 8 outputs: reads in[2i .. 2i + 14]
  const float* p = in + 2 * int64_t(i);
  _mm256_storeu_ps(out + i, evens<0xd8>(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 7)));
}

}  // namespace convlab::cpu
