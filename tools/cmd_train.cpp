// convlab train: the AlexNet speedup report (train/trainer.hpp does the work, dist/scaling.hpp the
// data-parallel runs); convlab report: the comparison and training in a results folder (report/report_run.hpp).
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "autotune/cache.hpp"
#include "autotune/policy.hpp"
#include "core/error.hpp"
#include "core/layers.hpp"
#include "core/npy.hpp"
#include "core/paths.hpp"
#include "core/results_folder.hpp"
#include "dist/scaling.hpp"
#include "report/report.hpp"
#include "report/report_run.hpp"
#include "report/report_scaling.hpp"
#include "tools/cli.hpp"
#include "train/trainer.hpp"

namespace convlab::cli {

namespace {

float get_float(const Args& args, const std::string& name, float lo, float hi) {
  const std::string t = args.get(name);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end || !(v >= lo && v <= hi))
    fail("convlab train: --" + name + " expects a number in [" + std::to_string(lo) + ", " + std::to_string(hi) +
         "], got '" + printable(t) + "'");
  return float(v);
}

void add_train_options(Args& args, const char* batch, const char* iters) {
  args.option("batch", "N", "minibatch", batch);
  args.option("iters", "N", "timed rounds: every round runs one iteration of each policy, in a rotating order", iters);
  args.option("warmup", "N", "untimed rounds before them (they still train)", "1");
  args.repeatable("policy", "P[;P...]",
                  "policies to compare: default, get[:FILE], find, find-context, cache[:FILE] or fixed:<algorithm>, each optionally "
                  "followed by constraints ,max-error=E ,deterministic ,workspace=BYTES ,tf32 ,own (convlab's own "
                  "convolutions only, no vendor library's) (e.g. 'find,deterministic;fixed:cpu.direct'); separate policies with ';' or repeat --policy; a plain "
                  "comma list without constraints (default,get,find) is read as a list. A fixed:<algorithm> that "
                  "cannot run on the device is skipped with the reason, never replaced (default: default;get;find "
                  "and fixed:<first algorithm of each family>)");
  args.option("threads", "N", "CPU threads (0 = all)", "0");
  args.option("classes", "N", "classifier outputs (labels are 0..N-1)", "1000");
  args.option("data", "KIND", "pattern (learnable synthetic task), random (noise), or npy (--images/--labels)",
              "pattern");
  args.option("images", "F.npy", "with --data npy: images (N, C, H, W) float32, C/H/W equal to the net's input");
  args.option("labels", "F.npy", "with --data npy: labels (N,) float32 holding integers 0..classes-1");
  args.option("lr", "X",
              "SGD learning rate (0.01 makes the He-initialised AlexNet jump from loss 10 to 26 in its first "
              "step on the pattern task)",
              "0.001");
  args.option("momentum", "X", "SGD momentum", "0.9");
  args.option("weight-decay", "X", "SGD weight decay (weights only, not biases)", "0.0005");
  args.option("seed", "S", "seed of weights, data and dropout", "1");
  args.flag("first-layer-grad", "also compute dL/d(input image) (skipped by default; its cost is reported)");
  args.option("context-factor", "X",
              "find-context: time inside training steps the candidates within X times find's isolated best", "1.5");
  args.option("context-steps", "N", "find-context: timed training steps per candidate (each the second of two in a row with it)", "3");
  args.repeatable("expect", "NUM/DEN>=X",
                  "an expectation of your own, checked against the run: the ratio of two policies' median iteration "
                  "times against a bound, >= or <= (e.g. 'default/find>=1.5': find at least 1.5x faster than "
                  "default); met only when its whole 95 % interval satisfies it, else missed or unresolved (exit 1)");
}

// The network first: a typo in it must not wait behind anything else.
void require_trainable(const std::string& cmd, const std::string& net) {
  const auto nets = train::trainable_networks();
  if (std::find(nets.begin(), nets.end(), net) != nets.end()) return;
  std::string known;
  for (const auto& n : nets) known += (known.empty() ? "" : ", ") + n;
  if (is_network(net)) fail(cmd + ": '" + net + "' has no training model (trainable networks: " + known + ")");
  fail(cmd + ": unknown network '" + printable(net) + "' (trainable networks: " + known + ")");
}

// The caches the policies name must be usable before any work.
void require_policy_caches(const std::string& cmd, const train::TrainConfig& cfg) {
  for (const auto& p : cfg.policies) {
    const Policy pol = Policy::parse(p);
    // The default cache (get and cache without a file) must exist as a place: with HOME unset there is none.
    if ((pol.kind == Policy::Kind::cache || pol.kind == Policy::Kind::get) && pol.cache_path.empty()) {
      try {
        (void)TuneCache::default_path();
      } catch (const Error& e) {
        fail(cmd + ": policy '" + printable(p) + "': " + e.what());
      }
    }
    // So do cache files that cannot be used: one cache:F writes must be writable (its folder is never
    // created), one get:F only reads must exist. (The default cache's own folder is created on save.)
    if (pol.kind == Policy::Kind::cache && !pol.cache_path.empty())
      require_output_path(pol.cache_path, "convlab --policy cache");
    struct stat st {};
    if (pol.kind == Policy::Kind::get && !pol.cache_path.empty() && ::stat(pol.cache_path.c_str(), &st) != 0)
      fail("convlab --policy get: autotune cache '" + printable(pol.cache_path) + "' does not exist");
  }
}

// Every --policy value is a ';'-list (or the plain comma list); bad policies fail now, before any work.
// A policy given twice ('find;find', or once per --policy) trains once: a second net under the same
// policy would only be reported as faster or slower than itself.
void policies_from(const Args& args, const std::string& cmd, train::TrainConfig& cfg) {
  std::vector<std::string> names;
  std::string repeated;
  for (const auto& value : args.get_all("policy"))
    for (auto& p : split_policy_list(value)) {
      const std::string name = Policy::parse(p).name();
      if (std::find(names.begin(), names.end(), name) != names.end()) {
        if (repeated.find("'" + name + "'") == std::string::npos) repeated += (repeated.empty() ? "'" : ", '") + name + "'";
        continue;
      }
      names.push_back(name);
      cfg.policies.push_back(std::move(p));
    }
  if (!repeated.empty() && train::launcher_world_rank() == 0)
    std::fprintf(stderr, "note: %s: policy %s given more than once: trained once\n", cmd.c_str(),
                 printable(repeated).c_str());
  require_policy_caches(cmd, cfg);
}

train::TrainConfig config_from(const Args& args, const std::string& cmd, const std::string& net) {
  require_trainable(cmd, net);
  train::TrainConfig cfg;
  cfg.net = net;
  cfg.batch = int(args.get_int("batch", 1, 4096));
  cfg.iters = int(args.get_int("iters", 1, 100000));
  cfg.warmup = int(args.get_int("warmup", 0, 100000));
  cfg.threads = int(args.get_int("threads", 0, 4096));
  cfg.classes = int(args.get_int("classes", 2, 1000000));
  cfg.seed = uint64_t(args.get_int("seed", 0, 1L << 62));
  cfg.data = args.get("data");
  if (cfg.data != "pattern" && cfg.data != "random" && cfg.data != "npy")
    fail(cmd + ": --data must be pattern, random or npy, got '" + printable(cfg.data) + "'");
  if (cfg.data == "npy") {
    if (!args.has("images") || !args.has("labels")) fail(cmd + ": --data npy needs --images F.npy and --labels F.npy");
    cfg.images_npy = args.get("images");
    cfg.labels_npy = args.get("labels");
  } else if (args.has("images") || args.has("labels")) {
    fail(cmd + ": --images/--labels need --data npy");
  }
  cfg.sgd.lr = get_float(args, "lr", 0, 10);
  cfg.sgd.momentum = get_float(args, "momentum", 0, 1);
  cfg.sgd.weight_decay = get_float(args, "weight-decay", 0, 1);
  cfg.first_layer_grad = args.has("first-layer-grad");
  cfg.context.factor = get_float(args, "context-factor", 1, 100);
  cfg.context.steps = int(args.get_int("context-steps", 1, 1000));
  for (const auto& e : args.get_all("expect")) cfg.expect.push_back(train::parse_expectation(e));
  policies_from(args, cmd, cfg);
  return cfg;
}

void progress(const std::string& line) {
  std::fprintf(stderr, "  %s\n", line.c_str());
  std::fflush(stderr);
}

Args train_args() {
  Args args("train", "NET [--batch N] [--iters N] [--policy P[;P...]]... [options]",
            "Trains NET (alexnet, alexnet-owt or tiny) with the same initial weights and the same batches\n"
            "under each algorithm-selection policy, one net per policy, the policies' iterations\n"
            "interleaved round by round in a rotating order, and reports: the median iteration time\n"
            "with its 95% bootstrap interval and the speedup over `default` with its interval (or \"not\n"
            "significant\"); the loss after every iteration (it must agree across policies: the proof\n"
            "that a faster policy trains the same network); the algorithm chosen per layer and\n"
            "direction; per-layer times (forward, backward-data, backward-filter, other layers); which\n"
            "layer's choice bought how much; find's tuning cost and its break-even point against get\n"
            "and default; peak RSS. Algorithms are chosen once per (layer, direction) at setup.\n"
            "A policy whose algorithms cannot run here is skipped with the reason (exit 2 when no\n"
            "requested policy can run on the device; exit 1 when every policy was skipped while\n"
            "choosing, or when a policy's loss went non-finite: that policy stops there and is never\n"
            "counted as agreeing). Progress goes to stderr, the report (Markdown) to stdout.");
  args.positionals("NET", "alexnet, alexnet-owt or tiny", 1, 1);
  add_train_options(args, "8", "3");
  args.option("device", "DEV", "cpu, or cuda: every layer on the GPU (hand-written kernels, cuBLAS for fc), "
              "the policies choosing among the cuda.* and cudnn.* algorithms", "cpu");
  args.option("json", "F", "also write the results as JSON (for notebooks)");
  args.option("md", "F", "also write the Markdown report to F");
  args.option("csv", "F", "also write per-(policy, layer) times as CSV");
  args.option("ranks", "K[,K...]",
              "data-parallel rank counts to measure, each run after the other inside one MPI world (start it with "
              "`mpirun -np N --bind-to none convlab train ...`; N >= the largest K): the global --batch is split "
              "evenly over K ranks (CPU: MPI between processes; --device cuda: NCCL, one rank per GPU). "
              "Default under mpirun: 1,N (one rank is the scaling efficiency's reference)");
  args.option("bucket-mb", "X", "data-parallel: gradient all-reduce buckets of at least X MiB (a tensor is never split)",
              "25");
  args.option("overlap", "auto|on|off",
              "data-parallel: on = all-reduce each bucket as soon as its layers' gradients are ready, beside the rest "
              "of the backward; off = every bucket after the whole backward; auto = on for CUDA, and on the CPU only "
              "when a core is left for the communication thread",
              "auto");
  args.option("estimate", "NODESxGPUS", "data-parallel report: the on-paper cluster of the estimate", "2x4");
  args.option("estimate-gbs", "INTER,INTRA",
              "data-parallel report: the estimate's GB/s per GPU between nodes and inside a node (assumed, not "
              "measured)",
              "25,450");
  return args;
}

// Data-parallel options (--ranks and what goes with it), every check run on every rank before MPI starts.
// false: not a data-parallel run.
bool scaling_options(const Args& args, const train::TrainConfig& cfg, train::ScalingOptions& sopt) {
  const int world = train::launcher_world_size();
  if (!args.has("ranks") && world <= 1) {
    for (const char* o : {"bucket-mb", "overlap", "estimate", "estimate-gbs"})
      if (args.has(o)) fail(std::string("convlab train: --") + o + " needs --ranks (data-parallel training)");
    return false;
  }
  if (std::string why = train::mpi_unavailable_reason(); !why.empty()) fail("convlab train --ranks: " + why);
  if (args.has("ranks")) {
    for (long k : args.get_int_list("ranks", 1, 1 << 20)) sopt.ranks.push_back(int(k));
  } else {
    sopt.ranks = {1, world};
  }
  for (size_t i = 1; i < sopt.ranks.size(); ++i)
    if (sopt.ranks[i] <= sopt.ranks[i - 1]) fail("convlab train: --ranks must be ascending without repeats");
  const int most = sopt.ranks.back();
  if (most > world)
    fail("convlab train: --ranks " + std::to_string(most) + " needs " + std::to_string(most) + " MPI processes, " +
         (train::launched_by_mpi() ? "this world has " + std::to_string(world)
                                   : std::string("and this process was not started by mpirun")) +
         " (run: mpirun -np " + std::to_string(most) + " --bind-to none convlab train ...)");
  for (int k : sopt.ranks)
    if (cfg.batch % k)
      fail("convlab train: --batch " + std::to_string(cfg.batch) + " does not split evenly over " + std::to_string(k) +
           " ranks");
  if (cfg.device == DeviceKind::cuda && most > 1)
    if (std::string why = train::nccl_unavailable_reason(); !why.empty()) fail("convlab train --device cuda --ranks: " + why);
  const double mb = get_float(args, "bucket-mb", 0.001, 1e6);
  sopt.sync.bucket_bytes = size_t(mb * 1048576);
  const std::string ov = args.get("overlap");
  if (ov != "auto" && ov != "on" && ov != "off")
    fail("convlab train: --overlap must be auto, on or off, got '" + printable(ov) + "'");
  sopt.overlap = ov == "on" ? train::Overlap::on : ov == "off" ? train::Overlap::off : train::Overlap::automatic;
  train::parse_paper_cluster(args.get("estimate"), args.get("estimate-gbs"), sopt.paper);
  return true;
}

// --json, --md, --csv (rank 0's): writable, distinct, and none of them a cache a policy reads or writes
// (policies may share one cache: it is locked).
void require_train_outputs(const Args& args, const train::TrainConfig& cfg) {
  if (train::launcher_world_rank() != 0) return;
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const char* out : {"json", "md", "csv"})
    if (args.has(out)) {
      require_output_path(args.get(out), std::string("convlab train: --") + out);
      outputs.emplace_back(std::string("--") + out, args.get(out));
    }
  require_distinct_outputs(outputs, "convlab train");
  for (const auto& p : cfg.policies)
    if (const Policy pol = Policy::parse(p); !pol.cache_path.empty())
      for (const auto& out : outputs)
        require_distinct_outputs({out, {"--policy " + pol.name(), pol.cache_path}}, "convlab train");
}

