// Stride-2 row copy in AVX-512 registers (row_copy.hpp): 16 outputs from two loads of 16 and one
// two-source permute; the second load and the tail are masked so nothing past in[2 * (n - 1)] is read.
// GCC 12's avx512fintrin.h trips -Wuninitialized on its own _mm512_undefined_* (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "kernels/cpu/im2col/row_copy.hpp"

namespace convlab::cpu {

void copy_stride2_avx512(const float* in, int n, float* out) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  int i = 0;
  for (; i + 16 <= n; i += 16) {  // reads in[2i .. 2i + 30]
    const float* p = in + 2 * int64_t(i);
    const __m512 a = _mm512_loadu_ps(p), b = _mm512_maskz_loadu_ps(0x7fff, p + 16);
    _mm512_storeu_ps(out + i, _mm512_permutex2var_ps(a, even, b));
  }
  if (i < n) {  // m < 16 outputs read 2m - 1 inputs
    const int m = n - i, reads = 2 * m - 1;
    const float* p = in + 2 * int64_t(i);
    const __mmask16 ma = __mmask16(reads >= 16 ? 0xffff : (1u << reads) - 1);
    const __mmask16 mb = __mmask16(reads > 16 ? (1u << (reads - 16)) - 1 : 0);
    const __m512 a = _mm512_maskz_loadu_ps(ma, p), b = _mm512_maskz_loadu_ps(mb, p + 16);
    _mm512_mask_storeu_ps(out + i, __mmask16((1u << m) - 1), _mm512_permutex2var_ps(a, even, b));
  }
}

}  // namespace convlab::cpu
