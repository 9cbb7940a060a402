// The results files' JSON read into report.html's structs (report/html/view.hpp).
// A key added to train.json or layers.json reaches the page here: one line in
// the matching "optional keys" block, then the chart that draws it.
#include "report/html/view.hpp"

#include <algorithm>
#include <set>

#include "core/json_value.hpp"
#include "core/error.hpp"
#include "report/layers.hpp"

namespace convlab::train::html {

namespace {

using json::Value;

double number(const Value& v, const char* key, double otherwise = NAN) {
  const Value* x = v.get(key);
  return x && x->type == Value::Type::number ? x->num : otherwise;
}
std::string text(const Value& v, const char* key) {
  const Value* x = v.get(key);
  return x && x->type == Value::Type::string ? x->str : std::string();
}
int boolean(const Value& v, const char* key) {  // -1 absent or null
  const Value* x = v.get(key);
  return x && x->type == Value::Type::boolean ? int(x->b) : -1;
}
const std::vector<Value>& array(const Value& v, const char* key) {
  static const std::vector<Value> none;
  const Value* x = v.get(key);
  return x && x->type == Value::Type::array ? x->arr : none;
}
// [lo, hi] -> Interval; anything else -> {NaN, NaN}.
Interval interval(const Value& v, const char* key) {
  const auto& a = array(v, key);
  Interval i;
  if (a.size() == 2 && a[0].type == Value::Type::number && a[1].type == Value::Type::number) i = {a[0].num, a[1].num};
  return i;
}
std::vector<AlgoMs> algo_ms(const Value& v, const char* key) {
  std::vector<AlgoMs> out;
  for (const Value& e : array(v, key)) out.push_back({text(e, "algo"), number(e, "ms")});
  return out;
}

Value parse_object(const std::string& text_, const std::string& what) {
  std::string err;
  auto v = json::parse(text_, &err);
  if (!v) fail("report.html: " + what + " is not JSON (" + err + ")");
  if (!v->is_object()) fail("report.html: " + what + " is not a JSON object");
  return *v;
}

LayerView read_layer(const Value& l) {
  LayerView o;
  o.name = text(l, "name");
  o.kind = text(l, "kind");
  o.problem = text(l, "problem");
  o.fwd_ms = number(l, "fwd_s", 0) * 1e3;
  o.bwd_data_ms = number(l, "bwd_data_s", 0) * 1e3;
  o.bwd_filter_ms = number(l, "bwd_filter_s", 0) * 1e3;
  o.input_grad = boolean(l, "input_grad") != 0;
  if (const Value* algos = l.get("algos")) {
    const char* dirs[3] = {"fwd", "bwd-data", "bwd-filter"};
    for (int i = 0; i < 3; ++i)
      if (const Value* d = algos->get(dirs[i])) o.algo[i] = text(*d, "algo");
  }
  // Optional keys.
  o.ms_ci = interval(l, "ms_ci");
  o.bound_ms = number(l, "bound_ms");
  o.pct_of_bound = number(l, "pct_of_bound");
  return o;
}

PolicyView read_policy(const Value& p) {
  PolicyView o;
  o.name = text(p, "policy");
  o.ran = boolean(p, "ran") == 1;
  o.skipped = text(p, "skipped");
  if (!o.ran) return o;
  o.iter_ms = number(p, "iter_median_s") * 1e3;
  for (const Value& t : array(p, "iter_s"))
    if (t.type == Value::Type::number) o.iters_ms.push_back(t.num * 1e3);
  o.speedup = number(p, "speedup_vs_baseline");
  o.loss_ms = number(p, "loss_s", 0) * 1e3;
  o.update_ms = number(p, "update_s", 0) * 1e3;
  o.choose_s = number(p, "choose_seconds");
  o.workspace_bytes = number(p, "workspace_bytes");
  o.loss_rel_diff = number(p, "loss_rel_diff_vs_baseline");
  const auto& losses = array(p, "losses");
  if (!losses.empty() && losses.back().type == Value::Type::number) o.final_loss = losses.back().num;
  for (const Value& l : array(p, "layers")) o.layers.push_back(read_layer(l));
  // Optional keys: the interval-aware median and speedup win over the plain ones.
  o.iter_ms = number(p, "iter_ms_median", o.iter_ms);
  o.iter_ci = interval(p, "iter_ms_ci");
  o.speedup = number(p, "speedup", o.speedup);
  o.speedup_ci = interval(p, "speedup_ci");
  o.significant = boolean(p, "significant");
  o.verdict = text(p, "verdict");
  o.loss_agrees = boolean(p, "loss_agrees");
  o.x_limit = number(p, "x_limit");
  return o;
}

}  // namespace

const PolicyView* TrainView::base() const {
  for (const auto& p : policies)
    if (p.ran && p.name == baseline) return &p;
  for (const auto& p : policies)
    if (p.ran) return &p;
  return nullptr;
}

TrainView read_train(const std::string& json_text, const std::string& what) {
  const Value v = parse_object(json_text, what);
  TrainView o;
  o.net = text(v, "net");
  o.device = text(v, "device");
  o.data = text(v, "data");
  o.baseline = text(v, "baseline");
  o.batch = int(number(v, "batch", 0));
  o.iters = int(number(v, "iters", 0));
  o.warmup = int(number(v, "warmup", 0));
  o.threads = int(number(v, "threads", 0));
  o.first_layer_grad = boolean(v, "first_layer_grad") == 1;
  o.loss_rtol = number(v, "loss_rtol");
  o.wall_seconds = number(v, "wall_seconds");
  o.peak_rss_kb = number(v, "peak_rss_kb");
  for (const Value& p : array(v, "policies")) o.policies.push_back(read_policy(p));
  // Optional keys: the napkin limit and find in context.
  if (const Value* l = v.get("limit"); l && l->is_object()) {
    o.limit.present = true;
    o.limit.seconds = number(*l, "seconds");
    o.limit.conv_flops = number(*l, "conv_flops");
    o.limit.fc_flops = number(*l, "fc_flops");
    o.limit.other_bytes = number(*l, "other_bytes");
    o.limit.peak_gflops = number(*l, "peak_gflops");
    o.limit.bandwidth_gbs = number(*l, "bandwidth_gbs");
    o.limit.compute_bound_seconds = number(*l, "compute_bound_seconds");
    o.limit.memory_bound_seconds = number(*l, "memory_bound_seconds");
    o.limit.memory_bound_passes = number(*l, "memory_bound_passes");
    o.limit.passes = number(*l, "passes");
  }
  for (const Value& c : array(v, "in_context_find")) {
    InContextView ic;
    ic.layer = text(c, "layer");
    ic.dir = text(c, "direction");
    ic.isolated = algo_ms(c, "isolated");
    ic.in_context = algo_ms(c, "in_context");
    ic.agree = boolean(c, "agree");
    ic.tie = boolean(c, "tie");
    ic.cost_ratio = number(c, "cost_ratio");
    o.in_context.push_back(std::move(ic));
  }
  if (const Value* c = v.get("in_context_claim"); c && c->is_object()) {
    ContextClaimView& k = o.context_claim;
    k.present = true;
    k.pairs = int(number(*c, "pairs", 0));
    k.differ = int(number(*c, "differ", 0));
    k.ties = int(number(*c, "ties", 0));
    k.claimed_ms = number(*c, "claimed_ms");
    k.checked = boolean(*c, "checked");
    k.consistent = boolean(*c, "consistent");
    k.measured_ms = number(*c, "measured_ms");
    k.measured_ci = interval(*c, "measured_ms_ci");
    k.find_policy = text(*c, "find_policy");
  }
  o.margin = number(v, "margin");
  if (const Value* l = v.get("load"); l && l->is_object()) {
    o.load_disturbed = boolean(*l, "disturbed");
    o.load_why = text(*l, "why");
  }
  o.margin_pair = text(v, "margin_pair");
  return o;
}

std::vector<std::pair<std::string, std::string>> LayersView::cases() const {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const AlgoRow& r : rows)
    if (seen.insert({r.layer, r.dir}).second) out.push_back({r.layer, r.dir});
  return out;
}

