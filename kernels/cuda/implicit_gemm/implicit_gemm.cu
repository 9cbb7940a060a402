// Implicit GEMM, one kernel for the three directions (cuDNN's IMPLICIT_PRECOMP
// idea): every GEMM element is a tensor element found from a reduction row and
// a GEMM column, each a point of a small lattice (Lattice below):
//   A(i, kk) = a[g*a_group + i*a_ld + row(kk).lin]
//   B(kk, j) = b[g*b_group + col(j).off + row(kk).off]  where 0 <= col(j).h + row(kk).h < lim_h
//                                                         and 0 <= col(j).w + row(kk).w < lim_w (else 0)
//   C(i, j)  -> c[g*c_group + i*c_ld + col(j).lin]
// The rows' {off, h, w, lin} are decomposed once per launch into a table in the
// workspace (row_table_kernel, one thread per row); each thread decomposes its
// own columns once before the K loop. The K loop itself divides nothing: a
// gathered element costs two compares and one add, and a table read (shared by
// the warp) per 2 (64-column tiles) or 4 (128-column tiles) elements.
//
// Backward-data with stride > 1 runs one GEMM per phase (ph, pw) of the input
// pixels (h = ph + stride_h*y, w = pw + stride_w*x): only the taps r with
// r*dil_h = ph + pad_h (mod stride_h) (and s alike) reach that phase, at
// p = y + (ph + pad_h - r*dil_h)/stride_h, so each phase is a dense GEMM over
// Kg * (its taps) rows that gathers no stride holes. Phases no tap reaches
// (3 of 4 for a 1x1 filter at stride 2) are zeros: one contiguous fill of
// diff_src (zero_kernel) before the live phases, which then overwrite their
// pixels. Backward-data's A (wei^T, whose k walk strides by Cg*R*S) is first
// gathered per phase into a dense (groups, Cg, rows) matrix in the workspace
// (prep_phases_kernel, with the tables), so its table rows' lin is the row itself and A's loads
// are contiguous along k as in the forward. The live phases (same M = Cg)
// run as one launch (implicit_gemm_phases_kernel, phase on grid z). With at
// most 4 rows (Cg <= 4: a first layer's 3 input channels) and at most 8 taps
// along h, one diff_dst row apart, they run the column-window kernel instead
// (window.cuh: a thread's 8 rows of one column, each diff_dst value loaded once
// per (k, tap along w) and multiplied by every tap along h), in both maths.
//
// Work split: one block per BM x BN tile of a GEMM's output (blockIdx.x along
// N, blockIdx.y along M, blockIdx.z = group); each thread owns a 4 x 4 register
// tile (4 x 1 in the 4-row tile). Tiles by M: 4 x 128 (M <= 4), 16 x 128
// (M <= 16), 32 x 64 (M <= 32), 64 x 64. K in slabs
// of 16, double-buffered: a thread gathers the next slab into registers while
// the block computes the current one from shared memory, then stores them into
// the other buffer; one __syncthreads per slab. A walks k (consecutive threads,
// consecutive reduction rows); B walks the GEMM's N where N is output / input
// pixels (fwd, bwd-data) and k where k is (bwd-filter), so image reads are
// coalesced along rows. C rows go out as float4 where four columns are
// contiguous and 16-byte aligned (checked at run time), else as scalars.
// Backward-filter (a small Kg x Cg*R*S GEMM over N*P*Q) splits K when its
// tiles would not fill the GPU: each split writes partial sums to the
// workspace (blockIdx.z = group + groups*split), reduce_splits_kernel adds them
// in split order (deterministic).
//
// TF32 (Math::tf32): the same plan, tables and loads; each slab element is
// rounded to TF32 as it is stored in shared memory (rows padded to 8 mod 32
// floats so the fragment reads hit 32 distinct banks), and each warp multiplies
// its (BM/WM) x (BN/WN) part of the tile as m16n8k8 tensor-core MMAs (gemm_tile.cuh's
// MmaShape: 64 x 64 tiles as 2 x 4 warps of 32 x 16, 16 x 128 as 1 x 4 of
// 16 x 32). The accumulators go through shared memory into the FMA tile's
// layout and are stored as above. A (and B where it walks k) is kept
// element-major in shared memory there, rows of BK + 4. M <= 4 keeps the FMA tile (or the column window).
#include "kernels/cuda/implicit_gemm/implicit_gemm.hpp"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kernels/cuda/implicit_gemm/gemm_tile.cuh"
#include "kernels/cuda/implicit_gemm/window.cuh"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

