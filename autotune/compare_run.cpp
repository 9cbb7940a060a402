#include "autotune/compare_run.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "autotune/cache.hpp"
#include "core/error.hpp"
#include "core/results_folder.hpp"

namespace convlab {

namespace {

// The machine probe of every thread count (the calibration's predictions use it): loaded from the
// cache file (or the default cache), else measured and stored there.
std::vector<std::pair<int, ProbeOutcome>> ensure_probes(const CompareRunOptions& opt) {
  std::vector<std::pair<int, ProbeOutcome>> probes;
  if (opt.compare.device != DeviceKind::cpu) return probes;
  for (int t : opt.compare.threads) {
    ExecContext c;
    c.threads = t;
    probes.emplace_back(c.resolved_threads(), ensure_probe(c, opt.cache_path, opt.reprobe));
  }
  return probes;
}

// Calibrated from the cache's entries at every thread count this run uses (their results of this
// build's algorithm versions; each predicted with that thread count's machine model).
void calibrate(const CompareRunOptions& opt, CompareSetup& setup) {
  const std::string& f = opt.cache_path;
  const DeviceKind device = opt.compare.device;
  TuneCache cache(f);
  cache.load();
  CalibrationData data;
  std::vector<std::string> seen;
  size_t entries = 0;
  for (int t : device == DeviceKind::cpu ? opt.compare.threads : std::vector<int>{0}) {
    ExecContext c;
    c.device = device;
    c.threads = t;
    const std::string fp = device_fingerprint(device, device == DeviceKind::cpu ? c.resolved_threads() : 0);
    if (std::find(seen.begin(), seen.end(), fp) != seen.end()) continue;
    seen.push_back(fp);
    const std::vector<Measured> m = cache.measurements({fp});
    entries += m.size();
    data.add(m, MachineModel::for_context(c));
  }
  setup.calibration = data.fit();
  setup.calibration_line =
      data.samples() ? "get calibrated from " + std::to_string(data.samples()) + " cached measurements (" +
                           std::to_string(entries) + " entries of this device in " + printable(f) + ")"
                     : "get uncalibrated: no usable entries in " + printable(f) +
                           " (none of this device at these thread counts measured by this build's algorithms)";
}

}  // namespace

CompareRun run_comparison(const std::vector<LayerCase>& cases, const CompareRunOptions& opt) {
  if (opt.compare.device == DeviceKind::cuda && !cuda_info().available)
    fail("convlab layers --device cuda: no CUDA device (" + cuda_info().reason + ")");
  require_compare_memory(cases, opt.compare);  // before the machine probe and any find
  // The cache file follows every command's rule (require_cache_file): created when missing, its
  // folder must exist. The machine probe line is the one line the run adds to it.
  if (opt.use_cache) require_cache_file(opt.cache_path, "convlab layers --cache", false);
  CompareRun run;
  run.setup.probes = ensure_probes(opt);
  CompareOptions copt = opt.compare;
  if (opt.use_cache) {
    calibrate(opt, run.setup);
    copt.calibration = &run.setup.calibration;
  }
  if (opt.on_setup) opt.on_setup(run.setup);
  run.comparison = compare_layers(cases, copt);
  Comparison& cmp = run.comparison;
  if (!run.setup.probes.empty()) cmp.probes = run.setup.probes;
  cmp.network = opt.network;
  cmp.batch = opt.network.empty() ? 0 : opt.network_batch;
  cmp.run_id = make_run_id();
  run.has_scaling = opt.compare.threads.size() > 1;
  if (run.has_scaling) run.scaling = thread_scaling(cmp);
  return run;
}

// Each algorithm's time at the fewest threads over its time at the most.
ThreadScaling thread_scaling(const Comparison& c) {
  ThreadScaling s;
  int tlo = 1 << 30, thi = 0;
  for (const auto& r : c.rows) tlo = std::min(tlo, r.threads), thi = std::max(thi, r.threads);
  std::map<std::string, std::vector<double>> scal;
  for (const auto& a : c.rows) {
    if (a.threads != tlo || a.status != "ok") continue;
    for (const auto& b : c.rows)
      if (b.threads == thi && b.status == "ok" && b.algo == a.algo && b.layer == a.layer && b.dir == a.dir)
        scal[a.algo].push_back(a.time / b.time);
  }
  s.from_threads = tlo;
  s.to_threads = thi;
  for (auto& [algo, v] : scal) {
    double lg = 0;
    for (double x : v) lg += std::log(x);
    s.rows.push_back({algo, std::exp(lg / double(v.size())), v.size()});
  }
  return s;
}

}  // namespace convlab
