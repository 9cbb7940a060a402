#include "autotune/tune.hpp"

#include <map>
#include <memory>

#include "autotune/cache.hpp"
#include "autotune/find.hpp"
#include "core/timing.hpp"

namespace convlab {

namespace {

// Step 1: every pair's find results, from the cache or measured (a repeated shape once).
void find_all(std::vector<TunePair>& pairs, const std::vector<const Algorithm*>& candidates, TuneCache* cache,
              const TuneOptions& opt, TuneResult& res) {
  std::map<std::string, size_t> seen;  // cache key -> the first pair with it
  for (size_t i = 0; i < pairs.size(); ++i) {
    TunePair& pr = pairs[i];
    const std::string key = make_cache_key(pr.problem, pr.dir, opt.ctx).str();
    if (auto it = seen.find(key); it != seen.end()) {
      pr.found = pairs[it->second].found;
      pr.from_cache = true;
      continue;
    }
    seen.emplace(key, i);
    FindOptions fo = opt.find_options;
    fo.workspace_limit = opt.constraints.workspace_limit;
    const std::string what = pr.label + " " + std::string(to_string(pr.dir));
    if (opt.on_step) {
      const int n = int(pairs.size());
      fo.on_start = [&opt, &what, i, n] { opt.on_step(int(i), n, what); };
      fo.on_candidate = [&opt, &what, i, n](int, int, const Algorithm& a) {
        opt.on_step(int(i), n, what + " " + std::string(a.name()));
      };
    }
    Tuned t = cache_or_find(cache, pr.problem, pr.dir, opt.ctx, fo, candidates, opt.retune);
    pr.found = std::move(t.results);
    pr.from_cache = t.from_cache;
    pr.reused = t.reused;
    pr.tune_seconds = t.find_seconds;
    ++(t.from_cache ? res.cache_hits : res.tuned);
    if (!t.from_cache && t.reused > 0) ++res.partly;
  }
}

// Step 2: get uncalibrated, calibrated in-sample and leaving each problem out.
void get_all(std::vector<TunePair>& pairs, const std::vector<const Algorithm*>& candidates, const TuneCache* cache,
             const TuneOptions& opt, TuneResult& res) {
  std::vector<Measured> data;
  if (cache) data = cache->measurements({res.fingerprint});
  if (opt.find && !cache)
    for (const TunePair& pr : pairs) data.push_back({pr.problem, pr.dir, pr.found});
  const CalibrationData cal_data(data, MachineModel::for_context(opt.ctx));  // one pass; every fit is O(factor keys)
  const Calibration cal_in = cal_data.fit();
  res.calibration_samples = cal_in.samples();
  const size_t ws = opt.constraints.workspace_limit;
  for (TunePair& pr : pairs) {
    pr.got_uncalibrated = get(pr.problem, pr.dir, opt.ctx, ws, nullptr, candidates);
    pr.got_in_sample = get(pr.problem, pr.dir, opt.ctx, ws, &cal_in, candidates);
    if (opt.find) {
      const Calibration loo = cal_data.fit(pr.problem.key());
      pr.got_leave_one_out = get(pr.problem, pr.dir, opt.ctx, ws, &loo, candidates);
    }
  }
}

// The choices under the constraints, and find's measured times of them.
void note_choices(TunePair& pr, const TuneOptions& opt) {
  if (const AlgoPerf* f = opt.find ? select(pr.found, opt.constraints) : nullptr) {
    pr.find_algo = f->algo;
    pr.find_time = f->time;
    pr.find_ties = ties_of(pr.found, pr.find_algo);
    mark_ties(pr.found, pr.find_algo);
  }
  if (const AlgoPerf* g = select(pr.got_in_sample, opt.constraints)) {
    pr.get_index = int(g - pr.got_in_sample.data());
    pr.get_algo = g->algo;
    pr.get_time = measured_time(pr.found, g->algo);
  }
}

}  // namespace

TuneResult tune(const std::vector<ProblemItem>& problems, const TuneOptions& opt) {
  TuneResult res;
  const Constraints& cons = opt.constraints;
  const auto candidates = find_candidates(opt.ctx.device, cons.tf32);
  res.candidates = candidates.size();
  res.fingerprint = make_cache_key(problems.at(0).problem, opt.dirs.at(0), opt.ctx).device;
  res.cache_path = opt.cache_path;
  std::unique_ptr<TuneCache> cache;
  if (!opt.cache_path.empty()) {
    cache = std::make_unique<TuneCache>(opt.cache_path);
    cache->load();
  }
  for (const ProblemItem& it : problems)
    for (Direction d : item_directions(it, opt.dirs, opt.dirs_given)) {
      TunePair& pr = res.pairs.emplace_back();
      pr.label = it.label;
      pr.problem = it.problem;
      pr.dir = d;
    }
  // Every pair find will measure must fit in memory: refused now, before the probe and any find.
  if (opt.find)
    for (const TunePair& pr : res.pairs) {
      FindOptions fo = opt.find_options;
      fo.workspace_limit = opt.constraints.workspace_limit;
      if (cached_answer(cache.get(), pr.problem, pr.dir, opt.ctx, fo, candidates, opt.retune)) continue;
      find_memory(pr.problem, pr.dir, opt.ctx, fo, candidates)
          .require(opt.ctx.device, "find on " + pr.label + " " + std::string(to_string(pr.dir)));
    }
  // The probe before anything is measured or predicted: find orders its candidates by the model too.
  if (opt.probe && opt.ctx.device == DeviceKind::cpu)
    res.probe = ensure_probe(opt.ctx, cache.get(), opt.reprobe);
  const double t_start = now_seconds();
  if (opt.find) {
    const MachineLoad before = load_snapshot();
    find_all(res.pairs, candidates, cache.get(), opt, res);
    res.load = check_load(before, load_snapshot());
    res.load_measured = true;
  }
  if (opt.on_find_done) opt.on_find_done();
  res.find_seconds = now_seconds() - t_start;
  get_all(res.pairs, candidates, cache.get(), opt, res);

  // Steps 3 and 4 (cudnnFind runs only when find ran).
  VendorOptions vo;
  vo.measure = opt.find;
  vo.tf32 = cons.tf32;
  vo.workspace_limit = cons.workspace_limit;
  vo.deterministic = cons.deterministic;
  std::vector<Agreement> uncal, in_sample, loo;
  for (TunePair& pr : res.pairs) {
    pr.vendor = vendor_choices(pr.problem, pr.dir, opt.ctx, pr.found, vo);
    note_choices(pr, opt);
    if (!pr.find_algo.empty()) tally(res.vendor, pr.vendor, pr.find_algo, pr.find_time);
    if (opt.find ? pr.find_algo.empty() : pr.get_algo.empty()) {
      ++res.no_choice;
      continue;
    }
    if (!opt.find) continue;
    pr.compared = true;
    pr.uncalibrated = compare_get_find(pr.label, pr.dir, pr.got_uncalibrated, pr.found, cons);
    pr.in_sample = compare_get_find(pr.label, pr.dir, pr.got_in_sample, pr.found, cons);
    pr.leave_one_out = compare_get_find(pr.label, pr.dir, pr.got_leave_one_out, pr.found, cons);
    uncal.push_back(pr.uncalibrated);
    in_sample.push_back(pr.in_sample);
    loo.push_back(pr.leave_one_out);
  }
  res.compared = int(in_sample.size());
  res.uncalibrated = summarize(uncal);
  res.in_sample = summarize(in_sample);
  res.leave_one_out = summarize(loo);
  return res;
}

}  // namespace convlab
