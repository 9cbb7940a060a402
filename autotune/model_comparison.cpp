// model_comparison (model_comparison.hpp).
#include "autotune/model_comparison.hpp"

#include <algorithm>
#include <cmath>

#include "algorithms/registry.hpp"
#include "core/error.hpp"
#include "core/subprocess.hpp"

namespace convlab {

namespace {

std::string first_line(const std::string& text) {
  std::string s = text.substr(0, text.find('\n'));
  if (s.rfind("error: ", 0) == 0) s = s.substr(7);
  return s.empty() ? "no message" : s;
}

// One algorithm's row for (problem, dir): counted and priced, or why not.
ComparisonRow model_row(const Algorithm& a, const LayerCase& lc, Direction dir, bool emulated,
                        const ModelRunOptions& opt) {
  ComparisonRow r;
  r.layer = lc.label;
  r.problem = lc.problem.canonical();
  r.dir = std::string(to_string(dir));
  r.algo = std::string(a.name());
  r.family = std::string(a.family());
  r.flops = double(lc.problem.flops());
  r.time = NAN;
  r.peak_fraction = NAN;
  r.max_rel_error = NAN;
  const Support s = a.supports(lc.problem, dir);
  // Without a device a vendor convolution cannot say whether it supports the problem (cuDNN is asked): that
  // is "not modelled" below, while a reason of its own (the wrong direction) is "unsupported".
  const std::string no_device = a.unavailable_reason();
  const bool undecided = !s.ok && !no_device.empty() && s.reason.rfind(no_device, 0) == 0;
  if (!s.ok && !undecided) {
    r.status = "unsupported";
    r.note = s.reason;
    return r;
  }
  if (!emulated) {
    r.status = "not modelled";
    r.note = a.vendor_peer() ? "a vendor library's convolution: its kernels are not emulated"
                             : "its GEMM or FFT is a vendor library's (cuBLAS / cuFFT): not emulated";
    return r;
  }
  const ProcessResult pr = run_process({opt.counter, r.algo, lc.problem.key(), "--dir", r.dir, "--sample",
                                        std::to_string(opt.sample_blocks), "--csv"},
                                       opt.timeout_s);
  if (pr.timed_out || pr.exit_code != 0) {
    r.status = "failed";
    r.note = pr.timed_out ? "the emulator's count did not finish in " + std::to_string(int(opt.timeout_s)) + " s"
                          : "simt_counts: " + first_line(pr.err);
    return r;
  }
  const std::vector<LaunchCounts> launches = parse_launch_counts(pr.out);
  const ModelledTime t = modelled_time(launches, *opt.card);
  r.status = "modelled";
  r.time = t.seconds;
  r.note = "modelled on " + std::string(opt.card->name) + ": " + std::to_string(launches.size()) +
           " launch(es), the longest bound by " + t.bound;
  return r;
}

}  // namespace

std::vector<std::string> emulated_algorithms(const std::string& counter) {
  const ProcessResult pr = run_process({counter, "--list"}, 60);
  if (pr.timed_out || pr.exit_code != 0)
    fail("'" + printable(counter) + " --list' failed: " + (pr.timed_out ? "no answer in 60 s" : first_line(pr.err)));
  std::vector<std::string> names;
  for (size_t pos = 0; pos < pr.out.size();) {
    const size_t nl = std::min(pr.out.find('\n', pos), pr.out.size());
    if (nl > pos) names.push_back(pr.out.substr(pos, nl - pos));
    pos = nl + 1;
  }
  if (names.empty()) fail("'" + printable(counter) + " --list' listed no emulated algorithm");
  return names;
}

Comparison model_comparison(const std::vector<LayerCase>& cases, const ModelRunOptions& opt) {
  if (!opt.card) fail("model_comparison: no GPU card given");
  const std::vector<std::string> emulated = emulated_algorithms(opt.counter);
  Comparison cmp;
  cmp.device = DeviceKind::cuda;
  cmp.fingerprint = "modelled " + std::string(opt.card->label) + "; " + std::string(opt.card->fitted_on);
  for (const LayerCase& lc : cases)
    for (Direction dir : lc.dirs.empty() ? opt.dirs : lc.dirs) {
      std::vector<ComparisonRow> rows;
      for (const Algorithm* a : registry()) {
        if (a->device() != DeviceKind::cuda || a->is_oracle() || (!opt.tf32 && a->math() != "fp32")) continue;
        if (opt.keep && !opt.keep(lc, dir, *a)) continue;
        const bool emu = std::find(emulated.begin(), emulated.end(), a->name()) != emulated.end();
        rows.push_back(model_row(*a, lc, dir, emu, opt));
      }
      std::stable_sort(rows.begin(), rows.end(), [](const ComparisonRow& x, const ComparisonRow& y) {
        const bool mx = x.status == "modelled", my = y.status == "modelled";
        return mx != my ? mx : mx && x.time < y.time;
      });
      if (opt.on_case) opt.on_case(lc, dir, rows);
      cmp.rows.insert(cmp.rows.end(), rows.begin(), rows.end());
    }
  return cmp;
}

}  // namespace convlab
