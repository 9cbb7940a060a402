// convlab tune: find vs get per (layer, direction), with the persistent cache (autotune/tune.hpp does
// the work, report/tune_json.hpp writes --json).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "autotune/cache.hpp"
#include "autotune/policy.hpp"
#include "autotune/tune.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/machine_load.hpp"
#include "core/paths.hpp"
#include "core/problem_list.hpp"
#include "report/tune_json.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

namespace {

// A progress bar on a terminal, plain lines otherwise (both on stderr).
class Progress {
 public:
  explicit Progress(bool quiet) : tty_(::isatty(2) != 0), quiet_(quiet) {}
  void step(int done, int total, const std::string& what) {
    if (quiet_) return;
    if (!tty_) {
      std::fprintf(stderr, "tune %d/%d %s\n", done + 1, total, what.c_str());
      return;
    }
    const int width = 24, fill = total ? done * width / total : 0;
    std::fprintf(stderr, "\r[%s%s] %d/%d %s\x1b[K", std::string(size_t(fill), '#').c_str(),
                 std::string(size_t(width - fill), '.').c_str(), done, total, what.c_str());
    std::fflush(stderr);
  }
  void finish() {
    if (tty_ && !quiet_) std::fprintf(stderr, "\r\x1b[K");
  }

 private:
  bool tty_, quiet_;
};

std::string ratio(double r) {
  char b[32];
  if (!std::isfinite(r)) return "rejected";
  std::snprintf(b, sizeof b, "%.2f", r);
  return b;
}

std::string summary_line(const AgreementSummary& s) {
  char b[256];
  std::snprintf(b, sizeof b, "top-1 agrees %d/%d, within 10%% %d/%d, geomean get/find %.3f, total %.3fx%s", s.same,
                s.pairs, s.within_10pct, s.pairs, s.geomean_slowdown,
                s.total_find > 0 ? s.total_get / s.total_find : 1.0,
                s.get_rejected ? (", " + std::to_string(s.get_rejected) + " picks rejected by find").c_str() : "");
  return b;
}

// A time's 95 % interval, "[lo, hi]" in ms; "-" when there is none.
std::string interval(const AlgoPerf& r) {
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, "[%.3f, %.3f]", r.lo * 1e3, r.hi * 1e3);
  return b;
}

// The ranked list; "≈" before a rank marks a tie with the choice (AlgoPerf::tie).
void print_list(const std::vector<AlgoPerf>& l, bool measured) {
  std::printf("    %-5s %-26s %-14s %10s %20s %7s %12s %10s %4s  %s\n", "rank", "algorithm", "status",
              measured ? "median ms" : "pred. ms", measured ? "95% interval ms" : "", "spread", "workspace", "max rel",
              "det", "note");
  int i = 0;
  for (const AlgoPerf& r : l) {
    char spread[16] = "-", err[16] = "-";
    if (measured && r.status == PerfStatus::ok) std::snprintf(spread, sizeof spread, "%.1f%%", r.spread * 100);
    if (std::isfinite(r.max_rel_error)) std::snprintf(err, sizeof err, "%.2e", r.max_rel_error);
    // A cache hit's list comes from the cache file: its names and notes are file content.
    std::printf("    %s%-3d %-26s %-14s %10s %20s %7s %12s %10s %4s  %s\n", r.tie ? "\u2248 " : "  ", ++i,
                printable(r.algo).c_str(), std::string(to_string(r.status)).c_str(), ms(r.time).c_str(),
                measured ? interval(r).c_str() : "", spread, format_bytes(r.workspace).c_str(), err, r.deterministic ? "yes" : "no",
                printable(r.note).c_str());
  }
}

// find's choice and the candidates it cannot tell apart from it.
void tie_line(const TunePair& pr) {
  if (pr.find_ties.empty()) return;
  std::string s;
  for (const std::string& t : pr.find_ties)
    for (const AlgoPerf& r : pr.found)
      if (r.algo == t) s += (s.empty() ? "" : ", ") + t + " " + ms(r.time) + " " + interval(r);
  const AlgoPerf* f = nullptr;
  for (const AlgoPerf& r : pr.found)
    if (r.algo == pr.find_algo) f = &r;
  std::printf("    \u2248 find's %s (%s ms %s) is not told apart from: %s ms\n", pr.find_algo.c_str(),
              f ? ms(f->time).c_str() : "-", f ? interval(*f).c_str() : "-", s.c_str());
}

