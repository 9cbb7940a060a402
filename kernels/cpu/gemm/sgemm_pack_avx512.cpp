// sgemm_pack_transpose_avx512: the transposing half of SGEMM packing (see
// sgemm_ukernels.hpp for the contract). Replaces a scalar loop that moves one
// float per store with one masked 16-lane gather + one masked store per packed
// row. Single-threaded; the driver calls it per panel. Intrinsics only.
#include <immintrin.h>

#include <cassert>

#include "kernels/cpu/gemm/sgemm_ukernels.hpp"

namespace convlab::cpu {

void sgemm_pack_transpose_avx512(const float* src, int64_t lds, int nj, int kc, float* dst, int64_t ldd, int width) {
  assert(nj <= 16 && width <= 16 && nj <= width);
  assert(lds * 15 < (int64_t(1) << 31));
  const __mmask16 mj = nj <= 0 ? __mmask16(0) : __mmask16((1u << nj) - 1);
  const __mmask16 mw = __mmask16((1u << width) - 1);
  const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32(int(lds)));
  const __m512 zero = _mm512_setzero_ps();
  if (mj == 0) {
    for (int p = 0; p < kc; ++p) _mm512_mask_storeu_ps(dst + p * ldd, mw, zero);
    return;
  }
  for (int p = 0; p < kc; ++p) {
    const __m512 v = _mm512_mask_i32gather_ps(zero, mj, idx, src + p, 4);
    _mm512_mask_storeu_ps(dst + p * ldd, mw, v);
  }
}

}  // namespace convlab::cpu
