// cpu.direct_depthwise — depthwise convolution (groups == C == K), three directions.
//
// Layout: every lane of a vector is one channel with its own R x S filter, so
// V channels of one image (V = 16 AVX-512, 8 AVX2 / portable) are processed
// together in the blocked layout (HP, WP, V) ("nChw8c"), weights (CB, R, S, V).
// The tensors are not converted whole: each work item blocks the rows it reads
// into a per-thread buffer (kernels/cpu/direct/layout.hpp's block_act, zero
// rows / columns for the padding), computes into a per-thread tile and
// unblocks that into the plain output, so each plain tensor crosses memory
// once and the blocked copies stay in L1 / L2. Those per-thread buffers are
// the thread's own memory (kernels/cpu/thread_scratch.hpp), the workspace's
// per-thread regions where that cannot be had.
// Forward: item = (n, channel block, band of output rows); each output row
//   is one micro-kernel call over its Q pixels (kernels/cpu/depthwise).
// Backward-data at stride 1: a forward convolution of diff_dst with the filter
//   reversed and padding (R-1)*dh - ph (DwPlan::make), run by the forward.
// Backward-data at other strides (gather, no atomics): diff_src pixel (h, w) receives diff_dst
//   (p, q) through tap (r, s) iff h + ph - r*dh = p*sh and w + pw - s*dw =
//   q*sw. Item = (n, channel block, band of diff_src rows); per row and
//   column phase w = phi, phi + sw, ... the contributing taps are fixed and q
//   advances by one per pixel: one forward-like call over those taps, reading
//   a band of diff_dst blocked with zero columns on both sides.
// Backward-filter (deterministic, no atomics): the (n, row band) pairs of
//   each channel block are cut into `chunks` fixed runs; unit = (channel
//   block, run) accumulates its run in order into its own partial sums, then
//   the partials are added in run order. The cut depends on the problem and
//   the machine's thread count only, so results are bit-identical run to run
//   and for any `threads`.
// Plane path: small stride-1 images keep the plain layout, pixels in the lanes
//   (algorithms/cpu/direct_depthwise_plane.cpp); everything above is the blocked path.
// Threads: OpenMP, each thread a fixed contiguous run of items (static), so
// every call a thread reads and writes the same images as the call before:
// where the threads sit in different cache domains (two CCDs, or wherever a
// hypervisor has put a guest's CPUs) its part stays in its own cache. Handed
// out dynamically, half of each call's data sat in the other thread's cache
// (10-15 % slower there; no faster where the threads share a cache). The
// item after this one, the one prefetched, is this thread's but at its run's
// end. (n, channel block, band) gives both cores work at batch 1.
#include "algorithms/cpu/direct_depthwise.hpp"

#include <omp.h>

#include <algorithm>
#include <cassert>

#include "algorithms/cpu/direct_depthwise_plane.hpp"
#include "algorithms/cpu/direct_plan.hpp"
#include "algorithms/cpu/family_cost.hpp"
#include "kernels/cpu/depthwise/dw_ukernel.hpp"
#include "kernels/cpu/thread_scratch.hpp"

