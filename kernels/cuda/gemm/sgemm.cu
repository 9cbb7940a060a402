// Tiled SGEMM (see sgemm.hpp for the contract).
//
// Work split: one thread block per BM x BN tile of C (blockIdx.x along N,
// blockIdx.y along M, blockIdx.z = batch; grids over the device's y / z limits
// run as chunks), 256 threads, each owning a TM x TN
// register tile of accumulators at rows ty*TM.., columns tx*TN.. of the block tile.
// Main loop over K in steps of BK: the block stages A's BM x BK slice and B's
// BK x BN slice in shared memory, both stored k-major (As[kk][i], Bs[kk][j]) so
// the inner product reads TM and TN consecutive floats as float4s; then each
// thread does BK rank-1 updates of its register tile.
// Global loads: chunks of 4 consecutive elements along the contiguous axis of
// A / B (k for A, i for A^T, j for B, k for B^T), as one float4 when the chunk
// is inside the matrix and the leading dimension / base are 16-byte aligned,
// else element by element with bounds checks (ragged edges read zeros).
// Assumes: m, n, k >= 1; leading dimensions valid for the given transposes.
#include "kernels/cuda/gemm/sgemm.hpp"

#include <algorithm>
#include <cassert>

#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

constexpr int kThreads = 256;

template <int BM, int BN, int BK, int TM, int TN, bool TA, bool TB>
__global__ void __launch_bounds__(kThreads)
    sgemm_kernel(int m, int n, int k, const float* __restrict__ a, int lda, int64_t stride_a,
                 const float* __restrict__ b, int ldb, int64_t stride_b, float* __restrict__ c, int ldc,
                 int64_t stride_c, bool accumulate, bool vec_a, bool vec_b) {
  static_assert((BM / TM) * (BN / TN) == kThreads, "one register tile per thread");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "float4 granularity");
  constexpr int LDA_S = (BM + 4) / 4;  // padded rows, in float4s
  constexpr int LDB_S = (BN + 4) / 4;
  CONVLAB_SHARED(float4, as4, [BK][LDA_S]);  // (BK, BM + 4)
  CONVLAB_SHARED(float4, bs4, [BK][LDB_S]);  // (BK, BN + 4)
  float* as = reinterpret_cast<float*>(&as4[0][0]);
  float* bs = reinterpret_cast<float*>(&bs4[0][0]);

  const int tid = int(threadIdx.x);
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int m0 = int(blockIdx.y) * BM, n0 = int(blockIdx.x) * BN;
  a += int64_t(blockIdx.z) * stride_a;
  b += int64_t(blockIdx.z) * stride_b;
  c += int64_t(blockIdx.z) * stride_c;

  float acc[TM][TN];
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < k; k0 += BK) {
    // ---- stage A(m0 .. m0+BM, k0 .. k0+BK) into as[kk][i] ----
    for (int ch = tid; ch < BM * BK / 4; ch += kThreads) {
      float v[4];
      if (!TA) {  // contiguous along k: chunk = (i, kk4 .. kk4+3)
        const int i = ch / (BK / 4), kk = (ch % (BK / 4)) * 4;
        const int gi = m0 + i, gk = k0 + kk;
        const float* p = a + int64_t(gi) * lda + gk;
        if (vec_a && gi < m && gk + 3 < k) {
          const float4 t = simt::vload(reinterpret_cast<const float4*>(p));
          v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
        } else {
          for (int e = 0; e < 4; ++e) v[e] = (gi < m && gk + e < k) ? p[e] : 0.0f;
        }
        for (int e = 0; e < 4; ++e) as[(kk + e) * (LDA_S * 4) + i] = v[e];
      } else {  // contiguous along i: chunk = (kk, i4 .. i4+3)
        const int kk = ch / (BM / 4), i = (ch % (BM / 4)) * 4;
        const int gi = m0 + i, gk = k0 + kk;
        const float* p = a + int64_t(gk) * lda + gi;
        if (vec_a && gk < k && gi + 3 < m) {
          const float4 t = simt::vload(reinterpret_cast<const float4*>(p));
          v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
        } else {
          for (int e = 0; e < 4; ++e) v[e] = (gk < k && gi + e < m) ? p[e] : 0.0f;
        }
        for (int e = 0; e < 4; ++e) as[kk * (LDA_S * 4) + i + e] = v[e];
      }
    }
    // ---- stage B(k0 .. k0+BK, n0 .. n0+BN) into bs[kk][j] ----
    for (int ch = tid; ch < BN * BK / 4; ch += kThreads) {
      float v[4];
      if (!TB) {  // contiguous along j: chunk = (kk, j4 .. j4+3)
        const int kk = ch / (BN / 4), j = (ch % (BN / 4)) * 4;
        const int gk = k0 + kk, gj = n0 + j;
        const float* p = b + int64_t(gk) * ldb + gj;
        if (vec_b && gk < k && gj + 3 < n) {
          const float4 t = simt::vload(reinterpret_cast<const float4*>(p));
          v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
        } else {
          for (int e = 0; e < 4; ++e) v[e] = (gk < k && gj + e < n) ? p[e] : 0.0f;
        }
        for (int e = 0; e < 4; ++e) bs[kk * (LDB_S * 4) + j + e] = v[e];
      } else {  // contiguous along k: chunk = (j, kk4 .. kk4+3)
        const int j = ch / (BK / 4), kk = (ch % (BK / 4)) * 4;
        const int gj = n0 + j, gk = k0 + kk;
        const float* p = b + int64_t(gj) * ldb + gk;
        if (vec_b && gj < n && gk + 3 < k) {
          const float4 t = simt::vload(reinterpret_cast<const float4*>(p));
          v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
        } else {
          for (int e = 0; e < 4; ++e) v[e] = (gj < n && gk + e < k) ? p[e] : 0.0f;
        }
        for (int e = 0; e < 4; ++e) bs[(kk + e) * (LDB_S * 4) + j] = v[e];
      }
    }
    __syncthreads();

    // ---- BK rank-1 updates of the TM x TN register tile ----
    for (int kk = 0; kk < BK; ++kk) {
      float ra[TM], rb[TN];
      for (int i = 0; i < TM; i += 4) {
        const float4 t = as4[kk][(ty * TM + i) / 4];
        ra[i] = t.x; ra[i + 1] = t.y; ra[i + 2] = t.z; ra[i + 3] = t.w;
      }
      for (int j = 0; j < TN; j += 4) {
        const float4 t = bs4[kk][(tx * TN + j) / 4];
        rb[j] = t.x; rb[j + 1] = t.y; rb[j + 2] = t.z; rb[j + 3] = t.w;
      }
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    __syncthreads();
  }

  for (int i = 0; i < TM; ++i) {
    const int gi = m0 + ty * TM + i;
    if (gi >= m) break;
    float* row = c + int64_t(gi) * ldc;
    for (int j = 0; j < TN; ++j) {
      const int gj = n0 + tx * TN + j;
      if (gj < n) row[gj] = accumulate ? row[gj] + acc[i][j] : acc[i][j];
    }
  }
}

