// bench_conv: the one convolution benchmark, both devices. One Google Benchmark per
// (network layer x direction x registered algorithm), from the layer tables (core/layers.hpp) and the
// registry, in that order, so the algorithms of one layer and direction sit side by side:
//   conv/alexnet.conv3/fwd/cpu.winograd_f4x3/real_time      CPU: wall clock around run() (OpenMP threads)
//   conv/alexnet.conv3/fwd/cudnn.fft/manual_time            CUDA: events around one run, L2 flushed first
// Every algorithm of the chosen device(s) but cpu.reference; the vendors' own convolutions are registry
// entries like any other (onednn.*, cudnn.*), so nothing here calls a vendor library. An algorithm that
// is unavailable here or does not support a layer and direction reports its reason as a skipped entry.
// The JSON "run_name" is the name above; aggregates add "_median" etc.
// Counters: GFLOP/s (the direct convolution's FLOPs, every algorithm and direction), %peak (CPU: of the
// FMA peak measured at start, core/peak.hpp), images/s, workspace bytes. Medians over --reps repetitions.
// Labels: oneDNN's implementation (onednn.*), the FFT tiling (cpu.fft*). After the run (console
// format) a table: median ms per layer/direction x algorithm, the fastest marked *.
//
//   bench_conv [--device=cpu|cuda|all] [--family=NAME] [--net=alexnet] [--batch=32] [--threads=N] [--reps=5]
//              [--process_time] [--stages] [--stages_csv=F] [benchmark flags...]
//
// --family=NAME keeps that family (gemm, direct, fft, winograd, implicit_gemm) and the vendor peers of its
// device (onednn.*, cudnn.*); the table then ends with the best family member / best fp32 peer.
// The per-family comparisons of the old family benches, as filters (names are matched as regexes):
//   bench_conv --family=direct                                           cpu.direct vs oneDNN
//   bench_conv --family=winograd --benchmark_filter='alexnet.conv[345]/' cpu.winograd_* vs oneDNN
//   bench_conv --family=fft --benchmark_filter='alexnet.conv2/'          cpu.fft* vs oneDNN
//   bench_conv --family=gemm                                             cpu.im2col_* vs oneDNN
//   bench_conv --benchmark_filter='/(cpu\.winograd|onednn\.)'       Winograd vs oneDNN, as a plain filter
//   bench_conv --device=cuda                                             every cuda.* and cudnn.* entry
// --threads: CPU threads (0, the default, = all). --reps sets the repetitions (and shows aggregates only)
// unless --benchmark_repetitions is given. --process_time: the CPU column is the CPU time of all threads
// (names gain /process_time); on a shared machine compare flops / (cpu / threads).
// Each benchmark runs its algorithm once untimed first (plans, page faults).
// --stages: after the benchmarks, every CPU entry that ran is run again with a stage profile
// (algorithms/execute.hpp profile_stages, median of 5 runs) and a table shows where its time goes: each
// stage's ms and share, its FLOP rate as % of the measured FMA peak and its byte rate as % of the measured
// stream bandwidth, and the limit that applies to it (compute: peak, memory: bandwidth) -- the transforms,
// packing and scatters of every algorithm against the bandwidth, its GEMM / kernel against the peak.
// --stages_csv=F writes the same rows as CSV (atomically: F.tmp, then rename).
// --model=CARD (h100, h200) with --device=cuda needs no GPU and measures nothing: each hand-written CUDA
// kernel's MODELLED time on that card, from the SIMT emulator's counts (simt_counts, beside bench_conv or
// named by CONVLAB_SIMT_COUNTS) priced on the card's limits (autotune/gpu_model.hpp), one line per entry
// named as above with /modelled, vendor entries "not modelled"; --benchmark_filter selects entries as in a
// measured run; --model_json=F writes the rows (status "modelled") as `convlab layers --json` does.
// Exit codes as the convlab CLI: 2 for bad flags or --device=cuda without a CUDA device (one line; with
// --device=all the CUDA half is skipped with that line), 3 when the CUDA device faults.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

