// convlab layers: the per-layer algorithm comparison run (autotune/compare_run.hpp).
// For every layer and direction, every available algorithm is checked against
// the fp64 reference and timed (find), the cost model ranks them without
// running (get), and the results are printed as a table and saved as JSON/CSV
// for the notebooks. The peak it reports against is measured, not assumed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <unistd.h>

#include "autotune/compare_run.hpp"
#include "autotune/model_comparison.hpp"
#include "core/error.hpp"
#include "core/machine_load.hpp"
#include "core/problem_list.hpp"
#include "core/thread_distance.hpp"
#include "core/npy.hpp"
#include "core/paths.hpp"
#include "core/results_folder.hpp"
#include "core/subprocess.hpp"
#include "report/layers.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

namespace {

void print_case(const LayerCase& lc, Direction dir, const PlacementRow& where, const std::vector<ComparisonRow>& rows) {
  std::printf("\n%s %s  [%s]  threads %d  %.4f GFLOP", lc.label.c_str(), std::string(to_string(dir)).c_str(),
              lc.problem.key().c_str(), where.threads, lc.problem.flops() * 1e-9);
  if (where.measured())
    std::printf("  (threads %.0f -> %.0f ns apart%s)", where.find_before_ns, where.find_after_ns,
                placement_changed(where.find_before_ns, where.find_after_ns) ? ": MOVED during find" : "");
  std::printf("\n");
  std::printf("  %-26s %-12s %10s %9s %7s %11s %10s  %s\n", "algorithm", "status", "median ms", "GFLOP/s", "%peak",
              "workspace", "max rel", "pick");
  for (const ComparisonRow& r : rows) {
    if (r.ran()) {
      // No measured peak (a GPU: `convlab peak` measures the CPU): "-", not nan%.
      char peak[16] = "      -";
      if (std::isfinite(r.peak_fraction)) std::snprintf(peak, sizeof peak, "%6.1f%%", r.peak_fraction * 100);
      std::printf("  %-26s %-12s %10.3f %9.1f %s %11s %10.2e  %s%s%s\n", r.algo.c_str(), r.status.c_str(),
                  r.time * 1e3, r.gflops(), peak, format_bytes(r.workspace).c_str(), r.max_rel_error,
                  r.find_choice ? "find " : "", r.tie && !r.find_choice ? "\u2248find " : "", r.get_choice ? "get" : "");
    } else
      std::printf("  %-26s %-12s %s\n", r.algo.c_str(), r.status.c_str(), r.note.c_str());
  }
  if (std::any_of(rows.begin(), rows.end(), [](const ComparisonRow& r) { return r.tie && !r.find_choice; }))
    std::printf("  (\u2248find: not told apart from find's pick -- the medians' 95 %% intervals overlap)\n");
  std::fflush(stdout);
}

void print_vendor(const std::vector<VendorRow>& rows) {
  for (const VendorRow& v : rows) {
    if (v.choice.source.empty())
      std::printf("  vendor none: %s\n", v.status.c_str());
    else
      std::printf("  vendor %s\n", vendor_text(v.choice, v.find_algo, v.find_time, v.get_algo, v.get_time).c_str());
  }
  if (!rows.empty() && !rows.front().choice.source.empty() && rows.front().status != "ok")
    std::printf("  vendor %s\n", rows.front().status.c_str());
  std::fflush(stdout);
}

void print_duel(const DuelRow& d) {
  if (d.rounds == 0)
    std::printf("  interleaved: none (%s)\n", d.note.c_str());
  else
    std::printf("  interleaved, %d rounds: %s %.3f ms, %s %.3f ms: speed %.2fx [%.2f, %.2f]%s\n", d.rounds,
                d.own.c_str(), d.own_ms, d.peer.c_str(), d.peer_ms, d.speed, d.lo, d.hi,
                d.lo > 1 ? " (hand-written faster)" : d.hi < 1 ? " (vendor faster)" : " (not told apart)");
  std::fflush(stdout);
}

Args layers_args() {
  Args args("layers", "NET|PROBLEM... [options]",
            "The per-layer comparison run: for each layer and direction, every available algorithm's median\n"
            "time, effective GFLOP/s (direct-convolution FLOPs / time), fraction of the measured FMA peak,\n"
            "workspace, max relative error vs the fp64 reference (on a 1-image slice), and which algorithm\n"
            "get (cost model, nothing runs) and find (fastest measured within tolerance) pick, and beside\n"
            "them the vendor's own pick (oneDNN auto's implementation on the CPU; cuDNN Find and Get_v7\n"
            "on a GPU) with our measured time for it.\n"
            "NET is alexnet, alexnet-owt, vgg16, resnet50, mobilenet_v2 or densenet121; PROBLEM a benchdnn\n"
            "string or a layer id; @FILE (@- stdin) one problem per line, or a oneDNN verbose log\n"
            "(ONEDNN_VERBOSE=1 output) whose convolution lines give problem and direction (used unless --dir\n"
            "is given).");
  args.positionals("NET|PROBLEM|@FILE...", "networks, layer ids, benchdnn problem strings or @FILE lists", 1, 1000);
  args.option("device", "DEV", "cpu or cuda", "cpu");
  args.option("dir", "DIRS", "comma-separated directions, or all; without --dir a oneDNN verbose line keeps its own direction", "all");
  args.option("batch", "N", "override every minibatch (networks and layer ids default to 32)");
  args.option("threads", "LIST", "comma-separated CPU thread counts, e.g. 1,2 (0 = all)", "0");
  args.option("json", "F", "write the results as JSON (atomically)");
  args.option("csv", "F", "write the results as CSV (atomically)");
  args.option("cache", "F",
              "calibrate get's cost model from this autotune cache (its entries of this device and --threads; the\n"
              "machine probe is kept there too); created if missing, its folder must exist");
  args.option("max-seconds", "S", "timed work per candidate before the median is taken as is", "0.3");
  args.flag("tf32", "also run the reduced-precision (TF32 tensor-core) algorithms, cuda.*_tf32 and cudnn.*_tf32, side\n"
                    "by side with the fp32 ones (find's pick may then be one of them)");
  args.option("model", "CARD",
              "no GPU needed: MODELLED times for a GPU that is not here (h100 or h200; with --device cuda): the\n"
              "hand-written cuda.* kernels counted by the SIMT emulator (simt_counts, beside convlab) and priced on\n"
              "the card's published limits with efficiencies fitted on its measured rows; cuDNN and the cuBLAS /\n"
              "cuFFT paths are listed as not modelled. Nothing is measured");
  args.flag("reprobe", "measure the machine probe again (get's rates; a few seconds per thread count) even when the cache has one");
  args.flag("no-interleaved",
            "CPU: skip timing the fastest hand-written algorithm and the fastest oneDNN one again, interleaved\n"
            "(about half a second per layer and direction), after find");
  return args;
}

// Everything but the cases: device, directions, threads, --max-seconds, the output paths.
CompareRunOptions layers_options(const Args& args) {
  CompareRunOptions run;
  CompareOptions& opt = run.compare;
  opt.device = parse_device(args.get("device"));
  std::string dir_note;
  opt.dirs = parse_directions(args.get("dir"), &dir_note);
  if (!dir_note.empty()) std::fprintf(stderr, "note: %s\n", dir_note.c_str());
  opt.threads.clear();
  for (long t : args.get_int_list("threads", 0, 4096)) opt.threads.push_back(int(t));
  try {
    size_t used = 0;
    opt.max_seconds = std::stod(args.get("max-seconds"), &used);
    if (used != args.get("max-seconds").size()) throw 0;
  } catch (...) {
    fail("convlab layers: --max-seconds expects a number, got '" + printable(args.get("max-seconds")) + "'");
  }
  if (!(opt.max_seconds > 0)) fail("convlab layers: --max-seconds must be positive");
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const char* out : {"json", "csv"})
    if (args.has(out)) {
      require_output_path(args.get(out), std::string("convlab layers: --") + out);
      outputs.emplace_back(std::string("--") + out, args.get(out));
    }
  if (args.has("cache")) outputs.emplace_back("--cache", args.get("cache"));  // read, and its probe line written
  require_distinct_outputs(outputs, "convlab layers");
  run.use_cache = args.has("cache");
  if (run.use_cache) run.cache_path = args.get("cache");
  run.reprobe = args.has("reprobe");
  opt.tf32 = args.has("tf32");
  opt.on_case = print_case;
  opt.on_vendor = print_vendor;
  opt.on_duel = print_duel;
  opt.duel = !args.has("no-interleaved");
  return run;
}

