// train.json (report/report.hpp): the writer and its reader side by side. The
// sections of report_measurement.cpp and report_limit.cpp keep their own pair.
#include <cmath>
#include <sstream>

#include "core/json.hpp"
#include "core/json_value.hpp"
#include "report/report.hpp"
#include "report/report_sections.hpp"
#include "train/trainer.hpp"

namespace convlab::train {

using namespace report_detail;

namespace {

using json::number;
using json::quote;
using json::Value;

const char* flag(bool b) { return b ? "true" : "false"; }

void json_list(Out& o, const std::vector<double>& v) {
  for (size_t i = 0; i < v.size(); ++i) o << (i ? ", " : "") << number(v[i]);
}

// The run, the model of the loss drift, the margin and the data-parallel setup.
void json_header(Out& o, const TrainReport& r) {
  const TrainConfig& c = r.config;
  const int bi = r.baseline();
  o << "{\n  \"command\": \"train\",\n  \"run_id\": " << (r.run_id.empty() ? std::string("null") : quote(r.run_id))
    << ",\n  \"net\": " << quote(c.net) << ",\n  \"batch\": " << c.batch
    << ",\n  \"iters\": " << c.iters << ",\n  \"warmup\": " << c.warmup << ",\n  \"threads\": " << c.threads
    << ",\n  \"classes\": " << c.classes << ",\n  \"first_layer_grad\": " << flag(c.first_layer_grad)
    << ",\n  \"sgd\": {\"lr\": " << number(c.sgd.lr) << ", \"momentum\": " << number(c.sgd.momentum)
    << ", \"weight_decay\": " << number(c.sgd.weight_decay) << "},\n  \"device\": " << quote(r.device)
    << ",\n  \"data\": " << quote(r.data) << ",\n  \"params\": " << r.params << ",\n  \"peak_rss_kb\": " << r.peak_rss_kb
    << ",\n  \"wall_seconds\": " << number(r.wall_seconds)
    << ",\n  \"loss_rtol\": " << number(r.drift.at(c.warmup + c.iters - 1))
    << ",\n  \"drift\": {\"bound0\": " << number(r.drift.bound0) << ", \"reduction\": " << r.drift.reduction
    << ", \"growth\": " << number(r.drift.growth) << ", \"measured\": " << flag(r.drift.measured) << ", \"control\": [";
  json_list(o, r.drift.control);
  o << "]}"
    << ",\n  \"margin\": " << number(r.margin) << ",\n  \"margin_pair\": " << quote(r.margin_pair)
    << ",\n  \"baseline\": " << (bi >= 0 ? quote(r.policies[size_t(bi)].policy) : "null") << ",\n  \"ranks\": " << r.ranks;
  if (r.ranks > 1)
    o << ",\n  \"dist\": {\"transport\": " << quote(r.transport) << ", \"buckets\": " << quote(r.buckets)
      << ", \"grad_bytes\": " << number(r.grad_bytes) << ", \"overlap\": " << quote(r.overlap_why)
      << ", \"rank_threads\": " << r.rank_threads
      << ", \"exchange_bytes_per_s\": " << number(r.exchange_bytes_per_s) << "}";
}

void json_layer(Out& o, const TrainReport& r, const LayerResult& l) {
  o << "\n       {\"name\": " << quote(l.name) << ", \"kind\": " << quote(l.kind)
    << ", \"fwd_s\": " << number(l.median.fwd) << ", \"bwd_data_s\": " << number(l.median.bwd_data)
    << ", \"bwd_filter_s\": " << number(l.median.bwd_filter) << ", \"ms_ci\": {";
  for (Direction d : kAllDirections)
    o << (direction_index(d) ? ", " : "") << quote(to_string(d)) << ": " << json_ms_interval(l.ci[direction_index(d)]);
  o << "}, \"bound_ms\": " << number(l.bound_seconds * 1e3) << ", \"pct_of_bound\": " << number(pct_of_bound(l));
  if (r.ranks > 1)
    o << ", \"comm_ms\": " << number(l.comm_seconds * 1e3) << ", \"comm_exposed_ms\": " << number(l.comm_exposed_seconds * 1e3);
  if (l.kind == "conv") {
    // The fused bias (+ ReLU) epilogue's medians: parts of fwd_s and bwd_filter_s.
    if (l.epilogue_timed)
      o << ", \"epilogue_s\": {\"fwd\": " << number(l.median.epilogue_fwd)
        << ", \"bwd\": " << number(l.median.epilogue_bwd) << "}";
    o << ", \"problem\": " << quote(l.problem) << ", \"input_grad\": " << flag(l.input_grad) << ", \"algos\": {";
    for (Direction d : kAllDirections) {
      const int i = direction_index(d);
      o << (i ? ", " : "") << quote(to_string(d)) << ": {\"algo\": " << quote(l.algo[i]) << ", \"why\": " << quote(l.why[i])
        << ", \"tuning_s\": " << number(l.tuning_seconds[i]) << "}";
    }
    o << "}";
  }
  o << "}";
}

void json_policy(Out& o, const TrainReport& r, const PolicyResult& p, const PolicyResult* base) {
  o << "\n    {\"policy\": " << quote(p.policy) << ", \"ran\": " << flag(p.ran);
  if (!p.ran) {
    o << ", \"skipped\": " << quote(p.skipped);
    if (p.stopped) {
      o << ", \"stopped\": true, \"losses\": [";
      json_list(o, p.losses);
      o << "]";
    }
    o << "}";
    return;
  }
  o << ", \"choose_seconds\": " << number(p.choose_seconds) << ", \"workspace_bytes\": " << p.workspace_bytes
    << ", \"iter_median_s\": " << number(p.iter_median)
    << ", \"speedup_vs_baseline\": " << number(base ? base->iter_median / p.iter_median : NAN)
    << ", \"iter_ms_median\": " << number(p.iter_median * 1e3) << ", \"iter_ms_ci\": " << json_ms_interval(p.iter_ci)
    << ", \"speedup\": " << number(p.speedup) << ", \"speedup_ci\": [" << number(p.speedup_ci.lo) << ", "
    << number(p.speedup_ci.hi) << "], \"significant\": " << flag(p.significant) << ", \"verdict\": " << quote(p.verdict)
    << ", \"memory_bytes\": " << p.memory_bytes << ", \"x_limit\": " << number(x_limit(r, p))
    << ", \"loss_rel_diff_vs_baseline\": " << number(base ? loss_rel_diff(p, *base) : NAN)
    << ", \"loss_agrees\": " << flag(p.loss_agrees) << ", \"loss_exceeds_at\": " << p.loss_exceeds_at
    << ", \"first_layer_dx_s\": " << number(p.first_layer_dx_seconds) << ", \"loss_s\": " << number(p.loss_median_loss)
    << ", \"update_s\": " << number(p.loss_median_update);
  if (r.ranks > 1)
    o << ", \"comm_ms\": " << number(p.comm_median * 1e3) << ", \"comm_exposed_ms\": " << number(p.comm_exposed_median * 1e3);
  o << ",\n     \"iter_s\": [";
  json_list(o, p.iter_seconds);
  o << "], \"losses\": [";
  json_list(o, p.losses);
  o << "],\n     \"layers\": [";
  for (size_t li = 0; li < p.layers.size(); ++li) {
    o << (li ? "," : "");
    json_layer(o, r, p.layers[li]);
  }
  o << "]}";
}

// Readers: every key optional, a missing one at the type's default.
double num(const Value& v, const char* key, double otherwise = 0) { return json::number_or(v, key, otherwise); }
bool yes(const Value& v, const char* key, bool otherwise = false) { return json::bool_or(v, key, otherwise) == 1; }

std::vector<double> numbers(const Value& v, const char* key) {
  std::vector<double> out;
  for (const Value& x : json::array_or_empty(v, key)) out.push_back(x.type == Value::Type::number ? x.num : NAN);
  return out;
}

void header_from_json(const Value& v, TrainReport& r) {
  TrainConfig& c = r.config;
  r.run_id = json::text_or(v, "run_id");
  c.net = json::text_or(v, "net");
  c.batch = int(num(v, "batch"));
  c.iters = int(num(v, "iters"));
  c.warmup = int(num(v, "warmup"));
  c.threads = int(num(v, "threads"));
  c.classes = int(num(v, "classes"));
  c.first_layer_grad = yes(v, "first_layer_grad");
  if (const Value* s = v.get("sgd")) {
    c.sgd.lr = float(num(*s, "lr", c.sgd.lr));
    c.sgd.momentum = float(num(*s, "momentum", c.sgd.momentum));
    c.sgd.weight_decay = float(num(*s, "weight_decay", c.sgd.weight_decay));
  }
  r.device = json::text_or(v, "device");
  r.data = json::text_or(v, "data");
  r.params = int64_t(num(v, "params"));
  r.peak_rss_kb = long(num(v, "peak_rss_kb"));
  r.wall_seconds = num(v, "wall_seconds", NAN);
  if (const Value* d = v.get("drift")) {
    r.drift.bound0 = num(*d, "bound0");
    r.drift.reduction = int(num(*d, "reduction"));
    r.drift.growth = num(*d, "growth", 1);
    r.drift.measured = yes(*d, "measured");
    r.drift.control = numbers(*d, "control");
  }
  r.baseline_policy = json::text_or(v, "baseline");
  r.margin = num(v, "margin", NAN);
  r.margin_pair = json::text_or(v, "margin_pair");
  r.ranks = int(num(v, "ranks", 1));
  if (const Value* d = v.get("dist")) {
    r.transport = json::text_or(*d, "transport");
    r.buckets = json::text_or(*d, "buckets");
    r.grad_bytes = num(*d, "grad_bytes", NAN);
    r.overlap_why = json::text_or(*d, "overlap");
    r.rank_threads = int(num(*d, "rank_threads"));
    r.exchange_bytes_per_s = num(*d, "exchange_bytes_per_s", NAN);
  }
}

LayerResult layer_from_json(const Value& v) {
  LayerResult l;
  l.name = json::text_or(v, "name");
  l.kind = json::text_or(v, "kind");
  l.median = {num(v, "fwd_s"), num(v, "bwd_data_s"), num(v, "bwd_filter_s")};
  if (const Value* e = v.get("epilogue_s"); e && e->is_object()) {
    l.epilogue_timed = true;
    l.median.epilogue_fwd = num(*e, "fwd");
    l.median.epilogue_bwd = num(*e, "bwd");
  }
  const Value* ci = v.get("ms_ci");
  for (Direction d : kAllDirections)
    l.ci[direction_index(d)] = interval_from_json(ci ? ci->get(std::string(to_string(d))) : nullptr, 1e3);
  // The bound whose share of the layer's time is the one written.
  const double pct = num(v, "pct_of_bound", NAN);
  for (double b : json::unscaled(num(v, "bound_ms"), 1e3)) {
    l.bound_seconds = b;
    if (json::same_number(pct_of_bound(l), pct)) break;
  }
  l.comm_seconds = json::unscale(num(v, "comm_ms"), 1e3);
  l.comm_exposed_seconds = json::unscale(num(v, "comm_exposed_ms"), 1e3);
  l.problem = json::text_or(v, "problem");
  l.input_grad = yes(v, "input_grad", true);
  if (const Value* algos = v.get("algos"))
    for (Direction d : kAllDirections)
      if (const Value* a = algos->get(std::string(to_string(d)))) {
        const int i = direction_index(d);
        l.algo[i] = json::text_or(*a, "algo");
        l.why[i] = json::text_or(*a, "why");
        l.tuning_seconds[i] = num(*a, "tuning_s");
      }
  return l;
}

PolicyResult policy_from_json(const Value& v) {
  PolicyResult p;
  p.policy = json::text_or(v, "policy");
  p.ran = yes(v, "ran");
  p.skipped = json::text_or(v, "skipped");
  p.stopped = yes(v, "stopped");
  p.losses = numbers(v, "losses");
  if (!p.ran) return p;
  p.choose_seconds = num(v, "choose_seconds");
  p.workspace_bytes = size_t(num(v, "workspace_bytes"));
  p.iter_median = num(v, "iter_median_s");
  p.iter_ci = interval_from_json(v.get("iter_ms_ci"), 1e3);
  p.speedup = num(v, "speedup", NAN);
  p.speedup_ci = interval_from_json(v.get("speedup_ci"), 1);
  p.significant = yes(v, "significant");
  p.verdict = json::text_or(v, "verdict");
  p.memory_bytes = size_t(num(v, "memory_bytes"));
  p.loss_agrees = yes(v, "loss_agrees", true);
  p.loss_exceeds_at = int(num(v, "loss_exceeds_at", -1));
  p.first_layer_dx_seconds = num(v, "first_layer_dx_s");
  p.loss_median_loss = num(v, "loss_s");
  p.loss_median_update = num(v, "update_s");
  p.comm_median = json::unscale(num(v, "comm_ms"), 1e3);
  p.comm_exposed_median = json::unscale(num(v, "comm_exposed_ms"), 1e3);
  p.iter_seconds = numbers(v, "iter_s");
  for (const Value& l : json::array_or_empty(v, "layers")) p.layers.push_back(layer_from_json(l));
  return p;
}

}  // namespace

std::string report_json(const TrainReport& r) {
  Out o;
  json_header(o, r);
  const int bi = r.baseline();
  const PolicyResult* base = bi >= 0 ? &r.policies[size_t(bi)] : nullptr;
  o << ",\n  \"policies\": [";
  for (size_t pi = 0; pi < r.policies.size(); ++pi) {
    o << (pi ? "," : "");
    json_policy(o, r, r.policies[pi], base);
  }
  o << "\n  ]";
  json_measurement(o, r);
  json_limit(o, r);
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

TrainReport report_from_json(const json::Value& v) {
  TrainReport r;
  header_from_json(v, r);
  for (const Value& p : json::array_or_empty(v, "policies")) r.policies.push_back(policy_from_json(p));
  measurement_from_json(v, r);
  limit_from_json(v, r);
  return r;
}

}  // namespace convlab::train
