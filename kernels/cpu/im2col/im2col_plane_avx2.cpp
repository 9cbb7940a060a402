// im2col's plane path in AVX2 registers (im2col_plane.hpp): an output row of up to 32 floats in one to
// four vectors of 8.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/im2col/im2col_plane.hpp"

namespace convlab::cpu {

void im2col_plane_rows_avx2(const ConvShape& sh, const float* buf, float* rows, int64_t ldcol) {
  const int P = sh.p, Q = sh.q, pq = P * Q, bw = plane_width(sh);
  const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  for (int r = 0; r < sh.r; ++r)
    for (int s = 0; s < sh.s; ++s) {
      float* out = rows + (int64_t(r) * sh.s + s) * ldcol;
      const float* tap = buf + int64_t(r) * sh.dil_h * bw + s * sh.dil_w;
      for (int p = 0; p < P; ++p) {
        const float* src = tap + int64_t(p) * sh.stride_h * bw;
        for (int h = 0; h < Q; h += 8) {
          __m256 v;
          if (sh.stride_w == 1) {
            v = _mm256_loadu_ps(src + h);
          } else {  // a0 a2 a4 a6 | b0 b2 b4 b6
            const __m256 a = _mm256_permutevar8x32_ps(_mm256_loadu_ps(src + 2 * h), even);
            const __m256 b = _mm256_permutevar8x32_ps(_mm256_loadu_ps(src + 2 * h + 8), even);
            v = _mm256_blend_ps(a, b, 0xf0);
          }
          const int at = p * Q + h;
          if (at + 8 <= pq) {
            _mm256_storeu_ps(out + at, v);
          } else {
            alignas(32) float t[8];
            _mm256_store_ps(t, v);
            std::memcpy(out + at, t, sizeof(float) * size_t(std::min(8, Q - h)));
          }
        }
      }
    }
}

}  // namespace convlab::cpu