namespace convlab {

namespace {

using cpu::depthwise::DwRowArgs;
using cpu::depthwise::DwUkernels;
using cpu::depthwise::DwWgradArgs;
using cpu::direct::ActBlocking;
using direct_plan::Carver;
using direct_plan::ceil_div;
using direct_plan::ceil_div_signed;
using direct_plan::max_threads;

int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }



// Asks for rows [y0, y1) (clamped to the image) of `lanes` planes h x w from `plane0` on, in L2,
// ahead of the item that blocks them: the hardware prefetchers do not jump from one item's rows
// to the next item's.
void prefetch_rows(const float* plane0, int lanes, int h, int w, int y0, int y1) {
  y0 = std::max(y0, 0), y1 = std::min(y1, h);
  const int64_t bytes = int64_t(y1 - y0) * w * int64_t(sizeof(float));
  for (int c = 0; c < lanes; ++c) {
    const char* b = reinterpret_cast<const char*>(plane0 + (int64_t(c) * h + y0) * w);
    for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(b + o, 0, 2);
  }
}

// The same for writing: rows [y0, y1) of the output planes, before the item's unblocking stores
// into them (their read-for-ownership then overlaps the item's arithmetic).
void prefetch_rows_for_write(float* plane0, int lanes, int h, int w, int y0, int y1) {
  for (int c = 0; c < lanes; ++c)
    cpu::direct::prefetch_for_write(plane0 + (int64_t(c) * h + y0) * w, int64_t(y1 - y0) * w * int64_t(sizeof(float)));
}

// Bytes of one item's output tile: it and the band it reads stay in L1 / L2.
constexpr int64_t kTileBytes = 32 * 1024;

struct DwPlan {
  ConvShape sh;
  const DwUkernels* uk;
  Direction dir;
  int V, CB, RS;
  int band, nbands;    // rows per item (output rows; diff_src rows in bwd-data), bands per plane
  int in_rows, wp;     // fwd, bwd-filter: blocked src rows per band, their width
  int ml, qp, dd_rows; // bwd-data: diff_dst zero columns on the left, row width, rows per band
  int chunks;          // bwd-filter: runs of (n, band) per channel block
  bool flip;           // weights taken reversed in (r, s): backward-data run as a forward
  bool plane;          // the plane path (algorithms/cpu/direct_depthwise_plane.hpp)
  DwPlan(const ConvShape& s, const DwUkernels& u, Direction d, bool flip_ = false)
      : sh(s), uk(&u), dir(d), flip(flip_) {
    V = u.v, CB = ceil_div(s.c, V), RS = s.r * s.s;
    plane = dw_plane::applies(s, u);
    const bool bd = d == Direction::bwd_data;
    const int rows = bd ? s.h : s.p, px = bd ? s.w : s.q;
    band = int(std::clamp<int64_t>(kTileBytes / (int64_t(px) * V * int64_t(sizeof(float))), 1, rows));
    // Enough items for every thread several times over, at batch 1 too.
    const int want = ceil_div(4 * max_threads(), s.n * CB);
    if (ceil_div(rows, band) < want) band = std::max(1, ceil_div(rows, want));
    nbands = ceil_div(rows, band);
    in_rows = (band - 1) * s.stride_h + (s.r - 1) * s.dil_h + 1;
    wp = (s.q - 1) * s.stride_w + (s.s - 1) * s.dil_w + 1;
    ml = std::max(0, -floor_div(s.pad_w - (s.s - 1) * s.dil_w, s.stride_w));
    const int qmax = (s.stride_w - 1 + s.pad_w) / s.stride_w + ceil_div(s.w, s.stride_w) - 1;
    qp = ml + std::max(s.q, qmax + 1);
    dd_rows = (band - 1 + (s.r - 1) * s.dil_h) / s.stride_h + 1;  // floor(span / sh) + 1 bounds pb - pa + 1
    chunks = std::clamp(ceil_div(4 * max_threads(), CB), 1, s.n * nbands);
  }
  // Backward-data at stride 1 is a forward convolution of diff_dst, padded by (R-1)*dil - pad
  // on each side, with the filter reversed in (r, s): it runs as one, through the forward's
  // rows. Other strides gather per row and column phase (run_bwd_data).
  static DwPlan make(const ConvProblem& p, Direction d) {
    const ConvShape s = to_shape(p);
    const DwUkernels& u = cpu::depthwise::select_dw_ukernels();
    if (d != Direction::bwd_data || s.stride_h != 1 || s.stride_w != 1) return DwPlan(s, u, d);
    ConvShape f = s;
    f.h = s.p, f.w = s.q, f.p = s.h, f.q = s.w;
    f.pad_h = (s.r - 1) * s.dil_h - s.pad_h, f.pad_h_end = (s.r - 1) * s.dil_h - s.pad_h_end;
    f.pad_w = (s.s - 1) * s.dil_w - s.pad_w, f.pad_w_end = (s.s - 1) * s.dil_w - s.pad_w_end;
    return DwPlan(f, u, Direction::fwd, true);
  }
  // Per-thread regions start on their own 128-byte line pair: two threads writing next to each
  // other would otherwise share a line (false sharing; the adjacent-line prefetcher pairs lines).
  static int64_t own_lines(int64_t elems, int64_t bytes_each) {
    const int64_t per = 128 / bytes_each;
    return (elems + per - 1) / per * per;
  }
  int64_t in_elems() const {  // per thread
    return own_lines(int64_t(dir == Direction::bwd_data ? int64_t(dd_rows) * qp : int64_t(in_rows) * wp) * V, 4);
  }
  int64_t tile_elems() const {  // per thread
    return own_lines(int64_t(band) * (dir == Direction::bwd_data ? sh.w : sh.q) * V, 4);
  }
  int64_t taps_elems() const { return own_lines(2 * RS, 8); }            // per thread in bwd-data
  int64_t part_elems() const { return own_lines(int64_t(RS) * V, 4); }  // per bwd-filter unit
  struct Ws {
    float *wblk, *in, *tile, *part;
    int64_t* taps;  // (RS in offsets, RS weight offsets); bwd-data: per thread, rewritten per row
  };
  Ws carve(Carver& c) const {
    const int T = max_threads();
    Ws w;
    w.wblk = c.take<float>(int64_t(CB) * RS * V);
    w.in = c.take<float>(T * in_elems());
    w.tile = c.take<float>(T * tile_elems());
    w.part = c.take<float>(dir == Direction::bwd_filter ? int64_t(CB) * chunks * part_elems() : 0);
    w.taps = c.take<int64_t>(int64_t(dir == Direction::bwd_data ? T : 1) * taps_elems());
    return w;
  }
  // The calling thread's band, tile (and bwd-data taps) moved to memory it owns
  // (kernels/cpu/thread_scratch.hpp), where that can be had; else they stay in its workspace regions.
  void own_scratch(float*& in, float*& tile, int64_t** taps) const {
    const size_t a = size_t(in_elems()) * sizeof(float), b = size_t(tile_elems()) * sizeof(float);
    const size_t c = taps ? size_t(taps_elems()) * sizeof(int64_t) : 0;
    if (char* own = static_cast<char*>(cpu::thread_scratch(a + b + c))) {
      in = reinterpret_cast<float*>(own);
      tile = reinterpret_cast<float*>(own + a);
      if (taps) *taps = reinterpret_cast<int64_t*>(own + a + b);
    }
  }
  // The blocked src rows of output rows [p0, p1) of one channel block.
  ActBlocking src_band(int lanes, int p0, int p1) const {
    return {1, 1, lanes, sh.h, sh.w, V, sh.pad_h - p0 * sh.stride_h, sh.pad_w,
            (p1 - p0 - 1) * sh.stride_h + (sh.r - 1) * sh.dil_h + 1, wp};
  }
  // Weights (C, 1, R, S) -> (CB, R, S, V), padded lanes zero (wei null: none), reversed when
  // flip; the forward taps.
  void prepare(const float* wei, const Ws& w) const {
    for (int cb = 0; cb < (wei ? CB : 0); ++cb)
      for (int t = 0; t < RS; ++t)
        for (int l = 0; l < V; ++l) {
          const int c = cb * V + l;
          w.wblk[(int64_t(cb) * RS + t) * V + l] = c < sh.c ? wei[int64_t(c) * RS + (flip ? RS - 1 - t : t)] : 0.0f;
        }
    for (int r = 0; r < sh.r; ++r)
      for (int s = 0; s < sh.s; ++s) {
        w.taps[r * sh.s + s] = (int64_t(r) * sh.dil_h * wp + int64_t(s) * sh.dil_w) * V;
        w.taps[RS + r * sh.s + s] = int64_t(r * sh.s + s) * V;
      }
  }
};

void run_fwd(const DwPlan& pl, const float* src, const float* wei, float* dst, void* workspace, int threads) {
  Carver c{static_cast<char*>(workspace)};
  const DwPlan::Ws ws = pl.carve(c);
  const ConvShape& s = pl.sh;
  const int V = pl.V;
  const int64_t hw = int64_t(s.h) * s.w, pq = int64_t(s.p) * s.q;
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    pl.prepare(wei, ws);
    const int ithr = omp_get_thread_num();
    float* in = ws.in + ithr * pl.in_elems();
    float* tile = ws.tile + ithr * pl.tile_elems();  // (band, Q, V)
    pl.own_scratch(in, tile, nullptr);
    const int64_t items = int64_t(s.n) * pl.CB * pl.nbands;
#pragma omp for schedule(static) nowait
    for (int64_t item = 0; item < items; ++item) {  // (N, CB, bands)
      if (item + 1 < items) {
        const int b = int((item + 1) % pl.nbands), cb = int((item + 1) / pl.nbands % pl.CB);
        const int n = int((item + 1) / pl.nbands / pl.CB), y0 = b * pl.band * s.stride_h - s.pad_h;
        prefetch_rows(src + (int64_t(n) * s.c + int64_t(cb) * V) * hw, std::min(V, s.c - cb * V), s.h, s.w, y0,
                      y0 + pl.in_rows);
      }
      const int b = int(item % pl.nbands), cb = int(item / pl.nbands % pl.CB), n = int(item / pl.nbands / pl.CB);
      const int p0 = b * pl.band, p1 = std::min(s.p, p0 + pl.band), lanes = std::min(V, s.c - cb * V);
      const int64_t plane0 = int64_t(n) * s.c + int64_t(cb) * V;
      prefetch_rows_for_write(dst + plane0 * pq, lanes, s.p, s.q, p0, p1);
      cpu::direct::block_act(pl.src_band(lanes, p0, p1), src + plane0 * hw, in, 0, 1);
      DwRowArgs a{};
      a.wei = ws.wblk + int64_t(cb) * pl.RS * V;
      a.in_off = ws.taps;
      a.wei_off = ws.taps + pl.RS;
      a.ntaps = pl.RS;
      a.nj = s.q;
      a.in_stride = int64_t(s.stride_w) * V;
      a.out_stride = V;
      for (int p = p0; p < p1; ++p) {
        a.in = in + int64_t(p - p0) * s.stride_h * pl.wp * V;
        a.out = tile + int64_t(p - p0) * s.q * V;
        pl.uk->row(a);
      }
      cpu::direct::unblock_rows(tile, int64_t(p1 - p0) * s.q, pq, V, lanes, dst + plane0 * pq + int64_t(p0) * s.q);
    }
  }
}

