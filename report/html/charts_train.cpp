// report.html's training charts (report/html/charts.hpp): iteration time per
// policy, the iteration's breakdown, per-layer time and the attribution.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "report/html/charts.hpp"
#include "report/html/svg.hpp"

namespace convlab::train::html {

std::vector<LayerGroup> layer_groups(const PolicyView& p) {
  std::vector<LayerGroup> out;
  std::map<std::string, size_t> other;  // kind -> index in out
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const LayerView& l = p.layers[i];
    if (l.kind == "conv" || l.kind == "fc") {
      out.push_back({l.name, l.kind, {i}});
    }
  }
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const LayerView& l = p.layers[i];
    if (l.kind == "conv" || l.kind == "fc") continue;
    auto [it, fresh] = other.emplace(l.kind, out.size());
    if (fresh) out.push_back({l.kind, "other", {}});
    out[it->second].layers.push_back(i);
  }
  for (auto& g : out)
    if (g.kind == "other") g.label = g.label + " (" + std::to_string(g.layers.size()) + (g.layers.size() == 1 ? " layer)" : " layers)");
  if (p.loss_ms + p.update_ms > 0) out.push_back({"loss + SGD update", "loss", {}});  // 0: not timed apart
  return out;
}

void group_times(const PolicyView& p, const LayerGroup& g, double out[3]) {
  out[0] = out[1] = out[2] = 0;
  if (g.kind == "loss") {
    out[0] = p.loss_ms + p.update_ms;
    return;
  }
  for (size_t i : g.layers) {
    if (i >= p.layers.size()) continue;
    out[0] += p.layers[i].fwd_ms;
    out[1] += p.layers[i].bwd_data_ms;
    out[2] += p.layers[i].bwd_filter_ms;
  }
}

namespace {

const char* const kMarkPolicyTime = "#1d3557";
const char* const kMarkBreakdown = "#6a4c93";
const char* const kMarkLayers = "#8a5a00";
const char* const kMarkAttribution = "#00606b";

std::vector<const PolicyView*> ran(const TrainView& t) {
  std::vector<const PolicyView*> out;
  for (const auto& p : t.policies)
    if (p.ran) out.push_back(&p);
  return out;
}

std::string shorten(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "…"; }

// Speedup text: "1.51× [1.32, 1.70]" plus the verdict.
std::string speedup_text(const PolicyView& p) {
  std::string s = fmt("%.2f×", p.speedup);
  if (p.speedup_ci.ok()) s += " [" + fmt("%.2f", p.speedup_ci.lo) + ", " + fmt("%.2f", p.speedup_ci.hi) + "]";
  return s;
}

}  // namespace

