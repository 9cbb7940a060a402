// Stride-2 row copy in AVX-512 registers (row_copy.hpp): 16 outputs from two loads of 16 and one
// two-source permute. No masked loads: on Zen 5 a masked load reaching into the next cache line cost
// more than the scalar copy of a short row (ResNet-50's 14-wide 1 x 1 stride-2 rows: 68 % of the copy's
// time on one such load). A block whose second load would pass the row's last element loads it one
// float earlier instead (odd lanes); the last partial block is the row's last 16 outputs again,
// overlapping the ones before; rows of fewer than 16 outputs are copied one float at a time.
// GCC 12's avx512fintrin.h trips -Wuninitialized on its own _mm512_undefined_* (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "kernels/cpu/im2col/row_copy.hpp"

namespace convlab::cpu {

void copy_stride2_avx512(const float* in, int n, float* out) {
  if (n < 16) {
    for (int i = 0; i < n; ++i) out[i] = in[2 * int64_t(i)];
    return;
  }
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i last = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
  int i = 0;
  for (; i + 16 < n; i += 16) {  // reads in[2i .. 2i + 31]: 2i + 32 is a later output's
    const float* p = in + 2 * int64_t(i);
    _mm512_storeu_ps(out + i, _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16)));
  }
  i = n - 16;  // the last 16 outputs: reads in[2i .. 2i + 30]
  const float* p = in + 2 * int64_t(i);
  _mm512_storeu_ps(out + i, _mm512_permutex2var_ps(_mm512_loadu_ps(p), last, _mm512_loadu_ps(p + 15)));
}

}  // namespace convlab::cpu
