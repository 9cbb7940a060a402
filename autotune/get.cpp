#include "autotune/get.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "algorithms/registry.hpp"
#include "autotune/find.hpp"
#include "core/error.hpp"

namespace convlab {

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

// The probe's kernel rates in SI units.
struct Rates {
  double fma, copy, dram, uk, im2col, col2im, cgemm;  // flop/s, bytes/s
  double win_in[7]{}, win_out[7]{}, win_dst[7]{};  // (tile x channel) / s, by m
  double fft_alpha[2]{}, fft_beta[2]{};            // hand FFT per thread: s per (n log2 n), s per n; [0] fwd, [1] inv
  double fftw_ratio[2]{1, 1};                      // FFTW / hand at 32x32
  int threads;
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
  }
  // Seconds to move `bytes` (read + written) of a working set of `footprint` bytes: the
  // cache-resident copy rate up to the copy probe's 32 MiB, the memory rate from twice that,
  // in between a mix. A phase streams its working set: past the cache's capacity a
  // least-recently-used cache keeps almost none of it, so the memory rate applies soon after
  // the cache-resident size, not only at the memory probe's 192 MiB.
  double move(double bytes, double footprint) const {
    const double lo = 32.0 * (1 << 20), hi = 2 * lo;
    const double f = std::clamp((footprint - lo) / (hi - lo), 0.0, 1.0);
    return bytes * ((1 - f) / copy + f / dram);
  }
  // One 16-lane transform of n = lh*lw points, per thread (d: 0 fwd, 1 inv).
  double fft(int d, double n) const { return fft_alpha[d] * n * std::log2(std::max(n, 2.0)) + fft_beta[d] * n; }
  // A Winograd transform rate of tile m (the F(4x4) one for a tile the probe has none of).
  static double wino(const double (&rates)[7], int m) {
    const int mi = std::clamp(m, 2, 6);
    return rates[mi] > 0 ? rates[mi] : rates[4];
  }
};

// The phases added up: seconds per kind of work.
struct Sums {
  double compute = 0, transform = 0, copy = 0;
  double total() const { return compute + transform + copy; }
};

// Seconds of one phase, and the sum it counts in.
double phase_seconds(const CostPhase& ph, const Rates& r, double Sums::*& sum) {
  double t = 0;
  sum = &Sums::transform;
  switch (ph.kind) {
    case CostKind::fma: t = ph.work / (r.fma * ph.eff), sum = &Sums::compute; break;
    case CostKind::ukernel: t = ph.work / r.uk, sum = &Sums::compute; break;
    case CostKind::cgemm: t = ph.work / r.cgemm, sum = &Sums::compute; break;
    // The probed im2col / col2im rates are of a cache-resident column matrix; a bigger one is
    // also written to (im2col) or read from (col2im) memory.
    case CostKind::im2col: t = ph.work / r.im2col + (r.move(ph.work, ph.footprint) - ph.work / r.copy); break;
    case CostKind::col2im: t = ph.work / r.col2im + (r.move(ph.work, ph.footprint) - ph.work / r.copy); break;
    case CostKind::winograd_in: t = ph.work / Rates::wino(r.win_in, ph.tile); break;
    case CostKind::winograd_out: t = ph.work / Rates::wino(r.win_out, ph.tile); break;
    case CostKind::winograd_dst: t = ph.work / Rates::wino(r.win_dst, ph.tile); break;
    case CostKind::fft_fwd:
    case CostKind::fft_inv: {
      const int d = ph.kind == CostKind::fft_inv;
      t = ph.work * (r.fft(d, ph.points) * ph.prune * (ph.fftw ? r.fftw_ratio[d] : 1.0)) / r.threads;
      break;
    }
    case CostKind::copy: t = r.move(ph.work, ph.footprint), sum = &Sums::copy; break;
    case CostKind::copy_cached: t = ph.work / r.copy, sum = &Sums::copy; break;
  }
  return ph.count * t;
}

Sums add_up(const CostPhases& c, const Rates& r) {
  Sums s;
  for (const CostPhase& ph : c.phases) {
    double Sums::*sum = nullptr;
    const double t = phase_seconds(ph, r, sum);
    s.*sum += t;
  }
  return s;
}

// The sum of `a`'s phases on p: on p's own plan (who = a.priced_as(p)) when a stands for p.
double total_on(const Algorithm& who, const ConvProblem& p, Direction dir, const Rates& r) {
  return add_up(who.cost_phases(p, dir), r).total();
}

// When the algorithm was not measured on the probe problem (the probe ran out of time on a busy
// machine): the geometric mean of the measured algorithms' scales in this direction, so it is
// neither favoured nor buried. 0 when none was measured.
double mean_probe_scale(Direction dir, const MachineModel& m, const Rates& r1) {
  double logs = 0;
  int n = 0;
  const ConvProblem& p3 = probe_problem("3x3", dir);
  for (const Algorithm* b : registry()) {
    if (b->device() != DeviceKind::cpu || b->is_oracle() || b->picks_own_implementation()) continue;
    const double rb = m.probe->rate(probe_algo_key(b->name(), dir, "3x3")) * 1e9;
    if (!(rb > 0)) continue;
    const double tb = total_on(b->priced_as(p3, dir), p3, dir, r1);
    if (tb > 0) logs += std::log(std::max(1, m.threads) * p3.flops() / rb / tb), ++n;
  }
  return n ? std::exp(logs / n) : 0;
}