Figure chart_policy_time(const TrainView& t, const std::string& suffix) {
  Figure f;
  const PolicyView* base = t.base();
  if (!base) {
    f.caption = "No policy ran: nothing to draw.";
    return f;
  }
  const double label_w = 240, right_w = 400, row = 30, top = 34;
  const double x0 = label_w, x1 = kChartWidth - right_w;
  double hi = 0;
  bool any_ci = false, any_sig = false, any_dots = false;
  for (const auto& p : t.policies) {
    if (!p.ran) continue;
    hi = std::max(hi, p.iter_ms);
    if (p.iter_ci.ok()) hi = std::max(hi, p.iter_ci.hi), any_ci = true;
    for (double v : p.iters_ms) hi = std::max(hi, v), any_dots = true;
    any_sig = any_sig || p.significant >= 0;
  }
  if (t.limit.present && std::isfinite(t.limit.seconds)) hi = std::max(hi, t.limit.seconds * 1e3);
  const Scale x{0, nice_ceil(hi * 1.02), x0, x1};
  const double h = top + row * double(t.policies.size()) + 50;
  Svg s("chart-policy-time" + suffix, kChartWidth, h, kMarkPolicyTime, "Iteration time per policy");
  s.text(x1 + 12, 20, "speedup vs " + base->name, "start", 12, "font-weight=\"bold\" fill=\"#222\"");
  if (any_sig) s.text(x1 + 190, 20, "verdict (95 % interval)", "start", 11, "fill=\"#555\"");
  if (t.limit.present) s.text(kChartWidth - 4, 20, "x the limit", "end", 11, "fill=\"#555\"");
  const double axis_y = top + row * double(t.policies.size()) + 4;
  s.x_axis(x, linear_ticks(x.d0, x.d1, 8), axis_y, "ms per training iteration", top - 6);
  for (size_t i = 0; i < t.policies.size(); ++i) {
    const PolicyView& p = t.policies[i];
    const double cy = top + row * (double(i) + 0.5);
    const bool is_base = &p == base;
    s.text(x0 - 10, cy + 4, shorten(p.name, 34), "end", 12, is_base ? "font-weight=\"bold\" fill=\"#222\"" : "fill=\"#222\"");
    if (!p.ran) {
      s.text(x0 + 6, cy + 4, "skipped: " + shorten(p.skipped, 120), "start", 11, "fill=\"#777\" font-style=\"italic\"");
      continue;
    }
    const bool insignificant = p.significant == 0 && !is_base;
    s.open_group(p.name + ": median " + num(p.iter_ms) + " ms" +
                 (p.iter_ci.ok() ? ", 95 % interval [" + num(p.iter_ci.lo) + ", " + num(p.iter_ci.hi) + "] ms" : ""));
    const std::string fill = is_base ? "#7f8c9a" : "#4e79a7";
    s.rect(x0, cy - 8, x(p.iter_ms) - x0, 16, fill, insignificant ? "fill-opacity=\"0.45\"" : "");
    s.close_group();
    for (double v : p.iters_ms) s.circle(x(v), cy, 2.6, "#fff", "stroke=\"#111\" stroke-width=\"1\"");
    if (p.iter_ci.ok()) {  // the 95 % interval as a whisker with caps
      s.line(x(p.iter_ci.lo), cy, x(p.iter_ci.hi), cy, "#111", 1.6);
      for (double v : {p.iter_ci.lo, p.iter_ci.hi}) s.line(x(v), cy - 6, x(v), cy + 6, "#111", 1.6);
    }
    s.text(x(p.iter_ms) + 4, cy - 9, num(p.iter_ms, 4), "start", 10, "fill=\"#333\"");
    // Right column: the speedup and its verdict, then the multiple of the limit.
    std::string colour = "#222", verdict;
    if (!is_base && p.verdict == "same") colour = "#777", verdict = "same";
    else if (!is_base && p.significant == 0) colour = "#777", verdict = "not significant";
    else if (!is_base && p.significant == 1) colour = p.speedup >= 1 ? "#1e7b34" : "#b03a2e", verdict = p.speedup >= 1 ? "faster" : "slower";
    s.text(x1 + 12, cy + 4, is_base ? "baseline" : speedup_text(p), "start", 12, "fill=\"" + colour + "\"");
    if (!verdict.empty())
      s.text(x1 + 190, cy + 4, verdict, "start", 11,
             "fill=\"" + colour + "\"" + (p.significant != 1 ? " font-style=\"italic\"" : " font-weight=\"bold\""));
    if (std::isfinite(p.x_limit)) s.text(kChartWidth - 4, cy + 4, fmt("%.2f×", p.x_limit), "end", 11, "fill=\"#555\"");
  }
  if (t.limit.present && std::isfinite(t.limit.seconds)) {
    const double lx = x(t.limit.seconds * 1e3);
    s.line(lx, top - 10, lx, axis_y, "#c0392b", 1.5, "stroke-dasharray=\"5 3\"");
    s.text(lx + 4, top - 12, "napkin limit " + num(t.limit.seconds * 1e3) + " ms", "start", 11, "fill=\"#c0392b\"");
  }
  f.svg = s.str();
  f.caption = "Bars: the median iteration of each policy; " +
              std::string(any_dots ? "open dots: every timed iteration; " : "") +
              (any_ci ? "whiskers: the 95 % confidence interval of the median; a speedup is <em>faster</em> or "
                        "<em>slower</em> only when its interval lies beyond the equivalence margin (how far two policies "
                        "running identical code land apart in this run), <em>same</em> when it lies inside it, else "
                        "<em>not significant</em> (pale bar)."
                      : "<strong>no confidence intervals in this train.json</strong> (the run predates them): bars "
                        "without whiskers, speedups without a verdict — read them against the spread of the dots.") +
              (t.limit.present ? " Dashed red: the step's napkin limit on this machine (see “The limit”)." : "");
  return f;
}

