// The per-layer convolution benchmark: one Google Benchmark per
// (network layer x algorithm x direction), registered at startup from the layer
// tables (core/layers.hpp) and the registry — every CPU algorithm available here
// that supports the case, except cpu.reference. Names:
//   conv/alexnet.conv3/fwd/cpu.winograd_f4x3
// Google Benchmark appends "/real_time" (wall-clock time: the work runs on
// OpenMP threads) and, per aggregate, "_median" etc.: in the JSON, "run_name" is
// conv/alexnet.conv3/fwd/cpu.winograd_f4x3/real_time.
// Counters: GFLOP/s (the direct convolution's FLOPs, a kIsRate counter),
// images/s (items_per_second), workspace bytes. Medians over repetitions.
//
//   bench_conv [--net=alexnet] [--batch=32] [--threads=N] [--reps=5] [benchmark flags...]
//   bench_conv --benchmark_filter='alexnet.*onednn' --benchmark_out=r.json
//
// --threads 0 (default) = all hardware threads. --reps sets the repetitions
// (and shows aggregates only) unless --benchmark_repetitions is given. Each benchmark runs the algorithm
// once untimed (warm-up: plans, page faults) before its timed iterations.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/layers.hpp"

namespace {

using namespace convlab;

struct Options {
  std::string net = "alexnet";
  int batch = 32;
  int threads = 0;
  int reps = 5;
  bool user_reps = false;  // --benchmark_repetitions given: leave repetitions to it
};

int to_int(std::string_view flag, std::string_view v) {
  char* end = nullptr;
  const std::string s(v);
  const long x = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || x < 0) fail("bench_conv: " + std::string(flag) + " needs a non-negative integer, got '" + s + "'");
  return int(x);
}

// Consumes our flags from argv, leaving the rest for benchmark::Initialize.
Options parse_own_flags(int& argc, char** argv) {
  Options o;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](std::string_view flag) -> std::string_view {
      if (a.size() > flag.size() && a.substr(0, flag.size()) == flag && a[flag.size()] == '=') return a.substr(flag.size() + 1);
      return {};
    };
    if (auto v = value("--net"); !v.empty()) o.net = std::string(v);
    else if (auto v = value("--batch"); !v.empty()) o.batch = to_int("--batch", v);
    else if (auto v = value("--threads"); !v.empty()) o.threads = to_int("--threads", v);
    else if (auto v = value("--reps"); !v.empty()) o.reps = to_int("--reps", v);
    else {
      if (a.substr(0, 24) == "--benchmark_repetitions=") o.user_reps = true;
      argv[out++] = argv[i];
    }
  }
  argc = out;
  if (o.batch < 1) fail("bench_conv: --batch must be at least 1");
  if (o.reps < 1) fail("bench_conv: --reps must be at least 1");
  return o;
}

void bench_case(benchmark::State& state, const Algorithm* algo, ConvProblem p, Direction dir, int threads) {
  ExecContext ctx;
  ctx.threads = threads;
  try {
    ConvRunner runner(*algo, p, dir, ctx);
    runner.upload(ConvData::random(p, 1));
    runner.run();  // untimed warm-up
    for (auto _ : state) runner.run();
    const double it = double(state.iterations());
    state.counters["GFLOP/s"] = benchmark::Counter(p.flops() * 1e-9 * it, benchmark::Counter::kIsRate);
    state.counters["workspace"] = benchmark::Counter(double(runner.workspace_bytes()), benchmark::Counter::kDefaults,
                                                     benchmark::Counter::kIs1024);
    state.SetItemsProcessed(int64_t(it) * p.n);
  } catch (const Error& e) {
    state.SkipWithError(e.what());
  }
}

int register_all(const Options& o) {
  const std::vector<NetLayer> layers = network_layers(o.net, o.batch);
  int count = 0;
  for (const NetLayer& l : layers)
    for (Direction dir : kAllDirections)
      for (const Algorithm* a : registry()) {
        if (a->device() != DeviceKind::cpu || a->name() == "cpu.reference") continue;
        if (!a->unavailable_reason().empty() || !a->supports(l.problem, dir)) continue;
        const std::string name = "conv/" + l.id + "/" + std::string(to_string(dir)) + "/" + std::string(a->name());
        auto* b = benchmark::RegisterBenchmark(name.c_str(), bench_case, a, l.problem, dir, o.threads);
        b->UseRealTime()->Unit(benchmark::kMillisecond);
        ++count;
      }
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse_own_flags(argc, argv);
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
    const int threads = ExecContext{DeviceKind::cpu, o.threads}.resolved_threads();
    benchmark::AddCustomContext("convlab_net", o.net);
    benchmark::AddCustomContext("convlab_batch", std::to_string(o.batch));
    benchmark::AddCustomContext("convlab_threads", std::to_string(threads));
    benchmark::AddCustomContext("convlab_cpu", cpu_info().model + " (" + cpu_info().isa() + ")");
    if (register_all(o) == 0) fail("bench_conv: no algorithm supports any layer of " + o.net);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
