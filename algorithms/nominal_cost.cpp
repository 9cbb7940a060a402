#include "algorithms/cost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/device.hpp"

namespace convlab {

namespace {

double pow2_at_least(double x) {
  double p = 1;
  while (p < x) p *= 2;
  return p;
}

// The output plane the algorithm produces tiles of: dst for fwd, src for bwd-data;
// bwd-filter reduces over the dst plane, so it tiles that one too.
void out_plane(const ConvProblem& p, Direction dir, double& oh, double& ow) {
  oh = dir == Direction::bwd_data ? p.h : p.p();
  ow = dir == Direction::bwd_data ? p.w : p.q();
}

// Fractions of peak each family reaches on its main arithmetic and on its
// transforms: uncalibrated priors, deliberately round. Calibration corrects them.
constexpr double kGemm = 0.70, kImplicitGemm = 0.60, kDirect = 0.35, kWinograd = 0.60, kFft = 0.50,
                 kTransform = 0.15;

}  // namespace

std::string cost_text(const char* f, double a, double b, double c, double d) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

double ceil_to(double x, double q) { return std::ceil(x / q) * q; }

int cpu_direct_lanes() { return cpu_info().isa() == "avx512" ? 16 : 8; }

NominalCost nominal_flops(const ConvProblem& p, const char* family, double eff_main) {
  NominalCost c;
  c.main_flops = p.flops();
  c.eff_main = eff_main;
  c.eff_transform = 0;
  c.formula = std::string(family) + cost_text(": %.3g GFLOP", c.main_flops * 1e-9);
  return c;
}

NominalCost nominal_gemm(const ConvProblem& p) { return nominal_flops(p, "gemm", kGemm); }
NominalCost nominal_implicit_gemm(const ConvProblem& p) { return nominal_flops(p, "implicit_gemm", kImplicitGemm); }

NominalCost nominal_direct(const ConvProblem& p, Direction dir) {
  NominalCost c = nominal_flops(p, "direct", kDirect);
  c.lane_channels = dir == Direction::bwd_data ? double(p.c_per_group()) : double(p.k_per_group());
  return c;
}

NominalCost nominal_winograd(const ConvProblem& p, Direction dir, int mt) {
  NominalCost e;
  e.eff_main = kWinograd;
  e.eff_transform = kTransform;
  const double N = p.n, C = p.c, K = p.k, Cg = p.c_per_group(), R = p.r, S = p.s;
  const double r = std::max(R, S), al = mt + r - 1;
  double oh, ow;
  out_plane(p, dir, oh, ow);
  const double T = N * std::ceil(oh / mt) * std::ceil(ow / mt);
  e.main_flops = 2 * al * al * T * C * K / p.groups;
  e.transform_flops =
      T * C * 4 * al * al * al + T * K * 2 * (al * al * mt + al * mt * mt) + K * Cg * 2 * (al * r * r + al * al * r);
  e.formula = cost_text("winograd F(%gx%g): %.3g GFLOP batched GEMM + %.3g GFLOP transforms", mt, r,
                        e.main_flops * 1e-9, e.transform_flops * 1e-9);
  return e;
}

NominalCost nominal_fft(const ConvProblem& p, Direction dir, int t) {
  NominalCost e;
  e.eff_main = kFft;
  e.eff_transform = kTransform;
  const double N = p.n, C = p.c, K = p.k, Cg = p.c_per_group(), R = p.r, S = p.s;
  const double planes_in = N * C, planes_w = K * Cg, planes_out = N * K;
  if (t > int(std::max(R, S))) {
    // Tiled: t x t transforms, each yielding (t - R + 1) x (t - S + 1) outputs.
    double oh, ow;
    out_plane(p, dir, oh, ow);
    const double tiles = std::ceil(oh / (t - R + 1)) * std::ceil(ow / (t - S + 1));
    const double L = double(t) * t, bins = t * (t / 2 + 1.0);
    e.main_flops = 8 * bins * tiles * N * K * Cg;
    e.transform_flops = ((planes_in + planes_out) * tiles + planes_w) * 2.5 * L * std::log2(L);
    e.formula = cost_text("fft tiled %gx%g: %.3g GFLOP pointwise + %.3g GFLOP transforms", t, t,
                          e.main_flops * 1e-9, e.transform_flops * 1e-9);
  } else {
    const double lh = pow2_at_least(p.h + p.pad_h + double(std::max(p.pad_h, p.pad_h_end))),
                 lw = pow2_at_least(p.w + p.pad_w + double(std::max(p.pad_w, p.pad_w_end)));
    const double L = lh * lw, bins = lh * (lw / 2 + 1);
    e.main_flops = 8 * bins * N * K * Cg;
    e.transform_flops = (planes_in + planes_w + planes_out) * 2.5 * L * std::log2(L);
    e.formula = cost_text("fft %gx%g: %.3g GFLOP pointwise + %.3g GFLOP transforms", lh, lw,
                          e.main_flops * 1e-9, e.transform_flops * 1e-9);
  }
  return e;
}

NominalCost nominal_of_family(const ConvProblem& p, Direction dir, std::string_view family, int winograd_tile) {
  if (family == "gemm") return nominal_gemm(p);
  if (family == "implicit_gemm") return nominal_implicit_gemm(p);
  if (family == "direct") return nominal_direct(p, dir);
  if (family == "winograd") return nominal_winograd(p, dir, winograd_tile);
  if (family == "fft") return nominal_fft(p, dir);
  NominalCost c = nominal_flops(p, std::string(family).c_str(), 0.20);
  c.eff_transform = 0.10;
  return c;
}

}  // namespace convlab
