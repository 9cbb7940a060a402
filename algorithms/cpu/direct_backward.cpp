// cpu.direct's backward passes (the scheme: algorithms/cpu/direct.cpp): backward-data as a gather
// over input pixels split by stride phase, its pixel-vectorised variant for few input channels, and
// backward-filter over tiles each thread owns.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "algorithms/cpu/direct.hpp"
#include "algorithms/cpu/direct_plan.hpp"
#include "kernels/cpu/work_queue.hpp"

namespace convlab::direct_plan {

// Unit stride: every (r, s) reaches every pixel, so the taps, relative to
// pixel (0, 0), are one set for all pixels, which differ by fixed offsets.
// Writes their diff_dst and weight offsets; returns how many.
int unit_stride_taps(const BwdDataPlan& pl, int64_t* in_off, int64_t* wei_off) {
  const ConvShape& s = pl.sh;
  const int BK = pl.BK, V = pl.V;
  int n = 0;
  for (int r = 0; r < s.r; ++r) {
    const int64_t prow = int64_t(s.pad_h) - int64_t(r) * s.dil_h + pl.mt;  // diff_dst row for h = 0
    for (int t = 0; t < (pl.flat ? 1 : s.s); ++t) {
      const int64_t col = pl.flat ? s.pad_w - (s.s - 1) + pl.ml : s.pad_w - int64_t(t) * s.dil_w + pl.ml;
      in_off[n] = (prow * pl.yd.wp + col) * BK;
      wei_off[n] = int64_t(r * s.s + t) * BK * V;
      ++n;
    }
  }
  return n;
}

// The taps that reach input row h in column phase phi (w = phi, phi + stride_w, ...):
// their offsets in the margin-padded diff_dst and the weights; returns how many.
int phase_taps(const BwdDataPlan& pl, int h, int phi, int64_t* in_off, int64_t* wei_off) {
  const ConvShape& s = pl.sh;
  const int BK = pl.BK, V = pl.V, sh = s.stride_h, sw = s.stride_w;
  int nt = 0;
  for (int r = 0; r < s.r; ++r) {
    const int y = h + s.pad_h - r * s.dil_h;
    if (((y % sh) + sh) % sh) continue;
    const int prow = y / sh + pl.mt;  // row of the margin-padded diff_dst
    if (pl.flat) {  // all s, reversed: column w + pw - (S-1) + s' for s' = S-1-s
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
  return nt;
}

void run_bwd_data(const BwdDataPlan& pl, const float* diff_dst, const float* wei, float* diff_src, void* workspace,
                  int threads) {
  Carver c{static_cast<char*>(workspace)};
  const BwdDataPlan::Ws ws = pl.carve(c);
  const ConvShape& s = pl.sh;
  const int V = pl.V, BK = pl.BK, RS = s.r * s.s, sh = s.stride_h, sw = s.stride_w;
  const int64_t plane = pl.yd.plane(), HW = int64_t(s.h) * s.w;
  const BlockGroups cgroups(pl.CB);
  const int CP = cgroups.count;
  cpu::ImageQueue queue(int64_t(pl.G) * CP, s.n, threads);
  // With stride_w == dil_w == 1 every s contributes to every column and, with
  // s stored reversed, the (s, k) of one filter row are contiguous in both the
  // blocked diff_dst row and the weights: one tap per r, S*BK deep.
  const bool flat = pl.flat;
#pragma omp parallel num_threads(threads)
  {
    const int ithr = omp_get_thread_num(), nthr = omp_get_num_threads();
    cpu::direct::block_act(pl.yd, diff_dst, ws.yd, ithr, nthr);
    cpu::direct::block_wei_bwd_data(pl.wb, wei, ws.wb, flat, ithr, nthr);
#pragma omp barrier
    float* tile = ws.tiles + int64_t(ithr) * BlockGroups::kMax * HW * V;  // (<= 3, H, W, V)
    int64_t* in_off = ws.taps + int64_t(ithr) * 2 * RS;
    int64_t* wei_off = in_off + RS;
    const bool unit_stride = sh == 1 && sw == 1;
    const int ntaps1 = unit_stride ? unit_stride_taps(pl, in_off, wei_off) : 0;
    int64_t pix_off[cpu::direct::kMaxNj];
    queue.run(ithr, [&](int64_t gc, int n) {  // (G, CP, N), as in forward
      const int cp = int(gc % CP), g = int(gc / CP);
      const int cb = cgroups.begin(cp), ncb = cgroups.size(cp);
      const int c_first = g * pl.CG + cb * V, c_count = std::min(ncb * V, pl.CG - cb * V);
      cpu::direct::prefetch_for_write(diff_src + (int64_t(n) * s.c + c_first) * HW,
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
            a.ntaps = phase_taps(pl, h, phi, in_off, wei_off);
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
        cpu::direct::unblock_tile(tile + x * HW * V, HW, V, std::min(V, pl.CG - (cb + x) * V),
                             diff_src + (int64_t(n) * s.c + c0) * HW);
      }
    });
  }
}

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
    cpu::direct::block_wei_pix(pl.wb, wei, ws.wp, ithr, nthr);
#pragma omp barrier
    float* yd = ws.yd + int64_t(ithr) * pl.pp * row;  // (PP, KG, QP)
    float* tmp = ws.tmp + int64_t(ithr) * pl.NC * pl.mv * V;  // (NC, mv*V)
    int64_t* in_off = ws.taps + int64_t(ithr) * 2 * RS;
    int64_t* wei_off = in_off + RS;
#pragma omp for schedule(dynamic) nowait
    for (int64_t item = 0; item < int64_t(s.n) * pl.G; ++item) {  // (N, G), as in forward
      const int g = int(item % pl.G), n = int(item / pl.G);
      cpu::direct::pad_rows_interleaved(diff_dst + (int64_t(n) * s.k + int64_t(g) * pl.KG) * PQ, pl.KG, s.p, s.q, pl.mt,
                                   pl.ml, pl.pp, pl.qp, yd);
      cpu::direct::PixUkernelArgs a{};
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
            const Runs vruns(ceil_div(nw, V), cpu::direct::kPixMaxJ);
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
    cpu::direct::block_act(pl.xs, src, ws.xs, ithr, nthr);
    cpu::direct::block_act(pl.yd, diff_dst, ws.yd, ithr, nthr);
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
    const int64_t items = int64_t(pl.G) * KP * pl.CB * units;
    int64_t begin, end;
    cpu::direct::share(pl.chunks * items, ithr, nthr, begin, end);  // (chunks, items)
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
    for (int ch = int(begin / items); ch < pl.chunks && int64_t(ch) * items < end; ++ch) {
      const int64_t i0 = std::max(begin, ch * items) - ch * items, i1 = std::min(end, (ch + 1) * items) - ch * items;
      const int n0 = int(int64_t(s.n) * ch / pl.chunks), n1 = int(int64_t(s.n) * (ch + 1) / pl.chunks);
      float* ww = ws.ww + ch * pl.wei_elems();
      for (int n = n0; n < n1; n += pl.nimg)
        for (int p0 = 0; p0 < s.p; p0 += pl.prows) {
          a.accumulate = n > n0 || p0 > 0;
          a.nn = std::min(pl.nimg, n1 - n);
          a.np = std::min(pl.prows, s.p - p0);
          // Items (G, KP, CB, R, runs): one division per (g, k-pair, c-block), the
          // tap runs of its filter from the unit table.
          for (int64_t item = i0; item < i1;) {
            const int64_t gkc = item / units;
            const int u0 = int(item % units), u1 = int(std::min<int64_t>(units, u0 + (i1 - item)));
            const int cb = int(gkc % pl.CB), kb = int(gkc / pl.CB % KP) * kPair, g = int(gkc / pl.CB / KP);
            a.nkb = std::min(kPair, pl.KB - kb);
            const float* in = ws.xs + ((int64_t(n) * pl.G + g) * pl.CB + cb) * xplane +
                              int64_t(p0) * s.stride_h * pl.xs.wp * BI;  // (NN, .., HP, WP, BI)
            a.dd = ws.yd + ((int64_t(n) * pl.G + g) * pl.KB + kb) * yplane + int64_t(p0) * s.q * V;
            float* out = ww + ((int64_t(g) * pl.KB + kb) * pl.CB + cb) * pl.wei_tile();  // (nkb, .., R, S, BI, V)
            for (int u = u0; u < u1; ++u) {
              a.in = in + ws.unit[3 * u];
              a.out = out + ws.unit[3 * u + 1];
              a.nt = int(ws.unit[3 * u + 2]);
              pl.uk->wgrad(a);
            }
            item += u1 - u0;
          }
        }
    }
#pragma omp barrier
    if (pl.chunks > 1) {  // the chunks' copies added into the first, in chunk order
      int64_t e0, e1;
      cpu::direct::share(pl.wei_elems(), ithr, nthr, e0, e1);
      for (int ch = 1; ch < pl.chunks; ++ch) {
        const float* part = ws.ww + ch * pl.wei_elems();
        for (int64_t e = e0; e < e1; ++e) ws.ww[e] += part[e];
      }
#pragma omp barrier
    }
    cpu::direct::unblock_wei_fwd(pl.wb, ws.ww, diff_wei, ithr, nthr);
  }
}

}  // namespace convlab::direct_plan
