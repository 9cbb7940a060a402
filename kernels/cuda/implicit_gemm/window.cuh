// Backward-data's stride phases when the GEMM has at most 4 rows (M = Cg <= 4:
// a network's first layer, whose input gradient has 3 channels): the
// column-window kernel. Included by implicit_gemm.cu only, after gemm_tile.cuh.
//
// A block tile of 4 x 128 gathers every B element for 3 useful multiplies, once
// per tap: the gathers, not the arithmetic, set its time. Here each thread owns
// kWinY consecutive rows y0.. of one column x of the phase (input pixels of one
// image) and all M rows of C, and walks the reduction in units of one (k, sv):
// the unit's th taps rv read diff_dst at row y0 + yi + h(rv), and
// h(rv) = h(th-1) + (th-1-rv) when the phase's taps are one diff_dst row apart
// (dilation 1, or a dilation dividing the stride). So a unit loads
// kWinY + th - 1 values of one diff_dst column once, as a register window, and
// multiplies each by up to th taps of M rows: kWinY * th * M FMAs for
// kWinY + th - 1 loads, against M per load in the tile. Consecutive threads
// take consecutive columns x, so each load is coalesced across a warp. A, the
// phase's dense (groups, M, k) matrix, goes through shared memory a chunk of
// rows at a time as one float4 (the M rows of one reduction row) per tap, read
// by a whole warp at one address (a broadcast).
#pragma once

#include "kernels/cuda/implicit_gemm/gemm_tile.cuh"

