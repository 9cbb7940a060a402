#include "train/trainer.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "algorithms/registry.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
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
          lr.algo[int(d)] = std::string(ch.algo->name());
          lr.why[int(d)] = ch.why;
          lr.tuning_seconds[int(d)] = ch.tuning_seconds;
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

// ---- output ------------------------------------------------------------------------------

namespace {

const char* kDirNames[3] = {"fwd", "bwd-data", "bwd-filter"};

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
std::string ms(double s) { return fmt("%.2f", s * 1e3); }

const PolicyResult* find_policy(const TrainReport& r, const std::string& name) {
  for (auto& p : r.policies)
    if (p.ran && p.policy == name) return &p;
  return nullptr;
}

double comp(const LayerTime& t, int d) { return d == 0 ? t.fwd : d == 1 ? t.bwd_data : t.bwd_filter; }

// Relative difference of the final losses (see TrainConfig::loss_rtol): the
// per-operation bounds the algorithms declare are ~K*eps relative to sum|terms|
// (1e-4 for AlexNet's forward reductions, K <= 3456) or measured transform
// bounds of similar size; a few SGD steps at lr 0.01 do not amplify them past
// 1e-3 in the loss unless an algorithm is wrong.
double loss_rel_diff(const PolicyResult& p, const PolicyResult& base) {
  const double a = p.losses.back(), b = base.losses.back();
  return std::fabs(a - b) / std::max(std::fabs(b), 1e-12);
}

}  // namespace

