#include "algorithms/conv_run.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "core/npy.hpp"

namespace convlab {

namespace {

// Every buffer the run holds, checked before any of it is allocated: the host tensors, one input
// read from .npy beside them, the algorithm's buffers and workspace with their guard zones, and
// the check's fp64 reference.
void require_conv_memory(const ConvRunOptions& opt) {
  const ConvProblem& p = opt.problem;
  const Algorithm& algo = *opt.algo;
  MemoryNeed need;
  need.host = data_bytes(p);
  size_t loaded = 0;
  for (auto [file, elems] : {std::pair{&opt.x, p.src_elems()}, std::pair{&opt.w, p.wei_elems()}, std::pair{&opt.dy, p.dst_elems()}})
    if (file->has_value()) loaded = std::max(loaded, size_t(elems) * sizeof(float));
  need.host += loaded;
  need.add(algo.device(), runner_bytes(algo, p, opt.dir));
  if (opt.check) need.host += reference_bytes(p, opt.dir);
  need.require(algo.device(), "convlab conv: " + std::string(algo.name()) + " on " + p.canonical() + " " +
                                  std::string(to_string(opt.dir)));
}

void load_input(const std::optional<std::string>& file, const char* opt, Tensor& into, const char* role, bool used,
                Direction dir) {
  if (!file) return;
  if (!used)
    fail(std::string("--") + opt + " is not an input of " + std::string(to_string(dir)) +
         " (fwd reads --x --w, bwd-data --dy --w, bwd-filter --x --dy)");
  Tensor t = read_npy(*file);
  if (t.shape != into.shape)
    fail(std::string("--") + opt + " '" + printable(*file) + "' has shape " + t.shape_string() +
         " but the problem's " + role + " is " + into.shape_string());
  // A NaN or Inf in the input makes every algorithm's output (and the reference) non-finite: the file
  // is at fault, not the algorithm the check would otherwise blame.
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t.data()[i]) && bad++ == 0) first = i;
  if (bad)
    fail(std::string("--") + opt + " '" + printable(*file) + "' holds " + std::to_string(bad) +
         " non-finite value" + (bad == 1 ? "" : "s") + " (the first, element " + std::to_string(first) + ", is " +
         (std::isnan(t.data()[first]) ? "nan" : t.data()[first] > 0 ? "inf" : "-inf") +
         "): a convolution's inputs must be finite numbers");
  into = std::move(t);
}

}  // namespace

ConvRun run_conv(const ConvRunOptions& opt) {
  const Algorithm& algo = *opt.algo;
  const ConvProblem& p = opt.problem;
  const Direction dir = opt.dir;
  if (auto why = algo.unavailable_reason(); !why.empty()) fail(std::string(algo.name()) + ": " + why);
  if (auto s = algo.supports(p, dir); !s)
    fail(std::string(algo.name()) + " does not support " + p.canonical() + " " + std::string(to_string(dir)) + ": " +
         s.reason);
  require_conv_memory(opt);
  ConvRun run(ConvData::random(p, opt.seed));
  load_input(opt.x, "x", run.data.src, "src", dir != Direction::bwd_data, dir);
  load_input(opt.w, "w", run.data.wei, "wei", dir != Direction::bwd_filter, dir);
  load_input(opt.dy, "dy", run.data.dst, "diff_dst", dir != Direction::fwd, dir);
  ExecContext ctx;
  ctx.threads = opt.threads;
  ConvRunner runner(algo, p, dir, ctx);
  runner.upload(run.data);
  runner.poison();
  TimingOptions topt;
  topt.warmup = 1;
  if (algo.device() == DeviceKind::cpu) topt.warmup_seconds = kCpuWarmupSeconds;
  topt.min_reps = opt.reps;
  topt.max_reps = opt.reps;
  topt.max_seconds = 1e9;
  run.time = runner.time(topt);
  runner.download_output(run.data);
  run.threads = ctx.resolved_threads();
  run.workspace = runner.workspace_bytes();
  run.guard_failure = runner.check_guards();
  if (opt.check) {
    const Reference ref = compute_reference(p, dir, run.data, opt.threads);
    run.tolerance = algo.tolerance(p, dir);
    run.error = compare(run.data.output(dir).data(), ref, run.tolerance);
    run.checked = true;
  }
  return run;
}

}  // namespace convlab
