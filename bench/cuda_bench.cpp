// Every cuda.* algorithm on AlexNet's layers (batch 32, core's layer table), all
// three directions: conv/<layer>/<dir>/<algorithm>, FLOP rate counter. Without a
// CUDA device every case reports the "no CUDA device" reason as a skip. Times
// are CUDA-event times of one run after an L2 flush; a device fault ends the run (exit 3).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/error.hpp"
#include "core/layers.hpp"

namespace {

using namespace convlab;

void run_case(benchmark::State& state, const Algorithm* algo, ConvProblem p, Direction dir) {
  const std::string why = algo->unavailable_reason();
  if (!why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  const Support s = algo->supports(p, dir);
  if (!s) {
    state.SkipWithError(s.reason.c_str());
    return;
  }
  try {
    ExecContext ctx;
    ctx.device = DeviceKind::cuda;
    ConvRunner runner(*algo, p, dir, ctx);
    runner.upload(ConvData::random(p, 1));
    runner.run();  // warm-up (plans, caches)
    // One rep per iteration, timed with CUDA events after an L2 flush (ConvRunner::time).
    TimingOptions one;
    one.warmup = 0;
    one.min_reps = one.max_reps = 1;
    for (auto _ : state) state.SetIterationTime(runner.time(one).median);
    state.counters["FLOP/s"] = benchmark::Counter(p.flops(), benchmark::Counter::kIsIterationInvariantRate);
  } catch (const DeviceFault& e) {
    // Every later case would fail the same way: stop with one line.
    std::fprintf(stderr, "error: device fault in %s: %s\n", std::string(algo->name()).c_str(), e.what());
    std::exit(3);
  } catch (const Error& e) {
    state.SkipWithError(e.what());
  }
}

int register_all() {
  for (const Algorithm* a : registry()) {
    if (a->device() != DeviceKind::cuda) continue;
    for (const NetLayer& l : network_layers("alexnet", 32))
      for (Direction d : kAllDirections) {
        const std::string name =
            "conv/" + l.id + "/" + std::string(to_string(d)) + "/" + std::string(a->name());
        benchmark::RegisterBenchmark(name.c_str(), run_case, a, l.problem, d)->UseManualTime()->Unit(
            benchmark::kMillisecond);
      }
  }
  return 0;
}
const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
