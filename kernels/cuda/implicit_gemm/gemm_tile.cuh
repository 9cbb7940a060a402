// The implicit GEMM's block tile (kernels/cuda/implicit_gemm/implicit_gemm.cu says the scheme): the
// lattice that finds a GEMM element's tensor element, one GEMM of a launch, and the BM x BN tile a block
// computes and stores. Included by implicit_gemm.cu only.
#pragma once

#include <climits>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda::igemm {

constexpr int BK = 16, TM = 4;
constexpr int kOut = INT_MIN / 2;  // an h or w that fails every bounds test (padding rows / columns of a tile)

// A point i of a lattice over (a, y, x), y < ny, x < nx: its image position
// (h, w) = (y*hs + h0, x*ws + w0), its offset in the gathered tensor
// off = a*oa + h*oh + w, and a second, linear offset lin = a*sa + y*sy + x*sx + s0.
struct Lattice {
  int ny, nx;
  int hs, h0, ws, w0;
  int oa, oh;
  int sa, sy, sx, s0;
};

struct Point {
  int off, h, w, lin;
};

__device__ __forceinline__ Point at(const Lattice& l, int i) {
  const int yx = l.ny * l.nx, a = i / yx, y = (i - a * yx) / l.nx, x = i - a * yx - y * l.nx;
  const int h = y * l.hs + l.h0, w = x * l.ws + l.w0;
  return Point{a * l.oa + h * l.oh + w, h, w, a * l.sa + y * l.sy + x * l.sx + l.s0};
}

struct Gemm {
  int m, n, k;
  const float* a;
  int a_group, a_ld;
  const float* b;
  int b_group, lim_h, lim_w;
  float* c;
  int c_group, c_ld;
  const int4* rows;  // (k): {off, h, w, lin} of each reduction row
  Lattice cols;
};

// Split K: blockIdx.z = group + groups*split; split s sums reduction rows
// [s*k_split, (s+1)*k_split) into C + s*c_split (one split: all of K into C).
struct Split {
  int groups, k_split;
  int64_t c_split;
};

// C's columns lie stride_w apart (backward-data's phases): a thread's four
// columns would be four scattered stores, each warp store touching a sector per
// lane. Register row i of every thread goes through shared memory cs (the B
// slabs, free once the K loop ended on a barrier), then each thread stores one
// column, so a warp stores 32 consecutive columns.
template <int BM, int BN>
__device__ __forceinline__ void store_tile_staged(const Gemm& gm, float* c, float* cs, const float (&acc)[TM][4], int m0,
                                                  int n0, int tid, int tx, int ty) {
  constexpr int TN = 4, kThreads = (BM / TM) * (BN / TN), LB = BN + 4;
  constexpr int kRowsT = BM / TM, kPer = kRowsT * BN / kThreads, LC = BN + 4;
  static_assert(kThreads % BN == 0 && kRowsT * LC <= 2 * BK * LB, "a register row's stage fits the B slabs");
  const int jj = tid % BN, r0 = tid / BN, lj = n0 + jj < gm.n ? at(gm.cols, n0 + jj).lin : -1;  // cs: (kRowsT, BN + 4)
  for (int i = 0; i < TM; ++i) {
    float4 v;
    v.x = acc[i][0], v.y = acc[i][1], v.z = acc[i][2], v.w = acc[i][3];
    reinterpret_cast<float4*>(cs + ty * LC)[tx] = v;
    __syncthreads();
    for (int t = 0; t < kPer; ++t) {
      const int r = r0 + t * (kThreads / BN), gi = m0 + r * TM + i;
      if (lj >= 0 && gi < gm.m) c[int64_t(gi) * gm.c_ld + lj] = cs[r * LC + jj];
    }
    __syncthreads();
  }
}