void vendor_lines(const TunePair& pr) {
  for (const VendorChoice& v : pr.vendor.choices)
    std::printf("    vendor %s\n", vendor_text(v, pr.find_algo, pr.find_time, pr.get_algo, pr.get_time).c_str());
  if (pr.vendor.status != "ok")
    std::printf("    vendor %s%s\n", pr.vendor.choices.empty() ? "none: " : "", pr.vendor.status.c_str());
}

// get's choice against find's: the same, tied with it (find cannot tell them apart), within 10 %, or not.
const char* agreement(const TunePair& pr) {
  const Agreement& a = pr.in_sample;
  if (a.same()) return "yes";
  if (std::find(pr.find_ties.begin(), pr.find_ties.end(), a.get_algo) != pr.find_ties.end()) return "tie";
  return a.slowdown() <= 1.10 ? "within 10%" : "no";
}

// The text report after its first line: candidates, cache, one line per pair (+ vendor lines, --list), summaries.
void print_text(const TuneResult& res, bool find, bool list) {
  std::printf("candidates: %zu", res.candidates);
  if (res.candidates == 0) std::printf(" (only the reference is registered for this device: nothing to tune)");
  std::printf("\n");
  if (!res.cache_path.empty()) {
    std::string partly;
    if (res.partly)
      partly = " (" + std::to_string(res.partly) + " of them in part: only the candidates new, changed or fitting the limit since)";
    std::printf("cache: %s (%d hits, %d tuned%s, calibration from %d measurements)\n", printable(res.cache_path).c_str(),
                res.cache_hits, res.tuned, partly.c_str(), res.calibration_samples);
  } else {
    std::printf("cache: none (nothing is kept)\n");
  }
  if (res.probe.source != ProbeOutcome::Source::none) std::printf("%s\n", res.probe.text().c_str());
  std::printf("\n");
  if (!find) {
    std::printf("%-18s %-10s %-24s %10s  %s\n", "layer", "dir", "get", "pred. ms", "model");
    for (const TunePair& pr : res.pairs) {
      const AlgoPerf* g = pr.get_choice();
      std::printf("%-18s %-10s %-24s %10s  %s\n", pr.label.c_str(), std::string(to_string(pr.dir)).c_str(),
                  g ? g->algo.c_str() : "-", g ? ms(g->time).c_str() : "-", g ? g->note.c_str() : "no acceptable candidate");
      vendor_lines(pr);
      if (list) print_list(pr.got_in_sample, false);
    }
    return;
  }
  const char* row = "%-18s %-10s %-24s %-24s %10s %10s %8s %s\n";
  std::printf(row, "layer", "dir", "get (calibrated)", "find", "t_get ms", "t_find ms", "get/find", "agree");
  for (const TunePair& pr : res.pairs) {
    const std::string dir(to_string(pr.dir));
    const Agreement& a = pr.in_sample;
    if (!pr.compared)
      std::printf(row, pr.label.c_str(), dir.c_str(), "-", "-", "-", "-", "-", "no acceptable candidate");
    else
      std::printf(row, pr.label.c_str(), dir.c_str(), a.get_algo.empty() ? "-" : a.get_algo.c_str(), a.find_algo.c_str(),
                  ms(a.get_time).c_str(), ms(a.find_time).c_str(), ratio(a.slowdown()).c_str(),
                  agreement(pr));
    tie_line(pr);
    vendor_lines(pr);
    if (list) print_list(pr.found, true);
  }
  std::printf("\nget vs find over %d pairs:\n", res.compared);
  std::printf("  uncalibrated                          %s\n", summary_line(res.uncalibrated).c_str());
  std::printf("  calibrated (in-sample)                %s\n", summary_line(res.in_sample).c_str());
  std::printf("  calibrated (leave-one-layer-out)      %s\n", summary_line(res.leave_one_out).c_str());
  for (const VendorTally& t : res.vendor)
    std::printf("vendor %-12s vs find over %d pairs: %s\n", t.source.c_str(), t.pairs, tally_text(t).c_str());
  if (res.vendor.empty())
    std::printf("vendor vs find: no vendor choice (%s)\n",
                res.pairs.empty() ? "no pairs" : res.pairs.front().vendor.status.c_str());
  std::printf("find wall time: %.1f s (%d pairs tuned, %d from cache or repeated shapes)\n", res.find_seconds, res.tuned,
              int(res.pairs.size()) - res.tuned);
  if (res.load_measured) std::printf("%s\n", load_text(res.load).c_str());
}

