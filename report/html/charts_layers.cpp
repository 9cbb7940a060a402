// report.html's per-layer comparison charts (report/html/charts.hpp): the
// roofline, each algorithm as % of the measured peak per (layer, direction),
// find vs get vs the vendor's pick; and find in context from the training run.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "algorithms/registry.hpp"
#include "report/html/charts.hpp"
#include "report/html/svg.hpp"

namespace convlab::train::html {

namespace {

const char* const kMarkRoofline = "#3d5a80";
const char* const kMarkPeak = "#7b2d26";
const char* const kMarkPick = "#5e548e";
const char* const kMarkInContext = "#386641";

const char* const kFindColour = "#4e79a7";
const char* const kGetColour = "#f28e2b";
const char* const kVendorColour = "#e15759";

// One colour per algorithm family, in the order the families first appear in the
// registry, so every chart (and every page of this build) agrees; a family the
// registry does not hold gets the one colour left over.
std::string family_colour(const std::string& family) {
  std::vector<std::string_view> order;
  for (const Algorithm* a : registry())
    if (std::find(order.begin(), order.end(), a->family()) == order.end()) order.push_back(a->family());
  auto it = std::find(order.begin(), order.end(), family);
  return it == order.end() ? std::string("#9c755f") : category_colour(size_t(it - order.begin()));
}

std::vector<std::string> families(const LayersView& l) {
  std::vector<std::string> out;
  for (const AlgoRow& r : l.rows)
    if (r.ran() && std::find(out.begin(), out.end(), r.family) == out.end()) out.push_back(r.family);
  return out;
}

std::string short_layer(const std::string& s) {
  const size_t dot = s.rfind('.');
  return dot == std::string::npos || s.size() > 40 ? s.substr(0, 40) : s.substr(dot + 1);
}

// The direction's marker: circle (fwd), square (bwd-data), triangle (bwd-filter).
void shape(Svg& s, const std::string& dir, double x, double y, double r, const std::string& fill, const std::string& extra) {
  if (dir == "fwd") {
    s.circle(x, y, r, fill, extra);
  } else if (dir == "bwd-data") {
    s.rect(x - r * 0.9, y - r * 0.9, r * 1.8, r * 1.8, fill, extra);
  } else {
    s.raw("<path d=\"M" + fmt("%.1f", x) + " " + fmt("%.1f", y - r * 1.1) + " L" + fmt("%.1f", x + r) + " " +
          fmt("%.1f", y + r * 0.8) + " L" + fmt("%.1f", x - r) + " " + fmt("%.1f", y + r * 0.8) + " Z\" fill=\"" + fill +
          "\" " + extra + "/>");
  }
}

double intensity(const AlgoRow& r) { return r.bytes > 0 ? r.flops / r.bytes : NAN; }

}  // namespace

Figure chart_roofline(const LayersView& l, const std::string& suffix) {
  Figure f;
  double ai_lo = INFINITY, ai_hi = 0, g_lo = INFINITY, g_hi = 0;
  for (const AlgoRow& r : l.rows) {
    if (!r.ran() || !(r.gflops > 0) || !(intensity(r) > 0)) continue;
    ai_lo = std::min(ai_lo, intensity(r)), ai_hi = std::max(ai_hi, intensity(r));
    g_lo = std::min(g_lo, r.gflops), g_hi = std::max(g_hi, r.gflops);
  }
  const bool have_peak = l.peak_gflops > 0, have_bw = l.bandwidth_gbs > 0;
  if (ai_hi == 0) {
    f.caption = "No algorithm ran with a known arithmetic intensity: no roofline.";
    return f;
  }
  const double ridge = have_peak && have_bw ? l.peak_gflops / l.bandwidth_gbs : NAN;
  double x_lo = ai_lo / 2, x_hi = ai_hi * 1.6;
  if (std::isfinite(ridge)) x_lo = std::min(x_lo, ridge / 2), x_hi = std::max(x_hi, ridge * 2);
  const double y_hi = std::max(g_hi, have_peak ? l.peak_gflops : 0) * 1.6;
  const double y_lo = g_lo / 1.5;
  const double left = 90, right = kChartWidth - 290, top = 56, bottom = 470;
  const Scale x{std::pow(10, std::floor(std::log10(x_lo) * 2) / 2), std::pow(10, std::ceil(std::log10(x_hi) * 2) / 2), left, right, true};
  const Scale y{std::pow(10, std::floor(std::log10(y_lo))), std::pow(10, std::ceil(std::log10(y_hi) * 2) / 2), bottom, top, true};
  Svg s("chart-roofline" + suffix, kChartWidth, bottom + 56, kMarkRoofline,
        "Roofline: every algorithm under this machine's measured peak and bandwidth");
  s.x_axis(x, log_ticks(x.d0, x.d1), bottom, "arithmetic intensity (FLOP per compulsory byte: src + wei + dst once), log scale", top);
  s.y_axis(y, log_ticks(y.d0, y.d1), left, "effective GFLOP/s (direct-convolution FLOPs / time), log", right);
  // The roof: bandwidth up to the ridge, then the measured peak.
  if (have_bw) {
    const double x_end = std::isfinite(ridge) ? ridge : x.d1;
    s.line(x(x.d0), y(x.d0 * l.bandwidth_gbs), x(x_end), y(x_end * l.bandwidth_gbs), "#c0392b", 2);
    s.text(x(x.d0) + 6, y(x.d0 * l.bandwidth_gbs) - 8, "stream bandwidth " + num(l.bandwidth_gbs) + " GB/s", "start", 11,
           "fill=\"#c0392b\"");
  }
  if (have_peak) {
    const double x_start = std::isfinite(ridge) ? ridge : x.d0;
    s.line(x(x_start), y(l.peak_gflops), x(x.d1), y(l.peak_gflops), "#c0392b", 2);
    s.text(x(x_start) + 6, y(l.peak_gflops) - 6, "measured FMA peak " + num(l.peak_gflops) + " GFLOP/s", "start", 11,
           "fill=\"#c0392b\"");
  }
  std::map<std::string, double> layer_x;
  for (const AlgoRow& r : l.rows)
    if (r.ran() && r.gflops > 0 && intensity(r) > 0) layer_x[r.layer] = x(intensity(r));
  // Layer names in a band above the plot, staggered over up to three rows where they would collide,
  // each joined to its column by a dotted line.
  std::vector<std::pair<double, std::string>> names;
  for (const auto& [name, px] : layer_x) names.push_back({px, short_layer(name)});
  std::sort(names.begin(), names.end());
  std::vector<double> last_end(3, -1e9);
  for (const auto& [px, name] : names) {
    size_t level = 0;
    while (level + 1 < last_end.size() && last_end[level] > px - 3.6 * double(name.size())) ++level;
    const double ty = top - 8 - 14 * double(level);
    s.text(px, ty, name, "middle", 11, "fill=\"#222\" font-weight=\"bold\"");
    s.line(px, ty + 3, px, bottom, "#c8c8c8", 1, "stroke-dasharray=\"2 3\"");
    last_end[level] = px + 3.6 * double(name.size());
  }
  // Each (layer, direction) is a column at its intensity; directions nudged apart and shaped.
  for (const AlgoRow& r : l.rows) {
    if (!r.ran() || !(r.gflops > 0) || !(intensity(r) > 0)) continue;
    const double nudge = r.dir == "fwd" ? 0.95 : r.dir == "bwd-data" ? 1.0 : 1.05;
    const double px = x(intensity(r) * nudge), py = y(r.gflops);
    s.open_group(r.layer + " " + r.dir + ": " + r.algo + " " + num(r.gflops) + " GFLOP/s, " + num(r.time_ms) + " ms");
    shape(s, r.dir, px, py, 4.5, family_colour(r.family), "fill-opacity=\"0.8\"");
    if (r.find_choice) s.circle(px, py, 8, "none", "stroke=\"#111\" stroke-width=\"1.5\"");
    s.close_group();
  }
  // Legend: families, directions, find's pick.
  double ly = top + 6;
  const double lx = right + 24;
  s.text(lx, ly, "family", "start", 12, "font-weight=\"bold\" fill=\"#222\"");
  for (const std::string& fam : families(l)) {
    ly += 18;
    s.rect(lx, ly - 10, 12, 12, family_colour(fam));
    s.text(lx + 18, ly, fam.empty() ? "(none)" : fam, "start", 12, "fill=\"#222\"");
  }
  ly += 28;
  s.text(lx, ly, "direction", "start", 12, "font-weight=\"bold\" fill=\"#222\"");
  for (const char* d : {"fwd", "bwd-data", "bwd-filter"}) {
    ly += 18;
    shape(s, d, lx + 6, ly - 4, 5, "#666", "");
    s.text(lx + 18, ly, d, "start", 12, "fill=\"#222\"");
  }
  ly += 22;
  s.circle(lx + 6, ly - 4, 8, "none", "stroke=\"#111\" stroke-width=\"1.5\"");
  s.text(lx + 18, ly, "find's pick", "start", 12, "fill=\"#222\"");
  f.svg = s.str();
  f.caption = "Every algorithm that ran on every (layer, direction) at " + std::to_string(l.threads) +
              " thread(s), against the roof of this machine's measured FMA peak and stream bandwidth. The intensity is "
              "the problem's (direct-convolution FLOPs over the bytes of src, wei and dst read or written once), so all "
              "algorithms of a layer share one column; Winograd and FFT do fewer FLOPs than the direct convolution, so "
              "their effective rate can pass the peak.";
  return f;
}

Figure chart_peak(const LayersView& l, const std::string& suffix) {
  Figure f;
  const auto cases = l.cases();
  if (cases.empty() || !(l.peak_gflops > 0)) {
    f.caption = cases.empty() ? "No per-layer comparison rows." : "No measured peak in layers.json: no % of peak.";
    return f;
  }
  std::map<std::pair<std::string, std::string>, std::vector<const AlgoRow*>> by_case;
  double hi = 100;
  for (const AlgoRow& r : l.rows)
    if (r.ran() && std::isfinite(r.gflops)) {
      by_case[{r.layer, r.dir}].push_back(&r);
      hi = std::max(hi, 100 * r.gflops / l.peak_gflops);
    }
  for (auto& [k, v] : by_case) {
    std::sort(v.begin(), v.end(), [](const AlgoRow* a, const AlgoRow* b) { return a->time_ms < b->time_ms; });
  }
  std::map<std::pair<std::string, std::string>, std::string> vendor_algo;
  for (const VendorPick& v : l.vendor)
    if (!v.algo.empty() && !vendor_algo.count({v.layer, v.dir})) vendor_algo[{v.layer, v.dir}] = v.algo;
  const size_t cols = 3;
  const double gap = 24, panel_w = (kChartWidth - gap * double(cols - 1)) / double(cols), row = 14, head = 30;
  // Each line of panels as tall as its longest list.
  const size_t lines = (cases.size() + cols - 1) / cols;
  std::vector<double> line_y(lines + 1, 0);
  for (size_t li = 0; li < lines; ++li) {
    size_t n = 1;
    for (size_t ci = li * cols; ci < std::min(cases.size(), (li + 1) * cols); ++ci) n = std::max(n, by_case[cases[ci]].size());
    line_y[li + 1] = line_y[li] + head + row * double(n) + 40;
  }
  Svg s("chart-peak" + suffix, kChartWidth, line_y[lines] + 10, kMarkPeak,
        "Each algorithm as % of the measured peak, per layer and direction");
  const double label_w = 150, value_w = 70;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const auto& c = cases[ci];
    const auto& algos = by_case[c];
    const double px = (panel_w + gap) * double(ci % cols), py = line_y[ci / cols];
    const Scale x{0, nice_ceil(hi), px + label_w, px + panel_w - value_w};
    const double ai = algos.empty() ? NAN : intensity(*algos.front());
    s.text(px, py + 18, short_layer(c.first) + " · " + c.second, "start", 13, "font-weight=\"bold\" fill=\"#222\"");
    if (std::isfinite(ai)) s.text(px + panel_w, py + 18, "intensity " + num(ai) + " FLOP/B", "end", 10, "fill=\"#555\"");
    const double y0 = py + head, y1 = y0 + row * double(std::max<size_t>(algos.size(), 1));
    s.x_axis(x, linear_ticks(0, x.d1, 4), y1 + 2, ci + cols >= cases.size() ? "% of measured peak (effective GFLOP/s)" : "", y0);
    s.line(x(100), y0 - 4, x(100), y1, "#c0392b", 1.5, "stroke-dasharray=\"4 3\"");
    // The roof for this intensity, when it is under the peak.
    if (std::isfinite(ai) && l.bandwidth_gbs > 0) {
      const double roof = 100 * std::min(1.0, ai * l.bandwidth_gbs / l.peak_gflops);
      if (roof < 99) s.line(x(roof), y0 - 4, x(roof), y1, "#c0392b", 1, "stroke-dasharray=\"1 2\"");
    }
    if (algos.empty()) s.text(px + label_w, y0 + 10, "no algorithm ran", "start", 11, "fill=\"#777\"");
    for (size_t i = 0; i < algos.size(); ++i) {
      const AlgoRow& r = *algos[i];
      const double cy = y0 + row * (double(i) + 0.5), pct = 100 * r.gflops / l.peak_gflops;
      std::string tags;
      if (r.find_choice) tags += " F";
      if (r.get_choice) tags += " G";
      if (vendor_algo[c] == r.algo) tags += " V";
      s.text(px + label_w - 6, cy + 4, r.algo + (r.status == "ok" ? "" : " (" + r.status + ")"), "end", 10,
             r.status == "ok" ? "fill=\"#222\"" : "fill=\"#b03a2e\"");
      s.open_group(r.algo + ": " + num(r.time_ms) + " ms, " + num(r.gflops) + " GFLOP/s, " + num(pct) + " % of peak");
      s.rect(x(0), cy - 5, x(std::min(pct, x.d1)) - x(0), 10, family_colour(r.family));
      s.close_group();
      s.text(x(std::min(pct, x.d1)) + 4, cy + 4, num(pct, 2) + "%" + tags, "start", 10,
             tags.empty() ? "fill=\"#333\"" : "fill=\"#111\" font-weight=\"bold\"");
    }
  }
  f.svg = s.str();
  f.caption = "Per (layer, direction), every algorithm that ran, fastest first, as effective GFLOP/s over the measured "
              "peak (" + num(l.peak_gflops) + " GFLOP/s at " + std::to_string(l.threads) +
              " thread(s)); colour = family as in the roofline. F = find's pick, G = get's, V = the vendor's. Dashed "
              "red: the peak; dotted: the bandwidth roof at this intensity when it is lower.";
  return f;
}

