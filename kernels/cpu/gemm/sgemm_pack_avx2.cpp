// sgemm_pack_transpose_avx2 / sgemm_pack_rows_avx2: the packing routines of
// the AVX2 SGEMM (see sgemm_ukernels.hpp for the contracts), for its 6 x 16
// tile: 8-lane vectors and 8 x 8 register transposes.
//   transpose: blocks of 8 source rows x 8 columns are loaded (masked past
//   row kc), transposed in registers (unpack ps, shuffle ps, 128-bit lane
//   permutes: 24 shuffles per 64 floats) and stored as 8 packed rows of
//   `width` lanes; a 6-wide row (the A panel) is stored as 4 + 2 floats, so
//   nothing outside the panel is written.
//   rows: each source row dealt out to panels of 8 or 16 floats.
// Single-threaded; the driver calls them per panel or per block. Intrinsics only.
#include <immintrin.h>

#include <cassert>

#include "kernels/cpu/gemm/sgemm_ukernels.hpp"

namespace convlab::cpu {

namespace {

// Lanes [0, v) set, the rest clear (v in [0, 8]), for maskload.
inline __m256i lanes(int v) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(v), idx);
}

// r[i] = row i (8 floats) -> r[t] = column t (8 floats, lane i = row i).
inline void transpose8x8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// The first `width` lanes of v to d (width 8, 6 or any other <= 8).
inline void store_width(float* d, __m256 v, int width) {
  if (width == 8) {
    _mm256_storeu_ps(d, v);
  } else if (width == 6) {
    _mm_storeu_ps(d, _mm256_castps256_ps128(v));
    _mm_storel_pi(reinterpret_cast<__m64*>(d + 4), _mm256_extractf128_ps(v, 1));
  } else {
    alignas(32) float t[8];
    _mm256_store_ps(t, v);
    for (int j = 0; j < width; ++j) d[j] = t[j];
  }
}

}  // namespace

void sgemm_pack_transpose_avx2(const float* src, int64_t lds, int nj, int kc, float* dst, int64_t ldd, int width) {
  assert(nj <= 8 && width <= 8 && nj <= width);
  int p0 = 0;
  for (; p0 + 8 <= kc; p0 += 8) {
    __m256 r[8];
    for (int j = 0; j < 8; ++j) r[j] = j < nj ? _mm256_loadu_ps(src + j * lds + p0) : _mm256_setzero_ps();
    transpose8x8(r);
    for (int t = 0; t < 8; ++t) store_width(dst + (p0 + t) * ldd, r[t], width);
  }
  if (p0 < kc) {
    const int pn = kc - p0;
    const __m256i mp = lanes(pn);
    __m256 r[8];
    for (int j = 0; j < 8; ++j) r[j] = j < nj ? _mm256_maskload_ps(src + j * lds + p0, mp) : _mm256_setzero_ps();
    transpose8x8(r);
    for (int t = 0; t < pn; ++t) store_width(dst + (p0 + t) * ldd, r[t], width);
  }
}

void sgemm_pack_rows_avx2(const float* src, int64_t lds, int kc, int len, int width, float* dst) {
  assert(width == 8 || width == 16);
  const int panels = (len + width - 1) / width;
  const int full = len / width;  // panels with every column present
  for (int p = 0; p < kc; ++p) {
    const float* s = src + p * lds;
    float* d = dst + int64_t(p) * width;
    const int64_t panel_stride = int64_t(width) * kc;
    int q = 0;
    for (; q < full; ++q) {
      const float* sq = s + q * width;
      float* dq = d + q * panel_stride;
      _mm256_store_ps(dq, _mm256_loadu_ps(sq));
      if (width == 16) _mm256_store_ps(dq + 8, _mm256_loadu_ps(sq + 8));
    }
    for (; q < panels; ++q) {
      const int v = len - q * width;
      const float* sq = s + q * width;
      float* dq = d + q * panel_stride;
      _mm256_store_ps(dq, _mm256_maskload_ps(sq, lanes(v)));
      if (width == 16) _mm256_store_ps(dq + 8, _mm256_maskload_ps(sq + 8, lanes(v - 8)));
    }
  }
}

}  // namespace convlab::cpu
