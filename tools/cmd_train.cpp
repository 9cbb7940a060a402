// convlab train: the AlexNet speedup report (train/trainer.hpp does the work).
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "autotune/compare.hpp"
#include "core/error.hpp"
#include "core/layers.hpp"
#include "core/npy.hpp"
#include "core/paths.hpp"
#include "tools/cli.hpp"
#include "train/html/report_html.hpp"
#include "train/scaling.hpp"
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
                  "followed by constraints ,max-error=E ,deterministic ,workspace=BYTES ,tf32 (e.g. "
                  "'find,deterministic;fixed:cpu.direct'); separate policies with ';' or repeat --policy; a plain "
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
  args.option("context-steps", "N", "find-context: timed training steps per candidate (after one untimed)", "3");
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
  // Every --policy value is a ';'-list (or the plain comma list); bad policies fail now, before any work.
  for (const auto& value : args.get_all("policy"))
    for (auto& p : split_policy_list(value)) cfg.policies.push_back(std::move(p));
  for (const auto& p : cfg.policies) {
    const Policy pol = Policy::parse(p);
    // So do cache files that cannot be used: one cache:F writes must be writable (its folder is never
    // created), one get:F only reads must exist. (The default cache's own folder is created on save.)
    if (pol.kind == Policy::Kind::cache && !pol.cache_path.empty())
      require_output_path(pol.cache_path, "convlab --policy cache");
    struct stat st {};
    if (pol.kind == Policy::Kind::get && !pol.cache_path.empty() && ::stat(pol.cache_path.c_str(), &st) != 0)
      fail("convlab --policy get: autotune cache '" + printable(pol.cache_path) + "' does not exist");
  }
  return cfg;
}

void progress(const std::string& line) {
  std::fprintf(stderr, "  %s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace

int cmd_train(int argc, char** argv) {
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
  if (!args.parse(argc, argv)) return 0;
  train::TrainConfig cfg = config_from(args, "convlab train", args.pos()[0]);
  cfg.device = parse_device(args.get("device"));
  // Data-parallel: every check below runs on every rank before MPI starts (bad input: one line, exit 2).
  const int world = train::launcher_world_size();
  const bool dist = args.has("ranks") || world > 1;
  train::ScalingOptions sopt;
  if (dist) {
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
        fail("convlab train: --batch " + std::to_string(cfg.batch) + " does not split evenly over " +
             std::to_string(k) + " ranks");
    if (cfg.device == DeviceKind::cuda && most > 1)
      if (std::string why = train::nccl_unavailable_reason(); !why.empty()) fail("convlab train --device cuda --ranks: " + why);
    const double mb = get_float(args, "bucket-mb", 0.001, 1e6);
    sopt.sync.bucket_bytes = size_t(mb * 1048576);
    const std::string ov = args.get("overlap");
    if (ov != "auto" && ov != "on" && ov != "off")
      fail("convlab train: --overlap must be auto, on or off, got '" + printable(ov) + "'");
    sopt.overlap = ov == "on" ? train::Overlap::on : ov == "off" ? train::Overlap::off : train::Overlap::automatic;
    train::parse_paper_cluster(args.get("estimate"), args.get("estimate-gbs"), sopt.paper);
  } else {
    for (const char* o : {"bucket-mb", "overlap", "estimate", "estimate-gbs"})
      if (args.has(o)) fail(std::string("convlab train: --") + o + " needs --ranks (data-parallel training)");
  }
  if (cfg.device == DeviceKind::cuda && !cuda_info().available)
    fail("convlab train --device cuda: no CUDA device (" + cuda_info().reason + ")");
  const bool root = train::launcher_world_rank() == 0;
  for (const char* out : {"json", "md", "csv"})
    if (args.has(out) && root) require_output_path(args.get(out), std::string("convlab train: --") + out);
  if (std::string why = train::why_no_policy_can_run(cfg); !why.empty()) fail("convlab train: " + why);
  if (!dist)
    if (std::string why = train::why_nets_do_not_fit(cfg); !why.empty()) fail("convlab train: " + why);
  if (dist) {
    train::Comm& w = train::mpi_world();
    const train::ScalingReport rep = train::run_scaling(cfg, w, sopt, progress);
    if (w.rank() != 0) return 0;
    const std::string md = train::scaling_markdown(rep);
    std::fputs(md.c_str(), stdout);
    std::fflush(stdout);
    if (args.has("json")) write_file_atomic(args.get("json"), train::scaling_json(rep));
    if (args.has("md")) write_file_atomic(args.get("md"), md);
    if (args.has("csv")) write_file_atomic(args.get("csv"), train::report_csv(rep.runs.back()));
    for (const train::TrainReport& run : rep.runs)
      if (std::string why = train::stopped_line(run); !why.empty()) {
        std::fprintf(stderr, "error: %d rank%s: %s\n", run.ranks, run.ranks == 1 ? "" : "s", printable(why).c_str());
        return 1;
      }
    if (rep.runs.back().baseline() < 0) {
      std::fprintf(stderr, "error: no policy could run (see the skipped reasons above)\n");
      return 1;
    }
    return 0;
  }
  const train::TrainReport rep = train::run_training(cfg, progress);  // bad input throws before any output
  const std::string md = train::report_markdown(rep);
  std::fputs(md.c_str(), stdout);
  if (args.has("json")) write_file_atomic(args.get("json"), train::report_json(rep));
  if (args.has("md")) write_file_atomic(args.get("md"), md);
  if (args.has("csv")) write_file_atomic(args.get("csv"), train::report_csv(rep));
  if (std::string why = train::stopped_line(rep); !why.empty()) {
    std::fprintf(stderr, "error: %s\n", printable(why).c_str());
    return 1;
  }
  if (rep.baseline() < 0) {
    std::fprintf(stderr, "error: no policy could run (see the skipped reasons above)\n");
    return 1;
  }
  return 0;
}

namespace {

// report's --out DIR: an existing writable folder (every file the run will write there is checked
// now), or a new folder whose parent exists: created here, one level only; parent folders are
// never created (a missing parent is an error, like every output path). Returns DIR.
std::string output_folder(std::string dir, bool gpu_half) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) fail("convlab report: --out '" + printable(dir) + "' is not a folder");
    for (const char* suffix : {"", "_cuda"}) {
      if (*suffix && !gpu_half) continue;
      for (const char* f : {"train", "layers"})
        for (const char* ext : {".json", ".csv"})
          require_output_path(dir + "/" + f + suffix + ext, "convlab report: --out");
    }
    for (const char* f : {"/report.md", "/report.html"}) require_output_path(dir + f, "convlab report: --out");
    return dir;
  }
  // Not there: the folder itself is checked as an output path (its parent must exist and be writable).
  if (std::string why = check_output_path(dir); !why.empty()) fail("convlab report: --out: " + why);
  if (::mkdir(dir.c_str(), 0777) != 0)
    fail("convlab report: --out: cannot create '" + printable(dir) + "': " + std::strerror(errno));
  return dir;
}

}  // namespace