// The report on stdout (flushed first when `flush`) and in the files asked for.
void write_train_outputs(const Args& args, const std::string& md, const std::function<std::string()>& json,
                         const std::function<std::string()>& csv, bool flush) {
  std::fputs(md.c_str(), stdout);
  if (flush) std::fflush(stdout);
  if (args.has("json")) write_file_atomic(args.get("json"), json());
  if (args.has("md")) write_file_atomic(args.get("md"), md);
  if (args.has("csv")) write_file_atomic(args.get("csv"), csv());
}

int no_policy_ran() {
  std::fprintf(stderr, "error: no policy could run (see the skipped reasons above)\n");
  return 1;
}

int expectation_missed() {
  std::fprintf(stderr, "error: an expectation (--expect) was not met (see the report's Expectations)\n");
  return 1;
}

int train_scaling(const Args& args, const train::TrainConfig& cfg, const train::ScalingOptions& sopt) {
  train::Comm& w = train::mpi_world();
  train::ScalingReport rep = train::run_scaling(cfg, w, sopt, progress);
  if (w.rank() != 0) return 0;
  if (!rep.runs.empty()) rep.runs.back().run_id = make_run_id();
  write_train_outputs(
      args, train::scaling_markdown(rep), [&] { return train::scaling_json(rep); },
      [&] { return train::report_csv(rep.runs.back()); }, true);
  for (const train::TrainReport& run : rep.runs)
    if (std::string why = train::stopped_line(run); !why.empty()) {
      std::fprintf(stderr, "error: %d rank%s: %s\n", run.ranks, run.ranks == 1 ? "" : "s", printable(why).c_str());
      return 1;
    }
  return rep.runs.back().baseline() < 0 ? no_policy_ran() : 0;
}

