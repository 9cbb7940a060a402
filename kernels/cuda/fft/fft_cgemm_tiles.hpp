// The FFT complex GEMM's block-tile geometry (kernels/cuda/fft/fft_conv.cu):
// which values each of the 256 threads stages into shared memory and which it
// accumulates, as constexpr index arithmetic the kernel uses and the tests
// check for ownership and shared-memory bank conflicts
// (tests/kernels/cuda/fft_cgemm_test.cpp).
//
// A block owns a kBM x kBN tile of out at kF consecutive frequencies; shared
// memory holds each operand's slab as float2 [kBK][rows][kF] (A: rows of out,
// B: columns), two of each (double buffering).
// Staging: thread t stages (row x, reduction index kk + 2i, frequency t % 4),
//   x = t / 4 % 32, kk = t / 128, i < 4: a warp stores 32 consecutive float2.
// Register tile: thread t accumulates rows tm + 8i and columns tn + 8j (i, j <
//   4) at frequency t % 4; lane l = f + 4 (tm % 2) + 8 (tn % 4) and warp
//   w = tm / 2 + 4 (tn / 4), so a warp's fragment reads of one k touch 8 (A) or
//   16 (B) consecutive float2: no bank conflicts.
#pragma once

#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

inline constexpr int kCgemmThreads = 256, kCgemmBM = 32, kCgemmBN = 32, kCgemmBK = 8, kCgemmF = 4, kCgemmTM = 4,
                     kCgemmTN = 4;
static_assert(kCgemmBM * kCgemmBK * kCgemmF == 4 * kCgemmThreads && kCgemmBN == kCgemmBM, "4 staged values per thread");
static_assert(kCgemmBM == 8 * kCgemmTM && kCgemmBN == 8 * kCgemmTN && kCgemmThreads == kCgemmF * 8 * 8,
              "thread = (f, tm < 8, tn < 8)");

__host__ __device__ constexpr int cgemm_f(int tid) { return tid % kCgemmF; }
// staging: the slab row and first reduction index (then + 2, + 4, + 6)
__host__ __device__ constexpr int cgemm_stage_row(int tid) { return tid / kCgemmF % kCgemmBM; }
__host__ __device__ constexpr int cgemm_stage_kk(int tid) { return tid / (kCgemmF * kCgemmBM); }
// register tile: rows cgemm_tm + 8i, columns cgemm_tn + 8j
__host__ __device__ constexpr int cgemm_tm(int tid) { return tid / 32 % 4 * 2 + tid % 32 / kCgemmF % 2; }
__host__ __device__ constexpr int cgemm_tn(int tid) { return tid / 32 / 4 * 4 + tid % 32 / 8; }
// float2 index into one [kBK][rows][kF] slab
__host__ __device__ constexpr int cgemm_slab_index(int kk, int row, int f) {
  return (kk * kCgemmBM + row) * kCgemmF + f;
}

}  // namespace convlab::cuda