namespace convlab::cuda::igemm {

constexpr int kWinY = 8;         // rows per thread
constexpr int kWinMaxTaps = 8;   // th, the phase's taps along h, at most this (else the tiles run)
constexpr int kWinRows = 512;    // A rows per shared-memory chunk (8 KiB)
constexpr int kWinThreads = 128;

// One phase's taps: th along h, ts along w (its table rows are (k, rv, sv),
// kk = (k*th + rv)*ts + sv).
struct Window {
  int th, ts;
};

// Whether the column window runs a launch of `count` phases with M rows: M <= 4,
// at most kWinMaxTaps taps along h, one diff_dst row apart (one tap: any step),
// and one output channel's taps within an A chunk. False: the tiles run.
inline bool window_fits(int m, const Window* win, const bool* unit_step, int count) {
  if (m > 4) return false;
  for (int p = 0; p < count; ++p)
    if (win[p].th < 1 || win[p].th > kWinMaxTaps || win[p].ts < 1 || win[p].th * win[p].ts > kWinRows ||
        !(unit_step[p] || win[p].th == 1))
      return false;
  return true;
}

// acc[i][yi] += sum over rv < TH of A(i, (k, rv, sv)) * seg[yi + TH-1-rv]: one unit of TH taps.
// src: diff_dst at the unit's lowest row (rv = TH-1) and this column, h its row, ld diff_dst's row length.
// as: the unit's A rows, ts apart (rv = 0, 1, ...).
template <int kM, int TH>
__device__ __forceinline__ void window_unit(const float* src, int h, int ld, int lim_h, const float4* as, int ts,
                                            int ny, float (&acc)[4][kWinY]) {
  float seg[kWinY + TH - 1];
  for (int i = 0; i < kWinY + TH - 1; ++i)
    seg[i] = i < ny + TH - 1 && unsigned(h + i) < unsigned(lim_h) ? src[i * ld] : 0.0f;
  for (int rv = 0; rv < TH; ++rv) {
    const float4 a = as[rv * ts];
    const float ar[4] = {a.x, a.y, a.z, a.w};
    for (int i = 0; i < kM; ++i)
      for (int yi = 0; yi < kWinY; ++yi) acc[i][yi] = fmaf(ar[i], seg[yi + TH - 1 - rv], acc[i][yi]);
  }
}

template <int kM>
__device__ __forceinline__ void window_unit_th(int th, const float* src, int h, int ld, int lim_h, const float4* as,
                                               int ts, int ny, float (&acc)[4][kWinY]) {
  switch (th) {
    case 1: window_unit<kM, 1>(src, h, ld, lim_h, as, ts, ny, acc); break;
    case 2: window_unit<kM, 2>(src, h, ld, lim_h, as, ts, ny, acc); break;
    case 3: window_unit<kM, 3>(src, h, ld, lim_h, as, ts, ny, acc); break;
    case 4: window_unit<kM, 4>(src, h, ld, lim_h, as, ts, ny, acc); break;
    case 5: window_unit<kM, 5>(src, h, ld, lim_h, as, ts, ny, acc); break;
    case 6: window_unit<kM, 6>(src, h, ld, lim_h, as, ts, ny, acc); break;
    case 7: window_unit<kM, 7>(src, h, ld, lim_h, as, ts, ny, acc); break;
    default: window_unit<kM, 8>(src, h, ld, lim_h, as, ts, ny, acc); break;
  }
}

// Block z: group z % groups of phase z / groups. Thread t of the phase: column
// x = t % wp of rows y0 = ((t / wp) % ychunks) * kWinY.. of image n = t / (wp * ychunks).
// gm.a is the phase's dense A, A(i, kk) = a[g*a_group + i*a_ld + kk]; its
// columns (n, y, x) have h = y, w = x and off, lin linear in y (oh, sy).
template <int kM>
__device__ __forceinline__ void window_phase(const Gemm& gm, const Window win, int g) {
  CONVLAB_SHARED(float4, as, [kWinRows]);
  const int wp = gm.cols.nx, hp = gm.cols.ny, ychunks = (hp + kWinY - 1) / kWinY;
  const int64_t threads = int64_t(gm.n / (wp * hp)) * ychunks * wp;
  if (int64_t(blockIdx.x) * kWinThreads >= threads) return;  // the whole block (a narrower phase): before any barrier
  const int64_t t = int64_t(blockIdx.x) * kWinThreads + threadIdx.x;
  const bool live = t < threads;
  const int x = live ? int(t % wp) : 0, yc = live ? int(t / wp % ychunks) : 0, n = live ? int(t / wp / ychunks) : 0;
  const int y0 = yc * kWinY;
  const Point c0 = live ? at(gm.cols, (n * hp + y0) * wp + x) : Point{0, kOut, kOut, 0};
  const int ny = live ? (hp - y0 < kWinY ? hp - y0 : kWinY) : 0;
  const float* a = gm.a + int64_t(g) * gm.a_group;
  const float* b = gm.b + int64_t(g) * gm.b_group;
  float acc[4][kWinY];
  for (int i = 0; i < 4; ++i)
    for (int yi = 0; yi < kWinY; ++yi) acc[i][yi] = 0.0f;

  const int th = win.th, ts = win.ts, per_k = th * ts, kg = gm.k / per_k, k_chunk = kWinRows / per_k;
  for (int k0 = 0; k0 < kg; k0 += k_chunk) {
    const int nk = kg - k0 < k_chunk ? kg - k0 : k_chunk, kk0 = k0 * per_k;
    __syncthreads();  // the previous chunk's reads are done
    for (int e = int(threadIdx.x); e < nk * per_k; e += kWinThreads) {
      float4 v;
      v.x = a[kk0 + e];
      v.y = kM > 1 ? a[gm.a_ld + kk0 + e] : 0.0f;
      v.z = kM > 2 ? a[2 * gm.a_ld + kk0 + e] : 0.0f;
      v.w = kM > 3 ? a[3 * gm.a_ld + kk0 + e] : 0.0f;
      as[e] = v;
    }
    __syncthreads();
    if (!live) continue;
    for (int u = 0; u < nk * ts; ++u) {  // unit (k, sv) = (k0 + u / ts, u % ts)
      const int kl = u / ts, sv = u - kl * ts, low = (kl * th + th - 1) * ts + sv;  // its row rv = th-1
      const int4 r = gm.rows[kk0 + low];
      if (unsigned(c0.w + r.z) >= unsigned(gm.lim_w)) continue;
      window_unit_th<kM>(th, b + c0.off + r.x, c0.h + r.y, gm.cols.oh, gm.lim_h, as + kl * per_k + sv, ts, ny, acc);
    }
  }
  if (!live) return;
  float* c = gm.c + int64_t(g) * gm.c_group + c0.lin;
  for (int i = 0; i < kM; ++i)
    for (int yi = 0; yi < kWinY; ++yi)
      if (yi < ny) c[int64_t(i) * gm.c_ld + int64_t(yi) * gm.cols.sy] = acc[i][yi];
}

}  // namespace convlab::cuda::igemm