std::string report_markdown(const TrainReport& r) {
  std::ostringstream o;
  const TrainConfig& c = r.config;
  const int bi = r.baseline();
  const PolicyResult* base = bi >= 0 ? &r.policies[size_t(bi)] : nullptr;
  o << "# convlab train " << c.net << "\n\n";
  o << "- batch " << c.batch << ", " << c.iters << " timed iterations after " << c.warmup << " warm-up, threads "
    << (c.threads ? std::to_string(c.threads) : std::string("all")) << ", SGD lr " << c.sgd.lr << " momentum "
    << c.sgd.momentum << " weight decay " << c.sgd.weight_decay << "\n";
  o << "- device: " << r.device << "\n- data: " << r.data << "\n- parameters: " << r.params << " ("
    << fmt("%.1f", double(r.params) * 4 / 1048576) << " MiB fp32)\n";
  o << "- first layer's input gradient (dL/dimage): " << (c.first_layer_grad ? "computed (--first-layer-grad)" : "skipped")
    << "\n- peak RSS: " << fmt("%.1f", double(r.peak_rss_kb) / 1024) << " MiB; wall time " << fmt("%.1f", r.wall_seconds)
    << " s\n\n";

  if (!base) {
    o << "No policy could run:\n\n";
    for (auto& p : r.policies) o << "- " << p.policy << ": skipped (" << p.skipped << ")\n";
    return o.str();
  }
  o << "## Iteration time per policy\n\n";
  o << "median over the timed iterations; speedup = " << (base ? base->policy : std::string("-"))
    << "'s median / the policy's median; loss = after the last iteration, proof that a faster policy trains the same "
       "network (must agree within "
    << fmt("%.0e", c.loss_rtol) << " relative)\n\n";
  o << "| policy | iteration ms | speedup | final loss | loss rel. diff | agrees | choosing s | workspace MiB |\n";
  o << "|---|---:|---:|---:|---:|---|---:|---:|\n";
  for (auto& p : r.policies) {
    if (!p.ran) {
      o << "| " << p.policy << " | skipped: " << p.skipped << " | | | | | | |\n";
      continue;
    }
    const double rd = base ? loss_rel_diff(p, *base) : 0;
    o << "| " << p.policy << " | " << ms(p.iter_median) << " | " << (base ? fmt("%.2fx", base->iter_median / p.iter_median) : "")
      << " | " << fmt("%.6f", p.losses.back()) << " | " << fmt("%.1e", rd) << " | " << (rd <= c.loss_rtol ? "yes" : "NO")
      << " | " << fmt("%.3f", p.choose_seconds) << " | " << fmt("%.1f", double(p.workspace_bytes) / 1048576) << " |\n";
  }
  {
    // The targets (stated for batch 32, both cores), checked on this run's medians.
    const PolicyResult* find = find_policy(r, "find");
    struct T { const char* other; double want; };
    bool any = false;
    for (T t : {T{"fixed:cpu.im2col_openblas", 2.0}, T{"default", 1.5}, T{"fixed:cpu.onednn_auto", 1.15}}) {
      const PolicyResult* q = find_policy(r, t.other);
      if (!find || !q) continue;
      if (!any) o << "\nTargets (issue 10, stated for batch 32):\n\n";
      any = true;
      const double sp = q->iter_median / find->iter_median;
      o << "- find vs " << t.other << ": " << fmt("%.2fx", sp) << " (target >= " << fmt("%.2fx", t.want) << ": "
        << (sp >= t.want ? "met" : "missed") << ")\n";
    }
    if (const PolicyResult* get = find_policy(r, "get"); find && get) {
      if (!any) o << "\nTargets (issue 10, stated for batch 32):\n\n";
      const double slower = get->iter_median / find->iter_median - 1;
      o << "- get vs find: " << fmt("%+.1f%%", 100 * slower) << " per iteration (target: within 10%: "
        << (slower <= 0.10 ? "met" : "missed") << ")\n";
    }
  }
  o << "\n### Loss per iteration\n\n| policy |";
  const int total = c.warmup + c.iters;
  for (int i = 0; i < total; ++i) o << " it " << i << (i < c.warmup ? " (warm-up)" : "") << " |";
  o << "\n|---|";
  for (int i = 0; i < total; ++i) o << "---:|";
  o << "\n";
  for (auto& p : r.policies) {
    if (!p.ran) continue;
    o << "| " << p.policy << " |";
    for (double l : p.losses) o << " " << fmt("%.6f", l) << " |";
    o << "\n";
  }

  o << "\n## Tuning cost and break-even\n\n";
  const PolicyResult* find = find_policy(r, "find");
  const PolicyResult* get = find_policy(r, "get");
  const PolicyResult* def = find_policy(r, "default");
  if (!find) {
    o << "`find` did not run";
    for (auto& p : r.policies)
      if (p.policy == "find" && !p.ran) o << " (" << p.skipped << ")";
    o << ": no tuning cost to report.\n";
  } else {
    o << "`find` spent " << fmt("%.2f", find->choose_seconds) << " s choosing (all layers and directions).\n\n";
    for (const PolicyResult* other : {def, get}) {
      if (!other) continue;
      const double be = break_even_iterations(*find, *other);
      o << "- vs `" << other->policy << "` (" << fmt("%.3f", other->choose_seconds) << " s choosing, " << ms(other->iter_median)
        << " ms/iteration vs find's " << ms(find->iter_median) << "): ";
      if (be < 0) o << "find is not faster per iteration here; it never pays for itself.\n";
      else o << "pays for itself after " << fmt("%.1f", be) << " iterations.\n";
    }
  }

  o << "\n## Algorithm chosen per layer and direction\n\n| layer | dir |";
  for (auto& p : r.policies)
    if (p.ran) o << " " << p.policy << " |";
  o << "\n|---|---|";
  for (auto& p : r.policies)
    if (p.ran) o << "---|";
  o << "\n";
  if (base) {
    for (size_t li = 0; li < base->layers.size(); ++li) {
      if (base->layers[li].kind != "conv") continue;
      for (int d = 0; d < 3; ++d) {
        o << "| " << base->layers[li].name << " | " << kDirNames[d] << " |";
        for (auto& p : r.policies)
          if (p.ran) {
            const LayerResult& l = p.layers[li];
            o << " " << l.algo[d] << (d == 1 && !l.input_grad ? " (skipped)" : "") << " |";
          }
        o << "\n";
      }
    }
  }

  o << "\n## Per-layer time (ms, medians)\n\nconv layers: fwd / bwd-data / bwd-filter (incl. bias); other layers: fwd / "
       "backward\n\n| layer | kind |";
  for (auto& p : r.policies)
    if (p.ran) o << " " << p.policy << " |";
  o << "\n|---|---|";
  for (auto& p : r.policies)
    if (p.ran) o << "---|";
  o << "\n";
  if (base) {
    for (size_t li = 0; li < base->layers.size(); ++li) {
      o << "| " << base->layers[li].name << " | " << base->layers[li].kind << " |";
      for (auto& p : r.policies) {
        if (!p.ran) continue;
        const LayerTime& t = p.layers[li].median;
        if (p.layers[li].kind == "conv") o << " " << ms(t.fwd) << " / " << ms(t.bwd_data) << " / " << ms(t.bwd_filter) << " |";
        else o << " " << ms(t.fwd) << " / " << ms(t.bwd_data) << " |";
      }
      o << "\n";
    }
    o << "| loss | softmax-CE |";
    for (auto& p : r.policies)
      if (p.ran) o << " " << ms(p.loss_median_loss) << " |";
    o << "\n| update | SGD |";
    for (auto& p : r.policies)
      if (p.ran) o << " " << ms(p.loss_median_update) << " |";
    o << "\n| **iteration** | |";
    for (auto& p : r.policies)
      if (p.ran) o << " **" << ms(p.iter_median) << "** |";
    o << "\n";
  }

  if (base) {
    o << "\n## Attribution: time saved per layer and direction vs `" << base->policy << "` (ms per iteration)\n\n";
    o << "positive = faster than " << base->policy << "; 'other' = every non-convolution layer, the loss and the update "
         "(same code in every policy: its difference is noise)\n\n";
    for (auto& p : r.policies) {
      if (!p.ran || &p == base) continue;
      o << "### " << p.policy << "\n\n| layer | dir | " << base->policy << " | " << p.policy << " | saved | algorithm |\n";
      o << "|---|---|---:|---:|---:|---|\n";
      double conv_saved = 0, other_saved = 0;
      for (size_t li = 0; li < p.layers.size(); ++li) {
        const LayerResult &a = base->layers[li], &b = p.layers[li];
        if (b.kind != "conv") {
          other_saved += a.median.total() - b.median.total();
          continue;
        }
        for (int d = 0; d < 3; ++d) {
          if (d == 1 && !b.input_grad) continue;
          const double s = comp(a.median, d) - comp(b.median, d);
          conv_saved += s;
          o << "| " << b.name << " | " << kDirNames[d] << " | " << ms(comp(a.median, d)) << " | " << ms(comp(b.median, d))
            << " | " << ms(s) << " | " << (a.algo[d] == b.algo[d] ? b.algo[d] : a.algo[d] + " -> " + b.algo[d]) << " |\n";
        }
      }
      other_saved += (base->loss_median_loss + base->loss_median_update) - (p.loss_median_loss + p.loss_median_update);
      o << "| all conv | | | | **" << ms(conv_saved) << "** | |\n| other | | | | " << ms(other_saved) << " | |\n";
      o << "| iteration (medians) | | " << ms(base->iter_median) << " | " << ms(p.iter_median) << " | "
        << ms(base->iter_median - p.iter_median) << " | |\n\n";
    }
  }

  o << "\n## Skipping the first layer's input gradient\n\n";
  if (c.first_layer_grad) {
    o << "computed (--first-layer-grad): its time is in the first conv layer's bwd-data column above.\n";
  } else {
    o << "dL/dimage is not computed (use --first-layer-grad to compute it); what it would cost:\n\n| policy | "
         "conv1 bwd-data ms | share of the iteration |\n|---|---:|---:|\n";
    for (auto& p : r.policies)
      if (p.ran && p.first_layer_dx_seconds > 0)
        o << "| " << p.policy << " | " << ms(p.first_layer_dx_seconds) << " | "
          << fmt("%.1f%%", 100 * p.first_layer_dx_seconds / (p.iter_median + p.first_layer_dx_seconds)) << " |\n";
  }
  return o.str();
}

