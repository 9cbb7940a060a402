#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/error.hpp"
#include "core/problem_list.hpp"
#include "core/npy.hpp"
#include "core/paths.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

namespace {

void load_input(const Args& args, const char* opt, Tensor& into, const char* role, bool used, Direction dir) {
  if (!args.has(opt)) return;
  if (!used)
    fail(std::string("--") + opt + " is not an input of " + std::string(to_string(dir)) +
         " (fwd reads --x --w, bwd-data --dy --w, bwd-filter --x --dy)");
  Tensor t = read_npy(args.get(opt));
  if (t.shape != into.shape)
    fail(std::string("--") + opt + " '" + printable(args.get(opt)) + "' has shape " + t.shape_string() +
         " but the problem's " + role + " is " + into.shape_string());
  // A NaN or Inf in the input makes every algorithm's output (and the reference) non-finite: the file
  // is at fault, not the algorithm --check would otherwise blame.
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t.data()[i]) && bad++ == 0) first = i;
  if (bad)
    fail(std::string("--") + opt + " '" + printable(args.get(opt)) + "' holds " + std::to_string(bad) +
         " non-finite value" + (bad == 1 ? "" : "s") + " (the first, element " + std::to_string(first) + ", is " +
         (std::isnan(t.data()[first]) ? "nan" : t.data()[first] > 0 ? "inf" : "-inf") +
         "): a convolution's inputs must be finite numbers");
  into = std::move(t);
}

}  // namespace

int cmd_conv(int argc, char** argv) {
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
  if (!args.parse(argc, argv)) return 0;
  if (!args.has("algo")) fail("convlab conv: --algo NAME is required (see convlab algos)");

  const int batch = args.has("batch") ? int(args.get_int("batch", 1, 1 << 20)) : 0;
  ConvProblem p;
  try {
    p = problem_from_text(args.pos()[0], batch);
  } catch (const Error& e) {
    fail(std::string("convlab conv: ") + e.what());
  }
  const Direction dir = parse_direction(args.get("dir"));
  const Algorithm& algo = get_algorithm(args.get("algo"));
  if (args.has("out")) require_output_path(args.get("out"), "convlab conv: --out");
  const int reps = int(args.get_int("reps", 1, 100000));
  const int threads = int(args.get_int("threads", 0, 4096));
  const uint64_t seed = uint64_t(args.get_int("seed", 0, 1L << 62));

  if (auto why = algo.unavailable_reason(); !why.empty()) {
    std::fprintf(stderr, "error: %s: %s\n", std::string(algo.name()).c_str(), why.c_str());
    return 2;
  }
  if (auto s = algo.supports(p, dir); !s) {
    std::fprintf(stderr, "error: %s does not support %s %s: %s\n", std::string(algo.name()).c_str(),
                 p.canonical().c_str(), std::string(to_string(dir)).c_str(), s.reason.c_str());
    return 2;
  }
  // Everything the run holds, checked before any of it is allocated: the host tensors, one input
  // read from .npy beside them, the algorithm's buffers and workspace with their guard zones, and
  // --check's fp64 reference.
  MemoryNeed need;
  need.host = data_bytes(p);
  size_t loaded = 0;
  for (auto [opt, elems] : {std::pair{"x", p.src_elems()}, std::pair{"w", p.wei_elems()}, std::pair{"dy", p.dst_elems()}})
    if (args.has(opt)) loaded = std::max(loaded, size_t(elems) * sizeof(float));
  need.host += loaded;
  need.add(algo.device(), runner_bytes(algo, p, dir));
  if (args.has("check")) need.host += reference_bytes(p, dir);
  need.require(algo.device(), "convlab conv: " + std::string(algo.name()) + " on " + p.canonical() + " " +
                                  std::string(to_string(dir)));

  ConvData data = ConvData::random(p, seed);
  load_input(args, "x", data.src, "src", dir != Direction::bwd_data, dir);
  load_input(args, "w", data.wei, "wei", dir != Direction::bwd_filter, dir);
  load_input(args, "dy", data.dst, "diff_dst", dir != Direction::fwd, dir);
  ExecContext ctx;
  ctx.threads = threads;
  ConvRunner runner(algo, p, dir, ctx);
  runner.upload(data);
  runner.poison();
  TimingOptions topt;
  topt.warmup = 1;
  topt.min_reps = reps;
  topt.max_reps = reps;
  topt.max_seconds = 1e9;
  const TimingStats t = runner.time(topt);
  runner.download_output(data);

  std::printf("problem    %s\n", p.canonical().c_str());
  std::printf("algorithm  %s (%s), %s, threads %d\n", std::string(algo.name()).c_str(),
              std::string(to_string(algo.device())).c_str(), std::string(to_string(dir)).c_str(),
              ctx.resolved_threads());
  std::printf("workspace  %s\n", format_bytes(runner.workspace_bytes()).c_str());
  std::printf("time       median %.4f ms  (min %.4f, max %.4f, %d reps)  %.2f GFLOP/s\n", t.median * 1e3,
              t.min * 1e3, t.max * 1e3, t.reps, p.flops() / t.median * 1e-9);
  int rc = 0;
  if (auto g = runner.check_guards(); !g.empty()) {
    std::printf("guard      FAILED: %s\n", g.c_str());
    rc = 1;
  }
  if (args.has("check")) {
    const Reference ref = compute_reference(p, dir, data, threads);
    const Tolerance tol = algo.tolerance(p, dir);
    const ErrorStats st = compare(data.output(dir).data(), ref, tol);
    std::printf("check      max abs err %.3e  max rel err %.3e  worst err/bound %.3g  -> %s\n", st.max_abs,
                st.max_rel, st.worst_ratio, st.passed() ? "PASS" : "FAIL");
    std::printf("           bound: %s (elem %.3g, global %.3g)\n", tol.basis.c_str(), tol.elem, tol.global);
    if (!st.passed()) {
      std::printf("           %lld elements over the bound, %lld non-finite\n", (long long)st.bad,
                  (long long)st.non_finite);
      rc = 1;
    }
  }
  if (args.has("out")) {
    write_npy(args.get("out"), data.output(dir));
    std::printf("wrote      %s %s\n", printable(args.get("out")).c_str(), data.output(dir).shape_string().c_str());
  }
  return rc;
}

}  // namespace convlab::cli