using namespace igemm;

// One GEMM of a launch and the lattice its table rows come from.
struct Sub {
  Gemm gm;
  Lattice rows;
  int64_t row0;     // its table's first row in the workspace
  int splits = 1;   // > 1: partial sums in the workspace after the table, then reduce_splits_kernel
  int k_split = 0;  // reduction rows per split
  // a0 >= 0 (backward-data): A is gathered once per launch (prep_phases_kernel)
  // into a dense (groups, m, k) matrix at float a0 past the table, A(i, kk) =
  // a[g*a_group + i*a_ld + a_cols(kk).lin], so that the GEMM's A loads are
  // contiguous along k like the forward's (wei^T walked along k strides by Cg*R*S).
  int64_t a0 = -1;
  int a_group = 0, a_ld = 0;
  Lattice a_cols{};
  // Backward-data: the phase's taps along h and w, and whether its taps along h
  // are one diff_dst row apart (the column-window kernel's condition, window.cuh).
  Window win{0, 0};
  bool unit_step = false;
};

__global__ void row_table_kernel(Lattice l, int k, int4* rows) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= k) return;
  const Point p = at(l, i);
  int4 v;
  v.x = p.off, v.y = p.h, v.z = p.w, v.w = p.lin;
  rows[i] = v;  // (k, 4)
}

// c[e] = 0 for e < count, four floats a thread (one float4 store where 16-byte aligned).
__global__ void zero_kernel(float* c, int64_t count) {
  const int64_t e = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (e >= count) return;
  if (e + 4 <= count && reinterpret_cast<uintptr_t>(c + e) % sizeof(float4) == 0) {
    float4 z;
    z.x = 0.0f, z.y = 0.0f, z.z = 0.0f, z.w = 0.0f;
    simt::vstore(reinterpret_cast<float4*>(c + e), z);
    return;
  }
  for (int64_t i = e; i < count && i < e + 4; ++i) c[i] = 0.0f;
}

template <int BM, int BN, int TN, bool kWalkK, bool kTf32>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    implicit_gemm_kernel(Gemm gm, Split split, unsigned y0, unsigned z0) {
  gemm_tile<BM, BN, TN, kWalkK, false, kTf32>(gm, split, y0, int(blockIdx.z + z0));
}

// The 16 x 128 tile walking k (backward-filter with Kg <= 16) gathers 16 columns
// per thread: under ptxas's default cap for a 128-thread block (128 registers)
// it spills, so this instantiation may take more (one block per SM suffices).
template <int BM, int BN, int TN, bool kWalkK, bool kTf32>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), 1)
    implicit_gemm_wide_kernel(Gemm gm, Split split, unsigned y0, unsigned z0) {
  gemm_tile<BM, BN, TN, kWalkK, false, kTf32>(gm, split, y0, int(blockIdx.z + z0));
}

// Backward-data's stride phases in one launch (up to kMaxPhases GEMMs with the
// same M): blockIdx.z = group + groups*phase, the grid's N tiles those of the
// widest phase (a narrower phase's blocks past its columns return at once).
// One launch fills the GPU where each phase alone would not (AlexNet conv1's
// 16 phases of 3 x ~104k, ResNet's 3x3 stride-2 layers' 4 phases of 256 x 6272).
// Its C columns, stride_w apart, are stored through shared memory (gemm_tile's
// kStage).
constexpr int kMaxPhases = 16;
struct Phases {
  Gemm gm[kMaxPhases];
  Window win[kMaxPhases];
  int count;
};

// A batch of phases' tables and dense A, one launch: phase p's items are
// [end[p-1], end[p]): its k table rows {off, h, w, lin} (lattice rows[p]), then
// its dense A (groups, m, k) = a[g*a_group + i*a_ld + at(a_cols[p], kk).lin].
struct Prep {
  int count, m, groups, a_group, a_ld;
  int k[kMaxPhases];
  int64_t end[kMaxPhases];
  Lattice rows[kMaxPhases], a_cols[kMaxPhases];
  int4* table[kMaxPhases];
  float* dense[kMaxPhases];
};