Figure chart_breakdown(const TrainView& t, const std::string& suffix) {
  Figure f;
  const auto policies = ran(t);
  if (policies.empty()) return f;
  const char* colours[5] = {kFwdColour, kBwdDataColour, kBwdFilterColour, kFcColour, kOtherColour};
  const char* names[5] = {"conv forward", "conv backward-data", "conv backward-filter", "fc layers (fwd + bwd)",
                          "other layers, loss, update"};
  std::vector<std::array<double, 5>> parts;
  double hi = 0;
  for (const PolicyView* p : policies) {
    std::array<double, 5> a{};
    for (const LayerView& l : p->layers) {
      if (l.kind == "conv") a[0] += l.fwd_ms, a[1] += l.bwd_data_ms, a[2] += l.bwd_filter_ms;
      else if (l.kind == "fc") a[3] += l.total_ms();
      else a[4] += l.total_ms();
    }
    a[4] += p->loss_ms + p->update_ms;
    parts.push_back(a);
    hi = std::max({hi, a[0] + a[1] + a[2] + a[3] + a[4], p->iter_ms});
  }
  const double label_w = 240, right_w = 120, row = 28, top = 44;
  const double x0 = label_w, x1 = kChartWidth - right_w;
  const Scale x{0, nice_ceil(hi * 1.02), x0, x1};
  const double axis_y = top + row * double(policies.size()) + 4;
  Svg s("chart-breakdown" + suffix, kChartWidth, axis_y + 44, kMarkBreakdown, "The iteration by part, per policy");
  std::vector<std::pair<std::string, std::string>> legend;
  for (int k = 0; k < 5; ++k) legend.push_back({colours[k], names[k]});
  const double lx = s.legend(x0, 18, legend);
  s.line(lx + 4, 8, lx + 4, 22, "#111", 2);
  s.text(lx + 10, 18, "median iteration", "start", 12, "fill=\"#222\"");
  s.x_axis(x, linear_ticks(x.d0, x.d1, 8), axis_y, "ms per training iteration (sum of per-layer medians)", top - 6);
  for (size_t i = 0; i < policies.size(); ++i) {
    const PolicyView& p = *policies[i];
    const double cy = top + row * (double(i) + 0.5);
    s.text(x0 - 10, cy + 4, shorten(p.name, 34), "end", 12, "fill=\"#222\"");
    double at = 0;
    for (int k = 0; k < 5; ++k) {
      s.open_group(p.name + ": " + names[k] + " " + num(parts[i][size_t(k)]) + " ms");
      s.rect(x(at), cy - 9, x(at + parts[i][size_t(k)]) - x(at), 18, colours[k], "stroke=\"#fff\" stroke-width=\"0.5\"");
      s.close_group();
      at += parts[i][size_t(k)];
    }
    s.line(x(p.iter_ms), cy - 12, x(p.iter_ms), cy + 12, "#111", 2);
    s.text(x1 + 10, cy + 4, num(at, 4) + " ms", "start", 12, "fill=\"#222\"");
  }
  f.svg = s.str();
  f.caption = "Where each policy's iteration goes: the per-layer medians summed by part (a sum of medians, so it can "
              "differ a little from the median iteration, the black tick). Only the three conv parts depend on the "
              "policy; a difference in fc or other layers between policies is interference or noise.";
  return f;
}

