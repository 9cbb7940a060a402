#include "train/trainer.hpp"

#include <unistd.h>
#include <sys/resource.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "algorithms/registry.hpp"
#include "core/error.hpp"
#include "core/timing.hpp"

namespace convlab::train {

std::vector<std::string> default_policies(DeviceKind device) {
  std::vector<std::string> out = {"default", "get", "find", "find-context"};
  std::set<std::string> families;
  for (const Algorithm* a : registry()) {
    if (a->device() != device || a->family() == "reference" || !a->unavailable_reason().empty()) continue;
    if (families.insert(std::string(a->family())).second) out.push_back("fixed:" + std::string(a->name()));
  }
  // The named baselines a comparison is usually read against, when registered.
  const auto baselines = device == DeviceKind::cpu
                             ? std::vector<const char*>{"cpu.im2col_openblas", "cpu.onednn_auto"}
                             : std::vector<const char*>{"cuda.im2col_cublas", "cudnn.implicit_precomp_gemm"};
  for (const char* name : baselines) {
    const std::string p = std::string("fixed:") + name;
    const Algorithm* a = find_algorithm(name);
    if (a && a->device() == device && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

double DriftBound::at(int iteration) const { return bound0 * std::pow(growth, iteration); }

bool TrainReport::expectations_met() const {
  for (const ExpectationResult& e : expectations)
    if (e.verdict != "met") return false;
  return true;
}

int TrainReport::baseline() const {
  for (size_t i = 0; i < policies.size(); ++i)
    if (policies[i].ran && policies[i].policy == "default") return int(i);
  for (size_t i = 0; i < policies.size(); ++i)
    if (policies[i].ran) return int(i);
  return -1;
}

namespace {

long peak_rss_kb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

NetOptions net_options(const TrainConfig& cfg) {
  NetOptions no;
  no.batch = cfg.batch;
  no.classes = cfg.classes;
  no.seed = cfg.seed;
  no.first_layer_grad = cfg.first_layer_grad;
  no.ctx.threads = cfg.threads;
  no.ctx.device = cfg.device;
  return no;
}

std::vector<Policy> parse_policies(const std::vector<std::string>& names) {
  std::vector<Policy> out;
  for (const auto& p : names) out.push_back(Policy::parse(p));  // bad names: Error
  return out;
}

std::vector<bool> runnable_policies(const std::vector<Policy>& policies, DeviceKind device) {
  std::vector<bool> out;
  for (const Policy& p : policies) out.push_back(policy_unavailable_reason(p, device).empty());
  return out;
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
void summarise(PolicyResult& pr, Runner& run, const TrainConfig& cfg, const StepLimit& limit) {
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
    std::vector<double> comp[3];
    for (auto& s : run.steps) {
      lr.samples.push_back(s.layers[li]);
      comp[0].push_back(s.layers[li].fwd);
      comp[1].push_back(s.layers[li].bwd_data);
      comp[2].push_back(s.layers[li].bwd_filter);
    }
    lr.median = {stats::median(comp[0]), stats::median(comp[1]), stats::median(comp[2])};
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

// The control of the drift bound: the baseline's net again from its initial weights, each moved by 2^-22
// relative (sign from a hash of its index), trained on the same batches; its relative loss difference per
// iteration against the baseline's recorded losses.
std::vector<double> drift_control(Net& net, const std::vector<Batch>& batches, const TrainConfig& cfg,
                                  const std::vector<double>& base_losses) {
  net.init(cfg.seed);
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (Param* p : net.params()) {
    float* v = p->value.data();
    for (int64_t i = 0; i < p->value.size(); ++i) {
      h ^= h >> 31, h *= 0xbf58476d1ce4e5b9ull, h ^= h >> 29;
      v[i] *= (h & 1) ? 1.0f + 0x1p-22f : 1.0f - 0x1p-22f;
    }
    p->upload();
  }
  std::vector<double> out;
  for (size_t it = 0; it < base_losses.size() && it < batches.size(); ++it) {
    const Batch& b = batches[it];
    const double loss = net.train_step(b.images.data(), b.labels.data(), cfg.sgd, int64_t(it), nullptr);
    out.push_back(std::fabs(loss - base_losses[it]) / std::max(std::fabs(base_losses[it]), 1e-30));
  }
  return out;
}

// The drift bound (DriftBound) and every policy's loss against it.
void add_drift(TrainReport& rep, Net* base_net, const std::vector<Batch>& batches, const TrainConfig& cfg,
               const Net& any) {
  DriftBound& d = rep.drift;
  for (const ConvLayer* c : any.conv_layers())
    d.reduction = std::max(d.reduction, int(c->problem().c_per_group() * c->problem().r * c->problem().s));
  d.bound0 = d.reduction * double(FLT_EPSILON);
  const int bi = rep.baseline();
  if (bi < 0) return;
  const PolicyResult& base = rep.policies[size_t(bi)];
  d.growth = cfg.assumed_drift_growth;
  if (base_net) {
    d.control = drift_control(*base_net, batches, cfg, base.losses);
    double g = 1;  // the fastest average growth from iteration 0
    for (size_t t = 1; t < d.control.size(); ++t)
      if (d.control[0] > 0 && d.control[t] > 0) g = std::max(g, std::pow(d.control[t] / d.control[0], 1.0 / double(t)));
    if (d.control.size() > 1 && d.control[0] > 0) {
      d.growth = g;
      d.measured = true;
    }
  }
  judge_losses(rep);
}

}  // namespace

void judge_losses(TrainReport& rep) {
  const int bi = rep.baseline();
  if (bi < 0) return;
  const PolicyResult& base = rep.policies[size_t(bi)];
  const DriftBound& d = rep.drift;
  for (PolicyResult& p : rep.policies) {
    if (!p.ran) continue;
    p.loss_rel_diffs.clear();
    p.loss_exceeds_at = -1;
    for (size_t t = 0; t < p.losses.size() && t < base.losses.size(); ++t) {
      const double rd = std::fabs(p.losses[t] - base.losses[t]) / std::max(std::fabs(base.losses[t]), 1e-30);
      p.loss_rel_diffs.push_back(rd);
      if (p.loss_exceeds_at < 0 && rd > d.at(int(t))) p.loss_exceeds_at = int(t);
    }
    p.loss_agrees = p.loss_exceeds_at < 0;
  }
}

namespace {

// Every policy's speedup over the baseline, with its interval over paired rounds.
void add_speedups(TrainReport& rep) {
  const int bi = rep.baseline();
  if (bi < 0) return;
  const PolicyResult& base = rep.policies[size_t(bi)];
  for (size_t i = 0; i < rep.policies.size(); ++i) {
    PolicyResult& p = rep.policies[i];
    if (!p.ran || int(i) == bi) continue;
    p.speedup = base.iter_median / p.iter_median;
    p.speedup_ci = stats::median_ratio_ci(base.iter_seconds, p.iter_seconds);
  }
  // The equivalence margin, from the first policy that ran exactly the baseline's algorithms.
  auto same_code = [&](const PolicyResult& p) {
    if (p.layers.size() != base.layers.size()) return false;
    for (size_t li = 0; li < p.layers.size(); ++li)
      for (int d = 0; d < 3; ++d)
        if (p.layers[li].algo[d] != base.layers[li].algo[d]) return false;
    return true;
  };
  for (size_t i = 0; i < rep.policies.size() && rep.margin_pair.empty(); ++i) {
    const PolicyResult& p = rep.policies[i];
    if (!p.ran || int(i) == bi || !same_code(p)) continue;
    // Symmetric in the ratio: a pair 1.05x apart either way is the same margin.
    rep.margin = std::max({p.speedup - 1, 1 / p.speedup - 1, p.speedup_ci.hi - 1, 1 / p.speedup_ci.lo - 1, 0.0});
    rep.margin_pair = p.policy;
  }
  for (size_t i = 0; i < rep.policies.size(); ++i) {
    PolicyResult& p = rep.policies[i];
    if (!p.ran) continue;
    p.verdict = int(i) == bi ? "baseline" : speedup_verdict(p.speedup_ci, rep.margin);
    p.significant = p.verdict == "faster" || p.verdict == "slower";
  }
}

}  // namespace

void check_expectations(TrainConfig& cfg) {
  const std::vector<std::string> names = cfg.policies.empty() ? default_policies(cfg.device) : cfg.policies;
  std::vector<std::string> canonical;
  for (const auto& n : names) canonical.push_back(Policy::parse(n).name());
  for (Expectation& e : cfg.expect)
    for (std::string* side : {&e.num, &e.den}) {
      *side = Policy::parse(*side).name();
      if (std::find(canonical.begin(), canonical.end(), *side) == canonical.end()) {
        std::string list;
        for (const auto& c : canonical) list += (list.empty() ? "" : ", ") + c;
        fail("--expect '" + printable(e.text) + "': '" + printable(*side) + "' is not one of this run's policies (" +
             list + ")");
      }
    }
}

std::string speedup_verdict(const stats::Interval& ci, double m) {
  if (ci.lo > 1 + m) return "faster";
  if (ci.hi < 1 / (1 + m)) return "slower";
  if (m > 0 && ci.lo >= 1 / (1 + m) && ci.hi <= 1 + m) return "same";
  return "not significant";
}

std::string why_no_policy_can_run(const TrainConfig& cfg) {
  const std::vector<std::string> names = cfg.policies.empty() ? default_policies(cfg.device) : cfg.policies;
  std::string why;
  for (const auto& text : names) {
    const Policy p = Policy::parse(text);
    const std::string r = policy_unavailable_reason(p, cfg.device);
    if (r.empty()) return {};
    why += (why.empty() ? "" : "; ") + p.name() + ": " + r;
  }
  return "no requested policy can run on " + std::string(to_string(cfg.device)) + " (" + why + ")";
}

namespace {

// The host bytes a run holds besides its nets: every round's batch (images and labels, the
// global batch: each rank draws it whole before taking its slice) and an .npy source's arrays.
size_t data_bytes(const TrainConfig& cfg, const Shape4& input) {
  const size_t batch = size_t(cfg.batch) * (size_t(input.per_sample()) * sizeof(float) + sizeof(int));
  size_t bytes = size_t(cfg.warmup + cfg.iters) * batch;
  if (cfg.data == "npy") {
    std::error_code ec;
    for (const std::string& f : {cfg.images_npy, cfg.labels_npy}) {
      const auto size = std::filesystem::file_size(f, ec);
      if (!ec) bytes += size_t(size);
    }
  }
  return bytes;
}

// The one net every run builds first (the memory plan measures it), its allocation failures
// naming the net: "alexnet at batch 1500: conv1's output: cannot allocate ...".
Net build_probe(const TrainConfig& cfg, const NetOptions& no) {
  return naming_memory(cfg.net + " at batch " + std::to_string(no.batch), [&] { return build_network(cfg.net, no); });
}

}  // namespace

std::string why_nets_do_not_fit(const TrainConfig& cfg) {
  const std::vector<Policy> policies = parse_policies(cfg.policies.empty() ? default_policies(cfg.device) : cfg.policies);
  const AvailableMemory available = read_available_memory(cfg.device);  // before the probe is allocated
  const Net probe = build_probe(cfg, net_options(cfg));
  return plan_memory(probe, policies, runnable_policies(policies, cfg.device), available,
                     data_bytes(cfg, probe.input_shape()))
      .refusal;
}

TrainReport run_training(const TrainConfig& cfg, const std::function<void(const std::string&)>& log,
                         RankGroup* group) {
  // Data-parallel when a group of 2+ ranks is given; a 1-rank one only sets the threads.
  RankGroup* comm = group && group->size() > 1 ? group : nullptr;
  const int R = comm ? comm->size() : 1;
  const int me = comm ? comm->rank() : 0;
  const bool root = me == 0;
  auto say = [&](const std::string& s) {
    if (log && root) log(R > 1 ? "[" + std::to_string(R) + " ranks] " + s : s);
  };
  const double t_start = now_seconds();
  if (cfg.iters < 1) fail("--iters must be at least 1");
  if (cfg.warmup < 0) fail("--warmup must be non-negative");
  if (cfg.batch % R != 0)
    fail("the global batch " + std::to_string(cfg.batch) + " does not split evenly over " + std::to_string(R) +
         " ranks");
  TrainReport rep;
  rep.config = cfg;
  if (rep.config.policies.empty()) rep.config.policies = default_policies(cfg.device);
  const std::vector<Policy> policies = parse_policies(rep.config.policies);
  if (std::string why = why_no_policy_can_run(rep.config); !why.empty()) fail(why);  // before any work
  check_expectations(rep.config);

  NetOptions no = net_options(cfg);
  no.batch = cfg.batch / R;
  no.sample_offset = int64_t(me) * no.batch;
  if (R > 1) no.grad_batch = cfg.batch;  // the ranks' gradients sum to the global mean (dist/grad_sync.hpp)
  if (group && cfg.threads == 0 && cfg.device == DeviceKind::cpu) no.ctx.threads = group->default_threads();
  rep.ranks = R;
  rep.rank_threads = no.ctx.resolved_threads();
  if (comm) comm->select_device(cfg.device);  // before any device memory
  const AvailableMemory available = read_available_memory(cfg.device);  // before the probe is allocated
  Net probe = build_probe(cfg, no);  // no CUDA device: Error
  rep.device = device_fingerprint(cfg.device, no.ctx.threads);
  rep.params = probe.param_count();
  const std::vector<bool> runnable = runnable_policies(policies, cfg.device);
  rep.memory = plan_memory(probe, policies, runnable, available, data_bytes(cfg, probe.input_shape()));
  if (comm && rep.memory.refusal.empty() && !rep.memory.on_gpu && comm->local_size() > 1) {
    // The ranks of a node share its memory: all of their nets must fit together.
    const double all = double(rep.memory.host_total) * comm->local_size();
    if (all > (1 - kMemoryMargin) * double(rep.memory.host_available))
      rep.memory.refusal = std::to_string(comm->local_size()) + " ranks on this node need " +
                           std::to_string(int64_t(all / 1048576)) + " MiB for their nets together, more than " +
                           std::to_string(int(100 * (1 - kMemoryMargin))) + " % of the " +
                           std::to_string(rep.memory.host_available / 1048576) + " MiB available (" +
                           rep.memory.host_source + "): fewer policies (--policy) or fewer ranks per node";
  }
  if (!rep.memory.refusal.empty()) fail(rep.memory.refusal);  // before any other net and any find
  if (comm) {
    say("measuring the exchange bandwidth between ranks 0 and 1 ...");
    const GroupTransport t = comm->connect(cfg.device, rep.rank_threads);
    rep.transport = t.describe;
    rep.overlap_why = t.overlap_why;
    rep.exchange_bytes_per_s = t.exchange_bytes_per_s;
  }

  // Every rank draws the whole global batch and trains its own slice of it.
  Shape4 global = probe.input_shape();
  global.n = cfg.batch;
  std::unique_ptr<DataSource> data =
      cfg.data == "npy" ? make_npy(cfg.images_npy, cfg.labels_npy, global, cfg.classes)
                        : make_synthetic(cfg.data, global, cfg.classes, cfg.seed, cfg.noise);
  rep.data = data->describe();
  const int total = cfg.warmup + cfg.iters;
  std::vector<Batch> batches(static_cast<size_t>(total));
  for (int i = 0; i < total; ++i) {
    naming_memory("batch " + std::to_string(i) + " of the training data", [&] { data->batch(i, batches[size_t(i)]); });
    if (R > 1) {
      Batch mine;
      slice_batch(batches[size_t(i)], no.sample_offset, no.batch, mine);
      batches[size_t(i)] = std::move(mine);
    }
  }
  if (cfg.device == DeviceKind::cpu && root) {
    say("measuring this machine's FMA peak and memory bandwidth for the step's limit ...");
    rep.limit = measure_step_limit(probe, no.ctx.resolved_threads());
  } else if (cfg.device == DeviceKind::cpu) {
    rep.limit_skipped = "measured on rank 0";
  } else {
    rep.limit_skipped = "the limit is measured for the CPU only (no GPU peak or bandwidth probe yet)";
  }
  if (comm) comm->barrier();  // the other ranks sleep while rank 0 measures

  const MachineLoad load_before = load_snapshot();
  // One net per policy, each chosen and initialised from the same seed. Data-parallel:
  // rank 0 chooses, the others run its choices.
  std::vector<Runner> runners;
  runners.reserve(policies.size());  // a GradSync keeps pointers into its runner's net
  bool probe_used = false;
  for (size_t pi = 0; pi < policies.size(); ++pi) {
    PolicyResult pr;
    pr.policy = policies[pi].name();
    if (!runnable[pi]) {
      pr.skipped = policy_unavailable_reason(policies[pi], cfg.device);  // never substituted under its name
      say("policy " + pr.policy + ": skipped (" + pr.skipped + ")");
      rep.policies.push_back(std::move(pr));
      continue;
    }
    Net net = probe_used ? naming_memory("policy " + pr.policy + ": " + cfg.net + " at batch " + std::to_string(no.batch),
                                         [&] { return build_network(cfg.net, no); })
                         : std::move(probe);
    probe_used = true;
    if (root) {
      try {
        say("policy " + pr.policy + ": choosing algorithms ...");
        pr.choose_seconds = naming_memory("choosing algorithms", [&] { return net.choose(policies[pi]); });
        if (policies[pi].kind == Policy::Kind::find_context) {
          pr.context = find_in_context(net, policies[pi], batches, cfg.sgd, cfg.context, say);
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
    if (comm) {
      std::string msg = root ? (pr.skipped.empty() ? encode_choices(net) : "\x01" + pr.skipped) : std::string();
      comm->barrier();  // the others sleep while rank 0 chooses
      comm->broadcast(msg);
      comm->broadcast(pr.choose_seconds);
      if (!root) {
        if (!msg.empty() && msg[0] == '\x01')
          pr.skipped = msg.substr(1);
        else
          apply_choices(net, msg);
      }
    }
    if (!pr.skipped.empty()) {
      rep.policies.push_back(std::move(pr));
      continue;
    }
    pr.ran = true;
    pr.workspace_bytes = net.workspace_bytes();
    pr.memory_bytes = net.memory().device_bytes();
    net.init(cfg.seed);
    if (comm) {
      // Same initial weights on every rank (the same seed draws them; checked, not assumed).
      const std::vector<double> all = comm->allgather(weights_digest(net));
      for (int r = 1; r < R; ++r)
        if (all[size_t(r)] != all[0])
          fail("policy " + pr.policy + ": rank " + std::to_string(r) + " starts from different weights than rank 0");
    }
    runners.push_back({rep.policies.size(), std::move(net), {}, nullptr, {}});
    if (comm) {
      Runner& run = runners.back();
      run.sync = comm->exchange(run.net);
      run.net.set_gradient_hook(run.sync.get());
      rep.buckets = run.sync->describe();
      rep.grad_bytes = double(run.sync->bytes());
    }
    rep.policies.push_back(std::move(pr));
  }

  // The rounds: warm-up first, then timed; round r trains batch r in every net.
  const int P = int(runners.size());
  for (int it = 0; P > 0 && it < total; ++it) {
    const bool warm = it < cfg.warmup;
    std::vector<int>& executed = (warm ? rep.warmup_order : rep.order).emplace_back();
    for (int k : round_order(P, warm ? it : it - cfg.warmup)) {
      Runner& run = runners[size_t(k)];
      if (run.stopped) continue;
      PolicyResult& pr = rep.policies[run.policy];
      StepTimes st;
      const Batch& b = batches[size_t(it)];
      double loss = naming_memory("policy " + pr.policy + ": iteration " + std::to_string(it), [&] {
        return run.net.train_step(b.images.data(), b.labels.data(), cfg.sgd, it, &st);
      });
      if (comm) {
        // The global batch's loss (the mean of equal slices' means) and the slowest rank's step.
        loss = comm->sum(loss) / R;
        st.total = comm->max(st.total);
      }
      executed.push_back(int(run.policy));
      pr.losses.push_back(loss);
      char line[200];
      std::snprintf(line, sizeof line, "round %d%s: policy %s  loss %.6f  %.1f ms", it, warm ? " (warm-up)" : "",
                    pr.policy.c_str(), loss, st.total * 1e3);
      say(line);
      if (!std::isfinite(loss)) {
        // This policy trains no further and is never compared: it did not train the same network.
        // (Every rank sees the same all-reduced loss, so every rank stops it.)
        const std::string where = run.net.first_non_finite_output();
        pr.ran = false;
        pr.stopped = true;
        pr.skipped = "the loss is not finite (" + std::string(std::isnan(loss) ? "nan" : "inf") + ") at iteration " +
                     std::to_string(it) + (warm ? " (warm-up)" : "") + "; " +
                     (where.empty() ? "every layer's output is finite (the loss itself overflowed)"
                                    : "the first layer whose output is not finite: " + where);
        run.stopped = true;
        say("policy " + pr.policy + ": stopped (" + pr.skipped + ")");
        continue;
      }
      if (!warm) {
        pr.iter_seconds.push_back(st.total);
        if (run.sync) {
          run.syncs.push_back(run.sync->last_step());
          pr.comm_seconds.push_back(run.syncs.back().comm);
          pr.comm_exposed_seconds.push_back(st.comm_wait);
          pr.skew_seconds.push_back(run.syncs.back().skew);
          pr.comm_after_backward_seconds.push_back(run.syncs.back().after_backward);
        }
        run.steps.push_back(std::move(st));
      }
    }
  }
  rep.load = check_load(load_before, load_snapshot());
  say(load_text(rep.load));
  for (Runner& run : runners) {
    if (run.stopped) continue;
    PolicyResult& pr = rep.policies[run.policy];
    summarise(pr, run, cfg, rep.limit);
    run.net.set_gradient_hook(nullptr);  // what follows runs one layer alone
    pr.first_layer_dx_seconds = run.net.time_first_layer_input_grad();
    char line[200];
    std::snprintf(line, sizeof line, "policy %s: median iteration %.1f ms [%.1f, %.1f] over %d rounds, final loss %.6f",
                  pr.policy.c_str(), pr.iter_median * 1e3, pr.iter_ci.lo * 1e3, pr.iter_ci.hi * 1e3, cfg.iters,
                  pr.losses.back());
    say(line);
  }
  add_speedups(rep);
  {
    // The drift control reuses the baseline's net (single process only: ranks would need it all-reduced).
    Net* base_net = nullptr;
    for (Runner& run : runners)
      if (int(run.policy) == rep.baseline() && !comm) base_net = &run.net;
    if (!runners.empty()) {
      say("the loss's expected fp32 drift: the baseline again from weights moved by a few ulps ...");
      add_drift(rep, base_net, batches, cfg, runners.front().net);
    }
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
  rep.wall_seconds = now_seconds() - t_start;
  if (comm) comm->barrier();
  return rep;
}

std::string stopped_line(const TrainReport& rep) {
  int n = 0;
  const PolicyResult* first = nullptr;
  for (const PolicyResult& p : rep.policies)
    if (p.stopped && !n++) first = &p;
  if (!first) return {};
  return "policy " + first->policy + " stopped: " + first->skipped +
         (n > 1 ? " (" + std::to_string(n) + " policies stopped; see the report)" : "");
}

double break_even_iterations(const PolicyResult& find, const PolicyResult& other) {
  const double saved = other.iter_median - find.iter_median;
  if (saved <= 0) return -1;
  return std::max(0.0, find.choose_seconds - other.choose_seconds) / saved;
}

}  // namespace convlab::train