// acc += one BK-deep slab's products: this thread's TM rows of A (column ty
// of the k-major A slab) times its TN columns of B (column tx).
template <int TN, int LA4, int LB4>
__device__ __forceinline__ void mac_slab(const float4 (&as)[BK][LA4], const float4 (&bs)[BK][LB4], int tx, int ty,
                                         float (&acc)[TM][TN]) {
  for (int kk = 0; kk < BK; ++kk) {
    const float4 a4 = as[kk][ty];
    const float fa[TM] = {a4.x, a4.y, a4.z, a4.w};
    float fb[TN];
    if constexpr (TN == 4) {
      const float4 b4 = bs[kk][tx];
      fb[0] = b4.x, fb[1] = b4.y, fb[2] = b4.z, fb[3] = b4.w;
    } else {
      fb[0] = reinterpret_cast<const float*>(&bs[kk][0])[tx];
    }
    for (int i = 0; i < TM; ++i)
      for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
  }
}

// A tile's constants: threads, padded shared rows, and how the threads share a
// slab's loads. Thread tid's loads: A at rows ia + t*(kThreads/BK) of the tile
// (ia = tid / BK), reduction row ka = tid % BK of each slab; B (walk n) at
// columns lane + 32*jc, rows warp + kWarps*r (a warp reads 32 consecutive
// columns of one row, and each thread reads kRowsN table rows per slab, not
// one per element); B (walk k) at reduction row ka, columns jk + t*(kThreads/BK)
// (jk = tid / BK).
template <int BM, int BN, int TN, bool kWalkK, bool kTf32 = false>
struct TileShape {
  static constexpr int kThreads = (BM / TM) * (BN / TN);
  // Padded shared rows: +4 keeps a float4 row read conflict-free; the tensor-core
  // fragments read (k + t, i + g), t < 4, g < 8, which lands on 32 distinct banks
  // when the row length is 8 (mod 32): +8 there.
  static constexpr int LA = BM + (kTf32 ? 8 : 4), LB = BN + (kTf32 ? 8 : 4);
  // The tensor-core tiles keep A, and B where it walks k, element-major: a row of
  // LK = BK + 4 reduction elements per A row (B column). The stash's 16 lanes of
  // consecutive k then write consecutive words (k-major rows of 8 (mod 32) would put
  // every fourth lane on one bank), and a fragment's (g, t) reads g*LK + t: 32
  // distinct banks.
  static constexpr int LK = BK + 4;
  static constexpr bool kAT = kTf32, kBT = kTf32 && kWalkK;
  // The slabs' shapes in float4: A (BK, LA) or (BM, LK); B (BK, LB) or (BN, LK).
  static constexpr int kARows = kAT ? BM : BK, kA4 = (kAT ? LK : LA) / 4;
  static constexpr int kBRows = kBT ? BN : BK, kB4 = (kBT ? LK : LB) / 4;
  // A elements per thread and slab (a 4-row tile has fewer than threads: the first BM*BK threads load one)
  static constexpr int kA = BM * BK >= kThreads ? BM * BK / kThreads : 1, kB = BN * BK / kThreads;
  // B walking n: warp w, lane l gathers columns l + 32*jc (jc < BN/32) of rows w + kWarps*r (r < BK/kWarps)
  static constexpr int kWarps = kThreads / 32, kRowsN = BK / kWarps, kCols = kWalkK ? kB : BN / 32;
  static_assert(kThreads % BK == 0 && BN % 32 == 0 && BK % kWarps == 0 && kB >= 1 && (TN == 1 || TN == 4),
                "tile / thread mapping");
  static_assert(kWalkK || kRowsN * kCols == kB, "walking n, a thread's rows x columns are its B elements");
};

// The tensor-core tile (kTf32): the block's warps as WM x WN, each computing a
// (BM / WM) x (BN / WN) warp tile of MI x NI m16n8k8 MMAs; a thread holds
// MI * NI * 4 = TM * 4 accumulators, as many as the FMA tile's.
template <int BM, int BN>
struct MmaShape {
  static constexpr int kWarps = (BM / TM) * (BN / 4) / 32;
  static constexpr int WM = BM >= 32 ? BM / 32 : 1, WN = kWarps / WM;
  static constexpr int MI = BM / WM / 16, NI = BN / WN / 8;
  static_assert(BM % 16 == 0 && kWarps % WM == 0 && MI * 16 * WM == BM && NI * 8 * WN == BN && MI * NI == TM,
                "tensor-core warp tiling");
};

