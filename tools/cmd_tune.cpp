// convlab tune: find vs get per (layer, direction), with the persistent cache;
// convlab cache: show / check / merge cache files.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autotune/cache.hpp"
#include "autotune/find.hpp"
#include "autotune/get.hpp"
#include "autotune/policy.hpp"
#include "autotune/vendor.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "core/paths.hpp"
#include "core/problem_list.hpp"
#include "core/timing.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

namespace {

using Target = ProblemItem;

std::vector<Direction> parse_dirs(const std::string& text) {
  if (text == "all") return {std::begin(kAllDirections), std::end(kAllDirections)};
  std::vector<Direction> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = text.find(',', at);
    out.push_back(parse_direction(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

// A progress bar on a terminal, plain lines otherwise (both on stderr).
class Progress {
 public:
  Progress(int total, bool quiet) : total_(total), tty_(::isatty(2) != 0), quiet_(quiet) {}
  void step(int done, const std::string& what) {
    if (quiet_) return;
    if (!tty_) {
      std::fprintf(stderr, "tune %d/%d %s\n", done + 1, total_, what.c_str());
      return;
    }
    const int width = 24, fill = total_ ? done * width / total_ : 0;
    std::fprintf(stderr, "\r[%s%s] %d/%d %s\x1b[K", std::string(size_t(fill), '#').c_str(),
                 std::string(size_t(width - fill), '.').c_str(), done, total_, what.c_str());
    std::fflush(stderr);
  }
  void finish() {
    if (tty_ && !quiet_) std::fprintf(stderr, "\r\x1b[K");
  }

 private:
  int total_;
  bool tty_, quiet_;
};

struct Pair {
  const Target* target;
  Direction dir;
  std::vector<AlgoPerf> found;  // empty in get mode
  bool from_cache = false;
  double tune_seconds = 0;
  std::vector<AlgoPerf> got_uncal, got_in, got_loo;
  VendorReport vendor;  // the vendor library's own pick(s) (autotune/vendor.hpp)
};

std::string ms(double s) {
  char b[32];
  if (!std::isfinite(s)) return "-";
  std::snprintf(b, sizeof b, "%.3f", s * 1e3);
  return b;
}

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

std::string summary_json(const AgreementSummary& s) {
  return "{\"pairs\":" + std::to_string(s.pairs) + ",\"same\":" + std::to_string(s.same) +
         ",\"within_10pct\":" + std::to_string(s.within_10pct) + ",\"geomean_slowdown\":" + json::number(s.geomean_slowdown) +
         ",\"total_get\":" + json::number(s.total_get) + ",\"total_find\":" + json::number(s.total_find) +
         ",\"get_rejected\":" + std::to_string(s.get_rejected) + "}";
}

std::string list_json(const std::vector<AlgoPerf>& l) {
  std::string o = "[";
  for (size_t i = 0; i < l.size(); ++i) o += (i ? "," : "") + to_json(l[i]);
  return o + "]";
}

void print_list(const std::vector<AlgoPerf>& l, bool measured) {
  std::printf("    %-4s %-26s %-14s %10s %7s %12s %10s %4s  %s\n", "rank", "algorithm", "status",
              measured ? "median ms" : "pred. ms", "spread", "workspace", "max rel", "det", "note");
  int i = 0;
  for (const AlgoPerf& r : l) {
    char spread[16] = "-", err[16] = "-";
    if (measured && r.status == PerfStatus::ok) std::snprintf(spread, sizeof spread, "%.1f%%", r.spread * 100);
    if (std::isfinite(r.max_rel_error)) std::snprintf(err, sizeof err, "%.2e", r.max_rel_error);
    std::printf("    %-4d %-26s %-14s %10s %7s %12zu %10s %4s  %s\n", ++i, r.algo.c_str(),
                std::string(to_string(r.status)).c_str(), ms(r.time).c_str(), spread, r.workspace, err,
                r.deterministic ? "yes" : "no", r.note.c_str());
  }
}

}  // namespace

int cmd_tune(int argc, char** argv) {
  Args args("tune", "NET|PROBLEM... [--mode both|find|get] [--dir all|fwd,...] [--cache FILE] [options]",
            "Autotunes every (layer, direction): find times every candidate algorithm (checked against the\n"
            "fp64 reference on a batch slice; inaccurate ones are never chosen), get ranks them with the\n"
            "cost model (nothing runs). Mode both prints, per layer and direction, get's choice after\n"
            "calibration from this run's find results, find's choice, both measured times and whether they\n"
            "agree, then a summary for get uncalibrated, calibrated in-sample and calibrated leave-one-\n"
            "layer-out. With --cache, find results are read from / written to the JSON-lines cache file and\n"
            "its other entries for this device also calibrate get. Under each pair, the vendor's own pick:\n"
            "on the CPU cpu.onednn_auto's oneDNN implementation, on a GPU cuDNN's Find (it times every\n"
            "algorithm itself) and Get_v7 (its heuristic), each with our find's measured time for it.\n"
            "Reduced-precision algorithms (the cuDNN *_tf32 variants) are candidates only with --tf32.");
  args.positionals("NET|PROBLEM|@FILE",
                   "network (alexnet, vgg16, ...), layer id (alexnet.conv2), benchdnn descriptor, or @FILE (@- stdin):\n"
                   "one problem per line, or a oneDNN verbose log whose convolution lines give problem and direction",
                   1, 64);
  args.option("mode", "MODE", "both, find or get", "both");
  args.option("dir", "DIRS",
              "all, or a comma list of fwd, bwd-data, bwd-filter (default: all; a oneDNN verbose line's own direction)",
              "all");
  args.option("batch", "N", "override every minibatch (networks and layer ids default to 32)");
  args.option("cache", "FILE", "autotune cache (JSON lines) to read and update; checked before tuning (created if missing; its folder must exist)");
  args.flag("retune", "ignore cache hits (re-run find and overwrite the entries)");
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
  if (!args.parse(argc, argv)) return 0;

  const std::string mode = args.get("mode");
  if (mode != "both" && mode != "find" && mode != "get") fail("convlab tune: --mode must be both, find or get");
  const bool do_find = mode != "get";
  const int batch = args.has("batch") ? int(args.get_int("batch", 1, 1 << 20)) : 0;
  const ProblemSet problem_set = expand_problems(args.pos(), batch);
  for (const auto& note : problem_set.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  const std::vector<Target>& targets = problem_set.items;
  const auto dirs = parse_dirs(args.get("dir"));
  // A oneDNN verbose line's direction is used unless --dir is given.
  auto dirs_of = [&](const Target& t) {
    return t.dir && !args.has("dir") ? std::vector<Direction>{*t.dir} : dirs;
  };
  ExecContext ctx;
  ctx.device = parse_device(args.get("device"));
  ctx.threads = int(args.get_int("threads", 0, 4096));
  Constraints cons;
  if (args.has("workspace-limit")) cons.workspace_limit = parse_bytes(args.get("workspace-limit"));
  if (args.has("max-error")) {
    char* end = nullptr;
    const std::string v = args.get("max-error");
    cons.max_error = std::strtod(v.c_str(), &end);
    if (*end != '\0' || !(cons.max_error > 0)) fail("convlab tune: --max-error expects a positive number, got '" + v + "'");
  }
  cons.deterministic = args.has("deterministic");
  cons.tf32 = args.has("tf32");
  if (ctx.device == DeviceKind::cuda && !cuda_info().available)
    fail("convlab tune --device cuda: no CUDA device (" + cuda_info().reason + ")");
  FindOptions fo;
  fo.workspace_limit = cons.workspace_limit;
  fo.check_batch = int(args.get_int("check-batch", 1, 64));
  {
    char* end = nullptr;
    const std::string v = args.get("max-seconds");
    fo.max_seconds = std::strtod(v.c_str(), &end);
    if (*end != '\0' || !(fo.max_seconds > 0)) fail("convlab tune: --max-seconds expects a positive number");
  }
  const bool json_out = args.has("json");
  const auto candidates = find_candidates(ctx.device, cons.tf32);
  const MachineModel model = MachineModel::for_context(ctx);
  const std::string fingerprint = make_cache_key(targets.at(0).problem, dirs.at(0), ctx).device;

  std::unique_ptr<TuneCache> cache;
  if (args.has("cache")) {
    // Up front: a typo must not throw away the tuning (a missing file is an empty cache, created on save).
    if (do_find) require_output_path(args.get("cache"), "convlab tune --cache");
    cache = std::make_unique<TuneCache>(args.get("cache"));
    cache->load();
  }

  // ---- find (or cache) for every pair ----
  std::vector<Pair> pairs;
  for (const auto& t : targets)
    for (Direction d : dirs_of(t)) pairs.push_back({&t, d, {}, false, 0, {}, {}, {}, {}});
  Progress progress(int(pairs.size()), args.has("quiet"));
  std::map<std::string, const Pair*> seen;  // repeated shapes are tuned once
  int hits = 0, tuned = 0;
  const double t_start = now_seconds();
  if (do_find) {
    for (size_t i = 0; i < pairs.size(); ++i) {
      Pair& pr = pairs[i];
      const std::string what = pr.target->label + " " + std::string(to_string(pr.dir));
      const CacheKey key = make_cache_key(pr.target->problem, pr.dir, ctx);
      if (auto it = seen.find(key.str()); it != seen.end()) {
        pr.found = it->second->found;
        pr.from_cache = true;
        continue;
      }
      const CacheEntry* hit = cache && !args.has("retune") ? cache->lookup(key) : nullptr;
      if (hit && entry_covers(*hit, candidates, cons.workspace_limit)) {
        pr.found = hit->results;
        pr.from_cache = true;
        ++hits;
      } else {
        fo.on_candidate = [&](int, int, const Algorithm& a) { progress.step(int(i), what + " " + std::string(a.name())); };
        progress.step(int(i), what);
        const double t0 = now_seconds();
        pr.found = find(pr.target->problem, pr.dir, ctx, fo, candidates);
        pr.tune_seconds = now_seconds() - t0;
        ++tuned;
        if (cache) {
          CacheEntry e;
          e.key = key;
          e.tuned_at = double(std::time(nullptr));
          e.workspace_limit = cons.workspace_limit;
          e.results = pr.found;
          cache->put(std::move(e));
          cache->save();
        }
      }
      seen[key.str()] = &pr;
    }
  }
  progress.finish();
  const double find_seconds = now_seconds() - t_start;

  // ---- get: uncalibrated, calibrated in-sample, calibrated leave-one-layer-out ----
  std::vector<Measured> data;
  if (cache)
    for (auto& m : cache->measurements({fingerprint})) data.push_back(std::move(m));
  if (do_find && !cache)
    for (const Pair& pr : pairs) data.push_back({pr.target->problem, pr.dir, pr.found});
  const CalibrationData cal_data(data, model);  // one pass; every fit below is O(factor keys)
  const Calibration cal_in = cal_data.fit();
  for (Pair& pr : pairs) {
    pr.got_uncal = get(pr.target->problem, pr.dir, ctx, cons.workspace_limit, nullptr, candidates);
    pr.got_in = get(pr.target->problem, pr.dir, ctx, cons.workspace_limit, &cal_in, candidates);
    if (do_find) {
      const Calibration loo = cal_data.fit(pr.target->problem.key());
      pr.got_loo = get(pr.target->problem, pr.dir, ctx, cons.workspace_limit, &loo, candidates);
    }
  }

  // ---- the vendor's own choice (cudnnFind runs only when find ran) ----
  VendorOptions vo;
  vo.measure = do_find;
  vo.tf32 = cons.tf32;
  vo.workspace_limit = cons.workspace_limit;
  vo.deterministic = cons.deterministic;
  std::vector<VendorTally> vendor_tallies;
  for (Pair& pr : pairs) {
    pr.vendor = vendor_choices(pr.target->problem, pr.dir, ctx, pr.found, vo);
    if (const AlgoPerf* f = do_find ? select(pr.found, cons) : nullptr) tally(vendor_tallies, pr.vendor, f->algo, f->time);
  }
  // find's and get's picks and find's measured times for them ("" / NaN where none).
  auto picks = [&](const Pair& pr, std::string& fa, double& ft, std::string& ga, double& gt) {
    const AlgoPerf* f = do_find ? select(pr.found, cons) : nullptr;
    const AlgoPerf* g = select(pr.got_in, cons);
    fa = f ? f->algo : "";
    ft = f ? f->time : std::numeric_limits<double>::quiet_NaN();
    ga = g ? g->algo : "";
    gt = g ? measured_time(pr.found, g->algo) : std::numeric_limits<double>::quiet_NaN();
  };
  auto vendor_lines = [&](const Pair& pr) {
    std::string fa, ga;
    double ft, gt;
    picks(pr, fa, ft, ga, gt);
    for (const VendorChoice& v : pr.vendor.choices)
      std::printf("    vendor %s\n", vendor_text(v, fa, ft, ga, gt).c_str());
    if (pr.vendor.status != "ok")
      std::printf("    vendor %s%s\n", pr.vendor.choices.empty() ? "none: " : "", pr.vendor.status.c_str());
  };

  // ---- agreement ----
  std::vector<Agreement> ag_uncal, ag_in, ag_loo;
  std::vector<const Pair*> compared;
  int no_choice = 0;
  for (const Pair& pr : pairs) {
    if (!do_find) {
      no_choice += select(pr.got_in, cons) == nullptr;
      continue;
    }
    if (!select(pr.found, cons)) {
      ++no_choice;
      continue;
    }
    ag_uncal.push_back(compare_get_find(pr.target->label, pr.dir, pr.got_uncal, pr.found, cons));
    ag_in.push_back(compare_get_find(pr.target->label, pr.dir, pr.got_in, pr.found, cons));
    ag_loo.push_back(compare_get_find(pr.target->label, pr.dir, pr.got_loo, pr.found, cons));
    compared.push_back(&pr);
  }

  if (json_out) {
    std::string o = "{\"device\":" + json::quote(fingerprint) + ",\"version\":" + json::quote(CONVLAB_VERSION) +
                    ",\"mode\":" + json::quote(mode) + ",\"find_seconds\":" + json::number(find_seconds) +
                    ",\"cache_hits\":" + std::to_string(hits) + ",\"tuned\":" + std::to_string(tuned) + ",\"pairs\":[";
    for (size_t i = 0; i < pairs.size(); ++i) {
      const Pair& pr = pairs[i];
      const AlgoPerf* f = do_find ? select(pr.found, cons) : nullptr;
      const AlgoPerf* g = select(pr.got_in, cons);
      o += std::string(i ? "," : "") + "{\"layer\":" + json::quote(pr.target->label) + ",\"problem\":" +
           json::quote(pr.target->problem.key()) + ",\"dir\":" + json::quote(to_string(pr.dir)) +
           ",\"get_choice\":" + (g ? json::quote(g->algo) : "null") + ",\"find_choice\":" + (f ? json::quote(f->algo) : "null") +
           ",\"from_cache\":" + (pr.from_cache ? "true" : "false") + ",\"tune_seconds\":" + json::number(pr.tune_seconds) +
           ",\"get\":" + list_json(pr.got_in) + (do_find ? ",\"find\":" + list_json(pr.found) : "");
      std::string fa, ga;
      double ft, gt;
      picks(pr, fa, ft, ga, gt);
      o += ",\"vendor_status\":" + json::quote(pr.vendor.status) + ",\"vendor\":[";
      for (size_t k = 0; k < pr.vendor.choices.size(); ++k)
        o += (k ? "," : "") + vendor_json(pr.vendor.choices[k], fa, ft, ga, gt);
      o += "]}";
    }
    o += "]";
    o += ",\"vendor_summary\":{";
    for (size_t k = 0; k < vendor_tallies.size(); ++k) {
      const VendorTally& t = vendor_tallies[k];
      o += (k ? "," : "") + json::quote(t.source) + ":{\"pairs\":" + std::to_string(t.pairs) +
           ",\"same\":" + std::to_string(t.same) + ",\"within_10pct\":" + std::to_string(t.within_10pct) +
           ",\"unmeasured\":" + std::to_string(t.unmeasured) + ",\"unknown_ids\":" + std::to_string(t.unknown_ids) +
           "}";
    }
    o += "}";
    if (do_find)
      o += ",\"summary\":{\"uncalibrated\":" + summary_json(summarize(ag_uncal)) + ",\"calibrated_in_sample\":" +
           summary_json(summarize(ag_in)) + ",\"calibrated_leave_one_layer_out\":" + summary_json(summarize(ag_loo)) + "}";
    std::printf("%s}\n", o.c_str());
    return no_choice ? 1 : 0;
  }

  std::printf("convlab tune: %zu layer(s), %zu (layer, direction) pair(s) on %s (%s), mode %s\n", targets.size(),
              pairs.size(), std::string(to_string(ctx.device)).c_str(), fingerprint.c_str(), mode.c_str());
  std::printf("candidates: %zu", candidates.size());
  if (candidates.empty()) std::printf(" (only the reference is registered for this device: nothing to tune)");
  std::printf("\n");
  if (cache)
    std::printf("cache: %s (%d hits, %d tuned, calibration from %d measurements)\n", cache->path().c_str(), hits, tuned,
                cal_in.samples());
  std::printf("\n");
  if (do_find) {
    std::printf("%-18s %-10s %-24s %-24s %10s %10s %8s %s\n", "layer", "dir", "get (calibrated)", "find", "t_get ms",
                "t_find ms", "get/find", "agree");
    size_t k = 0;
    for (const Pair& pr : pairs) {
      const bool have = k < compared.size() && compared[k] == &pr;
      if (!have) {
        std::printf("%-18s %-10s %-24s %-24s %10s %10s %8s %s\n", pr.target->label.c_str(),
                    std::string(to_string(pr.dir)).c_str(), "-", "-", "-", "-", "-", "no acceptable candidate");
      } else {
        const Agreement& a = ag_in[k++];
        std::printf("%-18s %-10s %-24s %-24s %10s %10s %8s %s\n", pr.target->label.c_str(),
                    std::string(to_string(pr.dir)).c_str(), a.get_algo.empty() ? "-" : a.get_algo.c_str(),
                    a.find_algo.c_str(), ms(a.get_time).c_str(), ms(a.find_time).c_str(), ratio(a.slowdown()).c_str(),
                    a.same() ? "yes" : a.slowdown() <= 1.10 ? "within 10%" : "no");
      }
      vendor_lines(pr);
      if (args.has("list")) print_list(pr.found, true);
    }
    std::printf("\nget vs find over %zu pairs:\n", ag_in.size());
    std::printf("  uncalibrated                          %s\n", summary_line(summarize(ag_uncal)).c_str());
    std::printf("  calibrated (in-sample)                %s\n", summary_line(summarize(ag_in)).c_str());
    std::printf("  calibrated (leave-one-layer-out)      %s\n", summary_line(summarize(ag_loo)).c_str());
    for (const VendorTally& t : vendor_tallies)
      std::printf("vendor %-12s vs find over %d pairs: %s\n", t.source.c_str(), t.pairs, tally_text(t).c_str());
    if (vendor_tallies.empty())
      std::printf("vendor vs find: no vendor choice (%s)\n", pairs.empty() ? "no pairs" : pairs.front().vendor.status.c_str());
    std::printf("find wall time: %.1f s (%d pairs tuned, %d from cache or repeated shapes)\n", find_seconds, tuned,
                int(pairs.size()) - tuned);
  } else {
    std::printf("%-18s %-10s %-24s %10s  %s\n", "layer", "dir", "get", "pred. ms", "model");
    for (const Pair& pr : pairs) {
      const AlgoPerf* g = select(pr.got_in, cons);
      std::printf("%-18s %-10s %-24s %10s  %s\n", pr.target->label.c_str(), std::string(to_string(pr.dir)).c_str(),
                  g ? g->algo.c_str() : "-", g ? ms(g->time).c_str() : "-", g ? g->note.c_str() : "no acceptable candidate");
      vendor_lines(pr);
      if (args.has("list")) print_list(pr.got_in, false);
    }
  }
  return no_choice ? 1 : 0;
}

int cmd_cache(int argc, char** argv) {
  // "-o C" is accepted as a synonym of "--out C" (the spelling).
  std::vector<char*> av(argv, argv + argc);
  static char out_flag[] = "--out";
  for (auto& a : av)
    if (std::string(a) == "-o") a = out_flag;
  Args args("cache", "show FILE | check FILE | merge A B... -o OUT",
            "Inspects and combines autotune cache files (JSON lines, see autotune/cache.hpp).\n"
            "  show FILE        one line per entry: problem, direction, device, version, winner, time\n"
            "  check FILE       one warning per line this build on this machine would not use (exit 1 if\n"
            "                   any): unreadable or over-long lines, another cache format, another device,\n"
            "                   stale (tuned by another convlab build or oneDNN/OpenBLAS/FFTW/cuDNN version),\n"
            "                   a problem this build rejects, an unregistered algorithm, no results\n"
            "  merge A B... -o OUT   union of the inputs, per key the most recently tuned entry wins;\n"
            "                   OUT is written atomically under the cache lock\n"
            "A missing file, a folder or anything not a regular file is an error (exit 2), as is a file over\n"
            "256 MiB; lines over 1 MiB are unreadable lines.");
  args.positionals("ACTION FILE...", "show, check or merge, then the files", 2, 1000);
  args.option("out", "FILE", "merge: the output file (also -o)");
  if (!args.parse(int(av.size()), av.data())) return 0;
  const std::string action = args.pos()[0];
  const std::vector<std::string> files(args.pos().begin() + 1, args.pos().end());
  if (action == "merge") {
    if (!args.has("out")) fail("convlab cache merge: -o OUT is required");
    const int n = merge_cache_files(files, args.get("out"));
    std::printf("wrote %s: %d entries from %zu files\n", args.get("out").c_str(), n, files.size());
    return 0;
  }
  if (files.size() != 1) fail("convlab cache " + action + ": expects exactly one FILE");
  if (action != "show" && action != "check") fail("convlab cache: unknown action '" + action + "' (show, check, merge)");
  if (action == "check") {
    // Every line this build on this machine would not use, one warning each (exit 1 if any).
    const CacheCheck r = check_cache_file(files[0]);
    for (const std::string& w : r.warnings) std::printf("%s: %s\n", printable(files[0]).c_str(), w.c_str());
    std::printf("%s: %d lines, %d entries, %d usable here, %zu warnings\n", printable(files[0]).c_str(), r.lines,
                r.entries, r.usable, r.warnings.size());
    return r.warnings.empty() ? 0 : 1;
  }
  if (!std::filesystem::exists(files[0])) fail("convlab cache show: '" + printable(files[0]) + "' does not exist");
  TuneCache c(files[0], true);
  c.load();
  for (const CacheEntry& e : c.entries()) {
    const AlgoPerf* best = select(e.results, Constraints{});
    std::printf("%-40s %-10s %-8s %-28s %-10s %s\n", e.key.problem.c_str(), e.key.dir.c_str(), e.key.version.c_str(),
                best ? best->algo.c_str() : "-", best ? ms(best->time).c_str() : "-", e.key.device.c_str());
  }
  return 0;
}

}  // namespace convlab::cli