Figure chart_pick(const LayersView& l, const std::string& suffix) {
  Figure f;
  const auto cases = l.cases();
  if (cases.empty()) {
    f.caption = "No per-layer comparison rows.";
    return f;
  }
  struct Bar { std::string who, algo, colour; double ms; };
  std::vector<std::vector<Bar>> bars(cases.size());
  double hi = 1;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const AlgoRow *fr = nullptr, *gr = nullptr;
    for (const AlgoRow& r : l.rows) {
      if (r.layer != cases[ci].first || r.dir != cases[ci].second) continue;
      if (r.find_choice) fr = &r;
      if (r.get_choice) gr = &r;
    }
    bars[ci].push_back({"find", fr ? fr->algo : "none", kFindColour, fr ? fr->time_ms : NAN});
    bars[ci].push_back({"get", gr ? gr->algo : "none", kGetColour, gr ? gr->time_ms : NAN});
    for (const VendorPick& v : l.vendor)
      if (v.layer == cases[ci].first && v.dir == cases[ci].second)
        bars[ci].push_back({v.source.empty() ? "vendor" : v.source, v.algo.empty() ? "none: " + v.status : v.algo,
                            kVendorColour, v.time_ms});
    const double find_ms = bars[ci][0].ms;
    for (const Bar& b : bars[ci])
      if (find_ms > 0 && b.ms > 0) hi = std::max(hi, b.ms / find_ms);
  }
  const double cap = std::min(nice_ceil(hi), 5.0);
  const double label_w = 200, who_w = 100, bar = 12, top = 40;
  double h = top;
  for (const auto& b : bars) h += double(b.size()) * (bar + 2) + 10;
  const Scale x{0, cap, label_w + who_w, kChartWidth - 360};
  Svg s("chart-pick" + suffix, kChartWidth, h + 44, kMarkPick, "find vs get vs the vendor's pick, per layer and direction");
  s.legend(label_w + who_w, 18, {{kFindColour, "find's pick (measured fastest)"}, {kGetColour, "get's pick (cost model)"},
                                 {kVendorColour, "the vendor's pick"}});
  s.x_axis(x, linear_ticks(0, cap, 8), h + 2, "time relative to find's pick (1 = as fast; bars past " + num(cap) + "× are cut)", top - 4);
  s.line(x(1), top - 4, x(1), h + 2, "#333", 1, "stroke-dasharray=\"3 3\"");
  double y = top;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const double find_ms = bars[ci][0].ms;
    const double gh = double(bars[ci].size()) * (bar + 2);
    if (ci % 2 == 0) s.rect(0, y - 3, kChartWidth, gh + 6, "#f6f6f6");
    s.text(8, y + gh / 2 + 4, short_layer(cases[ci].first) + " · " + cases[ci].second, "start", 12,
           "font-weight=\"bold\" fill=\"#222\"");
    for (const Bar& b : bars[ci]) {
      const double r = find_ms > 0 && b.ms > 0 ? b.ms / find_ms : NAN;
      s.text(label_w + who_w - 6, y + bar - 2, b.who, "end", 10, "fill=\"#444\"");
      if (std::isfinite(r)) {
        s.rect(x(0), y, x(std::min(r, cap)) - x(0), bar, b.colour);
        if (r > cap) s.text(x(cap) + 2, y + bar - 2, "»", "start", 12, "fill=\"#111\"");
      }
      s.text(x(std::min(std::isfinite(r) ? r : 0, cap)) + (r > cap ? 14 : 4), y + bar - 2,
             b.algo + (std::isfinite(b.ms) ? "  " + num(b.ms) + " ms" + (b.who == "find" ? "" : " (" + fmt("%.2f×", r) + ")")
                                           : "  (not measured)"),
             "start", 10, "fill=\"#222\"");
      y += bar + 2;
    }
    y += 10;
  }
  f.svg = s.str();
  f.caption = "Per (layer, direction): the algorithm find measured fastest, the one get's cost model predicts, and the "
              "vendor's own pick (oneDNN's auto on the CPU; cuDNN Find and Get_v7 on a GPU), each timed by find, as a "
              "multiple of find's time.";
  return f;
}

