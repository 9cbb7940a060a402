#include "report/report_run.hpp"

#include "autotune/compare.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/layers.hpp"
#include "core/results_folder.hpp"
#include "report/html/report_html.hpp"
#include "report/layers.hpp"
#include "report/report.hpp"

namespace convlab::train {

namespace {

// Why the GPU half does not run ("" = it runs); with --gpu on, a reason is an error.
std::string gpu_skip_reason(const ReportRunOptions& opt) {
  if (opt.gpu == GpuHalf::off) return "--gpu off";
  if (!cuda_info().available) return "no CUDA device (" + cuda_info().reason + ")";
  TrainConfig c = opt.cfg;
  c.device = DeviceKind::cuda;
  std::string skip = why_no_policy_can_run(c);
  if (skip.empty()) skip = why_nets_do_not_fit(c);
  if (!skip.empty() && opt.gpu == GpuHalf::on) fail("convlab report --gpu on: " + skip);
  return skip;
}

// Every file name of a report folder: an earlier run's that this run does not write are removed.
std::vector<std::string> report_family() {
  std::vector<std::string> family = {"report.md", "report.html"};
  for (const char* suffix : {"", "_cuda"})
    for (const char* f : {"train", "layers"})
      for (const char* ext : {".json", ".csv"}) family.push_back(std::string(f) + suffix + ext);
  return family;
}

// What the halves add up, and where it goes.
struct Report {
  const ReportRunOptions& opt;
  ResultsFolder& folder;
  ReportRun& run;
  HtmlInputs html;  // report.html: drawn from the same JSON texts the files get

