// cpu.direct_depthwise's plane path (see direct_depthwise_plane.hpp).
#include "algorithms/cpu/direct_depthwise_plane.hpp"

#include <omp.h>

#include "algorithms/cpu/direct_depthwise.hpp"
#include "algorithms/cpu/direct_plan.hpp"

namespace convlab {

namespace {
bool g_plane_path = true;  // tests: set_depthwise_plane_path
}  // namespace

void set_depthwise_plane_path(bool on) { g_plane_path = on; }

namespace dw_plane {

namespace {

using cpu::depthwise::DwPlaneArgs;
using cpu::depthwise::DwPlaneWgradArgs;
using cpu::depthwise::DwUkernels;
using direct_plan::Carver;
using direct_plan::ceil_div;

struct Tables {
  float* wflip;    // (C, RS) the filter reversed (flip)
  int64_t* off;    // (RS) tap (r, s) reads pixel i + off
  uint32_t* mask;  // (RS, nchunks) the lanes it reads
};

struct Geometry {
  int V, RS, npix, nchunks;
  Geometry(const ConvShape& s, const DwUkernels& uk)
      : V(uk.v), RS(s.r * s.s), npix(s.h * s.w), nchunks(ceil_div(s.h * s.w, uk.v)) {}
  uint32_t tail() const {  // the last chunk's lanes
    const int lanes = npix - (nchunks - 1) * V;
    return lanes >= 32 ? ~0u : (1u << lanes) - 1;
  }
  Tables carve(Carver& c, const ConvShape& s, bool flip) const {
    Tables t;
    t.wflip = c.take<float>(flip ? int64_t(s.c) * RS : 0);
    t.off = c.take<int64_t>(RS);
    t.mask = c.take<uint32_t>(int64_t(RS) * nchunks);
    return t;
  }
  // Lane l of chunk k of tap (r, s): output pixel kV + l and the pixel it reads both in the image.
  void prepare(const ConvShape& s, const float* wei, bool flip, const Tables& t) const {
    for (int c = 0; c < (flip ? s.c : 0); ++c)
      for (int i = 0; i < RS; ++i) t.wflip[int64_t(c) * RS + i] = wei[int64_t(c) * RS + RS - 1 - i];
    for (int r = 0; r < s.r; ++r)
      for (int q = 0; q < s.s; ++q) {
        const int dy = r * s.dil_h - s.pad_h, dx = q * s.dil_w - s.pad_w, tap = r * s.s + q;
        t.off[tap] = int64_t(dy) * s.w + dx;
        int y = 0, x = 0;
        for (int k = 0; k < nchunks; ++k) {
          uint32_t bits = 0;
          for (int l = 0; l < V && k * V + l < npix; ++l) {
            if (y + dy >= 0 && y + dy < s.h && x + dx >= 0 && x + dx < s.w) bits |= 1u << l;
            if (++x == s.w) x = 0, ++y;
          }
          t.mask[int64_t(tap) * nchunks + k] = bits;
        }
      }
  }
};

}  // namespace

bool applies(const ConvShape& s, const DwUkernels& uk) {
  const Geometry g(s, uk);
  return g_plane_path && s.stride_h == 1 && s.stride_w == 1 && s.p == s.h && s.q == s.w &&
         int64_t(g.RS) * g.nchunks <= cpu::depthwise::kPlaneMaxMasks;
}

size_t workspace_bytes(const ConvShape& s, const DwUkernels& uk, bool flip) {
  Carver c{nullptr};
  Geometry(s, uk).carve(c, s, flip);
  return c.used;
}

void forward(const ConvShape& s, const DwUkernels& uk, bool flip, const float* in, const float* wei, float* out,
             void* workspace, int threads) {
  const Geometry g(s, uk);
  Carver c{static_cast<char*>(workspace)};
  const Tables t = g.carve(c, s, flip);
  const int64_t planes = int64_t(s.n) * s.c, hw = g.npix;
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    g.prepare(s, wei, flip, t);
    int64_t b, e;
    cpu::direct::share(planes, omp_get_thread_num(), omp_get_num_threads(), b, e);
    DwPlaneArgs a{};
    a.in = in + b * hw;
    a.out = out + b * hw;
    a.wei = flip ? t.wflip : wei;
    a.in_plane = a.out_plane = hw;
    a.planes = int(e - b);
    a.c0 = int(b % s.c);
    a.cycle = s.c;
    a.wei_stride = g.RS;
    a.off = t.off;
    a.mask = t.mask;
    a.tail = g.tail();
    a.ntaps = g.RS;
    a.nchunks = g.nchunks;
    if (a.planes > 0) uk.plane(a);
  }
}

void wgrad(const ConvShape& s, const DwUkernels& uk, const float* src, const float* diff_dst, float* diff_wei,
           void* workspace, int threads) {
  const Geometry g(s, uk);
  Carver c{static_cast<char*>(workspace)};
  const Tables t = g.carve(c, s, false);
  const int64_t hw = g.npix;
  const direct_plan::Runs runs(g.RS, uk.max_nt);
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    g.prepare(s, nullptr, false, t);
    int64_t b, e;
    cpu::direct::share(s.c, omp_get_thread_num(), omp_get_num_threads(), b, e);
    for (int i = 0; i < runs.count && b < e; ++i) {
      DwPlaneWgradArgs a{};
      a.in = src + b * hw;
      a.dd = diff_dst + b * hw;
      a.out = diff_wei + b * g.RS + runs.begin(i);
      a.in_chan_stride = a.dd_chan_stride = hw;
      a.in_image_stride = a.dd_image_stride = int64_t(s.c) * hw;
      a.channels = int(e - b);
      a.images = s.n;
      a.out_stride = g.RS;
      a.off = t.off + runs.begin(i);
      a.mask = t.mask + int64_t(runs.begin(i)) * g.nchunks;
      a.tail = g.tail();
      a.nt = runs.size(i);
      a.nchunks = g.nchunks;
      uk.plane_wgrad(a);
    }
  }
}

// Every lane a pixel, the last chunk's padded lanes wasted; the plain tensors cross memory once.
CostPhases cost_phases(const ConvProblem& p, const ConvShape& s, const DwUkernels& uk) {
  const Geometry g(s, uk);
  const double waste = double(g.nchunks) * g.V / g.npix;
  CostPhase plain{CostKind::copy, 4 * (double(p.src_elems()) + double(p.dst_elems()) + 2 * double(p.wei_elems()))};
  plain.footprint = plain.work;
  CostPhases c;
  c.phases = {{CostKind::fma, p.flops() * waste}, plain};
  c.what = cost_text("depthwise pixels in lanes x%.2f", waste);
  return c;
}

}  // namespace dw_plane
}  // namespace convlab