// acc += one BK-deep slab's products on the tensor cores: warp (wm, wn)'s
// MI x NI fragments, two k-steps of 8. The slabs hold TF32 values (rounded
// when stashed). acc's fragment (mi, ni) element e is C(wm*BM/WM + mi*16 + g +
// 8*(e/2), wn*BN/WN + ni*8 + 2*t + e%2), g = lane / 4, t = lane % 4.
// as: the A slab (BM, LK), element-major; bs: the B slab, (BN, LK) element-major
// when kBT (walking k) else (BK, LB) k-major.
template <int BM, int BN, int LK, int LB, bool kBT>
__device__ __forceinline__ void mma_slab(const float* as, const float* bs, int warp, int lane,
                                         float (&acc)[MmaShape<BM, BN>::MI][MmaShape<BM, BN>::NI][4]) {
  using S = MmaShape<BM, BN>;
  const int g = lane / 4, t = lane % 4;
  const int i0 = (warp % S::WM) * (BM / S::WM) + g, j0 = (warp / S::WM) * (BN / S::WN) + g;
  for (int k8 = 0; k8 < BK; k8 += 8) {
    float fa[S::MI][4], fb[S::NI][2];
    for (int mi = 0; mi < S::MI; ++mi) {
      const float* a = as + (i0 + mi * 16) * LK + k8 + t;  // A(i, k), A(i + 8, k), A(i, k + 4), A(i + 8, k + 4)
      fa[mi][0] = a[0], fa[mi][1] = a[8 * LK], fa[mi][2] = a[4], fa[mi][3] = a[8 * LK + 4];
    }
    for (int ni = 0; ni < S::NI; ++ni) {
      const int j = j0 + ni * 8;  // B(k, j), B(k + 4, j)
      if constexpr (kBT) {
        fb[ni][0] = bs[j * LK + k8 + t], fb[ni][1] = bs[j * LK + k8 + t + 4];
      } else {
        fb[ni][0] = bs[(k8 + t) * LB + j], fb[ni][1] = bs[(k8 + t + 4) * LB + j];
      }
    }
    for (int mi = 0; mi < S::MI; ++mi)
      for (int ni = 0; ni < S::NI; ++ni) simt::mma_m16n8k8_tf32(acc[mi][ni], fa[mi], fb[ni]);
  }
}

// The fragments' accumulators into the FMA tile's layout (thread (tx, ty) holds
// C(ty*TM + i, tx*4 + j)) through shared memory cs (BM, BN + 4), so both paths
// store C the same way. Begins and ends on a barrier.
template <int BM, int BN>
__device__ __forceinline__ void fragments_to_rows(float* cs, int warp, int lane, int tx, int ty,
                                                  const float (&frag)[MmaShape<BM, BN>::MI][MmaShape<BM, BN>::NI][4],
                                                  float (&acc)[TM][4]) {
  using S = MmaShape<BM, BN>;
  constexpr int LC = BN + 4;
  const int g = lane / 4, t = lane % 4;
  const int i0 = (warp % S::WM) * (BM / S::WM) + g, j0 = (warp / S::WM) * (BN / S::WN) + 2 * t;
  for (int mi = 0; mi < S::MI; ++mi)
    for (int ni = 0; ni < S::NI; ++ni)
      for (int e = 0; e < 4; ++e) cs[(i0 + mi * 16 + 8 * (e / 2)) * LC + j0 + ni * 8 + e % 2] = frag[mi][ni][e];
  __syncthreads();
  for (int i = 0; i < TM; ++i) {
    const float4 v = reinterpret_cast<const float4*>(cs + (ty * TM + i) * LC)[tx];
    acc[i][0] = v.x, acc[i][1] = v.y, acc[i][2] = v.z, acc[i][3] = v.w;
  }
  __syncthreads();
}

// Reduction row kk's table entry {off, h, w, lin}; past kend, one that fails every bounds test.
__device__ __forceinline__ int4 table_row(const Gemm& gm, int kk, int kend) {
  if (kk < kend) return gm.rows[kk];
  int4 out;
  out.x = 0, out.y = kOut, out.z = kOut, out.w = 0;
  return out;
}

