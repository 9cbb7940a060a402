// cpu.direct — direct convolution on blocked layouts, three directions.
//
// Layouts (kernels/cpu/direct/layout.hpp), V = vector width (16 AVX-512, 8
// AVX2 / portable), per group g; all conversions run inside run(), in the
// workspace, and are part of its time:
//   src  -> (N, G, CB, HP, WP, BI)        zero-padded (HP = top + H + bottom), BI = min(V, C/g)
//   wei  -> (G, KB, CB, R, S, BI, V)      lanes = output channels
//   dst  <- (<=3, P*Q, V) tile per (n, g, k-block group), unblocked while cache-hot
// Forward: one micro-kernel call = 2 (or 3) k-blocks x nj <= 14 (9) output
//   pixels of one row in registers, summing all (c-block, r, s, c); each
//   broadcast src value feeds 2-3 FMAs. With dil_w == 1 the (s, c) of a filter
//   row are contiguous in both blocked src and weights, so a tap is a whole
//   filter row S*BI deep (conv1: 11 taps of 33 instead of 121 taps of 3).
// Backward-data (gather over input pixels, no atomics): diff_src pixel (h, w)
//   receives diff_dst (p, q) through tap (r, s) iff h + ph - r*dh = p*sh and
//   w + pw - s*dw = q*sw. Input rows and the stride's column phases
//   w = phi, phi+sw, ... have a fixed tap set whose q advances by one per
//   pixel, so each (row, phase) is a forward-like call over only the taps
//   that contribute; diff_dst is blocked with zero margins so no bounds tests.
//   Lanes = input channels, the reduction runs over k-blocks of BK = min(V, K/g).
//   When C/g is small (2*C/g < V, e.g. conv1's 3) channel lanes would be mostly
//   padding: the same gather is vectorised over V pixels of a phase instead
//   (run_bwd_data_pix).
// Backward-filter (deterministic, no atomics): the weight gradient is cut into
//   tiles (g, k-block pair, c-block, r, run of contiguous (s, c) taps <= 14); each
//   thread owns a contiguous range of tiles and, for n = 0..N-1 and chunks of
//   output rows in order, accumulates sum over (p, q) of src x diff_dst into
//   them: one fixed summation order for any thread count.
// Threads: OpenMP. Layout conversions in static shares; forward and
// backward-data items (an output tile each) handed out dynamically, so a
// thread slowed by a shared core does not hold the other at the end;
// backward-filter tiles in static shares (each owns its sums over n). Every
// output element is written by one thread in an order independent of the
// thread count and of which thread runs it, so results are bit-identical run
// to run (and across thread counts).
#include "algorithms/cpu/direct.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "kernels/cpu/direct/direct_ukernel.hpp"
#include "kernels/cpu/direct/layout.hpp"

