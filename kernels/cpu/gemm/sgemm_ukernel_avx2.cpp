// sgemm_ukernel_6x16_avx2: C(6 x 16) = alpha * A_panel * B_panel + beta * C.
//
// Shapes: a = packed A panel (kc, 6), b = packed B panel (kc, 16), C row-major
// with ldc; rows < m and columns < n are written. Per k step: 2 ymm loads of B,
// 6 broadcasts of A, 12 FMAs into 12 ymm accumulators (the BLIS haswell shape).
// Partial tiles go through a small stack tile (AVX2 has no cheap masks).
// Single-threaded; the driver splits tiles across threads. Intrinsics only.
#include <immintrin.h>

#include "kernels/cpu/gemm/sgemm_ukernels.hpp"

namespace convlab::cpu {

void sgemm_ukernel_6x16_avx2(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                             float beta, int m, int n) {
  constexpr int MR = 6, NR = 16;
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) {
    acc[i][0] = _mm256_setzero_ps();
    acc[i][1] = _mm256_setzero_ps();
  }
#pragma GCC unroll 4
  for (int p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(b);
    const __m256 b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += MR;
    b += NR;
  }
  const __m256 va = _mm256_set1_ps(alpha);
  if (m == MR && n == NR) {
    const __m256 vb = _mm256_set1_ps(beta);
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) {
      float* ci = c + i * ldc;
      __m256 r0 = _mm256_mul_ps(va, acc[i][0]);
      __m256 r1 = _mm256_mul_ps(va, acc[i][1]);
      if (beta != 0.0f) {
        r0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci), r0);
        r1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8), r1);
      }
      _mm256_storeu_ps(ci, r0);
      _mm256_storeu_ps(ci + 8, r1);
    }
    return;
  }
  alignas(32) float tile[MR][NR];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) {
    _mm256_store_ps(tile[i], _mm256_mul_ps(va, acc[i][0]));
    _mm256_store_ps(tile[i] + 8, _mm256_mul_ps(va, acc[i][1]));
  }
  for (int i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    if (beta == 0.0f) {
      for (int j = 0; j < n; ++j) ci[j] = tile[i][j];
    } else {
      for (int j = 0; j < n; ++j) ci[j] = tile[i][j] + beta * ci[j];
    }
  }
}

}  // namespace convlab::cpu
