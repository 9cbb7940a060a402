// simt_counts: what a profiler would count for each kernel launch of one
// cuda.* algorithm (its emulated composition) on one problem and direction,
// computed by the SIMT emulator's counting build (kernels/cuda/simt/counters.hpp).
//
//   simt_counts ALGORITHM PROBLEM [--dir fwd|bwd-data|bwd-filter] [--batch N]
//               [--sample BLOCKS] [--seed S] [--csv]
//   simt_counts --list      the emulated algorithms' names, one per line
//
// PROBLEM is a benchdnn descriptor (mb32ic3ih227oc96oh55kh11sh4) or a layer id
// (alexnet.conv1, at --batch, default 32). --sample runs that many blocks of
// each launch (grid corners, then seeded random ones; default 16, 0 = every
// block) and scales the counts. One line per launch, or CSV with --csv.
// Exit 0 after printing, 2 with one "error: ..." line on bad arguments.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/layers.hpp"
#include "core/problem.hpp"
#include "tests/kernels/cuda/counters/count_algorithm.hpp"

namespace {

using namespace convlab;

struct Args {
  std::string algorithm, problem;
  Direction dir = Direction::fwd;
  int batch = 32;
  simt::counters::Options options{.sample_blocks = 16, .seed = 1};
  bool csv = false;
};

const char* kUsage =
    "usage: simt_counts ALGORITHM PROBLEM [--dir fwd|bwd-data|bwd-filter] [--batch N] [--sample BLOCKS] "
    "[--seed S] [--csv]";

uint64_t parse_count(const std::string& opt, const std::string& v, uint64_t max) {
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || v[0] == '-' || *end != '\0' || x > max)
    fail(opt + " '" + printable(v) + "' is not a whole number in 0.." + std::to_string(max));
  return x;
}

Args parse_args(int argc, char** argv) {
  Args a;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--csv")
      a.csv = true;
    else if (arg == "--dir")
      a.dir = parse_direction(value());
    else if (arg == "--batch")
      a.batch = int(parse_count(arg, value(), 1u << 20));
    else if (arg == "--sample")
      a.options.sample_blocks = parse_count(arg, value(), 1u << 30);
    else if (arg == "--seed")
      a.options.seed = parse_count(arg, value(), ~uint64_t(0));
    else if (arg.rfind("--", 0) == 0)
      fail("unknown option '" + printable(arg) + "'");
    else
      pos.push_back(arg);
  }
  if (pos.size() != 2) fail(std::string("expected ALGORITHM and PROBLEM (") + kUsage + ")");
  if (a.batch < 1) fail("--batch must be at least 1");
  a.algorithm = pos[0];
  a.problem = pos[1];
  return a;
}

ConvProblem problem_of(const Args& a) {
  const size_t dot = a.problem.find('.');
  if (dot != std::string::npos && is_network(a.problem.substr(0, dot)))
    return network_layer(a.problem, a.batch).problem;
  ConvProblem p = parse_problem(a.problem);
  if (const std::string why = p.validate(); !why.empty()) fail("problem '" + printable(a.problem) + "': " + why);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--list") {
    for (const auto& a : cuda::counting::emulated_algorithms()) std::printf("%s\n", std::string(a->name()).c_str());
    return 0;
  }
  Args args;
  ConvProblem p;
  std::unique_ptr<Algorithm> algo;
  try {
    args = parse_args(argc, argv);
    p = problem_of(args);
    algo = cuda::counting::emulated_algorithm(args.algorithm);
    if (!algo) {
      std::string names;
      for (const auto& a : cuda::counting::emulated_algorithms())
        names += (names.empty() ? "" : ", ") + std::string(a->name());
      fail("unknown algorithm '" + printable(args.algorithm) + "' (the emulated ones: " + names + ")");
    }
    const Support s = algo->supports(p, args.dir);
    if (!s.ok)
      fail(args.algorithm + " does not support this problem (" + std::string(to_string(args.dir)) + "): " + s.reason);
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  try {
    const auto launches = cuda::counting::count_algorithm(*algo, p, args.dir, args.options);
    if (args.csv) std::printf("%s\n", simt::counters::csv_header().c_str());
    for (const auto& l : launches)
      std::printf("%s\n", (args.csv ? simt::counters::csv_row(l) : simt::counters::format_line(l)).c_str());
    std::fflush(stdout);
    if (std::ferror(stdout)) fail("cannot write the counts to standard output");
  } catch (const OutOfMemory& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
