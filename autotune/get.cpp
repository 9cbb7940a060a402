#include "autotune/get.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "autotune/find.hpp"
#include "algorithms/registry.hpp"
#include "core/error.hpp"

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
  m.peak_flops = threads * ghz * 1e9 * per_cycle;
  m.simd_lanes = isa == "avx512" ? 16 : isa == "avx2" ? 8 : 4;
  m.bandwidth = std::min(threads, 8) * 8e9;  // ~8 GB/s of streaming per core, saturating
  return m;
}

CostEstimate model_cost(const Algorithm& a, const ConvProblem& p, Direction dir, const MachineModel& m) {
  return model_cost(a, p, dir, m, a.workspace_bytes(p, dir));
}

CostEstimate model_cost(const Algorithm& a, const ConvProblem& p, Direction dir, const MachineModel& m,
                        size_t workspace_bytes) {
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
      const double lh = pow2_at_least(p.h + 2.0 * p.pad_h), lw = pow2_at_least(p.w + 2.0 * p.pad_w);
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
