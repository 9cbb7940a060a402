#include "train/trainer.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "algorithms/registry.hpp"
#include "core/error.hpp"
#include "core/timing.hpp"
#include "train/run_setup.hpp"
#include "train/verdicts.hpp"

namespace convlab::train {

namespace {

long peak_rss_kb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// One policy's net and the step times of its timed rounds.
struct Runner {
  size_t policy;  // index into TrainReport::policies
  Net net;
  std::vector<StepTimes> steps;
  std::unique_ptr<NetExchange> sync;  // data-parallel runs
  std::vector<ExchangeStep> syncs;    // per timed round
  bool stopped = false;            // its loss went non-finite: it runs no more rounds
};

// Rank 0's choices, one line per (conv layer, direction): "name\twhy".
std::string encode_choices(const Net& net) {
  std::string out;
  for (ConvLayer* c : net.conv_layers())
    for (Direction d : kAllDirections) {
      const Choice& ch = c->choice(d);
      std::string why = ch.why;
      std::replace(why.begin(), why.end(), '\n', ' ');
      out += std::string(ch.algo->name()) + "\t" + why + "\n";
    }
  return out;
}

void apply_choices(Net& net, const std::string& text) {
  size_t pos = 0;
  for (ConvLayer* c : net.conv_layers())
    for (Direction d : kAllDirections) {
      const size_t tab = text.find('\t', pos), nl = text.find('\n', pos);
      if (tab == std::string::npos || nl == std::string::npos || tab > nl) fail("rank 0's choices are malformed");
      const std::string name = text.substr(pos, tab - pos);
      const Algorithm* a = find_algorithm(name);
      if (!a) fail("rank 0 chose '" + printable(name) + "', which this rank's build does not have");
      c->inject(d, *a, "rank 0's choice: " + text.substr(tab + 1, nl - tab - 1));
      pos = nl + 1;
    }
  net.allocate_workspace();
}

// Exact digest of every parameter's bits (the ranks' initial weights must agree).
double weights_digest(Net& net) {
  net.download_params();
  uint64_t h = 1469598103934665603ull;
  for (Param* p : net.params()) {
    const auto* b = reinterpret_cast<const unsigned char*>(p->value.data());
    for (size_t i = 0; i < size_t(p->value.size()) * sizeof(float); ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  return double(h >> 11);  // exact in a double
}

// Rows [first, first + n) of a global batch.
void slice_batch(const Batch& global, int64_t first, int n, Batch& out) {
  const int64_t per = global.images.size() / int64_t(global.labels.size());
  const auto& sh = global.images.shape;
  out.images = Tensor({int64_t(n), sh[1], sh[2], sh[3]});
  std::memcpy(out.images.data(), global.images.data() + first * per, size_t(n * per) * sizeof(float));
  out.labels.assign(global.labels.begin() + first, global.labels.begin() + first + n);
}

// Medians and 95 % intervals of everything a policy's timed rounds measured.
void summarise_policy(PolicyResult& pr, Runner& run, const TrainConfig& cfg, const StepLimit& limit) {
  pr.iter_median = stats::median(pr.iter_seconds);
  pr.iter_ci = stats::median_ci(pr.iter_seconds);
  for (auto& s : run.steps) {
    pr.update_seconds.push_back(s.update);
    pr.loss_seconds.push_back(s.loss);
  }
  pr.loss_median_update = stats::median(pr.update_seconds);
  if (run.sync) {
    pr.comm_median = stats::median(pr.comm_seconds);
    pr.comm_exposed_median = stats::median(pr.comm_exposed_seconds);
    pr.skew_median = stats::median(pr.skew_seconds);
    pr.comm_after_backward_median = stats::median(pr.comm_after_backward_seconds);
  }
  pr.loss_median_loss = stats::median(pr.loss_seconds);
  const auto& layers = run.net.layers();
  for (size_t li = 0; li < layers.size(); ++li) {
    LayerResult lr;
    lr.name = layers[li]->name();
    lr.kind = std::string(layers[li]->kind());
    std::vector<double> comp[5];
    for (auto& s : run.steps) {
      lr.samples.push_back(s.layers[li]);
      comp[0].push_back(s.layers[li].fwd);
      comp[1].push_back(s.layers[li].bwd_data);
      comp[2].push_back(s.layers[li].bwd_filter);
      comp[3].push_back(s.layers[li].epilogue_fwd);
      comp[4].push_back(s.layers[li].epilogue_bwd);
    }
    lr.median = {stats::median(comp[0]), stats::median(comp[1]), stats::median(comp[2]), stats::median(comp[3]),
                 stats::median(comp[4])};
    lr.epilogue_timed = lr.kind == "conv";
    for (int i = 0; i < 3; ++i) lr.ci[i] = stats::median_ci(comp[i]);
    if (run.sync) {
      // Each bucket's all-reduce (and its exposed part) shared among its layers by bytes.
      std::vector<double> comm, exposed;
      for (const ExchangeStep& st : run.syncs) {
        comm.push_back(st.layer_comm[li]);
        exposed.push_back(st.layer_exposed[li]);
      }
      lr.comm_seconds = stats::median(comm);
      lr.comm_exposed_seconds = stats::median(exposed);
    }
    lr.input_grad = li > 0 || cfg.first_layer_grad;
    lr.bound_seconds = limit.layer_seconds(*layers[li], lr.input_grad);
    if (auto* c = dynamic_cast<const ConvLayer*>(layers[li].get())) {
      lr.problem = c->problem().canonical();
      for (Direction d : kAllDirections) {
        const Choice& ch = c->choice(d);
        lr.algo[direction_index(d)] = std::string(ch.algo->name());
        lr.why[direction_index(d)] = ch.why;
        lr.tuning_seconds[direction_index(d)] = ch.tuning_seconds;
      }
    }
    pr.layers.push_back(std::move(lr));
  }
}

// What the phases of one run share. `ranks` is the group of a data-parallel run
// (2+ ranks), null when this process trains alone.
struct Run {
  explicit Run(const TrainConfig& c) : cfg(c) {}
  const TrainConfig& cfg;
  RankGroup* ranks = nullptr;
  int R = 1, me = 0;
  bool root = true;  // rank 0: it chooses, measures the limit and logs
  std::function<void(const std::string&)> log;
  double t_start = 0;
  TrainReport rep;
  std::vector<Policy> policies;
  std::vector<bool> runnable;
  NetOptions no;
  std::optional<Net> probe;  // the first net built: the first policy that runs trains it
  std::vector<Batch> batches;  // every round's, this rank's slice
  std::vector<Runner> runners;
  MachineLoad load_before;

  void say(const std::string& s) const {
    if (log && root) log(R > 1 ? "[" + std::to_string(R) + " ranks] " + s : s);
  }
};

// The ranks of a node share its memory: all of their nets must fit together.
void check_node_memory(Run& run) {
  MemoryPlan& m = run.rep.memory;
  if (!run.ranks || !m.refusal.empty() || m.on_gpu || run.ranks->local_size() < 2) return;
  const int local = run.ranks->local_size();
  const double all = double(m.host_total) * local;
  if (all > (1 - kMemoryMargin) * double(m.host_available))
    m.refusal = std::to_string(local) + " ranks on this node need " + std::to_string(int64_t(all / 1048576)) +
                " MiB for their nets together, more than " + std::to_string(int(100 * (1 - kMemoryMargin))) +
                " % of the " + std::to_string(m.host_available / 1048576) + " MiB available (" + m.host_source +
                "): fewer policies (--policy) or fewer ranks per node";
}

// Every rank draws the whole global batch and trains its own slice of it; then rank 0
// measures the step's limit (CPU) while the others wait.
void prepare_data(Run& run) {
  const TrainConfig& cfg = run.cfg;
  Shape4 global = run.probe->input_shape();
  global.n = cfg.batch;
  std::unique_ptr<DataSource> data =
      cfg.data == "npy" ? make_npy(cfg.images_npy, cfg.labels_npy, global, cfg.classes)
                        : make_synthetic(cfg.data, global, cfg.classes, cfg.seed, cfg.noise);
  run.rep.data = data->describe();
  const int total = cfg.warmup + cfg.iters;
  run.batches.resize(static_cast<size_t>(total));
  for (int i = 0; i < total; ++i) {
    Batch& b = run.batches[size_t(i)];
    naming_memory("batch " + std::to_string(i) + " of the training data", [&] { data->batch(i, b); });
    if (run.R > 1) {
      Batch mine;
      slice_batch(b, run.no.sample_offset, run.no.batch, mine);
      b = std::move(mine);
    }
  }
  if (cfg.device == DeviceKind::cpu && run.root) {
    run.say("measuring this machine's FMA peak and memory bandwidth for the step's limit ...");
    run.rep.limit = measure_step_limit(*run.probe, run.no.ctx.resolved_threads());
  } else if (cfg.device == DeviceKind::cpu) {
    run.rep.limit_skipped = "measured on rank 0";
  } else {
    run.rep.limit_skipped = "the limit is measured for the CPU only (no GPU peak or bandwidth probe yet)";
  }
  if (run.ranks) run.ranks->barrier();  // the other ranks sleep while rank 0 measures
}

// Bad input refused before any work; the probe net built and the memory planned; the
// ranks connected; the batches drawn and the step's limit measured.
void prepare(Run& run, RankGroup* group) {
  const TrainConfig& cfg = run.cfg;
  TrainReport& rep = run.rep;
  if (cfg.iters < 1) fail("--iters must be at least 1");
  if (cfg.warmup < 0) fail("--warmup must be non-negative");
  if (cfg.batch % run.R != 0)
    fail("the global batch " + std::to_string(cfg.batch) + " does not split evenly over " + std::to_string(run.R) +
         " ranks");
  rep.config = cfg;
  if (rep.config.policies.empty()) rep.config.policies = default_policies(cfg.device);
  run.policies = parse_policies(rep.config.policies);
  if (std::string why = why_no_policy_can_run(rep.config); !why.empty()) fail(why);  // before any work
  check_expectations(rep.config);

  NetOptions& no = run.no;
  no = net_options(cfg);
  no.batch = cfg.batch / run.R;
  no.sample_offset = int64_t(run.me) * no.batch;
  if (run.R > 1) no.grad_batch = cfg.batch;  // the ranks' gradients sum to the global mean
  if (group && cfg.threads == 0 && cfg.device == DeviceKind::cpu) no.ctx.threads = group->default_threads();
  rep.ranks = run.R;
  rep.rank_threads = no.ctx.resolved_threads();
  if (run.ranks) run.ranks->select_device(cfg.device);  // before any device memory
  const AvailableMemory available = read_available_memory(cfg.device);  // before the probe is allocated
  run.probe.emplace(build_probe(cfg, no));  // no CUDA device: Error
  rep.device = device_fingerprint(cfg.device, no.ctx.threads);
  rep.params = run.probe->param_count();
  run.runnable = runnable_policies(run.policies, cfg.device);
  rep.memory = plan_memory(*run.probe, run.policies, run.runnable, available, data_bytes(cfg, run.probe->input_shape()));
  check_node_memory(run);
  if (!rep.memory.refusal.empty()) fail(rep.memory.refusal);  // before any other net and any find
  if (run.ranks) {
    run.say("measuring the exchange bandwidth between ranks 0 and 1 ...");
    const GroupTransport t = run.ranks->connect(cfg.device, rep.rank_threads);
    rep.transport = t.describe;
    rep.overlap_why = t.overlap_why;
    rep.exchange_bytes_per_s = t.exchange_bytes_per_s;
  }
  prepare_data(run);
}

// Policy pi's net, its algorithms chosen (by rank 0, the others run its choices) and its
// weights initialised; a runner for it unless it was skipped.
void choose_policy(Run& run, size_t pi) {
  const TrainConfig& cfg = run.cfg;
  const Policy& policy = run.policies[pi];
  PolicyResult pr;
  pr.policy = policy.name();
  if (!run.runnable[pi]) {
    pr.skipped = policy_unavailable_reason(policy, cfg.device);  // never substituted under its name
    run.say("policy " + pr.policy + ": skipped (" + pr.skipped + ")");
    run.rep.policies.push_back(std::move(pr));
    return;
  }
  Net net = !run.probe ? naming_memory("policy " + pr.policy + ": " + cfg.net + " at batch " +
                                           std::to_string(run.no.batch),
                                       [&] { return build_network(cfg.net, run.no); })
                       : std::move(*run.probe);
  run.probe.reset();
  auto say = [&](const std::string& s) { run.say(s); };
  if (run.root) {
    try {
      say("policy " + pr.policy + ": choosing algorithms ...");
      pr.choose_seconds = naming_memory("choosing algorithms", [&] { return net.choose(policy); });
      if (policy.kind == Policy::Kind::find_context) {
        pr.context = find_in_context(net, policy, run.batches, cfg.sgd, cfg.context, say);
        pr.has_context = true;
        pr.choose_seconds += pr.context.seconds;
      }
    } catch (const DeviceFault&) {
      throw;  // the device can run nothing more: no later policy could either (one line, not one per policy)
    } catch (const Error& e) {
      pr.skipped = e.what();
      say("policy " + pr.policy + ": skipped (" + pr.skipped + ")");
    }
  }
  if (run.ranks) {
    std::string msg = run.root ? (pr.skipped.empty() ? encode_choices(net) : "\x01" + pr.skipped) : std::string();
    run.ranks->barrier();  // the others sleep while rank 0 chooses
    run.ranks->broadcast(msg);
    run.ranks->broadcast(pr.choose_seconds);
    if (!run.root) {
      if (!msg.empty() && msg[0] == '\x01')
        pr.skipped = msg.substr(1);
      else
        apply_choices(net, msg);
    }
  }
  if (!pr.skipped.empty()) {
    run.rep.policies.push_back(std::move(pr));
    return;
  }
  pr.ran = true;
  pr.workspace_bytes = net.workspace_bytes();
  pr.memory_bytes = net.memory().device_bytes();
  net.init(cfg.seed);
  if (run.ranks) {
    // Same initial weights on every rank (the same seed draws them; checked, not assumed).
    const std::vector<double> all = run.ranks->allgather(weights_digest(net));
    for (int r = 1; r < run.R; ++r)
      if (all[size_t(r)] != all[0])
        fail("policy " + pr.policy + ": rank " + std::to_string(r) + " starts from different weights than rank 0");
  }
  run.runners.push_back({run.rep.policies.size(), std::move(net), {}, nullptr, {}});
  if (run.ranks) {
    Runner& r = run.runners.back();
    r.sync = run.ranks->exchange(r.net);
    r.net.set_gradient_hook(r.sync.get());
    run.rep.buckets = r.sync->describe();
    run.rep.grad_bytes = double(r.sync->bytes());
  }
  run.rep.policies.push_back(std::move(pr));
}

// One net per policy, each chosen and initialised from the same seed.
void choose(Run& run) {
  run.load_before = load_snapshot();
  run.runners.reserve(run.policies.size());  // an exchange keeps pointers into its runner's net
  for (size_t pi = 0; pi < run.policies.size(); ++pi) choose_policy(run, pi);
}

// One iteration of one policy's net in round `it`; a loss that is not finite stops the policy.
void step(Run& run, Runner& r, int it, bool warm) {
  PolicyResult& pr = run.rep.policies[r.policy];
  StepTimes st;
  const Batch& b = run.batches[size_t(it)];
  double loss = naming_memory("policy " + pr.policy + ": iteration " + std::to_string(it), [&] {
    return r.net.train_step(b.images.data(), b.labels.data(), run.cfg.sgd, it, &st);
  });
  if (run.ranks) {
    // The global batch's loss (the mean of equal slices' means) and the slowest rank's step.
    loss = run.ranks->sum(loss) / run.R;
    st.total = run.ranks->max(st.total);
  }
  (warm ? run.rep.warmup_order : run.rep.order).back().push_back(int(r.policy));
  pr.losses.push_back(loss);
  char line[200];
  std::snprintf(line, sizeof line, "round %d%s: policy %s  loss %.6f  %.1f ms", it, warm ? " (warm-up)" : "",
                pr.policy.c_str(), loss, st.total * 1e3);
  run.say(line);
  if (!std::isfinite(loss)) {
    // This policy trains no further and is never compared: it did not train the same network.
    // (Every rank sees the same all-reduced loss, so every rank stops it.)
    const std::string where = r.net.first_non_finite_output();
    pr.ran = false;
    pr.stopped = true;
    pr.skipped = "the loss is not finite (" + std::string(std::isnan(loss) ? "nan" : "inf") + ") at iteration " +
                 std::to_string(it) + (warm ? " (warm-up)" : "") + "; " +
                 (where.empty() ? "every layer's output is finite (the loss itself overflowed)"
                                : "the first layer whose output is not finite: " + where);
    r.stopped = true;
    run.say("policy " + pr.policy + ": stopped (" + pr.skipped + ")");
    return;
  }
  if (warm) return;
  pr.iter_seconds.push_back(st.total);
  if (r.sync) {
    r.syncs.push_back(r.sync->last_step());
    pr.comm_seconds.push_back(r.syncs.back().comm);
    pr.comm_exposed_seconds.push_back(st.comm_wait);
    pr.skew_seconds.push_back(r.syncs.back().skew);
    pr.comm_after_backward_seconds.push_back(r.syncs.back().after_backward);
  }
  r.steps.push_back(std::move(st));
}

// The rounds: warm-up first, then timed; round r trains batch r in every net, in the round's order.
void rounds(Run& run) {
  const int P = int(run.runners.size());
  const int total = run.cfg.warmup + run.cfg.iters;
  for (int it = 0; P > 0 && it < total; ++it) {
    const bool warm = it < run.cfg.warmup;
    (warm ? run.rep.warmup_order : run.rep.order).emplace_back();
    for (int k : round_order(P, warm ? it : it - run.cfg.warmup)) {
      Runner& r = run.runners[size_t(k)];
      if (!r.stopped) step(run, r, it, warm);
    }
  }
}

// Medians and intervals per policy, the speedups, the loss's drift bound and the user's expectations.
void summarise(Run& run) {
  const TrainConfig& cfg = run.cfg;
  TrainReport& rep = run.rep;
  rep.load = check_load(run.load_before, load_snapshot());
  run.say(load_text(rep.load));
  for (Runner& r : run.runners) {
    if (r.stopped) continue;
    PolicyResult& pr = rep.policies[r.policy];
    summarise_policy(pr, r, cfg, rep.limit);
    r.net.set_gradient_hook(nullptr);  // what follows runs one layer alone
    pr.first_layer_dx_seconds = r.net.time_first_layer_input_grad();
    char line[200];
    std::snprintf(line, sizeof line, "policy %s: median iteration %.1f ms [%.1f, %.1f] over %d rounds, final loss %.6f",
                  pr.policy.c_str(), pr.iter_median * 1e3, pr.iter_ci.lo * 1e3, pr.iter_ci.hi * 1e3, cfg.iters,
                  pr.losses.back());
    run.say(line);
  }
  add_speedups(rep);
  // The drift control reuses the baseline's net (single process only: ranks would need it all-reduced).
  Net* base_net = nullptr;
  for (Runner& r : run.runners)
    if (int(r.policy) == rep.baseline() && !run.ranks) base_net = &r.net;
  if (!run.runners.empty()) {
    run.say("the loss's expected fp32 drift: the baseline again from weights moved by a few ulps ...");
    add_drift(rep, base_net, run.batches, cfg, run.runners.front().net);
  }
  for (const Expectation& e : rep.config.expect) {
    auto seconds = [&](const std::string& name) {
      for (const PolicyResult& p : rep.policies)
        if (p.ran && p.policy == name) return p.iter_seconds;
      return std::vector<double>{};
    };
    rep.expectations.push_back(check_expectation(e, seconds(e.num), seconds(e.den)));
  }
  rep.peak_rss_kb = peak_rss_kb();
  rep.wall_seconds = now_seconds() - run.t_start;
  if (run.ranks) run.ranks->barrier();
}

}  // namespace

TrainReport run_training(const TrainConfig& cfg, const std::function<void(const std::string&)>& log,
                         RankGroup* group) {
  Run run(cfg);
  // Data-parallel when a group of 2+ ranks is given; a 1-rank one only sets the threads.
  run.ranks = group && group->size() > 1 ? group : nullptr;
  run.R = run.ranks ? run.ranks->size() : 1;
  run.me = run.ranks ? run.ranks->rank() : 0;
  run.root = run.me == 0;
  run.log = log;
  run.t_start = now_seconds();
  prepare(run, group);
  choose(run);
  rounds(run);
  summarise(run);
  return std::move(run.rep);
}

}  // namespace convlab::train
