// The results files' JSON read into report.html's structs (report/html/view.hpp):
// each file read back into the type its writer wrote (report_from_json,
// comparison_from_json), then viewed.
#include "report/html/view.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/json_value.hpp"
#include "report/layers.hpp"
#include "report/report.hpp"
#include "report/report_sections.hpp"
#include "train/trainer.hpp"

namespace convlab::train::html {

namespace {

using json::Value;

Value parse_object(const std::string& text_, const std::string& what) {
  std::string err;
  auto v = json::parse(text_, &err);
  if (!v) fail("report.html: " + what + " is not JSON (" + err + ")");
  if (!v->is_object()) fail("report.html: " + what + " is not a JSON object");
  return *v;
}

// Seconds as the page's milliseconds; an interval with a missing end stays unknown.
double in_ms(double s) { return s * 1e3; }
Interval ms_interval(const stats::Interval& ci) { return {in_ms(ci.lo), in_ms(ci.hi)}; }

LayerView layer_view(const LayerResult& l) {
  LayerView o;
  o.name = l.name;
  o.kind = l.kind;
  o.problem = l.problem;
  o.fwd_ms = in_ms(l.median.fwd);
  o.bwd_data_ms = in_ms(l.median.bwd_data);
  o.bwd_filter_ms = in_ms(l.median.bwd_filter);
  o.input_grad = l.input_grad;
  for (int i = 0; i < 3; ++i) o.algo[i] = l.algo[i];
  for (int i = 0; i < 3; ++i) o.dir_ci[i] = ms_interval(l.ci[i]);
  o.bound_ms = in_ms(l.bound_seconds);
  o.pct_of_bound = report_detail::pct_of_bound(l);
  return o;
}

PolicyView policy_view(const TrainReport& r, const PolicyResult& p, const PolicyResult* base) {
  PolicyView o;
  o.name = p.policy;
  o.ran = p.ran;
  o.skipped = p.skipped;
  if (!o.ran) return o;
  o.iter_ms = in_ms(p.iter_median);
  for (double t : p.iter_seconds) o.iters_ms.push_back(in_ms(t));
  o.loss_ms = in_ms(p.loss_median_loss);
  o.update_ms = in_ms(p.loss_median_update);
  o.choose_s = p.choose_seconds;
  o.workspace_bytes = double(p.workspace_bytes);
  o.loss_rel_diff = base ? report_detail::loss_rel_diff(p, *base) : NAN;
  if (!p.losses.empty()) o.final_loss = p.losses.back();
  for (const LayerResult& l : p.layers) o.layers.push_back(layer_view(l));
  o.iter_ci = ms_interval(p.iter_ci);
  o.speedup = p.speedup;
  o.speedup_ci = {p.speedup_ci.lo, p.speedup_ci.hi};
  o.significant = p.significant;
  o.verdict = p.verdict;
  o.loss_agrees = p.loss_agrees;
  o.x_limit = report_detail::x_limit(r, p);
  return o;
}

LimitView limit_view(const StepLimit& l) {
  LimitView o;
  o.present = true;
  if (l.seconds <= 0) return o;  // skipped: the page says so
  o.seconds = l.seconds;
  o.conv_flops = l.conv_flops;
  o.fc_flops = l.fc_flops;
  o.other_bytes = l.other_bytes;
  o.peak_gflops = l.peak_gflops;
  o.bandwidth_gbs = l.bandwidth_gbs;
  o.compute_bound_seconds = l.compute_bound_seconds;
  o.memory_bound_seconds = l.memory_bound_seconds;
  o.memory_bound_passes = l.memory_bound_passes;
  o.passes = l.passes;
  return o;
}

std::vector<AlgoMs> algo_ms(const std::vector<ContextCandidate>& cs, bool in_context) {
  std::vector<AlgoMs> out;
  for (const ContextCandidate& c : cs) out.push_back({c.algo, in_ms(in_context ? c.context_s : c.isolated_s)});
  return out;
}

// Find in context: its pairs and its claim checked against the iterations.
void in_context_view(const TrainReport& r, TrainView& o) {
  const report_detail::ContextClaim c = report_detail::context_claim(r);
  if (!c.policy) return;
  for (const ContextPair& pr : c.policy->context.pairs)
    o.in_context.push_back({pr.layer, std::string(to_string(pr.dir)), algo_ms(pr.isolated, false),
                            algo_ms(pr.in_context, true), pr.agree, pr.tie, pr.cost_ratio});
  ContextClaimView& k = o.context_claim;
  k.present = true;
  k.pairs = c.pairs;
  k.differ = c.differ;
  k.ties = c.ties;
  k.claimed_ms = in_ms(c.claimed_s);
  k.checked = c.find != nullptr;
  if (!c.find) return;
  k.consistent = c.consistent;
  k.measured_ms = in_ms(c.measured_s);
  k.measured_ci = ms_interval(c.measured_ci);
  k.find_policy = c.find->policy;
}

}  // namespace

const PolicyView* TrainView::base() const {
  for (const auto& p : policies)
    if (p.ran && p.name == baseline) return &p;
  for (const auto& p : policies)
    if (p.ran) return &p;
  return nullptr;
}

TrainView train_view(const TrainReport& r) {
  TrainView o;
  const TrainConfig& c = r.config;
  o.net = c.net;
  o.device = r.device;
  o.data = r.data;
  const int bi = r.baseline();
  const PolicyResult* base = bi >= 0 ? &r.policies[size_t(bi)] : nullptr;
  if (base) o.baseline = base->policy;
  o.batch = c.batch;
  o.iters = c.iters;
  o.warmup = c.warmup;
  o.threads = c.threads;
  o.first_layer_grad = c.first_layer_grad;
  o.loss_rtol = r.drift.at(c.warmup + c.iters - 1);
  o.wall_seconds = r.wall_seconds;
  o.peak_rss_kb = double(r.peak_rss_kb);
  for (const PolicyResult& p : r.policies) o.policies.push_back(policy_view(r, p, base));
  o.limit = limit_view(r.limit);
  in_context_view(r, o);
  o.margin = r.margin;
  o.load_disturbed = r.load.disturbed;
  o.load_why = r.load.why;
  o.margin_pair = r.margin_pair;
  return o;
}

TrainView read_train(const std::string& json_text, const std::string& what) {
  const Value v = parse_object(json_text, what);
  TrainView o = train_view(report_from_json(v));
  // A file written before these sections existed: the page leaves them out.
  if (const Value* l = v.get("limit"); !l || !l->is_object()) o.limit = LimitView{};
  if (const Value* l = v.get("load"); !l || !l->is_object()) {
    o.load_disturbed = -1;
    o.load_why.clear();
  }
  // A policy whose workspace the file does not state (another driver's baselines): not known, not 0.
  const auto& pols = json::array_or_empty(v, "policies");
  for (size_t i = 0; i < pols.size() && i < o.policies.size(); ++i)
    if (!std::isfinite(json::number_or(pols[i], "workspace_bytes", NAN))) o.policies[i].workspace_bytes = NAN;
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
  return json::text_or(parse_object(json_text, what), "run_id");
}

}  // namespace convlab::train::html
