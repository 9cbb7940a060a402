#include "train/trainer.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>

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
  // The baselines the targets are stated against, when registered.
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
};

// Medians and 95 % intervals of everything a policy's timed rounds measured.
void summarise(PolicyResult& pr, Runner& run, const TrainConfig& cfg, const StepLimit& limit) {
  pr.iter_median = stats::median(pr.iter_seconds);
  pr.iter_ci = stats::median_ci(pr.iter_seconds);
  for (auto& s : run.steps) {
    pr.update_seconds.push_back(s.update);
    pr.loss_seconds.push_back(s.loss);
  }
  pr.loss_median_update = stats::median(pr.update_seconds);
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
    p.significant = !p.speedup_ci.contains(1.0);
  }
}

}  // namespace

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

std::string why_nets_do_not_fit(const TrainConfig& cfg) {
  const std::vector<Policy> policies = parse_policies(cfg.policies.empty() ? default_policies(cfg.device) : cfg.policies);
  const Net probe = build_network(cfg.net, net_options(cfg));
  return plan_memory(probe, policies, runnable_policies(policies, cfg.device)).refusal;
}

TrainReport run_training(const TrainConfig& cfg, const std::function<void(const std::string&)>& log) {
  auto say = [&](const std::string& s) {
    if (log) log(s);
  };
  const double t_start = now_seconds();
  if (cfg.iters < 1) fail("--iters must be at least 1");
  if (cfg.warmup < 0) fail("--warmup must be non-negative");
  TrainReport rep;
  rep.config = cfg;
  if (rep.config.policies.empty()) rep.config.policies = default_policies(cfg.device);
  const std::vector<Policy> policies = parse_policies(rep.config.policies);
  if (std::string why = why_no_policy_can_run(rep.config); !why.empty()) fail(why);  // before any work

  const NetOptions no = net_options(cfg);
  Net probe = build_network(cfg.net, no);  // no CUDA device: Error
  rep.device = device_fingerprint(cfg.device, cfg.threads);
  rep.params = probe.param_count();
  const std::vector<bool> runnable = runnable_policies(policies, cfg.device);
  rep.memory = plan_memory(probe, policies, runnable);
  if (!rep.memory.refusal.empty()) fail(rep.memory.refusal);  // before any other net and any find

  std::unique_ptr<DataSource> data =
      cfg.data == "npy" ? make_npy(cfg.images_npy, cfg.labels_npy, probe.input_shape(), cfg.classes)
                        : make_synthetic(cfg.data, probe.input_shape(), cfg.classes, cfg.seed, cfg.noise);
  rep.data = data->describe();
  const int total = cfg.warmup + cfg.iters;
  std::vector<Batch> batches(static_cast<size_t>(total));
  for (int i = 0; i < total; ++i) data->batch(i, batches[size_t(i)]);
  if (cfg.device == DeviceKind::cpu) {
    ExecContext ctx;
    ctx.threads = cfg.threads;
    say("measuring this machine's FMA peak and memory bandwidth for the step's limit ...");
    rep.limit = measure_step_limit(probe, ctx.resolved_threads());
  } else {
    rep.limit_skipped = "the limit is measured for the CPU only (no GPU peak or bandwidth probe yet)";
  }

  // One net per policy, each chosen and initialised from the same seed.
  std::vector<Runner> runners;
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
    Net net = probe_used ? build_network(cfg.net, no) : std::move(probe);
    probe_used = true;
    try {
      say("policy " + pr.policy + ": choosing algorithms ...");
      pr.choose_seconds = net.choose(policies[pi]);
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
      rep.policies.push_back(std::move(pr));
      continue;
    }
    pr.ran = true;
    pr.workspace_bytes = net.workspace_bytes();
    pr.memory_bytes = net.memory().device_bytes();
    net.init(cfg.seed);
    runners.push_back({rep.policies.size(), std::move(net), {}});
    rep.policies.push_back(std::move(pr));
  }

  // The rounds: warm-up first, then timed; round r trains batch r in every net.
  const int P = int(runners.size());
  for (int it = 0; P > 0 && it < total; ++it) {
    const bool warm = it < cfg.warmup;
    std::vector<int>& executed = (warm ? rep.warmup_order : rep.order).emplace_back();
    for (int k : round_order(P, warm ? it : it - cfg.warmup)) {
      Runner& run = runners[size_t(k)];
      PolicyResult& pr = rep.policies[run.policy];
      StepTimes st;
      const Batch& b = batches[size_t(it)];
      const double loss = run.net.train_step(b.images.data(), b.labels.data(), cfg.sgd, it, &st);
      executed.push_back(int(run.policy));
      pr.losses.push_back(loss);
      char line[200];
      std::snprintf(line, sizeof line, "round %d%s: policy %s  loss %.6f  %.1f ms", it, warm ? " (warm-up)" : "",
                    pr.policy.c_str(), loss, st.total * 1e3);
      say(line);
      if (!std::isfinite(loss)) fail("policy " + pr.policy + ": the loss is not finite at iteration " + std::to_string(it));
      if (!warm) {
        pr.iter_seconds.push_back(st.total);
        run.steps.push_back(std::move(st));
      }
    }
  }
  for (Runner& run : runners) {
    PolicyResult& pr = rep.policies[run.policy];
    summarise(pr, run, cfg, rep.limit);
    pr.first_layer_dx_seconds = run.net.time_first_layer_input_grad();
    char line[200];
    std::snprintf(line, sizeof line, "policy %s: median iteration %.1f ms [%.1f, %.1f] over %d rounds, final loss %.6f",
                  pr.policy.c_str(), pr.iter_median * 1e3, pr.iter_ci.lo * 1e3, pr.iter_ci.hi * 1e3, cfg.iters,
                  pr.losses.back());
    say(line);
  }
  add_speedups(rep);
  rep.peak_rss_kb = peak_rss_kb();
  rep.wall_seconds = now_seconds() - t_start;
  return rep;
}

double break_even_iterations(const PolicyResult& find, const PolicyResult& other) {
  const double saved = other.iter_median - find.iter_median;
  if (saved <= 0) return -1;
  return std::max(0.0, find.choose_seconds - other.choose_seconds) / saved;
}

}  // namespace convlab::train