static_assert(sizeof(Phases) <= 4096 && sizeof(Prep) <= 4096, "kernel parameters within CUDA's 4 KiB");

__global__ void prep_phases_kernel(const __grid_constant__ Prep pp, const float* a) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int p = 0;
  while (p < pp.count && e >= pp.end[p]) ++p;
  if (p == pp.count) return;
  const int k = pp.k[p];
  const int64_t item = e - (p > 0 ? pp.end[p - 1] : 0);
  if (item < k) {
    const Point r = at(pp.rows[p], int(item));
    int4 v;
    v.x = r.off, v.y = r.h, v.z = r.w, v.w = r.lin;
    pp.table[p][item] = v;  // (k, 4)
    return;
  }
  const int64_t d = item - k, gi = d / k;
  const int kk = int(d - gi * k), g = int(gi / pp.m), i = int(gi - int64_t(g) * pp.m);
  pp.dense[p][d] = a[int64_t(g) * pp.a_group + int64_t(i) * pp.a_ld + at(pp.a_cols[p], kk).lin];  // (groups, m, k)
}

template <int BM, int BN, int TN, bool kTf32>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    implicit_gemm_phases_kernel(const __grid_constant__ Phases ps, int groups, unsigned y0, unsigned z0) {
  const int z = int(blockIdx.z + z0);
  const Gemm gm = ps.gm[z / groups];
  if (int(blockIdx.x) * BN >= gm.n) return;  // the whole block: before any barrier
  gemm_tile<BM, BN, TN, false, true, kTf32>(gm, Split{groups, gm.k, 0}, y0, z % groups);
}

// The phases of at most 4 rows whose taps along h are unit steps: the
// column-window kernel (window.cuh), blockIdx.z = group + groups*phase.
template <int kM>
__global__ void __launch_bounds__(kWinThreads)
    window_phases_kernel(const __grid_constant__ Phases ps, int groups, unsigned z0) {
  const int z = int(blockIdx.z + z0);
  window_phase<kM>(ps.gm[z / groups], ps.win[z / groups], z % groups);
}

// out[e] = sum over s < splits of part[s*count + e], in that order (deterministic).
__global__ void reduce_splits_kernel(const float* part, int count, int splits, float* out) {
  const int e = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= count) return;
  float v = 0.0f;
  for (int s = 0; s < splits; ++s) v += part[int64_t(s) * count + e];  // (splits, count)
  out[e] = v;
}

template <int BM, int BN, int TN, bool kWalkK, bool kTf32>
void launch_tile(const Gemm& gm, const Split& split, int splits, void* stream) {
  simt::for_each_grid_chunk(uint64_t((gm.n + BN - 1) / BN), uint64_t((gm.m + BM - 1) / BM),
                            uint64_t(split.groups) * uint64_t(splits), [&](dim3 grid, unsigned y0, unsigned z0) {
                              if constexpr (BM == 16 && kWalkK) {
                                CONVLAB_LAUNCH((implicit_gemm_wide_kernel<BM, BN, TN, kWalkK, kTf32>), grid,
                                               dim3((BM / TM) * (BN / TN)), 0, stream, gm, split, y0, z0);
                              } else {
                                CONVLAB_LAUNCH((implicit_gemm_kernel<BM, BN, TN, kWalkK, kTf32>), grid,
                                               dim3((BM / TM) * (BN / TN)), 0, stream, gm, split, y0, z0);
                              }
                            });
}

template <int BM, int BN, int TN, bool kTf32>
void launch_phases_tile(const Phases& ps, int n, int groups, void* stream) {
  simt::for_each_grid_chunk(uint64_t((n + BN - 1) / BN), uint64_t((ps.gm[0].m + BM - 1) / BM),
                            uint64_t(groups) * uint64_t(ps.count), [&](dim3 grid, unsigned y0, unsigned z0) {
                              CONVLAB_LAUNCH((implicit_gemm_phases_kernel<BM, BN, TN, kTf32>), grid,
                                             dim3((BM / TM) * (BN / TN)), 0, stream, ps, groups, y0, z0);
                            });
}

