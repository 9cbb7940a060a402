#include "autotune/get.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "algorithms/cpu/fft.hpp"
#include "algorithms/cpu/im2col_gemm.hpp"
#include "algorithms/registry.hpp"
#include "autotune/find.hpp"
#include "core/error.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"
#ifdef CONVLAB_HAS_ONEDNN
#include "algorithms/cpu/onednn.hpp"
#endif

namespace convlab {

namespace {

// Fractions of peak each family reaches on its main arithmetic and on its
// transforms: uncalibrated priors, deliberately round. Calibration corrects them.
struct FamilyEff {
  const char* family;
  double main, transform;
};
constexpr FamilyEff kFamily[] = {
    {"gemm", 0.70, 0.0},  {"implicit_gemm", 0.60, 0.0}, {"direct", 0.35, 0.0},
    {"winograd", 0.60, 0.15}, {"fft", 0.50, 0.15},
};
constexpr FamilyEff kUnknownFamily = {"?", 0.20, 0.10};

FamilyEff family_eff(std::string_view family) {
  for (const auto& f : kFamily)
    if (family == f.family) return f;
  return kUnknownFamily;
}

// The first "<prefix><int>" in name, e.g. ("cpu.winograd_f4x3", "_f") -> 4; 0 if none.
int int_after(std::string_view name, std::string_view prefix) {
  for (size_t at = name.find(prefix); at != std::string_view::npos; at = name.find(prefix, at + 1)) {
    size_t i = at + prefix.size();
    int v = 0, digits = 0;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && digits < 6) v = v * 10 + (name[i++] - '0'), ++digits;
    if (digits) return v;
  }
  return 0;
}

double pow2_at_least(double x) {
  double p = 1;
  while (p < x) p *= 2;
  return p;
}

std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

// The output plane the algorithm produces tiles of: dst for fwd, src for bwd-data;
// bwd-filter reduces over the dst plane, so it tiles that one too.
void out_plane(const ConvProblem& p, Direction dir, double& oh, double& ow) {
  oh = dir == Direction::bwd_data ? p.h : p.p();
  ow = dir == Direction::bwd_data ? p.w : p.q();
}

}  // namespace

MachineModel MachineModel::for_context(const ExecContext& ctx) {
  MachineModel m;
  if (ctx.device == DeviceKind::cuda) {
    // Nominal: 128 fp32 lanes per SM at ~1.7 GHz, HBM-class bandwidth.
    const CudaInfo& g = cuda_info();
    m.peak_flops = std::max(1, g.sm_count) * 128.0 * 2 * 1.7e9;
    m.bandwidth = g.sm_count >= 100 ? 2.5e12 : 0.9e12;
    m.simd_lanes = 32;  // a warp
    return m;
  }
  const CpuInfo& c = cpu_info();
  double ghz = 2.5;  // "... @ 2.50GHz" in the model string when the CPU says so
  if (auto at = c.model.find('@'); at != std::string::npos) {
    const double v = std::atof(c.model.c_str() + at + 1);
    if (v > 0.5 && v < 7) ghz = v;
  }
  const std::string isa = c.isa();
  const double per_cycle = isa == "avx512" ? 64 : isa == "avx2" ? 32 : 8;  // 2 FMA pipes x lanes x 2
  const int threads = ctx.resolved_threads();
  m.threads = threads;
  m.peak_flops = threads * ghz * 1e9 * per_cycle;
  m.simd_lanes = isa == "avx512" ? 16 : isa == "avx2" ? 8 : 4;
  m.bandwidth = std::min(threads, 8) * 8e9;  // ~8 GB/s of streaming per core, saturating
  if ((m.probe = current_probe(device_fingerprint(DeviceKind::cpu, threads)))) {
    m.peak_flops = m.probe->rate("fma_gflops") * 1e9;
    m.bandwidth = m.probe->rate("copy_gbs") * 1e9;
  }
  return m;
}

// ---- the probed model (autotune/get.hpp, first half) ------------------------

