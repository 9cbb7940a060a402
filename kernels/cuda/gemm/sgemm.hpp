// Hand-written tiled SGEMM for the CUDA algorithms (kernels/cuda/gemm/sgemm.cu).
//
//   C[z](i, j) = sum_k A[z](i, k) * B[z](k, j)  (+ C[z](i, j) when accumulate)
//   A(i, k) = trans_a ? a[k * lda + i] : a[i * lda + k]      i < m, k < k
//   B(k, j) = trans_b ? b[j * ldb + k] : b[k * ldb + j]      j < n
//   batch z in [0, batch): a + z * stride_a, b + z * stride_b, c + z * stride_c
// Row-major, fp32 accumulation. Pointers are device pointers.
#pragma once

#include <cstdint>

namespace convlab::cuda {

// Block tile (BM x BN, BK deep) / per-thread register tile, both 256 threads:
//   t128x128: 128 x 128 x 8,  8 x 8 per thread  (large M and N)
//   t64x64:    64 x  64 x 16, 4 x 4 per thread  (small or skinny problems)
enum class SgemmTile { automatic, t128x128, t64x64 };
const char* to_string(SgemmTile t);

struct SgemmArgs {
  int m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int lda = 0;
  int64_t stride_a = 0;
  bool trans_a = false;
  const float* b = nullptr;
  int ldb = 0;
  int64_t stride_b = 0;
  bool trans_b = false;
  float* c = nullptr;
  int ldc = 0;
  int64_t stride_c = 0;
  int batch = 1;
  bool accumulate = false;  // C += A*B instead of C = A*B
  // A second batch level inside the first: entry (b, b2) starts at
  // base + b * stride + b2 * stride2 (a split of K into slices is b2 stepping
  // along k, each slice's C its own partial result). With batch2 > 1, batch * batch2
  // must fit grid.z (65535): sgemm() throws otherwise.
  int batch2 = 1;
  int64_t stride2_a = 0, stride2_b = 0, stride2_c = 0;
};

// The tile `automatic` resolves to: 128x128 when both M and N reach 128 and the
// grid still has >= 64 blocks (enough to fill most of an H100's 132 SMs), else 64x64.
SgemmTile sgemm_pick_tile(int m, int n, int batch);

void sgemm(const SgemmArgs& args, void* stream, SgemmTile tile = SgemmTile::automatic);

}  // namespace convlab::cuda