// After the comparison: the measured peaks and bandwidth, the machine's load, the thread scaling.
void print_summary(const CompareRun& run) {
  const Comparison& cmp = run.comparison;
  for (const PeakResult& pr : cmp.peaks)
    std::printf("\nmeasured FMA peak: %.1f GFLOP/s with %d thread(s) (%s)", pr.gflops, pr.threads, pr.isa.c_str());
  if (cmp.bandwidth_gbs > 0) std::printf("\nmeasured stream bandwidth: %.1f GB/s\n", cmp.bandwidth_gbs);
  std::printf("%s%s\n", cmp.bandwidth_gbs > 0 ? "" : "\n", load_text(cmp.load).c_str());
  if (const std::string p = placement_text(cmp.placements); !p.empty()) std::printf("%s\n", p.c_str());
  if (!run.has_scaling) return;
  std::printf("\nthread scaling, %d -> %d threads (geometric mean of speedups over layers and directions):\n",
              run.scaling.from_threads, run.scaling.to_threads);
  for (const ThreadScalingRow& r : run.scaling.rows)
    std::printf("  %-26s x%.2f  (%zu cases)\n", r.algo.c_str(), r.speedup, r.cases);
}

void print_modelled_case(const LayerCase& lc, Direction dir, const std::vector<ComparisonRow>& rows) {
  std::printf("\n%s %s  [%s]  %.4f GFLOP  (MODELLED, not measured)\n", lc.label.c_str(),
              std::string(to_string(dir)).c_str(), lc.problem.key().c_str(), lc.problem.flops() * 1e-9);
  std::printf("  %-26s %-13s %11s %9s  %s\n", "algorithm", "status", "modelled ms", "GFLOP/s", "note");
  for (const ComparisonRow& r : rows) {
    if (r.status == "modelled")
      std::printf("  %-26s %-13s %11.3f %9.1f  %s\n", r.algo.c_str(), r.status.c_str(), r.time * 1e3, r.gflops(),
                  r.note.c_str());
    else
      std::printf("  %-26s %-13s %11s %9s  %s\n", r.algo.c_str(), r.status.c_str(), "-", "-", r.note.c_str());
  }
  std::fflush(stdout);
}

