// AVX-512 Winograd kernels: the 16-lane transforms of transforms_impl.hpp
// compiled for AVX-512 (one zmm per 16 tiles), and the 12 x 32 micro-kernel of
// the batched GEMM.
//
// Micro-kernel: C[12 x 32] (+)= A[kc x 12]^T B[kc x 32]. Per step p: two zmm
// loads of B row p, twelve broadcasts of A row p, 24 FMAs into 24 zmm
// accumulators (27 of the 32 registers). Single-threaded; the caller splits
// work. Assumes a, b readable for kc rows, c writable 12 rows of 32 floats.
#include <immintrin.h>

#include "kernels/cpu/winograd/transforms_impl.hpp"

namespace convlab::winograd {

namespace {

void gemm_ukernel_avx512(int kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  static_assert(kMR == 12 && kNR == 32, "micro-kernel is 12 x 32");
  __m512 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  __m512 c60, c61, c70, c71, c80, c81, c90, c91, ca0, ca1, cb0, cb1;
  if (accumulate) {
#define LD(r, x0, x1) x0 = _mm512_loadu_ps(c + (r) * ldc); x1 = _mm512_loadu_ps(c + (r) * ldc + 16);
    LD(0, c00, c01) LD(1, c10, c11) LD(2, c20, c21) LD(3, c30, c31) LD(4, c40, c41) LD(5, c50, c51)
    LD(6, c60, c61) LD(7, c70, c71) LD(8, c80, c81) LD(9, c90, c91) LD(10, ca0, ca1) LD(11, cb0, cb1)
#undef LD
  } else {
    c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm512_setzero_ps();
    c60 = c61 = c70 = c71 = c80 = c81 = c90 = c91 = ca0 = ca1 = cb0 = cb1 = _mm512_setzero_ps();
  }
  for (int p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * kNR), _MM_HINT_T0);
#define FM(i, x0, x1)                                  \
  {                                                    \
    const __m512 ai = _mm512_set1_ps(a[i]);            \
    x0 = _mm512_fmadd_ps(ai, b0, x0);                  \
    x1 = _mm512_fmadd_ps(ai, b1, x1);                  \
  }
    FM(0, c00, c01) FM(1, c10, c11) FM(2, c20, c21) FM(3, c30, c31) FM(4, c40, c41) FM(5, c50, c51)
    FM(6, c60, c61) FM(7, c70, c71) FM(8, c80, c81) FM(9, c90, c91) FM(10, ca0, ca1) FM(11, cb0, cb1)
#undef FM
    a += kMR;
    b += kNR;
  }
#define ST(r, x0, x1) _mm512_storeu_ps(c + (r) * ldc, x0); _mm512_storeu_ps(c + (r) * ldc + 16, x1);
  ST(0, c00, c01) ST(1, c10, c11) ST(2, c20, c21) ST(3, c30, c31) ST(4, c40, c41) ST(5, c50, c51)
  ST(6, c60, c61) ST(7, c70, c71) ST(8, c80, c81) ST(9, c90, c91) ST(10, ca0, ca1) ST(11, cb0, cb1)
#undef ST
}

}  // namespace

const Kernels& kernels_avx512() {
  static const Kernels k = {"avx512", input_transform, output_transform, dst_transform, gemm_ukernel_avx512, filter_transform_block, filter_grad_block};
  return k;
}

}  // namespace convlab::winograd