// The taps of diff_src row h, column phase phi, reading the diff_dst band of rows [pa, pb]:
// offsets into the blocked band (and into the weights); returns how many.
int bwd_data_taps(const DwPlan& pl, int h, int phi, int pa, int pb, int64_t* in_off, int64_t* wei_off) {
  const ConvShape& s = pl.sh;
  int nt = 0;
  for (int r = 0; r < s.r; ++r) {
    const int num = h + s.pad_h - r * s.dil_h;
    if (num < 0) break;  // num falls with r
    if (num % s.stride_h) continue;
    const int p = num / s.stride_h;
    if (p < pa || p > pb) continue;
    for (int t = 0; t < s.s; ++t) {
      const int numc = phi + s.pad_w - t * s.dil_w;
      if (((numc % s.stride_w) + s.stride_w) % s.stride_w) continue;
      const int q0 = floor_div(numc, s.stride_w);
      in_off[nt] = (int64_t(p - pa) * pl.qp + pl.ml + q0) * pl.V;
      wei_off[nt] = int64_t(r * s.s + t) * pl.V;
      ++nt;
    }
  }
  return nt;
}

void run_bwd_data(const DwPlan& pl, const float* diff_dst, const float* wei, float* diff_src, void* workspace,
                  int threads) {
  Carver c{static_cast<char*>(workspace)};
  const DwPlan::Ws ws = pl.carve(c);
  const ConvShape& s = pl.sh;
  const int V = pl.V;
  const int64_t hw = int64_t(s.h) * s.w, pq = int64_t(s.p) * s.q;
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    pl.prepare(wei, ws);
    const int ithr = omp_get_thread_num();
    float* in = ws.in + ithr * pl.in_elems();        // (dd_rows, QP, V)
    float* tile = ws.tile + ithr * pl.tile_elems();  // (band, W, V)
    int64_t* in_off = ws.taps + int64_t(ithr) * pl.taps_elems();
    pl.own_scratch(in, tile, &in_off);
    int64_t* wei_off = in_off + pl.RS;
    const int64_t items = int64_t(s.n) * pl.CB * pl.nbands;
#pragma omp for schedule(static) nowait
    for (int64_t item = 0; item < items; ++item) {  // (N, CB, bands)
      if (item + 1 < items) {
        const int b = int((item + 1) % pl.nbands), cb = int((item + 1) / pl.nbands % pl.CB);
        const int n = int((item + 1) / pl.nbands / pl.CB), h0 = b * pl.band;
        const int y0 = ceil_div_signed(h0 + s.pad_h - (s.r - 1) * s.dil_h, s.stride_h);
        prefetch_rows(diff_dst + (int64_t(n) * s.c + int64_t(cb) * V) * pq, std::min(V, s.c - cb * V), s.p, s.q, y0,
                      y0 + pl.dd_rows);
      }
      const int b = int(item % pl.nbands), cb = int(item / pl.nbands % pl.CB), n = int(item / pl.nbands / pl.CB);
      const int h0 = b * pl.band, h1 = std::min(s.h, h0 + pl.band), lanes = std::min(V, s.c - cb * V);
      const int pa = std::max(0, ceil_div_signed(h0 + s.pad_h - (s.r - 1) * s.dil_h, s.stride_h));
      const int pb = std::min(s.p - 1, (h1 - 1 + s.pad_h) / s.stride_h);
      const int64_t plane0 = int64_t(n) * s.c + int64_t(cb) * V;
      prefetch_rows_for_write(diff_src + plane0 * hw, lanes, s.h, s.w, h0, h1);
      assert(pb - pa + 1 <= pl.dd_rows);
      if (pa <= pb) {
        const ActBlocking band{1, 1, lanes, s.p, s.q, V, -pa, pl.ml, pb - pa + 1, pl.qp};
        cpu::direct::block_act(band, diff_dst + plane0 * pq, in, 0, 1);
      }
      DwRowArgs a{};
      a.in = in;
      a.wei = ws.wblk + int64_t(cb) * pl.RS * V;
      a.in_off = in_off;
      a.wei_off = wei_off;
      a.in_stride = V;
      a.out_stride = int64_t(s.stride_w) * V;
      for (int h = h0; h < h1; ++h)
        for (int phi = 0; phi < std::min(s.stride_w, s.w); ++phi) {
          a.ntaps = bwd_data_taps(pl, h, phi, pa, pb, in_off, wei_off);
          a.nj = ceil_div(s.w - phi, s.stride_w);
          a.out = tile + (int64_t(h - h0) * s.w + phi) * V;
          pl.uk->row(a);
        }
      cpu::direct::unblock_rows(tile, int64_t(h1 - h0) * s.w, hw, V, lanes, diff_src + plane0 * hw + int64_t(h0) * s.w);
    }
  }
}

