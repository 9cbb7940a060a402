// The training report's measurement sections (train/report_sections.hpp): how
// the rounds ran, the intervals, the targets and the in-context find.
#include <algorithm>
#include <cmath>

#include "core/json.hpp"
#include "train/report_sections.hpp"
#include "train/trainer.hpp"

namespace convlab::train::report_detail {

namespace {

std::string mib(size_t bytes) { return fmt("%.0f MiB", double(bytes) / 1048576); }

std::string order_text(const TrainReport& r, const std::vector<int>& round) {
  std::string s;
  for (int i : round) s += (s.empty() ? "" : ", ") + r.policies[size_t(i)].policy;
  return s;
}

// "a / b" as a speedup with its paired interval: "1.23x [1.10, 1.35]".
std::string ratio_text(double v, const stats::Interval& ci) {
  return fmt("%.2fx", v) + " [" + fmt("%.2f", ci.lo) + ", " + fmt("%.2f", ci.hi) + "]";
}

}  // namespace

const PolicyResult* find_policy(const TrainReport& r, const std::string& name) {
  for (auto& p : r.policies)
    if (p.ran && p.policy == name) return &p;
  return nullptr;
}

std::string ms_interval(const stats::Interval& ci) { return "[" + ms(ci.lo) + ", " + ms(ci.hi) + "]"; }

std::string json_ms_interval(const stats::Interval& ci) {
  return "[" + json::number(ci.lo * 1e3) + ", " + json::number(ci.hi * 1e3) + "]";
}

std::string speedup_cell(const PolicyResult& p, bool is_baseline) {
  if (is_baseline) return "1.00x (baseline)";
  return ratio_text(p.speedup, p.speedup_ci) + (p.significant ? "" : " not significant");
}

std::vector<double> other_seconds(const PolicyResult& p) {
  std::vector<double> out(p.iter_seconds.size(), 0.0);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = p.loss_seconds[i] + p.update_seconds[i];
    for (const LayerResult& l : p.layers)
      if (l.kind != "conv") out[i] += l.samples[i].total();
  }
  return out;
}

void md_measurement(Out& o, const TrainReport& r) {
  const TrainConfig& c = r.config;
  const MemoryPlan& m = r.memory;
  o << "## How this was measured\n\n";
  int nets = 0;
  size_t largest = 0;
  for (size_t i = 0; i < r.policies.size(); ++i)
    if (i < m.per_net.size() && m.per_net[i]) {
      ++nets;
      largest = std::max(largest, m.per_net[i]);
    }
  o << "- one network per policy: " << nets << " nets, up to " << mib(largest)
    << " each (activations, gradients, parameters with gradient and momentum, layer state, workspace: the largest any "
       "candidate may need for the measuring policies); "
    << mib(m.on_gpu ? m.device_total : m.host_total) << " in all of "
    << mib(m.on_gpu ? m.device_available : m.host_available) << " available ("
    << (m.on_gpu ? m.device_source : m.host_source) << "; the run is refused above "
    << fmt("%.0f", 100 * (1 - kMemoryMargin)) << " %)\n";
  o << "- " << c.warmup << " warm-up and " << c.iters
    << " timed rounds; a round runs one iteration of every policy on the same batch, in the order of a Williams Latin "
       "square (round r: row r mod P, 2P for odd P): every policy runs in each position and after each other policy "
       "equally often. Timed rounds as run:";
  for (size_t i = 0; i < r.order.size() && i < 4; ++i) o << (i ? "; " : " ") << (i + 1) << ": " << order_text(r, r.order[i]);
  o << (r.order.size() > 4 ? "; ...\n" : "\n");
  o << "- every time is a median over the timed rounds with a 95 % percentile-bootstrap interval (2000 resamples, "
       "fixed seed); a speedup or a difference resamples whole rounds, so both policies' iterations of a round stay "
       "together; a speedup whose interval holds 1.0 is \"not significant\". With "
    << c.iters << " rounds an interval can only move between order statistics: it is coarse.\n\n";
}

