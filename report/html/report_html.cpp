// report.html's page: header, sections, tables and the charts in order
// (report/html/report_html.hpp).
#include "report/html/report_html.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "report/html/charts.hpp"
#include "report/html/svg.hpp"
#include "report/html/view.hpp"

namespace convlab::train {

using namespace html;

namespace {

using Out = std::ostringstream;

const char* const kCss = R"(
:root { color-scheme: light; }
body { font: 14px/1.45 "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #222; background: #fff; margin: 0; }
main { max-width: 1320px; margin: 0 auto; padding: 14px 10px 40px; }
h1 { font-size: 24px; margin: 6px 0 10px; }
h2 { font-size: 20px; margin: 34px 0 8px; border-bottom: 2px solid #d8dde2; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; }
.meta { background: #f4f6f8; border: 1px solid #dde3e8; border-radius: 6px; padding: 10px 14px; display: grid;
        grid-template-columns: max-content 1fr; gap: 3px 16px; }
.meta b { color: #444; font-weight: 600; }
code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 12.5px; }
figure { margin: 8px 0 20px; break-inside: avoid; }
figcaption { color: #444; font-size: 13px; max-width: 1150px; margin-top: 4px; }
svg { display: block; max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 12.5px; margin: 6px 0 16px; display: block; max-width: 100%;
        overflow-x: auto; }
th, td { border: 1px solid #d8dde2; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f4f6f8; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.skipped td { color: #888; font-style: italic; }
td.diff { background: #fff2cc; }
.note { color: #555; }
.warn { color: #9a3412; }
.good { color: #1e7b34; font-weight: 600; }
.bad { color: #b03a2e; font-weight: 600; }
nav { margin: 12px 0 0; font-size: 13px; }
nav a { margin-right: 14px; }
@media print {
  main { max-width: none; padding: 0; }
  table { display: table; }
  h2, h3 { break-after: avoid; }
  nav { display: none; }
  a { color: inherit; text-decoration: none; }
}
)";

// Records where each chart landed, for tests/scripts/report_html_test.sh (the page does not need it).
const char* const kLayoutScript = R"(<script>
(function () {
  var o = {}, d = document.documentElement;
  document.querySelectorAll('svg[id^="chart-"]').forEach(function (s) {
    var r = s.getBoundingClientRect();
    o[s.id] = [Math.round(r.left + scrollX), Math.round(r.top + scrollY), Math.round(r.width), Math.round(r.height)];
  });
  o.page = [d.scrollWidth, d.scrollHeight];
  document.body.setAttribute('data-layout', JSON.stringify(o));
})();
</script>)";

std::string ms(double v) { return std::isfinite(v) ? fmt("%.1f", v) : "–"; }
std::string interval(const Interval& i, const char* f) {
  return i.ok() ? "[" + fmt(f, i.lo) + ", " + fmt(f, i.hi) + "]" : "–";
}

// A chart and its caption (the chart draws its own title).
void figure(Out& o, const Figure& f) {
  o << "<figure>";
  o << (f.svg.empty() ? "" : f.svg + "\n");
  o << "<figcaption>" << f.caption << "</figcaption></figure>\n";
}

void policy_table(Out& o, const TrainView& t, const PolicyView& base) {
  bool ci = false, lim = false;
  for (const auto& p : t.policies) ci = ci || p.iter_ci.ok() || p.speedup_ci.ok(), lim = lim || std::isfinite(p.x_limit);
  o << "<table><tr><th>policy</th><th>median ms / iteration</th>" << (ci ? "<th>95 % interval</th>" : "")
    << "<th>speedup vs " << esc(base.name) << "</th>" << (ci ? "<th>95 % interval</th><th>verdict</th>" : "")
    << (lim ? "<th>× limit</th>" : "")
    << "<th>final loss</th><th>loss rel. diff</th><th>choosing s</th><th>workspace MiB</th></tr>\n";
  for (const auto& p : t.policies) {
    if (!p.ran) {
      o << "<tr class=\"skipped\"><td>" << esc(p.name) << "</td><td colspan=\"" << (ci ? 9 : 6) + (lim ? 1 : 0)
        << "\">skipped: " << esc(p.skipped) << "</td></tr>\n";
      continue;
    }
    const bool agrees = p.loss_agrees >= 0 ? p.loss_agrees == 1 : !(p.loss_rel_diff > t.loss_rtol);
    o << "<tr><td>" << esc(p.name) << "</td><td class=\"n\">" << ms(p.iter_ms) << "</td>";
    if (ci) o << "<td class=\"n\">" << interval(p.iter_ci, "%.1f") << "</td>";
    o << "<td class=\"n\">" << fmt("%.2f×", p.speedup) << "</td>";
    if (ci) {
      o << "<td class=\"n\">" << interval(p.speedup_ci, "%.2f") << "</td><td>";
      if (&p == &base) o << "baseline";
      else if (p.verdict == "same") o << "<span class=\"note\">same</span>";
      else if (p.significant == 0) o << "<span class=\"note\">not significant</span>";
      else if (p.significant == 1) o << (p.speedup >= 1 ? "<span class=\"good\">faster</span>" : "<span class=\"bad\">slower</span>");
      o << "</td>";
    }
    if (lim) o << "<td class=\"n\">" << (std::isfinite(p.x_limit) ? fmt("%.2f×", p.x_limit) : "–") << "</td>";
    o << "<td class=\"n\">" << fmt("%.6f", p.final_loss) << "</td><td class=\"n" << (agrees ? "" : " bad") << "\">"
      << fmt("%.1e", p.loss_rel_diff) << (agrees ? "" : " (disagrees)") << "</td><td class=\"n\">" << fmt("%.3f", p.choose_s)
      << "</td><td class=\"n\">" << (std::isfinite(p.workspace_bytes) ? fmt("%.1f", p.workspace_bytes / 1048576) : "–")
      << "</td></tr>\n";
  }
  o << "</table>\n<p class=\"note\">loss rel. diff: the final loss against " << esc(base.name)
    << "'s; a policy disagrees when its loss leaves the expected fp32 drift at any iteration (" << fmt("%.0e", t.loss_rtol)
    << " by the last) — the proof that a faster policy trains the same network.</p>\n";
}

void limit_section(Out& o, const TrainView& t) {
  o << "<h3>The limit</h3>\n";
  if (!t.limit.present) {
    o << "<p class=\"note\">No napkin limit in this train.json (the run predates it): policies are not shown as "
         "multiples of this machine's limit.</p>\n";
    return;
  }
  const LimitView& l = t.limit;
  auto row = [&](const char* what, const std::string& amount, const std::string& rate, double seconds) {
    o << "<tr><td>" << what << "</td><td class=\"n\">" << amount << "</td><td class=\"n\">" << rate << "</td><td class=\"n\">"
      << ms(seconds * 1e3) << "</td></tr>\n";
  };
  o << "<table><tr><th>part of the step</th><th>amount</th><th>at</th><th>ms</th></tr>\n";
  if (std::isfinite(l.passes)) {
    const double compute_passes = l.passes - l.memory_bound_passes;
    row("conv and fc passes bound by their FLOPs", num(compute_passes) + " passes", num(l.peak_gflops) + " GFLOP/s",
        l.compute_bound_seconds);
    row("conv and fc passes bound by their bytes", num(l.memory_bound_passes) + " passes", num(l.bandwidth_gbs) + " GB/s",
        l.memory_bound_seconds);
  } else {
    row("convolutions (direct FLOPs)", num(l.conv_flops / 1e9) + " GFLOP", num(l.peak_gflops) + " GFLOP/s",
        l.conv_flops / (l.peak_gflops * 1e9));
    row("fully connected layers", num(l.fc_flops / 1e9) + " GFLOP", num(l.peak_gflops) + " GFLOP/s",
        l.fc_flops / (l.peak_gflops * 1e9));
  }
  row("every other layer's bytes", num(l.other_bytes / 1e9) + " GB", num(l.bandwidth_gbs) + " GB/s",
      l.other_bytes / (l.bandwidth_gbs * 1e9));
  o << "<tr><th>the step's napkin limit</th><th></th><th></th><th class=\"n\">" << ms(l.seconds * 1e3)
    << "</th></tr>\n</table>\n<p class=\"note\">At this machine's measured FMA peak and stream bandwidth: each conv "
       "or fc direction is bound by its direct FLOPs or by the bytes of its three tensors, whichever is slower; "
       "before any Winograd or FFT saving (those do fewer FLOPs than the limit assumes).</p>\n";
}

void choices_table(Out& o, const TrainView& t, const PolicyView& base) {
  const char* dirs[3] = {"fwd", "bwd-data", "bwd-filter"};
  o << "<table><tr><th>layer</th><th>dir</th>";
  for (const auto& p : t.policies)
    if (p.ran) o << "<th>" << esc(p.name) << "</th>";
  o << "</tr>\n";
  for (size_t li = 0; li < base.layers.size(); ++li) {
    if (base.layers[li].kind != "conv") continue;
    for (int d = 0; d < 3; ++d) {
      o << "<tr><td>" << esc(base.layers[li].name) << "</td><td>" << dirs[d] << "</td>";
      for (const auto& p : t.policies) {
        if (!p.ran || li >= p.layers.size()) continue;
        const LayerView& l = p.layers[li];
        const bool skipped = d == 1 && !l.input_grad, differs = l.algo[d] != base.layers[li].algo[d];
        o << "<td" << (differs ? " class=\"diff\"" : "") << "><code>" << esc(l.algo[d]) << "</code>"
          << (skipped ? " <span class=\"note\">(not run)</span>" : "") << "</td>";
      }
      o << "</tr>\n";
    }
  }
  o << "</table>\n<p class=\"note\">Shaded: a choice that differs from " << esc(base.name)
    << "'s. “not run”: the first layer's input gradient, skipped unless <code>--first-layer-grad</code>.</p>\n";
}

// Per layer group: each policy's median ms, and the bandwidth bound when the run recorded it.
void layer_table(Out& o, const TrainView& t, const PolicyView& base) {
  const auto groups = layer_groups(base);
  bool bound = false;
  for (const auto& l : base.layers) bound = bound || std::isfinite(l.bound_ms);
  o << "<table><tr><th>layer</th>" << (bound ? "<th>bound ms</th>" : "");
  for (const auto& p : t.policies)
    if (p.ran) o << "<th>" << esc(p.name) << "</th>";
  o << "</tr>\n";
  for (const auto& g : groups) {
    o << "<tr><td>" << esc(g.label) << "</td>";
    if (bound) {
      double b = 0;
      for (size_t i : g.layers) b += std::isfinite(base.layers[i].bound_ms) ? base.layers[i].bound_ms : 0;
      o << "<td class=\"n\">" << (b > 0 ? ms(b) : "–") << "</td>";
    }
    for (const auto& p : t.policies) {
      if (!p.ran) continue;
      double v[3];
      group_times(p, g, v);
      o << "<td class=\"n\">" << ms(v[0] + v[1] + v[2]);
      if (g.layers.size() == 1 && g.layers[0] < p.layers.size() && std::isfinite(p.layers[g.layers[0]].pct_of_bound))
        o << " <span class=\"note\">(" << fmt("%.0f", p.layers[g.layers[0]].pct_of_bound) << " %)</span>";
      o << "</td>";
    }
    o << "</tr>\n";
  }
  o << "<tr><th>iteration (median)</th>" << (bound ? "<th></th>" : "");
  for (const auto& p : t.policies)
    if (p.ran) o << "<th class=\"n\">" << ms(p.iter_ms) << "</th>";
  o << "</tr>\n</table>\n";
}

// What the in-context find claims per iteration, and whether find-context's own iterations bear it out.
void context_claim_note(Out& o, const TrainView& t) {
  const ContextClaimView& c = t.context_claim;
  if (!c.present) return;
  o << "<p>";
  if (c.differ == 0) {
    o << "No pair ranks differently inside the step beyond the noise";
    if (c.ties) o << " (" << c.ties << " of " << c.pairs << " swap their order inside their intervals)";
    o << ": the in-context find keeps every isolated choice.</p>\n";
    return;
  }
  o << c.differ << " of " << c.pairs << " pairs rank differently inside the step; by the per-layer times the isolated "
       "winners would cost " << ms(c.claimed_ms) << " ms per iteration more. ";
  if (c.checked != 1)
    o << "<span class=\"note\">Not checked against whole iterations (find did not run).</span>";
  else if (c.consistent == 1)
    o << "Checked: find-context's iterations run " << ms(c.measured_ms) << " ms [" << ms(c.measured_ci.lo) << ", "
      << ms(c.measured_ci.hi) << "] faster than " << esc(c.find_policy) << "'s, consistent with it.";
  else
    o << "<strong>Inconclusive:</strong> find-context's own iterations run " << ms(c.measured_ms) << " ms ["
      << ms(c.measured_ci.lo) << ", " << ms(c.measured_ci.hi) << "] faster than " << esc(c.find_policy)
      << "'s, which does not hold that estimate: the whole iterations do not bear the in-context ranking out.";
  o << "</p>\n";
}

void in_context_table(Out& o, const TrainView& t) {
  auto best = [](const std::vector<AlgoMs>& v) {
    const AlgoMs* b = nullptr;
    for (const AlgoMs& a : v)
      if (std::isfinite(a.ms) && (!b || a.ms < b->ms)) b = &a;
    return b ? b->algo + " (" + ms(b->ms) + " ms)" : std::string("–");
  };
  o << "<table><tr><th>layer</th><th>dir</th><th>isolated pick</th><th>in-context pick</th><th>rankings</th>"
       "<th>isolated pick's cost in context</th></tr>\n";
  for (const auto& c : t.in_context)
    o << "<tr><td>" << esc(c.layer) << "</td><td>" << esc(c.dir) << "</td><td><code>" << esc(best(c.isolated))
      << "</code></td><td><code>" << esc(best(c.in_context)) << "</code></td><td>"
      << (c.tie == 1 ? "tie (inside the noise)" : c.agree == 1 ? "agree" : c.agree == 0 ? "<strong>differ</strong>" : "–")
      << "</td><td class=\"n\">"
      << (std::isfinite(c.cost_ratio) ? fmt("%.2f×", c.cost_ratio) : "–") << "</td></tr>\n";
  o << "</table>\n";
}

void train_sections(Out& o, const TrainView& t, const std::string& sx) {
  const PolicyView* base = t.base();
  o << "<h2 id=\"policies" << sx << "\">Training: time per policy</h2>\n<p>" << esc(t.net) << ", batch " << t.batch << ", "
    << t.iters << " timed iterations after " << t.warmup << " warm-up per policy, threads "
    << (t.threads ? std::to_string(t.threads) : std::string("all")) << "; data: " << esc(t.data) << ".</p>\n";
  if (!base) {
    o << "<p class=\"warn\">No policy could run:</p><ul>";
    for (const auto& p : t.policies) o << "<li>" << esc(p.name) << ": " << esc(p.skipped) << "</li>";
    o << "</ul>\n";
    return;
  }
  figure(o, chart_policy_time(t, sx));
  policy_table(o, t, *base);
  limit_section(o, t);
  o << "<h2 id=\"layers" << sx << "\">Training: where the time goes</h2>\n";
  figure(o, chart_breakdown(t, sx));
  figure(o, chart_layers(t, sx));
  layer_table(o, t, *base);
  o << "<h2 id=\"attribution" << sx << "\">Training: what each choice bought</h2>\n";
  figure(o, chart_attribution(t, sx));
  o << "<h3>Algorithm chosen per layer and direction</h3>\n";
  choices_table(o, t, *base);
  o << "<h2 id=\"in-context" << sx << "\">find in context</h2>\n";
  const Figure ic = chart_in_context(t, sx);
  if (ic.svg.empty()) {
    o << "<p class=\"note\">" << ic.caption << "</p>\n";
  } else {
    figure(o, ic);
    in_context_table(o, t);
    context_claim_note(o, t);
  }
}

void layer_sections(Out& o, const LayersView& l, const std::string& sx) {
  o << "<h2 id=\"algorithms" << sx << "\">Per-layer algorithm comparison</h2>\n<p>"
    << (l.network.empty() ? std::string("the problems given") : esc(l.network)) << (l.batch ? ", batch " + std::to_string(l.batch) : "")
    << "; every algorithm checked against the fp64 reference and timed (find), ranked by the cost model (get), beside "
       "the vendor's own pick.</p>\n";
  figure(o, chart_roofline(l, sx));
  figure(o, chart_peak(l, sx));
  figure(o, chart_pick(l, sx));
}

void header(Out& o, const HtmlInputs& in, const std::vector<TrainView>& trains, const std::vector<LayersView>& layers) {
  const TrainView* t0 = trains.empty() ? nullptr : &trains.front();
  const LayersView* l0 = nullptr;
  for (const auto& l : layers)
    if (!l.rows.empty() || !l.fingerprint.empty()) {
      l0 = &l;
      break;
    }
  o << "<h1>convlab report" << (t0 && !t0->net.empty() ? ": " + esc(t0->net) + ", batch " + std::to_string(t0->batch) : "")
    << "</h1>\n<div class=\"meta\">";
  if (t0 && !t0->device.empty()) o << "<b>machine</b><span>" << esc(t0->device) << "</span>";
  else if (l0) o << "<b>machine</b><span>" << esc(l0->fingerprint) << "</span>";
  if (l0 && l0->peak_gflops > 0)
    o << "<b>measured</b><span>FMA peak " << num(l0->peak_gflops) << " GFLOP/s at " << l0->threads << " thread(s)"
      << (l0->isa.empty() ? "" : " (" + esc(l0->isa) + ")")
      << (l0->bandwidth_gbs > 0 ? ", stream bandwidth " + num(l0->bandwidth_gbs) + " GB/s" : "") << "</span>";
  o << "<b>command</b><span><code>" << (in.command.empty() ? "(not recorded)" : esc(in.command)) << "</code></span>";
  if (!in.source.empty()) o << "<b>data</b><span>" << esc(in.source) << "</span>";
  if (t0 && t0->load_disturbed == 1)
    o << "<b>machine load</b><span class=\"warn\">disturbed while measuring: " << esc(t0->load_why)
      << " — timings may be inflated</span>";
  else if (t0 && t0->load_disturbed == 0)
    o << "<b>machine load</b><span>quiet while measuring</span>";
  if (t0 && std::isfinite(t0->wall_seconds))
    o << "<b>training run</b><span>" << fmt("%.1f", t0->wall_seconds) << " s wall, peak RSS "
      << fmt("%.0f", t0->peak_rss_kb / 1024) << " MiB</span>";
  o << "</div>\n<nav>";
  // Links only to the sections this page has: a half without results (the GPU half skipped) links to its note.
  for (size_t i = 0; i < in.halves.size(); ++i) {
    const HtmlHalf& h = in.halves[i];
    const std::string& sx = h.id_suffix;
    const std::string p = in.halves.size() > 1 ? h.title + ": " : "";
    if (!h.train_json.empty())
      o << "<a href=\"#policies" << sx << "\">" << esc(p) << "time per policy</a><a href=\"#layers" << sx
        << "\">where the time goes</a><a href=\"#attribution" << sx << "\">attribution</a>";
    if (!h.train_json.empty() || !h.layers_json.empty())
      o << "<a href=\"#algorithms" << sx << "\">" << (h.train_json.empty() ? esc(p) : "") << "algorithms</a>";
    if (h.train_json.empty() && h.layers_json.empty() && in.halves.size() > 1)
      o << "<a href=\"#half" << sx << "\">" << esc(h.title) << ": " << (h.note.empty() ? "no results" : "skipped")
        << "</a>";
  }
  o << "</nav>\n";
}

}  // namespace

std::string report_html(const HtmlInputs& in) {
  // Parse everything first: a bad document fails before any output.
  std::vector<TrainView> trains;
  std::vector<LayersView> layers;
  for (const HtmlHalf& h : in.halves) {
    trains.push_back(h.train_json.empty() ? TrainView{} : read_train(h.train_json, "train" + h.id_suffix + ".json"));
    layers.push_back(h.layers_json.empty() ? LayersView{} : read_layers(h.layers_json, "layers" + h.id_suffix + ".json"));
  }
  Out o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" "
       "content=\"width=device-width, initial-scale=1\">\n<title>convlab report"
    << (trains.empty() || trains.front().net.empty() ? "" : ": " + esc(trains.front().net)) << "</title>\n<style>" << kCss
    << "</style></head>\n<body><main>\n";
  header(o, in, trains, layers);
  for (size_t i = 0; i < in.halves.size(); ++i) {
    const HtmlHalf& h = in.halves[i];
    if (in.halves.size() > 1) o << "<h2 class=\"half\" id=\"half" << h.id_suffix << "\">" << esc(h.title) << "</h2>\n";
    if (!h.note.empty()) o << "<p class=\"warn\">" << esc(h.note) << "</p>\n";
    if (!h.train_json.empty()) train_sections(o, trains[i], h.id_suffix);
    if (!h.layers_json.empty()) layer_sections(o, layers[i], h.id_suffix);
    else if (!h.train_json.empty())
      o << "<h2 id=\"algorithms" << h.id_suffix << "\">Per-layer algorithm comparison</h2>\n<p class=\"note\">Not in "
           "these results (<code>--no-compare</code>, or a network without a layer table): no roofline, no find vs "
           "get vs vendor.</p>\n";
  }
  o << "<p class=\"note\" style=\"margin-top:30px\">Drawn by convlab from the results files alone (no network, no "
       "script needed). The notebooks in <code>notebooks/</code> read the same files for exploration.</p>\n</main>\n"
    << kLayoutScript << "\n</body></html>\n";
  return o.str();
}

}  // namespace convlab::train