namespace {

double ceil_to(double x, double q) { return std::ceil(x / q) * q; }

// The probe's kernel rates in SI units, and the plans' constants of this ISA.
struct Rates {
  double fma, copy, dram, uk, im2col, col2im, cgemm;  // flop/s, bytes/s
  double win_in[7]{}, win_out[7]{}, win_dst[7]{};  // (tile x channel) / s, by m
  double fft_alpha[2]{}, fft_beta[2]{};            // hand FFT per thread: s per (n log2 n), s per n; [0] fwd, [1] inv
  double fftw_ratio[2]{1, 1};                      // FFTW / hand at 32x32
  int threads, lanes, mr, nr;
  // All threads (the probe's kernel rates as measured), or one thread's share: compute rates /
  // threads, the one-thread copy rates (what the probe's one-thread algorithm runs relate to).
  explicit Rates(const MachineModel& m, bool one_thread = false) {
    const MachineProbe& pr = *m.probe;
    fma = pr.rate("fma_gflops") * 1e9;
    copy = pr.rate("copy_gbs") * 1e9;
    dram = pr.rate("dram_gbs") * 1e9;
    if (!(dram > 0)) dram = copy;
    uk = pr.rate("ukernel_gflops") * 1e9;
    im2col = pr.rate("im2col_gbs") * 1e9;
    col2im = pr.rate("col2im_gbs") * 1e9;
    cgemm = pr.rate("cgemm_gflops") * 1e9;
    for (int t : {2, 4, 6}) {
      const std::string w = "wino" + std::to_string(t) + "_";
      win_in[t] = pr.rate(w + "in_gtps") * 1e9;
      win_out[t] = pr.rate(w + "out_gtps") * 1e9;
      win_dst[t] = pr.rate(w + "dst_gtps") * 1e9;
    }
    for (int d = 0; d < 2; ++d) {
      const std::string k = d ? "inv" : "fwd";
      const double t16 = pr.rate("fft_" + k + "_16_us") * 1e-6, t32 = pr.rate("fft_" + k + "_32_us") * 1e-6;
      // t(n) = alpha n log2 n + beta n through (256, t16) and (1024, t32); both terms kept >= 0.
      double alpha = (t32 - 4 * t16) / 2048;
      if (alpha <= 0) alpha = 0;
      double beta = (t16 - 2048 * alpha) / 256;
      if (beta < 0) beta = 0, alpha = t32 / 10240;
      fft_alpha[d] = alpha;
      fft_beta[d] = beta;
      if (const double w32 = pr.rate("fftw_" + k + "_32_us"); w32 > 0 && t32 > 0) fftw_ratio[d] = w32 * 1e-6 / t32;
    }
    threads = std::max(1, m.threads);
    if (one_thread && threads > 1) {
      for (double* x : {&fma, &uk, &im2col, &col2im, &cgemm}) *x /= threads;
      for (int t : {2, 4, 6}) win_in[t] /= threads, win_out[t] /= threads, win_dst[t] /= threads;
      if (const double c1 = pr.rate("copy1_gbs") * 1e9; c1 > 0) copy = c1;
      if (const double d1 = pr.rate("dram1_gbs") * 1e9; d1 > 0) dram = d1;
      threads = 1;
    }
    lanes = int(m.simd_lanes) >= 16 ? 16 : 8;
    const cpu::SgemmUkernel& u = cpu::sgemm_ukernel(cpu::sgemm_resolve_isa(cpu::GemmIsa::auto_));
    mr = u.mr;
    nr = u.nr;
  }
  // Seconds to move `bytes` (read + written) of a working set of `footprint` bytes: the
  // cache-resident copy rate up to the copy probe's 32 MiB, the memory rate from 6x that,
  // in between a mix.
  double move(double bytes, double footprint) const {
    const double lo = 32.0 * (1 << 20), hi = 6 * lo;
    const double f = std::clamp((footprint - lo) / (hi - lo), 0.0, 1.0);
    return bytes * ((1 - f) / copy + f / dram);
  }
  // One 16-lane transform of n = lh*lw points, per thread (d: 0 fwd, 1 inv).
  double fft(int d, double n) const { return fft_alpha[d] * n * std::log2(std::max(n, 2.0)) + fft_beta[d] * n; }
};

// What the structures add up: seconds per kind of work, and a one-line account.
struct Phases {
  double compute = 0, transform = 0, copy = 0;
  std::string what;
  double total() const { return compute + transform + copy; }
};

enum class Kind { gemm, direct, direct_onednn, winograd, fft, generic };

struct Structure {
  Kind kind = Kind::generic;
  int tile = 4;                          // winograd m
  bool fftw = false;                     // fft through FFTW (no row pruning)
  const FftConvolution* fft = nullptr;   // the algorithm's own geometry, when it is one of ours
  std::string scale_algo;                // whose probe rate scales it ("" = none)
};

// ---- the structures ----

Phases gemm_phases(const ConvProblem& p, Direction dir, const Rates& r) {
  Phases ph;
  const Im2colGemmPlan pl = plan_im2col_gemm(p, dir);
  const Im2colGemmCall& g = pl.gemm;
  const double pq = double(p.p()) * p.q(), L = double(p.n) * pq;
  const double crs = double(p.c_per_group()) * p.r * p.s, kg = p.k_per_group();
  // Calls as if every chunk were full (the last one may be short): groups x N / nb.
  const double calls = double(p.groups) * p.n / std::max(1, pl.nb);
  ph.compute = calls * 2 * ceil_to(g.m, r.mr) * ceil_to(g.n, r.nr) * double(g.k) / r.uk;
  const double operands = 4 * (double(g.m) * g.k + double(g.k) * g.n);
  ph.copy = calls * r.move(2 * operands, operands);
  if (!pl.direct) {
    // The probed im2col / col2im rates are of a cache-resident column matrix; a chunk's bigger one
    // is also written to (im2col) or read from (col2im) memory.
    const double col_bytes = p.groups * crs * L * 4, chunk_col = double(pl.col_elems) * 4;
    ph.transform = dir == Direction::bwd_data ? col_bytes / r.col2im : col_bytes / r.im2col;
    ph.transform += r.move(col_bytes, chunk_col) - col_bytes / r.copy;
  }
  if (pl.nb > 1) ph.copy += p.groups * r.move(kg * L * 8, kg * pl.nb * pq * 8);
  ph.what = fmt("gemm %gx%gx%g x%.0f calls", g.m, g.n, g.k, calls);
  return ph;
}

Phases direct_phases(const ConvProblem& p, Direction dir, const Rates& r, bool onednn) {
  Phases ph;
  const double V = r.lanes, cg = p.c_per_group(), kg = p.k_per_group();
  double waste = std::ceil(kg / V) * V / kg;
  if (dir == Direction::bwd_data) {
    if (!onednn && 2 * cg < V) {
      const double row = std::ceil(double(p.w) / p.stride_w);  // pixels of one stride phase in a row
      waste = std::ceil(row / V) * V / row;
    } else {
      waste = std::ceil(cg / V) * V / cg;
    }
  }
  ph.compute = p.flops() * waste / r.fma;
  const double src = double(p.src_elems()), dst = double(p.dst_elems()), wei = double(p.wei_elems());
  const double padded = double(p.n) * p.c * double(p.padded_h64()) * double(p.padded_w64());
  const double bytes = dir == Direction::fwd        ? src + padded + 2 * dst + 2 * wei
                       : dir == Direction::bwd_data ? 2 * dst + 2 * src + 2 * wei
                                                    : src + padded + 2 * dst + 2 * wei;
  ph.copy = r.move(4 * bytes, 2 * bytes);
  ph.what = fmt("direct x%.2f lanes", waste);
  return ph;
}

Phases winograd_phases(const ConvProblem& p, Direction dir, const Rates& r, int m) {
  Phases ph;
  const double a2 = double(m + 2) * (m + 2);
  const double oh = dir == Direction::bwd_data ? p.h : p.p(), ow = dir == Direction::bwd_data ? p.w : p.q();
  const double T = double(p.n) * std::ceil(oh / m) * std::ceil(ow / m);
  const double kg = p.k_per_group(), cg = p.c_per_group(), G = p.groups;
  const int mi = std::clamp(m, 2, 6);
  const double rin = r.win_in[mi] > 0 ? r.win_in[mi] : r.win_in[4], rout = r.win_out[mi] > 0 ? r.win_out[mi] : r.win_out[4];
  const double rdst = r.win_dst[mi] > 0 ? r.win_dst[mi] : r.win_dst[4];
  if (dir == Direction::bwd_filter) {
    const double kp = ceil_to(kg, r.mr), cp = ceil_to(cg, r.nr), t16 = ceil_to(T, 16);
    ph.transform = G * (t16 * cp / rin + t16 * kp / rdst);
    ph.compute = G * 2 * a2 * kp * cp * t16 / r.uk;
    ph.copy = G * a2 * kp * cp * 8 / r.copy;
  } else {
    const double k_out = dir == Direction::fwd ? kg : cg, c_in = dir == Direction::fwd ? cg : kg;
    const double kp = ceil_to(k_out, r.mr), tp = ceil_to(T, r.nr);
    ph.transform = G * (tp * c_in / rin + ceil_to(T, 16) * k_out / rout);
    ph.compute = G * 2 * a2 * kp * c_in * tp / r.uk;
    ph.copy = G * a2 * kp * c_in * 8 / r.copy;
  }
  ph.what = fmt("winograd F(%gx%g,3x3) %.0f tiles", m, m, T);
  return ph;
}

// FFT geometry: the algorithm's own, else the whole image at the next smooth size.
FftGeometry fft_geometry(const Structure& st, const ConvProblem& p, Direction dir) {
  if (st.fft) return st.fft->geometry(p, dir);
  return whole_image_geometry(p, dir);
}

Phases fft_phases(const ConvProblem& p, Direction dir, const Rates& r, const Structure& st) {
  Phases ph;
  const FftGeometry geo = fft_geometry(st, p, dir);
  const double th = geo.h.t, tw = geo.w.t, n = th * tw;
  const double tiles = double(geo.h.tiles) * geo.w.tiles, msig = p.n * tiles, G = p.groups;
  const double cg = p.c_per_group(), kg = p.k_per_group(), cb = std::ceil(cg / 16), kb = std::ceil(kg / 16);
  const double freqs = th * (std::floor(tw / 2) + 1);
  // A transform of `blocks` 16-lane blocks with `rows` of th rows non-zero / needed.
  auto transforms = [&](int d, double blocks, double rows) {
    const double prune = st.fftw ? 1.0 : 0.5 + 0.5 * std::min(1.0, rows / th);
    const double one = r.fft(d, n) * prune * (st.fftw ? r.fftw_ratio[d] : 1.0);
    ph.transform += blocks * one / r.threads;
    ph.copy += blocks * 16 * n * 4 * 2 / r.copy;  // the frame: zeroed and filled / scattered
  };
  const double in_h = std::min(th, double(p.h)), dy_h = std::min(th, double(p.p()));
  double gm = 0, gl = 0, gnb = 0;
  switch (dir) {
    case Direction::fwd:
      transforms(0, msig * G * cb, in_h);
      transforms(0, G * cg * kb, p.r);
      transforms(1, msig * G * kb, std::min(double(geo.h.step), double(p.p())));
      gm = msig, gl = cg, gnb = kb;
      break;
    case Direction::bwd_data:
      transforms(0, msig * G * kb, dy_h);
      transforms(0, G * kg * cb, p.r);
      transforms(1, msig * G * cb, std::min(double(geo.h.step), double(p.h)));
      gm = msig, gl = kg, gnb = cb;
      break;
    case Direction::bwd_filter:
      transforms(0, msig * G * cb, in_h);
      transforms(0, msig * G * kb, std::min(double(geo.h.step), double(p.p())));
      transforms(1, G * kg * cb, p.r);
      gm = kg, gl = msig, gnb = cb;
      break;
  }
  ph.compute = freqs * G * 8 * gm * gnb * 16 * gl / r.cgemm;
  ph.copy += freqs * G * gm * gl * 8 * 2 / r.copy;  // pack_a
  // The spectra (frequency-major, in the workspace): written by the transforms, read by the GEMMs
  // and the inverse transforms.
  const double spectra = 4.0 * freqs * 32 * (msig * G * (cb + kb) + G * cg * kb);
  ph.copy += r.move(2 * spectra, spectra);
  ph.what = fmt("fft %gx%g x%g tiles", th, tw, tiles);
  return ph;
}

Phases generic_phases(const Algorithm& a, const ConvProblem& p, const Rates& r) {
  Phases ph;
  ph.compute = p.flops() / (r.fma * family_eff(a.family()).main);
  ph.copy = r.move(double(p.bytes()), double(p.bytes()));
  ph.what = std::string(a.family());
  return ph;
}

Phases phases(const Structure& st, const Algorithm& a, const ConvProblem& p, Direction dir, const Rates& r) {
  switch (st.kind) {
    case Kind::gemm: return gemm_phases(p, dir, r);
    case Kind::direct: return direct_phases(p, dir, r, false);
    case Kind::direct_onednn: return direct_phases(p, dir, r, true);
    case Kind::winograd: return winograd_phases(p, dir, r, st.tile);
    case Kind::fft: return fft_phases(p, dir, r, st);
    case Kind::generic: break;
  }
  return generic_phases(a, p, r);
}

// Which structure an algorithm's time follows, and whose probe rate scales it.
Structure structure_of(const Algorithm& a, const ConvProblem& p, Direction dir) {
  Structure st;
  const std::string name(a.name());
  const std::string_view fam = a.family();
  const bool ours = a.device() == DeviceKind::cpu && find_algorithm(name) == &a;  // registered: has a probe rate
  if (ours) st.scale_algo = name;
  if (name == "cpu.onednn_winograd") {
    st.kind = Kind::winograd;
  } else if (name == "cpu.onednn_direct" || name == "cpu.onednn_auto") {
    // What oneDNN runs for this problem: its Winograd, an im2col + GEMM fallback, or a JIT direct kernel.
    st.kind = Kind::direct_onednn;
    st.scale_algo = "cpu.onednn_direct";
#ifdef CONVLAB_HAS_ONEDNN
    if (const auto* o = dynamic_cast<const CpuOnednn*>(&a)) {
      std::string impl;
      try {
        impl = o->implementation(p, dir);
      } catch (const std::exception&) {
      }
      if (impl.find("wino") != std::string::npos) {
        st.kind = Kind::winograd;
        st.scale_algo = "cpu.onednn_winograd";
      } else if (impl.find("gemm") != std::string::npos) {
        st.kind = Kind::gemm;  // no probe of oneDNN's GEMM path: our im2col + GEMM's scale stands for it
        st.scale_algo = "cpu.im2col_gemm";
      }
    }
#else
    (void)p;
    (void)dir;
#endif
  } else if (fam == "gemm") {
    st.kind = Kind::gemm;
  } else if (fam == "direct") {
    st.kind = Kind::direct;
  } else if (fam == "winograd") {
    st.kind = Kind::winograd;
    int t = int_after(name, "_f");
    if (t <= 0) t = int_after(name, "f");
    st.tile = t == 2 || t == 4 || t == 6 ? t : 4;
  } else if (fam == "fft") {
    st.kind = Kind::fft;
    st.fft = dynamic_cast<const FftConvolution*>(&a);
    st.fftw = name.find("fftw") != std::string::npos;
  }
  if (!ours) st.scale_algo.clear();
  return st;
}

CostEstimate probed_cost(const Algorithm& a, const ConvProblem& p, Direction dir, const MachineModel& m) {
  CostEstimate e;
  const Rates r(m), r1(m, true);  // all threads; one thread's share (the probe's algorithm runs)
  const Structure st = structure_of(a, p, dir);
  const Phases ph = phases(st, a, p, dir, r);
  e.main_flops = p.flops();
  e.seconds = ph.total();
  e.formula = ph.what + fmt(": %.3g ms compute + %.3g ms transforms + %.3g ms copies", ph.compute * 1e3,
                            ph.transform * 1e3, ph.copy * 1e3);
  // The scale: this algorithm's measured time on the probe problem of p's class over the same sum there.
  if (!st.scale_algo.empty()) {
    std::string_view cls = probe_class(p);
    double rate = m.probe->rate(probe_algo_key(st.scale_algo, dir, cls)) * 1e9;
    if (!(rate > 0) && cls == "1x1") {  // not measured on the 1x1 problem: the 3x3 rate
      cls = "3x3";
      rate = m.probe->rate(probe_algo_key(st.scale_algo, dir, cls)) * 1e9;
    }
    const ConvProblem& pp = cls == "1x1" ? probe_problem_1x1() : probe_problem_3x3();
    // The probe timed it on one thread and stored threads x its rate: its one-thread time over the
    // sum there with one thread's kernel rates.
    const double there = rate > 0 ? phases(st, a, pp, dir, r1).total() : 0;
    if (there > 0) {
      const double s = std::max(1, m.threads) * pp.flops() / rate / there;
      e.seconds *= s;
      e.formula += fmt(" x%.3g probe (", s) + st.scale_algo + " " + std::string(to_string(dir)) + " on the " +
                   std::string(cls) + fmt(" probe problem: %.3g GFLOP/s)", rate * 1e-9);
    } else {
      // Not measured (the probe ran out of time on a busy machine): the geometric mean of the
      // measured algorithms' scales in this direction, so it is neither favoured nor buried.
      double logs = 0;
      int n = 0;
      const ConvProblem& p3 = probe_problem_3x3();
      for (const Algorithm* b : registry()) {
        if (b->device() != DeviceKind::cpu || b->family() == "reference" || b->name() == "cpu.onednn_auto") continue;
        const double rb = m.probe->rate(probe_algo_key(b->name(), dir, "3x3")) * 1e9;
        if (!(rb > 0)) continue;
        const double tb = phases(structure_of(*b, p3, dir), *b, p3, dir, r1).total();
        if (tb > 0) logs += std::log(std::max(1, m.threads) * p3.flops() / rb / tb), ++n;
      }
      if (n) {
        const double s = std::exp(logs / n);
        e.seconds *= s;
        e.formula += fmt(" x%.3g (the mean probe scale: this algorithm was not probed)", s);
      }
    }
  }
  e.formula = fmt("%.3g ms = ", e.seconds * 1e3) + e.formula;
  return e;
}

}  // namespace