#include "algorithms/execute.hpp"
#include "algorithms/plugin.hpp"
#include "algorithms/registry.hpp"
#include "autotune/model_comparison.hpp"
#include "core/npy.hpp"
#include "core/subprocess.hpp"
#include "report/layers.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/layers.hpp"
#include "core/peak.hpp"
#include "core/timing.hpp"

namespace {

using namespace convlab;

struct Options {
  std::string net = "alexnet";
  std::string family;  // empty: every family
  int batch = 32;
  int threads = 0;
  int reps = 5;
  bool cpu = true, cuda = false;
  bool process_time = false;
  bool user_reps = false;  // --benchmark_repetitions given: leave repetitions to it
  double peak_gflops = 0;  // the CPU's measured FMA peak; 0 = none
  bool stages = false;     // --stages / --stages_csv: per-stage profile after the run
  std::string stages_csv;
  std::string model, model_json;  // --model=CARD: modelled times, nothing measured; --model_json=F
  std::string filter;             // --benchmark_filter's regex, for --model
};

int to_int(std::string_view flag, std::string_view v) {
  char* end = nullptr;
  const std::string s(v);
  const long x = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || x < 0)
    fail("bench_conv: " + std::string(flag) + " needs a non-negative integer, got '" + s + "'");
  return int(x);
}

// Consumes our flags from argv, leaving the rest for benchmark::Initialize.
Options parse_own_flags(int& argc, char** argv) {
  Options o;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](std::string_view flag) -> std::string_view {
      if (a.size() > flag.size() && a.substr(0, flag.size()) == flag && a[flag.size()] == '=')
        return a.substr(flag.size() + 1);
      return {};
    };
    if (auto v = value("--net"); !v.empty()) o.net = std::string(v);
    else if (auto v = value("--family"); !v.empty()) o.family = std::string(v);
    else if (auto v = value("--batch"); !v.empty()) o.batch = to_int("--batch", v);
    else if (auto v = value("--threads"); !v.empty()) o.threads = to_int("--threads", v);
    else if (auto v = value("--reps"); !v.empty()) o.reps = to_int("--reps", v);
    else if (auto v = value("--device"); !v.empty()) {
      if (v != "cpu" && v != "cuda" && v != "all")
        fail("bench_conv: --device must be cpu, cuda or all, got '" + std::string(v) + "'");
      o.cpu = v != "cuda";
      o.cuda = v != "cpu";
    } else if (auto v = value("--stages_csv"); !v.empty()) {
      o.stages = true;
      o.stages_csv = std::string(v);
    } else if (auto v = value("--model"); !v.empty()) o.model = std::string(v);
    else if (auto v = value("--model_json"); !v.empty()) o.model_json = std::string(v);
    else if (a == "--stages") o.stages = true;
    else if (a == "--process_time") o.process_time = true;
    else {
      if (a.substr(0, 24) == "--benchmark_repetitions=") o.user_reps = true;
      if (auto v = value("--benchmark_filter"); !v.empty()) o.filter = std::string(v);
      argv[out++] = argv[i];
    }
  }
  argc = out;
  if (o.batch < 1) fail("bench_conv: --batch must be at least 1");
  if (o.reps < 1) fail("bench_conv: --reps must be at least 1");
  return o;
}

bool selected(const Options& o, const Algorithm& a) {
  if (a.is_oracle()) return false;
  if (!(a.device() == DeviceKind::cpu ? o.cpu : o.cuda)) return false;
  // The vendors' own convolutions stay beside the family.
  return o.family.empty() || a.family() == o.family || a.vendor_peer();
}