int cmd_report(int argc, char** argv) {
  Args args("report", "[--net NET] [--batch N] [--iters N] [--out DIR] [options]",
            "The main job: on the CPU, (1) times every available algorithm on every convolution layer of\n"
            "NET in all three directions, (2) trains NET under each policy exactly like `convlab train`,\n"
            "and writes DIR/report.md (the tables), DIR/report.html (the charts and tables, one\n"
            "self-contained page), DIR/train.json + DIR/train.csv (training results),\n"
            "DIR/layers.json + DIR/layers.csv (the per-layer comparison) for the notebooks. Then the GPU\n"
            "half, the same two steps on the CUDA device (DIR/layers_cuda.*, DIR/train_cuda.*), when one\n"
            "exists; without one report.md says the GPU half was skipped and why. --out DIR is created\n"
            "when missing (one level: its parent must exist); every output is checked before the work.\n"
            "Exit 1 when no policy could run in a half or the GPU half failed (the CPU half is written).");
  args.option("net", "NET", "alexnet, alexnet-owt or tiny", "alexnet");
  add_train_options(args, "8", "3");
  args.option("out", "DIR", "where the results files go", "results");
  args.flag("no-compare", "skip the per-layer algorithm comparison");
  args.option("gpu", "WHEN", "auto (run the GPU half when a CUDA device exists), on (fail without one), off", "auto");
  if (!args.parse(argc, argv)) return 0;
  const train::TrainConfig cfg = config_from(args, "convlab report", args.get("net"));
  const std::string gpu = args.get("gpu");
  if (gpu != "auto" && gpu != "on" && gpu != "off")
    fail("convlab report: --gpu must be auto, on or off, got '" + printable(gpu) + "'");
  if (gpu == "on" && !cuda_info().available)
    fail("convlab report --gpu on: no CUDA device (" + cuda_info().reason + ")");
  // Everything that can be refused is refused now, before the long work: the policies of each half and --out.
  if (std::string why = train::why_no_policy_can_run(cfg); !why.empty()) fail("convlab report: " + why);
  if (std::string why = train::why_nets_do_not_fit(cfg); !why.empty()) fail("convlab report: " + why);
  std::string gpu_skip;  // why the GPU half does not run ("" = it runs)
  if (gpu == "off") {
    gpu_skip = "--gpu off";
  } else if (!cuda_info().available) {
    gpu_skip = "no CUDA device (" + cuda_info().reason + ")";
  } else {
    train::TrainConfig c = cfg;
    c.device = DeviceKind::cuda;
    gpu_skip = train::why_no_policy_can_run(c);
    if (gpu_skip.empty()) gpu_skip = train::why_nets_do_not_fit(c);
    if (!gpu_skip.empty() && gpu == "on") fail("convlab report --gpu on: " + gpu_skip);
  }
  const std::string dir = output_folder(args.get("out"), gpu_skip.empty());

  std::string md;
  std::vector<std::string> written;
  train::HtmlInputs html;  // report.html: drawn from the same JSON texts the files get
  html.command = command_line("convlab", argc, argv);
  bool all_ran = true;
  std::string stopped;  // the first half's policy whose loss went non-finite
  // One half: the per-layer comparison and the training run on `device`; files get `suffix`.
  auto half = [&](DeviceKind device, const std::string& suffix) {
    const std::string where(to_string(device));
    train::HtmlHalf& page = html.halves.emplace_back();
    page.title = device == DeviceKind::cpu ? "CPU" : "GPU";
    page.id_suffix = suffix.empty() ? "" : "-cuda";
    if (!args.has("no-compare") && cfg.net != "tiny") {
      std::fprintf(stderr, "convlab report: per-layer comparison on %s, %s at batch %d\n", where.c_str(),
                   cfg.net.c_str(), cfg.batch);
      CompareOptions opt;
      opt.device = device;
      opt.threads = {cfg.threads};
      opt.on_case = [](const LayerCase& lc, Direction dir, int, const std::vector<ComparisonRow>& rows) {
        for (const auto& r : rows)
          if (r.ran())
            progress(lc.label + " " + std::string(to_string(dir)) + " " + r.algo + ": " + std::to_string(r.time * 1e3) + " ms");
      };
      std::vector<LayerCase> cases;
      for (const auto& l : network_layers(cfg.net, cfg.batch)) cases.push_back({l.id, l.problem, {}});
      Comparison cmp = compare_layers(cases, opt);
      for (const auto& pr : cmp.probes) std::fprintf(stderr, "convlab report: %s\n", pr.second.text().c_str());
      cmp.network = cfg.net;
      cmp.batch = cfg.batch;
      md += "# Per-layer algorithm comparison on " + where + ": " + cfg.net + " at batch " + std::to_string(cfg.batch) +
            " (ms, median; fastest measured in bold; F = find's pick, G = get's pick, V = the vendor's pick (oneDNN auto on the CPU, cuDNN Find on a GPU), Vh = cuDNN Get_v7's; - = unsupported)\n\n" +
            comparison_markdown(cmp) + "\n";
      write_file_atomic(dir + "/layers" + suffix + ".csv", comparison_csv(cmp));
      page.layers_json = comparison_json(cmp);
      write_file_atomic(dir + "/layers" + suffix + ".json", page.layers_json);
      written.push_back("layers" + suffix + ".json");
      written.push_back("layers" + suffix + ".csv");
    }
    std::fprintf(stderr, "convlab report: training %s on %s, batch %d, %d warm-up + %d timed iterations per policy\n",
                 cfg.net.c_str(), where.c_str(), cfg.batch, cfg.warmup, cfg.iters);
    train::TrainConfig c = cfg;
    c.device = device;
    const train::TrainReport rep = train::run_training(c, progress);
    md += train::report_markdown(rep);
    page.train_json = train::report_json(rep);
    write_file_atomic(dir + "/train" + suffix + ".json", page.train_json);
    write_file_atomic(dir + "/train" + suffix + ".csv", train::report_csv(rep));
    written.push_back("train" + suffix + ".json");
    written.push_back("train" + suffix + ".csv");
    if (rep.baseline() < 0) all_ran = false;
    if (stopped.empty()) stopped = train::stopped_line(rep);
  };
  half(DeviceKind::cpu, "");
  if (!gpu_skip.empty()) {
    md += "\n# GPU half\n\nSkipped: " + gpu_skip + ".\n";
    html.halves.push_back({"GPU", "-cuda", "", "", "GPU half skipped: " + gpu_skip + "."});
    if (gpu != "off") std::fprintf(stderr, "convlab report: GPU half skipped: %s\n", gpu_skip.c_str());
  } else {
    // A failure on the GPU must not lose the CPU half's report: it is written, and the exit status says so.
    md += "\n";
    try {
      half(DeviceKind::cuda, "_cuda");
    } catch (const Error& e) {
      md += "\n# GPU half\n\nFailed: " + std::string(e.what()) + "\n";
      html.halves.back().note = "GPU half failed: " + std::string(e.what());
      std::fprintf(stderr, "error: convlab report: GPU half failed: %s\n", e.what());
      all_ran = false;
    }
  }
  write_file_atomic(dir + "/report.md", md);
  html.source = "the files beside this page (" + dir + "/)";
  write_file_atomic(dir + "/report.html", train::report_html(html));
  std::fputs(md.c_str(), stdout);
  std::string files = "report.md, report.html";
  for (const auto& f : written) files += ", " + f;
  std::printf("\nresults written to %s/ (%s)\n", dir.c_str(), files.c_str());
  if (!stopped.empty()) {
    std::fprintf(stderr, "error: %s\n", printable(stopped).c_str());
    return 1;
  }
  if (!all_ran) {
    std::fprintf(stderr, "error: no policy could run (see the skipped reasons above)\n");
    return 1;
  }
  return 0;
}

}  // namespace convlab::cli