Figure chart_in_context(const TrainView& t, const std::string& suffix) {
  Figure f;
  if (t.in_context.empty()) {
    f.caption = "No in-context find in this train.json (the run predates it, or it was not asked for).";
    return f;
  }
  const size_t cols = 3;
  const double gap = 24, panel_w = (kChartWidth - gap * double(cols - 1)) / double(cols), row = 14, head = 34;
  size_t most = 0;
  for (const auto& c : t.in_context) most = std::max({most, c.isolated.size(), c.in_context.size()});
  const double panel_h = head + row * double(most) + 40;
  const size_t lines = (t.in_context.size() + cols - 1) / cols;
  Svg s("chart-in-context" + suffix, kChartWidth, panel_h * double(lines) + 30, kMarkInContext,
        "find in context: each candidate timed alone and inside training steps");
  const double ly = panel_h * double(lines) + 20;
  s.circle(6, ly - 4, 4, "#fff", "stroke=\"#4e79a7\" stroke-width=\"2\"");
  s.text(16, ly, "isolated find (the layer alone)", "start", 12, "fill=\"#222\"");
  s.circle(246, ly - 4, 4, "#e15759");
  s.text(256, ly, "in context (inside training steps)", "start", 12, "fill=\"#222\"");
  for (size_t ci = 0; ci < t.in_context.size(); ++ci) {
    const InContextView& c = t.in_context[ci];
    std::vector<std::string> algos;
    for (const auto* list : {&c.in_context, &c.isolated})
      for (const AlgoMs& a : *list)
        if (std::find(algos.begin(), algos.end(), a.algo) == algos.end()) algos.push_back(a.algo);
    auto ms_of = [](const std::vector<AlgoMs>& v, const std::string& a) {
      for (const AlgoMs& m : v)
        if (m.algo == a) return m.ms;
      return double(NAN);
    };
    double hi = 0;
    for (const auto& a : algos) hi = std::max({hi, ms_of(c.isolated, a), ms_of(c.in_context, a)});
    const double px = (panel_w + gap) * double(ci % cols), py = panel_h * double(ci / cols);
    const Scale x{0, nice_ceil(hi * 1.05), px + 150, px + panel_w - 20};
    s.text(px, py + 16, short_layer(c.layer) + " · " + c.dir, "start", 13, "font-weight=\"bold\" fill=\"#222\"");
    const std::string verdict =
        c.tie == 1 ? "a tie inside the noise" : c.agree == 1 ? "rankings agree" : c.agree == 0 ? "rankings differ" : "";
    s.text(px + panel_w, py + 16,
           verdict + (std::isfinite(c.cost_ratio) ? "; isolated pick costs " + fmt("%.2f×", c.cost_ratio) : ""), "end", 11,
           c.agree == 0 ? "fill=\"#222\" font-weight=\"bold\"" : "fill=\"#555\"");
    const double y0 = py + head, y1 = y0 + row * double(std::max<size_t>(algos.size(), 1));
    s.x_axis(x, linear_ticks(0, x.d1, 4), y1 + 2, "ms", y0);
    for (size_t i = 0; i < algos.size(); ++i) {
      const double cy = y0 + row * (double(i) + 0.5);
      const double a = ms_of(c.isolated, algos[i]), b = ms_of(c.in_context, algos[i]);
      s.text(px + 144, cy + 4, algos[i], "end", 10, "fill=\"#222\"");
      if (std::isfinite(a) && std::isfinite(b)) s.line(x(a), cy, x(b), cy, "#999", 2);
      if (std::isfinite(a)) s.circle(x(a), cy, 4, "#fff", "stroke=\"#4e79a7\" stroke-width=\"2\"");
      if (std::isfinite(b)) s.circle(x(b), cy, 4, "#e15759");
    }
  }
  f.svg = s.str();
  f.caption = "find in context: each candidate of a (layer, direction) timed alone (open blue) and inside real training "
              "steps with only that choice swapped (filled red), in the order of the in-context ranking. Where the "
              "rankings differ (the paired interval of the ratio lies above 1), the isolated winner costs the stated "
              "multiple of the in-context winner; an order swapped inside the noise is a tie.";
  return f;
}

}  // namespace convlab::train::html
