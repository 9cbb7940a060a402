// sgemm_pack_transpose_avx512: the transposing half of SGEMM packing (see
// sgemm_ukernels.hpp for the contract): blocks of 16 source rows x 16 columns
// are loaded (masked at the edges, so nothing past row kc or row nj is read),
// transposed in registers (unpack ps, unpack pd, two rounds of 128-bit lane
// shuffles: 64 shuffles per 256 floats) and stored as 16 packed rows of
// `width` lanes. Single-threaded; the driver calls it per panel. Intrinsics only.
// GCC 12 reports its own _mm512_undefined_ps() placeholders inside
// avx512fintrin.h's unpack/shuffle intrinsics as "maybe uninitialized" (a
// false positive of the header, not of this code).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cassert>

#include "kernels/cpu/gemm/sgemm_ukernels.hpp"

namespace convlab::cpu {

namespace {

// r[i] = row i (16 floats) -> r[t] = column t (16 floats, lane i = row i).
inline void transpose16x16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int g = 0; g < 4; ++g) {  // rows 4g..4g+3: r[4g + c] lane L = column 4L + c
    const __m512d a = _mm512_castps_pd(t[4 * g]), b = _mm512_castps_pd(t[4 * g + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * g + 2]), d = _mm512_castps_pd(t[4 * g + 3]);
    r[4 * g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  __m512 o[16];
  for (int j = 0; j < 4; ++j) {
    const __m512 u = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88), v = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xDD);
    const __m512 w = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
    const __m512 x = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xDD);
    o[j] = _mm512_shuffle_f32x4(u, w, 0x88);
    o[8 + j] = _mm512_shuffle_f32x4(u, w, 0xDD);
    o[4 + j] = _mm512_shuffle_f32x4(v, x, 0x88);
    o[12 + j] = _mm512_shuffle_f32x4(v, x, 0xDD);
  }
  for (int i = 0; i < 16; ++i) r[i] = o[i];
}

}  // namespace

void sgemm_pack_transpose_avx512(const float* src, int64_t lds, int nj, int kc, float* dst, int64_t ldd, int width) {
  assert(nj <= 16 && width <= 16 && nj <= width);
  const __mmask16 mw = __mmask16((1u << width) - 1);
  for (int p0 = 0; p0 < kc; p0 += 16) {
    const int pn = kc - p0 < 16 ? kc - p0 : 16;
    const __mmask16 mp = __mmask16((1u << pn) - 1);
    __m512 r[16];
    for (int j = 0; j < 16; ++j)
      r[j] = j < nj ? _mm512_maskz_loadu_ps(mp, src + j * lds + p0) : _mm512_setzero_ps();
    transpose16x16(r);
    for (int t = 0; t < pn; ++t) _mm512_mask_storeu_ps(dst + (p0 + t) * ldd, mw, r[t]);
  }
}

void sgemm_pack_rows_avx512(const float* src, int64_t lds, int kc, int len, int width, float* dst) {
  assert(width <= 32);
  const int panels = (len + width - 1) / width;
  auto lanes = [](int v) { return v <= 0 ? __mmask16(0) : v >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << v) - 1); };
  const __mmask16 w0 = lanes(width), w1 = lanes(width - 16);
  for (int p = 0; p < kc; ++p) {
    const float* s = src + p * lds;
    for (int q = 0; q < panels; ++q) {
      const int v = len - q * width < width ? len - q * width : width;
      const float* sq = s + q * width;
      float* d = dst + (int64_t(q) * kc + p) * width;
      _mm512_mask_storeu_ps(d, w0, _mm512_maskz_loadu_ps(lanes(v), sq));
      if (w1) _mm512_mask_storeu_ps(d + 16, w1, _mm512_maskz_loadu_ps(lanes(v - 16), sq + 16));
    }
  }
}

}  // namespace convlab::cpu
