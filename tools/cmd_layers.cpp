// convlab layers: the per-layer algorithm comparison run. For every layer and
// direction, every available algorithm is checked against the fp64 reference
// and timed (autotune's find does both), the cost model ranks them without
// running (get), and the results are printed as a table and saved as JSON/CSV
// for the notebooks. The peak it reports against is measured, not assumed.
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "autotune/cache.hpp"
#include "autotune/find.hpp"
#include "autotune/get.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "core/layers.hpp"
#include "core/npy.hpp"
#include "core/peak.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

namespace {

struct Row {
  std::string layer, problem, dir, algo, family, status, note;
  int threads = 0;
  double flops = 0, bytes = 0, time = NAN, spread = 0, max_rel = NAN, peak = 0;
  size_t workspace = 0;
  int find_rank = 0, get_rank = 0;
  bool find_choice = false, get_choice = false;
};

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string fmt_num(double v) { return std::isfinite(v) ? json::number(v) : ""; }

}  // namespace

int cmd_layers(int argc, char** argv) {
  Args args("layers", "NET|PROBLEM... [options]",
            "The per-layer comparison run: for each layer and direction, every available algorithm's median\n"
            "time, effective GFLOP/s (direct-convolution FLOPs / time), fraction of the measured FMA peak,\n"
            "workspace, max relative error vs the fp64 reference (on a 1-image slice), and which algorithm\n"
            "get (cost model, nothing runs) and find (fastest measured within tolerance) pick.\n"
            "NET is alexnet, alexnet-owt, vgg16 or resnet50; PROBLEM a benchdnn string or a layer id.");
  args.positionals("NET|PROBLEM...", "networks, layer ids or benchdnn problem strings", 1, 1000);
  args.option("device", "DEV", "cpu or cuda", "cpu");
  args.option("dir", "DIRS", "comma-separated directions, or all", "all");
  args.option("batch", "N", "minibatch for network layers and layer ids", "32");
  args.option("threads", "LIST", "comma-separated CPU thread counts, e.g. 1,2 (0 = all)", "0");
  args.option("json", "F", "write the results as JSON (atomically)");
  args.option("csv", "F", "write the results as CSV (atomically)");
  args.option("cache", "F", "calibrate get's cost model from this autotune cache");
  args.option("max-seconds", "S", "timed work per candidate before the median is taken as is", "0.3");
  if (!args.parse(argc, argv)) return 0;

  const DeviceKind device = parse_device(args.get("device"));
  const int batch = int(args.get_int("batch", 1, 1 << 20));
  std::vector<Direction> dirs;
  if (args.get("dir") == "all") {
    dirs.assign(std::begin(kAllDirections), std::end(kAllDirections));
  } else {
    std::stringstream ss(args.get("dir"));
    std::string d;
    while (std::getline(ss, d, ',')) dirs.push_back(parse_direction(d));
  }
  const std::vector<long> thread_counts = args.get_int_list("threads", 0, 4096);
  double max_seconds = 0;
  try {
    max_seconds = std::stod(args.get("max-seconds"));
  } catch (...) {
    fail("convlab layers: --max-seconds expects a number, got '" + args.get("max-seconds") + "'");
  }
  if (!(max_seconds > 0)) fail("convlab layers: --max-seconds must be positive");

  std::vector<std::pair<std::string, ConvProblem>> problems;
  std::string network;
  for (const auto& text : args.pos()) {
    if (is_network(text)) {
      network = network.empty() ? text : network + "+" + text;
      for (auto& l : network_layers(text, batch)) problems.push_back({l.id, l.problem});
    } else {
      ConvProblem p = problem_from_text(text, text.find('.') != std::string::npos ? batch : 0);
      problems.push_back({p.name.empty() ? p.key() : p.name, p});
    }
  }
  if (device == DeviceKind::cuda && !cuda_info().available)
    fail("convlab layers --device cuda: no CUDA device (" + cuda_info().reason + ")");

  Calibration cal;
  const Calibration* calp = nullptr;
  if (args.has("cache")) {
    TuneCache cache(args.get("cache"));
    cache.load();
    ExecContext c0;
    c0.device = device;
    cal = Calibration::fit(cache.measurements(device_fingerprint(device, 0), CONVLAB_VERSION), MachineModel::for_context(c0));
    calp = &cal;
  }

  std::printf("convlab layers on %s%s\n", device_fingerprint(device, 0).c_str(),
              network.empty() ? "" : (", batch " + std::to_string(batch)).c_str());
  std::map<int, PeakResult> peaks;
  double bandwidth = 0;
  if (device == DeviceKind::cpu) {
    for (long t : thread_counts) peaks[int(t)] = measure_fma_peak(int(t));
    bandwidth = measure_stream_bandwidth(0);
    for (auto& [t, pr] : peaks)
      std::printf("measured FMA peak: %.1f GFLOP/s with %d thread(s) (%s)\n", pr.gflops, pr.threads, pr.isa.c_str());
    std::printf("measured stream bandwidth: %.1f GB/s\n", bandwidth);
  }

  std::vector<Row> rows;
  for (long t : thread_counts) {
    ExecContext ctx;
    ctx.device = device;
    ctx.threads = int(t);
    const double peak = device == DeviceKind::cpu ? peaks[int(t)].gflops : 0;
    for (const auto& [label, p] : problems) {
      for (Direction dir : dirs) {
        FindOptions fo;
        fo.max_seconds = max_seconds;
        const std::vector<AlgoPerf> found = find(p, dir, ctx, fo);
        const std::vector<AlgoPerf> got = get(p, dir, ctx, size_t(-1), calp);
        const AlgoPerf* fsel = select(found, Constraints{});
        const AlgoPerf* gsel = select(got, Constraints{});
        std::map<std::string, int> grank;
        for (size_t i = 0; i < got.size(); ++i) grank[got[i].algo] = int(i) + 1;
        std::printf("\n%s %s  [%s]  threads %d  %.4f GFLOP\n", label.c_str(), std::string(to_string(dir)).c_str(),
                    p.key().c_str(), ctx.resolved_threads(), p.flops() * 1e-9);
        std::printf("  %-26s %-12s %10s %9s %7s %11s %10s  %s\n", "algorithm", "status", "median ms", "GFLOP/s",
                    "%peak", "workspace", "max rel", "pick");
        for (size_t i = 0; i < found.size(); ++i) {
          const AlgoPerf& a = found[i];
          Row r;
          r.layer = label;
          r.problem = p.canonical();
          r.dir = std::string(to_string(dir));
          r.algo = a.algo;
          const Algorithm* al = nullptr;
          for (const Algorithm* x : find_candidates(device))
            if (x->name() == a.algo) al = x;
          r.family = al ? std::string(al->family()) : "";
          r.status = std::string(to_string(a.status));
          r.note = a.note;
          r.threads = ctx.resolved_threads();
          r.flops = p.flops();
          r.bytes = p.bytes();
          r.time = a.time;
          r.spread = a.spread;
          r.max_rel = a.max_rel_error;
          r.workspace = a.workspace;
          r.find_rank = a.status == PerfStatus::ok ? int(i) + 1 : 0;
          r.get_rank = grank.count(a.algo) ? grank[a.algo] : 0;
          r.find_choice = fsel && fsel->algo == a.algo;
          r.get_choice = gsel && gsel->algo == a.algo;
          const double gflops = std::isfinite(r.time) && r.time > 0 ? r.flops / r.time * 1e-9 : NAN;
          r.peak = peak > 0 && std::isfinite(gflops) ? gflops / peak : NAN;
          rows.push_back(r);
          const bool ran = a.status == PerfStatus::ok || a.status == PerfStatus::inaccurate;
          if (ran)
            std::printf("  %-26s %-12s %10.3f %9.1f %6.1f%% %9.2fMB %10.2e  %s%s\n", r.algo.c_str(), r.status.c_str(),
                        r.time * 1e3, gflops, r.peak * 100, double(r.workspace) / 1e6, r.max_rel,
                        r.find_choice ? "find " : "", r.get_choice ? "get" : "");
          else
            std::printf("  %-26s %-12s %s\n", r.algo.c_str(), r.status.c_str(), r.note.c_str());
        }
      }
    }
  }

  // Thread scaling: each algorithm's time at the fewest threads over its time at the most.
  if (thread_counts.size() > 1 && device == DeviceKind::cpu) {
    std::map<std::string, std::vector<double>> scal;
    int tlo = 1 << 30, thi = 0;
    for (const Row& r : rows) tlo = std::min(tlo, r.threads), thi = std::max(thi, r.threads);
    for (const Row& a : rows) {
      if (a.threads != tlo || a.status != "ok") continue;
      for (const Row& b : rows)
        if (b.threads == thi && b.status == "ok" && b.algo == a.algo && b.layer == a.layer && b.dir == a.dir)
          scal[a.algo].push_back(a.time / b.time);
    }
    std::printf("\nthread scaling, %d -> %d threads (geometric mean of speedups over layers and directions):\n", tlo, thi);
    for (auto& [algo, v] : scal) {
      double lg = 0;
      for (double x : v) lg += std::log(x);
      std::printf("  %-26s x%.2f  (%zu cases)\n", algo.c_str(), std::exp(lg / double(v.size())), v.size());
    }
  }

  if (args.has("json")) {
    std::string o = "{\n  \"tool\": \"convlab layers\",\n  \"version\": " + json::quote(CONVLAB_VERSION) +
                    ",\n  \"device\": " + json::quote(to_string(device)) + ",\n  \"fingerprint\": " +
                    json::quote(device_fingerprint(device, 0)) + ",\n  \"network\": " +
                    (network.empty() ? std::string("null") : json::quote(network)) +
                    ",\n  \"batch\": " + std::to_string(batch) + ",\n  \"peak\": [";
    bool first = true;
    for (auto& [t, pr] : peaks) {
      o += std::string(first ? "" : ", ") + "{\"threads\": " + std::to_string(pr.threads) +
           ", \"gflops\": " + json::number(pr.gflops) + ", \"isa\": " + json::quote(pr.isa) + "}";
      first = false;
    }
    o += "],\n  \"bandwidth_gbs\": " + (bandwidth > 0 ? json::number(bandwidth) : std::string("null")) +
         ",\n  \"rows\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      const double gflops = std::isfinite(r.time) && r.time > 0 ? r.flops / r.time * 1e-9 : NAN;
      o += "    {\"layer\": " + json::quote(r.layer) + ", \"problem\": " + json::quote(r.problem) +
           ", \"direction\": " + json::quote(r.dir) + ", \"threads\": " + std::to_string(r.threads) +
           ", \"algorithm\": " + json::quote(r.algo) + ", \"family\": " + json::quote(r.family) +
           ", \"status\": " + json::quote(r.status) + ", \"note\": " + json::quote(r.note) +
           ", \"time_ms\": " + json::number(r.time * 1e3) + ", \"spread\": " + json::number(r.spread) +
           ", \"gflops\": " + json::number(gflops) + ", \"peak_fraction\": " + json::number(r.peak) +
           ", \"flops\": " + json::number(r.flops) + ", \"bytes\": " + json::number(r.bytes) +
           ", \"workspace_bytes\": " + std::to_string(r.workspace) + ", \"max_rel_error\": " + json::number(r.max_rel) +
           ", \"find_rank\": " + std::to_string(r.find_rank) + ", \"get_rank\": " + std::to_string(r.get_rank) +
           ", \"find_choice\": " + (r.find_choice ? "true" : "false") + ", \"get_choice\": " +
           (r.get_choice ? "true" : "false") + "}" + (i + 1 < rows.size() ? ",\n" : "\n");
    }
    o += "  ]\n}\n";
    write_file_atomic(args.get("json"), o);
    std::printf("\nwrote %s\n", args.get("json").c_str());
  }
  if (args.has("csv")) {
    std::string o = "layer,problem,direction,threads,algorithm,family,status,time_ms,spread,gflops,peak_fraction,flops,"
                    "bytes,workspace_bytes,max_rel_error,find_rank,get_rank,find_choice,get_choice,note\n";
    for (const Row& r : rows) {
      const double gflops = std::isfinite(r.time) && r.time > 0 ? r.flops / r.time * 1e-9 : NAN;
      o += csv_field(r.layer) + "," + csv_field(r.problem) + "," + r.dir + "," + std::to_string(r.threads) + "," +
           r.algo + "," + r.family + "," + r.status + "," + fmt_num(r.time * 1e3) + "," + fmt_num(r.spread) + "," +
           fmt_num(gflops) + "," + fmt_num(r.peak) + "," + fmt_num(r.flops) + "," + fmt_num(r.bytes) + "," +
           std::to_string(r.workspace) + "," + fmt_num(r.max_rel) + "," + std::to_string(r.find_rank) + "," +
           std::to_string(r.get_rank) + "," + (r.find_choice ? "1" : "0") + "," + (r.get_choice ? "1" : "0") + "," +
           csv_field(r.note) + "\n";
    }
    write_file_atomic(args.get("csv"), o);
    std::printf("wrote %s\n", args.get("csv").c_str());
  }
  return 0;
}

}  // namespace convlab::cli