CostEstimate probed_cost(const Algorithm& a, const ConvProblem& p, Direction dir, const MachineModel& m) {
  CostEstimate e;
  const Algorithm& who = a.priced_as(p, dir);
  const CostPhases c = who.cost_phases(p, dir);
  if (!c.unpriced.empty()) {
    e.unpriced = c.unpriced;
    return e;
  }
  const Rates r(m), r1(m, true);  // all threads; one thread's share (the probe's algorithm runs)
  const Sums ph = add_up(c, r);
  e.main_flops = p.flops();
  e.seconds = ph.total();
  e.formula = c.what + cost_text(": %.3g ms compute + %.3g ms transforms + %.3g ms copies", ph.compute * 1e3,
                                 ph.transform * 1e3, ph.copy * 1e3);
  // The scale: the measured time on the probe problem of p's class over the same sum there, of
  // the algorithm whose plan stands for p -- a registered one only (it has a probe rate).
  if (a.device() == DeviceKind::cpu && find_algorithm(a.name()) == &a) {
    const std::string scale_algo(who.name());
    std::string_view cls = probe_class(p);
    double rate = m.probe->rate(probe_algo_key(scale_algo, dir, cls)) * 1e9;
    if (!(rate > 0) && cls == "dw_small") {  // not measured on small depthwise images: the larger ones
      cls = "dw";
      rate = m.probe->rate(probe_algo_key(scale_algo, dir, cls)) * 1e9;
    }
    if (!(rate > 0) && cls != "3x3") {  // not measured on its class's problem: the 3x3 rate
      cls = "3x3";
      rate = m.probe->rate(probe_algo_key(scale_algo, dir, cls)) * 1e9;
    }
    const ConvProblem& pp = probe_problem(cls, dir);
    // The probe timed it on one thread and stored threads x its rate: its one-thread time over the
    // sum there with one thread's kernel rates. The depthwise classes it timed on every thread: that
    // time over the sum with all threads' rates.
    const bool all = probe_all_threads(cls);
    const double there = rate > 0 ? total_on(who, pp, dir, all ? r : r1) : 0;
    if (there > 0) {
      const double s = (all ? 1 : std::max(1, m.threads)) * pp.flops() / rate / there;
      e.seconds *= s;
      e.formula += cost_text(" x%.3g probe (", s) + scale_algo + " " + std::string(to_string(dir)) + " on the " +
                   std::string(cls) + cost_text(" probe problem: %.3g GFLOP/s)", rate * 1e-9);
    } else if (const double s = mean_probe_scale(dir, m, r1); s > 0) {
      e.seconds *= s;
      e.formula += cost_text(" x%.3g (the mean probe scale: this algorithm was not probed)", s);
    }
  }
  e.formula = cost_text("%.3g ms = ", e.seconds * 1e3) + e.formula;
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
  const NominalCost nc = a.nominal_cost(p, dir);
  if (!nc.unpriced.empty()) {
    e.unpriced = nc.unpriced;
    return e;
  }
  e.traffic_bytes = p.bytes() + 2 * double(workspace_bytes);
  e.main_flops = nc.main_flops;
  e.transform_flops = nc.transform_flops;
  e.formula = nc.formula;
  // Direct kernels vectorize over the channels they produce (K for fwd and
  // bwd-filter, C for bwd-data): fewer than one vector's worth wastes lanes.
  double main_eff = nc.eff_main;
  if (const double ch = nc.lane_channels, lanes = m.simd_lanes; ch > 0 && ch < lanes) {
    main_eff *= ch / lanes;
    e.formula += cost_text(", %g of %g SIMD lanes busy", ch, lanes);
  }
  e.seconds = e.main_flops / (m.peak_flops * main_eff) + e.traffic_bytes / m.bandwidth;
  if (e.transform_flops > 0) e.seconds += e.transform_flops / (m.peak_flops * nc.eff_transform);
  e.formula += cost_text(" @ %.0f%%/%.0f%% of %.3g GFLOP/s, %.3g MB traffic", nc.eff_main * 100,
                         nc.eff_transform * 100, m.peak_flops * 1e-9, e.traffic_bytes * 1e-6);
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
    if (a->is_oracle() || a->device() != ctx.device) continue;
    AlgoPerf r;
    if (screen_candidate(*a, p, dir, workspace_limit, r)) {
      const CostEstimate c = model_cost(*a, p, dir, m);
      if (!c.unpriced.empty()) {  // never picked: nothing to rank it by
        r.status = PerfStatus::unsupported;
        r.note = "the cost model cannot price it: " + c.unpriced;
      } else {
        const double f = cal ? cal->factor(*a, dir) : 1.0;
        r.time = c.seconds * f;
        r.note = c.formula + cost_text(", x%.3g calibration", f);
      }
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