Figure chart_layers(const TrainView& t, const std::string& suffix) {
  Figure f;
  const auto policies = ran(t);
  if (policies.empty()) return f;
  const auto groups = layer_groups(*policies.front());
  const double label_w = 250, right_w = 110, bar = 9, gap = 2, group_gap = 8, top = 36;
  const double x0 = label_w, x1 = kChartWidth - right_w;
  double hi = 0;
  bool any_bound = false, any_ci = false;
  for (const PolicyView* p : policies)
    for (const auto& g : groups) {
      double v[3];
      group_times(*p, g, v);
      hi = std::max(hi, v[0] + v[1] + v[2]);
      for (size_t i : g.layers) {
        if (i >= p->layers.size()) continue;
        if (std::isfinite(p->layers[i].bound_ms)) any_bound = true;
        // A single layer's whiskers sit at the ends of its direction segments.
        const LayerView& l = p->layers[i];
        const double med[3] = {l.fwd_ms, l.bwd_data_ms, l.bwd_filter_ms};
        for (int k = 0; k < 3; ++k)
          if (g.layers.size() == 1 && l.dir_ci[k].ok())
            any_ci = true, hi = std::max(hi, v[0] + v[1] + v[2] - med[k] + l.dir_ci[k].hi);
      }
    }
  const Scale x{0, nice_ceil(hi * 1.02), x0, x1};
  const double group_h = double(policies.size()) * (bar + gap) + group_gap + 14;
  const double axis_y = top + group_h * double(groups.size());
  Svg s("chart-layers" + suffix, kChartWidth, axis_y + 44, kMarkLayers, "Per layer, per policy");
  double lx = s.legend(x0, 18, {{kFwdColour, "forward"}, {kBwdDataColour, "backward-data (other layers: backward)"},
                                {kBwdFilterColour, "backward-filter"}});
  if (any_bound) {
    s.line(lx + 4, 7, lx + 4, 21, "#c0392b", 2);
    s.text(lx + 10, 18, "bandwidth bound", "start", 12, "fill=\"#222\"");
  }
  s.x_axis(x, linear_ticks(x.d0, x.d1, 8), axis_y, "ms per iteration (median)", top - 6);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const LayerGroup& g = groups[gi];
    const double gy = top + group_h * double(gi);
    s.text(8, gy + 13, g.label, "start", 13, "font-weight=\"bold\" fill=\"#222\"");
    if (gi) s.line(8, gy + 1, x1, gy + 1, "#ddd");
    for (size_t pi = 0; pi < policies.size(); ++pi) {
      const PolicyView& p = *policies[pi];
      const double y = gy + 16 + double(pi) * (bar + gap);
      double v[3];
      group_times(p, g, v);
      s.text(x0 - 8, y + bar - 1, shorten(p.name, 30), "end", 10, "fill=\"#444\"");
      const char* colours[3] = {kFwdColour, kBwdDataColour, kBwdFilterColour};
      double at = 0, starts[3] = {0, 0, 0};
      for (int k = 0; k < 3; ++k) {
        starts[k] = at;
        if (v[k] <= 0) continue;
        s.rect(x(at), y, x(at + v[k]) - x(at), bar, colours[k]);
        at += v[k];
      }
      s.text(x(at) + 4, y + bar - 1, num(at), "start", 9, "fill=\"#333\"");
      // One layer in the group: its interval and bandwidth bound, when the run recorded them.
      if (g.layers.size() == 1 && g.layers[0] < p.layers.size()) {
        const LayerView& l = p.layers[g.layers[0]];
        for (int k = 0; k < 3; ++k)  // where the segment's end may lie: its start + the direction's interval
          if (v[k] > 0 && l.dir_ci[k].ok())
            s.line(x(starts[k] + l.dir_ci[k].lo), y + bar / 2, x(starts[k] + l.dir_ci[k].hi), y + bar / 2, "#111", 1.2);
        if (std::isfinite(l.bound_ms)) s.line(x(l.bound_ms), y - 1, x(l.bound_ms), y + bar + 1, "#c0392b", 2);
        if (std::isfinite(l.pct_of_bound))
          s.text(x1 + 10, y + bar - 1, fmt("%.0f %% of bound", l.pct_of_bound), "start", 10, "fill=\"#444\"");
      }
    }
  }
  f.svg = s.str();
  f.caption = std::string("Each layer's median time per iteration under each policy, stacked by direction (conv layers "
                          "forward / backward-data / backward-filter; the others forward / backward; layers of the same "
                          "kind outside conv and fc summed). ") +
              (any_bound ? "Red tick: the layer's bytes at the measured bandwidth, and the time as % of that bound. "
                         : "No bandwidth bounds in this train.json. ") +
              (any_ci ? "Whiskers: 95 % intervals." : "No per-layer intervals in this train.json.");
  return f;
}

