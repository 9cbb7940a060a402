// The training report: Markdown for people and CSV for the notebooks
// (report/report.hpp; the JSON: report/train_json.cpp).
#include "report/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/json.hpp"
#include "report/report_sections.hpp"
#include "train/trainer.hpp"

namespace convlab::train {

using namespace report_detail;

namespace report_detail {

// Relative difference of the final losses.
double loss_rel_diff(const PolicyResult& p, const PolicyResult& base) {
  const double a = p.losses.back(), b = base.losses.back();
  return std::fabs(a - b) / std::max(std::fabs(b), 1e-12);
}

}  // namespace report_detail

namespace {

double comp(const LayerTime& t, Direction d) {
  return d == Direction::fwd ? t.fwd : d == Direction::bwd_data ? t.bwd_data : t.bwd_filter;
}

// The skipped first-layer input gradient has no bwd-data row of its own.
bool skipped(const LayerResult& l, Direction d) { return d == Direction::bwd_data && !l.input_grad; }


// "yes", or "NO (iteration 1: 3.2e-02 > 2.7e-03)".
std::string agrees_cell(const TrainReport& r, const PolicyResult& p) {
  if (p.loss_agrees) return "yes";
  const int t = p.loss_exceeds_at;
  return "NO (iteration " + std::to_string(t) + ": " + fmt("%.1e", p.loss_rel_diffs[size_t(t)]) + " > " +
         fmt("%.1e", r.drift.at(t)) + ")";
}

}  // namespace

namespace {

// The run's setup, one bullet per line.
void md_setup(Out& o, const TrainReport& r) {
  const TrainConfig& c = r.config;
  o << "# convlab train " << c.net << "\n\n";
  o << "- batch " << c.batch << ", " << c.iters << " timed rounds after " << c.warmup << " warm-up, threads "
    << (c.threads ? std::to_string(c.threads) : std::string("all")) << ", SGD lr " << c.sgd.lr << " momentum "
    << c.sgd.momentum << " weight decay " << c.sgd.weight_decay << "\n";
  o << "- device: " << r.device << "\n- data: " << r.data << "\n- parameters: " << r.params << " ("
    << fmt("%.1f", double(r.params) * 4 / 1048576) << " MiB fp32)\n";
  o << "- first layer's input gradient (dL/dimage): " << (c.first_layer_grad ? "computed (--first-layer-grad)" : "skipped")
    << "\n- peak RSS: " << fmt("%.1f", double(r.peak_rss_kb) / 1024) << " MiB; wall time " << fmt("%.1f", r.wall_seconds)
    << " s\n";
  if (r.ranks > 1)
    o << "- data-parallel: " << r.ranks << " ranks, batch " << c.batch / r.ranks << " each (" << r.rank_threads
      << " threads per rank); " << r.transport << "; " << r.buckets << "; " << r.overlap_why << "; exchange bandwidth ranks 0-1 "
      << fmt("%.2f", r.exchange_bytes_per_s / 1e9) << " GB/s; times are rank 0's, iterations the slowest rank's\n";
  o << "\n";
}

// Iteration time, speedup and final loss per policy; the measurement checks; the loss per iteration.
void md_iterations(Out& o, const TrainReport& r, const PolicyResult& base) {
  const TrainConfig& c = r.config;
  o << "## Iteration time per policy\n\n";
  o << "median over the timed rounds [95 % interval]; speedup = " << base.policy
    << "'s median / the policy's median [95 % interval over paired rounds]; other = every non-convolution layer, the "
       "loss and the update (the same code in every policy); loss = after the last iteration; agrees = at every "
       "iteration the loss stayed within the expected fp32 drift from "
    << base.policy << "'s (" << fmt("%.1e", r.drift.bound0) << " at iteration 0, growing " << fmt("%.1f", r.drift.growth)
    << "x per step: " << fmt("%.1e", r.drift.at(c.warmup + c.iters - 1)) << " by the last; see Measurement checks)\n\n";
  o << "| policy | iteration ms | speedup | other ms | final loss | loss rel. diff | agrees | choosing s | workspace MiB | "
       "net MiB |\n";
  o << "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|\n";
  for (auto& p : r.policies) {
    if (!p.ran) {
      o << "| " << p.policy << " | " << (p.stopped ? "stopped: " : "skipped: ") << p.skipped << " | | | | | | | | |\n";
      continue;
    }
    const double rd = loss_rel_diff(p, base);
    const std::vector<double> other = other_seconds(p);
    o << "| " << p.policy << " | " << ms(p.iter_median) << " " << ms_interval(p.iter_ci) << " | "
      << speedup_cell(p, &p == &base, r.margin) << " | " << ms(stats::median(other)) << " " << ms_interval(stats::median_ci(other))
      << " | " << fmt("%.6f", p.losses.back()) << " | " << fmt("%.1e", rd) << " | " << agrees_cell(r, p)
      << " | " << fmt("%.3f", p.choose_seconds) << " | " << fmt("%.1f", double(p.workspace_bytes) / 1048576) << " | "
      << fmt("%.0f", double(p.memory_bytes) / 1048576) << " |\n";
  }
  md_checks(o, r);
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
}

// What find spent choosing, and after how many iterations it pays for itself against default and get.
void md_tuning_cost(Out& o, const TrainReport& r) {
  o << "\n## Tuning cost and break-even\n\n";
  const PolicyResult* find = find_policy(r, "find");
  const PolicyResult* get = find_policy(r, "get");
  const PolicyResult* def = find_policy(r, "default");
  if (!find) {
    o << "`find` did not run";
    for (auto& p : r.policies)
      if (p.policy == "find" && !p.ran) o << " (" << p.skipped << ")";
    o << ": no tuning cost to report.\n";
    return;
  }
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

// The rest of a header row after two leading columns: one column per policy that ran, then the rule.
void md_policy_columns(Out& o, const TrainReport& r) {
  for (auto& p : r.policies)
    if (p.ran) o << " " << p.policy << " |";
  o << "\n|---|---|";
  for (auto& p : r.policies)
    if (p.ran) o << "---|";
  o << "\n";
}

// The algorithm each policy chose per conv layer and direction.
void md_choices(Out& o, const TrainReport& r, const PolicyResult& base) {
  o << "\n## Algorithm chosen per layer and direction\n\n| layer | dir |";
  md_policy_columns(o, r);
  for (size_t li = 0; li < base.layers.size(); ++li) {
    if (base.layers[li].kind != "conv") continue;
    for (Direction d : kAllDirections) {
      o << "| " << base.layers[li].name << " | " << to_string(d) << " |";
      for (auto& p : r.policies)
        if (p.ran) {
          const LayerResult& l = p.layers[li];
          o << " " << l.algo[direction_index(d)] << (skipped(l, d) ? " (skipped)" : "") << " |";
        }
      o << "\n";
    }
  }
}

// Median time per layer and policy, then the loss, the update and the iteration.
void md_layer_times(Out& o, const TrainReport& r, const PolicyResult& base) {
  o << "\n## Per-layer time (ms, medians [95 % interval])\n\nconv layers: fwd / bwd-data / bwd-filter (incl. bias); other "
       "layers: fwd / backward\n\n| layer | kind |";
  md_policy_columns(o, r);
  for (size_t li = 0; li < base.layers.size(); ++li) {
    o << "| " << base.layers[li].name << " | " << base.layers[li].kind << " |";
    for (auto& p : r.policies) {
      if (!p.ran) continue;
      const LayerResult& l = p.layers[li];
      const int parts = l.kind == "conv" ? 3 : 2;
      for (int d = 0; d < parts; ++d)
        o << (d ? " / " : " ") << ms(comp(l.median, kAllDirections[d])) << " " << ms_interval(l.ci[d]);
      o << " |";
    }
    o << "\n";
  }
  o << "| loss | softmax-CE |";
  for (auto& p : r.policies)
    if (p.ran) o << " " << ms(p.loss_median_loss) << " " << ms_interval(stats::median_ci(p.loss_seconds)) << " |";
  o << "\n| update | SGD |";
  for (auto& p : r.policies)
    if (p.ran) o << " " << ms(p.loss_median_update) << " " << ms_interval(stats::median_ci(p.update_seconds)) << " |";
  o << "\n| **iteration** | |";
  for (auto& p : r.policies)
    if (p.ran) o << " **" << ms(p.iter_median) << "** " << ms_interval(p.iter_ci) << " |";
  o << "\n";
}

// Per round: one component of a layer's time.
std::vector<double> component_samples(const LayerResult& l, Direction d) {
  std::vector<double> v;
  for (const LayerTime& t : l.samples) v.push_back(comp(t, d));
  return v;
}

// Per round: every conv layer's time (skipped directions excluded).
std::vector<double> conv_seconds(const PolicyResult& p) {
  std::vector<double> v(p.iter_seconds.size(), 0.0);
  for (const LayerResult& l : p.layers)
    for (Direction d : kAllDirections)
      if (l.kind == "conv" && !skipped(l, d))
        for (size_t i = 0; i < v.size(); ++i) v[i] += comp(l.samples[i], d);
  return v;
}

// "12.30 [10.1, 14.2]": a difference of medians (a - b) with its paired interval, in ms.
std::string saved_cell(const std::vector<double>& a, const std::vector<double>& b) {
  return ms(stats::median(a) - stats::median(b)) + " " + ms_interval(stats::median_diff_ci(a, b));
}

// Per policy: the time saved against the baseline per conv layer and direction, and the rest.
void md_attribution(Out& o, const TrainReport& r, const PolicyResult& base) {
  o << "\n## Attribution: time saved per layer and direction vs `" << base.policy << "` (ms per iteration)\n\n";
  o << "positive = faster than " << base.policy << "; saved = difference of the medians [95 % interval over paired "
       "rounds]; 'all conv' and 'other' (every non-convolution layer, the loss and the update: the same code in every "
       "policy, so its difference is noise) are per-round sums\n\n";
  for (auto& p : r.policies) {
    if (!p.ran || &p == &base) continue;
    o << "### " << p.policy << "\n\n| layer | dir | " << base.policy << " | " << p.policy << " | saved | algorithm |\n";
    o << "|---|---|---:|---:|---:|---|\n";
    for (size_t li = 0; li < p.layers.size(); ++li) {
      const LayerResult &a = base.layers[li], &b = p.layers[li];
      if (b.kind != "conv") continue;
      for (Direction d : kAllDirections) {
        if (skipped(b, d)) continue;
        const std::string &was = a.algo[direction_index(d)], &now = b.algo[direction_index(d)];
        o << "| " << b.name << " | " << to_string(d) << " | " << ms(comp(a.median, d)) << " | " << ms(comp(b.median, d))
          << " | " << saved_cell(component_samples(a, d), component_samples(b, d)) << " | "
          << (was == now ? now : was + " -> " + now) << " |\n";
      }
    }
    const std::vector<double> ca = conv_seconds(base), cb = conv_seconds(p), oa = other_seconds(base),
                              ob = other_seconds(p);
    o << "| all conv | | " << ms(stats::median(ca)) << " | " << ms(stats::median(cb)) << " | **" << saved_cell(ca, cb)
      << "** | |\n| other | | " << ms(stats::median(oa)) << " | " << ms(stats::median(ob)) << " | " << saved_cell(oa, ob)
      << " | |\n";
    o << "| iteration | | " << ms(base.iter_median) << " | " << ms(p.iter_median) << " | "
      << saved_cell(base.iter_seconds, p.iter_seconds) << " | |\n\n";
  }
}

// What the skipped dL/dimage would cost per policy (or where its time is, when computed).
void md_first_layer(Out& o, const TrainReport& r) {
  o << "\n## Skipping the first layer's input gradient\n\n";
  if (r.config.first_layer_grad) {
    o << "computed (--first-layer-grad): its time is in the first conv layer's bwd-data column above.\n";
    return;
  }
  o << "dL/dimage is not computed (use --first-layer-grad to compute it); what it would cost:\n\n| policy | "
       "conv1 bwd-data ms | share of the iteration |\n|---|---:|---:|\n";
  for (auto& p : r.policies)
    if (p.ran && p.first_layer_dx_seconds > 0)
      o << "| " << p.policy << " | " << ms(p.first_layer_dx_seconds) << " | "
        << fmt("%.1f%%", 100 * p.first_layer_dx_seconds / (p.iter_median + p.first_layer_dx_seconds)) << " |\n";
}

}  // namespace

std::string report_markdown(const TrainReport& r) {
  Out o;
  md_setup(o, r);
  const int bi = r.baseline();
  if (bi < 0) {
    const bool stopped = std::any_of(r.policies.begin(), r.policies.end(), [](const PolicyResult& p) { return p.stopped; });
    o << (stopped ? "No policy ran to the end:\n\n" : "No policy could run:\n\n");
    for (auto& p : r.policies) o << "- " << p.policy << ": " << (p.stopped ? "stopped" : "skipped") << " (" << p.skipped << ")\n";
    return o.str();
  }
  const PolicyResult& base = r.policies[size_t(bi)];
  md_measurement(o, r);
  md_iterations(o, r, base);
  md_limit(o, r, base);
  md_tuning_cost(o, r);
  md_choices(o, r, base);
  md_layer_times(o, r, base);
  md_attribution(o, r, base);
  md_first_layer(o, r);
  md_in_context(o, r);
  return o.str();
}

std::string report_csv(const TrainReport& r) {
  std::ostringstream o;
  o << "net,batch,policy,layer,kind,fwd_ms,bwd_data_ms,bwd_filter_ms,algo_fwd,algo_bwd_data,algo_bwd_filter,iter_ms,"
       "fwd_ms_lo,fwd_ms_hi,bwd_data_ms_lo,bwd_data_ms_hi,bwd_filter_ms_lo,bwd_filter_ms_hi,iter_ms_lo,iter_ms_hi\n";
  for (auto& p : r.policies) {
    if (!p.ran) continue;
    for (auto& l : p.layers) {
      o << r.config.net << "," << r.config.batch << "," << p.policy << "," << l.name << "," << l.kind;
      for (Direction d : kAllDirections) o << "," << fmt("%.4f", comp(l.median, d) * 1e3);
      for (Direction d : kAllDirections) o << "," << l.algo[direction_index(d)];
      o << "," << fmt("%.4f", p.iter_median * 1e3);
      for (const stats::Interval& ci : l.ci) o << "," << fmt("%.4f", ci.lo * 1e3) << "," << fmt("%.4f", ci.hi * 1e3);
      o << "," << fmt("%.4f", p.iter_ci.lo * 1e3) << "," << fmt("%.4f", p.iter_ci.hi * 1e3) << "\n";
    }
  }
  return o.str();
}

}  // namespace convlab::train