// The tile from M: a GEMM with 3 rows (conv1's bwd-data where the column window
// does not apply, the forward of a 3-filter layer) gets 4 x 128 (4 x 1 per thread), not 64 x 64. The tensor-core tiles start at 16 rows (an MMA's
// M): 5 <= M <= 16 takes 16 x 128. M <= 4 keeps the 4 x 128 FMA tile in TF32
// mode too (fp32 products, within the TF32 bound): it is bound by its gathers
// (3 multiplies per gathered element at conv1's M = 3), and the 16 x 128 MMA
// tile measured 1.15x slower there (H200, AlexNet conv1 backward-data, batch 32).
struct Tile {
  int bm, bn;
};
Tile tile_for(int m) { return m <= 4 ? Tile{4, 128} : m <= 16 ? Tile{16, 128} : m <= 32 ? Tile{32, 64} : Tile{64, 64}; }

template <bool kWalkK, bool kTf32>
void launch_gemm(const Gemm& gm, const Split& split, int splits, void* stream) {
  switch (tile_for(gm.m).bm) {
    case 4: launch_tile<4, 128, 1, kWalkK, false>(gm, split, splits, stream); break;
    case 16: launch_tile<16, 128, 4, kWalkK, kTf32>(gm, split, splits, stream); break;
    case 32: launch_tile<32, 64, 4, kWalkK, kTf32>(gm, split, splits, stream); break;
    default: launch_tile<64, 64, 4, kWalkK, kTf32>(gm, split, splits, stream); break;
  }
}

// ps.count phases of the same M, n their widest N.
template <bool kTf32>
void launch_phases(const Phases& ps, int n, int groups, void* stream) {
  switch (tile_for(ps.gm[0].m).bm) {
    case 4: launch_phases_tile<4, 128, 1, false>(ps, n, groups, stream); break;
    case 16: launch_phases_tile<16, 128, 4, kTf32>(ps, n, groups, stream); break;
    case 32: launch_phases_tile<32, 64, 4, kTf32>(ps, n, groups, stream); break;
    default: launch_phases_tile<64, 64, 4, kTf32>(ps, n, groups, stream); break;
  }
}

void launch_window(const Phases& ps, int groups, void* stream) {
  int64_t threads = 0;
  for (int p = 0; p < ps.count; ++p) {
    const int wp = ps.gm[p].cols.nx, hp = ps.gm[p].cols.ny;
    threads = std::max(threads, int64_t(ps.gm[p].n / (wp * hp)) * ((hp + kWinY - 1) / kWinY) * wp);
  }
  const uint64_t bx = uint64_t((threads + kWinThreads - 1) / kWinThreads);
  simt::for_each_grid_chunk(bx, 1, uint64_t(groups) * uint64_t(ps.count), [&](dim3 grid, unsigned, unsigned z0) {
    switch (ps.gm[0].m) {
      case 1: CONVLAB_LAUNCH(window_phases_kernel<1>, grid, dim3(kWinThreads), 0, stream, ps, groups, z0); break;
      case 2: CONVLAB_LAUNCH(window_phases_kernel<2>, grid, dim3(kWinThreads), 0, stream, ps, groups, z0); break;
      case 3: CONVLAB_LAUNCH(window_phases_kernel<3>, grid, dim3(kWinThreads), 0, stream, ps, groups, z0); break;
      default: CONVLAB_LAUNCH(window_phases_kernel<4>, grid, dim3(kWinThreads), 0, stream, ps, groups, z0); break;
    }
  });
}

// Backward-filter's GEMM is small (Kg x Cg*R*S) over a long reduction (N*P*Q):
// below kSplitBlocks blocks (two per SM of a 132-SM H100) its K is split, at
// least kMinSplitRows rows per split, into partial sums reduced in a fixed order.
constexpr int64_t kSplitBlocks = 264, kMinSplitRows = 32 * BK;
void split_k(Sub& s, int groups) {
  const Tile t = tile_for(s.gm.m);
  const int64_t blocks = int64_t((s.gm.m + t.bm - 1) / t.bm) * ((s.gm.n + t.bn - 1) / t.bn) * groups;
  const int64_t want = std::min((kSplitBlocks + blocks - 1) / blocks, int64_t(s.gm.k) / kMinSplitRows);
  if (want <= 1) return;
  const int64_t rows = (s.gm.k + want - 1) / want;
  s.k_split = int((rows + BK - 1) / BK * BK);
  s.splits = (s.gm.k + s.k_split - 1) / s.k_split;
}

