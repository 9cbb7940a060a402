#include "algorithms/demo.hpp"

#include <algorithm>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/layers.hpp"

namespace convlab {

namespace {

bool runs_here(const Algorithm& a, const ConvProblem& p, Direction dir) {
  return a.device() == DeviceKind::cpu && a.unavailable_reason().empty() && a.supports(p, dir);
}

// The most any (layer, direction, algorithm) holds at once: the inputs, the fp64 reference, the
// output copy and the algorithm's buffers.
void require_demo_memory(const std::vector<NetLayer>& layers, int batch) {
  for (const auto& layer : layers)
    for (Direction dir : kAllDirections) {
      size_t runner = 0;
      for (const Algorithm* algo : registry())
        if (runs_here(*algo, layer.problem, dir)) runner = std::max(runner, runner_bytes(*algo, layer.problem, dir));
      require_memory(DeviceKind::cpu, 2 * data_bytes(layer.problem) + reference_bytes(layer.problem, dir) + runner,
                     "convlab demo: " + layer.id + " " + std::string(to_string(dir)) + " at batch " +
                         std::to_string(batch));
    }
}

DemoRow run_one(const Algorithm& algo, const NetLayer& layer, Direction dir, const ConvData& data,
                const Reference& ref, const ExecContext& ctx) {
  ConvRunner runner(algo, layer.problem, dir, ctx);
  ConvData out(layer.problem);
  runner.upload(data);
  runner.poison();
  TimingOptions topt;
  topt.max_seconds = 0.5;
  const TimingStats t = runner.time(topt);
  runner.download_output(out);
  const ErrorStats st = compare(out.output(dir).data(), ref, algo.tolerance(layer.problem, dir));
  return {layer.id, dir, std::string(algo.name()), t.median, layer.problem.flops() / t.median * 1e-9, st.max_rel,
          st.passed()};
}

}  // namespace

int run_demo(const DemoOptions& opt) {
  const auto layers = network_layers(opt.net, opt.batch);
  ExecContext ctx;
  ctx.threads = opt.threads;
  require_demo_memory(layers, opt.batch);
  if (opt.on_start) opt.on_start();
  int failures = 0;
  for (const auto& layer : layers)
    for (Direction dir : kAllDirections) {
      const ConvData data = ConvData::random(layer.problem, 1);
      const Reference ref = compute_reference(layer.problem, dir, data, opt.threads);
      for (const Algorithm* algo : registry()) {
        if (!runs_here(*algo, layer.problem, dir)) continue;
        const DemoRow row = run_one(*algo, layer, dir, data, ref, ctx);
        failures += !row.passed;
        if (opt.on_row) opt.on_row(row);
      }
    }
  return failures;
}

}  // namespace convlab