// B(kk, j) for column point cp and reduction row `row`: the tensor element, or 0 in the padding.
__device__ __forceinline__ float gather_b(const Gemm& gm, const float* b, const Point& cp, const int4& row) {
  const int h = cp.h + row.y, w = cp.w + row.z;
  return unsigned(h) < unsigned(gm.lim_h) && unsigned(w) < unsigned(gm.lim_w) ? b[cp.off + row.x] : 0.0f;
}

// One block's BM x BN tile of gm: M tile y0 + blockIdx.y, N tile blockIdx.x,
// z = group + groups*split.
// Thread (tx, ty)'s TM x TN accumulators into C: rows m0 + ty*TM + i, columns
// n0 + tx*TN + j; four contiguous, 16-byte aligned columns as one float4.
template <int TN>
__device__ __forceinline__ void store_tile(const Gemm& gm, float* c, const float (&acc)[TM][TN], int m0, int n0, int tx,
                                           int ty) {
  int lin[TN];
  for (int j = 0; j < TN; ++j) {
    const int gj = n0 + tx * TN + j;
    lin[j] = gj < gm.n ? at(gm.cols, gj).lin : -1;
  }
  bool run4 = TN == 4 && n0 + tx * TN + TN - 1 < gm.n;  // four contiguous columns
  for (int j = 1; j < TN; ++j) run4 = run4 && lin[j] == lin[0] + j;
  for (int i = 0; i < TM; ++i) {
    const int gi = m0 + ty * TM + i;
    if (gi >= gm.m) continue;
    float* out = c + int64_t(gi) * gm.c_ld;
    if (run4 && reinterpret_cast<uintptr_t>(out + lin[0]) % sizeof(float4) == 0) {
      if constexpr (TN == 4) {
        float4 v;
        v.x = acc[i][0], v.y = acc[i][1], v.z = acc[i][2], v.w = acc[i][3];
        simt::vstore(reinterpret_cast<float4*>(out + lin[0]), v);
        continue;
      }
    }
    for (int j = 0; j < TN; ++j)
      if (lin[j] >= 0) out[lin[j]] = acc[i][j];
  }
}