int train_single(const Args& args, const train::TrainConfig& cfg) {
  train::TrainReport rep = train::run_training(cfg, progress);  // bad input throws before any output
  rep.run_id = make_run_id();
  write_train_outputs(
      args, train::report_markdown(rep), [&] { return train::report_json(rep); },
      [&] { return train::report_csv(rep); }, false);
  if (std::string why = train::stopped_line(rep); !why.empty()) {
    std::fprintf(stderr, "error: %s\n", printable(why).c_str());
    return 1;
  }
  if (rep.baseline() < 0) return no_policy_ran();
  if (!rep.expectations_met()) return expectation_missed();
  return 0;
}

}  // namespace

int cmd_train(int argc, char** argv) {
  Args args = train_args();
  if (!args.parse(argc, argv)) return 0;
  train::TrainConfig cfg = config_from(args, "convlab train", args.pos()[0]);
  cfg.device = parse_device(args.get("device"));
  train::check_expectations(cfg);
  train::ScalingOptions sopt;
  const bool dist = scaling_options(args, cfg, sopt);
  if (cfg.device == DeviceKind::cuda && !cuda_info().available)
    fail("convlab train --device cuda: no CUDA device (" + cuda_info().reason + ")");
  require_train_outputs(args, cfg);
  if (std::string why = train::why_no_policy_can_run(cfg); !why.empty()) fail("convlab train: " + why);
  if (!dist)
    if (std::string why = train::why_nets_do_not_fit(cfg); !why.empty()) fail("convlab train: " + why);
  return dist ? train_scaling(args, cfg, sopt) : train_single(args, cfg);
}

