// The training report's measurement sections (report/report_sections.hpp): how
// the rounds ran, the intervals, the measurement checks, the user's expectations
// and the in-context find.
#include <algorithm>
#include <cmath>

#include "core/json.hpp"
#include "core/json_value.hpp"
#include "core/problem.hpp"
#include "report/report_sections.hpp"
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

stats::Interval interval_from_json(const json::Value* v, double scale) {
  auto end = [&](size_t i) {
    const json::Value& x = v->arr[i];
    return json::unscale(x.type == json::Value::Type::number ? x.num : NAN, scale);
  };
  if (!v || v->type != json::Value::Type::array || v->arr.size() != 2) return {NAN, NAN};
  return {end(0), end(1)};
}

std::string speedup_cell(const PolicyResult& p, bool is_baseline, double margin) {
  if (is_baseline) return "1.00x (baseline)";
  return ratio_text(p.speedup, p.speedup_ci) + " " + p.verdict +
         (p.verdict == "same" ? " (within " + fmt("%.1f %%", 100 * margin) + ")" : "");
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
  o << "- " << (r.load.disturbed ? "**" : "") << load_text(r.load) << (r.load.disturbed ? "**" : "")
    << " (from before the choosing to after the timed rounds)\n";
  o << "- every time is a median over the timed rounds with a 95 % percentile-bootstrap interval (2000 resamples, "
       "fixed seed); a speedup or a difference resamples whole rounds, so both policies' iterations of a round stay "
       "together; a speedup whose interval holds 1.0 is \"not significant\". With "
    << c.iters << " rounds an interval can only move between order statistics: it is coarse.\n\n";
}

void md_checks(Out& o, const TrainReport& r) {
  o << "\n### Measurement checks\n\n";
  if (!r.margin_pair.empty()) {
    const PolicyResult* same = find_policy(r, r.margin_pair);
    o << "- equivalence margin: " << r.margin_pair << " ran every layer and direction with the baseline's algorithms "
      << "(the same code); its speedup " << ratio_text(same->speedup, same->speedup_ci) << " puts the margin at "
      << fmt("%.1f %%", 100 * r.margin) << ": a speedup is called faster or slower only when its interval lies beyond "
      << "it, same when it lies inside it\n";
  } else {
    o << "- equivalence margin: none measured (no policy ran exactly the baseline's algorithms); a speedup is called "
         "faster or slower when its interval excludes 1.0\n";
  }
  {
    const DriftBound& d = r.drift;
    o << "- expected fp32 drift of the loss: " << fmt("%.1e", d.bound0) << " relative at iteration 0 (the longest "
      << "convolution reduction, K = " << d.reduction << ", times FLT_EPSILON: two correct summation orders differ by "
      << "less), growing " << fmt("%.1f", d.growth) << "x per step";
    if (d.measured) {
      o << " (measured: the baseline again from weights moved by 2^-22 relative drifted";
      for (size_t t = 0; t < d.control.size(); ++t) o << (t ? ", " : " ") << fmt("%.1e", d.control[t]);
      o << " from its loss; the growth is the fastest average from iteration 0)";
    } else {
      o << " (assumed: this run could not measure it)";
    }
    o << "; a policy's loss outside it at any iteration means an algorithm computes something else\n";
  }
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
  if (n >= 2)
    o << "- non-convolution layers (+ loss, update: the same code in every policy): " << ms(lo) << " ms (" << lo_p
      << ") to " << ms(hi) << " ms (" << hi_p << "), " << fmt("%.1f %%", 100 * (hi / lo - 1))
      << " apart: how much the machine moved between policies\n";
  if (r.expectations.empty()) return;
  o << "\n### Expectations (--expect)\n\n| expectation | ratio [95 %] | verdict |\n|---|---:|---|\n";
  for (const ExpectationResult& e : r.expectations)
    o << "| `" << e.expect.num << "/" << e.expect.den << (e.expect.at_least ? ">=" : "<=") << fmt("%g", e.expect.bound)
      << "` | " << (e.ran ? fmt("%.3f", e.ratio) + " [" + fmt("%.3f", e.ci.lo) + ", " + fmt("%.3f", e.ci.hi) + "]" : "")
      << " | " << e.verdict << " |\n";
  o << "\nmet: the whole interval satisfies the bound; missed: none of it does; unresolved: the interval holds the "
       "bound.\n";
}