// One unit of backward-filter: the (n, band) pairs [begin, end) of channel block cb, summed in
// order into part (RS, V).
void wgrad_unit(const DwPlan& pl, const float* src, const float* diff_dst, const int64_t* taps, int cb,
                int64_t begin, int64_t end, float* in, float* dd, float* part) {
  const ConvShape& s = pl.sh;
  const int V = pl.V, lanes = std::min(V, s.c - cb * V);
  const direct_plan::Runs runs(pl.RS, pl.uk->max_nt);
  for (int64_t pair = begin; pair < end; ++pair) {
    const int n = int(pair / pl.nbands), b = int(pair % pl.nbands);
    const int p0 = b * pl.band, p1 = std::min(s.p, p0 + pl.band);
    const int64_t plane0 = int64_t(n) * s.c + int64_t(cb) * V;
    if (pair + 1 < end) {  // the next pair's rows
      const int n1 = int((pair + 1) / pl.nbands), q0 = int((pair + 1) % pl.nbands) * pl.band;
      const int64_t plane1 = int64_t(n1) * s.c + int64_t(cb) * V;
      prefetch_rows(src + plane1 * s.h * s.w, lanes, s.h, s.w, q0 * s.stride_h - s.pad_h,
                    q0 * s.stride_h - s.pad_h + pl.in_rows);
      prefetch_rows(diff_dst + plane1 * s.p * s.q, lanes, s.p, s.q, q0, q0 + pl.band);
    }
    cpu::direct::block_act(pl.src_band(lanes, p0, p1), src + plane0 * s.h * s.w, in, 0, 1);
    const ActBlocking dd_band{1, 1, lanes, s.p, s.q, V, -p0, 0, p1 - p0, s.q};
    cpu::direct::block_act(dd_band, diff_dst + plane0 * s.p * s.q, dd, 0, 1);
    for (int i = 0; i < runs.count; ++i) {
      DwWgradArgs a{};
      a.in = in;
      a.dd = dd;
      a.acc = part + int64_t(runs.begin(i)) * V;
      a.in_off = taps + runs.begin(i);
      a.nt = runs.size(i);
      a.np = p1 - p0;
      a.nq = s.q;
      a.in_row_stride = int64_t(s.stride_h) * pl.wp * V;
      a.in_pix_stride = int64_t(s.stride_w) * V;
      a.dd_row_stride = int64_t(s.q) * V;
      a.accumulate = pair > begin;
      pl.uk->wgrad(a);
    }
  }
}