CostEstimate model_cost(const Algorithm& a, const ConvProblem& p, Direction dir, const MachineModel& m) {
  return model_cost(a, p, dir, m, a.workspace_bytes(p, dir));
}

CostEstimate model_cost(const Algorithm& a, const ConvProblem& p, Direction dir, const MachineModel& m,
                        size_t workspace_bytes) {
  if (m.probe && a.device() == DeviceKind::cpu) return probed_cost(a, p, dir, m);
  CostEstimate e;
  const FamilyEff eff = family_eff(a.family());
  const double ws = double(workspace_bytes);
  const double N = p.n, C = p.c, K = p.k, Cg = p.c_per_group(), R = p.r, S = p.s;
  e.traffic_bytes = p.bytes() + 2 * ws;
  const std::string_view name = a.name();
  if (a.family() == "winograd") {
    int mt = int_after(name, "_f");
    if (mt <= 0) mt = int_after(name, "f");
    if (mt <= 0) mt = 4;  // unnamed tile: F(4x3), oneDNN's and most libraries' choice
    const double r = std::max(R, S), al = mt + r - 1;
    double oh, ow;
    out_plane(p, dir, oh, ow);
    const double T = N * std::ceil(oh / mt) * std::ceil(ow / mt);
    e.main_flops = 2 * al * al * T * C * K / p.groups;
    e.transform_flops = T * C * 4 * al * al * al + T * K * 2 * (al * al * mt + al * mt * mt) +
                        K * Cg * 2 * (al * r * r + al * al * r);
    e.formula = fmt("winograd F(%gx%g): %.3g GFLOP batched GEMM + %.3g GFLOP transforms", mt, r, e.main_flops * 1e-9,
                    e.transform_flops * 1e-9);
  } else if (a.family() == "fft") {
    int t = int_after(name, "fft");
    if (t <= 0) t = int_after(name, "tile");
    const double planes_in = N * C, planes_w = K * Cg, planes_out = N * K;
    if (t > int(std::max(R, S))) {
      // Tiled: t x t transforms, each yielding (t - R + 1) x (t - S + 1) outputs.
      double oh, ow;
      out_plane(p, dir, oh, ow);
      const double tiles = std::ceil(oh / (t - R + 1)) * std::ceil(ow / (t - S + 1));
      const double L = double(t) * t, bins = t * (t / 2 + 1.0);
      e.main_flops = 8 * bins * tiles * N * K * Cg;
      e.transform_flops = ((planes_in + planes_out) * tiles + planes_w) * 2.5 * L * std::log2(L);
      e.formula = fmt("fft tiled %gx%g: %.3g GFLOP pointwise + %.3g GFLOP transforms", t, t, e.main_flops * 1e-9,
                      e.transform_flops * 1e-9);
    } else {
      const double lh = pow2_at_least(p.h + p.pad_h + double(std::max(p.pad_h, p.pad_h_end))),
                   lw = pow2_at_least(p.w + p.pad_w + double(std::max(p.pad_w, p.pad_w_end)));
      const double L = lh * lw, bins = lh * (lw / 2 + 1);
      e.main_flops = 8 * bins * N * K * Cg;
      e.transform_flops = (planes_in + planes_w + planes_out) * 2.5 * L * std::log2(L);
      e.formula = fmt("fft %gx%g: %.3g GFLOP pointwise + %.3g GFLOP transforms", lh, lw, e.main_flops * 1e-9,
                      e.transform_flops * 1e-9);
    }
  } else {
    e.main_flops = p.flops();
    e.formula = std::string(a.family()) + fmt(": %.3g GFLOP", e.main_flops * 1e-9);
  }
  // Direct kernels vectorize over the channels they produce (K for fwd and
  // bwd-filter, C for bwd-data): fewer than one vector's worth wastes lanes.
  double main_eff = eff.main;
  if (a.family() == "direct") {
    const double lanes = m.simd_lanes, ch = dir == Direction::bwd_data ? Cg : double(p.k_per_group());
    if (ch < lanes) {
      main_eff *= ch / lanes;
      e.formula += fmt(", %g of %g SIMD lanes busy", ch, lanes);
    }
  }
  e.seconds = e.main_flops / (m.peak_flops * main_eff) + e.traffic_bytes / m.bandwidth;
  if (e.transform_flops > 0) e.seconds += e.transform_flops / (m.peak_flops * eff.transform);
  e.formula += fmt(" @ %.0f%%/%.0f%% of %.3g GFLOP/s, %.3g MB traffic", eff.main * 100, eff.transform * 100,
                   m.peak_flops * 1e-9, e.traffic_bytes * 1e-6);
  return e;
}