void bench_case(benchmark::State& state, const Algorithm* algo, ConvProblem p, Direction dir, const Options* o) {
  ExecContext ctx;
  ctx.device = algo->device();
  ctx.threads = o->threads;
  try {
    if (const std::string why = algo->unavailable_reason(); !why.empty()) return state.SkipWithError(why.c_str());
    if (const Support s = algo->supports(p, dir); !s) return state.SkipWithError(s.reason.c_str());
    ConvRunner runner(*algo, p, dir, ctx);
    runner.upload(ConvData::random(p, 1));
    runner.run();  // untimed warm-up
    double busy = 0;  // seconds the timed iterations took, as the benchmark's own clock counts them
    if (ctx.device == DeviceKind::cpu) {
      const double t0 = now_seconds();
      for (auto _ : state) runner.run();
      busy = now_seconds() - t0;
    } else {
      TimingOptions one;  // one rep per iteration: CUDA events after an L2 flush (ConvRunner::time)
      one.warmup = 0;
      one.min_reps = one.max_reps = 1;
      for (auto _ : state) {
        const double t = runner.time(one).median;
        state.SetIterationTime(t);
        busy += t;
      }
    }
    const double it = double(state.iterations());
    // Plain values, not Google Benchmark rates (a rate counter prints its unit with another "/s" after it).
    const double gflops = busy > 0 ? p.flops() * 1e-9 * it / busy : 0;
    state.counters["GFLOP/s"] = gflops;
    if (ctx.device == DeviceKind::cpu && o->peak_gflops > 0) state.counters["%peak"] = 100 * gflops / o->peak_gflops;
    state.counters["workspace"] = benchmark::Counter(double(runner.workspace_bytes()), benchmark::Counter::kDefaults,
                                                     benchmark::Counter::kIs1024);
    state.SetItemsProcessed(int64_t(it) * p.n);
    // What the entry runs, where the algorithm can say: oneDNN's implementation, the FFT tiling.
    state.SetLabel(algo->implementation(p, dir, o->threads));
    // Library worker threads that busy-wait after a call would steal the cores from the next benchmark.
    if (const double s = algo->spin_after_run_s(); s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s));
  } catch (const DeviceFault& e) {
    // Every later case would fail the same way: stop with one line.
    std::fprintf(stderr, "error: device fault in %s: %s\n", std::string(algo->name()).c_str(), e.what());
    std::exit(3);
  } catch (const Error& e) {
    state.SkipWithError(e.what());
  }
}

int register_all(const Options& o) {
  int count = 0;
  for (const NetLayer& l : network_layers(o.net, o.batch))
    for (Direction dir : kAllDirections)
      for (const Algorithm* a : registry()) {
        if (!selected(o, *a)) continue;
        const std::string name = "conv/" + l.id + "/" + std::string(to_string(dir)) + "/" + std::string(a->name());
        auto* b = benchmark::RegisterBenchmark(name.c_str(), bench_case, a, l.problem, dir, &o);
        if (a->device() == DeviceKind::cpu) b->UseRealTime();
        else b->UseManualTime();
        if (a->device() == DeviceKind::cpu && o.process_time) b->MeasureProcessCPUTime();
        b->Unit(benchmark::kMillisecond);
        ++count;
      }
  return count;
}

// Google Benchmark's own display reporter (--benchmark_format, colour, tabular flags as usual), plus the
// median ms of every entry for the closing table.
class TableReporter : public benchmark::BenchmarkReporter {
 public:
  std::vector<std::string> rows, ran;  // "alexnet.conv3/fwd" in first-seen order; "cpu.direct"
  std::map<std::pair<std::string, std::string>, double> ms;