void run_bwd_filter(const DwPlan& pl, const float* src, const float* diff_dst, float* diff_wei, void* workspace,
                    int threads) {
  Carver c{static_cast<char*>(workspace)};
  const DwPlan::Ws ws = pl.carve(c);
  const ConvShape& s = pl.sh;
  const int V = pl.V, RS = pl.RS;
  const int64_t pairs = int64_t(s.n) * pl.nbands;
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    pl.prepare(nullptr, ws);  // the taps
    const int ithr = omp_get_thread_num();
    float* in = ws.in + ithr * pl.in_elems();
    float* dd = ws.tile + ithr * pl.tile_elems();  // (band, Q, V)
    pl.own_scratch(in, dd, nullptr);
#pragma omp for schedule(dynamic)
    for (int unit = 0; unit < pl.CB * pl.chunks; ++unit) {  // (CB, chunks)
      const int cb = unit / pl.chunks, ch = unit % pl.chunks;
      wgrad_unit(pl, src, diff_dst, ws.taps, cb, pairs * ch / pl.chunks, pairs * (ch + 1) / pl.chunks, in, dd,
                 ws.part + int64_t(unit) * pl.part_elems());
    }
#pragma omp for schedule(static)
    for (int ch = 0; ch < s.c; ++ch) {
      const float* part = ws.part + int64_t(ch / V) * pl.chunks * pl.part_elems() + ch % V;
      for (int t = 0; t < RS; ++t) {
        float sum = 0;
        for (int u = 0; u < pl.chunks; ++u) sum += part[int64_t(u) * pl.part_elems() + int64_t(t) * V];
        diff_wei[int64_t(ch) * RS + t] = sum;
      }
    }
  }
}

}  // namespace