Args tune_args() {
  Args args("tune", "NET|PROBLEM... [--mode both|find|get] [--dir all|fwd,...] [--cache FILE] [options]",
            "Autotunes every (layer, direction): find times every candidate algorithm (checked against the\n"
            "fp64 reference on a batch slice; inaccurate ones are never chosen), get ranks them with the\n"
            "cost model (nothing runs; on the CPU its rates come from the machine probe, measured once per\n"
            "device and algorithm versions in a few seconds and kept in the cache file; --reprobe measures it\n"
            "again).\n"
            "Mode both prints, per layer and direction, get's choice after calibration from this run's find\n"
            "results, find's choice, both measured times and whether they agree, then a summary for get\n"
            "uncalibrated (the probed model alone), calibrated in-sample and calibrated leave-one-layer-out.\n"
            "find's results are kept in the autotune cache (the default cache unless --cache names another\n"
            "file, or --no-cache asks for none): a pair tuned before is answered from it, and only algorithms\n"
            "whose code or libraries changed since are timed again; its other entries for this device also\n"
            "calibrate get. Candidates find cannot tell apart from its choice (median intervals overlap)\n"
            "are listed under the pair and marked \u2248 in --list; the machine's load around find is measured\n"
            "and a disturbed run is said, with its numbers.\n"
            "Under each pair, the vendor's own pick:\n"
            "on the CPU onednn.auto's oneDNN implementation, on a GPU cuDNN's Find (it times every\n"
            "algorithm itself) and Get_v7 (its heuristic), each with our find's measured time for it.\n"
            "Reduced-precision algorithms (the cuDNN *_tf32 variants) are candidates only with --tf32.");
  args.positionals("NET|PROBLEM|@FILE",
                   "network (alexnet, vgg16, ...), layer id (alexnet.conv2), benchdnn descriptor, or @FILE (@- stdin):\n"
                   "one problem per line, or a oneDNN verbose log whose convolution lines give problem and direction",
                   1, 64);
  args.option("mode", "MODE", "both, find or get", "both");
  args.option("dir", "DIRS",
              "all, or a comma list of fwd, bwd-data, bwd-filter; without --dir a oneDNN verbose line keeps its own "
              "direction",
              "all");
  args.option("batch", "N", "override every minibatch (networks and layer ids default to 32)");
  args.option("cache", "FILE",
              "autotune cache (JSON lines) to read and update instead of the default one ($CONVLAB_CACHE, else\n"
              "$XDG_CACHE_HOME/convlab/autotune.jsonl, else ~/.cache/convlab/autotune.jsonl); checked before tuning\n"
              "(created if missing; its folder must exist). It also keeps the machine probe get's model uses");
  args.flag("no-cache", "read and write no cache file: find times every pair, nothing is kept (the probe too is measured here)");
  args.flag("retune", "ignore cache hits (re-run find and overwrite the entries)");
  args.flag("reprobe", "measure the machine probe again (get's rates; a few seconds) even when the cache has one");
  args.option("workspace-limit", "BYTES", "largest workspace a candidate may use (e.g. 256M)");
  args.option("max-error", "E", "accuracy budget: largest measured relative error a choice may have");
  args.flag("deterministic", "only choose deterministic algorithms");
  args.flag("tf32", "also consider reduced-precision (TF32 tensor-core) algorithms, and ask cuDNN with TF32 allowed");
  args.option("threads", "N", "CPU threads (0 = all)", "0");
  args.option("device", "DEV", "cpu or cuda", "cpu");
  args.option("check-batch", "N", "images in find's accuracy-check slice", "1");
  args.option("max-seconds", "S", "timed work per candidate before find stops waiting for a stable median", "0.3");
  args.flag("list", "print every pair's full ranked list (find's, else get's)");
  args.flag("json", "machine-readable output (one JSON document on stdout)");
  args.flag("quiet", "no progress output on stderr");
  return args;
}