// The first tap t in [0, taps) with t*dil = phase + pad (mod stride), the step
// between such taps and how many there are.
struct Taps {
  int first, step, count;
};
Taps phase_taps(int taps, int dil, int stride, int phase, int pad) {
  const int step = stride / std::gcd(dil, stride);
  for (int t = 0; t < taps && t < step; ++t)
    if (((t * dil - phase - pad) % stride + stride) % stride == 0) return {t, step, (taps - 1 - t) / step + 1};
  return {0, step, 0};
}

// The direction's GEMMs (tensor and table pointers left null).
std::vector<Sub> plan(const ConvShape& sh, Direction dir) {
  const int kg = sh.kg(), cg = sh.cg(), rs = sh.r * sh.s, hw = sh.h * sh.w, pq = sh.p * sh.q;
  std::vector<Sub> subs;
  int64_t row0 = 0, a0 = 0;
  const auto add = [&](Gemm gm, Lattice rows) {
    subs.push_back(Sub{gm, rows, row0});
    row0 += gm.k;
  };
  // (c, r, s) taps of one channel and (n, p, q) output pixels as lattices over the source image
  const Lattice taps{sh.r, sh.s, sh.dil_h, 0, sh.dil_w, 0, hw, sh.w, rs, sh.s, 1, 0};
  const Lattice pixels{sh.p,       sh.q, sh.stride_h, -sh.pad_h, sh.stride_w, -sh.pad_w,
                       sh.c * hw,  sh.w, sh.k * pq,   sh.q,      1,           0};
  switch (dir) {
    case Direction::fwd:  // C (Kg, NPQ) = wei (Kg, CgRS) * B (CgRS, NPQ): rows = taps, columns = pixels
      add(Gemm{kg, sh.n * pq, cg * rs, nullptr, kg * cg * rs, cg * rs, nullptr, cg * hw, sh.h, sh.w, nullptr,
               kg * pq, pq, nullptr, pixels},
          taps);
      break;
    case Direction::bwd_filter:  // C (Kg, CgRS) = diff_dst (Kg, NPQ) * B (NPQ, CgRS): rows = pixels, columns = taps
      add(Gemm{kg, cg * rs, sh.n * pq, nullptr, kg * pq, pq, nullptr, cg * hw, sh.h, sh.w, nullptr, kg * cg * rs,
               cg * rs, nullptr, taps},
          pixels);
      split_k(subs.back(), sh.groups);
      break;
    case Direction::bwd_data:  // per phase: C (Cg, N*Hp*Wp) = wei^T (Cg, Kg*Rv*Sv) * B (Kg*Rv*Sv, N*Hp*Wp)
      for (int ph = 0; ph < std::min(sh.stride_h, sh.h); ++ph)
        for (int pw = 0; pw < std::min(sh.stride_w, sh.w); ++pw) {
          const Taps tr = phase_taps(sh.r, sh.dil_h, sh.stride_h, ph, sh.pad_h);
          const Taps ts = phase_taps(sh.s, sh.dil_w, sh.stride_w, pw, sh.pad_w);
          const int hp = (sh.h - ph + sh.stride_h - 1) / sh.stride_h, wp = (sh.w - pw + sh.stride_w - 1) / sh.stride_w;
          // rows (k, rv, sv): p = y + (ph + pad_h - r*dil_h)/stride_h, r = tr.first + rv*tr.step
          // (their lin: the row's tap in wei, A(c, (k, rv, sv)) = wei[k*Cg*R*S + c*R*S + r*S + s])
          const Lattice wei_rows{tr.count,
                                 ts.count,
                                 -tr.step * sh.dil_h / sh.stride_h,
                                 (ph + sh.pad_h - tr.first * sh.dil_h) / sh.stride_h,
                                 -ts.step * sh.dil_w / sh.stride_w,
                                 (pw + sh.pad_w - ts.first * sh.dil_w) / sh.stride_w,
                                 pq,
                                 sh.q,
                                 cg * rs,
                                 tr.step * sh.s,
                                 ts.step,
                                 tr.first * sh.s + ts.first};
          // the table's rows: the same, with lin = the row's index kk (A gathered dense: (groups, Cg, kpr))
          Lattice rows = wei_rows;
          const int kpr = kg * tr.count * ts.count;
          rows.sa = tr.count * ts.count, rows.sy = ts.count, rows.sx = 1, rows.s0 = 0;
          // columns (n, y, x): input pixel (ph + y*stride_h, pw + x*stride_w)
          const Lattice cols{hp, wp, 1, 0, 1, 0, sh.k * pq, sh.q, sh.c * hw, sh.stride_h * sh.w, sh.stride_w,
                             ph * sh.w + pw};
          add(Gemm{cg, sh.n * hp * wp, kpr, nullptr, cg * kpr, kpr, nullptr, kg * pq, sh.p, sh.q, nullptr, cg * hw,
                   hw, nullptr, cols},
              rows);
          Sub& s = subs.back();
          s.a0 = a0, s.a_group = kg * cg * rs, s.a_ld = rs, s.a_cols = wei_rows;
          s.win = Window{tr.count, ts.count}, s.unit_step = tr.step * sh.dil_h == sh.stride_h;
          a0 += int64_t(sh.groups) * cg * kpr;
        }
      break;
  }
  return subs;
}