// --model CARD: the modelled table; every option that would measure is refused first.
int layers_modelled(const Args& args, const std::vector<LayerCase>& cases, const CompareRunOptions& opt) {
  if (opt.compare.device != DeviceKind::cuda)
    fail("convlab layers: --model prices the CUDA algorithms on a GPU that is not here; give --device cuda");
  for (const char* measuring : {"cache", "reprobe"})
    if (args.has(measuring))
      fail(std::string("convlab layers: --") + measuring + " belongs to a measured run, not to --model");
  ModelRunOptions mo;
  mo.card = &gpu_card(args.get("model"));
  mo.dirs = opt.compare.dirs;
  mo.tf32 = opt.compare.tf32;
  const char* env = std::getenv("CONVLAB_SIMT_COUNTS");
  mo.counter = env && *env ? env : executable_dir() + "/simt_counts";
  if (::access(mo.counter.c_str(), X_OK) != 0)
    fail("convlab layers: --model needs the SIMT emulator's counting build, simt_counts (built beside convlab by a "
         "GCC build with tests); not found at '" + printable(mo.counter) + "' (CONVLAB_SIMT_COUNTS names another)");
  mo.on_case = print_modelled_case;
  std::printf("convlab layers: MODELLED times on %s -- nothing is measured; %s\n", std::string(mo.card->label).c_str(),
              std::string(mo.card->fitted_on).c_str());
  Comparison cmp = model_comparison(cases, mo);
  cmp.network = opt.network;
  cmp.batch = opt.network_batch;
  for (const char* out : {"json", "csv"})
    if (args.has(out)) {
      write_file_atomic(args.get(out), *out == 'j' ? comparison_json(cmp) : comparison_csv(cmp));
      std::printf("wrote %s\n", printable(args.get(out)).c_str());
    }
  return 0;
}

}  // namespace

int cmd_layers(int argc, char** argv) {
  Args args = layers_args();
  if (!args.parse(argc, argv)) return 0;
  CompareRunOptions opt = layers_options(args);
  const ProblemSet set = expand_problem_args(args);
  std::vector<LayerCase> cases;
  for (const ProblemItem& it : set.items)
    cases.push_back({it.label, it.problem, item_directions(it, opt.compare.dirs, args.has("dir"))});
  for (const auto& n : set.networks) opt.network = opt.network.empty() ? n : opt.network + "+" + n;
  opt.network_batch = set.network_batch;
  if (args.has("model")) return layers_modelled(args, cases, opt);
  opt.on_setup = [&](const CompareSetup& s) {
    std::printf("convlab layers on %s%s\n", device_fingerprint(opt.compare.device, 0).c_str(),
                opt.network.empty() ? "" : (", batch " + std::to_string(opt.network_batch)).c_str());
    for (const auto& [t, p] : s.probes) std::printf("%s (%d threads)\n", p.text().c_str(), t);
    if (!s.calibration_line.empty()) std::printf("%s\n", s.calibration_line.c_str());
  };
  const CompareRun run = run_comparison(cases, opt);
  print_summary(run);
  for (const char* out : {"json", "csv"})
    if (args.has(out)) {
      write_file_atomic(args.get(out), *out == 'j' ? comparison_json(run.comparison) : comparison_csv(run.comparison));
      std::printf("wrote %s\n", printable(args.get(out)).c_str());
    }
  return 0;
}

}  // namespace convlab::cli
