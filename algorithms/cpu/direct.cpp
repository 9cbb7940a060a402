// cpu.direct — direct convolution on blocked layouts, three directions.
//
// Layouts (kernels/cpu/direct/layout.hpp), V = vector width (16 AVX-512, 8
// AVX2 / portable), per group g; all conversions run inside run(), in the
// workspace, and are part of its time:
//   src  -> (N, G, CB, HP, WP, BI)        zero-padded (HP = top + H + bottom), BI = min(V, C/g)
//   wei  -> (G, KB, CB, R, S, BI, V)      lanes = output channels
//   dst  <- (<=3, band, Q, V) tile per (n, g, k-block group, band of output rows
//            within 128 KiB), unblocked while it is in L2
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
//   them: one fixed summation order for any thread count. With fewer than 4
//   tiles per thread of the machine, the images are cut into fixed runs, each
//   summed into its own copy of the gradient, the copies added in run order
//   (BwdFilterPlan::chunks). With at most 4 input channels (a first layer) it runs with
//   pixels in the lanes instead, diff_dst read as it lies (direct_wgrad_pixels.hpp).
// Threads: OpenMP. Layout conversions in static shares; forward and
// backward-data items (an output tile each) taken by the thread that blocked
// their image first, then by any thread that is free (kernels/cpu/work_queue.hpp),
// so a thread slowed by a shared core does not hold the other at the end;
// backward-filter tiles in static shares (each owns its sums over n). Every
// output element is written by one thread in an order independent of the
// thread count and of which thread runs it, so results are bit-identical run
// to run (and across thread counts).
#include "algorithms/cpu/direct.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "algorithms/cpu/direct_plan.hpp"
#include "algorithms/cpu/direct_wgrad_pixels.hpp"
#include "core/error.hpp"
#include "kernels/cpu/work_queue.hpp"

namespace convlab {

namespace direct_plan {

void run_fwd(const FwdPlan& pl, const float* src, const float* wei, float* dst, void* workspace, int threads) {
  Carver c{static_cast<char*>(workspace)};
  const FwdPlan::Ws ws = pl.carve(c);
  const ConvShape& s = pl.sh;
  const int V = pl.V, BI = pl.BI, RS = s.r * s.s;
  const int64_t plane = pl.xs.plane(), PQ = int64_t(s.p) * s.q;
  const BlockGroups kgroups(pl.KB);  // one broadcast feeds 2 (or 3) FMAs
  const int KP = kgroups.count;
  cpu::ImageQueue queue(int64_t(pl.G) * KP, s.n, threads);
#pragma omp parallel num_threads(threads)
  {
    const int ithr = omp_get_thread_num(), nthr = omp_get_num_threads();
    cpu::direct::block_act(pl.xs, src, ws.xs, ithr, nthr);
    cpu::direct::block_wei_fwd(pl.wb, wei, ws.wf, ithr, nthr);
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
    const int band = pl.band_rows();
    const int64_t BQ = int64_t(band) * s.q;  // a band's pixels
    float* tile = ws.tiles + int64_t(ithr) * BlockGroups::kMax * BQ * V;  // (<= 3, band, Q, V)
    int64_t pix_off[cpu::direct::kMaxNj];
    // Items (G, KP, N), weights reused across n, each thread's images first
    // (kernels/cpu/work_queue.hpp).
    queue.run(ithr, [&](int64_t gk, int n) {
      const int kp = int(gk % KP), g = int(gk / KP);
      const int kb = kgroups.begin(kp), nkb = kgroups.size(kp);
      const float* in_img = ws.xs + (int64_t(n) * pl.G + g) * pl.CB * plane;  // (CB, HP, WP, BI)
      ConvUkernelArgs a{};
      a.in_off = ws.in_off;
      a.wei_off = ws.wei_off;
      a.ntaps = ntaps;
      a.in_ib_stride = plane;
      a.wei_ib_stride = pl.wei_tile();
      a.bi = depth;
      a.in_pix_stride = int64_t(s.stride_w) * BI;
      a.out_pix_stride = V;
      a.nkb = nkb;
      a.wei_kb_stride = pl.CB * pl.wei_tile();
      a.out_kb_stride = BQ * V;
      const float* wei_g = ws.wf + (int64_t(g) * pl.KB + kb) * pl.CB * pl.wei_tile();  // (nkb, CB, R, S, BI, V)
      const Runs passes = reduction_passes(pl.CB, pl.wei_tile() * int64_t(sizeof(float)) * nkb);
      for (int p0 = 0; p0 < s.p; p0 += band) {
        const int rows = std::min(band, s.p - p0);
        for (int x = 0; x < nkb; ++x) {
          const int k0 = g * pl.KG + (kb + x) * V;
          cpu::direct::prefetch_for_write(dst + (int64_t(n) * s.k + k0) * PQ + int64_t(p0) * s.q,
                                          int64_t(rows) * s.q * int64_t(sizeof(float)));
        }
        const PixelRuns pruns(rows, s.q, int64_t(s.stride_h) * pl.xs.wp * BI, int64_t(s.stride_w) * BI,
                              pl.uk->max_nj / nkb);
        const float* in_band = in_img + int64_t(p0) * s.stride_h * pl.xs.wp * BI;
        for (int ps = 0; ps < passes.count; ++ps) {
          const int cb0 = passes.begin(ps);
          a.nib = passes.size(ps);
          a.accumulate = ps > 0;
          a.wei = wei_g + cb0 * pl.wei_tile();
          const float* in_pass = in_band + cb0 * plane;
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
          cpu::direct::unblock_rows(tile + x * BQ * V, int64_t(rows) * s.q, PQ, V, std::min(V, pl.KG - (kb + x) * V),
                                    dst + (int64_t(n) * s.k + k0) * PQ + int64_t(p0) * s.q);
        }
      }
    });
  }
}

}  // namespace direct_plan

using namespace direct_plan;

Support CpuDirect::supports(const ConvProblem& p, Direction) const {
  if (auto why = p.validate(); !why.empty()) return Support::no(why);
  return Support::yes();
}

size_t CpuDirect::workspace_bytes(const ConvProblem& p, Direction dir) const {
  const ConvShape s = to_shape(p);
  const Ukernels& uk = cpu::direct::select_ukernels();
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
    case Direction::bwd_filter:
      if (direct_pix_wgrad::applies(s)) return direct_pix_wgrad::workspace_bytes(s);
      BwdFilterPlan(s, uk).carve(c);
      break;
  }
  return c.used;
}

void CpuDirect::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                    const ExecContext& ctx) const {
  const ConvShape s = to_shape(p);
  const Ukernels& uk = cpu::direct::select_ukernels();
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
    case Direction::bwd_filter:
      if (direct_pix_wgrad::applies(s)) {
        direct_pix_wgrad::run(s, buf.src, buf.dst, buf.wei, workspace, threads);
      } else {
        run_bwd_filter(BwdFilterPlan(s, uk), buf.src, buf.dst, buf.wei, workspace, threads);
      }
      break;
  }
}

}  // namespace convlab
