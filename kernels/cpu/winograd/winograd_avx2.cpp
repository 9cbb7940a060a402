// AVX2 + FMA Winograd kernels: the 16-lane transforms of transforms_impl.hpp
// compiled for AVX2 (two ymm per 16 tiles), and the 12 x 32 micro-kernel done
// as four 6 x 16 register blocks (12 ymm accumulators, 2 B loads, 1 broadcast).
#include <immintrin.h>

#include "kernels/cpu/winograd/transforms_impl.hpp"

namespace convlab::winograd {

namespace {

void block_6x16(int kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  __m256 acc[6][2];
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 2; ++j) acc[i][j] = accumulate ? _mm256_loadu_ps(c + i * ldc + 8 * j) : _mm256_setzero_ps();
  for (int p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
    for (int i = 0; i < 6; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += kMR;
    b += kNR;
  }
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 2; ++j) _mm256_storeu_ps(c + i * ldc + 8 * j, acc[i][j]);
}

void gemm_ukernel_avx2(int kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  for (int ib = 0; ib < kMR; ib += 6)
    for (int jb = 0; jb < kNR; jb += 16) block_6x16(kc, a + ib, b + jb, c + ib * ldc + jb, ldc, accumulate);
}

}  // namespace

const Kernels& kernels_avx2() {
  static const Kernels k = {"avx2", input_transform, output_transform, dst_transform, gemm_ukernel_avx2, filter_transform_block, filter_grad_block};
  return k;
}

}  // namespace convlab::winograd
