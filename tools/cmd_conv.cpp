// convlab conv: one algorithm on one problem and direction (algorithms/conv_run.hpp does the run).
#include <cstdio>
#include <string>

#include "algorithms/conv_run.hpp"
#include "algorithms/registry.hpp"
#include "core/error.hpp"
#include "core/problem_list.hpp"
#include "core/npy.hpp"
#include "core/paths.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

namespace {

Args conv_args() {
  Args args("conv", "PROBLEM --algo NAME --dir fwd|bwd-data|bwd-filter [options]",
            "Runs one algorithm on one problem and direction and prints its median time.\n"
            "PROBLEM is a benchdnn descriptor or a layer id (alexnet.conv2). Inputs are random (fixed\n"
            "seed) unless given as .npy files: fwd reads --x (src) and --w (wei); bwd-data reads --dy\n"
            "(diff_dst) and --w; bwd-filter reads --x and --dy. --out receives dst (fwd), diff_src\n"
            "(bwd-data) or diff_wei (bwd-filter), NCHW / KCRS float32. Exit 1 when --check fails or a guard\n"
            "zone after a buffer was overwritten; 2 when the algorithm cannot run this problem here.");
  args.positionals("PROBLEM", "benchdnn descriptor or layer id", 1, 1);
  args.option("algo", "NAME", "algorithm name (see convlab algos)");
  args.option("dir", "DIR", "fwd, bwd-data or bwd-filter", "fwd");
  args.option("x", "F.npy", "src, shape (N, C, H, W)");
  args.option("w", "F.npy", "wei, shape (K, C/groups, R, S)");
  args.option("dy", "F.npy", "diff_dst, shape (N, K, P, Q)");
  args.option("out", "F.npy", "write the output here (atomically)");
  args.flag("check", "compare with the fp64 reference: max abs / rel error and the algorithm's bound");
  args.option("reps", "N", "timed repetitions (median reported)", "5");
  args.option("threads", "N", "CPU threads (0 = all)", "0");
  args.option("batch", "N", "override the minibatch");
  args.option("seed", "S", "seed of the random inputs", "1");
  return args;
}

ConvRunOptions conv_options(const Args& args) {
  if (!args.has("algo")) fail("convlab conv: --algo NAME is required (see convlab algos)");
  ConvRunOptions opt;
  const int batch = args.has("batch") ? int(args.get_int("batch", 1, 1 << 20)) : 0;
  try {
    opt.problem = problem_from_text(args.pos()[0], batch);
  } catch (const Error& e) {
    fail(std::string("convlab conv: ") + e.what());
  }
  opt.dir = parse_direction(args.get("dir"));
  opt.algo = &get_algorithm(args.get("algo"));
  if (args.has("out")) require_output_path(args.get("out"), "convlab conv: --out");
  opt.reps = int(args.get_int("reps", 1, 100000));
  opt.threads = int(args.get_int("threads", 0, 4096));
  opt.seed = uint64_t(args.get_int("seed", 0, 1L << 62));
  for (auto [name, file] : {std::pair{"x", &opt.x}, std::pair{"w", &opt.w}, std::pair{"dy", &opt.dy}})
    if (args.has(name)) *file = args.get(name);
  opt.check = args.has("check");
  return opt;
}

// The run's lines; the exit status: 1 when a guard zone was overwritten or the check failed.
int print_run(const ConvRunOptions& opt, const ConvRun& run) {
  const ConvProblem& p = opt.problem;
  std::printf("problem    %s\n", p.canonical().c_str());
  std::printf("algorithm  %s (%s), %s, threads %d\n", std::string(opt.algo->name()).c_str(),
              std::string(to_string(opt.algo->device())).c_str(), std::string(to_string(opt.dir)).c_str(), run.threads);
  std::printf("workspace  %s\n", format_bytes(run.workspace).c_str());
  const TimingStats& t = run.time;
  std::printf("time       median %.4f ms  (min %.4f, max %.4f, %d reps)  %.2f GFLOP/s\n", t.median * 1e3,
              t.min * 1e3, t.max * 1e3, t.reps, p.flops() / t.median * 1e-9);
  int rc = 0;
  if (!run.guard_failure.empty()) {
    std::printf("guard      FAILED: %s\n", run.guard_failure.c_str());
    rc = 1;
  }
  if (run.checked) {
    const ErrorStats& st = run.error;
    const Tolerance& tol = run.tolerance;
    std::printf("check      max abs err %.3e  max rel err %.3e  worst err/bound %.3g  -> %s\n", st.max_abs,
                st.max_rel, st.worst_ratio, st.passed() ? "PASS" : "FAIL");
    std::printf("           bound: %s (elem %.3g, global %.3g)\n", tol.basis.c_str(), tol.elem, tol.global);
    if (!st.passed()) {
      std::printf("           %lld elements over the bound, %lld non-finite\n", (long long)st.bad,
                  (long long)st.non_finite);
      rc = 1;
    }
  }
  return rc;
}

}  // namespace

int cmd_conv(int argc, char** argv) {
  Args args = conv_args();
  if (!args.parse(argc, argv)) return 0;
  const ConvRunOptions opt = conv_options(args);
  const ConvRun run = run_conv(opt);
  const int rc = print_run(opt, run);
  if (args.has("out")) {
    write_npy(args.get("out"), run.data.output(opt.dir));
    std::printf("wrote      %s %s\n", printable(args.get("out")).c_str(), run.data.output(opt.dir).shape_string().c_str());
  }
  return rc;
}

}  // namespace convlab::cli
