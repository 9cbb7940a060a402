// Tiled SGEMM (see sgemm.hpp for the contract; tile geometry in sgemm_tiles.hpp).
//
// Work split: one thread block per BM x BN tile of C (blockIdx.x along N,
// blockIdx.y along M, blockIdx.z = batch x batch2; grids over the device's y / z
// limits run as chunks), 256 threads, each owning a TM x TN register tile of
// accumulators in float4-wide groups of rows and columns (sgemm_tiles.hpp: the
// groups spread so that a quarter-warp's fragment reads hit 32 distinct banks).
// Main loop over K in slabs of BK, double-buffered: shared memory holds two
// slabs of A (BM x BK) and B (BK x BN), k-major (As[kk][i], Bs[kk][j]). While
// the block computes slab s from one buffer, each thread has already issued
// its global loads of slab s + 1 into registers; after the BK rank-1 updates it
// stores them into the other buffer, and one barrier per slab separates the
// two (the buffer written in step s was last read in step s - 1, before the
// previous barrier).
// Global loads: each thread stages one chunk of 4 consecutive elements per
// operand and slab along the operand's contiguous axis (k for A, i for A^T, j
// for B, k for B^T), as float4 loads whatever the leading dimension: a chunk
// whose address is 16-byte aligned is one float4; one that is not (a row of an
// odd leading dimension starts 4, 8 or 12 bytes past a boundary) is picked from
// the two aligned float4s around it when both lie inside the row's valid
// elements; only chunks at a row's ragged ends go element by element with
// bounds checks (zeros outside the matrix).
// Assumes: m, n, k >= 1; leading dimensions valid for the given transposes.
#include "kernels/cuda/gemm/sgemm.hpp"

#include <algorithm>
#include <cassert>
#include <cstdint>

#include "kernels/cuda/gemm/sgemm_tiles.hpp"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

constexpr int kThreads = 256;

// row[col .. col + 3] of a row with `limit` valid elements, zeros past it.
__device__ __forceinline__ float4 load_chunk(const float* __restrict__ row, int col, int limit) {
  const float* p = row + col;
  const int r = int(reinterpret_cast<uintptr_t>(p) / sizeof(float) % 4);  // floats past a 16-byte boundary
  switch (sgemm_load_kind(r, col, limit)) {
    case SgemmLoad::vector: return simt::vload(reinterpret_cast<const float4*>(p));
    case SgemmLoad::realigned: {
      const float4 lo = simt::vload(reinterpret_cast<const float4*>(p - r));
      const float4 hi = simt::vload(reinterpret_cast<const float4*>(p - r + 4));
      if (r == 1) return float4{lo.y, lo.z, lo.w, hi.x};
      if (r == 2) return float4{lo.z, lo.w, hi.x, hi.y};
      return float4{lo.w, hi.x, hi.y, hi.z};
    }
    case SgemmLoad::scalar: break;
  }
  float v[4];
  for (int e = 0; e < 4; ++e) v[e] = col + e < limit ? p[e] : 0.0f;
  return float4{v[0], v[1], v[2], v[3]};
}

// This thread's chunk of one operand's slab from k0: X rows / columns from x0
// (x_limit valid), K elements (k valid). ALONG_K: element (x, kk) at
// base[x * ld + kk]; else (kk, x) at base[kk * ld + x].
template <bool ALONG_K>
__device__ __forceinline__ float4 load_slab(const float* __restrict__ base, int ld, SgemmChunk ch, int x0, int x_limit,
                                            int k0, int k) {
  if (ALONG_K) {
    const int x = x0 + ch.x;
    return x < x_limit ? load_chunk(base + int64_t(x) * ld, k0 + ch.kk, k) : float4{0.0f, 0.0f, 0.0f, 0.0f};
  }
  const int kk = k0 + ch.kk;
  return kk < k ? load_chunk(base + int64_t(kk) * ld, x0 + ch.x, x_limit) : float4{0.0f, 0.0f, 0.0f, 0.0f};
}

// The chunk into a k-major shared slab with rows of LD floats (sgemm_tiles.hpp).
template <bool ALONG_K, int LD>
__device__ __forceinline__ void store_slab(float* s, SgemmChunk ch, float4 v) {
  if (ALONG_K) {
    s[(ch.kk + 0) * LD + ch.x] = v.x;
    s[(ch.kk + 1) * LD + ch.x] = v.y;
    s[(ch.kk + 2) * LD + ch.x] = v.z;
    s[(ch.kk + 3) * LD + ch.x] = v.w;
  } else {
    simt::vstore(reinterpret_cast<float4*>(s + ch.kk * LD + ch.x), v);
  }
}

