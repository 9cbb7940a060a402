// sgemm_ukernel_12x32_avx512: C(12 x 32) = alpha * A_panel * B_panel + beta * C.
//
// Shapes: a = packed A panel (kc, 12), b = packed B panel (kc, 32), C row-major
// with ldc; only rows < m and columns < n are read or written (AVX-512 masks).
// Per k step: 2 zmm loads of B, 12 broadcasts of A (folded into the FMA as
// {1to16} memory operands), 24 FMAs into 24 zmm accumulators; with two FMA
// ports that is 12 cycles of FMA against 7 of loads, so the kernel is FMA-bound.
// Single-threaded; the driver (sgemm.cpp) splits tiles across threads.
// Nothing but intrinsics in this file (no inline library templates compiled
// with AVX-512 flags that the linker could pick for baseline callers).
#include <immintrin.h>

#include "kernels/cpu/gemm/sgemm_ukernels.hpp"

namespace convlab::cpu {

void sgemm_ukernel_12x32_avx512(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                float beta, int m, int n) {
  constexpr int MR = 12, NR = 32;
  __m512 acc[MR][2];
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) {
    acc[i][0] = _mm512_setzero_ps();
    acc[i][1] = _mm512_setzero_ps();
  }
  // One k step: 2 loads of B, 12 broadcasts of A, 24 FMAs.
  auto step = [&]() __attribute__((always_inline)) {
    const __m512 b0 = _mm512_load_ps(b);
    const __m512 b1 = _mm512_load_ps(b + 16);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * NR), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * NR + 16), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += MR;
    b += NR;
  };
  // The C tile (usually not in cache) is prefetched one line every 4 k steps
  // while the FMAs run: all 24 lines at once would fill the L1 miss buffers
  // that the B stream from L2 needs. A short reduction (kc < 4 steps per line:
  // the Winograd backward-filter GEMM reduces over one chunk of tiles, often
  // 32..64) prefetches a line every step instead, so that the whole tile is on
  // its way well before the stores.
  int p = 0;
  const int lines = 2 * m;
  auto prefetch_c = [&](int l) __attribute__((always_inline)) {
    _mm_prefetch(reinterpret_cast<const char*>(c + (l >> 1) * ldc + (l & 1) * 31), _MM_HINT_T0);
  };
  if (kc >= 4 * lines) {
    for (; (p >> 2) < lines; p += 4) {
      prefetch_c(p >> 2);
      step();
      step();
      step();
      step();
    }
  } else {
    for (; p < kc && p < lines; ++p) {
      prefetch_c(p);
      step();
    }
  }
#pragma GCC unroll 4
  for (; p < kc; ++p) step();
  const __mmask16 m0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 m1 = n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1u << (n - 16)) - 1) : __mmask16(0);
  const __m512 va = _mm512_set1_ps(alpha);
  if (beta == 0.0f) {
#pragma GCC unroll 12
    for (int i = 0; i < MR; ++i) {
      if (i < m) {
        float* ci = c + i * ldc;
        _mm512_mask_storeu_ps(ci, m0, _mm512_mul_ps(va, acc[i][0]));
        _mm512_mask_storeu_ps(ci + 16, m1, _mm512_mul_ps(va, acc[i][1]));
      }
    }
  } else {
    const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int i = 0; i < MR; ++i) {
      if (i < m) {
        float* ci = c + i * ldc;
        const __m512 c0 = _mm512_maskz_loadu_ps(m0, ci);
        const __m512 c1 = _mm512_maskz_loadu_ps(m1, ci + 16);
        _mm512_mask_storeu_ps(ci, m0, _mm512_fmadd_ps(vb, c0, _mm512_mul_ps(va, acc[i][0])));
        _mm512_mask_storeu_ps(ci + 16, m1, _mm512_fmadd_ps(vb, c1, _mm512_mul_ps(va, acc[i][1])));
      }
    }
  }
}

}  // namespace convlab::cpu