// ---- calibration ---------------------------------------------------------

Calibration Calibration::fit(const std::vector<Measured>& data, const MachineModel& m, const std::string& exclude_key,
                             const std::vector<const Algorithm*>* algos) {
  return CalibrationData(data, m, algos).fit(exclude_key);
}

void CalibrationData::add(const std::vector<Measured>& data, const MachineModel& m,
                          const std::vector<const Algorithm*>* algos) {
  // Names resolved once through a hash map (a cache names the same few algorithms over and over).
  std::unordered_map<std::string, const Algorithm*> by_name;
  for (const Algorithm* a : algos ? *algos : registry()) by_name.emplace(std::string(a->name()), a);
  for (const Measured& d : data) {
    const std::string dir(to_string(d.dir));
    Sums* mine = nullptr;
    int* mine_samples = nullptr;
    for (const AlgoPerf& r : d.results) {
      // An ok result is a measurement of an algorithm that supported the problem
      // on this device and build (the cache key says so); nothing is re-asked.
      if (r.status != PerfStatus::ok || !(r.time > 0)) continue;
      auto it = by_name.find(r.algo);
      if (it == by_name.end()) continue;
      const Algorithm& a = *it->second;
      const double pred = model_cost(a, d.problem, d.dir, m, r.workspace).seconds;
      if (!(pred > 0) || !std::isfinite(pred)) continue;
      const double lr = std::log(r.time / pred);
      if (!std::isfinite(lr)) continue;
      if (!mine) {
        auto& slot = by_problem_[d.problem.key()];
        mine = &slot.first;
        mine_samples = &slot.second;
      }
      for (const std::string& k : {r.algo + "|" + dir, r.algo, std::string(a.family()) + "|" + dir}) {
        auto& t = total_[k];
        t.first += lr;
        t.second += 1;
        auto& o = (*mine)[k];
        o.first += lr;
        o.second += 1;
      }
      ++*mine_samples;
      ++samples_;
    }
  }
}