namespace {

Args report_args() {
  Args args("report", "[--net NET] [--batch N] [--iters N] [--out DIR] [options]",
            "The main job: on the CPU, (1) times every available algorithm on every convolution layer of\n"
            "NET in all three directions, (2) trains NET under each policy exactly like `convlab train`,\n"
            "and writes DIR/report.md (the tables), DIR/report.html (the charts and tables, one\n"
            "self-contained page), DIR/train.json + DIR/train.csv (training results),\n"
            "DIR/layers.json + DIR/layers.csv (the per-layer comparison) for the notebooks. Then the GPU\n"
            "half, the same two steps on the CUDA device (DIR/layers_cuda.*, DIR/train_cuda.*), when one\n"
            "exists; without one report.md says the GPU half was skipped and why. --out DIR is created\n"
            "when missing (one level: its parent must exist); every output is checked before the work.\n"
            "DIR is written as a whole: every file lands at the end (an interrupted run leaves DIR as it\n"
            "was), an earlier run's train*/layers* files this run does not write are removed, and every\n"
            "JSON file carries the run's id (`convlab html` draws only files of one run together).\n"
            "Exit 1 when no policy could run in a half or the GPU half failed (the CPU half is written).");
  args.option("net", "NET", "alexnet, alexnet-owt or tiny", "alexnet");
  add_train_options(args, "8", "3");
  args.option("out", "DIR", "where the results files go", "results");
  args.flag("no-compare", "skip the per-layer algorithm comparison");
  args.option("gpu", "WHEN", "auto (run the GPU half when a CUDA device exists), on (fail without one), off", "auto");
  return args;
}

// report.md on stdout, then where the files went and what was removed.
void print_report(const train::ReportRun& run) {
  std::fputs(run.markdown.c_str(), stdout);
  std::string files = "report.md, report.html";
  for (const auto& f : run.written) files += ", " + f;
  std::printf("\nresults written to %s/ (%s; run id %s)\n", printable(run.dir).c_str(), files.c_str(), run.run_id.c_str());
  if (!run.removed.empty()) {
    std::string names;
    for (const auto& f : run.removed) names += (names.empty() ? "" : ", ") + f;
    std::printf("removed from %s/, of an earlier run: %s\n", printable(run.dir).c_str(), names.c_str());
  }
}

}  // namespace

int cmd_report(int argc, char** argv) {
  Args args = report_args();
  if (!args.parse(argc, argv)) return 0;
  train::ReportRunOptions opt;
  opt.cfg = config_from(args, "convlab report", args.get("net"));
  train::check_expectations(opt.cfg);
  const std::string gpu = args.get("gpu");
  if (gpu != "auto" && gpu != "on" && gpu != "off")
    fail("convlab report: --gpu must be auto, on or off, got '" + printable(gpu) + "'");
  opt.gpu = gpu == "on" ? train::GpuHalf::on : gpu == "off" ? train::GpuHalf::off : train::GpuHalf::automatic;
  opt.out_dir = args.get("out");
  opt.compare = !args.has("no-compare");
  opt.command = command_line("convlab", argc, argv);
  opt.progress = progress;
  opt.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  const train::ReportRun run = train::run_report(opt);
  print_report(run);
  if (!run.stopped.empty()) {
    std::fprintf(stderr, "error: %s\n", printable(run.stopped).c_str());
    return 1;
  }
  if (!run.all_ran) return no_policy_ran();
  if (!run.expectations_met) return expectation_missed();
  return 0;
}

}  // namespace convlab::cli