bool aligned16(const void* p, int ld, int64_t stride) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0 && ld % 4 == 0 && stride % 4 == 0;
}

template <int BM, int BN, int BK, int TM, int TN>
void run_tile(const SgemmArgs& g, void* stream) {
  const bool va = aligned16(g.a, g.lda, g.stride_a), vb = aligned16(g.b, g.ldb, g.stride_b);
  // grid.y (M tiles) and grid.z (batch) beyond the device limits: chunks, each
  // with A, B, C offset to its first row block / batch entry.
  simt::for_each_grid_chunk(
      uint64_t((g.n + BN - 1) / BN), uint64_t((g.m + BM - 1) / BM), uint64_t(g.batch),
      [&](dim3 grid, unsigned y0, unsigned z0) {
        const int64_t r0 = int64_t(y0) * BM;
        const float* a = g.a + int64_t(z0) * g.stride_a + (g.trans_a ? r0 : r0 * g.lda);
        const float* b = g.b + int64_t(z0) * g.stride_b;
        float* c = g.c + int64_t(z0) * g.stride_c + r0 * g.ldc;
        const int m = int(g.m - r0);
#define CONVLAB_SGEMM_CASE(TA, TB)                                                                                 \
  if (g.trans_a == TA && g.trans_b == TB) {                                                                         \
    CONVLAB_LAUNCH((sgemm_kernel<BM, BN, BK, TM, TN, TA, TB>), grid, dim3(kThreads), 0, stream, m, g.n, g.k, a, g.lda, \
                   g.stride_a, b, g.ldb, g.stride_b, c, g.ldc, g.stride_c, g.accumulate, va, vb);                   \
    return;                                                                                                         \
  }
        CONVLAB_SGEMM_CASE(false, false)
        CONVLAB_SGEMM_CASE(true, false)
        CONVLAB_SGEMM_CASE(false, true)
        CONVLAB_SGEMM_CASE(true, true)
#undef CONVLAB_SGEMM_CASE
      });
}

}  // namespace

const char* to_string(SgemmTile t) {
  switch (t) {
    case SgemmTile::automatic: return "auto";
    case SgemmTile::t128x128: return "128x128";
    case SgemmTile::t64x64: return "64x64";
  }
  return "?";
}

SgemmTile sgemm_pick_tile(int m, int n, int batch) {
  const int64_t blocks128 = int64_t((m + 127) / 128) * ((n + 127) / 128) * batch;
  return (m >= 128 && n >= 128 && blocks128 >= 64) ? SgemmTile::t128x128 : SgemmTile::t64x64;
}

void sgemm(const SgemmArgs& g, void* stream, SgemmTile tile) {
  assert(g.m > 0 && g.n > 0 && g.k > 0 && g.batch > 0);
  assert(g.lda >= (g.trans_a ? g.m : g.k) && g.ldb >= (g.trans_b ? g.k : g.n) && g.ldc >= g.n);
  if (tile == SgemmTile::automatic) tile = sgemm_pick_tile(g.m, g.n, g.batch);
  if (tile == SgemmTile::t128x128) {
    run_tile<128, 128, 8, 8, 8>(g, stream);
  } else {
    run_tile<64, 64, 16, 4, 4>(g, stream);
  }
}

}  // namespace convlab::cuda