LayersView layers_view(const Comparison& c) {
  LayersView o;
  o.device = std::string(to_string(c.device));
  o.fingerprint = c.fingerprint;
  o.network = c.network;
  o.batch = c.batch;
  o.bandwidth_gbs = c.bandwidth_gbs > 0 ? c.bandwidth_gbs : NAN;
  // Every thread count measured appears in rows; the page shows the most (what training ran with).
  for (const ComparisonRow& r : c.rows) o.threads = std::max(o.threads, r.threads);
  for (const PeakResult& p : c.peaks)
    if (p.threads == o.threads || !std::isfinite(o.peak_gflops)) {
      o.peak_gflops = p.gflops;
      o.isa = p.isa;
    }
  for (const ComparisonRow& r : c.rows) {
    if (r.threads != o.threads) continue;
    o.rows.push_back({r.layer, r.dir, r.algo, r.family, r.status, r.note, r.time * 1e3, r.gflops(), r.peak_fraction,
                      r.flops, r.bytes, r.find_choice, r.get_choice});
  }
  for (const VendorRow& v : c.vendor) {
    if (v.threads != o.threads) continue;
    o.vendor.push_back({v.layer, v.dir, v.status, v.choice.source, v.choice.algo, v.find_algo, v.get_algo,
                        v.choice.our_time * 1e3, v.find_time * 1e3, v.get_time * 1e3});
  }
  return o;
}

LayersView read_layers(const std::string& json_text, const std::string& what) {
  return layers_view(comparison_from_json(parse_object(json_text, what)));
}

std::string read_run_id(const std::string& json_text, const std::string& what) {
  return text(parse_object(json_text, what), "run_id");
}

}  // namespace convlab::train::html
