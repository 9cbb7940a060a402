// cpu.direct's backward-filter for few input channels (see direct_wgrad_pixels.hpp).
#include "algorithms/cpu/direct_wgrad_pixels.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "algorithms/cpu/direct.hpp"
#include "algorithms/cpu/direct_plan.hpp"
#include "kernels/cpu/depthwise/dw_ukernel.hpp"
#include "kernels/cpu/im2col/row_copy.hpp"

namespace convlab {

namespace {
bool g_pixel_wgrad = true;  // tests: set_direct_pixel_wgrad
}  // namespace

void set_direct_pixel_wgrad(bool on) { g_pixel_wgrad = on; }

namespace direct_pix_wgrad {

namespace {

using cpu::depthwise::DwPlaneWgradArgs;
using cpu::depthwise::DwUkernels;
using direct_plan::Carver;
using direct_plan::ceil_div;
using direct_plan::max_threads;

// Each run of taps reads the band's diff_dst again (from the L2): with more taps than a 3-channel 3x3
// filter's the channel-blocked path is faster (ResNet's 3 x 7 x 7: 14.3 ms against 11.5; AlexNet's
// 3 x 11 x 11: 27.3 against 17.9; batch 16 / 32, Zen 5).
constexpr int kMaxChannels = 4, kMaxTaps = 27;
// Output pixels per band (whole rows, at least one): its gathered taps (27 rows of them) and each output
// channel's diff_dst rows stay in the L2 while every run of taps sweeps them.
constexpr int kBandPixels = 672;

struct Plan {
  const ConvShape& s;
  const DwUkernels& uk;
  int V, T;        // lanes; taps (c, r, s)
  int band, nbands;  // output rows per band
  int stride;      // floats between two taps' gathered rows (whole chunks)
  int units;       // fixed runs of (image, band) pairs
  direct_plan::Runs runs;  // of taps per kernel call: two output channels' sums in registers
  Plan(const ConvShape& s_, const DwUkernels& u)
      : s(s_), uk(u), V(u.v), T(s_.c * s_.r * s_.s), runs(s_.c * s_.r * s_.s, std::max(1, u.max_nt / 2)) {
    band = std::clamp(kBandPixels / std::max(1, s.q), 1, s.p);
    nbands = ceil_div(s.p, band);
    stride = ceil_div(band * s.q, V) * V;
    units = std::clamp(4 * max_threads(), 1, s.n * nbands);
  }
  int64_t partial_elems() const { return int64_t(s.k) * T; }
  struct Ws {
    float *partial, *rows;  // (units, K, T) sums; per thread (T, stride) gathered taps
    int64_t* off;           // (T) tap t's row
  };
  Ws carve(Carver& c) const {
    Ws w;
    w.partial = c.take<float>(units * partial_elems());
    w.rows = c.take<float>(int64_t(max_threads()) * T * stride);
    w.off = c.take<int64_t>(T);
    return w;
  }
  // Tap (c, r, s)'s input pixel for each output pixel of rows [p0, p1) of image n, 0 in the padding.
  void gather(const float* src, int n, int p0, int p1, float* rows) const {
    const int64_t hw = int64_t(s.h) * s.w;
    for (int c = 0; c < s.c; ++c)
      for (int r = 0; r < s.r; ++r)
        for (int t = 0; t < s.s; ++t) {
          float* o = rows + int64_t((c * s.r + r) * s.s + t) * stride;
          const int x0 = t * s.dil_w - s.pad_w, sw = s.stride_w;
          // Columns q in [qa, qb) read inside the row.
          const int qa = std::min(s.q, x0 >= 0 ? 0 : (-x0 + sw - 1) / sw);
          const int qb = std::max(qa, std::min(s.q, s.w - 1 - x0 >= 0 ? (s.w - 1 - x0) / sw + 1 : 0));
          for (int p = p0; p < p1; ++p, o += s.q) {
            const int y = p * s.stride_h + r * s.dil_h - s.pad_h;
            if (y < 0 || y >= s.h) {
              std::memset(o, 0, sizeof(float) * size_t(s.q));
              continue;
            }
            const float* row = src + (int64_t(n) * s.c + c) * hw + int64_t(y) * s.w + x0;
            std::fill(o, o + qa, 0.0f);
            cpu::copy_strided(row + int64_t(qa) * sw, sw, qb - qa, o + qa);
            std::fill(o + qb, o + s.q, 0.0f);
          }
        }
  }
};

}  // namespace

bool applies(const ConvShape& s) {
  return g_pixel_wgrad && s.groups == 1 && s.c <= kMaxChannels && s.c * s.r * s.s <= kMaxTaps;
}

size_t workspace_bytes(const ConvShape& s) {
  Carver c{nullptr};
  Plan(s, cpu::depthwise::select_dw_ukernels()).carve(c);
  return c.used;
}

void run(const ConvShape& s, const float* src, const float* diff_dst, float* diff_wei, void* workspace, int threads) {
  const Plan pl(s, cpu::depthwise::select_dw_ukernels());
  Carver c{static_cast<char*>(workspace)};
  const Plan::Ws ws = pl.carve(c);
  const int V = pl.V, T = pl.T;
  const int64_t pairs = int64_t(s.n) * pl.nbands, pq = int64_t(s.p) * s.q;
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    for (int t = 0; t < T; ++t) ws.off[t] = int64_t(t) * pl.stride;
    float* rows = ws.rows + int64_t(omp_get_thread_num()) * T * pl.stride;
#pragma omp for schedule(static)
    for (int u = 0; u < pl.units; ++u) {
      float* part = ws.partial + u * pl.partial_elems();
      std::fill(part, part + pl.partial_elems(), 0.0f);
      for (int64_t pair = pairs * u / pl.units; pair < pairs * (u + 1) / pl.units; ++pair) {
        const int n = int(pair / pl.nbands), p0 = int(pair % pl.nbands) * pl.band, p1 = std::min(s.p, p0 + pl.band);
        pl.gather(src, n, p0, p1, rows);
        const int npix = (p1 - p0) * s.q, nchunks = ceil_div(npix, V), lanes = npix - (nchunks - 1) * V;
        // Every lane of the band's chunks but the last one's tail (dense: no mask table).
        const uint32_t tail = lanes >= 32 ? ~0u : (1u << lanes) - 1;
        for (int i = 0; i < pl.runs.count; ++i) {
          DwPlaneWgradArgs a{};
          a.in = rows;
          a.dd = diff_dst + int64_t(n) * s.k * pq + int64_t(p0) * s.q;
          a.out = part + pl.runs.begin(i);
          a.in_chan_stride = 0;
          a.dd_chan_stride = pq;
          a.in_image_stride = a.dd_image_stride = 0;
          a.channels = s.k;
          a.images = 1;
          a.out_stride = T;
          a.accumulate = true;
          a.dense = true;
          a.off = ws.off + pl.runs.begin(i);
          a.mask = nullptr;
          a.tail = tail;
          a.nt = pl.runs.size(i);
          a.nchunks = nchunks;
          pl.uk.plane_wgrad(a);
        }
      }
    }
    // The runs' copies added in run order; KCRS is (K, T) as the copies are.
#pragma omp for schedule(static)
    for (int64_t e = 0; e < pl.partial_elems(); ++e) {
      float sum = 0;
      for (int u = 0; u < pl.units; ++u) sum += ws.partial[u * pl.partial_elems() + e];
      diff_wei[e] = sum;
    }
  }
}

// FMA over whole chunks of each band; the plain tensors once, the gathered taps in cache.
CostPhases cost_phases(const ConvProblem& p, const ConvShape& s) {
  const Plan pl(s, cpu::depthwise::select_dw_ukernels());
  const double band_px = double(pl.band) * s.q;
  const double waste = std::ceil(band_px / pl.V) * pl.V / band_px;
  CostPhase plain{CostKind::copy, 4 * (double(p.src_elems()) + double(p.dst_elems()) + 2 * double(p.wei_elems()))};
  plain.footprint = plain.work;
  const CostPhase gathered{CostKind::copy_cached, 4 * double(pl.T) * double(s.n) * s.p * s.q};
  CostPhases c;
  c.phases = {{CostKind::fma, p.flops() * waste}, plain, gathered};
  c.what = cost_text("direct pixels in lanes x%.2f, %g-row bands", waste, pl.band);
  return c;
}

}  // namespace direct_pix_wgrad
}  // namespace convlab
