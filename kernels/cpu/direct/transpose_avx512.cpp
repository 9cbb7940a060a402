// 16 x 16 fp32 transpose in AVX-512 registers for the blocked-layout
// conversions (layout.cpp): rows of 16 pixels of 16 channels <-> 16 channel
// planes. dst[i][j] = src[j][i]; rows at src + j*src_stride, dst + i*dst_stride.
// The partial form reads and writes only i < ni, j < nj (masked: nothing
// beyond is touched), for a row's last pixels.
// Single-threaded; the caller splits the work.
// GCC 12's avx512fintrin.h trips -Wuninitialized on its own _mm512_undefined_*
// and -Wmaybe-uninitialized (GCC bug 105593), not on anything here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "kernels/cpu/direct/transpose.hpp"

namespace convlab::cpu::direct {

namespace {
// r[j] (row j) -> r[i] (column i), in registers.
inline void transpose_regs(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  auto lo = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  auto hi = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  for (int i = 0; i < 16; i += 4) {
    r[i] = lo(t[i], t[i + 2]);
    r[i + 1] = hi(t[i], t[i + 2]);
    r[i + 2] = lo(t[i + 1], t[i + 3]);
    r[i + 3] = hi(t[i + 1], t[i + 3]);
  }
  for (int h = 0; h < 16; h += 8)
    for (int i = 0; i < 4; ++i) {
      t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
    }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
}
}  // namespace

void transpose16x16_avx512(const float* src, int64_t src_stride, float* dst, int64_t dst_stride) {
  __m512 r[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * src_stride);
  transpose_regs(r);
  for (int i = 0; i < 16; ++i) _mm512_storeu_ps(dst + i * dst_stride, r[i]);
}

void transpose16x16_part_avx512(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int ni,
                                int nj) {
  const __mmask16 mi = __mmask16((1u << ni) - 1), mj = __mmask16((1u << nj) - 1);
  __m512 r[16];
  for (int j = 0; j < 16; ++j) r[j] = j < nj ? _mm512_maskz_loadu_ps(mi, src + j * src_stride) : _mm512_setzero_ps();
  transpose_regs(r);
  for (int i = 0; i < ni; ++i) _mm512_mask_storeu_ps(dst + i * dst_stride, mj, r[i]);
}

void transpose16x16_to_avx512(const float* src, int64_t src_stride, float* dst, const int64_t* dst_off, int ni) {
  const __mmask16 mi = __mmask16((1u << ni) - 1);
  __m512 r[16];
  for (int j = 0; j < 16; ++j) r[j] = _mm512_maskz_loadu_ps(mi, src + j * src_stride);
  transpose_regs(r);
  for (int i = 0; i < ni; ++i) _mm512_storeu_ps(dst + dst_off[i], r[i]);
}

}  // namespace convlab::cpu::direct