  void log(const std::string& line) const {
    if (opt.log) opt.log(line);
  }
  void progress(const std::string& line) const {
    if (opt.progress) opt.progress(line);
  }
};

void compare_half(Report& r, DeviceKind device, const std::string& suffix, HtmlHalf& page) {
  const TrainConfig& cfg = r.opt.cfg;
  const std::string where(to_string(device));
  r.log("convlab report: per-layer comparison on " + where + ", " + cfg.net + " at batch " + std::to_string(cfg.batch));
  CompareOptions opt;
  opt.device = device;
  opt.threads = {cfg.threads};
  opt.on_case = [&r](const LayerCase& lc, Direction dir, const PlacementRow&, const std::vector<ComparisonRow>& rows) {
    for (const auto& row : rows)
      if (row.ran())
        r.progress(lc.label + " " + std::string(to_string(dir)) + " " + row.algo + ": " + std::to_string(row.time * 1e3) +
                   " ms");
  };
  std::vector<LayerCase> cases;
  for (const auto& l : network_layers(cfg.net, cfg.batch)) cases.push_back({l.id, l.problem, {}});
  Comparison cmp = compare_layers(cases, opt);
  for (const auto& pr : cmp.probes) r.log("convlab report: " + pr.second.text());
  cmp.network = cfg.net;
  cmp.batch = cfg.batch;
  cmp.run_id = r.run.run_id;
  r.run.markdown += "# Per-layer algorithm comparison on " + where + ": " + cfg.net + " at batch " +
                    std::to_string(cfg.batch) +
                    " (ms, median; fastest measured in bold; F = find's pick, G = get's pick, V = the vendor's pick "
                    "(oneDNN auto on the CPU, cuDNN Find on a GPU), Vh = cuDNN Get_v7's; - = unsupported)\n\n" +
                    comparison_markdown(cmp) + "\n";
  const std::string csv = comparison_csv(cmp);
  page.layers_json = comparison_json(cmp);
  r.folder.write("layers" + suffix + ".csv", csv);
  r.folder.write("layers" + suffix + ".json", page.layers_json);
  r.run.written.push_back("layers" + suffix + ".json");
  r.run.written.push_back("layers" + suffix + ".csv");
}

// The half's training config: --expect names the CPU half's policies; another half keeps those it
// also runs.
TrainConfig half_config(const Report& r, DeviceKind device) {
  TrainConfig c = r.opt.cfg;
  c.device = device;
  if (device == DeviceKind::cpu) return c;
  const std::vector<Expectation> all = c.expect;
  c.expect.clear();
  for (const auto& e : all) {
    TrainConfig one = c;
    one.expect = {e};
    try {
      check_expectations(one);
      c.expect.push_back(one.expect[0]);
    } catch (const Error&) {
      r.progress("--expect '" + printable(e.text) + "' is not checked on " + std::string(to_string(device)) +
                 ": its policies do not run there");
    }
  }
  return c;
}

void train_half(Report& r, DeviceKind device, const std::string& suffix, HtmlHalf& page) {
  const TrainConfig& cfg = r.opt.cfg;
  r.log("convlab report: training " + cfg.net + " on " + std::string(to_string(device)) + ", batch " +
        std::to_string(cfg.batch) + ", " + std::to_string(cfg.warmup) + " warm-up + " + std::to_string(cfg.iters) +
        " timed iterations per policy");
  const TrainConfig c = half_config(r, device);
  TrainReport rep = run_training(c, r.opt.progress);
  rep.run_id = r.run.run_id;
  if (!rep.expectations_met()) r.run.expectations_met = false;
  r.run.markdown += report_markdown(rep);
  page.train_json = report_json(rep);
  r.folder.write("train" + suffix + ".json", page.train_json);
  r.folder.write("train" + suffix + ".csv", report_csv(rep));
  r.run.written.push_back("train" + suffix + ".json");
  r.run.written.push_back("train" + suffix + ".csv");
  if (rep.baseline() < 0) r.run.all_ran = false;
  if (r.run.stopped.empty()) r.run.stopped = stopped_line(rep);
}

// One half: the per-layer comparison and the training run on `device`; files get `suffix`.
void half(Report& r, DeviceKind device, const std::string& suffix) {
  HtmlHalf& page = r.html.halves.emplace_back();
  page.title = device == DeviceKind::cpu ? "CPU" : "GPU";
  page.id_suffix = suffix.empty() ? "" : "-cuda";
  if (r.opt.compare) compare_half(r, device, suffix, page);
  train_half(r, device, suffix, page);
}

void gpu_half(Report& r, const std::string& gpu_skip) {
  if (!gpu_skip.empty()) {
    r.run.markdown += "\n# GPU half\n\nSkipped: " + gpu_skip + ".\n";
    r.html.halves.push_back({"GPU", "-cuda", "", "", "GPU half skipped: " + gpu_skip + "."});
    if (r.opt.gpu != GpuHalf::off) r.log("convlab report: GPU half skipped: " + gpu_skip);
    return;
  }
  // A failure on the GPU must not lose the CPU half's report: it is written, and the result says so.
  r.run.markdown += "\n";
  try {
    half(r, DeviceKind::cuda, "_cuda");
  } catch (const Error& e) {
    r.run.markdown += "\n# GPU half\n\nFailed: " + std::string(e.what()) + "\n";
    r.html.halves.back().note = "GPU half failed: " + std::string(e.what());
    r.log("error: convlab report: GPU half failed: " + std::string(e.what()));
    r.run.all_ran = false;
  }
}

}  // namespace

ReportRun run_report(const ReportRunOptions& opt) {
  if (opt.gpu == GpuHalf::on && !cuda_info().available)
    fail("convlab report --gpu on: no CUDA device (" + cuda_info().reason + ")");
  // Everything that can be refused is refused now, before the long work: the policies of each half and --out.
  if (std::string why = why_no_policy_can_run(opt.cfg); !why.empty()) fail("convlab report: " + why);
  if (std::string why = why_nets_do_not_fit(opt.cfg); !why.empty()) fail("convlab report: " + why);
  const std::string gpu_skip = gpu_skip_reason(opt);
  // The folder is written as a whole (core/results_folder.hpp): every file of this run lands at once at
  // the end, files of this family that the run does not write (an older layers.json) are removed, and
  // an interrupted run leaves the folder as it was.
  ResultsFolder folder(opt.out_dir, report_family(), "convlab report: --out");
  ReportRun run;
  run.dir = folder.dir();
  run.run_id = make_run_id();
  Report r{opt, folder, run, {}};
  r.html.command = opt.command;
  half(r, DeviceKind::cpu, "");
  gpu_half(r, gpu_skip);
  folder.write("report.md", run.markdown);
  r.html.source = "the files beside this page (" + run.dir + "/)";
  folder.write("report.html", report_html(r.html));
  run.removed = folder.commit();
  return run;
}

}  // namespace convlab::train
