#include "autotune/find.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "autotune/build_identity.hpp"
#include "autotune/get.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"

namespace convlab {

std::vector<const Algorithm*> find_candidates(DeviceKind device, bool tf32) {
  std::vector<const Algorithm*> out;
  for (const Algorithm* a : registry())
    if (a->device() == device && !a->is_oracle() && (tf32 || a->math() == "fp32")) out.push_back(a);
  return out;
}

namespace {

std::string g3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// The slice used for the accuracy check: the first `check_batch` images.
ConvProblem check_problem(const ConvProblem& full, int batch) { return full.with_batch(std::max(1, std::min(batch, full.n))); }

struct CheckSlice {
  ConvProblem p;
  ConvData data;
  std::optional<Reference> ref;  // computed on first use
  CheckSlice(const ConvProblem& full, int batch, uint64_t seed)
      : p(check_problem(full, batch)), data(ConvData::random(p, seed)) {}
};

// Runs the candidate on the slice twice and fills status / error fields.
void check(const Algorithm& a, CheckSlice& s, Direction dir, const ExecContext& ctx, AlgoPerf& r) {
  if (!s.ref) s.ref.emplace(compute_reference(s.p, dir, s.data, ctx.device == DeviceKind::cpu ? ctx.threads : 0));
  const Reference& ref = *s.ref;
  ConvRunner run(a, s.p, dir, ctx);
  run.upload(s.data);
  ConvData out1(s.p), out2(s.p);
  run.poison();
  run.run();
  run.download_output(out1);
  run.poison();
  run.run();
  run.download_output(out2);
  if (auto g = run.check_guards(); !g.empty()) {
    r.status = PerfStatus::failed;
    r.note = "accuracy check: " + g;
    return;
  }
  const Tolerance tol = a.tolerance(s.p, dir);
  const ErrorStats st = compare(out1.output(dir).data(), ref, tol);
  r.max_rel_error = st.max_rel;
  r.err_ratio = st.worst_ratio;
  if (!st.passed()) {
    r.status = PerfStatus::inaccurate;
    r.note = std::to_string(st.bad) + " elements over the declared bound, " + std::to_string(st.non_finite) +
             " non-finite; worst err/bound " + g3(st.worst_ratio);
    return;
  }
  const Tensor& o1 = out1.output(dir);
  const Tensor& o2 = out2.output(dir);
  const bool same = std::memcmp(o1.data(), o2.data(), size_t(o1.size()) * sizeof(float)) == 0;
  r.deterministic = a.deterministic() && same;
  if (!same && a.deterministic()) {
    r.status = PerfStatus::failed;
    r.note = "claims to be deterministic but two runs on the same inputs differ";
  }
}

void time_full(const Algorithm& a, const ConvProblem& p, Direction dir, const ExecContext& ctx, const FindOptions& opt,
               double best_so_far, AlgoPerf& r) {
  ConvRunner run(a, p, dir, ctx);
  run.upload(ConvData::random(p, opt.seed));
  run.poison();
  TimingOptions t;
  t.warmup = std::max(1, opt.warmup);
  if (ctx.device == DeviceKind::cpu) t.warmup_seconds = kCpuWarmupSeconds;
  t.min_reps = opt.min_reps;
  t.max_reps = opt.max_reps;
  t.max_seconds = opt.max_seconds;
  t.stable_rel = opt.stable_rel;
  // The pruning rule (find.hpp): only the fastest of at least 3 reps can condemn a candidate.
  const size_t prune_after = size_t(std::max(3, opt.prune_reps));
  const double cutoff = opt.slow_cutoff * best_so_far;
  bool pruned = false;
  if (std::isfinite(cutoff))
    t.stop_early = [&](const std::vector<double>& s) {
      pruned = s.size() >= prune_after && *std::min_element(s.begin(), s.end()) > cutoff;
      return pruned;
    };
  const TimingStats st = run.time(t);
  if (auto g = run.check_guards(); !g.empty()) {
    r.status = PerfStatus::failed;
    r.note = g;
    return;
  }
  r.time = st.median;
  r.spread = st.spread;
  r.reps = st.reps;
  const stats::Interval ci = stats::median_ci(st.samples);
  r.lo = ci.lo;
  r.hi = ci.hi;
  if (pruned)
    r.note = "pruned after " + std::to_string(st.reps) + " timed reps: the fastest of them is " + g3(st.min / best_so_far) +
             "x the best median so far";
}

}  // namespace

MemoryNeed find_memory(const ConvProblem& p, Direction dir, const ExecContext& ctx, const FindOptions& opt,
                       const std::vector<const Algorithm*>& candidates) {
  const ConvProblem slice = check_problem(p, opt.check_batch);
  MemoryNeed held;  // the check slice, alive through every candidate
  held.host = data_bytes(slice) + reference_bytes(slice, dir);
  MemoryNeed most = held;
  for (const Algorithm* a : candidates) {
    AlgoPerf r;
    if (a->is_oracle() || a->device() != ctx.device ||
        !screen_candidate(*a, p, dir, opt.workspace_limit, r))
      continue;
    MemoryNeed checking = held, timing = held;
    // The rare algorithm that rejects the slice is checked on a full-size slice of its own.
    const bool own_slice = !a->supports(slice, dir);
    const ConvProblem& cp = own_slice ? p : slice;
    if (own_slice) checking.host += data_bytes(p) + reference_bytes(p, dir);
    checking.add(ctx.device, runner_bytes(*a, cp, dir));
    checking.host += 2 * data_bytes(cp);
    timing.add(ctx.device, runner_bytes(*a, p, dir));
    timing.host += data_bytes(p);
    most.keep_max(checking);
    most.keep_max(timing);
  }
  return most;
}

std::vector<AlgoPerf> find(const ConvProblem& p, Direction dir, const ExecContext& ctx, const FindOptions& opt) {
  return find(p, dir, ctx, opt, find_candidates(ctx.device));
}

std::vector<AlgoPerf> find(const ConvProblem& p, Direction dir, const ExecContext& ctx, const FindOptions& opt,
                           const std::vector<const Algorithm*>& candidates) {
  if (opt.on_start) opt.on_start();
  if (auto e = p.validate(); !e.empty()) fail(e);
  find_memory(p, dir, ctx, opt, candidates).require(ctx.device, "find on " + p.canonical() + " " + std::string(to_string(dir)));
  std::vector<AlgoPerf> out;
  CheckSlice slice(p, opt.check_batch, opt.seed);
  double best = opt.best_so_far;
  int index = 0;
  // Measure in the cost model's predicted order so that a fast candidate sets
  // `best` early and hopeless ones are pruned early (see find.hpp). The
  // order affects only how long find takes, not the ranking.
  std::vector<std::pair<double, const Algorithm*>> order;
  const MachineModel model = MachineModel::for_context(ctx);
  for (const Algorithm* a : candidates) {
    double pred = std::numeric_limits<double>::infinity();
    if (a->device() == ctx.device && !a->is_oracle() && a->unavailable_reason().empty() &&
        a->supports(p, dir))
      pred = model_cost(*a, p, dir, model).seconds;
    order.emplace_back(pred, a);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const auto& [pred, a] : order) {
    if (a->is_oracle() || a->device() != ctx.device) continue;
    if (opt.on_candidate) opt.on_candidate(index, int(candidates.size()), *a);
    ++index;
    AlgoPerf r;
    const AlgorithmVersion version = algorithm_version(*a);
    r.code = version.code;
    r.libs = version.libs;
    if (screen_candidate(*a, p, dir, opt.workspace_limit, r)) {
      try {
        CheckSlice* cs = &slice;
        std::optional<CheckSlice> full;  // the rare algorithm that rejects the slice is checked at full size
        if (!a->supports(slice.p, dir)) cs = &full.emplace(p, p.n, opt.seed);
        check(*a, *cs, dir, ctx, r);
        if (r.status == PerfStatus::ok) time_full(*a, p, dir, ctx, opt, best, r);
        if (r.status == PerfStatus::ok) best = std::min(best, r.time);
      } catch (const DeviceFault& e) {
        // Not this candidate's verdict alone: nothing can run on the device any more.
        // Stop here with one line rather than mark every remaining candidate failed.
        int left = 0;
        for (const auto& [pr, b] : order) left += !b->is_oracle() && b->device() == ctx.device;
        left -= index;
        throw DeviceFault("device fault while find ran " + std::string(a->name()) + " on " + p.key() + " " +
                          std::string(to_string(dir)) + ": " + e.what() + "; find stopped (" + std::to_string(left) +
                          " candidate" + (left == 1 ? "" : "s") + " not run)");
      } catch (const std::exception& e) {
        r.status = PerfStatus::failed;
        r.note = std::string("threw: ") + e.what();
      }
    }
    out.push_back(std::move(r));
  }
  rank(out);
  return out;
}

}  // namespace convlab
