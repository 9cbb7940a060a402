// im2col's plane path in AVX-512 registers (im2col_plane.hpp): an output row of up to 32 floats in one or
// two vectors of 16.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cstring>

#include "kernels/cpu/im2col/im2col_plane.hpp"

namespace convlab::cpu {

void im2col_plane_rows_avx512(const ConvShape& sh, const float* buf, float* rows, int64_t ldcol) {
  const int P = sh.p, Q = sh.q, pq = P * Q, bw = plane_width(sh);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  for (int r = 0; r < sh.r; ++r)
    for (int s = 0; s < sh.s; ++s) {
      float* out = rows + (int64_t(r) * sh.s + s) * ldcol;
      const float* tap = buf + int64_t(r) * sh.dil_h * bw + s * sh.dil_w;
      for (int p = 0; p < P; ++p) {
        const float* src = tap + int64_t(p) * sh.stride_h * bw;
        for (int h = 0; h < Q; h += 16) {
          const __m512 v = sh.stride_w == 1 ? _mm512_loadu_ps(src + h)
                                            : _mm512_permutex2var_ps(_mm512_loadu_ps(src + 2 * h), even,
                                                                     _mm512_loadu_ps(src + 2 * h + 16));
          const int at = p * Q + h;
          if (at + 16 <= pq) {
            _mm512_storeu_ps(out + at, v);
          } else {
            alignas(64) float t[16];
            _mm512_store_ps(t, v);
            std::memcpy(out + at, t, sizeof(float) * size_t(std::min(16, Q - h)));
          }
        }
      }
    }
}

}  // namespace convlab::cpu
