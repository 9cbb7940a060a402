#include "autotune/compare.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

#include "autotune/find.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/thread_distance.hpp"
#include "core/timing.hpp"

namespace convlab {

namespace {

using Clock = std::chrono::steady_clock;

double run_once(ConvRunner& r) {
  const Clock::time_point t0 = Clock::now();
  r.run();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The fastest ok entry of `found` that `keep` accepts, or null.
template <class Keep>
const Algorithm* fastest(const std::vector<AlgoPerf>& found, const std::map<std::string, const Algorithm*>& by_name,
                         Keep keep) {
  const AlgoPerf* best = nullptr;
  for (const AlgoPerf& f : found) {
    auto it = by_name.find(f.algo);
    if (f.status == PerfStatus::ok && it != by_name.end() && keep(*it->second) && (!best || f.time < best->time))
      best = &f;
  }
  return best ? by_name.at(best->algo) : nullptr;
}

// compare.hpp, DuelRow: the two timed interleaved from the same inputs.
DuelRow duel(const LayerCase& lc, Direction dir, const ExecContext& ctx, const std::vector<AlgoPerf>& found,
             const std::map<std::string, const Algorithm*>& by_name, double seconds) {
  DuelRow d;
  d.layer = lc.label;
  d.problem = lc.problem.canonical();
  d.dir = std::string(to_string(dir));
  d.threads = ctx.resolved_threads();
  const Algorithm* own = fastest(found, by_name, [](const Algorithm& a) {
    return !a.vendor_peer() && !a.library_backed() && !a.is_oracle();
  });
  const Algorithm* peer = fastest(found, by_name, [](const Algorithm& a) { return a.vendor_peer(); });
  if (!own || !peer) {
    d.note = own ? "no vendor peer ran" : "no hand-written algorithm ran";
    return d;
  }
  d.own = std::string(own->name());
  d.peer = std::string(peer->name());
  try {
    require_memory(DeviceKind::cpu, runner_bytes(*own, lc.problem, dir) + runner_bytes(*peer, lc.problem, dir),
                   "the interleaved timing of " + d.own + " and " + d.peer);
    ConvRunner a(*own, lc.problem, dir, ctx), b(*peer, lc.problem, dir, ctx);
    const ConvData data = ConvData::random(lc.problem, 1);
    a.upload(data);
    b.upload(data);
    const double w0 = now_seconds();
    const double first = run_once(a) + run_once(b);  // warm-up: plans, page faults
    while (now_seconds() - w0 < kCpuWarmupSeconds) run_once(a), run_once(b);  // and the CPUs (core/timing.hpp)
    const double round = run_once(a) + run_once(b);
    d.rounds = std::clamp(int(seconds / std::max(std::min(first, round), 1e-9)), 9, 41);
    std::vector<double> ta, tb;
    for (int i = 0; i < d.rounds; ++i) {
      if (i % 2) tb.push_back(run_once(b));
      ta.push_back(run_once(a));
      if (i % 2 == 0) tb.push_back(run_once(b));
    }
    if (std::string g = a.check_guards() + b.check_guards(); !g.empty()) {
      d.note = g;
      d.rounds = 0;
      return d;
    }
    d.own_ms = stats::median(ta) * 1e3;
    d.peer_ms = stats::median(tb) * 1e3;
    d.speed = stats::median(tb) / stats::median(ta);
    const stats::Interval ci = stats::median_ratio_ci(tb, ta);
    d.lo = ci.lo;
    d.hi = ci.hi;
  } catch (const Error& e) {
    d.note = e.what();
    d.rounds = 0;
  }
  return d;
}

}  // namespace

double ComparisonRow::gflops() const { return std::isfinite(time) && time > 0 ? flops / time * 1e-9 : NAN; }

void require_compare_memory(const std::vector<LayerCase>& cases, const CompareOptions& opt) {
  ExecContext ctx;
  ctx.device = opt.device;
  const std::vector<const Algorithm*> candidates = find_candidates(opt.device, opt.tf32);
  for (const LayerCase& lc : cases)
    for (Direction dir : lc.dirs.empty() ? opt.dirs : lc.dirs)
      find_memory(lc.problem, dir, ctx, FindOptions{}, candidates)
          .require(opt.device, "find on " + lc.label + " " + std::string(to_string(dir)));
}

namespace {

// One case's rows: every candidate find ran, with its ranks and picks.
std::vector<ComparisonRow> case_rows(const LayerCase& lc, Direction dir, int threads, const std::vector<AlgoPerf>& found,
                                     const std::map<std::string, int>& grank, const AlgoPerf* fsel, const AlgoPerf* gsel,
                                     const std::map<std::string, const Algorithm*>& by_name, double peak) {
  std::vector<ComparisonRow> rows;
  for (size_t i = 0; i < found.size(); ++i) {
    const AlgoPerf& a = found[i];
    ComparisonRow r;
    r.layer = lc.label;
    r.problem = lc.problem.canonical();
    r.dir = std::string(to_string(dir));
    r.algo = a.algo;
    r.family = by_name.count(a.algo) ? std::string(by_name.at(a.algo)->family()) : "";
    r.status = std::string(to_string(a.status));
    r.note = a.note;
    r.threads = threads;
    r.flops = lc.problem.flops();
    r.bytes = lc.problem.bytes();
    r.time = a.time;
    r.spread = a.spread;
    r.max_rel_error = a.max_rel_error;
    r.workspace = a.workspace;
    r.find_rank = a.status == PerfStatus::ok ? int(i) + 1 : 0;
    r.get_rank = grank.count(a.algo) ? grank.at(a.algo) : 0;
    r.find_choice = fsel && fsel->algo == a.algo;
    r.lo = a.lo;
    r.hi = a.hi;
    r.tie = a.tie;
    r.get_choice = gsel && gsel->algo == a.algo;
    r.peak_fraction = peak > 0 && std::isfinite(r.gflops()) ? r.gflops() / peak : NAN;
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

double PlacementRow::extreme(bool largest) const {
  double m = NAN;
  for (double x : {find_before_ns, find_after_ns, duel_after_ns})
    if (std::isfinite(x)) m = !std::isfinite(m) ? x : largest ? std::max(m, x) : std::min(m, x);
  return m;
}

std::string placement_text(const std::vector<PlacementRow>& rows) {
  double lo = NAN, hi = NAN;
  for (const PlacementRow& r : rows)
    if (r.measured()) {
      lo = std::isfinite(lo) ? std::min(lo, r.nearest()) : r.nearest();
      hi = std::isfinite(hi) ? std::max(hi, r.farthest()) : r.farthest();
    }
  if (!std::isfinite(lo)) return "";
  int far = 0, moved = 0, cases = 0;
  for (const PlacementRow& r : rows)
    if (r.measured()) {
      ++cases;
      far += r.farthest() > kFarRatio * lo;
      moved += placement_changed(r.nearest(), r.farthest());
    }
  char b[512];
  std::snprintf(b, sizeof b, "threads' placement: a cache line's round trip between them %.0f-%.0f ns over %d cases", lo,
                hi, cases);
  std::string s = b;
  if (far == 0) return s + " (one placement throughout)";
  std::snprintf(b, sizeof b,
                "\n  %d case(s) ran at more than %.0fx the nearest round trip (their threads in different cache domains: "
                "another CCD, socket, or where a hypervisor moved them) and %d moved within their own measurement.\n"
                "  Times, and which library wins, differ between placements; compare rows measured at the same one "
                "(the JSON's placements, per case).",
                far, kFarRatio, moved);
  return s + b;
}

Comparison compare_layers(const std::vector<LayerCase>& cases, const CompareOptions& opt) {
  require_compare_memory(cases, opt);  // before the peaks and any find
  Comparison out;
  out.device = opt.device;
  out.fingerprint = device_fingerprint(opt.device, 0);
  if (opt.device == DeviceKind::cpu) {
    for (int t : opt.threads) out.peaks.push_back(measure_fma_peak(t));
    out.bandwidth_gbs = measure_stream_bandwidth(0);
  }
  if (opt.device == DeviceKind::cpu && opt.probe)
    for (int t : opt.threads) {
      ExecContext c;
      c.threads = t;
      out.probes.emplace_back(c.resolved_threads(), ensure_probe(c, opt.probe_cache, opt.reprobe));
    }
  std::map<std::string, const Algorithm*> by_name;
  const std::vector<const Algorithm*> candidates = find_candidates(opt.device, opt.tf32);
  for (const Algorithm* a : candidates) by_name[std::string(a->name())] = a;
  Constraints cons;
  cons.tf32 = opt.tf32;
  const MachineLoad before = load_snapshot();
  for (size_t ti = 0; ti < opt.threads.size(); ++ti) {
    ExecContext ctx;
    ctx.device = opt.device;
    ctx.threads = opt.threads[ti];
    const double peak = opt.device == DeviceKind::cpu ? out.peaks[ti].gflops : 0;
    for (const LayerCase& lc : cases) {
      for (Direction dir : lc.dirs.empty() ? opt.dirs : lc.dirs) {
        FindOptions fo;
        fo.max_seconds = opt.max_seconds;
        PlacementRow where;
        where.layer = lc.label;
        where.problem = lc.problem.canonical();
        where.dir = std::string(to_string(dir));
        where.threads = ctx.resolved_threads();
        const bool place = opt.device == DeviceKind::cpu && where.threads >= 2;
        if (place) where.find_before_ns = measure_thread_distance(where.threads).max_ns;
        std::vector<AlgoPerf> found = find(lc.problem, dir, ctx, fo, candidates);
        if (place) where.find_after_ns = measure_thread_distance(where.threads).max_ns;
        const std::vector<AlgoPerf> got = get(lc.problem, dir, ctx, size_t(-1), opt.calibration);
        if (const AlgoPerf* f = select(found, cons)) mark_ties(found, std::string(f->algo));
        const AlgoPerf* fsel = select(found, cons);
        const AlgoPerf* gsel = select(got, cons);
        std::map<std::string, int> grank;
        for (size_t i = 0; i < got.size(); ++i)
          if (got[i].status == PerfStatus::ok) grank[got[i].algo] = int(i) + 1;
        std::vector<ComparisonRow> rows = case_rows(lc, dir, ctx.resolved_threads(), found, grank, fsel, gsel, by_name, peak);
        const VendorReport vr = vendor_choices(lc.problem, dir, ctx, found);
        VendorRow base;
        base.layer = lc.label;
        base.problem = lc.problem.canonical();
        base.dir = std::string(to_string(dir));
        base.threads = ctx.resolved_threads();
        base.status = vr.status;
        base.find_algo = fsel ? fsel->algo : "";
        base.find_time = fsel ? fsel->time : NAN;
        base.get_algo = gsel ? gsel->algo : "";
        base.get_time = gsel ? measured_time(found, gsel->algo) : NAN;
        std::vector<VendorRow> vrows;
        if (vr.choices.empty()) vrows.push_back(base);
        for (const VendorChoice& v : vr.choices) {
          vrows.push_back(base);
          vrows.back().choice = v;
        }
        if (opt.on_case) opt.on_case(lc, dir, where, rows);
        if (opt.on_vendor) opt.on_vendor(vrows);
        if (opt.duel && opt.device == DeviceKind::cpu) {
          out.duels.push_back(duel(lc, dir, ctx, found, by_name, opt.duel_seconds));
          if (place) where.duel_after_ns = measure_thread_distance(where.threads).max_ns;
          if (opt.on_duel) opt.on_duel(out.duels.back());
        }
        if (where.measured()) out.placements.push_back(where);
        out.vendor.insert(out.vendor.end(), vrows.begin(), vrows.end());
        out.rows.insert(out.rows.end(), rows.begin(), rows.end());
      }
    }
  }
  out.load = check_load(before, load_snapshot());
  return out;
}

}  // namespace convlab