  // The table only under the console format: JSON or CSV on stdout stays one document.
  bool console() const { return dynamic_cast<benchmark::ConsoleReporter*>(display_) != nullptr; }
  bool ReportContext(const Context& context) override { return display_->ReportContext(context); }
  void Finalize() override { display_->Finalize(); }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred || (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median")) continue;
      const std::string name = r.run_name.function_name;  // conv/<layer>/<dir>/<algorithm>
      const size_t cut = name.rfind('/');
      const std::string row = name.substr(5, cut - 5), col = name.substr(cut + 1);
      if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
      if (std::find(ran.begin(), ran.end(), col) == ran.end()) ran.push_back(col);
      ms[{row, col}] = r.GetAdjustedRealTime();  // the median aggregate, when there is one, comes last
    }
    display_->ReportRuns(runs);
  }

  // With --family, one more column per device: its best family member's time / its best fp32 vendor peer's.
  void print_table(const std::string& family) const {
    if (rows.empty()) return;
    std::vector<std::string> cols;  // the algorithms that ran, in registry order
    for (const Algorithm* a : registry())
      if (std::find(ran.begin(), ran.end(), a->name()) != ran.end()) cols.emplace_back(a->name());
    bool device_seen[2] = {false, false};
    for (const std::string& c : cols)
      if (const Algorithm* a = find_algorithm(c)) device_seen[int(a->device())] = true;
    std::printf("\nmedian ms per layer/direction, * the fastest");
    if (!family.empty()) std::printf("; family/peer = best %s / best fp32 vendor peer", family.c_str());
    std::printf("\n%-24s", "layer/dir");
    for (const std::string& c : cols) std::printf(" %*s", width(c), c.c_str());
    for (int d = 0; d < 2; ++d)
      if (!family.empty() && device_seen[d]) std::printf(" %16s", d == 0 ? "cpu family/peer" : "cuda family/peer");
    std::printf("\n");
    for (const std::string& r : rows) {
      double best = 0, best_family[2] = {0, 0}, best_peer[2] = {0, 0};
      auto keep_min = [](double& m, double v) { m = m == 0 ? v : std::min(m, v); };
      std::printf("%-24s", r.c_str());
      for (const std::string& c : cols)
        if (const auto it = ms.find({r, c}); it != ms.end()) keep_min(best, it->second);
      for (const std::string& c : cols) {
        const auto it = ms.find({r, c});
        if (it == ms.end()) {
          std::printf(" %*s ", width(c) - 1, "-");
          continue;
        }
        std::printf(" %*.3f%c", width(c) - 1, it->second, it->second == best ? '*' : ' ');
        const Algorithm* a = find_algorithm(c);
        if (!a) continue;
        if (a->family() == family) keep_min(best_family[int(a->device())], it->second);
        else if (a->vendor_peer() && a->math() == "fp32") keep_min(best_peer[int(a->device())], it->second);
      }
      for (int d = 0; d < 2; ++d) {
        if (family.empty() || !device_seen[d]) continue;
        if (best_family[d] > 0 && best_peer[d] > 0) std::printf(" %15.2fx", best_family[d] / best_peer[d]);
        else std::printf(" %16s", "-");
      }
      std::printf("\n");
    }
  }

 private:
  benchmark::BenchmarkReporter* display_ = benchmark::CreateDefaultDisplayReporter();
  static int width(const std::string& col) { return int(std::max<size_t>(col.size(), 9)); }
};

