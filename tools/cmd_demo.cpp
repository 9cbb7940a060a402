#include <algorithm>
#include <cstdio>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/layers.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

int cmd_demo(int argc, char** argv) {
  Args args("demo", "[--net NET] [--batch N] [--threads N]",
            "The built-in example: runs every available CPU algorithm on every layer of a network in all\n"
            "three directions, checks each result against the fp64 reference and prints time, GFLOP/s\n"
            "and error. Exit 1 if any algorithm exceeds its declared error bound.");
  args.option("net", "NET", "alexnet, alexnet-owt, vgg16 or resnet50", "alexnet");
  args.option("batch", "N", "minibatch", "2");
  args.option("threads", "N", "CPU threads (0 = all)", "0");
  if (!args.parse(argc, argv)) return 0;
  const int batch = int(args.get_int("batch", 1, 4096));
  const int threads = int(args.get_int("threads", 0, 4096));
  const auto layers = network_layers(args.get("net"), batch);
  ExecContext ctx;
  ctx.threads = threads;
  // The most any (layer, direction, algorithm) holds at once, checked before anything is allocated:
  // the inputs, the fp64 reference, the output copy and the algorithm's buffers.
  for (const auto& layer : layers)
    for (Direction dir : kAllDirections) {
      size_t runner = 0;
      for (const Algorithm* algo : registry())
        if (algo->device() == DeviceKind::cpu && algo->unavailable_reason().empty() && algo->supports(layer.problem, dir))
          runner = std::max(runner, runner_bytes(*algo, layer.problem, dir));
      require_memory(DeviceKind::cpu,
                     2 * data_bytes(layer.problem) + reference_bytes(layer.problem, dir) + runner,
                     "convlab demo: " + layer.id + " " + std::string(to_string(dir)) + " at batch " +
                         std::to_string(batch));
    }
  std::printf("convlab demo: %s at batch %d on %s\n\n", args.get("net").c_str(), batch,
              device_fingerprint(DeviceKind::cpu, threads).c_str());
  std::printf("%-20s %-10s %-24s %10s %9s %10s %s\n", "layer", "dir", "algorithm", "median ms", "GFLOP/s",
              "max rel", "check");
  int failures = 0;
  for (const auto& layer : layers) {
    for (Direction dir : kAllDirections) {
      const ConvData data = ConvData::random(layer.problem, 1);
      const Reference ref = compute_reference(layer.problem, dir, data, threads);
      for (const Algorithm* algo : registry()) {
        if (algo->device() != DeviceKind::cpu || !algo->unavailable_reason().empty()) continue;
        if (!algo->supports(layer.problem, dir)) continue;
        ConvRunner runner(*algo, layer.problem, dir, ctx);
        ConvData out(layer.problem);
        runner.upload(data);
        runner.poison();
        TimingOptions topt;
        topt.max_seconds = 0.5;
        const TimingStats t = runner.time(topt);
        runner.download_output(out);
        const ErrorStats st = compare(out.output(dir).data(), ref, algo->tolerance(layer.problem, dir));
        failures += !st.passed();
        std::printf("%-20s %-10s %-24s %10.3f %9.2f %10.2e %s\n", layer.id.c_str(),
                    std::string(to_string(dir)).c_str(), std::string(algo->name()).c_str(), t.median * 1e3,
                    layer.problem.flops() / t.median * 1e-9, st.max_rel, st.passed() ? "ok" : "FAIL");
      }
    }
  }
  std::printf("\n%s\n", failures ? "some algorithms exceeded their error bound" : "all results within their bounds");
  return failures ? 1 : 0;
}

}  // namespace convlab::cli
