#include <cstdio>

#include "core/error.hpp"
#include "core/problem_list.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

int cmd_problem(int argc, char** argv) {
  Args args("problem", "NET|PROBLEM|@FILE... [--batch N]",
            "Parses benchdnn conv descriptors (g2mb32ic96ih27oc256oh27kh5ph2n\"alexnet:conv2\") or layer ids\n"
            "(alexnet.conv2) and prints the canonical form, output size, FLOPs and bytes. A network name\n"
            "(alexnet, alexnet-owt, vgg16, resnet50, mobilenet_v2, densenet121, tiny) prints all its layers.\n"
            "@FILE reads a file (@- stdin): one problem per line (# comments, blank lines), or a oneDNN verbose\n"
            "log (ONEDNN_VERBOSE=1 output), whose convolution exec lines give problem and direction; repeats\n"
            "are counted (xN).");
  args.positionals("NET|PROBLEM|@FILE...", "networks, layer ids, benchdnn problem strings or @FILE lists", 1, 1000);
  args.option("batch", "N", "override every minibatch (networks and layer ids default to 32)");
  if (!args.parse(argc, argv)) return 0;
  const ProblemSet set = expand_problem_args(args);
  for (const ProblemItem& it : set.items) {
    const ConvProblem& p = it.problem;
    std::string extra;
    if (it.dir) extra += "  " + std::string(to_string(*it.dir));
    if (it.count > 1) extra += "  x" + std::to_string(it.count);
    std::printf("%-60s P=%d Q=%d  %.3f GFLOP  %s%s\n", p.canonical().c_str(), p.p(), p.q(), p.flops() * 1e-9,
                format_bytes(size_t(p.bytes())).c_str(), extra.c_str());
  }
  return 0;
}

}  // namespace convlab::cli