void md_targets(Out& o, const TrainReport& r) {
  o << "\n### Targets (issue 19, stated for AlexNet at batch 32, both cores)\n\n";
  bool any = false;
  const PolicyResult* def = find_policy(r, "default");
  if (const PolicyResult* same = find_policy(r, "fixed:cpu.im2col_gemm"); def && same) {
    const double rel = same->iter_median / def->iter_median - 1;
    const stats::Interval ci = stats::median_ratio_ci(def->iter_seconds, same->iter_seconds);
    const bool ns = ci.contains(1.0);
    o << "- two identical policies, default vs fixed:cpu.im2col_gemm: medians " << fmt("%+.1f%%", 100 * rel)
      << " apart (target within 3 %: " << (std::fabs(rel) <= 0.03 ? "met" : "missed") << "), speedup "
      << ratio_text(def->iter_median / same->iter_median, ci) << " (target not significant: " << (ns ? "met" : "missed")
      << ")\n";
    any = true;
  }
  {
    // Layers whose code is the same in every policy: their medians should be the same too.
    double lo = INFINITY, hi = 0;
    std::string lo_p, hi_p;
    int n = 0;
    for (auto& p : r.policies) {
      if (!p.ran) continue;
      const double v = stats::median(other_seconds(p));
      if (v < lo) lo = v, lo_p = p.policy;
      if (v > hi) hi = v, hi_p = p.policy;
      ++n;
    }
    if (n >= 2) {
      const double spread = hi / lo - 1;
      o << "- non-convolution layers (+ loss, update) across all policies: " << ms(lo) << " ms (" << lo_p << ") to "
        << ms(hi) << " ms (" << hi_p << "), " << fmt("%.1f%%", 100 * spread)
        << " apart (target within 5 %: " << (spread <= 0.05 ? "met" : "missed") << ")\n";
      any = true;
    }
  }
  const PolicyResult* find = find_policy(r, "find");
  struct T { const char* other; double want; };
  for (T t : {T{"default", 1.5}, T{"fixed:cpu.im2col_openblas", 2.0}, T{"fixed:cpu.onednn_auto", 1.15}}) {
    const PolicyResult* q = find_policy(r, t.other);
    if (!find || !q) continue;
    const double sp = q->iter_median / find->iter_median;
    const stats::Interval ci = stats::median_ratio_ci(q->iter_seconds, find->iter_seconds);
    o << "- find vs " << t.other << ": " << ratio_text(sp, ci) << " (target >= " << fmt("%.2fx", t.want)
      << " with an interval excluding 1.0: " << (sp >= t.want && !ci.contains(1.0) ? "met" : "missed") << ")\n";
    any = true;
  }
  if (const PolicyResult* get = find_policy(r, "get"); find && get) {
    const double slower = get->iter_median / find->iter_median - 1;
    const stats::Interval ci = stats::median_ratio_ci(get->iter_seconds, find->iter_seconds);
    o << "- get vs find: " << fmt("%+.1f%%", 100 * slower) << " per iteration, get/find "
      << ratio_text(1 + slower, ci) << " (target within 10 %: " << (slower <= 0.10 ? "met" : "missed") << ")\n";
    any = true;
  }
  if (!any) o << "(none of the targets' policies ran)\n";
}

void md_in_context(Out& o, const TrainReport& r) {
  const PolicyResult* p = nullptr;
  for (auto& q : r.policies)
    if (q.ran && q.has_context && !p) p = &q;
  if (!p) return;
  const ContextFindResult& cf = p->context;
  o << "\n## In-context find (`" << p->policy << "`)\n\n";
  o << "Per (layer, direction), find's candidates within " << fmt("%.2f", cf.options.factor)
    << "x of its isolated best, each timed inside training steps (only that choice swapped, every other layer at the "
       "isolated choice; "
    << cf.options.steps << " timed steps per candidate after one untimed, candidates interleaved); ms = that "
       "layer-direction's median inside the step [95 %]. Cost: "
    << cf.steps << " training steps, " << fmt("%.1f", cf.seconds)
    << " s, on top of the isolated find. cost = the isolated winner's in-context time / the in-context winner's.\n\n";
  o << "| layer | dir | isolated ranking (ms alone) | in-context ranking (ms in the step) | agree | cost |\n";
  o << "|---|---|---|---|---|---:|\n";
  int disagree = 0;
  double lost = 0;
  for (const ContextPair& pr : cf.pairs) {
    o << "| " << pr.layer << " | " << to_string(pr.dir) << " | ";
    for (size_t i = 0; i < pr.isolated.size(); ++i)
      o << (i ? ", " : "") << pr.isolated[i].algo << " " << ms(pr.isolated[i].isolated_s);
    o << " | ";
    for (size_t i = 0; i < pr.in_context.size(); ++i)
      o << (i ? ", " : "") << pr.in_context[i].algo << " " << ms(pr.in_context[i].context_s) << " "
        << ms_interval(pr.in_context[i].context_ci);
    o << " | " << (pr.agree ? "yes" : "**no**") << " | "
      << (pr.agree ? std::string("1.00x") : ratio_text(pr.cost_ratio, pr.cost_ratio_ci)) << " |\n";
    if (!pr.agree) {
      ++disagree;
      lost += pr.isolated.front().context_s - pr.in_context.front().context_s;
    }
  }
  o << "\n" << disagree << " of " << cf.pairs.size()
    << " pairs rank differently inside the step; the isolated winners cost " << ms(lost)
    << " ms per iteration more there than the in-context winners.\n";
}