Calibration CalibrationData::fit(const std::string& exclude_key) const {
  Calibration cal;
  cal.samples_ = samples_;
  const Sums* out = nullptr;
  if (!exclude_key.empty())
    if (auto it = by_problem_.find(exclude_key); it != by_problem_.end()) {
      out = &it->second.first;
      cal.samples_ -= it->second.second;
    }
  for (const auto& [k, v] : total_) {
    double sum = v.first;
    int n = v.second;
    if (out)
      if (auto o = out->find(k); o != out->end()) {
        sum -= o->second.first;
        n -= o->second.second;
      }
    if (n > 0) cal.factor_[k] = std::exp(sum / n);
  }
  return cal;
}

double Calibration::factor(const Algorithm& a, Direction dir) const {
  const std::string name(a.name()), d(to_string(dir));
  for (const std::string& k : {name + "|" + d, name, std::string(a.family()) + "|" + d})
    if (auto it = factor_.find(k); it != factor_.end()) return it->second;
  return 1;
}

// ---- get -----------------------------------------------------------------

std::vector<AlgoPerf> get(const ConvProblem& p, Direction dir, const ExecContext& ctx, size_t workspace_limit,
                          const Calibration* cal) {
  return get(p, dir, ctx, workspace_limit, cal, find_candidates(ctx.device));
}

