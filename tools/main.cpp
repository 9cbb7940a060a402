// convlab: the command-line front end. One line per subcommand in commands();
// errors are one line on stderr and a non-zero exit (2: bad input, 1: failed check).
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "core/device.hpp"
#include "core/error.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"algos", "list every registered algorithm and whether it can run here", cmd_algos},
      {"problem", "parse benchdnn problem strings / layer ids, print canonical form and sizes", cmd_problem},
      {"conv", "run one algorithm on one problem and direction (.npy in/out, --check)", cmd_conv},
      {"peak", "measure the CPU's fp32 FMA peak (GFLOP/s) per thread count", cmd_peak},
      {"demo", "built-in example: every CPU algorithm on AlexNet's layers, checked and timed", cmd_demo},
      {"tune", "autotune layers / networks: find (measured) vs get (cost model), with a cache", cmd_tune},
      {"cache", "show, check or merge autotune cache files", cmd_cache},
      {"layers", "per-layer comparison of every algorithm (time, GFLOP/s, %peak, error, get/find picks)", cmd_layers},
      {"train", "train AlexNet under each algorithm policy: iteration time, speedups, per-layer attribution, losses", cmd_train},
      {"report", "the main job: per-layer algorithm comparison + training under each policy, written to results/", cmd_report},
  };
  return list;
}

}  // namespace convlab::cli

namespace {
void usage(FILE* f) {
  std::fprintf(f, "usage: convlab <command> [options]   (convlab <command> --help for details)\n\ncommands:\n");
  for (const auto& c : convlab::cli::commands()) std::fprintf(f, "  %-10s %s\n", c.name, c.summary);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("convlab %s\n", CONVLAB_VERSION);
    return 0;
  }
  for (const auto& c : convlab::cli::commands()) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      (void)convlab::cpu_info();  // a bad CONVLAB_ISA is one line and exit 2 before any work
      return c.run(argc - 1, argv + 1);
    } catch (const convlab::Error& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 2;
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "error: out of memory\n");
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 2;
    }
  }
  std::fprintf(stderr, "error: unknown command '%s' (run 'convlab --help')\n", argv[1]);
  return 2;
}