// A positive number, else one line naming the option.
double positive(const Args& args, const std::string& name, const std::string& error) {
  char* end = nullptr;
  const std::string v = args.get(name);
  const double x = std::strtod(v.c_str(), &end);
  if (*end != '\0' || !(x > 0)) fail(error);
  return x;
}

// --cache F, else the default cache unless --no-cache; checked before tuning.
std::string tune_cache_path(const Args& args, bool writes) {
  if (args.has("cache") && args.has("no-cache")) fail("convlab tune: --cache and --no-cache exclude each other");
  if (args.has("cache")) {
    // Up front: a typo must not throw away the tuning (a missing file is an empty cache, created on save).
    require_cache_file(args.get("cache"), "convlab tune --cache", writes);
    return args.get("cache");
  }
  if (args.has("no-cache")) return "";
  // The default cache, as a user find-db: a machine where it cannot be written still tunes, and says so.
  try {
    const std::string def = TuneCache::default_path();  // no HOME: none, said below
    require_cache_file(def, "the default autotune cache", writes);
    return def;
  } catch (const Error& e) {
    std::fprintf(stderr, "warning: %s; nothing will be kept (--cache FILE keeps it elsewhere, --no-cache says so)\n",
                 e.what());
  }
  return "";
}

// The options in the order they are checked; `problems` gets the expanded positionals.
TuneOptions tune_options(const Args& args, ProblemSet& problems) {
  const std::string mode = args.get("mode");
  if (mode != "both" && mode != "find" && mode != "get") fail("convlab tune: --mode must be both, find or get");
  TuneOptions opt;
  opt.find = mode != "get";
  problems = expand_problem_args(args);
  std::string dir_note;
  opt.dirs = parse_directions(args.get("dir"), &dir_note);
  if (!dir_note.empty()) std::fprintf(stderr, "note: %s\n", dir_note.c_str());
  opt.dirs_given = args.has("dir");
  opt.ctx.device = parse_device(args.get("device"));
  opt.ctx.threads = int(args.get_int("threads", 0, 4096));
  Constraints& cons = opt.constraints;
  if (args.has("workspace-limit")) cons.workspace_limit = parse_bytes(args.get("workspace-limit"));
  if (args.has("max-error"))
    cons.max_error = positive(args, "max-error",
                              "convlab tune: --max-error expects a positive number, got '" + args.get("max-error") + "'");
  cons.deterministic = args.has("deterministic");
  cons.tf32 = args.has("tf32");
  if (opt.ctx.device == DeviceKind::cuda && !cuda_info().available)
    fail("convlab tune --device cuda: no CUDA device (" + cuda_info().reason + ")");
  opt.find_options.check_batch = int(args.get_int("check-batch", 1, 64));
  opt.find_options.max_seconds = positive(args, "max-seconds", "convlab tune: --max-seconds expects a positive number");
  opt.cache_path = tune_cache_path(args, opt.find);
  opt.retune = args.has("retune");
  opt.reprobe = args.has("reprobe");
  return opt;
}

}  // namespace

std::string ms(double s) {
  char b[32];
  if (!std::isfinite(s)) return "-";
  std::snprintf(b, sizeof b, "%.3f", s * 1e3);
  return b;
}

int cmd_tune(int argc, char** argv) {
  Args args = tune_args();
  if (!args.parse(argc, argv)) return 0;
  ProblemSet problem_set;
  TuneOptions opt = tune_options(args, problem_set);
  Progress progress(args.has("quiet"));
  opt.on_step = [&](int i, int n, const std::string& what) { progress.step(i, n, what); };
  opt.on_find_done = [&] { progress.finish(); };

  const TuneResult res = tune(problem_set.items, opt);
  const std::string mode = args.get("mode");
  if (args.has("json")) {
    std::printf("%s\n", tune_json(res, mode, opt.find).c_str());
  } else {
    std::printf("convlab tune: %zu layer(s), %zu (layer, direction) pair(s) on %s (%s), mode %s\n",
                problem_set.items.size(), res.pairs.size(), std::string(to_string(opt.ctx.device)).c_str(),
                res.fingerprint.c_str(), mode.c_str());
    print_text(res, opt.find, args.has("list"));
  }
  return res.no_choice ? 1 : 0;
}


}  // namespace convlab::cli