ContextClaim context_claim(const TrainReport& r) {
  ContextClaim c;
  for (auto& q : r.policies)
    if (q.ran && q.has_context && !c.policy) c.policy = &q;
  if (!c.policy) return c;
  // find-context[,constraints] is checked against find[,the same constraints].
  std::string find_name = c.policy->policy;
  if (find_name.rfind("find-context", 0) == 0) find_name = "find" + find_name.substr(std::string("find-context").size());
  c.find = find_policy(r, find_name);
  for (const ContextPair& pr : c.policy->context.pairs) {
    ++c.pairs;
    if (pr.tie) ++c.ties;
    if (pr.agree) continue;
    ++c.differ;
    c.claimed_s += pr.isolated.front().context_s - pr.in_context.front().context_s;
  }
  if (c.find) {
    c.measured_s = c.find->iter_median - c.policy->iter_median;
    c.measured_ci = stats::median_diff_ci(c.find->iter_seconds, c.policy->iter_seconds);
    c.consistent = c.measured_ci.contains(c.claimed_s);
  }
  return c;
}

void md_in_context(Out& o, const TrainReport& r) {
  const ContextClaim claim = context_claim(r);
  if (!claim.policy) return;
  const PolicyResult* p = claim.policy;
  const ContextFindResult& cf = p->context;
  o << "\n## In-context find (`" << p->policy << "`)\n\n";
  o << "Per (layer, direction), find's candidates within " << fmt("%.2f", cf.options.factor)
    << "x of its isolated best, each timed inside training steps (only that choice swapped, every other layer at the "
       "isolated choice, one workspace reserved for all of them; "
    << cf.options.steps << " timed steps per candidate, each the second of two in a row with it (an algorithm's "
       "first run after a swap pays for the swap), candidates interleaved); ms = that "
       "layer-direction's median inside the step [95 %]. Cost: "
    << cf.steps << " training steps, " << fmt("%.1f", cf.seconds)
    << " s, on top of the isolated find. cost = the isolated winner's in-context time / the in-context winner's "
       "[95 %, paired over the rounds]; the rankings differ only when that interval lies above 1 (tie: the order "
       "swapped inside the noise, the isolated winner kept).\n\n";
  o << "| layer | dir | isolated ranking (ms alone) | in-context ranking (ms in the step) | agree | cost |\n";
  o << "|---|---|---|---|---|---:|\n";
  for (const ContextPair& pr : cf.pairs) {
    o << "| " << pr.layer << " | " << to_string(pr.dir) << " | ";
    for (size_t i = 0; i < pr.isolated.size(); ++i)
      o << (i ? ", " : "") << pr.isolated[i].algo << " " << ms(pr.isolated[i].isolated_s);
    o << " | ";
    for (size_t i = 0; i < pr.in_context.size(); ++i)
      o << (i ? ", " : "") << pr.in_context[i].algo << " " << ms(pr.in_context[i].context_s) << " "
        << ms_interval(pr.in_context[i].context_ci);
    o << " | " << (pr.tie ? "tie" : pr.agree ? "yes" : "no") << " | "
      << (pr.cost_ratio_ci.lo == 1 && pr.cost_ratio_ci.hi == 1 ? std::string("1.00x")
                                                                : ratio_text(pr.cost_ratio, pr.cost_ratio_ci))
      << " |\n";
  }
  o << "\n";
  if (claim.differ == 0) {
    o << "No pair ranks differently inside the step beyond the noise";
    if (claim.ties) o << " (" << claim.ties << " of " << claim.pairs << " swap their order inside their intervals)";
    o << ": the in-context find keeps every isolated choice";
    if (claim.find)
      o << ", and its iterations run " << ms(claim.measured_s) << " " << ms_interval(claim.measured_ci)
        << " ms faster than find's (identical choices: the difference is the run's noise)";
    o << ".\n";
    return;
  }
  o << claim.differ << " of " << claim.pairs << " pairs rank differently inside the step";
  if (claim.ties) o << " (" << claim.ties << " more swap their order inside their intervals: ties)";
  o << "; by the per-layer times inside the step the isolated winners would cost " << ms(claim.claimed_s)
    << " ms per iteration more than the in-context winners. ";
  if (!claim.find) {
    o << "Not checked against whole iterations: `find` did not run in this comparison, so this is the per-layer "
         "estimate only.\n";
  } else if (claim.consistent) {
    o << "Checked: find-context's iterations run " << ms(claim.measured_s) << " " << ms_interval(claim.measured_ci)
      << " ms faster than find's, consistent with that estimate.\n";
  } else {
    o << "**Inconclusive:** find-context's own iterations run " << ms(claim.measured_s) << " "
      << ms_interval(claim.measured_ci)
      << " ms faster than find's, an interval that does not hold the per-layer estimate; the whole iterations do not "
         "bear the in-context ranking out, so read it as unconfirmed.\n";
  }
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
  o << ",\n  \"load\": " << load_json(r.load);
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
    o << ", \"agree\": " << (pr.agree ? "true" : "false") << ", \"tie\": " << (pr.tie ? "true" : "false")
      << ", \"cost_ratio\": " << number(pr.cost_ratio)
      << ", \"cost_ratio_ci\": [" << number(pr.cost_ratio_ci.lo) << ", " << number(pr.cost_ratio_ci.hi) << "]}";
  }
  o << (p && !p->context.pairs.empty() ? "\n  ]" : "]");
  if (p)
    o << ",\n  \"in_context_cost\": {\"policy\": " << quote(p->policy) << ", \"steps\": " << p->context.steps
      << ", \"seconds\": " << number(p->context.seconds) << ", \"factor\": " << number(p->context.options.factor)
      << ", \"steps_per_candidate\": " << p->context.options.steps << "}";
  o << ",\n  \"expectations\": [";
  for (size_t i = 0; i < r.expectations.size(); ++i) {
    const ExpectationResult& e = r.expectations[i];
    o << (i ? ", " : "") << "{\"expect\": " << quote(e.expect.text) << ", \"num\": " << quote(e.expect.num)
      << ", \"den\": " << quote(e.expect.den) << ", \"op\": " << quote(e.expect.at_least ? ">=" : "<=")
      << ", \"bound\": " << number(e.expect.bound) << ", \"verdict\": " << quote(e.verdict);
    if (e.ran) o << ", \"ratio\": " << number(e.ratio) << ", \"ratio_ci\": [" << number(e.ci.lo) << ", " << number(e.ci.hi) << "]";
    o << "}";
  }
  o << "]";
  if (p) {
    const ContextClaim c = context_claim(r);
    o << ",\n  \"in_context_claim\": {\"pairs\": " << c.pairs << ", \"differ\": " << c.differ << ", \"ties\": " << c.ties
      << ", \"claimed_ms\": " << number(c.claimed_s * 1e3) << ", \"checked\": " << (c.find ? "true" : "false");
    if (c.find)
      o << ", \"find_policy\": " << quote(c.find->policy) << ", \"measured_ms\": " << number(c.measured_s * 1e3)
        << ", \"measured_ms_ci\": " << json_ms_interval(c.measured_ci) << ", \"consistent\": "
        << (c.consistent ? "true" : "false");
    o << "}";
  }
}

