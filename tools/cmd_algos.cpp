#include <cstdio>

#include "algorithms/registry.hpp"
#ifdef CONVLAB_HAS_ONEDNN
#include "algorithms/cpu/onednn.hpp"
#endif
#include "core/device.hpp"
#include "core/json.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

int cmd_algos(int argc, char** argv) {
  Args args("algos", "[--json]", "Lists every registered algorithm in registry order, its device, family and\n"
                                 "math (fp32, or tf32 for the reduced-precision variants that are chosen only\n"
                                 "when asked), and whether it can run on this machine (with the reason when not).\n"
                                 "The table opens with the CPU and the instruction set the CPU kernels and oneDNN\n"
                                 "use: the best the CPU has, or CONVLAB_ISA=avx512|avx2|portable to cap it.");
  args.flag("json", "print a JSON array instead of a table");
  if (!args.parse(argc, argv)) return 0;
  if (args.has("json")) {
    std::printf("[\n");
    const auto& reg = registry();
    for (size_t i = 0; i < reg.size(); ++i) {
      const Algorithm* a = reg[i];
      const std::string why = a->unavailable_reason();
      std::printf("  {\"name\": %s, \"device\": %s, \"family\": %s, \"available\": %s, \"reason\": %s, "
                  "\"deterministic\": %s, \"math\": %s, \"description\": %s}%s\n",
                  json::quote(a->name()).c_str(), json::quote(to_string(a->device())).c_str(),
                  json::quote(a->family()).c_str(), why.empty() ? "true" : "false", json::quote(why).c_str(),
                  a->deterministic() ? "true" : "false", json::quote(a->math()).c_str(),
                  json::quote(a->description()).c_str(),
                  i + 1 < reg.size() ? "," : "");
    }
    std::printf("]\n");
    return 0;
  }
  std::printf("cpu: %s | %s", cpu_info().model.c_str(), describe_isa(cpu_info()).c_str());
#ifdef CONVLAB_HAS_ONEDNN
  std::printf(" | oneDNN %s", onednn_cpu_isa().c_str());
#endif
  std::printf("\n%-34s %-5s %-14s %-5s %s\n", "algorithm", "dev", "family", "math", "available here");
  for (const Algorithm* a : registry()) {
    const std::string why = a->unavailable_reason();
    std::printf("%-34s %-5s %-14s %-5s %s\n", std::string(a->name()).c_str(),
                std::string(to_string(a->device())).c_str(), std::string(a->family()).c_str(),
                std::string(a->math()).c_str(), why.empty() ? "yes" : why.c_str());
  }
  return 0;
}

}  // namespace convlab::cli