int64_t table_rows(const std::vector<Sub>& subs) { return subs.empty() ? 0 : subs.back().row0 + subs.back().gm.k; }

// Partial sums of a split GEMM: every split's whole C (only backward-filter splits: C = diff_wei).
int64_t split_floats(const Sub& s, int groups) { return s.splits > 1 ? int64_t(s.splits) * groups * s.gm.c_group : 0; }

// Dense A of a backward-data phase: (groups, m, k).
int64_t a_floats(const Sub& s, int groups) { return s.a0 >= 0 ? int64_t(groups) * s.gm.m * s.gm.k : 0; }

// The workspace: the table's rows, then the largest split's partial sums
// (backward-filter) or every phase's dense A (backward-data).
int64_t workspace_floats(const std::vector<Sub>& subs, int groups) {
  int64_t part = 0, dense = 0;
  for (const Sub& s : subs) part = std::max(part, split_floats(s, groups)), dense += a_floats(s, groups);
  return table_rows(subs) * 4 + part + dense;
}

template <bool kTf32>
void run(std::vector<Sub> subs, const ConvShape& sh, Direction dir, const float* a, const float* b, float* c,
         void* workspace, void* stream) {
  auto* rows = static_cast<int4*>(workspace);
  assert(table_rows(subs) == 0 || (rows && reinterpret_cast<uintptr_t>(rows) % sizeof(int4) == 0));
  constexpr int kThreads = 256;
  // Stride phases that no tap reaches (a 1x1 filter at stride 2: 3 of 4) are
  // zeros: one contiguous fill of diff_src first, then only the phases with
  // taps run their GEMMs (and overwrite their pixels).
  bool dead = false;
  for (const Sub& s : subs) dead = dead || (s.gm.k == 0 && s.gm.m > 0 && s.gm.n > 0);
  if (dead) {
    const int64_t count = int64_t(sh.n) * sh.c * sh.h * sh.w;  // (N, C, H, W)
    CONVLAB_LAUNCH(zero_kernel, dim3(unsigned((count + 4 * kThreads - 1) / (4 * kThreads))), dim3(kThreads), 0,
                   stream, c, count);
  }
  float* dense = reinterpret_cast<float*>(rows + table_rows(subs));
  // Backward-data's live phases (all with M = Cg) are collected and run as two
  // launches (up to kMaxPhases at a time): their tables and dense A, then the GEMMs.
  Phases ps{};
  Prep pp{};
  bool unit_step[kMaxPhases] = {};
  int ps_n = 0;
  const auto flush = [&] {
    if (ps.count == 0) return;
    const int64_t items = pp.end[pp.count - 1];
    CONVLAB_LAUNCH(prep_phases_kernel, dim3(unsigned((items + kThreads - 1) / kThreads)), dim3(kThreads), 0, stream,
                   pp, a);
    // at most 4 rows: the column-window kernel; one phase with contiguous columns (stride_w 1): the plain kernel
    if (ps.count > 0 && window_fits(ps.gm[0].m, ps.win, unit_step, ps.count)) {
      launch_window(ps, sh.groups, stream);
    } else if (ps.count == 1 && ps.gm[0].cols.sx == 1) {
      launch_gemm<false, kTf32>(ps.gm[0], Split{sh.groups, ps.gm[0].k, 0}, 1, stream);
    } else {
      launch_phases<kTf32>(ps, ps_n, sh.groups, stream);
    }
    ps.count = 0, pp.count = 0, ps_n = 0;
  };
  for (Sub& s : subs) {
    s.gm.a = a, s.gm.b = b, s.gm.c = c, s.gm.rows = rows + s.row0;
    if (s.gm.m == 0 || s.gm.n == 0 || (dead && s.gm.k == 0)) continue;
    if (s.a0 >= 0 && s.gm.k > 0) {
      const int q = pp.count++;
      pp.m = s.gm.m, pp.groups = sh.groups, pp.a_group = s.a_group, pp.a_ld = s.a_ld;
      pp.k[q] = s.gm.k, pp.rows[q] = s.rows, pp.a_cols[q] = s.a_cols;
      pp.end[q] = (q > 0 ? pp.end[q - 1] : 0) + s.gm.k + a_floats(s, sh.groups);
      pp.table[q] = rows + s.row0, pp.dense[q] = dense + s.a0;
      s.gm.a = dense + s.a0;
      ps.win[ps.count] = s.win, unit_step[ps.count] = s.unit_step;
      ps.gm[ps.count++] = s.gm;
      ps_n = std::max(ps_n, s.gm.n);
      if (ps.count == kMaxPhases) flush();
      continue;
    }
    if (s.gm.k > 0) {
      CONVLAB_LAUNCH(row_table_kernel, dim3(unsigned((s.gm.k + kThreads - 1) / kThreads)), dim3(kThreads), 0,
                     stream, s.rows, s.gm.k, rows + s.row0);
    }
    Split split{sh.groups, s.gm.k, 0};
    if (s.splits > 1) {
      split = Split{sh.groups, s.k_split, int64_t(sh.groups) * s.gm.c_group};
      s.gm.c = reinterpret_cast<float*>(rows + table_rows(subs));  // (splits, groups * c_group)
    }
    if (dir == Direction::bwd_filter) {
      launch_gemm<true, kTf32>(s.gm, split, s.splits, stream);
    } else {
      launch_gemm<false, kTf32>(s.gm, split, s.splits, stream);
    }
    if (s.splits > 1) {
      const int count = int(split.c_split);
      CONVLAB_LAUNCH(reduce_splits_kernel, dim3(unsigned((count + kThreads - 1) / kThreads)), dim3(kThreads), 0,
                     stream, s.gm.c, count, s.splits, c);
    }
  }
  flush();
}