Support CpuDirectDepthwise::supports(const ConvProblem& p, Direction) const {
  if (auto why = p.validate(); !why.empty()) return Support::no(why);
  if (p.groups != p.c) return Support::no("needs a depthwise convolution (groups == C); cpu.direct runs the others");
  if (p.k != p.c)
    return Support::no("needs one output channel per input channel (K == C); depthwise multiplier " +
                       std::to_string(p.k / p.c) + " runs on cpu.direct");
  return Support::yes();
}

size_t CpuDirectDepthwise::workspace_bytes(const ConvProblem& p, Direction dir) const {
  const DwPlan pl = DwPlan::make(p, dir);
  if (pl.plane) return dw_plane::workspace_bytes(pl.sh, *pl.uk, pl.flip);
  Carver c{nullptr};
  pl.carve(c);
  return c.used;
}

void CpuDirectDepthwise::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                             const ExecContext& ctx) const {
  const DwPlan pl = DwPlan::make(p, dir);
  const int threads = std::clamp(ctx.resolved_threads(), 1, max_threads());
  if (pl.plane) {
    switch (dir) {
      case Direction::fwd: dw_plane::forward(pl.sh, *pl.uk, false, buf.src, buf.wei, buf.dst, workspace, threads); break;
      case Direction::bwd_data: dw_plane::forward(pl.sh, *pl.uk, true, buf.dst, buf.wei, buf.src, workspace, threads); break;
      case Direction::bwd_filter: dw_plane::wgrad(pl.sh, *pl.uk, buf.src, buf.dst, buf.wei, workspace, threads); break;
    }
    return;
  }
  switch (dir) {
    case Direction::fwd: run_fwd(pl, buf.src, buf.wei, buf.dst, workspace, threads); break;
    case Direction::bwd_data:
      if (pl.flip) run_fwd(pl, buf.dst, buf.wei, buf.src, workspace, threads);
      else run_bwd_data(pl, buf.dst, buf.wei, buf.src, workspace, threads);
      break;
    case Direction::bwd_filter: run_bwd_filter(pl, buf.src, buf.dst, buf.wei, workspace, threads); break;
  }
}