namespace {

using json::Value;

int policy_index(const TrainReport& r, const std::string& name) {
  for (size_t i = 0; i < r.policies.size(); ++i)
    if (r.policies[i].policy == name) return int(i);
  return -1;
}

std::vector<std::vector<int>> orders_from_json(const TrainReport& r, const Value& v, const char* key) {
  std::vector<std::vector<int>> out;
  for (const Value& round : json::array_or_empty(v, key)) {
    out.emplace_back();
    for (const Value& name : round.arr) out.back().push_back(policy_index(r, name.str));
  }
  return out;
}

std::vector<ContextCandidate> candidates_from_json(const Value& v, const char* key, bool in_context) {
  std::vector<ContextCandidate> out;
  for (const Value& c : json::array_or_empty(v, key)) {
    ContextCandidate k;
    k.algo = json::text_or(c, "algo");
    (in_context ? k.context_s : k.isolated_s) = json::unscale(json::number_or(c, "ms", NAN), 1e3);
    if (in_context) k.context_ci = interval_from_json(c.get("ms_ci"), 1e3);
    out.push_back(std::move(k));
  }
  return out;
}

ContextPair pair_from_json(const Value& v) {
  ContextPair pr;
  pr.layer = json::text_or(v, "layer");
  pr.dir = parse_direction(json::text_or(v, "direction", "fwd"));
  pr.isolated = candidates_from_json(v, "isolated", false);
  pr.in_context = candidates_from_json(v, "in_context", true);
  // Each list holds one of a candidate's two times; the other list has the other.
  for (ContextCandidate& a : pr.isolated)
    for (ContextCandidate& b : pr.in_context)
      if (a.algo == b.algo) {
        a.context_s = b.context_s;
        a.context_ci = b.context_ci;
        b.isolated_s = a.isolated_s;
      }
  pr.agree = json::bool_or(v, "agree", 1) == 1;
  pr.tie = json::bool_or(v, "tie", 0) == 1;
  pr.cost_ratio = json::number_or(v, "cost_ratio", NAN);
  if (v.get("cost_ratio_ci")) pr.cost_ratio_ci = interval_from_json(v.get("cost_ratio_ci"), 1);
  return pr;
}

}  // namespace