// The per-stage table (--stages) over the CPU entries that ran.
void print_stages(const Options& o, const TableReporter& table) {
  const int threads = ExecContext{DeviceKind::cpu, o.threads}.resolved_threads();
  const double bw_gbs = measure_stream_bandwidth(threads);
  std::string csv = "layer,direction,algorithm,stage,kind,ms,share,gflops,pct_peak,gbs,pct_bandwidth\n";
  std::printf("\nwhere the time goes, per stage (median of 5 profiled runs): GFLOP/s as %% of the measured FMA peak "
              "(%.1f GFLOP/s), GB/s as %% of the measured stream bandwidth (%.1f GB/s), %d thread(s); limit = the one "
              "that applies (compute: peak, memory: bandwidth)\n",
              o.peak_gflops, bw_gbs, threads);
  std::printf("%-24s %-20s %-32s %8s %6s %8s %6s %7s %6s  %s\n", "layer/dir", "algorithm", "stage", "ms", "share",
              "GFLOP/s", "%peak", "GB/s", "%bw", "limit");
  for (const NetLayer& l : network_layers(o.net, o.batch))
    for (Direction dir : kAllDirections)
      for (const Algorithm* a : registry()) {
        const std::string row = l.id + "/" + std::string(to_string(dir));
        if (a->device() != DeviceKind::cpu || !table.ms.count({row, std::string(a->name())})) continue;
        ExecContext ctx;
        ctx.threads = o.threads;
        std::vector<StageRecord> st;
        try {
          st = profile_stages(*a, l.problem, dir, ctx);
        } catch (const Error& e) {
          std::printf("%-24s %-20s (no profile: %s)\n", row.c_str(), std::string(a->name()).c_str(), e.what());
          continue;
        }
        double total = 0;
        for (const StageRecord& r : st) total += r.seconds;
        for (const StageRecord& r : st) {
          const double gf = r.seconds > 0 ? r.flops * 1e-9 / r.seconds : 0, gb = r.seconds > 0 ? r.bytes * 1e-9 / r.seconds : 0;
          const double pk = o.peak_gflops > 0 ? 100 * gf / o.peak_gflops : 0, pb = bw_gbs > 0 ? 100 * gb / bw_gbs : 0;
          const double share = total > 0 ? 100 * r.seconds / total : 0;
          const double limit = r.kind == StageKind::compute ? pk : pb;
          std::printf("%-24s %-20s %-32s %8.3f %5.1f%% %8.1f %5.1f%% %7.1f %5.1f%%  %s %.0f%%\n", row.c_str(),
                      std::string(a->name()).c_str(), r.name.c_str(), r.seconds * 1e3, share, gf, pk, gb, pb,
                      r.kind == StageKind::compute ? "peak" : "bandwidth", limit);
          char line[512];
          std::snprintf(line, sizeof line, "%s,%s,%s,%s,%s,%.6f,%.4f,%.3f,%.2f,%.3f,%.2f\n", l.id.c_str(),
                        std::string(to_string(dir)).c_str(), std::string(a->name()).c_str(), r.name.c_str(),
                        stage_kind_name(r.kind), r.seconds * 1e3, share / 100, gf, pk, gb, pb);
          csv += line;
        }
      }
  if (!o.stages_csv.empty()) {
    const std::string tmp = o.stages_csv + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) fail("bench_conv: cannot write '" + tmp + "'");
    const bool ok = std::fwrite(csv.data(), 1, csv.size(), f) == csv.size();
    if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), o.stages_csv.c_str()) != 0) {
      std::remove(tmp.c_str());
      fail("bench_conv: cannot write '" + o.stages_csv + "'");
    }
    std::printf("wrote %s\n", o.stages_csv.c_str());
  }
}