// kTf32: the slabs are stored rounded to TF32 and multiplied on the tensor
// cores (mma_slab); the accumulators are then moved into the FMA layout and
// stored as below.
template <int BM, int BN, int TN, bool kWalkK, bool kStage = false, bool kTf32 = false>
__device__ __forceinline__ void gemm_tile(const Gemm& gm, const Split& split, unsigned y0, int z) {
  using T = TileShape<BM, BN, TN, kWalkK, kTf32>;
  static_assert(!kTf32 || TN == 4, "the tensor-core tiles have 4 columns per thread");
  const auto stored = [](float v) {
    if constexpr (kTf32) return simt::to_tf32(v);
    return v;
  };
  constexpr int kThreads = T::kThreads, LA = T::LA, LB = T::LB, LK = T::LK, kA = T::kA, kB = T::kB;
  constexpr int kWarps = T::kWarps, kRowsN = T::kRowsN, kCols = T::kCols;
  CONVLAB_SHARED(float4, as4, [2][T::kARows][T::kA4]);  // A slabs: (2, BK, LA) k-major, or (2, BM, LK)
  CONVLAB_SHARED(float4, bs4, [2][T::kBRows][T::kB4]);  // B slabs: (2, BK, LB) k-major, or (2, BN, LK)
  const int tid = int(threadIdx.x), tx = tid % (BN / TN), ty = tid / (BN / TN);
  // grid chunks: (M tiles, group + groups*split) = (y0 + blockIdx.y, z0 + blockIdx.z)
  const int m0 = int(blockIdx.y + y0) * BM, n0 = int(blockIdx.x) * BN;
  const int g = z % split.groups, sp = z / split.groups;
  const int kbeg = sp * split.k_split, kend = gm.k - kbeg < split.k_split ? gm.k : kbeg + split.k_split;
  const float* a = gm.a + int64_t(g) * gm.a_group;
  const float* b = gm.b + int64_t(g) * gm.b_group;
  float* c = gm.c + int64_t(g) * gm.c_group + sp * split.c_split;

  // This thread's loads: where TileShape says.
  const int ka = tid % BK, ia = tid / BK, lane = tid % 32, warp = tid / 32, jk = tid / BK;
  Point col[kCols];
  for (int t = 0; t < kCols; ++t) {
    const int j = n0 + (kWalkK ? jk + t * (kThreads / BK) : lane + 32 * t);
    col[t] = j < gm.n ? at(gm.cols, j) : Point{0, kOut, kOut, 0};
  }
  const auto row_at = [&](int kk) { return table_row(gm, kk, kend); };
  const auto gather = [&](const Point& cp, const int4& row) { return gather_b(gm, b, cp, row); };

  float ra[kA], rb[kB];
  const auto load = [&](int k0) {  // slab k0 -> registers
    const int4 row = row_at(k0 + ka);
    for (int t = 0; t < kA; ++t) {
      const int il = ia + t * (kThreads / BK), i = m0 + il;
      ra[t] = il < BM && k0 + ka < kend && i < gm.m ? a[i * gm.a_ld + row.w] : 0.0f;
    }
    if constexpr (kWalkK) {
      for (int t = 0; t < kB; ++t) rb[t] = gather(col[t], row);
    } else {
      for (int r = 0; r < kRowsN; ++r) {
        const int4 rn = row_at(k0 + warp + kWarps * r);
        for (int jc = 0; jc < kCols; ++jc) rb[r * kCols + jc] = gather(col[jc], rn);
      }
    }
  };
  const auto stash = [&](int buf) {  // registers -> shared buffer buf
    float* as = reinterpret_cast<float*>(&as4[buf][0][0]);
    float* bs = reinterpret_cast<float*>(&bs4[buf][0][0]);
    for (int t = 0; t < kA; ++t)
      if (ia + t * (kThreads / BK) < BM)
        as[T::kAT ? (ia + t * (kThreads / BK)) * LK + ka : ka * LA + ia + t * (kThreads / BK)] = stored(ra[t]);
    if constexpr (kWalkK) {
      for (int t = 0; t < kB; ++t)
        bs[T::kBT ? (jk + t * (kThreads / BK)) * LK + ka : ka * LB + jk + t * (kThreads / BK)] = stored(rb[t]);
    } else {
      for (int r = 0; r < kRowsN; ++r)
        for (int jc = 0; jc < kCols; ++jc)
          bs[(warp + kWarps * r) * LB + lane + 32 * jc] = stored(rb[r * kCols + jc]);
    }
  };

  float acc[TM][TN];
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  load(kbeg);
  stash(0);
  __syncthreads();
  using S = std::conditional_t<kTf32, MmaShape<BM, BN>, MmaShape<64, 64>>;  // (unused by the FMA tiles)
  float frag[S::MI][S::NI][4] = {};
  for (int k0 = kbeg, buf = 0; k0 < kend; k0 += BK, buf ^= 1) {
    const bool more = k0 + BK < kend;  // the same in every thread: the barrier below is not divergent
    if (more) load(k0 + BK);
    if constexpr (kTf32) {
      mma_slab<BM, BN, LK, LB, T::kBT>(&as4[buf][0][0].x, &bs4[buf][0][0].x, warp, lane, frag);
    } else {
      mac_slab<TN>(as4[buf], bs4[buf], tx, ty, acc);
    }
    if (more) stash(buf ^ 1);
    __syncthreads();
  }
  if constexpr (kTf32) {
    CONVLAB_SHARED(float4, cs4, [BM][(BN + 4) / 4]);  // the fragments' accumulators, (BM, BN + 4)
    fragments_to_rows<BM, BN>(&cs4[0][0].x, warp, lane, tx, ty, frag, acc);
  }

  if constexpr (kStage && TN == 4) {
    if (gm.cols.sx != 1) {
      store_tile_staged<BM, BN>(gm, c, reinterpret_cast<float*>(&bs4[0][0][0]), acc, m0, n0, tid, tx, ty);
      return;
    }
  }
  store_tile<TN>(gm, c, acc, m0, n0, tx, ty);
}

}  // namespace convlab::cuda::igemm