std::vector<AlgoPerf> get(const ConvProblem& p, Direction dir, const ExecContext& ctx, size_t workspace_limit,
                          const Calibration* cal, const std::vector<const Algorithm*>& candidates) {
  if (auto e = p.validate(); !e.empty()) fail(e);
  const MachineModel m = MachineModel::for_context(ctx);
  std::vector<AlgoPerf> out;
  for (const Algorithm* a : candidates) {
    if (a->family() == "reference" || a->device() != ctx.device) continue;
    AlgoPerf r;
    if (screen_candidate(*a, p, dir, workspace_limit, r)) {
      const CostEstimate c = model_cost(*a, p, dir, m);
      const double f = cal ? cal->factor(*a, dir) : 1.0;
      r.time = c.seconds * f;
      r.note = c.formula + fmt(", x%.3g calibration", f);
    }
    out.push_back(std::move(r));
  }
  rank(out);
  return out;
}

// ---- agreement -----------------------------------------------------------

Agreement compare_get_find(const std::string& layer, Direction dir, const std::vector<AlgoPerf>& got,
                           const std::vector<AlgoPerf>& found, const Constraints& c) {
  Agreement a;
  a.layer = layer;
  a.dir = dir;
  const AlgoPerf* f = select(found, c);
  if (!f) fail("find has no acceptable algorithm for " + layer + " " + std::string(to_string(dir)));
  a.find_algo = f->algo;
  a.find_time = f->time;
  const AlgoPerf* g = select(got, c);
  a.get_algo = g ? g->algo : "";
  a.get_time = std::numeric_limits<double>::infinity();
  if (g)
    for (const AlgoPerf& r : found)
      if (r.algo == g->algo && r.status == PerfStatus::ok) a.get_time = r.time;
  return a;
}

AgreementSummary summarize(const std::vector<Agreement>& rows) {
  AgreementSummary s;
  double log_sum = 0;
  int finite = 0;
  for (const Agreement& r : rows) {
    ++s.pairs;
    s.same += r.same();
    const double sd = r.slowdown();
    if (!std::isfinite(sd)) {
      ++s.get_rejected;
      continue;
    }
    s.within_10pct += sd <= 1.10;
    log_sum += std::log(std::max(sd, 1e-9));
    ++finite;
    s.total_get += r.get_time;
    s.total_find += r.find_time;
  }
  s.geomean_slowdown = finite ? std::exp(log_sum / finite) : 1;
  return s;
}

}  // namespace convlab