Figure chart_attribution(const TrainView& t, const std::string& suffix) {
  Figure f;
  const PolicyView* base = t.base();
  std::vector<const PolicyView*> others;
  for (const PolicyView* p : ran(t))
    if (p != base) others.push_back(p);
  if (!base || others.empty()) {
    f.caption = "Only one policy ran: no attribution.";
    return f;
  }
  // Rows: every conv layer and direction (but a skipped input gradient), the fc layers, the rest, the iteration.
  struct Row { std::string label; size_t layer; int dir; int kind; };  // kind 0 conv, 1 fc, 2 other, 3 iteration
  std::vector<Row> rows;
  const char* dirs[3] = {"fwd", "bwd-data", "bwd-filter"};
  for (size_t i = 0; i < base->layers.size(); ++i)
    if (base->layers[i].kind == "conv")
      for (int d = 0; d < 3; ++d)
        if (d != 1 || base->layers[i].input_grad) rows.push_back({base->layers[i].name + " " + dirs[d], i, d, 0});
  rows.push_back({"fc layers", 0, 0, 1});
  rows.push_back({"other layers, loss, update", 0, 0, 2});
  rows.push_back({"whole iteration (medians)", 0, 0, 3});
  auto saved = [&](const PolicyView& p, const Row& r) {
    auto part = [&](const PolicyView& q) {
      if (r.kind == 3) return q.iter_ms;
      double v = 0;
      for (size_t i = 0; i < q.layers.size(); ++i) {
        const LayerView& l = q.layers[i];
        if (r.kind == 0 && i == r.layer) v += r.dir == 0 ? l.fwd_ms : r.dir == 1 ? l.bwd_data_ms : l.bwd_filter_ms;
        if (r.kind == 1 && l.kind == "fc") v += l.total_ms();
        if (r.kind == 2 && l.kind != "fc" && l.kind != "conv") v += l.total_ms();
      }
      return r.kind == 2 ? v + q.loss_ms + q.update_ms : v;
    };
    return part(*base) - part(p);
  };
  // One scale for every panel, set by the layer rows; the whole iteration is drawn cut at its edge.
  double m = 0;
  for (const PolicyView* p : others)
    for (const Row& r : rows)
      if (r.kind != 3) m = std::max(m, std::fabs(saved(*p, r)));
  m = nice_ceil(m);
  const double label_w = 180, min_panel = 220, row = 18, top = 30;
  const size_t max_per_line = std::max<size_t>(1, size_t((kChartWidth - label_w) / min_panel));
  const size_t lines = (others.size() + max_per_line - 1) / max_per_line;
  const size_t per_line = (others.size() + lines - 1) / lines;
  const double panel_w = (kChartWidth - label_w) / double(per_line);
  const double block_h = top + row * double(rows.size()) + 34;
  Svg s("chart-attribution" + suffix, kChartWidth, block_h * double(lines) + 4, kMarkAttribution,
        "Time saved per layer and direction vs " + base->name);
  for (size_t li = 0; li < lines; ++li) {
    const double by = block_h * double(li);
    for (size_t ri = 0; ri < rows.size(); ++ri) {
      const double cy = by + top + row * (double(ri) + 0.5);
      if (ri % 2 == 0) s.rect(0, cy - row / 2, kChartWidth, row, "#f4f4f4");
      s.text(label_w - 10, cy + 4, rows[ri].label, "end", 11,
             rows[ri].kind == 3 ? "font-weight=\"bold\" fill=\"#222\"" : "fill=\"#222\"");
    }
    for (size_t k = li * per_line; k < std::min(others.size(), (li + 1) * per_line); ++k) {
      const PolicyView& p = *others[k];
      const double px = label_w + panel_w * double(k - li * per_line);
      const Scale x{-m, m, px + 30, px + panel_w - 30};
      s.text((x.r0 + x.r1) / 2, by + 16, shorten(p.name, size_t(panel_w / 7.5)), "middle", 12,
             "font-weight=\"bold\" fill=\"#222\"");
      const double axis_y = by + top + row * double(rows.size()) + 2;
      s.line(x(0), by + top - 4, x(0), axis_y, "#555");
      s.x_axis(x, {-m, -m / 2, 0, m / 2, m}, axis_y, "", -1);
      for (size_t ri = 0; ri < rows.size(); ++ri) {
        const double v = saved(p, rows[ri]), cy = by + top + row * (double(ri) + 0.5);
        const double shown = std::clamp(v, -m, m);
        s.open_group(p.name + ", " + rows[ri].label + ": " + (v >= 0 ? "saves " : "costs ") + num(std::fabs(v)) + " ms");
        s.rect(x(0), cy - 6, x(shown) - x(0), 12, v >= 0 ? kSavedColour : kLostColour,
               rows[ri].kind == 2 ? "fill-opacity=\"0.45\"" : "");
        s.close_group();
        // The value beside the bar's end, when the bar is long enough to matter (always for the iteration).
        if (rows[ri].kind == 3 || std::fabs(v) >= 0.04 * m)
          s.text(x(shown) + (v >= 0 ? 3 : -3), cy + 4, (std::fabs(v) > m ? (v > 0 ? "» " : "« ") : "") + num(v, 2),
                 v >= 0 ? "start" : "end", 9.5, rows[ri].kind == 3 ? "font-weight=\"bold\" fill=\"#111\"" : "fill=\"#333\"");
      }
    }
  }
  s.text(label_w, block_h * double(lines) - 2, "ms per iteration saved vs " + base->name +
         " (right, green: faster; left, red: slower; » a bar cut at the scale's edge)", "start", 12, "fill=\"#222\"");
  f.svg = s.str();
  f.caption = "What each policy's choices bought, per conv layer and direction: the baseline's (" + esc(base->name) +
              ") median minus the policy's. The pale rows run the same code in every policy: their bars measure "
              "interference and noise, the yardstick for the others.";
  return f;
}

}  // namespace convlab::train::html