// --model=CARD: every selected CUDA entry's modelled time on the card; nothing runs on a device.
int run_modelled(const Options& o) {
  if (o.cpu || !o.cuda) fail("bench_conv: --model prices the CUDA kernels on a GPU that is not here; give --device=cuda");
  if (o.stages || o.process_time) fail("bench_conv: --stages and --process_time measure; they do not go with --model");
  ModelRunOptions mo;
  mo.card = &gpu_card(o.model);
  mo.tf32 = true;
  const char* env = std::getenv("CONVLAB_SIMT_COUNTS");
  mo.counter = env && *env ? env : executable_dir() + "/simt_counts";
  if (::access(mo.counter.c_str(), X_OK) != 0)
    fail("bench_conv: --model needs the SIMT emulator's counting build, simt_counts (built beside bench_conv by a "
         "GCC build with tests); not found at '" + printable(mo.counter) + "' (CONVLAB_SIMT_COUNTS names another)");
  std::regex filter;
  try {
    filter = std::regex(o.filter.empty() ? "." : o.filter);
  } catch (const std::regex_error&) {
    fail("bench_conv: --benchmark_filter='" + o.filter + "' is not a regular expression");
  }
  const auto name = [](const LayerCase& lc, Direction dir, std::string_view algo) {
    return "conv/" + lc.label + "/" + std::string(to_string(dir)) + "/" + std::string(algo);
  };
  mo.keep = [&](const LayerCase& lc, Direction dir, const Algorithm& a) {
    return selected(o, a) && std::regex_search(name(lc, dir, a.name()), filter);
  };
  std::vector<LayerCase> cases;
  for (const NetLayer& l : network_layers(o.net, o.batch)) cases.push_back({l.id, l.problem, {}});
  int modelled = 0;
  mo.on_case = [&](const LayerCase& lc, Direction dir, const std::vector<ComparisonRow>& rows) {
    for (const ComparisonRow& r : rows) {
      if (r.status == "modelled") {
        ++modelled;
        std::printf("%-58s %10.3f ms %10.0f GFLOP/s  %s\n", (name(lc, dir, r.algo) + "/modelled").c_str(),
                    r.time * 1e3, r.flops / r.time * 1e-9, r.note.c_str());
      } else {
        std::printf("%-58s %s: %s\n", name(lc, dir, r.algo).c_str(), r.status.c_str(), r.note.c_str());
      }
    }
    std::fflush(stdout);
  };
  std::printf("bench_conv: MODELLED times on %s -- nothing is measured; %s; %s batch %d\n",
              std::string(mo.card->label).c_str(), std::string(mo.card->fitted_on).c_str(), o.net.c_str(), o.batch);
  Comparison cmp = model_comparison(cases, mo);
  if (cmp.rows.empty()) fail("bench_conv: no CUDA entry of " + o.net + " matches --benchmark_filter='" + o.filter + "'");
  cmp.network = o.net;
  cmp.batch = o.batch;
  if (!o.model_json.empty()) {
    write_file_atomic(o.model_json, comparison_json(cmp));
    std::printf("wrote %s\n", printable(o.model_json).c_str());
  }
  std::printf("%d entries modelled of %zu\n", modelled, cmp.rows.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    load_plugins(argc, argv);  // --plugin PATH, CONVLAB_PLUGINS: their algorithms join the registry first
    Options o = parse_own_flags(argc, argv);
    if (!o.model.empty()) return run_modelled(o);
    if (!o.model_json.empty()) fail("bench_conv: --model_json writes the rows of a --model run; give --model=CARD");
    // Repetitions through the global flags, so that names carry no "/repeats:N".
    std::vector<char*> args(argv, argv + argc);
    std::string reps_flag = "--benchmark_repetitions=" + std::to_string(o.reps);
    std::string aggregates_flag = "--benchmark_display_aggregates_only=true";
    if (!o.user_reps) {
      args.push_back(reps_flag.data());
      args.push_back(aggregates_flag.data());
    }
    int nargs = int(args.size());
    args.push_back(nullptr);
    benchmark::Initialize(&nargs, args.data());
    if (benchmark::ReportUnrecognizedArguments(nargs, args.data())) return 2;
    if (o.cuda && !cuda_info().available) {
      const std::string why = "bench_conv --device=" + std::string(o.cpu ? "all" : "cuda") + ": no CUDA device (" +
                              cuda_info().reason + ")";
      if (!o.cpu) fail(why);
      std::fprintf(stderr, "note: %s; the CUDA half is skipped\n", why.c_str());
      o.cuda = false;
    }
    if (!o.family.empty() && std::none_of(registry().begin(), registry().end(), [&](const Algorithm* a) {
          return selected(o, *a) && a->family() == o.family;
        }))
      fail("bench_conv: --family=" + o.family + ": no algorithm of that family on the chosen device");
    benchmark::AddCustomContext("convlab_net", o.net);
    benchmark::AddCustomContext("convlab_batch", std::to_string(o.batch));
    if (o.cpu) {
      const int threads = ExecContext{DeviceKind::cpu, o.threads}.resolved_threads();
      o.peak_gflops = measure_fma_peak(threads).gflops;
      benchmark::AddCustomContext("convlab_threads", std::to_string(threads));
      benchmark::AddCustomContext("convlab_cpu", cpu_info().model + " (" + cpu_info().isa() + ")");
      benchmark::AddCustomContext("convlab_cpu_peak_gflops", std::to_string(o.peak_gflops));
    }
    if (o.cuda) benchmark::AddCustomContext("convlab_gpu", cuda_info().name);
    if (register_all(o) == 0) fail("bench_conv: no algorithm to benchmark on " + o.net);
    TableReporter table;
    benchmark::RunSpecifiedBenchmarks(&table);
    if (table.console()) table.print_table(o.family);
    if (o.stages && o.cpu) print_stages(o, table);
    benchmark::Shutdown();
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