template <class T, bool TA, bool TB>
__global__ void __launch_bounds__(kThreads)
    sgemm_kernel(int m, int n, int k, const float* __restrict__ a, int lda, int64_t stride_a,
                 const float* __restrict__ b, int ldb, int64_t stride_b, float* __restrict__ c, int ldc,
                 int64_t stride_c, int batch2, int64_t stride2_a, int64_t stride2_b, int64_t stride2_c,
                 bool accumulate) {
  constexpr int BM = T::BM, BN = T::BN, BK = T::BK, TM = T::TM, TN = T::TN;
  CONVLAB_SHARED(float4, as4, [2][BK][T::kLdA / 4]);  // 2 x (BK, BM + 4)
  CONVLAB_SHARED(float4, bs4, [2][BK][T::kLdB / 4]);  // 2 x (BK, BN + 4)

  const int tid = int(threadIdx.x);
  const int m0 = int(blockIdx.y) * BM, n0 = int(blockIdx.x) * BN;
  const int z1 = int(blockIdx.z) / batch2, z2 = int(blockIdx.z) - z1 * batch2;
  a += int64_t(z1) * stride_a + int64_t(z2) * stride2_a;
  b += int64_t(z1) * stride_b + int64_t(z2) * stride2_b;
  c += int64_t(z1) * stride_c + int64_t(z2) * stride2_c;
  constexpr bool kAlongKA = !TA, kAlongKB = TB;  // A is contiguous along k, B^T too
  const SgemmChunk cha = T::template chunk<BM>(tid, kAlongKA), chb = T::template chunk<BN>(tid, kAlongKB);

  float acc[TM][TN];
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  // Slab 0 into buffer 0.
  float4 va = load_slab<kAlongKA>(a, lda, cha, m0, m, 0, k);
  float4 vb = load_slab<kAlongKB>(b, ldb, chb, n0, n, 0, k);
  store_slab<kAlongKA, T::kLdA>(reinterpret_cast<float*>(&as4[0][0][0]), cha, va);
  store_slab<kAlongKB, T::kLdB>(reinterpret_cast<float*>(&bs4[0][0][0]), chb, vb);
  __syncthreads();

  int buf = 0;
  for (int k0 = 0; k0 < k; k0 += BK) {
    const bool next = k0 + BK < k;  // uniform across the block
    if (next) {  // slab s + 1's global loads, in flight during slab s's updates
      va = load_slab<kAlongKA>(a, lda, cha, m0, m, k0 + BK, k);
      vb = load_slab<kAlongKB>(b, ldb, chb, n0, n, k0 + BK, k);
    }
    // ---- BK rank-1 updates of the TM x TN register tile from buffer buf ----
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float ra[TM], rb[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 t = as4[buf][kk][T::row(tid, i) / 4];
        ra[i] = t.x; ra[i + 1] = t.y; ra[i + 2] = t.z; ra[i + 3] = t.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 t = bs4[buf][kk][T::col(tid, j) / 4];
        rb[j] = t.x; rb[j + 1] = t.y; rb[j + 2] = t.z; rb[j + 3] = t.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    if (next) {  // into the other buffer: last read in the previous step, before the last barrier
      store_slab<kAlongKA, T::kLdA>(reinterpret_cast<float*>(&as4[buf ^ 1][0][0]), cha, va);
      store_slab<kAlongKB, T::kLdB>(reinterpret_cast<float*>(&bs4[buf ^ 1][0][0]), chb, vb);
    }
    __syncthreads();
    buf ^= 1;
  }

  for (int i = 0; i < TM; ++i) {
    const int gi = m0 + T::row(tid, i);
    if (gi >= m) continue;
    float* row = c + int64_t(gi) * ldc;
    for (int j = 0; j < TN; ++j) {
      const int gj = n0 + T::col(tid, j);
      if (gj < n) row[gj] = accumulate ? row[gj] + acc[i][j] : acc[i][j];
    }
  }
}

template <class T>
void run_tile(const SgemmArgs& g, void* stream) {
  // grid.y (M tiles) and grid.z (batch) beyond the device limits: chunks, each
  // with A, B, C offset to its first row block / batch entry (a two-level batch
  // fits one z range: sgemm() asserts it).
  simt::for_each_grid_chunk(
      uint64_t((g.n + T::BN - 1) / T::BN), uint64_t((g.m + T::BM - 1) / T::BM), uint64_t(g.batch) * g.batch2,
      [&](dim3 grid, unsigned y0, unsigned z0) {
        const int64_t r0 = int64_t(y0) * T::BM;
        const float* a = g.a + int64_t(z0) * g.stride_a + (g.trans_a ? r0 : r0 * g.lda);
        const float* b = g.b + int64_t(z0) * g.stride_b;
        float* c = g.c + int64_t(z0) * g.stride_c + r0 * g.ldc;
        const int m = int(g.m - r0);
#define CONVLAB_SGEMM_CASE(TA, TB)                                                                                  \
  if (g.trans_a == TA && g.trans_b == TB) {                                                                         \
    CONVLAB_LAUNCH((sgemm_kernel<T, TA, TB>), grid, dim3(kThreads), 0, stream, m, g.n, g.k, a, g.lda, g.stride_a, b, \
                   g.ldb, g.stride_b, c, g.ldc, g.stride_c, g.batch2, g.stride2_a, g.stride2_b, g.stride2_c,       \
                   g.accumulate);                                                                                   \
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
  assert(g.m > 0 && g.n > 0 && g.k > 0 && g.batch > 0 && g.batch2 > 0);
  // A two-level batch is not split into grid chunks (their offsets assume one level): refuse, never mis-run.
  if (g.batch2 > 1 && int64_t(g.batch) * g.batch2 > int64_t(simt::grid_limits().z))
    fail("sgemm: a two-level batch of " + std::to_string(g.batch) + " x " + std::to_string(g.batch2) +
         " exceeds grid.z's " + std::to_string(simt::grid_limits().z));
  assert(g.lda >= (g.trans_a ? g.m : g.k) && g.ldb >= (g.trans_b ? g.k : g.n) && g.ldc >= g.n);
  if (tile == SgemmTile::automatic) tile = sgemm_pick_tile(g.m, g.n, g.batch * g.batch2);
  if (tile == SgemmTile::t128x128) {
    run_tile<SgemmTile128>(g, stream);
  } else {
    run_tile<SgemmTile64>(g, stream);
  }
}

}  // namespace convlab::cuda
