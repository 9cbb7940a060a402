// The hand-written SGEMM's block-tile geometry (kernels/cuda/gemm/sgemm.cu): which
// elements each of the 256 threads stages into shared memory and which it
// accumulates, as constexpr index arithmetic the kernel uses and the tests
// check for shared-memory bank conflicts (tests/kernels/cuda/sgemm_test.cpp).
//
// Shared memory holds A's BM x BK and B's BK x BN slab k-major, As[kk][i] and
// Bs[kk][j], rows of kLdA = BM + 4 / kLdB = BN + 4 floats (16-byte aligned),
// two of each (double buffering).
//
// Register tile: thread tid owns TM x TN outputs, in groups of 4 consecutive
// rows / columns, the groups BM / (TM / 4) rows and BN / (TN / 4) columns apart:
//   row(tid, i) = (i / 4) * (BM / (TM / 4)) + (tid / (BN / TN)) * 4 + i % 4
//   col(tid, j) = (j / 4) * (BN / (TN / 4)) + (tid % (BN / TN)) * 4 + j % 4
// so its fragment reads are float4s at Bs[kk][col(tid, 4 f)], and the 8 lanes
// of a quarter-warp (consecutive tid % (BN / TN)) read 8 consecutive float4s:
// 32 consecutive words, one per bank. (Groups of TN consecutive columns,
// tx * TN, put the 8 lanes' float4s 2 x 16 bytes apart for TN = 8: lanes 0 and 4
// on the same banks, a 2-way conflict.) A's reads, row(tid, 4 f), are one
// float4 per 16 lanes: broadcasts.
//
// Staging: per slab each thread loads one chunk of 4 consecutive elements of
// each operand along its contiguous axis (BM * BK / 4 = BN * BK / 4 = 256):
//   contiguous along k (A, B^T): chunk (x, kk .. kk + 3), x = tid / (BK / 4),
//     kk = tid % (BK / 4) * 4, stored as 4 words (kk + e) * ld + x;
//   contiguous along x (A^T, B): chunk (kk, x .. x + 3), x = tid % (X / 4) * 4,
//     kk = tid / (X / 4), stored as one float4 at kk * ld + x.
#pragma once

#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

// How the kernel reads a chunk row[col .. col + 3] of a row with `limit` valid
// elements, r = the chunk's address in floats past a 16-byte boundary:
//   vector     r == 0: one float4
//   realigned  the two aligned float4s around it (both inside the row's valid
//              elements), the chunk picked from them: any leading dimension
//   scalar     element by element with bounds checks (a row's ragged ends)
enum class SgemmLoad { vector, realigned, scalar };
__host__ __device__ constexpr SgemmLoad sgemm_load_kind(int r, int col, int limit) {
  if (col + 4 > limit) return SgemmLoad::scalar;
  if (r == 0) return SgemmLoad::vector;
  if (col >= r && col - r + 8 <= limit) return SgemmLoad::realigned;
  return SgemmLoad::scalar;
}

struct SgemmChunk {
  int x, kk;  // first element: (x, kk) along k, (kk, x) along x
};

template <int BM_, int BN_, int BK_, int TM_, int TN_>
struct SgemmTileShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int kThreads = 256;
  static constexpr int kThreadsN = BN / TN;
  static constexpr int kLdA = BM + 4, kLdB = BN + 4;  // shared rows, floats
  static_assert((BM / TM) * (BN / TN) == kThreads, "one register tile per thread");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "float4 granularity");
  static_assert(BM * BK / 4 == kThreads && BN * BK / 4 == kThreads, "one staged chunk per thread and operand");

  __host__ __device__ static constexpr int row(int tid, int i) {
    return (i / 4) * (BM / (TM / 4)) + (tid / kThreadsN) * 4 + i % 4;
  }
  __host__ __device__ static constexpr int col(int tid, int j) {
    return (j / 4) * (BN / (TN / 4)) + (tid % kThreadsN) * 4 + j % 4;
  }
  // The chunk thread tid stages of an operand with X = BM or BN rows / columns.
  template <int X>
  __host__ __device__ static constexpr SgemmChunk chunk(int tid, bool along_k) {
    return along_k ? SgemmChunk{tid / (BK / 4), tid % (BK / 4) * 4} : SgemmChunk{tid % (X / 4) * 4, tid / (X / 4)};
  }
};

using SgemmTile128 = SgemmTileShape<128, 128, 8, 8, 8>;  // SgemmTile::t128x128
using SgemmTile64 = SgemmTileShape<64, 64, 16, 4, 4>;    // SgemmTile::t64x64

}  // namespace convlab::cuda