std::string report_json(const TrainReport& r) {
  using json::number;
  using json::quote;
  std::ostringstream o;
  const TrainConfig& c = r.config;
  const int bi = r.baseline();
  o << "{\n  \"command\": \"train\",\n  \"net\": " << quote(c.net) << ",\n  \"batch\": " << c.batch
    << ",\n  \"iters\": " << c.iters << ",\n  \"warmup\": " << c.warmup << ",\n  \"threads\": " << c.threads
    << ",\n  \"classes\": " << c.classes << ",\n  \"first_layer_grad\": " << (c.first_layer_grad ? "true" : "false")
    << ",\n  \"sgd\": {\"lr\": " << number(c.sgd.lr) << ", \"momentum\": " << number(c.sgd.momentum)
    << ", \"weight_decay\": " << number(c.sgd.weight_decay) << "},\n  \"device\": " << quote(r.device)
    << ",\n  \"data\": " << quote(r.data) << ",\n  \"params\": " << r.params << ",\n  \"peak_rss_kb\": " << r.peak_rss_kb
    << ",\n  \"wall_seconds\": " << number(r.wall_seconds) << ",\n  \"loss_rtol\": " << number(c.loss_rtol)
    << ",\n  \"baseline\": " << (bi >= 0 ? quote(r.policies[size_t(bi)].policy) : "null") << ",\n  \"policies\": [";
  for (size_t pi = 0; pi < r.policies.size(); ++pi) {
    const PolicyResult& p = r.policies[pi];
    o << (pi ? "," : "") << "\n    {\"policy\": " << quote(p.policy) << ", \"ran\": " << (p.ran ? "true" : "false");
    if (!p.ran) {
      o << ", \"skipped\": " << quote(p.skipped) << "}";
      continue;
    }
    const PolicyResult* base = bi >= 0 ? &r.policies[size_t(bi)] : nullptr;
    o << ", \"choose_seconds\": " << number(p.choose_seconds) << ", \"workspace_bytes\": " << p.workspace_bytes
      << ", \"iter_median_s\": " << number(p.iter_median)
      << ", \"speedup_vs_baseline\": " << number(base ? base->iter_median / p.iter_median : NAN)
      << ", \"loss_rel_diff_vs_baseline\": " << number(base ? loss_rel_diff(p, *base) : NAN)
      << ", \"first_layer_dx_s\": " << number(p.first_layer_dx_seconds) << ", \"loss_s\": " << number(p.loss_median_loss)
      << ", \"update_s\": " << number(p.loss_median_update) << ",\n     \"iter_s\": [";
    for (size_t i = 0; i < p.iter_seconds.size(); ++i) o << (i ? ", " : "") << number(p.iter_seconds[i]);
    o << "], \"losses\": [";
    for (size_t i = 0; i < p.losses.size(); ++i) o << (i ? ", " : "") << number(p.losses[i]);
    o << "],\n     \"layers\": [";
    for (size_t li = 0; li < p.layers.size(); ++li) {
      const LayerResult& l = p.layers[li];
      o << (li ? "," : "") << "\n       {\"name\": " << quote(l.name) << ", \"kind\": " << quote(l.kind)
        << ", \"fwd_s\": " << number(l.median.fwd) << ", \"bwd_data_s\": " << number(l.median.bwd_data)
        << ", \"bwd_filter_s\": " << number(l.median.bwd_filter);
      if (l.kind == "conv") {
        o << ", \"problem\": " << quote(l.problem) << ", \"input_grad\": " << (l.input_grad ? "true" : "false")
          << ", \"algos\": {";
        for (int d = 0; d < 3; ++d)
          o << (d ? ", " : "") << quote(kDirNames[d]) << ": {\"algo\": " << quote(l.algo[d]) << ", \"why\": " << quote(l.why[d])
            << ", \"tuning_s\": " << number(l.tuning_seconds[d]) << "}";
        o << "}";
      }
      o << "}";
    }
    o << "]}";
  }
  o << "\n  ]";
  const PolicyResult* find = find_policy(r, "find");
  o << ",\n  \"break_even_iterations\": {";
  bool first = true;
  for (const char* other : {"default", "get"}) {
    const PolicyResult* q = find_policy(r, other);
    if (!find || !q) continue;
    const double be = break_even_iterations(*find, *q);
    o << (first ? "" : ", ") << quote(other) << ": " << (be < 0 ? std::string("null") : number(be));
    first = false;
  }
  o << "}\n}\n";
  return o.str();
}

std::string report_csv(const TrainReport& r) {
  std::ostringstream o;
  o << "net,batch,policy,layer,kind,fwd_ms,bwd_data_ms,bwd_filter_ms,algo_fwd,algo_bwd_data,algo_bwd_filter,iter_ms\n";
  for (auto& p : r.policies) {
    if (!p.ran) continue;
    for (auto& l : p.layers)
      o << r.config.net << "," << r.config.batch << "," << p.policy << "," << l.name << "," << l.kind << ","
        << fmt("%.4f", l.median.fwd * 1e3) << "," << fmt("%.4f", l.median.bwd_data * 1e3) << ","
        << fmt("%.4f", l.median.bwd_filter * 1e3) << "," << l.algo[0] << "," << l.algo[1] << "," << l.algo[2] << ","
        << fmt("%.4f", p.iter_median * 1e3) << "\n";
  }
  return o.str();
}

}  // namespace convlab::train
