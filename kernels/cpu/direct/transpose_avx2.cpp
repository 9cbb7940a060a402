// 8 x 8 fp32 transpose in AVX2 registers for the blocked-layout conversions
// (layout.cpp) at V = 8: rows of 8 pixels of 8 channels <-> 8 channel planes.
// dst[i][j] = src[j][i]; rows at src + j*src_stride, dst + i*dst_stride.
// The partial form reads and writes only i < ni, j < nj (masked loads, plain
// stores of the first nj lanes).
// Single-threaded; the caller splits the work.
#include <immintrin.h>

#include "kernels/cpu/direct/transpose.hpp"

namespace convlab::cpu::direct {

namespace {
// r[j] (row j) -> r[i] (column i), in registers.
inline void transpose_regs(__m256 r[8]) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // 00 10 01 11 | 04 14 05 15
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // 02 12 03 13 | 06 16 07 17
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);      // 00 10 20 30 | 04 14 24 34
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);  // 01 11 21 31 | 05 15 25 35
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);      // column i: rows 0-3 | 4-7
    t[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);  // column i + 4
  }
  for (int i = 0; i < 8; ++i) r[i] = t[i];
}
// Lanes l < n set.
inline __m256i first_lanes(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
}  // namespace

void transpose8x8_avx2(const float* src, int64_t src_stride, float* dst, int64_t dst_stride) {
  __m256 r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * src_stride);
  transpose_regs(r);
  for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + i * dst_stride, r[i]);
}

namespace {
// Stores the first n (0..8) lanes of v at p with plain stores: a masked store
// (vmaskmovps) is microcoded and slow on AMD cores.
inline void store_first(float* p, __m256 v, int n) {
  if (n == 8) return _mm256_storeu_ps(p, v);
  __m128 x = _mm256_castps256_ps128(v);
  if (n >= 4) {
    _mm_storeu_ps(p, x);
    x = _mm256_extractf128_ps(v, 1);
    p += 4, n -= 4;
  }
  if (n >= 2) {
    _mm_storel_pi(reinterpret_cast<__m64*>(p), x);
    x = _mm_movehl_ps(x, x);
    p += 2, n -= 2;
  }
  if (n) _mm_store_ss(p, x);
}
}  // namespace

void transpose8x8_part_avx2(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int ni, int nj) {
  const __m256i mi = first_lanes(ni);
  __m256 r[8];
  for (int j = 0; j < 8; ++j)
    r[j] = j >= nj ? _mm256_setzero_ps() : ni == 8 ? _mm256_loadu_ps(src + j * src_stride)
                                                   : _mm256_maskload_ps(src + j * src_stride, mi);
  transpose_regs(r);
  for (int i = 0; i < ni; ++i) store_first(dst + i * dst_stride, r[i], nj);
}

void transpose8x8_to_avx2(const float* src, int64_t src_stride, float* dst, const int64_t* dst_off, int ni) {
  const __m256i mi = first_lanes(ni);
  __m256 r[8];
  for (int j = 0; j < 8; ++j)
    r[j] = ni == 8 ? _mm256_loadu_ps(src + j * src_stride) : _mm256_maskload_ps(src + j * src_stride, mi);
  transpose_regs(r);
  for (int i = 0; i < ni; ++i) _mm256_storeu_ps(dst + dst_off[i], r[i]);
}

// Each output vector takes its lanes from the three planes through one permute each and two blends:
//   out0 = r0 g0 b0 r1 g1 b1 r2 g2,  out1 = b2 r3 g3 b3 r4 g4 b4 r5,  out2 = g5 b5 r6 g6 b6 r7 g7 b7.
void interleave3x8_avx2(const float* p0, const float* p1, const float* p2, float* dst) {
  const __m256 r = _mm256_loadu_ps(p0), g = _mm256_loadu_ps(p1), b = _mm256_loadu_ps(p2);
  // Lane j of out k holds pixel (8k + j) / 3 of channel (8k + j) % 3.
  const __m256 r0 = _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 0, 0, 1, 1, 1, 2, 2));
  const __m256 g0 = _mm256_permutevar8x32_ps(g, _mm256_setr_epi32(0, 0, 0, 1, 1, 1, 2, 2));
  const __m256 b0 = _mm256_permutevar8x32_ps(b, _mm256_setr_epi32(0, 0, 0, 1, 1, 1, 2, 2));
  const __m256 r1 = _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(2, 3, 3, 3, 4, 4, 4, 5));
  const __m256 g1 = _mm256_permutevar8x32_ps(g, _mm256_setr_epi32(2, 3, 3, 3, 4, 4, 4, 5));
  const __m256 b1 = _mm256_permutevar8x32_ps(b, _mm256_setr_epi32(2, 3, 3, 3, 4, 4, 4, 5));
  const __m256 r2 = _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7));
  const __m256 g2 = _mm256_permutevar8x32_ps(g, _mm256_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7));
  const __m256 b2 = _mm256_permutevar8x32_ps(b, _mm256_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7));
  // Blend masks (bit j: lane j from the second operand): channel of lane j = (8k + j) % 3.
  _mm256_storeu_ps(dst, _mm256_blend_ps(_mm256_blend_ps(r0, g0, 0x92), b0, 0x24));       // g: 1 4 7, b: 2 5
  _mm256_storeu_ps(dst + 8, _mm256_blend_ps(_mm256_blend_ps(r1, g1, 0x24), b1, 0x49));   // g: 2 5, b: 0 3 6
  _mm256_storeu_ps(dst + 16, _mm256_blend_ps(_mm256_blend_ps(r2, g2, 0x49), b2, 0x92));  // g: 0 3 6, b: 1 4 7
}

}  // namespace convlab::cpu::direct
