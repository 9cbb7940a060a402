// cpu.direct's plans (algorithms/cpu/direct.cpp says the scheme): per direction, the blocked layouts,
// the workspace carving and the run over them; the forward in direct.cpp, the two backward passes in
// direct_backward.cpp. Internal to algorithms/cpu.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/device.hpp"
#include "kernels/conv_shape.hpp"
#include "kernels/cpu/direct/direct_ukernel.hpp"
#include "kernels/cpu/direct/layout.hpp"

namespace convlab::direct_plan {

using cpu::direct::ActBlocking;
using cpu::direct::ConvUkernelArgs;
using cpu::direct::Ukernels;
using cpu::direct::WeiBlocking;
using cpu::direct::WgradUkernelArgs;

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }
// ceil(a / b) for b > 0 and any sign of a.
inline int ceil_div_signed(int a, int b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

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
inline int max_threads() { return std::max(1, cpu_info().hardware_threads); }

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
inline void pixel_offsets(int m0, int nj, int cols, int64_t row, int64_t col, int64_t* off) {
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
inline Runs reduction_passes(int blocks, int64_t bytes_per_block) {
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
  // Output rows computed together and unblocked to NCHW before the next band:
  // the band's tile (<= 3 k-blocks, rows, Q, V) stays within kBandBytes, so it
  // is still in L2 when unblocked (a whole 112 x 112 plane's tile is 2.4 MiB).
  static constexpr int64_t kBandBytes = 128 * 1024;
  int band_rows() const {
    const int64_t row_bytes = int64_t(BlockGroups::kMax) * sh.q * V * int64_t(sizeof(float));
    return int(std::clamp<int64_t>(kBandBytes / row_bytes, 1, sh.p));
  }
  struct Ws {
    float *xs, *wf, *tiles;
    int64_t *in_off, *wei_off;
  };
  Ws carve(Carver& c) const {
    Ws w;
    w.xs = c.take<float>(xs.elems());
    w.wf = c.take<float>(int64_t(G) * KB * CB * wei_tile());
    w.tiles = c.take<float>(int64_t(max_threads()) * BlockGroups::kMax * band_rows() * sh.q * V);
    w.in_off = c.take<int64_t>(sh.r * sh.s);
    w.wei_off = c.take<int64_t>(sh.r * sh.s);
    return w;
  }
};

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

// ---- backward-data, few input channels (pixel-vectorised gather) ---------------
// With C/g << V the channel lanes would be mostly padding, so the vectors run
// over V input pixels of one stride phase instead: diff_src[c][h][phi + m*sw]
// for V consecutive m reads diff_dst[k][p][qbase + m], contiguous in a planar,
// zero-padded copy of diff_dst. One thread per (n, g) image.
inline bool use_pix_bwd_data(const ConvShape& s, int V) { return 2 * s.cg() < V && s.w / s.stride_w >= V; }

struct BwdDataPixPlan {
  ConvShape sh;
  const Ukernels* uk;
  int V, G, KG, CG, NC, CC;
  int mt, ml, mv;  // row / column margins, vectors per phase row
  int pp, qp;      // one (n, g) of diff_dst as (PP, KG, QP), zero margins
  WeiBlocking wb;
  BwdDataPixPlan(const ConvShape& s, const Ukernels& u) : sh(s), uk(&u) {
    V = u.v, G = s.groups, KG = s.kg(), CG = s.cg();
    NC = std::min(cpu::direct::kPixMaxC, CG), CC = ceil_div(CG, NC);
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
    // Few weight-gradient tiles (3 input channels, 32 outputs: 3 tiles for 2 threads) leave
    // threads idle: the images are then cut into `chunks` fixed runs, each summed into its own
    // copy of the gradient, the copies added in run order. The cut depends on the problem and
    // the machine's thread count only, so results are the same for any `threads`.
    chunks = std::clamp(ceil_div(4 * max_threads(), G * KP * CB * units()), 1, s.n);
    // Where a copy of the gradient per thread is small against the activations, the images
    // are cut at least once per thread of the machine: the runs then fall on the images each
    // thread blocked itself, and no thread reads the other's half of src and diff_dst (with
    // the threads in two cache domains: ResNet-50 res3.3x3_s2 0.75x the time, res2.3x3 0.92x;
    // where the weights outweigh the images, res5.3x3_s2, the copies cost 3 %).
    if (2 * int64_t(max_threads()) * wei_elems() <= xs.elems() + yd.elems())
      chunks = std::clamp(std::max(chunks, max_threads()), 1, s.n);
  }
  static constexpr int64_t kDiffDstBytes = 32 * 1024;
  int chunks;
  int units() const { return sh.r * runs_per_r; }
  int64_t wei_elems() const { return int64_t(G) * KB * CB * wei_tile(); }
  int64_t wei_tile() const { return int64_t(sh.r) * sh.s * BI * V; }
  struct Ws {
    float *xs, *yd, *ww;
    int64_t *pix, *unit;  // (prows*Q) src pixel offsets; (units, 3) tap-run in / out offsets and tap count
  };
  Ws carve(Carver& c) const {
    Ws w;
    w.xs = c.take<float>(xs.elems());
    w.yd = c.take<float>(yd.elems());
    w.ww = c.take<float>(chunks * wei_elems());  // (chunks, G, KB, CB, R, S, BI, V)
    w.pix = c.take<int64_t>(int64_t(prows) * sh.q);
    w.unit = c.take<int64_t>(3 * int64_t(units()));
    return w;
  }
};

void run_fwd(const FwdPlan& pl, const float* src, const float* wei, float* dst, void* workspace, int threads);
void run_bwd_data(const BwdDataPlan& pl, const float* diff_dst, const float* wei, float* diff_src, void* workspace,
                  int threads);
void run_bwd_data_pix(const BwdDataPixPlan& pl, const float* diff_dst, const float* wei, float* diff_src,
                      void* workspace, int threads);
void run_bwd_filter(const BwdFilterPlan& pl, const float* src, const float* diff_dst, float* diff_wei,
                    void* workspace, int threads);

}  // namespace convlab::direct_plan
