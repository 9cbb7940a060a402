// convlab demo: the built-in example (algorithms/demo.hpp runs it).
#include <cstdio>

#include "algorithms/demo.hpp"
#include "core/device.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

int cmd_demo(int argc, char** argv) {
  Args args("demo", "[--net NET] [--batch N] [--threads N]",
            "The built-in example: runs every available CPU algorithm on every layer of a network in all\n"
            "three directions, checks each result against the fp64 reference and prints time, GFLOP/s\n"
            "and error. Exit 1 if any algorithm exceeds its declared error bound.");
  args.option("net", "NET", "alexnet, alexnet-owt, vgg16, resnet50, mobilenet_v2 or densenet121", "alexnet");
  args.option("batch", "N", "minibatch", "2");
  args.option("threads", "N", "CPU threads (0 = all)", "0");
  if (!args.parse(argc, argv)) return 0;
  DemoOptions opt;
  opt.batch = int(args.get_int("batch", 1, 4096));
  opt.threads = int(args.get_int("threads", 0, 4096));
  opt.net = args.get("net");
  opt.on_start = [&] {
    std::printf("convlab demo: %s at batch %d on %s\n\n", opt.net.c_str(), opt.batch,
                device_fingerprint(DeviceKind::cpu, opt.threads).c_str());
    std::printf("%-20s %-10s %-24s %10s %9s %10s %s\n", "layer", "dir", "algorithm", "median ms", "GFLOP/s",
                "max rel", "check");
  };
  opt.on_row = [](const DemoRow& r) {
    std::printf("%-20s %-10s %-24s %10.3f %9.2f %10.2e %s\n", r.layer.c_str(), std::string(to_string(r.dir)).c_str(),
                r.algo.c_str(), r.median * 1e3, r.gflops, r.max_rel, r.passed ? "ok" : "FAIL");
  };
  const int failures = run_demo(opt);
  std::printf("\n%s\n", failures ? "some algorithms exceeded their error bound" : "all results within their bounds");
  return failures ? 1 : 0;
}

}  // namespace convlab::cli
