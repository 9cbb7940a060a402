#include <cstdio>

#include "core/layers.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

int cmd_problem(int argc, char** argv) {
  Args args("problem", "PROBLEM... [--batch N]",
            "Parses benchdnn conv descriptors (g2mb32ic96ih27oc256oh27kh5ph2n\"alexnet:conv2\") or layer ids\n"
            "(alexnet.conv2) and prints the canonical form, output size, FLOPs and bytes. A network name\n"
            "(alexnet, alexnet-owt, vgg16, resnet50) prints all its layers.");
  args.positionals("PROBLEM...", "benchdnn descriptors, layer ids or network names", 1, 1000);
  args.option("batch", "N", "override the minibatch");
  if (!args.parse(argc, argv)) return 0;
  const int batch = args.has("batch") ? int(args.get_int("batch", 1, 1 << 20)) : 0;
  auto show = [](const ConvProblem& p) {
    std::printf("%-60s P=%d Q=%d  %.3f GFLOP  %.2f MB\n", p.canonical().c_str(), p.p(), p.q(), p.flops() * 1e-9,
                p.bytes() * 1e-6);
  };
  for (const auto& text : args.pos()) {
    if (is_network(text)) {
      for (const auto& l : network_layers(text, batch > 0 ? batch : 32)) show(l.problem);
    } else {
      show(problem_from_text(text, batch));
    }
  }
  return 0;
}

}  // namespace convlab::cli