void json_measurement(Out& o, const TrainReport& r) {
  using json::number;
  using json::quote;
  auto orders = [&](const std::vector<std::vector<int>>& rounds) {
    o << "[";
    for (size_t i = 0; i < rounds.size(); ++i) {
      o << (i ? ", " : "") << "[";
      for (size_t k = 0; k < rounds[i].size(); ++k) o << (k ? ", " : "") << quote(r.policies[size_t(rounds[i][k])].policy);
      o << "]";
    }
    o << "]";
  };
  o << ",\n  \"rounds\": " << r.order.size() << ",\n  \"warmup_rounds\": " << r.warmup_order.size() << ",\n  \"order\": ";
  orders(r.order);
  o << ",\n  \"warmup_order\": ";
  orders(r.warmup_order);
  const MemoryPlan& m = r.memory;
  size_t largest = 0;
  for (size_t b : m.per_net) largest = std::max(largest, b);
  o << ",\n  \"memory_bytes_per_net\": " << largest << ",\n  \"memory\": {\"per_net\": {";
  bool first = true;
  for (size_t i = 0; i < r.policies.size() && i < m.per_net.size(); ++i) {
    if (!m.per_net[i]) continue;
    o << (first ? "" : ", ") << quote(r.policies[i].policy) << ": " << m.per_net[i];
    first = false;
  }
  o << "}, \"host_total\": " << m.host_total << ", \"host_available\": " << m.host_available
    << ", \"host_source\": " << quote(m.host_source) << ", \"device_total\": " << m.device_total
    << ", \"device_available\": " << m.device_available << ", \"margin\": " << number(kMemoryMargin) << "}";
  const PolicyResult* p = nullptr;
  for (auto& q : r.policies)
    if (q.ran && q.has_context && !p) p = &q;
  o << ",\n  \"in_context_find\": [";
  auto list = [&](const std::vector<ContextCandidate>& cs, bool in_context) {
    o << "[";
    for (size_t i = 0; i < cs.size(); ++i) {
      o << (i ? ", " : "") << "{\"algo\": " << quote(cs[i].algo)
        << ", \"ms\": " << number((in_context ? cs[i].context_s : cs[i].isolated_s) * 1e3);
      if (in_context) o << ", \"ms_ci\": " << json_ms_interval(cs[i].context_ci);
      o << "}";
    }
    o << "]";
  };
  for (size_t i = 0; p && i < p->context.pairs.size(); ++i) {
    const ContextPair& pr = p->context.pairs[i];
    o << (i ? "," : "") << "\n    {\"layer\": " << quote(pr.layer) << ", \"direction\": " << quote(to_string(pr.dir))
      << ", \"isolated\": ";
    list(pr.isolated, false);
    o << ", \"in_context\": ";
    list(pr.in_context, true);
    o << ", \"agree\": " << (pr.agree ? "true" : "false") << ", \"cost_ratio\": " << number(pr.cost_ratio)
      << ", \"cost_ratio_ci\": [" << number(pr.cost_ratio_ci.lo) << ", " << number(pr.cost_ratio_ci.hi) << "]}";
  }
  o << (p && !p->context.pairs.empty() ? "\n  ]" : "]");
  if (p)
    o << ",\n  \"in_context_cost\": {\"policy\": " << quote(p->policy) << ", \"steps\": " << p->context.steps
      << ", \"seconds\": " << number(p->context.seconds) << ", \"factor\": " << number(p->context.options.factor)
      << ", \"steps_per_candidate\": " << p->context.options.steps << "}";
}

}  // namespace convlab::train::report_detail