void implicit_gemm_conv(const ConvShape& sh, Direction dir, Math math, const float* a, const float* b, float* c,
                        void* workspace, void* stream) {
  const bool tf32 = math == Math::tf32;
  if (tf32) {
    run<true>(plan(sh, dir), sh, dir, a, b, c, workspace, stream);
  } else {
    run<false>(plan(sh, dir), sh, dir, a, b, c, workspace, stream);
  }
}

}  // namespace

size_t implicit_gemm_workspace_bytes(const ConvShape& sh, Direction dir, Math) {  // both maths run the same plan
  return size_t(workspace_floats(plan(sh, dir), sh.groups)) * sizeof(float);
}

void implicit_gemm_conv_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, void* workspace,
                            void* stream, Math math) {
  implicit_gemm_conv(sh, Direction::fwd, math, wei, src, dst, workspace, stream);
}

void implicit_gemm_conv_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src,
                                 void* workspace, void* stream, Math math) {
  implicit_gemm_conv(sh, Direction::bwd_data, math, wei, diff_dst, diff_src, workspace, stream);
}

void implicit_gemm_conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                                   void* workspace, void* stream, Math math) {
  implicit_gemm_conv(sh, Direction::bwd_filter, math, diff_dst, src, diff_wei, workspace, stream);
}

}  // namespace convlab::cuda
