// The FFT convolution composition shared by cpu.fft, cpu.fft_tiled and
// cpu.fft_fftw (see fft.hpp). Three phases, each an OpenMP static loop:
//   1. forward transforms of 16-signal blocks (activations, filters or dy),
//      written frequency-major: spectrum[f][block][re|im][16]
//   2. for every frequency f and group g: pack A, one complex GEMM
//   3. inverse transform of every output block, scaled by 1/(Th*Tw), scattered
// Every job (one 16-lane transform block, one frequency's GEMMs) is computed
// whole by one thread with a fixed operation order, and no sum crosses jobs, so
// the result does not depend on which thread runs which job: bit-identical run
// to run for any thread count. That lets the loops use dynamic scheduling,
// which balances the cheap (pruned filter) and full transform blocks and
// survives a core being busy with something else.
#include "algorithms/cpu/fft.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/stage_profile.hpp"
#include "kernels/cpu/fft/fft.hpp"

namespace convlab {

namespace {

constexpr int V = cpu::fft::kLanes;
constexpr ptrdiff_t kV2 = 2 * V;  // floats of one complex 16-lane element

size_t round16(size_t n) { return (n + 15) / 16 * 16; }
int ceil_div(int a, int b) { return (a + b - 1) / b; }

// ---- sizes, layouts -------------------------------------------------------------

int max_threads() { return std::max(1, cpu_info().hardware_threads); }

// The per-problem numbers every phase uses. Spectra (frequency-major):
//   a: the first transformed input   fwd x, bwd-data dy, bwd-filter x
//   b: the second                    fwd w, bwd-data w, bwd-filter dy
//   c: the GEMM output               fwd y, bwd-data dx, bwd-filter dw
// each f-th frequency a contiguous (blocks, 2, 16) slab of fs_* floats.
struct Layout {
  FftGeometry geo;
  int g, cg, kg, cb, kb;  // groups, channels per group, 16-lane blocks per group
  int tiles, msig;        // tiles per image, N * tiles (GEMM rows of the activations)
  int wc;
  int64_t freqs;
  ptrdiff_t fs_a, fs_b, fs_c;
  int64_t blocks_a, blocks_b, blocks_c;
  int gemm_m, gemm_l;
  size_t frame_floats, scratch_floats, packed_floats, per_thread_floats;
  size_t spectra_floats;
};

Layout make_layout(const ConvProblem& p, Direction dir, const FftGeometry& geo, const FftEngine& engine) {
  Layout L;
  L.geo = geo;
  L.g = p.groups;
  L.cg = p.c_per_group();
  L.kg = p.k_per_group();
  L.cb = ceil_div(L.cg, V);
  L.kb = ceil_div(L.kg, V);
  L.tiles = geo.h.tiles * geo.w.tiles;
  L.msig = p.n * L.tiles;
  L.wc = geo.w.t / 2 + 1;
  L.freqs = int64_t(geo.h.t) * L.wc;
  const ptrdiff_t act_c = ptrdiff_t(L.msig) * L.g * L.cb * kV2;  // (msig, g, cb, 2, 16)
  const ptrdiff_t act_k = ptrdiff_t(L.msig) * L.g * L.kb * kV2;  // (msig, g, kb, 2, 16)
  const ptrdiff_t wei_ck = ptrdiff_t(L.g) * L.cg * L.kb * kV2;   // (g, c, kb, 2, 16)
  const ptrdiff_t wei_kc = ptrdiff_t(L.g) * L.kg * L.cb * kV2;   // (g, k, cb, 2, 16)
  switch (dir) {
    case Direction::fwd:
      L.fs_a = act_c; L.fs_b = wei_ck; L.fs_c = act_k;
      L.gemm_m = L.msig; L.gemm_l = L.cg;
      break;
    case Direction::bwd_data:
      L.fs_a = act_k; L.fs_b = wei_kc; L.fs_c = act_c;
      L.gemm_m = L.msig; L.gemm_l = L.kg;
      break;
    case Direction::bwd_filter:
      L.fs_a = act_c; L.fs_b = act_k; L.fs_c = wei_kc;
      L.gemm_m = L.kg; L.gemm_l = L.msig;
      break;
  }
  L.blocks_a = L.fs_a / kV2;
  L.blocks_b = L.fs_b / kV2;
  L.blocks_c = L.fs_c / kV2;
  L.frame_floats = round16(size_t(geo.h.t) * geo.w.t * V);
  L.scratch_floats = round16(engine.scratch_floats(geo.h.t, geo.w.t));
  L.packed_floats = round16(cpu::fft::packed_a_floats(L.gemm_m, L.gemm_l));
  L.per_thread_floats = L.frame_floats + std::max(L.scratch_floats, L.packed_floats);
  L.spectra_floats = size_t(L.freqs) * size_t(L.fs_a + L.fs_b + L.fs_c);
  return L;
}

// ---- gathers and scatters -------------------------------------------------------

// Fill the (th, tw, 16) frame with lane l = plane(l)[y0 + j][x0 + i] for
// j < cnt_h, i < cnt_w inside the plane (zero elsewhere). planes[l] == nullptr:
// a padding lane (zeros). Returns the non-zero row range through rb, re; rows
// outside it are zeroed only when zero_all (an engine that reads every row).
void gather(float* frame, int th, int tw, const float* const* planes, int ph, int pw, int y0, int x0, int cnt_h,
            int cnt_w, bool zero_all, int& rb, int& re) {
  rb = std::max(0, -y0);
  re = std::min(std::min(cnt_h, th), ph - y0);
  const int cb = std::max(0, -x0), ce = std::min(std::min(cnt_w, tw), pw - x0);
  if (re <= rb || ce <= cb) rb = re = 0;
  if (zero_all)
    std::memset(frame, 0, sizeof(float) * size_t(th) * tw * V);
  else
    std::memset(frame + ptrdiff_t(rb) * tw * V, 0, sizeof(float) * size_t(re - rb) * tw * V);
  if (re <= rb) return;
  for (int l = 0; l < V; ++l) {
    const float* src = planes[l];
    if (!src) continue;
    for (int j = rb; j < re; ++j) {
      const float* row = src + ptrdiff_t(y0 + j) * pw + x0;
      float* f = frame + (ptrdiff_t(j) * tw) * V + l;  // (th, tw, 16)
      for (int i = cb; i < ce; ++i) f[i * V] = row[i];
    }
  }
}

// plane(l)[y0 + j][x0 + i] = scale * frame[j + zh][i + zw][l] for j < cnt_h, i < cnt_w.
void scatter(const float* frame, int tw, float* const* planes, int pw, int y0, int x0, int cnt_h, int cnt_w, int zh,
             int zw, float scale) {
  for (int l = 0; l < V; ++l) {
    float* dst = planes[l];
    if (!dst) continue;
    for (int j = 0; j < cnt_h; ++j) {
      float* row = dst + ptrdiff_t(y0 + j) * pw + x0;
      const float* f = frame + (ptrdiff_t(j + zh) * tw + zw) * V + l;
      for (int i = 0; i < cnt_w; ++i) row[i] = scale * f[i * V];
    }
  }
}

// Lanes of an activation block: channels [base + blk*16, ...) of image n, at
// most `per` channels in the group. Planes are (Hs, Ws).
template <typename T>
void act_planes(T* tensor, int n, int ctot, int g, int per, int blk, int hs, int ws, T** planes) {
  for (int l = 0; l < V; ++l) {
    const int c = blk * V + l;
    planes[l] = c < per ? tensor + (ptrdiff_t(n) * ctot + ptrdiff_t(g) * per + c) * hs * ws : nullptr;
  }
}

}  // namespace

// ---- geometry -----------------------------------------------------------------

namespace {
int out_len(const ConvProblem& p, Direction dir, bool h) {
  if (dir == Direction::bwd_data) return h ? p.h : p.w;
  return h ? p.p() : p.q();
}
}  // namespace

FftGeometry whole_image_geometry(const ConvProblem& p, Direction dir) {
  auto axis = [&](int in, int pad, int pad_end, int out, int r, int len) {
    FftAxis a;
    // No aliasing in any direction when L >= max(in + pad, in + pad_end, out, r)
    // (the circular wrap lands in the zero padding: the frame holds the image
    // after `pad` zeros, and an output's window that runs past the frame's end
    // wraps into them); see cpu.fft in docs/algorithms.md.
    a.t = cpu::fft::next_smooth(std::max({in + pad, in + pad_end, out, r}));
    a.step = len;
    a.tiles = 1;
    a.bd_shift = 0;
    a.bd_zoff = pad;
    return a;
  };
  FftGeometry g;
  g.h = axis(p.h, p.pad_h, p.pad_h_end, p.p(), p.r, out_len(p, dir, true));
  g.w = axis(p.w, p.pad_w, p.pad_w_end, p.q(), p.s, out_len(p, dir, false));
  return g;
}

FftGeometry tiled_geometry(const ConvProblem& p, Direction dir) {
  auto axis = [&](int t, int r, int pad, int len) {
    FftAxis a;
    a.t = t;
    a.step = t - r + 1;
    a.tiles = ceil_div(len, a.step);
    a.bd_shift = pad - r + 1;
    a.bd_zoff = r - 1;
    return a;
  };
  // Cost model (flops): per-frequency complex GEMM, 8 flops per complex MAC,
  // plus the transforms at ~2.5 T^2 log2 T^2 each, weighted x2 because they
  // run at a lower fraction of peak than the GEMM.
  const double n = p.n, k = p.k, c = p.c, cg = p.c_per_group();
  FftGeometry best;
  double best_cost = 0;
  for (int th : {8, 12, 16, 20, 24, 32, 48, 64}) {
    if (th < p.r) continue;
    for (int tw : {8, 12, 16, 20, 24, 32, 48, 64}) {
      if (tw < p.s) continue;
      FftGeometry g;
      g.h = axis(th, p.r, p.pad_h, out_len(p, dir, true));
      g.w = axis(tw, p.s, p.pad_w, out_len(p, dir, false));
      const double tiles = double(g.h.tiles) * g.w.tiles;
      const double freqs = double(th) * (tw / 2 + 1);
      const double gemm = 8.0 * freqs * n * tiles * k * cg;
      const double transforms = (n * tiles * (c + k) + k * cg) * 2.5 * th * tw * std::log2(double(th) * tw) * 2;
      const double cost = gemm + transforms;
      if (best.h.t == 0 || cost < best_cost) {
        best = g;
        best_cost = cost;
      }
    }
  }
  return best;
}

// ---- the algorithm ------------------------------------------------------------

Support FftConvolution::supports(const ConvProblem& p, Direction dir) const {
  (void)dir;
  if (p.stride_h != 1 || p.stride_w != 1)
    return Support::no("FFT convolution needs stride 1 (got " + std::to_string(p.stride_h) + "x" +
                       std::to_string(p.stride_w) + ")");
  if (p.dil_h != 1 || p.dil_w != 1) return Support::no("FFT convolution needs dilation 1 (dense filters)");
  const FftGeometry g = geometry(p, dir);
  if (g.h.t > 512 || g.w.t > 512)
    return Support::no("transform " + std::to_string(g.h.t) + "x" + std::to_string(g.w.t) +
                       " too large (max 512): use cpu.fft_tiled");
  // Whole-image spectra of every filter grow with the image (VGG conv1_2 at
  // 225x225: ~1.7 GB at batch 32); refuse rather than thrash.
  const size_t ws = workspace_bytes(p, dir);
  if (ws > (size_t(8) << 30))
    return Support::no("needs " + std::to_string(ws >> 30) + " GiB of spectra workspace (limit 8 GiB)");
  return Support::yes();
}

size_t FftConvolution::workspace_bytes(const ConvProblem& p, Direction dir) const {
  const Layout L = make_layout(p, dir, geometry(p, dir), engine_);
  return sizeof(float) * (L.spectra_floats + size_t(max_threads()) * L.per_thread_floats);
}

// Measured (tests/algorithms/cpu/fft_test.cpp, CpuFft.MeasureAccuracy with
// CONVLAB_FFT_MEASURE=1: AlexNet + AlexNet-OWT stride-1 layers at batch 2 and 60
// random stride-1 problems, uniform [-1, 1) data, AVX-512 build): the largest
// max|y - ref| / max_i sum|terms|_i over all three algorithms and directions
// was 2.16e-7 = 1.81 eps (cpu.fft bwd-data; cpu.fft_tiled 1.49 eps, cpu.fft_fftw
// 1.64 eps). FFT rounding error spreads over all outputs and grows like
// log2(transform size); declared bound: global = 8 eps (x4.4 the measurement,
// headroom for transforms up to ~16x larger than AlexNet's), elem = 0.
Tolerance FftConvolution::tolerance(const ConvProblem& p, Direction dir) const {
  (void)p;
  (void)dir;
  return {0.0, 8 * double(FLT_EPSILON), "FFT: measured max|err|/max|terms| 1.81 eps, declared 8 eps (global)"};
}

namespace {

// One run: its problem, direction, tensors, geometry, layout, engine plan and
// workspace (the three spectra, then a frame and scratch per thread).
struct FftRun {
  const ConvProblem& p;
  Direction dir;
  const ConvBuffers& buf;
  const FftGeometry& geo;
  const Layout& L;
  const FftEngine& engine;
  const void* plan;
  bool zero_all;
  int nthr;
  float *spec_a, *spec_b, *spec_c, *thread_base;
  float* frame_of(int t) const { return thread_base + size_t(t) * L.per_thread_floats; }
  float* scratch_of(int t) const { return frame_of(t) + L.frame_floats; }
};

// Phase 1: forward transforms of the a and b blocks.
void forward_transforms(const FftRun& r) {
  const ConvProblem& p = r.p;
  const Direction dir = r.dir;
  const ConvBuffers& buf = r.buf;
  const FftGeometry& geo = r.geo;
  const Layout& L = r.L;
  const int th = geo.h.t, tw = geo.w.t, tiles_w = geo.w.tiles;
  const int G = L.g, Cg = L.cg, Kg = L.kg, CB = L.cb, KB = L.kb;
  const int R = p.r, S = p.s, H = p.h, W = p.w, P = p.p(), Q = p.q();
  // Activation block m = (n, tile), g, blk of a tensor (N, G*per, ph, pw): the
  // transform patch origin and extent per direction / role.
  struct Patch {
    int y0, x0, cnt_h, cnt_w;
  };
  auto x_patch = [&](int tile) {  // x in fwd / bwd-filter
    const int ty = tile / tiles_w, tx = tile % tiles_w;
    return Patch{ty * geo.h.step - p.pad_h, tx * geo.w.step - p.pad_w, th, tw};
  };
  auto dy_patch_bd = [&](int tile) {  // dy in bwd-data
    const int ty = tile / tiles_w, tx = tile % tiles_w;
    return Patch{ty * geo.h.step + geo.h.bd_shift, tx * geo.w.step + geo.w.bd_shift, th, tw};
  };
  auto dy_patch_bf = [&](int tile) {  // dy in bwd-filter: the tile's outputs only
    const int ty = tile / tiles_w, tx = tile % tiles_w;
    return Patch{ty * geo.h.step, tx * geo.w.step, geo.h.step, geo.w.step};
  };

  const int64_t jobs1 = L.blocks_a + L.blocks_b;
#pragma omp parallel for schedule(dynamic, 4) num_threads(r.nthr)
  for (int64_t job = 0; job < jobs1; ++job) {
    const int t = omp_get_thread_num();
    float* frame = r.frame_of(t);
    const float* planes[V];
    int rb = 0, re = 0;
    float* out = nullptr;
    ptrdiff_t fstride = 0;
    if (job < L.blocks_a) {
      // (msig, g, blk) with blk over cb (x) or kb (dy in bwd-data)
      const bool is_dy = dir == Direction::bwd_data;
      const int nblk = is_dy ? KB : CB;
      const int blk = int(job % nblk), g = int(job / nblk % G), m = int(job / nblk / G);
      const int n = m / L.tiles, tile = m % L.tiles;
      if (is_dy) {
        act_planes<const float>(buf.dst, n, p.k, g, Kg, blk, P, Q, planes);
        const Patch pt = dy_patch_bd(tile);
        gather(frame, th, tw, planes, P, Q, pt.y0, pt.x0, pt.cnt_h, pt.cnt_w, r.zero_all, rb, re);
      } else {
        act_planes<const float>(buf.src, n, p.c, g, Cg, blk, H, W, planes);
        const Patch pt = x_patch(tile);
        gather(frame, th, tw, planes, H, W, pt.y0, pt.x0, pt.cnt_h, pt.cnt_w, r.zero_all, rb, re);
      }
      out = r.spec_a + job * kV2;
      fstride = L.fs_a;
    } else {
      const int64_t jb = job - L.blocks_a;
      if (dir == Direction::bwd_filter) {  // dy blocks (msig, g, kb)
        const int blk = int(jb % KB), g = int(jb / KB % G), m = int(jb / KB / G);
        const int n = m / L.tiles, tile = m % L.tiles;
        act_planes<const float>(buf.dst, n, p.k, g, Kg, blk, P, Q, planes);
        const Patch pt = dy_patch_bf(tile);
        gather(frame, th, tw, planes, P, Q, pt.y0, pt.x0, pt.cnt_h, pt.cnt_w, r.zero_all, rb, re);
      } else {
        // Filters: fwd (g, c, kb) lanes over k; bwd-data (g, k, cb) lanes over c.
        const int rs = R * S;
        if (dir == Direction::fwd) {
          const int blk = int(jb % KB), c = int(jb / KB % Cg), g = int(jb / KB / Cg);
          for (int l = 0; l < V; ++l) {
            const int k = blk * V + l;
            planes[l] = k < Kg ? buf.wei + (ptrdiff_t(g * Kg + k) * Cg + c) * rs : nullptr;
          }
        } else {
          const int blk = int(jb % CB), k = int(jb / CB % Kg), g = int(jb / CB / Kg);
          for (int l = 0; l < V; ++l) {
            const int c = blk * V + l;
            planes[l] = c < Cg ? buf.wei + (ptrdiff_t(g * Kg + k) * Cg + c) * rs : nullptr;
          }
        }
        gather(frame, th, tw, planes, R, S, 0, 0, R, S, r.zero_all, rb, re);
      }
      out = r.spec_b + jb * kV2;
      fstride = L.fs_b;
    }
    r.engine.forward(r.plan, frame, rb, re, out, fstride, r.scratch_of(t));
  }
}

// Phase 2: one complex GEMM per (frequency, group).
void pointwise_products(const FftRun& r) {
  const Direction dir = r.dir;
  const Layout& L = r.L;
  const int G = L.g, Cg = L.cg, Kg = L.kg, CB = L.cb, KB = L.kb;
#pragma omp parallel for schedule(dynamic, 4) num_threads(r.nthr)
  for (int64_t f = 0; f < L.freqs; ++f) {
    float* packed = r.scratch_of(omp_get_thread_num());
    const float* a = r.spec_a + f * L.fs_a;
    const float* b = r.spec_b + f * L.fs_b;
    float* c = r.spec_c + f * L.fs_c;
    for (int g = 0; g < G; ++g) {
      switch (dir) {
        case Direction::fwd: {  // Y(m, k) = sum_c X(m, c) conj(W(c, k))
          const ptrdiff_t ib = ptrdiff_t(G) * CB * kV2;
          cpu::fft::pack_a(L.gemm_m, L.gemm_l, a + g * CB * kV2, V * ib, ib, kV2, 1, false, packed);
          cpu::fft::cgemm(L.gemm_m, KB, L.gemm_l, packed, b + ptrdiff_t(g) * Cg * KB * kV2, KB * kV2, c + g * KB * kV2,
                     ptrdiff_t(G) * KB * kV2, true);
          break;
        }
        case Direction::bwd_data: {  // DX(m, c) = sum_k DY(m, k) W(k, c)
          const ptrdiff_t ib = ptrdiff_t(G) * KB * kV2;
          cpu::fft::pack_a(L.gemm_m, L.gemm_l, a + g * KB * kV2, V * ib, ib, kV2, 1, false, packed);
          cpu::fft::cgemm(L.gemm_m, CB, L.gemm_l, packed, b + ptrdiff_t(g) * Kg * CB * kV2, CB * kV2, c + g * CB * kV2,
                     ptrdiff_t(G) * CB * kV2, false);
          break;
        }
        case Direction::bwd_filter: {  // DW(k, c) = sum_m conj(DY(m, k)) X(m, c)
          const ptrdiff_t lb = ptrdiff_t(G) * KB * kV2;
          cpu::fft::pack_a(L.gemm_m, L.gemm_l, b + g * KB * kV2, kV2, 1, V * lb, lb, true, packed);
          cpu::fft::cgemm(L.gemm_m, CB, L.gemm_l, packed, a + g * CB * kV2, ptrdiff_t(G) * CB * kV2,
                     c + ptrdiff_t(g) * Kg * CB * kV2, CB * kV2, false);
          break;
        }
      }
    }
  }

}

// Phase 3: inverse transforms and scatter.
void inverse_transforms(const FftRun& r) {
  const ConvProblem& p = r.p;
  const Direction dir = r.dir;
  const ConvBuffers& buf = r.buf;
  const FftGeometry& geo = r.geo;
  const Layout& L = r.L;
  const int th = geo.h.t, tw = geo.w.t, tiles_w = geo.w.tiles;
  const int G = L.g, Cg = L.cg, Kg = L.kg, CB = L.cb, KB = L.kb;
  const int R = p.r, S = p.s, H = p.h, W = p.w, P = p.p(), Q = p.q();
  const float scale = 1.0f / float(th * tw);
#pragma omp parallel for schedule(dynamic, 4) num_threads(r.nthr)
  for (int64_t job = 0; job < L.blocks_c; ++job) {
    const int t = omp_get_thread_num();
    float* frame = r.frame_of(t);
    float* planes[V];
    const float* in = r.spec_c + job * kV2;
    switch (dir) {
      case Direction::fwd: {  // (msig, g, kb) -> y
        const int blk = int(job % KB), g = int(job / KB % G), m = int(job / KB / G);
        const int n = m / L.tiles, tile = m % L.tiles, ty = tile / tiles_w, tx = tile % tiles_w;
        const int y0 = ty * geo.h.step, x0 = tx * geo.w.step;
        const int ch = std::min(geo.h.step, P - y0), cw = std::min(geo.w.step, Q - x0);
        r.engine.inverse(r.plan, in, L.fs_c, 0, ch, frame, r.scratch_of(t));
        act_planes<float>(buf.dst, n, p.k, g, Kg, blk, P, Q, planes);
        scatter(frame, tw, planes, Q, y0, x0, ch, cw, 0, 0, scale);
        break;
      }
      case Direction::bwd_data: {  // (msig, g, cb) -> dx
        const int blk = int(job % CB), g = int(job / CB % G), m = int(job / CB / G);
        const int n = m / L.tiles, tile = m % L.tiles, ty = tile / tiles_w, tx = tile % tiles_w;
        const int y0 = ty * geo.h.step, x0 = tx * geo.w.step;
        const int ch = std::min(geo.h.step, H - y0), cw = std::min(geo.w.step, W - x0);
        r.engine.inverse(r.plan, in, L.fs_c, geo.h.bd_zoff, geo.h.bd_zoff + ch, frame, r.scratch_of(t));
        act_planes<float>(buf.src, n, p.c, g, Cg, blk, H, W, planes);
        scatter(frame, tw, planes, W, y0, x0, ch, cw, geo.h.bd_zoff, geo.w.bd_zoff, scale);
        break;
      }
      case Direction::bwd_filter: {  // (g, k, cb) -> dw
        const int blk = int(job % CB), k = int(job / CB % Kg), g = int(job / CB / Kg);
        r.engine.inverse(r.plan, in, L.fs_c, 0, R, frame, r.scratch_of(t));
        for (int l = 0; l < V; ++l) {
          const int c = blk * V + l;
          planes[l] = c < Cg ? buf.wei + (ptrdiff_t(g * Kg + k) * Cg + c) * R * S : nullptr;
        }
        scatter(frame, tw, planes, S, 0, 0, R, S, 0, 0, scale);
        break;
      }
    }
  }
}

}  // namespace

void FftConvolution::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                         const ExecContext& ctx) const {
  const FftGeometry geo = geometry(p, dir);
  const Layout L = make_layout(p, dir, geo, engine_);
  const int th = geo.h.t, tw = geo.w.t;
  float* ws = static_cast<float*>(workspace);
  float* spec_a = ws;
  float* spec_b = spec_a + L.freqs * L.fs_a;
  float* spec_c = spec_b + L.freqs * L.fs_b;
  const FftRun r{p, dir, buf, geo, L, engine_, engine_.prepare(th, tw), !engine_.prunes_rows(),
                 std::min(ctx.resolved_threads(), max_threads()), spec_a, spec_b, spec_c, spec_c + L.freqs * L.fs_c};

  // Stage accounting (core/stage_profile.hpp): a transform of 16 lanes is 16
  // real th x tw FFTs at 2.5 N log2 N; a frequency's GEMMs 8 flops per complex
  // multiply-add over msig x Cg x Kg per group; bytes: the tensors read or
  // written once plus the spectra written and read.
  StageClock clock(ctx.profile);
  const double fft_flops = 2.5 * double(th) * tw * std::log2(double(th) * tw) * V;
  const double spec_a_bytes = 4.0 * double(L.freqs) * double(L.fs_a), spec_b_bytes = 4.0 * double(L.freqs) * double(L.fs_b),
               spec_c_bytes = 4.0 * double(L.freqs) * double(L.fs_c);
  const double src_b = 4.0 * double(p.src_elems()), wei_b = 4.0 * double(p.wei_elems()), dst_b = 4.0 * double(p.dst_elems());
  const double in_bytes = dir == Direction::fwd ? src_b + wei_b : dir == Direction::bwd_data ? dst_b + wei_b : src_b + dst_b;
  const double out_bytes = dir == Direction::fwd ? dst_b : dir == Direction::bwd_data ? src_b : wei_b;

  forward_transforms(r);
  clock.lap("forward transforms", StageKind::memory, fft_flops * double(L.blocks_a + L.blocks_b),
            in_bytes + spec_a_bytes + spec_b_bytes);
  pointwise_products(r);
  clock.lap("complex GEMM", StageKind::compute, 8.0 * double(L.freqs) * L.g * double(L.msig) * L.cg * L.kg,
            spec_a_bytes + spec_b_bytes + spec_c_bytes);
  inverse_transforms(r);
  clock.lap("inverse transforms", StageKind::memory, fft_flops * double(L.blocks_c), spec_c_bytes + out_bytes);
}

}  // namespace convlab