namespace convlab {

namespace {

using direct::ActBlocking;
using direct::ConvUkernelArgs;
using direct::Ukernels;
using direct::WeiBlocking;
using direct::WgradUkernelArgs;

int ceil_div(int a, int b) { return (a + b - 1) / b; }
// ceil(a / b) for b > 0 and any sign of a.
int ceil_div_signed(int a, int b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// Output channel blocks per micro-kernel call: each broadcast input value
// feeds kPair FMAs, so loads no longer limit the FMA rate.
constexpr int kPair = 2;

// Channel blocks grouped for the conv micro-kernel: pairs, and a final triple
// when the count is odd (a lone block would run load-bound).
struct BlockGroups {
  int total, count;
  explicit BlockGroups(int total_) : total(total_), count(std::max(1, total_ / 2)) {}
  int begin(int i) const { return 2 * i; }
  int size(int i) const { return i == count - 1 ? total - 2 * i : 2; }
  static constexpr int kMax = 3;
};

// Per-thread scratch is sized for this many threads; run() uses no more.
int max_threads() { return std::max(1, cpu_info().hardware_threads); }

// Carves 64-byte aligned pieces out of the workspace (or just measures).
struct Carver {
  char* base;
  size_t used = 0;
  template <class T>
  T* take(int64_t count) {
    T* p = base ? reinterpret_cast<T*>(base + used) : nullptr;
    used += (size_t(std::max<int64_t>(count, 0)) * sizeof(T) + 63) / 64 * 64;
    return p;
  }
};

// Splits `total` into ceil(total / most) nearly equal runs; run `i` -> [begin, size).
struct Runs {
  int total, count;
  Runs(int total_, int most) : total(total_), count(std::max(1, ceil_div(total_, most))) {}
  int begin(int i) const { return int(int64_t(total) * i / count); }
  int size(int i) const { return begin(i + 1) - begin(i); }
};

// Input offsets of the pixels m0 .. m0+nj-1 of a row-major plane `cols` wide:
// pixel (y, x) reads at y*row + x*col. A run may cross rows.
void pixel_offsets(int m0, int nj, int cols, int64_t row, int64_t col, int64_t* off) {
  int y = m0 / cols, x = m0 % cols;
  for (int j = 0; j < nj; ++j) {
    off[j] = y * row + x * col;
    if (++x == cols) x = 0, ++y;
  }
}

// The output pixels of a (rows, cols) plane in runs of at most `most`, one
// micro-kernel call each. Along a row a run's pixels sit at a fixed input
// stride (at stride V the kernel's dense variant holds no pixel offsets in
// registers; AVX-512's 14 would spill). Over the flattened plane a run may
// cross rows through per-pixel offsets, taken only where that fills the tile
// clearly better: AVX2's 6 pixels in 13-wide rows average 4.3 per row, 5.8
// flattened; AVX-512's 14 cover a 13-wide row anyway.
struct PixelRuns {
  int rows, cols;
  int64_t row, col;  // input offset per output row / column
  bool flat = false;
  Runs runs;
  PixelRuns(int rows_, int cols_, int64_t row_, int64_t col_, int most)
      : rows(rows_), cols(cols_), row(row_), col(col_), runs(cols_, most) {
    const Runs all(rows * cols, most);
    if (double(rows) * cols / all.count > 1.04 * double(cols) / runs.count) flat = true, runs = all;
  }
  // f(m0, nj, in_off, pix_off) per run: pixels m0 .. m0+nj-1 (row-major), the
  // input offset of m0, and the pixels' offsets relative to it (nullptr: j*col).
  template <class F>
  void for_each(int64_t* buf, F&& f) const {
    if (flat) {
      for (int i = 0; i < runs.count; ++i) {
        const int m0 = runs.begin(i), nj = runs.size(i);
        pixel_offsets(m0, nj, cols, row, col, buf);
        const int64_t base = buf[0];
        for (int j = 0; j < nj; ++j) buf[j] -= base;
        f(m0, nj, base, buf);
      }
      return;
    }
    for (int y = 0; y < rows; ++y)
      for (int i = 0; i < runs.count; ++i) {
        const int x0 = runs.begin(i);
        f(y * cols + x0, runs.size(i), y * row + x0 * col, static_cast<const int64_t*>(nullptr));
      }
  }
};

// Reduction blocks (c-blocks forward, k-blocks backward-data) per pass: the
// weights one pass touches, for every block of the group, stay within this
// many bytes (L2-resident) while the pass sweeps all rows of the image.
constexpr int64_t kWeightPassBytes = 256 * 1024;
Runs reduction_passes(int blocks, int64_t bytes_per_block) {
  return Runs(blocks, int(std::max<int64_t>(1, kWeightPassBytes / std::max<int64_t>(1, bytes_per_block))));
}

// ---- forward ----------------------------------------------------------------
struct FwdPlan {
  ConvShape sh;
  const Ukernels* uk;
  int V, G, KG, CG, BI, KB, CB;
  ActBlocking xs;
  WeiBlocking wb;
  FwdPlan(const ConvShape& s, const Ukernels& u) : sh(s), uk(&u) {
    V = u.v, G = s.groups, KG = s.kg(), CG = s.cg();
    BI = std::min(V, CG), KB = ceil_div(KG, V), CB = ceil_div(CG, BI);
    xs = {s.n, G, CG, s.h, s.w, BI, s.pad_h, s.pad_w, s.padded_h(), s.padded_w()};
    wb = {G, KG, CG, s.r, s.s, BI, V};
  }
  int64_t wei_tile() const { return int64_t(sh.r) * sh.s * BI * V; }  // (R, S, BI, V)
  struct Ws {
    float *xs, *wf, *tiles;
    int64_t *in_off, *wei_off;
  };
  Ws carve(Carver& c) const {
    Ws w;
    w.xs = c.take<float>(xs.elems());
    w.wf = c.take<float>(int64_t(G) * KB * CB * wei_tile());
    w.tiles = c.take<float>(int64_t(max_threads()) * BlockGroups::kMax * sh.p * sh.q * V);
    w.in_off = c.take<int64_t>(sh.r * sh.s);
    w.wei_off = c.take<int64_t>(sh.r * sh.s);
    return w;
  }
};

void run_fwd(const FwdPlan& pl, const float* src, const float* wei, float* dst, void* workspace, int threads) {
  Carver c{static_cast<char*>(workspace)};
  const FwdPlan::Ws ws = pl.carve(c);
  const ConvShape& s = pl.sh;
  const int V = pl.V, BI = pl.BI, RS = s.r * s.s;
  const int64_t plane = pl.xs.plane(), PQ = int64_t(s.p) * s.q;
  const BlockGroups kgroups(pl.KB);  // one broadcast feeds 2 (or 3) FMAs
  const int KP = kgroups.count;
#pragma omp parallel num_threads(threads)
  {
    const int ithr = omp_get_thread_num(), nthr = omp_get_num_threads();
    direct::block_act(pl.xs, src, ws.xs, ithr, nthr);
    direct::block_wei_fwd(pl.wb, wei, ws.wf, ithr, nthr);
    // Taps: with dil_w == 1 the (s, c) of one filter row are contiguous both in
    // the blocked src row (offset s*BI + c) and in the weights ((s*BI + c)*V),
    // so one tap per r runs S*BI channels deep; otherwise one tap per (r, s).
    const bool flat = s.dil_w == 1;
    const int ntaps = flat ? s.r : RS, depth = flat ? s.s * BI : BI;
    if (ithr == 0)
      for (int r = 0; r < s.r; ++r)
        for (int t = 0; t < (flat ? 1 : s.s); ++t) {
          ws.in_off[r * (flat ? 1 : s.s) + t] = (int64_t(r) * s.dil_h * pl.xs.wp + int64_t(t) * s.dil_w) * BI;
          ws.wei_off[r * (flat ? 1 : s.s) + t] = int64_t(r * s.s + t) * BI * V;
        }
#pragma omp barrier
    float* tile = ws.tiles + int64_t(ithr) * BlockGroups::kMax * PQ * V;  // (<= 3, P, Q, V)
    int64_t pix_off[direct::kMaxNj];
    // Items handed out as threads free up: one slowed thread (a shared core)
    // no longer holds the other at the end. An item's result does not depend
    // on which thread computes it.
#pragma omp for schedule(dynamic) nowait
    for (int64_t item = 0; item < int64_t(pl.G) * KP * s.n; ++item) {  // (G, KP, N): weights reused across n
      const int n = int(item % s.n), kp = int(item / s.n % KP), g = int(item / s.n / KP);
      const int kb = kgroups.begin(kp), nkb = kgroups.size(kp);
      const int k_first = g * pl.KG + kb * V, k_count = std::min(nkb * V, pl.KG - kb * V);
      direct::prefetch_for_write(dst + (int64_t(n) * s.k + k_first) * PQ, int64_t(k_count) * PQ * int64_t(sizeof(float)));
      const PixelRuns pruns(s.p, s.q, int64_t(s.stride_h) * pl.xs.wp * BI, int64_t(s.stride_w) * BI,
                            pl.uk->max_nj / nkb);
      const float* in_img = ws.xs + (int64_t(n) * pl.G + g) * pl.CB * plane;  // (CB, HP, WP, BI)
      ConvUkernelArgs a{};
      a.wei = ws.wf + (int64_t(g) * pl.KB + kb) * pl.CB * pl.wei_tile();  // (nkb, CB, R, S, BI, V)
      a.in_off = ws.in_off;
      a.wei_off = ws.wei_off;
      a.ntaps = ntaps;
      a.nib = pl.CB;
      a.in_ib_stride = plane;
      a.wei_ib_stride = pl.wei_tile();
      a.bi = depth;
      a.in_pix_stride = int64_t(s.stride_w) * BI;
      a.out_pix_stride = V;
      a.nkb = nkb;
      a.wei_kb_stride = pl.CB * pl.wei_tile();
      a.out_kb_stride = PQ * V;
      const float* wei_g = a.wei;
      const Runs passes = reduction_passes(pl.CB, pl.wei_tile() * int64_t(sizeof(float)) * nkb);
      for (int ps = 0; ps < passes.count; ++ps) {
        const int cb0 = passes.begin(ps);
        a.nib = passes.size(ps);
        a.accumulate = ps > 0;
        a.wei = wei_g + cb0 * pl.wei_tile();
        const float* in_pass = in_img + cb0 * plane;
        pruns.for_each(pix_off, [&](int m0, int nj, int64_t in_off, const int64_t* po) {
          a.in = in_pass + in_off;
          a.out = tile + int64_t(m0) * V;
          a.nj = nj;
          a.pix_off = po;
          pl.uk->conv(a);
        });
      }
      for (int x = 0; x < nkb; ++x) {
        const int k0 = g * pl.KG + (kb + x) * V;
        direct::unblock_tile(tile + x * PQ * V, PQ, V, std::min(V, pl.KG - (kb + x) * V),
                             dst + (int64_t(n) * s.k + k0) * PQ);
      }
    }
  }
}

// ---- backward-data (gather, phase-split) ---------------------------------------
struct BwdDataPlan {
  ConvShape sh;
  const Ukernels* uk;
  int V, G, KG, CG, BK, KB, CB;
  int mt, ml;  // zero margins before diff_dst rows / columns
  ActBlocking yd;
  WeiBlocking wb;
  BwdDataPlan(const ConvShape& s, const Ukernels& u) : sh(s), uk(&u) {
    V = u.v, G = s.groups, KG = s.kg(), CG = s.cg();
    BK = std::min(V, KG), KB = ceil_div(KG, BK), CB = ceil_div(CG, V);
    mt = std::max(0, ceil_div_signed((s.r - 1) * s.dil_h - s.pad_h, s.stride_h));
    ml = std::max(0, ceil_div_signed((s.s - 1) * s.dil_w - s.pad_w, s.stride_w));
    const int mb = std::max(0, (s.h - 1 + s.pad_h) / s.stride_h - (s.p - 1));
    const int mr = std::max(0, (s.w - 1 + s.pad_w) / s.stride_w - (s.q - 1));
    yd = {s.n, G, KG, s.p, s.q, BK, mt, ml, s.p + mt + mb, s.q + ml + mr};
    wb = {G, KG, CG, s.r, s.s, BK, V};
    flat = s.stride_w == 1 && s.dil_w == 1;
  }
  bool flat;
  int64_t wei_tile() const { return int64_t(sh.r) * sh.s * BK * V; }  // (R, S, BK, V)
  struct Ws {
    float *yd, *wb, *tiles;
    int64_t* taps;
  };
  Ws carve(Carver& c) const {
    Ws w;
    w.yd = c.take<float>(yd.elems());
    w.wb = c.take<float>(int64_t(G) * CB * KB * wei_tile());
    w.tiles = c.take<float>(int64_t(max_threads()) * BlockGroups::kMax * sh.h * sh.w * V);
    w.taps = c.take<int64_t>(int64_t(max_threads()) * 2 * sh.r * sh.s);
    return w;
  }
};

void run_bwd_data(const BwdDataPlan& pl, const float* diff_dst, const float* wei, float* diff_src, void* workspace,
                  int threads) {
  Carver c{static_cast<char*>(workspace)};
  const BwdDataPlan::Ws ws = pl.carve(c);
  const ConvShape& s = pl.sh;
  const int V = pl.V, BK = pl.BK, RS = s.r * s.s, sh = s.stride_h, sw = s.stride_w;
  const int64_t plane = pl.yd.plane(), HW = int64_t(s.h) * s.w;
  const BlockGroups cgroups(pl.CB);
  const int CP = cgroups.count;
  // With stride_w == dil_w == 1 every s contributes to every column and, with
  // s stored reversed, the (s, k) of one filter row are contiguous in both the
  // blocked diff_dst row and the weights: one tap per r, S*BK deep.
  const bool flat = pl.flat;
#pragma omp parallel num_threads(threads)
  {
    const int ithr = omp_get_thread_num(), nthr = omp_get_num_threads();
    direct::block_act(pl.yd, diff_dst, ws.yd, ithr, nthr);
    direct::block_wei_bwd_data(pl.wb, wei, ws.wb, flat, ithr, nthr);
#pragma omp barrier
    float* tile = ws.tiles + int64_t(ithr) * BlockGroups::kMax * HW * V;  // (<= 3, H, W, V)
    int64_t* in_off = ws.taps + int64_t(ithr) * 2 * RS;
    int64_t* wei_off = in_off + RS;
    // Unit stride: every (r, s) reaches every pixel, so the taps, relative to
    // pixel (0, 0), are one set for all pixels, which differ by fixed offsets.
    const bool unit_stride = sh == 1 && sw == 1;
    int ntaps1 = 0;
    if (unit_stride)
      for (int r = 0; r < s.r; ++r) {
        const int64_t prow = int64_t(s.pad_h) - int64_t(r) * s.dil_h + pl.mt;  // diff_dst row for h = 0
        for (int t = 0; t < (flat ? 1 : s.s); ++t) {
          const int64_t col = flat ? s.pad_w - (s.s - 1) + pl.ml : s.pad_w - int64_t(t) * s.dil_w + pl.ml;
          in_off[ntaps1] = (prow * pl.yd.wp + col) * BK;
          wei_off[ntaps1] = int64_t(r * s.s + t) * BK * V;
          ++ntaps1;
        }
      }
    int64_t pix_off[direct::kMaxNj];
#pragma omp for schedule(dynamic) nowait
    for (int64_t item = 0; item < int64_t(pl.G) * CP * s.n; ++item) {  // (G, CP, N), as in forward
      const int n = int(item % s.n), cp = int(item / s.n % CP), g = int(item / s.n / CP);
      const int cb = cgroups.begin(cp), ncb = cgroups.size(cp);
      const int c_first = g * pl.CG + cb * V, c_count = std::min(ncb * V, pl.CG - cb * V);
      direct::prefetch_for_write(diff_src + (int64_t(n) * s.c + c_first) * HW,
                                 int64_t(c_count) * HW * int64_t(sizeof(float)));
      const float* in_img = ws.yd + (int64_t(n) * pl.G + g) * pl.KB * plane;  // (KB, PP, QP, BK)
      ConvUkernelArgs a{};
      a.wei = ws.wb + (int64_t(g) * pl.CB + cb) * pl.KB * pl.wei_tile();  // (KB, R, S, BK, V)
      a.in_off = in_off;
      a.wei_off = wei_off;
      a.nib = pl.KB;
      a.in_ib_stride = plane;
      a.wei_ib_stride = pl.wei_tile();
      a.bi = flat ? s.s * BK : BK;
      a.in_pix_stride = BK;
      a.out_pix_stride = int64_t(sw) * V;
      a.nkb = ncb;
      a.wei_kb_stride = pl.KB * pl.wei_tile();
      a.out_kb_stride = HW * V;
      const float* wei_g = a.wei;
      const PixelRuns pruns(s.h, s.w, int64_t(pl.yd.wp) * BK, BK, pl.uk->max_nj / ncb);  // unit stride
      const Runs passes = reduction_passes(pl.KB, pl.wei_tile() * int64_t(sizeof(float)) * ncb);
      for (int ps = 0; ps < passes.count; ++ps) {
        const int kb0 = passes.begin(ps);
        a.nib = passes.size(ps);
        a.accumulate = ps > 0;
        a.wei = wei_g + kb0 * pl.wei_tile();
        const float* in_pass = in_img + kb0 * plane;
        if (unit_stride) {  // one tap set for every pixel: runs over the flattened (H, W) plane
          a.ntaps = ntaps1;
          a.out_pix_stride = V;
          pruns.for_each(pix_off, [&](int m0, int nj, int64_t in_off, const int64_t* po) {
            a.in = in_pass + in_off;
            a.out = tile + int64_t(m0) * V;
            a.nj = nj;
            a.pix_off = po;
            pl.uk->conv(a);
          });
          continue;
        }
        for (int h = 0; h < s.h; ++h)
          for (int phi = 0; phi < std::min(sw, s.w); ++phi) {
            int nt = 0;
            for (int r = 0; r < s.r; ++r) {
              const int y = h + s.pad_h - r * s.dil_h;
              if (((y % sh) + sh) % sh) continue;
              const int prow = y / sh + pl.mt;  // row of the margin-padded diff_dst
              if (flat) {  // all s, reversed: column w + pw - (S-1) + s' for s' = S-1-s
                in_off[nt] = (int64_t(prow) * pl.yd.wp + phi + s.pad_w - (s.s - 1) + pl.ml) * BK;
                wei_off[nt] = int64_t(r) * s.s * BK * V;
                ++nt;
                continue;
              }
              for (int t = 0; t < s.s; ++t) {
                const int x = phi + s.pad_w - t * s.dil_w;
                if (((x % sw) + sw) % sw) continue;
                in_off[nt] = (int64_t(prow) * pl.yd.wp + x / sw + pl.ml) * BK;
                wei_off[nt] = int64_t(r * s.s + t) * BK * V;
                ++nt;
              }
            }
            a.ntaps = nt;
            const Runs wruns(ceil_div(s.w - phi, sw), pl.uk->max_nj / ncb);
            for (int wr = 0; wr < wruns.count; ++wr) {
              const int m0 = wruns.begin(wr);
              a.in = in_pass + int64_t(m0) * BK;
              a.out = tile + (int64_t(h) * s.w + phi + int64_t(m0) * sw) * V;
              a.nj = wruns.size(wr);
              pl.uk->conv(a);
            }
          }
      }
      for (int x = 0; x < ncb; ++x) {
        const int c0 = g * pl.CG + (cb + x) * V;
        direct::unblock_tile(tile + x * HW * V, HW, V, std::min(V, pl.CG - (cb + x) * V),
                             diff_src + (int64_t(n) * s.c + c0) * HW);
      }
    }
  }
}

// ---- backward-data, few input channels (pixel-vectorised gather) ---------------
// With C/g << V the channel lanes would be mostly padding, so the vectors run
// over V input pixels of one stride phase instead: diff_src[c][h][phi + m*sw]
// for V consecutive m reads diff_dst[k][p][qbase + m], contiguous in a planar,
// zero-padded copy of diff_dst. One thread per (n, g) image.
bool use_pix_bwd_data(const ConvShape& s, int V) { return 2 * s.cg() < V && s.w / s.stride_w >= V; }

struct BwdDataPixPlan {
  ConvShape sh;
  const Ukernels* uk;
  int V, G, KG, CG, NC, CC;
  int mt, ml, mv;  // row / column margins, vectors per phase row
  int pp, qp;      // one (n, g) of diff_dst as (PP, KG, QP), zero margins
  WeiBlocking wb;
  BwdDataPixPlan(const ConvShape& s, const Ukernels& u) : sh(s), uk(&u) {
    V = u.v, G = s.groups, KG = s.kg(), CG = s.cg();
    NC = std::min(direct::kPixMaxC, CG), CC = ceil_div(CG, NC);
    mt = std::max(0, ceil_div_signed((s.r - 1) * s.dil_h - s.pad_h, s.stride_h));
    ml = std::max(0, ceil_div_signed((s.s - 1) * s.dil_w - s.pad_w, s.stride_w));
    const int mb = std::max(0, (s.h - 1 + s.pad_h) / s.stride_h - (s.p - 1));
    mv = ceil_div(ceil_div(s.w, s.stride_w), V);
    // Columns read: qbase + ml + m with qbase <= (sw - 1 + pw) / sw, m < mv*V.
    const int qp = std::max(s.q + ml, ml + (s.stride_w - 1 + s.pad_w) / s.stride_w + mv * V);
    pp = s.p + mt + mb;
    this->qp = qp;
    wb = {G, KG, CG, s.r, s.s, NC, V};
  }
  int64_t wei_tile() const { return int64_t(sh.r) * sh.s * KG * NC; }  // (R, S, KG, NC)
  struct Ws {
    float *wp, *yd, *tmp;
    int64_t* taps;
  };
  Ws carve(Carver& c) const {
    Ws w;
    w.wp = c.take<float>(int64_t(G) * CC * wei_tile());
    w.yd = c.take<float>(int64_t(max_threads()) * pp * KG * qp);
    w.tmp = c.take<float>(int64_t(max_threads()) * NC * mv * V);
    w.taps = c.take<int64_t>(int64_t(max_threads()) * 2 * sh.r * sh.s);
    return w;
  }
};

void run_bwd_data_pix(const BwdDataPixPlan& pl, const float* diff_dst, const float* wei, float* diff_src,
                      void* workspace, int threads) {
  Carver c{static_cast<char*>(workspace)};
  const BwdDataPixPlan::Ws ws = pl.carve(c);
  const ConvShape& s = pl.sh;
  const int V = pl.V, RS = s.r * s.s, sh = s.stride_h, sw = s.stride_w;
  const int64_t PQ = int64_t(s.p) * s.q, HW = int64_t(s.h) * s.w, row = int64_t(pl.KG) * pl.qp;
#pragma omp parallel num_threads(threads)
  {
    const int ithr = omp_get_thread_num(), nthr = omp_get_num_threads();
    direct::block_wei_pix(pl.wb, wei, ws.wp, ithr, nthr);
#pragma omp barrier
    float* yd = ws.yd + int64_t(ithr) * pl.pp * row;  // (PP, KG, QP)
    float* tmp = ws.tmp + int64_t(ithr) * pl.NC * pl.mv * V;  // (NC, mv*V)
    int64_t* in_off = ws.taps + int64_t(ithr) * 2 * RS;
    int64_t* wei_off = in_off + RS;
#pragma omp for schedule(dynamic) nowait
    for (int64_t item = 0; item < int64_t(s.n) * pl.G; ++item) {  // (N, G), as in forward
      const int g = int(item % pl.G), n = int(item / pl.G);
      direct::pad_rows_interleaved(diff_dst + (int64_t(n) * s.k + int64_t(g) * pl.KG) * PQ, pl.KG, s.p, s.q, pl.mt,
                                   pl.ml, pl.pp, pl.qp, yd);
      direct::PixUkernelArgs a{};
      a.in_off = in_off;
      a.wei_off = wei_off;
      a.nk = pl.KG;
      a.in_k_stride = pl.qp;
      a.nc = pl.NC;
      a.out_c_stride = int64_t(pl.mv) * V;
      for (int cc = 0; cc < pl.CC; ++cc) {
        a.wei = ws.wp + (int64_t(g) * pl.CC + cc) * pl.wei_tile();
        const int nc = std::min(pl.NC, pl.CG - cc * pl.NC);
        float* out = diff_src + (int64_t(n) * s.c + int64_t(g) * pl.CG + cc * pl.NC) * HW;
        for (int h = 0; h < s.h; ++h)
          for (int phi = 0; phi < std::min(sw, s.w); ++phi) {
            int nt = 0;
            for (int r = 0; r < s.r; ++r) {
              const int y = h + s.pad_h - r * s.dil_h;
              if (((y % sh) + sh) % sh) continue;
              const int prow = y / sh + pl.mt;
              for (int t = 0; t < s.s; ++t) {
                const int x = phi + s.pad_w - t * s.dil_w;
                if (((x % sw) + sw) % sw) continue;
                in_off[nt] = prow * row + x / sw + pl.ml;
                wei_off[nt] = int64_t(r * s.s + t) * pl.KG * pl.NC;
                ++nt;
              }
            }
            a.ntaps = nt;
            const int nw = ceil_div(s.w - phi, sw);
            const Runs vruns(ceil_div(nw, V), direct::kPixMaxJ);
            for (int vr = 0; vr < vruns.count; ++vr) {
              a.in = yd + int64_t(vruns.begin(vr)) * V;
              a.out = tmp + int64_t(vruns.begin(vr)) * V;
              a.njv = vruns.size(vr);
              pl.uk->pix(a);
            }
            for (int ch = 0; ch < nc; ++ch) {
              float* d = out + ch * HW + int64_t(h) * s.w + phi;  // (W) with stride sw
              const float* t = tmp + int64_t(ch) * pl.mv * V;
              for (int m = 0; m < nw; ++m) d[int64_t(m) * sw] = t[m];
            }
          }
      }
    }
  }
}

// ---- backward-filter (tile-owned) ----------------------------------------------
struct BwdFilterPlan {
  ConvShape sh;
  const Ukernels* uk;
  int V, G, KG, CG, BI, KB, CB, KP;
  int runs_per_r;  // tap runs per filter row
  Runs runs;       // over the (S, BI) taps of one row (dil_w == 1) or the BI taps of one (r, s)
  int prows;       // output rows per call
  int nimg;        // images per call (when prows covers every row)
  ActBlocking xs, yd;
  WeiBlocking wb;
  BwdFilterPlan(const ConvShape& s, const Ukernels& u)
      : sh(s), uk(&u), runs(1, 1) {
    V = u.v, G = s.groups, KG = s.kg(), CG = s.cg();
    BI = std::min(V, CG), KB = ceil_div(KG, V), CB = ceil_div(CG, BI), KP = ceil_div(KB, kPair);
    // With dil_w == 1 the taps (s, c) of one row are contiguous in the blocked
    // src row (offset s*BI + c), so one run may span several s.
    if (s.dil_w == 1) {
      runs = Runs(s.s * BI, u.max_nt / kPair);
      runs_per_r = runs.count;
    } else {
      runs = Runs(BI, u.max_nt / kPair);
      runs_per_r = s.s * runs.count;
    }
    // Rows (and images) per call: the call's diff_dst rows (x2 k-blocks) stay
    // in L1 while every tile of this thread sweeps them.
    const int64_t row_bytes = int64_t(s.q) * V * sizeof(float) * kPair;
    prows = std::clamp(int(kDiffDstBytes / row_bytes), 1, s.p);
    nimg = prows < s.p ? 1 : std::clamp(int(kDiffDstBytes / (row_bytes * s.p)), 1, s.n);
    xs = {s.n, G, CG, s.h, s.w, BI, s.pad_h, s.pad_w, s.padded_h(), s.padded_w()};
    yd = {s.n, G, KG, s.p, s.q, V, 0, 0, s.p, s.q};
    wb = {G, KG, CG, s.r, s.s, BI, V};
  }
  static constexpr int64_t kDiffDstBytes = 32 * 1024;
  int units() const { return sh.r * runs_per_r; }
  int64_t wei_tile() const { return int64_t(sh.r) * sh.s * BI * V; }
  struct Ws {
    float *xs, *yd, *ww;
    int64_t *pix, *unit;  // (prows*Q) src pixel offsets; (units, 3) tap-run in / out offsets and tap count
  };
  Ws carve(Carver& c) const {
    Ws w;
    w.xs = c.take<float>(xs.elems());
    w.yd = c.take<float>(yd.elems());
    w.ww = c.take<float>(int64_t(G) * KB * CB * wei_tile());
    w.pix = c.take<int64_t>(int64_t(prows) * sh.q);
    w.unit = c.take<int64_t>(3 * int64_t(units()));
    return w;
  }
};

void run_bwd_filter(const BwdFilterPlan& pl, const float* src, const float* diff_dst, float* diff_wei,
                    void* workspace, int threads) {
  Carver c{static_cast<char*>(workspace)};
  const BwdFilterPlan::Ws ws = pl.carve(c);
  const ConvShape& s = pl.sh;
  const int V = pl.V, BI = pl.BI, KP = pl.KP;
  const int64_t xplane = pl.xs.plane(), yplane = pl.yd.plane();
  const int units = pl.units();
#pragma omp parallel num_threads(threads)
  {
    const int ithr = omp_get_thread_num(), nthr = omp_get_num_threads();
    direct::block_act(pl.xs, src, ws.xs, ithr, nthr);
    direct::block_act(pl.yd, diff_dst, ws.yd, ithr, nthr);
    if (ithr == 0) {
      pixel_offsets(0, pl.prows * s.q, s.q, int64_t(s.stride_h) * pl.xs.wp * BI, int64_t(s.stride_w) * BI, ws.pix);
      for (int u = 0; u < units; ++u) {  // (R, runs): src offset, weight-gradient offset, taps
        const int r = u / pl.runs_per_r, ur = u % pl.runs_per_r;
        int f0, nt, x_off;  // first flat (s, c) tap, tap count, its column offset in the src row
        if (s.dil_w == 1) {
          f0 = pl.runs.begin(ur), nt = pl.runs.size(ur), x_off = f0;
        } else {
          const int t = ur / pl.runs.count, i = ur % pl.runs.count;
          f0 = t * BI + pl.runs.begin(i), nt = pl.runs.size(i), x_off = t * s.dil_w * BI + pl.runs.begin(i);
        }
        ws.unit[3 * u] = int64_t(r) * s.dil_h * pl.xs.wp * BI + x_off;
        ws.unit[3 * u + 1] = (int64_t(r) * s.s * BI + f0) * V;
        ws.unit[3 * u + 2] = nt;
      }
    }
#pragma omp barrier
    int64_t begin, end;
    direct::share(int64_t(pl.G) * KP * pl.CB * units, ithr, nthr, begin, end);
    WgradUkernelArgs a{};
    a.nq = s.q;
    a.in_n_stride = int64_t(pl.G) * pl.CB * xplane;
    a.in_row_stride = int64_t(s.stride_h) * pl.xs.wp * BI;
    a.in_pix_stride = int64_t(s.stride_w) * BI;
    a.dd_n_stride = int64_t(pl.G) * pl.KB * yplane;
    a.dd_row_stride = int64_t(s.q) * V;
    a.dd_kb_stride = yplane;
    a.out_kb_stride = pl.CB * pl.wei_tile();
    a.pix_off = ws.pix;
    for (int n = 0; n < s.n; n += pl.nimg)
      for (int p0 = 0; p0 < s.p; p0 += pl.prows) {
        a.accumulate = n > 0 || p0 > 0;
        a.nn = std::min(pl.nimg, s.n - n);
        a.np = std::min(pl.prows, s.p - p0);
        // Items (G, KP, CB, R, runs): one division per (g, k-pair, c-block), the
        // tap runs of its filter from the unit table.
        for (int64_t item = begin; item < end;) {
          const int64_t gkc = item / units;
          const int u0 = int(item % units), u1 = int(std::min<int64_t>(units, u0 + (end - item)));
          const int cb = int(gkc % pl.CB), kb = int(gkc / pl.CB % KP) * kPair, g = int(gkc / pl.CB / KP);
          a.nkb = std::min(kPair, pl.KB - kb);
          const float* in = ws.xs + ((int64_t(n) * pl.G + g) * pl.CB + cb) * xplane +
                            int64_t(p0) * s.stride_h * pl.xs.wp * BI;  // (NN, .., HP, WP, BI)
          a.dd = ws.yd + ((int64_t(n) * pl.G + g) * pl.KB + kb) * yplane + int64_t(p0) * s.q * V;
          float* out = ws.ww + ((int64_t(g) * pl.KB + kb) * pl.CB + cb) * pl.wei_tile();  // (nkb, .., R, S, BI, V)
          for (int u = u0; u < u1; ++u) {
            a.in = in + ws.unit[3 * u];
            a.out = out + ws.unit[3 * u + 1];
            a.nt = int(ws.unit[3 * u + 2]);
            pl.uk->wgrad(a);
          }
          item += u1 - u0;
        }
      }
#pragma omp barrier
    direct::unblock_wei_fwd(pl.wb, ws.ww, diff_wei, ithr, nthr);
  }
}

}  // namespace

Support CpuDirect::supports(const ConvProblem& p, Direction) const {
  if (auto why = p.validate(); !why.empty()) return Support::no(why);
  return Support::yes();
}

size_t CpuDirect::workspace_bytes(const ConvProblem& p, Direction dir) const {
  const ConvShape s = to_shape(p);
  const Ukernels& uk = direct::select_ukernels();
  Carver c{nullptr};
  switch (dir) {
    case Direction::fwd: FwdPlan(s, uk).carve(c); break;
    case Direction::bwd_data:
      if (use_pix_bwd_data(s, uk.v)) {
        BwdDataPixPlan(s, uk).carve(c);
      } else {
        BwdDataPlan(s, uk).carve(c);
      }
      break;
    case Direction::bwd_filter: BwdFilterPlan(s, uk).carve(c); break;
  }
  return c.used;
}

void CpuDirect::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                    const ExecContext& ctx) const {
  const ConvShape s = to_shape(p);
  const Ukernels& uk = direct::select_ukernels();
  const int threads = std::clamp(ctx.resolved_threads(), 1, max_threads());
  switch (dir) {
    case Direction::fwd: run_fwd(FwdPlan(s, uk), buf.src, buf.wei, buf.dst, workspace, threads); break;
    case Direction::bwd_data:
      if (use_pix_bwd_data(s, uk.v)) {
        run_bwd_data_pix(BwdDataPixPlan(s, uk), buf.dst, buf.wei, buf.src, workspace, threads);
      } else {
        run_bwd_data(BwdDataPlan(s, uk), buf.dst, buf.wei, buf.src, workspace, threads);
      }
      break;
    case Direction::bwd_filter: run_bwd_filter(BwdFilterPlan(s, uk), buf.src, buf.dst, buf.wei, workspace, threads); break;
  }
}

}  // namespace convlab
