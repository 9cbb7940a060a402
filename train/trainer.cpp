#include "train/trainer.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "algorithms/registry.hpp"
#include "core/error.hpp"
#include "core/timing.hpp"

namespace convlab::train {

std::vector<std::string> default_policies(DeviceKind device) {
  std::vector<std::string> out = {"default", "get", "find"};
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

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

long peak_rss_kb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
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
  std::vector<Policy> policies;
  for (const auto& p : rep.config.policies) policies.push_back(Policy::parse(p));  // bad names: Error
  if (std::string why = why_no_policy_can_run(rep.config); !why.empty()) fail(why);  // before any work

  NetOptions no;
  no.batch = cfg.batch;
  no.classes = cfg.classes;
  no.seed = cfg.seed;
  no.first_layer_grad = cfg.first_layer_grad;
  no.ctx.threads = cfg.threads;
  no.ctx.device = cfg.device;
  Net net = build_network(cfg.net, no);  // no CUDA device: Error
  rep.device = device_fingerprint(cfg.device, cfg.threads);
  rep.params = net.param_count();

  std::unique_ptr<DataSource> data =
      cfg.data == "npy" ? make_npy(cfg.images_npy, cfg.labels_npy, net.input_shape(), cfg.classes)
                        : make_synthetic(cfg.data, net.input_shape(), cfg.classes, cfg.seed, cfg.noise);
  rep.data = data->describe();
  const int total = cfg.warmup + cfg.iters;
  std::vector<Batch> batches(static_cast<size_t>(total));
  for (int i = 0; i < total; ++i) data->batch(i, batches[size_t(i)]);

  for (size_t pi = 0; pi < policies.size(); ++pi) {
    PolicyResult pr;
    pr.policy = policies[pi].name();
    if (std::string why = policy_unavailable_reason(policies[pi], cfg.device); !why.empty()) {
      pr.skipped = why;  // never substituted: a fixed algorithm that cannot run here is not run under its name
      say("policy " + pr.policy + ": skipped (" + pr.skipped + ")");
      rep.policies.push_back(std::move(pr));
      continue;
    }
    try {
      say("policy " + pr.policy + ": choosing algorithms ...");
      pr.choose_seconds = net.choose(policies[pi]);
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
    net.init(cfg.seed);
    std::vector<StepTimes> steps;
    for (int it = 0; it < total; ++it) {
      StepTimes st;
      const Batch& b = batches[size_t(it)];
      const double loss = net.train_step(b.images.data(), b.labels.data(), cfg.sgd, it, &st);
      pr.losses.push_back(loss);
      char line[160];
      std::snprintf(line, sizeof line, "policy %s: iteration %d%s  loss %.6f  %.1f ms", pr.policy.c_str(), it,
                    it < cfg.warmup ? " (warm-up)" : "", loss, st.total * 1e3);
      say(line);
      if (!std::isfinite(loss)) fail("policy " + pr.policy + ": the loss is not finite at iteration " + std::to_string(it));
      if (it >= cfg.warmup) {
        pr.iter_seconds.push_back(st.total);
        steps.push_back(std::move(st));
      }
    }
    pr.iter_median = median(pr.iter_seconds);
    std::vector<double> u, l;
    for (auto& s : steps) {
      u.push_back(s.update);
      l.push_back(s.loss);
    }
    pr.loss_median_update = median(u);
    pr.loss_median_loss = median(l);
    const auto& layers = net.layers();
    for (size_t li = 0; li < layers.size(); ++li) {
      LayerResult lr;
      lr.name = layers[li]->name();
      lr.kind = std::string(layers[li]->kind());
      std::vector<double> f, bd, bf;
      for (auto& s : steps) {
        f.push_back(s.layers[li].fwd);
        bd.push_back(s.layers[li].bwd_data);
        bf.push_back(s.layers[li].bwd_filter);
      }
      lr.median = {median(f), median(bd), median(bf)};
      lr.input_grad = li > 0 || cfg.first_layer_grad;
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
    pr.first_layer_dx_seconds = net.time_first_layer_input_grad();
    char line[200];
    std::snprintf(line, sizeof line, "policy %s: median iteration %.1f ms over %d, final loss %.6f", pr.policy.c_str(),
                  pr.iter_median * 1e3, cfg.iters, pr.losses.back());
    say(line);
    rep.policies.push_back(std::move(pr));
  }
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