void measurement_from_json(const json::Value& v, TrainReport& r) {
  if (const Value* l = v.get("load"); l && l->is_object()) r.load = load_from_json(*l);
  r.order = orders_from_json(r, v, "order");
  r.warmup_order = orders_from_json(r, v, "warmup_order");
  MemoryPlan& m = r.memory;
  m.per_net.assign(r.policies.size(), 0);
  if (const Value* mem = v.get("memory"); mem && mem->is_object()) {
    if (const Value* per = mem->get("per_net"); per && per->is_object())
      for (const auto& [name, bytes] : per->obj)
        if (int i = policy_index(r, name); i >= 0 && bytes.type == Value::Type::number) m.per_net[size_t(i)] = size_t(bytes.num);
    m.host_total = size_t(json::number_or(*mem, "host_total", 0));
    m.host_available = size_t(json::number_or(*mem, "host_available", 0));
    m.host_source = json::text_or(*mem, "host_source");
    m.device_total = size_t(json::number_or(*mem, "device_total", 0));
    m.device_available = size_t(json::number_or(*mem, "device_available", 0));
  }
  if (const Value* cost = v.get("in_context_cost"); cost && cost->is_object())
    if (int i = policy_index(r, json::text_or(*cost, "policy")); i >= 0) {
      PolicyResult& p = r.policies[size_t(i)];
      p.has_context = true;
      p.context.steps = int(json::number_or(*cost, "steps", 0));
      p.context.seconds = json::number_or(*cost, "seconds", 0);
      p.context.options.factor = json::number_or(*cost, "factor", p.context.options.factor);
      p.context.options.steps = int(json::number_or(*cost, "steps_per_candidate", p.context.options.steps));
      for (const Value& pr : json::array_or_empty(v, "in_context_find")) p.context.pairs.push_back(pair_from_json(pr));
    }
  for (const Value& e : json::array_or_empty(v, "expectations")) {
    ExpectationResult x;
    x.expect.text = json::text_or(e, "expect");
    x.expect.num = json::text_or(e, "num");
    x.expect.den = json::text_or(e, "den");
    x.expect.at_least = json::text_or(e, "op") != "<=";
    x.expect.bound = json::number_or(e, "bound", NAN);
    x.verdict = json::text_or(e, "verdict");
    x.ran = e.get("ratio") != nullptr;
    x.ratio = json::number_or(e, "ratio", NAN);
    if (x.ran) x.ci = interval_from_json(e.get("ratio_ci"), 1);
    r.expectations.push_back(std::move(x));
  }
}

}  // namespace convlab::train::report_detail