CostPhases CpuDirectDepthwise::cost_phases(const ConvProblem& p, Direction dir) const {
  return depthwise_cost_phases(p, dir);
}

CostPhases depthwise_cost_phases(const ConvProblem& p, Direction dir) {
  const DwPlan pl = DwPlan::make(p, dir);
  CostPhases c;
  if (pl.plane) return dw_plane::cost_phases(p, pl.sh, *pl.uk);
  // FMA: every lane a channel, the last block's padded lanes wasted; one input load per FMA.
  const double waste = double(pl.CB) * pl.V / p.c;
  const CostPhase fma{CostKind::fma, p.flops() * waste};
  // The plain tensors cross memory once (read the inputs, write the output) ...
  const double src = double(p.src_elems()), dst = double(p.dst_elems()), wei = double(p.wei_elems());
  CostPhase plain{CostKind::copy, 4 * (src + dst + 2 * wei)};
  plain.footprint = plain.work;
  // ... and each band is blocked into a per-thread buffer (the input rows of the next band's halo
  // again) and its tile unblocked, in cache: the blocked band written and the tile read once each
  // (the kernel's reads of the band are its FMAs' loads).
  // Backward-data at stride 1 runs as a forward (pl.dir): diff_dst is its blocked input.
  const double halo = pl.dir == Direction::bwd_data
                          ? double(pl.dd_rows) / std::max(1.0, double(pl.band) / p.stride_h)
                          : double(pl.in_rows) / (double(pl.band) * pl.sh.stride_h);
  const double blocked = dir == Direction::bwd_data ? halo * dst + src : halo * src + dst;
  const CostPhase cached{CostKind::copy_cached, 4 * blocked};
  c.phases = {fma, plain, cached};
  c.what = cost_text("depthwise x%.2f lanes, %g-row bands", waste, pl.band) + (pl.flip ? ", as a forward" : "");
  return c;
}

NominalCost CpuDirectDepthwise::nominal_cost(const ConvProblem& p, Direction dir) const {
  NominalCost c = nominal_direct(p, dir);
  c.lane_channels = p.c;  // the lanes are the channels themselves
  return c;
}

}  // namespace convlab
